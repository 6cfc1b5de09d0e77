/*
** Unit tests of the core that the shim and `ljmprof record` share
** (common/: the environment table and its parsing, file names, the
** writer, the ELF questions) and of the shim's lifecycle decisions
** (preload/lifecycle.c), linked directly (no preloading).
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ljm_config.h"
#include "elfinfo.h"
#include "lifecycle.h"
#include "msg.h"
#include "outpath.h"
#include "writer.h"

/* -- A fake environment ---------------------------------------------------- */

struct fakeenv {
  const char *names[LJM_NVARS_MAX];
  const char *values[LJM_NVARS_MAX];
  int n;
};

static const char *fake_get(const char *name, void *ud)
{
  struct fakeenv *e = ud;
  int i;
  for (i = 0; i < e->n; i++)
    if (strcmp(e->names[i], name) == 0)
      return e->values[i];
  return NULL;
}

static void fake_set(struct fakeenv *e, const char *name, const char *value)
{
  ck_assert_int_lt(e->n, LJM_NVARS_MAX);
  e->names[e->n] = name;
  e->values[e->n] = value;
  e->n++;
}

static int load(struct fakeenv *e, struct ljm_config *c, char msgs[][LJM_MSG_MAX])
{
  return ljm_config_load(c, fake_get, e, msgs, LJM_NVARS_MAX);
}

/* Values that no variable of a type accepts. */
static const char *const bad_values[][10] = {
  [LJM_T_TEMPLATE] = { "x.%q", "dir/", "%", "a%zb", NULL },
  [LJM_T_PATH] = { NULL },
  [LJM_T_SIZE] = { "12q", "-1", " 4096", "4096 ", "0x1000", "1.5M", "4KB",
		   "99999999999999999999999", NULL },
  [LJM_T_BOOL] = { "2", "yess", "y", "enable", "-1", NULL },
  [LJM_T_SIGNAL] = { "KILL", "SIGSTOP", "9", "USR3", "RTMIN+999", "RTMIN-1",
		     "SEGV", NULL },
  [LJM_T_DURATION] = { "1.5", "10x", "-3", "ms", "5 s",
		       "99999999999999999999", "31d", NULL },
  [LJM_T_DEPTH] = { "1025", "-1", "8 ", "0x10", "deep", "2.5", "32K",
		    "99999999999999999999", NULL },
  [LJM_T_SAMPLE] = { "2G", "-1", "512K ", "0x10", "often", "1.5M", "4KB",
		     "99999999999999999999", NULL },
  [LJM_T_NUMBER] = { "-1", "1K", "0x10", "seed", " 7",
		     "99999999999999999999", NULL },
};

/* -- The table ------------------------------------------------------------ */

START_TEST(table_is_complete)
{
  size_t i, j;
  ck_assert_uint_le(ljm_nvars, LJM_NVARS_MAX);
  for (i = 0; i < ljm_nvars; i++) {
    const struct ljm_var *v = &ljm_vars[i];
    ck_assert_str_eq(v->name, v->name);
    ck_assert_int_eq(strncmp(v->name, "LJMPROF_", 8), 0);
    ck_assert_ptr_nonnull(v->meaning);
    ck_assert_uint_gt(strlen(v->meaning), 20);
    ck_assert_ptr_nonnull(v->range);
    ck_assert_ptr_nonnull(v->example);
    for (j = 0; j < i; j++)
      ck_assert_str_ne(v->name, ljm_vars[j].name);
  }
  ck_assert_str_eq(ljm_vars[0].name, "LJMPROF_OUT");
}
END_TEST

/* Every variable accepts its documented example. */
START_TEST(examples_parse)
{
  size_t i;
  for (i = 0; i < ljm_nvars; i++) {
    struct fakeenv e = { {0}, {0}, 0 };
    struct ljm_config c;
    char msgs[LJM_NVARS_MAX][LJM_MSG_MAX];
    fake_set(&e, "LJMPROF_OUT", "x.bin");
    fake_set(&e, "LJMPROF_SIGNAL", "USR2");	/* START=no needs it. */
    fake_set(&e, ljm_vars[i].name, ljm_vars[i].example);
    ck_assert_msg(load(&e, &c, msgs) == 0, "%s=%s: %s", ljm_vars[i].name,
		  ljm_vars[i].example, msgs[0]);
  }
}
END_TEST

/* The documented defaults are the ones in effect. */
START_TEST(defaults_match_the_table)
{
  size_t i;
  struct ljm_config d, c;
  ljm_config_defaults(&d);
  for (i = 0; i < ljm_nvars; i++) {
    const struct ljm_var *v = &ljm_vars[i];
    if (v->def[0] == '\0' || strcmp(v->def, "none") == 0)
      continue;
    ljm_config_defaults(&c);
    ck_assert_msg(ljm_parse_value(v, v->def, &c) == NULL, "%s", v->name);
    ck_assert_msg(memcmp(&c, &d, sizeof(c)) == 0, "default of %s", v->name);
  }
  ck_assert_int_eq(d.signo, 0);
  ck_assert_str_eq(d.out, "");
}
END_TEST

/* Every invalid value of every variable: one message, in the format
** "NAME=value: why; profiling is off". */
START_TEST(bad_values_are_reported)
{
  size_t i, j, tried = 0;
  for (i = 0; i < ljm_nvars; i++) {
    const struct ljm_var *v = &ljm_vars[i];
    for (j = 0; bad_values[v->type][j]; j++) {
      struct fakeenv e = { {0}, {0}, 0 };
      struct ljm_config c;
      char msgs[LJM_NVARS_MAX][LJM_MSG_MAX], head[128];
      const char *s = bad_values[v->type][j];
      if (strcmp(v->name, "LJMPROF_OUT") != 0)
	fake_set(&e, "LJMPROF_OUT", "x.bin");
      fake_set(&e, v->name, s);
      ck_assert_msg(load(&e, &c, msgs) == 1, "%s=%s accepted", v->name, s);
      snprintf(head, sizeof(head), "%s=%s: ", v->name, s);
      ck_assert_msg(strncmp(msgs[0], head, strlen(head)) == 0, "%s", msgs[0]);
      ck_assert_msg(strstr(msgs[0], "; profiling is off") != NULL, "%s",
		    msgs[0]);
      ck_assert_ptr_null(strchr(msgs[0], '\n'));
      tried++;
    }
  }
  ck_assert_uint_gt(tried, 30);
}
END_TEST

/* Numbers just outside each documented range are refused, the bounds
** accepted. */
START_TEST(ranges)
{
  size_t i;
  for (i = 0; i < ljm_nvars; i++) {
    const struct ljm_var *v = &ljm_vars[i];
    struct ljm_config c;
    char s[64];
    if (v->type != LJM_T_SIZE && v->type != LJM_T_DURATION &&
	v->type != LJM_T_DEPTH && v->type != LJM_T_SAMPLE)
      continue;
    ljm_config_defaults(&c);
    snprintf(s, sizeof(s), "%llu%s", (unsigned long long)v->max,
	     v->type == LJM_T_DURATION ? "ms" : "");
    ck_assert_msg(ljm_parse_value(v, s, &c) == NULL, "%s=%s", v->name, s);
    snprintf(s, sizeof(s), "%llu%s", (unsigned long long)v->max + 1,
	     v->type == LJM_T_DURATION ? "ms" : "");
    ck_assert_msg(ljm_parse_value(v, s, &c) != NULL, "%s=%s", v->name, s);
    if (v->min > 0) {
      snprintf(s, sizeof(s), "%llu%s", (unsigned long long)v->min - 1,
	       v->type == LJM_T_DURATION ? "ms" : "");
      ck_assert_msg((ljm_parse_value(v, s, &c) == NULL) ==
		    (v->min == 1 && v->zero_ok), "%s=%s", v->name, s);
    }
    ck_assert_msg((ljm_parse_value(v, "0", &c) == NULL) ==
		  (v->min == 0 || v->zero_ok), "%s=0", v->name);
  }
}
END_TEST

START_TEST(parsers)
{
  uint64_t u;
  int b, s;
  ck_assert_int_eq(ljm_parse_size("4096", &u), 0); ck_assert_uint_eq(u, 4096);
  ck_assert_int_eq(ljm_parse_sample("yes", &u), 0);
  ck_assert_uint_eq(u, 4 << 20);  /* 4M, as documented. */
  ck_assert_int_eq(ljm_parse_sample("no", &u), 0); ck_assert_uint_eq(u, 0);
  ck_assert_int_eq(ljm_parse_sample("64k", &u), 0);
  ck_assert_uint_eq(u, 65536);
  ck_assert_int_eq(ljm_parse_sample("fast", &u), EINVAL);
  ck_assert_int_eq(ljm_parse_size("64K", &u), 0); ck_assert_uint_eq(u, 65536);
  ck_assert_int_eq(ljm_parse_size("4m", &u), 0); ck_assert_uint_eq(u, 4 << 20);
  ck_assert_int_eq(ljm_parse_size("1G", &u), 0); ck_assert_uint_eq(u, 1 << 30);
  ck_assert_int_eq(ljm_parse_size("17179869184G", &u), ERANGE);
  ck_assert_int_eq(ljm_parse_size("", &u), EINVAL);
  ck_assert_int_eq(ljm_parse_duration("250ms", &u), 0); ck_assert_uint_eq(u, 250);
  ck_assert_int_eq(ljm_parse_duration("3", &u), 0); ck_assert_uint_eq(u, 3000);
  ck_assert_int_eq(ljm_parse_duration("2m", &u), 0); ck_assert_uint_eq(u, 120000);
  ck_assert_int_eq(ljm_parse_duration("1h", &u), 0); ck_assert_uint_eq(u, 3600000);
  ck_assert_int_eq(ljm_parse_depth("1", &u), 0); ck_assert_uint_eq(u, 1);
  ck_assert_int_eq(ljm_parse_depth("yes", &u), 0); ck_assert_uint_eq(u, 32);
  ck_assert_int_eq(ljm_parse_depth("Off", &u), 0); ck_assert_uint_eq(u, 0);
  ck_assert_int_eq(ljm_parse_depth("0", &u), 0); ck_assert_uint_eq(u, 0);
  ck_assert_int_eq(ljm_parse_depth("12x", &u), EINVAL);
  ck_assert_int_eq(ljm_parse_bool("Yes", &b), 0); ck_assert_int_eq(b, 1);
  ck_assert_int_eq(ljm_parse_bool("OFF", &b), 0); ck_assert_int_eq(b, 0);
  ck_assert_int_eq(ljm_parse_signal("USR2", &s), 0); ck_assert_int_eq(s, SIGUSR2);
  ck_assert_int_eq(ljm_parse_signal("sigusr1", &s), 0); ck_assert_int_eq(s, SIGUSR1);
  ck_assert_int_eq(ljm_parse_signal("RTMIN+2", &s), 0); ck_assert_int_eq(s, SIGRTMIN + 2);
  ck_assert_int_eq(ljm_parse_signal("SIGRTMAX-1", &s), 0); ck_assert_int_eq(s, SIGRTMAX - 1);
  ck_assert_int_eq(ljm_parse_signal("RTMAX", &s), 0); ck_assert_int_eq(s, SIGRTMAX);
}
END_TEST

START_TEST(unset_means_nothing)
{
  struct fakeenv e = { {0}, {0}, 0 };
  struct ljm_config c;
  char msgs[LJM_NVARS_MAX][LJM_MSG_MAX];
  /* Without LJMPROF_OUT, even bad values of the others are not looked at. */
  fake_set(&e, "LJMPROF_BUFSIZE", "garbage");
  ck_assert_int_eq(load(&e, &c, msgs), 0);
  ck_assert_str_eq(c.out, "");
  /* Empty counts as unset. */
  e.n = 0;
  fake_set(&e, "LJMPROF_OUT", "");
  ck_assert_int_eq(load(&e, &c, msgs), 0);
  ck_assert_str_eq(c.out, "");
  e.n = 0;
  fake_set(&e, "LJMPROF_OUT", "a.bin");
  fake_set(&e, "LJMPROF_BUFSIZE", "");
  ck_assert_int_eq(load(&e, &c, msgs), 0);
  ck_assert_uint_eq(c.bufsize, 1 << 20);
}
END_TEST

START_TEST(start_off_needs_a_signal)
{
  struct fakeenv e = { {0}, {0}, 0 };
  struct ljm_config c;
  char msgs[LJM_NVARS_MAX][LJM_MSG_MAX];
  fake_set(&e, "LJMPROF_OUT", "a.bin");
  fake_set(&e, "LJMPROF_START", "no");
  ck_assert_int_eq(load(&e, &c, msgs), 1);
  ck_assert_int_eq(strncmp(msgs[0], "LJMPROF_START=no: ", 18), 0);
  fake_set(&e, "LJMPROF_SIGNAL", "USR1");
  ck_assert_int_eq(load(&e, &c, msgs), 0);
  ck_assert_int_eq(c.start, 0);
  ck_assert_int_eq(c.signo, SIGUSR1);
}
END_TEST

START_TEST(show_round_trips)
{
  size_t i;
  struct fakeenv e = { {0}, {0}, 0 };
  struct ljm_config c, c2;
  char msgs[LJM_NVARS_MAX][LJM_MSG_MAX], buf[LJM_PATH_MAX];
  for (i = 0; i < ljm_nvars; i++)
    fake_set(&e, ljm_vars[i].name, ljm_vars[i].example);
  ck_assert_int_eq(load(&e, &c, msgs), 0);
  ljm_config_defaults(&c2);
  for (i = 0; i < ljm_nvars; i++) {
    const char *s = ljm_config_show(&ljm_vars[i], &c, buf, sizeof(buf));
    ck_assert_msg(ljm_parse_value(&ljm_vars[i], s, &c2) == NULL, "%s", s);
  }
  ck_assert_int_eq(memcmp(&c, &c2, sizeof(c)), 0);
}
END_TEST

/* -- File names ------------------------------------------------------------ */

static const char *name(const char *tmpl, long pid, unsigned vm,
			unsigned stream, int tag_pid)
{
  static char buf[LJM_PATH_MAX];
  struct ljm_name k = { pid, vm, stream, tag_pid, 0 };
  ck_assert_int_eq(ljm_outpath(buf, sizeof(buf), tmpl, &k), 0);
  return buf;
}

START_TEST(names)
{
  ck_assert_str_eq(name("x.bin", 42, 1, 1, 0), "x.bin");
  ck_assert_str_eq(name("x.bin", 42, 2, 1, 0), "x.vm2.bin");
  ck_assert_str_eq(name("x.bin", 42, 1, 3, 0), "x.s3.bin");
  ck_assert_str_eq(name("x.bin", 42, 1, 1, 1), "x.42.bin");
  ck_assert_str_eq(name("x.bin", 42, 2, 3, 1), "x.42.vm2.s3.bin");
  ck_assert_str_eq(name("out", 42, 2, 1, 0), "out.vm2");
  ck_assert_str_eq(name("/a.d/out", 42, 2, 1, 0), "/a.d/out.vm2");
  ck_assert_str_eq(name("/tmp/.hidden", 42, 1, 1, 1), "/tmp/.hidden.42");
  ck_assert_str_eq(name("x.tar.gz", 42, 2, 1, 0), "x.tar.vm2.gz");
  ck_assert_str_eq(name("x.%p.bin", 42, 1, 1, 0), "x.42.bin");
  ck_assert_str_eq(name("x.%p.bin", 42, 1, 1, 1), "x.42.bin");
  ck_assert_str_eq(name("x-%p-%n-%s.bin", 7, 2, 3, 1), "x-7-2-3.bin");
  ck_assert_str_eq(name("x-%n.bin", 7, 2, 3, 0), "x-2.s3.bin");
  ck_assert_str_eq(name("100%%.bin", 7, 1, 1, 0), "100%.bin");
  ck_assert_str_eq(name("d/%p/x.bin", 7, 1, 2, 0), "d/7/x.s2.bin");
  {
    char buf[64];
    struct ljm_name k = { 42, 2, 3, 1, 5 };
    ck_assert_int_eq(ljm_outpath(buf, sizeof(buf), "x.bin", &k), 0);
    ck_assert_str_eq(buf, "x.42.vm2.s3.5.bin");
    k.again = 0;
    ck_assert_int_eq(ljm_outpath(buf, sizeof(buf), "p%p.bin", &k), 0);
    ck_assert_str_eq(buf, "p42.vm2.s3.bin");
  }
}
END_TEST

/* No two (pid, VM, stream) give the same name, for several templates. */
START_TEST(names_are_unique)
{
  static const char *const tmpls[] = { "x.bin", "x", "x.%p.bin", "p%n.bin",
				       "%s-%n" };
  size_t t;
  for (t = 0; t < sizeof(tmpls) / sizeof(tmpls[0]); t++) {
    char seen[64][64];
    int n = 0, a, b;
    long pid;
    unsigned vm, st;
    for (pid = 100; pid <= 101; pid++)
      for (vm = 1; vm <= 4; vm++)
	for (st = 1; st <= 4; st++) {
	  /* The original process (pid 100) names without pid tag; its
	  ** forked child (101) tags. */
	  snprintf(seen[n++], 64, "%s", name(tmpls[t], pid, vm, st, pid == 101));
	}
    for (a = 0; a < n; a++)
      for (b = a + 1; b < n; b++)
	ck_assert_msg(strcmp(seen[a], seen[b]) != 0, "%s: %s twice", tmpls[t],
		      seen[a]);
  }
}
END_TEST

/* The names ljm_outpath gives, and only those, match their template. */
START_TEST(names_match)
{
  static const char *const tmpls[] = { "/d/x.bin", "/d/x", "/d/x.%p.bin",
				       "/d/p%n.bin", "/d/%s-%n", "/d/.hid",
				       "/a.d/x.tar.gz", "/d/100%%.bin" };
  size_t t;
  for (t = 0; t < sizeof(tmpls) / sizeof(tmpls[0]); t++) {
    long pid;
    unsigned vm, st, again;
    for (pid = 7; pid <= 4242; pid += 4235)
      for (vm = 1; vm <= 3; vm++)
	for (st = 1; st <= 3; st++)
	  for (again = 0; again <= 3; again += 3) {
	    char buf[256];
	    struct ljm_name k = { pid, vm, st, (int)(vm & 1), again };
	    ck_assert_int_eq(ljm_outpath(buf, sizeof(buf), tmpls[t], &k), 0);
	    ck_assert_msg(ljm_outpath_match(tmpls[t], buf), "%s: %s", tmpls[t],
			  buf);
	  }
  }
  ck_assert(!ljm_outpath_match("/d/x.bin", "/etc/shadow"));
  ck_assert(!ljm_outpath_match("/d/x.bin", "/d/x.bin/../../etc/shadow"));
  ck_assert(!ljm_outpath_match("/d/x.bin", "/d/y.bin"));
  ck_assert(!ljm_outpath_match("/d/x.bin", "/d/x.evil.bin"));
  ck_assert(!ljm_outpath_match("/d/x.bin", "/d/x.1.2.3.4.5.6.bin"));
  ck_assert(!ljm_outpath_match("/d/x.bin", "/d/x.bin.old"));
  ck_assert(!ljm_outpath_match("/d/x.bin", "/d/x.\033[2J.bin"));
  ck_assert(!ljm_outpath_match("/d/x.%p.bin", "/d/x..bin"));
  ck_assert(!ljm_outpath_match("/d/x.%p.bin", "/d/x.12a.bin"));
  ck_assert(!ljm_outpath_match("/d/x", "/d/x/y"));
  ck_assert(ljm_outpath_match("/d/x.bin", "/d/x.bin"));
}
END_TEST

START_TEST(templates)
{
  char buf[64];
  struct ljm_name k = { 1, 1, 1, 0, 0 };
  ck_assert_ptr_null(ljm_template_check("x.bin"));
  ck_assert_ptr_null(ljm_template_check("/tmp/%p/%n.%s.bin"));
  ck_assert_ptr_nonnull(ljm_template_check(""));
  ck_assert_ptr_nonnull(ljm_template_check("dir/"));
  ck_assert_ptr_nonnull(ljm_template_check("x%d"));
  ck_assert_int_eq(ljm_template_absolute(buf, sizeof(buf), "./x.bin", "/w"), 0);
  ck_assert_str_eq(buf, "/w/x.bin");
  ck_assert_int_eq(ljm_template_absolute(buf, sizeof(buf), "x.bin", "/"), 0);
  ck_assert_str_eq(buf, "/x.bin");
  ck_assert_int_eq(ljm_template_absolute(buf, sizeof(buf), "/a/x", "/w"), 0);
  ck_assert_str_eq(buf, "/a/x");
  ck_assert_int_eq(ljm_outpath(buf, 8, "abcdefgh", &k), ENAMETOOLONG);
  k.vm = 2;
  ck_assert_int_eq(ljm_outpath(buf, 9, "abc.bin", &k), ENAMETOOLONG);
}
END_TEST

/* -- The writer ----------------------------------------------------------- */

static char tmpdir[] = "/tmp/ljmprof-unit.XXXXXX";

static void mk_tmpdir(void)
{
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void rm_tmpdir(void)
{
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
  if (system(cmd) != 0)
    fprintf(stderr, "cannot remove %s\n", tmpdir);
}

START_TEST(writer_writes)
{
  struct ljm_out o;
  char path[256], buf[64];
  int fd, fl;
  snprintf(path, sizeof(path), "%s/w.bin", tmpdir);
  ck_assert_int_eq(ljm_out_open(&o, path), 0);
  fl = fcntl(o.fd, F_GETFD);
  ck_assert(fl & FD_CLOEXEC);
  ck_assert(!(fcntl(o.fd, F_GETFL) & O_NONBLOCK));
  ck_assert_int_eq(ljm_out_write(&o, "ljs", 3), 0);
  ck_assert_int_eq(ljm_out_write(&o, "\x80", 1), 0);
  ck_assert_uint_eq(o.written, 4);
  ck_assert_int_eq(ljm_out_close(&o), 0);
  ck_assert_int_eq(ljm_out_close(&o), 0);	/* Twice is fine. */
  fd = open(path, O_RDONLY);
  ck_assert_int_eq(read(fd, buf, sizeof(buf)), 4);
  ck_assert_int_eq(memcmp(buf, "ljs\x80", 4), 0);
  close(fd);
}
END_TEST

/* A file that is there is never opened, truncated or written: not a
** stream of ours, a stream of another process, or the last run's. */
START_TEST(writer_never_truncates)
{
  struct ljm_out o;
  char path[256], buf[64];
  int fd;
  snprintf(path, sizeof(path), "%s/theirs.bin", tmpdir);
  fd = open(path, O_WRONLY | O_CREAT, 0644);
  ck_assert_int_eq(write(fd, "their content", 13), 13);
  close(fd);
  ck_assert_int_eq(ljm_out_open(&o, path), EEXIST);
  ck_assert_int_eq(o.fd, -1);
  fd = open(path, O_RDONLY);
  ck_assert_int_eq(read(fd, buf, sizeof(buf)), 13);
  ck_assert_int_eq(memcmp(buf, "their content", 13), 0);
  close(fd);
  /* An empty one too. */
  snprintf(path, sizeof(path), "%s/empty.bin", tmpdir);
  fd = open(path, O_WRONLY | O_CREAT, 0644);
  close(fd);
  ck_assert_int_eq(ljm_out_open(&o, path), EEXIST);
}
END_TEST

/* A symbolic link at the name is refused, dangling or not, and what it
** points to is neither created nor changed. */
START_TEST(writer_no_symlinks)
{
  struct ljm_out o;
  char path[256], target[256];
  struct stat st;
  int fd;
  snprintf(path, sizeof(path), "%s/link.bin", tmpdir);
  snprintf(target, sizeof(target), "%s/target", tmpdir);
  ck_assert_int_eq(symlink(target, path), 0);
  ck_assert_int_eq(ljm_out_open(&o, path), ELOOP);
  ck_assert_int_eq(access(target, F_OK), -1);
  fd = open(target, O_WRONLY | O_CREAT, 0644);
  ck_assert_int_eq(write(fd, "precious", 8), 8);
  close(fd);
  ck_assert_int_eq(ljm_out_open(&o, path), ELOOP);
  ck_assert_int_eq(stat(target, &st), 0);
  ck_assert_int_eq(st.st_size, 8);
  /* To a device too: /dev/stdout is one. */
  ck_assert_int_eq(ljm_out_open(&o, "/dev/stdout"), ELOOP);
  ck_assert_str_eq(ljm_out_strerror(ELOOP),
		   "a symbolic link, which is never followed");
}
END_TEST

/* flock, wrapped (-Wl,--wrap=flock, tests/shim/local.mk): while
** flock_path is set, whether a file was at that name when the first
** exclusive lock was taken (1), or not (0); -1 before one is. */
int __real_flock(int fd, int op);
static const char *flock_path;
static int flock_named = -1;

int __wrap_flock(int fd, int op)
{
  if (flock_path && (op & LOCK_EX) && flock_named < 0)
    flock_named = access(flock_path, F_OK) == 0;
  return __real_flock(fd, op);
}

/* ljm_out_open(o, path) with flock watched: whether the file was at its
** name when it was locked. */
static int open_watched(struct ljm_out *o, const char *path)
{
  flock_named = -1;
  flock_path = path;
  ck_assert_int_eq(ljm_out_open(o, path), 0);
  flock_path = NULL;
  return flock_named;
}

/* A new stream is locked before its name appears (made under a hidden
** name, locked, renamed into place), so that no reader ever finds it
** unlocked and takes it for a stream whose writer is gone (top, report's
** "being written"); and its open file has that name (/proc/PID/fd). */
START_TEST(writer_locked_before_seen)
{
  struct ljm_out o;
  char path[256], cwd[256], link[64], target[256];
  ssize_t n;
  int fd;
  snprintf(path, sizeof(path), "%s/unnamed-first.bin", tmpdir);
  ck_assert_int_eq(open_watched(&o, path), 0);
  snprintf(link, sizeof(link), "/proc/self/fd/%d", o.fd);
  n = readlink(link, target, sizeof(target) - 1);
  ck_assert_int_gt(n, 0);
  target[n] = '\0';
  ck_assert_str_eq(target, path);
  fd = open(path, O_RDONLY);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_ne(flock(fd, LOCK_SH | LOCK_NB), 0);
  ck_assert_int_eq(errno, EWOULDBLOCK);
  close(fd);
  ljm_out_close(&o);
  /* The name was taken: EEXIST, as before, and no hidden file left. */
  ck_assert_int_eq(ljm_out_open(&o, path), EEXIST);
  snprintf(path, sizeof(path), "%s/.unnamed-first.bin.ljmprof-%d-0", tmpdir,
	   (int)getpid());
  ck_assert_int_ne(access(path, F_OK), 0);
  /* A name with no directory: the working one. */
  ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
  ck_assert_int_eq(chdir(tmpdir), 0);
  ck_assert_int_eq(open_watched(&o, "here.bin"), 0);
  ljm_out_close(&o);
  ck_assert_int_eq(access("here.bin", F_OK), 0);
  ck_assert_int_eq(chdir(cwd), 0);
}
END_TEST

/* A new stream is 0600 whatever the umask. */
START_TEST(writer_mode)
{
  static const mode_t masks[] = { 0, 022, 077 };
  struct ljm_out o;
  char path[256];
  struct stat st;
  size_t i;
  for (i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
    mode_t old = umask(masks[i]);
    snprintf(path, sizeof(path), "%s/mode%zu.bin", tmpdir, i);
    ck_assert_int_eq(ljm_out_open(&o, path), 0);
    umask(old);
    ck_assert_int_eq(fstat(o.fd, &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0600);
    ljm_out_close(&o);
  }
}
END_TEST

/* Taken names are skipped: the pid tag, then a number. */
START_TEST(writer_next_name)
{
  struct ljm_out o;
  struct ljm_name k = { 42, 1, 1, 0, 0 };
  char tmpl[256], want[256], path[256];
  unsigned taken = 9;
  int fd;
  snprintf(tmpl, sizeof(tmpl), "%s/n.bin", tmpdir);
  ck_assert_int_eq(ljm_out_create(&o, path, sizeof(path), tmpl, &k, &taken), 0);
  ck_assert_uint_eq(taken, 0);
  ck_assert_str_eq(path, tmpl);
  ljm_out_close(&o);
  k.tag_pid = 0;
  ck_assert_int_eq(ljm_out_create(&o, path, sizeof(path), tmpl, &k, &taken), 0);
  ck_assert_uint_eq(taken, 1);
  snprintf(want, sizeof(want), "%s/n.42.bin", tmpdir);
  ck_assert_str_eq(path, want);
  ljm_out_close(&o);
  k.tag_pid = 0;
  ck_assert_int_eq(ljm_out_create(&o, path, sizeof(path), tmpl, &k, &taken), 0);
  ck_assert_uint_eq(taken, 2);
  snprintf(want, sizeof(want), "%s/n.42.2.bin", tmpdir);
  ck_assert_str_eq(path, want);
  ljm_out_close(&o);
  /* A forked child, whose name is taken by the image it replaced. */
  k.tag_pid = 1;
  ck_assert_int_eq(ljm_out_create(&o, path, sizeof(path), tmpl, &k, &taken), 0);
  ck_assert_uint_eq(taken, 2);
  snprintf(want, sizeof(want), "%s/n.42.3.bin", tmpdir);
  ck_assert_str_eq(path, want);
  ljm_out_close(&o);
  /* A stream another process is writing (its lock held) is passed over
  ** too, but not counted as a file left there. */
  {
    struct ljm_out busy;
    snprintf(tmpl, sizeof(tmpl), "%s/b.bin", tmpdir);
    k.tag_pid = 0;
    ck_assert_int_eq(ljm_out_create(&busy, path, sizeof(path), tmpl, &k, &taken), 0);
    ck_assert_str_eq(path, tmpl);
    k.tag_pid = 0;
    ck_assert_int_eq(ljm_out_create(&o, path, sizeof(path), tmpl, &k, &taken), 0);
    ck_assert_uint_eq(taken, 0);
    snprintf(want, sizeof(want), "%s/b.42.bin", tmpdir);
    ck_assert_str_eq(path, want);
    ljm_out_close(&o);
    ljm_out_close(&busy);
    /* Once it is closed, it is a file left there. */
    k.tag_pid = 0;
    ck_assert_int_eq(ljm_out_create(&o, path, sizeof(path), tmpl, &k, &taken), 0);
    ck_assert_uint_eq(taken, 2);
    snprintf(want, sizeof(want), "%s/b.42.2.bin", tmpdir);
    ck_assert_str_eq(path, want);
    ljm_out_close(&o);
  }
  /* A symbolic link is refused, not passed over. */
  snprintf(tmpl, sizeof(tmpl), "%s/l.bin", tmpdir);
  ck_assert_int_eq(symlink("/nonexistent", tmpl), 0);
  k.tag_pid = 0;
  ck_assert_int_eq(ljm_out_create(&o, path, sizeof(path), tmpl, &k, NULL), ELOOP);
  /* A FIFO or a device is used as it is. */
  k.tag_pid = 0;
  ck_assert_int_eq(ljm_out_create(&o, path, sizeof(path), "/dev/null", &k, NULL), 0);
  ck_assert_str_eq(path, "/dev/null");
  ljm_out_close(&o);
  snprintf(tmpl, sizeof(tmpl), "%s/f.bin", tmpdir);
  ck_assert_int_eq(mkfifo(tmpl, 0600), 0);
  fd = open(tmpl, O_RDONLY | O_NONBLOCK);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(ljm_out_create(&o, path, sizeof(path), tmpl, &k, NULL), 0);
  ck_assert_str_eq(path, tmpl);
  ljm_out_close(&o);
  close(fd);
}
END_TEST

START_TEST(writer_errors)
{
  struct ljm_out o;
  char path[256];
  int fd;
  snprintf(path, sizeof(path), "%s/missing/w.bin", tmpdir);
  ck_assert_int_eq(ljm_out_open(&o, path), ENOENT);
  ck_assert_int_eq(ljm_out_open(&o, tmpdir), EISDIR);
  ck_assert_int_eq(ljm_out_open(&o, "/dev/full"), 0);
  ck_assert_int_eq(ljm_out_write(&o, "abc", 3), ENOSPC);
  ck_assert_int_eq(ljm_out_close(&o), 0);
  /* Closed behind our back, and the number reused for another file. */
  snprintf(path, sizeof(path), "%s/a.bin", tmpdir);
  ck_assert_int_eq(ljm_out_open(&o, path), 0);
  close(o.fd);
  ck_assert_int_eq(ljm_out_write(&o, "abc", 3), EBADF);
  snprintf(path, sizeof(path), "%s/other", tmpdir);
  fd = open(path, O_WRONLY | O_CREAT, 0600);
  ck_assert_int_eq(fd, o.fd);
  ck_assert_int_eq(ljm_out_write(&o, "abc", 3), EBADF);
  close(fd);
  ck_assert(access(path, F_OK) == 0);
  {
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_size, 0);
  }
}
END_TEST

/* A FIFO with no reader: open fails at once instead of blocking. */
START_TEST(writer_fifo)
{
  struct ljm_out o;
  char path[256];
  snprintf(path, sizeof(path), "%s/fifo", tmpdir);
  ck_assert_int_eq(mkfifo(path, 0600), 0);
  ck_assert_int_eq(ljm_out_open(&o, path), ENXIO);
}
END_TEST

/* Another user's FIFO or device is refused, and nothing goes to it. */
START_TEST(writer_fifo_owner)
{
  struct ljm_out o;
  char path[256], c;
  int rfd;
  if (geteuid() != 0) {
    fprintf(stderr, "writer_fifo_owner: skipped, needs root to chown\n");
    return;
  }
  snprintf(path, sizeof(path), "%s/their.fifo", tmpdir);
  ck_assert_int_eq(mkfifo(path, 0666), 0);
  ck_assert_int_eq(chown(path, 65534, 65534), 0);
  rfd = open(path, O_RDONLY | O_NONBLOCK);
  ck_assert_int_ge(rfd, 0);
  ck_assert_int_eq(ljm_out_open(&o, path), EPERM);
  ck_assert_int_eq(read(rfd, &c, 1), 0);	/* No writer ever came. */
  close(rfd);
  ck_assert_str_eq(ljm_out_strerror(EPERM),
		   "a FIFO or device owned by another user, never written");
  /* A device node of another user's, even one that discards. */
  snprintf(path, sizeof(path), "%s/their.null", tmpdir);
  ck_assert_int_eq(mknod(path, S_IFCHR | 0666, makedev(1, 3)), 0);
  ck_assert_int_eq(chown(path, 65534, 65534), 0);
  ck_assert_int_eq(ljm_out_open(&o, path), EPERM);
  /* The user's own FIFO still takes a stream. */
  snprintf(path, sizeof(path), "%s/mine.fifo", tmpdir);
  ck_assert_int_eq(mkfifo(path, 0600), 0);
  rfd = open(path, O_RDONLY | O_NONBLOCK);
  ck_assert_int_eq(ljm_out_open(&o, path), 0);
  ljm_out_close(&o);
  close(rfd);
}
END_TEST

/* A FIFO whose reader has gone: EPIPE, never SIGPIPE (the default action
** kills the program), the signal mask as it was, and a SIGPIPE that was
** pending before (the program's own) still pending. */
START_TEST(writer_fifo_sigpipe)
{
  struct ljm_out o;
  char path[256];
  sigset_t mask, pending;
  int rfd, pass;
  snprintf(path, sizeof(path), "%s/gone.fifo", tmpdir);
  ck_assert_int_eq(mkfifo(path, 0600), 0);
  for (pass = 0; pass < 2; pass++) {
    rfd = open(path, O_RDONLY | O_NONBLOCK);
    ck_assert_int_ge(rfd, 0);
    ck_assert_int_eq(ljm_out_open(&o, path), 0);
    ck_assert_int_eq(ljm_out_write(&o, "ljs", 3), 0);
    close(rfd);
    sigemptyset(&mask);
    if (pass == 1) {
      sigaddset(&mask, SIGPIPE);
      ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, &mask, NULL), 0);
      ck_assert_int_eq(raise(SIGPIPE), 0);
    }
    errno = 1234;
    ck_assert_int_eq(ljm_out_write(&o, "abc", 3), EPIPE);
    ck_assert_int_eq(errno, 1234);
    ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, NULL, &mask), 0);
    ck_assert_int_eq(sigismember(&mask, SIGPIPE), pass);
    ck_assert_int_eq(sigpending(&pending), 0);
    ck_assert_int_eq(sigismember(&pending, SIGPIPE), pass);
    ljm_out_close(&o);
  }
}
END_TEST

/* Another process writes the file: never opened, and its content stays. */
START_TEST(writer_lock)
{
  struct ljm_out o, o2;
  char path[256];
  int p[2], st;
  pid_t pid;
  char c;
  struct stat sb;
  snprintf(path, sizeof(path), "%s/locked.bin", tmpdir);
  ck_assert_int_eq(pipe(p), 0);
  pid = fork();
  if (pid == 0) {
    if (ljm_out_open(&o, path) != 0 || ljm_out_write(&o, "abcd", 4) != 0)
      _exit(1);
    if (write(p[1], "x", 1) != 1)
      _exit(1);
    sleep(2);
    _exit(0);
  }
  close(p[1]);
  ck_assert_int_eq(read(p[0], &c, 1), 1);
  ck_assert_int_eq(ljm_out_open(&o2, path), EEXIST);
  ck_assert_int_eq(stat(path, &sb), 0);
  ck_assert_int_eq(sb.st_size, 4);
  kill(pid, SIGKILL);
  waitpid(pid, &st, 0);
  /* Devices are not claimed: two processes may share /dev/null. */
  ck_assert_int_eq(ljm_out_open(&o2, "/dev/null"), 0);
  ck_assert_int_eq(ljm_out_open(&o, "/dev/null"), 0);
  ljm_out_close(&o);
  ljm_out_close(&o2);
  close(p[0]);
}
END_TEST

/* Never the program's standard output, except /dev/null. */
START_TEST(writer_not_stdout)
{
  struct ljm_out o;
  char path[256];
  int saved = dup(1), fd, rfd;
  snprintf(path, sizeof(path), "%s/stdout", tmpdir);
  ck_assert_int_eq(mkfifo(path, 0600), 0);
  rfd = open(path, O_RDONLY | O_NONBLOCK);
  fd = open(path, O_WRONLY);
  ck_assert_int_ge(fd, 0);
  dup2(fd, 1);
  close(fd);
  ck_assert_int_eq(ljm_out_open(&o, path), 0);
  ck_assert(ljm_out_is_stdout(&o));
  ljm_out_close(&o);
  fd = open("/dev/null", O_WRONLY);
  dup2(fd, 1);
  close(fd);
  ck_assert_int_eq(ljm_out_open(&o, "/dev/null"), 0);
  ck_assert(!ljm_out_is_stdout(&o));
  ljm_out_close(&o);
  ck_assert_int_eq(ljm_out_open(&o, path), 0);
  ck_assert(!ljm_out_is_stdout(&o));
  ljm_out_close(&o);
  close(rfd);
  dup2(saved, 1);
  close(saved);
}
END_TEST

START_TEST(manifest)
{
  char path[256], buf[64];
  int fd;
  snprintf(path, sizeof(path), "%s/manifest", tmpdir);
  ck_assert_int_eq(ljm_manifest_add(path, "/a/x.bin"), 0);
  ck_assert_int_eq(ljm_manifest_add(path, "/a/x.vm2.bin"), 0);
  fd = open(path, O_RDONLY);
  ck_assert_int_eq(read(fd, buf, sizeof(buf)), 22);
  ck_assert_int_eq(memcmp(buf, "/a/x.bin\n/a/x.vm2.bin\n", 22), 0);
  close(fd);
  {
    /* Created private; never appended through a symbolic link. */
    char link[256], target[256];
    struct stat st;
    mode_t old = umask(0);
    snprintf(path, sizeof(path), "%s/manifest2", tmpdir);
    ck_assert_int_eq(ljm_manifest_add(path, "/a/x.bin"), 0);
    umask(old);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0600);
    snprintf(link, sizeof(link), "%s/mlink", tmpdir);
    snprintf(target, sizeof(target), "%s/mtarget", tmpdir);
    ck_assert_int_eq(symlink(target, link), 0);
    ck_assert_int_eq(ljm_manifest_add(link, "/a/x.bin"), ELOOP);
    ck_assert_int_eq(access(target, F_OK), -1);
  }
}
END_TEST

/* -- ELF and policy -------------------------------------------------------- */

START_TEST(elf)
{
  char lib[LJM_PATH_MAX];
  const char *sys = getenv("SYSTEM_LUAJIT_LIB");
  ck_assert_int_eq(ljm_elf_defines("/nonexistent", "x"), -1);
  ck_assert_int_eq(ljm_elf_defines("/etc/passwd", "x"), -1);
  ck_assert_ptr_null(ljm_elf_flavour("/etc/passwd"));
  if (sys && *sys) {
    ck_assert_int_eq(ljm_elf_defines(sys, "luaL_newstate"), 1);
    ck_assert_int_eq(ljm_elf_defines(sys, "no_such_symbol_here"), 0);
    ck_assert_int_eq(ljm_elf_defines(sys, "malloc"), 0);	/* Imported. */
    ck_assert_int_eq(ljm_elf_needs(sys, "libc.so.6"), 1);
    ck_assert_int_eq(ljm_elf_needs(sys, "libluajit-5.1.so.2"), 0);
    ck_assert_ptr_nonnull(ljm_elf_flavour(sys));
    ck_assert_int_eq(ljm_system_luajit(lib, sizeof(lib)), 0);
  }
  if (access("/usr/bin/luajit", R_OK) == 0 &&
      ljm_elf_needs("/usr/bin/luajit", "libluajit-5.1.so.2") == 0)
    ck_assert_int_eq(ljm_elf_defines("/usr/bin/luajit", "luaL_newstate"), 1);
  ck_assert_int_eq(ljm_elf_defines("/bin/sh", "luaL_newstate"), 0);
}
END_TEST

START_TEST(policy)
{
  /* On from the start. */
  ck_assert_int_eq(ljm_want(1, 0, 1000, 1000, 0, 0), 1);
  /* Each toggle flips. */
  ck_assert_int_eq(ljm_want(1, 0, 1000, 2000, 1, 1500), 0);
  ck_assert_int_eq(ljm_want(1, 0, 1000, 2000, 2, 1500), 1);
  /* Off at start: the first signal turns on. */
  ck_assert_int_eq(ljm_want(0, 0, 1000, 2000, 0, 0), 0);
  ck_assert_int_eq(ljm_want(0, 0, 1000, 2000, 1, 1500), 1);
  /* A delay: off, then on. */
  ck_assert_int_eq(ljm_want(1, 500, 1000, 1400, 0, 0), 0);
  ck_assert_int_eq(ljm_want(1, 500, 1000, 1500, 0, 0), 1);
  /* A signal during the delay starts at once and cancels it. */
  ck_assert_int_eq(ljm_want(1, 500, 1000, 1400, 1, 1200), 1);
  ck_assert_int_eq(ljm_want(1, 500, 1000, 9999, 1, 1200), 1);
  ck_assert_int_eq(ljm_want(1, 500, 1000, 9999, 2, 1200), 0);
  /* A signal after the delay turns off. */
  ck_assert_int_eq(ljm_want(1, 500, 1000, 9999, 1, 1600), 0);
}
END_TEST

START_TEST(messages)
{
  int p[2], saved = dup(2);
  char buf[LJM_MSG_MAX * 5];
  ssize_t n;
  ck_assert_int_eq(pipe(p), 0);
  dup2(p[1], 2);
  errno = 1234;
  ljm_msg("hello %s %d", "world", 42);
  ck_assert_int_eq(errno, 1234);
  memset(buf, 'y', 2000);
  buf[2000] = '\0';
  ljm_msg("%s", buf);	/* Too long: cut, still one line. */
  dup2(saved, 2);
  close(p[1]);
  n = read(p[0], buf, sizeof(buf) - 1);
  ck_assert_int_gt(n, 0);
  buf[n] = '\0';
  ck_assert_int_eq(strncmp(buf, "ljmprof: hello world 42\nljmprof: yyy", 36), 0);
  ck_assert_int_eq(buf[n - 1], '\n');
  ck_assert_ptr_eq(strchr(buf + 24, '\n'), buf + n - 1);
  close(p[0]);
}
END_TEST

/* Read what fn writes to stderr. */
static ssize_t capture_stderr(void (*fn)(void), char *buf, size_t n)
{
  int p[2], saved = dup(2);
  ssize_t r;
  ck_assert_int_eq(pipe(p), 0);
  dup2(p[1], 2);
  fn();
  dup2(saved, 2);
  close(saved);
  close(p[1]);
  r = read(p[0], buf, n - 1);
  close(p[0]);
  buf[r > 0 ? r : 0] = '\0';
  return r;
}

static void repeat_256(void)
{
  unsigned i;
  ljm_msg_reset();
  for (i = 1; i <= 256; i++)
    ck_assert_uint_eq(ljm_msg_repeat(LJM_C_OPEN, ENOTDIR, "cannot open "
				     "x.vm%u.bin; VM %u", i, i), i - 1);
  ck_assert_uint_eq(ljm_msg_repeat(LJM_C_OPEN, EACCES, "other errno"), 0);
  ck_assert_uint_eq(ljm_msg_repeat(LJM_C_MAXSIZE, 0, "cap"), 0);
  ck_assert_uint_eq(ljm_msg_count(LJM_C_OPEN, ENOTDIR), 256);
  ck_assert_uint_eq(ljm_msg_count(LJM_C_WRITE, ENOTDIR), 0);
  ljm_msg_summary();
  ljm_msg_summary();	/* Once only. */
}

static void repeat_reset(void)
{
  ljm_msg_reset();
  ck_assert_uint_eq(ljm_msg_count(LJM_C_OPEN, ENOTDIR), 0);
  ck_assert_uint_eq(ljm_msg_repeat(LJM_C_OPEN, ENOTDIR, "again"), 0);
  ljm_msg_summary();	/* Once each: nothing to sum up. */
}

/* A message that every VM would repeat: the first line, then one line
** with the count at the end, per (cause, errno). */
START_TEST(messages_repeat)
{
  char buf[4096];
  capture_stderr(repeat_256, buf, sizeof(buf));
  ck_assert_str_eq(buf, "ljmprof: cannot open x.vm1.bin; VM 1\n"
		   "ljmprof: other errno\n"
		   "ljmprof: cap\n"
		   "ljmprof: 256 VMs in all are not profiled: their files "
		   "cannot be opened (Not a directory)\n");
  capture_stderr(repeat_reset, buf, sizeof(buf));
  ck_assert_str_eq(buf, "ljmprof: again\n");
}
END_TEST

/* Whether any thread would take a signal: this one's mask decides. */
START_TEST(signal_deliverable)
{
  sigset_t one, old;
  sigemptyset(&one);
  sigaddset(&one, SIGUSR2);
  ck_assert_int_eq(sigprocmask(SIG_UNBLOCK, &one, &old), 0);
  ck_assert_int_eq(ljm_sig_deliverable(SIGUSR2, 0), 1);
  ck_assert_int_eq(sigprocmask(SIG_BLOCK, &one, NULL), 0);
  ck_assert_int_eq(ljm_sig_deliverable(SIGUSR2, 0), 0);
  ck_assert_int_eq(ljm_sig_deliverable(SIGUSR1, 0), 1);
  /* This thread aside, nobody. */
  ck_assert_int_eq(ljm_sig_deliverable(SIGUSR1, (long)getpid()), -1);
  ck_assert_int_eq(ljm_sig_deliverable(0, 0), -1);
  ck_assert_int_eq(ljm_sig_deliverable(SIGRTMIN + 3, 0), 1);
  sigprocmask(SIG_SETMASK, &old, NULL);
}
END_TEST

/* -- The lifecycle --------------------------------------------------------- */

#define S(x)	LJM_VM_##x
#define A(x)	LJM_A_##x

/* decide(state, closing, exit_req, exiting, toggled, want) is act, next. */
static void lc(enum ljm_vm_state st, int closing, int exit_req, int exiting,
	       int toggled, int want, unsigned act, enum ljm_vm_state next)
{
  struct ljm_lc_in in = { st, closing, exit_req, exiting, toggled, want };
  struct ljm_lc_out o = ljm_lc_decide(&in);
  ck_assert_msg(o.act == act && o.next == next,
		"%s closing=%d exit_req=%d exiting=%d toggled=%d want=%d: "
		"act 0x%x next %s, wanted 0x%x %s", ljm_lc_name(st), closing,
		exit_req, exiting, toggled, want, o.act, ljm_lc_name(o.next),
		act, ljm_lc_name(next));
}

/* At a safe point, transition by transition. */
START_TEST(lifecycle_safe_points)
{
  /* IDLE: starts when wanted. */
  lc(S(IDLE), 0, 0, 0, 0, 0, 0, S(IDLE));
  lc(S(IDLE), 0, 0, 0, 0, 1, A(START), S(RUNNING));
  lc(S(IDLE), 0, 0, 0, 1, 1, A(START), S(RUNNING));
  lc(S(IDLE), 0, 0, 0, 1, 0, 0, S(IDLE));
  /* RUNNING: stops when no longer wanted; a toggle ends the stream and
  ** begins a new one if profiling is (still) wanted. */
  lc(S(RUNNING), 0, 0, 0, 0, 1, 0, S(RUNNING));
  lc(S(RUNNING), 0, 0, 0, 0, 0, A(STOP), S(IDLE));
  lc(S(RUNNING), 0, 0, 0, 1, 0, A(STOP), S(IDLE));
  lc(S(RUNNING), 0, 0, 0, 1, 1, A(RESTART), S(RUNNING));
  /* CAPPED, BROKEN: end now, then HALTED; a toggle restarts instead. */
  lc(S(CAPPED), 0, 0, 0, 0, 1, A(STOP), S(HALTED));
  lc(S(CAPPED), 0, 0, 0, 0, 0, A(STOP), S(HALTED));
  lc(S(BROKEN), 0, 0, 0, 0, 1, A(STOP), S(HALTED));
  lc(S(BROKEN), 0, 0, 0, 0, 0, A(STOP), S(HALTED));
  lc(S(CAPPED), 0, 0, 0, 1, 1, A(RESTART), S(RUNNING));
  lc(S(BROKEN), 0, 0, 0, 1, 1, A(RESTART), S(RUNNING));
  lc(S(CAPPED), 0, 0, 0, 1, 0, A(STOP), S(IDLE));
  lc(S(BROKEN), 0, 0, 0, 1, 0, A(STOP), S(IDLE));
  /* HALTED: stays off, whatever is wanted, until a toggle. */
  lc(S(HALTED), 0, 0, 0, 0, 1, 0, S(HALTED));
  lc(S(HALTED), 0, 0, 0, 0, 0, 0, S(HALTED));
  lc(S(HALTED), 0, 0, 0, 1, 1, A(START), S(RUNNING));
  lc(S(HALTED), 0, 0, 0, 1, 0, 0, S(IDLE));
  /* Inherited by a forked child: disowned, then as IDLE. */
  lc(S(INHERITED_ON), 0, 0, 0, 0, 1, A(DISOWN) | A(START), S(RUNNING));
  lc(S(INHERITED_ON), 0, 0, 0, 0, 0, A(DISOWN), S(IDLE));
  lc(S(INHERITED_ON), 0, 0, 0, 1, 1, A(DISOWN) | A(START), S(RUNNING));
  lc(S(INHERITED_OFF), 0, 0, 0, 0, 1, A(DISOWN) | A(START), S(RUNNING));
  lc(S(INHERITED_OFF), 0, 0, 0, 0, 0, A(DISOWN), S(IDLE));
  lc(S(INHERITED_OFF), 0, 0, 0, 1, 0, A(DISOWN), S(IDLE));
}
END_TEST

/* The exit: every live state finishes; FINISHING and DONE are left. */
START_TEST(lifecycle_exit)
{
  enum ljm_vm_state st;
  int closing;
  for (st = S(IDLE); st <= S(DONE); st++)
    for (closing = 0; closing <= 1; closing++) {
      int over = st == S(FINISHING) || st == S(DONE);
      lc(st, closing, 1, 0, 1, 1, over ? A(IGNORE) : A(FINISH),
	 over ? st : S(DONE));
      lc(st, closing, 1, 1, 0, 0, over ? A(IGNORE) : A(FINISH),
	 over ? st : S(DONE));
      /* Exit processing over and no request: touch nothing. */
      lc(st, closing, 0, 1, 1, 1, A(IGNORE), st);
    }
  /* Never act again once finished, whatever happens. */
  lc(S(DONE), 0, 0, 0, 1, 1, A(IGNORE), S(DONE));
  lc(S(FINISHING), 0, 0, 0, 0, 1, A(IGNORE), S(FINISHING));
}
END_TEST

/* lua_close: the stream ends for good, without looking at signals; a
** forked child's copy first becomes the child's own. */
START_TEST(lifecycle_close)
{
  lc(S(RUNNING), 1, 0, 0, 0, 1, A(END), S(DONE));
  lc(S(RUNNING), 1, 0, 0, 1, 0, A(END), S(DONE));
  lc(S(CAPPED), 1, 0, 0, 0, 1, A(END), S(DONE));
  lc(S(BROKEN), 1, 0, 0, 0, 1, A(END), S(DONE));
  lc(S(IDLE), 1, 0, 0, 0, 1, 0, S(DONE));
  lc(S(HALTED), 1, 0, 0, 1, 1, 0, S(DONE));
  lc(S(INHERITED_ON), 1, 0, 0, 0, 1, A(DISOWN) | A(START) | A(END), S(DONE));
  lc(S(INHERITED_ON), 1, 0, 0, 0, 0, A(DISOWN), S(DONE));
  lc(S(INHERITED_OFF), 1, 0, 0, 0, 1, A(DISOWN) | A(START) | A(END), S(DONE));
  lc(S(INHERITED_OFF), 1, 0, 0, 0, 0, A(DISOWN), S(DONE));
}
END_TEST

/* Failures, fork, and the small questions. */
START_TEST(lifecycle_helpers)
{
  struct ljm_lc_out stop = { A(STOP), S(IDLE) };
  struct ljm_lc_out restart = { A(RESTART), S(RUNNING) };
  struct ljm_lc_out start = { A(START), S(RUNNING) };
  struct ljm_lc_out end = { A(END), S(DONE) };
  enum ljm_vm_state st;
  ck_assert_int_eq(ljm_lc_failed(&stop, A(STOP)), S(HALTED));
  ck_assert_int_eq(ljm_lc_failed(&restart, A(STOP)), S(IDLE));
  ck_assert_int_eq(ljm_lc_failed(&restart, A(START)), S(HALTED));
  ck_assert_int_eq(ljm_lc_failed(&start, A(START)), S(HALTED));
  ck_assert_int_eq(ljm_lc_failed(&end, A(END)), S(DONE));
  ck_assert_int_eq(ljm_lc_forked(S(RUNNING)), S(INHERITED_ON));
  ck_assert_int_eq(ljm_lc_forked(S(CAPPED)), S(INHERITED_ON));
  ck_assert_int_eq(ljm_lc_forked(S(BROKEN)), S(INHERITED_ON));
  ck_assert_int_eq(ljm_lc_forked(S(INHERITED_ON)), S(INHERITED_ON));
  ck_assert_int_eq(ljm_lc_forked(S(IDLE)), S(INHERITED_OFF));
  ck_assert_int_eq(ljm_lc_forked(S(HALTED)), S(INHERITED_OFF));
  ck_assert_int_eq(ljm_lc_forked(S(INHERITED_OFF)), S(INHERITED_OFF));
  ck_assert_int_eq(ljm_lc_forked(S(FINISHING)), S(FINISHING));
  ck_assert_int_eq(ljm_lc_forked(S(DONE)), S(DONE));
  for (st = S(IDLE); st <= S(DONE); st++) {
    int on = st == S(RUNNING) || st == S(CAPPED) || st == S(BROKEN) ||
	     st == S(INHERITED_ON);
    ck_assert_int_eq(ljm_lc_attached(st), on);
    ck_assert_int_eq(ljm_lc_writing(st), st == S(RUNNING) || st == S(CAPPED));
    ck_assert_int_eq(ljm_lc_waits(st, 1), st == S(IDLE) || st == S(HALTED));
    ck_assert_int_eq(ljm_lc_waits(st, 0), 0);
    ck_assert_str_ne(ljm_lc_name(st), "?");
  }
  ck_assert_str_eq(ljm_lc_name((enum ljm_vm_state)99), "?");
}
END_TEST

/* Whatever the inputs, a decision is one of the documented shapes. */
START_TEST(lifecycle_total)
{
  enum ljm_vm_state st;
  unsigned bits;
  for (st = S(IDLE); st <= S(DONE); st++)
    for (bits = 0; bits < 32; bits++) {
      struct ljm_lc_in in = { st, bits & 1, (bits >> 1) & 1, (bits >> 2) & 1,
			      (bits >> 3) & 1, (bits >> 4) & 1 };
      struct ljm_lc_out o = ljm_lc_decide(&in);
      if (o.act & (A(IGNORE) | A(FINISH)))
	ck_assert_msg((o.act & ~(A(IGNORE) | A(FINISH))) == 0, "mixed");
      if (o.act & A(IGNORE))
	ck_assert_int_eq(o.next, st);
      if (in.closing && !(o.act & A(IGNORE)))
	ck_assert_int_eq(o.next, S(DONE));
      if (!in.closing)
	ck_assert(!(o.act & A(END)));
      if (o.act & A(START))
	ck_assert(in.want);
      if (o.act & A(DISOWN))
	ck_assert(st == S(INHERITED_ON) || st == S(INHERITED_OFF));
      ck_assert_msg((o.next != S(INHERITED_ON) &&
		     o.next != S(INHERITED_OFF) && o.next != S(FINISHING)) ||
		    (o.act & A(IGNORE)),
		    "%s: to %s", ljm_lc_name(st), ljm_lc_name(o.next));
    }
}
END_TEST

/* -- Main ------------------------------------------------------------------- */

static Suite *suite(void)
{
  Suite *s = suite_create("shim core");
  TCase *tc = tcase_create("config");
  tcase_add_test(tc, table_is_complete);
  tcase_add_test(tc, examples_parse);
  tcase_add_test(tc, defaults_match_the_table);
  tcase_add_test(tc, bad_values_are_reported);
  tcase_add_test(tc, ranges);
  tcase_add_test(tc, parsers);
  tcase_add_test(tc, unset_means_nothing);
  tcase_add_test(tc, start_off_needs_a_signal);
  tcase_add_test(tc, show_round_trips);
  suite_add_tcase(s, tc);
  tc = tcase_create("outpath");
  tcase_add_test(tc, names);
  tcase_add_test(tc, names_are_unique);
  tcase_add_test(tc, names_match);
  tcase_add_test(tc, templates);
  suite_add_tcase(s, tc);
  tc = tcase_create("writer");
  tcase_add_unchecked_fixture(tc, mk_tmpdir, rm_tmpdir);
  tcase_add_test(tc, writer_writes);
  tcase_add_test(tc, writer_never_truncates);
  tcase_add_test(tc, writer_no_symlinks);
  tcase_add_test(tc, writer_mode);
  tcase_add_test(tc, writer_locked_before_seen);
  tcase_add_test(tc, writer_next_name);
  tcase_add_test(tc, writer_errors);
  tcase_add_test(tc, writer_fifo);
  tcase_add_test(tc, writer_fifo_owner);
  tcase_add_test(tc, writer_fifo_sigpipe);
  tcase_add_test(tc, writer_lock);
  tcase_add_test(tc, writer_not_stdout);
  tcase_add_test(tc, manifest);
  suite_add_tcase(s, tc);
  tc = tcase_create("lifecycle");
  tcase_add_test(tc, lifecycle_safe_points);
  tcase_add_test(tc, lifecycle_exit);
  tcase_add_test(tc, lifecycle_close);
  tcase_add_test(tc, lifecycle_helpers);
  tcase_add_test(tc, lifecycle_total);
  suite_add_tcase(s, tc);
  tc = tcase_create("misc");
  tcase_add_test(tc, elf);
  tcase_add_test(tc, policy);
  tcase_add_test(tc, messages);
  tcase_add_test(tc, messages_repeat);
  tcase_add_test(tc, signal_deliverable);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(suite());
  int failed;
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
