/*
** Streaming reader for memprof streams (doc/format.md): turns bytes into
** events, one at a time, checking every field. It keeps one input buffer
** whose size depends on the longest string seen, never on the file size.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef MP_READER_H
#define MP_READER_H

#include <stddef.h>
#include <stdint.h>

#include "lj_memprof_format.h"

/* What mp_reader_next delivered. A symbol is MP_EV_SYM | its
** LJM_SYMTAB_* kind, so that telling symbols from memory events is one
** bit and never depends on the order of the values. */
#define MP_EV_SYM 0x10
enum mp_event_type {
  MP_EV_ALLOC = LJM_EV_ALLOC,	/* Same values as the stream's EE bits. */
  MP_EV_FREE = LJM_EV_FREE,
  MP_EV_REALLOC = LJM_EV_REALLOC,
  /* A prototype: addr, name = chunk, line = linedefined. */
  MP_EV_SYM_LFUNC = MP_EV_SYM | LJM_SYMTAB_LFUNC,
  /* A C symbol: addr, name. */
  MP_EV_SYM_CFUNC = MP_EV_SYM | LJM_SYMTAB_CFUNC,
  /* A trace: addr = trace number, proto, line. */
  MP_EV_SYM_TRACE = MP_EV_SYM | LJM_SYMTAB_TRACE,
  /* The profile extension's symbol events (MP_EV_SYM | MP_EV_EXT | n):
  ** a stack node (node, node_parent, frame, frame_a, frame_b, name), */
  MP_EV_SYM_NODE = MP_EV_SYM | 0x20 | 0,
  /* an information record (info_key, info_value), */
  MP_EV_SYM_INFO = MP_EV_SYM | 0x20 | 1,
  /* a trace call site (sym_addr = trace number, site, site_lines: the
  ** count of its pairs, checked, encoded at site_pairs). */
  MP_EV_SYM_SITE = MP_EV_SYM | 0x20 | 2,
  /* a record of the heap graph (graph_tag, graph_num, graph_to,
  ** graph_aux, name: the fields its LJM_GRAPH_* tag has, 0 or "" for the
  ** others). */
  MP_EV_SYM_GRAPH = MP_EV_SYM | 0x20 | 3
};
#define MP_EV_EXT 0x20

static inline int mp_event_is_symbol(enum mp_event_type t)
{
  return (t & MP_EV_SYM) != 0;
}

/* A symbol event of the profile extension, not a version-3 symbol. */
static inline int mp_event_is_ext(enum mp_event_type t)
{
  return (t & MP_EV_EXT) != 0;
}

/* The LJM_SYMTAB_* kind of a symbol event. */
static inline unsigned mp_event_symbol_kind(enum mp_event_type t)
{
  return (unsigned)t & LJM_SYMTAB_KIND_MASK;
}

/* The LJM_SRC_* whose locations a symbol kind names, or 0. */
static inline unsigned mp_symbol_source(unsigned kind)
{
#define MP_SYM_SRC(name, src, sym, what) \
  if ((int)kind == (sym)) return (src);
  LJM_FMT_SOURCES(MP_SYM_SRC)
#undef MP_SYM_SRC
  return 0;
}

/*
** linedefined of a built-in function that LuaJIT implements in bytecode
** (table.remove, math.deg...): LuaJIT sets its first line to -1, which
** writers put in the stream as the ULEB128 of -1 in 64 bits (the
** reference writer) or in 32 bits. Either way the reader delivers this.
*/
#define MP_LINE_BUILTIN ((uint64_t)UINT32_MAX)

struct mp_event {
  enum mp_event_type type;
  unsigned src;		/* LJM_SRC_* of a memory event. */
  uint64_t loc;		/* Proto address, C function address, trace, or
			** for LJM_SRC_STACK the node id (announced). */
  uint64_t loc_line;	/* Current line for LJM_SRC_LFUNC. */
  uint64_t old_addr, old_size;	/* Free and realloc. */
  uint64_t new_addr, new_size;	/* Alloc and realloc. */
  /* Symbols. */
  uint64_t sym_addr;	/* Proto/C symbol address or trace number. */
  uint64_t sym_proto;	/* Trace: proto where it starts. */
  uint64_t sym_line;	/* Proto: linedefined (or MP_LINE_BUILTIN);
			** trace: start line. */
  const char *name;	/* Not terminated; valid until the next call. */
  size_t name_len;
  int objkind;		/* The objkind byte of the KIND bit, or -1. */
  /* A stack node: its id (counted by the reader), its parent's (0: the
  ** root, else below node), its frame's LJM_FRAME_* tag and fields: LUA
  ** a = proto, b = line, name; FAST a = ffid, name; C a = function
  ** address; TRACE a = trace number, b = site; CUT none. */
  uint64_t node, node_parent;
  unsigned frame;
  uint64_t frame_a, frame_b;
  /* An information record (LJM_INFO_*, unknown keys too). */
  uint64_t info_key, info_value;
  uint64_t site, site_lines;	/* A trace call site, */
  const uint8_t *site_pairs;	/* its pairs (prototype, line) as ULEB128s,
				** valid until the next call, */
  size_t site_pairs_len;	/* in this many bytes. */
  unsigned graph_tag;		/* A graph record: LJM_GRAPH_*, */
  uint64_t graph_num, graph_to, graph_aux;  /* its fields. */
  int in_symtab;	/* From the leading symbol table section. */
  uint64_t offset;	/* Byte offset of the event in the input. */
};

enum mp_status {
  MP_OK = 0,		/* An event was delivered. */
  MP_END,		/* The epilogue: the stream is complete. */
  MP_TRUNCATED,		/* The input ended before the epilogue. */
  MP_ERROR,		/* Bad data or I/O error: see mp_reader_error. */
  MP_AGAIN		/* Following a file (mp_reader_follow): no whole
			** item more yet; call again when it has grown. */
};

/* Longest string accepted (chunk names can be whole source texts). */
#define MP_STRING_MAX ((uint64_t)64 << 20)
/*
** A string that runs past the end of a file is taken as a truncated
** stream when it is at most this long, and as garbage when longer.
*/
#define MP_STRING_CUT_MAX ((uint64_t)1 << 20)

struct mp_reader;

/* Read from fd (not closed by the reader); size is the file size or -1. */
struct mp_reader *mp_reader_new_fd(int fd, int64_t size);
/* Read from memory; the caller keeps data alive. */
struct mp_reader *mp_reader_new_mem(const void *data, size_t len);
void mp_reader_free(struct mp_reader *r);
/* An fd reader of a file still being written: where the bytes run out,
** mp_reader_next returns MP_AGAIN (nothing consumed) instead of
** MP_TRUNCATED, and reads on at the next call. */
void mp_reader_follow(struct mp_reader *r);

enum mp_status mp_reader_next(struct mp_reader *r, struct mp_event *ev);

/* After MP_ERROR: the message and the byte offset it is about. */
const char *mp_reader_error(const struct mp_reader *r);
uint64_t mp_reader_error_offset(const struct mp_reader *r);

/* The extension id the stream's headers name (LJM_EXT_PROFILE), or 0
** for a version-3 stream; known once the event section has begun. */
unsigned mp_reader_extension(const struct mp_reader *r);

/* Stack nodes announced so far (ids 1 .. this). */
uint64_t mp_reader_nodes(const struct mp_reader *r);

/* Bytes consumed so far (for progress lines). */
uint64_t mp_reader_offset(const struct mp_reader *r);

/*
** For a caller that decodes common events itself (mp_fast.h): the bytes
** of the event section buffered and not yet consumed, [start, *end), or
** NULL outside the event section. mp_reader_consume(r, p) then takes the
** bytes up to p, which must end an event in that window; any call of
** mp_reader_next may move the buffer.
*/
const uint8_t *mp_reader_window(const struct mp_reader *r,
				const uint8_t **end);
void mp_reader_consume(struct mp_reader *r, const uint8_t *p);

#endif
