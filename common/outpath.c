/*
** ljmprof core: the names of the files the streams go to.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "ljm_config.h"
#include "outpath.h"

/* -- Helpers ------------------------------------------------------------- */

/* Append s to buf[*pos], keep room for the terminator. */
static int put(char *buf, size_t n, size_t *pos, const char *s, size_t len)
{
  if (*pos + len >= n)
    return ENAMETOOLONG;
  memcpy(buf + *pos, s, len);
  *pos += len;
  buf[*pos] = '\0';
  return 0;
}

int ljm_put_num(char *buf, size_t n, size_t *pos, const char *prefix,
		unsigned long v)
{
  char tmp[32];
  size_t i = sizeof(tmp);
  do {
    tmp[--i] = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0);
  if (prefix && put(buf, n, pos, prefix, strlen(prefix)))
    return ENAMETOOLONG;
  return put(buf, n, pos, tmp + i, sizeof(tmp) - i);
}

/* -- Templates ----------------------------------------------------------- */

const char *ljm_template_check(const char *tmpl)
{
  const char *p;
  size_t len = strlen(tmpl);
  if (len == 0)
    return "empty file name";
  if (len > LJM_PATH_MAX - 128)
    return "file name too long";
  if (tmpl[len - 1] == '/')
    return "names a folder, not a file";
  for (p = tmpl; *p; p++) {
    if (*p != '%')
      continue;
    p++;
    if (*p != 'p' && *p != 'n' && *p != 's' && *p != '%')
      return "unknown %-sequence (use %p pid, %n VM number, "
	     "%s stream number, %% a %)";
  }
  return NULL;
}

int ljm_template_absolute(char *buf, size_t n, const char *tmpl,
			  const char *cwd)
{
  size_t pos = 0;
  buf[0] = '\0';
  if (tmpl[0] == '/' || cwd == NULL || cwd[0] != '/')
    return put(buf, n, &pos, tmpl, strlen(tmpl));
  if (put(buf, n, &pos, cwd, strlen(cwd)))
    return ENAMETOOLONG;
  if (pos > 0 && buf[pos - 1] != '/' && put(buf, n, &pos, "/", 1))
    return ENAMETOOLONG;
  while (tmpl[0] == '.' && tmpl[1] == '/')
    tmpl += 2;
  return put(buf, n, &pos, tmpl, strlen(tmpl));
}

/* -- Names --------------------------------------------------------------- */

int ljm_outpath(char *buf, size_t n, const char *tmpl,
		const struct ljm_name *k)
{
  const char *p;
  size_t pos = 0, base = 0, ext = 0, len;
  int has_p = 0, has_n = 0, has_s = 0;
  char tags[96];
  size_t tpos = 0;

  if (n == 0)
    return ENAMETOOLONG;
  buf[0] = '\0';
  for (p = tmpl; *p; p++) {
    int err = 0;
    if (*p != '%') {
      err = put(buf, n, &pos, p, 1);
      if (*p == '/')
	base = pos;
    } else {
      switch (p[1]) {
      case 'p': has_p = 1; err = ljm_put_num(buf, n, &pos, NULL, (unsigned long)k->pid); break;
      case 'n': has_n = 1; err = ljm_put_num(buf, n, &pos, NULL, k->vm); break;
      case 's': has_s = 1; err = ljm_put_num(buf, n, &pos, NULL, k->stream); break;
      case '%': err = put(buf, n, &pos, "%", 1); break;
      default: err = put(buf, n, &pos, p, p[1] ? 2 : 1); break;
      }
      if (p[1])
	p++;
    }
    if (err)
      return err;
  }

  /* Tags for what the template leaves out. */
  tags[0] = '\0';
  if (k->tag_pid && !has_p)
    ljm_put_num(tags, sizeof(tags), &tpos, ".", (unsigned long)k->pid);
  if (k->vm > 1 && !has_n)
    ljm_put_num(tags, sizeof(tags), &tpos, ".vm", k->vm);
  if (k->stream > 1 && !has_s)
    ljm_put_num(tags, sizeof(tags), &tpos, ".s", k->stream);
  if (k->again > 1)
    ljm_put_num(tags, sizeof(tags), &tpos, ".", k->again);
  if (tpos == 0)
    return 0;

  /* Before the extension of the last component: the last dot that is
  ** not its first character. */
  len = pos;
  ext = len;
  for (p = buf + len; p > buf + base + 1; p--)
    if (p[-1] == '.') {
      ext = (size_t)(p - 1 - buf);
      break;
    }
  if (len + tpos >= n)
    return ENAMETOOLONG;
  memmove(buf + ext + tpos, buf + ext, len - ext + 1);
  memcpy(buf + ext, tags, tpos);
  return 0;
}

/* -- Telling our names from others' -------------------------------------- */

/* Whether [p, pe) is what the template piece [t, te) expands to: %p, %n
** and %s as numbers (up to 20 digits), %% a percent sign. */
static int piece_matches(const char *t, const char *te, const char *p,
			 const char *pe)
{
  while (t < te) {
    if (t[0] == '%' && t + 1 < te &&
	(t[1] == 'p' || t[1] == 'n' || t[1] == 's')) {
      const char *q = p;
      while (q < pe && q - p < 20 && *q >= '0' && *q <= '9')
	q++;
      for (; q > p; q--)
	if (piece_matches(t + 2, te, q, pe))
	  return 1;
      return 0;
    }
    if (t[0] == '%' && t + 1 < te && t[1] == '%')
      t++;
    if (p >= pe || *p != *t)
      return 0;
    p++;
    t++;
  }
  return p == pe;
}

/* The start of the tag ending at end in [base, end) (".4242", ".vm2",
** ".s3", ".2"), or NULL. */
static const char *tag_before(const char *base, const char *end)
{
  const char *q = end;
  while (q > base && q[-1] >= '0' && q[-1] <= '9')
    q--;
  if (q == end)
    return NULL;
  if (q - base >= 3 && q[-1] == 'm' && q[-2] == 'v')
    q -= 2;
  else if (q - base >= 2 && q[-1] == 's')
    q--;
  return q > base && q[-1] == '.' ? q - 1 : NULL;
}

int ljm_outpath_match(const char *tmpl, const char *path)
{
  const char *t, *tbase = tmpl, *text, *tend = tmpl + strlen(tmpl);
  const char *pend = path + strlen(path), *j, *pbase = path;
  size_t suffix;

  for (t = tmpl; t < tend; t++)
    if (*t == '/')
      tbase = t + 1;
  for (j = path; j < pend; j++)
    if (*j == '/')
      pbase = j + 1;
  /* The extension as ljm_outpath finds it: a %-sequence holds no dot. */
  text = tend;
  for (t = tend; t > tbase + 1; t--)
    if (t[-1] == '.') {
      text = t - 1;
      break;
    }
  suffix = (size_t)(tend - text);
  /* Each place the extension could start, then up to five tags before. */
  for (j = pend; j >= pbase; j--) {
    const char *i = j;
    int tags;
    if ((size_t)(pend - j) < suffix || (suffix && *j != '.') ||
	!piece_matches(text, tend, j, pend))
      continue;
    for (tags = 0; i != NULL && tags <= 5; tags++) {
      if (piece_matches(tmpl, text, path, i))
	return 1;
      i = tag_before(pbase, i);
    }
    if (suffix == 0)
      break;
  }
  return 0;
}
