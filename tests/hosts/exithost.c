/*
** exithost: a C host that ends with _exit or _Exit while its VM is open
** (servers that shut down that way, forked helpers), linked against the
** system's libluajit-5.1.so.2.
**
**   exithost MODE SCRIPT
**
** Runs SCRIPT in a new VM and prints "ran", then, by MODE:
**   _exit    ends with _exit(5);
**   _Exit    ends with _Exit(6);
**   child    forks; the child runs SCRIPT again on its copy of the VM,
**            prints "child ran" and ends with _exit(0); the parent waits
**            for it, prints "child <status>", closes the VM, exits 0;
**   vfork    vforks; the child ends with _exit(0) at once (as after a
**            failed exec); the parent runs SCRIPT again, closes, exits 0.
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

static int run(lua_State *L, const char *script)
{
  if (luaL_dofile(L, script) != 0) {
    fprintf(stderr, "exithost: %s\n", lua_tostring(L, -1));
    return 0;
  }
  lua_settop(L, 0);
  return 1;
}

int main(int argc, char **argv)
{
  lua_State *L;
  const char *mode;
  pid_t pid;
  int st;
  if (argc != 3) {
    fprintf(stderr, "usage: exithost _exit|_Exit|child|vfork SCRIPT\n");
    return 2;
  }
  mode = argv[1];
  L = luaL_newstate();
  luaL_openlibs(L);
  if (!run(L, argv[2]))
    return 1;
  printf("ran\n");
  fflush(stdout);
  if (strcmp(mode, "_exit") == 0)
    _exit(5);
  if (strcmp(mode, "_Exit") == 0)
    _Exit(6);
  if (strcmp(mode, "child") == 0) {
    pid = fork();
    if (pid < 0)
      return 1;
    if (pid == 0) {
      if (!run(L, argv[2]))
	_exit(1);
      printf("child ran\n");
      fflush(stdout);
      _exit(0);
    }
  } else if (strcmp(mode, "vfork") == 0) {
    pid = vfork();
    if (pid < 0)
      return 1;
    if (pid == 0)
      _exit(0);
    if (!run(L, argv[2]))
      return 1;
  } else {
    fprintf(stderr, "exithost: unknown mode %s\n", mode);
    return 2;
  }
  if (waitpid(pid, &st, 0) != pid)
    return 1;
  printf("child %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
  lua_close(L);
  return 0;
}
