/*
** Location names and aliases; see mp_names.h.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_names.h"

/* -- Buffer -------------------------------------------------------------- */

void mp_buf_free(struct mp_buf *b)
{
  free(b->data);
  memset(b, 0, sizeof(*b));
}

static int reserve(struct mp_buf *b, size_t n)
{
  size_t ncap;
  char *nd;
  if (b->oom)
    return -1;
  if (b->cap - b->len > n)
    return 0;
  ncap = b->cap ? b->cap : 256;
  while (ncap - b->len <= n)
    ncap *= 2;
  nd = realloc(b->data, ncap);
  if (!nd) {
    b->oom = 1;
    return -1;
  }
  b->data = nd;
  b->cap = ncap;
  return 0;
}

void mp_buf_add_slow(struct mp_buf *b, const char *s, size_t n)
{
  if (reserve(b, n) < 0)
    return;
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void mp_buf_str(struct mp_buf *b, const char *s)
{
  mp_buf_add(b, s, strlen(s));
}

void mp_buf_u64(struct mp_buf *b, uint64_t v)
{
  char tmp[20];
  size_t n = 0;
  do {
    tmp[sizeof(tmp) - ++n] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  mp_buf_add(b, tmp + sizeof(tmp) - n, n);
}

void mp_buf_colon_u64(struct mp_buf *b, uint64_t v)
{
  mp_buf_add(b, ":", 1);
  mp_buf_u64(b, v);
}

void mp_buf_hex(struct mp_buf *b, uint64_t v)
{
  static const char digits[] = "0123456789abcdef";
  char tmp[18];
  size_t n = 0;
  do {
    tmp[sizeof(tmp) - ++n] = digits[v & 15];
    v >>= 4;
  } while (v);
  tmp[sizeof(tmp) - ++n] = 'x';
  tmp[sizeof(tmp) - ++n] = '0';
  mp_buf_add(b, tmp + sizeof(tmp) - n, n);
}

void mp_buf_printf(struct mp_buf *b, const char *fmt, ...)
{
  char small[128];
  va_list ap;
  int n;

  va_start(ap, fmt);
  n = vsnprintf(small, sizeof(small), fmt, ap);
  va_end(ap);
  if (n < 0)
    return;
  if ((size_t)n < sizeof(small)) {
    mp_buf_add(b, small, (size_t)n);
    return;
  }
  if (reserve(b, (size_t)n) < 0)
    return;
  va_start(ap, fmt);
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

/* -- Aliases ------------------------------------------------------------- */

int mp_aliases_init(struct mp_aliases *a, const struct mp_strings *s)
{
  uint32_t i;
  memset(a, 0, sizeof(*a));
  a->nstrings = s->count;
  for (i = 0; i < s->count; i++) {
    const struct mp_string *str = mp_strings_get(s, i);
    if (!memchr(str->data, '\n', str->len))
      continue;
    if (!a->of) {
      a->of = calloc(s->count, sizeof(*a->of));
      if (!a->of)
	return -1;
    }
    a->of[i] = ++a->count;
  }
  if (a->count) {
    a->used = calloc(a->count + 1, 1);
    if (!a->used)
      return -1;
  }
  /* Untouched pages cost nothing: only the strings printed are seen. */
  a->plain = calloc(s->count ? s->count : 1, 1);
  return 0;
}

void mp_aliases_free(struct mp_aliases *a)
{
  free(a->of);
  free(a->used);
  free(a->plain);
  memset(a, 0, sizeof(*a));
}

/* -- Escapes ------------------------------------------------------------- */

size_t mp_utf8_len(const unsigned char *s, size_t avail)
{
  size_t n, i;
  uint32_t cp;
  if (s[0] < 0x80)
    return 1;
  if (s[0] >= 0xc2 && s[0] <= 0xdf)
    n = 2, cp = s[0] & 0x1f;
  else if (s[0] >= 0xe0 && s[0] <= 0xef)
    n = 3, cp = s[0] & 0x0f;
  else if (s[0] >= 0xf0 && s[0] <= 0xf4)
    n = 4, cp = s[0] & 0x07;
  else
    return 0;
  if (avail < n)
    return 0;
  for (i = 1; i < n; i++) {
    if ((s[i] & 0xc0) != 0x80)
      return 0;
    cp = cp << 6 | (s[i] & 0x3f);
  }
  if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
      (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
    return 0;
  return n;
}

static void add_hex_escape(struct mp_buf *out, unsigned char c)
{
  static const char hex[] = "0123456789abcdef";
  char esc[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
  mp_buf_add(out, esc, 4);
}

/* Whether a byte of w is below 0x20 or above 0x7e (exact as a yes or
** no; which byte, the caller finds one at a time). */
static inline int has_unprintable(uint64_t w)
{
  const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
  uint64_t del = w ^ (ones * 0x7f);
  return (((w - ones * 0x20) & ~w) | ((del - ones) & ~del) | w) & high ?
	 1 : 0;
}

/* What a string may be printed as it is in, learnt once a report. */
#define PLAIN_SEEN 1u
#define PLAIN_TEXT 2u	/* No byte to escape. */
#define PLAIN_FRAME 4u	/* Nor ';' or a trailing space. */

static unsigned plain_bits(const char *s, size_t len)
{
  const unsigned char *u = (const unsigned char *)s;
  size_t n;
  for (n = 0; len - n >= 8; n += 8) {
    uint64_t w;
    memcpy(&w, u + n, 8);
    if (has_unprintable(w))
      return PLAIN_SEEN;
  }
  for (; n < len; n++)
    if ((unsigned char)(u[n] - 0x20) >= 0x5f)
      return PLAIN_SEEN;
  if (memchr(s, ';', len) || (len && s[len - 1] == ' '))
    return PLAIN_SEEN | PLAIN_TEXT;
  return PLAIN_SEEN | PLAIN_TEXT | PLAIN_FRAME;
}

void mp_name_escape(struct mp_buf *out, const char *s, size_t len,
		    unsigned how)
{
  const unsigned char *u = (const unsigned char *)s;
  size_t i = 0, end = len, n;

  /* A folded line ends with " <count>": a frame that ended in spaces
  ** would run into it. */
  if (how & MP_ESC_FRAME)
    while (end > 0 && u[end - 1] == ' ')
      end--;
  while (i < end) {
    unsigned char c = u[i];
    const char *semi;
    /* Runs of printable ASCII go out as they are: most names are
    ** nothing else, tested eight bytes at a time. */
    for (n = i; end - n >= 8; n += 8) {
      uint64_t w;
      memcpy(&w, u + n, 8);
      if (has_unprintable(w))
	break;
    }
    for (; n < end && (unsigned char)(u[n] - 0x20) < 0x5f; n++)
      ;
    if ((how & MP_ESC_FRAME) && n > i && (semi = memchr(s + i, ';', n - i)))
      n = (size_t)(semi - s);
    if (n > i) {
      mp_buf_add(out, s + i, n - i);
      i = n;
    } else if (c == ';') {
      /* ';' separates frames in the folded format. */
      mp_buf_add(out, "_", 1);
      i++;
    } else if ((c == '\n' || c == '\t') && (how & MP_ESC_KEEP_LINES)) {
      mp_buf_add(out, s + i, 1);
      i++;
    } else if (c < 0x80 || (n = mp_utf8_len(u + i, end - i)) == 0 ||
	       (c == 0xc2 && u[i + 1] < 0xa0)) {
      /* C0 and C1 controls, DEL and bytes that are not UTF-8: a
      ** terminal or an SVG viewer would act on them or choke. */
      add_hex_escape(out, c);
      i++;
    } else {
      mp_buf_add(out, s + i, n);
      i += n;
    }
  }
  for (; end < len; end++)
    add_hex_escape(out, ' ');
}

const char *mp_name_escaped(struct mp_buf *b, const char *s)
{
  b->len = 0;
  mp_buf_add(b, "", 0);
  mp_name_escape(b, s, strlen(s), 0);
  return b->data && !b->oom ? b->data : "?";
}

/* -- Names --------------------------------------------------------------- */

/*
** A C symbol name that already says where it is: "<object>+0x<hex>" or
** "<symbol>+0x<hex>" (an address no symbol of its object covers, or past
** a symbol's start), "CFUNC 0x<hex>" (in no object). The writer names
** such addresses itself, at the address (FORMAT.md section 3): shown as
** they are, without ":0x<address>".
*/
static int name_is_whole(const struct mp_string *s)
{
  size_t i = s->len;
  while (i > 0 && ((s->data[i - 1] >= '0' && s->data[i - 1] <= '9') ||
		   (s->data[i - 1] >= 'a' && s->data[i - 1] <= 'f')))
    i--;
  if (i == s->len || i < 3 || s->data[i - 1] != 'x' || s->data[i - 2] != '0')
    return 0;
  if (s->data[i - 3] == '+')
    return i > 3;
  return i == 8 && memcmp(s->data, "CFUNC ", 6) == 0;
}

void mp_name_string(struct mp_buf *out, const struct mp_profile *p,
		    struct mp_aliases *al, uint32_t id,
		    enum mp_name_style style)
{
  const struct mp_string *s = mp_strings_get(mp_profile_strings(p), id);

  if (style != MP_NAME_PLAIN && al && al->of && id < al->nstrings &&
      al->of[id]) {
    al->used[al->of[id]] = 1;
    mp_buf_str(out, "CHUNK#");
    mp_buf_u64(out, al->of[id]);
    return;
  }
  if (style != MP_NAME_PLAIN) {
    unsigned need = style == MP_NAME_FRAME ? PLAIN_FRAME : PLAIN_TEXT;
    uint8_t *bits = al && al->plain && id < al->nstrings ?
		    &al->plain[id] : NULL;
    if (bits && !*bits)
      *bits = (uint8_t)plain_bits(s->data, s->len);
    if (!bits || !(*bits & need)) {
      mp_name_escape(out, s->data, s->len,
		     style == MP_NAME_FRAME ? MP_ESC_FRAME : 0);
      return;
    }
  }
  mp_buf_add(out, s->data, s->len);
}

void mp_name_location(struct mp_buf *out, const struct mp_profile *p,
		      struct mp_aliases *al, const struct mp_loc *l,
		      enum mp_name_style style)
{
  enum mp_group g = mp_profile_group(p);
  int by_line = g == MP_GROUP_LINE || g == MP_GROUP_FRAMES;
  int by_func = g == MP_GROUP_FUNCTION;
  const char *prefix = mp_loc_kinds[l->kind].prefix;

  /* Lua and C code known by a symbol start with its name; the others
  ** with their kind's prefix. */
  if (*prefix)
    mp_buf_str(out, prefix);
  switch ((enum mp_loc_kind)l->kind) {
  case MP_LOC_INTERNAL:
    break;
  case MP_LOC_LUA:
    if (by_func && l->linedefined == MP_LINE_BUILTIN) {
      /* No first line to show: LuaJIT's own name for such a function
      ** (its chunk name is the function's name). */
      mp_buf_str(out, "builtin:");
      mp_name_string(out, p, al, l->str, style);
      break;
    }
    mp_name_string(out, p, al, l->str, style);
    if (by_line)
      mp_buf_colon_u64(out, l->line);
    else if (by_func)
      mp_buf_colon_u64(out, l->linedefined);
    break;
  case MP_LOC_LUA_UNKNOWN:
    mp_buf_hex(out, l->addr);
    if (by_line)
      mp_buf_colon_u64(out, l->line);
    break;
  case MP_LOC_C:
    mp_name_string(out, p, al, l->str, style);
    if (!name_is_whole(mp_strings_get(mp_profile_strings(p), l->str))) {
      mp_buf_add(out, ":", 1);
      mp_buf_hex(out, l->addr);
    }
    break;
  case MP_LOC_C_UNKNOWN:
    mp_buf_hex(out, l->addr);
    break;
  case MP_LOC_TRACE:
  case MP_LOC_TRACE_NOPROTO:
    mp_buf_u64(out, l->addr);
    mp_buf_str(out, "] started at ");
    if (l->kind == MP_LOC_TRACE) {
      mp_name_string(out, p, al, l->str, style);
    } else {
      mp_buf_str(out, mp_loc_kinds[MP_LOC_LUA_UNKNOWN].prefix);
      mp_buf_hex(out, l->addr2);
    }
    mp_buf_colon_u64(out, l->line);
    break;
  case MP_LOC_TRACE_UNKNOWN:
    mp_buf_u64(out, l->addr);
    mp_buf_add(out, "]", 1);
    break;
  case MP_LOC_START:
    mp_name_kind(out, (unsigned)l->addr);
    mp_buf_add(out, ")", 1);
    break;
  case MP_LOC_NKINDS:
    break;
  }
}

void mp_name_frame(struct mp_buf *out, const struct mp_profile *p,
		   struct mp_aliases *al, const struct mp_frame *f,
		   enum mp_name_style style)
{
  struct mp_loc l;

  switch (f->tag) {
  case LJM_FRAME_FAST:
    if (f->name != MP_NO_STRING) {
      mp_name_string(out, p, al, f->name, style);
    } else {
      mp_buf_str(out, "builtin#");
      mp_buf_u64(out, f->loc);
    }
    return;
  case LJM_FRAME_CUT:
    mp_buf_str(out, f->loc == MP_CUT_FULL ? MP_CUT_FULL_NAME : "[cut]");
    return;
  default:
    break;
  }
  mp_profile_loc(p, f->loc, &l);
  if (f->tag == LJM_FRAME_TRACE && mp_loc_kinds[l.kind].src == LJM_SRC_TRACE) {
    mp_buf_str(out, "TRACE [");
    mp_buf_u64(out, l.addr);
    mp_buf_add(out, "]", 1);
    return;
  }
  mp_name_location(out, p, al, &l, style);
  if (f->tag == LJM_FRAME_LUA && f->name != MP_NO_STRING) {
    mp_buf_str(out, " (");
    mp_name_string(out, p, al, f->name, style);
    mp_buf_add(out, ")", 1);
  }
}

void mp_frame_parts(const struct mp_profile *p, const struct mp_frame *f,
		    struct mp_frame_parts *out)
{
  const struct mp_strings *strs = mp_profile_strings(p);
  const struct mp_string *s;
  struct mp_loc l;

  memset(out, 0, sizeof(*out));
  if (f->name != MP_NO_STRING) {
    s = mp_strings_get(strs, f->name);
    out->function = s->data;
    out->function_len = s->len;
  }
  if (f->tag == LJM_FRAME_FAST || f->tag == LJM_FRAME_CUT)
    return;
  mp_profile_loc(p, f->loc, &l);
  if (l.str == MP_NO_STRING)
    return;
  s = mp_strings_get(strs, l.str);
  if (mp_loc_kinds[l.kind].src == LJM_SRC_CFUNC) {
    out->function = s->data;
    out->function_len = s->len;
    return;
  }
  out->file = s->data;
  out->file_len = s->len;
  out->line = l.kind == MP_LOC_LUA ? l.line : 0;
  if (l.kind == MP_LOC_TRACE || l.kind == MP_LOC_TRACE_NOPROTO)
    out->line = l.line;
}

void mp_name_bytes(struct mp_buf *out, uint64_t bytes, int human)
{
  static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v;
  int u;

  if (!human || bytes < 1024) {
    mp_buf_u64(out, bytes);
    mp_buf_add(out, "B", 1);
    return;
  }
  v = (double)bytes / 1024.0;
  for (u = 0; v >= 1024.0 && u < 5; u++)
    v /= 1024.0;
  mp_buf_printf(out, "%.1f%s", v, units[u]);
}
