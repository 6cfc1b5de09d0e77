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
** In the modes os.exit, gc, quit and alloc, SCRIPT (midexit.lua) ends
** the process itself in the middle of its work, with exit(), as the
** global `how` (the mode) says; quit is a C function of the host that
** calls exit(7), and in mode alloc the VM's allocator (lua_newstate's)
** calls exit(8) once SCRIPT has made 50000 allocator calls.
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

static unsigned long calls;	/* Mode alloc: allocator calls so far. */
static int armed;		/* Counting them. */

static void *exiting_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
  (void)ud; (void)osize;
  if (armed && ++calls == 50000)
    exit(8);		/* As a host's allocator does when memory runs out. */
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  return realloc(ptr, nsize);
}

static int quit(lua_State *L)
{
  exit((int)luaL_checkinteger(L, 1));
  return 0;
}

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
    fprintf(stderr, "usage: exithost _exit|_Exit|child|vfork|os.exit|gc|quit|"
	    "alloc SCRIPT\n");
    return 2;
  }
  mode = argv[1];
  if (strcmp(mode, "os.exit") == 0 || strcmp(mode, "gc") == 0 ||
      strcmp(mode, "quit") == 0 || strcmp(mode, "alloc") == 0) {
    L = strcmp(mode, "alloc") == 0 ? lua_newstate(exiting_alloc, NULL)
				   : luaL_newstate();
    luaL_openlibs(L);
    lua_pushstring(L, mode);
    lua_setglobal(L, "how");
    lua_pushcfunction(L, quit);
    lua_setglobal(L, "quit");
    armed = 1;
    run(L, argv[2]);
    fprintf(stderr, "exithost: %s did not end the process\n", argv[2]);
    return 1;
  }
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
