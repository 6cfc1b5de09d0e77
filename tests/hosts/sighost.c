/*
** sighost: a long-running C host stopped by a signal, linked against the
** system's libluajit-5.1.so.2.
**
**   sighost MODE SCRIPT
**
** Runs SCRIPT in a new VM, which stays open, prints "ready" and waits
** for signals (pause). MODE:
**   wait     no handler of its own: a SIGTERM or SIGINT ends it with the
**            signal's default action;
**   before   installs a SIGTERM and SIGINT handler before creating the VM;
**            on the signal it prints "stopping", closes the VM and exits 0;
**   after    installs its own SIGTERM handler after the VM exists (the
**            shim has put its own there by then); the handler writes
**            "handled" and ends the process with _exit(3).
** SIGINT and SIGQUIT are reset to their default first: a shell starts
** background jobs with them ignored.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <lua.h>
#include <lualib.h>
#include <lauxlib.h>

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
  (void)sig;
  stop = 1;
}

static void on_term_exit(int sig)
{
  static const char msg[] = "handled\n";
  (void)sig;
  if (write(1, msg, sizeof(msg) - 1) < 0)
    _exit(4);
  _exit(3);
}

static void handle(int sig, void (*f)(int))
{
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = f;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, NULL);
}

int main(int argc, char **argv)
{
  lua_State *L;
  const char *mode;
  if (argc != 3 || (strcmp(argv[1], "wait") && strcmp(argv[1], "before") &&
		    strcmp(argv[1], "after"))) {
    fprintf(stderr, "usage: sighost wait|before|after SCRIPT\n");
    return 2;
  }
  mode = argv[1];
  signal(SIGINT, SIG_DFL);
  signal(SIGQUIT, SIG_DFL);
  if (strcmp(mode, "before") == 0) {
    handle(SIGTERM, on_stop);
    handle(SIGINT, on_stop);
  }
  L = luaL_newstate();
  if (L == NULL) {
    fprintf(stderr, "sighost: cannot create a Lua state\n");
    return 1;
  }
  luaL_openlibs(L);
  if (luaL_dofile(L, argv[2]) != 0) {
    fprintf(stderr, "sighost: %s\n", lua_tostring(L, -1));
    return 1;
  }
  if (strcmp(mode, "after") == 0)
    handle(SIGTERM, on_term_exit);
  printf("ready\n");
  fflush(stdout);
  while (!stop)
    pause();
  printf("stopping\n");
  lua_close(L);
  return 0;
}
