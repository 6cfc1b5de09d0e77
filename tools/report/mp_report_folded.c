/*
** Folded stacks ("frame;frame;frame value" per line) for flamegraph.pl,
** inferno and speedscope. A version-3 stream records no call stacks, so
** the frames are the location's own hierarchy: chunk, function, line
** for Lua code; a "C" or "JIT" root for C functions and traces. A stream
** with stacks gives its real stacks, root first, one frame each
** (mp_name_frame).
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

static uint64_t stack_value(const struct mp_stack_counts *c, enum mp_value v)
{
  return v == MP_VALUE_ALLOC_BYTES ? c->alloc_bytes + c->realloc_bytes :
	 v == MP_VALUE_ALLOC_COUNT ? c->n_alloc + c->n_realloc :
	 c->held_bytes;
}

struct stack_line {
  uint64_t value;
  size_t at, len;	/* In the text buffer. */
};

static const char *lines_text;	/* For the comparison below. */

static int line_cmp(const void *a, const void *b)
{
  const struct stack_line *x = a, *y = b;
  size_t n = x->len < y->len ? x->len : y->len;
  int c = memcmp(lines_text + x->at, lines_text + y->at, n);
  if (c)
    return c;
  return x->len < y->len ? -1 : x->len > y->len;
}

static int value_cmp(const void *a, const void *b)
{
  const struct stack_line *x = a, *y = b;
  if (x->value != y->value)
    return x->value > y->value ? -1 : 1;
  return line_cmp(a, b);
}

/* Root first: the frames of node id, leaf first, reversed. */
static int put_stack(struct mp_buf *out, const struct mp_profile *p,
		     struct mp_aliases *al, uint32_t id, uint32_t **chain,
		     size_t *cap)
{
  size_t n = 0, i;
  while (id) {
    struct mp_frame f;
    if (n == *cap) {
      size_t ncap = *cap ? *cap * 2 : 64;
      uint32_t *nc = realloc(*chain, ncap * sizeof(*nc));
      if (!nc)
	return -1;
      *chain = nc;
      *cap = ncap;
    }
    (*chain)[n++] = id;
    mp_profile_frame(p, id, &f);
    id = f.parent;
  }
  for (i = n; i-- > 0;) {
    struct mp_frame f;
    mp_profile_frame(p, (*chain)[i], &f);
    mp_name_frame(out, p, al, &f, MP_NAME_FRAME);
    if (i)
      mp_buf_add(out, ";", 1);
  }
  return 0;
}

/*
** The real stacks: one line per node with a value, equal lines (nodes
** that print alike, such as two functions on one line under
** --group=chunk) merged; the --top largest, in byte order of the text.
*/
static int folded_stacks(FILE *out, struct mp_profile *p,
			 const struct mp_report_opts *o,
			 struct mp_aliases *al)
{
  uint32_t n = mp_profile_nstacks(p), id;
  struct mp_buf text = {0};
  struct stack_line *lines = malloc((size_t)n * sizeof(*lines));
  uint32_t *chain = NULL;
  size_t cap = 0, k = 0, i, j;
  int rc = -1;

  if (!lines)
    return -1;
  for (id = 1; id < n; id++) {
    struct mp_stack_counts c;
    uint64_t v;
    mp_profile_stack(p, id, &c);
    if (!(v = stack_value(&c, o->value)))
      continue;
    lines[k].at = text.len;
    if (put_stack(&text, p, al, id, &chain, &cap) < 0 || text.oom)
      goto out;
    lines[k].len = text.len - lines[k].at;
    lines[k].value = v;
    k++;
  }
  lines_text = text.data;
  qsort(lines, k, sizeof(*lines), line_cmp);
  for (i = 0, j = 0; i < k; i++) {
    if (j && line_cmp(&lines[j - 1], &lines[i]) == 0)
      lines[j - 1].value += lines[i].value;
    else
      lines[j++] = lines[i];
  }
  k = j;
  if (o->top && k > o->top) {
    qsort(lines, k, sizeof(*lines), value_cmp);
    k = (size_t)o->top;
    qsort(lines, k, sizeof(*lines), line_cmp);
  }
  for (i = 0; i < k; i++) {
    fwrite(text.data + lines[i].at, 1, lines[i].len, out);
    fprintf(out, " %llu\n", (unsigned long long)lines[i].value);
  }
  rc = 0;
out:
  lines_text = NULL;
  free(chain);
  free(lines);
  mp_buf_free(&text);
  return rc;
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
  /* Lines of frames and numbers have no room for a header: the note
  ** that the numbers are estimates goes to standard error. */
  if (mp_estimate_note(&line, mp_profile_total(p)))
    fprintf(stderr, "ljmprof: note: %s\n", line.data);
  line.len = 0;
  if (mp_aliases_init(&al, mp_profile_strings(p)) < 0) {
    mp_buf_free(&line);
    return -1;
  }
  if (mp_profile_nstacks(p) > 1) {
    rc = folded_stacks(out, p, o, &al);
    mp_aliases_free(&al);
    mp_buf_free(&line);
    return rc;
  }
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
