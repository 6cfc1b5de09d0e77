/*
** Sampled streams: the estimates that their events stand for
** (mp_sample.c).
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef MP_SAMPLE_H
#define MP_SAMPLE_H

#include <stdint.h>

#include "mp_profile_int.h"

/* The file's INFO SAMPLE record: its mean (0: every event). */
void mp_sample_info(struct mp_profile *p, uint64_t mean);

/* Account a memory event of a sampled file, as mp_live_account does,
** with its estimated blocks and bytes. 0, or -1 when out of memory. */
int mp_sample_account(struct mp_profile *p, const struct mp_event *ev,
		      uint32_t id, uint32_t node);

#endif
