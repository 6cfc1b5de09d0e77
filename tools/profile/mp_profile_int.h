/*
** The aggregator's own header, for tools/profile/ only (and the white-box
** unit tests): its state, and how its parts, one file per job, call one
** another:
**
**   mp_profile.c    lifetime, files, accessors, one event at a time
**   mp_locs.c       location interning: key -> id, the records
**   mp_resolve.c    event location -> key, against the symbols, cached
**   mp_symbols.c    symbol events
**   mp_overrides.c  override pairs
**   mp_stacks.c     the stack tree of the profile extension
**   mp_kinds.c      object kinds
**   mp_life.c       block lifetimes and maxima (DHAT)
**   mp_live.h       live blocks per location, the totals and the peak
**   mp_read.c       the batched read driver (mp_pipeline.c: threaded)
**
** What the hot path crosses is inline here.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef MP_PROFILE_INT_H
#define MP_PROFILE_INT_H

#include <stdlib.h>
#include <string.h>

#include "lj_memprof_format.h"
#include "mp_fast.h"
#include "mp_graph.h"
#include "mp_profile.h"

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
  ** released by the same code, so the pair is found without hashing.
  ** Without counts (MP_OV_KEYS), the last releasing location's id + 1: its
  ** pair, which is not in the array (mp_overrides_note). */
  uint32_t ov_memo[2];
  uint64_t n_alloc, alloc_bytes;
  /* created - n_alloc and held_bytes - alloc_bytes (mp_lrec_created,
  ** mp_lrec_held_bytes): an allocation that makes its block counts
  ** n_alloc and alloc_bytes only, two counters, not four. */
  uint64_t created_more, released, held_more;
};

/* The blocks made at a location (allocations and reallocations that
** made one), and the bytes it holds. */
static inline uint64_t mp_lrec_created(const struct mp_lrec *r)
{
  return r->n_alloc + r->created_more;
}

static inline uint64_t mp_lrec_held_bytes(const struct mp_lrec *r)
{
  return r->alloc_bytes + r->held_more;
}

#define MP_LREC_AUX_BITS 28	/* Up to 16 location kinds above it. */
#define MP_LREC_AUX_MASK ((1u << MP_LREC_AUX_BITS) - 1)

struct mp_lext {
  uint64_t n_realloc, realloc_new, realloc_old;
  uint64_t n_free, free_bytes;
};

/* Blocks made at a location that the next memory event freed. */
struct mp_ltemp {
  uint64_t count, bytes;
};

struct mp_laux {
  uint64_t addr, addr2;
  uint64_t linedefined;	/* When the line is kept too (MP_GROUP_FRAMES). */
};

/* Location cache: big enough for the hot lines of a large program.
** (The fuzz target makes it tiny, to run fast and hit collisions.) */
#ifndef MP_LOC_CACHE_BITS
#define MP_LOC_CACHE_BITS 14
#endif
#define MP_LOC_CACHE (1u << MP_LOC_CACHE_BITS)

#define MP_ADDR_GEN_BITS 12
#define MP_ADDR_GENS (1u << MP_ADDR_GEN_BITS)

/*
** A node of the stack tree, shared by every file of the profile: its
** parent (0: the root) and its frame, resolved when the node was
** announced, so that equal stacks of two files are one node. 24 bytes;
** its figures are in a parallel array (struct mp_scount).
*/
struct mp_snode {
  uint32_t parent;
  uint32_t frame;	/* LJM_FRAME_*, or MP_FRAME_LOCATION. */
  uint32_t loc;		/* LUA, C, TRACE, LOCATION: the frame's location
			** id; FAST: its ffid; CUT: 0, or MP_CUT_FULL. */
  uint32_t name;	/* LUA: function name, FAST: built-in name, else
			** MP_NO_STRING. */
  uint32_t aux;		/* TRACE: call site; else 0. */
  uint32_t leaf;	/* The location an event with this stack is
			** charged to. */
};

struct mp_scount {
  uint64_t n_alloc, alloc_bytes;
  uint64_t n_realloc, realloc_bytes;
  uint64_t held_blocks, held_bytes;
  uint64_t temporary, temporary_bytes;
};

/* A location's or stack node's held counts as they were at the peak
** epoch `epoch` (mp_peak.c). */
struct mp_pksave {
  uint64_t epoch;
  uint64_t bytes, blocks;
};

/* A file's timeline being made, and those of the files finished. */
struct mp_tl_file {
  struct mp_timeline_point *points;
  uint32_t npoints;
  struct mp_timeline_point peak;
  int has_time;
  uint64_t end_ns;
  struct mp_gauge rss, mapped;
};

struct mp_loc_cache_entry {
  uint64_t loc, line;	/* Event location key (mp_loc_key) and line. */
  uint32_t src;
  uint32_t gen;		/* Valid when equal to the generation of its key. */
  uint32_t id;
};

/* The start snapshots' census (mp_snapshot.c); kinds NULL until one. */
struct mp_snapshot {
  struct mp_snap_kind *kinds;	/* MP_NKINDS of them. */
  struct mp_map closures;	/* Location id -> a: closures, b: bytes. */
  struct mp_snap_block big[MP_SNAP_TOP];  /* Largest first. */
  size_t nbig;
};

/* An entry of the read loop's raw memo (mp_read.c). */
#define MP_FAST_RAW_SLOTS 8
struct mp_fast_raw {
  uint64_t raw;		/* Lua: the 8 bytes after the header... */
  uint32_t tail;	/* ...and the line's second byte, or RAW_*. */
  int32_t id;		/* Ids from 2^31 are not memoized. */
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
  /* Temporary allocations by location id, up to ntemps (made on the
  ** first: most profiles' locations have none, and their side records
  ** (ext) stay in the order that the read paths make them). */
  struct mp_ltemp *temps;
  uint32_t ntemps;
  uint64_t *loc_slots;		/* Location hash: hash << 32 | (id + 1). */
  uint32_t loc_mask;
  /* Override pairs: an array of struct mp_override with counts
  ** (JSON), of bare 8-byte keys without (the text report prints no
  ** counts; the last releaser of each location's blocks stays in its
  ** memo until then). Appended while reading, with copies of a key
  ** merged from time to time; sorted, each key once, when reading is
  ** done. */
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
  uint32_t internal_gen;	/* Always 1. */
  uint32_t addr_gen[MP_ADDR_GENS];
  /* The resolution of the previous memory event (runs of events from
  ** one line are the rule), valid until the next symbol; and the id of
  ** the internal location, which no symbol changes. id + 1, 0: none. */
  uint64_t last_loc, last_line;
  uint32_t last_src, last_id;
  uint32_t internal_id;
  /* The file being read. Its counts by kind and bytes are not kept per
  ** event: the total's are the locations' sums, taken by
  ** mp_profile_done_reading. */
  struct mp_summary file;
  uint64_t file_events;		/* Memory events of the file so far. */
  /* The heap key of the block the last memory event made (0: it made
  ** none, or one at an address without a key): a free of it by the next
  ** event is a temporary allocation. */
  uint64_t fresh_block;
  /* The read loop's memo of a Lua event's raw bytes (mp_read.c), valid
  ** within one run of the loop: here, at a fixed offset from p, which
  ** the loop keeps in a register; in the loop's frame the compiler keeps
  ** the memo's address in a stack slot, a load more on every Lua event. */
  struct mp_fast_raw fast_raw[MP_FAST_RAW_SLOTS];
  /* The file's timeline: every tl_stride-th event (the next at tl_next),
  ** the peak's blocks and time, the last time mark (MP_NO_TIME: none
  ** yet); the timelines of the files finished. */
  struct mp_timeline_point tl[MP_TIMELINE_POINTS + 1];
  uint32_t ntl;
  uint64_t tl_stride, tl_next;
  uint64_t tl_due;	/* The next point; tl_next is the nearer of it
			** and the next moment. */
  /* Moments (mp_profile_set_moments): the hook, and the event of the
  ** file being read it asks for next (0: none). */
  uint64_t (*mo_take)(void *ctx, const struct mp_timeline_point *at);
  void *mo_ctx;
  uint64_t mo_next;
  uint64_t peak_blocks, peak_time, peak_rss;
  uint64_t file_time;
  /* The file's INFO RSS and INFO MAPPED so far. */
  uint64_t peak_mapped;
  struct mp_gauge rss, mapped;
  struct mp_tl_file *tls;
  uint32_t ntls, tls_cap;
  struct mp_summary total;	/* Files finished so far. */
  uint32_t file_strings;	/* Strings before the file being read. */
  int oom;			/* Out of memory: results are incomplete. */
  /* The stack tree: nodes 1 .. nsnodes - 1 (0 is the root, unused),
  ** their figures, and a hash of their identities (id, 0: empty). */
  struct mp_snode *snodes;
  struct mp_scount *scounts;
  uint32_t nsnodes, snodes_cap;
  uint32_t *snode_slots;
  uint32_t snode_mask;
  /* Per file with stacks: the stream's node ids (1 ..) -> tree nodes;
  ** and for blocks made at a version-3 location, location id -> its
  ** one-frame node (a: node). */
  uint32_t *fnodes;
  uint32_t nfnodes, fnodes_cap;
  struct mp_map loc_snodes;
  /* Sampled files: the estimated blocks of each sampled block live, by
  ** heap key (bit 63: a huge address), and the fraction of a block the
  ** estimates carry to the next one (mp_sample.c). */
  struct mp_map sample_blocks;
  double sample_carry;
  uint64_t sample_extra;	/* Their blocks beyond one each. */
  /* Per file: its trace call sites, trace number << 32 | site -> a: the
  ** first of its b pairs (prototype, line) in site_pairs. */
  struct mp_map sites;
  uint64_t *site_pairs;
  uint32_t nsite_pairs, site_pairs_cap;
  int file_ext;			/* The file has the profile extension... */
  int file_stacks;		/* ...and its heap's owners are nodes. */
  uint64_t file_fullroot;	/* INFO FULL_ROOT: that node is the full
				** table's cut (0: none said). */
  int no_locations;		/* One location for all (stat needs none). */
  /* Override pairs as bare keys (the text report, and the default),
  ** none (stat needs none), or with counts and bytes per pair (JSON).
  ** One field: the read loop tests it at every release. */
  enum { MP_OV_KEYS, MP_OV_NONE, MP_OV_VALUES } ov_mode;
  struct mp_kinds *kinds;	/* Object kinds (mp_kinds.c), or NULL. */
  struct mp_lifes *life;	/* Lifetimes (mp_life.c), or NULL. */
  int in_snap;			/* Between INFO SNAPSHOT 1 and 0. */
  int in_census;		/* Between INFO SNAPSHOT 2 (a later one) and 0. */
  int census_on;		/* ...and it is the census wanted. */
  uint32_t file_snaps;		/* Snapshots begun in this file so far. */
  uint32_t census_want;		/* The snapshot whose census is kept: 1 the
				** start (the default), N the Nth of a file. */
  uint64_t census_blocks, census_bytes;	/* A later one's, if kept. */
  uint64_t census_files;	/* Files that had the snapshot wanted. */
  struct mp_snapshot snap;	/* The start snapshots' census (mp_snapshot.c). */
  /* Held at the peak (MP_PROFILE_PEAK, mp_peak.c): the epoch, bumped
  ** after each event that makes a new peak of the file; the counts
  ** saved before the first change since, per location and stack node;
  ** the epoch of the last finished file's peak (0: none). */
  int pk_on;
  uint64_t pk_epoch, pk_done;
  struct mp_pksave *pk_locs, *pk_nodes;
  /* The bytes held by each object kind (LJM_KIND_*: blocks of every file
  ** made as that kind and not released, as locations' held_bytes), and
  ** with MP_PROFILE_PEAK each as it was at the peak epoch `epoch`. */
  uint64_t kind_held[MP_NKINDS];
  struct {
    uint64_t epoch, bytes;
  } kind_pk[MP_NKINDS];
  uint32_t npk_locs, npk_nodes;
  /* The heap graph (mp_graph.c), with MP_PROFILE_GRAPH: the last one
  ** read, its nodes by address, the object whose references are being
  ** read, and whether the next record begins a new graph. */
  int graph_want;
  struct mp_graph *graph;
  struct mp_map graph_index;
  uint32_t graph_cur;
  int graph_fresh;
  /* The object blocks of the snapshot being read, for its graph: each
  ** is a node, referenced or not (garbage that nothing refers to, a
  ** string no one holds any more, is a node too, reached by none). */
  uint64_t *graph_blocks;
  uint32_t graph_nblocks, graph_blocks_cap;
};

/* -- mp_locs.c ----------------------------------------------------------- */

/* Grow an array of n elements of size sz (capacity *cap) to hold one
** more; 0, or -1 when out of memory. */
int mp_grow_one(void **arr, uint32_t n, uint32_t *cap, size_t sz);

/* -- mp_graph.c ------------------------------------------------------------ */

/* A block of the snapshot being read (its allocation, kind kind), for a
** graph that may follow: 0, or -1 when out of memory. */
int mp_graph_block(struct mp_profile *p, const struct mp_event *ev,
		   unsigned kind);
/* A GRAPH record: 0, or -1 when out of memory. */
int mp_graph_record(struct mp_profile *p, const struct mp_event *ev);
/* A snapshot begins: a graph in it is a new one. */
void mp_graph_snapshot(struct mp_profile *p);
/* ...and ends: a graph begun in it is whole. */
void mp_graph_snapshot_end(struct mp_profile *p);
void mp_graph_free(struct mp_profile *p);
void mp_graph_free_all(struct mp_profile *p);	/* With its buffers. */

/* -- mp_life.c ----------------------------------------------------------- */

int mp_life_new(struct mp_profile *p);
void mp_life_free(struct mp_profile *p);
/* The memory event ev (kept, not yet accounted), charged to location loc
** and, in a file with stacks, made at node (else 0): 0, or -1 when out
** of memory. */
int mp_life_account(struct mp_profile *p, const struct mp_event *ev,
		    uint32_t loc, uint32_t node);
/* The file ends: finished (its peak counts), or dropped. */
void mp_life_end_file(struct mp_profile *p, int finished);

/* -- mp_snapshot.c --------------------------------------------------------- */

/* An allocation of the start snapshot, of that kind (after the filter):
** held at "live at start (KIND)", not allocated; 0, or -1 out of memory. */
int mp_snapshot_block(struct mp_profile *p, const struct mp_event *ev,
		      unsigned kind);
/* An allocation of a later snapshot: a census, not an event. */
int mp_snapshot_census(struct mp_profile *p, const struct mp_event *ev,
		       unsigned kind);
/* INFO SNAPSHOT: 1 begins the start one, 2 a later one, 0 ends it. */
void mp_snapshot_info(struct mp_profile *p, uint64_t value);
void mp_snapshot_free(struct mp_profile *p);


/* -- mp_peak.c ----------------------------------------------------------- */

/* Save the held counts of owner (a stack node when stacks, else a
** location) and of its location, where not saved since the peak
** epoch began. 0, or -1 when out of memory. */
int mp_peak_save(struct mp_profile *p, uint32_t owner, int stacks);
void mp_peak_free(struct mp_profile *p);

/* -- mp_kinds.c ---------------------------------------------------------- */

#define MP_KINDS_SKIP	(-1)	/* mp_kinds_keep: the filter leaves it out. */
#define MP_KINDS_OOM	(-2)

/* Whether the --kind filter keeps this kind (1 without one). */
int mp_kinds_kept(const struct mp_profile *p, unsigned kind);

struct mp_kindloc {
  uint32_t kind, loc;
  struct mp_kind_counts c;
};

#define MP_KINDS_NO_PAIR UINT32_MAX
struct mp_kindpath {
  uint32_t kind, node;
  uint32_t pair;		/* Its (kind, location) pair, or
				** MP_KINDS_NO_PAIR (mp_kinds_lookup). */
  uint32_t next;		/* The node's next kind's path + 1, or 0. */
  struct mp_kind_counts c;
};

/* The memo of mp_kinds_made: key + 1 (0: empty) -> pair or path index. */
#define MP_KINDS_MEMO_BITS 8
struct mp_kinds_memo {
  uint64_t key;
  uint32_t idx;
};

struct mp_kinds {
  uint8_t keep[MP_NKINDS];	/* The filter: 1 for the kinds kept. */
  /*
  ** 1 while the filter keeps every kind: the live heap keeps each
  ** block's kind with its owner, so a free needs nothing here and what
  ** each kind, pair and path holds is counted from the heap when a file
  ** ends. Else (a filter, or a sampled file, whose heap holds estimates)
  ** the blocks are kept in `blocks` too, and their held counts follow
  ** every event.
  */
  int by_heap;
  int ext_only;			/* MP_PROFILE_KINDS_EXT. */
  struct mp_kind_counts counts[MP_NKINDS];
  uint64_t kind_events;		/* Events that carried a kind. */
  /* Not by_heap: live blocks, addr -> a: size, b: kind << 32 | (pair
  ** index + 1), or kind << 32 | BLK_PATH | (path index + 1) with stacks,
  ** or kind << 32 alone for a block the filter left out. */
  struct mp_map blocks;
  /* (kind, location) pairs: kind << 32 | loc -> a: index into pairs. */
  struct mp_map pair_ids;
  struct mp_kindloc *pairs;
  uint32_t npairs, pairs_cap;
  /* (kind, stack node) pairs: node_path[node] is the index + 1 into
  ** paths of the node's newest kind (0: none; nnode_path of them), and
  ** each path's next the node's kind before it. */
  uint32_t *node_path;
  uint32_t nnode_path;
  struct mp_kindpath *paths;
  uint32_t npaths, paths_cap;
  /* The last path and the last location's own node looked up (0: none):
  ** a snapshot's blocks come in runs of one kind and location. */
  uint64_t last_path_key;
  uint32_t last_path;
  uint32_t last_loc, last_loc_node;
  /* Recent (kind, location) and (kind, node) pairs and their indexes:
  ** most allocations repeat one of a few. Indexes never move. */
  struct mp_kinds_memo memo[1u << MP_KINDS_MEMO_BITS];
};

int mp_kinds_new(struct mp_profile *p);
void mp_kinds_free(struct mp_profile *p);
/* The file ends: finished (what its blocks hold counts), or dropped. */
void mp_kinds_end_file(struct mp_profile *p, int finished);
/* A memory event, before it is accounted: its kind, or MP_KINDS_SKIP or
** MP_KINDS_OOM. */
int mp_kinds_keep(struct mp_profile *p, const struct mp_event *ev);
/* The event kept, of that kind, charged to location loc: 0, or -1 when
** out of memory. In a file with stacks its path is loc's own node (a
** block of the start snapshot). */
int mp_kinds_account(struct mp_profile *p, const struct mp_event *ev,
		     unsigned kind, uint32_t loc);
/* The same with its stack node (0: none; a free needs none). */
int mp_kinds_account_node(struct mp_profile *p, const struct mp_event *ev,
			  unsigned kind, uint32_t loc, uint32_t node);
/* The index of the pair (kind, loc), or with node of the path (kind,
** node), made on first sight (the path's pair first): UINT32_MAX when
** out of memory. */
uint32_t mp_kinds_lookup(struct mp_profile *p, unsigned kind, uint32_t loc,
			 uint32_t node);

/* Whether this file's kinds are counted. */
static inline int mp_kinds_on(const struct mp_profile *p)
{
  return p->kinds && (p->file_ext || !p->kinds->ext_only);
}

/* Whether the read driver may account this file's kinds itself, with
** mp_kinds_made (by_heap, and a file that is not sampled). */
static inline int mp_kinds_fast(const struct mp_profile *p)
{
  return mp_kinds_on(p) && p->kinds->by_heap && !p->file.sample_mean;
}

static inline void mp_kinds_count(struct mp_kind_counts *c, unsigned type,
				  uint64_t size)
{
  if (type == MP_EV_REALLOC) {
    c->n_realloc++;
    c->realloc_bytes += size;
  } else {
    c->n_alloc++;
    c->alloc_bytes += size;
  }
}

/*
** By heap (mp_kinds_fast): an allocation or reallocation (type) of size
** bytes of kind, charged to location loc, with stacks made at node (else
** 0): its figures as made, by kind, pair and path (not in a start
** snapshot, whose blocks are held, not made; the heap says what they
** hold). 0, or -1 when out of memory.
*/
static inline int mp_kinds_made(struct mp_profile *p, unsigned type,
				unsigned kind, uint32_t loc, uint32_t node,
				uint64_t size)
{
  struct mp_kinds *k = p->kinds;
  uint64_t key = ((uint64_t)kind << 32 | (node ? node : loc)) +
		 ((uint64_t)(node != 0) << 40) + 1;
  struct mp_kinds_memo *m =
      &k->memo[(key * 0x9e3779b97f4a7c15ull) >> (64 - MP_KINDS_MEMO_BITS)];
  uint32_t idx;
  if (m->key == key) {
    idx = m->idx;
  } else {
    if ((idx = mp_kinds_lookup(p, kind, loc, node)) == UINT32_MAX)
      return -1;
    m->key = key;
    m->idx = idx;
  }
  if (p->in_snap)
    return 0;
  mp_kinds_count(&k->counts[kind], type, size);
  if (node) {
    struct mp_kindpath *path = &k->paths[idx];
    mp_kinds_count(&path->c, type, size);
    if ((idx = path->pair) == MP_KINDS_NO_PAIR)
      return 0;
  }
  mp_kinds_count(&k->pairs[idx].c, type, size);
  return 0;
}

/* Blocks live in the file: the heap's, and in a sampled file the blocks
** its sampled ones stand for beyond themselves (mp_sample.c). */
static inline uint64_t mp_live_blocks(const struct mp_profile *p)
{
  return mp_heap_count(&p->heap) + p->sample_extra;
}

/* -- mp_timeline.c ------------------------------------------------------- */

void mp_timeline_begin_file(struct mp_profile *p);
/* Memory event evno is accounted and due (evno >= p->tl_next): a point
** of the timeline, or a moment, or both. */
void mp_timeline_point(struct mp_profile *p, uint64_t evno);
/* The file is finished: keep its timeline (0, or -1 when out of memory). */
int mp_timeline_end_file(struct mp_profile *p);
void mp_timeline_free(struct mp_profile *p);

static inline void mp_timeline_tick(struct mp_profile *p, uint64_t evno)
{
  if (evno >= p->tl_next)
    mp_timeline_point(p, evno);
}

/* In place, for the unit tests; the others use mp_profile_new. */
void mp_profile_init(struct mp_profile *p, enum mp_group group);
void mp_profile_free(struct mp_profile *p);

/* -- mp_locs.c ----------------------------------------------------------- */

/* The id of the location with key k (identity fields only), added if new;
** -1 when out of memory. */
int64_t mp_locs_intern(struct mp_profile *p, const struct mp_loc *k);
/* The same for the key of Lua code grouped by line: kind MP_LOC_LUA,
** chunk and line, nothing else (the most common new location). */
int64_t mp_locs_intern_lua_line(struct mp_profile *p, uint32_t chunk,
				uint32_t line);
struct mp_lext *mp_locs_new_ext(struct mp_profile *p, struct mp_lrec *r);

/* The realloc/free counters of a location, made on first use: 1 when
** r->ext is there (it never is 0 then), 0 when out of memory. */
static inline int mp_locs_has_ext(struct mp_profile *p, struct mp_lrec *r)
{
  return r->ext || mp_locs_new_ext(p, r);
}

/* Temporaries by location id up to id at least (mp_profile.c): 0, or -1
** when out of memory. */
int mp_live_grow_temps(struct mp_profile *p, uint32_t id);

/* -- mp_resolve.c -------------------------------------------------------- */

/*
** Resolutions are cached by the event's location key: for Lua and C
** functions the key of the address (mp_fast_key), which the read driver
** gets without decoding the address; for traces the trace number.
** Addresses of MP_FAST_KEY_LIMIT and above have no key: their events are
** resolved every time (mp_resolve_uncached).
*/
static inline int mp_loc_is_address(unsigned src)
{
  return src == LJM_SRC_LFUNC || src == LJM_SRC_CFUNC;
}

void mp_resolve_reset(struct mp_profile *p);
/* A symbol changed what (src, loc) resolves to; loc is a value. */
void mp_resolve_invalidate(struct mp_profile *p, unsigned src, uint64_t loc);
/* The same for the location key of a Lua or C function, or a trace. */
void mp_resolve_invalidate_key(struct mp_profile *p, unsigned src,
			       uint64_t key);
/* Resolve (src, location key loc, line) from the symbols, and keep the
** result in cache entry c under generation gen. */
int64_t mp_resolve_fill(struct mp_profile *p, struct mp_loc_cache_entry *c,
			uint32_t gen, unsigned src, uint64_t loc,
			uint64_t line);
/* loc is the value (an address without a key). */
int64_t mp_resolve_uncached(struct mp_profile *p, unsigned src, uint64_t loc,
			    uint64_t line);

static inline size_t mp_resolve_slot_loc(unsigned src, uint64_t loc,
					 uint64_t line)
{
  return (size_t)(((loc ^ line << 40 ^ src) * 0x9e3779b97f4a7c15ull) >>
		  (64 - MP_LOC_CACHE_BITS));
}

/* The generation that guards cached resolutions of (src, location key
** loc): internal locations never change. */
static inline uint32_t *mp_resolve_gen(struct mp_profile *p, unsigned src,
				       uint64_t loc)
{
  if (src == LJM_SRC_CFUNC)
    return &p->cfunc_gen;
  if (src == LJM_SRC_INTERNAL)
    return &p->internal_gen;
  return &p->addr_gen[((loc ^ src) * 0x9e3779b97f4a7c15ull) >>
		      (64 - MP_ADDR_GEN_BITS)];
}

/* The location key of an event's location value, or 0 with *uncached
** set when it has none. */
static inline uint64_t mp_loc_key(unsigned src, uint64_t loc, int *uncached)
{
  if (!mp_loc_is_address(src))
    return loc;
  if (loc >= MP_FAST_KEY_LIMIT) {
    *uncached = 1;
    return 0;
  }
  return mp_fast_key(loc);
}

static inline size_t mp_resolve_slot(const struct mp_event *ev)
{
  int uncached = 0;
  return mp_resolve_slot_loc(ev->src, mp_loc_key(ev->src, ev->loc, &uncached),
			     ev->loc_line);
}

/*
** The location id of (src, location key loc, line) from the cache, or
** resolved and cached; -1 when out of memory. Inline up to the cache's
** answer: a module-loading profile changes location every few events.
*/
static inline int64_t mp_resolve_cached(struct mp_profile *p, unsigned src,
					uint64_t loc, uint64_t line)
{
  struct mp_loc_cache_entry *c;
  uint32_t gen;
  if (p->no_locations)
    return mp_resolve_uncached(p, src, 0, line);
  c = &p->cache[mp_resolve_slot_loc(src, loc, line)];
  gen = *mp_resolve_gen(p, src, loc);
  if (c->gen == gen && c->loc == loc && c->line == line && c->src == src)
    return c->id;
  return mp_resolve_fill(p, c, gen, src, loc, line);
}

/* The location id of a memory event's location fields (src, location
** key, loc_line), or -1 when out of memory. */
static inline int64_t mp_resolve_loc(struct mp_profile *p, unsigned src,
				     uint64_t loc, uint64_t line)
{
  int64_t id;
  if (p->no_locations && p->nlocs)
    return 0;	/* stat: one location for all. */
  if (src == LJM_SRC_INTERNAL && p->internal_id && !p->no_locations)
    return p->internal_id - 1;
  if (p->last_id && loc == p->last_loc && line == p->last_line &&
      src == p->last_src)
    return p->last_id - 1;
  id = mp_resolve_cached(p, src, loc, line);
  if (id >= 0 && !p->no_locations) {
    if (src == LJM_SRC_INTERNAL) {
      p->internal_id = (uint32_t)id + 1;
    } else {
      p->last_loc = loc;
      p->last_line = line;
      p->last_src = src;
      p->last_id = (uint32_t)id + 1;
    }
  }
  return id;
}

/* The location id of a memory event, or -1 when out of memory. */
static inline int64_t mp_resolve(struct mp_profile *p,
				 const struct mp_event *ev)
{
  int uncached = 0;
  uint64_t key = mp_loc_key(ev->src, ev->loc, &uncached);
  if (uncached)
    return mp_resolve_uncached(p, ev->src, ev->loc, ev->loc_line);
  return mp_resolve_loc(p, ev->src, key, ev->loc_line);
}

/* -- mp_symbols.c -------------------------------------------------------- */

/* Define the symbol of a symbol event; 0, or -1 when out of memory. */
int mp_symbols_add(struct mp_profile *p, const struct mp_event *ev);
/* A prototype symbol event (not of the symbol table), its address as a
** key and a value: the read loop's, which decodes both. */
int mp_symbols_add_proto(struct mp_profile *p, uint64_t key, uint64_t addr,
			 const char *name, size_t name_len, uint32_t line);

/* -- mp_stacks.c ---------------------------------------------------------- */

/* The file being read has the profile extension: its heap's owners are
** stack nodes from now on (unless no locations are kept). 0, or -1. */
int mp_stacks_begin_file(struct mp_profile *p);
/* A NODE, INFO or SITE event; 0, or -1 when out of memory. */
int mp_stacks_symbol(struct mp_profile *p, const struct mp_event *ev);
/* The one-frame node of location id, made on first use; 0 when out of
** memory. */
uint32_t mp_stacks_of_loc(struct mp_profile *p, uint32_t id);
void mp_stacks_end_file(struct mp_profile *p);
void mp_stacks_free(struct mp_profile *p);

/* -- mp_overrides.c ------------------------------------------------------ */

/* With counts (MP_OV_VALUES): a new pair (mp_override_key(is_free, at,
** orig_id)); its index in *i. */
int mp_overrides_append(struct mp_profile *p, int is_free, uint32_t at,
			struct mp_lrec *orig, uint32_t orig_id, uint64_t *i);
/* Without: the pair of a releaser that a location's memo no longer
** holds. */
int mp_overrides_retire(struct mp_profile *p, int is_free, uint32_t at,
			uint32_t orig_id);
/* The last merge without counts (MP_OV_KEYS) (mp_profile_sort_overrides'),
** low_memory as when there is none for its counting sort. */
void mp_overrides_finish_keys(struct mp_profile *p,
			      const uint32_t *orig_rank,
			      const uint32_t *rank_orig, int low_memory);

static inline size_t mp_ov_size(const struct mp_profile *p)
{
  return p->ov_mode == MP_OV_VALUES ? sizeof(struct mp_override)
				     : sizeof(uint64_t);
}

/* The key of pair i: the first word of its element either way. */
static inline uint64_t *mp_ov_keyp(const struct mp_profile *p, uint64_t i)
{
  return (uint64_t *)((char *)p->ov + i * mp_ov_size(p));
}

/*
** Count a block of orig (id orig_id) that location at released. Pairs are
** appended unsorted and merged later; the memo finds the pair again when
** the same code releases this location's blocks. 0, or -1 when out of
** memory. Nothing without override pairs (MP_OV_NONE). Inlined into
** every free path of the read driver: a call per free cost more than
** the memo check itself; bare keys, the default, are tested first.
*/
/* mp_overrides_note when p->ov_mode is MP_OV_KEYS (the caller knows),
** the releasing location given as its id + 1, at1 (what the memo holds:
** a caller that keeps it adds nothing). */
static inline __attribute__((always_inline))
int mp_overrides_note_keys1(struct mp_profile *p, int is_free, uint32_t at1,
			    struct mp_lrec *orig, uint32_t orig_id)
{
  uint32_t memo = orig->ov_memo[is_free];
  /* Without counts a pair need only exist, and pairs are never
  ** dropped: the memo is the last releasing location, at + 1, and its
  ** pair goes to the array only when another takes its place (most
  ** locations have one releaser: their pair is never appended). */
  if (memo == at1)
    return 0;
  if (memo && mp_overrides_retire(p, is_free, memo - 1, orig_id) < 0)
    return -1;
  orig->ov_memo[is_free] = at1;
  return 0;
}

static inline __attribute__((always_inline))
int mp_overrides_note_keys(struct mp_profile *p, int is_free, uint32_t at,
			   struct mp_lrec *orig, uint32_t orig_id)
{
  return mp_overrides_note_keys1(p, is_free, at + 1, orig, orig_id);
}

static inline __attribute__((always_inline))
int mp_overrides_note(struct mp_profile *p, int is_free, uint32_t at,
		      struct mp_lrec *orig, uint32_t orig_id, uint64_t size)
{
  uint64_t i;
  uint32_t memo = orig->ov_memo[is_free];

  if (p->ov_mode == MP_OV_KEYS)
    return mp_overrides_note_keys(p, is_free, at, orig, orig_id);
  if (p->ov_mode == MP_OV_NONE)
    return 0;
  if (memo && memo <= p->nov &&
      *mp_ov_keyp(p, memo - 1) == mp_override_key(is_free, at, orig_id))
    i = memo - 1;
  else if (mp_overrides_append(p, is_free, at, orig, orig_id, &i) < 0)
    return -1;
  ((struct mp_override *)p->ov)[i].count++;
  ((struct mp_override *)p->ov)[i].bytes += size;
  return 0;
}

#endif
