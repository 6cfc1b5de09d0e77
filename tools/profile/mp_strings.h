/*
** String interning: every chunk and symbol name is stored once and
** known by a small number, so locations compare and hash as integers.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef MP_STRINGS_H
#define MP_STRINGS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct mp_string {
  const char *data;	/* Terminated by a NUL after len bytes. */
  uint32_t len;
  uint32_t hash;
};

struct mp_strings {
  struct mp_string *items;	/* Indexed by id. */
  uint32_t count, cap;
  uint32_t *slots;		/* Open addressing: id + 1, 0 is empty. */
  uint32_t mask;
  /* The id + 1 of the string interned last, or 0: the prototypes of a
  ** chunk are defined together, all with its name. */
  uint32_t last;
  struct mp_arena_block *arena;	/* Newest block first. */
};

void mp_strings_init(struct mp_strings *s);
void mp_strings_free(struct mp_strings *s);

/* The hash table's half of mp_strings_intern. */
uint32_t mp_strings_find_or_add(struct mp_strings *s, const char *data,
				size_t len);

/* Whether a and b, len bytes each, are the same: eight at a time (the
** last eight overlapping) from len 8 on, no call. */
static inline int mp_bytes_equal(const char *a, const char *b, size_t len)
{
  uint64_t x, y;
  size_t i;
  if (len < 8)
    return memcmp(a, b, len) == 0;
  for (i = 0; i + 8 < len; i += 8) {
    memcpy(&x, a + i, 8);
    memcpy(&y, b + i, 8);
    if (x != y)
      return 0;
  }
  memcpy(&x, a + len - 8, 8);
  memcpy(&y, b + len - 8, 8);
  return x == y;
}

/* The id of the string, adding it if new; UINT32_MAX on ENOMEM. The
** string interned last is compared first, inline: a module-loading
** profile names each chunk's prototypes one after another. */
static inline uint32_t mp_strings_intern(struct mp_strings *s,
					 const char *data, size_t len)
{
  if (s->last) {
    const struct mp_string *c = &s->items[s->last - 1];
    if (c->len == len && mp_bytes_equal(c->data, data, len))
      return s->last - 1;
  }
  return mp_strings_find_or_add(s, data, len);
}

/* Forget the strings interned since count was s->count (their bytes stay
** in the arena until mp_strings_free): a file that was dropped must not
** shift the alias numbers of the others. */
void mp_strings_truncate(struct mp_strings *s, uint32_t count);

static inline const struct mp_string *mp_strings_get(const struct mp_strings *s,
						     uint32_t id)
{
  return &s->items[id];
}

#endif
