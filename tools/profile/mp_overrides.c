/*
** Override pairs: which location's blocks each reallocation and free
** released. Appended while reading, merged and sorted when the report
** asks for them.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_profile_int.h"

#include "mp_sort.h"

static inline uint64_t ov_key(const struct mp_profile *p, uint64_t i)
{
  return *mp_ov_keyp(p, i);
}

static inline int key_less(const uint64_t *x, const uint64_t *y)
{
  return *x < *y;
}

static inline int override_less(const struct mp_override *x,
				const struct mp_override *y)
{
  return x->key < y->key;
}

MP_SORT_DEFINE(sort_keys, uint64_t, key_less)
MP_SORT_DEFINE(sort_overrides, struct mp_override, override_less)

/* Sort the pairs and merge the copies of each key (their counts add up). */
static void ov_compact(struct mp_profile *p)
{
  uint64_t i, n = 0;

  if (p->override_values) {
    struct mp_override *o = p->ov;
    sort_overrides(o, (size_t)p->nov);
    for (i = 0; i < p->nov; i++) {
      if (n && o[n - 1].key == o[i].key) {
	o[n - 1].count += o[i].count;
	o[n - 1].bytes += o[i].bytes;
      } else {
	o[n++] = o[i];
      }
    }
  } else {
    uint64_t *k = p->ov, *tmp = malloc((size_t)p->nov * sizeof(*k) + 1);
    if (tmp)
      mp_radix_sort_u64(k, tmp, (size_t)p->nov);
    else
      sort_keys(k, (size_t)p->nov);
    free(tmp);
    for (i = 0; i < p->nov; i++)
      if (!n || k[n - 1] != k[i])
	k[n++] = k[i];
  }
  p->nov = n;
  p->ov_maybe_dup = 0;
}

/*
** The pair array is full. Copies of a pair are appended only when a
** location's blocks are released by code other than last time (the memo
** missed): when those may be a quarter of the array, merge them first;
** grow when that leaves less than a quarter free.
*/
static int ov_make_room(struct mp_profile *p)
{
  uint64_t ncap;
  void *na;

  if (p->ov_maybe_dup > p->nov / 4)
    ov_compact(p);
  if (p->nov < p->ov_cap - p->ov_cap / 4)
    return 0;
  ncap = p->ov_cap ? p->ov_cap * 2 : 1024;
  if (ncap > UINT32_MAX - 1)
    ncap = UINT32_MAX - 1;
  if (ncap <= p->nov)
    return -1;
  na = realloc(p->ov, (size_t)ncap * mp_ov_size(p));
  if (!na)
    return -1;
  p->ov = na;
  p->ov_cap = ncap;
  return 0;
}

/* Replace the orig part of every key through map. */
static void ov_map_origs(struct mp_profile *p, const uint32_t *map)
{
  uint64_t i;
  for (i = 0; i < p->nov; i++) {
    uint64_t *k = mp_ov_keyp(p, i);
    *k = (*k & ~(uint64_t)UINT32_MAX) | map[(uint32_t)*k];
  }
}

uint64_t mp_profile_sort_overrides(struct mp_profile *p,
				   const uint32_t *orig_rank,
				   const uint32_t *rank_orig)
{
  if (p->ov_sorted)
    return p->nov;
  /* Sorting on the rank puts each list in that order; the key's upper
  ** half, which lookups use, is sorted either way. */
  if (orig_rank)
    ov_map_origs(p, orig_rank);
  ov_compact(p);
  if (orig_rank)
    ov_map_origs(p, rank_orig);
  if (p->nov && p->nov < p->ov_cap) {
    void *fit = realloc(p->ov, (size_t)p->nov * mp_ov_size(p));
    if (fit) {
      p->ov = fit;
      p->ov_cap = p->nov;
    }
  }
  p->ov_sorted = 1;
  return p->nov;
}

uint64_t mp_profile_overrides_of(const struct mp_profile *p, int is_free,
				 uint32_t loc, uint64_t *end)
{
  uint64_t lo = 0, hi = p->nov, first;
  uint64_t want = mp_override_key(is_free, loc, 0) >> 32;
  /* Sorted on the upper half; the lower half is in rank order. */
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (ov_key(p, mid) >> 32 < want)
      lo = mid + 1;
    else
      hi = mid;
  }
  first = lo;
  while (lo < p->nov && ov_key(p, lo) >> 32 == want)
    lo++;
  *end = lo;
  return first;
}

/* The memo missed: a new pair, maybe a copy of an older one. */
int mp_overrides_append(struct mp_profile *p, uint64_t key,
			struct mp_lrec *orig, int is_free, uint64_t *at)
{
  uint64_t i;
  if (p->nov == p->ov_cap && ov_make_room(p) < 0)
    return -1;
  /* A first release can't be a copy: that keeps merges rare. */
  p->ov_maybe_dup += orig->ov_memo[is_free] != 0;
  i = p->nov++;
  memset(mp_ov_keyp(p, i), 0, mp_ov_size(p));
  *mp_ov_keyp(p, i) = key;
  orig->ov_memo[is_free] = (uint32_t)i + 1;
  *at = i;
  return 0;
}

struct mp_override mp_profile_override(const struct mp_profile *p,
				       uint64_t i)
{
  struct mp_override o = {0, 0, 0};
  if (p->override_values)
    o = ((const struct mp_override *)p->ov)[i];
  else
    o.key = ((const uint64_t *)p->ov)[i];
  return o;
}
