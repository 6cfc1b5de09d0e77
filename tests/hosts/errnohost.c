/*
** errnohost: checks that creating and closing a VM leaves errno as the
** program set it (the shim must save and restore it around its work),
** linked against the system's libluajit-5.1.so.2.
**
**   errnohost SCRIPT    prints "errno kept" and exits 0, or says what
**                       changed and exits 1.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <errno.h>
#include <stdio.h>

#include <lua.h>
#include <lualib.h>
#include <lauxlib.h>

int main(int argc, char **argv)
{
  lua_State *L;
  int bad = 0;
  if (argc != 2) {
    fprintf(stderr, "usage: errnohost SCRIPT\n");
    return 2;
  }
  errno = EXDEV;
  L = luaL_newstate();
  if (errno != EXDEV) {
    fprintf(stderr, "errnohost: luaL_newstate changed errno to %d\n", errno);
    bad = 1;
  }
  luaL_openlibs(L);
  if (luaL_dofile(L, argv[1]) != 0) {
    fprintf(stderr, "errnohost: %s\n", lua_tostring(L, -1));
    return 1;
  }
  errno = EXDEV;
  lua_close(L);
  if (errno != EXDEV) {
    fprintf(stderr, "errnohost: lua_close changed errno to %d\n", errno);
    bad = 1;
  }
  if (!bad)
    printf("errno kept\n");
  return bad;
}
