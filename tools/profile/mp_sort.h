/*
** An in-place sort whose comparison is inlined: reports sort millions of
** rows, and qsort's call per comparison (or its merge buffer as big as
** the array) is most of their cost.
**
** MP_SORT_DEFINE(name, type, less) defines
**   static void name(type *a, size_t n);
** sorting by the expression less(x, y) (x, y: const type *), which must
** be a strict weak order. Introsort: quicksort on the median of three,
** heapsort once the depth passes 2 log2 n (so no input is quadratic),
** insertion sort on short ranges. Not stable.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef MP_SORT_H
#define MP_SORT_H

#include <stddef.h>
#include <stdint.h>

/*
** Sort n 64-bit values in place, ascending, using tmp (room for n) as
** scratch: a radix sort over the bits that are not the same in every
** value, in digits of up to 16 bits. Report keys use a few runs of their
** bits, so this takes a few sequential passes where a comparison sort
** takes twenty random ones.
*/
void mp_radix_sort_u64(uint64_t *a, uint64_t *tmp, size_t n);

/* The same on the bits from low up only: values equal there end up in
** any order (or sorted on all bits, when short of memory). */
void mp_radix_sort_u64_above(uint64_t *a, uint64_t *tmp, size_t n,
			     unsigned low);

/* The same without scratch memory: the comparison sort below. */
void mp_sort_u64(uint64_t *a, size_t n);

#define MP_SORT_DEFINE(name, type, less)				\
static void name##_sift(type *a, size_t root, size_t n)		\
{									\
  type v = a[root];							\
  for (;;) {								\
    size_t c = 2 * root + 1;						\
    if (c >= n)								\
      break;								\
    if (c + 1 < n && less(&a[c], &a[c + 1]))				\
      c++;								\
    if (!less(&v, &a[c]))						\
      break;								\
    a[root] = a[c];							\
    root = c;								\
  }									\
  a[root] = v;								\
}									\
									\
static void name##_heap(type *a, size_t n)				\
{									\
  size_t i;								\
  for (i = n / 2; i-- > 0;)						\
    name##_sift(a, i, n);						\
  while (n > 1) {							\
    type t = a[0];							\
    a[0] = a[--n];							\
    a[n] = t;								\
    name##_sift(a, 0, n);						\
  }									\
}									\
									\
static void name##_insertion(type *a, size_t n)			\
{									\
  size_t i, j;								\
  for (i = 1; i < n; i++) {						\
    type v = a[i];							\
    for (j = i; j > 0 && less(&v, &a[j - 1]); j--)			\
      a[j] = a[j - 1];							\
    a[j] = v;								\
  }									\
}									\
									\
static void name##_intro(type *a, size_t n, unsigned depth)		\
{									\
  while (n > 16) {							\
    size_t i, j, m = n / 2;						\
    type pivot, t;							\
    if (depth-- == 0) {							\
      name##_heap(a, n);						\
      return;								\
    }									\
    /* Median of first, middle, last into a[m]. */			\
    if (less(&a[m], &a[0])) { t = a[m]; a[m] = a[0]; a[0] = t; }	\
    if (less(&a[n - 1], &a[m])) {					\
      t = a[m]; a[m] = a[n - 1]; a[n - 1] = t;				\
      if (less(&a[m], &a[0])) { t = a[m]; a[m] = a[0]; a[0] = t; }	\
    }									\
    pivot = a[m];							\
    i = 0;								\
    j = n - 1;								\
    for (;;) {								\
      while (less(&a[i], &pivot))					\
	i++;								\
      while (less(&pivot, &a[j]))					\
	j--;								\
      if (i >= j)							\
	break;								\
      t = a[i]; a[i] = a[j]; a[j] = t;					\
      i++;								\
      j--;								\
    }									\
    /* [0, j] <= pivot <= [j + 1, n): recurse on the smaller part. */	\
    if (j + 1 < n - j - 1) {						\
      name##_intro(a, j + 1, depth);					\
      a += j + 1;							\
      n -= j + 1;							\
    } else {								\
      name##_intro(a + j + 1, n - j - 1, depth);			\
      n = j + 1;							\
    }									\
  }									\
  name##_insertion(a, n);						\
}									\
									\
static inline void name(type *a, size_t n)				\
{									\
  unsigned depth = 0;							\
  size_t k;								\
  for (k = n; k > 1; k >>= 1)						\
    depth += 2;								\
  name##_intro(a, n, depth);						\
}

#endif
