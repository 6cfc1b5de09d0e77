/*
** Reading a profile file for the CLI; see mp_load.h.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE	/* flock */
#endif
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "mp_load.h"
#include "mp_names.h"

/* Progress on a terminal: first after a second, then a few times a second. */
struct progress {
  int on;
  int shown;
  double start, last;
  int64_t size;
  const char *path;
};

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void progress_tick(void *ctx, uint64_t offset)
{
  struct progress *pr = ctx;
  const char *path = pr->path;
  double t = now();
  if (t - pr->start < 1.0 || t - pr->last < 0.25)
    return;
  pr->last = t;
  pr->shown = 1;
  if (pr->size > 0)
    fprintf(stderr, "\rljmprof: reading %s: %llu MiB (%d%%)\033[K", path,
	    (unsigned long long)(offset >> 20),
	    (int)((double)offset * 100.0 / (double)pr->size));
  else
    fprintf(stderr, "\rljmprof: reading %s: %llu MiB\033[K", path,
	    (unsigned long long)(offset >> 20));
}

static void progress_done(struct progress *pr)
{
  if (pr->shown)
    fputs("\r\033[K", stderr);
}

/*
** Whether a stream that ends before its epilogue is still being written:
** the shim holds an exclusive flock(2) on each stream file while it
** writes it (common/writer.c), and a forked child closes its copy at
** once, so the lock lives exactly as long as the writer.
*/
int mp_load_being_written(int fd)
{
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    return 0;
  if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
    flock(fd, LOCK_UN);
    return 0;
  }
  return errno == EWOULDBLOCK;
}

/* A stream that ends before its epilogue after n events, said: 1 when it
** is live (still written: read up to its last complete event), 0 when it
** is truncated. fd -1: standard input, never live. */
static int say_cut(const char *shown, int fd, uint64_t n)
{
  if (fd >= 0 && mp_load_being_written(fd)) {
    fprintf(stderr, "ljmprof: note: %s is live (its program is still "
	    "writing it): read up to its last complete event, %llu events\n",
	    shown, (unsigned long long)n);
    return 1;
  }
  fprintf(stderr, "ljmprof: warning: %s is truncated after %llu events\n",
	  shown, (unsigned long long)n);
  return 0;
}

/* A file that failed before its data: nothing of it stays in p. */
static enum mp_load_result failed(struct mp_profile *p, int fd, int is_stdin)
{
  mp_profile_drop_file(p);
  if (fd >= 0 && !is_stdin)
    close(fd);
  return MP_LOAD_ERROR;
}

/* mp_load_file, with the name its messages give the file. */
static enum mp_load_result load(struct mp_profile *p, const char *path,
				int is_stdin, const char *shown,
				uint64_t *events)
{
  struct progress pr = {0};
  struct mp_reader *r;
  enum mp_status st;
  struct stat sb;
  int64_t size = -1;
  uint64_t n = 0;
  int fd;
  enum mp_load_result res;

  *events = 0;
  fd = is_stdin ? 0 : open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    ljmprof_error("%s: %s", shown, strerror(errno));
    return failed(p, fd, is_stdin);
  }
  if (fstat(fd, &sb) == 0) {
    if (S_ISDIR(sb.st_mode)) {
      ljmprof_error("%s: is a directory", shown);
      return failed(p, fd, is_stdin);
    }
    if (S_ISREG(sb.st_mode))
      size = (int64_t)sb.st_size;
  }
#ifdef POSIX_FADV_SEQUENTIAL
  if (size > 0)
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  r = mp_reader_new_fd(fd, size);
  if (!r) {
    ljmprof_error("%s: out of memory", shown);
    mp_profile_set_oom(p);
    return failed(p, fd, is_stdin);
  }
  pr.on = isatty(2);
  pr.size = size;
  pr.start = pr.last = pr.on ? now() : 0;

  pr.path = shown;
  /* One thread: decoding straight into the accounting costs fewer
  ** instructions than the two-thread pipeline spends handing events
  ** over, and is as fast on two cores. */
  st = mp_profile_read(p, r, &n, pr.on ? progress_tick : NULL, &pr);
  progress_done(&pr);
  fflush(stdout);	/* Reports of earlier files first. */
  if (st == MP_ERROR && mp_profile_oom(p))
    ljmprof_error("%s: out of memory at byte %llu", shown,
		  (unsigned long long)mp_reader_offset(r));
  else if (st == MP_ERROR && n > 0)
    ljmprof_error("%s: byte %llu: %s; the %llu events before it are kept",
		  shown, (unsigned long long)mp_reader_error_offset(r),
		  mp_reader_error(r), (unsigned long long)n);
  else if (st == MP_ERROR)
    ljmprof_error("%s: byte %llu: %s", shown,
		  (unsigned long long)mp_reader_error_offset(r),
		  mp_reader_error(r));
  *events = n;
  if (st == MP_ERROR && !mp_profile_oom(p) && n > 0) {
    res = MP_LOAD_TRUNCATED;
  } else if (st == MP_ERROR) {
    *events = 0;
    mp_reader_free(r);
    return failed(p, fd, is_stdin);
  } else if (st == MP_TRUNCATED) {
    res = say_cut(shown, is_stdin ? -1 : fd, n) ? MP_LOAD_OK :
	  MP_LOAD_TRUNCATED;
  } else {
    res = MP_LOAD_OK;
  }
  mp_profile_end_file(p, res == MP_LOAD_TRUNCATED);
  mp_reader_free(r);
  if (!is_stdin)
    close(fd);
  return res;
}

enum mp_load_result mp_load_file(struct mp_profile *p, const char *path,
				 uint64_t *events)
{
  int is_stdin = !strcmp(path, "-");
  struct mp_buf name = {0};
  const char *shown;
  enum mp_load_result res;

  /* A file name can hold terminal escapes as well as a chunk name. */
  shown = mp_name_escaped(&name, is_stdin ? "<stdin>" : path);
  res = load(p, path, is_stdin, shown, events);
  mp_buf_free(&name);
  return res;
}

enum mp_load_result mp_load_upto(struct mp_profile *p, const char *path,
				 const char *cmd, const char *opt,
				 uint64_t limit, uint64_t *events)
{
  int is_stdin = !strcmp(path, "-");
  struct mp_buf name = {0};
  const char *shown = mp_name_escaped(&name, is_stdin ? "<stdin>" : path);
  enum mp_load_result res = MP_LOAD_ERROR;
  enum mp_status st = MP_OK;
  struct mp_reader *r = NULL;
  struct mp_event ev;
  uint64_t n = 0;
  int fd;

  fd = is_stdin ? 0 : open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    ljmprof_error("%s: %s", shown, strerror(errno));
    goto out;
  }
  if (!(r = mp_reader_new_fd(fd, -1))) {
    ljmprof_error("%s: out of memory", shown);
    mp_profile_set_oom(p);
    goto out;
  }
  /* Up to the memory event after the limit (left unaccounted), so that
  ** even #0 finds out whether the file is a stream. */
  while ((st = mp_reader_next(r, &ev)) == MP_OK) {
    /* The start snapshot's blocks are before event 1: #0 is the start. */
    int counted = !mp_event_is_symbol(ev.type) && !mp_profile_in_snapshot(p);
    if (counted && n == limit)
      break;
    if (mp_profile_event(p, &ev) < 0) {
      ljmprof_error("%s: out of memory at byte %llu", shown,
		    (unsigned long long)ev.offset);
      goto out;
    }
    if (counted)
      n++;
  }
  *events = n;
  if (st != MP_OK && st != MP_END && n == limit && mp_profile_in_snapshot(p) &&
      !mp_profile_oom(p)) {
    /* The moment is a snapshot's, and the stream is cut inside it. */
    if (st == MP_ERROR)
      ljmprof_error("%s: byte %llu: %s; the snapshot at %s=#%llu is cut "
		    "there: read up to the damage", shown,
		    (unsigned long long)mp_reader_error_offset(r),
		    mp_reader_error(r), opt, (unsigned long long)limit);
    else
      ljmprof_error("%s is truncated in the snapshot at %s=#%llu: read up "
		    "to its last complete block", shown, opt,
		    (unsigned long long)limit);
    res = MP_LOAD_TRUNCATED;
  } else if (st == MP_ERROR && n == 0 && !mp_profile_oom(p)) {
    ljmprof_error("%s: byte %llu: %s", shown,
		  (unsigned long long)mp_reader_error_offset(r),
		  mp_reader_error(r));
  } else if (n == limit) {
    /* Damage after the moment does not change what was before it. */
    res = MP_LOAD_OK;
  } else if (st == MP_ERROR) {
    ljmprof_error("%s: byte %llu: %s; %s=#%llu is past the %llu events "
		  "before it", shown,
		  (unsigned long long)mp_reader_error_offset(r),
		  mp_reader_error(r), opt, (unsigned long long)limit,
		  (unsigned long long)n);
  } else if (st == MP_TRUNCATED) {
    ljmprof_error("%s is truncated after %llu events: %s=#%llu is past "
		  "them", shown, (unsigned long long)n, opt,
		  (unsigned long long)limit);
  } else {
    ljmprof_error("%s: %s=#%llu is past the end of %s (%llu events)", cmd, opt,
		  (unsigned long long)limit, shown, (unsigned long long)n);
  }
out:
  if (res == MP_LOAD_OK)
    mp_profile_end_file(p, 0);
  else
    mp_profile_drop_file(p);
  mp_reader_free(r);
  if (fd > 0 && !is_stdin)
    close(fd);
  mp_buf_free(&name);
  return res;
}

/* -- Moments by snapshot -------------------------------------------------- */

/* "snapshot:N" (N from 1): N, or -1. */
static int parse_snapshot(const char *s, uint64_t *n)
{
  if (strncmp(s, "snapshot:", 9) != 0)
    return -1;
  return mp_load_parse_u64(s + 9, n, 0);
}

/* A reader of the stream at path (shown: its name in messages) on *fd
** (-1 if it could not be opened); NULL, with one message, if none. */
static struct mp_reader *open_stream(const char *path, const char *shown,
				     int *fd)
{
  struct mp_reader *r;
  if ((*fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
    ljmprof_error("%s: %s", shown, strerror(errno));
    return NULL;
  }
  if (!(r = mp_reader_new_fd(*fd, -1)))
    ljmprof_error("%s: out of memory", shown);
  return r;
}

/* The event where the want-th snapshot begins (mp_load_moment_event). */
static int event_at_snapshot(const char *path, const char *cmd,
			     const char *opt, uint64_t want, uint64_t *at)
{
  struct mp_buf name = {0};
  const char *shown = mp_name_escaped(&name, path);
  struct mp_reader *r = NULL;
  struct mp_event ev;
  enum mp_status st;
  uint64_t n = 0, snaps = 0;
  int insnap = 0;
  int fd, rc = -1;

  if (!(r = open_stream(path, shown, &fd)))
    goto out;
  while ((st = mp_reader_next(r, &ev)) == MP_OK) {
    if (ev.type == MP_EV_SYM_INFO && ev.info_key == LJM_INFO_SNAPSHOT) {
      insnap = ev.info_value != LJM_SNAPSHOT_END;
      if (insnap && ++snaps == want) {
	*at = n;
	rc = 0;
	goto out;
      }
    } else if (!mp_event_is_symbol(ev.type) && !insnap) {
      n++;
    }
  }
  if (st == MP_ERROR && !n && !snaps)
    ljmprof_error("%s: byte %llu: %s", shown,
		  (unsigned long long)mp_reader_error_offset(r),
		  mp_reader_error(r));
  else if (!snaps)
    ljmprof_error("%s: %s=snapshot:%llu: %s has no snapshot (streams "
		  "recorded with stacks begin with one)", cmd, opt,
		  (unsigned long long)want, shown);
  else
    ljmprof_error("%s: %s=snapshot:%llu is past the last snapshot of %s, "
		  "snapshot:%llu%s", cmd, opt, (unsigned long long)want,
		  shown, (unsigned long long)snaps,
		  st == MP_ERROR ? " (the stream is damaged after it)" :
		  st == MP_TRUNCATED ? " (the stream is truncated after it)" :
		  "");
out:
  mp_reader_free(r);
  if (fd >= 0)
    close(fd);
  mp_buf_free(&name);
  return rc;
}

/* -- Moments by time ----------------------------------------------------- */

int mp_load_parse_u64(const char *s, uint64_t *out, int zero_ok)
{
  char *end;
  unsigned long long v;
  if (*s < '0' || *s > '9')
    return -1;
  errno = 0;
  v = strtoull(s, &end, 10);
  if (errno == ERANGE || *end || (!v && !zero_ok))
    return -1;
  *out = v;
  return 0;
}

static int parse_seconds(const char *s, uint64_t *ns)
{
  char *end;
  double v;
  if (!((*s >= '0' && *s <= '9') || *s == '.'))
    return -1;
  errno = 0;
  v = strtod(s, &end);
  if (errno == ERANGE || *end || !(v >= 0) || v > 1.8e10)
    return -1;
  *ns = (uint64_t)(v * 1e9 + 0.5);
  return 0;
}

/* The event at ns, by the time marks (mp_load_moment_event). */
static int event_at_time(const char *path, const char *cmd, const char *opt,
			 const char *arg, uint64_t ns, const char *hint,
			 uint64_t *at)
{
  struct mp_buf name = {0};
  const char *shown = mp_name_escaped(&name, path);
  struct mp_reader *r = NULL;
  struct mp_event ev;
  enum mp_status st;
  uint64_t n = 0, last = MP_NO_TIME, last_n = 0;
  int insnap = 0;
  int fd, rc = -1;

  if (!(r = open_stream(path, shown, &fd)))
    goto out;
  while ((st = mp_reader_next(r, &ev)) == MP_OK) {
    if (ev.type == MP_EV_SYM_INFO && ev.info_key == LJM_INFO_TIME) {
      if (ev.info_value > ns) {
	*at = n;
	rc = 0;
	goto out;
      }
      last = ev.info_value;
      last_n = n;
    } else if (ev.type == MP_EV_SYM_INFO &&
	       ev.info_key == LJM_INFO_SNAPSHOT) {
      insnap = ev.info_value != LJM_SNAPSHOT_END;
    } else if (!mp_event_is_symbol(ev.type) && !insnap) {
      n++;	/* The start snapshot's blocks are not events (#0). */
    }
  }
  if (last != MP_NO_TIME && ns == last) {
    *at = n;	/* The last mark itself: every event after it too. */
    rc = 0;
    goto out;
  }
  if (st == MP_ERROR && !n)
    ljmprof_error("%s: byte %llu: %s", shown,
		  (unsigned long long)mp_reader_error_offset(r),
		  mp_reader_error(r));
  else if (last == MP_NO_TIME)
    ljmprof_error("%s: %s=%s is in seconds, but %s has no time marks (%s)",
		  cmd, opt, arg, shown, hint);
  else
    ljmprof_error("%s: %s=%s is past the last time mark of %s "
		  "(%llu.%03llus, at event %llu)", cmd, opt, arg, shown,
		  (unsigned long long)(last / 1000000000u),
		  (unsigned long long)(last % 1000000000u / 1000000u),
		  (unsigned long long)last_n);
out:
  mp_reader_free(r);
  if (fd >= 0)
    close(fd);
  mp_buf_free(&name);
  return rc;
}

/* -- Moments ------------------------------------------------------------- */

int mp_load_parse_moment(const char *s, int named, struct mp_load_moment *m)
{
  memset(m, 0, sizeof(*m));
  if (named && !strcmp(s, "start"))
    m->at = MP_AT_START;
  else if (named && !strcmp(s, "peak"))
    m->at = MP_AT_PEAK;
  else if (s[0] == '#' && mp_load_parse_u64(s + 1, &m->event, 1) == 0)
    m->at = MP_AT_EVENT;
  else if (parse_snapshot(s, &m->snapshot) == 0)
    m->at = MP_AT_SNAPSHOT;
  else if (parse_seconds(s, &m->ns) == 0)
    m->at = MP_AT_SECONDS;
  else
    return -1;
  return 0;
}

int mp_load_moment_event(const char *path, const char *cmd,
			 const char *opt, const char *s,
			 const struct mp_load_moment *m, const char *hint,
			 uint64_t *at)
{
  switch (m->at) {
  case MP_AT_EVENT:
  case MP_AT_START:
    *at = m->event;
    return 0;
  case MP_AT_SNAPSHOT:
    return event_at_snapshot(path, cmd, opt, m->snapshot, at);
  case MP_AT_SECONDS:
    return event_at_time(path, cmd, opt, s, m->ns, hint, at);
  default:
    return -1;
  }
}

/* -- Settled moments ----------------------------------------------------- */

int mp_load_parse_seconds(const char *s, uint64_t *ns)
{
  return parse_seconds(s, ns);
}

/* The lowest point of the stream's blocks between two time marks (or
** from the moment's last mark to the moment). */
struct settle_span {
  uint64_t t;		/* The time mark it begins at. */
  uint64_t n;		/* The event after which the blocks added up to */
  double low;		/* this least (relative to the stream's start). */
};

/* A block of s bytes as the heap counts it: in a sampled stream (mean
** m) its estimated bytes, as the reports weigh it. */
static double settle_bytes(uint64_t s, uint64_t m)
{
  return m && s ? (double)s * mp_sample_weight(s, m) : (double)s;
}

int mp_load_settle(const char *path, const char *cmd, uint64_t at, uint64_t ns, uint64_t window_ns,
		   uint64_t *out)
{
  struct mp_buf name = {0};
  const char *shown = mp_name_escaped(&name, path);
  struct mp_reader *r = NULL;
  struct mp_event ev;
  enum mp_status st = MP_OK;
  struct settle_span *sp = NULL, cur = {MP_NO_TIME, 0, 0};
  size_t nsp = 0, cap = 0, i;
  uint64_t n = 0, from;
  uint64_t mean = 0;
  double live = 0, low;
  int insnap = 0;
  int fd, rc = -1;

  if (!(r = open_stream(path, shown, &fd)))
    goto out;
  while ((st = mp_reader_next(r, &ev)) == MP_OK) {
    if (ev.type == MP_EV_SYM_INFO && ev.info_key == LJM_INFO_TIME) {
      if (nsp == cap) {
	size_t c2 = cap ? 2 * cap : 64;
	struct settle_span *g = realloc(sp, c2 * sizeof(*g));
	if (!g) {
	  ljmprof_error("out of memory");
	  goto out;
	}
	sp = g;
	cap = c2;
      }
      sp[nsp++] = cur;
      cur.t = ev.info_value;
      cur.n = n;
      cur.low = live;
    } else if (ev.type == MP_EV_SYM_INFO &&
	       ev.info_key == LJM_INFO_SNAPSHOT) {
      insnap = ev.info_value != LJM_SNAPSHOT_END;
    } else if (ev.type == MP_EV_SYM_INFO && ev.info_key == LJM_INFO_SAMPLE) {
      mean = ev.info_value;
    } else if (!mp_event_is_symbol(ev.type) && !insnap) {
      if (n == at)
	break;
      n++;
      if (ev.type != MP_EV_FREE)
	live += settle_bytes(ev.new_size, mean);
      if (ev.type != MP_EV_ALLOC)
	live -= settle_bytes(ev.old_size, mean);
      if (live <= cur.low) {	/* The latest of equal lows. */
	cur.low = live;
	cur.n = n;
      }
    }
  }
  if (st == MP_ERROR && !n) {
    ljmprof_error("%s: byte %llu: %s", shown,
		  (unsigned long long)mp_reader_error_offset(r),
		  mp_reader_error(r));
    goto out;
  }
  if (at == UINT64_MAX && st == MP_TRUNCATED)	/* The end, as load says. */
    (void)say_cut(shown, fd, n);
  if (cur.t == MP_NO_TIME) {
    ljmprof_error("%s: --settle finds the collector's low points by the "
		  "time marks, and %s has none", cmd, shown);
    goto out;
  }
  /* The moment's time: as given, or its last mark. */
  if (ns == MP_NO_TIME)
    ns = cur.t;
  from = ns > window_ns ? ns - window_ns : 0;
  /* The spans that begin at a mark later than from, to the moment. */
  *out = n;
  low = HUGE_VAL;
  for (i = 1; i <= nsp; i++) {
    const struct settle_span *s = i < nsp ? &sp[i] : &cur;
    if (s->t == MP_NO_TIME || s->t <= from)
      continue;
    if (s->low <= low) {
      low = s->low;
      *out = s->n;
    }
  }
  rc = 0;
out:
  free(sp);
  mp_reader_free(r);
  if (fd >= 0)
    close(fd);
  mp_buf_free(&name);
  return rc;
}
