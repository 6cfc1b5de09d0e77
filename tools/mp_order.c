/*
** Report order; see mp_order.h.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_order.h"
#include "mp_sort.h"

/* Ranks and trace numbers share 29 bits of name_hi; beyond, ties fall
** to the location id. */
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

int mp_order_init(struct mp_order *o, const struct mp_strings *s)
{
  struct sref *refs;
  uint32_t i;

  memset(o, 0, sizeof(*o));
  o->rank = malloc(((size_t)s->count + 1) * sizeof(*o->rank));
  refs = malloc(((size_t)s->count + 1) * sizeof(*refs));
  if (!o->rank || !refs) {
    free(refs);
    mp_order_free(o);
    return -1;
  }
  for (i = 0; i < s->count; i++) {
    const struct mp_string *str = mp_strings_get(s, i);
    refs[i].data = str->data;
    refs[i].len = str->len;
    refs[i].id = i;
  }
  sort_srefs(refs, s->count);
  for (i = 0; i < s->count; i++)
    o->rank[refs[i].id] = i < RANK_MAX ? i : RANK_MAX;
  o->nstrings = s->count;
  free(refs);
  return 0;
}

void mp_order_free(struct mp_order *o)
{
  free(o->rank);
  memset(o, 0, sizeof(*o));
}

/* Kinds in name order: Lua code, C, traces (by number), the VM's own. */
static const uint8_t kind_order[8] = {
  [MP_LOC_LUA] = 0, [MP_LOC_LUA_UNKNOWN] = 1, [MP_LOC_C] = 2,
  [MP_LOC_C_UNKNOWN] = 3, [MP_LOC_TRACE] = 4, [MP_LOC_TRACE_NOPROTO] = 4,
  [MP_LOC_TRACE_UNKNOWN] = 4, [MP_LOC_INTERNAL] = 5
};

void mp_order_row(const struct mp_order *o, const struct mp_profile *p,
		  uint32_t loc, struct mp_row *row)
{
  const struct mp_lrec *r = &p->locs[loc];
  uint64_t mid = 0, low = 0;

  switch (r->kind) {
  case MP_LOC_LUA:
  case MP_LOC_C:
    mid = r->str < o->nstrings ? o->rank[r->str] : RANK_MAX;
    low = r->linedefined;
    break;
  case MP_LOC_TRACE:
  case MP_LOC_TRACE_NOPROTO:
  case MP_LOC_TRACE_UNKNOWN: {
    struct mp_loc l;
    mp_profile_loc(p, loc, &l);
    mid = l.addr < RANK_MAX ? l.addr : RANK_MAX;	/* Trace number. */
    break;
  }
  default:
    break;
  }
  row->name_hi = (uint64_t)kind_order[r->kind & 7] << 61 | mid << 32 | low;
  row->name_lo = r->line;
  row->loc = loc;
}

static inline int name_less(const struct mp_row *x, const struct mp_row *y)
{
  if (x->name_hi != y->name_hi)
    return x->name_hi < y->name_hi;
  if (x->name_lo != y->name_lo)
    return x->name_lo < y->name_lo;
  return x->loc < y->loc;
}

static inline int row_less(const struct mp_row *x, const struct mp_row *y)
{
  if (x->key != y->key)
    return x->key > y->key;
  return name_less(x, y);
}

MP_SORT_DEFINE(sort_rows, struct mp_row, row_less)
MP_SORT_DEFINE(sort_rows_by_name, struct mp_row, name_less)

void mp_rows_sort(struct mp_row *rows, size_t n)
{
  sort_rows(rows, n);
}

void mp_rows_sort_by_name(struct mp_row *rows, size_t n)
{
  sort_rows_by_name(rows, n);
}
