/*
** Memory profiler: heap snapshots, every block the VM holds at a moment.
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
**
** The start snapshot (the census the profile extension begins with) and
** the later ones (misc.memprof.snapshot, the shim's snapshot signal) are
** the same walk of the VM's objects and its own blocks, written as
** allocations between two INFO SNAPSHOT records. Not to be confused with
** the JIT's snapshots (lj_snap.c), which trace call sites read.
*/

#define lj_memprof_heap_c
#define LUA_CORE

#include "lj_obj.h"
#include "lj_memprof.h"

#if LJ_HASMEMPROF

#include <stdlib.h>
#include <string.h>

#include "lj_memprof_int.h"
#include "lj_gc.h"
#include "lj_str.h"
#include "lj_buf.h"
#if LJ_HASJIT
#include "lj_jit.h"
#include "lj_trace.h"
#endif
#if LJ_HASFFI
#include "lj_ctype.h"
#include "lj_cdata.h"
#endif

/* -- Heap snapshots ------------------------------------------------------- */

/*
** With the profile extension, the events begin with every block the VM
** holds when the stream starts, each as an allocation, between INFO
** SNAPSHOT 1 and 0: the reader then knows what a later free is of. Sizes
** are the ones the VM's free functions will give (lj_gc.c's gc_freefunc),
** so that the free matches its block. A function or prototype is charged
** to where it was defined, a trace to itself, the rest to INTERNAL.
**
** lj_memprof_start runs on the VM's thread, at a safe point that may be
** any allocator call, also one in the middle of a GC step. The lists are
** consistent at every such call (an object is unlinked before it is
** freed). In a sweep phase, objects of the old white not yet swept are
** dead but still held: they are in the snapshot too, as gc.total counts
** them and their frees follow (a dead cdata with a finalizer goes to the
** mmudata list and is freed later). The objects' memory is all there:
** nothing is freed before the sweep reaches it. gc_sweepstr keeps the
** head of the chain it sweeps in a local until it is done, so that chain
** is left out when the safe point is one of its frees (mp_strskip). The
** JIT compiler's buffers are the VM's own blocks too (mp_heapvm); a
** snapshot inside the loop optimizer leaves out its substitution table,
** which only a local holds. Nothing in the VM is changed.
*/

/* One block of the snapshot (MPWalk.block). */
static void mp_heapblock(void *ctx, uint8_t src, uint64_t a, uint64_t b,
			 const void *ptr, size_t sz, uint8_t kind)
{
  MemProf *mp = (MemProf *)ctx;
  uint8_t *p;
  if (ptr == NULL || sz == 0 || mp->err) return;
  if (src == LJM_SRC_CFUNC && (uintptr_t)a != mp->lastcf)
    lj_memprof_cfunc(mp, (uintptr_t)a);
  if (mp->pos > mp->hardlim) lj_memprof_flush(mp);
  p = mp->pos;
  *p++ = LJM_EV_ALLOC | LJM_EV_KIND | src;
  if (src != LJM_SRC_INTERNAL) {
    p = mp_uleb(p, a);
    if (src == LJM_SRC_LFUNC) p = mp_uleb(p, b);
  }
  p = mp_addr(mp, p, (uintptr_t)ptr);
  p = mp_uleb(p, sz);
  *p++ = kind;
  mp->pos = p;
  if (ptr == mp->heapfree) mp->heapfree = NULL;  /* It is in. */
}

/* The walk's scratch memory: the C library's, not the VM's. */
static void *mp_walkalloc(size_t n)
{
  return malloc(n);
}

static void mp_walkrelease(void *p, size_t n)
{
  UNUSED(n);
  free(p);
}

/* Every live GC object and the VM's own blocks, as allocations, between
** INFO SNAPSHOT value (1: the start, 2: a later one) and 0; with graph,
** the references between them after the blocks (lj_memprof_graph.c). */
void lj_memprof_heapsnap(MemProf *mp, uint64_t value, int graph)
{
  MPWalk w = { mp->g, mp_heapblock, mp, mp_walkalloc, mp_walkrelease };
  mp->heapfree = ljmprof_freeing;
  lj_memprof_putinfo(mp, LJM_INFO_SNAPSHOT, value);
  mp_heapwalk(&w);
  /* Taken inside the free of a block that the VM no longer reaches (the
  ** code that frees it has unlinked it): it is still there, and its free
  ** follows. */
  if (mp->heapfree != NULL)
    mp_heapblock(mp, LJM_SRC_INTERNAL, 0, 0, mp->heapfree, ljmprof_freesize,
		 LJM_KIND_NONE);
  if (graph) lj_memprof_graph(mp);
  lj_memprof_putinfo(mp, LJM_INFO_SNAPSHOT, LJM_SNAPSHOT_END);
}

#endif
