/*
** Memory profiler: the state of call stacks, shared by the stack walker
** (lj_memprof_stack.c), the node table (lj_memprof_node.c), trace call
** sites (lj_memprof_trace.c) and the allocator wrappers.
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef _LJ_MEMPROF_STACK_H
#define _LJ_MEMPROF_STACK_H

#include "lj_frame.h"
#if LJ_HASJIT
#include "lj_jit.h"
#include "lj_dispatch.h"
#endif
#include "lj_memprof_int.h"

/* -- The stack state ------------------------------------------------------ */

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

/*
** The prototype of Lua frame f: its function's; for a frame that a trace
** which returned below its start inlined (lj_memprof_stackevent), which
** has neither slot nor function object, the one recorded in pt.
*/
static LJ_AINLINE GCproto *mp_framept(const MPFrame *f)
{
#if LJ_FR2
  if (f->fn == NULL) return (GCproto *)f->pt;
#endif
  return funcproto((GCfunc *)f->fn);
}

/* Frames a trace inlined that a stack takes in place of its TRACE frame
** (lj_memprof_stackevent), at most. */
#define MP_INLINEMAX	32

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

/*
** A TRACE frame's fn: the trace number, and above it the call site where
** a pointer has room for both (64-bit). Sites are read only on x86-64
** with GC64 (mp_tracesite), so on a 32-bit target (i386, armhf: no GC64)
** the site is always 0 and fn holds the number alone.
*/
#if LJ_64
#define mp_tracefn(no, site) \
  ((const void *)((uintptr_t)(no) | (uintptr_t)(site) << 32))
#define mp_fnsite(fn)	((uint32_t)((uintptr_t)(fn) >> 32))
#else
#if LJ_TARGET_X64 && LJ_GC64
#error "trace call sites need a 64-bit frame key"
#endif
#define mp_tracefn(no, site)	((void)(site), (const void *)(uintptr_t)(no))
#define mp_fnsite(fn)		((void)(fn), 0u)
#endif

typedef struct MPTraceNode {
  const void *fn;		/* The frame's fn: mp_tracefn(number, site). */
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
#define mp_quickhash(ra)	mp_rahash(ra, MP_QUICKSITESLOG)

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

#define MP_SITENONE	((uint64_t)1 << 63)  /* A site that has no name. */

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
  MPSet protos;			/* Prototypes that nodes name (see
				** lj_memprof_protonew). */
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
  MPSet sites;			/* Trace call sites announced (MP_SITEKEY),
				** MP_SITENONE if they have no name. */
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

static LJ_AINLINE uint32_t mp_nodehash(uint32_t parent, uint32_t tag,
				       uint64_t a, uint32_t b)
{
  uint64_t h = (a ^ ((uint64_t)parent << 32 | b) ^ ((uint64_t)tag << 29)) *
	       0x9e3779b97f4a7c15ull;
  return (uint32_t)(h >> 32) ^ (uint32_t)h;
}

/* -- Stack nodes (lj_memprof_node.c) ------------------------------------- */

/* The id of (parent, frame f), announcing it if new; caller is the frame
** below f, or NULL. 0 once the table is full. */
LJ_FUNC uint32_t lj_memprof_nodeid(MemProf *mp, uint32_t parent,
				   const MPFrame *f, const MPFrame *caller);
/* The n frames of cur under the full table's own root: the leaf node. */
LJ_FUNC uint32_t lj_memprof_stackfull(MemProf *mp, MPFrame *cur, uint32_t n);
/* A new prototype at pt: the nodes of an old one there are not its. */
LJ_FUNC void lj_memprof_protonew(MPStack *s, uintptr_t pt);
/* The stack state of a profiler with a depth limit (0 if out of memory),
** and dropping it. */
LJ_FUNC int lj_memprof_stackinit(MemProf *mp, int depth);
LJ_FUNC void lj_memprof_stackfree(MemProf *mp);

#if LJ_HASJIT
/*
** Where a call from trace T, running on the C frame cf (raw), leaves its
** return address: the word below the trace's spill area (T->spadjust),
** itself below the CFRAME_SIZE_JIT - CFRAME_SIZE bytes the VM keeps for
** it (see "Call sites" in lj_memprof_trace.c); 0 if that does not fit.
*/
static LJ_AINLINE uintptr_t mp_traceslot(const GCtrace *T, uintptr_t cf)
{
  uintptr_t slot = cf - (CFRAME_SIZE_JIT - CFRAME_SIZE) - T->spadjust -
		   sizeof(uintptr_t);
  return slot < cf ? slot : 0;
}
#endif

/* -- The trace quick path (lj_memprof_stack.c) ---------------------------- */

#if LJ_HASJIT && LJ_FR2
/* Do the frames below the armed trace still hold what they held? */
static LJ_AINLINE int mp_quickframes(const MPQuick *q)
{
  uint32_t i;
  for (i = 0; i < q->n; i++)
    if (*q->c[i].p != q->c[i].v) return 0;
  return 1;
}

/* After a trace event of thread L from trace st, whose return address was
** in slot: arm the quick path for the last stack, whose leaf is node. */
LJ_FUNC void lj_memprof_quickset(MemProf *mp, lua_State *L, int32_t st,
				 uintptr_t slot, uint32_t node);

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
    if (T == NULL || (slot = mp_traceslot(T, cf)) == 0) return 0;
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
#define lj_memprof_quickset(mp, L, st, slot, node)	UNUSED(slot)
#define mp_tracequick(mp, ev, optr, osize, nptr, nsize)	0
#endif

#if LJ_HASJIT
/* -- Trace call sites (lj_memprof_trace.c) ------------------------------- */

/*
** A trace number names another trace once the JIT has flushed the first:
** each trace announced while profiling gets a new generation, which the
** key of its nodes and sites carries (0: compiled before the profiler).
*/
static LJ_AINLINE uint32_t mp_tracegen(MPStack *s, uint32_t traceno)
{
  return traceno < s->ntracegen ? s->tracegen[traceno] : 0;
}

/* A trace announced at traceno: a new generation, the caches cleared. */
LJ_FUNC void lj_memprof_tracenew(MPStack *s, uint32_t traceno);

#if LJ_TARGET_X64 && LJ_GC64
/* The site of trace T at return address ra, not in hint h: found, and
** announced if new; 0 if not known. */
LJ_FUNC uint32_t lj_memprof_sitemiss(MemProf *mp, GCtrace *T, uintptr_t ra,
				     MPSiteHint *h);

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
  slot = mp_traceslot(T, cf);  /* 0 is below this frame too. */
  if (slot <= (uintptr_t)__builtin_frame_address(0)) return 0;
  *slotp = slot;
  ra = *(const uintptr_t *)slot;
  h = &s->shints[(ra ^ ra >> 7) & (MP_SITEHINTS - 1)];
  if (LJ_LIKELY(h->ra == ra && h->traceno == T->traceno))
    return h->site;  /* The hints are cleared by a new trace. */
  return lj_memprof_sitemiss(mp, T, ra, h);
}
#else
/*
** Elsewhere the return address of a call from a trace is not read yet.
** The recorded positions (patch 0012) are portable; what a target needs
** is that address. On arm64 a trace calls a helper with blr, which
** leaves it in x30, and the helper's prologue saves x30 in its frame
** record: the chain of frame records (x29) from the allocator up holds
** it, the first saved x30 that lies in the trace's machine code (the
** helpers are C, built with frame records on Debian's arm64).
*/
#define mp_tracesite(mp, L, T, slotp)	0
#endif
#endif

#endif
