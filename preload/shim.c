/*
** libljmprof.so: the LD_PRELOAD shim's entry points.
**
** The patched VM calls the two hooks below from lua_newstate and
** lua_close; the constructor installs them only when LJMPROF_OUT is set,
** so that without it the shim does nothing at all. Everything else lives
** in registry.c and the modules it uses.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include "config.h"

#include <errno.h>
#include <pthread.h>

#include "lua.h"
#include "ljmprof.h"

#include "registry.h"

static int installed;	/* LJMPROF_OUT was set at start-up. */

static void hook_newstate(lua_State *L)
{
  ljm_reg_newstate(L);
}

static void hook_close(lua_State *L)
{
  ljm_reg_close(L);
}

__attribute__((constructor))
static void ljm_shim_init(void)
{
  int saved = errno;
  if (ljm_reg_init()) {
    installed = 1;
    pthread_atfork(ljm_reg_fork_prepare, ljm_reg_fork_parent,
		   ljm_reg_fork_child);
    ljmprof_hook_newstate = hook_newstate;
    ljmprof_hook_close = hook_close;
  } else {
    ljmprof_misc_open = 0;  /* Inert: exactly the system library's globals. */
  }
  errno = saved;
}

__attribute__((destructor))
static void ljm_shim_fini(void)
{
  if (installed)
    ljm_reg_exit();
}
