/*
** Test stream writer; see mp_writer.h.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdlib.h>
#include <string.h>

#include "lj_memprof_format.h"
#include "mp_writer.h"

void mpw_init_file(struct mpw *w, FILE *f)
{
  memset(w, 0, sizeof(*w));
  w->f = f;
}

void mpw_init_mem(struct mpw *w)
{
  memset(w, 0, sizeof(*w));
}

void mpw_free(struct mpw *w)
{
  free(w->mem);
  memset(w, 0, sizeof(*w));
}

void mpw_byte(struct mpw *w, uint8_t b)
{
  if (w->f) {
    putc_unlocked(b, w->f);
    return;
  }
  if (w->len == w->cap) {
    w->cap = w->cap ? w->cap * 2 : 4096;
    w->mem = realloc(w->mem, w->cap);
    if (!w->mem)
      abort();
  }
  w->mem[w->len++] = b;
}

void mpw_uleb(struct mpw *w, uint64_t v)
{
  while (v >= 0x80) {
    mpw_byte(w, (uint8_t)(v | 0x80));
    v >>= 7;
  }
  mpw_byte(w, (uint8_t)v);
}

void mpw_string(struct mpw *w, const char *s)
{
  size_t n = strlen(s), i;
  mpw_uleb(w, n);
  for (i = 0; i < n; i++)
    mpw_byte(w, (uint8_t)s[i]);
}

static void header(struct mpw *w, char m0, char m1, char m2)
{
  mpw_byte(w, (uint8_t)m0);
  mpw_byte(w, (uint8_t)m1);
  mpw_byte(w, (uint8_t)m2);
  mpw_byte(w, w->ext ? LJM_FMT_VERSION_EXT : LJM_FMT_VERSION);
  mpw_byte(w, w->ext ? LJM_EXT_PROFILE : 0);
  mpw_byte(w, w->ext ? LJM_EXT_PROFILE_VERSION : 0);
  mpw_byte(w, 0);
}

void mpw_symtab_begin(struct mpw *w)
{
  header(w, LJM_SYMTAB_M0, LJM_SYMTAB_M1, LJM_SYMTAB_M2);
}

void mpw_symtab_begin_ext(struct mpw *w)
{
  w->ext = 1;
  header(w, LJM_SYMTAB_M0, LJM_SYMTAB_M1, LJM_SYMTAB_M2);
}

void mpw_symtab_lfunc(struct mpw *w, uint64_t proto, const char *chunk,
		      uint64_t linedefined)
{
  mpw_byte(w, LJM_SYMTAB_LFUNC);
  mpw_uleb(w, proto);
  mpw_string(w, chunk);
  mpw_uleb(w, linedefined);
}

void mpw_symtab_cfunc(struct mpw *w, uint64_t addr, const char *name)
{
  mpw_byte(w, LJM_SYMTAB_CFUNC);
  mpw_uleb(w, addr);
  mpw_string(w, name);
}

void mpw_symtab_trace(struct mpw *w, uint64_t traceno, uint64_t proto,
		      uint64_t line)
{
  mpw_byte(w, LJM_SYMTAB_TRACE);
  mpw_uleb(w, traceno);
  mpw_uleb(w, proto);
  mpw_uleb(w, line);
}

void mpw_symtab_end(struct mpw *w)
{
  mpw_byte(w, LJM_SYMTAB_FINAL);
  header(w, LJM_EVENTS_M0, LJM_EVENTS_M1, LJM_EVENTS_M2);
}

static void location(struct mpw *w, struct mpw_loc at)
{
  switch (at.src) {
  case LJM_SRC_LFUNC:
    mpw_uleb(w, at.loc);
    mpw_uleb(w, at.line);
    break;
  case LJM_SRC_CFUNC:
  case LJM_SRC_TRACE:
  case LJM_SRC_STACK:
    mpw_uleb(w, at.loc);
    break;
  default:
    break;
  }
}

void mpw_alloc(struct mpw *w, struct mpw_loc at, uint64_t naddr,
	       uint64_t nsize)
{
  mpw_byte(w, (uint8_t)(LJM_EV_ALLOC | at.src));
  location(w, at);
  mpw_uleb(w, naddr);
  mpw_uleb(w, nsize);
}

void mpw_free_ev(struct mpw *w, struct mpw_loc at, uint64_t oaddr,
		 uint64_t osize)
{
  mpw_byte(w, (uint8_t)(LJM_EV_FREE | at.src));
  location(w, at);
  mpw_uleb(w, oaddr);
  mpw_uleb(w, osize);
}

void mpw_realloc(struct mpw *w, struct mpw_loc at, uint64_t oaddr,
		 uint64_t osize, uint64_t naddr, uint64_t nsize)
{
  mpw_byte(w, (uint8_t)(LJM_EV_REALLOC | at.src));
  location(w, at);
  mpw_uleb(w, oaddr);
  mpw_uleb(w, osize);
  mpw_uleb(w, naddr);
  mpw_uleb(w, nsize);
}

void mpw_sym_lfunc(struct mpw *w, uint64_t proto, const char *chunk,
		   uint64_t linedefined)
{
  mpw_byte(w, LJM_EV_SYMTAB | LJM_SRC_LFUNC);
  mpw_uleb(w, proto);
  mpw_string(w, chunk);
  mpw_uleb(w, linedefined);
}

void mpw_sym_cfunc(struct mpw *w, uint64_t addr, const char *name)
{
  mpw_byte(w, LJM_EV_SYMTAB | LJM_SRC_CFUNC);
  mpw_uleb(w, addr);
  mpw_string(w, name);
}

void mpw_sym_trace(struct mpw *w, uint64_t traceno, uint64_t proto,
		   uint64_t line)
{
  mpw_byte(w, LJM_EV_SYMTAB | LJM_SRC_TRACE);
  mpw_uleb(w, traceno);
  mpw_uleb(w, proto);
  mpw_uleb(w, line);
}

void mpw_epilogue(struct mpw *w)
{
  mpw_byte(w, LJM_EV_EPILOGUE);
}

struct mpw_loc mpw_internal(void)
{
  struct mpw_loc l = {LJM_SRC_INTERNAL, 0, 0};
  return l;
}

struct mpw_loc mpw_lua(uint64_t proto, uint64_t line)
{
  struct mpw_loc l = {LJM_SRC_LFUNC, proto, line};
  return l;
}

struct mpw_loc mpw_c(uint64_t addr)
{
  struct mpw_loc l = {LJM_SRC_CFUNC, addr, 0};
  return l;
}

struct mpw_loc mpw_trace(uint64_t traceno)
{
  struct mpw_loc l = {LJM_SRC_TRACE, traceno, 0};
  return l;
}

struct mpw_loc mpw_stack(uint64_t node)
{
  struct mpw_loc l = {LJM_SRC_STACK, node, 0};
  return l;
}

/* -- The profile extension ----------------------------------------------- */

static uint64_t node(struct mpw *w, uint64_t parent, unsigned frame)
{
  mpw_byte(w, LJM_EV_SYMTAB | LJM_SRC_NODE);
  mpw_uleb(w, parent);
  mpw_byte(w, (uint8_t)frame);
  return ++w->nodes;
}

uint64_t mpw_node_lua(struct mpw *w, uint64_t parent, uint64_t proto,
		      uint64_t line, const char *name)
{
  uint64_t id = node(w, parent, LJM_FRAME_LUA);
  mpw_uleb(w, proto);
  mpw_uleb(w, line);
  mpw_string(w, name);
  return id;
}

uint64_t mpw_node_fast(struct mpw *w, uint64_t parent, uint64_t ffid,
		       const char *name)
{
  uint64_t id = node(w, parent, LJM_FRAME_FAST);
  mpw_uleb(w, ffid);
  mpw_string(w, name);
  return id;
}

uint64_t mpw_node_c(struct mpw *w, uint64_t parent, uint64_t addr)
{
  uint64_t id = node(w, parent, LJM_FRAME_C);
  mpw_uleb(w, addr);
  return id;
}

uint64_t mpw_node_trace(struct mpw *w, uint64_t parent, uint64_t traceno,
			uint64_t site)
{
  uint64_t id = node(w, parent, LJM_FRAME_TRACE);
  mpw_uleb(w, traceno);
  mpw_uleb(w, site);
  return id;
}

uint64_t mpw_node_cut(struct mpw *w, uint64_t parent)
{
  return node(w, parent, LJM_FRAME_CUT);
}

void mpw_info(struct mpw *w, uint64_t key, uint64_t value)
{
  mpw_byte(w, LJM_EV_SYMTAB | LJM_SRC_INFO);
  mpw_uleb(w, key);
  mpw_uleb(w, value);
}

void mpw_graph(struct mpw *w, unsigned tag, uint64_t num, uint64_t to,
	       uint64_t aux, const char *name)
{
  mpw_byte(w, LJM_EV_SYMTAB | LJM_SRC_GRAPH);
  mpw_uleb(w, tag);
  switch (tag) {
  case LJM_GRAPH_OBJ:
    mpw_uleb(w, to);
    mpw_uleb(w, num);
    return;
  case LJM_GRAPH_FIELD:
    mpw_uleb(w, aux);
    mpw_uleb(w, to);
    break;
  case LJM_GRAPH_INDEX: case LJM_GRAPH_UPVAL: case LJM_GRAPH_SLOT:
  case LJM_GRAPH_ROOT:
    mpw_uleb(w, num);
    mpw_uleb(w, to);
    if (tag == LJM_GRAPH_SLOT)
      mpw_uleb(w, aux);
    break;
  default:
    mpw_uleb(w, to);
    return;
  }
  if (tag != LJM_GRAPH_INDEX)
    mpw_string(w, name ? name : "");
}

void mpw_site(struct mpw *w, uint64_t traceno, uint64_t site, size_t n,
	      const uint64_t *protos, const uint64_t *lines)
{
  size_t i;
  mpw_byte(w, LJM_EV_SYMTAB | LJM_SRC_SITE);
  mpw_uleb(w, traceno);
  mpw_uleb(w, site);
  mpw_uleb(w, n);
  for (i = 0; i < n; i++) {
    mpw_uleb(w, protos[i]);
    mpw_uleb(w, lines[i]);
  }
}

void mpw_alloc_kind(struct mpw *w, struct mpw_loc at, uint64_t naddr,
		    uint64_t nsize, uint8_t objkind)
{
  mpw_byte(w, (uint8_t)(LJM_EV_ALLOC | LJM_EV_KIND | at.src));
  location(w, at);
  mpw_uleb(w, naddr);
  mpw_uleb(w, nsize);
  mpw_byte(w, objkind);
}

void mpw_realloc_kind(struct mpw *w, struct mpw_loc at, uint64_t oaddr,
		      uint64_t osize, uint64_t naddr, uint64_t nsize,
		      uint8_t objkind)
{
  mpw_byte(w, (uint8_t)(LJM_EV_REALLOC | LJM_EV_KIND | at.src));
  location(w, at);
  mpw_uleb(w, oaddr);
  mpw_uleb(w, osize);
  mpw_uleb(w, naddr);
  mpw_uleb(w, nsize);
  mpw_byte(w, objkind);
}
