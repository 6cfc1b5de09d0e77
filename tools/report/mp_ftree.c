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

/* A parent with more children than this finds them by hash; the others
** by their list, which is in the cache when the parent was just found. */
#define LIST_MAX 8

static void slot_put(struct mp_ftree_slot *s, uint32_t nslots, uint32_t id,
		     uint32_t hash)
{
  uint32_t h = hash & (nslots - 1);
  while (s[h].id)
    h = (h + 1) & (nslots - 1);
  s[h].id = id + 1;
  s[h].hash = hash;
}

/* Room in the slots for more nodes of hashed parents, at most half
** full. */
static int grow_slots(struct mp_ftree *t, uint32_t more)
{
  uint32_t n = t->nslots ? t->nslots : 1024, i;
  struct mp_ftree_slot *s;
  if ((uint64_t)(t->nhashed + more) * 2 < t->nslots)
    return 0;
  while ((uint64_t)(t->nhashed + more) * 2 >= n)
    n *= 2;
  if (!(s = calloc(n, sizeof(*s))))
    return -1;
  for (i = 1; i < t->n; i++)
    if (t->nodes[t->nodes[i].parent].hashed)
      slot_put(s, n, i, t->nodes[i].hash);
  free(t->slots);
  t->slots = s;
  t->nslots = n;
  return 0;
}

/* Room for one more node: 0, or -1 out of memory. */
static int grow_nodes(struct mp_ftree *t)
{
  uint32_t ncap = t->cap * 2;
  struct mp_ftree_node *nn = realloc(t->nodes, ncap * sizeof(*nn));
  if (!nn)
    return -1;
  t->nodes = nn;
  t->cap = ncap;
  return 0;
}

static int same_node(const struct mp_ftree *t, uint32_t id, uint32_t parent,
		     uint32_t full, const char *name, size_t len)
{
  const struct mp_ftree_node *x = &t->nodes[id];
  return x->hash == full && x->parent == parent && x->name_len == len &&
	 !memcmp(t->names.data + x->name_at, name, len);
}

/* The child of parent called name (the last names.len - at bytes of the
** names buffer, dropped again when the child exists), made when new;
** 0 when out of memory. A slot has the node's hash: a probe reads a
** node only when the hash is the same. */
static uint32_t child(struct mp_ftree *t, uint32_t parent, size_t at,
		      enum mp_ftree_kind kind)
{
  const char *name = t->names.data + at;
  size_t len = t->names.len - at;
  struct mp_ftree_node *up;
  uint32_t full, h = 0, id;

  if (t->names.oom)
    return 0;
  full = mp_ftree_hash(parent, name, len);
  if (!t->nodes[parent].hashed) {
    for (id = t->nodes[parent].kid; id; id = t->nodes[id].sib)
      if (same_node(t, id, parent, full, name, len)) {
	t->names.len = at;	/* Known: forget the copy. */
	return id;
      }
  } else {
    if (grow_slots(t, 1) < 0)
      return 0;
    h = full & (t->nslots - 1);
    while ((id = t->slots[h].id)) {
      if (t->slots[h].hash == full &&
	  same_node(t, id - 1, parent, full, name, len)) {
	t->names.len = at;
	return id - 1;
      }
      h = (h + 1) & (t->nslots - 1);
    }
  }
  if (t->n == t->cap && grow_nodes(t) < 0)
    return 0;
  id = t->n++;
  memset(&t->nodes[id], 0, sizeof(t->nodes[id]));
  t->nodes[id].parent = parent;
  t->nodes[id].name_at = at;
  t->nodes[id].name_len = len;
  t->nodes[id].kind = (uint8_t)kind;
  t->nodes[id].hash = full;
  up = &t->nodes[parent];
  t->nodes[id].sib = up->kid;
  up->kid = id;
  up->nkids++;
  if (up->hashed) {
    t->slots[h].id = id + 1;
    t->slots[h].hash = full;
    t->nhashed++;
  } else if (up->nkids > LIST_MAX) {
    /* Too many for a list: all of them by hash from now on. */
    uint32_t c;
    if (grow_slots(t, up->nkids) < 0)
      return id;	/* Still found in the list. */
    up = &t->nodes[parent];
    up->hashed = 1;
    for (c = up->kid; c; c = t->nodes[c].sib) {
      slot_put(t->slots, t->nslots, c, t->nodes[c].hash);
      t->nhashed++;
    }
  }
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

/* The chain of stack nodes up from one (chain[0] the deepest): grown as
** needed. */
struct chain {
  uint32_t *id;
  size_t cap;
};

/*
** Add v at stream stack node id: its frames, root first, made where new.
** of[] maps a stream node to its tree node once (0: not yet), so each
** frame is named once however many stacks pass through it. 0, or -1
** when out of memory.
*/
static int add_node(struct mp_ftree *t, struct mp_profile *p,
		    struct mp_aliases *al, uint32_t *of, struct chain *ch,
		    uint32_t id, const uint64_t *v)
{
  struct mp_frame f;
  uint32_t up = id, k = 0, parent;

  /* Up to the first node already in the tree, then down again. */
  while (up && !of[up]) {
    if (k == ch->cap) {
      size_t ncap = ch->cap ? ch->cap * 2 : 64;
      uint32_t *nc = realloc(ch->id, ncap * sizeof(*nc));
      if (!nc)
	return -1;
      ch->id = nc;
      ch->cap = ncap;
    }
    ch->id[k++] = up;
    mp_profile_frame(p, up, &f);
    up = f.parent;
  }
  parent = up ? of[up] : 0;
  while (k-- > 0) {
    size_t name_at = t->names.len;
    mp_profile_frame(p, ch->id[k], &f);
    mp_name_frame(&t->names, p, al, &f, MP_NAME_FRAME);
    if (!(parent = child(t, parent, name_at, kind_of_frame(p, &f))))
      return -1;
    of[ch->id[k]] = parent;
  }
  add_up(t, parent, v);
  return 0;
}

/* The real stacks; *of_out, when not NULL, gets of[] (the caller's). */
static int add_stacks(struct mp_ftree *t, struct mp_profile *p,
		      struct mp_aliases *al, unsigned mask,
		      const uint64_t *at, uint32_t nat, uint32_t **of_out)
{
  uint32_t n = mp_profile_nstacks(p), id;
  uint32_t *of = calloc(n, sizeof(*of));
  struct chain ch = {NULL, 0};
  int rc = -1;

  if (!of)
    return -1;
  for (id = 1; id < n; id++) {
    struct mp_stack_counts c;
    uint64_t v[MP_FV_N];

    mp_profile_stack(p, id, &c);
    v[MP_FV_ALLOC_BYTES] = c.alloc_bytes + c.realloc_bytes;
    v[MP_FV_ALLOC_COUNT] = c.n_alloc + c.n_realloc;
    v[MP_FV_HELD_END] = c.held_bytes;
    v[MP_FV_HELD_AT] = at && id < nat ? at[id] : 0;
    if (!wanted(v, mask))
      continue;
    if (add_node(t, p, al, of, &ch, id, v) < 0)
      goto out;
  }
  rc = 0;
out:
  free(ch.id);
  if (rc == 0 && of_out)
    *of_out = of;
  else
    free(of);
  return rc;
}

/* A version-3 stream: each location's folded frames. Locations come in
** the order the stream first named them, so a location's first frames
** are mostly its predecessor's: those (the same bytes under the same
** parent) are the nodes found for it, with no lookup. */
#define PREFIX_DEPTH 8

static int add_locations(struct mp_ftree *t, struct mp_profile *p,
			 struct mp_aliases *al, unsigned mask,
			 const uint64_t *at, uint32_t nat)
{
  uint32_t nlocs = mp_profile_nlocs(p), id;
  struct mp_buf line = {0}, prev = {0};
  /* The previous line's frames: where each ends in prev, its node. */
  size_t prev_end[PREFIX_DEPTH];
  uint32_t prev_node[PREFIX_DEPTH], nprev = 0;
  int rc = -1;

  for (id = 0; id < nlocs; id++) {
    struct mp_loc l;
    enum mp_ftree_kind kind;
    uint64_t v[MP_FV_N];
    uint32_t parent = 0, depth = 0, same = 1;
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
      /* The same frame as the previous line's at this depth, under the
      ** same parent (all frames above it the same too). */
      if (same && depth < nprev && end == prev_end[depth] &&
	  (end == from ||
	   !memcmp(line.data + from, prev.data + from, end - from))) {
	parent = prev_node[depth];
      } else {
	size_t name_at = t->names.len;
	same = 0;
	mp_buf_add(&t->names, line.data + from, end - from);
	if (!(parent = child(t, parent, name_at, kind)))
	  goto out;
      }
      if (depth < PREFIX_DEPTH) {
	prev_end[depth] = end;
	prev_node[depth] = parent;
      }
      depth++;
      from = end + 1;
    }
    add_up(t, parent, v);
    /* This line is the next one's predecessor. */
    nprev = depth < PREFIX_DEPTH ? depth : PREFIX_DEPTH;
    prev.len = 0;
    mp_buf_add(&prev, line.data, line.len);
    if (prev.oom)
      goto out;
  }
  rc = 0;
out:
  mp_buf_free(&line);
  mp_buf_free(&prev);
  return rc;
}

/* A location's folded frames, split at ';', with v at the last. */
static int add_folded(struct mp_ftree *t, struct mp_profile *p,
		      struct mp_aliases *al, uint32_t loc, const uint64_t *v,
		      struct mp_buf *line)
{
  struct mp_loc l;
  enum mp_ftree_kind kind = kind_of_loc(p, loc);
  uint32_t parent = 0;
  size_t from = 0;

  mp_profile_loc(p, loc, &l);
  line->len = 0;
  mp_folded_frames(line, p, al, &l);
  if (line->oom)
    return -1;
  while (from <= line->len) {
    const char *semi = line->len > from
			   ? memchr(line->data + from, ';', line->len - from)
			   : NULL;
    size_t end = semi ? (size_t)(semi - line->data) : line->len;
    size_t name_at = t->names.len;
    mp_buf_add(&t->names, line->data + from, end - from);
    if (!(parent = child(t, parent, name_at, kind)))
      return -1;
    from = end + 1;
  }
  add_up(t, parent, v);
  return 0;
}

int mp_ftree_add_kinds(struct mp_ftree *const trees[MP_NKINDS],
		       struct mp_profile *p, struct mp_aliases *al)
{
  int stacks = mp_profile_nstacks(p) > 1;
  uint32_t n = stacks ? mp_profile_nkindpaths(p) : mp_profile_nkindlocs(p);
  uint32_t *of[MP_NKINDS], i;
  struct chain ch = {NULL, 0};
  struct mp_buf line = {0};
  int rc = -1;

  memset(of, 0, sizeof(of));
  for (i = 0; i < n; i++) {
    struct mp_kind_counts c;
    uint64_t v[MP_FV_N];
    unsigned kind;
    uint32_t at;

    if (stacks)
      mp_profile_kindpath(p, i, &kind, &at, &c);
    else
      mp_profile_kindloc(p, i, &kind, &at, &c);
    if (kind >= MP_NKINDS || !trees[kind])
      continue;
    v[MP_FV_ALLOC_BYTES] = c.alloc_bytes + c.realloc_bytes;
    v[MP_FV_ALLOC_COUNT] = c.n_alloc + c.n_realloc;
    v[MP_FV_HELD_END] = c.held_bytes;
    v[MP_FV_HELD_AT] = 0;
    if (!wanted(v, (1u << MP_FV_N) - 1))
      continue;
    if (!stacks) {
      if (add_folded(trees[kind], p, al, at, v, &line) < 0)
	goto out;
      continue;
    }
    if (!of[kind] && !(of[kind] = calloc(mp_profile_nstacks(p),
					 sizeof(*of[kind]))))
      goto out;
    if (add_node(trees[kind], p, al, of[kind], &ch, at, v) < 0)
      goto out;
  }
  rc = 0;
  for (i = 0; i < MP_NKINDS; i++)
    if (trees[i] && trees[i]->names.oom)
      rc = -1;
out:
  for (i = 0; i < MP_NKINDS; i++)
    free(of[i]);
  free(ch.id);
  mp_buf_free(&line);
  return rc;
}

int mp_ftree_add_map(struct mp_ftree *t, struct mp_profile *p,
		     struct mp_aliases *al, unsigned mask, const uint64_t *at,
		     uint32_t nat, uint32_t **of)
{
  int rc;
  if (of)
    *of = NULL;
  rc = mp_profile_nstacks(p) > 1 ? add_stacks(t, p, al, mask, at, nat, of) :
       add_locations(t, p, al, mask, at, nat);
  return rc < 0 || t->names.oom ? -1 : 0;
}

int mp_ftree_add(struct mp_ftree *t, struct mp_profile *p,
		 struct mp_aliases *al, unsigned mask, const uint64_t *at,
		 uint32_t nat)
{
  return mp_ftree_add_map(t, p, al, mask, at, nat, NULL);
}

uint32_t mp_ftree_append(struct mp_ftree *t, uint32_t parent,
			 const char *name, size_t len,
			 enum mp_ftree_kind kind, const uint64_t *v)
{
  size_t at = t->names.len;
  mp_buf_add(&t->names, name, len);
  if (t->names.oom)
    return 0;
  if (t->n == t->cap && grow_nodes(t) < 0)
    return 0;
  memset(&t->nodes[t->n], 0, sizeof(t->nodes[0]));
  t->nodes[t->n].parent = parent;
  t->nodes[t->n].name_at = at;
  t->nodes[t->n].name_len = len;
  t->nodes[t->n].kind = (uint8_t)kind;
  t->nodes[t->n].hash = mp_ftree_hash(parent, name, len);
  memcpy(t->nodes[t->n].v, v, sizeof(t->nodes[0].v));
  return t->n++;
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

/* order[] of the nodes keep() keeps (all when keep is NULL), by
** (parent, name); each parent's first and nchildren. */
static int sort_nodes(struct mp_ftree *t,
		      int (*keep)(const struct mp_ftree *, uint32_t))
{
  uint32_t i, n = 0;
  if (!(t->order = malloc(t->n * sizeof(*t->order))))
    return -1;
  for (i = 1; i < t->n; i++)
    if (!keep || keep(t, i))
      t->order[n++] = i;
  sort_tree = t;
  qsort(t->order, n, sizeof(*t->order), node_cmp);
  sort_tree = NULL;
  for (i = n; i-- > 0;) {
    struct mp_ftree_node *up = &t->nodes[t->nodes[t->order[i]].parent];
    up->first = i;
    up->nchildren++;
  }
  return 0;
}

int mp_ftree_sort(struct mp_ftree *t)
{
  return sort_nodes(t, NULL);
}

int mp_ftree_sort_some(struct mp_ftree *t,
		       int (*keep)(const struct mp_ftree *, uint32_t))
{
  return sort_nodes(t, keep);
}

uint32_t *mp_ftree_sizes(const struct mp_ftree *t)
{
  uint32_t *k = malloc(((size_t)t->n + 1) * sizeof(*k)), i;
  if (!k)
    return NULL;
  for (i = 0; i < t->n; i++)
    k[i] = 1;
  /* A node's parent was made before it. */
  for (i = t->n; i-- > 1;)
    k[t->nodes[i].parent] += k[i];
  return k;
}
