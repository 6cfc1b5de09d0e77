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

/* A moment of a stream, as report --at and diff --from/--to give it. */
enum mp_load_at {
  MP_AT_EVENT,		/* #EVENT: after memory event EVENT. */
  MP_AT_SNAPSHOT,	/* snapshot:N (N from 1). */
  MP_AT_SECONDS,	/* SECONDS since the stream began, by its time
			** marks (INFO TIME of the profile extension). */
  MP_AT_START,		/* start: after the start snapshot (report). */
  MP_AT_PEAK		/* peak: at the most held (report). */
};

struct mp_load_moment {
  enum mp_load_at at;
  uint64_t event;	/* MP_AT_EVENT's; 0 for the others. */
  uint64_t snapshot;	/* MP_AT_SNAPSHOT's N. */
  uint64_t ns;		/* MP_AT_SECONDS's, as nanoseconds: a finite
			** number, not negative, no sign. */
};

/* s as a moment into *m: #EVENT, snapshot:N or SECONDS, and with named
** start and peak too. 0, or -1 when it is none of them. */
int mp_load_parse_moment(const char *s, int named,
			 struct mp_load_moment *m);

/*
** The memory event of path at m, as given (s) to cmd's opt: #EVENT and
** start need no reading; snapshot:N is where the Nth snapshot begins
** (1: the start snapshot, at #0; a later one, INFO SNAPSHOT 2, after the
** events before it); SECONDS the events before the first time mark
** later than it. 0, or -1 (said, naming cmd and opt=s, and with hint
** where the stream has no marks) when the stream cannot be read or has
** no such snapshot or mark. Not peak: the caller's, as it needs a pass
** that accounts the whole stream.
*/
int mp_load_moment_event(const char *path, const char *cmd,
			 const char *opt, const char *s,
			 const struct mp_load_moment *m, const char *hint,
			 uint64_t *at);

/* Whether fd's stream is still being written: the shim holds an
** exclusive flock(2) on a stream while it writes it. */
int mp_load_being_written(int fd);

/* SECONDS (a finite number, not negative) as nanoseconds: 0, or -1. */
int mp_load_parse_seconds(const char *s, uint64_t *ns);

/*
** A moment settled (diff --settle): the moment after event at of path
** (UINT64_MAX: its end), at ns when it was given in seconds (else
** MP_NO_TIME: at its last time mark), moved back within the window_ns
** before it to the event after which the stream's blocks add up to the
** least. That is just after the collector swept, so that garbage it had
** not freed yet does not count as held. The window begins at the first
** time mark after its start; where no mark falls in it, the moment
** stays. 0 with *out set, or -1 (said, naming cmd) when the stream
** cannot be read or has no time marks.
*/
int mp_load_settle(const char *path, const char *cmd, uint64_t at,
		   uint64_t ns, uint64_t window_ns, uint64_t *out);

#endif
