/*
** `ljmprof stat` as text: the summary of every file read, one fact a
** line.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include "mp_report.h"

#define U(x) ((unsigned long long)(x))

/* Rows of `stat --timeline` per file: enough to see the shape. */
#define STAT_TIMELINE_ROWS 20

static void timeline_row(FILE *out, struct mp_buf *b,
			 const struct mp_timeline_point *pt, int has_time,
			 int human, int is_peak)
{
  char rss[64] = "", mapped[64] = "";
  char at[64];
  if (has_time && pt->time_ns != MP_NO_TIME)
    snprintf(at, sizeof(at), "#%llu (%llu.%03llus):", U(pt->event),
	     U(pt->time_ns / 1000000000u),
	     U(pt->time_ns % 1000000000u / 1000000u));
  else
    snprintf(at, sizeof(at), "#%llu:", U(pt->event));
  if (pt->rss) {  /* Streams with INFO RSS only. */
    b->len = 0;
    mp_name_bytes(b, pt->rss, human);
    snprintf(rss, sizeof(rss), "; process RSS %s", b->data ? b->data : "");
  }
  if (pt->mapped) {  /* Streams with INFO MAPPED only. */
    b->len = 0;
    mp_name_bytes(b, pt->mapped, human);
    snprintf(mapped, sizeof(mapped), "; Lua allocator mapped %s",
	     b->data ? b->data : "");
  }
  b->len = 0;
  mp_name_bytes(b, pt->live_bytes, human);
  fprintf(out, "  %-17s %s in %llu blocks%s%s%s\n", at,
	  b->data ? b->data : "", U(pt->live_blocks),
	  is_peak ? " (peak)" : "", rss, mapped);
}

/* One line per stream that has the figure: its first value, its highest
** (and when), its last, and the value at the heap's peak. */
static void stat_figure(FILE *out, const char *label, const struct mp_gauge *g,
			uint64_t atpeak, int human, struct mp_buf *b)
{
  b->len = 0;
  fputs(label, out);
  mp_name_bytes(b, g->first, human);
  fprintf(out, "%s at start, ", b->data ? b->data : "");
  b->len = 0;
  mp_name_bytes(b, g->max, human);
  fprintf(out, "%s at most", b->data ? b->data : "");
  if (g->max_ns != MP_NO_TIME)
    fprintf(out, " (%llu.%03llus in)", U(g->max_ns / 1000000000u),
	    U(g->max_ns % 1000000000u / 1000000u));
  b->len = 0;
  mp_name_bytes(b, g->last, human);
  fprintf(out, ", %s at end", b->data ? b->data : "");
  if (atpeak) {
    b->len = 0;
    mp_name_bytes(b, atpeak, human);
    fprintf(out, "; %s at the heap's peak", b->data ? b->data : "");
  }
}

/* "process RSS:" per stream that has INFO RSS, "Lua allocator mapped:"
** per stream that has INFO MAPPED. */
static void stat_rss(FILE *out, const struct mp_profile *p,
		     const struct mp_report_opts *o,
		     const struct mp_report_input *in, struct mp_buf *b)
{
  static const char *const label[2] = {"process RSS:        ",
					 "Lua allocator mapped: "};
  uint32_t n = mp_profile_ntimelines(p), i;
  for (i = 0; i < n; i++) {
    struct mp_timeline tl;
    const struct mp_gauge *g[2] = {&tl.rss, &tl.mapped};
    uint64_t atpeak[2];
    int k;
    mp_profile_timeline(p, i, &tl);
    atpeak[0] = tl.peak.event ? tl.peak.rss : 0;
    atpeak[1] = tl.peak.event ? tl.peak.mapped : 0;
    for (k = 0; k < 2; k++) {
      if (!g[k]->first)
	continue;
      stat_figure(out, label[k], g[k], atpeak[k], o->human, b);
      if (n > 1 && i < in->nfiles)
	fprintf(out, " (%s)", mp_name_escaped(b, in->files[i]));
      fputc('\n', out);
    }
  }
}

/*
** The heap over time as a few rows per file: points spread evenly over
** its timeline, the last among them, and the peak in its place.
*/
static void stat_timeline(FILE *out, struct mp_profile *p,
			  const struct mp_report_opts *o,
			  const struct mp_report_input *in, struct mp_buf *b)
{
  uint32_t n = mp_profile_ntimelines(p), i;

  for (i = 0; i < n; i++) {
    struct mp_timeline tl;
    uint32_t rows, r, last = UINT32_MAX;
    int peak_done = 0;
    mp_profile_timeline(p, i, &tl);
    fputs("heap over time:", out);
    if (n > 1 && i < in->nfiles)
      fprintf(out, " %s", mp_name_escaped(b, in->files[i]));
    fputc('\n', out);
    peak_done = tl.peak.event == 0;
    rows = tl.npoints < STAT_TIMELINE_ROWS ? tl.npoints : STAT_TIMELINE_ROWS;
    for (r = 0; r < rows; r++) {
      uint32_t k = rows > 1 ? (uint32_t)((uint64_t)r * (tl.npoints - 1) /
					 (rows - 1)) : 0;
      const struct mp_timeline_point *pt = &tl.points[k];
      if (k == last)
	continue;
      last = k;
      if (!peak_done && tl.peak.event <= pt->event) {
	peak_done = 1;
	if (tl.peak.event == pt->event) {
	  timeline_row(out, b, pt, tl.has_time, o->human, 1);
	  continue;
	}
	timeline_row(out, b, &tl.peak, tl.has_time, o->human, 1);
      }
      timeline_row(out, b, pt, tl.has_time, o->human, 0);
    }
    if (!peak_done)
      timeline_row(out, b, &tl.peak, tl.has_time, o->human, 1);
  }
}

/* "duration:", from the streams' last time marks: the longest, if
** several have them; nothing without. */
static void stat_duration(FILE *out, const struct mp_profile *p)
{
  uint32_t n = mp_profile_ntimelines(p), i, timed = 0;
  uint64_t d = 0;
  for (i = 0; i < n; i++) {
    struct mp_timeline tl;
    mp_profile_timeline(p, i, &tl);
    if (tl.end_ns == MP_NO_TIME)
      continue;
    timed++;
    if (tl.end_ns > d)
      d = tl.end_ns;
  }
  if (!timed)
    return;
  fprintf(out, "duration:           %llu.%03llus", U(d / 1000000000u),
	  U(d % 1000000000u / 1000000u));
  if (n > 1 && timed < n)
    fprintf(out, " (the longest; %u of %u streams have time marks)", timed,
	    n);
  else if (n > 1)
    fprintf(out, " (the longest stream)");
  fputc('\n', out);
}

int mp_stat_text(FILE *out, struct mp_profile *p,
		 const struct mp_report_opts *o,
		 const struct mp_report_input *in)
{
  const struct mp_summary *s = mp_profile_total(p);
  struct mp_buf b = {0};
  size_t i;

  for (i = 0; i < in->nfiles; i++) {
    fprintf(out, "file:               %s", mp_name_escaped(&b, in->files[i]));
    if (in->truncated[i])
      fprintf(out, " (truncated after %llu events)", U(in->events_read[i]));
    fputc('\n', out);
  }
  fprintf(out, "stream:             %s\n",
	  s->truncated_files ? "truncated" : "complete");
  if (mp_estimate_note(&b, s))
    fprintf(out, "sampled:            %s\n", b.data);
  stat_duration(out, p);
  fprintf(out, "events:             %llu\n",
	  U(s->n_alloc + s->n_realloc + s->n_free));
  fprintf(out, "  alloc:            %llu\n", U(s->n_alloc));
  fprintf(out, "  realloc:          %llu\n", U(s->n_realloc));
  fprintf(out, "  free:             %llu\n", U(s->n_free));
  b.len = 0;
  mp_name_bytes(&b, s->bytes_allocated, o->human);
  fprintf(out, "bytes allocated:    %s\n", b.data ? b.data : "");
  b.len = 0;
  mp_name_bytes(&b, s->bytes_freed, o->human);
  fprintf(out, "bytes freed:        %s\n", b.data ? b.data : "");
  b.len = 0;
  mp_name_bytes(&b, s->peak_bytes, o->human);
  fprintf(out, "peak live heap:     %s at event %llu", b.data ? b.data : "",
	  U(s->peak_event));
  if (in->nfiles > 1 && s->peak_file < in->nfiles)
    fprintf(out, " of %s", mp_name_escaped(&b, in->files[s->peak_file]));
  if (s->peak_file < mp_profile_ntimelines(p)) {
    struct mp_timeline tl;
    mp_profile_timeline(p, (uint32_t)s->peak_file, &tl);
    if (tl.peak.time_ns != MP_NO_TIME)
      fprintf(out, ", %llu.%03llus in", U(tl.peak.time_ns / 1000000000u),
	      U(tl.peak.time_ns % 1000000000u / 1000000u));
  }
  fputc('\n', out);
  b.len = 0;
  mp_name_bytes(&b, s->temporary_bytes, o->human);
  fprintf(out, "temporary allocs:   %llu (%s freed by the next event)\n",
	  U(s->temporary), b.data ? b.data : "");
  b.len = 0;
  mp_name_bytes(&b, s->live_bytes, o->human);
  fprintf(out, "live heap at end:   %s in %llu blocks\n", b.data ? b.data : "",
	  U(s->live_blocks));
  stat_rss(out, p, o, in, &b);
  fprintf(out, "symbols:            %llu (prototypes %llu, C symbols %llu, "
	  "traces %llu; %llu from events)\n",
	  U(s->n_sym_proto + s->n_sym_cfunc + s->n_sym_trace),
	  U(s->n_sym_proto), U(s->n_sym_cfunc), U(s->n_sym_trace),
	  U(s->n_sym_events));
  b.len = 0;
  mp_name_bytes(&b, s->untracked_bytes, o->human);
  fprintf(out, "untracked frees:    %llu (%s allocated before profiling)\n",
	  U(s->untracked_frees), b.data ? b.data : "");
  if (s->snapshots) {
    b.len = 0;
    mp_name_bytes(&b, s->snap_bytes, o->human);
    fprintf(out, "live at start:      %s in %llu blocks (the start "
	    "snapshot; not allocated)\n", b.data ? b.data : "",
	    U(s->snap_blocks));
  }
  if (s->later_snapshots)  /* Censuses: report --at=snapshot:N. */
    fprintf(out, "later snapshots:    %llu (report --at=snapshot:2 and on "
	    "--by=kind: their censuses)\n", U(s->later_snapshots));
  if (s->overwritten)
    fprintf(out, "overwritten blocks: %llu (allocated over a live block)\n",
	    U(s->overwritten));
  if (s->nodes_full || s->cut_events)  /* Stacks past it are cut. */
    fprintf(out, "stack nodes:        limit reached: the writer's table was "
	    "full at %llu nodes; %llu events cut, %s\n", U(s->nodes_full),
	    U(s->cut_events), s->full_roots ? "their own line kept" :
	    "charged to a caller's line (an older writer)");
  if (o->timeline)
    stat_timeline(out, p, o, in, &b);
  mp_buf_free(&b);
  return 0;
}
