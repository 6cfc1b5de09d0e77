/*
** `ljmprof diff --format=html`: the differential view as one page, the
** frame of the report's (mp_html_begin, mp_html_end): a flame graph of
** NEW's folded frames coloured by growth, and a table sorted by growth.
** The data is the rows of a diff keyed by folded frames, cut to the
** MAX_ROWS largest changes (the page says how many there were).
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_diff.h"

#define MAX_ROWS 5000

static const struct mp_diff *sort_d;	/* For the comparison. */

/* The largest change of any measure, for the cut. */
static uint64_t change(const struct mp_diff_row *r)
{
  static const enum mp_value v[3] = {MP_VALUE_ALLOC_BYTES,
				     MP_VALUE_ALLOC_COUNT,
				     MP_VALUE_HELD_BYTES};
  uint64_t most = 0, m;
  int k;
  for (k = 0; k < 3; k++) {
    mp_diff_delta(&r->side[0], &r->side[1], v[k], &m);
    if (m > most)
      most = m;
  }
  return most;
}

static int cmp_change(const void *a, const void *b)
{
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  uint64_t cx = change(&sort_d->rows[x]), cy = change(&sort_d->rows[y]);
  if (cx != cy)
    return cx > cy ? -1 : 1;
  return x < y ? -1 : x > y;
}

static void side_json(struct mp_buf *b, const struct mp_diff_side *s,
		      const struct mp_diff_counts *t)
{
  size_t i;
  mp_buf_str(b, "{\"files\": [");
  for (i = 0; i < s->nfiles; i++) {
    if (i)
      mp_buf_str(b, ", ");
    mp_html_json_name(b, s->files[i], strlen(s->files[i]), MP_HTML_NAME_MAX);
  }
  mp_buf_printf(b, "], \"events\": %llu, \"truncated\": %s, \"at_event\": "
		"%lld, \"alloc_bytes\": %llu, \"allocs\": %llu, "
		"\"held_bytes\": %llu}", (unsigned long long)s->events,
		s->truncated ? "true" : "false", (long long)s->at_event,
		(unsigned long long)t->alloc_bytes,
		(unsigned long long)t->allocs,
		(unsigned long long)t->held_bytes);
}

static void put_side(FILE *out, const char *label,
		     const struct mp_diff_side *s)
{
  size_t i;
  fprintf(out, "<tr><th>%s</th><td class=\"files\">", label);
  for (i = 0; i < s->nfiles; i++) {
    if (i)
      fputs(", ", out);
    mp_html_text(out, s->files[i]);
  }
  if (s->at_event >= 0)
    fprintf(out, " up to event %lld", (long long)s->at_event);
  if (s->truncated)
    fputs(" <span class=\"warn\">(truncated)</span>", out);
  fprintf(out, "</td><td class=\"n\">%llu events</td></tr>\n",
	  (unsigned long long)s->events);
}

int mp_diff_html(FILE *out, const struct mp_diff *d,
		 const struct mp_diff_opts *o)
{
  struct mp_buf b = {0}, title = {0};
  uint32_t *rows, n = 0, i;
  int rc = -1;

  if (!(rows = malloc(((size_t)d->nrows + 1) * sizeof(*rows))))
    return -1;
  for (i = 0; i < d->nrows; i++)
    if (mp_diff_row_changed(&d->rows[i]) ||
	d->rows[i].side[1].alloc_bytes || d->rows[i].side[1].held_bytes)
      rows[n++] = i;
  mp_buf_printf(&b, "{\"diff\": true, \"value\": %d, \"rows_all\": %u",
		(int)o->value, n);
  if (n > MAX_ROWS) {
    sort_d = d;
    qsort(rows, n, sizeof(*rows), cmp_change);
    sort_d = NULL;
    n = MAX_ROWS;
  }
  mp_buf_str(&b, ",\n\"old\": ");
  side_json(&b, &o->side[0], &d->total[0]);
  mp_buf_str(&b, ",\n\"new\": ");
  side_json(&b, &o->side[1], &d->total[1]);
  /* [frames, in old, in new, old: allocated, count, held; new: the same]. */
  mp_buf_str(&b, ",\n\"rows\": [");
  for (i = 0; i < n; i++) {
    const struct mp_diff_row *r = &d->rows[rows[i]];
    const struct mp_string *key = mp_diff_row_key(d, r);
    mp_buf_str(&b, i ? ",\n[" : "\n[");
    /* Frames of a path: a few names' worth. */
    mp_html_json_name(&b, key->data, key->len, 16 * MP_HTML_NAME_MAX);
    mp_buf_printf(&b, ",%d,%d,%llu,%llu,%llu,%llu,%llu,%llu]",
		  r->in[0], r->in[1],
		  (unsigned long long)r->side[0].alloc_bytes,
		  (unsigned long long)r->side[0].allocs,
		  (unsigned long long)r->side[0].held_bytes,
		  (unsigned long long)r->side[1].alloc_bytes,
		  (unsigned long long)r->side[1].allocs,
		  (unsigned long long)r->side[1].held_bytes);
  }
  mp_buf_str(&b, "]}\n");
  if (b.oom)
    goto out;

  mp_buf_str(&title, "diff ");
  mp_buf_str(&title, o->side[0].nfiles ? o->side[0].files[0] : "");
  mp_buf_str(&title, " ");
  mp_buf_str(&title, o->side[1].nfiles ? o->side[1].files[0] : "");
  mp_html_begin(out, "ljmprof diff", title.data ? title.data : "");
  fputs("<div class=\"box\" id=\"summary\"><h2>What is compared</h2>\n"
	"<table class=\"summary\">\n", out);
  put_side(out, "OLD", &o->side[0]);
  put_side(out, "NEW", &o->side[1]);
  fputs("</table>\n<p id=\"when\"></p></div>\n"
	"<div class=\"box\" id=\"flame\"><h2>Flame graph of NEW, coloured "
	"by growth</h2>\n"
	"<p class=\"controls\"><select id=\"view\">"
	"<option value=\"0\">bytes allocated</option>"
	"<option value=\"1\">allocations</option>"
	"<option value=\"2\">bytes held at the end</option></select> "
	"<input id=\"search\" type=\"text\" size=\"30\" "
	"placeholder=\"search: a regular expression\"> "
	"<button id=\"reset\" type=\"button\">whole graph</button> "
	"<span id=\"found\"></span></p>\n"
	"<div id=\"fg\"></div>\n<p class=\"note\" id=\"fg-note\"></p>"
	"<p class=\"note\" id=\"fg-tip\"></p></div>\n"
	"<div class=\"box\" id=\"tables\"><h2>By growth</h2>"
	"<p class=\"note\" id=\"diff-note\"></p>"
	"<table id=\"diff\" class=\"data\"></table></div>\n", out);
  mp_html_end(out, &b);
  rc = 0;
out:
  mp_buf_free(&b);
  mp_buf_free(&title);
  free(rows);
  return rc;
}
