/*
** Memory profiler: the symbols of a stream, prototypes, traces and C
** functions, in the start table or as symbol events when they first
** appear.
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define lj_memprof_symtab_c
#define LUA_CORE

#include "lj_obj.h"
#include "lj_memprof.h"

#if LJ_HASMEMPROF

#include <stdlib.h>
#include <string.h>

#include "lj_memprof_int.h"
#include "lj_memprof_sym.h"
#include "lj_gc.h"
#include "lj_debug.h"
#if LJ_HASJIT
#include "lj_jit.h"
#include "lj_trace.h"
#endif

/* -- Prototypes and traces ------------------------------------------------ */

/* Header byte of a symbol: in the start table, or as an event later. */
#define MP_SYMHDR(ev, kind, src)	((ev) ? (LJM_EV_SYMTAB|(src)) : (kind))


void lj_memprof_symproto(MemProf *mp, GCproto *pt, int ev)
{
  GCstr *name = proto_chunkname(pt);
  if (mp->smp) lj_memprof_protoseen(mp, pt);  /* Sampling: announced once. */
  lj_memprof_putbyte(mp, MP_SYMHDR(ev, LJM_SYMTAB_LFUNC, LJM_SRC_LFUNC));
  lj_memprof_putu(mp, (uintptr_t)pt);
  lj_memprof_putstr(mp, strdata(name), name->len);
  lj_memprof_putu(mp, pt->firstline > 0 ? (uint64_t)pt->firstline : 0);
}

#if LJ_HASJIT
void lj_memprof_symtrace(MemProf *mp, GCtrace *T, int ev)
{
  GCproto *pt = &gcref(T->startpt)->pt;
  BCPos pos = proto_bcpos(pt, mref(T->startpc, const BCIns));
  if (mp->smp) lj_memprof_traceseen(mp, T);  /* Sampling: announced once. */
  lj_memprof_putbyte(mp, MP_SYMHDR(ev, LJM_SYMTAB_TRACE, LJM_SRC_TRACE));
  lj_memprof_putu(mp, T->traceno);
  lj_memprof_putu(mp, (uintptr_t)pt);
  lj_memprof_putu(mp, (uint64_t)lj_debug_line(pt, pos));
}
#endif

/* Every live prototype and trace. Safe in the middle of a GC cycle. */
void lj_memprof_dumpvm(MemProf *mp)
{
  global_State *g = mp->g;
  GCobj *o;
  for (o = gcref(g->gc.root); o != NULL; o = gcref(o->gch.nextgc))
    if (o->gch.gct == ~LJ_TPROTO && !isdead(g, o))
      lj_memprof_symproto(mp, &o->pt, 0);
#if LJ_HASJIT
  {
    jit_State *J = G2J(g);
    MSize i;
    for (i = 1; i < J->sizetrace; i++) {
      GCtrace *T = (GCtrace *)gcref(J->trace[i]);
      if (T != NULL && !isdead(g, obj2gco(T)))
	lj_memprof_symtrace(mp, T, 0);
    }
  }
#endif
}

/* -- C functions of the loaded ELF objects -------------------------------- */

/*
** The start table carries no C symbols: a C function is named when an
** event first needs it. lj_memprof_sym_name resolves its address in the
** object it lies in, and one symbol event at that very address carries
** the name (FORMAT.md section 3), so a stream holds what its VM used, not
** what the process has loaded. mp->named keeps the addresses announced
** so far, sorted; mp->adds is the generation of
** the loaded objects they were named in: once an object is loaded or
** unloaded, each address is named again at its next first use.
*/

/* Emit one C function symbol. */
static void mp_symcfunc(MemProf *mp, uintptr_t addr, const char *name,
			size_t len, int ev)
{
  lj_memprof_putbyte(mp, MP_SYMHDR(ev, LJM_SYMTAB_CFUNC, LJM_SRC_CFUNC));
  lj_memprof_putu(mp, addr);
  lj_memprof_putstr(mp, name, len);
}

/* Index of the first named address above addr. */
static size_t mp_namedafter(MemProf *mp, uintptr_t addr)
{
  size_t lo = 0, hi = mp->nnamed;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (mp->named[mid] <= addr) lo = mid + 1; else hi = mid;
  }
  return lo;
}

/* Has addr been named in the stream? */
static int mp_known(MemProf *mp, uintptr_t addr)
{
  size_t i = mp_namedafter(mp, addr);
  return i > 0 && mp->named[i-1] == addr;
}

/* Remember a named address (not known yet). 0 if out of memory. */
static int mp_addnamed(MemProf *mp, uintptr_t addr)
{
  size_t i;
  if (mp->nnamed == mp->sznamed) {
    size_t nsz = mp->sznamed ? 2*mp->sznamed : 64;
    uintptr_t *r = (uintptr_t *)realloc(mp->named, nsz * sizeof(uintptr_t));
    if (r == NULL) return 0;
    mp->named = r;
    mp->sznamed = nsz;
  }
  i = mp_namedafter(mp, addr);
  memmove(mp->named + i + 1, mp->named + i,
	  (mp->nnamed - i) * sizeof(uintptr_t));
  mp->named[i] = addr;
  mp->nnamed++;
  return 1;
}

/* Before an event names a C function: name it if the stream has not. */
LJ_NOINLINE void lj_memprof_cfunc(MemProf *mp, uintptr_t addr)
{
  mp->lastcf = addr;
  if (!mp_known(mp, addr)) {
    uint64_t gen;
    size_t len;
    char *name = lj_memprof_sym_name(addr, &len, &gen);
    if (gen != mp->adds) {  /* Objects came or went: start afresh. */
      mp->nnamed = 0;
      mp->adds = gen;
    }
    if (name != NULL) {
      mp_symcfunc(mp, addr, name, len, 1);
      free(name);
    } else {  /* Out of memory: still no other function's name. */
      mp_symcfunc(mp, addr, "CFUNC", 5, 1);
    }
    if (!mp_addnamed(mp, addr))
      mp->lastcf = ~(uintptr_t)0;  /* Announce it again next time. */
  }
}

#endif
