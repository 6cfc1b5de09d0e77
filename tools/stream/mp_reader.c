/*
** Streaming reader for memprof streams: section headers, symbol table
** entries and events, with every field checked against FORMAT.md.
**
** An event is decoded from the buffer in one go; when the buffer ends
** inside it, more input is read and the event is decoded again from its
** first byte. That keeps the decoder free of resumable state and costs a
** few bytes of re-decoding once per buffer refill.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lj_memprof_format.h"
#include "mp_reader.h"
#include "mp_fast.h"
#include "mp_uleb.h"

struct mp_fast_consts mp_fast_k = {
  0x0080808080808080ull, 0x0000808080808080ull, 0x00ffffffffffffffull,
  1ull << 48
};

#define READ_CHUNK ((size_t)1 << 18)	/* Bytes asked for per read(2). */

/* Values no real process can produce. */
#define SIZE_LIMIT ((uint64_t)1 << 48)
#define LINE_LIMIT ((uint64_t)UINT32_MAX)
/* Node ids and fast function numbers the profile can hold (32 bits). */
#define NODE_LIMIT ((uint64_t)UINT32_MAX - 1)
#define FFID_LIMIT ((uint64_t)UINT16_MAX)

enum reader_state {
  ST_SYMTAB_HDR,	/* Expecting "ljs" + version. */
  ST_SYMTAB,		/* Symbol table entries. */
  ST_EVENTS_HDR,	/* Expecting "ljm" + version. */
  ST_EVENTS,		/* Events up to the epilogue. */
  ST_END,		/* Epilogue seen and nothing after it. */
  ST_FAILED		/* An error or a truncation was reported. */
};

struct mp_reader {
  int fd;		/* -1 for a memory reader. */
  int eof;		/* No more input beyond buf[len]. */
  int follow;		/* The file grows: its end is MP_AGAIN. */
  int64_t size;		/* Total input size, or -1 when unknown. */
  uint8_t *buf;
  size_t cap;		/* Allocated size of buf (fd readers). */
  size_t pos;		/* Next byte to decode. */
  size_t len;		/* End of the valid bytes. */
  size_t need;		/* Bytes from pos the current item needs. */
  uint64_t base;	/* Input offset of buf[0]. */
  enum reader_state state;
  enum mp_status final;	/* What to return once in ST_FAILED. */
  /* The symbol table header's extension id, 0 for version 3; the event
  ** header must say the same. */
  unsigned ext;
  uint64_t nodes;	/* Stack nodes announced: ids 1 .. nodes. */
  char err[256];
  uint64_t err_off;
};

/* Result of decoding one item from the buffer. */
enum decode_result { D_OK, D_SHORT, D_ERROR, D_END };

struct mp_reader *mp_reader_new_fd(int fd, int64_t size)
{
  struct mp_reader *r = calloc(1, sizeof(*r));
  if (!r)
    return NULL;
  r->fd = fd;
  r->size = size;
  r->cap = READ_CHUNK * 4;
  r->buf = malloc(r->cap);
  if (!r->buf) {
    free(r);
    return NULL;
  }
  return r;
}

struct mp_reader *mp_reader_new_mem(const void *data, size_t len)
{
  struct mp_reader *r = calloc(1, sizeof(*r));
  if (!r)
    return NULL;
  r->fd = -1;
  r->eof = 1;
  r->size = (int64_t)len;
  r->buf = (uint8_t *)data;
  r->len = len;
  return r;
}

void mp_reader_follow(struct mp_reader *r)
{
  if (r->fd >= 0)
    r->follow = 1;
}

void mp_reader_free(struct mp_reader *r)
{
  if (!r)
    return;
  if (r->fd >= 0)
    free(r->buf);
  free(r);
}

const char *mp_reader_error(const struct mp_reader *r)
{
  return r->err;
}

uint64_t mp_reader_error_offset(const struct mp_reader *r)
{
  return r->err_off;
}

unsigned mp_reader_extension(const struct mp_reader *r)
{
  return r->ext;
}

uint64_t mp_reader_nodes(const struct mp_reader *r)
{
  return r->nodes;
}

uint64_t mp_reader_offset(const struct mp_reader *r)
{
  return r->base + r->pos;
}

const uint8_t *mp_reader_window(const struct mp_reader *r,
				const uint8_t **end)
{
  if (r->state != ST_EVENTS)
    return NULL;
  *end = r->buf + r->len;
  return r->buf + r->pos;
}

void mp_reader_consume(struct mp_reader *r, const uint8_t *p)
{
  r->pos = (size_t)(p - r->buf);
  r->need = 0;
}

static enum decode_result fail_at(struct mp_reader *r, const uint8_t *at,
				  const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->err, sizeof(r->err), fmt, ap);
  va_end(ap);
  r->err_off = r->base + (uint64_t)(at - r->buf);
  return D_ERROR;
}

/*
** Make more input available after buf[len]. Keeps the bytes from pos on,
** grows the buffer only when it is full of unconsumed data (a long
** string), so the allocation follows the data actually read.
** Returns 0, or -1 on a read error (message set).
*/
static int refill(struct mp_reader *r)
{
  ssize_t got;

  if (r->fd < 0 || r->eof) {
    r->eof = 1;
    return 0;
  }
  if (r->pos > 0) {
    memmove(r->buf, r->buf + r->pos, r->len - r->pos);
    r->base += r->pos;
    r->len -= r->pos;
    r->pos = 0;
  }
  if (r->len == r->cap) {
    size_t ncap = r->cap * 2;
    uint8_t *nbuf = realloc(r->buf, ncap);
    if (!nbuf) {
      snprintf(r->err, sizeof(r->err), "out of memory");
      r->err_off = r->base + r->len;
      return -1;
    }
    r->buf = nbuf;
    r->cap = ncap;
  }
  do {
    size_t want = r->cap - r->len;
    if (want > READ_CHUNK * 4)
      want = READ_CHUNK * 4;
    got = read(r->fd, r->buf + r->len, want);
  } while (got < 0 && errno == EINTR);
  if (got < 0) {
    snprintf(r->err, sizeof(r->err), "read error: %s", strerror(errno));
    r->err_off = r->base + r->len;
    return -1;
  }
  if (got == 0)
    r->eof = 1;
  r->len += (size_t)got;
  return 0;
}

/* -- Field decoding ------------------------------------------------------ */

/* Decode a ULEB128 field into v, or return from the caller. */
#define GET_ULEB(r, p, end, v, what) do { \
    enum mp_uleb_status st_ = mp_uleb_read(&(p), (end), &(v)); \
    if (st_ != MP_ULEB_OK) \
      return uleb_failure((r), (p), st_, (what)); \
  } while (0)

static enum decode_result uleb_failure(struct mp_reader *r, const uint8_t *p,
				       enum mp_uleb_status st,
				       const char *what)
{
  if (st == MP_ULEB_SHORT)
    return D_SHORT;
  if (st == MP_ULEB_TOOLONG)
    return fail_at(r, p, "%s: ULEB128 longer than %d bytes", what,
		   LJM_FMT_ULEB128_MAX);
  return fail_at(r, p, "%s: ULEB128 value does not fit 64 bits", what);
}

/* Check a decoded value against a bound; field_at is its first byte. */
#define CHECK_LIMIT(r, at, v, limit, what) do { \
    if ((v) > (limit)) \
      return fail_at((r), (at), "impossible %s %llu", (what), \
		     (unsigned long long)(v)); \
  } while (0)

static enum decode_result get_string(struct mp_reader *r, const uint8_t **pp,
				     const uint8_t *end, const uint8_t *item,
				     struct mp_event *ev)
{
  const uint8_t *p = *pp;
  const uint8_t *at = p;
  uint64_t n;
  uint64_t after;

  GET_ULEB(r, p, end, n, "string length");
  if (n > MP_STRING_MAX)
    return fail_at(r, at, "string length %llu exceeds the limit of %llu",
		   (unsigned long long)n, (unsigned long long)MP_STRING_MAX);
  after = r->base + (uint64_t)(p - r->buf) + n;
  /* A stream cut inside a name is truncated; a long string that cannot
  ** fit is garbage. Either way nothing is allocated before data arrives. */
  if (r->size >= 0 && after > (uint64_t)r->size && n > MP_STRING_CUT_MAX)
    return fail_at(r, at, "string length %llu runs past the end of the input",
		   (unsigned long long)n);
  if ((uint64_t)(end - p) < n) {
    r->need = (size_t)(p - item) + (size_t)n;
    return D_SHORT;
  }
  ev->name = (const char *)p;
  ev->name_len = (size_t)n;
  *pp = p + n;
  return D_OK;
}

/* Symbol body shared by the symbol table section and symbol events. */
static enum decode_result get_symbol(struct mp_reader *r, const uint8_t **pp,
				     const uint8_t *end, const uint8_t *item,
				     unsigned kind, struct mp_event *ev)
{
  const uint8_t *p = *pp;
  const uint8_t *at;
  enum decode_result d;

  ev->name = NULL;
  ev->name_len = 0;
  ev->sym_proto = 0;
  ev->sym_line = 0;
  ev->type = (enum mp_event_type)(MP_EV_SYM | kind);
  switch (kind) {
  case LJM_SYMTAB_LFUNC:
    GET_ULEB(r, p, end, ev->sym_addr, "prototype address");
    if ((d = get_string(r, &p, end, item, ev)) != D_OK)
      return d;
    at = p;
    GET_ULEB(r, p, end, ev->sym_line, "prototype first line");
    /* A built-in's first line, -1, sign-extended to 64 bits as the
    ** reference writer does; -1 in 32 bits is MP_LINE_BUILTIN already. */
    if (ev->sym_line == UINT64_MAX)
      ev->sym_line = MP_LINE_BUILTIN;
    CHECK_LIMIT(r, at, ev->sym_line, LINE_LIMIT, "line number");
    break;
  case LJM_SYMTAB_CFUNC:
    GET_ULEB(r, p, end, ev->sym_addr, "C symbol address");
    if ((d = get_string(r, &p, end, item, ev)) != D_OK)
      return d;
    break;
  case LJM_SYMTAB_TRACE:
    at = p;
    GET_ULEB(r, p, end, ev->sym_addr, "trace number");
    CHECK_LIMIT(r, at, ev->sym_addr, LINE_LIMIT, "trace number");
    GET_ULEB(r, p, end, ev->sym_proto, "trace prototype address");
    at = p;
    GET_ULEB(r, p, end, ev->sym_line, "trace start line");
    CHECK_LIMIT(r, at, ev->sym_line, LINE_LIMIT, "line number");
    break;
  default:
    return fail_at(r, item, "unknown symbol kind %u", kind);
  }
  *pp = p;
  return D_OK;
}

/* -- The profile extension's symbol events ------------------------------- */

/*
** A stack node. Its id is the count of nodes so far plus one, and its
** parent must be an id already announced: so a parent is always older
** than its child and no chain of parents can loop (a cycle would need a
** node whose parent is younger than itself, which this refuses).
*/
static enum decode_result get_node(struct mp_reader *r, const uint8_t **pp,
				   const uint8_t *end, const uint8_t *item,
				   struct mp_event *ev)
{
  const uint8_t *p = *pp;
  const uint8_t *at = p;
  enum decode_result d;

  ev->type = MP_EV_SYM_NODE;
  ev->node = r->nodes + 1;
  if (ev->node > NODE_LIMIT)
    return fail_at(r, item, "more than %llu stack nodes",
		   (unsigned long long)NODE_LIMIT);
  GET_ULEB(r, p, end, ev->node_parent, "parent node");
  if (ev->node_parent >= ev->node)
    return fail_at(r, at, "stack node %llu: parent id %llu out of range "
		   "(announced: 0 to %llu)", (unsigned long long)ev->node,
		   (unsigned long long)ev->node_parent,
		   (unsigned long long)r->nodes);
  if (p >= end)
    return D_SHORT;
  at = p;
  ev->frame = *p++;
  ev->frame_a = ev->frame_b = 0;
  ev->name = NULL;
  ev->name_len = 0;
  switch (ev->frame) {
  case LJM_FRAME_LUA:
    GET_ULEB(r, p, end, ev->frame_a, "frame prototype address");
    at = p;
    GET_ULEB(r, p, end, ev->frame_b, "frame line");
    CHECK_LIMIT(r, at, ev->frame_b, LINE_LIMIT, "line number");
    if ((d = get_string(r, &p, end, item, ev)) != D_OK)
      return d;
    break;
  case LJM_FRAME_FAST:
    at = p;
    GET_ULEB(r, p, end, ev->frame_a, "fast function number");
    CHECK_LIMIT(r, at, ev->frame_a, FFID_LIMIT, "fast function number");
    if ((d = get_string(r, &p, end, item, ev)) != D_OK)
      return d;
    break;
  case LJM_FRAME_C:
    GET_ULEB(r, p, end, ev->frame_a, "frame C function address");
    break;
  case LJM_FRAME_TRACE:
    at = p;
    GET_ULEB(r, p, end, ev->frame_a, "frame trace number");
    CHECK_LIMIT(r, at, ev->frame_a, LINE_LIMIT, "trace number");
    at = p;
    GET_ULEB(r, p, end, ev->frame_b, "frame trace site");
    CHECK_LIMIT(r, at, ev->frame_b, LINE_LIMIT, "trace site");
    break;
  case LJM_FRAME_CUT:
    break;
  default:
    return fail_at(r, at, "stack node %llu: unknown frame tag %u",
		   (unsigned long long)ev->node, ev->frame);
  }
  r->nodes = ev->node;
  *pp = p;
  return D_OK;
}

static enum decode_result get_info(struct mp_reader *r, const uint8_t **pp,
				   const uint8_t *end, struct mp_event *ev)
{
  const uint8_t *p = *pp;

  ev->type = MP_EV_SYM_INFO;
  GET_ULEB(r, p, end, ev->info_key, "information key");
  GET_ULEB(r, p, end, ev->info_value, "information value");
  *pp = p;
  return D_OK;
}

/* A trace call site: read and checked; its pairs are left encoded for the
** consumer (mp_stacks.c decodes them again). */
static enum decode_result get_site(struct mp_reader *r, const uint8_t **pp,
				   const uint8_t *end, struct mp_event *ev)
{
  const uint8_t *p = *pp;
  const uint8_t *at = p;
  uint64_t i, v;

  ev->type = MP_EV_SYM_SITE;
  GET_ULEB(r, p, end, ev->sym_addr, "site trace number");
  CHECK_LIMIT(r, at, ev->sym_addr, LINE_LIMIT, "trace number");
  at = p;
  GET_ULEB(r, p, end, ev->site, "site number");
  CHECK_LIMIT(r, at, ev->site, LINE_LIMIT, "trace site");
  at = p;
  GET_ULEB(r, p, end, ev->site_lines, "site line count");
  CHECK_LIMIT(r, at, ev->site_lines, (uint64_t)LJM_STACK_DEPTH_MAX,
	      "site line count");
  ev->site_pairs = p;
  for (i = 0; i < ev->site_lines; i++) {
    GET_ULEB(r, p, end, v, "site prototype address");
    at = p;
    GET_ULEB(r, p, end, v, "site line");
    CHECK_LIMIT(r, at, v, LINE_LIMIT, "line number");
  }
  ev->site_pairs_len = (size_t)(p - ev->site_pairs);
  *pp = p;
  return D_OK;
}

/* A record of the heap graph: its tag and fields (doc/format.md). */
static enum decode_result get_graph(struct mp_reader *r, const uint8_t **pp,
				    const uint8_t *end, const uint8_t *item,
				    struct mp_event *ev)
{
  const uint8_t *p = *pp;
  const uint8_t *at = p;
  uint64_t tag;

  ev->type = MP_EV_SYM_GRAPH;
  ev->graph_num = ev->graph_to = ev->graph_aux = 0;
  ev->name = NULL;
  ev->name_len = 0;
  GET_ULEB(r, p, end, tag, "graph record");
  if (tag == 0 || tag >= LJM_GRAPH__MAX)
    return fail_at(r, at, "unknown graph record %llu",
		   (unsigned long long)tag);
  ev->graph_tag = (unsigned)tag;
  switch (tag) {
  case LJM_GRAPH_OBJ:
    GET_ULEB(r, p, end, ev->graph_to, "graph object");
    GET_ULEB(r, p, end, ev->graph_num, "graph object flags");
    break;
  case LJM_GRAPH_FIELD:
    GET_ULEB(r, p, end, ev->graph_aux, "graph field key");
    GET_ULEB(r, p, end, ev->graph_to, "graph reference");
    break;
  case LJM_GRAPH_INDEX: case LJM_GRAPH_UPVAL: case LJM_GRAPH_SLOT:
  case LJM_GRAPH_ROOT:
    GET_ULEB(r, p, end, ev->graph_num, "graph index");
    GET_ULEB(r, p, end, ev->graph_to, "graph reference");
    if (tag == LJM_GRAPH_SLOT)
      GET_ULEB(r, p, end, ev->graph_aux, "graph slot's prototype");
    break;
  default:
    GET_ULEB(r, p, end, ev->graph_to, "graph reference");
    break;
  }
  if (tag == LJM_GRAPH_FIELD || tag == LJM_GRAPH_UPVAL ||
      tag == LJM_GRAPH_SLOT || tag == LJM_GRAPH_ROOT) {
    enum decode_result d = get_string(r, &p, end, item, ev);
    if (d != D_OK)
      return d;
  }
  *pp = p;
  return D_OK;
}

/* -- Section headers ----------------------------------------------------- */

static enum decode_result get_section_header(struct mp_reader *r,
					     const uint8_t **pp,
					     const uint8_t *end,
					     const char magic[3],
					     const char *section, int events)
{
  const uint8_t *p = *pp;
  size_t avail = (size_t)(end - p);
  size_t i;

  for (i = 0; i < 3 && i < avail; i++)
    if (p[i] != (uint8_t)magic[i]) {
      if (r->base + (uint64_t)(p - r->buf) == 0)
	return fail_at(r, p + i, "not a memprof stream (bad magic)");
      return fail_at(r, p + i, "bad magic of the %s section", section);
    }
  if (avail < LJM_FMT_HDRLEN) {
    r->need = LJM_FMT_HDRLEN;
    return D_SHORT;
  }
  if (p[3] == LJM_FMT_VERSION_EXT) {
    int known = 0;
#define MP_EXT_KNOWN(name, id, ver) \
    if (p[4] == (id) && p[5] == (ver)) known = 1;
    LJM_FMT_EXTENSIONS(MP_EXT_KNOWN)
#undef MP_EXT_KNOWN
    if (!known)
      return fail_at(r, p + 4, "unsupported %s version: extension %u "
		     "version %u, which this reader does not know", section,
		     p[4], p[5]);
    if (p[6] != 0)
      return fail_at(r, p + 6, "reserved byte of the %s header is not zero",
		     section);
    if (events && r->ext != p[4])
      return fail_at(r, p + 3, "the event section has extension %u, the "
		     "symbol table version %d", p[4], LJM_FMT_VERSION);
    r->ext = p[4];
    *pp = p + LJM_FMT_HDRLEN;
    return D_OK;
  }
  if (p[3] != LJM_FMT_VERSION)
    return fail_at(r, p + 3,
		   "unsupported %s version %u (this reader knows version %d)",
		   section, p[3], LJM_FMT_VERSION);
  for (i = 4; i < LJM_FMT_HDRLEN; i++)
    if (p[i] != 0)
      return fail_at(r, p + i, "reserved byte of the %s header is not zero",
		     section);
  if (events && r->ext)
    return fail_at(r, p + 3, "the event section has version %d, the symbol "
		   "table extension %u", LJM_FMT_VERSION, r->ext);
  *pp = p + LJM_FMT_HDRLEN;
  return D_OK;
}

/* -- Items --------------------------------------------------------------- */

static enum decode_result get_symtab_entry(struct mp_reader *r,
					   const uint8_t **pp,
					   const uint8_t *end,
					   struct mp_event *ev)
{
  const uint8_t *p = *pp;
  const uint8_t *item = p;
  unsigned h;
  enum decode_result d;

  if (p >= end)
    return D_SHORT;
  h = *p++;
  if (h & LJM_SYMTAB_FINAL) {
    *pp = p;
    return D_END;
  }
  if (h & ~(unsigned)LJM_SYMTAB_KIND_MASK)
    return fail_at(r, item, "invalid symbol table entry header 0x%02x", h);
  if ((d = get_symbol(r, &p, end, item, h & LJM_SYMTAB_KIND_MASK, ev)) != D_OK)
    return d;
  ev->in_symtab = 1;
  ev->offset = r->base + (uint64_t)(item - r->buf);
  *pp = p;
  return D_OK;
}

static enum decode_result get_event(struct mp_reader *r, const uint8_t **pp,
				    const uint8_t *end, struct mp_event *ev)
{
  const uint8_t *p = *pp;
  const uint8_t *item = p;
  const uint8_t *at;
  unsigned h, kind, src;

  if (p >= end)
    return D_SHORT;
  h = *p++;
  if (h & LJM_EV_EPILOGUE) {
    if (h != LJM_EV_EPILOGUE)
      return fail_at(r, item, "invalid event header 0x%02x", h);
    *pp = p;
    return D_END;
  }
  kind = h & LJM_EV_MASK;
  src = h & LJM_SRC_MASK;
  /* The profile extension gives bit 5 to ALLOC and REALLOC; bit 6 stays
  ** unused in every stream. */
  if ((h & LJM_EV_UNUSED_MASK) &&
      (!r->ext || (h & LJM_EV_UNUSED_MASK) != LJM_EV_KIND ||
       (kind != LJM_EV_ALLOC && kind != LJM_EV_REALLOC)))
    return fail_at(r, item, "invalid event header 0x%02x (unused bits set)", h);
  ev->offset = r->base + (uint64_t)(item - r->buf);
  ev->in_symtab = 0;
  ev->objkind = -1;
  if (kind == LJM_EV_SYMTAB && r->ext &&
      (src == LJM_SRC_NODE || src == LJM_SRC_INFO || src == LJM_SRC_SITE)) {
    enum decode_result d = src == LJM_SRC_NODE ? get_node(r, &p, end, item, ev)
			   : src == LJM_SRC_INFO ? get_info(r, &p, end, ev)
			   : get_site(r, &p, end, ev);
    if (d == D_OK)
      *pp = p;
    return d;
  }
  if (kind == LJM_EV_SYMTAB && r->ext && src == LJM_SRC_GRAPH) {
    enum decode_result d = get_graph(r, &p, end, item, ev);
    if (d == D_OK)
      *pp = p;
    return d;
  }
  if (kind == LJM_EV_SYMTAB) {
    int sym = -1;
    enum decode_result d;
    /* The kind of symbol is the one its source names. */
#define MP_SRC_SYM(name, s, k, what) if (src == (s)) sym = (k);
    LJM_FMT_SOURCES(MP_SRC_SYM)
#undef MP_SRC_SYM
    if (sym < 0)
      return fail_at(r, item, "invalid symbol event header 0x%02x", h);
    if ((d = get_symbol(r, &p, end, item, (unsigned)sym, ev)) != D_OK)
      return d;
    *pp = p;
    return D_OK;
  }

  ev->type = (enum mp_event_type)kind;
  ev->src = src;
  ev->loc = 0;
  ev->loc_line = 0;
  switch (src) {
  case LJM_SRC_INTERNAL:
    break;
  case LJM_SRC_LFUNC:
    GET_ULEB(r, p, end, ev->loc, "prototype address");
    at = p;
    GET_ULEB(r, p, end, ev->loc_line, "line");
    CHECK_LIMIT(r, at, ev->loc_line, LINE_LIMIT, "line number");
    break;
  case LJM_SRC_CFUNC:
    GET_ULEB(r, p, end, ev->loc, "C function address");
    break;
  case LJM_SRC_TRACE:
    at = p;
    GET_ULEB(r, p, end, ev->loc, "trace number");
    CHECK_LIMIT(r, at, ev->loc, LINE_LIMIT, "trace number");
    break;
  case LJM_SRC_STACK:
    if (!r->ext)
      return fail_at(r, item, "stack location (header 0x%02x) in a version %d "
		     "stream, which has no stacks", h, LJM_FMT_VERSION);
    at = p;
    GET_ULEB(r, p, end, ev->loc, "stack node");
    if (ev->loc == 0 || ev->loc > r->nodes)
      return fail_at(r, at, "stack node %llu used before it was announced "
		     "(announced: 1 to %llu)", (unsigned long long)ev->loc,
		     (unsigned long long)r->nodes);
    break;
  default:
    return fail_at(r, item, "invalid event source in header 0x%02x", h);
  }
  if (kind != LJM_EV_ALLOC) {
    GET_ULEB(r, p, end, ev->old_addr, "old address");
    at = p;
    GET_ULEB(r, p, end, ev->old_size, "old size");
    CHECK_LIMIT(r, at, ev->old_size, SIZE_LIMIT, "size");
  } else {
    ev->old_addr = 0;
    ev->old_size = 0;
  }
  if (kind != LJM_EV_FREE) {
    GET_ULEB(r, p, end, ev->new_addr, "new address");
    at = p;
    GET_ULEB(r, p, end, ev->new_size, "new size");
    CHECK_LIMIT(r, at, ev->new_size, SIZE_LIMIT, "size");
  } else {
    ev->new_addr = 0;
    ev->new_size = 0;
  }
  if (h & LJM_EV_KIND) {
    if (p >= end)
      return D_SHORT;
    ev->objkind = *p++;
  }
  *pp = p;
  return D_OK;
}

/* -- Driver -------------------------------------------------------------- */

static enum mp_status stop(struct mp_reader *r, enum mp_status st)
{
  r->state = ST_FAILED;
  r->final = st;
  return st;
}

enum mp_status mp_reader_next(struct mp_reader *r, struct mp_event *ev)
{
  if (r->state == ST_EVENTS) {
    /* The common case: a whole event in the buffer. Anything else
    ** (an error, the end, a short buffer) is decoded again below. */
    const uint8_t *p = r->buf + r->pos;
    if (get_event(r, &p, r->buf + r->len, ev) == D_OK) {
      r->need = 0;
      r->pos = (size_t)(p - r->buf);
      return MP_OK;
    }
  }
  for (;;) {
    const uint8_t *start = r->buf + r->pos;
    const uint8_t *p = start;
    const uint8_t *end = r->buf + r->len;
    enum decode_result d;

    r->need = 0;
    switch (r->state) {
    case ST_SYMTAB_HDR: {
      static const char magic[3] = {LJM_SYMTAB_M0, LJM_SYMTAB_M1, LJM_SYMTAB_M2};
      if (r->len == 0 && r->eof && r->base == 0 && r->follow) {
	r->eof = 0;	/* Nothing written yet. */
	return MP_AGAIN;
      }
      if (r->len == 0 && r->eof && r->base == 0) {
	snprintf(r->err, sizeof(r->err), "empty input, not a memprof stream");
	r->err_off = 0;
	return stop(r, MP_ERROR);
      }
      d = get_section_header(r, &p, end, magic, "symbol table", 0);
      if (d == D_OK) {
	r->pos = (size_t)(p - r->buf);
	r->state = ST_SYMTAB;
	continue;
      }
      break;
    }
    case ST_SYMTAB:
      d = get_symtab_entry(r, &p, end, ev);
      if (d == D_END) {
	r->pos = (size_t)(p - r->buf);
	r->state = ST_EVENTS_HDR;
	continue;
      }
      break;
    case ST_EVENTS_HDR: {
      static const char magic[3] = {LJM_EVENTS_M0, LJM_EVENTS_M1, LJM_EVENTS_M2};
      d = get_section_header(r, &p, end, magic, "event", 1);
      if (d == D_OK) {
	r->pos = (size_t)(p - r->buf);
	r->state = ST_EVENTS;
	continue;
      }
      break;
    }
    case ST_EVENTS:
      d = get_event(r, &p, end, ev);
      if (d == D_END) {
	r->pos = (size_t)(p - r->buf);
	/* Anything after the epilogue means this is not what we think. */
	while (r->pos == r->len && !r->eof)
	  if (refill(r) < 0)
	    return stop(r, MP_ERROR);
	if (r->pos < r->len) {
	  fail_at(r, r->buf + r->pos, "unexpected data after the epilogue");
	  return stop(r, MP_ERROR);
	}
	r->state = ST_END;
	return MP_END;
      }
      break;
    case ST_END:
      return MP_END;
    default:
      return r->final;
    }

    if (d == D_OK) {
      r->pos = (size_t)(p - r->buf);
      return MP_OK;
    }
    if (d == D_ERROR)
      return stop(r, MP_ERROR);
    /* D_SHORT: the item continues past the buffered bytes. */
    if (r->eof && r->follow) {
      r->eof = 0;	/* Read again at the next call. */
      return MP_AGAIN;
    }
    if (r->eof)
      return stop(r, MP_TRUNCATED);
    if (refill(r) < 0)
      return stop(r, MP_ERROR);
    (void)start;
  }
}
