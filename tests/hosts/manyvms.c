/*
** manyvms: a C host with many idle VMs at once (trafficserver keeps one
** per thread and plugin), linked against the system's libluajit-5.1.so.2.
**
**   manyvms N     creates N VMs, runs a few allocations in each, then
**                 closes them all; prints "N vms".
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdio.h>
#include <stdlib.h>

#include <lua.h>
#include <lualib.h>
#include <lauxlib.h>

#define MAXVMS 1024

int main(int argc, char **argv)
{
  static lua_State *vms[MAXVMS];
  int n = argc > 1 ? atoi(argv[1]) : 0, i;
  if (n < 1 || n > MAXVMS) {
    fprintf(stderr, "usage: manyvms N (1 to %d)\n", MAXVMS);
    return 2;
  }
  for (i = 0; i < n; i++) {
    vms[i] = luaL_newstate();
    if (vms[i] == NULL) {
      fprintf(stderr, "manyvms: no VM %d\n", i + 1);
      return 1;
    }
    luaL_openlibs(vms[i]);
    if (luaL_dostring(vms[i], "local t = {} for i = 1, 10 do t[i] = {i} end")) {
      fprintf(stderr, "manyvms: %s\n", lua_tostring(vms[i], -1));
      return 1;
    }
  }
  for (i = 0; i < n; i++)
    lua_close(vms[i]);
  printf("%d vms\n", n);
  return 0;
}
