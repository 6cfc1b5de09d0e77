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
