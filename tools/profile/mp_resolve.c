/*
** Resolution: the key of an event's location, from the symbols known at
** that point of the stream. A small cache keyed by the event's source,
** location key (mp_loc_key) and line sits in front of the symbol
** lookups; generations, bumped by each symbol, tell its entries that are
** stale.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stddef.h>
#include <string.h>

#include "mp_profile_int.h"

/* Build the key of an event's location from the symbols known now (Lua
** code grouped by line takes mp_resolve_fill's shorter way). */
static inline __attribute__((always_inline)) void
resolve(struct mp_profile *p, unsigned src, uint64_t loc, uint64_t loc_line,
	struct mp_loc *k)
{
  memset(k, 0, offsetof(struct mp_loc, n_alloc));	/* The identity. */
  k->str = MP_NO_STRING;
  switch (src) {
  case LJM_SRC_LFUNC: {
    struct mp_proto pt;
    if (!mp_symtab_proto(&p->symtab, loc, &pt)) {
      k->kind = MP_LOC_LUA_UNKNOWN;
      k->addr = loc;
      k->line = p->group == MP_GROUP_LINE || p->group == MP_GROUP_FRAMES ?
		(uint32_t)loc_line : 0;
      break;
    }
    k->kind = MP_LOC_LUA;
    k->str = pt.chunk;
    if (p->group != MP_GROUP_CHUNK && p->group != MP_GROUP_LINE)
      k->linedefined = pt.linedefined;
    if (p->group == MP_GROUP_LINE || p->group == MP_GROUP_FRAMES)
      k->line = (uint32_t)loc_line;
    break;
  }
  case LJM_SRC_CFUNC: {
    struct mp_csym cs;
    if (mp_symtab_csym(&p->symtab, loc, &cs)) {
      k->kind = MP_LOC_C;
      k->str = cs.name;
      k->addr = cs.addr;
    } else {
      k->kind = MP_LOC_C_UNKNOWN;
      k->addr = loc;
    }
    break;
  }
  case LJM_SRC_TRACE: {
    struct mp_trace tr;
    const struct mp_map_entry *f;
    k->addr = loc;
    if (!mp_symtab_trace(&p->symtab, (uint32_t)loc, &tr)) {
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
	       (f = mp_map_find(&p->trace_funcs, (uint32_t)loc)) &&
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

void mp_resolve_reset(struct mp_profile *p)
{
  unsigned i;
  memset(p->cache, 0, sizeof(p->cache));	/* Generation 0: invalid. */
  p->last_id = 0;
  p->cfunc_gen = 1;
  p->internal_gen = 1;
  for (i = 0; i < MP_ADDR_GENS; i++)
    p->addr_gen[i] = 1;
}

void mp_resolve_invalidate_key(struct mp_profile *p, unsigned src,
			       uint64_t key)
{
  uint32_t *gen = mp_resolve_gen(p, src, key);
  if (++*gen == 0)
    mp_resolve_reset(p);	/* Wrapped: old entries could look valid again. */
}

void mp_resolve_invalidate(struct mp_profile *p, unsigned src, uint64_t loc)
{
  int uncached = 0;
  loc = mp_loc_key(src, loc, &uncached);
  if (uncached && src == LJM_SRC_LFUNC)
    return;	/* Never cached. */
  if (src == LJM_SRC_INTERNAL)
    return;
  mp_resolve_invalidate_key(p, src, loc);
}

/* The other locations, out of line: the struct and the switch cost the
** common case's registers. */
static __attribute__((noinline)) int64_t
resolve_intern(struct mp_profile *p, unsigned src, uint64_t loc,
	       uint64_t line)
{
  struct mp_loc k;
  resolve(p, src, mp_loc_is_address(src) ? mp_fast_key_value(loc) : loc, line,
	  &k);
  return mp_locs_intern(p, &k);
}

int64_t mp_resolve_fill(struct mp_profile *p, struct mp_loc_cache_entry *c,
			uint32_t gen, unsigned src, uint64_t loc,
			uint64_t line)
{
  struct mp_proto pt;
  int64_t id;

  if (src == LJM_SRC_LFUNC && p->group == MP_GROUP_LINE &&
      mp_symtab_proto(&p->symtab, mp_fast_key_value(loc), &pt))
    id = mp_locs_intern_lua_line(p, pt.chunk, (uint32_t)line);
  else
    id = resolve_intern(p, src, loc, line);
  if (id < 0)
    return -1;
  c->gen = gen;
  c->loc = loc;
  c->line = line;
  c->src = src;
  c->id = (uint32_t)id;
  return id;
}

int64_t mp_resolve_uncached(struct mp_profile *p, unsigned src, uint64_t loc,
			    uint64_t line)
{
  struct mp_loc k;
  if (p->no_locations) {
    /* Everything in one internal location: only the totals are wanted. */
    if (p->nlocs)
      return 0;
    src = LJM_SRC_INTERNAL;
    loc = line = 0;
  }
  resolve(p, src, loc, line, &k);
  return mp_locs_intern(p, &k);
}
