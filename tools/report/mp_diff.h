/*
** `ljmprof diff`: two profiles (or two moments of one) matched location
** by location, and what each side allocated and held there.
**
** Two runs of one program share no addresses and number their traces
** differently, so a location is matched by a key that says what it is,
** never where it was: Lua code by chunk and line (or function, or
** chunk: the profiles' group), C code by its symbol name or
** object+offset, a trace by where it starts (all traces that start at
** one line are one key), INTERNAL as one key. Locations the stream could
** not name (an unknown prototype, C function or trace) have nothing
** but an address: each such kind is one key.
**
** Where both sides have call stacks, every stack is a path row too,
** under the location its events are charged to, matched by the key of
** each of its frames: a Lua frame by its location's key and the
** function's name, a C frame by its symbol, a built-in by its name, a
** trace by where it starts.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef MP_DIFF_H
#define MP_DIFF_H

#include <stdint.h>
#include <stdio.h>

#include "mp_names.h"
#include "mp_profile.h"
#include "mp_report.h"

/* Version of the `ljmprof-diff` JSON document (doc/json-schema.md). */
#define MP_DIFF_JSON_SCHEMA_VERSION 1

enum { MP_DIFF_OLD, MP_DIFF_NEW };

/* What one side has at a key. */
struct mp_diff_counts {
  uint64_t alloc_bytes;		/* New sizes of allocs and reallocs. */
  uint64_t allocs;		/* Alloc and realloc events. */
  uint64_t held_bytes, held_blocks;	/* Still held at the end (or at the
					** moment the side stops). */
};

struct mp_diff_row {
  uint32_t key;			/* Id in mp_diff.keys (a path: .pkeys). */
  uint32_t loc;			/* A path: the row of its location. */
  uint8_t in[2];		/* The side has a location with this key. */
  uint8_t lua;			/* Lua code (or a trace where it starts). */
  uint8_t bare;			/* A path that is only its location: events
				** without a stack (folded shows them). */
  struct mp_diff_counts side[2];
};

/* How keys are spelled. */
enum mp_diff_keys {
  MP_DIFF_KEY_NAME,		/* The location's name, bytes as they are. */
  MP_DIFF_KEY_FRAMES		/* Folded frames, escaped for the folded
				** format (profiles grouped MP_GROUP_FRAMES). */
};

struct mp_diff {
  enum mp_diff_keys how;
  struct mp_strings keys;	/* Key text -> id, the row's index. */
  struct mp_diff_row *rows;
  uint32_t nrows, cap;
  struct mp_diff_counts total[2];
  /* Call paths: keys are the frames root first, each escaped as a
  ** folded frame, joined by ';'. */
  struct mp_strings pkeys;
  struct mp_diff_row *paths;
  uint32_t npaths, pcap;
  int stacks[2];		/* A profile of the side has stacks in all its
				** files. */
  int nostacks[2];		/* One has not: 1, or 2 when some of its
				** files have them. */
  int oom;
};

void mp_diff_init(struct mp_diff *d, enum mp_diff_keys how);
void mp_diff_free(struct mp_diff *d);

/* The key of location l of p, appended to out. */
void mp_diff_key(struct mp_buf *out, const struct mp_profile *p,
		 const struct mp_loc *l, enum mp_diff_keys how);

/* Add every location of p (read, mp_profile_done_reading called) to one
** side. A side may be added to several times. 0, or -1 out of memory. */
int mp_diff_add(struct mp_diff *d, int side, const struct mp_profile *p);

/* The key text of a row. */
static inline const struct mp_string *mp_diff_row_key(const struct mp_diff *d,
						      const struct mp_diff_row *r)
{
  return mp_strings_get(&d->keys, r->key);
}

/* The frames of a path row, root first, ';' between them. */
static inline const struct mp_string *mp_diff_path_key(
  const struct mp_diff *d, const struct mp_diff_row *r)
{
  return mp_strings_get(&d->pkeys, r->key);
}

/* Whether rows are paths too: both sides have stacks. */
static inline int mp_diff_by_path(const struct mp_diff *d)
{
  return d->stacks[0] && d->stacks[1] && !d->nostacks[0] && !d->nostacks[1];
}

/* One measure of a side. */
uint64_t mp_diff_value(const struct mp_diff_counts *c, enum mp_value v);

/*
** The change of a measure from old to new as a sign and a magnitude
** (no overflow, whatever the sizes): returns -1, 0 or 1, *mag the
** difference.
*/
int mp_diff_delta(const struct mp_diff_counts *old,
		  const struct mp_diff_counts *new_, enum mp_value v,
		  uint64_t *mag);

/* Lua keys both sides have, and whether each side has any: no Lua code
** in common is two different programs (or of one, nothing shared). */
uint32_t mp_diff_lua_shared(const struct mp_diff *d, int has[2]);

/* Whether any measure of the row changed. */
int mp_diff_row_changed(const struct mp_diff_row *r);

/*
** Sort rows (an array of indices into d->rows) by the change of v:
** the largest growth first, the largest shrink last; ties by the other
** measures' changes, then by key bytes.
*/
void mp_diff_sort(const struct mp_diff *d, uint32_t *rows, uint32_t n,
		  enum mp_value v);

/*
** The changed paths grouped by location, but bare ones: the paths of location row i
** are out[start[i] .. start[i + 1]), sorted as mp_diff_sort sorts.
** Returns out (free it and *start), or NULL when out of memory.
*/
uint32_t *mp_diff_paths_by_loc(const struct mp_diff *d, enum mp_value v,
			       uint32_t **start);

/* -- Output (mp_diff_report.c) ------------------------------------------ */

/* One side, for headers and JSON. */
struct mp_diff_side {
  const char *const *files;	/* Names as given, the ones read. */
  size_t nfiles;
  uint64_t events;		/* Memory events read, all files. */
  int64_t at_event;		/* --from/--to: the side is the stream up
				** to this event; -1 for whole files. */
  const char *at_seconds;	/* ...found by this time, as given; NULL. */
  const char *settle;		/* diff --settle as given, when the moment
				** was moved back to the low point within
				** that many seconds, from this event (-1:
				** the stream's end); else NULL. */
  int64_t settled_from;
  int truncated;		/* A file was cut short or damaged. */
  const struct mp_summary *summary;	/* Its profile's total (for the
					** sampling note), or NULL. */
  uint64_t rss;			/* The process's resident bytes at the
				** side's moment (its last INFO RSS read),
				** one file with RSS only; 0: not known. */
  uint64_t mapped;		/* The bytes LuaJIT's allocator had mapped
				** then (INFO MAPPED), the same way. */
};

struct mp_diff_opts {
  enum mp_value value;		/* The measure rows are sorted by (text,
				** JSON) or that the folded columns give. */
  enum mp_group group;
  int human;
  uint64_t top;			/* Rows per section; 0 for all. */
  uint64_t callers;		/* Text: paths per location; 0 for none. */
  struct mp_diff_side side[2];
};

/* Each writes the whole diff to out; 0, or -1 when out of memory. */
int mp_diff_text(FILE *out, const struct mp_diff *d,
		 const struct mp_diff_opts *o);
int mp_diff_json(FILE *out, const struct mp_diff *d,
		 const struct mp_diff_opts *o);
int mp_diff_folded(FILE *out, const struct mp_diff *d,
		   const struct mp_diff_opts *o);
/* Keys must be MP_DIFF_KEY_FRAMES (mp_diff_html.c). */
int mp_diff_html(FILE *out, const struct mp_diff *d,
		 const struct mp_diff_opts *o);

/* --by=kind: per object kind, the change of its held blocks and bytes
** and of its allocations (NEW less OLD), most grown first, text or JSON.
** 0, or -1 out of memory. */
int mp_diff_kinds(FILE *out, const struct mp_kind_counts *old,
		  const struct mp_kind_counts *new_,
		  const struct mp_diff_opts *o, int json);

#endif
