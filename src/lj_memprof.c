/*
** Memory profiler: every allocation, reallocation and free of a VM, with
** its source, as a memprof (version 3) stream, or with call stacks in
** the profile extension (see "Call stacks").
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
**
** While profiling, the VM's allocator is wrapped: g->allocf points to
** lj_memprof_allocf and g->allocd to the profiler state, which g->memprof
** (a field added by a patch) also points to: the state hangs off the VM,
** no global, no lock, one profiler per VM. A host may set an allocator
** of its own over the wrapper while profiling; g->memprof still finds the
** state. A stopped profiler's state stays, as a pass-through to the
** allocator it wrapped, until the VM is gone (see mp_stop). A sampling
** profiler on the VM's own allocator wraps nothing but frees: the VM
** counts the bytes itself (lj_memprof_range.c).
**
** Every event is charged to the thread that allocates (g->mem_L, set by
** lj_memprof_alloc, which lj_mem_realloc, lj_mem_alloc and lj_mem_newgco
** call on every allocation while such a profiler runs: see
** lj_memprof_range.c) and to what runs on it: a trace, the
** VM itself, or the function on top of that thread's stack, read without
** trusting any slot (see "Attribution").
*/

#define lj_memprof_c
#define LUA_CORE

/* For syscall(2). Must be defined before any system includes. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "lj_obj.h"
#include "lj_memprof.h"

#if LJ_HASMEMPROF

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/membarrier.h>

#include "lj_gc.h"
#include "lj_frame.h"
#include "lj_str.h"
#include "lj_buf.h"
#include "lj_bc.h"
#include "lj_debug.h"
#include "lj_dispatch.h"
#include "lj_ff.h"
#if LJ_HASJIT
#include "lj_jit.h"
#include "lj_trace.h"
#include "lj_ircall.h"
#include "lj_target.h"
#endif
#if LJ_HASFFI
#include "lj_ctype.h"
#include "lj_cdata.h"
#endif
#include "lj_memprof_format.h"
#include "lj_memprof_int.h"
#include "lj_memprof_stack.h"

/* Lifecycle hooks for an embedder in the same object (see ljmprof.h). */
void (*ljmprof_hook_newstate)(lua_State *L) = NULL;
void *(*ljmprof_hook_close)(lua_State *L) = NULL;
void (*ljmprof_hook_closed)(void *ud) = NULL;

/* The safe-point flag of a profiler without one: never changes. */
static const volatile sig_atomic_t mp_nopoll = 0;

/* -- Attribution --------------------------------------------------------- */

/*
** The stack is read while the VM is in the middle of anything: a fast
** function may already have written its results over its own frame (as
** coroutine.resume does before it allocates its error message), an error
** may be unwinding. So no slot is trusted: a frame must lie inside the
** thread's stack, its function slot must be tagged as a function before
** its pointer is followed, and a saved PC is only read once it is known to
** lie inside the bytecode of a prototype reached that way.
*/

/* The function of frame f, or NULL if the slot does not hold one. */
GCfunc *lj_memprof_framefunc(lua_State *L, cTValue *f)
{
  GCobj *o;
  if (!mp_inframe(L, f)) return NULL;
#if LJ_FR2
  if (!tvisfunc(f - 1)) return NULL;  /* The function slot is a TValue. */
#endif
  /* Without LJ_FR2 (32-bit builds) the slot holds a bare pointer, with no
  ** tag to check: it is trusted there, as LuaJIT's own frame walkers do. */
  o = frame_gc(f);
  if (o == NULL || o->gch.gct != ~LJ_TFUNC) return NULL;
  return &o->fn;
}

/*
** The Lua frame below frame nf, whose link is the return address pc (a
** Lua frame link). Its distance is the A operand of the call before pc,
** which may only be read once pc is known to be in that frame's bytecode:
** so try each distance an A operand can have, nearest first.
*/
static cTValue *mp_luacaller(lua_State *L, cTValue *nf, const BCIns *pc)
{
  /* Frames above the bottom one, below nf (nf is known to be in L). */
  ptrdiff_t room = nf - (tvref(L->stack) + LJ_FR2);
  uint32_t a;
  for (a = 0; a <= BCMAX_A && (ptrdiff_t)(1 + LJ_FR2 + a) < room; a++) {
    cTValue *pf = nf - (1 + LJ_FR2 + a);
    GCfunc *fn;
#if LJ_FR2
    /* pf is inside L's stack, above its bottom: only the tag to check
    ** before lj_memprof_framefunc's own checks (most slots fail it). */
    if (!tvisfunc(pf - 1)) continue;
#endif
    fn = lj_memprof_framefunc(L, pf);
    if (fn != NULL && isluafunc(fn) && mp_pcin(funcproto(fn), pc) &&
	bc_a(pc[-1]) == a)
      return pf;
  }
  return NULL;
}

/* mp_luacaller, tried first where its hint for pc says (MPCallHint). */
cTValue *lj_memprof_luacallerhint(MemProf *mp, lua_State *L, cTValue *nf,
				  const BCIns *pc)
{
  MPCallHint *h = &mp->hints[((uintptr_t)pc >> 2) & (MP_CALLHINTS-1)];
  cTValue *pf = NULL;
  if (h->pc == pc && h->dist < nf - tvref(L->stack))
    pf = mp_callerat(L, nf, pc, nf - h->dist);
  if (pf == NULL && (pf = mp_luacaller(L, nf, pc)) != NULL) {
    h->pc = pc;
    h->dist = nf - pf;
  }
  return pf;
}

/* Charge a built-in at frame nf to the Lua function and line it was
** called from, if any. Returns 1 with the location set. */
static int mp_ffcaller(MemProf *mp, lua_State *L, cTValue *nf, uint64_t *a,
		       uint64_t *b)
{
  int i;
  for (i = 0; i < 8; i++) {
    cTValue *pf;
    const BCIns *ins;
    GCfunc *fn;
    BCLine line;
    if (frame_islua(nf)) {
      ins = frame_pc(nf);
      pf = lj_memprof_luacallerhint(mp, L, nf, ins);
    } else if (frame_iscont(nf)) {
      if (!mp_inframe(L, nf - 2 - LJ_FR2)) return 0;
      if (frame_iscont_fficb(nf)) return 0;
      ins = frame_contpc(nf);
      pf = frame_prevd(nf);
    } else if (frame_ispcall(nf)) {  /* pcall(builtin, ...) */
      pf = frame_prevd(nf);
      fn = lj_memprof_framefunc(L, pf);
      if (fn != NULL && isffunc(fn)) {
	nf = pf;
	continue;
      }
      return 0;
    } else {
      return 0;
    }
    fn = pf != NULL ? lj_memprof_framefunc(L, pf) : NULL;
    if (fn == NULL || !isluafunc(fn) ||
	(line = mp_line(funcproto(fn), ins)) < 0)
      return 0;
    *a = (uintptr_t)funcproto(fn);
    *b = (uint64_t)line;
    return 1;
  }
  return 0;
}

/*
** Where an event comes from: source bits, and up to two location values.
** Returns the source; *a and *b get the location.
*/
static uint8_t mp_where(MemProf *mp, void *optr, uint64_t *a, uint64_t *b)
{
  global_State *g = mp->g;
  int32_t st = g->vmstate;
  lua_State *L;
  cTValue *frame;
  GCfunc *fn;
#if LJ_HASJIT
  if (st > 0) {  /* JIT-compiled code: the trace number. */
    *a = (uint64_t)st;
    return LJM_SRC_TRACE;
  }
#endif
  /*
  ** 0: a new VM that has not run yet. While a trace is recorded, the
  ** interpreter runs each instruction after the recorder has seen it, in
  ** the RECORD state too: the recorder itself runs in a C frame without a
  ** bytecode PC, which the Lua case below charges to INTERNAL.
  ** GC, trace exit, optimizer, assembler: internal.
  */
  if (st != ~LJ_VMST_INTERP && st != ~LJ_VMST_C && st != 0 &&
      st != ~LJ_VMST_RECORD)
    return LJM_SRC_INTERNAL;
  /* The thread that allocates (an allocator call carries none). */
  L = (lua_State *)gcref(g->mem_L);
  if (L == NULL || (optr != NULL && optr == tvref(L->stack)))
    return LJM_SRC_INTERNAL;  /* No Lua code runs, or stack resizing. */
  frame = L->base - 1;
  fn = lj_memprof_framefunc(L, frame);
  if (fn == NULL) {
    /* A built-in that wrote over its function slot still has its link:
    ** its Lua caller, if any. Else a bottom or dummy frame. */
    return mp_inframe(L, frame) && mp_ffcaller(mp, L, frame, a, b) ?
	   LJM_SRC_LFUNC : LJM_SRC_INTERNAL;
  }
  if (isluafunc(fn)) {  /* Lua function on top: its current line. */
    void *cf = cframe_raw(L->cframe);
    const BCIns *ins;
    GCproto *pt = funcproto(fn);
    BCLine line;
    if (cf == NULL || (void *)cframe_pc(cf) == (void *)cframe_L(cf) ||
	(ins = cframe_pc(cf)) == NULL || (line = mp_line(pt, ins)) < 0)
      return LJM_SRC_INTERNAL;
    *a = (uintptr_t)pt;
    *b = (uint64_t)line;
    return LJM_SRC_LFUNC;
  }
  if (isffunc(fn) && mp_ffcaller(mp, L, frame, a, b))
    return LJM_SRC_LFUNC;  /* A built-in: charged to its Lua caller. */
  *a = (uintptr_t)fn->c.f;  /* lua_CFunction, or built-in not called from Lua. */
  return LJM_SRC_CFUNC;
}

/* -- Allocator wrappers: every event --------------------------------------- */

/* An event from Lua or C code: find the location, then write it all. */
LJ_NOINLINE void lj_memprof_event(MemProf *mp, uint8_t ev, void *optr,
				 size_t osize, void *nptr, size_t nsize)
{
  uint64_t a = 0, b = 0;
  uint8_t src;
  uint8_t *p;
  src = mp_where(mp, optr, &a, &b);
  if (src == LJM_SRC_CFUNC && (uintptr_t)a != mp->lastcf)
    lj_memprof_cfunc(mp, (uintptr_t)a);  /* May emit symbol events first. */
  else if (src == LJM_SRC_LFUNC && mp->smp)
    lj_memprof_announceproto(mp, (GCproto *)(uintptr_t)a);  /* Lazily. */
  else if (src == LJM_SRC_TRACE && mp->smp)
    lj_memprof_announcetrace(mp, a);
  mp_reserve(mp);
  p = mp->pos;
  *p++ = ev | src;
  if (src != LJM_SRC_INTERNAL) {
    p = mp_uleb(p, a);
    if (src == LJM_SRC_LFUNC) p = mp_uleb(p, b);
  }
  p = mp_body(mp, p, ev, optr, osize, nptr, nsize);
  if (mp->depth && ev != LJM_EV_FREE) {  /* The profile extension. */
    *mp->pos |= LJM_EV_KIND;
    p = mp_objkind(mp->g, p);
  }
  mp->pos = p;
}

/* Before an event: the buffer is full, a time mark may be due, or the
** profiler is halted (lim is then NULL). Returns 0 if halted. */
LJ_NOINLINE int lj_memprof_full(MemProf *mp)
{
  if (mp->err) return 0;
  if (mp->lim == NULL || mp->pos > mp->hardlim) lj_memprof_flush(mp);
  if (mp->timed && mp->lim != NULL && !mp->err) lj_memprof_timemark(mp, 0);
  return !mp->err;
}

/* Safe point: the callback may stop, abandon or restart the profiler. */
static LJ_NOINLINE void *mp_poll(MemProf *mp, void *ptr, size_t osize,
				 size_t nsize)
{
  global_State *g = mp->g;
  int ontop = mp_ontop(g, mp);
  if (LJ_UNLIKELY(mp_insweep(g))) {  /* Not here: at the next call. */
    sig_atomic_t seen = mp->pollseen;
    void *nptr;
    mp->pollseen = *mp->pollflag;
    nptr = mp_wrapper(mp)(mp, ptr, osize, nsize);
    mp->pollseen = seen;
    return nptr;
  }
  mp->pollseen = *mp->pollflag;
  if (nsize == 0) {  /* A snapshot there has the block freed. */
    ljmprof_freeing = ptr;
    ljmprof_freesize = osize;
  }
  mp->poll(mainthread(g), mp->ctx);
  ljmprof_freeing = NULL;
  /* On top, mp may be retired now: go through whatever allocator the VM
  ** has. Buried, the host's allocator above it already runs this call. */
  if (ontop)
    return g->allocf(g->allocd, ptr, osize, nsize);
  return mp_wrapper(mp)(mp, ptr, osize, nsize);
}

/*
** VM states whose events are internal, as a bit mask indexed by
** vmstate + 8 (the states are ~0 to ~6): GC, trace exit, optimizer,
** assembler. See mp_where for the others.
*/
#define MP_INTERNALST \
  ((1u << (8 + ~LJ_VMST_GC)) | (1u << (8 + ~LJ_VMST_EXIT)) | \
   (1u << (8 + ~LJ_VMST_OPT)) | (1u << (8 + ~LJ_VMST_ASM)))

/*
** The event of an allocator call, if it is one of the two most frequent
** sources and the buffer has room: JIT-compiled code (the trace number),
** the collector and other internal states (nothing). Returns 0 otherwise:
** lj_memprof_record then writes it. leaf: nothing is called (a free whose
** address is not cached goes to lj_memprof_record too), so that
** lj_memprof_allocf needs no registers saved.
*/
static LJ_AINLINE int mp_quick(MemProf *mp, uint8_t ev, void *optr,
			       size_t osize, void *nptr, size_t nsize, int leaf)
{
  uint8_t *p = mp->pos;
  int32_t st;
  if (LJ_UNLIKELY(p > mp->lim))
    return 0;
#if LJ_LE
  if (leaf && ((uintptr_t)optr >> MP_ADDRSHIFT) != mp->addrkey)
    return 0;
#else
  if (leaf) return 0;
#endif
  st = mp->g->vmstate;
#if LJ_HASJIT
  if (st > 0) {  /* JIT-compiled code: the trace number. */
    *p = ev | LJM_SRC_TRACE;
    p = mp_uleb(p + 1, (uint64_t)st);
  } else
#endif
  if (((MP_INTERNALST >> (st + 8)) & 1)) {
    *p++ = ev | LJM_SRC_INTERNAL;
  } else {
    return 0;
  }
#if LJ_LE
  if (leaf)  /* A free, its address known to be cached. */
    mp->pos = mp_uleb(mp_addrhit(mp, p, (uintptr_t)optr), osize);
  else
#endif
  mp->pos = mp_body(mp, p, ev, optr, osize, nptr, nsize);
  return 1;
}

/* Any event: after a flush, or from Lua or C code. */
LJ_NOINLINE void lj_memprof_record(MemProf *mp, uint8_t ev, void *optr,
				  size_t osize, void *nptr, size_t nsize)
{
  if (LJ_UNLIKELY(mp->pos > mp->lim) && !lj_memprof_full(mp))
    return;
  if (LJ_UNLIKELY(mp->depth) && ev != LJM_EV_FREE) {  /* With stacks. */
    if (!mp_tracequick(mp, ev, optr, osize, nptr, nsize) &&
	!lj_memprof_stackevent(mp, ev, optr, osize, nptr, nsize))
      lj_memprof_event(mp, ev, optr, osize, nptr, nsize);
    return;
  }
  if (!mp_quick(mp, ev, optr, osize, nptr, nsize, 0))
    lj_memprof_event(mp, ev, optr, osize, nptr, nsize);
}

/*
** A free, recorded before the block goes (a free cannot fail, and nothing
** can take the block again in between), so that the wrapped allocator is
** the last thing lj_memprof_allocf does and its callers keep nothing
** across it. Lua and C code, and a full buffer: lj_memprof_record.
*/
static LJ_NOINLINE void *mp_freeslow(MemProf *mp, void *ptr, size_t osize)
{
  lj_memprof_record(mp, LJM_EV_FREE, ptr, osize, NULL, 0);
  mp_leave(mp);
  return mp->allocf(mp->allocd, ptr, osize, 0);
}

/* A new block: only the state and the new size outlive the call. */
static LJ_NOINLINE void *mp_alloc(MemProf *mp, size_t osize, size_t nsize)
{
  void *nptr = mp->allocf(mp->allocd, NULL, osize, nsize);
  if (LJ_LIKELY(mp_enter(mp)) && nptr != NULL &&
      !mp_quick(mp, LJM_EV_ALLOC, NULL, 0, nptr, nsize, 0))
    lj_memprof_record(mp, LJM_EV_ALLOC, NULL, 0, nptr, nsize);
  mp_leave(mp);
  return nptr;
}

static LJ_NOINLINE void *mp_realloc(MemProf *mp, void *ptr, size_t osize,
				    size_t nsize)
{
  void *nptr = mp->allocf(mp->allocd, ptr, osize, nsize);
  if (LJ_LIKELY(mp_enter(mp)) && nptr != NULL)  /* Failed: nothing changed. */
    lj_memprof_record(mp, LJM_EV_REALLOC, ptr, osize, nptr, nsize);
  mp_leave(mp);
  return nptr;
}

/* The poll flag moved: a safe point, unless the stream is sealed. */
LJ_NOINLINE void *lj_memprof_pollalloc(MemProf *mp, void *ptr, size_t osize,
				      size_t nsize)
{
  void *nptr;
  if (mp_enter(mp)) {
    nptr = mp_poll(mp, ptr, osize, nsize);
    mp_leave(mp);
    return nptr;
  }
  mp_leave(mp);
  return mp->allocf(mp->allocd, ptr, osize, nsize);  /* Sealed: no event. */
}

/*
** The VM's allocator while profiling (see mp_enter for busy/sealed). The
** allocator it wraps runs outside the busy section: only the safe point
** and the writing of the event are inside it. So a thread that ends the
** process from inside that allocator (a host's allocator that calls exit
** when memory runs out) leaves the buffer at an event's boundary, not
** busy: the exit can seal the stream complete. A free is written before
** that allocator runs, a new block after it.
*/
void *lj_memprof_allocf(void *ud, void *ptr, size_t osize, size_t nsize)
{
  MemProf *mp = (MemProf *)ud;
  if (LJ_UNLIKELY(*mp->pollflag != mp->pollseen))
    return lj_memprof_pollalloc(mp, ptr, osize, nsize);
  if (nsize != 0)
    return ptr == NULL ? mp_alloc(mp, osize, nsize) :
			 mp_realloc(mp, ptr, osize, nsize);
  if (ptr != NULL) {
    if (LJ_LIKELY(mp_enter(mp)) &&
	!mp_quick(mp, LJM_EV_FREE, ptr, osize, NULL, 0, 1))
      return mp_freeslow(mp, ptr, osize);
    mp_leave(mp);
  }
  return mp->allocf(mp->allocd, ptr, osize, nsize);
}

/* A new block with stacks: walked (lj_memprof_stackevent), not mp_quick. */
static LJ_NOINLINE void *mp_allocstack(MemProf *mp, size_t osize,
				       size_t nsize)
{
  void *nptr = mp->allocf(mp->allocd, NULL, osize, nsize);
  if (LJ_LIKELY(mp_enter(mp)) && nptr != NULL &&
      (LJ_LIKELY(mp->pos <= mp->lim) || lj_memprof_full(mp)) &&
      !mp_tracequick(mp, LJM_EV_ALLOC, NULL, 0, nptr, nsize) &&
      !lj_memprof_stackevent(mp, LJM_EV_ALLOC, NULL, 0, nptr, nsize))
    lj_memprof_event(mp, LJM_EV_ALLOC, NULL, 0, nptr, nsize);
  mp_leave(mp);
  return nptr;
}

/*
** The VM's allocator while profiling with stacks: a wrapper of its own,
** so that the leaf-only one (mp_quick for allocations from traces) pays
** no test for them.
*/
void *lj_memprof_stackallocf(void *ud, void *ptr, size_t osize,
			      size_t nsize)
{
  MemProf *mp = (MemProf *)ud;
  if (ptr == NULL && nsize != 0 &&
      LJ_LIKELY(*mp->pollflag == mp->pollseen))
    return mp_allocstack(mp, osize, nsize);
  return lj_memprof_allocf(ud, ptr, osize, nsize);
}


/* -- Start and stop ------------------------------------------------------ */

/* Drop what only a recording profiler needs. */
static void mp_release(MemProf *mp)
{
  if (mp->release) mp->release(mp->ctx);
  mp->release = NULL;
  free(mp->named);
  mp->named = NULL;
  mp->nnamed = mp->sznamed = 0;
  free(mp->buf);
  mp->buf = mp->end = NULL;
  lj_memprof_stackfree(mp);
  lj_memprof_samplefree(mp);
}

/* The options are usable, and no profiler runs on the VM. */
static int mp_startok(global_State *g, const ljmprof_opt *opt)
{
  return opt != NULL && opt->writer != NULL && mp_get(g) == NULL &&
	 (opt->poll_flag == NULL || opt->poll != NULL) &&
	 opt->stack_depth >= 0 && opt->stack_depth <= LJM_STACK_DEPTH_MAX;
}

/* A new state for the options, not yet the VM's. NULL: out of memory. */
static MemProf *mp_new(global_State *g, const ljmprof_opt *opt)
{
  MemProf *mp;
  /* Sampling implies stacks: a sample is worth its whole path. */
  int depth = opt->stack_depth;
  size_t sz = opt->bufsize ? opt->bufsize : LJMPROF_BUFSIZE_DEFAULT;
  if (opt->sample && !depth) depth = LJM_STACK_DEPTH_DEFAULT;
  if (sz < LJMPROF_BUFSIZE_MIN) sz = LJMPROF_BUFSIZE_MIN;
  mp = (MemProf *)calloc(1, sizeof(MemProf));
  if (mp == NULL) return NULL;
  mp->buf = (uint8_t *)malloc(sz);
  if (mp->buf == NULL || (depth && !lj_memprof_stackinit(mp, depth)) ||
      (opt->sample && !lj_memprof_sampleinit(mp, opt))) {
    mp_release(mp);
    free(mp);
    return NULL;
  }
  mp->g = g;
  mp->pos = mp->buf;
  mp->end = mp->buf + sz;
  mp->timed = depth != 0;
  /* Sampled events are rare: each may look at the clock. */
  mp->tickbytes = opt->sample ? 0 : MP_TICKBYTES;
  mp->hardlim = mp->end - MP_EVMAX - (mp->timed ? MP_MARKMAX : 0);
  mp->lim = mp->hardlim;
  mp->writer = opt->writer;
  mp->ctx = opt->ctx;
  mp->pollflag = opt->poll_flag ? opt->poll_flag : &mp_nopoll;
  mp->poll = opt->poll;
  mp->pollseen = *mp->pollflag;
  mp->lastcf = ~(uintptr_t)0;
  mp->addrkey = ~(uint64_t)0;  /* No address has all these bits. */
  return mp;
}

/* The stream's beginning: the symbol table, the event section's header
** and information, and with the extension the start snapshot. */
static void mp_writestart(MemProf *mp)
{
  lj_memprof_puthdr(mp, LJM_SYMTAB_M2);
  lj_memprof_dumpvm(mp);  /* No C symbols: events name them as they need them. */
  lj_memprof_putbyte(mp, LJM_SYMTAB_FINAL);
  lj_memprof_puthdr(mp, LJM_EVENTS_M2);
  if (mp->depth) lj_memprof_putinfo(mp, LJM_INFO_DEPTH, mp->depth);
  if (mp->smp)
    lj_memprof_putinfo(mp, LJM_INFO_SAMPLE, lj_memprof_samplemean(mp));
  if (mp->timed) {
    mp->t0 = lj_memprof_clock();
    mp_reserve(mp);
    lj_memprof_timemark(mp, 1);  /* 0: the stream's time starts here. */
    /* Not while sampling: a snapshot's blocks are all of the heap, which
    ** the sample's frees would not follow. */
    if (!mp->smp) {
      lj_memprof_heapsnap(mp, LJM_SNAPSHOT_START);
      if (mp->pos > mp->hardlim) lj_memprof_flush(mp);
      lj_memprof_timemark(mp, 1);  /* What the snapshot took. */
    }
  }
}


int lj_memprof_start(lua_State *L, const ljmprof_opt *opt,
		     lj_memprof_release release)
{
  global_State *g = G(L);
  MemProf *mp, *older;
  if (!mp_startok(g, opt))
    return LJMPROF_ERRUSE;
  mp = mp_new(g, opt);
  if (mp == NULL) return LJMPROF_ERRMEM;
  mp_writestart(mp);
  if (mp->err) {
    int e = mp->err;
    mp_release(mp);
    free(mp);
    errno = e;
    return LJMPROF_ERRIO;
  }
  mp->release = release;  /* Owned by the profiler from now on. */
  mp->active = 1;
  older = (MemProf *)g->memprof;
  mp->older = older;
  if (older != NULL) {  /* The VM's arena goes with the newest state. */
    mp->arena = older->arena;
    older->arena = NULL;
  }
  lj_memprof_hook(g, mp);
#if MP_COUNTER
  /* The VM stores the allocating thread only while a profiler runs (in
  ** lj_memprof_alloc): one started at a safe point inside an allocation
  ** (a toggle, a delay) charges that allocation to the thread that runs,
  ** as g->cur_L says, not to the last one of an earlier profiler. */
  setgcref(g->mem_L, gcref(g->cur_L) != NULL ? gcref(g->cur_L) :
		     obj2gco(L));
#endif
  g->memprof = mp;
  return LJMPROF_OK;
}


/*
** Stop the profiler. release: only one started with it (NULL: any).
**
** The state itself is not freed before the VM is (lj_memprof_free): the
** pair (lj_memprof_allocf, mp) may still be called, by a host's allocator set
** over it while profiling, or by a C module that took it from
** lua_getallocf, as the VM's own allocator stays valid for the VM's life.
** It becomes a pass-through to the allocator it wrapped.
*/
static int mp_stop(lua_State *L, int write, int any,
		   lj_memprof_release release)
{
  global_State *g = G(L);
  MemProf *mp = mp_get(g);
  int e;
  if (mp == NULL || (!any && mp->release != release))
    return LJMPROF_ERRUSE;
  if (!mp_enter(mp)) {
    /* Ended by another thread as the process goes, which may still be
    ** writing the buffer: touch nothing, free nothing. */
    lj_memprof_unhook(g, mp);
    mp->active = 0;
    mp_leave(mp);
    return LJMPROF_OK;
  }
  if (write && !mp->err) {
    if (mp->stk && mp->stk->full)
      lj_memprof_putinfo(mp, LJM_INFO_CUT_EVENTS, mp->stk->cutevents);
    if (mp->timed) {  /* The end: the stream's duration. */
      mp_reserve(mp);
      lj_memprof_timemark(mp, 1);
    }
    lj_memprof_putbyte(mp, LJM_EV_EPILOGUE);
    lj_memprof_flush(mp);
  }
  e = write ? mp->err : 0;
  lj_memprof_unhook(g, mp);
  mp_release(mp);
  mp->active = 0;
  mp->pos = (uint8_t *)mp;  /* Not NULL: pos > lim holds for every event, */
  mp->lim = NULL;	    /* and lj_memprof_full says halted. */
  mp->err = EINVAL;
  mp->pollflag = &mp_nopoll;
  mp->pollseen = 0;
  mp_leave(mp);
  if (e) {
    errno = e;
    return LJMPROF_ERRIO;
  }
  return LJMPROF_OK;
}

/* After the VM's last block: every state it ever had. */
void lj_memprof_free(void *states)
{
  MemProf *mp = (MemProf *)states;
  while (mp != NULL) {
    MemProf *older = mp->older;
    lj_memprof_rangefree(mp);  /* Empty: the VM's last block is gone. */
    if (!mp->sealed) {  /* A sealed one may be in use as the process ends. */
      mp_release(mp);
      free(mp);
    }
    mp = older;
  }
}

int lj_memprof_stop(lua_State *L, lj_memprof_release release)
{
  return mp_stop(L, 1, 0, release);
}

int lj_memprof_owned(lua_State *L, lj_memprof_release release)
{
  MemProf *mp = mp_get(G(L));
  return mp != NULL && mp->release == release;
}

/* -- VM lifecycle and new symbols ------------------------------------------ */

void lj_memprof_newstate(lua_State *L)
{
  if (ljmprof_hook_newstate) ljmprof_hook_newstate(L);
}

void *lj_memprof_close(lua_State *L)
{
  void *ud = ljmprof_hook_close ? ljmprof_hook_close(L) : NULL;
  if (mp_get(G(L)) != NULL)
    mp_stop(L, 1, 1, NULL);  /* Complete the stream before the VM goes. */
  return ud;
}

/* lua_close is over: no allocator call of the VM can come any more. */
void lj_memprof_closed(void *ud)
{
  if (ud != NULL && ljmprof_hook_closed) ljmprof_hook_closed(ud);
}

void lj_memprof_addproto(global_State *g, GCproto *pt)
{
  MemProf *mp = mp_get(g);
  if (mp != NULL) {
    if (mp_enter(mp) && !mp->err) {
      if (mp->stk) lj_memprof_protonew(mp->stk, (uintptr_t)pt);
      if (mp->smp)
	lj_memprof_unseenproto(mp, pt);  /* Announced when sampled. */
      else
	lj_memprof_symproto(mp, pt, 1);
    }
    mp_leave(mp);
  }
}

#if LJ_HASJIT
void lj_memprof_addtrace(global_State *g, struct GCtrace *T)
{
  MemProf *mp = mp_get(g);
  if (mp != NULL) {
    if (mp_enter(mp) && !mp->err) {
      if (mp->stk) {  /* Its number may be an old one's. */
	mp->stk->nlast = 0;
	lj_memprof_tracenew(mp->stk, T->traceno);
      }
      if (mp->smp)
	lj_memprof_unseentrace(mp, T->traceno);  /* As a prototype. */
      else
	lj_memprof_symtrace(mp, T, 1);
    }
    mp_leave(mp);
  }
}
#endif

/* -- Public API ------------------------------------------------------------ */

__thread void *ljmprof_freeing;
__thread size_t ljmprof_freesize;

int ljmprof_insweep(lua_State *L)
{
  return mp_insweep(G(L));
}

LUA_API int ljmprof_start(lua_State *L, const ljmprof_opt *opt)
{
  return lj_memprof_start(L, opt, NULL);
}

LUA_API int ljmprof_stop(lua_State *L)
{
  return mp_stop(L, 1, 1, NULL);
}

LUA_API int ljmprof_abandon(lua_State *L)
{
  return mp_stop(L, 0, 1, NULL);
}

/* membarrier(2): make every thread of the process pass a full barrier. */
static int mp_membarrier(void)
{
#if defined(__NR_membarrier)
  static volatile int registered;
  if (!registered) {
    /* Idempotent; needed once per process (and again after exec). */
    (void)syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
		  0, 0);
    registered = 1;
  }
  if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0)
    return 1;
  return syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0;
#else
  return 0;
#endif
}

LUA_API int ljmprof_seal(lua_State *L)
{
  MemProf *mp = mp_get(G(L));
  int saved = errno;
  if (mp == NULL) return LJMPROF_ERRUSE;
  if (!mp->sealed) {
    mp->sealed = 1;
    if (!mp_membarrier()) {
      mp->sealed = 0;  /* No way to know what the VM's thread does. */
      errno = saved;
      return LJMPROF_ERRBUSY;
    }
  }
  /* From here on the VM's thread leaves the buffer alone; wait until it
  ** is out of an event it had begun. */
  if (*(volatile sig_atomic_t *)&mp->busy) {
    errno = saved;
    return LJMPROF_ERRBUSY;
  }
  (void)mp_membarrier();  /* Its stores before it left are seen here. */
  if (mp->pos == (uint8_t *)mp || mp->buf == NULL) {
    errno = saved;
    return LJMPROF_ERRUSE;  /* Already stopped. */
  }
  if (!mp->err) lj_memprof_flush(mp);
  mp->lim = NULL;  /* Halted: nothing more goes into the buffer. */
  if (mp->err) {
    errno = mp->err;
    return LJMPROF_ERRIO;
  }
  errno = saved;
  return LJMPROF_OK;
}

/*
** A later snapshot, on the VM's thread at a safe point (a Lua call of
** misc.memprof.snapshot, the shim's poll): the same blocks as the start
** snapshot's, between INFO SNAPSHOT 2 and 0 and two TIME marks, as a
** census: the reader takes them as what is live then, not as events.
*/
LUA_API int ljmprof_snapshot(lua_State *L)
{
  MemProf *mp = mp_get(G(L));
  int e;
  if (mp == NULL || !mp->timed || mp->smp != NULL)
    return LJMPROF_ERRUSE;  /* Not running, no extension, or sampled. */
  if (!mp_enter(mp) || mp->lim == NULL) {  /* Sealed or halted. */
    mp_leave(mp);
    return LJMPROF_ERRUSE;
  }
  if (!mp->err) {
    mp_reserve(mp);
    lj_memprof_timemark(mp, 1);
    lj_memprof_heapsnap(mp, LJM_SNAPSHOT_LATER);
    if (mp->pos > mp->hardlim) lj_memprof_flush(mp);
    lj_memprof_timemark(mp, 1);  /* What it took. */
  }
  e = mp->err;
  mp_leave(mp);
  if (e) {
    errno = e;
    return LJMPROF_ERRIO;
  }
  return LJMPROF_OK;
}

LUA_API int ljmprof_running(lua_State *L)
{
  return mp_get(G(L)) != NULL;
}

LUA_API int ljmprof_flush(lua_State *L)
{
  MemProf *mp = mp_get(G(L));
  if (mp == NULL) return LJMPROF_ERRUSE;
  if (!mp_enter(mp)) {  /* Sealed: the buffer is another thread's now. */
    mp_leave(mp);
    return LJMPROF_ERRUSE;
  }
  if (!mp->err) {
    /* The host's timer: a mark when due, so that a stream whose events
    ** are rare still has the time of its buffers. */
    if (mp->timed && mp->lim != NULL && mp->pos <= mp->hardlim)
      lj_memprof_timemark(mp, 0);
    lj_memprof_flush(mp);
    if (mp->timed && mp->lim != NULL) mp_ticklim(mp);
  }
  mp_leave(mp);
  if (mp->err) {
    errno = mp->err;
    return LJMPROF_ERRIO;
  }
  return LJMPROF_OK;
}

#endif
