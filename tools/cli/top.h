/*
** ljmprof top: a live view of the streams programs are writing.
**
** top_model.c follows the files (read incrementally: each refresh reads
** only what was added since the last) and makes a frame, the numbers the
** view shows; top_text.c spells a frame as lines, which the batch output
** prints and top_screen.c draws, so both show the same figures.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef LJMPROF_TOP_H
#define LJMPROF_TOP_H

#include <stddef.h>
#include <stdint.h>

#include "mp_profile.h"
#include "mp_names.h"

enum top_sort { TOP_SORT_HELD, TOP_SORT_GROWTH, TOP_SORT_RATE };
/* What a row is: a location (grouped), a call path (streams with
** stacks), an object kind (streams with kinds). */
enum top_by { TOP_BY_LOCATION, TOP_BY_PATH, TOP_BY_KIND };

struct top_opts {
  enum mp_group group;	/* Locations: line, function or chunk. */
  enum top_by by;
  enum top_sort sort;
  double interval;	/* Seconds between refreshes. */
  double window;	/* Growth over this many seconds. */
  int human;		/* Sizes in KiB, MiB. */
};

/* One location (by name, over every file) in a frame. */
struct top_row {
  const char *name;	/* Escaped for a terminal. */
  uint64_t held;	/* Bytes held now. */
  int64_t growth;	/* Held now minus held a window ago. */
  double rate;		/* Bytes allocated a second, last interval. */
  uint64_t allocated;	/* Bytes allocated since the stream began. */
};

#define TOP_HISTORY 60	/* Live heap totals kept for the history line. */

struct top_frame {
  double elapsed;	/* Seconds since the view began. */
  double span;		/* What growth is over (up to the window); -1:
			** the first frame, since the streams began. */
  uint32_t nfiles, nlive, nended, nwaiting, nbad;
  uint64_t live_bytes;	/* All files' live heaps. */
  uint64_t rss;		/* Sum of the files' last RSS (0: none). */
  uint32_t nrss;	/* Files with RSS. */
  double rate;		/* Bytes allocated a second, all locations. */
  uint64_t sample_mean;	/* Largest sampling mean (0: exact). */
  double read_s;	/* What the last refresh spent reading, */
  uint64_t read_bytes;	/* and how many bytes it read. */
  int behind;		/* Reading took longer than the interval. */
  uint64_t hist[TOP_HISTORY];	/* Live heap, oldest first, */
  uint64_t rss_hist[TOP_HISTORY];	/* and RSS (0: not known then). */
  uint32_t nhist;
  const char *const *notes;	/* Files ended, cut, damaged. */
  size_t nnotes;
  struct top_row *rows;	/* Sorted by the view's key. */
  size_t nrows;
};

/* The defaults: by line, sorted by held, every second, growth over a
** minute, sizes in bytes. */
void top_opts_init(struct top_opts *o);
/* Seconds on the monotonic clock (the view's pace and its reading). */
double top_now(void);

struct top;

/* The view of the files or patterns (glob(3), looked at again at each
** refresh, so that a worker started later is picked up). NULL when out
** of memory. */
struct top *top_new(const struct top_opts *o, char **specs, int nspecs);
void top_free(struct top *t);

/* Another source of files, asked at each refresh before the specs:
** find(ctx, t) calls top_add_file for each file it knows (again each
** time; known ones are skipped). 0, or -1 when out of memory. */
void top_set_finder(struct top *t, int (*find)(void *ctx, struct top *t),
		    void *ctx);
int top_add_file(struct top *t, const char *path);

/* Read what the files gained and make the frame. 0, or -1 when out of
** memory. */
int top_refresh(struct top *t);
const struct top_frame *top_frame(const struct top *t);

/* Sort the frame by another key (no reading). */
void top_sort(struct top *t, enum top_sort s);
/* Another grouping: the files are read again from their beginning. */
int top_regroup(struct top *t, enum top_by by, enum mp_group g);
const struct top_opts *top_options(const struct top *t);

/* -- Spelling a frame (top_text.c) --------------------------------------- */

/* The header's lines (no newlines), one at a time: i from 0 while it
** returns 1. */
int top_header_line(struct mp_buf *b, const struct top_frame *f,
		    const struct top_opts *o, int i, int utf8);
/* The column titles, and row r, for a line of width columns. */
void top_titles(struct mp_buf *b, const struct top_frame *f,
		const struct top_opts *o);
void top_row_line(struct mp_buf *b, const struct top_frame *f,
		  const struct top_opts *o, size_t r, int width);

/* -- Running the view (cmd_top.c) ---------------------------------------- */

/*
** The screen (screen set) until q, or text frames on standard output:
** batch of them (0: until no file is live or awaited and running(ctx),
** when given, says 0). top rows a frame. An exit status.
*/
int top_run(struct top *t, int screen, uint64_t batch, uint64_t top,
	    int (*running)(void *ctx), void *ctx);

/* -- The full-screen view (top_screen.c) --------------------------------- */

/* Run it until q; 0, or -1 when there is no terminal library or the
** terminal cannot be used (said). */
int top_screen(struct top *t);

#endif
