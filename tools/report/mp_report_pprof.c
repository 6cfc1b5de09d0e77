/*
** --format=pprof: the profile as a Go heap profile (alloc_objects,
** alloc_space, inuse_objects, inuse_space) for go tool pprof and the
** pprof-based viewers, through the builder of mp_pprof.h.
**
** A location becomes a frame: Lua code a function "chunk:linedefined" in
** the file of its chunk ('@' dropped, so that pprof's source views find
** it) at its line; a C function its symbol; a trace "TRACE [n]" at the
** line it starts on; the VM "INTERNAL". A version-3 stream has no call
** stacks: every sample is one frame.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_order.h"
#include "mp_pprof.h"
#include "mp_report.h"

struct pprof_out {
  struct mp_pprof *pp;
  const struct mp_profile *p;
  struct mp_aliases al;
  struct mp_buf name, system_name, file;	/* Of the frame being made. */
};

static struct mp_pprof_text text_of(const struct mp_buf *b, size_t skip)
{
  struct mp_pprof_text t = {b->data ? b->data + skip : "",
			    b->len > skip ? b->len - skip : 0};
  return t;
}

/* The frame that stands for location l; its texts live in po's buffers
** until the next call. */
static void location_frame(struct pprof_out *po, const struct mp_loc *l,
			   struct mp_pprof_frame *f)
{
  const struct mp_profile *p = po->p;
  enum mp_group g = mp_profile_group(p);
  int by_line = g == MP_GROUP_LINE || g == MP_GROUP_FRAMES;
  size_t file_skip = 0;

  po->name.len = po->system_name.len = po->file.len = 0;
  memset(f, 0, sizeof(*f));
  switch ((enum mp_loc_kind)l->kind) {
  case MP_LOC_LUA:
    mp_name_string(&po->file, p, &po->al, l->str, MP_NAME_ALIASED);
    file_skip = po->file.len && po->file.data[0] == '@';
    if (l->linedefined == MP_LINE_BUILTIN) {
      mp_buf_str(&po->name, "builtin:");
      mp_name_string(&po->name, p, &po->al, l->str, MP_NAME_ALIASED);
    } else {
      mp_name_string(&po->name, p, &po->al, l->str, MP_NAME_ALIASED);
      if (g != MP_GROUP_CHUNK) {
	mp_buf_colon_u64(&po->name, l->linedefined);
	f->start_line = l->linedefined;
      }
    }
    f->line = by_line ? l->line : f->start_line;
    break;
  case MP_LOC_LUA_UNKNOWN:
    mp_buf_str(&po->name, mp_loc_kinds[l->kind].prefix);
    mp_buf_hex(&po->name, l->addr);
    f->line = l->line;
    break;
  case MP_LOC_C:
    /* The symbol; the address tells apart static functions of one name. */
    mp_name_string(&po->name, p, &po->al, l->str, MP_NAME_ALIASED);
    mp_name_location(&po->system_name, p, &po->al, l, MP_NAME_ALIASED);
    break;
  case MP_LOC_TRACE:
  case MP_LOC_TRACE_NOPROTO:
  case MP_LOC_TRACE_UNKNOWN:
    /* "TRACE [n]", kept apart from the same number in another file by
    ** where it starts. */
    mp_buf_str(&po->name, mp_loc_kinds[l->kind].prefix);
    mp_buf_u64(&po->name, l->addr);
    mp_buf_add(&po->name, "]", 1);
    mp_name_location(&po->system_name, p, &po->al, l, MP_NAME_ALIASED);
    if (l->kind == MP_LOC_TRACE) {
      mp_name_string(&po->file, p, &po->al, l->str, MP_NAME_ALIASED);
      file_skip = po->file.len && po->file.data[0] == '@';
    }
    f->start_line = f->line = l->line;
    break;
  case MP_LOC_C_UNKNOWN:
  case MP_LOC_INTERNAL:
  case MP_LOC_NKINDS:
    mp_name_location(&po->name, p, &po->al, l, MP_NAME_ALIASED);
    break;
  }
  f->name = text_of(&po->name, 0);
  f->system_name = text_of(&po->system_name, 0);
  f->file = text_of(&po->file, file_skip);
}

/*
** The samples: one per location that allocated, with its figures, in
** name order; with --top only the top locations by bytes allocated.
** A stack tree would give one sample per node instead, its frames leaf
** to root: only this function knows where the samples come from.
*/
static int add_location_samples(struct pprof_out *po, uint64_t top)
{
  const struct mp_profile *p = po->p;
  uint32_t nlocs = mp_profile_nlocs(p), id;
  struct mp_order order;
  struct mp_row *rows;
  size_t nrows = 0, i;
  int rc = -1;

  if (mp_order_init(&order, p) < 0)
    return -1;
  rows = malloc(((size_t)nlocs + 1) * sizeof(*rows));
  if (!rows)
    goto out;
  for (id = 0; id < nlocs; id++) {
    struct mp_loc l;
    mp_profile_loc_counts(p, id, &l);
    if (!(l.n_alloc | l.n_realloc | l.held_blocks))
      continue;
    mp_order_row(&order, l.alloc_bytes + l.realloc_new, id, &rows[nrows]);
    nrows++;
  }
  if (top && nrows > top) {
    mp_rows_sort(&order, rows, nrows);
    nrows = (size_t)top;
  }
  mp_rows_sort_by_name(rows, nrows);
  for (i = 0; i < nrows; i++) {
    struct mp_pprof_frame frame;
    struct mp_loc l;
    int64_t v[MP_PPROF_NVALUES];
    mp_profile_loc(p, rows[i].loc, &l);
    v[MP_PPROF_ALLOC_OBJECTS] = (int64_t)(l.n_alloc + l.n_realloc);
    v[MP_PPROF_ALLOC_SPACE] = (int64_t)(l.alloc_bytes + l.realloc_new);
    v[MP_PPROF_INUSE_OBJECTS] = (int64_t)l.held_blocks;
    v[MP_PPROF_INUSE_SPACE] = (int64_t)l.held_bytes;
    location_frame(po, &l, &frame);
    if (po->name.oom || po->system_name.oom || po->file.oom ||
	mp_pprof_add_sample(po->pp, &frame, 1, v) < 0)
      goto out;
  }
  rc = 0;
out:
  free(rows);
  mp_order_free(&order);
  return rc;
}

/* Comments: the files the profile is of, and the texts behind the
** aliases its names use (as the text report's ALIASES section). */
static int add_file_comments(struct pprof_out *po,
			     const struct mp_report_input *in)
{
  struct mp_buf c = {0};
  size_t i;
  int rc = 0;

  for (i = 0; i < in->nfiles && rc == 0; i++) {
    c.len = 0;
    mp_buf_str(&c, "ljmprof: ");
    mp_name_escape(&c, in->files[i], strlen(in->files[i]), 0);
    if (in->truncated[i])
      mp_buf_str(&c, " (truncated)");
    rc = c.oom ? -1 : mp_pprof_comment(po->pp, c.data, c.len);
  }
  mp_buf_free(&c);
  return rc;
}

static int add_alias_comments(struct pprof_out *po)
{
  const struct mp_aliases *al = &po->al;
  struct mp_buf c = {0};
  uint32_t id;
  int rc = 0;

  for (id = 0; al->of && id < al->nstrings && rc == 0; id++) {
    const struct mp_string *s;
    if (!al->of[id] || !al->used[al->of[id]])
      continue;
    s = mp_strings_get(mp_profile_strings(po->p), id);
    c.len = 0;
    mp_buf_str(&c, "CHUNK#");
    mp_buf_u64(&c, al->of[id]);
    mp_buf_str(&c, ":\n");
    mp_name_escape(&c, s->data, s->len, MP_ESC_KEEP_LINES);
    rc = c.oom ? -1 : mp_pprof_comment(po->pp, c.data, c.len);
  }
  mp_buf_free(&c);
  return rc;
}

int mp_report_pprof(FILE *out, struct mp_profile *p,
		    const struct mp_report_opts *o,
		    const struct mp_report_input *in)
{
  struct pprof_out po;
  int rc = -1;

  memset(&po, 0, sizeof(po));
  po.p = p;
  if (mp_aliases_init(&po.al, mp_profile_strings(p)) < 0)
    return -1;
  if (!(po.pp = mp_pprof_begin()))
    goto out;
  if (add_file_comments(&po, in) < 0 || add_location_samples(&po, o->top) < 0 ||
      add_alias_comments(&po) < 0)
    goto out;
  rc = mp_pprof_finish(po.pp, out);
out:
  mp_pprof_free(po.pp);
  mp_buf_free(&po.name);
  mp_buf_free(&po.system_name);
  mp_buf_free(&po.file);
  mp_aliases_free(&po.al);
  return rc;
}
