/*
** limithost: a host that caps its VM's memory the usual way, with a
** counting wrapper over the pair lua_getallocf gives after luaL_newstate,
** which refuses to grow past a limit. Linked against the system's
** libluajit-5.1.so.2.
**
**   limithost SCRIPT [LIMIT]   runs SCRIPT (LIMIT bytes, default 512 MiB)
**
** Prints "held N", the bytes the wrapper counts as live before lua_close,
** and "after close N".
** The count is a size_t, as in real hosts: a free of a block the wrapper
** never saw wraps it around and the limit refuses everything after.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdio.h>
#include <stdlib.h>

#include <lua.h>
#include <lualib.h>
#include <lauxlib.h>

static lua_Alloc inner;		/* The allocator we wrap. */
static void *inner_ud;		/* Its user data. */
static size_t held;		/* Bytes live, as this wrapper sees them. */
static size_t limit;

static void *limiting(void *ud, void *ptr, size_t osize, size_t nsize)
{
  void *nptr;
  (void)ud;
  if (ptr == NULL) osize = 0;  /* osize is then a type tag. */
  if (nsize > osize && held + (nsize - osize) > limit)
    return NULL;  /* Past the cap: the VM raises "not enough memory". */
  nptr = inner(inner_ud, ptr, osize, nsize);
  if (nptr == NULL && nsize != 0) return NULL;
  held = held - osize + nsize;
  return nptr;
}

int main(int argc, char **argv)
{
  lua_State *L;
  if (argc != 2 && argc != 3) {
    fprintf(stderr, "usage: limithost SCRIPT [LIMIT]\n");
    return 2;
  }
  limit = argc == 3 ? strtoull(argv[2], NULL, 0) : (size_t)512 << 20;
  L = luaL_newstate();
  if (L == NULL) {
    fprintf(stderr, "limithost: no state\n");
    return 1;
  }
  inner = lua_getallocf(L, &inner_ud);
  lua_setallocf(L, limiting, NULL);
  luaL_openlibs(L);
  if (luaL_dofile(L, argv[1]) != 0) {
    fprintf(stderr, "limithost: %s\n", lua_tostring(L, -1));
    return 1;
  }
  printf("held %zu\n", held);
  lua_close(L);
  /* The blocks of lua_newstate itself were never seen: what is left is
  ** minus their size, the same with the profiler or without. */
  printf("after close %zd\n", (ssize_t)held);
  return 0;
}
