/*
** The sentence every report of a sampled profile carries: its figures
** are estimates (tools/profile/mp_sample.c scales them).
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include "mp_report.h"

const char *mp_estimate_note(struct mp_buf *b, const struct mp_summary *s)
{
  uint64_t m = s->sample_mean;
  if (!m)
    return NULL;
  b->len = 0;
  mp_buf_str(b, "figures are estimates from sampling at a mean of ");
  if (m % (1024 * 1024) == 0)
    mp_buf_printf(b, "%lluM", (unsigned long long)(m >> 20));
  else if (m % 1024 == 0)
    mp_buf_printf(b, "%lluK", (unsigned long long)(m >> 10));
  else
    mp_buf_printf(b, "%llu", (unsigned long long)m);
  mp_buf_str(b, " bytes");
  if (s->sample_files < s->files)
    mp_buf_printf(b, " (%llu of %llu files sampled)",
		  (unsigned long long)s->sample_files,
		  (unsigned long long)s->files);
  return b->oom ? NULL : b->data;
}
