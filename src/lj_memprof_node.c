/*
** Memory profiler: stack nodes, the table of the (parent, frame) pairs a
** stream has announced, and the names of the frames in them.
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
**
** A node is announced once, before the first event whose stack has it;
** the walker (lj_memprof_stack.c) asks for the id of each frame that
** changed since the last stack. The table is bounded: once it is full,
** a stack keeps its leaf frames under a root of its own (stackfull).
*/

#define lj_memprof_node_c
#define LUA_CORE

#include "lj_obj.h"
#include "lj_memprof.h"

#if LJ_HASMEMPROF

#include <stdlib.h>
#include <string.h>

#include "lj_gc.h"
#include "lj_frame.h"
#include "lj_bc.h"
#include "lj_debug.h"
#include "lj_ff.h"
#include "lj_memprof_format.h"
#include "lj_memprof_int.h"
#include "lj_memprof_stack.h"
#include "lj_memprof_ffname.h"

LJ_STATIC_ASSERT(LJMPROF_STACK_DEPTH_DEFAULT == LJM_STACK_DEPTH_DEFAULT &&
		 LJMPROF_STACK_DEPTH_MAX == LJM_STACK_DEPTH_MAX &&
		 LJMPROF_SAMPLE_DEFAULT == LJM_SAMPLE_DEFAULT);

/* Bound on the nodes of a stream; check_memprof lowers it. */
uint32_t lj_memprof_nodes_max = LJM_STACK_NODES_MAX;

/* Bound once the leaves of cut stacks are added too (stackfull). */
#define MP_FULLNODES(max)	((max) + ((max) >> 2) + 256)

/* -- Names of frames ----------------------------------------------------- */

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
    mp_ptmark(mp, pt);
    e = &e[s->nameway[set]];
    s->nameway[set] = (uint8_t)((s->nameway[set] + 1) % MP_NAMEWAYS);
    e->pt = pt;
    e->pc = pc;
    e->len = (uint8_t)*len;
    memcpy(e->s, name, *len);
  }
  return name;
}

/* -- The node table ------------------------------------------------------- */

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
    lj_memprof_announceproto(mp, mp_framept(f));  /* Lazily. */
  else if (f->tag == LJM_FRAME_TRACE && mp->smp)
    lj_memprof_announcetrace(mp, a);
  if (f->tag == LJM_FRAME_LUA && caller != NULL &&
      caller->tag == LJM_FRAME_LUA && caller->pc != NULL)
    name = mp_cachedname(mp, mp_framept(caller), caller->pc,
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
    lj_memprof_putu(mp, mp_fnsite((const void *)(uintptr_t)a));
    break;
  default:  /* CUT: nothing. */
    break;
  }
}

/* -- Prototypes the nodes name ------------------------------------------ */

/*
** A prototype's address can be a new prototype's once the collector has
** freed it (a symbol event then says so): the nodes of the old one must
** not be found for the new one. s->protos holds the prototypes that
** nodes name, each with a generation in bits 48 and up, which a new
** prototype at its address bumps (lj_memprof_protonew); a Lua frame's
** key is its prototype with that generation, so the old nodes are not
** found again.
*/
#define MP_PTBITS	(((uint64_t)1 << 48) - 1)

/* The key of prototype pt: with its generation, if a node names it. */
static LJ_AINLINE uint64_t mp_protokey(MPStack *s, uint64_t pt)
{
  uint64_t k = mp_setget(&s->protos, pt, MP_PTBITS);
  return k ? k : pt;
}

/* Remember that a node names pt (key k). 0 if out of memory. */
static int mp_protoadd(MPStack *s, uint64_t k)
{
  uint64_t *e = mp_setput(&s->protos, k & MP_PTBITS, MP_PTBITS);
  if (e == NULL) return 0;
  if (!*e) *e = k;
  return 1;
}

/* A new prototype at pt: if nodes name that address, a new generation.
** The names it gave as a caller are forgotten too. */
void lj_memprof_protonew(MPStack *s, uintptr_t pt)
{
  uint32_t i;
  int64_t j;
  MPName *e = s->names[mp_nameset((const GCproto *)pt)];
  for (i = 0; i < MP_NAMEWAYS; i++)
    if (e[i].pt == (const GCproto *)pt) e[i].pt = NULL;
  if ((j = mp_setfind(&s->protos, pt, MP_PTBITS)) < 0)
    return;
  s->protos.e[j] += (uint64_t)1 << 48;
  if (!(s->protos.e[j] >> 48))
    s->protos.e[j] += (uint64_t)1 << 48;  /* Not 0. */
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
  if ((o->tag & MP_TAGMASK) != LJM_FRAME_LUA) return 0;
  k = mp_setget(&s->protos, o->a & MP_PTBITS, MP_PTBITS);
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

/* -- Node ids -------------------------------------------------------------- */

/*
** The id of (parent, frame f), announcing it if new; caller is the frame
** below f (for a Lua frame's name), or NULL. 0 once the table is full.
*/
uint32_t lj_memprof_nodeid(MemProf *mp, uint32_t parent, const MPFrame *f,
			   const MPFrame *caller)
{
  MPStack *s = mp->stk;
  uint64_t a = 0;
  uint32_t b = 0, i, tag = f->tag;
  switch (f->tag) {
  case LJM_FRAME_LUA: {
    GCproto *pt = mp_framept(f);
    BCLine line = f->pc ? mp_line(pt, f->pc) : 0;
    a = (uintptr_t)pt > MP_PTBITS ? (uintptr_t)pt :  /* No room: no generation. */
	mp_protokey(s, (uintptr_t)pt);
    b = line > 0 ? (uint32_t)line : 0;
    if (caller != NULL && caller->tag == LJM_FRAME_LUA && caller->pc != NULL) {
      ptrdiff_t pos = caller->pc -
		      proto_bc(mp_framept(caller));
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
  /* Past the bound only lj_memprof_stackfull adds nodes: the leaves of cut
  ** stacks, as many as the program has lines, not call paths. */
  if (s->nnodes >= (s->infull ? MP_FULLNODES(s->maxnodes) : s->maxnodes) ||
      (2 * (s->nused + 1) > s->mask + 1 && !mp_nodegrow(s))) {
    if (!s->full) {  /* Said once: later stacks are cut (lj_memprof_stackfull). */
      s->full = 1;
      lj_memprof_putinfo(mp, LJM_INFO_NODES_FULL, s->nnodes);
    }
    return 0;
  }
  if (f->tag == LJM_FRAME_CUT && a)  /* The next node is the full root. */
    lj_memprof_putinfo(mp, LJM_INFO_FULL_ROOT, s->nnodes + 1);
  if (f->tag == LJM_FRAME_LUA &&
      (uintptr_t)mp_framept(f) <= MP_PTBITS) {
    mp_ptmark(mp, mp_framept(f));
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

/*
** A stack the full table has no room for: its leaf frames under the full
** root, so that the event keeps its own line; the frames above them are
** one frame, the cut. The leaf frames: up to the first that is not a
** built-in, which is charged to its caller's line. The full root alone
** if even that has no room.
*/
uint32_t lj_memprof_stackfull(MemProf *mp, MPFrame *cur, uint32_t n)
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
    s->fullnode = lj_memprof_nodeid(mp, 0, &c, NULL);
  }
  parent = s->fullnode;
  while (j + 1 < n && cur[j].tag == LJM_FRAME_FAST) j++;
  for (; parent; j--) {
    uint32_t id = lj_memprof_nodeid(mp, parent, &cur[j],
				    j + 1 < n ? &cur[j+1] : NULL);
    if (id == 0) break;
    cur[j].node = parent = id;
    if (j == 0) break;
  }
  s->infull = 0;
  return parent;
}

/* -- The stack state ------------------------------------------------------ */

/* The stack state of a profiler with a depth limit. 0 if out of memory. */
int lj_memprof_stackinit(MemProf *mp, int depth)
{
  MPStack *s = (MPStack *)calloc(1, sizeof(MPStack));
  if (s == NULL) return 0;
  mp->stk = s;
  mp->depth = (uint32_t)depth;
  s->maxnodes = lj_memprof_nodes_max ? lj_memprof_nodes_max : 1;
  lj_memprof_setinit(&s->protos, MP_PTBITS, 256);
  lj_memprof_setinit(&s->sites, ~MP_SITENONE, 256);
  mp_quickoff(&s->q);
  s->last = (MPFrame *)calloc(mp->depth, sizeof(MPFrame));
  s->cur = (MPFrame *)calloc(mp->depth, sizeof(MPFrame));
  return s->last != NULL && s->cur != NULL && mp_nodegrow(s);
}

/* Drop the stack state: the profiler is stopped, or never started. */
void lj_memprof_stackfree(MemProf *mp)
{
  if (mp->stk) {
    lj_memprof_setfree(&mp->stk->protos);
    free(mp->stk->tracegen);
    lj_memprof_setfree(&mp->stk->sites);
    free(mp->stk->nodes);
    free(mp->stk->last);
    free(mp->stk->cur);
    free(mp->stk);
    mp->stk = NULL;
  }
}

#endif
