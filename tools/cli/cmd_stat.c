/*
** `ljmprof stat`: the totals of profiles, in the formats of the table
** that have a stat function.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <string.h>

#include "commands.h"
#include "reports.h"

static void stat_help(FILE *out)
{
  char formats[256];
  fputs(
"Usage: ljmprof stat [OPTION]... FILE...\n"
"Summarise memprof streams: events by kind, bytes allocated and freed,\n"
"peak live heap and the event where it was reached, temporary allocations\n"
"(blocks freed by the next event), live heap at the end, symbols, and\n"
"whether the stream is complete.\n"
"\n", out);
  fprintf(out, "  -f, --format=FMT       %s\n",
	  mp_format_list(formats, sizeof(formats), MP_FORMAT_STAT, 0, 1));
  fputs(
"  -H, --human-readable   sizes in B, KiB, MiB, GiB\n"
"  -m, --merge            one summary for all files\n"
"      --timeline         text: the heap over time, at most 20 moments\n"
"                         spread over each file and its peak (JSON always\n"
"                         has its timeline, a few hundred points a file)\n"
"  -h, --help             this text\n"
"\n"
"Exit status: 0 success, 1 error (no input could be read), 2 usage error,\n"
"3 summarised, but an input was skipped, truncated or malformed (summarised\n"
"up to its last good event).\n",
	out);
}

int ljmprof_cmd_stat(int argc, char **argv)
{
  static const struct option opts[] = {
    {"format", required_argument, NULL, 'f'},
    {"human-readable", no_argument, NULL, 'H'},
    {"merge", no_argument, NULL, 'm'},
    {"timeline", no_argument, NULL, OPT_TIMELINE},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}
  };
  struct cli c;

  memset(&c, 0, sizeof(c));
  c.name = "stat";
  c.is_stat = 1;
  c.opts = opts;
  c.optstring = ":f:Hmh";
  c.help = stat_help;
  return ljmprof_run_reports(&c, argc, argv);
}
