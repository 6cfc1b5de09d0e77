/*
** ljmprof attach: calling functions inside another running process with
** ptrace(2), as a debugger's "call" does, on x86-64.
**
** Why our own and not gdb's: gdb 13 (Debian 12) cannot put a thread's
** extended register state back on recent kernels ("Couldn't write
** extended state status: Bad address") and then leaves the target broken;
** and a gdb script cannot choose its moment (a thread outside the
** allocator's locks) or bound a stop. This is the part of a debugger the
** attach needs and nothing more.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef LJM_INJECT_H
#define LJM_INJECT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define INJ_MAXTHREADS 4096

struct inj {
  pid_t pid;
  pid_t tid;			/* The thread that makes the calls. */
  pid_t others[INJ_MAXTHREADS];	/* Stopped with inj_stop_all. */
  int nothers;
  int seized;			/* tid is seized. */
  char err[512];		/* Why the last call failed. */
};

/* Seize one thread of pid to make calls in: one blocked in a system call
** other than a futex wait (so outside any lock of the C library), the
** main thread when none is. 0, or -1 with err set. */
int inj_open(struct inj *j, pid_t pid);
/* Call fn(a0, a1) in the thread, with the strings s0 and s1 (when not
** NULL) copied below its stack and passed as a0 and a1. *ret gets the
** call's return value. Its registers (all of them) are put back after.
** Waits at most timeout_ms for the call to return. 0, or -1 with err. */
int inj_call(struct inj *j, uintptr_t fn, const char *s0, const char *s1,
	     uintptr_t a0, uintptr_t a1, uintptr_t *ret, int timeout_ms);
/* Read a NUL-terminated string of at most n-1 bytes at a. */
int inj_read_str(struct inj *j, uintptr_t a, char *buf, size_t n);
/* Stop every other thread of the process (inj_resume_all lets them go). */
int inj_stop_all(struct inj *j);
void inj_resume_all(struct inj *j);
/* Let the thread go; the process runs on as it was. */
void inj_close(struct inj *j);

/* The address in pid of a function of a file both processes map (the C
** library, the recorder), from its address in this one: the same file,
** by device and inode, at its own base in each. 0, or -1 with err. */
int inj_symbol(struct inj *j, void *ours, uintptr_t *theirs);

#endif
