/*
** ljmprof shim: messages and small process facts.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef LJM_MSG_H
#define LJM_MSG_H

#include <stdint.h>

/* One line "ljmprof: ...\n" on stderr, written with one write(2) from a
** stack buffer; errno is kept. */
void ljm_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

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
