/*
** The profiler tests' stream reader: decodes with ljmprof's reader
** (tools/stream/), names every event itself as doc/format.md says,
** against the symbols known at that point of the stream, and counts
** events per (kind, location).
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef MPREAD_H
#define MPREAD_H

#include <stddef.h>
#include <stdint.h>

/* MPR_SNAP: an allocation of the start snapshot (between INFO SNAPSHOT 1
** and 0); it is in rows, and in the snap* counters, not in events. */
enum { MPR_ALLOC = 1, MPR_FREE = 2, MPR_REALLOC = 3, MPR_SNAP = 4 };

typedef struct mpr_row {
  int ev;			/* MPR_ALLOC, MPR_FREE, MPR_REALLOC. */
  char *loc;			/* Location name. */
  unsigned long count;		/* Events. */
  uint64_t nbytes;		/* Sum of new sizes. */
} mpr_row;

typedef struct mpr_stats {
  mpr_row *rows;		/* One per (ev, loc). */
  size_t nrows, szrows;
  unsigned long events;		/* All alloc/free/realloc events. */
  unsigned long symevents;	/* Symbol events in the event section. */
  unsigned long startsyms[3];	/* Start table entries: Lua, C, trace. */
  unsigned long unresolved;	/* Events naming an unknown symbol. */
  int complete;			/* The epilogue was seen. */
  char **traces;		/* Names of traces announced, in order. */
  size_t ntraces;
  char **csyms;			/* Names of C symbols announced. */
  size_t ncsyms, szcsyms;
  unsigned long redefined;	/* Prototypes announced at a known address. */
  /* The profile extension (stacks). */
  int ext;			/* The stream is the profile extension. */
  unsigned long nodes;		/* Stack nodes announced. */
  unsigned long sites;		/* Trace call sites announced. */
  unsigned long sitenodes;	/* TRACE frames with a site. */
  unsigned long stackevents;	/* Events with a STACK location. */
  /* Object kinds: allocations and reallocations by their objkind byte,
  ** those of them charged to a trace (a leaf or location "TRACE [n]"),
  ** and those without the byte. */
  unsigned long kinds[256];
  unsigned long kinds_trace[256];
  unsigned long nokind;
  uint64_t info[10];		/* Last value of each INFO key (1..9). */
  unsigned long ninfo[10];
  uint64_t info_first[10];	/* First value of each INFO key. */	/* How many records of each INFO key. */
  int first_info;		/* Key of the first event, if an INFO. */
  unsigned long time_backwards;	/* TIME marks below the one before. */
  unsigned long events_timed;	/* Events before the last TIME mark. */
  /* The start snapshot. */
  int insnap;			/* Between SNAPSHOT 1 and 0. */
  unsigned long snaps;		/* SNAPSHOT 1 records. */
  unsigned long snapblocks;	/* Its allocations, */
  uint64_t snapbytes;		/* their bytes, */
  unsigned long snapkinds[256];	/* by kind, */
  uint64_t snapkindbytes[256];	/* and the bytes of each kind. */
  unsigned long snapother;	/* Other events inside it (none expected). */
  struct mpr_block { uint64_t addr, size; int kind; } *snap;  /* Its blocks. */
  size_t nsnap, szsnap;
  /* Later snapshots (SNAPSHOT 2 .. 0), the first MPR_LATER of them: not
  ** events, only counted. */
#define MPR_LATER 4
  int inlater;			/* Between SNAPSHOT 2 and 0. */
  unsigned long laters;		/* SNAPSHOT 2 records. */
  unsigned long laterblocks[MPR_LATER];	/* Each one's allocations, */
  uint64_t laterbytes[MPR_LATER];	/* their bytes, */
  unsigned long laterkinds[MPR_LATER][256];	/* and blocks by kind. */
  unsigned long laterevents[MPR_LATER];	/* Memory events before it. */
} mpr_stats;

/*
** Parse a stream. Returns 0 if every byte up to the end (or the epilogue)
** parsed; a truncated last event is not an error (complete stays 0).
** Returns -1 on malformed input, with a message in err.
*/
int mpr_parse(const uint8_t *p, size_t len, mpr_stats *st, char *err,
	      size_t errsz);
int mpr_parse_file(const char *path, mpr_stats *st, char *err, size_t errsz);
void mpr_free(mpr_stats *st);

/* Events of kind ev at loc (exact name), or their new bytes. */
unsigned long mpr_count(const mpr_stats *st, int ev, const char *loc);
uint64_t mpr_bytes(const mpr_stats *st, int ev, const char *loc);
/* Events of kind ev at locations starting with prefix. */
unsigned long mpr_count_prefix(const mpr_stats *st, int ev, const char *prefix);
/* C symbols announced under this name (start table and events). */
unsigned long mpr_csym_count(const mpr_stats *st, const char *name);
/*
** A STACK location is named by its frames, leaf first, joined by " < ":
** a Lua frame "name(chunk:line)" ("(chunk:line)" without a name), a
** built-in by its name, a C function by its symbol, "TRACE [n]" (or
** "TRACE [n] at chunk:line" at a call site, which as a leaf is named
** "chunk:line"), "CUT" ("CUT(full)": the root that INFO FULL_ROOT
** names).
*/
#define MPR_SEP " < "

/*
** Non-zero: name a STACK location by the version-3 location its leaf
** stands for instead ("chunk:line" of its Lua frame or of the Lua caller
** of its built-in, a C or trace name), so that a test written for leaf
** locations checks a stack stream too.
*/
extern int mpr_leafnames;

/* Print all rows (for failing tests). */
void mpr_dump(const mpr_stats *st);

#endif
