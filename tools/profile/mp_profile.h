/*
** The aggregator: consumes events from mp_reader, resolves their
** locations against the symbols known at that point, tracks the live
** heap, and sums everything per location. Reports read the result.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef MP_PROFILE_H
#define MP_PROFILE_H

#include <stdint.h>

#include "lj_memprof_format.h"
#include "mp_heap.h"
#include "mp_reader.h"
#include "mp_strings.h"
#include "mp_symtab.h"

/* How finely Lua locations are told apart. */
enum mp_group {
  MP_GROUP_LINE,	/* chunk:line (the default). */
  MP_GROUP_FUNCTION,	/* chunk:linedefined. */
  MP_GROUP_CHUNK,	/* chunk. */
  MP_GROUP_FRAMES	/* chunk, linedefined and line: for folded stacks. */
};

/*
** The kinds of location, one row each: what the aggregator resolves an
** event's location to. Naming, ordering, JSON and the reports' frames
** read the row (mp_loc_kinds) instead of switching on the kind, so a new
** kind is one row here and, where it needs its own text, one case in
** mp_names.c.
**
** X(kind, source, prefix, JSON kind, rank, order, named): prefix is the
** start of its display name; rank its place in name order (Lua code, C,
** traces, the VM's own); order what sorts it within its rank (a string
** and linedefined, a number, nothing); named: resolved through a symbol
** of the stream (the others name what was unknown by its address).
*/
#define MP_LOC_KINDS(X) \
  X(INTERNAL, LJM_SRC_INTERNAL, "INTERNAL", "internal", 5, NONE, 0) \
  X(LUA, LJM_SRC_LFUNC, "", "lua", 0, STRING, 1) \
  X(LUA_UNKNOWN, LJM_SRC_LFUNC, "LFUNC ", "lua", 1, NONE, 0) \
  X(C, LJM_SRC_CFUNC, "", "c", 2, STRING, 1) \
  X(C_UNKNOWN, LJM_SRC_CFUNC, "CFUNC ", "c", 3, NONE, 0) \
  X(TRACE, LJM_SRC_TRACE, "TRACE [", "trace", 4, NUMBER, 1) \
  X(TRACE_NOPROTO, LJM_SRC_TRACE, "TRACE [", "trace", 4, NUMBER, 0) \
  X(TRACE_UNKNOWN, LJM_SRC_TRACE, "TRACE [", "trace", 4, NUMBER, 0) \
  X(START, LJM_SRC_INTERNAL, "live at start (", "start", 6, NUMBER, 0)

/* Fields, as in struct mp_loc: LUA: str = chunk, linedefined, line.
** LUA_UNKNOWN: addr = prototype not in the symbol table, line. C: str =
** symbol name, addr = symbol address. C_UNKNOWN: addr = C function
** address. TRACE: addr = trace number, str = chunk, line. TRACE_NOPROTO
** (prototype unknown): addr, addr2 = prototype, line. TRACE_UNKNOWN:
** addr = trace number not in the symbol table. START: the blocks of a
** start snapshot, addr = their object kind (LJM_KIND_*). */
enum mp_loc_kind {
#define MP_LOC_ENUM(kind, src, prefix, json, rank, order, named) MP_LOC_##kind,
  MP_LOC_KINDS(MP_LOC_ENUM)
#undef MP_LOC_ENUM
  MP_LOC_NKINDS
};

/* What sorts locations of a kind within its rank. */
enum mp_loc_order {
  MP_ORDER_NONE,	/* Only the line, then first seen. */
  MP_ORDER_STRING,	/* The name in byte order, then linedefined. */
  MP_ORDER_NUMBER	/* addr (a trace number). */
};

struct mp_loc_kind_info {
  unsigned src;		/* LJM_SRC_* of the events it comes from. */
  const char *prefix;	/* Start of its display name. */
  const char *json;	/* "kind" in JSON. */
  uint8_t rank;		/* Place in name order. */
  uint8_t order;	/* enum mp_loc_order. */
  uint8_t named;	/* Resolved through a symbol of the stream. */
};

extern const struct mp_loc_kind_info mp_loc_kinds[MP_LOC_NKINDS];

struct mp_loc {
  /* Identity (the key). */
  uint32_t kind;
  uint32_t str;		/* Chunk or C symbol name, or MP_NO_STRING. */
  uint32_t line;
  uint32_t linedefined;
  uint64_t addr;
  uint64_t addr2;
  /* Events at this location. */
  uint64_t n_alloc, alloc_bytes;
  uint64_t n_realloc, realloc_new, realloc_old;
  uint64_t n_free, free_bytes;
  /* Blocks this location (re)allocated: how many, how many of them were
  ** released later by anyone, and what is still held. */
  uint64_t created, released;
  uint64_t held_bytes, held_blocks;
  /* Of the blocks made here, those freed by the very next memory event
  ** (heaptrack's temporary allocations), and their bytes. */
  uint64_t temporary, temporary_bytes;
};

/*
** One (event location, location whose block it reallocated or freed)
** pair. key is is_free << 63 | loc << 32 | orig, so that sorted keys
** group the pairs by event location. count and bytes (the old sizes of
** those blocks) are kept only with MP_PROFILE_OVERRIDE_VALUES.
*/
struct mp_override {
  uint64_t key;
  uint64_t count;
  uint64_t bytes;
};

static inline uint64_t mp_override_key(int is_free, uint32_t loc,
				       uint32_t orig)
{
  return (uint64_t)(is_free != 0) << 63 | (uint64_t)loc << 32 | orig;
}

struct mp_summary {
  /* Memory events by kind, and bytes_allocated and bytes_freed below:
  ** in the total once mp_profile_done_reading has summed them. */
  uint64_t n_alloc, n_realloc, n_free;
  uint64_t n_sym_proto, n_sym_cfunc, n_sym_trace;	/* Symbols defined. */
  uint64_t n_sym_events;	/* Of which from symbol events. */
  uint64_t bytes_allocated;	/* New sizes of allocs and reallocs. */
  uint64_t bytes_freed;		/* Old sizes of frees and reallocs. */
  uint64_t live_bytes, live_blocks;	/* Tracked blocks now. */
  uint64_t peak_bytes, peak_event;	/* Largest live_bytes, and when. */
  uint32_t peak_file;		/* Which file (merged summaries). */
  uint64_t untracked_frees;	/* Blocks freed/reallocated that were
				** allocated before profiling started. */
  uint64_t untracked_bytes;
  uint64_t overwritten;		/* Allocs at an address already live. */
  uint64_t temporary, temporary_bytes;	/* Blocks freed by the next
					** event (summed when reading is
					** done, as the counts by kind). */
  uint64_t files, truncated_files;
  /* The profile extension: files that have it, stack nodes announced,
  ** the largest depth limit, and what a full node table cut (the
  ** writer's NODES_FULL and CUT_EVENTS records). */
  uint64_t stack_files, stack_nodes, stack_depth;
  uint64_t nodes_full, cut_events;
  uint64_t full_roots;		/* Files whose cut stacks keep their leaf
				** (INFO FULL_ROOT). */
  /* Sampling (INFO SAMPLE): the mean in bytes, 0 when every event is in
  ** the stream; of several files, the largest. With a mean, every
  ** count and byte figure is an estimate (mp_sample.c). */
  uint64_t sample_mean, sample_files;
  /* Start snapshots (INFO SNAPSHOT): how many, their blocks and bytes
  ** (in live_* too, not in the allocations). */
  uint64_t snapshots, snap_blocks, snap_bytes;
  uint64_t later_snapshots;	/* Later ones (INFO SNAPSHOT 2): censuses. */
};

/*
** The aggregator. Its fields are its own (tools/profile/mp_profile_int.h);
** the reports read it through the functions below.
*/
struct mp_profile;

/* What the report needs, for mp_profile_new. */
#define MP_PROFILE_TOTALS_ONLY	0x01	/* One location for all (stat). */
#define MP_PROFILE_NO_OVERRIDES	0x02	/* No override pairs. */
#define MP_PROFILE_OVERRIDE_VALUES 0x04	/* Count and bytes per pair. */
#define MP_PROFILE_KINDS	0x08	/* Figures by object kind. */
#define MP_PROFILE_LIFETIMES	0x10	/* Lifetimes and maxima (DHAT). */
#define MP_PROFILE_PEAK		0x20	/* Held at each file's peak. */
/* With MP_PROFILE_KINDS: the kinds of the files with the profile
** extension only (the others can say none: their events are in no
** kind's figures, not even unknown's). */
#define MP_PROFILE_KINDS_EXT	0x40
/* The heap graph of the last snapshot that has one (mp_profile_graph). */
#define MP_PROFILE_GRAPH	0x80

/* The heap graph kept (MP_PROFILE_GRAPH), its chains and dominators
** solved at the first call; NULL if the files had none, or out of
** memory (mp_profile_oom). */
struct mp_graph;
const struct mp_graph *mp_profile_graph(struct mp_profile *p);
/* A graph kept and not solved yet: its references + 1 (for a progress
** line before the work); 0 otherwise. */
uint64_t mp_profile_graph_pending(const struct mp_profile *p);

/* A profile grouped so, or NULL when out of memory. */
struct mp_profile *mp_profile_new(enum mp_group group, unsigned needs);
void mp_profile_delete(struct mp_profile *p);

enum mp_group mp_profile_group(const struct mp_profile *p);
/* Out of memory happened: the results are incomplete. */
int mp_profile_oom(const struct mp_profile *p);
/* Memory ran out in what feeds p (its reader): the same for p. */
void mp_profile_set_oom(struct mp_profile *p);
/* The names of chunks and C symbols, shared by all files. */
const struct mp_strings *mp_profile_strings(const struct mp_profile *p);
/* The files finished so far. */
const struct mp_summary *mp_profile_total(const struct mp_profile *p);
/* Locations are numbered 0 .. mp_profile_nlocs() - 1. */
uint32_t mp_profile_nlocs(const struct mp_profile *p);

/* Account one event. Returns 0, or -1 when out of memory. */
int mp_profile_event(struct mp_profile *p, const struct mp_event *ev);

/*
** Read every event of r into p, on this thread: the common memory events
** are decoded straight from the reader's buffer into the accounting, the
** others through mp_reader_next. tick (may be NULL) is called after each
** buffer in which the count of memory events passed a multiple of 2^20.
** *events gets the memory events accounted. Returns the reader's final
** status, or MP_ERROR with mp_profile_oom set.
*/
enum mp_status mp_profile_read(struct mp_profile *p, struct mp_reader *r,
			       uint64_t *events,
			       void (*tick)(void *ctx, uint64_t offset),
			       void *ctx);

/*
** Account events already decoded (in stream order), with the same
** prefetching as mp_profile_read. Returns the memory events accounted,
** or -1 when out of memory (mp_profile_oom set).
*/
int64_t mp_profile_events(struct mp_profile *p, const struct mp_event *evs,
			  size_t count);

/*
** Like mp_profile_read, but decoding into event structs runs on a second
** thread while this one accounts them. Same results, same statuses. r
** belongs to the decoding thread until this returns. ljmprof no longer
** uses it: mp_profile_read costs fewer instructions and is as fast.
*/
enum mp_status mp_profile_read_threaded(struct mp_profile *p,
					struct mp_reader *r, uint64_t *events,
					void (*tick)(void *ctx,
						     uint64_t offset),
					void *ctx);

/*
** Close the current file: fold its summary into total and forget its
** symbols and live heap (held bytes per location stay).
*/
void mp_profile_end_file(struct mp_profile *p, int truncated);

/*
** Forget the current file: its summary, symbols, live heap and the
** names it added. The location counters of memory events it accounted
** stay, so only a file that accounted none is forgotten whole.
*/
void mp_profile_drop_file(struct mp_profile *p);

/*
** Reading is over: sort the override pairs by key, in place, each key
** once. With orig_rank (location id -> rank, a permutation of the ids)
** and rank_orig (its inverse), the pairs of one event location are in the order of their
** original locations' ranks instead of their ids. Returns the number of
** pairs. No pair may be added afterwards.
*/
uint64_t mp_profile_sort_overrides(struct mp_profile *p,
				   const uint32_t *orig_rank,
				   const uint32_t *rank_orig);

/* Pair i (0 <= i < the number mp_profile_sort_overrides returned), by
** value; count and bytes are 0 without MP_PROFILE_OVERRIDE_VALUES. */
struct mp_override mp_profile_override(const struct mp_profile *p,
				       uint64_t i);

/* Once sorted: the pairs of location loc and this kind are [first, *end);
** returns first (equal to *end when there are none). */
uint64_t mp_profile_overrides_of(const struct mp_profile *p, int is_free,
				 uint32_t loc, uint64_t *end);

/* Location id as a whole (a copy). */
void mp_profile_loc(const struct mp_profile *p, uint32_t id,
		    struct mp_loc *out);
/* Only its counters (n_alloc ... temporary_bytes), cheaper: for the reports'
** passes over every location. */
void mp_profile_loc_counts(const struct mp_profile *p, uint32_t id,
			   struct mp_loc *out);

/* One counter of location id, cheaper still: for sorting. */
enum mp_measure {
  MP_MEASURE_ALLOCS,	/* n_alloc. */
  MP_MEASURE_REALLOCS,	/* n_realloc. */
  MP_MEASURE_FREES,	/* n_free. */
  MP_MEASURE_EVENTS,	/* All three. */
  MP_MEASURE_HELD_BYTES,	/* held_bytes. */
  MP_MEASURE_TEMPORARY	/* temporary. */
};
uint64_t mp_profile_measure(const struct mp_profile *p, uint32_t id,
			    enum mp_measure m);

/*
** Call stacks (streams with the profile extension). Every file's stacks
** are one tree: node ids 1 .. mp_profile_nstacks() - 1, each a frame and
** its parent (0: the root), root first; an event's stack is its leaf
** node. A node's figures are those of the events whose leaf it is; the
** location those events are charged to (where every report by location
** counts them) is its leaf location: the frame's own for a Lua, C or
** trace frame, the caller's for a built-in, INTERNAL under a cut.
** A version-3 stream has no nodes (mp_profile_nstacks() is 0 or 1).
** mp_profile_read knows a stream with stacks from its headers; a caller
** of mp_profile_event must feed a stack stream's events from the
** beginning of its event section, or stacks are counted as internal.
**
** For each node with figures: mp_profile_stack gives them and its first
** frame; mp_profile_frame walks to the root through frame.parent. Names
** to print: mp_name_frame (tools/report/mp_names.h), or the location
** (mp_profile_loc(frame.loc)) for a Lua, C, trace or location frame.
*/
#define MP_FRAME_LOCATION 5	/* A frame that is a version-3 location: a
				** block made at one in a stack stream. */

/* The loc of a CUT frame that a full node table made (INFO FULL_ROOT):
** the frames above its leaf were left out; 0 is the depth limit's. */
#define MP_CUT_FULL	1

struct mp_frame {
  uint32_t parent;	/* The next frame towards the root; 0: none. */
  uint32_t tag;		/* LJM_FRAME_* or MP_FRAME_LOCATION. */
  uint32_t loc;		/* LUA, C, TRACE, LOCATION: its location id (as
			** grouped); FAST: the built-in's number; CUT: 0,
			** MP_CUT_FULL for the full node table's cut. */
  uint32_t name;	/* LUA: the function's name, FAST: the built-in's
			** (mp_strings_get); MP_NO_STRING: none. */
  uint32_t site;	/* TRACE: the call site (0: not known). */
  uint32_t leaf;	/* The location its events are charged to. */
};

struct mp_stack_counts {
  uint64_t n_alloc, alloc_bytes;	/* Allocations. */
  uint64_t n_realloc, realloc_bytes;	/* Reallocations: new sizes. */
  uint64_t held_blocks, held_bytes;	/* Still live at the end. */
  uint64_t temporary, temporary_bytes;	/* Freed by the next event. */
};

/* One more than the largest node id; 0 or 1: no stacks. */
uint32_t mp_profile_nstacks(const struct mp_profile *p);
/* Node id's frame. */
void mp_profile_frame(const struct mp_profile *p, uint32_t id,
		      struct mp_frame *out);
/* Node id's figures; 1 when any is not 0. */
int mp_profile_stack(const struct mp_profile *p, uint32_t id,
		     struct mp_stack_counts *out);

/*
** The heap over time, one timeline per file finished (in the order of
** the files in the total): live bytes and blocks after memory event
** `event`, at a few hundred events spread evenly over the file (every
** k-th event, k doubled whenever MP_TIMELINE_POINTS are full, so memory
** never grows with the file), its last event, and the exact peak. A
** point's time is that of the last time mark (INFO TIME) at or before
** it, MP_NO_TIME before the first or in a stream without marks.
*/
#define MP_TIMELINE_POINTS 512
#define MP_NO_TIME UINT64_MAX

/* A figure of the process that time marks carry: its first value (0:
** none in the stream), its highest and when (MP_NO_TIME: not known), its
** last. */
struct mp_gauge {
  uint64_t first, max, max_ns, last;
};

struct mp_timeline_point {
  uint64_t event;		/* Memory events so far (from 1). */
  uint64_t live_bytes, live_blocks;
  uint64_t time_ns;		/* Since the stream began, or MP_NO_TIME. */
  uint64_t rss;			/* The process's resident bytes at the
				** last INFO RSS at or before it (0: none). */
  uint64_t mapped;		/* The bytes LuaJIT's allocator had mapped
				** at the last INFO MAPPED (0: none). */
};

struct mp_timeline {
  const struct mp_timeline_point *points;	/* Ascending events. */
  uint32_t npoints;
  struct mp_timeline_point peak;	/* The first event with the highest
					** live bytes (event 0: none). */
  int has_time;			/* The stream has time marks. */
  uint64_t end_ns;		/* Its last mark (the writer's last is at
				** the end: the duration), or MP_NO_TIME. */
  /* The process's resident set size (INFO RSS), and the bytes LuaJIT's
  ** own allocator has mapped (INFO MAPPED; none where the host gave the
  ** VM its allocator). */
  struct mp_gauge rss, mapped;
};

/*
** Moments, chosen as each file is read: right after a file's memory
** event 1, and then after each event that take asks for, take(ctx, at)
** sees p as it is then (at: the point, events, live bytes and blocks,
** time), held bytes per location and stack node exact, and returns the
** next event it wants (greater than at->event), or 0 when out of memory
** (which stops reading as any out of memory does). No cost per event:
** the timeline's test of whether a point is due covers it. Every file
** read afterwards; take NULL: none.
*/
void mp_profile_set_moments(struct mp_profile *p,
			    uint64_t (*take)(void *ctx,
					     const struct mp_timeline_point *at),
			    void *ctx);

/*
** Held at the peak (with MP_PROFILE_PEAK): once a file is finished
** (mp_profile_end_file) and until the next one's first event, the held
** bytes and blocks of location id, or of stack node id, at that file's
** peak (its timeline's peak event), as mp_profile_loc_counts and
** mp_profile_stack would have given them right after it: so they count
** what earlier files left too. Exact, in the one pass, at O(1) per
** event (a lazy snapshot, mp_peak.c). For a file without a peak, or
** without MP_PROFILE_PEAK, the counts now.
*/
void mp_profile_loc_at_peak(const struct mp_profile *p, uint32_t id,
			    uint64_t *bytes, uint64_t *blocks);
void mp_profile_stack_at_peak(const struct mp_profile *p, uint32_t id,
			      uint64_t *bytes, uint64_t *blocks);

/* Timelines kept: one per file finished. */
uint32_t mp_profile_ntimelines(const struct mp_profile *p);
void mp_profile_timeline(const struct mp_profile *p, uint32_t i,
			 struct mp_timeline *out);
/* A sampled block of size bytes in a stream sampled at mean bytes stands
** for this many blocks (mp_sample.c: 1 / (1 - exp(-size/mean)); its
** bytes are size times that). */
double mp_sample_weight(uint64_t size, uint64_t mean);

/* The file being read, as it stands (ljmprof top): its point now (the
** events read, the live heap, the last time mark and gauges) and its
** sampling mean (0: every event). */
void mp_profile_file_now(struct mp_profile *p,
			 struct mp_timeline_point *out, uint64_t *sample_mean);

/*
** Object kinds (LJM_KIND_*: the objkind byte of the profile extension),
** with MP_PROFILE_KINDS: allocations, reallocations and the blocks held
** at the end, by kind and by (kind, location) pair, the location being
** the one the event is charged to. A free is of its block's kind. An
** event without the byte (a version-3 stream) is of kind LJM_KIND_NONE.
** The figures are read in one pass with the rest, by the fast decoder
** too (the heap keeps each block's kind); a filter (and a sampled file)
** reads every event through mp_profile_event.
*/
#define MP_NKINDS 256

/*
** Start snapshots (the writer's INFO SNAPSHOT 1 .. 0): the blocks live
** when a stream began. They are held at "live at start (KIND)" (the
** START location of their kind), so that their frees are charged there,
** and are not allocations: n_alloc and bytes_allocated stay what the run
** allocated. The census: per kind, the Lua functions with the most
** closures live at the start (by the location where they were defined),
** and the largest table blocks (tables, array and hash parts).
*/
struct mp_snap_kind {
  uint64_t blocks, bytes, min, max;
};
struct mp_snap_closures {
  uint32_t loc;			/* Where the function was defined. */
  uint64_t n, bytes;
};
struct mp_snap_block {
  uint64_t addr, size;
  unsigned kind;
};
#define MP_SNAP_TOP 10		/* Largest table blocks kept. */

/* Inside a start snapshot: its allocations are not events of the run;
** nor are those of a later snapshot (INFO SNAPSHOT 2 .. 0), a census of
** what is live then, which changes no figure but its own. */
int mp_profile_in_snapshot(const struct mp_profile *p);
/* Before reading: the census (mp_profile_snap_*) is that of the nth
** snapshot of each file, 1 (the default) the start one. */
void mp_profile_census_of(struct mp_profile *p, uint32_t n);
/* Its blocks and bytes; 0 when no file had it. */
int mp_profile_census(const struct mp_profile *p, uint64_t *blocks,
		      uint64_t *bytes);
void mp_profile_snap_kind(const struct mp_profile *p, unsigned kind,
			  struct mp_snap_kind *out);
/* The locations with the most closures, most first: how many are in out
** (at most max). */
size_t mp_profile_snap_closures(const struct mp_profile *p,
				struct mp_snap_closures *out, size_t max);
/* The largest table blocks, largest first (at most MP_SNAP_TOP). */
size_t mp_profile_snap_tables(const struct mp_profile *p,
			      struct mp_snap_block *out, size_t max);

struct mp_kind_counts {
  uint64_t n_alloc, alloc_bytes;	/* Allocations. */
  uint64_t n_realloc, realloc_bytes;	/* Reallocations: new sizes. */
  uint64_t held_blocks, held_bytes;	/* Still live at the end. */
};

/* Before reading: keep only the events of the kinds whose keep[] is 1,
** so that every figure of p is of those kinds (needs MP_PROFILE_KINDS). */
void mp_profile_filter_kinds(struct mp_profile *p,
			     const uint8_t keep[MP_NKINDS]);
/* Allocations and reallocations that carried a kind byte. */
uint64_t mp_profile_kind_events(const struct mp_profile *p);
void mp_profile_kind(const struct mp_profile *p, unsigned kind,
		     struct mp_kind_counts *out);
/* The (kind, location) pairs, 0 .. mp_profile_nkindlocs() - 1. */
uint32_t mp_profile_nkindlocs(const struct mp_profile *p);
void mp_profile_kindloc(const struct mp_profile *p, uint32_t i,
			unsigned *kind, uint32_t *loc,
			struct mp_kind_counts *out);
/* With stacks, the (kind, stack node) pairs, 0 .. mp_profile_nkindpaths()
** - 1: the call paths of each kind, a node's counts being those of the
** events whose stack it is (as mp_profile_stack's), of that kind. */
uint32_t mp_profile_nkindpaths(const struct mp_profile *p);
void mp_profile_kindpath(const struct mp_profile *p, uint32_t i,
			 unsigned *kind, uint32_t *node,
			 struct mp_kind_counts *out);

/* The bytes held by each object kind, by the blocks of every file
** (without MP_PROFILE_KINDS too; sampled files: estimates): now, or
** with at_peak, at the last finished file's peak (MP_PROFILE_PEAK). */
void mp_profile_kinds_held(const struct mp_profile *p, int at_peak,
			   uint64_t out[MP_NKINDS]);

/*
** Lifetimes, with MP_PROFILE_LIFETIMES (for the DHAT format): per
** location and per stack node (of the events charged to it, as
** mp_profile_loc's and mp_profile_stack's), every block made by an
** allocation or a reallocation, and how long it lived: from its event to
** the one that freed or reallocated it, or to the end of its file. Each
** sum is kept both in memory events and in nanoseconds of the stream's
** time marks (a block made before the first mark was made at 0), so
** that a report picks the unit once all files are read. Several files:
** the global peak is the largest file peak (the total's), and what was
** live at the end is summed over the files. Read, like kinds, through
** mp_profile_event.
*/
struct mp_life_counts {
  uint64_t tb, tbk;		/* Bytes and blocks made. */
  uint64_t tl_events, tl_ns;	/* The sum of their lifetimes. */
  uint64_t mb, mbk;		/* The most bytes live at once (and the
				** blocks then), in any one file. */
  uint64_t gb, gbk;		/* Live at the global peak. */
  uint64_t eb, ebk;		/* Live at the end. */
};

struct mp_life_summary {
  uint64_t files, timed_files;	/* Files finished; of which with marks. */
  uint64_t end_events, end_ns;	/* The longest file's end. */
  uint64_t peak_events, peak_ns;	/* The global peak, in its file. */
};

int mp_profile_has_lifetimes(const struct mp_profile *p);
void mp_profile_life_summary(const struct mp_profile *p,
			     struct mp_life_summary *out);
void mp_profile_life_loc(const struct mp_profile *p, uint32_t id,
			 struct mp_life_counts *out);
void mp_profile_life_stack(const struct mp_profile *p, uint32_t id,
			   struct mp_life_counts *out);

/* Reading is over: sum the total's counts by kind and bytes (the
** locations'), drop what only reading needs (symbols, live heap,
** location hash) before reporting. */
void mp_profile_done_reading(struct mp_profile *p);

#endif
