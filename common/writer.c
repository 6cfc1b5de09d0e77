/*
** ljmprof core: the file a stream goes to.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ljm_config.h"
#include "msg.h"
#include "outpath.h"
#include "writer.h"

/*
** Space is allocated ahead of the stream in steps of this size. A file
** system that allocates blocks as each write arrives (ext4's delayed
** allocation) spends more in that bookkeeping than in copying the data;
** one fallocate per step takes most of it off the profiled program.
*/
#define RESERVE_STEP ((uint64_t)16 << 20)
#define RESERVE_MIN_FREE ((uint64_t)1 << 30)	/* Free space it needs. */

/* Whether an existing FIFO or device may take a stream: a FIFO only when
** it is the user's own (another user's FIFO at a predictable name would
** read the program's data, or kill or hang it); a device only when root's
** or the user's (/dev/null). */
static int owner_trusted(const struct stat *st)
{
  uid_t euid = geteuid();
  if (S_ISFIFO(st->st_mode))
    return st->st_uid == euid;
  return st->st_uid == 0 || st->st_uid == euid;
}

/* Open an existing FIFO or character device (/dev/null, a pipe): never
** through a symbolic link, never blocking on a FIFO with no reader,
** never one that another user owns. */
static int open_device(const char *path)
{
  struct stat st;
  int fd;
  if (lstat(path, &st) != 0)
    return -errno;
  if (S_ISLNK(st.st_mode))
    return -ELOOP;
  if (S_ISREG(st.st_mode))
    return -EEXIST;
  if (S_ISDIR(st.st_mode))
    return -EISDIR;
  if (!S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode))
    return -ENODEV;
  if (!owner_trusted(&st))
    return -EPERM;
  do
    fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  while (fd < 0 && errno == EINTR);
  if (fd < 0)
    return errno == ELOOP ? -ELOOP : -errno;
  /* Swapped for something else between the two looks. */
  if (fstat(fd, &st) != 0 || (!S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode))) {
    close(fd);
    return S_ISREG(st.st_mode) ? -EEXIST : -ENODEV;
  }
  /* The owner of what was opened, not of what lstat saw. */
  if (!owner_trusted(&st)) {
    close(fd);
    return -EPERM;
  }
  return fd;
}

/*
** A new file at path, already locked when it appears there: made under a
** hidden name beside it (".NAME.ljmprof-PID-N", O_EXCL), locked, then
** renamed into place with RENAME_NOREPLACE, which fails with EEXIST if the
** name is taken (never replacing or following what is there, as O_EXCL).
** So a reader that finds the file unlocked knows its writer is gone, even
** in the first instant (mp_load_being_written); and the open file keeps
** its name (/proc/PID/fd, lsof), which an unnamed O_TMPFILE linked in
** would not. The fd, or -errno: on any error but EEXIST (a file system
** without RENAME_NOREPLACE, a directory not ours to write in) the caller
** makes the file by name, which gives the error to report.
*/
static int create_locked(const char *path)
{
  char tmp[LJM_PATH_MAX];
  const char *base = strrchr(path, '/');
  size_t dn = base ? (size_t)(base - path) + 1 : 0, bn;
  int fd = -1, err, tries;
  base = base ? base + 1 : path;
  bn = strlen(base);
  if (bn == 0 || dn + 1 + bn >= sizeof(tmp))
    return -EINVAL;
  memcpy(tmp, path, dn);
  tmp[dn] = '.';
  memcpy(tmp + dn + 1, base, bn);
  for (tries = 0; tries < 4; tries++) {
    size_t pos = dn + 1 + bn;
    if (ljm_put_num(tmp, sizeof(tmp), &pos, ".ljmprof-",
		    (unsigned long)getpid()) ||
	ljm_put_num(tmp, sizeof(tmp), &pos, "-", (unsigned long)tries))
      return -EINVAL;
    do
      fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC |
		O_NOCTTY, 0600);
    while (fd < 0 && errno == EINTR);
    if (fd >= 0 || errno != EEXIST)
      break;
  }
  if (fd < 0)
    return errno == EEXIST ? -EINVAL : -errno;
  if (flock(fd, LOCK_EX | LOCK_NB) == 0 &&
      renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
    return fd;
  err = errno;
  (void)unlink(tmp);
  close(fd);
  return -err;
}

int ljm_out_open(struct ljm_out *o, const char *path)
{
  struct stat st;
  int fd, fl;

  o->fd = -1;
  o->written = 0;
  o->reserved = 0;
  o->reserve = 0;
  o->pipe = 0;
  /* A new file, private and locked, or nothing: never follows a symbolic
  ** link and never opens what is there already. */
  fd = create_locked(path);
  if (fd < 0 && fd != -EEXIST) {
    do
      fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC |
		O_NOCTTY | O_NONBLOCK, 0600);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
      fd = -errno;
  }
  if (fd == -EEXIST)
    fd = open_device(path);
  if (fd < 0)
    return -fd;
  /* Writes block as usual; O_NONBLOCK was only for opening a FIFO. */
  fl = fcntl(fd, F_GETFL);
  if (fl >= 0)
    (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    return err;
  }
  /* Only files are claimed: /dev/null or a FIFO may well be shared. */
  if (S_ISREG(st.st_mode) && flock(fd, LOCK_EX | LOCK_NB) != 0 &&
      errno == EWOULDBLOCK) {
    close(fd);
    return EBUSY;
  }
  o->fd = fd;
  o->dev = st.st_dev;
  o->ino = st.st_ino;
  o->reserve = S_ISREG(st.st_mode);
  o->pipe = !S_ISREG(st.st_mode);
  return 0;
}

int ljm_out_being_written(const char *path)
{
  struct stat st;
  int fd, busy = 0;
  fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    return 0;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK)
    busy = 1;
  close(fd);
  return busy;
}

int ljm_out_is_stream(const char *path, struct stat *st)
{
  char magic[3];
  int fd, ok;
  fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  ok = fstat(fd, st) == 0 && S_ISREG(st->st_mode) &&
       read(fd, magic, 3) == 3 && memcmp(magic, "ljs", 3) == 0;
  close(fd);
  return ok;
}

int ljm_out_create(struct ljm_out *o, char *buf, size_t n, const char *tmpl,
		   struct ljm_name *k, unsigned *taken)
{
  int err = 0, tries;
  k->again = 0;
  if (taken)
    *taken = 0;
  for (tries = 0; tries < LJM_NAME_TRIES; tries++) {
    err = ljm_outpath(buf, n, tmpl, k);
    if (!err)
      err = ljm_out_open(o, buf);
    if (err != EEXIST && err != EBUSY)
      return err;
    if (err == EEXIST && taken && !ljm_out_being_written(buf))
      (*taken)++;
    /* Someone's file (an earlier run's, another process's, the image
    ** this process replaced by exec): left as it is, the next name. */
    if (!k->tag_pid)
      k->tag_pid = 1;
    else
      k->again = k->again ? k->again + 1 : 2;
  }
  return err;
}

const char *ljm_out_strerror(int err)
{
  switch (err) {
  case ELOOP: return "a symbolic link, which is never followed";
  case ENODEV: return "not a file, a FIFO or a character device";
  case EEXIST: return "that name and the next ones are taken by other files";
  case EPERM: return "a FIFO or device owned by another user, never written";
  default: return ljm_strerror(err);	/* Untranslated: safe in a handler. */
  }
}

/* Non-zero while o->fd is still the file we opened. */
static int still_ours(const struct ljm_out *o)
{
  struct stat st;
  return fstat(o->fd, &st) == 0 && st.st_dev == o->dev &&
	 st.st_ino == o->ino;
}

/*
** Allocate file space ahead of a write that would pass what is there.
** Only on a file system with room to spare: space held ahead must never
** be what the program's own writes run out of.
*/
static void reserve_ahead(struct ljm_out *o, size_t len)
{
  uint64_t want = o->written + len, to;
  struct statfs fs;
  if (!o->reserve || want <= o->reserved)
    return;
  if (fstatfs(o->fd, &fs) != 0 ||
      (uint64_t)fs.f_bavail * (uint64_t)fs.f_bsize < RESERVE_MIN_FREE) {
    o->reserve = 0;
    return;
  }
  to = (want + RESERVE_STEP - 1) / RESERVE_STEP * RESERVE_STEP;
  /* The file's size stays what was written: readers see no padding. */
  if (fallocate(o->fd, FALLOC_FL_KEEP_SIZE, (off_t)o->reserved,
		(off_t)(to - o->reserved)) == 0)
    o->reserved = to;
  else
    o->reserve = 0;	/* Not supported here, or no space: just write. */
}

static int write_all(struct ljm_out *o, const char *p, size_t len)
{
  while (len > 0) {
    ssize_t n = write(o->fd, p, len);
    if (n < 0) {
      if (errno == EINTR)
	continue;
      return errno;
    }
    if (n == 0)
      return EIO;
    p += n;
    len -= (size_t)n;
    o->written += (uint64_t)n;
  }
  return 0;
}

/*
** A FIFO whose reader has gone raises SIGPIPE, whose default action kills
** the program: blocked in this thread around the write, and the one our
** write raised taken back (unless one was pending already, the program's
** own), so that only the stream breaks (EPIPE). Async-signal-safe.
*/
static int write_pipe(struct ljm_out *o, const char *p, size_t len)
{
  sigset_t sigpipe, old, pending;
  int err, was_pending, saved = errno;
  sigemptyset(&sigpipe);
  sigaddset(&sigpipe, SIGPIPE);
  if (pthread_sigmask(SIG_BLOCK, &sigpipe, &old) != 0)
    return write_all(o, p, len);
  was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE);
  err = write_all(o, p, len);
  if (err == EPIPE && !was_pending) {
    static const struct timespec now = { 0, 0 };
    while (sigtimedwait(&sigpipe, NULL, &now) < 0 && errno == EINTR)
      ;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  errno = saved;
  return err;
}

int ljm_out_write(struct ljm_out *o, const void *data, size_t len)
{
  if (o->fd < 0 || !still_ours(o))
    return EBADF;
  if (o->pipe)
    return write_pipe(o, data, len);
  reserve_ahead(o, len);
  return write_all(o, data, len);
}

int ljm_out_is_stdout(const struct ljm_out *o)
{
  struct stat st;
  if (o->fd < 0 || fstat(1, &st) != 0)
    return 0;
  if (st.st_dev != o->dev || st.st_ino != o->ino)
    return 0;
  /* Both going to /dev/null is harmless (benchmarks do it). */
  if (S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == 3)
    return 0;
  return 1;
}

int ljm_out_close(struct ljm_out *o)
{
  int fd = o->fd;
  o->fd = -1;
  if (fd < 0)
    return 0;
  /* Linux closes the fd even when close reports EINTR: never retry. */
  if (close(fd) != 0 && errno != EINTR)
    return errno;
  return 0;
}

int ljm_out_finish(struct ljm_out *o)
{
  /* Truncating at the size written frees the blocks beyond it; never
  ** on a number the program has reused for a file of its own. */
  if (o->fd >= 0 && o->reserved > o->written && still_ours(o) &&
      ftruncate(o->fd, (off_t)o->written) != 0) {
    int err = errno;
    ljm_out_close(o);
    return err;
  }
  return ljm_out_close(o);
}

int ljm_path_is_device(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0 && !S_ISREG(st.st_mode);
}

/* Append one line to the manifest in one write (O_APPEND: the processes
** of a program share it). */
static int manifest_line(const char *manifest, const char *line, size_t len)
{
  ssize_t n;
  int fd, err = 0;

  fd = open(manifest, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC |
	    O_NOCTTY, 0600);
  if (fd < 0)
    return errno;
  do
    n = write(fd, line, len);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    err = errno;
  else if ((size_t)n != len)
    err = EIO;
  close(fd);
  return err;
}

int ljm_manifest_add(const char *manifest, const char *name)
{
  char line[LJM_PATH_MAX + 1];
  size_t len = strlen(name);

  if (len + 1 > sizeof(line))
    return ENAMETOOLONG;
  memcpy(line, name, len);
  line[len++] = '\n';
  return manifest_line(manifest, line, len);
}

int ljm_manifest_failed(const char *manifest, const char *name, int err)
{
  char line[LJM_PATH_MAX + 48];
  int len = snprintf(line, sizeof(line), "!%d\t%lu\t%s\n", err,
		     (unsigned long)geteuid(), name);
  if (len < 0 || (size_t)len >= sizeof(line))
    return ENAMETOOLONG;
  return manifest_line(manifest, line, (size_t)len);
}
