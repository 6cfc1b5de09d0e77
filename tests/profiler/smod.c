/*
** A C module for the tests of C function names: its Lua function is
** static, so once the module is stripped only its object and an offset
** (or its debug file) can name it. Built unstripped with a build ID;
** the tests strip a copy and make the debug file.
** Built with -fno-toplevel-reorder: smod_tiny, a few bytes and exported,
** lies just below smod_grow and is the nearest .dynsym symbol below it.
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include "lua.h"
#include "lauxlib.h"

int luaopen_smod(lua_State *L);
int smod_tiny(void);

/* Exported and tiny: it must never name smod_grow. */
int smod_tiny(void)
{
  return 7;
}

/* A table with 40 array slots (not colocated: 2 allocations). */
static int smod_grow(lua_State *L)
{
  lua_createtable(L, 40, 0);
  return 1;
}

static const luaL_Reg smod_funcs[] = {
  { "grow", smod_grow },
  { NULL, NULL }
};

int luaopen_smod(lua_State *L)
{
  luaL_register(L, "smod", smod_funcs);
  return 1;
}
