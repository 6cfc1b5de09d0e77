/*
** The common memory events and prototype symbols decoded straight from
** the reader's buffer (mp_reader_window), for a caller that accounts them
** at once: no event struct in memory, no bounds check per field. Anything
** else (other symbols, the epilogue, a field longer than 8 bytes, a value
** out of bounds, a long name, bad bits) is left to mp_reader_next, which
** decodes it from the same byte and so gives the same events and the
** same errors.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef MP_FAST_H
#define MP_FAST_H

#include <stdint.h>
#include <string.h>

#include "lj_memprof_format.h"

/* Longest chunk name of a prototype symbol decoded here. */
#define MP_FAST_NAME_MAX 128

/*
** Bytes that must be readable from the start of an event: fields are
** taken here when they fit in 8 bytes and are loaded 8 bytes at a time,
** so a memory event needs 1 + 6 * 8, a prototype symbol at most 1 + 8 +
** 8 + MP_FAST_NAME_MAX + 8 (address, name length, name, first line).
*/
#define MP_FAST_MARGIN (1 + 8 + 8 + MP_FAST_NAME_MAX + 8)

/* The same bounds as the reader's (mp_reader.c). */
#define MP_FAST_SIZE_LIMIT ((uint64_t)1 << 48)
#define MP_FAST_LINE_LIMIT ((uint64_t)UINT32_MAX)

struct mp_fast_event {
  unsigned kind;	/* LJM_EV_ALLOC, _FREE or _REALLOC. */
  unsigned src;		/* LJM_SRC_*. */
  uint64_t loc, line;	/* loc: the key of a Lua or C function's address
			** (mp_fast_key), a trace's number. */
  uint64_t old_addr, old_size, new_addr, new_size;	/* Addresses: keys. */
};

/*
** The value of the bytes of a ULEB128 of at most 8 bytes, read as a
** little-endian word (zero above the last). The 7-bit groups are squeezed
** together: in each lane, lowering the high half by the bits it has too
** many is one subtraction (h << k becomes h << (k - d): subtract h << k -
** h << (k - d)). Fewer constants than masking both halves.
*/
static inline uint64_t mp_fast_squeeze(uint64_t x)
{
  x &= 0x7f7f7f7f7f7f7f7full;
  x -= (x & 0xff00ff00ff00ff00ull) >> 1;
  x -= ((x & 0xffff0000ffff0000ull) >> 2) * 3;
  x -= (x >> 32 << 28) * 15;
  return x;
}

/*
** One ULEB128 of at most 8 bytes at p, with 8 bytes readable: the value
** and the next byte, or NULL for a longer one. Values of one or two bytes
** (lines, sizes, trace numbers) skip the squeezing.
*/
static inline const uint8_t *mp_fast_uleb(const uint8_t *p, uint64_t *out)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint64_t x, last;
  unsigned nbits;
  /* One byte: a byte load, which leaves the value with no mask. */
  if (__builtin_expect(!(p[0] & 0x80), 1)) {
    *out = p[0];
    return p + 1;
  }
  memcpy(&x, p, 8);
  if (!(x & 0x8000)) {	/* Two bytes: most sizes. */
    *out = (x & 0x7f) | (x >> 1 & 0x3f80);
    return p + 2;
  }
  last = ~x & 0x8080808080808080ull;
  if (!last)
    return NULL;
  /* Keep the bytes up to the one whose high bit is clear (8 to 64
  ** bits: the shifts stay below 64). */
  nbits = (unsigned)__builtin_ctzll(last) + 1;
  x = x << (64 - nbits) >> (64 - nbits);
  *out = mp_fast_squeeze(x);
  return p + (nbits >> 3);
#else
  uint64_t v = 0;
  unsigned i;
  for (i = 0; i < 8; i++) {
    v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
    if (!(p[i] & 0x80)) {
      *out = v;
      return p + i + 1;
    }
  }
  return NULL;
#endif
}

/*
** Addresses are only compared, never printed: the live heap is keyed by
** their canonical ULEB128 bytes read as a little-endian word (the "key"),
** which costs no squeezing. Every value below MP_FAST_KEY_LIMIT has one
** key, its encoding in at most 8 bytes; key 0 is address 0.
*/
#define MP_FAST_KEY_LIMIT ((uint64_t)1 << 56)

/*
** The constants of the read loop's key test, in memory on
** purpose: an x86 ALU instruction takes a memory operand, where a 64-bit
** immediate costs a movabs of its own at each use (the loop has no
** registers to keep them in). Not const, so that the compiler does not
** fold them back into immediates; nothing writes them.
*/
struct mp_fast_consts {
  uint64_t key_highs;	/* The high bits of 7 bytes. */
  uint64_t key_highs_7;	/* Those of a 7-byte ULEB128. */
  uint64_t key_bytes;	/* 7 bytes. */
  uint64_t key_min;	/* The least 7-byte key with a 7th byte not 0. */
};
extern struct mp_fast_consts mp_fast_k;

/* The key of a canonical ULEB128 of at most 8 bytes at p (8 readable),
** and the next byte; NULL for a longer or a non-canonical one. */
static inline const uint8_t *mp_fast_uleb_key(const uint8_t *p,
					      uint64_t *out)
{
  uint64_t x, last;
  unsigned nbits;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  memcpy(&x, p, 8);
#else
  unsigned i;
  x = 0;
  for (i = 0; i < 8; i++)
    x |= (uint64_t)p[i] << (8 * i);
#endif
  /* Seven bytes, the rule: a 47-bit user-space address. Canonical when
  ** the last byte is not zero. */
  if (__builtin_expect((x & mp_fast_k.key_highs) == mp_fast_k.key_highs_7 &&
		       (x & mp_fast_k.key_bytes) >= mp_fast_k.key_min, 1)) {
    *out = x & mp_fast_k.key_bytes;
    return p + 7;
  }
  last = ~x & 0x8080808080808080ull;
  if (!last)
    return NULL;
  nbits = (unsigned)__builtin_ctzll(last) + 1;
  x = x << (64 - nbits) >> (64 - nbits);
  if (nbits > 8 && !(x >> (nbits - 8)))
    return NULL;	/* A last byte of zero: not canonical. */
  *out = x;
  return p + (nbits >> 3);
}

/* The key of value v, as mp_fast_uleb_key delivers it for v's encoding.
** Only for v below MP_FAST_KEY_LIMIT: above, v has no key (the result
** is wrong, the shift undefined from 2^63). */
static inline uint64_t mp_fast_key(uint64_t v)
{
  /* Spread the 7-bit groups one to a byte (mp_fast_squeeze backwards),
  ** then set the continuation bit of every byte below the last. */
  uint64_t x = (v & 0xfffffffull) | (v >> 28 << 32);
  unsigned nbytes;
  x = (x & 0x00003fff00003fffull) | (x & 0x0fffc0000fffc000ull) << 2;
  x = (x & 0x007f007f007f007full) | (x & 0x3f803f803f803f80ull) << 1;
  nbytes = v ? (unsigned)(64 - __builtin_clzll(v) + 6) / 7 : 1;
  return nbytes > 1 ? x | 0x8080808080808080ull >> (72 - 8 * nbytes) : x;
}

/* The value of key k (mp_fast_key's inverse). */
static inline uint64_t mp_fast_key_value(uint64_t k)
{
  return mp_fast_squeeze(k);
}

/* Inlined whole, so that a caller that knows the header gets code for
** that kind of event only. */
#define MP_FAST_INLINE inline __attribute__((always_inline))

/*
** Decode the fields of a memory event after its location (kind:
** LJM_EV_ALLOC, _FREE or _REALLOC), p at the first, with 4 * 8 bytes
** readable: the byte after the event, or NULL when it is not a common
** memory event, or when the size of the block it makes is above
** new_limit (a constant, at most MP_FAST_SIZE_LIMIT: a caller that
** leaves the larger ones to the reader need not test them again).
*/
static MP_FAST_INLINE const uint8_t *mp_fast_fields_as(const uint8_t *p,
						       unsigned kind,
						       struct mp_fast_event *e,
						       uint64_t new_limit)
{
  e->old_addr = e->old_size = e->new_addr = e->new_size = 0;
  if (kind != LJM_EV_ALLOC &&
      (!(p = mp_fast_uleb_key(p, &e->old_addr)) ||
       !(p = mp_fast_uleb(p, &e->old_size)) ||
       e->old_size > MP_FAST_SIZE_LIMIT))
    return NULL;
  if (kind != LJM_EV_FREE &&
      (!(p = mp_fast_uleb_key(p, &e->new_addr)) ||
       !(p = mp_fast_uleb(p, &e->new_size)) ||
       e->new_size > new_limit))
    return NULL;
  return p;
}

static MP_FAST_INLINE const uint8_t *mp_fast_fields(const uint8_t *p,
						    unsigned kind,
						    struct mp_fast_event *e)
{
  return mp_fast_fields_as(p, kind, e, MP_FAST_SIZE_LIMIT);
}

/*
** Decode the location of a memory event whose header byte is kind | src
** (LJM_SRC_*), p just after the header, with MP_FAST_MARGIN bytes
** readable from the header: the byte after it, or NULL when it is not a
** common memory event.
*/
static MP_FAST_INLINE const uint8_t *mp_fast_location(const uint8_t *p,
						      unsigned kind,
						      unsigned src,
						      struct mp_fast_event *e)
{
  e->kind = kind;
  e->src = src;
  e->loc = 0;
  e->line = 0;
  switch (src) {
  case LJM_SRC_INTERNAL:
    return p;
  case LJM_SRC_LFUNC:
    if (!(p = mp_fast_uleb_key(p, &e->loc)) ||
	!(p = mp_fast_uleb(p, &e->line)) || e->line > MP_FAST_LINE_LIMIT)
      return NULL;
    return p;
  case LJM_SRC_CFUNC:
    return mp_fast_uleb_key(p, &e->loc);
  case LJM_SRC_TRACE:
    if (!(p = mp_fast_uleb(p, &e->loc)) || e->loc > MP_FAST_LINE_LIMIT)
      return NULL;
    return p;
  default:
    return NULL;
  }
}

/*
** Decode a prototype symbol event (header LJM_EV_SYMTAB | LJM_SRC_LFUNC),
** p just after the header, MP_FAST_MARGIN bytes readable from the header:
** the byte after it, or NULL when it is left to mp_reader_next (a long
** name or field, an address that has no key, a built-in's first line, a
** line out of bounds). The address comes as its key and its value.
*/
static inline const uint8_t *mp_fast_proto_symbol(const uint8_t *p,
						  uint64_t *key,
						  uint64_t *addr,
						  const char **name,
						  size_t *name_len,
						  uint64_t *line)
{
  uint64_t n;
  if (!(p = mp_fast_uleb_key(p, key)) || !(p = mp_fast_uleb(p, &n)) ||
      n > MP_FAST_NAME_MAX)
    return NULL;
  *addr = mp_fast_key_value(*key);
  *name = (const char *)p;
  *name_len = (size_t)n;
  if (!(p = mp_fast_uleb(p + n, line)) || *line > MP_FAST_LINE_LIMIT)
    return NULL;
  return p;
}

/*
** The headers of the common memory events, as X(kind, src): every kind
** of memory event from every source, for a switch on the header byte.
*/
#define MP_FAST_HEADERS_SRC(X, src) \
  X(LJM_EV_ALLOC, src) X(LJM_EV_FREE, src) X(LJM_EV_REALLOC, src)
#define MP_FAST_HEADERS(X) \
  MP_FAST_HEADERS_SRC(X, LJM_SRC_INTERNAL) \
  MP_FAST_HEADERS_SRC(X, LJM_SRC_LFUNC) \
  MP_FAST_HEADERS_SRC(X, LJM_SRC_CFUNC) \
  MP_FAST_HEADERS_SRC(X, LJM_SRC_TRACE)

/* The events that make a block (and so may carry an object kind byte,
** LJM_EV_KIND, in the profile extension): X(kind, src) as above. */
#define MP_FAST_HEADERS_MADE_SRC(X, src) \
  X(LJM_EV_ALLOC, src) X(LJM_EV_REALLOC, src)
#define MP_FAST_HEADERS_MADE(X) \
  MP_FAST_HEADERS_MADE_SRC(X, LJM_SRC_INTERNAL) \
  MP_FAST_HEADERS_MADE_SRC(X, LJM_SRC_LFUNC) \
  MP_FAST_HEADERS_MADE_SRC(X, LJM_SRC_CFUNC) \
  MP_FAST_HEADERS_MADE_SRC(X, LJM_SRC_TRACE)

#endif
