/*
** ljmprof record, in files along its jobs: cmd_record.c is the command
** (help, options, the flow, the exit status); rec_program.c finds what
** runs (the shim, the program, the frontend in place of a static
** luajit); rec_last_run.c moves the last run's stream aside;
** rec_manifest.c makes the manifest and lists what it names; rec_run.c
** runs the program and waits for it, passing signals on.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef LJMPROF_REC_H
#define LJMPROF_REC_H

#include <limits.h>
#include <stdio.h>
#include <time.h>

#define EXIT_USAGE	2
#define EXIT_NORUN	127

/* What one run of record is working with. */
struct record {
  const char *shim_opt;		/* --shim, or NULL. */
  const char *flavour;		/* --flavour, or NULL: the system's. */
  int verbose;			/* --verbose: say which shim. */
  char why[PATH_MAX + 64];	/* Why that flavour. */
  int sig;			/* The toggle signal, forwarded; 0 if none. */
  char shim[PATH_MAX];		/* The libljmprof.so to preload. */
  char **args;			/* What to exec. */
  int nargs;			/* Entries of args before its NULL. */
  char prog[PATH_MAX];		/* The program found, args[1] of a script. */
  char frontend[PATH_MAX];	/* The dynamic luajit, in place of a static. */
  char manifest_dir[PATH_MAX - 64];	/* Room for the file's name. */
  char manifest_path[PATH_MAX];
  const char *tmpl;		/* LJMPROF_OUT as the child gets it. */
  time_t since;			/* When the run began (streams are newer). */
  int live;			/* --live: watch the streams (ljmprof top). */
  char live_log[PATH_MAX];	/* --live: where the program's output goes. */
};

/*
** Each step of the flow returns -1 to go on, or record's exit status
** (its message printed).
*/

/* cmd_record.c: messages. */
void rec_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* path, control characters as \ooo: a name is never a terminal command. */
void rec_put_path(FILE *out, const char *path);

/* rec_program.c: the shim into r->shim, and what to exec into r->args. */
int rec_find_program(struct record *r);

/* rec_last_run.c: a stream of the last run at the first stream's name
** moved to NAME.old. */
int rec_move_last_run(const struct record *r);

/* rec_manifest.c. */
int rec_make_manifest(struct record *r);
void rec_remove_manifest(const struct record *r);
/* Lists the streams of the manifest on stderr: the number listed;
** *nfailed gets the number of streams that could not be written. */
int rec_list_files(const struct record *r, int *nfailed);
/* record --live: add(ctx, path) for each stream the manifest names so
** far (again at each call; add skips those it has). 0, or -1 when add
** failed. */
int rec_live_streams(const struct record *r,
		     int (*add)(void *ctx, const char *path), void *ctx);

/* rec_run.c: runs r->args with the shim preloaded, its wait status into
** *status. -1; EXIT_NORUN when it could not be started (said); 0 when it
** could not be waited for (the errno into *wait_err, to say after the
** listing). */
int rec_run_and_wait(const struct record *r, int *status, int *wait_err);

#endif
