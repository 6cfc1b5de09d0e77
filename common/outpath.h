/*
** ljmprof core: the names of the files the streams go to.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef LJM_OUTPATH_H
#define LJM_OUTPATH_H

#include <stddef.h>

/* What tells one stream from another. */
struct ljm_name {
  long pid;		/* Process id. */
  unsigned vm;		/* VM number in the process, from 1. */
  unsigned stream;	/* Stream number of that VM, from 1. */
  int tag_pid;		/* Put the pid in even without %p (forked child,
			   or the plain name is taken). */
  unsigned again;	/* 2, 3, ...: the names before it are taken; 0. */
};

/* NULL if tmpl is a valid LJMPROF_OUT template, else why not. */
const char *ljm_template_check(const char *tmpl);

/*
** The file name for stream k of template tmpl, into buf[n]:
** %p, %n, %s and %% are expanded; each of pid (when k->tag_pid), VM
** number (when > 1) and stream number (when > 1) that the template does
** not contain goes in as a tag before the extension of the last
** component, then k->again when it is set: x.bin, x.4242.bin, x.vm2.bin,
** x.s3.bin, x.4242.vm2.s3.bin, x.4242.2.bin.
** Returns 0, or ENAMETOOLONG.
*/
int ljm_outpath(char *buf, size_t n, const char *tmpl,
		const struct ljm_name *k);

/*
** Append prefix (if not NULL) and v in decimal to buf at *pos, moving *pos
** and keeping buf terminated within its n bytes; no stdio (no allocation,
** no locale). Returns 0, or ENAMETOOLONG with *pos where it stopped.
*/
int ljm_put_num(char *buf, size_t n, size_t *pos, const char *prefix,
		unsigned long v);

/*
** 1 if path is a name that ljm_outpath can give for tmpl (any pid, VM,
** stream and number; the tags in their place), else 0. ljmprof record
** lists only such names.
*/
int ljm_outpath_match(const char *tmpl, const char *path);

/*
** A relative template made absolute against cwd (programs chdir, the
** template keeps meaning what it meant at start-up). Returns 0 or
** ENAMETOOLONG; an absolute template is copied as is.
*/
int ljm_template_absolute(char *buf, size_t n, const char *tmpl,
			  const char *cwd);

#endif
