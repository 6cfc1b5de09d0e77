/*
** A minimal memprof stream reader for the profiler's tests.
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>

#include "lj_memprof_format.h"
#include "mpread.h"

/* -- Address -> name map (open addressing, latest definition wins) ------- */

typedef struct mpr_map {
  uint64_t *keys;
  char **vals;
  size_t size, used;
} mpr_map;

static size_t map_slot(const mpr_map *m, uint64_t k)
{
  size_t i = (size_t)((k * 0x9e3779b97f4a7c15ull) >> 20) & (m->size - 1);
  while (m->vals[i] && m->keys[i] != k)
    i = (i + 1) & (m->size - 1);
  return i;
}

/* Returns 1 if k was known. */
static int map_put(mpr_map *m, uint64_t k, char *v)
{
  size_t i;
  int known;
  if (2 * (m->used + 1) > m->size) {
    mpr_map n;
    size_t j;
    n.size = m->size ? 2 * m->size : 1024;
    n.used = 0;
    n.keys = calloc(n.size, sizeof(uint64_t));
    n.vals = calloc(n.size, sizeof(char *));
    for (j = 0; j < m->size; j++)
      if (m->vals[j]) {
	size_t s = map_slot(&n, m->keys[j]);
	n.keys[s] = m->keys[j];
	n.vals[s] = m->vals[j];
	n.used++;
      }
    free(m->keys);
    free(m->vals);
    *m = n;
  }
  i = map_slot(m, k);
  known = m->vals[i] != NULL;
  if (known) free(m->vals[i]); else m->used++;
  m->keys[i] = k;
  m->vals[i] = v;
  return known;
}

static const char *map_get(const mpr_map *m, uint64_t k)
{
  return m->size ? m->vals[map_slot(m, k)] : NULL;
}

static void map_free(mpr_map *m)
{
  size_t i;
  for (i = 0; i < m->size; i++) free(m->vals[i]);
  free(m->keys);
  free(m->vals);
}

/* -- Reader ---------------------------------------------------------------- */

typedef struct rd {
  const uint8_t *p, *end;
  int trunc;
  mpr_map protos, cfuncs, traces;
  mpr_stats *st;
} rd;

static uint64_t rd_u(rd *r)
{
  uint64_t v = 0;
  int shift = 0;
  for (;;) {
    uint8_t b;
    if (r->p >= r->end) { r->trunc = 1; return 0; }
    b = *r->p++;
    if (shift < 64) v |= (uint64_t)(b & 0x7f) << shift;
    shift += 7;
    if (!(b & 0x80)) return v;
  }
}

static char *rd_str(rd *r)
{
  uint64_t n = rd_u(r);
  char *s;
  if (r->trunc || n > (uint64_t)(r->end - r->p)) { r->trunc = 1; return NULL; }
  s = malloc((size_t)n + 1);
  memcpy(s, r->p, (size_t)n);
  s[n] = 0;
  r->p += n;
  return s;
}

static char *fmt(const char *f, ...)
{
  va_list ap;
  char buf[1024];
  va_start(ap, f);
  vsnprintf(buf, sizeof(buf), f, ap);
  va_end(ap);
  return strdup(buf);
}

/* Name of a prototype at line: "chunk:line". */
static char *proto_name(rd *r, uint64_t pt, uint64_t line)
{
  const char *c = map_get(&r->protos, pt);
  if (c == NULL) {
    r->st->unresolved++;
    return fmt("?proto 0x%llx:%llu", (unsigned long long)pt,
	       (unsigned long long)line);
  }
  return fmt("%s:%llu", c, (unsigned long long)line);
}

/* Read one symbol body of a kind; 0 ok, -1 truncated. */
static int rd_sym(rd *r, int kind)
{
  if (kind == LJM_SYMTAB_LFUNC) {
    uint64_t a = rd_u(r);
    char *name = rd_str(r);
    rd_u(r);
    if (r->trunc) { free(name); return -1; }
    if (map_put(&r->protos, a, name)) r->st->redefined++;
  } else if (kind == LJM_SYMTAB_CFUNC) {
    uint64_t a = rd_u(r);
    char *name = rd_str(r);
    if (r->trunc) { free(name); return -1; }
    if (r->st->ncsyms == r->st->szcsyms) {
      r->st->szcsyms = r->st->szcsyms ? 2 * r->st->szcsyms : 1024;
      r->st->csyms = realloc(r->st->csyms, r->st->szcsyms * sizeof(char *));
    }
    r->st->csyms[r->st->ncsyms++] = strdup(name);
    map_put(&r->cfuncs, a, name);
  } else {
    uint64_t no = rd_u(r), pt = rd_u(r), line = rd_u(r);
    char *loc, *name;
    if (r->trunc) return -1;
    loc = proto_name(r, pt, line);
    name = fmt("TRACE [%llu] started at %s", (unsigned long long)no, loc);
    free(loc);
    r->st->traces = realloc(r->st->traces, (r->st->ntraces + 1) * sizeof(char *));
    r->st->traces[r->st->ntraces++] = strdup(name);
    map_put(&r->traces, no, name);
  }
  return 0;
}

static void add_row(mpr_stats *st, int ev, char *loc, uint64_t nsize)
{
  size_t i;
  if (getenv("MPR_VERBOSE"))
    fprintf(stderr, "ev %d %s %llu\n", ev, loc, (unsigned long long)nsize);
  st->events++;
  for (i = 0; i < st->nrows; i++)
    if (st->rows[i].ev == ev && !strcmp(st->rows[i].loc, loc)) {
      st->rows[i].count++;
      st->rows[i].nbytes += nsize;
      free(loc);
      return;
    }
  if (st->nrows == st->szrows) {
    st->szrows = st->szrows ? 2 * st->szrows : 64;
    st->rows = realloc(st->rows, st->szrows * sizeof(mpr_row));
  }
  st->rows[st->nrows].ev = ev;
  st->rows[st->nrows].loc = loc;
  st->rows[st->nrows].count = 1;
  st->rows[st->nrows].nbytes = nsize;
  st->nrows++;
}

static int bad(char *err, size_t errsz, const char *msg, size_t off)
{
  snprintf(err, errsz, "%s at byte %zu", msg, off);
  return -1;
}

static int hdr_ok(rd *r, uint8_t m2)
{
  if (r->end - r->p < LJM_FMT_HDRLEN) { r->trunc = 1; return 0; }
  if (r->p[0] != 'l' || r->p[1] != 'j' || r->p[2] != m2 ||
      r->p[3] != LJM_FMT_VERSION)
    return -1;
  r->p += LJM_FMT_HDRLEN;
  return 1;
}

int mpr_parse(const uint8_t *p, size_t len, mpr_stats *st, char *err,
	      size_t errsz)
{
  rd r;
  int h, rc = 0;
  memset(st, 0, sizeof(*st));
  memset(&r, 0, sizeof(r));
  r.p = p; r.end = p + len; r.st = st;
  if ((h = hdr_ok(&r, LJM_SYMTAB_M2)) < 0)
    return bad(err, errsz, "bad symtab header", 0);
  while (h > 0 && !r.trunc) {
    uint8_t b;
    if (r.p >= r.end) { r.trunc = 1; break; }
    b = *r.p++;
    if (b & LJM_SYMTAB_FINAL) break;
    if ((b & LJM_SYMTAB_KIND_MASK) > LJM_SYMTAB_TRACE) {
      rc = bad(err, errsz, "bad symtab entry", (size_t)(r.p - p - 1));
      goto out;
    }
    if (rd_sym(&r, b & LJM_SYMTAB_KIND_MASK) == 0)
      st->startsyms[b & LJM_SYMTAB_KIND_MASK]++;
  }
  if (r.trunc) goto out;
  if ((h = hdr_ok(&r, LJM_EVENTS_M2)) < 0) {
    rc = bad(err, errsz, "bad events header", (size_t)(r.p - p));
    goto out;
  }
  while (h > 0 && !r.trunc && r.p < r.end) {
    const uint8_t *start = r.p;
    uint8_t b = *r.p++;
    int ev = b & LJM_EV_MASK, src = b & LJM_SRC_MASK;
    char *loc;
    uint64_t a, nsize = 0;
    if (b == LJM_EV_EPILOGUE) {
      st->complete = 1;
      if (r.p != r.end) rc = bad(err, errsz, "bytes after epilogue", (size_t)(r.p - p));
      break;
    }
    if (b & (LJM_EV_EPILOGUE|LJM_EV_UNUSED_MASK)) {
      rc = bad(err, errsz, "bad event header", (size_t)(start - p));
      break;
    }
    if (ev == LJM_EV_SYMTAB) {
      int kind = src == LJM_SRC_LFUNC ? LJM_SYMTAB_LFUNC :
		 src == LJM_SRC_CFUNC ? LJM_SYMTAB_CFUNC :
		 src == LJM_SRC_TRACE ? LJM_SYMTAB_TRACE : -1;
      if (kind < 0) { rc = bad(err, errsz, "bad symbol event", (size_t)(start - p)); break; }
      if (rd_sym(&r, kind) == 0) st->symevents++;
      continue;
    }
    switch (src) {
    case LJM_SRC_INTERNAL:
      loc = strdup("INTERNAL");
      break;
    case LJM_SRC_LFUNC: {
      uint64_t pt = rd_u(&r), line = rd_u(&r);
      loc = proto_name(&r, pt, line);
      break;
    }
    case LJM_SRC_CFUNC: {
      const char *n;
      a = rd_u(&r);
      n = map_get(&r.cfuncs, a);
      loc = n ? strdup(n) : fmt("CFUNC 0x%llx", (unsigned long long)a);
      break;
    }
    case LJM_SRC_TRACE: {
      const char *n;
      a = rd_u(&r);
      n = map_get(&r.traces, a);
      if (!n) st->unresolved++;
      loc = n ? strdup(n) : fmt("TRACE [%llu] ?", (unsigned long long)a);
      break;
    }
    default:
      rc = bad(err, errsz, "bad event source", (size_t)(start - p));
      goto out;
    }
    if (ev != LJM_EV_ALLOC) { rd_u(&r); rd_u(&r); }
    if (ev != LJM_EV_FREE) { rd_u(&r); nsize = rd_u(&r); }
    if (r.trunc) { free(loc); break; }
    add_row(st, ev, loc, nsize);
  }
out:
  map_free(&r.protos);
  map_free(&r.cfuncs);
  map_free(&r.traces);
  return rc;
}

int mpr_parse_file(const char *path, mpr_stats *st, char *err, size_t errsz)
{
  FILE *f = fopen(path, "rb");
  uint8_t *buf = NULL;
  size_t len = 0, cap = 0, n;
  int rc;
  if (!f) {
    memset(st, 0, sizeof(*st));
    snprintf(err, errsz, "cannot open %s", path);
    return -1;
  }
  do {
    if (len == cap) buf = realloc(buf, cap = cap ? 2 * cap : 1 << 16);
    n = fread(buf + len, 1, cap - len, f);
    len += n;
  } while (n > 0);
  fclose(f);
  rc = mpr_parse(buf, len, st, err, errsz);
  free(buf);
  return rc;
}

void mpr_free(mpr_stats *st)
{
  size_t i;
  for (i = 0; i < st->nrows; i++) free(st->rows[i].loc);
  for (i = 0; i < st->ntraces; i++) free(st->traces[i]);
  for (i = 0; i < st->ncsyms; i++) free(st->csyms[i]);
  free(st->csyms);
  free(st->rows);
  free(st->traces);
  memset(st, 0, sizeof(*st));
}

unsigned long mpr_count(const mpr_stats *st, int ev, const char *loc)
{
  size_t i;
  for (i = 0; i < st->nrows; i++)
    if (st->rows[i].ev == ev && !strcmp(st->rows[i].loc, loc))
      return st->rows[i].count;
  return 0;
}

uint64_t mpr_bytes(const mpr_stats *st, int ev, const char *loc)
{
  size_t i;
  for (i = 0; i < st->nrows; i++)
    if (st->rows[i].ev == ev && !strcmp(st->rows[i].loc, loc))
      return st->rows[i].nbytes;
  return 0;
}

unsigned long mpr_count_prefix(const mpr_stats *st, int ev, const char *prefix)
{
  size_t i, n = strlen(prefix);
  unsigned long c = 0;
  for (i = 0; i < st->nrows; i++)
    if (st->rows[i].ev == ev && !strncmp(st->rows[i].loc, prefix, n))
      c += st->rows[i].count;
  return c;
}

unsigned long mpr_csym_count(const mpr_stats *st, const char *name)
{
  size_t i;
  unsigned long c = 0;
  for (i = 0; i < st->ncsyms; i++)
    if (!strcmp(st->csyms[i], name)) c++;
  return c;
}

void mpr_dump(const mpr_stats *st)
{
  static const char *kinds[] = { "?", "ALLOC", "FREE", "REALLOC" };
  size_t i;
  fprintf(stderr, "-- %lu events, %lu symbol events, start: %lu protos, "
	  "%lu C symbols, %lu traces, %lu unresolved, %s\n", st->events,
	  st->symevents, st->startsyms[0], st->startsyms[1], st->startsyms[2],
	  st->unresolved, st->complete ? "complete" : "incomplete");
  for (i = 0; i < st->nrows; i++)
    fprintf(stderr, "  %-7s %6lu %8llu  %s\n", kinds[st->rows[i].ev],
	    st->rows[i].count, (unsigned long long)st->rows[i].nbytes,
	    st->rows[i].loc);
}
