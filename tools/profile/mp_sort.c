/*
** The radix sort of mp_sort.h.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_sort.h"

#define MAX_DIGIT_BITS 16
#define MAX_DIGITS 8

static inline int u64_less(const uint64_t *x, const uint64_t *y)
{
  return *x < *y;
}

MP_SORT_DEFINE(sort_u64, uint64_t, u64_less)

void mp_sort_u64(uint64_t *a, size_t n)
{
  sort_u64(a, n);
}

/* The radix sort on the bits of keep only. */
static void radix_sort(uint64_t *a, uint64_t *tmp, size_t n, uint64_t keep)
{
  uint64_t all_or = 0, all_and = ~0ull, diff, *src = a, *dst = tmp;
  unsigned shift[MAX_DIGITS], width, span, passes, ndigits = 0, d, pos;
  size_t i, *count;

  if (n < 2)
    return;
  for (i = 0; i < n; i++) {
    all_or |= a[i];
    all_and &= a[i];
  }
  /* Only the bits that are not the same everywhere order anything:
  ** digits start at a bit that differs and skip runs that do not. */
  diff = (all_or ^ all_and) & keep;
  if (!diff)
    return;
  /* Digits no wider than the array is long, so that the prefix sums of a
  ** short array do not cost more than its passes; as many as the span of
  ** differing bits needs, all of one width. */
  for (width = 8; width < MAX_DIGIT_BITS && ((size_t)1 << width) < n; width++)
    ;
  span = 64 - (unsigned)__builtin_clzll(diff) -
	 (unsigned)__builtin_ctzll(diff);
  passes = (span + width - 1) / width;
  width = (span + passes - 1) / passes;
  for (pos = 0; pos < 64 && (diff >> pos); pos += width) {
    pos += (unsigned)__builtin_ctzll(diff >> pos);
    shift[ndigits++] = pos;
  }
  count = malloc(((size_t)1 << width) * sizeof(*count));
  if (!count) {
    sort_u64(a, n);	/* No memory for the counts: all bits, then. */
    return;
  }
  for (d = 0; d < ndigits; d++) {
    size_t sum = 0, k;
    uint64_t mask = ((uint64_t)1 << width) - 1;
    unsigned s = shift[d];
    /* A pass of its own for each digit's counts: a loop over the
    ** digits per value costs more than reading the values again. */
    memset(count, 0, ((size_t)1 << width) * sizeof(*count));
    for (i = 0; i < n; i++)
      count[(src[i] >> s) & mask]++;
    for (k = 0; k <= mask; k++) {
      size_t here = count[k];
      count[k] = sum;
      sum += here;
    }
    for (i = 0; i < n; i++) {
      uint64_t v = src[i];
      dst[count[(v >> s) & mask]++] = v;
    }
    src = dst;
    dst = src == a ? tmp : a;
  }
  free(count);
  if (src != a)
    memcpy(a, src, n * sizeof(*a));
}

void mp_radix_sort_u64(uint64_t *a, uint64_t *tmp, size_t n)
{
  radix_sort(a, tmp, n, ~0ull);
}

void mp_radix_sort_u64_above(uint64_t *a, uint64_t *tmp, size_t n,
			     unsigned low)
{
  radix_sort(a, tmp, n, low < 64 ? ~0ull << low : 0);
}
