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
    free(m->m[i].kinds);
  }
  free(m->m);
  free(m->base);
  free(m->peak_locs);
  free(m->peak_stacks);
  memset(m, 0, sizeof(*m));
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

/* Location i's held bytes and blocks made in this file: now, or at the
** peak. */
static uint64_t loc_held(const struct mp_moments *m,
			 const struct mp_profile *p, uint32_t i, int peak,
			 uint64_t *blocks)
{
  uint64_t bytes, bl, b0 = 0, k0 = 0;
  if (i < m->nbase_locs) {
    b0 = m->base[2 * i];
    k0 = m->base[2 * i + 1];
  }
  if (peak) {
    mp_profile_loc_at_peak(p, i, &bytes, &bl);
  } else {
    struct mp_loc l;
    /* The bytes first, cheaply: most locations hold nothing new. */
    if ((bytes = mp_profile_measure(p, i, MP_MEASURE_HELD_BYTES)) == b0)
      return 0;
    mp_profile_loc_counts(p, i, &l);
    bl = l.held_blocks;
  }
  *blocks = bl - k0;
  return bytes - b0;
}

static uint64_t stack_held(const struct mp_moments *m,
			   const struct mp_profile *p, uint32_t i, int peak)
{
  uint64_t bytes, bl;
  if (peak) {
    mp_profile_stack_at_peak(p, i, &bytes, &bl);
  } else {
    struct mp_stack_counts c;
    mp_profile_stack(p, i, &c);
    bytes = c.held_bytes;
  }
  return bytes - (i < m->nbase_stacks ?
		  m->base[2 * (size_t)m->nbase_locs + i] : 0);
}

/*
** The location that stands for loc among those named alike: a grouping
** by frames (the page, folded, pprof) tells a function from the chunk
** that defines it on the same line, whose locations print the same. The
** first of them by id, through an open-addressed table of (kind, name,
** line) of mask + 1 slots (UINT32_MAX: free).
*/
static uint32_t twin_of(const struct mp_profile *p, uint32_t *slots,
			uint32_t mask, uint32_t loc)
{
  struct mp_loc l, o;
  uint32_t s;
  mp_profile_loc(p, loc, &l);
  s = (l.kind * 2654435761u ^ l.str * 40503u ^ l.line * 97u) & mask;
  for (; slots[s] != UINT32_MAX; s = (s + 1) & mask) {
    mp_profile_loc(p, slots[s], &o);
    if (o.kind == l.kind && o.str == l.str && o.line == l.line &&
	o.str != MP_NO_STRING && mp_loc_kinds[l.kind].src == LJM_SRC_LFUNC)
      return slots[s];
  }
  slots[s] = loc;
  return loc;
}

/* p as it is now (or was at the file's peak, at): a moment, appended. */
static int take(struct mp_moments *m, const struct mp_profile *p,
		const struct mp_timeline_point *at, int peak)
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
  x->file = m->file;
  x->peak = peak;
  x->at = *at;
  x->rows = h;
  {
    /* Each location's bytes go to the one that stands for those named
    ** alike (twin_of), before the top rows are picked. */
    uint32_t mask = 1, *slots, t;
    uint64_t *sum;
    while (mask + 1 < 2 * nl + 2)
      mask = 2 * mask + 1;
    slots = malloc(((size_t)mask + 1) * sizeof(*slots));
    sum = calloc(2 * (size_t)nl + 2, sizeof(*sum));
    if (!slots || !sum) {
      free(slots);
      free(sum);
      m->n--;
      free(h);
      goto oom;
    }
    memset(slots, 0xff, ((size_t)mask + 1) * sizeof(*slots));
    for (i = 0; i < nl; i++) {
      uint64_t bytes, blocks;
      if (!(bytes = loc_held(m, p, i, peak, &blocks)))
	continue;
      x->nlive++;
      if (peak)
	m->peak_locs[i] += bytes;
      t = twin_of(p, slots, mask, i);
      sum[2 * (size_t)t] += bytes;
      sum[2 * (size_t)t + 1] += blocks;
    }
    for (i = 0; i < nl; i++) {
      struct mp_moment_row r;
      if (!sum[2 * (size_t)i])
	continue;
      r.loc = i;
      r.bytes = sum[2 * (size_t)i];
      r.blocks = sum[2 * (size_t)i + 1];
      top_add(h, &nh, MP_MOMENT_ROWS, &r);
    }
    free(slots);
    free(sum);
  }
  qsort(h, nh, sizeof(*h), row_cmp);
  x->nrows = nh;
  {
    uint64_t held[MP_NKINDS];
    unsigned k, nk = 0;
    mp_profile_kinds_held(p, peak, held);
    for (k = 0; k < MP_NKINDS; k++)
      nk += held[k] != m->kbase[k];
    if (nk && !(x->kinds = malloc(nk * sizeof(*x->kinds))))
      goto oom;
    for (k = 0; k < MP_NKINDS; k++)
      if (held[k] != m->kbase[k]) {
	x->kinds[x->nkinds][0] = k;
	x->kinds[x->nkinds++][1] = held[k] - m->kbase[k];
      }
  }
  if (ns > 1) {
    if (!(x->paths = malloc(MP_MOMENT_PATHS * sizeof(*x->paths))))
      goto oom;
    nh = 0;
    for (i = 1; i < ns; i++) {
      struct mp_moment_row r;
      r.loc = i;
      r.blocks = 0;
      if (!(r.bytes = stack_held(m, p, i, peak)))
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

static void moment_free(struct mp_moment *x)
{
  free(x->rows);
  free(x->paths);
  free(x->kinds);
}

/* MP_MOMENTS_SPREAD of the file's moments are kept, at multiples of the
** stride: keep those at multiples of twice it, as the timeline does. */
static void halve(struct mp_moments *m)
{
  size_t i, k = m->file_first;
  for (i = m->file_first; i < m->n; i++) {
    if ((i - m->file_first) % 2 == 0)
      moment_free(&m->m[i]);
    else
      m->m[k++] = m->m[i];
  }
  m->n = k;
  m->stride *= 2;
}

int mp_moments_file_begin(struct mp_moments *m, const struct mp_profile *p,
			  uint32_t file)
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
  mp_profile_kinds_held(p, 0, m->kbase);
  m->file_first = m->n;
  m->file = file;
  m->p = p;
  m->stride = 1;
  return 0;
}

uint64_t mp_moments_hook(void *ctx, const struct mp_timeline_point *at)
{
  struct mp_moments *m = ctx;
  uint64_t ev = at->event;

  if (m->n - m->file_first >= MP_MOMENTS_SPREAD) {
    halve(m);
    if (ev % m->stride)
      return (ev / m->stride + 1) * m->stride;
  }
  if (take(m, m->p, at, 0) < 0)
    return 0;
  return ev + m->stride;
}

int mp_moments_file_end(struct mp_moments *m, const struct mp_profile *p)
{
  struct mp_timeline tl;
  struct mp_moment x;
  size_t i;

  if (m->oom)
    return -1;
  if (!mp_profile_ntimelines(p))
    return 0;
  mp_profile_timeline(p, mp_profile_ntimelines(p) - 1, &tl);
  if (!tl.npoints)
    return 0;
  /* The end, unless a moment was taken there; in place of the last when
  ** they are all kept, which is less than a stride before it. */
  if (m->n == m->file_first ||
      m->m[m->n - 1].at.event != tl.points[tl.npoints - 1].event) {
    if (m->n - m->file_first >= MP_MOMENTS_SPREAD)
      moment_free(&m->m[--m->n]);
    if (take(m, p, &tl.points[tl.npoints - 1], 0) < 0)
      return -1;
  }
  if (!tl.peak.event)
    return 0;
  /* The peak, exact, in its place by event (instead of a moment taken
  ** at the same event). */
  if (take(m, p, &tl.peak, 1) < 0)
    return -1;
  x = m->m[--m->n];
  for (i = m->file_first; i < m->n && m->m[i].at.event < x.at.event; i++)
    ;
  if (i < m->n && m->m[i].at.event == x.at.event) {
    moment_free(&m->m[i]);
  } else {
    memmove(&m->m[i + 1], &m->m[i], (m->n - i) * sizeof(*m->m));
    m->n++;
  }
  m->m[i] = x;
  return 0;
}

void mp_moments_file_drop(struct mp_moments *m)
{
  while (m->n > m->file_first)
    moment_free(&m->m[--m->n]);
}
