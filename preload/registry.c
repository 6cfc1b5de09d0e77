/*
** ljmprof shim: the VMs of the process and their profilers.
**
** Every VM created through the shim gets a record here, keyed by its
** main thread (what both hooks are given), with one lifecycle state
** (lifecycle.h). What a VM should do is decided by ljm_lc_decide, a pure
** function the unit tests cover; this file only carries the actions out.
** Its profiler is
** started, stopped and re-targeted only on the VM's own thread: in the
** newstate and close hooks, and at safe points, which are the profiler's
** poll callback while it runs, and a thin allocator wrapper of ours while
** it does not but may have to start later (signal toggle, start delay).
** Signals and fork only bump the epoch that both of them watch, so the
** allocation path takes no lock. A mutex guards the list itself, in the
** hooks, at fork and at exit.
**
** The end of the process, whatever ends it, is the one exception: the
** exiting thread (exit, _exit, a signal that terminates) asks every VM to
** finish at its next safe point, waits a moment for those last seen on
** other live threads, and then seals the stream of every VM that is left,
** its own included (end_all): written up to an event's boundary once the
** profiler says no thread is inside an event, completed, nothing freed.
** The VM's thread id, noted at each safe point and each flush (the
** writer and the poll callback run on the VM's thread, so the allocation
** path pays nothing for it), only decides how long to wait. A VM whose
** thread stays inside an event ends at its last flushed buffer,
** truncated but valid, and with LJMPROF_VERBOSE the shim says so.
** Nothing another thread may be using is freed or closed.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE
#include "config.h"
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "lua.h"
#include "ljmprof.h"
#include "lj_memprof_format.h"

#include "ljm_config.h"
#include "elfinfo.h"
#include "lifecycle.h"
#include "msg.h"
#include "outpath.h"
#include "registry.h"
#include "writer.h"

#ifndef LJM_FLAVOUR
#define LJM_FLAVOUR "luajit"
#endif
#ifndef LJM_LIBDIR
#define LJM_LIBDIR "/usr/lib/ljmprof"
#endif

/* The flush timer's period when LJMPROF_FLUSH=0 and it runs only to
** watch LJMPROF_SIGNAL. */
#define LJM_WATCH_MS	1000
/* Allocations between two looks at the clock while a delay is pending. */
#define LJM_DELAY_COUNT	64
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
				   stays a pass-through for good. */
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
  unsigned countdown;		/* Idle allocations until the next clock look. */
  unsigned told;		/* Causes (1 << LJM_C_*) counted for it. */
  int sigblk;			/* Its thread blocked LJMPROF_SIGNAL when last
				   seen (counted in n_sigblk). */
  struct ljm_out out;		/* The current stream's file. */
  char path[LJM_PATH_MAX];	/* Its name. */
};

/* -- Process state -------------------------------------------------------- */

static struct ljm_config cfg;		/* Settings in effect. */
static char cfg_msgs[LJM_NVARS_MAX][LJM_MSG_MAX];	/* Bad values. */
static int cfg_bad;			/* Number of bad values. */
static int cfg_told;			/* Bad values reported. */
static int first_done;			/* First-VM work done. */
static int exiting;			/* Exit processing ran. */
static int exit_req;			/* Exit processing began: VMs that
					   reach a safe point finish there. */
static uint64_t t0_ms;			/* Start of the program. */
static pid_t self_pid;			/* getpid(), kept up to date at fork. */
static int forked_child;		/* Forked from a profiling process. */
static unsigned vm_count;		/* VMs numbered in this process: created
					   here, or inherited and used here. */
static struct ljm_vm *vms;		/* The list. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t lock_owner;		/* Thread holding lock, or 0. */

/* Bumped by signals, fork and writers; every safe point watches it. */
static volatile sig_atomic_t epoch;
static volatile sig_atomic_t toggles;	/* LJMPROF_SIGNAL received. */
static uint64_t first_sig_ms;		/* When the first one came. */
static int sig_installed;		/* Our handler went in. */
static int sig_warned;			/* Said that it cannot work. */
static unsigned n_watched;		/* VMs of this process in the list. */
static unsigned n_sigblk;		/* Those whose thread blocks it. */

static void bump_epoch(void)
{
  __atomic_add_fetch(&epoch, 1, __ATOMIC_SEQ_CST);
}

/* The VM's state; moves never undo a claim for the exit (FINISHING) or
** its end (DONE), which only the finisher stores. */
static enum ljm_vm_state vm_state(struct ljm_vm *vm)
{
  return (enum ljm_vm_state)__atomic_load_n(&vm->state, __ATOMIC_ACQUIRE);
}

static int move_from(struct ljm_vm *vm, enum ljm_vm_state from,
		     enum ljm_vm_state to)
{
  int f = (int)from;
  return __atomic_compare_exchange_n(&vm->state, &f, (int)to, 0,
				     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

static void move(struct ljm_vm *vm, enum ljm_vm_state to)
{
  int s = __atomic_load_n(&vm->state, __ATOMIC_ACQUIRE);
  while (s != LJM_VM_FINISHING && s != LJM_VM_DONE &&
	 !__atomic_compare_exchange_n(&vm->state, &s, (int)to, 0,
				      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    ;
}

static pid_t cur_tid(void)
{
  return (pid_t)syscall(SYS_gettid);
}

/* Note that the VM runs on this thread (at safe points and flushes). */
static void seen_here(struct ljm_vm *vm)
{
  __atomic_store_n(&vm->tid, cur_tid(), __ATOMIC_RELAXED);
}

/* Whether thread tid of this process still exists. */
static int thread_alive(pid_t tid)
{
  int saved = errno, r;
  if (tid <= 0)
    return 0;
  r = syscall(SYS_tgkill, (long)self_pid, (long)tid, 0L) == 0 ||
      errno != ESRCH;
  errno = saved;
  return r;
}

static void lock_list(void)
{
  pthread_mutex_lock(&lock);
  lock_owner = cur_tid();
}

static void unlock_list(void)
{
  lock_owner = 0;
  pthread_mutex_unlock(&lock);
}

static void sleep_ms(long ms)
{
  struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
}

static void on_signal(int sig)
{
  int saved = errno;
  (void)sig;
  if (__atomic_load_n(&toggles, __ATOMIC_SEQ_CST) == 0)
    __atomic_store_n(&first_sig_ms, ljm_now_ms(), __ATOMIC_SEQ_CST);
  __atomic_add_fetch(&toggles, 1, __ATOMIC_SEQ_CST);
  bump_epoch();
  errno = saved;
}

static const char *getenv_secure(const char *name, void *ud)
{
  (void)ud;
#ifdef HAVE_SECURE_GETENV
  return secure_getenv(name);
#else
  return getenv(name);
#endif
}

static int want_now(void)
{
  unsigned t = (unsigned)__atomic_load_n(&toggles, __ATOMIC_SEQ_CST);
  return ljm_want(cfg.start, cfg.delay_ms, t0_ms, ljm_now_ms(), t,
		  __atomic_load_n(&first_sig_ms, __ATOMIC_SEQ_CST));
}

/* A delay that can still turn profiling on without a signal. */
static int delay_pending(void)
{
  return cfg.start && cfg.delay_ms != 0 &&
	 __atomic_load_n(&toggles, __ATOMIC_SEQ_CST) == 0 &&
	 ljm_now_ms() < t0_ms + cfg.delay_ms;
}

/* -- The flush timer -------------------------------------------------------- */

/*
** LJMPROF_FLUSH: a thread of ours ticks every flush_ms and bumps the
** epoch; each VM notices at its next allocation, on its own thread, and
** writes what it has buffered. After a tick the thread sleeps until some
** VM has taken it, so that a process whose VMs are idle is not woken
** again. The thread is started with the first stream of the process,
** or with its first VM when LJMPROF_SIGNAL is set (each tick then also
** looks at that signal's handler; with LJMPROF_FLUSH=0 it ticks every
** LJM_WATCH_MS for that alone); again in a forked child, which does not
** inherit it; never without LJMPROF_OUT. It blocks every signal: the
** program's signals never land on it.
*/
static pthread_mutex_t tick_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tick_cond;
static unsigned ticks;			/* Ticks so far. */
static int tick_wanted;			/* A tick no VM has taken yet. */
static pid_t ticker_pid;		/* Process the ticker runs in. */

static pid_t ticker_tid;		/* Its thread. */

static void watch_handler(void);

static void *ticker(void *arg)
{
  uint64_t ms = cfg.flush_ms ? cfg.flush_ms : LJM_WATCH_MS;
  (void)arg;
  __atomic_store_n(&ticker_tid, cur_tid(), __ATOMIC_RELEASE);
  pthread_mutex_lock(&tick_lock);
  for (;;) {
    struct timespec at;
    clock_gettime(CLOCK_MONOTONIC, &at);
    at.tv_sec += (time_t)(ms / 1000);
    at.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (at.tv_nsec >= 1000000000L) {
      at.tv_sec++;
      at.tv_nsec -= 1000000000L;
    }
    while (pthread_cond_timedwait(&tick_cond, &tick_lock, &at) != ETIMEDOUT)
      ;
    watch_handler();
    __atomic_add_fetch(&ticks, 1, __ATOMIC_SEQ_CST);
    __atomic_store_n(&tick_wanted, 1, __ATOMIC_SEQ_CST);
    bump_epoch();
    while (__atomic_load_n(&tick_wanted, __ATOMIC_SEQ_CST))
      pthread_cond_wait(&tick_cond, &tick_lock);
  }
  return NULL;
}

static void ticker_start(void)
{
  pthread_condattr_t ca;
  pthread_attr_t ta;
  pthread_t th;
  sigset_t all, old;
  int err;
  if ((cfg.flush_ms == 0 && cfg.signo == 0) || ticker_pid == self_pid)
    return;
  ticker_pid = self_pid;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&tick_cond, &ca);
  pthread_condattr_destroy(&ca);
  pthread_attr_init(&ta);
  pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&ta, 64 * 1024);
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  err = pthread_create(&th, &ta, ticker, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  pthread_attr_destroy(&ta);
  if (err)
    ljm_msg("cannot start the flush timer: %s; streams are written only "
	    "when their buffer is full", strerror(err));
}

/* On the VM's thread, at a safe point: take a tick. */
static void take_tick(struct ljm_vm *vm)
{
  unsigned t = __atomic_load_n(&ticks, __ATOMIC_SEQ_CST);
  if (t == vm->seen_ticks)
    return;
  vm->seen_ticks = t;
  if (cfg.flush_ms && ljm_lc_writing(vm_state(vm)))
    (void)ljmprof_flush(vm->L);
  if (__atomic_load_n(&tick_wanted, __ATOMIC_SEQ_CST)) {
    pthread_mutex_lock(&tick_lock);
    tick_wanted = 0;
    pthread_cond_signal(&tick_cond);
    pthread_mutex_unlock(&tick_lock);
  }
}

/* -- Whether LJMPROF_SIGNAL can work --------------------------------------- */

/*
** A toggle signal that never reaches our handler does nothing, silently:
** pdns_recursor installs its own SIGUSR2 handler after its first VM
** exists, dnsdist blocks every signal in all its threads. Both are told,
** once per process tree. The handler is looked at on each tick of the
** flush timer (which runs whenever LJMPROF_SIGNAL is set) and in the
** hooks; each VM's thread's mask at the VM's safe points. When every
** VM's thread blocks the signal, /proc says whether any thread at all
** (the timer's aside) would take it.
*/
static void sig_warn(const char *why)
{
  char name[32];
  if (__atomic_exchange_n(&sig_warned, 1, __ATOMIC_ACQ_REL))
    return;
  ljm_signal_name(cfg.signo, name, sizeof(name));
  ljm_msg("LJMPROF_SIGNAL=%s: %s, so the signal does not toggle profiling; "
	  "use a signal the program leaves alone, such as a real-time one "
	  "(LJMPROF_SIGNAL=RTMIN+3)", name, why);
}

/* Whether the handler of cfg.signo is still ours. */
static void watch_handler(void)
{
  struct sigaction sa;
  int saved = errno;
  if (!sig_installed || __atomic_load_n(&sig_warned, __ATOMIC_ACQUIRE) ||
      sigaction(cfg.signo, NULL, &sa) != 0) {
    errno = saved;
    return;
  }
  if ((sa.sa_flags & SA_SIGINFO) || sa.sa_handler != on_signal)
    sig_warn("the program replaced the shim's handler with its own");
  errno = saved;
}

/* On the VM's thread: whether it blocks cfg.signo, and whether all do. */
static void watch_mask(struct ljm_vm *vm)
{
  sigset_t set;
  int blk;
  if (!sig_installed || __atomic_load_n(&sig_warned, __ATOMIC_ACQUIRE) ||
      pthread_sigmask(SIG_BLOCK, NULL, &set) != 0)
    return;
  blk = sigismember(&set, cfg.signo) == 1;
  if (blk != vm->sigblk) {
    vm->sigblk = blk;
    if (blk)
      __atomic_add_fetch(&n_sigblk, 1, __ATOMIC_ACQ_REL);
    else
      __atomic_sub_fetch(&n_sigblk, 1, __ATOMIC_ACQ_REL);
  }
  if (blk && __atomic_load_n(&n_sigblk, __ATOMIC_ACQUIRE) ==
	     __atomic_load_n(&n_watched, __ATOMIC_ACQUIRE) &&
      ljm_sig_deliverable(cfg.signo,
			  __atomic_load_n(&ticker_tid, __ATOMIC_ACQUIRE)) == 0)
    sig_warn("every thread of the program blocks it");
}

/* The VM leaves the list (lock held). */
static void unwatch(struct ljm_vm *vm)
{
  __atomic_sub_fetch(&n_watched, 1, __ATOMIC_ACQ_REL);
  if (vm->sigblk)
    __atomic_sub_fetch(&n_sigblk, 1, __ATOMIC_ACQ_REL);
  vm->sigblk = 0;
}

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
				  : strerror(err), vm->num);
    bump_epoch();
    return err;
  }
  if (cfg.maxsize && vm->out.written >= cfg.maxsize &&
      move_from(vm, LJM_VM_RUNNING, LJM_VM_CAPPED)) {
    vm_msg(vm, LJM_C_MAXSIZE, 0, "%s reached LJMPROF_MAXSIZE; VM %u stops "
	   "profiling", vm->path, vm->num);
    bump_epoch();
  }
  return 0;
}

static void poll_cb(lua_State *L, void *ctx);
static void check_other_luajit(void);
static void install_stop_handlers(void);

/* Begin a stream: 0 with the VM RUNNING (or what its writer made of it
** already), -1 when it could not begin. */
static int start_stream(struct ljm_vm *vm)
{
  struct ljm_name k;
  ljmprof_opt opt;
  int err, r;

  k.pid = (long)self_pid;
  k.vm = vm->num;
  k.stream = ++vm->stream;
  k.tag_pid = forked_child;
  err = ljm_outpath(vm->path, sizeof(vm->path), cfg.out, &k);
  if (!err) {
    err = ljm_out_open(&vm->out, vm->path);
    if (err == EBUSY && !k.tag_pid) {
      /* Another process (started from the same environment) writes it. */
      k.tag_pid = 1;
      err = ljm_outpath(vm->path, sizeof(vm->path), cfg.out, &k);
      if (!err)
	err = ljm_out_open(&vm->out, vm->path);
    }
  }
  if (err) {
    if (cfg.manifest[0])
      (void)ljm_manifest_failed(cfg.manifest, vm->path, err);
    vm_msg(vm, LJM_C_OPEN, err, "cannot open %s: %s; VM %u is not profiled",
	   vm->path, strerror(err), vm->num);
    return -1;
  }
  if (ljm_out_is_stdout(&vm->out)) {
    vm_msg(vm, LJM_C_STDOUT, 0, "%s is the program's standard output; VM %u "
	   "is not profiled", vm->path, vm->num);
    ljm_out_close(&vm->out);
    return -1;
  }
  if (cfg.manifest[0])
    (void)ljm_manifest_add(cfg.manifest, vm->path);
  memset(&opt, 0, sizeof(opt));
  opt.writer = writer;
  opt.ctx = vm;
  opt.bufsize = (size_t)cfg.bufsize;
  opt.poll_flag = &epoch;
  opt.poll = poll_cb;
  /* RUNNING before the symbol table is written: the writer's verdict on
  ** it (BROKEN) is the one that counts. */
  move(vm, LJM_VM_RUNNING);
  r = ljmprof_start(vm->L, &opt);
  if (r != LJMPROF_OK) {
    err = r == LJMPROF_ERRMEM ? ENOMEM : r == LJMPROF_ERRUSE ? EBUSY : errno;
    if (vm_state(vm) != LJM_VM_BROKEN)
      vm_msg(vm, LJM_C_START, err, "cannot start the profiler on VM %u (%s)",
	     vm->num, r == LJMPROF_ERRMEM ? "out of memory" :
	     r == LJMPROF_ERRUSE ? "already running" : strerror(err));
    ljm_out_close(&vm->out);
    if (access(vm->path, F_OK) == 0 && !ljm_path_is_device(vm->path))
      unlink(vm->path);		/* Empty: not a stream. */
    return -1;
  }
  vm->seen_ticks = __atomic_load_n(&ticks, __ATOMIC_SEQ_CST);
  if (cfg.verbose)
    ljm_msg("[%ld] VM %u: writing %s", (long)self_pid, vm->num, vm->path);
  /* The symbol table goes to the file at once: a file of ours is never
  ** empty, even when the process ends before the first buffer is full
  ** in a way nothing can catch. */
  (void)ljmprof_flush(vm->L);
  ticker_start();
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
    vm_msg(vm, LJM_C_CLOSE, err, "closing %s: %s", vm->path, strerror(err));
  } else if (cfg.verbose) {
    ljm_msg("[%ld] VM %u: closed %s%s (%llu bytes)", (long)self_pid, vm->num,
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
  vm->num = __atomic_add_fetch(&vm_count, 1, __ATOMIC_ACQ_REL);
  vm->stream = 0;
  vm->told = 0;
}

/* -- The idle allocator wrapper -------------------------------------------- */

static void reconcile(struct ljm_vm *vm);

static void *idle_slow(struct ljm_vm *vm, void *ptr, size_t osize,
		       size_t nsize)
{
  int saved = errno;
  lua_Alloc f;
  void *ud;
  if (vm->wrap == LJM_WRAP_BURIED)
    return vm->allocf(vm->allocd, ptr, osize, nsize);
  vm->seen_epoch = __atomic_load_n(&epoch, __ATOMIC_SEQ_CST);
  reconcile(vm);
  errno = saved;
  if (vm->wrap == LJM_WRAP_ON)
    return vm->allocf(vm->allocd, ptr, osize, nsize);
  f = lua_getallocf(vm->L, &ud);	/* The profiler's, or the original. */
  return f(ud, ptr, osize, nsize);
}

static void *idle_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
  struct ljm_vm *vm = ud;
  if (__builtin_expect(vm->seen_epoch != epoch, 0) ||
      __builtin_expect(vm->countdown != 0 && --vm->countdown == 0, 0))
    return idle_slow(vm, ptr, osize, nsize);
  return vm->allocf(vm->allocd, ptr, osize, nsize);
}

static void idle_install(struct ljm_vm *vm)
{
  if (vm->wrap != LJM_WRAP_NONE)
    return;
  vm->allocf = lua_getallocf(vm->L, &vm->allocd);
  vm->seen_epoch = __atomic_load_n(&epoch, __ATOMIC_SEQ_CST);
  lua_setallocf(vm->L, idle_alloc, vm);
  vm->wrap = LJM_WRAP_ON;
}

static void idle_remove(struct ljm_vm *vm)
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
static void finish(struct ljm_vm *vm)
{
  int was = claim(vm);
  if (was < 0)
    return;
  idle_remove(vm);
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
static void seal(struct ljm_vm *vm, long wait_ms)
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
	if (cfg.verbose)
	  ljm_msg("[%ld] VM %u: in the middle of an event at exit; %s ends "
		  "at its last flushed buffer", (long)self_pid, vm->num,
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
    if (cfg.verbose)
      ljm_msg("[%ld] VM %u: %s %s%s (%llu bytes)", (long)self_pid, vm->num,
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
static void execute(struct ljm_vm *vm, const struct ljm_lc_out *o,
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

/* Bring the VM's profiler to the state the settings, signals, fork and
** errors ask for. On the VM's thread. */
static void reconcile_in(struct ljm_vm *vm);

static void reconcile(struct ljm_vm *vm)
{
  vm->busy++;
  seen_here(vm);
  reconcile_in(vm);
  vm->busy--;
}

/* What the VM's situation is now. */
static void situation(struct ljm_vm *vm, struct ljm_lc_in *in, unsigned *t)
{
  *t = (unsigned)__atomic_load_n(&toggles, __ATOMIC_SEQ_CST);
  in->state = vm_state(vm);
  in->closing = 0;
  in->exit_req = __atomic_load_n(&exit_req, __ATOMIC_ACQUIRE);
  in->exiting = exiting;
  in->toggled = *t != vm->seen_toggles;
  in->want = want_now();
}

static void reconcile_in(struct ljm_vm *vm)
{
  struct ljm_lc_in in;
  struct ljm_lc_out o;
  unsigned t;

  situation(vm, &in, &t);
  o = ljm_lc_decide(&in);
  if (o.act & LJM_A_IGNORE)
    return;
  if (o.act & LJM_A_FINISH) {
    finish(vm);		/* On its own thread: no race with its allocator. */
    return;
  }
  take_tick(vm);
  if (cfg.signo) {
    ticker_start();	/* Again in a forked child. */
    watch_mask(vm);
  }
  idle_remove(vm);
  vm->seen_toggles = t;
  execute(vm, &o, in.state);
  if (ljm_lc_waits(vm_state(vm), cfg.signo != 0 || delay_pending())) {
    vm->countdown = delay_pending() ? LJM_DELAY_COUNT : 0;
    idle_install(vm);
  }
}

static void poll_cb(lua_State *L, void *ctx)
{
  int saved = errno;
  (void)L;
  reconcile(ctx);
  errno = saved;
}

/* -- Start-up and the first VM ------------------------------------------- */

int ljm_reg_init(void)
{
  char cwd[LJM_PATH_MAX], tmpl[LJM_PATH_MAX];
  const char *out = getenv_secure("LJMPROF_OUT", NULL);
  if (out == NULL || *out == '\0')
    return 0;
  t0_ms = ljm_now_ms();
  self_pid = getpid();
  cfg_bad = ljm_config_load(&cfg, getenv_secure, NULL, cfg_msgs,
			    LJM_NVARS_MAX);
  if (!cfg_bad && cfg.out[0] != '/' && getcwd(cwd, sizeof(cwd)) != NULL &&
      ljm_template_absolute(tmpl, sizeof(tmpl), cfg.out, cwd) == 0)
    memcpy(cfg.out, tmpl, sizeof(cfg.out));
  if (!cfg_bad && cfg.manifest[0] && cfg.manifest[0] != '/' &&
      getcwd(cwd, sizeof(cwd)) != NULL &&
      ljm_template_absolute(tmpl, sizeof(tmpl), cfg.manifest, cwd) == 0)
    memcpy(cfg.manifest, tmpl, sizeof(cfg.manifest));
  if (!cfg_bad)
    ljmprof_debug_dirs(cfg.debugdir);
  return 1;
}

static void tell_config(void)
{
  int i;
  if (cfg_told)
    return;
  cfg_told = 1;
  for (i = 0; i < cfg_bad && i < LJM_NVARS_MAX; i++)
    ljm_msg("%s", cfg_msgs[i]);
}

/* Once per process tree, with the lock held: report, check, set up. */
static void first_vm(void)
{
  char buf[LJM_PATH_MAX];
  size_t i;
  if (first_done)
    return;
  first_done = 1;
  if (cfg.verbose) {
    ljm_msg("[%ld] libljmprof.so for %s, settings in effect:",
	    (long)self_pid, LJM_FLAVOUR);
    for (i = 0; i < ljm_nvars; i++)
      ljm_msg("  %s=%s", ljm_vars[i].name,
	      ljm_config_show(&ljm_vars[i], &cfg, buf, sizeof(buf)));
  }
  if (ljm_system_luajit(buf, sizeof(buf)) == 0) {
    const char *fl = ljm_elf_flavour(buf);
    if (fl && strcmp(fl, LJM_FLAVOUR) != 0)
      ljm_msg("the system library %s is the %s flavour of LuaJIT but this "
	      "libljmprof.so was built from %s: a program built for %s may "
	      "fail; use a libljmprof.so built from the %s source",
	      buf, fl, LJM_FLAVOUR, fl, fl);
  }
  install_stop_handlers();
  if (cfg.signo) {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(cfg.signo, &sa, NULL) != 0)
      ljm_msg("LJMPROF_SIGNAL: cannot install the handler: %s",
	      strerror(errno));
    else
      sig_installed = 1;
  }
}

/* -- Hooks ------------------------------------------------------------------ */

void ljm_reg_newstate(lua_State *L)
{
  struct ljm_vm *vm;
  int saved = errno;

  lock_list();
  if (cfg_bad) {
    tell_config();
    unlock_list();
    errno = saved;
    return;
  }
  first_vm();
  if (exiting) {
    unlock_list();
    errno = saved;
    return;
  }
  vm = calloc(1, sizeof(*vm));
  if (vm == NULL) {
    unlock_list();
    (void)ljm_msg_repeat(LJM_C_START, ENOMEM, "out of memory; a VM is not "
			 "profiled");
    errno = saved;
    return;
  }
  vm->L = L;
  vm->num = __atomic_add_fetch(&vm_count, 1, __ATOMIC_ACQ_REL);
  vm->state = LJM_VM_IDLE;
  vm->wrap = LJM_WRAP_NONE;
  vm->out.fd = -1;
  vm->tid = cur_tid();
  vm->seen_toggles = (unsigned)__atomic_load_n(&toggles, __ATOMIC_SEQ_CST);
  vm->seen_ticks = __atomic_load_n(&ticks, __ATOMIC_SEQ_CST);
  vm->next = vms;
  vms = vm;
  __atomic_add_fetch(&n_watched, 1, __ATOMIC_ACQ_REL);
  if (cfg.signo)
    watch_handler();
  unlock_list();
  /* Toggles that came before this VM existed are part of the state it
  ** starts in, not a reason to restart it. */
  reconcile(vm);
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
  lock_list();
  for (pp = &vms; *pp; pp = &(*pp)->next)
    if ((*pp)->L == L) {
      vm = *pp;
      *pp = vm->next;
      unwatch(vm);
      break;
    }
  if (vm && !exiting) {
    check_other_luajit();
    if (cfg.signo)
      watch_handler();
  }
  unlock_list();
  if (vm == NULL) {
    errno = saved;
    return NULL;
  }
  idle_remove(vm);
  vm->busy++;
  seen_here(vm);
  situation(vm, &in, &t);
  in.closing = 1;
  o = ljm_lc_decide(&in);
  if (o.act & LJM_A_FINISH) {
    finish(vm);
  } else if (!(o.act & LJM_A_IGNORE)) {
    vm->seen_toggles = t;
    execute(vm, &o, in.state);
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

/* -- Exit ------------------------------------------------------------------- */

static int find_other_luajit(struct dl_phdr_info *info, size_t size,
			     void *data)
{
  (void)size;
  if (info->dlpi_name && strstr(info->dlpi_name, "libluajit-5.1.so")) {
    ljm_msg("a second LuaJIT library was loaded from %s: the VMs it "
	    "creates are not profiled", info->dlpi_name);
    *(int *)data = 1;
    return 1;
  }
  return 0;
}

/* Say once if the program loaded a LuaJIT library by path (a second VM
** implementation that we do not see). At each lua_close and at exit:
** a library loaded with ffi.load is gone once its VM is closed. */
static void check_other_luajit(void)
{
  static int told;
  if (!told)
    dl_iterate_phdr(find_other_luajit, &told);
}

/* The main program defines luaL_newstate itself: LuaJIT is linked in.
** (Read from the file: dlsym would answer with our own definition, since
** we are linked -Bsymbolic.) */
static int main_is_static(void)
{
  return ljm_elf_defines("/proc/self/exe", "luaL_newstate") == 1;
}

static void warn_static(void)
{
  char exe[LJM_PATH_MAX];
  ssize_t n;
  if (!main_is_static())
    return;
  n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  exe[n > 0 ? n : 0] = '\0';
  ljm_msg("LJMPROF_OUT is set but no Lua VM was created through "
	  "libljmprof.so: %s seems to link LuaJIT statically, which no "
	  "preloaded library can reach; for the luajit command use the "
	  "bundled dynamic frontend (ljmprof record -- luajit ..., or %s/luajit)",
	  exe[0] ? exe : "the program", LJM_LIBDIR);
}

/*
** Whether this VM must be left to its own thread: some other live thread
** ran it last, or is working on it in the shim. A VM that neither runs a
** profiler nor has our wrapper installed is touched by nobody.
*/
static int elsewhere(struct ljm_vm *vm, pid_t me)
{
  pid_t tid = __atomic_load_n(&vm->tid, __ATOMIC_RELAXED);
  if (!ljm_lc_attached(vm_state(vm)) && vm->wrap != LJM_WRAP_ON && !vm->busy)
    return 0;
  return tid != me && thread_alive(tid);
}

/* VMs that another thread may still finish at a safe point of its own. */
static int pending_elsewhere(pid_t me)
{
  struct ljm_vm *vm;
  for (vm = vms; vm; vm = vm->next)
    if (vm_state(vm) != LJM_VM_DONE && elsewhere(vm, me))
      return 1;
  return 0;
}

/*
** The end of every VM, on the thread that ends the process, with the
** list locked, however the process ends (exit, _exit, a signal, maybe
** from a signal handler). One rule for every VM, whichever thread ran it:
** its stream is sealed (seal, ljmprof_seal), which writes the buffer only
** once the profiler's own busy/sealed protocol says that no thread is in
** the middle of an event, and frees nothing. The thread a VM was last
** seen on decides nothing about the buffer: a VM created here may run
** on another thread that has not reached a safe point yet (wrk), and one
** run here may be in the middle of an event under our feet (exit from
** inside the program's allocator, or from a signal handler). here_busy:
** this thread was interrupted inside the VM or the shim (the signal
** path's look at the interrupted PC), so its own VMs are left as they
** are on disk; vm->busy, the shim's own work on a VM (a safe point, the
** writer) in progress, likewise.
*/
static void end_all(int here_busy)
{
  struct ljm_vm *vm;
  pid_t me = cur_tid();
  int ms;

  /* Ask every VM to finish at its next allocation, on its own thread,
  ** and give the ones running elsewhere a moment to do so. */
  __atomic_store_n(&exit_req, 1, __ATOMIC_RELEASE);
  bump_epoch();
  for (ms = 0; ms < LJM_EXIT_WAIT_MS && pending_elsewhere(me); ms++)
    sleep_ms(1);
  for (vm = vms; vm; vm = vm->next) {
    pid_t tid;
    int mine;
    enum ljm_vm_state st;
    /* Not inside the shim here, yet the shim works on this VM: another
    ** thread is at one of its safe points, which may be finishing it
    ** (the VM last seen here, it had not said so yet). Give it time. */
    for (ms = 0; !here_busy && vm->busy && ms < LJM_EXIT_WAIT_MS; ms++)
      sleep_ms(1);
    tid = __atomic_load_n(&vm->tid, __ATOMIC_RELAXED);
    mine = tid == me;
    st = vm_state(vm);
    if (st == LJM_VM_DONE)
      continue;
    if (st == LJM_VM_FINISHING) {
      /* Its own thread is finishing it right now: let it complete. */
      for (ms = 0; ms < LJM_CLAIM_WAIT_MS &&
	   vm_state(vm) != LJM_VM_DONE; ms++)
	sleep_ms(1);
      continue;
    }
    if (mine && (here_busy || vm->busy)) {
      if (cfg.verbose && ljm_lc_attached(st))
	ljm_msg("[%ld] VM %u: interrupted inside the VM at exit; %s ends at "
		"its last flushed buffer", (long)self_pid, vm->num, vm->path);
      continue;
    }
    if (!mine && vm->busy) {
      if (cfg.verbose && ljm_lc_attached(st))
	ljm_msg("[%ld] VM %u: still in use by thread %ld at exit; %s ends "
		"at its last flushed buffer", (long)self_pid, vm->num,
		(long)tid, vm->path);
      continue;
    }
    /* Wherever it runs: sealed once no thread is inside an event. */
    seal(vm, LJM_EXIT_WAIT_MS);
  }
}

void ljm_reg_exit(void)
{
  int saved = errno;

  lock_list();
  if (exiting) {
    unlock_list();
    errno = saved;
    return;
  }
  end_all(0);
  exiting = 1;
  ljm_msg_summary();
  if (vm_count == 0 && !forked_child) {
    if (cfg_bad && main_is_static())
      tell_config();
    warn_static();
  }
  check_other_luajit();
  unlock_list();
  errno = saved;
}

/*
** The process ends now, without exit processing: _exit, _Exit, or a
** signal whose default action terminates it. Async-signal-safe as far as
** it goes: no malloc or free, the list's lock only tried for a bounded
** time, and never when this thread holds it.
*/
void ljm_reg_die(int here_busy)
{
  int saved = errno, ms;
  pid_t me;

  /* A vfork child (or a raw clone) shares its parent's memory and its
  ** VMs: it must do nothing at all. */
  if (getpid() != self_pid || !first_done)
    return;
  me = cur_tid();
  if (__atomic_load_n(&lock_owner, __ATOMIC_RELAXED) == me) {
    errno = saved;	/* Interrupted inside a hook: leave all as it is. */
    return;
  }
  for (ms = 0; pthread_mutex_trylock(&lock) != 0; ms++) {
    if (ms >= LJM_CLAIM_WAIT_MS) {
      errno = saved;
      return;
    }
    sleep_ms(1);
  }
  lock_owner = me;
  if (!exiting) {
    end_all(here_busy);
    exiting = 1;
    ljm_msg_summary();
  }
  unlock_list();
  errno = saved;
}

/* -- Signals that end the process ------------------------------------------- */

/*
** Signals whose default action ends the process and that a service
** manager, a terminal or a pipe sends to stop a program normally. When
** one of them has no handler of the program's when the first VM is
** created, the shim's takes its place: it finishes the streams, restores
** the default action and raises the signal again, so that the process
** ends exactly as it would have (same signal, core dump for SIGQUIT). A
** handler the program installs later simply replaces ours. Crash signals
** (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) are left alone: the process
** is in no state to write files; SIGXFSZ and SIGXCPU come from limits
** our own writes may hit; SIGKILL cannot be caught.
**
** Async-signal-safety: the signal may land on a thread in the middle of
** an allocation of a VM, i.e. inside the profiler with an event half
** written. The handler looks at where the thread was interrupted: in the
** code of libljmprof.so (the VM, its profiler, the shim), or in a leaf
** function called from there (memcpy), or inside one of the shim's
** callbacks (the writer, a safe point): then this thread's VMs are left
** as they are on disk (truncated at the last flushed buffer, which the
** parser reads). Otherwise the VM is between events, and sealing it
** writes its buffer and the epilogue with write(2) only. VMs of other
** threads finish at their own next allocation, in a normal context; the
** handler waits for them a bounded time. Nothing is freed and no lock is
** waited for without a bound.
*/
static const int stop_sigs[] = {
  SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGALRM, SIGTERM, SIGUSR1, SIGUSR2
};
#define N_STOP_SIGS	(sizeof(stop_sigs) / sizeof(stop_sigs[0]))
static volatile sig_atomic_t dying_sig;	/* The signal being acted on. */
static uintptr_t text_lo, text_hi;	/* Our executable segment. */

static int in_text(uintptr_t a)
{
  return a >= text_lo && a < text_hi;
}

/* Whether the thread was interrupted in our code, or in a leaf function
** called from it (its return address is then at the stack pointer). */
static int interrupted_inside(void *uc)
{
#if defined(__x86_64__)
  const ucontext_t *u = uc;
  uintptr_t pc = (uintptr_t)u->uc_mcontext.gregs[REG_RIP];
  uintptr_t sp = (uintptr_t)u->uc_mcontext.gregs[REG_RSP];
  return in_text(pc) || (sp != 0 && in_text(*(const uintptr_t *)sp));
#elif defined(__aarch64__)
  const ucontext_t *u = uc;
  return in_text((uintptr_t)u->uc_mcontext.pc) ||
	 in_text((uintptr_t)u->uc_mcontext.regs[30]);
#else
  (void)uc;
  return 1;	/* Unknown: assume the worst, leave this thread's VMs. */
#endif
}

static void on_stop_signal(int sig, siginfo_t *si, void *uc)
{
  struct sigaction sa;
  sigset_t one;
  int saved = errno, first;
  (void)si;
  first = __atomic_exchange_n(&dying_sig, sig, __ATOMIC_SEQ_CST) == 0;
  if (first) {
    ljm_reg_die(interrupted_inside(uc));
  } else {
    /* Another thread acts on an earlier one: it ends the process. */
    int ms;
    for (ms = 0; ms < 2 * LJM_CLAIM_WAIT_MS + 200; ms++)
      sleep_ms(1);
  }
  /* Now what the signal would have done without us. It is blocked while
  ** this handler runs: raised again, it is delivered on unblocking. */
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, NULL);
  syscall(SYS_tgkill, (long)getpid(), (long)cur_tid(), (long)sig);
  sigemptyset(&one);
  sigaddset(&one, sig);
  pthread_sigmask(SIG_UNBLOCK, &one, NULL);
  errno = saved;	/* Still here (blocked elsewhere): delivered on return. */
}

static int find_text(struct dl_phdr_info *info, size_t size, void *data)
{
  uintptr_t self = (uintptr_t)data;
  int i;
  (void)size;
  for (i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
	self >= lo && self < lo + ph->p_memsz) {
      text_lo = lo;
      text_hi = lo + ph->p_memsz;
      return 1;
    }
  }
  return 0;
}

/* With the first VM: our handler where the program has none. */
static void install_stop_handlers(void)
{
  struct sigaction sa, old;
  size_t i;
  dl_iterate_phdr(find_text, (void *)(uintptr_t)&install_stop_handlers);
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = on_stop_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (i = 0; i < N_STOP_SIGS; i++)
    sigaddset(&sa.sa_mask, stop_sigs[i]);
  for (i = 0; i < N_STOP_SIGS; i++) {
    int sig = stop_sigs[i];
    if (sig == cfg.signo || sigaction(sig, NULL, &old) != 0)
      continue;
    if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
      continue;		/* The program's own, or ignored: keep it. */
    sigaction(sig, &sa, NULL);
  }
}

/* -- fork ------------------------------------------------------------------- */

void ljm_reg_fork_prepare(void)
{
  /* A handler the program put over ours is told about here too, before
  ** the children inherit that it was told: nginx's master replaces it
  ** and forks its workers before the flush timer's next look. */
  if (cfg.signo)
    watch_handler();
  lock_list();
}

void ljm_reg_fork_parent(void)
{
  unlock_list();
}

void ljm_reg_fork_child(void)
{
  struct ljm_vm *vm;
  pid_t me = cur_tid();
  pthread_mutex_init(&lock, NULL);
  lock_owner = 0;
  /* The flush timer is the parent's: the child starts its own with its
  ** first stream. */
  pthread_mutex_init(&tick_lock, NULL);
  tick_wanted = 0;
  self_pid = getpid();
  forked_child = 1;
  vm_count = 0;		/* Inherited VMs are numbered as they are used. */
  ljm_msg_reset();	/* Its own messages, counted afresh. */
  /* The only thread now: every VM is this one's. */
  n_watched = n_sigblk = 0;
  ticker_tid = 0;
  for (vm = vms; vm; vm = vm->next) {
    vm->tid = me;
    vm->busy = 0;
    vm->sigblk = 0;
    vm->state = ljm_lc_forked(vm_state(vm));	/* The parent's, till used. */
    n_watched++;
  }
  bump_epoch();
}
