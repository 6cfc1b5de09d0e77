/*
** Memory profiler: every allocation, reallocation and free of a VM, with
** its source, as a memprof (version 3) stream. See ljmprof.h for the API.
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef _LJ_MEMPROF_H
#define _LJ_MEMPROF_H

#include "lj_obj.h"

/* The feature switch is in lj_arch.h (patch 0002), beside LJ_HASPROFILE;
** the same test here keeps a tree without that patch building. */
#ifndef LJ_HASMEMPROF
#if !defined(LUAJIT_DISABLE_MEMPROF) && LJ_TARGET_LINUX
#define LJ_HASMEMPROF		1
#else
#define LJ_HASMEMPROF		0
#endif
#endif

#include "lj_memprof_format.h"

/*
** The kind of object that the VM's next allocation is for (LJM_KIND_*):
** one store beside each allocating call (patch 0010) into g->mem_kind,
** which the profile extension writes with the event.
*/
#if LJ_HASMEMPROF
#define lj_memprof_kind(g, k)	((g)->mem_kind = (uint8_t)LJM_KIND_##k)
#else
#define lj_memprof_kind(g, k)	((void)(g))
#endif

#if LJ_HASMEMPROF

#include "ljmprof.h"

/* Called when a stream owned by the VM itself (misc.memprof) ends. */
typedef void (*lj_memprof_release)(void *ctx);

LJ_FUNC int lj_memprof_start(lua_State *L, const ljmprof_opt *opt,
			     lj_memprof_release release);
/* Stop a profiler started with the same release function. */
LJ_FUNC int lj_memprof_stop(lua_State *L, lj_memprof_release release);
/* Is the running profiler one started with this release function? */
LJ_FUNC int lj_memprof_owned(lua_State *L, lj_memprof_release release);

/* VM lifecycle: lua_newstate; lua_close, first thing (returns what
** lj_memprof_closed gets); after the VM's last block, lj_memprof_free with
** g->memprof as it was before that block was freed, then, at the end of
** lua_close, lj_memprof_closed. */
LJ_FUNC void lj_memprof_newstate(lua_State *L);
LJ_FUNC void *lj_memprof_close(lua_State *L);
LJ_FUNC void lj_memprof_free(void *states);
LJ_FUNC void lj_memprof_closed(void *ud);

/* Bound on the stack nodes of a stream (LJM_STACK_NODES_MAX), read when
** a profiler starts; the tests lower it. */
LJ_DATA uint32_t lj_memprof_nodes_max;

/*
** The VM's byte counter (patch 0011): where the VM allocates, it takes
** the new size from g->mem_left, one subtraction and one branch, and
** calls lj_memprof_alloc for the allocation when the counter goes below
** zero: a sample is due, or a profiler of every event wants the thread
** (g->mem_L). Without a profiler the counter starts at INT64_MAX.
*/
#include "lj_gc.h"  /* LJ_MEMPROF_COUNTER: a tree with patch 0011. */
#ifdef LJ_MEMPROF_COUNTER
#define lj_memprof_due(g, n)	(((g)->mem_left -= (int64_t)(n)) < 0)
LJ_FUNC void *lj_memprof_alloc(lua_State *L, void *p, GCSize osz,
			       GCSize nsz);
/* In close_state, once no block is left: the VM's own allocator pair. */
LJ_FUNC void lj_memprof_unwrap(global_State *g);
/* lua_getallocf while g->memprof is set (patch 0013): the pair a C module
** allocates through, on the VM's counter while a sampled profiler uses
** it; otherwise the VM's pair. */
LJ_FUNC lua_Alloc lj_memprof_getallocf(global_State *g, void **ud);
#endif

/* New symbols while profiling. */
LJ_FUNC void lj_memprof_addproto(global_State *g, GCproto *pt);
#if LJ_HASJIT
struct GCtrace;
LJ_FUNC void lj_memprof_addtrace(global_State *g, struct GCtrace *T);

/*
** Where compiled code comes from (patch 0012): the recorder says which
** bytecode it records next (recstart: a new trace), the loop optimizer
** which instruction a copy in the loop is of, the assembler which
** machine code each IR instruction became. Only while a profiler runs.
*/
struct jit_State;
LJ_FUNC void lj_memprof_recstart(struct jit_State *J);
LJ_FUNC void lj_memprof_recins(struct jit_State *J);
LJ_FUNC void lj_memprof_ircopy(struct jit_State *J, uint32_t ref, uint32_t ins);
LJ_FUNC void lj_memprof_asmins(struct jit_State *J, uint32_t ref,
			       const void *lo, const void *hi);
/* By IR opcode: 1 if its code may call into the VM (lj_memprof_trace.c);
** the assembler calls lj_memprof_asmins only for those. */
LJ_DATA const uint8_t lj_memprof_ircall[];
#endif

/* The misc library: misc.memprof.start(path), misc.memprof.stop(). */
LJ_FUNC int luaopen_misc(lua_State *L);

#define LJ_MISCLIBNAME		"misc"

#endif

#endif
