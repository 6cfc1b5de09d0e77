/*
** String interning with an arena, so that a million C symbol names cost
** a million small copies and not a million malloc calls.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_strings.h"

#define ARENA_BLOCK ((size_t)1 << 20)

struct mp_arena_block {
  struct mp_arena_block *next;
  size_t used, size;
  char data[];
};

void mp_strings_init(struct mp_strings *s)
{
  memset(s, 0, sizeof(*s));
}

void mp_strings_free(struct mp_strings *s)
{
  struct mp_arena_block *b = s->arena;
  while (b) {
    struct mp_arena_block *next = b->next;
    free(b);
    b = next;
  }
  free(s->items);
  free(s->slots);
  memset(s, 0, sizeof(*s));
}

/* Eight bytes at a time: a module-loading profile defines a chunk name
** every few dozen events. */
static uint32_t hash_bytes(const char *p, size_t len)
{
  uint64_t h = len * 0x9e3779b97f4a7c15ull, w;
  while (len >= 8) {
    memcpy(&w, p, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 29;
    p += 8;
    len -= 8;
  }
  if (len) {
    w = 0;
    memcpy(&w, p, len);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
  }
  h ^= h >> 32;
  h *= 0xc4ceb9fe1a85ec53ull;
  return (uint32_t)(h >> 32);
}

static char *arena_copy(struct mp_strings *s, const char *data, size_t len)
{
  struct mp_arena_block *b = s->arena;
  char *dst;

  if (!b || b->size - b->used < len + 1) {
    size_t size = len + 1 > ARENA_BLOCK ? len + 1 : ARENA_BLOCK;
    struct mp_arena_block *nb = malloc(sizeof(*nb) + size);
    if (!nb)
      return NULL;
    nb->used = 0;
    nb->size = size;
    /* A big string gets its own block behind the current one, so the
    ** free space of the current block is not wasted. */
    if (b && size > ARENA_BLOCK) {
      nb->next = b->next;
      b->next = nb;
    } else {
      nb->next = b;
      s->arena = nb;
    }
    b = nb;
  }
  dst = b->data + b->used;
  memcpy(dst, data, len);
  dst[len] = '\0';
  b->used += len + 1;
  return dst;
}

static int grow_slots(struct mp_strings *s)
{
  uint32_t nslots = s->mask ? (s->mask + 1) * 2 : 1024;
  uint32_t *slots = calloc(nslots, sizeof(*slots));
  uint32_t i;
  if (!slots)
    return -1;
  for (i = 0; i < s->count; i++) {
    uint32_t j = s->items[i].hash & (nslots - 1);
    while (slots[j])
      j = (j + 1) & (nslots - 1);
    slots[j] = i + 1;
  }
  free(s->slots);
  s->slots = slots;
  s->mask = nslots - 1;
  return 0;
}

uint32_t mp_strings_find_or_add(struct mp_strings *s, const char *data,
				size_t len)
{
  uint32_t h, j;
  struct mp_string *it;

  if (len >= UINT32_MAX || s->count >= UINT32_MAX - 1)
    return UINT32_MAX;
  if (!s->slots && grow_slots(s) < 0)
    return UINT32_MAX;
  h = hash_bytes(data, len);
  for (j = h & s->mask; s->slots[j]; j = (j + 1) & s->mask) {
    const struct mp_string *c = &s->items[s->slots[j] - 1];
    if (c->hash == h && c->len == len && mp_bytes_equal(c->data, data, len)) {
      s->last = s->slots[j];
      return s->slots[j] - 1;
    }
  }
  if (s->count == s->cap) {
    uint32_t ncap = s->cap ? s->cap * 2 : 256;
    struct mp_string *items = realloc(s->items, ncap * sizeof(*items));
    if (!items)
      return UINT32_MAX;
    s->items = items;
    s->cap = ncap;
  }
  it = &s->items[s->count];
  it->data = arena_copy(s, data, len);
  if (!it->data)
    return UINT32_MAX;
  it->len = (uint32_t)len;
  it->hash = h;
  s->slots[j] = ++s->count;
  s->last = s->count;
  if (s->count * 2 > s->mask + 1 && grow_slots(s) < 0)
    return UINT32_MAX;	/* Table still valid, just too full. */
  return s->count - 1;
}

void mp_strings_truncate(struct mp_strings *s, uint32_t count)
{
  uint32_t i;
  if (count >= s->count)
    return;
  s->count = count;
  s->last = 0;
  /* Rebuild the slots in place: linear probing has no cheap delete. */
  memset(s->slots, 0, ((size_t)s->mask + 1) * sizeof(*s->slots));
  for (i = 0; i < s->count; i++) {
    uint32_t j = s->items[i].hash & s->mask;
    while (s->slots[j])
      j = (j + 1) & s->mask;
    s->slots[j] = i + 1;
  }
}
