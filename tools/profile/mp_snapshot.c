/*
** Start snapshots (mp_profile.h): the blocks a stream says were live when
** it began, between INFO SNAPSHOT 1 and 0. Each is held in the heap at
** the START location of its kind, "live at start (KIND)", so that a later
** free is charged there instead of to the untracked frees; none counts
** as an allocation. Beside that, the census of what they were.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_live.h"
#include "mp_profile_int.h"
#include "lj_memprof_format.h"

void mp_snapshot_info(struct mp_profile *p, uint64_t value)
{
  p->in_snap = p->in_census = p->census_on = 0;
  if (value == LJM_SNAPSHOT_END) {
    mp_graph_snapshot_end(p);
    return;
  }
  p->file_snaps++;
  mp_graph_snapshot(p);
  if (value == LJM_SNAPSHOT_START && p->file_snaps == 1) {
    p->in_snap = 1;
    p->file.snapshots++;
    p->census_on = p->census_want <= 1;
  } else {
    /* A later one (or a start record out of place): a census. */
    p->in_census = 1;
    p->file.later_snapshots++;
    p->census_on = p->file_snaps == p->census_want;
  }
  if (p->census_on)
    p->census_files++;
}

void mp_snapshot_free(struct mp_profile *p)
{
  free(p->snap.kinds);
  mp_map_free(&p->snap.closures);
  memset(&p->snap, 0, sizeof(p->snap));
}

/* The location that holds the snapshot's blocks of this kind. */
static int64_t start_loc(struct mp_profile *p, unsigned kind)
{
  struct mp_loc k;
  if (p->no_locations)
    return mp_resolve_uncached(p, LJM_SRC_INTERNAL, 0, 0);
  memset(&k, 0, sizeof(k));
  k.kind = MP_LOC_START;
  k.str = MP_NO_STRING;
  k.addr = kind;
  return mp_locs_intern(p, &k);
}

/* Keep the largest table blocks, largest first. */
static void keep_big(struct mp_snapshot *s, const struct mp_event *ev,
		     unsigned kind)
{
  size_t i = s->nbig < MP_SNAP_TOP ? s->nbig++ : MP_SNAP_TOP - 1;
  if (i == MP_SNAP_TOP - 1 && s->nbig == MP_SNAP_TOP &&
      s->big[i].size >= ev->new_size)
    return;
  while (i > 0 && s->big[i - 1].size < ev->new_size) {
    s->big[i] = s->big[i - 1];
    i--;
  }
  s->big[i].addr = ev->new_addr;
  s->big[i].size = ev->new_size;
  s->big[i].kind = kind;
}

static int census(struct mp_profile *p, const struct mp_event *ev,
		  unsigned kind)
{
  struct mp_snapshot *s = &p->snap;
  struct mp_snap_kind *k;
  if (!s->kinds) {
    if (!(s->kinds = calloc(MP_NKINDS, sizeof(*s->kinds))))
      return -1;
    mp_map_init(&s->closures);
  }
  k = &s->kinds[kind];
  if (!k->blocks || ev->new_size < k->min)
    k->min = ev->new_size;
  if (ev->new_size > k->max)
    k->max = ev->new_size;
  k->blocks++;
  k->bytes += ev->new_size;
  if (kind == LJM_KIND_TAB || kind == LJM_KIND_TAB_ARRAY ||
      kind == LJM_KIND_TAB_HASH)
    keep_big(s, ev, kind);
  if (kind == LJM_KIND_LFUNC && ev->src == LJM_SRC_LFUNC &&
      !p->no_locations) {
    int added;
    int64_t id = mp_resolve(p, ev);
    struct mp_map_entry *e;
    if (id < 0 || !(e = mp_map_insert(&s->closures, (uint64_t)id + 1,
				      &added)))
      return -1;
    e->a++;
    e->b += ev->new_size;
  }
  return 0;
}

int mp_snapshot_block(struct mp_profile *p, const struct mp_event *ev,
		      unsigned kind)
{
  int64_t id = start_loc(p, kind);
  uint32_t owner;
  unsigned huge = 0;
  uint64_t key;
  if (id < 0)
    return -1;
  owner = (uint32_t)id;
  if (p->file_stacks && !(owner = mp_stacks_of_loc(p, (uint32_t)id)))
    return -1;
  if (mp_kinds_on(p) && mp_kinds_account(p, ev, kind, (uint32_t)id) < 0)
    return -1;
  key = mp_live_key(ev->new_addr, &huge, MP_LIVE_NEW_HUGE);
  if (mp_live_create(p, (uint32_t)id, owner, key, ev->new_size, kind,
		     huge != 0, 0, p->file_stacks ? MP_LIVE_STACKS : 0) < 0)
    return -1;
  p->fresh_block = 0;	/* Freed next: not a temporary of the run. */
  p->file.snap_blocks++;
  p->file.snap_bytes += ev->new_size;
  return p->census_on ? census(p, ev, kind) : 0;
}

int mp_snapshot_census(struct mp_profile *p, const struct mp_event *ev,
		       unsigned kind)
{
  if (!mp_kinds_kept(p, kind))
    return 0;
  p->census_blocks++;
  p->census_bytes += ev->new_size;
  return census(p, ev, kind);
}

/* -- What the reports read ------------------------------------------------- */

int mp_profile_in_snapshot(const struct mp_profile *p)
{
  return p->in_snap || p->in_census;
}

void mp_profile_census_of(struct mp_profile *p, uint32_t n)
{
  p->census_want = n;
}

int mp_profile_census(const struct mp_profile *p, uint64_t *blocks,
		      uint64_t *bytes)
{
  if (p->census_want <= 1) {
    *blocks = mp_profile_total(p)->snap_blocks;
    *bytes = mp_profile_total(p)->snap_bytes;
  } else {
    *blocks = p->census_blocks;
    *bytes = p->census_bytes;
  }
  return p->census_files != 0;
}

void mp_profile_snap_kind(const struct mp_profile *p, unsigned kind,
			  struct mp_snap_kind *out)
{
  if (p->snap.kinds && kind < MP_NKINDS)
    *out = p->snap.kinds[kind];
  else
    memset(out, 0, sizeof(*out));
}

size_t mp_profile_snap_closures(const struct mp_profile *p,
				struct mp_snap_closures *out, size_t max)
{
  const struct mp_map *m = &p->snap.closures;
  size_t n = 0, i;
  if (!p->snap.kinds || !m->slots || !max)
    return 0;
  /* Insertion into the few kept: the map can be large, max is small. */
  for (i = 0; i <= m->mask; i++) {
    const struct mp_map_entry *e = &m->slots[i];
    size_t j;
    if (!e->key)
      continue;
    if (n == max && out[n - 1].n >= e->a)
      continue;
    j = n < max ? n++ : max - 1;
    while (j > 0 && out[j - 1].n < e->a) {
      out[j] = out[j - 1];
      j--;
    }
    out[j].loc = (uint32_t)(e->key - 1);
    out[j].n = e->a;
    out[j].bytes = e->b;
  }
  return n;
}

size_t mp_profile_snap_tables(const struct mp_profile *p,
			      struct mp_snap_block *out, size_t max)
{
  size_t n = p->snap.nbig < max ? p->snap.nbig : max;
  memcpy(out, p->snap.big, n * sizeof(*out));
  return n;
}
