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
  GCfunc *fn = lj_memprof_framefunc(T, f);
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
    fn = lj_memprof_framefunc(L, f);
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
      if (pf == NULL && (pf = lj_memprof_luacallerhint(mp, L, f, pc)) == NULL)
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
    fn = lj_memprof_framefunc(L, f);
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
