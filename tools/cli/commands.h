/*
** The ljmprof subcommands and the exit statuses they share.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef LJMPROF_COMMANDS_H
#define LJMPROF_COMMANDS_H

#include <stdio.h>

/* Exit statuses, documented in --help and ljmprof(1). */
#define LJMPROF_EXIT_OK		0	/* Success. */
#define LJMPROF_EXIT_ERROR	1	/* Bad input, I/O error, out of memory. */
#define LJMPROF_EXIT_USAGE	2	/* Bad command line. */
#define LJMPROF_EXIT_TRUNCATED	3	/* Reported, but an input was truncated. */

/*
** A subcommand: argv[0] is its name. Returns an exit status.
** To add one, write its run function in cmd_<name>.c (in
** tools/local.mk) and add a line to the table in ljmprof.c.
*/
struct ljmprof_command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;	/* One line for `ljmprof --help`. */
};

int ljmprof_cmd_report(int argc, char **argv);	/* cmd_report.c */
int ljmprof_cmd_stat(int argc, char **argv);	/* cmd_stat.c */
int ljmprof_cmd_diff(int argc, char **argv);	/* cmd_diff.c */
int ljmprof_cmd_top(int argc, char **argv);	/* cmd_top.c */
int ljmprof_cmd_attach(int argc, char **argv);	/* cmd_attach.c */
/* cmd_record.c. Returns the program's exit status (128 + N when it was
** killed by signal N), or 2 for a usage error, 127 when it could not be
** run. */
int ljmprof_cmd_record(int argc, char **argv);

/* Print "ljmprof: <message>" on stderr. */
void ljmprof_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A usage error of command cmd: "ljmprof: CMD: WHAT 'ARG'" (arg may be
** NULL) and where the help is. Returns LJMPROF_EXIT_USAGE. */
int ljmprof_usage_error(const char *cmd, const char *what, const char *arg);
/* The usage error of getopt_long's answer opt (':' or '?', with opterr
** 0 and optstring starting with ':'). Returns LJMPROF_EXIT_USAGE. */
int ljmprof_getopt_error(const char *cmd, int opt, char *const *argv);

#endif
