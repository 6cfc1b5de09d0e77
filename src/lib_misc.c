/*
** Misc library: misc.memprof.start(path) and misc.memprof.stop().
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define lib_misc_c
#define LUA_LIB

#include "lua.h"
#include "lauxlib.h"

#include "lj_obj.h"
#include "lj_memprof.h"

#if LJ_HASMEMPROF

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

/* -- File writer ------------------------------------------------------- */

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

/* -- misc.memprof -------------------------------------------------------- */

static int misc_memprof_start(lua_State *L)
{
  const char *path = luaL_checkstring(L, 1);
  ljmprof_opt opt;
  MiscFile *mf;
  int st;
  if (ljmprof_running(L))
    return misc_fail(L, "profiler is running already", EINVAL);
  mf = (MiscFile *)malloc(sizeof(MiscFile));
  if (mf == NULL)
    return misc_fail(L, strerror(ENOMEM), ENOMEM);
  mf->fd = open(path, O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0644);
  if (mf->fd < 0) {
    int e = errno;
    free(mf);
    return misc_fail(L, strerror(e), e);
  }
  memset(&opt, 0, sizeof(opt));
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

static int misc_memprof_stop(lua_State *L)
{
  int st = lj_memprof_stop(L, misc_file_release);
  if (st == LJMPROF_ERRUSE)
    return misc_fail(L, "profiler is not running", EINVAL);
  if (st == LJMPROF_ERRIO) {
    int e = errno;
    return misc_fail(L, strerror(e), e);
  }
  lua_pushboolean(L, 1);
  return 1;
}

static const luaL_Reg misc_memprof_lib[] = {
  { "start",	misc_memprof_start },
  { "stop",	misc_memprof_stop },
  { NULL,	NULL }
};

static const luaL_Reg misc_lib[] = {
  { NULL,	NULL }
};

/* -- Entry point ------------------------------------------------------------ */

int luaopen_misc(lua_State *L)
{
  if (!ljmprof_show_extensions)
    return 0;  /* Under an inert shim: no new global. */
  luaL_register(L, LJ_MISCLIBNAME, misc_lib);
  lua_createtable(L, 0, 2);
  luaL_register(L, NULL, misc_memprof_lib);
  lua_setfield(L, -2, "memprof");
  return 1;
}

#endif
