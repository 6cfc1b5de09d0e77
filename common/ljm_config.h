/*
** ljmprof core: the environment variables, in one table that drives the
** parser, the unit tests, `ljmprof record --help` and the ENVIRONMENT
** section of libljmprof(7).
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef LJM_LJM_CONFIG_H
#define LJM_LJM_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#define LJM_PATH_MAX	4096	/* Longest template or file name we handle. */
#define LJM_MSG_MAX	512	/* Longest message line. */
#define LJM_NVARS_MAX	16

/* The kinds of value a variable takes. */
enum ljm_type {
  LJM_T_TEMPLATE,	/* A file name template (%p, %n, %s, %%). */
  LJM_T_PATH,		/* A plain file name. */
  LJM_T_SIZE,		/* Bytes: digits with an optional K, M or G suffix. */
  LJM_T_BOOL,		/* 1/0, yes/no, on/off, true/false. */
  LJM_T_SIGNAL,		/* USR1, USR2, RTMIN+N, RTMAX-N (SIG prefix optional). */
  LJM_T_DURATION,	/* Digits with an optional ms, s, m or h suffix. */
  LJM_T_DEPTH,		/* A number of frames; yes: the default, no: 0. */
  LJM_T_SAMPLE,		/* A size as LJM_T_SIZE; yes: the default mean,
			   no: 0. */
  LJM_T_NUMBER		/* Digits. */
};


/* The settings in effect. */
struct ljm_config {
  char out[LJM_PATH_MAX];	/* LJMPROF_OUT template ("" = off). */
  uint64_t bufsize;		/* LJMPROF_BUFSIZE, bytes. */
  int verbose;			/* LJMPROF_VERBOSE. */
  int signo;			/* LJMPROF_SIGNAL, 0 = none. */
  int start;			/* LJMPROF_START: profile VMs from creation. */
  uint64_t delay_ms;		/* LJMPROF_DELAY, milliseconds. */
  uint64_t maxsize;		/* LJMPROF_MAXSIZE, bytes, 0 = no cap. */
  uint64_t flush_ms;		/* LJMPROF_FLUSH, milliseconds, 0 = only
				   full buffers. */
  char manifest[LJM_PATH_MAX];	/* LJMPROF_MANIFEST ("" = none). */
  char debugdir[LJM_PATH_MAX];	/* LJMPROF_DEBUG_DIR, folders by ':'. */
  uint64_t stacks;		/* LJMPROF_STACKS, frames, 0 = leaf only. */
  uint64_t sample;		/* LJMPROF_SAMPLE, mean bytes, 0 = all. */
  uint64_t seed;		/* LJMPROF_SEED, 0 = clock and pid. */
  int snapsig;			/* LJMPROF_SNAPSHOT_SIGNAL, 0 = none. */
  int graph;			/* LJMPROF_GRAPH: snapshots with the graph. */
  int snapclose;		/* LJMPROF_SNAPSHOT_AT_CLOSE. */
};

/* One row of the table. */
struct ljm_var {
  const char *name;	/* Environment variable. */
  enum ljm_type type;	/* Kind of value. */
  const char *def;	/* Default, as the user would write it. */
  const char *range;	/* Accepted values, in words. */
  const char *meaning;	/* What it does (one paragraph, plain text). */
  const char *example;	/* A typical value. */
  size_t off;		/* Field in struct ljm_config. */
  uint64_t min, max;	/* Range of numbers (SIZE, DURATION, DEPTH). */
  int zero_ok;		/* 0 is accepted outside [min, max] (= off). */
};

extern const struct ljm_var ljm_vars[];
extern const size_t ljm_nvars;

/* Reads one variable; returns NULL when it is not set. */
typedef const char *(*ljm_getenv_fn)(const char *name, void *ud);

/*
** Fill *c from the environment. Empty values count as unset. Returns the
** number of bad values; for each, one message line (without "ljmprof: "
** and without newline) is stored in msgs[i] (up to nmsgs). When
** LJMPROF_OUT is unset, nothing else is looked at and 0 is returned.
*/
int ljm_config_load(struct ljm_config *c, ljm_getenv_fn get, void *ud,
		    char msgs[][LJM_MSG_MAX], int nmsgs);

/* Set *c to the defaults of the table (out empty). */
void ljm_config_defaults(struct ljm_config *c);

/*
** Parse one value of the given type. Return NULL on success, else a
** static explanation ("not a size ...", "out of range ...").
*/
const char *ljm_parse_value(const struct ljm_var *v, const char *s,
			    struct ljm_config *c);

/* Parsers used by the table, exported for the unit tests. */
int ljm_parse_size(const char *s, uint64_t *out);	/* 0, EINVAL, ERANGE */
int ljm_parse_bool(const char *s, int *out);		/* 0, EINVAL */
int ljm_parse_signal(const char *s, int *out);		/* 0, EINVAL */
int ljm_parse_duration(const char *s, uint64_t *ms);	/* 0, EINVAL, ERANGE */
int ljm_parse_depth(const char *s, uint64_t *out);	/* 0, EINVAL, ERANGE */
int ljm_parse_sample(const char *s, uint64_t *out);	/* 0, EINVAL, ERANGE */

/* Name of a signal number that ljm_parse_signal accepts ("USR2",
** "RTMIN+3"), written into buf. */
const char *ljm_signal_name(int signo, char *buf, size_t n);

/* Format the value of variable v in *c as the user would write it. */
const char *ljm_config_show(const struct ljm_var *v,
			    const struct ljm_config *c, char *buf, size_t n);

#endif
