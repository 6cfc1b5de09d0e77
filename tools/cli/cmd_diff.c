/*
** `ljmprof diff`: what grew and what shrank between two profiles, or
** between two moments of one stream, per location (mp_diff.h).
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
#include "mp_diff.h"
#include "mp_load.h"

enum { OPT_DIFF_VALUE = 256, OPT_FROM, OPT_TO, OPT_SETTLE, OPT_CALLERS,
       OPT_BY };

static void diff_help(FILE *out)
{
  fputs(
"Usage: ljmprof diff [OPTION]... OLD NEW\n"
"       ljmprof diff [OPTION]... OLD... -- NEW...\n"
"       ljmprof diff [OPTION]... [--from=MOMENT] [--to=MOMENT] FILE\n"
"Compare two profiles location by location: how much more or less each\n"
"allocated (bytes and count) and held at the end, largest growth first,\n"
"then what shrank. Several files on a side are merged, as report --merge\n"
"does. With --from/--to, compare two moments of one stream: held bytes at\n"
"each, and what was allocated in between.\n"
"\n"
"Locations are matched by what they are, never by address: Lua code by\n"
"chunk and line, C code by symbol (or object+offset), a trace by where it\n"
"starts; so two runs of one program compare line by line. Where both\n"
"sides have call stacks (LJMPROF_STACKS), call paths are compared too,\n"
"frame by frame.\n"
"\n"
"  -f, --format=FMT       text (default), json, folded (two columns,\n"
"                         'stack OLD NEW', for flamegraph.pl's\n"
"                         differential flame graph), or html (one page:\n"
"                         NEW's flame graph coloured by growth and a\n"
"                         table by growth; never to a terminal)\n"
"  -g, --group=BY         line (default), function or chunk\n"
"  -n, --top=N            at most N lines per section (folded: the N\n"
"                         largest changes)\n"
"      --value=WHAT       alloc-bytes (default), alloc-count or held-bytes:\n"
"                         what rows are sorted by, or folded's columns\n"
"      --callers=N        text, both sides with stacks: under each location\n"
"                         its N most changed call paths (default 3; 0: none)\n"
"      --from=MOMENT      one FILE: the old side is the stream up to memory\n"
"                         event #EVENT, up to SECONDS since it began (by\n"
"                         its time marks), or up to its snapshot:N (1: the\n"
"                         start's); default #0, the start\n"
"      --to=MOMENT        one FILE: the new side is the stream up to\n"
"                         #EVENT, SECONDS or snapshot:N (default: the end)\n"
"      --settle=SECONDS   with --from/--to: move each moment (but #0) back,\n"
"                         within the SECONDS before it, to where the\n"
"                         stream's blocks add up to the least: just after\n"
"                         the collector swept, so that garbage it had not\n"
"                         freed yet does not count as held (needs time\n"
"                         marks; 1 to 2 is enough for most servers)\n"
"      --by=kind          text, json: per object kind (streams with stacks)\n"
"                         the change of its blocks and bytes held and of\n"
"                         its allocations, most grown first, instead of\n"
"                         the locations\n"
"  -H, --human-readable   sizes in B, KiB, MiB, GiB\n"
"  -h, --help             this text\n"
"\n"
"Two profiles with no Lua code in common (different programs) are\n"
"compared, with a warning.\n"
"\n"
"Exit status: 0 success, 1 error (a side could not be read, an event past\n"
"the end, a time past the last mark or in a stream without marks, out of\n"
"memory, or the output could not be written), 2 usage error, 3 compared,\n"
"but an input was skipped, truncated or malformed (read up to its last\n"
"good event).\n",
	out);
}

static int usage_error(const char *what, const char *arg)
{
  return ljmprof_usage_error("diff", what, arg);
}

struct diff_cli {
  const struct mp_format *format;	/* A row with a diff function. */
  struct mp_diff_opts o;
  const char *from, *to;	/* As given, or NULL. */
  uint64_t from_event, to_event;
  uint64_t moment_ns[2];	/* A moment given in seconds; MP_NO_TIME. */
  const char *settle;		/* --settle, as given, or NULL. */
  uint64_t settle_ns;
  int callers_given;
  int by_kind;			/* --by=kind. */
  struct mp_kind_counts kinds[2][MP_NKINDS];	/* Each side's, by kind. */
  char **files[2];
  int nfiles[2];
  struct mp_summary totals[2];	/* Each side's, for its header. */
};

/*
** --from (side 0) or --to: a moment of file, read as report --at reads
** one, but without the names start and peak, which diff does not take
** (#0 is the start). -1 to go on, or an exit status.
*/
static int parse_moment(struct diff_cli *c, int side, const char *file)
{
  const char *arg = side ? c->to : c->from;
  struct mp_load_moment m;

  if (mp_load_parse_moment(arg, 0, &m) < 0)
    return usage_error(side ?
		       "--to needs #EVENT, snapshot:N or SECONDS, not" :
		       "--from needs #EVENT, snapshot:N or SECONDS, not", arg);
  if (mp_load_moment_event(file, "diff", side ? "--to" : "--from", arg, &m,
			   side ? "give --to=#EVENT" : "give --from=#EVENT",
			   side ? &c->to_event : &c->from_event) < 0)
    return LJMPROF_EXIT_ERROR;
  c->o.side[side].at_seconds = m.at == MP_AT_SECONDS ? arg : NULL;
  c->moment_ns[side] = m.at == MP_AT_SECONDS ? m.ns : MP_NO_TIME;
  return -1;
}

/* --settle: each moment but the start moved back to the low point in the
** window before it (mp_load_settle). -1 to go on, or an exit status. */
static int settle_moments(struct diff_cli *c, const char *file)
{
  int side;
  for (side = 0; side < 2; side++) {
    uint64_t *ev = side ? &c->to_event : &c->from_event;
    uint64_t at = side && !c->to ? UINT64_MAX : *ev, low;
    if (!side && !c->from)
      continue;		/* #0, the start: nothing before it. */
    if (mp_load_settle(file, "diff", at, c->moment_ns[side], c->settle_ns,
		       &low) < 0)
      return LJMPROF_EXIT_ERROR;
    c->o.side[side].settled_from = side && !c->to ? -1 : (int64_t)*ev;
    c->o.side[side].settle = c->settle;
    *ev = low;
  }
  return -1;
}

/* The same file twice on one side would count it twice; stdin can be
** read once. Said; returns 1. */
static int repeated_input(struct diff_cli *c)
{
  struct stat a, b;
  int side, i, j, stdin_seen = 0;

  for (side = 0; side < 2; side++)
    for (i = 0; i < c->nfiles[side]; i++) {
      const char *f = c->files[side][i];
      if (!strcmp(f, "-")) {
	if (stdin_seen++) {
	  usage_error("standard input can be given once", NULL);
	  return 1;
	}
	continue;
      }
      if (stat(f, &a) < 0)
	continue;	/* Said when it is read. */
      for (j = 0; j < i; j++) {
	const char *g = c->files[side][j];
	if (strcmp(g, "-") && stat(g, &b) == 0 && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino) {
	  struct mp_buf name = {0};
	  ljmprof_error("diff: %s is given twice for the %s side",
			mp_name_escaped(&name, f), side ? "new" : "old");
	  mp_buf_free(&name);
	  fputs("Run 'ljmprof diff --help' for usage.\n", stderr);
	  return 1;
	}
      }
    }
  return 0;
}

/* Options and the files of each side; -1 to go on, or an exit status. */
static int parse_args(struct diff_cli *c, int argc, char **argv)
{
  static const struct option opts[] = {
    {"format", required_argument, NULL, 'f'},
    {"group", required_argument, NULL, 'g'},
    {"top", required_argument, NULL, 'n'},
    {"value", required_argument, NULL, OPT_DIFF_VALUE},
    {"from", required_argument, NULL, OPT_FROM},
    {"to", required_argument, NULL, OPT_TO},
    {"settle", required_argument, NULL, OPT_SETTLE},
    {"callers", required_argument, NULL, OPT_CALLERS},
    {"by", required_argument, NULL, OPT_BY},
    {"human-readable", no_argument, NULL, 'H'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}
  };
  int opt, split, nargs, i;

  /* "--" between the sides: everything after it is NEW's files. */
  for (split = 1; split < argc && strcmp(argv[split], "--"); split++)
    ;
  nargs = split;
  opterr = 0;
  optind = 1;
  while ((opt = getopt_long(nargs, argv, ":f:g:n:Hh", opts, NULL)) != -1) {
    switch (opt) {
    case 'f':
      if (!(c->format = mp_format_find(optarg, MP_FORMAT_DIFF)))
	return usage_error("unknown format", optarg);
      break;
    case 'g':
      if (mp_group_parse(optarg, &c->o.group) < 0)
	return usage_error("unknown grouping", optarg);
      break;
    case 'n':
      if (mp_load_parse_u64(optarg, &c->o.top, 0) < 0)
	return usage_error("--top needs a positive number, not", optarg);
      break;
    case OPT_DIFF_VALUE:
      if (mp_value_parse(optarg, &c->o.value) < 0)
	return usage_error("unknown value", optarg);
      break;
    case OPT_CALLERS:
      if (mp_load_parse_u64(optarg, &c->o.callers, 1) < 0)
	return usage_error("--callers needs a number, not", optarg);
      c->callers_given = 1;
      break;
    case OPT_BY:
      if (strcmp(optarg, "kind"))
	return usage_error("--by takes kind, not", optarg);
      c->by_kind = 1;
      break;
    case OPT_FROM:
      c->from = optarg;
      break;
    case OPT_TO:
      c->to = optarg;
      break;
    case OPT_SETTLE:
      if (mp_load_parse_seconds(optarg, &c->settle_ns) < 0 || !c->settle_ns)
	return usage_error("--settle needs a number of seconds above 0, not",
			   optarg);
      c->settle = optarg;
      break;
    case 'H':
      c->o.human = 1;
      break;
    case 'h':
      diff_help(stdout);
      return LJMPROF_EXIT_OK;
    default:
      return ljmprof_getopt_error("diff", opt, argv);
    }
  }
  if (c->callers_given && !(c->format->flags & MP_FMT_CALLERS))
    return usage_error("--callers only applies to the text format", NULL);
  if (c->by_kind && !(c->format->flags & MP_FMT_BY_KIND))
    return usage_error("--by=kind applies to the text and json formats",
		       NULL);
  /* getopt has moved the file names to the end of argv[0..nargs). */
  if (c->from || c->to) {
    if (split < argc || nargs - optind != 1)
      return usage_error("--from and --to compare two moments of one FILE",
			 NULL);
    if (!strcmp(argv[optind], "-"))
      return usage_error("--from and --to read FILE twice: not standard "
			 "input", NULL);
    c->files[0] = c->files[1] = argv + optind;
    c->nfiles[0] = c->nfiles[1] = 1;
    if (c->from && (i = parse_moment(c, 0, argv[optind])) >= 0)
      return i;
    if (c->to && (i = parse_moment(c, 1, argv[optind])) >= 0)
      return i;
    if (c->to && c->to_event < c->from_event)
      return usage_error("--to is before --from", NULL);
    if (c->settle && (i = settle_moments(c, argv[optind])) >= 0)
      return i;
    if (c->settle && c->to_event < c->from_event)
      return usage_error("--settle moved --to before --from: give moments "
			 "further apart, or a shorter --settle", NULL);
    return -1;
  }
  if (c->settle)
    return usage_error("--settle applies to --from and --to", NULL);
  if (split < argc) {
    c->files[0] = argv + optind;
    c->nfiles[0] = nargs - optind;
    c->files[1] = argv + split + 1;
    c->nfiles[1] = argc - split - 1;
    if (!c->nfiles[0] || !c->nfiles[1])
      return usage_error("give files on both sides: OLD... -- NEW...", NULL);
  } else {
    if (nargs - optind != 2)
      return usage_error(nargs == optind ? "no input file" :
			 "give OLD NEW, or OLD... -- NEW...", NULL);
    c->files[0] = argv + optind;
    c->files[1] = argv + optind + 1;
    c->nfiles[0] = c->nfiles[1] = 1;
  }
  if (repeated_input(c))
    return LJMPROF_EXIT_USAGE;
  return -1;
}

/* What reading the inputs came to (the exit status, as report's). */
struct outcome {
  int partial;		/* An input skipped, cut short or damaged. */
  int fatal;		/* A side has nothing, out of memory. */
};

/* Read one side into d; names[] gets the files read. */
static void read_side(struct diff_cli *c, struct mp_diff *d, int side,
		      enum mp_group group, const char **names,
		      struct outcome *out)
{
  struct mp_diff_side *s = &c->o.side[side];
  struct mp_profile *p = mp_profile_new(group, MP_PROFILE_NO_OVERRIDES |
				       (c->by_kind ? MP_PROFILE_KINDS : 0));
  int i;

  s->files = names;
  s->at_event = -1;
  if (!p) {
    ljmprof_error("out of memory");
    out->fatal = 1;
    return;
  }
  for (i = 0; i < c->nfiles[side] && !mp_profile_oom(p); i++) {
    const char *f = c->files[side][i];
    enum mp_load_result r;
    uint64_t n = 0;
    if (c->from || c->to) {
      /* Two moments of one file: the stream up to each. */
      uint64_t limit = side ? c->to_event : c->from_event;
      if (side && !c->to && !c->settle)
	r = mp_load_file(p, f, &n);
      else
	r = mp_load_upto(p, f, "diff", side ? "--to" : "--from", limit,
			 &n);
      s->at_event = (int64_t)n;
    } else {
      r = mp_load_file(p, f, &n);
    }
    if (r == MP_LOAD_ERROR) {
      out->partial = 1;
      continue;
    }
    names[s->nfiles++] = f;
    s->events += n;
    if (r == MP_LOAD_TRUNCATED)
      s->truncated = out->partial = 1;
  }
  if (mp_profile_oom(p)) {
    out->fatal = 1;
  } else if (!s->nfiles) {
    out->fatal = 1;	/* Nothing to compare with; each file said why. */
  } else {
    mp_profile_done_reading(p);
    c->totals[side] = *mp_profile_total(p);
    s->summary = &c->totals[side];
    if (mp_profile_ntimelines(p) == 1) {  /* One stream: its RSS then. */
      struct mp_timeline tl;
      mp_profile_timeline(p, 0, &tl);
      s->rss = tl.rss.last;
      s->mapped = tl.mapped.last;
    }
    if (c->by_kind) {
      unsigned k;
      for (k = 0; k < MP_NKINDS; k++)
	mp_profile_kind(p, k, &c->kinds[side][k]);
    } else if (mp_diff_add(d, side, p) < 0) {
      ljmprof_error("out of memory");
      out->fatal = 1;
    }
  }
  mp_profile_delete(p);
}

int ljmprof_cmd_diff(int argc, char **argv)
{
  static char outbuf[1 << 16];
  struct diff_cli c;
  struct outcome out = {0, 0};
  struct mp_diff d;
  enum mp_group group;
  const char **names[2] = {NULL, NULL};
  int status, side;

  memset(&c, 0, sizeof(c));
  c.moment_ns[0] = c.moment_ns[1] = MP_NO_TIME;
  c.format = &mp_formats[0];
  c.o.group = MP_GROUP_LINE;
  c.o.value = MP_VALUE_ALLOC_BYTES;
  c.o.callers = MP_CALLERS_DEFAULT;
  if ((status = parse_args(&c, argc, argv)) >= 0)
    return status;
  setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
  if ((c.format->flags & MP_FMT_PAGE) && isatty(STDOUT_FILENO)) {
    ljmprof_error("diff: the html format is a page for a browser: not "
		  "written to a terminal (redirect the output)");
    return LJMPROF_EXIT_USAGE;
  }
  /* Folded stacks (and the page's) are the location's frames, as
  ** report's. */
  group = (c.format->flags & MP_FMT_FRAMES) && c.o.group == MP_GROUP_LINE ?
	  MP_GROUP_FRAMES : c.o.group;
  mp_diff_init(&d, c.format->flags & MP_FMT_FRAMES ? MP_DIFF_KEY_FRAMES :
							MP_DIFF_KEY_NAME);
  for (side = 0; side < 2 && !out.fatal; side++) {
    names[side] = calloc((size_t)c.nfiles[side] + 1, sizeof(*names[side]));
    if (!names[side]) {
      ljmprof_error("out of memory");
      out.fatal = 1;
      break;
    }
    read_side(&c, &d, side, group, names[side], &out);
  }
  if (!out.fatal && c.by_kind) {
    if (mp_diff_kinds(stdout, c.kinds[0], c.kinds[1], &c.o,
		      c.format->diff == mp_diff_json) < 0) {
      ljmprof_error("out of memory while writing the diff");
      out.fatal = 1;
    }
  } else if (!out.fatal) {
    int has[2];
    /* Not wrong, but rarely meant: every line would be new or gone. */
    if (!mp_diff_lua_shared(&d, has) && has[0] && has[1])
      ljmprof_error("warning: OLD and NEW have no Lua code in common: "
		    "runs of different programs?");
    /* Paths need stacks on both sides: one without is no reason to stop. */
    if ((d.stacks[0] || d.stacks[1]) && !mp_diff_by_path(&d)) {
      side = d.nostacks[0] ? MP_DIFF_OLD : MP_DIFF_NEW;
      ljmprof_error("diff: %s%s has no call stacks (recorded without "
		    "LJMPROF_STACKS): compared by location only",
		    d.stacks[side] || d.nostacks[side] == 2 ? "a file of " : "",
		    side ? "NEW" : "OLD");
    }
    if (c.format->diff(stdout, &d, &c.o) < 0) {
      ljmprof_error("out of memory while writing the diff");
      out.fatal = 1;
    }
  }
  status = out.fatal ? LJMPROF_EXIT_ERROR :
	   out.partial ? LJMPROF_EXIT_TRUNCATED : LJMPROF_EXIT_OK;
  if (fflush(stdout) != 0 || ferror(stdout)) {
    ljmprof_error("error writing the diff: %s", strerror(errno));
    status = LJMPROF_EXIT_ERROR;
  }
  mp_diff_free(&d);
  free(names[0]);
  free(names[1]);
  return status;
}
