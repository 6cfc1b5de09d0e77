/*
** The heap over time (mp_profile.h, "timeline"): a fixed number of
** points per file, every tl_stride-th memory event, the stride doubled
** and every other point dropped whenever the array is full, so that the
** points stay spread evenly over the file whatever its length.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_profile_int.h"

/* tl_next: the nearer of the next point and the next moment. */
static void next_due(struct mp_profile *p)
{
  p->tl_next = p->tl_due;
  if (p->mo_next && p->mo_next < p->tl_next)
    p->tl_next = p->mo_next;
}

void mp_timeline_begin_file(struct mp_profile *p)
{
  p->ntl = 0;
  p->tl_stride = 1;
  p->tl_due = 1;
  p->mo_next = p->mo_take ? 1 : 0;
  p->tl_next = 1;
  p->peak_blocks = 0;
  p->peak_time = MP_NO_TIME;
  p->file_time = MP_NO_TIME;
  p->peak_rss = 0;
  p->peak_mapped = 0;
  memset(&p->rss, 0, sizeof(p->rss));
  memset(&p->mapped, 0, sizeof(p->mapped));
  p->rss.max_ns = p->mapped.max_ns = MP_NO_TIME;
}

void mp_profile_set_moments(struct mp_profile *p,
			    uint64_t (*take)(void *ctx,
					     const struct mp_timeline_point *at),
			    void *ctx)
{
  p->mo_take = take;
  p->mo_ctx = ctx;
  /* From the next event of the file being read, if any. */
  p->mo_next = take ? p->file_events + 1 : 0;
  next_due(p);
}

static void put(struct mp_profile *p, struct mp_timeline_point *pt,
		uint64_t evno)
{
  pt->event = evno;
  pt->live_bytes = p->file.live_bytes;
  pt->live_blocks = mp_live_blocks(p);
  pt->time_ns = p->file_time;
  pt->rss = p->rss.last;
  pt->mapped = p->mapped.last;
}

void mp_profile_file_now(struct mp_profile *p,
			 struct mp_timeline_point *out, uint64_t *sample_mean)
{
  put(p, out, p->file_events);
  *sample_mean = p->file.sample_mean;
}

/* The timeline's point at evno, when due. */
static void point(struct mp_profile *p, uint64_t evno)
{
  if (evno < p->tl_due)
    return;
  if (p->ntl == MP_TIMELINE_POINTS) {
    /* Points are at multiples of the stride: keep those of twice it. */
    uint32_t i;
    for (i = 0; 2 * i + 1 < MP_TIMELINE_POINTS; i++)
      p->tl[i] = p->tl[2 * i + 1];
    p->ntl = MP_TIMELINE_POINTS / 2;
    p->tl_stride *= 2;
    if (evno % p->tl_stride) {
      p->tl_due = (evno / p->tl_stride + 1) * p->tl_stride;
      return;
    }
  }
  put(p, &p->tl[p->ntl++], evno);
  p->tl_due = evno + p->tl_stride;
}

void mp_timeline_point(struct mp_profile *p, uint64_t evno)
{
  if (p->mo_next && p->mo_next <= evno) {
    struct mp_timeline_point at;
    put(p, &at, evno);
    p->mo_next = p->mo_take(p->mo_ctx, &at);
    if (!p->mo_next)
      p->oom = 1;
    else if (p->mo_next <= evno)
      p->mo_next = evno + 1;
  }
  point(p, evno);
  next_due(p);
}

int mp_timeline_end_file(struct mp_profile *p)
{
  struct mp_tl_file *f;
  uint64_t last = p->file_events;

  /* The last event, when it fell between two points. */
  if (last && (!p->ntl || p->tl[p->ntl - 1].event != last))
    put(p, &p->tl[p->ntl++], last);
  if (p->ntls == p->tls_cap) {
    uint32_t cap = p->tls_cap ? 2 * p->tls_cap : 4;
    struct mp_tl_file *n = realloc(p->tls, cap * sizeof(*n));
    if (!n)
      return -1;
    p->tls = n;
    p->tls_cap = cap;
  }
  f = &p->tls[p->ntls];
  memset(f, 0, sizeof(*f));
  if (p->ntl) {
    f->points = malloc(p->ntl * sizeof(*f->points));
    if (!f->points)
      return -1;
    memcpy(f->points, p->tl, p->ntl * sizeof(*f->points));
  }
  f->npoints = p->ntl;
  f->has_time = p->file_time != MP_NO_TIME;
  f->end_ns = p->file_time;
  f->peak.event = p->file.peak_event;
  f->peak.live_bytes = p->file.peak_bytes;
  f->peak.live_blocks = p->peak_blocks;
  f->peak.time_ns = p->peak_time;
  f->peak.rss = p->peak_rss;
  f->peak.mapped = p->peak_mapped;
  f->rss = p->rss;
  f->mapped = p->mapped;
  p->ntls++;
  return 0;
}

void mp_timeline_free(struct mp_profile *p)
{
  uint32_t i;
  for (i = 0; i < p->ntls; i++)
    free(p->tls[i].points);
  free(p->tls);
  p->tls = NULL;
  p->ntls = p->tls_cap = 0;
}

uint32_t mp_profile_ntimelines(const struct mp_profile *p)
{
  return p->ntls;
}

void mp_profile_timeline(const struct mp_profile *p, uint32_t i,
			 struct mp_timeline *out)
{
  const struct mp_tl_file *f = &p->tls[i];
  out->points = f->points;
  out->npoints = f->npoints;
  out->peak = f->peak;
  out->has_time = f->has_time;
  out->end_ns = f->end_ns;
  out->rss = f->rss;
  out->mapped = f->mapped;
}
