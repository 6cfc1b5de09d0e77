/*
** Memory profiler: a walk over every block a VM holds, its GC objects and
** its own blocks, each with the size the VM will free it with.
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
**
** The writer's heap snapshots (lj_memprof_heap.c) and the attach
** recorder's start snapshot (attach/recorder.c) are this walk. It reads
** the VM and changes nothing; the caller says what to do with a block
** (MPWalk.block) and gives the scratch memory the walk of the strings
** sorts their addresses in (MPWalk.alloc, MPWalk.release; alloc may give
** NULL: the chains are walked as they are). Run it on the VM's thread
** at one of its allocator calls (lj_memprof_heap.c says why that is a
** safe point).
*/

#ifndef _LJ_MEMPROF_HEAPWALK_H
#define _LJ_MEMPROF_HEAPWALK_H

#include <stdlib.h>
#include <string.h>

#include "lj_obj.h"
#include "lj_gc.h"
#include "lj_str.h"
#include "lj_buf.h"
#include "lj_dispatch.h"
#if LJ_HASJIT
#include "lj_jit.h"
#endif
#if LJ_HASFFI
#include "lj_ctype.h"
#include "lj_cdata.h"
#endif
#include "lj_memprof_format.h"

/*
** Is the VM's allocator called from the collector's sweep of a string
** chain (gc_sweepstr, which runs in a GC step only)? Not a safe point
** for a heap snapshot: the sweep holds the chain's head in a local, so a
** snapshot there leaves the chain out, and the frees of its strings
** would follow untracked. The safe points wait for the next call.
*/
static LJ_AINLINE int mp_insweep(global_State *g)
{
  return g->gc.state == GCSsweepstring && g->vmstate == ~LJ_VMST_GC;
}

/*
** The object after o in the VM's list of userdata and cdata waiting for
** their finalizer (o NULL: the first), NULL after the last. The list is
** circular; gc.mmudata points to its last object.
*/
static LJ_AINLINE GCobj *mp_mmunext(global_State *g, GCobj *o)
{
  GCobj *last = gcref(g->gc.mmudata);
  return last == NULL || o == last ? NULL : gcnext(o ? o : last);
}

typedef struct MPWalk {
  global_State *g;
  /* One block: its location (src, a, b as an event's), address, size and
  ** kind (LJM_KIND_*). */
  void (*block)(void *ctx, uint8_t src, uint64_t a, uint64_t b,
		const void *ptr, size_t sz, uint8_t kind);
  void *ctx;
  void *(*alloc)(size_t n);
  void (*release)(void *p, size_t n);	/* p may be NULL. */
} MPWalk;

#define mp_heapint(w, ptr, sz, kind) \
  (w)->block((w)->ctx, LJM_SRC_INTERNAL, 0, 0, (ptr), (sz), (kind))

static LJ_AINLINE void mp_heaptab(const MPWalk *w, GCtab *t)
{
  if (t->hmask > 0)
    mp_heapint(w, noderef(t->node), (t->hmask+1) * sizeof(Node),
	       LJM_KIND_TAB_HASH);
  if (t->asize > 0 && LJ_MAX_COLOSIZE != 0 && t->colo <= 0)
    mp_heapint(w, tvref(t->array), t->asize * sizeof(TValue),
	       LJM_KIND_TAB_ARRAY);
  mp_heapint(w, t, LJ_MAX_COLOSIZE != 0 && t->colo ?
		    sizetabcolo((uint32_t)t->colo & 0x7f) : sizeof(GCtab),
	     LJM_KIND_TAB);
}

static LJ_AINLINE void mp_heapthread(const MPWalk *w, lua_State *L)
{
  GCobj *uv;
  if (L != mainthread(w->g))  /* The main thread is in GG_State. */
    mp_heapint(w, L, sizeof(lua_State), LJM_KIND_THREAD);
  mp_heapint(w, tvref(L->stack), L->stacksize * sizeof(TValue),
	     LJM_KIND_STACK);
  /* Open upvalues are on their thread's list, not the root list. */
  for (uv = gcref(L->openupval); uv != NULL; uv = gcref(uv->gch.nextgc))
    mp_heapint(w, uv, sizeof(GCupval), LJM_KIND_UPVAL);
}

#if LJ_HASFFI
static LJ_AINLINE void mp_heapcdata(const MPWalk *w, GCcdata *cd)
{
  if (cdataisv(cd)) {
    mp_heapint(w, memcdatav(cd), sizecdatav(cd), LJM_KIND_CDATA);
  } else {
    CType *ct = ctype_raw(ctype_ctsG(w->g), cd->ctypeid);
    CTSize sz = ctype_hassize(ct->info) ? ct->size : CTSIZE_PTR;
    mp_heapint(w, cd, sizeof(GCcdata) + sz, LJM_KIND_CDATA);
  }
}
#endif

static LJ_AINLINE void mp_heapobj(const MPWalk *w, GCobj *o)
{
  /* A dead prototype is not in the symbol table (lj_memprof_dumpvm), nor its
  ** closures and traces: INTERNAL for those. */
  int dead = isdead(w->g, o);
  uint8_t lsrc = dead ? LJM_SRC_INTERNAL : LJM_SRC_LFUNC;
  switch (o->gch.gct) {
  case ~LJ_TSTR:
    mp_heapint(w, o, lj_str_size(o->str.len), LJM_KIND_STR);
    break;
  case ~LJ_TUPVAL:
    mp_heapint(w, o, sizeof(GCupval), LJM_KIND_UPVAL);
    break;
  case ~LJ_TTHREAD:
    mp_heapthread(w, &o->th);
    break;
  case ~LJ_TPROTO:
    w->block(w->ctx, lsrc, (uintptr_t)&o->pt,
		 o->pt.firstline > 0 ? (uint64_t)o->pt.firstline : 0,
		 o, o->pt.sizept, LJM_KIND_PROTO);
    break;
  case ~LJ_TFUNC:
    if (isluafunc(&o->fn)) {
      GCproto *pt = funcproto(&o->fn);
      w->block(w->ctx, lsrc, (uintptr_t)pt,
		   pt->firstline > 0 ? (uint64_t)pt->firstline : 0,
		   o, sizeLfunc((MSize)o->fn.l.nupvalues), LJM_KIND_LFUNC);
    } else {
      w->block(w->ctx, LJM_SRC_CFUNC, (uintptr_t)o->fn.c.f, 0,
		   o, sizeCfunc((MSize)o->fn.c.nupvalues), LJM_KIND_CFUNC);
    }
    break;
#if LJ_HASJIT
  case ~LJ_TTRACE: {
    GCtrace *T = gco2trace(o);
    jit_State *J = G2J(w->g);
    /* A flushed trace is no longer in J->trace, nor in the symbols. */
    int known = !dead && T->traceno < J->sizetrace &&
		gcref(J->trace[T->traceno]) == o;
    w->block(w->ctx, known ? LJM_SRC_TRACE : LJM_SRC_INTERNAL, T->traceno,
		 0, T,
		 ((sizeof(GCtrace)+7)&~7) + (T->nins-T->nk)*sizeof(IRIns) +
		 T->nsnap*sizeof(SnapShot) + T->nsnapmap*sizeof(SnapEntry),
		 LJM_KIND_TRACE);
    break;
    }
#endif
#if LJ_HASFFI
  case ~LJ_TCDATA:
    mp_heapcdata(w, &o->cd);
    break;
#endif
  case ~LJ_TTAB:
    mp_heaptab(w, &o->tab);
    break;
  case ~LJ_TUDATA:
    mp_heapint(w, o, sizeudata(&o->ud), LJM_KIND_UDATA);
    break;
  default:
    break;
  }
}

/* The VM's own blocks that are not GC objects (lua_close frees them). */
static LJ_AINLINE void mp_heapvm(const MPWalk *w)
{
  global_State *g = w->g;
  mp_heapint(w, G2GG(g), sizeof(GG_State), LJM_KIND_VM);
  mp_heapint(w, g->str.tab, (g->str.mask+1) * sizeof(GCRef),
	     LJM_KIND_STRTAB);
  mp_heapint(w, g->tmpbuf.b, sbufsz(&g->tmpbuf), LJM_KIND_BUF);
#if LJ_HASFFI
  {
    CTState *cts = ctype_ctsG(g);
    if (cts != NULL) {
      mp_heapint(w, cts->tab, cts->sizetab * sizeof(CType), LJM_KIND_FFI);
      mp_heapint(w, cts->cb.cbid, cts->cb.sizeid * sizeof(CTypeID1),
		 LJM_KIND_FFI);
      mp_heapint(w, cts, sizeof(CTState), LJM_KIND_FFI);
    }
  }
#endif
#if LJ_HASJIT
  {
    jit_State *J = G2J(g);
    mp_heapint(w, J->trace, J->sizetrace * sizeof(GCRef), LJM_KIND_JIT);
    /* The recorder's buffers, kept from trace to trace once grown (freed
    ** by lj_trace_freestate), as their growth left them. */
    if (J->irtoplim != J->irbotlim)
      mp_heapint(w, J->irbuf + J->irbotlim,
		 (J->irtoplim - J->irbotlim) * sizeof(IRIns), LJM_KIND_JIT);
    mp_heapint(w, J->snapbuf, J->sizesnap * sizeof(SnapShot), LJM_KIND_JIT);
    mp_heapint(w, J->snapmapbuf, J->sizesnapmap * sizeof(SnapEntry),
	       LJM_KIND_JIT);
  }
#endif
#if LJ_64
  /* The light userdata segments, sized as lj_lightud_intern grows them
  ** (2 slots, then doubled when the number of the next one is a power
  ** of 2) and lj_state.c's close frees them. */
  if (mref(g->gc.lightudseg, uint32_t) != NULL) {
    MSize n = g->gc.lightudnum ? (2u << lj_fls(g->gc.lightudnum)) : 2u;
    mp_heapint(w, mref(g->gc.lightudseg, uint32_t), n * sizeof(uint32_t),
	       LJM_KIND_VM);
  }
#endif
}

/* Anchors of the string table ahead of the walk whose heads it fetches. */
#define MP_HEAPAHEAD	16

/*
** Chain i of the string table may be in the middle of its sweep:
** gc_sweepstr keeps its head in a local until it is done, and frees the
** chain's dead strings meanwhile. It runs inside a GC step (the VM in its
** GC state), where no allocator call but its frees is made: anywhere
** else (an allocation, a free of the program's, an API call) the chain
** the sweep did last is whole, and is in the snapshot.
*/
static LJ_AINLINE int mp_strskip(global_State *g, MSize i)
{
  return mp_insweep(g) && i + 1 == g->gc.sweepstr;
}

/*
** Strings by their chains, in the table's order (the fallback of
** mp_heapstrs). A string belongs to chain hash & mask; while the table is
** rechained (lj_str_resize frees the old table after it rechained its
** strings into the new one, lj_str_rehash_chain frees dead strings as it
** goes) a chain may lead into another, so the test keeps each string once
** (one may be missed then).
*/
static LJ_AINLINE void mp_heapchains(const MPWalk *w)
{
  global_State *g = w->g;
  GCobj *o;
  MSize i;
  for (i = 0; i <= g->str.mask; i++) {
    GCRef r;
    if (mp_strskip(g, i))
      continue;
    /* Strings are where their hash put them: the walk waits on memory.
    ** The heads of the chains a few anchors on are fetched meanwhile. */
    if (i + MP_HEAPAHEAD <= g->str.mask)
      __builtin_prefetch((void *)(gcrefu(g->str.tab[i + MP_HEAPAHEAD]) &
				  ~(uintptr_t)1));
    setgcrefp(r, gcrefu(g->str.tab[i]) & ~(uintptr_t)1);
    for (o = gcref(r); o != NULL; o = gcref(o->gch.nextgc))
      if ((o->str.hash & g->str.mask) == i) mp_heapobj(w, o);
  }
}

/* Sort n addresses (multiples of 8) with tmp beside them: least
** significant digit first, 11 bits at a time from bit 3 (a digit that all
** of them share costs one counting pass). Returns the array that holds
** them sorted (a or tmp). */
#define MP_RADIXBITS	11
static LJ_AINLINE uintptr_t *mp_radixsort(uintptr_t *a, uintptr_t *tmp,
					     size_t n)
{
  size_t count[1u << MP_RADIXBITS];
  unsigned shift;
  if (n == 0) return a;
  for (shift = 3; shift < 64; shift += MP_RADIXBITS) {
    uintptr_t *t;
    size_t sum = 0;
    size_t j;
    unsigned d;
    memset(count, 0, sizeof(count));
    for (j = 0; j < n; j++)
      count[(a[j] >> shift) & ((1u << MP_RADIXBITS) - 1)]++;
    if (count[(a[0] >> shift) & ((1u << MP_RADIXBITS) - 1)] == n)
      continue;  /* One digit for all: already in order for it. */
    for (d = 0; d < (1u << MP_RADIXBITS); d++) {
      size_t c = count[d];
      count[d] = sum;
      sum += c;
    }
    for (j = 0; j < n; j++)
      tmp[count[(a[j] >> shift) & ((1u << MP_RADIXBITS) - 1)]++] = a[j];
    t = a; a = tmp; tmp = t;
  }
  return a;
}

/*
** Strings in address order. The chains of the string table lead all over
** the heap: walked as they are, each string is a cache and TLB miss
** (0.7 s of the 0.85 s of a 1 GB heap's snapshot). So the heads of the
** chains are read from the table (in its order, touching no string),
** sorted by address and visited in that order, which reads the heap
** forwards; their successors make the next round, and so on to the ends
** of the chains (a few rounds: chains are short). The rounds merged, each
** string is written once (a chain that leads into another while the
** table is rechained gives some twice), in address order. The arrays are
** the walk's (w->alloc: 16 bytes a string, freed at once), not the VM's;
** without them (or with chains longer than MP_HEAPRUNS, or that cross
** more than a little), the chains are walked as they are.
*/
#define MP_HEAPRUNS	64
/* More strings than this: the chains (a 32-bit size_t would overflow). */
#if LJ_64
#define MP_HEAPCAPMAX	((size_t)1 << 40)
#else
#define MP_HEAPCAPMAX	((size_t)-1 / (2 * sizeof(uintptr_t)))
#endif
static LJ_AINLINE void mp_heapstrs(const MPWalk *w)
{
  global_State *g = w->g;
  size_t cap = (size_t)g->str.num + (size_t)g->str.num / 8 + 64, n = 0;
  size_t start = 0, j, run[MP_HEAPRUNS], runend[MP_HEAPRUNS];
  uintptr_t *a, *tmp, *s, last = 0;
  int nruns = 0;
  MSize i;
  if (cap > MP_HEAPCAPMAX ||
      (a = (uintptr_t *)w->alloc(cap * sizeof(uintptr_t))) == NULL) {
    mp_heapchains(w);
    return;
  }
  if ((tmp = (uintptr_t *)w->alloc(cap * sizeof(uintptr_t))) == NULL) {
    w->release(a, cap * sizeof(uintptr_t));
    mp_heapchains(w);
    return;
  }
  for (i = 0; i <= g->str.mask; i++) {
    uintptr_t u = gcrefu(g->str.tab[i]) & ~(uintptr_t)1;
    if (u != 0 && !mp_strskip(g, i)) {
      if (n == cap) goto fallback;
      a[n++] = u;
    }
  }
  /* Round by round: the strings of this round sorted, their successors
  ** appended as the next one. */
  while (start < n) {
    size_t end = n;
    if (nruns == MP_HEAPRUNS) goto fallback;  /* Chains that cross. */
    s = mp_radixsort(a + start, tmp, end - start);
    if (s != a + start)
      memcpy(a + start, s, (end - start) * sizeof(uintptr_t));
    run[nruns] = start;
    runend[nruns++] = end;
    for (j = start; j < end; j++) {
      GCobj *o = (GCobj *)a[j];
      GCobj *nx;
      /* In address order, but a few cache lines apart: the hardware
      ** does not see the stream, the prefetches do. */
      if (j + MP_HEAPAHEAD < end)
	__builtin_prefetch((void *)a[j + MP_HEAPAHEAD]);
      nx = gcref(o->gch.nextgc);
      if (nx != NULL && (j == start || a[j] != a[j - 1])) {
	if (n == cap) goto fallback;
	a[n++] = (uintptr_t)nx;
      }
    }
    start = end;
  }
  w->release(tmp, cap * sizeof(uintptr_t));
  tmp = NULL;
  /* The rounds merged, in address order, each string once. */
  for (;;) {
    uintptr_t lo = ~(uintptr_t)0;
    int r, k = -1;
    for (r = 0; r < nruns; r++)
      if (a[run[r]] < lo) lo = a[run[k = r]];
    if (k < 0) break;
    if (run[k] + MP_HEAPAHEAD < runend[k])
      __builtin_prefetch((void *)a[run[k] + MP_HEAPAHEAD]);
    if (++run[k] == runend[k]) {  /* Done: the last run takes its place. */
      nruns--;
      run[k] = run[nruns];
      runend[k] = runend[nruns];
    }
    if (lo != last) {
      last = lo;
      mp_heapobj(w, (GCobj *)lo);
    }
  }
  w->release(a, cap * sizeof(uintptr_t));
  return;
fallback:  /* Nothing written yet. */
  w->release(a, cap * sizeof(uintptr_t));
  w->release(tmp, cap * sizeof(uintptr_t));
  mp_heapchains(w);
}

/* Every block: the VM's own, the objects of the root list, those waiting
** for their finalizer, the strings. */
static LJ_AINLINE void mp_heapwalk(const MPWalk *w)
{
  global_State *g = w->g;
  GCobj *o;
  mp_heapvm(w);
  /* Threads, closures, tables, upvalues, prototypes, traces, cdata and
  ** userdata (lj_trace.c links a trace there when it is saved). */
  for (o = gcref(g->gc.root); o != NULL; o = gcref(o->gch.nextgc))
    mp_heapobj(w, o);
  /* Userdata and cdata waiting for their finalizer. */
  for (o = mp_mmunext(g, NULL); o != NULL; o = mp_mmunext(g, o))
    mp_heapobj(w, o);
  mp_heapstrs(w);
}

#endif
