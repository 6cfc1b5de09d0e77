/*
** ULEB128 decoding, inline so that the hot event loop pays no call per
** byte. Every decoder is bounded: it never reads past `end` and never
** accepts more than LJM_FMT_ULEB128_MAX bytes.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef MP_ULEB_H
#define MP_ULEB_H

#include <stdint.h>
#include <string.h>

#include "lj_memprof_format.h"

enum mp_uleb_status {
  MP_ULEB_OK = 0,	/* A value was decoded. */
  MP_ULEB_SHORT,	/* The buffer ended inside the value. */
  MP_ULEB_TOOLONG,	/* More than 10 bytes. */
  MP_ULEB_OVERFLOW	/* 10 bytes, but the value does not fit 64 bits. */
};

/*
** Decode one value at *pp, not reading at or past end. On MP_ULEB_OK store
** the value and advance *pp; otherwise leave *pp alone.
*/
static inline enum mp_uleb_status mp_uleb_read(const uint8_t **pp,
					       const uint8_t *end,
					       uint64_t *out)
{
  const uint8_t *p = *pp;
  uint64_t v;
  unsigned shift;
  unsigned i;

  if (p < end && *p < 0x80) {	/* One byte: the common case for lines and sizes. */
    *out = *p;
    *pp = p + 1;
    return MP_ULEB_OK;
  }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (end - p >= 8) {
    /* Up to 8 bytes (addresses take 6 or 7) without a branch per byte:
    ** find the last byte by its clear high bit, then squeeze the 7-bit
    ** groups together in three steps. */
    uint64_t x, last;
    memcpy(&x, p, 8);
    last = ~x & 0x8080808080808080ull;
    if (last) {
      unsigned nbytes = ((unsigned)__builtin_ctzll(last) >> 3) + 1;
      if (nbytes < 8)
	x &= (1ull << (nbytes * 8)) - 1;
      x &= 0x7f7f7f7f7f7f7f7full;
      x = ((x & 0x7f007f007f007f00ull) >> 1) | (x & 0x007f007f007f007full);
      x = ((x & 0x3fff00003fff0000ull) >> 2) | (x & 0x00003fff00003fffull);
      x = ((x & 0x0fffffff00000000ull) >> 4) | (x & 0x000000000fffffffull);
      *out = x;
      *pp = p + nbytes;
      return MP_ULEB_OK;
    }
  }
#endif
  v = 0;
  shift = 0;
  for (i = 0; i < LJM_FMT_ULEB128_MAX; i++, shift += 7) {
    uint8_t b;
    if (p + i >= end)
      return MP_ULEB_SHORT;
    b = p[i];
    if (i == LJM_FMT_ULEB128_MAX - 1 && (b & 0x7e))
      return (b & 0x80) ? MP_ULEB_TOOLONG : MP_ULEB_OVERFLOW;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *out = v;
      *pp = p + i + 1;
      return MP_ULEB_OK;
    }
  }
  return MP_ULEB_TOOLONG;
}

/* Number of bytes that mp_uleb_write needs at most. */
#define MP_ULEB_MAXLEN LJM_FMT_ULEB128_MAX

/* Encode v at p; return the number of bytes written. */
static inline unsigned mp_uleb_write(uint8_t *p, uint64_t v)
{
  unsigned n = 0;
  while (v >= 0x80) {
    p[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  p[n++] = (uint8_t)v;
  return n;
}

#endif
