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

static inline int override_less(const struct mp_override *x,
				const struct mp_override *y)
{
  return x->key < y->key;
}

MP_SORT_DEFINE(sort_overrides, struct mp_override, override_less)

/* Replace the orig part of every key through map. */
static void ov_map_origs(struct mp_profile *p, const uint32_t *map)
{
  uint64_t i;
  for (i = 0; i < p->nov; i++) {
    uint64_t *k = mp_ov_keyp(p, i);
    *k = (*k & ~(uint64_t)UINT32_MAX) | map[(uint32_t)*k];
  }
}

/*
** Bare keys are sorted packed: is_free << 2b | loc << b | orig, b the bits
** of a location id, keeps their order in about 2b + 1 bits where the key
** spreads them over 64, and the radix sort takes a pass per 16 of them.
** With orig_rank, the orig part is sorted by rank and mapped back through
** rank_orig.
*/
static inline uint64_t ov_pack(uint64_t key, uint32_t orig, unsigned b)
{
  return key >> 63 << 2 * b | (key >> 32 & INT32_MAX) << b | orig;
}

static inline uint64_t ov_unpack(uint64_t v, uint32_t orig, unsigned b)
{
  return v >> 2 * b << 63 | (v >> b & (((uint64_t)1 << b) - 1)) << 32 | orig;
}

static void ov_compact_keys(struct mp_profile *p, const uint32_t *orig_rank,
			    const uint32_t *rank_orig)
{
  uint64_t *k = p->ov, *tmp, i, n = 0, last;
  unsigned b = p->nlocs > 1 ? 64 - (unsigned)__builtin_clzll(p->nlocs - 1) : 1;
  uint64_t id_mask = ((uint64_t)1 << b) - 1, nov = p->nov;

  if (!nov)
    return;
  /* The loops twice, with and without the ranks: this is a pass over
  ** every pair, and a test per pair costs as much as the packing. */
  if (orig_rank)
    for (i = 0; i < nov; i++)
      k[i] = ov_pack(k[i], orig_rank[(uint32_t)k[i]], b);
  else
    for (i = 0; i < nov; i++)
      k[i] = ov_pack(k[i], (uint32_t)k[i], b);
  tmp = malloc((size_t)nov * sizeof(*k));
  if (tmp)
    mp_radix_sort_u64(k, tmp, (size_t)nov);
  else
    mp_sort_u64(k, (size_t)nov);
  free(tmp);
  /* Unpacked after the copies are merged; b is at least 1, so a packed
  ** value is never all ones and last starts unlike any. */
  last = ~(uint64_t)0;
  if (rank_orig) {
    for (i = 0; i < nov; i++)
      if (k[i] != last)
	last = k[n++] = k[i];
    for (i = 0; i < n; i++)
      k[i] = ov_unpack(k[i], rank_orig[k[i] & id_mask], b);
  } else {
    for (i = 0; i < nov; i++)
      if (k[i] != last) {
	last = k[i];
	k[n++] = ov_unpack(last, (uint32_t)(last & id_mask), b);
      }
  }
  p->nov = n;
}

/* Sort the pairs and merge the copies of each key (their counts add up). */
static void ov_compact(struct mp_profile *p, const uint32_t *orig_rank,
		       const uint32_t *rank_orig)
{
  uint64_t i, n = 0;

  if (!p->override_values) {
    ov_compact_keys(p, orig_rank, rank_orig);
  } else {
    struct mp_override *o = p->ov;
    /* Sorting on the rank puts each list in that order; the key's upper
    ** half, which lookups use, is sorted either way. */
    if (orig_rank)
      ov_map_origs(p, orig_rank);
    sort_overrides(o, (size_t)p->nov);
    for (i = 0; i < p->nov; i++) {
      if (n && o[n - 1].key == o[i].key) {
	o[n - 1].count += o[i].count;
	o[n - 1].bytes += o[i].bytes;
      } else {
	o[n++] = o[i];
      }
    }
    p->nov = n;
    if (orig_rank)
      ov_map_origs(p, rank_orig);
  }
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
    ov_compact(p, NULL, NULL);
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

uint64_t mp_profile_sort_overrides(struct mp_profile *p,
				   const uint32_t *orig_rank,
				   const uint32_t *rank_orig)
{
  if (p->ov_sorted)
    return p->nov;
  ov_compact(p, orig_rank, rank_orig);
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
int mp_overrides_append(struct mp_profile *p, int is_free, uint32_t at,
			struct mp_lrec *orig, uint32_t orig_id, uint64_t *i)
{
  if (p->nov == p->ov_cap && ov_make_room(p) < 0)
    return -1;
  /* A first release can't be a copy: that keeps merges rare. */
  p->ov_maybe_dup += orig->ov_memo[is_free] != 0;
  *i = p->nov++;
  if (p->override_values) {
    struct mp_override *o = &((struct mp_override *)p->ov)[*i];
    o->key = mp_override_key(is_free, at, orig_id);
    o->count = o->bytes = 0;
  } else {
    ((uint64_t *)p->ov)[*i] = mp_override_key(is_free, at, orig_id);
  }
  orig->ov_memo[is_free] = (uint32_t)*i + 1;
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
