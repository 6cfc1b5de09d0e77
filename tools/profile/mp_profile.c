/*
** The aggregator; see mp_profile.h.
**
** The hot path is one memory event: find its location (a small cache in
** front of the symbol lookups, invalidated whenever a symbol arrives),
** update the live heap, add to the location's counters.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lj_memprof_format.h"
#include "mp_profile.h"
#include "mp_sort.h"

static void reset_cache(struct mp_profile *p);

_Static_assert(sizeof(struct mp_lrec) == 64, "a location is one cache line");
_Static_assert(MP_LOC_NKINDS <= 1u << (32 - MP_LREC_AUX_BITS),
	       "a kind fits the bits above a location's aux index");

const struct mp_loc_kind_info mp_loc_kinds[MP_LOC_NKINDS] = {
#define MP_LOC_INFO(kind, src, prefix, json, rank, order, named) \
  [MP_LOC_##kind] = {src, prefix, json, rank, MP_ORDER_##order, named},
  MP_LOC_KINDS(MP_LOC_INFO)
#undef MP_LOC_INFO
};
_Static_assert(offsetof(struct mp_override, key) == 0, "pairs start with key");

void mp_profile_init(struct mp_profile *p, enum mp_group group)
{
  memset(p, 0, sizeof(*p));
  p->group = group;
  mp_strings_init(&p->strings);
  mp_symtab_init(&p->symtab);
  mp_heap_init(&p->heap);
  mp_map_init(&p->trace_funcs);
  reset_cache(p);
}

void mp_profile_free(struct mp_profile *p)
{
  mp_strings_free(&p->strings);
  mp_symtab_free(&p->symtab);
  mp_heap_free(&p->heap);
  mp_map_free(&p->trace_funcs);
  free(p->ov);
  free(p->locs);
  free(p->exts);
  free(p->auxs);
  free(p->loc_slots);
  memset(p, 0, sizeof(*p));
}

/* -- Location table ------------------------------------------------------ */

/*
** Locations of one chunk are met together (a chunk is usually loaded and
** run at once), so 16 consecutive lines share one home cache line: the
** hash covers line / 16 and the low bits are line % 16.
*/
static uint32_t loc_hash(const struct mp_loc *k)
{
  uint64_t h = k->kind;
  h = h * 0x9e3779b97f4a7c15ull + k->str;
  h = h * 0x9e3779b97f4a7c15ull + (k->line >> 4);
  h = h * 0x9e3779b97f4a7c15ull + k->linedefined;
  h = h * 0x9e3779b97f4a7c15ull + k->addr;
  h = h * 0x9e3779b97f4a7c15ull + k->addr2;
  h ^= h >> 31;
  h *= 0x9e3779b97f4a7c15ull;
  return (uint32_t)(h >> 32) << 4 | (k->line & 15);
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

static int loc_same(const struct mp_profile *p, const struct mp_lrec *r,
		    const struct mp_loc *k)
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

void mp_profile_loc(const struct mp_profile *p, uint32_t id,
		    struct mp_loc *out)
{
  const struct mp_lrec *r = &p->locs[id];
  rec_key(p, r, out);
  out->n_alloc = r->n_alloc;
  out->alloc_bytes = r->alloc_bytes;
  if (r->ext) {
    const struct mp_lext *e = &p->exts[r->ext - 1];
    out->n_realloc = e->n_realloc;
    out->realloc_new = e->realloc_new;
    out->realloc_old = e->realloc_old;
    out->n_free = e->n_free;
    out->free_bytes = e->free_bytes;
  }
  out->created = r->created;
  out->released = r->released;
  out->held_bytes = r->held_bytes;
  out->held_blocks = r->created - r->released;
}

/* Grow an array of elements of size sz to hold one more; 0 or -1. */
static int grow(void **arr, uint32_t n, uint32_t *cap, size_t sz)
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

/* The realloc/free counters of a location, made on first use. */
static inline struct mp_lext *rec_ext(struct mp_profile *p,
				      struct mp_lrec *r)
{
  if (!r->ext) {
    if (p->nexts >= INT32_MAX ||
	grow((void **)&p->exts, p->nexts, &p->exts_cap, sizeof(*p->exts)) < 0)
      return NULL;
    memset(&p->exts[p->nexts], 0, sizeof(p->exts[0]));
    r->ext = ++p->nexts;
  }
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
  uint32_t n = p->loc_mask ? (p->loc_mask + 1) * 2 : 1024;
  uint64_t *slots;
  uint32_t i;
  while (n && n / 4 * 3 <= p->nlocs)
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

/* The id of the location with key k (identity fields only), added if new. */
static int64_t loc_intern(struct mp_profile *p, const struct mp_loc *k)
{
  uint32_t j, h = loc_hash(k);
  if (!p->loc_slots && loc_rehash(p) < 0)
    return -1;
  for (j = h & p->loc_mask; p->loc_slots[j]; j = (j + 1) & p->loc_mask) {
    uint64_t s = p->loc_slots[j];
    uint32_t id = (uint32_t)s - 1;
    if ((uint32_t)(s >> 32) == h && loc_same(p, &p->locs[id], k))
      return id;
  }
  if (p->nlocs >= INT32_MAX)
    return -1;
  if (grow((void **)&p->locs, p->nlocs, &p->locs_cap, sizeof(*p->locs)) < 0)
    return -1;
  memset(&p->locs[p->nlocs], 0, sizeof(p->locs[0]));
  if (k->addr || k->addr2 || key_aux_linedefined(p, k)) {
    if (p->nauxs >= MP_LREC_AUX_MASK ||
	grow((void **)&p->auxs, p->nauxs, &p->auxs_cap,
	     sizeof(*p->auxs)) < 0)
      return -1;
    p->auxs[p->nauxs].addr = k->addr;
    p->auxs[p->nauxs].addr2 = k->addr2;
    p->auxs[p->nauxs].linedefined = key_aux_linedefined(p, k);
    p->locs[p->nlocs].kind_aux = ++p->nauxs;
  }
  p->locs[p->nlocs].kind_aux |= k->kind << MP_LREC_AUX_BITS;
  p->locs[p->nlocs].str = k->str;
  p->locs[p->nlocs].num = key_num(p, k);
  p->loc_slots[j] = (uint64_t)h << 32 | ++p->nlocs;
  if ((uint64_t)p->nlocs * 4 > ((uint64_t)p->loc_mask + 1) * 3 &&
      loc_rehash(p) < 0)
    return -1;
  return p->nlocs - 1;
}

/* Build the key of an event's location from the symbols known now. */
static void resolve(struct mp_profile *p, const struct mp_event *ev,
		    struct mp_loc *k)
{
  memset(k, 0, sizeof(*k));
  k->str = MP_NO_STRING;
  switch (ev->src) {
  case LJM_SRC_LFUNC: {
    struct mp_proto pt;
    if (!mp_symtab_proto(&p->symtab, ev->loc, &pt)) {
      k->kind = MP_LOC_LUA_UNKNOWN;
      k->addr = ev->loc;
      k->line = p->group == MP_GROUP_LINE || p->group == MP_GROUP_FRAMES ?
		(uint32_t)ev->loc_line : 0;
      break;
    }
    k->kind = MP_LOC_LUA;
    k->str = pt.chunk;
    if (p->group != MP_GROUP_CHUNK && p->group != MP_GROUP_LINE)
      k->linedefined = pt.linedefined;
    if (p->group == MP_GROUP_LINE || p->group == MP_GROUP_FRAMES)
      k->line = (uint32_t)ev->loc_line;
    break;
  }
  case LJM_SRC_CFUNC: {
    struct mp_csym cs;
    if (mp_symtab_csym(&p->symtab, ev->loc, &cs)) {
      k->kind = MP_LOC_C;
      k->str = cs.name;
      k->addr = cs.addr;
    } else {
      k->kind = MP_LOC_C_UNKNOWN;
      k->addr = ev->loc;
    }
    break;
  }
  case LJM_SRC_TRACE: {
    struct mp_trace tr;
    const struct mp_map_entry *f;
    k->addr = ev->loc;
    if (!mp_symtab_trace(&p->symtab, (uint32_t)ev->loc, &tr)) {
      k->kind = MP_LOC_TRACE_UNKNOWN;
    } else if (tr.chunk == MP_NO_STRING) {
      k->kind = MP_LOC_TRACE_NOPROTO;
      k->addr2 = tr.proto;
      k->line = tr.line;
    } else if (p->group == MP_GROUP_CHUNK) {
      /* Grouped, a trace is code of the function it starts in: with the
      ** JIT on, nearly every event is in a trace. */
      k->kind = MP_LOC_LUA;
      k->addr = 0;
      k->str = tr.chunk;
    } else if (p->group == MP_GROUP_FUNCTION &&
	       (f = mp_map_find(&p->trace_funcs, (uint32_t)ev->loc)) &&
	       f->a >> 32) {
      k->kind = MP_LOC_LUA;
      k->addr = 0;
      k->str = tr.chunk;
      k->linedefined = (uint32_t)f->a;
    } else {
      k->kind = MP_LOC_TRACE;
      k->str = tr.chunk;
      k->line = tr.line;
    }
    break;
  }
  case LJM_SRC_INTERNAL:
  default:	/* The reader delivers no other source. */
    k->kind = MP_LOC_INTERNAL;
    break;
  }
}

/* The generation that guards cached resolutions of (src, loc). */
static inline uint32_t *generation(struct mp_profile *p, unsigned src,
				   uint64_t loc)
{
  static uint32_t internal_gen = 1;	/* Internal never changes. */
  if (src == LJM_SRC_CFUNC)
    return &p->cfunc_gen;
  if (src == LJM_SRC_INTERNAL)
    return &internal_gen;
  return &p->addr_gen[((loc ^ src) * 0x9e3779b97f4a7c15ull) >>
		      (64 - MP_ADDR_GEN_BITS)];
}

static void reset_cache(struct mp_profile *p)
{
  unsigned i;
  memset(p->cache, 0, sizeof(p->cache));	/* Generation 0: invalid. */
  p->last_id = 0;
  p->cfunc_gen = 1;
  for (i = 0; i < MP_ADDR_GENS; i++)
    p->addr_gen[i] = 1;
}

/* A symbol changed what (src, loc) resolves to. */
static void invalidate(struct mp_profile *p, unsigned src, uint64_t loc)
{
  uint32_t *gen = generation(p, src, loc);
  if (++*gen == 0)
    reset_cache(p);	/* Wrapped: old entries could look valid again. */
}

static inline size_t cache_slot(const struct mp_event *ev)
{
  return (size_t)(((ev->loc ^ ev->loc_line << 40 ^ ev->src) *
		   0x9e3779b97f4a7c15ull) >> (64 - MP_LOC_CACHE_BITS));
}

static int64_t event_loc_slow(struct mp_profile *p, const struct mp_event *ev);

static inline int64_t event_loc(struct mp_profile *p,
				const struct mp_event *ev)
{
  int64_t id;
  if (p->no_locations && p->nlocs)
    return 0;	/* stat: one location for all. */
  if (ev->src == LJM_SRC_INTERNAL && p->internal_id && !p->no_locations)
    return p->internal_id - 1;
  if (p->last_id && ev->loc == p->last_loc && ev->loc_line == p->last_line &&
      ev->src == p->last_src)
    return p->last_id - 1;
  id = event_loc_slow(p, ev);
  if (id >= 0 && !p->no_locations) {
    if (ev->src == LJM_SRC_INTERNAL) {
      p->internal_id = (uint32_t)id + 1;
    } else {
      p->last_loc = ev->loc;
      p->last_line = ev->loc_line;
      p->last_src = ev->src;
      p->last_id = (uint32_t)id + 1;
    }
  }
  return id;
}

static int64_t event_loc_slow(struct mp_profile *p, const struct mp_event *ev)
{
  struct mp_loc_cache_entry *c = &p->cache[cache_slot(ev)];
  struct mp_loc k;
  int64_t id;

  if (p->no_locations) {
    /* Everything in one internal location: only the totals are wanted. */
    static const struct mp_event internal = {.src = LJM_SRC_INTERNAL};
    if (p->nlocs)
      return 0;
    resolve(p, &internal, &k);
    return loc_intern(p, &k);
  }

  uint32_t gen = *generation(p, ev->src, ev->loc);

  if (c->gen == gen && c->loc == ev->loc && c->line == ev->loc_line &&
      c->src == ev->src)
    return c->id;
  resolve(p, ev, &k);
  id = loc_intern(p, &k);
  if (id < 0)
    return -1;
  c->gen = gen;
  c->loc = ev->loc;
  c->line = ev->loc_line;
  c->src = ev->src;
  c->id = (uint32_t)id;
  return id;
}

/* -- Events -------------------------------------------------------------- */

/* The function a trace starts in, as of its definition (the prototype's
** address may be reused before the trace allocates), like its chunk. */
static int note_trace_function(struct mp_profile *p, const struct mp_event *ev)
{
  struct mp_proto pt;
  struct mp_map_entry *e;
  int added;

  e = mp_map_insert(&p->trace_funcs, (uint32_t)ev->sym_addr, &added);
  if (!e)
    return -1;
  e->a = mp_symtab_proto(&p->symtab, ev->sym_proto, &pt) ?
	 (uint64_t)1 << 32 | pt.linedefined : 0;
  return 0;
}

static int add_symbol(struct mp_profile *p, const struct mp_event *ev)
{
  uint32_t name;
  int rc = 0;

  /* Cached resolutions that this symbol changes are now stale. A
  ** prototype only changes Lua events at its address: traces are named
  ** when they are defined. */
  p->last_id = 0;
  invalidate(p, mp_symbol_source(mp_event_symbol_kind(ev->type)),
	     ev->sym_addr);
  if (!ev->in_symtab)
    p->file.n_sym_events++;
  if (p->no_locations) {
    /* Counted, not kept: nothing will be named. */
    p->file.n_sym_proto += ev->type == MP_EV_SYM_LFUNC;
    p->file.n_sym_cfunc += ev->type == MP_EV_SYM_CFUNC;
    p->file.n_sym_trace += ev->type == MP_EV_SYM_TRACE;
    return 0;
  }
  switch (ev->type) {
  case MP_EV_SYM_LFUNC:
    p->file.n_sym_proto++;
    name = mp_strings_intern(&p->strings, ev->name, ev->name_len);
    if (name == MP_NO_STRING)
      return -1;
    rc = mp_symtab_add_proto(&p->symtab, ev->sym_addr, name,
			     (uint32_t)ev->sym_line);
    break;
  case MP_EV_SYM_CFUNC:
    p->file.n_sym_cfunc++;
    name = mp_strings_intern(&p->strings, ev->name, ev->name_len);
    if (name == MP_NO_STRING)
      return -1;
    rc = mp_symtab_add_csym(&p->symtab, ev->sym_addr, name);
    break;
  case MP_EV_SYM_TRACE:
    p->file.n_sym_trace++;
    rc = mp_symtab_add_trace(&p->symtab, (uint32_t)ev->sym_addr,
			     ev->sym_proto, (uint32_t)ev->sym_line);
    if (rc == 0 && p->group == MP_GROUP_FUNCTION)
      rc = note_trace_function(p, ev);
    break;
  default:
    break;
  }
  return rc;
}

/* -- Override pairs ------------------------------------------------------ */

static inline size_t ov_size(const struct mp_profile *p)
{
  return p->override_values ? sizeof(struct mp_override) : sizeof(uint64_t);
}

/* The key of pair i: the first word of its element either way. */
static inline uint64_t *ov_keyp(const struct mp_profile *p, uint64_t i)
{
  return (uint64_t *)((char *)p->ov + i * ov_size(p));
}

static inline uint64_t ov_key(const struct mp_profile *p, uint64_t i)
{
  return *ov_keyp(p, i);
}

static inline int key_less(const uint64_t *x, const uint64_t *y)
{
  return *x < *y;
}

static inline int override_less(const struct mp_override *x,
				const struct mp_override *y)
{
  return x->key < y->key;
}

MP_SORT_DEFINE(sort_keys, uint64_t, key_less)
MP_SORT_DEFINE(sort_overrides, struct mp_override, override_less)

/* Sort the pairs and merge the copies of each key (their counts add up). */
static void ov_compact(struct mp_profile *p)
{
  uint64_t i, n = 0;

  if (p->override_values) {
    struct mp_override *o = p->ov;
    sort_overrides(o, (size_t)p->nov);
    for (i = 0; i < p->nov; i++) {
      if (n && o[n - 1].key == o[i].key) {
	o[n - 1].count += o[i].count;
	o[n - 1].bytes += o[i].bytes;
      } else {
	o[n++] = o[i];
      }
    }
  } else {
    uint64_t *k = p->ov, *tmp = malloc((size_t)p->nov * sizeof(*k) + 1);
    if (tmp)
      mp_radix_sort_u64(k, tmp, (size_t)p->nov);
    else
      sort_keys(k, (size_t)p->nov);
    free(tmp);
    for (i = 0; i < p->nov; i++)
      if (!n || k[n - 1] != k[i])
	k[n++] = k[i];
  }
  p->nov = n;
  p->ov_maybe_dup = 0;
}

/*
** The pair array is full. Copies of a pair are appended only when a
** location's blocks are released by code other than last time (the memo
** missed): when those may be a quarter of the array, merge them first;
** grow when that leaves less than a quarter free.
*/
static int ov_make_room(struct mp_profile *p)
{
  uint64_t ncap;
  void *na;

  if (p->ov_maybe_dup > p->nov / 4)
    ov_compact(p);
  if (p->nov < p->ov_cap - p->ov_cap / 4)
    return 0;
  ncap = p->ov_cap ? p->ov_cap * 2 : 1024;
  if (ncap > UINT32_MAX - 1)
    ncap = UINT32_MAX - 1;
  if (ncap <= p->nov)
    return -1;
  na = realloc(p->ov, (size_t)ncap * ov_size(p));
  if (!na)
    return -1;
  p->ov = na;
  p->ov_cap = ncap;
  return 0;
}

/* Replace the orig part of every key through map. */
static void ov_map_origs(struct mp_profile *p, const uint32_t *map)
{
  uint64_t i;
  for (i = 0; i < p->nov; i++) {
    uint64_t *k = ov_keyp(p, i);
    *k = (*k & ~(uint64_t)UINT32_MAX) | map[(uint32_t)*k];
  }
}

uint64_t mp_profile_sort_overrides(struct mp_profile *p,
				   const uint32_t *orig_rank,
				   const uint32_t *rank_orig)
{
  if (p->ov_sorted)
    return p->nov;
  /* Sorting on the rank puts each list in that order; the key's upper
  ** half, which lookups use, is sorted either way. */
  if (orig_rank)
    ov_map_origs(p, orig_rank);
  ov_compact(p);
  if (orig_rank)
    ov_map_origs(p, rank_orig);
  if (p->nov && p->nov < p->ov_cap) {
    void *fit = realloc(p->ov, (size_t)p->nov * ov_size(p));
    if (fit) {
      p->ov = fit;
      p->ov_cap = p->nov;
    }
  }
  p->ov_sorted = 1;
  return p->nov;
}

uint64_t mp_profile_overrides_of(const struct mp_profile *p, int is_free,
				 uint32_t loc, uint64_t *end)
{
  uint64_t lo = 0, hi = p->nov, first;
  uint64_t want = mp_override_key(is_free, loc, 0) >> 32;
  /* Sorted on the upper half; the lower half is in rank order. */
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (ov_key(p, mid) >> 32 < want)
      lo = mid + 1;
    else
      hi = mid;
  }
  first = lo;
  while (lo < p->nov && ov_key(p, lo) >> 32 == want)
    lo++;
  *end = lo;
  return first;
}

/* A block leaves the heap (free, or the old half of a realloc). */
static int release_block(struct mp_profile *p, uint32_t at, uint64_t addr,
			 uint64_t size, int is_free)
{
  struct mp_block b;
  struct mp_lrec *orig;
  uint64_t key, i;
  uint32_t memo;

  if (addr == 0)
    return 0;	/* free(NULL), realloc(NULL, n): nothing was held. */
  if (!mp_heap_take(&p->heap, addr, &b)) {
    p->file.untracked_frees++;
    p->file.untracked_bytes += size;
    return 0;
  }
  orig = &p->locs[b.loc];
  orig->released++;
  orig->held_bytes -= b.size;
  p->file.live_bytes -= b.size;
  p->file.live_blocks--;
  if (p->no_overrides)
    return 0;
  /* Pairs are appended unsorted and merged later; the memo finds the
  ** pair again when the same code releases this location's blocks. */
  key = mp_override_key(is_free, at, b.loc);
  memo = orig->ov_memo[is_free];
  if (memo && memo <= p->nov && ov_key(p, memo - 1) == key) {
    i = memo - 1;
  } else {
    if (p->nov == p->ov_cap && ov_make_room(p) < 0)
      return -1;
    /* A first release can't be a copy: that keeps merges rare. */
    p->ov_maybe_dup += memo != 0;
    i = p->nov++;
    memset(ov_keyp(p, i), 0, ov_size(p));
    *ov_keyp(p, i) = key;
    orig->ov_memo[is_free] = (uint32_t)i + 1;
  }
  if (p->override_values) {
    struct mp_override *o = &((struct mp_override *)p->ov)[i];
    o->count++;
    o->bytes += b.size;
  }
  return 0;
}

/* A block enters the heap (alloc, or the new half of a realloc). */
static int create_block(struct mp_profile *p, uint32_t at, uint64_t addr,
			uint64_t size)
{
  struct mp_block old;
  struct mp_lrec *l;
  int rc;

  if (addr == 0)
    return 0;	/* A failed allocation holds nothing. */
  rc = mp_heap_put(&p->heap, addr, size, at, &old);
  if (rc < 0)
    return -1;
  if (rc == 1) {
    /* The stream never freed the previous block here: drop it. */
    struct mp_lrec *o = &p->locs[old.loc];
    o->released++;
    o->held_bytes -= old.size;
    p->file.live_bytes -= old.size;
    p->file.live_blocks--;
    p->file.overwritten++;
  }
  l = &p->locs[at];
  l->created++;
  l->held_bytes += size;
  p->file.live_bytes += size;
  p->file.live_blocks++;
  return 0;
}

/* Account a memory event whose location is already resolved to id. */
static int account(struct mp_profile *p, const struct mp_event *ev,
		   uint32_t id)
{
  struct mp_lrec *l = &p->locs[id];
  struct mp_lext *e;
  uint64_t evno;

  switch (ev->type) {
  case MP_EV_ALLOC:
    p->file.n_alloc++;
    p->file.bytes_allocated += ev->new_size;
    l->n_alloc++;
    l->alloc_bytes += ev->new_size;
    if (create_block(p, (uint32_t)id, ev->new_addr, ev->new_size) < 0)
      goto oom;
    break;
  case MP_EV_FREE:
    p->file.n_free++;
    p->file.bytes_freed += ev->old_size;
    if (!(e = rec_ext(p, l)))
      goto oom;
    e->n_free++;
    e->free_bytes += ev->old_size;
    if (release_block(p, (uint32_t)id, ev->old_addr, ev->old_size, 1) < 0)
      goto oom;
    break;
  case MP_EV_REALLOC:
    p->file.n_realloc++;
    p->file.bytes_allocated += ev->new_size;
    p->file.bytes_freed += ev->old_size;
    if (!(e = rec_ext(p, l)))
      goto oom;
    e->n_realloc++;
    e->realloc_new += ev->new_size;
    e->realloc_old += ev->old_size;
    if (release_block(p, (uint32_t)id, ev->old_addr, ev->old_size, 0) < 0 ||
	create_block(p, (uint32_t)id, ev->new_addr, ev->new_size) < 0)
      goto oom;
    break;
  default:
    break;
  }
  if (p->file.live_bytes > p->file.peak_bytes) {
    evno = p->file.n_alloc + p->file.n_free + p->file.n_realloc;
    p->file.peak_bytes = p->file.live_bytes;
    p->file.peak_event = evno;
  }
  return 0;
oom:
  p->oom = 1;
  return -1;
}

int mp_profile_event(struct mp_profile *p, const struct mp_event *ev)
{
  int64_t id;

  if (mp_event_is_symbol(ev->type)) {
    if (add_symbol(p, ev) < 0)
      goto oom;
    return 0;
  }
  id = event_loc(p, ev);
  if (id < 0)
    goto oom;
  return account(p, ev, (uint32_t)id);
oom:
  p->oom = 1;
  return -1;
}

#define BATCH 16
#define PEEK_MIN_LOCS 65536

/* Stage 1: start loading the heap slots and the location cache entry. */
static void prefetch_event(struct mp_profile *p, const struct mp_event *ev)
{
  if (ev->type != MP_EV_ALLOC)
    mp_heap_prefetch(&p->heap, ev->old_addr);
  if (ev->type != MP_EV_FREE)
    mp_heap_prefetch(&p->heap, ev->new_addr);
  __builtin_prefetch(&p->cache[cache_slot(ev)]);
}

/*
** Stage 2: resolve the location, then start loading what accounting will
** touch: the location, the location that owns the old block, and the
** override pair of the two. The heap may change before stage 3 gets
** there; these are only hints.
*/
static int64_t prepare_event(struct mp_profile *p, const struct mp_event *ev)
{
  int64_t id = event_loc(p, ev);
  if (id < 0)
    return id;
  __builtin_prefetch(&p->locs[id]);
  /* Worth a second heap probe only when the locations are too many
  ** for the caches. */
  if (ev->type != MP_EV_ALLOC && ev->old_addr && p->nlocs > PEEK_MIN_LOCS) {
    struct mp_block b;
    if (mp_heap_peek(&p->heap, ev->old_addr, &b))
      __builtin_prefetch(&p->locs[b.loc]);
  }
  return id;
}

/* Stages 2 and 3 over evs[0..k), whose stage 1 is done; only the last
** may be a symbol event. Returns the memory events accounted, or -1. */
static int run_chunk(struct mp_profile *p, const struct mp_event *evs, int k)
{
  int64_t ids[BATCH];
  int i, n = 0;

  for (i = 0; i < k; i++)
    if (!mp_event_is_symbol(evs[i].type) &&
	(ids[i] = prepare_event(p, &evs[i])) < 0)
      goto oom;
  for (i = 0; i < k; i++) {
    if (mp_event_is_symbol(evs[i].type)) {
      if (mp_profile_event(p, &evs[i]) < 0)
	goto oom;
      continue;
    }
    if (account(p, &evs[i], (uint32_t)ids[i]) < 0)
      goto oom;
    n++;
  }
  return n;
oom:
  p->oom = 1;
  return -1;
}

int64_t mp_profile_events(struct mp_profile *p, const struct mp_event *evs,
			  size_t count)
{
  int64_t total = 0;
  size_t at = 0;

  while (at < count) {
    int k, n;
    for (k = 0; k < BATCH && at + (size_t)k < count; k++) {
      if (mp_event_is_symbol(evs[at + (size_t)k].type)) {
	k++;
	break;
      }
      prefetch_event(p, &evs[at + (size_t)k]);
    }
    n = run_chunk(p, evs + at, k);
    if (n < 0)
      return -1;
    total += n;
    at += (size_t)k;
  }
  return total;
}

enum mp_status mp_profile_read(struct mp_profile *p, struct mp_reader *r,
			       uint64_t *events,
			       void (*tick)(void *ctx, uint64_t offset),
			       void *ctx)
{
  struct mp_event batch[BATCH];
  enum mp_status st = MP_OK;
  uint64_t n = 0;
  int k, done;

  while (st == MP_OK) {
    /* Symbol events end a batch: their names live in the reader's
    ** buffer only until the next read, and they change resolution. */
    for (k = 0; k < BATCH; k++) {
      st = mp_reader_next(r, &batch[k]);
      if (st != MP_OK)
	break;
      if (mp_event_is_symbol(batch[k].type)) {
	k++;
	break;
      }
      prefetch_event(p, &batch[k]);
    }
    done = run_chunk(p, batch, k);
    if (done < 0) {
      *events = n;
      return MP_ERROR;
    }
    if (tick && (n >> 20) != ((n + (uint64_t)done) >> 20))
      tick(ctx, mp_reader_offset(r));
    n += (uint64_t)done;
  }
  *events = n;
  return st;
}

void mp_profile_done_reading(struct mp_profile *p)
{
  mp_symtab_free(&p->symtab);
  mp_symtab_init(&p->symtab);
  mp_heap_free(&p->heap);
  mp_heap_init(&p->heap);
  mp_map_free(&p->trace_funcs);
  mp_map_init(&p->trace_funcs);
  free(p->loc_slots);
  p->loc_slots = NULL;
  p->loc_mask = 0;
}

/* The next file is another process: its addresses mean other things. */
static void next_file(struct mp_profile *p)
{
  memset(&p->file, 0, sizeof(p->file));
  mp_symtab_free(&p->symtab);
  mp_symtab_init(&p->symtab);
  mp_heap_clear(&p->heap);
  mp_map_clear(&p->trace_funcs);
  reset_cache(p);
  p->file_strings = p->strings.count;
}

void mp_profile_end_file(struct mp_profile *p, int truncated)
{
  struct mp_summary *t = &p->total, *f = &p->file;

  t->n_alloc += f->n_alloc;
  t->n_realloc += f->n_realloc;
  t->n_free += f->n_free;
  t->n_sym_proto += f->n_sym_proto;
  t->n_sym_cfunc += f->n_sym_cfunc;
  t->n_sym_trace += f->n_sym_trace;
  t->n_sym_events += f->n_sym_events;
  t->bytes_allocated += f->bytes_allocated;
  t->bytes_freed += f->bytes_freed;
  t->live_bytes += f->live_bytes;
  t->live_blocks += f->live_blocks;
  if (f->peak_bytes > t->peak_bytes || t->files == 0) {
    t->peak_bytes = f->peak_bytes;
    t->peak_event = f->peak_event;
    t->peak_file = (uint32_t)t->files;
  }
  t->untracked_frees += f->untracked_frees;
  t->untracked_bytes += f->untracked_bytes;
  t->overwritten += f->overwritten;
  t->files++;
  if (truncated)
    t->truncated_files++;
  next_file(p);
}

void mp_profile_drop_file(struct mp_profile *p)
{
  /* Names are dropped only when no location of this file may use one. */
  if (!p->file.n_alloc && !p->file.n_realloc && !p->file.n_free)
    mp_strings_truncate(&p->strings, p->file_strings);
  next_file(p);
}
