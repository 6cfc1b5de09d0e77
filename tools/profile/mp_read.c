/*
** The read driver: the common memory events decoded straight into the
** accounting (mp_profile_read), and events already decoded, in small
** batches whose heap slots and cache entries are prefetched first
** (mp_profile_events, for the decoding thread of mp_pipeline.c).
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stddef.h>

#include "mp_fast.h"
#include "mp_profile_int.h"
#include "mp_live.h"

#define BATCH 16
#define PEEK_MIN_LOCS 65536

/* Stage 1: start loading the heap slots and the location cache entry. */
static void prefetch_event(struct mp_profile *p, const struct mp_event *ev)
{
  unsigned huge = 0;	/* Hints only: a huge address prefetches anything. */
  if (ev->type != MP_EV_ALLOC)
    mp_heap_prefetch(&p->heap, mp_live_key(ev->old_addr, &huge, 0));
  if (ev->type != MP_EV_FREE)
    mp_heap_prefetch(&p->heap, mp_live_key(ev->new_addr, &huge, 0));
  __builtin_prefetch(&p->cache[mp_resolve_slot(ev)]);
}

/*
** Stage 2: resolve the location, then start loading what accounting will
** touch: the location, the location that owns the old block, and the
** override pair of the two. The heap may change before stage 3 gets
** there; these are only hints.
*/
static int64_t prepare_event(struct mp_profile *p, const struct mp_event *ev)
{
  int64_t id = mp_resolve(p, ev);
  if (id < 0)
    return id;
  __builtin_prefetch(&p->locs[id]);
  /* Worth a second heap probe only when the locations are too many
  ** for the caches. */
  if (ev->type != MP_EV_ALLOC && ev->old_addr && p->nlocs > PEEK_MIN_LOCS) {
    struct mp_block b;
    unsigned huge = 0;
    if (mp_heap_peek(&p->heap, mp_live_key(ev->old_addr, &huge, 0), &b))
      __builtin_prefetch(&p->locs[b.loc]);
  }
  return id;
}

/* Stages 2 and 3 over evs[0..k), whose stage 1 is done; only the last
** may be a symbol event. Returns the memory events accounted, or -1:
** as mp_profile_read's, those that p->file_events counts. */
static int run_chunk(struct mp_profile *p, const struct mp_event *evs, int k)
{
  int64_t ids[BATCH];
  uint64_t before = p->file_events;
  int i;

  /* A symbol event is the last of a chunk: the snapshot state holds for
  ** all of it. */
  if (p->file_stacks || p->kinds || p->life || p->file.sample_mean ||
      p->in_snap || p->in_census || (k && mp_event_is_ext(evs[0].type))) {
    /* Stacks, kinds, lifetimes, estimates, the blocks of a snapshot: one
    ** at a time, as mp_profile_event knows them. */
    for (i = 0; i < k; i++)
      if (mp_profile_event(p, &evs[i]) < 0)
	return -1;
    return (int)(p->file_events - before);
  }

  for (i = 0; i < k; i++)
    if (!mp_event_is_symbol(evs[i].type) &&
	(ids[i] = prepare_event(p, &evs[i])) < 0)
      goto oom;
  for (i = 0; i < k; i++) {
    if (mp_event_is_symbol(evs[i].type)) {
      if (mp_profile_event(p, &evs[i]) < 0)
	goto oom;
      continue;
    }
    if (mp_live_account(p, &evs[i], (uint32_t)ids[i], 0) < 0)
      goto oom;
  }
  return (int)(p->file_events - before);
oom:
  p->oom = 1;
  return -1;
}

int64_t mp_profile_events(struct mp_profile *p, const struct mp_event *evs,
			  size_t count)
{
  int64_t total = 0;
  size_t at = 0;

  while (at < count) {
    int k, n;
    for (k = 0; k < BATCH && at + (size_t)k < count; k++) {
      if (mp_event_is_symbol(evs[at + (size_t)k].type)) {
	k++;
	break;
      }
      prefetch_event(p, &evs[at + (size_t)k]);
    }
    n = run_chunk(p, evs + at, k);
    if (n < 0)
      return -1;
    total += n;
    at += (size_t)k;
  }
  return total;
}

/*
** Location ids of the last location and of the internal one, within one
** call of run_fast: between two symbols a location's fields always
** resolve to the same id, and kept in registers they cost fewer
** instructions than mp_resolve_loc's memo in the profile, which a miss
** here skips for the cache.
**
** Lua functions, most events, have a memo of the raw bytes instead: the
** 8 after the header, a 7-byte prototype key and the first byte of the
** line, and the line's second byte if it has one. Bytes equal to those
** of an event already decoded decode the same, so a hit skips decoding
** and comparing the fields. It has RAW_SLOTS entries, chosen by the
** line's first byte: a loop whose body allocates on a few lines in turn
** (strings.lua: 9, 10 and 15) hits on every one. The other memo keeps
** the other sources, and Lua events with other keys or longer lines.
*/
#define RAW_SLOTS MP_FAST_RAW_SLOTS

struct fast_memo {
  uint64_t loc;		/* MP_NO_MEMO: none. */
  uint64_t line_src;	/* line | src << 40. */
  int64_t id, internal;	/* internal -1: none yet. */
  /* The collector's frees, most of all events, counted here and added
  ** to the internal location when run_fast returns (flush_internal). */
  uint64_t internal_frees, internal_free_bytes;
};

/* No location key is all ones (an 8-byte key's last byte is below 0x80),
** and no trace number is that big. */
#define MP_NO_MEMO (~(uint64_t)0)

/* fast_raw.tail when the line has one byte, and when the entry holds
** nothing: no byte equals either. */
#define RAW_ONE_BYTE 0x100u
#define RAW_NONE 0x200u

/* An entry is 16 bytes, so that its offset in the memo is bits of x
** (raw_entry). */
typedef char fast_raw_is_16_bytes[sizeof(struct mp_fast_raw) == 16 ? 1 : -1];

/* The raw memo's entry of the 8 bytes x: the low bits of the last, the
** line's first byte (that of a 7-byte key), so that the lines of a loop
** fall apart (no multiplication: this is on every Lua event). Its byte
** offset taken straight from those bits: a shift and a mask. The memo's
** own offset in p is added to that integer, not to p: as p->fast_raw + x
** the compiler hoists the memo's address out of the loop and spills it,
** where this way one address mode (disp(p, off)) holds all three. */
static inline struct mp_fast_raw *raw_entry(struct mp_profile *p,
					    uint64_t x)
{
  size_t off = ((size_t)(x >> 52) & ((RAW_SLOTS - 1) << 4)) +
	       offsetof(struct mp_profile, fast_raw);
  return (struct mp_fast_raw *)(void *)((char *)p + off);
}

/*
** Forget the raw memo (a symbol may rename what it knows). A hit tests
** only the 8 bytes when the line's first byte is its last (the top bit of
** the 8 clear: the entry's line had one byte too), so a forgotten entry
** has that bit set, and a tail no byte equals.
*/
static inline void raw_forget(struct mp_profile *p)
{
  int i;
  for (i = 0; i < RAW_SLOTS; i++) {
    p->fast_raw[i].raw = ~(uint64_t)0;
    p->fast_raw[i].tail = RAW_NONE;
  }
}

/* In how, for the loop only (no MP_LIVE_* bit): the profile knows the
** internal location's id already (p->internal_id), and the loop takes
** it once, so that the collector's frees do not test it. */
#define FAST_INTERNAL_KNOWN 0x40000000u

/* The object kind byte after the fields of an event whose header has
** LJM_EV_KIND (haskind, a constant), at *next: counted, and stepped
** over; LJM_KIND_NONE without one. */
static MP_LIVE_INLINE unsigned fast_objkind(struct mp_profile *p,
					    const uint8_t **next,
					    unsigned haskind, int kinds)
{
  unsigned objkind;
  if (!haskind)
    return LJM_KIND_NONE;
  objkind = **next;
  (*next)++;
  if (kinds)
    p->kinds->kind_events++;
  return objkind;
}

/* With MP_LIVE_LOC_FITS in how, location id may be used: below
** 2^MP_HEAP_LOC_BITS (the events of the others are left to the reader,
** and so never memoized). */
static inline int loc_fits(int64_t id, unsigned how)
{
  return !(how & MP_LIVE_LOC_FITS) || !(id >> MP_HEAP_LOC_BITS);
}

/* One event of header kind | src (| haskind: LJM_EV_KIND) at q: the byte
** after it, or NULL when mp_fast_location or mp_fast_fields leaves it to
** the reader, or when out of memory (p->oom). how (MP_LIVE_*) and kinds
** (count the object kinds, mp_kinds_fast) are constants. */
static MP_LIVE_INLINE const uint8_t *fast_one(struct mp_profile *p,
					      const uint8_t *q, unsigned kind,
					      unsigned src, unsigned haskind,
					      struct fast_memo *m,
					      uint64_t evno, unsigned how,
					      int kinds)
{
  int stacks = (how & MP_LIVE_STACKS) != 0;
  struct mp_fast_event e;
  struct mp_fast_raw *r = NULL;	/* Set whenever src is LJM_SRC_LFUNC. */
  int64_t id;
  const uint8_t *next;
  unsigned objkind;

  /* With stacks, a block made at a version-3 location needs a node of
  ** its own (mp_stacks_of_loc): the reader's way. Frees are as ever. */
  if (stacks && kind != LJM_EV_FREE)
    return NULL;

  if (src == LJM_SRC_LFUNC) {
    uint64_t x;
    memcpy(&x, q + 1, 8);
    r = raw_entry(p, x);
    if (__builtin_expect(x == r->raw, 1)) {
      if (__builtin_expect(!(x >> 63), 1)) {	/* A line of one byte, as the entry's. */
	id = r->id;
	next = q + 9;
	goto fields;
      }
      if (r->tail == q[9]) {
	id = r->id;
	next = q + 10;
	goto fields;
      }
    }
  }
  if (!(next = mp_fast_location(q + 1, kind, src, &e)))
    return NULL;
  if (src == LJM_SRC_LFUNC && (next - q == 9 || next - q == 10)) {
    /* Bytes the raw memo takes, and it missed: so would the other. */
    if ((id = mp_resolve_cached(p, src, e.loc, e.line)) < 0)
      goto oom;
    if (!loc_fits(id, how))
      return NULL;
    /* Not memoized: an id from 2^31, and a line of one byte after an
    ** 8-byte key (the 8 bytes' top bit clear, but 9 bytes to compare). */
    if (id > INT32_MAX || (next - q == 10 && !(q[8] & 0x80)))
      goto fields;
    memcpy(&r->raw, q + 1, 8);
    r->tail = next - q == 9 ? RAW_ONE_BYTE : q[9];
    r->id = (int32_t)id;
    goto fields;
  }
  if (src == LJM_SRC_INTERNAL && kind == LJM_EV_FREE) {
    if (how & FAST_INTERNAL_KNOWN)
      id = m->internal;
    else if ((id = m->internal) < 0 &&
	(id = m->internal = mp_resolve_loc(p, src, 0, 0)) < 0)
      goto oom;
    if (!(next = mp_fast_fields(next, kind, &e)))
      return NULL;
    m->internal_frees++;
    m->internal_free_bytes += e.old_size;
    /* A known internal location's id + 1 is the profile's: loaded, not
    ** computed, for the override memo. */
    if (mp_live_release1(p, (uint32_t)id,
			 (how & FAST_INTERNAL_KNOWN) ? p->internal_id
						     : (uint32_t)id + 1,
			 e.old_addr, e.old_size, 1, 0, how) < 0)
      goto oom;
    return next;
  }
  if (src == LJM_SRC_INTERNAL) {
    if (how & FAST_INTERNAL_KNOWN)
      id = m->internal;
    else if ((id = m->internal) < 0 &&
	(id = m->internal = mp_resolve_loc(p, src, 0, 0)) < 0)
      goto oom;
    if (!loc_fits(id, how))
      return NULL;
  } else if (e.loc == m->loc && (e.line | (uint64_t)src << 40) == m->line_src) {
    id = m->id;
  } else {
    if ((id = mp_resolve_cached(p, src, e.loc, e.line)) < 0)
      goto oom;
    if (!loc_fits(id, how))
      return NULL;
    m->loc = e.loc;
    m->line_src = e.line | (uint64_t)src << 40;
    m->id = id;
  }
fields:
  if (!(next = mp_fast_fields_as(next, kind, &e,
				 (how & MP_LIVE_SIZE_FITS)
				 ? ((uint64_t)1 << MP_HEAP_SIZE_BITS) - 1
				 : MP_FAST_SIZE_LIMIT)))
    return NULL;
  objkind = fast_objkind(p, &next, haskind, kinds);
  if (kinds && kind != LJM_EV_FREE &&
      mp_kinds_made(p, kind, objkind, (uint32_t)id, 0, e.new_size) < 0)
    goto oom;
  if (mp_live_account_fields(p, kind, (uint32_t)id, (uint32_t)id, e.old_addr,
			     e.old_size, e.new_addr, e.new_size, objkind, 0,
			     evno, how) < 0)
    return NULL;
  return next;
oom:
  p->oom = 1;
  return NULL;
}

/* Add the collector's frees counted in m to the internal location; 0, or
** -1 when out of memory. */
static int flush_internal(struct mp_profile *p, const struct fast_memo *m)
{
  struct mp_lrec *l;
  struct mp_lext *e;

  if (!m->internal_frees)
    return 0;
  l = &p->locs[m->internal];
  if (!mp_locs_has_ext(p, l))
    return -1;
  e = &p->exts[l->ext - 1];
  e->n_free += m->internal_frees;
  e->free_bytes += m->internal_free_bytes;
  return 0;
}

/* A prototype symbol at q (a module-loading profile has one every few
** dozen events): the byte after it, or NULL when mp_fast_proto_symbol
** leaves it to the reader or when out of memory (p->oom). */
static const uint8_t *fast_symbol(struct mp_profile *p, const uint8_t *q)
{
  uint64_t key, addr, line;
  const char *name;
  size_t name_len;
  const uint8_t *next = mp_fast_proto_symbol(q + 1, &key, &addr, &name,
					     &name_len, &line);

  if (next && mp_symbols_add_proto(p, key, addr, name, name_len,
				   (uint32_t)line) < 0) {
    p->oom = 1;
    return NULL;
  }
  return next;
}

/*
** A memory event of a stack location (header kind | LJM_SRC_STACK, with
** LJM_EV_KIND when haskind) at q, in a file with stacks: the byte after
** it, or NULL when left to the reader (a node not announced, long
** fields) or out of memory (p->oom).
*/
static MP_LIVE_INLINE const uint8_t *fast_stack(struct mp_profile *p,
						const uint8_t *q,
						unsigned kind,
						unsigned haskind,
						uint64_t evno, int kinds)
{
  struct mp_fast_event e;
  uint64_t local;
  uint32_t node, leaf;
  unsigned objkind;
  const uint8_t *next = mp_fast_uleb(q + 1, &local);

  if (!next || local - 1 >= p->nfnodes)
    return NULL;	/* The reader says what is wrong with it. */
  node = p->fnodes[local - 1];
  if (!(next = mp_fast_fields(next, kind, &e)))
    return NULL;
  objkind = fast_objkind(p, &next, haskind, kinds);
  leaf = p->snodes[node].leaf;
  if (kinds && kind != LJM_EV_FREE &&
      mp_kinds_made(p, kind, objkind, leaf, node, e.new_size) < 0) {
    p->oom = 1;
    return NULL;
  }
  mp_live_count_stack(p, kind, node, e.new_size);
  if (mp_live_account_fields(p, kind, leaf, node, e.old_addr, e.old_size,
			     e.new_addr, e.new_size, objkind, 0, evno,
			     MP_LIVE_STACKS) < 0)
    return NULL;
  return next;
}

/* The fewest bytes of an event the loop counts: a header, an address
** and a size (a free's, a collector's allocation's). */
#define FAST_EVENT_MIN 3

/*
** A point of the loop at or before which the timeline's next tick
** (p->tl_next) is due, or stop if it is not due before stop: events are
** FAST_EVENT_MIN bytes or more, so that event k + rem (rem = tl_next -
** k) ends at q + rem * FAST_EVENT_MIN or later.
*/
static inline const uint8_t *tick_stop(const struct mp_profile *p,
				       const uint8_t *q, const uint8_t *stop,
				       uint64_t k)
{
  uint64_t rem = p->tl_next > k ? p->tl_next - k : 0;
  if (rem > (uint64_t)(stop - q) / FAST_EVENT_MIN)
    return stop;
  return q + rem * FAST_EVENT_MIN;
}

/*
** q at or past *tstop (where the next timeline tick may be due), tested
** against *tstop in memory: the loop has no register to keep it in, and
** the compiler's own code loads it into one first, an instruction more
** on every event. On x86-64 one compare with a memory operand.
*/
static inline __attribute__((always_inline)) int
tick_due(const uint8_t *q, const uint8_t *const *tstop)
{
#if defined(__x86_64__) && defined(__GCC_ASM_FLAG_OUTPUTS__)
  int ae;
  __asm__("cmpq %1, %2" : "=@ccae"(ae) : "m"(*tstop), "r"(q));
  return ae;
#else
  return q >= *tstop;
#endif
}

/*
** Account the memory events at q straight from the reader's buffer, and
** define its prototype symbols, up to stop or the first event that
** mp_fast_location, mp_fast_fields or mp_fast_proto_symbol leaves to the
** reader. Returns
** where it stopped, or NULL when out of memory; p->file_events counts the
** events. how (MP_LIVE_*: the file's p->file_stacks, or a plain file)
** and kinds (mp_kinds_fast(p)) are constants: thirteen copies of the loop.
*/
static MP_LIVE_INLINE const uint8_t *run_fast_as(struct mp_profile *p,
						 const uint8_t *q,
						 const uint8_t *stop,
						 unsigned how, int kinds)
{
  struct fast_memo m;
  uint64_t k = p->file_events;	/* In a register, not p's. */
  const int stacks = (how & MP_LIVE_STACKS) != 0;
  /* The kind byte is the profile extension's: elsewhere the bit is an
  ** error, which the reader reports. */
  const int ext = (how & MP_LIVE_PLAIN) ? 0 : p->file_ext;
  /* A plain file's blocks are all of kind LJM_KIND_NONE: what it holds
  ** changes with the live bytes (mp_live.h, MP_LIVE_PLAIN). */
  const uint64_t live0 = p->file.live_bytes;

  const uint8_t *tstop;	/* Where the next timeline tick may be due. */

  memset(&m, 0, sizeof m);
  m.loc = MP_NO_MEMO;
  m.id = m.internal = -1;
  if (how & FAST_INTERNAL_KNOWN)
    m.internal = p->internal_id - 1;
  raw_forget(p);
  if (q >= stop)
    goto out;
  tstop = tick_stop(p, q, stop, k);
  for (;;) {
    const uint8_t *next;
    /* The commonest event of a plain file or one with stacks, the
    ** collector's free, tested before the jump table: a compare in place
    ** of its range check and indirect jump. */
    if ((how & (MP_LIVE_PLAIN | MP_LIVE_STACKS)) &&
	*q == (LJM_EV_FREE | LJM_SRC_INTERNAL))
      next = fast_one(p, q, LJM_EV_FREE, LJM_SRC_INTERNAL, 0, &m, k + 1,
		      how, kinds);
    /* The next commonest of a plain file, a Lua function's allocation:
    ** the jump table costs it twice the instructions of a compare. */
    else if ((how & MP_LIVE_PLAIN) && *q == (LJM_EV_ALLOC | LJM_SRC_LFUNC))
      next = fast_one(p, q, LJM_EV_ALLOC, LJM_SRC_LFUNC, 0, &m, k + 1,
		      how, kinds);
    else
    switch (*q) {
#define FAST_CASE(kind, src) \
    case (kind) | (src): \
      next = fast_one(p, q, (kind), (src), 0, &m, k + 1, how, kinds); \
      break;
    MP_FAST_HEADERS(FAST_CASE)
#undef FAST_CASE
#define KIND_CASE(kind, src) \
    case (kind) | (src) | LJM_EV_KIND: \
      next = ext ? fast_one(p, q, (kind), (src), 1, &m, k + 1, how, \
			    kinds) : NULL; \
      break;
    MP_FAST_HEADERS_MADE(KIND_CASE)
#undef KIND_CASE
#define STACK_CASE(kind, src) \
    case (kind) | (src): \
      next = stacks ? fast_stack(p, q, (kind), 0, k + 1, kinds) : NULL; \
      break;
    MP_FAST_HEADERS_SRC(STACK_CASE, LJM_SRC_STACK)
#undef STACK_CASE
#define STACK_KIND_CASE(kind, src) \
    case (kind) | (src) | LJM_EV_KIND: \
      next = stacks && ext ? fast_stack(p, q, (kind), 1, k + 1, kinds) \
			   : NULL; \
      break;
    MP_FAST_HEADERS_MADE_SRC(STACK_KIND_CASE, LJM_SRC_STACK)
#undef STACK_KIND_CASE
    case LJM_EV_SYMTAB | LJM_SRC_LFUNC:
      if (!(next = fast_symbol(p, q)))
	goto out;
      /* The symbol may rename the last location. */
      m.loc = MP_NO_MEMO;
      raw_forget(p);
      q = next;
      goto check;
    default:
      next = NULL;	/* Other symbols, the end, bad bits: the reader's. */
      break;
    }
    if (!next)
      break;
    k++;
    q = next;
  check:
    /* One compare an event for both the end and the timeline. */
    if (tick_due(q, &tstop)) {
      mp_timeline_tick(p, k);
      if (q >= stop)
	break;
      tstop = tick_stop(p, q, stop, k);
    }
  }
out:
  if (how & MP_LIVE_PLAIN)
    p->kind_held[LJM_KIND_NONE] += p->file.live_bytes - live0;
  if (flush_internal(p, &m) < 0)
    p->oom = 1;
  p->file_events = k;
  return p->oom ? NULL : q;
}

/* The copies of the loop, each a function of its own: the compiler's
** limits on inlining into one function would otherwise leave the
** decoders and the cache lookup out of line in all of them. */
#define RUN_FAST_COPY(name, how, kinds) \
  static __attribute__((noinline)) const uint8_t * \
  name(struct mp_profile *p, const uint8_t *q, const uint8_t *stop) \
  { \
    return run_fast_as(p, q, stop, (how), (kinds)); \
  }
#define PLAIN_FITS (MP_LIVE_PLAIN | MP_LIVE_LOC_FITS | MP_LIVE_SIZE_FITS)
RUN_FAST_COPY(run_fast_plain, PLAIN_FITS, 0)
RUN_FAST_COPY(run_fast_plain_keys, PLAIN_FITS | MP_LIVE_OV_KEYS, 0)
RUN_FAST_COPY(run_fast_plain_nov, PLAIN_FITS | MP_LIVE_OV_NONE, 0)
#define PLAIN_INT (PLAIN_FITS | FAST_INTERNAL_KNOWN)
RUN_FAST_COPY(run_fast_plain_int, PLAIN_INT, 0)
RUN_FAST_COPY(run_fast_plain_keys_int, PLAIN_INT | MP_LIVE_OV_KEYS, 0)
RUN_FAST_COPY(run_fast_plain_nov_int, PLAIN_INT | MP_LIVE_OV_NONE, 0)
#undef PLAIN_INT
#undef PLAIN_FITS
RUN_FAST_COPY(run_fast_any, 0, 0)
RUN_FAST_COPY(run_fast_stacks, MP_LIVE_STACKS, 0)
RUN_FAST_COPY(run_fast_stacks_keys, MP_LIVE_STACKS | MP_LIVE_OV_KEYS, 0)
RUN_FAST_COPY(run_fast_stacks_int, MP_LIVE_STACKS | FAST_INTERNAL_KNOWN, 0)
RUN_FAST_COPY(run_fast_stacks_keys_int,
	      MP_LIVE_STACKS | MP_LIVE_OV_KEYS | FAST_INTERNAL_KNOWN, 0)
RUN_FAST_COPY(run_fast_kinds, 0, 1)
RUN_FAST_COPY(run_fast_stacks_kinds, MP_LIVE_STACKS, 1)
#undef RUN_FAST_COPY

static const uint8_t *run_fast(struct mp_profile *p, const uint8_t *q,
			       const uint8_t *stop)
{
  /* Estimates (few events), the blocks of a snapshot (the start one's
  ** are held, a later one's a census: neither is an event), lifetimes
  ** and kinds under a filter: mp_profile_event's way. */
  if (p->file.sample_mean || p->in_snap || p->in_census || p->life ||
      (mp_kinds_on(p) && !mp_kinds_fast(p)))
    return q;
  if (mp_kinds_on(p))
    return p->file_stacks ? run_fast_stacks_kinds(p, q, stop)
			  : run_fast_kinds(p, q, stop);
  if (p->file_stacks && p->internal_id && !p->no_locations)
    return p->ov_mode == MP_OV_KEYS ? run_fast_stacks_keys_int(p, q, stop)
				    : run_fast_stacks_int(p, q, stop);
  if (p->file_stacks)
    return p->ov_mode == MP_OV_KEYS ? run_fast_stacks_keys(p, q, stop)
				    : run_fast_stacks(p, q, stop);
  /* Tested once a window, not per event: a file without the extension
  ** whose reading asks for no peak counts and no moments pays for no
  ** kinds and no peak epochs. */
  if (!p->file_ext && !p->pk_on && !p->mo_take && p->internal_id &&
      !p->no_locations)	/* After the first window, most often. */
    return p->ov_mode == MP_OV_KEYS ? run_fast_plain_keys_int(p, q, stop)
	   : p->ov_mode == MP_OV_NONE ? run_fast_plain_nov_int(p, q, stop)
	   : run_fast_plain_int(p, q, stop);
  if (!p->file_ext && !p->pk_on && !p->mo_take)
    return p->ov_mode == MP_OV_KEYS ? run_fast_plain_keys(p, q, stop)
	   : p->ov_mode == MP_OV_NONE ? run_fast_plain_nov(p, q, stop)
	   : run_fast_plain(p, q, stop);
  return run_fast_any(p, q, stop);
}

/*
** One thread, no event structs for the common events: a thread hand-off
** and a struct per event cost more instructions than decoding itself.
** Whatever run_fast leaves (other symbols, the buffer's last bytes, the
** end, errors) goes through mp_reader_next one event at a time.
*/
enum mp_status mp_profile_read(struct mp_profile *p, struct mp_reader *r,
			       uint64_t *events,
			       void (*tick)(void *ctx, uint64_t offset),
			       void *ctx)
{
  enum mp_status st;
  uint64_t start = p->file_events;

  for (;;) {
    const uint8_t *end, *q = mp_reader_window(r, &end);
    struct mp_event ev;
    if (mp_reader_extension(r) == LJM_EXT_PROFILE && !p->file_ext &&
	mp_stacks_begin_file(p) < 0) {
      st = MP_ERROR;
      break;
    }
    if (q && end - q > MP_FAST_MARGIN) {
      uint64_t before = p->file_events - start;
      q = run_fast(p, q, end - MP_FAST_MARGIN);
      if (!q) {
	st = MP_ERROR;
	break;
      }
      mp_reader_consume(r, q);
      if (tick && (before >> 20) != ((p->file_events - start) >> 20))
	tick(ctx, mp_reader_offset(r));
    }
    st = mp_reader_next(r, &ev);
    if (st != MP_OK)
      break;
    if (mp_profile_event(p, &ev) < 0) {
      st = MP_ERROR;
      break;
    }
  }
  *events = p->file_events - start;
  return st;
}
