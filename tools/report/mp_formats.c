/*
** The output formats. To add one: write its functions in a file of its
** own (tools/report/mp_report_<name>.c, in tools/local.mk), declare them
** in mp_report.h and add its row here; the CLI's options, --help, the
** fuzz target and the golden test follow from the row. A row with a
** diff function is a format of `ljmprof diff` too.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdio.h>
#include <string.h>

#include "mp_diff.h"
#include "mp_report.h"

const struct mp_format mp_formats[] = {
  {"text", MP_FMT_LEAK_ONLY | MP_FMT_FILE_HEADERS | MP_FMT_CALLERS |
	   MP_FMT_RETAINERS |
   MP_FMT_TEMPORARY | MP_FMT_BY_KIND,
   mp_report_text,
   mp_stat_text, mp_diff_text, NULL},
  {"json", MP_FMT_OVERRIDE_VALUES | MP_FMT_BY_KIND | MP_FMT_RETAINERS,
   mp_report_json, mp_stat_json,
   mp_diff_json, "JSON has held bytes"},
  {"folded", MP_FMT_VALUE | MP_FMT_MERGED | MP_FMT_FRAMES |
   MP_FMT_NO_OVERRIDES, mp_report_folded, NULL, mp_diff_folded,
   "folded has --value=held-bytes"},
  {"pprof", MP_FMT_MERGED | MP_FMT_FRAMES | MP_FMT_NO_OVERRIDES |
   MP_FMT_BINARY | MP_FMT_BY_KIND, mp_report_pprof, NULL, NULL,
   "pprof has inuse_space"},
  /* Text, and its names escaped as the other text formats': it may go
  ** to a terminal (| xmllint, | head) like folded and JSON. */
  {"svg", MP_FMT_VALUE | MP_FMT_MERGED | MP_FMT_FRAMES |
   MP_FMT_NO_OVERRIDES, mp_report_svg, NULL, NULL,
   "svg has --value=held-bytes"},
  /* One page for a browser, from every file: not for a terminal. */
  {"html", MP_FMT_MERGED | MP_FMT_FRAMES | MP_FMT_NO_OVERRIDES |
   MP_FMT_PAGE | MP_FMT_MOMENTS | MP_FMT_KINDS | MP_FMT_USES_GRAPH,
   mp_report_html, NULL,
   mp_diff_html, "html shows what is held at the end"},
  /* The last heap graph as V8's heap snapshot, for Chrome DevTools'
  ** Memory panel and memlab. */
  {"heapsnapshot", MP_FMT_MERGED | MP_FMT_GRAPH | MP_FMT_NO_OVERRIDES,
   mp_report_heapsnapshot, NULL, NULL, "heapsnapshot has the live objects of a snapshot"},
  /* valgrind DHAT's JSON, for dh_view.html and the Firefox Profiler. */
  {"dhat", MP_FMT_MERGED | MP_FMT_FRAMES | MP_FMT_NO_OVERRIDES |
   MP_FMT_LIFETIMES, mp_report_dhat, NULL, NULL,
   "dhat has the bytes live at the end (eb)"},
};

const size_t mp_nformats = sizeof(mp_formats) / sizeof(mp_formats[0]);

/* Whether the command has format f: a row without its function is not
** one of its formats. */
static int format_for(const struct mp_format *f, enum mp_format_for use)
{
  return use == MP_FORMAT_STAT ? f->stat != NULL :
	 use == MP_FORMAT_DIFF ? f->diff != NULL : 1;
}

const struct mp_format *mp_format_find(const char *name,
				       enum mp_format_for use)
{
  size_t i;
  for (i = 0; i < mp_nformats; i++)
    if (!strcmp(mp_formats[i].name, name) && format_for(&mp_formats[i], use))
      return &mp_formats[i];
  return NULL;
}

char *mp_format_list(char *out, size_t size, enum mp_format_for use,
		     unsigned flags, int mark_default)
{
  size_t i, n = 0, k = 0, len = 0;

  for (i = 0; i < mp_nformats; i++)
    n += format_for(&mp_formats[i], use) &&
	 (mp_formats[i].flags & flags) == flags;
  out[0] = '\0';
  for (i = 0; i < mp_nformats; i++) {
    const struct mp_format *f = &mp_formats[i];
    int w;
    if (!format_for(f, use) || (f->flags & flags) != flags)
      continue;
    k++;
    w = snprintf(out + len, size - len, "%s%s%s",
		 k == 1 ? "" : k == n ? " or " : ", ", f->name,
		 mark_default && i == 0 ? " (default)" : "");
    if (w < 0 || (size_t)w >= size - len)
      break;
    len += (size_t)w;
  }
  return out;
}

int mp_group_parse(const char *name, enum mp_group *out)
{
  if (!strcmp(name, "line"))
    *out = MP_GROUP_LINE;
  else if (!strcmp(name, "function"))
    *out = MP_GROUP_FUNCTION;
  else if (!strcmp(name, "chunk"))
    *out = MP_GROUP_CHUNK;
  else
    return -1;
  return 0;
}

int mp_value_parse(const char *name, enum mp_value *out)
{
  if (!strcmp(name, "alloc-bytes"))
    *out = MP_VALUE_ALLOC_BYTES;
  else if (!strcmp(name, "alloc-count"))
    *out = MP_VALUE_ALLOC_COUNT;
  else if (!strcmp(name, "held-bytes"))
    *out = MP_VALUE_HELD_BYTES;
  else
    return -1;
  return 0;
}
