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
**   mthost straggle N SCRIPT N threads each create a VM, run SCRIPT a few
**                            times and wait; the main thread calls exit();
**                            each thread wakes in the middle of the exit
**                            processing (an atexit handler lets them go,
**                            each a different few tens of milliseconds
**                            later) and runs SCRIPT over and over until
**                            the process is gone; thread 1 never wakes.
**                            Prints "exit", exits 0.
**   mthost handexit N SCRIPT the main thread creates N VMs, N threads run
**                            them over and over, and the main thread
**                            calls exit() while they do: each VM was
**                            last seen on the exiting thread, which
**                            never ran it (wrk stopped by a signal
**                            thread). Prints "exit", exits 0.
**
** SCRIPT runs with the global `id` set to the VM's number (1..N) and must
** return a string, printed as "<id> <string>" in id order at the end.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <pthread.h>
#include <semaphore.h>
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
  int straggle;			/* Wait for exit, then run it forever. */
  const char *script;		/* File to run. */
  lua_State *L;			/* The VM (handoff: made by main). */
  char result[256];		/* What the script returned. */
  int ok;			/* Ran without error. */
};

static pthread_barrier_t barrier;
static int ran;			/* Scripts run to the end (mode exit). */
static int waiting;		/* Threads waiting for exit (straggle). */
static sem_t exit_began;	/* Posted once per thread at exit. */
static int nthreads;

static void let_go(void)
{
  int i;
  for (i = 0; i < nthreads; i++)
    sem_post(&exit_began);
}

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
  if (j->straggle) {
    struct timespec ts = { 0, 0 };
    int k;
    for (k = 0; k < 4; k++) {
      if (luaL_dofile(j->L, j->script) != 0)
	return NULL;
      lua_settop(j->L, 0);
    }
    __atomic_add_fetch(&waiting, 1, __ATOMIC_SEQ_CST);
    while (sem_wait(&exit_began) != 0)
      ;
    /* The shim gives running VMs a grace period at exit: wake around
    ** its end, while the exiting thread decides what to do with us. */
    ts.tv_nsec = (40 + 7 * (j->id % 5)) * 1000000L;
    if (j->id == 1)
      ts.tv_sec = 3600;	/* In use, but idle until the end. */
    nanosleep(&ts, NULL);
    j->forever = 1;
  }
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
		    strcmp(argv[1], "exit") && strcmp(argv[1], "straggle") &&
		    strcmp(argv[1], "handexit")) ||
      (n = atoi(argv[2])) < 1 || n > MAXVMS) {
    fprintf(stderr, "usage: mthost own|handoff|exit|straggle|handexit N "
	    "SCRIPT\n");
    return 2;
  }
  own = strcmp(argv[1], "handoff") != 0 && strcmp(argv[1], "handexit") != 0;
  pthread_barrier_init(&barrier, NULL, (unsigned)n);
  nthreads = n;
  sem_init(&exit_began, 0, 0);
  memset(jobs, 0, sizeof(jobs));
  for (i = 0; i < n; i++) {
    jobs[i].id = i + 1;
    jobs[i].own = own;
    jobs[i].script = argv[3];
    jobs[i].forever = strcmp(argv[1], "exit") == 0 ||
		      strcmp(argv[1], "handexit") == 0;
    jobs[i].straggle = strcmp(argv[1], "straggle") == 0;
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
  if (strcmp(argv[1], "straggle") == 0) {
    while (__atomic_load_n(&waiting, __ATOMIC_SEQ_CST) < n) {
      struct timespec ts = { 0, 1000000 };
      nanosleep(&ts, NULL);
    }
    atexit(let_go);	/* Runs before the shim's exit processing. */
    printf("exit\n");
    fflush(stdout);
    exit(0);
  }
  if (strcmp(argv[1], "exit") == 0 || strcmp(argv[1], "handexit") == 0) {
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
