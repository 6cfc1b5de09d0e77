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

#include "mp_report.h"

static void frames(struct mp_buf *out, const struct mp_profile *p,
		   struct mp_aliases *al, const struct mp_loc *l)
{
  switch (l->kind) {
  case MP_LOC_LUA:
    mp_name_string(out, p, al, l->str, MP_NAME_FRAME);
    if (p->group == MP_GROUP_CHUNK)
      break;
    if (l->linedefined == 0) {
      mp_buf_str(out, ";main ");
      mp_name_string(out, p, al, l->str, MP_NAME_FRAME);
    } else {
      mp_buf_str(out, ";function ");
      mp_name_string(out, p, al, l->str, MP_NAME_FRAME);
      mp_buf_printf(out, ":%u", l->linedefined);
    }
    if (p->group == MP_GROUP_FUNCTION)
      break;
    mp_buf_add(out, ";", 1);
    mp_name_string(out, p, al, l->str, MP_NAME_FRAME);
    mp_buf_printf(out, ":%u", l->line);
    break;
  case MP_LOC_LUA_UNKNOWN:
    mp_buf_printf(out, "LFUNC 0x%llx", (unsigned long long)l->addr);
    if (p->group == MP_GROUP_FRAMES)
      mp_buf_printf(out, ";LFUNC 0x%llx:%u", (unsigned long long)l->addr,
		    l->line);
    break;
  case MP_LOC_C:
  case MP_LOC_C_UNKNOWN:
    mp_buf_str(out, "C;");
    mp_name_location(out, p, al, l, MP_NAME_FRAME);
    break;
  case MP_LOC_INTERNAL:
    mp_buf_str(out, "INTERNAL");
    break;
  default:
    mp_buf_str(out, "JIT;");
    mp_name_location(out, p, al, l, MP_NAME_FRAME);
    break;
  }
}

struct frow {
  uint64_t value;
  size_t off;		/* Frames in the buffer. */
};

static const char *frames_base;

static int cmp_frow(const void *a, const void *b)
{
  const struct frow *x = a, *y = b;
  return strcmp(frames_base + x->off, frames_base + y->off);
}

static int cmp_frow_value(const void *a, const void *b)
{
  const struct frow *x = a, *y = b;
  if (x->value != y->value)
    return x->value > y->value ? -1 : 1;
  return cmp_frow(a, b);
}

int mp_report_folded(FILE *out, const struct mp_profile *p,
		     const struct mp_report_opts *o)
{
  struct mp_aliases al;
  struct mp_buf buf = {0};
  struct frow *rows;
  size_t nrows = 0, i;
  uint32_t id;

  if (mp_aliases_init(&al, &p->strings) < 0)
    return -1;
  rows = malloc((p->nlocs + 1) * sizeof(*rows));
  if (!rows) {
    mp_aliases_free(&al);
    return -1;
  }
  for (id = 0; id < p->nlocs; id++) {
    struct mp_loc lc;
    const struct mp_loc *l = &lc;
    uint64_t v;
    mp_profile_loc(p, id, &lc);
    v = o->value == MP_VALUE_ALLOC_BYTES ?
		 l->alloc_bytes + l->realloc_new :
		 o->value == MP_VALUE_ALLOC_COUNT ? l->n_alloc + l->n_realloc :
		 l->held_bytes;
    if (!v)
      continue;
    rows[nrows].value = v;
    rows[nrows].off = buf.len;
    frames(&buf, p, &al, l);
    mp_buf_add(&buf, "", 1);
    nrows++;
  }
  if (buf.oom) {
    free(rows);
    mp_buf_free(&buf);
    mp_aliases_free(&al);
    return -1;
  }
  frames_base = buf.data;
  if (o->top && nrows > o->top) {
    qsort(rows, nrows, sizeof(*rows), cmp_frow_value);
    nrows = (size_t)o->top;
  }
  qsort(rows, nrows, sizeof(*rows), cmp_frow);
  for (i = 0; i < nrows; i++)
    fprintf(out, "%s %llu\n", buf.data + rows[i].off,
	    (unsigned long long)rows[i].value);
  free(rows);
  mp_buf_free(&buf);
  mp_aliases_free(&al);
  return 0;
}
