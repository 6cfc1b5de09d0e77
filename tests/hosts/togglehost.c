/*
** togglehost: a C host that gets in the way of LJMPROF_SIGNAL (USR2)
** after its VM exists, linked against the system's libluajit-5.1.so.2.
**
**   togglehost MODE SCRIPT
**
** Creates a VM, then, by MODE:
**   none     leaves SIGUSR2 alone;
**   replace  installs its own SIGUSR2 handler (pdns_recursor);
**   block    blocks SIGUSR2 in its only thread, the VM's (dnsdist blocks
**            every signal in all its threads);
** then runs SCRIPT, closes the VM and prints "done".
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <lua.h>
#include <lualib.h>
#include <lauxlib.h>

static void on_usr2(int sig)
{
  (void)sig;
}

int main(int argc, char **argv)
{
  lua_State *L;
  const char *mode = argc == 3 ? argv[1] : "";
  if (strcmp(mode, "none") && strcmp(mode, "replace") && strcmp(mode, "block")) {
    fprintf(stderr, "usage: togglehost none|replace|block SCRIPT\n");
    return 2;
  }
  L = luaL_newstate();
  if (L == NULL) {
    fprintf(stderr, "togglehost: cannot create a Lua state\n");
    return 1;
  }
  luaL_openlibs(L);
  if (strcmp(mode, "replace") == 0) {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_usr2;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR2, &sa, NULL);
  } else if (strcmp(mode, "block") == 0) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
  }
  if (luaL_dofile(L, argv[2]) != 0) {
    fprintf(stderr, "togglehost: %s\n", lua_tostring(L, -1));
    return 1;
  }
  lua_close(L);
  printf("done\n");
  return 0;
}
