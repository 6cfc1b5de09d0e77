/*
** Object kinds for the reports: their names (lj_memprof_format.h's
** list), the --kind option's list, and the order in which reports list
** kinds and the locations of each.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_report.h"

#define KIND_NAME(name, n, cli, what) [n] = cli,
static const char *const kind_names[LJM_KIND__MAX] = {
  LJM_FMT_KINDS(KIND_NAME)
};
#undef KIND_NAME

const char *mp_kind_name(unsigned kind)
{
  return kind < LJM_KIND__MAX ? kind_names[kind] : NULL;
}

void mp_name_kind(struct mp_buf *out, unsigned kind)
{
  const char *s = mp_kind_name(kind);
  if (s) {
    mp_buf_str(out, s);
  } else {
    mp_buf_str(out, "kind ");
    mp_buf_u64(out, kind);
  }
}

/* One name of the list: a kind's name, or its number. */
static int kind_of(const char *s, size_t len)
{
  unsigned k, v = 0;
  size_t i;
  for (k = 0; k < LJM_KIND__MAX; k++)
    if (strlen(kind_names[k]) == len && !memcmp(kind_names[k], s, len))
      return (int)k;
  if (len == 0 || len > 3)
    return -1;
  for (i = 0; i < len; i++) {
    if (s[i] < '0' || s[i] > '9')
      return -1;
    v = v * 10 + (unsigned)(s[i] - '0');
  }
  return v < MP_NKINDS ? (int)v : -1;
}

const char *mp_kinds_parse(const char *list, uint8_t keep[MP_NKINDS])
{
  const char *s = list;
  memset(keep, 0, MP_NKINDS);
  for (;;) {
    size_t len = strcspn(s, ",");
    int k = kind_of(s, len);
    if (k < 0)
      return s;
    keep[k] = 1;
    if (!s[len])
      return NULL;
    s += len + 1;
  }
}

static uint64_t kind_bytes(const struct mp_kind_counts *c)
{
  return c->alloc_bytes + c->realloc_bytes;
}

size_t mp_kinds_order(const struct mp_profile *p, unsigned kinds[MP_NKINDS])
{
  size_t n = 0, i, j;
  unsigned k;
  for (k = 0; k < MP_NKINDS; k++) {
    struct mp_kind_counts c;
    mp_profile_kind(p, k, &c);
    if (!(c.n_alloc | c.n_realloc | c.held_blocks))
      continue;
    /* Insertion: at most 256, most bytes first, then by number. */
    for (i = n; i > 0; i--) {
      struct mp_kind_counts o;
      mp_profile_kind(p, kinds[i - 1], &o);
      if (kind_bytes(&o) >= kind_bytes(&c))
	break;
    }
    for (j = n; j > i; j--)
      kinds[j] = kinds[j - 1];
    kinds[i] = k;
    n++;
  }
  return n;
}

/* One pair of a kind: its bytes, its held bytes (paths only: locations
** tie on bytes by location alone), its location or node, its index. */
struct kind_row {
  uint64_t bytes, held;
  uint32_t id, index;
};

static int kind_row_cmp(const void *a, const void *b)
{
  const struct kind_row *x = a, *y = b;
  if (x->bytes != y->bytes)
    return x->bytes > y->bytes ? -1 : 1;
  if (x->held != y->held)
    return x->held > y->held ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

typedef void kind_pair_get(const struct mp_profile *p, uint32_t i,
			   unsigned *kind, uint32_t *id,
			   struct mp_kind_counts *out);

/* The n pairs that get reads, those of kind, sorted, at most top (0:
** all), as indexes; *found is how many the kind has, *kept how many are
** returned. Paths leave out the empty ones (start-snapshot blocks all
** freed) and tie on held bytes. */
static uint32_t *kind_top(const struct mp_profile *p, uint32_t n,
			  kind_pair_get *get, int paths, unsigned kind,
			  uint64_t top, size_t *found, size_t *kept)
{
  struct kind_row *rows = malloc(((size_t)n + 1) * sizeof(*rows));
  uint32_t *out = malloc(((size_t)n + 1) * sizeof(*out));
  size_t m = 0, j;
  uint32_t i;
  if (!rows || !out) {
    free(rows);
    free(out);
    return NULL;
  }
  for (i = 0; i < n; i++) {
    struct mp_kind_counts c;
    unsigned k;
    uint32_t id;
    get(p, i, &k, &id, &c);
    if (k != kind || (paths && !(c.n_alloc | c.n_realloc | c.held_blocks)))
      continue;
    rows[m].bytes = kind_bytes(&c);
    rows[m].held = paths ? c.held_bytes : 0;
    rows[m].id = id;
    rows[m].index = i;
    m++;
  }
  qsort(rows, m, sizeof(*rows), kind_row_cmp);
  *found = m;
  if (top && m > top)
    m = (size_t)top;
  for (j = 0; j < m; j++)
    out[j] = rows[j].index;
  free(rows);
  *kept = m;
  return out;
}

uint32_t *mp_kinds_pairs(const struct mp_profile *p, unsigned kind,
			 uint64_t top, size_t *count)
{
  size_t found;
  return kind_top(p, mp_profile_nkindlocs(p), mp_profile_kindloc, 0, kind,
		  top, &found, count);
}

uint32_t *mp_kinds_paths(const struct mp_profile *p, unsigned kind,
			 uint64_t top, size_t *count)
{
  size_t kept;
  return kind_top(p, mp_profile_nkindpaths(p), mp_profile_kindpath, 1, kind,
		  top, count, &kept);
}
