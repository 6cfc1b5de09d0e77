/*
** Report order; see mp_order.h.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_order.h"
#include "mp_sort.h"

/* String ranks and trace numbers share 29 bits of a name key; beyond,
** ties fall to the location id. */
#define RANK_MAX ((1u << 29) - 1)

struct sref {
  const char *data;
  uint32_t len;
  uint32_t id;
};

static inline int sref_less(const struct sref *x, const struct sref *y)
{
  uint32_t n = x->len < y->len ? x->len : y->len;
  int c = memcmp(x->data, y->data, n);
  return c < 0 || (c == 0 && x->len < y->len);
}

MP_SORT_DEFINE(sort_srefs, struct sref, sref_less)

/* Rank of every interned string in byte order; NULL when out of memory. */
static uint32_t *string_ranks(const struct mp_strings *s)
{
  uint32_t *rank = malloc(((size_t)s->count + 1) * sizeof(*rank));
  struct sref *refs = malloc(((size_t)s->count + 1) * sizeof(*refs));
  uint32_t i;

  if (!rank || !refs) {
    free(rank);
    free(refs);
    return NULL;
  }
  for (i = 0; i < s->count; i++) {
    const struct mp_string *str = mp_strings_get(s, i);
    refs[i].data = str->data;
    refs[i].len = str->len;
    refs[i].id = i;
  }
  sort_srefs(refs, s->count);
  for (i = 0; i < s->count; i++)
    rank[refs[i].id] = i < RANK_MAX ? i : RANK_MAX;
  free(refs);
  return rank;
}

/* A location's name as two integers. */
struct name_key {
  uint64_t hi;		/* Kind, string rank or trace number, linedefined. */
  uint32_t lo;		/* Line. */
  uint32_t loc;		/* Last tie-break: first seen first. */
};

static inline int name_key_less(const struct name_key *x,
				const struct name_key *y)
{
  if (x->hi != y->hi)
    return x->hi < y->hi;
  if (x->lo != y->lo)
    return x->lo < y->lo;
  return x->loc < y->loc;
}

MP_SORT_DEFINE(sort_name_keys, struct name_key, name_key_less)

/* Kinds by their rank in mp_loc_kinds (Lua code, C, traces, the VM's
** own), then by what their row says sorts them. */
static void name_key(const struct mp_profile *p, const uint32_t *srank,
		     uint32_t loc, struct name_key *k)
{
  const struct mp_loc_kind_info *info;
  struct mp_loc l;
  uint64_t mid = 0, low = 0;

  mp_profile_loc(p, loc, &l);
  info = &mp_loc_kinds[l.kind];
  switch ((enum mp_loc_order)info->order) {
  case MP_ORDER_STRING:
    mid = l.str < mp_profile_strings(p)->count ? srank[l.str] : RANK_MAX;
    low = l.linedefined;
    break;
  case MP_ORDER_NUMBER:
    mid = l.addr < RANK_MAX ? l.addr : RANK_MAX;	/* Trace number. */
    break;
  case MP_ORDER_NONE:
    break;
  }
  k->hi = (uint64_t)(info->rank & 7) << 61 | mid << 32 | low;
  k->lo = l.line;
  k->loc = loc;
}

int mp_order_init(struct mp_order *o, const struct mp_profile *p)
{
  struct name_key *keys = NULL;
  uint32_t nlocs = mp_profile_nlocs(p), *srank, i;

  memset(o, 0, sizeof(*o));
  srank = string_ranks(mp_profile_strings(p));
  if (!srank)
    return -1;
  keys = malloc(((size_t)nlocs + 1) * sizeof(*keys));
  o->rank = malloc(((size_t)nlocs + 1) * sizeof(*o->rank));
  o->loc = malloc(((size_t)nlocs + 1) * sizeof(*o->loc));
  if (!keys || !o->rank || !o->loc) {
    free(keys);
    free(srank);
    mp_order_free(o);
    return -1;
  }
  for (i = 0; i < nlocs; i++)
    name_key(p, srank, i, &keys[i]);
  free(srank);
  sort_name_keys(keys, nlocs);
  for (i = 0; i < nlocs; i++) {
    o->rank[keys[i].loc] = i;
    o->loc[i] = keys[i].loc;
  }
  o->nlocs = nlocs;
  free(keys);
  return 0;
}

void mp_order_free(struct mp_order *o)
{
  free(o->rank);
  free(o->loc);
  memset(o, 0, sizeof(*o));
}

static inline int row_less(const struct mp_row *x, const struct mp_row *y)
{
  if (x->key != y->key)
    return x->key > y->key;
  return x->name < y->name;
}

static inline int row_name_less(const struct mp_row *x,
				const struct mp_row *y)
{
  return x->name < y->name;
}

MP_SORT_DEFINE(sort_rows, struct mp_row, row_less)
MP_SORT_DEFINE(sort_rows_by_name, struct mp_row, row_name_less)

void mp_rows_sort(const struct mp_order *o, struct mp_row *rows, size_t n)
{
  uint64_t *packed = (uint64_t *)rows, i;

  _Static_assert(sizeof(*rows) == 2 * sizeof(uint64_t), "two values a row");
  for (i = 0; i < n; i++)
    if (rows[i].key > UINT32_MAX)
      break;
  if (i < n || n < 256) {
    sort_rows(rows, n);
    return;
  }
  /*
  ** Every key fits 32 bits: (UINT32_MAX - key) << 32 | name sorts as the
  ** rows should, and the rows' own memory holds these values and the
  ** radix sort's scratch. Packing forwards is safe (value i lands at
  ** byte 8i, over rows already read); unpacking goes backwards.
  */
  for (i = 0; i < n; i++) {
    uint64_t v = (uint64_t)(UINT32_MAX - (uint32_t)rows[i].key) << 32 |
		 rows[i].name;
    packed[i] = v;
  }
  mp_radix_sort_u64(packed, packed + n, n);
  for (i = n; i-- > 0;) {
    uint64_t v = packed[i];
    struct mp_row r;
    r.key = UINT32_MAX - (uint32_t)(v >> 32);
    r.name = (uint32_t)v;
    r.loc = o->loc[r.name];
    rows[i] = r;
  }
}

void mp_rows_sort_by_name(struct mp_row *rows, size_t n)
{
  sort_rows_by_name(rows, n);
}

/* -- Call paths ----------------------------------------------------------- */

void mp_path_figures(const struct mp_stack_counts *c, enum mp_path_measure m,
		     uint64_t *bytes, uint64_t *count)
{
  switch (m) {
  case MP_PATHS_ALLOC:
    *bytes = c->alloc_bytes;
    *count = c->n_alloc;
    break;
  case MP_PATHS_REALLOC:
    *bytes = c->realloc_bytes;
    *count = c->n_realloc;
    break;
  case MP_PATHS_HELD:
    *bytes = c->held_bytes;
    *count = c->held_blocks;
    break;
  case MP_PATHS_TEMPORARY:
    *bytes = c->temporary_bytes;
    *count = c->temporary;
    break;
  default:
    *bytes = c->alloc_bytes + c->realloc_bytes;
    *count = c->n_alloc + c->n_realloc + c->held_blocks;
    break;
  }
}

struct path_ref {
  uint64_t bytes, count;
  uint32_t loc, node;
};

static inline int path_less(const struct path_ref *x, const struct path_ref *y)
{
  if (x->loc != y->loc)
    return x->loc < y->loc;
  if (x->bytes != y->bytes)
    return x->bytes > y->bytes;
  if (x->count != y->count)
    return x->count > y->count;
  return x->node < y->node;
}

MP_SORT_DEFINE(sort_paths, struct path_ref, path_less)

int mp_paths_init(struct mp_paths *ps, const struct mp_profile *p,
		  enum mp_path_measure m)
{
  uint32_t n = mp_profile_nstacks(p), id, k = 0, i;
  struct path_ref *refs;

  memset(ps, 0, sizeof(*ps));
  if (n <= 1)
    return 0;
  ps->nlocs = mp_profile_nlocs(p);
  refs = malloc((size_t)n * sizeof(*refs));
  ps->start = calloc((size_t)ps->nlocs + 1, sizeof(*ps->start));
  ps->node = malloc((size_t)n * sizeof(*ps->node));
  if (!refs || !ps->start || !ps->node) {
    free(refs);
    mp_paths_free(ps);
    return -1;
  }
  for (id = 1; id < n; id++) {
    struct mp_stack_counts c;
    struct mp_frame f;
    if (!mp_profile_stack(p, id, &c))
      continue;
    mp_path_figures(&c, m, &refs[k].bytes, &refs[k].count);
    if (!refs[k].bytes && !refs[k].count)
      continue;
    mp_profile_frame(p, id, &f);
    refs[k].loc = f.leaf;
    refs[k].node = id;
    k++;
  }
  sort_paths(refs, k);
  for (i = 0; i < k; i++) {
    ps->node[i] = refs[i].node;
    ps->start[refs[i].loc + 1]++;
  }
  for (i = 0; i < ps->nlocs; i++)
    ps->start[i + 1] += ps->start[i];
  free(refs);
  return 0;
}

void mp_paths_free(struct mp_paths *ps)
{
  free(ps->start);
  free(ps->node);
  memset(ps, 0, sizeof(*ps));
}
