/*
** runbench: the ljmprof benchmark driver.
**
**   runbench workloads [options]   the profiler's cost: every workload run
**                                  under each variant, interleaved
**   runbench parser [options]      the parser's speed on large profiles
**   runbench count FILE...         events in memprof streams, by kind
**   runbench snapshot FILE...      the snapshots in extended streams: blocks,
**                                  bytes, stream bytes and time of each
**
** Wall time is measured around fork/wait4 with CLOCK_MONOTONIC; peak RSS
** and CPU time come from the child's own rusage (wait4), so nothing the
** driver does is counted. Variants are interleaved run by run (A B C A B C
** ...), with the starting variant rotated each round, and every summary is
** a median and a minimum. See bench/README.md.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mp_reader.h"

extern char **environ;

#define MAXRUNS 101
#define MAXARGS 16
#define MAXENV 512

/* -- Small helpers ------------------------------------------------------- */

static void die(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fputs("runbench: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(2);
}

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
  double s[MAXRUNS];
  if (n <= 0) return NAN;
  memcpy(s, v, (size_t)n * sizeof(double));
  qsort(s, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static double minimum(const double *v, int n)
{
  double m = INFINITY;
  int i;
  for (i = 0; i < n; i++) if (v[i] < m) m = v[i];
  return m;
}

static void loadavg(char *buf, size_t len)
{
  FILE *f = fopen("/proc/loadavg", "r");
  double a = 0, b = 0, c = 0;
  if (f) {
    if (fscanf(f, "%lf %lf %lf", &a, &b, &c) != 3) a = b = c = -1;
    fclose(f);
  }
  snprintf(buf, len, "%.2f %.2f %.2f", a, b, c);
}

static char *fmtstr(const char *fmt, ...)
{
  char *p;
  va_list ap;
  va_start(ap, fmt);
  if (vasprintf(&p, fmt, ap) < 0) die("out of memory");
  va_end(ap);
  return p;
}

/* Sum of the sizes of the regular files in dir, and their number. */
static uint64_t dir_bytes(const char *dir, int *nfiles)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  uint64_t sum = 0;
  *nfiles = 0;
  if (!d) return 0;
  while ((e = readdir(d)) != NULL) {
    struct stat st;
    char *p;
    if (e->d_name[0] == '.') continue;
    p = fmtstr("%s/%s", dir, e->d_name);
    if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
      sum += (uint64_t)st.st_size;
      (*nfiles)++;
    }
    free(p);
  }
  closedir(d);
  return sum;
}

/* The first regular file in dir (caller frees), or NULL. */
static char *dir_first(const char *dir)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  char *r = NULL;
  if (!d) return NULL;
  while ((e = readdir(d)) != NULL)
    if (e->d_name[0] != '.') { r = fmtstr("%s/%s", dir, e->d_name); break; }
  closedir(d);
  return r;
}

/* Delete the streams in dir, and let the file system finish with them
** (freeing hundreds of MB of blocks, the journal) before the next run,
** which would otherwise pay for it whatever its variant. */
static void dir_clear(const char *dir)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  if (!d) return;
  while ((e = readdir(d)) != NULL) {
    char *p;
    if (e->d_name[0] == '.') continue;
    p = fmtstr("%s/%s", dir, e->d_name);
    unlink(p);
    free(p);
  }
  syncfs(dirfd(d));
  closedir(d);
}

/* -- Running a child ----------------------------------------------------- */

struct run {
  double wall, cpu, sys;
  long maxrss_kb;
  int status;
};

/*
** Run argv with the driver's environment minus LD_PRELOAD, LD_LIBRARY_PATH
** and LJMPROF_*, plus setenv (NAME=VALUE strings, NULL-terminated).
** stdout and stderr go to the given files (NULL: /dev/null).
*/
static struct run run_child(char *const argv[], char *const setenv_[],
			    const char *out, const char *err)
{
  char *envp[MAXENV];
  int n = 0, i;
  pid_t pid;
  struct rusage ru;
  struct run r;
  double t0;
  int st;
  for (i = 0; environ[i] && n < MAXENV - 16; i++) {
    const char *e = environ[i];
    if (strncmp(e, "LD_PRELOAD=", 11) == 0 ||
	strncmp(e, "LD_LIBRARY_PATH=", 16) == 0 ||
	strncmp(e, "LJMPROF_", 8) == 0)
      continue;
    envp[n++] = (char *)e;
  }
  for (i = 0; setenv_ && setenv_[i] && n < MAXENV - 1; i++)
    envp[n++] = setenv_[i];
  envp[n] = NULL;
  fflush(NULL);
  t0 = now();
  pid = fork();
  if (pid < 0) die("fork: %s", strerror(errno));
  if (pid == 0) {
    int fo = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int fe = open(err ? err : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fo < 0 || fe < 0) _exit(126);
    dup2(fo, 1);
    dup2(fe, 2);
    close(fo);
    close(fe);
    execve(argv[0], argv, envp);
    _exit(127);
  }
  if (wait4(pid, &st, 0, &ru) < 0) die("wait4: %s", strerror(errno));
  r.wall = now() - t0;
  r.cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
	  (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
  r.sys = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
  r.maxrss_kb = ru.ru_maxrss;
  r.status = st;
  return r;
}

static int run_ok(const struct run *r)
{
  return WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0;
}

static void print_file(const char *path, const char *prefix, int maxlines)
{
  FILE *f = fopen(path, "r");
  char line[4096];
  int n = 0;
  if (!f) return;
  while (fgets(line, sizeof line, f) && n++ < maxlines)
    printf("%s%s", prefix, line);
  fclose(f);
}

/* -- Counting the events of a memprof stream (doc/format.md) ------------- */

struct counts {
  uint64_t alloc, free_, realloc, sym_lfunc, sym_cfunc, sym_trace;
  uint64_t sym_node;		/* Stack nodes (the profile extension). */
  uint64_t symtab_entries;	/* In the symbol table section. */
  uint64_t sym_bytes;		/* Bytes of symbol events. */
  uint64_t bytes;
  int complete;			/* Epilogue seen. */
  const char *error;
};

/* Decoded with the stream library, as ljmprof reads them: a stream it
** would reject is counted as broken here too. */
static int count_stream(const uint8_t *buf, size_t len, struct counts *k)
{
  static char why[256];
  struct mp_reader *r = mp_reader_new_mem(buf, len);
  struct mp_event ev;
  enum mp_status st;

  memset(k, 0, sizeof *k);
  k->bytes = len;
  if (!r) { k->error = "out of memory"; return -1; }
  while ((st = mp_reader_next(r, &ev)) == MP_OK) {
    if (ev.in_symtab) {
      k->symtab_entries++;
      continue;
    }
    switch (ev.type) {
    case MP_EV_ALLOC: k->alloc++; break;
    case MP_EV_FREE: k->free_++; break;
    case MP_EV_REALLOC: k->realloc++; break;
    case MP_EV_SYM_LFUNC: k->sym_lfunc++; break;
    case MP_EV_SYM_CFUNC: k->sym_cfunc++; break;
    case MP_EV_SYM_TRACE: k->sym_trace++; break;
    case MP_EV_SYM_NODE: k->sym_node++; break;
    case MP_EV_SYM_INFO:
    case MP_EV_SYM_SITE: break;
    }
    if (mp_event_is_symbol(ev.type))
      k->sym_bytes += mp_reader_offset(r) - ev.offset;
  }
  k->complete = st == MP_END;
  if (st == MP_TRUNCATED)
    k->error = "truncated";
  if (st == MP_ERROR) {
    snprintf(why, sizeof why, "byte %llu: %s",
	     (unsigned long long)mp_reader_error_offset(r), mp_reader_error(r));
    k->error = why;
  }
  mp_reader_free(r);
  return st == MP_ERROR ? -1 : 0;
}

static int count_file(const char *path, struct counts *k, double *secs)
{
  int fd = open(path, O_RDONLY);
  struct stat st;
  void *m;
  double t0 = now();
  int r;
  memset(k, 0, sizeof *k);
  if (fd < 0 || fstat(fd, &st) < 0) {
    k->error = "cannot open";
    if (fd >= 0) close(fd);
    return -1;
  }
  if (st.st_size == 0) { close(fd); k->error = "empty"; return -1; }
  m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (m == MAP_FAILED) { k->error = "mmap failed"; return -1; }
  madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
  r = count_stream(m, (size_t)st.st_size, k);
  munmap(m, (size_t)st.st_size);
  if (secs) *secs = now() - t0;
  return r;
}

static uint64_t events_of(const struct counts *k)
{
  return k->alloc + k->free_ + k->realloc + k->sym_lfunc + k->sym_cfunc +
	 k->sym_trace;
}

static void print_counts(const char *prefix, const struct counts *k)
{
  uint64_t ev = events_of(k);
  printf("%s%" PRIu64 " bytes, %" PRIu64 " events (alloc %" PRIu64
	 ", free %" PRIu64 ", realloc %" PRIu64 ", symbol %" PRIu64
	 " = lfunc %" PRIu64 " + cfunc %" PRIu64 " + trace %" PRIu64
	 "), symtab %" PRIu64 " entries, %.2f bytes/event, %s%s%s\n",
	 prefix, k->bytes, ev, k->alloc, k->free_, k->realloc,
	 k->sym_lfunc + k->sym_cfunc + k->sym_trace, k->sym_lfunc,
	 k->sym_cfunc, k->sym_trace, k->symtab_entries,
	 ev ? (double)k->bytes / (double)ev : 0.0,
	 k->complete ? "complete" : "NOT complete",
	 k->error ? ": " : "", k->error ? k->error : "");
  if (k->sym_node)
    printf("%s%" PRIu64 " stack nodes (not among the events above)\n",
	   prefix, k->sym_node);
}

static int cmd_count(int argc, char **argv)
{
  int i, rc = 0;
  for (i = 1; i < argc; i++) {
    struct counts k;
    double secs = 0;
    char *pre = fmtstr("%s: ", argv[i]);
    if (count_file(argv[i], &k, &secs) < 0) rc = 1;
    print_counts(pre, &k);
    printf("%s%.3f s, %.0f MB/s\n", pre, secs, k.bytes / 1e6 / secs);
    free(pre);
  }
  return rc;
}

/*
** The snapshots of an extended stream (INFO SNAPSHOT 1 or 2 .. 0, doc/
** format.md): for each, its blocks and their bytes, the stream bytes
** between its two records, and its time: the TIME mark after it less
** the last one before it (the writer marks both, so this is the wall
** time the writer took, on its clock).
*/
static int cmd_snapshot(int argc, char **argv)
{
  int i, rc = 0;
  for (i = 1; i < argc; i++) {
    int fd = open(argv[i], O_RDONLY);
    struct stat sb;
    void *m;
    struct mp_reader *r;
    struct mp_event ev;
    enum mp_status st;
    uint64_t tlast = 0, tsnap = 0, blocks = 0, bytes = 0, off0 = 0;
    int in = 0, after = 0, n = 0;
    if (fd < 0 || fstat(fd, &sb) < 0 || sb.st_size == 0)
      die("%s: cannot open or empty", argv[i]);
    m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED) die("%s: mmap failed", argv[i]);
    if (!(r = mp_reader_new_mem(m, (size_t)sb.st_size))) die("out of memory");
    while ((st = mp_reader_next(r, &ev)) == MP_OK) {
      if (ev.type == MP_EV_SYM_INFO && ev.info_key == LJM_INFO_TIME) {
	if (after) {
	  printf("%s: snapshot %d: %" PRIu64 " blocks, %" PRIu64 " bytes, "
		 "%" PRIu64 " stream bytes, %.3f s (its time marks)\n",
		 argv[i], n, blocks, bytes, off0,
		 (double)(ev.info_value - tsnap) / 1e9);
	  after = 0;
	}
	tlast = ev.info_value;
      } else if (ev.type == MP_EV_SYM_INFO &&
		 ev.info_key == LJM_INFO_SNAPSHOT) {
	if (ev.info_value != 0 && !in) {
	  in = 1;
	  n++;
	  blocks = bytes = 0;
	  tsnap = tlast;
	  off0 = ev.offset;
	} else if (ev.info_value == 0 && in) {
	  in = 0;
	  after = 1;
	  off0 = ev.offset - off0;
	}
      } else if (in && ev.type == MP_EV_ALLOC) {
	blocks++;
	bytes += ev.new_size;
      }
    }
    if (st != MP_END) {
      printf("%s: not a complete stream (%s)\n", argv[i],
	     st == MP_ERROR ? mp_reader_error(r) : "truncated");
      rc = 1;
    } else if (!n) {
      printf("%s: no snapshot\n", argv[i]);
      rc = 1;
    }
    mp_reader_free(r);
    munmap(m, (size_t)sb.st_size);
  }
  return rc;
}

/* -- Options shared by the subcommands ---------------------------------- */

static struct {
  int runs;
  const char *luajit;	/* Reference: the system's (static) luajit. */
  const char *frontend;	/* The dynamic frontend, src/luajit. */
  const char *syslibdir;	/* Holds libluajit-5.1.so.2 -> the system's. */
  const char *shim;
  const char *cli;
  const char *wdir;	/* Workload scripts. */
  const char *tmp;
  const char *only;	/* Comma list of workload names, or NULL. */
  const char *variants;	/* Comma list of variant names, or NULL. */
  double scale;
  double parser_mb;	/* Size of the big profile. */
  int parser_runs;
  const char *tsv;	/* Append the summary there. */
  const char *gen;	/* tests/tools/gen_stream, for synthetic streams. */
  const char *synthetic;	/* "yes": also time a synthetic stream. */
  const char *valgrind;	/* Count the parser's instructions with it. */
  const char *ref_parser;	/* The reference parser: a command, FILE. */
  const char *stacks;	/* LJMPROF_STACKS of the stack stream row. */
  const char *browser;	/* Chromium, to open the HTML pages. */
} opt = {
  9, "/usr/bin/luajit", NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  1.0, 1024, 3, NULL, NULL, "auto", NULL, NULL, "32", NULL
};

static void parse_opts(int argc, char **argv)
{
  int i;
  for (i = 1; i < argc; i++) {
    const char *a = argv[i], *v = strchr(a, '=');
    size_t kl = v ? (size_t)(v - a) : strlen(a);
    if (!v) die("option %s needs =VALUE", a);
    v++;
#define OPT(name) (kl == strlen(name) && strncmp(a, name, kl) == 0)
    if (OPT("--runs")) opt.runs = atoi(v);
    else if (OPT("--luajit")) opt.luajit = v;
    else if (OPT("--frontend")) opt.frontend = v;
    else if (OPT("--syslibdir")) opt.syslibdir = v;
    else if (OPT("--shim")) opt.shim = v;
    else if (OPT("--cli")) opt.cli = v;
    else if (OPT("--workloads")) opt.wdir = v;
    else if (OPT("--tmp")) opt.tmp = v;
    else if (OPT("--only")) opt.only = v;
    else if (OPT("--variants")) opt.variants = v;
    else if (OPT("--scale")) opt.scale = atof(v);
    else if (OPT("--parser-mb")) opt.parser_mb = atof(v);
    else if (OPT("--parser-runs")) opt.parser_runs = atoi(v);
    else if (OPT("--tsv")) opt.tsv = v;
    else if (OPT("--gen")) opt.gen = v;
    else if (OPT("--synthetic")) opt.synthetic = v;
    else if (OPT("--valgrind")) opt.valgrind = *v ? v : NULL;
    else if (OPT("--ref-parser")) opt.ref_parser = *v ? v : NULL;
    else if (OPT("--browser")) opt.browser = *v ? v : NULL;
    else if (OPT("--stacks")) opt.stacks = v;
    else die("unknown option %s", a);
#undef OPT
  }
  if (opt.runs < 1 || opt.runs > MAXRUNS) die("--runs must be 1..%d", MAXRUNS);
  if (opt.parser_runs < 1 || opt.parser_runs > MAXRUNS) die("bad --parser-runs");
  if (!opt.tmp) die("--tmp=DIR is required");
}

static int in_list(const char *list, const char *name)
{
  size_t n = strlen(name);
  const char *p = list;
  if (!list) return 1;
  while (*p) {
    const char *q = strchr(p, ',');
    size_t l = q ? (size_t)(q - p) : strlen(p);
    if (l == n && strncmp(p, name, n) == 0) return 1;
    if (!q) break;
    p = q + 1;
  }
  return 0;
}

/* -- Workloads and variants --------------------------------------------- */

struct workload {
  const char *name, *script, *jopt, *what;
  double scale;
};

static const struct workload workloads[] = {
  { "strings", "strings.lua", NULL, "concat, format, table.concat, gsub", 1 },
  { "tables", "tables.lua", NULL, "small tables created and dropped", 1 },
  { "closures", "closures.lua", NULL, "closures, growing tables (realloc)", 1 },
  { "modules", "modules.lua", NULL, "250k generated chunks via load()", 1 },
  { "strings-joff", "strings.lua", "-joff", "strings, JIT off", 1 },
  { "modules-joff", "modules.lua", "-joff", "modules, JIT off", 1 },
};
#define NWORK (int)(sizeof workloads / sizeof workloads[0])

enum { P_FRONTEND, P_STATIC };

struct variant {
  const char *name, *what;
  int prog, syslib, preload, out;
};

/* The first one is the baseline of the ratios. */
static const struct variant variants[] = {
  { "sys", "frontend + system libluajit (LD_LIBRARY_PATH)", P_FRONTEND, 1, 0, 0 },
  { "inert", "sys + LD_PRELOAD shim, no LJMPROF_OUT", P_FRONTEND, 1, 1, 0 },
  { "prof", "inert + LJMPROF_OUT (profiling to a file)", P_FRONTEND, 1, 1, 1 },
  { "null", "inert + LJMPROF_OUT=/dev/null (recording without file I/O)",
    P_FRONTEND, 1, 1, 2 },
  { "patched", "frontend + patched libluajit (RUNPATH), no shim", P_FRONTEND, 0, 0, 0 },
  { "static", "/usr/bin/luajit (static, for reference)", P_STATIC, 0, 0, 0 },
  { "stacks", "prof + LJMPROF_STACKS=yes (call stacks, 32 frames)",
    P_FRONTEND, 1, 1, 3 },
  { "sampled", "prof + LJMPROF_SAMPLE=yes (one allocation every 4M on "
    "average, with its stack)", P_FRONTEND, 1, 1, 4 },
};
#define NVAR (int)(sizeof variants / sizeof variants[0])

struct wresult {
  const struct workload *w;
  int nvar, vidx[NVAR];
  double wall[NVAR][MAXRUNS], cpu[NVAR][MAXRUNS], sys[NVAR][MAXRUNS];
  double rss[NVAR][MAXRUNS];
  double sbytes[MAXRUNS];
  double stbytes[MAXRUNS];	/* Streams of the stacks variant. */
  double smbytes[MAXRUNS];	/* Streams of the sampled variant, */
  double smwall[MAXRUNS];	/* and the wall times of their runs. */
  int nruns[NVAR], nstream, nststream, nsmstream;
  double gc[NVAR][MAXRUNS], peak[NVAR][MAXRUNS];	/* Per run. */
  char checksum[NVAR][64];
  int checksum_bad;
  int failed;
  struct counts k;
  int have_counts;
  char load_before[64], load_after[64];
};

/* "name checksum=N gc_cycles=N peak_kb=N" */
static int parse_output(const char *path, char *sum, size_t sumlen,
			long *gc, long *peak)
{
  FILE *f = fopen(path, "r");
  char line[1024];
  int ok = 0;
  if (!f) return 0;
  while (fgets(line, sizeof line, f)) {
    char *c = strstr(line, "checksum="), *g = strstr(line, "gc_cycles="),
	 *p = strstr(line, "peak_kb=");
    if (c && g && p) {
      size_t n = strcspn(c + 9, " \n");
      if (n >= sumlen) n = sumlen - 1;
      memcpy(sum, c + 9, n);
      sum[n] = 0;
      *gc = atol(g + 10);
      *peak = atol(p + 8);
      ok = 1;
    }
  }
  fclose(f);
  return ok;
}

static void build_argv(const struct variant *v, const struct workload *w,
		       double scale, char **av)
{
  int n = 0;
  av[n++] = (char *)(v->prog == P_STATIC ? opt.luajit : opt.frontend);
  if (w->jopt) av[n++] = (char *)w->jopt;
  av[n++] = fmtstr("%s/%s", opt.wdir, w->script);
  av[n++] = fmtstr("%g", w->scale * scale);
  av[n] = NULL;
}

static void build_env(const struct variant *v, const char *outpath, char **ev)
{
  int n = 0;
  if (v->syslib) ev[n++] = fmtstr("LD_LIBRARY_PATH=%s", opt.syslibdir);
  if (v->preload) ev[n++] = fmtstr("LD_PRELOAD=%s", opt.shim);
  if (v->out == 1) ev[n++] = fmtstr("LJMPROF_OUT=%s", outpath);
  if (v->out == 2) ev[n++] = fmtstr("LJMPROF_OUT=/dev/null");
  if (v->out == 3) {
    ev[n++] = fmtstr("LJMPROF_OUT=%s", outpath);
    ev[n++] = fmtstr("LJMPROF_STACKS=yes");
  }
  if (v->out == 4) {
    ev[n++] = fmtstr("LJMPROF_OUT=%s", outpath);
    ev[n++] = fmtstr("LJMPROF_SAMPLE=yes");
  }
  ev[n] = NULL;
}

static void run_workload(struct wresult *R)
{
  const struct workload *w = R->w;
  char *outdir = fmtstr("%s/stream", opt.tmp);
  char *outpath = fmtstr("%s/%s.bin", outdir, w->name);
  char *sout = fmtstr("%s/stdout", opt.tmp), *serr = fmtstr("%s/stderr", opt.tmp);
  int round, j;
  mkdir(outdir, 0755);
  dir_clear(outdir);
  loadavg(R->load_before, sizeof R->load_before);
  printf("== %s: %s (%s %g, %s), %d interleaved runs per variant, "
	 "load before: %s\n", w->name, w->what, w->script, w->scale * opt.scale,
	 w->jopt ? "JIT off" : "JIT on", opt.runs, R->load_before);
  fflush(stdout);
  for (round = 0; round < opt.runs && !R->failed; round++) {
    for (j = 0; j < R->nvar; j++) {
      int vi = (round + j) % R->nvar;	/* Rotate the starting variant. */
      const struct variant *v = &variants[R->vidx[vi]];
      char *av[MAXARGS], *ev[8], sum[64];
      long gc = -1, peak = -1;
      struct run r;
      build_argv(v, w, opt.scale, av);
      build_env(v, outpath, ev);
      r = run_child(av, ev, sout, serr);
      if (!run_ok(&r) || !parse_output(sout, sum, sizeof sum, &gc, &peak)) {
	printf("!! %s/%s failed (status 0x%x); its output:\n", w->name,
	       v->name, r.status);
	print_file(sout, "   stdout: ", 10);
	print_file(serr, "   stderr: ", 20);
	R->failed = 1;
	break;
      }
      {
	struct stat st;
	if (stat(serr, &st) == 0 && st.st_size > 0 && round == 0) {
	  printf("   note: %s/%s wrote to stderr:\n", w->name, v->name);
	  print_file(serr, "   stderr: ", 5);
	}
      }
      R->wall[vi][R->nruns[vi]] = r.wall;
      R->cpu[vi][R->nruns[vi]] = r.cpu;
      R->sys[vi][R->nruns[vi]] = r.sys;
      R->rss[vi][R->nruns[vi]] = r.maxrss_kb / 1024.0;
      R->gc[vi][R->nruns[vi]] = (double)gc;
      R->peak[vi][R->nruns[vi]] = (double)peak;
      R->nruns[vi]++;
      if (!R->checksum[vi][0])
	snprintf(R->checksum[vi], sizeof R->checksum[vi], "%s", sum);
      else if (strcmp(sum, R->checksum[vi]) != 0)
	R->checksum_bad = 1;
      if (strcmp(sum, R->checksum[0]) != 0 && R->checksum[0][0])
	R->checksum_bad = 1;
      if (v->out == 1) {
	int nf;
	uint64_t b = dir_bytes(outdir, &nf);
	if (nf == 0 && round == 0) {
	  printf("!! %s/%s wrote no stream file\n", w->name, v->name);
	  print_file(serr, "   stderr: ", 20);
	}
	if (nf > 0) R->sbytes[R->nstream++] = (double)b;
	if (!R->have_counts && nf > 0) {
	  char *f = dir_first(outdir);
	  if (f) {
	    count_file(f, &R->k, NULL);
	    R->have_counts = 1;
	    if (nf > 1)
	      printf("   note: %d stream files; events counted in %s\n", nf, f);
	    free(f);
	  }
	}
	dir_clear(outdir);
      }
      if (v->out == 3) {  /* Stack streams: their bytes (the stream
			  ** library does not read the extension yet). */
	int nf;
	uint64_t b = dir_bytes(outdir, &nf);
	if (nf > 0) R->stbytes[R->nststream++] = (double)b;
	dir_clear(outdir);
      }
      if (v->out == 4) {  /* Sampled streams: bytes per minute of run. */
	int nf;
	uint64_t b = dir_bytes(outdir, &nf);
	if (nf > 0) {
	  R->smbytes[R->nsmstream] = (double)b;
	  R->smwall[R->nsmstream++] = r.wall;
	}
	dir_clear(outdir);
      }
      free(av[w->jopt ? 2 : 1]);
      free(av[w->jopt ? 3 : 2]);
      for (int e = 0; ev[e]; e++) free(ev[e]);
    }
  }
  loadavg(R->load_after, sizeof R->load_after);
  rmdir(outdir);
  unlink(sout);
  unlink(serr);
  free(outdir); free(outpath); free(sout); free(serr);
}

/* "median [min..max]" of integer samples, or "median" when all equal. */
static void range(char *buf, size_t len, const double *v, int n)
{
  double lo = minimum(v, n), hi = v[0];
  int i;
  for (i = 1; i < n; i++) if (v[i] > hi) hi = v[i];
  if (lo == hi) snprintf(buf, len, "%.0f", lo);
  else snprintf(buf, len, "%.0f [%.0f..%.0f]", median(v, n), lo, hi);
}

/* The spread of a variant's round-by-round ratios to sys (the rounds are
** interleaved, so round i of each ran side by side): their middle half,
** "p25..p75", or "-" when the rounds do not pair up. */
static void ratio_spread(char *buf, size_t len, const double *v, int nv,
			 const double *base, int nb)
{
  double r[MAXRUNS];
  int i, n = nv < nb ? nv : nb;
  if (n < 2) {
    snprintf(buf, len, "-");
    return;
  }
  for (i = 0; i < n; i++) r[i] = base[i] > 0 ? v[i] / base[i] : NAN;
  qsort(r, (size_t)n, sizeof(double), cmp_double);
  snprintf(buf, len, "%.3f..%.3f", r[(n - 1) / 4], r[(3 * (n - 1) + 3) / 4]);
}

static void print_workload(const struct wresult *R)
{
  int j;
  double bmed = median(R->wall[0], R->nruns[0]);
  double bmin = minimum(R->wall[0], R->nruns[0]);
  printf("   %-8s %9s %9s %8s %13s %8s %8s %8s %9s %16s %16s\n", "variant",
	 "median_s", "min_s", "med/sys", "rounds/sys", "min/sys", "cpu_s",
	 "of_sys_s", "maxrss_MB", "gc_cycles", "peak_kB");
  for (j = 0; j < R->nvar; j++) {
    const struct variant *v = &variants[R->vidx[j]];
    double med = median(R->wall[j], R->nruns[j]);
    double mn = minimum(R->wall[j], R->nruns[j]);
    char gc[48], pk[48], sp[32];
    if (R->nruns[j] == 0) continue;
    range(gc, sizeof gc, R->gc[j], R->nruns[j]);
    range(pk, sizeof pk, R->peak[j], R->nruns[j]);
    ratio_spread(sp, sizeof sp, R->wall[j], R->nruns[j], R->wall[0],
		 R->nruns[0]);
    printf("   %-8s %9.3f %9.3f %8.3f %13s %8.3f %8.3f %8.3f %9.1f %16s %16s\n",
	   v->name, med, mn, med / bmed, sp, mn / bmin,
	   median(R->cpu[j], R->nruns[j]), median(R->sys[j], R->nruns[j]),
	   median(R->rss[j], R->nruns[j]), gc, pk);
  }
  printf("   checksums %s", R->checksum_bad ? "DIFFER between runs or variants!" : "identical");
  printf("; load after: %s\n", R->load_after);
  if (R->have_counts) {
    printf("   stream (median of %d runs): %.0f bytes; first run: ", R->nstream,
	   median(R->sbytes, R->nstream));
    print_counts("", &R->k);
  }
  printf("\n");
  fflush(stdout);
}

static int vindex(const struct wresult *R, const char *name)
{
  int j;
  for (j = 0; j < R->nvar; j++)
    if (strcmp(variants[R->vidx[j]].name, name) == 0) return j;
  return -1;
}

static int cmd_workloads(int argc, char **argv)
{
  struct wresult *res;
  int i, j, n = 0, nvar = 0, vidx[NVAR];
  FILE *tsv = NULL;
  parse_opts(argc, argv);
  if (!opt.frontend || !opt.wdir) die("--frontend and --workloads are required");
  for (j = 0; j < NVAR; j++) {
    const struct variant *v = &variants[j];
    if (j > 0 && !in_list(opt.variants, v->name)) continue;
    if (v->syslib && !opt.syslibdir) continue;
    if ((v->preload || v->out) && !opt.shim) continue;
    if (v->prog == P_STATIC && access(opt.luajit, X_OK) != 0) continue;
    vidx[nvar++] = j;
  }
  if (!opt.syslibdir) die("--syslibdir is required (the baseline)");
  res = calloc(NWORK, sizeof *res);
  if (!res) die("out of memory");
  printf("variants (ratios are against the first):\n");
  for (j = 0; j < nvar; j++)
    printf("   %-8s %s\n", variants[vidx[j]].name, variants[vidx[j]].what);
  printf("\n");
  for (i = 0; i < NWORK; i++) {
    struct wresult *R;
    if (!in_list(opt.only, workloads[i].name)) continue;
    R = &res[n++];
    R->w = &workloads[i];
    R->nvar = nvar;
    memcpy(R->vidx, vidx, sizeof vidx);
    run_workload(R);
    print_workload(R);
  }
  /* Summary against the targets of issue 6. */
  printf("== summary: wall-time ratios of medians against sys [ratio of "
	 "minima]; prof CPU: ratio of median user+sys CPU times\n");
  printf("| workload | sys median s | inert | inert CPU | prof | prof vs inert | "
	 "prof CPU | /dev/null | bytes/event | events | MB written | GC cycles inert / prof | "
	 "peak kB inert / prof | load | stacks | stacks bytes/event | sampled | "
	 "sampled vs inert | sampled MB/min |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	 "---|---|---|\n");
  if (opt.tsv) tsv = fopen(opt.tsv, "a");
  for (i = 0; i < n; i++) {
    const struct wresult *R = &res[i];
    int s = 0, in = vindex(R, "inert"), pr = vindex(R, "prof");
    double smed = median(R->wall[s], R->nruns[s]);
    double smin = minimum(R->wall[s], R->nruns[s]);
    char ib[64] = "-", pb[64] = "-", pib[64] = "-", bpe[32] = "-",
	 evs[32] = "-", mb[32] = "-", gc[128] = "-", pk[128] = "-",
	 cb[32] = "-", icb[32] = "-", nb[64] = "-", stb[64] = "-",
	 stbpe[32] = "-", smb[64] = "-", smib[32] = "-", smmb[32] = "-";
    int nu = vindex(R, "null"), sk = vindex(R, "stacks");
    int sm = vindex(R, "sampled");
    if (R->failed) {
      printf("| %s | FAILED |\n", R->w->name);
      continue;
    }
    if (in >= 0)
      snprintf(ib, sizeof ib, "%.3f [%.3f]",
	       median(R->wall[in], R->nruns[in]) / smed,
	       minimum(R->wall[in], R->nruns[in]) / smin);
    if (pr >= 0) {
      snprintf(pb, sizeof pb, "%.3f [%.3f]",
	       median(R->wall[pr], R->nruns[pr]) / smed,
	       minimum(R->wall[pr], R->nruns[pr]) / smin);
      char a[48], b[48];
      int base = in >= 0 ? in : s;
      range(a, sizeof a, R->gc[base], R->nruns[base]);
      range(b, sizeof b, R->gc[pr], R->nruns[pr]);
      snprintf(gc, sizeof gc, "%s / %s", a, b);
      range(a, sizeof a, R->peak[base], R->nruns[base]);
      range(b, sizeof b, R->peak[pr], R->nruns[pr]);
      snprintf(pk, sizeof pk, "%s / %s", a, b);
    }
    if (nu >= 0)
      snprintf(nb, sizeof nb, "%.3f [%.3f]",
	       median(R->wall[nu], R->nruns[nu]) / smed,
	       minimum(R->wall[nu], R->nruns[nu]) / smin);
    if (in >= 0)
      snprintf(icb, sizeof icb, "%.3f", median(R->cpu[in], R->nruns[in]) /
	       median(R->cpu[s], R->nruns[s]));
    if (pr >= 0)
      snprintf(cb, sizeof cb, "%.3f", median(R->cpu[pr], R->nruns[pr]) /
	       median(R->cpu[s], R->nruns[s]));
    if (pr >= 0 && in >= 0)
      snprintf(pib, sizeof pib, "%.3f",
	       median(R->wall[pr], R->nruns[pr]) /
	       median(R->wall[in], R->nruns[in]));
    if (R->have_counts) {
      uint64_t ev = events_of(&R->k);
      snprintf(bpe, sizeof bpe, "%.2f", ev ? (double)R->k.bytes / ev : 0.0);
      snprintf(evs, sizeof evs, "%.2fM", ev / 1e6);
      snprintf(mb, sizeof mb, "%.0f", R->k.bytes / 1e6);
    }
    if (sk >= 0)
      snprintf(stb, sizeof stb, "%.3f [%.3f]",
	       median(R->wall[sk], R->nruns[sk]) / smed,
	       minimum(R->wall[sk], R->nruns[sk]) / smin);
    /* Per event of the prof stream: the same run of the same workload. */
    if (sk >= 0 && R->have_counts && R->nststream && events_of(&R->k))
      snprintf(stbpe, sizeof stbpe, "%.2f",
	       median(R->stbytes, R->nststream) / events_of(&R->k));
    if (sm >= 0) {
      snprintf(smb, sizeof smb, "%.3f [%.3f]",
	       median(R->wall[sm], R->nruns[sm]) / smed,
	       minimum(R->wall[sm], R->nruns[sm]) / smin);
      if (in >= 0)
	snprintf(smib, sizeof smib, "%.3f",
		 median(R->wall[sm], R->nruns[sm]) /
		 median(R->wall[in], R->nruns[in]));
    }
    if (sm >= 0 && R->nsmstream) {  /* Median of each run's rate. */
      double rate[MAXRUNS];
      for (int k = 0; k < R->nsmstream; k++)
	rate[k] = R->smbytes[k] / 1e6 * 60 / R->smwall[k];
      snprintf(smmb, sizeof smmb, "%.3f", median(rate, R->nsmstream));
    }
    printf("| %s | %.3f | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
	   R->w->name, smed, ib, icb, pb, pib, cb, nb, bpe, evs, mb, gc, pk,
	   R->load_after, stb, stbpe, smb, smib, smmb);
    if (tsv)
      fprintf(tsv, "%s\t%.4f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", R->w->name, smed,
	      ib, pb, bpe, evs, gc, pk, R->load_after);
  }
  if (tsv) fclose(tsv);
  {
    int bad = 0;
    for (i = 0; i < n; i++) bad |= res[i].failed;
    free(res);
    return bad;
  }
}

/* -- Parser benchmark ---------------------------------------------------- */

/* Profile workload w at the given scale into dir; returns the file (caller
** frees) or NULL. */
/* The profile of workload w at scale in dir, with extra (NAME=VALUE or
** NULL) in its environment; its path, or NULL. */
static char *make_profile_env(const struct workload *w, double scale,
			      const char *dir, double *secs, char *extra)
{
  const struct variant *v = &variants[2];	/* prof */
  char *outpath = fmtstr("%s/%s.bin", dir, w->name);
  char *serr = fmtstr("%s/stderr", opt.tmp);
  char *av[MAXARGS], *ev[8];
  struct run r;
  int n;
  mkdir(dir, 0755);
  dir_clear(dir);
  build_argv(v, w, scale, av);
  build_env(v, outpath, ev);
  for (n = 0; ev[n]; n++)
    ;
  ev[n] = extra;
  ev[n + 1] = NULL;
  r = run_child(av, ev, NULL, serr);
  *secs = r.wall;
  free(outpath);
  if (!run_ok(&r)) {
    printf("!! profiling %s at scale %g failed (status 0x%x)\n", w->name,
	   scale, r.status);
    print_file(serr, "   stderr: ", 20);
    free(serr);
    return NULL;
  }
  unlink(serr);
  free(serr);
  return dir_first(dir);
}

static char *make_profile(const struct workload *w, double scale,
			  const char *dir, double *secs)
{
  return make_profile_env(w, scale, dir, secs, NULL);
}

/* 1 when the stream at path has the profile extension's headers. */
static int has_stacks(const char *path)
{
  unsigned char h[6];
  FILE *f = fopen(path, "rb");
  size_t n = f ? fread(h, 1, sizeof h, f) : 0;
  if (f)
    fclose(f);
  return n == sizeof h && h[3] == LJM_FMT_VERSION_EXT &&
	 h[4] == LJM_EXT_PROFILE && h[5] == LJM_EXT_PROFILE_VERSION;
}

/* The median wall time of opt.parser_runs runs of av (output dropped);
** negative when one failed. */
static double median_run(char *const av[], int runs)
{
  double wall[MAXRUNS];
  int i;
  for (i = 0; i < runs; i++) {
    struct run r = run_child(av, NULL, NULL, NULL);
    if (!run_ok(&r))
      return -1;
    wall[i] = r.wall;
  }
  return median(wall, runs);
}

struct ptool {
  const char *name;
  char *av[MAXARGS];
  double wall[MAXRUNS], cpu[MAXRUNS], rss[MAXRUNS];
  int n, status;
};

/* Run av under valgrind with the options tool; the number on the line of
** its log that holds mark, after what. 0 when valgrind failed. */
static uint64_t valgrind_count(char *const tool[], char *const av[],
			       const char *mark, const char *what)
{
  char *cav[MAXARGS + 8];
  char *err = fmtstr("%s/valgrind.err", opt.tmp);
  char line[512];
  uint64_t n = 0;
  struct run r;
  FILE *f;
  int i = 0, j;
  cav[i++] = (char *)opt.valgrind;
  for (j = 0; tool[j]; j++)
    cav[i++] = tool[j];
  for (j = 0; av[j] && i < MAXARGS + 7; j++)
    cav[i++] = av[j];
  cav[i] = NULL;
  r = run_child(cav, NULL, NULL, err);
  if (run_ok(&r) && (f = fopen(err, "r"))) {
    while (fgets(line, sizeof line, f)) {
      const char *q = strstr(line, mark);
      if (!q || !(q = strstr(q + strlen(mark), what))) continue;
      for (q += strlen(what); *q; q++)
	if (*q >= '0' && *q <= '9') n = n * 10 + (uint64_t)(*q - '0');
    }
    fclose(f);
  }
  unlink(err);
  free(err);
  return n;
}

/*
** Instructions that av (ljmprof on a profile) executes, from cachegrind's
** "I refs" line: both threads of the decoding pipeline are counted, and
** the count, unlike wall time, does not move with the machine's load.
** 0 when cachegrind failed.
*/
static uint64_t count_instructions(char *const av[])
{
  static char *const tool[] = {
    "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
    NULL
  };
  /* "==PID== I   refs:      2,456,315,772" */
  return valgrind_count(tool, av, "== I ", "refs:");
}

/*
** The same for reading and aggregating alone (mp_load_file, and the merge
** and sort of the override pairs that the report asks for once read),
** from callgrind's "Collected" line: what the report formats cost (the
** ordering, naming and printing of every row) is left out.
*/
static uint64_t count_reading(char *const av[])
{
  static char *const tool[] = {
    "--tool=callgrind", "--toggle-collect=mp_load_file",
    "--toggle-collect=mp_profile_sort_overrides",
    "--callgrind-out-file=/dev/null", NULL
  };
  /* "==PID== Collected : 449587797" */
  return valgrind_count(tool, av, "== Collected", ":");
}

/* The whole of a file, NUL-terminated; NULL if it cannot be read. */
static char *slurp(const char *path)
{
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  size_t cap = 0, n = 0, got;
  if (!f) return NULL;
  do {
    if (cap - n < 65536) {
      char *nb = realloc(buf, cap = cap * 2 + 65536 + 1);
      if (!nb) { free(buf); fclose(f); return NULL; }
      buf = nb;
    }
    got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
  } while (got > 0);
  fclose(f);
  buf[n] = '\0';
  return buf;
}

/* The number after key=" in the page's DOM dump, -1 if none. */
static long dom_value(const char *dom, const char *key)
{
  const char *q = strstr(dom, key);
  return q ? strtol(q + strlen(key), NULL, 10) : -1;
}

/*
** Issue 20's page targets, on the page the last html run wrote: its size
** (under 5 MB), its cost over the text report (at most a second more),
** and, with a browser, the time its script took to draw it in headless
** Chromium (under a second), which the page itself writes into #check.
*/
static void page_bench(const char *page, double text_wall, double text_cpu,
		       double html_wall, double html_cpu)
{
  struct stat st;
  char *dump, *profile, *url, *buf;
  long ms[3];
  int i, n = 0;
  if (stat(page, &st) != 0) {
    printf("   html page: not written\n");
    return;
  }
  printf("   html page: %.2f MB (target: under 5), written in %.3f s "
	 "(cpu %.3f) against the text report's %.3f s (cpu %.3f): "
	 "%+.3f s (target: at most +1)\n", st.st_size / 1e6, html_wall,
	 html_cpu, text_wall, text_cpu, html_wall - text_wall);
  if (!opt.browser) {
    printf("   html page: not opened (no chromium; Debian: chromium)\n");
    return;
  }
  dump = fmtstr("%s/page.dom", opt.tmp);
  profile = fmtstr("--user-data-dir=%s/chromium", opt.tmp);
  url = fmtstr("file://%s#at=peak", page);
  for (i = 0; i < 3; i++) {
    char *av[] = {
      (char *)opt.browser, "--headless", "--disable-gpu", "--no-sandbox",
      "--disable-background-networking", "--disable-component-update",
      "--disable-sync", "--no-first-run", profile, "--window-size=1200,900",
      "--virtual-time-budget=5000", "--dump-dom", url, NULL
    };
    struct run r = run_child(av, NULL, dump, "/dev/null");
    buf = run_ok(&r) ? slurp(dump) : NULL;
    if (buf && dom_value(buf, "data-done=\"") == 1)
      ms[n++] = dom_value(buf, "data-ms=\"");
    free(buf);
  }
  unlink(dump);
  {
    char *rm[] = { "/bin/rm", "-rf", profile + strlen("--user-data-dir="),
		   NULL };
    run_child(rm, NULL, NULL, NULL);
  }
  if (n == 3)
    printf("   html page: drawn in headless Chromium in %ld, %ld, %ld ms "
	   "(target: under 1000)\n", ms[0], ms[1], ms[2]);
  else
    printf("   html page: !! the page's script finished in only %d of 3 "
	   "openings\n", n);
  free(dump);
  free(profile);
  free(url);
}

/*
** The reader's figures on a profile (report's instructions an event,
** ipe, or below 0 when not counted; its MB/s at its median wall time
** secs) beside the reference parser's time on the same file, which it
** takes once (minutes on a large profile). A stream with stacks has no
** reference time: the reference parser does not read the extension
** (stacks_bench compares with the same workload's version-3 stream).
*/
static void reader_vs_reference(const char *file, double ipe,
				uint64_t bytes, double secs)
{
  char ipes[32];
  char *ref[3];
  double t_ref;

  if (ipe >= 0)
    snprintf(ipes, sizeof ipes, "%.1f", ipe);
  else
    snprintf(ipes, sizeof ipes, "-");
  printf("   reader: %s instructions an event%s, %.1f MB/s (report, "
	 "median %.3f s)", ipes, ipe >= 0 ? " (cachegrind)" : " (no valgrind)",
	 bytes / 1e6 / (secs > 0 ? secs : 1e-9), secs);
  if (!opt.ref_parser) {
    printf("; reference parser: left out (no --ref-parser)\n");
    return;
  }
  if (has_stacks(file)) {
    printf("; reference parser: left out (a stream with stacks)\n");
    return;
  }
  ref[0] = (char *)opt.ref_parser;
  ref[1] = (char *)file;
  ref[2] = NULL;
  fflush(stdout);
  t_ref = median_run(ref, 1);
  if (t_ref < 0) {
    printf("; the reference parser failed\n");
    return;
  }
  printf("; reference parser %.3f s: %.1fx\n", t_ref,
	 t_ref / (secs > 0 ? secs : 1e-9));
}

static void parser_bench(const char *label, const char *file, int grouped)
{
  struct counts k;
  double csecs = 0;
  struct ptool t[8];
  int nt = 0, round, j;
  char la[64], lb[64];
  char *page = fmtstr("%s/page.html", opt.tmp);
  uint64_t ev;
  double report_ipe = -1;	/* report's instructions an event. */
  /* MB/s and Mevents/s are on the median wall time; MB/cpu_s on the
  ** median user+sys time, which a loaded machine disturbs less. */
  memset(t, 0, sizeof t);
  count_file(file, &k, &csecs);
  ev = events_of(&k);
  loadavg(lb, sizeof lb);
  printf("== parser: %s: %s (%.1f MB)\n", label, file, k.bytes / 1e6);
  print_counts("   ", &k);
  t[nt].name = "cat >/dev/null";
  t[nt].av[0] = "/bin/cat"; t[nt].av[1] = (char *)file; nt++;
  t[nt].name = "report";
  t[nt].av[0] = (char *)opt.cli; t[nt].av[1] = "report";
  t[nt].av[2] = (char *)file; nt++;
  t[nt].name = "report --leak-only";
  t[nt].av[0] = (char *)opt.cli; t[nt].av[1] = "report";
  t[nt].av[2] = "--leak-only"; t[nt].av[3] = (char *)file; nt++;
  t[nt].name = "stat";
  t[nt].av[0] = (char *)opt.cli; t[nt].av[1] = "stat";
  t[nt].av[2] = (char *)file; nt++;
  /* Issue 20: the page costs at most the text report plus a second. */
  t[nt].name = "report --format=html";
  t[nt].av[0] = (char *)opt.cli; t[nt].av[1] = "report";
  t[nt].av[2] = "--format=html"; t[nt].av[3] = "-o"; t[nt].av[4] = page;
  t[nt].av[5] = (char *)file; nt++;
  if (grouped) {
    /* The many-chunk profiles: the other outputs' memory matters too. */
    t[nt].name = "report --group=function";
    t[nt].av[0] = (char *)opt.cli; t[nt].av[1] = "report";
    t[nt].av[2] = "--group=function"; t[nt].av[3] = (char *)file; nt++;
    t[nt].name = "report --format=json";
    t[nt].av[0] = (char *)opt.cli; t[nt].av[1] = "report";
    t[nt].av[2] = "--format=json"; t[nt].av[3] = (char *)file; nt++;
    t[nt].name = "report --format=folded";
    t[nt].av[0] = (char *)opt.cli; t[nt].av[1] = "report";
    t[nt].av[2] = "--format=folded"; t[nt].av[3] = (char *)file; nt++;
  }
  {
    char *o = fmtstr("%s/stat.out", opt.tmp);
    struct run r = run_child(t[3].av, NULL, o, NULL);
    printf("   ljmprof stat (exit %d):\n", WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1);
    print_file(o, "      ", 40);
    unlink(o);
    free(o);
  }
  printf("   load before: %s\n", lb);
  for (round = 0; round < opt.parser_runs; round++)
    for (j = 0; j < nt; j++) {
      struct ptool *p = &t[(round + j) % nt];
      struct run r = run_child(p->av, NULL, NULL, NULL);
      p->wall[p->n] = r.wall;
      p->cpu[p->n] = r.cpu;
      p->rss[p->n] = r.maxrss_kb / 1024.0;
      p->n++;
      if (!run_ok(&r)) p->status = r.status;
    }
  loadavg(la, sizeof la);
  printf("   %-24s %9s %9s %9s %9s %10s %9s %10s %8s %9s\n", "tool",
	 "median_s", "min_s", "cpu_s", "MB/s", "Mevents/s", "MB/cpu_s",
	 "maxrss_MB", "rss/file", "vs cat");
  {
    double catmed = median(t[0].wall, t[0].n);
    for (j = 0; j < nt; j++) {
      double med = median(t[j].wall, t[j].n), mn = minimum(t[j].wall, t[j].n);
      double cpu = median(t[j].cpu, t[j].n);
      double rss = median(t[j].rss, t[j].n);
      printf("   %-24s %9.3f %9.3f %9.3f %9.1f %10.2f %9.1f %10.1f %8.2f %9.2f%s\n",
	     t[j].name, med, mn, cpu, k.bytes / 1e6 / med, ev / 1e6 / med,
	     k.bytes / 1e6 / cpu, rss, rss * 1048576.0 / (double)k.bytes,
	     med / catmed, t[j].status ? "  (non-zero exit!)" : "");
    }
    printf("   %-24s %9.3f %9s %9s %9.1f %10.2f %9s %10s %8s   (runbench's own minimal event counter, mmap)\n",
	   "count (floor)", csecs, "-", "-", k.bytes / 1e6 / csecs, ev / 1e6 / csecs, "-", "-", "-");
  }
  printf("   load after: %s\n", la);
  page_bench(page, median(t[1].wall, t[1].n), median(t[1].cpu, t[1].n),
	     median(t[4].wall, t[4].n), median(t[4].cpu, t[4].n));
  unlink(page);
  free(page);
  if (opt.valgrind) {
    /* Per memory event, as `ljmprof stat` counts them. */
    uint64_t mem = k.alloc + k.free_ + k.realloc;
    for (j = 1; j <= 2; j++) {
      uint64_t n = count_instructions(t[j].av);
      uint64_t rd = count_reading(t[j].av);
      if (n && mem && j == 1)
	report_ipe = (double)n / (double)mem;
      if (n && mem)
	printf("   %-24s %15" PRIu64 " instructions, %.1f per event "
	       "(cachegrind)\n", t[j].name, n, (double)n / (double)mem);
      else
	printf("   %-24s cachegrind gave no count\n", t[j].name);
      if (rd && mem)
	printf("   %-24s %15" PRIu64 " of them reading and aggregating, "
	       "%.1f per event (callgrind)\n", "", rd, (double)rd / (double)mem);
      else
	printf("   %-24s callgrind gave no count\n", "");
    }
  }
  reader_vs_reference(file, report_ipe, k.bytes, median(t[1].wall, t[1].n));
  printf("\n");
  fflush(stdout);
}

/* A synthetic stream of about opt.parser_mb from gen_stream. */
static int synthetic_bench(void)
{
  char *f = fmtstr("%s/synthetic.bin", opt.tmp);
  uint64_t events = (uint64_t)(opt.parser_mb * 1e6 / 14.25);
  char *n = fmtstr("%" PRIu64, events);
  char *av[] = { (char *)opt.gen, "bench", n, NULL };
  struct run r;
  printf("== parser: a synthetic stream of %s events from %s\n", n, opt.gen);
  r = run_child(av, NULL, f, NULL);
  if (!run_ok(&r)) {
    printf("!! gen_stream failed (status 0x%x)\n", r.status);
    unlink(f);
    return 1;
  }
  parser_bench("synthetic (gen_stream bench)", f, 0);
  unlink(f);
  free(f);
  free(n);
  return 0;
}

/*
** Issue 19's reader target: the stack stream of a workload (LJMPROF_STACKS)
** read by `ljmprof report` at least 30 times faster than the reference
** parser reads the version-3 stream v3 of the same workload and scale.
** Until the shim writes stacks, the row says so and is left out. -1 when
** a command failed.
*/
static int stacks_bench(const struct workload *w, const char *v3)
{
  char *dir = fmtstr("%s/stacks", opt.tmp);
  char *env = fmtstr("LJMPROF_STACKS=%s", opt.stacks);
  char *f, *ours[4], *ref[3];
  double secs, t_ours, t_ref;
  int rc = 0;

  f = make_profile_env(w, 1.0, dir, &secs, env);
  if (!f) {
    rc = -1;
    goto out;
  }
  if (!has_stacks(f)) {
    printf("== parser: stacks: row left out: with %s the shim wrote a "
	   "stream without the profile extension (no stacks in this build "
	   "yet)\n\n", env);
    goto out;
  }
  parser_bench("tables with stacks", f, 0);
  ours[0] = (char *)opt.cli;
  ours[1] = "report";
  ours[2] = f;
  ours[3] = NULL;
  t_ours = median_run(ours, opt.parser_runs);
  if (t_ours < 0) {
    printf("!! ljmprof report failed on the stack stream\n");
    rc = -1;
    goto out;
  }
  if (!opt.ref_parser) {
    printf("   reference parser: left out (no --ref-parser; bench/run gives "
	   "it from ../shared/reference)\n\n");
    goto out;
  }
  ref[0] = (char *)opt.ref_parser;
  ref[1] = (char *)v3;
  ref[2] = NULL;
  t_ref = median_run(ref, 1);	/* Minutes on a large profile: once. */
  if (t_ref < 0) {
    printf("!! the reference parser failed on %s\n", v3);
    rc = -1;
    goto out;
  }
  printf("   stacks, %s at scale 1: ljmprof report on the stack stream "
	 "%.3f s, the reference parser on the version-3 stream %.3f s: "
	 "%.1fx (target: at least 30x)\n\n", w->name, t_ours, t_ref,
	 t_ref / (t_ours > 0 ? t_ours : 1e-9));
out:
  fflush(stdout);
  if (f)
    unlink(f);
  free(f);
  dir_clear(dir);
  rmdir(dir);
  free(dir);
  free(env);
  return rc;
}

static int cmd_parser(int argc, char **argv)
{
  const struct workload *big = &workloads[1];	/* tables: small live heap */
  const struct workload *mods = &workloads[3];	/* modules: many chunks */
  char *dir;
  char *f;
  double secs;
  struct counts k;
  double scale;
  parse_opts(argc, argv);
  if (!opt.cli || !opt.shim || !opt.frontend || !opt.wdir || !opt.syslibdir)
    die("--cli, --shim, --frontend, --workloads and --syslibdir are required");
  dir = fmtstr("%s/parser", opt.tmp);
  /* Measure the stream rate at scale 1, then size the big profile. */
  if (opt.gen && strcmp(opt.synthetic, "yes") == 0 && synthetic_bench())
    return 1;
  /* The strings workload first: the profile of issue 13's target. */
  f = make_profile(&workloads[0], 1.0, dir, &secs);
  if (!f) {
    printf("!! the shim wrote no profile: no workload profile to parse\n");
    if (opt.gen && strcmp(opt.synthetic, "auto") == 0) return synthetic_bench();
    return 1;
  }
  parser_bench("strings (scale 1)", f, 0);
  unlink(f);
  free(f);
  f = make_profile(big, 1.0, dir, &secs);
  if (!f) {
    printf("!! the shim wrote no profile: no workload profile to parse\n");
    if (opt.gen && strcmp(opt.synthetic, "auto") == 0) return synthetic_bench();
    return 1;
  }
  count_file(f, &k, NULL);
  if (stacks_bench(big, f) < 0) {
    free(f);
    return 1;
  }
  free(f);
  scale = ceil(opt.parser_mb * 1e6 / (double)k.bytes * 1.05 * 10) / 10;
  printf("== parser: profiling %s at scale %g for a %.0f MB profile "
	 "(scale 1 gave %.1f MB in %.2f s)\n", big->name, scale, opt.parser_mb,
	 k.bytes / 1e6, secs);
  fflush(stdout);
  f = make_profile(big, scale, dir, &secs);
  if (!f) return 1;
  printf("   written in %.1f s\n", secs);
  parser_bench("small live heap, few symbols", f, 0);
  unlink(f);
  free(f);
  /* 30,000 chunk names (the target's "tens of thousands"), then the
  ** whole modules workload: 250,000. */
  f = make_profile(mods, 0.12, dir, &secs);
  if (!f) return 1;
  parser_bench("module loading, 30,000 chunk names", f, 1);
  unlink(f);
  free(f);
  f = make_profile(mods, 1.0, dir, &secs);
  if (!f) return 1;
  parser_bench("module loading, 250,000 chunk names", f, 1);
  unlink(f);
  free(f);
  dir_clear(dir);
  rmdir(dir);
  free(dir);
  return 0;
}

int main(int argc, char **argv)
{
  if (argc >= 2 && strcmp(argv[1], "workloads") == 0)
    return cmd_workloads(argc - 1, argv + 1);
  if (argc >= 2 && strcmp(argv[1], "parser") == 0)
    return cmd_parser(argc - 1, argv + 1);
  if (argc >= 2 && strcmp(argv[1], "count") == 0)
    return cmd_count(argc - 1, argv + 1);
  if (argc >= 2 && strcmp(argv[1], "snapshot") == 0)
    return cmd_snapshot(argc - 1, argv + 1);
  fprintf(stderr,
	  "usage: runbench workloads|parser [--OPTION=VALUE...]\n"
	  "       runbench count FILE...\n"
	  "       runbench snapshot FILE...\n"
	  "see bench/README.md\n");
  return 2;
}
