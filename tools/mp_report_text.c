/*
** The text report in the established memprof layout, and the leak
** summary (--leak-only).
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_report.h"

/* One printed line: sort key and what to print. */
struct row {
  uint64_t key;		/* Event count, or bytes held. */
  uint32_t loc;		/* Its name is in row_names (16 bytes a row: a
			** profile can have millions of locations). */
};

static const struct mp_report_names *row_names;	/* For cmp_row. */

#define ROW_NAME(r) mp_report_name(row_names, (r)->loc)

/* Largest key first; ties by name so that output is reproducible. */
static int cmp_row(const void *a, const void *b)
{
  const struct row *x = a, *y = b;
  if (x->key != y->key)
    return x->key > y->key ? -1 : 1;
  return strcmp(ROW_NAME(x), ROW_NAME(y));
}

static int cmp_name(const void *a, const void *b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Record that the alias of this location's string gets printed. */
static void mark_alias(struct mp_report_names *n, const struct mp_loc *l)
{
  struct mp_aliases *al = &n->aliases;
  if (al->of && l->str < al->nstrings && al->of[l->str])
    al->used[al->of[l->str]] = 1;
}

static void put_bytes(FILE *out, uint64_t v, int human)
{
  struct mp_buf b = {0};
  mp_name_bytes(&b, v, human);
  if (b.data)
    fputs(b.data, out);
  mp_buf_free(&b);
}

/* First override key with this is_free << 31 | loc prefix, or count. */
static size_t overrides_at(const uint64_t *ov, size_t count, uint64_t prefix)
{
  size_t lo = 0, hi = count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if ((ov[mid] >> 32) < prefix)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

enum section { SEC_ALLOC, SEC_REALLOC, SEC_FREE };

static int section(FILE *out, const struct mp_profile *p,
		   struct mp_report_names *n, const uint64_t *ov,
		   size_t nov, const struct mp_report_opts *o, enum section sec)
{
  static const char *const titles[] = {"ALLOCATIONS", "REALLOCATIONS",
				       "DEALLOCATIONS"};
  struct row *rows = malloc((p->nlocs + 1) * sizeof(*rows));
  const char **origs = NULL;
  size_t nrows = 0, i;
  uint32_t id;

  if (!rows)
    return -1;
  for (id = 0; id < p->nlocs; id++) {
    struct mp_loc l[1];
    uint64_t k;
    mp_profile_loc(p, id, l);
    k = sec == SEC_ALLOC ? l->n_alloc :
		 sec == SEC_REALLOC ? l->n_realloc : l->n_free;
    if (k) {
      rows[nrows].key = k;
      rows[nrows].loc = id;
      nrows++;
    }
  }
  row_names = n;
  qsort(rows, nrows, sizeof(*rows), cmp_row);
  if (o->top && nrows > o->top)
    nrows = (size_t)o->top;

  fprintf(out, "%s\n", titles[sec]);
  for (i = 0; i < nrows; i++) {
    struct mp_loc l[1], ol;
    uint64_t plus, minus, prefix;
    size_t first, j, norig = 0;

    mp_profile_loc(p, rows[i].loc, l);
    plus = sec == SEC_ALLOC ? l->alloc_bytes :
		    sec == SEC_REALLOC ? l->realloc_new : 0;
    minus = sec == SEC_ALLOC ? 0 :
	    sec == SEC_REALLOC ? l->realloc_old : l->free_bytes;

    mark_alias(n, l);
    fprintf(out, "%s: %llu events\t+", mp_report_name(n, rows[i].loc),
	    (unsigned long long)rows[i].key);
    put_bytes(out, plus, o->human);
    fputs("\t-", out);
    put_bytes(out, minus, o->human);
    fputc('\n', out);
    if (sec == SEC_ALLOC)
      continue;
    prefix = (uint64_t)(sec == SEC_FREE) << 31 | rows[i].loc;
    first = overrides_at(ov, nov, prefix);
    for (j = first; j < nov && (ov[j] >> 32) == prefix; j++)
      ;
    if (j == first)
      continue;
    origs = realloc(origs, (j - first) * sizeof(*origs));
    if (!origs) {
      free(rows);
      return -1;
    }
    for (j = first; j < nov && (ov[j] >> 32) == prefix; j++) {
      uint32_t orig = (uint32_t)ov[j];
      origs[norig++] = mp_report_name(n, orig);
      mp_profile_loc(p, orig, &ol);
      mark_alias(n, &ol);
    }
    qsort(origs, norig, sizeof(*origs), cmp_name);
    fputs("\tOverrides:\n", out);
    for (j = 0; j < norig; j++)
      fprintf(out, "\t\t%s\n", origs[j]);
    fputc('\n', out);
  }
  fputc('\n', out);
  free(origs);
  free(rows);
  return 0;
}

static int leak_summary(FILE *out, const struct mp_profile *p,
			struct mp_report_names *n,
			const struct mp_report_opts *o)
{
  struct row *rows = malloc((p->nlocs + 1) * sizeof(*rows));
  size_t nrows = 0, i;
  uint32_t id;

  if (!rows)
    return -1;
  for (id = 0; id < p->nlocs; id++)
    if (p->locs[id].held_bytes) {
      rows[nrows].key = p->locs[id].held_bytes;
      rows[nrows].loc = id;
      nrows++;
    }
  row_names = n;
  qsort(rows, nrows, sizeof(*rows), cmp_row);
  if (o->top && nrows > o->top)
    nrows = (size_t)o->top;
  fputs("HEAP SUMMARY:\n", out);
  for (i = 0; i < nrows; i++) {
    struct mp_loc l[1];
    mp_profile_loc(p, rows[i].loc, l);
    mark_alias(n, l);
    fprintf(out, "%s holds ", mp_report_name(n, rows[i].loc));
    put_bytes(out, l->held_bytes, o->human);
    fprintf(out, ": %llu allocs, %llu frees\n",
	    (unsigned long long)l->created, (unsigned long long)l->released);
  }
  fputc('\n', out);
  free(rows);
  return 0;
}

/* The texts behind the aliases printed above, each once. */
static void aliases(FILE *out, const struct mp_profile *p,
		    const struct mp_report_names *n)
{
  static const char rule[] =
    "================================================================";
  const struct mp_aliases *al = &n->aliases;
  uint32_t id;
  int any = 0;

  if (!al->of)
    return;
  for (id = 0; id < al->nstrings; id++) {
    const struct mp_string *s;
    if (!al->of[id] || !al->used[al->of[id]])
      continue;
    if (!any)
      fputs("ALIASES:\n", out);
    any = 1;
    s = mp_strings_get(&p->strings, id);
    fprintf(out, "CHUNK#%u:\n%s\n", al->of[id], rule);
    fwrite(s->data, 1, s->len, out);
    if (s->len && s->data[s->len - 1] != '\n')
      fputc('\n', out);
    fprintf(out, "%s\n\n", rule);
  }
}

int mp_report_text(FILE *out, struct mp_profile *p,
		   const struct mp_report_opts *o)
{
  struct mp_report_names n;
  const uint64_t *ov = NULL;
  size_t nov = 0;
  int rc = -1;

  if (mp_report_names_init(&n, p, MP_NAME_ALIASED) < 0)
    goto out;
  if (o->leak_only) {
    if (leak_summary(out, p, &n, o) < 0)
      goto out;
  } else {
    ov = mp_profile_override_keys(p, &nov);
    if (!ov && nov)
      goto out;
    if (section(out, p, &n, ov, nov, o, SEC_ALLOC) < 0 ||
	section(out, p, &n, ov, nov, o, SEC_REALLOC) < 0 ||
	section(out, p, &n, ov, nov, o, SEC_FREE) < 0)
      goto out;
  }
  aliases(out, p, &n);
  rc = 0;
out:
  mp_report_names_free(&n);
  return rc;
}
