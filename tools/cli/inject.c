/*
** ljmprof attach: calling functions inside another running process with
** ptrace(2). See inject.h for why this is ours and not gdb's.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "inject.h"

static int fail(struct inj *j, const char *fmt, ...)
  __attribute__((format(printf, 2, 3)));
static int fail(struct inj *j, const char *fmt, ...)
{
  va_list ap;
  int e = errno;
  va_start(ap, fmt);
  vsnprintf(j->err, sizeof(j->err), fmt, ap);
  va_end(ap);
  errno = e;
  return -1;
}

static void sleep_ms(int ms)
{
  struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
  nanosleep(&ts, NULL);
}

/* Seize tid and bring it to a stop we can change its registers in.
** 1 when stopped, 0 when it is gone, -1 on failure. */
static int seize(struct inj *j, pid_t tid)
{
  int st;
  if (ptrace(PTRACE_SEIZE, tid, 0, 0) < 0) {
    if (errno == ESRCH) return 0;
    return fail(j, "cannot trace thread %d: %s%s", (int)tid, strerror(errno),
		errno == EPERM ? " (run as root, or with CAP_SYS_PTRACE, or "
		"lower /proc/sys/kernel/yama/ptrace_scope)" : "");
  }
  if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) < 0)
    return errno == ESRCH ? 0 : fail(j, "cannot stop thread %d: %s",
				     (int)tid, strerror(errno));
  for (;;) {
    if (waitpid(tid, &st, __WALL) < 0)
      return errno == ECHILD ? 0 : fail(j, "waitpid: %s", strerror(errno));
    if (WIFEXITED(st) || WIFSIGNALED(st))
      return 0;
    if (WIFSTOPPED(st) && (st >> 16) == PTRACE_EVENT_STOP)
      return 1;
    /* A signal on its way to the thread: let it through, the
    ** interrupt's stop follows. */
    if (WIFSTOPPED(st) && ptrace(PTRACE_CONT, tid, 0,
				  (void *)(long)WSTOPSIG(st)) < 0)
      return 0;
  }
}

/* What /proc/PID/task/TID/syscall says: the system call the thread is
** blocked in, -1 outside one, -2 running or unknown. */
static long blocked_in(pid_t pid, pid_t tid)
{
  char path[64], buf[64];
  FILE *f;
  long nr = -2;
  snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid,
	   (int)tid);
  if (!(f = fopen(path, "r")))
    return -2;
  if (fgets(buf, sizeof(buf), f) && strncmp(buf, "running", 7))
    nr = strtol(buf, NULL, 10);
  fclose(f);
  return nr;
}

/* The thread ids of pid, up to max. */
static int threads(pid_t pid, pid_t *tids, int max)
{
  char path[64];
  DIR *d;
  struct dirent *e;
  int n = 0;
  snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
  if (!(d = opendir(path)))
    return -1;
  while ((e = readdir(d)) && n < max)
    if (e->d_name[0] != '.')
      tids[n++] = (pid_t)atoi(e->d_name);
  closedir(d);
  return n;
}

int inj_open(struct inj *j, pid_t pid)
{
  pid_t tids[256];
  int n, r;
  memset(j, 0, sizeof(*j));
  j->pid = pid;
  j->tid = pid;
  /* A thread waiting in a system call that is not a futex is outside
  ** the C library's locks; look for one a few times. */
  for (int round = 0; round < 20; round++) {
    pid_t best = 0;
    if ((n = threads(pid, tids, 256)) < 0)
      return fail(j, "no process %d", (int)pid);
    for (int i = 0; i < n && !best; i++) {
      long nr = blocked_in(pid, tids[i]);
      if (nr >= 0 && nr != 202 /* futex */)
	best = tids[i];
    }
    if (best) {
      j->tid = best;
      break;
    }
    sleep_ms(10);
  }
  if ((r = seize(j, j->tid)) <= 0)
    return r < 0 ? -1 : fail(j, "process %d is gone", (int)pid);
  j->seized = 1;
  return 0;
}

void inj_close(struct inj *j)
{
  if (j->seized)
    ptrace(PTRACE_DETACH, j->tid, 0, 0);
  j->seized = 0;
}

int inj_stop_all(struct inj *j)
{
  pid_t tids[INJ_MAXTHREADS];
  int n, more = 1;
  /* Threads may start while we stop the others: until a pass finds no
  ** new one. */
  for (int pass = 0; more && pass < 10; pass++) {
    more = 0;
    if ((n = threads(j->pid, tids, INJ_MAXTHREADS)) < 0)
      return fail(j, "process %d is gone", (int)j->pid);
    for (int i = 0; i < n; i++) {
      int known = tids[i] == j->tid;
      for (int k = 0; k < j->nothers && !known; k++)
	known = j->others[k] == tids[i];
      if (known || j->nothers >= INJ_MAXTHREADS)
	continue;
      int r = seize(j, tids[i]);
      if (r < 0) {
	inj_resume_all(j);
	return -1;
      }
      if (r > 0)
	j->others[j->nothers++] = tids[i];
      more = 1;
    }
  }
  return 0;
}

void inj_resume_all(struct inj *j)
{
  for (int i = 0; i < j->nothers; i++)
    ptrace(PTRACE_DETACH, j->others[i], 0, 0);
  j->nothers = 0;
}

int inj_read_str(struct inj *j, uintptr_t a, char *buf, size_t n)
{
  struct iovec l = { buf, n - 1 }, r = { (void *)a, n - 1 };
  ssize_t got;
  memset(buf, 0, n);
  /* Byte by byte up to a page end would be slower: read what is there. */
  got = process_vm_readv(j->pid, &l, 1, &r, 1, 0);
  if (got <= 0) {
    size_t room = 4096 - (a & 4095);
    l.iov_len = r.iov_len = room < n - 1 ? room : n - 1;
    got = process_vm_readv(j->pid, &l, 1, &r, 1, 0);
  }
  if (got <= 0)
    return fail(j, "cannot read the process's memory: %s", strerror(errno));
  buf[n - 1] = 0;
  return 0;
}

static int write_mem(struct inj *j, uintptr_t a, const void *p, size_t n)
{
  struct iovec l = { (void *)p, n }, r = { (void *)a, n };
  if (process_vm_writev(j->pid, &l, 1, &r, 1, 0) == (ssize_t)n)
    return 0;
  /* A stack page not faulted in yet: ptrace's writes fault it in. */
  for (size_t i = 0; i < n; i += sizeof(long)) {
    long w = 0;
    size_t k = n - i < sizeof(long) ? n - i : sizeof(long);
    if (k < sizeof(long)) {
      errno = 0;
      w = ptrace(PTRACE_PEEKDATA, j->tid, (void *)(a + i), 0);
      if (errno) return -1;
    }
    memcpy(&w, (const char *)p + i, k);
    if (ptrace(PTRACE_POKEDATA, j->tid, (void *)(a + i), (void *)w) < 0)
      return -1;
  }
  return 0;
}

#if defined(__x86_64__)

int inj_call(struct inj *j, uintptr_t fn, const char *s0, const char *s1,
	     uintptr_t a0, uintptr_t a1, uintptr_t *ret, int timeout_ms)
{
  struct user_regs_struct saved, regs;
  static uint8_t xstate[1 << 16];
  struct iovec xv = { xstate, sizeof(xstate) };
  int have_x, st, waited = 0;
  uintptr_t sp;
  const uintptr_t zero = 0;
  if (ptrace(PTRACE_GETREGS, j->tid, 0, &saved) < 0)
    return fail(j, "cannot read thread %d's registers: %s", (int)j->tid,
		strerror(errno));
  have_x = ptrace(PTRACE_GETREGSET, j->tid, (void *)NT_X86_XSTATE, &xv) == 0;
  /* Below the red zone, the strings, then the return address 0: the
  ** call's return faults there, which is how we see it end. */
  sp = saved.rsp - 256;
  if (s0) {
    sp -= strlen(s0) + 1;
    if (write_mem(j, sp, s0, strlen(s0) + 1)) goto nowrite;
    a0 = sp;
  }
  if (s1) {
    sp -= strlen(s1) + 1;
    if (write_mem(j, sp, s1, strlen(s1) + 1)) goto nowrite;
    a1 = sp;
  }
  sp = (sp & ~(uintptr_t)15) - 8;
  if (write_mem(j, sp, &zero, sizeof(zero))) goto nowrite;
  regs = saved;
  regs.rip = fn;
  regs.rdi = a0;
  regs.rsi = a1;
  regs.rsp = sp;
  regs.rax = 0;
  regs.orig_rax = (unsigned long)-1;	/* No system call to restart. */
  if (ptrace(PTRACE_SETREGS, j->tid, 0, &regs) < 0 ||
      ptrace(PTRACE_CONT, j->tid, 0, 0) < 0)
    return fail(j, "cannot start the call in thread %d: %s", (int)j->tid,
		strerror(errno));
  for (;;) {
    pid_t w = waitpid(j->tid, &st, __WALL | WNOHANG);
    if (w < 0)
      return fail(j, "waitpid: %s", strerror(errno));
    if (w == 0) {
      /* It cannot be cut short: the thread would return to address 0.
      ** Say so once, and wait. */
      if (++waited == timeout_ms)
	fprintf(stderr, "ljmprof: attach: process %d has not come back from"
		" the call for %d ms; waiting (do not kill ljmprof)\n",
		(int)j->pid, timeout_ms);
      sleep_ms(1);
      continue;
    }
    if (WIFEXITED(st) || WIFSIGNALED(st)) {
      j->seized = 0;
      return fail(j, "process %d ended during the call", (int)j->pid);
    }
    if (WIFSTOPPED(st) && WSTOPSIG(st) == SIGSEGV &&
	ptrace(PTRACE_GETREGS, j->tid, 0, &regs) == 0 && regs.rip == 0)
      break;
    if (WIFSTOPPED(st) && WSTOPSIG(st) == SIGSEGV) {
      ptrace(PTRACE_SETREGS, j->tid, 0, &saved);
      if (have_x) ptrace(PTRACE_SETREGSET, j->tid, (void *)NT_X86_XSTATE, &xv);
      return fail(j, "the call faulted in process %d at %#llx; its thread "
		  "was put back", (int)j->pid, (unsigned long long)regs.rip);
    }
    /* Another signal: deliver it (its handler runs on top of the call
    ** and returns into it); a stop event: go on. */
    ptrace(PTRACE_CONT, j->tid, 0,
	   (void *)(long)((st >> 16) ? 0 : WSTOPSIG(st)));
  }
  *ret = regs.rax;
  if (ptrace(PTRACE_SETREGS, j->tid, 0, &saved) < 0)
    return fail(j, "cannot put thread %d's registers back: %s", (int)j->tid,
		strerror(errno));
  if (have_x &&
      ptrace(PTRACE_SETREGSET, j->tid, (void *)NT_X86_XSTATE, &xv) < 0)
    return fail(j, "cannot put thread %d's vector registers back: %s",
		(int)j->tid, strerror(errno));
  return 0;
nowrite:
  return fail(j, "cannot write to thread %d's stack: %s", (int)j->tid,
	      strerror(errno));
}

#else

int inj_call(struct inj *j, uintptr_t fn, const char *s0, const char *s1,
	     uintptr_t a0, uintptr_t a1, uintptr_t *ret, int timeout_ms)
{
  (void)fn; (void)s0; (void)s1; (void)a0; (void)a1; (void)ret;
  (void)timeout_ms; (void)write_mem;
  return fail(j, "attaching is implemented for x86-64 only");
}

#endif

/* The file of the mapping of maps (a /proc/.../maps) that holds address
** a (when dev_ino[1] is 0), or the start of the offset-0 mapping of the
** file dev_ino: 0, or -1 when there is none. */
static int find_map(const char *maps, uintptr_t a, unsigned long *dev_ino,
		    uintptr_t *base)
{
  char line[4096];
  FILE *f = fopen(maps, "r");
  int found = 0;
  if (!f)
    return -1;
  while (!found && fgets(line, sizeof(line), f)) {
    unsigned long lo, hi, off, ino, dev;
    unsigned maj, min;
    if (sscanf(line, "%lx-%lx %*s %lx %x:%x %lu", &lo, &hi, &off, &maj, &min,
	       &ino) != 6 || ino == 0)
      continue;
    dev = ((unsigned long)maj << 20) | min;
    if (!dev_ino[1] && a >= lo && a < hi) {
      dev_ino[0] = dev;
      dev_ino[1] = ino;
      found = 1;
    } else if (dev_ino[1] && off == 0 && dev_ino[0] == dev &&
	       dev_ino[1] == ino) {
      *base = lo;
      found = 1;
    }
  }
  fclose(f);
  return found ? 0 : -1;
}

int inj_symbol(struct inj *j, void *ours, uintptr_t *theirs)
{
  unsigned long di[2] = { 0, 0 };
  uintptr_t ourbase, theirbase;
  char maps[64];
  if (find_map("/proc/self/maps", (uintptr_t)ours, di, NULL) ||
      find_map("/proc/self/maps", 0, di, &ourbase))
    return fail(j, "no file of ours holds %p", ours);
  snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)j->pid);
  if (find_map(maps, 0, di, &theirbase))
    return fail(j, "process %d does not map the same file as we do "
		"(another C library, or another mount namespace)", (int)j->pid);
  *theirs = (uintptr_t)ours - ourbase + theirbase;
  return 0;
}
