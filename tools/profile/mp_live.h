/*
** Live blocks: a memory event's counters at its location, the blocks it
** creates and releases in the live heap (and so the bytes each location
** still holds), the file's live bytes and its peak. Inline: this is the
** inner loop of the read driver.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef MP_LIVE_H
#define MP_LIVE_H

#include "mp_fast.h"
#include "mp_profile_int.h"

/* Inlined whole into the read driver, which calls them with a constant
** event type and so gets the code of that type only. */
#define MP_LIVE_INLINE inline __attribute__((always_inline))

/*
** How a file is read, the `how` of the functions below (a constant at
** every call). MP_LIVE_STACKS: the heap's owners are stack nodes.
** MP_LIVE_PLAIN: a file without the profile extension, read with no
** peak counts (MP_PROFILE_PEAK) and no moments, so that every block is
** of kind LJM_KIND_NONE and nothing looks at the bytes held by kind
** before the caller's run of events ends: no per-event kind or peak
** work, and the caller adds the run's change of the live bytes to
** kind_held[LJM_KIND_NONE] once (mp_read.c).
*/
#define MP_LIVE_STACKS 1u
#define MP_LIVE_PLAIN 2u
/* The profile's override pairs are known to be bare keys (MP_OV_KEYS),
** or none (MP_OV_NONE): a free tests no mode. */
#define MP_LIVE_OV_KEYS 4u
#define MP_LIVE_OV_NONE 8u
/* Every owner is below 2^MP_HEAP_LOC_BITS (the plain read loop's, which
** leaves the events of other locations to the reader): not tested. */
#define MP_LIVE_LOC_FITS 16u
/* Every block made is below 2^MP_HEAP_SIZE_BITS bytes (the plain read
** loop's, which leaves the larger ones to the reader): not tested. */
#define MP_LIVE_SIZE_FITS 32u

/*
** The location of a block's owner in the heap, which leaves it: in a
** file with stacks (stacks, a constant at every call) the owner is a
** stack node, which holds the bytes too and names the location.
*/
static MP_LIVE_INLINE uint32_t mp_live_disown(struct mp_profile *p,
					      uint32_t owner, uint64_t size,
					      int stacks)
{
  if (stacks) {
    struct mp_scount *c = &p->scounts[owner];
    c->held_bytes -= size;
    c->held_blocks--;
    return p->snodes[owner].leaf;
  }
  return owner;
}

/*
** The held counts of owner (and its location) are about to change: with
** MP_PROFILE_PEAK, keep them as they were at the file's peak, once per
** new peak (mp_peak.c). 0, or -1 when out of memory.
*/
static MP_LIVE_INLINE int mp_live_peak(struct mp_profile *p, uint32_t owner,
				       unsigned how)
{
  int stacks = (how & MP_LIVE_STACKS) != 0;
  uint32_t id;
  if ((how & MP_LIVE_PLAIN) || !p->pk_on)
    return 0;
  id = stacks ? p->snodes[owner].leaf : owner;
  if (id < p->npk_locs && p->pk_locs[id].epoch == p->pk_epoch &&
      (!stacks || (owner < p->npk_nodes &&
		   p->pk_nodes[owner].epoch == p->pk_epoch)))
    return 0;
  return mp_peak_save(p, owner, stacks);
}

/* The bytes of kind held change by add - sub: with MP_PROFILE_PEAK, kept
** as they were at the file's peak, once per new peak (mp_peak.c). */
static MP_LIVE_INLINE void mp_live_kind_held(struct mp_profile *p,
					     unsigned kind, uint64_t add,
					     uint64_t sub, unsigned how)
{
  if (how & MP_LIVE_PLAIN)
    return;	/* The caller's, once a run ends. */
  kind &= MP_NKINDS - 1;
  if (p->pk_on && p->kind_pk[kind].epoch != p->pk_epoch) {
    p->kind_pk[kind].epoch = p->pk_epoch;
    p->kind_pk[kind].bytes = p->kind_held[kind];
  }
  p->kind_held[kind] += add - sub;
}

/* A temporary allocation: a block of size bytes owned by owner (not yet
** disowned), of location id orig, freed by the event right after the one
** that made it. The block's fields by value: a pointer to it would keep
** the caller's block in memory on every release. */
static inline int mp_live_temporary(struct mp_profile *p, uint32_t orig,
				    uint32_t owner, uint64_t size, int stacks)
{
  if (orig >= p->ntemps && mp_live_grow_temps(p, orig) < 0)
    return -1;
  p->temps[orig].count++;
  p->temps[orig].bytes += size;
  if (stacks) {
    p->scounts[owner].temporary++;
    p->scounts[owner].temporary_bytes += size;
  }
  return 0;
}

/*
** A block leaves the heap (free, or the old half of a realloc) at
** location at (at1: at + 1, for the override memo). Every
** memory event comes here or to mp_live_create first: a free of the
** block that the event before made is a temporary allocation.
*/
static MP_LIVE_INLINE int mp_live_release1(struct mp_profile *p,
					   uint32_t at, uint32_t at1,
					   uint64_t addr, uint64_t size,
					   int is_free, int huge,
					   unsigned how)
{
  int stacks = (how & MP_LIVE_STACKS) != 0;
  struct mp_block b;
  struct mp_lrec *orig;
  uint32_t orig_id;

  if (addr == 0) {
    p->fresh_block = 0;
    return 0;	/* free(NULL), realloc(NULL, n): nothing was held. */
  }
  if (!(huge ? mp_heap_take_huge(&p->heap, addr, &b)
	      : mp_heap_take(&p->heap, addr, &b))) {
    p->file.untracked_frees++;
    p->file.untracked_bytes += size;
    p->fresh_block = 0;
    return 0;
  }
  /* Addresses without a key are rare: not followed (fresh_block 0). */
  if (is_free && !huge && addr == p->fresh_block &&
      mp_live_temporary(p, stacks ? p->snodes[b.loc].leaf : b.loc, b.loc,
			b.size, stacks) < 0)
    return -1;
  p->fresh_block = 0;
  if (mp_live_peak(p, b.loc, how) < 0)
    return -1;
  mp_live_kind_held(p, b.kind, 0, b.size, how);
  orig_id = mp_live_disown(p, b.loc, b.size, stacks);
  orig = &p->locs[orig_id];
  orig->released++;
  orig->held_more -= b.size;
  p->file.live_bytes -= b.size;
  if (how & MP_LIVE_OV_NONE)
    return 0;
  if (how & MP_LIVE_OV_KEYS)
    return mp_overrides_note_keys1(p, is_free, at1, orig, orig_id);
  return mp_overrides_note(p, is_free, at, orig, orig_id, b.size);
}

/* mp_live_release1 of location at, whose id + 1 (at1) the caller does
** not keep. */
static MP_LIVE_INLINE int mp_live_release(struct mp_profile *p, uint32_t at,
				  uint64_t addr, uint64_t size, int is_free,
				  int huge, unsigned how)
{
  return mp_live_release1(p, at, at + 1, addr, size, is_free, huge, how);
}

/* A block enters the heap (alloc, or the new half of a realloc), owned
** by location at, or with stacks by stack node owner (whose leaf is at),
** made as an object of kind (LJM_KIND_*). alloc (a constant): the block
** is an allocation's, counted here (n_alloc, alloc_bytes), which counts
** the block made and held too (mp_lrec): after the peak's save. */
static MP_LIVE_INLINE int mp_live_create(struct mp_profile *p, uint32_t at,
				 uint32_t owner, uint64_t addr, uint64_t size,
				 unsigned kind, int huge, int alloc,
				 unsigned how)
{
  int stacks = (how & MP_LIVE_STACKS) != 0;
  struct mp_block old = { 0, 0, 0 };	/* Set when rc is 1. */
  struct mp_lrec *l;
  int rc;

  p->fresh_block = huge ? 0 : addr;
  if (addr == 0) {
    /* A failed allocation makes and holds nothing. */
    if (alloc) {
      l = &p->locs[at];
      l->n_alloc++;
      l->alloc_bytes += size;
      l->created_more--;
      l->held_more -= size;
    }
    return 0;
  }
  rc = huge ? mp_heap_put_huge(&p->heap, addr, size, owner, kind, &old)
	    : mp_heap_put_as(&p->heap, addr, size, owner, kind, &old,
			     (how & MP_LIVE_LOC_FITS) != 0,
			     (how & MP_LIVE_SIZE_FITS) != 0);
  if (rc < 0 || mp_live_peak(p, owner, how) < 0)
    return -1;
  mp_live_kind_held(p, kind, size, 0, how);
  if (stacks) {
    struct mp_scount *c = &p->scounts[owner];
    c->held_bytes += size;
    c->held_blocks++;
  }
  if (rc == 1) {
    /* The stream never freed the previous block here: drop it. */
    struct mp_lrec *o;
    if (mp_live_peak(p, old.loc, how) < 0)
      return -1;
    mp_live_kind_held(p, old.kind, 0, old.size, how);
    o = &p->locs[mp_live_disown(p, old.loc, old.size, stacks)];
    o->released++;
    o->held_more -= old.size;
    p->file.live_bytes -= old.size;
    p->file.overwritten++;
  }
  l = &p->locs[at];
  if (alloc) {
    l->n_alloc++;
    l->alloc_bytes += size;
  } else {
    l->created_more++;
    l->held_more += size;
  }
  p->file.live_bytes += size;
  return 0;
}

/* mp_live_account_fields: which addresses have no key. */
#define MP_LIVE_OLD_HUGE 1u
#define MP_LIVE_NEW_HUGE 2u

/*
** Account a memory event of type (MP_EV_ALLOC, _FREE or _REALLOC) whose
** location is already resolved to id, from its fields: the read driver
** calls it with values decoded straight from the stream. The addresses
** are keys (mp_fast_key), or the addresses themselves for those that
** huge (MP_LIVE_*_HUGE) says have none. evno is the event's number in
** the file, from 1 (only for the peak). The counts by kind are the
** locations' (summed by mp_profile_done_reading). With MP_LIVE_STACKS in
** how (MP_LIVE_*, a constant), owner is the block's stack node, else
** equal to id. objkind
** is the object kind of the block made (LJM_KIND_NONE when none said).
*/
static MP_LIVE_INLINE int mp_live_account_fields(struct mp_profile *p, unsigned type,
					 uint32_t id, uint32_t owner,
					 uint64_t old_addr,
					 uint64_t old_size, uint64_t new_addr,
					 uint64_t new_size, unsigned objkind,
					 unsigned huge, uint64_t evno,
					 unsigned how)
{
  struct mp_lrec *l = &p->locs[id];
  struct mp_lext *e;

  switch (type) {
  case MP_EV_ALLOC:
    if (mp_live_create(p, id, owner, new_addr, new_size, objkind,
		       (huge & MP_LIVE_NEW_HUGE) != 0, 1, how) < 0)
      goto oom;
    break;
  case MP_EV_FREE:
    if (!mp_locs_has_ext(p, l))
      goto oom;
    e = &p->exts[l->ext - 1];
    e->n_free++;
    e->free_bytes += old_size;
    if (mp_live_release(p, id, old_addr, old_size, 1,
			(huge & MP_LIVE_OLD_HUGE) != 0, how) < 0)
      goto oom;
    return 0;	/* The heap shrank: no new peak. */
  case MP_EV_REALLOC:
    if (!mp_locs_has_ext(p, l))
      goto oom;
    e = &p->exts[l->ext - 1];
    e->n_realloc++;
    e->realloc_new += new_size;
    e->realloc_old += old_size;
    if (mp_live_release(p, id, old_addr, old_size, 0,
			(huge & MP_LIVE_OLD_HUGE) != 0, how) < 0 ||
	mp_live_create(p, id, owner, new_addr, new_size, objkind,
		       (huge & MP_LIVE_NEW_HUGE) != 0, 0, how) < 0)
      goto oom;
    break;
  default:
    break;
  }
  if (p->file.live_bytes > p->file.peak_bytes) {
    p->file.peak_bytes = p->file.live_bytes;
    p->file.peak_event = evno;
    p->peak_blocks = mp_live_blocks(p);
    p->peak_time = p->file_time;
    p->peak_rss = p->rss.last;
    p->peak_mapped = p->mapped.last;
    p->pk_epoch++;	/* What changes from now on was so at the peak. */
  }
  return 0;
oom:
  p->oom = 1;
  return -1;
}

/* The key of an address for the live heap, or the address when it has
** none (*huge set). */
static inline uint64_t mp_live_key(uint64_t addr, unsigned *huge,
				   unsigned flag)
{
  if (addr < MP_FAST_KEY_LIMIT)
    return mp_fast_key(addr);
  *huge |= flag;
  return addr;
}

/* Count an allocation or reallocation at stack node: its own figures. */
static MP_LIVE_INLINE void mp_live_count_stack(struct mp_profile *p,
					       unsigned type, uint32_t node,
					       uint64_t new_size)
{
  if (type == MP_EV_ALLOC) {
    p->scounts[node].n_alloc++;
    p->scounts[node].alloc_bytes += new_size;
  } else if (type == MP_EV_REALLOC) {
    p->scounts[node].n_realloc++;
    p->scounts[node].realloc_bytes += new_size;
  }
}

/* Account a memory event whose location is already resolved to id. In a
** file with stacks, node is the global stack node that owns what it
** creates (0 for a free, which owns nothing). */
static inline int mp_live_account(struct mp_profile *p,
				  const struct mp_event *ev, uint32_t id,
				  uint32_t node)
{
  unsigned huge = 0;
  uint64_t old_key = mp_live_key(ev->old_addr, &huge, MP_LIVE_OLD_HUGE);
  uint64_t new_key = mp_live_key(ev->new_addr, &huge, MP_LIVE_NEW_HUGE);
  unsigned objkind = ev->objkind >= 0 ? (unsigned)ev->objkind
				      : LJM_KIND_NONE;
  int rc;
  if (p->file_stacks) {
    mp_live_count_stack(p, ev->type, node, ev->new_size);
    rc = mp_live_account_fields(p, ev->type, id, node, old_key, ev->old_size,
				new_key, ev->new_size, objkind, huge,
				p->file_events + 1, MP_LIVE_STACKS);
  } else {
    rc = mp_live_account_fields(p, ev->type, id, id, old_key, ev->old_size,
				new_key, ev->new_size, objkind, huge,
				p->file_events + 1, 0);
  }
  if (rc == 0) {
    p->file_events++;	/* Counted once accounted, as the read driver's. */
    mp_timeline_tick(p, p->file_events);
  }
  return rc;
}

#endif
