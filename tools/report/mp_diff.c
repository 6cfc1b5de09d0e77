/*
** `ljmprof diff`: matching locations by what they are, and the
** arithmetic; see mp_diff.h.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_diff.h"

void mp_diff_init(struct mp_diff *d, enum mp_diff_keys how)
{
  memset(d, 0, sizeof(*d));
  d->how = how;
  mp_strings_init(&d->keys);
  mp_strings_init(&d->pkeys);
}

void mp_diff_free(struct mp_diff *d)
{
  mp_strings_free(&d->keys);
  free(d->rows);
  mp_strings_free(&d->pkeys);
  free(d->paths);
  memset(d, 0, sizeof(*d));
}

/* The key by name: what the location is, without its addresses. */
static void name_key(struct mp_buf *out, const struct mp_profile *p,
		     const struct mp_loc *l)
{
  switch ((enum mp_loc_kind)l->kind) {
  case MP_LOC_LUA:
  case MP_LOC_INTERNAL:
  case MP_LOC_START:
    mp_name_location(out, p, NULL, l, MP_NAME_PLAIN);
    break;
  case MP_LOC_C:
    /* The symbol, or object+0xoffset, without the run's address. */
    mp_name_string(out, p, NULL, l->str, MP_NAME_PLAIN);
    break;
  case MP_LOC_TRACE:
    /* Where it starts, not its number. */
    mp_buf_str(out, "TRACE started at ");
    mp_name_string(out, p, NULL, l->str, MP_NAME_PLAIN);
    mp_buf_colon_u64(out, l->line);
    break;
  case MP_LOC_LUA_UNKNOWN:
  case MP_LOC_C_UNKNOWN:
  case MP_LOC_TRACE_NOPROTO:
  case MP_LOC_TRACE_UNKNOWN:
  case MP_LOC_NKINDS:
    /* Only an address, which another run does not share. */
    mp_buf_str(out, mp_loc_kinds[l->kind < MP_LOC_NKINDS ? l->kind : 0]
		      .prefix);
    mp_buf_str(out, "?");
    break;
  }
}

void mp_diff_key(struct mp_buf *out, const struct mp_profile *p,
		 const struct mp_loc *l, enum mp_diff_keys how)
{
  struct mp_buf name = {0};

  if (how == MP_DIFF_KEY_NAME) {
    name_key(out, p, l);
    return;
  }
  if (l->kind == MP_LOC_LUA) {
    mp_folded_frames(out, p, NULL, l);
    return;
  }
  /* The others as the folded report roots them, named by their key. */
  switch (mp_loc_kinds[l->kind < MP_LOC_NKINDS ? l->kind : 0].src) {
  case LJM_SRC_LFUNC:
    mp_buf_str(out, "Lua;");
    break;
  case LJM_SRC_CFUNC:
    mp_buf_str(out, "C;");
    break;
  case LJM_SRC_TRACE:
    mp_buf_str(out, "JIT;");
    break;
  default:
    break;
  }
  name_key(&name, p, l);
  if (name.oom) {
    out->oom = 1;
  } else if (name.data) {
    mp_name_escape(out, name.data, name.len, MP_ESC_FRAME);
  }
  mp_buf_free(&name);
}

/* The row of key in a table (keys, rows), added if new; NULL when out
** of memory. */
static struct mp_diff_row *table_row(struct mp_strings *keys,
				     struct mp_diff_row **rows, uint32_t *nrows,
				     uint32_t *cap, const char *key, size_t len)
{
  uint32_t id = mp_strings_intern(keys, key, len);

  if (id == UINT32_MAX)
    return NULL;
  if (id == *nrows) {
    if (*nrows == *cap) {
      uint32_t ncap = *cap ? *cap * 2 : 64;
      struct mp_diff_row *nr = realloc(*rows, ncap * sizeof(*nr));
      if (!nr || ncap <= *cap)
	return NULL;
      *rows = nr;
      *cap = ncap;
    }
    memset(&(*rows)[id], 0, sizeof((*rows)[id]));
    (*rows)[id].key = id;
    (*nrows)++;
  }
  return &(*rows)[id];
}

static struct mp_diff_row *row_of(struct mp_diff *d, const char *key,
				  size_t len)
{
  return table_row(&d->keys, &d->rows, &d->nrows, &d->cap, key, len);
}

static void add_counts(struct mp_diff_counts *c, const struct mp_loc *l)
{
  c->alloc_bytes += l->alloc_bytes + l->realloc_new;
  c->allocs += l->n_alloc + l->n_realloc;
  c->held_bytes += l->held_bytes;
  c->held_blocks += l->held_blocks;
}

/* A frame's key, escaped as a folded frame: what it is, never where. */
static void frame_key(struct mp_buf *out, struct mp_buf *tmp,
		      const struct mp_profile *p, const struct mp_frame *f)
{
  struct mp_loc l;

  tmp->len = 0;
  mp_buf_add(tmp, "", 0);
  switch (f->tag) {
  case LJM_FRAME_FAST:
  case LJM_FRAME_CUT:
    mp_name_frame(tmp, p, NULL, f, MP_NAME_PLAIN);
    break;
  default:
    mp_profile_loc(p, f->loc, &l);
    name_key(tmp, p, &l);
    if (f->tag == LJM_FRAME_LUA && f->name != MP_NO_STRING) {
      mp_buf_str(tmp, " (");
      mp_name_string(tmp, p, NULL, f->name, MP_NAME_PLAIN);
      mp_buf_add(tmp, ")", 1);
    }
    break;
  }
  if (tmp->oom)
    out->oom = 1;
  else if (tmp->data)
    mp_name_escape(out, tmp->data, tmp->len, MP_ESC_FRAME);
}

/* Every stack of p with figures as a path row of side. 0, or -1. */
static int add_paths(struct mp_diff *d, int side, const struct mp_profile *p)
{
  struct mp_buf key = {0}, tmp = {0}, lkey = {0};
  uint32_t n = mp_profile_nstacks(p), id, *chain = NULL, cap = 0, k;
  int rc = -1;

  for (id = 1; id < n; id++) {
    struct mp_stack_counts c;
    struct mp_diff_counts dc;
    struct mp_diff_row *r, *lr;
    struct mp_frame f;
    struct mp_loc l;
    uint32_t depth = 0, at = id;

    mp_profile_stack(p, id, &c);
    dc.alloc_bytes = c.alloc_bytes + c.realloc_bytes;
    dc.allocs = c.n_alloc + c.n_realloc;
    dc.held_bytes = c.held_bytes;
    dc.held_blocks = c.held_blocks;
    if (!dc.alloc_bytes && !dc.allocs && !dc.held_bytes && !dc.held_blocks)
      continue;	/* Frees only, or an inner node: no path of its own. */
    /* Leaf first, then root first in the key. */
    do {
      if (depth == cap) {
	uint32_t ncap = cap ? cap * 2 : 64;
	uint32_t *nc = realloc(chain, ncap * sizeof(*nc));
	if (!nc)
	  goto out;
	chain = nc;
	cap = ncap;
      }
      chain[depth++] = at;
      mp_profile_frame(p, at, &f);
    } while ((at = f.parent) && depth < n);
    key.len = 0;
    mp_buf_add(&key, "", 0);
    for (k = depth; k-- > 0;) {
      mp_profile_frame(p, chain[k], &f);
      frame_key(&key, &tmp, p, &f);
      if (k)
	mp_buf_add(&key, ";", 1);
    }
    /* The location its events are charged to, keyed as the rows are. */
    mp_profile_frame(p, id, &f);
    mp_profile_loc(p, f.leaf, &l);
    lkey.len = 0;
    mp_buf_add(&lkey, "", 0);
    mp_diff_key(&lkey, p, &l, d->how);
    if (key.oom || lkey.oom || !(lr = row_of(d, lkey.data, lkey.len)))
      goto out;
    k = (uint32_t)(lr - d->rows);
    if (!(r = table_row(&d->pkeys, &d->paths, &d->npaths, &d->pcap, key.data,
			key.len)))
      goto out;
    if (!r->in[0] && !r->in[1]) {
      r->loc = k;
      r->bare = depth == 1 && f.tag == MP_FRAME_LOCATION;
    }
    r->in[side] = 1;
    r->side[side].alloc_bytes += dc.alloc_bytes;
    r->side[side].allocs += dc.allocs;
    r->side[side].held_bytes += dc.held_bytes;
    r->side[side].held_blocks += dc.held_blocks;
  }
  rc = 0;
out:
  free(chain);
  mp_buf_free(&key);
  mp_buf_free(&tmp);
  mp_buf_free(&lkey);
  return rc;
}

int mp_diff_add(struct mp_diff *d, int side, const struct mp_profile *p)
{
  struct mp_buf key = {0};
  uint32_t id, n = mp_profile_nlocs(p);
  int rc = -1;

  for (id = 0; id < n; id++) {
    struct mp_diff_row *r;
    struct mp_loc l;
    /* A location that only the frames of call stacks name has no event
    ** of its own: no stream without stacks has it. Live at start holds
    ** blocks without an event of its own: in the totals, as stat's and
    ** report's. */
    mp_profile_loc(p, id, &l);
    if (!mp_profile_measure(p, id, MP_MEASURE_EVENTS) &&
	l.kind != MP_LOC_START)
      continue;
    key.len = 0;
    mp_buf_add(&key, "", 0);
    mp_diff_key(&key, p, &l, d->how);
    if (key.oom || !(r = row_of(d, key.data, key.len)))
      goto out;
    r->in[side] = 1;
    r->lua |= l.kind == MP_LOC_LUA || l.kind == MP_LOC_TRACE;
    add_counts(&r->side[side], &l);
    add_counts(&d->total[side], &l);
  }
  /* A side is by path only when all of it has stacks. */
  if (mp_profile_total(p)->stack_files == mp_profile_total(p)->files &&
      mp_profile_total(p)->stack_files) {
    if (add_paths(d, side, p) < 0)
      goto out;
    d->stacks[side] = 1;
  } else if (!d->nostacks[side] || mp_profile_total(p)->stack_files) {
    /* 2: some of its files have stacks. */
    d->nostacks[side] = mp_profile_total(p)->stack_files ? 2 : 1;
  }
  rc = 0;
out:
  if (rc < 0)
    d->oom = 1;
  mp_buf_free(&key);
  return rc;
}

uint64_t mp_diff_value(const struct mp_diff_counts *c, enum mp_value v)
{
  switch (v) {
  case MP_VALUE_ALLOC_COUNT:
    return c->allocs;
  case MP_VALUE_HELD_BYTES:
    return c->held_bytes;
  case MP_VALUE_ALLOC_BYTES:
  default:
    return c->alloc_bytes;
  }
}

int mp_diff_delta(const struct mp_diff_counts *old,
		  const struct mp_diff_counts *new_, enum mp_value v,
		  uint64_t *mag)
{
  uint64_t a = mp_diff_value(old, v), b = mp_diff_value(new_, v);
  if (b >= a) {
    *mag = b - a;
    return b > a;
  }
  *mag = a - b;
  return -1;
}

uint32_t mp_diff_lua_shared(const struct mp_diff *d, int has[2])
{
  uint32_t i, shared = 0;
  has[0] = has[1] = 0;
  for (i = 0; i < d->nrows; i++) {
    const struct mp_diff_row *r = &d->rows[i];
    if (!r->lua)
      continue;
    has[0] |= r->in[0];
    has[1] |= r->in[1];
    shared += r->in[0] && r->in[1];
  }
  return shared;
}

int mp_diff_row_changed(const struct mp_diff_row *r)
{
  const struct mp_diff_counts *a = &r->side[MP_DIFF_OLD];
  const struct mp_diff_counts *b = &r->side[MP_DIFF_NEW];
  return a->alloc_bytes != b->alloc_bytes || a->allocs != b->allocs ||
	 a->held_bytes != b->held_bytes || a->held_blocks != b->held_blocks;
}

/* The sort's context: qsort has none. One table is sorted at a time. */
static const struct mp_diff_row *sort_rows;
static const struct mp_strings *sort_keys;
static enum mp_value sort_value;

/* -1 when change x is a larger growth than y (sorts first). */
static int cmp_change(const struct mp_diff_row *x, const struct mp_diff_row *y,
		      enum mp_value v)
{
  uint64_t mx, my;
  int sx = mp_diff_delta(&x->side[0], &x->side[1], v, &mx);
  int sy = mp_diff_delta(&y->side[0], &y->side[1], v, &my);
  if (sx != sy)
    return sx > sy ? -1 : 1;
  if (mx == my)
    return 0;
  /* Larger growths first; among shrinks, the smaller first, so that the
  ** largest shrink is last. */
  if (sx >= 0)
    return mx > my ? -1 : 1;
  return mx < my ? -1 : 1;
}

static int cmp_rows(const void *a, const void *b)
{
  static const enum mp_value others[] = {
    MP_VALUE_ALLOC_BYTES, MP_VALUE_HELD_BYTES, MP_VALUE_ALLOC_COUNT
  };
  const struct mp_diff_row *x = &sort_rows[*(const uint32_t *)a];
  const struct mp_diff_row *y = &sort_rows[*(const uint32_t *)b];
  const struct mp_string *kx, *ky;
  size_t i;
  int c = cmp_change(x, y, sort_value);

  for (i = 0; !c && i < sizeof(others) / sizeof(others[0]); i++)
    c = cmp_change(x, y, others[i]);
  if (c)
    return c;
  kx = mp_strings_get(sort_keys, x->key);
  ky = mp_strings_get(sort_keys, y->key);
  c = memcmp(kx->data, ky->data, kx->len < ky->len ? kx->len : ky->len);
  if (c)
    return c;
  return kx->len < ky->len ? -1 : kx->len > ky->len;
}

static void sort_table(const struct mp_diff_row *rows,
		       const struct mp_strings *keys, uint32_t *idx,
		       uint32_t n, enum mp_value v)
{
  sort_rows = rows;
  sort_keys = keys;
  sort_value = v;
  qsort(idx, n, sizeof(*idx), cmp_rows);
  sort_rows = NULL;
  sort_keys = NULL;
}

void mp_diff_sort(const struct mp_diff *d, uint32_t *rows, uint32_t n,
		  enum mp_value v)
{
  sort_table(d->rows, &d->keys, rows, n, v);
}

uint32_t *mp_diff_paths_by_loc(const struct mp_diff *d, enum mp_value v,
			       uint32_t **start)
{
  uint32_t *all = malloc(((size_t)d->npaths + 1) * sizeof(*all));
  uint32_t *out = malloc(((size_t)d->npaths + 1) * sizeof(*out));
  uint32_t *at = calloc((size_t)d->nrows + 2, sizeof(*at));
  uint32_t n = 0, i;

  if (!all || !out || !at) {
    free(all);
    free(out);
    free(at);
    return NULL;
  }
  for (i = 0; i < d->npaths; i++)
    if (mp_diff_row_changed(&d->paths[i]) && !d->paths[i].bare)
      all[n++] = i;
  sort_table(d->paths, &d->pkeys, all, n, v);
  /* Counted by location, then placed in sorted order: each location's
  ** paths stay sorted. */
  for (i = 0; i < n; i++)
    at[d->paths[all[i]].loc + 1]++;
  for (i = 0; i < d->nrows; i++)
    at[i + 1] += at[i];
  for (i = 0; i < n; i++)
    out[at[d->paths[all[i]].loc]++] = all[i];
  /* at[i] is now where location i's paths end: shift back to starts. */
  for (i = d->nrows; i > 0; i--)
    at[i] = at[i - 1];
  at[0] = 0;
  free(all);
  *start = at;
  return out;
}
