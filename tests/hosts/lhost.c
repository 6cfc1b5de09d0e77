/*
** lhost: a minimal C host that embeds LuaJIT the way real programs do,
** linked against the system's libluajit-5.1.so.2.
**
**   lhost [--no-close] SCRIPT [ARGS...]
**
** Runs SCRIPT in a new VM (luaL_newstate + luaL_openlibs), with ARGS in
** the global table arg, then closes the VM (unless --no-close) and exits
** 0, or prints the error on stderr and exits 1.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdio.h>
#include <string.h>

#include <lua.h>
#include <lualib.h>
#include <lauxlib.h>

int main(int argc, char **argv)
{
  int close = 1, i, status;
  lua_State *L;
  if (argc > 1 && strcmp(argv[1], "--no-close") == 0) {
    close = 0;
    argv++; argc--;
  }
  if (argc < 2) {
    fprintf(stderr, "usage: lhost [--no-close] SCRIPT [ARGS...]\n");
    return 2;
  }
  L = luaL_newstate();
  if (L == NULL) {
    fprintf(stderr, "lhost: cannot create a Lua state\n");
    return 1;
  }
  luaL_openlibs(L);
  lua_createtable(L, argc - 2, 1);
  for (i = 1; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - 1);
  }
  lua_setglobal(L, "arg");
  status = luaL_dofile(L, argv[1]);
  if (status != 0)
    fprintf(stderr, "lhost: %s\n", lua_tostring(L, -1));
  if (close)
    lua_close(L);
  return status != 0;
}
