/*
** ljmprof shim: the VMs of the process (the list, its only owner) and the
** hooks of lua_newstate and lua_close.
**
** Every VM created through the shim gets a record here, keyed by its
** main thread (what both hooks are given), with one lifecycle state
** (lifecycle.h). What a VM should do is decided by ljm_lc_decide, a pure
** function the unit tests cover; actions.c carries the actions out. Its
** profiler is started, stopped and re-targeted only on the VM's own
** thread: in the newstate and close hooks, and at safe points, which are
** the profiler's poll callback while it runs, and a thin allocator
** wrapper of ours (idle.c) while it does not but may have to start later
** (signal toggle, start delay). Signals and fork only bump the epoch that
** both of them watch, so the allocation path takes no lock. A mutex
** guards the list itself, in the hooks, at fork and at exit; this file
** alone adds to the list and takes from it.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE
#include "config.h"
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "lua.h"

#include "lifecycle.h"
#include "msg.h"
#include "registry.h"
#include "vm.h"

static struct ljm_vm *vms;		/* The list. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t lock_owner;		/* Thread holding lock, or 0. */

/* -- The list's lock ------------------------------------------------------- */

void ljm_list_lock(void)
{
  pthread_mutex_lock(&lock);
  lock_owner = cur_tid();
}

void ljm_list_unlock(void)
{
  lock_owner = 0;
  pthread_mutex_unlock(&lock);
}

int ljm_list_lock_bounded(void)
{
  pid_t me = cur_tid();
  int ms;
  if (__atomic_load_n(&lock_owner, __ATOMIC_RELAXED) == me)
    return -1;	/* Interrupted inside a hook: leave all as it is. */
  for (ms = 0; pthread_mutex_trylock(&lock) != 0; ms++) {
    if (ms >= LJM_CLAIM_WAIT_MS)
      return -1;
    sleep_ms(1);
  }
  lock_owner = me;
  return 0;
}

struct ljm_vm *ljm_list_head(void)
{
  return vms;
}

/* In a forked child: the only thread now, whoever held the lock. */
void ljm_list_forked(void)
{
  pthread_mutex_init(&lock, NULL);
  lock_owner = 0;
}

/* -- Hooks ------------------------------------------------------------------ */

void ljm_reg_newstate(lua_State *L)
{
  struct ljm_vm *vm;
  int saved = errno;

  ljm_list_lock();
  if (ljm_cfg_bad) {
    ljm_tell_config();
    ljm_list_unlock();
    errno = saved;
    return;
  }
  ljm_first_vm();
  if (ljm_exiting) {
    ljm_list_unlock();
    errno = saved;
    return;
  }
  vm = calloc(1, sizeof(*vm));
  if (vm == NULL) {
    ljm_list_unlock();
    (void)ljm_msg_repeat(LJM_C_START, ENOMEM, "out of memory; a VM is not "
			 "profiled");
    errno = saved;
    return;
  }
  vm->L = L;
  vm->num = __atomic_add_fetch(&ljm_vm_count, 1, __ATOMIC_ACQ_REL);
  vm->state = LJM_VM_IDLE;
  vm->wrap = LJM_WRAP_NONE;
  vm->out.fd = -1;
  vm->tid = cur_tid();
  vm->seen_toggles = (unsigned)__atomic_load_n(&ljm_toggles, __ATOMIC_SEQ_CST);
  vm->seen_snaps = (unsigned)__atomic_load_n(&ljm_snapreqs, __ATOMIC_SEQ_CST);
  vm->seen_ticks = __atomic_load_n(&ljm_ticks, __ATOMIC_SEQ_CST);
  vm->next = vms;
  vms = vm;
  ljm_tgl_watch(vm);
  if (ljm_cfg.signo)
    ljm_tgl_watch_handler();
  ljm_list_unlock();
  /* Toggles that came before this VM existed are part of the state it
  ** starts in, not a reason to restart it. */
  ljm_act_reconcile(vm);
  errno = saved;
}

void *ljm_reg_close(lua_State *L)
{
  struct ljm_vm **pp, *vm = NULL;
  struct ljm_lc_in in;
  struct ljm_lc_out o;
  unsigned t;
  int saved = errno;

  /* L is the main thread: lua_close calls the hook with mainthread(g),
  ** whichever thread the program passed it (patch 0003). */
  ljm_list_lock();
  for (pp = &vms; *pp; pp = &(*pp)->next)
    if ((*pp)->L == L) {
      vm = *pp;
      *pp = vm->next;
      ljm_tgl_unwatch(vm);
      break;
    }
  if (vm && !ljm_exiting) {
    ljm_end_check_other_luajit();
    if (ljm_cfg.signo)
      ljm_tgl_watch_handler();
  }
  ljm_list_unlock();
  if (vm == NULL) {
    errno = saved;
    return NULL;
  }
  ljm_idle_remove(vm);
  vm->busy++;
  seen_here(vm);
  ljm_act_close_snapshot(vm);
  ljm_act_situation(vm, &in, &t);
  in.closing = 1;
  o = ljm_lc_decide(&in);
  if (o.act & LJM_A_FINISH) {
    ljm_act_finish(vm);
  } else if (!(o.act & LJM_A_IGNORE)) {
    vm->seen_toggles = t;
    ljm_act_execute(vm, &o, in.state);
  }
  vm->busy--;
  /* Not freed yet: the finalizers and the frees of the teardown come
  ** after this hook, and a C module may have kept the pair (idle_alloc,
  ** vm) that lua_getallocf gave it, or the program's allocator may call
  ** a buried wrapper. ljm_reg_closed frees it after the VM's last
  ** block. Out of the list, no other thread looks at it. */
  errno = saved;
  return vm;
}

/* lua_close is over: the VM's allocator, and ours under it, are called
** no more. On the thread that closed it. */
void ljm_reg_closed(void *ud)
{
  free(ud);
}
