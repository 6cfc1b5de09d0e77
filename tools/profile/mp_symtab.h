/*
** Symbols known at the current point of the stream: prototypes and
** traces by address/number, C symbols for nearest-at-or-below lookup.
** A new definition of an address replaces the old one (addresses are
** reused during a run), so lookups always answer "as of now".
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef MP_SYMTAB_H
#define MP_SYMTAB_H

#include <stdint.h>

#include "mp_map.h"

#define MP_NO_STRING UINT32_MAX

struct mp_proto {
  uint32_t chunk;	/* Interned chunk name. */
  uint32_t linedefined;
};

struct mp_trace {
  uint32_t chunk;	/* Chunk of the start prototype, or MP_NO_STRING. */
  uint32_t line;	/* Start line. */
  uint64_t proto;	/* Start prototype address (named when chunk unknown). */
};

struct mp_csym {
  uint64_t addr;
  uint32_t name;	/* Interned symbol name. */
};

/* A sorted run of C symbols; see mp_symtab.c for the scheme. */
struct mp_csym_level {
  struct mp_csym *syms;
  size_t count;
};

#define MP_CSYM_LEVELS 48

struct mp_symtab {
  struct mp_map protos;		/* addr -> a: chunk | linedefined << 32. */
  /* The last prototype looked up (a chunk's new locations are met
  ** together) and its entry's a; valid until the next prototype is
  ** defined. */
  uint64_t proto_memo_addr, proto_memo_a;
  enum { MP_PROTO_MEMO_NONE, MP_PROTO_MEMO_FOUND, MP_PROTO_MEMO_ABSENT }
    proto_memo;
  struct mp_map traces;		/* traceno -> a: chunk | line << 32, b: proto. */
  struct mp_csym_level levels[MP_CSYM_LEVELS];
};

void mp_symtab_init(struct mp_symtab *t);
void mp_symtab_free(struct mp_symtab *t);

/* Definitions; 0 or -1 when out of memory. Inline: a module-loading
** profile defines a prototype every few dozen events. */
static inline int mp_symtab_add_proto(struct mp_symtab *t, uint64_t addr,
				      uint32_t chunk, uint32_t linedefined)
{
  int added;
  struct mp_map_entry *e = mp_map_insert(&t->protos, addr, &added);
  t->proto_memo = MP_PROTO_MEMO_NONE;
  if (!e)
    return -1;
  e->a = (uint64_t)chunk | (uint64_t)linedefined << 32;
  return 0;
}
int mp_symtab_add_trace(struct mp_symtab *t, uint32_t traceno,
			uint64_t proto, uint32_t line);
int mp_symtab_add_csym(struct mp_symtab *t, uint64_t addr, uint32_t name);

/* Lookups; 1 when found. */
int mp_symtab_proto(struct mp_symtab *t, uint64_t addr, struct mp_proto *out);
int mp_symtab_trace(struct mp_symtab *t, uint32_t traceno,
		    struct mp_trace *out);
/* The C symbol at or below addr (latest definition of that address). */
int mp_symtab_csym(const struct mp_symtab *t, uint64_t addr,
		   struct mp_csym *out);

#endif
