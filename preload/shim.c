/*
** libljmprof.so: the LD_PRELOAD shim's entry points.
**
** The patched VM calls the two hooks below from lua_newstate and
** lua_close; the constructor installs them only when LJMPROF_OUT is set,
** so that without it the shim does nothing at all. Everything else lives
** in registry.c and the files beside it (preload/vm.h lists them).
**
** The shim also defines _exit and _Exit and the exec family (execve,
** execv, execvp, execvpe, execl, execlp, execle, fexecve, execveat), the
** only symbols it exports beyond the system library's: a program that
** ends that way (a server's shutdown, a forked helper, a launcher, a
** binary upgrade) skips atexit and destructors, and would leave its
** streams unfinished. With LJMPROF_OUT they first seal this process's
** streams; without it they go straight to libc's. (exit() calls libc's
** _exit internally, and glibc's exec functions, posix_spawn and system
** call its execve internally, not through ours.) A vfork child, which
** runs in its parent's memory, leaves the parent's streams alone. When
** an exec fails, the program goes on and its streams stay finished
** (ljm_reg_exec_failed).
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include "config.h"

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lua.h"
#include "ljmprof.h"

#include "registry.h"

static int installed;	/* LJMPROF_OUT was set at start-up. */

typedef void (*exit_fn)(int);
static exit_fn real_exit, real_Exit;	/* libc's (or the next one's). */

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[],
			   int);
static execve_fn real_execve, real_execvpe;
static execv_fn real_execv, real_execvp;
static fexecve_fn real_fexecve;
static execveat_fn real_execveat;

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
  real_execve = (execve_fn)dlsym(RTLD_NEXT, "execve");
  real_execvpe = (execve_fn)dlsym(RTLD_NEXT, "execvpe");
  real_execv = (execv_fn)dlsym(RTLD_NEXT, "execv");
  real_execvp = (execv_fn)dlsym(RTLD_NEXT, "execvp");
  real_fexecve = (fexecve_fn)dlsym(RTLD_NEXT, "fexecve");
  real_execveat = (execveat_fn)dlsym(RTLD_NEXT, "execveat");
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

/* -- exec ------------------------------------------------------------------ */

/* Before the image is replaced: its streams are finished. */
static void before_exec(void)
{
  if (installed)
    ljm_reg_die(0);
}

/* The exec returned: it failed, errno says why. */
static int exec_failed(const char *what)
{
  int err = errno;
  if (installed)
    ljm_reg_exec_failed(what, err);
  errno = err;
  return -1;
}

/* What a failed exec is called: its path, or without one (fexecve,
** execveat with AT_EMPTY_PATH) its argv[0]. (glibc declares both
** non-null; Linux takes a NULL argv.) */
static const char *exec_name(const char *path, char *const *argv)
{
  if (path != NULL && *path != '\0')
    return path;
  return argv != NULL ? argv[0] : NULL;
}

static int no_exec(void)
{
  errno = ENOSYS;
  return -1;
}

__attribute__((visibility("default")))
int execve(const char *path, char *const argv[], char *const envp[])
{
  if (real_execve == NULL)
    return no_exec();
  before_exec();
  real_execve(path, argv, envp);
  return exec_failed(path);
}

__attribute__((visibility("default")))
int execv(const char *path, char *const argv[])
{
  if (real_execv == NULL)
    return no_exec();
  before_exec();
  real_execv(path, argv);
  return exec_failed(path);
}

__attribute__((visibility("default")))
int execvp(const char *file, char *const argv[])
{
  if (real_execvp == NULL)
    return no_exec();
  before_exec();
  real_execvp(file, argv);
  return exec_failed(file);
}

__attribute__((visibility("default")))
int execvpe(const char *file, char *const argv[], char *const envp[])
{
  if (real_execvpe == NULL)
    return no_exec();
  before_exec();
  real_execvpe(file, argv, envp);
  return exec_failed(file);
}

__attribute__((visibility("default")))
int fexecve(int fd, char *const argv[], char *const envp[])
{
  if (real_fexecve == NULL)
    return no_exec();
  before_exec();
  real_fexecve(fd, argv, envp);
  return exec_failed(exec_name(NULL, argv));
}

#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 34)
__attribute__((visibility("default")))
int execveat(int dirfd, const char *path, char *const argv[],
	     char *const envp[], int flags)
{
  if (real_execveat == NULL)
    return no_exec();
  before_exec();
  real_execveat(dirfd, path, argv, envp, flags);
  return exec_failed(exec_name(path, argv));
}
#endif

/*
** The list forms, as glibc builds them: the arguments up to the NULL into
** an array on the stack (no malloc: exec may be called in a vfork child
** or a signal handler), then the vector form, ours.
*/
static size_t list_length(va_list *ap)
{
  size_t n = 1;
  while (va_arg(*ap, const char *) != NULL)
    n++;
  return n;
}

/* argv[0..n]: arg0, then the n - 1 arguments and the NULL from *ap. */
static void list_fill(char **argv, const char *arg0, size_t n, va_list *ap)
{
  size_t i;
  argv[0] = (char *)arg0;
  for (i = 1; i <= n; i++)
    argv[i] = va_arg(*ap, char *);
}

__attribute__((visibility("default")))
int execl(const char *path, const char *arg, ...)
{
  va_list ap;
  size_t n;
  va_start(ap, arg);
  n = list_length(&ap);
  va_end(ap);
  {
    char *argv[n + 1];
    va_start(ap, arg);
    list_fill(argv, arg, n, &ap);
    va_end(ap);
    return execv(path, argv);
  }
}

__attribute__((visibility("default")))
int execlp(const char *file, const char *arg, ...)
{
  va_list ap;
  size_t n;
  va_start(ap, arg);
  n = list_length(&ap);
  va_end(ap);
  {
    char *argv[n + 1];
    va_start(ap, arg);
    list_fill(argv, arg, n, &ap);
    va_end(ap);
    return execvp(file, argv);
  }
}

__attribute__((visibility("default")))
int execle(const char *path, const char *arg, ...)
{
  va_list ap;
  size_t n;
  va_start(ap, arg);
  n = list_length(&ap);
  va_end(ap);
  {
    char *argv[n + 1];
    char *const *envp;
    va_start(ap, arg);
    list_fill(argv, arg, n, &ap);
    envp = va_arg(ap, char *const *);	/* After the NULL. */
    va_end(ap);
    return execve(path, argv, envp);
  }
}
