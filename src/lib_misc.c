/*
** Misc library: misc.memprof.start(path [, options]),
** misc.memprof.stop() and misc.memprof.snapshot().
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define lib_misc_c
#define LUA_LIB

#include "lua.h"
#include "lauxlib.h"

#include "lj_obj.h"
#include "lj_memprof.h"

/* buildvm reads the library markers below (none may be named in a
** comment); without the profiler it skips them, as lib_buffer.c's without
** LJ_HASBUFFER (patch 0008): the next line must stay as it is. */
#if LJ_HASMEMPROF

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "lj_lib.h"

/* -- File writer --------------------------------------------------------- */

typedef struct MiscFile {
  int fd;			/* Output file, O_CLOEXEC. */
} MiscFile;

static int misc_file_write(void *ctx, const void *data, size_t len)
{
  MiscFile *mf = (MiscFile *)ctx;
  const char *p = (const char *)data;
  while (len) {
    ssize_t n = write(mf->fd, p, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += n; len -= (size_t)n;
  }
  return 0;
}

static void misc_file_release(void *ctx)
{
  MiscFile *mf = (MiscFile *)ctx;
  close(mf->fd);
  free(mf);
}

/* nil, message, errno */
static int misc_fail(lua_State *L, const char *msg, int err)
{
  lua_pushnil(L);
  lua_pushstring(L, msg);
  lua_pushinteger(L, err);
  return 3;
}

/* -- misc.memprof.* functions -------------------------------------------- */

/* A profiler that C code started (the LD_PRELOAD shim, or the host through
** ljmprof_start): Lua code neither stops it nor starts another. */
#define MISC_NOTOURS \
  "the VM is profiled by its host (ljmprof), not by misc.memprof"

#define LJLIB_MODULE_misc_memprof

/*
** The stacks option: nil or false (none), true (the default depth) or a
** depth. Returns the depth; a bad value raises the usual argument error.
*/
static int misc_stacks(lua_State *L, int opts)
{
  lua_Number n;
  int depth;
  if (lua_type(L, opts) != LUA_TTABLE)
    return 0;
  lua_getfield(L, opts, "stacks");
  if (lua_isnoneornil(L, -1) || lua_isboolean(L, -1)) {
    depth = lua_toboolean(L, -1) ? LJMPROF_STACK_DEPTH_DEFAULT : 0;
  } else {
    if (!lua_isnumber(L, -1))
      luaL_argerror(L, opts, "stacks: true or a depth expected");
    n = lua_tonumber(L, -1);
    if (!(n >= 0 && n <= LJMPROF_STACK_DEPTH_MAX) || n != (int)n)
      luaL_argerror(L, opts, "stacks: a depth from 0 to 1024 expected");
    depth = (int)n;
  }
  lua_pop(L, 1);
  return depth;
}

/*
** The sample option: nil or false (every event), true (the default mean)
** or a mean in bytes; and seed, a number (0 or nil: from the clock).
*/
static void misc_sample(lua_State *L, int opts, ljmprof_opt *opt)
{
  lua_Number n;
  if (lua_type(L, opts) != LUA_TTABLE)
    return;
  lua_getfield(L, opts, "sample");
  if (lua_isnoneornil(L, -1) || lua_isboolean(L, -1)) {
    opt->sample = lua_toboolean(L, -1) ? LJMPROF_SAMPLE_DEFAULT : 0;
  } else {
    if (!lua_isnumber(L, -1))
      luaL_argerror(L, opts, "sample: true or a mean in bytes expected");
    n = lua_tonumber(L, -1);
    if (!(n >= 0 && n <= 1073741824.0) || n != (lua_Number)(size_t)n)
      luaL_argerror(L, opts, "sample: a mean from 0 to 1G bytes expected");
    opt->sample = (size_t)n;
  }
  lua_pop(L, 1);
  lua_getfield(L, opts, "seed");
  if (!lua_isnoneornil(L, -1)) {
    n = lua_isnumber(L, -1) ? lua_tonumber(L, -1) : -1;
    if (!(n >= 0 && n < 18446744073709551616.0))
      luaL_argerror(L, opts, "seed: a number from 0 expected");
    opt->seed = (unsigned long long)n;
  }
  lua_pop(L, 1);
}

/*
** misc.memprof.start(path [, {stacks = N|true, sample = SIZE|true,
** seed = N, graph = true}]) or start{path, stacks, sample, seed, graph};
** graph: the start snapshot writes the heap graph too.
*/
LJLIB_CF(misc_memprof_start)
{
  const char *path;
  ljmprof_opt opt;
  MiscFile *mf;
  int st, opts = 2;
  if (lua_type(L, 1) == LUA_TTABLE) {
    lua_getfield(L, 1, "path");
    if (lua_isnil(L, -1)) lua_pop(L, 1), lua_rawgeti(L, 1, 1);
    path = lua_tostring(L, -1);
    if (path == NULL)
      luaL_argerror(L, 1, "path expected in the table");
    opts = 1;
  } else {
    path = luaL_checkstring(L, 1);
  }
  memset(&opt, 0, sizeof(opt));
  opt.stack_depth = misc_stacks(L, opts);
  misc_sample(L, opts, &opt);
  if (lua_istable(L, opts)) {  /* graph = true: the start snapshot's graph. */
    lua_getfield(L, opts, "graph");
    opt.graph = lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  if (ljmprof_running(L))
    return misc_fail(L, lj_memprof_owned(L, misc_file_release) ?
			"profiler is running already" : MISC_NOTOURS, EINVAL);
  mf = (MiscFile *)malloc(sizeof(MiscFile));
  if (mf == NULL)
    return misc_fail(L, strerror(ENOMEM), ENOMEM);
  mf->fd = open(path, O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0644);
  if (mf->fd < 0) {
    int e = errno;
    free(mf);
    return misc_fail(L, strerror(e), e);
  }
  opt.writer = misc_file_write;
  opt.ctx = mf;
  st = lj_memprof_start(L, &opt, misc_file_release);
  if (st != LJMPROF_OK) {
    int e = st == LJMPROF_ERRIO ? errno : st == LJMPROF_ERRMEM ? ENOMEM : EINVAL;
    misc_file_release(mf);
    return misc_fail(L, st == LJMPROF_ERRUSE ? "profiler is running already" :
			strerror(e), e);
  }
  lua_pushboolean(L, 1);
  return 1;
}

LJLIB_CF(misc_memprof_stop)
{
  int st = lj_memprof_stop(L, misc_file_release);
  if (st == LJMPROF_ERRUSE)
    return misc_fail(L, ljmprof_running(L) ? MISC_NOTOURS :
			"profiler is not running", EINVAL);
  if (st == LJMPROF_ERRIO) {
    int e = errno;
    return misc_fail(L, strerror(e), e);
  }
  lua_pushboolean(L, 1);
  return 1;
}

/*
** misc.memprof.snapshot([{graph = true}]): a snapshot of the heap into
** the running profiler's stream (ours or the host's: it starts and stops
** nothing), for a census of this moment (ljmprof report --at=snapshot:N
** --by=kind); with graph, the references between its objects too
** (ljmprof report --retainers).
*/
LJLIB_CF(misc_memprof_snapshot)
{
  int flags = 0, st;
  if (lua_istable(L, 1)) {
    lua_getfield(L, 1, "graph");
    if (lua_toboolean(L, -1)) flags |= LJMPROF_SNAPSHOT_GRAPH;
    lua_pop(L, 1);
  }
  st = ljmprof_snapshotx(L, flags);
  if (st == LJMPROF_ERRUSE)
    return misc_fail(L, ljmprof_running(L) ?
			"the profiler writes no snapshots (it needs stacks, "
			"and does not sample)" : "profiler is not running",
		     EINVAL);
  if (st == LJMPROF_ERRIO) {
    int e = errno;
    return misc_fail(L, strerror(e), e);
  }
  lua_pushboolean(L, 1);
  return 1;
}

#include "lj_libdef.h"

/* -- misc module --------------------------------------------------------- */

#define LJLIB_MODULE_misc

#include "lj_libdef.h"

/* -- Entry point --------------------------------------------------------- */

int luaopen_misc(lua_State *L)
{
  if (!ljmprof_show_extensions)
    return 0;  /* Under an inert shim: no new global. */
  LJ_LIB_REG(L, LJ_MISCLIBNAME, misc);
  LJ_LIB_REG(L, NULL, misc_memprof);  /* Not in package.loaded. */
  lua_setfield(L, -2, "memprof");
  return 1;
}

#endif
