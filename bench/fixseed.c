/*
** bench/fixseed.c: an LD_PRELOAD that makes LuaJIT's seed fixed, so that
** two runs of one workload compile the same traces (bench/run, the trace
** compilation cost). getrandom() (the
** function and the system call through syscall()) and reads of /dev/urandom return a fixed
** byte pattern. For measurements only.
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

static int urandom_fd = -1;

static void fill(void *buf, size_t n)
{
  unsigned char *p = (unsigned char *)buf;
  size_t i;
  for (i = 0; i < n; i++) p[i] = (unsigned char)(0x5a ^ (i * 37));
}

ssize_t getrandom(void *buf, size_t n, unsigned int flags)
{
  (void)flags;
  fill(buf, n);
  return (ssize_t)n;
}

/* LuaJIT calls the getrandom system call through syscall(). */
long syscall(long no, ...)
{
  static long (*real)(long, ...);
  long a[6];
  va_list ap;
  int i;
  va_start(ap, no);
  for (i = 0; i < 6; i++) a[i] = va_arg(ap, long);
  va_end(ap);
#ifdef SYS_getrandom
  if (no == SYS_getrandom) {
    fill((void *)a[0], (size_t)a[1]);
    return a[1];
  }
#endif
  if (real == NULL)
    *(void **)&real = dlsym(RTLD_NEXT, "syscall");
  return real(no, a[0], a[1], a[2], a[3], a[4], a[5]);
}

static int isurandom(const char *path)
{
  return path != NULL && (!strcmp(path, "/dev/urandom") ||
			  !strcmp(path, "/dev/random"));
}

#define OPENLIKE(name) \
int name(const char *path, int flags, ...) \
{ \
  static int (*real)(const char *, int, ...); \
  mode_t mode = 0; \
  int fd; \
  if (flags & O_CREAT) { \
    va_list ap; \
    va_start(ap, flags); \
    mode = (mode_t)va_arg(ap, int); \
    va_end(ap); \
  } \
  if (real == NULL) \
    *(void **)&real = dlsym(RTLD_NEXT, #name); \
  fd = real(path, flags, mode); \
  if (fd >= 0 && isurandom(path)) urandom_fd = fd; \
  return fd; \
}
OPENLIKE(open)
OPENLIKE(open64)

ssize_t read(int fd, void *buf, size_t n)
{
  static ssize_t (*real)(int, void *, size_t);
  if (fd >= 0 && fd == urandom_fd) {
    fill(buf, n);
    return (ssize_t)n;
  }
  if (real == NULL)
    *(void **)&real = dlsym(RTLD_NEXT, "read");
  return real(fd, buf, n);
}

int close(int fd)
{
  static int (*real)(int);
  if (fd >= 0 && fd == urandom_fd) urandom_fd = -1;
  if (real == NULL)
    *(void **)&real = dlsym(RTLD_NEXT, "close");
  return real(fd);
}
