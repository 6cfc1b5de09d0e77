/*
** ljmprof core: the file a stream goes to.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef LJM_WRITER_H
#define LJM_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ljm_out {
  int fd;		/* -1 when closed. */
  dev_t dev;		/* Identity of the file we opened, to notice an */
  ino_t ino;		/* fd closed and reused behind our back. */
  uint64_t written;	/* Bytes written so far. */
  uint64_t reserved;	/* File space allocated ahead, from offset 0. */
  int reserve;		/* Allocate ahead (a regular file that allows it). */
};

/*
** Open path for a new stream: O_WRONLY|O_CREAT|O_CLOEXEC, never blocking
** on a FIFO, then, for a regular file, an exclusive flock(2) so that two
** processes never write the same file, and truncation. Returns 0, EBUSY
** when another process holds the file, or the errno of the failure.
*/
int ljm_out_open(struct ljm_out *o, const char *path);

/* Write all len bytes (EINTR and partial writes handled). 0 or errno;
** EBADF when the fd no longer refers to the file we opened. */
int ljm_out_write(struct ljm_out *o, const void *data, size_t len);

/* Non-zero if o is the file the program's standard output (fd 1) goes
** to, /dev/null excepted: a stream must never mix with the output. */
int ljm_out_is_stdout(const struct ljm_out *o);

/* Close; 0 or errno. Safe on a closed ljm_out. */
int ljm_out_close(struct ljm_out *o);

/* The stream is complete: give back the space allocated ahead of it,
** then close; 0 or errno. Only the process that wrote the file may:
** a forked child's copy of o only closes. */
int ljm_out_finish(struct ljm_out *o);

/* Non-zero if path exists and is not a regular file. */
int ljm_path_is_device(const char *path);

/* Append "name\n" to the manifest file in one write. 0 or errno. */
int ljm_manifest_add(const char *manifest, const char *name);

/* Append "!ERRNO\tEUID\tname\n": a stream that could not be opened, for
** ljmprof record to explain (a program that switched users). 0 or errno. */
int ljm_manifest_failed(const char *manifest, const char *name, int err);

#endif
