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

/* Location shorthands. */
struct mpw_loc mpw_internal(void);
struct mpw_loc mpw_lua(uint64_t proto, uint64_t line);
struct mpw_loc mpw_c(uint64_t addr);
struct mpw_loc mpw_trace(uint64_t traceno);

#endif
