/*
** Two-thread reading: a decoding thread fills batches of events from the
** reader while the calling thread accounts them. The hand-off costs more
** instructions than mp_profile_read's decoding straight into the
** accounting, which ljmprof uses instead; this stays for the tests. Symbol names are copied out of the reader's buffer into
** the batch, since the reader moves on while the batch waits.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mp_profile_int.h"

#define PIPE_BATCH 4096	/* Events per batch: about 0.5 MB. */
#define PIPE_DEPTH 4	/* Batches in flight. */

struct batch {
  struct mp_event ev[PIPE_BATCH];
  size_t name_off[PIPE_BATCH];	/* Symbol events: name offset in names. */
  size_t count;
  enum mp_status st;	/* MP_OK, or the reader's final status. */
  uint64_t offset;	/* Reader offset after the batch (progress). */
  char *names;
  size_t names_len, names_cap;
};

struct pipeline {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  struct batch *ring[PIPE_DEPTH];
  unsigned produced, consumed;	/* Batches; the ring holds the difference. */
  int cancel;			/* The consumer gave up (out of memory). */
  int failed;			/* The producer ran out of memory. */
  struct mp_reader *r;
};

/* Copy a symbol name into the batch; 0, or -1 when out of memory. */
static int keep_name(struct batch *b, size_t i)
{
  struct mp_event *ev = &b->ev[i];
  if (b->names_cap - b->names_len < ev->name_len) {
    size_t ncap = b->names_cap ? b->names_cap : 4096;
    char *nn;
    while (ncap - b->names_len < ev->name_len)
      ncap *= 2;
    nn = realloc(b->names, ncap);
    if (!nn)
      return -1;
    b->names = nn;
    b->names_cap = ncap;
  }
  if (ev->name_len)
    memcpy(b->names + b->names_len, ev->name, ev->name_len);
  b->name_off[i] = b->names_len;
  b->names_len += ev->name_len;
  return 0;
}

static void *produce(void *arg)
{
  struct pipeline *pl = arg;
  enum mp_status st = MP_OK;

  while (st == MP_OK) {
    struct batch *b;
    pthread_mutex_lock(&pl->mu);
    while (pl->produced - pl->consumed == PIPE_DEPTH && !pl->cancel)
      pthread_cond_wait(&pl->cv, &pl->mu);
    if (pl->cancel) {
      pthread_mutex_unlock(&pl->mu);
      break;
    }
    b = pl->ring[pl->produced % PIPE_DEPTH];
    pthread_mutex_unlock(&pl->mu);

    b->count = 0;
    b->names_len = 0;
    while (b->count < PIPE_BATCH) {
      st = mp_reader_next(pl->r, &b->ev[b->count]);
      if (st != MP_OK)
	break;
      if (mp_event_is_symbol(b->ev[b->count].type) &&
	  keep_name(b, b->count) < 0) {
	pl->failed = 1;
	st = MP_ERROR;
	break;
      }
      b->count++;
    }
    b->st = st;
    b->offset = mp_reader_offset(pl->r);

    pthread_mutex_lock(&pl->mu);
    pl->produced++;
    pthread_cond_broadcast(&pl->cv);
    pthread_mutex_unlock(&pl->mu);
  }
  return NULL;
}

enum mp_status mp_profile_read_threaded(struct mp_profile *p,
					struct mp_reader *r, uint64_t *events,
					void (*tick)(void *ctx,
						     uint64_t offset),
					void *ctx)
{
  struct pipeline pl;
  pthread_t thread;
  enum mp_status st = MP_OK;
  uint64_t n = 0;
  int i;

  memset(&pl, 0, sizeof(pl));
  pl.r = r;
  for (i = 0; i < PIPE_DEPTH; i++) {
    pl.ring[i] = calloc(1, sizeof(*pl.ring[i]));
    if (!pl.ring[i])
      goto single;
  }
  pthread_mutex_init(&pl.mu, NULL);
  pthread_cond_init(&pl.cv, NULL);
  if (pthread_create(&thread, NULL, produce, &pl) != 0) {
    pthread_mutex_destroy(&pl.mu);
    pthread_cond_destroy(&pl.cv);
    goto single;
  }

  for (;;) {
    struct batch *b;
    size_t k;
    int64_t done;

    pthread_mutex_lock(&pl.mu);
    while (pl.produced == pl.consumed)
      pthread_cond_wait(&pl.cv, &pl.mu);
    b = pl.ring[pl.consumed % PIPE_DEPTH];
    pthread_mutex_unlock(&pl.mu);

    for (k = 0; k < b->count; k++)
      if (mp_event_is_symbol(b->ev[k].type))
	b->ev[k].name = b->names + b->name_off[k];
    done = mp_profile_events(p, b->ev, b->count);
    st = b->st;
    if (done < 0)
      st = MP_ERROR;
    else {
      if (tick && (n >> 20) != ((n + (uint64_t)done) >> 20))
	tick(ctx, b->offset);
      n += (uint64_t)done;
    }

    pthread_mutex_lock(&pl.mu);
    pl.consumed++;
    if (done < 0)
      pl.cancel = 1;
    pthread_cond_broadcast(&pl.cv);
    pthread_mutex_unlock(&pl.mu);
    if (st != MP_OK)
      break;
  }
  pthread_join(thread, NULL);
  pthread_mutex_destroy(&pl.mu);
  pthread_cond_destroy(&pl.cv);
  if (pl.failed)
    p->oom = 1;
  for (i = 0; i < PIPE_DEPTH; i++) {
    free(pl.ring[i]->names);
    free(pl.ring[i]);
  }
  *events = n;
  return st;

single:
  /* No memory or no thread: do it all here. */
  for (i = 0; i < PIPE_DEPTH; i++)
    free(pl.ring[i]);
  return mp_profile_read(p, r, events, tick, ctx);
}
