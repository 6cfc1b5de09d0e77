/*
** ljmprof: public C API of the memory profiler inside the patched LuaJIT.
**
** One profiler per VM (global state). The profiler hands its stream to a
** writer callback in large blocks; where the bytes go is the caller's
** business. All functions must be called on the thread that runs the VM
** (or while the VM is otherwise idle).
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef LJMPROF_H
#define LJMPROF_H

#include <stddef.h>
#include <signal.h>

#include "lua.h"

/* Status codes returned by ljmprof_start/ljmprof_stop. */
#define LJMPROF_OK	0	/* Success. */
#define LJMPROF_ERRUSE	1	/* Already running or bad options (start) /
				** not running (stop, abandon). */
#define LJMPROF_ERRMEM	2	/* Out of memory for the profiler's own state. */
#define LJMPROF_ERRIO	3	/* The writer failed; errno holds its error. */
#define LJMPROF_ERRBUSY	4	/* ljmprof_seal: the VM's thread is in the
				** middle of an event; try again. */

/*
** 1 MiB: one writer call per 70,000 to 110,000 events, and small enough
** that the bytes are still in the CPU's cache when the writer copies them
** (into the page cache, for a file): with 4 MiB, that copy reads from
** memory and costs about a third more.
*/
#define LJMPROF_BUFSIZE_DEFAULT	((size_t)1 << 20)	/* 1 MiB. */
#define LJMPROF_BUFSIZE_MIN	((size_t)4096)

/*
** Writer: consume len bytes at data. Return 0 on success or an errno value.
** On failure the profiler halts (no more writes), keeps the error and the
** VM runs on; ljmprof_stop then returns LJMPROF_ERRIO with errno set.
** It is called from inside the VM's allocator: it must not call into the
** VM (no lua_* calls on any of its states).
*/
typedef int (*ljmprof_writer)(void *ctx, const void *data, size_t len);

/*
** Safe-point callback: called on the VM's thread, from its allocator path,
** before an allocation is served and recorded, whenever *poll_flag differs
** from the value seen last time. It may call ljmprof_stop, ljmprof_abandon
** or ljmprof_start on L (the VM's main thread). Lets an embedder act on a
** signal or on fork without a lock in the allocation path.
*/
typedef void (*ljmprof_poll)(lua_State *L, void *ctx);

typedef struct ljmprof_opt {
  ljmprof_writer writer;	/* Required. */
  void *ctx;			/* Passed to writer and poll. */
  size_t bufsize;		/* 0: LJMPROF_BUFSIZE_DEFAULT; at least _MIN. */
  const volatile sig_atomic_t *poll_flag;	/* NULL: no safe-point polling. */
  ljmprof_poll poll;		/* Called when *poll_flag changes (required
				** with poll_flag). */
  int stack_depth;		/* Call stacks of at most this many frames
				** (1 to LJMPROF_STACK_DEPTH_MAX), in the
				** profile extension; 0: the version 3
				** stream, leaf locations only. */
  size_t sample;		/* Mean bytes between sampled allocations:
				** only those (with their stacks, at
				** stack_depth or the default depth) and the
				** frees and reallocations of their blocks
				** are recorded. 0: every event. */
  unsigned long long seed;	/* Sampling's random seed; 0: from the
				** clock and the process id. */
  const volatile unsigned long long *rss;  /* NULL: no RSS. Else the
				** process's resident bytes as another
				** thread last read them (0: not known),
				** written after a time mark (INFO RSS)
				** when it changed since the last one
				** written. Read as a plain word: never
				** read from the system on the VM's
				** allocation path. */
  int graph;			/* Non-zero: the start snapshot (with
				** stack_depth, not sampled) writes the
				** heap graph too (LJMPROF_SNAPSHOT_GRAPH). */
} ljmprof_opt;

/* Stack depths (the same numbers as lj_memprof_format.h's). */
#define LJMPROF_STACK_DEPTH_DEFAULT	32
#define LJMPROF_STACK_DEPTH_MAX		1024
/* The sampling mean that "yes" means (LJMPROF_SAMPLE, misc.memprof). */
#define LJMPROF_SAMPLE_DEFAULT		((size_t)4 << 20)

/*
** Start profiling the VM of L: symbol table, then events. Returns
** LJMPROF_ERRUSE if a profiler runs on it already (or is halted), if
** writer is NULL, poll_flag is set without poll, or stack_depth is out
** of range (sample > 0 with stack_depth 0 means the default depth); LJMPROF_ERRMEM; or
** LJMPROF_ERRIO (errno set) if the writer fails while the symbol table is
** written, in which case nothing runs.
*/
LUA_API int ljmprof_start(lua_State *L, const ljmprof_opt *opt);

/*
** Write the epilogue, flush, restore the VM's allocator, free the state.
** If the host has set an allocator of its own over the profiler's while
** profiling (lua_setallocf), the stream is still completed and the
** buffers freed, but the host's allocator stays in place and the
** profiler's wrapper under it becomes a pass-through to the allocator it
** wrapped (a few dozen bytes that are never freed, since the host's
** allocator may call it until the VM is gone). A new profiler can then
** be started over the host's allocator.
*/
LUA_API int ljmprof_stop(lua_State *L);

/*
** Drop the profiler without writing anything (buffered bytes are lost),
** restore the allocator (same rule as ljmprof_stop) and free the state.
** For a forked child whose inherited buffer belongs to the parent's
** stream.
*/
LUA_API int ljmprof_abandon(lua_State *L);

/*
** Write a snapshot of the VM's heap into the stream now, as the start
** snapshot is written (every block the VM holds, with its kind), marked
** as a later one (doc/format.md, "Later snapshots"). On the VM's thread,
** at a safe point: not inside the VM's allocator unless called from the
** poll callback. Returns LJMPROF_OK; LJMPROF_ERRUSE if no profiler runs,
** it writes no profile extension (stack_depth 0) or it samples (a sample
** does not follow every block); LJMPROF_ERRIO (errno set) if the writer
** failed.
*/
LUA_API int ljmprof_snapshot(lua_State *L);

/*
** The same, with flags: LJMPROF_SNAPSHOT_GRAPH also writes the references
** between the snapshot's objects (doc/format.md, "The heap graph"), for
** ljmprof report --retainers. ljmprof_snapshot(L) is ljmprof_snapshotx(L,
** 0).
*/
#define LJMPROF_SNAPSHOT_GRAPH	1
LUA_API int ljmprof_snapshotx(lua_State *L, int flags);

/* Non-zero while a profiler runs (or is halted by an error) on L's VM. */
LUA_API int ljmprof_running(lua_State *L);

/*
** Folders searched for the debug files of stripped objects, by build ID
** (DIR/.build-id/xx/yyyy.debug, as gdb's debug-file-directory and the
** distributions' -dbgsym packages lay them out), separated by ':'.
** Process-wide. NULL: the default, /usr/lib/debug; "": none. C functions
** already named keep their names until an object is loaded or unloaded.
*/
LUA_API void ljmprof_debug_dirs(const char *dirs);

/*
** Hand the events buffered so far to the writer now. Returns LJMPROF_OK,
** LJMPROF_ERRUSE if no profiler runs on L's VM, or LJMPROF_ERRIO (errno
** set) if the profiler is halted by a writer error. Allocates nothing and
** takes no lock: besides the VM's thread and the poll callback, it may be
** called from a signal handler that did not interrupt the VM's profiler.
** Called there (not in the middle of an event), the bytes written so far
** end at an event boundary, so that a writer may end the stream itself
** (with the epilogue byte) when the process is about to end.
*/
LUA_API int ljmprof_flush(lua_State *L);

/*
** End the stream of a VM that another thread may still be running, as the
** process is about to end (exit, _exit, a signal that terminates it): once
** the VM's thread is not in the middle of an event, hand the buffered
** events to the writer and halt the profiler. From then on the VM's
** events are not recorded and the writer is not called again; nothing is
** freed, and the VM may go on running on its own thread until the process
** is gone (ljmprof_stop on it then only restores the allocator). The
** caller ends the stream (the epilogue byte) through its own writer.
** Returns LJMPROF_OK; LJMPROF_ERRBUSY if the VM's thread is inside the
** profiler (nothing written: call it again, it stays sealed) or the
** kernel offers no membarrier(2); LJMPROF_ERRUSE if no profiler runs;
** LJMPROF_ERRIO (errno set) if the writer failed. Allocates nothing and
** takes no lock: it may be called from a signal handler, on any thread,
** including the VM's own when the handler did not interrupt the profiler.
*/
LUA_API int ljmprof_seal(lua_State *L);

/*
** Lifecycle hooks for an embedder that lives in the same shared object
** (libljmprof.so). lua_newstate (and so luaL_newstate) calls
** ljmprof_hook_newstate with the new VM's main thread just before it
** returns it, before any Lua code runs; lua_close calls ljmprof_hook_close
** first thing, before the finalizers run and the VM is torn down, and, as
** it returns, after the VM's last block was freed, ljmprof_hook_closed
** with what ljmprof_hook_close returned (no call if that was NULL). Until
** then the VM's allocator may still be called: by the finalizers, by the
** frees of the teardown, and through a pair that a C module took from
** lua_getallocf. NULL (the default): no call. Hidden symbols: not part of
** the exported API.
*/
extern void (*ljmprof_hook_newstate)(lua_State *L)
  __attribute__((visibility("hidden")));
extern void *(*ljmprof_hook_close)(lua_State *L)
  __attribute__((visibility("hidden")));
extern void (*ljmprof_hook_closed)(void *ud)
  __attribute__((visibility("hidden")));

/*
** Non-zero if the VM's allocator is being called from the collector's
** sweep of a string chain: not a safe point to start a profiler or take
** a heap snapshot (the chain would be left out), which the shim's
** wrapper then leaves to the VM's next allocator call; the profiler's
** own safe points do the same. Hidden.
*/
extern int ljmprof_insweep(lua_State *L)
  __attribute__((visibility("hidden")));

/*
** The block that this thread's allocator call frees, and its size, while
** a safe point runs inside that call (the shim's wrapper and the
** profiler's own safe point set them; NULL otherwise). A heap snapshot
** taken there has the block, reachable from the VM or not (already
** unlinked by the code that frees it), so that its free, which follows
** as an event, is of a known block. Hidden.
*/
extern __thread void *ljmprof_freeing __attribute__((visibility("hidden")));
extern __thread size_t ljmprof_freesize __attribute__((visibility("hidden")));

/*
** Whether the VM shows what ljmprof adds to LuaJIT's Lua interface: the
** field jit.ljmprof (luaopen_jit) and the misc library (misc.memprof,
** opened by luaL_openlibs). 1 (the default) in the standalone library;
** the shim clears it when it does not profile, so that the program sees
** exactly the system library's globals and jit table. Defined in
** lib_jit.c (patch 0001).
*/
extern int ljmprof_show_extensions __attribute__((visibility("hidden")));

#endif
