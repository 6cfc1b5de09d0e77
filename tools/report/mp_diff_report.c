/*
** `ljmprof diff` output: the text table, the `ljmprof-diff` JSON
** document (doc/json-schema.md) and two-column folded stacks for a
** differential flame graph.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_diff.h"

#define U(x) ((unsigned long long)(x))

/* The sections of text and JSON, in the order they are printed. */
enum section { SEC_GREW, SEC_SHRANK, SEC_CHANGED, SEC_N };
static const char *const section_name[SEC_N] = {"grew", "shrank", "changed"};

/*
** The changed rows, sorted by the change of v, split into sections:
** *bounds[s] .. bounds[s + 1] are section s's, the largest change first,
** at most top each (0: all). Returns the array (free it), or NULL when
** out of memory; *unchanged gets the rows that did not change at all.
*/
static uint32_t *sections(const struct mp_diff *d, enum mp_value v,
			  uint64_t top, uint32_t bounds[SEC_N + 1],
			  uint32_t *unchanged)
{
  uint32_t *all, *out, n = 0, i, k = 0, grew = 0, shrank = 0;
  uint32_t len[SEC_N];
  int s;

  all = malloc(((size_t)d->nrows + 1) * sizeof(*all));
  out = malloc(((size_t)d->nrows + 1) * sizeof(*out));
  if (!all || !out) {
    free(all);
    free(out);
    return NULL;
  }
  for (i = 0; i < d->nrows; i++)
    if (mp_diff_row_changed(&d->rows[i]))
      all[n++] = i;
  *unchanged = d->nrows - n;
  mp_diff_sort(d, all, n, v);
  /* Sorted: growths, then no change of v, then shrinks (largest last). */
  for (i = 0; i < n; i++) {
    uint64_t mag;
    const struct mp_diff_row *r = &d->rows[all[i]];
    int sign = mp_diff_delta(&r->side[0], &r->side[1], v, &mag);
    if (sign > 0)
      grew++;
    else if (sign < 0)
      shrank++;
  }
  len[SEC_GREW] = grew;
  len[SEC_SHRANK] = shrank;
  len[SEC_CHANGED] = n - grew - shrank;
  for (s = 0; s < SEC_N; s++) {
    uint32_t take = len[s];
    if (top && take > top)
      take = (uint32_t)top;
    bounds[s] = k;
    for (i = 0; i < take; i++) {
      switch (s) {
      case SEC_GREW:
	out[k++] = all[i];
	break;
      case SEC_SHRANK:
	out[k++] = all[n - 1 - i];
	break;
      default:
	out[k++] = all[grew + i];
	break;
      }
    }
  }
  bounds[SEC_N] = k;
  free(all);
  return out;
}

/* "+123B", "-1.5KiB", "0B"; counts without the unit. */
static void put_delta(struct mp_buf *b, const struct mp_diff_counts *old,
		      const struct mp_diff_counts *new_, enum mp_value v,
		      int human)
{
  uint64_t mag;
  int sign = mp_diff_delta(old, new_, v, &mag);
  if (sign)
    mp_buf_add(b, sign > 0 ? "+" : "-", 1);
  if (v == MP_VALUE_ALLOC_COUNT)
    mp_buf_u64(b, mag);
  else
    mp_name_bytes(b, mag, human);
}

static void put_bytes(struct mp_buf *b, uint64_t v, int human)
{
  mp_name_bytes(b, v, human);
}

/* Right-align the text appended since mark to width columns. */
static void align(struct mp_buf *b, size_t mark, size_t width)
{
  size_t n = b->len - mark, pad, i;
  if (b->oom || n >= width)
    return;
  pad = width - n;
  for (i = 0; i < pad; i++)
    mp_buf_add(b, " ", 1);
  if (b->oom)
    return;
  memmove(b->data + mark + pad, b->data + mark, n);
  memset(b->data + mark, ' ', pad);
}

static void side_header(struct mp_buf *b, const char *label,
			const struct mp_diff_side *s)
{
  struct mp_buf name = {0};
  size_t i;

  mp_buf_str(b, label);
  for (i = 0; i < s->nfiles; i++) {
    mp_buf_str(b, i ? ", " : " ");
    mp_buf_str(b, mp_name_escaped(&name, s->files[i]));
  }
  if (s->at_event >= 0) {
    mp_buf_str(b, " at event #");
    mp_buf_u64(b, (uint64_t)s->at_event);
    if (s->at_seconds)
      mp_buf_printf(b, " (%s s in)", s->at_seconds);
    if (s->settle && s->settled_from >= 0)
      mp_buf_printf(b, ", settled: the least held in the %s s before #%llu",
		    s->settle, U((uint64_t)s->settled_from));
    else if (s->settle)
      mp_buf_printf(b, ", settled: the least held in the %s s before the "
		    "end", s->settle);
  } else {
    mp_buf_printf(b, " (%llu events%s)", U(s->events),
		  s->truncated ? ", truncated" : "");
  }
  if (s->summary && mp_estimate_note(&name, s->summary)) {
    mp_buf_str(b, "; ");
    mp_buf_str(b, name.data);
  }
  mp_buf_add(b, "\n", 1);
  mp_buf_free(&name);
}

static const char *value_words(enum mp_value v)
{
  return v == MP_VALUE_ALLOC_COUNT ? "allocations" :
	 v == MP_VALUE_HELD_BYTES ? "held bytes" : "allocated bytes";
}

static const char *value_name(enum mp_value v)
{
  return v == MP_VALUE_ALLOC_COUNT ? "alloc-count" :
	 v == MP_VALUE_HELD_BYTES ? "held-bytes" : "alloc-bytes";
}

static const char *group_name(enum mp_group g)
{
  return g == MP_GROUP_FUNCTION ? "function" :
	 g == MP_GROUP_CHUNK ? "chunk" : "line";
}

/* One measure of the totals line: "allocated +10B (5B -> 15B)". */
static void total_part(struct mp_buf *b, const char *what,
		       const struct mp_diff *d, enum mp_value v, int human)
{
  const struct mp_diff_counts *a = &d->total[0], *c = &d->total[1];
  mp_buf_str(b, what);
  mp_buf_add(b, " ", 1);
  put_delta(b, a, c, v, human);
  mp_buf_add(b, " (", 2);
  if (v == MP_VALUE_ALLOC_COUNT) {
    mp_buf_u64(b, a->allocs);
    mp_buf_str(b, " -> ");
    mp_buf_u64(b, c->allocs);
  } else {
    put_bytes(b, mp_diff_value(a, v), human);
    mp_buf_str(b, " -> ");
    put_bytes(b, mp_diff_value(c, v), human);
  }
  mp_buf_add(b, ")", 1);
}

/* The three change columns of a row, then two spaces. */
static void put_columns(struct mp_buf *b, const struct mp_diff_row *r,
			int human)
{
  size_t mark = b->len;
  put_delta(b, &r->side[0], &r->side[1], MP_VALUE_ALLOC_BYTES, human);
  align(b, mark, 13);
  mp_buf_add(b, " ", 1);
  mark = b->len;
  put_delta(b, &r->side[0], &r->side[1], MP_VALUE_ALLOC_COUNT, human);
  align(b, mark, 10);
  mp_buf_add(b, " ", 1);
  mark = b->len;
  put_delta(b, &r->side[0], &r->side[1], MP_VALUE_HELD_BYTES, human);
  align(b, mark, 12);
  mp_buf_add(b, "  ", 2);
}

static void put_status(struct mp_buf *b, const struct mp_diff_row *r)
{
  if (!r->in[MP_DIFF_OLD])
    mp_buf_str(b, " (new)");
  else if (!r->in[MP_DIFF_NEW])
    mp_buf_str(b, " (gone)");
}

/* A path key (root first, ';' between frames) leaf first, the way a
** backtrace and report --callers read. The frames were escaped when the
** key was made: a ';' in a name is a '_' there. */
static void put_path(struct mp_buf *b, const struct mp_string *key)
{
  size_t end = key->len, i = key->len;
  while (i > 0) {
    if (key->data[i - 1] == ';') {
      mp_buf_add(b, key->data + i, end - i);
      mp_buf_str(b, " <- ");
      end = i - 1;
    }
    i--;
  }
  mp_buf_add(b, key->data, end);
}

/* The paths by location, for text and JSON. */
struct by_loc {
  uint32_t *path, *start;	/* NULL: no paths. */
};

static int by_loc_init(struct by_loc *bl, const struct mp_diff *d,
		       enum mp_value v)
{
  bl->path = bl->start = NULL;
  if (!mp_diff_by_path(d))
    return 0;
  bl->path = mp_diff_paths_by_loc(d, v, &bl->start);
  return bl->path ? 0 : -1;
}

static void by_loc_free(struct by_loc *bl)
{
  free(bl->path);
  free(bl->start);
}

/* Path i of n of a location's, in the order section s shows them:
** growths largest first under a growth, shrinks largest first under a
** shrink. */
static uint32_t nth_path(const struct by_loc *bl, uint32_t loc, int s,
			 uint32_t i)
{
  uint32_t a = bl->start[loc], e = bl->start[loc + 1];
  return s == SEC_SHRANK ? bl->path[e - 1 - i] : bl->path[a + i];
}

/* "NAME: +D (A -> C), beside the Lua heap's held +H": a figure of the
** process at the two moments beside the heap's held bytes. */
static void gauge_line(struct mp_buf *b, const char *name, uint64_t a,
		       uint64_t c, const struct mp_diff *d, int human)
{
  mp_buf_str(b, "\n");
  mp_buf_str(b, name);
  mp_buf_str(b, ": ");
  if (a != c)
    mp_buf_add(b, c > a ? "+" : "-", 1);
  put_bytes(b, c > a ? c - a : a - c, human);
  mp_buf_str(b, " (");
  put_bytes(b, a, human);
  mp_buf_str(b, " -> ");
  put_bytes(b, c, human);
  mp_buf_str(b, "), beside the Lua heap's held ");
  put_delta(b, &d->total[0], &d->total[1], MP_VALUE_HELD_BYTES, human);
}

static void text_paths(struct mp_buf *b, const struct mp_diff *d,
		       const struct by_loc *bl, uint32_t loc, int s,
		       const struct mp_diff_opts *o)
{
  uint32_t n, i;

  if (!bl->path || !o->callers)
    return;
  n = bl->start[loc + 1] - bl->start[loc];
  if (!n)
    return;
  mp_buf_str(b, "\tCall paths:\n");
  for (i = 0; i < n && i < o->callers; i++) {
    const struct mp_diff_row *r = &d->paths[nth_path(bl, loc, s, i)];
    mp_buf_add(b, "\t", 1);
    put_columns(b, r, o->human);
    put_path(b, mp_diff_path_key(d, r));
    put_status(b, r);
    mp_buf_add(b, "\n", 1);
  }
  if (i < n)
    mp_buf_printf(b, "\t\t(%llu more: --callers=N)\n", U(n - i));
}

int mp_diff_text(FILE *out, const struct mp_diff *d,
		 const struct mp_diff_opts *o)
{
  static const char *const title[SEC_N] = {"GREW", "SHRANK",
					   "CHANGED OTHERWISE"};
  uint32_t bounds[SEC_N + 1], unchanged, *rows, i;
  struct mp_buf b = {0};
  struct by_loc bl;
  int s, rc = -1;

  rows = sections(d, o->value, o->top, bounds, &unchanged);
  if (!rows)
    return -1;
  if (by_loc_init(&bl, d, o->value) < 0) {
    free(rows);
    return -1;
  }
  side_header(&b, "OLD:", &o->side[0]);
  side_header(&b, "NEW:", &o->side[1]);
  for (s = 0; s < SEC_N; s++) {
    if (bounds[s] == bounds[s + 1])
      continue;
    mp_buf_printf(&b, "\n%s (by %s)\n", title[s], value_words(o->value));
    mp_buf_str(&b, "    ALLOCATED     ALLOCS         HELD  LOCATION\n");
    for (i = bounds[s]; i < bounds[s + 1]; i++) {
      const struct mp_diff_row *r = &d->rows[rows[i]];
      const struct mp_string *key = mp_diff_row_key(d, r);
      put_columns(&b, r, o->human);
      mp_name_escape(&b, key->data, key->len, 0);
      put_status(&b, r);
      mp_buf_add(&b, "\n", 1);
      text_paths(&b, d, &bl, rows[i], s, o);
      if (b.oom)
	goto out;
      fwrite(b.data, 1, b.len, out);
      b.len = 0;
    }
  }
  mp_buf_add(&b, "\n", 1);
  if (bounds[SEC_N] == 0 && unchanged == d->nrows)
    mp_buf_str(&b, "No location changed.\n");
  mp_buf_str(&b, "TOTAL: ");
  total_part(&b, "allocated", d, MP_VALUE_ALLOC_BYTES, o->human);
  mp_buf_str(&b, ", ");
  total_part(&b, "allocations", d, MP_VALUE_ALLOC_COUNT, o->human);
  mp_buf_str(&b, ", ");
  total_part(&b, "held", d, MP_VALUE_HELD_BYTES, o->human);
  /* Is it Lua at all? The process beside the heap's held bytes; then
  ** allocator-held memory: what the Lua allocator mapped beside the heap
  ** (mapped far above held: fragmentation, free chunks kept). */
  if (o->side[0].rss && o->side[1].rss)
    gauge_line(&b, "PROCESS RSS", o->side[0].rss, o->side[1].rss, d,
	       o->human);
  if (o->side[0].mapped && o->side[1].mapped)
    gauge_line(&b, "LUA ALLOCATOR MAPPED", o->side[0].mapped,
	       o->side[1].mapped, d, o->human);
  mp_buf_printf(&b, "\nUNCHANGED: %llu location%s\n", U(unchanged),
		unchanged == 1 ? "" : "s");
  if (b.oom)
    goto out;
  fwrite(b.data, 1, b.len, out);
  rc = 0;
out:
  by_loc_free(&bl);
  mp_buf_free(&b);
  free(rows);
  return rc;
}

/* -- JSON ---------------------------------------------------------------- */

static void json_counts(struct mp_buf *b, const struct mp_diff_counts *c)
{
  mp_buf_printf(b, "{\"alloc_bytes\": %llu, \"allocs\": %llu, "
		"\"held_bytes\": %llu, \"held_blocks\": %llu}",
		U(c->alloc_bytes), U(c->allocs), U(c->held_bytes),
		U(c->held_blocks));
}

static void json_signed(struct mp_buf *b, uint64_t a, uint64_t c)
{
  if (c >= a)
    mp_buf_u64(b, c - a);
  else {
    mp_buf_add(b, "-", 1);
    mp_buf_u64(b, a - c);
  }
}

static void json_delta(struct mp_buf *b, const struct mp_diff_counts *a,
		       const struct mp_diff_counts *c)
{
  mp_buf_str(b, "{\"alloc_bytes\": ");
  json_signed(b, a->alloc_bytes, c->alloc_bytes);
  mp_buf_str(b, ", \"allocs\": ");
  json_signed(b, a->allocs, c->allocs);
  mp_buf_str(b, ", \"held_bytes\": ");
  json_signed(b, a->held_bytes, c->held_bytes);
  mp_buf_str(b, ", \"held_blocks\": ");
  json_signed(b, a->held_blocks, c->held_blocks);
  mp_buf_add(b, "}", 1);
}

static void json_side(struct mp_buf *b, const char *label,
		      const struct mp_diff_side *s,
		      const struct mp_diff_counts *totals)
{
  size_t i;
  mp_buf_printf(b, "  \"%s\": {\"files\": [", label);
  for (i = 0; i < s->nfiles; i++) {
    if (i)
      mp_buf_str(b, ", ");
    mp_buf_json_string(b, s->files[i], strlen(s->files[i]));
  }
  mp_buf_printf(b, "], \"events\": %llu, \"complete\": %s, \"at_event\": ",
		U(s->events), s->truncated ? "false" : "true");
  if (s->at_event >= 0)
    mp_buf_u64(b, (uint64_t)s->at_event);
  else
    mp_buf_str(b, "null");
  if (s->at_seconds) {
    mp_buf_str(b, ", \"at_seconds\": ");
    mp_buf_json_string(b, s->at_seconds, strlen(s->at_seconds));
  }
  if (s->settle) {  /* Moved back from that event (null: the end). */
    mp_buf_str(b, ", \"settle_seconds\": ");
    mp_buf_json_string(b, s->settle, strlen(s->settle));
    mp_buf_str(b, ", \"settled_from\": ");
    if (s->settled_from >= 0)
      mp_buf_u64(b, (uint64_t)s->settled_from);
    else
      mp_buf_str(b, "null");
  }
  if (s->summary && s->summary->sample_mean)  /* Its figures: estimates. */
    mp_buf_printf(b, ", \"estimates\": true, \"sample_mean\": %llu",
		  U(s->summary->sample_mean));
  if (s->rss)  /* The process's resident bytes then (INFO RSS). */
    mp_buf_printf(b, ", \"rss\": %llu", U(s->rss));
  if (s->mapped)  /* LuaJIT's allocator's mapped bytes (INFO MAPPED). */
    mp_buf_printf(b, ", \"mapped\": %llu", U(s->mapped));
  mp_buf_str(b, ",\n    \"totals\": ");
  json_counts(b, totals);
  mp_buf_str(b, "},\n");
}

/* ",\n     "paths": [...]": every changed path of location loc, in the
** text's order, its frames root first. */
static void json_paths(struct mp_buf *b, const struct mp_diff *d,
		       const struct by_loc *bl, uint32_t loc, int s)
{
  uint32_t n = bl->start[loc + 1] - bl->start[loc], i;

  mp_buf_str(b, ",\n     \"paths\": [");
  for (i = 0; i < n; i++) {
    const struct mp_diff_row *r = &d->paths[nth_path(bl, loc, s, i)];
    const struct mp_string *key = mp_diff_path_key(d, r);
    size_t a = 0, k;
    mp_buf_str(b, i ? ",\n       {\"stack\": [" : "\n       {\"stack\": [");
    for (k = 0; k <= key->len; k++)
      if (k == key->len || key->data[k] == ';') {
	if (a)
	  mp_buf_str(b, ", ");
	mp_buf_json_string(b, key->data + a, k - a);
	a = k + 1;
      }
    mp_buf_printf(b, "], \"status\": \"%s\",\n        \"old\": ",
		  !r->in[MP_DIFF_OLD] ? "new" :
		  !r->in[MP_DIFF_NEW] ? "gone" : "both");
    json_counts(b, &r->side[0]);
    mp_buf_str(b, ", \"new\": ");
    json_counts(b, &r->side[1]);
    mp_buf_str(b, ",\n        \"delta\": ");
    json_delta(b, &r->side[0], &r->side[1]);
    mp_buf_add(b, "}", 1);
  }
  mp_buf_str(b, "]");
}

int mp_diff_json(FILE *out, const struct mp_diff *d,
		 const struct mp_diff_opts *o)
{
  uint32_t bounds[SEC_N + 1], unchanged, *rows, i;
  struct by_loc bl;
  struct mp_buf b = {0};
  int s, rc = -1;

  rows = sections(d, o->value, o->top, bounds, &unchanged);
  if (!rows)
    return -1;
  if (by_loc_init(&bl, d, o->value) < 0) {
    free(rows);
    return -1;
  }
  mp_buf_printf(&b, "{\n  \"schema\": \"ljmprof-diff\",\n"
		"  \"schema_version\": %d,\n  \"group\": \"%s\",\n"
		"  \"value\": \"%s\",\n  \"by_path\": %s,\n",
		MP_DIFF_JSON_SCHEMA_VERSION, group_name(o->group),
		value_name(o->value), bl.path ? "true" : "false");
  json_side(&b, "old", &o->side[0], &d->total[0]);
  json_side(&b, "new", &o->side[1], &d->total[1]);
  mp_buf_str(&b, "  \"delta\": ");
  json_delta(&b, &d->total[0], &d->total[1]);
  mp_buf_printf(&b, ",\n  \"unchanged\": %llu,\n  \"locations\": [",
		U(unchanged));
  for (s = 0; s < SEC_N; s++)
    for (i = bounds[s]; i < bounds[s + 1]; i++) {
      const struct mp_diff_row *r = &d->rows[rows[i]];
      const struct mp_string *key = mp_diff_row_key(d, r);
      mp_buf_str(&b, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
      mp_buf_json_string(&b, key->data, key->len);
      mp_buf_printf(&b, ", \"section\": \"%s\", \"status\": \"%s\",\n"
		    "     \"old\": ", section_name[s],
		    !r->in[MP_DIFF_OLD] ? "new" :
		    !r->in[MP_DIFF_NEW] ? "gone" : "both");
      json_counts(&b, &r->side[0]);
      mp_buf_str(&b, ",\n     \"new\": ");
      json_counts(&b, &r->side[1]);
      mp_buf_str(&b, ",\n     \"delta\": ");
      json_delta(&b, &r->side[0], &r->side[1]);
      if (bl.path)
	json_paths(&b, d, &bl, rows[i], s);
      mp_buf_add(&b, "}", 1);
      if (b.oom)
	goto out;
      fwrite(b.data, 1, b.len, out);
      b.len = 0;
    }
  mp_buf_str(&b, bounds[SEC_N] ? "\n  ]\n}\n" : "]\n}\n");
  if (b.oom)
    goto out;
  fwrite(b.data, 1, b.len, out);
  rc = 0;
out:
  by_loc_free(&bl);
  mp_buf_free(&b);
  free(rows);
  return rc;
}

/* -- Folded -------------------------------------------------------------- */

static const struct mp_diff_row *folded_rows;
static const struct mp_strings *folded_keys;
static enum mp_value folded_value;

/* Largest change (either way) first. */
static int cmp_magnitude(const void *a, const void *b)
{
  const struct mp_diff_row *x = &folded_rows[*(const uint32_t *)a];
  const struct mp_diff_row *y = &folded_rows[*(const uint32_t *)b];
  uint64_t mx, my;
  mp_diff_delta(&x->side[0], &x->side[1], folded_value, &mx);
  mp_diff_delta(&y->side[0], &y->side[1], folded_value, &my);
  return mx > my ? -1 : mx < my;
}

/* Stacks in byte order: the tools merge equal ones and draw adjacent
** ones faster. */
static int cmp_key(const void *a, const void *b)
{
  const struct mp_string *kx =
    mp_strings_get(folded_keys, folded_rows[*(const uint32_t *)a].key);
  const struct mp_string *ky =
    mp_strings_get(folded_keys, folded_rows[*(const uint32_t *)b].key);
  int c = memcmp(kx->data, ky->data, kx->len < ky->len ? kx->len : ky->len);
  if (c)
    return c;
  return kx->len < ky->len ? -1 : kx->len > ky->len;
}

/*
** "stack OLD NEW" per line: the two-column input of flamegraph.pl (what
** difffolded.pl writes), which draws NEW's widths coloured by the change
** (--negate: OLD's widths), so what vanished stays visible. Every key
** with a value on either side, unchanged ones included: they are part
** of the picture. With stacks on both sides, one line per call path,
** its frames root first; else the location's frames.
*/
int mp_diff_folded(FILE *out, const struct mp_diff *d,
		   const struct mp_diff_opts *o)
{
  int paths = mp_diff_by_path(d);
  const struct mp_diff_row *table = paths ? d->paths : d->rows;
  uint32_t total = paths ? d->npaths : d->nrows;
  struct mp_buf b = {0};
  uint32_t *rows, n = 0, i;
  int rc = -1;

  rows = malloc(((size_t)total + 1) * sizeof(*rows));
  if (!rows)
    return -1;
  for (i = 0; i < total; i++)
    if (mp_diff_value(&table[i].side[0], o->value) ||
	mp_diff_value(&table[i].side[1], o->value))
      rows[n++] = i;
  folded_rows = table;
  folded_keys = paths ? &d->pkeys : &d->keys;
  folded_value = o->value;
  if (o->top && n > o->top) {
    qsort(rows, n, sizeof(*rows), cmp_magnitude);
    n = (uint32_t)o->top;
  }
  qsort(rows, n, sizeof(*rows), cmp_key);
  for (i = 0; i < n; i++) {
    const struct mp_diff_row *r = &table[rows[i]];
    const struct mp_string *key = mp_strings_get(folded_keys, r->key);
    b.len = 0;
    mp_buf_add(&b, key->data, key->len);
    mp_buf_add(&b, " ", 1);
    mp_buf_u64(&b, mp_diff_value(&r->side[0], o->value));
    mp_buf_add(&b, " ", 1);
    mp_buf_u64(&b, mp_diff_value(&r->side[1], o->value));
    mp_buf_add(&b, "\n", 1);
    if (b.oom)
      goto out;
    fwrite(b.data, 1, b.len, out);
  }
  rc = 0;
out:
  folded_rows = NULL;
  folded_keys = NULL;
  mp_buf_free(&b);
  free(rows);
  return rc;
}

/* -- By object kind (--by=kind) ------------------------------------------ */

struct kind_row {
  unsigned kind;
  int64_t blocks, bytes, allocs;	/* NEW less OLD. */
};

static int cmp_kind_row(const void *a, const void *b)
{
  const struct kind_row *x = a, *y = b;
  if (x->bytes != y->bytes)
    return x->bytes > y->bytes ? -1 : 1;
  if (x->blocks != y->blocks)
    return x->blocks > y->blocks ? -1 : 1;
  return x->kind < y->kind ? -1 : x->kind > y->kind;
}

static void put_signed(struct mp_buf *b, int64_t v, int bytes, int human)
{
  mp_buf_add(b, v < 0 ? "-" : "+", 1);
  if (bytes)
    mp_name_bytes(b, v < 0 ? (uint64_t)-v : (uint64_t)v, human);
  else
    mp_buf_u64(b, v < 0 ? (uint64_t)-v : (uint64_t)v);
}

int mp_diff_kinds(FILE *out, const struct mp_kind_counts *old,
		  const struct mp_kind_counts *new_,
		  const struct mp_diff_opts *o, int json)
{
  struct kind_row rows[MP_NKINDS];
  struct mp_buf b = {0};
  size_t n = 0, i;
  unsigned k;
  int rc = -1;

  for (k = 0; k < MP_NKINDS; k++) {
    const struct mp_kind_counts *a = &old[k], *c = &new_[k];
    if (!a->held_blocks && !c->held_blocks && !a->n_alloc && !c->n_alloc &&
	!a->n_realloc && !c->n_realloc)
      continue;
    rows[n].kind = k;
    rows[n].blocks = (int64_t)(c->held_blocks - a->held_blocks);
    rows[n].bytes = (int64_t)(c->held_bytes - a->held_bytes);
    rows[n].allocs = (int64_t)(c->n_alloc - a->n_alloc);
    if (rows[n].blocks || rows[n].bytes || rows[n].allocs)
      n++;	/* The kinds that did not change are left out. */
  }
  qsort(rows, n, sizeof(rows[0]), cmp_kind_row);
  if (o->top && n > o->top)
    n = (size_t)o->top;
  if (json) {
    mp_buf_str(&b, "{\n  \"schema\": \"ljmprof-diff-kinds\",\n  \"kinds\": [");
    for (i = 0; i < n; i++) {
      const struct mp_kind_counts *a = &old[rows[i].kind];
      const struct mp_kind_counts *c = &new_[rows[i].kind];
      mp_buf_str(&b, i ? ",\n    {\"kind\": \"" : "\n    {\"kind\": \"");
      mp_name_kind(&b, rows[i].kind);
      mp_buf_printf(&b, "\", \"old\": {\"held_blocks\": %llu, "
		    "\"held_bytes\": %llu, \"allocs\": %llu}, \"new\": "
		    "{\"held_blocks\": %llu, \"held_bytes\": %llu, "
		    "\"allocs\": %llu}, \"held_blocks\": %lld, "
		    "\"held_bytes\": %lld, \"allocs\": %lld}",
		    U(a->held_blocks), U(a->held_bytes), U(a->n_alloc),
		    U(c->held_blocks), U(c->held_bytes), U(c->n_alloc),
		    (long long)rows[i].blocks, (long long)rows[i].bytes,
		    (long long)rows[i].allocs);
    }
    mp_buf_str(&b, n ? "\n  ]\n}\n" : "]\n}\n");
  } else {
    side_header(&b, "OLD:", &o->side[0]);
    side_header(&b, "NEW:", &o->side[1]);
    mp_buf_str(&b, "\nBY KIND (held blocks, held bytes, allocations; NEW "
		   "less OLD):\n");
    for (i = 0; i < n; i++) {
      mp_name_kind(&b, rows[i].kind);
      mp_buf_str(&b, ": ");
      put_signed(&b, rows[i].blocks, 0, 0);
      mp_buf_str(&b, " blocks, ");
      put_signed(&b, rows[i].bytes, 1, o->human);
      mp_buf_str(&b, ", ");
      put_signed(&b, rows[i].allocs, 0, 0);
      mp_buf_str(&b, " allocations\n");
    }
    if (!n)
      mp_buf_str(&b, "(no change of any object kind; streams recorded "
		     "with stacks have kinds)\n");
  }
  if (!b.oom) {
    fwrite(b.data, 1, b.len, out);
    rc = 0;
  }
  mp_buf_free(&b);
  return rc;
}
