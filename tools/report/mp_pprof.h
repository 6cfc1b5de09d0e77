/*
** A pprof profile (perftools.profiles, tools/report/pprof.proto) in the
** making, shaped as a Go heap profile: begin, add samples (a stack of
** frames, leaf first, with four values), finish by writing it gzipped.
** Strings, functions and locations are deduplicated here, so a caller
** names every frame in full each time and this file never needs to know
** where the stacks come from (a version-3 stream's one-frame stacks, or a
** stack tree).
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef MP_PPROF_H
#define MP_PPROF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The sample types, in the order of a Go heap profile's. */
enum mp_pprof_value {
  MP_PPROF_ALLOC_OBJECTS,	/* Blocks allocated (count). */
  MP_PPROF_ALLOC_SPACE,		/* Bytes allocated. */
  MP_PPROF_INUSE_OBJECTS,	/* Blocks still held at the end (count). */
  MP_PPROF_INUSE_SPACE,		/* Bytes still held at the end. */
  MP_PPROF_NVALUES
};

/* Bytes of text, not NUL-terminated. The profile stores them as given:
** the caller makes them valid UTF-8 without NUL (as mp_name_escape). */
struct mp_pprof_text {
  const char *data;
  size_t len;
};

/* One frame of a stack, as pprof shows it. */
struct mp_pprof_frame {
  struct mp_pprof_text name;	/* Function.name: "@app.lua:12", "TRACE [3]". */
  struct mp_pprof_text system_name;	/* Function.system_name: what tells
				** functions of one name apart; len 0: name. */
  struct mp_pprof_text file;	/* Function.filename; may be empty. */
  int64_t start_line;		/* Function.start_line (linedefined). */
  int64_t line;			/* Line.line: where it was in the function. */
};

struct mp_pprof;

/* An empty profile; NULL when out of memory. */
struct mp_pprof *mp_pprof_begin(void);

/* The profile's period: bytes between samples, as Go's heap profiles
** carry their sampling rate (the values are the estimates already);
** 1, the default, for a profile of every event. */
void mp_pprof_period(struct mp_pprof *pp, int64_t period);

/* A comment line of the profile (go tool pprof -comments). 0, or -1
** when out of memory. */
int mp_pprof_comment(struct mp_pprof *pp, const char *s, size_t len);

/* A sample: frames[0] is the leaf. Samples with equal stacks may be
** added separately (pprof sums them). 0, or -1 when out of memory. */
int mp_pprof_add_sample(struct mp_pprof *pp,
			const struct mp_pprof_frame *frames, size_t nframes,
			const int64_t values[MP_PPROF_NVALUES]);
/* The same with one string label (key = str), for -tagfocus. */
int mp_pprof_add_labelled(struct mp_pprof *pp,
			  const struct mp_pprof_frame *frames, size_t nframes,
			  const int64_t values[MP_PPROF_NVALUES],
			  const char *key, const char *str);

/* Write the whole profile, gzipped, to out. 0, or -1 when out of memory
** (or when an add ran out of it before); errors of out stay in out. */
int mp_pprof_finish(struct mp_pprof *pp, FILE *out);

void mp_pprof_free(struct mp_pprof *pp);

#endif
