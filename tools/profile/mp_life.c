/*
** Block lifetimes and maxima (mp_profile.h, "lifetimes"), for the DHAT
** format: per location and per stack node, the blocks and bytes made,
** the sum of their lifetimes, the most bytes live at once, and what was
** live at the file's peak and at its end, all in the one reading pass.
**
** Live at the peak is a lazy snapshot: a point's live figures are saved
** just before the first change after each new peak (the profile's
** peak_event tells when there was one), so the peak costs O(1) per event
** however many points there are; at the end of the file, a point saved
** since the last peak was worth its saved figures then, any other its
** current ones.
**
** The blocks live in this file are kept here, beside the heap: address
** -> a record with the owner and the birth (event number and time),
** which the heap's packed slots have no room for; only a profile with
** MP_PROFILE_LIFETIMES pays for them.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_profile_int.h"

/* A point's figures while reading; those of mp_life_counts, plus the
** file's own. */
struct mp_lpoint {
  struct mp_life_counts c;
  uint64_t live_bytes, live_blocks;	/* In the file being read. */
  uint64_t saved_bytes, saved_blocks;	/* At the file's peak... */
  uint64_t saved_peak;		/* ...if this is its peak_event. */
};

struct mp_lblock {
  uint64_t size;
  uint64_t born_ev, born_ns;	/* Event number in the file; time. */
  uint32_t loc, node;		/* Owners: location, stack node (0). */
};

struct mp_lifes {
  struct mp_lpoint *locs, *nodes;	/* By location id, by node id. */
  uint32_t nlocs, nnodes;		/* Allocated. */
  struct mp_map live;		/* Address -> a: index + 1 into blocks. */
  struct mp_lblock *blocks;
  uint32_t nblocks, blocks_cap;
  uint32_t *free_list;		/* Indexes of records not in use. */
  uint32_t nfree;
  struct mp_life_summary s;
  uint64_t best_peak;		/* The largest file peak so far. */
};

int mp_life_new(struct mp_profile *p)
{
  struct mp_lifes *l = calloc(1, sizeof(*l));
  if (!l)
    return -1;
  mp_map_init(&l->live);
  p->life = l;
  return 0;
}

void mp_life_free(struct mp_profile *p)
{
  struct mp_lifes *l = p->life;
  if (!l)
    return;
  mp_map_free(&l->live);
  free(l->locs);
  free(l->nodes);
  free(l->blocks);
  free(l->free_list);
  free(l);
  p->life = NULL;
}

/* The point at index id of *a (n allocated), grown to hold it. */
static struct mp_lpoint *point(struct mp_lpoint **a, uint32_t *n,
			       uint32_t id)
{
  if (id >= *n) {
    uint32_t m = *n ? *n : 64;
    struct mp_lpoint *g;
    while (m <= id)
      m = m > UINT32_MAX / 2 ? UINT32_MAX : 2 * m;
    if (m <= id || !(g = realloc(*a, (size_t)m * sizeof(*g))))
      return NULL;
    memset(g + *n, 0, (size_t)(m - *n) * sizeof(*g));
    *a = g;
    *n = m;
  }
  return &(*a)[id];
}

/* Before pt's live figures change: keep them if they were the peak's. */
static void save(const struct mp_profile *p, struct mp_lpoint *pt)
{
  if (pt->saved_peak != p->file.peak_event) {
    pt->saved_peak = p->file.peak_event;
    pt->saved_bytes = pt->live_bytes;
    pt->saved_blocks = pt->live_blocks;
  }
}

static void grow(const struct mp_profile *p, struct mp_lpoint *pt,
		 uint64_t size)
{
  save(p, pt);
  pt->c.tb += size;
  pt->c.tbk++;
  pt->live_bytes += size;
  pt->live_blocks++;
  if (pt->live_bytes > pt->c.mb) {
    pt->c.mb = pt->live_bytes;
    pt->c.mbk = pt->live_blocks;
  }
}

static void shrink(const struct mp_profile *p, struct mp_lpoint *pt,
		   uint64_t size, uint64_t ev, uint64_t ns)
{
  save(p, pt);
  pt->live_bytes -= size;
  pt->live_blocks--;
  pt->c.tl_events += ev;
  pt->c.tl_ns += ns;
}

static uint64_t now_ns(const struct mp_profile *p)
{
  /* Before the first time mark: the stream's start. */
  return p->file_time == MP_NO_TIME ? 0 : p->file_time;
}

/* Block index i dies at event ev (its lifetime ends). */
static void retire(struct mp_profile *p, uint32_t i, uint64_t ev)
{
  struct mp_lifes *l = p->life;
  struct mp_lblock *b = &l->blocks[i];
  uint64_t dev = ev - b->born_ev, dns = now_ns(p) - b->born_ns;
  shrink(p, &l->locs[b->loc], b->size, dev, dns);
  if (b->node)
    shrink(p, &l->nodes[b->node], b->size, dev, dns);
  l->free_list[l->nfree++] = i;
}

static void release(struct mp_profile *p, uint64_t addr, uint64_t ev)
{
  struct mp_lifes *l = p->life;
  struct mp_map_entry *e;
  if (!addr || !(e = mp_map_find(&l->live, addr)))
    return;	/* Untracked: made before profiling started. */
  retire(p, (uint32_t)(e->a - 1), ev);
  mp_map_remove(&l->live, e);
}

int mp_life_account(struct mp_profile *p, const struct mp_event *ev,
		    uint32_t loc, uint32_t node)
{
  struct mp_lifes *l = p->life;
  uint64_t evno = p->file_events + 1;	/* As mp_live_account's. */
  struct mp_lpoint *lp, *np = NULL;
  struct mp_map_entry *e;
  struct mp_lblock *b;
  uint32_t i;
  int added;

  if (ev->type != MP_EV_ALLOC)
    release(p, ev->old_addr, evno);
  if (ev->type == MP_EV_FREE || !ev->new_addr)
    return 0;
  /* Every record may be in use at once: room for all in the free list. */
  if (l->nfree == 0 && l->nblocks == l->blocks_cap) {
    uint32_t n = l->blocks_cap ? 2 * l->blocks_cap : 1024;
    struct mp_lblock *g;
    uint32_t *f;
    if (n <= l->blocks_cap ||
	!(g = realloc(l->blocks, (size_t)n * sizeof(*g))))
      return -1;
    l->blocks = g;
    if (!(f = realloc(l->free_list, (size_t)n * sizeof(*f))))
      return -1;
    l->free_list = f;
    l->blocks_cap = n;
  }
  if (!(lp = point(&l->locs, &l->nlocs, loc)) ||
      (node && !(np = point(&l->nodes, &l->nnodes, node))))
    return -1;
  if (!(e = mp_map_insert(&l->live, ev->new_addr, &added)))
    return -1;
  if (!added)	/* The stream never freed the block there: it ends. */
    retire(p, (uint32_t)(e->a - 1), evno);
  i = l->nfree ? l->free_list[--l->nfree] : l->nblocks++;
  e->a = (uint64_t)i + 1;
  b = &l->blocks[i];
  b->size = ev->new_size;
  b->born_ev = evno;
  b->born_ns = now_ns(p);
  b->loc = loc;
  b->node = node;
  grow(p, lp, ev->new_size);
  if (np)
    grow(p, np, ev->new_size);
  return 0;
}

/* At the end of a file: its live figures at the peak and at the end. */
static void end_points(const struct mp_profile *p, struct mp_lpoint *a,
		       uint32_t n, int best)
{
  uint32_t i;
  for (i = 0; i < n; i++) {
    struct mp_lpoint *pt = &a[i];
    if (best) {
      int saved = pt->saved_peak == p->file.peak_event;
      pt->c.gb = saved ? pt->saved_bytes : pt->live_bytes;
      pt->c.gbk = saved ? pt->saved_blocks : pt->live_blocks;
    }
    pt->c.eb += pt->live_bytes;
    pt->c.ebk += pt->live_blocks;
    pt->live_bytes = pt->live_blocks = 0;
    pt->saved_bytes = pt->saved_blocks = 0;
    pt->saved_peak = 0;
  }
}

void mp_life_end_file(struct mp_profile *p, int finished)
{
  struct mp_lifes *l = p->life;
  struct mp_life_summary *s;
  uint64_t k, end_ns;
  int best;

  if (!l)
    return;
  s = &l->s;
  end_ns = now_ns(p);
  /* Blocks still live were live until the end (DHAT counts them so). */
  for (k = 0; k <= l->live.mask && l->live.slots; k++)
    if (l->live.slots[k].key) {
      struct mp_lblock *b = &l->blocks[l->live.slots[k].a - 1];
      uint64_t dev = p->file_events - b->born_ev, dns = end_ns - b->born_ns;
      l->locs[b->loc].c.tl_events += dev;
      l->locs[b->loc].c.tl_ns += dns;
      if (b->node) {
	l->nodes[b->node].c.tl_events += dev;
	l->nodes[b->node].c.tl_ns += dns;
      }
    }
  /* The global peak is the largest file peak (the first of equals), as
  ** the total's. */
  best = finished && (s->files == 0 || p->file.peak_bytes > l->best_peak);
  end_points(p, l->locs, l->nlocs, best);
  end_points(p, l->nodes, l->nnodes, best);
  if (best) {
    l->best_peak = p->file.peak_bytes;
    s->peak_events = p->file.peak_event;
    s->peak_ns = p->peak_time == MP_NO_TIME ? 0 : p->peak_time;
  }
  if (finished) {
    if (p->file_events > s->end_events)
      s->end_events = p->file_events;
    if (end_ns > s->end_ns)
      s->end_ns = end_ns;
    s->files++;
    s->timed_files += p->file_time != MP_NO_TIME;
  }
  mp_map_clear(&l->live);
  l->nblocks = l->nfree = 0;
}

/* -- What the reports read ------------------------------------------------- */

int mp_profile_has_lifetimes(const struct mp_profile *p)
{
  return p->life != NULL;
}

void mp_profile_life_summary(const struct mp_profile *p,
			     struct mp_life_summary *out)
{
  if (p->life)
    *out = p->life->s;
  else
    memset(out, 0, sizeof(*out));
}

static void counts(const struct mp_lpoint *a, uint32_t n, uint32_t id,
		   struct mp_life_counts *out)
{
  if (a && id < n)
    *out = a[id].c;
  else
    memset(out, 0, sizeof(*out));
}

void mp_profile_life_loc(const struct mp_profile *p, uint32_t id,
			 struct mp_life_counts *out)
{
  counts(p->life ? p->life->locs : NULL, p->life ? p->life->nlocs : 0, id,
	 out);
}

void mp_profile_life_stack(const struct mp_profile *p, uint32_t id,
			   struct mp_life_counts *out)
{
  counts(p->life ? p->life->nodes : NULL, p->life ? p->life->nnodes : 0, id,
	 out);
}
