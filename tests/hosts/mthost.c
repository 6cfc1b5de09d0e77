/*
** mthost: a C host with several VMs on several threads, linked against
** the system's libluajit-5.1.so.2.
**
**   mthost own N SCRIPT      N threads, each creates, runs and closes its
**                            own VM, all at the same time (sysbench);
**   mthost handoff N SCRIPT  the main thread creates N VMs, N threads run
**                            them, the main thread never closes them (wrk);
**   mthost exit N SCRIPT     N threads each create a VM and run SCRIPT over
**                            and over; the main thread calls exit() while
**                            they do (a server shutting down from a signal
**                            thread). Prints "exit" and exits 0.
**
** SCRIPT runs with the global `id` set to the VM's number (1..N) and must
** return a string, printed as "<id> <string>" in id order at the end.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lua.h>
#include <lualib.h>
#include <lauxlib.h>

#define MAXVMS 64

struct job {
  int id;			/* 1..N */
  int own;			/* Create and close the VM on the thread. */
  int forever;			/* Run the script until the process exits. */
  const char *script;		/* File to run. */
  lua_State *L;			/* The VM (handoff: made by main). */
  char result[256];		/* What the script returned. */
  int ok;			/* Ran without error. */
};

static pthread_barrier_t barrier;
static int ran;			/* Scripts run to the end (mode exit). */

static lua_State *newvm(int id)
{
  lua_State *L = luaL_newstate();
  if (L == NULL)
    return NULL;
  luaL_openlibs(L);
  lua_pushinteger(L, id);
  lua_setglobal(L, "id");
  return L;
}

static void *run(void *arg)
{
  struct job *j = arg;
  if (j->own)
    j->L = newvm(j->id);
  pthread_barrier_wait(&barrier);	/* All VMs run at the same time. */
  if (j->L == NULL)
    return NULL;
  while (j->forever) {
    if (luaL_dofile(j->L, j->script) != 0)
      break;
    lua_settop(j->L, 0);
    __atomic_add_fetch(&ran, 1, __ATOMIC_SEQ_CST);
  }
  if (luaL_dofile(j->L, j->script) != 0) {
    snprintf(j->result, sizeof(j->result), "%s", lua_tostring(j->L, -1));
  } else {
    snprintf(j->result, sizeof(j->result), "%s",
	     lua_tostring(j->L, -1) ? lua_tostring(j->L, -1) : "(nil)");
    j->ok = 1;
  }
  if (j->own) {
    lua_close(j->L);
    j->L = NULL;
  }
  return NULL;
}

int main(int argc, char **argv)
{
  struct job jobs[MAXVMS];
  pthread_t th[MAXVMS];
  int n, i, own, bad = 0;
  if (argc != 4 || (strcmp(argv[1], "own") && strcmp(argv[1], "handoff") &&
		    strcmp(argv[1], "exit")) ||
      (n = atoi(argv[2])) < 1 || n > MAXVMS) {
    fprintf(stderr, "usage: mthost own|handoff|exit N SCRIPT\n");
    return 2;
  }
  own = strcmp(argv[1], "handoff") != 0;
  pthread_barrier_init(&barrier, NULL, (unsigned)n);
  memset(jobs, 0, sizeof(jobs));
  for (i = 0; i < n; i++) {
    jobs[i].id = i + 1;
    jobs[i].own = own;
    jobs[i].script = argv[3];
    jobs[i].forever = strcmp(argv[1], "exit") == 0;
    if (!own && (jobs[i].L = newvm(i + 1)) == NULL) {
      fprintf(stderr, "mthost: cannot create a VM\n");
      return 1;
    }
  }
  for (i = 0; i < n; i++)
    if (pthread_create(&th[i], NULL, run, &jobs[i]) != 0) {
      fprintf(stderr, "mthost: cannot start a thread\n");
      return 1;
    }
  if (strcmp(argv[1], "exit") == 0) {
    /* Every VM busy, then exit under their feet. */
    while (__atomic_load_n(&ran, __ATOMIC_SEQ_CST) < 2 * n) {
      struct timespec ts = { 0, 1000000 };
      nanosleep(&ts, NULL);
    }
    printf("exit\n");
    fflush(stdout);
    exit(0);
  }
  for (i = 0; i < n; i++)
    pthread_join(th[i], NULL);
  for (i = 0; i < n; i++) {
    printf("%d %s\n", jobs[i].id, jobs[i].result);
    bad |= !jobs[i].ok;
  }
  /* handoff: like wrk, never lua_close; the streams end at exit. */
  return bad;
}
