/*
** Memory profiler: an event, from the VM's allocator to its bytes.
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
**
** While profiling, the VM's allocator is wrapped: g->allocf points to
** lj_memprof_allocf (or, with stacks, lj_memprof_stackallocf) and
** g->allocd to the profiler's state. Each call is an event: where it
** comes from (a trace, the VM itself, or the function on top of the
** allocating thread's stack, read without trusting any slot: see
** "Attribution"), then its bytes. With stacks, lj_memprof_stack.c writes
** the event with its stack. Sampling has a wrapper of its own
** (lj_memprof_sample.c).
*/

#define lj_memprof_event_c
#define LUA_CORE
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* syscall(2), without LJ_FR2. */
#endif

#include "lj_obj.h"
#include "lj_memprof.h"

#if LJ_HASMEMPROF

#if !LJ_FR2
#include <errno.h>
#include <string.h>
#include <time.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "lj_gc.h"
#include "lj_frame.h"
#include "lj_bc.h"
#include "lj_debug.h"
#include "lj_dispatch.h"
#include "lj_ff.h"
#if LJ_HASJIT
#include "lj_jit.h"
#include "lj_trace.h"
#endif
#include "lj_memprof_format.h"
#include "lj_memprof_int.h"
#include "lj_memprof_stack.h"

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
#else
  /* Without LJ_FR2 (32-bit builds) slot f holds a bare pointer beside
  ** the frame link, with no tag to check. A link (a PC or a frame size) is
  ** never one of the top tags, which every value but a double has there:
  ** those slots are no frame (mp_luacaller tries slots that are not; nil
  ** and the booleans leave the pointer word undefined, and a dual-number
  ** build's integers, arm's, hold the number in it). A double's slot is
  ** still trusted, as LuaJIT's own frame walkers do. */
  if (itype(f) >= LJ_TNUMX) return NULL;
#endif
  o = frame_gc(f);
  if (o == NULL || o->gch.gct != ~LJ_TFUNC) return NULL;
  return &o->fn;
}

#if !LJ_FR2
/*
** Without LJ_FR2 a slot that holds a double has no tag either: its low
** word is no pointer (0.7's is 0x66666666), and a slot below a built-in's
** frame that is only a guess (mp_luacaller, a hint) may hold one. So the
** memory it points to is probed before it is read: a futex wait on a word
** reads it in the kernel, and fails with EFAULT where it cannot be read
** instead of faulting (with a zero timeout it never sleeps, and it
** changes nothing; every program may call it, and qemu-user passes it on,
** which process_vm_readv it does not). The first and the last word of
** what is read (less than a page: at most two pages). Only where the
** guess is made (a hint's miss, once per call site and frame layout),
** never per frame of a walk.
*/
static int mp_wordreadable(const void *p)
{
  struct timespec zero = { 0, 0 };
  long r = syscall(SYS_futex, p, FUTEX_WAIT_PRIVATE, 0, &zero, NULL, 0);
  return r == 0 || errno == EAGAIN || errno == ETIMEDOUT || errno == EINTR;
}

static int mp_readable(void *dst, const void *src, size_t n)
{
  int err = errno, ok;  /* The host's errno is left as it was. */
  ok = !((uintptr_t)src & 3) && mp_wordreadable(src) &&
       mp_wordreadable((const char *)src + ((n - 1) & ~(size_t)3));
  errno = err;
  if (ok) memcpy(dst, src, n);
  return ok;
}

GCfunc *lj_memprof_guessfunc(lua_State *L, cTValue *f, const BCIns *pc)
{
  GCfuncL fn;
  GCproto pt;
  const char *o, *p;
  if (!mp_inframe(L, f) || itype(f) >= LJ_TNUMX) return NULL;
  o = (const char *)frame_gc(f);
  if (o == NULL || ((uintptr_t)o & 7) ||
      /* Up to its upvalues: a function with none ends before them. */
      !mp_readable(&fn, o, offsetof(GCfuncL, uvptr)) ||
      fn.gct != (uint8_t)~LJ_TFUNC ||
      fn.ffid != FF_LUA)
    return NULL;
  p = (const char *)mref(fn.pc, char) - sizeof(GCproto);
  if (((uintptr_t)p & 7) || !mp_readable(&pt, p, sizeof(pt)) ||
      pt.gct != (uint8_t)~LJ_TPROTO ||
      !(pc > (const BCIns *)(p + sizeof(GCproto)) &&
	pc <= (const BCIns *)(p + sizeof(GCproto)) + pt.sizebc))
    return NULL;
  return (GCfunc *)o;
}
#endif

/*
** The Lua frame below frame nf, whose link is the return address pc (a
** Lua frame link). Its distance is the A operand of the call before pc,
** which may only be read once pc is known to be in that frame's bytecode:
** so try each distance an A operand can have, nearest first. Without
** LJ_FR2, the slots hold doubles as often as frames: the call before pc
** is read with a check instead (mp_readable), and names the one slot.
*/
static cTValue *mp_luacaller(lua_State *L, cTValue *nf, const BCIns *pc)
{
#if !LJ_FR2
  ptrdiff_t room = nf - tvref(L->stack);
  BCIns ins;
  cTValue *pf;
  if (((uintptr_t)pc & 3) || !mp_readable(&ins, pc - 1, sizeof(ins)) ||
      (ptrdiff_t)(1 + bc_a(ins)) >= room)
    return NULL;
  pf = nf - (1 + bc_a(ins));
  return lj_memprof_guessfunc(L, pf, pc) != NULL ? pf : NULL;
#else
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
#endif
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
#if !LJ_FR2
    if (i == 0 && (ins = mp_lostlink(L, nf)) != NULL) {
      pf = lj_memprof_luacallerhint(mp, L, nf, ins);
    } else
#endif
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

/* -- The event and the allocator wrappers --------------------------------- */

/* An event from Lua or C code: find the location, then write it all. */
LJ_NOINLINE void lj_memprof_event(MemProf *mp, uint8_t ev, void *optr,
				 size_t osize, void *nptr, size_t nsize)
{
  uint64_t a = 0, b = 0;
  uint8_t src;
  uint8_t *p;
  src = mp_where(mp, optr, &a, &b);
#if MP_TRACELINES
  if (src == LJM_SRC_TRACE && ev != LJM_EV_FREE) {
    const MPLine *l = mp_traceline(mp, (int32_t)a);
    if (l != NULL && l->src == LJM_SRC_LFUNC) {  /* The line inside it. */
      const uint8_t *q = mp_unuleb(l->loc, &a);
      (void)mp_unuleb(q, &b);
      src = LJM_SRC_LFUNC;
    }
  }
#endif
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
** sources and the buffer has room: JIT-compiled code (the line of its
** call site where it is sure, else the trace number), the collector and
** other internal states (nothing). Returns 0 otherwise:
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
  if (st > 0) {  /* JIT-compiled code: its line, else the trace number. */
#if MP_TRACELINES
    const MPLine *l;
    if (ev != LJM_EV_FREE && (l = mp_traceline(mp, st)) != NULL) {
      *p = ev | l->src;
      memcpy(p + 1, l->loc, sizeof(l->loc));  /* 15 bytes at most. */
      p += 1 + l->len;
    } else
#endif
    {
      *p = ev | LJM_SRC_TRACE;
      p = mp_uleb(p + 1, (uint64_t)st);
    }
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

#endif
