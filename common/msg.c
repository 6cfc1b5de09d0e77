/*
** ljmprof core: messages and small process facts.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ljm_config.h"
#include "msg.h"
#include "writer.h"

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
  [LJM_C_TAKEN] = "%u streams in all were written under another name: "
		  "files of theirs were there already%.0s",
  [LJM_C_SNAPSHOT] = "%u VMs in all wrote no snapshot for "
		     "LJMPROF_SNAPSHOT_SIGNAL%.0s",
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

const char *ljm_strerror(int err)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || \
			   (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
  const char *s = strerrordesc_np(err);
  return s ? s : "Unknown error";
#else
  return strerror(err);
#endif
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
    ljm_msg(summary_fmt[cause], n, cause == LJM_C_OPEN ? ljm_out_strerror(err)
						       : ljm_strerror(err));
#pragma GCC diagnostic pop
  }
}

void ljm_msg_reset(void)
{
  memset(causes, 0, sizeof(causes));
  summarized = 0;
}

/* -- Signal masks of the process's threads ------------------------------ */

/* The SigBlk mask of one thread: 0, or -1 when unreadable. */
static int thread_sigblk(const char *tid, uint64_t *mask)
{
  char path[300], buf[2048];
  const char *p;
  ssize_t n;
  int fd;
  snprintf(path, sizeof(path), "/proc/self/task/%s/status", tid);
  fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0)
    return -1;
  buf[n] = '\0';
  p = strstr(buf, "\nSigBlk:");
  if (p == NULL)
    return -1;
  for (p += 8; *p == ' ' || *p == '\t'; p++)
    ;
  *mask = 0;
  for (; (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'); p++)
    *mask = *mask << 4 | (uint64_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
  return 0;
}

int ljm_sig_deliverable(int signo, long except)
{
  char dents[4096];
  int saved = errno, fd, known = 0, r = 0;
  ssize_t n;
  if (signo < 1 || signo > 64)
    return -1;
  fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    errno = saved;
    return -1;
  }
  while (r == 0 && (n = getdents64(fd, dents, sizeof(dents))) > 0) {
    ssize_t off = 0;
    while (off < n) {
      struct dirent64 *d = (struct dirent64 *)(dents + off);
      uint64_t mask;
      off += d->d_reclen;
      if (d->d_name[0] < '0' || d->d_name[0] > '9' ||
	  strtol(d->d_name, NULL, 10) == except)
	continue;
      if (thread_sigblk(d->d_name, &mask) != 0)
	continue;	/* Gone meanwhile. */
      known = 1;
      if (!(mask & ((uint64_t)1 << (signo - 1)))) {
	r = 1;
	break;
      }
    }
  }
  close(fd);
  errno = saved;
  return r ? 1 : known ? 0 : -1;
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
