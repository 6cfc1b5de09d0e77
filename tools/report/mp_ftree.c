/*
** The frame tree of the flame graphs: see mp_ftree.h. A stream's stack
** nodes are renamed as the folded format names them; a version-3
** location's folded frames are split at ';', which mp_folded_frames
** never leaves inside a name.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_ftree.h"
#include "mp_report.h"

uint32_t mp_ftree_hash(uint32_t parent, const char *s, size_t len)
{
  uint32_t h = 2166136261u ^ parent;
  size_t i;
  for (i = 0; i < len; i++)
    h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h ^ (h >> 15);
}

static int grow_slots(struct mp_ftree *t)
{
  uint32_t n = t->nslots ? t->nslots * 2 : 1024, i;
  uint32_t *s = calloc(n, sizeof(*s));
  if (!s)
    return -1;
  for (i = 1; i < t->n; i++) {
    uint32_t h = t->nodes[i].hash & (n - 1);
    while (s[h])
      h = (h + 1) & (n - 1);
    s[h] = i + 1;
  }
  free(t->slots);
  t->slots = s;
  t->nslots = n;
  return 0;
}

/* The child of parent called name (the last names.len - at bytes of the
** names buffer, dropped again when the child exists), made when new;
** 0 when out of memory. */
static uint32_t child(struct mp_ftree *t, uint32_t parent, size_t at,
		      enum mp_ftree_kind kind)
{
  const char *name = t->names.data + at;
  size_t len = t->names.len - at;
  uint32_t full, h, id;

  if (t->names.oom)
    return 0;
  if ((uint64_t)t->n * 2 >= t->nslots && grow_slots(t) < 0)
    return 0;
  full = mp_ftree_hash(parent, name, len);
  h = full & (t->nslots - 1);
  while ((id = t->slots[h])) {
    struct mp_ftree_node *x = &t->nodes[id - 1];
    if (x->hash == full && x->parent == parent && x->name_len == len &&
	!memcmp(t->names.data + x->name_at, name, len)) {
      t->names.len = at;	/* Known: forget the copy. */
      return id - 1;
    }
    h = (h + 1) & (t->nslots - 1);
  }
  if (t->n == t->cap) {
    uint32_t ncap = t->cap * 2;
    struct mp_ftree_node *nn = realloc(t->nodes, ncap * sizeof(*nn));
    if (!nn)
      return 0;
    t->nodes = nn;
    t->cap = ncap;
  }
  id = t->n++;
  memset(&t->nodes[id], 0, sizeof(t->nodes[id]));
  t->nodes[id].parent = parent;
  t->nodes[id].name_at = at;
  t->nodes[id].name_len = len;
  t->nodes[id].kind = (uint8_t)kind;
  t->nodes[id].hash = full;
  t->slots[h] = id + 1;
  return id;
}

int mp_ftree_init(struct mp_ftree *t)
{
  memset(t, 0, sizeof(*t));
  t->cap = 256;
  if (!(t->nodes = malloc(t->cap * sizeof(*t->nodes))))
    return -1;
  memset(&t->nodes[0], 0, sizeof(t->nodes[0]));
  t->nodes[0].kind = MP_FK_ROOT;
  t->n = 1;
  return 0;
}

void mp_ftree_free(struct mp_ftree *t)
{
  free(t->nodes);
  free(t->slots);
  free(t->order);
  mp_buf_free(&t->names);
}

/* Add v to id and everything above it. */
static void add_up(struct mp_ftree *t, uint32_t id, const uint64_t *v)
{
  int k;
  for (;;) {
    for (k = 0; k < MP_FV_N; k++)
      t->nodes[id].v[k] += v[k];
    if (!id)
      break;
    id = t->nodes[id].parent;
  }
}

static enum mp_ftree_kind kind_of_loc(const struct mp_profile *p,
				      uint32_t loc)
{
  struct mp_loc l;
  mp_profile_loc(p, loc, &l);
  switch (mp_loc_kinds[l.kind].src) {
  case LJM_SRC_LFUNC: return MP_FK_LUA;
  case LJM_SRC_CFUNC: return MP_FK_C;
  case LJM_SRC_TRACE: return MP_FK_TRACE;
  default: return MP_FK_INTERNAL;
  }
}

static enum mp_ftree_kind kind_of_frame(const struct mp_profile *p,
					const struct mp_frame *f)
{
  switch (f->tag) {
  case LJM_FRAME_LUA: return MP_FK_LUA;
  case LJM_FRAME_FAST: return MP_FK_BUILTIN;
  case LJM_FRAME_C: return MP_FK_C;
  case LJM_FRAME_TRACE: return MP_FK_TRACE;
  case MP_FRAME_LOCATION: return kind_of_loc(p, f->loc);
  default: return MP_FK_INTERNAL;
  }
}

static int wanted(const uint64_t *v, unsigned mask)
{
  int k;
  for (k = 0; k < MP_FV_N; k++)
    if ((mask >> k & 1) && v[k])
      return 1;
  return 0;
}

/*
** The real stacks: of[] maps a stream node to its tree node once (0: not
** yet), so each frame is named once however many stacks pass through it.
*/
static int add_stacks(struct mp_ftree *t, struct mp_profile *p,
		      struct mp_aliases *al, unsigned mask,
		      const uint64_t *at, uint32_t nat)
{
  uint32_t n = mp_profile_nstacks(p), id;
  uint32_t *of = calloc(n, sizeof(*of));
  uint32_t *chain = NULL;
  size_t cap = 0;
  int rc = -1;

  if (!of)
    return -1;
  for (id = 1; id < n; id++) {
    struct mp_stack_counts c;
    struct mp_frame f;
    uint64_t v[MP_FV_N];
    uint32_t up = id, k = 0, parent;

    mp_profile_stack(p, id, &c);
    v[MP_FV_ALLOC_BYTES] = c.alloc_bytes + c.realloc_bytes;
    v[MP_FV_ALLOC_COUNT] = c.n_alloc + c.n_realloc;
    v[MP_FV_HELD_END] = c.held_bytes;
    v[MP_FV_HELD_AT] = at && id < nat ? at[id] : 0;
    if (!wanted(v, mask))
      continue;
    /* Up to the first node already in the tree, then down again. */
    while (up && !of[up]) {
      if (k == cap) {
	size_t ncap = cap ? cap * 2 : 64;
	uint32_t *nc = realloc(chain, ncap * sizeof(*nc));
	if (!nc)
	  goto out;
	chain = nc;
	cap = ncap;
      }
      chain[k++] = up;
      mp_profile_frame(p, up, &f);
      up = f.parent;
    }
    parent = up ? of[up] : 0;
    while (k-- > 0) {
      size_t name_at = t->names.len;
      mp_profile_frame(p, chain[k], &f);
      mp_name_frame(&t->names, p, al, &f, MP_NAME_FRAME);
      if (!(parent = child(t, parent, name_at, kind_of_frame(p, &f))))
	goto out;
      of[chain[k]] = parent;
    }
    add_up(t, parent, v);
  }
  rc = 0;
out:
  free(chain);
  free(of);
  return rc;
}

/* A version-3 stream: each location's folded frames. */
static int add_locations(struct mp_ftree *t, struct mp_profile *p,
			 struct mp_aliases *al, unsigned mask,
			 const uint64_t *at, uint32_t nat)
{
  uint32_t nlocs = mp_profile_nlocs(p), id;
  struct mp_buf line = {0};
  int rc = -1;

  for (id = 0; id < nlocs; id++) {
    struct mp_loc l;
    enum mp_ftree_kind kind;
    uint64_t v[MP_FV_N];
    uint32_t parent = 0;
    size_t from = 0;

    mp_profile_loc_counts(p, id, &l);
    v[MP_FV_ALLOC_BYTES] = l.alloc_bytes + l.realloc_new;
    v[MP_FV_ALLOC_COUNT] = l.n_alloc + l.n_realloc;
    v[MP_FV_HELD_END] = l.held_bytes;
    v[MP_FV_HELD_AT] = at && id < nat ? at[id] : 0;
    if (!wanted(v, mask))
      continue;
    mp_profile_loc(p, id, &l);
    kind = kind_of_loc(p, id);
    line.len = 0;
    mp_folded_frames(&line, p, al, &l);
    if (line.oom)
      goto out;
    while (from <= line.len) {
      const char *semi = memchr(line.data + from, ';', line.len - from);
      size_t end = semi ? (size_t)(semi - line.data) : line.len;
      size_t name_at = t->names.len;
      mp_buf_add(&t->names, line.data + from, end - from);
      if (!(parent = child(t, parent, name_at, kind)))
	goto out;
      from = end + 1;
    }
    add_up(t, parent, v);
  }
  rc = 0;
out:
  mp_buf_free(&line);
  return rc;
}

int mp_ftree_add(struct mp_ftree *t, struct mp_profile *p,
		 struct mp_aliases *al, unsigned mask, const uint64_t *at,
		 uint32_t nat)
{
  int rc = mp_profile_nstacks(p) > 1 ? add_stacks(t, p, al, mask, at, nat) :
	   add_locations(t, p, al, mask, at, nat);
  return rc < 0 || t->names.oom ? -1 : 0;
}

static const struct mp_ftree *sort_tree;	/* For the comparison. */

static int node_cmp(const void *a, const void *b)
{
  const struct mp_ftree_node *x = &sort_tree->nodes[*(const uint32_t *)a];
  const struct mp_ftree_node *y = &sort_tree->nodes[*(const uint32_t *)b];
  size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
  int c;
  if (x->parent != y->parent)
    return x->parent < y->parent ? -1 : 1;
  c = memcmp(sort_tree->names.data + x->name_at,
	     sort_tree->names.data + y->name_at, n);
  if (c)
    return c;
  return x->name_len < y->name_len ? -1 : x->name_len > y->name_len;
}

int mp_ftree_sort(struct mp_ftree *t)
{
  uint32_t i;
  if (!(t->order = malloc(t->n * sizeof(*t->order))))
    return -1;
  for (i = 1; i < t->n; i++)
    t->order[i - 1] = i;
  sort_tree = t;
  qsort(t->order, t->n - 1, sizeof(*t->order), node_cmp);
  sort_tree = NULL;
  for (i = t->n - 1; i-- > 0;) {
    struct mp_ftree_node *up = &t->nodes[t->nodes[t->order[i]].parent];
    up->first = i;
    up->nchildren++;
  }
  return 0;
}
