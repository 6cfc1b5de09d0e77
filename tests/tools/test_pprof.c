/*
** Unit tests of --format=pprof: the builder (mp_pprof.h) on a tiny
** profile, and the report over a stream, each decoded again with zlib
** and protobuf-c's unpack of the same pprof.proto.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "lj_memprof_format.h"
#include "mp_pprof.h"
#include "mp_profile.h"
#include "mp_reader.h"
#include "mp_report.h"
#include "mp_writer.h"
#include "tools/report/pprof.pb-c.h"

typedef Perftools__Profiles__Profile Profile;

/* The bytes of f, from its start. */
static uint8_t *slurp(FILE *f, size_t *len)
{
  long n;
  uint8_t *buf;

  ck_assert_int_eq(fflush(f), 0);
  ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
  n = ftell(f);
  ck_assert_int_gt(n, 0);
  rewind(f);
  buf = malloc((size_t)n);
  ck_assert_ptr_nonnull(buf);
  ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
  *len = (size_t)n;
  return buf;
}

/* Gunzip the whole of f (one gzip member, nothing after it) and unpack
** the profile. */
static Profile *decode(FILE *f)
{
  size_t zlen, cap = 1 << 16, len = 0;
  uint8_t *z = slurp(f, &zlen), *raw = malloc(cap);
  z_stream s;
  int rc;
  Profile *p;

  ck_assert_ptr_nonnull(raw);
  ck_assert_uint_ge(zlen, 18);
  ck_assert_uint_eq(z[0], 0x1f);	/* The gzip magic. */
  ck_assert_uint_eq(z[1], 0x8b);
  memset(&s, 0, sizeof(s));
  ck_assert_int_eq(inflateInit2(&s, 16 + 15), Z_OK);
  s.next_in = z;
  s.avail_in = (uInt)zlen;
  do {
    if (len == cap) {
      cap *= 2;
      raw = realloc(raw, cap);
      ck_assert_ptr_nonnull(raw);
    }
    s.next_out = raw + len;
    s.avail_out = (uInt)(cap - len);
    rc = inflate(&s, Z_NO_FLUSH);
    ck_assert(rc == Z_OK || rc == Z_STREAM_END);
    len = cap - s.avail_out;
  } while (rc != Z_STREAM_END);
  ck_assert_uint_eq(s.avail_in, 0);
  inflateEnd(&s);
  p = perftools__profiles__profile__unpack(NULL, len, raw);
  ck_assert_ptr_nonnull(p);
  free(raw);
  free(z);
  return p;
}

static const char *str(const Profile *p, int64_t i)
{
  ck_assert_int_ge(i, 0);
  ck_assert_uint_lt((uint64_t)i, p->n_string_table);
  return p->string_table[i];
}

static const Perftools__Profiles__Location *loc(const Profile *p,
						 uint64_t id)
{
  size_t i;
  for (i = 0; i < p->n_location; i++)
    if (p->location[i]->id == id)
      return p->location[i];
  ck_abort_msg("no location %llu", (unsigned long long)id);
  return NULL;
}

static const Perftools__Profiles__Function *func(const Profile *p,
						 uint64_t id)
{
  size_t i;
  for (i = 0; i < p->n_function; i++)
    if (p->function[i]->id == id)
      return p->function[i];
  ck_abort_msg("no function %llu", (unsigned long long)id);
  return NULL;
}

/* What a Go heap profile has, whatever its samples. */
static void check_heap_profile(const Profile *p)
{
  static const char *const types[][2] = {
    {"alloc_objects", "count"}, {"alloc_space", "bytes"},
    {"inuse_objects", "count"}, {"inuse_space", "bytes"}
  };
  size_t i;

  ck_assert_uint_ge(p->n_string_table, 1);
  ck_assert_str_eq(p->string_table[0], "");
  ck_assert_uint_eq(p->n_sample_type, 4);
  for (i = 0; i < 4; i++) {
    ck_assert_str_eq(str(p, p->sample_type[i]->type), types[i][0]);
    ck_assert_str_eq(str(p, p->sample_type[i]->unit), types[i][1]);
  }
  ck_assert_str_eq(str(p, p->default_sample_type), "inuse_space");
  ck_assert_ptr_nonnull(p->period_type);
  ck_assert_str_eq(str(p, p->period_type->type), "space");
  ck_assert_str_eq(str(p, p->period_type->unit), "bytes");
  ck_assert_int_eq(p->period, 1);
  /* Already symbolized: pprof must not look for a binary. */
  ck_assert_uint_eq(p->n_mapping, 1);
  ck_assert(p->mapping[0]->has_functions);
  for (i = 0; i < p->n_location; i++) {
    ck_assert_uint_eq(p->location[i]->id, i + 1);
    ck_assert_uint_eq(p->location[i]->mapping_id, p->mapping[0]->id);
    ck_assert_uint_eq(p->location[i]->n_line, 1);
  }
  for (i = 0; i < p->n_function; i++)
    ck_assert_uint_eq(p->function[i]->id, i + 1);
  for (i = 0; i < p->n_sample; i++)
    ck_assert_uint_eq(p->sample[i]->n_value, 4);
}

/* The frame of sample s at depth d: function name, file, start line and
** line. */
static void check_frame(const Profile *p, size_t s, size_t d,
			const char *name, const char *file, int64_t start_line,
			int64_t line)
{
  const Perftools__Profiles__Location *l;
  const Perftools__Profiles__Function *f;

  ck_assert_uint_lt(s, p->n_sample);
  ck_assert_uint_lt(d, p->sample[s]->n_location_id);
  l = loc(p, p->sample[s]->location_id[d]);
  f = func(p, l->line[0]->function_id);
  ck_assert_str_eq(str(p, f->name), name);
  ck_assert_str_eq(str(p, f->filename), file);
  ck_assert_int_eq(f->start_line, start_line);
  ck_assert_int_eq(l->line[0]->line, line);
}

static void check_values(const Profile *p, size_t s, int64_t a0, int64_t a1,
			 int64_t a2, int64_t a3)
{
  const int64_t *v = p->sample[s]->value;
  ck_assert_int_eq(v[0], a0);
  ck_assert_int_eq(v[1], a1);
  ck_assert_int_eq(v[2], a2);
  ck_assert_int_eq(v[3], a3);
}

static struct mp_pprof_frame frame(const char *name, const char *sys,
				   const char *file, int64_t start,
				   int64_t line)
{
  struct mp_pprof_frame f;
  f.name.data = name;
  f.name.len = strlen(name);
  f.system_name.data = sys;
  f.system_name.len = sys ? strlen(sys) : 0;
  f.file.data = file;
  f.file.len = strlen(file);
  f.start_line = start;
  f.line = line;
  return f;
}

/* Samples leaf first; equal strings, functions and locations once. */
START_TEST(builder_dedups_and_keeps_stacks)
{
  struct mp_pprof *pp = mp_pprof_begin();
  struct mp_pprof_frame a[3], b[2];
  static const int64_t va[4] = {3, 300, 1, 100}, vb[4] = {5, 50, 0, 0};
  FILE *f = tmpfile();
  Profile *p;

  ck_assert_ptr_nonnull(pp);
  ck_assert_ptr_nonnull(f);
  /* leaf -> caller -> main; b shares the caller's function at another
  ** line, and a C function's name, told apart by its system name. */
  a[0] = frame("string.rep", NULL, "", 0, 0);
  a[1] = frame("@u.lua:10", NULL, "u.lua", 10, 12);
  a[2] = frame("@app.lua:0", NULL, "app.lua", 0, 3);
  b[0] = frame("@u.lua:10", NULL, "u.lua", 10, 14);
  b[1] = frame("f", "f:0x10", "", 0, 0);
  ck_assert_int_eq(mp_pprof_comment(pp, "hello", 5), 0);
  ck_assert_int_eq(mp_pprof_add_sample(pp, a, 3, va), 0);
  ck_assert_int_eq(mp_pprof_add_sample(pp, b, 2, vb), 0);
  b[1] = frame("f", "f:0x20", "", 0, 0);
  ck_assert_int_eq(mp_pprof_add_sample(pp, b, 2, vb), 0);
  ck_assert_int_eq(mp_pprof_add_sample(pp, a, 3, va), 0);
  ck_assert_int_eq(mp_pprof_finish(pp, f), 0);
  mp_pprof_free(pp);

  p = decode(f);
  check_heap_profile(p);
  ck_assert_uint_eq(p->n_sample, 4);
  /* string.rep, @u.lua:10, @app.lua:0, f (0x10), f (0x20). */
  ck_assert_uint_eq(p->n_function, 5);
  /* Those at their lines, @u.lua:10 at two. */
  ck_assert_uint_eq(p->n_location, 6);
  ck_assert_uint_eq(p->sample[0]->n_location_id, 3);
  check_frame(p, 0, 0, "string.rep", "", 0, 0);
  check_frame(p, 0, 1, "@u.lua:10", "u.lua", 10, 12);
  check_frame(p, 0, 2, "@app.lua:0", "app.lua", 0, 3);
  check_values(p, 0, 3, 300, 1, 100);
  ck_assert_uint_eq(p->sample[1]->n_location_id, 2);
  check_frame(p, 1, 0, "@u.lua:10", "u.lua", 10, 14);
  check_frame(p, 1, 1, "f", "", 0, 0);
  check_values(p, 1, 5, 50, 0, 0);
  ck_assert_uint_ne(p->sample[1]->location_id[1],
		    p->sample[2]->location_id[1]);
  ck_assert_str_eq(str(p, func(p, loc(p, p->sample[2]->location_id[1])
				  ->line[0]->function_id)->system_name),
		   "f:0x20");
  /* The same stack again: the same location ids. */
  ck_assert_mem_eq(p->sample[3]->location_id, p->sample[0]->location_id,
		   3 * sizeof(uint64_t));
  ck_assert_uint_eq(p->n_comment, 1);
  ck_assert_str_eq(str(p, p->comment[0]), "hello");
  perftools__profiles__profile__free_unpacked(p, NULL);
  fclose(f);
}
END_TEST

/* An empty profile is still a valid one. */
START_TEST(builder_empty_profile)
{
  struct mp_pprof *pp = mp_pprof_begin();
  FILE *f = tmpfile();
  Profile *p;

  ck_assert_int_eq(mp_pprof_finish(pp, f), 0);
  mp_pprof_free(pp);
  p = decode(f);
  check_heap_profile(p);
  ck_assert_uint_eq(p->n_sample, 0);
  ck_assert_uint_eq(p->n_location, 0);
  perftools__profiles__profile__free_unpacked(p, NULL);
  fclose(f);
}
END_TEST

/* A version-3 stream with every kind of location. */
static void kinds_stream(struct mpw *w)
{
  mpw_init_mem(w);
  mpw_symtab_begin(w);
  mpw_symtab_lfunc(w, 0x1000, "@app.lua", 0);
  mpw_symtab_lfunc(w, 0x2000, "@app.lua", 7);
  mpw_symtab_lfunc(w, 0x3000, "load\nme", 0);
  mpw_symtab_cfunc(w, 0x7000, "cfn");
  mpw_symtab_cfunc(w, 0x9000, "gfn");
  mpw_symtab_trace(w, 4, 0x2000, 9);
  mpw_symtab_end(w);
  /* @app.lua:0 at line 2: 100 held; @app.lua:7 at 8: 40 + 60, one
  ** freed; at 9: a realloc to 300; the trace: 16, freed by gfn. */
  mpw_alloc(w, mpw_lua(0x1000, 2), 0x10000, 100);
  mpw_alloc(w, mpw_lua(0x2000, 8), 0x20000, 40);
  mpw_alloc(w, mpw_lua(0x2000, 8), 0x30000, 60);
  mpw_free_ev(w, mpw_lua(0x2000, 8), 0x20000, 40);
  mpw_realloc(w, mpw_lua(0x2000, 9), 0x30000, 60, 0x40000, 300);
  mpw_alloc(w, mpw_trace(4), 0x50000, 16);
  mpw_free_ev(w, mpw_c(0x9000), 0x50000, 16);
  mpw_alloc(w, mpw_c(0x7008), 0x60000, 8);
  mpw_alloc(w, mpw_internal(), 0x70000, 24);
  mpw_alloc(w, mpw_lua(0x3000, 1), 0x80000, 4);
  mpw_epilogue(w);
}

static Profile *report_of(const struct mpw *w, uint64_t top)
{
  static const char *const files[] = {"k.bin"};
  static const int truncated[] = {0};
  uint64_t events = 0;
  struct mp_profile *prof = mp_profile_new(MP_GROUP_FRAMES,
					   MP_PROFILE_NO_OVERRIDES);
  struct mp_reader *r = mp_reader_new_mem(w->mem, w->len);
  struct mp_report_input in = {files, 1, truncated, &events};
  struct mp_report_opts o;
  FILE *f = tmpfile();
  Profile *p;

  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(mp_profile_read(prof, r, &events, NULL, NULL), MP_END);
  mp_profile_end_file(prof, 0);
  mp_profile_done_reading(prof);
  memset(&o, 0, sizeof(o));
  o.format = mp_format_find("pprof", MP_FORMAT_REPORT);
  ck_assert_ptr_nonnull(o.format);
  ck_assert(o.format->flags & MP_FMT_BINARY);
  o.top = top;
  ck_assert_int_eq(o.format->report(f, prof, &o, &in), 0);
  p = decode(f);
  fclose(f);
  mp_reader_free(r);
  mp_profile_delete(prof);
  return p;
}

/* One one-frame sample per location that allocated, in name order:
** counts and bytes as the text report's, held as --leak-only's. */
START_TEST(report_from_version_3_stream)
{
  struct mpw w;
  Profile *p;
  size_t i;

  kinds_stream(&w);
  p = report_of(&w, 0);
  check_heap_profile(p);
  /* gfn, which only freed, has no sample. */
  ck_assert_uint_eq(p->n_sample, 7);
  for (i = 0; i < p->n_sample; i++)
    ck_assert_uint_eq(p->sample[i]->n_location_id, 1);
  check_frame(p, 0, 0, "@app.lua:0", "app.lua", 0, 2);
  check_values(p, 0, 1, 100, 1, 100);
  check_frame(p, 1, 0, "@app.lua:7", "app.lua", 7, 8);
  check_values(p, 1, 2, 100, 0, 0);
  check_frame(p, 2, 0, "@app.lua:7", "app.lua", 7, 9);
  check_values(p, 2, 1, 300, 1, 300);
  /* A chunk named by its source: its alias, the text in a comment. */
  check_frame(p, 3, 0, "CHUNK#1:0", "CHUNK#1", 0, 1);
  check_values(p, 3, 1, 4, 1, 4);
  check_frame(p, 4, 0, "cfn", "", 0, 0);
  check_values(p, 4, 1, 8, 1, 8);
  ck_assert_str_eq(str(p, func(p, loc(p, p->sample[4]->location_id[0])
				  ->line[0]->function_id)->system_name),
		   "cfn:0x7000");
  check_frame(p, 5, 0, "TRACE [4]", "app.lua", 9, 9);
  check_values(p, 5, 1, 16, 0, 0);
  ck_assert_str_eq(str(p, func(p, loc(p, p->sample[5]->location_id[0])
				  ->line[0]->function_id)->system_name),
		   "TRACE [4] started at @app.lua:9");
  check_frame(p, 6, 0, "INTERNAL", "", 0, 0);
  check_values(p, 6, 1, 24, 1, 24);
  ck_assert_uint_eq(p->n_comment, 2);
  ck_assert_str_eq(str(p, p->comment[0]), "ljmprof: k.bin");
  ck_assert_str_eq(str(p, p->comment[1]), "CHUNK#1:\nload\nme");
  perftools__profiles__profile__free_unpacked(p, NULL);
  mpw_free(&w);
}
END_TEST

/* --top=N: the N locations that allocated the most bytes. */
START_TEST(report_top)
{
  struct mpw w;
  Profile *p;

  kinds_stream(&w);
  p = report_of(&w, 2);
  ck_assert_uint_eq(p->n_sample, 2);
  check_frame(p, 0, 0, "@app.lua:0", "app.lua", 0, 2);
  check_values(p, 0, 1, 100, 1, 100);
  check_frame(p, 1, 0, "@app.lua:7", "app.lua", 7, 9);
  perftools__profiles__profile__free_unpacked(p, NULL);
  mpw_free(&w);
}
END_TEST

/* Names from the stream never carry a control byte or invalid UTF-8
** into the profile (proto3 strings must be UTF-8). */
START_TEST(report_escapes_names)
{
  struct mpw w;
  Profile *p;

  mpw_init_mem(&w);
  mpw_symtab_begin(&w);
  mpw_symtab_lfunc(&w, 0x1000, "@\x1b[2J\xff.lua", 3);
  mpw_symtab_end(&w);
  mpw_alloc(&w, mpw_lua(0x1000, 4), 0x10000, 10);
  mpw_epilogue(&w);
  p = report_of(&w, 0);
  ck_assert_uint_eq(p->n_sample, 1);
  check_frame(p, 0, 0, "@\\x1b[2J\\xff.lua:3", "\\x1b[2J\\xff.lua", 3, 4);
  perftools__profiles__profile__free_unpacked(p, NULL);
  mpw_free(&w);
}
END_TEST

static Suite *pprof_suite(void)
{
  Suite *s = suite_create("pprof");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, builder_dedups_and_keeps_stacks);
  tcase_add_test(tc, builder_empty_profile);
  tcase_add_test(tc, report_from_version_3_stream);
  tcase_add_test(tc, report_top);
  tcase_add_test(tc, report_escapes_names);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(pprof_suite());
  int failed;
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
