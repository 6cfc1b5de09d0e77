/*
** cachehost: a C host whose "module" keeps the allocator pair that
** lua_getallocf gave it and goes on using it while lua_close runs the
** finalizers (as C modules that allocate their own buffers through the
** VM's allocator do), linked against the system's libluajit-5.1.so.2.
**
**   cachehost MODE
**
** Creates a VM, runs some Lua code, then by MODE:
**   plain    takes the pair (lua_getallocf);
**   toggle   raises SIGUSR2 (LJMPROF_SIGNAL=USR2 stops a running profile
**            at the next allocation), allocates, then takes the pair;
**   bury     takes the pair, then sets an allocator of its own over the
**            VM's (a counting one that calls the pair).
** Then makes 200 userdata, each holding a block allocated through the
** pair, whose __gc allocates and frees a scratch block and frees the
** held one through the pair; lua_close runs them. Prints "closed N"
** (finalizers run) and exits 0.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <lua.h>
#include <lualib.h>
#include <lauxlib.h>

#define NUD	200
#define HELD	256
#define SCRATCH	96

static lua_Alloc pair_f;	/* The pair taken from lua_getallocf. */
static void *pair_ud;
static unsigned long counted;	/* bury: calls of our own allocator. */
static int finalized;		/* __gc calls. */

struct held {
  unsigned char *block;		/* HELD bytes from the pair. */
};

static int held_gc(lua_State *L)
{
  struct held *h = lua_touserdata(L, 1);
  unsigned char *s = pair_f(pair_ud, NULL, 0, SCRATCH);
  if (s != NULL) {
    memset(s, 0x5a, SCRATCH);
    s = pair_f(pair_ud, s, SCRATCH, 2 * SCRATCH);	/* Grow it. */
    if (s != NULL)
      pair_f(pair_ud, s, 2 * SCRATCH, 0);
  }
  if (h->block != NULL && h->block[0] == 0xa5 && h->block[HELD - 1] == 0xa5)
    finalized++;
  pair_f(pair_ud, h->block, HELD, 0);
  h->block = NULL;
  return 0;
}

static void *counting(void *ud, void *ptr, size_t osize, size_t nsize)
{
  (void)ud;
  counted++;
  return pair_f(pair_ud, ptr, osize, nsize);
}

static const char work[] =
  "local t = {} for i = 1, 3000 do t[i] = ('c'):rep(i % 40) .. i end "
  "return #t";

int main(int argc, char **argv)
{
  lua_State *L;
  const char *mode;
  int i;
  if (argc != 2) {
    fprintf(stderr, "usage: cachehost plain|toggle|bury\n");
    return 2;
  }
  mode = argv[1];
  L = luaL_newstate();
  luaL_openlibs(L);
  if (luaL_dostring(L, work) != 0) {
    fprintf(stderr, "cachehost: %s\n", lua_tostring(L, -1));
    return 1;
  }
  lua_settop(L, 0);
  if (strcmp(mode, "toggle") == 0) {
    raise(SIGUSR2);
    if (luaL_dostring(L, work) != 0)
      return 1;
    lua_settop(L, 0);
  } else if (strcmp(mode, "plain") != 0 && strcmp(mode, "bury") != 0) {
    fprintf(stderr, "cachehost: unknown mode %s\n", mode);
    return 2;
  }
  pair_f = lua_getallocf(L, &pair_ud);
  if (strcmp(mode, "bury") == 0)
    lua_setallocf(L, counting, NULL);
  luaL_newmetatable(L, "cachehost.held");
  lua_pushcfunction(L, held_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  lua_createtable(L, NUD, 0);
  for (i = 1; i <= NUD; i++) {
    struct held *h = lua_newuserdata(L, sizeof(*h));
    h->block = pair_f(pair_ud, NULL, 0, HELD);
    if (h->block == NULL)
      return 1;
    memset(h->block, 0xa5, HELD);
    luaL_getmetatable(L, "cachehost.held");
    lua_setmetatable(L, -2);
    lua_rawseti(L, -2, i);
  }
  lua_setglobal(L, "keep");	/* Alive until lua_close. */
  lua_close(L);
  printf("closed %d\n", finalized);
  return 0;
}
