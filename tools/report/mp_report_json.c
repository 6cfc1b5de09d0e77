/*
** JSON output: the report and the stat summary (schema in
** doc/json-schema.md). Written by hand: the documents are flat and this
** keeps the tool free of dependencies.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_order.h"
#include "mp_report.h"
#include "mp_retainers.h"

/*
** A JSON string. Bytes that are not valid UTF-8 are written as the code
** point of the same number (U+0080..U+00FF), so any chunk name can be
** represented and the document stays valid. Control characters,
** C1 included, are escaped.
*/
static void json_str(struct mp_buf *b, const char *s, size_t len)
{
  static const char hex[] = "0123456789abcdef";
  const unsigned char *u = (const unsigned char *)s;
  size_t i = 0;

  mp_buf_add(b, "\"", 1);
  while (i < len) {
    unsigned char c = u[i];
    size_t n;
    /* Runs of plain ASCII go out as they are. */
    for (n = i; n < len && u[n] >= 0x20 && u[n] < 0x7f && u[n] != '"' &&
	 u[n] != '\\'; n++)
      ;
    if (n > i) {
      mp_buf_add(b, s + i, n - i);
      i = n;
      continue;
    }
    if (c == '"' || c == '\\') {
      char esc[2] = {'\\', (char)c};
      mp_buf_add(b, esc, 2);
      i++;
    } else if (c == '\n') {
      mp_buf_add(b, "\\n", 2);
      i++;
    } else if (c == '\t') {
      mp_buf_add(b, "\\t", 2);
      i++;
    } else if (c < 0x20 || c == 0x7f ||
	       (n = mp_utf8_len(u + i, len - i)) == 0) {
      char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
      mp_buf_add(b, esc, 6);
      i++;
    } else if (c == 0xc2 && u[i + 1] < 0xa0) {
      /* A C1 control, escaped too: `cat report.json` stays harmless. */
      char esc[6] = {'\\', 'u', '0', '0', hex[u[i + 1] >> 4],
		     hex[u[i + 1] & 15]};
      mp_buf_add(b, esc, 6);
      i += 2;
    } else {
      mp_buf_add(b, s + i, n);
      i += n;
    }
  }
  mp_buf_add(b, "\"", 1);
}

static void mp_json_string(FILE *out, const char *s, size_t len)
{
  struct mp_buf b = {0};
  json_str(&b, s, len);
  if (b.data)
    fwrite(b.data, 1, b.len, out);
  mp_buf_free(&b);
}

static void json_cstr(FILE *out, const char *s)
{
  mp_json_string(out, s, strlen(s));
}

#define U(x) ((unsigned long long)(x))

static void mp_json_summary(FILE *out, const struct mp_profile *p,
		     const struct mp_report_input *in, const char *ind)
{
  const struct mp_summary *s = mp_profile_total(p);
  size_t i;

  fprintf(out, "{\n");
  fprintf(out, "%s  \"complete\": %s,\n", ind,
	  s->truncated_files ? "false" : "true");
  /* Sampled: every count and byte below is an estimate. Absent from
  ** a profile of every event. */
  if (s->sample_mean)
    fprintf(out, "%s  \"estimates\": true, \"sample_mean\": %llu,\n", ind,
	    U(s->sample_mean));
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
  fprintf(out, ",\n%s  \"temporary_blocks\": %llu,\n", ind, U(s->temporary));
  fprintf(out, "%s  \"temporary_bytes\": %llu,\n", ind,
	  U(s->temporary_bytes));
  fprintf(out, "%s  \"live_bytes_end\": %llu,\n", ind, U(s->live_bytes));
  fprintf(out, "%s  \"live_blocks_end\": %llu,\n", ind, U(s->live_blocks));
  fprintf(out, "%s  \"untracked_frees\": %llu,\n", ind, U(s->untracked_frees));
  fprintf(out, "%s  \"untracked_bytes\": %llu,\n", ind, U(s->untracked_bytes));
  if (s->snapshots) {	/* Streams without one: as they were. */
    fprintf(out, "%s  \"snapshot_blocks\": %llu,\n", ind, U(s->snap_blocks));
    fprintf(out, "%s  \"snapshot_bytes\": %llu,\n", ind, U(s->snap_bytes));
  }
  fprintf(out, "%s  \"overwritten_blocks\": %llu,\n", ind, U(s->overwritten));
  if (s->nodes_full)	/* The node table's limit was reached. */
    fprintf(out, "%s  \"node_table_full\": {\"nodes\": %llu, "
	    "\"cut_events\": %llu, \"leaf_kept\": %s},\n", ind,
	    U(s->nodes_full), U(s->cut_events),
	    s->full_roots ? "true" : "false");
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

/* Seconds since the stream began, from nanoseconds: exact, or null. */
static void json_seconds(FILE *out, uint64_t ns)
{
  if (ns == MP_NO_TIME)
    fputs("null", out);
  else
    fprintf(out, "%llu.%09llu", U(ns / 1000000000u), U(ns % 1000000000u));
}

/* ,"NAME": {"start", "max", "max_time", "end"} of a figure of the
** process the stream has (nothing where it has none). */
static void json_gauge(FILE *out, const char *name, const struct mp_gauge *g)
{
  if (!g->first)
    return;
  fprintf(out, ",\n     \"%s\": {\"start\": %llu, \"max\": %llu, "
	  "\"max_time\": ", name, U(g->first), U(g->max));
  json_seconds(out, g->max_ns);
  fprintf(out, ", \"end\": %llu}", U(g->last));
}

/* [event, live_bytes, live_blocks, seconds], and with has_rss the
** process's resident bytes then (null before the first INFO RSS), and
** with has_mapped (which implies the RSS column, null if none) the bytes
** LuaJIT's allocator had mapped then (null before the first INFO MAPPED). */
static void json_point(FILE *out, const struct mp_timeline_point *pt,
		       int has_rss, int has_mapped)
{
  has_rss |= has_mapped;
  fprintf(out, "[%llu, %llu, %llu, ", U(pt->event), U(pt->live_bytes),
	  U(pt->live_blocks));
  json_seconds(out, pt->time_ns);
  if (has_rss && pt->rss)
    fprintf(out, ", %llu", U(pt->rss));
  else if (has_rss)
    fputs(", null", out);
  if (has_mapped && pt->mapped)
    fprintf(out, ", %llu", U(pt->mapped));
  else if (has_mapped)
    fputs(", null", out);
  fputc(']', out);
}

/* ",\n  "timeline": [...]": per file, its peak and its points as
** [event, live_bytes, live_blocks, seconds]. */
static void json_timeline(FILE *out, const struct mp_profile *p,
			  const struct mp_report_input *in)
{
  uint32_t n = mp_profile_ntimelines(p), i, k;

  fputs(",\n  \"timeline\": [", out);
  for (i = 0; i < n; i++) {
    struct mp_timeline tl;
    mp_profile_timeline(p, i, &tl);
    fputs(i ? ",\n    {\"file\": " : "\n    {\"file\": ", out);
    if (i < in->nfiles)
      json_cstr(out, in->files[i]);
    else
      fputs("null", out);
    fprintf(out, ", \"has_time\": %s, \"duration\": ",
	    tl.has_time ? "true" : "false");
    json_seconds(out, tl.end_ns);
    json_gauge(out, "rss", &tl.rss);
    json_gauge(out, "mapped", &tl.mapped);
    fputs(",\n     \"peak\": ", out);
    json_point(out, &tl.peak, tl.rss.first != 0, tl.mapped.first != 0);
    fputs(",\n     \"points\": [", out);
    for (k = 0; k < tl.npoints; k++) {
      fputs(k % 4 ? ", " : k ? ",\n      " : "\n      ", out);
      json_point(out, &tl.points[k], tl.rss.first != 0,
		 tl.mapped.first != 0);
    }
    fputs(tl.npoints ? "\n     ]}" : "]}", out);
  }
  fputs(n ? "\n  ]" : "]", out);
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

int mp_stat_json(FILE *out, struct mp_profile *p,
		 const struct mp_report_opts *o,
		 const struct mp_report_input *in)
{
  (void)o;
  json_header(out, "ljmprof-stat", in);
  fputs("  \"summary\": ", out);
  mp_json_summary(out, p, in, "  ");
  json_timeline(out, p, in);
  fputs("\n}\n", out);
  return 0;
}

/* ", <key><v>" for a number. */
static void json_u64(struct mp_buf *b, const char *key, uint64_t v)
{
  mp_buf_str(b, key);
  mp_buf_u64(b, v);
}

static void json_hex(struct mp_buf *b, const char *key, uint64_t v)
{
  mp_buf_str(b, key);
  mp_buf_add(b, "\"", 1);
  mp_buf_hex(b, v);
  mp_buf_add(b, "\"", 1);
}

static void json_opt_str(struct mp_buf *b, const struct mp_string *s)
{
  if (s)
    json_str(b, s->data, s->len);
  else
    mp_buf_str(b, "null");
}

static void json_location_fields(struct mp_buf *b, const struct mp_profile *p,
				 const struct mp_loc *l)
{
  const struct mp_string *s =
    l->str != MP_NO_STRING ? mp_strings_get(mp_profile_strings(p), l->str) :
			     NULL;
  enum mp_group g = mp_profile_group(p);
  int by_line = g == MP_GROUP_LINE || g == MP_GROUP_FRAMES;
  int by_func = g == MP_GROUP_FUNCTION || g == MP_GROUP_FRAMES;

  switch (mp_loc_kinds[l->kind].src) {
  case LJM_SRC_LFUNC:
    mp_buf_str(b, ", \"chunk\": ");
    json_opt_str(b, s);
    if (!s)
      json_hex(b, ", \"proto\": ", l->addr);
    /* A built-in's first line is -1, as debug.getinfo gives it. */
    if (by_func && s && l->linedefined == MP_LINE_BUILTIN)
      mp_buf_str(b, ", \"linedefined\": -1");
    else if (by_func && s)
      json_u64(b, ", \"linedefined\": ", l->linedefined);
    if (by_line)
      json_u64(b, ", \"line\": ", l->line);
    break;
  case LJM_SRC_CFUNC:
    mp_buf_str(b, ", \"symbol\": ");
    json_opt_str(b, s);
    json_hex(b, ", \"address\": ", l->addr);
    break;
  case LJM_SRC_TRACE:
    json_u64(b, ", \"trace\": ", l->addr);
    mp_buf_str(b, ", \"chunk\": ");
    json_opt_str(b, s);
    if (l->kind != MP_LOC_TRACE_UNKNOWN)
      json_u64(b, ", \"line\": ", l->line);
    break;
  case LJM_SRC_INTERNAL:
    break;
  }
}

/* The name of a location in plain style, as a JSON string. */
static void json_name(struct mp_buf *b, const struct mp_profile *p,
		      struct mp_buf *scratch, const struct mp_loc *l)
{
  scratch->len = 0;
  mp_name_location(scratch, p, NULL, l, MP_NAME_PLAIN);
  json_str(b, scratch->data ? scratch->data : "", scratch->len);
}

/* Write b out and empty it. */
static void json_flush(FILE *out, struct mp_buf *b)
{
  if (b->len)
    fwrite(b->data, 1, b->len, out);
  b->len = 0;
}

/* The pairs of one location and kind, in name order of the other
** location (the pairs are sorted so); b goes out as it fills (the
** collector's list can name every location). */
static void json_overrides(FILE *out, struct mp_buf *b,
			   const struct mp_profile *p, struct mp_buf *scratch,
			   int is_free, uint32_t loc)
{
  uint64_t end, first = mp_profile_overrides_of(p, is_free, loc, &end), i;

  mp_buf_add(b, "[", 1);
  for (i = first; i < end; i++) {
    struct mp_override ov = mp_profile_override(p, i);
    struct mp_loc orig;
    mp_profile_loc(p, (uint32_t)ov.key, &orig);
    mp_buf_str(b, i == first ? "{\"name\": " : ", {\"name\": ");
    json_name(b, p, scratch, &orig);
    json_u64(b, ", \"count\": ", ov.count);
    json_u64(b, ", \"bytes\": ", ov.bytes);
    mp_buf_add(b, "}", 1);
    if (b->len > 65536)
      json_flush(out, b);
  }
  mp_buf_add(b, "]", 1);
}

/* A location's call paths: its nodes with figures, heaviest first. */
static void json_paths(FILE *out, struct mp_buf *b, const struct mp_profile *p,
		       const struct mp_paths *ps, uint32_t loc)
{
  uint32_t i, first = ps->start[loc], end = ps->start[loc + 1];

  mp_buf_add(b, "[", 1);
  for (i = first; i < end; i++) {
    struct mp_stack_counts c;
    mp_profile_stack(p, ps->node[i], &c);
    json_u64(b, i == first ? "{\"node\": " : ", {\"node\": ", ps->node[i]);
    json_u64(b, ", \"alloc\": {\"count\": ", c.n_alloc);
    json_u64(b, ", \"bytes\": ", c.alloc_bytes);
    json_u64(b, "}, \"realloc\": {\"count\": ", c.n_realloc);
    json_u64(b, ", \"new_bytes\": ", c.realloc_bytes);
    json_u64(b, "}, \"held\": {\"bytes\": ", c.held_bytes);
    json_u64(b, ", \"blocks\": ", c.held_blocks);
    json_u64(b, "}, \"temporary\": {\"count\": ", c.temporary);
    json_u64(b, ", \"bytes\": ", c.temporary_bytes);
    mp_buf_str(b, "}}");
    if (b->len > 65536)
      json_flush(out, b);
  }
  mp_buf_add(b, "]", 1);
}

static const char *const frame_kinds[] = {"lua", "builtin", "c", "trace",
					  "cut", "location"};

/* The stack tree: the nodes of the stacks with figures and their
** ancestors, each with its parent and frame, by id. */
static int json_stacks(FILE *out, struct mp_buf *b, const struct mp_profile *p,
		       struct mp_buf *scratch)
{
  const struct mp_summary *s = mp_profile_total(p);
  uint32_t n = mp_profile_nstacks(p), id, shown = 0;
  uint8_t *used = calloc(n ? n : 1, 1);

  if (!used)
    return -1;
  for (id = n; id-- > 1;) {
    struct mp_stack_counts c;
    struct mp_frame f;
    uint32_t k;
    if (!mp_profile_stack(p, id, &c))
      continue;
    /* Up to the first node already marked: its ancestors are. */
    for (k = id; k && !used[k]; k = f.parent) {
      used[k] = 1;
      mp_profile_frame(p, k, &f);
    }
  }

  fputs(",\n  \"stacks\": {", out);
  fprintf(out, "\"depth\": %llu, \"nodes_full\": %llu, \"cut_events\": "
	  "%llu,\n   \"nodes\": [", U(s->stack_depth), U(s->nodes_full),
	  U(s->cut_events));
  for (id = 1; id < n; id++) {
    struct mp_frame f;
    struct mp_loc l;
    if (!used[id])
      continue;
    mp_profile_frame(p, id, &f);
    json_u64(b, !shown++ ? "\n    {\"id\": " : ",\n    {\"id\": ", id);
    json_u64(b, ", \"parent\": ", f.parent);
    mp_buf_str(b, ", \"frame\": \"");
    mp_buf_str(b, frame_kinds[f.tag < 6 ? f.tag : 5]);
    mp_buf_str(b, "\", \"name\": ");
    scratch->len = 0;
    mp_name_frame(scratch, p, NULL, &f, MP_NAME_PLAIN);
    json_str(b, scratch->data ? scratch->data : "", scratch->len);
    if (f.tag == LJM_FRAME_LUA || f.tag == LJM_FRAME_FAST) {
      mp_buf_str(b, ", \"function\": ");
      json_opt_str(b, f.name != MP_NO_STRING ?
		   mp_strings_get(mp_profile_strings(p), f.name) : NULL);
    }
    if (f.tag == LJM_FRAME_FAST)
      json_u64(b, ", \"ffid\": ", f.loc);
    if (f.tag == LJM_FRAME_TRACE)
      json_u64(b, ", \"site\": ", f.site);
    if (f.tag != LJM_FRAME_FAST && f.tag != LJM_FRAME_CUT) {
      mp_profile_loc(p, f.loc, &l);
      mp_buf_str(b, ", \"location\": {\"kind\": \"");
      mp_buf_str(b, mp_loc_kinds[l.kind].json);
      mp_buf_add(b, "\"", 1);
      json_location_fields(b, p, &l);
      mp_buf_add(b, "}", 1);
    }
    mp_profile_loc(p, f.leaf, &l);
    mp_buf_str(b, ", \"charged_to\": ");
    json_name(b, p, scratch, &l);
    mp_buf_add(b, "}", 1);
    if (b->oom || scratch->oom) {
      free(used);
      return -1;
    }
    if (b->len > 65536)
      json_flush(out, b);
  }
  json_flush(out, b);
  fputs(shown ? "\n   ]}" : "]}", out);
  free(used);
  return 0;
}

/* --at: the memory event each file was read up to, and whether that is
** its peak; null for a report of whole streams. */
static void json_at(FILE *out, const struct mp_report_opts *o,
		    const struct mp_report_input *in)
{
  size_t i;
  if (!o->at || !in->at_events) {
    fputs("  \"at\": null,\n", out);
    return;
  }
  fprintf(out, "  \"at\": {\"peak\": %s, ", o->at_peak ? "true" : "false");
  if (o->at_seconds) {
    fputs("\"seconds\": ", out);
    json_seconds(out, o->at_ns);
    fputs(", ", out);
  }
  fputs("\"events\": [", out);
  for (i = 0; i < in->nfiles; i++)
    fprintf(out, "%s%llu", i ? ", " : "", U(in->at_events[i]));
  fputs("]},\n", out);
}

/* A kind's or a pair's figures. */
static void json_kind_fields(struct mp_buf *b, const struct mp_kind_counts *c)
{
  json_u64(b, "\"alloc\": {\"count\": ", c->n_alloc);
  json_u64(b, ", \"bytes\": ", c->alloc_bytes);
  json_u64(b, "}, \"realloc\": {\"count\": ", c->n_realloc);
  json_u64(b, ", \"new_bytes\": ", c->realloc_bytes);
  json_u64(b, "}, \"held\": {\"bytes\": ", c->held_bytes);
  json_u64(b, ", \"blocks\": ", c->held_blocks);
  mp_buf_add(b, "}", 1);
}

/* With stacks, a kind's "paths": every call path (node of "stacks") of
** its events, most bytes first. */
static int json_kind_paths(FILE *out, struct mp_buf *b,
			   const struct mp_profile *p, unsigned kind)
{
  size_t n, i;
  uint32_t *paths = mp_kinds_paths(p, kind, 0, &n);
  if (!paths)
    return -1;
  mp_buf_str(b, ",\n     \"paths\": [");
  for (i = 0; i < n; i++) {
    struct mp_kind_counts c;
    unsigned k;
    uint32_t node;
    mp_profile_kindpath(p, paths[i], &k, &node, &c);
    json_u64(b, i ? ",\n       {\"node\": " : "\n       {\"node\": ", node);
    mp_buf_str(b, ", ");
    json_kind_fields(b, &c);
    mp_buf_add(b, "}", 1);
    if (b->len > 65536)
      json_flush(out, b);
  }
  mp_buf_add(b, "]", 1);
  free(paths);
  return 0;
}

/* --by=kind: "kinds", most bytes first, each with its top locations and,
** with stacks, its paths. */
static int json_kinds(FILE *out, struct mp_buf *b, const struct mp_profile *p,
		      struct mp_buf *scratch, uint64_t top, int stacks)
{
  unsigned kinds[MP_NKINDS];
  size_t n = mp_kinds_order(p, kinds), i, j, npairs;
  uint64_t locs = top ? top : MP_KIND_LOCS_DEFAULT;

  if (top && n > top)
    n = (size_t)top;
  fputs(",\n  \"kinds\": [", out);
  for (i = 0; i < n; i++) {
    struct mp_kind_counts c;
    uint32_t *pairs;
    mp_profile_kind(p, kinds[i], &c);
    b->len = 0;
    mp_buf_str(b, i ? ",\n    {\"kind\": \"" : "\n    {\"kind\": \"");
    mp_name_kind(b, kinds[i]);
    json_u64(b, "\", \"number\": ", kinds[i]);
    mp_buf_str(b, ",\n     ");
    json_kind_fields(b, &c);
    mp_buf_str(b, ",\n     \"locations\": [");
    if (!(pairs = mp_kinds_pairs(p, kinds[i], locs, &npairs)))
      return -1;
    for (j = 0; j < npairs; j++) {
      struct mp_loc l[1];
      unsigned k;
      uint32_t loc;
      mp_profile_kindloc(p, pairs[j], &k, &loc, &c);
      mp_profile_loc(p, loc, l);
      mp_buf_str(b, j ? ",\n       {\"name\": " : "\n       {\"name\": ");
      json_name(b, p, scratch, l);
      mp_buf_str(b, ", ");
      json_kind_fields(b, &c);
      mp_buf_add(b, "}", 1);
    }
    free(pairs);
    mp_buf_add(b, "]", 1);
    if (stacks && json_kind_paths(out, b, p, kinds[i]) < 0)
      return -1;
    mp_buf_add(b, "}", 1);
    if (b->oom || scratch->oom)
      return -1;
    json_flush(out, b);
  }
  fputs(n ? "\n  ]" : "]", out);
  return 0;
}

int mp_report_json(FILE *out, struct mp_profile *p,
		   const struct mp_report_opts *o,
		   const struct mp_report_input *in)
{
  static const char *const groups[] = {"line", "function", "chunk", "line"};
  struct mp_order order;
  struct mp_buf scratch = {0}, obj = {0};
  struct mp_row *rows = NULL;
  struct mp_paths paths;
  size_t nrows = 0, i;
  uint32_t nlocs, id;
  int stacks = mp_profile_nstacks(p) > 1;
  int rc = -1;

  if (mp_paths_init(&paths, p, MP_PATHS_ANY) < 0)
    return -1;
  if (mp_order_init(&order, p) < 0) {
    mp_paths_free(&paths);
    return -1;
  }
  mp_profile_sort_overrides(p, order.rank, order.loc);
  nlocs = mp_profile_nlocs(p);
  rows = malloc(((size_t)nlocs + 1) * sizeof(*rows));
  if (!rows)
    goto out;
  for (id = 0; id < nlocs; id++) {
    uint64_t events = mp_profile_measure(p, id, MP_MEASURE_EVENTS);
    struct mp_loc kl;
    /* With stacks, a location only a frame named has no event: not one
    ** of the locations that version 3 would list. Live at start holds
    ** blocks without an event of its own: listed. */
    mp_profile_loc(p, id, &kl);
    if (stacks && !events && kl.kind != MP_LOC_START)
      continue;
    mp_order_row(&order, events, id, &rows[nrows]);
    nrows++;
  }
  mp_rows_sort(&order, rows, nrows);
  if (o->top && nrows > o->top)
    nrows = (size_t)o->top;

  json_header(out, "ljmprof-report", in);
  fprintf(out, "  \"group\": \"%s\",\n", groups[mp_profile_group(p)]);
  json_at(out, o, in);
  fputs("  \"summary\": ", out);
  mp_json_summary(out, p, in, "  ");
  json_timeline(out, p, in);
  fputs(",\n  \"locations\": [", out);
  for (i = 0; i < nrows; i++) {
    struct mp_loc l[1];
    mp_profile_loc(p, rows[i].loc, l);
    obj.len = 0;
    mp_buf_str(&obj, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
    json_name(&obj, p, &scratch, l);
    mp_buf_str(&obj, ", \"kind\": \"");
    mp_buf_str(&obj, mp_loc_kinds[l->kind].json);
    mp_buf_add(&obj, "\"", 1);
    json_location_fields(&obj, p, l);
    json_u64(&obj, ",\n     \"alloc\": {\"count\": ", l->n_alloc);
    json_u64(&obj, ", \"bytes\": ", l->alloc_bytes);
    json_u64(&obj, "},\n     \"realloc\": {\"count\": ", l->n_realloc);
    json_u64(&obj, ", \"new_bytes\": ", l->realloc_new);
    json_u64(&obj, ", \"old_bytes\": ", l->realloc_old);
    json_u64(&obj, "},\n     \"free\": {\"count\": ", l->n_free);
    json_u64(&obj, ", \"bytes\": ", l->free_bytes);
    json_u64(&obj, "},\n     \"held\": {\"bytes\": ", l->held_bytes);
    json_u64(&obj, ", \"blocks\": ", l->held_blocks);
    json_u64(&obj, ", \"allocs\": ", l->created);
    json_u64(&obj, ", \"frees\": ", l->released);
    json_u64(&obj, "},\n     \"temporary\": {\"count\": ", l->temporary);
    json_u64(&obj, ", \"bytes\": ", l->temporary_bytes);
    mp_buf_str(&obj, "},\n     \"overrides\": {\"realloc\": ");
    json_overrides(out, &obj, p, &scratch, 0, rows[i].loc);
    mp_buf_str(&obj, ", \"free\": ");
    json_overrides(out, &obj, p, &scratch, 1, rows[i].loc);
    mp_buf_add(&obj, "}", 1);
    if (stacks) {
      mp_buf_str(&obj, ",\n     \"paths\": ");
      json_paths(out, &obj, p, &paths, rows[i].loc);
    }
    mp_buf_add(&obj, "}", 1);
    if (obj.oom || scratch.oom)
      goto out;
    json_flush(out, &obj);
  }
  fputs(nrows ? "\n  ]" : "]", out);
  if (stacks && json_stacks(out, &obj, p, &scratch) < 0)
    goto out;
  if (o->by_kind && json_kinds(out, &obj, p, &scratch, o->top, stacks) < 0)
    goto out;
  if (o->retainers && mp_report_retainers_json(out, p, o) < 0)
    goto out;
  fputs("\n}\n", out);
  rc = 0;
out:
  mp_paths_free(&paths);
  free(rows);
  mp_buf_free(&obj);
  mp_buf_free(&scratch);
  mp_order_free(&order);
  return rc;
}

/* For `ljmprof diff --format=json`: a JSON string as above. */
void mp_buf_json_string(struct mp_buf *b, const char *s, size_t len)
{
  json_str(b, s, len);
}
