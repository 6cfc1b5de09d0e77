/*
** Memory profiler: trace call sites, the line inside compiled code.
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
**
** With call stacks, an allocation from a trace has a TRACE frame whose
** site (a snapshot of the trace and the kind of helper called) names the
** Lua frames and lines the trace inlined there, announced once as a
** symbol event. Without, it is charged to the line itself (mp_traceline
** in lj_memprof_int.h), which the compiler's hooks (patch 0012) record
** for the traces compiled while profiling. Only JIT-compiled code has
** sites; only x86-64 with GC64 reads them yet (lj_memprof_stack.h has
** the fast path, mp_tracesite).
** Not to be confused with heap snapshots (lj_memprof_heap.c): the
** snapshots here are the JIT's (lj_snap.c).
*/

#define lj_memprof_trace_c
#define LUA_CORE

#include "lj_obj.h"
#include "lj_memprof.h"

#if LJ_HASMEMPROF && LJ_HASJIT

#include <stdlib.h>
#include <string.h>

#include "lj_gc.h"
#include "lj_frame.h"
#include "lj_bc.h"
#include "lj_debug.h"
#include "lj_dispatch.h"
#include "lj_jit.h"
#include "lj_trace.h"
#include "lj_ircall.h"
#include "lj_target.h"
#include "lj_memprof_format.h"
#include "lj_memprof_int.h"
#include "lj_memprof_stack.h"

/*
** The array p of *szp items of sz bytes, grown to reach index i (doubling
** from 64, the new items zeroed): the new pointer, or NULL if out of
** memory (p is then unchanged). Tables by trace number and by IR ref.
*/
static LJ_NOINLINE void *mp_growslow(void *p, uint32_t *szp, uint32_t i,
				     size_t sz)
{
  uint32_t n = *szp ? *szp : 64;
  char *q;
  while (n <= i) n *= 2;
  if ((q = (char *)realloc(p, (size_t)n * sz)) == NULL) return NULL;
  memset(q + (size_t)*szp * sz, 0, (size_t)(n - *szp) * sz);
  *szp = n;
  return q;
}

/* The hooks call this once per IR instruction or bytecode recorded: the
** test inline, the call only when the array must grow. */
static LJ_AINLINE void *mp_growto(void *p, uint32_t *szp, uint32_t i,
				  size_t sz)
{
  return LJ_LIKELY(i < *szp) ? p : mp_growslow(p, szp, i, sz);
}

/*
** Only the code of an instruction that calls into the VM can hold the
** return address a lookup asks for (mp_callret checks it is right after
** a call to a helper of the IR call table). Those are the allocations
** (IRM_A in lj_ir.h's modes: TNEW, TDUP, CNEW, XSNEW, BUFSTR, CALLA) and
** the others that asm_setup_regsp (lj_asm.c) gives C calls: the calls,
** SNEW, CNEWI, NEWREF, BUFPUT, TOSTR, STRTO, OBAR, DIV and MOD (of
** integers), POW, LDEXP, FPMATH and ALEN (lj_tab_len), plus the GC checks of
** LOOP and GCSTEP (asm_gc_check) and HIOP (a 32-bit call's high half).
** The code of any other instruction goes on the run below it (it is never
** looked up): one run per position of calls, not per instruction. The
** assembler's hook site (patch 0012) tests this table, so that the others
** make no call (lj_memprof_asmins).
*/
#define MP_IRCALLOP(o) \
  ((o) == IR_LOOP || (o) == IR_GCSTEP || (o) == IR_HIOP || \
   (o) == IR_CALLN || (o) == IR_CALLA || (o) == IR_CALLL || \
   (o) == IR_CALLS || (o) == IR_CALLXS || (o) == IR_SNEW || \
   (o) == IR_CNEWI || (o) == IR_NEWREF || (o) == IR_BUFPUT || \
   (o) == IR_TOSTR || (o) == IR_STRTO || (o) == IR_OBAR || \
   (o) == IR_DIV || (o) == IR_MOD || (o) == IR_POW || (o) == IR_LDEXP || \
   (o) == IR_FPMATH || (o) == IR_ALEN)
LJ_DATADEF const uint8_t lj_memprof_ircall[IR__MAX] = {
#define MPIRCALL(name, m, m1, m2) \
  (uint8_t)((IRM_##m & IRM_S) == IRM_A || MP_IRCALLOP(IR_##name)),
IRDEF(MPIRCALL)
#undef MPIRCALL
};

/* -- Trace generations ---------------------------------------------------- */

#define MP_SITEGENS	0x7fffff  /* Generations a site's key tells apart. */

void lj_memprof_tracenew(MPStack *s, uint32_t traceno)
{
  /* The caches are keyed without generation. */
  memset(s->tnodes, 0, sizeof(s->tnodes));
  mp_quickoff(&s->q);
#if LJ_TARGET_X64 && LJ_GC64
  memset(s->shints, 0, sizeof(s->shints));
#endif
  {
    uint32_t *t = (uint32_t *)mp_growto(s->tracegen, &s->ntracegen, traceno,
					sizeof(uint32_t));
    if (t == NULL) {  /* Old sites could pass for the new trace's: none. */
      s->nosites = 1;
      return;
    }
    s->tracegen = t;
  }
  if (++s->gens == 0) s->gens = 1;
  if (!(s->gens & MP_SITEGENS))  /* Keys wrap: name anew. */
    lj_memprof_setclear(&s->sites);
  s->tracegen[traceno] = s->gens;
}

/* -- Call sites ----------------------------------------------------------- */

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
#define MP_SNAP_CALLINFO	lj_ir_callinfo
#define MP_SNAP_LINE(pt, pos)	lj_debug_line((pt), (pos))
#include "lj_memprof_siteinfer.h"

#define MP_SITEKEY(gen, traceno, site) \
  ((uint64_t)((gen) & MP_SITEGENS) << 40 | (uint64_t)(traceno) << 24 | \
   (uint64_t)(site))

/* Recorded positions (below): the line of the code at ra in trace T;
** the frames of its entry ix. */
static int mp_mappos(MemProf *mp, GCtrace *T, uintptr_t ra,
		     const GCproto **pt, int32_t *line, uint32_t *ix);
static uint32_t mp_mapframes(MemProf *mp, GCtrace *T, uint32_t ix,
			     uint64_t *pts, uint64_t *lines);

/*
** A site whose innermost line was recorded (mp_mappos) is numbered by the
** run of machine code it lies in, above the sites of snapshots: two lines
** of one snapshot's code are two sites.
*/
#define MP_SITEREC	((uint32_t)1 << 22)

/* The site of trace T at return address ra, not in hint h: found, and
** announced if new; 0 if not known. */
LJ_NOINLINE uint32_t lj_memprof_sitemiss(MemProf *mp, GCtrace *T,
					 uintptr_t ra, MPSiteHint *h)
{
  MPStack *s = mp->stk;
  uint32_t id, gen = mp_tracegen(s, T->traceno), site = 0;
  /* A GC step is no line's: it stays the trace's. */
  if ((id = mp_callret(T, ra, (uintptr_t)G2GG(mp->g)->dispatch)) <
      IRCALL__MAX && id != IRCALL_lj_gc_step_jit) {
    SnapNo sn = mp_snapat(T, ra);
    int kind = mp_helperkind(id);
    uint64_t pts[MP_SITEMAX], lines[MP_SITEMAX];
    uint32_t n, i, ix;
    uint64_t *e;
    const GCproto *rpt = NULL;
    int32_t rline = -1;
    if (mp_mappos(mp, T, ra, &rpt, &rline, &ix) && ix < MP_SITEREC)
      site = MP_SITEREC + ix;  /* Recorded: the frames from the snapshot. */
    else
      site = sn * MP_KINDS + kind + 1, rpt = NULL;
    e = mp_setput(&s->sites, MP_SITEKEY(gen, T->traceno, site),
		  ~MP_SITENONE);
    if (e == NULL) {
      site = 0;
    } else if (*e == 0) {  /* New: named once, or marked as unnamed. */
      *e = MP_SITEKEY(gen, T->traceno, site);
      n = rpt != NULL ? mp_mapframes(mp, T, ix, pts, lines) : 0;
      if (n == 0)  /* Not recorded: the frames the snapshot holds. */
	n = mp_snaplines(G2J(mp->g), T, sn, kind, rpt, rline, pts, lines);
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

/* -- Positions recorded while a trace is compiled ------------------------- */

/*
** The recorder emits each IR instruction while it records one bytecode
** instruction, of the prototype it runs: what it emits from one call of
** lj_record_ins to the next comes from that instruction (a built-in it
** compiles from the call that calls it, as the interpreter charges it).
** The loop optimizer copies the instructions of the first iteration: a
** copy comes from where its original came from. The assembler turns each
** instruction into machine code, backwards, at final addresses. So a
** return address in a trace's code lies in the code of one instruction,
** whose position is known where the profiler saw it recorded: no guess.
** Kept per trace as runs of machine code with one (prototype, line).
*/
typedef struct MPRecPos {
  uint32_t ref;			/* The first IR instruction emitted */
  const BCIns *pc;		/* while recording this instruction of its */
} MPRecPos;			/* MPRecSeg's prototype, in its frames. */

/*
** The positions recorded in one frame (the same J->pt, J->L->base and
** J->framedepth: no call or return between) have the same prototype and
** frames below it: one segment, from its first position on to the next
** segment's, with those frames (MPRec.fr[fr0 ..], nfr of them;
** MP_NOFRAMES: not known) and pt (NULL: not known). The recorder's hook
** stores only the position; it walks the frames only when one changes.
*/
typedef struct MPRecSeg {
  const GCproto *pt;
  uint32_t pos0;
  uint32_t fr0, nfr;
} MPRecSeg;

/*
** A frame the trace inlined, below the one recorded: its prototype and
** the return PC into it. A position's frames go from its function's
** caller down to the trace's start frame, as the interpreter's stack
** holds them while the recorder runs in step with it.
*/
typedef struct MPRecFrame {
  const GCproto *pt;
  const BCIns *pc;
} MPRecFrame;

#define MP_NOFRAMES	(~(uint32_t)0)

/*
** The assembler keeps the machine code of each call (lj_memprof_ircall) with the
** instruction it comes from (a copy: its original; 0: not known);
** consecutive calls of one instruction are one. The map, once it is
** needed (mp_mapbuild), finds their positions (MPRec.pos[pos], or none if
** -1) and makes consecutive calls of one position one run, with the code
** of the instructions between them (which make no call).
*/
typedef struct MPAsmRun {
  int32_t pos;			/* The instruction, then its position, */
  uintptr_t lo, hi;		/* and the machine code. */
} MPAsmRun;

typedef struct MPRec {
  int active;			/* Recording a trace seen from its start. */
  int bad;			/* Out of memory: none for this trace. */
  int on;			/* active && !bad: the hooks' one test. */
  uint32_t loop;		/* Ref of IR_LOOP (0: none), once assembled. */
  uint32_t lastref;		/* The last call assembled. */
  MPRecPos *pos;		/* By ref, ascending. */
  uint32_t npos, szpos;
  uint16_t *copy;		/* copy[ref - REF_BIAS]: its original, or 0; */
  uint32_t szcopy, ncopy;	/* entries from ncopy on are 0. */
  MPAsmRun *runs;		/* The calls as assembled: descending */
  uint32_t nruns, szruns;	/* addresses. */
  MPRecFrame *fr;		/* The segments' frames, a segment */
  uint32_t nfr, szfr;		/* sharing the one before's if the same. */
  MPRecSeg *seg;		/* The segments, by ascending pos0. */
  uint32_t nseg, szseg;
  const GCproto *fpt;		/* The prototype, base and depth of the */
  const TValue *fbase;		/* last segment (NULL: none). */
  int32_t fdepth;
} MPRec;

typedef struct MPMapEntry {
  uint32_t ofs;			/* From this offset in the trace's code */
  int32_t line;			/* up to the next entry, this line */
  const GCproto *pt;		/* of this prototype (NULL: not known), */
  const BCIns *pc;		/* at this instruction of it, */
  uint32_t fr0, nfr;		/* in these frames (MPTraceMap.fr). */
} MPMapEntry;

/*
** A trace's map is built at the first lookup that needs it (mp_tmap): at
** the trace's end (lj_memprof_tracemap) only its runs, positions and
** frames are kept (runs != NULL), so that compiling a trace pays one copy,
** and a trace whose code never allocates never has its map built.
*/
typedef struct MPTraceMap {
  uint32_t n;			/* Entries, by ascending offset (not built
				** yet: the frames). */
  uint32_t nruns, npos;		/* Not built yet: the calls (NULL: */
  MPAsmRun *runs;		/* built) and positions as assembled, */
  const MPRecPos *pos;		/* after the header. */
  MPRecFrame *fr;		/* The recording's frames, after e[] (or pos). */
  const MPRecSeg *seg;		/* Not built yet: the segments, after fr. */
  uint32_t nseg;
  MPMapEntry e[1];
} MPTraceMap;

/* The trace being recorded, if its hooks record (MPRec.on): one test. */
static MPRec *mp_recget(jit_State *J)
{
  MemProf *mp = mp_get(J2G(J));
  return mp != NULL ? mp->recon : NULL;
}

/* Out of memory: nothing more of this trace. */
static void mp_recbad(jit_State *J, MPRec *r)
{
  MemProf *mp = mp_get(J2G(J));
  r->bad = 1, r->on = 0;
  if (mp != NULL) mp->recon = NULL;
}

void lj_memprof_recstart(jit_State *J)
{
  MemProf *mp = mp_get(J2G(J));
  MPRec *r;
  if (mp == NULL) return;
  if ((r = mp->rec) == NULL &&
      (r = mp->rec = (MPRec *)calloc(1, sizeof(MPRec))) == NULL)
    return;
  if (r->ncopy) memset(r->copy, 0, r->ncopy * sizeof(uint16_t));
  r->ncopy = 0;
  r->active = 1;
  r->bad = 0;
  r->on = 1;
  mp->recon = r;
  r->loop = 0;
  r->lastref = 0;  /* The first instruction assembled starts anew. */
  r->npos = r->nruns = r->nfr = r->nseg = 0;
  r->fbase = NULL;
  r->fpt = NULL;
}

/*
** A new segment from position ix: the frames below the one J->pc is in,
** down to the trace's start frame (J->framedepth of them), from the
** interpreter's stack, sharing the segment before's if they are the same.
** MP_NOFRAMES if a frame is not a Lua function's, or the trace returned
** below its start. 0 if no position is to be recorded: a built-in's
** instruction after the first position.
*/
static int mp_recframes(jit_State *J, MPRec *r, uint32_t ix)
{
  int32_t d = J->framedepth, k;
  cTValue *frame = J->L->base - 1;
  MPRecFrame *f;
  MPRecSeg *s;
  if (J->pt == NULL && ix)
    return 0;  /* A built-in: its Lua caller's call, recorded before it. */
  if ((s = (MPRecSeg *)mp_growto(r->seg, &r->szseg, r->nseg,
				 sizeof(MPRecSeg))) == NULL) {
    mp_recbad(J, r);
    return 0;
  }
  r->seg = s;
  s += r->nseg++;
  s->pt = r->fpt = J->pt;
  s->pos0 = ix;
  s->fr0 = r->nfr;
  s->nfr = MP_NOFRAMES;
  r->fbase = J->pt != NULL ? J->L->base : NULL;  /* A built-in: none. */
  r->fdepth = d;
  if (J->pt == NULL || d < 0 || d >= MP_SITEMAX) return 1;
  if ((f = (MPRecFrame *)mp_growto(r->fr, &r->szfr, r->nfr + (uint32_t)d,
				   sizeof(MPRecFrame))) == NULL)
    return 1;
  r->fr = f;
  f += r->nfr;
  for (k = 0; k < d; k++) {
    GCfunc *fn;
    if (!frame_islua(frame)) return 1;
    f[k].pc = frame_pc(frame);
    frame = frame_prevl(frame);
    fn = frame_func(frame);
    if (!isluafunc(fn)) return 1;
    f[k].pt = funcproto(fn);
  }
  s->nfr = (uint32_t)d;
  if (d == 0) return 1;  /* None to keep. */
  if (s != r->seg) {  /* The same as the segment before's? */
    const MPRecSeg *q = s - 1;
    if (q->nfr == s->nfr) {
      const MPRecFrame *g = &r->fr[q->fr0];
      for (k = 0; k < d; k++)
	if (g[k].pt != f[k].pt || g[k].pc != f[k].pc) break;
      if (k == d) {
	s->fr0 = q->fr0;
	return 1;
      }
    }
  }
  r->nfr += (uint32_t)d;
  return 1;
}

/*
** Each bytecode recorded appends its position, even if the one before
** emitted nothing (the same ref): mp_posix finds the last of those.
*/
void lj_memprof_recins(jit_State *J)
{
  MPRec *r = mp_recget(J);
  uint32_t n;
  MPRecPos *p;
  if (r == NULL) return;
  n = r->npos;
  if (LJ_UNLIKELY(J->pt != r->fpt || J->L->base != r->fbase ||
		  J->framedepth != r->fdepth) && !mp_recframes(J, r, n))
    return;  /* Else a call or return: a new segment. */
  if ((p = (MPRecPos *)mp_growto(r->pos, &r->szpos, n,
				 sizeof(MPRecPos))) == NULL) {
    mp_recbad(J, r);
    return;
  }
  r->pos = p;
  r->npos = n + 1;
  p += n;
  p->ref = J->cur.nins;
  p->pc = J->pc;
}

void lj_memprof_ircopy(jit_State *J, uint32_t ref, uint32_t ins)
{
  MPRec *r = mp_recget(J);
  uint32_t loop = J->chain[IR_LOOP], i = ref - REF_BIAS;
  uint16_t *c;
  if (r == NULL || loop == 0 || ref <= loop ||
      ins >= loop || ref >= J->cur.nins)
    return;  /* Not a copy (REF_DROP: none was made). */
  if ((c = (uint16_t *)mp_growto(r->copy, &r->szcopy, i,
				sizeof(uint16_t))) == NULL) {
    mp_recbad(J, r);
    return;
  }
  r->copy = c;
  if (r->copy[i] == 0) r->copy[i] = (uint16_t)ins;  /* CSE: the first. */
  if (i >= r->ncopy) r->ncopy = i + 1;
}

/* The index of the last position recorded at or before IR instruction
** ref, -1 if none (or ref is 0: a copy of no known instruction). */
static int32_t mp_posix(const MPRecPos *pos, uint32_t npos, uint32_t ref)
{
  uint32_t lo = 0, hi = npos;
  while (lo < hi) {
    uint32_t mid = (lo + hi) >> 1;
    if (pos[mid].ref <= ref) lo = mid + 1; else hi = mid;
  }
  return (int32_t)lo - 1;
}

/* The first call of this assembly (or the trace is assembled again,
** realigned). */
static LJ_NOINLINE void mp_asmstart(jit_State *J, MPRec *r)
{
  IRRef loop = J->chain[IR_LOOP];
  r->nruns = 0;
  r->loop = loop && loop < J->cur.nins && J->cur.ir[loop].o == IR_LOOP ?
	    loop : 0;
}

void lj_memprof_asmins(jit_State *J, uint32_t ref, const void *lo,
		       const void *hi)
{
  MPRec *r;
  MPAsmRun *u;
  uint32_t o = ref;
  /* Only a call's (lj_memprof_ircall, tested by the caller). */
  if ((r = mp_recget(J)) == NULL || lo >= hi)
    return;
  if (LJ_UNLIKELY(ref >= r->lastref)) mp_asmstart(J, r);
  r->lastref = ref;
  if (r->loop && ref > r->loop) {  /* A copy: its original's position. */
    uint32_t i = ref - REF_BIAS;
    o = i < r->szcopy ? r->copy[i] : 0;
  }
  if (r->nruns && (u = &r->runs[r->nruns - 1])->pos == (int32_t)o) {
    u->lo = (uintptr_t)lo;  /* The call above goes on down. */
    return;
  }
  if ((u = (MPAsmRun *)mp_growto(r->runs, &r->szruns, r->nruns,
				 sizeof(MPAsmRun))) == NULL) {
    mp_recbad(J, r);
    return;
  }
  r->runs = u;
  u += r->nruns++;
  u->pos = (int32_t)o;
  u->lo = (uintptr_t)lo;
  u->hi = (uintptr_t)hi;
}

/* The recorded position ix (mp_posix): its entry (with its frames),
** or NULL; *line its line. *lastix and *lastline: the position found
** before and its line: consecutive runs are mostly of one bytecode, so
** lj_debug_line runs about once per entry. */
static const MPRecPos *mp_recpos(const MPRecPos *rpos, int32_t ix,
				 const GCproto *t,
				 int32_t *line, int32_t *lastix,
				 int32_t *lastline)
{
  const MPRecPos *p;
  BCPos pos;
  if (ix < 0) return NULL;
  p = &rpos[ix];
  if (ix == *lastix) {
    *line = *lastline;  /* The run before's. */
    return p;
  }
  if (t == NULL || p->pc == NULL) return NULL;
  pos = proto_bcpos((GCproto *)t, p->pc);
  if (p->pc < proto_bc((GCproto *)t) || pos >= t->sizebc) return NULL;
  *line = lj_debug_line((GCproto *)t, pos);
  if (*line < 0) return NULL;
  *lastix = ix;
  *lastline = *line;
  return p;
}

/* The segment of position ix (one of nseg, the first from position 0). */
static const MPRecSeg *mp_segof(const MPRecSeg *seg, uint32_t nseg,
				uint32_t ix)
{
  uint32_t lo = 0, hi = nseg;
  while (lo < hi) {
    uint32_t mid = (lo + hi) >> 1;
    if (seg[mid].pos0 <= ix) lo = mid + 1; else hi = mid;
  }
  return lo ? &seg[lo - 1] : NULL;
}

/* The map of T from what was kept at its end (raw: mp_tmap), or NULL. */
static MPTraceMap *mp_mapbuild(MPTraceMap *raw, GCtrace *T)
{
  MPTraceMap *m;
  int32_t lastix = -1, lastline = 0;
  uint32_t i, n = 0;
  uintptr_t mc = (uintptr_t)T->mcode, end = 0;
  /* The calls' positions; consecutive calls of one position: one run. */
  for (i = 0; i < raw->nruns; i++) {
    MPAsmRun *u = &raw->runs[i];
    int32_t ix = mp_posix(raw->pos, raw->npos, (uint32_t)u->pos);
    if (n && raw->runs[n - 1].pos == ix) {
      raw->runs[n - 1].lo = u->lo;
    } else {
      raw->runs[n].lo = u->lo;
      raw->runs[n].hi = u->hi;
      raw->runs[n++].pos = ix;
    }
  }
  raw->nruns = n;
  n = 0;
  /* At most two entries a run: its position, and a gap after it; then
  ** the recording's frames. */
  m = (MPTraceMap *)malloc(sizeof(MPTraceMap) +
			   2 * raw->nruns * sizeof(MPMapEntry) +
			   raw->n * sizeof(MPRecFrame));
  if (m == NULL) return NULL;
  m->runs = NULL;
  m->pos = NULL;
  m->seg = NULL;
  m->nruns = m->npos = m->nseg = 0;
  m->fr = (MPRecFrame *)&m->e[2 * raw->nruns];
  if (raw->n) memcpy(m->fr, raw->fr, raw->n * sizeof(MPRecFrame));
  for (i = raw->nruns; i-- > 0; ) {  /* Ascending addresses. */
    const MPAsmRun *u = &raw->runs[i];
    const MPRecPos *p;
    const MPRecSeg *s = NULL;
    uint32_t fr0 = 0, nfr = MP_NOFRAMES;
    int32_t line = 0;
    if (u->lo < mc || u->hi > mc + T->szmcode) continue;
    if (u->pos >= 0)
      s = mp_segof(raw->seg, raw->nseg, (uint32_t)u->pos);
    p = mp_recpos(raw->pos, u->pos, s ? s->pt : NULL, &line, &lastix,
		  &lastline);
    if (p) fr0 = s->fr0, nfr = s->nfr;
    if (n && end != u->lo) {  /* A gap (no call): not known. */
      m->e[n].ofs = (uint32_t)(end - mc);
      m->e[n].pt = NULL;
      m->e[n].pc = NULL;
      m->e[n].nfr = MP_NOFRAMES;
      m->e[n++].line = 0;
    }
    if (n == 0 || m->e[n-1].pt != (p ? s->pt : NULL) ||
	m->e[n-1].line != line ||
	(p && (m->e[n-1].fr0 != fr0 || m->e[n-1].nfr != nfr))) {
      m->e[n].ofs = (uint32_t)(u->lo - mc);
      m->e[n].pt = p ? s->pt : NULL;
      m->e[n].pc = p ? p->pc : NULL;
      m->e[n].fr0 = fr0;
      m->e[n].nfr = nfr;
      m->e[n++].line = p ? line : 0;
    }
    end = u->hi;
  }
  if (n == 0) {
    free(m);
    return NULL;
  }
  /* Past the last run: not known. */
  m->e[n].ofs = (uint32_t)(end - mc);
  m->e[n].pt = NULL;
  m->e[n].pc = NULL;
  m->e[n].nfr = MP_NOFRAMES;
  m->e[n++].line = 0;
  m->n = n;
  return m;
}

/* T's map, built at the first lookup; NULL if none. */
static const MPTraceMap *mp_tmap(MemProf *mp, GCtrace *T)
{
  MPTraceMap *m = T->traceno < mp->ntmaps ? mp->tmaps[T->traceno] : NULL;
  if (m != NULL && m->runs != NULL) {
    mp->tmaps[T->traceno] = mp_mapbuild(m, T);
    free(m);
    m = mp->tmaps[T->traceno];
  }
  return m;
}

void lj_memprof_tracemap(MemProf *mp, GCtrace *T)
{
  MPRec *r = mp->rec;
  MPTraceMap *m;
  uint32_t no = T->traceno;
  {
    MPTraceMap **t = (MPTraceMap **)mp_growto(mp->tmaps, &mp->ntmaps, no,
					      sizeof(*t));
    if (t == NULL) goto done;
    mp->tmaps = t;
  }
  free(mp->tmaps[no]);  /* An older trace of that number. */
  mp->tmaps[no] = NULL;
  if (r == NULL || !r->active || r->bad || r->nruns == 0) goto done;
  /* Kept as they are: the map is built at the first lookup (mp_tmap). */
  m = (MPTraceMap *)malloc(sizeof(MPTraceMap) +
			   r->nruns * sizeof(MPAsmRun) +
			   r->npos * sizeof(MPRecPos) +
			   r->nfr * sizeof(MPRecFrame) +
			   r->nseg * sizeof(MPRecSeg));
  if (m != NULL) {
    MPAsmRun *u = (MPAsmRun *)&m->e[0];
    MPRecPos *p = (MPRecPos *)(u + r->nruns);
    MPRecFrame *f = (MPRecFrame *)(p + r->npos);
    MPRecSeg *g = (MPRecSeg *)(f + r->nfr);
    memcpy(u, r->runs, r->nruns * sizeof(MPAsmRun));
    if (r->npos) memcpy(p, r->pos, r->npos * sizeof(MPRecPos));
    if (r->nfr) memcpy(f, r->fr, r->nfr * sizeof(MPRecFrame));
    if (r->nseg) memcpy(g, r->seg, r->nseg * sizeof(MPRecSeg));
    m->seg = g;
    m->nseg = r->nseg;
    m->n = r->nfr;  /* Not built yet: the frames. */
    m->nruns = r->nruns;
    m->npos = r->npos;
    m->runs = u;
    m->pos = p;
    m->fr = f;
    mp->tmaps[no] = m;
  }
done:
  if (r != NULL) r->active = r->on = 0;
  mp->recon = NULL;
}

void lj_memprof_tracemapsfree(MemProf *mp)
{
  uint32_t i;
  MPRec *r = mp->rec;
  for (i = 0; i < mp->ntmaps; i++) free(mp->tmaps[i]);
  free(mp->tmaps);
  mp->tmaps = NULL;
  mp->ntmaps = 0;
  if (r != NULL) {
    free(r->pos);
    free(r->copy);
    free(r->runs);
    free(r->fr);
    free(r->seg);
    free(r);
    mp->rec = mp->recon = NULL;
  }
}

/* The recorded position of the code at ra in trace T: 1 with *pt, *line. */
static int mp_mappos(MemProf *mp, GCtrace *T, uintptr_t ra,
		     const GCproto **pt, int32_t *line, uint32_t *ix)
{
  const MPTraceMap *m = mp_tmap(mp, T);
  uint32_t ofs = (uint32_t)(ra - 1 - (uintptr_t)T->mcode), lo = 0, hi;
  if (m == NULL) return 0;
  hi = m->n;
  while (lo < hi) {
    uint32_t mid = (lo + hi) >> 1;
    if (m->e[mid].ofs <= ofs) lo = mid + 1; else hi = mid;
  }
  if (lo == 0 || m->e[lo-1].pt == NULL) return 0;
  *pt = m->e[lo-1].pt;
  *line = m->e[lo-1].line;
  *ix = lo - 1;
  return 1;
}

/*
** The frames of entry ix of T's map, innermost first, into pts and lines
** as mp_snaplines gives them: the recorded line, then each frame below at
** its call of the one above, down to the frame at the trace's base there:
** its start frame (its root trace's), or, once it returned below its
** start, the frame it returned to, which is then the frame at its base at
** run time too (g->jit_base follows the trace's base; the return checked
** its PC). That frame must be of the root trace's start prototype, or of
** T's own (a side trace that began after its root returned below): the
** reader takes a site only over a frame of the trace's start prototype,
** at its start line. 0 if they were not recorded, or do not end there.
*/
static uint32_t mp_mapframes(MemProf *mp, GCtrace *T, uint32_t ix,
			     uint64_t *pts, uint64_t *lines)
{
  const MPTraceMap *m = mp->tmaps[T->traceno];
  const MPMapEntry *e = &m->e[ix];
  jit_State *J = G2J(mp->g);
  GCtrace *R = T->root ? traceref(J, T->root) : T;
  uint32_t k;
  const GCproto *last;
  if (e->nfr == MP_NOFRAMES || e->nfr + 1 > MP_SITEMAX || R == NULL)
    return 0;
  last = e->nfr ? m->fr[e->fr0 + e->nfr - 1].pt : e->pt;
  if (last != &gcref(R->startpt)->pt && last != &gcref(T->startpt)->pt)
    return 0;
  pts[0] = (uintptr_t)e->pt;
  lines[0] = (uint64_t)e->line;
  for (k = 0; k < e->nfr; k++) {
    const MPRecFrame *f = &m->fr[e->fr0 + k];
    BCLine line = mp_line((GCproto *)f->pt, f->pc);
    if (line < 0) return 0;
    pts[k + 1] = (uintptr_t)f->pt;
    lines[k + 1] = (uint64_t)line;
  }
  return e->nfr + 1;
}

uint32_t lj_memprof_traceframes(MemProf *mp, GCtrace *T, uintptr_t ra,
				const GCproto *pt, const GCproto **pts,
				const BCIns **pcs, uint32_t max)
{
  const MPTraceMap *m;
  const MPMapEntry *e;
  const GCproto *rpt;
  int32_t line;
  uint32_t ix, k, nfr;
  if (max == 0 ||
      mp_callret(T, ra, (uintptr_t)G2GG(mp->g)->dispatch) >= IRCALL__MAX ||
      !mp_mappos(mp, T, ra, &rpt, &line, &ix))
    return 0;
  m = mp->tmaps[T->traceno];
  e = &m->e[ix];
  /* Frames not recorded: the recorded line alone, if it is pt's. */
  nfr = e->nfr == MP_NOFRAMES ? 0 : e->nfr;
  if (e->pc == NULL || nfr + 1 > max ||
      (nfr ? m->fr[e->fr0 + nfr - 1].pt : e->pt) != pt)
    return 0;
  pts[0] = e->pt;
  pcs[0] = e->pc + 1;
  for (k = 0; k < nfr; k++) {
    const MPRecFrame *f = &m->fr[e->fr0 + k];
    if (mp_line((GCproto *)f->pt, f->pc) < 0) return 0;
    pts[k + 1] = f->pt;
    pcs[k + 1] = f->pc;
  }
  return nfr + 1;
}

/* -- The line inside compiled code, for the leaf-only stream --------------- */

uintptr_t lj_memprof_lineslot(MemProf *mp, int32_t st, uintptr_t cf)
{
  jit_State *J = G2J(mp->g);
  uintptr_t c = (uintptr_t)cframe_raw((void *)cf), slot;
  GCtrace *T = (MSize)st < J->sizetrace ? traceref(J, st) : NULL;
  if (T == NULL || c == 0 || (slot = mp_traceslot(T, c)) == 0) return 0;
  mp->linest = st;
  mp->linecf = cf;
  mp->lineslot = slot;
  return slot;
}

/* The location of a call site: its line as the stacks writer names it
** (the innermost of the site's frames), without announcing anything, or
** the trace. */
LJ_NOINLINE const MPLine *lj_memprof_linemiss(MemProf *mp, int32_t st,
					      uintptr_t ra, MPLine *e)
{
  jit_State *J = G2J(mp->g);
  GCtrace *T = (MSize)st < J->sizetrace ? traceref(J, st) : NULL;
  uint64_t pts[MP_SITEMAX], lines[MP_SITEMAX];
  uint32_t id, ix;
  const GCproto *pt;
  int32_t line;
  uint8_t *p = NULL;
  if (st > mp->linesmax) mp->linesmax = st;  /* See mp_linesclear. */
  e->ra = ra;
  e->st = st;
  /* A GC step is no line's: it stays the trace's. */
  if (T != NULL &&
      (id = mp_callret(T, ra, (uintptr_t)G2GG(mp->g)->dispatch)) <
      IRCALL__MAX && id != IRCALL_lj_gc_step_jit) {
    if (mp_mappos(mp, T, ra, &pt, &line, &ix))  /* Recorded: sure. */
      p = mp_uleb(mp_uleb(e->loc, (uintptr_t)pt), (uint64_t)line);
    else if (mp_snaplines(J, T, mp_snapat(T, ra), mp_helperkind(id), NULL,
			  0, pts, lines) > 0)  /* Inferred from the snapshots. */
      p = mp_uleb(mp_uleb(e->loc, pts[0]), lines[0]);
  }
  if (p != NULL) {
    e->src = LJM_SRC_LFUNC;
  } else {
    e->src = LJM_SRC_TRACE;
    p = mp_uleb(e->loc, (uint64_t)st);
  }
  e->len = (uint8_t)(p - e->loc);
  return e;
}

#else
/* No call site is read here yet: the compiler's hooks have nothing to
** keep (see mp_tracesite in lj_memprof_stack.h). */
void lj_memprof_recstart(jit_State *J) { UNUSED(J); }
void lj_memprof_recins(jit_State *J) { UNUSED(J); }
void lj_memprof_ircopy(jit_State *J, uint32_t ref, uint32_t ins)
{
  UNUSED(J); UNUSED(ref); UNUSED(ins);
}
void lj_memprof_asmins(jit_State *J, uint32_t ref, const void *lo,
		       const void *hi)
{
  UNUSED(J); UNUSED(ref); UNUSED(lo); UNUSED(hi);
}
#endif

#endif
