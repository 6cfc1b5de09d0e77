/*
** Read one profile file (or stdin) into an mp_profile, with the
** messages the CLI prints: errors with file and byte offset, the
** truncation warning, and a progress line when stderr is a terminal.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef MP_LOAD_H
#define MP_LOAD_H

#include <stdint.h>

#include "mp_profile.h"

enum mp_load_result {
  MP_LOAD_OK,		/* Complete stream. */
  MP_LOAD_TRUNCATED,	/* Read up to the last complete event, or up to
			** the damage; said so. */
  MP_LOAD_ERROR		/* Unreadable or malformed before any event;
			** message printed. mp_profile_oom tells out of
			** memory from bad input. */
};

/*
** path "-" is stdin. *events gets the memory events read. A file that
** fails leaves nothing in p. A file found malformed after some events
** is kept up to its last good event, in every format and merged or not
** (the events are accounted as they are read), said so in its one
** message with the byte offset, and returned as MP_LOAD_TRUNCATED.
*/
enum mp_load_result mp_load_file(struct mp_profile *p, const char *path,
				 uint64_t *events);

/*
** The first limit memory events of path (and the symbols before them)
** into p: the stream at one moment (diff --from/--to, report --at).
** Reading stops there: damage after it does not matter. *events gets
** the events accounted; MP_LOAD_ERROR (said, naming cmd and what asked
** for the moment, e.g. "--at=#7") when the file cannot be read, is no
** stream, or ends before limit.
*/
enum mp_load_result mp_load_upto(struct mp_profile *p, const char *path,
				 const char *cmd, const char *opt,
				 uint64_t limit, uint64_t *events);

/* A decimal count (--top, --callers, #EVENT): digits only, no sign, no
** overflow; 0 only when zero_ok. 0, or -1. */
int mp_load_parse_u64(const char *s, uint64_t *out, int zero_ok);

/* Seconds since the stream began (--at=SECONDS, diff --from=SECONDS), as
** nanoseconds: a finite number, not negative, no sign. 0, or -1. */
int mp_load_parse_seconds(const char *s, uint64_t *ns);

/*
** The memory event of path at ns since the stream began, by its time
** marks (INFO TIME of the profile extension): the events before the
** first mark later than ns. 0, or -1 (said, naming cmd and opt=arg, and
** with hint where the stream has no marks) when the stream cannot be
** read, has no marks, or ends before a mark that late.
*/
int mp_load_event_at_time(const char *path, const char *cmd,
			  const char *opt, const char *arg, uint64_t ns,
			  const char *hint, uint64_t *at);

/* "snapshot:N" (N from 1): N, or -1. */
int mp_load_parse_snapshot(const char *s, uint64_t *n);

/*
** The memory event of path at which its nth snapshot begins (1: the start
** snapshot, at #0; a later one, INFO SNAPSHOT 2, after the events before
** it). 0, or -1 (said, naming cmd and opt) when the stream cannot be read,
** has no snapshot or fewer than n.
*/
int mp_load_event_at_snapshot(const char *path, const char *cmd,
			      const char *opt, uint64_t n, uint64_t *at);

#endif
