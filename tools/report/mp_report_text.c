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
#include "mp_retainers.h"

/* State of one report: the name order and a line being composed. */
struct text {
  FILE *out;
  const struct mp_profile *p;
  struct mp_aliases al;
  struct mp_order order;
  struct mp_buf line;
  int human;
  uint64_t callers;	/* Call paths per location (--callers). */
  int temporary;	/* --temporary: the ALLOCATIONS rows' column too. */
  struct mp_paths paths;	/* Of the section being written. */
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
    MP_MEASURE_HELD_BYTES, MP_MEASURE_TEMPORARY
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

/* The call path of stack node id, leaf first, the way a backtrace reads:
** the frame that allocated, then who called it, down to the root. */
static void put_path(struct text *t, uint32_t id)
{
  struct mp_frame f;
  for (;;) {
    mp_profile_frame(t->p, id, &f);
    mp_name_frame(&t->line, t->p, &t->al, &f, MP_NAME_ALIASED);
    if (!(id = f.parent))
      break;
    mp_buf_str(&t->line, " <- ");
  }
}

/* The end of a listed row: its newline, the line written out once long. */
static void end_row(struct text *t)
{
  mp_buf_add(&t->line, "\n", 1);
  if (t->line.len > 4096)
    flush_line(t);
}

/* The line under a list of paths that --callers cut: how many more. */
static void more_paths(struct text *t, uint64_t left)
{
  mp_buf_str(&t->line, "\t\t(");
  mp_buf_u64(&t->line, left);
  mp_buf_str(&t->line, " more: --callers=N)\n");
}

/* The heaviest call paths of location loc (streams with stacks). */
static void call_paths(struct text *t, uint32_t loc, enum mp_path_measure m)
{
  const struct mp_paths *ps = &t->paths;
  uint32_t i, end, shown = 0;

  if (!ps->start || !t->callers || loc >= ps->nlocs)
    return;
  i = ps->start[loc];
  end = ps->start[loc + 1];
  if (i == end)
    return;
  mp_buf_str(&t->line, m == MP_PATHS_HELD ? "\tHeld by:\n" : "\tCall paths:\n");
  for (; i < end && shown < t->callers; i++, shown++) {
    struct mp_stack_counts c;
    uint64_t bytes, count;
    uint32_t id = ps->node[i];
    mp_profile_stack(t->p, id, &c);
    mp_path_figures(&c, m, &bytes, &count);
    mp_buf_add(&t->line, "\t\t", 2);
    put_bytes(t, bytes);
    mp_buf_str(&t->line, m == MP_PATHS_HELD ? " in " : ", ");
    mp_buf_u64(&t->line, count);
    mp_buf_str(&t->line, m == MP_PATHS_HELD ? " blocks: " : " events: ");
    put_path(t, id);
    end_row(t);
  }
  if (i < end)
    more_paths(t, end - i);
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
    end_row(t);
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
  if (sec < 2 && mp_paths_init(&t->paths, p, sec == 0 ? MP_PATHS_ALLOC :
						      MP_PATHS_REALLOC) < 0) {
    free(rows);
    return -1;
  }
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
    /* Only when asked: the default rows keep memprof's layout, which
    ** other tools parse (tests/tools/reference.test). */
    if (sec == 0 && t->temporary) {
      mp_buf_add(&t->line, "\t", 1);
      mp_buf_u64(&t->line, l.temporary);
      mp_buf_str(&t->line, " temporary");
    }
    mp_buf_add(&t->line, "\n", 1);
    if (sec < 2)
      call_paths(t, rows[i].loc, sec == 0 ? MP_PATHS_ALLOC : MP_PATHS_REALLOC);
    if (sec != 0)
      overrides(t, sec == 2, rows[i].loc);
    flush_line(t);
  }
  fputc('\n', t->out);
  mp_paths_free(&t->paths);
  free(rows);
  return t->line.oom ? -1 : 0;
}

/* "HEAP SUMMARY", and with --at the moment: memory events of each file. */
static void summary_title(struct text *t, const char *title,
			  const struct mp_report_opts *o,
			  const struct mp_report_input *in)
{
  size_t i;
  if (!o->at || !in || !in->at_events || !in->nfiles) {
    fprintf(t->out, "%s:\n", title);
    return;
  }
  fprintf(t->out, in->nfiles > 1 ? "%s at events " : "%s at event ", title);
  for (i = 0; i < in->nfiles; i++)
    fprintf(t->out, "%s%llu", i ? ", " : "",
	    (unsigned long long)in->at_events[i]);
  if (o->at_peak)
    fputs(in->nfiles > 1 ? " (each file's peak)" : " (the peak)", t->out);
  else if (o->at_snapshot > 1)
    fprintf(t->out, " (snapshot %llu)", (unsigned long long)o->at_snapshot);
  else if (o->at_start)
    fputs(" (the start)", t->out);
  else if (o->at_seconds)
    fprintf(t->out, " (%s s in)", o->at_seconds);
  fputs(":\n", t->out);
}

static int leak_summary(struct text *t, uint64_t top,
			const struct mp_report_opts *o,
			const struct mp_report_input *in)
{
  const struct mp_profile *p = t->p;
  struct mp_row *rows;
  size_t nrows, i;

  rows = sorted_rows(t, 3, top, &nrows);
  if (!rows)
    return -1;
  if (mp_paths_init(&t->paths, p, MP_PATHS_HELD) < 0) {
    free(rows);
    return -1;
  }
  summary_title(t, "HEAP SUMMARY", o, in);
  for (i = 0; i < nrows; i++) {
    struct mp_loc l;
    mp_profile_loc(p, rows[i].loc, &l);
    put_name(t, rows[i].loc);
    mp_buf_str(&t->line, " holds ");
    put_bytes(t, l.held_bytes);
    mp_buf_str(&t->line, ": ");
    mp_buf_u64(&t->line, l.created);
    /* The blocks of a start snapshot were not allocated in the run. */
    mp_buf_str(&t->line, l.kind == MP_LOC_START ? " at start, "
						 : " allocs, ");
    mp_buf_u64(&t->line, l.released);
    mp_buf_str(&t->line, " frees\n");
    call_paths(t, rows[i].loc, MP_PATHS_HELD);
    flush_line(t);
  }
  fputc('\n', t->out);
  mp_paths_free(&t->paths);
  free(rows);
  return t->line.oom ? -1 : 0;
}

/*
** Blocks freed by the memory event right after the one that made them
** (heaptrack's temporary allocations), most first: churn that a leak
** report never shows, and the first thing to look at when a program
** spends its time in the allocator.
*/
static int temporary_summary(struct text *t, uint64_t top)
{
  const struct mp_profile *p = t->p;
  struct mp_row *rows;
  size_t nrows, i;

  rows = sorted_rows(t, 4, top, &nrows);
  if (!rows)
    return -1;
  if (mp_paths_init(&t->paths, p, MP_PATHS_TEMPORARY) < 0) {
    free(rows);
    return -1;
  }
  fputs("TEMPORARY ALLOCATIONS:\n", t->out);
  for (i = 0; i < nrows; i++) {
    struct mp_loc l;
    mp_profile_loc_counts(p, rows[i].loc, &l);
    put_name(t, rows[i].loc);
    mp_buf_str(&t->line, ": ");
    mp_buf_u64(&t->line, l.temporary);
    mp_buf_str(&t->line, " temporary of ");
    mp_buf_u64(&t->line, l.created);
    mp_buf_str(&t->line, " blocks\t");
    put_bytes(t, l.temporary_bytes);
    mp_buf_add(&t->line, "\n", 1);
    call_paths(t, rows[i].loc, MP_PATHS_TEMPORARY);
    flush_line(t);
  }
  fputc('\n', t->out);
  mp_paths_free(&t->paths);
  free(rows);
  return t->line.oom ? -1 : 0;
}

/* A kind's or a pair's figures, after its name. */
static void kind_figures(struct text *t, const struct mp_kind_counts *c)
{
  mp_buf_str(&t->line, ": ");
  mp_buf_u64(&t->line, c->n_alloc);
  mp_buf_str(&t->line, " allocs, ");
  mp_buf_u64(&t->line, c->n_realloc);
  mp_buf_str(&t->line, " reallocs, ");
  put_bytes(t, c->alloc_bytes + c->realloc_bytes);
  mp_buf_str(&t->line, "; holds ");
  put_bytes(t, c->held_bytes);
  mp_buf_str(&t->line, " in ");
  mp_buf_u64(&t->line, c->held_blocks);
  mp_buf_str(&t->line, " blocks\n");
}

/*
** With stacks, under a kind: its heaviest call paths (--callers), by the
** bytes of its allocations and reallocations (then what they hold), each
** leaf first with those bytes, its events and what it holds.
*/
static int kind_paths(struct text *t, unsigned kind)
{
  size_t n, i;
  uint32_t *paths;

  if (!t->callers)
    return 0;
  if (!(paths = mp_kinds_paths(t->p, kind, t->callers, &n)))
    return -1;
  if (n)
    mp_buf_str(&t->line, "\tCall paths:\n");
  for (i = 0; i < n && i < t->callers; i++) {
    struct mp_kind_counts c;
    unsigned k;
    uint32_t node;
    mp_profile_kindpath(t->p, paths[i], &k, &node, &c);
    mp_buf_add(&t->line, "\t\t", 2);
    put_bytes(t, c.alloc_bytes + c.realloc_bytes);
    mp_buf_str(&t->line, ", ");
    mp_buf_u64(&t->line, c.n_alloc + c.n_realloc);
    mp_buf_str(&t->line, " events, holds ");
    put_bytes(t, c.held_bytes);
    mp_buf_str(&t->line, " in ");
    mp_buf_u64(&t->line, c.held_blocks);
    mp_buf_str(&t->line, " blocks: ");
    put_path(t, node);
    end_row(t);
  }
  if (i < n)
    more_paths(t, n - i);
  flush_line(t);
  free(paths);
  return 0;
}

/*
** --by=kind: per object kind, most bytes first, its allocations,
** reallocations and what it holds at the end, then the locations that
** allocated most of it (bytes of allocations and reallocations), and
** with stacks its heaviest call paths.
*/
static int kinds_summary(struct text *t, uint64_t top,
			 const struct mp_report_opts *o,
			 const struct mp_report_input *in)
{
  const struct mp_profile *p = t->p;
  unsigned kinds[MP_NKINDS];
  size_t n = mp_kinds_order(p, kinds), i, j, npairs;
  uint64_t locs = top ? top : MP_KIND_LOCS_DEFAULT;

  summary_title(t, "OBJECT KINDS", o, in);
  if (!mp_profile_kind_events(p))
    fputs("(no event says its kind: streams recorded with stacks do)\n",
	  t->out);
  if (top && n > top)
    n = (size_t)top;
  for (i = 0; i < n; i++) {
    struct mp_kind_counts c;
    uint32_t *pairs;
    mp_profile_kind(p, kinds[i], &c);
    mp_name_kind(&t->line, kinds[i]);
    kind_figures(t, &c);
    flush_line(t);
    if (!(pairs = mp_kinds_pairs(p, kinds[i], locs, &npairs)))
      return -1;
    for (j = 0; j < npairs; j++) {
      unsigned k;
      uint32_t loc;
      mp_profile_kindloc(p, pairs[j], &k, &loc, &c);
      mp_buf_add(&t->line, "\t", 1);
      put_name(t, loc);
      kind_figures(t, &c);
      flush_line(t);
    }
    free(pairs);
    if (kind_paths(t, kinds[i]) < 0)
      return -1;
  }
  fputc('\n', t->out);
  return t->line.oom ? -1 : 0;
}

/* Min, avg and max of a kind in the census. */
static void census_kind(struct text *t, unsigned kind,
			const struct mp_snap_kind *k)
{
  mp_name_kind(&t->line, kind);
  mp_buf_str(&t->line, ": ");
  mp_buf_u64(&t->line, k->blocks);
  mp_buf_str(&t->line, " blocks, ");
  put_bytes(t, k->bytes);
  mp_buf_str(&t->line, "; min ");
  put_bytes(t, k->min);
  mp_buf_str(&t->line, ", avg ");
  put_bytes(t, k->blocks ? k->bytes / k->blocks : 0);
  mp_buf_str(&t->line, ", max ");
  put_bytes(t, k->max);
  mp_buf_str(&t->line, "\n");
  flush_line(t);
}

/*
** --at=start --by=kind: the census of the start snapshots, per kind most
** bytes first (at most top kinds), then the functions with the most
** closures live then, and the largest table blocks; --at=snapshot:N
** --by=kind the same of each file's Nth snapshot.
*/
static int census_summary(struct text *t, uint64_t top,
			  const struct mp_report_opts *o,
			  const struct mp_report_input *in)
{
  const struct mp_profile *p = t->p;
  const struct mp_summary *s = mp_profile_total(p);
  struct mp_snap_kind ks[MP_NKINDS];
  struct mp_snap_closures cl[MP_KIND_LOCS_DEFAULT * 2];
  struct mp_snap_block big[MP_SNAP_TOP];
  unsigned order[MP_NKINDS];
  size_t n = 0, i, j, nshow = top ? (size_t)top : MP_KIND_LOCS_DEFAULT * 2;
  uint64_t blocks, bytes;
  int later = o->at_snapshot > 1;

  summary_title(t, later ? "SNAPSHOT" : "LIVE AT START", o, in);
  if (!mp_profile_census(p, &blocks, &bytes) || (!later && !s->snapshots)) {
    fputs("(no start snapshot: streams recorded with stacks have one)\n\n",
	  t->out);
    return 0;
  }
  if (later) {
    mp_buf_str(&t->line, "snapshot ");
    mp_buf_u64(&t->line, o->at_snapshot);
    mp_buf_str(&t->line, ": ");
  } else {
    mp_buf_str(&t->line, "the start snapshot: ");
  }
  mp_buf_u64(&t->line, blocks);
  mp_buf_str(&t->line, " blocks, ");
  put_bytes(t, bytes);
  mp_buf_str(&t->line, "\n");
  flush_line(t);
  for (i = 0; i < MP_NKINDS; i++) {
    mp_profile_snap_kind(p, (unsigned)i, &ks[i]);
    if (!ks[i].blocks)
      continue;
    for (j = n++; j > 0 && ks[order[j - 1]].bytes < ks[i].bytes; j--)
      order[j] = order[j - 1];
    order[j] = (unsigned)i;
  }
  for (i = 0; i < n && (!top || i < top); i++)
    census_kind(t, order[i], &ks[order[i]]);
  if (nshow > sizeof(cl) / sizeof(cl[0]))
    nshow = sizeof(cl) / sizeof(cl[0]);
  n = mp_profile_snap_closures(p, cl, nshow);
  if (n)
    fputs("Functions with the most closures:\n", t->out);
  for (i = 0; i < n; i++) {
    mp_buf_add(&t->line, "\t", 1);
    put_name(t, cl[i].loc);
    mp_buf_str(&t->line, ": ");
    mp_buf_u64(&t->line, cl[i].n);
    mp_buf_str(&t->line, " closures, ");
    put_bytes(t, cl[i].bytes);
    mp_buf_str(&t->line, "\n");
    flush_line(t);
  }
  n = mp_profile_snap_tables(p, big, nshow < MP_SNAP_TOP ? nshow : MP_SNAP_TOP);
  if (n)
    fputs("Largest tables (headers, array and hash parts):\n", t->out);
  for (i = 0; i < n; i++) {
    char addr[32];
    mp_buf_add(&t->line, "\t", 1);
    mp_name_kind(&t->line, big[i].kind);
    snprintf(addr, sizeof(addr), " 0x%llx: ", (unsigned long long)big[i].addr);
    mp_buf_str(&t->line, addr);
    put_bytes(t, big[i].size);
    mp_buf_str(&t->line, "\n");
    flush_line(t);
  }
  fputc('\n', t->out);
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

/* A full node table cut stacks: say that the limit was reached and how
** many events lost frames (an older writer cut them above their leaf). */
static void cut_note(struct text *t)
{
  const struct mp_summary *s = mp_profile_total(t->p);
  if (s->nodes_full || s->cut_events)
    fprintf(t->out, "STACKS CUT: node table limit reached: the writer's "
	    "table was full at %llu nodes; %llu events %s\n\n",
	    (unsigned long long)s->nodes_full,
	    (unsigned long long)s->cut_events,
	    s->full_roots ? "keep their own line, the frames above it cut "
	    "to one, \"" MP_CUT_FULL_NAME "\"" :
	    "have shorter stacks, charged to a caller's line (an older "
	    "writer)");
}

int mp_report_text(FILE *out, struct mp_profile *p,
		   const struct mp_report_opts *o,
		   const struct mp_report_input *in)
{
  struct text t;
  const char *note;
  int rc = -1;

  memset(&t, 0, sizeof(t));
  t.out = out;
  t.p = p;
  t.human = o->human;
  t.callers = o->callers;
  t.temporary = o->temporary;
  if (mp_aliases_init(&t.al, mp_profile_strings(p)) < 0 ||
      mp_order_init(&t.order, p) < 0)
    goto out;
  if ((note = mp_estimate_note(&t.line, mp_profile_total(p))))
    fprintf(out, "SAMPLED: %s\n\n", note);
  cut_note(&t);	/* In the header: every figure below is affected. */
  t.line.len = 0;
  if (o->retainers) {
    if (mp_report_retainers(out, p, o, &t.al) < 0)
      goto out;
  } else if (o->by_kind && (o->at_start || o->at_snapshot)) {
    if (census_summary(&t, o->top, o, in) < 0)
      goto out;
  } else if (o->by_kind) {
    if (kinds_summary(&t, o->top, o, in) < 0)
      goto out;
  } else if (o->leak_only) {
    if (leak_summary(&t, o->top, o, in) < 0)
      goto out;
  } else {
    mp_profile_sort_overrides(p, t.order.rank, t.order.loc);
    if (section(&t, o->top, 0) < 0 || section(&t, o->top, 1) < 0 ||
	section(&t, o->top, 2) < 0)
      goto out;
  }
  if (o->temporary && temporary_summary(&t, o->top) < 0)
    goto out;
  if (aliases(&t) < 0)
    goto out;
  rc = 0;
out:
  mp_buf_free(&t.line);
  mp_order_free(&t.order);
  mp_aliases_free(&t.al);
  return rc;
}
