/*
** The driver that `ljmprof report` and `ljmprof stat` share: a command
** fills a struct cli with its name, options and help, and runs it.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef LJMPROF_REPORTS_H
#define LJMPROF_REPORTS_H

#include <getopt.h>
#include <stdio.h>

#include "mp_load.h"
#include "mp_report.h"

/* Long options without a short one. */
enum { OPT_VALUE = 256, OPT_LIST_FORMATS, OPT_CALLERS, OPT_AT,
       OPT_TEMPORARY, OPT_TIMELINE, OPT_BY, OPT_KIND,
       OPT_RETAINERS };

struct cli {
  /* The command's. */
  const char *name;		/* For messages: "report". */
  int is_stat;			/* Formats' stat functions, no locations. */
  const struct option *opts;	/* getopt_long's table... */
  const char *optstring;	/* ...and short options. */
  void (*help)(FILE *out);
  /* Filled in by the options. */
  struct mp_report_opts ro;
  enum mp_group group;
  int merge;
  int value_given;
  int callers_given;	/* --callers was given. */
  const char *at;		/* --at as given, or NULL... */
  struct mp_load_moment moment;	/* ...and what it is (peak: each file
				** at its own). */
  uint8_t kind_keep[MP_NKINDS];	/* --kind: the kinds kept. */
  const char *output;		/* -o FILE, or NULL: standard output. */
  int output_open;		/* Standard output is ready for reports. */
};

/* Parse argv (argv[0] is the command), read, report; an exit status. */
int ljmprof_run_reports(struct cli *c, int argc, char **argv);

#endif
