/*
** Live at the peak, exactly, in the one pass (mp_profile.h, "held at the
** peak"): a lazy snapshot. The epoch grows after every event that takes
** the file's live heap to a new maximum; before a location's or stack
** node's held counts change (mp_live_peak), they are saved with the
** epoch unless already saved in it. When the file ends, a count saved
** in the last epoch is what it was at the peak; any other has not
** changed since. O(1) per event, 24 bytes per location and node.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_profile_int.h"

/* *a (of *n) to at least need + 1 entries, the new ones never saved. */
static int grow(struct mp_pksave **a, uint32_t *n, uint32_t need,
		uint32_t hint)
{
  uint32_t n2 = *n ? *n : 64;
  struct mp_pksave *x;

  while (n2 <= need)
    n2 = n2 > UINT32_MAX / 2 ? UINT32_MAX : 2 * n2;
  if (n2 < hint)
    n2 = hint;
  if (!(x = realloc(*a, (size_t)n2 * sizeof(*x))))
    return -1;
  memset(x + *n, 0, (size_t)(n2 - *n) * sizeof(*x));
  *a = x;
  *n = n2;
  return 0;
}

int mp_peak_save(struct mp_profile *p, uint32_t owner, int stacks)
{
  uint32_t id = stacks ? p->snodes[owner].leaf : owner;
  struct mp_pksave *s;

  if (id >= p->npk_locs &&
      grow(&p->pk_locs, &p->npk_locs, id, p->locs_cap) < 0)
    goto oom;
  s = &p->pk_locs[id];
  if (s->epoch != p->pk_epoch) {
    const struct mp_lrec *r = &p->locs[id];
    s->epoch = p->pk_epoch;
    s->bytes = mp_lrec_held_bytes(r);
    s->blocks = mp_lrec_created(r) - r->released;
  }
  if (!stacks)
    return 0;
  if (owner >= p->npk_nodes &&
      grow(&p->pk_nodes, &p->npk_nodes, owner, p->snodes_cap) < 0)
    goto oom;
  s = &p->pk_nodes[owner];
  if (s->epoch != p->pk_epoch) {
    s->epoch = p->pk_epoch;
    s->bytes = p->scounts[owner].held_bytes;
    s->blocks = p->scounts[owner].held_blocks;
  }
  return 0;
oom:
  p->oom = 1;
  return -1;
}

void mp_peak_free(struct mp_profile *p)
{
  free(p->pk_locs);
  free(p->pk_nodes);
  p->pk_locs = p->pk_nodes = NULL;
  p->npk_locs = p->npk_nodes = 0;
}

/* -- Public API ---------------------------------------------------------- */

/* A saved count of the last finished file's peak, or NULL: the count
** now is the one. */
static const struct mp_pksave *saved(const struct mp_profile *p,
				     const struct mp_pksave *a, uint32_t n,
				     uint32_t id)
{
  if (p->pk_done && id < n && a[id].epoch == p->pk_done)
    return &a[id];
  return NULL;
}

void mp_profile_kinds_held(const struct mp_profile *p, int at_peak,
			   uint64_t out[MP_NKINDS])
{
  unsigned k;
  for (k = 0; k < MP_NKINDS; k++)
    out[k] = at_peak && p->pk_done && p->kind_pk[k].epoch == p->pk_done
		 ? p->kind_pk[k].bytes
		 : p->kind_held[k];
}

void mp_profile_loc_at_peak(const struct mp_profile *p, uint32_t id,
			    uint64_t *bytes, uint64_t *blocks)
{
  const struct mp_pksave *s = saved(p, p->pk_locs, p->npk_locs, id);
  if (s) {
    *bytes = s->bytes;
    *blocks = s->blocks;
  } else {
    *bytes = mp_lrec_held_bytes(&p->locs[id]);
    *blocks = mp_lrec_created(&p->locs[id]) - p->locs[id].released;
  }
}

void mp_profile_stack_at_peak(const struct mp_profile *p, uint32_t id,
			      uint64_t *bytes, uint64_t *blocks)
{
  const struct mp_pksave *s = saved(p, p->pk_nodes, p->npk_nodes, id);
  if (s) {
    *bytes = s->bytes;
    *blocks = s->blocks;
  } else {
    *bytes = p->scounts[id].held_bytes;
    *blocks = p->scounts[id].held_blocks;
  }
}
