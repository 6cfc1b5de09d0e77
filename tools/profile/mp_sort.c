/*
** The radix sort of mp_sort.h.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <string.h>

#include "mp_sort.h"

void mp_radix_sort_u64(uint64_t *a, uint64_t *tmp, size_t n)
{
  static size_t count[8][256];	/* Not reentrant: reports are one thread. */
  uint64_t *src = a, *dst = tmp;
  size_t i;
  int d;

  if (n < 2)
    return;
  memset(count, 0, sizeof(count));
  for (i = 0; i < n; i++) {
    uint64_t v = a[i];
    for (d = 0; d < 8; d++)
      count[d][(v >> (8 * d)) & 0xff]++;
  }
  for (d = 0; d < 8; d++) {
    size_t sum = 0, c;
    unsigned b;
    /* A digit that is the same everywhere orders nothing. */
    if (count[d][(src[0] >> (8 * d)) & 0xff] == n)
      continue;
    for (b = 0; b < 256; b++) {
      c = count[d][b];
      count[d][b] = sum;
      sum += c;
    }
    for (i = 0; i < n; i++) {
      uint64_t v = src[i];
      dst[count[d][(v >> (8 * d)) & 0xff]++] = v;
    }
    src = dst;
    dst = src == a ? tmp : a;
  }
  if (src != a)
    memcpy(a, src, n * sizeof(*a));
}
