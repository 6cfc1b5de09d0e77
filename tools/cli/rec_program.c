/*
** ljmprof record: which program runs. The shim to preload (--shim, the
** build tree, the installed folder), the program as execvp finds it, and
** in place of a luajit that links LuaJIT statically (Debian's
** /usr/bin/luajit, or the interpreter of a #! script) the bundled
** dynamic frontend. A program the loader runs in secure mode would not
** be profiled: said before it runs.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "elfinfo.h"
#include "rec.h"

#ifndef LJM_LIBDIR
#define LJM_LIBDIR "/usr/lib/ljmprof"
#endif
#ifndef LJM_FLAVOUR
#define LJM_FLAVOUR "luajit"
#endif

/* -- Finding things ----------------------------------------------------------- */

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
    const char *dir = p;
    if (len == 0) {
      /* An empty entry is the current folder. */
      dir = ".";
      len = 1;
    }
    if ((size_t)snprintf(buf, n, "%.*s/%s", (int)len, dir, prog) < n &&
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

/* -- Secure mode -------------------------------------------------------------- */

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

/* -- The flavour --------------------------------------------------------------- */

/*
** Where the shim and the frontend of each flavour are: the build's own
** flavour (LJM_FLAVOUR) in preload/ and src/ of the build tree, or
** LJM_LIBDIR once installed; OpenResty's, when it is the second one
** built, in luajit2/ of both.
*/
struct flavour_files {
  const char *shim_env, *shim_rel, *shim_name;
  const char *fe_env, *fe_rel, *fe_name;
};

static const struct flavour_files main_files = {
  "LJMPROF_SHIM", "preload/libljmprof.so", "libljmprof.so",
  "LJMPROF_LUAJIT", "src/luajit", "luajit"
};
static const struct flavour_files luajit2_files = {
  "LJMPROF_SHIM_LUAJIT2", "luajit2/preload/libljmprof.so",
  "luajit2/libljmprof.so", "LJMPROF_LUAJIT_LUAJIT2", "luajit2/src/luajit",
  "luajit2/luajit"
};

static const struct flavour_files *files_of(const char *flavour)
{
  if (strcmp(flavour, LJM_FLAVOUR) == 0)
    return &main_files;
  if (strcmp(flavour, "luajit2") == 0)
    return &luajit2_files;
  return NULL;
}

/*
** The flavour the program would load: --flavour, or that of the system
** library, which a program that links libluajit-5.1.so.2 (or loads a
** module that does, as nginx's Lua module) gets; this build's own when
** there is none.
*/
static const char *pick_flavour(struct record *r, const char **why)
{
  char lib[PATH_MAX];
  const char *fl;
  if (r->flavour) {
    *why = "--flavour";
    return r->flavour;
  }
  if (ljm_system_luajit(lib, sizeof(lib)) == 0 &&
      (fl = ljm_elf_flavour(lib)) != NULL) {
    snprintf(r->why, sizeof(r->why), "the system library %s is of "
	     "that flavour", lib);
    *why = r->why;
    return fl;
  }
  *why = "no system library: this build's own";
  return LJM_FLAVOUR;
}

/* -- What runs ---------------------------------------------------------------- */

/* The shim, and the program (or the frontend in place of a static
** luajit) into r->args. */
int rec_find_program(struct record *r)
{
  char interp[PATH_MAX], *prog = r->prog, *frontend = r->frontend;
  const struct flavour_files *ff;
  const char *flavour, *why;
  int kind = 0, i;

  flavour = pick_flavour(r, &why);
  ff = files_of(flavour);
  if (r->shim_opt) {
    if (!is_file(r->shim_opt)) {
      rec_error("--shim=%s: no such file", r->shim_opt);
      return EXIT_USAGE;
    }
    snprintf(r->shim, sizeof(r->shim), "%s", r->shim_opt);
  } else if (ff == NULL) {
    rec_error("this ljmprof has no shim of the %s flavour (%s); give "
	      "--shim=PATH", flavour, why);
    return r->flavour ? EXIT_USAGE : EXIT_NORUN;
  } else if (find_ours(r->shim, sizeof(r->shim), ff->shim_env, ff->shim_rel,
		       ff->shim_name) != 0) {
    rec_error("cannot find libljmprof.so of the %s flavour (looked in "
	      "%s/%s); give --shim=PATH", flavour, LJM_LIBDIR, ff->shim_name);
    return EXIT_NORUN;
  }
  if (r->verbose)
    fprintf(stderr, "ljmprof: record: preloading %s, of the %s flavour (%s)\n",
	    r->shim, r->shim_opt ? "given" : flavour,
	    r->shim_opt ? "--shim" : why);
  if (ff == NULL)
    ff = &main_files;

  if (which(r->args[0], prog, sizeof(r->prog)) == 0) {
    warn_secure(prog);
    kind = static_luajit(prog, interp, sizeof(interp));
  }
  if (kind == 0)
    return -1;
  if (find_ours(frontend, sizeof(r->frontend), ff->fe_env, ff->fe_rel,
		ff->fe_name) != 0) {
    rec_error("%s links LuaJIT statically and the bundled dynamic "
	      "frontend is missing: its VMs cannot be profiled", interp);
  } else if (kind == 2) {
    fprintf(stderr, "ljmprof: %s links LuaJIT statically; running the "
	    "bundled dynamic frontend %s instead\n", prog, frontend);
    r->args[0] = frontend;
  } else {
    /* A script: run it with the frontend as its interpreter. */
    char **a = calloc((size_t)r->nargs + 2, sizeof(*a));
    if (a == NULL) {
      rec_error("out of memory");
      return EXIT_NORUN;
    }
    fprintf(stderr, "ljmprof: %s runs %s, which links LuaJIT statically; "
	    "running it with the bundled dynamic frontend %s instead\n",
	    prog, interp, frontend);
    a[0] = frontend;
    a[1] = prog;
    for (i = 1; i < r->nargs; i++)
      a[i + 1] = r->args[i];
    r->args = a;
    r->nargs++;
  }
  return -1;
}
