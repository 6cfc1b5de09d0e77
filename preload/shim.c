/*
** libljmprof.so: the LD_PRELOAD shim's entry points.
**
** The patched VM calls the two hooks below from lua_newstate and
** lua_close; the constructor installs them only when LJMPROF_OUT is set,
** so that without it the shim does nothing at all. Everything else lives
** in registry.c and the files beside it (preload/vm.h lists them).
**
** The shim also defines _exit and _Exit, the only symbols it exports
** beyond the system library's: a program that ends that way (a server's
** shutdown, a forked helper) skips atexit and destructors, and would
** leave its streams unfinished. With LJMPROF_OUT they first seal this
** process's streams; without it they go straight to libc's. (exit()
** calls libc's _exit internally, not through ours.)
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include "config.h"

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lua.h"
#include "ljmprof.h"

#include "registry.h"

static int installed;	/* LJMPROF_OUT was set at start-up. */

typedef void (*exit_fn)(int);
static exit_fn real_exit, real_Exit;	/* libc's (or the next one's). */

static void hook_newstate(lua_State *L)
{
  ljm_reg_newstate(L);
}

static void *hook_close(lua_State *L)
{
  return ljm_reg_close(L);
}

static void hook_closed(void *ud)
{
  ljm_reg_closed(ud);
}

__attribute__((constructor))
static void ljm_shim_init(void)
{
  int saved = errno;
  real_exit = (exit_fn)dlsym(RTLD_NEXT, "_exit");
  real_Exit = (exit_fn)dlsym(RTLD_NEXT, "_Exit");
  if (ljm_reg_init()) {
    installed = 1;
    pthread_atfork(ljm_reg_fork_prepare, ljm_reg_fork_parent,
		   ljm_reg_fork_child);
    ljmprof_hook_newstate = hook_newstate;
    ljmprof_hook_close = hook_close;
    ljmprof_hook_closed = hook_closed;
  } else {
    /* Inert: exactly the system library's globals and jit table. */
    ljmprof_show_extensions = 0;
  }
  errno = saved;
}

__attribute__((destructor))
static void ljm_shim_fini(void)
{
  if (installed)
    ljm_reg_exit();
}

__attribute__((noreturn))
static void forward_exit(exit_fn f, int status)
{
  if (f)
    f(status);
  for (;;)		/* What libc's does, had dlsym found nothing. */
    syscall(SYS_exit_group, status);
}

__attribute__((visibility("default"), noreturn))
void _exit(int status)
{
  if (installed)
    ljm_reg_die(0);
  forward_exit(real_exit, status);
}

__attribute__((visibility("default"), noreturn))
void _Exit(int status)
{
  if (installed)
    ljm_reg_die(0);
  forward_exit(real_Exit ? real_Exit : real_exit, status);
}
