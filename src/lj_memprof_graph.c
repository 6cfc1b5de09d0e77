/*
** Memory profiler: the heap graph, the references between live objects.
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
**
** Written inside a heap snapshot when asked (ljmprof_snapshotx with
** LJMPROF_SNAPSHOT_GRAPH), after its blocks: for each object that holds
** references, a GRAPH OBJ record, then one GRAPH record per reference,
** named as a person reads it (the field's key, the upvalue's or local
** variable's name). The roots come first, from object 0. It follows what
** lj_gc.c's traversal marks, so that what the graph reaches is what a
** collection keeps; it reads the VM and changes nothing in it, and runs
** where the snapshot runs (a safe point on the VM's thread).
*/

#define lj_memprof_graph_c
#define LUA_CORE

#include "lj_obj.h"
#include "lj_memprof.h"

#if LJ_HASMEMPROF

#include "lj_memprof_int.h"
#include "lj_tab.h"
#include "lj_meta.h"
#include "lj_udata.h"
#if LJ_HASJIT
#include "lj_jit.h"
#include "lj_trace.h"
#endif
#if LJ_HASBUFFER
#include "lj_buf.h"
#endif

/* Names longer than this are cut (with "..." at the end). */
#define MP_GNAMEMAX	64

/* One record's fixed part: header, tag, up to three ULEB128 values. */
static uint8_t *mp_grec(MemProf *mp, unsigned tag)
{
  uint8_t *p;
  if (mp->pos > mp->hardlim) lj_memprof_flush(mp);
  p = mp->pos;
  *p++ = LJM_EV_SYMTAB | LJM_SRC_GRAPH;
  *p++ = (uint8_t)tag;
  return p;
}

static void mp_gname(MemProf *mp, const char *s, size_t len)
{
  if (len > MP_GNAMEMAX) {
    char cut[MP_GNAMEMAX];
    memcpy(cut, s, MP_GNAMEMAX - 3);
    memcpy(cut + MP_GNAMEMAX - 3, "...", 3);
    lj_memprof_putstr(mp, cut, MP_GNAMEMAX);
  } else {
    lj_memprof_putstr(mp, s, len);
  }
}

/* The object whose references follow, announced before its first one. */
typedef struct MPGraphObj {
  MemProf *mp;
  const void *o;
  unsigned flags;
  int said;
} MPGraphObj;

static void mp_gobj(MPGraphObj *go)
{
  if (!go->said) {
    MemProf *mp = go->mp;
    uint8_t *p = mp_grec(mp, LJM_GRAPH_OBJ);
    p = mp_uleb(p, (uintptr_t)go->o);
    p = mp_uleb(p, go->flags);
    mp->pos = p;
    go->said = 1;
  }
}

/* A reference without a name, or with a number (INDEX: the index). */
static void mp_gref(MPGraphObj *go, unsigned tag, uint64_t num,
		    const void *to)
{
  MemProf *mp = go->mp;
  uint8_t *p;
  if (to == NULL) return;
  mp_gobj(go);
  p = mp_grec(mp, tag);
  if (tag == LJM_GRAPH_INDEX)
    p = mp_uleb(p, num);
  p = mp_uleb(p, (uintptr_t)to);
  mp->pos = p;
}

/* A named one: FIELD (aux: the key string, held too; to may be NULL),
** UPVAL and ROOT (num: the index), SLOT (num: the slot, aux: the
** prototype of the frame whose local it is, or NULL). */
static void mp_gnamed(MPGraphObj *go, unsigned tag, uint64_t num,
		      const void *to, const void *aux, const char *name,
		      size_t len)
{
  MemProf *mp = go->mp;
  uint8_t *p;
  mp_gobj(go);
  p = mp_grec(mp, tag);
  if (tag == LJM_GRAPH_FIELD)
    p = mp_uleb(p, (uintptr_t)aux);
  else
    p = mp_uleb(p, num);
  p = mp_uleb(p, (uintptr_t)to);
  if (tag == LJM_GRAPH_SLOT)
    p = mp_uleb(p, (uintptr_t)aux);
  mp->pos = p;
  mp_gname(mp, name, len);
}

#define mp_gcvalue(tv)	(tvisgcv(tv) ? (const void *)gcV(tv) : NULL)

/* The table's __mode, read without the metamethod cache (which a lookup
** would update). */
static unsigned mp_gweak(global_State *g, GCtab *t)
{
  GCobj *o = gcref(t->metatable);  /* Not tabref: NULL is no object. */
  GCtab *mt;
  cTValue *mode;
  unsigned w = 0;
  if (o == NULL) return 0;
  mt = gco2tab(o);
  mode = lj_tab_getstr(mt, mmname_str(g, MM_mode));
  if (mode != NULL && tvisstr(mode)) {
    const char *s = strVdata(mode);
    for (; *s; s++) {
      if (*s == 'k') w |= LJM_GRAPH_WEAKKEYS;
      else if (*s == 'v') w |= LJM_GRAPH_WEAKVALUES;
    }
  }
  /* The FFI's finalizer table is "k" too, and so marked (lj_gc.c). */
  return w;
}

static void mp_gtab(MemProf *mp, GCtab *t)
{
  MPGraphObj go = { mp, t, 0, 0 };
  MSize i;
  go.flags = mp_gweak(mp->g, t);
  mp_gref(&go, LJM_GRAPH_META, 0, gcref(t->metatable));
  if (t->asize > 0 && LJ_MAX_COLOSIZE != 0 && t->colo <= 0)
    mp_gref(&go, LJM_GRAPH_PART, 0, tvref(t->array));
  if (t->hmask > 0)
    mp_gref(&go, LJM_GRAPH_PART, 0, noderef(t->node));
  for (i = 0; i < t->asize; i++) {
    cTValue *tv = arrayslot(t, i);
    if (tvisgcv(tv)) mp_gref(&go, LJM_GRAPH_INDEX, i, gcV(tv));
  }
  if (t->hmask > 0) {
    Node *node = noderef(t->node);
    for (i = 0; i <= t->hmask; i++) {
      Node *n = &node[i];
      cTValue *k = &n->key;
      if (tvisnil(&n->val)) continue;
      if (tvisstr(k)) {
	GCstr *s = strV(k);
	mp_gnamed(&go, LJM_GRAPH_FIELD, 0, mp_gcvalue(&n->val), s,
		  strdata(s), s->len);
      } else if (tvisgcv(k)) {
	mp_gref(&go, LJM_GRAPH_KEY, 0, gcV(k));
	mp_gref(&go, LJM_GRAPH_VALUE, 0, mp_gcvalue(&n->val));
      } else if (tvisgcv(&n->val)) {
	lua_Number x = tvisint(k) ? (lua_Number)intV(k) :
		       tvisnum(k) ? numV(k) : -1;
	if (x >= 0 && x < 9007199254740992.0 && x == (lua_Number)(uint64_t)x)
	  mp_gref(&go, LJM_GRAPH_INDEX, (uint64_t)x, gcV(&n->val));
	else
	  mp_gref(&go, LJM_GRAPH_VALUE, 0, gcV(&n->val));
      }
    }
  }
}

static void mp_gfunc(MemProf *mp, GCfunc *fn)
{
  MPGraphObj go = { mp, fn, 0, 0 };
  uint32_t i;
  mp_gref(&go, LJM_GRAPH_ENV, 0, gcref(fn->c.env));
  if (isluafunc(fn)) {
    GCproto *pt = funcproto(fn);
    mp_gref(&go, LJM_GRAPH_PROTO, 0, pt);
    for (i = 0; i < fn->l.nupvalues; i++) {
      const void *uv = gcref(fn->l.uvptr[i]);
      const char *name = i < pt->sizeuv ? lj_debug_uvname(pt, i) : "";
      if (uv != NULL)
	mp_gnamed(&go, LJM_GRAPH_UPVAL, i, uv, NULL, name, strlen(name));
    }
  } else {
    for (i = 0; i < fn->c.nupvalues; i++)
      if (tvisgcv(&fn->c.upvalue[i]))
	mp_gnamed(&go, LJM_GRAPH_UPVAL, i, gcV(&fn->c.upvalue[i]), NULL, "", 0);
  }
}

static void mp_gproto(MemProf *mp, GCproto *pt)
{
  MPGraphObj go = { mp, pt, 0, 0 };
  ptrdiff_t i;
  mp_gref(&go, LJM_GRAPH_CONST, 0, proto_chunkname(pt));
  for (i = -(ptrdiff_t)pt->sizekgc; i < 0; i++)
    mp_gref(&go, LJM_GRAPH_CONST, 0, gcref(mref(pt->k, GCRef)[i]));
#if LJ_HASJIT
  if (pt->trace) {
    jit_State *J = G2J(mp->g);
    if (pt->trace < J->sizetrace)
      mp_gref(&go, LJM_GRAPH_CONST, 0, gcref(J->trace[pt->trace]));
  }
#endif
}

/*
** The PC a Lua frame f is at, given the frame above it (nf; NULL for the
** top frame), or NULL where it cannot be told for sure (as lj_debug.c's
** debug_framepc, without the search of C frames below an error handler).
*/
static const BCIns *mp_gframepc(lua_State *L, GCproto *pt, cTValue *nf,
				int running)
{
  const BCIns *ins = NULL;
  if (nf == NULL) {
    void *cf = running ? cframe_raw(L->cframe) : NULL;
    if (cf != NULL && (void *)cframe_pc(cf) != (void *)cframe_L(cf))
      ins = cframe_pc(cf);
  } else if (frame_islua(nf)) {
    ins = frame_pc(nf);
  } else if (frame_iscont(nf)) {
    ins = frame_contpc(nf);
  }
  return ins != NULL && mp_pcin(pt, ins) ? ins : NULL;
}

/* A thread: its stack block, its environment, every slot below its top,
** the slots of Lua frames named by their local variables where the
** frame's PC says which. */
static void mp_gthread(MemProf *mp, lua_State *L)
{
  MPGraphObj go = { mp, L, 0, 0 };
  TValue *bot = tvref(L->stack), *top = L->top, *o, *f, *nf = NULL, *named;
  int running = L == (lua_State *)gcref(mp->g->cur_L);
  mp_gref(&go, LJM_GRAPH_ENV, 0, gcref(L->env));
  /* A thread being made (lj_state_new, at its stack's allocation) has no
  ** stack yet, and its top and base are not set: nothing more to read. */
  if (bot == NULL || L->stacksize == 0) return;
  mp_gref(&go, LJM_GRAPH_PART, 0, bot);
  if (top < bot || top > bot + L->stacksize)
    top = bot + L->stacksize;  /* Never past the stack. */
  named = top;  /* Slots at and above it are named already. */
  /* Frames top down: each frame's slots run from its base to the next
  ** frame's function slot (or the top). */
  for (f = L->base - 1; f > bot + LJ_FR2 && f < top; ) {
    TValue *pf;
    GCfunc *fn = lj_memprof_framefunc(L, f);
    TValue *base = f + 1, *end = nf ? nf - LJ_FR2 : top;
    const BCIns *pc = NULL;
    GCproto *pt = NULL;
    if (fn != NULL && isluafunc(fn)) {
      pt = funcproto(fn);
      pc = mp_gframepc(L, pt, nf, running);
    }
    if (end > named) end = named;
    for (o = base; o < end; o++) {
      const char *name = NULL, *what;
      if (!tvisgcv(o)) continue;
      if (pc != NULL) {  /* Only a local's name: not what a temporary was. */
	what = lj_debug_slotname(pt, pc - 1, (BCReg)(o - base), &name);
	if (what == NULL || strcmp(what, "local") != 0) name = NULL;
      }
      mp_gnamed(&go, LJM_GRAPH_SLOT, (uint64_t)(o - bot), gcV(o), pt,
		name ? name : "", name ? strlen(name) : 0);
    }
    if (base < named) named = base;
    /* The frame's function: held by the slot below its base. */
    if (fn != NULL && f - LJ_FR2 < named) {
      mp_gnamed(&go, LJM_GRAPH_SLOT, (uint64_t)(f - LJ_FR2 - bot), fn, NULL,
		"", 0);
      named = f - LJ_FR2;
    }
    pf = frame_prev(f);
    if (pf >= f) break;  /* Not a frame link a walk can go on from. */
    nf = f;
    f = pf;
  }
  /* What lies below the first frame, or any slot no frame covered. */
  for (o = bot + 1 + LJ_FR2; o < named; o++)
    if (tvisgcv(o))
      mp_gnamed(&go, LJM_GRAPH_SLOT, (uint64_t)(o - bot), gcV(o), NULL, "",
		0);
}

static void mp_gudata(MemProf *mp, GCudata *ud)
{
  MPGraphObj go = { mp, ud, 0, 0 };
  mp_gref(&go, LJM_GRAPH_META, 0, gcref(ud->metatable));
  mp_gref(&go, LJM_GRAPH_ENV, 0, gcref(ud->env));
#if LJ_HASBUFFER
  if (ud->udtype == UDTYPE_BUFFER) {
    SBufExt *sbx = (SBufExt *)uddata(ud);
    if (sbufiscow(sbx))
      mp_gref(&go, LJM_GRAPH_VALUE, 0, gcref(sbx->cowref));
    mp_gref(&go, LJM_GRAPH_VALUE, 0, gcref(sbx->dict_str));
    mp_gref(&go, LJM_GRAPH_VALUE, 0, gcref(sbx->dict_mt));
  }
#endif
}

#if LJ_HASJIT
static void mp_gtrace(MemProf *mp, GCtrace *T)
{
  MPGraphObj go = { mp, T, 0, 0 };
  jit_State *J = G2J(mp->g);
  IRRef ref;
  if (T->traceno == 0 || T->ir == NULL) return;
  for (ref = T->nk; ref < REF_TRUE; ref++) {
    IRIns *ir = &T->ir[ref];
    if (ir->o == IR_KGC) mp_gref(&go, LJM_GRAPH_CONST, 0, ir_kgc(ir));
    if (irt_is64(ir->t) && ir->o != IR_KNULL) ref++;
  }
#define MP_GTRACE(n) \
  if ((n) && (n) < J->sizetrace) \
    mp_gref(&go, LJM_GRAPH_VALUE, 0, gcref(J->trace[(n)]));
  MP_GTRACE(T->link)
  MP_GTRACE(T->nextroot)
  MP_GTRACE(T->nextside)
#undef MP_GTRACE
  mp_gref(&go, LJM_GRAPH_PROTO, 0, gcref(T->startpt));
}
#endif

static void mp_gupval(MemProf *mp, GCupval *uv)
{
  MPGraphObj go = { mp, uv, 0, 0 };
  mp_gref(&go, LJM_GRAPH_VALUE, 0, mp_gcvalue(uvval(uv)));
}

static void mp_gobject(MemProf *mp, GCobj *o)
{
  if (isdead(mp->g, o)) return;  /* Swept soon: it holds nothing. */
  switch (o->gch.gct) {
  case ~LJ_TTAB: mp_gtab(mp, &o->tab); break;
  case ~LJ_TFUNC: mp_gfunc(mp, &o->fn); break;
  case ~LJ_TPROTO: mp_gproto(mp, &o->pt); break;
  case ~LJ_TUPVAL: mp_gupval(mp, &o->uv); break;
  case ~LJ_TUDATA: mp_gudata(mp, &o->ud); break;
#if LJ_HASJIT
  case ~LJ_TTRACE: mp_gtrace(mp, gco2trace(o)); break;
#endif
  case ~LJ_TTHREAD: {
    lua_State *L = &o->th;
    GCobj *uv;
    mp_gthread(mp, L);
    for (uv = gcref(L->openupval); uv != NULL; uv = gcref(uv->gch.nextgc))
      mp_gupval(mp, &uv->uv);
    break;
    }
  default: break;  /* Strings and cdata hold no references. */
  }
}

/* The roots a collection starts from (lj_gc.c's gc_mark_start), named. */
static void mp_groots(MemProf *mp)
{
  global_State *g = mp->g;
  MPGraphObj go = { mp, NULL, 0, 0 };
  lua_State *L = mainthread(g);
  GCobj *o;
  int i;
#define MP_GROOT(n, to, name) \
  mp_gnamed(&go, LJM_GRAPH_ROOT, (n), (to), NULL, name, sizeof(name) - 1)
  MP_GROOT(0, mainthread(g), "main thread");
  MP_GROOT(0, gcref(L->env), "globals");
  if (tvisgcv(&g->registrytv))
    MP_GROOT(0, gcV(&g->registrytv), "registry");
  for (i = 0; i < GCROOT_MAX; i++) {
    const void *to = gcref(g->gcroot[i]);
    if (to == NULL) continue;
    if (i >= GCROOT_BASEMT && i <= GCROOT_BASEMT_NUM)
      MP_GROOT((uint64_t)(i - GCROOT_BASEMT), to, "metatable of a type");
    else if (i == GCROOT_IO_INPUT || i == GCROOT_IO_OUTPUT)
      MP_GROOT(0, to, "default file of io");
    else
      MP_GROOT(0, to, "metamethod name");
  }
  /* Userdata and cdata waiting for their finalizer. */
  for (o = mp_mmunext(g, NULL); o != NULL; o = mp_mmunext(g, o))
    MP_GROOT(0, o, "waiting for its finalizer");
  /* The running coroutine, whose resumer's stack holds it. */
  if ((lua_State *)gcref(g->cur_L) != NULL &&
      (lua_State *)gcref(g->cur_L) != L)
    MP_GROOT(0, gcref(g->cur_L), "running thread");
#undef MP_GROOT
}

/* The graph of a snapshot: the roots, then every object's references. */
void lj_memprof_graph(MemProf *mp)
{
  global_State *g = mp->g;
  GCobj *o;
  mp_groots(mp);
  mp_gobject(mp, obj2gco(mainthread(g)));
  for (o = gcref(g->gc.root); o != NULL; o = gcref(o->gch.nextgc))
    mp_gobject(mp, o);
  for (o = mp_mmunext(g, NULL); o != NULL; o = mp_mmunext(g, o))
    mp_gobject(mp, o);
}

#endif
