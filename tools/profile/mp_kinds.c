/*
** Object kinds (mp_profile.h, "object kinds"): the figures of every kind
** and of every (kind, location) pair, and the filter that keeps the
** events of some kinds only. A block's kind is known from the event that
** made it; a free says none. The live heap keeps every block's kind
** beside its owner: without a filter (by_heap), an allocation counts
** where it is made (mp_kinds_made, which the read driver calls too), a
** free needs nothing, and what each kind, pair and path still holds is
** counted from the heap when the file ends. With a filter, whose frees
** must be known before they are accounted, and in a sampled file, whose
** heap holds estimates, the blocks live in this file are kept here as
** well: address -> size, kind and the pair it counts in, held counts
** following each event. With stacks, the figures of every (kind, stack
** node) pair too, the call paths of each kind; a block then counts in
** its path's pair, and through it in its (kind, location) pair (a
** node's leaf location).
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_profile_int.h"

/* A live block's b: its kind, and the pair or path it counts in. */
#define BLK_KIND(b)	((unsigned)((b) >> 32) & 0xffu)
#define BLK_PATH	((uint64_t)1 << 40)	/* Low 32 bits: path + 1. */

int mp_kinds_new(struct mp_profile *p)
{
  struct mp_kinds *k = calloc(1, sizeof(*k));
  if (!k)
    return -1;
  memset(k->keep, 1, sizeof(k->keep));
  k->by_heap = 1;
  mp_map_init(&k->blocks);
  mp_map_init(&k->pair_ids);
  p->kinds = k;
  return 0;
}

void mp_kinds_free(struct mp_profile *p)
{
  struct mp_kinds *k = p->kinds;
  if (!k)
    return;
  mp_map_free(&k->blocks);
  mp_map_free(&k->pair_ids);
  free(k->node_path);
  free(k->pairs);
  free(k->paths);
  free(k);
  p->kinds = NULL;
}

static void hold(struct mp_kind_counts *c, uint64_t size);

/* A block live at the end of a by-heap file: what it holds. */
static void hold_block(void *ctx, uint64_t addr, const struct mp_block *b)
{
  struct mp_profile *p = ctx;
  struct mp_kinds *k = p->kinds;
  uint32_t node = p->file_stacks ? b->loc : 0;
  uint32_t loc = node ? p->snodes[node].leaf : b->loc;
  uint32_t idx = mp_kinds_lookup(p, b->kind, loc, node);
  (void)addr;
  if (idx == UINT32_MAX) {
    p->oom = 1;
    return;
  }
  hold(&k->counts[b->kind], b->size);
  if (node) {
    hold(&k->paths[idx].c, b->size);
    idx = k->paths[idx].pair;
  }
  if (idx != MP_KINDS_NO_PAIR)
    hold(&k->pairs[idx].c, b->size);
}

void mp_kinds_end_file(struct mp_profile *p, int finished)
{
  if (!p->kinds)
    return;
  if (finished && mp_kinds_fast(p))
    mp_heap_each(&p->heap, hold_block, p);
  mp_map_clear(&p->kinds->blocks);	/* As the heap: per file. */
}

static unsigned ev_kind(const struct mp_event *ev)
{
  return ev->objkind >= 0 ? (unsigned)ev->objkind : LJM_KIND_NONE;
}

int mp_kinds_kept(const struct mp_profile *p, unsigned kind)
{
  return !p->kinds || kind >= MP_NKINDS || p->kinds->keep[kind];
}

int mp_kinds_keep(struct mp_profile *p, const struct mp_event *ev)
{
  struct mp_kinds *k = p->kinds;
  struct mp_map_entry *e;
  unsigned kind;
  int added;

  if (mp_kinds_fast(p)) {
    if (ev->type == MP_EV_FREE)
      return LJM_KIND_NONE;	/* Its block knows its kind. */
    if (ev->objkind >= 0)
      k->kind_events++;
    return (int)ev_kind(ev);
  }
  if (ev->type == MP_EV_FREE) {
    e = mp_map_find(&k->blocks, ev->old_addr);
    kind = e ? BLK_KIND(e->b) : LJM_KIND_NONE;
    if (k->keep[kind])
      return (int)kind;
    if (e)
      mp_map_remove(&k->blocks, e);
    return MP_KINDS_SKIP;
  }
  if (ev->objkind >= 0)
    k->kind_events++;
  kind = ev_kind(ev);
  if (k->keep[kind])
    return (int)kind;
  /* Left out: remember the block, so that its free is left out too. */
  if (ev->type == MP_EV_REALLOC &&
      (e = mp_map_find(&k->blocks, ev->old_addr)) != NULL)
    mp_map_remove(&k->blocks, e);
  if (!(e = mp_map_insert(&k->blocks, ev->new_addr, &added)))
    return MP_KINDS_OOM;
  e->a = ev->new_size;
  e->b = (uint64_t)kind << 32;
  return MP_KINDS_SKIP;
}

static struct mp_kindloc *pair_of(struct mp_kinds *k, unsigned kind,
				  uint32_t loc)
{
  int added;
  struct mp_map_entry *e = mp_map_insert(&k->pair_ids,
					 (uint64_t)kind << 32 | loc, &added);
  if (!e)
    return NULL;
  if (added) {
    if (k->npairs == k->pairs_cap) {
      uint32_t n = k->pairs_cap ? 2 * k->pairs_cap : 64;
      struct mp_kindloc *a = realloc(k->pairs, (size_t)n * sizeof(*a));
      if (!a) {
	mp_map_remove(&k->pair_ids, e);
	return NULL;
      }
      k->pairs = a;
      k->pairs_cap = n;
    }
    memset(&k->pairs[k->npairs], 0, sizeof(k->pairs[0]));
    k->pairs[k->npairs].kind = kind;
    k->pairs[k->npairs].loc = loc;
    e->a = k->npairs++;
  }
  return &k->pairs[e->a];
}

/* The path pair of (kind, node) for a block of pair index pair: NULL
** when out of memory. */
static struct mp_kindpath *path_of(struct mp_kinds *k, unsigned kind,
				   uint32_t node, uint32_t pair)
{
  uint64_t key = (uint64_t)kind << 32 | node;
  uint32_t i;
  if (k->last_path_key == key)
    return &k->paths[k->last_path];
  if (node >= k->nnode_path) {
    uint32_t n = k->nnode_path ? k->nnode_path : 1024, *a;
    while (n <= node)
      n = n > UINT32_MAX / 2 ? UINT32_MAX : 2 * n;
    if (n <= node || !(a = realloc(k->node_path, (size_t)n * sizeof(*a))))
      return NULL;
    memset(a + k->nnode_path, 0, (size_t)(n - k->nnode_path) * sizeof(*a));
    k->node_path = a;
    k->nnode_path = n;
  }
  /* The node's kinds, a few at most: a chain through the paths. */
  for (i = k->node_path[node]; i && k->paths[i - 1].kind != kind;
       i = k->paths[i - 1].next)
    ;
  if (!i) {
    struct mp_kindpath *x;
    if (k->npaths == k->paths_cap) {
      uint32_t n = k->paths_cap ? 2 * k->paths_cap : 64;
      struct mp_kindpath *a = realloc(k->paths, (size_t)n * sizeof(*a));
      if (!a)
	return NULL;
      k->paths = a;
      k->paths_cap = n;
    }
    x = &k->paths[k->npaths];
    memset(x, 0, sizeof(*x));
    x->kind = kind;
    x->node = node;
    x->pair = pair;
    x->next = k->node_path[node];
    i = k->node_path[node] = ++k->npaths;
  }
  k->last_path_key = key;	/* Never 0: node is not. */
  k->last_path = i - 1;
  return &k->paths[i - 1];
}

uint32_t mp_kinds_lookup(struct mp_profile *p, unsigned kind, uint32_t loc,
			 uint32_t node)
{
  struct mp_kinds *k = p->kinds;
  struct mp_kindloc *pair;
  struct mp_kindpath *path;
  /* The HTML page (ext_only) reads no (kind, location) pairs where it
  ** has the paths. */
  if (node && k->ext_only)
    return (path = path_of(k, kind, node, MP_KINDS_NO_PAIR))
	       ? (uint32_t)(path - k->paths) : UINT32_MAX;
  if (!(pair = pair_of(k, kind, loc)))
    return UINT32_MAX;
  if (!node)
    return (uint32_t)(pair - k->pairs);
  if (!(path = path_of(k, kind, node, (uint32_t)(pair - k->pairs))))
    return UINT32_MAX;
  return (uint32_t)(path - k->paths);
}

static void unhold(struct mp_kind_counts *c, uint64_t size)
{
  c->held_blocks--;
  c->held_bytes -= size;
}

static void hold(struct mp_kind_counts *c, uint64_t size)
{
  c->held_blocks++;
  c->held_bytes += size;
}

/* An allocation (re: 1 for a reallocation) of size bytes. */
static void made(struct mp_kind_counts *c, int re, uint64_t size)
{
  if (re) {
    c->n_realloc++;
    c->realloc_bytes += size;
  } else {
    c->n_alloc++;
    c->alloc_bytes += size;
  }
}

/* A block of this file leaves: its kind, pair and path hold it no more. */
static void release(struct mp_kinds *k, uint64_t addr)
{
  struct mp_map_entry *e = mp_map_find(&k->blocks, addr);
  uint32_t idx, pair;
  if (!e)
    return;
  idx = (uint32_t)e->b;
  if (idx) {
    if (e->b & BLK_PATH) {
      struct mp_kindpath *path = &k->paths[idx - 1];
      unhold(&path->c, e->a);
      pair = path->pair;
    } else {
      pair = idx - 1;
    }
    unhold(&k->counts[BLK_KIND(e->b)], e->a);
    if (pair != MP_KINDS_NO_PAIR)
      unhold(&k->pairs[pair].c, e->a);
  }
  mp_map_remove(&k->blocks, e);
}

int mp_kinds_account(struct mp_profile *p, const struct mp_event *ev,
		     unsigned kind, uint32_t loc)
{
  /* A block of a start snapshot: its stack is its location's node. */
  struct mp_kinds *k = p->kinds;
  uint32_t node = 0;
  if (p->file_stacks && ev->type != MP_EV_FREE) {
    if (!k->last_loc_node || k->last_loc != loc) {
      if (!(node = mp_stacks_of_loc(p, loc)))
	return -1;
      k->last_loc = loc;
      k->last_loc_node = node;
    }
    node = k->last_loc_node;
  }
  return mp_kinds_account_node(p, ev, kind, loc, node);
}

int mp_kinds_account_node(struct mp_profile *p, const struct mp_event *ev,
			  unsigned kind, uint32_t loc, uint32_t node)
{
  struct mp_kinds *k = p->kinds;
  struct mp_kindloc *pair;
  struct mp_kindpath *path = NULL;
  struct mp_map_entry *e;
  uint32_t pi;
  int added;

  if (mp_kinds_fast(p))
    return ev->type == MP_EV_FREE
	       ? 0
	       : mp_kinds_made(p, ev->type, kind, loc, node, ev->new_size);
  if (ev->type != MP_EV_ALLOC)
    release(k, ev->old_addr);
  if (ev->type == MP_EV_FREE)
    return 0;
  if (!(pair = pair_of(k, kind, loc)))
    return -1;
  pi = (uint32_t)(pair - k->pairs);
  if (node && !(path = path_of(k, kind, node, pi)))
    return -1;
  pair = &k->pairs[pi];
  /* A block of the start snapshot is held, not allocated. */
  if (!p->in_snap) {
    int re = ev->type == MP_EV_REALLOC;
    made(&k->counts[kind], re, ev->new_size);
    made(&pair->c, re, ev->new_size);
    if (path)
      made(&path->c, re, ev->new_size);
  }
  release(k, ev->new_addr);	/* A block the stream never freed. */
  if (!(e = mp_map_insert(&k->blocks, ev->new_addr, &added)))
    return -1;
  e->a = ev->new_size;
  e->b = (uint64_t)kind << 32 |
	 (path ? BLK_PATH | (uint32_t)(path - k->paths + 1) : pi + 1);
  hold(&k->counts[kind], ev->new_size);
  hold(&pair->c, ev->new_size);
  if (path)
    hold(&path->c, ev->new_size);
  return 0;
}

/* -- What the reports read ------------------------------------------------- */

void mp_profile_filter_kinds(struct mp_profile *p,
			     const uint8_t keep[MP_NKINDS])
{
  unsigned i;
  if (!p->kinds)
    return;
  memcpy(p->kinds->keep, keep, MP_NKINDS);
  p->kinds->by_heap = 1;
  for (i = 0; i < MP_NKINDS; i++)
    if (!keep[i])
      p->kinds->by_heap = 0;
}

uint64_t mp_profile_kind_events(const struct mp_profile *p)
{
  return p->kinds ? p->kinds->kind_events : 0;
}

void mp_profile_kind(const struct mp_profile *p, unsigned kind,
		     struct mp_kind_counts *out)
{
  if (p->kinds && kind < MP_NKINDS)
    *out = p->kinds->counts[kind];
  else
    memset(out, 0, sizeof(*out));
}

uint32_t mp_profile_nkindlocs(const struct mp_profile *p)
{
  return p->kinds ? p->kinds->npairs : 0;
}

void mp_profile_kindloc(const struct mp_profile *p, uint32_t i,
			unsigned *kind, uint32_t *loc,
			struct mp_kind_counts *out)
{
  const struct mp_kindloc *pair = &p->kinds->pairs[i];
  *kind = pair->kind;
  *loc = pair->loc;
  *out = pair->c;
}

uint32_t mp_profile_nkindpaths(const struct mp_profile *p)
{
  return p->kinds ? p->kinds->npaths : 0;
}

void mp_profile_kindpath(const struct mp_profile *p, uint32_t i,
			 unsigned *kind, uint32_t *node,
			 struct mp_kind_counts *out)
{
  const struct mp_kindpath *path = &p->kinds->paths[i];
  *kind = path->kind;
  *node = path->node;
  *out = path->c;
}
