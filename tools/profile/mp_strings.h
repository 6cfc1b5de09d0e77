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

/* The id of the string, adding it if new. Returns UINT32_MAX on ENOMEM. */
uint32_t mp_strings_intern(struct mp_strings *s, const char *data, size_t len);

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
