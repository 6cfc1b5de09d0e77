/*
** Override pairs: which location's blocks each reallocation and free
** released. Appended while reading (without counts, only those that a
** location's memo gives up), merged and sorted when the report asks for
** them.
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
** Without counts (MP_OV_KEYS) the pairs are bare keys, and most are never
** appended: a location's memo holds the last releaser of its blocks
** until reading is done, and the array only the pairs that memos gave
** up (maybe more than once each). The array is sorted and merged packed
** by orig, orig << (b + 1) | is_free << b | loc, b the bits of a
** location id: about 2b + 1 bits where the key spreads them over 64, and
** the radix sort takes a pass per 16.
*/
static unsigned ov_id_bits(const struct mp_profile *p)
{
  return p->nlocs > 1 ? 64 - (unsigned)__builtin_clzll(p->nlocs - 1) : 1;
}

static inline uint64_t ov_pack(uint64_t key, uint32_t orig, unsigned b)
{
  return (uint64_t)orig << (b + 1) | key >> 63 << b | (key >> 32 & INT32_MAX);
}

static inline uint32_t ov_packed_orig(uint64_t v, unsigned b)
{
  return (uint32_t)(v >> (b + 1));
}

static inline int ov_packed_is_free(uint64_t v, unsigned b)
{
  return (int)(v >> b & 1);
}

static inline uint32_t ov_packed_loc(uint64_t v, unsigned b)
{
  return (uint32_t)(v & (((uint64_t)1 << b) - 1));
}

/*
** Sort the array packed, the orig part by its rank when orig_rank is
** given (rank_orig maps back), and keep each pair once, and none that
** its location's memo holds again: the count kept, at the front. With
** by_orig, sorted on the orig part only (ov_finish_keys needs no more),
** each orig's few pairs compared with one another.
*/
static uint64_t ov_sort_given_up(struct mp_profile *p,
				 const uint32_t *orig_rank,
				 const uint32_t *rank_orig, unsigned b,
				 int by_orig)
{
  uint64_t *k = p->ov, *tmp, i, n = 0, last, nov = p->nov, group = 0;

  /* The loops twice, with and without the ranks: a test per pair costs
  ** as much as the packing. */
  if (orig_rank)
    for (i = 0; i < nov; i++)
      k[i] = ov_pack(k[i], orig_rank[(uint32_t)k[i]], b);
  else
    for (i = 0; i < nov; i++)
      k[i] = ov_pack(k[i], (uint32_t)k[i], b);
  tmp = nov > 1 ? malloc((size_t)nov * sizeof(*k)) : NULL;
  if (!tmp)
    mp_sort_u64(k, (size_t)nov);
  else if (by_orig)
    mp_radix_sort_u64_above(k, tmp, (size_t)nov, b + 1);
  else
    mp_radix_sort_u64(k, tmp, (size_t)nov);
  free(tmp);
  /* A packed value fits in 2b + 1 < 64 bits: never all ones. */
  last = ~(uint64_t)0;
  for (i = 0; i < nov; i++) {
    uint64_t v = k[i], j;
    uint32_t orig = ov_packed_orig(v, b);
    if (v == last)
      continue;
    if (by_orig) {
      /* Copies are in the same orig's run, not always next. */
      if (n == 0 || ov_packed_orig(k[n - 1], b) != orig)
	group = n;
      for (j = group; j < n && k[j] != v; j++)
	;
      if (j < n)
	continue;
    }
    last = v;
    if (rank_orig)
      orig = rank_orig[orig];
    if (p->locs[orig].ov_memo[ov_packed_is_free(v, b)] !=
	ov_packed_loc(v, b) + 1)
      k[n++] = v;
  }
  return n;
}

/* Merge the array while reading. */
static void ov_compact_keys(struct mp_profile *p)
{
  unsigned b = ov_id_bits(p);
  uint64_t *k = p->ov, i, n = ov_sort_given_up(p, NULL, NULL, b, 0);

  for (i = 0; i < n; i++)
    k[i] = mp_override_key(ov_packed_is_free(k[i], b),
			   ov_packed_loc(k[i], b), ov_packed_orig(k[i], b));
  p->nov = n;
}

/*
** No memory for the counting sort of ov_finish_keys: the memos' pairs
** appended to the array (that much is kept when there is no room),
** ranked, sorted in place and mapped back.
*/
static void ov_finish_keys_in_place(struct mp_profile *p, uint64_t n,
				    const uint32_t *rank_orig, unsigned b)
{
  uint64_t *k = p->ov, i, nmemo = 0;
  uint32_t r, id;

  for (id = 0; id < p->nlocs; id++)
    nmemo += (p->locs[id].ov_memo[0] != 0) + (p->locs[id].ov_memo[1] != 0);
  for (i = 0; i < n; i++)
    k[i] = mp_override_key(ov_packed_is_free(k[i], b),
			   ov_packed_loc(k[i], b), ov_packed_orig(k[i], b));
  if (p->ov_cap < n + nmemo) {
    void *grown = realloc(p->ov, (size_t)(n + nmemo) * sizeof(*k));
    if (grown) {
      p->ov = k = grown;
      p->ov_cap = n + nmemo;
    } else {
      p->oom = 1;
      nmemo = 0;
    }
  }
  for (r = 0; nmemo && r < p->nlocs; r++) {
    const uint32_t *memo = p->locs[rank_orig ? rank_orig[r] : r].ov_memo;
    if (memo[0])
      k[n++] = mp_override_key(0, memo[0] - 1, r);
    if (memo[1])
      k[n++] = mp_override_key(1, memo[1] - 1, r);
  }
  mp_sort_u64(k, (size_t)n);
  p->nov = n;
  if (rank_orig)
    ov_map_origs(p, rank_orig);
}

/*
** When reading is done: the memos' pairs and the array's in one stable
** counting sort by (is_free, loc), fed in rank order, so that each list
** of a location comes out in rank order. Memos and the array hold no
** pair in common once ov_sort_given_up is done.
*/
void mp_overrides_finish_keys(struct mp_profile *p,
			      const uint32_t *orig_rank,
			      const uint32_t *rank_orig, int low_memory)
{
  unsigned b = ov_id_bits(p);
  uint32_t nlocs = p->nlocs, r, *pos, next_rank;
  uint64_t *k = p->ov, *out, i, total, nb = 2 * (uint64_t)nlocs + 1;
  uint64_t n = ov_sort_given_up(p, orig_rank, rank_orig, b, 1);

  /* Bucket loc for reallocations, nlocs + 1 + loc for frees (bucket
  ** nlocs is never used); pos[bucket + 1] counts it first, so that a
  ** memo (loc + 1) is its own index, and one of 0 counts in a slot
  ** that is zeroed after (pos[0], pos[nlocs + 1]). Positions of 32 bits:
  ** the pairs are fewer unless the locations are billions. */
  pos = low_memory || n + nb > UINT32_MAX ? NULL
	: calloc((size_t)nb + 1, sizeof(*pos));
  if (!pos) {
    ov_finish_keys_in_place(p, n, rank_orig, b);
    return;
  }
  for (r = 0; r < nlocs; r++) {
    const uint32_t *memo = p->locs[r].ov_memo;
    pos[memo[0]]++;
    pos[nlocs + 1 + memo[1]]++;
  }
  pos[0] = pos[nlocs + 1] = 0;
  for (i = 0; i < n; i++)
    pos[(uint64_t)ov_packed_is_free(k[i], b) * (nlocs + 1) +
	ov_packed_loc(k[i], b) + 1]++;
  for (i = 1; i <= nb; i++)
    pos[i] += pos[i - 1];
  total = pos[nb];
  out = malloc((size_t)total * sizeof(*out) + 1);
  if (!out) {
    free(pos);
    ov_finish_keys_in_place(p, n, rank_orig, b);
    return;
  }
  /* In rank order, each location's memos and its given-up pairs (k is
  ** sorted by rank). */
  next_rank = n ? ov_packed_orig(k[0], b) : UINT32_MAX;
  for (r = 0, i = 0; r < nlocs; r++) {
    uint32_t id = rank_orig ? rank_orig[r] : r;
    const uint32_t *memo = p->locs[id].ov_memo;
    if (memo[0])
      out[pos[memo[0] - 1]++] = mp_override_key(0, memo[0] - 1, id);
    if (memo[1])
      out[pos[nlocs + memo[1]]++] = mp_override_key(1, memo[1] - 1, id);
    if (r != next_rank)
      continue;
    for (; i < n && ov_packed_orig(k[i], b) == r; i++) {
      int is_free = ov_packed_is_free(k[i], b);
      uint32_t loc = ov_packed_loc(k[i], b);
      out[pos[(uint64_t)is_free * (nlocs + 1) + loc]++] =
	mp_override_key(is_free, loc, id);
    }
    next_rank = i < n ? ov_packed_orig(k[i], b) : UINT32_MAX;
  }
  free(pos);
  free(p->ov);
  p->ov = out;
  p->nov = p->ov_cap = total;
}

/* Sort the pairs and merge the copies of each key (their counts add up);
** final: reading is over, and ranks may be given. */
static void ov_compact(struct mp_profile *p, const uint32_t *orig_rank,
		       const uint32_t *rank_orig, int final)
{
  uint64_t i, n = 0;

  if (p->ov_mode != MP_OV_VALUES) {
    if (final)
      mp_overrides_finish_keys(p, orig_rank, rank_orig, 0);
    else
      ov_compact_keys(p);
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
** grow when that leaves less than a quarter free. Bare keys are all
** copies maybe, and merged only once there are as many as locations
** (that memory is the locations' own: 8 bytes to their 64).
*/
static int ov_make_room(struct mp_profile *p)
{
  uint64_t ncap;
  void *na;

  if (p->ov_maybe_dup > p->nov / 4 &&
      (p->ov_mode == MP_OV_VALUES || p->nov >= p->nlocs))
    ov_compact(p, NULL, NULL, 0);
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
  ov_compact(p, orig_rank, rank_orig, 1);
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

/* With counts (MP_OV_VALUES), the memo missed: a new pair, maybe a copy of an
** older one. */
int mp_overrides_append(struct mp_profile *p, int is_free, uint32_t at,
			struct mp_lrec *orig, uint32_t orig_id, uint64_t *i)
{
  struct mp_override *o;

  if (p->nov == p->ov_cap && ov_make_room(p) < 0)
    return -1;
  /* A first release can't be a copy: that keeps merges rare. */
  p->ov_maybe_dup += orig->ov_memo[is_free] != 0;
  *i = p->nov++;
  o = &((struct mp_override *)p->ov)[*i];
  o->key = mp_override_key(is_free, at, orig_id);
  o->count = o->bytes = 0;
  orig->ov_memo[is_free] = (uint32_t)*i + 1;
  return 0;
}

/* Without: a location's memo gives up its releaser for another. */
int mp_overrides_retire(struct mp_profile *p, int is_free, uint32_t at,
			uint32_t orig_id)
{
  if (p->nov == p->ov_cap && ov_make_room(p) < 0)
    return -1;
  p->ov_maybe_dup++;	/* Releasers that take turns repeat their pairs. */
  ((uint64_t *)p->ov)[p->nov++] = mp_override_key(is_free, at, orig_id);
  return 0;
}

struct mp_override mp_profile_override(const struct mp_profile *p,
				       uint64_t i)
{
  struct mp_override o = {0, 0, 0};
  if (p->ov_mode == MP_OV_VALUES)
    o = ((const struct mp_override *)p->ov)[i];
  else
    o.key = ((const uint64_t *)p->ov)[i];
  return o;
}
