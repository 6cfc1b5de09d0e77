/*
** What was live at a few moments of each file, taken while the file is
** read (the HTML report's "live then"): the largest locations at each
** moment, and, at each file's peak, the held bytes of every stack node
** (or location), for the flame graph of the peak. Memory grows with the
** moments and the locations, never with the file.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef MP_MOMENTS_H
#define MP_MOMENTS_H

#include <stdint.h>

#include "mp_profile.h"

/* Moments per file: the peak and up to MP_MOMENTS_SPREAD more spread
** over it (the end among them); locations kept per moment. */
#define MP_MOMENTS_SPREAD 32
#define MP_MOMENT_ROWS 50
#define MP_MOMENT_PATHS 20	/* Call paths (leaf stack nodes) too. */

struct mp_moment_row {
  uint32_t loc;			/* Location (or, in paths, stack node) id. */
  uint64_t bytes, blocks;	/* Held then, by blocks made in this file. */
};

struct mp_moment {
  uint32_t file;		/* Index of the file in the report's input. */
  int peak;			/* The file's peak. */
  struct mp_timeline_point at;
  struct mp_moment_row *rows;	/* Most bytes first. */
  uint32_t nrows;
  struct mp_moment_row *paths;	/* The same by stack node; blocks 0. */
  uint32_t npaths;
  uint64_t nlive;		/* Locations holding bytes then. */
  /* Bytes held then by each object kind that held any, by blocks made
  ** in this file: [kind, bytes] pairs, by kind. */
  uint64_t (*kinds)[2];
  uint32_t nkinds;
};

struct mp_moments {
  struct mp_moment *m;		/* Ascending events within a file. */
  size_t n, cap;
  /* The file being read: its first moment, which, the profile, and the
  ** spacing of its moments in events (doubled, every other moment
  ** dropped, when MP_MOMENTS_SPREAD are kept). */
  size_t file_first;
  uint32_t file;
  const struct mp_profile *p;
  uint64_t stride;
  uint64_t *base;	/* Held bytes and blocks per location (2 each) and
			** per stack node when the current file began. */
  uint32_t nbase_locs, nbase_stacks;
  uint64_t kbase[MP_NKINDS];	/* Held by each kind when it began. */
  uint64_t *peak_locs;	/* Held at each file's peak, summed. */
  uint32_t npeak_locs;
  uint64_t *peak_stacks;
  uint32_t npeak_stacks;
  int oom;
};

void mp_moments_init(struct mp_moments *m);
void mp_moments_free(struct mp_moments *m);

/*
** One pass per file: mp_moments_file_begin before file (its index in
** the report's input) is read into p, which needs MP_PROFILE_PEAK and
** mp_profile_set_moments(p, mp_moments_hook, m); mp_moments_file_end
** once p has finished it (mp_profile_end_file), to add its end and its
** exact peak; or mp_moments_file_drop when it was dropped. 0, or -1
** when out of memory (m->oom).
*/
int mp_moments_file_begin(struct mp_moments *m, const struct mp_profile *p,
			  uint32_t file);
uint64_t mp_moments_hook(void *ctx, const struct mp_timeline_point *at);
int mp_moments_file_end(struct mp_moments *m, const struct mp_profile *p);
void mp_moments_file_drop(struct mp_moments *m);

#endif
