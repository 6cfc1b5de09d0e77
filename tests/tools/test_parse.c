/*
** Unit tests of the parsing core: ULEB128 decoding, the hash map, the
** symbol tables, the reader on valid, truncated and broken streams, and
** the aggregator's sums.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lj_memprof_format.h"
#include "mp_fast.h"
#include "mp_heap.h"
#include "mp_map.h"
#include "mp_names.h"
#include "mp_profile_int.h"
#include "mp_order.h"
#include "mp_reader.h"
#include "mp_report.h"
#include "mp_sort.h"
#include "mp_strings.h"
#include "mp_symtab.h"
#include "mp_uleb.h"
#include "mp_writer.h"

/* -- Sorting -------------------------------------------------------------- */

struct sort_item {
  uint32_t key;
  uint32_t tag;	/* Where it started: checks that nothing is lost. */
};

static inline int item_less(const struct sort_item *x,
			    const struct sort_item *y)
{
  return x->key < y->key;
}

MP_SORT_DEFINE(sort_items, struct sort_item, item_less)

static int cmp_item(const void *a, const void *b)
{
  const struct sort_item *x = a, *y = b;
  if (x->key != y->key)
    return x->key < y->key ? -1 : 1;
  return x->tag < y->tag ? -1 : x->tag > y->tag;
}

/* Fill a with n items of shape s; random keys in [0, range). */
static void sort_input(struct sort_item *a, size_t n, int shape,
		       uint32_t range, uint64_t *seed)
{
  size_t i;
  for (i = 0; i < n; i++) {
    *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
    switch (shape) {
    case 0: a[i].key = (uint32_t)(*seed >> 33) % range; break;	/* Random. */
    case 1: a[i].key = (uint32_t)i; break;			/* Sorted. */
    case 2: a[i].key = (uint32_t)(n - i); break;		/* Reversed. */
    case 3: a[i].key = 7; break;				/* All equal. */
    default: a[i].key = (uint32_t)(i % 2 ? i : n - i); break;	/* Zigzag. */
    }
    a[i].tag = (uint32_t)i;
  }
}

/* The inlined sort against qsort, on every shape and on sizes around its
** insertion-sort cut-off; and its heapsort fallback, forced by a depth
** of 0, on the same inputs. */
START_TEST(sort_matches_qsort)
{
  static const size_t sizes[] = {0, 1, 2, 3, 15, 16, 17, 33, 100, 1000,
				 65537};
  uint64_t seed = 42;
  size_t si;
  int shape, heap;

  for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
    for (shape = 0; shape < 5; shape++)
      for (heap = 0; heap <= 1; heap++) {
	size_t n = sizes[si], i;
	struct sort_item *a = malloc((n + 1) * sizeof(*a));
	struct sort_item *b = malloc((n + 1) * sizeof(*b));
	sort_input(a, n, shape, si % 2 ? 5 : 1000000, &seed);
	memcpy(b, a, n * sizeof(*a));
	if (heap)
	  sort_items_intro(a, n, 0);
	else
	  sort_items(a, n);
	qsort(b, n, sizeof(*b), cmp_item);
	for (i = 0; i < n; i++)
	  ck_assert_uint_eq(a[i].key, b[i].key);
	/* The same items: sort both by (key, tag) and compare. */
	qsort(a, n, sizeof(*a), cmp_item);
	for (i = 0; i < n; i++)
	  ck_assert_uint_eq(a[i].tag, b[i].tag);
	free(a);
	free(b);
      }
}
END_TEST

static int cmp_u64v(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The radix sort against qsort: values that differ in one byte, in a
** few, in all; sizes 0 to 100000. */
START_TEST(radix_matches_qsort)
{
  /* Bytes, all, high halves, none, and runs of bits across bytes (an
  ** override key's shape, a packed key's). */
  static const uint64_t masks[] = {0xffull, 0xff00ff0000ull, ~0ull,
				   0xffffffff00000000ull, 0,
				   0x8003ffff0003ffffull, 0x1fffffffffull};
  static const size_t sizes[] = {0, 1, 2, 255, 256, 1000, 100000};
  uint64_t seed = 7;
  size_t mi, si, i;

  for (mi = 0; mi < sizeof(masks) / sizeof(masks[0]); mi++)
    for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
      size_t n = sizes[si];
      uint64_t *a = malloc((n + 1) * sizeof(*a));
      uint64_t *b = malloc((n + 1) * sizeof(*b));
      uint64_t *tmp = malloc((n + 1) * sizeof(*tmp));
      for (i = 0; i < n; i++) {
	seed = seed * 6364136223846793005ull + 1442695040888963407ull;
	a[i] = b[i] = (seed ^ seed >> 29) & masks[mi];
      }
      mp_radix_sort_u64(a, tmp, n);
      qsort(b, n, sizeof(*b), cmp_u64v);
      for (i = 0; i < n; i++)
	ck_assert_uint_eq(a[i], b[i]);
      free(a);
      free(b);
      free(tmp);
    }
}
END_TEST

static int cmp_row_ref(const void *a, const void *b)
{
  const struct mp_row *x = a, *y = b;
  if (x->key != y->key)
    return x->key > y->key ? -1 : 1;
  return x->name < y->name ? -1 : x->name > y->name;
}

/* Report rows: largest key first, ties by name rank, the location kept
** with its row; both through the packed radix sort (keys under 2^32)
** and the comparison sort it falls back to (one key above). */
START_TEST(rows_sort_by_key_then_name)
{
  enum { N = 5000 };
  struct mp_order o;
  struct mp_row *rows = malloc(N * sizeof(*rows));
  struct mp_row *ref = malloc(N * sizeof(*ref));
  uint64_t seed = 3;
  int big;
  uint32_t i;

  o.nlocs = N;
  o.rank = malloc(N * sizeof(*o.rank));
  o.loc = malloc(N * sizeof(*o.loc));
  /* Name order: location ids backwards. */
  for (i = 0; i < N; i++) {
    o.rank[i] = N - 1 - i;
    o.loc[N - 1 - i] = i;
  }
  for (big = 0; big <= 1; big++) {
    for (i = 0; i < N; i++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      mp_order_row(&o, (seed >> 40) % 50, i, &rows[i]);
    }
    if (big)
      rows[N / 2].key = 1ull << 40;
    memcpy(ref, rows, N * sizeof(*rows));
    mp_rows_sort(&o, rows, N);
    qsort(ref, N, sizeof(*ref), cmp_row_ref);
    for (i = 0; i < N; i++) {
      ck_assert_uint_eq(rows[i].key, ref[i].key);
      ck_assert_uint_eq(rows[i].name, ref[i].name);
      ck_assert_uint_eq(rows[i].loc, ref[i].loc);
      ck_assert_uint_eq(o.rank[rows[i].loc], rows[i].name);
    }
  }
  free(o.rank);
  free(o.loc);
  free(rows);
  free(ref);
}
END_TEST

/* -- ULEB128 ------------------------------------------------------------- */

static enum mp_uleb_status decode(const uint8_t *buf, size_t len, uint64_t *v,
				  size_t *used)
{
  const uint8_t *p = buf;
  enum mp_uleb_status st = mp_uleb_read(&p, buf + len, v);
  *used = (size_t)(p - buf);
  return st;
}

START_TEST(uleb_round_trip)
{
  static const uint64_t values[] = {
    0, 1, 127, 128, 255, 16383, 16384, (1ull << 21) - 1, 1ull << 35,
    0x7fffffffffffull, 1ull << 56, (1ull << 63) - 1, 1ull << 63, UINT64_MAX
  };
  size_t i, pad;
  for (i = 0; i < sizeof(values) / sizeof(values[0]); i++)
    for (pad = 0; pad <= 12; pad += 12) {
      /* With and without bytes after the value (fast and careful paths). */
      uint8_t buf[32];
      uint64_t v = 0;
      size_t used;
      unsigned n = mp_uleb_write(buf, values[i]);
      memset(buf + n, 0xff, sizeof(buf) - n);
      ck_assert_int_eq(decode(buf, n + pad, &v, &used), MP_ULEB_OK);
      ck_assert_uint_eq(v, values[i]);
      ck_assert_uint_eq(used, n);
    }
}
END_TEST

START_TEST(uleb_errors)
{
  uint8_t buf[16];
  uint64_t v = 42;
  size_t used;

  /* Ends inside the value. */
  buf[0] = 0x80;
  buf[1] = 0x80;
  ck_assert_int_eq(decode(buf, 2, &v, &used), MP_ULEB_SHORT);
  ck_assert_uint_eq(used, 0);
  ck_assert_int_eq(decode(buf, 0, &v, &used), MP_ULEB_SHORT);
  /* 11 bytes. */
  memset(buf, 0x80, sizeof(buf));
  buf[10] = 0x01;
  ck_assert_int_eq(decode(buf, sizeof(buf), &v, &used), MP_ULEB_TOOLONG);
  /* 10 bytes whose last carries more than bit 63. */
  memset(buf, 0xff, 9);
  buf[9] = 0x02;
  ck_assert_int_eq(decode(buf, 10, &v, &used), MP_ULEB_OVERFLOW);
  buf[9] = 0x01;
  ck_assert_int_eq(decode(buf, 10, &v, &used), MP_ULEB_OK);
  ck_assert_uint_eq(v, UINT64_MAX);
}
END_TEST

/* -- Hash map ------------------------------------------------------------ */

START_TEST(map_against_reference)
{
  enum { N = 200000, KEYS = 50000 };
  struct mp_map m;
  static uint64_t ref[KEYS];	/* Value + 1, 0 when absent. */
  uint64_t rng = 12345, count = 0;
  int i;

  memset(ref, 0, sizeof(ref));
  mp_map_init(&m);
  for (i = 0; i < N; i++) {
    uint64_t k, key;
    struct mp_map_entry *e;
    int added;
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    k = (rng >> 33) % KEYS;
    /* Heap-like keys, and key 0 among them. */
    key = k * 16;
    e = mp_map_find(&m, key);
    ck_assert_int_eq(e != NULL, ref[k] != 0);
    if (e)
      ck_assert_uint_eq(e->a, ref[k] - 1);
    if ((rng >> 20) & 1) {
      e = mp_map_insert(&m, key, &added);
      ck_assert_ptr_nonnull(e);
      ck_assert_int_eq(added, ref[k] == 0);
      count += (uint64_t)added;
      e->a = (uint64_t)i;
      ref[k] = (uint64_t)i + 1;
    } else if (e) {
      mp_map_remove(&m, e);
      ref[k] = 0;
      count--;
    }
    ck_assert_uint_eq(m.count, count);
  }
  for (i = 0; i < KEYS; i++) {
    struct mp_map_entry *e = mp_map_find(&m, (uint64_t)i * 16);
    ck_assert_int_eq(e != NULL, ref[i] != 0);
  }
  mp_map_free(&m);
}
END_TEST

START_TEST(map_millions)
{
  struct mp_map m;
  uint64_t i;
  int added;
  mp_map_init(&m);
  for (i = 1; i <= 1000000; i++)
    mp_map_insert(&m, 0x7f0000000000ull + i * 32, &added)->a = i;
  ck_assert_uint_eq(m.count, 1000000);
  for (i = 1; i <= 1000000; i += 2)
    mp_map_remove(&m, mp_map_find(&m, 0x7f0000000000ull + i * 32));
  for (i = 1; i <= 1000000; i++) {
    struct mp_map_entry *e = mp_map_find(&m, 0x7f0000000000ull + i * 32);
    if (i & 1)
      ck_assert_ptr_null(e);
    else
      ck_assert_uint_eq(e->a, i);
  }
  mp_map_free(&m);
}
END_TEST

/* A block that does not pack, then one at its address that does: the put
** must find the first in the big map, not add a second copy. */
START_TEST(heap_unpacked_then_packed)
{
  struct mp_heap h;
  struct mp_block b;
  int i;

  mp_heap_init(&h);
  for (i = 1; i <= 100; i++)	/* Slots, before the big map is used. */
    ck_assert_int_eq(mp_heap_put(&h, (uint64_t)i * 16, 8, 1, 0, &b), 0);
  ck_assert_int_eq(mp_heap_put(&h, 4096, 1ull << 41, 2, 7, &b), 0);
  ck_assert_int_eq(mp_heap_put(&h, 4096, 32, 3, 255, &b), 1);
  ck_assert_uint_eq(b.size, 1ull << 41);
  ck_assert_uint_eq(b.loc, 2);
  ck_assert_uint_eq(b.kind, 7);
  ck_assert_uint_eq(mp_heap_count(&h), 101);
  ck_assert_int_eq(mp_heap_take(&h, 4096, &b), 1);
  ck_assert_uint_eq(b.size, 32);
  ck_assert_uint_eq(b.loc, 3);
  ck_assert_uint_eq(b.kind, 255);
  ck_assert_int_eq(mp_heap_take(&h, 4096, &b), 0);
  /* An owner that does not pack, the same way. */
  ck_assert_int_eq(mp_heap_put(&h, 8192, 16, 1u << 25, 4, &b), 0);
  ck_assert_int_eq(mp_heap_put(&h, 8192, 16, 4, 5, &b), 1);
  ck_assert_uint_eq(b.loc, 1u << 25);
  ck_assert_uint_eq(b.kind, 4);
  /* 4 GiB, the first size that does not pack. */
  ck_assert_int_eq(mp_heap_put(&h, 8192, 1ull << 32, 6, 3, &b), 1);
  ck_assert_uint_eq(b.kind, 5);
  ck_assert_int_eq(mp_heap_take(&h, 8192, &b), 1);
  ck_assert_uint_eq(b.size, 1ull << 32);
  ck_assert_uint_eq(b.loc, 6);
  ck_assert_uint_eq(b.kind, 3);
  ck_assert_int_eq(mp_heap_put(&h, 8192, 16, 4, 5, &b), 0);
  ck_assert_uint_eq(mp_heap_count(&h), 101);
  mp_heap_free(&h);
}
END_TEST

/* mp_heap_each: the sums of what it visits. */
struct heap_sums {
  uint64_t blocks, bytes, locs, kinds, addrs;
};

static void heap_sum(void *ctx, uint64_t addr, const struct mp_block *b)
{
  struct heap_sums *s = ctx;
  s->blocks++;
  s->bytes += b->size;
  s->locs += b->loc;
  s->kinds += b->kind;
  s->addrs += addr;
}

START_TEST(heap_against_reference)
{
  enum { N = 300000, KEYS = 40000 };
  static struct {
    int live;
    uint64_t size;
    uint32_t loc;
    unsigned kind;
  } ref[KEYS];
  struct mp_heap h;
  struct heap_sums want, got;
  uint64_t rng = 777, live = 0;
  int i;

  memset(ref, 0, sizeof(ref));
  mp_heap_init(&h);
  for (i = 0; i < N; i++) {
    uint64_t k, addr, size;
    uint32_t loc;
    unsigned kind;
    struct mp_block b;
    int rc;
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    k = (rng >> 33) % KEYS;
    addr = k * 48;	/* Address 0 included. */
    /* Mostly packable; some sizes and owners that are not. */
    size = (rng >> 8) % 1000 == 0 ? (1ull << 41) + k
	   : (rng >> 8) % 1000 == 1 ? (1ull << 32) + k : (rng >> 16) % 5000;
    loc = (rng >> 4) % 997 == 0 ? (1u << 25) + (uint32_t)k : (uint32_t)k % 300;
    kind = (unsigned)(rng >> 24) % 256;
    if ((rng >> 50) & 1) {
      rc = mp_heap_put(&h, addr, size, loc, kind, &b);
      ck_assert_int_eq(rc, ref[k].live);
      if (rc == 1) {
	ck_assert_uint_eq(b.size, ref[k].size);
	ck_assert_uint_eq(b.loc, ref[k].loc);
	ck_assert_uint_eq(b.kind, ref[k].kind);
      } else {
	live++;
      }
      ref[k].live = 1;
      ref[k].size = size;
      ref[k].loc = loc;
      ref[k].kind = kind;
    } else {
      rc = mp_heap_take(&h, addr, &b);
      ck_assert_int_eq(rc, ref[k].live);
      if (rc) {
	ck_assert_uint_eq(b.size, ref[k].size);
	ck_assert_uint_eq(b.loc, ref[k].loc);
	ck_assert_uint_eq(b.kind, ref[k].kind);
	live--;
      }
      ref[k].live = 0;
    }
    ck_assert_uint_eq(mp_heap_count(&h), live);
  }
  for (i = 0; i < KEYS; i++) {
    struct mp_block b;
    ck_assert_int_eq(mp_heap_peek(&h, (uint64_t)i * 48, &b), ref[i].live);
  }
  memset(&want, 0, sizeof(want));
  memset(&got, 0, sizeof(got));
  for (i = 0; i < KEYS; i++)
    if (ref[i].live) {
      want.blocks++;
      want.bytes += ref[i].size;
      want.locs += ref[i].loc;
      want.kinds += ref[i].kind;
      want.addrs += (uint64_t)i * 48;
    }
  mp_heap_each(&h, heap_sum, &got);
  ck_assert_uint_eq(got.blocks, want.blocks);
  ck_assert_uint_eq(got.bytes, want.bytes);
  ck_assert_uint_eq(got.locs, want.locs);
  ck_assert_uint_eq(got.kinds, want.kinds);
  ck_assert_uint_eq(got.addrs, want.addrs);
  mp_heap_clear(&h);
  ck_assert_uint_eq(mp_heap_count(&h), 0);
  mp_heap_free(&h);
}
END_TEST

/* -- Symbols ------------------------------------------------------------- */

START_TEST(csym_nearest_and_latest)
{
  struct mp_symtab t;
  struct mp_csym cs;
  int i;

  mp_symtab_init(&t);
  ck_assert_int_eq(mp_symtab_csym(&t, 0x1000, &cs), 0);
  mp_symtab_add_csym(&t, 0x1000, 1);
  mp_symtab_add_csym(&t, 0x3000, 3);
  mp_symtab_add_csym(&t, 0x2000, 2);
  ck_assert_int_eq(mp_symtab_csym(&t, 0xfff, &cs), 0);
  ck_assert_int_eq(mp_symtab_csym(&t, 0x1000, &cs), 1);
  ck_assert_uint_eq(cs.name, 1);
  ck_assert_int_eq(mp_symtab_csym(&t, 0x2fff, &cs), 1);
  ck_assert_uint_eq(cs.name, 2);
  ck_assert_uint_eq(cs.addr, 0x2000);
  ck_assert_int_eq(mp_symtab_csym(&t, UINT64_MAX, &cs), 1);
  ck_assert_uint_eq(cs.name, 3);
  /* Redefinitions win, however the runs are merged. */
  for (i = 0; i < 100; i++) {
    mp_symtab_add_csym(&t, 0x2000, 100 + (uint32_t)i);
    mp_symtab_add_csym(&t, 0x10000 + (uint64_t)i * 16, 1000 + (uint32_t)i);
    ck_assert_int_eq(mp_symtab_csym(&t, 0x2010, &cs), 1);
    ck_assert_uint_eq(cs.name, 100 + (uint32_t)i);
    ck_assert_int_eq(mp_symtab_csym(&t, 0x10000 + (uint64_t)i * 16 + 8, &cs), 1);
    ck_assert_uint_eq(cs.name, 1000 + (uint32_t)i);
  }
  mp_symtab_free(&t);
}
END_TEST

START_TEST(csym_against_brute_force)
{
  enum { N = 3000 };
  static uint64_t addrs[N];
  static uint32_t names[N];
  struct mp_symtab t;
  uint64_t rng = 99;
  int i, j, q;

  mp_symtab_init(&t);
  for (i = 0; i < N; i++) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    /* Few distinct addresses, so that redefinitions are common. */
    addrs[i] = ((rng >> 33) % 500) * 64;
    names[i] = (uint32_t)i;
    mp_symtab_add_csym(&t, addrs[i], names[i]);
    for (q = 0; q < 3; q++) {
      uint64_t want_addr = 0, at;
      int found = 0;
      uint32_t want_name = 0;
      struct mp_csym cs;
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      at = (rng >> 33) % (500 * 64 + 100);
      /* The latest definition of the highest address <= at. */
      for (j = 0; j <= i; j++)
	if (addrs[j] <= at && (!found || addrs[j] >= want_addr)) {
	  found = 1;
	  want_addr = addrs[j];
	  want_name = names[j];
	}
      ck_assert_int_eq(mp_symtab_csym(&t, at, &cs), found);
      if (found) {
	ck_assert_uint_eq(cs.addr, want_addr);
	ck_assert_uint_eq(cs.name, want_name);
      }
    }
  }
  mp_symtab_free(&t);
}
END_TEST

/* The word-wise comparison tells apart strings that differ at any byte,
** for every length around the word sizes. */
START_TEST(bytes_equal_every_position)
{
  char a[48], b[48];
  size_t len, at;
  for (len = 0; len <= 40; len++) {
    memset(a, 'x', sizeof(a));
    memset(b, 'x', sizeof(b));
    b[len] = 'y';	/* Past the end: never read. */
    ck_assert(mp_bytes_equal(a, b, len));
    for (at = 0; at < len; at++) {
      b[at] = 'z';
      ck_assert(!mp_bytes_equal(a, b, len));
      b[at] = 'x';
    }
  }
}
END_TEST

START_TEST(strings_intern)
{
  struct mp_strings s;
  char buf[32];
  int i;
  uint32_t a, b;

  mp_strings_init(&s);
  a = mp_strings_intern(&s, "@app.lua", 8);
  b = mp_strings_intern(&s, "@app.lua\0x", 10);	/* Bytes, not C strings. */
  ck_assert_uint_ne(a, b);
  ck_assert_uint_eq(mp_strings_intern(&s, "@app.lua", 8), a);
  ck_assert_uint_eq(mp_strings_get(&s, b)->len, 10);
  for (i = 0; i < 100000; i++) {
    int n = snprintf(buf, sizeof(buf), "sym%d", i);
    ck_assert_uint_eq(mp_strings_intern(&s, buf, (size_t)n), (uint32_t)i + 2);
  }
  ck_assert_str_eq(mp_strings_get(&s, 12345 + 2)->data, "sym12345");
  ck_assert_uint_eq(mp_strings_intern(&s, "sym777", 6), 777 + 2);
  /* The string interned last is checked first: the same again, then one
  ** of its length with other bytes, then a prefix of it. */
  ck_assert_uint_eq(mp_strings_intern(&s, "sym777", 6), 777 + 2);
  ck_assert_uint_eq(mp_strings_intern(&s, "sym778", 6), 778 + 2);
  ck_assert_uint_eq(mp_strings_intern(&s, "sym77", 5), 77 + 2);
  /* Forgotten strings are not found through it. */
  a = mp_strings_intern(&s, "late", 4);
  mp_strings_truncate(&s, a);
  ck_assert_uint_eq(mp_strings_intern(&s, "late", 4), a);
  ck_assert_str_eq(mp_strings_get(&s, a)->data, "late");
  b = mp_strings_intern(&s, "later", 5);
  ck_assert_uint_eq(b, a + 1);
  mp_strings_truncate(&s, a);
  ck_assert_uint_eq(mp_strings_intern(&s, "later", 5), a);
  mp_strings_free(&s);
}
END_TEST

START_TEST(proto_and_trace_redefinition)
{
  struct mp_symtab t;
  struct mp_proto pt;
  struct mp_trace tr;

  mp_symtab_init(&t);
  mp_symtab_add_proto(&t, 0x1000, 7, 5);
  mp_symtab_add_trace(&t, 1, 0x1000, 6);
  mp_symtab_add_proto(&t, 0x1000, 8, 20);
  ck_assert_int_eq(mp_symtab_proto(&t, 0x1000, &pt), 1);
  ck_assert_uint_eq(pt.chunk, 8);
  ck_assert_uint_eq(pt.linedefined, 20);
  /* The trace keeps the chunk its prototype had when it was defined. */
  ck_assert_int_eq(mp_symtab_trace(&t, 1, &tr), 1);
  ck_assert_uint_eq(tr.chunk, 7);
  ck_assert_uint_eq(tr.line, 6);
  mp_symtab_add_trace(&t, 2, 0x9999, 3);
  ck_assert_int_eq(mp_symtab_trace(&t, 2, &tr), 1);
  ck_assert_uint_eq(tr.chunk, MP_NO_STRING);
  ck_assert_uint_eq(tr.proto, 0x9999);
  ck_assert_int_eq(mp_symtab_trace(&t, 3, &tr), 0);
  ck_assert_int_eq(mp_symtab_proto(&t, 0x2000, &pt), 0);
  mp_symtab_free(&t);
}
END_TEST

/* -- Reader -------------------------------------------------------------- */

/* A small valid stream with every kind of item. */
static void sample_stream(struct mpw *w)
{
  mpw_init_mem(w);
  mpw_symtab_begin(w);
  mpw_symtab_lfunc(w, 0x1000, "@a.lua", 0);
  mpw_symtab_cfunc(w, 0x7000, "cfn");
  mpw_symtab_trace(w, 1, 0x1000, 3);
  mpw_symtab_end(w);
  mpw_alloc(w, mpw_lua(0x1000, 2), 0x7f0000001000ull, 100);
  mpw_alloc(w, mpw_internal(), 0x7f0000002000ull, 200);
  mpw_sym_lfunc(w, 0x1000, "@b.lua", 4);
  mpw_realloc(w, mpw_c(0x7010), 0x7f0000001000ull, 100, 0x7f0000003000ull,
	      300);
  mpw_free_ev(w, mpw_trace(1), 0x7f0000002000ull, 200);
  mpw_epilogue(w);
}

/* Read everything; return the final status and count memory events. */
static enum mp_status read_all(const uint8_t *data, size_t len,
			       unsigned *events, unsigned *symbols,
			       char *err, size_t errlen, uint64_t *erroff)
{
  struct mp_reader *r = mp_reader_new_mem(data, len);
  struct mp_event ev;
  enum mp_status st;
  *events = *symbols = 0;
  while ((st = mp_reader_next(r, &ev)) == MP_OK) {
    if (mp_event_is_symbol(ev.type))
      (*symbols)++;
    else
      (*events)++;
  }
  if (err) {
    snprintf(err, errlen, "%s", mp_reader_error(r));
    *erroff = mp_reader_error_offset(r);
  }
  /* Asking again repeats the answer. */
  ck_assert_int_eq(mp_reader_next(r, &ev), st);
  mp_reader_free(r);
  return st;
}

START_TEST(reader_valid_stream)
{
  struct mpw w;
  struct mp_reader *r;
  struct mp_event ev;

  sample_stream(&w);
  r = mp_reader_new_mem(w.mem, w.len);
  ck_assert_int_eq(mp_reader_next(r, &ev), MP_OK);
  ck_assert_int_eq(ev.type, MP_EV_SYM_LFUNC);
  ck_assert_int_eq(ev.in_symtab, 1);
  ck_assert_uint_eq(ev.sym_addr, 0x1000);
  ck_assert_uint_eq(ev.name_len, 6);
  ck_assert(memcmp(ev.name, "@a.lua", 6) == 0);
  ck_assert_int_eq(mp_reader_next(r, &ev), MP_OK);
  ck_assert_int_eq(ev.type, MP_EV_SYM_CFUNC);
  ck_assert_int_eq(mp_reader_next(r, &ev), MP_OK);
  ck_assert_int_eq(ev.type, MP_EV_SYM_TRACE);
  ck_assert_uint_eq(ev.sym_addr, 1);
  ck_assert_uint_eq(ev.sym_proto, 0x1000);
  ck_assert_uint_eq(ev.sym_line, 3);
  ck_assert_int_eq(mp_reader_next(r, &ev), MP_OK);
  ck_assert_int_eq(ev.type, MP_EV_ALLOC);
  ck_assert_uint_eq(ev.src, LJM_SRC_LFUNC);
  ck_assert_uint_eq(ev.loc, 0x1000);
  ck_assert_uint_eq(ev.loc_line, 2);
  ck_assert_uint_eq(ev.new_addr, 0x7f0000001000ull);
  ck_assert_uint_eq(ev.new_size, 100);
  ck_assert_int_eq(mp_reader_next(r, &ev), MP_OK);
  ck_assert_uint_eq(ev.src, LJM_SRC_INTERNAL);
  ck_assert_int_eq(mp_reader_next(r, &ev), MP_OK);
  ck_assert_int_eq(ev.type, MP_EV_SYM_LFUNC);
  ck_assert_int_eq(ev.in_symtab, 0);
  ck_assert_int_eq(mp_reader_next(r, &ev), MP_OK);
  ck_assert_int_eq(ev.type, MP_EV_REALLOC);
  ck_assert_uint_eq(ev.src, LJM_SRC_CFUNC);
  ck_assert_uint_eq(ev.loc, 0x7010);
  ck_assert_uint_eq(ev.old_size, 100);
  ck_assert_uint_eq(ev.new_addr, 0x7f0000003000ull);
  ck_assert_int_eq(mp_reader_next(r, &ev), MP_OK);
  ck_assert_int_eq(ev.type, MP_EV_FREE);
  ck_assert_uint_eq(ev.src, LJM_SRC_TRACE);
  ck_assert_uint_eq(ev.loc, 1);
  ck_assert_int_eq(mp_reader_next(r, &ev), MP_END);
  mp_reader_free(r);
  mpw_free(&w);
}
END_TEST

START_TEST(reader_every_prefix_is_truncated)
{
  struct mpw w;
  size_t cut;
  unsigned last_events = 0;

  sample_stream(&w);
  for (cut = 1; cut < w.len; cut++) {
    unsigned events, symbols;
    ck_assert_int_eq(read_all(w.mem, cut, &events, &symbols, NULL, 0, NULL),
		     MP_TRUNCATED);
    ck_assert_uint_ge(events, last_events);
    last_events = events;
  }
  ck_assert_uint_eq(last_events, 4);
  mpw_free(&w);
}
END_TEST

/* Expect an error with this message fragment at this offset. */
static void expect_error(const uint8_t *data, size_t len, const char *what,
			 uint64_t offset)
{
  char err[256];
  uint64_t off;
  unsigned events, symbols;
  ck_assert_int_eq(read_all(data, len, &events, &symbols, err, sizeof(err),
			    &off), MP_ERROR);
  ck_assert_msg(strstr(err, what) != NULL, "'%s' lacks '%s'", err, what);
  ck_assert_uint_eq(off, offset);
}

START_TEST(reader_garbage)
{
  expect_error((const uint8_t *)"", 0, "empty", 0);
  expect_error((const uint8_t *)"hello world", 11, "not a memprof stream", 0);
  expect_error((const uint8_t *)"ljs\x04\0\0\0", 7,
	       "unsupported symbol table version 4", 3);
  expect_error((const uint8_t *)"ljs\x03\0\1\0", 7, "reserved", 5);
  expect_error((const uint8_t *)"ljs\x03\0\0\0\x03", 8, "unknown symbol kind 3",
	       7);
  expect_error((const uint8_t *)"ljs\x03\0\0\0\x44", 8,
	       "invalid symbol table entry header 0x44", 7);
  expect_error((const uint8_t *)"ljs\x03\0\0\0\x80ljm\x02\0\0\0\x80", 15,
	       "unsupported event version 2", 11);
  expect_error((const uint8_t *)"ljs\x03\0\0\0\x80ljx", 11,
	       "bad magic of the event section", 10);
}
END_TEST

START_TEST(reader_garbage_events)
{
  struct mpw w;
  size_t base;

  /* Header bits, sources, ULEB128 length, string length, trailing data. */
  mpw_init_mem(&w);
  mpw_symtab_begin(&w);
  mpw_symtab_end(&w);
  base = w.len;
  mpw_byte(&w, 0x61);	/* Unused bits set. */
  expect_error(w.mem, w.len, "unused bits", base);
  w.len = base;
  mpw_byte(&w, 0x1d);	/* Source 7. */
  expect_error(w.mem, w.len, "invalid event source", base);
  w.len = base;
  mpw_byte(&w, 0x04);	/* Symbol event with the internal source. */
  expect_error(w.mem, w.len, "invalid symbol event", base);
  w.len = base;
  mpw_byte(&w, LJM_EV_ALLOC | LJM_SRC_INTERNAL);
  {
    int i;
    for (i = 0; i < 11; i++)
      mpw_byte(&w, 0x80);
    mpw_byte(&w, 0);
  }
  expect_error(w.mem, w.len, "ULEB128 longer than 10 bytes", base + 1);
  w.len = base;
  mpw_byte(&w, LJM_EV_SYMTAB | LJM_SRC_LFUNC);
  mpw_uleb(&w, 0x1000);
  mpw_uleb(&w, MP_STRING_CUT_MAX + 1);	/* String past the end. */
  mpw_byte(&w, 'x');
  expect_error(w.mem, w.len, "runs past the end", base + 3);
  {
    /* A short one is a stream cut inside a name. */
    unsigned events, symbols;
    w.len = base;
    mpw_byte(&w, LJM_EV_SYMTAB | LJM_SRC_LFUNC);
    mpw_uleb(&w, 0x1000);
    mpw_uleb(&w, 100);
    mpw_byte(&w, 'x');
    ck_assert_int_eq(read_all(w.mem, w.len, &events, &symbols, NULL, 0, NULL),
		     MP_TRUNCATED);
  }
  w.len = base;
  mpw_byte(&w, LJM_EV_SYMTAB | LJM_SRC_LFUNC);
  mpw_uleb(&w, 0x1000);
  mpw_uleb(&w, MP_STRING_MAX + 1);
  expect_error(w.mem, w.len, "exceeds the limit", base + 3);
  w.len = base;
  mpw_alloc(&w, mpw_internal(), 0x1000, 1ull << 50);
  expect_error(w.mem, w.len, "impossible size", base + 3);
  w.len = base;
  mpw_epilogue(&w);
  mpw_byte(&w, 0);
  expect_error(w.mem, w.len, "after the epilogue", base + 1);
  mpw_free(&w);
}
END_TEST

/*
** The reference writer lists LuaJIT's built-ins written in bytecode
** (table.remove...) with first line -1, as a 64-bit ULEB128; its VM had
** 32-bit GC objects, so the addresses are small. The 32-bit spelling of
** -1 means the same; any other line above 2^32 - 1 is garbage.
*/
START_TEST(reader_builtin_linedefined)
{
  static const enum mp_group groups[] = {
    MP_GROUP_LINE, MP_GROUP_FUNCTION, MP_GROUP_CHUNK
  };
  static const char *const names[][2] = {
    {"remove:0", "move:3"},
    {"builtin:remove", "builtin:move"},
    {"remove", "move"}
  };
  struct mpw w;
  struct mp_reader *r;
  struct mp_event ev;
  size_t g, field;

  mpw_init_mem(&w);
  mpw_symtab_begin(&w);
  mpw_symtab_lfunc(&w, 0x41405958, "remove", UINT64_MAX);
  mpw_symtab_end(&w);
  mpw_sym_lfunc(&w, 0x41405a70, "move", UINT32_MAX);
  mpw_alloc(&w, mpw_lua(0x41405958, 0), 0x4140b000, 24);
  mpw_alloc(&w, mpw_lua(0x41405a70, 3), 0x4140b020, 32);
  mpw_free_ev(&w, mpw_internal(), 0x4140b000, 24);
  mpw_epilogue(&w);

  r = mp_reader_new_mem(w.mem, w.len);
  ck_assert_int_eq(mp_reader_next(r, &ev), MP_OK);
  ck_assert_int_eq(ev.type, MP_EV_SYM_LFUNC);
  ck_assert_uint_eq(ev.sym_addr, 0x41405958);
  ck_assert_uint_eq(ev.sym_line, MP_LINE_BUILTIN);
  ck_assert_int_eq(mp_reader_next(r, &ev), MP_OK);
  ck_assert_int_eq(ev.type, MP_EV_SYM_LFUNC);
  ck_assert_uint_eq(ev.sym_line, MP_LINE_BUILTIN);
  mp_reader_free(r);

  for (g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
    struct mp_profile *p = malloc(sizeof(*p));
    struct mp_loc l;
    uint64_t n;
    unsigned i;

    ck_assert_ptr_nonnull(p);
    mp_profile_init(p, groups[g]);
    r = mp_reader_new_mem(w.mem, w.len);
    ck_assert_int_eq(mp_profile_read(p, r, &n, NULL, NULL), MP_END);
    ck_assert_uint_eq(n, 3);
    ck_assert_uint_eq(p->file.live_bytes, 32);
    for (i = 0; i < 2; i++) {
      struct mp_buf b = {0};
      mp_profile_loc(p, i, &l);
      ck_assert_uint_eq(l.kind, MP_LOC_LUA);
      mp_name_location(&b, p, NULL, &l, MP_NAME_ALIASED);
      ck_assert_str_eq(b.data, names[g][i]);
      mp_buf_free(&b);
    }
    mp_reader_free(r);
    mp_profile_free(p);
    free(p);
  }

  /* Too big, but not -1: still impossible. */
  w.len = 0;
  mpw_symtab_begin(&w);
  mpw_byte(&w, LJM_SYMTAB_LFUNC);
  mpw_uleb(&w, 0x41405958);
  mpw_string(&w, "remove");
  field = w.len;
  mpw_uleb(&w, UINT64_MAX - 1);
  mpw_symtab_end(&w);
  mpw_epilogue(&w);
  expect_error(w.mem, w.len, "impossible line number 18446744073709551614",
	       field);
  w.len = field;
  mpw_uleb(&w, (uint64_t)1 << 32);
  mpw_symtab_end(&w);
  mpw_epilogue(&w);
  expect_error(w.mem, w.len, "impossible line number 4294967296", field);
  {
    /* Cut inside the ten bytes of -1: truncated, not a line. */
    unsigned events, symbols;
    w.len = field;
    mpw_uleb(&w, UINT64_MAX);
    ck_assert_uint_eq(w.len - field, 10);
    ck_assert_int_eq(read_all(w.mem, w.len - 1, &events, &symbols, NULL, 0,
			      NULL), MP_TRUNCATED);
    ck_assert_uint_eq(symbols, 0);
  }
  mpw_free(&w);
}
END_TEST

/* A stream whose items straddle the reader's 4 MiB blocks, with a name
** longer than a block, so that refills and buffer growth are exercised. */
static void long_stream(struct mpw *w, char **bigname)
{
  size_t n = (size_t)5 << 20, i;
  char *name = malloc(n + 1);
  ck_assert_ptr_nonnull(name);
  for (i = 0; i < n; i++)
    name[i] = (char)('a' + i % 26);
  name[n] = '\0';
  mpw_init_mem(w);
  mpw_symtab_begin(w);
  mpw_symtab_lfunc(w, 0x1000, "@a.lua", 0);
  mpw_symtab_end(w);
  for (i = 0; i < 100000; i++)
    mpw_alloc(w, mpw_lua(0x1000, i % 50), 0x7f0000000000ull + i * 16, i % 999);
  mpw_sym_lfunc(w, 0x2000, name, 1);
  for (i = 0; i < 100000; i++)
    mpw_free_ev(w, mpw_lua(0x2000, 3), 0x7f0000000000ull + i * 16, i % 999);
  mpw_epilogue(w);
  *bigname = name;
}

/* Read fd to the end and check it against the memory reader. */
static void compare_fd_with_mem(int fd, const struct mpw *w, const char *name)
{
  struct mp_reader *a = mp_reader_new_fd(fd, -1);
  struct mp_reader *b = mp_reader_new_mem(w->mem, w->len);
  struct mp_event ea, eb;
  enum mp_status sa, sb;
  unsigned long n = 0;

  do {
    sa = mp_reader_next(a, &ea);
    sb = mp_reader_next(b, &eb);
    ck_assert_int_eq(sa, sb);
    if (sa != MP_OK)
      break;
    n++;
    ck_assert_int_eq(ea.type, eb.type);
    ck_assert_uint_eq(ea.offset, eb.offset);
    if (!mp_event_is_symbol(ea.type)) {
      ck_assert_uint_eq(ea.new_addr, eb.new_addr);
      ck_assert_uint_eq(ea.new_size, eb.new_size);
      ck_assert_uint_eq(ea.old_addr, eb.old_addr);
      ck_assert_uint_eq(ea.old_size, eb.old_size);
      ck_assert_uint_eq(ea.loc_line, eb.loc_line);
    }
    if (ea.type == MP_EV_SYM_LFUNC && ea.sym_addr == 0x2000) {
      ck_assert_uint_eq(ea.name_len, strlen(name));
      ck_assert(memcmp(ea.name, name, ea.name_len) == 0);
    }
  } while (1);
  ck_assert_int_eq(sa, MP_END);
  ck_assert_uint_eq(n, 200002);
  mp_reader_free(a);
  mp_reader_free(b);
}

START_TEST(reader_fd_blocks_and_pipes)
{
  struct mpw w;
  char *name;
  FILE *f = tmpfile();
  int pfd[2];
  pid_t pid;

  long_stream(&w, &name);
  /* A file. */
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fwrite(w.mem, 1, w.len, f), w.len);
  fflush(f);
  ck_assert_int_eq(lseek(fileno(f), 0, SEEK_SET), 0);
  compare_fd_with_mem(fileno(f), &w, name);
  fclose(f);
  /* A pipe fed in odd-sized pieces: short reads everywhere. */
  ck_assert_int_eq(pipe(pfd), 0);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    size_t off = 0;
    close(pfd[0]);
    while (off < w.len) {
      size_t n = w.len - off < 7777 ? w.len - off : 7777;
      ssize_t got = write(pfd[1], w.mem + off, n);
      if (got <= 0)
	_exit(1);
      off += (size_t)got;
    }
    _exit(0);
  }
  close(pfd[1]);
  compare_fd_with_mem(pfd[0], &w, name);
  close(pfd[0]);
  waitpid(pid, NULL, 0);
  free(name);
  mpw_free(&w);
}
END_TEST

/* -- Aggregation --------------------------------------------------------- */

START_TEST(profile_sums_and_peak)
{
  struct mpw w;
  struct mp_profile *p = malloc(sizeof(*p));
  struct mp_reader *r;
  uint64_t n;
  struct mp_override ov;

  sample_stream(&w);
  mp_profile_init(p, MP_GROUP_LINE);
  p->ov_mode = MP_OV_VALUES;
  r = mp_reader_new_mem(w.mem, w.len);
  ck_assert_int_eq(mp_profile_read(p, r, &n, NULL, NULL), MP_END);
  ck_assert_uint_eq(n, 4);
  ck_assert_uint_eq(p->file_events, 4);
  ck_assert_uint_eq(p->file.peak_bytes, 500);	/* 300 + 200 after event 3. */
  ck_assert_uint_eq(p->file.peak_event, 3);
  ck_assert_uint_eq(p->file.live_bytes, 300);
  ck_assert_uint_eq(mp_heap_count(&p->heap), 1);
  ck_assert_uint_eq(p->file.n_sym_events, 1);
  /* @a.lua:2, INTERNAL, cfn:0x7000, TRACE [1] started at @a.lua:3. */
  ck_assert_uint_eq(p->nlocs, 4);
  ck_assert_uint_eq(mp_profile_sort_overrides(p, NULL, NULL), 2);
  /* cfn's realloc of @a.lua:2's block. */
  ov = mp_profile_override(p, 0);
  ck_assert_uint_eq(ov.key >> 63, 0);
  ck_assert_uint_eq((uint32_t)ov.key, 0);
  /* The trace's free of INTERNAL's. */
  ov = mp_profile_override(p, 1);
  ck_assert_uint_eq(ov.key >> 63, 1);
  ck_assert_uint_eq((uint32_t)ov.key, 1);
  ck_assert_uint_eq(ov.count, 1);
  ck_assert_uint_eq(ov.bytes, 200);
  mp_reader_free(r);
  mp_profile_end_file(p, 0);
  ck_assert_uint_eq(p->total.peak_bytes, 500);
  ck_assert_uint_eq(p->total.live_blocks, 1);
  ck_assert_uint_eq(mp_heap_count(&p->heap), 0);
  /* The counts by kind are the locations', once reading is done. */
  mp_profile_done_reading(p);
  ck_assert_uint_eq(p->total.n_alloc, 2);
  ck_assert_uint_eq(p->total.n_realloc, 1);
  ck_assert_uint_eq(p->total.n_free, 1);
  mp_profile_free(p);
  free(p);
  mpw_free(&w);
}
END_TEST

/* Without counts (MP_OV_KEYS) (the text report), pairs are 8-byte keys. */
START_TEST(profile_override_keys)
{
  struct mpw w;
  struct mp_profile *p = malloc(sizeof(*p));
  struct mp_reader *r;
  uint64_t n, end;
  struct mp_override ov;
  struct mp_loc l;

  sample_stream(&w);
  mp_profile_init(p, MP_GROUP_LINE);
  r = mp_reader_new_mem(w.mem, w.len);
  ck_assert_int_eq(mp_profile_read(p, r, &n, NULL, NULL), MP_END);
  ck_assert_uint_eq(mp_profile_sort_overrides(p, NULL, NULL), 2);
  ov = mp_profile_override(p, 0);
  ck_assert_uint_eq(ov.key, mp_override_key(0, 2, 0));
  ck_assert_uint_eq(ov.count, 0);	/* Not kept. */
  ov = mp_profile_override(p, 1);
  ck_assert_uint_eq(ov.key, mp_override_key(1, 3, 1));
  ck_assert_uint_eq(mp_profile_overrides_of(p, 0, 2, &end), 0);
  ck_assert_uint_eq(end, 1);
  ck_assert_uint_eq(mp_profile_overrides_of(p, 1, 0, &end), 1);
  ck_assert_uint_eq(end, 1);	/* None. */
  ck_assert_uint_eq(mp_profile_overrides_of(p, 1, 3, &end), 1);
  ck_assert_uint_eq(end, 2);
  ck_assert_uint_eq(mp_profile_overrides_of(p, 1, 4, &end), 2);
  ck_assert_uint_eq(end, 2);
  /* Counters read back whole: @a.lua:2 allocated once, its block was
  ** reallocated by cfn. */
  mp_profile_loc(p, 0, &l);
  ck_assert_uint_eq(l.kind, MP_LOC_LUA);
  ck_assert_uint_eq(l.n_alloc, 1);
  ck_assert_uint_eq(l.created, 1);
  ck_assert_uint_eq(l.held_blocks, 0);
  mp_reader_free(r);
  mp_profile_end_file(p, 0);
  mp_profile_done_reading(p);
  mp_profile_free(p);
  free(p);
  mpw_free(&w);
}
END_TEST

/*
** Blocks of one location released in turn by two others: every release
** misses the memo and appends a copy of its pair, so the array fills and
** is merged many times. The result must be the two pairs with every
** count, in both storage modes, and stay small while reading.
*/
START_TEST(profile_override_copies_merge)
{
  int values;
  for (values = 0; values <= 1; values++) {
    struct mpw w;
    struct mp_profile *p = malloc(sizeof(*p));
    struct mp_reader *r;
    uint64_t i, maxcap = 0;
    struct mp_override ov;
    enum mp_status st;

    mpw_init_mem(&w);
    mpw_symtab_begin(&w);
    mpw_symtab_lfunc(&w, 0x1000, "@a.lua", 0);
    mpw_symtab_cfunc(&w, 0x7000, "freer_a");
    mpw_symtab_cfunc(&w, 0x8000, "freer_b");
    mpw_symtab_end(&w);
    for (i = 0; i < 10000; i++) {
      mpw_alloc(&w, mpw_lua(0x1000, 5), 0x7f0000001000ull + 16 * i, 16);
      mpw_free_ev(&w, mpw_c(i % 2 ? 0x8000 : 0x7000),
		  0x7f0000001000ull + 16 * i, 16);
    }
    mpw_epilogue(&w);
    mp_profile_init(p, MP_GROUP_LINE);
    p->ov_mode = values ? MP_OV_VALUES : MP_OV_KEYS;
    r = mp_reader_new_mem(w.mem, w.len);
    /* One event at a time, to watch the array. */
    for (;;) {
      struct mp_event ev;
      st = mp_reader_next(r, &ev);
      if (st != MP_OK)
	break;
      ck_assert_int_eq(mp_profile_event(p, &ev), 0);
      if (p->ov_cap > maxcap)
	maxcap = p->ov_cap;
    }
    ck_assert_int_eq(st, MP_END);
    ck_assert_uint_le(maxcap, 1024);
    ck_assert_uint_eq(mp_profile_sort_overrides(p, NULL, NULL), 2);
    for (i = 0; i < 2; i++) {
      ov = mp_profile_override(p, i);
      ck_assert_uint_eq(ov.key >> 63, 1);
      ck_assert_uint_eq((uint32_t)ov.key, 0);	/* @a.lua:5's blocks. */
      ck_assert_uint_eq(ov.count, values ? 5000 : 0);
      ck_assert_uint_eq(ov.bytes, values ? 80000 : 0);
    }
    mp_reader_free(r);
    mp_profile_free(p);
    free(p);
    mpw_free(&w);
  }
}
END_TEST

/*
** Blocks of nlines Lua lines, released by code chosen by the line: some
** lines always by the collector, some by one of four C functions in
** turn, the rest by any of them, a trace or another line, freed or
** reallocated. The memos of the last two kinds give up their pairs.
*/
static void override_stream(struct mpw *w, uint32_t nlines, int nevents,
			    uint64_t rng)
{
  enum { SLOTS = 4096 };
  static unsigned char live[SLOTS];
  int i;

  memset(live, 0, sizeof(live));
  mpw_init_mem(w);
  mpw_symtab_begin(w);
  mpw_symtab_lfunc(w, 0x1000, "@a.lua", 0);
  for (i = 0; i < 4; i++) {
    char name[16];
    snprintf(name, sizeof(name), "freer%d", i);
    mpw_symtab_cfunc(w, 0x7000 + 0x100 * (uint64_t)i, name);
  }
  mpw_symtab_trace(w, 1, 0x1000, 3);
  mpw_symtab_end(w);
  for (i = 0; i < nevents; i++) {
    uint64_t slot, line, addr;
    struct mpw_loc at;
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    slot = (rng >> 33) % SLOTS;
    addr = 0x7f0000000000ull + 16 * slot;
    /* The line that allocated a slot is the slot's, so that its
    ** releaser can depend on it. */
    line = 1 + slot % nlines;
    if (!live[slot]) {
      mpw_alloc(w, mpw_lua(0x1000, line), addr, 16 + slot % 64);
      live[slot] = 1;
      continue;
    }
    switch (line % 3) {
    case 0:
      at = mpw_internal();
      break;
    case 1:
      at = mpw_c(0x7000 + 0x100 * ((rng >> 20) % 4));
      break;
    default:
      switch ((rng >> 20) % 4) {
      case 0: at = mpw_internal(); break;
      case 1: at = mpw_c(0x7000 + 0x100 * ((rng >> 24) % 4)); break;
      case 2: at = mpw_trace(1); break;
      default: at = mpw_lua(0x1000, 1 + (rng >> 24) % nlines); break;
      }
    }
    if ((rng >> 40) % 5 == 0) {
      /* A reallocation in place: the block is the releaser's now. */
      mpw_realloc(w, at, addr, 16 + slot % 64, addr, 32);
    } else {
      mpw_free_ev(w, at, addr, 16 + slot % 64);
      live[slot] = 0;
    }
  }
  mpw_epilogue(w);
}

/*
** Without counts (MP_OV_KEYS) most pairs live in the memos until the end, and
** are merged by a counting sort (or, short of memory, a comparison sort
** in place): each way gives the keys that the values keep, in the same
** order, with and without ranks, with few locations (the array merged
** while reading) and many.
*/
START_TEST(profile_override_keys_match_values)
{
  static const struct { uint32_t nlines; int nevents, ranked; } cases[] = {
    {6, 60000, 1}, {6, 60000, 0}, {900, 200000, 1}, {900, 100000, 0},
  };
  size_t c;
  for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    struct mpw w;
    struct mp_profile *p[3];
    uint32_t *rank = NULL, *loc = NULL, nlocs = 0, i;
    uint64_t n[3], k, maxcap = 0, rng = 99 + c;
    int m;

    override_stream(&w, cases[c].nlines, cases[c].nevents, 12345 + c);
    for (m = 0; m < 3; m++) {
      struct mp_reader *r = mp_reader_new_mem(w.mem, w.len);
      struct mp_event ev;
      p[m] = malloc(sizeof(*p[m]));
      mp_profile_init(p[m], MP_GROUP_LINE);
      p[m]->ov_mode = m == 0 ? MP_OV_VALUES : MP_OV_KEYS;
      while (mp_reader_next(r, &ev) == MP_OK) {
	ck_assert_int_eq(mp_profile_event(p[m], &ev), 0);
	if (m == 1 && p[m]->ov_cap > maxcap)
	  maxcap = p[m]->ov_cap;
      }
      mp_reader_free(r);
    }
    nlocs = p[0]->nlocs;
    ck_assert_uint_ge(nlocs, cases[c].nlines);
    if (cases[c].nlines < 10)
      ck_assert_uint_le(maxcap, 1024);	/* Merged while reading. */
    if (cases[c].ranked) {
      /* A shuffle for the ranks. */
      rank = malloc(nlocs * sizeof(*rank));
      loc = malloc(nlocs * sizeof(*loc));
      for (i = 0; i < nlocs; i++)
	loc[i] = i;
      for (i = nlocs - 1; i > 0; i--) {
	uint32_t j, t;
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	j = (uint32_t)((rng >> 33) % (i + 1));
	t = loc[i];
	loc[i] = loc[j];
	loc[j] = t;
      }
      for (i = 0; i < nlocs; i++)
	rank[loc[i]] = i;
    }
    n[0] = mp_profile_sort_overrides(p[0], rank, loc);
    n[1] = mp_profile_sort_overrides(p[1], rank, loc);
    mp_overrides_finish_keys(p[2], rank, loc, 1);
    p[2]->ov_sorted = 1;
    n[2] = p[2]->nov;
    ck_assert_uint_gt(n[0], nlocs);	/* Pairs given up in plenty. */
    for (m = 1; m < 3; m++) {
      ck_assert_uint_eq(n[m], n[0]);
      for (k = 0; k < n[0]; k++)
	ck_assert_uint_eq(mp_profile_override(p[m], k).key,
			  mp_profile_override(p[0], k).key);
      ck_assert(!p[m]->oom);
    }
    /* And that order is the ranks' within each releaser. */
    for (k = 1; k < n[0]; k++) {
      uint64_t x = mp_profile_override(p[0], k - 1).key;
      uint64_t y = mp_profile_override(p[0], k).key;
      uint32_t rx = rank ? rank[(uint32_t)x] : (uint32_t)x;
      uint32_t ry = rank ? rank[(uint32_t)y] : (uint32_t)y;
      ck_assert(x >> 32 < y >> 32 || (x >> 32 == y >> 32 && rx < ry));
    }
    for (m = 0; m < 3; m++) {
      mp_profile_free(p[m]);
      free(p[m]);
    }
    free(rank);
    free(loc);
    mpw_free(&w);
  }
}
END_TEST

/* Lua code grouped by line, interned by chunk and line, finds the
** locations that the general interning made, and the other way round;
** a key with more than chunk and line is another location. */
START_TEST(locs_intern_lua_line_same_as_general)
{
  struct mp_profile *p = malloc(sizeof(*p));
  struct mp_loc k;
  int64_t id, ld;
  uint32_t i;

  mp_profile_init(p, MP_GROUP_LINE);
  for (i = 0; i < 10000; i++) {
    uint32_t chunk = i % 50, line = i % 97;
    memset(&k, 0, sizeof(k));
    k.kind = MP_LOC_LUA;
    k.str = chunk;
    k.line = line;
    if (i % 2) {
      id = mp_locs_intern(p, &k);
      ck_assert_int_eq(mp_locs_intern_lua_line(p, chunk, line), id);
    } else {
      id = mp_locs_intern_lua_line(p, chunk, line);
      ck_assert_int_eq(mp_locs_intern(p, &k), id);
    }
    ck_assert_int_ge(id, 0);
  }
  ck_assert_uint_eq(p->nlocs, 4850);	/* 50 * 97 pairs, from 4850 on. */
  k.linedefined = 7;
  ld = mp_locs_intern(p, &k);
  ck_assert_int_eq(ld, 4850);
  ck_assert_int_ne(mp_locs_intern_lua_line(p, k.str, k.line), ld);
  ck_assert_uint_eq(p->nlocs, 4851);
  mp_profile_free(p);
  free(p);
}
END_TEST

/* Two profiles of the same events read two ways hold the same live
** heap, the same locations in the same order and the same sums; reading
** is over after. */
static void assert_same_profiles(struct mp_profile *a, struct mp_profile *b)
{
  uint32_t i;
  ck_assert(memcmp(&a->file, &b->file, sizeof(a->file)) == 0);
  ck_assert_uint_eq(a->file_events, b->file_events);
  ck_assert_uint_eq(mp_heap_count(&a->heap), mp_heap_count(&b->heap));
  ck_assert_uint_eq(a->nlocs, b->nlocs);
  for (i = 0; i < a->nlocs; i++)
    ck_assert(memcmp(&a->locs[i], &b->locs[i], sizeof(a->locs[i])) == 0);
  mp_profile_end_file(a, 0);
  mp_profile_end_file(b, 0);
  mp_profile_done_reading(a);
  mp_profile_done_reading(b);
  ck_assert(memcmp(&a->total, &b->total, sizeof(a->total)) == 0);
}

static void free_profiles(struct mp_profile *a, struct mp_profile *b)
{
  mp_profile_free(a);
  mp_profile_free(b);
  free(a);
  free(b);
}

START_TEST(profile_threaded_same_as_single)
{
  struct mpw w;
  char *name;
  FILE *f = tmpfile();
  struct mp_profile *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
  struct mp_reader *ra, *rb;
  uint64_t na, nb;

  long_stream(&w, &name);
  ck_assert_uint_eq(fwrite(w.mem, 1, w.len, f), w.len);
  fflush(f);
  ck_assert_int_eq(lseek(fileno(f), 0, SEEK_SET), 0);
  mp_profile_init(a, MP_GROUP_LINE);
  mp_profile_init(b, MP_GROUP_LINE);
  ra = mp_reader_new_mem(w.mem, w.len);
  rb = mp_reader_new_fd(fileno(f), -1);
  ck_assert_int_eq(mp_profile_read(a, ra, &na, NULL, NULL), MP_END);
  ck_assert_int_eq(mp_profile_read_threaded(b, rb, &nb, NULL, NULL), MP_END);
  ck_assert_uint_eq(na, nb);
  ck_assert_uint_eq(na, 200000);
  assert_same_profiles(a, b);
  ck_assert_uint_eq(a->total.n_alloc + a->total.n_realloc + a->total.n_free,
		    200000);
  /* The long name made it through the batch's own copy. */
  ck_assert_uint_eq(a->strings.count, b->strings.count);
  ck_assert_uint_eq(mp_strings_get(&b->strings, 1)->len, strlen(name));
  mp_reader_free(ra);
  mp_reader_free(rb);
  free_profiles(a, b);
  fclose(f);
  free(name);
  mpw_free(&w);
}
END_TEST

/*
** A start snapshot of 1000 blocks, 3000 allocations, a later snapshot's
** census of the 2000 still live, then their frees (#34): the snapshots'
** blocks are no events, and none is allocated over a live one. The
** same read by mp_profile_read, whose loop decodes straight into the
** accounting, by mp_profile_read_threaded and event by event.
*/
START_TEST(profile_snapshots_are_no_events)
{
  struct mpw w;
  struct mp_profile *p[3];
  uint64_t n[3];
  struct mp_event ev;
  int i, j;

  mpw_init_mem(&w);
  mpw_symtab_begin_ext(&w);	/* INFO SNAPSHOT is the extension's. */
  mpw_symtab_lfunc(&w, 0x1000, "@a.lua", 0);
  mpw_symtab_end(&w);
  mpw_info(&w, LJM_INFO_SNAPSHOT, 1);
  for (i = 0; i < 1000; i++)
    mpw_alloc(&w, mpw_internal(), 0x7e0000000000ull + i * 16, 16);
  mpw_info(&w, LJM_INFO_SNAPSHOT, 0);
  for (i = 0; i < 3000; i++)
    mpw_alloc(&w, mpw_lua(0x1000, i % 50), 0x7f0000000000ull + i * 32, 24);
  for (i = 0; i < 1000; i++)
    mpw_free_ev(&w, mpw_lua(0x1000, 60), 0x7f0000000000ull + i * 32, 24);
  mpw_info(&w, LJM_INFO_SNAPSHOT, 2);
  for (i = 1000; i < 3000; i++)
    mpw_alloc(&w, mpw_internal(), 0x7f0000000000ull + i * 32, 24);
  mpw_info(&w, LJM_INFO_SNAPSHOT, 0);
  for (i = 1000; i < 3000; i++)
    mpw_free_ev(&w, mpw_lua(0x1000, 61), 0x7f0000000000ull + i * 32, 24);
  mpw_epilogue(&w);

  for (j = 0; j < 3; j++) {
    struct mp_reader *r = mp_reader_new_mem(w.mem, w.len);
    ck_assert_ptr_nonnull(p[j] = malloc(sizeof(*p[j])));
    mp_profile_init(p[j], MP_GROUP_LINE);
    if (j == 0) {
      ck_assert_int_eq(mp_profile_read(p[j], r, &n[j], NULL, NULL), MP_END);
    } else if (j == 1) {
      ck_assert_int_eq(mp_profile_read_threaded(p[j], r, &n[j], NULL, NULL),
		       MP_END);
    } else {
      enum mp_status st;
      uint64_t before = p[j]->file_events;
      while ((st = mp_reader_next(r, &ev)) == MP_OK)
	ck_assert_int_eq(mp_profile_event(p[j], &ev), 0);
      ck_assert_int_eq(st, MP_END);
      n[j] = p[j]->file_events - before;
    }
    mp_reader_free(r);
    ck_assert_uint_eq(n[j], 6000);
    ck_assert_uint_eq(p[j]->file_events, 6000);
    ck_assert_uint_eq(p[j]->file.overwritten, 0);
    ck_assert_uint_eq(p[j]->file.untracked_frees, 0);
    ck_assert_uint_eq(p[j]->file.snap_blocks, 1000);
    ck_assert_uint_eq(p[j]->file.later_snapshots, 1);
    ck_assert_uint_eq(p[j]->file.peak_bytes, 1000 * 16 + 3000 * 24);
    ck_assert_uint_eq(p[j]->file.peak_event, 3000);
  }
  assert_same_profiles(p[0], p[1]);
  ck_assert_uint_eq(p[0]->total.n_alloc, 3000);
  ck_assert_uint_eq(p[0]->total.n_free, 3000);
  ck_assert_uint_eq(p[0]->total.bytes_allocated, 3000 * 24);
  free_profiles(p[0], p[1]);
  mp_profile_free(p[2]);
  free(p[2]);
  mpw_free(&w);
}
END_TEST

/* The live heap's keys: the fast decoder's and mp_fast_key agree. */
/* The text formats' escapes: controls and bytes that are not UTF-8 as
** \xHH, valid UTF-8 as it is; folded frames without ';' or trailing
** spaces. Every byte value at every place of a 16-byte name, against a
** byte-by-byte reading (the escaper tests eight bytes at a time). */
START_TEST(names_escape_controls)
{
  static const struct {
    const char *in, *out;
    unsigned how;
  } cases[] = {
    {"@\033[2J.lua", "@\\x1b[2J.lua", 0},
    {"a\tb\nc\177", "a\\x09b\\x0ac\\x7f", 0},
    {"a\tb\nc\033", "a\tb\nc\\x1b", MP_ESC_KEEP_LINES},
    {"caf\303\251 \360\237\230\200", "caf\303\251 \360\237\230\200", 0},
    {"c1\302\233 nbsp\302\240", "c1\\xc2\\x9b nbsp\302\240", 0},
    {"cut\303", "cut\\xc3", 0},
    {"bad\300\257\355\240\200", "bad\\xc0\\xaf\\xed\\xa0\\x80", 0},
    {"a;b;c  ", "a;b;c  ", 0},
    {"a;b;c  ", "a_b_c\\x20\\x20", MP_ESC_FRAME},
    {"   ", "\\x20\\x20\\x20", MP_ESC_FRAME},
    {"", "", MP_ESC_FRAME},
  };
  static const char hex[] = "0123456789abcdef";
  struct mp_buf b = {0};
  size_t i;
  unsigned c, at;

  for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    b.len = 0;
    mp_buf_add(&b, "", 0);
    mp_name_escape(&b, cases[i].in, strlen(cases[i].in), cases[i].how);
    ck_assert_str_eq(b.data, cases[i].out);
  }
  for (c = 0; c < 256; c++)
    for (at = 0; at < 16; at++) {
      char name[16], want[20];
      size_t n = 0;
      memset(name, 'x', sizeof(name));
      name[at] = (char)c;
      memset(want, 'x', at);
      n = at;
      if (c >= 0x20 && c < 0x7f) {
	want[n++] = (char)c;
      } else {
	/* Alone among ASCII, a byte of 0x80 or more is not UTF-8. */
	want[n++] = '\\';
	want[n++] = 'x';
	want[n++] = hex[c >> 4];
	want[n++] = hex[c & 15];
      }
      memset(want + n, 'x', 15 - at);
      n += 15 - at;
      b.len = 0;
      mp_name_escape(&b, name, sizeof(name), 0);
      ck_assert_uint_eq(b.len, n);
      ck_assert(memcmp(b.data, want, n) == 0);
    }
  mp_buf_free(&b);
}
END_TEST

START_TEST(fast_keys_match_values)
{
  static const uint64_t values[] = {
    0, 1, 127, 128, 16383, 16384, 0x7f0000001000ull, 0x7fffffffffffull,
    (1ull << 56) - 1
  };
  size_t i;
  for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
    uint8_t buf[24];
    uint64_t k = 1, v = 1;
    unsigned n = mp_uleb_write(buf, values[i]);
    memset(buf + n, 0xff, sizeof(buf) - n);
    ck_assert_ptr_eq(mp_fast_uleb_key(buf, &k), buf + n);
    ck_assert_uint_eq(k, mp_fast_key(values[i]));
    ck_assert_ptr_eq(mp_fast_uleb(buf, &v), buf + n);
    ck_assert_uint_eq(v, values[i]);
  }
  /* Not canonical (a last byte of zero), or too long: the reader's. */
  {
    static const uint8_t pad[16] = {0x81, 0x00, 0xff, 0xff, 0xff, 0xff,
				     0xff, 0xff, 0xff, 0xff};
    static const uint8_t nine[16] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
				      0x80, 0x80, 0x01};
    uint64_t k;
    ck_assert_ptr_null(mp_fast_uleb_key(pad, &k));
    ck_assert_ptr_null(mp_fast_uleb_key(nine, &k));
  }
}
END_TEST

/* v as a ULEB128 padded with a zero group: valid, not canonical. */
static void uleb_padded(struct mpw *w, uint64_t v)
{
  uint8_t enc[16];
  unsigned n = mp_uleb_write(enc, v), k;
  enc[n - 1] |= 0x80;
  enc[n++] = 0;
  for (k = 0; k < n; k++)
    mpw_byte(w, enc[k]);
}

/* Stream w read into a by the fast path (mp_profile_read) and into b one
** event at a time: the memory events each counted, in *na and *nb. */
static void read_fast_and_one_by_one(const struct mpw *w,
				     struct mp_profile *a,
				     struct mp_profile *b, uint64_t *na,
				     uint64_t *nb)
{
  struct mp_reader *ra = mp_reader_new_mem(w->mem, w->len);
  struct mp_reader *rb = mp_reader_new_mem(w->mem, w->len);
  struct mp_event ev;

  mp_profile_init(a, MP_GROUP_LINE);
  mp_profile_init(b, MP_GROUP_LINE);
  ck_assert_int_eq(mp_profile_read(a, ra, na, NULL, NULL), MP_END);
  *nb = 0;
  while (mp_reader_next(rb, &ev) == MP_OK) {
    ck_assert_int_eq(mp_profile_event(b, &ev), 0);
    *nb += !mp_event_is_symbol(ev.type);
  }
  mp_reader_free(ra);
  mp_reader_free(rb);
}

/* Events the fast path takes and events only the reader takes (huge and
** non-canonical addresses, a free's address written in 9 bytes; Lua and C
** functions at such addresses) share one live heap and one set of
** locations: the sums are those of accounting every event one by one. */
START_TEST(profile_fast_same_as_events)
{
  struct mpw w;
  struct mp_profile *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
  uint64_t na, nb, i;

  mpw_init_mem(&w);
  mpw_symtab_begin(&w);
  mpw_symtab_trace(&w, 1, 0x1000, 3);
  mpw_symtab_lfunc(&w, 0x7f00000a0000ull, "@f.lua", 1);
  mpw_symtab_lfunc(&w, 1ull << 60, "@huge.lua", 1);
  mpw_symtab_cfunc(&w, 0x7f00000b0000ull, "cf");
  mpw_symtab_end(&w);
  for (i = 0; i < 500; i++) {
    uint64_t addr = 0x7f0000001000ull + 16 * i;
    mpw_alloc(&w, mpw_lua(0x7f00000a0000ull, 2 + i % 3),
	      0x7e0000000000ull + 16 * i, 16);
    mpw_alloc(&w, mpw_lua(1ull << 60, 2 + i % 2), 0x7d0000000000ull + 16 * i,
	      16);
    mpw_alloc(&w, mpw_c(i % 2 ? 0x7f00000b0010ull : 1ull << 59),
	      0x7c0000000000ull + 16 * i, 16);
    if (i % 5 == 0) {
      mpw_byte(&w, LJM_EV_ALLOC | LJM_SRC_LFUNC);
      uleb_padded(&w, 0x7f00000a0000ull);	/* The prototype. */
      mpw_uleb(&w, 2);
      mpw_uleb(&w, 0x7b0000000000ull + 16 * i);
      mpw_uleb(&w, 8);
    }
    if (i == 250)
      mpw_sym_lfunc(&w, 0x7f00000a0000ull, "@g.lua", 1);
    mpw_alloc(&w, mpw_internal(), 1ull << 60 | i, 32);
    mpw_alloc(&w, mpw_trace(1), addr, 48);
    if (i % 2) {
      mpw_byte(&w, LJM_EV_FREE | LJM_SRC_INTERNAL);
      uleb_padded(&w, addr);
      mpw_uleb(&w, 48);
    } else {
      mpw_free_ev(&w, mpw_internal(), addr, 48);
    }
    if (i % 3 == 0)
      mpw_free_ev(&w, mpw_trace(1), 1ull << 60 | i, 32);
    mpw_realloc(&w, mpw_trace(1), 1ull << 60 | (i + 1000), 0,
		1ull << 61 | i, 64);
    mpw_realloc(&w, mpw_internal(), 0, 0, addr + 8, 24);
  }
  mpw_epilogue(&w);
  read_fast_and_one_by_one(&w, a, b, &na, &nb);
  ck_assert_uint_eq(na, nb);
  ck_assert_uint_eq(a->file.untracked_frees, 500);	/* The reallocs' only. */
  assert_same_profiles(a, b);
  ck_assert_uint_eq(a->total.n_alloc, 5 * 500 + 100);
  /* @f.lua:2..4 and @g.lua:2..4, @huge.lua:2..3, cf (the nearest C
  ** symbol below both C addresses), the internal location and the
  ** trace. */
  ck_assert_uint_eq(a->nlocs, 6 + 2 + 1 + 2);
  free_profiles(a, b);
  mpw_free(&w);
}
END_TEST

/*
** The fast path's memo of a Lua event's raw bytes: a symbol between two
** events with the same bytes renames the second; lines whose first byte
** is the same but not the second are two locations. The same sums as
** accounting every event one by one.
*/
START_TEST(profile_fast_memo_raw_bytes)
{
  static const uint64_t lines[] = {5, 300, 428, 428, 300};
  struct mpw w;
  struct mp_profile *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
  struct mp_loc l;
  uint64_t na, nb, i, addr = 0x7f0000200000ull;
  const uint64_t proto = 0x7f0000100000ull;	/* A 7-byte key. */
  size_t j;

  mpw_init_mem(&w);
  mpw_symtab_begin(&w);
  mpw_symtab_lfunc(&w, proto, "@a.lua", 1);
  mpw_symtab_end(&w);
  for (j = 0; j < sizeof(lines) / sizeof(lines[0]); j++) {
    if (j == 3)
      mpw_sym_lfunc(&w, proto, "@b.lua", 1);
    for (i = 0; i < 3; i++) {
      mpw_alloc(&w, mpw_lua(proto, lines[j]), addr, 16);
      mpw_free_ev(&w, mpw_lua(proto, lines[j]), addr, 16);
      addr += 16;
    }
  }
  /* So that the events above are in the fast path's window, not in the
  ** margin at the end that the reader decodes. */
  for (i = 0; i < 100; i++)
    mpw_alloc(&w, mpw_internal(), addr + 16 * i, 16);
  mpw_epilogue(&w);
  read_fast_and_one_by_one(&w, a, b, &na, &nb);
  ck_assert_uint_eq(na, 130);
  ck_assert_uint_eq(nb, 130);
  /* @a.lua:5, :300, :428; @b.lua:428, :300; the internal location. */
  ck_assert_uint_eq(a->nlocs, 6);
  for (i = 0; i < 5; i++) {
    mp_profile_loc(a, (uint32_t)i, &l);
    ck_assert_uint_eq(l.line, lines[i]);
    ck_assert_uint_eq(l.n_alloc, 3);
    ck_assert_uint_eq(l.n_free, 3);
    ck_assert_str_eq(mp_strings_get(&a->strings, l.str)->data,
		     i < 3 ? "@a.lua" : "@b.lua");
  }
  assert_same_profiles(a, b);
  free_profiles(a, b);
  mpw_free(&w);
}
END_TEST


/* -- The profile extension: stacks ----------------------------------------- */

/* An extended stream's sections begun, prototypes 0x1000 (@m.lua, main)
** and 0x2000 (@f.lua:10), C symbol 0x7000, trace 1. */
static void ext_begin(struct mpw *w)
{
  mpw_init_mem(w);
  mpw_symtab_begin_ext(w);
  mpw_symtab_lfunc(w, 0x1000, "@m.lua", 0);
  mpw_symtab_lfunc(w, 0x2000, "@f.lua", 10);
  mpw_symtab_cfunc(w, 0x7000, "cfn");
  mpw_symtab_trace(w, 1, 0x2000, 11);
  mpw_symtab_end(w);
}

START_TEST(reader_stack_events)
{
  static const uint64_t protos[] = {0x2000, 0x1000}, lines[] = {12, 5};
  struct mpw w;
  struct mp_reader *r;
  struct mp_event ev;
  int i;

  ext_begin(&w);
  mpw_info(&w, LJM_INFO_DEPTH, 32);
  mpw_info(&w, 1000, 1ull << 40);	/* Unknown: delivered, not refused. */
  mpw_node_lua(&w, 0, 0x1000, 5, "");
  mpw_node_lua(&w, 1, 0x2000, 12, "f");
  mpw_node_fast(&w, 2, 87, "string.rep");
  mpw_node_c(&w, 1, 0x7010);
  mpw_node_trace(&w, 1, 1, 3);
  mpw_node_cut(&w, 0);
  mpw_site(&w, 1, 3, 2, protos, lines);
  mpw_alloc(&w, mpw_stack(3), 0x10000, 100);
  mpw_alloc_kind(&w, mpw_stack(6), 0x10100, 8, 4);
  mpw_realloc(&w, mpw_stack(2), 0x10000, 100, 0x10200, 200);
  mpw_free_ev(&w, mpw_stack(5), 0x10100, 8);
  mpw_free_ev(&w, mpw_lua(0x2000, 13), 0x10200, 200);
  mpw_epilogue(&w);

  r = mp_reader_new_mem(w.mem, w.len);
  for (i = 0; i < 4; i++)
    ck_assert_int_eq(mp_reader_next(r, &ev), MP_OK);	/* The symtab. */
  ck_assert_uint_eq(mp_reader_extension(r), LJM_EXT_PROFILE);
  ck_assert_int_eq(mp_reader_next(r, &ev), MP_OK);
  ck_assert_int_eq(ev.type, MP_EV_SYM_INFO);
  ck_assert(mp_event_is_symbol(ev.type) && mp_event_is_ext(ev.type));
  ck_assert_uint_eq(ev.info_key, LJM_INFO_DEPTH);
  ck_assert_uint_eq(ev.info_value, 32);
  ck_assert_int_eq(mp_reader_next(r, &ev), MP_OK);
  ck_assert_uint_eq(ev.info_key, 1000);
  ck_assert_uint_eq(ev.info_value, 1ull << 40);
  ck_assert_int_eq(mp_reader_next(r, &ev), MP_OK);
  ck_assert_int_eq(ev.type, MP_EV_SYM_NODE);
  ck_assert_uint_eq(ev.node, 1);
  ck_assert_uint_eq(ev.node_parent, 0);
  ck_assert_uint_eq(ev.frame, LJM_FRAME_LUA);
  ck_assert_uint_eq(ev.frame_a, 0x1000);
  ck_assert_uint_eq(ev.frame_b, 5);
  ck_assert_uint_eq(ev.name_len, 0);
  ck_assert_int_eq(mp_reader_next(r, &ev), MP_OK);
  ck_assert_uint_eq(ev.node, 2);
  ck_assert_uint_eq(ev.node_parent, 1);
  ck_assert_uint_eq(ev.name_len, 1);
  ck_assert(ev.name[0] == 'f');
  ck_assert_int_eq(mp_reader_next(r, &ev), MP_OK);
  ck_assert_uint_eq(ev.frame, LJM_FRAME_FAST);
  ck_assert_uint_eq(ev.frame_a, 87);
  ck_assert(ev.name_len == 10 && memcmp(ev.name, "string.rep", 10) == 0);
  ck_assert_int_eq(mp_reader_next(r, &ev), MP_OK);
  ck_assert_uint_eq(ev.frame, LJM_FRAME_C);
  ck_assert_uint_eq(ev.frame_a, 0x7010);
  ck_assert_int_eq(mp_reader_next(r, &ev), MP_OK);
  ck_assert_uint_eq(ev.frame, LJM_FRAME_TRACE);
  ck_assert_uint_eq(ev.frame_a, 1);
  ck_assert_uint_eq(ev.frame_b, 3);
  ck_assert_int_eq(mp_reader_next(r, &ev), MP_OK);
  ck_assert_uint_eq(ev.frame, LJM_FRAME_CUT);
  ck_assert_uint_eq(ev.node, 6);
  ck_assert_uint_eq(mp_reader_nodes(r), 6);
  ck_assert_int_eq(mp_reader_next(r, &ev), MP_OK);
  ck_assert_int_eq(ev.type, MP_EV_SYM_SITE);
  ck_assert_uint_eq(ev.sym_addr, 1);
  ck_assert_uint_eq(ev.site, 3);
  ck_assert_uint_eq(ev.site_lines, 2);
  ck_assert_int_eq(mp_reader_next(r, &ev), MP_OK);
  ck_assert_int_eq(ev.type, MP_EV_ALLOC);
  ck_assert_uint_eq(ev.src, LJM_SRC_STACK);
  ck_assert_uint_eq(ev.loc, 3);
  ck_assert_uint_eq(ev.new_size, 100);
  ck_assert_int_eq(ev.objkind, -1);
  ck_assert_int_eq(mp_reader_next(r, &ev), MP_OK);
  ck_assert_uint_eq(ev.loc, 6);
  ck_assert_int_eq(ev.objkind, 4);
  ck_assert_int_eq(mp_reader_next(r, &ev), MP_OK);
  ck_assert_int_eq(ev.type, MP_EV_REALLOC);
  ck_assert_uint_eq(ev.loc, 2);
  ck_assert_uint_eq(ev.new_size, 200);
  ck_assert_int_eq(mp_reader_next(r, &ev), MP_OK);
  ck_assert_int_eq(ev.type, MP_EV_FREE);
  ck_assert_uint_eq(ev.src, LJM_SRC_STACK);
  ck_assert_int_eq(mp_reader_next(r, &ev), MP_OK);
  ck_assert_uint_eq(ev.src, LJM_SRC_LFUNC);
  ck_assert_int_eq(mp_reader_next(r, &ev), MP_END);
  mp_reader_free(r);

  /* Every prefix is a truncated stream, never an error: a node cut in
  ** the middle is not announced. */
  {
    size_t cut;
    unsigned last = 0;
    for (cut = 1; cut < w.len; cut++) {
      unsigned events, symbols;
      ck_assert_int_eq(read_all(w.mem, cut, &events, &symbols, NULL, 0,
				NULL), MP_TRUNCATED);
      ck_assert_uint_ge(events, last);
      last = events;
    }
    ck_assert_uint_eq(last, 5);
  }
  mpw_free(&w);
}
END_TEST

/* Each damage of a stack table: one message, at the byte it is about. */
START_TEST(reader_stack_damage)
{
  struct mpw w;
  size_t base;

  ext_begin(&w);
  mpw_node_lua(&w, 0, 0x1000, 5, "");
  mpw_node_lua(&w, 1, 0x2000, 12, "f");
  base = w.len;
  /* A node used before it was announced. */
  mpw_alloc(&w, mpw_stack(3), 0x10000, 100);
  expect_error(w.mem, w.len, "stack node 3 used before it was announced "
	       "(announced: 1 to 2)", base + 1);
  w.len = base;
  mpw_alloc(&w, mpw_stack(0), 0x10000, 100);
  expect_error(w.mem, w.len, "stack node 0 used before", base + 1);
  w.len = base;
  mpw_free_ev(&w, mpw_stack(300), 0x10000, 100);
  expect_error(w.mem, w.len, "stack node 300 used before", base + 1);
  /* A parent out of range: its own id, a later one (no cycle can be
  ** written: a parent must be older than its child). */
  w.len = base;
  mpw_node_cut(&w, 3);
  expect_error(w.mem, w.len, "stack node 3: parent id 3 out of range "
	       "(announced: 0 to 2)", base + 1);
  w.len = base;
  mpw_node_lua(&w, 1000000, 0x1000, 1, "");
  expect_error(w.mem, w.len, "parent id 1000000 out of range", base + 1);
  /* An unknown frame tag. */
  w.len = base;
  mpw_byte(&w, LJM_EV_SYMTAB | LJM_SRC_NODE);
  mpw_uleb(&w, 1);
  mpw_byte(&w, 9);
  expect_error(w.mem, w.len, "stack node 3: unknown frame tag 9", base + 2);
  /* Bounds of frame fields and sites. */
  w.len = base;
  mpw_node_lua(&w, 1, 0x1000, 1ull << 33, "");
  expect_error(w.mem, w.len, "impossible line number", base + 5);
  w.len = base;
  mpw_node_fast(&w, 1, 1u << 20, "x");
  expect_error(w.mem, w.len, "impossible fast function number", base + 3);
  w.len = base;
  mpw_byte(&w, LJM_EV_SYMTAB | LJM_SRC_SITE);
  mpw_uleb(&w, 1);
  mpw_uleb(&w, 1);
  mpw_uleb(&w, 5000);
  expect_error(w.mem, w.len, "impossible site line count 5000", base + 3);
  /* The KIND bit is for allocations and reallocations only. */
  w.len = base;
  mpw_byte(&w, LJM_EV_FREE | LJM_EV_KIND | LJM_SRC_INTERNAL);
  expect_error(w.mem, w.len, "unused bits", base);
  w.len = base;
  mpw_byte(&w, 0x40 | LJM_EV_ALLOC | LJM_SRC_INTERNAL);
  expect_error(w.mem, w.len, "unused bits", base);
  mpw_free(&w);

  /* In a version-3 stream the extension's events stay errors. */
  mpw_init_mem(&w);
  mpw_symtab_begin(&w);
  mpw_symtab_end(&w);
  base = w.len;
  mpw_alloc(&w, mpw_stack(1), 0x10000, 100);
  expect_error(w.mem, w.len, "stack location (header 0x15) in a version 3 "
	       "stream", base);
  w.len = base;
  mpw_node_cut(&w, 0);
  expect_error(w.mem, w.len, "invalid symbol event header 0x14", base);
  w.len = base;
  mpw_info(&w, 1, 1);
  expect_error(w.mem, w.len, "invalid symbol event header 0x18", base);
  w.len = base;
  mpw_alloc_kind(&w, mpw_internal(), 0x10000, 8, 1);
  expect_error(w.mem, w.len, "unused bits", base);
  mpw_free(&w);

  /* Both headers say the same. */
  expect_error((const uint8_t *)"ljs\x80x\1\0\x80ljm\x03\0\0\0\x80", 15,
	       "the event section has version 3, the symbol table extension "
	       "120", 11);
  expect_error((const uint8_t *)"ljs\x03\0\0\0\x80ljm\x80x\1\0\x80", 15,
	       "the event section has extension 120, the symbol table version "
	       "3", 11);
}
END_TEST

/* The stacks scenario of the golden test, in a profile grouped so. */
static struct mp_profile *read_stream(const struct mpw *w, enum mp_group g,
				      int fast)
{
  struct mp_profile *p = malloc(sizeof(*p));
  struct mp_reader *r = mp_reader_new_mem(w->mem, w->len);
  struct mp_event ev;
  uint64_t n;

  mp_profile_init(p, g);
  if (fast) {
    ck_assert_int_eq(mp_profile_read(p, r, &n, NULL, NULL), MP_END);
  } else {
    while (mp_reader_next(r, &ev) == MP_OK)
      ck_assert_int_eq(mp_profile_event(p, &ev), 0);
  }
  mp_reader_free(r);
  return p;
}

/* The location of node id's events, by name. */
static void leaf_name(struct mp_profile *p, uint32_t id, char *out,
		      size_t len)
{
  struct mp_buf b = {0};
  struct mp_frame f;
  struct mp_loc l;
  mp_profile_frame(p, id, &f);
  mp_profile_loc(p, f.leaf, &l);
  mp_name_location(&b, p, NULL, &l, MP_NAME_PLAIN);
  snprintf(out, len, "%s", b.data ? b.data : "");
  mp_buf_free(&b);
}

/* A stack stream and the version-3 stream a writer without stacks would
** have written for the same run (a built-in charged to its caller's line,
** a cut stack's built-in to the VM): the same figures per location. */
static void twin_streams(struct mpw *s, struct mpw *v)
{
  uint64_t main5, f12, rep, c, t, cut, fcut, i;

  ext_begin(s);
  mpw_init_mem(v);
  mpw_symtab_begin(v);
  mpw_symtab_lfunc(v, 0x1000, "@m.lua", 0);
  mpw_symtab_lfunc(v, 0x2000, "@f.lua", 10);
  mpw_symtab_cfunc(v, 0x7000, "cfn");
  mpw_symtab_trace(v, 1, 0x2000, 11);
  mpw_symtab_end(v);
  main5 = mpw_node_lua(s, 0, 0x1000, 5, "");
  f12 = mpw_node_lua(s, main5, 0x2000, 12, "f");
  rep = mpw_node_fast(s, f12, 87, "string.rep");
  c = mpw_node_c(s, main5, 0x7010);
  t = mpw_node_trace(s, f12, 1, 0);
  cut = mpw_node_cut(s, 0);
  fcut = mpw_node_fast(s, cut, 88, "table.concat");
  for (i = 0; i < 3000; i++) {
    uint64_t a = 0x7f0000000000ull + 64 * i;
    static const struct { int which; uint64_t size; } plan[] = {
      {0, 32}, {1, 48}, {2, 16}, {3, 8}, {4, 100}, {5, 24}
    };
    const uint64_t nodes[] = {rep, f12, c, t, fcut, main5};
    struct mpw_loc v3[6];
    unsigned k = (unsigned)(i % 6);
    v3[0] = mpw_lua(0x2000, 12);
    v3[1] = mpw_lua(0x2000, 12);
    v3[2] = mpw_c(0x7010);
    v3[3] = mpw_trace(1);
    v3[4] = mpw_internal();
    v3[5] = mpw_lua(0x1000, 5);
    mpw_alloc(s, mpw_stack(nodes[plan[k].which]), a, plan[k].size);
    mpw_alloc(v, v3[plan[k].which], a, plan[k].size);
    if (i % 4 == 1) {
      mpw_realloc(s, mpw_stack(nodes[k]), a, plan[k].size, a + 8, 200);
      mpw_realloc(v, v3[k], a, plan[k].size, a + 8, 200);
    }
    if (i % 3 == 2) {
      mpw_free_ev(s, mpw_internal(), i % 4 == 1 ? a + 8 : a, 1);
      mpw_free_ev(v, mpw_internal(), i % 4 == 1 ? a + 8 : a, 1);
    }
    if (i % 7 == 0) {	/* A version-3 location among stacks. */
      mpw_alloc(s, mpw_lua(0x1000, 9), a + 16, 4);
      mpw_alloc(v, mpw_lua(0x1000, 9), a + 16, 4);
    }
  }
  mpw_epilogue(s);
  mpw_epilogue(v);
}

START_TEST(profile_stacks_same_figures_as_v3)
{
  static const enum mp_group groups[] = {MP_GROUP_LINE, MP_GROUP_FUNCTION,
					 MP_GROUP_CHUNK, MP_GROUP_FRAMES};
  struct mpw s, v;
  unsigned g;

  twin_streams(&s, &v);
  for (g = 0; g < 4; g++) {
    struct mp_profile *ps = read_stream(&s, groups[g], 1);
    struct mp_profile *pv = read_stream(&v, groups[g], 1);
    uint32_t i, j, nv = 0;
    /* Every location with events in one has the same counters in the
    ** other (the stack profile has frame-only locations besides). */
    for (i = 0; i < pv->nlocs; i++) {
      struct mp_loc lv, ls;
      struct mp_buf a = {0}, b = {0};
      mp_profile_loc(pv, i, &lv);
      mp_name_location(&a, pv, NULL, &lv, MP_NAME_PLAIN);
      for (j = 0; j < ps->nlocs; j++) {
	mp_profile_loc(ps, j, &ls);
	b.len = 0;
	mp_name_location(&b, ps, NULL, &ls, MP_NAME_PLAIN);
	if (!strcmp(a.data, b.data) && ls.kind == lv.kind &&
	    ls.linedefined == lv.linedefined)
	  break;
      }
      ck_assert_msg(j < ps->nlocs, "no %s with stacks", a.data);
      ck_assert_uint_eq(ls.n_alloc, lv.n_alloc);
      ck_assert_uint_eq(ls.alloc_bytes, lv.alloc_bytes);
      ck_assert_uint_eq(ls.n_realloc, lv.n_realloc);
      ck_assert_uint_eq(ls.realloc_new, lv.realloc_new);
      ck_assert_uint_eq(ls.n_free, lv.n_free);
      ck_assert_uint_eq(ls.held_bytes, lv.held_bytes);
      ck_assert_uint_eq(ls.created, lv.created);
      ck_assert_uint_eq(ls.released, lv.released);
      nv++;
      mp_buf_free(&a);
      mp_buf_free(&b);
    }
    ck_assert_uint_ge(nv, 4);
    ck_assert_uint_eq(ps->file.live_bytes, pv->file.live_bytes);
    ck_assert_uint_eq(ps->file.peak_bytes, pv->file.peak_bytes);
    mp_profile_free(ps);
    mp_profile_free(pv);
    free(ps);
    free(pv);
  }
  mpw_free(&s);
  mpw_free(&v);
}
END_TEST

/* The tree: leaf locations, figures and held bytes per node, one node for
** a stack announced twice and for the same stack in a second file; the
** fast path and event by event agree. */
START_TEST(profile_stack_tree)
{
  struct mpw s, v;
  struct mp_profile *a, *b;
  struct mp_stack_counts c;
  char name[64];
  uint32_t id, n;
  uint64_t held = 0, allocs = 0;

  twin_streams(&s, &v);
  a = read_stream(&s, MP_GROUP_LINE, 1);
  b = read_stream(&s, MP_GROUP_LINE, 0);
  /* 7 nodes and @m.lua:9's one-frame node. */
  ck_assert_uint_eq(mp_profile_nstacks(a), 9);
  ck_assert_uint_eq(mp_profile_nstacks(b), 9);
  ck_assert(memcmp(a->snodes, b->snodes, 9 * sizeof(*a->snodes)) == 0);
  ck_assert(memcmp(a->scounts, b->scounts, 9 * sizeof(*a->scounts)) == 0);
  leaf_name(a, 3, name, sizeof(name));
  ck_assert_str_eq(name, "@f.lua:12");	/* string.rep, at its caller. */
  leaf_name(a, 4, name, sizeof(name));
  ck_assert_str_eq(name, "cfn:0x7000");
  leaf_name(a, 5, name, sizeof(name));
  ck_assert_str_eq(name, "TRACE [1] started at @f.lua:11");
  leaf_name(a, 6, name, sizeof(name));
  ck_assert_str_eq(name, "INTERNAL");		/* [cut]. */
  leaf_name(a, 7, name, sizeof(name));
  ck_assert_str_eq(name, "INTERNAL");		/* A built-in under a cut. */
  leaf_name(a, 8, name, sizeof(name));
  ck_assert_str_eq(name, "@m.lua:9");
  ck_assert_int_eq(mp_profile_stack(a, 3, &c), 1);
  ck_assert_uint_eq(c.n_alloc, 500);
  ck_assert_uint_eq(c.alloc_bytes, 500 * 32);
  ck_assert_uint_eq(c.n_realloc, 0);
  ck_assert_int_eq(mp_profile_stack(a, 2, &c), 1);
  ck_assert_uint_eq(c.n_alloc, 500);
  ck_assert_uint_eq(c.n_realloc, 250);	/* i % 4 == 1 and i % 6 == 1. */
  ck_assert_int_eq(mp_profile_stack(a, 6, &c), 0);	/* No events. */
  for (id = 1; id < 9; id++) {
    mp_profile_stack(a, id, &c);
    held += c.held_bytes;
    allocs += c.n_alloc;
  }
  ck_assert_uint_eq(held, a->file.live_bytes);
  ck_assert_uint_eq(allocs, 3000 + 429);
  /* The fast path adds the collector's frees up at the end: their
  ** location's side record comes later, the figures are the same. */
  ck_assert_uint_eq(a->nlocs, b->nlocs);
  for (id = 0; id < a->nlocs; id++) {
    struct mp_loc la, lb;
    mp_profile_loc(a, id, &la);
    mp_profile_loc(b, id, &lb);
    ck_assert(memcmp(&la, &lb, sizeof(la)) == 0);
  }
  ck_assert(memcmp(&a->file, &b->file, sizeof(a->file)) == 0);
  free_profiles(a, b);

  /* The same stream twice, and a stack announced twice in it: no new
  ** node. */
  {
    struct mpw d;
    struct mp_profile *p = malloc(sizeof(*p));
    int k;
    mp_profile_init(p, MP_GROUP_LINE);
    ext_begin(&d);
    mpw_node_lua(&d, 0, 0x1000, 5, "");
    mpw_node_lua(&d, 1, 0x2000, 12, "f");
    mpw_node_lua(&d, 1, 0x2000, 12, "f");
    mpw_alloc(&d, mpw_stack(2), 0x10000, 10);
    mpw_alloc(&d, mpw_stack(3), 0x10100, 20);
    mpw_free_ev(&d, mpw_internal(), 0x10000, 10);
    mpw_epilogue(&d);
    for (k = 0; k < 2; k++) {
      struct mp_reader *r = mp_reader_new_mem(d.mem, d.len);
      uint64_t ne;
      ck_assert_int_eq(mp_profile_read(p, r, &ne, NULL, NULL), MP_END);
      mp_profile_end_file(p, 0);
      mp_reader_free(r);
    }
    n = mp_profile_nstacks(p);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(mp_profile_stack(p, 2, &c), 1);
    ck_assert_uint_eq(c.n_alloc, 4);
    ck_assert_uint_eq(c.alloc_bytes, 60);
    ck_assert_uint_eq(c.held_bytes, 40);
    ck_assert_uint_eq(c.held_blocks, 2);
    mp_profile_free(p);
    free(p);
    mpw_free(&d);
  }
  mpw_free(&s);
  mpw_free(&v);
}
END_TEST

/* Memory follows the tree, not the file: a million events over three
** stacks make three nodes and nothing more. */
START_TEST(profile_stack_memory_follows_tree)
{
  struct mpw w;
  struct mp_profile *p;
  uint64_t i;

  ext_begin(&w);
  mpw_node_lua(&w, 0, 0x1000, 5, "");
  mpw_node_lua(&w, 1, 0x2000, 12, "f");
  mpw_node_fast(&w, 2, 87, "string.rep");
  for (i = 0; i < 1000000; i++) {
    uint64_t a = 0x7f0000000000ull + 64 * (i % 1000);
    mpw_alloc(&w, mpw_stack(1 + i % 3), a, 16);
    mpw_free_ev(&w, mpw_internal(), a, 16);
  }
  mpw_epilogue(&w);
  p = read_stream(&w, MP_GROUP_LINE, 1);
  ck_assert_uint_eq(mp_profile_nstacks(p), 4);
  ck_assert_uint_le(p->snodes_cap, 256);
  ck_assert_uint_le(p->fnodes_cap, 256);
  ck_assert_uint_eq(p->file_events, 2000000);
  mp_profile_free(p);
  free(p);
  mpw_free(&w);
}
END_TEST


/* What the pprof format takes apart (mp_frame_parts), and the text
** report's note when the writer's node table was full. */
START_TEST(stack_frame_parts_and_cut_note)
{
  struct mpw w;
  struct mp_profile *p;
  struct mp_frame f;
  struct mp_frame_parts fp;
  struct mp_report_opts o;
  struct mp_report_input in;
  static const char *const files[] = {"x"};
  int truncated = 0;
  uint64_t events = 0;
  char buf[4096];
  FILE *out;
  size_t n;

  ext_begin(&w);
  mpw_node_lua(&w, 0, 0x1000, 5, "");
  mpw_node_lua(&w, 1, 0x2000, 12, "f");
  mpw_node_fast(&w, 2, 87, "string.rep");
  mpw_node_c(&w, 1, 0x7010);
  mpw_info(&w, LJM_INFO_NODES_FULL, 4);
  mpw_alloc(&w, mpw_stack(3), 0x10000, 100);
  mpw_alloc(&w, mpw_stack(4), 0x10100, 10);
  mpw_info(&w, LJM_INFO_CUT_EVENTS, 7);
  mpw_epilogue(&w);
  p = read_stream(&w, MP_GROUP_LINE, 1);

  mp_profile_frame(p, 3, &f);
  ck_assert_uint_eq(f.tag, LJM_FRAME_FAST);
  ck_assert_uint_eq(f.parent, 2);
  mp_frame_parts(p, &f, &fp);
  ck_assert(fp.function_len == 10 && !memcmp(fp.function, "string.rep", 10));
  ck_assert_ptr_null(fp.file);
  mp_profile_frame(p, 2, &f);
  mp_frame_parts(p, &f, &fp);
  ck_assert(fp.function_len == 1 && fp.function[0] == 'f');
  ck_assert(fp.file_len == 6 && !memcmp(fp.file, "@f.lua", 6));
  ck_assert_uint_eq(fp.line, 12);
  mp_profile_frame(p, 1, &f);
  mp_frame_parts(p, &f, &fp);
  ck_assert_ptr_null(fp.function);	/* The stream has no name. */
  ck_assert(fp.file_len == 6 && !memcmp(fp.file, "@m.lua", 6));
  ck_assert_uint_eq(fp.line, 5);
  mp_profile_frame(p, 4, &f);
  mp_frame_parts(p, &f, &fp);
  ck_assert(fp.function_len == 3 && !memcmp(fp.function, "cfn", 3));
  ck_assert_ptr_null(fp.file);

  mp_profile_end_file(p, 0);
  mp_profile_done_reading(p);
  memset(&o, 0, sizeof(o));
  o.format = &mp_formats[0];
  o.callers = 1;
  in.files = files;
  in.nfiles = 1;
  in.truncated = &truncated;
  in.events_read = &events;
  in.at_events = NULL;
  out = tmpfile();
  ck_assert_int_eq(mp_report_text(out, p, &o, &in), 0);
  rewind(out);
  n = fread(buf, 1, sizeof(buf) - 1, out);
  buf[n] = '\0';
  fclose(out);
  ck_assert_msg(strstr(buf, "\t\t100B, 1 events: string.rep <- @f.lua:12 (f) "
		"<- @m.lua:5\n") != NULL, "%s", buf);
  ck_assert_msg(strstr(buf, "STACKS CUT: node table limit reached: the "
		"writer's table was full at 4 nodes; 7 events have shorter "
		"stacks, charged to a caller's line (an older writer)\n") !=
		NULL, "%s", buf);
  mp_profile_free(p);
  free(p);
  mpw_free(&w);
}
END_TEST


/* Events fed one by one whose stream held a block before its first
** stack node: the heap's owners stay locations, the stack events count
** as internal, nothing is mixed up (a free of the early block). */
START_TEST(profile_stacks_after_blocks_fed_by_hand)
{
  struct mpw w;
  struct mp_profile *p;
  struct mp_loc l;
  uint32_t i, internal = 0;

  ext_begin(&w);
  mpw_alloc(&w, mpw_lua(0x2000, 12), 0x10000, 100);
  mpw_node_lua(&w, 0, 0x1000, 5, "");
  mpw_alloc(&w, mpw_stack(1), 0x10100, 10);
  mpw_free_ev(&w, mpw_internal(), 0x10000, 100);
  mpw_free_ev(&w, mpw_stack(1), 0x10100, 10);
  mpw_epilogue(&w);
  p = malloc(sizeof(*p));
  mp_profile_init(p, MP_GROUP_LINE);
  {
    /* The symbol table, then the first alloc, before the reader's
    ** headers reach the profile: as a caller without mp_profile_read. */
    struct mp_reader *r = mp_reader_new_mem(w.mem, w.len);
    struct mp_event ev;
    while (mp_reader_next(r, &ev) == MP_OK)
      ck_assert_int_eq(mp_profile_event(p, &ev), 0);
    mp_reader_free(r);
  }
  ck_assert_int_eq(p->file_stacks, 0);
  ck_assert_uint_eq(mp_profile_nstacks(p), 0);
  for (i = 0; i < p->nlocs; i++) {
    mp_profile_loc(p, i, &l);
    if (l.kind == MP_LOC_INTERNAL) {
      internal++;
      ck_assert_uint_eq(l.n_alloc, 1);
      ck_assert_uint_eq(l.held_bytes, 0);
    } else {
      ck_assert_uint_eq(l.held_bytes, 0);
      ck_assert_uint_eq(l.released, 1);
    }
  }
  ck_assert_uint_eq(internal, 1);
  ck_assert_uint_eq(p->file.live_bytes, 0);
  mp_profile_free(p);
  free(p);
  mpw_free(&w);
}
END_TEST

static Suite *parse_suite(void)
{
  Suite *s = suite_create("parse");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, sort_matches_qsort);
  tcase_add_test(tc, radix_matches_qsort);
  tcase_add_test(tc, rows_sort_by_key_then_name);
  tcase_add_test(tc, uleb_round_trip);
  tcase_add_test(tc, uleb_errors);
  tcase_add_test(tc, map_against_reference);
  tcase_add_test(tc, map_millions);
  tcase_add_test(tc, heap_unpacked_then_packed);
  tcase_add_test(tc, heap_against_reference);
  tcase_add_test(tc, csym_nearest_and_latest);
  tcase_add_test(tc, csym_against_brute_force);
  tcase_add_test(tc, bytes_equal_every_position);
  tcase_add_test(tc, strings_intern);
  tcase_add_test(tc, proto_and_trace_redefinition);
  tcase_add_test(tc, reader_valid_stream);
  tcase_add_test(tc, reader_every_prefix_is_truncated);
  tcase_add_test(tc, reader_garbage);
  tcase_add_test(tc, reader_garbage_events);
  tcase_add_test(tc, reader_builtin_linedefined);
  tcase_add_test(tc, reader_fd_blocks_and_pipes);
  tcase_add_test(tc, profile_sums_and_peak);
  tcase_add_test(tc, profile_override_keys);
  tcase_add_test(tc, profile_override_copies_merge);
  tcase_add_test(tc, profile_override_keys_match_values);
  tcase_add_test(tc, locs_intern_lua_line_same_as_general);
  tcase_add_test(tc, profile_threaded_same_as_single);
  tcase_add_test(tc, profile_snapshots_are_no_events);
  tcase_add_test(tc, fast_keys_match_values);
  tcase_add_test(tc, profile_fast_same_as_events);
  tcase_add_test(tc, profile_fast_memo_raw_bytes);
  tcase_add_test(tc, names_escape_controls);
  tcase_add_test(tc, reader_stack_events);
  tcase_add_test(tc, reader_stack_damage);
  tcase_add_test(tc, profile_stacks_same_figures_as_v3);
  tcase_add_test(tc, profile_stack_tree);
  tcase_add_test(tc, profile_stack_memory_follows_tree);
  tcase_add_test(tc, stack_frame_parts_and_cut_note);
  tcase_add_test(tc, profile_stacks_after_blocks_fed_by_hand);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(parse_suite());
  int failed;
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
