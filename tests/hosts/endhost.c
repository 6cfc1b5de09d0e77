/*
** endhost: a C host that ends in the ways exithost does not: the main
** thread's pthread_exit, an exec of another program, abort and crashes.
** Linked against the system's libluajit-5.1.so.2.
**
**   endhost MODE SCRIPT [PROGRAM ARG...]
**
** Runs SCRIPT in a new VM, which stays open, prints "ran", then, by MODE:
**   return        returns 0 from main (exit processing as usual);
**   pthread_exit  main ends with pthread_exit(NULL), no other thread;
**   pthread_late  starts a thread that runs SCRIPT again in a VM of its
**                 own, prints "late ran" and returns 300 ms later; main
**                 ends with pthread_exit(NULL) at once;
**   pthread_wait  starts a thread that waits for signals, prints "ready",
**                 main ends with pthread_exit(NULL);
**   pthread_atexit  main ends with pthread_exit(NULL) and an atexit
**                 handler that uses 1 MiB of stack prints whether SIGTERM
**                 is blocked in the thread that runs it;
**   execve, execv, execvp, execvpe, execl, execlp, execle, fexecve,
**   execveat      replaces the image with PROGRAM ARG... that way (the l
**                 forms take at most two ARGs); if that fails, prints
**                 "exec failed", runs SCRIPT again and returns 3;
**   vfork         vforks; the child execs PROGRAM ARG... (or _exits 127);
**                 the parent waits, runs SCRIPT again, prints
**                 "child <status>" and returns 0;
**   spawn         the same with posix_spawn;
**   vfork_exit    vforks; the child calls exit(5) (not _exit); the parent
**                 as for vfork;
**   vfork_sig     vforks; the child sends itself SIGTERM; the parent waits,
**                 runs SCRIPT again, prints "child <status>" and sends
**                 itself SIGTERM;
**   fork_failexec forks; the child, which never uses the VM, execs a
**                 program that is not there and _exits 127; the parent as
**                 for vfork;
**   abort         abort();
**   assert        a failed assert();
**   segv          SCRIPT's VM calls a C function that writes through
**                 NULL.
** SIGINT and SIGTERM are reset to their default first: a shell starts
** background jobs with SIGINT ignored.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE
#undef NDEBUG
#include <assert.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <lua.h>
#include <lualib.h>
#include <lauxlib.h>

extern char **environ;

static const char *script;

static int run(lua_State *L)
{
  if (luaL_dofile(L, script) != 0) {
    fprintf(stderr, "endhost: %s\n", lua_tostring(L, -1));
    return 0;
  }
  lua_settop(L, 0);
  return 1;
}

/* Not inlined: the fault is in a function of the host, as a real bug in a
** C module would be, not at the first instruction of the Lua C function. */
__attribute__((noinline)) static void poke(volatile int *p)
{
  *p = 1;
}

static int crash(lua_State *L)
{
  (void)L;
  poke(NULL);
  return 0;
}

static void *late(void *arg)
{
  lua_State *L = luaL_newstate();
  struct timespec ts = { 0, 300000000L };
  (void)arg;
  luaL_openlibs(L);
  if (!run(L))
    return NULL;
  printf("late ran\n");
  fflush(stdout);
  nanosleep(&ts, NULL);
  return NULL;
}

static void *waiter(void *arg)
{
  (void)arg;
  for (;;)
    pause();
  return NULL;
}

/* Uses a lot of stack, as exit processing may (a C++ destructor with a
** buffer on the stack), and says what signals it could take. */
static void at_exit(void)
{
  volatile char big[1 << 20];
  sigset_t now;
  size_t i;
  for (i = 0; i < sizeof(big); i += 4096)
    big[i] = (char)i;
  pthread_sigmask(SIG_BLOCK, NULL, &now);
  printf("atexit: %d, SIGTERM blocked: %d\n", big[4096],
	 sigismember(&now, SIGTERM));
  fflush(stdout);
}

static void dflt(int sig)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, NULL);
}

/* The exec MODE names, of PROGRAM ARG... (prog[0] is PROGRAM). */
static void do_exec(const char *mode, char **prog, int n)
{
  const char *a1 = n > 1 ? prog[1] : NULL, *a2 = n > 2 ? prog[2] : NULL;
  if (strcmp(mode, "execve") == 0) {
    execve(prog[0], prog, environ);
  } else if (strcmp(mode, "execv") == 0) {
    execv(prog[0], prog);
  } else if (strcmp(mode, "execvp") == 0) {
    execvp(prog[0], prog);
  } else if (strcmp(mode, "execvpe") == 0) {
    execvpe(prog[0], prog, environ);
  } else if (strcmp(mode, "execl") == 0) {
    execl(prog[0], prog[0], a1, a2, (char *)NULL);
  } else if (strcmp(mode, "execlp") == 0) {
    execlp(prog[0], prog[0], a1, a2, (char *)NULL);
  } else if (strcmp(mode, "execle") == 0) {
    execle(prog[0], prog[0], a1, a2, (char *)NULL, environ);
  } else if (strcmp(mode, "fexecve") == 0) {
    int fd = open(prog[0], O_RDONLY | O_CLOEXEC);
    if (fd >= 0)
      fexecve(fd, prog, environ);
  } else if (strcmp(mode, "execveat") == 0) {
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 34)
    execveat(AT_FDCWD, prog[0], prog, environ, 0);
#endif
  }
}

static int is_exec(const char *mode)
{
  static const char *const names[] = {
    "execve", "execv", "execvp", "execvpe", "execl", "execlp", "execle",
    "fexecve", "execveat"
  };
  size_t i;
  for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (strcmp(mode, names[i]) == 0)
      return 1;
  return 0;
}

int main(int argc, char **argv)
{
  lua_State *L;
  const char *mode;
  pthread_t th;
  pid_t pid;
  int st;
  if (argc < 3) {
    fprintf(stderr, "usage: endhost MODE SCRIPT [PROGRAM ARG...]\n");
    return 2;
  }
  mode = argv[1];
  script = argv[2];
  dflt(SIGINT);
  dflt(SIGTERM);
  L = luaL_newstate();
  luaL_openlibs(L);
  lua_pushcfunction(L, crash);
  lua_setglobal(L, "crash");
  if (!run(L))
    return 1;
  printf("ran\n");
  fflush(stdout);
  if (strcmp(mode, "return") == 0)
    return 0;
  if (strcmp(mode, "pthread_exit") == 0)
    pthread_exit(NULL);
  if (strcmp(mode, "pthread_late") == 0) {
    if (pthread_create(&th, NULL, late, NULL) != 0)
      return 1;
    pthread_exit(NULL);
  }
  if (strcmp(mode, "pthread_atexit") == 0) {
    atexit(at_exit);
    pthread_exit(NULL);
  }
  if (strcmp(mode, "vfork_exit") == 0 || strcmp(mode, "vfork_sig") == 0 ||
      strcmp(mode, "fork_failexec") == 0) {
    pid = strcmp(mode, "fork_failexec") == 0 ? fork() : vfork();
    if (pid < 0)
      return 1;
    if (pid == 0) {
      if (mode[0] == 'f') {
	execl("/nonexistent/helper", "helper", (char *)NULL);
	_exit(127);
      }
      if (strcmp(mode, "vfork_sig") == 0)
	kill(getpid(), SIGTERM);
      exit(5);
    }
    if (waitpid(pid, &st, 0) != pid || !run(L))
      return 1;
    printf("child %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    fflush(stdout);
    if (strcmp(mode, "vfork_sig") == 0)
      kill(getpid(), SIGTERM);
    return 0;
  }
  if (strcmp(mode, "pthread_wait") == 0) {
    if (pthread_create(&th, NULL, waiter, NULL) != 0)
      return 1;
    printf("ready\n");
    fflush(stdout);
    pthread_exit(NULL);
  }
  if (strcmp(mode, "abort") == 0)
    abort();
  if (strcmp(mode, "assert") == 0)
    assert(argc == 0);
  if (strcmp(mode, "segv") == 0) {
    (void)luaL_dostring(L, "crash()");
    fprintf(stderr, "endhost: still alive after the NULL write\n");
    return 1;
  }
  if (argc < 4) {
    fprintf(stderr, "endhost: %s needs a PROGRAM\n", mode);
    return 2;
  }
  if (is_exec(mode)) {
    do_exec(mode, argv + 3, argc - 3);
    printf("exec failed\n");
    fflush(stdout);
    if (!run(L))
      return 1;
    return 3;
  }
  if (strcmp(mode, "vfork") == 0) {
    pid = vfork();
    if (pid < 0)
      return 1;
    if (pid == 0) {
      execv(argv[3], argv + 3);
      _exit(127);
    }
  } else if (strcmp(mode, "spawn") == 0) {
    if (posix_spawn(&pid, argv[3], NULL, NULL, argv + 3, environ) != 0)
      return 1;
  } else {
    fprintf(stderr, "endhost: unknown mode %s\n", mode);
    return 2;
  }
  if (waitpid(pid, &st, 0) != pid)
    return 1;
  if (!run(L))
    return 1;
  printf("child %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
  return 0;
}
