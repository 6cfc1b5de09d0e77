/*
** ljmprof top, the model: the files followed, each read from where the
** last refresh left it (mp_reader_follow) into a profile of its own, and
** the frame the view shows: locations by name over every file, what each
** holds now, its growth over the window and its allocation rate.
**
** Memory follows the live heaps, the symbols and the locations, never
** the files: a refresh keeps, per location, what it held at a few
** moments of the window (at most TOP_SNAPS of them).
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE	/* asprintf */

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mp_load.h"
#include "mp_reader.h"
#include "top.h"

#define TOP_SNAPS 64	/* Moments of the window kept, evenly spaced. */

enum top_state { TF_WAIT, TF_LIVE, TF_ENDED, TF_CUT, TF_BAD };

struct top_file {
  char *path;
  int fd;
  struct mp_reader *r;
  struct mp_profile *p;
  enum top_state state;
  uint32_t *rowof;	/* Location id -> row + 1 (0: not named yet). */
  uint32_t nrowof;
  char *note;		/* Why it stopped, once it did. */
};

struct top_snap {
  double t;
  uint64_t *held;	/* Per row, the rows there were then. */
  size_t n;
};

struct top {
  struct top_opts o;
  int (*find)(void *ctx, struct top *t);
  void *find_ctx;
  char **specs;
  int nspecs;
  struct top_file *files;
  size_t nfiles, files_cap;
  /* Rows: one per location name. */
  char **names;
  size_t nrows, rows_cap;
  uint32_t *slots;	/* Open addressing: row + 1, by name hash. */
  size_t nslots;
  uint64_t *held, *alloc, *prev_alloc;
  size_t nprev;
  double t0, prev_t;
  struct top_snap snaps[TOP_SNAPS];
  size_t snap_head, nsnaps;
  const char **notes;
  uint64_t kind_held[MP_NKINDS];
  struct top_frame f;
  struct mp_buf name;
};

double top_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t hash_name(const char *s)
{
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* The row of name, made if new; -1 when out of memory. */
static int64_t intern(struct top *t, const char *name)
{
  size_t i;
  if (2 * (t->nrows + 1) > t->nslots) {
    size_t n = t->nslots ? 2 * t->nslots : 1024, r;
    uint32_t *s = calloc(n, sizeof(*s));
    if (!s)
      return -1;
    for (r = 0; r < t->nrows; r++) {
      i = (size_t)hash_name(t->names[r]) & (n - 1);
      while (s[i])
	i = (i + 1) & (n - 1);
      s[i] = (uint32_t)r + 1;
    }
    free(t->slots);
    t->slots = s;
    t->nslots = n;
  }
  i = (size_t)hash_name(name) & (t->nslots - 1);
  while (t->slots[i]) {
    if (!strcmp(t->names[t->slots[i] - 1], name))
      return t->slots[i] - 1;
    i = (i + 1) & (t->nslots - 1);
  }
  if (t->nrows == t->rows_cap) {
    size_t n = t->rows_cap ? 2 * t->rows_cap : 256;
    char **nm = realloc(t->names, n * sizeof(*nm));
    uint64_t *h, *a;
    if (!nm)
      return -1;
    t->names = nm;
    if (!(h = realloc(t->held, n * sizeof(*h))))
      return -1;
    t->held = h;
    if (!(a = realloc(t->alloc, n * sizeof(*a))))
      return -1;
    t->alloc = a;
    t->rows_cap = n;
  }
  if (!(t->names[t->nrows] = strdup(name)))
    return -1;
  t->held[t->nrows] = t->alloc[t->nrows] = 0;
  t->slots[i] = (uint32_t)t->nrows + 1;
  return (int64_t)t->nrows++;
}

static int known(const struct top *t, const char *path)
{
  size_t i;
  for (i = 0; i < t->nfiles; i++)
    if (!strcmp(t->files[i].path, path))
      return 1;
  return 0;
}

int top_add_file(struct top *t, const char *path)
{
  struct top_file *f;
  if (known(t, path))
    return 0;
  if (t->nfiles == t->files_cap) {
    size_t n = t->files_cap ? 2 * t->files_cap : 8;
    struct top_file *g = realloc(t->files, n * sizeof(*g));
    if (!g)
      return -1;
    t->files = g;
    t->files_cap = n;
  }
  f = &t->files[t->nfiles];
  memset(f, 0, sizeof(*f));
  f->fd = -1;
  if (!(f->path = strdup(path)))
    return -1;
  t->nfiles++;
  return 0;
}

/* The files the specs name now: a pattern's matches, or the name. */
static int find_files(struct top *t)
{
  int i;
  if (t->find && t->find(t->find_ctx, t) < 0)
    return -1;
  for (i = 0; i < t->nspecs; i++) {
    const char *s = t->specs[i];
    if (strpbrk(s, "*?[")) {
      glob_t g;
      size_t k;
      int r = glob(s, 0, NULL, &g);
      if (r == GLOB_NOSPACE)
	return -1;
      for (k = 0; r == 0 && k < g.gl_pathc; k++)
	if (top_add_file(t, g.gl_pathv[k]) < 0) {
	  globfree(&g);
	  return -1;
	}
      if (r == 0)
	globfree(&g);
    } else if (top_add_file(t, s) < 0) {
      return -1;
    }
  }
  return 0;
}

static void file_close(struct top_file *f)
{
  mp_reader_free(f->r);
  f->r = NULL;
  mp_profile_delete(f->p);
  f->p = NULL;
  if (f->fd >= 0)
    close(f->fd);
  f->fd = -1;
  free(f->rowof);
  f->rowof = NULL;
  f->nrowof = 0;
  free(f->note);
  f->note = NULL;
  f->state = TF_WAIT;
}

/* f is no longer read (st), and why: "PATH: " and the rest. */
static void file_stop(struct top_file *f, enum top_state st,
		      const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));
static void file_stop(struct top_file *f, enum top_state st,
		      const char *fmt, ...)
{
  struct mp_buf name = {0};
  char *why = NULL, *s = NULL;
  va_list ap;
  f->state = st;
  va_start(ap, fmt);
  if (vasprintf(&why, fmt, ap) < 0)
    why = NULL;
  va_end(ap);
  if (why && asprintf(&s, "%s: %s", mp_name_escaped(&name, f->path),
		      why) < 0)
    s = NULL;
  free(why);
  mp_buf_free(&name);
  free(f->note);
  f->note = s;	/* NULL when out of memory: the state says enough. */
}

/* A file of no bytes made in the last two seconds: a writer that could
** not make its file locked (common/writer.c, create_locked: a file system
** without RENAME_NOREPLACE, or an older ljmprof) makes it, then locks
** it. */
static int just_made(int fd)
{
  struct stat st;
  return fstat(fd, &st) == 0 && st.st_size == 0 &&
	 time(NULL) - st.st_mtime < 2;
}

/* Read what f gained. 0, or -1 when out of memory. */
static int file_read(struct top *t, struct top_file *f, uint64_t *bytes)
{
  enum mp_status st;
  uint64_t n, off;
  if (f->state == TF_WAIT) {
    if ((f->fd = open(f->path, O_RDONLY | O_CLOEXEC)) < 0) {
      if (errno != ENOENT)
	file_stop(f, TF_BAD, "%s", strerror(errno));
      return 0;	/* Not there yet: a worker to come. */
    }
    f->r = mp_reader_new_fd(f->fd, -1);
    f->p = mp_profile_new(t->o.group, MP_PROFILE_NO_OVERRIDES |
			  (t->o.by == TOP_BY_KIND ? MP_PROFILE_KINDS : 0));
    if (!f->r || !f->p)
      return -1;
    mp_reader_follow(f->r);
    f->state = TF_LIVE;
  }
  if (f->state != TF_LIVE)
    return 0;
  off = mp_reader_offset(f->r);
  st = mp_profile_read(f->p, f->r, &n, NULL, NULL);
  *bytes += mp_reader_offset(f->r) - off;
  if (mp_profile_oom(f->p))
    return -1;
  switch (st) {
  case MP_AGAIN:
    /* Nobody writes it any more, and it has no end: cut. Not a file
    ** still empty and new (just_made). */
    if (!mp_load_being_written(f->fd) && !just_made(f->fd))
      file_stop(f, TF_CUT, "cut at byte %llu: the program stopped without "
		"ending it; kept what was read",
		(unsigned long long)mp_reader_offset(f->r));
    break;
  case MP_END:
    file_stop(f, TF_ENDED, "ended (%llu bytes): its program stopped it",
	      (unsigned long long)mp_reader_offset(f->r));
    break;
  case MP_ERROR:
    file_stop(f, TF_BAD, "byte %llu: %s; kept what was read before it",
	      (unsigned long long)mp_reader_error_offset(f->r),
	      mp_reader_error(f->r));
    break;
  default:
    file_stop(f, TF_CUT, "cut at byte %llu",
	      (unsigned long long)mp_reader_offset(f->r));
    break;
  }
  return 0;
}

/* Room in f->rowof for ids below n. */
static int rows_of(struct top_file *f, uint32_t n)
{
  if (n > f->nrowof) {
    uint32_t *r = realloc(f->rowof, n * sizeof(*r));
    if (!r)
      return -1;
    memset(r + f->nrowof, 0, (n - f->nrowof) * sizeof(*r));
    f->rowof = r;
    f->nrowof = n;
  }
  return 0;
}

/* The row of the name in t->name; -1 when out of memory. */
static int64_t named_row(struct top *t)
{
  if (!t->name.data || t->name.oom)
    return -1;
  return intern(t, t->name.data);
}

/* A call path, leaf first: "a <- b <- c", at most 64 frames. */
static void name_path(struct top *t, struct mp_profile *p, uint32_t id)
{
  int depth;
  for (depth = 0; id && depth < 64; depth++) {
    struct mp_frame fr;
    mp_profile_frame(p, id, &fr);
    if (depth)
      mp_buf_str(&t->name, " <- ");
    mp_name_frame(&t->name, p, NULL, &fr, MP_NAME_ALIASED);
    id = fr.parent;
  }
  if (id)
    mp_buf_str(&t->name, " <- ...");
}

static void name_kind(struct top *t, struct mp_profile *p, uint32_t id)
{
  (void)p;
  mp_name_kind(&t->name, id);
}

static void name_loc(struct top *t, struct mp_profile *p, uint32_t id)
{
  struct mp_loc l;
  mp_profile_loc(p, id, &l);
  mp_name_location(&t->name, p, NULL, &l, MP_NAME_ALIASED);
}

/* Add held and allocated bytes to the row of f's item id (a location, a
** node or a kind), named by name the first time. 0, or -1 when out of
** memory. */
static int add_to_row(struct top *t, struct top_file *f, uint32_t id,
		      uint64_t held, uint64_t alloc,
		      void (*name)(struct top *t, struct mp_profile *p,
				   uint32_t id))
{
  if (!f->rowof[id]) {
    int64_t k;
    t->name.len = 0;
    name(t, f->p, id);
    if ((k = named_row(t)) < 0)
      return -1;
    f->rowof[id] = (uint32_t)k + 1;
  }
  t->held[f->rowof[id] - 1] += held;
  t->alloc[f->rowof[id] - 1] += alloc;
  return 0;
}

/* Add f's figures into the rows: by location, call path or kind. */
static int file_sum(struct top *t, struct top_file *f)
{
  uint32_t n, id;
  if (!f->p)
    return 0;
  if (t->o.by == TOP_BY_PATH) {
    n = mp_profile_nstacks(f->p);
    if (rows_of(f, n) < 0)
      return -1;
    for (id = 1; id < n; id++) {
      struct mp_stack_counts c;
      if (mp_profile_stack(f->p, id, &c) &&
	  add_to_row(t, f, id, c.held_bytes, c.alloc_bytes + c.realloc_bytes,
		     name_path) < 0)
	return -1;
    }
  } else if (t->o.by == TOP_BY_KIND) {
    if (rows_of(f, MP_NKINDS) < 0)
      return -1;
    /* What each kind holds now is by the blocks (the kinds' counters
    ** hold it once reading is over). */
    mp_profile_kinds_held(f->p, 0, t->kind_held);
    for (id = 0; id < MP_NKINDS; id++) {
      struct mp_kind_counts c;
      mp_profile_kind(f->p, id, &c);
      if ((t->kind_held[id] || c.alloc_bytes || c.realloc_bytes) &&
	  add_to_row(t, f, id, t->kind_held[id],
		     c.alloc_bytes + c.realloc_bytes, name_kind) < 0)
	return -1;
    }
  } else {
    n = mp_profile_nlocs(f->p);
    if (rows_of(f, n) < 0)
      return -1;
    for (id = 0; id < n; id++) {
      struct mp_loc l;
      mp_profile_loc_counts(f->p, id, &l);
      if (add_to_row(t, f, id, l.held_bytes, l.alloc_bytes + l.realloc_new,
		     name_loc) < 0)
	return -1;
    }
  }
  return 0;
}

void top_opts_init(struct top_opts *o)
{
  memset(o, 0, sizeof(*o));
  o->group = MP_GROUP_LINE;
  o->by = TOP_BY_LOCATION;
  o->sort = TOP_SORT_HELD;
  o->interval = 1;
  o->window = 60;
}

struct top *top_new(const struct top_opts *o, char **specs, int nspecs)
{
  struct top *t = calloc(1, sizeof(*t));
  if (!t)
    return NULL;
  t->o = *o;
  t->specs = specs;
  t->nspecs = nspecs;
  t->t0 = t->prev_t = top_now();
  return t;
}

static void reset(struct top *t)
{
  size_t i;
  for (i = 0; i < t->nfiles; i++)
    file_close(&t->files[i]);
  for (i = 0; i < t->nrows; i++)
    free(t->names[i]);
  t->nrows = 0;
  free(t->slots);
  t->slots = NULL;
  t->nslots = 0;
  for (i = 0; i < TOP_SNAPS; i++) {
    free(t->snaps[i].held);
    t->snaps[i].held = NULL;
  }
  t->snap_head = t->nsnaps = 0;
  free(t->prev_alloc);
  t->prev_alloc = NULL;
  t->nprev = 0;
  t->f.nhist = 0;
}

void top_free(struct top *t)
{
  size_t i;
  if (!t)
    return;
  reset(t);
  for (i = 0; i < t->nfiles; i++)
    free(t->files[i].path);
  free(t->files);
  free(t->names);
  free(t->held);
  free(t->alloc);
  free(t->notes);
  free(t->f.rows);
  mp_buf_free(&t->name);
  free(t);
}

void top_set_finder(struct top *t, int (*find)(void *ctx, struct top *t),
		    void *ctx)
{
  t->find = find;
  t->find_ctx = ctx;
}

const struct top_opts *top_options(const struct top *t)
{
  return &t->o;
}

const struct top_frame *top_frame(const struct top *t)
{
  return &t->f;
}

static int row_cmp_key;
static int cmp_rows(const void *a, const void *b)
{
  const struct top_row *x = a, *y = b;
  int c = 0;
  switch (row_cmp_key) {
  case TOP_SORT_GROWTH:
    c = (y->growth > x->growth) - (y->growth < x->growth);
    break;
  case TOP_SORT_RATE:
    c = (y->rate > x->rate) - (y->rate < x->rate);
    break;
  default:
    break;
  }
  if (!c)
    c = (y->held > x->held) - (y->held < x->held);
  if (!c)
    c = (y->allocated > x->allocated) - (y->allocated < x->allocated);
  return c ? c : strcmp(x->name, y->name);
}

void top_sort(struct top *t, enum top_sort s)
{
  t->o.sort = s;
  row_cmp_key = s;
  if (t->f.nrows)
    qsort(t->f.rows, t->f.nrows, sizeof(*t->f.rows), cmp_rows);
}

/* Keep this moment's held bytes when the last kept is a window's
** TOP_SNAPS-th part old; drop what is older than the window. */
static int keep_snap(struct top *t, double now)
{
  struct top_snap *last = t->nsnaps ?
    &t->snaps[(t->snap_head + t->nsnaps - 1) % TOP_SNAPS] : NULL;
  struct top_snap *s;
  if (last && now - last->t < t->o.window / (TOP_SNAPS - 2))
    return 0;
  if (t->nsnaps == TOP_SNAPS) {
    free(t->snaps[t->snap_head].held);
    t->snaps[t->snap_head].held = NULL;
    t->snap_head = (t->snap_head + 1) % TOP_SNAPS;
    t->nsnaps--;
  }
  s = &t->snaps[(t->snap_head + t->nsnaps) % TOP_SNAPS];
  s->t = now;
  s->n = t->nrows;
  s->held = malloc((t->nrows ? t->nrows : 1) * sizeof(*s->held));
  if (!s->held)
    return -1;
  if (t->nrows)
    memcpy(s->held, t->held, t->nrows * sizeof(*s->held));
  t->nsnaps++;
  return 0;
}

/* The oldest moment kept that is within the window. */
static const struct top_snap *window_start(struct top *t, double now)
{
  while (t->nsnaps > 1 &&
	 now - t->snaps[(t->snap_head + 1) % TOP_SNAPS].t >= t->o.window) {
    free(t->snaps[t->snap_head].held);
    t->snaps[t->snap_head].held = NULL;
    t->snap_head = (t->snap_head + 1) % TOP_SNAPS;
    t->nsnaps--;
  }
  return t->nsnaps ? &t->snaps[t->snap_head] : NULL;
}

int top_refresh(struct top *t)
{
  struct top_frame *f = &t->f;
  const struct top_snap *w;
  double start = top_now(), now, dt;
  uint64_t bytes = 0;
  size_t i;

  if (find_files(t) < 0)
    return -1;
  for (i = 0; i < t->nfiles; i++)
    if (file_read(t, &t->files[i], &bytes) < 0)
      return -1;
  now = top_now();
  f->read_s = now - start;
  f->read_bytes = bytes;
  f->behind = f->read_s > t->o.interval;
  if (t->nrows) {	/* No rows yet: no arrays either. */
    memset(t->held, 0, t->nrows * sizeof(*t->held));
    memset(t->alloc, 0, t->nrows * sizeof(*t->alloc));
  }
  f->nfiles = (uint32_t)t->nfiles;
  f->nlive = f->nended = f->nwaiting = f->nbad = 0;
  f->live_bytes = f->rss = 0;
  f->nrss = 0;
  f->sample_mean = 0;
  free(t->notes);
  t->notes = calloc(t->nfiles + 1, sizeof(*t->notes));
  if (!t->notes)
    return -1;
  f->nnotes = 0;
  for (i = 0; i < t->nfiles; i++) {
    struct top_file *tf = &t->files[i];
    if (file_sum(t, tf) < 0)
      return -1;
    switch (tf->state) {
    case TF_WAIT: f->nwaiting++; break;
    case TF_LIVE: f->nlive++; break;
    case TF_ENDED: f->nended++; break;
    default: f->nbad++; break;
    }
    if (tf->note)
      t->notes[f->nnotes++] = tf->note;
    if (tf->p) {
      struct mp_timeline_point pt;
      uint64_t mean;
      mp_profile_file_now(tf->p, &pt, &mean);
      f->live_bytes += pt.live_bytes;
      if (pt.rss) {
	f->rss += pt.rss;
	f->nrss++;
      }
      if (mean > f->sample_mean)
	f->sample_mean = mean;
    }
  }
  f->notes = t->notes;
  /* Growth: against the oldest moment within the window. */
  w = window_start(t, now);
  f->span = w ? now - w->t : -1;	/* None yet: since the stream began. */
  dt = now - t->prev_t;
  free(f->rows);
  f->rows = calloc(t->nrows ? t->nrows : 1, sizeof(*f->rows));
  if (!f->rows)
    return -1;
  f->nrows = 0;
  f->rate = 0;
  for (i = 0; i < t->nrows; i++) {
    struct top_row *r = &f->rows[f->nrows];
    uint64_t before = w && i < w->n ? w->held[i] : 0;
    uint64_t prev = i < t->nprev ? t->prev_alloc[i] : 0;
    if (!t->held[i] && !t->alloc[i] && !before)
      continue;	/* A symbol that allocated nothing. */
    f->nrows++;
    r->name = t->names[i];
    r->held = t->held[i];
    r->growth = (int64_t)(t->held[i] - before);
    r->allocated = t->alloc[i];
    r->rate = t->nprev && dt > 0 && t->alloc[i] >= prev ?
	      (double)(t->alloc[i] - prev) / dt : 0;
    f->rate += r->rate;
  }
  if (keep_snap(t, now) < 0)
    return -1;
  free(t->prev_alloc);
  t->prev_alloc = malloc((t->nrows ? t->nrows : 1) * sizeof(*t->prev_alloc));
  if (!t->prev_alloc)
    return -1;
  if (t->nrows)
    memcpy(t->prev_alloc, t->alloc, t->nrows * sizeof(*t->alloc));
  t->nprev = t->nrows ? t->nrows : 1;
  if (!t->nrows)
    t->prev_alloc[0] = 0;
  t->prev_t = now;
  if (f->nhist == TOP_HISTORY) {
    memmove(f->hist, f->hist + 1, (TOP_HISTORY - 1) * sizeof(*f->hist));
    memmove(f->rss_hist, f->rss_hist + 1,
	    (TOP_HISTORY - 1) * sizeof(*f->rss_hist));
    f->nhist--;
  }
  f->rss_hist[f->nhist] = f->rss;
  f->hist[f->nhist++] = f->live_bytes;
  f->elapsed = now - t->t0;
  top_sort(t, t->o.sort);
  return 0;
}

int top_regroup(struct top *t, enum top_by by, enum mp_group g)
{
  reset(t);
  t->o.by = by;
  t->o.group = g;
  return top_refresh(t);
}
