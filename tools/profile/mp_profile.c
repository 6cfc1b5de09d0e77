/*
** The aggregator (mp_profile.h): its lifetime, files, accessors, and one
** event at a time. mp_profile_int.h says which file does what.
**
** The hot path is one memory event: find its location (mp_resolve, a
** small cache in front of the symbol lookups, invalidated whenever a
** symbol arrives), update the live heap, add to the location's counters
** (mp_live.h).
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "mp_live.h"
#include "mp_profile_int.h"
#include "mp_sample.h"

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
  mp_map_init(&p->loc_snodes);
  mp_map_init(&p->sample_blocks);
  mp_map_init(&p->sites);
  mp_resolve_reset(p);
  mp_timeline_begin_file(p);
}

struct mp_profile *mp_profile_new(enum mp_group group, unsigned needs)
{
  struct mp_profile *p = malloc(sizeof(*p));
  if (!p)
    return NULL;
  mp_profile_init(p, group);
  p->no_locations = (needs & MP_PROFILE_TOTALS_ONLY) != 0;
  p->ov_mode = needs & MP_PROFILE_NO_OVERRIDES ? MP_OV_NONE
	       : needs & MP_PROFILE_OVERRIDE_VALUES ? MP_OV_VALUES
	       : MP_OV_KEYS;
  p->pk_on = (needs & MP_PROFILE_PEAK) != 0;
  p->graph_want = (needs & MP_PROFILE_GRAPH) != 0;
  if (((needs & MP_PROFILE_KINDS) && mp_kinds_new(p) < 0) ||
      ((needs & MP_PROFILE_LIFETIMES) && mp_life_new(p) < 0)) {
    mp_profile_delete(p);
    return NULL;
  }
  if (p->kinds)
    p->kinds->ext_only = (needs & MP_PROFILE_KINDS_EXT) != 0;
  return p;
}

void mp_profile_delete(struct mp_profile *p)
{
  if (!p)
    return;
  mp_profile_free(p);
  free(p);
}

enum mp_group mp_profile_group(const struct mp_profile *p)
{
  return p->group;
}

int mp_profile_oom(const struct mp_profile *p)
{
  return p->oom;
}

void mp_profile_set_oom(struct mp_profile *p)
{
  p->oom = 1;
}

const struct mp_strings *mp_profile_strings(const struct mp_profile *p)
{
  return &p->strings;
}

const struct mp_summary *mp_profile_total(const struct mp_profile *p)
{
  return &p->total;
}

uint32_t mp_profile_nlocs(const struct mp_profile *p)
{
  return p->nlocs;
}

uint32_t mp_profile_nstacks(const struct mp_profile *p)
{
  return p->nsnodes;
}

void mp_profile_frame(const struct mp_profile *p, uint32_t id,
		      struct mp_frame *out)
{
  const struct mp_snode *n = &p->snodes[id];
  out->parent = n->parent;
  out->tag = n->frame;
  out->loc = n->loc;
  out->name = n->name;
  out->site = n->aux;
  out->leaf = n->leaf;
}

int mp_profile_stack(const struct mp_profile *p, uint32_t id,
		     struct mp_stack_counts *out)
{
  const struct mp_scount *c = &p->scounts[id];
  out->n_alloc = c->n_alloc;
  out->alloc_bytes = c->alloc_bytes;
  out->n_realloc = c->n_realloc;
  out->realloc_bytes = c->realloc_bytes;
  out->held_blocks = c->held_blocks;
  out->held_bytes = c->held_bytes;
  out->temporary = c->temporary;
  out->temporary_bytes = c->temporary_bytes;
  return (c->n_alloc | c->n_realloc | c->held_blocks) != 0;
}

void mp_profile_free(struct mp_profile *p)
{
  mp_strings_free(&p->strings);
  mp_symtab_free(&p->symtab);
  mp_heap_free(&p->heap);
  mp_graph_free_all(p);
  mp_map_free(&p->trace_funcs);
  mp_map_free(&p->sample_blocks);
  free(p->ov);
  free(p->locs);
  free(p->exts);
  free(p->auxs);
  free(p->temps);
  free(p->loc_slots);
  mp_stacks_free(p);
  mp_timeline_free(p);
  mp_kinds_free(p);
  mp_life_free(p);
  mp_snapshot_free(p);
  mp_peak_free(p);
  memset(p, 0, sizeof(*p));
}

int mp_live_grow_temps(struct mp_profile *p, uint32_t id)
{
  uint32_t n = p->ntemps ? p->ntemps : 64;
  struct mp_ltemp *t;
  while (n <= id)
    n = n > UINT32_MAX / 2 ? UINT32_MAX : 2 * n;
  if (n <= id || !(t = realloc(p->temps, (size_t)n * sizeof(*t))))
    return -1;
  memset(t + p->ntemps, 0, (size_t)(n - p->ntemps) * sizeof(*t));
  p->temps = t;
  p->ntemps = n;
  return 0;
}

int mp_profile_event(struct mp_profile *p, const struct mp_event *ev)
{
  int64_t id;
  uint32_t node = 0;
  int kind = 0;

  if (mp_event_is_ext(ev->type)) {
    if (mp_stacks_symbol(p, ev) < 0)
      goto oom;
    return 0;
  }
  if (mp_event_is_symbol(ev->type)) {
    if (mp_symbols_add(p, ev) < 0)
      goto oom;
    return 0;
  }
  if (ev->src == LJM_SRC_STACK && !p->file_ext && mp_stacks_begin_file(p) < 0)
    goto oom;
  if (p->in_census) {	/* What is live now, not an event. */
    if (ev->type == MP_EV_ALLOC && p->graph_want &&
	mp_graph_block(p, ev, (unsigned)(ev->objkind >= 0 ? ev->objkind
							  : 0)) < 0)
      goto oom;
    if (ev->type == MP_EV_ALLOC && p->census_on &&
	mp_snapshot_census(p, ev, (unsigned)(ev->objkind >= 0 ? ev->objkind
							     : 0)) < 0)
      goto oom;
    return 0;
  }
  if (mp_kinds_on(p) && (kind = mp_kinds_keep(p, ev)) < 0) {
    if (kind == MP_KINDS_OOM)
      goto oom;
    return 0;	/* Of a kind left out. */
  }
  if (p->in_snap && ev->type == MP_EV_ALLOC) {
    if (mp_snapshot_block(p, ev, (unsigned)(ev->objkind >= 0 ? ev->objkind
							    : 0)) < 0 ||
	mp_graph_block(p, ev, (unsigned)(ev->objkind >= 0 ? ev->objkind
							  : 0)) < 0)
      goto oom;
    return 0;
  }
  if (ev->src == LJM_SRC_STACK && p->file_stacks) {
    /* The reader checked that the node was announced. */
    node = p->fnodes[ev->loc - 1];
    id = p->snodes[node].leaf;
  } else if (ev->src == LJM_SRC_STACK) {
    id = mp_resolve_uncached(p, LJM_SRC_INTERNAL, 0, 0);	/* stat. */
  } else {
    id = mp_resolve(p, ev);
  }
  if (id < 0)
    goto oom;
  if (p->file_stacks && !node && ev->type != MP_EV_FREE &&
      !(node = mp_stacks_of_loc(p, (uint32_t)id)))
    goto oom;
  if (mp_kinds_on(p) && mp_kinds_account_node(p, ev, (unsigned)kind, (uint32_t)id,
					p->file_stacks ? node : 0) < 0)
    goto oom;
  if (p->life && mp_life_account(p, ev, (uint32_t)id,
				 p->file_stacks ? node : 0) < 0)
    goto oom;
  if (p->file.sample_mean)
    return mp_sample_account(p, ev, (uint32_t)id, node);
  return mp_live_account(p, ev, (uint32_t)id, node);
oom:
  p->oom = 1;
  return -1;
}

/* The counts by kind and the bytes of every location together. */
static void loc_sums(const struct mp_profile *p, struct mp_summary *s)
{
  uint32_t i;
  memset(s, 0, sizeof(*s));
  for (i = 0; i < p->nlocs; i++) {
    const struct mp_lrec *r = &p->locs[i];
    s->n_alloc += r->n_alloc;
    s->bytes_allocated += r->alloc_bytes;
  }
  for (i = 0; i < p->nexts; i++) {
    const struct mp_lext *e = &p->exts[i];
    s->n_realloc += e->n_realloc;
    s->n_free += e->n_free;
    s->bytes_allocated += e->realloc_new;
    s->bytes_freed += e->realloc_old + e->free_bytes;
  }
  for (i = 0; i < p->ntemps; i++) {
    s->temporary += p->temps[i].count;
    s->temporary_bytes += p->temps[i].bytes;
  }
}

void mp_profile_done_reading(struct mp_profile *p)
{
  struct mp_summary s;
  /* Files dropped (mp_profile_drop_file) accounted no event: every
  ** location's counts belong to the files in the total. */
  loc_sums(p, &s);
  p->total.n_alloc = s.n_alloc;
  p->total.n_realloc = s.n_realloc;
  p->total.n_free = s.n_free;
  p->total.bytes_allocated = s.bytes_allocated;
  p->total.bytes_freed = s.bytes_freed;
  p->total.temporary = s.temporary;
  p->total.temporary_bytes = s.temporary_bytes;
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
  p->file_events = 0;
  p->in_snap = p->in_census = p->census_on = 0;
  p->file_snaps = 0;
  p->fresh_block = 0;
  mp_timeline_begin_file(p);
  mp_symtab_free(&p->symtab);
  mp_symtab_init(&p->symtab);
  mp_heap_clear(&p->heap);
  mp_map_clear(&p->trace_funcs);
  mp_map_clear(&p->sample_blocks);
  p->sample_carry = 0;
  p->sample_extra = 0;
  mp_resolve_reset(p);
  mp_stacks_end_file(p);
  p->file_strings = p->strings.count;
}

void mp_profile_end_file(struct mp_profile *p, int truncated)
{
  struct mp_summary *t = &p->total, *f = &p->file;

  /* The counts by kind and the bytes are the locations' sums, taken
  ** once reading is done (mp_profile_done_reading). */
  f->live_blocks = mp_live_blocks(p);
  mp_kinds_end_file(p, 1);
  mp_life_end_file(p, 1);
  if (mp_timeline_end_file(p) < 0)
    p->oom = 1;
  t->n_sym_proto += f->n_sym_proto;
  t->n_sym_cfunc += f->n_sym_cfunc;
  t->n_sym_trace += f->n_sym_trace;
  t->n_sym_events += f->n_sym_events;
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
  t->stack_files += f->stack_files;
  t->stack_nodes += f->stack_nodes;
  if (f->stack_depth > t->stack_depth)
    t->stack_depth = f->stack_depth;
  t->nodes_full += f->nodes_full;
  t->cut_events += f->cut_events;
  t->full_roots += f->full_roots;
  if (f->sample_mean) {
    t->sample_files++;
    if (f->sample_mean > t->sample_mean)
      t->sample_mean = f->sample_mean;
  }
  t->snapshots += f->snapshots;
  t->later_snapshots += f->later_snapshots;
  t->snap_blocks += f->snap_blocks;
  t->snap_bytes += f->snap_bytes;
  t->files++;
  if (truncated)
    t->truncated_files++;
  /* Saved in the epoch of the file's last new peak: held then. */
  p->pk_done = f->peak_event ? p->pk_epoch : 0;
  next_file(p);
}

void mp_profile_drop_file(struct mp_profile *p)
{
  /* Names are dropped only when no location of this file may use one:
  ** its stack nodes made locations (and names) of their own. */
  if (!p->file_events && !p->file.stack_nodes)
    mp_strings_truncate(&p->strings, p->file_strings);
  mp_kinds_end_file(p, 0);
  mp_life_end_file(p, 0);
  p->pk_done = 0;
  next_file(p);
}
