/*
** The stack tree of the profile extension (doc/format.md, "Extensions"):
** each file's stack nodes joined into one tree of the profile, their
** frames resolved to locations when announced, so that the same stack
** in two files (or under two ids) is one node and the reports count it
** once. Memory grows with the tree: a node is 24 bytes and its figures
** 48, a file's node ids 4 bytes each, never anything per event.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_profile_int.h"
#include "mp_sample.h"
#include "mp_uleb.h"

static uint64_t node_hash(const struct mp_snode *n)
{
  uint64_t h = (uint64_t)n->parent << 32 ^ n->loc;
  h = (h ^ (uint64_t)n->frame << 56 ^ (uint64_t)n->name << 24 ^ n->aux) *
      0x9e3779b97f4a7c15ull;
  return h ^ h >> 29;
}

static int node_same(const struct mp_snode *a, const struct mp_snode *b)
{
  return a->parent == b->parent && a->frame == b->frame &&
	 a->loc == b->loc && a->name == b->name && a->aux == b->aux;
}

/* Double the identity hash (at most half full). 0, or -1. */
static int grow_slots(struct mp_profile *p)
{
  uint32_t ncap = p->snode_mask ? (p->snode_mask + 1) * 2 : 1024, i;
  uint32_t *slots = calloc(ncap, sizeof(*slots));
  if (!slots)
    return -1;
  for (i = 1; i < p->nsnodes; i++) {
    uint32_t k = (uint32_t)node_hash(&p->snodes[i]) & (ncap - 1);
    while (slots[k])
      k = (k + 1) & (ncap - 1);
    slots[k] = i;
  }
  free(p->snode_slots);
  p->snode_slots = slots;
  p->snode_mask = ncap - 1;
  return 0;
}

/* The tree node of identity n, added if new; 0 when out of memory. */
static uint32_t intern_node(struct mp_profile *p, const struct mp_snode *n)
{
  uint32_t k, id;

  if ((!p->snode_slots ||
       (uint64_t)p->nsnodes * 2 >= (uint64_t)p->snode_mask + 1) &&
      grow_slots(p) < 0)
    return 0;
  for (k = (uint32_t)node_hash(n) & p->snode_mask; (id = p->snode_slots[k]);
       k = (k + 1) & p->snode_mask)
    if (node_same(&p->snodes[id], n))
      return id;
  if (p->nsnodes == p->snodes_cap) {
    uint32_t ncap = p->snodes_cap ? p->snodes_cap * 2 : 256;
    struct mp_snode *nn;
    struct mp_scount *nc;
    if (ncap <= p->snodes_cap)
      return 0;	/* 2^32 nodes: the ids are full. */
    nn = realloc(p->snodes, (size_t)ncap * sizeof(*nn));
    if (!nn)
      return 0;
    p->snodes = nn;
    nc = realloc(p->scounts, (size_t)ncap * sizeof(*nc));
    if (!nc)
      return 0;
    p->scounts = nc;
    p->snodes_cap = ncap;
  }
  if (p->nsnodes == 0) {
    /* Id 0 is the root: never a node, so that 0 can mean none. */
    memset(&p->snodes[0], 0, sizeof(p->snodes[0]));
    memset(&p->scounts[0], 0, sizeof(p->scounts[0]));
    p->nsnodes = 1;
  }
  id = p->nsnodes++;
  p->snodes[id] = *n;
  memset(&p->scounts[id], 0, sizeof(p->scounts[id]));
  p->snode_slots[k] = id;
  return id;
}

int mp_stacks_begin_file(struct mp_profile *p)
{
  p->file_ext = 1;
  /* The heap's owners become nodes: only while it holds no block that a
  ** location owns. The read driver begins before any event; a caller
  ** that feeds events itself and met blocks first gets no stacks for
  ** this file (its stack events count as internal), never a mix. */
  p->file_stacks = !p->no_locations && mp_heap_count(&p->heap) == 0;
  p->file.stack_files = 1;
  return 0;
}

/* The location an event whose stack is this node is charged to: the
** leaf's, as a version-3 writer would charge it. A built-in is charged
** to what called it (the frame below, itself perhaps a built-in); a cut
** or a built-in with nothing below it, to the VM itself. */
static int64_t leaf_location(struct mp_profile *p, const struct mp_snode *n)
{
  switch (n->frame) {
  case LJM_FRAME_FAST:
    if (n->parent)
      return p->snodes[n->parent].leaf;
    /* fall through */
  case LJM_FRAME_CUT:
    return mp_resolve_uncached(p, LJM_SRC_INTERNAL, 0, 0);
  default:
    return n->loc;
  }
}

/* A trace call site of this file: its pairs kept until the file ends. A
** later site of the same number (a new trace there) replaces it. */
static int add_site(struct mp_profile *p, const struct mp_event *ev)
{
  const uint8_t *q = ev->site_pairs, *end = q + ev->site_pairs_len;
  struct mp_map_entry *e;
  uint64_t i, n = 2 * ev->site_lines;
  int added;

  if (!ev->site || !ev->site_lines)
    return 0;	/* Nothing to charge to. */
  if (p->nsite_pairs + n > p->site_pairs_cap) {
    uint64_t ncap = p->site_pairs_cap ? p->site_pairs_cap : 256;
    uint64_t *np;
    while (ncap < p->nsite_pairs + n)
      ncap *= 2;
    if (ncap > UINT32_MAX)
      return -1;
    np = realloc(p->site_pairs, (size_t)ncap * sizeof(*np));
    if (!np)
      return -1;
    p->site_pairs = np;
    p->site_pairs_cap = (uint32_t)ncap;
  }
  for (i = 0; i < n; i++)	/* The reader checked them. */
    if (mp_uleb_read(&q, end, &p->site_pairs[p->nsite_pairs + i]) !=
	MP_ULEB_OK)
      return 0;
  if (!(e = mp_map_insert(&p->sites, ev->sym_addr << 32 | ev->site,
			  &added)))
    return -1;
  e->a = p->nsite_pairs;
  e->b = ev->site_lines;
  p->nsite_pairs += (uint32_t)n;
  return 0;
}

/*
** A trace frame at a site the file named: the frames the trace inlined
** become Lua frames over its start frame, whose line becomes that of the
** call, and the trace stays the top frame, its events charged to the
** innermost line. Only over the start frame that the trace's symbol
** names (the site's last frame, at the trace's start line); a stack cut
** below the trace gets the line alone. Otherwise, or out of memory, n
** stays as it was: charged to the trace. -1 only when out of memory.
*/
static int site_frames(struct mp_profile *p, struct mp_snode *n,
		       uint64_t traceno, uint64_t site)
{
  struct mp_map_entry *e = mp_map_find(&p->sites, traceno << 32 | site);
  const uint64_t *pr;
  struct mp_trace t;
  struct mp_snode f;
  uint32_t parent = n->parent, id;
  int64_t loc;
  uint64_t k;

  if (!e || traceno > UINT32_MAX)
    return 0;
  pr = &p->site_pairs[e->a];
  if (!parent || p->snodes[parent].frame == LJM_FRAME_CUT) {
    if ((loc = mp_resolve_uncached(p, LJM_SRC_LFUNC, pr[0], pr[1])) < 0)
      return -1;
    n->leaf = (uint32_t)loc;
    return 0;
  }
  if (p->snodes[parent].frame != LJM_FRAME_LUA ||
      !mp_symtab_trace(&p->symtab, (uint32_t)traceno, &t) ||
      t.proto != pr[2 * e->b - 2] ||
      (loc = mp_resolve_uncached(p, LJM_SRC_LFUNC, t.proto, t.line)) < 0 ||
      (uint32_t)loc != p->snodes[parent].loc)
    return loc < 0 ? -1 : 0;
  f = p->snodes[parent];	/* The start frame, at the line of the call. */
  for (k = e->b; k-- > 0; ) {
    if ((loc = mp_resolve_uncached(p, LJM_SRC_LFUNC, pr[2 * k],
				   pr[2 * k + 1])) < 0)
      return -1;
    f.loc = f.leaf = (uint32_t)loc;
    if (!(id = intern_node(p, &f)))
      return -1;
    f.parent = id;
    f.name = MP_NO_STRING;	/* Inlined: its caller's name is not known. */
  }
  n->parent = f.parent;
  n->leaf = f.loc;
  return 0;
}

static int add_node(struct mp_profile *p, const struct mp_event *ev)
{
  struct mp_snode n;
  int64_t loc = 0, leaf;
  uint32_t id;

  memset(&n, 0, sizeof(n));
  n.frame = ev->frame;
  n.name = MP_NO_STRING;
  /* The reader checked the parent: announced before, so known here. */
  n.parent = ev->node_parent ? p->fnodes[ev->node_parent - 1] : 0;
  switch (ev->frame) {
  case LJM_FRAME_LUA:
    loc = mp_resolve_uncached(p, LJM_SRC_LFUNC, ev->frame_a, ev->frame_b);
    break;
  case LJM_FRAME_C:
    loc = mp_resolve_uncached(p, LJM_SRC_CFUNC, ev->frame_a, 0);
    break;
  case LJM_FRAME_TRACE:
    loc = mp_resolve_uncached(p, LJM_SRC_TRACE, ev->frame_a, 0);
    n.aux = (uint32_t)ev->frame_b;
    break;
  case LJM_FRAME_FAST:
    loc = (int64_t)ev->frame_a;
    break;
  case LJM_FRAME_CUT:  /* Not the depth limit's cut: its own node. */
    if (p->file_fullroot && ev->node == p->file_fullroot)
      loc = MP_CUT_FULL;
    break;
  default:
    break;
  }
  if (loc < 0)
    return -1;
  n.loc = (uint32_t)loc;
  if ((ev->frame == LJM_FRAME_LUA || ev->frame == LJM_FRAME_FAST) &&
      ev->name_len &&
      (n.name = mp_strings_intern(&p->strings, ev->name, ev->name_len)) ==
	MP_NO_STRING)
    return -1;
  if ((leaf = leaf_location(p, &n)) < 0)
    return -1;
  n.leaf = (uint32_t)leaf;
  if (ev->frame == LJM_FRAME_TRACE && ev->frame_b &&
      site_frames(p, &n, ev->frame_a, ev->frame_b) < 0)
    return -1;
  if (!(id = intern_node(p, &n)))
    return -1;
  if (p->nfnodes == p->fnodes_cap) {
    uint32_t ncap = p->fnodes_cap ? p->fnodes_cap * 2 : 256;
    uint32_t *nf = realloc(p->fnodes, (size_t)ncap * sizeof(*nf));
    if (!nf)
      return -1;
    p->fnodes = nf;
    p->fnodes_cap = ncap;
  }
  /* The reader counts the ids: this is node ev->node. */
  p->fnodes[p->nfnodes++] = id;
  return 0;
}

/* A figure of the process a time mark carries (RSS, MAPPED), v at time
** t; 0 is not known. */
static void gauge_put(struct mp_gauge *g, uint64_t v, uint64_t t)
{
  if (!v)
    return;
  if (!g->first)
    g->first = v;
  if (v > g->max) {
    g->max = v;
    g->max_ns = t;
  }
  g->last = v;
}

static void add_info(struct mp_profile *p, const struct mp_event *ev)
{
  struct mp_summary *f = &p->file;
  switch (ev->info_key) {
  case LJM_INFO_DEPTH:
    f->stack_depth = ev->info_value;
    break;
  case LJM_INFO_NODES_FULL:
    f->nodes_full = ev->info_value;
    break;
  case LJM_INFO_CUT_EVENTS:
    f->cut_events = ev->info_value;
    break;
  case LJM_INFO_FULL_ROOT:
    if (!p->file_fullroot)
      f->full_roots++;
    p->file_fullroot = ev->info_value;
    break;
  case LJM_INFO_SAMPLE:
    mp_sample_info(p, ev->info_value);
    break;
  case LJM_INFO_SNAPSHOT:
    mp_snapshot_info(p, ev->info_value);
    break;
  case LJM_INFO_TIME:
    /* A mark: what follows happened at or after it. */
    if (ev->info_value != MP_NO_TIME)
      p->file_time = ev->info_value;
    break;
  case LJM_INFO_RSS:
    /* The process's resident bytes at the mark before it. */
    gauge_put(&p->rss, ev->info_value, p->file_time);
    break;
  case LJM_INFO_MAPPED:
    /* The bytes LuaJIT's allocator had mapped at the mark before it. */
    gauge_put(&p->mapped, ev->info_value, p->file_time);
    break;
  default:
    break;	/* Keys no report uses, and keys this reader does not know. */
  }
}

int mp_stacks_symbol(struct mp_profile *p, const struct mp_event *ev)
{
  if (!p->file_ext && mp_stacks_begin_file(p) < 0)
    return -1;
  switch (ev->type) {
  case MP_EV_SYM_NODE:
    p->file.stack_nodes++;
    return p->file_stacks ? add_node(p, ev) : 0;
  case MP_EV_SYM_INFO:
    add_info(p, ev);
    return 0;
  case MP_EV_SYM_SITE:
    return add_site(p, ev);
  case MP_EV_SYM_GRAPH:
    return mp_graph_record(p, ev);
  default:
    return 0;
  }
}

uint32_t mp_stacks_of_loc(struct mp_profile *p, uint32_t id)
{
  struct mp_map_entry *e;
  struct mp_snode n;
  uint32_t node;
  int added;

  if (!(e = mp_map_insert(&p->loc_snodes, id, &added)))
    return 0;
  if (!added)
    return (uint32_t)e->a;
  memset(&n, 0, sizeof(n));
  n.frame = MP_FRAME_LOCATION;
  n.loc = n.leaf = id;
  n.name = MP_NO_STRING;
  if (!(node = intern_node(p, &n)))
    mp_map_remove(&p->loc_snodes, e);
  else
    e->a = node;
  return node;
}

void mp_stacks_end_file(struct mp_profile *p)
{
  mp_map_clear(&p->sites);
  p->nsite_pairs = 0;
  p->nfnodes = 0;
  p->file_ext = 0;
  p->file_stacks = 0;
  p->file_fullroot = 0;
}

void mp_stacks_free(struct mp_profile *p)
{
  free(p->snodes);
  free(p->scounts);
  free(p->snode_slots);
  free(p->fnodes);
  mp_map_free(&p->loc_snodes);
  mp_map_free(&p->sites);
  free(p->site_pairs);
}
