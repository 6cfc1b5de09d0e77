/*
** Memory profiler: call stacks, walked at each event.
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
**
** With a depth limit (the profile extension), an allocation or a
** reallocation carries the id of its stack's leaf node; each node
** (parent, frame) is announced once, before its first use. The stack is
** walked as carefully as mp_where reads its top (lj_memprof_event.c),
** and cheaply: the frames of the last stack written are kept, and the next
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
**
** The nodes are lj_memprof_node.c's; the frames a trace inlined, its
** call site, lj_memprof_trace.c's.
*/

#define lj_memprof_stack_c
#define LUA_CORE

#include "lj_obj.h"
#include "lj_memprof.h"

#if LJ_HASMEMPROF

#include <string.h>

#include "lj_gc.h"
#include "lj_frame.h"
#include "lj_bc.h"
#include "lj_debug.h"
#include "lj_ff.h"
#if LJ_HASJIT
#include "lj_jit.h"
#include "lj_trace.h"
#endif
#include "lj_memprof_format.h"
#include "lj_memprof_int.h"
#include "lj_memprof_stack.h"

/* -- The stack walker ------------------------------------------------------ */

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
#if !LJ_FR2
    if (top && (pc = mp_lostlink(L, f)) != NULL) {  /* Link overwritten. */
      s->curplain = 0;
      top = 0;
      if ((pf = lj_memprof_luacallerhint(mp, L, f, pc)) == NULL) break;
      goto caller;
    }
#endif
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
#if !LJ_FR2
  caller:
#endif
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
    c = &s->tnodes[(mp_fnsite(fn) +  /* Sites apart. */
		    (uint32_t)(uintptr_t)fn * 7 + parent) & (MP_TRACENODES - 1)];
    if (c->fn == fn && c->parent == parent && c->id) {
      id = c->id;
    } else {
      t = s->cur[0];
      if ((id = lj_memprof_nodeid(mp, parent, &t, &last[1])) == 0) return 0;
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
    id = lj_memprof_nodeid(mp, parent, &t, nlast > 1 ? &last[1] : NULL);
  }
  if (id == 0) return 0;  /* Full: the walk counts it. */
  t.node = id;
  last[0] = t;
  return id;
}
#endif

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
      s->cutnode = lj_memprof_nodeid(mp, 0, &c, NULL);
    }
    parent = s->cutnode;
  }
  if (!full && (parent || !cut)) {
    MPFrame below;
    below.fn = s->cutfn;
    below.pc = s->cutpc;
    below.tag = LJM_FRAME_LUA;
    for (i = n - k; i-- > 0; ) {
      uint32_t id = lj_memprof_nodeid(mp, parent, &cur[i],
			      i + 1 < n ? &cur[i+1] : cut ? &below : NULL);
      if (id == 0) {  /* Full: the leaf under the full root. */
	parent = lj_memprof_stackfull(mp, cur, n);
	full = 1;
	break;
      }
      cur[i].node = parent = id;
    }
  } else if (!full) {
    parent = lj_memprof_stackfull(mp, cur, n);
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
/*
** After a trace event of thread L from trace st, whose return address was
** in slot: arm the quick path for the last stack, whose leaf is node, or
** add the return address to it. Armed only where mp_stackagain would take
** that stack again: plain frames, no resumer.
*/
LJ_NOINLINE void lj_memprof_quickset(MemProf *mp, lua_State *L, int32_t st,
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
  int cut = 0, top = 1, inlined = 0;
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
    e->fn = mp_tracefn(st, site);
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
#if MP_TRACELINES
      if (T != NULL && slot != 0) {
	/* A trace that returned below the function it started in runs the
	** code of the frame at its base, whose saved PC is stale: the
	** frames the recorder saw there, if they end at that frame, with
	** no TRACE frame: those it inlined above it as Lua frames with no
	** slot and no function object (their prototypes recorded), then
	** that frame at its recorded line; else as above. */
	GCfunc *fn = lj_memprof_framefunc(L, f);
	GCtrace *R = T->root ? traceref(J, T->root) : T;
	const GCproto *pts[MP_INLINEMAX];
	const BCIns *pcs[MP_INLINEMAX];
	uint32_t k;
	if (fn != NULL && isluafunc(fn) && R != NULL &&
	    funcproto(fn) != &gcref(R->startpt)->pt &&
	    (k = lj_memprof_traceframes(mp, T, *(const uintptr_t *)slot,
					funcproto(fn), pts, pcs,
					mp->depth < MP_INLINEMAX ?
					mp->depth : MP_INLINEMAX)) != 0) {
	  for (n = 0; n + 1 < k; n++) {
	    MPFrame *c = &mp->stk->cur[n];
	    c->slot = NULL;
	    c->fn = NULL;
	    c->pc = pcs[n];
	    c->node = 0;
	    c->tag = LJM_FRAME_LUA;
	    c->func = 0;
	    c->link = c->link2 = 0;
	    c->pt = pts[n];
	  }
	  inlined = n;
	  pc = pcs[k-1];
	}
      }
#endif
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
  if (f == NULL || inlined || (node = mp_stackagain(mp, L, f, pc, n)) == 0)
#endif
  {
    /* Inlined frames have no slots: mp_stackagain cannot check them. */
    mp->stk->curplain = !inlined;
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
    lj_memprof_quickset(mp, L, st, slot, node);
  mp_reserve(mp);
  p = mp->pos;
  *p++ = ev | LJM_SRC_STACK | LJM_EV_KIND;
  p = mp_uleb(p, node);
  p = mp_body(mp, p, ev, optr, osize, nptr, nsize);
  mp->pos = mp_objkind(g, p);
  return 1;
}


#endif
