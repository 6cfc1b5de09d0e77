/*
** Shared by all reports: the table of location names.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_report.h"

int mp_report_names_init(struct mp_report_names *n, const struct mp_profile *p,
			 enum mp_name_style style)
{
  uint32_t i;

  memset(n, 0, sizeof(*n));
  if (mp_aliases_init(&n->aliases, &p->strings) < 0)
    return -1;
  n->off = malloc((p->nlocs + 1) * sizeof(*n->off));
  if (!n->off)
    return -1;
  for (i = 0; i < p->nlocs; i++) {
    struct mp_loc l;
    mp_profile_loc(p, i, &l);
    n->off[i] = n->buf.len;
    mp_name_location(&n->buf, p, &n->aliases, &l, style);
    mp_buf_add(&n->buf, "", 1);	/* Keep the terminating NUL. */
  }
  if (!n->buf.data)
    mp_buf_add(&n->buf, "", 1);
  /* A name only counts as used once printed: reset the marks. */
  if (n->aliases.used)
    memset(n->aliases.used, 0, n->aliases.count + 1);
  return n->buf.oom ? -1 : 0;
}

void mp_report_names_free(struct mp_report_names *n)
{
  mp_buf_free(&n->buf);
  free(n->off);
  mp_aliases_free(&n->aliases);
  memset(n, 0, sizeof(*n));
}
