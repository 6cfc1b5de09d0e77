/*
** Memory profiler: the line of a trace's call into an allocating helper,
** inferred from the trace's machine code and snapshots alone.
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
**
** Read by the writer (lj_memprof_trace.c), for traces compiled before
** profiling began or whose positions were not recorded, and by the
** attach recorder (attach/recorder.c), which sees only what an unpatched
** VM keeps. Nothing here writes, allocates or changes the VM: it reads a
** trace (GCtrace, its snapshots and IR), its machine code and the
** bytecode of the prototypes the snapshots name. x86-64 with GC64 only.
**
** The includer defines, before including it:
**   MP_SNAP_CALLINFO  the VM's table of IR call helpers (lj_ir_callinfo);
**   MP_SNAP_LINE(pt, pos)  the line of instruction pos of prototype pt,
**                  or -1, as lj_debug_line gives it.
*/

#ifndef _LJ_MEMPROF_SITEINFER_H
#define _LJ_MEMPROF_SITEINFER_H

#include "lj_obj.h"
#include "lj_bc.h"
#include "lj_jit.h"
#include "lj_ircall.h"
#include "lj_target.h"

#if LJ_HASJIT && LJ_TARGET_X64 && LJ_GC64

#define MP_SITEMAX	64	/* Frames of a site, at most. */

/* The line of the instruction before ins, a return PC into pt, or -1. */
static LJ_AINLINE BCLine mp_snapretline(GCproto *pt, const BCIns *ins)
{
  BCPos pos = proto_bcpos(pt, ins) - 1;
  return pos < pt->sizebc ? MP_SNAP_LINE(pt, pos) : -1;
}

/* The IRCALL_* id of target among the VM's helpers, or IRCALL__MAX. */
static LJ_AINLINE uint32_t mp_helper(uintptr_t target)
{
  uint32_t i;
  for (i = 0; i < IRCALL__MAX; i++)
    if ((uintptr_t)MP_SNAP_CALLINFO[i].func == target) break;
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
static LJ_AINLINE uint32_t mp_callret(GCtrace *T, uintptr_t ra,
				       uintptr_t dispatch)
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
static LJ_AINLINE SnapNo mp_snapat(GCtrace *T, uintptr_t ra)
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

static LJ_AINLINE int mp_helperkind(uint32_t id)
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
static LJ_AINLINE int mp_bcallocs(BCOp op, int kind)
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

static LJ_AINLINE BCLine mp_spanline(GCproto *pt, const BCIns *pc,
				     const BCIns *end, int kind)
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
      BCLine l = MP_SNAP_LINE(pt, proto_bcpos(pt, ins));
      if (line >= 0 && l != line) return -1;
      line = l;
    }
  }
  return line;
}

/* May IR instruction ir call a helper that allocates? */
static LJ_AINLINE int mp_irallocs(const IRIns *ir)
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
static LJ_AINLINE const BCIns *mp_snapstart(GCtrace *T, SnapNo sn,
					    const BCIns *pc)
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

static LJ_AINLINE BCLine mp_snapline(GCtrace *T, SnapNo sn, GCproto *pt,
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
** allocation of this kind is sure: recorded (rline, if rpt, the prototype
** it was recorded in, is the innermost frame's), or found so by
** mp_snapline (rpt NULL).
*/
static LJ_AINLINE uint32_t mp_snaplines(jit_State *J, GCtrace *T,
					SnapNo sn, int kind,
					const GCproto *rpt, BCLine rline,
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
      (inner = rpt != NULL ? (rpt == fpt[nf-1] ? rline : -1) :
	       mp_snapline(T, sn, fpt[nf-1], pc, kind)) < 0)
    return 0;
  for (k = 0; k < nf; k++) {
    GCproto *pt = fpt[nf-1-k];
    BCLine line = k ? mp_snapretline(pt, fpc[nf-1-k]) : inner;
    if (line < 0) return 0;
    pts[k] = (uintptr_t)pt;
    lines[k] = (uint64_t)line;
  }
  return nf;
}

#endif

#endif
