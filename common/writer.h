/*
** ljmprof core: the file a stream goes to.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef LJM_WRITER_H
#define LJM_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

struct ljm_out {
  int fd;		/* -1 when closed. */
  dev_t dev;		/* Identity of the file we opened, to notice an */
  ino_t ino;		/* fd closed and reused behind our back. */
  uint64_t written;	/* Bytes written so far. */
  uint64_t reserved;	/* File space allocated ahead, from offset 0. */
  int reserve;		/* Allocate ahead (a regular file that allows it). */
  int pipe;		/* Not a regular file: a write may raise SIGPIPE. */
};

struct ljm_name;

/*
** Open path for a new stream: a new file, mode 0600 whatever the umask
** (O_CREAT|O_EXCL|O_NOFOLLOW), with an exclusive flock(2); or an existing
** FIFO the user owns or a character device root or the user owns
** (/dev/null), never blocking on a FIFO with no reader. Nothing that is
** there already is truncated or written: returns 0, EEXIST for an
** existing file, ELOOP for a symbolic link, EISDIR, EPERM for a FIFO or
** device of another user's, ENODEV for anything else, or the errno of
** the failure.
*/
int ljm_out_open(struct ljm_out *o, const char *path);

/* Names tried for one stream before giving up. */
#define LJM_NAME_TRIES 1000

/*
** Open the stream named by tmpl and k (ljm_outpath) into buf[n]. Where
** that name is an existing file, the next free one: the pid tag, then a
** number after the tags (x.bin, x.4242.bin, x.4242.2.bin, ...). 0, or the
** errno of the last name tried (in buf). *taken (unless NULL): how many
** names were passed over for a file that was there, not counting the
** streams that other processes are writing now.
*/
int ljm_out_create(struct ljm_out *o, char *buf, size_t n, const char *tmpl,
		   struct ljm_name *k, unsigned *taken);

/* Whether path is a stream another process is writing now (it holds the
** file's lock, as ljm_out_open takes it), as a child started from the
** profiled program's environment finds its parent's. */
int ljm_out_being_written(const char *path);

/* Whether path is a regular file, never through a symbolic link, that
** begins as a stream does; its fstat into *st. */
int ljm_out_is_stream(const char *path, struct stat *st);

/* What a failure of ljm_out_open means, in words (strerror's, but for
** the refusals of our own). */
const char *ljm_out_strerror(int err);

/* Write all len bytes (EINTR and partial writes handled). 0 or errno;
** EBADF when the fd no longer refers to the file we opened; EPIPE, never
** SIGPIPE, when a FIFO's reader has gone. */
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
