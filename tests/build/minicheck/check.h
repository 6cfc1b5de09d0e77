/*
** A stand-in for Check's <check.h>, for cross builds only: Debian's cross
** toolchains come without libcheck for the target, and a foreign
** architecture's libcheck-dev cannot be installed without changing the
** machine's dpkg configuration. tests/build/cross.test compiles
** tests/profiler/check_memprof.c unchanged against this header, for arm64
** and i386, and runs it under qemu-user.
**
** It implements what check_memprof.c uses, with Check's semantics where
** they matter: each test runs in a child process of its own (fork), after
** its test case's checked fixture; a failed assertion ends the child; a
** test is killed after its test case's timeout (tcase_set_timeout, times
** CK_TIMEOUT_MULTIPLIER, as in Check); CK_RUN_CASE runs one test case
** only, CK_RUN_TEST (not Check's) the tests of that name only; CK_FORK=no
** runs the first test selected in this process, for a debugger, and
** exits with it; the summary line reads as Check's CK_NORMAL one. Everything is
** static and in this header: the program that includes it is the only
** one, and needs no library.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef LJMPROF_MINICHECK_H
#define LJMPROF_MINICHECK_H

#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum print_output { CK_SILENT, CK_MINIMAL, CK_NORMAL, CK_VERBOSE };

typedef struct TTest {
  const char *name;
  void (*fn)(int);
  const char *file;
  int line;
} TTest;

#define START_TEST(name) \
  static void name##_fn(int _i); \
  static const TTest name##_ttest = { #name, name##_fn, __FILE__, __LINE__ }; \
  static const TTest *const name = &name##_ttest; \
  static void name##_fn(int _i __attribute__((unused)))
#define END_TEST

typedef void (*SFun)(void);

#define MC_MAXTESTS 256
/* A failed assertion's exit status, told from any other exit. */
#define MC_FAILED 101
typedef struct TCase {
  const char *name;
  double timeout;
  SFun setup, teardown;
  int n;
  const TTest *tests[MC_MAXTESTS];
  struct TCase *next;
} TCase;

typedef struct Suite {
  const char *name;
  TCase *first, *last;
} Suite;

typedef struct SRunner {
  Suite *s;
  int run, failed, errors;
} SRunner;

/* The test running in this (child) process, for the failure messages. */
static const char *mc_case_name = "";
static const char *mc_test_name = "";

static void mc_oom(void)
{
  fputs("minicheck: out of memory\n", stderr);
  abort();
}

static __attribute__((unused)) Suite *suite_create(const char *name)
{
  Suite *s = calloc(1, sizeof(*s));
  if (!s) mc_oom();
  s->name = name;
  return s;
}

static __attribute__((unused)) TCase *tcase_create(const char *name)
{
  TCase *tc = calloc(1, sizeof(*tc));
  const char *d = getenv("CK_DEFAULT_TIMEOUT");
  if (!tc) mc_oom();
  tc->name = name;
  tc->timeout = d ? atof(d) : 4;
  return tc;
}

static __attribute__((unused)) void tcase_set_timeout(TCase *tc, double t)
{
  tc->timeout = t;
}

static __attribute__((unused)) void tcase_add_checked_fixture(TCase *tc, SFun setup, SFun teardown)
{
  tc->setup = setup;
  tc->teardown = teardown;
}

#define tcase_add_test(tc, t) mc_add_test((tc), (t))
static __attribute__((unused)) void mc_add_test(TCase *tc, const TTest *t)
{
  if (tc->n == MC_MAXTESTS) {
    fprintf(stderr, "minicheck: more than %d tests in %s\n", MC_MAXTESTS, tc->name);
    exit(EXIT_FAILURE);
  }
  tc->tests[tc->n++] = t;
}

static __attribute__((unused)) void suite_add_tcase(Suite *s, TCase *tc)
{
  if (s->last) s->last->next = tc; else s->first = tc;
  s->last = tc;
}

static __attribute__((unused)) SRunner *srunner_create(Suite *s)
{
  SRunner *sr = calloc(1, sizeof(*sr));
  if (!sr) mc_oom();
  sr->s = s;
  return sr;
}

static __attribute__((unused)) void srunner_free(SRunner *sr)
{
  free(sr);
}

static __attribute__((unused)) int srunner_ntests_failed(SRunner *sr)
{
  return sr->failed + sr->errors;
}

static double mc_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One test in a child: 0 passed, 1 failed, 2 error (signal, timeout). */
static int mc_run_one(const TCase *tc, const TTest *t, int verbose)
{
  const char *m = getenv("CK_TIMEOUT_MULTIPLIER");
  const char *fk = getenv("CK_FORK");
  double limit = tc->timeout * (m ? atof(m) : 1), t0 = mc_now();
  int status;
  pid_t pid;
  fflush(NULL);
  /* CK_FORK=no, as Check has it: in this process (for a debugger). */
  pid = fk && !strcmp(fk, "no") ? 0 : fork();
  if (pid < 0) { perror("minicheck: fork"); exit(EXIT_FAILURE); }
  if (pid == 0) {
    mc_case_name = tc->name;
    mc_test_name = t->name;
    if (tc->setup) tc->setup();
    t->fn(0);
    if (tc->teardown) tc->teardown();
    fflush(NULL);
    exit(EXIT_SUCCESS);
  }
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0) { perror("minicheck: waitpid"); exit(EXIT_FAILURE); }
    if (limit > 0 && mc_now() - t0 > limit) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      fprintf(stderr, "%s:%d:E:%s:%s:0: (after this point) Test timeout expired (%.0f s)\n",
	      t->file, t->line, tc->name, t->name, limit);
      return 2;
    }
    usleep(20000);
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    if (verbose)
      printf("%s:%d:P:%s:%s:0: Passed (%.1f s)\n", t->file, t->line, tc->name,
	     t->name, mc_now() - t0);
    return 0;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == MC_FAILED)
    return 1; /* The child said why. */
  if (WIFEXITED(status)) { /* As Check's: exit, a LuaJIT panic's. */
    fprintf(stderr, "%s:%d:E:%s:%s:0: (after this point) Early exit with return value %d\n",
	    t->file, t->line, tc->name, t->name, WEXITSTATUS(status));
    return 2;
  }
  fprintf(stderr, "%s:%d:E:%s:%s:0: (after this point) Received signal %d (%s)\n",
	  t->file, t->line, tc->name, t->name, WTERMSIG(status),
	  strsignal(WTERMSIG(status)));
  return 2;
}

static __attribute__((unused)) void srunner_run_all(SRunner *sr, enum print_output mode)
{
  const char *only = getenv("CK_RUN_CASE");
  const char *onlyt = getenv("CK_RUN_TEST");  /* Not Check's: one test. */
  const char *v = getenv("CK_VERBOSITY");
  int verbose = mode == CK_VERBOSE || (v && !strcmp(v, "verbose"));
  const TCase *tc;
  int i, passed;
  printf("Running suite(s): %s\n", sr->s->name);
  for (tc = sr->s->first; tc; tc = tc->next) {
    if (only && strcmp(only, tc->name)) continue;
    for (i = 0; i < tc->n; i++) {
      int r;
      if (onlyt && strcmp(onlyt, tc->tests[i]->name)) continue;
      r = mc_run_one(tc, tc->tests[i], verbose);
      sr->run++;
      if (r == 1) sr->failed++; else if (r == 2) sr->errors++;
    }
  }
  passed = sr->run - sr->failed - sr->errors;
  if (mode != CK_SILENT)
    printf("%d%%: Checks: %d, Failures: %d, Errors: %d\n",
	   sr->run ? passed * 100 / sr->run : 0, sr->run, sr->failed, sr->errors);
  fflush(stdout);
}

/* -- Assertions (in the child) ---------------------------------------------- */

static __attribute__((unused, noreturn, format(printf, 3, 4)))
void mc_fail(const char *file, int line, const char *fmt, ...)
{
  va_list ap;
  fflush(stdout);
  fprintf(stderr, "%s:%d:F:%s:%s:0: ", file, line, mc_case_name, mc_test_name);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  fflush(stderr);
  _exit(MC_FAILED);
}

#define ck_assert_msg(expr, ...) \
  ((expr) ? (void)0 : mc_fail(__FILE__, __LINE__, __VA_ARGS__))
#define ck_assert(expr) \
  ck_assert_msg((expr), "Assertion '%s' failed", #expr)
#define ck_abort_msg(...) mc_fail(__FILE__, __LINE__, __VA_ARGS__)
#define ck_abort() mc_fail(__FILE__, __LINE__, "Failed")

#define mc_cmp(T, FMT, X, OP, Y) do { \
  T x_ = (X), y_ = (Y); \
  ck_assert_msg(x_ OP y_, "Assertion '%s' failed: %s == %" FMT ", %s == %" FMT, \
		#X " " #OP " " #Y, #X, x_, #Y, y_); \
} while (0)
#define ck_assert_int_eq(X, Y) mc_cmp(intmax_t, PRIdMAX, X, ==, Y)
#define ck_assert_int_ne(X, Y) mc_cmp(intmax_t, PRIdMAX, X, !=, Y)
#define ck_assert_int_lt(X, Y) mc_cmp(intmax_t, PRIdMAX, X, <, Y)
#define ck_assert_int_le(X, Y) mc_cmp(intmax_t, PRIdMAX, X, <=, Y)
#define ck_assert_int_gt(X, Y) mc_cmp(intmax_t, PRIdMAX, X, >, Y)
#define ck_assert_int_ge(X, Y) mc_cmp(intmax_t, PRIdMAX, X, >=, Y)
#define ck_assert_uint_eq(X, Y) mc_cmp(uintmax_t, PRIuMAX, X, ==, Y)
#define ck_assert_uint_ne(X, Y) mc_cmp(uintmax_t, PRIuMAX, X, !=, Y)
#define ck_assert_uint_lt(X, Y) mc_cmp(uintmax_t, PRIuMAX, X, <, Y)
#define ck_assert_uint_le(X, Y) mc_cmp(uintmax_t, PRIuMAX, X, <=, Y)
#define ck_assert_uint_gt(X, Y) mc_cmp(uintmax_t, PRIuMAX, X, >, Y)
#define ck_assert_uint_ge(X, Y) mc_cmp(uintmax_t, PRIuMAX, X, >=, Y)
typedef const void *mc_ptr;
#define ck_assert_ptr_eq(X, Y) mc_cmp(mc_ptr, "p", X, ==, Y)
#define ck_assert_ptr_ne(X, Y) mc_cmp(mc_ptr, "p", X, !=, Y)
#define ck_assert_ptr_nonnull(X) do { \
  const void *p_ = (X); \
  ck_assert_msg(p_ != NULL, "Assertion '%s' failed: %s == %p", \
		#X " != NULL", #X, p_); \
} while (0)
#define ck_assert_ptr_null(X) do { \
  const void *p_ = (X); \
  ck_assert_msg(p_ == NULL, "Assertion '%s' failed: %s == %p", \
		#X " == NULL", #X, p_); \
} while (0)
#define ck_assert_str_eq(X, Y) do { \
  const char *x_ = (X), *y_ = (Y); \
  ck_assert_msg(x_ && y_ && !strcmp(x_, y_), \
		"Assertion '%s' failed: %s == \"%s\", %s == \"%s\"", \
		#X " == " #Y, #X, x_ ? x_ : "(null)", #Y, y_ ? y_ : "(null)"); \
} while (0)
#define mark_point() ((void)0)

#endif
