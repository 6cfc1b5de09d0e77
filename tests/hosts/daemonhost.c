/*
** daemonhost: a C host that daemonizes after using a VM (reads its
** configuration in Lua, then forks), linked against the system's
** libluajit-5.1.so.2.
**
**   daemonhost close|keep SCRIPT
**
** The parent creates a VM and runs SCRIPT in it; with close it closes
** the VM before fork, with keep after the child is done. The child never
** touches the parent's VM: it prints "child <pid>", creates a VM of its
** own, runs SCRIPT, closes it and exits 0. Exit status 0 when both
** succeeded.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lua.h>
#include <lualib.h>
#include <lauxlib.h>

static lua_State *run(const char *script)
{
  lua_State *L = luaL_newstate();
  if (L == NULL)
    return NULL;
  luaL_openlibs(L);
  if (luaL_dofile(L, script) != 0) {
    fprintf(stderr, "daemonhost: %s\n", lua_tostring(L, -1));
    return NULL;
  }
  return L;
}

int main(int argc, char **argv)
{
  lua_State *L, *C;
  int keep, st;
  pid_t pid;
  if (argc != 3 || (strcmp(argv[1], "close") && strcmp(argv[1], "keep"))) {
    fprintf(stderr, "usage: daemonhost close|keep SCRIPT\n");
    return 2;
  }
  keep = strcmp(argv[1], "keep") == 0;
  if ((L = run(argv[2])) == NULL)
    return 1;
  if (!keep)
    lua_close(L);
  fflush(stdout);
  pid = fork();
  if (pid < 0) {
    perror("fork");
    return 1;
  }
  if (pid == 0) {
    printf("child %ld\n", (long)getpid());
    fflush(stdout);
    if ((C = run(argv[2])) == NULL)
      exit(1);
    lua_close(C);
    exit(0);
  }
  if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
    return 1;
  if (keep)
    lua_close(L);
  return 0;
}
