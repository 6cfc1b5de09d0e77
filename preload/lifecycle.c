/*
** ljmprof shim: the lifecycle of a VM's profiling (see lifecycle.h).
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include "lifecycle.h"

int ljm_lc_attached(enum ljm_vm_state s)
{
  return s == LJM_VM_RUNNING || s == LJM_VM_CAPPED || s == LJM_VM_BROKEN ||
	 s == LJM_VM_INHERITED_ON;
}

int ljm_lc_writing(enum ljm_vm_state s)
{
  return s == LJM_VM_RUNNING || s == LJM_VM_CAPPED;
}

int ljm_lc_waits(enum ljm_vm_state s, int can_wait)
{
  return can_wait && (s == LJM_VM_IDLE || s == LJM_VM_HALTED);
}

enum ljm_vm_state ljm_lc_forked(enum ljm_vm_state s)
{
  switch (s) {
  case LJM_VM_RUNNING: case LJM_VM_CAPPED: case LJM_VM_BROKEN:
  case LJM_VM_INHERITED_ON:
    return LJM_VM_INHERITED_ON;
  case LJM_VM_IDLE: case LJM_VM_HALTED: case LJM_VM_INHERITED_OFF:
    return LJM_VM_INHERITED_OFF;
  default:
    return s;	/* FINISHING, DONE: the parent's end, never undone. */
  }
}

/* A safe point of a VM that may act. */
static struct ljm_lc_out safe_point(const struct ljm_lc_in *in)
{
  struct ljm_lc_out o = { 0, in->state };
  enum ljm_vm_state s = in->state;
  if (s == LJM_VM_INHERITED_ON || s == LJM_VM_INHERITED_OFF) {
    o.act |= LJM_A_DISOWN;
    s = LJM_VM_IDLE;
  }
  if (in->toggled) {
    /* Each toggle ends the current stream and lifts a halt. */
    if (ljm_lc_attached(s))
      o.act |= LJM_A_STOP;
    s = LJM_VM_IDLE;
  }
  if (ljm_lc_attached(s) &&
      (!in->want || s == LJM_VM_CAPPED || s == LJM_VM_BROKEN)) {
    o.act |= LJM_A_STOP;
    s = s == LJM_VM_RUNNING ? LJM_VM_IDLE : LJM_VM_HALTED;
  }
  if (s == LJM_VM_IDLE && in->want) {
    o.act |= LJM_A_START;
    s = LJM_VM_RUNNING;
  }
  o.next = s;
  return o;
}

struct ljm_lc_out ljm_lc_decide(const struct ljm_lc_in *in)
{
  struct ljm_lc_out o = { LJM_A_IGNORE, in->state };
  if (in->state == LJM_VM_FINISHING || in->state == LJM_VM_DONE)
    return o;
  if (in->exit_req) {
    o.act = LJM_A_FINISH;
    o.next = LJM_VM_DONE;
    return o;
  }
  if (in->exiting)
    return o;
  if (!in->closing)
    return safe_point(in);
  /* lua_close. A forked child that closes its copy before it used it
  ** still ends a stream of its own. */
  if (in->state == LJM_VM_INHERITED_ON || in->state == LJM_VM_INHERITED_OFF)
    o = safe_point(in);
  else
    o.act = 0, o.next = in->state;
  if (ljm_lc_attached(o.next))
    o.act |= LJM_A_END;
  o.next = LJM_VM_DONE;
  return o;
}

enum ljm_vm_state ljm_lc_failed(const struct ljm_lc_out *o, unsigned failed)
{
  if (failed == LJM_A_STOP && (o->act & LJM_A_START))
    return LJM_VM_IDLE;	/* The START that follows decides. */
  if (failed == LJM_A_END)
    return LJM_VM_DONE;
  return LJM_VM_HALTED;
}

const char *ljm_lc_name(enum ljm_vm_state s)
{
  static const char *const names[] = {
    "IDLE", "RUNNING", "CAPPED", "BROKEN", "HALTED", "INHERITED_ON",
    "INHERITED_OFF", "FINISHING", "DONE"
  };
  return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}
