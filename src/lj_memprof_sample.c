/*
** Memory profiler: sampling, a sample of the allocations by their bytes.
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
**
** The counter that draws the samples, the set of the sampled blocks (so
** that their frees are written), the allocator wrapper that samples, and
** the prototypes and traces a sampled stream announces only when a
** sample names them. Where the VM's own allocator is the pair, the VM
** counts the bytes and the sampled blocks live in a range of their own:
** lj_memprof_range.c.
*/

#define lj_memprof_sample_c
#define LUA_CORE

#include "lj_obj.h"
#include "lj_memprof.h"

#if LJ_HASMEMPROF

#include <math.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "lj_gc.h"
#if LJ_HASJIT
#include "lj_jit.h"
#include "lj_trace.h"
#endif
#include "lj_memprof_format.h"
#include "lj_memprof_int.h"

/* -- Sampling ------------------------------------------------------------- */

/*
** With a mean m (ljmprof_opt.sample), an allocation is recorded when a
** byte counter, drawn from an exponential distribution of mean m, runs
** out. The distribution has no memory, so a block of s bytes is recorded
** with probability 1 - exp(-s/m) whatever came before it, which the
** reader undoes. mp->sleft is the counter: an allocation that does not
** use it up costs a subtraction and a compare. A reallocation of an
** unsampled block counts its new size and, sampled, is written as an
** allocation of the new block.
**
** Sampled blocks stay known, so that their frees and reallocations are
** recorded: an exact set of addresses (MPSet) behind a direct-mapped
** filter of counters,
** one per hash of an address, so that the free of an unsampled block
** costs one load. A counter counts the set's addresses with its hash;
** one that reaches 255 stays there (a false positive costs a lookup).
*/
#define MP_FILTBITS	14	/* 16 KiB of counters. */
#define MP_SETMIN	64	/* Slots of a new set. */
#define MP_ADDRKEY	(~(uint64_t)0)  /* The whole entry is the key. */

typedef struct MPSample {
  uint64_t mean;		/* Mean bytes between samples. */
  uint64_t rng;			/* xorshift64* state, never 0. */
  MPSet blocks;			/* The sampled blocks. */
  MPSet protos;			/* Prototypes announced, */
  MPSet traces;			/* and traces, by number. */
  uint8_t filt[1u << MP_FILTBITS];  /* The filter (see above). */
  uint64_t ptmarks[MP_PTMARKS / 64];  /* See mp_ptmark. */
} MPSample;

/* The filter of a profiler that samples nothing (stopped). */
static const uint8_t mp_nofilt[1u << MP_FILTBITS];

/* The pair of a counter and filter that sample nothing. */
static void mp_samplenone(MemProf *mp)
{
  mp->sfilt = mp_nofilt;
  mp->sleft = INT64_MAX;
}

/* Direct-mapped by the low bits above a block's 16-byte alignment:
** blocks made one after another take different counters, and the hot
** path pays a shift and a mask. */
static LJ_AINLINE uint32_t mp_filtidx(const void *p)
{
  return (uint32_t)((uintptr_t)p >> 4) & ((1u << MP_FILTBITS) - 1);
}

static uint64_t mp_splitmix(uint64_t x)
{
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static uint64_t mp_rand(MPSample *s)
{
  uint64_t x = s->rng;
  x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
  s->rng = x;
  return x * 0x2545f4914f6cdd1dull;
}

/* Bytes to the next sample: -m ln(u), u uniform in (0, 1]. */
static int64_t mp_nextsample(MPSample *s)
{
  double u = ((double)(mp_rand(s) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
  double d = -log(u) * (double)s->mean;
  return d < 4e18 ? (int64_t)d : (int64_t)4e18;
}

/* Add an address not in set s. 0 if out of memory. */
static int mp_addrput(MPSet *s, uintptr_t a)
{
  uint64_t *e = mp_setput(s, a, MP_ADDRKEY);
  if (e == NULL) return 0;
  *e = a;
  return 1;
}

/* Remove address a from set s, if it is there. */
static void mp_addrdel(MPSet *s, uintptr_t a)
{
  int64_t i = mp_setfind(s, a, MP_ADDRKEY);
  if (i >= 0) lj_memprof_setdel(s, (uint32_t)i);
}

/* Add a sampled block. 0 if out of memory: then it is not sampled. */
static int mp_blockadd(MPSample *s, const void *p)
{
  uint8_t *c = &s->filt[mp_filtidx(p)];
  if (!mp_addrput(&s->blocks, (uintptr_t)p)) return 0;
  if (*c != 255) (*c)++;
  return 1;
}

/* Remove the sampled block in slot i. */
static void mp_blockdel(MPSample *s, uint32_t i)
{
  uint8_t *c = &s->filt[mp_filtidx((const void *)(uintptr_t)s->blocks.e[i])];
  if (*c != 255) (*c)--;
  lj_memprof_setdel(&s->blocks, i);
}

/*
** Sampling announces a prototype when a sampled event first names it (a
** node's frame, a free's location, a trace's start), not when it is
** made: a program that loads code all the time would otherwise fill its
** file with chunks that no sample meets. smp->protos holds the
** prototypes announced since a new one last took their address.
*/
void lj_memprof_protoseen(MemProf *mp, GCproto *pt)
{
  MPSet *s = &mp->smp->protos;
  mp_ptmark(mp, pt);
  if (mp_setfind(s, (uintptr_t)pt, MP_ADDRKEY) < 0)
    (void)mp_addrput(s, (uintptr_t)pt);  /* Out of memory: announced again. */
}

void lj_memprof_announceproto(MemProf *mp, GCproto *pt)
{
  if (mp_setfind(&mp->smp->protos, (uintptr_t)pt, MP_ADDRKEY) < 0)
    lj_memprof_symproto(mp, pt, 1);
}

/* The same for traces, by number (smp->traces). */
#if LJ_HASJIT
void lj_memprof_traceseen(MemProf *mp, GCtrace *T)
{
  MPSet *s = &mp->smp->traces;
  if (mp_setfind(s, T->traceno, MP_ADDRKEY) < 0)
    (void)mp_addrput(s, T->traceno);
}
#endif

void lj_memprof_announcetrace(MemProf *mp, uint64_t traceno)
{
#if LJ_HASJIT
  jit_State *J = G2J(mp->g);
  GCtrace *T;
  if (mp_setfind(&mp->smp->traces, traceno, MP_ADDRKEY) >= 0 ||
      traceno == 0 || traceno >= J->sizetrace ||
      (T = traceref(J, (TraceNo)traceno)) == NULL)
    return;
  lj_memprof_announceproto(mp, &gcref(T->startpt)->pt);
  lj_memprof_symtrace(mp, T, 1);
#else
  UNUSED(mp); UNUSED(traceno);
#endif
}

/* A new prototype at pt, or trace numbered traceno: the stream must hear
** of it before its use, as of an old one at the same place. */
void lj_memprof_unseenproto(MemProf *mp, GCproto *pt)
{
  mp_addrdel(&mp->smp->protos, (uintptr_t)pt);
}

#if LJ_HASJIT
void lj_memprof_unseentrace(MemProf *mp, uint32_t traceno)
{
  mp_addrdel(&mp->smp->traces, traceno);
}
#endif

/*
** The counter ran out on the block nptr (made from ptr, if not NULL):
** draw it again, record the block and keep it. ptr only tells the VM's
** own stack from Lua's blocks (mp_where): an allocation has no old block.
*/
static void mp_sampletake(MemProf *mp, void *ptr, void *nptr, size_t nsize)
{
  MPSample *s = mp->smp;
  mp->sleft = mp_nextsample(s);
  if (LJ_LIKELY(mp_enter(mp)) && nptr != NULL &&
      (LJ_LIKELY(mp->pos <= mp->lim) || lj_memprof_full(mp)) &&
      mp_blockadd(s, nptr) &&
      !lj_memprof_stackevent(mp, LJM_EV_ALLOC, ptr, 0, nptr, nsize))
    lj_memprof_event(mp, LJM_EV_ALLOC, ptr, 0, nptr, nsize);
  mp_leave(mp);
}

/*
** The counter ran out on an allocation (ptr NULL) or on a reallocation of
** an unsampled block: sample the new block, written as an allocation.
*/
static LJ_NOINLINE void *mp_samplenew(MemProf *mp, void *ptr, size_t osize,
				      size_t nsize)
{
  MPSample *s = mp->smp;
  void *nptr;
  if (LJ_UNLIKELY(*mp->pollflag != mp->pollseen))
    return lj_memprof_pollalloc(mp, ptr, osize, nsize);
  if (s == NULL)  /* Stopped. */
    return mp->allocf(mp->allocd, ptr, osize, nsize);
  nptr = mp->allocf(mp->allocd, ptr, osize, nsize);
  mp_sampletake(mp, ptr, nptr, nsize);
  return nptr;
}

/* The filter says ptr may be a sampled block: free or reallocate it. */
static LJ_NOINLINE void *mp_sampleold(MemProf *mp, void *ptr, size_t osize,
				      size_t nsize)
{
  MPSample *s = mp->smp;
  int64_t i;
  void *nptr;
  if (LJ_UNLIKELY(*mp->pollflag != mp->pollseen))
    return lj_memprof_pollalloc(mp, ptr, osize, nsize);
  i = s ? mp_setfind(&s->blocks, (uintptr_t)ptr, MP_ADDRKEY) : -1;
  if (i < 0) {  /* Not sampled after all. */
    if (nsize != 0 && (mp->sleft -= (int64_t)nsize) < 0)
      return mp_samplenew(mp, ptr, osize, nsize);
    return mp->allocf(mp->allocd, ptr, osize, nsize);
  }
  if (nsize == 0) {  /* Recorded before the block goes, as mp_freeslow. */
    mp_blockdel(s, (uint32_t)i);
    if (LJ_LIKELY(mp_enter(mp))) {
      mp_freetrace(mp);
      lj_memprof_record(mp, LJM_EV_FREE, ptr, osize, NULL, 0);
    }
    mp_leave(mp);
    return mp->allocf(mp->allocd, ptr, osize, 0);
  }
  /*
  ** A reallocation, as a free and an allocation: the old block leaves
  ** the sample, and the counter decides on the new one as on any. A
  ** block that the program keeps resizing (a string buffer) writes one
  ** event, not one at every resize, and the new block is in the sample
  ** with the probability its size gives, as the reader takes it.
  */
  nptr = mp->allocf(mp->allocd, ptr, osize, nsize);
  if (nptr == NULL) return NULL;  /* Failed: nothing changed. */
  mp_blockdel(s, (uint32_t)i);
  if (LJ_LIKELY(mp_enter(mp))) {
    mp_freetrace(mp);
    lj_memprof_record(mp, LJM_EV_FREE, ptr, osize, NULL, 0);
  }
  mp_leave(mp);
  if (LJ_UNLIKELY((mp->sleft -= (int64_t)nsize) < 0))
    mp_sampletake(mp, ptr, nptr, nsize);
  return nptr;
}

/*
** The VM's allocator while sampling. Its hot path touches neither the
** buffer nor busy: only the filter (a free or reallocation) and the
** counter (an allocation or reallocation). The safe point is only on the
** slow paths: events happen there alone, so a flush or a stop waits for
** the next sample (SIZE bytes of allocation on average) or the next free
** of a sampled block.
*/
void *lj_memprof_sampleallocf(void *ud, void *ptr, size_t osize,
			      size_t nsize)
{
  MemProf *mp = (MemProf *)ud;
  if (ptr != NULL && LJ_UNLIKELY(mp->sfilt[mp_filtidx(ptr)]))
    return mp_sampleold(mp, ptr, osize, nsize);
  if (nsize != 0 && LJ_UNLIKELY((mp->sleft -= (int64_t)nsize) < 0))
    return mp_samplenew(mp, ptr, osize, nsize);
  return mp->allocf(mp->allocd, ptr, osize, nsize);
}

/* The sampling state of a profiler with a mean. 0 if out of memory. */
int lj_memprof_sampleinit(MemProf *mp, const ljmprof_opt *opt)
{
  MPSample *s = (MPSample *)calloc(1, sizeof(MPSample));
  uint64_t seed = opt->seed;
  if (s == NULL) return 0;
  mp->smp = s;
  mp->sfilt = s->filt;
  mp->ptmarks = s->ptmarks;
  s->mean = opt->sample;
  if (seed == 0) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    seed = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^
	   ((uint64_t)getpid() << 40) ^ (uint64_t)(uintptr_t)mp;
  }
  s->rng = mp_splitmix(seed);
  if (s->rng == 0) s->rng = 1;
  mp->sleft = mp_nextsample(s);
  lj_memprof_setinit(&s->blocks, MP_ADDRKEY, MP_SETMIN);
  lj_memprof_setinit(&s->protos, MP_ADDRKEY, MP_SETMIN);
  lj_memprof_setinit(&s->traces, MP_ADDRKEY, MP_SETMIN);
  return 1;
}

#if MP_ARENA
int64_t lj_memprof_nextsample(MemProf *mp)
{
  return mp_nextsample(mp->smp);
}
#endif

uint64_t lj_memprof_samplemean(const MemProf *mp)
{
  return mp->smp->mean;
}

/* Drop the sampling state: the profiler is stopped, or never started. */
void lj_memprof_samplefree(MemProf *mp)
{
  if (mp->smp) {
    lj_memprof_setfree(&mp->smp->blocks);
    lj_memprof_setfree(&mp->smp->protos);
    lj_memprof_setfree(&mp->smp->traces);
    free(mp->smp);
    mp->smp = NULL;
    mp->ptmarks = NULL;
  }
  mp_samplenone(mp);  /* A pass-through: no block is sampled, nor will be. */
}

#endif
