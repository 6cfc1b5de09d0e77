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
  X(TRACE_UNKNOWN, LJM_SRC_TRACE, "TRACE [", "trace", 4, NUMBER, 0)

/* Fields, as in struct mp_loc: LUA: str = chunk, linedefined, line.
** LUA_UNKNOWN: addr = prototype not in the symbol table, line. C: str =
** symbol name, addr = symbol address. C_UNKNOWN: addr = C function
** address. TRACE: addr = trace number, str = chunk, line. TRACE_NOPROTO
** (prototype unknown): addr, addr2 = prototype, line. TRACE_UNKNOWN:
** addr = trace number not in the symbol table. */
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
};

/*
** How a location is stored: 64 bytes. A profile that loads thousands of
** chunks has millions of locations, most of which only allocate, so the
** reallocation and free counters live in a side record (ext) made on
** the first such event, and the fields that only some locations have
** (addresses of C functions and traces, and linedefined when both it
** and the line are kept) in another (aux). held_blocks is created -
** released.
*/
struct mp_lrec {
  uint32_t str;
  uint32_t num;		/* Line; for Lua code grouped by function,
			** linedefined. */
  uint32_t ext;		/* Index + 1 into exts, or 0. */
  uint32_t kind_aux;	/* kind << 29 | (index + 1 into auxs, or 0). */
  /* Index + 1 of the last override pair whose blocks came from here,
  ** for reallocations [0] and frees [1]: most blocks of a location are
  ** released by the same code, so the pair is found without hashing. */
  uint32_t ov_memo[2];
  uint64_t n_alloc, alloc_bytes;
  uint64_t created, released, held_bytes;
};

#define MP_LREC_AUX_BITS 29
#define MP_LREC_AUX_MASK ((1u << MP_LREC_AUX_BITS) - 1)

struct mp_lext {
  uint64_t n_realloc, realloc_new, realloc_old;
  uint64_t n_free, free_bytes;
};

struct mp_laux {
  uint64_t addr, addr2;
  uint64_t linedefined;	/* When the line is kept too (MP_GROUP_FRAMES). */
};

/*
** One (event location, location whose block it reallocated or freed)
** pair. key is is_free << 63 | loc << 32 | orig, so that sorted keys
** group the pairs by event location. count and bytes (the old sizes of
** those blocks) are kept only with override_values.
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
  uint64_t n_alloc, n_realloc, n_free;	/* Memory events by kind. */
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
  uint64_t files, truncated_files;
};

/* Location cache: big enough for the hot lines of a large program.
** (The fuzz target makes it tiny, to run fast and hit collisions.) */
#ifndef MP_LOC_CACHE_BITS
#define MP_LOC_CACHE_BITS 14
#endif
#define MP_LOC_CACHE (1u << MP_LOC_CACHE_BITS)

#define MP_ADDR_GEN_BITS 12
#define MP_ADDR_GENS (1u << MP_ADDR_GEN_BITS)

struct mp_loc_cache_entry {
  uint64_t loc, line;	/* Event location fields. */
  uint32_t src;
  uint32_t gen;		/* Valid when equal to the generation of its key. */
  uint32_t id;
};

struct mp_profile {
  enum mp_group group;
  struct mp_strings strings;	/* Shared by all merged files. */
  struct mp_symtab symtab;	/* Per file. */
  struct mp_heap heap;		/* Per file: the live blocks. */
  /* Per file, grouped by function: trace number -> a: 1 << 32 |
  ** linedefined of its start prototype when the trace was defined, or 0
  ** when that prototype was unknown. */
  struct mp_map trace_funcs;
  struct mp_lrec *locs;
  uint32_t nlocs, locs_cap;
  struct mp_lext *exts;
  uint32_t nexts, exts_cap;
  struct mp_laux *auxs;
  uint32_t nauxs, auxs_cap;
  uint64_t *loc_slots;		/* Location hash: hash << 32 | (id + 1). */
  uint32_t loc_mask;
  /* Override pairs: an array of struct mp_override with override_values
  ** (JSON), of bare 8-byte keys without (the text report prints no
  ** counts). Appended while reading, with copies of a key merged from
  ** time to time; sorted, each key once, when reading is done. */
  void *ov;
  uint64_t nov, ov_cap;
  uint64_t ov_maybe_dup;	/* Appended since the last merge that may
				** repeat a key. */
  int ov_sorted;
  struct mp_loc_cache_entry cache[MP_LOC_CACHE];
  /* Generations, bumped when symbols change what a key resolves to: one
  ** per C-symbol table (any new symbol may be the nearest), one per
  ** hash slot of prototype addresses and trace numbers (a definition
  ** changes only its own address or number). */
  uint32_t cfunc_gen;
  uint32_t addr_gen[MP_ADDR_GENS];
  /* The resolution of the previous memory event (runs of events from
  ** one line are the rule), valid until the next symbol; and the id of
  ** the internal location, which no symbol changes. id + 1, 0: none. */
  uint64_t last_loc, last_line;
  uint32_t last_src, last_id;
  uint32_t internal_id;
  struct mp_summary file;	/* The file being read. */
  struct mp_summary total;	/* Files finished so far. */
  uint32_t file_strings;	/* Strings before the file being read. */
  int oom;			/* Out of memory: results are incomplete. */
  int no_overrides;		/* Skip override pairs (stat needs none). */
  int no_locations;		/* One location for all (stat needs none). */
  int override_values;		/* Count and bytes per override pair. */
};

void mp_profile_init(struct mp_profile *p, enum mp_group group);
void mp_profile_free(struct mp_profile *p);

/* Account one event. Returns 0, or -1 when out of memory. */
int mp_profile_event(struct mp_profile *p, const struct mp_event *ev);

/*
** Read every event of r into p. Memory events are taken in small batches
** whose heap slots are prefetched first: on big heaps the parser waits
** for memory more than it computes. tick (may be NULL) is called every
** 2^20 memory events. *events gets the memory events accounted. Returns
** the reader's final status, or MP_ERROR with p->oom set.
*/
enum mp_status mp_profile_read(struct mp_profile *p, struct mp_reader *r,
			       uint64_t *events,
			       void (*tick)(void *ctx, uint64_t offset),
			       void *ctx);

/*
** Account events already decoded (in stream order), with the same
** prefetching as mp_profile_read. Returns the memory events accounted,
** or -1 when out of memory (p->oom set).
*/
int64_t mp_profile_events(struct mp_profile *p, const struct mp_event *evs,
			  size_t count);

/*
** Like mp_profile_read, but decoding runs on a second thread while this
** one accounts: the two halves of the work take about as long each on
** big streams. Same results, same statuses. r belongs to the decoding
** thread until this returns.
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
** once. With orig_rank (location id -> rank) and rank_orig (its
** inverse), the pairs of one event location are in the order of their
** original locations' ranks instead of their ids. Returns the number of
** pairs. No pair may be added afterwards.
*/
uint64_t mp_profile_sort_overrides(struct mp_profile *p,
				   const uint32_t *orig_rank,
				   const uint32_t *rank_orig);

/* Pair i (0 <= i < p->nov), by value; count and bytes are 0 without
** override_values. */
static inline struct mp_override mp_profile_override(const struct mp_profile *p,
						     uint64_t i)
{
  struct mp_override o = {0, 0, 0};
  if (p->override_values)
    o = ((const struct mp_override *)p->ov)[i];
  else
    o.key = ((const uint64_t *)p->ov)[i];
  return o;
}

/* Once sorted: the pairs of location loc and this kind are [first, *end);
** returns first (equal to *end when there are none). */
uint64_t mp_profile_overrides_of(const struct mp_profile *p, int is_free,
				 uint32_t loc, uint64_t *end);

/* Location id as a whole (a copy). */
void mp_profile_loc(const struct mp_profile *p, uint32_t id,
		    struct mp_loc *out);

/* Reading is over: drop what only reading needs (symbols, live heap,
** location hash) before reporting. */
void mp_profile_done_reading(struct mp_profile *p);

#endif
