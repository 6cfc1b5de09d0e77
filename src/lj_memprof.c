/*
** Memory profiler: every allocation, reallocation and free of a VM, with
** its source, as a memprof (version 3) stream, or with call stacks in
** the profile extension. This file starts and stops a profiler, hears
** of the VM's life (new states, closing, new prototypes and traces) and
** has the public API (ljmprof.h); lj_memprof_int.h maps the others.
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
**
** While profiling, the VM's allocator is wrapped (lj_memprof_event.c):
** g->allocd points to the profiler state, which g->memprof (a field
** added by a patch) also points to: the state hangs off the VM, no
** global, no lock, one profiler per VM. A host may set an allocator of
** its own over the wrapper while profiling; g->memprof still finds the
** state. A stopped profiler's state stays, as a pass-through to the
** allocator it wrapped, until the VM is gone (see mp_stop). A sampling
** profiler on the VM's own allocator wraps nothing but frees: the VM
** counts the bytes itself (lj_memprof_range.c).
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
#if LJ_HASJIT
#include "lj_jit.h"
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

/* -- Start and stop ------------------------------------------------------ */

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
  lj_memprof_stackfree(mp);
  lj_memprof_samplefree(mp);
  lj_memprof_tracemapsfree(mp);
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
  if (mp->buf == NULL || (depth && !lj_memprof_stackinit(mp, depth)) ||
      (opt->sample && !lj_memprof_sampleinit(mp, opt))) {
    mp_release(mp);
    free(mp);
    return NULL;
  }
  mp->g = g;
  mp->graphstart = opt->graph != 0;
  mp->pos = mp->buf;
  mp->end = mp->buf + sz;
  mp->timed = depth != 0;
  /* Sampled events are rare: each may look at the clock. */
  mp->tickbytes = opt->sample ? 0 : MP_TICKBYTES;
  mp->rss = mp->timed ? opt->rss : NULL;
  mp->mapmsp = mp->timed ? lj_memprof_ownalloc(g) : NULL;
  mp->hardlim = mp->end - MP_EVMAX -
		(mp->timed ? (mp->rss || mp->mapmsp ? MP_MARKRSS : MP_MARKMAX) :
		 0);
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
      lj_memprof_heapsnap(mp, LJM_SNAPSHOT_START, mp->graphstart);
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
    if (mp_enter(mp) && !mp->err && mp_ptmarked(mp, pt)) {
      if (mp->stk) lj_memprof_protonew(mp->stk, (uintptr_t)pt);
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
      mp_linesclear(mp, (int32_t)T->traceno);  /* Maybe an old one's. */
      lj_memprof_tracemap(mp, T);
      if (mp->stk) {
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
  return ljmprof_snapshotx(L, 0);
}

LUA_API int ljmprof_snapshotx(lua_State *L, int flags)
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
    lj_memprof_heapsnap(mp, LJM_SNAPSHOT_LATER,
			(flags & LJMPROF_SNAPSHOT_GRAPH) != 0);
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
