/*
** The batched read driver: events in small batches whose heap slots
** and cache entries are prefetched first, since on big heaps the parser
** waits for memory more than it computes.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include "mp_profile_int.h"
#include "mp_live.h"

#define BATCH 16
#define PEEK_MIN_LOCS 65536

/* Stage 1: start loading the heap slots and the location cache entry. */
static void prefetch_event(struct mp_profile *p, const struct mp_event *ev)
{
  if (ev->type != MP_EV_ALLOC)
    mp_heap_prefetch(&p->heap, ev->old_addr);
  if (ev->type != MP_EV_FREE)
    mp_heap_prefetch(&p->heap, ev->new_addr);
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
    if (mp_heap_peek(&p->heap, ev->old_addr, &b))
      __builtin_prefetch(&p->locs[b.loc]);
  }
  return id;
}

/* Stages 2 and 3 over evs[0..k), whose stage 1 is done; only the last
** may be a symbol event. Returns the memory events accounted, or -1. */
static int run_chunk(struct mp_profile *p, const struct mp_event *evs, int k)
{
  int64_t ids[BATCH];
  int i, n = 0;

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
    if (mp_live_account(p, &evs[i], (uint32_t)ids[i]) < 0)
      goto oom;
    n++;
  }
  return n;
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

enum mp_status mp_profile_read(struct mp_profile *p, struct mp_reader *r,
			       uint64_t *events,
			       void (*tick)(void *ctx, uint64_t offset),
			       void *ctx)
{
  struct mp_event batch[BATCH];
  enum mp_status st = MP_OK;
  uint64_t n = 0;
  int k, done;

  while (st == MP_OK) {
    /* Symbol events end a batch: their names live in the reader's
    ** buffer only until the next read, and they change resolution. */
    for (k = 0; k < BATCH; k++) {
      st = mp_reader_next(r, &batch[k]);
      if (st != MP_OK)
	break;
      if (mp_event_is_symbol(batch[k].type)) {
	k++;
	break;
      }
      prefetch_event(p, &batch[k]);
    }
    done = run_chunk(p, batch, k);
    if (done < 0) {
      *events = n;
      return MP_ERROR;
    }
    if (tick && (n >> 20) != ((n + (uint64_t)done) >> 20))
      tick(ctx, mp_reader_offset(r));
    n += (uint64_t)done;
  }
  *events = n;
  return st;
}
