/*
** Why is it still alive (report --retainers): for the objects an
** allocating location made that a snapshot's heap graph has, the
** shortest reference chains from the roots to them, grouped by their
** shape (indices folded to [*]), with counts and bytes; and what the
** dominator tree says they keep alive.
**
** A chain is written root first, one step per reference: a root by its
** name ("registry", "main thread"), a field as .name or ["name"], an
** index as [*], a local variable as "@chunk:line local NAME" (the
** function whose frame it is in), an upvalue as "@chunk:line upvalue
** NAME" (where the closure was made), and the references without names
** in parentheses.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "mp_graph.h"
#include "mp_map.h"
#include "mp_report.h"
#include "mp_retainers.h"
#include "lj_memprof_format.h"

/* Chains shown per location. */
#define MP_RETAINER_CHAINS 5
/* Locations shown without --retainers=LOCATION and without --top. */
#define MP_RETAINER_LOCS 5

struct chain {
  char *text;
  uint64_t objects, bytes;
  uint32_t holder;	/* The object before the last step, if the same for
			** all; MP_GRAPH_NONE if they differ. */
};

struct ret {
  FILE *out;
  struct mp_profile *p;
  const struct mp_graph *g;
  struct mp_aliases *al;	/* Text: names aliased; JSON: NULL, plain. */
  struct mp_buf b, j;
  struct mp_buf *jo;	/* JSON: where each location goes (&j, written
			** to out after each; or the page's data). */
  const uint32_t *row;	/* The page's row of each location; NULL. */
  size_t chains;	/* JSON: chains per location at most; 0: all. */
  size_t cut;		/* JSON: chain texts cut to so many bytes; 0. */
  const uint32_t *nodes;	/* The graph's nodes by location (run()): */
  const uint32_t *first;	/* those of loc from first[loc] to
				** first[loc + 1]. */
  int human;
  int json;
  int nshown;		/* JSON: locations written so far. */
};

static void name_loc(struct ret *r, uint32_t loc)
{
  struct mp_loc l;
  if (loc == MP_GRAPH_NO_LOC) {
    mp_buf_str(&r->b, "(no location)");
    return;
  }
  mp_profile_loc(r->p, loc, &l);
  mp_name_location(&r->b, r->p, r->al, &l,
		   r->json ? MP_NAME_PLAIN : MP_NAME_ALIASED);
}

/* A name from the stream: escaped for a terminal in text (JSON escapes
** the whole chain later). */
static void put_name(struct ret *r, const char *s)
{
  if (r->json)
    mp_buf_str(&r->b, s);
  else
    mp_name_escape(&r->b, s, strlen(s), 0);
}

static int is_identifier(const char *s)
{
  if (!*s || isdigit((unsigned char)*s))
    return 0;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_')
      return 0;
  return 1;
}

/* One step of a chain: the edge e. */
static void step(struct ret *r, const struct mp_graph_edge *e)
{
  const struct mp_graph *g = r->g;
  const char *name = e->name != MP_GRAPH_NO_NAME ? g->names + e->name : "";
  int joins = e->tag == LJM_GRAPH_FIELD || e->tag == LJM_GRAPH_INDEX ||
	      e->tag == LJM_GRAPH_VALUE || e->tag == LJM_GRAPH_KEY ||
	      e->tag == MP_GRAPH_FIELD_KEY || e->tag == LJM_GRAPH_PART;
  if (e->from && !joins)
    mp_buf_str(&r->b, " > ");
  switch (e->tag) {
  case LJM_GRAPH_ROOT:
    mp_buf_str(&r->b, *name ? name : "(root)");
    break;
  case LJM_GRAPH_FIELD:
    if (is_identifier(name)) {
      mp_buf_str(&r->b, ".");
      put_name(r, name);
    } else {
      mp_buf_str(&r->b, "[\"");
      put_name(r, name);
      mp_buf_str(&r->b, "\"]");
    }
    break;
  case LJM_GRAPH_INDEX:
    mp_buf_str(&r->b, "[*]");
    break;
  case LJM_GRAPH_VALUE:
    mp_buf_str(&r->b, "[?]");
    break;
  case LJM_GRAPH_KEY:
  case MP_GRAPH_FIELD_KEY:
    mp_buf_str(&r->b, "{key}");
    break;
  case LJM_GRAPH_SLOT:
    if (*name) {
      if (e->loc != MP_GRAPH_NO_LOC) {
	name_loc(r, e->loc);
	mp_buf_str(&r->b, " ");
      }
      mp_buf_str(&r->b, "local ");
      put_name(r, name);
    } else {
      mp_buf_str(&r->b, "(stack slot)");
    }
    break;
  case LJM_GRAPH_UPVAL:
    name_loc(r, g->nodes[e->from].loc);
    mp_buf_str(&r->b, " upvalue ");
    if (*name)
      put_name(r, name);
    else
      mp_buf_printf(&r->b, "#%llu", (unsigned long long)e->num + 1);
    break;
  case LJM_GRAPH_META: mp_buf_str(&r->b, "(metatable)"); break;
  case LJM_GRAPH_ENV: mp_buf_str(&r->b, "(environment)"); break;
  case LJM_GRAPH_PROTO: mp_buf_str(&r->b, "(prototype)"); break;
  case LJM_GRAPH_CONST: mp_buf_str(&r->b, "(constant)"); break;
  case LJM_GRAPH_PART: {
    unsigned k = g->nodes[e->to].kind;
    mp_buf_str(&r->b, k == LJM_KIND_TAB_ARRAY ? "{array part}" :
		      k == LJM_KIND_TAB_HASH ? "{hash part}" :
		      k == LJM_KIND_STACK ? "{stack}" : "{part}");
    break;
  }
  default: mp_buf_printf(&r->b, "(reference %u)", e->tag); break;
  }
}

/* An upvalue's reference to its value: part of the upvalue's step in a
** chain, not a step of its own. */
static int in_upvalue_step(const struct mp_graph *g,
			   const struct mp_graph_edge *e)
{
  return e->tag == LJM_GRAPH_VALUE && g->nodes[e->from].kind == LJM_KIND_UPVAL;
}

/* The chain of node v into r->b: its steps root first. */
static int chain_of(struct ret *r, uint32_t v, uint32_t **path,
		    uint32_t *cap)
{
  const struct mp_graph *g = r->g;
  uint32_t n = 0, i, depth = g->nodes[v].depth;
  if (depth > *cap) {
    uint32_t *q = realloc(*path, (size_t)depth * sizeof(uint32_t));
    if (!q)
      return -1;
    *path = q;
    *cap = depth;
  }
  for (; g->nodes[v].parent != MP_GRAPH_NONE && n < depth;
       v = g->edges[g->nodes[v].parent].from)
    (*path)[n++] = g->nodes[v].parent;
  r->b.len = 0;
  for (i = n; i-- > 0;) {
    const struct mp_graph_edge *e = &g->edges[(*path)[i]];
    if (!in_upvalue_step(g, e))
      step(r, e);
  }
  return r->b.oom ? -1 : 0;
}

static int by_bytes(const void *a, const void *b)
{
  const struct chain *x = a, *y = b;
  if (x->bytes != y->bytes)
    return x->bytes > y->bytes ? -1 : 1;
  if (x->objects != y->objects)
    return x->objects > y->objects ? -1 : 1;
  return strcmp(x->text, y->text);
}

/* Is v dominated (strictly) by an object of location loc? memo, filled
** along each walk: gen * 2 + 1 yes, gen * 2 no, anything else not known
** for this location (gen counts the locations: no clearing between). */
static int dominated(const struct mp_graph *g, uint32_t v, uint32_t loc,
		     uint32_t *memo, uint32_t gen, uint32_t *walk)
{
  uint32_t n = 0, u = g->nodes[v].idom, ans = gen * 2;
  while (u != MP_GRAPH_NONE && u != 0) {
    if (memo[u] >> 1 == gen) {
      ans = memo[u];
      break;
    }
    if (g->nodes[u].loc == loc) {
      ans = gen * 2 + 1;
      break;
    }
    walk[n++] = u;
    u = g->nodes[u].idom;
  }
  /* Each node on the way is dominated by loc's object iff ans says so
  ** (none of them is loc's). */
  while (n--)
    memo[walk[n]] = ans;
  return ans & 1;
}

static void put_bytes(struct ret *r, uint64_t v)
{
  mp_name_bytes(&r->b, v, r->human);
}

/* A location's figures and chains, as text. */
static int text_location(struct ret *r, uint32_t loc, uint64_t objects,
			 uint64_t bytes, uint64_t retained, uint64_t unreached,
			 uint64_t unreached_bytes, const struct chain *c,
			 size_t nc)
{
  const struct mp_graph *g = r->g;
  size_t i;
  r->b.len = 0;
  name_loc(r, loc);
  mp_buf_printf(&r->b, ": %llu %s, ", (unsigned long long)objects,
		objects == 1 ? "object" : "objects");
  put_bytes(r, bytes);
  mp_buf_str(&r->b, " in the snapshot, ");
  put_bytes(r, retained);
  mp_buf_str(&r->b, " retained");
  if (r->b.oom)
    return -1;
  fprintf(r->out, "%s\n", r->b.data);
  for (i = 0; i < nc && i < MP_RETAINER_CHAINS; i++) {
    r->b.len = 0;
    put_bytes(r, c[i].bytes);
    fprintf(r->out, "\t%llu %s, %s: %s\n", (unsigned long long)c[i].objects,
	    c[i].objects == 1 ? "object" : "objects", r->b.data, c[i].text);
    if (c[i].holder != MP_GRAPH_NONE && c[i].holder != 0) {
      const struct mp_graph_node *h = &g->nodes[c[i].holder];
      r->b.len = 0;
      mp_buf_str(&r->b, "\t\theld by one ");
      mp_name_kind(&r->b, h->kind);
      mp_buf_str(&r->b, " made at ");
      name_loc(r, h->loc);
      mp_buf_str(&r->b, ", which retains ");
      put_bytes(r, h->retained);
      if (r->b.oom)
	return -1;
      fprintf(r->out, "%s\n", r->b.data);
    }
  }
  if (nc > MP_RETAINER_CHAINS)
    fprintf(r->out, "\t(%zu more chains)\n", nc - MP_RETAINER_CHAINS);
  if (unreached) {
    r->b.len = 0;
    put_bytes(r, unreached_bytes);
    fprintf(r->out, "\t%llu %s, %s: reached from no root (garbage the next "
	    "collection frees)\n", (unsigned long long)unreached,
	    unreached == 1 ? "object" : "objects", r->b.data);
  }
  fputc('\n', r->out);
  return 0;
}

static void json_u64(struct ret *r, const char *key, uint64_t v)
{
  mp_buf_printf(r->jo, ", \"%s\": %llu", key, (unsigned long long)v);
}

/* b's text as a JSON string into jo. */
static void json_b(struct ret *r)
{
  mp_buf_json_string(r->jo, r->b.data ? r->b.data : "", r->b.len);
}

/* A location's figures and its chains (every one, or r->chains), as
** JSON into r->jo; to out unless it is the page's. */
static int json_location(struct ret *r, uint32_t loc, uint64_t objects,
			 uint64_t bytes, uint64_t retained, uint64_t unreached,
			 uint64_t unreached_bytes, const struct chain *c,
			 size_t nc)
{
  const struct mp_graph *g = r->g;
  struct mp_buf *j = r->jo;
  size_t i, shown = r->chains && nc > r->chains ? r->chains : nc;
  if (j == &r->j)
    j->len = 0;
  mp_buf_str(j, r->nshown++ ? ",\n    {\"location\": " :
			       "\n    {\"location\": ");
  r->b.len = 0;
  name_loc(r, loc);
  json_b(r);
  if (r->row)
    json_u64(r, "row", r->row[loc]);
  json_u64(r, "objects", objects);
  json_u64(r, "bytes", bytes);
  json_u64(r, "retained", retained);
  json_u64(r, "unreached_objects", unreached);
  json_u64(r, "unreached_bytes", unreached_bytes);
  if (r->chains)
    json_u64(r, "chains_all", nc);
  mp_buf_str(j, ",\n     \"chains\": [");
  for (i = 0; i < shown; i++) {
    mp_buf_str(j, i ? ",\n      {\"chain\": " : "\n      {\"chain\": ");
    if (r->cut)
      mp_html_json_name(j, c[i].text, strlen(c[i].text), r->cut);
    else
      mp_buf_json_string(j, c[i].text, strlen(c[i].text));
    json_u64(r, "objects", c[i].objects);
    json_u64(r, "bytes", c[i].bytes);
    if (c[i].holder != MP_GRAPH_NONE && c[i].holder != 0) {
      const struct mp_graph_node *h = &g->nodes[c[i].holder];
      mp_buf_str(j, ", \"holder\": {\"kind\": ");
      r->b.len = 0;
      mp_name_kind(&r->b, h->kind);
      json_b(r);
      mp_buf_str(j, ", \"location\": ");
      r->b.len = 0;
      name_loc(r, h->loc);
      json_b(r);
      json_u64(r, "retained", h->retained);
      mp_buf_str(j, "}");
    }
    mp_buf_str(j, "}");
  }
  mp_buf_str(j, shown ? "\n     ]}" : "]}");
  if (j->oom || r->b.oom)
    return -1;
  if (j == &r->j)
    fwrite(j->data, 1, j->len, r->out);
  return 0;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
  return (h ^ v) * 1099511628211ull;
}

static uint64_t mix_str(uint64_t h, const char *s)
{
  for (; *s; s++)
    h = mix(h, (unsigned char)*s);
  return mix(h, 0x100);
}

/* A hash of the shape of v's chain: what chain_of writes, from the edges
** (indices folded), without writing it. */
static uint64_t shape_of(const struct mp_graph *g, uint32_t v)
{
  uint64_t h = 1469598103934665603ull;
  uint32_t n = g->nodes[v].depth;
  for (; g->nodes[v].parent != MP_GRAPH_NONE && n; n--) {
    const struct mp_graph_edge *e = &g->edges[g->nodes[v].parent];
    const char *nm = e->name != MP_GRAPH_NO_NAME ? g->names + e->name : "";
    v = e->from;
    if (in_upvalue_step(g, e))
      continue;
    h = mix(h, e->tag);
    switch (e->tag) {
    case LJM_GRAPH_ROOT: case LJM_GRAPH_FIELD:
      h = mix_str(h, nm);
      break;
    case LJM_GRAPH_SLOT:
      h = mix_str(mix(h, e->loc), nm);
      break;
    case LJM_GRAPH_UPVAL:
      h = mix_str(mix(mix(h, g->nodes[e->from].loc), e->num), nm);
      break;
    case LJM_GRAPH_PART:
      h = mix(h, g->nodes[e->to].kind);
      break;
    default:
      break;
    }
  }
  return h;
}

/* The retainers of location loc: its objects' chains grouped by shape
** (a hash of it; the text is written once per shape). */
static int location(struct ret *r, uint32_t loc, uint32_t *memo,
		    uint32_t gen, uint32_t *walk)
{
  const struct mp_graph *g = r->g;
  struct chain *c = NULL;
  struct mp_map shapes;	/* A shape's hash -> a: its chain's index. */
  size_t nc = 0, capc = 0, i;
  uint32_t *path = NULL, pcap = 0, v, k;
  uint64_t objects = 0, bytes = 0, retained = 0, unreached = 0,
	   unreached_bytes = 0;
  int rc = -1;

  mp_map_init(&shapes);
  /* Its nodes, in the graph's order. */
  for (k = r->first[loc]; k < r->first[loc + 1]; k++) {
    const struct mp_graph_node *n = &g->nodes[v = r->nodes[k]];
    struct mp_map_entry *e;
    uint32_t holder;
    int added;
    objects++;
    bytes += n->size;
    if (n->depth == UINT32_MAX) {
      unreached++;
      unreached_bytes += n->size;
      continue;
    }
    if (!dominated(g, v, loc, memo, gen, walk))
      retained += n->retained;
    holder = n->parent != MP_GRAPH_NONE ? g->edges[n->parent].from
					: MP_GRAPH_NONE;
    if (!(e = mp_map_insert(&shapes, shape_of(g, v), &added)))
      goto out;
    if (!added) {
      struct chain *same = &c[e->a];
      same->objects++;
      same->bytes += n->size;
      if (same->holder != holder)
	same->holder = MP_GRAPH_NONE;
      continue;
    }
    e->a = nc;
    if (chain_of(r, v, &path, &pcap) < 0)
      goto out;
    if (nc == capc) {
      struct chain *q;
      capc = capc ? capc * 2 : 64;
      if (!(q = realloc(c, capc * sizeof(*c))))
	goto out;
      c = q;
    }
    if (!(c[nc].text = strdup(r->b.data ? r->b.data : "")))
      goto out;
    c[nc].objects = 1;
    c[nc].bytes = n->size;
    c[nc].holder = holder;
    nc++;
  }
  if (nc)
    qsort(c, nc, sizeof(*c), by_bytes);

  if (r->json) {
    if (json_location(r, loc, objects, bytes, retained, unreached,
		      unreached_bytes, c, nc) < 0)
      goto out;
  } else if (text_location(r, loc, objects, bytes, retained, unreached,
			   unreached_bytes, c, nc) < 0) {
    goto out;
  }
  rc = 0;
out:
  for (i = 0; i < nc; i++)
    free(c[i].text);
  free(c);
  free(path);
  mp_map_free(&shapes);
  return rc;
}

/* Does location loc's name match what --retainers= gave: the whole name,
** or a part of it. */
static int matches(struct ret *r, uint32_t loc, const char *want, int whole)
{
  r->b.len = 0;
  name_loc(r, loc);
  if (r->b.oom || !r->b.data)
    return 0;
  return whole ? !strcmp(r->b.data, want) : strstr(r->b.data, want) != NULL;
}

/* The objects that retain the most (the root's children in the dominator
** tree and below), each with its chain: what would be freed if it went.
** Without --retainers=LOCATION, before the locations. */
#define MP_RETAINER_OBJECTS 10

static int largest(struct ret *r)
{
  const struct mp_graph *g = r->g;
  uint32_t top[MP_RETAINER_OBJECTS], n = 0, v, i, *path = NULL, pcap = 0;
  int rc = -1;
  for (v = 1; v < g->nnodes; v++) {
    uint64_t ret = g->nodes[v].retained;
    if (!ret || g->nodes[v].depth == UINT32_MAX)
      continue;
    if (n == MP_RETAINER_OBJECTS && g->nodes[top[n - 1]].retained >= ret)
      continue;
    i = n < MP_RETAINER_OBJECTS ? n++ : n - 1;
    while (i > 0 && g->nodes[top[i - 1]].retained < ret) {
      top[i] = top[i - 1];
      i--;
    }
    top[i] = v;
  }
  if (!r->json)
    fputs("LARGEST RETAINERS:\n", r->out);
  else
    fputs(",\n   \"largest\": [", r->out);
  for (i = 0; i < n; i++) {
    const struct mp_graph_node *o = &g->nodes[top[i]];
    r->j.len = 0;
    if (r->json) {
      if (chain_of(r, top[i], &path, &pcap) < 0)
	goto out;
      mp_buf_str(&r->j, i ? ",\n    {\"chain\": " : "\n    {\"chain\": ");
      json_b(r);
      mp_buf_str(&r->j, ", \"kind\": ");
      r->b.len = 0;
      mp_name_kind(&r->b, o->kind);
      json_b(r);
      mp_buf_str(&r->j, ", \"location\": ");
      r->b.len = 0;
      name_loc(r, o->loc);
      json_b(r);
      json_u64(r, "bytes", o->size);
      json_u64(r, "retained", o->retained);
      mp_buf_str(&r->j, "}");
    } else {
      mp_buf_str(&r->j, "\t");
      mp_name_bytes(&r->j, o->retained, r->human);
      mp_buf_str(&r->j, ": one ");
      mp_name_kind(&r->j, o->kind);
      mp_buf_str(&r->j, " made at ");
      r->b.len = 0;
      name_loc(r, o->loc);
      mp_buf_add(&r->j, r->b.data ? r->b.data : "", r->b.len);
      mp_buf_str(&r->j, ": ");
      if (chain_of(r, top[i], &path, &pcap) < 0)
	goto out;
      mp_buf_add(&r->j, r->b.data ? r->b.data : "", r->b.len);
      mp_buf_str(&r->j, "\n");
    }
    if (r->j.oom || r->b.oom)
      goto out;
    fwrite(r->j.data, 1, r->j.len, r->out);
  }
  if (r->json)
    fputs(n ? "\n   ]" : "]", r->out);
  else
    fputc('\n', r->out);
  rc = 0;
out:
  free(path);
  return rc;
}

/* For sorting the picked locations, most bytes first. */
static const uint64_t *sort_held;

static int by_held(const void *a, const void *b)
{
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  if (sort_held[x] != sort_held[y])
    return sort_held[x] > sort_held[y] ? -1 : 1;
  return x < y ? -1 : x > y;
}

/* The locations o asks for, most bytes in the graph first, each written
** as r says (text or JSON). */
static int run(struct ret *r, const struct mp_report_opts *o)
{
  const struct mp_graph *g = r->g;
  uint32_t nlocs = mp_profile_nlocs(r->p), loc, *walk = NULL, *picked = NULL,
	   npicked = 0, i, v, *nodes = NULL, *first = NULL;
  uint64_t *held = NULL;
  uint32_t *memo = NULL;
  int rc = -1, whole = 0;
  uint64_t top = o->top ? o->top : MP_RETAINER_LOCS;

  memo = calloc((size_t)g->nnodes + 1, sizeof(uint32_t));
  walk = malloc(((size_t)g->nnodes + 1) * sizeof(uint32_t));
  held = calloc((size_t)nlocs + 1, sizeof(uint64_t));
  picked = malloc(((size_t)nlocs + 1) * sizeof(uint32_t));
  nodes = malloc(((size_t)g->nnodes + 1) * sizeof(uint32_t));
  first = calloc((size_t)nlocs + 2, sizeof(uint32_t));
  if (!memo || !walk || !held || !picked || !nodes || !first)
    goto out;
  for (v = 1; v < g->nnodes; v++)
    if (g->nodes[v].loc < nlocs) {
      held[g->nodes[v].loc] += g->nodes[v].size;
      first[g->nodes[v].loc + 2]++;
    }
  /* The nodes by location (a counting sort: in the graph's order within
  ** each), so that each location's pass reads its own nodes only. */
  for (loc = 0; loc < nlocs; loc++)
    first[loc + 2] += first[loc + 1];
  for (v = 1; v < g->nnodes; v++)
    if (g->nodes[v].loc < nlocs)
      nodes[first[g->nodes[v].loc + 1]++] = v;
  r->nodes = nodes;
  r->first = first;
  if (o->retainers_of) {
    /* The location named whole, else every one whose name has it. */
    for (loc = 0; loc < nlocs; loc++)
      if (held[loc] && matches(r, loc, o->retainers_of, 1))
	picked[npicked++] = loc, whole = 1;
    for (loc = 0; !whole && loc < nlocs; loc++)
      if (held[loc] && matches(r, loc, o->retainers_of, 0))
	picked[npicked++] = loc;
  } else {
    for (loc = 0; loc < nlocs; loc++)
      if (held[loc] && (!r->row || r->row[loc] != UINT32_MAX))
	picked[npicked++] = loc;
  }
  sort_held = held;
  qsort(picked, npicked, sizeof(*picked), by_held);
  if (!o->retainers_of && npicked > top)
    npicked = (uint32_t)top;
  for (i = 0; i < npicked; i++)	/* Generations from 1: memo is 0. */
    if (location(r, picked[i], memo, i + 1, walk) < 0)
      goto out;
  if (!npicked && o->retainers_of && !r->json)
    fprintf(r->out, "(no object of the graph was made at a location named "
	    "'%s')\n", o->retainers_of);
  rc = 0;
out:
  free(memo);
  free(walk);
  free(held);
  free(picked);
  free(nodes);
  free(first);
  r->nodes = r->first = NULL;
  return rc;
}

int mp_report_retainers(FILE *out, struct mp_profile *p,
			const struct mp_report_opts *o, struct mp_aliases *al)
{
  struct ret r;
  int rc;

  memset(&r, 0, sizeof(r));
  r.out = out;
  r.p = p;
  r.human = o->human;
  r.al = al;
  r.g = mp_profile_graph(p);
  if (!r.g) {
    if (mp_profile_oom(p))
      return -1;
    fputs("RETAINERS: no snapshot of the input has a heap graph ("
	  MP_GRAPH_HOWTO ")\n", out);
    return 0;
  }
  put_bytes(&r, r.g->reached_bytes);
  if (r.b.oom)
    return -1;
  fprintf(out, "RETAINERS: the heap graph of snapshot %u: %u objects, %u "
	  "references; the roots reach %u objects, %s\n", r.g->snapshot,
	  r.g->nnodes - 1, r.g->nedges, r.g->reached - 1, r.b.data);
  if (!r.g->complete)
    fputs("(the stream ends inside the graph: the references after the cut "
	  "are missing, and objects only they reach show as reached from no "
	  "root)\n", out);
  fputc('\n', out);
  rc = (o->retainers_of || largest(&r) == 0) ? run(&r, o) : -1;
  mp_buf_free(&r.b);
  mp_buf_free(&r.j);
  return rc;
}

/* The graph's figures, the "retainers" object's first members, into b. */
static void json_head(struct mp_buf *b, const struct mp_graph *g)
{
  mp_buf_printf(b, "{\"snapshot\": %u, \"complete\": %s, \"objects\": %u, "
		"\"references\": %u, \"reached_objects\": %u, "
		"\"reached_bytes\": %llu, \"root_retained\": %llu",
		g->snapshot, g->complete ? "true" : "false", g->nnodes - 1,
		g->nedges, g->reached - 1,
		(unsigned long long)g->reached_bytes,
		(unsigned long long)g->nodes[0].retained);
}

int mp_report_retainers_json(FILE *out, struct mp_profile *p,
			     const struct mp_report_opts *o)
{
  struct ret r;
  int rc;

  memset(&r, 0, sizeof(r));
  r.out = out;
  r.p = p;
  r.json = 1;
  r.jo = &r.j;
  r.g = mp_profile_graph(p);
  if (!r.g) {
    if (mp_profile_oom(p))
      return -1;
    fputs(",\n  \"retainers\": null", out);
    return 0;
  }
  mp_buf_str(&r.j, ",\n  \"retainers\": ");
  json_head(&r.j, r.g);
  rc = -1;
  if (!r.j.oom)
    fwrite(r.j.data, 1, r.j.len, out);
  if (!r.j.oom && largest(&r) == 0) {
    fputs(",\n   \"locations\": [", out);
    rc = run(&r, o);
    fputs(r.nshown ? "\n   ]}" : "]}", out);
  }
  mp_buf_free(&r.b);
  mp_buf_free(&r.j);
  return rc;
}

int mp_retainers_page(struct mp_buf *b, struct mp_profile *p,
		      const uint32_t *row, uint64_t locations, size_t chains,
		      size_t cut)
{
  struct mp_report_opts o;
  struct ret r;
  int rc;

  memset(&r, 0, sizeof(r));
  memset(&o, 0, sizeof(o));
  r.p = p;
  r.json = 1;
  r.jo = b;
  r.row = row;
  r.chains = chains;
  r.cut = cut;
  r.g = mp_profile_graph(p);
  if (!r.g)
    return mp_profile_oom(p) ? -1 : 0;
  mp_buf_str(b, ",\n\"retainers\": ");
  json_head(b, r.g);
  mp_buf_str(b, ",\n   \"locations\": [");
  o.top = locations;
  rc = run(&r, &o);
  mp_buf_str(b, r.nshown ? "\n   ]}" : "]}");
  mp_buf_free(&r.b);
  return rc < 0 || b->oom ? -1 : 0;
}
