/*
** The pprof profile builder (mp_pprof.h): deduplicating tables while
** samples come in, then protobuf-c's encoder (pprof.proto) packs the
** message straight into zlib's gzip stream, so the packed profile is
** never held in memory whole.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "mp_pprof.h"
#include "mp_strings.h"
#include "tools/report/pprof.pb-c.h"

/* A function: string ids, as Function has them. */
struct pp_func {
  uint32_t name, system_name, file;
  int64_t start_line;
};

/* A location: one line of one function (pprof's inlining is not used). */
struct pp_loc {
  uint32_t func;	/* Index into funcs. */
  int64_t line;
};

struct pp_sample {
  size_t first;		/* Its location ids: stack[first .. first + n). */
  size_t n;
  int64_t values[MP_PPROF_NVALUES];
  uint32_t label_key, label_str;	/* String ids of its label; 0: none. */
};

struct mp_pprof {
  struct mp_strings strings;	/* The string table: id = index, 0 is "". */
  /* Identities, as bytes, interned: the id of a function's (or a
  ** location's) key is its index, so a new key is a new entry. */
  struct mp_strings func_keys, loc_keys;
  struct pp_func *funcs;
  size_t nfuncs, funcs_cap;
  struct pp_loc *locs;
  size_t nlocs, locs_cap;
  uint64_t *stack;		/* Location ids (from 1) of all samples. */
  size_t nstack, stack_cap;
  struct pp_sample *samples;
  size_t nsamples, samples_cap;
  uint32_t *comments;		/* String ids. */
  size_t ncomments, comments_cap;
  int64_t period;		/* 0: 1. */
  int oom;
};

/* Make room for one more item of size in *items (count n, room *cap). */
static int grow(void *items, size_t *cap, size_t n, size_t size)
{
  void **p = items;
  size_t ncap;
  void *q;

  if (n < *cap)
    return 0;
  ncap = *cap ? *cap * 2 : 64;
  if (ncap > SIZE_MAX / size || !(q = realloc(*p, ncap * size)))
    return -1;
  *p = q;
  *cap = ncap;
  return 0;
}

static uint32_t string_id(struct mp_pprof *pp, const struct mp_pprof_text *t)
{
  return mp_strings_find_or_add(&pp->strings, t->len ? t->data : "", t->len);
}

struct mp_pprof *mp_pprof_begin(void)
{
  struct mp_pprof *pp = calloc(1, sizeof(*pp));

  if (!pp)
    return NULL;
  mp_strings_init(&pp->strings);
  mp_strings_init(&pp->func_keys);
  mp_strings_init(&pp->loc_keys);
  /* pprof wants "" as string 0. */
  if (mp_strings_find_or_add(&pp->strings, "", 0) != 0) {
    mp_pprof_free(pp);
    return NULL;
  }
  return pp;
}

void mp_pprof_free(struct mp_pprof *pp)
{
  if (!pp)
    return;
  mp_strings_free(&pp->strings);
  mp_strings_free(&pp->func_keys);
  mp_strings_free(&pp->loc_keys);
  free(pp->funcs);
  free(pp->locs);
  free(pp->stack);
  free(pp->samples);
  free(pp->comments);
  free(pp);
}

void mp_pprof_period(struct mp_pprof *pp, int64_t period)
{
  pp->period = period;
}

int mp_pprof_comment(struct mp_pprof *pp, const char *s, size_t len)
{
  struct mp_pprof_text t = {s, len};
  uint32_t id = string_id(pp, &t);

  if (id == UINT32_MAX ||
      grow(&pp->comments, &pp->comments_cap, pp->ncomments,
	   sizeof(*pp->comments)) < 0) {
    pp->oom = 1;
    return -1;
  }
  pp->comments[pp->ncomments++] = id;
  return 0;
}

/* The index of the function of frame f, added if new; -1 when out of
** memory. */
static int64_t func_index(struct mp_pprof *pp, const struct mp_pprof_frame *f)
{
  struct pp_func fn;
  uint32_t id;

  memset(&fn, 0, sizeof(fn));	/* The key's bytes, padding included. */
  fn.name = string_id(pp, &f->name);
  fn.system_name = f->system_name.len ? string_id(pp, &f->system_name) :
		   fn.name;
  fn.file = string_id(pp, &f->file);
  fn.start_line = f->start_line;
  if (fn.name == UINT32_MAX || fn.system_name == UINT32_MAX ||
      fn.file == UINT32_MAX)
    return -1;
  id = mp_strings_find_or_add(&pp->func_keys, (const char *)&fn, sizeof(fn));
  if (id == UINT32_MAX)
    return -1;
  if (id == pp->nfuncs) {
    if (grow(&pp->funcs, &pp->funcs_cap, pp->nfuncs, sizeof(fn)) < 0) {
      mp_strings_truncate(&pp->func_keys, id);
      return -1;
    }
    pp->funcs[pp->nfuncs++] = fn;
  }
  return id;
}

/* The id (from 1) of the location of frame f; 0 when out of memory. */
static uint64_t loc_id(struct mp_pprof *pp, const struct mp_pprof_frame *f)
{
  struct pp_loc l;
  int64_t func = func_index(pp, f);
  uint32_t id;

  if (func < 0)
    return 0;
  memset(&l, 0, sizeof(l));
  l.func = (uint32_t)func;
  l.line = f->line;
  id = mp_strings_find_or_add(&pp->loc_keys, (const char *)&l, sizeof(l));
  if (id == UINT32_MAX)
    return 0;
  if (id == pp->nlocs) {
    if (grow(&pp->locs, &pp->locs_cap, pp->nlocs, sizeof(l)) < 0) {
      mp_strings_truncate(&pp->loc_keys, id);
      return 0;
    }
    pp->locs[pp->nlocs++] = l;
  }
  return (uint64_t)id + 1;
}

int mp_pprof_add_sample(struct mp_pprof *pp,
			const struct mp_pprof_frame *frames, size_t nframes,
			const int64_t values[MP_PPROF_NVALUES])
{
  return mp_pprof_add_labelled(pp, frames, nframes, values, NULL, NULL);
}

int mp_pprof_add_labelled(struct mp_pprof *pp,
			  const struct mp_pprof_frame *frames, size_t nframes,
			  const int64_t values[MP_PPROF_NVALUES],
			  const char *key, const char *str)
{
  struct pp_sample *s;
  uint32_t k = 0, v = 0;
  size_t i;

  if (key) {
    struct mp_pprof_text kt = {key, strlen(key)}, vt = {str, strlen(str)};
    k = string_id(pp, &kt);
    v = string_id(pp, &vt);
  }
  if (pp->oom ||
      grow(&pp->samples, &pp->samples_cap, pp->nsamples,
	   sizeof(*pp->samples)) < 0)
    goto oom;
  s = &pp->samples[pp->nsamples];
  s->first = pp->nstack;
  s->n = nframes;
  memcpy(s->values, values, sizeof(s->values));
  s->label_key = k;
  s->label_str = v;
  for (i = 0; i < nframes; i++) {
    uint64_t id = loc_id(pp, &frames[i]);
    if (!id || grow(&pp->stack, &pp->stack_cap, pp->nstack,
		    sizeof(*pp->stack)) < 0)
      goto oom;
    pp->stack[pp->nstack++] = id;
  }
  pp->nsamples++;
  return 0;
oom:
  pp->oom = 1;
  return -1;
}

/* -- Writing ---------------------------------------------------------------- */

/* protobuf-c's output: every packed piece goes into the gzip stream. */
struct gz_sink {
  ProtobufCBuffer base;
  z_stream z;
  FILE *out;
  int failed;		/* deflate refused (out of memory). */
  unsigned char buf[1 << 16];
};

/* Deflate what z holds, with flush, writing every full buffer out. */
static void gz_run(struct gz_sink *g, int flush)
{
  do {
    int rc;
    g->z.next_out = g->buf;
    g->z.avail_out = sizeof(g->buf);
    rc = deflate(&g->z, flush);
    if (rc == Z_STREAM_ERROR) {
      g->failed = 1;
      return;
    }
    fwrite(g->buf, 1, sizeof(g->buf) - g->z.avail_out, g->out);
  } while (g->z.avail_out == 0);
}

static void gz_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
  struct gz_sink *g = (struct gz_sink *)b;

  while (len && !g->failed) {
    uInt n = len > (1u << 30) ? 1u << 30 : (uInt)len;
    g->z.next_in = (Bytef *)(uintptr_t)data;
    g->z.avail_in = n;
    gz_run(g, Z_NO_FLUSH);
    data += n;
    len -= n;
  }
}

/* The message's parts, pointing into pp's tables. */
struct pp_message {
  Perftools__Profiles__Profile profile;
  Perftools__Profiles__ValueType types[MP_PPROF_NVALUES], period_type;
  Perftools__Profiles__ValueType *type_ptrs[MP_PPROF_NVALUES];
  Perftools__Profiles__Mapping mapping, *mapping_ptr;
  char **strings;
  Perftools__Profiles__Function *funcs, **func_ptrs;
  Perftools__Profiles__Location *locs, **loc_ptrs;
  Perftools__Profiles__Line *lines, **line_ptrs;
  Perftools__Profiles__Sample *samples, **sample_ptrs;
  Perftools__Profiles__Label *labels, **label_ptrs;	/* One a sample. */
  int64_t *comments;
};

static void message_free(struct pp_message *m)
{
  free(m->strings);
  free(m->funcs);
  free(m->func_ptrs);
  free(m->locs);
  free(m->loc_ptrs);
  free(m->lines);
  free(m->line_ptrs);
  free(m->samples);
  free(m->sample_ptrs);
  free(m->labels);
  free(m->label_ptrs);
  free(m->comments);
}

/* calloc of n items, never NULL for n 0 (which is no failure). */
static void *alloc_n(size_t n, size_t size)
{
  return calloc(n ? n : 1, size);
}

/* The string id of a literal, added if new. */
static int64_t lit(struct mp_pprof *pp, const char *s)
{
  uint32_t id = mp_strings_find_or_add(&pp->strings, s, strlen(s));
  if (id == UINT32_MAX)
    pp->oom = 1;
  return id;
}

static int message_build(struct mp_pprof *pp, struct pp_message *m)
{
  static const char *const type_names[MP_PPROF_NVALUES][2] = {
    {"alloc_objects", "count"}, {"alloc_space", "bytes"},
    {"inuse_objects", "count"}, {"inuse_space", "bytes"}
  };
  Perftools__Profiles__Profile *p = &m->profile;
  size_t i;

  perftools__profiles__profile__init(p);
  for (i = 0; i < MP_PPROF_NVALUES; i++) {
    perftools__profiles__value_type__init(&m->types[i]);
    m->types[i].type = lit(pp, type_names[i][0]);
    m->types[i].unit = lit(pp, type_names[i][1]);
    m->type_ptrs[i] = &m->types[i];
  }
  p->n_sample_type = MP_PPROF_NVALUES;
  p->sample_type = m->type_ptrs;
  /* As Go's heap profiles: what a sample's space is counted in, and
  ** what a viewer shows first. Every event recorded: period 1; sampled,
  ** the mean bytes between samples. */
  perftools__profiles__value_type__init(&m->period_type);
  m->period_type.type = lit(pp, "space");
  m->period_type.unit = lit(pp, "bytes");
  p->period_type = &m->period_type;
  p->period = pp->period ? pp->period : 1;
  p->default_sample_type = m->types[MP_PPROF_INUSE_SPACE].type;
  /* One mapping that says every location is named already: pprof would
  ** otherwise look for a binary to symbolize them with. */
  perftools__profiles__mapping__init(&m->mapping);
  m->mapping.id = 1;
  m->mapping.has_functions = 1;
  m->mapping.has_filenames = 1;
  m->mapping.has_line_numbers = 1;
  m->mapping_ptr = &m->mapping;
  p->n_mapping = 1;
  p->mapping = &m->mapping_ptr;
  if (pp->oom)
    return -1;

  /* Strings last: the literals above are in. */
  m->strings = alloc_n(pp->strings.count, sizeof(*m->strings));
  m->funcs = alloc_n(pp->nfuncs, sizeof(*m->funcs));
  m->func_ptrs = alloc_n(pp->nfuncs, sizeof(*m->func_ptrs));
  m->locs = alloc_n(pp->nlocs, sizeof(*m->locs));
  m->loc_ptrs = alloc_n(pp->nlocs, sizeof(*m->loc_ptrs));
  m->lines = alloc_n(pp->nlocs, sizeof(*m->lines));
  m->line_ptrs = alloc_n(pp->nlocs, sizeof(*m->line_ptrs));
  m->samples = alloc_n(pp->nsamples, sizeof(*m->samples));
  m->sample_ptrs = alloc_n(pp->nsamples, sizeof(*m->sample_ptrs));
  m->labels = alloc_n(pp->nsamples, sizeof(*m->labels));
  m->label_ptrs = alloc_n(pp->nsamples, sizeof(*m->label_ptrs));
  m->comments = alloc_n(pp->ncomments, sizeof(*m->comments));
  if (!m->strings || !m->funcs || !m->func_ptrs || !m->locs ||
      !m->loc_ptrs || !m->lines || !m->line_ptrs || !m->samples ||
      !m->sample_ptrs || !m->labels || !m->label_ptrs || !m->comments)
    return -1;

  for (i = 0; i < pp->strings.count; i++)
    m->strings[i] = (char *)mp_strings_get(&pp->strings, (uint32_t)i)->data;
  p->n_string_table = pp->strings.count;
  p->string_table = m->strings;

  for (i = 0; i < pp->nfuncs; i++) {
    Perftools__Profiles__Function *f = &m->funcs[i];
    perftools__profiles__function__init(f);
    f->id = i + 1;
    f->name = pp->funcs[i].name;
    f->system_name = pp->funcs[i].system_name;
    f->filename = pp->funcs[i].file;
    f->start_line = pp->funcs[i].start_line;
    m->func_ptrs[i] = f;
  }
  p->n_function = pp->nfuncs;
  p->function = m->func_ptrs;

  for (i = 0; i < pp->nlocs; i++) {
    Perftools__Profiles__Location *l = &m->locs[i];
    Perftools__Profiles__Line *ln = &m->lines[i];
    perftools__profiles__line__init(ln);
    ln->function_id = (uint64_t)pp->locs[i].func + 1;
    ln->line = pp->locs[i].line;
    m->line_ptrs[i] = ln;
    perftools__profiles__location__init(l);
    l->id = i + 1;
    l->mapping_id = 1;
    l->n_line = 1;
    l->line = &m->line_ptrs[i];
    m->loc_ptrs[i] = l;
  }
  p->n_location = pp->nlocs;
  p->location = m->loc_ptrs;

  for (i = 0; i < pp->nsamples; i++) {
    Perftools__Profiles__Sample *s = &m->samples[i];
    perftools__profiles__sample__init(s);
    s->n_location_id = pp->samples[i].n;
    s->location_id = pp->stack + pp->samples[i].first;
    s->n_value = MP_PPROF_NVALUES;
    s->value = pp->samples[i].values;
    if (pp->samples[i].label_key) {
      perftools__profiles__label__init(&m->labels[i]);
      m->labels[i].key = pp->samples[i].label_key;
      m->labels[i].str = pp->samples[i].label_str;
      m->label_ptrs[i] = &m->labels[i];
      s->n_label = 1;
      s->label = &m->label_ptrs[i];
    }
    m->sample_ptrs[i] = s;
  }
  p->n_sample = pp->nsamples;
  p->sample = m->sample_ptrs;

  for (i = 0; i < pp->ncomments; i++)
    m->comments[i] = pp->comments[i];
  p->n_comment = pp->ncomments;
  p->comment = m->comments;
  return 0;
}

int mp_pprof_finish(struct mp_pprof *pp, FILE *out)
{
  struct pp_message m;
  struct gz_sink *g;
  int rc = -1;

  memset(&m, 0, sizeof(m));
  if (pp->oom || message_build(pp, &m) < 0)
    goto out;
  if (!(g = calloc(1, sizeof(*g))))
    goto out;
  g->base.append = gz_append;
  g->out = out;
  /* 16 + 15: a gzip wrapper (time 0, so equal profiles are equal
  ** files), as pprof's readers expect. */
  if (deflateInit2(&g->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + 15, 8,
		   Z_DEFAULT_STRATEGY) != Z_OK) {
    free(g);
    goto out;
  }
  protobuf_c_message_pack_to_buffer(&m.profile.base, &g->base);
  if (!g->failed)
    gz_run(g, Z_FINISH);
  rc = g->failed ? -1 : 0;
  deflateEnd(&g->z);
  free(g);
out:
  message_free(&m);
  return rc;
}
