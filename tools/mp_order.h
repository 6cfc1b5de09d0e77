/*
** The order in which reports list locations: by their own measure
** (events, bytes held, ...), largest first; ties by name, compared as
** the name's parts (kind, chunk or symbol name in byte order, line
** numbers as numbers) without building any name text.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef MP_ORDER_H
#define MP_ORDER_H

#include <stddef.h>
#include <stdint.h>

#include "mp_profile.h"

/* Rank of every interned string in byte order. */
struct mp_order {
  uint32_t *rank;	/* Indexed by string id. */
  uint32_t nstrings;
};

int mp_order_init(struct mp_order *o, const struct mp_strings *s);
void mp_order_free(struct mp_order *o);

/* One location in a sorted list: 24 bytes, compared without calls. */
struct mp_row {
  uint64_t key;		/* The report's measure: largest first. */
  uint64_t name_hi;	/* Name order: kind, string rank, linedefined. */
  uint32_t name_lo;	/* Line. */
  uint32_t loc;		/* Last tie-break: first seen first. */
};

/* Fill the name order of location loc into row. */
void mp_order_row(const struct mp_order *o, const struct mp_profile *p,
		  uint32_t loc, struct mp_row *row);

/* Sort by key (largest first), then by name. */
void mp_rows_sort(struct mp_row *rows, size_t n);

/* Sort by name only (key ignored). */
void mp_rows_sort_by_name(struct mp_row *rows, size_t n);

#endif
