/*
** report --format=heapsnapshot: the last heap graph of the input as a V8
** heap snapshot (the JSON that Chrome DevTools' Memory panel loads, and
** memlab): every object a node named by its kind and the location that
** made it ("table @app.lua:4"), every reference an edge named as the
** text report names it (a field, an index, a local variable, an
** upvalue), a weak table's references weak. Node 0 is the root; the
** tools compute the retainer paths and retained sizes themselves.
**
** The layout is V8's: nodes and edges flattened into arrays of numbers
** whose fields the meta object lists, edges in the order of their nodes,
** names indices into one string table.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "mp_graph.h"
#include "mp_report.h"
#include "mp_strings.h"
#include "lj_memprof_format.h"

/* V8's node and edge types, as the meta object lists them. */
enum { HS_HIDDEN, HS_ARRAY, HS_STRING, HS_OBJECT, HS_CODE, HS_CLOSURE,
       HS_REGEXP, HS_NUMBER, HS_NATIVE, HS_SYNTHETIC };
enum { HS_CONTEXT, HS_ELEMENT, HS_PROPERTY, HS_INTERNAL, HS_E_HIDDEN,
       HS_SHORTCUT, HS_WEAK };

#define HS_NODE_FIELDS 7

/* The string table, each name once: the profile's interning, on a table
** of its own. */
static int64_t name_id(struct mp_strings *t, const char *s)
{
  uint32_t id = mp_strings_intern(t, s, strlen(s));
  return id == UINT32_MAX ? -1 : (int64_t)id;
}

struct hs {
  FILE *out;
  struct mp_profile *p;
  const struct mp_graph *g;
  struct mp_strings names;
  struct mp_buf b;
  uint32_t nlocs;
};

/* The id of "PREFIX @location" (or PREFIX alone without a location). */
static int64_t kind_at(struct hs *h, const char *prefix, uint32_t loc)
{
  h->b.len = 0;
  mp_buf_str(&h->b, prefix);
  if (loc != MP_GRAPH_NO_LOC && loc < h->nlocs) {
    struct mp_loc l;
    mp_buf_str(&h->b, " ");
    mp_profile_loc(h->p, loc, &l);
    mp_name_location(&h->b, h->p, NULL, &l, MP_NAME_PLAIN);
  }
  if (h->b.oom)
    return -1;
  return name_id(&h->names, h->b.data);
}

static int node_type(unsigned kind)
{
  switch (kind) {
  case LJM_KIND_TAB: case LJM_KIND_THREAD: return HS_OBJECT;
  case LJM_KIND_TAB_ARRAY: case LJM_KIND_TAB_HASH: case LJM_KIND_STACK:
    return HS_ARRAY;
  case LJM_KIND_STR: return HS_STRING;
  case LJM_KIND_LFUNC: case LJM_KIND_CFUNC: return HS_CLOSURE;
  case LJM_KIND_PROTO: case LJM_KIND_TRACE: return HS_CODE;
  case LJM_KIND_UDATA: case LJM_KIND_CDATA: return HS_NATIVE;
  default: return HS_HIDDEN;
  }
}

/* An edge's type and its name (a string's id, or an index). */
static int edge_of(struct hs *h, const struct mp_graph_edge *e, int *type,
		   int64_t *name)
{
  const struct mp_graph *g = h->g;
  const char *nm = e->name != MP_GRAPH_NO_NAME ? g->names + e->name : "";
  *type = HS_INTERNAL;
  switch (e->tag) {
  case LJM_GRAPH_INDEX:
    *type = HS_ELEMENT;
    *name = (int64_t)e->num;
    break;
  case LJM_GRAPH_FIELD: case LJM_GRAPH_ROOT:
    *type = HS_PROPERTY;
    *name = name_id(&h->names, *nm ? nm : "(root)");
    break;
  case LJM_GRAPH_UPVAL:
    *type = HS_CONTEXT;
    if (*nm) {
      *name = name_id(&h->names, nm);
    } else {
      h->b.len = 0;
      mp_buf_printf(&h->b, "upvalue #%llu", (unsigned long long)e->num + 1);
      *name = h->b.oom ? -1 : name_id(&h->names, h->b.data);
    }
    break;
  case LJM_GRAPH_SLOT:
    *type = HS_CONTEXT;
    h->b.len = 0;
    if (*nm)
      mp_buf_printf(&h->b, "local %s", nm);
    else
      mp_buf_printf(&h->b, "slot %llu", (unsigned long long)e->num);
    *name = h->b.oom ? -1 : name_id(&h->names, h->b.data);
    break;
  case LJM_GRAPH_VALUE:
    *type = HS_PROPERTY;
    *name = name_id(&h->names, g->nodes[e->from].kind == LJM_KIND_UPVAL ?
			       "value" : "[?]");
    break;
  case LJM_GRAPH_KEY: case MP_GRAPH_FIELD_KEY:
    *name = name_id(&h->names, "key");
    break;
  case LJM_GRAPH_META: *name = name_id(&h->names, "metatable"); break;
  case LJM_GRAPH_ENV: *name = name_id(&h->names, "environment"); break;
  case LJM_GRAPH_PROTO: *name = name_id(&h->names, "prototype"); break;
  case LJM_GRAPH_CONST: *name = name_id(&h->names, "constant"); break;
  case LJM_GRAPH_PART:
    *name = name_id(&h->names, g->nodes[e->to].kind == LJM_KIND_TAB_ARRAY ?
			       "array part" :
			       g->nodes[e->to].kind == LJM_KIND_TAB_HASH ?
			       "hash part" : "stack");
    break;
  default:
    *name = name_id(&h->names, "reference");
    break;
  }
  if (e->weak)
    *type = HS_WEAK;
  return *name < 0 ? -1 : 0;
}

static const char *kind_word(unsigned kind)
{
  const char *k = mp_kind_name(kind);
  return kind == LJM_KIND_NONE || !k ? "object" : k;
}

int mp_report_heapsnapshot(FILE *out, struct mp_profile *p,
			   const struct mp_report_opts *o,
			   const struct mp_report_input *in)
{
  struct hs h;
  const struct mp_graph *g;
  uint32_t *first = NULL, *order = NULL, i, v;
  int rc = -1;
  (void)o;
  (void)in;

  memset(&h, 0, sizeof(h));
  mp_strings_init(&h.names);
  h.out = out;
  h.p = p;
  h.nlocs = mp_profile_nlocs(p);
  g = h.g = mp_profile_graph(p);
  if (!g && mp_profile_oom(p))
    return -1;
  /* Edges by their node, in node order (V8's layout), weak ones too. */
  if (g && mp_graph_rows(g, 0, 0, &first, &order) < 0)
    goto done;
  if (name_id(&h.names, "") < 0)
    goto done;
  fputs("{\"snapshot\":{\"meta\":{\"node_fields\":[\"type\",\"name\",\"id\","
	"\"self_size\",\"edge_count\",\"trace_node_id\",\"detachedness\"],"
	"\"node_types\":[[\"hidden\",\"array\",\"string\",\"object\",\"code\","
	"\"closure\",\"regexp\",\"number\",\"native\",\"synthetic\","
	"\"concatenated string\",\"sliced string\",\"symbol\",\"bigint\","
	"\"object shape\"],\"string\",\"number\",\"number\",\"number\","
	"\"number\",\"number\"],\"edge_fields\":[\"type\",\"name_or_index\","
	"\"to_node\"],\"edge_types\":[[\"context\",\"element\",\"property\","
	"\"internal\",\"hidden\",\"shortcut\",\"weak\"],\"string_or_number\","
	"\"node\"],\"trace_function_info_fields\":[\"function_id\",\"name\","
	"\"script_name\",\"script_id\",\"line\",\"column\"],"
	"\"trace_node_fields\":[\"id\",\"function_info_index\",\"count\","
	"\"size\",\"children\"],\"sample_fields\":[\"timestamp_us\","
	"\"last_assigned_id\"],\"location_fields\":[\"object_index\","
	"\"script_id\",\"line\",\"column\"]},", out);
  fprintf(out, "\"node_count\":%u,\"edge_count\":%u,"
	  "\"trace_function_count\":0},\n\"nodes\":[",
	  g ? g->nnodes : 1, g ? g->nedges : 0);
  if (!g) {
    fprintf(out, "%d,0,1,0,0,0,0", HS_SYNTHETIC);
  } else {
    for (v = 0; v < g->nnodes; v++) {
      const struct mp_graph_node *n = &g->nodes[v];
      int64_t name;
      int type = v ? node_type(n->kind) : HS_SYNTHETIC;
      if (v == 0)
	name = name_id(&h.names, "(GC roots)");
      else if (n->loc == MP_GRAPH_NO_LOC && n->kind == LJM_KIND_NONE)
	name = name_id(&h.names, "(VM state)");
      else
	name = kind_at(&h, kind_word(n->kind), n->loc);
      if (name < 0)
	goto done;
      fprintf(out, "%s%d,%lld,%llu,%llu,%u,0,0", v ? ",\n" : "", type,
	      (long long)name, 2ull * v + 1, (unsigned long long)n->size,
	      first[v + 1] - first[v]);
    }
  }
  fputs("],\n\"edges\":[", out);
  if (g) {
    for (i = 0; i < g->nedges; i++) {
      const struct mp_graph_edge *e = &g->edges[order[i]];
      int type;
      int64_t name;
      if (edge_of(&h, e, &type, &name) < 0)
	goto done;
      fprintf(out, "%s%d,%lld,%llu", i ? ",\n" : "", type, (long long)name,
	      (unsigned long long)e->to * HS_NODE_FIELDS);
    }
  }
  fputs("],\n\"trace_function_infos\":[],\"trace_tree\":[],\"samples\":[],"
	"\"locations\":[],\n\"strings\":[", out);
  for (i = 0; i < h.names.count; i++) {
    const struct mp_string *str = mp_strings_get(&h.names, i);
    h.b.len = 0;
    mp_buf_json_string(&h.b, str->data, str->len);
    if (h.b.oom)
      goto done;
    fprintf(out, "%s%.*s", i ? ",\n" : "", (int)h.b.len, h.b.data);
  }
  fputs("]}\n", out);
  rc = 0;
done:
  free(first);
  free(order);
  mp_strings_free(&h.names);
  mp_buf_free(&h.b);
  return rc;
}
