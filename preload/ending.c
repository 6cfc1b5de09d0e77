/*
** ljmprof shim: the end of the process (exit, _exit, a signal that ends
** it) and of every VM left then.
**
** The end of the process, whatever ends it, is the one time the shim
** acts on VMs from a thread other than their own: the exiting thread
** (exit, _exit, a signal that terminates) asks every VM to finish at its
** next safe point, waits a moment for those last seen on other live
** threads, and then seals the stream of every VM that is left, its own
** included (end_all): written up to an event's boundary once the
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
#include <string.h>
#include <unistd.h>

#include "ljmprof.h"

#include "elfinfo.h"
#include "lifecycle.h"
#include "msg.h"
#include "registry.h"
#include "vm.h"

#ifndef LJM_LIBDIR
#define LJM_LIBDIR "/usr/lib/ljmprof"
#endif

/* Whether thread tid of this process still exists. */
static int thread_alive(pid_t tid)
{
  int saved = errno, r;
  if (tid <= 0)
    return 0;
  r = syscall(SYS_tgkill, (long)ljm_self_pid, (long)tid, 0L) == 0 ||
      errno != ESRCH;
  errno = saved;
  return r;
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
void ljm_end_check_other_luajit(void)
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
  for (vm = ljm_list_head(); vm; vm = vm->next)
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
/* Whether end_all found a VM of this process's own (not one it only
** inherited and never used, as a forked child that execs a helper). */
static int had_own;

static void end_all(int here_busy)
{
  struct ljm_vm *vm;
  pid_t me = cur_tid();
  int ms;

  for (vm = ljm_list_head(); vm; vm = vm->next) {
    enum ljm_vm_state st = vm_state(vm);
    if (st != LJM_VM_INHERITED_ON && st != LJM_VM_INHERITED_OFF &&
	st != LJM_VM_DONE)
      had_own = 1;
  }
  /* Ask every VM to finish at its next allocation, on its own thread,
  ** and give the ones running elsewhere a moment to do so. */
  __atomic_store_n(&ljm_exit_req, 1, __ATOMIC_RELEASE);
  ljm_bump_epoch();
  for (ms = 0; ms < LJM_EXIT_WAIT_MS && pending_elsewhere(me); ms++)
    sleep_ms(1);
  for (vm = ljm_list_head(); vm; vm = vm->next) {
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
      if (ljm_cfg.verbose && ljm_lc_attached(st))
	ljm_msg("[%ld] VM %u: interrupted inside the VM at exit; %s ends at "
		"its last flushed buffer", (long)ljm_self_pid, vm->num,
		vm->path);
      continue;
    }
    if (!mine && vm->busy) {
      if (ljm_cfg.verbose && ljm_lc_attached(st))
	ljm_msg("[%ld] VM %u: still in use by thread %ld at exit; %s ends "
		"at its last flushed buffer", (long)ljm_self_pid, vm->num,
		(long)tid, vm->path);
      continue;
    }
    /* Wherever it runs: sealed once no thread is inside an event. */
    ljm_act_seal(vm, LJM_EXIT_WAIT_MS);
  }
}

/* A vfork child ran exit processing in this process's memory. */
static int exit_lost;

void ljm_reg_exit_lost(void)
{
  if (__atomic_load_n(&exit_lost, __ATOMIC_ACQUIRE) &&
      getpid() == ljm_self_pid &&
      __atomic_exchange_n(&exit_lost, 0, __ATOMIC_ACQ_REL))
    ljm_msg("a vfork child called exit(), which ran this process's exit "
	    "processing in its memory: at its own exit the streams end at "
	    "their last flushed buffer, not complete");
}

void ljm_reg_exit(void)
{
  int saved = errno;

  /* A vfork child that calls exit (after a failed exec, say) shares its
  ** parent's memory and VMs: it must leave them alone. Its exit marks
  ** the exit handlers and destructors run, in that shared memory, so
  ** the parent's own exit will skip ours (and glibc takes no new ones):
  ** the parent's next safe point says so (ljm_reg_exit_lost). */
  if (getpid() != ljm_self_pid) {
    __atomic_store_n(&exit_lost, 1, __ATOMIC_RELEASE);
    ljm_bump_epoch();
    errno = saved;
    return;
  }
  ljm_list_lock();
  if (ljm_exiting) {
    ljm_list_unlock();
    errno = saved;
    return;
  }
  end_all(0);
  ljm_exiting = 1;
  ljm_msg_summary();
  if (ljm_vm_count == 0 && !ljm_forked_child) {
    if (ljm_cfg_bad && main_is_static())
      ljm_tell_config();
    warn_static();
  }
  ljm_end_check_other_luajit();
  ljm_list_unlock();
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
  int saved = errno;

  /* A vfork child (or a raw clone) shares its parent's memory and its
  ** VMs: it must do nothing at all. */
  if (getpid() != ljm_self_pid || !ljm_first_done)
    return;
  if (ljm_list_lock_bounded() != 0) {
    errno = saved;
    return;
  }
  if (!ljm_exiting) {
    end_all(here_busy);
    ljm_exiting = 1;
    ljm_msg_summary();
  }
  ljm_list_unlock();
  errno = saved;
}

/*
** An exec that failed, after ljm_reg_die finished every stream for it:
** the program goes on, its streams stay complete as they are, and this
** process records nothing more (a sealed profiler has no safe point left
** where a new stream could begin on the VM's own thread). Said once.
*/
void ljm_reg_exec_failed(const char *what, int err)
{
  static int told;
  int saved = errno;
  if (getpid() != ljm_self_pid || !ljm_first_done ||
      !__atomic_load_n(&ljm_exiting, __ATOMIC_ACQUIRE) ||
      __atomic_exchange_n(&told, 1, __ATOMIC_ACQ_REL))
    return;
  if (!had_own)
    return;	/* A forked child that profiled nothing: nothing to say. */
  ljm_msg("exec of %s failed (%s): the streams were finished for it, and "
	  "this process records no more", what ? what : "a program",
	  ljm_strerror(err));
  errno = saved;
}
