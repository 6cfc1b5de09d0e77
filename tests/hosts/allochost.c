/*
** allochost: a host that puts an allocator of its own over whatever the
** VM has (as memory-limiting embedders do), after the VM was created,
** linked against the system's libluajit-5.1.so.2.
**
**   allochost SCRIPT    runs SCRIPT with the counting allocator in place,
**                       prints "allocations counted" and closes the VM.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdio.h>

#include <lua.h>
#include <lualib.h>
#include <lauxlib.h>

static lua_Alloc inner;		/* The allocator we wrap. */
static void *inner_ud;		/* Its user data. */
static unsigned long count;	/* Calls seen. */

static void *counting(void *ud, void *ptr, size_t osize, size_t nsize)
{
  (void)ud;
  count++;
  return inner(inner_ud, ptr, osize, nsize);
}

int main(int argc, char **argv)
{
  lua_State *L;
  if (argc != 2) {
    fprintf(stderr, "usage: allochost SCRIPT\n");
    return 2;
  }
  L = luaL_newstate();
  luaL_openlibs(L);
  inner = lua_getallocf(L, &inner_ud);
  lua_setallocf(L, counting, NULL);
  if (luaL_dofile(L, argv[1]) != 0) {
    fprintf(stderr, "allochost: %s\n", lua_tostring(L, -1));
    return 1;
  }
  printf("allocations %s\n", count > 1000 ? "counted" : "missing");
  lua_close(L);
  return 0;
}
