/*
** The live heap; see mp_heap.h.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_heap.h"

#define MIN_SLOTS 1024
/* Up to this many slots (2 MiB) the heap is at most a sixteenth full,
** above at most half: a small heap stays in the caches either way, and
** fewer neighbours make shorter probes and fewer slots to pull back when
** a block is freed (every other free at half full; one in six at a
** quarter on a module-loading profile, one in fifteen at an eighth).
** A sixteenth, not an eighth: 1.3 instructions an event fewer on the
** strings profile (its few thousand live blocks in twice the slots),
** for 0.6 MB more resident there; up to 2 MB more table (and 2.9 MB
** more resident on the tables profile) where 8,192 to 16,384 blocks
** are live, which now take 2^18 slots, not 2^17. */
#define SPARSE_SLOTS ((uint64_t)1 << 17)
#define LOC_MASK ((1ull << MP_HEAP_LOC_BITS) - 1)

/* The slots of a heap that has none yet: empty, never written (limit
** and fast_limit 0 send every put to mp_heap_put_slow), so that lookups
** need not test for a table. Two, for the two homes of shift 63. */
static struct mp_heap_slot no_slots[2];

/* Set the inline put's limit, the occupied slots as they were. */
static void set_fast_limit(struct mp_heap *h, uint64_t fast_limit)
{
  h->room += (int64_t)(fast_limit - h->fast_limit);
  h->fast_limit = fast_limit;
}

static int has_table(const struct mp_heap *h)
{
  return h->slots != no_slots;
}

/* No table: no_slots, and every put to the slow path. */
static void no_table(struct mp_heap *h)
{
  h->slots = no_slots;
  h->mask = 1;
  h->shift = 63;
  h->off_mask = h->mask * MP_HEAP_SLOT_BYTES;
  h->off_shift = h->shift - 4;
  h->limit = h->fast_limit = 0;
  h->room = 0;
}

void mp_heap_init(struct mp_heap *h)
{
  memset(h, 0, sizeof(*h));
  no_table(h);
  mp_map_init(&h->big);
  mp_map_init(&h->huge);
}

void mp_heap_free(struct mp_heap *h)
{
  if (has_table(h))
    free(h->slots);
  mp_map_free(&h->big);
  mp_map_free(&h->huge);
  mp_heap_init(h);
}

void mp_heap_clear(struct mp_heap *h)
{
  /* The table goes back: the next file's heap may be smaller, and
  ** freeing it costs less than clearing it. */
  if (has_table(h))
    free(h->slots);
  no_table(h);
  mp_map_clear(&h->big);
  mp_map_clear(&h->huge);
}

static int fits(uint64_t addr, uint64_t size, uint32_t loc, unsigned kind)
{
  return addr != 0 && size < (1ull << MP_HEAP_SIZE_BITS) && loc <= LOC_MASK &&
	 kind < (1u << MP_HEAP_KIND_BITS);
}

#define unpack mp_heap_unpack

static struct mp_heap_slot *find(const struct mp_heap *h, uint64_t addr)
{
  uint64_t i;
  if (addr == 0)
    return NULL;
  for (i = mp_heap_home(h, addr); ; i = (i + 1) & h->mask) {
    struct mp_heap_slot *s = &h->slots[i];
    if (s->addr == addr)
      return s;
    if (s->addr == 0)
      return NULL;
  }
}

int mp_heap_peek(const struct mp_heap *h, uint64_t addr, struct mp_block *out)
{
  const struct mp_heap_slot *s = find(h, addr);
  if (s) {
    unpack(s->packed, out);
    return 1;
  }
  if (h->big.count) {
    struct mp_map_entry *e = mp_map_find((struct mp_map *)&h->big, addr);
    if (e) {
      mp_heap_unpack_b(e->a, e->b, out);
      return 1;
    }
  }
  return 0;
}

void mp_heap_each(const struct mp_heap *h,
		  void (*fn)(void *ctx, uint64_t addr,
			     const struct mp_block *b),
		  void *ctx)
{
  const struct mp_map *maps[2];
  struct mp_block b;
  uint64_t i;
  size_t m, j;
  if (has_table(h))
    for (i = 0; i <= h->mask; i++)
      if (h->slots[i].addr) {
	unpack(h->slots[i].packed, &b);
	fn(ctx, h->slots[i].addr, &b);
      }
  maps[0] = &h->big;
  maps[1] = &h->huge;
  for (m = 0; m < 2; m++) {
    const struct mp_map *map = maps[m];
    if (!map->count)
      continue;
    if (map->has_zero) {
      mp_heap_unpack_b(map->zero.a, map->zero.b, &b);
      fn(ctx, 0, &b);
    }
    for (j = 0; map->slots && j <= map->mask; j++)
      if (map->slots[j].key) {
	mp_heap_unpack_b(map->slots[j].a, map->slots[j].b, &b);
	fn(ctx, map->slots[j].key, &b);
      }
  }
}

/* Remove slot s, pulling later members of its probe run back. */
void mp_heap_remove_slot(struct mp_heap *h, struct mp_heap_slot *s)
{
  /* The table's fields in locals: the slots' stores would otherwise
  ** make the compiler load them again at every step. */
  struct mp_heap_slot *slots = h->slots;
  const uint64_t mask = h->mask;
  const unsigned shift = h->shift;
  uint64_t hole = (uint64_t)(s - slots), j, addr;
  h->room++;
  for (j = (hole + 1) & mask; (addr = slots[j].addr) != 0;
       j = (j + 1) & mask) {
    uint64_t home = (addr * 0x9e3779b97f4a7c15ull) >> shift;
    /* Stays when home is cyclically in (hole, j]: the distances from
    ** hole, modulo the slot count. */
    if (((home - hole - 1) & mask) >= ((j - hole) & mask)) {
      slots[hole] = slots[j];
      hole = j;
    }
  }
  slots[hole].addr = 0;
}

int mp_heap_take_slow(struct mp_heap *h, uint64_t addr, struct mp_block *out)
{
  struct mp_heap_slot *s = find(h, addr);
  if (s) {
    unpack(s->packed, out);
    mp_heap_remove_slot(h, s);
    return 1;
  }
  if (h->big.count) {
    struct mp_map_entry *e = mp_map_find(&h->big, addr);
    if (e) {
      mp_heap_unpack_b(e->a, e->b, out);
      mp_map_remove(&h->big, e);
      if (!h->big.count)
	set_fast_limit(h, h->limit);
      return 1;
    }
  }
  return 0;
}

static int resize(struct mp_heap *h, uint64_t nslots)
{
  struct mp_heap_slot *old = has_table(h) ? h->slots : NULL;
  uint64_t oldn = old ? h->mask + 1 : 0, i;
  struct mp_heap_slot *slots;

  if (nslots > SIZE_MAX / sizeof(*slots))
    return -1;
  slots = calloc((size_t)nslots, sizeof(*slots));
  if (!slots)
    return -1;
  h->slots = slots;
  h->mask = nslots - 1;
  h->shift = 64 - (unsigned)__builtin_ctzll(nslots);
  h->off_mask = h->mask * MP_HEAP_SLOT_BYTES;
  h->off_shift = h->shift - 4;
  h->limit = nslots <= SPARSE_SLOTS ? nslots / 16 : nslots / 2;
  set_fast_limit(h, h->big.count ? 0 : h->limit);
  for (i = 0; i < oldn; i++)
    if (old[i].addr) {
      uint64_t j = mp_heap_home(h, old[i].addr);
      while (slots[j].addr)
	j = (j + 1) & h->mask;
      slots[j] = old[i];
    }
  free(old);
  return 0;
}

int mp_heap_put_slow(struct mp_heap *h, uint64_t addr, uint64_t size,
		     uint32_t loc, unsigned kind, struct mp_block *old)
{
  int replaced;
  uint64_t i;

  /* Short probe runs, and short shifts when a block is freed
  ** (SPARSE_SLOTS); 16 bytes a slot. */
  if (!has_table(h) || mp_heap_used(h) >= h->limit)
    if (resize(h, has_table(h) ? (h->mask + 1) * 2 : MIN_SLOTS) < 0)
      return -1;
  if (fits(addr, size, loc, kind) && !h->big.count) {
    /* The common case: one probe run finds the address or a free slot. */
    for (i = mp_heap_home(h, addr); h->slots[i].addr; i = (i + 1) & h->mask)
      if (h->slots[i].addr == addr) {
	unpack(h->slots[i].packed, old);
	h->slots[i].packed = mp_heap_pack(size, kind, loc);
	return 1;
      }
    h->slots[i].addr = addr;
    h->slots[i].packed = mp_heap_pack(size, kind, loc);
    h->room--;
    return 0;
  }
  replaced = mp_heap_take_slow(h, addr, old);

  if (!fits(addr, size, loc, kind)) {
    int added;
    struct mp_map_entry *e = mp_map_insert(&h->big, addr, &added);
    if (!e)
      return -1;
    set_fast_limit(h, 0);
    e->a = size;
    e->b = mp_heap_pack_b(kind, loc);
    return replaced;
  }
  for (i = mp_heap_home(h, addr); h->slots[i].addr; i = (i + 1) & h->mask)
    ;
  h->slots[i].addr = addr;
  h->slots[i].packed = mp_heap_pack(size, kind, loc);
  h->room--;
  return replaced;
}

int mp_heap_put_huge(struct mp_heap *h, uint64_t addr, uint64_t size,
		     uint32_t loc, unsigned kind, struct mp_block *old)
{
  int added;
  struct mp_map_entry *e = mp_map_insert(&h->huge, addr, &added);
  if (!e)
    return -1;
  if (!added)
    mp_heap_unpack_b(e->a, e->b, old);
  e->a = size;
  e->b = mp_heap_pack_b(kind, loc);
  return !added;
}

int mp_heap_take_huge(struct mp_heap *h, uint64_t addr, struct mp_block *out)
{
  struct mp_map_entry *e = mp_map_find(&h->huge, addr);
  if (!e)
    return 0;
  mp_heap_unpack_b(e->a, e->b, out);
  mp_map_remove(&h->huge, e);
  return 1;
}
