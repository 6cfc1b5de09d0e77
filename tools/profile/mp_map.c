/*
** Open addressing hash map; see mp_map.h.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_map.h"

#define MIN_SLOTS 64

void mp_map_init(struct mp_map *m)
{
  memset(m, 0, sizeof(*m));
}

void mp_map_free(struct mp_map *m)
{
  free(m->slots);
  memset(m, 0, sizeof(*m));
}

void mp_map_clear(struct mp_map *m)
{
  if (m->slots)
    memset(m->slots, 0, (m->mask + 1) * sizeof(*m->slots));
  m->count = 0;
  m->has_zero = 0;
}

static int resize(struct mp_map *m, uint64_t nslots)
{
  struct mp_map_entry *old = m->slots;
  uint64_t oldn = old ? m->mask + 1 : 0;
  uint64_t i;
  struct mp_map_entry *slots;

  if (nslots > SIZE_MAX / sizeof(*slots))
    return -1;
  slots = calloc((size_t)nslots, sizeof(*slots));
  if (!slots)
    return -1;
  m->slots = slots;
  m->mask = nslots - 1;
  for (i = 0; i < oldn; i++)
    if (old[i].key) {
      size_t j = mp_map_home(m, old[i].key);
      while (slots[j].key)
	j = (j + 1) & m->mask;
      slots[j] = old[i];
    }
  free(old);
  return 0;
}

struct mp_map_entry *mp_map_insert(struct mp_map *m, uint64_t key, int *added)
{
  size_t i;

  *added = 0;
  if (key == 0) {
    if (!m->has_zero) {
      m->has_zero = 1;
      m->zero.a = m->zero.b = 0;
      m->count++;
      *added = 1;
    }
    return &m->zero;
  }
  /* Keep the load under 1/2: probes stay short even for clustered keys. */
  if (!m->slots || (m->count + 1) * 2 > m->mask + 1)
    if (resize(m, m->slots ? (m->mask + 1) * 2 : MIN_SLOTS) < 0)
      return NULL;
  for (i = mp_map_home(m, key); ; i = (i + 1) & m->mask) {
    struct mp_map_entry *e = &m->slots[i];
    if (e->key == key)
      return e;
    if (e->key == 0) {
      e->key = key;
      e->a = e->b = 0;
      m->count++;
      *added = 1;
      return e;
    }
  }
}

void mp_map_remove(struct mp_map *m, struct mp_map_entry *e)
{
  size_t hole, j;

  if (e == &m->zero) {
    m->has_zero = 0;
    m->count--;
    return;
  }
  hole = (size_t)(e - m->slots);
  m->count--;
  /* Pull later members of the probe run back into the hole, so that
  ** every key stays reachable from its home slot without tombstones. */
  for (j = (hole + 1) & m->mask; m->slots[j].key; j = (j + 1) & m->mask) {
    size_t home = mp_map_home(m, m->slots[j].key);
    /* Move j into the hole unless its home lies cyclically in (hole, j]. */
    int stays = (hole <= j) ? (home > hole && home <= j)
			    : (home > hole || home <= j);
    if (!stays) {
      m->slots[hole] = m->slots[j];
      hole = j;
    }
  }
  m->slots[hole].key = 0;
}
