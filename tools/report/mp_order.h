/*
** The order in which reports list locations: by their own measure
** (events, bytes held, ...), largest first; ties by name, compared as
** the name's parts (kind, chunk or symbol name in byte order, line
** numbers as numbers) without building any name text.
**
** The name order is computed once per report as a rank per location, so
** that every later sort compares integers only.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef MP_ORDER_H
#define MP_ORDER_H

#include <stddef.h>
#include <stdint.h>

#include "mp_profile.h"

struct mp_order {
  uint32_t *rank;	/* Location id -> its position in name order. */
  uint32_t *loc;	/* Position in name order -> location id. */
  uint32_t nlocs;
};

/* Rank every location of p by name; 0, or -1 when out of memory. */
int mp_order_init(struct mp_order *o, const struct mp_profile *p);
void mp_order_free(struct mp_order *o);

/* One location in a sorted list. */
struct mp_row {
  uint64_t key;		/* The report's measure: largest first. */
  uint32_t name;	/* Rank in name order. */
  uint32_t loc;
};

static inline void mp_order_row(const struct mp_order *o, uint64_t key,
				uint32_t loc, struct mp_row *row)
{
  row->key = key;
  row->name = o->rank[loc];
  row->loc = loc;
}

/* Sort rows made by mp_order_row with o: by key (largest first), then by
** name. */
void mp_rows_sort(const struct mp_order *o, struct mp_row *rows, size_t n);

/* Sort by name only (key ignored). */
void mp_rows_sort_by_name(struct mp_row *rows, size_t n);

/*
** The call paths of each location (streams with stacks): the stack
** nodes whose leaf location it is and whose measure is not 0, heaviest
** first (bytes, then count, then node id: the order they were first
** announced). Location id's are node[start[id] .. start[id + 1]).
*/
enum mp_path_measure {
  MP_PATHS_ALLOC,	/* Allocations: count and bytes. */
  MP_PATHS_REALLOC,	/* Reallocations: count and new bytes. */
  MP_PATHS_HELD,	/* Blocks and bytes still held. */
  MP_PATHS_TEMPORARY,	/* Temporary allocations: count and bytes. */
  MP_PATHS_ANY		/* Any figure: by allocated and reallocated bytes. */
};

struct mp_paths {
  uint32_t *start;	/* nlocs + 1 offsets into node. */
  uint32_t *node;
  uint32_t nlocs;
};

/* 0, or -1 when out of memory; empty (start NULL) without stacks. */
int mp_paths_init(struct mp_paths *ps, const struct mp_profile *p,
		  enum mp_path_measure m);
void mp_paths_free(struct mp_paths *ps);

/* The bytes and count that a path's measure m sorts by. */
void mp_path_figures(const struct mp_stack_counts *c, enum mp_path_measure m,
		     uint64_t *bytes, uint64_t *count);

#endif
