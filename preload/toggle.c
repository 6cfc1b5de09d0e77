/*
** ljmprof shim: LJMPROF_SIGNAL, the signal that toggles profiling: its
** handler, whether profiling is wanted now, and whether the signal can
** reach the handler at all.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE
#include "config.h"
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "ljm_config.h"
#include "msg.h"
#include "vm.h"

volatile sig_atomic_t ljm_toggles;	/* LJMPROF_SIGNAL received. */
volatile sig_atomic_t ljm_snapreqs;	/* LJMPROF_SNAPSHOT_SIGNAL received. */
static uint64_t first_sig_ms;		/* When the first one came. */
static int sig_installed;		/* Our handler went in. */
static int sig_warned;			/* Said that it cannot work. */
static unsigned n_watched;		/* VMs of this process in the list. */
static unsigned n_sigblk;		/* Those whose thread blocks it. */

static void on_signal(int sig)
{
  int saved = errno;
  (void)sig;
  if (__atomic_load_n(&ljm_toggles, __ATOMIC_SEQ_CST) == 0)
    __atomic_store_n(&first_sig_ms, ljm_now_ms(), __ATOMIC_SEQ_CST);
  __atomic_add_fetch(&ljm_toggles, 1, __ATOMIC_SEQ_CST);
  ljm_bump_epoch();
  errno = saved;
}

/* LJMPROF_SNAPSHOT_SIGNAL: each VM takes a snapshot at its next safe
** point (actions.c). */
static void on_snapsig(int sig)
{
  int saved = errno;
  (void)sig;
  __atomic_add_fetch(&ljm_snapreqs, 1, __ATOMIC_SEQ_CST);
  ljm_bump_epoch();
  errno = saved;
}

/* With the first VM, when LJMPROF_SIGNAL or LJMPROF_SNAPSHOT_SIGNAL is
** set: our handlers. */
static int install(int signo, void (*handler)(int), const char *var)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = handler;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(signo, &sa, NULL) == 0)
    return 1;
  ljm_msg("%s: cannot install the handler: %s", var, strerror(errno));
  return 0;
}

void ljm_tgl_install(void)
{
  if (ljm_cfg.snapsig)
    install(ljm_cfg.snapsig, on_snapsig, "LJMPROF_SNAPSHOT_SIGNAL");
  if (ljm_cfg.signo && install(ljm_cfg.signo, on_signal, "LJMPROF_SIGNAL"))
    sig_installed = 1;
}

/* Profiling is wanted now (LJMPROF_START, _DELAY, the toggles). */
int ljm_want_now(void)
{
  unsigned t = (unsigned)__atomic_load_n(&ljm_toggles, __ATOMIC_SEQ_CST);
  return ljm_want(ljm_cfg.start, ljm_cfg.delay_ms, ljm_t0_ms, ljm_now_ms(), t,
		  __atomic_load_n(&first_sig_ms, __ATOMIC_SEQ_CST));
}

/* A delay that can still turn profiling on without a signal. */
int ljm_delay_pending(void)
{
  return ljm_cfg.start && ljm_cfg.delay_ms != 0 &&
	 __atomic_load_n(&ljm_toggles, __ATOMIC_SEQ_CST) == 0 &&
	 ljm_now_ms() < ljm_t0_ms + ljm_cfg.delay_ms;
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
  ljm_signal_name(ljm_cfg.signo, name, sizeof(name));
  ljm_msg("LJMPROF_SIGNAL=%s: %s, so the signal does not toggle profiling; "
	  "use a signal the program leaves alone, such as a real-time one "
	  "(LJMPROF_SIGNAL=RTMIN+3)", name, why);
}

/* Whether the handler of the signal is still ours. */
void ljm_tgl_watch_handler(void)
{
  struct sigaction sa;
  int saved = errno;
  if (!sig_installed || __atomic_load_n(&sig_warned, __ATOMIC_ACQUIRE) ||
      sigaction(ljm_cfg.signo, NULL, &sa) != 0) {
    errno = saved;
    return;
  }
  if ((sa.sa_flags & SA_SIGINFO) || sa.sa_handler != on_signal)
    sig_warn("the program replaced the shim's handler with its own");
  errno = saved;
}

/* On the VM's thread: whether it blocks the signal, and whether all do. */
void ljm_tgl_watch_mask(struct ljm_vm *vm)
{
  sigset_t set;
  int blk;
  if (!sig_installed || __atomic_load_n(&sig_warned, __ATOMIC_ACQUIRE) ||
      pthread_sigmask(SIG_BLOCK, NULL, &set) != 0)
    return;
  blk = sigismember(&set, ljm_cfg.signo) == 1;
  if (blk != vm->sigblk) {
    vm->sigblk = blk;
    if (blk)
      __atomic_add_fetch(&n_sigblk, 1, __ATOMIC_ACQ_REL);
    else
      __atomic_sub_fetch(&n_sigblk, 1, __ATOMIC_ACQ_REL);
  }
  if (blk && __atomic_load_n(&n_sigblk, __ATOMIC_ACQUIRE) ==
	     __atomic_load_n(&n_watched, __ATOMIC_ACQUIRE) &&
      ljm_sig_deliverable(ljm_cfg.signo, ljm_tick_tid()) == 0)
    sig_warn("every thread of the program blocks it");
}

/* The VM joins the list (lock held). */
void ljm_tgl_watch(struct ljm_vm *vm)
{
  vm->sigblk = 0;
  __atomic_add_fetch(&n_watched, 1, __ATOMIC_ACQ_REL);
}

/* The VM leaves the list (lock held). */
void ljm_tgl_unwatch(struct ljm_vm *vm)
{
  __atomic_sub_fetch(&n_watched, 1, __ATOMIC_ACQ_REL);
  if (vm->sigblk)
    __atomic_sub_fetch(&n_sigblk, 1, __ATOMIC_ACQ_REL);
  vm->sigblk = 0;
}

/* In a forked child, the only thread now: every VM is watched anew. */
void ljm_tgl_forked(void)
{
  n_watched = n_sigblk = 0;
}
