/*
** Memory profiler: the state and the helpers its files share.
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
**
** The profiler's files, one job each:
**
**   lj_memprof.c         starting and stopping a profiler, the VM's
**                        lifecycle hooks, the public API (ljmprof.h)
**   lj_memprof_event.c   an event: where it comes from (attribution),
**                        its bytes, the allocator wrappers that write it
**   lj_memprof_stack.c   call stacks, walked at each event
**   lj_memprof_node.c    stack nodes: the table, the names of frames
**   lj_memprof_set.c     sets of keys: the open-addressing table the
**                        others share
**   lj_memprof_trace.c   trace call sites: the lines inside compiled code
**   lj_memprof_sample.c  sampling: the counter, the sampled blocks, the
**                        sampling wrapper, symbols announced lazily
**   lj_memprof_range.c   the VM's allocator pair while profiling, the
**                        VM's byte counter, the sampled blocks' range
**   lj_memprof_wbuf.c    the output buffer's slow paths, time marks
**   lj_memprof_symtab.c  symbols: prototypes, traces, C functions
**   lj_memprof_heap.c    heap snapshots: every block the VM holds
**   lj_memprof_graph.c   the heap graph: the references between objects
**   lj_memprof_sym.c     names of C functions, from the loaded ELF objects
**   lib_misc.c           misc.memprof, the profiler from Lua
**
**   lj_memprof.h         what LuaJIT's own files call (the patch series)
**   lj_memprof_int.h     this: the state, the writer's inline helpers,
**                        the frame readers and the functions that cross
**                        files (lj_memprof_*)
**   lj_memprof_stack.h   the state of call stacks and trace call sites
**   lj_memprof_sym.h     lj_memprof_sym.c's functions
**   lj_memprof_format.h  the stream's bytes
**   lj_memprof_elf.h     reading ELF files, shared with the CLI
**   ljmprof.h            the public C API
**
** Functions that cross files are lj_memprof_<what> (LJ_FUNC: static in
** the amalgamation); everything else is static to its file, with names
** unique among the files, as the amalgamation includes them all.
*/

#ifndef _LJ_MEMPROF_INT_H
#define _LJ_MEMPROF_INT_H

#include <signal.h>
#include <string.h>

#include "lj_obj.h"
#include "lj_gc.h"
#include "lj_frame.h"
#include "lj_bc.h"
#include "lj_debug.h"
#include "lj_memprof.h"
#include "lj_memprof_heapwalk.h"

/* -- The profiler's state ------------------------------------------------ */

/* Orders the profiler's own accesses for a signal handler or, with a
** membarrier on the other side, for another thread; emits no instruction. */
#define mp_compiler_barrier()	__asm__ __volatile__("" ::: "memory")

/* Longest event: header + 6 ULEB128 (location 2, body 4) + object kind. */
#define MP_EVMAX	(1 + 6*LJM_FMT_ULEB128_MAX + 1)

/*
** Time marks (profile extension): the clock is read once per MP_TICKBYTES
** of output, and a mark written when MP_TICKNS have passed since the last
** one: a mark per few thousand events or few milliseconds, whichever is
** later, and no test on the path of an event (the buffer's limit is moved
** in front of the event that is due). A mark is an INFO record.
*/
#define MP_TICKBYTES	16384
#define MP_TICKNS	4000000u
#define MP_MARKMAX	(3 + LJM_FMT_ULEB128_MAX)
/* Room for a TIME mark, its RSS and its MAPPED. */
#define MP_MARKRSS	(3 * MP_MARKMAX)

/*
** Where the Lua caller of a frame linked by a return PC was last found,
** as a distance in slots: a hint only, checked as for any one distance
** (mp_callerat) before mp_luacaller tries them all.
*/
#define MP_CALLHINTS	256

typedef struct MPCallHint {
  const BCIns *pc;		/* Return PC. */
  ptrdiff_t dist;		/* Frame minus its caller's frame. */
} MPCallHint;

/*
** The line inside compiled code (lj_memprof_trace.c), for the leaf-only
** stream: an allocation from a trace whose call site has a sure line is
** written as that line, a version-3 Lua location (prototype and line of
** the innermost frame the trace inlined there), as the interpreter would
** charge it; else as the trace. Only x86-64 with GC64 reads a trace's
** call sites yet. Found by the return address into the trace's code,
** direct-mapped, with the location's bytes ready; cleared whenever a
** trace is announced.
*/
#define MP_TRACELINES	(LJ_HASJIT && LJ_TARGET_X64 && LJ_GC64)
/* A return address's entry in a direct-mapped table of 2^log entries
** (here, and the trace quick path's in lj_memprof_stack.h). */
#define mp_rahash(ra, log) \
  ((uint32_t)((uint32_t)(ra) * 0x9e3779b1u) >> (32 - (log)))
#define MP_LINESLOG	6
#define MP_LINES	(1u << MP_LINESLOG)

typedef struct MPLine {
  uint8_t loc[16];		/* The location's ULEB128 values, */
  uint8_t len;			/* their length, */
  uint8_t src;			/* and its source: LJM_SRC_LFUNC or _TRACE, */
  int32_t st;			/* from that trace (vmstate; 0: a free entry) */
  uintptr_t ra;			/* at this return address into its code. */
} MPLine;

typedef struct MemProf {
  global_State *g;		/* The profiled VM. */
  struct MemProf *older;	/* Retired states of this VM, newest first. */
  int active;			/* Recording (or halted by an error). */
  lua_Alloc allocf;		/* Wrapped allocator. */
  void *allocd;			/* Its opaque pointer. */
  uint8_t *buf;			/* Output buffer (malloc, not the Lua heap). */
  uint8_t *pos;			/* Write position in buf. */
  uint8_t *lim;			/* Flush before an event past this point.
				** NULL once halted: every event sees it. */
  uint8_t *end;			/* End of buf. */
  uint8_t *hardlim;		/* Flush before an event past this point;
				** lim is before it while marks are due. */
  int timed;			/* Time marks: the extension is on. */
  int graphstart;		/* The start snapshot writes the heap graph. */
  ptrdiff_t tickbytes;		/* Output between looks at the clock. */
  uint64_t t0;			/* Clock at the start, nanoseconds. */
  uint64_t tmark;		/* Last mark written, since t0. */
  const volatile unsigned long long *rss;  /* Resident bytes, or NULL. */
  uint64_t rsslast;		/* Last RSS written (0: none yet). */
  void *mapmsp;			/* The VM's own allocator (lj_alloc_f's
				** state) for MAPPED, or NULL. */
  uint64_t maplast;		/* Last MAPPED written (0: none yet). */
  uint64_t addrkey;		/* Bits 21 and up of the last address cached, */
  uint64_t addrhigh;		/* its ULEB128 from byte 3 on (as bytes 3..7 of
				** a little-endian word, 0x80 in bytes 0..2), */
  size_t addrlen;		/* and its length (see mp_addr). */
  ljmprof_writer writer;	/* Where the bytes go. */
  void *ctx;			/* Writer and poll context. */
  lj_memprof_release release;	/* Owner's cleanup for ctx, or NULL. */
  const volatile sig_atomic_t *pollflag;  /* Safe-point flag (or mp_nopoll). */
  ljmprof_poll poll;		/* Safe-point callback. */
  sig_atomic_t pollseen;	/* *pollflag when last seen. */
  sig_atomic_t busy;		/* The VM's thread is inside the profiler. */
  volatile sig_atomic_t sealed;	/* Another thread ended the stream. */
  int err;			/* errno of a failed write: halted. */
  uintptr_t *named;		/* C functions named in the stream, sorted. */
  size_t nnamed;		/* Used entries in named. */
  size_t sznamed;		/* Allocated entries in named. */
  uintptr_t lastcf;		/* Last C function known to be covered. */
  unsigned long long adds;	/* Generation of the objects they were named in. */
  uint32_t depth;		/* Stack depth limit; 0: leaf locations only. */
  struct MPStack *stk;		/* Stack state, with depth only. */
  int64_t sleft;		/* Sampling: bytes until the next sample. */
  const uint8_t *sfilt;		/* Its filter of sampled blocks, */
  struct MPSample *smp;		/* and its state, or NULL (see Sampling). */
  int fast;			/* Sampling with the VM's counter and arena. */
  struct MPArena *arena;	/* The VM's sampled blocks (newest state). */
  uint64_t *ptmarks;		/* Sampling: see mp_ptmark; else NULL. */
  lua_Alloc modf;		/* The pair that (mp_modalloc, this) */
  void *modd;			/* stands for, once lua_getallocf gave it. */
  MPCallHint hints[MP_CALLHINTS];  /* See MPCallHint. */
  void *heapfree;		/* The block a heap snapshot is taken inside
				** the free of, until it is written. */
#if MP_TRACELINES
  int32_t linest;		/* The trace of the last call site read, */
  uintptr_t linecf;		/* its thread's L->cframe, */
  uintptr_t lineslot;		/* and where its call left the return address. */
  int32_t linesmax;		/* The highest trace of an entry since cleared. */
  MPLine lines[MP_LINES];	/* See MPLine. */
  struct MPRec *rec;		/* The trace being compiled (MPRec), */
  struct MPRec *recon;		/* rec while its hooks record, else NULL, */
  struct MPTraceMap **tmaps;	/* and each trace's positions, by number */
  uint32_t ntmaps;		/* (entries in tmaps). */
#endif
} MemProf;

/*
** Sampling: one bit per hash of a prototype's address, set when a set or
** cache of the profiler takes the prototype in (announced, named by a
** node, a call name cached). A new prototype whose bit is clear has
** nothing of an old one at its address to forget (lj_memprof_addproto):
** a program that loads code all the time and samples little of it pays
** a load and a test per prototype.
*/
#define MP_PTMARKS	32768	/* Bits. */

static LJ_AINLINE uint32_t mp_ptmarkidx(const void *pt)
{
  uintptr_t u = (uintptr_t)pt;
  return (uint32_t)((u >> 4) ^ (u >> 19)) & (MP_PTMARKS - 1);
}

static LJ_AINLINE void mp_ptmark(MemProf *mp, const void *pt)
{
  if (mp->ptmarks != NULL) {
    uint32_t i = mp_ptmarkidx(pt);
    mp->ptmarks[i >> 6] |= (uint64_t)1 << (i & 63);
  }
}

/* 1 if pt may be in a set or cache (always, without sampling). */
static LJ_AINLINE int mp_ptmarked(const MemProf *mp, const void *pt)
{
  uint32_t i = mp_ptmarkidx(pt);
  return mp->ptmarks == NULL || ((mp->ptmarks[i >> 6] >> (i & 63)) & 1);
}

/*
** The running profiler of a VM, or NULL. g->memprof is the newest state;
** a stopped one stays as a pass-through until the VM is gone (see mp_stop).
*/
static LJ_AINLINE MemProf *mp_get(global_State *g)
{
  MemProf *mp = (MemProf *)g->memprof;
  return mp != NULL && mp->active ? mp : NULL;
}

/*
** The VM's thread enters and leaves the profiler's buffer: busy tells
** ljmprof_seal, on another thread, that this one is inside; sealed, read
** after busy is set, that the stream was ended there (then the buffer is
** not to be touched). busy is a plain counter: the sealing thread's
** membarrier orders the pair (an asymmetric Dekker), so the allocation
** path pays no fence. Returns 0 if sealed. Always pair with mp_leave.
*/
static LJ_AINLINE int mp_enter(MemProf *mp)
{
  /* busy is not volatile, so that each way is one add to memory, not a
  ** load, an add and a store: the compiler barriers keep it in place, and
  ** ljmprof_seal reads it as volatile. */
  mp->busy++;
  mp_compiler_barrier();
  return !mp->sealed;
}

static LJ_AINLINE void mp_leave(MemProf *mp)
{
  mp_compiler_barrier();
  mp->busy--;
}


/* -- Sets of keys (lj_memprof_set.c) ------------------------------------ */

/*
** The sets of the profiler (the prototypes and trace call sites that
** stack nodes name, the sampled blocks, the prototypes and traces a
** sampled stream has announced) are one table: open addressing, linear
** probing, at most half full, deletion by backward shift. An entry is a
** 64-bit word, 0 when free; its bits in kmask are its key, the others
** its owner's (a prototype's generation, a site without a name). The
** array is made at the first entry. The node table, whose entries are
** structs and which drops dead nodes as it grows, has its own.
*/
typedef struct MPSet {
  uint64_t *e;			/* Entries, NULL until the first. */
  uint32_t mask, n;		/* Slots - 1, entries in use. */
  uint64_t kmask;		/* An entry's key bits. */
  uint32_t min;			/* Slots of the first array. */
} MPSet;

static LJ_AINLINE uint32_t mp_sethash(uint64_t key)
{
  uint64_t h = key * 0x9e3779b97f4a7c15ull;
  return (uint32_t)(h >> 32) ^ (uint32_t)h;
}

/*
** The slot of key's entry, or the free slot it would take; s has an
** array. kmask is s->kmask: a constant where the caller knows it, so
** that the probe compares with no load.
*/
static LJ_AINLINE uint32_t mp_setslot(const MPSet *s, uint64_t key,
				      uint64_t kmask)
{
  uint32_t i = mp_sethash(key) & s->mask;
  while (s->e[i] && (s->e[i] & kmask) != key) i = (i + 1) & s->mask;
  return i;
}

/* The entry of key, or 0. */
static LJ_AINLINE uint64_t mp_setget(const MPSet *s, uint64_t key,
				     uint64_t kmask)
{
  return s->e ? s->e[mp_setslot(s, key, kmask)] : 0;
}

/* The slot of key's entry, or -1. */
static LJ_AINLINE int64_t mp_setfind(const MPSet *s, uint64_t key,
				     uint64_t kmask)
{
  uint32_t i;
  if (s->e == NULL) return -1;
  i = mp_setslot(s, key, kmask);
  return s->e[i] ? (int64_t)i : -1;
}

LJ_FUNC void lj_memprof_setinit(MPSet *s, uint64_t kmask, uint32_t min);
/* Twice the slots (min for the first array). 0 if out of memory. */
LJ_FUNC int lj_memprof_setgrow(MPSet *s);

/* The entry of key, or the free one it takes, counted (the caller fills
** it: key in the kmask bits). NULL if out of memory. Without an array,
** mask is 0: the first entry makes one. */
static LJ_AINLINE uint64_t *mp_setput(MPSet *s, uint64_t key, uint64_t kmask)
{
  uint32_t i;
  if (LJ_UNLIKELY(2 * (s->n + 1) > s->mask + 1) && !lj_memprof_setgrow(s))
    return NULL;
  i = mp_setslot(s, key, kmask);
  if (!s->e[i]) s->n++;
  return &s->e[i];
}

LJ_FUNC void lj_memprof_setdel(MPSet *s, uint32_t i);
LJ_FUNC void lj_memprof_setclear(MPSet *s);
LJ_FUNC void lj_memprof_setfree(MPSet *s);

/* -- Writing the stream ------------------------------------------------ */

/* An address with new high bits (lj_memprof_wbuf.c). */
LJ_FUNC uint8_t *lj_memprof_addrmiss(MemProf *mp, uint8_t *p, uint64_t v);

/*
** ULEB128. Fast paths for the common cases: small sizes and line numbers
** (one byte), and user-space addresses (42 to 48 bits: seven bytes).
*/
static LJ_AINLINE uint8_t *mp_uleb(uint8_t *p, uint64_t v)
{
  if (LJ_LIKELY(v < 0x80)) {
    *p = (uint8_t)v;
    return p + 1;
  }
  if (LJ_LIKELY(v - ((uint64_t)1 << 42) <
		((uint64_t)1 << 49) - ((uint64_t)1 << 42))) {
    p[0] = (uint8_t)(v | 0x80);
    p[1] = (uint8_t)((v >> 7) | 0x80);
    p[2] = (uint8_t)((v >> 14) | 0x80);
    p[3] = (uint8_t)((v >> 21) | 0x80);
    p[4] = (uint8_t)((v >> 28) | 0x80);
    p[5] = (uint8_t)((v >> 35) | 0x80);
    p[6] = (uint8_t)(v >> 42);
    return p + 7;
  }
  for (; v >= 0x80; v >>= 7)
    *p++ = (uint8_t)(v | 0x80);
  *p++ = (uint8_t)v;
  return p;
}

/* A ULEB128 that mp_uleb wrote, read back into *v. */
static LJ_AINLINE const uint8_t *mp_unuleb(const uint8_t *p, uint64_t *v)
{
  uint64_t r = 0;
  int sh = 0;
  for (; *p & 0x80; p++, sh += 7)
    r |= (uint64_t)(*p & 0x7f) << sh;
  *v = r | (uint64_t)*p << sh;
  return p + 1;
}

/*
** ULEB128 of an address. Most addresses of a heap share their bits from
** 21 up, and so their ULEB128 from byte 3 on: the last such bytes are
** kept, and an address with the same high bits only spreads its low 21
** bits over three bytes. The word written may reach past the value, into
** the room an event has (MP_EVMAX); the next field or event overwrites it.
*/
#define MP_ADDRSHIFT	21

#if LJ_LE
static LJ_AINLINE uint8_t *mp_addrhit(MemProf *mp, uint8_t *p, uint64_t v)
{
  uint64_t w = (v & 0x7f) | ((v << 1) & 0x7f00) | ((v << 2) & 0x7f0000) |
	       mp->addrhigh;
  memcpy(p, &w, sizeof(w));
  return p + mp->addrlen;
}
#endif

static LJ_AINLINE uint8_t *mp_addr(MemProf *mp, uint8_t *p, uint64_t v)
{
#if LJ_LE
  if (LJ_LIKELY((v >> MP_ADDRSHIFT) == mp->addrkey))
    return mp_addrhit(mp, p, v);
  return lj_memprof_addrmiss(mp, p, v);
#else
  UNUSED(mp);
  return mp_uleb(p, v);
#endif
}

/* The output buffer and time marks (lj_memprof_wbuf.c). */
LJ_FUNC void lj_memprof_flush(MemProf *mp);
LJ_FUNC void lj_memprof_makeroom(MemProf *mp);
LJ_FUNC uint64_t lj_memprof_clock(void);
LJ_FUNC void lj_memprof_timemark(MemProf *mp, int force);
LJ_FUNC void lj_memprof_putu(MemProf *mp, uint64_t v);
LJ_FUNC void lj_memprof_putbyte(MemProf *mp, uint8_t b);
LJ_FUNC void lj_memprof_putstr(MemProf *mp, const char *s, size_t len);
LJ_FUNC void lj_memprof_puthdr(MemProf *mp, uint8_t m2);
LJ_FUNC void lj_memprof_putinfo(MemProf *mp, uint64_t key, uint64_t value);

/* Make room for one header and a few ULEB128 values. */
static LJ_AINLINE void mp_reserve(MemProf *mp)
{
  if (LJ_UNLIKELY(mp->pos > mp->lim)) lj_memprof_makeroom(mp);
}

/* The next look at the clock: MP_TICKBYTES on, or at the real limit. */
static LJ_AINLINE void mp_ticklim(MemProf *mp)
{
  mp->lim = mp->hardlim - mp->pos > mp->tickbytes ? mp->pos + mp->tickbytes :
						   mp->hardlim;
}

/* -- Reading frames ---------------------------------------------------- */

/* The VM's frames are read without trusting any slot: each read is
** checked first (see "Attribution" in lj_memprof_event.c). */

/* Is f a possible frame of L: above the bottom frame, inside the stack? */
static LJ_AINLINE int mp_inframe(lua_State *L, cTValue *f)
{
  cTValue *st = tvref(L->stack);
  return f > st + LJ_FR2 && f < st + L->stacksize &&
	 ((uintptr_t)f - (uintptr_t)st) % sizeof(TValue) == 0;
}

/* The function of frame f, or NULL if the slot does not hold one. */
LJ_FUNC GCfunc *lj_memprof_framefunc(lua_State *L, cTValue *f);

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

#if !LJ_FR2
/* Without LJ_FR2: the Lua function at slot f, which may hold a double
** instead (a guess, not a frame reached by a link), if its bytecode holds
** pc, every read checked first (lj_memprof_event.c). */
LJ_FUNC GCfunc *lj_memprof_guessfunc(lua_State *L, cTValue *f,
				     const BCIns *pc);
#endif

/*
** The Lua caller of frame nf (link pc) at pf (where the last stack or a
** hint had it): the same check as mp_luacaller's, for one distance. NULL
** if not.
*/
static LJ_AINLINE cTValue *mp_callerat(lua_State *L, cTValue *nf,
				       const BCIns *pc, cTValue *pf)
{
  GCfunc *fn;
  if (pf == NULL || pf >= nf ||
#if LJ_FR2
      (fn = lj_memprof_framefunc(L, pf)) == NULL ||
      !isluafunc(fn) || !mp_pcin(funcproto(fn), pc) ||
#else
      (fn = lj_memprof_guessfunc(L, pf, pc)) == NULL ||
#endif
      (ptrdiff_t)bc_a(pc[-1]) != (nf - pf) - 1 - LJ_FR2)
    return NULL;
  return pf;
}

#if !LJ_FR2
/*
** Without LJ_FR2 a frame's slot holds its function and its link in one
** TValue: a built-in that writes a boolean over its own function slot
** (coroutine.resume of a dead or running coroutine, before it makes its
** error message) writes over the link too, as the boolean's tag. The VM
** saved that link in the C frame before it called the built-in's fallback
** (SAVE_PC). For the top frame f only: the Lua return PC from there, or
** NULL (the PC is checked by whoever follows it, as any link is).
*/
static LJ_AINLINE const BCIns *mp_lostlink(lua_State *L, cTValue *f)
{
  void *cf;
  const BCIns *pc;
  if (f != L->base - 1 || (itype(f) != LJ_TFALSE && itype(f) != LJ_TTRUE) ||
      (cf = cframe_raw(L->cframe)) == NULL ||
      (void *)cframe_pc(cf) == (void *)cframe_L(cf) ||
      (pc = cframe_pc(cf)) == NULL || ((uintptr_t)pc & FRAME_TYPE) != FRAME_LUA)
    return NULL;
  return pc;
}
#endif

/* The Lua caller of frame nf (link pc), where its hint says first. */
LJ_FUNC cTValue *lj_memprof_luacallerhint(MemProf *mp, lua_State *L,
					  cTValue *nf, const BCIns *pc);

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

/* -- Symbols (lj_memprof_symtab.c) --------------------------------------- */

/* A prototype's or trace's symbol: in the start table (ev 0) or as an
** event; every live one, for the start table. */
LJ_FUNC void lj_memprof_symproto(MemProf *mp, GCproto *pt, int ev);
#if LJ_HASJIT
LJ_FUNC void lj_memprof_symtrace(MemProf *mp, struct GCtrace *T, int ev);
#endif
LJ_FUNC void lj_memprof_dumpvm(MemProf *mp);
/* Name the C function at addr in the stream, if it is not yet. */
LJ_FUNC void lj_memprof_cfunc(MemProf *mp, uintptr_t addr);


/* -- Events and the allocator wrappers (lj_memprof_event.c) -------------- */

/* The VM's allocator while profiling: every event, every event with its
** stack, or a sample (lj_memprof_sample.c). */
LJ_FUNC void *lj_memprof_allocf(void *ud, void *ptr, size_t osize,
				size_t nsize);
LJ_FUNC void *lj_memprof_stackallocf(void *ud, void *ptr, size_t osize,
				     size_t nsize);
LJ_FUNC void *lj_memprof_sampleallocf(void *ud, void *ptr, size_t osize,
				      size_t nsize);

/* The wrapper of the VM's allocator for the profiler's mode. */
static LJ_AINLINE lua_Alloc mp_wrapper(const MemProf *mp)
{
  return mp->smp ? lj_memprof_sampleallocf :
	 mp->depth ? lj_memprof_stackallocf : lj_memprof_allocf;
}

/* Is the profiler's wrapper the VM's allocator (not buried by the host's)? */
static LJ_AINLINE int mp_ontop(global_State *g, MemProf *mp)
{
  return (g->allocf == lj_memprof_allocf ||
	  g->allocf == lj_memprof_stackallocf ||
	  g->allocf == lj_memprof_sampleallocf) && g->allocd == (void *)mp;
}

/* An event, the buffer checked first (record), or with room in it: with
** its stack (stackevent: 0 if not written) or its leaf location. */
LJ_FUNC void lj_memprof_record(MemProf *mp, uint8_t ev, void *optr,
			       size_t osize, void *nptr, size_t nsize);
LJ_FUNC int lj_memprof_stackevent(MemProf *mp, uint8_t ev, void *optr,
				  size_t osize, void *nptr, size_t nsize);
LJ_FUNC void lj_memprof_event(MemProf *mp, uint8_t ev, void *optr,
			      size_t osize, void *nptr, size_t nsize);
/* Before an event past the buffer's limit: 0 if halted. */
LJ_FUNC int lj_memprof_full(MemProf *mp);
/* An allocator call at the safe point (the poll flag moved). */
LJ_FUNC void *lj_memprof_pollalloc(MemProf *mp, void *ptr, size_t osize,
				   size_t nsize);

/* -- Sampling (lj_memprof_sample.c) -------------------------------------- */

LJ_FUNC int lj_memprof_sampleinit(MemProf *mp, const ljmprof_opt *opt);
LJ_FUNC void lj_memprof_samplefree(MemProf *mp);
LJ_FUNC uint64_t lj_memprof_samplemean(const MemProf *mp);

/* A sampled stream announces a prototype or trace when a sample first
** names it: seen (announced), announce (if not yet), unseen (a new one
** in its place). */
LJ_FUNC void lj_memprof_protoseen(MemProf *mp, GCproto *pt);
LJ_FUNC void lj_memprof_announceproto(MemProf *mp, GCproto *pt);
LJ_FUNC void lj_memprof_unseenproto(MemProf *mp, GCproto *pt);
LJ_FUNC void lj_memprof_announcetrace(MemProf *mp, uint64_t traceno);
#if LJ_HASJIT
LJ_FUNC void lj_memprof_traceseen(MemProf *mp, struct GCtrace *T);
LJ_FUNC void lj_memprof_unseentrace(MemProf *mp, uint32_t traceno);
#endif

/* A free from a trace names it (as the quick path does): announced first,
** if need be. */
static LJ_AINLINE void mp_freetrace(MemProf *mp)
{
#if LJ_HASJIT
  if (mp->g->vmstate > 0)
    lj_memprof_announcetrace(mp, (uint64_t)mp->g->vmstate);
#else
  UNUSED(mp);
#endif
}

/* -- The line inside compiled code (lj_memprof_trace.c) ------------------- */

#if MP_TRACELINES
/* Where the call of trace st, on the C frame cf, leaves its return
** address, kept as the last one read; 0 if not known. */
LJ_FUNC uintptr_t lj_memprof_lineslot(MemProf *mp, int32_t st, uintptr_t cf);
/* Entry e filled for the call site of trace st at return address ra. */
LJ_FUNC const MPLine *lj_memprof_linemiss(MemProf *mp, int32_t st,
					  uintptr_t ra, MPLine *e);
/* Trace traceno was announced: its number may be an old one's, whose
** entries go (all of them: not worth a scan). A number above those of
** the entries (new traces take the lowest free one) has none. */
static LJ_AINLINE void mp_linesclear(MemProf *mp, int32_t traceno)
{
  mp->linest = 0;
  if (traceno <= mp->linesmax) {  /* Only lj_memprof_linemiss fills one. */
    mp->linesmax = 0;
    memset(mp->lines, 0, sizeof(mp->lines));
  }
}
/* Trace T was compiled: keep the positions its compilation recorded. */
LJ_FUNC void lj_memprof_tracemap(MemProf *mp, struct GCtrace *T);
/* Drop what the compiled traces' positions hold. */
LJ_FUNC void lj_memprof_tracemapsfree(MemProf *mp);
/* The frames recorded for the code at ra in trace T, innermost first, down
** to the frame at the trace's base there, which must be of prototype pt:
** into pts and pcs (the innermost at the instruction after the recorded
** one, each other at its return PC), at most max of them. 0 if not
** recorded, or they do not end at pt. */
LJ_FUNC uint32_t lj_memprof_traceframes(MemProf *mp, struct GCtrace *T,
					uintptr_t ra, const GCproto *pt,
					const GCproto **pts,
					const BCIns **pcs, uint32_t max);

/*
** The location of an allocation from trace st (see MPLine), or NULL if
** its call site cannot be read. Only the word where the trace's call left
** its return address is read, which lies in this thread's C stack above
** this frame.
*/
static LJ_AINLINE const MPLine *mp_traceline(MemProf *mp, int32_t st)
{
  lua_State *L = (lua_State *)gcref(mp->g->mem_L);
  uintptr_t cf, slot, ra, sp;
  MPLine *e;
  if (LJ_UNLIKELY(L == NULL)) return NULL;
  cf = (uintptr_t)L->cframe;
  if (LJ_LIKELY(st == mp->linest && cf == mp->linecf))
    slot = mp->lineslot;
  else if ((slot = lj_memprof_lineslot(mp, st, cf)) == 0)
    return NULL;
  __asm__("mov %%rsp, %0" : "=r" (sp));  /* No frame pointer needed. */
  if (slot <= sp) return NULL;
  ra = *(const uintptr_t *)slot;
  e = &mp->lines[mp_rahash(ra, MP_LINESLOG)];
  if (LJ_LIKELY(e->ra == ra && e->st == st))
    return e;
  return lj_memprof_linemiss(mp, st, ra, e);
}
#else
#define mp_linesclear(mp, traceno)	UNUSED(mp)
#define lj_memprof_tracemap(mp, T)	UNUSED(mp)
#define lj_memprof_tracemapsfree(mp)	UNUSED(mp)
#endif

/* -- The allocator pair (lj_memprof_range.c) ----------------------------- */

/* The VM's counter is patch 0011's: without it, the wrappers alone. */
#ifdef LJ_MEMPROF_COUNTER
#define MP_COUNTER	1
#define mp_setleft(g, v)	((g)->mem_left = (v))
#else
#define MP_COUNTER	0
#define mp_setleft(g, v)	((void)(g))
#endif
/* The counter of a profiler that sees every event: always below zero, so
** that lj_memprof_alloc stores the allocating thread. */
#define MP_ALWAYS	(INT64_MIN / 2)

#if MP_COUNTER && LJ_GC64 && !defined(LUAJIT_USE_SYSMALLOC)
#define MP_ARENA	1
#else
#define MP_ARENA	0
#endif

#if MP_ARENA
/* Bytes to the next sample, drawn (for the VM's counter). */
LJ_FUNC int64_t lj_memprof_nextsample(MemProf *mp);
#endif

/* The state of the VM's allocator if it is LuaJIT's own, else NULL. */
LJ_FUNC void *lj_memprof_ownalloc(global_State *g);

/* Put the profiler's allocator on the VM, take it off. */
LJ_FUNC void lj_memprof_hook(global_State *g, MemProf *mp);
LJ_FUNC void lj_memprof_unhook(global_State *g, MemProf *mp);
/* The VM is gone: its sampled blocks' arena with it. */
LJ_FUNC void lj_memprof_rangefree(MemProf *mp);

/* -- Heap snapshots (lj_memprof_heap.c) ---------------------------------- */


/* Every block the VM holds, as allocations, between INFO SNAPSHOT value
** (LJM_SNAPSHOT_START or LJM_SNAPSHOT_LATER) and LJM_SNAPSHOT_END. */
LJ_FUNC void lj_memprof_heapsnap(MemProf *mp, uint64_t value, int graph);

/* -- The heap graph (lj_memprof_graph.c) ---------------------------------- */

/* The references between the VM's objects, inside a snapshot. */
LJ_FUNC void lj_memprof_graph(MemProf *mp);

#endif
