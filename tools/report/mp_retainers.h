/*
** report --retainers (mp_retainers.c): why the objects of a location are
** still alive, from the heap graph of a snapshot.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef MP_RETAINERS_H
#define MP_RETAINERS_H

#include <stdio.h>

#include "mp_names.h"
#include "mp_report.h"

/* The RETAINERS section of the text report: the locations o->retainers_of
** names (the whole name, else a part of it), or the --top (default 5)
** with the most bytes in the graph. Names through al (its aliases marked
** used). 0, or -1 when out of memory. */
int mp_report_retainers(FILE *out, struct mp_profile *p,
			const struct mp_report_opts *o, struct mp_aliases *al);
/* The same as the JSON report's "retainers" member (after a comma):
** null without a heap graph. */
int mp_report_retainers_json(FILE *out, struct mp_profile *p,
			     const struct mp_report_opts *o);
/* The HTML page's "retainers" member (after a comma), appended to b:
** nothing at all without a heap graph. The locations with a row on the
** page (row[loc], UINT32_MAX: none; each location's "row"), most bytes
** in the graph first, at most locations of them; each with its figures
** and its first chains (at most chains, "chains_all" of them), their
** text cut to cut bytes. 0, or -1 when out of memory. */
int mp_retainers_page(struct mp_buf *b, struct mp_profile *p,
		      const uint32_t *row, uint64_t locations, size_t chains,
		      size_t cut);

#endif
