/*
** The output formats. To add one: write its functions in a file of its
** own (tools/report/mp_report_<name>.c, in tools/local.mk), declare them
** in mp_report.h and add its row here; the CLI's options, --help, the
** fuzz target and the golden test follow from the row.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdio.h>
#include <string.h>

#include "mp_report.h"

const struct mp_format mp_formats[] = {
  {"text", MP_FMT_LEAK_ONLY | MP_FMT_FILE_HEADERS | MP_FMT_CALLERS |
   MP_FMT_TEMPORARY | MP_FMT_BY_KIND,
   mp_report_text,
   mp_stat_text, NULL},
  {"json", MP_FMT_OVERRIDE_VALUES | MP_FMT_BY_KIND, mp_report_json, mp_stat_json,
   "JSON has held bytes"},
  {"folded", MP_FMT_VALUE | MP_FMT_MERGED | MP_FMT_FRAMES |
   MP_FMT_NO_OVERRIDES, mp_report_folded, NULL,
   "folded has --value=held-bytes"},
  {"pprof", MP_FMT_MERGED | MP_FMT_FRAMES | MP_FMT_NO_OVERRIDES |
   MP_FMT_BINARY | MP_FMT_BY_KIND, mp_report_pprof, NULL,
   "pprof has inuse_space"},
  /* Text, and its names escaped as the other text formats': it may go
  ** to a terminal (| xmllint, | head) like folded and JSON. */
  {"svg", MP_FMT_VALUE | MP_FMT_MERGED | MP_FMT_FRAMES |
   MP_FMT_NO_OVERRIDES, mp_report_svg, NULL,
   "svg has --value=held-bytes"},
  /* One page for a browser, from every file: not for a terminal. */
  {"html", MP_FMT_MERGED | MP_FMT_FRAMES | MP_FMT_NO_OVERRIDES |
   MP_FMT_PAGE | MP_FMT_MOMENTS | MP_FMT_KINDS, mp_report_html, NULL,
   "html shows what is held at the end"},
  /* valgrind DHAT's JSON, for dh_view.html and the Firefox Profiler. */
  {"dhat", MP_FMT_MERGED | MP_FMT_FRAMES | MP_FMT_NO_OVERRIDES |
   MP_FMT_LIFETIMES, mp_report_dhat, NULL,
   "dhat has the bytes live at the end (eb)"},
};

const size_t mp_nformats = sizeof(mp_formats) / sizeof(mp_formats[0]);

const struct mp_format *mp_format_find(const char *name, int for_stat)
{
  size_t i;
  for (i = 0; i < mp_nformats; i++)
    if (!strcmp(mp_formats[i].name, name) &&
	(!for_stat || mp_formats[i].stat))
      return &mp_formats[i];
  return NULL;
}

char *mp_format_list(char *out, size_t size, int for_stat, unsigned flags,
		     int mark_default)
{
  size_t i, n = 0, k = 0, len = 0;

  for (i = 0; i < mp_nformats; i++)
    n += (!for_stat || mp_formats[i].stat) &&
	 (mp_formats[i].flags & flags) == flags;
  out[0] = '\0';
  for (i = 0; i < mp_nformats; i++) {
    const struct mp_format *f = &mp_formats[i];
    int w;
    if ((for_stat && !f->stat) || (f->flags & flags) != flags)
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
