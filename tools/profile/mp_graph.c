/*
** The heap graph (mp_graph.h): built from a snapshot's GRAPH records as
** they are read, each object joined with the block the heap has at its
** address at that moment; then solved once: the shortest chain from the
** root to every object (breadth first, weak references left out), and
** the dominator tree (Lengauer and Tarjan's algorithm, the simple
** version with path compression: O(E log N)), which gives the retained
** size of every object: what would be freed if it went.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_live.h"
#include "mp_profile_int.h"
#include "lj_memprof_format.h"

int mp_graph_block(struct mp_profile *p, const struct mp_event *ev,
		   unsigned kind)
{
  /* Objects and the blocks objects are made of; not the VM's own. */
  if (!p->graph_want || kind == LJM_KIND_NONE || kind >= LJM_KIND_BUF)
    return 0;
  if (mp_grow_one((void **)&p->graph_blocks, p->graph_nblocks,
		  &p->graph_blocks_cap, sizeof(uint64_t)) < 0)
    return -1;
  p->graph_blocks[p->graph_nblocks++] = ev->new_addr;
  return 0;
}

void mp_graph_free(struct mp_profile *p)
{
  if (!p->graph)
    return;
  free(p->graph->nodes);
  free(p->graph->edges);
  free(p->graph->names);
  free(p->graph);
  p->graph = NULL;
  mp_map_free(&p->graph_index);
}

void mp_graph_free_all(struct mp_profile *p)
{
  mp_graph_free(p);
  free(p->graph_blocks);
  p->graph_blocks = NULL;
  p->graph_nblocks = p->graph_blocks_cap = 0;
}

/* A new graph replaces the one before: the last snapshot's is kept. */
static int64_t node_of(struct mp_profile *p, uint64_t addr);

static int begin(struct mp_profile *p)
{
  struct mp_graph *g;
  uint32_t i;
  mp_graph_free(p);
  if (!(g = calloc(1, sizeof(*g))))
    return -1;
  p->graph = g;
  mp_map_init(&p->graph_index);
  g->snapshot = p->file_snaps;
  if (mp_grow_one((void **)&g->nodes, 0, &g->nodes_cap, sizeof(*g->nodes)) < 0)
    return -1;
  memset(&g->nodes[0], 0, sizeof(g->nodes[0]));
  g->nodes[0].loc = MP_GRAPH_NO_LOC;
  g->nnodes = 1;
  p->graph_cur = 0;
  p->graph_fresh = 0;
  /* Every object of the snapshot a node, whether a reference names it. */
  for (i = 0; i < p->graph_nblocks; i++)
    if (node_of(p, p->graph_blocks[i]) < 0)
      return -1;
  p->graph_nblocks = 0;
  return 0;
}

/* The node of the object at addr, made with its block's figures. */
static int64_t node_of(struct mp_profile *p, uint64_t addr)
{
  struct mp_graph *g = p->graph;
  struct mp_graph_node *n;
  struct mp_map_entry *e;
  struct mp_block b;
  unsigned huge = 0;
  int added;
  if (addr == 0)
    return 0;
  if (!(e = mp_map_insert(&p->graph_index, addr, &added)))
    return -1;
  if (!added)
    return (int64_t)e->a;
  if (mp_grow_one((void **)&g->nodes, g->nnodes, &g->nodes_cap,
		  sizeof(*g->nodes)) < 0)
    return -1;
  e->a = g->nnodes;
  n = &g->nodes[g->nnodes];
  memset(n, 0, sizeof(*n));
  n->addr = addr;
  n->loc = MP_GRAPH_NO_LOC;
  if (mp_heap_peek(&p->heap, mp_live_key(addr, &huge, 0), &b)) {
    n->size = b.size;
    n->kind = (uint8_t)b.kind;
    n->loc = p->file_stacks ? p->snodes[b.loc].leaf : b.loc;
  }
  return g->nnodes++;
}

static int64_t add_name(struct mp_graph *g, const char *s, size_t len)
{
  size_t need = g->names_len + len + 1, off = g->names_len;
  if (need > UINT32_MAX - 1)
    return -1;
  if (need > g->names_cap) {
    size_t cap = g->names_cap ? g->names_cap * 2 : 4096;
    char *q;
    while (cap < need)
      cap *= 2;
    if (!(q = realloc(g->names, cap)))
      return -1;
    g->names = q;
    g->names_cap = cap;
  }
  memcpy(g->names + off, s, len);
  g->names[off + len] = 0;
  g->names_len = need;
  return (int64_t)off;
}

static int add_edge(struct mp_profile *p, unsigned tag, uint64_t to,
		    uint64_t num, int weak, const struct mp_event *ev,
		    uint32_t loc)
{
  struct mp_graph *g = p->graph;
  struct mp_graph_edge *e;
  int64_t n = node_of(p, to), name = MP_GRAPH_NO_NAME;
  if (n < 0)
    return -1;
  if (ev && (name = add_name(g, ev->name, ev->name_len)) < 0)
    return -1;
  if (mp_grow_one((void **)&g->edges, g->nedges, &g->edges_cap,
		  sizeof(*g->edges)) < 0)
    return -1;
  e = &g->edges[g->nedges++];
  e->num = num;
  e->from = p->graph_cur;
  e->to = (uint32_t)n;
  e->name = (uint32_t)name;
  e->loc = loc;
  e->tag = (uint8_t)tag;
  e->weak = (uint8_t)(weak != 0);
  return 0;
}

/* The function a SLOT's prototype is: its location at its first line. */
static uint32_t proto_loc(struct mp_profile *p, uint64_t proto)
{
  struct mp_proto pr;
  int64_t id;
  if (!proto || !mp_symtab_proto(&p->symtab, proto, &pr))
    return MP_GRAPH_NO_LOC;
  id = mp_resolve_uncached(p, LJM_SRC_LFUNC, proto, pr.linedefined);
  return id < 0 ? MP_GRAPH_NO_LOC : (uint32_t)id;
}

int mp_graph_record(struct mp_profile *p, const struct mp_event *ev)
{
  unsigned flags;
  int64_t n;
  if (!p->graph_want)
    return 0;
  if ((p->graph_fresh || !p->graph) && begin(p) < 0)
    return -1;
  flags = p->graph->nodes[p->graph_cur].flags;
  switch (ev->graph_tag) {
  case LJM_GRAPH_OBJ:
    if ((n = node_of(p, ev->graph_to)) < 0)
      return -1;
    p->graph_cur = (uint32_t)n;
    p->graph->nodes[n].flags = (uint8_t)ev->graph_num;
    return 0;
  case LJM_GRAPH_FIELD:
    if (add_edge(p, MP_GRAPH_FIELD_KEY, ev->graph_aux, 0,
		 flags & LJM_GRAPH_WEAKKEYS, NULL, MP_GRAPH_NO_LOC) < 0)
      return -1;
    if (!ev->graph_to)
      return 0;
    return add_edge(p, LJM_GRAPH_FIELD, ev->graph_to, 0,
		    flags & LJM_GRAPH_WEAKVALUES, ev, MP_GRAPH_NO_LOC);
  case LJM_GRAPH_KEY:
    return add_edge(p, LJM_GRAPH_KEY, ev->graph_to, 0,
		    flags & LJM_GRAPH_WEAKKEYS, NULL, MP_GRAPH_NO_LOC);
  case LJM_GRAPH_INDEX:
  case LJM_GRAPH_VALUE:
    return add_edge(p, ev->graph_tag, ev->graph_to, ev->graph_num,
		    flags & LJM_GRAPH_WEAKVALUES, NULL, MP_GRAPH_NO_LOC);
  case LJM_GRAPH_UPVAL:
  case LJM_GRAPH_ROOT:
    return add_edge(p, ev->graph_tag, ev->graph_to, ev->graph_num, 0,
		    ev->name_len ? ev : NULL, MP_GRAPH_NO_LOC);
  case LJM_GRAPH_SLOT:
    return add_edge(p, LJM_GRAPH_SLOT, ev->graph_to, ev->graph_num, 0,
		    ev->name_len ? ev : NULL, proto_loc(p, ev->graph_aux));
  default:
    return add_edge(p, ev->graph_tag, ev->graph_to, 0, 0, NULL,
		    MP_GRAPH_NO_LOC);
  }
}

void mp_graph_snapshot(struct mp_profile *p)
{
  p->graph_fresh = 1;
  p->graph_nblocks = 0;
}

void mp_graph_snapshot_end(struct mp_profile *p)
{
  if (p->graph && !p->graph_fresh)	/* Begun in this snapshot. */
    p->graph->complete = 1;
  p->graph_nblocks = 0;
}

/* -- Solving --------------------------------------------------------------- */

/* Each node's strong edges, by node (adj), and where they come from
** (pred): compressed rows over edge numbers. */
struct rows {
  uint32_t *first;	/* nnodes + 1 */
  uint32_t *list;
};

int mp_graph_rows(const struct mp_graph *g, int reverse, int strong,
		  uint32_t **firstp, uint32_t **listp)
{
  uint32_t i, n = g->nnodes;
  uint32_t *first = calloc((size_t)n + 1, sizeof(uint32_t));
  uint32_t *list = malloc(((size_t)g->nedges + 1) * sizeof(uint32_t));
  *firstp = *listp = NULL;
  if (!first || !list) {
    free(first);
    free(list);
    return -1;
  }
  for (i = 0; i < g->nedges; i++)
    if (!strong || !g->edges[i].weak)
      first[(reverse ? g->edges[i].to : g->edges[i].from) + 1]++;
  for (i = 0; i < n; i++)
    first[i + 1] += first[i];
  for (i = 0; i < g->nedges; i++) {
    const struct mp_graph_edge *e = &g->edges[i];
    if (!strong || !e->weak)
      list[first[reverse ? e->to : e->from]++] = i;
  }
  for (i = n; i > 0; i--)	/* Back to the starts. */
    first[i] = first[i - 1];
  first[0] = 0;
  *firstp = first;
  *listp = list;
  return 0;
}

static int make_rows(const struct mp_graph *g, struct rows *r, int reverse)
{
  return mp_graph_rows(g, reverse, 1, &r->first, &r->list);
}

static void free_rows(struct rows *r)
{
  free(r->first);
  free(r->list);
}

/* Shortest chains: breadth first from the root. */
static int chains(struct mp_graph *g, const struct rows *adj)
{
  uint32_t *queue = malloc((size_t)g->nnodes * sizeof(uint32_t));
  uint32_t head = 0, tail = 0, i;
  if (!queue)
    return -1;
  for (i = 0; i < g->nnodes; i++) {
    g->nodes[i].parent = MP_GRAPH_NONE;
    g->nodes[i].depth = UINT32_MAX;
  }
  g->nodes[0].depth = 0;
  queue[tail++] = 0;
  while (head < tail) {
    uint32_t v = queue[head++], k;
    for (k = adj->first[v]; k < adj->first[v + 1]; k++) {
      const struct mp_graph_edge *e = &g->edges[adj->list[k]];
      if (g->nodes[e->to].depth != UINT32_MAX)
	continue;
      g->nodes[e->to].depth = g->nodes[v].depth + 1;
      g->nodes[e->to].parent = adj->list[k];
      queue[tail++] = e->to;
    }
  }
  g->reached = tail;
  g->reached_bytes = 0;
  for (i = 0; i < tail; i++)
    g->reached_bytes += g->nodes[queue[i]].size;
  free(queue);
  return 0;
}

/*
** Dominators, Lengauer and Tarjan. Nodes are numbered in depth-first
** order from the root (dfn, from 1; 0: not reached); semi, ancestor and
** label are over those numbers, as in the paper.
*/
struct lt {
  uint32_t *dfn, *vertex, *parent, *semi, *ancestor, *label, *idom;
  uint32_t *bucket, *bnext;	/* Buckets as linked lists. */
  uint32_t *stack;
};

static uint32_t lt_eval(struct lt *t, uint32_t v)
{
  uint32_t n = 0, u;
  if (!t->ancestor[v])
    return v;
  /* Path compression, without recursion: the chain of ancestors up to
  ** the one whose ancestor is the root of its tree. */
  for (u = v; t->ancestor[t->ancestor[u]]; u = t->ancestor[u])
    t->stack[n++] = u;
  while (n--) {
    u = t->stack[n];
    if (t->semi[t->label[t->ancestor[u]]] < t->semi[t->label[u]])
      t->label[u] = t->label[t->ancestor[u]];
    t->ancestor[u] = t->ancestor[t->ancestor[u]];
  }
  return t->label[v];
}

static int dominators(struct mp_graph *g, const struct rows *adj)
{
  struct lt t;
  struct rows pred = { NULL, NULL };
  uint32_t n = g->nnodes, count = 0, i, *it;
  size_t sz = ((size_t)n + 1) * sizeof(uint32_t);
  int rc = -1;
  memset(&t, 0, sizeof(t));
  t.dfn = calloc((size_t)n + 1, sizeof(uint32_t));
  t.vertex = malloc(sz); t.parent = malloc(sz); t.semi = malloc(sz);
  t.ancestor = calloc((size_t)n + 1, sizeof(uint32_t));
  t.label = malloc(sz); t.idom = malloc(sz);
  t.bucket = calloc((size_t)n + 1, sizeof(uint32_t));
  t.bnext = malloc(sz); t.stack = malloc(sz);
  it = malloc(sz);
  if (!t.dfn || !t.vertex || !t.parent || !t.semi || !t.ancestor ||
      !t.label || !t.idom || !t.bucket || !t.bnext || !t.stack || !it ||
      make_rows(g, &pred, 1) < 0)
    goto done;
  /* Depth first, without recursion: stack of nodes, it[] the next edge. */
  {
    uint32_t sp = 0;
    t.dfn[0] = ++count;
    t.vertex[count] = 0;
    t.parent[count] = 0;
    t.stack[sp++] = 0;
    it[0] = adj->first[0];
    while (sp) {
      uint32_t v = t.stack[sp - 1];
      if (it[v] < adj->first[v + 1]) {
	uint32_t w = g->edges[adj->list[it[v]++]].to;
	if (!t.dfn[w]) {
	  t.dfn[w] = ++count;
	  t.vertex[count] = w;
	  t.parent[count] = t.dfn[v];
	  it[w] = adj->first[w];
	  t.stack[sp++] = w;
	}
      } else {
	sp--;
      }
    }
  }
  for (i = 1; i <= count; i++) {
    t.semi[i] = t.label[i] = i;
    t.idom[i] = 0;
  }
  for (i = count; i >= 2; i--) {
    uint32_t w = t.vertex[i], k, v;
    for (k = pred.first[w]; k < pred.first[w + 1]; k++) {
      uint32_t from = t.dfn[g->edges[pred.list[k]].from], u;
      if (!from)
	continue;	/* From an object the root does not reach. */
      u = lt_eval(&t, from);
      if (t.semi[u] < t.semi[i])
	t.semi[i] = t.semi[u];
    }
    t.bnext[i] = t.bucket[t.semi[i]];
    t.bucket[t.semi[i]] = i;
    t.ancestor[i] = t.parent[i];	/* link */
    for (v = t.bucket[t.parent[i]]; v; v = t.bnext[v]) {
      uint32_t u = lt_eval(&t, v);
      t.idom[v] = t.semi[u] < t.semi[v] ? u : t.parent[i];
    }
    t.bucket[t.parent[i]] = 0;
  }
  for (i = 2; i <= count; i++)
    if (t.idom[i] != t.semi[i])
      t.idom[i] = t.idom[t.idom[i]];
  for (i = 0; i < n; i++) {
    g->nodes[i].idom = MP_GRAPH_NONE;
    g->nodes[i].retained = t.dfn[i] ? g->nodes[i].size : 0;
  }
  for (i = 2; i <= count; i++)
    g->nodes[t.vertex[i]].idom = t.vertex[t.idom[i]];
  /* Retained sizes: children before their dominators (a dominator comes
  ** before all it dominates in depth-first order). */
  for (i = count; i >= 2; i--) {
    struct mp_graph_node *w = &g->nodes[t.vertex[i]];
    g->nodes[w->idom].retained += w->retained;
  }
  rc = 0;
done:
  free(t.dfn); free(t.vertex); free(t.parent); free(t.semi);
  free(t.ancestor); free(t.label); free(t.idom); free(t.bucket);
  free(t.bnext); free(t.stack); free(it);
  free_rows(&pred);
  return rc;
}

uint64_t mp_profile_graph_pending(const struct mp_profile *p)
{
  return p->graph && !p->graph->solved ? p->graph->nedges + 1 : 0;
}

const struct mp_graph *mp_profile_graph(struct mp_profile *p)
{
  struct mp_graph *g = p->graph;
  struct rows adj = { NULL, NULL };
  if (!g || g->solved)
    return g;
  /* The records are all read: the index by address is no longer needed,
  ** and its memory is better spent on what follows. */
  mp_map_free(&p->graph_index);
  mp_map_init(&p->graph_index);
  if (make_rows(g, &adj, 0) < 0 || chains(g, &adj) < 0 ||
      dominators(g, &adj) < 0) {
    free_rows(&adj);
    p->oom = 1;
    return NULL;
  }
  free_rows(&adj);
  g->solved = 1;
  return g;
}
