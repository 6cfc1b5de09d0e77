/*
** Moments of the live heap: see mp_moments.h.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_moments.h"

void mp_moments_init(struct mp_moments *m)
{
  memset(m, 0, sizeof(*m));
}

void mp_moments_free(struct mp_moments *m)
{
  size_t i;
  for (i = 0; i < m->n; i++) {
    free(m->m[i].rows);
    free(m->m[i].paths);
  }
  free(m->m);
  free(m->base);
  free(m->peak_locs);
  free(m->peak_stacks);
  memset(m, 0, sizeof(*m));
}

int mp_moments_file_begin(struct mp_moments *m, const struct mp_profile *p)
{
  uint32_t nl = mp_profile_nlocs(p), ns = mp_profile_nstacks(p), i;
  uint64_t *b = realloc(m->base, ((size_t)nl * 2 + ns + 1) * sizeof(*b));

  if (!b) {
    m->oom = 1;
    return -1;
  }
  m->base = b;
  for (i = 0; i < nl; i++) {
    struct mp_loc l;
    mp_profile_loc_counts(p, i, &l);
    b[2 * i] = l.held_bytes;
    b[2 * i + 1] = l.held_blocks;
  }
  for (i = 0; i < ns; i++) {
    struct mp_stack_counts c;
    mp_profile_stack(p, i, &c);
    b[2 * (size_t)nl + i] = c.held_bytes;
  }
  m->nbase_locs = nl;
  m->nbase_stacks = ns;
  return 0;
}

/* Grow *a (of *n) to n2 entries, the new ones 0. */
static int grow(uint64_t **a, uint32_t *n, uint32_t n2)
{
  uint64_t *x;
  if (n2 <= *n)
    return 0;
  if (!(x = realloc(*a, (size_t)n2 * sizeof(*x))))
    return -1;
  memset(x + *n, 0, (size_t)(n2 - *n) * sizeof(*x));
  *a = x;
  *n = n2;
  return 0;
}

/* The smallest row first: a heap of the largest MP_MOMENT_ROWS. */
static int row_less(const struct mp_moment_row *a,
		    const struct mp_moment_row *b)
{
  return a->bytes < b->bytes || (a->bytes == b->bytes && a->loc > b->loc);
}

static void sift_down(struct mp_moment_row *h, uint32_t n, uint32_t i)
{
  for (;;) {
    uint32_t l = 2 * i + 1, s = i;
    struct mp_moment_row t;
    if (l < n && row_less(&h[l], &h[s]))
      s = l;
    if (l + 1 < n && row_less(&h[l + 1], &h[s]))
      s = l + 1;
    if (s == i)
      return;
    t = h[i];
    h[i] = h[s];
    h[s] = t;
    i = s;
  }
}

/* Keep r among the cap largest of h (n of them so far). */
static void top_add(struct mp_moment_row *h, uint32_t *n, uint32_t cap,
		    const struct mp_moment_row *r)
{
  if (*n < cap) {
    h[(*n)++] = *r;
    if (*n == cap) {
      uint32_t k;
      for (k = cap / 2; k-- > 0;)
	sift_down(h, cap, k);
    }
  } else if (row_less(&h[0], r)) {
    h[0] = *r;
    sift_down(h, cap, 0);
  }
}

static int row_cmp(const void *a, const void *b)
{
  const struct mp_moment_row *x = a, *y = b;
  return row_less(y, x) ? -1 : row_less(x, y) ? 1 : 0;
}

int mp_moments_take(struct mp_moments *m, const struct mp_profile *p,
		    uint32_t file, const struct mp_timeline_point *at,
		    int peak)
{
  uint32_t nl = mp_profile_nlocs(p), ns = mp_profile_nstacks(p), i;
  struct mp_moment *x;
  struct mp_moment_row *h;
  uint32_t nh = 0;

  if (m->n == m->cap) {
    size_t ncap = m->cap ? m->cap * 2 : 64;
    struct mp_moment *nm = realloc(m->m, ncap * sizeof(*nm));
    if (!nm)
      goto oom;
    m->m = nm;
    m->cap = ncap;
  }
  if (!(h = malloc(MP_MOMENT_ROWS * sizeof(*h))))
    goto oom;
  if (peak && (grow(&m->peak_locs, &m->npeak_locs, nl) < 0 ||
	       grow(&m->peak_stacks, &m->npeak_stacks, ns) < 0)) {
    free(h);
    goto oom;
  }
  x = &m->m[m->n++];
  memset(x, 0, sizeof(*x));
  x->file = file;
  x->peak = peak;
  x->at = *at;
  x->rows = h;
  for (i = 0; i < nl; i++) {
    struct mp_loc l;
    struct mp_moment_row r;
    /* The bytes first, cheaply: most locations hold nothing new. */
    r.loc = i;
    r.bytes = mp_profile_measure(p, i, MP_MEASURE_HELD_BYTES) -
	      (i < m->nbase_locs ? m->base[2 * i] : 0);
    if (!r.bytes)
      continue;
    mp_profile_loc_counts(p, i, &l);
    r.blocks = l.held_blocks - (i < m->nbase_locs ? m->base[2 * i + 1] : 0);
    x->nlive++;
    if (peak)
      m->peak_locs[i] += r.bytes;
    top_add(h, &nh, MP_MOMENT_ROWS, &r);
  }
  qsort(h, nh, sizeof(*h), row_cmp);
  x->nrows = nh;
  if (ns > 1) {
    if (!(x->paths = malloc(MP_MOMENT_PATHS * sizeof(*x->paths))))
      goto oom;
    nh = 0;
    for (i = 1; i < ns; i++) {
      struct mp_stack_counts c;
      struct mp_moment_row r;
      mp_profile_stack(p, i, &c);
      r.loc = i;
      r.bytes = c.held_bytes - (i < m->nbase_stacks ?
				m->base[2 * (size_t)m->nbase_locs + i] : 0);
      r.blocks = 0;
      if (!r.bytes)
	continue;
      if (peak)
	m->peak_stacks[i] += r.bytes;
      top_add(x->paths, &nh, MP_MOMENT_PATHS, &r);
    }
    qsort(x->paths, nh, sizeof(*x->paths), row_cmp);
    x->npaths = nh;
  }
  return 0;
oom:
  m->oom = 1;
  return -1;
}

size_t mp_moments_choose(const struct mp_timeline *tl,
			 struct mp_timeline_point *out, size_t *peak_index)
{
  size_t n = 0, k, i;
  uint32_t step = tl->npoints > MP_MOMENTS_SPREAD ?
		  (tl->npoints + MP_MOMENTS_SPREAD - 1) / MP_MOMENTS_SPREAD : 1;
  int peak_done = tl->peak.event == 0;

  *peak_index = (size_t)-1;
  for (i = 0; i < tl->npoints; i += step) {
    /* The last point always: it is the end. */
    k = i + step >= tl->npoints ? tl->npoints - 1 : i;
    if (!peak_done && tl->peak.event <= tl->points[k].event) {
      if (tl->peak.event < tl->points[k].event) {
	*peak_index = n;
	out[n++] = tl->peak;
      } else {
	*peak_index = n;
      }
      peak_done = 1;
    }
    if (tl->points[k].event == 0)
      continue;
    out[n++] = tl->points[k];
    if (k == tl->npoints - 1)
      break;
  }
  if (!peak_done) {
    *peak_index = n;
    out[n++] = tl->peak;
  }
  return n;
}
