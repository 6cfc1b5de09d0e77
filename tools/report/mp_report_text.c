/*
** The text report in the established memprof layout, and the leak
** summary (--leak-only).
**
** Names are written as each line is printed, never kept: a profile that
** loads thousands of chunks has millions of locations.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_order.h"
#include "mp_report.h"

/* State of one report: the name order and a line being composed. */
struct text {
  FILE *out;
  const struct mp_profile *p;
  struct mp_aliases al;
  struct mp_order order;
  struct mp_buf line;
  int human;
};

/* Append the name of location id to t->line (marks its alias used). */
static void put_name(struct text *t, uint32_t id)
{
  struct mp_loc l;
  mp_profile_loc(t->p, id, &l);
  mp_name_location(&t->line, t->p, &t->al, &l, MP_NAME_ALIASED);
}

static void put_bytes(struct text *t, uint64_t v)
{
  mp_name_bytes(&t->line, v, t->human);
}

/* Write t->line out and start the next one. */
static void flush_line(struct text *t)
{
  if (t->line.len)
    fwrite(t->line.data, 1, t->line.len, t->out);
  t->line.len = 0;
}

/* Rows of every location whose measure is not 0, sorted, cut to top:
** the event count of section 0-2 (allocations, reallocations, frees) or,
** for 3, the bytes still held. NULL when out of memory. */
static struct mp_row *sorted_rows(struct text *t, int section, uint64_t top,
				  size_t *count)
{
  const struct mp_profile *p = t->p;
  uint32_t nlocs = mp_profile_nlocs(p), id;
  struct mp_row *rows = malloc(((size_t)nlocs + 1) * sizeof(*rows));
  size_t n = 0;

  if (!rows)
    return NULL;
  static const enum mp_measure measures[] = {
    MP_MEASURE_ALLOCS, MP_MEASURE_REALLOCS, MP_MEASURE_FREES,
    MP_MEASURE_HELD_BYTES
  };

  for (id = 0; id < nlocs; id++) {
    uint64_t k = mp_profile_measure(p, id, measures[section]);
    if (!k)
      continue;
    mp_order_row(&t->order, k, id, &rows[n]);
    n++;
  }
  mp_rows_sort(&t->order, rows, n);
  if (top && n > top)
    n = (size_t)top;
  *count = n;
  return rows;
}

/* The "Overrides:" list under a reallocation or free location: the
** locations whose blocks it took, in name order (the pairs are sorted
** so). */
static void overrides(struct text *t, int is_free, uint32_t loc)
{
  uint64_t end, i = mp_profile_overrides_of(t->p, is_free, loc, &end);

  if (i == end)
    return;
  mp_buf_str(&t->line, "\tOverrides:\n");
  for (; i < end; i++) {
    mp_buf_add(&t->line, "\t\t", 2);
    put_name(t, (uint32_t)mp_profile_override(t->p, i).key);
    mp_buf_add(&t->line, "\n", 1);
    if (t->line.len > 4096)
      flush_line(t);
  }
  mp_buf_add(&t->line, "\n", 1);
}

static int section(struct text *t, uint64_t top, int sec)
{
  static const char *const titles[] = {"ALLOCATIONS\n", "REALLOCATIONS\n",
				       "DEALLOCATIONS\n"};
  const struct mp_profile *p = t->p;
  struct mp_row *rows;
  size_t nrows, i;

  rows = sorted_rows(t, sec, top, &nrows);
  if (!rows)
    return -1;
  fputs(titles[sec], t->out);
  for (i = 0; i < nrows; i++) {
    struct mp_loc l;
    uint64_t plus, minus;

    mp_profile_loc_counts(p, rows[i].loc, &l);
    plus = sec == 0 ? l.alloc_bytes : sec == 1 ? l.realloc_new : 0;
    minus = sec == 0 ? 0 : sec == 1 ? l.realloc_old : l.free_bytes;

    put_name(t, rows[i].loc);
    mp_buf_str(&t->line, ": ");
    mp_buf_u64(&t->line, rows[i].key);
    mp_buf_str(&t->line, " events\t+");
    put_bytes(t, plus);
    mp_buf_str(&t->line, "\t-");
    put_bytes(t, minus);
    mp_buf_add(&t->line, "\n", 1);
    if (sec != 0)
      overrides(t, sec == 2, rows[i].loc);
    flush_line(t);
  }
  fputc('\n', t->out);
  free(rows);
  return t->line.oom ? -1 : 0;
}

static int leak_summary(struct text *t, uint64_t top)
{
  const struct mp_profile *p = t->p;
  struct mp_row *rows;
  size_t nrows, i;

  rows = sorted_rows(t, 3, top, &nrows);
  if (!rows)
    return -1;
  fputs("HEAP SUMMARY:\n", t->out);
  for (i = 0; i < nrows; i++) {
    struct mp_loc l;
    mp_profile_loc_counts(p, rows[i].loc, &l);
    put_name(t, rows[i].loc);
    mp_buf_str(&t->line, " holds ");
    put_bytes(t, l.held_bytes);
    mp_buf_str(&t->line, ": ");
    mp_buf_u64(&t->line, l.created);
    mp_buf_str(&t->line, " allocs, ");
    mp_buf_u64(&t->line, l.released);
    mp_buf_str(&t->line, " frees\n");
    flush_line(t);
  }
  fputc('\n', t->out);
  free(rows);
  return t->line.oom ? -1 : 0;
}

/* The texts behind the aliases printed above, each once. */
static int aliases(struct text *t)
{
  static const char rule[] =
    "================================================================";
  const struct mp_aliases *al = &t->al;
  uint32_t id;
  int any = 0;

  if (!al->of)
    return 0;
  for (id = 0; id < al->nstrings; id++) {
    const struct mp_string *s;
    if (!al->of[id] || !al->used[al->of[id]])
      continue;
    if (!any)
      fputs("ALIASES:\n", t->out);
    any = 1;
    s = mp_strings_get(mp_profile_strings(t->p), id);
    fprintf(t->out, "CHUNK#%u:\n%s\n", al->of[id], rule);
    /* Source text: its lines and indentation stay, its controls not. */
    t->line.len = 0;
    mp_name_escape(&t->line, s->data, s->len, MP_ESC_KEEP_LINES);
    flush_line(t);
    if (s->len && s->data[s->len - 1] != '\n')
      fputc('\n', t->out);
    fprintf(t->out, "%s\n\n", rule);
  }
  return t->line.oom ? -1 : 0;
}

int mp_report_text(FILE *out, struct mp_profile *p,
		   const struct mp_report_opts *o,
		   const struct mp_report_input *in)
{
  struct text t;
  int rc = -1;

  (void)in;
  memset(&t, 0, sizeof(t));
  t.out = out;
  t.p = p;
  t.human = o->human;
  if (mp_aliases_init(&t.al, mp_profile_strings(p)) < 0 ||
      mp_order_init(&t.order, p) < 0)
    goto out;
  if (o->leak_only) {
    if (leak_summary(&t, o->top) < 0)
      goto out;
  } else {
    mp_profile_sort_overrides(p, t.order.rank, t.order.loc);
    if (section(&t, o->top, 0) < 0 || section(&t, o->top, 1) < 0 ||
	section(&t, o->top, 2) < 0)
      goto out;
  }
  if (aliases(&t) < 0)
    goto out;
  rc = 0;
out:
  mp_buf_free(&t.line);
  mp_order_free(&t.order);
  mp_aliases_free(&t.al);
  return rc;
}
