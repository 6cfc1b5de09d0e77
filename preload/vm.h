/*
** ljmprof shim: one VM's record and the process's state, shared by the
** files of preload/ (not by the unit tests, which link lifecycle.c only).
**
**   registry.c  the list of VMs (its only owner) and the two VM hooks
**   process.c   settings, start-up and the first VM
**   actions.c   the lifecycle's actions: streams, safe points, seal
**   idle.c      the allocator wrapper that gives an idle VM safe points
**   ticker.c    the flush timer thread
**   toggle.c    LJMPROF_SIGNAL: its handler and whether it can work
**   stopsig.c   the signals that end the process
**   ending.c    exit, _exit and the end of every VM
**   fork.c      the fork hooks
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef LJM_VM_H
#define LJM_VM_H

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "lua.h"

#include "ljm_config.h"
#include "lifecycle.h"
#include "writer.h"

/* At exit, how long VMs running on other threads get to finish at a safe
** point of their own before the exiting thread finishes them. */
#define LJM_EXIT_WAIT_MS	50
/* How long the end of a process waits for a VM that its own thread is
** finishing, or for the list's lock. */
#define LJM_CLAIM_WAIT_MS	1000

/* Our allocator wrapper, which gives a VM safe points while no profiler
** runs on it. */
enum ljm_wrap {
  LJM_WRAP_NONE,		/* Not installed. */
  LJM_WRAP_ON,			/* Installed, the VM's allocator. */
  LJM_WRAP_BURIED		/* The program set an allocator over it: it
				   stays under it for good, a safe point
				   while no profiler runs (idle.c). */
};

/* One VM. */
struct ljm_vm {
  struct ljm_vm *next;		/* The list of the process's VMs. */
  lua_State *L;			/* The key: its main thread, which both
				   hooks are given. */
  unsigned num;			/* Number in the process, from 1. */
  unsigned stream;		/* Streams begun in this process so far. */
  int state;			/* enum ljm_vm_state (lifecycle.h), atomic. */
  int wrap;			/* enum ljm_wrap. */
  volatile int busy;		/* The shim works on it (reconcile, writer). */
  pid_t tid;			/* Thread last seen running it. */
  unsigned seen_ticks;		/* Flush ticks accounted for. */
  lua_Alloc allocf;		/* Allocator under the idle wrapper. */
  void *allocd;			/* Its user data. */
  sig_atomic_t seen_epoch;	/* Epoch the idle wrapper saw last. */
  unsigned seen_toggles;	/* Signals accounted for. */
  unsigned seen_snaps;		/* LJMPROF_SNAPSHOT_SIGNALs accounted for. */
  unsigned countdown;		/* Idle allocations until the next clock look. */
  unsigned told;		/* Causes (1 << LJM_C_*) counted for it. */
  int sigblk;			/* Its thread blocked LJMPROF_SIGNAL when last
				   seen (counted by toggle.c). */
  struct ljm_out out;		/* The current stream's file. */
  char path[LJM_PATH_MAX];	/* Its name. */
};

/* -- The process (process.c) ---------------------------------------------- */

extern struct ljm_config ljm_cfg;	/* Settings in effect. */
extern int ljm_cfg_bad;			/* Number of bad values. */
extern int ljm_first_done;		/* First-VM work done. */
extern int ljm_exiting;			/* Exit processing ran. */
extern int ljm_exit_req;		/* Exit processing began: VMs that
					   reach a safe point finish there. */
extern uint64_t ljm_t0_ms;		/* Start of the program. */
extern pid_t ljm_self_pid;		/* getpid(), kept up to date at fork. */
extern int ljm_forked_child;		/* Forked from a profiling process. */
extern unsigned ljm_vm_count;		/* VMs numbered in this process: created
					   here, or inherited and used here. */
/* Bumped by signals, fork and writers; every safe point watches it. */
extern volatile sig_atomic_t ljm_epoch;

void ljm_tell_config(void);	/* Say the bad values, once. */
void ljm_first_vm(void);	/* Once per process tree, list locked. */

static inline void ljm_bump_epoch(void)
{
  __atomic_add_fetch(&ljm_epoch, 1, __ATOMIC_SEQ_CST);
}

static inline pid_t cur_tid(void)
{
  return (pid_t)syscall(SYS_gettid);
}

static inline void sleep_ms(long ms)
{
  struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
}

/* -- A VM's state ---------------------------------------------------------- */

/* The VM's state; moves never undo a claim for the exit (FINISHING) or
** its end (DONE), which only the finisher stores. */
static inline enum ljm_vm_state vm_state(struct ljm_vm *vm)
{
  return (enum ljm_vm_state)__atomic_load_n(&vm->state, __ATOMIC_ACQUIRE);
}

static inline int move_from(struct ljm_vm *vm, enum ljm_vm_state from,
			    enum ljm_vm_state to)
{
  int f = (int)from;
  return __atomic_compare_exchange_n(&vm->state, &f, (int)to, 0,
				     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

static inline void move(struct ljm_vm *vm, enum ljm_vm_state to)
{
  int s = __atomic_load_n(&vm->state, __ATOMIC_ACQUIRE);
  while (s != LJM_VM_FINISHING && s != LJM_VM_DONE &&
	 !__atomic_compare_exchange_n(&vm->state, &s, (int)to, 0,
				      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    ;
}

/* Note that the VM runs on this thread (at safe points and flushes). */
static inline void seen_here(struct ljm_vm *vm)
{
  __atomic_store_n(&vm->tid, cur_tid(), __ATOMIC_RELAXED);
}

/* -- The list (registry.c) ------------------------------------------------- */

void ljm_list_lock(void);
void ljm_list_unlock(void);
/* The lock within LJM_CLAIM_WAIT_MS, never when this thread holds it
** (a signal handler that interrupted a hook): 0, or -1 without it. */
int ljm_list_lock_bounded(void);
struct ljm_vm *ljm_list_head(void);	/* Lock held. */
void ljm_list_forked(void);		/* In a fork child: the lock anew. */

/* -- The lifecycle's actions (actions.c) ----------------------------------- */

/* Bring the VM's profiler to the state the settings, signals, fork and
** errors ask for. On the VM's thread. */
void ljm_act_reconcile(struct ljm_vm *vm);
/* What the VM's situation is now (t: the toggles counted). */
void ljm_act_situation(struct ljm_vm *vm, struct ljm_lc_in *in, unsigned *t);
/* Carry out what ljm_lc_decide chose, on the VM's thread. */
void ljm_act_execute(struct ljm_vm *vm, const struct ljm_lc_out *o,
		     enum ljm_vm_state was);
/* LJMPROF_SNAPSHOT_AT_CLOSE: the last snapshot of a running stream, from
** lua_close's hook (the VM whole, on its thread), before it ends. */
void ljm_act_close_snapshot(struct ljm_vm *vm);
/* The end at exit, on the VM's own thread. */
void ljm_act_finish(struct ljm_vm *vm);
/* The end at exit, from the thread that ends the process. */
void ljm_act_seal(struct ljm_vm *vm, long wait_ms);

/* -- The idle allocator wrapper (idle.c) ----------------------------------- */

void ljm_idle_install(struct ljm_vm *vm);
void ljm_idle_remove(struct ljm_vm *vm);

/* -- The flush timer (ticker.c) -------------------------------------------- */

extern unsigned ljm_ticks;		/* Ticks so far. */
void ljm_tick_start(void);		/* Once per process, when wanted. */
void ljm_tick_take(struct ljm_vm *vm);	/* On the VM's thread. */
pid_t ljm_tick_tid(void);		/* Its thread, or 0. */
void ljm_tick_forked(void);		/* In a fork child: none runs. */
/* The process's resident bytes as last read (0: not known), and the
** reading of them (not on the allocation path). */
extern volatile unsigned long long ljm_rss;
void ljm_rss_update(void);

/* -- LJMPROF_SIGNAL (toggle.c) --------------------------------------------- */

extern volatile sig_atomic_t ljm_toggles;	/* LJMPROF_SIGNAL received. */
extern volatile sig_atomic_t ljm_snapreqs;	/* LJMPROF_SNAPSHOT_SIGNAL. */
void ljm_tgl_install(void);		/* With the first VM. */
int ljm_want_now(void);			/* Profiling is wanted now. */
int ljm_delay_pending(void);		/* A delay may still start it. */
void ljm_tgl_watch_handler(void);
void ljm_tgl_watch_mask(struct ljm_vm *vm);
void ljm_tgl_watch(struct ljm_vm *vm);	/* The VM joins the list. */
void ljm_tgl_unwatch(struct ljm_vm *vm);	/* It leaves (lock held). */
void ljm_tgl_forked(void);		/* In a fork child, before re-watch. */

/* -- The signals that end the process (stopsig.c) -------------------------- */

void ljm_stop_install(void);		/* With the first VM. */

/* -- The end (ending.c) ---------------------------------------------------- */

/* At a safe point: say so, once, if a vfork child's exit used up this
** process's exit processing. */
void ljm_reg_exit_lost(void);

void ljm_end_check_other_luajit(void);

#endif
