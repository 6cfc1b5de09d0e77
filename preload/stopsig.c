/*
** ljmprof shim: the signals that end the process.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE
#include "config.h"
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>

#include "registry.h"
#include "vm.h"

/*
** Signals whose default action ends the process and that a service
** manager, a terminal or a pipe sends to stop a program normally. When
** one of them has no handler of the program's when the first VM is
** created, the shim's takes its place: it finishes the streams, restores
** the default action and raises the signal again, so that the process
** ends exactly as it would have (same signal, core dump for SIGQUIT). A
** handler the program installs later simply replaces ours. SIGXFSZ and
** SIGXCPU come from limits our own writes may hit; SIGKILL cannot be
** caught.
**
** The same for the signals of a crash, SIGABRT (abort, a failed assert),
** SIGSEGV, SIGBUS, SIGFPE and SIGILL, where the program has no handler
** of its own (a crash reporter's, ASan's): the profile of a program that
** crashed is the one most wanted. A fault the kernel raised (si_code >
** 0) is not raised again: with the default action back, the faulting
** instruction runs again and faults again, so that the core dump and a
** crash reporter see the very same siginfo as without the shim. A crash
** inside the profiler or the shim is one more case of a thread
** interrupted inside (below): its VMs are left as they are on disk. A
** second fault while the handler runs (the signals of a crash are
** blocked in it) ends the process at once, by the kernel's hand.
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
static const int crash_sigs[] = { SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL };
#define N_CRASH_SIGS	(sizeof(crash_sigs) / sizeof(crash_sigs[0]))
static volatile sig_atomic_t dying_sig;	/* The signal being acted on. */
static uintptr_t text_lo, text_hi;	/* Our executable segment. */

#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) || \
    defined(__arm__)
static int in_text(uintptr_t a)
{
  return a >= text_lo && a < text_hi;
}
#endif

/* Whether the thread was interrupted in our code, or in a leaf function
** called from it (its return address is then at the stack pointer). */
static int interrupted_inside(void *uc)
{
#if defined(__x86_64__)
  const ucontext_t *u = uc;
  uintptr_t pc = (uintptr_t)u->uc_mcontext.gregs[REG_RIP];
  uintptr_t sp = (uintptr_t)u->uc_mcontext.gregs[REG_RSP];
  return in_text(pc) || (sp != 0 && in_text(*(const uintptr_t *)sp));
#elif defined(__i386__)  /* As x86-64: call pushes the return address. */
  const ucontext_t *u = uc;
  uintptr_t pc = (uintptr_t)u->uc_mcontext.gregs[REG_EIP];
  uintptr_t sp = (uintptr_t)u->uc_mcontext.gregs[REG_ESP];
  return in_text(pc) || (sp != 0 && in_text(*(const uintptr_t *)sp));
#elif defined(__aarch64__)
  const ucontext_t *u = uc;
  return in_text((uintptr_t)u->uc_mcontext.pc) ||
	 in_text((uintptr_t)u->uc_mcontext.regs[30]);
#elif defined(__arm__)  /* As arm64: bl leaves the return address in lr. */
  const ucontext_t *u = uc;
  return in_text((uintptr_t)u->uc_mcontext.arm_pc) ||
	 in_text((uintptr_t)u->uc_mcontext.arm_lr);
#else
  (void)uc;
  return 1;	/* Unknown: assume the worst, leave this thread's VMs. */
#endif
}

/* A fault of the thread's own instructions, which runs again on return. */
static int refaults(int sig, const siginfo_t *si)
{
  return (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE ||
	  sig == SIGILL) && si != NULL && si->si_code > 0;
}

/* Raise sig again on this thread, with the siginfo it came with where the
** kernel takes it back (a process may queue any siginfo to itself), so
** that a core dump and a crash reporter see the sender and the code. */
static void raise_again(int sig, siginfo_t *si)
{
  long pid = (long)getpid(), tid = (long)cur_tid();
  if (si == NULL || syscall(SYS_rt_tgsigqueueinfo, pid, tid, (long)sig, si) != 0)
    syscall(SYS_tgkill, pid, tid, (long)sig);
}

/* What the signal would have done without us, from its handler: the
** default action back, and the signal raised again (blocked while the
** handler runs, it is delivered on unblocking) unless it is a fault that
** runs again by itself. */
static void default_action(int sig, siginfo_t *si)
{
  struct sigaction sa;
  sigset_t one;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, NULL);
  if (refaults(sig, si))
    return;
  raise_again(sig, si);
  sigemptyset(&one);
  sigaddset(&one, sig);
  pthread_sigmask(SIG_UNBLOCK, &one, NULL);
}

static void on_stop_signal(int sig, siginfo_t *si, void *uc)
{
  int saved = errno;
  /* A vfork child shares its parent's memory (dying_sig, the VMs), not
  ** its handlers: it only does what the signal would have done. */
  if (getpid() == ljm_self_pid) {
    if (__atomic_exchange_n(&dying_sig, sig, __ATOMIC_SEQ_CST) == 0) {
      ljm_reg_die(interrupted_inside(uc));
    } else {
      /* Another thread acts on an earlier one: it ends the process. */
      int ms;
      for (ms = 0; ms < 2 * LJM_CLAIM_WAIT_MS + 200; ms++)
	sleep_ms(1);
    }
  }
  default_action(sig, si);
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
void ljm_stop_install(void)
{
  struct sigaction sa, old;
  size_t i;
  dl_iterate_phdr(find_text, (void *)(uintptr_t)&ljm_stop_install);
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = on_stop_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (i = 0; i < N_STOP_SIGS; i++)
    sigaddset(&sa.sa_mask, stop_sigs[i]);
  for (i = 0; i < N_CRASH_SIGS; i++)
    sigaddset(&sa.sa_mask, crash_sigs[i]);
  for (i = 0; i < N_STOP_SIGS + N_CRASH_SIGS; i++) {
    int sig = i < N_STOP_SIGS ? stop_sigs[i] : crash_sigs[i - N_STOP_SIGS];
    if (sig == ljm_cfg.signo || sigaction(sig, NULL, &old) != 0)
      continue;
    if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
      continue;		/* The program's own, or ignored: keep it. */
    sigaction(sig, &sa, NULL);
  }
}
