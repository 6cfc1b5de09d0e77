/*
** ljmprof top: watch the streams programs are writing, live (top.h).
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _POSIX_C_SOURCE 200809L

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "mp_load.h"
#include "mp_report.h"
#include "top.h"

enum { OPT_BATCH = 256, OPT_WINDOW, OPT_SORT };

static void top_help(FILE *out)
{
  fputs(
"Usage: ljmprof top [OPTION]... FILE|PATTERN...\n"
"Watch the streams running programs are writing: the live heap (and the\n"
"process's RSS where the stream has it), its recent history and the\n"
"allocation rate, then the locations by what they hold now, with their\n"
"growth over the last minute and their allocation rate. Each refresh\n"
"reads only what the files gained. Several files (a server's workers)\n"
"are added up by location; a quoted PATTERN ('nginx.*.bin') is looked at\n"
"again at each refresh, so that workers started later are counted.\n"
"Figures from sampled streams are estimates, marked ~.\n"
"\n"
"On a terminal the view fills the screen; keys: h, g, a sort by held,\n"
"growth, allocation rate; l, f, c group by line, function, chunk, s by\n"
"call path, k by object kind; p\n"
"pauses; ? shows the keys; q quits. Otherwise (or with --batch) it\n"
"prints plain text frames, one per interval.\n"
"\n"
"  -i, --interval=SECONDS  between refreshes (default 1)\n"
"  -w, --window=SECONDS    growth over this long (default 60)\n"
"  -g, --group=BY          line (default), function or chunk; path: call\n"
"                          paths (streams with stacks); kind: object kinds\n"
"  -s, --sort=KEY          held (default), growth or rate\n"
"  -b, --batch=N           N plain text frames, then exit (without a\n"
"                          terminal: frames until no file is live)\n"
"  -n, --top=N             text frames: at most N locations (default 20)\n"
"  -H, --human-readable    sizes in B, KiB, MiB, GiB (the screen always)\n"
"  -h, --help              this text\n"
"\n"
"Exit status: 0 success, 1 error (no file could be read, out of memory),\n"
"2 usage error, 3 a file was cut or damaged (the view kept what it read\n"
"before).\n",
	out);
}

static int usage_error(const char *what, const char *arg)
{
  return ljmprof_usage_error("top", what, arg);
}

/* Until the monotonic clock reads at (frames keep their pace whatever
** reading took). */
static void sleep_until(double at)
{
  double s = at - top_now();
  struct timespec ts;
  if (s <= 0)
    return;
  ts.tv_sec = (time_t)s;
  ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
  nanosleep(&ts, NULL);
}

static int print_frame(struct top *t, uint64_t n, uint64_t top)
{
  const struct top_frame *f = top_frame(t);
  const struct top_opts *o = top_options(t);
  struct mp_buf b = {0};
  size_t r;
  int i;
  printf("== frame %llu\n", (unsigned long long)n);
  for (i = 0;; i++) {
    b.len = 0;
    if (!top_header_line(&b, f, o, i, 0))
      break;
    printf("%s\n", b.data ? b.data : "");
  }
  b.len = 0;
  top_titles(&b, f, o);
  printf("%s\n", b.data ? b.data : "");
  for (r = 0; r < f->nrows && r < top; r++) {
    b.len = 0;
    top_row_line(&b, f, o, r, 0);
    printf("%s\n", b.data ? b.data : "");
  }
  putchar('\n');
  mp_buf_free(&b);
  return fflush(stdout) == 0 ? 0 : -1;
}

int top_run(struct top *t, int screen, uint64_t batch, uint64_t top,
	    int (*running)(void *ctx), void *ctx)
{
  const struct top_frame *f;
  double next;
  uint64_t n;
  if (screen)
    return top_screen(t) < 0 ? LJMPROF_EXIT_ERROR : LJMPROF_EXIT_OK;
  next = top_now();
  for (n = 1; !batch || n <= batch; n++) {
    if (n > 1) {
      next += top_options(t)->interval;
      if (next < top_now())
	next = top_now();	/* Behind: the frame says so. */
      sleep_until(next);
    }
    if (top_refresh(t) < 0) {
      ljmprof_error("top: out of memory");
      return LJMPROF_EXIT_ERROR;
    }
    if (print_frame(t, n, top) < 0) {
      ljmprof_error("top: cannot write the frames");
      return LJMPROF_EXIT_ERROR;
    }
    f = top_frame(t);
    if (!batch && !f->nlive && !f->nwaiting && !(running && running(ctx)))
      break;	/* Nothing more will come. */
  }
  f = top_frame(t);
  return f->nbad ? LJMPROF_EXIT_TRUNCATED : LJMPROF_EXIT_OK;
}

int ljmprof_cmd_top(int argc, char **argv)
{
  static const struct option opts[] = {
    {"interval", required_argument, NULL, 'i'},
    {"window", required_argument, NULL, 'w'},
    {"group", required_argument, NULL, 'g'},
    {"sort", required_argument, NULL, 's'},
    {"batch", required_argument, NULL, 'b'},
    {"top", required_argument, NULL, 'n'},
    {"human-readable", no_argument, NULL, 'H'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}
  };
  struct top_opts o;
  struct top *t;
  uint64_t batch = 0, top = 20, ns;
  int opt, rc = LJMPROF_EXIT_OK, screen;

  top_opts_init(&o);
  opterr = 0;
  optind = 1;
  while ((opt = getopt_long(argc, argv, ":i:w:g:s:b:n:Hh", opts, NULL)) != -1) {
    switch (opt) {
    case 'i':
      if (mp_load_parse_seconds(optarg, &ns) < 0 || ns < 10000000)
	return usage_error("--interval needs seconds, 0.01 or more, not",
			   optarg);
      o.interval = (double)ns / 1e9;
      break;
    case 'w':
      if (mp_load_parse_seconds(optarg, &ns) < 0 || !ns)
	return usage_error("--window needs seconds above 0, not", optarg);
      o.window = (double)ns / 1e9;
      break;
    case 'g':
      o.by = TOP_BY_LOCATION;
      if (!strcmp(optarg, "path"))
	o.by = TOP_BY_PATH;
      else if (!strcmp(optarg, "kind"))
	o.by = TOP_BY_KIND;
      else if (mp_group_parse(optarg, &o.group) < 0 ||
	       o.group == MP_GROUP_FRAMES)
	return usage_error("--group takes line, function, chunk, path or "
			   "kind, not", optarg);
      break;
    case 's':
      if (!strcmp(optarg, "held"))
	o.sort = TOP_SORT_HELD;
      else if (!strcmp(optarg, "growth"))
	o.sort = TOP_SORT_GROWTH;
      else if (!strcmp(optarg, "rate"))
	o.sort = TOP_SORT_RATE;
      else
	return usage_error("--sort takes held, growth or rate, not", optarg);
      break;
    case 'b':
      if (mp_load_parse_u64(optarg, &batch, 0) < 0)
	return usage_error("--batch needs a number of frames, not", optarg);
      break;
    case 'n':
      if (mp_load_parse_u64(optarg, &top, 0) < 0)
	return usage_error("--top needs a positive number, not", optarg);
      break;
    case 'H':
      o.human = 1;
      break;
    case 'h':
      top_help(stdout);
      return LJMPROF_EXIT_OK;
    default:
      return ljmprof_getopt_error("top", opt, argv);
    }
  }
  if (optind == argc)
    return usage_error("no FILE or PATTERN to watch", NULL);
  screen = !batch && isatty(1) && isatty(0);
  if (screen)
    o.human = 1;
  if (!(t = top_new(&o, argv + optind, argc - optind))) {
    ljmprof_error("out of memory");
    return LJMPROF_EXIT_ERROR;
  }
  rc = top_run(t, screen, batch, top, NULL, NULL);
  if (rc == LJMPROF_EXIT_OK) {
    const struct top_frame *f = top_frame(t);
    if (f->nfiles && f->nwaiting == f->nfiles) {
      ljmprof_error("top: no file to read: %s%s", argv[optind],
		    argc - optind > 1 ? " ..." : "");
      rc = LJMPROF_EXIT_ERROR;
    } else if (!f->nfiles) {
      ljmprof_error("top: no file matches %s", argv[optind]);
      rc = LJMPROF_EXIT_ERROR;
    }
  }
  top_free(t);
  return rc;
}
