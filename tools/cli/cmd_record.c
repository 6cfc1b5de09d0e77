/*
** ljmprof record [-o FILE] [OPTION]... -- PROGRAM [ARG]...
**
** Sets LD_PRELOAD and the LJMPROF_* variables, runs the program, waits
** for it, lists the streams written (the shim appends each file it opens
** to a manifest that we give it), and returns the program's exit status.
** Options are checked with the parser and table that the shim uses (the
** shared core, common/), so that they accept exactly what the environment
** variables accept. This file is the command: its help, its options and
** the flow; rec.h says where each step is.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>

#include "ljm_config.h"
#include "commands.h"
#include "rec.h"

/* -- Messages ---------------------------------------------------------------- */

void rec_error(const char *fmt, ...)
{
  va_list ap;
  fflush(stdout);
  fputs("ljmprof: record: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

void rec_put_path(FILE *out, const char *path)
{
  const unsigned char *p;
  for (p = (const unsigned char *)path; *p; p++)
    if (*p < 0x20 || *p == 0x7f)
      fprintf(out, "\\%03o", *p);
    else
      fputc(*p, out);
}

/* -- Help ---------------------------------------------------------------- */

/* Print text wrapped at 72 columns, indented. */
static void wrap(FILE *out, const char *s, int indent)
{
  int col = indent;
  fprintf(out, "%*s", indent, "");
  while (*s) {
    const char *w = s;
    int len;
    while (*w && *w != ' ')
      w++;
    len = (int)(w - s);
    if (col > indent && col + 1 + len > 76) {
      fprintf(out, "\n%*s", indent, "");
      col = indent;
    } else if (col > indent) {
      fputc(' ', out);
      col++;
    }
    fwrite(s, 1, (size_t)len, out);
    col += len;
    s = *w ? w + 1 : w;
  }
  fputc('\n', out);
}

static void usage(FILE *out, int full)
{
  size_t i;
  fputs("Usage: ljmprof record [-o FILE] [OPTION]... -- PROGRAM [ARG]...\n"
	"\n"
	"Run PROGRAM with libljmprof.so preloaded: every Lua VM it creates\n"
	"is profiled into its own file. Prints the files written on stderr\n"
	"and exits with the program's exit status (128+N if killed by\n"
	"signal N; 127 if it could not be run; 2 for a usage error).\n"
	"\n"
	"Options (each sets the variable in brackets; without it, the\n"
	"variable keeps the value in the environment):\n"
	"  -o, --output=FILE      file name template [LJMPROF_OUT]\n"
	"                         (default ljmprof.bin; the streams of yours\n"
	"                         of its names there from an earlier run\n"
	"                         become NAME.old)\n"
	"  -b, --bufsize=SIZE     buffer per VM [LJMPROF_BUFSIZE]\n"
	"  -s, --signal=SIG       toggle profiling on SIG [LJMPROF_SIGNAL]\n"
	"      --no-start         wait for the first signal [LJMPROF_START=no]\n"
	"  -d, --delay=TIME       start after TIME [LJMPROF_DELAY]\n"
	"  -m, --max-size=SIZE    end streams at SIZE [LJMPROF_MAXSIZE]\n"
	"      --stacks[=DEPTH]   call stacks of up to DEPTH frames (default\n"
	"                         32) [LJMPROF_STACKS]\n"
	"      --sample[=SIZE]    record one allocation every SIZE bytes on\n"
	"                         average, with its stack (default 4M);\n"
	"                         reports show estimates [LJMPROF_SAMPLE]\n"
	"      --seed=N           seed of the sampling [LJMPROF_SEED]\n"
	"  -v, --verbose          settings, files opened and closed\n"
	"                         [LJMPROF_VERBOSE]\n"
	"      --flavour=FLAVOUR  the shim of LuaJIT flavour luajit (Debian's)\n"
	"                         or luajit2 (OpenResty's, nginx's Lua module);\n"
	"                         default: that of the system's LuaJIT library\n"
	"      --shim=PATH        the libljmprof.so to preload\n"
	"      --live[=LOG]       watch the streams while the program runs\n"
	"                         (ljmprof top: its screen until q, or text\n"
	"                         frames until the program and its streams\n"
	"                         end); the program's output goes to LOG\n"
	"                         (FILE's name with .log for .bin, else\n"
	"                         ljmprof.log)\n"
	"  -h, --help             this help, with the environment variables\n"
	"\n"
	"A program that links LuaJIT statically (Debian's /usr/bin/luajit)\n"
	"cannot be profiled by a preloaded library; for luajit, record runs\n"
	"the bundled dynamic frontend instead, and says so.\n", out);
  if (!full)
    return;
  fputs("\nEnvironment variables read by libljmprof.so:\n", out);
  for (i = 0; i < ljm_nvars; i++) {
    const struct ljm_var *v = &ljm_vars[i];
    fprintf(out, "\n  %s (default: %s; accepted: %s)\n", v->name,
	    v->def[0] ? v->def : "unset", v->range);
    wrap(out, v->meaning, 4);
  }
}

/* -- Options --------------------------------------------------------------- */

static const struct ljm_var *var(const char *name)
{
  size_t i;
  for (i = 0; i < ljm_nvars; i++)
    if (strcmp(ljm_vars[i].name, name) == 0)
      return &ljm_vars[i];
  return NULL;
}

/* Check value with the shim's parser, then put it in the environment. */
static int set_var(const char *opt, const char *name, const char *value)
{
  struct ljm_config c;
  const struct ljm_var *v = var(name);
  const char *why;
  ljm_config_defaults(&c);
  why = v ? ljm_parse_value(v, value, &c) : "unknown variable";
  if (why) {
    rec_error("%s=%s: %s%s%s", opt, value, why,
	      strcmp(why, "out of range") == 0 ? ", accepted: " : "",
	      strcmp(why, "out of range") == 0 ? v->range : "");
    return -1;
  }
  setenv(name, value, 1);
  return 0;
}

/*
** LJMPROF_START off and no LJMPROF_SIGNAL: the shim would never start
** profiling. Read as the shim reads them (any of its spellings of no; an
** empty variable is unset); a value it rejects is its to report.
*/
static int never_starts(void)
{
  const char *start = getenv("LJMPROF_START");
  const char *sig = getenv("LJMPROF_SIGNAL");
  int starts = 1;
  if (start == NULL || *start == '\0' || (sig != NULL && *sig != '\0'))
    return 0;
  return ljm_parse_bool(start, &starts) == 0 && !starts;
}

/* -- The command ------------------------------------------------------------- */

/* The options into the environment, checked: -1 when the program is to
** run, else the exit status. */
static int parse_options(struct record *r, int argc, char **argv)
{
  static const struct option longopts[] = {
    { "output", required_argument, NULL, 'o' },
    { "bufsize", required_argument, NULL, 'b' },
    { "signal", required_argument, NULL, 's' },
    { "no-start", no_argument, NULL, 'N' },
    { "delay", required_argument, NULL, 'd' },
    { "max-size", required_argument, NULL, 'm' },
    { "stacks", optional_argument, NULL, 'K' },
    { "sample", optional_argument, NULL, 'P' },
    { "seed", required_argument, NULL, 'E' },
    { "verbose", no_argument, NULL, 'v' },
    { "shim", required_argument, NULL, 'S' },
    { "flavour", required_argument, NULL, 'F' },
    { "live", optional_argument, NULL, 'L' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 }
  };
  const char *out = NULL;
  int opt, no_start = 0;

  optind = 1;
  while ((opt = getopt_long(argc, argv, "+o:b:s:d:m:vh", longopts, NULL)) != -1) {
    switch (opt) {
    case 'o':
      out = optarg;
      if (set_var("--output", "LJMPROF_OUT", optarg)) return EXIT_USAGE;
      break;
    case 'b':
      if (set_var("--bufsize", "LJMPROF_BUFSIZE", optarg)) return EXIT_USAGE;
      break;
    case 's':
      if (set_var("--signal", "LJMPROF_SIGNAL", optarg)) return EXIT_USAGE;
      ljm_parse_signal(optarg, &r->sig);
      break;
    case 'N':
      no_start = 1;
      setenv("LJMPROF_START", "no", 1);
      break;
    case 'd':
      if (set_var("--delay", "LJMPROF_DELAY", optarg)) return EXIT_USAGE;
      break;
    case 'm':
      if (set_var("--max-size", "LJMPROF_MAXSIZE", optarg)) return EXIT_USAGE;
      break;
    case 'K':
      if (set_var("--stacks", "LJMPROF_STACKS", optarg ? optarg : "yes"))
	return EXIT_USAGE;
      break;
    case 'P':
      if (set_var("--sample", "LJMPROF_SAMPLE", optarg ? optarg : "yes"))
	return EXIT_USAGE;
      break;
    case 'E':
      if (set_var("--seed", "LJMPROF_SEED", optarg)) return EXIT_USAGE;
      break;
    case 'v':
      setenv("LJMPROF_VERBOSE", "yes", 1);
      r->verbose = 1;
      break;
    case 'F':
      if (strcmp(optarg, "luajit") != 0 && strcmp(optarg, "luajit2") != 0) {
	rec_error("--flavour=%s: must be luajit or luajit2", optarg);
	return EXIT_USAGE;
      }
      r->flavour = optarg;
      break;
    case 'S':
      r->shim_opt = optarg;
      break;
    case 'L':
      r->live = 1;
      if (optarg && *optarg)
	snprintf(r->live_log, sizeof(r->live_log), "%s", optarg);
      break;
    case 'h':
      usage(stdout, 1);
      return 0;
    default:
      usage(stderr, 0);
      return EXIT_USAGE;
    }
  }
  if (optind >= argc) {
    rec_error("no program to run");
    usage(stderr, 0);
    return EXIT_USAGE;
  }
  if (out == NULL) {
    const char *e = getenv("LJMPROF_OUT");
    if (e == NULL || *e == '\0')
      setenv("LJMPROF_OUT", "ljmprof.bin", 1);
    else if (set_var("LJMPROF_OUT", "LJMPROF_OUT", e))
      return EXIT_USAGE;
  }
  if (never_starts()) {
    if (no_start)
      rec_error("--no-start needs --signal");
    else
      rec_error("LJMPROF_START=%s needs --signal (or LJMPROF_SIGNAL)",
		getenv("LJMPROF_START"));
    return EXIT_USAGE;
  }
  if (r->sig == 0 && getenv("LJMPROF_SIGNAL"))
    ljm_parse_signal(getenv("LJMPROF_SIGNAL"), &r->sig);
  r->tmpl = getenv("LJMPROF_OUT");
  if (r->live && !r->live_log[0]) {
    /* x.bin's program writes to x.log; with tags in the name, to
    ** ljmprof.log. */
    size_t n = strlen(r->tmpl);
    if (strchr(r->tmpl, '%') || n < 4 || strcmp(r->tmpl + n - 4, ".bin") ||
	n >= sizeof(r->live_log))
      snprintf(r->live_log, sizeof(r->live_log), "ljmprof.log");
    else
      snprintf(r->live_log, sizeof(r->live_log), "%.*s.log",
	       (int)(n - 4), r->tmpl);
  }
  if (r->live)
    fprintf(stderr, "ljmprof: record: --live: the program's output goes "
	    "to %s\n", r->live_log);
  r->args = argv + optind;
  r->nargs = argc - optind;
  return -1;
}

/* The program's wait status as record's own exit status, said. */
static int exit_status(const struct record *r, int status, int nfiles,
		       int nfailed)
{
  if (nfiles == 0 && nfailed == 0 &&
      !(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_NORUN))
    fprintf(stderr, "ljmprof: no stream was written: %s created no Lua VM "
	    "through libljmprof.so\n", r->args[0]);
  if (WIFSIGNALED(status)) {
    fprintf(stderr, "ljmprof: %s was killed by signal %d\n", r->args[0],
	    WTERMSIG(status));
    return 128 + WTERMSIG(status);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int ljmprof_cmd_record(int argc, char **argv)
{
  static struct record r;
  int st, status = 0, nfiles, nfailed, wait_err = 0;

  memset(&r, 0, sizeof(r));
  if ((st = parse_options(&r, argc, argv)) >= 0 ||
      (st = rec_find_program(&r)) >= 0 ||
      (st = rec_move_last_run(&r)) >= 0 ||
      (st = rec_make_manifest(&r)) >= 0)
    return st;
  /* Streams of this run are newer (by a file system's rounding). */
  r.since = time(NULL) - 2;
  st = rec_run_and_wait(&r, &status, &wait_err);
  if (st == EXIT_NORUN) {
    rec_remove_manifest(&r);
    return st;
  }
  nfiles = rec_list_files(&r, &nfailed);
  rec_remove_manifest(&r);
  if (st == 0) {
    rec_error("waitpid: %s", strerror(wait_err));
    return EXIT_NORUN;
  }
  return exit_status(&r, status, nfiles, nfailed);
}
