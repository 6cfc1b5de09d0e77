/*
** Location interning: a location's key (kind, names, lines, addresses)
** to its id, and the records that hold its counters, packed so that a
** profile with millions of locations stays small.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "mp_profile_int.h"

/*
** Locations of one chunk are met together (a chunk is usually loaded and
** run at once), so 8 consecutive lines share one home cache line (8
** slots of 8 bytes): the hash covers line / 8 and the low bits are
** line % 8, turned by some bits of the hash so that the same lines of
** different chunks (every generated module's lines 1 to 10) do not all
** pile up at the same slots of their lines. (With 16 lines, a new
** location of a module-loading profile probed 4.4 slots; with 8, 3.1.)
*/
static inline uint32_t loc_hash_fields(uint32_t kind, uint32_t str,
				       uint32_t line, uint32_t linedefined,
				       uint64_t addr, uint64_t addr2)
{
  uint64_t h = kind;
  h = h * 0x9e3779b97f4a7c15ull + str;
  h = h * 0x9e3779b97f4a7c15ull + (line >> 3);
  h = h * 0x9e3779b97f4a7c15ull + linedefined;
  h = h * 0x9e3779b97f4a7c15ull + addr;
  h = h * 0x9e3779b97f4a7c15ull + addr2;
  h ^= h >> 31;
  h *= 0x9e3779b97f4a7c15ull;
  return (uint32_t)(h >> 32) << 3 | ((line + (uint32_t)(h >> 29)) & 7);
}

static inline uint32_t loc_hash(const struct mp_loc *k)
{
  return loc_hash_fields(k->kind, k->str, k->line, k->linedefined, k->addr,
			 k->addr2);
}

static inline uint32_t rec_kind(const struct mp_lrec *r)
{
  return r->kind_aux >> MP_LREC_AUX_BITS;
}

static inline const struct mp_laux *rec_aux(const struct mp_profile *p,
					    const struct mp_lrec *r)
{
  uint32_t aux = r->kind_aux & MP_LREC_AUX_MASK;
  return aux ? &p->auxs[aux - 1] : NULL;
}

/*
** How a key is split between the record's num and its aux: num is the
** line, except for Lua code grouped by function, whose key has no line:
** there it is linedefined. Any other linedefined goes to the aux.
*/
static inline int num_is_linedefined(const struct mp_profile *p,
				     uint32_t kind)
{
  return p->group == MP_GROUP_FUNCTION && kind == MP_LOC_LUA;
}

static inline uint32_t key_num(const struct mp_profile *p,
			       const struct mp_loc *k)
{
  return num_is_linedefined(p, k->kind) ? k->linedefined : k->line;
}

static inline uint32_t key_aux_linedefined(const struct mp_profile *p,
					   const struct mp_loc *k)
{
  return num_is_linedefined(p, k->kind) ? 0 : k->linedefined;
}

/* The identity fields of a stored location. */
static void rec_key(const struct mp_profile *p, const struct mp_lrec *r,
		    struct mp_loc *k)
{
  const struct mp_laux *a = rec_aux(p, r);
  memset(k, 0, sizeof(*k));
  k->kind = rec_kind(r);
  k->str = r->str;
  if (num_is_linedefined(p, k->kind))
    k->linedefined = r->num;
  else
    k->line = r->num;
  if (a) {
    k->addr = a->addr;
    k->addr2 = a->addr2;
    if (!num_is_linedefined(p, k->kind))
      k->linedefined = (uint32_t)a->linedefined;
  }
}

static inline int loc_same(const struct mp_profile *p,
			   const struct mp_lrec *r, const struct mp_loc *k)
{
  const struct mp_laux *a;
  uint32_t ld = key_aux_linedefined(p, k);
  if (rec_kind(r) != k->kind || r->str != k->str || r->num != key_num(p, k))
    return 0;
  a = rec_aux(p, r);
  if (!a)
    return !k->addr && !k->addr2 && !ld;
  return a->addr == k->addr && a->addr2 == k->addr2 && a->linedefined == ld;
}

void mp_profile_loc_counts(const struct mp_profile *p, uint32_t id,
			   struct mp_loc *out)
{
  const struct mp_lrec *r = &p->locs[id];
  out->n_alloc = r->n_alloc;
  out->alloc_bytes = r->alloc_bytes;
  if (r->ext) {
    const struct mp_lext *e = &p->exts[r->ext - 1];
    out->n_realloc = e->n_realloc;
    out->realloc_new = e->realloc_new;
    out->realloc_old = e->realloc_old;
    out->n_free = e->n_free;
    out->free_bytes = e->free_bytes;
  } else {
    out->n_realloc = out->realloc_new = out->realloc_old = 0;
    out->n_free = out->free_bytes = 0;
  }
  out->temporary = id < p->ntemps ? p->temps[id].count : 0;
  out->temporary_bytes = id < p->ntemps ? p->temps[id].bytes : 0;
  out->created = mp_lrec_created(r);
  out->released = r->released;
  out->held_bytes = mp_lrec_held_bytes(r);
  out->held_blocks = mp_lrec_created(r) - r->released;
}

uint64_t mp_profile_measure(const struct mp_profile *p, uint32_t id,
			    enum mp_measure m)
{
  const struct mp_lrec *r = &p->locs[id];
  const struct mp_lext *e = r->ext ? &p->exts[r->ext - 1] : NULL;
  switch (m) {
  case MP_MEASURE_ALLOCS: return r->n_alloc;
  case MP_MEASURE_REALLOCS: return e ? e->n_realloc : 0;
  case MP_MEASURE_FREES: return e ? e->n_free : 0;
  case MP_MEASURE_EVENTS:
    return r->n_alloc + (e ? e->n_realloc + e->n_free : 0);
  case MP_MEASURE_HELD_BYTES: return mp_lrec_held_bytes(r);
  case MP_MEASURE_TEMPORARY: return id < p->ntemps ? p->temps[id].count : 0;
  }
  return 0;
}

void mp_profile_loc(const struct mp_profile *p, uint32_t id,
		    struct mp_loc *out)
{
  rec_key(p, &p->locs[id], out);
  mp_profile_loc_counts(p, id, out);
}

int mp_grow_one(void **arr, uint32_t n, uint32_t *cap, size_t sz)
{
  uint32_t ncap;
  void *na;
  if (n < *cap)
    return 0;
  ncap = *cap ? *cap * 2 : 256;
  if (ncap <= *cap)
    return -1;
  na = realloc(*arr, (size_t)ncap * sz);
  if (!na)
    return -1;
  *arr = na;
  *cap = ncap;
  return 0;
}

struct mp_lext *mp_locs_new_ext(struct mp_profile *p, struct mp_lrec *r)
{
  if (p->nexts >= INT32_MAX ||
      mp_grow_one((void **)&p->exts, p->nexts, &p->exts_cap, sizeof(*p->exts)) < 0)
    return NULL;
  memset(&p->exts[p->nexts], 0, sizeof(p->exts[0]));
  r->ext = ++p->nexts;
  return &p->exts[r->ext - 1];
}

/*
** The location hash: slots hold hash << 32 | (id + 1), 0 is empty.
** Keeping the hash in the slot means a probe reads a location record only
** when the hashes match, and a rehash never reads them at all: it walks
** the old slots in order and writes the new ones almost in order.
*/
static int loc_rehash(struct mp_profile *p)
{
  /* Four times as big while small (every location is moved about a
  ** third as often; a module-loading profile makes one every dozen
  ** events), twice from 2^20 slots (8 MiB). */
  uint32_t n = !p->loc_mask ? 1024
	       : p->loc_mask < (1u << 20) - 1 ? (p->loc_mask + 1) * 4
	       : (p->loc_mask + 1) * 2;
  uint64_t *slots;
  uint32_t i;
  while (n && n / 2 <= p->nlocs)
    n *= 2;
  if (n == 0)
    return -1;
  slots = calloc(n, sizeof(*slots));
  if (!slots)
    return -1;
  for (i = 0; p->loc_slots && i <= p->loc_mask; i++) {
    uint64_t s = p->loc_slots[i];
    uint32_t j;
    if (!s)
      continue;
    for (j = (uint32_t)(s >> 32) & (n - 1); slots[j]; j = (j + 1) & (n - 1))
      ;
    slots[j] = s;
  }
  free(p->loc_slots);
  p->loc_slots = slots;
  p->loc_mask = n - 1;
  return 0;
}

/* Record n, the new location whose hash is h, in slot j, growing the
** hash when it is half full; n, or -1 when out of memory. */
static int64_t loc_commit(struct mp_profile *p, uint32_t j, uint32_t h,
			  uint32_t n)
{
  p->nlocs = n + 1;
  p->loc_slots[j] = (uint64_t)h << 32 | (n + 1);
  if ((uint64_t)(n + 1) * 2 > (uint64_t)p->loc_mask + 1 &&
      loc_rehash(p) < 0)
    return -1;
  return n;
}

int64_t mp_locs_intern(struct mp_profile *p, const struct mp_loc *k)
{
  uint32_t j, h = loc_hash(k), n, ld;
  struct mp_lrec *r;
  if (!p->loc_slots && loc_rehash(p) < 0)
    return -1;
  for (j = h & p->loc_mask; p->loc_slots[j]; j = (j + 1) & p->loc_mask) {
    uint64_t s = p->loc_slots[j];
    uint32_t id = (uint32_t)s - 1;
    if ((uint32_t)(s >> 32) == h && loc_same(p, &p->locs[id], k))
      return id;
  }
  /* New: in locals, which stores to the records cannot change. */
  n = p->nlocs;
  if (n >= INT32_MAX ||
      mp_grow_one((void **)&p->locs, n, &p->locs_cap, sizeof(*p->locs)) < 0)
    return -1;
  r = &p->locs[n];
  memset(r, 0, sizeof(*r));
  r->kind_aux = k->kind << MP_LREC_AUX_BITS;
  r->str = k->str;
  r->num = key_num(p, k);
  ld = key_aux_linedefined(p, k);
  if (k->addr || k->addr2 || ld) {
    struct mp_laux *a;
    if (p->nauxs >= MP_LREC_AUX_MASK ||
	mp_grow_one((void **)&p->auxs, p->nauxs, &p->auxs_cap,
	     sizeof(*p->auxs)) < 0)
      return -1;
    a = &p->auxs[p->nauxs];
    a->addr = k->addr;
    a->addr2 = k->addr2;
    a->linedefined = ld;
    r->kind_aux |= ++p->nauxs;
  }
  return loc_commit(p, j, h, n);
}

/* mp_locs_intern_lua_line's key, for mp_locs_intern. */
static __attribute__((noinline)) int64_t
intern_lua_line_slow(struct mp_profile *p, uint32_t chunk, uint32_t line)
{
  struct mp_loc k;
  memset(&k, 0, sizeof(k));
  k.kind = MP_LOC_LUA;
  k.str = chunk;
  k.line = line;
  return mp_locs_intern(p, &k);
}

int64_t mp_locs_intern_lua_line(struct mp_profile *p, uint32_t chunk,
				uint32_t line)
{
  /* The key mp_locs_intern would get: with a constant kind and no
  ** linedefined or addresses, the hash folds to a few instructions, and
  ** a record is that key when its kind_aux says Lua without aux. */
  uint32_t h, j, n = p->nlocs, mask = p->loc_mask;
  uint64_t *slots = p->loc_slots;
  struct mp_lrec *r;

  if (!slots || n == p->locs_cap || p->group == MP_GROUP_FUNCTION)
    return intern_lua_line_slow(p, chunk, line);  /* Growing, or unlike. */
  h = loc_hash_fields(MP_LOC_LUA, chunk, line, 0, 0, 0);
  for (j = h & mask; slots[j]; j = (j + 1) & mask) {
    uint64_t s = slots[j];
    if ((uint32_t)(s >> 32) == h) {
      r = &p->locs[(uint32_t)s - 1];
      if (r->kind_aux == (uint32_t)MP_LOC_LUA << MP_LREC_AUX_BITS &&
	  r->str == chunk && r->num == line)
	return (uint32_t)s - 1;
    }
  }
  if (n >= INT32_MAX)
    return -1;
  r = &p->locs[n];
  memset(r, 0, sizeof(*r));
  r->kind_aux = (uint32_t)MP_LOC_LUA << MP_LREC_AUX_BITS;
  r->str = chunk;
  r->num = line;
  return loc_commit(p, j, h, n);
}
