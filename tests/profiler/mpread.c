/*
** The profiler tests' stream reader: ljmprof's decoder, its own naming.
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>

#include "lj_memprof_format.h"
#include "mp_reader.h"
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
  mpr_map protos, cfuncs, traces;
  mpr_stats *st;
} rd;

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

/* Define the symbol of a symbol event (or symbol table entry). */
static void add_sym(rd *r, const struct mp_event *ev)
{
  if (ev->type == MP_EV_SYM_LFUNC) {
    if (map_put(&r->protos, ev->sym_addr, strndup(ev->name, ev->name_len)))
      r->st->redefined++;
  } else if (ev->type == MP_EV_SYM_CFUNC) {
    char *name = strndup(ev->name, ev->name_len);
    if (r->st->ncsyms == r->st->szcsyms) {
      r->st->szcsyms = r->st->szcsyms ? 2 * r->st->szcsyms : 1024;
      r->st->csyms = realloc(r->st->csyms, r->st->szcsyms * sizeof(char *));
    }
    r->st->csyms[r->st->ncsyms++] = strdup(name);
    map_put(&r->cfuncs, ev->sym_addr, name);
  } else {
    char *loc = proto_name(r, ev->sym_proto, ev->sym_line), *name;
    name = fmt("TRACE [%llu] started at %s", (unsigned long long)ev->sym_addr,
	       loc);
    free(loc);
    r->st->traces = realloc(r->st->traces, (r->st->ntraces + 1) * sizeof(char *));
    r->st->traces[r->st->ntraces++] = strdup(name);
    map_put(&r->traces, ev->sym_addr, name);
  }
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

/*
** Decoding is ljmprof's reader (tools/stream/); naming is this file's
** own, as doc/format.md says it, so that it checks ljmprof's naming
** instead of repeating it.
*/
int mpr_parse(const uint8_t *p, size_t len, mpr_stats *st, char *err,
	      size_t errsz)
{
  struct mp_reader *mr;
  struct mp_event ev;
  enum mp_status s;
  rd r;
  int rc = 0;

  memset(st, 0, sizeof(*st));
  memset(&r, 0, sizeof(r));
  r.st = st;
  if (!(mr = mp_reader_new_mem(p, len))) {
    snprintf(err, errsz, "out of memory");
    return -1;
  }
  while ((s = mp_reader_next(mr, &ev)) == MP_OK) {
    char *loc;
    if (mp_event_is_symbol(ev.type)) {
      add_sym(&r, &ev);
      if (ev.in_symtab)
	st->startsyms[mp_event_symbol_kind(ev.type)]++;
      else
	st->symevents++;
      continue;
    }
    switch (ev.src) {
    case LJM_SRC_INTERNAL:
      loc = strdup("INTERNAL");
      break;
    case LJM_SRC_LFUNC:
      loc = proto_name(&r, ev.loc, ev.loc_line);
      break;
    case LJM_SRC_CFUNC: {
      const char *n = map_get(&r.cfuncs, ev.loc);
      loc = n ? strdup(n) : fmt("CFUNC 0x%llx", (unsigned long long)ev.loc);
      break;
    }
    case LJM_SRC_TRACE: {
      const char *n = map_get(&r.traces, ev.loc);
      if (!n) st->unresolved++;
      loc = n ? strdup(n) : fmt("TRACE [%llu] ?", (unsigned long long)ev.loc);
      break;
    }
    default:	/* The reader delivers no other source. */
      loc = fmt("source 0x%x", ev.src);
      break;
    }
    add_row(st, (int)ev.type, loc, ev.new_size);
  }
  /* A truncated last event is not an error: complete stays 0. */
  st->complete = s == MP_END;
  if (s == MP_ERROR) {
    snprintf(err, errsz, "%s at byte %llu", mp_reader_error(mr),
	     (unsigned long long)mp_reader_error_offset(mr));
    rc = -1;
  }
  mp_reader_free(mr);
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
