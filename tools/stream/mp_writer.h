/*
** A small memprof stream writer for the tests, the golden streams and
** the benchmark: emits exactly the bytes doc/format.md describes. Part
** of the stream library so that anything that makes streams (tests,
** tools) shares one writer.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef MP_WRITER_H
#define MP_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Writes to a FILE, or to a growing memory buffer when f is NULL. */
struct mpw {
  FILE *f;
  uint8_t *mem;
  size_t len, cap;
  int ext;		/* Headers of the profile extension. */
  uint64_t nodes;	/* Stack nodes written: the last id. */
};

void mpw_init_file(struct mpw *w, FILE *f);
void mpw_init_mem(struct mpw *w);
void mpw_free(struct mpw *w);

/* Raw pieces. */
void mpw_byte(struct mpw *w, uint8_t b);
void mpw_uleb(struct mpw *w, uint64_t v);
void mpw_string(struct mpw *w, const char *s);

/* Symbol table section. */
void mpw_symtab_begin(struct mpw *w);
/* The same with the profile extension's headers ('x', version 1): the
** stack nodes, information records and trace sites below may follow. */
void mpw_symtab_begin_ext(struct mpw *w);
void mpw_symtab_lfunc(struct mpw *w, uint64_t proto, const char *chunk,
		      uint64_t linedefined);
void mpw_symtab_cfunc(struct mpw *w, uint64_t addr, const char *name);
void mpw_symtab_trace(struct mpw *w, uint64_t traceno, uint64_t proto,
		      uint64_t line);
/* Ends the symbol table and starts the event section. */
void mpw_symtab_end(struct mpw *w);

/* Events. A location: src is LJM_SRC_*, loc/line as FORMAT.md says. */
struct mpw_loc {
  unsigned src;
  uint64_t loc;
  uint64_t line;
};

void mpw_alloc(struct mpw *w, struct mpw_loc at, uint64_t naddr,
	       uint64_t nsize);
void mpw_free_ev(struct mpw *w, struct mpw_loc at, uint64_t oaddr,
		 uint64_t osize);
void mpw_realloc(struct mpw *w, struct mpw_loc at, uint64_t oaddr,
		 uint64_t osize, uint64_t naddr, uint64_t nsize);
void mpw_sym_lfunc(struct mpw *w, uint64_t proto, const char *chunk,
		   uint64_t linedefined);
void mpw_sym_cfunc(struct mpw *w, uint64_t addr, const char *name);
void mpw_sym_trace(struct mpw *w, uint64_t traceno, uint64_t proto,
		   uint64_t line);
void mpw_epilogue(struct mpw *w);

/* The profile extension. Each node function announces a node whose
** parent is parent (0: the root) and returns its id. */
uint64_t mpw_node_lua(struct mpw *w, uint64_t parent, uint64_t proto,
		      uint64_t line, const char *name);
uint64_t mpw_node_fast(struct mpw *w, uint64_t parent, uint64_t ffid,
		       const char *name);
uint64_t mpw_node_c(struct mpw *w, uint64_t parent, uint64_t addr);
uint64_t mpw_node_trace(struct mpw *w, uint64_t parent, uint64_t traceno,
			uint64_t site);
uint64_t mpw_node_cut(struct mpw *w, uint64_t parent);
void mpw_info(struct mpw *w, uint64_t key, uint64_t value);
/* A record of the heap graph (doc/format.md): its tag, then the fields
** that tag has (num, to, aux as lj_memprof_format.h lists them; the
** ones it has not are ignored), and name for the tags with one. */
void mpw_graph(struct mpw *w, unsigned tag, uint64_t num, uint64_t to,
	       uint64_t aux, const char *name);
/* A trace call site: n pairs of prototype address and line. */
void mpw_site(struct mpw *w, uint64_t traceno, uint64_t site, size_t n,
	      const uint64_t *protos, const uint64_t *lines);
/* An allocation with its object kind (the KIND bit and its byte). */
void mpw_alloc_kind(struct mpw *w, struct mpw_loc at, uint64_t naddr,
		    uint64_t nsize, uint8_t objkind);
void mpw_realloc_kind(struct mpw *w, struct mpw_loc at, uint64_t oaddr,
		      uint64_t osize, uint64_t naddr, uint64_t nsize,
		      uint8_t objkind);

/* Location shorthands. */
struct mpw_loc mpw_internal(void);
struct mpw_loc mpw_lua(uint64_t proto, uint64_t line);
struct mpw_loc mpw_c(uint64_t addr);
struct mpw_loc mpw_trace(uint64_t traceno);
struct mpw_loc mpw_stack(uint64_t node);

#endif
