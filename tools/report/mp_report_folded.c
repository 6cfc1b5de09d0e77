/*
** Folded stacks ("frame;frame;frame value" per line) for flamegraph.pl,
** inferno and speedscope. memprof records no call stacks, so the frames
** are the location's own hierarchy: chunk, function, line for Lua code;
** a "C" or "JIT" root for C functions and traces.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_order.h"
#include "mp_report.h"

static void frames(struct mp_buf *out, const struct mp_profile *p,
		   struct mp_aliases *al, const struct mp_loc *l)
{
  switch (l->kind) {
  case MP_LOC_LUA:
    mp_name_string(out, p, al, l->str, MP_NAME_FRAME);
    if (mp_profile_group(p) == MP_GROUP_CHUNK)
      break;
    if (l->linedefined == 0) {
      mp_buf_str(out, ";main ");
      mp_name_string(out, p, al, l->str, MP_NAME_FRAME);
    } else if (l->linedefined == MP_LINE_BUILTIN) {
      mp_buf_str(out, ";builtin ");
      mp_name_string(out, p, al, l->str, MP_NAME_FRAME);
    } else {
      mp_buf_str(out, ";function ");
      mp_name_string(out, p, al, l->str, MP_NAME_FRAME);
      mp_buf_colon_u64(out, l->linedefined);
    }
    if (mp_profile_group(p) == MP_GROUP_FUNCTION)
      break;
    mp_buf_add(out, ";", 1);
    mp_name_string(out, p, al, l->str, MP_NAME_FRAME);
    mp_buf_colon_u64(out, l->line);
    break;
  case MP_LOC_LUA_UNKNOWN:
    mp_buf_str(out, mp_loc_kinds[l->kind].prefix);
    mp_buf_hex(out, l->addr);
    if (mp_profile_group(p) == MP_GROUP_FRAMES) {
      mp_buf_add(out, ";", 1);
      mp_name_location(out, p, al, l, MP_NAME_FRAME);
    }
    break;
  default:
    /* The others are one frame under a root for their source. */
    switch (mp_loc_kinds[l->kind].src) {
    case LJM_SRC_CFUNC:
      mp_buf_str(out, "C;");
      break;
    case LJM_SRC_TRACE:
      mp_buf_str(out, "JIT;");
      break;
    default:
      break;
    }
    mp_name_location(out, p, al, l, MP_NAME_FRAME);
    break;
  }
}

int mp_report_folded(FILE *out, struct mp_profile *p,
		     const struct mp_report_opts *o,
		     const struct mp_report_input *in)
{
  struct mp_aliases al;
  struct mp_order order;
  struct mp_buf line = {0};
  struct mp_row *rows = NULL;
  size_t nrows = 0, i;
  uint32_t nlocs, id;
  int rc = -1;

  (void)in;
  if (mp_aliases_init(&al, mp_profile_strings(p)) < 0)
    return -1;
  if (mp_order_init(&order, p) < 0)
    goto out_al;
  nlocs = mp_profile_nlocs(p);
  rows = malloc(((size_t)nlocs + 1) * sizeof(*rows));
  if (!rows)
    goto out;
  for (id = 0; id < nlocs; id++) {
    struct mp_loc l;
    uint64_t v;
    mp_profile_loc_counts(p, id, &l);
    v = o->value == MP_VALUE_ALLOC_BYTES ? l.alloc_bytes + l.realloc_new :
	o->value == MP_VALUE_ALLOC_COUNT ? l.n_alloc + l.n_realloc :
	l.held_bytes;
    if (!v)
      continue;
    mp_order_row(&order, v, id, &rows[nrows]);
    nrows++;
  }
  /* The largest --top values, then in name order: the tools that read
  ** this merge equal stacks, and adjacent ones draw faster. */
  if (o->top && nrows > o->top) {
    mp_rows_sort(&order, rows, nrows);
    nrows = (size_t)o->top;
  }
  mp_rows_sort_by_name(rows, nrows);
  for (i = 0; i < nrows; i++) {
    struct mp_loc l;
    mp_profile_loc(p, rows[i].loc, &l);
    line.len = 0;
    frames(&line, p, &al, &l);
    mp_buf_add(&line, " ", 1);
    mp_buf_u64(&line, rows[i].key);
    mp_buf_add(&line, "\n", 1);
    if (line.oom)
      goto out;
    fwrite(line.data, 1, line.len, out);
  }
  rc = 0;
out:
  free(rows);
  mp_buf_free(&line);
  mp_order_free(&order);
out_al:
  mp_aliases_free(&al);
  return rc;
}

/* For `ljmprof diff --format=folded`: a location's frames as above. */
void mp_folded_frames(struct mp_buf *out, const struct mp_profile *p,
		      struct mp_aliases *al, const struct mp_loc *l)
{
  frames(out, p, al, l);
}
