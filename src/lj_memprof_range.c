/*
** Memory profiler: the VM's allocator pair while profiling, and the
** sampled blocks in a range of their own.
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
**
** Where the VM's allocator is its own (lj_alloc_f, the case of
** luaL_newstate), the sampled profiler does not wrap allocations at all:
** the VM's byte counter (g->mem_left, patch 0011) costs one subtraction
** and one branch where the VM allocates, and new blocks go straight to
** g->mem_newf. When the counter runs out, lj_memprof_alloc takes the
** block from the VM's arena: a part of one range of the address space,
** [MP_ARBASE, MP_ARBASE + MP_ARSIZE), reserved once per process, below
** every mapping that mmap places from the top (the VM's own allocator's
** among them). A free or a reallocation goes through g->allocf, which is
** mp_sfree: one compare with the range's end tells every block of the
** VM's allocator (addresses above it) from a sampled one, with no lookup
** and nothing read but the address; what is below the end and not in the
** range goes on to lj_alloc_f. Each sampled block has a header: its
** arena, whose profiler writes the free if it is the one that sampled
** the block (MPArena.gen), and its size. The VM's blocks in the range
** are never touched by anything but this code. A C module allocating
** through the pair lua_getallocf gives it bypasses the VM's allocation
** functions: while sampling, that pair is mp_modalloc's, which counts
** the module's bytes on the counter too (patch 0013).
**
** An arena is the VM's, not a profiler's: sampled blocks outlive the
** profiler that sampled them (mp_sfree stays the VM's allocator until
** close_state, lj_memprof_unwrap), and it passes from state to state
** (mp->arena of the newest). Small blocks (with their header, up to
** 64 KiB) come from 1 MiB chunks in power-of-two classes with a free list
** each; larger ones are runs of 64 KiB of their own, whose pages go back
** to the system when they are freed and whose range is kept for another
** large sample. Chunks and runs are carved from the range by one atomic
** add: VMs of several threads need no lock, and a forked child inherits
** a consistent range. The range is given up for good when a VM is gone
** (its pages, not its addresses: MP_ARSIZE is 1 TiB). The range is
** reserved as it is used: 4 GiB first, then as much again each time it
** is full, next to it (under qemu-user each reserved page costs the
** emulator memory and time: 1 TiB at once took 7 s and 6 GB). If the
** range cannot be reserved (taken, or an address-space limit: RLIMIT_AS
** is left to the host) or the VM's allocator is another, sampling wraps
** the allocator (lj_memprof_sampleallocf, lj_memprof_sample.c).
*/

#define lj_memprof_range_c
#define LUA_CORE

/* For MAP_FIXED_NOREPLACE. Must be defined before any system includes. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "lj_obj.h"
#include "lj_memprof.h"

#if LJ_HASMEMPROF

#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "lj_gc.h"
#include "lj_alloc.h"
#include "lj_memprof_format.h"
#include "lj_memprof_int.h"

/* -- The range and its arenas ------------------------------------------- */

#if MP_ARENA

#define MP_ARBASE	((uintptr_t)1 << 40)
#define MP_ARSIZE	((uintptr_t)1 << 40)	/* At most. */
#define MP_ARFIRST	((uintptr_t)1 << 32)	/* Reserved first. */
#define MP_ARCHUNK	((size_t)1 << 20)	/* Small blocks' chunks. */
#define MP_ARRUN	((size_t)1 << 16)	/* Large blocks round to it. */
#define MP_ARMINC	5	/* Classes 2^5 (32 bytes) .. */
#define MP_ARMAXC	16	/* .. 2^16, header included. */

/* Before each sampled block. 16 bytes: the block stays 16-aligned. */
typedef struct MPArHdr {
  struct MPArena *arena;	/* Its arena. */
  uint32_t gen;			/* The profiler that sampled it (MPArena). */
  uint32_t units;		/* Its 32-byte units, header included. */
} MPArHdr;

#define MP_ARUNIT	5
#define mp_arsize(h)	((size_t)(h)->units << MP_ARUNIT)
#define MP_ARMAX	(((size_t)UINT32_MAX << MP_ARUNIT) - MP_ARRUN)

typedef struct MPArRun {
  uintptr_t addr;
  size_t size;
} MPArRun;

typedef struct MPArena {
  MemProf *mp;			/* The profiler writing its frees, or NULL: */
  uint32_t gen;			/* those of the blocks it sampled. */
  uint8_t *cur, *end;		/* What is left of the small blocks' chunk. */
  MPArHdr *freel[MP_ARMAXC + 1];  /* Free small blocks by class. */
  MPArRun *runs;		/* Every chunk and run carved, */
  uint32_t nruns, szruns;	/* given back when the VM is gone. */
  MPArRun *idle;		/* Free large runs. */
  uint32_t nidle, szidle;
} MPArena;

/* The range: its ends once reserved (before, no mp_sfree is in use; the
** upper end grows as the range does), the next free address, and 0
** untried, 1 being reserved, 2 reserved, 3 failed; 1 while a thread
** grows it; 1 when it cannot grow. */
static uintptr_t mp_arlo = ~(uintptr_t)0, mp_arhi;
static uintptr_t mp_artop = MP_ARBASE;
static int mp_arstate, mp_argrowing, mp_arfull;

/* The first reservation's size; check_memprof lowers it, to make the
** range grow. Hidden, as lj_memprof_range_max below. */
LJ_DATA size_t lj_memprof_range_first;
size_t lj_memprof_range_first = MP_ARFIRST;

#ifndef MAP_FIXED_NOREPLACE  /* Linux 4.17: older headers lack it. */
#define MAP_FIXED_NOREPLACE	0x100000
#endif

/* Another thread is at the range: a system call's wait, a bounded one (a
** child forked while a thread of its parent was at it waits for nothing:
** it gives up, and samples through the wrapper). */
#define MP_ARWAITS	100000

/* Reserve size bytes at addr, exactly there and over nothing. */
static int mp_armap(uintptr_t addr, size_t size)
{
  void *p = mmap((void *)addr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		 MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
  if (p != MAP_FAILED && p != (void *)addr) {
    munmap(p, size);  /* An old kernel took the address as a hint. */
    p = MAP_FAILED;
  }
  return p != MAP_FAILED;
}

/* Reserve the range's first part, once per process. 1 if it is there. */
static int mp_arreserve(void)
{
  int st = __atomic_load_n(&mp_arstate, __ATOMIC_ACQUIRE), n = 0;
  if (st == 0) {
    int zero = 0;
    if (__atomic_compare_exchange_n(&mp_arstate, &zero, 1, 0,
				    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
      struct rlimit rl;
      size_t first = lj_memprof_range_first;
      if (first == 0 || first > MP_ARSIZE) first = MP_ARFIRST;
      first = (first + MP_ARCHUNK - 1) & ~(MP_ARCHUNK - 1);
      /* PROT_NONE costs no memory, only addresses: none while the host
      ** has a limit on them. */
      st = 3;
      if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur == RLIM_INFINITY &&
	  mp_armap(MP_ARBASE, first)) {
	mp_arlo = MP_ARBASE;
	__atomic_store_n(&mp_arhi, MP_ARBASE + first, __ATOMIC_RELEASE);
	st = 2;
      }
      __atomic_store_n(&mp_arstate, st, __ATOMIC_RELEASE);
    } else {
      st = zero;
    }
  }
  while (st == 1 && ++n < MP_ARWAITS) {
    sched_yield();
    st = __atomic_load_n(&mp_arstate, __ATOMIC_ACQUIRE);
  }
  return st == 2;
}

/* The range reserved up to end at least: it grows by what it has, next
** to itself, up to MP_ARSIZE. 0 if it cannot (something else is mapped
** there, or no addresses are left, or another thread is at it too long). */
static int mp_argrow(uintptr_t end)
{
  int n = 0, ok = 0;
  if (__atomic_load_n(&mp_arhi, __ATOMIC_ACQUIRE) >= end) return 1;
  while (__atomic_exchange_n(&mp_argrowing, 1, __ATOMIC_ACQUIRE))
    if (++n == MP_ARWAITS) return 0;
    else sched_yield();
  while (!mp_arfull) {  /* end is at most MP_ARBASE + MP_ARSIZE. */
    uintptr_t hi = __atomic_load_n(&mp_arhi, __ATOMIC_RELAXED);
    size_t size = hi - MP_ARBASE, need = end - hi;
    if (hi >= end) { ok = 1; break; }
    if (size > MP_ARBASE + MP_ARSIZE - hi) size = MP_ARBASE + MP_ARSIZE - hi;
    if (size < need) size = need;
    /* As much again, else what is needed. */
    if (mp_armap(hi, size) || (need < size && mp_armap(hi, size = need)))
      __atomic_store_n(&mp_arhi, hi + size, __ATOMIC_RELEASE);
    else
      mp_arfull = 1;
  }
  __atomic_store_n(&mp_argrowing, 0, __ATOMIC_RELEASE);
  return ok;
}

/* Room for one more entry in a list of runs. 0 if out of memory. */
static int mp_arroom(MPArRun **v, uint32_t n, uint32_t *sz)
{
  if (n == *sz) {
    uint32_t nsz = *sz ? 2 * *sz : 16;
    MPArRun *nv = (MPArRun *)realloc(*v, nsz * sizeof(MPArRun));
    if (nv == NULL) return 0;
    *v = nv;
    *sz = nsz;
  }
  return 1;
}

/* The part of the range that is carved; check_memprof lowers it, to use
** it up. Hidden, as lj_memprof_nodes_max: not the shim's to export. */
LJ_DATA size_t lj_memprof_range_max;
size_t lj_memprof_range_max = MP_ARSIZE;

/* size bytes of the range, usable. NULL if it is used up. */
static void *mp_arcarve(MPArena *a, size_t size)
{
  uintptr_t p;
  size_t lim = lj_memprof_range_max < MP_ARSIZE ? lj_memprof_range_max :
		MP_ARSIZE;
  if (size > lim || !mp_arroom(&a->runs, a->nruns, &a->szruns))
    return NULL;
  p = __atomic_fetch_add(&mp_artop, size, __ATOMIC_RELAXED);
  if (p > MP_ARBASE + lim - size || !mp_argrow(p + size))
    return NULL;  /* Used up (mp_artop stays past the end). */
  if (mprotect((void *)p, size, PROT_READ | PROT_WRITE) != 0)
    return NULL;  /* No memory: these addresses stay unused. */
  a->runs[a->nruns].addr = p;
  a->runs[a->nruns].size = size;
  a->nruns++;
  return (void *)p;
}

/* A block of nsize bytes in the arena, or NULL. */
static void *mp_aralloc(MPArena *a, size_t nsize)
{
  size_t t = nsize + sizeof(MPArHdr);
  MPArHdr *h;
  if (nsize > MP_ARMAX) return NULL;
  if (t <= ((size_t)1 << MP_ARMAXC)) {
    uint32_t c = MP_ARMINC;
    size_t sz;
    while (((size_t)1 << c) < t) c++;
    sz = (size_t)1 << c;
    h = a->freel[c];
    if (h != NULL) {
      a->freel[c] = *(MPArHdr **)(void *)(h + 1);
    } else {
      if ((size_t)(a->end - a->cur) < sz) {
	uint8_t *ch = (uint8_t *)mp_arcarve(a, MP_ARCHUNK);
	if (ch == NULL) return NULL;
	a->cur = ch;
	a->end = ch + MP_ARCHUNK;
      }
      h = (MPArHdr *)(void *)a->cur;
      a->cur += sz;
    }
    h->units = (uint32_t)(sz >> MP_ARUNIT);
  } else {
    size_t sz = (t + MP_ARRUN - 1) & ~(MP_ARRUN - 1);
    uint32_t i, best = a->nidle;
    /* The smallest idle run that fits, if it is not twice too large. */
    for (i = 0; i < a->nidle; i++)
      if (a->idle[i].size >= sz && a->idle[i].size / 2 < sz &&
	  (best == a->nidle || a->idle[i].size < a->idle[best].size))
	best = i;
    if (best < a->nidle) {
      h = (MPArHdr *)a->idle[best].addr;
      sz = a->idle[best].size;
      a->idle[best] = a->idle[--a->nidle];
    } else {
      h = (MPArHdr *)mp_arcarve(a, sz);
      if (h == NULL) return NULL;
    }
    h->units = (uint32_t)(sz >> MP_ARUNIT);
  }
  h->arena = a;
  h->gen = a->gen;
  return h + 1;
}

/* Is ptr a sampled block (in the range)? */
static LJ_AINLINE int mp_inarena(const void *ptr)
{
  return (uintptr_t)ptr >= MP_ARBASE &&
	 (uintptr_t)ptr < __atomic_load_n(&mp_arhi, __ATOMIC_RELAXED);
}

/* Free the sampled block ptr, with its event if the profiler that
** sampled it records. */
static void mp_arfree(void *ptr, size_t osize)
{
  MPArHdr *h = (MPArHdr *)ptr - 1;
  MPArena *a = h->arena;
  MemProf *mp = a->mp;
  if (mp != NULL && h->gen == a->gen) {
    if (LJ_LIKELY(mp_enter(mp))) {
      mp_freetrace(mp);
      lj_memprof_record(mp, LJM_EV_FREE, ptr, osize, NULL, 0);
    }
    mp_leave(mp);
  }
  if (mp_arsize(h) <= ((size_t)1 << MP_ARMAXC)) {
    uint32_t c = (uint32_t)__builtin_ctzll((unsigned long long)mp_arsize(h));
    *(MPArHdr **)(void *)(h + 1) = a->freel[c];
    a->freel[c] = h;
  } else {
    size_t sz = mp_arsize(h);
    (void)madvise(h, sz, MADV_DONTNEED);  /* Its pages go back. */
    if (mp_arroom(&a->idle, a->nidle, &a->szidle)) {
      a->idle[a->nidle].addr = (uintptr_t)h;
      a->idle[a->nidle].size = sz;
      a->nidle++;
    }  /* Else its addresses stay unused. */
  }
}

/* The VM is gone: every page of its arena goes back (not the addresses). */
static void mp_ardestroy(MPArena *a)
{
  uint32_t i;
  for (i = 0; i < a->nruns; i++)
    (void)mmap((void *)a->runs[i].addr, a->runs[i].size, PROT_NONE,
	       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  free(a->runs);
  free(a->idle);
  free(a);
}

/* -- The VM's allocator pair -------------------------------------------- */

/* A free or reallocation below the range's end: in the range, or not. */
static LJ_NOINLINE void *mp_sfreeslow(void *ud, void *ptr, size_t osize,
				      size_t nsize)
{
  void *nptr;
  if (!mp_inarena(ptr))
    return lj_alloc_f(ud, ptr, osize, nsize);
  if (nsize == 0) {
    mp_arfree(ptr, osize);
    return NULL;
  }
  /* A reallocation that the counter did not sample: the new block is the
  ** VM allocator's, the sampled one is freed. */
  nptr = lj_alloc_f(ud, NULL, 0, nsize);
  if (nptr == NULL) return NULL;  /* Failed: nothing changed. */
  memcpy(nptr, ptr, osize < nsize ? osize : nsize);
  mp_arfree(ptr, osize);
  return nptr;
}

/*
** The VM's allocator while its sampled blocks are in the range: the pair
** is (mp_sfree, the VM allocator's own state). mmap places the VM
** allocator's memory from the top down, above the range: the test is
** one compare with its end. Where its memory is below the range (under
** valgrind, whose mappings grow from the bottom up), mp_sfreeup tests
** the other end.
*/
static void *mp_sfree(void *ud, void *ptr, size_t osize, size_t nsize)
{
  uintptr_t hi = __atomic_load_n(&mp_arhi, __ATOMIC_RELAXED);
  if (LJ_UNLIKELY((uintptr_t)ptr < hi))
    return mp_sfreeslow(ud, ptr, osize, nsize);
  return lj_alloc_f(ud, ptr, osize, nsize);
}

static void *mp_sfreeup(void *ud, void *ptr, size_t osize, size_t nsize)
{
  if (LJ_UNLIKELY((uintptr_t)ptr >= mp_arlo))
    return mp_sfreeslow(ud, ptr, osize, nsize);
  return lj_alloc_f(ud, ptr, osize, nsize);
}

/* Is f one of the two? */
#define mp_issfree(f)	((f) == mp_sfree || (f) == mp_sfreeup)

#endif

/* Set the VM's allocator pair; new blocks go through it too, but for
** mp_sfree's, which takes them to the VM allocator's own. */
static void mp_setpair(global_State *g, lua_Alloc f, void *d)
{
  g->allocf = f;
  g->allocd = d;
#if MP_ARENA
  g->mem_newf = mp_issfree(f) ? lj_alloc_f : f;
#elif MP_COUNTER
  g->mem_newf = f;
#endif
}

/* The profiler's wrapper over the pair in mp->allocf, mp->allocd. */
static void mp_wrap(global_State *g, MemProf *mp)
{
  mp_setpair(g, mp_wrapper(mp), mp);
  mp_setleft(g, MP_ALWAYS);  /* Every allocation stores its thread. */
}

#if MP_ARENA

/*
** Sampling goes on with the wrapper (lj_memprof_sampleallocf) over the pair in
** force, from this sample on, when the arena cannot be used:
**
** The host has put an allocator of its own over the pair since the start
** (lua_setallocf over what lua_getallocf gave it: a wrapper that counts
** and caps the VM's memory). A block from the arena would bypass it, and
** its free would not: the host would count the free of a block it never
** made, and a capping host refuses everything once its count wraps
** around. With the wrapper on top, as when the host's allocator was there
** first, every new block, sampled or not, goes through the host's. The
** arena's blocks taken before it are freed through it (its pair calls
** mp_sfree's), as the VM allocator's blocks from before it would be
** without a profiler: the host sees the calls it would see without one.
**
** Or the range is used up (each VM that sampled keeps 1 MiB of it at
** least, for good: a million VMs one after another use up its 1 TiB), or
** no memory for a block there: the wrapper's blocks are the VM
** allocator's, under mp_sfree's pair, which the arena's go on through.
*/
static void *mp_samplewrap(global_State *g, MemProf *mp, void *ptr,
			   size_t osize, size_t nsize)
{
  mp->fast = 0;
  mp->allocf = g->allocf;
  mp->allocd = g->allocd;
  mp_wrap(g, mp);
  mp->sleft = 0;  /* This one was due: the wrapper's counter takes it. */
  return lj_memprof_sampleallocf(mp, ptr, osize, nsize);
}

/*
** The counter ran out: a sample. The new block is the arena's, a
** reallocated one moves there (its old block is freed, with an event if
** it was sampled), and the block is recorded as an allocation. The safe
** point of a sampled profiler is here.
*/
static LJ_NOINLINE void *mp_sampledue(lua_State *L, MemProf *mp, void *ptr,
				      size_t osize, size_t nsize)
{
  global_State *g = G(L);
  void *nptr;
  if (LJ_UNLIKELY(*mp->pollflag != mp->pollseen) && !mp_insweep(g)) {
    if (mp_enter(mp)) {
      mp->pollseen = *mp->pollflag;
      mp->poll(mainthread(g), mp->ctx);
    }
    mp_leave(mp);
    if (mp_get(g) != mp)  /* Stopped or replaced: as any allocation. */
      return g->allocf(g->allocd, ptr, osize, nsize);
  }
  if (LJ_UNLIKELY(!mp_issfree(g->allocf)))  /* The host's allocator. */
    return mp_samplewrap(g, mp, ptr, osize, nsize);
  mp_setleft(g, lj_memprof_nextsample(mp));
  nptr = mp_aralloc(mp->arena, nsize);
  if (nptr == NULL)  /* The range is used up: through the wrapper. */
    return mp_samplewrap(g, mp, ptr, osize, nsize);
  if (ptr != NULL) {
    memcpy(nptr, ptr, osize < nsize ? osize : nsize);
    if (mp_inarena(ptr))
      mp_arfree(ptr, osize);
    else
      g->allocf(g->allocd, ptr, osize, 0);
  }
  if (LJ_LIKELY(mp_enter(mp)) &&
      (LJ_LIKELY(mp->pos <= mp->lim) || lj_memprof_full(mp)) &&
      !lj_memprof_stackevent(mp, LJM_EV_ALLOC, ptr, 0, nptr, nsize))
    lj_memprof_event(mp, LJM_EV_ALLOC, ptr, 0, nptr, nsize);
  mp_leave(mp);
  return nptr;
}

#endif

#if MP_COUNTER
void *lj_memprof_alloc(lua_State *L, void *p, GCSize osz, GCSize nsz)
{
  global_State *g = G(L);
  MemProf *mp;
  setgcref(g->mem_L, obj2gco(L));
  if (LJ_LIKELY(g->mem_left < MP_ALWAYS / 2)) {  /* Every event: first. */
    g->mem_left = MP_ALWAYS;
    return g->allocf(g->allocd, p, osz, nsz);
  }
  mp = mp_get(g);
#if MP_ARENA
  if (mp != NULL && mp->fast)
    return mp_sampledue(L, mp, p, osz, nsz);
#endif
  mp_setleft(g, mp != NULL ? MP_ALWAYS : INT64_MAX);
  return g->allocf(g->allocd, p, osz, nsz);
}

#if MP_ARENA
/*
** The pair lua_getallocf gives while a sampled profiler uses the VM's
** counter: (mp_modalloc, that profiler). A C module allocating
** through it (lpeg's programs, a binding's buffers) takes its bytes from
** the counter as the VM's own allocations do, and a sample due there is
** made as theirs are, charged to the thread running the module's
** function (g->cur_L). While the VM's pair is no longer the one it
** stands for (the host put its own allocator over it), it is just that
** pair, mp_sfree's: no sample, and no call back into the host's
** allocator, which may be calling this one. A profiler's state lives as
** long as the VM (lj_memprof_free), so the pair stays valid as the VM's
** own would; a free goes to mp_sfree, which knows the sampled blocks.
*/
static void *mp_modalloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
  MemProf *mp = (MemProf *)ud;
  global_State *g = mp->g;
  if (nsize > 0 && g->allocf == mp->modf && g->allocd == mp->modd &&
      lj_memprof_due(g, nsize)) {
    lua_State *L = (lua_State *)gcref(g->cur_L);
    if (L == NULL) L = (lua_State *)gcref(g->mem_L);
    if (L == NULL) L = mainthread(g);
    return lj_memprof_alloc(L, ptr, (GCSize)osize, (GCSize)nsize);
  }
  return mp->modf(mp->modd, ptr, osize, nsize);
}
#endif

lua_Alloc lj_memprof_getallocf(global_State *g, void **ud)
{
#if MP_ARENA
  MemProf *mp = mp_get(g);
  if (mp != NULL && mp->fast && mp_issfree(g->allocf)) {
    mp->modf = g->allocf;
    mp->modd = g->allocd;
    if (ud) *ud = mp;
    return mp_modalloc;
  }
#endif
  if (ud) *ud = g->allocd;
  return g->allocf;
}

void lj_memprof_unwrap(global_State *g)
{
#if MP_ARENA
  /* The host may have set the modules' pair it was given back. */
  if (g->allocf == mp_modalloc)
    mp_setpair(g, ((MemProf *)g->allocd)->modf,
	       ((MemProf *)g->allocd)->modd);
  if (mp_issfree(g->allocf)) mp_setpair(g, lj_alloc_f, g->allocd);
#else
  UNUSED(g);
#endif
}
#endif

/* The state of the VM's allocator if it is LuaJIT's own (or a sampled
** profiler's pair over it), for MAPPED; a host's allocator: NULL. */
void *lj_memprof_ownalloc(global_State *g)
{
#ifndef LUAJIT_USE_SYSMALLOC
  if (g->allocf == lj_alloc_f
#if MP_ARENA
      || mp_issfree(g->allocf)
#endif
     )
    return g->allocd;
#else
  UNUSED(g);
#endif
  return NULL;
}

/* The VM's allocator pair and counter for the new profiler. */
void lj_memprof_hook(global_State *g, MemProf *mp)
{
  mp->allocf = g->allocf;
  mp->allocd = g->allocd;
#if MP_ARENA
  /* Sampling with the VM's own allocator (or the pair an earlier sampled
  ** profiler left): its counter and the arena, no wrapper. */
  if (mp->smp && (g->allocf == lj_alloc_f || mp_issfree(g->allocf)) &&
      mp_arreserve()) {
    if (mp->arena == NULL)
      mp->arena = (MPArena *)calloc(1, sizeof(MPArena));
    mp->fast = mp->arena != NULL;
  }
  if (mp->fast) {
    mp->arena->mp = mp;
    mp->arena->gen++;  /* The blocks sampled before are not this one's. */
    mp_setpair(g, mp_issfree(g->allocf) ? g->allocf :
		  (uintptr_t)g->allocd >= MP_ARBASE + MP_ARSIZE ? mp_sfree :
		  mp_sfreeup,
	       g->allocd);
    mp_setleft(g, mp->sleft);
  } else
#endif
  {
    mp_wrap(g, mp);
  }
}

/*
** The VM without the profiler: its allocator back if the wrapper is on
** top (a sampled profiler's mp_sfree stays: its blocks are still there),
** its counter at rest, frees of the arena's blocks no longer written.
*/
void lj_memprof_unhook(global_State *g, MemProf *mp)
{
  if (mp_ontop(g, mp)) mp_setpair(g, mp->allocf, mp->allocd);
  mp_setleft(g, INT64_MAX);
#if MP_ARENA
  if (mp->arena != NULL && mp->arena->mp == mp) mp->arena->mp = NULL;
#endif
}

/* The VM is gone: every page of its arena goes back (not the addresses). */
void lj_memprof_rangefree(MemProf *mp)
{
#if MP_ARENA
  if (mp->arena != NULL) {
    mp_ardestroy(mp->arena);
    mp->arena = NULL;
  }
#else
  UNUSED(mp);
#endif
}

#endif
