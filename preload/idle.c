/*
** ljmprof shim: the allocator wrapper that gives a VM safe points while no
** profiler runs on it (a toggle signal or a start delay may start one).
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE
#include "config.h"
#include <errno.h>

#include "lua.h"
#include "ljmprof.h"

#include "vm.h"

/* No profiler of ours runs on the VM: it waits for one, or has not yet
** looked since a fork. */
static int idle_waits(enum ljm_vm_state s)
{
  return s == LJM_VM_IDLE || s == LJM_VM_HALTED || s == LJM_VM_INHERITED_OFF;
}

/* The safe point, told which block the call frees, if it frees one: a
** profiler started there has it in its start snapshot. */
static void idle_reconcile(struct ljm_vm *vm, void *ptr, size_t osize,
			   size_t nsize)
{
  if (nsize == 0 && ptr != NULL) {
    ljmprof_freeing = ptr;
    ljmprof_freesize = osize;
  }
  ljm_act_reconcile(vm);
  ljmprof_freeing = NULL;
}

static void *idle_slow(struct ljm_vm *vm, void *ptr, size_t osize,
		       size_t nsize)
{
  int saved = errno;
  lua_Alloc f;
  void *ud;
  if (ljmprof_insweep(vm->L)) {
    /* Inside the collector's string sweep: a profiler started here would
    ** miss a chain of strings. The next call is the safe point. */
    vm->countdown = 1;
    return vm->allocf(vm->allocd, ptr, osize, nsize);
  }
  vm->seen_epoch = __atomic_load_n(&ljm_epoch, __ATOMIC_SEQ_CST);
  if (vm->wrap == LJM_WRAP_BURIED) {
    /* Under the program's allocator, which still calls this one: the
    ** VM's safe point while no profiler of ours runs on it (a delay or a
    ** toggle starts one over the program's allocator), and nothing while
    ** one runs (its own safe points serve then). */
    if (idle_waits(vm_state(vm))) {
      idle_reconcile(vm, ptr, osize, nsize);
      errno = saved;
    }
    return vm->allocf(vm->allocd, ptr, osize, nsize);
  }
  idle_reconcile(vm, ptr, osize, nsize);
  errno = saved;
  if (vm->wrap == LJM_WRAP_ON)
    return vm->allocf(vm->allocd, ptr, osize, nsize);
  f = lua_getallocf(vm->L, &ud);	/* The profiler's, or the original. */
  return f(ud, ptr, osize, nsize);
}

static void *idle_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
  struct ljm_vm *vm = ud;
  if (__builtin_expect(vm->seen_epoch != ljm_epoch, 0) ||
      __builtin_expect(vm->countdown != 0 && --vm->countdown == 0, 0))
    return idle_slow(vm, ptr, osize, nsize);
  return vm->allocf(vm->allocd, ptr, osize, nsize);
}

void ljm_idle_install(struct ljm_vm *vm)
{
  if (vm->wrap != LJM_WRAP_NONE)
    return;
  vm->allocf = lua_getallocf(vm->L, &vm->allocd);
  vm->seen_epoch = __atomic_load_n(&ljm_epoch, __ATOMIC_SEQ_CST);
  lua_setallocf(vm->L, idle_alloc, vm);
  vm->wrap = LJM_WRAP_ON;
}

void ljm_idle_remove(struct ljm_vm *vm)
{
  void *ud;
  if (vm->wrap != LJM_WRAP_ON)
    return;
  /* Only if still ours: a program may have set an allocator of its own
  ** since (then its allocator calls ours, or not at all). */
  if (lua_getallocf(vm->L, &ud) == idle_alloc && ud == vm)
    lua_setallocf(vm->L, vm->allocf, vm->allocd);
  else
    vm->wrap = LJM_WRAP_BURIED;
  if (vm->wrap == LJM_WRAP_ON)
    vm->wrap = LJM_WRAP_NONE;
}
