/*
** Unit tests of the analyses over a profile (tools/profile/mp_live.h,
** mp_timeline.c): temporary allocations by heaptrack's definition, per
** location and per stack node; the heap over time, its points spread
** evenly in bounded memory, the exact peak, the time marks; moments
** taken while reading (mp_profile_set_moments); what was held at the
** peak, in one pass (mp_profile_loc_at_peak), against the stream read
** up to its peak as report --at=peak reads it; trace call sites
** charged to their lines, inlined frames made frames. Crafted
** streams with numbers worked out by hand, read both ways the profile
** reads (the batched read driver and one event at a time); block
** lifetimes, maxima and the lazy snapshot at the peak (mp_life.c); the
** flame tree's frames merged by name (mp_ftree.c).
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lj_memprof_format.h"
#include "mp_ftree.h"
#include "mp_graph.h"
#include "mp_profile.h"
#include "mp_report.h"
#include "mp_reader.h"
#include "mp_writer.h"

/* Moments for profile_of to take (mp_profile_set_moments), when not
** NULL; the profile's needs. */
static uint64_t (*moments_take)(void *ctx,
				const struct mp_timeline_point *at);
static unsigned profile_needs;

/* A profile of one stream that keeps what needs says (MP_PROFILE_*),
** read by the read driver (fast, 1) or one event at a time (0); the
** file finished, reading done. */
static struct mp_profile *profile_with(void (*run)(struct mpw *), int fast,
				       unsigned needs)
{
  struct mp_profile *p = mp_profile_new(MP_GROUP_LINE,
					needs | profile_needs);
  struct mp_reader *r;
  struct mp_event ev;
  struct mpw w;
  uint64_t n;

  mpw_init_mem(&w);
  run(&w);
  r = mp_reader_new_mem(w.mem, w.len);
  ck_assert_ptr_nonnull(p);
  ck_assert_ptr_nonnull(r);
  if (moments_take)
    mp_profile_set_moments(p, moments_take, p);
  if (fast) {
    ck_assert_int_eq(mp_profile_read(p, r, &n, NULL, NULL), MP_END);
  } else {
    enum mp_status st;
    while ((st = mp_reader_next(r, &ev)) == MP_OK)
      ck_assert_int_eq(mp_profile_event(p, &ev), 0);
    ck_assert_int_eq(st, MP_END);
  }
  mp_profile_end_file(p, 0);
  mp_profile_done_reading(p);
  mp_reader_free(r);
  mpw_free(&w);
  return p;
}

static struct mp_profile *profile_of(void (*run)(struct mpw *), int fast)
{
  return profile_with(run, fast, 0);
}

/* The location id of @app.lua:line (the only chunk of these streams). */
static uint32_t loc_of(const struct mp_profile *p, uint32_t line)
{
  uint32_t id;
  for (id = 0; id < mp_profile_nlocs(p); id++) {
    struct mp_loc l;
    mp_profile_loc(p, id, &l);
    if (l.kind == MP_LOC_LUA && l.line == line)
      return id;
  }
  ck_abort_msg("no location for line %u", line);
  return 0;
}

static struct mp_loc counts_of(const struct mp_profile *p, uint32_t line)
{
  struct mp_loc l;
  mp_profile_loc_counts(p, loc_of(p, line), &l);
  return l;
}

/* -- Temporary allocations ------------------------------------------------ */

/* Version 3: line 1 allocates and frees at once (temporary, twice, 24
** bytes); line 2's block is freed after another allocation, line 3's
** after a free(NULL) in between (neither is); line 4's block is grown
** in place by line 5 and then freed (the realloc made it: temporary at
** line 5); line 6's first block is freed by a realloc (not a free);
** line 7's allocation failed (NULL), and the free of address 0 after it
** is no temporary. */
static void temporaries_v3(struct mpw *w)
{
  mpw_symtab_begin(w);
  mpw_symtab_lfunc(w, 0x1000, "@app.lua", 0);
  mpw_symtab_end(w);
  mpw_alloc(w, mpw_lua(0x1000, 1), 0x100, 8);
  mpw_free_ev(w, mpw_internal(), 0x100, 8);		/* Temporary. */
  mpw_alloc(w, mpw_lua(0x1000, 2), 0x200, 100);
  mpw_alloc(w, mpw_lua(0x1000, 9), 0x900, 1);
  mpw_free_ev(w, mpw_internal(), 0x200, 100);		/* Not. */
  mpw_alloc(w, mpw_lua(0x1000, 3), 0x300, 30);
  mpw_free_ev(w, mpw_internal(), 0, 0);
  mpw_free_ev(w, mpw_internal(), 0x300, 30);		/* Not. */
  mpw_alloc(w, mpw_lua(0x1000, 4), 0x400, 40);
  mpw_realloc(w, mpw_lua(0x1000, 5), 0x400, 40, 0x400, 50);
  mpw_free_ev(w, mpw_lua(0x1000, 2), 0x400, 50);	/* Line 5's. */
  mpw_alloc(w, mpw_lua(0x1000, 6), 0x600, 60);
  mpw_realloc(w, mpw_lua(0x1000, 6), 0x600, 60, 0x610, 70);
  mpw_alloc(w, mpw_lua(0x1000, 7), 0, 70);
  mpw_free_ev(w, mpw_internal(), 0, 0);
  mpw_alloc(w, mpw_lua(0x1000, 1), 0x110, 16);
  mpw_free_ev(w, mpw_lua(0x1000, 1), 0x110, 16);	/* Temporary. */
  mpw_epilogue(w);
}

START_TEST(temporaries_by_location)
{
  int fast;
  for (fast = 0; fast < 2; fast++) {
    struct mp_profile *p = profile_of(temporaries_v3, fast);
    struct mp_loc l = counts_of(p, 1);
    ck_assert_uint_eq(l.temporary, 2);
    ck_assert_uint_eq(l.temporary_bytes, 24);
    ck_assert_uint_eq(counts_of(p, 2).temporary, 0);
    ck_assert_uint_eq(counts_of(p, 3).temporary, 0);
    ck_assert_uint_eq(counts_of(p, 4).temporary, 0);
    l = counts_of(p, 5);
    ck_assert_uint_eq(l.temporary, 1);
    ck_assert_uint_eq(l.temporary_bytes, 50);
    ck_assert_uint_eq(counts_of(p, 6).temporary, 0);
    ck_assert_uint_eq(counts_of(p, 7).temporary, 0);
    ck_assert_uint_eq(mp_profile_measure(p, loc_of(p, 1),
					 MP_MEASURE_TEMPORARY), 2);
    ck_assert_uint_eq(mp_profile_total(p)->temporary, 3);
    ck_assert_uint_eq(mp_profile_total(p)->temporary_bytes, 74);
    mp_profile_delete(p);
  }
}
END_TEST

/* Blocks of 4 GiB and more among small ones, at 47-bit addresses, long
** enough for the read driver's own loop: it leaves the sizes that do not
** pack in the live heap to the reader, which must count them as the
** driver counts the others. */
static void big_sizes(struct mpw *w)
{
  uint64_t i, base = 0x7f0000001000ull;
  mpw_symtab_begin(w);
  mpw_symtab_lfunc(w, 0x5a0000001000ull, "@app.lua", 0);
  mpw_symtab_end(w);
  for (i = 0; i < 400; i++) {
    uint64_t size = i % 7 == 3 ? ((uint64_t)1 << 32) + i : 16 + i % 50;
    mpw_alloc(w, mpw_lua(0x5a0000001000ull, 1 + (uint32_t)(i % 3)),
	      base + i * 64, size);
    if (i % 5 == 4)
      mpw_realloc(w, mpw_lua(0x5a0000001000ull, 2), base + i * 64, size,
		  base + i * 64 + 32, i % 2 ? ((uint64_t)1 << 33) : 24);
    else if (i % 2)
      mpw_free_ev(w, mpw_internal(), base + i * 64, size);
  }
  mpw_epilogue(w);
}

START_TEST(big_sizes_both_ways)
{
  struct mp_profile *slow = profile_of(big_sizes, 0);
  struct mp_profile *fast = profile_of(big_sizes, 1);
  uint32_t line;
  ck_assert_uint_eq(mp_profile_total(fast)->peak_bytes,
		    mp_profile_total(slow)->peak_bytes);
  ck_assert_uint_eq(mp_profile_total(fast)->peak_event,
		    mp_profile_total(slow)->peak_event);
  ck_assert_uint_eq(mp_profile_total(fast)->live_bytes,
		    mp_profile_total(slow)->live_bytes);
  ck_assert_uint_gt(mp_profile_total(fast)->live_bytes, (uint64_t)1 << 33);
  for (line = 1; line <= 3; line++) {
    struct mp_loc a = counts_of(fast, line), b = counts_of(slow, line);
    ck_assert_uint_eq(a.n_alloc, b.n_alloc);
    ck_assert_uint_eq(a.alloc_bytes, b.alloc_bytes);
    ck_assert_uint_eq(a.n_realloc, b.n_realloc);
    ck_assert_uint_eq(a.realloc_new, b.realloc_new);
    ck_assert_uint_eq(a.created, b.created);
    ck_assert_uint_eq(a.released, b.released);
    ck_assert_uint_eq(a.held_bytes, b.held_bytes);
    ck_assert_uint_eq(a.held_blocks, b.held_blocks);
  }
  mp_profile_delete(slow);
  mp_profile_delete(fast);
}
END_TEST

/* With stacks: the same line under two callers; only the path whose
** blocks die at once has temporaries. */
static void temporaries_stacks(struct mpw *w)
{
  uint64_t a, b, a1, b1;
  mpw_symtab_begin_ext(w);
  mpw_symtab_lfunc(w, 0x1000, "@app.lua", 0);
  mpw_symtab_lfunc(w, 0x2000, "@app.lua", 20);
  mpw_symtab_end(w);
  a = mpw_node_lua(w, 0, 0x1000, 10, "");
  b = mpw_node_lua(w, 0, 0x1000, 11, "");
  a1 = mpw_node_lua(w, a, 0x2000, 21, "f");
  b1 = mpw_node_lua(w, b, 0x2000, 21, "f");
  mpw_alloc(w, mpw_stack(a1), 0x100, 10);
  mpw_free_ev(w, mpw_internal(), 0x100, 10);		/* Temporary. */
  mpw_alloc(w, mpw_stack(b1), 0x200, 20);
  mpw_alloc(w, mpw_stack(a1), 0x300, 30);
  mpw_free_ev(w, mpw_internal(), 0x300, 30);		/* Temporary. */
  mpw_free_ev(w, mpw_internal(), 0x200, 20);		/* Not. */
  mpw_epilogue(w);
}

START_TEST(temporaries_by_path)
{
  int fast;
  for (fast = 0; fast < 2; fast++) {
    struct mp_profile *p = profile_of(temporaries_stacks, fast);
    struct mp_loc l = counts_of(p, 21);
    uint32_t id, with = 0;
    ck_assert_uint_eq(l.temporary, 2);
    ck_assert_uint_eq(l.temporary_bytes, 40);
    for (id = 1; id < mp_profile_nstacks(p); id++) {
      struct mp_stack_counts c;
      struct mp_frame f, parent;
      if (!mp_profile_stack(p, id, &c))
	continue;
      mp_profile_frame(p, id, &f);
      mp_profile_frame(p, f.parent, &parent);
      if (c.temporary) {
	struct mp_loc caller;
	mp_profile_loc(p, parent.loc, &caller);
	ck_assert_uint_eq(caller.line, 10);
	ck_assert_uint_eq(c.temporary, 2);
	ck_assert_uint_eq(c.temporary_bytes, 40);
	with++;
      }
    }
    ck_assert_uint_eq(with, 1);
    mp_profile_delete(p);
  }
}
END_TEST

/* -- Sampled streams ------------------------------------------------------ */

/*
** SAMPLE m = 1000: line 10 allocates 3 blocks of 100 bytes (each 1/(1 -
** exp(-0.1)) = 10.508 blocks, 1050.8 bytes), frees one; line 11 one
** block of 10000 (1.0000454 blocks: 1; 10000.45 bytes: 10000), which
** line 12 reallocates to 20000 (its own bytes, once; held at 20000).
*/
static void sampled_stream(struct mpw *w)
{
  uint64_t a, b, c;
  mpw_symtab_begin_ext(w);
  mpw_symtab_lfunc(w, 0x1000, "@app.lua", 0);
  mpw_symtab_end(w);
  mpw_info(w, LJM_INFO_DEPTH, 32);
  mpw_info(w, LJM_INFO_SAMPLE, 1000);
  a = mpw_node_lua(w, 0, 0x1000, 10, "");
  b = mpw_node_lua(w, 0, 0x1000, 11, "");
  c = mpw_node_lua(w, 0, 0x1000, 12, "");
  mpw_alloc(w, mpw_stack(a), 0x100, 100);
  mpw_alloc(w, mpw_stack(a), 0x200, 100);
  mpw_alloc(w, mpw_stack(a), 0x300, 100);
  mpw_free_ev(w, mpw_internal(), 0x200, 100);
  mpw_alloc(w, mpw_stack(b), 0x1000, 10000);
  mpw_realloc(w, mpw_stack(c), 0x1000, 10000, 0x8000, 20000);
  mpw_epilogue(w);
}

START_TEST(sampled_estimates)
{
  int fast;
  for (fast = 0; fast < 2; fast++) {
    struct mp_profile *p = profile_of(sampled_stream, fast);
    const struct mp_summary *s = mp_profile_total(p);
    struct mp_loc l = counts_of(p, 10);
    /* 3 x 10.508 blocks, the fractions carried: 10, 11 (the one freed)
    ** and 10; 3 x 1051 bytes. */
    ck_assert_uint_eq(l.n_alloc, 31);
    ck_assert_uint_eq(l.alloc_bytes, 3 * 1051);
    ck_assert_uint_eq(l.held_bytes, 2 * 1051);
    ck_assert_uint_eq(l.held_blocks, 20);
    l = counts_of(p, 11);
    ck_assert_uint_eq(l.n_alloc, 1);
    ck_assert_uint_eq(l.alloc_bytes, 10000);
    ck_assert_uint_eq(l.held_bytes, 0);
    l = counts_of(p, 12);
    ck_assert_uint_eq(l.n_realloc, 1);
    ck_assert_uint_eq(l.realloc_new, 20000);
    ck_assert_uint_eq(l.realloc_old, 10000);
    ck_assert_uint_eq(l.held_bytes, 20000);
    ck_assert_uint_eq(s->sample_mean, 1000);
    ck_assert_uint_eq(s->sample_files, 1);
    ck_assert_uint_eq(s->live_bytes, 2 * 1051 + 20000);
    ck_assert_uint_eq(s->live_blocks, 20 + 1);
    ck_assert_uint_eq(s->temporary, 0);
    mp_profile_delete(p);
  }
}
END_TEST

/* -- The heap over time --------------------------------------------------- */

static uint64_t n_events;

/* n_events allocations of 1 byte: after event k, k bytes in k blocks. */
static void many_events(struct mpw *w)
{
  uint64_t i;
  mpw_symtab_begin(w);
  mpw_symtab_lfunc(w, 0x1000, "@app.lua", 0);
  mpw_symtab_end(w);
  for (i = 1; i <= n_events; i++)
    mpw_alloc(w, mpw_lua(0x1000, 1), 0x10000 + 16 * i, 1);
  mpw_epilogue(w);
}

START_TEST(timeline_bounded_and_even)
{
  static const uint64_t sizes[] = {1, 7, 511, 512, 513, 1000, 100000};
  size_t s;
  for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
    int fast;
    n_events = sizes[s];
    for (fast = 0; fast < 2; fast++) {
      struct mp_profile *p = profile_of(many_events, fast);
      struct mp_timeline tl;
      uint64_t stride;
      uint32_t k;
      ck_assert_uint_eq(mp_profile_ntimelines(p), 1);
      mp_profile_timeline(p, 0, &tl);
      ck_assert_int_eq(tl.has_time, 0);
      ck_assert_uint_le(tl.npoints, MP_TIMELINE_POINTS + 1);
      if (n_events >= MP_TIMELINE_POINTS)
	ck_assert_uint_ge(tl.npoints, MP_TIMELINE_POINTS / 2);
      else
	ck_assert_uint_eq(tl.npoints, n_events);
      /* Every stride-th event, then the last. */
      stride = tl.points[0].event;
      for (k = 0; k < tl.npoints; k++) {
	const struct mp_timeline_point *pt = &tl.points[k];
	if (k + 1 < tl.npoints)
	  ck_assert_uint_eq(pt->event, (k + 1) * stride);
	else
	  ck_assert_uint_eq(pt->event, n_events);
	ck_assert_uint_eq(pt->live_bytes, pt->event);
	ck_assert_uint_eq(pt->live_blocks, pt->event);
	ck_assert_uint_eq(pt->time_ns, MP_NO_TIME);
      }
      ck_assert_uint_eq(tl.peak.event, n_events);
      ck_assert_uint_eq(tl.peak.live_bytes, n_events);
      ck_assert_uint_eq(tl.peak.live_blocks, n_events);
      mp_profile_delete(p);
    }
  }
}
END_TEST

/* The moments of a long stream: each taken right after the event the
** hook asked for, with the held bytes of that moment (after event k: k
** bytes), one past the end not at all; the timeline the same as
** without them. */
static const uint64_t long_moments[] = {1, 300, 511, 512, 513, 65536,
					99999, 100000, 100001};
#define N_LONG_MOMENTS (sizeof(long_moments) / sizeof(long_moments[0]))
static size_t moments_taken;

static uint64_t check_moment(void *ctx, const struct mp_timeline_point *at)
{
  const struct mp_profile *p = ctx;
  ck_assert_uint_lt(moments_taken, N_LONG_MOMENTS);
  ck_assert_uint_eq(at->event, long_moments[moments_taken]);
  ck_assert_uint_eq(at->live_bytes, long_moments[moments_taken]);
  ck_assert_uint_eq(mp_profile_measure(p, loc_of(p, 1), MP_MEASURE_HELD_BYTES),
		    long_moments[moments_taken]);
  moments_taken++;
  return moments_taken < N_LONG_MOMENTS ? long_moments[moments_taken]
					: UINT64_MAX;
}

START_TEST(moments_exact_and_timeline_kept)
{
  int fast;
  n_events = 100000;
  for (fast = 0; fast < 2; fast++) {
    struct mp_profile *p0, *p;
    struct mp_timeline t0, t;
    uint32_t k;
    moments_take = NULL;
    p0 = profile_of(many_events, fast);
    moments_take = check_moment;
    moments_taken = 0;
    p = profile_of(many_events, fast);
    moments_take = NULL;
    ck_assert_uint_eq(moments_taken, 8);
    mp_profile_timeline(p0, 0, &t0);
    mp_profile_timeline(p, 0, &t);
    ck_assert_uint_eq(t.npoints, t0.npoints);
    for (k = 0; k < t.npoints; k++) {
      ck_assert_uint_eq(t.points[k].event, t0.points[k].event);
      ck_assert_uint_eq(t.points[k].live_bytes, t0.points[k].live_bytes);
    }
    ck_assert_uint_eq(t.peak.event, t0.peak.event);
    mp_profile_delete(p0);
    mp_profile_delete(p);
  }
}
END_TEST

/* -- Held at the peak ------------------------------------------------------ */

/*
** A heap that rises and falls (several peaks, the highest not the last):
** allocations, frees and reallocations at 9 lines, or with stacks at
** 9 paths under 3 callers, blocks moved by reallocations from one line
** to another, an allocation over a live block, from a fixed seed.
*/
static int peak_stacks;
static unsigned peak_seed;

static unsigned next_rand(void)
{
  peak_seed = peak_seed * 1103515245u + 12345u;
  return peak_seed >> 8;
}

static void rising_and_falling(struct mpw *w)
{
  uint64_t live[64] = {0}, sizes[64] = {0}, node[9];
  unsigned i, k;
  struct mpw_loc at;

  if (peak_stacks) {
    uint64_t callers[3];
    mpw_symtab_begin_ext(w);
    mpw_symtab_lfunc(w, 0x1000, "@app.lua", 0);
    mpw_symtab_lfunc(w, 0x2000, "@app.lua", 20);
    mpw_symtab_end(w);
    for (k = 0; k < 3; k++)
      callers[k] = mpw_node_lua(w, 0, 0x1000, 10 + k, "");
    for (k = 0; k < 9; k++)
      node[k] = mpw_node_lua(w, callers[k % 3], 0x2000, 21 + k / 3, "f");
  } else {
    mpw_symtab_begin(w);
    mpw_symtab_lfunc(w, 0x1000, "@app.lua", 0);
    mpw_symtab_end(w);
  }
  for (i = 0; i < 3000; i++) {
    /* Grow for 400 events, shrink for 200 (a little less each time). */
    int grow = (i % 600) < 400;
    unsigned r = next_rand(), slot = r % 64, what = (r >> 6) % 8;
    k = (r >> 9) % 9;
    at = peak_stacks ? mpw_stack(node[k]) : mpw_lua(0x1000, 1 + k);
    if (!live[slot] || (grow && what < 2)) {
      uint64_t addr = 0x10000 + 0x1000 * slot + 16 * (i % 200);
      if (live[slot] && what == 0)
	addr = live[slot];	/* Over a live block, never freed. */
      else if (live[slot])
	continue;
      sizes[slot] = 1 + (r >> 12) % 100;
      mpw_alloc(w, at, addr, sizes[slot]);
      live[slot] = addr;
    } else if (grow || what < 3) {
      uint64_t n = 1 + (r >> 12) % 200;
      uint64_t addr = what & 1 ? live[slot] + 8 : live[slot];
      mpw_realloc(w, at, live[slot], sizes[slot], addr, n);
      live[slot] = addr;
      sizes[slot] = n;
    } else {
      mpw_free_ev(w, peak_stacks ? mpw_internal() : at, live[slot],
		  sizes[slot]);
      live[slot] = 0;
    }
  }
  mpw_epilogue(w);
}

/* The stream of run up to memory event limit, one event at a time, as
** report --at=#EVENT (mp_load_upto) reads it. */
static struct mp_profile *profile_upto(void (*run)(struct mpw *),
				       uint64_t limit)
{
  struct mp_profile *p = mp_profile_new(MP_GROUP_LINE, 0);
  struct mp_reader *r;
  struct mp_event ev;
  struct mpw w;
  uint64_t n = 0;

  mpw_init_mem(&w);
  run(&w);
  r = mp_reader_new_mem(w.mem, w.len);
  ck_assert_ptr_nonnull(p);
  ck_assert_ptr_nonnull(r);
  while (mp_reader_next(r, &ev) == MP_OK) {
    if (!mp_event_is_symbol(ev.type) && n == limit)
      break;
    ck_assert_int_eq(mp_profile_event(p, &ev), 0);
    if (!mp_event_is_symbol(ev.type))
      n++;
  }
  ck_assert_uint_eq(n, limit);
  mp_profile_end_file(p, 0);
  mp_reader_free(r);
  mpw_free(&w);
  return p;
}

START_TEST(peak_held_exact)
{
  unsigned seed;
  for (seed = 1; seed <= 5; seed++) {
    for (peak_stacks = 0; peak_stacks < 2; peak_stacks++) {
      int fast;
      for (fast = 0; fast < 2; fast++) {
	struct mp_profile *p, *q;
	struct mp_timeline tl;
	uint64_t b, k, sum = 0;
	uint32_t id, nq;
	peak_seed = seed;
	profile_needs = MP_PROFILE_PEAK;
	p = profile_of(rising_and_falling, fast);
	profile_needs = 0;
	mp_profile_timeline(p, 0, &tl);
	/* A peak before the end, which the end does not equal. */
	ck_assert_uint_gt(tl.peak.event, 0);
	ck_assert_uint_lt(tl.peak.live_bytes, 1u << 20);
	ck_assert_uint_ne(tl.peak.live_bytes, mp_profile_total(p)->live_bytes);
	peak_seed = seed;
	q = profile_upto(rising_and_falling, tl.peak.event);
	ck_assert_uint_eq(mp_profile_total(q)->live_bytes, tl.peak.live_bytes);
	nq = mp_profile_nlocs(q);
	ck_assert_uint_le(nq, mp_profile_nlocs(p));
	for (id = 0; id < mp_profile_nlocs(p); id++) {
	  struct mp_loc lq = {0}, lp;
	  mp_profile_loc(p, id, &lp);
	  if (id < nq) {
	    mp_profile_loc(q, id, &lq);
	    ck_assert_uint_eq(lq.kind, lp.kind);
	    ck_assert_uint_eq(lq.line, lp.line);
	  }
	  mp_profile_loc_at_peak(p, id, &b, &k);
	  ck_assert_uint_eq(b, lq.held_bytes);
	  ck_assert_uint_eq(k, lq.held_blocks);
	  sum += b;
	}
	ck_assert_uint_eq(sum, tl.peak.live_bytes);
	if (peak_stacks) {
	  uint64_t nodes = 0;
	  ck_assert_uint_ge(mp_profile_nstacks(p), 10);
	  ck_assert_uint_eq(mp_profile_nstacks(q), mp_profile_nstacks(p));
	  sum = 0;
	  for (id = 1; id < mp_profile_nstacks(p); id++) {
	    struct mp_stack_counts c;
	    mp_profile_stack(q, id, &c);
	    mp_profile_stack_at_peak(p, id, &b, &k);
	    ck_assert_uint_eq(b, c.held_bytes);
	    ck_assert_uint_eq(k, c.held_blocks);
	    sum += b;
	    nodes += b != 0;
	  }
	  ck_assert_uint_eq(sum, tl.peak.live_bytes);
	  ck_assert_uint_ge(nodes, 5);
	}
	mp_profile_delete(p);
	mp_profile_delete(q);
      }
    }
  }
}
END_TEST

/* A peak in the middle, time marks between events: 1.0 s before event
** 3, 2.5 s before event 5. */
static void peak_in_middle(struct mpw *w)
{
  mpw_symtab_begin_ext(w);
  mpw_symtab_lfunc(w, 0x1000, "@app.lua", 0);
  mpw_symtab_end(w);
  mpw_alloc(w, mpw_lua(0x1000, 1), 0x100, 100);		/* 1: 100 */
  mpw_alloc(w, mpw_lua(0x1000, 2), 0x200, 900);		/* 2: 1000 */
  mpw_info(w, LJM_INFO_TIME, 1000000000u);
  mpw_alloc(w, mpw_lua(0x1000, 3), 0x300, 50);		/* 3: 1050 */
  mpw_free_ev(w, mpw_internal(), 0x200, 900);		/* 4: 150 */
  mpw_info(w, LJM_INFO_TIME, 2500000000u);
  mpw_alloc(w, mpw_lua(0x1000, 4), 0x400, 10);		/* 5: 160 */
  mpw_epilogue(w);
}

START_TEST(timeline_peak_and_time)
{
  static const uint64_t bytes[] = {100, 1000, 1050, 150, 160};
  static const uint64_t blocks[] = {1, 2, 3, 2, 3};
  static const uint64_t times[] = {MP_NO_TIME, MP_NO_TIME, 1000000000u,
				   1000000000u, 2500000000u};
  int fast;
  for (fast = 0; fast < 2; fast++) {
    struct mp_profile *p = profile_of(peak_in_middle, fast);
    struct mp_timeline tl;
    uint32_t k;
    mp_profile_timeline(p, 0, &tl);
    ck_assert_int_eq(tl.has_time, 1);
    ck_assert_uint_eq(tl.npoints, 5);
    for (k = 0; k < 5; k++) {
      ck_assert_uint_eq(tl.points[k].event, k + 1);
      ck_assert_uint_eq(tl.points[k].live_bytes, bytes[k]);
      ck_assert_uint_eq(tl.points[k].live_blocks, blocks[k]);
      ck_assert_uint_eq(tl.points[k].time_ns, times[k]);
    }
    ck_assert_uint_eq(tl.peak.event, 3);
    ck_assert_uint_eq(tl.peak.live_bytes, 1050);
    ck_assert_uint_eq(tl.peak.live_blocks, 3);
    ck_assert_uint_eq(tl.peak.time_ns, 1000000000u);
    /* As `ljmprof stat` says it. */
    ck_assert_uint_eq(mp_profile_total(p)->peak_event, 3);
    ck_assert_uint_eq(mp_profile_total(p)->peak_bytes, 1050);
    mp_profile_delete(p);
  }
}
END_TEST

/* -- Object kinds ------------------------------------------------------------ */

/* An extended stream: a table (line 1) freed later; a block of a kind
** no reader knows (200, line 2) grown by a reallocation (line 3); an
** allocation without the KIND bit (line 4: unknown); a string (line 1). */
static void kinds_stream(struct mpw *w)
{
  mpw_symtab_begin_ext(w);
  mpw_symtab_lfunc(w, 0x1000, "@app.lua", 0);
  mpw_symtab_end(w);
  mpw_alloc_kind(w, mpw_lua(0x1000, 1), 0x100, 10, LJM_KIND_TAB);
  mpw_alloc_kind(w, mpw_lua(0x1000, 2), 0x200, 20, 200);
  mpw_realloc_kind(w, mpw_lua(0x1000, 3), 0x200, 20, 0x300, 30, 200);
  mpw_free_ev(w, mpw_internal(), 0x100, 10);
  mpw_alloc(w, mpw_lua(0x1000, 4), 0x400, 40);
  mpw_alloc_kind(w, mpw_lua(0x1000, 1), 0x500, 50, LJM_KIND_STR);
  mpw_epilogue(w);
}

/* Its profile with kinds, keeping those of list (NULL: all). */
static struct mp_profile *kinds_profile(const char *list)
{
  struct mp_profile *p = mp_profile_new(MP_GROUP_LINE, MP_PROFILE_KINDS);
  struct mp_reader *r;
  struct mpw w;
  uint64_t n;
  ck_assert_ptr_nonnull(p);
  if (list) {
    uint8_t keep[MP_NKINDS];
    ck_assert_ptr_null(mp_kinds_parse(list, keep));
    mp_profile_filter_kinds(p, keep);
  }
  mpw_init_mem(&w);
  kinds_stream(&w);
  r = mp_reader_new_mem(w.mem, w.len);
  ck_assert_ptr_nonnull(r);
  ck_assert_int_eq(mp_profile_read(p, r, &n, NULL, NULL), MP_END);
  mp_profile_end_file(p, 0);
  mp_profile_done_reading(p);
  mp_reader_free(r);
  mpw_free(&w);
  return p;
}

#define ck_kind(p, k, na, ab, nr, rb, hb, hbytes) do { \
  struct mp_kind_counts c_; \
  mp_profile_kind((p), (k), &c_); \
  ck_assert_uint_eq(c_.n_alloc, (na)); \
  ck_assert_uint_eq(c_.alloc_bytes, (ab)); \
  ck_assert_uint_eq(c_.n_realloc, (nr)); \
  ck_assert_uint_eq(c_.realloc_bytes, (rb)); \
  ck_assert_uint_eq(c_.held_blocks, (hb)); \
  ck_assert_uint_eq(c_.held_bytes, (hbytes)); \
} while (0)

START_TEST(kinds_counted)
{
  struct mp_profile *p = kinds_profile(NULL);
  unsigned order[MP_NKINDS];
  struct mp_buf b = {0};
  uint32_t *pairs;
  size_t npairs;
  struct mp_kind_counts c;
  unsigned k;
  uint32_t loc;

  ck_assert_uint_eq(mp_profile_kind_events(p), 4);
  ck_kind(p, LJM_KIND_TAB, 1, 10, 0, 0, 0, 0);	/* Freed: of its kind. */
  ck_kind(p, 200, 1, 20, 1, 30, 1, 30);
  ck_kind(p, LJM_KIND_NONE, 1, 40, 0, 0, 1, 40);
  ck_kind(p, LJM_KIND_STR, 1, 50, 0, 0, 1, 50);
  /* Most bytes first, ties by number. */
  ck_assert_uint_eq(mp_kinds_order(p, order), 4);
  ck_assert_uint_eq(order[0], LJM_KIND_STR);
  ck_assert_uint_eq(order[1], 200);
  ck_assert_uint_eq(order[2], LJM_KIND_NONE);
  ck_assert_uint_eq(order[3], LJM_KIND_TAB);
  /* Kind 200's locations: the reallocation's (30 bytes) first; the
  ** block line 2 made is line 3's now. */
  pairs = mp_kinds_pairs(p, 200, 0, &npairs);
  ck_assert_ptr_nonnull(pairs);
  ck_assert_uint_eq(npairs, 2);
  mp_profile_kindloc(p, pairs[0], &k, &loc, &c);
  ck_assert_uint_eq(k, 200);
  ck_assert_uint_eq(loc, loc_of(p, 3));
  ck_assert_uint_eq(c.held_bytes, 30);
  mp_profile_kindloc(p, pairs[1], &k, &loc, &c);
  ck_assert_uint_eq(loc, loc_of(p, 2));
  ck_assert_uint_eq(c.n_alloc, 1);
  ck_assert_uint_eq(c.held_blocks, 0);
  free(pairs);
  /* Names: a number not listed is "kind N". */
  ck_assert_str_eq(mp_kind_name(LJM_KIND_TAB_HASH), "table-hash");
  ck_assert_ptr_null(mp_kind_name(200));
  mp_name_kind(&b, 200);
  mp_buf_add(&b, "", 1);
  ck_assert_str_eq(b.data, "kind 200");
  mp_buf_free(&b);
  mp_profile_delete(p);
}
END_TEST

START_TEST(kinds_filtered)
{
  struct mp_profile *p = kinds_profile("200");
  const struct mp_summary *s = mp_profile_total(p);
  uint8_t keep[MP_NKINDS];

  /* Kind 200 alone: its allocation and reallocation, not the free of
  ** the table, which is not untracked either. */
  ck_assert_uint_eq(s->n_alloc, 1);
  ck_assert_uint_eq(s->n_realloc, 1);
  ck_assert_uint_eq(s->n_free, 0);
  ck_assert_uint_eq(s->untracked_frees, 0);
  ck_assert_uint_eq(s->live_blocks, 1);
  ck_assert_uint_eq(s->live_bytes, 30);
  ck_kind(p, LJM_KIND_TAB, 0, 0, 0, 0, 0, 0);
  ck_assert_uint_eq(counts_of(p, 3).held_bytes, 30);
  mp_profile_delete(p);

  p = kinds_profile("table,unknown");
  s = mp_profile_total(p);
  ck_assert_uint_eq(s->n_alloc, 2);
  ck_assert_uint_eq(s->n_realloc, 0);
  ck_assert_uint_eq(s->n_free, 1);	/* The table's, by its block. */
  ck_assert_uint_eq(s->untracked_frees, 0);
  ck_assert_uint_eq(s->live_bytes, 40);
  mp_profile_delete(p);

  ck_assert_ptr_null(mp_kinds_parse("table,string,12", keep));
  ck_assert_uint_eq(keep[LJM_KIND_TAB] + keep[LJM_KIND_STR] +
		    keep[LJM_KIND_CDATA], 3);
  ck_assert_uint_eq(keep[LJM_KIND_TAB_ARRAY], 0);
  ck_assert_str_eq(mp_kinds_parse("table,tables", keep), "tables");
  ck_assert_str_eq(mp_kinds_parse("256", keep), "256");
  ck_assert_str_eq(mp_kinds_parse("", keep), "");
}
END_TEST

/* -- Trace call sites ------------------------------------------------------ */

/*
** Trace 1 starts at line 5 of the main chunk (0x1000), whose frame is the
** node under it. Site 1: line 22 of f (0x2000), inlined at line 7; site
** 2: line 6; site 3 names another start frame (stays the trace's), site
** 4 is never announced, site 0 is not known. A trace node without a
** parent at site 2 is charged to line 6 too.
*/
static void sites_stream(struct mpw *w)
{
  static const uint64_t p1[] = { 0x2000, 0x1000 }, l1[] = { 22, 7 };
  static const uint64_t p2[] = { 0x1000 }, l2[] = { 6 };
  static const uint64_t p3[] = { 0x2000 }, l3[] = { 23 };
  uint64_t start, t1, t2, t3, t4, t0, lone;
  mpw_symtab_begin_ext(w);
  mpw_symtab_lfunc(w, 0x1000, "@app.lua", 0);
  mpw_symtab_lfunc(w, 0x2000, "@app.lua", 20);
  mpw_symtab_trace(w, 1, 0x1000, 5);
  mpw_symtab_end(w);
  mpw_site(w, 1, 1, 2, p1, l1);
  mpw_site(w, 1, 2, 1, p2, l2);
  mpw_site(w, 1, 3, 1, p3, l3);
  start = mpw_node_lua(w, 0, 0x1000, 5, "");
  t1 = mpw_node_trace(w, start, 1, 1);
  t2 = mpw_node_trace(w, start, 1, 2);
  t3 = mpw_node_trace(w, start, 1, 3);
  t4 = mpw_node_trace(w, start, 1, 4);
  t0 = mpw_node_trace(w, start, 1, 0);
  lone = mpw_node_trace(w, 0, 1, 2);
  mpw_alloc(w, mpw_stack(t1), 0x100, 10);
  mpw_alloc(w, mpw_stack(t2), 0x200, 20);
  mpw_alloc(w, mpw_stack(t3), 0x300, 30);
  mpw_alloc(w, mpw_stack(t4), 0x400, 40);
  mpw_alloc(w, mpw_stack(t0), 0x500, 50);
  mpw_alloc(w, mpw_stack(lone), 0x600, 60);
  mpw_epilogue(w);
}

/* The trace's location: its events that no site named. */
static struct mp_loc trace_counts(const struct mp_profile *p)
{
  uint32_t id;
  struct mp_loc l;
  for (id = 0; id < mp_profile_nlocs(p); id++) {
    mp_profile_loc(p, id, &l);
    if (l.kind == MP_LOC_TRACE) {
      mp_profile_loc_counts(p, id, &l);
      return l;
    }
  }
  ck_abort_msg("no trace location");
  return l;
}

START_TEST(sites_charged_to_lines)
{
  int fast;
  for (fast = 0; fast < 2; fast++) {
    struct mp_profile *p = profile_of(sites_stream, fast);
    struct mp_frame f, g, h;
    uint32_t id, inl = 0;
    ck_assert_uint_eq(counts_of(p, 22).alloc_bytes, 10);
    ck_assert_uint_eq(counts_of(p, 6).alloc_bytes, 20 + 60);
    ck_assert_uint_eq(trace_counts(p).alloc_bytes, 30 + 40 + 50);
    /* Site 1's stack: the trace over line 22 of f over line 7 of the
    ** start frame (no longer at its start line 5), over nothing. */
    for (id = 1; id < mp_profile_nstacks(p); id++) {
      mp_profile_frame(p, id, &f);
      if (f.tag == LJM_FRAME_TRACE && f.site == 1) inl = id;
    }
    ck_assert_uint_ne(inl, 0);
    mp_profile_frame(p, inl, &f);
    ck_assert_uint_eq(f.leaf, loc_of(p, 22));
    mp_profile_frame(p, f.parent, &g);
    ck_assert_uint_eq(g.tag, LJM_FRAME_LUA);
    ck_assert_uint_eq(g.loc, loc_of(p, 22));
    mp_profile_frame(p, g.parent, &h);
    ck_assert_uint_eq(h.tag, LJM_FRAME_LUA);
    ck_assert_uint_eq(h.loc, loc_of(p, 7));
    ck_assert_uint_eq(h.parent, 0);
    mp_profile_delete(p);
  }
}
END_TEST

/* -- Lifetimes (DHAT) ------------------------------------------------------ */

/* Line 21 under two callers (paths a1, b1), time marks at 1 s and 3 s:
** 1 a1 makes 0x100 (10, at 0 s); 2 b1 makes 0x200 (20, at 1 s); 3 a1
** makes 0x100 again (30): the stream never freed the first, which ends
** there; the peak, 50 bytes; 4 b1's block is freed (at 3 s); 5 b1
** makes 0x300 (5). */
static void lifetimes_stacks(struct mpw *w)
{
  uint64_t a, b, a1, b1;
  mpw_symtab_begin_ext(w);
  mpw_symtab_lfunc(w, 0x1000, "@app.lua", 0);
  mpw_symtab_lfunc(w, 0x2000, "@app.lua", 20);
  mpw_symtab_end(w);
  a = mpw_node_lua(w, 0, 0x1000, 10, "");
  b = mpw_node_lua(w, 0, 0x1000, 11, "");
  a1 = mpw_node_lua(w, a, 0x2000, 21, "f");
  b1 = mpw_node_lua(w, b, 0x2000, 21, "f");
  mpw_alloc(w, mpw_stack(a1), 0x100, 10);
  mpw_info(w, LJM_INFO_TIME, 1000000000u);
  mpw_alloc(w, mpw_stack(b1), 0x200, 20);
  mpw_alloc(w, mpw_stack(a1), 0x100, 30);
  mpw_info(w, LJM_INFO_TIME, 3000000000u);
  mpw_free_ev(w, mpw_internal(), 0x200, 20);
  mpw_alloc(w, mpw_stack(b1), 0x300, 5);
  mpw_epilogue(w);
}

static void ck_life(const struct mp_life_counts *c, uint64_t tb, uint64_t tbk,
		    uint64_t tl_events, uint64_t tl_ns, uint64_t mb,
		    uint64_t mbk, uint64_t gb, uint64_t gbk, uint64_t eb,
		    uint64_t ebk)
{
  ck_assert_uint_eq(c->tb, tb);
  ck_assert_uint_eq(c->tbk, tbk);
  ck_assert_uint_eq(c->tl_events, tl_events);
  ck_assert_uint_eq(c->tl_ns, tl_ns);
  ck_assert_uint_eq(c->mb, mb);
  ck_assert_uint_eq(c->mbk, mbk);
  ck_assert_uint_eq(c->gb, gb);
  ck_assert_uint_eq(c->gbk, gbk);
  ck_assert_uint_eq(c->eb, eb);
  ck_assert_uint_eq(c->ebk, ebk);
}

START_TEST(lifetimes_by_path_and_time)
{
  int fast;
  for (fast = 0; fast < 2; fast++) {
    struct mp_profile *p = profile_with(lifetimes_stacks, fast,
					MP_PROFILE_LIFETIMES);
    struct mp_life_summary s;
    struct mp_life_counts c;
    uint32_t id, paths = 0;
    char *text = NULL;
    size_t len = 0;
    FILE *out;

    ck_assert(mp_profile_has_lifetimes(p));
    mp_profile_life_summary(p, &s);
    ck_assert_uint_eq(s.files, 1);
    ck_assert_uint_eq(s.timed_files, 1);
    ck_assert_uint_eq(s.end_events, 5);
    ck_assert_uint_eq(s.end_ns, 3000000000u);
    ck_assert_uint_eq(s.peak_events, 3);
    ck_assert_uint_eq(s.peak_ns, 1000000000u);
    /* The line: both paths' blocks, the most live together at event 3. */
    mp_profile_life_loc(p, loc_of(p, 21), &c);
    ck_life(&c, 65, 4, 6, 5000000000u, 50, 2, 50, 2, 35, 2);
    for (id = 1; id < mp_profile_nstacks(p); id++) {
      struct mp_frame f, parent;
      struct mp_loc caller;
      mp_profile_life_stack(p, id, &c);
      if (!c.tbk)
	continue;
      mp_profile_frame(p, id, &f);
      mp_profile_frame(p, f.parent, &parent);
      mp_profile_loc(p, parent.loc, &caller);
      if (caller.line == 10)	/* 10 lived 2 events, 1 s; 30 to the end. */
	ck_life(&c, 40, 2, 4, 3000000000u, 30, 1, 30, 1, 30, 1);
      else	/* 20 lived 2 events, 2 s; 5 none. */
	ck_life(&c, 25, 2, 2, 2000000000u, 20, 1, 20, 1, 5, 1);
      paths++;
    }
    ck_assert_uint_eq(paths, 2);
    /* The DHAT report: µs, the end and the peak from the marks. */
    out = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(out);
    {
      const char *files[] = {"x.bin"};
      struct mp_report_input in = {files, 1, NULL, NULL, NULL};
      struct mp_report_opts o;
      memset(&o, 0, sizeof(o));
      ck_assert_int_eq(mp_report_dhat(out, p, &o, &in), 0);
    }
    fclose(out);
    ck_assert_ptr_nonnull(strstr(text, "\"tu\":\"\xc2\xb5s\",\"Mtu\":\"s\""));
    ck_assert_ptr_nonnull(strstr(text, "\"te\":3000000\n,\"tg\":1000000\n"));
    ck_assert_ptr_nonnull(strstr(text, "\"tb\":40,\"tbk\":2,\"tl\":3000000,"));
    free(text);
    mp_profile_delete(p);
  }
}
END_TEST

/* Without MP_PROFILE_LIFETIMES there are none. */
START_TEST(lifetimes_only_when_asked)
{
  struct mp_profile *p = profile_of(lifetimes_stacks, 1);
  struct mp_life_counts c;
  ck_assert(!mp_profile_has_lifetimes(p));
  mp_profile_life_loc(p, loc_of(p, 21), &c);
  ck_assert_uint_eq(c.tbk, 0);
  mp_profile_delete(p);
}
END_TEST

/* With stacks: f (line 21) called from line 10 (path A) and line 11
** (path B). A snapshot of a table (64) and a string (32); then tables
** of 100 (A, freed), 200 (B) and 300 (A); a string of 40 (A); an array
** part of 16 (B) that A reallocates to 32; the snapshot's table freed. */
static void kind_paths_stream(struct mpw *w, uint64_t *pa, uint64_t *pb)
{
  uint64_t a, b;
  mpw_symtab_begin_ext(w);
  mpw_symtab_lfunc(w, 0x1000, "@app.lua", 0);
  mpw_symtab_lfunc(w, 0x2000, "@app.lua", 20);
  mpw_symtab_end(w);
  mpw_info(w, LJM_INFO_SNAPSHOT, 1);
  mpw_alloc_kind(w, mpw_internal(), 0x100, 64, LJM_KIND_TAB);
  mpw_alloc_kind(w, mpw_internal(), 0x200, 32, LJM_KIND_STR);
  mpw_info(w, LJM_INFO_SNAPSHOT, 0);
  a = mpw_node_lua(w, mpw_node_lua(w, 0, 0x1000, 10, ""), 0x2000, 21, "f");
  b = mpw_node_lua(w, mpw_node_lua(w, 0, 0x1000, 11, ""), 0x2000, 21, "f");
  mpw_alloc_kind(w, mpw_stack(a), 0x500, 100, LJM_KIND_TAB);
  mpw_alloc_kind(w, mpw_stack(b), 0x600, 200, LJM_KIND_TAB);
  mpw_alloc_kind(w, mpw_stack(a), 0x700, 300, LJM_KIND_TAB);
  mpw_alloc_kind(w, mpw_stack(a), 0x800, 40, LJM_KIND_STR);
  mpw_alloc_kind(w, mpw_stack(b), 0x900, 16, LJM_KIND_TAB_ARRAY);
  mpw_realloc_kind(w, mpw_stack(a), 0x900, 16, 0xa00, 32, LJM_KIND_TAB_ARRAY);
  mpw_free_ev(w, mpw_internal(), 0x500, 100);
  mpw_free_ev(w, mpw_internal(), 0x100, 64);
  mpw_epilogue(w);
  *pa = a;
  *pb = b;
}

/* The line of the caller of stack node id. */
static uint32_t caller_line(const struct mp_profile *p, uint32_t id)
{
  struct mp_frame f, parent;
  struct mp_loc l;
  mp_profile_frame(p, id, &f);
  mp_profile_frame(p, f.parent, &parent);
  mp_profile_loc(p, parent.loc, &l);
  return l.line;
}

#define ck_path(p, i, k, caller, na, ab, nr, rb, hb, hbytes) do { \
  struct mp_kind_counts c_; \
  unsigned k_; \
  uint32_t node_; \
  mp_profile_kindpath((p), (i), &k_, &node_, &c_); \
  ck_assert_uint_eq(k_, (k)); \
  if (caller) \
    ck_assert_uint_eq(caller_line((p), node_), (caller)); \
  ck_assert_uint_eq(c_.n_alloc, (na)); \
  ck_assert_uint_eq(c_.alloc_bytes, (ab)); \
  ck_assert_uint_eq(c_.n_realloc, (nr)); \
  ck_assert_uint_eq(c_.realloc_bytes, (rb)); \
  ck_assert_uint_eq(c_.held_blocks, (hb)); \
  ck_assert_uint_eq(c_.held_bytes, (hbytes)); \
} while (0)

START_TEST(kinds_by_path)
{
  struct mp_profile *p = mp_profile_new(MP_GROUP_LINE, MP_PROFILE_KINDS);
  struct mp_reader *r;
  struct mpw w;
  uint64_t n, a, b;
  uint32_t *paths, *pairs;
  size_t npaths, npairs;
  struct mp_kind_counts c;
  struct mp_loc l;
  unsigned k;
  uint32_t loc;

  mpw_init_mem(&w);
  kind_paths_stream(&w, &a, &b);
  r = mp_reader_new_mem(w.mem, w.len);
  ck_assert_int_eq(mp_profile_read(p, r, &n, NULL, NULL), MP_END);
  mp_profile_end_file(p, 0);
  mp_profile_done_reading(p);
  /* Tables: path A made 400 bytes (2), holds 300; B 200, holds it; the
  ** snapshot's table, freed, is no path any more. */
  paths = mp_kinds_paths(p, LJM_KIND_TAB, 0, &npaths);
  ck_assert_ptr_nonnull(paths);
  ck_assert_uint_eq(npaths, 2);
  ck_path(p, paths[0], LJM_KIND_TAB, 10, 2, 400, 0, 0, 1, 300);
  ck_path(p, paths[1], LJM_KIND_TAB, 11, 1, 200, 0, 0, 1, 200);
  free(paths);
  /* Cut to one: the heaviest, and the count of all. */
  paths = mp_kinds_paths(p, LJM_KIND_TAB, 1, &npaths);
  ck_assert_uint_eq(npaths, 2);
  ck_path(p, paths[0], LJM_KIND_TAB, 10, 2, 400, 0, 0, 1, 300);
  free(paths);
  /* Both paths end at line 21: its (kind, location) pair is their sum. */
  pairs = mp_kinds_pairs(p, LJM_KIND_TAB, 0, &npairs);
  ck_assert_uint_eq(npairs, 2);	/* Line 21, live at start (table). */
  mp_profile_kindloc(p, pairs[0], &k, &loc, &c);
  mp_profile_loc(p, loc, &l);
  ck_assert_uint_eq(l.line, 21);
  ck_assert_uint_eq(c.n_alloc, 3);
  ck_assert_uint_eq(c.alloc_bytes, 600);
  ck_assert_uint_eq(c.held_blocks, 2);
  ck_assert_uint_eq(c.held_bytes, 500);
  free(pairs);
  /* The array part: made by B (16), moved by A's reallocation (32). */
  paths = mp_kinds_paths(p, LJM_KIND_TAB_ARRAY, 0, &npaths);
  ck_assert_uint_eq(npaths, 2);
  ck_path(p, paths[0], LJM_KIND_TAB_ARRAY, 10, 0, 0, 1, 32, 1, 32);
  ck_path(p, paths[1], LJM_KIND_TAB_ARRAY, 11, 1, 16, 0, 0, 0, 0);
  free(paths);
  /* Strings: A's 40 bytes, then the snapshot's, held by the node of
  ** live at start (string), no allocation. */
  paths = mp_kinds_paths(p, LJM_KIND_STR, 0, &npaths);
  ck_assert_uint_eq(npaths, 2);
  ck_path(p, paths[0], LJM_KIND_STR, 10, 1, 40, 0, 0, 1, 40);
  ck_path(p, paths[1], LJM_KIND_STR, 0, 0, 0, 0, 0, 1, 32);
  {
    unsigned kk;
    uint32_t node;
    struct mp_frame f;
    mp_profile_kindpath(p, paths[1], &kk, &node, &c);
    mp_profile_frame(p, node, &f);
    ck_assert_uint_eq(f.parent, 0);
    mp_profile_loc(p, f.leaf, &l);
    ck_assert_uint_eq(l.kind, MP_LOC_START);
    ck_assert_uint_eq(l.addr, LJM_KIND_STR);
  }
  free(paths);
  /* Tables A, B, live at start; strings A, live at start; arrays A, B. */
  ck_assert_uint_eq(mp_profile_nkindpaths(p), 7);
  mp_reader_free(r);
  mpw_free(&w);
  mp_profile_delete(p);
}
END_TEST

/* A version-3 stream (no stacks) has no paths, only locations. */
static void v3_kinds_stream(struct mpw *w)
{
  mpw_symtab_begin(w);
  mpw_symtab_lfunc(w, 0x1000, "@app.lua", 0);
  mpw_symtab_end(w);
  mpw_alloc(w, mpw_lua(0x1000, 1), 0x100, 10);
  mpw_alloc(w, mpw_lua(0x1000, 2), 0x200, 20);
  mpw_epilogue(w);
}

START_TEST(kinds_no_paths_without_stacks)
{
  struct mp_profile *p = mp_profile_new(MP_GROUP_LINE, MP_PROFILE_KINDS);
  struct mp_reader *r;
  struct mpw w;
  uint64_t n;
  size_t np, npairs;
  uint32_t *paths, *pairs;
  mpw_init_mem(&w);
  v3_kinds_stream(&w);
  r = mp_reader_new_mem(w.mem, w.len);
  ck_assert_int_eq(mp_profile_read(p, r, &n, NULL, NULL), MP_END);
  mp_profile_end_file(p, 0);
  mp_profile_done_reading(p);
  ck_kind(p, LJM_KIND_NONE, 2, 30, 0, 0, 2, 30);
  pairs = mp_kinds_pairs(p, LJM_KIND_NONE, 0, &npairs);
  ck_assert_uint_eq(npairs, 2);
  paths = mp_kinds_paths(p, LJM_KIND_NONE, 0, &np);
  ck_assert_ptr_nonnull(paths);
  ck_assert_uint_eq(np, 0);
  ck_assert_uint_eq(mp_profile_nkindpaths(p), 0);
  free(paths);
  free(pairs);
  mp_reader_free(r);
  mpw_free(&w);
  mp_profile_delete(p);
}
END_TEST

/* -- Start snapshot ---------------------------------------------------------- */

/* A snapshot of five blocks (a table, a string, two closures defined at
** line 5, an array part), then the run: a table allocated (line 1), the
** snapshot's table and string freed, and a free of a block nobody knows. */
static void snapshot_stream(struct mpw *w)
{
  mpw_symtab_begin_ext(w);
  mpw_symtab_lfunc(w, 0x1000, "@app.lua", 0);
  mpw_symtab_end(w);
  mpw_info(w, LJM_INFO_SNAPSHOT, 1);
  mpw_alloc_kind(w, mpw_internal(), 0x100, 64, LJM_KIND_TAB);
  mpw_alloc_kind(w, mpw_internal(), 0x200, 32, LJM_KIND_STR);
  mpw_alloc_kind(w, mpw_lua(0x1000, 5), 0x300, 40, LJM_KIND_LFUNC);
  mpw_alloc_kind(w, mpw_lua(0x1000, 5), 0x340, 40, LJM_KIND_LFUNC);
  mpw_alloc_kind(w, mpw_internal(), 0x400, 1000, LJM_KIND_TAB_ARRAY);
  mpw_info(w, LJM_INFO_SNAPSHOT, 0);
  mpw_alloc_kind(w, mpw_lua(0x1000, 1), 0x500, 50, LJM_KIND_TAB);
  mpw_free_ev(w, mpw_internal(), 0x100, 64);
  mpw_free_ev(w, mpw_internal(), 0x200, 32);
  mpw_free_ev(w, mpw_internal(), 0x900, 8);
  mpw_epilogue(w);
}

/* The START location of a kind, "live at start (KIND)". */
static struct mp_loc start_of(const struct mp_profile *p, unsigned kind)
{
  uint32_t id;
  struct mp_loc l;
  for (id = 0; id < mp_profile_nlocs(p); id++) {
    mp_profile_loc(p, id, &l);
    if (l.kind == MP_LOC_START && l.addr == kind)
      return l;
  }
  ck_abort_msg("no start location of kind %u", kind);
  return l;
}

START_TEST(snapshot_accounted)
{
  int fast;
  for (fast = 0; fast < 2; fast++) {
    struct mp_profile *p = profile_of(snapshot_stream, fast);
    const struct mp_summary *s = mp_profile_total(p);
    struct mp_loc l;
    struct mp_buf b = {0};
    /* Not allocations: the run allocated one table. */
    ck_assert_uint_eq(s->n_alloc, 1);
    ck_assert_uint_eq(s->bytes_allocated, 50);
    ck_assert_uint_eq(s->n_free, 3);
    ck_assert_uint_eq(s->snapshots, 1);
    ck_assert_uint_eq(s->snap_blocks, 5);
    ck_assert_uint_eq(s->snap_bytes, 1176);
    /* Their frees are theirs; only the unknown block is untracked. */
    ck_assert_uint_eq(s->untracked_frees, 1);
    ck_assert_uint_eq(s->untracked_bytes, 8);
    ck_assert_uint_eq(s->live_blocks, 4);
    ck_assert_uint_eq(s->live_bytes, 40 + 40 + 1000 + 50);
    l = start_of(p, LJM_KIND_TAB);
    ck_assert_uint_eq(l.created, 1);
    ck_assert_uint_eq(l.released, 1);
    ck_assert_uint_eq(l.held_bytes, 0);
    ck_assert_uint_eq(l.n_alloc, 0);
    l = start_of(p, LJM_KIND_LFUNC);
    ck_assert_uint_eq(l.held_blocks, 2);
    ck_assert_uint_eq(l.held_bytes, 80);
    mp_name_location(&b, p, NULL, &l, MP_NAME_PLAIN);
    ck_assert_str_eq(b.data, "live at start (lua-function)");
    mp_buf_free(&b);
    ck_assert_int_eq(mp_profile_in_snapshot(p), 0);
    mp_profile_delete(p);
  }
}
END_TEST

/*
** A heap graph in a later snapshot, worked out by hand: the root holds
** table T (globals) and weak table W; T holds S1 by field a (key K1) and
** table U by field b (key K2); U holds S1 again ([1]) and S2 ([2]); W
** holds S3 through a weak value only; C1 and C2 hold each other and
** nothing holds them. Sizes: T 100, U 50, W 30, S1 10, S2 20, S3 40,
** K1 10, K2 10, C1 8, C2 8.
*/
#define G_T 0x100
#define G_U 0x200
#define G_W 0x300
#define G_S1 0x400
#define G_S2 0x500
#define G_S3 0x600
#define G_K1 0x700
#define G_K2 0x800
#define G_C1 0x900
#define G_C2 0xa00

static void graph_stream(struct mpw *w)
{
  mpw_symtab_begin_ext(w);
  mpw_symtab_lfunc(w, 0x1000, "@app.lua", 0);
  mpw_symtab_end(w);
  mpw_alloc_kind(w, mpw_lua(0x1000, 1), G_T, 100, LJM_KIND_TAB);
  mpw_alloc_kind(w, mpw_lua(0x1000, 2), G_U, 50, LJM_KIND_TAB);
  mpw_alloc_kind(w, mpw_lua(0x1000, 3), G_W, 30, LJM_KIND_TAB);
  mpw_alloc_kind(w, mpw_lua(0x1000, 4), G_S1, 10, LJM_KIND_STR);
  mpw_alloc_kind(w, mpw_lua(0x1000, 4), G_S2, 20, LJM_KIND_STR);
  mpw_alloc_kind(w, mpw_lua(0x1000, 4), G_S3, 40, LJM_KIND_STR);
  mpw_alloc_kind(w, mpw_lua(0x1000, 5), G_K1, 10, LJM_KIND_STR);
  mpw_alloc_kind(w, mpw_lua(0x1000, 5), G_K2, 10, LJM_KIND_STR);
  mpw_alloc_kind(w, mpw_lua(0x1000, 6), G_C1, 8, LJM_KIND_TAB);
  mpw_alloc_kind(w, mpw_lua(0x1000, 6), G_C2, 8, LJM_KIND_TAB);
  mpw_info(w, LJM_INFO_SNAPSHOT, LJM_SNAPSHOT_LATER);
  mpw_alloc_kind(w, mpw_internal(), G_T, 100, LJM_KIND_TAB);
  mpw_graph(w, LJM_GRAPH_OBJ, 0, 0, 0, NULL);
  mpw_graph(w, LJM_GRAPH_ROOT, 0, G_T, 0, "globals");
  mpw_graph(w, LJM_GRAPH_ROOT, 0, G_W, 0, "registry");
  mpw_graph(w, LJM_GRAPH_OBJ, 0, G_T, 0, NULL);
  mpw_graph(w, LJM_GRAPH_FIELD, 0, G_S1, G_K1, "a");
  mpw_graph(w, LJM_GRAPH_FIELD, 0, G_U, G_K2, "b");
  mpw_graph(w, LJM_GRAPH_OBJ, 0, G_U, 0, NULL);
  mpw_graph(w, LJM_GRAPH_INDEX, 1, G_S1, 0, NULL);
  mpw_graph(w, LJM_GRAPH_INDEX, 2, G_S2, 0, NULL);
  mpw_graph(w, LJM_GRAPH_OBJ, LJM_GRAPH_WEAKVALUES, G_W, 0, NULL);
  mpw_graph(w, LJM_GRAPH_INDEX, 1, G_S3, 0, NULL);
  mpw_graph(w, LJM_GRAPH_OBJ, 0, G_C1, 0, NULL);
  mpw_graph(w, LJM_GRAPH_FIELD, 0, G_C2, G_K1, "next");
  mpw_graph(w, LJM_GRAPH_OBJ, 0, G_C2, 0, NULL);
  mpw_graph(w, LJM_GRAPH_FIELD, 0, G_C1, G_K1, "next");
  mpw_info(w, LJM_INFO_SNAPSHOT, LJM_SNAPSHOT_END);
  mpw_free_ev(w, mpw_internal(), G_S3, 40);
  mpw_epilogue(w);
}

static const struct mp_graph_node *graph_node(const struct mp_graph *g,
					      uint64_t addr)
{
  uint32_t i;
  for (i = 0; i < g->nnodes; i++)
    if (g->nodes[i].addr == addr)
      return &g->nodes[i];
  ck_abort_msg("no node at 0x%llx", (unsigned long long)addr);
  return NULL;
}

START_TEST(graph_chains_dominators)
{
  int fast;
  for (fast = 0; fast < 2; fast++) {
    struct mp_profile *p = profile_with(graph_stream, fast, MP_PROFILE_GRAPH);
    const struct mp_graph *g = mp_profile_graph(p);
    const struct mp_graph_node *n;
    ck_assert_ptr_nonnull(g);
    ck_assert_uint_eq(g->nnodes, 11);	/* The root and ten objects. */
    ck_assert_uint_eq(g->snapshot, 1);
    /* The blocks' figures as the heap had them then (S3 was freed after). */
    n = graph_node(g, G_S3);
    ck_assert_uint_eq(n->size, 40);
    ck_assert_uint_eq(n->kind, LJM_KIND_STR);
    ck_assert_uint_eq(n->loc, loc_of(p, 4));
    /* Reached: root, T, U, W, S1, S2, K1, K2; not S3 (weak), C1, C2. */
    ck_assert_uint_eq(g->reached, 8);
    ck_assert_uint_eq(g->reached_bytes, 100 + 50 + 30 + 10 + 20 + 10 + 10);
    ck_assert_uint_eq(graph_node(g, G_S3)->depth, UINT32_MAX);
    ck_assert_uint_eq(graph_node(g, G_C1)->depth, UINT32_MAX);
    ck_assert_uint_eq(graph_node(g, G_C2)->parent, MP_GRAPH_NONE);
    /* Shortest chains: S1 by T.a (depth 2), not by T.b[1]; S2 by T.b[2]. */
    n = graph_node(g, G_S1);
    ck_assert_uint_eq(n->depth, 2);
    ck_assert_uint_eq(g->edges[n->parent].tag, LJM_GRAPH_FIELD);
    ck_assert_str_eq(g->names + g->edges[n->parent].name, "a");
    n = graph_node(g, G_S2);
    ck_assert_uint_eq(n->depth, 3);
    ck_assert_uint_eq(g->edges[n->parent].tag, LJM_GRAPH_INDEX);
    ck_assert_uint_eq(g->edges[n->parent].num, 2);
    ck_assert_uint_eq(g->nodes[g->edges[n->parent].from].addr, G_U);
    /* Dominators: S1 is held by T and U, so by T alone; S2 by U. */
    ck_assert_uint_eq(g->nodes[graph_node(g, G_S1)->idom].addr, G_T);
    ck_assert_uint_eq(g->nodes[graph_node(g, G_S2)->idom].addr, G_U);
    ck_assert_uint_eq(graph_node(g, G_U)->retained, 50 + 20);
    ck_assert_uint_eq(graph_node(g, G_T)->retained,
		      100 + 10 + 10 + 10 + 50 + 20);
    ck_assert_uint_eq(graph_node(g, G_W)->retained, 30);
    ck_assert_uint_eq(graph_node(g, G_S3)->retained, 0);
    /* The root retains what it reaches, no byte twice. */
    ck_assert_uint_eq(g->nodes[0].retained, g->reached_bytes);
    mp_profile_delete(p);
  }
}
END_TEST

/* Without MP_PROFILE_GRAPH the records are read past, and kept nowhere. */
START_TEST(graph_only_when_asked)
{
  struct mp_profile *p = profile_of(graph_stream, 1);
  ck_assert_ptr_null(mp_profile_graph(p));
  ck_assert_uint_eq(mp_profile_total(p)->n_alloc, 10);
  mp_profile_delete(p);
}
END_TEST

START_TEST(snapshot_census)
{
  struct mp_profile *p = profile_of(snapshot_stream, 1);
  struct mp_snap_kind k;
  struct mp_snap_closures cl[4];
  struct mp_snap_block big[MP_SNAP_TOP];
  mp_profile_snap_kind(p, LJM_KIND_LFUNC, &k);
  ck_assert_uint_eq(k.blocks, 2);
  ck_assert_uint_eq(k.bytes, 80);
  ck_assert_uint_eq(k.min, 40);
  ck_assert_uint_eq(k.max, 40);
  mp_profile_snap_kind(p, LJM_KIND_TAB, &k);  /* The run's is not in it. */
  ck_assert_uint_eq(k.blocks, 1);
  ck_assert_uint_eq(k.bytes, 64);
  ck_assert_uint_eq(mp_profile_snap_closures(p, cl, 4), 1);
  ck_assert_uint_eq(cl[0].n, 2);
  ck_assert_uint_eq(cl[0].bytes, 80);
  ck_assert_uint_eq(cl[0].loc, loc_of(p, 5));
  ck_assert_uint_eq(mp_profile_snap_tables(p, big, MP_SNAP_TOP), 2);
  ck_assert_uint_eq(big[0].kind, LJM_KIND_TAB_ARRAY);
  ck_assert_uint_eq(big[0].size, 1000);
  ck_assert_uint_eq(big[1].addr, 0x100);
  mp_profile_delete(p);
}
END_TEST

/* With kinds: the snapshot's blocks are held by their kind, and a free
** of one is of its kind; they are not allocations of it. */
START_TEST(snapshot_kinds)
{
  struct mp_profile *p = mp_profile_new(MP_GROUP_LINE, MP_PROFILE_KINDS);
  struct mp_reader *r;
  struct mpw w;
  uint64_t n;
  mpw_init_mem(&w);
  snapshot_stream(&w);
  r = mp_reader_new_mem(w.mem, w.len);
  ck_assert_int_eq(mp_profile_read(p, r, &n, NULL, NULL), MP_END);
  ck_assert_uint_eq(n, 4);  /* The run's memory events only. */
  mp_profile_end_file(p, 0);
  mp_profile_done_reading(p);
  ck_kind(p, LJM_KIND_TAB, 1, 50, 0, 0, 1, 50);
  ck_kind(p, LJM_KIND_STR, 0, 0, 0, 0, 0, 0);
  ck_kind(p, LJM_KIND_LFUNC, 0, 0, 0, 0, 2, 80);
  ck_kind(p, LJM_KIND_TAB_ARRAY, 0, 0, 0, 0, 1, 1000);
  mp_reader_free(r);
  mpw_free(&w);
  mp_profile_delete(p);
}
END_TEST

/* The page's moments (tools/report/mp_moments.c), chosen in the one
** pass: at most MP_MOMENTS_SPREAD and the peak, ascending; evenly spaced
** but for the end, which is one of them; the peak's exact (as held at
** the peak), the others as the stream read up to them says. */
START_TEST(moments_chosen_in_one_pass)
{
  int fast;
  for (peak_stacks = 0; peak_stacks < 2; peak_stacks++) {
    for (fast = 0; fast < 2; fast++) {
      struct mp_profile *p = mp_profile_new(MP_GROUP_LINE, MP_PROFILE_PEAK);
      struct mp_moments m;
      struct mp_reader *r;
      struct mp_timeline tl;
      struct mpw w;
      uint64_t n, gap = 0;
      size_t i, peaks = 0;

      mp_moments_init(&m);
      peak_seed = 3;
      mpw_init_mem(&w);
      rising_and_falling(&w);
      r = mp_reader_new_mem(w.mem, w.len);
      ck_assert_int_eq(mp_moments_file_begin(&m, p, 0), 0);
      mp_profile_set_moments(p, mp_moments_hook, &m);
      if (fast) {
	ck_assert_int_eq(mp_profile_read(p, r, &n, NULL, NULL), MP_END);
      } else {
	struct mp_event ev;
	while (mp_reader_next(r, &ev) == MP_OK)
	  ck_assert_int_eq(mp_profile_event(p, &ev), 0);
      }
      mp_profile_end_file(p, 0);
      ck_assert_int_eq(mp_moments_file_end(&m, p), 0);
      mp_profile_timeline(p, 0, &tl);
      ck_assert_uint_ge(m.n, MP_MOMENTS_SPREAD / 2);
      ck_assert_uint_le(m.n, MP_MOMENTS_SPREAD + 1);
      ck_assert_uint_eq(m.m[m.n - 1].at.event, tl.points[tl.npoints - 1].event);
      for (i = 0; i < m.n; i++) {
	const struct mp_moment *x = &m.m[i];
	struct mp_profile *q;
	uint32_t j;
	peak_seed = 3;
	q = profile_upto(rising_and_falling, x->at.event);
	ck_assert_uint_eq(x->file, 0);
	if (i)
	  ck_assert_uint_gt(x->at.event, m.m[i - 1].at.event);
	ck_assert_msg(x->at.live_bytes == mp_profile_total(q)->live_bytes, "moment %zu of %zu at %llu peak %d: %llu, not %llu", i, m.n, (unsigned long long)x->at.event, x->peak, (unsigned long long)x->at.live_bytes, (unsigned long long)mp_profile_total(q)->live_bytes);
	if (x->peak) {
	  peaks++;
	  ck_assert_uint_eq(x->at.event, tl.peak.event);
	} else if (i + 1 < m.n) {
	  /* Every stride-th event, from the stride. */
	  if (!gap)
	    gap = x->at.event;
	  ck_assert_uint_eq(x->at.event % gap, 0);
	}
	ck_assert_uint_gt(x->nrows, 0);
	for (j = 0; j < x->nrows; j++) {
	  struct mp_loc l;
	  mp_profile_loc_counts(q, x->rows[j].loc, &l);
	  ck_assert_uint_eq(x->rows[j].bytes, l.held_bytes);
	  ck_assert_uint_eq(x->rows[j].blocks, l.held_blocks);
	  if (j)
	    ck_assert_uint_le(x->rows[j].bytes, x->rows[j - 1].bytes);
	}
	ck_assert_uint_eq(x->npaths > 0, peak_stacks);
	for (j = 0; j < x->npaths; j++) {
	  struct mp_stack_counts c;
	  mp_profile_stack(q, x->paths[j].loc, &c);
	  ck_assert_uint_eq(x->paths[j].bytes, c.held_bytes);
	}
	mp_profile_delete(q);
      }
      ck_assert_uint_eq(peaks, 1);
      ck_assert_uint_gt(gap, 1);	/* The stride was doubled. */
      mp_moments_free(&m);
      mp_reader_free(r);
      mpw_free(&w);
      mp_profile_delete(p);
    }
  }
}
END_TEST

/* The flame tree (mp_ftree.c): ten chunks, each with 30 lines, the
** lines of the chunks interleaved (so that no location's frames are its
** predecessor's), then every line again in the other order (each chunk's
** lines one after the other): the root and each function have more
** children than a list holds, and are found by hash. Line k of chunk c
** allocates c * 100 + k bytes each time. */
#define FT_CHUNKS 10
#define FT_LINES 30

static void ftree_stream(struct mpw *w)
{
  uint64_t a = 0x10000;
  unsigned c, k;
  char name[32];
  mpw_symtab_begin(w);
  for (c = 0; c < FT_CHUNKS; c++) {
    snprintf(name, sizeof(name), "@c%u.lua", c);
    mpw_symtab_lfunc(w, 0x1000 + c * 0x100, name, 0);
  }
  mpw_symtab_end(w);
  for (k = 1; k <= FT_LINES; k++)
    for (c = 0; c < FT_CHUNKS; c++)
      mpw_alloc(w, mpw_lua(0x1000 + c * 0x100, k), a++, c * 100 + k);
  for (c = 0; c < FT_CHUNKS; c++)
    for (k = 1; k <= FT_LINES; k++)
      mpw_alloc(w, mpw_lua(0x1000 + c * 0x100, k), a++, c * 100 + k);
  mpw_epilogue(w);
}

START_TEST(ftree_merged_by_name)
{
  struct mp_profile *p = profile_of(ftree_stream, 1);
  struct mp_aliases al;
  struct mp_ftree t;
  uint64_t all = 0;
  uint32_t i, j, leaves = 0, *size;
  unsigned c, k;

  for (c = 0; c < FT_CHUNKS; c++)
    for (k = 1; k <= FT_LINES; k++)
      all += 2 * (c * 100 + k);
  ck_assert_int_eq(mp_aliases_init(&al, mp_profile_strings(p)), 0);
  ck_assert_int_eq(mp_ftree_init(&t), 0);
  ck_assert_int_eq(mp_ftree_add(&t, p, &al, 1u << MP_FV_ALLOC_BYTES,
				NULL, 0), 0);
  ck_assert_int_eq(mp_ftree_sort(&t), 0);
  /* The root, a chunk and its function each, and the lines. */
  ck_assert_uint_eq(t.n, 1 + 2 * FT_CHUNKS + FT_CHUNKS * FT_LINES);
  ck_assert_uint_eq(t.nodes[0].v[MP_FV_ALLOC_BYTES], all);
  ck_assert_uint_eq(t.nodes[0].nchildren, FT_CHUNKS);
  for (i = 1; i < t.n; i++) {
    const struct mp_ftree_node *n = &t.nodes[i];
    char nm[64];
    /* Siblings in name order, no two alike. */
    for (j = 1; j < n->nchildren; j++) {
      const struct mp_ftree_node *x = &t.nodes[t.order[n->first + j - 1]];
      const struct mp_ftree_node *y = &t.nodes[t.order[n->first + j]];
      size_t m = x->name_len < y->name_len ? x->name_len : y->name_len;
      int d = memcmp(t.names.data + x->name_at, t.names.data + y->name_at, m);
      ck_assert(d < 0 || (d == 0 && x->name_len < y->name_len));
    }
    ck_assert_uint_lt(n->name_len, sizeof(nm));
    memcpy(nm, t.names.data + n->name_at, n->name_len);
    nm[n->name_len] = 0;
    if (sscanf(nm, "@c%u.lua:%u", &c, &k) == 2) {
      leaves++;
      ck_assert_uint_eq(n->nchildren, 0);
      ck_assert_uint_eq(n->v[MP_FV_ALLOC_BYTES], 2 * (c * 100 + k));
    } else if (!strncmp(nm, "@c", 2)) {
      ck_assert_uint_eq(n->parent, 0);	/* A chunk: one function. */
      ck_assert_uint_eq(n->nchildren, 1);
    } else {
      ck_assert_uint_eq(n->nchildren, FT_LINES);	/* Its lines. */
    }
  }
  ck_assert_uint_eq(leaves, FT_CHUNKS * FT_LINES);
  size = mp_ftree_sizes(&t);
  ck_assert_ptr_nonnull(size);
  ck_assert_uint_eq(size[0], t.n);
  ck_assert_uint_eq(size[t.order[t.nodes[0].first]], 2 + FT_LINES);
  free(size);
  mp_ftree_free(&t);
  mp_aliases_free(&al);
  mp_profile_delete(p);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("analyses");
  TCase *tc = tcase_create("core");
  SRunner *sr;
  int failed;

  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, temporaries_by_location);
  tcase_add_test(tc, big_sizes_both_ways);
  tcase_add_test(tc, temporaries_by_path);
  tcase_add_test(tc, sampled_estimates);
  tcase_add_test(tc, timeline_bounded_and_even);
  tcase_add_test(tc, timeline_peak_and_time);
  tcase_add_test(tc, kinds_counted);
  tcase_add_test(tc, kinds_filtered);
  tcase_add_test(tc, kinds_by_path);
  tcase_add_test(tc, kinds_no_paths_without_stacks);
  tcase_add_test(tc, moments_exact_and_timeline_kept);
  tcase_add_test(tc, peak_held_exact);
  tcase_add_test(tc, moments_chosen_in_one_pass);
  tcase_add_test(tc, sites_charged_to_lines);
  tcase_add_test(tc, lifetimes_by_path_and_time);
  tcase_add_test(tc, lifetimes_only_when_asked);
  tcase_add_test(tc, snapshot_accounted);
  tcase_add_test(tc, snapshot_census);
  tcase_add_test(tc, graph_chains_dominators);
  tcase_add_test(tc, graph_only_when_asked);
  tcase_add_test(tc, snapshot_kinds);
  tcase_add_test(tc, ftree_merged_by_name);
  suite_add_tcase(s, tc);
  sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
