/*
** ljmprof shim: fork. The child keeps its parent's VMs, not their streams.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE
#include "config.h"
#include <unistd.h>

#include "lifecycle.h"
#include "msg.h"
#include "registry.h"
#include "vm.h"

void ljm_reg_fork_prepare(void)
{
  /* A handler the program put over ours is told about here too, before
  ** the children inherit that it was told: nginx's master replaces it
  ** and forks its workers before the flush timer's next look. */
  if (ljm_cfg.signo)
    ljm_tgl_watch_handler();
  ljm_list_lock();
}

void ljm_reg_fork_parent(void)
{
  ljm_list_unlock();
}

void ljm_reg_fork_child(void)
{
  struct ljm_vm *vm;
  pid_t me = cur_tid();
  ljm_list_forked();
  ljm_tick_forked();
  ljm_self_pid = getpid();
  ljm_forked_child = 1;
  ljm_vm_count = 0;	/* Inherited VMs are numbered as they are used. */
  ljm_msg_reset();	/* Its own messages, counted afresh. */
  /* The only thread now: every VM is this one's. */
  ljm_tgl_forked();
  for (vm = ljm_list_head(); vm; vm = vm->next) {
    vm->tid = me;
    vm->busy = 0;
    vm->state = ljm_lc_forked(vm_state(vm));	/* The parent's, till used. */
    /* Our copy of the parent's stream, at once: it would keep the
    ** parent's lock, which says that the file is still being written
    ** (ljmprof report's live files), for as long as this child lives. */
    ljm_out_close(&vm->out);
    ljm_tgl_watch(vm);
  }
  ljm_bump_epoch();
}
