/*
** forkhost: a C host that creates a VM, then forks children that go on
** using their copy of it (nginx's master and workers), linked against the
** system's libluajit-5.1.so.2.
**
**   forkhost N SCRIPT
**
** SCRIPT must return a function f(who). The parent calls f("parent0"),
** forks N children; child i calls f("child<i>") and closes its copy of
** the VM; the parent calls f("parent1"), waits for them and closes its
** own. Each f result is printed as "<who> <result>". Exit status 0 when
** every process succeeded.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lua.h>
#include <lualib.h>
#include <lauxlib.h>

static int call(lua_State *L, const char *who)
{
  lua_pushvalue(L, 1);
  lua_pushstring(L, who);
  if (lua_pcall(L, 1, 1, 0) != 0) {
    fprintf(stderr, "forkhost: %s: %s\n", who, lua_tostring(L, -1));
    lua_pop(L, 1);
    return 0;
  }
  printf("%s %s\n", who, lua_tostring(L, -1) ? lua_tostring(L, -1) : "(nil)");
  fflush(stdout);
  lua_pop(L, 1);
  return 1;
}

int main(int argc, char **argv)
{
  lua_State *L;
  int n, i, ok = 1, st;
  pid_t pids[16];
  char who[32];
  if (argc != 3 || (n = atoi(argv[1])) < 1 || n > 16) {
    fprintf(stderr, "usage: forkhost N SCRIPT\n");
    return 2;
  }
  L = luaL_newstate();
  luaL_openlibs(L);
  if (luaL_dofile(L, argv[2]) != 0 || !lua_isfunction(L, -1)) {
    fprintf(stderr, "forkhost: %s\n", lua_tostring(L, -1));
    return 1;
  }
  ok &= call(L, "parent0");
  for (i = 0; i < n; i++) {
    pids[i] = fork();
    if (pids[i] < 0) {
      perror("fork");
      return 1;
    }
    if (pids[i] == 0) {
      snprintf(who, sizeof(who), "child%d", i + 1);
      ok = call(L, who);
      lua_close(L);
      exit(ok ? 0 : 1);
    }
  }
  ok &= call(L, "parent1");
  for (i = 0; i < n; i++) {
    if (waitpid(pids[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
      ok = 0;
  }
  lua_close(L);
  return ok ? 0 : 1;
}
