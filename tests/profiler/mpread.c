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
  mpr_map sites;		/* Trace << 32 | site -> its line's name. */
  mpr_stats *st;
  char **nodes;			/* Stack names by node id (extension). */
  char **leaves;		/* Their version-3 names (mpr_leafnames). */
  unsigned *tags;		/* Their frame tags. */
  size_t nnodes, sznodes;
  struct xr {			/* The extension's decoder. */
    const uint8_t *p, *end, *start;
    const char *err;
  } x;
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
  if (ev != MPR_SNAP) st->events++;
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

/* -- The profile extension: the tests' own decoder ------------------------ */

int mpr_leafnames;

/*
** ljmprof's reader learns the extension elsewhere; this one decodes it
** straight from doc/format.md, so that the writer's tests do not wait for
** it and do not share its mistakes.
*/
typedef struct xr xr;

static int x_uleb(xr *x, uint64_t *v)
{
  uint64_t r = 0;
  int sh = 0;
  for (;;) {
    uint8_t b;
    if (x->p >= x->end) return 0;
    b = *x->p++;
    if (sh < 64) r |= (uint64_t)(b & 0x7f) << sh;
    sh += 7;
    if (!(b & 0x80)) break;
    if (sh > 70) { x->err = "ULEB128 too long"; return 0; }
  }
  *v = r;
  return 1;
}

static int x_str(xr *x, char **s)
{
  uint64_t n;
  if (!x_uleb(x, &n)) return 0;
  if (n > (uint64_t)(x->end - x->p)) return 0;
  *s = strndup((const char *)x->p, (size_t)n);
  x->p += n;
  return 1;
}

/* A version-3 symbol body of kind k, as an mp_event for add_sym. */
static int x_sym(xr *x, rd *r, unsigned k, int in_symtab)
{
  struct mp_event ev;
  char *name = NULL;
  int ok;
  memset(&ev, 0, sizeof(ev));
  ev.in_symtab = in_symtab;
  if (k == LJM_SYMTAB_LFUNC) {
    ev.type = MP_EV_SYM_LFUNC;
    ok = x_uleb(x, &ev.sym_addr) && x_str(x, &name) && x_uleb(x, &ev.sym_line);
  } else if (k == LJM_SYMTAB_CFUNC) {
    ev.type = MP_EV_SYM_CFUNC;
    ok = x_uleb(x, &ev.sym_addr) && x_str(x, &name);
  } else if (k == LJM_SYMTAB_TRACE) {
    ev.type = MP_EV_SYM_TRACE;
    ok = x_uleb(x, &ev.sym_addr) && x_uleb(x, &ev.sym_proto) &&
	 x_uleb(x, &ev.sym_line);
  } else {
    x->err = "bad symbol kind";
    return 0;
  }
  if (ok) {
    ev.name = name ? name : "";
    ev.name_len = name ? strlen(name) : 0;
    add_sym(r, &ev);
    if (in_symtab) r->st->startsyms[k]++; else r->st->symevents++;
  }
  free(name);
  return ok;
}

/* A NODE: its stack's name is its frame's, then its parent's. */
static int x_node(xr *x, rd *r)
{
  uint64_t parent, tag, a = 0, b = 0;
  char *name = NULL, *frame, *full, *leaf;
  if (!x_uleb(x, &parent) || !x_uleb(x, &tag)) return 0;
  if (parent > r->nnodes) { x->err = "parent not announced"; return 0; }
  switch (tag) {
  case LJM_FRAME_LUA: {
    const char *c;
    if (!x_uleb(x, &a) || !x_uleb(x, &b) || !x_str(x, &name)) return 0;
    c = map_get(&r->protos, a);
    if (c == NULL) r->st->unresolved++;
    frame = fmt("%s(%s:%llu)", name, c ? c : "?proto", (unsigned long long)b);
    break;
    }
  case LJM_FRAME_FAST:
    if (!x_uleb(x, &a) || !x_str(x, &name)) return 0;
    frame = *name ? strdup(name) : fmt("ffid %llu", (unsigned long long)a);
    break;
  case LJM_FRAME_C: {
    const char *n;
    if (!x_uleb(x, &a)) return 0;
    n = map_get(&r->cfuncs, a);
    if (n == NULL) r->st->unresolved++;
    frame = n ? strdup(n) : fmt("CFUNC 0x%llx", (unsigned long long)a);
    break;
    }
  case LJM_FRAME_TRACE:
    if (!x_uleb(x, &a) || !x_uleb(x, &b)) return 0;
    if (map_get(&r->traces, a) == NULL) r->st->unresolved++;
    if (b && (a >> 32 || map_get(&r->sites, a << 32 | b) == NULL)) {
      x->err = "trace site not announced";
      return 0;
    }
    frame = b ? fmt("TRACE [%llu] at %s", (unsigned long long)a,
		    map_get(&r->sites, a << 32 | b))
	      : fmt("TRACE [%llu]", (unsigned long long)a);
    if (b) r->st->sitenodes++;
    break;
  case LJM_FRAME_CUT:  /* The full table's cut, if INFO FULL_ROOT said. */
    frame = strdup(r->st->ninfo[LJM_INFO_FULL_ROOT] &&
		   r->st->info[LJM_INFO_FULL_ROOT] == r->nnodes + 1 ?
		   "CUT(full)" : "CUT");
    break;
  default:
    x->err = "bad frame tag";
    return 0;
  }
  /* The version-3 name of the node as a leaf: a built-in is charged to
  ** the Lua function that calls it (through pcall), as mp_where does. */
  if (tag == LJM_FRAME_LUA) {
    leaf = fmt("%s:%llu", map_get(&r->protos, a) ? map_get(&r->protos, a) :
	       "?proto", (unsigned long long)b);
  } else if (tag == LJM_FRAME_FAST && parent &&
	     (r->tags[parent-1] == LJM_FRAME_LUA ||
	      (r->tags[parent-1] == LJM_FRAME_FAST &&
	       strncmp(r->leaves[parent-1], "FAST ", 5)))) {
    leaf = strdup(r->leaves[parent-1]);
  } else if (tag == LJM_FRAME_FAST) {
    leaf = fmt("FAST %s", frame);
  } else if (tag == LJM_FRAME_TRACE && b) {  /* Charged to its line. */
    leaf = strdup(map_get(&r->sites, a << 32 | b));
  } else if (tag == LJM_FRAME_TRACE) {
    const char *n = map_get(&r->traces, a);
    leaf = n ? strdup(n) : strdup(frame);
  } else {
    leaf = strdup(frame);
  }
  free(name);
  full = parent ? fmt("%s" MPR_SEP "%s", frame, r->nodes[parent-1]) : frame;
  if (parent) free(frame);
  if (r->nnodes == r->sznodes) {
    r->sznodes = r->sznodes ? 2 * r->sznodes : 256;
    r->nodes = realloc(r->nodes, r->sznodes * sizeof(char *));
    r->leaves = realloc(r->leaves, r->sznodes * sizeof(char *));
    r->tags = realloc(r->tags, r->sznodes * sizeof(unsigned));
  }
  r->leaves[r->nnodes] = leaf;
  r->tags[r->nnodes] = (unsigned)tag;
  r->nodes[r->nnodes++] = full;
  r->st->nodes++;
  return 1;
}

/* A trace call site: named by its first pair, the line of the call. */
static int x_site(xr *x, rd *r)
{
  uint64_t traceno, site, n, i, pt, line;
  char *name = NULL;
  if (!x_uleb(x, &traceno) || !x_uleb(x, &site) || !x_uleb(x, &n))
    return 0;
  if (site == 0 || n == 0 || traceno >> 32 || site >> 32) {
    x->err = "bad trace site";
    return 0;
  }
  for (i = 0; i < n; i++) {
    if (!x_uleb(x, &pt) || !x_uleb(x, &line)) {
      free(name);
      return 0;
    }
    if (i == 0) name = proto_name(r, pt, line);
  }
  map_put(&r->sites, traceno << 32 | site, name);
  r->st->sites++;
  return 1;
}

static int x_hdr(xr *x, uint8_t m2)
{
  const uint8_t *p = x->p;
  if (x->end - p < LJM_FMT_HDRLEN) return 0;
  if (p[0] != 'l' || p[1] != 'j' || p[2] != m2 ||
      p[3] != LJM_FMT_VERSION_EXT || p[4] != LJM_EXT_PROFILE ||
      p[5] != LJM_EXT_PROFILE_VERSION || p[6] != 0) {
    x->err = "bad extension header";
    return 0;
  }
  x->p += LJM_FMT_HDRLEN;
  return 1;
}

/* Returns 1 complete, 0 truncated, -1 malformed (x->err). */
static int mpr_parse_ext(const uint8_t *p, size_t len, rd *r)
{
  xr *x = &r->x;
  mpr_stats *st = r->st;
  int first = 1;
  x->p = x->start = p;
  x->end = p + len;
  x->err = NULL;
  st->ext = 1;
  if (!x_hdr(x, 's')) return x->err ? -1 : 0;
  for (;;) {
    uint8_t h;
    if (x->p >= x->end) return 0;
    h = *x->p++;
    if (h == LJM_SYMTAB_FINAL) break;
    if (!x_sym(x, r, h & LJM_SYMTAB_KIND_MASK, 1)) return x->err ? -1 : 0;
  }
  if (!x_hdr(x, 'm')) return x->err ? -1 : 0;
  for (;;) {
    uint8_t h, ev, src;
    uint64_t loc = 0, line = 0, oa, os, na = 0, ns = 0;
    char *name = NULL;
    int kind;
    if (x->p >= x->end) return 0;
    h = *x->p++;
    if (h == LJM_EV_EPILOGUE) return 1;
    ev = h & LJM_EV_MASK;
    src = h & LJM_SRC_MASK;
    if (h & 0x40) { x->err = "reserved header bit"; return -1; }
    if (ev == LJM_EV_SYMTAB) {
      int ok;
      if (src == LJM_SRC_NODE) {
	ok = x_node(x, r);
      } else if (src == LJM_SRC_INFO) {
	uint64_t k, v;
	ok = x_uleb(x, &k) && x_uleb(x, &v);
	if (ok && k == 2 && st->ninfo[2] && v < st->info[2])
	  st->time_backwards++;
	if (ok && k == 2)
	  st->events_timed = st->events;
	if (ok && k < 10) {
	  if (!st->ninfo[k]) st->info_first[k] = v;
	  st->info[k] = v;
	  st->ninfo[k]++;
	}
	if (ok && k == LJM_INFO_SNAPSHOT) {
	  st->insnap = v == LJM_SNAPSHOT_START;
	  st->inlater = v == LJM_SNAPSHOT_LATER;
	  if (v == LJM_SNAPSHOT_START) st->snaps++;
	  if (v == LJM_SNAPSHOT_LATER) {
	    if (st->laters < MPR_LATER)
	      st->laterevents[st->laters] = st->events;
	    st->laters++;
	  }
	}
	if (ok && first) st->first_info = (int)k;
      } else if (src == LJM_SRC_SITE) {
	ok = x_site(x, r);
      } else if (src == LJM_SRC_LFUNC || src == LJM_SRC_CFUNC ||
		 src == LJM_SRC_TRACE) {
	ok = x_sym(x, r, (src >> 2) - 2, 0);
      } else {
	x->err = "unknown symbol source";
	return -1;
      }
      if (!ok) return x->err ? -1 : 0;
      first = 0;
      continue;
    }
    first = 0;
    switch (src) {
    case LJM_SRC_INTERNAL: break;
    case LJM_SRC_LFUNC:
      if (!x_uleb(x, &loc) || !x_uleb(x, &line)) return x->err ? -1 : 0;
      break;
    case LJM_SRC_CFUNC: case LJM_SRC_TRACE: case LJM_SRC_STACK:
      if (!x_uleb(x, &loc)) return x->err ? -1 : 0;
      break;
    default:
      x->err = "unknown source";
      return -1;
    }
    if ((ev != LJM_EV_ALLOC && (!x_uleb(x, &oa) || !x_uleb(x, &os))) ||
	(ev != LJM_EV_FREE && (!x_uleb(x, &na) || !x_uleb(x, &ns))))
      return x->err ? -1 : 0;
    if ((h & LJM_EV_KIND) && x->p >= x->end) return 0;
    kind = (h & LJM_EV_KIND) ? *x->p++ : -1;
    switch (src) {
    case LJM_SRC_INTERNAL: name = strdup("INTERNAL"); break;
    case LJM_SRC_LFUNC: name = proto_name(r, loc, line); break;
    case LJM_SRC_CFUNC: {
      const char *n = map_get(&r->cfuncs, loc);
      name = n ? strdup(n) : fmt("CFUNC 0x%llx", (unsigned long long)loc);
      break;
      }
    case LJM_SRC_TRACE: {
      const char *n = map_get(&r->traces, loc);
      if (!n) st->unresolved++;
      name = n ? strdup(n) : fmt("TRACE [%llu] ?", (unsigned long long)loc);
      break;
      }
    default:
      if (loc == 0 || loc > r->nnodes) {
	x->err = "node not announced";
	return -1;
      }
      name = strdup(mpr_leafnames ? r->leaves[loc-1] : r->nodes[loc-1]);
      st->stackevents++;
      break;
    }
    if (st->inlater) {
      if (ev == LJM_EV_ALLOC && kind >= 0) {
	if (st->laters <= MPR_LATER) {
	  st->laterblocks[st->laters - 1]++;
	  st->laterbytes[st->laters - 1] += ns;
	  st->laterkinds[st->laters - 1][kind]++;
	}
	free(name);
	continue;
      }
      st->snapother++;
    }
    if (st->insnap) {
      if (ev == LJM_EV_ALLOC && kind >= 0) {
	st->snapblocks++;
	st->snapbytes += ns;
	st->snapkinds[kind]++;
	st->snapkindbytes[kind] += ns;
	if (st->nsnap == st->szsnap) {
	  st->szsnap = st->szsnap ? 2 * st->szsnap : 256;
	  st->snap = realloc(st->snap, st->szsnap * sizeof(*st->snap));
	}
	st->snap[st->nsnap].addr = na;
	st->snap[st->nsnap].size = ns;
	st->snap[st->nsnap++].kind = kind;
	add_row(st, MPR_SNAP, name, ns);
	continue;
      }
      st->snapother++;
    }
    if (kind >= 0) {
      st->kinds[kind]++;
      /* From compiled code: a trace's source, or a stack whose leaf is
      ** a trace (charged to its line when it has a site). */
      if (src == LJM_SRC_STACK ? r->tags[loc-1] == LJM_FRAME_TRACE :
	  !strncmp(name, "TRACE [", 7))
	st->kinds_trace[kind]++;
    } else if (ev != LJM_EV_FREE) {
      st->nokind++;
    }
    add_row(st, ev, name, ns);
  }
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
  if (len > 3 && p[3] == LJM_FMT_VERSION_EXT) {
    size_t i;
    rc = mpr_parse_ext(p, len, &r);
    st->complete = rc == 1;
    if (rc < 0)
      snprintf(err, errsz, "%s at byte %llu", r.x.err ? r.x.err : "bad data",
	       (unsigned long long)(r.x.p - r.x.start));
    rc = rc < 0 ? -1 : 0;
    for (i = 0; i < r.nnodes; i++) free(r.nodes[i]), free(r.leaves[i]);
    free(r.nodes);
    free(r.leaves);
    free(r.tags);
    map_free(&r.protos);
    map_free(&r.cfuncs);
    map_free(&r.traces);
    map_free(&r.sites);
    return rc;
  }
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
  map_free(&r.sites);
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
  free(st->snap);
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
