/*
** ljmprof record [-o FILE] [OPTION]... -- PROGRAM [ARG]...
**
** Sets LD_PRELOAD and the LJMPROF_* variables, runs the program, waits
** for it, lists the streams written (the shim appends each file it opens
** to a manifest that we give it), and returns the program's exit status.
** Options are checked with the parser and table that the shim uses (the
** shared core, common/), so that they accept exactly what the environment
** variables accept. A program that
** links LuaJIT statically (Debian's /usr/bin/luajit, or a script whose
** #! line names it) is replaced by the bundled dynamic frontend.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/random.h>
#include <sys/xattr.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ljm_config.h"
#include "elfinfo.h"
#include "outpath.h"
#include "writer.h"
#include "commands.h"

#ifndef LJM_LIBDIR
#define LJM_LIBDIR "/usr/lib/ljmprof"
#endif

#define EXIT_USAGE	2
#define EXIT_NORUN	127

static pid_t child;	/* The program, for forwarded signals. */

static void rec_error(const char *fmt, ...)
  __attribute__((format(printf, 1, 2)));

static void rec_error(const char *fmt, ...)
{
  va_list ap;
  fflush(stdout);
  fputs("ljmprof: record: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
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
	"                         (default ljmprof.bin; a stream of yours\n"
	"                         there from an earlier run becomes FILE.old)\n"
	"  -b, --bufsize=SIZE     buffer per VM [LJMPROF_BUFSIZE]\n"
	"  -s, --signal=SIG       toggle profiling on SIG [LJMPROF_SIGNAL]\n"
	"      --no-start         wait for the first signal [LJMPROF_START=no]\n"
	"  -d, --delay=TIME       start after TIME [LJMPROF_DELAY]\n"
	"  -m, --max-size=SIZE    end streams at SIZE [LJMPROF_MAXSIZE]\n"
	"  -v, --verbose          settings, files opened and closed\n"
	"                         [LJMPROF_VERBOSE]\n"
	"      --shim=PATH        the libljmprof.so to preload\n"
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

/* -- Finding things --------------------------------------------------------- */

static int is_file(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* dir of our own executable, into buf. */
static int self_dir(char *buf, size_t n)
{
  ssize_t len = readlink("/proc/self/exe", buf, n - 1);
  char *slash;
  if (len <= 0)
    return -1;
  buf[len] = '\0';
  slash = strrchr(buf, '/');
  if (slash == NULL)
    return -1;
  *slash = '\0';
  return 0;
}

/*
** One of ours: env override, then the build tree (tools/../REL), then
** the installed folder (LJM_LIBDIR/NAME).
*/
static int find_ours(char *buf, size_t n, const char *env, const char *rel,
		     const char *name)
{
  char dir[PATH_MAX];
  const char *e = getenv(env);
  if (e && *e && is_file(e)) {
    snprintf(buf, n, "%s", e);
    return 0;
  }
  if (self_dir(dir, sizeof(dir)) == 0 &&
      (size_t)snprintf(buf, n, "%s/../%s", dir, rel) < n && is_file(buf)) {
    char real[PATH_MAX];
    if (realpath(buf, real))
      snprintf(buf, n, "%s", real);
    return 0;
  }
  if ((size_t)snprintf(buf, n, "%s/%s", LJM_LIBDIR, name) < n && is_file(buf))
    return 0;
  return -1;
}

/* PROGRAM as execvp would find it. */
static int which(const char *prog, char *buf, size_t n)
{
  const char *path = getenv("PATH"), *p;
  if (strchr(prog, '/')) {
    snprintf(buf, n, "%s", prog);
    return access(buf, X_OK);
  }
  if (path == NULL)
    path = "/usr/local/bin:/usr/bin:/bin";
  for (p = path;; ) {
    const char *end = strchr(p, ':');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if ((size_t)snprintf(buf, n, "%.*s/%s", (int)len, len ? p : ".", prog) < n &&
	is_file(buf) && access(buf, X_OK) == 0)
      return 0;
    if (end == NULL)
      break;
    p = end + 1;
  }
  return -1;
}

/* A program with LuaJIT linked in rather than loaded. */
static int links_luajit_statically(const char *path)
{
  return ljm_elf_defines(path, "luaL_newstate") == 1 &&
	 ljm_elf_needs(path, "libluajit-5.1.so.2") != 1;
}

static int is_luajit_name(const char *path)
{
  const char *b = strrchr(path, '/');
  b = b ? b + 1 : path;
  return strncmp(b, "luajit", 6) == 0;
}

/*
** If PROGRAM is a statically linked luajit, or a script whose #! line
** runs one (directly or through env), the interpreter to replace: its
** path into interp, 1 for a script, 2 for the program itself; else 0.
*/
static int static_luajit(const char *path, char *interp, size_t n)
{
  char line[512], *p, *arg;
  FILE *f;
  if (is_luajit_name(path) && links_luajit_statically(path)) {
    snprintf(interp, n, "%s", path);
    return 2;
  }
  f = fopen(path, "r");
  if (f == NULL)
    return 0;
  if (fgets(line, sizeof(line), f) == NULL || strncmp(line, "#!", 2) != 0) {
    fclose(f);
    return 0;
  }
  fclose(f);
  line[strcspn(line, "\r\n")] = '\0';
  p = line + 2 + strspn(line + 2, " \t");
  arg = p + strcspn(p, " \t");
  if (*arg) {
    *arg++ = '\0';
    arg += strspn(arg, " \t");
    arg[strcspn(arg, " \t")] = '\0';
  }
  if (strcmp(p, "/usr/bin/env") == 0 || strcmp(p, "/bin/env") == 0) {
    if (*arg == '\0' || which(arg, interp, n) != 0)
      return 0;
  } else {
    snprintf(interp, n, "%s", p);
  }
  return is_luajit_name(interp) && links_luajit_statically(interp) ? 1 : 0;
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

/* -- Running ---------------------------------------------------------------- */

static void forward(int sig)
{
  if (child > 0)
    kill(child, sig);
}

/* The name of a user id, or its number. */
static const char *user_name(unsigned long uid, char *buf, size_t n)
{
  struct passwd *pw = getpwuid((uid_t)uid);
  if (pw != NULL)
    snprintf(buf, n, "%s (uid %lu)", pw->pw_name, uid);
  else
    snprintf(buf, n, "uid %lu", uid);
  return buf;
}

/* path, control characters as \ooo: a name is never a terminal command. */
static void put_path(FILE *out, const char *path)
{
  const unsigned char *p;
  for (p = (const unsigned char *)path; *p; p++)
    if (*p < 0x20 || *p == 0x7f)
      fprintf(out, "\\%03o", *p);
    else
      fputc(*p, out);
}

/* -- The manifest ------------------------------------------------------------ */

/*
** The names of streams the run may have written: what the output
** template expands to. A relative template was made absolute by each
** process against its own folder: any folder then, the rest as given.
*/
static int is_our_name(const char *tmpl, const char *path)
{
  const char *p;
  if (path[0] != '/' || strlen(path) > LJM_PATH_MAX - 1)
    return 0;
  if (tmpl[0] == '/')
    return ljm_outpath_match(tmpl, path);
  while (tmpl[0] == '.' && tmpl[1] == '/')
    tmpl += 2;
  for (p = path; (p = strchr(p, '/')) != NULL; p++)
    if (ljm_outpath_match(tmpl, p + 1))
      return 1;
  return 0;
}

/* A set of strings (open addressing): the names listed already, however
** many lines the manifest has. */
struct name_set {
  char **slot;
  size_t cap, n;
};

static size_t name_hash(const char *s)
{
  size_t h = (size_t)14695981039346656037ULL;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * (size_t)1099511628211ULL;
  return h;
}

/* 1 if s was new (and is now in), 0 if there already, -1 out of memory. */
static int name_add(struct name_set *set, const char *s)
{
  size_t i;
  if (2 * (set->n + 1) > set->cap) {
    size_t cap = set->cap ? 2 * set->cap : 64, k;
    char **slot = calloc(cap, sizeof(*slot));
    if (slot == NULL)
      return -1;
    for (k = 0; k < set->cap; k++)
      if (set->slot[k]) {
	for (i = name_hash(set->slot[k]) & (cap - 1); slot[i];
	     i = (i + 1) & (cap - 1))
	  ;
	slot[i] = set->slot[k];
      }
    free(set->slot);
    set->slot = slot;
    set->cap = cap;
  }
  for (i = name_hash(s) & (set->cap - 1); set->slot[i];
       i = (i + 1) & (set->cap - 1))
    if (strcmp(set->slot[i], s) == 0)
      return 0;
  if ((set->slot[i] = strdup(s)) == NULL)
    return -1;
  set->n++;
  return 1;
}

static void name_set_free(struct name_set *set)
{
  size_t i;
  for (i = 0; i < set->cap; i++)
    free(set->slot[i]);
  free(set->slot);
}

/* What the run can say about a file of the manifest. */
enum listed { LISTED_STREAM, LISTED_DEVICE, LISTED_GONE, LISTED_FOREIGN };

/*
** A regular file (never through a link) that begins as a stream does and
** was written since the run began, its size into *size; a FIFO or a
** device (/dev/null); gone; or anything else, which is not ours to
** describe.
*/
static enum listed what_is(const char *path, time_t since, long long *size)
{
  struct stat st;
  char magic[3];
  int fd, ok;
  if (lstat(path, &st) != 0)
    return errno == ENOENT ? LISTED_GONE : LISTED_FOREIGN;
  if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))
    return LISTED_DEVICE;
  if (!S_ISREG(st.st_mode) || st.st_mtime < since)
    return LISTED_FOREIGN;
  fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return LISTED_FOREIGN;
  ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
       read(fd, magic, 3) == 3 && memcmp(magic, "ljs", 3) == 0;
  close(fd);
  *size = (long long)st.st_size;
  return ok ? LISTED_STREAM : LISTED_FOREIGN;
}

/*
** A stream the shim could not open ("!ERRNO\tEUID\tPATH" in the
** manifest): say it once per folder, user and error, plainly when the
** program had become a user who cannot write there. 0, or -1 when the
** line is not one of the shim's.
*/
static int tell_failure(const char *line, const char *tmpl,
			char (*told)[LJM_PATH_MAX + 64], size_t *ntold)
{
  char dir[LJM_PATH_MAX + 2], who[128], key[LJM_PATH_MAX + 64];
  const char *path, *slash;
  unsigned long uid;
  int err, n = 0;
  size_t i;
  if (sscanf(line, "!%d\t%lu\t%n", &err, &uid, &n) != 2 || n == 0 ||
      err <= 0 || err > 4095 || line[1] < '0' || line[1] > '9')
    return -1;
  path = line + n;
  if (!is_our_name(tmpl, path))
    return -1;
  slash = strrchr(path, '/');
  snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path),
	   path);
  snprintf(key, sizeof(key), "%d %lu %s", err, uid, dir);
  for (i = 0; i < *ntold; i++)
    if (strcmp(told[i], key) == 0)
      return 0;
  if (*ntold < 16)
    strcpy(told[(*ntold)++], key);
  user_name(uid, who, sizeof(who));
  fputs("ljmprof: record: ", stderr);
  put_path(stderr, path);
  if ((err == EACCES || err == EPERM || err == EROFS) && uid != geteuid()) {
    fprintf(stderr, " was not written: the program ran as %s, who cannot "
	    "write to ", who);
    put_path(stderr, dir);
    fprintf(stderr, " (%s); give -o a file in a folder that user can "
	    "write\n", strerror(err));
  } else {
    fprintf(stderr, " was not written (%s), as %s\n", ljm_out_strerror(err),
	    who);
  }
  return 0;
}

/*
** Print each stream of the manifest once, with its size, and the streams
** that could not be written. Only lines the shim writes for this run's
** template count; the others are ignored, and counted in one line.
** Returns the number of files; *nfailed gets the number of failure notes.
*/
static int list_files(const char *manifest, const char *tmpl, time_t since,
		      int *nfailed)
{
  char line[LJM_PATH_MAX + 64];
  char told[16][LJM_PATH_MAX + 64];
  struct name_set seen = { NULL, 0, 0 };
  size_t ntold = 0;
  unsigned long foreign = 0;
  int n = 0, whole = 1;
  FILE *f;
  *nfailed = 0;
  f = fopen(manifest, "re");
  if (f == NULL)
    return 0;
  while (fgets(line, sizeof(line), f)) {
    size_t len = strlen(line);
    long long size = 0;
    enum listed what;
    int was_whole = whole, added;
    /* A line longer than ours, or the last without its newline, is not
    ** the shim's: skipped to its end. */
    whole = len > 0 && line[len - 1] == '\n';
    if (!was_whole)
      continue;
    if (!whole) {
      foreign++;
      continue;
    }
    line[--len] = '\0';
    if (line[0] == '!') {
      if (tell_failure(line, tmpl, told, &ntold) != 0)
	foreign++;
      else
	(*nfailed)++;
      continue;
    }
    if (!is_our_name(tmpl, line)) {
      foreign++;
      continue;
    }
    added = name_add(&seen, line);
    if (added < 0)
      break;
    if (added == 0)
      continue;
    what = what_is(line, since, &size);
    if (what == LISTED_FOREIGN) {
      foreign++;
      continue;
    }
    fputs("ljmprof: wrote ", stderr);
    put_path(stderr, line);
    if (what == LISTED_STREAM)
      fprintf(stderr, " (%lld bytes)\n", size);
    else if (what == LISTED_GONE)
      fputs(" (since removed)\n", stderr);
    else
      fputc('\n', stderr);
    n++;
  }
  name_set_free(&seen);
  fclose(f);
  if (foreign)
    fprintf(stderr, "ljmprof: record: ignored %lu line%s of the manifest "
	    "that name no stream of this run\n", foreign,
	    foreign == 1 ? "" : "s");
  return n;
}

/*
** A program that the loader will run in secure mode (its real and
** effective ids differ: set-user-ID or set-group-ID to someone else, or
** file capabilities for a user without them) ignores an LD_PRELOAD path
** with a slash: nothing would be profiled. Say so before running it.
*/
static void warn_secure(const char *prog)
{
  struct stat st;
  const char *why = NULL;
  if (stat(prog, &st) != 0)
    return;
  if ((st.st_mode & S_ISUID) && st.st_uid != geteuid())
    why = "set-user-ID";
  else if ((st.st_mode & S_ISGID) && st.st_gid != getegid())
    why = "set-group-ID";
  else if (geteuid() != 0 &&
	   getxattr(prog, "security.capability", NULL, 0) > 0)
    why = "given file capabilities";
  if (why == NULL) {
    /* Launchers that start the real server with real and effective ids
    ** that differ. */
    static const char *const launchers[] = { "traffic_manager", NULL };
    const char *base = strrchr(prog, '/');
    size_t i;
    base = base ? base + 1 : prog;
    for (i = 0; launchers[i]; i++)
      if (strcmp(base, launchers[i]) == 0) {
	fprintf(stderr, "ljmprof: %s starts its server with real and "
		"effective user ids that differ: the loader runs it in secure "
		"mode, which ignores LD_PRELOAD, so its VMs will not be "
		"profiled; run the server itself under ljmprof record (see "
		"Limitations in the README)\n", prog);
	return;
      }
    return;
  }
  fprintf(stderr, "ljmprof: %s is %s: the loader runs it in secure mode, "
	    "which ignores LD_PRELOAD, so its VMs will not be profiled; run a "
	    "copy without that bit, or run it as the user it becomes (see "
	    "Limitations in the README)\n", prog, why);
}

/* -- The command ------------------------------------------------------------- */

/* What one run of record is working with. */
struct record {
  const char *shim_opt;		/* --shim, or NULL. */
  int sig;			/* The toggle signal, forwarded; 0 if none. */
  char shim[PATH_MAX];		/* The libljmprof.so to preload. */
  char **args;			/* What to exec. */
  char prog[PATH_MAX];		/* The program found, args[1] of a script. */
  char frontend[PATH_MAX];	/* The dynamic luajit, in place of a static. */
  char manifest_dir[PATH_MAX - 64];	/* Room for the file's name. */
  char manifest_path[PATH_MAX];
  char *preload;		/* LD_PRELOAD for the child. */
  const char *tmpl;		/* LJMPROF_OUT as the child gets it. */
  time_t since;			/* When the run began (streams are newer). */
};

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
    { "verbose", no_argument, NULL, 'v' },
    { "shim", required_argument, NULL, 'S' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 }
  };
  const char *out = NULL;
  int opt;

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
      setenv("LJMPROF_START", "no", 1);
      break;
    case 'd':
      if (set_var("--delay", "LJMPROF_DELAY", optarg)) return EXIT_USAGE;
      break;
    case 'm':
      if (set_var("--max-size", "LJMPROF_MAXSIZE", optarg)) return EXIT_USAGE;
      break;
    case 'v':
      setenv("LJMPROF_VERBOSE", "yes", 1);
      break;
    case 'S':
      r->shim_opt = optarg;
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
  if (getenv("LJMPROF_START") && !getenv("LJMPROF_SIGNAL") &&
      strcmp(getenv("LJMPROF_START"), "no") == 0) {
    rec_error("--no-start needs --signal");
    return EXIT_USAGE;
  }
  if (r->sig == 0 && getenv("LJMPROF_SIGNAL"))
    ljm_parse_signal(getenv("LJMPROF_SIGNAL"), &r->sig);
  r->tmpl = getenv("LJMPROF_OUT");
  return -1;
}

/* The shim, and the program (or the frontend in place of a static
** luajit) into r->args: -1, or the exit status. */
static int find_program(struct record *r, int argc, char **argv)
{
  char interp[PATH_MAX], *prog = r->prog, *frontend = r->frontend;
  int kind = 0, i;

  if (r->shim_opt) {
    if (!is_file(r->shim_opt)) {
      rec_error("--shim=%s: no such file", r->shim_opt);
      return EXIT_USAGE;
    }
    snprintf(r->shim, sizeof(r->shim), "%s", r->shim_opt);
  } else if (find_ours(r->shim, sizeof(r->shim), "LJMPROF_SHIM",
		       "preload/libljmprof.so", "libljmprof.so") != 0) {
    rec_error("cannot find libljmprof.so (looked in %s); give --shim=PATH",
	      LJM_LIBDIR);
    return EXIT_NORUN;
  }

  r->args = argv + optind;
  if (which(r->args[0], prog, sizeof(r->prog)) == 0) {
    warn_secure(prog);
    kind = static_luajit(prog, interp, sizeof(interp));
  }
  if (kind == 0)
    return -1;
  if (find_ours(frontend, sizeof(r->frontend), "LJMPROF_LUAJIT", "src/luajit",
		"luajit") != 0) {
    rec_error("%s links LuaJIT statically and the bundled dynamic "
	      "frontend is missing: its VMs cannot be profiled", interp);
  } else if (kind == 2) {
    fprintf(stderr, "ljmprof: %s links LuaJIT statically; running the "
	    "bundled dynamic frontend %s instead\n", prog, frontend);
    r->args[0] = frontend;
  } else {
    /* A script: run it with the frontend as its interpreter. */
    char **a = calloc((size_t)(argc - optind) + 2, sizeof(*a));
    if (a == NULL) {
      rec_error("out of memory");
      return EXIT_NORUN;
    }
    fprintf(stderr, "ljmprof: %s runs %s, which links LuaJIT statically; "
	    "running it with the bundled dynamic frontend %s instead\n",
	    prog, interp, frontend);
    a[0] = frontend;
    a[1] = prog;
    for (i = 1; optind + i < argc; i++)
      a[i + 1] = r->args[i];
    r->args = a;
  }
  return -1;
}

static void remove_manifest(const struct record *r)
{
  unlink(r->manifest_path);
  rmdir(r->manifest_dir);
}

/* A temporary folder of ours in dir, into r->manifest_dir: 0 or errno. */
static int make_dir_in(struct record *r, const char *dir)
{
  if (strlen(dir) > sizeof(r->manifest_dir) - 32)
    return ENAMETOOLONG;
  snprintf(r->manifest_dir, sizeof(r->manifest_dir),
	   "%s/ljmprof-record.XXXXXX", dir);
  return mkdtemp(r->manifest_dir) ? 0 : errno;
}

/* A name nobody else can guess: 128 random bits, in hex. */
static int random_name(char *buf, size_t n)
{
  unsigned char bits[16];
  size_t i;
  if (getrandom(bits, sizeof(bits), 0) != (ssize_t)sizeof(bits) ||
      n < 2 * sizeof(bits) + 1)
    return -1;
  for (i = 0; i < sizeof(bits); i++)
    snprintf(buf + 2 * i, 3, "%02x", bits[i]);
  return 0;
}

/*
** The manifest, where the shim lists the files it opens. A program may
** switch to another user (servers drop privileges) and still write its
** streams: the manifest is writable by anyone, under a random name, in a
** folder of ours that others may enter but not list. Only our own run
** knows the name (it is in the program's environment). -1, or the exit
** status.
*/
static int make_manifest(struct record *r)
{
  const char *tmpdir = getenv("TMPDIR");
  char name[40];
  int fd, err = 0;

  if (tmpdir && *tmpdir) {
    err = make_dir_in(r, tmpdir);
    if (err) {
      fputs("ljmprof: record: TMPDIR=", stderr);
      put_path(stderr, tmpdir);
      fprintf(stderr, ": cannot create a temporary folder there (%s); "
	      "using /tmp\n", strerror(err));
    }
  }
  if (!tmpdir || !*tmpdir || err) {
    err = make_dir_in(r, "/tmp");
    if (err) {
      rec_error("cannot create a temporary folder in /tmp: %s; set TMPDIR "
		"to a folder you can write", strerror(err));
      return EXIT_USAGE;
    }
  }
  if (random_name(name, sizeof(name)) != 0) {
    rec_error("cannot make a random name: %s", strerror(errno));
    rmdir(r->manifest_dir);
    return EXIT_NORUN;
  }
  snprintf(r->manifest_path, sizeof(r->manifest_path), "%s/streams.%s",
	   r->manifest_dir, name);
  fd = open(r->manifest_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 || fchmod(fd, 0666) != 0 || chmod(r->manifest_dir, 0711) != 0) {
    rec_error("cannot create %s: %s", r->manifest_path, strerror(errno));
    if (fd >= 0)
      close(fd);
    remove_manifest(r);
    return EXIT_NORUN;
  }
  close(fd);
  setenv("LJMPROF_MANIFEST", r->manifest_path, 1);
  return -1;
}

/* A stream of the euid's: a regular file (not a link) that begins as
** streams do. */
static int is_my_stream(const char *path)
{
  struct stat st;
  char magic[3];
  int fd, ok;
  fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
       read(fd, magic, 3) == 3 && memcmp(magic, "ljs", 3) == 0;
  close(fd);
  return ok;
}

/*
** The first stream's name is the user's: a stream of theirs from an
** earlier run there is moved to NAME.old (replacing an older one), as
** perf does with perf.data; anything else there (a symbolic link, a file
** that is not a stream, someone else's) is refused, untouched. A FIFO or
** a device is used as it is. A template with %p names a new file each
** run. -1, or the exit status.
*/
static int move_last_run(const struct record *r)
{
  char name[LJM_PATH_MAX], old[LJM_PATH_MAX + 8];
  struct ljm_name k = { 0, 1, 1, 0, 0 };
  struct stat st;
  const char *why = NULL;

  if (strstr(r->tmpl, "%p") ||
      ljm_outpath(name, sizeof(name), r->tmpl, &k) != 0 ||
      lstat(name, &st) != 0 || S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) ||
      S_ISDIR(st.st_mode))
    return -1;
  snprintf(old, sizeof(old), "%s.old", name);
  if (S_ISLNK(st.st_mode))
    why = "is a symbolic link";
  else if (!is_my_stream(name))
    why = "is there and is not a stream of yours";
  if (why == NULL && lstat(old, &st) == 0 && !is_my_stream(old)) {
    fputs("ljmprof: record: ", stderr);
    put_path(stderr, old);
    fputs(" is there and is not a stream of yours: the last ", stderr);
    put_path(stderr, name);
    fputs(" cannot be moved there; remove one, or give -o another name\n",
	  stderr);
    return EXIT_USAGE;
  }
  if (why) {
    fputs("ljmprof: record: ", stderr);
    put_path(stderr, name);
    fprintf(stderr, " %s: not replaced; remove it, or give -o another "
	    "name\n", why);
    return EXIT_USAGE;
  }
  if (rename(name, old) != 0) {
    fputs("ljmprof: record: cannot move the last ", stderr);
    put_path(stderr, name);
    fprintf(stderr, " aside: %s\n", strerror(errno));
    return EXIT_USAGE;
  }
  fputs("ljmprof: record: the last ", stderr);
  put_path(stderr, name);
  fputs(" is now ", stderr);
  put_path(stderr, old);
  fputc('\n', stderr);
  return -1;
}

/* LD_PRELOAD for the child: ours first, the user's after. 0 or -1. */
static int make_preload(struct record *r)
{
  const char *old = getenv("LD_PRELOAD");
  size_t len = strlen(r->shim) + (old ? strlen(old) : 0) + 2;
  r->preload = malloc(len);
  if (r->preload == NULL)
    return -1;
  snprintf(r->preload, len, "%s%s%s", r->shim, old && *old ? ":" : "",
	   old ? old : "");
  return 0;
}

/* Run the program and wait for it: its wait status into *status. -1;
** EXIT_NORUN when it could not be started (said); 0 when it could not be
** waited for (the errno into *wait_err, said after the listing). */
static int run_and_wait(const struct record *r, int *status, int *wait_err)
{
  struct sigaction sa, old_int, old_quit, old_term, old_hup, old_sig;
  pid_t w;

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

  fflush(NULL);
  child = fork();
  if (child < 0) {
    rec_error("fork: %s", strerror(errno));
    return EXIT_NORUN;
  }
  if (child == 0) {
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    if (r->sig)
      sigaction(r->sig, &old_sig, NULL);
    setenv("LD_PRELOAD", r->preload, 1);
    execvp(r->args[0], r->args);
    fprintf(stderr, "ljmprof: record: cannot run %s: %s\n", r->args[0],
	    strerror(errno));
    _exit(EXIT_NORUN);
  }
  do
    w = waitpid(child, status, 0);
  while (w < 0 && errno == EINTR);
  if (w < 0) {
    *wait_err = errno;
    return 0;
  }
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
      (st = find_program(&r, argc, argv)) >= 0 ||
      (st = move_last_run(&r)) >= 0 ||
      (st = make_manifest(&r)) >= 0)
    return st;
  /* Streams of this run are newer (by a file system's rounding). */
  r.since = time(NULL) - 2;
  if (make_preload(&r) != 0) {
    rec_error("out of memory");
    remove_manifest(&r);
    return EXIT_NORUN;
  }
  st = run_and_wait(&r, &status, &wait_err);
  free(r.preload);
  if (st == EXIT_NORUN) {
    remove_manifest(&r);
    return st;
  }
  nfiles = list_files(r.manifest_path, r.tmpl, r.since, &nfailed);
  remove_manifest(&r);
  if (st == 0) {
    rec_error("waitpid: %s", strerror(wait_err));
    return EXIT_NORUN;
  }
  return exit_status(&r, status, nfiles, nfailed);
}
