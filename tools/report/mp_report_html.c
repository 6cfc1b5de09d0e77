/*
** One self-contained HTML page: the summary as HTML, and the rest (heap
** over time, what was live at the moments, the flame graph, the tables)
** as one JSON document inline that the page's own script
** (mp_report_html.js, its style mp_report_html.css, both made into
** mp_html_page.h at build time) draws. Nothing is fetched: the page has
** no URL in it. Its data is cut to what a browser shows quickly: frames
** under 1/MIN_SHARE of every view's total, and locations beyond the top
** TABLE_ROWS of every table, are left out, and the page says how many.
**
** A name longer than MP_HTML_NAME_MAX bytes (a chunk loaded from a
** string is named by its source) is cut, ending in an ellipsis, so that
** no name can make the page large. Names from the stream are untrusted: in the JSON every '<', '>' and
** '&' is a \u escape (no "</script>" can end the data early), in the
** HTML they are entities, and the script only ever sets textContent.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_ftree.h"
#include "mp_report.h"
#include "mp_retainers.h"
#include "tools/report/mp_html_page.h"

/* Frames narrower than 1/MIN_SHARE of the total in every view are left
** out; at most MAX_FRAMES are kept, the widest first in each level. */
#define MIN_SHARE 5000
#define MAX_FRAMES 40000
/* Locations kept per table (allocated, count, held, temporary). */
#define TABLE_ROWS 500
/* The flame graph of each object kind: at most this many frames (and
** none under 1/MIN_SHARE of the kind's total in every view). */
#define KIND_FRAMES 2000
/* Why is it alive: the locations of the heap graph (those with a row),
** most bytes in it first, and the chains of each, at most; a chain's
** text cut to so many bytes. */
#define WHY_LOCS 300
#define WHY_CHAINS 10
#define WHY_CHAIN_MAX (4 * MP_HTML_NAME_MAX)

/* -- Escaping --------------------------------------------------------------- */

/* b as the inside of a <script> element: the JSON's '<', '>' and '&'
** (only ever inside its strings) as \u escapes. */
static void put_script_json(FILE *out, const struct mp_buf *b)
{
  size_t i, from = 0;
  for (i = 0; i < b->len; i++) {
    char c = b->data[i];
    if (c == '<' || c == '>' || c == '&') {
      fwrite(b->data + from, 1, i - from, out);
      fprintf(out, "\\u%04x", (unsigned)c);
      from = i + 1;
    }
  }
  fwrite(b->data + from, 1, b->len - from, out);
}

/* Text for HTML: escaped for a terminal first (valid UTF-8, no controls),
** then the specials as entities. */
static void put_html(FILE *out, const char *s)
{
  struct mp_buf b = {0};
  const char *t = mp_name_escaped(&b, s);
  for (; *t; t++) {
    switch (*t) {
    case '&': fputs("&amp;", out); break;
    case '<': fputs("&lt;", out); break;
    case '>': fputs("&gt;", out); break;
    case '"': fputs("&quot;", out); break;
    case '\'': fputs("&#39;", out); break;
    default: fputc(*t, out);
    }
  }
  mp_buf_free(&b);
}

void mp_html_json_name(struct mp_buf *b, const char *s, size_t len,
		       size_t most)
{
  size_t cut = len;
  if (len > most) {
    /* At a character's start: the JSON stays valid UTF-8. */
    cut = most;
    while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
      cut--;
  }
  if (cut == len) {
    mp_buf_json_string(b, s, len);
    return;
  }
  mp_buf_json_string(b, s, cut);
  b->len--;	/* The closing quote: the mark of the cut goes inside. */
  mp_buf_str(b, "\\u2026\"");
}

static void json_u64(struct mp_buf *b, const char *before, uint64_t v)
{
  mp_buf_str(b, before);
  mp_buf_u64(b, v);
}

/* -- The frame tree --------------------------------------------------------- */

/* Frame names, each once: "names" in the data, shared by the flame
** graph and those of each object kind. */
struct name_set {
  uint32_t *slots;	/* Name index + 1, by hash. */
  uint32_t nslots, n, cap;
  size_t *at, *len;	/* Where each is in buf. */
  struct mp_buf buf;
};

static int names_init(struct name_set *s)
{
  memset(s, 0, sizeof(*s));
  s->nslots = 1024;
  s->cap = 512;
  s->slots = calloc(s->nslots, sizeof(*s->slots));
  s->at = malloc(s->cap * sizeof(*s->at));
  s->len = malloc(s->cap * sizeof(*s->len));
  return s->slots && s->at && s->len ? 0 : -1;
}

static void names_free(struct name_set *s)
{
  free(s->slots);
  free(s->at);
  free(s->len);
  mp_buf_free(&s->buf);
}

static const char *names_at(const struct name_set *s, uint32_t i)
{
  return s->buf.data ? s->buf.data + s->at[i] : "";
}

/* Room for one more name: at most half the slots used. */
static int names_grow(struct name_set *s)
{
  uint32_t i;
  if (s->n == s->cap) {
    uint32_t ncap = s->cap * 2;
    size_t *at = realloc(s->at, ncap * sizeof(*at)), *len;
    if (!at)
      return -1;
    s->at = at;
    if (!(len = realloc(s->len, ncap * sizeof(*len))))
      return -1;
    s->len = len;
    s->cap = ncap;
  }
  if ((s->n + 1) * 2 >= s->nslots) {
    uint32_t n = s->nslots * 2, *slots = calloc(n, sizeof(*slots));
    if (!slots)
      return -1;
    for (i = 0; i < s->n; i++) {
      uint32_t h = mp_ftree_hash(0, names_at(s, i), s->len[i]) & (n - 1);
      while (slots[h])
	h = (h + 1) & (n - 1);
      slots[h] = i + 1;
    }
    free(s->slots);
    s->slots = slots;
    s->nslots = n;
  }
  return 0;
}

/* The index of name (len bytes; NULL when len is 0), added when new;
** UINT32_MAX when out of memory. */
static uint32_t names_index(struct name_set *s, const char *name, size_t len)
{
  uint32_t h, id;
  if (!name)
    name = "";
  h = mp_ftree_hash(0, name, len) & (s->nslots - 1);
  while ((id = s->slots[h])) {
    if (s->len[id - 1] == len &&
	(!len || !memcmp(names_at(s, id - 1), name, len)))
      return id - 1;
    h = (h + 1) & (s->nslots - 1);
  }
  if (names_grow(s) < 0)
    return UINT32_MAX;
  h = mp_ftree_hash(0, name, len) & (s->nslots - 1);
  while (s->slots[h])
    h = (h + 1) & (s->nslots - 1);
  s->at[s->n] = s->buf.len;
  s->len[s->n] = len;
  mp_buf_add(&s->buf, name, len);
  if (s->buf.oom)
    return UINT32_MAX;
  s->slots[h] = ++s->n;
  return s->n - 1;
}

struct tree_out {
  const struct mp_ftree *t;
  struct name_set *names;
  struct mp_buf *b;
  const uint32_t *size;	/* Frames at and under each node. */
  uint32_t max;		/* Frames at most. */
  uint32_t kept, cut;	/* Frames written, and left out. */
  uint32_t written;	/* Index of the next frame in the data. */
  int oom;
};

static int wide_enough(const struct mp_ftree *t, uint32_t id)
{
  int k;
  for (k = 0; k < MP_FV_N; k++) {
    uint64_t v = t->nodes[id].v[k], all = t->nodes[0].v[k];
    if (v && v >= all / MIN_SHARE)
      return 1;
  }
  return 0;
}

/* Frame id under the frame written as parent, then its callees, in
** name order: [parent, name, kind, allocated, count, held, held then].
** Its children in order[] are those wide enough (mp_ftree_sort_some):
** the others, and all under them, are cut. */
static void put_frame(struct tree_out *o, uint32_t id, int64_t parent)
{
  const struct mp_ftree_node *n = &o->t->nodes[id];
  uint32_t self = o->written++, i, under = o->size[id] - 1, name = 0;
  int k;

  if (id && (name = names_index(o->names, o->t->names.data ?
				o->t->names.data + n->name_at : NULL,
				n->name_len)) == UINT32_MAX)
    o->oom = 1;
  mp_buf_str(o->b, self ? ",\n[" : "\n[");
  if (parent < 0)
    mp_buf_str(o->b, "-1");
  else
    mp_buf_u64(o->b, (uint64_t)parent);
  json_u64(o->b, ",", name);
  json_u64(o->b, ",", n->kind);
  for (k = 0; k < MP_FV_N; k++)
    json_u64(o->b, ",", n->v[k]);
  mp_buf_add(o->b, "]", 1);
  o->kept++;
  for (i = 0; i < n->nchildren; i++) {
    uint32_t c = o->t->order[n->first + i];
    under -= o->size[c];
    if (o->kept >= o->max)
      o->cut += o->size[c];
    else
      put_frame(o, c, self);
  }
  o->cut += under;	/* The narrow children's. */
}

/* t's frames wide enough, at most max of them, as "frames": [...],
** "frames_cut" and "frames_all" (after before); all, when not 0, is the
** frames of the whole graph that t is the wide part of. 0, or -1 out of
** memory. */
static int put_tree(struct mp_buf *b, struct mp_ftree *t,
		    struct name_set *names, uint32_t max, const char *before,
		    uint32_t all)
{
  struct tree_out o;
  uint32_t *size = NULL;

  memset(&o, 0, sizeof(o));
  /* Only the frames wide enough are sorted, and named. */
  if (mp_ftree_sort_some(t, wide_enough) < 0 || !(size = mp_ftree_sizes(t))) {
    free(size);
    return -1;
  }
  o.t = t;
  o.names = names;
  o.b = b;
  o.size = size;
  o.max = max;
  mp_buf_str(b, before);
  mp_buf_str(b, "\"frames\": [");
  put_frame(&o, 0, -1);
  if (!all) {
    json_u64(b, "],\n\"frames_cut\": ", o.cut);
    json_u64(b, ", \"frames_all\": ", t->n);
  } else {
    json_u64(b, "],\n\"frames_cut\": ", all - o.kept);
    json_u64(b, ", \"frames_all\": ", all);
  }
  free(size);
  return o.oom ? -1 : 0;
}

/* Each node's own values of a kind, then (summed up) its and its
** callees': the flame graph of one kind on the frames of the whole. */
struct kind_sums {
  uint64_t (*v)[3];	/* By node of the whole graph. */
  uint32_t *to;		/* Its node in the kind's graph + 1 (0: none). */
  uint32_t *next;	/* The kind's next path (chains by kind). */
  uint32_t head[MP_NKINDS];	/* First path + 1 of each kind. */
};

/* The kind's graph in kt: the frames of the whole graph t (of[]: the
** node of each stream node) wide enough for the kind (at least
** 1/MIN_SHARE of its total in a view), parents first; *all gets the
** frames that have any of its values. 0, or -1 out of memory. */
static int kind_tree(struct mp_ftree *kt, const struct mp_ftree *t,
		     const uint32_t *of, struct mp_profile *p, unsigned kind,
		     struct kind_sums *ks, uint32_t *all)
{
  uint32_t i, n = 0;
  int k;

  /* ks->v is all zeros here: calloc'd, and each kind's pass below
  ** leaves it so, which saves clearing the whole of it per kind. */
  for (i = ks->head[kind]; i; i = ks->next[i - 1]) {
    struct mp_kind_counts c;
    unsigned kd;
    uint32_t node, at;
    mp_profile_kindpath(p, i - 1, &kd, &node, &c);
    if (!(at = of[node]))
      continue;	/* No figures of its own: in no graph. */
    ks->v[at][MP_FV_ALLOC_BYTES] += c.alloc_bytes + c.realloc_bytes;
    ks->v[at][MP_FV_ALLOC_COUNT] += c.n_alloc + c.n_realloc;
    ks->v[at][MP_FV_HELD_END] += c.held_bytes;
  }
  /* A node's parent was made before it. */
  for (i = t->n; i-- > 1;)
    for (k = 0; k < 3; k++)
      ks->v[t->nodes[i].parent][k] += ks->v[i][k];
  ks->to[0] = 1;
  {
    uint64_t v[MP_FV_N] = {ks->v[0][0], ks->v[0][1], ks->v[0][2], 0};
    kt->nodes[0].v[0] = v[0];
    kt->nodes[0].v[1] = v[1];
    kt->nodes[0].v[2] = v[2];
  }
  n = 1;
  for (i = 1; i < t->n; i++) {
    uint64_t v[MP_FV_N];
    int wide = 0;
    /* A node without values has none below it: its parent's to[] is
    ** read only by nodes with values, whose parents have them too. */
    if (!(ks->v[i][0] | ks->v[i][1] | ks->v[i][2]))
      continue;
    ks->to[i] = 0;
    n++;
    for (k = 0; k < 3; k++) {
      v[k] = ks->v[i][k];
      ks->v[i][k] = 0;	/* Zeros again for the next kind. */
      if (v[k] && v[k] >= ks->v[0][k] / MIN_SHARE)
	wide = 1;
    }
    if (!wide || !ks->to[t->nodes[i].parent])
      continue;
    v[MP_FV_HELD_AT] = 0;
    if (!(ks->to[i] = mp_ftree_append(kt, ks->to[t->nodes[i].parent] - 1,
				      t->names.data + t->nodes[i].name_at,
				      t->nodes[i].name_len,
				      (enum mp_ftree_kind)t->nodes[i].kind,
				      v)))
      return -1;
    ks->to[i]++;
  }
  for (k = 0; k < 3; k++)
    ks->v[0][k] = 0;
  *all = n;
  return 0;
}

/* "kinds": the object kinds, most bytes first, each with its figures and
** its own flame graph; null when no stream said any. With stacks, each
** kind's graph is made on the whole graph t's frames (of[]: the node of
** each stream node); without, from the kind's locations. */
static int json_kinds(struct mp_buf *b, struct mp_profile *p,
		      struct mp_aliases *al, struct name_set *names,
		      const struct mp_ftree *t, const uint32_t *of)
{
  struct kind_sums ks;
  struct mp_ftree *trees[MP_NKINDS], *store;
  unsigned kinds[MP_NKINDS];
  size_t n, i;
  struct mp_buf name = {0};
  uint32_t all;
  int rc = -1;

  if (!mp_profile_kind_events(p)) {
    mp_buf_str(b, ",\n\"kinds\": null");
    return 0;
  }
  n = mp_kinds_order(p, kinds);
  memset(trees, 0, sizeof(trees));
  memset(&ks, 0, sizeof(ks));
  if (!(store = calloc(n ? n : 1, sizeof(*store))))
    return -1;
  for (i = 0; i < n; i++) {
    if (mp_ftree_init(&store[i]) < 0)
      goto out;
    trees[kinds[i]] = &store[i];
  }
  if (of) {
    uint32_t np = mp_profile_nkindpaths(p), j;
    ks.v = calloc((size_t)t->n + 1, sizeof(*ks.v));
    ks.to = malloc(((size_t)t->n + 1) * sizeof(*ks.to));
    ks.next = malloc(((size_t)np + 1) * sizeof(*ks.next));
    if (!ks.v || !ks.to || !ks.next)
      goto out;
    for (j = np; j-- > 0;) {
      struct mp_kind_counts c;
      unsigned kd;
      uint32_t node;
      mp_profile_kindpath(p, j, &kd, &node, &c);
      ks.next[j] = ks.head[kd & (MP_NKINDS - 1)];
      ks.head[kd & (MP_NKINDS - 1)] = j + 1;
    }
  } else if (mp_ftree_add_kinds(trees, p, al) < 0) {
    goto out;
  }
  mp_buf_str(b, ",\n\"kinds\": [");
  for (i = 0; i < n; i++) {
    struct mp_kind_counts c;
    mp_profile_kind(p, kinds[i], &c);
    mp_buf_str(b, i ? ",\n{\"name\": " : "\n{\"name\": ");
    name.len = 0;
    mp_name_kind(&name, kinds[i]);
    mp_html_json_name(b, name.data ? name.data : "", name.len,
		      MP_HTML_NAME_MAX);
    json_u64(b, ", \"number\": ", kinds[i]);
    json_u64(b, ", \"allocs\": ", c.n_alloc);
    json_u64(b, ", \"alloc_bytes\": ", c.alloc_bytes);
    json_u64(b, ", \"reallocs\": ", c.n_realloc);
    json_u64(b, ", \"realloc_bytes\": ", c.realloc_bytes);
    json_u64(b, ", \"held\": ", c.held_bytes);
    json_u64(b, ", \"held_blocks\": ", c.held_blocks);
    all = 0;
    if (of && kind_tree(&store[i], t, of, p, kinds[i], &ks, &all) < 0)
      goto out;
    if (put_tree(b, &store[i], names, KIND_FRAMES, ",\n", all) < 0)
      goto out;
    mp_buf_add(b, "}", 1);
    /* What only this kind's graph needed. */
    mp_ftree_free(&store[i]);
    if (mp_ftree_init(&store[i]) < 0)
      goto out;
  }
  mp_buf_str(b, "]");
  rc = b->oom || name.oom ? -1 : 0;
out:
  for (i = 0; i < n; i++)
    mp_ftree_free(&store[i]);
  free(store);
  free(ks.v);
  free(ks.to);
  free(ks.next);
  mp_buf_free(&name);
  return rc;
}

/* "frames", "names" and "cut" of the data: the flame graph, and the
** kinds with theirs. */
static int json_tree(struct mp_buf *b, struct mp_profile *p,
		     const struct mp_report_input *in)
{
  struct mp_aliases al;
  struct mp_ftree t;
  struct name_set names;
  const uint64_t *at = NULL;
  uint32_t nat = 0, i, *of = NULL;
  int rc = -1, have_tree = 0;

  if (names_init(&names) < 0) {
    names_free(&names);
    return -1;
  }
  if (mp_aliases_init(&al, mp_profile_strings(p)) < 0) {
    names_free(&names);
    return -1;
  }
  if (mp_ftree_init(&t) < 0)
    goto out;
  have_tree = 1;
  if (in->moments) {
    int stacks = mp_profile_nstacks(p) > 1;
    at = stacks ? in->moments->peak_stacks : in->moments->peak_locs;
    nat = stacks ? in->moments->npeak_stacks : in->moments->npeak_locs;
  }
  names_index(&names, NULL, 0);	/* 0: the root's, empty. */
  if (mp_ftree_add_map(&t, p, &al, (1u << MP_FV_N) - 1, at, nat,
		       mp_profile_kind_events(p) ? &of : NULL) < 0 ||
      put_tree(b, &t, &names, MAX_FRAMES, ",\n", 0) < 0 ||
      json_kinds(b, p, &al, &names, &t, of) < 0)
    goto out;
  mp_buf_str(b, ",\n\"names\": [");
  for (i = 0; i < names.n; i++) {
    if (i)
      mp_buf_str(b, i % 16 ? "," : ",\n");
    mp_html_json_name(b, names_at(&names, i), names.len[i],
		      MP_HTML_NAME_MAX);
  }
  mp_buf_str(b, "]");
  mp_buf_str(b, mp_profile_nstacks(p) > 1 ? ", \"stacks\": true" :
		", \"stacks\": false");
  rc = b->oom ? -1 : 0;
out:
  free(of);
  if (have_tree)
    mp_ftree_free(&t);
  names_free(&names);
  mp_aliases_free(&al);
  return rc;
}

/* -- Locations -------------------------------------------------------------- */

/* What the tables sort by, and the table being sorted. */
static uint64_t measure(const struct mp_loc *l, int by)
{
  switch (by) {
  case 0: return l->alloc_bytes + l->realloc_new;
  case 1: return l->n_alloc + l->n_realloc;
  case 2: return l->held_bytes;
  default: return l->temporary_bytes;
  }
}

/* Location x before y in a table: more first, then the lower id. */
static int loc_before(const uint64_t *key, uint32_t x, uint32_t y)
{
  return key[x] != key[y] ? key[x] > key[y] : x < y;
}

/* The heap of the TABLE_ROWS first: its root the last of them. */
static void heap_down(const uint64_t *key, uint32_t *h, uint32_t n,
		      uint32_t i)
{
  for (;;) {
    uint32_t l = 2 * i + 1, s = i, t;
    if (l < n && loc_before(key, h[s], h[l]))
      s = l;
    if (l + 1 < n && loc_before(key, h[s], h[l + 1]))
      s = l + 1;
    if (s == i)
      return;
    t = h[i];
    h[i] = h[s];
    h[s] = t;
    i = s;
  }
}

/* page[] of the first TABLE_ROWS of ids[0 .. n) by key (0: kept). */
static void mark_top(const uint64_t *key, const uint32_t *ids, uint32_t n,
		     uint32_t *page)
{
  uint32_t h[TABLE_ROWS], nh = 0, i;
  for (i = 0; i < n; i++) {
    if (nh < TABLE_ROWS) {
      h[nh++] = ids[i];
      if (nh == TABLE_ROWS) {
	uint32_t k;
	for (k = TABLE_ROWS / 2; k-- > 0;)
	  heap_down(key, h, nh, k);
      }
    } else if (loc_before(key, ids[i], h[0])) {
      h[0] = ids[i];
      heap_down(key, h, nh, 0);
    }
  }
  for (i = 0; i < nh; i++)
    page[h[i]] = 0;
}

/* A row of the page's tables: the locations named alike, summed. */
struct page_row {
  size_t name, len;	/* Its name in the names buffer. */
  uint32_t kind, hash;
  struct mp_loc sum;
};

static uint32_t name_hash(const char *s, size_t n, uint32_t kind)
{
  uint32_t h = 2166136261u ^ kind;
  while (n--)
    h = (h ^ (uint8_t)*s++) * 16777619u;
  return h;
}

/*
** "locations": the top TABLE_ROWS by each table's measure and those of
** the moments, each once: [name, kind, count, allocated, frees, freed,
** held, held blocks, temporary, temporary bytes]. Locations the page
** would name alike are one row, as JSON has them: the grouping of a page
** tells a function from the chunk that defines it on the same line,
** which the plain name does not. page[] gets each kept location's row
** (UINT32_MAX: left out).
*/
static int json_locations(struct mp_buf *b, struct mp_profile *p,
			  const struct mp_report_input *in, uint32_t *page,
			  uint32_t *nwith)
{
  uint32_t nlocs = mp_profile_nlocs(p), id, n = 0, k = 0, *ids, *slots = NULL;
  uint32_t mask = 0;
  uint64_t *key[4];
  struct mp_buf names = {0};
  struct page_row *rows = NULL;
  int by, stacks = mp_profile_nstacks(p) > 1, rc = -1;
  size_t i, j, nkept = 0;

  ids = malloc(((size_t)nlocs + 1) * sizeof(*ids));
  key[0] = malloc(((size_t)nlocs + 1) * 4 * sizeof(**key));
  if (!ids || !key[0]) {
    free(ids);
    free(key[0]);
    return -1;
  }
  for (by = 1; by < 4; by++)
    key[by] = key[0] + (size_t)by * (nlocs + 1);
  for (id = 0; id < nlocs; id++) {
    struct mp_loc l;
    page[id] = UINT32_MAX;
    mp_profile_loc_counts(p, id, &l);
    for (by = 0; by < 4; by++)
      key[by][id] = measure(&l, by);
    /* As JSON: with stacks, a location only a frame named is none. */
    if (!stacks || l.n_alloc + l.n_realloc + l.n_free)
      ids[n++] = id;
  }
  *nwith = n;
  for (by = 0; by < 4; by++)
    mark_top(key[by], ids, n, page);
  free(key[0]);
  for (i = 0; in->moments && i < in->moments->n; i++)
    for (j = 0; j < in->moments->m[i].nrows; j++)
      page[in->moments->m[i].rows[j].loc] = 0;
  for (id = 0; id < nlocs; id++)
    nkept += page[id] != UINT32_MAX;
  while (mask + 1 < 2 * nkept + 2)
    mask = 2 * mask + 1;
  rows = malloc((nkept + 1) * sizeof(*rows));
  slots = malloc(((size_t)mask + 1) * sizeof(*slots));
  if (!rows || !slots)
    goto out;
  memset(slots, 0xff, ((size_t)mask + 1) * sizeof(*slots));
  for (id = 0; id < nlocs; id++) {
    struct mp_loc l;
    struct page_row *r;
    size_t at = names.len;
    uint32_t h, s;
    if (page[id] == UINT32_MAX)
      continue;
    mp_profile_loc(p, id, &l);
    mp_name_location(&names, p, NULL, &l, MP_NAME_PLAIN);
    if (names.oom)
      goto out;
    h = name_hash(names.data + at, names.len - at, l.kind);
    for (s = h & mask; slots[s] != UINT32_MAX; s = (s + 1) & mask) {
      r = &rows[slots[s]];
      if (r->hash == h && r->kind == l.kind && r->len == names.len - at &&
	  !memcmp(names.data + r->name, names.data + at, r->len))
	break;
    }
    if (slots[s] == UINT32_MAX) {  /* A new name: a new row. */
      slots[s] = k;
      r = &rows[k++];
      r->name = at;
      r->len = names.len - at;
      r->kind = l.kind;
      r->hash = h;
      memset(&r->sum, 0, sizeof(r->sum));
    } else {  /* Named as an earlier row: added to it. */
      names.len = at;
      r = &rows[slots[s]];
    }
    page[id] = (uint32_t)(r - rows);
    r->sum.n_alloc += l.n_alloc;
    r->sum.n_realloc += l.n_realloc;
    r->sum.alloc_bytes += l.alloc_bytes;
    r->sum.realloc_new += l.realloc_new;
    r->sum.n_free += l.n_free;
    r->sum.free_bytes += l.free_bytes;
    r->sum.held_bytes += l.held_bytes;
    r->sum.held_blocks += l.held_blocks;
    r->sum.temporary += l.temporary;
    r->sum.temporary_bytes += l.temporary_bytes;
  }
  mp_buf_str(b, ",\n\"locations\": [");
  for (id = 0; id < k; id++) {
    const struct page_row *r = &rows[id];
    const struct mp_loc *l = &r->sum;
    mp_buf_str(b, id ? ",\n[" : "\n[");
    mp_html_json_name(b, names.data + r->name, r->len, MP_HTML_NAME_MAX);
    mp_buf_str(b, ",\"");
    mp_buf_str(b, mp_loc_kinds[r->kind].json);
    json_u64(b, "\",", l->n_alloc + l->n_realloc);
    json_u64(b, ",", l->alloc_bytes + l->realloc_new);
    json_u64(b, ",", l->n_free);
    json_u64(b, ",", l->free_bytes);
    json_u64(b, ",", l->held_bytes);
    json_u64(b, ",", l->held_blocks);
    json_u64(b, ",", l->temporary);
    json_u64(b, ",", l->temporary_bytes);
    mp_buf_add(b, "]", 1);
  }
  mp_buf_str(b, "]");
  json_u64(b, ",\n\"locations_all\": ", n);
  rc = b->oom ? -1 : 0;
out:
  free(ids);
  free(rows);
  free(slots);
  mp_buf_free(&names);
  return rc;
}

/* -- Time ------------------------------------------------------------------- */

/* [event, bytes, blocks, ns or null], and with rss the process's
** resident bytes then (null before the stream's first INFO RSS), and with
** mapped (which implies the rss element) the bytes LuaJIT's allocator had
** mapped then (null before the first INFO MAPPED). */
static void json_point(struct mp_buf *b, const struct mp_timeline_point *pt,
		       int rss, int mapped)
{
  rss |= mapped;
  json_u64(b, "[", pt->event);
  json_u64(b, ",", pt->live_bytes);
  json_u64(b, ",", pt->live_blocks);
  if (pt->time_ns == MP_NO_TIME)
    mp_buf_str(b, ",null");
  else
    json_u64(b, ",", pt->time_ns);
  if (rss && pt->rss)
    json_u64(b, ",", pt->rss);
  else if (rss)
    mp_buf_str(b, ",null");
  if (mapped && pt->mapped)
    json_u64(b, ",", pt->mapped);
  else if (mapped)
    mp_buf_str(b, ",null");
  mp_buf_add(b, "]", 1);
}

/* "files": each with its name, events, truncation, timeline and peak. */
static void json_files(struct mp_buf *b, const struct mp_profile *p,
		       const struct mp_report_input *in)
{
  uint32_t nt = mp_profile_ntimelines(p), k;
  size_t i;

  mp_buf_str(b, ",\n\"files\": [");
  for (i = 0; i < in->nfiles; i++) {
    struct mp_timeline tl;
    mp_buf_str(b, i ? ",\n{\"name\": " : "\n{\"name\": ");
    mp_html_json_name(b, in->files[i], strlen(in->files[i]),
		      MP_HTML_NAME_MAX);
    json_u64(b, ", \"events\": ", in->events_read[i]);
    mp_buf_str(b, in->truncated[i] ? ", \"truncated\": true" :
		  ", \"truncated\": false");
    if (i >= nt) {
      mp_buf_str(b, ", \"points\": []}");
      continue;
    }
    mp_profile_timeline(p, (uint32_t)i, &tl);
    mp_buf_str(b, tl.has_time ? ", \"has_time\": true" :
		  ", \"has_time\": false");
    if (tl.rss.first)
      mp_buf_str(b, ", \"has_rss\": true");
    if (tl.mapped.first)
      mp_buf_str(b, ", \"has_mapped\": true");
    mp_buf_str(b, ", \"peak\": ");
    json_point(b, &tl.peak, tl.rss.first != 0, tl.mapped.first != 0);
    mp_buf_str(b, ",\n \"points\": [");
    for (k = 0; k < tl.npoints; k++) {
      if (k)
	mp_buf_str(b, k % 8 ? "," : ",\n");
      json_point(b, &tl.points[k], tl.rss.first != 0,
		 tl.mapped.first != 0);
    }
    mp_buf_str(b, "]}");
  }
  mp_buf_str(b, "]");
}

/* A call path as the text report's callers: leaf first, " <- " between
** frames, its frames as JSON names them. */
static void path_name(struct mp_buf *out, const struct mp_profile *p,
		      uint32_t node)
{
  struct mp_frame f;
  int first = 1;
  while (node) {
    mp_profile_frame(p, node, &f);
    if (!first)
      mp_buf_str(out, " <- ");
    mp_name_frame(out, p, NULL, &f, MP_NAME_PLAIN);
    first = 0;
    node = f.parent;
  }
}

/* "moments": [{file, peak, at: point, live: locations holding bytes,
** rows: [[location, bytes, blocks], ...], with stacks paths: [[path,
** bytes], ...], with object kinds kinds: [[kind, bytes], ...]}]. */
static void json_moments(struct mp_buf *b, const struct mp_profile *p,
			 const struct mp_report_input *in,
			 const uint32_t *page)
{
  struct mp_buf name = {0};
  size_t i, j;
  int kinds = mp_profile_kind_events(p) != 0;

  mp_buf_str(b, ",\n\"moments\": [");
  for (i = 0; in->moments && i < in->moments->n; i++) {
    const struct mp_moment *m = &in->moments->m[i];
    json_u64(b, i ? ",\n{\"file\": " : "\n{\"file\": ", m->file);
    mp_buf_str(b, m->peak ? ", \"peak\": true" : ", \"peak\": false");
    mp_buf_str(b, ", \"at\": ");
    json_point(b, &m->at, 0, 0);
    json_u64(b, ", \"live\": ", m->nlive);
    mp_buf_str(b, ", \"rows\": [");
    for (j = 0; j < m->nrows; j++) {
      /* Locations of one row (named alike) are one: the first adds the
      ** others' figures, which are then skipped. */
      uint64_t bytes = m->rows[j].bytes, blocks = m->rows[j].blocks;
      uint32_t row = page[m->rows[j].loc];
      size_t q, first = j;
      for (q = 0; q < j && first == j; q++)
	if (page[m->rows[q].loc] == row)
	  first = q;
      if (first != j)
	continue;
      for (q = j + 1; q < m->nrows; q++)
	if (page[m->rows[q].loc] == row) {
	  bytes += m->rows[q].bytes;
	  blocks += m->rows[q].blocks;
	}
      json_u64(b, j ? ",[" : "[", row);
      json_u64(b, ",", bytes);
      json_u64(b, ",", blocks);
      mp_buf_add(b, "]", 1);
    }
    mp_buf_str(b, "], \"paths\": [");
    for (j = 0; j < m->npaths; j++) {
      name.len = 0;
      path_name(&name, p, m->paths[j].loc);
      mp_buf_str(b, j ? ",[" : "[");
      mp_html_json_name(b, name.data ? name.data : "", name.len,
			4 * MP_HTML_NAME_MAX);
      json_u64(b, ",", m->paths[j].bytes);
      mp_buf_add(b, "]", 1);
    }
    mp_buf_add(b, "]", 1);
    if (kinds) {
      mp_buf_str(b, ", \"kinds\": [");
      for (j = 0; j < m->nkinds; j++) {
	json_u64(b, j ? ",[" : "[", m->kinds[j][0]);
	json_u64(b, ",", m->kinds[j][1]);
	mp_buf_add(b, "]", 1);
      }
      mp_buf_add(b, "]", 1);
    }
    mp_buf_add(b, "}", 1);
  }
  mp_buf_str(b, "]");
  if (name.oom)
    b->oom = 1;
  mp_buf_free(&name);
}

/* -- The page --------------------------------------------------------------- */

void mp_html_begin(FILE *out, const char *heading, const char *title)
{
  fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	"<title>ljmprof: ", out);
  put_html(out, title);
  fputs("</title>\n<style>\n", out);
  fputs(html_css, out);
  fprintf(out, "</style>\n</head>\n<body>\n<h1>%s</h1>\n", heading);
}

void mp_html_end(FILE *out, const struct mp_buf *data)
{
  fputs("<noscript><p>The chart, the flame graph and the tables need "
	"JavaScript.</p></noscript>\n<div id=\"check\" hidden></div>\n"
	"<script type=\"application/json\" id=\"data\">", out);
  put_script_json(out, data);
  fputs("</script>\n<script>\n", out);
  fputs(html_js, out);
  fputs("</script>\n</body>\n</html>\n", out);
}

void mp_html_text(FILE *out, const char *s)
{
  put_html(out, s);
}

static void put_row(FILE *out, const char *what, uint64_t v, const char *id)
{
  fprintf(out, "<tr><th>%s</th><td class=\"n\" id=\"%s\">%llu</td></tr>\n",
	  what, id, (unsigned long long)v);
}

/* The summary, as HTML: readable with the script off. */
static void put_summary(FILE *out, const struct mp_profile *p,
			const struct mp_report_input *in)
{
  const struct mp_summary *s = mp_profile_total(p);
  size_t i;

  fputs("<div class=\"box\" id=\"summary\"><h2>Summary</h2>\n"
	"<p class=\"files\">", out);
  for (i = 0; i < in->nfiles; i++) {
    if (i)
      fputs(", ", out);
    fputs("<span class=\"file\">", out);
    put_html(out, in->files[i]);
    fputs("</span>", out);
    if (in->truncated[i])
      fputs(" <span class=\"warn\">(truncated)</span>", out);
  }
  fprintf(out, "</p>\n<table class=\"summary\">\n");
  put_row(out, "files merged", s->files, "s-files");
  put_row(out, "memory events", s->n_alloc + s->n_realloc + s->n_free,
	  "s-events");
  put_row(out, "allocations", s->n_alloc, "s-allocs");
  put_row(out, "reallocations", s->n_realloc, "s-reallocs");
  put_row(out, "frees", s->n_free, "s-frees");
  put_row(out, "bytes allocated", s->bytes_allocated, "s-allocated");
  put_row(out, "bytes freed", s->bytes_freed, "s-freed");
  put_row(out, "peak live bytes", s->peak_bytes, "s-peak");
  put_row(out, "live bytes at the end", s->live_bytes, "s-live");
  put_row(out, "live blocks at the end", s->live_blocks, "s-live-blocks");
  put_row(out, "temporary allocations", s->temporary, "s-temporary");
  put_row(out, "truncated streams", s->truncated_files, "s-truncated");
  fputs("</table>\n<p id=\"when\"></p></div>\n", out);
}

int mp_report_html(FILE *out, struct mp_profile *p,
		   const struct mp_report_opts *o,
		   const struct mp_report_input *in)
{
  const struct mp_summary *s = mp_profile_total(p);
  struct mp_buf b = {0};
  uint32_t *page, nwith = 0;
  int rc = -1;

  (void)o;
  if (!(page = malloc(((size_t)mp_profile_nlocs(p) + 1) * sizeof(*page))))
    return -1;
  json_u64(&b, "{\"version\": 1, \"peak_file\": ", s->peak_file);
  json_u64(&b, ", \"peak_bytes\": ", s->peak_bytes);
  json_u64(&b, ", \"peak_event\": ", s->peak_event);
  json_u64(&b, ", \"live_bytes\": ", s->live_bytes);
  json_u64(&b, ", \"bytes_allocated\": ", s->bytes_allocated);
  json_u64(&b, ", \"allocations\": ", s->n_alloc + s->n_realloc);
  json_u64(&b, ", \"temporary\": ", s->temporary);
  json_u64(&b, ", \"temporary_bytes\": ", s->temporary_bytes);
  mp_buf_str(&b, in->moments && in->moments->n ? ", \"has_moments\": true" :
		 ", \"has_moments\": false");
  json_u64(&b, ", \"kind_frames\": ", KIND_FRAMES);
  json_files(&b, p, in);
  if (json_locations(&b, p, in, page, &nwith) < 0 ||
      json_tree(&b, p, in) < 0)
    goto out;
  json_moments(&b, p, in, page);
  /* Only with a heap graph: the data of a page without is as before. */
  if (mp_retainers_page(&b, p, page, WHY_LOCS, WHY_CHAINS,
			WHY_CHAIN_MAX) < 0)
    goto out;
  mp_buf_str(&b, "}\n");
  if (b.oom)
    goto out;

  {
    struct mp_buf title = {0};
    mp_buf_str(&title, in->nfiles ? in->files[0] : "");
    if (in->nfiles > 1)
      mp_buf_printf(&title, " and %zu more", in->nfiles - 1);
    mp_html_begin(out, "ljmprof memory report",
		  title.data ? title.data : "");
    mp_buf_free(&title);
  }

  put_summary(out, p, in);
  fputs("<div class=\"box\" id=\"heap\"><h2>Heap over time</h2>\n"
	"<div class=\"side\"><div id=\"chart\"></div>\n"
	"<div id=\"kinds-box\"><h3>By object kind</h3>"
	"<p class=\"note\" id=\"kinds-note\"></p>"
	"<table id=\"kinds\" class=\"data\"></table></div></div>\n"
	"<p>What was live at <select id=\"moment\"></select> "
	"<span id=\"moment-note\"></span></p>\n"
	"<table id=\"live\" class=\"data\"></table>\n"
	"<table id=\"paths\" class=\"data\"></table></div>\n"
	"<div class=\"box\" id=\"flame\"><h2>Flame graph</h2>\n"
	"<p class=\"controls\"><select id=\"fg-kind\">"
	"<option value=\"-1\">all kinds</option></select> "
	"<select id=\"view\">"
	"<option value=\"0\">bytes allocated</option>"
	"<option value=\"1\">allocations</option>"
	"<option value=\"2\">bytes held at the end</option>"
	"<option value=\"3\">bytes held at the peak</option></select> "
	"<input id=\"search\" type=\"text\" size=\"30\" "
	"placeholder=\"search: a regular expression\"> "
	"<button id=\"reset\" type=\"button\">whole graph</button> "
	"<span id=\"found\"></span></p>\n"
	"<div id=\"fg\"></div>\n<p class=\"note\" id=\"fg-note\"></p>"
	"<p class=\"note\" id=\"fg-tip\"></p></div>\n"
	"<div class=\"box\" id=\"tables\">"
	"<h2>Top locations</h2><p class=\"note\" id=\"top-note\"></p>"
	"<table id=\"top\" class=\"data\"></table>\n"
	"<h2>Held at the end</h2><p class=\"note\" id=\"leaks-note\"></p>"
	"<table id=\"leaks\" class=\"data\"></table>\n"
	"<h2>Temporary allocations</h2><p class=\"note\" id=\"temp-note\">"
	"</p><table id=\"temporary\" class=\"data\"></table></div>\n"
	"<div class=\"box\" id=\"why\"><h2>Why is it alive</h2>\n"
	"<p class=\"controls\"><select id=\"why-loc\"></select></p>\n"
	"<p class=\"note\" id=\"why-note\"></p>\n"
	"<table id=\"why-chains\" class=\"data\"></table></div>\n",
	out);
  mp_html_end(out, &b);
  rc = 0;
out:
  free(page);
  mp_buf_free(&b);
  return rc;
}
