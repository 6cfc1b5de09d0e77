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
}

void mp_diff_free(struct mp_diff *d)
{
  mp_strings_free(&d->keys);
  free(d->rows);
  memset(d, 0, sizeof(*d));
}

/* The key by name: what the location is, without its addresses. */
static void name_key(struct mp_buf *out, const struct mp_profile *p,
		     const struct mp_loc *l)
{
  switch ((enum mp_loc_kind)l->kind) {
  case MP_LOC_LUA:
  case MP_LOC_INTERNAL:
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

static struct mp_diff_row *row_of(struct mp_diff *d, const char *key,
				  size_t len)
{
  uint32_t id = mp_strings_intern(&d->keys, key, len);

  if (id == UINT32_MAX)
    return NULL;
  if (id == d->nrows) {
    if (d->nrows == d->cap) {
      uint32_t ncap = d->cap ? d->cap * 2 : 64;
      struct mp_diff_row *nr = realloc(d->rows, ncap * sizeof(*nr));
      if (!nr)
	return NULL;
      d->rows = nr;
      d->cap = ncap;
    }
    memset(&d->rows[id], 0, sizeof(d->rows[id]));
    d->rows[id].key = id;
    d->nrows++;
  }
  return &d->rows[id];
}

static void add_counts(struct mp_diff_counts *c, const struct mp_loc *l)
{
  c->alloc_bytes += l->alloc_bytes + l->realloc_new;
  c->allocs += l->n_alloc + l->n_realloc;
  c->held_bytes += l->held_bytes;
  c->held_blocks += l->held_blocks;
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
    ** of its own: no stream without stacks has it. */
    if (!mp_profile_measure(p, id, MP_MEASURE_EVENTS))
      continue;
    mp_profile_loc(p, id, &l);
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

/* The sort's context: qsort has none. One diff is sorted at a time. */
static const struct mp_diff *sort_diff;
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
  const struct mp_diff_row *x = &sort_diff->rows[*(const uint32_t *)a];
  const struct mp_diff_row *y = &sort_diff->rows[*(const uint32_t *)b];
  const struct mp_string *kx, *ky;
  size_t i;
  int c = cmp_change(x, y, sort_value);

  for (i = 0; !c && i < sizeof(others) / sizeof(others[0]); i++)
    c = cmp_change(x, y, others[i]);
  if (c)
    return c;
  kx = mp_diff_row_key(sort_diff, x);
  ky = mp_diff_row_key(sort_diff, y);
  c = memcmp(kx->data, ky->data, kx->len < ky->len ? kx->len : ky->len);
  if (c)
    return c;
  return kx->len < ky->len ? -1 : kx->len > ky->len;
}

void mp_diff_sort(const struct mp_diff *d, uint32_t *rows, uint32_t n,
		  enum mp_value v)
{
  sort_diff = d;
  sort_value = v;
  qsort(rows, n, sizeof(*rows), cmp_rows);
  sort_diff = NULL;
}
