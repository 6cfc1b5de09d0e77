/*
** ljmprof core: messages and small process facts.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef LJM_MSG_H
#define LJM_MSG_H

#include <stdint.h>

/* One line "ljmprof: ...\n" on stderr, written with one write(2) from a
** stack buffer; errno is kept. */
void ljm_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
** Messages that each VM could repeat (trafficserver creates 256 VMs):
** one line per cause per process. The first VM that meets a cause
** prints its line at once; the others are only counted, and
** ljm_msg_summary, at the end of the process, says in one line per cause
** how many VMs (or streams) it concerned in all, when more than one.
** Lock-free and async-signal-safe (a writer error may come while the
** process dies).
*/
enum ljm_cause {
  LJM_C_OPEN,		/* Cannot open the stream's file (errno). */
  LJM_C_STDOUT,		/* The file is the program's standard output. */
  LJM_C_START,		/* The profiler cannot start (errno). */
  LJM_C_WRITE,		/* Writing the stream failed (errno). */
  LJM_C_MAXSIZE,	/* The stream reached LJMPROF_MAXSIZE. */
  LJM_C_ALLOCF,		/* The program's allocator went over the profiler. */
  LJM_C_CLOSE,		/* Closing the stream failed (errno). */
  LJM_C_TAKEN,		/* The stream's name was taken: another one. */
  LJM_C_SNAPSHOT,	/* LJMPROF_SNAPSHOT_SIGNAL to a stream without
			   snapshots. */
  LJM_C__MAX
};

/* Count one more VM for (cause, err); print fmt's line when it is the
** first of the process. Returns the number counted before this one. */
unsigned ljm_msg_repeat(int cause, int err, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));

/* How many VMs were counted for (cause, err) (unit tests). */
unsigned ljm_msg_count(int cause, int err);

/* Once per process: a line per cause counted more than once. */
void ljm_msg_summary(void);

/* Forget every count (a forked child reports its own). */
void ljm_msg_reset(void);

/*
** Whether some thread of this process other than thread `except` (0:
** none) has signal signo unblocked, from /proc/self/task/<tid>/status.
** 1 yes, 0 no, -1 cannot tell. No malloc.
*/
int ljm_sig_deliverable(int signo, long except);

/* strerror(err), untranslated: no locale, no allocation, so that a
** signal handler may call it (strerror may do both under setlocale). */
const char *ljm_strerror(int err);

/* Monotonic clock in milliseconds (async-signal-safe). */
uint64_t ljm_now_ms(void);

/*
** Whether profiling should be on: LJMPROF_START and LJMPROF_DELAY give
** the state before any signal (on from t0 + delay_ms when start); each
** signal flips the state it found, and the first one cancels a pending
** delay. toggles = signals received, first_sig_ms = time of the first.
*/
int ljm_want(int start, uint64_t delay_ms, uint64_t t0_ms, uint64_t now_ms,
	     unsigned toggles, uint64_t first_sig_ms);

#endif
