/*
** ljmprof shim: the VMs of the process and what happens to their
** profilers at creation, at safe points, at close, at fork and at exit.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef LJM_REGISTRY_H
#define LJM_REGISTRY_H

#include "lua.h"

#include "ljm_config.h"

/* Set up from the environment (constructor). Returns non-zero when
** LJMPROF_OUT is set, i.e. when the hooks must be installed. */
int ljm_reg_init(void);

void ljm_reg_newstate(lua_State *L);	/* A VM was created. */
/* A VM is about to be closed: returns what ljm_reg_closed must get once
** its last block is freed (NULL: nothing). */
void *ljm_reg_close(lua_State *L);
void ljm_reg_closed(void *ud);		/* That VM is gone. */
void ljm_reg_exit(void);		/* The process exits. */

/* The process ends at once (_exit, _Exit, a terminating signal): seal
** the streams that can be, without freeing anything. here_busy: this
** thread was interrupted inside the VM. Async-signal-safe. */
void ljm_reg_die(int here_busy);

/* An exec returned: it failed with err. The streams ljm_reg_die
** finished for it stay finished; say so. Async-signal-safe. */
void ljm_reg_exec_failed(const char *what, int err);

void ljm_reg_fork_prepare(void);
void ljm_reg_fork_parent(void);
void ljm_reg_fork_child(void);

#endif
