/*
** ljmprof: the command-line tool. main() only dispatches to a
** subcommand through the table below.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

static const struct ljmprof_command commands[] = {
  {"report", ljmprof_cmd_report, "where memory was allocated, reallocated, "
				 "freed or leaked"},
  {"diff", ljmprof_cmd_diff, "what grew and shrank between two profiles, "
			     "or two moments of one"},
  {"stat", ljmprof_cmd_stat, "event counts, peak and final live heap of "
			     "a profile"},
  {"record", ljmprof_cmd_record, "run a program with every Lua VM it "
				 "creates profiled"},
  {"top", ljmprof_cmd_top, "watch the streams running programs are "
			   "writing, live"},
  {"attach", ljmprof_cmd_attach, "profile the Lua VMs of a running "
				 "process started without the shim"},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

void ljmprof_error(const char *fmt, ...)
{
  va_list ap;
  fflush(stdout);
  fputs("ljmprof: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

int ljmprof_usage_error(const char *cmd, const char *what, const char *arg)
{
  if (arg)
    ljmprof_error("%s: %s '%s'", cmd, what, arg);
  else
    ljmprof_error("%s: %s", cmd, what);
  fprintf(stderr, "Run 'ljmprof %s --help' for usage.\n", cmd);
  return LJMPROF_EXIT_USAGE;
}

int ljmprof_getopt_error(const char *cmd, int opt, char *const *argv)
{
  if (opt == ':')
    return ljmprof_usage_error(cmd, "missing argument for", argv[optind - 1]);
  if (optopt && optopt < 256) {
    char s[3] = {'-', (char)optopt, 0};
    return ljmprof_usage_error(cmd, "unknown option", s);
  }
  return ljmprof_usage_error(cmd, "unknown option", argv[optind - 1]);
}

static void usage(FILE *out)
{
  size_t i;
  fputs("Usage: ljmprof COMMAND [OPTION]... [ARG]...\n"
	"       ljmprof --help | --version\n"
	"\n"
	"A memory profiler for programs that embed LuaJIT 2.1.\n"
	"\n"
	"Commands:\n", out);
  for (i = 0; i < NCOMMANDS; i++)
    fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
  fputs("\n"
	"Run 'ljmprof COMMAND --help' for the options of a command.\n"
	"\n"
	"Exit status: 0 success, 1 error (no input could be read, out of\n"
	"memory, or the report could not be written), 2 usage error, 3 reported\n"
	"but an input was skipped as unreadable or malformed, or truncated\n"
	"(reported up to its last complete event).\n", out);
}

int main(int argc, char **argv)
{
  size_t i;

  if (argc < 2) {
    usage(stderr);
    return LJMPROF_EXIT_USAGE;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
      !strcmp(argv[1], "help")) {
    usage(stdout);
    return LJMPROF_EXIT_OK;
  }
  if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
    printf("ljmprof %s\n", PACKAGE_VERSION);
    return LJMPROF_EXIT_OK;
  }
  for (i = 0; i < NCOMMANDS; i++)
    if (!strcmp(argv[1], commands[i].name))
      return commands[i].run(argc - 1, argv + 1);
  if (argv[1][0] == '-')
    ljmprof_error("unknown option '%s'", argv[1]);
  else
    ljmprof_error("unknown command '%s'", argv[1]);
  fputs("Run 'ljmprof --help' for the list of commands.\n", stderr);
  return LJMPROF_EXIT_USAGE;
}
