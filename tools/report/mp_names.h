/*
** Display names of locations, as doc/format.md, "How ljmprof names a location" says, and the
** aliases that stand in for chunk names containing newlines.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef MP_NAMES_H
#define MP_NAMES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mp_profile.h"

/* A growable byte buffer. */
struct mp_buf {
  char *data;
  size_t len, cap;
  int oom;	/* An append failed; contents are cut short. */
};

void mp_buf_free(struct mp_buf *b);
void mp_buf_add_slow(struct mp_buf *b, const char *s, size_t n);

/* Append n bytes, keeping a NUL after them. Inline: reports append a
** few bytes at a time, millions of times. */
static inline void mp_buf_add(struct mp_buf *b, const char *s, size_t n)
{
  if (b->cap - b->len > n) {
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    return;
  }
  mp_buf_add_slow(b, s, n);
}

void mp_buf_str(struct mp_buf *b, const char *s);
void mp_buf_u64(struct mp_buf *b, uint64_t v);	/* Decimal. */
void mp_buf_colon_u64(struct mp_buf *b, uint64_t v);	/* ":" decimal. */
void mp_buf_hex(struct mp_buf *b, uint64_t v);	/* 0x, lower case. */
void mp_buf_printf(struct mp_buf *b, const char *fmt, ...)
  __attribute__((format(printf, 2, 3)));

/* Aliases: string id -> alias number (1-based), 0 when none is needed;
** and what each string needs to be printed, learnt at its first use. */
struct mp_aliases {
  uint32_t *of;		/* Indexed by string id; NULL when no aliases. */
  uint32_t nstrings;
  uint8_t *used;	/* Alias number -> printed in this report. */
  uint32_t count;
  uint8_t *plain;	/* String id -> how it may be printed, 0 not yet
			** seen; NULL (out of memory): always escaped. */
};

int mp_aliases_init(struct mp_aliases *a, const struct mp_strings *s);
void mp_aliases_free(struct mp_aliases *a);

/* Length of the valid UTF-8 sequence at s, or 0 when it is not valid. */
size_t mp_utf8_len(const unsigned char *s, size_t avail);

/* What mp_name_escape leaves or changes besides the controls. */
#define MP_ESC_KEEP_LINES 1u	/* Newlines and tabs as they are. */
#define MP_ESC_FRAME 2u		/* ';' as '_', trailing spaces escaped. */

/*
** Append text for a terminal: control characters (C0, DEL, C1) and bytes
** that are not UTF-8 as \xHH (two lower-case hex digits), the rest as it
** is. A name read from a stream can never move the cursor, clear the
** screen or retitle the window of whoever reads the report.
*/
void mp_name_escape(struct mp_buf *out, const char *s, size_t len,
		    unsigned how);

/* The NUL-terminated text s escaped so, in b (emptied first): a file
** name for a message or a header. "?" when out of memory. */
const char *mp_name_escaped(struct mp_buf *b, const char *s);

/* How to spell a chunk or symbol name. */
enum mp_name_style {
  MP_NAME_PLAIN,	/* The text as is (JSON escapes it later). */
  MP_NAME_ALIASED,	/* Newline-containing text replaced by CHUNK#n,
			** other text escaped (mp_name_escape). */
  MP_NAME_FRAME		/* Aliased and escaped as a folded frame. */
};

/* Append a string (chunk or symbol name) in the given style. */
void mp_name_string(struct mp_buf *out, const struct mp_profile *p,
		    struct mp_aliases *al, uint32_t id,
		    enum mp_name_style style);

/* Append the name of a location (doc/format.md, "How ljmprof names a location", grouped). */
void mp_name_location(struct mp_buf *out, const struct mp_profile *p,
		      struct mp_aliases *al, const struct mp_loc *l,
		      enum mp_name_style style);

/*
** Append the name of a stack frame (mp_profile_frame): a Lua frame as
** its location, then " (name)" when the stream named the function; a
** built-in by its name; a C function or a version-3 location as its
** location; a trace "TRACE [n]"; a cut "[cut]", or MP_CUT_FULL_NAME
** where a full node table cut the frames above a leaf.
*/
#define MP_CUT_FULL_NAME	"(stack cut: node table full)"
void mp_name_frame(struct mp_buf *out, const struct mp_profile *p,
		   struct mp_aliases *al, const struct mp_frame *f,
		   enum mp_name_style style);

/*
** A frame's parts, for formats that name functions, files and lines
** apart (pprof): function is the function's name where the stream has
** one (a Lua frame's name, a built-in's, a C symbol), else NULL; file
** the chunk name of Lua code (NULL for others); line its line (0: none).
** The strings are the profile's, not terminated.
*/
struct mp_frame_parts {
  const char *function;
  size_t function_len;
  const char *file;
  size_t file_len;
  uint64_t line;
};
void mp_frame_parts(const struct mp_profile *p, const struct mp_frame *f,
		    struct mp_frame_parts *out);

/* Append "1234B" or, human-readable, "1.2KiB". */
void mp_name_bytes(struct mp_buf *out, uint64_t bytes, int human);

/* mp_kind_names.c: the short name of an object kind that
** lj_memprof_format.h lists, NULL for another number, which mp_name_kind
** writes as "kind N" (the START locations are named with it too). */
const char *mp_kind_name(unsigned kind);
void mp_name_kind(struct mp_buf *out, unsigned kind);

#endif
