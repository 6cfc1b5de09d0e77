/*
** Unit tests of `ljmprof diff`'s core (tools/report/mp_diff.c): two
** crafted streams of "one program", run twice, with other addresses and
** other trace numbers; the keys match what the locations are, and the
** arithmetic, the order and the outputs are what the events say.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lj_memprof_format.h"
#include "mp_diff.h"
#include "mp_reader.h"
#include "mp_writer.h"

/* The first run: a chunk, a C function, traces 1 (line 10) and 2 (line
** 20), all at one set of addresses. 248 bytes allocated. */
static void old_run(struct mpw *w)
{
  mpw_symtab_begin(w);
  mpw_symtab_lfunc(w, 0x1000, "@app.lua", 0);
  mpw_symtab_cfunc(w, 0x5000, "wrap_alloc");
  mpw_symtab_trace(w, 1, 0x1000, 10);
  mpw_symtab_trace(w, 2, 0x1000, 20);
  mpw_symtab_end(w);
  mpw_alloc(w, mpw_lua(0x1000, 5), 0x100, 100);		/* Held. */
  mpw_alloc(w, mpw_lua(0x1000, 6), 0x200, 50);
  mpw_free_ev(w, mpw_internal(), 0x200, 50);
  mpw_alloc(w, mpw_c(0x5000), 0x300, 30);
  mpw_alloc(w, mpw_trace(1), 0x400, 40);
  mpw_alloc(w, mpw_trace(2), 0x500, 4);
  mpw_alloc(w, mpw_trace(2), 0x510, 6);
  mpw_alloc(w, mpw_internal(), 0x600, 7);
  mpw_alloc(w, mpw_lua(0x1000, 8), 0x700, 11);		/* Gone in new. */
  mpw_epilogue(w);
}

/* The second run: everything elsewhere (ASLR), the traces numbered 5
** (line 10), 3 and 4 (both line 20, 4 + 6 bytes: as trace 2 allocated
** them); line 5 allocates 25 bytes more, line 9 is new, line 8 gone. */
static void new_run(struct mpw *w)
{
  mpw_symtab_begin(w);
  mpw_symtab_lfunc(w, 0x9000, "@app.lua", 0);
  mpw_symtab_cfunc(w, 0x7000, "wrap_alloc");
  mpw_symtab_trace(w, 3, 0x9000, 20);
  mpw_symtab_end(w);
  mpw_sym_trace(w, 4, 0x9000, 20);
  mpw_sym_trace(w, 5, 0x9000, 10);
  mpw_alloc(w, mpw_lua(0x9000, 5), 0x8100, 100);
  mpw_alloc(w, mpw_lua(0x9000, 5), 0x8110, 25);
  mpw_alloc(w, mpw_lua(0x9000, 6), 0x8200, 50);
  mpw_free_ev(w, mpw_internal(), 0x8200, 50);
  mpw_alloc(w, mpw_c(0x7000), 0x8300, 30);
  mpw_alloc(w, mpw_trace(5), 0x8400, 40);
  mpw_alloc(w, mpw_trace(3), 0x8500, 4);
  mpw_alloc(w, mpw_trace(4), 0x8510, 6);
  mpw_alloc(w, mpw_internal(), 0x8600, 7);
  mpw_alloc(w, mpw_lua(0x9000, 9), 0x8900, 13);	/* New. */
  mpw_epilogue(w);
}

/* A profile of one stream, ready for mp_diff_add. */
static struct mp_profile *profile_of(void (*run)(struct mpw *),
				     enum mp_group group)
{
  struct mp_profile *p = mp_profile_new(group, MP_PROFILE_NO_OVERRIDES);
  struct mp_reader *r;
  struct mpw w;
  uint64_t n;

  mpw_init_mem(&w);
  run(&w);
  r = mp_reader_new_mem(w.mem, w.len);
  ck_assert_ptr_nonnull(p);
  ck_assert_ptr_nonnull(r);
  ck_assert_int_eq(mp_profile_read(p, r, &n, NULL, NULL), MP_END);
  mp_profile_end_file(p, 0);
  mp_profile_done_reading(p);
  mp_reader_free(r);
  mpw_free(&w);
  return p;
}

static void diff_of(struct mp_diff *d, enum mp_diff_keys how,
		    enum mp_group group, void (*old)(struct mpw *),
		    void (*new_)(struct mpw *))
{
  struct mp_profile *a = profile_of(old, group), *b = profile_of(new_, group);
  mp_diff_init(d, how);
  ck_assert_int_eq(mp_diff_add(d, MP_DIFF_OLD, a), 0);
  ck_assert_int_eq(mp_diff_add(d, MP_DIFF_NEW, b), 0);
  mp_profile_delete(a);
  mp_profile_delete(b);
}

static const struct mp_diff_row *row(const struct mp_diff *d, const char *key)
{
  uint32_t i;
  for (i = 0; i < d->nrows; i++) {
    const struct mp_string *k = mp_diff_row_key(d, &d->rows[i]);
    if (k->len == strlen(key) && !memcmp(k->data, key, k->len))
      return &d->rows[i];
  }
  return NULL;
}

/* Each location is one row whichever its addresses and trace numbers;
** only the lines that changed differ. */
START_TEST(matches_what_locations_are)
{
  static const char *const same[] = {
    "@app.lua:6", "wrap_alloc", "TRACE started at @app.lua:10",
    "TRACE started at @app.lua:20", "INTERNAL"
  };
  const struct mp_diff_row *r;
  struct mp_diff d;
  size_t i;

  diff_of(&d, MP_DIFF_KEY_NAME, MP_GROUP_LINE, old_run, new_run);
  /* 5, 6, 8, 9, C, two trace keys, INTERNAL: nothing by address. */
  ck_assert_uint_eq(d.nrows, 8);
  for (i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
    r = row(&d, same[i]);
    ck_assert_msg(r != NULL, "no row %s", same[i]);
    ck_assert(r->in[0] && r->in[1]);
    ck_assert_msg(!mp_diff_row_changed(r), "%s changed", same[i]);
  }
  /* Traces 3 and 4 both start at line 20: one key, their sum. */
  r = row(&d, "TRACE started at @app.lua:20");
  ck_assert_uint_eq(r->side[1].alloc_bytes, 10);
  ck_assert_uint_eq(r->side[1].allocs, 2);

  r = row(&d, "@app.lua:5");
  ck_assert_ptr_nonnull(r);
  ck_assert_uint_eq(r->side[0].alloc_bytes, 100);
  ck_assert_uint_eq(r->side[1].alloc_bytes, 125);
  ck_assert_uint_eq(r->side[1].allocs, 2);
  ck_assert_uint_eq(r->side[1].held_bytes, 125);
  ck_assert_uint_eq(r->side[1].held_blocks, 2);
  r = row(&d, "@app.lua:9");
  ck_assert(r && !r->in[0] && r->in[1] && r->side[1].alloc_bytes == 13);
  r = row(&d, "@app.lua:8");
  ck_assert(r && r->in[0] && !r->in[1] && r->side[0].held_bytes == 11);

  ck_assert_uint_eq(d.total[0].alloc_bytes, 248);
  ck_assert_uint_eq(d.total[1].alloc_bytes, 275);
  ck_assert_uint_eq(d.total[0].held_bytes, 198);
  ck_assert_uint_eq(d.total[1].held_bytes, 225);
  mp_diff_free(&d);
}
END_TEST

/* Signed changes without overflow, and the order: largest growth first,
** largest shrink last. */
START_TEST(deltas_and_order)
{
  struct mp_diff_counts a = {10, 1, UINT64_MAX, 0}, b = {3, 1, 0, 0};
  struct mp_diff d;
  uint32_t idx[8], n = 0, i;
  uint64_t mag;

  ck_assert_int_eq(mp_diff_delta(&a, &b, MP_VALUE_ALLOC_BYTES, &mag), -1);
  ck_assert_uint_eq(mag, 7);
  ck_assert_int_eq(mp_diff_delta(&b, &a, MP_VALUE_ALLOC_BYTES, &mag), 1);
  ck_assert_uint_eq(mag, 7);
  ck_assert_int_eq(mp_diff_delta(&a, &b, MP_VALUE_ALLOC_COUNT, &mag), 0);
  ck_assert_int_eq(mp_diff_delta(&a, &b, MP_VALUE_HELD_BYTES, &mag), -1);
  ck_assert_uint_eq(mag, UINT64_MAX);

  diff_of(&d, MP_DIFF_KEY_NAME, MP_GROUP_LINE, old_run, new_run);
  for (i = 0; i < d.nrows; i++)
    if (mp_diff_row_changed(&d.rows[i]))
      idx[n++] = i;
  ck_assert_uint_eq(n, 3);
  mp_diff_sort(&d, idx, n, MP_VALUE_ALLOC_BYTES);
  ck_assert_str_eq(mp_diff_row_key(&d, &d.rows[idx[0]])->data, "@app.lua:5");
  ck_assert_str_eq(mp_diff_row_key(&d, &d.rows[idx[1]])->data, "@app.lua:9");
  ck_assert_str_eq(mp_diff_row_key(&d, &d.rows[idx[2]])->data, "@app.lua:8");
  mp_diff_free(&d);
}
END_TEST

/* Another program: no Lua location in common, said by the CLI. */
static void other_program(struct mpw *w)
{
  mpw_symtab_begin(w);
  mpw_symtab_lfunc(w, 0x9000, "@other.lua", 0);
  mpw_symtab_end(w);
  mpw_alloc(w, mpw_lua(0x9000, 5), 0x8100, 100);
  mpw_alloc(w, mpw_internal(), 0x8600, 7);
  mpw_epilogue(w);
}

START_TEST(lua_in_common)
{
  struct mp_diff d;
  int has[2];
  diff_of(&d, MP_DIFF_KEY_NAME, MP_GROUP_LINE, old_run, new_run);
  /* Lines 5 and 6, the two trace keys. */
  ck_assert_uint_eq(mp_diff_lua_shared(&d, has), 4);
  ck_assert(has[0] && has[1]);
  mp_diff_free(&d);
  diff_of(&d, MP_DIFF_KEY_NAME, MP_GROUP_LINE, old_run, other_program);
  ck_assert_uint_eq(mp_diff_lua_shared(&d, has), 0);
  ck_assert(has[0] && has[1]);
  mp_diff_free(&d);
}
END_TEST

/* A run against itself: nothing changed. */
START_TEST(same_run_is_all_zero)
{
  struct mp_diff d;
  uint32_t i;
  diff_of(&d, MP_DIFF_KEY_NAME, MP_GROUP_LINE, new_run, new_run);
  for (i = 0; i < d.nrows; i++)
    ck_assert(!mp_diff_row_changed(&d.rows[i]));
  ck_assert_uint_eq(d.total[0].alloc_bytes, d.total[1].alloc_bytes);
  mp_diff_free(&d);
}
END_TEST

/* By function, the traces go into their function: one row for app.lua's
** main chunk, and the C function's. */
START_TEST(group_function)
{
  const struct mp_diff_row *r;
  struct mp_diff d;
  diff_of(&d, MP_DIFF_KEY_NAME, MP_GROUP_FUNCTION, old_run, new_run);
  r = row(&d, "@app.lua:0");
  ck_assert_ptr_nonnull(r);
  ck_assert_uint_eq(r->side[0].alloc_bytes, 100 + 50 + 40 + 10 + 11);
  ck_assert_uint_eq(r->side[1].alloc_bytes, 125 + 50 + 40 + 10 + 13);
  ck_assert_ptr_nonnull(row(&d, "wrap_alloc"));
  ck_assert_ptr_nonnull(row(&d, "INTERNAL"));
  ck_assert_uint_eq(d.nrows, 3);
  mp_diff_free(&d);
}
END_TEST

/* What a writer prints, in memory. */
static char *output_of(int (*fn)(FILE *, const struct mp_diff *,
				 const struct mp_diff_opts *),
		       const struct mp_diff *d, const struct mp_diff_opts *o)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(fn(f, d, o), 0);
  fclose(f);
  return buf;
}

static void opts_for(struct mp_diff_opts *o)
{
  static const char *const a[] = {"old.bin"}, *const b[] = {"new.bin"};
  memset(o, 0, sizeof(*o));
  o->side[0].files = a;
  o->side[1].files = b;
  o->side[0].nfiles = o->side[1].nfiles = 1;
  o->side[0].at_event = o->side[1].at_event = -1;
}

START_TEST(text_table)
{
  struct mp_diff_opts o;
  struct mp_diff d;
  char *t;

  diff_of(&d, MP_DIFF_KEY_NAME, MP_GROUP_LINE, old_run, new_run);
  opts_for(&o);
  t = output_of(mp_diff_text, &d, &o);
  ck_assert_msg(strstr(t,
    "GREW (by allocated bytes)\n"
    "    ALLOCATED     ALLOCS         HELD  LOCATION\n"
    "         +25B         +1         +25B  @app.lua:5\n"
    "         +13B         +1         +13B  @app.lua:9 (new)\n"
    "\nSHRANK (by allocated bytes)\n"
    "    ALLOCATED     ALLOCS         HELD  LOCATION\n"
    "         -11B         -1         -11B  @app.lua:8 (gone)\n") != NULL,
    "%s", t);
  ck_assert_msg(strstr(t, "TOTAL: allocated +27B (248B -> 275B), "
		       "allocations +1 (8 -> 9), held +27B (198B -> 225B)\n"
		       "UNCHANGED: 5 locations\n") != NULL, "%s", t);
  free(t);
  /* --top=1: one line a section. */
  o.top = 1;
  t = output_of(mp_diff_text, &d, &o);
  ck_assert_ptr_null(strstr(t, "@app.lua:9"));
  ck_assert_ptr_nonnull(strstr(t, "@app.lua:8 (gone)"));
  free(t);
  mp_diff_free(&d);
}
END_TEST

START_TEST(json_and_folded)
{
  struct mp_diff_opts o;
  struct mp_diff d;
  char *t;

  diff_of(&d, MP_DIFF_KEY_NAME, MP_GROUP_LINE, old_run, new_run);
  opts_for(&o);
  t = output_of(mp_diff_json, &d, &o);
  ck_assert_ptr_nonnull(strstr(t, "\"schema\": \"ljmprof-diff\""));
  ck_assert_ptr_nonnull(strstr(t, "{\"name\": \"@app.lua:8\", \"section\": "
			       "\"shrank\", \"status\": \"gone\""));
  ck_assert_ptr_nonnull(strstr(t, "\"delta\": {\"alloc_bytes\": -11, "
			       "\"allocs\": -1, \"held_bytes\": -11, "
			       "\"held_blocks\": -1}"));
  free(t);
  mp_diff_free(&d);

  /* Folded: frames, OLD and NEW; traces under JIT by where they start. */
  diff_of(&d, MP_DIFF_KEY_FRAMES, MP_GROUP_FRAMES, old_run, new_run);
  o.group = MP_GROUP_LINE;
  t = output_of(mp_diff_folded, &d, &o);
  ck_assert_msg(strstr(t, "@app.lua;main @app.lua;@app.lua:5 100 125\n") &&
		strstr(t, "@app.lua;main @app.lua;@app.lua:8 11 0\n") &&
		strstr(t, "@app.lua;main @app.lua;@app.lua:9 0 13\n") &&
		strstr(t, "JIT;TRACE started at @app.lua:20 10 10\n") &&
		strstr(t, "C;wrap_alloc 30 30\n") &&
		strstr(t, "INTERNAL 7 7\n"), "%s", t);
  free(t);
  mp_diff_free(&d);
}
END_TEST

/* Names from the program reach a terminal escaped, as report's. */
static void escaping_run(struct mpw *w)
{
  mpw_symtab_begin(w);
  mpw_symtab_lfunc(w, 0x1000, "@\x1b[2J.lua", 0);
  mpw_symtab_end(w);
  mpw_alloc(w, mpw_lua(0x1000, 5), 0x100, 100);
  mpw_epilogue(w);
}

START_TEST(text_escapes_names)
{
  struct mp_diff_opts o;
  struct mp_diff d;
  char *t;
  diff_of(&d, MP_DIFF_KEY_NAME, MP_GROUP_LINE, old_run, escaping_run);
  opts_for(&o);
  t = output_of(mp_diff_text, &d, &o);
  ck_assert_ptr_null(strchr(t, 0x1b));
  ck_assert_ptr_nonnull(strstr(t, "  @\\x1b[2J.lua:5 (new)\n"));
  free(t);
  mp_diff_free(&d);
}
END_TEST

/* Two runs with call stacks: other addresses, other trace numbers. Line
** 12 of lib.lua is reached from app.lua:30 and app.lua:40; the second
** run allocates 200 bytes more through app.lua:40, and its trace (1,
** then 7) 100 more. A C function and a built-in under app.lua:30. */
static void stack_run(struct mpw *w, int second)
{
  uint64_t app = second ? 0x9000 : 0x1000, lib = second ? 0xa000 : 0x2000;
  uint64_t cf = second ? 0x7000 : 0x5000, tr = second ? 7 : 1;
  uint64_t m30, m40, n;
  int i;

  mpw_symtab_begin_ext(w);
  mpw_symtab_lfunc(w, app, "@app.lua", 0);
  mpw_symtab_lfunc(w, lib, "@lib.lua", 10);
  mpw_symtab_cfunc(w, cf, "wrap_alloc");
  if (second)
    mpw_symtab_trace(w, 3, lib, 15);	/* Renumbers the next. */
  mpw_symtab_trace(w, tr, lib, 12);
  mpw_symtab_end(w);
  m30 = mpw_node_lua(w, 0, app, 30, "");
  m40 = mpw_node_lua(w, 0, app, 40, "");
  n = mpw_node_lua(w, m30, lib, 12, "fill");
  mpw_alloc(w, mpw_stack(n), 0x100, 100);
  n = mpw_node_lua(w, m40, lib, 12, "fill");
  for (i = 0; i < (second ? 3 : 1); i++)
    mpw_alloc(w, mpw_stack(n), 0x200 + 0x10 * (uint64_t)i, 100);
  n = mpw_node_trace(w, m40, tr, 0);
  mpw_alloc(w, mpw_stack(n), 0x300, 50);
  if (second)
    mpw_alloc(w, mpw_stack(n), 0x310, 100);
  n = mpw_node_c(w, m30, cf);
  mpw_alloc(w, mpw_stack(n), 0x400, 30);
  n = mpw_node_fast(w, m30, 87, "string.rep");
  mpw_alloc(w, mpw_stack(n), 0x500, 20);
  mpw_epilogue(w);
}

static void stack_old(struct mpw *w)
{
  stack_run(w, 0);
}

static void stack_new(struct mpw *w)
{
  stack_run(w, 1);
}

static const struct mp_diff_row *path(const struct mp_diff *d,
				      const char *key)
{
  uint32_t i;
  for (i = 0; i < d->npaths; i++) {
    const struct mp_string *k = mp_diff_path_key(d, &d->paths[i]);
    if (k->len == strlen(key) && !memcmp(k->data, key, k->len))
      return &d->paths[i];
  }
  return NULL;
}

/* Paths match frame by frame, by what each frame is; each is under the
** location its events are charged to, and the outputs show them. */
START_TEST(paths_match_frame_by_frame)
{
  static const char *const same[] = {
    "@app.lua:30;@lib.lua:12 (fill)", "@app.lua:30;wrap_alloc",
    "@app.lua:30;string.rep"
  };
  const struct mp_diff_row *r;
  struct mp_diff_opts o;
  struct mp_diff d;
  size_t i;
  char *t;

  diff_of(&d, MP_DIFF_KEY_NAME, MP_GROUP_LINE, stack_old, stack_new);
  ck_assert(mp_diff_by_path(&d));
  ck_assert_uint_eq(d.npaths, 5);
  for (i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
    r = path(&d, same[i]);
    ck_assert_msg(r != NULL, "no path %s", same[i]);
    ck_assert(r->in[0] && r->in[1] && !mp_diff_row_changed(r));
  }
  r = path(&d, "@app.lua:40;@lib.lua:12 (fill)");
  ck_assert_ptr_nonnull(r);
  ck_assert_uint_eq(r->side[0].allocs, 1);
  ck_assert_uint_eq(r->side[1].alloc_bytes, 300);
  ck_assert_ptr_eq(&d.rows[r->loc], row(&d, "@lib.lua:12"));
  r = path(&d, "@app.lua:40;TRACE started at @lib.lua:12");
  ck_assert_ptr_nonnull(r);
  ck_assert_uint_eq(r->side[0].alloc_bytes, 50);
  ck_assert_uint_eq(r->side[1].alloc_bytes, 150);
  ck_assert_ptr_eq(&d.rows[r->loc], row(&d, "TRACE started at @lib.lua:12"));
  /* A built-in's events are its caller's line's. */
  ck_assert_ptr_eq(&d.rows[path(&d, "@app.lua:30;string.rep")->loc],
		   row(&d, "@app.lua:30"));

  opts_for(&o);
  o.callers = 3;
  t = output_of(mp_diff_text, &d, &o);
  ck_assert_msg(strstr(t,
    "        +200B         +2        +200B  @lib.lua:12\n"
    "\tCall paths:\n"
    "\t        +200B         +2        +200B  @lib.lua:12 (fill) <- "
    "@app.lua:40\n"
    "        +100B         +1        +100B  TRACE started at @lib.lua:12\n"
    "\tCall paths:\n"
    "\t        +100B         +1        +100B  TRACE started at @lib.lua:12"
    " <- @app.lua:40\n") != NULL, "%s", t);
  free(t);
  o.callers = 0;
  t = output_of(mp_diff_text, &d, &o);
  ck_assert_ptr_null(strstr(t, "Call paths"));
  free(t);
  t = output_of(mp_diff_json, &d, &o);
  ck_assert_msg(strstr(t, "\"by_path\": true") &&
		strstr(t, "\"paths\": [\n       {\"stack\": [\"@app.lua:40\", "
		       "\"@lib.lua:12 (fill)\"], \"status\": \"both\"") &&
		!strstr(t, "wrap_alloc"), "%s", t);
  free(t);
  t = output_of(mp_diff_folded, &d, &o);
  ck_assert_msg(strstr(t, "@app.lua:40;@lib.lua:12 (fill) 100 300\n") &&
		strstr(t, "@app.lua:40;TRACE started at @lib.lua:12 50 150\n") &&
		strstr(t, "@app.lua:30;wrap_alloc 30 30\n"), "%s", t);
  free(t);
  mp_diff_free(&d);

  /* One side without stacks: by location only. */
  diff_of(&d, MP_DIFF_KEY_NAME, MP_GROUP_LINE, stack_old, old_run);
  ck_assert(!mp_diff_by_path(&d));
  t = output_of(mp_diff_json, &d, &o);
  ck_assert_ptr_nonnull(strstr(t, "\"by_path\": false"));
  ck_assert_ptr_null(strstr(t, "\"paths\""));
  free(t);
  mp_diff_free(&d);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("diff");
  TCase *tc = tcase_create("core");
  SRunner *sr;
  int failed;

  tcase_add_test(tc, matches_what_locations_are);
  tcase_add_test(tc, deltas_and_order);
  tcase_add_test(tc, same_run_is_all_zero);
  tcase_add_test(tc, group_function);
  tcase_add_test(tc, text_table);
  tcase_add_test(tc, json_and_folded);
  tcase_add_test(tc, lua_in_common);
  tcase_add_test(tc, text_escapes_names);
  tcase_add_test(tc, paths_match_frame_by_frame);
  suite_add_tcase(s, tc);
  sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
