/*
** JSON output: the report (schema in doc/json-schema.md) and the stat
** summary. Written by hand: the documents are flat and this keeps the
** tool free of dependencies.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_order.h"
#include "mp_report.h"

/* Length of the valid UTF-8 sequence at s, or 0 when it is not valid. */
static size_t utf8_len(const unsigned char *s, size_t avail)
{
  size_t n, i;
  uint32_t cp;
  if (s[0] < 0x80)
    return 1;
  if (s[0] >= 0xc2 && s[0] <= 0xdf)
    n = 2, cp = s[0] & 0x1f;
  else if (s[0] >= 0xe0 && s[0] <= 0xef)
    n = 3, cp = s[0] & 0x0f;
  else if (s[0] >= 0xf0 && s[0] <= 0xf4)
    n = 4, cp = s[0] & 0x07;
  else
    return 0;
  if (avail < n)
    return 0;
  for (i = 1; i < n; i++) {
    if ((s[i] & 0xc0) != 0x80)
      return 0;
    cp = cp << 6 | (s[i] & 0x3f);
  }
  if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
      (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
    return 0;
  return n;
}

/*
** A JSON string. Bytes that are not valid UTF-8 are written as the code
** point of the same number (U+0080..U+00FF), so any chunk name can be
** represented and the document stays valid.
*/
void mp_json_string(FILE *out, const char *s, size_t len)
{
  const unsigned char *u = (const unsigned char *)s;
  size_t i = 0;

  fputc('"', out);
  while (i < len) {
    unsigned char c = u[i];
    size_t n;
    /* Runs of plain ASCII go out as they are. */
    for (n = i; n < len && u[n] >= 0x20 && u[n] < 0x7f && u[n] != '"' &&
	 u[n] != '\\'; n++)
      ;
    if (n > i) {
      fwrite(u + i, 1, n - i, out);
      i = n;
      continue;
    }
    if (c == '"' || c == '\\') {
      fputc('\\', out);
      fputc(c, out);
      i++;
    } else if (c == '\n') {
      fputs("\\n", out);
      i++;
    } else if (c == '\t') {
      fputs("\\t", out);
      i++;
    } else if (c < 0x20 || c == 0x7f) {
      fprintf(out, "\\u%04x", c);
      i++;
    } else if ((n = utf8_len(u + i, len - i)) == 0) {
      fprintf(out, "\\u%04x", c);
      i++;
    } else {
      fwrite(u + i, 1, n, out);
      i += n;
    }
  }
  fputc('"', out);
}

static void json_cstr(FILE *out, const char *s)
{
  mp_json_string(out, s, strlen(s));
}

#define U(x) ((unsigned long long)(x))

void mp_json_summary(FILE *out, const struct mp_profile *p,
		     const struct mp_report_input *in, const char *ind)
{
  const struct mp_summary *s = &p->total;
  size_t i;

  fprintf(out, "{\n");
  fprintf(out, "%s  \"complete\": %s,\n", ind,
	  s->truncated_files ? "false" : "true");
  fprintf(out, "%s  \"events\": {\"total\": %llu, \"alloc\": %llu, "
	  "\"realloc\": %llu, \"free\": %llu},\n", ind,
	  U(s->n_alloc + s->n_realloc + s->n_free), U(s->n_alloc),
	  U(s->n_realloc), U(s->n_free));
  fprintf(out, "%s  \"symbols\": {\"prototypes\": %llu, \"c_symbols\": %llu, "
	  "\"traces\": %llu, \"from_events\": %llu},\n", ind,
	  U(s->n_sym_proto), U(s->n_sym_cfunc), U(s->n_sym_trace),
	  U(s->n_sym_events));
  fprintf(out, "%s  \"bytes_allocated\": %llu,\n", ind, U(s->bytes_allocated));
  fprintf(out, "%s  \"bytes_freed\": %llu,\n", ind, U(s->bytes_freed));
  fprintf(out, "%s  \"peak_live_bytes\": %llu,\n", ind, U(s->peak_bytes));
  fprintf(out, "%s  \"peak_event\": %llu,\n", ind, U(s->peak_event));
  fprintf(out, "%s  \"peak_file\": ", ind);
  if (s->peak_file < in->nfiles)
    json_cstr(out, in->files[s->peak_file]);
  else
    fputs("null", out);
  fprintf(out, ",\n%s  \"live_bytes_end\": %llu,\n", ind, U(s->live_bytes));
  fprintf(out, "%s  \"live_blocks_end\": %llu,\n", ind, U(s->live_blocks));
  fprintf(out, "%s  \"untracked_frees\": %llu,\n", ind, U(s->untracked_frees));
  fprintf(out, "%s  \"untracked_bytes\": %llu,\n", ind, U(s->untracked_bytes));
  fprintf(out, "%s  \"overwritten_blocks\": %llu,\n", ind, U(s->overwritten));
  fprintf(out, "%s  \"truncated_files\": [", ind);
  for (i = 0; i < in->nfiles; i++)
    if (in->truncated[i]) {
      fputs("{\"file\": ", out);
      json_cstr(out, in->files[i]);
      fprintf(out, ", \"events\": %llu}", U(in->events_read[i]));
      if (i + 1 < in->nfiles) {
	size_t j;
	for (j = i + 1; j < in->nfiles && !in->truncated[j]; j++)
	  ;
	if (j < in->nfiles)
	  fputs(", ", out);
      }
    }
  fprintf(out, "]\n%s}", ind);
}

static void json_header(FILE *out, const char *schema,
			const struct mp_report_input *in)
{
  size_t i;
  fprintf(out, "{\n  \"schema\": \"%s\",\n  \"schema_version\": %d,\n",
	  schema, MP_JSON_SCHEMA_VERSION);
  fputs("  \"files\": [", out);
  for (i = 0; i < in->nfiles; i++) {
    if (i)
      fputs(", ", out);
    json_cstr(out, in->files[i]);
  }
  fputs("],\n", out);
}

int mp_report_stat(FILE *out, const struct mp_profile *p,
		   const struct mp_report_opts *o,
		   const struct mp_report_input *in)
{
  const struct mp_summary *s = &p->total;
  struct mp_buf b = {0};
  size_t i;

  if (o->format == MP_FORMAT_JSON) {
    json_header(out, "ljmprof-stat", in);
    fputs("  \"summary\": ", out);
    mp_json_summary(out, p, in, "  ");
    fputs("\n}\n", out);
    return 0;
  }
  for (i = 0; i < in->nfiles; i++) {
    fprintf(out, "file:               %s", in->files[i]);
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
    fprintf(out, " of %s", in->files[s->peak_file]);
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

static const char *kind_name(uint32_t kind)
{
  switch (kind) {
  case MP_LOC_INTERNAL: return "internal";
  case MP_LOC_LUA: case MP_LOC_LUA_UNKNOWN: return "lua";
  case MP_LOC_C: case MP_LOC_C_UNKNOWN: return "c";
  default: return "trace";
  }
}

static void json_location_fields(FILE *out, const struct mp_profile *p,
				 const struct mp_loc *l)
{
  const struct mp_string *s = l->str != MP_NO_STRING ?
			      mp_strings_get(&p->strings, l->str) : NULL;
  int by_line = p->group == MP_GROUP_LINE || p->group == MP_GROUP_FRAMES;
  int by_func = p->group == MP_GROUP_FUNCTION || p->group == MP_GROUP_FRAMES;

  switch (l->kind) {
  case MP_LOC_LUA:
  case MP_LOC_LUA_UNKNOWN:
    fputs(", \"chunk\": ", out);
    if (s)
      mp_json_string(out, s->data, s->len);
    else
      fprintf(out, "null, \"proto\": \"0x%llx\"", U(l->addr));
    if (by_func && s)
      fprintf(out, ", \"linedefined\": %u", l->linedefined);
    if (by_line)
      fprintf(out, ", \"line\": %u", l->line);
    break;
  case MP_LOC_C:
  case MP_LOC_C_UNKNOWN:
    fputs(", \"symbol\": ", out);
    if (s)
      mp_json_string(out, s->data, s->len);
    else
      fputs("null", out);
    fprintf(out, ", \"address\": \"0x%llx\"", U(l->addr));
    break;
  case MP_LOC_TRACE:
  case MP_LOC_TRACE_NOPROTO:
  case MP_LOC_TRACE_UNKNOWN:
    fprintf(out, ", \"trace\": %llu, \"chunk\": ", U(l->addr));
    if (s)
      mp_json_string(out, s->data, s->len);
    else
      fputs("null", out);
    if (l->kind != MP_LOC_TRACE_UNKNOWN)
      fprintf(out, ", \"line\": %u", l->line);
    break;
  default:
    break;
  }
}

/* The name of location id in plain style, as a JSON string. */
static void json_name(FILE *out, const struct mp_profile *p,
		      struct mp_buf *scratch, uint32_t id)
{
  struct mp_loc l;
  mp_profile_loc(p, id, &l);
  scratch->len = 0;
  mp_name_location(scratch, p, NULL, &l, MP_NAME_PLAIN);
  mp_json_string(out, scratch->data ? scratch->data : "", scratch->len);
}

/* The pairs of one location and kind, in name order of the other
** location (the pairs are sorted so). */
static void json_overrides(FILE *out, const struct mp_profile *p,
			   struct mp_buf *scratch, int is_free, uint32_t loc)
{
  uint64_t i = mp_profile_overrides_of(p, is_free, loc);
  uint64_t want = mp_override_key(is_free, loc, 0) >> 32;
  int first = 1;

  fputc('[', out);
  for (; i < p->nov && mp_profile_override(p, i).key >> 32 == want; i++) {
    struct mp_override ov = mp_profile_override(p, i);
    fputs(first ? "{\"name\": " : ", {\"name\": ", out);
    first = 0;
    json_name(out, p, scratch, (uint32_t)ov.key);
    fprintf(out, ", \"count\": %llu, \"bytes\": %llu}", U(ov.count),
	    U(ov.bytes));
  }
  fputc(']', out);
}

int mp_report_json(FILE *out, struct mp_profile *p,
		   const struct mp_report_opts *o,
		   const struct mp_report_input *in)
{
  static const char *const groups[] = {"line", "function", "chunk", "line"};
  struct mp_order order;
  struct mp_buf scratch = {0};
  struct mp_row *rows = NULL;
  size_t nrows = 0, i;
  uint32_t id;
  int rc = -1;

  if (mp_order_init(&order, p) < 0)
    return -1;
  mp_profile_sort_overrides(p, order.rank, order.loc);
  rows = malloc(((size_t)p->nlocs + 1) * sizeof(*rows));
  if (!rows)
    goto out;
  for (id = 0; id < p->nlocs; id++) {
    struct mp_loc l[1];
    mp_profile_loc(p, id, l);
    mp_order_row(&order, l->n_alloc + l->n_realloc + l->n_free, id,
		 &rows[nrows]);
    nrows++;
  }
  mp_rows_sort(&order, rows, nrows);
  if (o->top && nrows > o->top)
    nrows = (size_t)o->top;

  json_header(out, "ljmprof-report", in);
  fprintf(out, "  \"group\": \"%s\",\n", groups[p->group]);
  fputs("  \"summary\": ", out);
  mp_json_summary(out, p, in, "  ");
  fputs(",\n  \"locations\": [", out);
  for (i = 0; i < nrows; i++) {
    struct mp_loc l[1];
    mp_profile_loc(p, rows[i].loc, l);
    fputs(i ? ",\n    {" : "\n    {", out);
    fputs("\"name\": ", out);
    json_name(out, p, &scratch, rows[i].loc);
    fprintf(out, ", \"kind\": \"%s\"", kind_name(l->kind));
    json_location_fields(out, p, l);
    fprintf(out, ",\n     \"alloc\": {\"count\": %llu, \"bytes\": %llu}",
	    U(l->n_alloc), U(l->alloc_bytes));
    fprintf(out, ",\n     \"realloc\": {\"count\": %llu, \"new_bytes\": %llu, "
	    "\"old_bytes\": %llu}", U(l->n_realloc), U(l->realloc_new),
	    U(l->realloc_old));
    fprintf(out, ",\n     \"free\": {\"count\": %llu, \"bytes\": %llu}",
	    U(l->n_free), U(l->free_bytes));
    fprintf(out, ",\n     \"held\": {\"bytes\": %llu, \"blocks\": %llu, "
	    "\"allocs\": %llu, \"frees\": %llu}", U(l->held_bytes),
	    U(l->held_blocks), U(l->created), U(l->released));
    fputs(",\n     \"overrides\": {\"realloc\": ", out);
    json_overrides(out, p, &scratch, 0, rows[i].loc);
    fputs(", \"free\": ", out);
    json_overrides(out, p, &scratch, 1, rows[i].loc);
    fputs("}}", out);
  }
  fputs(nrows ? "\n  ]\n}\n" : "]\n}\n", out);
  rc = scratch.oom ? -1 : 0;
out:
  free(rows);
  mp_buf_free(&scratch);
  mp_order_free(&order);
  return rc;
}
