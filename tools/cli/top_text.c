/*
** ljmprof top: a frame as lines of text, for the batch output and the
** screen alike (top.h).
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdio.h>
#include <string.h>

#include "top.h"

static const char *group_name(const struct top_opts *o)
{
  if (o->by == TOP_BY_PATH)
    return "call path";
  if (o->by == TOP_BY_KIND)
    return "object kind";
  return o->group == MP_GROUP_FUNCTION ? "function" :
	 o->group == MP_GROUP_CHUNK ? "chunk" : "line";
}

static const char *sort_name(enum top_sort s)
{
  return s == TOP_SORT_GROWTH ? "growth" :
	 s == TOP_SORT_RATE ? "allocation rate" : "held";
}

/* A byte figure: sampled figures are estimates ("~"). */
static void bytes(struct mp_buf *b, uint64_t v, int human)
{
  mp_name_bytes(b, v, human);
}

static void signed_bytes(struct mp_buf *b, int64_t v, int human)
{
  mp_buf_str(b, v < 0 ? "-" : "+");
  mp_name_bytes(b, v < 0 ? (uint64_t)-v : (uint64_t)v, human);
}

/* A history (the live heap's, RSS's), a cell per refresh. */
static void history(struct mp_buf *b, const uint64_t *h, uint32_t nh,
		    int utf8)
{
  static const char *const bars[8] = {
    "\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83", "\xe2\x96\x84",
    "\xe2\x96\x85", "\xe2\x96\x86", "\xe2\x96\x87", "\xe2\x96\x88"
  };
  static const char ascii[] = "_.-~=+*#";
  uint64_t lo = UINT64_MAX, hi = 0;
  uint32_t i;
  for (i = 0; i < nh; i++) {
    if (h[i] < lo) lo = h[i];
    if (h[i] > hi) hi = h[i];
  }
  for (i = 0; i < nh; i++) {
    int k = hi > lo ? (int)((h[i] - lo) * 7 / (hi - lo)) : 0;
    if (utf8)
      mp_buf_str(b, bars[k]);
    else
      mp_buf_add(b, &ascii[k], 1);
  }
}

int top_header_line(struct mp_buf *b, const struct top_frame *f,
		    const struct top_opts *o, int i, int utf8)
{
  const char *est = f->sample_mean ? "~" : "";
  switch (i) {
  case 0:
    mp_buf_printf(b, "ljmprof top: %u file%s (%u live, %u ended", f->nfiles,
		  f->nfiles == 1 ? "" : "s", f->nlive, f->nended);
    if (f->nwaiting)
      mp_buf_printf(b, ", %u not there yet", f->nwaiting);
    if (f->nbad)
      mp_buf_printf(b, ", %u cut or damaged", f->nbad);
    mp_buf_printf(b, "); %.1f s; every %.3g s; by %s, sorted by %s",
		  f->elapsed, o->interval, group_name(o),
		  sort_name(o->sort));
    return 1;
  case 1:
    mp_buf_printf(b, "live heap %s", est);
    bytes(b, f->live_bytes, o->human);
    if (f->nrss) {
      mp_buf_str(b, "  process RSS ");
      bytes(b, f->rss, o->human);
      if (f->nrss > 1)
	mp_buf_printf(b, " (%u processes)", f->nrss);
    }
    mp_buf_printf(b, "  allocating %s", est);
    bytes(b, (uint64_t)(f->rate + 0.5), o->human);
    mp_buf_str(b, "/s");
    if (f->sample_mean)
      mp_buf_printf(b, "  SAMPLED: ~ figures are estimates (mean %llu "
		    "bytes)", (unsigned long long)f->sample_mean);
    return 1;
  case 2:
    mp_buf_str(b, "history: heap ");
    history(b, f->hist, f->nhist, utf8);
    if (f->nrss) {
      mp_buf_str(b, "  RSS ");
      history(b, f->rss_hist, f->nhist, utf8);
    }
    mp_buf_printf(b, "  (the last %u refreshes)", f->nhist);
    if (f->behind)
      mp_buf_printf(b, "  BEHIND: reading took %.2f s (%llu bytes), more "
		    "than the interval", f->read_s,
		    (unsigned long long)f->read_bytes);
    return 1;
  default:
    if ((size_t)(i - 3) < f->nnotes) {
      mp_buf_str(b, f->notes[i - 3]);
      return 1;
    }
    return 0;
  }
}

void top_titles(struct mp_buf *b, const struct top_frame *f,
		const struct top_opts *o)
{
  char g[32];
  if (f->span < 0)
    snprintf(g, sizeof g, "GROWTH/all");
  else
    snprintf(g, sizeof g, "GROWTH/%.0fs", f->span);
  mp_buf_printf(b, "%14s %14s %14s %14s  %s", "HELD", g, "ALLOC/S",
		"ALLOCATED", o->by == TOP_BY_PATH ? "CALL PATH" :
		o->by == TOP_BY_KIND ? "KIND" : "LOCATION");
}

static void cell(struct mp_buf *b, const struct mp_buf *v)
{
  size_t n = v->len;
  while (n++ < 14)
    mp_buf_add(b, " ", 1);
  mp_buf_add(b, v->data ? v->data : "", v->len);
  mp_buf_add(b, " ", 1);
}

void top_row_line(struct mp_buf *b, const struct top_frame *f,
		  const struct top_opts *o, size_t r, int width)
{
  const struct top_row *row = &f->rows[r];
  const char *est = f->sample_mean ? "~" : "";
  struct mp_buf v = {0};
  size_t start = b->len;
  mp_buf_str(&v, est);
  bytes(&v, row->held, o->human);
  cell(b, &v);
  v.len = 0;
  mp_buf_str(&v, est);
  signed_bytes(&v, row->growth, o->human);
  cell(b, &v);
  v.len = 0;
  mp_buf_str(&v, est);
  bytes(&v, (uint64_t)(row->rate + 0.5), o->human);
  mp_buf_str(&v, "/s");
  cell(b, &v);
  v.len = 0;
  mp_buf_str(&v, est);
  bytes(&v, row->allocated, o->human);
  cell(b, &v);
  mp_buf_free(&v);
  mp_buf_add(b, " ", 1);
  mp_buf_str(b, row->name);
  if (width > 0 && b->len - start > (size_t)width) {
    /* Names are escaped: a cut anywhere is safe, but inside a UTF-8
    ** sequence, which it goes back from. */
    size_t cut = start + (size_t)width;
    while (cut > start && ((unsigned char)b->data[cut] & 0xc0) == 0x80)
      cut--;
    b->len = cut;
    b->data[b->len] = 0;
  }
}
