/*
** ljmprof core: the environment variables and their strict parsing.
**
** No stdio, no malloc: this runs in the shim's constructor.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "ljm_config.h"
#include "lj_memprof_format.h"
#include "outpath.h"

#define KIB	((uint64_t)1024)
#define MIB	(KIB * 1024)
#define GIB	(MIB * 1024)

/* -- The table ----------------------------------------------------------- */

#define OFF(f)	offsetof(struct ljm_config, f)

const struct ljm_var ljm_vars[] = {
  { "LJMPROF_OUT", LJM_T_TEMPLATE, "", "a file name; %p, %n, %s and %% expand",
    "Turns the profiler on: every Lua VM the program creates is profiled "
    "into a file named after this template. %p is the process id, %n the "
    "VM's number in its process (1, 2, ... in creation order; in a forked "
    "child, the VMs it inherited count as they are first used there, so a "
    "daemon's child that leaves its parent's VMs alone starts again at "
    "1), %s the "
    "stream's number for that VM (a new stream begins at each restart), "
    "%% a percent sign. What the template leaves out is added before the "
    "extension when needed to keep names apart: .PID in a forked child, "
    ".vmN for the second and later VMs, .sN for the second and later "
    "streams of a VM. A relative name is taken from the folder the "
    "program started in. Unset or empty: the shim does nothing at all.",
    "app.bin", OFF(out), 0, 0, 0 },
  { "LJMPROF_BUFSIZE", LJM_T_SIZE, "1M", "4K to 1G",
    "Size of each VM's stream buffer. The stream is written in blocks of "
    "this size, so a program killed by a signal loses at most the last "
    "block. The default stays in the CPU's cache until it is written, "
    "which makes each write cheaper than with a larger one.",
    "8M", OFF(bufsize), 4 * KIB, GIB, 0 },
  { "LJMPROF_VERBOSE", LJM_T_BOOL, "no", "yes/no, on/off, true/false, 1/0",
    "Print the settings in effect when the first VM starts, and a line for "
    "each file opened and closed (and whether LJMPROF_MAXSIZE closed it), "
    "on standard error.",
    "yes", OFF(verbose), 0, 0, 0 },
  { "LJMPROF_SIGNAL", LJM_T_SIGNAL, "none", "USR1, USR2, RTMIN+N, RTMAX-N",
    "A signal that toggles profiling while the program runs: on receipt "
    "every VM of the process ends its stream cleanly at its next "
    "allocation; the next one starts new streams in new files. The "
    "handler is installed when the first VM is created and replaces the "
    "program's own for that signal. When the program later installs a "
    "handler of its own for it, or blocks it in every thread, the shim "
    "says so once: choose a signal the program leaves alone, such as a "
    "real-time one (RTMIN+3).",
    "USR2", OFF(signo), 0, 0, 0 },
  { "LJMPROF_START", LJM_T_BOOL, "yes", "yes/no, on/off, true/false, 1/0",
    "Whether profiling is on when the program starts. With no, VMs wait "
    "for the first LJMPROF_SIGNAL (which must then be set).",
    "no", OFF(start), 0, 0, 0 },
  { "LJMPROF_DELAY", LJM_T_DURATION, "0", "0 to 30 days; units ms, s (default), m, h",
    "Wait this long after the program started before profiling begins "
    "(skip a warm-up). A VM starts at its first allocation after the "
    "delay; a LJMPROF_SIGNAL received before then starts it at once.",
    "30s", OFF(delay_ms), 0, 30ULL * 24 * 3600 * 1000, 1 },
  { "LJMPROF_MAXSIZE", LJM_T_SIZE, "0", "0 (no cap), or 1M to 1T",
    "End a stream cleanly once it has reached this size, the symbol table "
    "written at start included (it may overshoot by up to one buffer). "
    "That VM then stays off until the next LJMPROF_SIGNAL.",
    "100M", OFF(maxsize), MIB, 1024 * GIB, 1 },
  { "LJMPROF_FLUSH", LJM_T_DURATION, "1s",
    "0 (only full buffers), or 100ms to 1h; units ms, s (default), m, h",
    "Write each VM's buffered events to its file at least this often, so "
    "that a process killed by SIGKILL or a crash loses no more than about "
    "this much of its profile. A timer asks the VMs, which write at their "
    "next allocation, on their own thread: a VM that does not allocate "
    "keeps its last events buffered until it does, and an idle process is "
    "not woken. 0: write only full buffers (and at the end).",
    "5s", OFF(flush_ms), 100, 3600ULL * 1000, 1 },
  { "LJMPROF_MANIFEST", LJM_T_PATH, "", "a file name",
    "Append the name of every stream file opened, one per line, to this "
    "file (ljmprof record uses it to list what was written). Created "
    "0600 when missing; never through a symbolic link.",
    "/tmp/files.txt", OFF(manifest), 0, 0, 0 },
  { "LJMPROF_DEBUG_DIR", LJM_T_PATH, "/usr/lib/debug",
    "folders, separated by colons",
    "Where to look for the debug files of stripped programs and libraries, "
    "by build ID (DIR/.build-id/xx/yyyy.debug, as gdb's "
    "debug-file-directory and the -dbgsym packages lay them out), to name "
    "C functions that the file's own symbols do not cover. A C function "
    "that no symbol of its object covers is named after the object and "
    "the offset from its load base (cjson.so+0x3a10).",
    "/usr/lib/debug:/opt/debug", OFF(debugdir), 0, 0, 0 },
  { "LJMPROF_STACKS", LJM_T_DEPTH, "no",
    "no, yes (32 frames), or 1 to 1024 frames",
    "Record the call stack of every allocation and reallocation, leaf "
    "first, up to this many frames (deeper frames are cut and marked): Lua "
    "functions with their lines and names, built-ins (string.rep), C "
    "functions, traces; an allocation from compiled code is charged to "
    "its Lua line, with the frames the trace inlined, where the writer is "
    "sure of it (x86-64). The stream is then ljmprof's profile extension, "
    "which other memprof tools do not read; without it, the established "
    "version 3. The default depth, 32, holds the whole stack of most "
    "programs, and the stack table stays small (each distinct path is "
    "written once). Frees keep their leaf location. The stream begins "
    "with a snapshot of every block the VM holds then (a stream started "
    "late, by LJMPROF_SIGNAL or LJMPROF_DELAY, knows what it frees; "
    "ljmprof report --at=start --by=kind prints its census).",
    "yes", OFF(stacks), 1, LJM_STACK_DEPTH_MAX, 1 },
  { "LJMPROF_SAMPLE", LJM_T_SAMPLE, "no",
    "no, yes (4M), or 1 to 1G bytes (K, M, G suffixes)",
    "Sample instead of recording every event, for a program that runs "
    "for hours: on average one allocation every this many bytes is "
    "recorded, with its call stack (at LJMPROF_STACKS frames, 32 when "
    "unset), and so are the reallocations and the free of every block "
    "sampled, so that live memory is known. The reports scale the "
    "samples back up and say that their figures are estimates. Every "
    "other allocation costs the program a subtraction and a compare. "
    "Flushes (LJMPROF_FLUSH) and LJMPROF_SIGNAL take effect at the next "
    "sample or free of a sampled block, where the events are. "
    "The default mean, 4M, keeps the file of a VM that allocates 2.5 GB "
    "a second under 1 MB a minute; a program that allocates less, or a "
    "closer look, can take a smaller one (Go's and tcmalloc's 512K).",
    "yes", OFF(sample), 1, GIB, 1 },
  { "LJMPROF_SEED", LJM_T_NUMBER, "0", "0 (from the clock and the process "
    "id), or 1 to 2^64-1",
    "The seed of LJMPROF_SAMPLE's random draws: the same seed and the same "
    "program give the same samples, for tests.",
    "42", OFF(seed), 0, UINT64_MAX, 1 },
  { "LJMPROF_SNAPSHOT_SIGNAL", LJM_T_SIGNAL, "none",
    "USR1, USR2, RTMIN+N, RTMAX-N; not LJMPROF_SIGNAL's",
    "A signal that makes every VM of the process whose stream has stacks "
    "(LJMPROF_STACKS, not sampled) write a snapshot of its heap into its "
    "stream at its next allocation, on its own thread, as the start "
    "snapshot is written: every block the VM holds then, with its kind. "
    "ljmprof report --at=snapshot:N --by=kind prints the census of the "
    "Nth snapshot of a stream (1 is the start's), ljmprof diff "
    "--from=snapshot:1 --to=snapshot:2 --by=kind what each kind gained in "
    "between. A VM that is not profiling then ignores it. The handler is "
    "installed with the first VM, as LJMPROF_SIGNAL's.",
    "RTMIN+4", OFF(snapsig), 0, 0, 0 },
  { "LJMPROF_GRAPH", LJM_T_BOOL, "no", "yes/no, on/off, true/false, 1/0",
    "With yes, the start snapshot and the snapshots that "
    "LJMPROF_SNAPSHOT_SIGNAL and LJMPROF_SNAPSHOT_AT_CLOSE ask for also "
    "write "
    "the heap graph: the references between the VM's objects, so that "
    "ljmprof report --retainers says what keeps a location's objects "
    "alive (the shortest reference chains from the roots) and what each "
    "retains. The VM is stopped while it is written, as for the census.",
    "yes", OFF(graph), 0, 0, 0 },
  { "LJMPROF_SNAPSHOT_AT_CLOSE", LJM_T_BOOL, "no",
    "yes/no, on/off, true/false, 1/0",
    "With yes, a VM that the program closes (lua_close) writes a last "
    "snapshot of its heap into its stream first (with stacks, not "
    "sampled; with the heap graph under LJMPROF_GRAPH=yes): what it held "
    "at the end, and with the graph what keeps it (module tables, globals, "
    "the registry; a function's locals are gone by then). A VM never "
    "closed (a program that exits, or is killed) writes none.",
    "yes", OFF(snapclose), 0, 0, 0 },
};

const size_t ljm_nvars = sizeof(ljm_vars) / sizeof(ljm_vars[0]);

/* -- Value parsers ------------------------------------------------------- */

/* Digits only, no sign, no space; *end gets the first non-digit. */
static int parse_digits(const char *s, uint64_t *out, const char **end)
{
  uint64_t v = 0;
  if (*s < '0' || *s > '9')
    return EINVAL;
  for (; *s >= '0' && *s <= '9'; s++) {
    unsigned d = (unsigned)(*s - '0');
    if (v > (UINT64_MAX - d) / 10)
      return ERANGE;
    v = v * 10 + d;
  }
  *out = v;
  *end = s;
  return 0;
}

static int scale(uint64_t v, uint64_t mul, uint64_t *out)
{
  if (mul != 0 && v > UINT64_MAX / mul)
    return ERANGE;
  *out = v * mul;
  return 0;
}

int ljm_parse_size(const char *s, uint64_t *out)
{
  uint64_t v, mul = 1;
  const char *end;
  int err = parse_digits(s, &v, &end);
  if (err)
    return err;
  switch (*end) {
  case '\0': break;
  case 'k': case 'K': mul = KIB; end++; break;
  case 'm': case 'M': mul = MIB; end++; break;
  case 'g': case 'G': mul = GIB; end++; break;
  default: return EINVAL;
  }
  if (*end != '\0')
    return EINVAL;
  return scale(v, mul, out);
}

int ljm_parse_duration(const char *s, uint64_t *ms)
{
  uint64_t v, mul;
  const char *end;
  int err = parse_digits(s, &v, &end);
  if (err)
    return err;
  if (*end == '\0' || strcmp(end, "s") == 0)
    mul = 1000;
  else if (strcmp(end, "ms") == 0)
    mul = 1;
  else if (strcmp(end, "m") == 0)
    mul = 60 * 1000;
  else if (strcmp(end, "h") == 0)
    mul = 3600 * 1000;
  else
    return EINVAL;
  return scale(v, mul, ms);
}

/* Digits (0 is off), or a yes/no word: yes is the default depth. */
int ljm_parse_depth(const char *s, uint64_t *out)
{
  const char *end;
  int b, err;
  if (*s >= '0' && *s <= '9') {
    err = parse_digits(s, out, &end);
    if (err)
      return err;
    return *end == '\0' ? 0 : EINVAL;
  }
  if (ljm_parse_bool(s, &b))
    return EINVAL;
  *out = b ? LJM_STACK_DEPTH_DEFAULT : 0;
  return 0;
}

/* A size (0 is off), or a yes/no word: yes is the default mean. */
int ljm_parse_sample(const char *s, uint64_t *out)
{
  int b;
  if (*s >= '0' && *s <= '9')
    return ljm_parse_size(s, out);
  if (ljm_parse_bool(s, &b))
    return EINVAL;
  *out = b ? LJM_SAMPLE_DEFAULT : 0;
  return 0;
}

int ljm_parse_bool(const char *s, int *out)
{
  static const char *const yes[] = { "1", "yes", "on", "true" };
  static const char *const no[] = { "0", "no", "off", "false" };
  size_t i;
  for (i = 0; i < 4; i++) {
    if (strcasecmp(s, yes[i]) == 0) { *out = 1; return 0; }
    if (strcasecmp(s, no[i]) == 0) { *out = 0; return 0; }
  }
  return EINVAL;
}

int ljm_parse_signal(const char *s, int *out)
{
  uint64_t v;
  const char *end;
  if (strncasecmp(s, "SIG", 3) == 0)
    s += 3;
  if (strcasecmp(s, "USR1") == 0) { *out = SIGUSR1; return 0; }
  if (strcasecmp(s, "USR2") == 0) { *out = SIGUSR2; return 0; }
  if (strncasecmp(s, "RTMIN", 5) == 0 || strncasecmp(s, "RTMAX", 5) == 0) {
    int max = (s[4] == 'x' || s[4] == 'X');
    int sig = max ? SIGRTMAX : SIGRTMIN;
    s += 5;
    if (*s != '\0') {
      if (*s != (max ? '-' : '+') || parse_digits(s + 1, &v, &end) || *end)
	return EINVAL;
      if (v > (uint64_t)(SIGRTMAX - SIGRTMIN))
	return EINVAL;
      sig = max ? sig - (int)v : sig + (int)v;
    }
    *out = sig;
    return 0;
  }
  return EINVAL;
}

const char *ljm_signal_name(int signo, char *buf, size_t n)
{
  if (signo == 0)
    snprintf(buf, n, "none");
  else if (signo == SIGUSR1)
    snprintf(buf, n, "USR1");
  else if (signo == SIGUSR2)
    snprintf(buf, n, "USR2");
  else if (signo >= SIGRTMIN && signo <= SIGRTMAX)
    snprintf(buf, n, "RTMIN+%d", signo - SIGRTMIN);
  else
    snprintf(buf, n, "%d", signo);
  return buf;
}

/* -- Loading ------------------------------------------------------------- */

void ljm_config_defaults(struct ljm_config *c)
{
  memset(c, 0, sizeof(*c));
  c->bufsize = 1 * MIB;
  c->start = 1;
  strcpy(c->debugdir, "/usr/lib/debug");
  c->flush_ms = 1000;
}

const char *ljm_parse_value(const struct ljm_var *v, const char *s,
			    struct ljm_config *c)
{
  char *field = (char *)c + v->off;
  uint64_t u = 0;
  int err, b;
  const char *why, *end;

  switch (v->type) {
  case LJM_T_TEMPLATE:
  case LJM_T_PATH:
    why = v->type == LJM_T_TEMPLATE ? ljm_template_check(s) : NULL;
    if (why)
      return why;
    if (strlen(s) >= LJM_PATH_MAX - 128)
      return "file name too long";
    strcpy(field, s);
    return NULL;
  case LJM_T_BOOL:
    if (ljm_parse_bool(s, &b))
      return "not a yes/no value (use yes, no, on, off, true, false, 1 or 0)";
    *(int *)field = b;
    return NULL;
  case LJM_T_SIGNAL:
    if (ljm_parse_signal(s, &b))
      return "not a signal this can use (use USR1, USR2, RTMIN+N or RTMAX-N)";
    *(int *)field = b;
    return NULL;
  case LJM_T_SIZE:
  case LJM_T_DURATION:
  case LJM_T_DEPTH:
  case LJM_T_SAMPLE:
  case LJM_T_NUMBER:
    err = v->type == LJM_T_SIZE ? ljm_parse_size(s, &u) :
	  v->type == LJM_T_DEPTH ? ljm_parse_depth(s, &u) :
	  v->type == LJM_T_SAMPLE ? ljm_parse_sample(s, &u) :
	  v->type == LJM_T_NUMBER ? (parse_digits(s, &u, &end) ? EINVAL :
				     *end ? EINVAL : 0) :
	  ljm_parse_duration(s, &u);
    if (err == EINVAL)
      return v->type == LJM_T_SIZE
	? "not a size (digits with an optional K, M or G suffix)"
	: v->type == LJM_T_DEPTH
	? "not a depth (a number of frames, yes or no)"
	: v->type == LJM_T_SAMPLE
	? "not a sampling mean (a size with an optional K, M or G suffix, "
	  "yes or no)"
	: v->type == LJM_T_NUMBER
	? "not a number (digits only)"
	: "not a duration (digits with an optional ms, s, m or h suffix)";
    if (err == ERANGE || ((u < v->min || u > v->max) && !(u == 0 && v->zero_ok)))
      return "out of range";
    *(uint64_t *)field = u;
    return NULL;
  }
  return "unknown type";
}

int ljm_config_load(struct ljm_config *c, ljm_getenv_fn get, void *ud,
		    char msgs[][LJM_MSG_MAX], int nmsgs)
{
  size_t i;
  int bad = 0;
  const char *out;

  ljm_config_defaults(c);
  out = get("LJMPROF_OUT", ud);
  if (out == NULL || *out == '\0')
    return 0;
  for (i = 0; i < ljm_nvars; i++) {
    const struct ljm_var *v = &ljm_vars[i];
    const char *s = get(v->name, ud), *why;
    if (s == NULL || *s == '\0')
      continue;
    why = ljm_parse_value(v, s, c);
    if (why) {
      if (bad < nmsgs) {
	if (strcmp(why, "out of range") == 0)
	  snprintf(msgs[bad], LJM_MSG_MAX, "%s=%.200s: out of range (%s); "
		   "profiling is off", v->name, s, v->range);
	else
	  snprintf(msgs[bad], LJM_MSG_MAX, "%s=%.200s: %s; profiling is off",
		   v->name, s, why);
      }
      bad++;
    }
  }
  if (bad == 0 && c->snapsig != 0 && c->snapsig == c->signo) {
    if (bad < nmsgs)
      snprintf(msgs[bad], LJM_MSG_MAX, "LJMPROF_SNAPSHOT_SIGNAL=%.200s: the "
	       "signal of LJMPROF_SIGNAL, which toggles profiling; profiling "
	       "is off", get("LJMPROF_SNAPSHOT_SIGNAL", ud));
    bad++;
  }
  if (bad == 0 && !c->start && c->signo == 0) {
    if (bad < nmsgs)
      snprintf(msgs[bad], LJM_MSG_MAX, "LJMPROF_START=%.200s: nothing would "
	       "ever start profiling without LJMPROF_SIGNAL; profiling is off",
	       get("LJMPROF_START", ud));
    bad++;
  }
  return bad;
}

const char *ljm_config_show(const struct ljm_var *v,
			    const struct ljm_config *c, char *buf, size_t n)
{
  const char *field = (const char *)c + v->off;
  switch (v->type) {
  case LJM_T_TEMPLATE:
  case LJM_T_PATH:
    snprintf(buf, n, "%s", field[0] ? field : "(none)");
    break;
  case LJM_T_BOOL:
    snprintf(buf, n, "%s", *(const int *)field ? "yes" : "no");
    break;
  case LJM_T_SIGNAL:
    ljm_signal_name(*(const int *)field, buf, n);
    break;
  case LJM_T_SIZE:
  case LJM_T_NUMBER:
    snprintf(buf, n, "%llu", (unsigned long long)*(const uint64_t *)field);
    break;
  case LJM_T_DURATION:
    snprintf(buf, n, "%llums", (unsigned long long)*(const uint64_t *)field);
    break;
  case LJM_T_DEPTH:
  case LJM_T_SAMPLE:
    if (*(const uint64_t *)field)
      snprintf(buf, n, "%llu", (unsigned long long)*(const uint64_t *)field);
    else
      snprintf(buf, n, "no");
    break;
  }
  return buf;
}
