/*
** ljmprof attach: the recorder that `ljmprof attach` loads into a running
** process. It finds the process's LuaJIT VMs, puts a wrapper over each
** VM's allocator (g->allocf only: allocd stays, so a thread between
** loading the two still makes a valid call), and writes one stream a VM:
** with the profile extension, beginning with the start snapshot, or
** sampled, or plain version 3 (ljmprof_attach_option). Stopping puts the
** allocators back; the library stays loaded (a thread may still be inside
** a wrapper), its wrappers forward.
**
** It is built against the headers of the unpatched source of the system
** LuaJIT, whose layouts it reads; the CLI lets it into a process only
** when the mapped library's build-id is the one those headers describe.
** Nothing here prints: the CLI asks for the outcome (ljmprof_attach_why).
** After start, the wrappers take no lock, call no malloc, stdio or
** dynamic linker: they write with write(2) from buffers mapped at start.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "lj_obj.h"
#include "lj_frame.h"
#include "lj_jit.h"
#include "lj_dispatch.h"
#include "lj_ircall.h"

#include "lj_memprof_format.h"
#include "lj_memprof_heapwalk.h"
#include "lj_memprof_ffname.h"
#include "outpath.h"
#include "recorder.h"
#include "writer.h"

#define EXPORT __attribute__((visibility("default")))

/* The head of LuaJIT's GG_State (lj_dispatch.h): the main thread, the
** global state and the JIT state, in this order on every target without
** ARM's alignment padding. The rest (dispatch tables) is not read. */
struct gg_head {
  lua_State L;
  global_State g;
#if LJ_HASJIT
  jit_State J;
#endif
};
#if LJ_TARGET_ARM
#error "the attach recorder does not know ARM32's GG_State padding"
#endif

/* -- One attached VM -------------------------------------------------- */

enum { SLOT_FREE, SLOT_REC, SLOT_STOPPING, SLOT_FINISHING, SLOT_DONE };

#define SLOTS		256		/* A slot is never taken back from a
					   VM that may still call its wrapper:
					   only from a closed one. */
#define BUF_SIZE	(256 * 1024)
#define BUF_ROOM	(BUF_SIZE - 8192)   /* An event is at most ~60 bytes,
					       its symbols 2 * 31 + a name of
					       at most 4096. */
#define PROTO_CACHE	4096		/* Announced prototypes, by hash. */
#define TRACE_CACHE	4096		/* Announced traces, by number. */
#define LINE_CACHE	1024		/* Lines of a trace's call sites, by
					   return address. */

/* The line of a trace's call site, or pt NULL for the trace itself. */
struct siteline {
  uintptr_t ra;
  const GCtrace *T;
  uint32_t gen;			/* The slot's tracegen when it was found. */
  BCLine line;
  const GCproto *pt;
  uint32_t site;		/* Its site, announced (stacks), or 0. */
  const GCproto *basept;	/* The site's last frame's: the trace's
				   start frame's, or the frame at its base. */
};

/* A frame of a stack, leaf first: LJM_FRAME_* and its fields. */
struct frame {
  uint8_t tag;
  uint64_t a, b;
};

/* A node of the call stacks: (parent, frame), and its id. */
struct node {
  uint64_t a, b;		/* The frame's key (see frame_key). */
  uint32_t parent, id;
  uint8_t tag;
};

struct slot {
  _Atomic int state;
  _Atomic int busy;		/* The VM's thread is inside the wrapper. */
  struct gg_head *gg;		/* The VM (its GG_State block). */
  lua_Alloc orig;		/* The allocator we went over. */
  int luajit_pool;		/* orig is LuaJIT's own allocator. */
  struct ljm_out out;
  uint8_t *buf;			/* BUF_SIZE bytes, mapped at start. */
  size_t len;
  uintptr_t *protos;		/* PROTO_CACHE addresses. */
  uintptr_t *traces;		/* TRACE_CACHE trace addresses. */
  struct siteline *lines;	/* LINE_CACHE of them. */
  uint32_t tracegen;		/* Bumped when the VM frees a trace. */
  uint64_t events;
  int err;			/* The first write error, or 0. */
  int ext;			/* The stream has the profile extension. */
  int snap_owed;		/* Its start snapshot is still to take. */
  uint64_t t0;			/* Its start, in ns (CLOCK_MONOTONIC). */
  const void *snapfree;		/* The block freed where the snapshot was
				   taken, until the walk met it. */
  uint64_t mean;		/* Sampling: mean bytes between samples. */
  int64_t left;			/* Bytes to the next sample. */
  uint64_t rng;
  uintptr_t *set;		/* The sampled blocks (set_put). */
  uint32_t setmask, setn;
  uint32_t depth;		/* Call stacks: frames kept, 0: none. */
  struct node *nodes;		/* Announced nodes (node_id). */
  struct frame *frames;		/* depth + 1 of them, for a walk. */
  uint32_t nodemask, nnodes;
  uint16_t *protogen;		/* PROTO_CACHE generations of prototype
				   addresses, bumped as one is freed. */
  int closed;			/* Its VM is gone: the slot may serve again. */
  _Atomic int closing;		/* Its VM is being freed: touch it no more. */
};

static struct slot slots[SLOTS];
/* ljmprof_attach_option's: take a start snapshot (the stream then has the
** profile extension). */
static int opt_snapshot = 1;
static uint64_t opt_sample;	/* Mean bytes between samples, 0: all. */
static uint32_t opt_stacks;	/* Call stacks of at most this depth. */
static char why[512];		/* The last outcome, for the CLI. */
static char names[1 << 16];	/* The last start's streams, a line each. */
/* LuaJIT's text, from /proc/self/maps: an allocator inside it is its own
** (lj_alloc_f, the only allocator the library has). */
static uintptr_t lj_text_lo, lj_text_hi;
static char lj_path[4096];	/* The file it is in. */

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof(why), fmt, ap);
  va_end(ap);
}

/* Memory of our own: mapped, as nothing here may call malloc. */
static void *map(size_t n)
{
  void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

/* -- The stream --------------------------------------------------------- */

static void put_byte(struct slot *s, uint8_t b)
{
  s->buf[s->len++] = b;
}

static void put_uleb(struct slot *s, uint64_t v)
{
  while (v >= 0x80) {
    s->buf[s->len++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  s->buf[s->len++] = (uint8_t)v;
}

static void put_str(struct slot *s, const char *p, size_t n)
{
  if (n > 4096) n = 4096;	/* A chunk name of a loaded string. */
  put_uleb(s, n);
  memcpy(s->buf + s->len, p, n);
  s->len += n;
}

static void flush(struct slot *s)
{
  if (s->len && !s->err)
    s->err = ljm_out_write(&s->out, s->buf, s->len);
  s->len = 0;
}

static void put_header(struct slot *s, char magic)
{
  put_byte(s, 'l');
  put_byte(s, 'j');
  put_byte(s, (uint8_t)magic);
  if (s->ext) {
    put_byte(s, LJM_FMT_VERSION_EXT);
    put_byte(s, LJM_EXT_PROFILE);
    put_byte(s, LJM_EXT_PROFILE_VERSION);
  } else {
    put_byte(s, LJM_FMT_VERSION);
    put_byte(s, 0); put_byte(s, 0);
  }
  put_byte(s, 0);
}

/* An information record (the extension's). */
static void put_info(struct slot *s, uint64_t key, uint64_t value)
{
  put_byte(s, LJM_EV_SYMTAB | LJM_SRC_INFO);
  put_uleb(s, key);
  put_uleb(s, value);
}

static uint64_t now_ns(void)
{
  struct timespec ts;
  if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
    return 0;
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A TIME mark: the events after it happened at or after it. */
static void put_time(struct slot *s)
{
  uint64_t t = now_ns();
  put_info(s, LJM_INFO_TIME, t > s->t0 ? t - s->t0 : 0);
}

/* Whether p..p+n lies in the thread's stack. */
static int in_stack(const lua_State *L, const void *p, size_t n)
{
  const char *lo = (const char *)tvref(L->stack);
  const char *hi = lo + (size_t)L->stacksize * sizeof(TValue);
  return lo && (const char *)p >= lo && (const char *)p + n <= hi;
}

static int is_func(const GCfunc *fn)
{
  return fn && fn->c.gct == (uint8_t)~LJ_TFUNC;
}

/* The line of instruction pos of pt, as lj_debug_line says it (its
** lineinfo leaves out the header at 0); -1 when pos is not in pt or pt
** has no lines. */
static BCLine debug_line(const GCproto *pt, ptrdiff_t pos)
{
  const void *lineinfo = proto_lineinfo(pt);
  if (pos < 0 || pos > (ptrdiff_t)pt->sizebc || !lineinfo)
    return -1;
  if (pos == (ptrdiff_t)pt->sizebc)
    return pt->firstline + pt->numline;
  if (pos-- == 0)
    return pt->firstline;
  if (pt->numline < 256)
    return pt->firstline + ((const uint8_t *)lineinfo)[pos];
  if (pt->numline < 65536)
    return pt->firstline + ((const uint16_t *)lineinfo)[pos];
  return pt->firstline + (BCLine)((const uint32_t *)lineinfo)[pos];
}

/* The same, 0 for none, as the reference writer names such a line. */
static BCLine proto_line(const GCproto *pt, ptrdiff_t pos)
{
  BCLine line = debug_line(pt, pos);
  return line < 0 ? 0 : line;
}

/* The line a frame of pt is at, from the PC saved for it (which points
** past the instruction running): debug_framepc's rule. */
static BCLine frame_line(const GCproto *pt, const BCIns *pc)
{
  return pc ? proto_line(pt, (pc - proto_bc(pt)) - 1) : 0;
}

static void announce_proto(struct slot *s, const GCproto *pt)
{
  uintptr_t a = (uintptr_t)pt;
  size_t h = (a >> 4) & (PROTO_CACHE - 1);
  const GCstr *name;
  if (s->protos[h] == a)
    return;
  name = proto_chunkname(pt);
  put_byte(s, LJM_SRC_LFUNC);		/* A symbol event, kind LFUNC. */
  put_uleb(s, a);
  if (name && name->gct == (uint8_t)~LJ_TSTR)
    put_str(s, strdata(name), name->len);
  else
    put_str(s, "?", 1);
  put_uleb(s, pt->firstline > 0 ? (uint64_t)pt->firstline : 0);
  s->protos[h] = a;
}

#if LJ_HASJIT
/* The symbol of trace T, unless announced. */
static void announce_trace(struct slot *s, const GCtrace *T)
{
  size_t h = (size_t)T->traceno & (TRACE_CACHE - 1);
  GCproto *pt = gco2pt(gcref(T->startpt));
  if (s->traces[h] == (uintptr_t)T)
    return;
  announce_proto(s, pt);
  put_byte(s, LJM_SRC_TRACE);
  put_uleb(s, (uint64_t)T->traceno);
  put_uleb(s, (uintptr_t)pt);
  put_uleb(s, (uint64_t)proto_line(pt, mref(T->startpc, const BCIns) -
				     proto_bc(pt)));
  s->traces[h] = (uintptr_t)T;
}
#endif

#if LJ_HASJIT
/* -- The line inside compiled code ------------------------------------ */

/* The process's own table of the JIT's call helpers (lj_ir_callinfo, not
** exported), copied by find_callinfo: empty, no line is inferred. */
static CCallInfo callinfo[IRCALL__MAX + 1];
static int have_callinfo;

#define MP_SNAP_CALLINFO	callinfo
#define MP_SNAP_LINE(pt, pos)	debug_line((pt), (pos))
#include "lj_memprof_siteinfer.h"

/* How far above this frame the trace's C frame may be: the helper, the
** VM's allocation functions (a GC step's at most) and the wrapper. */
#define CFRAME_REACH	(64 * 1024)

/* The line of the allocation trace T of thread L is making now, or pt
** NULL: the writer's inference from the trace's snapshots
** (lj_memprof_siteinfer.h), over the return address of the trace's call
** into the helper. That lies in the C frame of the thread, which runs the
** trace in this thread's stack a little above this frame: only memory
** between the two is read, and only if the frame names the thread. */
static const struct siteline *trace_line(struct slot *s, lua_State *L,
					 GCtrace *T)
{
#if LJ_TARGET_X64 && LJ_GC64
  uintptr_t cf = (uintptr_t)cframe_raw(L->cframe), slot, ra;
  uintptr_t here = (uintptr_t)__builtin_frame_address(0);
  struct siteline *e;
  uint64_t pts[MP_SITEMAX], lines[MP_SITEMAX];
  uint32_t id;
  if (!have_callinfo || cf <= here ||
      cf + CFRAME_OFS_L + sizeof(uintptr_t) - here > CFRAME_REACH ||
      *(const uintptr_t *)(cf + CFRAME_OFS_L) != (uintptr_t)L)
    return NULL;
  slot = cf - (CFRAME_SIZE_JIT - CFRAME_SIZE) - T->spadjust -
	 sizeof(uintptr_t);
  if (slot >= cf || slot <= here)
    return NULL;
  ra = *(const uintptr_t *)slot;
  e = &s->lines[(ra ^ (ra >> 10)) & (LINE_CACHE - 1)];
  if (e->ra == ra && e->T == T && e->gen == s->tracegen)
    return e;
  e->ra = ra;
  e->T = T;
  e->gen = s->tracegen;
  e->pt = NULL;
  e->site = 0;
  e->basept = NULL;
  /* A GC step is no line's: it stays the trace's. */
  if ((id = mp_callret(T, ra, (uintptr_t)s->gg +
		       offsetof(GG_State, dispatch))) < IRCALL__MAX &&
      id != IRCALL_lj_gc_step_jit) {
    SnapNo sn = mp_snapat(T, ra);
    int kind = mp_helperkind(id);
    uint32_t n = mp_snaplines(&s->gg->J, T, sn, kind, NULL, 0, pts, lines);
    if (n > 0) {
      e->pt = (const GCproto *)(uintptr_t)pts[0];
      e->line = (BCLine)lines[0];
      if (s->depth) {
	/* The site, as the writer numbers a snapshot's: its lines and the
	** frames the trace inlined there, down to its start frame. */
	e->site = 1 + sn * MP_KINDS + (uint32_t)kind;
	e->basept = (const GCproto *)(uintptr_t)pts[n - 1];
	announce_trace(s, T);
	for (uint32_t i = 0; i < n; i++)
	  announce_proto(s, (const GCproto *)(uintptr_t)pts[i]);
	put_byte(s, LJM_EV_SYMTAB | LJM_SRC_SITE);
	put_uleb(s, T->traceno);
	put_uleb(s, e->site);
	put_uleb(s, n);
	for (uint32_t i = 0; i < n; i++) {
	  put_uleb(s, pts[i]);
	  put_uleb(s, lines[i]);
	}
      }
    }
  }
  return e;
#else
  /* The writer infers no line inside compiled code but on x86-64
  ** (lj_memprof_siteinfer.h): the trace's. */
  (void)s; (void)L; (void)T;
  return NULL;
#endif
}
#endif

/* The thread the VM runs now, if g->cur_L names one of this VM's. */
static lua_State *running_thread(struct slot *s)
{
  global_State *g = &s->gg->g;
  lua_State *L = gco2th(gcref(g->cur_L));
  if (!L || L->gct != (uint8_t)~LJ_TTHREAD || mref(L->glref, void) != g)
    return NULL;
  return L;
}

#if LJ_HASJIT
/* The trace g->vmstate says runs now, if it is one of J's live traces. */
static GCtrace *running_trace(struct slot *s)
{
  int32_t vmstate = (int32_t)s->gg->g.vmstate;
  jit_State *J = &s->gg->J;
  GCtrace *T;
  if (vmstate < 0 || (MSize)vmstate >= J->sizetrace || !J->trace)
    return NULL;
  T = (GCtrace *)gcref(J->trace[vmstate]);
  return T && T->gct == (uint8_t)~LJ_TTRACE ? T : NULL;
}
#endif

/* The location of the allocation the VM is making now, by the reference
** writer's rules (doc/format.md "Attribution"): a Lua function's line, a
** fast function's calling Lua line, a C function, a trace, or internal.
** Writes the symbols the location needs first, then the event's header
** byte and its location. */
static void put_location(struct slot *s, int ev)
{
  global_State *g = &s->gg->g;
  int32_t vmstate = (int32_t)g->vmstate;
#if LJ_HASJIT
  if (vmstate >= 0) {
    GCtrace *T = running_trace(s);
    if (T) {
      lua_State *L = running_thread(s);
      const struct siteline *e;
      if (L && (e = trace_line(s, L, T)) != NULL && e->pt != NULL) {
	announce_proto(s, e->pt);
	put_byte(s, (uint8_t)(LJM_SRC_LFUNC | ev));
	put_uleb(s, (uintptr_t)e->pt);
	put_uleb(s, (uint64_t)e->line);
	return;
      }
      announce_trace(s, T);
      put_byte(s, (uint8_t)(LJM_SRC_TRACE | ev));
      put_uleb(s, (uint64_t)vmstate);
      return;
    }
  } else
#endif
  if (vmstate == ~LJ_VMST_INTERP || vmstate == ~LJ_VMST_C) {
    lua_State *L = running_thread(s);
    TValue *frame;
    GCfunc *fn;
    if (!L)
      goto internal;
    frame = L->base - 1;
    if (!in_stack(L, frame - LJ_FR2, sizeof(TValue) * (1 + LJ_FR2)))
      goto internal;
    fn = frame_func(frame);
    if (!is_func(fn))
      goto internal;
    if (isluafunc(fn)) {
      GCproto *pt = funcproto(fn);
      void *cf = cframe_raw(L->cframe);
      const BCIns *pc = cf ? cframe_pc(cf) : NULL;
      announce_proto(s, pt);
      put_byte(s, (uint8_t)(LJM_SRC_LFUNC | ev));
      put_uleb(s, (uintptr_t)pt);
      put_uleb(s, (uint64_t)frame_line(pt, pc));
      return;
    }
    if (isffunc(fn) && frame_islua(frame)) {
      /* A built-in called from Lua: the caller's line. */
      const BCIns *pc = frame_pc(frame);
      TValue *pframe = frame_prevl(frame);
      GCfunc *pfn;
      if (in_stack(L, pframe - LJ_FR2, sizeof(TValue) * (1 + LJ_FR2)) &&
	  is_func(pfn = frame_func(pframe)) && isluafunc(pfn)) {
	GCproto *pt = funcproto(pfn);
	announce_proto(s, pt);
	put_byte(s, (uint8_t)(LJM_SRC_LFUNC | ev));
	put_uleb(s, (uintptr_t)pt);
	put_uleb(s, (uint64_t)frame_line(pt, pc));
	return;
      }
    }
    put_byte(s, (uint8_t)(LJM_SRC_CFUNC | ev));
    put_uleb(s, (uintptr_t)fn->c.f);
    return;
  }
internal:
  put_byte(s, (uint8_t)(LJM_SRC_INTERNAL | ev));
}

/* -- Call stacks ------------------------------------------------------ */

#define NODES_MIN	4096
#define NODES_MAX	LJM_STACK_NODES_MAX

/* A frame's key in the node table: a Lua frame's prototype with the
** generation of its address (a node names the prototype it was announced
** with, not a later one at that address), a trace's number with the
** slot's trace generation (a flushed trace's number comes back). */
static uint64_t frame_key(const struct slot *s, const struct frame *f)
{
  if (f->tag == LJM_FRAME_LUA)
    return f->a | (uint64_t)s->protogen[(f->a >> 4) & (PROTO_CACHE - 1)] << 48;
  if (f->tag == LJM_FRAME_TRACE)
    return f->a | (uint64_t)s->tracegen << 32;
  return f->a;
}

static uint32_t node_home(const struct slot *s, uint32_t parent, uint8_t tag,
			  uint64_t a, uint64_t b)
{
  uint64_t h = (a * 0x9e3779b97f4a7c15ull) ^ (b * 0xc2b2ae3d27d4eb4full) ^
	       ((uint64_t)parent << 8 | tag);
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  return (uint32_t)(h >> 32) & s->nodemask;
}

static int node_grow(struct slot *s)
{
  uint32_t osz = s->nodes ? s->nodemask + 1 : 0;
  uint32_t nsz = osz ? 2 * osz : NODES_MIN;
  struct node *o = s->nodes, *e;
  if (nsz > 2 * NODES_MAX || !(e = map((size_t)nsz * sizeof(*e))))
    return 0;
  s->nodes = e;
  s->nodemask = nsz - 1;
  for (uint32_t i = 0; i < osz; i++)
    if (o[i].id) {
      uint32_t j = node_home(s, o[i].parent, o[i].tag, o[i].a, o[i].b);
      while (e[j].id) j = (j + 1) & s->nodemask;
      e[j] = o[i];
    }
  if (o)
    munmap(o, (size_t)osz * sizeof(*o));
  return 1;
}

/* The id of the node (parent, f), announced first if new; 0 when the
** table is full. */
static uint32_t node_id(struct slot *s, uint32_t parent, const struct frame *f)
{
  uint64_t a = frame_key(s, f);
  uint32_t i;
  char name[64];
  size_t len;
  if ((!s->nodes || 2 * (s->nnodes + 1) > s->nodemask + 1) &&
      (s->nnodes >= NODES_MAX || !node_grow(s)))
    return 0;
  for (i = node_home(s, parent, f->tag, a, f->b); s->nodes[i].id;
       i = (i + 1) & s->nodemask)
    if (s->nodes[i].parent == parent && s->nodes[i].tag == f->tag &&
	s->nodes[i].a == a && s->nodes[i].b == f->b)
      return s->nodes[i].id;
  s->nodes[i].parent = parent;
  s->nodes[i].tag = f->tag;
  s->nodes[i].a = a;
  s->nodes[i].b = f->b;
  s->nodes[i].id = ++s->nnodes;
  /* Its symbols first; a C function is named after the detach. */
  if (f->tag == LJM_FRAME_LUA)
    announce_proto(s, (const GCproto *)(uintptr_t)f->a);
  put_byte(s, LJM_EV_SYMTAB | LJM_SRC_NODE);
  put_uleb(s, parent);
  put_uleb(s, f->tag);
  switch (f->tag) {
  case LJM_FRAME_LUA:
    put_uleb(s, f->a);
    put_uleb(s, f->b);
    put_str(s, "", 0);		/* The name its caller calls it by: not
				   known here. */
    break;
  case LJM_FRAME_FAST:
    put_uleb(s, f->a);
    len = mp_ffname((unsigned)f->a, name, sizeof(name));
    put_str(s, name, len);
    break;
  case LJM_FRAME_C:
    put_uleb(s, f->a);
    break;
  case LJM_FRAME_TRACE:
    put_uleb(s, f->a);
    put_uleb(s, f->b);
    break;
  default:
    break;
  }
  return s->nodes[i].id;
}

/* Is f a dummy frame of L (lua_cpcall and the like put L in its slot)? */
static int dummy_frame(const lua_State *L, const TValue *f)
{
  return gcref((f - LJ_FR2)->gcr) == obj2gco(L);
}

/*
** The frames of the allocation the VM is making now, leaf first, at most
** s->depth and a CUT frame: 0 when it has none (internal, or a state
** that says nothing). In compiled code: its trace and the site of the
** call (the frames the snapshot shows, down to the trace's start frame),
** not the frames below the trace. Else L's frames from its top down to
** its bottom (not on into a coroutine's resumer), read within its stack
** only, each Lua frame at the line of its PC (0 where a C or protected
** call left none).
*/
static uint32_t walk(struct slot *s, struct frame *fr)
{
  global_State *g = &s->gg->g;
  int32_t vmstate = (int32_t)g->vmstate;
  lua_State *L = running_thread(s);
  const TValue *f;
  const BCIns *pc = NULL;
  uint32_t n = 0;
  int below = 0;		/* f is the site's last frame: from its link. */
  if (!L)
    return 0;
#if LJ_HASJIT
  if (vmstate >= 0) {
    GCtrace *T = running_trace(s);
    const struct siteline *e;
    const GCfunc *fn;
    if (!T)
      return 0;
    announce_trace(s, T);
    e = trace_line(s, L, T);
    fr[n].tag = LJM_FRAME_TRACE;
    fr[n].a = (uint64_t)vmstate;
    fr[n++].b = e != NULL ? e->site : 0;
    /* Below the site, as the writer has it: the trace's start frame at
    ** the trace's start line (the reader puts the site's frames over it),
    ** then its callers; only where the frame the trace runs in, at
    ** g->jit_base, is that start frame and the site ends with it (not
    ** where the trace has returned below it, nor without a site). */
    f = mref(g->jit_base, TValue);
    if (!e || !e->basept || !f || n == s->depth ||
	e->basept != gco2pt(gcref(T->startpt)))
      return n;
    f--;
    if (!in_stack(L, f - LJ_FR2, sizeof(TValue) * (1 + LJ_FR2)) ||
	!is_func(fn = frame_func(f)) || !isluafunc(fn) ||
	funcproto(fn) != e->basept)
      return n;
    fr[n].tag = LJM_FRAME_LUA;
    fr[n].a = (uintptr_t)e->basept;
    fr[n++].b = (uint64_t)proto_line(e->basept, mref(T->startpc,
						      const BCIns) -
					     proto_bc(e->basept));
    below = 1;
  } else
#endif
  {
    void *cf = cframe_raw(L->cframe);
    if (vmstate != ~LJ_VMST_INTERP && vmstate != ~LJ_VMST_C)
      return 0;
    pc = cf ? cframe_pc(cf) : NULL;
    f = L->base - 1;
  }
  for (;;) {
    const TValue *pf;
    const GCfunc *fn;
    if (!in_stack(L, f - LJ_FR2, sizeof(TValue) * (1 + LJ_FR2)))
      break;
    fn = frame_func(f);
    if (below) {
      below = 0;		/* Named by the site already. */
    } else if (is_func(fn)) {
      struct frame *e = &fr[n];
      if (n == s->depth) {
	e->tag = LJM_FRAME_CUT;
	e->a = e->b = 0;
	n++;
	break;
      }
      n++;
      if (isluafunc(fn)) {
	const GCproto *pt = funcproto(fn);
	e->tag = LJM_FRAME_LUA;
	e->a = (uintptr_t)pt;
	e->b = (uint64_t)frame_line(pt, pc);
      } else if (isffunc(fn)) {
	e->tag = LJM_FRAME_FAST;
	e->a = fn->c.ffid;
	e->b = 0;
      } else {
	e->tag = LJM_FRAME_C;
	e->a = (uintptr_t)fn->c.f;
	e->b = 0;
      }
    } else if (!dummy_frame(L, f)) {
      break;			/* Not a frame: trust nothing below. */
    }
  link:
    if (frame_islua(f)) {	/* Called from Lua: its PC is the caller's. */
      pc = frame_pc(f);
      if (!pc || ((uintptr_t)pc & 3))
	break;
      pf = frame_prevl(f);
    } else if (frame_iscont(f)) {	/* A metamethod the VM called. */
      if (!in_stack(L, f - 2 - LJ_FR2, sizeof(TValue)) ||
	  frame_iscont_fficb(f))
	break;
      pc = frame_contpc(f);
      pf = frame_prevd(f);
    } else if (frame_isvarg(f)) {	/* The frame below holds the link. */
      pf = frame_prevd(f);
      if (pf >= f || !in_stack(L, pf - LJ_FR2, sizeof(TValue) * (1 + LJ_FR2)))
	break;
      f = pf;
      goto link;
    } else {			/* C, protected C, pcall: no PC below. */
      pc = NULL;
      pf = frame_prevd(f);
    }
    if (pf >= f)
      break;
    f = pf;
  }
  return n;
}

/* The location of an allocation or reallocation with stacks: its leaf
** node, the nodes announced first; else (no frames, a full table) the
** version-3 location. */
static void put_where(struct slot *s, int ev)
{
  struct frame *fr = s->frames;
  uint32_t n, id = 0;
  if (s->depth && ev != 2 && (n = walk(s, fr)) > 0) {
    while (n > 0 && (id = node_id(s, id, &fr[--n])) != 0) ;
    if (id != 0) {
      put_byte(s, (uint8_t)(LJM_SRC_STACK | ev));
      put_uleb(s, id);
      return;
    }
  }
  put_location(s, ev);
}

/* An event is written: the buffer goes out when full, after a TIME mark
** in a stream that has them. */
static void event_done(struct slot *s)
{
  s->events++;
  if (s->len > BUF_ROOM) {
    if (s->ext)
      put_time(s);
    flush(s);
  }
}

/* -- Sampling ------------------------------------------------------------ */

/* The sampled blocks of a slot: their addresses, open addressing with
** linear probing, at most half full, mapped (grown by a new mapping). */
#define SET_MIN		4096

static uint32_t set_home(const struct slot *s, uintptr_t a)
{
  uint64_t h = (uint64_t)a * 0x9e3779b97f4a7c15ull;
  return (uint32_t)(h >> 32) & s->setmask;
}

static int set_grow(struct slot *s)
{
  uint32_t osz = s->set ? s->setmask + 1 : 0, nsz = osz ? 2 * osz : SET_MIN;
  uintptr_t *o = s->set, *e = map((size_t)nsz * sizeof(uintptr_t));
  if (!e)
    return 0;
  s->set = e;
  s->setmask = nsz - 1;
  for (uint32_t i = 0; i < osz; i++)
    if (o[i]) {
      uint32_t j = set_home(s, o[i]);
      while (e[j]) j = (j + 1) & s->setmask;
      e[j] = o[i];
    }
  if (o)
    munmap(o, (size_t)osz * sizeof(uintptr_t));
  return 1;
}

/* Add a (not in the set). 0 if out of memory: then it is not sampled. */
static int set_put(struct slot *s, uintptr_t a)
{
  uint32_t i;
  if ((!s->set || 2 * (s->setn + 1) > s->setmask + 1) && !set_grow(s))
    return 0;
  for (i = set_home(s, a); s->set[i]; i = (i + 1) & s->setmask) ;
  s->set[i] = a;
  s->setn++;
  return 1;
}

/* Remove a if it is in the set: whether it was. */
static int set_del(struct slot *s, uintptr_t a)
{
  uint32_t i, j;
  if (!s->set)
    return 0;
  for (i = set_home(s, a); s->set[i] != a; i = (i + 1) & s->setmask)
    if (!s->set[i])
      return 0;
  s->setn--;
  /* Shift back the entries probed past it. */
  for (j = i;;) {
    uint32_t k;
    j = (j + 1) & s->setmask;
    if (!s->set[j])
      break;
    k = set_home(s, s->set[j]);
    if (i <= j ? (k > i && k <= j) : (k > i || k <= j))
      continue;
    s->set[i] = s->set[j];
    i = j;
  }
  s->set[i] = 0;
  return 1;
}

/* A generator's state, never 0: the clock and the VM, mixed. */
static uint64_t seed(uintptr_t vm)
{
  uint64_t x = now_ns() ^ ((uint64_t)vm << 16) ^ 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x ? x : 1;
}

/* Bytes to the next sample: -mean ln(u), u uniform in (0, 1]. */
static int64_t next_sample(struct slot *s)
{
  uint64_t x = s->rng;
  double u, d;
  x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
  s->rng = x;
  u = ((double)((x * 0x2545f4914f6cdd1dull) >> 11) + 1.0) *
      (1.0 / 9007199254740992.0);
  d = -log(u) * (double)s->mean;
  return d < 4e18 ? (int64_t)d : (int64_t)4e18;
}

/*
** A call of a sampled stream (doc/format.md, "Sampled streams"): the
** free of a sampled block (a reallocation's old block too), and the new
** block when the byte counter, run down by its size, picks it.
*/
static void record_sampled(struct slot *s, void *p, size_t osize, void *r,
			   size_t nsize)
{
  if (nsize != 0 && r == NULL)
    return;			/* Failed: nothing changed. */
  if (p != NULL && osize != 0 && set_del(s, (uintptr_t)p)) {
    put_location(s, 2);
    put_uleb(s, (uintptr_t)p);
    put_uleb(s, osize);
    event_done(s);
  }
  if (nsize == 0 || (s->left -= (int64_t)nsize) > 0)
    return;
  s->left = next_sample(s);
  if (!set_put(s, (uintptr_t)r))
    return;
  put_where(s, 1);
  put_uleb(s, (uintptr_t)r);
  put_uleb(s, nsize);
  event_done(s);
}

/* The event of one allocator call. closing: the free of the VM itself,
** after which its state is not read: charged to internal. */
static void record(struct slot *s, void *p, size_t osize, void *r,
		   size_t nsize, int closing)
{
  int ev;
  if (nsize == 0) {
    /* A freed prototype's address may come back as another one. */
    uintptr_t a = (uintptr_t)p;
    if (s->protos[(a >> 4) & (PROTO_CACHE - 1)] == a)
      s->protos[(a >> 4) & (PROTO_CACHE - 1)] = 0;
  }
  if (s->mean) {
    if (!closing)		/* The VM's own block was never sampled. */
      record_sampled(s, p, osize, r, nsize);
    return;
  }
  if (nsize == 0) {
    ev = 2;
  } else if (r == NULL) {
    return;			/* Failed: nothing changed. */
  } else {
    ev = p == NULL || osize == 0 ? 1 : 3;
  }
  if (closing)
    put_byte(s, (uint8_t)(LJM_SRC_INTERNAL | ev));
  else
    put_where(s, ev);
  if (ev != 1) {
    put_uleb(s, (uintptr_t)p);
    put_uleb(s, osize);
  }
  if (ev != 2) {
    put_uleb(s, (uintptr_t)r);
    put_uleb(s, nsize);
  }
  event_done(s);
}

/* -- The start snapshot --------------------------------------------------- */

/* One block live at the start (MPWalk.block): an allocation with its
** kind, located as the writer's start snapshot locates it. */
static void snap_block(void *ctx, uint8_t src, uint64_t a, uint64_t b,
		       const void *ptr, size_t sz, uint8_t kind)
{
  struct slot *s = ctx;
  if (ptr == NULL || sz == 0)
    return;
  if (src == LJM_SRC_LFUNC)
    announce_proto(s, (const GCproto *)(uintptr_t)a);
#if LJ_HASJIT
  else if (src == LJM_SRC_TRACE)
    announce_trace(s, (const GCtrace *)gcref(s->gg->J.trace[a]));
#endif
  put_byte(s, (uint8_t)(LJM_EV_ALLOC | LJM_EV_KIND | src));
  if (src != LJM_SRC_INTERNAL) {
    put_uleb(s, a);
    if (src == LJM_SRC_LFUNC)
      put_uleb(s, b);
  }
  put_uleb(s, (uintptr_t)ptr);
  put_uleb(s, sz);
  put_byte(s, kind);
  if (ptr == s->snapfree)
    s->snapfree = NULL;		/* It is in. */
  if (s->len > BUF_ROOM)
    flush(s);
}

/* The walk's scratch memory. */
static void snap_release(void *p, size_t n)
{
  if (p)
    munmap(p, n);
}

/*
** Every block the VM holds, at its first allocator call after the start
** (on its thread, where the writer's start snapshot is taken too: see
** lj_memprof_heap.c), as allocations between INFO SNAPSHOT 1 and 0. The
** block the call frees or moves (p, osize) is still there: if the walk
** did not meet it, it is added, so that its free finds it.
*/
static void snapshot(struct slot *s, void *p, size_t osize)
{
  MPWalk w = { &s->gg->g, snap_block, s, map, snap_release };
  s->snap_owed = 0;
  s->snapfree = osize ? p : NULL;
  put_time(s);			/* When it began. */
  put_info(s, LJM_INFO_SNAPSHOT, LJM_SNAPSHOT_START);
  mp_heapwalk(&w);
  if (s->snapfree)
    snap_block(s, LJM_SRC_INTERNAL, 0, 0, p, osize, LJM_KIND_NONE);
  put_info(s, LJM_INFO_SNAPSHOT, LJM_SNAPSHOT_END);
  put_time(s);			/* What it took. */
}

/* The stream ends: the rest of the buffer, the epilogue, the file, and
** the buffers (nobody reads them once the slot is not recording: the
** busy flag keeps a finish from running beside a record). */
static void finish(struct slot *s)
{
  if (s->ext)
    put_time(s);
  put_byte(s, LJM_EV_EPILOGUE);
  flush(s);
  if (!s->err)
    s->err = ljm_out_finish(&s->out);
  else
    ljm_out_close(&s->out);
  munmap(s->buf, BUF_SIZE);
  munmap(s->protos, PROTO_CACHE * sizeof(uintptr_t));
  munmap(s->traces, TRACE_CACHE * sizeof(uintptr_t));
  munmap(s->lines, LINE_CACHE * sizeof(struct siteline));
  if (s->set)
    munmap(s->set, ((size_t)s->setmask + 1) * sizeof(uintptr_t));
  if (s->nodes)
    munmap(s->nodes, ((size_t)s->nodemask + 1) * sizeof(struct node));
  if (s->protogen)
    munmap(s->protogen, PROTO_CACHE * sizeof(uint16_t));
  if (s->frames)
    munmap(s->frames, (LJM_STACK_DEPTH_MAX + 1) * sizeof(struct frame));
  s->set = NULL;
  s->nodes = NULL;
  s->protogen = NULL;
  s->frames = NULL;
  s->buf = NULL;
  s->protos = s->traces = NULL;
  s->lines = NULL;
  atomic_store(&s->state, SLOT_DONE);
}

/* Whoever sees the slot stopping and nobody inside finishes it, once. */
static void finish_if_stopping(struct slot *s)
{
  int st = SLOT_STOPPING;
  if (atomic_load(&s->state) == SLOT_STOPPING &&
      atomic_compare_exchange_strong(&s->state, &st, SLOT_FINISHING))
    finish(s);
}

#if LJ_HASJIT
/* A block of the trace's size is being freed: if it is a trace, what is
** known of its number and code is no longer true. */
static void trace_freed(struct slot *s, const void *p)
{
  const GCtrace *T = p;
  if (T->gct == (uint8_t)~LJ_TTRACE) {
    size_t h = (size_t)T->traceno & (TRACE_CACHE - 1);
    s->tracegen++;
    if (s->traces[h] == (uintptr_t)T)
      s->traces[h] = 0;
  }
}
#endif

/* LuaJIT's own allocator destroys its pool in lua_close only while it is
** g->allocf; over it, close_state frees the GG_State block through us
** instead, and the pool would stay mapped: destroy it as it would. */
void ljm_attach_pool_destroy(void *msp);

static void *wrap(struct slot *s, void *ud, void *p, size_t osize,
		  size_t nsize)
{
  void *r;
  /* lua_close's last call frees the VM itself: from here on nothing may
  ** read or write it, the detach included. */
  int closing = nsize == 0 && p == (void *)s->gg;
  atomic_store(&s->busy, 1);
  if (closing)
    atomic_store(&s->closing, 1);
  else if (atomic_load(&s->state) == SLOT_REC) {
    /* Not inside the sweep of a string chain: at the next call. */
    if (s->snap_owed && !mp_insweep(&s->gg->g))
      snapshot(s, p, osize);
#if LJ_HASJIT
    if (nsize == 0 && osize >= sizeof(GCtrace))
      trace_freed(s, p);
#endif
    if (nsize == 0 && osize >= sizeof(GCproto) && s->protogen &&
	((const GCproto *)p)->gct == (uint8_t)~LJ_TPROTO)
      s->protogen[((uintptr_t)p >> 4) & (PROTO_CACHE - 1)]++;
  }
  r = s->orig(ud, p, osize, nsize);
  if (atomic_load(&s->state) == SLOT_REC) {
    record(s, p, osize, r, nsize, closing);
    if (closing) {
      s->closed = 1;
      finish(s);
      if (s->luajit_pool)
	ljm_attach_pool_destroy(ud);
    }
  }
  atomic_store(&s->busy, 0);
  finish_if_stopping(s);
  return r;
}

/* One wrapper a slot: the allocator gets the VM's allocd, not the VM. */
#define WRAP1(i, n) \
  static void *wrap_##n(void *ud, void *p, size_t o, size_t ns) \
  { return wrap(&slots[i], ud, p, o, ns); }
#define WRAP8(k) WRAP1(k*8+0, k##_0) WRAP1(k*8+1, k##_1) \
  WRAP1(k*8+2, k##_2) WRAP1(k*8+3, k##_3) WRAP1(k*8+4, k##_4) \
  WRAP1(k*8+5, k##_5) WRAP1(k*8+6, k##_6) WRAP1(k*8+7, k##_7)
WRAP8(0) WRAP8(1) WRAP8(2) WRAP8(3) WRAP8(4) WRAP8(5) WRAP8(6) WRAP8(7)
WRAP8(8) WRAP8(9) WRAP8(10) WRAP8(11) WRAP8(12) WRAP8(13) WRAP8(14) WRAP8(15)
WRAP8(16) WRAP8(17) WRAP8(18) WRAP8(19) WRAP8(20) WRAP8(21) WRAP8(22) WRAP8(23)
WRAP8(24) WRAP8(25) WRAP8(26) WRAP8(27) WRAP8(28) WRAP8(29) WRAP8(30) WRAP8(31)
#define REF8(k) wrap_##k##_0, wrap_##k##_1, wrap_##k##_2, wrap_##k##_3, \
  wrap_##k##_4, wrap_##k##_5, wrap_##k##_6, wrap_##k##_7
static const lua_Alloc wrappers[SLOTS] = {
  REF8(0), REF8(1), REF8(2), REF8(3), REF8(4), REF8(5), REF8(6), REF8(7),
  REF8(8), REF8(9), REF8(10), REF8(11), REF8(12), REF8(13), REF8(14), REF8(15),
  REF8(16), REF8(17), REF8(18), REF8(19), REF8(20), REF8(21), REF8(22), REF8(23),
  REF8(24), REF8(25), REF8(26), REF8(27), REF8(28), REF8(29), REF8(30), REF8(31)
};

static int is_wrapper(lua_Alloc f)
{
  for (int i = 0; i < SLOTS; i++)
    if (wrappers[i] == f) return 1;
  return 0;
}

/* -- Finding the VMs ---------------------------------------------------- */

/* Read n bytes at a into buf without faulting on an unmapped page. */
static int read_safe(void *buf, uintptr_t a, size_t n)
{
  struct iovec l = { buf, n }, r = { (void *)a, n };
  return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -1;
}

/* A GG_State at a: its thread's global state is the one after it, whose
** main thread is it, whose empty string is one. */
static int is_vm(uintptr_t a)
{
  struct gg_head h;
  if (read_safe(&h, a, sizeof(h)))
    return 0;
  return h.L.gct == (uint8_t)~LJ_TTHREAD &&
	 (uintptr_t)mref(h.L.glref, void) == a + offsetof(struct gg_head, g) &&
	 (uintptr_t)gcref(h.g.mainthref) == a &&
	 h.g.strempty.gct == (uint8_t)~LJ_TSTR && h.g.strempty.len == 0 &&
	 h.g.allocf != NULL;
}

#define MAPS_SIZE	(1 << 20)
static char *maps;		/* /proc/self/maps, read at start. */

static ssize_t read_maps(void)
{
  int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  size_t len = 0;
  ssize_t n;
  if (fd < 0) return -1;
  while (len < MAPS_SIZE - 1 &&
	 (n = read(fd, maps + len, MAPS_SIZE - 1 - len)) > 0)
    len += (size_t)n;
  close(fd);
  maps[len] = 0;
  return (ssize_t)len;
}

static uint8_t *scanbuf;	/* SCAN_CHUNK bytes, mapped for the start. */
#define SCAN_CHUNK	(1 << 20)
#define SCAN_MAX	((uintptr_t)64 << 30)

/* Every VM in [lo, hi): the candidates are the 8-byte aligned words whose
** thread's glref points just past the thread. */
static int scan_range(uintptr_t lo, uintptr_t hi, uintptr_t *found, int max,
		      int n)
{
  const size_t off = offsetof(lua_State, glref);
  const size_t gofs = offsetof(struct gg_head, g);
  for (uintptr_t a = lo; a < hi && n < max; a += SCAN_CHUNK) {
    size_t len = hi - a < SCAN_CHUNK ? hi - a : SCAN_CHUNK;
    if (read_safe(scanbuf, a, len))
      continue;
    for (size_t i = 0; i + off + 8 <= len && n < max; i += 8) {
      uint64_t v;
      memcpy(&v, scanbuf + i + off, 8);
      if (v == a + i + gofs && is_vm(a + i))
	found[n++] = a + i;
    }
  }
  return n;
}

/* fn(ctx, lo, hi, perm, path) for each mapping of /proc/self/maps, until
** it returns non-zero: -1 when the maps cannot be read. */
static int each_mapping(int (*fn)(void *ctx, uintptr_t lo, uintptr_t hi,
				  const char *perm, const char *path),
			void *ctx)
{
  char *line = maps;
  if (read_maps() < 0)
    return -1;
  while (*line) {
    char *end = strchr(line, '\n');
    unsigned long lo, hi;
    char perm[5];
    int pathat = 0;
    if (end) *end = 0;
    if (sscanf(line, "%lx-%lx %4s %*s %*s %*s %n", &lo, &hi, perm,
	       &pathat) >= 3 &&
	fn(ctx, lo, hi, perm, pathat ? line + pathat : ""))
      break;
    if (!end) break;
    line = end + 1;
  }
  return 0;
}

/* The VMs found so far, and room for more. */
struct vm_search {
  uintptr_t *found;
  int max, n;
};

static int search_mapping(void *ctx, uintptr_t lo, uintptr_t hi,
			  const char *perm, const char *path)
{
  struct vm_search *vs = ctx;
  /* A heap's mappings are far below SCAN_MAX; above it are reservations,
  ** such as a sanitizer's shadow memory (terabytes, all but untouched),
  ** which reading would take hours and fault in. */
  if (perm[0] == 'r' && perm[1] == 'w' && hi - lo <= SCAN_MAX &&
      (!*path || !strcmp(path, "[heap]")) &&
      !(lo <= (uintptr_t)scanbuf && (uintptr_t)scanbuf < hi) &&
      !(lo <= (uintptr_t)maps && (uintptr_t)maps < hi))
    vs->n = scan_range(lo, hi, vs->found, vs->max, vs->n);
  if (perm[2] == 'x' && strstr(path, "/libluajit")) {
    lj_text_lo = lo;
    lj_text_hi = hi;
    snprintf(lj_path, sizeof(lj_path), "%s", path);
  }
  return vs->n >= vs->max;
}

static int find_vms(uintptr_t *found, int max)
{
  struct vm_search vs = { found, max, 0 };
  return each_mapping(search_mapping, &vs) < 0 ? -1 : vs.n;
}

#if LJ_HASJIT
/* The flags of each helper of the JIT's call table, as lj_ir.c makes
** them: with the table's {NULL, 0} end, they find it in LuaJIT's file. */
static const uint32_t callflags[IRCALL__MAX] = {
#define CALLFLAGS(cond, name, nargs, kind, type, flags) \
  (nargs)|(CCI_CALL_##kind)|(IRT_##type<<CCI_OTSHIFT)|(flags),
IRCALLDEF(CALLFLAGS)
#undef CALLFLAGS
};

/* Is the call table at buf (len bytes readable there)? */
static int is_callinfo(const uint8_t *buf, size_t len)
{
  CCallInfo ci;
  if (len < sizeof(callinfo))
    return 0;
  for (uint32_t i = 0; i <= IRCALL__MAX; i++) {
    memcpy(&ci, buf + i * sizeof(CCallInfo), sizeof(ci));
    if (i == IRCALL__MAX)
      return ci.func == NULL && ci.flags == 0;
    if (ci.flags != callflags[i])
      return 0;
  }
  return 0;
}

/* In one of the read-only mappings of LuaJIT's file, the call table?
** Copied into callinfo if so: then the search stops. */
static int callinfo_mapping(void *ctx, uintptr_t lo, uintptr_t hi,
			    const char *perm, const char *path)
{
  (void)ctx;
  if (strcmp(path, lj_path) || perm[0] != 'r' || perm[2] == 'x' ||
      hi - lo > SCAN_MAX)
    return 0;
  /* Chunks overlap by a table, so that none is cut. */
  for (uintptr_t a = lo; a < hi; a += SCAN_CHUNK - sizeof(callinfo)) {
    size_t len = hi - a < SCAN_CHUNK ? hi - a : SCAN_CHUNK;
    if (read_safe(scanbuf, a, len))
      return 0;
    for (size_t i = 0; i + sizeof(callinfo) <= len; i += 8)
      if (is_callinfo(scanbuf + i, len - i)) {
	memcpy(callinfo, scanbuf + i, sizeof(callinfo));
	/* The helpers are LuaJIT's code (or the C library's). */
	have_callinfo =
	  (uintptr_t)callinfo[IRCALL_lj_tab_new1].func >= lj_text_lo &&
	  (uintptr_t)callinfo[IRCALL_lj_tab_new1].func < lj_text_hi;
	return 1;
      }
    if (len < SCAN_CHUNK)
      break;
  }
  return 0;
}

/* Copy lj_ir_callinfo from the read-only data of LuaJIT's file (relocated
** there: the helpers' addresses are this process's). Without it, traces'
** allocations stay charged to their trace. */
static void find_callinfo(void)
{
  have_callinfo = 0;
  if (*lj_path)
    each_mapping(callinfo_mapping, NULL);
}
#endif

/* -- What the CLI calls ----------------------------------------------- */

/* The VMs ljmprof_attach_find saw, checked again by the start. */
static uintptr_t found[SLOTS];
static int nfound = -1;

/* recorder.h says what the entry points do. */
EXPORT int ljmprof_attach_find(void)
{
  int n;
  why[0] = 0;
  scanbuf = map(SCAN_CHUNK);
  maps = map(MAPS_SIZE);
  if (!scanbuf || !maps) {
    say("no memory to look for the VMs: %s", strerror(errno));
    n = -1;
  } else if ((n = find_vms(found, SLOTS)) < 0) {
    say("cannot read /proc/self/maps: %s", strerror(errno));
  } else if (n == 0) {
    say("no LuaJIT VM found in the process");
  } else {
#if LJ_HASJIT
    find_callinfo();
#endif
    say("%d VM(s) found", n);
  }
  if (scanbuf) munmap(scanbuf, SCAN_CHUNK);
  if (maps) munmap(maps, MAPS_SIZE);
  scanbuf = NULL;
  maps = NULL;
  nfound = n;
  return n;
}

EXPORT int ljmprof_attach_start(const char *tmpl, const char *manifest)
{
  int n = nfound, attached = 0, already = 0, gone = 0;
  const char *err;
  why[0] = 0;
  names[0] = 0;
  nfound = -1;
  if ((err = ljm_template_check(tmpl))) {
    say("the output name: %s", err);
    return -1;
  }
  if (n < 0) {
    say("no VMs looked for (ljmprof_attach_find first)");
    return -1;
  }
  for (int i = 0; i < n; i++) {
    struct gg_head *gg = (struct gg_head *)found[i];
    struct slot *s = NULL;
    char path[4096];
    struct ljm_name k = { getpid(), 0, 1, 1, 0 };
    lua_Alloc cur;
    int j;
    /* Closed since it was found, its memory maybe another's now. */
    if (!is_vm(found[i])) { gone++; continue; }
    cur = gg->g.allocf;
    if (is_wrapper(cur)) { already++; continue; }
    for (j = 0; j < SLOTS; j++)
      if (atomic_load(&slots[j].state) == SLOT_FREE ||
	  (atomic_load(&slots[j].state) == SLOT_DONE && slots[j].closed &&
	   !atomic_load(&slots[j].busy))) {
	s = &slots[j];
	break;
      }
    if (!s) {
      say("more than %d VMs: the others are not attached", SLOTS);
      break;
    }
    if ((!s->buf && !(s->buf = map(BUF_SIZE))) ||
	(!s->protos && !(s->protos = map(PROTO_CACHE * sizeof(uintptr_t)))) ||
	(!s->traces && !(s->traces = map(TRACE_CACHE * sizeof(uintptr_t)))) ||
	(!s->lines &&
	 !(s->lines = map(LINE_CACHE * sizeof(struct siteline)))) ||
	(opt_stacks && !s->protogen &&
	 !(s->protogen = map(PROTO_CACHE * sizeof(uint16_t)))) ||
	(opt_stacks && !s->frames &&
	 !(s->frames = map((LJM_STACK_DEPTH_MAX + 1) *
			   sizeof(struct frame))))) {
      say("no memory for a VM's buffers: %s", strerror(errno));
      break;
    }
    memset(s->protos, 0, PROTO_CACHE * sizeof(uintptr_t));
    memset(s->traces, 0, TRACE_CACHE * sizeof(uintptr_t));
    memset(s->lines, 0, LINE_CACHE * sizeof(struct siteline));
    s->tracegen = 0;
    k.vm = (unsigned)(attached + 1);	/* This attach's VMs, in address
					   order. */
    if ((errno = ljm_out_create(&s->out, path, sizeof(path), tmpl, &k,
				NULL))) {
      say("cannot create %.400s: %s", path, ljm_out_strerror(errno));
      break;
    }
    if (*manifest)
      ljm_manifest_add(manifest, path);
    {
      size_t used = strlen(names), len = strlen(path);
      if (used + len + 2 <= sizeof(names)) {
	memcpy(names + used, path, len);
	names[used + len] = '\n';
	names[used + len + 1] = 0;
      }
    }
    s->gg = gg;
    s->closed = 0;
    atomic_store(&s->closing, 0);
    s->orig = cur;
    s->luajit_pool = (uintptr_t)cur >= lj_text_lo &&
		     (uintptr_t)cur < lj_text_hi;
    s->len = 0;
    s->err = 0;
    s->events = 0;
    /* A sampled stream has no start snapshot: its frees are those of
    ** the blocks it sampled. */
    s->mean = opt_sample;
    s->snap_owed = opt_snapshot && !s->mean;
    s->depth = opt_stacks;
    s->nnodes = 0;
    s->ext = s->snap_owed || s->mean || s->depth;

    s->t0 = now_ns();
    s->rng = seed((uintptr_t)gg);
    s->left = s->mean ? next_sample(s) : 0;
    s->setn = 0;
    put_header(s, 's');
    put_byte(s, LJM_EV_EPILOGUE);	/* Symbols come as events need them. */
    put_header(s, 'm');
    if (s->depth)
      put_info(s, LJM_INFO_DEPTH, s->depth);
    if (s->ext)
      put_time(s);
    if (s->mean)
      put_info(s, LJM_INFO_SAMPLE, s->mean);
    atomic_store(&s->busy, 0);
    atomic_store(&s->state, SLOT_REC);
    gg->g.allocf = wrappers[j];
    attached++;
  }
  if (n == 0 || gone == n)
    say("no LuaJIT VM found in the process");
  else if (attached == 0 && already)
    say("every VM of the process is attached already");
  else if (attached == n - already - gone)
    say("%d VM(s) attached", attached);
  /* else why says what stopped the loop. */
  return attached ? attached : -1;
}

EXPORT int ljmprof_attach_option(const char *name, uintptr_t value)
{
  if (!strcmp(name, "snapshot")) {
    opt_snapshot = value != 0;
    return 0;
  }
  if (!strcmp(name, "sample")) {
    opt_sample = value;
    return 0;
  }
  if (!strcmp(name, "stacks")) {
    opt_stacks = value > LJM_STACK_DEPTH_MAX ? LJM_STACK_DEPTH_MAX :
		 (uint32_t)value;
    return 0;
  }
  say("no option %.100s", name);
  return -1;
}

EXPORT int ljmprof_attach_stop(void)
{
  int n = 0;
  uint64_t events = 0;
  for (int i = 0; i < SLOTS; i++) {
    struct slot *s = &slots[i];
    int st = SLOT_REC;
    if (!atomic_compare_exchange_strong(&s->state, &st, SLOT_STOPPING))
      continue;
    /* The host may have put its own allocator over ours: leave it, ours
    ** goes on forwarding behind it. */
    if (!atomic_load(&s->closing) && s->gg->g.allocf == wrappers[i])
      s->gg->g.allocf = s->orig;
    events += s->events;
    if (!atomic_load(&s->busy))
      finish_if_stopping(s);
    n++;
  }
  snprintf(why, sizeof(why), "%d VM(s) detached, %llu events", n,
	   (unsigned long long)events);
  return n;
}

EXPORT const char *ljmprof_attach_names(void)
{
  return names;
}

EXPORT const char *ljmprof_attach_why(void)
{
  return why;
}
