/*
** The live heap: address -> (size, object kind, owning location) for
** every block allocated while profiling and not yet freed. Sized for
** millions of blocks: a slot is 16 bytes (size, kind and owner packed
** into one word: 32, 8 and 24 bits),
** linear probing with backward-shift deletion, at most half full (a
** sixteenth while small). The rare block whose size or owner does not fit
** the packing (and address 0) goes to a small general map beside it.
** The kind (LJM_KIND_*) is the object kind the block was made as, so
** that a free finds it with the block (mp_kinds.c counts what each kind
** holds from the heap when a file ends).
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef MP_HEAP_H
#define MP_HEAP_H

#include <stdint.h>

#include "mp_map.h"

#define MP_HEAP_LOC_BITS 24	/* Owners below 2^24 pack... */
#define MP_HEAP_KIND_BITS 8	/* ...with every object kind... */
#define MP_HEAP_SIZE_BITS 32	/* ...and sizes below 2^32 (4 GiB). */
#define MP_HEAP_SIZE_SHIFT (MP_HEAP_LOC_BITS + MP_HEAP_KIND_BITS)

struct mp_heap_slot {
  uint64_t addr;	/* 0: empty. */
  uint64_t packed;	/* size << 32 | kind << 24 | owner. */
};

/* A slot's bytes, 2^4: the byte offsets below shift the index by 4. */
#define MP_HEAP_SLOT_BYTES 16
typedef char mp_heap_slot_is_16_bytes
  [sizeof(struct mp_heap_slot) == MP_HEAP_SLOT_BYTES ? 1 : -1];

struct mp_heap {
  struct mp_heap_slot *slots;	/* Never NULL: see mp_heap.c. */
  uint64_t mask;	/* Slot count - 1. */
  unsigned shift;	/* 64 - log2(slot count). */
  /* The same for the inline take and put, which probe by the byte
  ** offset of a slot (an index times 16): mask << 4, shift - 4. */
  uint64_t off_mask;
  unsigned off_shift;
  uint64_t limit;	/* Grow before the occupied slots reach this; 0: no
			** slots. */
  /* The inline put's limit: limit, or 0 while the big map holds blocks
  ** (a put must then look there too). */
  uint64_t fast_limit;
  /* fast_limit - the occupied slots (mp_heap_used): a countdown, so that
  ** the inline put tests and counts with one decrement. */
  int64_t room;
  /* addr -> a: size, b: kind << 32 | owner; what does not pack. */
  struct mp_map big;
  /* The same for addresses of MP_FAST_KEY_LIMIT and above, which have
  ** no key (mp_live.h): keyed by the address, in a space of their own. */
  struct mp_map huge;
};

struct mp_block {
  uint64_t size;
  uint32_t loc;
  unsigned kind;	/* Below 2^MP_HEAP_KIND_BITS. */
};

/* A block's packed word, and back (mp_heap_fits says whether it packs). */
static inline uint64_t mp_heap_pack(uint64_t size, unsigned kind,
				    uint32_t loc)
{
  return size << MP_HEAP_SIZE_SHIFT | (uint64_t)kind << MP_HEAP_LOC_BITS |
	 loc;
}

/* Inlined whole: out is most often a local, which then stays in
** registers (an unpack the compiler keeps out of line costs the read
** loop a call, stores and loads per event). */
static inline __attribute__((always_inline)) void
mp_heap_unpack(uint64_t packed, struct mp_block *out)
{
  out->size = packed >> MP_HEAP_SIZE_SHIFT;
  out->kind = (unsigned)(packed >> MP_HEAP_LOC_BITS) &
	      ((1u << MP_HEAP_KIND_BITS) - 1);
  out->loc = (uint32_t)(packed & ((1u << MP_HEAP_LOC_BITS) - 1));
}

/* The map entry's b of a block that does not pack, and back. */
static inline uint64_t mp_heap_pack_b(unsigned kind, uint32_t loc)
{
  return (uint64_t)kind << 32 | loc;
}

static inline void mp_heap_unpack_b(uint64_t size, uint64_t b,
				    struct mp_block *out)
{
  out->size = size;
  out->loc = (uint32_t)b;
  out->kind = (unsigned)(b >> 32);
}

void mp_heap_init(struct mp_heap *h);
void mp_heap_free(struct mp_heap *h);
void mp_heap_clear(struct mp_heap *h);

/* The occupied slots. */
static inline uint64_t mp_heap_used(const struct mp_heap *h)
{
  return h->fast_limit - (uint64_t)h->room;
}

static inline uint64_t mp_heap_count(const struct mp_heap *h)
{
  return mp_heap_used(h) + h->big.count + h->huge.count;
}

/* Fibonacci hashing, the top bits of the product: they depend on every
** bit of the key, so no pre-mixing (only with slots). */
static inline uint64_t mp_heap_home(const struct mp_heap *h, uint64_t addr)
{
  return (addr * 0x9e3779b97f4a7c15ull) >> h->shift;
}

/* The byte offset of addr's home slot in the table (mp_heap_home * 16,
** with no multiplication by 16), and the slot at byte offset off: the
** inline take and put address a slot with no shift of an index. */
static inline uint64_t mp_heap_home_off(const struct mp_heap *h,
					uint64_t addr)
{
  return (addr * 0x9e3779b97f4a7c15ull) >> h->off_shift &
	 ~(uint64_t)(MP_HEAP_SLOT_BYTES - 1);
}

static inline struct mp_heap_slot *mp_heap_slot_at(const struct mp_heap *h,
						   uint64_t off)
{
  return (struct mp_heap_slot *)(void *)((char *)h->slots + off);
}

/* Start loading the slot of addr. */
static inline void mp_heap_prefetch(const struct mp_heap *h, uint64_t addr)
{
  __builtin_prefetch(&h->slots[mp_heap_home(h, addr)]);
}

int mp_heap_put_slow(struct mp_heap *h, uint64_t addr, uint64_t size,
		     uint32_t loc, unsigned kind, struct mp_block *old);
int mp_heap_take_slow(struct mp_heap *h, uint64_t addr, struct mp_block *out);
void mp_heap_remove_slot(struct mp_heap *h, struct mp_heap_slot *s);

/* mp_heap_put and mp_heap_take for the addresses without a key. */
int mp_heap_put_huge(struct mp_heap *h, uint64_t addr, uint64_t size,
		     uint32_t loc, unsigned kind, struct mp_block *old);
int mp_heap_take_huge(struct mp_heap *h, uint64_t addr, struct mp_block *out);

/* Look up a block without changing anything; 1 when found. */
int mp_heap_peek(const struct mp_heap *h, uint64_t addr, struct mp_block *out);

/* Call fn on every live block (addr is its key, as put); in no order. */
void mp_heap_each(const struct mp_heap *h,
		  void (*fn)(void *ctx, uint64_t addr,
			     const struct mp_block *b),
		  void *ctx);

/* mp_heap_take_slow into a block of its own, then copied to out: the
** caller's block (most often a local of the read loop) then never has
** its address taken, and stays in registers on the fast path. */
static inline int mp_heap_take_slow_copy(struct mp_heap *h, uint64_t addr,
					 struct mp_block *out)
{
  struct mp_block b;
  int rc = mp_heap_take_slow(h, addr, &b);
  if (rc)
    *out = b;
  return rc;
}

/* mp_heap_put_slow the same way. */
static inline int mp_heap_put_slow_copy(struct mp_heap *h, uint64_t addr,
					uint64_t size, uint32_t loc,
					unsigned kind, struct mp_block *old)
{
  struct mp_block b;
  int rc = mp_heap_put_slow(h, addr, size, loc, kind, &b);
  if (rc == 1)
    *old = b;
  return rc;
}

/* Remove a block, returning it; 1 when it was there. */
static inline __attribute__((always_inline)) int
mp_heap_take(struct mp_heap *h, uint64_t addr, struct mp_block *out)
{
  uint64_t i;
  if (addr != 0) {
    /* The compare first: a free most often finds its block at home, in
    ** one load, one compare and one branch. */
    for (i = mp_heap_home_off(h, addr);; i = (i + MP_HEAP_SLOT_BYTES) & h->off_mask) {
      struct mp_heap_slot *s = mp_heap_slot_at(h, i);
      uint64_t a = s->addr;
      if (a == addr) {
	mp_heap_unpack(s->packed, out);
	if (!mp_heap_slot_at(h, (i + MP_HEAP_SLOT_BYTES) & h->off_mask)->addr) {
	  /* The end of its probe run: nothing to pull back. */
	  s->addr = 0;
	  h->room++;
	} else {
	  mp_heap_remove_slot(h, s);
	}
	return 1;
      }
      if (!a)
	break;
    }
  }
  if (!h->big.count)
    return 0;
  return mp_heap_take_slow_copy(h, addr, out);
}

/*
** Take a slot of the inline put's room: 1, or 0 when there was none (the
** caller gives it back). On x86-64 one decrement of memory, whose sign
** flag is the test: the compiler's own code loads, decrements, stores
** and tests, four instructions for every block made.
*/
static inline __attribute__((always_inline)) int
mp_heap_take_room(struct mp_heap *h)
{
#if defined(__x86_64__) && defined(__GCC_ASM_FLAG_OUTPUTS__)
  int neg;
  __asm__("subq $1, %0" : "+m"(h->room), "=@ccs"(neg));
  return !neg;
#else
  return --h->room >= 0;
#endif
}

/*
** Add a block. Returns 0, 1 when a block was already live at addr (it is
** replaced and returned in *old), or -1 when out of memory. loc_fits and
** size_fits (constants): the caller knows loc is below
** 2^MP_HEAP_LOC_BITS, size below 2^MP_HEAP_SIZE_BITS, which are then not
** tested.
*/
static inline __attribute__((always_inline)) int
mp_heap_put_as(struct mp_heap *h, uint64_t addr, uint64_t size, uint32_t loc,
	       unsigned kind, struct mp_block *old, int loc_fits,
	       int size_fits)
{
  uint64_t i;
  if (addr != 0 &&
      !((size_fits ? 0 : size >> MP_HEAP_SIZE_BITS) |
	(loc_fits ? 0 : loc >> MP_HEAP_LOC_BITS) |
	kind >> MP_HEAP_KIND_BITS)) {
    /* The room taken first: one decrement tests and counts. */
    if (__builtin_expect(mp_heap_take_room(h), 1)) {
      /* The common case: one probe run finds the address or a free
      ** slot. */
      uint64_t packed = mp_heap_pack(size, kind, loc);
      struct mp_heap_slot *s;
      /* Most often the home slot is free. */
      for (i = mp_heap_home_off(h, addr);
	   __builtin_expect((s = mp_heap_slot_at(h, i))->addr != 0, 0);
	   i = (i + MP_HEAP_SLOT_BYTES) & h->off_mask)
	if (s->addr == addr) {
	  h->room++;	/* Replaced: no slot taken. */
	  mp_heap_unpack(s->packed, old);
	  s->packed = packed;
	  return 1;
	}
      s->addr = addr;
      s->packed = packed;
      return 0;
    }
    h->room++;
  }
  return mp_heap_put_slow_copy(h, addr, size, loc, kind, old);
}

static inline __attribute__((always_inline)) int
mp_heap_put(struct mp_heap *h, uint64_t addr, uint64_t size, uint32_t loc,
	    unsigned kind, struct mp_block *old)
{
  return mp_heap_put_as(h, addr, size, loc, kind, old, 0, 0);
}

#endif
