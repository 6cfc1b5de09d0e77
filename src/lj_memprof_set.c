/*
** Memory profiler: sets of 64-bit keys, the one open-addressing table
** the profiler's files share (see MPSet in lj_memprof_int.h).
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define lj_memprof_set_c
#define LUA_CORE

#include "lj_obj.h"
#include "lj_memprof.h"

#if LJ_HASMEMPROF

#include <stdlib.h>
#include <string.h>

#include "lj_memprof_int.h"

void lj_memprof_setinit(MPSet *s, uint64_t kmask, uint32_t min)
{
  s->e = NULL;
  s->mask = 0;
  s->n = 0;
  s->min = min;
  s->kmask = kmask;
}

int lj_memprof_setgrow(MPSet *s)
{
  uint32_t osz = s->e ? s->mask + 1 : 0, nsz = osz ? 2 * osz : s->min, i;
  uint64_t *o = s->e;
  uint64_t *e = (uint64_t *)calloc(nsz, sizeof(uint64_t));
  if (e == NULL) return 0;
  s->e = e;
  s->mask = nsz - 1;
  for (i = 0; i < osz; i++)
    if (o[i]) s->e[mp_setslot(s, o[i] & s->kmask, s->kmask)] = o[i];
  free(o);
  return 1;
}

/* Remove the entry in slot i, shifting back those probed past it. */
void lj_memprof_setdel(MPSet *s, uint32_t i)
{
  uint32_t j = i;
  s->n--;
  for (;;) {
    uint32_t k;
    j = (j + 1) & s->mask;
    if (!s->e[j]) break;
    k = mp_sethash(s->e[j] & s->kmask) & s->mask;
    /* Stays if its home k lies cyclically in (i, j]. */
    if (i <= j ? (k > i && k <= j) : (k > i || k <= j)) continue;
    s->e[i] = s->e[j];
    i = j;
  }
  s->e[i] = 0;
}

void lj_memprof_setclear(MPSet *s)
{
  if (s->e) memset(s->e, 0, (s->mask + 1) * sizeof(uint64_t));
  s->n = 0;
}

void lj_memprof_setfree(MPSet *s)
{
  free(s->e);
  s->e = NULL;
  s->mask = s->n = 0;
}

#endif
