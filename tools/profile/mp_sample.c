/*
** Sampled streams (INFO SAMPLE, mean m > 0): every figure becomes an
** estimate. A sampled block of s bytes was recorded with probability
** 1 - exp(-s/m) (the writer's exponential byte counter), so it stands for
** 1/(1 - exp(-s/m)) blocks and s/(1 - exp(-s/m)) bytes: the unbiased
** (Horvitz-Thompson) weights. Done here, once, as the events come in:
** the live heap holds each sampled block at its estimated bytes, so held
** bytes, live bytes, the peak, the timeline and frees (which release what
** the block holds) follow; the block counts get the rest of the weight.
** A block's weight in blocks is kept beside the heap, by address, as an
** integer: the fractions are carried from one block to the next, so that
** the totals keep them.
**
** ljmprof's writer writes a reallocation of a sampled block as the free
** of the old one (the new block is the counter's to pick again). A
** stream that has one (another writer's) gets, as the counter skipped
** it while its samples estimate the reallocations of the other blocks
** (written as allocations of the new block), its own bytes, once, in
** the reallocation figures; the block it makes is held at its new
** estimate.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <math.h>

#include "mp_live.h"
#include "mp_sample.h"

void mp_sample_info(struct mp_profile *p, uint64_t mean)
{
  p->file.sample_mean = mean;
}

double mp_sample_weight(uint64_t size, uint64_t mean)
{
  return 1.0 / -expm1(-(double)size / (double)mean);
}

/* The estimated bytes and (integer) blocks of a sampled block of s. */
static void weigh(struct mp_profile *p, uint64_t s, uint64_t *bytes,
		  uint64_t *blocks)
{
  double w, c;
  if (s == 0) {	/* No bytes, never sampled by the counter: one block. */
    *bytes = 0;
    *blocks = 1;
    return;
  }
  w = mp_sample_weight(s, p->file.sample_mean);
  *bytes = (uint64_t)llround((double)s * w);
  c = floor(w + p->sample_carry);
  p->sample_carry += w - c;
  *blocks = (uint64_t)c;
}

/* The owner and estimated blocks of the live block at addr (a heap key
** or a huge address), taken out of the side map; 0 if not tracked. */
static int take(struct mp_profile *p, uint64_t key, int huge, uint32_t *owner,
		uint64_t *bytes, uint64_t *blocks)
{
  struct mp_block b;
  struct mp_map_entry *e;
  if (huge) {
    if (!(e = mp_map_find(&p->heap.huge, key)))
      return 0;
    b.size = e->a;
    b.loc = (uint32_t)e->b;
  } else if (!mp_heap_peek(&p->heap, key, &b)) {
    return 0;
  }
  *owner = b.loc;
  *bytes = b.size;
  *blocks = 1;
  if ((e = mp_map_find(&p->sample_blocks, key ^ (uint64_t)huge << 63))) {
    *blocks = e->a;
    mp_map_remove(&p->sample_blocks, e);
  }
  return 1;
}

int mp_sample_account(struct mp_profile *p, const struct mp_event *ev,
		      uint32_t id, uint32_t node)
{
  struct mp_event e = *ev;
  unsigned huge = 0;
  uint64_t okey = mp_live_key(ev->old_addr, &huge, MP_LIVE_OLD_HUGE);
  uint64_t nkey = mp_live_key(ev->new_addr, &huge, MP_LIVE_NEW_HUGE);
  uint64_t oblocks = 1, nblocks = 1, obytes;
  uint32_t owner = 0;
  int old = 0, stacks = p->file_stacks;
  struct mp_lrec *l;
  struct mp_lext *x;

  if (ev->type != MP_EV_ALLOC && ev->old_addr &&
      (old = take(p, okey, (huge & MP_LIVE_OLD_HUGE) != 0, &owner, &obytes,
		  &oblocks)))
    e.old_size = obytes;	/* What it stood for. */
  if (ev->type != MP_EV_FREE && ev->new_addr) {
    struct mp_map_entry *m;
    int added;
    weigh(p, ev->new_size, &e.new_size, &nblocks);
    if (!(m = mp_map_insert(&p->sample_blocks,
			    nkey ^ (uint64_t)((huge & MP_LIVE_NEW_HUGE) != 0)
				   << 63, &added)))
      goto oom;
    m->a = nblocks;
  }
  /* Before the accounting, which may take a peak or a timeline point. */
  if (old)
    p->sample_extra -= oblocks - 1;
  if (ev->type != MP_EV_FREE && ev->new_addr)
    p->sample_extra += nblocks - 1;
  /* "Freed by the very next event" says nothing when the events between
  ** were not sampled: no temporary allocations. */
  p->fresh_block = 0;
  if (mp_live_account(p, &e, id, node) < 0)
    return -1;
  l = &p->locs[id];
  if (ev->type == MP_EV_REALLOC) {
    /* The counter never saw it (it follows a sampled block, and the
    ** counter estimates the reallocations of the others): its own bytes,
    ** once. The heap holds the new block at its estimate, as any. */
    x = &p->exts[l->ext - 1];
    x->realloc_new -= e.new_size - ev->new_size;
    x->realloc_old -= e.old_size - ev->old_size;
    if (stacks)
      p->scounts[node].realloc_bytes -= e.new_size - ev->new_size;
  }
  /* The blocks beyond the one that mp_live_account counted. */
  if (ev->type != MP_EV_FREE && ev->new_addr) {
    if (ev->type == MP_EV_ALLOC)
      l->n_alloc += nblocks - 1;	/* And so the blocks made. */
    else
      l->created_more += nblocks - 1;
    if (stacks) {
      struct mp_scount *c = &p->scounts[node];
      if (ev->type == MP_EV_ALLOC)
	c->n_alloc += nblocks - 1;
      c->held_blocks += nblocks - 1;
    }
  }
  if (old) {
    uint32_t orig = stacks ? p->snodes[owner].leaf : owner;
    if (ev->type == MP_EV_FREE)
      p->exts[l->ext - 1].n_free += oblocks - 1;
    p->locs[orig].released += oblocks - 1;
    if (stacks)
      p->scounts[owner].held_blocks -= oblocks - 1;
  }
  return 0;
oom:
  p->oom = 1;
  return -1;
}
