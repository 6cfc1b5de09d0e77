/*
** A flame graph as one self-contained SVG file: the frames of the folded
** format (real stacks, or a version-3 stream's chunk, function and line)
** merged into a tree (mp_ftree.c), each frame a rectangle as wide as its share of
** --value. Drawn as an icicle, the root at the top under the title: the
** picture grows downwards with the depth, so a browser shows the root
** and the title first, without scrolling to the bottom of a tall page.
** Children in name order, as flamegraph.pl draws folded input, so two
** pictures of one program compare side by side.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_ftree.h"
#include "mp_report.h"

/* The fill and the legend of each kind (enum mp_ftree_kind). */
static const struct {
  const char *cls, *legend;
  int r, g, b;
} kinds[MP_FK_N] = {
  {"lua", "Lua", 0xf0, 0x8c, 0x3c},
  {"builtin", "built-in", 0xe6, 0xc8, 0x32},
  {"c", "C", 0x5a, 0x96, 0xdc},
  {"trace", "trace", 0x50, 0xb4, 0x64},
  {"internal", "internal", 0xa0, 0xa0, 0xa0},
  {"root", NULL, 0xc8, 0xc8, 0xc8},
};

/* The geometry, in SVG user units (pixels at 100%). */
#define SVG_WIDTH 1200
#define SVG_MARGIN 10
#define SVG_FRAME_H 17	/* A row: a 16 high rectangle and a gap. */
#define SVG_TOP 58	/* Below the title and the subtitle. */
#define SVG_CHAR_W 6.6	/* 11px monospace. */
/* Frames under 1/2000 of the total (0.6 px at this width) are left out:
** a picture of ten thousand slivers reads no better than one of the
** few hundred frames that can carry a label. */
#define SVG_MIN_SHARE 2000

/* -- Writing ---------------------------------------------------------------- */

/*
** Text already escaped for a terminal (valid UTF-8, no controls), made
** XML: the five specials as entities, and the two code points XML has no
** place for as the \xHH the terminal escape writes.
*/
static void put_xml(FILE *out, const char *s, size_t len)
{
  size_t i;
  for (i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    switch (c) {
    case '&': fputs("&amp;", out); break;
    case '<': fputs("&lt;", out); break;
    case '>': fputs("&gt;", out); break;
    case '"': fputs("&quot;", out); break;
    case '\'': fputs("&apos;", out); break;
    default:
      if (c == 0xef && i + 2 < len && (unsigned char)s[i + 1] == 0xbf &&
	  ((unsigned char)s[i + 2] & 0xfe) == 0xbe) {
	fprintf(out, "\\xef\\xbf\\x%02x", (unsigned char)s[i + 2]);
	i += 2;
      } else {
	fputc(c, out);
      }
    }
  }
}

/* Bytes of the first n characters of s (UTF-8). */
static size_t utf8_prefix(const char *s, size_t len, size_t n)
{
  size_t i = 0;
  while (i < len && n) {
    i++;
    while (i < len && ((unsigned char)s[i] & 0xc0) == 0x80)
      i++;
    n--;
  }
  return i;
}

static size_t utf8_chars(const char *s, size_t len)
{
  size_t i, n = 0;
  for (i = 0; i < len; i++)
    n += ((unsigned char)s[i] & 0xc0) != 0x80;
  return n;
}

struct svg_out {
  FILE *out;
  const struct mp_ftree *t;
  uint64_t total;
  const char *unit;
  double scale;		/* Width per unit of value. */
  int vi;		/* Which of the nodes' values: --value. */
  uint32_t depth;	/* Deepest row drawn, 1-based. */
  uint64_t omitted;	/* Frames left out as too narrow. */
};

static int too_narrow(const struct svg_out *s, uint64_t v)
{
  return v < s->total / SVG_MIN_SHARE || v == 0;
}

/* Rows that id and the frames under it wide enough to draw take. */
static uint32_t rows_drawn(const struct svg_out *s, uint32_t id)
{
  const struct mp_ftree_node *n = &s->t->nodes[id];
  uint32_t i, most = 0;
  for (i = 0; i < n->nchildren; i++) {
    uint32_t c = s->t->order[n->first + i], r;
    if (!too_narrow(s, s->t->nodes[c].v[s->vi]) &&
	(r = rows_drawn(s, c)) > most)
      most = r;
  }
  return most + 1;
}

/* The frames id and its callees make, for the count of those left out. */
static uint64_t frames_under(const struct mp_ftree *t, uint32_t id)
{
  const struct mp_ftree_node *n = &t->nodes[id];
  uint64_t k = 1;
  uint32_t i;
  for (i = 0; i < n->nchildren; i++)
    k += frames_under(t, t->order[n->first + i]);
  return k;
}

static void put_fill(FILE *out, const struct mp_ftree_node *x, const char *name)
{
  /* One hue per kind; the name shifts its lightness a little, so that
  ** neighbours differ and a function keeps its shade everywhere. */
  int d = (int)(mp_ftree_hash(0, name, x->name_len) % 33) - 16, r, g, b;
  r = kinds[x->kind].r + d;
  g = kinds[x->kind].g + d;
  b = kinds[x->kind].b + d;
  fprintf(out, "#%02x%02x%02x", r < 0 ? 0 : r > 255 ? 255 : r,
	  g < 0 ? 0 : g > 255 ? 255 : g, b < 0 ? 0 : b > 255 ? 255 : b);
}

static void put_frame(struct svg_out *s, uint32_t id, double x,
		      uint32_t row)
{
  const struct mp_ftree_node *n = &s->t->nodes[id];
  const char *name = id ? s->t->names.data + n->name_at : "all";
  size_t len = id ? n->name_len : 3, fit, chars, i;
  double w = (double)n->v[s->vi] * s->scale;
  double y = SVG_TOP + (double)row * SVG_FRAME_H;
  FILE *out = s->out;

  if (row + 1 > s->depth)
    s->depth = row + 1;
  fprintf(out, "<g class=\"%s\"><title>", kinds[n->kind].cls);
  put_xml(out, name, len);
  fprintf(out, ": %llu %s (%.2f%%)</title><rect x=\"%.2f\" y=\"%.0f\" "
	  "width=\"%.2f\" height=\"%d\" fill=\"",
	  (unsigned long long)n->v[s->vi], s->unit,
	  100.0 * (double)n->v[s->vi] / (double)s->total, x, y, w,
	  SVG_FRAME_H - 1);
  put_fill(out, n, name);
  fputs("\"/>", out);
  /* A label where it fits, or three characters of it and "..": fewer
  ** say nothing the colour does not. */
  fit = w > 4 ? (size_t)((w - 4) / SVG_CHAR_W) : 0;
  chars = utf8_chars(name, len);
  if (chars <= fit || fit >= 5) {
    fprintf(out, "<text x=\"%.2f\" y=\"%.0f\">", x + 3, y + 12);
    if (chars <= fit) {
      put_xml(out, name, len);
    } else {
      put_xml(out, name, utf8_prefix(name, len, fit - 2));
      fputs("..", out);
    }
    fputs("</text>", out);
  }
  fputs("</g>\n", out);
  for (i = 0; i < n->nchildren; i++) {
    uint32_t c = s->t->order[n->first + i];
    uint64_t v = s->t->nodes[c].v[s->vi];
    if (too_narrow(s, v)) {
      s->omitted += frames_under(s->t, c);
    } else {
      put_frame(s, c, x, row + 1);
    }
    x += (double)v * s->scale;
  }
}

/*
** Click to zoom, search: a few lines that read the frames back from the
** drawing (rectangles and tooltips), so the file without script, as an
** <img> shows it, is the same picture. #zoom=N (a frame's number in the
** file) and #search=RE in the address do the same on opening.
*/
static const char svg_script[] =
  "<script type=\"text/ecmascript\"><![CDATA[\n"
  "var F = [], W = 1180, L = 10, NS = 'http://www.w3.org/2000/svg';\n"
  "function init() {\n"
  "  var gs = document.querySelectorAll('g[class]'), i, h;\n"
  "  for (i = 0; i < gs.length; i++) {\n"
  "    var g = gs[i], r = g.querySelector('rect'), t = g.querySelector('title').textContent;\n"
  "    var m = /^([^]*): (\\d+) [a-z ]+ \\([\\d.]+%\\)$/.exec(t);\n"
  "    var f = {g: g, r: r, t: g.querySelector('text'), x: +r.getAttribute('x'),\n"
  "      w: +r.getAttribute('width'), y: +r.getAttribute('y'),\n"
  "      fill: r.getAttribute('fill'), name: m ? m[1] : t, v: m ? +m[2] : 0};\n"
  "    F.push(f);\n"
  "    g.onclick = zoomer(f);\n"
  "  }\n"
  "  document.getElementById('search').onclick = function () {\n"
  "    var s = prompt('Frames to mark (a regular expression; empty: none)', '');\n"
  "    if (s !== null) search(s);\n"
  "  };\n"
  "  h = /#zoom=(\\d+)/.exec(location.hash);\n"
  "  if (h && F[+h[1]]) zoom(F[+h[1]]);\n"
  "  h = /#search=([^&]*)/.exec(location.hash);\n"
  "  if (h) search(decodeURIComponent(h[1]));\n"
  "}\n"
  "function zoomer(f) { return function () { zoom(f); }; }\n"
  "function label(f, w) {\n"
  "  var n = Math.floor((w - 4) / 6.6), c = Array.from(f.name);\n"
  "  if (!f.t) {\n"
  "    f.t = document.createElementNS(NS, 'text');\n"
  "    f.t.setAttribute('y', f.y + 12);\n"
  "    f.g.appendChild(f.t);\n"
  "  }\n"
  "  f.t.textContent = c.length <= n ? f.name :\n"
  "    n >= 5 ? c.slice(0, n - 2).join('') + '..' : '';\n"
  "}\n"
  "/* z full width; its callers too; the rest of its rows and above hidden. */\n"
  "function zoom(z) {\n"
  "  var s = W / z.w, e = 0.02;\n"
  "  F.forEach(function (f) {\n"
  "    var x = L + (f.x - z.x) * s, w = f.w * s;\n"
  "    var show = f.y < z.y ? f.x <= z.x + e && f.x + f.w >= z.x + z.w - e :\n"
  "      f.x >= z.x - e && f.x + f.w <= z.x + z.w + e;\n"
  "    f.g.style.display = show ? '' : 'none';\n"
  "    if (!show) return;\n"
  "    if (f.y < z.y) { x = L; w = W; }\n"
  "    f.r.setAttribute('x', x.toFixed(2));\n"
  "    f.r.setAttribute('width', w.toFixed(2));\n"
  "    label(f, w);\n"
  "    f.t.setAttribute('x', (x + 3).toFixed(2));\n"
  "  });\n"
  "}\n"
  "/* Marks the frames whose names match, and says what share they have\n"
  "** (a match inside another counted once). */\n"
  "function search(s) {\n"
  "  var re, hit = [], sum = 0;\n"
  "  try { re = s ? new RegExp(s) : null; } catch (err) { re = null; }\n"
  "  F.forEach(function (f) {\n"
  "    var m = re !== null && re.test(f.name);\n"
  "    f.r.setAttribute('fill', m ? '#d040d0' : f.fill);\n"
  "    if (m && !hit.some(function (h) { return h.y < f.y && h.x <= f.x + 0.02 &&\n"
  "        f.x + f.w <= h.x + h.w + 0.02; })) {\n"
  "      hit.push(f);\n"
  "      sum += f.v;\n"
  "    }\n"
  "  });\n"
  "  document.getElementById('found').textContent = re === null ? '' :\n"
  "    'marked: ' + sum + ' (' + (100 * sum / F[0].v).toFixed(2) + '%)';\n"
  "}\n"
  "]]></script>\n";

static const char *value_name(enum mp_value v)
{
  return v == MP_VALUE_ALLOC_BYTES ? "bytes allocated" :
	 v == MP_VALUE_ALLOC_COUNT ? "allocations" : "bytes held at the end";
}

static void put_header(FILE *out, uint32_t height, enum mp_value value,
		       const struct mp_report_input *in, uint64_t total,
		       const char *unit, const struct mp_profile *p)
{
  struct mp_buf b = {0};
  size_t i;

  fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	  "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
	  "width=\"%d\" height=\"%u\" viewBox=\"0 0 %d %u\" onload=\"init()\">\n",
	  SVG_WIDTH, height, SVG_WIDTH, height);
  fputs("<style>\n"
	"text { font-family: monospace; font-size: 11px; fill: #000; }\n"
	"text.title { font-family: sans-serif; font-size: 17px; }\n"
	"text.sub, text.note { font-family: sans-serif; font-size: 12px; "
	"fill: #333; }\n"
	"g rect { stroke: #fff; stroke-width: 0.5; }\n"
	"g:hover rect { stroke: #000; }\n"
	"g text { pointer-events: none; }\n"
	"g, #search { cursor: pointer; }\n"
	"</style>\n", out);
  fputs(svg_script, out);
  fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%u\" "
	  "fill=\"#fdfcf8\"/>\n", SVG_WIDTH, height);
  fprintf(out, "<text class=\"title\" x=\"%d\" y=\"24\">ljmprof flame "
	  "graph: %s</text>\n", SVG_MARGIN, value_name(value));
  fprintf(out, "<text class=\"sub\" x=\"%d\" y=\"44\">", SVG_MARGIN);
  for (i = 0; i < in->nfiles && i < 4; i++) {
    const char *f = mp_name_escaped(&b, in->files[i]);
    if (i)
      fputs(", ", out);
    put_xml(out, f, strlen(f));
  }
  if (in->nfiles > 4)
    fprintf(out, " and %zu more", in->nfiles - 4);
  fprintf(out, " \xe2\x80\x94 %llu %s in all; the width of a frame is its "
	  "share, callers above callees",
	  (unsigned long long)total, unit);
  if (mp_estimate_note(&b, mp_profile_total(p))) {
    fputs("; ", out);
    put_xml(out, b.data, b.len);
  }
  fputs("</text>\n", out);
  fprintf(out, "<text id=\"search\" class=\"sub\" x=\"%d\" y=\"24\" "
	  "text-anchor=\"end\">Search</text>\n<text id=\"found\" "
	  "class=\"sub\" x=\"%d\" y=\"44\" text-anchor=\"end\"></text>\n",
	  SVG_WIDTH - SVG_MARGIN, SVG_WIDTH - SVG_MARGIN);
  mp_buf_free(&b);
}

/* The kinds' colours, and under them what was left out. */
static void put_legend(FILE *out, uint32_t y, uint64_t omitted)
{
  int k, x = SVG_MARGIN;
  for (k = 0; k < MP_FK_ROOT; k++) {
    fprintf(out, "<rect x=\"%d\" y=\"%u\" width=\"14\" height=\"14\" "
	    "fill=\"#%02x%02x%02x\"/><text class=\"note\" x=\"%d\" "
	    "y=\"%u\">%s</text>\n", x, y, kinds[k].r, kinds[k].g, kinds[k].b,
	    x + 19, y + 12, kinds[k].legend);
    x += 19 + 12 + 7 * (int)strlen(kinds[k].legend);
  }
  fprintf(out, "<text class=\"note\" x=\"%d\" y=\"%u\">Frames under "
	  "1/%d of the total are left out (%llu here); their values count "
	  "in their callers. Hover: name and value; "
	  "click: zoom (all: back).</text>\n", SVG_MARGIN, y + 32, SVG_MIN_SHARE,
	  (unsigned long long)omitted);
}

int mp_report_svg(FILE *out, struct mp_profile *p,
		  const struct mp_report_opts *o,
		  const struct mp_report_input *in)
{
  struct mp_aliases al;
  struct mp_ftree t;
  struct svg_out s;
  uint32_t height;
  int rc = -1;

  if (mp_aliases_init(&al, mp_profile_strings(p)) < 0)
    return -1;
  if (mp_ftree_init(&t) < 0)
    goto out_al;
  if (mp_ftree_add(&t, p, &al, 1u << o->value, NULL, 0) < 0 ||
      mp_ftree_sort(&t) < 0)
    goto out;
  memset(&s, 0, sizeof(s));
  s.vi = (int)o->value;
  s.out = out;
  s.t = &t;
  s.total = t.nodes[0].v[s.vi];
  s.unit = o->value == MP_VALUE_ALLOC_COUNT ? "allocations" : "bytes";
  s.scale = s.total ? (SVG_WIDTH - 2.0 * SVG_MARGIN) / (double)s.total : 0;

  height = SVG_TOP + (s.total ? rows_drawn(&s, 0) : 1) * SVG_FRAME_H + 62;
  put_header(out, height, o->value, in, s.total, s.unit, p);
  if (s.total)
    put_frame(&s, 0, SVG_MARGIN, 0);
  else
    fprintf(out, "<text class=\"note\" x=\"%d\" y=\"%d\">Nothing to draw: "
	    "no %s in the profile.</text>\n", SVG_MARGIN, SVG_TOP + 12,
	    value_name(o->value));
  put_legend(out, SVG_TOP + (s.depth ? s.depth : 1) * SVG_FRAME_H + 10,
	     s.omitted);
  fputs("</svg>\n", out);
  rc = 0;
out:
  mp_ftree_free(&t);
out_al:
  mp_aliases_free(&al);
  return rc;
}
