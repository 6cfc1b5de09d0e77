/*
** Reports over an mp_profile: the table of output formats and their
** functions (text in the memprof layout with its leak summary, JSON,
** folded stacks, pprof, an SVG flame graph, an HTML page, DHAT's JSON,
** and the `stat` summary as text or JSON).
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef MP_REPORT_H
#define MP_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "mp_moments.h"
#include "mp_names.h"
#include "mp_profile.h"

/* Version of the JSON documents; bump on any incompatible change. */
#define MP_JSON_SCHEMA_VERSION 3

/* What a folded stack line counts. */
enum mp_value {
  MP_VALUE_ALLOC_BYTES,	/* New sizes of allocs and reallocs. */
  MP_VALUE_ALLOC_COUNT,	/* Alloc and realloc events. */
  MP_VALUE_HELD_BYTES	/* Bytes still held at the end. */
};

struct mp_format;

struct mp_report_opts {
  const struct mp_format *format;
  enum mp_value value;
  int leak_only;
  int human;
  uint64_t top;		/* Lines per section; 0 for all. */
  uint64_t callers;	/* Call paths per location; 0 for none. */
  int at;		/* --at: the profile is each stream up to one
			** moment (mp_report_input.at_events). */
  int at_peak;		/* That moment is each stream's peak... */
  int at_start;		/* ...or its start (after its start snapshot)... */
  uint64_t at_snapshot;	/* ...or its snapshot N (1: at_start too)... */
  const char *at_seconds;	/* ...or its time mark, as given; NULL. */
  uint64_t at_ns;	/* That time, in nanoseconds. */
  int temporary;	/* Text: the temporary allocations' section. */
  int timeline;		/* stat as text: the heap over time. */
  int by_kind;		/* --by=kind: the figures of each object kind. */
  int kinds_kept;	/* --kind: only the events of some kinds. */
  int retainers;	/* --retainers: why objects are alive (the last
			** heap graph of the input)... */
  const char *retainers_of;	/* ...of the locations so named; NULL. */
};

/* Locations listed under each kind with --by=kind, without --top. */
#define MP_KIND_LOCS_DEFAULT 5

/*
** Call paths under each location in the text report, by default: three
** show whether one caller or several account for a line, and keep a
** report of hundreds of locations something to read, not to search.
*/
#define MP_CALLERS_DEFAULT 3

/* What the report is about, for headers and JSON. */
struct mp_report_input {
  const char *const *files;	/* Names as given ("-" for stdin). */
  size_t nfiles;
  const int *truncated;		/* Per file. */
  const uint64_t *events_read;	/* Per file: complete memory events. */
  const uint64_t *at_events;	/* Per file with --at: the memory event
				** read up to; NULL without. */
  const struct mp_moments *moments;	/* MP_FMT_MOMENTS: what was live
					** at moments of each file; NULL. */
};

/*
** An output format: one row of mp_formats (mp_formats.c) and the file
** of its functions. The row drives --format, the checks of the other
** options, --help, `report --list-formats` (which the golden test and
** the fuzz target iterate over).
*/
typedef int (*mp_report_fn)(FILE *out, struct mp_profile *p,
			    const struct mp_report_opts *o,
			    const struct mp_report_input *in);

#define MP_FMT_LEAK_ONLY	0x01	/* Takes --leak-only. */
#define MP_FMT_VALUE		0x02	/* Takes --value. */
#define MP_FMT_MERGED		0x04	/* One report for all files, always. */
#define MP_FMT_FRAMES		0x08	/* Lines as frames under their function. */
#define MP_FMT_NO_OVERRIDES	0x10	/* Prints no override pairs. */
#define MP_FMT_OVERRIDE_VALUES	0x20	/* Prints counts and bytes per pair. */
#define MP_FMT_FILE_HEADERS	0x40	/* "==> FILE <==" between reports. */
#define MP_FMT_BINARY		0x80	/* Not text: never to a terminal. */
#define MP_FMT_CALLERS		0x100	/* Takes --callers. */
#define MP_FMT_TEMPORARY	0x200	/* Takes --temporary. */
#define MP_FMT_BY_KIND		0x400	/* Takes --by=kind. */
#define MP_FMT_MOMENTS		0x800	/* Shows moments (mp_moments): each
					** file read twice, no --at. */
#define MP_FMT_PAGE		0x1000	/* Text, but a page for a browser:
					** never to a terminal. */
#define MP_FMT_LIFETIMES	0x2000	/* Needs block lifetimes. */
#define MP_FMT_KINDS		0x4000	/* Needs the figures by object kind. */
#define MP_FMT_RETAINERS	0x8000	/* Takes --retainers. */
#define MP_FMT_GRAPH		0x10000	/* Is the last heap graph of the input. */
#define MP_FMT_USES_GRAPH	0x20000	/* Shows the heap graph where the
					** input has one (no message where
					** not). */

/* How to take a heap graph, for the messages of an input without one. */
#define MP_GRAPH_HOWTO "take one with misc.memprof.snapshot{graph = " \
  "true}, or LJMPROF_SNAPSHOT_SIGNAL with LJMPROF_GRAPH=yes"

struct mp_diff;
struct mp_diff_opts;
typedef int (*mp_diff_fn)(FILE *out, const struct mp_diff *d,
			  const struct mp_diff_opts *o);

struct mp_format {
  const char *name;
  unsigned flags;	/* MP_FMT_*. */
  mp_report_fn report;	/* `ljmprof report`. */
  mp_report_fn stat;	/* `ljmprof stat`, or NULL: not a stat format. */
  mp_diff_fn diff;	/* `ljmprof diff` (mp_diff.h), or NULL: not one. */
  /* Where this format has what --leak-only shows, for the message that
  ** rejects --leak-only with it; NULL when it takes --leak-only. */
  const char *held;
};

/* The formats, the default first. */
extern const struct mp_format mp_formats[];
extern const size_t mp_nformats;

/* The command a format is for: report takes every row, stat and diff
** the rows with their function. */
enum mp_format_for { MP_FORMAT_REPORT, MP_FORMAT_STAT, MP_FORMAT_DIFF };

/* The format called name, for that command; NULL when there is none. */
const struct mp_format *mp_format_find(const char *name,
				       enum mp_format_for use);

/* The names the options --group and --value take, shared by report and
** diff: 0 with *out set, or -1 for a name that is none of them. */
int mp_group_parse(const char *name, enum mp_group *out);
int mp_value_parse(const char *name, enum mp_value *out);

/* The formats of a command whose flags include all of flags, as
** English: "text (default), json or folded". Returns out. */
char *mp_format_list(char *out, size_t size, enum mp_format_for use,
		     unsigned flags, int mark_default);

/* The formats' functions: each writes the whole report to out; 0, or -1
** when out of memory. The report ones may sort p's override pairs. */
int mp_report_text(FILE *out, struct mp_profile *p,
		   const struct mp_report_opts *o,
		   const struct mp_report_input *in);
int mp_report_json(FILE *out, struct mp_profile *p,
		   const struct mp_report_opts *o,
		   const struct mp_report_input *in);
int mp_report_heapsnapshot(FILE *out, struct mp_profile *p,
			   const struct mp_report_opts *o,
			   const struct mp_report_input *in);
int mp_report_folded(FILE *out, struct mp_profile *p,
		     const struct mp_report_opts *o,
		     const struct mp_report_input *in);
int mp_report_pprof(FILE *out, struct mp_profile *p,
		    const struct mp_report_opts *o,
		    const struct mp_report_input *in);
int mp_report_svg(FILE *out, struct mp_profile *p,
		  const struct mp_report_opts *o,
		  const struct mp_report_input *in);
int mp_report_html(FILE *out, struct mp_profile *p,
		    const struct mp_report_opts *o,
		    const struct mp_report_input *in);
int mp_report_dhat(FILE *out, struct mp_profile *p,
		   const struct mp_report_opts *o,
		   const struct mp_report_input *in);

/* `ljmprof stat`: the summary of p->total. */
int mp_stat_text(FILE *out, struct mp_profile *p,
		 const struct mp_report_opts *o,
		 const struct mp_report_input *in);
int mp_stat_json(FILE *out, struct mp_profile *p,
		 const struct mp_report_opts *o,
		 const struct mp_report_input *in);

/*
** Object kinds (mp_kind_names.c; mp_kind_name and mp_name_kind are in
** mp_names.h). mp_kinds_parse: the --kind list
** ("table,string,12") into keep[]; NULL, or where the bad name begins.
** mp_kinds_order: the kinds with figures, most bytes first; their count.
** mp_kinds_pairs: the (kind, location) pairs of one kind, most bytes
** first, at most top (0: all), as indexes for mp_profile_kindloc (to
** free; NULL when out of memory).
*/
const char *mp_kinds_parse(const char *list, uint8_t keep[MP_NKINDS]);
size_t mp_kinds_order(const struct mp_profile *p, unsigned kinds[MP_NKINDS]);
uint32_t *mp_kinds_pairs(const struct mp_profile *p, unsigned kind,
			 uint64_t top, size_t *count);
/* mp_kinds_paths: with stacks, the call paths (stack nodes) of one
** kind, most bytes first (then most held bytes), at most top (0: all),
** as indexes for mp_profile_kindpath; *count is how many the kind has
** (more than are returned when top cut them). */
uint32_t *mp_kinds_paths(const struct mp_profile *p, unsigned kind,
			 uint64_t top, size_t *count);

/* The pieces of the formats that `ljmprof diff` (mp_diff_report.c)
** writes with: a location's folded frames (aliases may be NULL: names
** in full, escaped as frames), and a JSON string appended to b. */
void mp_folded_frames(struct mp_buf *out, const struct mp_profile *p,
		      struct mp_aliases *al, const struct mp_loc *l);
void mp_buf_json_string(struct mp_buf *b, const char *s, size_t len);

/* The HTML page's frame (mp_report_html.c), for `ljmprof diff`'s page:
** the head with its style and the heading; the page's data (JSON) and
** its script; text escaped for HTML. */
void mp_html_begin(FILE *out, const char *heading, const char *title);
void mp_html_end(FILE *out, const struct mp_buf *data);
void mp_html_text(FILE *out, const char *s);
/* A name as a JSON string, cut to most bytes (at a character) with an
** ellipsis: the pages keep every name short. */
#define MP_HTML_NAME_MAX 300
void mp_html_json_name(struct mp_buf *b, const char *s, size_t len,
		       size_t most);

/* For a sampled profile (s->sample_mean), "figures are estimates from
** sampling at a mean of 4M bytes", in b; NULL when not sampled (or out
** of memory). mp_estimate.c. */
const char *mp_estimate_note(struct mp_buf *b, const struct mp_summary *s);

#endif
