/*
** A C host for the attach tests: N threads, one LuaJIT VM each (the
** system library, or the shim's when preloaded). Each VM loads the
** script, then waits for the file GO, calls work(ROUNDS), writes
** DONE.<thread>, waits for the file QUIT, and closes its VM. The host
** prints one line a thread and exits 0 when all went well.
** With ATTACHHOST_EXTRA=N (up to 20), each thread has N VMs more, which
** do the same work after GO and are closed before DONE, and the host
** prints the size of its address space at the end: VMs closed while
** attached must give their memory back as they do unattached.
** With ATTACHHOST_WARM=1, each VM calls work(ROUNDS) once before GO too,
** so that an attach finds a heap (the start snapshot's test).
**
**   attachhost SCRIPT THREADS ROUNDS DIR [jit-off]
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

static const char *script, *dir;
static int rounds, jitoff, extra, warm;

static int exists(const char *name)
{
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  return access(path, F_OK) == 0;
}

static void await(const char *name)
{
  for (int i = 0; i < 60000 && !exists(name); i++)
    usleep(1000);
}

/* The process's address space in kB (VmSize). */
static long vmsize(void)
{
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  if (!f) return -1;
  while (fgets(line, sizeof(line), f))
    if (!strncmp(line, "VmSize:", 7))
      kb = atol(line + 7);
  fclose(f);
  return kb;
}

/* A VM with the script loaded, or NULL. */
static lua_State *newvm(void)
{
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  if (jitoff)
    (void)luaL_dostring(L, "jit.off()");
  if (luaL_dofile(L, script)) {
    fprintf(stderr, "attachhost: %s\n", lua_tostring(L, -1));
    lua_close(L);
    return NULL;
  }
  return L;
}

/* work(rounds) in L: its result, or -1. */
static long work(lua_State *L)
{
  lua_getglobal(L, "work");
  lua_pushinteger(L, rounds);
  if (lua_pcall(L, 1, 1, 0)) {
    fprintf(stderr, "attachhost: %s\n", lua_tostring(L, -1));
    return -1;
  }
  return (long)lua_tointeger(L, -1);
}

static void *run(void *arg)
{
  long id = (long)arg;
  lua_State *L = newvm(), *more[20];
  char path[4096];
  FILE *f;
  long r;
  if (!L)
    return (void *)1;
  for (int i = 0; i < extra; i++)
    if (!(more[i] = newvm()))
      return (void *)1;
  if (warm && work(L) < 0)
    return (void *)1;
  await("GO");
  if ((r = work(L)) < 0)
    return (void *)1;
  /* The others close while attached. */
  for (int i = 0; i < extra; i++) {
    if (work(more[i]) != r)
      return (void *)1;
    lua_close(more[i]);
  }
  snprintf(path, sizeof(path), "%s/DONE.%ld", dir, id);
  if ((f = fopen(path, "w")))
    fclose(f);
  await("QUIT");
  lua_close(L);
  printf("thread %ld: %ld\n", id, r);
  return NULL;
}

int main(int argc, char **argv)
{
  int n;
  pthread_t t[64];
  int bad = 0;
  if (argc < 5) {
    fprintf(stderr, "usage: attachhost SCRIPT THREADS ROUNDS DIR [jit-off]\n");
    return 2;
  }
  script = argv[1];
  n = atoi(argv[2]);
  rounds = atoi(argv[3]);
  dir = argv[4];
  jitoff = argc > 5 && !strcmp(argv[5], "jit-off");
  if (getenv("ATTACHHOST_EXTRA"))
    extra = atoi(getenv("ATTACHHOST_EXTRA"));
  warm = getenv("ATTACHHOST_WARM") && atoi(getenv("ATTACHHOST_WARM"));
  if (extra < 0 || extra > 20)
    return 2;
  if (n < 1 || n > 64)
    return 2;
  for (long i = 0; i < n; i++)
    pthread_create(&t[i], NULL, run, (void *)i);
  for (int i = 0; i < n; i++) {
    void *r;
    pthread_join(t[i], &r);
    bad |= r != NULL;
  }
  if (extra)
    printf("VmSize at the end: %ld kB\n", vmsize());
  return bad;
}
