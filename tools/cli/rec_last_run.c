/*
** ljmprof record: the first stream's name is the user's, and a rerun
** keeps the last run's streams of that name as NAME.old (as perf keeps
** perf.data.old); what is not a stream of theirs is never replaced.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "ljm_config.h"
#include "outpath.h"
#include "writer.h"
#include "rec.h"

/* A stream of the euid's. */
static int is_my_stream(const char *path)
{
  struct stat st;
  return ljm_out_is_stream(path, &st) && st.st_uid == geteuid();
}

/*
** The last run's other streams (x.vm2.bin, x.4242.bin, ...: every name
** of the template in first's folder, first itself aside) moved to
** NAME.old, so that a glob of the names (report --merge x*.bin) finds
** only the new run's. Only the user's streams that nothing writes now,
** and never over a NAME.old that is not one. How many were moved.
*/
static unsigned move_other_streams(const char *tmpl, const char *first)
{
  char path[LJM_PATH_MAX], old[LJM_PATH_MAX + 8];
  const char *slash = strrchr(first, '/');
  size_t dirlen = slash ? (size_t)(slash - first) + 1 : 0;
  struct dirent *e;
  struct stat st;
  unsigned moved = 0;
  DIR *d;

  memcpy(path, first, dirlen);
  path[dirlen] = '\0';
  d = opendir(dirlen ? path : ".");
  if (d == NULL)
    return 0;
  while ((e = readdir(d)) != NULL) {
    if (dirlen + strlen(e->d_name) >= sizeof(path))
      continue;
    strcpy(path + dirlen, e->d_name);
    if (strcmp(path, first) == 0 || !ljm_outpath_match(tmpl, path) ||
	!is_my_stream(path) || ljm_out_being_written(path))
      continue;
    snprintf(old, sizeof(old), "%s.old", path);
    if (lstat(old, &st) == 0 && !is_my_stream(old))
      continue;
    if (rename(path, old) == 0)
      moved++;
  }
  closedir(d);
  return moved;
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
** that is not a stream, someone else's) is refused, untouched. The last
** run's other streams of the template in that folder (its other VMs',
** processes') go to NAME.old too. A FIFO or a device is used as it is.
** A template with %p names a new file each run. -1, or the exit status.
*/
int rec_move_last_run(const struct record *r)
{
  char name[LJM_PATH_MAX], old[LJM_PATH_MAX + 8];
  struct ljm_name k = { 0, 1, 1, 0, 0 };
  struct stat st;
  const char *why = NULL;
  int first_moved = 0;
  unsigned others;

  if (names_by_pid(r->tmpl) ||
      ljm_outpath(name, sizeof(name), r->tmpl, &k) != 0)
    return -1;
  if (lstat(name, &st) == 0) {
    if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISDIR(st.st_mode))
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
    first_moved = 1;
  }
  others = move_other_streams(r->tmpl, name);
  if (first_moved && others == 0) {
    fputs("ljmprof: record: the last ", stderr);
    rec_put_path(stderr, name);
    fputs(" is now ", stderr);
    rec_put_path(stderr, old);
    fputc('\n', stderr);
  } else if (first_moved || others) {
    fprintf(stderr, "ljmprof: record: the last run's %u streams of ",
	    others + (unsigned)first_moved);
    rec_put_path(stderr, name);
    fputs(" are now NAME.old\n", stderr);
  }
  return -1;
}
