/*
** `ljmprof report` and `ljmprof stat`: read profiles, print reports.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "mp_load.h"
#include "mp_report.h"

enum { OPT_VALUE = 256 };

struct cli {
  int is_stat;
  struct mp_report_opts ro;
  enum mp_group group;
  int merge;
  int value_given;
};

static void report_help(FILE *out)
{
  fputs(
"Usage: ljmprof report [OPTION]... FILE...\n"
"Print where a LuaJIT program allocated, reallocated and freed memory,\n"
"from memprof streams (FILE '-' is standard input).\n"
"\n"
"  -f, --format=FMT       text (default), json or folded\n"
"  -l, --leak-only        text: only the HEAP SUMMARY of memory still held\n"
"                         at the end, per allocating location\n"
"  -H, --human-readable   sizes in B, KiB, MiB, GiB\n"
"  -g, --group=BY         line (default), function (chunk:linedefined) or\n"
"                         chunk: how finely Lua locations are told apart\n"
"  -n, --top=N            at most N lines per section\n"
"      --value=WHAT       folded: alloc-bytes (default), alloc-count or\n"
"                         held-bytes\n"
"  -m, --merge            one report for all files (always for folded)\n"
"  -h, --help             this text\n"
"\n"
"Several files without --merge give one report each (text: after a\n"
"'==> FILE <==' line; JSON: one document each).\n"
"\n"
"Exit status: 0 success, 1 error (unreadable or malformed input),\n"
"2 usage error, 3 an input was truncated (reported up to its last\n"
"complete event).\n", out);
}

static void stat_help(FILE *out)
{
  fputs(
"Usage: ljmprof stat [OPTION]... FILE...\n"
"Summarise memprof streams: events by kind, bytes allocated and freed,\n"
"peak live heap and the event where it was reached, live heap at the end,\n"
"symbols, and whether the stream is complete.\n"
"\n"
"  -f, --format=FMT       text (default) or json\n"
"  -H, --human-readable   sizes in B, KiB, MiB, GiB\n"
"  -m, --merge            one summary for all files\n"
"  -h, --help             this text\n"
"\n"
"Exit status: 0 success, 1 error, 2 usage error, 3 an input was truncated.\n",
	out);
}

static int usage_error(const struct cli *c, const char *what, const char *arg)
{
  if (arg)
    ljmprof_error("%s: %s '%s'", c->is_stat ? "stat" : "report", what, arg);
  else
    ljmprof_error("%s: %s", c->is_stat ? "stat" : "report", what);
  fprintf(stderr, "Run 'ljmprof %s --help' for usage.\n",
	  c->is_stat ? "stat" : "report");
  return LJMPROF_EXIT_USAGE;
}

/* A positive decimal count: digits only, no sign, no overflow. */
static int parse_count(const char *s, uint64_t *out)
{
  char *end;
  unsigned long long v;
  if (*s < '0' || *s > '9')
    return -1;
  errno = 0;
  v = strtoull(s, &end, 10);
  if (errno == ERANGE || *end || v == 0)
    return -1;
  *out = v;
  return 0;
}

/* Parse options; returns -1 to go on, or an exit status. */
static int parse_args(struct cli *c, int argc, char **argv)
{
  static const struct option report_opts[] = {
    {"format", required_argument, NULL, 'f'},
    {"leak-only", no_argument, NULL, 'l'},
    {"human-readable", no_argument, NULL, 'H'},
    {"group", required_argument, NULL, 'g'},
    {"top", required_argument, NULL, 'n'},
    {"value", required_argument, NULL, OPT_VALUE},
    {"merge", no_argument, NULL, 'm'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}
  };
  static const struct option stat_opts[] = {
    {"format", required_argument, NULL, 'f'},
    {"human-readable", no_argument, NULL, 'H'},
    {"merge", no_argument, NULL, 'm'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}
  };
  int opt;

  opterr = 0;
  optind = 1;
  while ((opt = getopt_long(argc, argv,
			    c->is_stat ? ":f:Hmh" : ":f:lHg:n:mh",
			    c->is_stat ? stat_opts : report_opts,
			    NULL)) != -1) {
    switch (opt) {
    case 'f':
      if (!strcmp(optarg, "text"))
	c->ro.format = MP_FORMAT_TEXT;
      else if (!strcmp(optarg, "json"))
	c->ro.format = MP_FORMAT_JSON;
      else if (!strcmp(optarg, "folded") && !c->is_stat)
	c->ro.format = MP_FORMAT_FOLDED;
      else
	return usage_error(c, "unknown format", optarg);
      break;
    case 'l':
      c->ro.leak_only = 1;
      break;
    case 'H':
      c->ro.human = 1;
      break;
    case 'g':
      if (!strcmp(optarg, "line"))
	c->group = MP_GROUP_LINE;
      else if (!strcmp(optarg, "function"))
	c->group = MP_GROUP_FUNCTION;
      else if (!strcmp(optarg, "chunk"))
	c->group = MP_GROUP_CHUNK;
      else
	return usage_error(c, "unknown grouping", optarg);
      break;
    case 'n':
      if (parse_count(optarg, &c->ro.top) < 0)
	return usage_error(c, "--top needs a positive number, not", optarg);
      break;
    case OPT_VALUE:
      c->value_given = 1;
      if (!strcmp(optarg, "alloc-bytes"))
	c->ro.value = MP_VALUE_ALLOC_BYTES;
      else if (!strcmp(optarg, "alloc-count"))
	c->ro.value = MP_VALUE_ALLOC_COUNT;
      else if (!strcmp(optarg, "held-bytes"))
	c->ro.value = MP_VALUE_HELD_BYTES;
      else
	return usage_error(c, "unknown value", optarg);
      break;
    case 'm':
      c->merge = 1;
      break;
    case 'h':
      if (c->is_stat)
	stat_help(stdout);
      else
	report_help(stdout);
      return LJMPROF_EXIT_OK;
    case ':':
      return usage_error(c, "missing argument for", argv[optind - 1]);
    default:
      if (optopt && optopt < 256) {
	char s[3] = {'-', (char)optopt, 0};
	return usage_error(c, "unknown option", s);
      }
      return usage_error(c, "unknown option", argv[optind - 1]);
    }
  }
  if (optind >= argc)
    return usage_error(c, "no input file", NULL);
  if (c->value_given && c->ro.format != MP_FORMAT_FOLDED)
    return usage_error(c, "--value only applies to --format=folded", NULL);
  if (c->ro.leak_only && c->ro.format != MP_FORMAT_TEXT)
    return usage_error(c, "--leak-only only applies to the text format "
		       "(JSON has held bytes; folded has --value=held-bytes)",
		       NULL);
  if (c->ro.format == MP_FORMAT_FOLDED) {
    c->merge = 1;
    if (c->group == MP_GROUP_LINE)
      c->group = MP_GROUP_FRAMES;
  }
  return -1;
}

/* What the report will need: stat no locations, the leak summary and
** folded stacks no override pairs, only JSON their counts and bytes. */
static void setup(const struct cli *c, struct mp_profile *p)
{
  p->no_locations = c->is_stat;
  p->no_overrides = c->is_stat || c->ro.leak_only ||
		    c->ro.format == MP_FORMAT_FOLDED;
  p->override_values = c->ro.format == MP_FORMAT_JSON;
}

/* Print one report over p for files[0..n). */
static int emit(const struct cli *c, struct mp_profile *p,
		const struct mp_report_input *in)
{
  int rc;
  mp_profile_done_reading(p);
  if (c->is_stat)
    rc = mp_report_stat(stdout, p, &c->ro, in);
  else if (c->ro.format == MP_FORMAT_JSON)
    rc = mp_report_json(stdout, p, &c->ro, in);
  else if (c->ro.format == MP_FORMAT_FOLDED)
    rc = mp_report_folded(stdout, p, &c->ro);
  else
    rc = mp_report_text(stdout, p, &c->ro);
  if (rc < 0) {
    ljmprof_error("out of memory while writing the report");
    return LJMPROF_EXIT_ERROR;
  }
  return LJMPROF_EXIT_OK;
}

static int worse(int a, int b)
{
  /* Error beats truncated beats success; usage never happens here. */
  if (a == LJMPROF_EXIT_ERROR || b == LJMPROF_EXIT_ERROR)
    return LJMPROF_EXIT_ERROR;
  if (a == LJMPROF_EXIT_TRUNCATED || b == LJMPROF_EXIT_TRUNCATED)
    return LJMPROF_EXIT_TRUNCATED;
  return LJMPROF_EXIT_OK;
}

static int run(struct cli *c, int argc, char **argv)
{
  static char outbuf[1 << 16];
  int status = -1, i, nfiles;
  char **files;
  int *truncated;
  uint64_t *events;
  struct mp_profile *p;

  c->ro.format = MP_FORMAT_TEXT;
  c->group = MP_GROUP_LINE;
  if ((status = parse_args(c, argc, argv)) >= 0)
    return status;
  status = LJMPROF_EXIT_OK;
  files = argv + optind;
  nfiles = argc - optind;
  truncated = calloc((size_t)nfiles, sizeof(*truncated));
  events = calloc((size_t)nfiles, sizeof(*events));
  p = malloc(sizeof(*p));
  if (!truncated || !events || !p) {
    ljmprof_error("out of memory");
    free(truncated);
    free(events);
    free(p);
    return LJMPROF_EXIT_ERROR;
  }
  setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));

  if (c->merge) {
    struct mp_report_input in = {(const char *const *)files, (size_t)nfiles,
				 truncated, events};
    mp_profile_init(p, c->group);
    setup(c, p);
    for (i = 0; i < nfiles; i++) {
      enum mp_load_result r = mp_load_file(p, files[i], &events[i]);
      if (r == MP_LOAD_ERROR)
	status = LJMPROF_EXIT_ERROR;
      else if (r == MP_LOAD_TRUNCATED)
	truncated[i] = 1, status = worse(status, LJMPROF_EXIT_TRUNCATED);
    }
    if (status != LJMPROF_EXIT_ERROR)
      status = worse(status, emit(c, p, &in));
    mp_profile_free(p);
  } else {
    int printed = 0;
    for (i = 0; i < nfiles; i++) {
      struct mp_report_input in = {(const char *const *)&files[i], 1,
				   &truncated[i], &events[i]};
      enum mp_load_result r;
      mp_profile_init(p, c->group);
      setup(c, p);
      r = mp_load_file(p, files[i], &events[i]);
      if (r == MP_LOAD_ERROR) {
	status = LJMPROF_EXIT_ERROR;
      } else {
	if (r == MP_LOAD_TRUNCATED)
	  truncated[i] = 1, status = worse(status, LJMPROF_EXIT_TRUNCATED);
	if (nfiles > 1 && c->ro.format == MP_FORMAT_TEXT)
	  printf("%s==> %s <==\n", printed ? "\n" : "", files[i]);
	printed = 1;
	status = worse(status, emit(c, p, &in));
      }
      fflush(stdout);
      mp_profile_free(p);
    }
  }
  if (fflush(stdout) != 0 || ferror(stdout)) {
    ljmprof_error("error writing the report: %s", strerror(errno));
    status = LJMPROF_EXIT_ERROR;
  }
  free(truncated);
  free(events);
  free(p);
  return status;
}

int ljmprof_cmd_report(int argc, char **argv)
{
  struct cli c;
  memset(&c, 0, sizeof(c));
  return run(&c, argc, argv);
}

int ljmprof_cmd_stat(int argc, char **argv)
{
  struct cli c;
  memset(&c, 0, sizeof(c));
  c.is_stat = 1;
  return run(&c, argc, argv);
}
