/*
** ljmprof shim: the lifecycle of a VM's profiling, as a state machine.
**
** What a VM should do at a safe point, at lua_close or at exit is a pure
** function of its state and of a few facts (settings, signals, exit);
** actions.c only carries the actions out. No VM includes here: the unit
** tests link this directly.
**
**   IDLE ---- wanted ------------------------------> RUNNING
**   RUNNING - not wanted, or a toggle -------------> IDLE (a toggle that
**             finds profiling wanted again restarts: RUNNING)
**   RUNNING - the writer reached LJMPROF_MAXSIZE --> CAPPED
**   RUNNING - the writer failed -------------------> BROKEN
**   CAPPED, BROKEN - next safe point (stop) -------> HALTED
**   HALTED -- a toggle -----------------------------> IDLE (then as IDLE)
**   any running state, IDLE, HALTED - fork --------> INHERITED_ON or _OFF
**   INHERITED_ON, _OFF - first safe point or close -> IDLE (disowned:
**             the parent's profiler dropped, numbered in the child),
**             then as IDLE
**   any - the exit began (exit_req) ---------------> FINISHING -> DONE
**   any - lua_close --------------------------------> DONE (freed after
**             the VM's last block)
**   an action that fails (a file that cannot be opened, a profiler that
**   cannot start or stop cleanly) --------------------> HALTED
**
** FINISHING is taken by compare-and-swap by whichever thread finishes
** the VM at exit (its own at a safe point, or the exiting thread); DONE
** acts no more, and its writer refuses everything.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef LJM_LIFECYCLE_H
#define LJM_LIFECYCLE_H

enum ljm_vm_state {
  LJM_VM_IDLE,		/* No stream; one begins when profiling is wanted. */
  LJM_VM_RUNNING,	/* Our profiler runs, writing the current stream. */
  LJM_VM_CAPPED,	/* Running, the stream reached LJMPROF_MAXSIZE: it
			   ends at the next safe point. */
  LJM_VM_BROKEN,	/* Running, writing failed: it ends at the next
			   safe point. */
  LJM_VM_HALTED,	/* No stream, and none before the next toggle. */
  LJM_VM_INHERITED_ON,	/* Forked child: the parent's profiler is on it. */
  LJM_VM_INHERITED_OFF,	/* Forked child: not yet used here, no profiler. */
  LJM_VM_FINISHING,	/* Being finished at exit by the thread that
			   claimed it. */
  LJM_VM_DONE		/* Finished or closed: never acts again. */
};

/* What the VM's situation is when it is asked. */
struct ljm_lc_in {
  enum ljm_vm_state state;	/* Its state now. */
  int closing;			/* lua_close is closing it. */
  int exit_req;			/* The process is ending: finish now. */
  int exiting;			/* Exit processing is over: touch nothing. */
  int toggled;			/* LJMPROF_SIGNAL came since it last looked. */
  int want;			/* Profiling is wanted now. */
};

/* Actions, carried out in this order. */
#define LJM_A_IGNORE	0x01	/* Leave it exactly as it is. */
#define LJM_A_FINISH	0x02	/* Claim it and end it for the exit. */
#define LJM_A_DISOWN	0x04	/* Drop the parent's profiler (unwritten),
				   number the VM in this process. */
#define LJM_A_STOP	0x08	/* End the current stream. */
#define LJM_A_START	0x10	/* Begin a new stream. */
#define LJM_A_END	0x20	/* lua_close: end the stream for good. */
#define LJM_A_RESTART	(LJM_A_STOP | LJM_A_START)

struct ljm_lc_out {
  unsigned act;			/* LJM_A_* bits; 0: nothing to do. */
  enum ljm_vm_state next;	/* The state once they all succeeded. */
};

/* The decision. */
struct ljm_lc_out ljm_lc_decide(const struct ljm_lc_in *in);

/* The state after action `failed` (one of o->act) did not succeed: the
** VM is HALTED, unless a START follows (a toggle begins a new stream
** however the last one ended). */
enum ljm_vm_state ljm_lc_failed(const struct ljm_lc_out *o, unsigned failed);

/* Whether a profiler of ours (or the parent's) is on the VM. */
int ljm_lc_attached(enum ljm_vm_state s);

/* Whether the VM writes (the flush timer): running, its writer sound. */
int ljm_lc_writing(enum ljm_vm_state s);

/* Whether the VM, after its actions, waits under our allocator wrapper
** for a signal or a delay (can_wait: one is possible). */
int ljm_lc_waits(enum ljm_vm_state s, int can_wait);

/* The state a VM of the parent has in a forked child. */
enum ljm_vm_state ljm_lc_forked(enum ljm_vm_state s);

/* Its name, for messages and tests. */
const char *ljm_lc_name(enum ljm_vm_state s);

#endif
