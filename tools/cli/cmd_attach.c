/*
** ljmprof attach: profile the LuaJIT VMs of running processes that were
** started without the shim, then leave them as they were.
**
** For each process: check that the LuaJIT library it maps is a build we
** know the layouts of (its build-id in attach_builds.h, generated at
** build time); load the recorder (attach/recorder.c) with dlopen, called
** in one of its threads through inject.c while the others run on; stop
** every thread for the moment the recorder takes to find the VMs and put
** its wrapper over their allocators; after the duration (or Ctrl-C) stop
** them again while it puts the allocators back and ends the streams.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "attach_builds.h"
#include "attach_names.h"
#include "commands.h"
#include "elfinfo.h"
#include "inject.h"
#include "ljm_config.h"
#include "lj_memprof_format.h"
#include "outpath.h"
#include "writer.h"

#ifndef LJM_LIBDIR
#define LJM_LIBDIR "/usr/lib/ljmprof"
#endif

static void usage(FILE *out)
{
  fputs(
"Usage: ljmprof attach [OPTION]... PID...\n"
"Profile the LuaJIT VMs of running processes started without the shim:\n"
"load the recorder into each, record every VM into a stream of its own\n"
"(TEMPLATE with the pid and the VM's number: x.4242.bin, x.4242.vm2.bin),\n"
"then put every allocator back and leave the processes running.\n"
"\n"
"  -o, --output=TEMPLATE   the streams' name (default ljmprof.bin); %p,\n"
"                          %n, %s as in LJMPROF_OUT\n"
"  -d, --duration=SECONDS  detach after this long (default: at Ctrl-C)\n"
"      --no-snapshot       no start snapshot: a plain version 3 stream (as\n"
"                          the reference parser reads), without what each\n"
"                          VM held before the attach\n"
"      --stacks[=DEPTH]    call stacks of up to DEPTH frames (default 32):\n"
"                          Lua, built-in and C frames; in compiled code\n"
"                          the trace and the frames it inlined there\n"
"      --sample=SIZE       record one allocation every SIZE bytes on\n"
"                          average (4K, 1M; yes: 4M), and the frees of\n"
"                          those: reports estimate the rest (no start\n"
"                          snapshot)\n"
"  -h, --help              this text\n"
"\n"
"Needs the right to trace the processes (root, CAP_SYS_PTRACE, or Yama's\n"
"ptrace_scope 0 for your own). Only the LuaJIT builds this ljmprof was\n"
"made for are attached (their build-ids: --help lists them); x86-64 only.\n"
"Each process is stopped twice, for the moment it takes to find its VMs\n"
"and to put the allocators back; the recorder stays loaded, idle.\n"
"\n"
"Exit status: 0 every process was attached and detached, 1 some could\n"
"not be (one line each says why), 2 usage error.\n",
	out);
  fputs("\nKnown LuaJIT builds:\n", out);
  for (size_t i = 0; i < ljm_attach_nbuilds; i++)
    fprintf(out, "  %s  %s %s\n", ljm_attach_builds[i].build_id,
	    ljm_attach_builds[i].flavour, ljm_attach_builds[i].version);
  if (ljm_attach_nbuilds == 0)
    fputs("  none: this ljmprof was built without the system LuaJIT of its "
	  "source's version\n", out);
}

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
  (void)sig;
  interrupted = 1;
}

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The recorder library, and where its entry points are in this process
** (loaded here too, to find them in the target by their offset). */
struct recorder {
  char path[PATH_MAX];
  void *find, *option, *start, *stop, *why, *names;
};

/* The recorder of build b: LIBDIR/ljmprof/DIR/libljmprof-attach.so, or
** where LJMPROF_ATTACH_LIB (LJMPROF_ATTACH_LIB_LUAJIT2 for a recorder in
** luajit2/) says, as the tests run it from the build tree. */
static int load_recorder(struct recorder *r, const struct ljm_attach_build *b)
{
  const char *env = getenv(*b->dir ? "LJMPROF_ATTACH_LIB_LUAJIT2"
			   : "LJMPROF_ATTACH_LIB");
  void *h;
  if (env && *env)
    snprintf(r->path, sizeof(r->path), "%s", env);
  else
    snprintf(r->path, sizeof(r->path), "%s/%slibljmprof-attach.so",
	     LJM_LIBDIR, b->dir);
  if (!(h = dlopen(r->path, RTLD_NOW | RTLD_LOCAL))) {
    ljmprof_error("attach: cannot load the recorder %s: %s", r->path,
		  dlerror());
    return -1;
  }
  r->find = dlsym(h, "ljmprof_attach_find");
  r->option = dlsym(h, "ljmprof_attach_option");
  r->start = dlsym(h, "ljmprof_attach_start");
  r->stop = dlsym(h, "ljmprof_attach_stop");
  r->why = dlsym(h, "ljmprof_attach_why");
  r->names = dlsym(h, "ljmprof_attach_names");
  if (!r->find || !r->option || !r->start || !r->stop || !r->why || !r->names) {
    ljmprof_error("attach: %s is not ljmprof's recorder", r->path);
    return -1;
  }
  return 0;
}

/* The file pid maps that holds LuaJIT (the library, or a program with
** LuaJIT linked in: whatever defines its API), as a path through its
** root. 0, 1 when there is none, -1 when the maps cannot be read. */
static int luajit_of(pid_t pid, char *path, size_t n)
{
  char maps[64], line[4096], last[4096] = "";
  FILE *f;
  int found = 0;
  snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
  if (!(f = fopen(maps, "r")))
    return -1;
  while (!found && fgets(line, sizeof(line), f)) {
    char *p = strchr(line, '/');
    if (!p)
      continue;
    p[strcspn(p, "\n")] = 0;
    if (!strcmp(p, last))
      continue;
    snprintf(last, sizeof(last), "%s", p);
    snprintf(path, n, "/proc/%d/root%s", (int)pid, p);
    found = ljm_elf_defines(path, "luaJIT_setmode") == 1;
  }
  fclose(f);
  return found ? 0 : 1;
}

/* Whether the file holds LuaJIT's version string (jit.version's), as a
** program with LuaJIT linked in and stripped does. */
static int has_luajit_text(const char *path)
{
  static const char needle[] = "LuaJIT 2.";
  char buf[1 << 16];
  size_t keep = 0;
  ssize_t n;
  int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;
  if (fd < 0)
    return 0;
  while (!found && (n = read(fd, buf + keep, sizeof(buf) - keep)) > 0) {
    size_t len = keep + (size_t)n;
    found = memmem(buf, len, needle, sizeof(needle) - 1) != NULL;
    keep = sizeof(needle) - 1 < len ? sizeof(needle) - 1 : len;
    memmove(buf, buf + len - keep, keep);
  }
  close(fd);
  return found;
}

/* The C library's dlopen, which the target maps too: not a wrapper of it
** that a sanitizer build of ljmprof has in its own runtime. */
static void *libc_dlopen(void)
{
  void *h = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  void *f = h ? dlsym(h, "dlopen") : NULL;
  return f ? f : (void *)dlopen;
}

/* A call of fn(s0, s1) in the target, and the recorder's words after. */
static int call(struct inj *j, uintptr_t fn, const char *s0, const char *s1,
		uintptr_t a0, uintptr_t a1, uintptr_t *ret)
{
  return inj_call(j, fn, s0, s1, a0, a1, ret, 5000);
}

struct target {
  pid_t pid;
  int attached;		/* VMs recorded. */
  uintptr_t find, option, start, stop, why, names; /* The recorder's entry
						     points there. */
  char *streams;	/* Their paths, a line each. */
};

static void recorder_says(struct inj *j, struct target *t, char *buf,
			  size_t n)
{
  uintptr_t s;
  buf[0] = 0;
  if (call(j, t->why, NULL, NULL, 0, 0, &s) == 0 && s)
    inj_read_str(j, s, buf, n);
}

/* What each stream holds: ljmprof_attach_option's options. */
struct attach_opts {
  int snapshot;		/* A start snapshot. */
  uint64_t sample;	/* Sampled at this mean, or 0. */
  uint64_t stacks;	/* Call stacks of this depth, or 0. */
};

/* Attach to t, its streams named by tmpl. */
static int attach_one(struct target *t, const char *tmpl,
		      const struct attach_opts *o)
{
  struct recorder rec, *r = &rec;
  const struct ljm_attach_build *build = NULL;
  char lib[PATH_MAX], id[128], words[512];
  struct inj j;
  uintptr_t dlopen_at, handle = 0, n;
  const char *err = j.err;
  double t0, paused;
  if (kill(t->pid, 0) < 0 && errno == ESRCH) {
    ljmprof_error("attach: no process %d", (int)t->pid);
    return -1;
  }
  switch (luajit_of(t->pid, lib, sizeof(lib))) {
  case -1:
    ljmprof_error("attach: cannot read process %d's mappings: %s",
		  (int)t->pid, strerror(errno));
    return -1;
  case 1:
    snprintf(lib, sizeof(lib), "/proc/%d/exe", (int)t->pid);
    if (!has_luajit_text(lib)) {
      ljmprof_error("attach: process %d has no LuaJIT (no file it maps "
		    "defines LuaJIT's API)", (int)t->pid);
      return -1;
    }
    /* LuaJIT linked into the program, its symbols stripped: the
    ** program's build-id is not one of a LuaJIT we know. */
    {
      char exe[PATH_MAX];
      ssize_t len = readlink(lib, exe, sizeof(exe) - 1);
      if (len > 0) {
	exe[len] = 0;
	snprintf(lib, sizeof(lib), "/proc/%d/root%.4000s", (int)t->pid, exe);
      }
    }
  }
  if (ljm_elf_build_id(lib, id, sizeof(id)) != 0) {
    ljmprof_error("attach: process %d: cannot read the build-id of %s",
		  (int)t->pid, lib);
    return -1;
  }
  for (size_t i = 0; i < ljm_attach_nbuilds; i++)
    if (!strcmp(ljm_attach_builds[i].build_id, id))
      build = &ljm_attach_builds[i];
  if (!build && strstr(lib, "/libljmprof.so")) {
    ljmprof_error("attach: process %d runs under ljmprof's shim already: "
		  "its streams are LJMPROF_OUT's", (int)t->pid);
    return -1;
  }
  if (!build) {
    ljmprof_error("attach: process %d: its LuaJIT (%s, build-id %s) is not "
		  "a build this ljmprof knows the layouts of "
		  "(ljmprof attach --help lists them)", (int)t->pid,
		  strstr(lib, "/root") ? strstr(lib, "/root") + 5 : lib, id);
    return -1;
  }
  if (load_recorder(r, build))
    return -1;
  if (inj_open(&j, t->pid) ||
      inj_symbol(&j, libc_dlopen(), &dlopen_at))
    goto fail;
  /* dlopen with the other threads running: a lock one of them holds
  ** is let go. */
  if (call(&j, dlopen_at, r->path, NULL, 0, RTLD_NOW, &handle))
    goto fail;
  if (!handle) {
    err = "the recorder did not load there (is the library reachable "
	  "from its root?)";
    goto fail;
  }
  if (inj_symbol(&j, r->find, &t->find) ||
      inj_symbol(&j, r->option, &t->option) ||
      inj_symbol(&j, r->start, &t->start) ||
      inj_symbol(&j, r->stop, &t->stop) ||
      inj_symbol(&j, r->why, &t->why) ||
      inj_symbol(&j, r->names, &t->names))
    goto fail;
  /* The search reads the whole heap: with the other threads running. */
  if (call(&j, t->find, NULL, NULL, 0, 0, &n))
    goto fail;
  if ((long)n <= 0) {
    recorder_says(&j, t, words, sizeof(words));
    err = words;
    goto fail;
  }
  if (call(&j, t->option, "snapshot", NULL, 0, (uintptr_t)o->snapshot,
	   &n) ||
      call(&j, t->option, "sample", NULL, 0, (uintptr_t)o->sample, &n) ||
      call(&j, t->option, "stacks", NULL, 0, (uintptr_t)o->stacks, &n))
    goto fail;
  t0 = now();
  if (inj_stop_all(&j) || call(&j, t->start, tmpl, "", 0, 0, &n))
    goto fail;
  recorder_says(&j, t, words, sizeof(words));
  {
    uintptr_t at;
    static char list[1 << 16];
    if (call(&j, t->names, NULL, NULL, 0, 0, &at) == 0 && at &&
	inj_read_str(&j, at, list, sizeof(list)) == 0)
      t->streams = strdup(list);
  }
  inj_resume_all(&j);
  paused = now() - t0;
  inj_close(&j);
  if ((int)n <= 0) {
    ljmprof_error("attach: process %d: %s", (int)t->pid, words);
    return -1;
  }
  t->attached = (int)n;
  fprintf(stderr, "ljmprof: attach: process %d (%s %s): %s, stopped "
	  "for %.1f ms\n", (int)t->pid, build->flavour, build->version, words,
	  paused * 1e3);
  return 0;
fail:
  inj_resume_all(&j);
  ljmprof_error("attach: process %d: %s", (int)t->pid, err);
  inj_close(&j);
  return -1;
}

/* After the detach: each stream finished (a VM's thread that was inside
** the wrapper finishes its own as it leaves), then its C functions
** named. */
static void name_streams(struct target *t, const struct attach_maps *am)
{
  char *line = t->streams, err[512];
  while (line && *line) {
    char *end = strchr(line, '\n');
    int n;
    if (end) *end = 0;
    for (int i = 0; i < 200 && ljm_out_being_written(line); i++) {
      struct timespec ts = { 0, 10 * 1000000 };
      nanosleep(&ts, NULL);
    }
    if (am && (n = attach_name_cfuncs(line, am, err, sizeof(err))) < 0)
      ljmprof_error("attach: %s: its C functions are not named: %s", line,
		    err);
    if (!end) break;
    line = end + 1;
  }
}

static int detach_one(struct target *t)
{
  char words[512];
  struct attach_maps *am;
  struct inj j;
  uintptr_t n;
  double t0, paused;
  if (kill(t->pid, 0) < 0 && errno == ESRCH) {
    /* Its VMs ended their streams as they closed; those it left open
    ** end where it did, cut. */
    fprintf(stderr, "ljmprof: attach: process %d ended while attached\n",
	    (int)t->pid);
    return 0;
  }
  am = attach_maps_read(t->pid);
  if (inj_open(&j, t->pid))
    goto fail;
  t0 = now();
  if (inj_stop_all(&j) || call(&j, t->stop, NULL, NULL, 0, 0, &n))
    goto fail;
  recorder_says(&j, t, words, sizeof(words));
  inj_resume_all(&j);
  paused = now() - t0;
  inj_close(&j);
  fprintf(stderr, "ljmprof: attach: process %d: %s, stopped for %.1f ms\n",
	  (int)t->pid, words, paused * 1e3);
  name_streams(t, am);
  attach_maps_free(am);
  return 0;
fail:
  inj_resume_all(&j);
  ljmprof_error("attach: process %d: %s", (int)t->pid, j.err);
  inj_close(&j);
  attach_maps_free(am);
  return -1;
}

int ljmprof_cmd_attach(int argc, char **argv)
{
  static const struct option opts[] = {
    {"output", required_argument, NULL, 'o'},
    {"duration", required_argument, NULL, 'd'},
    {"no-snapshot", no_argument, NULL, 'S'},
    {"sample", required_argument, NULL, 's'},
    {"stacks", optional_argument, NULL, 'K'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}
  };
  const char *out = "ljmprof.bin", *err;
  char tmpl[PATH_MAX], cwd[PATH_MAX];
  double duration = -1;
  struct target *t;
  int opt, n, bad = 0, live = 0;
  struct attach_opts o = { 1, 0, 0 };
  struct sigaction sa;
  while ((opt = getopt_long(argc, argv, ":o:d:h", opts, NULL)) != -1) {
    char *end;
    switch (opt) {
    case 'o':
      out = optarg;
      break;
    case 'd':
      duration = strtod(optarg, &end);
      if (*end || end == optarg || duration <= 0)
	return ljmprof_usage_error("attach", "--duration needs seconds "
				   "above 0, not", optarg);
      break;
    case 'S':
      o.snapshot = 0;
      break;
    case 'K':
      if (ljm_parse_depth(optarg ? optarg : "yes", &o.stacks) ||
	  o.stacks > LJM_STACK_DEPTH_MAX)
	return ljmprof_usage_error("attach", "--stacks needs a depth (1 to "
				   "1024) or yes or no, not", optarg);
      break;
    case 's':
      if (ljm_parse_sample(optarg, &o.sample))
	return ljmprof_usage_error("attach", "--sample needs a size (4K, "
				   "1M) or yes or no, not", optarg);
      break;
    case 'h':
      usage(stdout);
      return LJMPROF_EXIT_OK;
    default:
      return ljmprof_getopt_error("attach", opt, argv);
    }
  }
  if (optind >= argc)
    return ljmprof_usage_error("attach", "no PID to attach to", NULL);
  if ((err = ljm_template_check(out)))
    return ljmprof_usage_error("attach", err, out);
  if (!getcwd(cwd, sizeof(cwd)) ||
      ljm_template_absolute(tmpl, sizeof(tmpl), out, cwd))
    return ljmprof_usage_error("attach", "the output name is too long:",
			       out);
  n = argc - optind;
  if (!(t = calloc((size_t)n, sizeof(*t))))
    return LJMPROF_EXIT_ERROR;
  for (int i = 0; i < n; i++) {
    char *end;
    long pid = strtol(argv[optind + i], &end, 10);
    if (*end || pid <= 0 || pid > INT_MAX) {
      free(t);
      return ljmprof_usage_error("attach", "not a process id:",
				 argv[optind + i]);
    }
    t[i].pid = (pid_t)pid;
  }
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  for (int i = 0; i < n && !interrupted; i++) {
    if (attach_one(&t[i], tmpl, &o))
      bad = 1;
    else
      live++;
  }
  if (live) {
    double end = now() + duration;
    if (duration < 0)
      fprintf(stderr, "ljmprof: attach: recording; Ctrl-C to detach\n");
    while (!interrupted && (duration < 0 || now() < end)) {
      struct timespec ts = { 0, 20 * 1000000 };
      nanosleep(&ts, NULL);
    }
  }
  for (int i = 0; i < n; i++) {
    if (t[i].attached && detach_one(&t[i]))
      bad = 1;
    free(t[i].streams);
  }
  free(t);
  return bad ? LJMPROF_EXIT_ERROR : LJMPROF_EXIT_OK;
}
