/*
** Open addressing hash map from a 64-bit key to two 64-bit values, with
** linear probing and backward-shift deletion (no tombstones, so a table
** that sees billions of insert/remove pairs stays as fast as a fresh one).
** Used for the live heap's odd blocks, prototypes and traces.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef MP_MAP_H
#define MP_MAP_H

#include <stddef.h>
#include <stdint.h>

struct mp_map_entry {
  uint64_t key;		/* 0 marks an empty slot; key 0 lives in `zero`. */
  uint64_t a, b;	/* Values; their meaning is the user's. */
};

struct mp_map {
  struct mp_map_entry *slots;
  uint64_t mask;	/* Slot count - 1 (a power of two minus one). */
  uint64_t count;	/* Entries, including the zero key. */
  int has_zero;
  struct mp_map_entry zero;
};

void mp_map_init(struct mp_map *m);
void mp_map_free(struct mp_map *m);
void mp_map_clear(struct mp_map *m);

static inline uint64_t mp_map_hash(uint64_t key)
{
  /* Fibonacci hashing: heap addresses differ in their middle bits. */
  key ^= key >> 29;
  return key * 0x9e3779b97f4a7c15ull;
}

static inline size_t mp_map_home(const struct mp_map *m, uint64_t key)
{
  return (size_t)((mp_map_hash(key) >> 20) & m->mask);
}

/* The entry for key, or NULL. */
static inline struct mp_map_entry *mp_map_find(struct mp_map *m, uint64_t key)
{
  size_t i;
  if (key == 0)
    return m->has_zero ? &m->zero : NULL;
  if (!m->slots)
    return NULL;
  for (i = mp_map_home(m, key); ; i = (i + 1) & m->mask) {
    struct mp_map_entry *e = &m->slots[i];
    if (e->key == key)
      return e;
    if (e->key == 0)
      return NULL;
  }
}

/*
** The entry for key, added with zero values if absent (*added set).
** NULL when out of memory. The pointer is valid until the next insert
** or remove.
*/
struct mp_map_entry *mp_map_insert(struct mp_map *m, uint64_t key, int *added);

/* Remove an entry returned by find or insert. */
void mp_map_remove(struct mp_map *m, struct mp_map_entry *e);

#endif
