/*
** A C module for the profiler's tests, loaded with require while
** profiling: its symbols are not in the stream's start table.
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include "lua.h"
#include "lauxlib.h"

int luaopen_cmod(lua_State *L);
int cmod_alloc(lua_State *L);

/* Exported: the module is stripped, only .dynsym names it. Allocates a table with 40 array slots (not colocated: 2 allocations). */
int cmod_alloc(lua_State *L)
{
  lua_createtable(L, 40, 0);
  return 1;
}

static const luaL_Reg cmod_funcs[] = {
  { "alloc", cmod_alloc },
  { NULL, NULL }
};

int luaopen_cmod(lua_State *L)
{
  luaL_register(L, "cmod", cmod_funcs);
  return 1;
}
