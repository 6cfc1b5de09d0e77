/*
** Symbol tables resolved as the stream goes.
**
** C symbols need "nearest at or below" lookups while new symbols keep
** arriving (a shared object loaded mid-run), so they are kept as a few
** sorted runs of doubling sizes, like a binary counter: adding a symbol
** merges the runs it carries into, O(log n) amortised; a lookup binary
** searches each run. Newer runs are at lower levels, so on equal
** addresses the lowest level wins, and merging drops the older entry.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_symtab.h"

void mp_symtab_init(struct mp_symtab *t)
{
  memset(t, 0, sizeof(*t));
  mp_map_init(&t->protos);
  mp_map_init(&t->traces);
}

void mp_symtab_free(struct mp_symtab *t)
{
  int i;
  mp_map_free(&t->protos);
  mp_map_free(&t->traces);
  for (i = 0; i < MP_CSYM_LEVELS; i++)
    free(t->levels[i].syms);
  memset(t, 0, sizeof(*t));
}

int mp_symtab_proto(struct mp_symtab *t, uint64_t addr, struct mp_proto *out)
{
  if (t->proto_memo == MP_PROTO_MEMO_NONE || addr != t->proto_memo_addr) {
    struct mp_map_entry *e = mp_map_find(&t->protos, addr);
    t->proto_memo_addr = addr;
    t->proto_memo = e ? MP_PROTO_MEMO_FOUND : MP_PROTO_MEMO_ABSENT;
    t->proto_memo_a = e ? e->a : 0;
  }
  if (t->proto_memo == MP_PROTO_MEMO_ABSENT)
    return 0;
  out->chunk = (uint32_t)t->proto_memo_a;
  out->linedefined = (uint32_t)(t->proto_memo_a >> 32);
  return 1;
}

int mp_symtab_add_trace(struct mp_symtab *t, uint32_t traceno,
			uint64_t proto, uint32_t line)
{
  struct mp_proto pt;
  int added;
  struct mp_map_entry *e;
  uint32_t chunk = MP_NO_STRING;

  /* The trace is named after its prototype as known now: the prototype
  ** address may be reused by the time the trace allocates. */
  if (mp_symtab_proto(t, proto, &pt))
    chunk = pt.chunk;
  e = mp_map_insert(&t->traces, traceno, &added);
  if (!e)
    return -1;
  e->a = (uint64_t)chunk | (uint64_t)line << 32;
  e->b = proto;
  return 0;
}

int mp_symtab_trace(struct mp_symtab *t, uint32_t traceno,
		    struct mp_trace *out)
{
  struct mp_map_entry *e = mp_map_find(&t->traces, traceno);
  if (!e)
    return 0;
  out->chunk = (uint32_t)e->a;
  out->line = (uint32_t)(e->a >> 32);
  out->proto = e->b;
  return 1;
}

/* Merge newer into older (both sorted); on equal addresses keep newer. */
static struct mp_csym *merge_runs(const struct mp_csym *newer, size_t nn,
				  const struct mp_csym *older, size_t no,
				  size_t *count)
{
  struct mp_csym *out = malloc((nn + no) * sizeof(*out));
  size_t i = 0, j = 0, k = 0;
  if (!out)
    return NULL;
  while (i < nn || j < no) {
    if (j == no || (i < nn && newer[i].addr <= older[j].addr)) {
      if (j < no && older[j].addr == newer[i].addr)
	j++;	/* Superseded. */
      out[k++] = newer[i++];
    } else {
      out[k++] = older[j++];
    }
  }
  *count = k;
  return out;
}

int mp_symtab_add_csym(struct mp_symtab *t, uint64_t addr, uint32_t name)
{
  struct mp_csym *carry = malloc(sizeof(*carry));
  size_t ncarry = 1;
  int lvl;

  if (!carry)
    return -1;
  carry->addr = addr;
  carry->name = name;
  for (lvl = 0; lvl < MP_CSYM_LEVELS; lvl++) {
    struct mp_csym_level *L = &t->levels[lvl];
    struct mp_csym *merged;
    if (!L->syms) {
      L->syms = carry;
      L->count = ncarry;
      return 0;
    }
    merged = merge_runs(carry, ncarry, L->syms, L->count, &ncarry);
    free(carry);
    if (!merged)
      return -1;
    free(L->syms);
    L->syms = NULL;
    L->count = 0;
    carry = merged;
  }
  free(carry);	/* Unreachable: 2^48 symbols. */
  return -1;
}

int mp_symtab_csym(const struct mp_symtab *t, uint64_t addr,
		   struct mp_csym *out)
{
  int lvl, found = 0;

  for (lvl = 0; lvl < MP_CSYM_LEVELS; lvl++) {
    const struct mp_csym_level *L = &t->levels[lvl];
    size_t lo = 0, hi = L->count;
    if (!L->syms)
      continue;
    /* First index with addr > wanted; the one before is the candidate. */
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (L->syms[mid].addr <= addr)
	lo = mid + 1;
      else
	hi = mid;
    }
    if (lo == 0)
      continue;
    /* Strictly greater only: on a tie the lower (newer) level wins. */
    if (!found || L->syms[lo - 1].addr > out->addr) {
      *out = L->syms[lo - 1];
      found = 1;
    }
  }
  return found;
}
