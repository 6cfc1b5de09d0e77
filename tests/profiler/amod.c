/*
** A C module that allocates through the pair lua_getallocf gives it, as
** lpeg does for its compiled patterns: the bytes of such a module are
** the VM's allocator's, but not the VM's allocation functions'. Asks for
** the pair on each call, as a module would that keeps no state.
**
**   amod.churn(size, count)  allocates count blocks of size bytes through
**                            the pair, grows each to twice its size and
**                            frees it; returns the bytes allocated
**   amod.keep(size)          a userdata holding a block of size bytes of
**                            the pair, freed by its finalizer
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <string.h>

#include "lua.h"
#include "lauxlib.h"

int luaopen_amod(lua_State *L);

static int amod_churn(lua_State *L)
{
  size_t size = (size_t)luaL_checkinteger(L, 1);
  lua_Integer count = luaL_checkinteger(L, 2), i;
  void *ud;
  lua_Alloc f = lua_getallocf(L, &ud);
  for (i = 0; i < count; i++) {
    char *p = f(ud, NULL, 0, size), *q;
    if (p == NULL) return luaL_error(L, "out of memory");
    memset(p, 'a', size);
    q = f(ud, p, size, 2 * size);
    if (q == NULL) {
      f(ud, p, size, 0);
      return luaL_error(L, "out of memory");
    }
    q[2 * size - 1] = 'b';
    f(ud, q, 2 * size, 0);
  }
  lua_pushinteger(L, (lua_Integer)(3 * size * (size_t)count));
  return 1;
}

typedef struct AmodBlock {
  void *p;
  size_t size;
} AmodBlock;

static int amod_gc(lua_State *L)
{
  AmodBlock *b = (AmodBlock *)lua_touserdata(L, 1);
  void *ud;
  lua_Alloc f = lua_getallocf(L, &ud);
  if (b->p != NULL) f(ud, b->p, b->size, 0);
  b->p = NULL;
  return 0;
}

static int amod_keep(lua_State *L)
{
  size_t size = (size_t)luaL_checkinteger(L, 1);
  void *ud;
  lua_Alloc f = lua_getallocf(L, &ud);
  AmodBlock *b = (AmodBlock *)lua_newuserdata(L, sizeof(AmodBlock));
  b->size = size;
  b->p = f(ud, NULL, 0, size);
  if (b->p == NULL) return luaL_error(L, "out of memory");
  memset(b->p, 'k', size);
  luaL_getmetatable(L, "amod.block");
  lua_setmetatable(L, -2);
  return 1;
}

static const luaL_Reg amod_funcs[] = {
  { "churn", amod_churn },
  { "keep", amod_keep },
  { NULL, NULL }
};

int luaopen_amod(lua_State *L)
{
  luaL_newmetatable(L, "amod.block");
  lua_pushcfunction(L, amod_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  luaL_register(L, "amod", amod_funcs);
  return 1;
}
