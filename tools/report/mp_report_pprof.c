/*
** --format=pprof: the profile as a Go heap profile (alloc_objects,
** alloc_space, inuse_objects, inuse_space) for go tool pprof and the
** pprof-based viewers, through the builder of mp_pprof.h.
**
** A location becomes a frame: Lua code a function "chunk:linedefined" in
** the file of its chunk ('@' dropped, so that pprof's source views find
** it) at its line; a C function its symbol; a trace "TRACE [n]" at the
** line it starts on; the VM "INTERNAL". A stream with call stacks gives
** a sample per stack, leaf first: a Lua frame the function its caller
** named ("render @app.lua:5"), a built-in its name ("string.rep"), a cut
** "[cut]" (MP_CUT_FULL_NAME: a full node table's). A version-3 stream has no call stacks: every sample is one
** frame.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_order.h"
#include "mp_pprof.h"
#include "mp_report.h"

/* The texts of one frame being made. */
struct frame_texts {
  struct mp_buf name, system_name, file;
};

struct pprof_out {
  struct mp_pprof *pp;
  const struct mp_profile *p;
  struct mp_aliases al;
  struct frame_texts *texts;	/* One per frame of the stack being made. */
  size_t ntexts;
  struct mp_buf scratch;	/* Where a named frame's name is put together. */
};

static struct mp_pprof_text text_of(const struct mp_buf *b, size_t skip)
{
  struct mp_pprof_text t = {b->data ? b->data + skip : "",
			    b->len > skip ? b->len - skip : 0};
  return t;
}

/* The frame that stands for location l; its texts live in t until the
** next call with t. */
static void location_frame(struct pprof_out *po, struct frame_texts *t,
			   const struct mp_loc *l, struct mp_pprof_frame *f)
{
  const struct mp_profile *p = po->p;
  enum mp_group g = mp_profile_group(p);
  int by_line = g == MP_GROUP_LINE || g == MP_GROUP_FRAMES;
  size_t file_skip = 0;

  t->name.len = t->system_name.len = t->file.len = 0;
  memset(f, 0, sizeof(*f));
  switch ((enum mp_loc_kind)l->kind) {
  case MP_LOC_LUA:
    mp_name_string(&t->file, p, &po->al, l->str, MP_NAME_ALIASED);
    file_skip = t->file.len && t->file.data[0] == '@';
    if (l->linedefined == MP_LINE_BUILTIN) {
      mp_buf_str(&t->name, "builtin:");
      mp_name_string(&t->name, p, &po->al, l->str, MP_NAME_ALIASED);
    } else {
      mp_name_string(&t->name, p, &po->al, l->str, MP_NAME_ALIASED);
      if (g != MP_GROUP_CHUNK) {
	mp_buf_colon_u64(&t->name, l->linedefined);
	f->start_line = l->linedefined;
      }
    }
    f->line = by_line ? l->line : f->start_line;
    break;
  case MP_LOC_LUA_UNKNOWN:
    mp_buf_str(&t->name, mp_loc_kinds[l->kind].prefix);
    mp_buf_hex(&t->name, l->addr);
    f->line = l->line;
    break;
  case MP_LOC_C:
    /* The symbol; the address tells apart static functions of one name. */
    mp_name_string(&t->name, p, &po->al, l->str, MP_NAME_ALIASED);
    mp_name_location(&t->system_name, p, &po->al, l, MP_NAME_ALIASED);
    break;
  case MP_LOC_TRACE:
  case MP_LOC_TRACE_NOPROTO:
  case MP_LOC_TRACE_UNKNOWN:
    /* "TRACE [n]", kept apart from the same number in another file by
    ** where it starts. */
    mp_buf_str(&t->name, mp_loc_kinds[l->kind].prefix);
    mp_buf_u64(&t->name, l->addr);
    mp_buf_add(&t->name, "]", 1);
    mp_name_location(&t->system_name, p, &po->al, l, MP_NAME_ALIASED);
    if (l->kind == MP_LOC_TRACE) {
      mp_name_string(&t->file, p, &po->al, l->str, MP_NAME_ALIASED);
      file_skip = t->file.len && t->file.data[0] == '@';
    }
    f->start_line = f->line = l->line;
    break;
  case MP_LOC_C_UNKNOWN:
  case MP_LOC_INTERNAL:
  case MP_LOC_START:
  case MP_LOC_NKINDS:
    mp_name_location(&t->name, p, &po->al, l, MP_NAME_ALIASED);
    break;
  }
  f->name = text_of(&t->name, 0);
  f->system_name = text_of(&t->system_name, 0);
  f->file = text_of(&t->file, file_skip);
}

/* The texts of frame number i of a stack; NULL when out of memory. */
static struct frame_texts *texts_at(struct pprof_out *po, size_t i)
{
  if (i >= po->ntexts) {
    size_t n = po->ntexts ? 2 * po->ntexts : 64;
    struct frame_texts *t;
    while (n <= i) n *= 2;
    if (!(t = realloc(po->texts, n * sizeof(*t))))
      return NULL;
    memset(t + po->ntexts, 0, (n - po->ntexts) * sizeof(*t));
    po->texts = t;
    po->ntexts = n;
  }
  return &po->texts[i];
}

static int texts_oom(const struct frame_texts *t)
{
  return t->name.oom || t->system_name.oom || t->file.oom;
}

/* The samples of a version-3 stream: one per location that allocated or
** holds memory, with its figures, in name order; with --top only the top
** locations by bytes allocated. */
static int add_location_samples(struct pprof_out *po, uint64_t top)
{
  const struct mp_profile *p = po->p;
  uint32_t nlocs = mp_profile_nlocs(p), id;
  struct mp_order order;
  struct mp_row *rows;
  struct frame_texts *t = texts_at(po, 0);
  size_t nrows = 0, i;
  int rc = -1;

  if (!t || mp_order_init(&order, p) < 0)
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
    location_frame(po, t, &l, &frame);
    if (texts_oom(t) || mp_pprof_add_sample(po->pp, &frame, 1, v) < 0)
      goto out;
  }
  rc = 0;
out:
  free(rows);
  mp_order_free(&order);
  return rc;
}

/*
** --by=kind: a sample per (object kind, location), labelled kind=NAME
** (go tool pprof -tagfocus=kind=table), one frame each, most bytes of
** each kind first, --top of them per kind.
*/
static int add_kind_samples(struct pprof_out *po, uint64_t top)
{
  const struct mp_profile *p = po->p;
  unsigned kinds[MP_NKINDS];
  size_t n = mp_kinds_order(p, kinds), i, j, npairs;
  struct frame_texts *t = texts_at(po, 0);
  struct mp_buf name = {0};
  int rc = 0;

  if (!t)
    return -1;
  for (i = 0; i < n && rc == 0; i++) {
    uint32_t *pairs = mp_kinds_pairs(p, kinds[i], top, &npairs);
    if (!pairs)
      return -1;
    name.len = 0;
    mp_name_kind(&name, kinds[i]);
    mp_buf_add(&name, "", 1);	/* A C string. */
    for (j = 0; j < npairs && !name.oom; j++) {
      struct mp_pprof_frame frame;
      struct mp_kind_counts c;
      struct mp_loc l;
      int64_t v[MP_PPROF_NVALUES];
      unsigned k;
      uint32_t loc;
      mp_profile_kindloc(p, pairs[j], &k, &loc, &c);
      mp_profile_loc(p, loc, &l);
      v[MP_PPROF_ALLOC_OBJECTS] = (int64_t)(c.n_alloc + c.n_realloc);
      v[MP_PPROF_ALLOC_SPACE] = (int64_t)(c.alloc_bytes + c.realloc_bytes);
      v[MP_PPROF_INUSE_OBJECTS] = (int64_t)c.held_blocks;
      v[MP_PPROF_INUSE_SPACE] = (int64_t)c.held_bytes;
      location_frame(po, t, &l, &frame);
      if (texts_oom(t) ||
	  mp_pprof_add_labelled(po->pp, &frame, 1, v, "kind", name.data) < 0) {
	rc = -1;
	break;
      }
    }
    if (name.oom)
      rc = -1;
    free(pairs);
  }
  mp_buf_free(&name);
  return rc;
}

/* The pprof frame of stack frame f, its texts in t. */
static void stack_frame(struct pprof_out *po, struct frame_texts *t,
			const struct mp_frame *f, struct mp_pprof_frame *out)
{
  const struct mp_strings *strs = mp_profile_strings(po->p);
  struct mp_loc l;

  if (f->tag == LJM_FRAME_FAST || f->tag == LJM_FRAME_CUT) {
    t->name.len = t->system_name.len = t->file.len = 0;
    memset(out, 0, sizeof(*out));
    if (f->tag == LJM_FRAME_CUT) {
      mp_buf_str(&t->name, f->loc == MP_CUT_FULL ? MP_CUT_FULL_NAME :
				 "[cut]");
    } else if (f->name != MP_NO_STRING) {
      const struct mp_string *s = mp_strings_get(strs, f->name);
      mp_name_escape(&t->name, s->data, s->len, 0);
    } else {
      mp_buf_str(&t->name, "builtin#");
      mp_buf_u64(&t->name, f->loc);
    }
    out->name = text_of(&t->name, 0);
    out->system_name = text_of(&t->system_name, 0);
    out->file = text_of(&t->file, 0);
    return;
  }
  mp_profile_loc(po->p, f->loc, &l);
  location_frame(po, t, &l, out);
  if (f->tag == LJM_FRAME_LUA && f->name != MP_NO_STRING) {
    /* The name its caller gave it, before where it is defined: one
    ** prototype called under two names is two functions, as it reads. */
    const struct mp_string *s = mp_strings_get(strs, f->name);
    struct mp_buf named = po->scratch;
    named.len = 0;
    mp_name_escape(&named, s->data, s->len, 0);
    mp_buf_add(&named, " ", 1);
    mp_buf_add(&named, t->name.data ? t->name.data : "", t->name.len);
    po->scratch = t->name;  /* The two trade places: nothing is freed. */
    t->name = named;
    out->name = text_of(&t->name, 0);
  }
}

/*
** The samples of a stream with call stacks: one per stack node with
** figures, its frames leaf to root; with --top only those charged to one
** of the top locations by bytes allocated (as a version-3 stream's).
*/
static int add_stack_samples(struct pprof_out *po, uint64_t top)
{
  const struct mp_profile *p = po->p;
  uint32_t nstacks = mp_profile_nstacks(p), nlocs = mp_profile_nlocs(p);
  uint32_t id;
  struct mp_pprof_frame *frames = NULL;
  size_t nframes = 0;
  unsigned char *keep = NULL;
  int rc = -1;

  if (top) {
    struct mp_order order;
    struct mp_row *rows;
    size_t nrows = 0, i;
    if (!(keep = calloc((size_t)nlocs + 1, 1)))
      return -1;
    if (mp_order_init(&order, p) < 0)
      goto out;
    if (!(rows = malloc(((size_t)nlocs + 1) * sizeof(*rows)))) {
      mp_order_free(&order);
      goto out;
    }
    for (id = 0; id < nlocs; id++) {
      struct mp_loc l;
      mp_profile_loc_counts(p, id, &l);
      if (l.n_alloc | l.n_realloc | l.held_blocks)
	mp_order_row(&order, l.alloc_bytes + l.realloc_new, id, &rows[nrows++]);
    }
    mp_rows_sort(&order, rows, nrows);
    for (i = 0; i < nrows && i < top; i++)
      keep[rows[i].loc] = 1;
    free(rows);
    mp_order_free(&order);
  }
  for (id = 1; id < nstacks; id++) {
    struct mp_stack_counts c;
    struct mp_frame f;
    int64_t v[MP_PPROF_NVALUES];
    size_t n = 0;
    uint32_t at;
    if (!mp_profile_stack(p, id, &c))
      continue;
    mp_profile_frame(p, id, &f);
    if (keep && !keep[f.leaf])
      continue;
    for (at = id; at != 0; at = f.parent) {
      struct frame_texts *t = texts_at(po, n);
      mp_profile_frame(p, at, &f);
      if (n >= nframes) {
	size_t m = nframes ? 2 * nframes : 64;
	struct mp_pprof_frame *fr = realloc(frames, m * sizeof(*fr));
	if (!fr) goto out;
	frames = fr;
	nframes = m;
      }
      if (!t) goto out;
      stack_frame(po, t, &f, &frames[n]);
      if (texts_oom(t) || po->scratch.oom) goto out;
      n++;
    }
    v[MP_PPROF_ALLOC_OBJECTS] = (int64_t)(c.n_alloc + c.n_realloc);
    v[MP_PPROF_ALLOC_SPACE] = (int64_t)(c.alloc_bytes + c.realloc_bytes);
    v[MP_PPROF_INUSE_OBJECTS] = (int64_t)c.held_blocks;
    v[MP_PPROF_INUSE_SPACE] = (int64_t)c.held_bytes;
    if (mp_pprof_add_sample(po->pp, frames, n, v) < 0)
      goto out;
  }
  rc = 0;
out:
  free(frames);
  free(keep);
  return rc;
}

/* Comments: the files the profile is of, and the texts behind the
** aliases its names use (as the text report's ALIASES section). */
static int add_file_comments(struct pprof_out *po,
			     const struct mp_report_input *in)
{
  struct mp_buf c = {0};
  const struct mp_summary *s = mp_profile_total(po->p);
  const char *note;
  size_t i;
  int rc = 0;

  if ((note = mp_estimate_note(&c, s))) {
    struct mp_buf line = {0};
    mp_buf_str(&line, "ljmprof: ");
    mp_buf_str(&line, note);
    rc = line.oom ? -1 : mp_pprof_comment(po->pp, line.data, line.len);
    mp_buf_free(&line);
    mp_pprof_period(po->pp, (int64_t)s->sample_mean);
  }
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
  size_t i;
  int rc = -1;

  memset(&po, 0, sizeof(po));
  po.p = p;
  if (mp_aliases_init(&po.al, mp_profile_strings(p)) < 0)
    return -1;
  if (!(po.pp = mp_pprof_begin()))
    goto out;
  if (add_file_comments(&po, in) < 0 ||
      (o->by_kind ? add_kind_samples(&po, o->top)
       : mp_profile_nstacks(p) > 1 ? add_stack_samples(&po, o->top)
       : add_location_samples(&po, o->top)) < 0 ||
      add_alias_comments(&po) < 0)
    goto out;
  rc = mp_pprof_finish(po.pp, out);
out:
  mp_pprof_free(po.pp);
  for (i = 0; i < po.ntexts; i++) {
    mp_buf_free(&po.texts[i].name);
    mp_buf_free(&po.texts[i].system_name);
    mp_buf_free(&po.texts[i].file);
  }
  free(po.texts);
  mp_buf_free(&po.scratch);
  mp_aliases_free(&po.al);
  return rc;
}
