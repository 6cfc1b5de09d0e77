/*
** `ljmprof stat` as text: the summary of every file read, one fact a
** line.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include "mp_report.h"

#define U(x) ((unsigned long long)(x))

int mp_stat_text(FILE *out, struct mp_profile *p,
		 const struct mp_report_opts *o,
		 const struct mp_report_input *in)
{
  const struct mp_summary *s = mp_profile_total(p);
  struct mp_buf b = {0};
  size_t i;

  for (i = 0; i < in->nfiles; i++) {
    fprintf(out, "file:               %s", mp_name_escaped(&b, in->files[i]));
    if (in->truncated[i])
      fprintf(out, " (truncated after %llu events)", U(in->events_read[i]));
    fputc('\n', out);
  }
  fprintf(out, "stream:             %s\n",
	  s->truncated_files ? "truncated" : "complete");
  fprintf(out, "events:             %llu\n",
	  U(s->n_alloc + s->n_realloc + s->n_free));
  fprintf(out, "  alloc:            %llu\n", U(s->n_alloc));
  fprintf(out, "  realloc:          %llu\n", U(s->n_realloc));
  fprintf(out, "  free:             %llu\n", U(s->n_free));
  b.len = 0;
  mp_name_bytes(&b, s->bytes_allocated, o->human);
  fprintf(out, "bytes allocated:    %s\n", b.data ? b.data : "");
  b.len = 0;
  mp_name_bytes(&b, s->bytes_freed, o->human);
  fprintf(out, "bytes freed:        %s\n", b.data ? b.data : "");
  b.len = 0;
  mp_name_bytes(&b, s->peak_bytes, o->human);
  fprintf(out, "peak live heap:     %s at event %llu", b.data ? b.data : "",
	  U(s->peak_event));
  if (in->nfiles > 1 && s->peak_file < in->nfiles)
    fprintf(out, " of %s", mp_name_escaped(&b, in->files[s->peak_file]));
  fputc('\n', out);
  b.len = 0;
  mp_name_bytes(&b, s->live_bytes, o->human);
  fprintf(out, "live heap at end:   %s in %llu blocks\n", b.data ? b.data : "",
	  U(s->live_blocks));
  fprintf(out, "symbols:            %llu (prototypes %llu, C symbols %llu, "
	  "traces %llu; %llu from events)\n",
	  U(s->n_sym_proto + s->n_sym_cfunc + s->n_sym_trace),
	  U(s->n_sym_proto), U(s->n_sym_cfunc), U(s->n_sym_trace),
	  U(s->n_sym_events));
  b.len = 0;
  mp_name_bytes(&b, s->untracked_bytes, o->human);
  fprintf(out, "untracked frees:    %llu (%s allocated before profiling)\n",
	  U(s->untracked_frees), b.data ? b.data : "");
  if (s->overwritten)
    fprintf(out, "overwritten blocks: %llu (allocated over a live block)\n",
	    U(s->overwritten));
  mp_buf_free(&b);
  return 0;
}
