/*
** Memory profiler: the stream's output buffer and time marks.
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
**
** Events are written into the profiler's buffer (malloc'd, never the Lua
** heap) by the inline helpers of lj_memprof_int.h; what is here is their
** slow paths, the clock, and the writing of symbols, strings and records
** outside the hot path.
*/

#define lj_memprof_wbuf_c
#define LUA_CORE

#include "lj_obj.h"
#include "lj_memprof.h"
#include "lj_alloc.h"

#if LJ_HASMEMPROF

#include <errno.h>
#include <string.h>
#include <time.h>

#include "lj_memprof_int.h"

/* -- Output buffer ------------------------------------------------------- */

#if LJ_LE
/* New high bits: keep their bytes, if the address has 4 to 8 in all. */
LJ_NOINLINE uint8_t *lj_memprof_addrmiss(MemProf *mp, uint8_t *p, uint64_t v)
{
  uint64_t high = v >> MP_ADDRSHIFT, w = 0x808080;
  size_t n = 3;
  if (high == 0 || (v >> 56) != 0)
    return mp_uleb(p, v);
  for (;;) {
    uint64_t b = high & 0x7f;
    high >>= 7;
    w |= (b | (high ? 0x80 : 0)) << (8*n++);
    if (!high) break;
  }
  mp->addrkey = v >> MP_ADDRSHIFT;
  mp->addrhigh = w;
  mp->addrlen = n;
  return mp_addrhit(mp, p, v);
}
#endif

/* Hand the buffer to the writer. A failure halts the profiler. */
void lj_memprof_flush(MemProf *mp)
{
  size_t n = (size_t)(mp->pos - mp->buf);
  mp->pos = mp->buf;
  if (n && !mp->err) {
    int e = mp->writer(mp->ctx, mp->buf, n);
    if (e) {
      mp->err = e > 0 ? e : EIO;
      mp->lim = NULL;  /* Halted: lj_memprof_allocf checks pos > lim only. */
    }
  }
}

/* Past lim inside an event: flush only if past the real limit (a time
** mark goes between events only, mp_full). Halted: as before. */
LJ_NOINLINE void lj_memprof_makeroom(MemProf *mp)
{
  if (mp->err || mp->lim == NULL || mp->pos > mp->hardlim) lj_memprof_flush(mp);
}

/* -- Time marks ----------------------------------------------------------- */

uint64_t lj_memprof_clock(void)
{
  struct timespec ts;
  if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return 0;
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
** Between two events: a TIME mark if one is due (or always: force), then
** the next check MP_TICKBYTES on. Room is there: pos is at most hardlim,
** which leaves MP_MARKMAX bytes (MP_MARKRSS with RSS or MAPPED) more than
** an event needs.
*/
void lj_memprof_timemark(MemProf *mp, int force)
{
  uint64_t now = lj_memprof_clock(), t = now > mp->t0 ? now - mp->t0 : 0;
  if (force || t - mp->tmark >= MP_TICKNS) {
    uint8_t *p = mp->pos;
    *p++ = LJM_EV_SYMTAB | LJM_SRC_INFO;
    p = mp_uleb(p, LJM_INFO_TIME);
    p = mp_uleb(p, t);
    if (mp->rss) {  /* As the flush timer's thread last read it. */
      uint64_t rss = (uint64_t)*mp->rss;
      if (rss && rss != mp->rsslast) {
	*p++ = LJM_EV_SYMTAB | LJM_SRC_INFO;
	p = mp_uleb(p, LJM_INFO_RSS);
	p = mp_uleb(p, rss);
	mp->rsslast = rss;
      }
    }
#ifndef LUAJIT_USE_SYSMALLOC
    if (mp->mapmsp) {  /* A plain read: the VM's thread owns the state. */
      uint64_t mapped = (uint64_t)lj_alloc_mapped(mp->mapmsp);
      if (mapped && mapped != mp->maplast) {
	*p++ = LJM_EV_SYMTAB | LJM_SRC_INFO;
	p = mp_uleb(p, LJM_INFO_MAPPED);
	p = mp_uleb(p, mapped);
	mp->maplast = mapped;
      }
    }
#endif
    mp->pos = p;
    mp->tmark = t;
  }
  mp_ticklim(mp);
}

void lj_memprof_putu(MemProf *mp, uint64_t v)
{
  mp_reserve(mp);
  mp->pos = mp_uleb(mp->pos, v);
}

void lj_memprof_putbyte(MemProf *mp, uint8_t b)
{
  mp_reserve(mp);
  *mp->pos++ = b;
}

/* A string: length, then the bytes, flushing as often as needed. */
void lj_memprof_putstr(MemProf *mp, const char *s, size_t len)
{
  lj_memprof_putu(mp, len);
  while (len) {
    size_t room = (size_t)(mp->end - mp->pos), n = len < room ? len : room;
    memcpy(mp->pos, s, n);
    mp->pos += n; s += n; len -= n;
    if (len) lj_memprof_flush(mp);
  }
}

/* A section header: version 3, or the profile extension with stacks. */
void lj_memprof_puthdr(MemProf *mp, uint8_t m2)
{
  uint8_t *p;
  mp_reserve(mp);
  p = mp->pos;
  p[0] = 'l'; p[1] = 'j'; p[2] = m2;
  if (mp->depth) {
    p[3] = LJM_FMT_VERSION_EXT;
    p[4] = LJM_EXT_PROFILE; p[5] = LJM_EXT_PROFILE_VERSION;
  } else {
    p[3] = LJM_FMT_VERSION;
    p[4] = p[5] = 0;
  }
  p[6] = 0;
  mp->pos = p + LJM_FMT_HDRLEN;
}

/* An INFO record: a key and its value. */
void lj_memprof_putinfo(MemProf *mp, uint64_t key, uint64_t value)
{
  lj_memprof_putbyte(mp, LJM_EV_SYMTAB | LJM_SRC_INFO);
  lj_memprof_putu(mp, key);
  lj_memprof_putu(mp, value);
}

#endif
