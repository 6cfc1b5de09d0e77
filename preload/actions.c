/*
** ljmprof shim: the lifecycle's actions (lifecycle.h decides them): begin
** and end a stream, the writer, safe points, and a VM's end at exit.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE
#include "config.h"
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "lua.h"
#include "ljmprof.h"
#include "lj_memprof_format.h"

#include "ljm_config.h"
#include "lifecycle.h"
#include "msg.h"
#include "outpath.h"
#include "vm.h"
#include "writer.h"

/* Allocations between two looks at the clock while a delay is pending. */
#define LJM_DELAY_COUNT	64

static void poll_cb(lua_State *L, void *ctx);

/* -- Streams ------------------------------------------------------------- */

/* A message each VM could repeat: the process's first says it, the
** others are counted once per VM (ljm_msg_summary at exit). */
#define vm_msg(vm, cause, err, ...) \
  do { \
    if (!((vm)->told & (1u << (cause)))) { \
      (vm)->told |= 1u << (cause); \
      (void)ljm_msg_repeat((cause), (err), __VA_ARGS__); \
    } \
  } while (0)

static int writer(void *ctx, const void *data, size_t len)
{
  struct ljm_vm *vm = ctx;
  enum ljm_vm_state st = vm_state(vm);
  int err;
  /* A forked child never writes its parent's buffered bytes. */
  if (st == LJM_VM_INHERITED_ON || st == LJM_VM_INHERITED_OFF)
    return ECHILD;
  if (st == LJM_VM_DONE)
    return EPIPE;		/* Ended as the process dies: quietly. */
  vm->busy++;
  seen_here(vm);
  err = ljm_out_write(&vm->out, data, len);
  vm->busy--;
  if (err) {
    /* The profiler calls the writer no more on this stream. */
    if (!move_from(vm, LJM_VM_RUNNING, LJM_VM_BROKEN))
      (void)move_from(vm, LJM_VM_CAPPED, LJM_VM_BROKEN);
    vm_msg(vm, LJM_C_WRITE, err, "writing %s: %s; VM %u stops profiling",
	   vm->path, err == EBADF ? "the file was closed behind our back"
				  : ljm_strerror(err), vm->num);
    ljm_bump_epoch();
    return err;
  }
  if (ljm_cfg.maxsize && vm->out.written >= ljm_cfg.maxsize &&
      move_from(vm, LJM_VM_RUNNING, LJM_VM_CAPPED)) {
    vm_msg(vm, LJM_C_MAXSIZE, 0, "%s reached LJMPROF_MAXSIZE; VM %u stops "
	   "profiling", vm->path, vm->num);
    ljm_bump_epoch();
  }
  return 0;
}

/* Begin a stream: 0 with the VM RUNNING (or what its writer made of it
** already), -1 when it could not begin. */
static int start_stream(struct ljm_vm *vm)
{
  struct ljm_name k;
  ljmprof_opt opt;
  unsigned taken;
  int err, r;

  k.pid = (long)ljm_self_pid;
  k.vm = vm->num;
  k.stream = ++vm->stream;
  k.tag_pid = ljm_forked_child;
  /* A name that is taken (another process's, an earlier run's, the
  ** image this process replaced by exec) is left alone: the next one. */
  err = ljm_out_create(&vm->out, vm->path, sizeof(vm->path), ljm_cfg.out, &k,
		       &taken);
  if (err) {
    if (ljm_cfg.manifest[0])
      (void)ljm_manifest_failed(ljm_cfg.manifest, vm->path, err);
    vm_msg(vm, LJM_C_OPEN, err, "cannot open %s: %s; VM %u is not profiled",
	   vm->path, ljm_out_strerror(err), vm->num);
    return -1;
  }
  if (taken)
    vm_msg(vm, LJM_C_TAKEN, 0, "VM %u writes %s: a file of the stream's "
	   "first name was there already, and is left as it is", vm->num,
	   vm->path);
  if (ljm_out_is_stdout(&vm->out)) {
    vm_msg(vm, LJM_C_STDOUT, 0, "%s is the program's standard output; VM %u "
	   "is not profiled", vm->path, vm->num);
    ljm_out_close(&vm->out);
    return -1;
  }
  if (ljm_cfg.manifest[0])
    (void)ljm_manifest_add(ljm_cfg.manifest, vm->path);
  memset(&opt, 0, sizeof(opt));
  opt.writer = writer;
  opt.ctx = vm;
  opt.bufsize = (size_t)ljm_cfg.bufsize;
  opt.stack_depth = (int)ljm_cfg.stacks;
  opt.sample = (size_t)ljm_cfg.sample;
  opt.graph = ljm_cfg.graph;
  opt.seed = ljm_cfg.seed;
  opt.poll_flag = &ljm_epoch;
  opt.poll = poll_cb;
  opt.rss = &ljm_rss;		/* The flush timer keeps it up to date. */
  ljm_rss_update();
  /* RUNNING before the symbol table is written: the writer's verdict on
  ** it (BROKEN) is the one that counts. */
  move(vm, LJM_VM_RUNNING);
  r = ljmprof_start(vm->L, &opt);
  if (r != LJMPROF_OK) {
    err = r == LJMPROF_ERRMEM ? ENOMEM : r == LJMPROF_ERRUSE ? EBUSY : errno;
    if (vm_state(vm) != LJM_VM_BROKEN)
      vm_msg(vm, LJM_C_START, err, "cannot start the profiler on VM %u (%s)",
	     vm->num, r == LJMPROF_ERRMEM ? "out of memory" :
	     r == LJMPROF_ERRUSE ? "already running" : ljm_strerror(err));
    ljm_out_close(&vm->out);
    if (access(vm->path, F_OK) == 0 && !ljm_path_is_device(vm->path))
      unlink(vm->path);		/* Empty: not a stream. */
    return -1;
  }
  vm->seen_ticks = __atomic_load_n(&ljm_ticks, __ATOMIC_SEQ_CST);
  if (ljm_cfg.verbose)
    ljm_msg("[%ld] VM %u: writing %s", (long)ljm_self_pid, vm->num, vm->path);
  /* The symbol table goes to the file at once: a file of ours is never
  ** empty, even when the process ends before the first buffer is full
  ** in a way nothing can catch. */
  (void)ljmprof_flush(vm->L);
  ljm_tick_start();
  return 0;
}

/*
** End the stream of a VM whose state was `was` (RUNNING, CAPPED or
** BROKEN; FINISHING keeps the state, the caller knows what it was):
** 0, or -1 when it did not end cleanly (the VM is then HALTED).
*/
static int stop_stream(struct ljm_vm *vm, enum ljm_vm_state was)
{
  enum ljm_vm_state now;
  int r, err, capped;
  ljm_rss_update();		/* The end's time mark has the last value. */
  r = ljmprof_stop(vm->L);
  err = ljm_out_finish(&vm->out);
  now = vm_state(vm);	/* The last flush may have moved it. */
  capped = was == LJM_VM_CAPPED || now == LJM_VM_CAPPED;
  if (r == LJMPROF_ERRIO || was == LJM_VM_BROKEN || now == LJM_VM_BROKEN) {
    return -1;
  } else if (r == LJMPROF_ERRUSE) {
    /* The program put an allocator of its own over the profiler's. */
    int empty = vm->out.written == 0 && !ljm_path_is_device(vm->path);
    if (empty)
      unlink(vm->path);
    vm_msg(vm, LJM_C_ALLOCF, 0, "VM %u: the profiler was no longer in place "
	   "(the program set its own allocator): %s %s", vm->num, vm->path,
	   empty ? "not written" : "ends without its epilogue");
    return -1;
  } else if (err) {
    vm_msg(vm, LJM_C_CLOSE, err, "closing %s: %s", vm->path, ljm_strerror(err));
  } else if (ljm_cfg.verbose) {
    ljm_msg("[%ld] VM %u: closed %s%s (%llu bytes)", (long)ljm_self_pid, vm->num,
	    vm->path, capped ? " at LJMPROF_MAXSIZE" : "",
	    (unsigned long long)vm->out.written);
  }
  return 0;
}

/* In a forked child: the inherited profiler's buffer is the parent's. */
static void disown(struct ljm_vm *vm, enum ljm_vm_state was)
{
  if (was == LJM_VM_INHERITED_ON)
    ljmprof_abandon(vm->L);
  ljm_out_close(&vm->out);	/* Our copy only: the parent keeps its lock. */
  /* Numbered in the child when first used there: a daemon's child that
  ** leaves its parent's VMs alone numbers its own from 1. */
  vm->num = __atomic_add_fetch(&ljm_vm_count, 1, __ATOMIC_ACQ_REL);
  vm->stream = 0;
  vm->told = 0;
}

/* -- Safe points ----------------------------------------------------------- */

/* Take the VM for its end at exit: the state it had, or -1 when someone
** else has it already. */
static int claim(struct ljm_vm *vm)
{
  int s = __atomic_load_n(&vm->state, __ATOMIC_ACQUIRE);
  do {
    if (s == LJM_VM_FINISHING || s == LJM_VM_DONE)
      return -1;
  } while (!__atomic_compare_exchange_n(&vm->state, &s, LJM_VM_FINISHING, 0,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
  return s;
}

/* The end at exit, once per VM (the VM's own thread at a safe point, or
** the exiting thread, whichever claims it first). */
void ljm_act_finish(struct ljm_vm *vm)
{
  int was = claim(vm);
  if (was < 0)
    return;
  ljm_idle_remove(vm);
  if (was == LJM_VM_INHERITED_ON) {
    ljmprof_abandon(vm->L);	/* Never flush the parent's bytes. */
    ljm_out_close(&vm->out);
  } else if (ljm_lc_attached((enum ljm_vm_state)was)) {
    (void)stop_stream(vm, (enum ljm_vm_state)was);
  }
  __atomic_store_n(&vm->state, LJM_VM_DONE, __ATOMIC_RELEASE);
}

/*
** The end at exit (exit, _exit, a terminating signal), from the thread
** that ends the process, for a VM that any thread, this one included, may
** be running: once no thread is in the middle of one of its events (at
** most wait_ms), write what is buffered and the epilogue, close. Nothing
** is freed and no lock taken (this may run in a signal handler that
** interrupted malloc); the profiler stays attached, sealed, a
** pass-through for whatever still runs, and the writer refuses
** everything from now on (DONE). A VM that is not recording is only
** marked DONE: its wrapper, if any, stays in place as a pass-through.
*/
void ljm_act_seal(struct ljm_vm *vm, long wait_ms)
{
  static const unsigned char epilogue = LJM_EV_EPILOGUE;
  int complete = 0, was = claim(vm);
  if (was < 0)
    return;
  if (was == LJM_VM_RUNNING || was == LJM_VM_CAPPED || was == LJM_VM_BROKEN) {
    int r = LJMPROF_ERRIO;
    if (was != LJM_VM_BROKEN) {
      /* ljmprof_seal waits for nothing: it says when the VM's thread is
      ** in the middle of an event, which this thread then waits out. */
      long ms;
      for (ms = 0; (r = ljmprof_seal(vm->L)) == LJMPROF_ERRBUSY &&
	   ms < wait_ms; ms++)
	sleep_ms(1);
      if (r == LJMPROF_ERRBUSY) {
	if (ljm_cfg.verbose)
	  ljm_msg("[%ld] VM %u: in the middle of an event at exit; %s ends "
		  "at its last flushed buffer", (long)ljm_self_pid, vm->num,
		  vm->path);
	/* Sealed: nothing more is written; the file stays open. */
	__atomic_store_n(&vm->state, LJM_VM_DONE, __ATOMIC_RELEASE);
	return;
      }
    }
    if (r == LJMPROF_OK &&
	ljm_out_write(&vm->out, &epilogue, 1) == 0)
      complete = 1;
    __atomic_store_n(&vm->state, LJM_VM_DONE, __ATOMIC_RELEASE);
    (void)ljm_out_finish(&vm->out);
    if (ljm_cfg.verbose)
      ljm_msg("[%ld] VM %u: %s %s%s (%llu bytes)", (long)ljm_self_pid, vm->num,
	      complete ? "closed" : "could not complete", vm->path,
	      complete && was == LJM_VM_CAPPED ? " at LJMPROF_MAXSIZE" : "",
	      (unsigned long long)vm->out.written);
  }
  __atomic_store_n(&vm->state, LJM_VM_DONE, __ATOMIC_RELEASE);
}

/*
** Carry out what ljm_lc_decide chose, in its order, on the VM's thread;
** an action that fails gives the state ljm_lc_failed says.
*/
void ljm_act_execute(struct ljm_vm *vm, const struct ljm_lc_out *o,
		    enum ljm_vm_state was)
{
  enum ljm_vm_state next = o->next;
  if (o->act & LJM_A_DISOWN) {
    disown(vm, was);
    was = LJM_VM_IDLE;
    move(vm, LJM_VM_IDLE);
  }
  if ((o->act & LJM_A_STOP) && stop_stream(vm, vm_state(vm)) != 0)
    next = ljm_lc_failed(o, LJM_A_STOP);
  if (o->act & LJM_A_START)
    next = start_stream(vm) == 0 ? vm_state(vm)
				 : ljm_lc_failed(o, LJM_A_START);
  if ((o->act & LJM_A_END) && ljm_lc_attached(vm_state(vm)))
    (void)stop_stream(vm, vm_state(vm));
  move(vm, next);
}

static void reconcile_in(struct ljm_vm *vm);

/* A snapshot into the stream the VM writes, with the heap graph under
** LJMPROF_GRAPH, for what (the variable that asked); on its thread. */
static void take_snapshot(struct ljm_vm *vm, const char *what)
{
  int st;
  if (vm_state(vm) != LJM_VM_RUNNING)
    return;
  st = ljmprof_snapshotx(vm->L, ljm_cfg.graph ? LJMPROF_SNAPSHOT_GRAPH : 0);
  if (st == LJMPROF_ERRUSE)
    vm_msg(vm, LJM_C_SNAPSHOT, 0, "%s: VM %u writes no snapshots: its "
	   "stream %s", what, vm->num, ljm_cfg.sample ?
	   "is sampled (LJMPROF_SAMPLE)" : "has no stacks (LJMPROF_STACKS)");
  else if (st == LJMPROF_OK && ljm_cfg.verbose)
    ljm_msg("[%ld] VM %u: a snapshot into %s", (long)ljm_self_pid, vm->num,
	    vm->path);
}

/* LJMPROF_SNAPSHOT_SIGNAL came since the VM last looked: a snapshot into
** the stream it writes (none when it writes none). */
static void snapshot_in(struct ljm_vm *vm)
{
  unsigned r = (unsigned)__atomic_load_n(&ljm_snapreqs, __ATOMIC_SEQ_CST);
  if (r == vm->seen_snaps)
    return;
  vm->seen_snaps = r;
  take_snapshot(vm, "LJMPROF_SNAPSHOT_SIGNAL");
}

void ljm_act_close_snapshot(struct ljm_vm *vm)
{
  if (ljm_cfg.snapclose)
    take_snapshot(vm, "LJMPROF_SNAPSHOT_AT_CLOSE");
}

void ljm_act_reconcile(struct ljm_vm *vm)
{
  vm->busy++;
  seen_here(vm);
  ljm_reg_exit_lost();
  reconcile_in(vm);
  snapshot_in(vm);
  vm->busy--;
}

/* What the VM's situation is now. */
void ljm_act_situation(struct ljm_vm *vm, struct ljm_lc_in *in, unsigned *t)
{
  *t = (unsigned)__atomic_load_n(&ljm_toggles, __ATOMIC_SEQ_CST);
  in->state = vm_state(vm);
  in->closing = 0;
  in->exit_req = __atomic_load_n(&ljm_exit_req, __ATOMIC_ACQUIRE);
  in->exiting = ljm_exiting;
  in->toggled = *t != vm->seen_toggles;
  in->want = ljm_want_now();
}

static void reconcile_in(struct ljm_vm *vm)
{
  struct ljm_lc_in in;
  struct ljm_lc_out o;
  unsigned t;
  int delay;

  /* Whether a delay may still start profiling, asked once and before
  ** the situation: a delay that ran out between the two looks left the
  ** wrapper off (or on with no countdown), and the start never came. */
  delay = ljm_delay_pending();
  ljm_act_situation(vm, &in, &t);
  o = ljm_lc_decide(&in);
  if (o.act & LJM_A_IGNORE)
    return;
  if (o.act & LJM_A_FINISH) {
    ljm_act_finish(vm);		/* On its own thread: no race with its allocator. */
    return;
  }
  ljm_tick_take(vm);
  if (ljm_cfg.signo) {
    ljm_tick_start();	/* Again in a forked child. */
    ljm_tgl_watch_mask(vm);
  }
  ljm_idle_remove(vm);
  vm->seen_toggles = t;
  ljm_act_execute(vm, &o, in.state);
  if (ljm_lc_waits(vm_state(vm), ljm_cfg.signo != 0 || delay)) {
    vm->countdown = delay ? LJM_DELAY_COUNT : 0;
    ljm_idle_install(vm);
  }
}

static void poll_cb(lua_State *L, void *ctx)
{
  int saved = errno;
  (void)L;
  ljm_act_reconcile(ctx);
  errno = saved;
}
