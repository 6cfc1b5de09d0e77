/*
** valgrind DHAT's JSON (file version 2, heap mode), which valgrind's
** dh_view.html and the Firefox Profiler open. A program point is a call
** path (a stack node) when every file has stacks, else a location, with
** the figures of mp_profile.h's lifetimes; doc/json-schema.md says what
** each field means here. Frames are named as the folded format names
** them, leaf first; dh_view builds its tree by frame index and rejects
** two points with the same frames, so each distinct frame is one entry
** of ftbl, and a name that two different frames print alike gets " #N".
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_map.h"
#include "mp_report.h"

/* Blocks freed within this many time units are short-lived (dh_view's
** "tuth"): a block freed by the next event, or within a millisecond. */
#define DHAT_TUTH_EVENTS 1
#define DHAT_TUTH_US 1000

/* What a frame is, to tell apart two frames that print alike. */
struct frame_id {
  uint32_t tag, loc, name, site;
};

struct ftbl {
  struct mp_buf text;		/* The names, each NUL-terminated. */
  size_t *at;			/* Entry -> offset in text. */
  struct frame_id *ids;
  uint32_t n, cap;
  struct mp_map by_name;	/* Hash of a name -> a: entry + 1. */
};

static uint64_t name_hash(const char *s, size_t n)
{
  uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a. */
  while (n--)
    h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
  return h | 1;	/* Never 0, the map's empty key. */
}

/* The entry of frame id named s (len n), added if new: -1 when out of
** memory. */
static int64_t ftbl_entry(struct ftbl *t, const char *s, size_t n,
			  const struct frame_id *id)
{
  struct mp_buf name = {0};
  unsigned k;
  int64_t r = -1;

  mp_buf_add(&name, s, n);
  for (k = 1; !name.oom; k++) {
    uint64_t key = name_hash(name.data, name.len);
    struct mp_map_entry *e;
    int added;
    /* Equal hashes of different names: the next key. */
    for (;;) {
      if (!(e = mp_map_insert(&t->by_name, key, &added)))
	goto out;
      if (added || !strcmp(t->text.data + t->at[e->a - 1], name.data))
	break;
      key += 2;
    }
    if (!added && !memcmp(&t->ids[e->a - 1], id, sizeof(*id))) {
      r = (int64_t)e->a - 1;
      break;
    }
    if (added) {
      if (t->n == t->cap) {
	uint32_t c = t->cap ? 2 * t->cap : 256;
	size_t *at = realloc(t->at, (size_t)c * sizeof(*at));
	struct frame_id *ids;
	if (at)
	  t->at = at;
	if (!at || !(ids = realloc(t->ids, (size_t)c * sizeof(*ids)))) {
	  mp_map_remove(&t->by_name, e);
	  goto out;
	}
	t->ids = ids;
	t->cap = c;
      }
      t->at[t->n] = t->text.len;
      t->ids[t->n] = *id;
      mp_buf_add(&t->text, name.data, name.len + 1);
      if (t->text.oom)
	goto out;
      e->a = ++t->n;
      r = (int64_t)t->n - 1;
      break;
    }
    /* Another frame has this name: try the next " #N". */
    name.len = 0;
    mp_buf_add(&name, s, n);
    mp_buf_printf(&name, " #%u", k + 1);
  }
out:
  mp_buf_free(&name);
  return r;
}

static void ftbl_free(struct ftbl *t)
{
  mp_buf_free(&t->text);
  free(t->at);
  free(t->ids);
  mp_map_free(&t->by_name);
}

/* The figures of a point in the file's units. */
struct dhat_units {
  int timed;	/* µs from the time marks, else memory events. */
};

static uint64_t lifetime(const struct dhat_units *u,
			 const struct mp_life_counts *c)
{
  return u->timed ? c->tl_ns / 1000 : c->tl_events;
}

static void put_pp(struct mp_buf *b, const struct dhat_units *u,
		   const struct mp_life_counts *c, const uint32_t *fs,
		   size_t nfs, int first)
{
  size_t i;
  mp_buf_str(b, first ? "\n [" : "\n ,");
  mp_buf_printf(b, "{\"tb\":%llu,\"tbk\":%llu,\"tl\":%llu"
		",\"mb\":%llu,\"mbk\":%llu,\"gb\":%llu,\"gbk\":%llu"
		",\"eb\":%llu,\"ebk\":%llu,\"fs\":[",
		(unsigned long long)c->tb, (unsigned long long)c->tbk,
		(unsigned long long)lifetime(u, c),
		(unsigned long long)c->mb, (unsigned long long)c->mbk,
		(unsigned long long)c->gb, (unsigned long long)c->gbk,
		(unsigned long long)c->eb, (unsigned long long)c->ebk);
  for (i = 0; i < nfs; i++) {
    if (i)
      mp_buf_add(b, ",", 1);
    mp_buf_u64(b, fs[i] + 1);	/* Entry 0 is "[root]". */
  }
  mp_buf_str(b, "]}");
}

struct frames {
  uint32_t *fs;
  size_t n, cap;
};

static int push(struct frames *f, int64_t entry)
{
  if (entry < 0)
    return -1;
  if (f->n == f->cap) {
    size_t c = f->cap ? 2 * f->cap : 64;
    uint32_t *a = realloc(f->fs, c * sizeof(*a));
    if (!a)
      return -1;
    f->fs = a;
    f->cap = c;
  }
  f->fs[f->n++] = (uint32_t)entry;
  return 0;
}

/* The frames of stack node id, leaf first. */
static int stack_frames(const struct mp_profile *p, struct mp_aliases *al,
			struct ftbl *t, uint32_t id, struct frames *f,
			struct mp_buf *name)
{
  f->n = 0;
  while (id) {
    struct mp_frame fr;
    struct frame_id fid;
    mp_profile_frame(p, id, &fr);
    fid.tag = fr.tag;
    fid.loc = fr.loc;
    fid.name = fr.name;
    fid.site = fr.site;
    name->len = 0;
    mp_name_frame(name, p, al, &fr, MP_NAME_FRAME);
    if (name->oom || push(f, ftbl_entry(t, name->data, name->len, &fid)) < 0)
      return -1;
    id = fr.parent;
  }
  return 0;
}

/* The frames of location id, leaf first: its folded frames reversed
** (the location, then its function and chunk). Only the leaf is the
** location's own; the others are the same frame wherever they print
** alike. */
static int loc_frames(const struct mp_profile *p, struct mp_aliases *al,
		      struct ftbl *t, uint32_t id, struct frames *f,
		      struct mp_buf *name)
{
  struct mp_loc l;
  size_t end;
  mp_profile_loc(p, id, &l);
  name->len = 0;
  mp_folded_frames(name, p, al, &l);	/* ';' in names is escaped. */
  if (name->oom)
    return -1;
  f->n = 0;
  for (end = name->len; end > 0;) {
    size_t start = end;
    struct frame_id fid = {UINT32_MAX, 0, 0, 0};
    while (start > 0 && name->data[start - 1] != ';')
      start--;
    if (end == name->len)
      fid.loc = id + 1;
    if (push(f, ftbl_entry(t, name->data + start, end - start, &fid)) < 0)
      return -1;
    end = start ? start - 1 : 0;
  }
  return 0;
}

int mp_report_dhat(FILE *out, struct mp_profile *p,
		   const struct mp_report_opts *o,
		   const struct mp_report_input *in)
{
  const struct mp_summary *total = mp_profile_total(p);
  struct mp_life_summary s;
  struct dhat_units u;
  struct mp_aliases al;
  struct ftbl t;
  struct frames f = {0};
  struct mp_buf b = {0}, name = {0};
  int stacks = mp_profile_nstacks(p) > 1 &&
	       total->stack_files == total->files;
  uint32_t n = stacks ? mp_profile_nstacks(p) : mp_profile_nlocs(p), id;
  int first = 1, rc = -1;
  size_t i;

  (void)o;
  memset(&t, 0, sizeof(t));
  mp_map_init(&t.by_name);
  if (mp_aliases_init(&al, mp_profile_strings(p)) < 0)
    return -1;
  mp_profile_life_summary(p, &s);
  u.timed = s.files && s.timed_files == s.files;
  mp_buf_str(&b, "{\"dhatFileVersion\":2\n,\"mode\":\"heap\","
	     "\"verb\":\"Allocated\"\n,\"bklt\":true,\"bkacc\":false\n");
  mp_buf_printf(&b, ",\"tu\":\"%s\",\"Mtu\":\"%s\"\n,\"tuth\":%d\n",
		u.timed ? "\xc2\xb5s" : "events", u.timed ? "s" : "Mevents",
		u.timed ? DHAT_TUTH_US : DHAT_TUTH_EVENTS);
  /* No command or process id in a stream: the files stand for them. */
  name.len = 0;
  mp_buf_str(&name, "ljmprof report");
  for (i = 0; i < in->nfiles; i++) {
    mp_buf_add(&name, " ", 1);
    mp_buf_str(&name, in->files[i]);
  }
  mp_buf_str(&b, ",\"cmd\":");
  if (!name.oom)
    mp_buf_json_string(&b, name.data, name.len);
  mp_buf_printf(&b, "\n,\"pid\":0\n,\"te\":%llu\n,\"tg\":%llu\n,\"pps\":",
		/* Up: no lifetime, rounded down, is longer than the run. */
		(unsigned long long)(u.timed ? (s.end_ns + 999) / 1000
					     : s.end_events),
		(unsigned long long)(u.timed ? s.peak_ns / 1000
					     : s.peak_events));
  for (id = stacks ? 1 : 0; id < n; id++) {
    struct mp_life_counts c;
    if (stacks)
      mp_profile_life_stack(p, id, &c);
    else
      mp_profile_life_loc(p, id, &c);
    if (!c.tbk)
      continue;	/* Made no block: frees only, or a caller's frame. */
    if ((stacks ? stack_frames(p, &al, &t, id, &f, &name)
		: loc_frames(p, &al, &t, id, &f, &name)) < 0)
      goto out;
    put_pp(&b, &u, &c, f.fs, f.n, first);
    first = 0;
    if (b.oom)
      goto out;
    if (b.len > 1 << 16) {
      fwrite(b.data, 1, b.len, out);
      b.len = 0;
    }
  }
  mp_buf_str(&b, first ? "[]\n,\"ftbl\":\n [\"[root]\"" :
	     "\n ]\n,\"ftbl\":\n [\"[root]\"");
  for (i = 0; i < t.n; i++) {
    mp_buf_str(&b, "\n ,");
    mp_buf_json_string(&b, t.text.data + t.at[i], strlen(t.text.data +
							 t.at[i]));
  }
  mp_buf_str(&b, "\n ]\n}\n");
  if (b.oom)
    goto out;
  fwrite(b.data, 1, b.len, out);
  rc = 0;
out:
  free(f.fs);
  mp_buf_free(&b);
  mp_buf_free(&name);
  ftbl_free(&t);
  mp_aliases_free(&al);
  return rc;
}
