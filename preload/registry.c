/*
** ljmprof shim: the VMs of the process and their profilers.
**
** Every VM created through the shim gets a record here. Its profiler is
** started, stopped and re-targeted only on the VM's own thread: in the
** newstate and close hooks, and at safe points, which are the profiler's
** poll callback while it runs, and a thin allocator wrapper of ours while
** it does not but may have to start later (signal toggle, start delay).
** Signals and fork only bump the epoch that both of them watch, so the
** allocation path takes no lock. A mutex guards the list itself, in the
** hooks, at fork and at exit.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE
#include "config.h"
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "lua.h"
#include "lj_obj.h"
#include "ljmprof.h"

#include "ljm_config.h"
#include "elfinfo.h"
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

/* Allocations between two looks at the clock while a delay is pending. */
#define LJM_DELAY_COUNT	64
/* At exit, how long VMs running on other threads get to finish at a safe
** point of their own before the exiting thread finishes them. */
#define LJM_EXIT_WAIT_MS	50

/* One VM. */
struct ljm_vm {
  struct ljm_vm *next;		/* The list of the process's VMs. */
  lua_State *L;			/* Its main thread. */
  global_State *g;		/* The key: any thread's G(L). */
  unsigned num;			/* Number in the process, from 1. */
  unsigned stream;		/* Streams begun by the owner so far. */
  pid_t owner;			/* Process that the profiler state belongs to. */
  int running;			/* A profiler of the owner runs on it. */
  int halted;			/* Cap reached or I/O error: off until toggled. */
  int failed;			/* The writer failed on the current stream. */
  int idle;			/* Our allocator wrapper is installed. */
  int buried;			/* The program set an allocator over our
				   wrapper: it stays a pass-through. */
  int claim;			/* Set (atomically) by whoever finishes it at exit. */
  int done;			/* Finished at exit: never act again. */
  lua_Alloc allocf;		/* Allocator under the idle wrapper. */
  void *allocd;			/* Its user data. */
  sig_atomic_t seen_epoch;	/* Epoch the idle wrapper saw last. */
  unsigned seen_toggles;	/* Signals accounted for. */
  unsigned countdown;		/* Idle allocations until the next clock look. */
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
static unsigned vm_count;		/* VMs created (inherited ones too). */
static struct ljm_vm *vms;		/* The list. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Bumped by signals, fork and writers; every safe point watches it. */
static volatile sig_atomic_t epoch;
static volatile sig_atomic_t toggles;	/* LJMPROF_SIGNAL received. */
static uint64_t first_sig_ms;		/* When the first one came. */

static void bump_epoch(void)
{
  __atomic_add_fetch(&epoch, 1, __ATOMIC_SEQ_CST);
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

/* -- Streams ------------------------------------------------------------- */

static int writer(void *ctx, const void *data, size_t len)
{
  struct ljm_vm *vm = ctx;
  int err;
  /* A forked child never writes its parent's buffered bytes. */
  if (vm->owner != self_pid)
    return ECHILD;
  err = ljm_out_write(&vm->out, data, len);
  if (err) {
    if (!vm->failed) {
      vm->failed = 1;
      ljm_msg("writing %s: %s; VM %u stops profiling", vm->path,
	      err == EBADF ? "the file was closed behind our back"
			   : strerror(err), vm->num);
      bump_epoch();
    }
    return err;
  }
  if (cfg.maxsize && vm->out.written >= cfg.maxsize && !vm->halted) {
    vm->halted = 1;
    ljm_msg("%s reached LJMPROF_MAXSIZE; VM %u stops profiling", vm->path,
	    vm->num);
    bump_epoch();
  }
  return 0;
}

static void poll_cb(lua_State *L, void *ctx);
static void check_other_luajit(void);

static void start_stream(struct ljm_vm *vm)
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
    ljm_msg("cannot open %s: %s; VM %u is not profiled", vm->path,
	    strerror(err), vm->num);
    vm->halted = 1;
    return;
  }
  if (ljm_out_is_stdout(&vm->out)) {
    ljm_msg("%s is the program's standard output; VM %u is not profiled",
	    vm->path, vm->num);
    ljm_out_close(&vm->out);
    vm->halted = 1;
    return;
  }
  if (cfg.manifest[0])
    (void)ljm_manifest_add(cfg.manifest, vm->path);
  memset(&opt, 0, sizeof(opt));
  opt.writer = writer;
  opt.ctx = vm;
  opt.bufsize = (size_t)cfg.bufsize;
  opt.poll_flag = &epoch;
  opt.poll = poll_cb;
  vm->failed = 0;
  r = ljmprof_start(vm->L, &opt);
  if (r != LJMPROF_OK) {
    if (!vm->failed)
      ljm_msg("cannot start the profiler on VM %u (%s)", vm->num,
	      r == LJMPROF_ERRMEM ? "out of memory" :
	      r == LJMPROF_ERRUSE ? "already running" : strerror(errno));
    ljm_out_close(&vm->out);
    if (access(vm->path, F_OK) == 0 && !ljm_path_is_device(vm->path))
      unlink(vm->path);		/* Empty: not a stream. */
    vm->halted = 1;
    return;
  }
  vm->running = 1;
  if (cfg.verbose)
    ljm_msg("[%ld] VM %u: writing %s", (long)self_pid, vm->num, vm->path);
}

static void stop_stream(struct ljm_vm *vm)
{
  int r, err;
  if (!vm->running)
    return;
  vm->running = 0;
  r = ljmprof_stop(vm->L);
  err = ljm_out_finish(&vm->out);
  if (r == LJMPROF_ERRIO || vm->failed) {
    vm->halted = 1;
  } else if (r == LJMPROF_ERRUSE) {
    /* The program put an allocator of its own over the profiler's. */
    int empty = vm->out.written == 0 && !ljm_path_is_device(vm->path);
    if (empty)
      unlink(vm->path);
    ljm_msg("VM %u: the profiler was no longer in place (the program set "
	    "its own allocator): %s %s", vm->num, vm->path,
	    empty ? "not written" : "ends without its epilogue");
    vm->halted = 1;
  } else if (err) {
    ljm_msg("closing %s: %s", vm->path, strerror(err));
  } else if (cfg.verbose) {
    ljm_msg("[%ld] VM %u: closed %s (%llu bytes)", (long)self_pid, vm->num,
	    vm->path, (unsigned long long)vm->out.written);
  }
}

/* In a forked child: the inherited profiler's buffer is the parent's. */
static void disown(struct ljm_vm *vm)
{
  if (vm->owner == self_pid)
    return;
  if (vm->running) {
    ljmprof_abandon(vm->L);
    ljm_out_close(&vm->out);	/* Our copy only: the parent keeps its lock. */
    vm->running = 0;
  }
  vm->owner = self_pid;
  vm->stream = 0;
  vm->halted = 0;
  vm->failed = 0;
}

/* -- The idle allocator wrapper -------------------------------------------- */

static void reconcile(struct ljm_vm *vm);

static void *idle_slow(struct ljm_vm *vm, void *ptr, size_t osize,
		       size_t nsize)
{
  int saved = errno;
  lua_Alloc f;
  void *ud;
  if (vm->buried)
    return vm->allocf(vm->allocd, ptr, osize, nsize);
  vm->seen_epoch = __atomic_load_n(&epoch, __ATOMIC_SEQ_CST);
  reconcile(vm);
  errno = saved;
  if (vm->idle)
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
  if (vm->idle || vm->buried)
    return;
  vm->allocf = lua_getallocf(vm->L, &vm->allocd);
  vm->seen_epoch = __atomic_load_n(&epoch, __ATOMIC_SEQ_CST);
  lua_setallocf(vm->L, idle_alloc, vm);
  vm->idle = 1;
}

static void idle_remove(struct ljm_vm *vm)
{
  void *ud;
  if (!vm->idle)
    return;
  /* Only if still ours: a program may have set an allocator of its own
  ** since (then its allocator calls ours, or not at all). */
  if (lua_getallocf(vm->L, &ud) == idle_alloc && ud == vm)
    lua_setallocf(vm->L, vm->allocf, vm->allocd);
  else
    vm->buried = 1;
  vm->idle = 0;
}

/* -- Safe points ----------------------------------------------------------- */

/* The end at exit, once per VM (the VM's own thread at a safe point, or
** the exiting thread, whichever claims it first). */
static void finish(struct ljm_vm *vm)
{
  int zero = 0;
  if (!__atomic_compare_exchange_n(&vm->claim, &zero, 1, 0, __ATOMIC_ACQ_REL,
				   __ATOMIC_ACQUIRE))
    return;
  idle_remove(vm);
  if (vm->owner != self_pid) {
    if (vm->running)
      ljmprof_abandon(vm->L);	/* Never flush the parent's bytes. */
    ljm_out_close(&vm->out);
    vm->running = 0;
  } else {
    stop_stream(vm);
  }
  __atomic_store_n(&vm->done, 1, __ATOMIC_RELEASE);
}

/* Bring the VM's profiler to the state the settings, signals, fork and
** errors ask for. On the VM's thread. */
static void reconcile(struct ljm_vm *vm)
{
  unsigned t;
  int want;

  if (__atomic_load_n(&vm->done, __ATOMIC_ACQUIRE))
    return;
  if (__atomic_load_n(&exit_req, __ATOMIC_ACQUIRE)) {
    finish(vm);		/* On its own thread: no race with its allocator. */
    return;
  }
  if (exiting)
    return;
  idle_remove(vm);
  disown(vm);
  t = (unsigned)__atomic_load_n(&toggles, __ATOMIC_SEQ_CST);
  want = want_now();
  if (t != vm->seen_toggles) {
    vm->seen_toggles = t;
    stop_stream(vm);		/* Each toggle ends the current stream. */
    vm->halted = 0;
  }
  if (vm->running && (!want || vm->halted || vm->failed))
    stop_stream(vm);
  if (!vm->running && want && !vm->halted)
    start_stream(vm);
  if (!vm->running && (cfg.signo != 0 || delay_pending())) {
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
  if (cfg.signo) {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(cfg.signo, &sa, NULL) != 0)
      ljm_msg("LJMPROF_SIGNAL: cannot install the handler: %s",
	      strerror(errno));
  }
}

/* -- Hooks ------------------------------------------------------------------ */

void ljm_reg_newstate(lua_State *L)
{
  struct ljm_vm *vm;
  int saved = errno;

  pthread_mutex_lock(&lock);
  if (cfg_bad) {
    tell_config();
    pthread_mutex_unlock(&lock);
    errno = saved;
    return;
  }
  first_vm();
  if (exiting) {
    pthread_mutex_unlock(&lock);
    errno = saved;
    return;
  }
  vm = calloc(1, sizeof(*vm));
  if (vm == NULL) {
    pthread_mutex_unlock(&lock);
    ljm_msg("out of memory; a VM is not profiled");
    errno = saved;
    return;
  }
  vm->L = L;
  vm->g = G(L);
  vm->num = ++vm_count;
  vm->owner = self_pid;
  vm->out.fd = -1;
  vm->seen_toggles = (unsigned)__atomic_load_n(&toggles, __ATOMIC_SEQ_CST);
  vm->next = vms;
  vms = vm;
  pthread_mutex_unlock(&lock);
  /* Toggles that came before this VM existed are part of the state it
  ** starts in, not a reason to restart it. */
  reconcile(vm);
  errno = saved;
}

void ljm_reg_close(lua_State *L)
{
  struct ljm_vm **pp, *vm = NULL;
  global_State *g = G(L);
  int saved = errno;

  pthread_mutex_lock(&lock);
  for (pp = &vms; *pp; pp = &(*pp)->next)
    if ((*pp)->g == g) {
      vm = *pp;
      *pp = vm->next;
      break;
    }
  if (vm && !exiting)
    check_other_luajit();
  pthread_mutex_unlock(&lock);
  if (vm == NULL) {
    errno = saved;
    return;
  }
  idle_remove(vm);
  if (!vm->done && !exiting) {
    if (vm->owner != self_pid) {
      /* A forked child closes its copy before it allocated anything:
      ** it still finishes a stream of its own. */
      reconcile(vm);
      idle_remove(vm);
    }
    stop_stream(vm);
  }
  /* A buried wrapper may still be called while the VM is torn down. */
  if (!vm->buried)
    free(vm);
  errno = saved;
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

/* Whether the process has threads besides this one. */
static int other_threads(void)
{
  DIR *d = opendir("/proc/self/task");
  struct dirent *e;
  int n = 0;
  if (d == NULL)
    return 1;
  while ((e = readdir(d)) != NULL)
    if (e->d_name[0] != '.')
      n++;
  closedir(d);
  return n > 1;
}

static int all_done(void)
{
  struct ljm_vm *vm;
  for (vm = vms; vm; vm = vm->next)
    if (!__atomic_load_n(&vm->done, __ATOMIC_ACQUIRE))
      return 0;
  return 1;
}

void ljm_reg_exit(void)
{
  struct ljm_vm *vm;
  int saved = errno;

  pthread_mutex_lock(&lock);
  if (exiting) {
    pthread_mutex_unlock(&lock);
    errno = saved;
    return;
  }
  /* Other threads may still be running VMs: ask every VM to finish at
  ** its next allocation, on its own thread, and give running ones a
  ** moment to do so; finish the others (idle, or whose thread is gone)
  ** from here. */
  __atomic_store_n(&exit_req, 1, __ATOMIC_RELEASE);
  bump_epoch();
  if (vms && other_threads()) {
    int ms;
    for (ms = 0; ms < LJM_EXIT_WAIT_MS && !all_done(); ms++) {
      struct timespec ts = { 0, 1000000 };
      nanosleep(&ts, NULL);
    }
  }
  for (vm = vms; vm; vm = vm->next) {
    int ms;
    finish(vm);
    /* Claimed by its own thread just now: let it complete. */
    for (ms = 0; ms < 1000 && !__atomic_load_n(&vm->done, __ATOMIC_ACQUIRE);
	 ms++) {
      struct timespec ts = { 0, 1000000 };
      nanosleep(&ts, NULL);
    }
  }
  exiting = 1;
  if (vm_count == 0 && !forked_child) {
    if (cfg_bad && main_is_static())
      tell_config();
    warn_static();
  }
  check_other_luajit();
  pthread_mutex_unlock(&lock);
  errno = saved;
}

/* -- fork ------------------------------------------------------------------- */

void ljm_reg_fork_prepare(void)
{
  pthread_mutex_lock(&lock);
}

void ljm_reg_fork_parent(void)
{
  pthread_mutex_unlock(&lock);
}

void ljm_reg_fork_child(void)
{
  pthread_mutex_init(&lock, NULL);
  self_pid = getpid();
  forked_child = 1;
  bump_epoch();
}
