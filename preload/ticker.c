/*
** ljmprof shim: the flush timer thread.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ljmprof.h"

#include "msg.h"
#include "vm.h"

/* The flush timer's period when LJMPROF_FLUSH=0 and it runs only to
** watch LJMPROF_SIGNAL. */
#define LJM_WATCH_MS	1000
/* How often it looks whether it is the last thread of the process. */
#define LJM_ALONE_MS	200

/*
** LJMPROF_FLUSH: a thread of ours ticks every flush_ms and bumps the
** epoch; each VM notices at its next allocation, on its own thread, and
** writes what it has buffered. After a tick the thread sleeps until some
** VM has taken it, so that a process whose VMs are idle is not woken
** again (only the look below wakes the timer itself). The thread is started with the first stream of the process,
** or with its first VM when LJMPROF_SIGNAL is set (each tick then also
** looks at that signal's handler; with LJMPROF_FLUSH=0 it ticks every
** LJM_WATCH_MS for that alone); again in a forked child, which does not
** inherit it; never without LJMPROF_OUT. It blocks every signal: the
** program's signals never land on it.
**
** It never keeps the process alive: glibc ends a process with exit(0)
** when its last thread ends, which a program whose main ends with
** pthread_exit counts on. Every LJM_ALONE_MS the timer looks whether it
** is the last thread left (the main thread, its leader, may remain as a
** zombie) and if so ends itself, so that glibc does exactly that; the
** exit then finishes the streams. It runs on the default stack and takes
** back the mask of the thread that created it before it ends, since the
** program's exit processing then runs on it. (Without /proc it cannot
** tell, and a process whose main ended with pthread_exit stays.)
*/
static pthread_mutex_t tick_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tick_cond;
unsigned ljm_ticks;			/* Ticks so far. */
static int tick_wanted;			/* A tick no VM has taken yet. */
static pid_t ticker_pid;		/* Process the ticker runs in. */
static pid_t ticker_tid;		/* Its thread. */
static sigset_t ticker_mask;		/* The mask of the thread that made it. */

/* Whether this thread is the only one left of the process (a zombie
** leader aside), from /proc/self/stat; 0 when it cannot tell. */
static int alone(void)
{
  char buf[1024], *p;
  int fd, field, saved = errno;
  ssize_t n;
  long nthreads;
  char state;
  fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    errno = saved;
    return 0;
  }
  n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  errno = saved;
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  /* pid (comm) state ppid ...: comm may hold anything, ')' included. */
  p = strrchr(buf, ')');
  if (p == NULL || p[1] != ' ')
    return 0;
  state = p[2];		/* Field 3: the leader's state. */
  for (field = 3, p += 2; field < 20 && *p; p++)
    if (*p == ' ')
      field++;
  if (field != 20)
    return 0;
  nthreads = strtol(p, NULL, 10);	/* Field 20: num_threads. */
  return nthreads == 1 ||
	 (nthreads == 2 && state == 'Z' && cur_tid() != getpid());
}

/* Wait on tick_cond until `at`, or until the VMs took the tick when
** `at` is NULL. 0, or -1 when the timer is the process's last thread. */
static int tick_wait(const struct timespec *at)
{
  for (;;) {
    struct timespec now, slice;
    int r;
    if (at == NULL && !__atomic_load_n(&tick_wanted, __ATOMIC_SEQ_CST))
      return 0;
    clock_gettime(CLOCK_MONOTONIC, &now);
    slice = now;
    slice.tv_nsec += LJM_ALONE_MS * 1000000L;
    if (slice.tv_nsec >= 1000000000L) {
      slice.tv_sec++;
      slice.tv_nsec -= 1000000000L;
    }
    if (at && (at->tv_sec < slice.tv_sec ||
	       (at->tv_sec == slice.tv_sec && at->tv_nsec < slice.tv_nsec)))
      slice = *at;
    r = pthread_cond_timedwait(&tick_cond, &tick_lock, &slice);
    if (r == ETIMEDOUT && alone())
      return -1;
    if (r == ETIMEDOUT)	/* Fresh for the marks near the heap's peak. */
      ljm_rss_update();
    if (r == ETIMEDOUT && at && slice.tv_sec == at->tv_sec &&
	slice.tv_nsec == at->tv_nsec)
      return 0;
  }
}

static void *ticker(void *arg)
{
  uint64_t ms = ljm_cfg.flush_ms ? ljm_cfg.flush_ms : LJM_WATCH_MS;
  (void)arg;
  __atomic_store_n(&ticker_tid, cur_tid(), __ATOMIC_RELEASE);
  pthread_mutex_lock(&tick_lock);
  for (;;) {
    struct timespec at;
    clock_gettime(CLOCK_MONOTONIC, &at);
    at.tv_sec += (time_t)(ms / 1000);
    at.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (at.tv_nsec >= 1000000000L) {
      at.tv_sec++;
      at.tv_nsec -= 1000000000L;
    }
    if (tick_wait(&at) != 0)
      break;
    ljm_tgl_watch_handler();
    ljm_rss_update();
    __atomic_add_fetch(&ljm_ticks, 1, __ATOMIC_SEQ_CST);
    __atomic_store_n(&tick_wanted, 1, __ATOMIC_SEQ_CST);
    ljm_bump_epoch();
    if (tick_wait(NULL) != 0)
      break;
  }
  /* The last thread: ending it lets glibc end the process (exit(0)),
  ** whose exit processing (atexit handlers, destructors) runs on this
  ** thread, with the program's signal mask, as it would have on the
  ** program's last thread: a signal pending now is delivered. */
  __atomic_store_n(&ticker_tid, 0, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&tick_lock);
  pthread_sigmask(SIG_SETMASK, &ticker_mask, NULL);
  return NULL;
}

void ljm_tick_start(void)
{
  pthread_condattr_t ca;
  pthread_attr_t ta;
  pthread_t th;
  sigset_t all, old;
  int err;
  if ((ljm_cfg.flush_ms == 0 && ljm_cfg.signo == 0) ||
      ticker_pid == ljm_self_pid)
    return;
  ticker_pid = ljm_self_pid;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&tick_cond, &ca);
  pthread_condattr_destroy(&ca);
  pthread_attr_init(&ta);
  pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
  /* The default stack, not a small one: if it is the last thread, the
  ** program's exit processing runs on it (above). */
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  ticker_mask = old;
  err = pthread_create(&th, &ta, ticker, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  pthread_attr_destroy(&ta);
  if (err)
    ljm_msg("cannot start the flush timer: %s; streams are written only "
	    "when their buffer is full", strerror(err));
}

/*
** The process's resident set size, for the streams' time marks (INFO
** RSS): read from /proc/thread-self/statm (its second field, in pages;
** /proc/self/statm on older kernels) by the flush timer at each tick and
** between ticks every LJM_ALONE_MS (so that the mark the heap's peak
** follows has an RSS at most that old, whatever LJMPROF_FLUSH is), and
** by the VM's thread as a stream starts and stops, never on the
** allocation path, and published in ljm_rss,
** which the profiler reads as a plain word at its time marks. The file
** is opened, read and closed each time: nothing to carry over a fork,
** whose child reads its own. Without /proc (or on any error) ljm_rss
** stays 0, which the profiler takes as not known: no RSS is written.
*/
volatile unsigned long long ljm_rss;
static int rss_off;			/* It failed once: given up. */
static long rss_page;			/* The page size, once known. */

void ljm_rss_update(void)
{
  char buf[128];
  unsigned long long pages = 0;
  long pg;
  ssize_t n, i = 0;
  int fd, saved = errno;
  if (__atomic_load_n(&rss_off, __ATOMIC_RELAXED))
    return;
  /* The thread's own view of the process's memory: /proc/self is the
  ** leader's, all zeros once a main thread that ended with pthread_exit
  ** is a zombie. Kernels before 3.17 have no thread-self. */
  fd = open("/proc/thread-self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
  if (fd >= 0)
    close(fd);
  /* sysconf once, at the first stream's start: not in a handler. */
  pg = __atomic_load_n(&rss_page, __ATOMIC_RELAXED);
  if (pg == 0) {
    pg = sysconf(_SC_PAGESIZE);
    __atomic_store_n(&rss_page, pg, __ATOMIC_RELAXED);
  }
  /* "size resident shared ...": skip the first field, read the second
  ** (by hand: safe in a signal handler, as open and read are). */
  while (i < n && buf[i] != ' ')
    i++;
  if (i < n)
    i++;
  if (i >= n || buf[i] < '0' || buf[i] > '9' || pg <= 0) {
    __atomic_store_n(&rss_off, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&ljm_rss, 0ull, __ATOMIC_RELAXED);
    errno = saved;
    return;
  }
  for (; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
    pages = pages * 10 + (unsigned long long)(buf[i] - '0');
  __atomic_store_n(&ljm_rss, pages * (unsigned long long)pg,
		   __ATOMIC_RELAXED);
  errno = saved;
}

/* On the VM's thread, at a safe point: take a tick. */
void ljm_tick_take(struct ljm_vm *vm)
{
  unsigned t = __atomic_load_n(&ljm_ticks, __ATOMIC_SEQ_CST);
  if (t == vm->seen_ticks)
    return;
  vm->seen_ticks = t;
  if (ljm_cfg.flush_ms && ljm_lc_writing(vm_state(vm)))
    (void)ljmprof_flush(vm->L);
  if (__atomic_load_n(&tick_wanted, __ATOMIC_SEQ_CST)) {
    pthread_mutex_lock(&tick_lock);
    tick_wanted = 0;
    pthread_cond_signal(&tick_cond);
    pthread_mutex_unlock(&tick_lock);
  }
}

pid_t ljm_tick_tid(void)
{
  return __atomic_load_n(&ticker_tid, __ATOMIC_ACQUIRE);
}

/* The flush timer is the parent's: the child starts its own with its
** first stream. */
void ljm_tick_forked(void)
{
  pthread_mutex_init(&tick_lock, NULL);
  tick_wanted = 0;
  ticker_tid = 0;
}
