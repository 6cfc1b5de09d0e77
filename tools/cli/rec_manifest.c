/*
** ljmprof record: the manifest, where the shim lists the streams it
** opens and those it could not. Making it (a random name in a folder of
** ours), and reading it back: only lines the shim writes for this run's
** output template count, each stream listed once with its size.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "ljm_config.h"
#include "outpath.h"
#include "writer.h"
#include "rec.h"

/* -- Making it --------------------------------------------------------------- */

void rec_remove_manifest(const struct record *r)
{
  unlink(r->manifest_path);
  rmdir(r->manifest_dir);
}

/* A temporary folder of ours in dir, into r->manifest_dir: 0 or errno. */
static int make_dir_in(struct record *r, const char *dir)
{
  if (strlen(dir) > sizeof(r->manifest_dir) - 32)
    return ENAMETOOLONG;
  snprintf(r->manifest_dir, sizeof(r->manifest_dir),
	   "%s/ljmprof-record.XXXXXX", dir);
  return mkdtemp(r->manifest_dir) ? 0 : errno;
}

/* A name nobody else can guess: 128 random bits, in hex. */
static int random_name(char *buf, size_t n)
{
  unsigned char bits[16];
  size_t i;
  if (getrandom(bits, sizeof(bits), 0) != (ssize_t)sizeof(bits) ||
      n < 2 * sizeof(bits) + 1)
    return -1;
  for (i = 0; i < sizeof(bits); i++)
    snprintf(buf + 2 * i, 3, "%02x", bits[i]);
  return 0;
}

/*
** The manifest, where the shim lists the files it opens. A program may
** switch to another user (servers drop privileges) and still write its
** streams: the manifest is writable by anyone, under a random name, in a
** folder of ours that others may enter but not list. Only our own run
** knows the name (it is in the program's environment). -1, or the exit
** status.
*/
int rec_make_manifest(struct record *r)
{
  const char *tmpdir = getenv("TMPDIR");
  char name[40];
  int fd, err = 0;

  if (tmpdir && *tmpdir) {
    err = make_dir_in(r, tmpdir);
    if (err) {
      fputs("ljmprof: record: TMPDIR=", stderr);
      rec_put_path(stderr, tmpdir);
      fprintf(stderr, ": cannot create a temporary folder there (%s); "
	      "using /tmp\n", strerror(err));
    }
  }
  if (!tmpdir || !*tmpdir || err) {
    err = make_dir_in(r, "/tmp");
    if (err) {
      rec_error("cannot create a temporary folder in /tmp: %s; set TMPDIR "
		"to a folder you can write", strerror(err));
      return EXIT_USAGE;
    }
  }
  if (random_name(name, sizeof(name)) != 0) {
    rec_error("cannot make a random name: %s", strerror(errno));
    rmdir(r->manifest_dir);
    return EXIT_NORUN;
  }
  snprintf(r->manifest_path, sizeof(r->manifest_path), "%s/streams.%s",
	   r->manifest_dir, name);
  fd = open(r->manifest_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 || fchmod(fd, 0666) != 0 || chmod(r->manifest_dir, 0711) != 0) {
    rec_error("cannot create %s: %s", r->manifest_path, strerror(errno));
    if (fd >= 0)
      close(fd);
    rec_remove_manifest(r);
    return EXIT_NORUN;
  }
  close(fd);
  setenv("LJMPROF_MANIFEST", r->manifest_path, 1);
  return -1;
}

/* -- Reading it -------------------------------------------------------------- */

/* The name of a user id, or its number. */
static const char *user_name(unsigned long uid, char *buf, size_t n)
{
  struct passwd *pw = getpwuid((uid_t)uid);
  if (pw != NULL)
    snprintf(buf, n, "%s (uid %lu)", pw->pw_name, uid);
  else
    snprintf(buf, n, "uid %lu", uid);
  return buf;
}

/*
** The names of streams the run may have written: what the output
** template expands to, tmpl made absolute against the folder record runs
** in (where the program starts). A name in any other folder is not one,
** whatever its last component: anyone who can write a line could name
** any file.
*/
static int is_our_name(const char *tmpl, const char *path)
{
  if (path[0] != '/' || strlen(path) > LJM_PATH_MAX - 1)
    return 0;
  return ljm_outpath_match(tmpl, path);
}

/* A set of strings (open addressing): the names listed and the failures
** told already, however many lines the manifest has. */
struct name_set {
  char **slot;
  size_t cap, n;
};

static size_t name_hash(const char *s)
{
  size_t h = (size_t)14695981039346656037ULL;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * (size_t)1099511628211ULL;
  return h;
}

/* 1 if s was new (and is now in), 0 if there already, -1 out of memory. */
static int name_add(struct name_set *set, const char *s)
{
  size_t i;
  if (2 * (set->n + 1) > set->cap) {
    size_t cap = set->cap ? 2 * set->cap : 64, k;
    char **slot = calloc(cap, sizeof(*slot));
    if (slot == NULL)
      return -1;
    for (k = 0; k < set->cap; k++)
      if (set->slot[k]) {
	for (i = name_hash(set->slot[k]) & (cap - 1); slot[i];
	     i = (i + 1) & (cap - 1))
	  ;
	slot[i] = set->slot[k];
      }
    free(set->slot);
    set->slot = slot;
    set->cap = cap;
  }
  for (i = name_hash(s) & (set->cap - 1); set->slot[i];
       i = (i + 1) & (set->cap - 1))
    if (strcmp(set->slot[i], s) == 0)
      return 0;
  if ((set->slot[i] = strdup(s)) == NULL)
    return -1;
  set->n++;
  return 1;
}

static void name_set_free(struct name_set *set)
{
  size_t i;
  for (i = 0; i < set->cap; i++)
    free(set->slot[i]);
  free(set->slot);
}

/* What the run can say about a file of the manifest. */
enum listed { LISTED_STREAM, LISTED_DEVICE, LISTED_GONE, LISTED_FOREIGN };

/*
** A regular file (never through a link) that begins as a stream does and
** was written since the run began, its size into *size; a FIFO or a
** device (/dev/null); gone; or anything else, which is not ours to
** describe.
*/
static enum listed what_is(const char *path, time_t since, long long *size)
{
  struct stat st;
  if (lstat(path, &st) != 0)
    return errno == ENOENT ? LISTED_GONE : LISTED_FOREIGN;
  if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))
    return LISTED_DEVICE;
  if (!S_ISREG(st.st_mode) || st.st_mtime < since ||
      !ljm_out_is_stream(path, &st))
    return LISTED_FOREIGN;
  *size = (long long)st.st_size;
  return LISTED_STREAM;
}

/* A decimal number of at most max, digits only (no sign, no space, no
** leading zero), up to the separator sep: its end, or NULL. */
static const char *parse_number(const char *s, char sep, unsigned long max,
				unsigned long *v)
{
  const char *p = s;
  *v = 0;
  if (*p < '0' || *p > '9' || (*p == '0' && p[1] != sep))
    return NULL;
  for (; *p >= '0' && *p <= '9'; p++) {
    unsigned d = (unsigned)(*p - '0');
    if (*v > (max - d) / 10)
      return NULL;
    *v = *v * 10 + d;
  }
  return *p == sep ? p : NULL;
}

/*
** A stream the shim could not open ("!ERRNO\tEUID\tPATH" in the
** manifest, as ljm_manifest_failed writes it, exactly): say it once per
** folder, user and error (the keys in told), plainly when the program had
** become a user who cannot write there. 0, or -1 when the line is not one
** of the shim's.
*/
static int tell_failure(const char *line, const char *tmpl,
			struct name_set *told)
{
  char dir[LJM_PATH_MAX + 2], who[128], key[LJM_PATH_MAX + 64];
  const char *path, *slash, *p;
  unsigned long uid, e;
  int err;
  p = parse_number(line + 1, '\t', 4095, &e);
  if (p == NULL || e == 0)
    return -1;
  err = (int)e;
  p = parse_number(p + 1, '\t', (uid_t)-1, &uid);
  if (p == NULL)
    return -1;
  path = p + 1;
  if (!is_our_name(tmpl, path))
    return -1;
  slash = strrchr(path, '/');
  snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path),
	   path);
  snprintf(key, sizeof(key), "%d %lu %s", err, uid, dir);
  /* Out of memory (-1): said again rather than not at all. */
  if (name_add(told, key) == 0)
    return 0;
  user_name(uid, who, sizeof(who));
  fputs("ljmprof: record: ", stderr);
  rec_put_path(stderr, path);
  if ((err == EACCES || err == EPERM || err == EROFS) && uid != geteuid()) {
    fprintf(stderr, " was not written: the program ran as %s, who cannot "
	    "write to ", who);
    rec_put_path(stderr, dir);
    fprintf(stderr, " (%s); give -o a file in a folder that user can "
	    "write\n", strerror(err));
  } else {
    fprintf(stderr, " was not written (%s), as %s\n", ljm_out_strerror(err),
	    who);
  }
  return 0;
}

/* The run's output template, absolute, into tmpl (LJM_PATH_MAX): a
** relative one names files in record's own folder, the program's at its
** start; with no folder to go by, "" (no name matches). */
static void our_template(const struct record *r, char *tmpl)
{
  char cwd[LJM_PATH_MAX];
  if (getcwd(cwd, sizeof(cwd)) == NULL)
    cwd[0] = '\0';
  if (ljm_template_absolute(tmpl, LJM_PATH_MAX,
			    r->tmpl && *r->tmpl ? r->tmpl : "ljmprof.bin",
			    cwd) != 0 || tmpl[0] != '/')
    tmpl[0] = '\0';
}

/*
** Print each stream of the manifest once, with its size, and the streams
** that could not be written. Only lines the shim writes for this run's
** template count; the others are ignored, and counted in one line, as
** are the names that are gone (removed since, or never there: a line
** anyone could have written). Returns the number of files; *nfailed gets
** the number of failure notes.
*/
int rec_list_files(const struct record *r, int *nfailed)
{
  char line[LJM_PATH_MAX + 64], tmpl[LJM_PATH_MAX];
  struct name_set seen = { NULL, 0, 0 }, told = { NULL, 0, 0 };
  unsigned long foreign = 0, gone = 0;
  int n = 0, whole = 1;
  FILE *f;
  *nfailed = 0;
  our_template(r, tmpl);
  f = fopen(r->manifest_path, "re");
  if (f == NULL)
    return 0;
  while (fgets(line, sizeof(line), f)) {
    size_t len = strlen(line);
    long long size = 0;
    enum listed what;
    int was_whole = whole, added;
    /* A line longer than ours, or the last without its newline, is not
    ** the shim's: skipped to its end. */
    whole = len > 0 && line[len - 1] == '\n';
    if (!was_whole)
      continue;
    if (!whole) {
      foreign++;
      continue;
    }
    line[--len] = '\0';
    if (line[0] == '!') {
      if (tell_failure(line, tmpl, &told) != 0)
	foreign++;
      else
	(*nfailed)++;
      continue;
    }
    if (!is_our_name(tmpl, line)) {
      foreign++;
      continue;
    }
    added = name_add(&seen, line);
    if (added < 0)
      break;
    if (added == 0)
      continue;
    what = what_is(line, r->since, &size);
    if (what == LISTED_FOREIGN) {
      foreign++;
      continue;
    }
    n++;
    if (what == LISTED_GONE) {
      gone++;
      continue;
    }
    fputs("ljmprof: wrote ", stderr);
    rec_put_path(stderr, line);
    if (what == LISTED_STREAM)
      fprintf(stderr, " (%lld bytes)\n", size);
    else
      fputc('\n', stderr);
  }
  name_set_free(&seen);
  name_set_free(&told);
  fclose(f);
  if (gone)
    fprintf(stderr, "ljmprof: record: %lu name%s of the manifest no longer "
	    "exist%s (removed since, or never written)\n", gone,
	    gone == 1 ? "" : "s", gone == 1 ? "s" : "");
  if (foreign)
    fprintf(stderr, "ljmprof: record: ignored %lu line%s of the manifest "
	    "that name no stream of this run\n", foreign,
	    foreign == 1 ? "" : "s");
  return n;
}

/* -- The streams so far, for record --live ------------------------------ */

int rec_live_streams(const struct record *r,
		     int (*add)(void *ctx, const char *path), void *ctx)
{
  char line[LJM_PATH_MAX + 64], tmpl[LJM_PATH_MAX];
  int whole = 1;
  FILE *f;
  our_template(r, tmpl);
  if (!tmpl[0])
    return 0;
  if (!(f = fopen(r->manifest_path, "re")))
    return 0;	/* No stream opened yet. */
  while (fgets(line, sizeof(line), f)) {
    size_t len = strlen(line);
    int was_whole = whole;
    /* Only whole lines of the shim's own (a line being written waits for
    ** the next refresh). */
    whole = len > 0 && line[len - 1] == '\n';
    if (!was_whole || !whole)
      continue;
    line[--len] = '\0';
    if (line[0] == '!' || !is_our_name(tmpl, line))
      continue;
    if (add(ctx, line) < 0) {
      fclose(f);
      return -1;
    }
  }
  fclose(f);
  return 0;
}
