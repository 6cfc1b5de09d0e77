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

/* Is f a possible frame of L: above the bottom frame, inside the stack? */
static LJ_AINLINE int mp_inframe(lua_State *L, cTValue *f)
{
  cTValue *st = tvref(L->stack);
  return f > st + LJ_FR2 && f < st + L->stacksize &&
	 ((uintptr_t)f - (uintptr_t)st) % sizeof(TValue) == 0;
}

/* The function of frame f, or NULL if the slot does not hold one. */
static GCfunc *mp_framefunc(lua_State *L, cTValue *f)
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
** Line of the instruction before ins in pt, or -1 if ins is not in pt.
** Bytecode without line information (string.dump(f, true), luajit -b)
** has line 0 everywhere: still pt's, as the reference writer has it.
*/
static LJ_AINLINE BCLine mp_line(GCproto *pt, const BCIns *ins)
{
  BCPos pos = proto_bcpos(pt, ins) - 1;
  return pos < pt->sizebc ? lj_debug_line(pt, pos) : -1;
}

/* Does pc, a return address, point just past a call in pt's bytecode? */
static LJ_AINLINE int mp_pcin(GCproto *pt, const BCIns *pc)
{
  const BCIns *bc = proto_bc(pt);
  return pc > bc && pc <= bc + pt->sizebc;
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
    ** before mp_framefunc's own checks (most slots fail it). */
    if (!tvisfunc(pf - 1)) continue;
#endif
    fn = mp_framefunc(L, pf);
    if (fn != NULL && isluafunc(fn) && mp_pcin(funcproto(fn), pc) &&
	bc_a(pc[-1]) == a)
      return pf;
  }
  return NULL;
}

/*
** The Lua caller of frame nf (link pc) at pf (where the last
** stack or a hint had it): the same check as mp_luacaller's, for one distance. NULL if not.
*/
static LJ_AINLINE cTValue *mp_callerat(lua_State *L, cTValue *nf,
				       const BCIns *pc, cTValue *pf)
{
  GCfunc *fn;
  if (pf == NULL || pf >= nf || (fn = mp_framefunc(L, pf)) == NULL ||
      !isluafunc(fn) || !mp_pcin(funcproto(fn), pc) ||
      (ptrdiff_t)bc_a(pc[-1]) != (nf - pf) - 1 - LJ_FR2)
    return NULL;
  return pf;
}

/* mp_luacaller, tried first where its hint for pc says (MPCallHint). */
static cTValue *mp_luacallerhint(MemProf *mp, lua_State *L, cTValue *nf,
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
      pf = mp_luacallerhint(mp, L, nf, ins);
    } else if (frame_iscont(nf)) {
      if (!mp_inframe(L, nf - 2 - LJ_FR2)) return 0;
      if (frame_iscont_fficb(nf)) return 0;
      ins = frame_contpc(nf);
      pf = frame_prevd(nf);
    } else if (frame_ispcall(nf)) {  /* pcall(builtin, ...) */
      pf = frame_prevd(nf);
      fn = mp_framefunc(L, pf);
      if (fn != NULL && isffunc(fn)) {
	nf = pf;
	continue;
      }
      return 0;
    } else {
      return 0;
    }
    fn = pf != NULL ? mp_framefunc(L, pf) : NULL;
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
  fn = mp_framefunc(L, frame);
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

/* -- Event bodies ---------------------------------------------------------- */

/*
** The body of an event, after its header and location: the old block of a
** free or reallocation, the new block of an allocation or reallocation.
*/
static LJ_AINLINE uint8_t *mp_body(MemProf *mp, uint8_t *p, uint8_t ev,
				   void *optr, size_t osize, void *nptr,
				   size_t nsize)
{
  if (ev != LJM_EV_ALLOC) {
    p = mp_addr(mp, p, (uintptr_t)optr);
    p = mp_uleb(p, osize);
  }
  if (ev != LJM_EV_FREE) {
    p = mp_addr(mp, p, (uintptr_t)nptr);
    p = mp_uleb(p, nsize);
  }
  return p;
}

/*
** With the profile extension, an allocation or a reallocation ends with
** the kind of object it is for, as the VM stored it beside the call
** (lj_memprof_kind, patch 0010), and its header has LJM_EV_KIND. The kind
** goes back to NONE then, so that a call that says no kind is not charged
** to the kind before it.
*/
static LJ_AINLINE uint8_t *mp_objkind(global_State *g, uint8_t *p)
{
  *p++ = g->mem_kind;
  g->mem_kind = LJM_KIND_NONE;
  return p;
}

/* -- Call stacks ----------------------------------------------------------- */

/*
** With a depth limit (the profile extension), an allocation or a
** reallocation carries the id of its stack's leaf node; each node
** (parent, frame) is announced once, before its first use. The stack is
** walked as carefully as mp_where reads its top (see "Attribution"), and
** cheaply: the frames of the last stack written are kept, and the next
** stack almost always shares all of them but its top. A frame that is
** the same (slot, function, PC) as the last stack's at the same distance
** from the root, with all below it the same too, keeps its node: lines,
** names and table lookups are only for the frames that changed. The last
** stack also tells where each frame's Lua caller was, which checks in
** O(1) where mp_luacaller tries every distance. Before any walk,
** mp_stackagain checks whether the stack is the last one again but for
** its top frame, reading only the slots the last walk found.
**
** Frees keep their version-3 location; INTERNAL stays INTERNAL.
*/

/* One frame of a walked stack. */
typedef struct MPFrame {
  cTValue *slot;		/* Frame in its thread's stack (NULL: trace). */
  const void *fn;		/* Its function object, or the trace number. */
  const BCIns *pc;		/* Lua: return PC its line is from, or NULL. */
  uint32_t node;		/* Id of the stack from the root to it (0: none). */
  uint32_t tag;			/* LJM_FRAME_*. */
#if LJ_FR2
  uint64_t func;		/* The function slot's TValue, as read, */
  int64_t link;			/* the frame's link, */
  int64_t link2;		/* a vararg frame's other link, */
  const GCproto *pt;		/* and a Lua function's prototype. */
#endif
} MPFrame;

/* An announced node: (parent, frame) -> id. */
typedef struct MPNode {
  uint64_t a;			/* Prototype, ffid, C function or trace number. */
  uint32_t parent;		/* Parent id, 0 for a root. */
  uint32_t b;			/* Line of a Lua frame, else 0. */
  uint32_t tag;			/* LJM_FRAME_*, and for a Lua frame the call
				** that names it (MP_CALLSHIFT). */
  uint32_t id;			/* 0: a free slot. */
} MPNode;

/*
** A Lua frame is named by the call instruction of its caller (as LuaJIT's
** traceback names it), so the call is part of its node: the instruction's
** position in the caller's bytecode, plus one, above the tag's 8 bits. A
** frame entered by a tail call (return A(i) in C) has the caller of C
** for its caller, whose call names it C; a direct call of A from the same
** line is another node, named A. Positions past 2^24 share a node.
*/
#define MP_CALLSHIFT	8
#define MP_TAGMASK	((1u << MP_CALLSHIFT) - 1)

/*
** Names of Lua frames by their caller's (prototype, return PC): a chunk
** loaded and run from the same call site, again and again, gets its
** name without lj_debug_slotname. Each prototype's entries are in the
** set of its address, which a new prototype there clears (mp_protonew):
** only a live prototype can be a frame's caller, so an entry found is
** the name that prototype gives. A copy, so nothing in the prototype is
** read again; longer names are not kept.
*/
#define MP_NAMESETS	64
#define MP_NAMEWAYS	4
#define MP_NAMELEN	46

typedef struct MPName {
  const GCproto *pt;		/* Caller's prototype (NULL: free). */
  const BCIns *pc;		/* Its return PC. */
  uint8_t len;			/* The name's length, */
  char s[MP_NAMELEN];		/* and the name. */
} MPName;

/*
** A resumer in a stack (mp_resumer): the frames of s->cur from first on
** are in thread th, whose stack was at stack with size slots then.
** mp_stackagain checks the chain from the main thread again before it
** reads them.
*/
#define MP_SEGS		8

typedef struct MPSeg {
  lua_State *th;		/* The resumer. */
  cTValue *stack;		/* Its stack, */
  MSize size;			/* and that stack's size. */
  uint32_t first;		/* Index of its first frame. */
} MPSeg;

/*
** Trace call sites (mp_tracesite): the site last found at each return
** address into a trace's machine code, by that address, for that trace
** number; cleared whenever a trace is announced.
*/
#define MP_SITEHINTS	64

typedef struct MPSiteHint {
  uintptr_t ra;			/* Return address into the trace's mcode. */
  uint32_t traceno;		/* The trace it was found in, */
  uint32_t site;		/* and the site there (0: none). */
} MPSiteHint;

/*
** The node of a TRACE frame (trace number and site) over a parent node,
** direct-mapped: cleared when a trace is announced (its number's nodes
** get a new generation).
*/
#define MP_TRACENODES	64

typedef struct MPTraceNode {
  const void *fn;		/* The frame's fn: trace number | site << 32. */
  uint32_t parent;		/* The parent node, */
  uint32_t id;			/* and the node (0: a free entry). */
} MPTraceNode;

/*
** The trace quick path (mp_tracequick): an allocation or reallocation
** from a trace, on the thread, C frame, g->jit_base and stack of earlier
** trace events, with the frames below the trace as they were then, at a
** return address into a trace's code that one of those events had, has
** that event's node: no site hint, no frame walk, no node lookup. The
** frames are checked as mp_stackagain checks them, from a list of (word,
** value) pairs made when it is armed (mp_quickset): a frame's function
** slot and link, a Lua frame's bytecode pointer, a vararg frame's other
** link, each read only once the pairs before it held. Traces that take
** turns over the same frames (an inner and an outer loop) share it: the
** return addresses, with their trace and node, are direct-mapped, and
** the slot of the last trace's return address is kept. A new trace or
** prototype disarms it (L NULL).
*/
#define MP_QUICKPAIRS	48
#define MP_QUICKSITESLOG	4
#define MP_QUICKSITES	(1u << MP_QUICKSITESLOG)
#define MP_QUICKOFF	INT32_MIN
#define mp_quickhash(ra) \
  ((uint32_t)((uint32_t)(ra) * 0x9e3779b1u) >> (32 - MP_QUICKSITESLOG))

typedef struct MPQuickPair {
  const uint64_t *p;		/* A word in the thread's stack or a function, */
  uint64_t v;			/* and its value when armed. */
} MPQuickPair;

typedef struct MPQuickSite {
  uintptr_t ra;			/* Return address into a trace's code, */
  int32_t st;			/* that trace (vmstate), */
  uint32_t node;		/* and the node of its events (0: none). */
} MPQuickSite;

typedef struct MPQuick {
  int32_t st;			/* The trace slot is for, or MP_QUICKOFF. */
  uint32_t n;			/* Pairs in c. */
  lua_State *L;			/* The thread (NULL: off), */
  cTValue *base;		/* g->jit_base, */
  uintptr_t cf;			/* L->cframe, */
  cTValue *stack;		/* L->stack, */
  MSize size;			/* and L->stacksize (at least) when armed. */
  uintptr_t slot;		/* Where trace st's call leaves its return address. */
  MPQuickSite sites[MP_QUICKSITES];  /* By return address. */
  MPQuickPair c[MP_QUICKPAIRS];	/* The frames below the trace. */
} MPQuick;

typedef struct MPStack {
  MPQuick q;			/* See MPQuick. */
  MPFrame *last;		/* Frames of the last stack, leaf first. */
  MPFrame *cur;			/* The stack being walked. */
  uint32_t nlast;		/* Frames in last. */
  int lastcut;			/* last went on below the depth limit. */
  uint32_t cutnode;		/* Id of the CUT root, 0 until needed. */
  uint32_t fullnode;		/* Id of the root of stacks the full table
				** cut (mp_stackfull), 0 until needed. */
  int infull;			/* mp_stackfull is adding nodes. */
  int lastfull;			/* The last stack was cut so. */
  MPNode *nodes;		/* Open addressing, a power of two of slots. */
  uint32_t mask;		/* Slots - 1. */
  uint32_t nnodes;		/* Nodes announced: the last id given. */
  uint32_t nused;		/* Slots in use (mp_nodegrow drops dead ones). */
  uint32_t maxnodes;		/* Bound on nnodes. */
  int full;			/* The bound was hit (NODES_FULL written). */
  uint64_t cutevents;		/* Events whose stack the full table cut. */
  uint64_t *protos;		/* Prototypes that nodes name (see mp_protonew). */
  uint32_t pmask, nprotos;	/* Its slots - 1, its entries. */
  lua_State *lastL;		/* The thread of the last stack, */
  cTValue *laststack;		/* its stack then, */
  MSize lastsize;		/* and that stack's size. */
  int lastplain, curplain;	/* Its frames link straight to each other. */
  MPSeg lastseg[MP_SEGS], curseg[MP_SEGS];  /* Their resumers (MPSeg), */
  uint32_t nlastseg, ncurseg;	/* and how many. */
  const void *cutfn;		/* The caller of a cut stack's deepest frame, */
  const BCIns *cutpc;		/* and its PC: the frame's name. */
  MPName names[MP_NAMESETS][MP_NAMEWAYS];  /* See MPName. */
  uint8_t nameway[MP_NAMESETS];	/* The way each set fills next. */
  uint32_t *tracegen;		/* Generation of each trace number, */
  uint32_t ntracegen;		/* its entries, */
  uint32_t gens;		/* and the last generation given. */
  uint64_t *sites;		/* Trace call sites announced (MPSITEKEY). */
  uint32_t smask, nsites;	/* Its slots - 1, its entries. */
  int nosites;			/* Out of memory once: no more sites. */
  MPSiteHint shints[MP_SITEHINTS];  /* See MPSiteHint. */
  MPTraceNode tnodes[MP_TRACENODES];  /* See MPTraceNode. */
} MPStack;

/* Off until mp_quickset arms it again. */
static LJ_AINLINE void mp_quickoff(MPQuick *q)
{
  q->L = NULL;
  q->st = MP_QUICKOFF;
}

LJ_STATIC_ASSERT(LJMPROF_STACK_DEPTH_DEFAULT == LJM_STACK_DEPTH_DEFAULT &&
		 LJMPROF_STACK_DEPTH_MAX == LJM_STACK_DEPTH_MAX &&
		 LJMPROF_SAMPLE_DEFAULT == LJM_SAMPLE_DEFAULT);

/* Bound on the nodes of a stream; check_memprof lowers it. */
uint32_t lj_memprof_nodes_max = LJM_STACK_NODES_MAX;

/* Bound once the leaves of cut stacks are added too (mp_stackfull). */
#define MP_FULLNODES(max)	((max) + ((max) >> 2) + 256)

/* The VM's library functions, by ffid, as lj_ffdef.h lists them. */
static const char *const mp_ffnames[] = {
#define FFDEF(name)	#name,
#include "lj_ffdef.h"
#undef FFDEF
};

/* How the libraries' C prefixes read in Lua: string_rep is string.rep. */
static const char *const mp_fflibs[][2] = {
  { "io_method_", "file:" }, { "buffer_method_", "buffer:" },
  { "ffi_meta_", "cdata:" }, { "ffi_clib_", "clib:" },
  { "ffi_callback_", "callback:" }, { "jit_util_", "jit.util." },
  { "jit_opt_", "jit.opt." }, { "jit_profile_", "jit.profile." },
  { "misc_memprof_", "misc.memprof." }, { "buffer_", "string.buffer." },
  { "thread_", "thread." }, { "coroutine_", "coroutine." },
  { "string_", "string." }, { "table_", "table." }, { "math_", "math." },
  { "bit_", "bit." }, { "io_", "io." }, { "os_", "os." },
  { "debug_", "debug." }, { "jit_", "jit." }, { "ffi_", "ffi." },
};

/* The name of built-in ffid as Lua users know it, into buf. */
static size_t mp_ffname(unsigned ffid, char *buf, size_t sz)
{
  const char *c;
  size_t i, n = 0;
  if (ffid <= FF_C || ffid - (FF_C+1) >= sizeof(mp_ffnames)/sizeof(char *))
    return 0;
  c = mp_ffnames[ffid - (FF_C+1)];
  for (i = 0; i < sizeof(mp_fflibs)/sizeof(mp_fflibs[0]); i++) {
    size_t len = strlen(mp_fflibs[i][0]);
    if (strncmp(c, mp_fflibs[i][0], len) == 0) {
      n = strlen(mp_fflibs[i][1]);
      memcpy(buf, mp_fflibs[i][1], n);
      c += len;
      break;
    }
  }
  for (; *c && n < sz; c++) buf[n++] = *c;
  return n;
}

/*
** The name of the function that frame pc's instruction calls, as
** lj_debug_funcname tells it, or "". pc is a return PC known to lie in
** pt's bytecode (after a call, or in a continuation: a metamethod).
*/
static const char *mp_callname(global_State *g, GCproto *pt, const BCIns *pc)
{
  const BCIns *ip = pc - 1;
  MMS mm = bcmode_mm(bc_op(*ip));
  const char *name = NULL;
  if (mm == MM_call) {
    BCReg slot = bc_a(*ip);
    if (bc_op(*ip) == BC_ITERC) slot -= 3;
    if (lj_debug_slotname(pt, ip, slot, &name) == NULL) name = NULL;
  } else if (mm != MM__MAX) {
    name = strdata(mmname_str(g, mm));
  }
  return name ? name : "";
}

static LJ_AINLINE uint32_t mp_nameset(const GCproto *pt)
{
  uintptr_t u = (uintptr_t)pt;
  return (uint32_t)((u >> 4) ^ (u >> 10)) & (MP_NAMESETS - 1);
}

/* mp_callname through the cache (see MPName); *len gets the length. */
static const char *mp_cachedname(MemProf *mp, GCproto *pt, const BCIns *pc,
				 size_t *len)
{
  MPStack *s = mp->stk;
  uint32_t set = mp_nameset(pt), w;
  MPName *e = s->names[set];
  const char *name;
  for (w = 0; w < MP_NAMEWAYS; w++)
    if (e[w].pt == pt && e[w].pc == pc) {
      *len = e[w].len;
      return e[w].s;
    }
  name = mp_callname(mp->g, pt, pc);
  *len = strlen(name);
  if (*len <= MP_NAMELEN) {
    e = &e[s->nameway[set]];
    s->nameway[set] = (uint8_t)((s->nameway[set] + 1) % MP_NAMEWAYS);
    e->pt = pt;
    e->pc = pc;
    e->len = (uint8_t)*len;
    memcpy(e->s, name, *len);
  }
  return name;
}

/* Announce node id: parent, then frame f (its key a, b). */
static void mp_putnode(MemProf *mp, uint32_t parent, const MPFrame *f,
		       const MPFrame *caller, uint64_t a, uint32_t b)
{
  const char *name = NULL;
  char buf[64];
  size_t len = 0;
  if (f->tag == LJM_FRAME_C)
    lj_memprof_cfunc(mp, (uintptr_t)a);  /* Its name comes first. */
  else if (f->tag == LJM_FRAME_LUA && mp->smp)
    lj_memprof_announceproto(mp, funcproto((GCfunc *)f->fn));  /* Lazily. */
  else if (f->tag == LJM_FRAME_TRACE && mp->smp)
    lj_memprof_announcetrace(mp, a);
  if (f->tag == LJM_FRAME_LUA && caller != NULL &&
      caller->tag == LJM_FRAME_LUA && caller->pc != NULL)
    name = mp_cachedname(mp, funcproto((GCfunc *)caller->fn), caller->pc,
			 &len);
  else if (f->tag == LJM_FRAME_FAST)
    len = mp_ffname((unsigned)a, buf, sizeof(buf));
  lj_memprof_putbyte(mp, LJM_EV_SYMTAB | LJM_SRC_NODE);
  lj_memprof_putu(mp, parent);
  lj_memprof_putu(mp, f->tag);
  switch (f->tag) {
  case LJM_FRAME_LUA:
    lj_memprof_putu(mp, a);
    lj_memprof_putu(mp, b);
    if (name == NULL) name = "";
    lj_memprof_putstr(mp, name, len);
    break;
  case LJM_FRAME_FAST:
    lj_memprof_putu(mp, a);
    lj_memprof_putstr(mp, buf, len);
    break;
  case LJM_FRAME_C:
    lj_memprof_putu(mp, a);
    break;
  case LJM_FRAME_TRACE:  /* Number, then site (0: not known). */
    lj_memprof_putu(mp, a & 0xffffffffu);
    lj_memprof_putu(mp, a >> 32);
    break;
  default:  /* CUT: nothing. */
    break;
  }
}

static LJ_AINLINE uint32_t mp_nodehash(uint32_t parent, uint32_t tag,
				       uint64_t a, uint32_t b)
{
  uint64_t h = (a ^ ((uint64_t)parent << 32 | b) ^ ((uint64_t)tag << 29)) *
	       0x9e3779b97f4a7c15ull;
  return (uint32_t)(h >> 32) ^ (uint32_t)h;
}

/*
** A prototype's address can be a new prototype's once the collector has
** freed it (a symbol event then says so): the nodes of the old one must
** not be found for the new one. s->protos holds the prototypes that
** nodes name, each with a generation in bits 48 and up, which a new
** prototype at its address bumps (mp_protonew); a Lua frame's key is its
** prototype with that generation, so the old nodes are not found again.
*/
#define MP_PTBITS	(((uint64_t)1 << 48) - 1)

static LJ_AINLINE uint32_t mp_protoslot(MPStack *s, uint64_t pt)
{
  uint32_t i = mp_nodehash(0, 0, pt, 0) & s->pmask;
  while (s->protos[i] && (s->protos[i] & MP_PTBITS) != pt)
    i = (i + 1) & s->pmask;
  return i;
}

/* The key of prototype pt: with its generation, if a node names it. */
static LJ_AINLINE uint64_t mp_protokey(MPStack *s, uint64_t pt)
{
  uint64_t k;
  if (s->protos == NULL) return pt;
  k = s->protos[mp_protoslot(s, pt)];
  return k ? k : pt;
}

/* Remember that a node names pt (key k). 0 if out of memory. */
static int mp_protoadd(MPStack *s, uint64_t k)
{
  uint32_t i;
  if (2 * (s->nprotos + 1) > s->pmask + 1) {
    uint32_t osz = s->protos ? s->pmask + 1 : 0, nsz = osz ? 2 * osz : 256;
    uint64_t *o = s->protos;
    s->protos = (uint64_t *)calloc(nsz, sizeof(uint64_t));
    if (s->protos == NULL) {
      s->protos = o;
      return 0;
    }
    s->pmask = nsz - 1;
    for (i = 0; i < osz; i++)
      if (o[i]) s->protos[mp_protoslot(s, o[i] & MP_PTBITS)] = o[i];
    free(o);
  }
  i = mp_protoslot(s, k & MP_PTBITS);
  if (!s->protos[i]) {
    s->protos[i] = k;
    s->nprotos++;
  }
  return 1;
}

/* A new prototype at pt: if nodes name that address, a new generation.
** The names it gave as a caller are forgotten too. */
static void mp_protonew(MPStack *s, uintptr_t pt)
{
  uint32_t i;
  MPName *e = s->names[mp_nameset((const GCproto *)pt)];
  for (i = 0; i < MP_NAMEWAYS; i++)
    if (e[i].pt == (const GCproto *)pt) e[i].pt = NULL;
  if (s->protos == NULL || !s->protos[i = mp_protoslot(s, pt)])
    return;
  s->protos[i] += (uint64_t)1 << 48;
  if (!(s->protos[i] >> 48)) s->protos[i] += (uint64_t)1 << 48;  /* Not 0. */
  s->nlast = 0;  /* The last stack's frames may name it. */
  mp_quickoff(&s->q);
}

/*
** Is o a node of a prototype that a new one has replaced at its address?
** No frame can have its key again, so the table need not keep it: the
** stream has announced it already. Programs that load code all the time
** (each chunk once, then collected) keep a table of the live code only.
*/
static LJ_AINLINE int mp_nodedead(MPStack *s, const MPNode *o)
{
  uint64_t k;
  if ((o->tag & MP_TAGMASK) != LJM_FRAME_LUA || s->protos == NULL) return 0;
  k = s->protos[mp_protoslot(s, o->a & MP_PTBITS)];
  return k != 0 && k != o->a;  /* Its address has a newer generation. */
}

/* Room for more nodes, without the dead ones: 0 if out of memory. */
static int mp_nodegrow(MPStack *s)
{
  uint32_t nsz = 1024, live = 0, i;
  MPNode *n;
  for (i = 0; s->mask && i <= s->mask; i++)
    if (s->nodes[i].id && !mp_nodedead(s, &s->nodes[i])) live++;
  while (4 * (uint64_t)(live + 1) > nsz) nsz *= 2;  /* At most half full. */
  n = (MPNode *)calloc(nsz, sizeof(MPNode));
  if (n == NULL) return 0;
  for (i = 0; s->mask && i <= s->mask; i++) {
    MPNode *o = &s->nodes[i];
    if (o->id && !mp_nodedead(s, o)) {
      uint32_t j = mp_nodehash(o->parent, o->tag, o->a, o->b) & (nsz - 1);
      while (n[j].id) j = (j + 1) & (nsz - 1);
      n[j] = *o;
    }
  }
  free(s->nodes);
  s->nodes = n;
  s->mask = nsz - 1;
  s->nused = live;
  return 1;
}

/* -- Trace call sites -------------------------------------------------------- */

#if LJ_HASJIT

/*
** A trace number names another trace once the JIT has flushed the first:
** each trace announced while profiling gets a new generation, which the
** key of its nodes and sites carries (0: compiled before the profiler).
*/
static LJ_AINLINE uint32_t mp_tracegen(MPStack *s, uint32_t traceno)
{
  return traceno < s->ntracegen ? s->tracegen[traceno] : 0;
}

#define MP_SITEGENS	0x7fffff  /* Generations a site's key tells apart. */

static void mp_tracenew(MPStack *s, uint32_t traceno)
{
  /* The caches are keyed without generation. */
  memset(s->tnodes, 0, sizeof(s->tnodes));
  mp_quickoff(&s->q);
#if LJ_TARGET_X64 && LJ_GC64
  memset(s->shints, 0, sizeof(s->shints));
#endif
  if (traceno >= s->ntracegen) {
    uint32_t n = s->ntracegen ? s->ntracegen : 64;
    uint32_t *t;
    while (n <= traceno) n *= 2;
    t = (uint32_t *)realloc(s->tracegen, n * sizeof(uint32_t));
    if (t == NULL) {  /* Old sites could pass for the new trace's: none. */
      s->nosites = 1;
      return;
    }
    memset(t + s->ntracegen, 0, (n - s->ntracegen) * sizeof(uint32_t));
    s->tracegen = t;
    s->ntracegen = n;
  }
  if (++s->gens == 0) s->gens = 1;
  if (!(s->gens & MP_SITEGENS) && s->sites) {  /* Keys wrap: name anew. */
    memset(s->sites, 0, (s->smask + 1) * sizeof(uint64_t));
    s->nsites = 0;
  }
  s->tracegen[traceno] = s->gens;
}

#if LJ_TARGET_X64 && LJ_GC64
/*
** An allocation from compiled code comes through a call from the trace's
** machine code into one of the VM's C helpers (lj_tab_new1, lj_str_new,
** lj_buf_putstr, lj_gc_step_jit, ...: the IR call table). A trace runs on
** the interpreter's C frame (L->cframe), moved down by its spill area
** (T->spadjust, below CFRAME_SIZE_JIT - CFRAME_SIZE bytes that the VM
** keeps for it), and pushes nothing else: the return address of that call
** is the word just below, found without a scan and without a change to the
** machine code. It is used only if it lies in the trace's code right after
** a call to one of those helpers. The snapshot in force there (the
** rightmost one that starts at or before the call, as lj_trace_unwind
** finds an exit) gives the PC the trace would resume at and the frames it
** inlined. The site is 1 + the snapshot's number * MP_KINDS + the kind of
** helper (mp_helperkind), whose line may differ. Snapshots follow side
** effects, not lines: the line is named only when the bytecode between
** the snapshot and the next one shows it for sure (mp_snapline); else the
** event stays the trace's (doc/format.md).
*/
#define MP_SITEMAX	64	/* Frames of a site, at most. */
#define MP_SITEKEY(gen, traceno, site) \
  ((uint64_t)((gen) & MP_SITEGENS) << 40 | (uint64_t)(traceno) << 24 | \
   (uint64_t)(site))

#define MP_SITENONE	((uint64_t)1 << 63)  /* A site that has no name. */

/* The IRCALL_* id of target among the VM's helpers, or IRCALL__MAX. */
static uint32_t mp_helper(uintptr_t target)
{
  uint32_t i;
  for (i = 0; i < IRCALL__MAX; i++)
    if ((uintptr_t)lj_ir_callinfo[i].func == target) break;
  return i;
}

/*
** The helper called just before ra, a return address in T's code, or
** IRCALL__MAX. The assembler calls a helper by call rel32 if in reach,
** else by call rax after loading rax as emit_loadu64 does: mov eax,
** imm32; mov rax, simm32; lea rax, [DISPATCH+disp]; lea rax, [rip+disp];
** mov rax, imm64. Whatever the bytes seem to say, only a helper's address
** is taken.
*/
static uint32_t mp_callret(GCtrace *T, uintptr_t ra, uintptr_t dispatch)
{
  uintptr_t lo = (uintptr_t)T->mcode, v;
  const uint8_t *c = (const uint8_t *)ra;
  int32_t d;
  uint32_t id;
  if (ra < lo + 5 || ra >= lo + T->szmcode) return IRCALL__MAX;
  if (c[-5] == XI_CALL) {  /* call rel32 */
    memcpy(&d, c - 4, sizeof(d));
    return mp_helper(ra + (intptr_t)d);
  }
  if (c[-2] != 0xff || c[-1] != 0xd0) return IRCALL__MAX;  /* call rax */
  c -= 2;
  if (ra >= lo + 7 && c[-5] == 0xb8) {  /* mov eax, imm32 */
    memcpy(&d, c - 4, sizeof(d));
    if ((id = mp_helper((uint32_t)d)) < IRCALL__MAX) return id;
  }
  if (ra >= lo + 9 && c[-7] == 0x48) {
    memcpy(&d, c - 4, sizeof(d));
    if (c[-6] == 0xc7 && c[-5] == 0xc0 &&  /* mov rax, simm32 */
	(id = mp_helper((uintptr_t)(intptr_t)d)) < IRCALL__MAX)
      return id;
    if (c[-6] == 0x8d && c[-5] == 0x05 &&  /* lea rax, [rip+disp32] */
	(id = mp_helper((uintptr_t)c + (intptr_t)d)) < IRCALL__MAX)
      return id;
  }
  if (ra >= lo + 9 && c[-7] == 0x49 && c[-6] == 0x8d && c[-5] == 0x86) {
    memcpy(&d, c - 4, sizeof(d));  /* lea rax, [r14+disp32] */
    if ((id = mp_helper(dispatch + (intptr_t)d)) < IRCALL__MAX) return id;
  }
  if (ra >= lo + 6 && c[-4] == 0x49 && c[-3] == 0x8d && c[-2] == 0x46 &&
      (id = mp_helper(dispatch + (int8_t)c[-1])) < IRCALL__MAX)
    return id;  /* lea rax, [r14+disp8] */
  if (ra >= lo + 12 && c[-10] == 0x48 && c[-9] == 0xb8) {
    memcpy(&v, c - 8, sizeof(v));  /* mov rax, imm64 */
    return mp_helper(v);
  }
  return IRCALL__MAX;
}

/* The snapshot in force at the call before ra. */
static SnapNo mp_snapat(GCtrace *T, uintptr_t ra)
{
  SnapShot *snap = T->snap;
  SnapNo lo = 0, hi = T->nsnap;
  uintptr_t ofs = ra - 1 - (uintptr_t)T->mcode;  /* In the call. */
  do {
    SnapNo mid = (lo + hi) >> 1;
    if (ofs < snap[mid].mcofs) hi = mid; else lo = mid + 1;
  } while (lo < hi);
  return lo - 1;  /* snap[0].mcofs is 0. */
}

static LJ_AINLINE const BCIns *mp_snappc(GCtrace *T, SnapNo sn)
{
  return snap_pc(&T->snapmap[T->snap[sn].mapofs + T->snap[sn].nent]);
}

/* The base slot of snapshot sn's innermost frame, less 2. */
static LJ_AINLINE uint32_t mp_snapbase(GCtrace *T, SnapNo sn)
{
  return T->snapmap[T->snap[sn].mapofs + T->snap[sn].nent + LJ_BE] & 0xff;
}

/*
** What a helper allocates for, by the bytecode that can lead to it: a
** table constructor, a new key in a table, a concatenation, or anything.
*/
enum { MP_KANY, MP_KTNEW, MP_KTSET, MP_KCAT, MP_KINDS };

static int mp_helperkind(uint32_t id)
{
  switch (id) {
  case IRCALL_lj_tab_new1: case IRCALL_lj_tab_new_ah: case IRCALL_lj_tab_dup:
    return MP_KTNEW;
  case IRCALL_lj_tab_newkey:
    return MP_KTSET;
  case IRCALL_lj_str_new: case IRCALL_lj_strfmt_int: case IRCALL_lj_strfmt_num:
  case IRCALL_lj_strfmt_putint: case IRCALL_lj_strfmt_putnum:
  case IRCALL_lj_buf_putmem: case IRCALL_lj_buf_putstr:
  case IRCALL_lj_buf_putchar: case IRCALL_lj_buf_tostr:
    return MP_KCAT;
  default:
    return MP_KANY;
  }
}

/* Can instruction op allocate through a helper of this kind? */
static int mp_bcallocs(BCOp op, int kind)
{
  switch (kind) {
  case MP_KTNEW: return op == BC_TNEW || op == BC_TDUP;
  case MP_KTSET: return (op >= BC_TSETV && op <= BC_TSETR) || op == BC_GSET;
  case MP_KCAT: return op == BC_CAT;
  default:
    return !(op == BC_MOV || op == BC_NOT || op == BC_KSTR ||
	     (op >= BC_KSHORT && op <= BC_KNIL) || op == BC_UGET);
  }
}

/*
** The line of the allocation of this kind made by the instructions of pt
** from pc up to end, or -1. They must run one after the other (no call,
** jump or loop: a trace ran them all), and those that can allocate so be
** on one line. The last may be the loop instruction that took the
** snapshot at end (the loop's exit, just after it), or a comparison whose
** snapshot resumes at the branch the trace did not take.
*/
#define MP_SITESPAN	64	/* Instructions checked, at most. */

static BCLine mp_spanline(GCproto *pt, const BCIns *pc, const BCIns *end,
			  int kind)
{
  const BCIns *ins;
  BCLine line = -1;
  BCOp op;
  if (pc < proto_bc(pt) || end <= pc || end > proto_bc(pt) + pt->sizebc ||
      end - pc > MP_SITESPAN)
    return -1;
  op = bc_op(end[-1]);
  if (end - 1 > pc &&
      (op == BC_FORL || op == BC_IFORL || op == BC_JFORL || op == BC_ITERL ||
       op == BC_IITERL || op == BC_JITERL || op == BC_LOOP ||
       op == BC_ILOOP || op == BC_JLOOP))
    end--;
  for (ins = pc; ins < end; ins++) {
    op = bc_op(*ins);
    if (op <= BC_ISF && ins + 1 < end && bc_op(ins[1]) == BC_JMP &&
	(end == ins + 2 || end == ins + 2 + bc_j(ins[1]))) {
      /* A comparison's snapshot: its PC is the branch not taken. */
      end = ins + 1;
    } else if (op < BC_MOV || op > BC_TSETR || op == BC_UCLO ||
	       op == BC_FNEW) {
      return -1;
    }
    if (mp_bcallocs(op, kind)) {
      BCLine l = lj_debug_line(pt, proto_bcpos(pt, ins));
      if (line >= 0 && l != line) return -1;
      line = l;
    }
  }
  return line;
}

/* May IR instruction ir call a helper that allocates? */
static int mp_irallocs(const IRIns *ir)
{
  switch (ir->o) {
  case IR_GCSTEP: case IR_NEWREF: case IR_SNEW: case IR_XSNEW:
  case IR_TNEW: case IR_TDUP: case IR_CNEW: case IR_CNEWI:
  case IR_BUFHDR: case IR_BUFPUT: case IR_BUFSTR: case IR_TOSTR:
  case IR_CALLN: case IR_CALLA: case IR_CALLL: case IR_CALLS: case IR_CALLXS:
    return 1;
  default:
    return 0;
  }
}

/*
** The line of the allocation of this kind in the code of snapshot sn (in
** pt, at pc), or -1. The trace takes a snapshot before an instruction
** only when the one before had a side effect, so the allocation comes from
** the instructions between the snapshot's PC and the next snapshot's: sure
** when the next snapshot is in the same frame further on in pt, and
** mp_spanline finds the line. In a loop, the optimizer copied the
** snapshots of the first iteration and dropped those with no guard
** between them: the code of a copy is that of its source and of the
** snapshots after it up to the source of the next copy, sure if the
** source's line is and those after it allocate nothing.
*/
/* Where the code of snapshot sn, at pc, begins in the bytecode: at pc,
** but for a root trace's first snapshot at its loop instruction, whose
** body comes next (the instruction may be patched: startins is its
** original). */
static const BCIns *mp_snapstart(GCtrace *T, SnapNo sn, const BCIns *pc)
{
  if (sn == 0 && pc == mref(T->startpc, const BCIns)) {
    BCOp op = bc_op(T->startins);
    if (op == BC_FORL || op == BC_ITERL)
      return pc + 1 + bc_j(T->startins);
    if (op == BC_LOOP)
      return pc + 1;
  }
  return pc;
}

static BCLine mp_snapline(GCtrace *T, SnapNo sn, GCproto *pt,
			  const BCIns *pc, int kind)
{
  SnapNo nsnap = T->nsnap, s0, s;
  uint32_t base = mp_snapbase(T, sn);
  const BCIns *npc = sn + 1 < nsnap ? mp_snappc(T, sn + 1) : NULL;
  BCLine line;
  IRRef loop;
  if (npc != NULL && mp_snapbase(T, sn + 1) == base &&
      (line = mp_spanline(pt, mp_snapstart(T, sn, pc), npc, kind)) >= 0)
    return line;
  for (loop = REF_FIRST; loop < T->nins && T->ir[loop].o != IR_LOOP; loop++) ;
  if (loop >= T->nins || T->snap[sn].ref <= loop) return -1;
  for (s0 = 0; s0 + 1 < nsnap && T->snap[s0+1].ref < loop; s0++)
    if (mp_snappc(T, s0) == pc && mp_snapbase(T, s0) == base) break;
  if (s0 + 1 >= nsnap || T->snap[s0+1].ref >= loop ||
      mp_snapbase(T, s0 + 1) != base ||
      (line = mp_spanline(pt, mp_snapstart(T, s0, pc), mp_snappc(T, s0 + 1),
			  kind)) < 0)
    return -1;
  for (s = s0 + 1; s < nsnap && T->snap[s].ref < loop; s++) {
    IRRef ref, lim;
    if (npc != NULL && mp_snappc(T, s) == npc &&
	mp_snapbase(T, s) == mp_snapbase(T, sn + 1))
      return line;  /* The source of the next copy. */
    lim = s + 1 < nsnap && T->snap[s+1].ref < loop ? T->snap[s+1].ref : loop;
    for (ref = T->snap[s].ref; ref < lim; ref++)
      if (mp_irallocs(&T->ir[ref])) return -1;
  }
  return npc == NULL ? line : -1;  /* The last copy: on to the loop's end. */
}

/*
** The frames of snapshot sn of T, innermost first, into pts and lines:
** each frame's prototype and line, the innermost at the snapshot's PC,
** the others at their call of the frame above, the last the trace's start
** frame (its root trace's, for a side trace). 0 unless every frame is a
** Lua frame whose function the snapshot holds as a constant, every PC
** lies in its function's bytecode, and the innermost line of an
** allocation of this kind is sure (mp_snapline).
*/
static uint32_t mp_snaplines(jit_State *J, GCtrace *T, SnapNo sn, int kind,
			     uint64_t *pts, uint64_t *lines)
{
  SnapShot *snap = &T->snap[sn];
  SnapEntry *map = &T->snapmap[snap->mapofs];
  MSize nent = snap->nent, i;
  const BCIns *pc = snap_pc(&map[nent]);
  BCReg baseslot = (map[nent+LJ_BE] & 0xff) + 2, top = 1;
  GCproto *fpt[MP_SITEMAX];
  const BCIns *fpc[MP_SITEMAX];	/* Return PC into each frame. */
  uint32_t nf = 0, k;
  BCLine inner;
  GCtrace *R = T->root ? traceref(J, T->root) : T;
  if (R == NULL) return 0;
  fpt[nf++] = &gcref(R->startpt)->pt;
  for (i = 0; i < nent; i++) {  /* Entries in slot order. */
    SnapEntry e = map[i];
    BCReg slot = snap_slot(e);
    IRIns *ir, *fir;
    GCobj *o;
    uint64_t link;
    if (!(e & SNAP_FRAME) || slot < 2) continue;
    if ((e & SNAP_CONT) || i == 0 || snap_slot(map[i-1]) != slot - 1 ||
	nf == MP_SITEMAX)
      return 0;
    ir = &T->ir[snap_ref(e)];
    fir = &T->ir[snap_ref(map[i-1])];
    if (ir->o != IR_KNUM || fir->o != IR_KGC || irt_type(fir->t) != IRT_FUNC)
      return 0;
    link = ir_k64(ir)->u64;
    o = ir_kgc(fir);
    if ((link & FRAME_TYPE) != FRAME_LUA || !isluafunc(&o->fn)) return 0;
    fpc[nf-1] = (const BCIns *)(uintptr_t)link;
    fpt[nf++] = funcproto(&o->fn);
    top = slot;
  }
  if (top + 1 != baseslot ||  /* The frames do not reach the PC. */
      pc < proto_bc(fpt[nf-1]) ||
      (inner = mp_snapline(T, sn, fpt[nf-1], pc, kind)) < 0)
    return 0;
  for (k = 0; k < nf; k++) {
    GCproto *pt = fpt[nf-1-k];
    BCLine line = k ? mp_line(pt, fpc[nf-1-k]) : inner;
    if (line < 0) return 0;
    pts[k] = (uintptr_t)pt;
    lines[k] = (uint64_t)line;
  }
  return nf;
}

/* The slot of key in the set of sites (holding key, key | MP_SITENONE,
** or 0 for a new key, which the caller fills), or NULL if out of memory. */
static uint64_t *mp_siteslot(MPStack *s, uint64_t key)
{
  uint32_t i;
  if (2 * (s->nsites + 1) > (s->sites ? s->smask + 1 : 0)) {
    uint32_t osz = s->sites ? s->smask + 1 : 0, nsz = osz ? 2 * osz : 256;
    uint64_t *o = s->sites;
    s->sites = (uint64_t *)calloc(nsz, sizeof(uint64_t));
    if (s->sites == NULL) {
      s->sites = o;
      return NULL;
    }
    s->smask = nsz - 1;
    for (i = 0; i < osz; i++) {
      uint32_t j;
      if (!o[i]) continue;
      j = mp_nodehash(0, 0, o[i] & ~MP_SITENONE, 0) & s->smask;
      while (s->sites[j]) j = (j + 1) & s->smask;
      s->sites[j] = o[i];
    }
    free(o);
  }
  for (i = mp_nodehash(0, 0, key, 0) & s->smask;
       s->sites[i] && (s->sites[i] & ~MP_SITENONE) != key;
       i = (i + 1) & s->smask) ;
  if (!s->sites[i]) s->nsites++;
  return &s->sites[i];
}

/* The site of trace T at return address ra, not in hint h: found, and
** announced if new; 0 if not known. */
static LJ_NOINLINE uint32_t mp_sitemiss(MemProf *mp, GCtrace *T, uintptr_t ra,
					MPSiteHint *h)
{
  MPStack *s = mp->stk;
  uint32_t id, gen = mp_tracegen(s, T->traceno), site = 0;
  /* A GC step is no line's: it stays the trace's. */
  if ((id = mp_callret(T, ra, (uintptr_t)G2GG(mp->g)->dispatch)) <
      IRCALL__MAX && id != IRCALL_lj_gc_step_jit) {
    SnapNo sn = mp_snapat(T, ra);
    int kind = mp_helperkind(id);
    uint64_t pts[MP_SITEMAX], lines[MP_SITEMAX];
    uint32_t n, i;
    uint64_t *e;
    site = sn * MP_KINDS + kind + 1;
    e = mp_siteslot(s, MP_SITEKEY(gen, T->traceno, site));
    if (e == NULL) {
      site = 0;
    } else if (*e == 0) {  /* New: named once, or marked as unnamed. */
      *e = MP_SITEKEY(gen, T->traceno, site);
      n = mp_snaplines(G2J(mp->g), T, sn, kind, pts, lines);
      if (n == 0) {
	*e |= MP_SITENONE;
	site = 0;
      } else {
	if (mp->smp) {  /* Sampling names lazily: its prototypes first. */
	  lj_memprof_announcetrace(mp, T->traceno);
	  for (i = 0; i < n; i++)
	    lj_memprof_announceproto(mp, (GCproto *)(uintptr_t)pts[i]);
	}
	lj_memprof_putbyte(mp, LJM_EV_SYMTAB | LJM_SRC_SITE);
	lj_memprof_putu(mp, T->traceno);
	lj_memprof_putu(mp, site);
	lj_memprof_putu(mp, n);
	for (i = 0; i < n; i++) {
	  lj_memprof_putu(mp, pts[i]);
	  lj_memprof_putu(mp, lines[i]);
	}
      }
    } else if (*e & MP_SITENONE) {
      site = 0;  /* Unnamed: charged to the trace, as without sites. */
    }
  }
  h->ra = ra;
  h->traceno = T->traceno;
  h->site = site;
  return site;
}

/* The site of trace T that the allocation comes from, announced before
** its first use; 0 if not known. *slotp: where the return address was
** read (for mp_quickset), or 0. */
static LJ_AINLINE uint32_t mp_tracesite(MemProf *mp, lua_State *L,
					GCtrace *T, uintptr_t *slotp)
{
  MPStack *s = mp->stk;
  uintptr_t cf = (uintptr_t)cframe_raw(L->cframe), slot, ra;
  MPSiteHint *h;
  if (cf == 0 || s->nosites) return 0;
  slot = cf - (CFRAME_SIZE_JIT - CFRAME_SIZE) - T->spadjust -
	 sizeof(uintptr_t);
  if (slot <= (uintptr_t)__builtin_frame_address(0) || slot >= cf)
    return 0;
  *slotp = slot;
  ra = *(const uintptr_t *)slot;
  h = &s->shints[(ra ^ ra >> 7) & (MP_SITEHINTS - 1)];
  if (LJ_LIKELY(h->ra == ra && h->traceno == T->traceno))
    return h->site;  /* The hints are cleared by a new trace. */
  return mp_sitemiss(mp, T, ra, h);
}
#else
/* Elsewhere the return address of a call from a trace is not read yet. */
#define mp_tracesite(mp, L, T, slotp)	0
#endif
#endif

/* -- Stack nodes and the stack walker --------------------------------------- */

/*
** The id of (parent, frame f), announcing it if new; caller is the frame
** below f (for a Lua frame's name), or NULL. 0 once the table is full.
*/
static uint32_t mp_nodeid(MemProf *mp, uint32_t parent, const MPFrame *f,
			  const MPFrame *caller)
{
  MPStack *s = mp->stk;
  uint64_t a = 0;
  uint32_t b = 0, i, tag = f->tag;
  switch (f->tag) {
  case LJM_FRAME_LUA: {
    GCproto *pt = funcproto((GCfunc *)f->fn);
    BCLine line = f->pc ? mp_line(pt, f->pc) : 0;
    a = (uintptr_t)pt > MP_PTBITS ? (uintptr_t)pt :  /* No room: no generation. */
	mp_protokey(s, (uintptr_t)pt);
    b = line > 0 ? (uint32_t)line : 0;
    if (caller != NULL && caller->tag == LJM_FRAME_LUA && caller->pc != NULL) {
      ptrdiff_t pos = caller->pc -
		      proto_bc(funcproto((GCfunc *)caller->fn));
      if (pos > 0 && pos < ((ptrdiff_t)1 << (32 - MP_CALLSHIFT)))
	tag |= (uint32_t)pos << MP_CALLSHIFT;
    }
    break;
    }
  case LJM_FRAME_FAST: a = ((GCfunc *)f->fn)->c.ffid; break;
  case LJM_FRAME_C:  /* Named anew once objects come or go (lj_memprof_cfunc). */
    a = (uintptr_t)((GCfunc *)f->fn)->c.f;
    b = (uint32_t)mp->adds;
    break;
#if LJ_HASJIT
  case LJM_FRAME_TRACE:  /* Number and site; its generation. */
    a = (uintptr_t)f->fn;
    b = mp_tracegen(s, (uint32_t)a);
    break;
#endif
  case LJM_FRAME_CUT: a = (uintptr_t)f->fn; break;  /* 1: the full root. */
  default: break;
  }
  if (s->mask) {
    for (i = mp_nodehash(parent, tag, a, b) & s->mask; s->nodes[i].id;
	 i = (i + 1) & s->mask) {
      MPNode *o = &s->nodes[i];
      if (o->a == a && o->parent == parent && o->b == b && o->tag == tag)
	return o->id;
    }
  }
  /* Past the bound only mp_stackfull adds nodes: the leaves of cut
  ** stacks, as many as the program has lines, not call paths. */
  if (s->nnodes >= (s->infull ? MP_FULLNODES(s->maxnodes) : s->maxnodes) ||
      (2 * (s->nused + 1) > s->mask + 1 && !mp_nodegrow(s))) {
    if (!s->full) {  /* Said once: later stacks are cut (mp_stackfull). */
      s->full = 1;
      lj_memprof_putinfo(mp, LJM_INFO_NODES_FULL, s->nnodes);
    }
    return 0;
  }
  if (f->tag == LJM_FRAME_CUT && a)  /* The next node is the full root. */
    lj_memprof_putinfo(mp, LJM_INFO_FULL_ROOT, s->nnodes + 1);
  if (f->tag == LJM_FRAME_LUA &&
      (uintptr_t)funcproto((GCfunc *)f->fn) <= MP_PTBITS) {
    if (!mp_protoadd(s, a)) return 0;
    mp_putnode(mp, parent, f, caller, a & MP_PTBITS, b);
  } else {
    mp_putnode(mp, parent, f, caller, a, b);
  }
  for (i = mp_nodehash(parent, tag, a, b) & s->mask; s->nodes[i].id;
       i = (i + 1) & s->mask) ;
  s->nodes[i].a = a;
  s->nodes[i].parent = parent;
  s->nodes[i].b = b;
  s->nodes[i].tag = tag;
  s->nodes[i].id = ++s->nnodes;
  s->nused++;
  return s->nnodes;
}

/* Is f a dummy frame of L (lua_cpcall and friends put L in the slot)? */
static LJ_AINLINE int mp_dummyframe(lua_State *L, cTValue *f)
{
#if LJ_FR2
  return tvisthread(f - 1) && frame_gc(f) == obj2gco(L);
#else
  return frame_gc(f) == obj2gco(L);
#endif
}

/*
** The thread that resumed coroutine X through coroutine.resume or a
** coroutine.wrap function, and its frame of that built-in, in *rf; NULL
** if X is the main thread or no such chain leads to it (a coroutine
** resumed by lua_resume from C). The VM keeps no link to the resumer,
** and a remembered pointer could be a collected thread: so the chain is
** followed down from the main thread, which is always alive. A thread
** that waits in coroutine.resume has its L->base on that frame and keeps
** the coroutine at base[0], below its L->top (for the collector); a
** wrap function holds its coroutine as upvalue 1. Each thread reached
** is referenced by a live slot or closure, so it is alive too; and only
** X runs, so every thread on the way to it waits, with its base and top
** as the built-in stored them.
*/
#define MP_RESUMEHOPS	64

/* The coroutine that thread T waits for in coroutine.resume or a wrap
** function, with that built-in's frame in *rf; NULL if none. */
static lua_State *mp_resumed(lua_State *T, cTValue **rf)
{
  cTValue *f = T->base - 1, *co = T->base;
  GCfunc *fn = mp_framefunc(T, f);
  if (fn == NULL || !isffunc(fn)) return NULL;
  *rf = f;
  if (fn->c.ffid == FF_coroutine_resume)
    return co < T->top && mp_inframe(T, co) && tvisthread(co) ?
	   threadV(co) : NULL;
  if (fn->c.ffid == FF_coroutine_wrap_aux && fn->c.nupvalues >= 1 &&
      tvisthread(&fn->c.upvalue[0]))
    return threadV(&fn->c.upvalue[0]);
  return NULL;
}

static LJ_NOINLINE lua_State *mp_resumer(global_State *g, lua_State *X,
					 cTValue **rf)
{
  lua_State *T = mainthread(g);
  int hops;
  for (hops = 0; hops < MP_RESUMEHOPS && T != X; hops++) {
    cTValue *f;
    lua_State *next = mp_resumed(T, &f);
    if (next == NULL) return NULL;
    if (next == X) {
      *rf = f;
      return T;
    }
    T = next;
  }
  return NULL;
}

/*
** Walk L's stack from frame f (its PC pc, if it is a Lua frame) down to
** the bottom, into s->cur from index n, at most the depth limit in all;
** at a coroutine's bottom, on into the frames of its resumer
** (mp_resumer). top: f is the top frame, whose slots a built-in may have
** written its results over. *cut is set if a frame is left out below the
** limit. Returns the number of frames in s->cur.
*/
static uint32_t mp_walk(MemProf *mp, lua_State *L, cTValue *f,
			const BCIns *pc, uint32_t n, int top, int *cut)
{
  MPStack *s = mp->stk;
  MPFrame *cur = s->cur, *last = s->last;
  uint32_t j = 0, nlast = s->nlast, depth = mp->depth;
  for (;;) {
    GCfunc *fn;
    cTValue *pf;
    if (!mp_inframe(L, f)) {
      lua_State *R;
      /* The bottom of a coroutine: on in the frame that resumed it. */
      if (f == tvref(L->stack) + LJ_FR2 &&
	  (R = mp_resumer(mp->g, L, &pf)) != NULL) {
	if (s->ncurseg < MP_SEGS) {  /* For mp_stackagain. */
	  MPSeg *sg = &s->curseg[s->ncurseg++];
	  sg->th = R;
	  sg->stack = tvref(R->stack);
	  sg->size = R->stacksize;
	  sg->first = n;
	} else {
	  s->curplain = 0;
	}
	L = R;
	f = pf;
	pc = NULL;
	top = 0;
	continue;
      }
      break;
    }
    fn = mp_framefunc(L, f);
    if (fn != NULL) {
      MPFrame *e;
      if (n == depth) {  /* Cut: this frame names the deepest kept one. */
	*cut = 1;
	s->cutfn = fn;
	s->cutpc = isluafunc(fn) && pc != NULL &&
		   mp_pcin(funcproto(fn), pc) ? pc : NULL;
	break;
      }
      e = &cur[n++];
      e->slot = f;
      e->fn = fn;
      e->pc = NULL;
      e->node = 0;
#if LJ_FR2
      e->func = (f - 1)->u64;
      e->link = f->ftsz;
      e->pt = NULL;
#endif
      if (isluafunc(fn)) {
	e->tag = LJM_FRAME_LUA;
	if (pc != NULL && mp_pcin(funcproto(fn), pc)) e->pc = pc;
#if LJ_FR2
	e->pt = funcproto(fn);
#endif
      } else {
	e->tag = isffunc(fn) ? LJM_FRAME_FAST : LJM_FRAME_C;
      }
    } else if (!top && !mp_dummyframe(L, f)) {
      s->curplain = 0;
      break;  /* Not a frame after all: trust nothing below it. */
    } else {
      s->curplain = 0;  /* A frame skipped: mp_stackagain cannot see it. */
    }
    top = 0;
  link:
    if (frame_islua(f)) {  /* Called from Lua: find the caller. */
      pc = frame_pc(f);
      while (j < nlast && (last[j].slot == NULL || last[j].slot > f)) j++;
      pf = NULL;
      if (j + 1 < nlast && last[j].slot == f)
	pf = mp_callerat(L, f, pc, last[j+1].slot);
      if (pf == NULL && (pf = mp_luacallerhint(mp, L, f, pc)) == NULL)
	break;
    } else if (frame_iscont(f)) {  /* A metamethod called by the VM. */
      s->curplain = 0;  /* Its caller's PC is in another slot. */
      if (!mp_inframe(L, f - 2 - LJ_FR2) || frame_iscont_fficb(f))
	break;  /* An FFI callback: the C frames below are not Lua's. */
      pc = frame_contpc(f);
      pf = frame_prevd(f);
    } else if (frame_isvarg(f)) {  /* The frame below holds the link. */
      pf = frame_prevd(f);
      if (pf >= f || !mp_inframe(L, pf)) {
	s->curplain = 0;
	break;
      }
#if LJ_FR2
      if (n > 0 && cur[n-1].slot == f)
	cur[n-1].link2 = pf->ftsz;
      else
#endif
	s->curplain = 0;
      f = pf;
      goto link;
    } else {  /* C, protected C, pcall: no PC of the frame below. */
      pc = NULL;
      pf = frame_prevd(f);
    }
    if (pf >= f) {
      s->curplain = 0;
      break;
    }
    f = pf;
  }
  return n;
}

#if LJ_FR2
/*
** The last stack again: the same thread, every frame's function slot and
** link as they were (only slots inside the thread's stack are read),
** each Lua frame's prototype the same. Then only the top frame can
** differ: its line (or, in a trace, the trace). f and pc: the top frame
** as lj_memprof_stackevent found it; n: 1 with a TRACE frame in
** s->cur[0]. Returns the leaf node, or 0 for a walk.
*/
static uint32_t mp_stackagain(MemProf *mp, lua_State *L, cTValue *f,
			      const BCIns *pc, uint32_t n)
{
  MPStack *s = mp->stk;
  MPFrame *last = s->last, t;
  uint32_t i, nlast = s->nlast, parent, id;
  /* The slots were inside this stack when walked: still so if it has
  ** not moved or shrunk. A plain last stack has a node in every frame. */
  cTValue *st = tvref(L->stack);
  uint32_t k;
  if (!s->lastplain || L != s->lastL || nlast <= n || last[n].slot != f ||
      st != s->laststack || L->stacksize < s->lastsize)
    return 0;
  if (s->nlastseg) {
    /* The same resumers, waiting in the same frames, their stacks where
    ** they were: followed from the main thread as mp_resumer does, so
    ** each is alive before it is read. */
    lua_State *T = mainthread(mp->g);
    if (s->lastseg[s->nlastseg-1].th != T) return 0;
    for (k = s->nlastseg; k-- > 0; ) {
      const MPSeg *sg = &s->lastseg[k];
      cTValue *rf;
      T = sg->th;
      if (tvref(T->stack) != sg->stack || T->stacksize < sg->size ||
	  mp_resumed(T, &rf) != (k ? s->lastseg[k-1].th : L) ||
	  (sg->first < nlast && last[sg->first].slot != rf))
	return 0;
    }
  }
  for (i = n, k = 0; i < nlast; i++) {
    const MPFrame *e = &last[i];
    cTValue *ef = e->slot;
    while (k < s->nlastseg && s->lastseg[k].first == i)
      st = s->lastseg[k++].stack;  /* On in a resumer's frames. */
    if ((ef - 1)->u64 != e->func || ef->ftsz != e->link ||
	(e->tag == LJM_FRAME_LUA && funcproto((GCfunc *)e->fn) != e->pt))
      return 0;
    if (frame_isvarg(ef)) {  /* Its real link is in the frame below. */
      cTValue *lf = frame_prevd(ef);
      if (lf <= st + LJ_FR2 || lf >= ef || lf->ftsz != e->link2)
	return 0;
    }
  }
  if (n) {  /* A trace over the same frames. */
    const void *fn = s->cur[0].fn;
    MPTraceNode *c;
    if (last[1].pc != pc || last[0].tag != LJM_FRAME_TRACE) return 0;
    if (last[0].fn == fn && last[0].node) return last[0].node;
    /* Another site of the trace, or another trace, over the same frames:
    ** a loop's sites take turns. */
    parent = last[1].node;
    c = &s->tnodes[((uint32_t)((uintptr_t)fn >> 32) +  /* Sites apart. */
		    (uint32_t)(uintptr_t)fn * 7 + parent) & (MP_TRACENODES - 1)];
    if (c->fn == fn && c->parent == parent && c->id) {
      id = c->id;
    } else {
      t = s->cur[0];
      if ((id = mp_nodeid(mp, parent, &t, &last[1])) == 0) return 0;
      c->fn = fn;
      c->parent = parent;
      c->id = id;
    }
    last[0].fn = fn;  /* The rest of a TRACE frame is the same. */
    last[0].node = id;
    return id;
  } else {
    if (last[0].pc == pc) return last[0].node;
    if (last[0].tag != LJM_FRAME_LUA || pc == NULL) return 0;
    t = last[0];
    t.pc = pc;
    parent = nlast > 1 ? last[1].node : s->lastcut ? s->cutnode : 0;
    if (parent == 0 && s->lastcut) return 0;
    id = mp_nodeid(mp, parent, &t, nlast > 1 ? &last[1] : NULL);
  }
  if (id == 0) return 0;  /* Full: the walk counts it. */
  t.node = id;
  last[0] = t;
  return id;
}
#endif

/*
** A stack the full table has no room for: its leaf frames under the full
** root, so that the event keeps its own line; the frames above them are
** one frame, the cut. The leaf frames: up to the first that is not a
** built-in, which is charged to its caller's line. The full root alone
** if even that has no room.
*/
static uint32_t mp_stackfull(MemProf *mp, MPFrame *cur, uint32_t n)
{
  MPStack *s = mp->stk;
  uint32_t j = 0, parent;
  s->cutevents++;
  s->infull = 1;
  if (!s->fullnode) {
    MPFrame c;
    memset(&c, 0, sizeof(c));
    c.tag = LJM_FRAME_CUT;
    c.fn = (const void *)1;  /* Not the depth limit's CUT root. */
    s->fullnode = mp_nodeid(mp, 0, &c, NULL);
  }
  parent = s->fullnode;
  while (j + 1 < n && cur[j].tag == LJM_FRAME_FAST) j++;
  for (; parent; j--) {
    uint32_t id = mp_nodeid(mp, parent, &cur[j], j + 1 < n ? &cur[j+1] : NULL);
    if (id == 0) break;
    cur[j].node = parent = id;
    if (j == 0) break;
  }
  s->infull = 0;
  return parent;
}

/*
** The leaf node of the n frames in s->cur (cut: deeper frames were left
** out), announcing the nodes it needs. 0 if the table had no room for
** even its root. s->cur becomes the last stack.
*/
static uint32_t mp_stacknode(MemProf *mp, uint32_t n, int cut)
{
  MPStack *s = mp->stk;
  MPFrame *cur = s->cur, *last = s->last;
  uint32_t k = 0, parent = 0, i;
  int full = 0;
  if (cut == s->lastcut) {  /* The part shared with the last stack. */
    uint32_t m = n < s->nlast ? n : s->nlast;
    while (k < m) {
      MPFrame *c = &cur[n-1-k], *l = &last[s->nlast-1-k];
      if (c->slot != l->slot || c->fn != l->fn || c->pc != l->pc ||
	  c->tag != l->tag || l->node == 0
#if LJ_FR2
	  || c->pt != l->pt  /* A new closure at a collected one's address. */
#endif
	  )
	break;
      c->node = l->node;
      k++;
    }
  }
  if (k == n && s->lastfull) {  /* The same cut stack again. */
    parent = cur[0].node;
    s->cutevents++;
    full = 1;
  } else if (k) {
    parent = cur[n-k].node;
  } else if (cut) {
    if (!s->cutnode) {
      MPFrame c;
      memset(&c, 0, sizeof(c));
      c.tag = LJM_FRAME_CUT;
      s->cutnode = mp_nodeid(mp, 0, &c, NULL);
    }
    parent = s->cutnode;
  }
  if (!full && (parent || !cut)) {
    MPFrame below;
    below.fn = s->cutfn;
    below.pc = s->cutpc;
    below.tag = LJM_FRAME_LUA;
    for (i = n - k; i-- > 0; ) {
      uint32_t id = mp_nodeid(mp, parent, &cur[i],
			      i + 1 < n ? &cur[i+1] : cut ? &below : NULL);
      if (id == 0) {  /* Full: the leaf under the full root. */
	parent = mp_stackfull(mp, cur, n);
	full = 1;
	break;
      }
      cur[i].node = parent = id;
    }
  } else if (!full) {
    parent = mp_stackfull(mp, cur, n);
    full = 1;
  }
  s->cur = last;
  s->last = cur;
  s->nlast = n;
  s->lastcut = cut;
  /* A cut stack has frames without nodes: never again by mp_stackagain. */
  s->lastplain = s->curplain && parent == cur[0].node && !full;
  s->lastfull = full;
  s->nlastseg = s->ncurseg;
  memcpy(s->lastseg, s->curseg, s->ncurseg * sizeof(MPSeg));
  return parent;
}

/* -- Stack events ---------------------------------------------------------- */

#if LJ_HASJIT && LJ_FR2
/* Do the frames below the armed trace still hold what they held? */
static LJ_AINLINE int mp_quickframes(const MPQuick *q)
{
  uint32_t i;
  for (i = 0; i < q->n; i++)
    if (*q->c[i].p != q->c[i].v) return 0;
  return 1;
}

/*
** After a trace event of thread L from trace st, whose return address was
** in slot: arm the quick path for the last stack, whose leaf is node, or
** add the return address to it. Armed only where mp_stackagain would take
** that stack again: plain frames, no resumer.
*/
static LJ_NOINLINE void mp_quickset(MemProf *mp, lua_State *L, int32_t st,
				    uintptr_t slot, uint32_t node)
{
  MPStack *s = mp->stk;
  MPQuick *q = &s->q;
  MPFrame *last = s->last;
  uintptr_t cf = (uintptr_t)L->cframe, ra = *(const uintptr_t *)slot;
  cTValue *base = tvref(mp->g->jit_base);
  uint32_t i, n = 0;
  MPQuickSite *qs;
  if (!s->lastplain || s->nlastseg || s->nlast < 2 ||
      last[0].tag != LJM_FRAME_TRACE || last[0].node != node ||
      last[1].slot != base - 1) {
    mp_quickoff(q);
    return;
  }
  if (q->L != L || q->base != base || q->cf != cf ||
      q->stack != tvref(L->stack) || !mp_quickframes(q)) {
    mp_quickoff(q);  /* Armed anew for these frames. */
    for (i = 1; i < s->nlast; i++) {
      const MPFrame *e = &last[i];
      cTValue *ef = e->slot;
      if (n + 3 > MP_QUICKPAIRS) return;
      q->c[n].p = &(ef - 1)->u64;
      q->c[n++].v = e->func;
      q->c[n].p = (const uint64_t *)&ef->ftsz;
      q->c[n++].v = (uint64_t)e->link;
      if (e->tag == LJM_FRAME_LUA) {
	q->c[n].p = (const uint64_t *)&((const GCfunc *)e->fn)->l.pc;
	q->c[n].v = *q->c[n].p;
	n++;
      }
      if (frame_isvarg(ef)) {
	q->c[n].p = (const uint64_t *)&frame_prevd(ef)->ftsz;
	q->c[n++].v = (uint64_t)e->link2;
      }
    }
    q->n = n;
    q->base = base;
    q->cf = cf;
    q->stack = tvref(L->stack);
    q->size = L->stacksize;
    memset(q->sites, 0, sizeof(q->sites));
    q->L = L;
  }
  q->st = st;
  q->slot = slot;
  qs = &q->sites[mp_quickhash(ra)];
  qs->ra = ra;
  qs->st = st;
  qs->node = node;
}

/*
** An allocation or reallocation on the quick path (MPQuick): written with
** its node and returns 1, or returns 0 for lj_memprof_stackevent. The
** buffer has room.
*/
static LJ_AINLINE int mp_tracequick(MemProf *mp, uint8_t ev, void *optr,
				    size_t osize, void *nptr, size_t nsize)
{
  global_State *g = mp->g;
  int32_t st = g->vmstate;
  MPQuick *q;
  lua_State *L;
  const MPQuickSite *e;
  uintptr_t slot, ra;
  uint8_t *p;
  if (st <= 0) return 0;  /* Not a trace: nothing else is read. */
  q = &mp->stk->q;
  L = (lua_State *)gcref(g->mem_L);
  if (L != q->L || L == NULL || tvref(g->jit_base) != q->base ||
      (uintptr_t)L->cframe != q->cf || tvref(L->stack) != q->stack ||
      L->stacksize < q->size)
    return 0;
  if (LJ_LIKELY(st == q->st)) {
    slot = q->slot;
  } else {  /* Another trace over the same frames: its slot, as mp_tracesite. */
    jit_State *J = G2J(g);
    uintptr_t cf = (uintptr_t)cframe_raw((void *)q->cf);
    GCtrace *T = (MSize)st < J->sizetrace ? traceref(J, st) : NULL;
    if (T == NULL) return 0;
    slot = cf - (CFRAME_SIZE_JIT - CFRAME_SIZE) - T->spadjust -
	   sizeof(uintptr_t);
    if (slot >= cf) return 0;
    q->st = st;
    q->slot = slot;
  }
  if (slot <= (uintptr_t)__builtin_frame_address(0)) return 0;
  ra = *(const uintptr_t *)slot;
  e = &q->sites[mp_quickhash(ra)];
  if (e->ra != ra || e->st != st || e->node == 0 || !mp_quickframes(q))
    return 0;  /* An entry never set has node 0. */
  p = mp->pos;
  *p++ = ev | LJM_SRC_STACK | LJM_EV_KIND;
  p = mp_uleb(p, e->node);
  p = mp_body(mp, p, ev, optr, osize, nptr, nsize);
  mp->pos = mp_objkind(g, p);
  return 1;
}
#else
#define mp_quickset(mp, L, st, slot, node)	UNUSED(slot)
#define mp_tracequick(mp, ev, optr, osize, nptr, nsize)	0
#endif

/*
** The stack of an allocation or reallocation: write the event with it and
** return 1, or return 0 when it has none (the VM itself allocates, or no
** frame is known), for the version-3 location.
*/
LJ_NOINLINE int lj_memprof_stackevent(MemProf *mp, uint8_t ev, void *optr,
				     size_t osize, void *nptr, size_t nsize)
{
  global_State *g = mp->g;
  int32_t st = g->vmstate;
  lua_State *L = (lua_State *)gcref(g->mem_L);
  const BCIns *pc = NULL;
  uint32_t n = 0, node;
  int cut = 0, top = 1;
  cTValue *f = NULL;
  uintptr_t slot = 0;
  uint8_t *p;
#if LJ_HASJIT
  if (st > 0) {
    /*
    ** Compiled code: the trace, then the frames below its start.
    ** L->base may be stale in a trace; g->jit_base is its base, kept
    ** below the start frame when it returns below it. Frames it inlined
    ** above are in no slot: the trace's call site stands for them.
    */
    jit_State *J = G2J(g);
    MPFrame *e = &mp->stk->cur[0];
    GCtrace *T = (MSize)st < J->sizetrace ? traceref(J, st) : NULL;
    uint32_t site = L != NULL && T != NULL ?
		    mp_tracesite(mp, L, T, &slot) : 0;
    e->slot = NULL;
    e->fn = (const void *)((uintptr_t)st | (uintptr_t)site << 32);
    e->pc = NULL;
    e->node = 0;
    e->tag = LJM_FRAME_TRACE;
    n = 1;
    if (L != NULL && tvref(g->jit_base) != NULL) {
      f = tvref(g->jit_base) - 1;
      top = 0;
      if (mp->stk->nlast > 1 &&
	  (uint32_t)(uintptr_t)mp->stk->last[0].fn == (uint32_t)st &&
	  mp->stk->last[0].tag == LJM_FRAME_TRACE)
	pc = mp->stk->last[1].pc;  /* The same trace: its start, as then. */
      else if (T != NULL)
	pc = mref(T->startpc, const BCIns) + 1;  /* Its line. */
    }
  } else
#endif
  {
    GCfunc *fn;
    if ((st != ~LJ_VMST_INTERP && st != ~LJ_VMST_C && st != 0 &&
	 st != ~LJ_VMST_RECORD) || L == NULL ||
	(optr != NULL && optr == tvref(L->stack)))
      return 0;  /* The VM's own, as in mp_where. */
    f = L->base - 1;
    fn = mp_framefunc(L, f);
    if (fn != NULL && isluafunc(fn)) {  /* Its current PC, as mp_where. */
      void *cf = cframe_raw(L->cframe);
      if (cf == NULL || (void *)cframe_pc(cf) == (void *)cframe_L(cf) ||
	  (pc = cframe_pc(cf)) == NULL || mp_line(funcproto(fn), pc) < 0)
	return 0;
    }
  }
#if LJ_FR2
  if (f == NULL || (node = mp_stackagain(mp, L, f, pc, n)) == 0)
#endif
  {
    mp->stk->curplain = 1;
    mp->stk->ncurseg = 0;
    if (f != NULL)
      n = mp_walk(mp, L, f, pc, n, top, &cut);
    if (n == 0 || (node = mp_stacknode(mp, n, cut)) == 0)
      return 0;
    mp->stk->lastL = L;
    mp->stk->laststack = L ? tvref(L->stack) : NULL;
    mp->stk->lastsize = L ? L->stacksize : 0;
  }
  if (slot && !mp->stk->lastfull)  /* A cut stack counts each event. */
    mp_quickset(mp, L, st, slot, node);
  mp_reserve(mp);
  p = mp->pos;
  *p++ = ev | LJM_SRC_STACK | LJM_EV_KIND;
  p = mp_uleb(p, node);
  p = mp_body(mp, p, ev, optr, osize, nptr, nsize);
  mp->pos = mp_objkind(g, p);
  return 1;
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

/* The stack state of a profiler with a depth limit. 0 if out of memory. */
static int mp_stackinit(MemProf *mp, int depth)
{
  MPStack *s = (MPStack *)calloc(1, sizeof(MPStack));
  if (s == NULL) return 0;
  mp->stk = s;
  mp->depth = (uint32_t)depth;
  s->maxnodes = lj_memprof_nodes_max ? lj_memprof_nodes_max : 1;
  mp_quickoff(&s->q);
  s->last = (MPFrame *)calloc(mp->depth, sizeof(MPFrame));
  s->cur = (MPFrame *)calloc(mp->depth, sizeof(MPFrame));
  return s->last != NULL && s->cur != NULL && mp_nodegrow(s);
}

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
  if (mp->stk) {
    free(mp->stk->protos);
    free(mp->stk->tracegen);
    free(mp->stk->sites);
    free(mp->stk->nodes);
    free(mp->stk->last);
    free(mp->stk->cur);
    free(mp->stk);
    mp->stk = NULL;
  }
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
  if (mp->buf == NULL || (depth && !mp_stackinit(mp, depth)) ||
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
      if (mp->stk) mp_protonew(mp->stk, (uintptr_t)pt);
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
	mp_tracenew(mp->stk, T->traceno);
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
