/*
** `ljmprof report`: where memory was allocated, reallocated, freed or
** leaked, in any format of the table (mp_formats).
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <string.h>

#include "commands.h"
#include "reports.h"

static void report_help(FILE *out)
{
  char formats[256];
  fputs(
"Usage: ljmprof report [OPTION]... FILE...\n"
"Print where a LuaJIT program allocated, reallocated and freed memory,\n"
"from memprof streams (FILE '-' is standard input).\n"
"\n", out);
  fprintf(out, "  -f, --format=FMT       %s\n",
	  mp_format_list(formats, sizeof(formats), MP_FORMAT_REPORT, 0, 1));
  fputs(
"  -l, --leak-only        text: only the HEAP SUMMARY of memory still held\n"
"                         at the end, per allocating location\n"
"      --at=MOMENT        what was live at one moment instead of the end\n"
"                         (not html: its page has the moments):\n"
"                         peak (each file's highest live heap, as 'ljmprof\n"
"                         stat' names it), #EVENT (after memory event\n"
"                         EVENT), start (#0, after the start snapshot;\n"
"                         with --by=kind its census) or snapshot:N (the\n"
"                         Nth snapshot, 1 the start's, later ones from\n"
"                         misc.memprof.snapshot() or\n"
"                         LJMPROF_SNAPSHOT_SIGNAL; with --by=kind its\n"
"                         census); text: its HEAP\n"
"                         SUMMARY; folded, svg: held bytes by default\n"
"      --temporary        text: the TEMPORARY ALLOCATIONS, blocks freed by\n"
"                         the very next memory event, per allocating\n"
"                         location (after the other sections)\n"
"      --by=kind          text, json: per object kind (table, string, ...;\n"
"                         streams with stacks) its allocations, bytes and\n"
"                         what it holds, and its top locations (--top, or\n"
"                         5) and call paths (--callers); pprof: a sample\n"
"                         per kind and location, labelled kind=NAME (go\n"
"                         tool pprof -tagfocus)\n"
"      --retainers[=LOCATION]  text, json: why the objects that LOCATION (its\n"
"                         name, or a part of it; default: the --top, or\n"
"                         5, with the most bytes) made are still alive:\n"
"                         the shortest reference chains from the roots,\n"
"                         and what they retain, from the last heap graph\n"
"                         of the input (misc.memprof.snapshot{graph =\n"
"                         true}, LJMPROF_GRAPH)\n"
"      --kind=LIST        only the events of these object kinds, in every\n"
"                         format: names (table,string) or numbers; a free\n"
"                         is of its block's kind\n"
"  -H, --human-readable   sizes in B, KiB, MiB, GiB\n"
"  -g, --group=BY         line (default), function (chunk:linedefined) or\n"
"                         chunk: how finely Lua locations are told apart\n"
"  -n, --top=N            at most N lines per section\n"
"      --value=WHAT       folded, svg: alloc-bytes (default), alloc-count\n"
"                         or held-bytes\n"
"      --callers=N        text, streams with stacks: the N heaviest call\n"
"                         paths under each location (with --by=kind, each\n"
"                         kind; default 3; 0: none)\n"
"  -m, --merge            one report for all files (always for folded,\n"
"                         pprof and svg)\n"
"  -o, --output=FILE      write the report to FILE (created 0600) instead of\n"
"                         standard output; pprof, which is binary, and\n"
"                         html, a page for a browser, are never written\n"
"                         to a terminal\n"
"      --list-formats     the names of the formats, one a line\n"
"  -h, --help             this text\n"
"\n"
"Several files without --merge give one report each (text: after a\n"
"'==> FILE <==' line; JSON: one document each). A file that cannot be\n"
"read is skipped with one message; the others are still reported. A file\n"
"malformed after some events is reported up to there, with one message.\n"
"\n"
"Exit status: 0 success, 1 error (no input could be read, out of memory,\n"
"or the report could not be written), 2 usage error, 3 reported, but an\n"
"input was skipped, truncated or malformed (reported up to its last good\n"
"event).\n",
	out);
}

int ljmprof_cmd_report(int argc, char **argv)
{
  static const struct option opts[] = {
    {"format", required_argument, NULL, 'f'},
    {"leak-only", no_argument, NULL, 'l'},
    {"human-readable", no_argument, NULL, 'H'},
    {"group", required_argument, NULL, 'g'},
    {"top", required_argument, NULL, 'n'},
    {"value", required_argument, NULL, OPT_VALUE},
    {"callers", required_argument, NULL, OPT_CALLERS},
    {"at", required_argument, NULL, OPT_AT},
    {"temporary", no_argument, NULL, OPT_TEMPORARY},
    {"by", required_argument, NULL, OPT_BY},
    {"kind", required_argument, NULL, OPT_KIND},
    {"retainers", optional_argument, NULL, OPT_RETAINERS},
    {"merge", no_argument, NULL, 'm'},
    {"output", required_argument, NULL, 'o'},
    {"list-formats", no_argument, NULL, OPT_LIST_FORMATS},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}
  };
  struct cli c;

  memset(&c, 0, sizeof(c));
  c.name = "report";
  c.opts = opts;
  c.optstring = ":f:lHg:n:mo:h";
  c.help = report_help;
  return ljmprof_run_reports(&c, argc, argv);
}
