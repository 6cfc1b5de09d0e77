/*
** ljmprof shim: messages and small process facts.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
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

/* -- Messages that VMs repeat ------------------------------------------- */

#define LJM_NCAUSES	32	/* (cause, errno) pairs told apart. */

static struct {
  unsigned key;		/* cause << 16 | (err & 0xffff), plus 1; 0: free. */
  unsigned count;	/* VMs counted. */
} causes[LJM_NCAUSES];
static int summarized;

/* The summary line of each cause: the count, then strerror(err). */
static const char *const summary_fmt[LJM_C__MAX] = {
  [LJM_C_OPEN] = "%u VMs in all are not profiled: their files cannot be "
		 "opened (%s)",
  [LJM_C_STDOUT] = "%u VMs in all are not profiled: their file is the "
		   "program's standard output%.0s",
  [LJM_C_START] = "%u VMs in all are not profiled: the profiler cannot "
		  "start (%s)",
  [LJM_C_WRITE] = "%u VMs in all stopped profiling: writing their files "
		  "failed (%s)",
  [LJM_C_MAXSIZE] = "%u VMs in all stopped profiling at LJMPROF_MAXSIZE%.0s",
  [LJM_C_ALLOCF] = "%u VMs in all lost the profiler to an allocator the "
		   "program set%.0s",
  [LJM_C_CLOSE] = "%u VMs in all: closing their files failed (%s)",
};

static unsigned cause_key(int cause, int err)
{
  return ((unsigned)cause << 16 | ((unsigned)err & 0xffff)) + 1;
}

/* The slot of (cause, err), taken if new; NULL when all are taken. */
static unsigned *cause_slot(unsigned key, int take)
{
  size_t i;
  for (i = 0; i < LJM_NCAUSES; i++) {
    unsigned k = __atomic_load_n(&causes[i].key, __ATOMIC_ACQUIRE), zero = 0;
    if (k == key)
      return &causes[i].count;
    if (k != 0)
      continue;
    if (!take)
      return NULL;
    if (__atomic_compare_exchange_n(&causes[i].key, &zero, key, 0,
				    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ||
	zero == key)
      return &causes[i].count;
  }
  return NULL;
}

unsigned ljm_msg_repeat(int cause, int err, const char *fmt, ...)
{
  char buf[LJM_MSG_MAX];
  unsigned *slot = cause_slot(cause_key(cause, err), 1), before = 0;
  va_list ap;
  if (slot)
    before = __atomic_fetch_add(slot, 1, __ATOMIC_ACQ_REL);
  if (before == 0) {
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    ljm_msg("%s", buf);
  }
  return before;
}

unsigned ljm_msg_count(int cause, int err)
{
  unsigned *slot = cause_slot(cause_key(cause, err), 0);
  return slot ? __atomic_load_n(slot, __ATOMIC_ACQUIRE) : 0;
}

void ljm_msg_summary(void)
{
  size_t i;
  if (__atomic_exchange_n(&summarized, 1, __ATOMIC_ACQ_REL))
    return;
  for (i = 0; i < LJM_NCAUSES; i++) {
    unsigned k = __atomic_load_n(&causes[i].key, __ATOMIC_ACQUIRE);
    unsigned n = __atomic_load_n(&causes[i].count, __ATOMIC_ACQUIRE);
    int cause = (int)((k - 1) >> 16), err = (int)((k - 1) & 0xffff);
    if (k == 0 || n < 2 || cause >= LJM_C__MAX)
      continue;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    ljm_msg(summary_fmt[cause], n, strerror(err));
#pragma GCC diagnostic pop
  }
}

void ljm_msg_reset(void)
{
  memset(causes, 0, sizeof(causes));
  summarized = 0;
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
