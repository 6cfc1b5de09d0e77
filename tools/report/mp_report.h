/*
** Reports over an mp_profile: text (memprof layout), leak summary,
** JSON and folded stacks, plus the `stat` summary.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef MP_REPORT_H
#define MP_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "mp_names.h"
#include "mp_profile.h"

/* Version of the JSON documents; bump on any incompatible change. */
#define MP_JSON_SCHEMA_VERSION 1

enum mp_format { MP_FORMAT_TEXT, MP_FORMAT_JSON, MP_FORMAT_FOLDED };

/* What a folded stack line counts. */
enum mp_value {
  MP_VALUE_ALLOC_BYTES,	/* New sizes of allocs and reallocs. */
  MP_VALUE_ALLOC_COUNT,	/* Alloc and realloc events. */
  MP_VALUE_HELD_BYTES	/* Bytes still held at the end. */
};

struct mp_report_opts {
  enum mp_format format;
  enum mp_value value;
  int leak_only;
  int human;
  uint64_t top;		/* Lines per section; 0 for all. */
};

/* What the report is about, for headers and JSON. */
struct mp_report_input {
  const char *const *files;	/* Names as given ("-" for stdin). */
  size_t nfiles;
  const int *truncated;		/* Per file. */
  const uint64_t *events_read;	/* Per file: complete memory events. */
};

/* Each writes the whole report to out; 0, or -1 when out of memory. */
int mp_report_text(FILE *out, struct mp_profile *p,
		   const struct mp_report_opts *o);
int mp_report_json(FILE *out, struct mp_profile *p,
		   const struct mp_report_opts *o,
		   const struct mp_report_input *in);
int mp_report_folded(FILE *out, const struct mp_profile *p,
		     const struct mp_report_opts *o);

/* `ljmprof stat`: the summary of p->total, as text or JSON. */
int mp_report_stat(FILE *out, const struct mp_profile *p,
		   const struct mp_report_opts *o,
		   const struct mp_report_input *in);

/* JSON helpers shared by the report and stat. */
void mp_json_string(FILE *out, const char *s, size_t len);
void mp_json_summary(FILE *out, const struct mp_profile *p,
		     const struct mp_report_input *in, const char *indent);

#endif
