/*
** ljmprof record: runs the program with the shim preloaded and waits for
** it. As system() does, the terminal's ^C and ^\ are left to the
** program; the other signals sent to record are passed on to it.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rec.h"
#include "top.h"

/* The program, for forwarded signals; 0 once reaped, when its pid may be
** another process's. */
static volatile sig_atomic_t child;

static void forward(int sig)
{
  int saved_errno = errno;
  if (child > 0)
    kill((pid_t)child, sig);
  errno = saved_errno;
}

/* LD_PRELOAD for the child: ours first, the user's after. NULL when out
** of memory. */
static char *make_preload(const char *shim)
{
  const char *old = getenv("LD_PRELOAD");
  size_t len = strlen(shim) + (old ? strlen(old) : 0) + 2;
  char *preload = malloc(len);
  if (preload == NULL)
    return NULL;
  snprintf(preload, len, "%s%s%s", shim, old && *old ? ":" : "",
	   old ? old : "");
  return preload;
}

/* record --live: the streams the manifest names, and whether the
** program still runs (its wait status kept once it ended). */
static int live_add(void *ctx, const char *path)
{
  return top_add_file(ctx, path);
}

static int live_find(void *ctx, struct top *t)
{
  return rec_live_streams(ctx, live_add, t);
}

struct live_child {
  pid_t pid;
  int status;
  int done;
};

static int live_running(void *ctx)
{
  struct live_child *c = ctx;
  if (!c->done && waitpid(c->pid, &c->status, WNOHANG) == c->pid)
    c->done = 1;
  return !c->done;
}

/* The view (ljmprof top) of the program's streams while it runs; its
** screen until q, or text frames until it ended and its streams too. */
static void live_view(const struct record *r, struct live_child *c)
{
  struct top_opts o;
  struct top *t;
  int screen = isatty(1) && isatty(0);
  top_opts_init(&o);
  o.human = screen;
  if (!(t = top_new(&o, NULL, 0))) {
    rec_error("--live: out of memory; waiting for %s", r->args[0]);
    return;
  }
  top_set_finder(t, live_find, (void *)r);
  top_run(t, screen, 0, 20, live_running, c);
  top_free(t);
}

int rec_run_and_wait(const struct record *r, int *status, int *wait_err)
{
  struct sigaction sa, old_int, old_quit, old_term, old_hup, old_sig;
  sigset_t fwd, old_mask;
  char *preload = make_preload(r->shim);
  pid_t pid, w;

  if (preload == NULL) {
    rec_error("out of memory");
    return EXIT_NORUN;
  }
  /* Like system(): the terminal's ^C and ^\ are for the program; other
  ** signals sent to us are passed on. */
  memset(&sa, 0, sizeof(sa));
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = SIG_IGN;
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGQUIT, &sa, &old_quit);
  sa.sa_handler = forward;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &sa, &old_term);
  sigaction(SIGHUP, &sa, &old_hup);
  if (r->sig)
    sigaction(r->sig, &sa, &old_sig);

  /* A signal to pass on that comes before the child's pid is known waits
  ** until it is. */
  sigemptyset(&fwd);
  sigaddset(&fwd, SIGTERM);
  sigaddset(&fwd, SIGHUP);
  if (r->sig)
    sigaddset(&fwd, r->sig);
  sigprocmask(SIG_BLOCK, &fwd, &old_mask);

  fflush(NULL);
  pid = fork();
  if (pid < 0) {
    rec_error("fork: %s", strerror(errno));
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    free(preload);
    return EXIT_NORUN;
  }
  if (pid == 0) {
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    if (r->sig)
      sigaction(r->sig, &old_sig, NULL);
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    setenv("LD_PRELOAD", preload, 1);
    if (r->live) {	/* The terminal is the view's. */
      int fd = open(r->live_log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		    0644);
      if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0) {
	fprintf(stderr, "ljmprof: record: --live: cannot write %s: %s\n",
		r->live_log, strerror(errno));
	_exit(EXIT_NORUN);
      }
    }
    execvp(r->args[0], r->args);
    fprintf(stderr, "ljmprof: record: cannot run %s: %s\n", r->args[0],
	    strerror(errno));
    _exit(EXIT_NORUN);
  }
  child = pid;
  sigprocmask(SIG_SETMASK, &old_mask, NULL);
  if (r->live) {
    struct live_child c = {pid, 0, 0};
    live_view(r, &c);
    if (c.done) {
      *status = c.status;
      child = 0;
      free(preload);
      return -1;
    }
  }
  do
    w = waitpid(pid, status, 0);
  while (w < 0 && errno == EINTR);
  child = 0;
  if (w < 0)
    *wait_err = errno;
  free(preload);
  return w < 0 ? 0 : -1;
}
