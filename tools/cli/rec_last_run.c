/*
** ljmprof record: the first stream's name is the user's, and a rerun
** keeps the last run's stream there as NAME.old (as perf keeps
** perf.data.old); what is not a stream of theirs is never replaced.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "ljm_config.h"
#include "outpath.h"
#include "rec.h"

/* A stream of the euid's: a regular file (not a link) that begins as
** streams do. */
static int is_my_stream(const char *path)
{
  struct stat st;
  char magic[3];
  int fd, ok;
  fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
       read(fd, magic, 3) == 3 && memcmp(magic, "ljs", 3) == 0;
  close(fd);
  return ok;
}

/* A template that names a new file each run: one with %p, as the shim
** expands it (%%p is a plain "%p"). */
static int names_by_pid(const char *tmpl)
{
  char a[LJM_PATH_MAX], b[LJM_PATH_MAX];
  struct ljm_name ka = { 1, 1, 1, 0, 0 }, kb = { 2, 1, 1, 0, 0 };
  return ljm_outpath(a, sizeof(a), tmpl, &ka) == 0 &&
	 ljm_outpath(b, sizeof(b), tmpl, &kb) == 0 && strcmp(a, b) != 0;
}

/*
** The first stream's name is the user's: a stream of theirs from an
** earlier run there is moved to NAME.old (replacing an older one), as
** perf does with perf.data; anything else there (a symbolic link, a file
** that is not a stream, someone else's) is refused, untouched. A FIFO or
** a device is used as it is. A template with %p names a new file each
** run. -1, or the exit status.
*/
int rec_move_last_run(const struct record *r)
{
  char name[LJM_PATH_MAX], old[LJM_PATH_MAX + 8];
  struct ljm_name k = { 0, 1, 1, 0, 0 };
  struct stat st;
  const char *why = NULL;

  if (names_by_pid(r->tmpl) ||
      ljm_outpath(name, sizeof(name), r->tmpl, &k) != 0 ||
      lstat(name, &st) != 0 || S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) ||
      S_ISDIR(st.st_mode))
    return -1;
  snprintf(old, sizeof(old), "%s.old", name);
  if (S_ISLNK(st.st_mode))
    why = "is a symbolic link";
  else if (!is_my_stream(name))
    why = "is there and is not a stream of yours";
  if (why == NULL && lstat(old, &st) == 0 && !is_my_stream(old)) {
    fputs("ljmprof: record: ", stderr);
    rec_put_path(stderr, old);
    fputs(" is there and is not a stream of yours: the last ", stderr);
    rec_put_path(stderr, name);
    fputs(" cannot be moved there; remove one, or give -o another name\n",
	  stderr);
    return EXIT_USAGE;
  }
  if (why) {
    fputs("ljmprof: record: ", stderr);
    rec_put_path(stderr, name);
    fprintf(stderr, " %s: not replaced; remove it, or give -o another "
	    "name\n", why);
    return EXIT_USAGE;
  }
  if (rename(name, old) != 0) {
    fputs("ljmprof: record: cannot move the last ", stderr);
    rec_put_path(stderr, name);
    fprintf(stderr, " aside: %s\n", strerror(errno));
    return EXIT_USAGE;
  }
  fputs("ljmprof: record: the last ", stderr);
  rec_put_path(stderr, name);
  fputs(" is now ", stderr);
  rec_put_path(stderr, old);
  fputc('\n', stderr);
  return -1;
}
