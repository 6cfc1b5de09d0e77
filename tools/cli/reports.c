/*
** What `ljmprof report` and `ljmprof stat` share: parsing their options
** (each command gives its table), reading the files, one report per
** file or one for all, and the exit status.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "mp_load.h"
#include "reports.h"

/* The formats the command has. */
static enum mp_format_for formats_of(const struct cli *c)
{
  return c->is_stat ? MP_FORMAT_STAT : MP_FORMAT_REPORT;
}

static int usage_error(const struct cli *c, const char *what, const char *arg)
{
  return ljmprof_usage_error(c->name, what, arg);
}

/*
** An option that the chosen format does not take: name the formats that
** take it and, for --leak-only, where each other format has the same.
*/
static int option_error(const struct cli *c, const char *opt, unsigned flag)
{
  char formats[256];
  struct mp_buf msg = {0};
  const char *sep = " (";
  size_t i;
  int rc;

  mp_format_list(formats, sizeof(formats), formats_of(c), flag, 0);
  if (flag == MP_FMT_VALUE) {
    mp_buf_printf(&msg, "%s only applies to --format=%s", opt, formats);
  } else {
    mp_buf_printf(&msg, "%s only applies to the %s format", opt, formats);
    for (i = 0; i < mp_nformats && flag == MP_FMT_LEAK_ONLY; i++)
      if (mp_formats[i].held && !(mp_formats[i].flags & flag)) {
	mp_buf_printf(&msg, "%s%s", sep, mp_formats[i].held);
	sep = "; ";
      }
    if (*sep == ';')
      mp_buf_str(&msg, ")");
  }
  rc = usage_error(c, msg.data ? msg.data : opt, NULL);
  mp_buf_free(&msg);
  return rc;
}

/* Whether -o names one of the input files (said): writing it would
** destroy the input before it is read. */
static int output_is_input(const struct cli *c, char **files, int nfiles)
{
  struct stat out, in;
  int i;

  if (stat(c->output, &out) < 0 || !S_ISREG(out.st_mode))
    return 0;
  for (i = 0; i < nfiles; i++)
    if (strcmp(files[i], "-") && stat(files[i], &in) == 0 &&
	in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
      struct mp_buf name = {0};
      ljmprof_error("%s: -o %s is also an input file", c->name,
		    mp_name_escaped(&name, c->output));
      mp_buf_free(&name);
      return 1;
    }
  return 0;
}

/* Why a format is never written to a terminal. */
static const char *not_text(const struct mp_format *f)
{
  return f->flags & MP_FMT_BINARY ? "binary" : "a page for a browser";
}

/*
** Point standard output at -o FILE, once, before the first report: a
** run that reports nothing leaves FILE as it was. Created 0600, as the
** streams: names in a report can be a program's source. 0, or -1 (said).
*/
static int open_output(struct cli *c)
{
  struct mp_buf name = {0};
  int fd;

  if (c->output_open || !c->output)
    return 0;
  c->output_open = 1;
  fd = open(c->output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    ljmprof_error("cannot write %s: %s", mp_name_escaped(&name, c->output),
		  strerror(errno));
  } else if ((c->ro.format->flags & (MP_FMT_BINARY | MP_FMT_PAGE)) &&
	     isatty(fd)) {
    ljmprof_error("%s: the %s format is %s: not written to a terminal",
		  c->name, c->ro.format->name, not_text(c->ro.format));
  } else if (fflush(stdout) != 0 || dup2(fd, STDOUT_FILENO) < 0) {
    ljmprof_error("cannot write %s: %s", mp_name_escaped(&name, c->output),
		  strerror(errno));
  } else {
    close(fd);
    mp_buf_free(&name);
    return 0;
  }
  if (fd >= 0)
    close(fd);
  mp_buf_free(&name);
  c->output = NULL;
  return -1;
}

/* Parse options; returns -1 to go on, or an exit status. */
static int parse_args(struct cli *c, int argc, char **argv)
{
  unsigned flags;
  int opt;

  opterr = 0;
  optind = 1;
  while ((opt = getopt_long(argc, argv,
			    c->optstring, c->opts,
			    NULL)) != -1) {
    switch (opt) {
    case 'f':
      if (!(c->ro.format = mp_format_find(optarg, formats_of(c))))
	return usage_error(c, "unknown format", optarg);
      break;
    case OPT_LIST_FORMATS: {
      size_t i;
      for (i = 0; i < mp_nformats; i++)
	puts(mp_formats[i].name);
      return LJMPROF_EXIT_OK;
    }
    case 'l':
      c->ro.leak_only = 1;
      break;
    case 'H':
      c->ro.human = 1;
      break;
    case 'g':
      if (mp_group_parse(optarg, &c->group) < 0)
	return usage_error(c, "unknown grouping", optarg);
      break;
    case 'n':
      if (mp_load_parse_u64(optarg, &c->ro.top, 0) < 0)
	return usage_error(c, "--top needs a positive number, not", optarg);
      break;
    case OPT_VALUE:
      c->value_given = 1;
      if (mp_value_parse(optarg, &c->ro.value) < 0)
	return usage_error(c, "unknown value", optarg);
      break;
    case OPT_CALLERS:
      c->callers_given = 1;
      if (!strcmp(optarg, "0"))
	c->ro.callers = 0;
      else if (mp_load_parse_u64(optarg, &c->ro.callers, 0) < 0)
	return usage_error(c, "--callers needs a number, not", optarg);
      break;
    case OPT_TIMELINE:
      c->ro.timeline = 1;
      break;
    case OPT_TEMPORARY:
      c->ro.temporary = 1;
      break;
    case OPT_BY:
      if (strcmp(optarg, "kind"))
	return usage_error(c, "--by takes kind, not", optarg);
      c->ro.by_kind = 1;
      break;
    case OPT_RETAINERS:
      c->ro.retainers = 1;
      c->ro.retainers_of = optarg && *optarg ? optarg : NULL;
      break;
    case OPT_KIND: {
      const char *bad = mp_kinds_parse(optarg, c->kind_keep);
      if (bad)
	return usage_error(c, "--kind: unknown object kind", bad);
      c->ro.kinds_kept = 1;
      break;
    }
    case OPT_AT:
      c->at = optarg;
      if (mp_load_parse_moment(optarg, 1, &c->moment) < 0)
	return usage_error(c, "--at needs start, peak, snapshot:N, #EVENT or "
			   "SECONDS, not",
			   optarg);
      /* The start: the end of the start snapshot (snapshot:1's), before
      ** event 1. */
      c->ro.at_snapshot = c->moment.snapshot;
      c->ro.at_start = c->moment.at == MP_AT_START ||
		       c->ro.at_snapshot == 1;
      c->ro.at_seconds = c->moment.at == MP_AT_SECONDS ? optarg : NULL;
      c->ro.at_ns = c->moment.ns;
      break;
    case 'm':
      c->merge = 1;
      break;
    case 'o':
      c->output = optarg;
      break;
    case 'h':
      c->help(stdout);
      return LJMPROF_EXIT_OK;
    default:
      return ljmprof_getopt_error(c->name, opt, argv);
    }
  }
  if (optind >= argc)
    return usage_error(c, "no input file", NULL);
  flags = c->ro.format->flags;
  if (c->value_given && !(flags & MP_FMT_VALUE))
    return option_error(c, "--value", MP_FMT_VALUE);
  if (c->ro.leak_only && !(flags & MP_FMT_LEAK_ONLY))
    return option_error(c, "--leak-only", MP_FMT_LEAK_ONLY);
  if (c->callers_given && !(flags & MP_FMT_CALLERS))
    return option_error(c, "--callers", MP_FMT_CALLERS);
  if (c->ro.temporary && !(flags & MP_FMT_TEMPORARY))
    return option_error(c, "--temporary", MP_FMT_TEMPORARY);
  if (c->ro.by_kind && !(flags & MP_FMT_BY_KIND))
    return option_error(c, "--by=kind", MP_FMT_BY_KIND);
  if (c->ro.retainers && !(flags & MP_FMT_RETAINERS))
    return option_error(c, "--retainers", MP_FMT_RETAINERS);
  if ((flags & (MP_FMT_BINARY | MP_FMT_PAGE)) && !c->output &&
      isatty(STDOUT_FILENO)) {
    ljmprof_error("%s: the %s format is %s: not written to a terminal "
		  "(use -o FILE or redirect the output)", c->name,
		  c->ro.format->name, not_text(c->ro.format));
    return LJMPROF_EXIT_USAGE;
  }
  if (c->at && (flags & MP_FMT_MOMENTS))
    return usage_error(c, "--at does not apply to the html format (its page "
		       "has the peak and a chart of moments to choose from)",
		       NULL);
  if (c->output && output_is_input(c, argv + optind, argc - optind))
    return LJMPROF_EXIT_USAGE;
  if (c->at) {
    /* What was live then: the leak summary, held bytes by default. */
    c->ro.at = 1;
    c->ro.at_peak = c->moment.at == MP_AT_PEAK;
    if (flags & MP_FMT_LEAK_ONLY)
      c->ro.leak_only = 1;
    if (!c->value_given)
      c->ro.value = MP_VALUE_HELD_BYTES;
  }
  if (flags & MP_FMT_MERGED)
    c->merge = 1;
  if ((flags & MP_FMT_FRAMES) && c->group == MP_GROUP_LINE)
    c->group = MP_GROUP_FRAMES;
  return -1;
}

/* Print one report over p for files[0..n). */
static int emit(struct cli *c, struct mp_profile *p,
		const struct mp_report_input *in)
{
  int rc;
  if (open_output(c) < 0)
    return LJMPROF_EXIT_ERROR;
  mp_profile_done_reading(p);
  /* A large heap graph takes seconds to solve: said on a terminal. */
  if (mp_profile_graph_pending(p) > 1000000 && isatty(STDERR_FILENO)) {
    fprintf(stderr, "ljmprof: %s: the heap graph's %llu references: the "
	    "shortest chains and the dominators...", c->name,
	    (unsigned long long)mp_profile_graph_pending(p) - 1);
    (void)mp_profile_graph(p);
    fputs("\r\033[K", stderr);
  }
  rc = (c->is_stat ? c->ro.format->stat : c->ro.format->report)(stdout, p,
								 &c->ro, in);
  if (rc < 0) {
    ljmprof_error("out of memory while writing the report");
    return LJMPROF_EXIT_ERROR;
  }
  if ((c->ro.format->flags & MP_FMT_GRAPH) && !mp_profile_graph(p))
    ljmprof_error("%s: no snapshot of the input has a heap graph: the %s "
		  "has the root alone (" MP_GRAPH_HOWTO ")", c->name,
		  c->ro.format->name);
  return LJMPROF_EXIT_OK;
}

/*
** The exit status, from the most to the least serious: 2 usage (decided
** before reading); 1 nothing could be reported (every input bad), or
** out of memory, or the report could not be written; 3 reported, but an
** input was bad (skipped), truncated or malformed after some events
** (read up to its last good event); 0.
*/
struct outcome {
  int reported;		/* Reports printed. */
  int partial;		/* Inputs skipped or cut short. */
  int fatal;		/* Out of memory, or a report failed. */
};

static int exit_status(const struct outcome *o)
{
  if (o->fatal || !o->reported)
    return LJMPROF_EXIT_ERROR;
  return o->partial ? LJMPROF_EXIT_TRUNCATED : LJMPROF_EXIT_OK;
}

/* A profile that keeps what the report will need: stat no locations,
** the leak summary and folded stacks no override pairs, only JSON their
** counts and bytes. NULL (said, and fatal) when out of memory. */
static struct mp_profile *new_profile(const struct cli *c, struct outcome *o)
{
  unsigned flags = c->ro.format->flags, needs = 0;
  struct mp_profile *p;

  if (c->is_stat)
    needs = MP_PROFILE_TOTALS_ONLY | MP_PROFILE_NO_OVERRIDES;
  else if (c->ro.leak_only || (flags & MP_FMT_NO_OVERRIDES))
    needs = MP_PROFILE_NO_OVERRIDES;
  else if (flags & MP_FMT_OVERRIDE_VALUES)
    needs = MP_PROFILE_OVERRIDE_VALUES;
  if (c->ro.by_kind || c->ro.kinds_kept)
    needs |= MP_PROFILE_KINDS;
  else if (flags & MP_FMT_KINDS)	/* Where the streams say them. */
    needs |= MP_PROFILE_KINDS | MP_PROFILE_KINDS_EXT;
  if (flags & MP_FMT_LIFETIMES)
    needs |= MP_PROFILE_LIFETIMES;
  if (flags & MP_FMT_MOMENTS)
    needs |= MP_PROFILE_PEAK;
  if (c->ro.retainers || (flags & (MP_FMT_GRAPH | MP_FMT_USES_GRAPH)))
    needs |= MP_PROFILE_GRAPH;
  p = mp_profile_new(c->group, needs);
  if (!p) {
    ljmprof_error("out of memory");
    o->fatal = 1;
  } else {
    if (c->ro.kinds_kept)
      mp_profile_filter_kinds(p, c->kind_keep);
    if (c->ro.at_snapshot)
      mp_profile_census_of(p, (uint32_t)c->ro.at_snapshot);
  }
  return p;
}

/*
** path into p: whole, or with --at up to the moment (*at: its memory
** event). The peak is found by a first pass that keeps only the totals,
** so a file given as standard input, which can be read once, cannot
** have it. Damage after the moment is said by that pass and makes the
** result MP_LOAD_TRUNCATED (exit status 3), though the moment is whole.
*/
static enum mp_load_result load_input(const struct cli *c,
				      struct mp_profile *p, const char *path,
				      uint64_t *events, uint64_t *at)
{
  enum mp_load_result first = MP_LOAD_OK, r;

  if (!c->at)
    return mp_load_file(p, path, events);
  *at = c->moment.event;
  if ((c->moment.at == MP_AT_PEAK || c->ro.at_seconds ||
       c->ro.at_snapshot > 1) && !strcmp(path, "-")) {
    ljmprof_error("%s: --at=%s reads the stream twice: not standard "
		  "input (give --at=#EVENT, or a file)", c->name, c->at);
    return MP_LOAD_ERROR;
  }
  /* snapshot:1 is the start's, at #0: no pass to find it. */
  if ((c->ro.at_seconds || c->ro.at_snapshot > 1) &&
      mp_load_moment_event(path, c->name, "--at", c->at, &c->moment,
			   "give --at=#EVENT or --at=peak", at) < 0)
    return MP_LOAD_ERROR;
  if (c->moment.at == MP_AT_PEAK) {
    struct mp_profile *q;
    uint64_t n;
    q = mp_profile_new(MP_GROUP_LINE, MP_PROFILE_TOTALS_ONLY |
				      MP_PROFILE_NO_OVERRIDES);
    if (!q) {
      ljmprof_error("out of memory");
      mp_profile_set_oom(p);
      return MP_LOAD_ERROR;
    }
    first = mp_load_file(q, path, &n);
    if (mp_profile_oom(q))
      mp_profile_set_oom(p);
    *at = mp_profile_total(q)->peak_event;
    mp_profile_delete(q);
    if (first == MP_LOAD_ERROR)
      return first;
  }
  r = mp_load_upto(p, path, c->name, "--at", *at, events);
  return r == MP_LOAD_OK ? first : r;
}

/*
** path into p, and what was live at its moments into m, in the one pass
** that reads it: moments chosen as it goes (mp_moments_hook), then its
** end and its exact peak. Standard input too.
*/
static enum mp_load_result load_moments(struct mp_profile *p,
					const char *path, uint32_t file,
					struct mp_moments *m, uint64_t *events)
{
  enum mp_load_result r;

  if (mp_moments_file_begin(m, p, file) < 0) {
    ljmprof_error("out of memory");
    mp_profile_set_oom(p);
    return MP_LOAD_ERROR;
  }
  mp_profile_set_moments(p, mp_moments_hook, m);
  r = mp_load_file(p, path, events);
  mp_profile_set_moments(p, NULL, NULL);
  if (r == MP_LOAD_ERROR) {
    mp_moments_file_drop(m);
  } else if (mp_moments_file_end(m, p) < 0) {
    ljmprof_error("out of memory");
    mp_profile_set_oom(p);
  }
  return r;
}

/* All files in one report; the input list names only those read. */
static void run_merged(struct cli *c, char **files, int nfiles,
		       struct outcome *o, const char **names, int *truncated,
		       uint64_t *events, uint64_t *at_events)
{
  struct mp_report_input in = {names, 0, truncated, events,
			       c->at ? at_events : NULL, NULL};
  struct mp_profile *p = new_profile(c, o);
  struct mp_moments m;
  int i, moments = (c->ro.format->flags & MP_FMT_MOMENTS) != 0;

  if (!p)
    return;
  mp_moments_init(&m);
  if (moments)
    in.moments = &m;
  for (i = 0; i < nfiles && !mp_profile_oom(p); i++) {
    size_t k = in.nfiles;
    enum mp_load_result r = moments ?
      load_moments(p, files[i], (uint32_t)k, &m, &events[k]) :
      load_input(c, p, files[i], &events[k], &at_events[k]);
    if (r == MP_LOAD_ERROR) {
      o->partial = 1;
      continue;
    }
    names[k] = files[i];
    truncated[k] = r == MP_LOAD_TRUNCATED;
    o->partial |= truncated[k];
    in.nfiles++;
  }
  /* Out of memory leaves the merged counters incomplete: no report. */
  if (mp_profile_oom(p))
    o->fatal = 1;
  else if (in.nfiles) {
    if (emit(c, p, &in) != LJMPROF_EXIT_OK)
      o->fatal = 1;
    o->reported = 1;
  }
  mp_moments_free(&m);
  mp_profile_delete(p);
}

/* One report per file that could be read. */
static void run_each(struct cli *c, char **files, int nfiles,
		     struct outcome *o, int *truncated, uint64_t *events,
		     uint64_t *at_events)
{
  int i;

  for (i = 0; i < nfiles; i++) {
    struct mp_report_input in = {(const char *const *)&files[i], 1,
				 &truncated[i], &events[i],
				 c->at ? &at_events[i] : NULL, NULL};
    struct mp_profile *p = new_profile(c, o);
    enum mp_load_result r;
    if (!p)
      return;
    r = load_input(c, p, files[i], &events[i], &at_events[i]);
    if (r == MP_LOAD_ERROR) {
      o->partial = 1;
      o->fatal |= mp_profile_oom(p);
    } else {
      truncated[i] = r == MP_LOAD_TRUNCATED;
      o->partial |= truncated[i];
      if (open_output(c) < 0) {
	o->fatal = 1;
	mp_profile_delete(p);
	return;
      }
      if (nfiles > 1 && (c->ro.format->flags & MP_FMT_FILE_HEADERS)) {
	struct mp_buf name = {0};
	printf("%s==> %s <==\n", o->reported ? "\n" : "",
	       mp_name_escaped(&name, files[i]));
	mp_buf_free(&name);
      }
      o->reported = 1;
      if (emit(c, p, &in) != LJMPROF_EXIT_OK)
	o->fatal = 1;
    }
    fflush(stdout);
    mp_profile_delete(p);
  }
}

int ljmprof_run_reports(struct cli *c, int argc, char **argv)
{
  static char outbuf[1 << 16];
  struct outcome o = {0, 0, 0};
  int status, nfiles;
  char **files;
  const char **names;
  int *truncated;
  uint64_t *events, *at_events;

  c->ro.format = &mp_formats[0];
  c->ro.callers = MP_CALLERS_DEFAULT;
  c->group = MP_GROUP_LINE;
  if ((status = parse_args(c, argc, argv)) >= 0)
    return status;
  files = argv + optind;
  nfiles = argc - optind;
  names = calloc((size_t)nfiles, sizeof(*names));
  truncated = calloc((size_t)nfiles, sizeof(*truncated));
  events = calloc((size_t)nfiles, sizeof(*events));
  at_events = calloc((size_t)nfiles, sizeof(*at_events));
  if (!names || !truncated || !events || !at_events) {
    ljmprof_error("out of memory");
    free(names);
    free(truncated);
    free(events);
    free(at_events);
    return LJMPROF_EXIT_ERROR;
  }
  setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));

  if (c->merge)
    run_merged(c, files, nfiles, &o, names, truncated, events, at_events);
  else
    run_each(c, files, nfiles, &o, truncated, events, at_events);
  status = exit_status(&o);
  if (fflush(stdout) != 0 || ferror(stdout)) {
    ljmprof_error("error writing the report: %s", strerror(errno));
    status = LJMPROF_EXIT_ERROR;
  }
  free(names);
  free(truncated);
  free(events);
  free(at_events);
  return status;
}
