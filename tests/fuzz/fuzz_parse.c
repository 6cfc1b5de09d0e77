/*
** libFuzzer target for the parsing core: any bytes go through the reader,
** the aggregator and every report format of the table (mp_formats).
** Success is not crashing, not tripping ASan/UBSan, and not allocating
** in proportion to claimed (as opposed to present) sizes.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_profile.h"
#include "mp_reader.h"
#include "mp_report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What the pprof format reads of a stream with stacks: every node with
** figures, its frames walked to the root, each named and taken apart. */
static void walk_stacks(const struct mp_profile *p)
{
  uint32_t n = mp_profile_nstacks(p), id;
  struct mp_buf b = {0};

  for (id = 1; id < n; id++) {
    struct mp_stack_counts c;
    uint32_t f_id = id, depth = 0;
    if (!mp_profile_stack(p, id, &c))
      continue;
    while (f_id) {
      struct mp_frame f;
      struct mp_frame_parts parts;
      mp_profile_frame(p, f_id, &f);
      mp_frame_parts(p, &f, &parts);
      b.len = 0;
      mp_name_frame(&b, p, NULL, &f, MP_NAME_PLAIN);
      if (parts.file_len > 0 && !parts.file)
	abort();
      if (++depth > n)
	abort();	/* A parent chain longer than the tree: a cycle. */
      f_id = f.parent;
    }
  }
  mp_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static FILE *sink;
  struct mp_profile *p;
  static const char *const files[] = {"fuzz"};
  struct mp_reader *r;
  struct mp_report_opts o = {0};
  struct mp_report_input in;
  enum mp_status st;
  uint64_t events = 0;
  int truncated;
  enum mp_group group;

  if (!sink)
    sink = fopen("/dev/null", "w");
  /* The last byte picks the grouping, so every naming path is reached. */
  group = size ? (enum mp_group)(data[size - 1] & 3) : MP_GROUP_LINE;
  /* The byte before picks how override pairs are kept (JSON keeps
  ** counts), so both storage modes are read and merged, and whether
  ** the profile counts object kinds, all of them or some, and keeps
  ** lifetimes (DHAT). */
  p = mp_profile_new(group, (size > 1 && (data[size - 2] & 1) ?
			     MP_PROFILE_OVERRIDE_VALUES : 0) |
			    (size > 1 && (data[size - 2] & 2) ?
			     MP_PROFILE_KINDS : 0) |
			    (size > 1 && (data[size - 2] & 8) ?
			     MP_PROFILE_LIFETIMES : 0) |
			    (size > 1 && (data[size - 2] & 16) ?
			     MP_PROFILE_GRAPH : 0));
  if (!p)
    return 0;
  if (size > 1 && (data[size - 2] & 4)) {  /* --kind: the even ones. */
    uint8_t keep[MP_NKINDS];
    size_t k;
    for (k = 0; k < MP_NKINDS; k++)
      keep[k] = !(k & 1);
    mp_profile_filter_kinds(p, keep);
  }
  r = mp_reader_new_mem(data, size);
  if (!r) {
    mp_profile_delete(p);
    return 0;
  }
  st = mp_profile_read(p, r, &events, NULL, NULL);
  truncated = st == MP_TRUNCATED;
  mp_profile_end_file(p, truncated);
  mp_profile_done_reading(p);	/* As the CLI does before reporting. */
  if (st != MP_ERROR && sink) {
    size_t i;
    in.files = files;
    in.nfiles = 1;
    in.truncated = &truncated;
    in.events_read = &events;
    in.at_events = NULL;
    in.moments = NULL;
    /* Every format of the table, with the options it takes; stat too. */
    for (i = 0; i < mp_nformats; i++) {
      const struct mp_format *f = &mp_formats[i];
      memset(&o, 0, sizeof(o));
      o.format = f;
      o.top = size & 1 ? 0 : 3;
      o.value = (enum mp_value)(events % 3);
      f->report(sink, p, &o, &in);
      if (f->flags & MP_FMT_LEAK_ONLY) {
	o.leak_only = 1;
	o.human = 1;
	f->report(sink, p, &o, &in);
      }
      if (f->flags & MP_FMT_BY_KIND) {
	o.leak_only = 0;
	o.by_kind = 1;
	f->report(sink, p, &o, &in);
      }
      if (f->flags & MP_FMT_RETAINERS) {	/* The heap graph's chains. */
	o.leak_only = o.by_kind = 0;
	o.retainers = 1;
	o.retainers_of = size & 2 ? "app" : NULL;
	f->report(sink, p, &o, &in);
      }
      if (f->stat)
	f->stat(sink, p, &o, &in);
    }
    walk_stacks(p);
  }
  mp_reader_free(r);
  mp_profile_delete(p);
  return 0;
}
