/*
** ljmprof shim: messages and small process facts.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "ljm_config.h"
#include "msg.h"

void ljm_msg(const char *fmt, ...)
{
  char buf[LJM_MSG_MAX + 16];
  int saved = errno, n;
  size_t len, off = 0;
  va_list ap;

  n = snprintf(buf, sizeof(buf), "ljmprof: ");
  va_start(ap, fmt);
  n += vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
  va_end(ap);
  len = (size_t)n < sizeof(buf) - 1 ? (size_t)n : sizeof(buf) - 2;
  buf[len++] = '\n';
  while (off < len) {
    ssize_t w = write(2, buf + off, len - off);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      break;
    off += (size_t)w;
  }
  errno = saved;
}

uint64_t ljm_now_ms(void)
{
  struct timespec ts;
  if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
    return 0;
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int ljm_want(int start, uint64_t delay_ms, uint64_t t0_ms, uint64_t now_ms,
	     unsigned toggles, uint64_t first_sig_ms)
{
  uint64_t at = toggles ? first_sig_ms : now_ms;
  int base = start && at >= t0_ms + delay_ms;
  return base ^ (int)(toggles & 1);
}
