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

#include "vm.h"

static void *idle_slow(struct ljm_vm *vm, void *ptr, size_t osize,
		       size_t nsize)
{
  int saved = errno;
  lua_Alloc f;
  void *ud;
  if (vm->wrap == LJM_WRAP_BURIED)
    return vm->allocf(vm->allocd, ptr, osize, nsize);
  vm->seen_epoch = __atomic_load_n(&ljm_epoch, __ATOMIC_SEQ_CST);
  ljm_act_reconcile(vm);
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
