/*
** Symbol events and the leading symbol table: prototypes, C symbols and
** traces join the symbol table of the file being read, and the cached
** resolutions they change are dropped.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include "mp_profile_int.h"

/* The function a trace starts in, as of its definition (the prototype's
** address may be reused before the trace allocates), like its chunk. */
static int note_trace_function(struct mp_profile *p, const struct mp_event *ev)
{
  struct mp_proto pt;
  struct mp_map_entry *e;
  int added;

  e = mp_map_insert(&p->trace_funcs, (uint32_t)ev->sym_addr, &added);
  if (!e)
    return -1;
  e->a = mp_symtab_proto(&p->symtab, ev->sym_proto, &pt) ?
	 (uint64_t)1 << 32 | pt.linedefined : 0;
  return 0;
}

int mp_symbols_add_proto(struct mp_profile *p, uint64_t key, uint64_t addr,
			 const char *name, size_t name_len, uint32_t line)
{
  uint32_t id;

  /* As mp_symbols_add does for the event, without building one. */
  p->last_id = 0;
  mp_resolve_invalidate_key(p, LJM_SRC_LFUNC, key);
  p->file.n_sym_events++;
  p->file.n_sym_proto++;
  if (p->no_locations)
    return 0;
  id = mp_strings_intern(&p->strings, name, name_len);
  if (id == MP_NO_STRING)
    return -1;
  return mp_symtab_add_proto(&p->symtab, addr, id, line);
}

int mp_symbols_add(struct mp_profile *p, const struct mp_event *ev)
{
  uint32_t name;
  int rc = 0;

  /* Cached resolutions that this symbol changes are now stale. A
  ** prototype only changes Lua events at its address: traces are named
  ** when they are defined. */
  p->last_id = 0;
  mp_resolve_invalidate(p, mp_symbol_source(mp_event_symbol_kind(ev->type)),
	     ev->sym_addr);
  if (!ev->in_symtab)
    p->file.n_sym_events++;
  if (p->no_locations) {
    /* Counted, not kept: nothing will be named. */
    p->file.n_sym_proto += ev->type == MP_EV_SYM_LFUNC;
    p->file.n_sym_cfunc += ev->type == MP_EV_SYM_CFUNC;
    p->file.n_sym_trace += ev->type == MP_EV_SYM_TRACE;
    return 0;
  }
  switch (ev->type) {
  case MP_EV_SYM_LFUNC:
    p->file.n_sym_proto++;
    name = mp_strings_intern(&p->strings, ev->name, ev->name_len);
    if (name == MP_NO_STRING)
      return -1;
    rc = mp_symtab_add_proto(&p->symtab, ev->sym_addr, name,
			     (uint32_t)ev->sym_line);
    break;
  case MP_EV_SYM_CFUNC:
    p->file.n_sym_cfunc++;
    name = mp_strings_intern(&p->strings, ev->name, ev->name_len);
    if (name == MP_NO_STRING)
      return -1;
    rc = mp_symtab_add_csym(&p->symtab, ev->sym_addr, name);
    break;
  case MP_EV_SYM_TRACE:
    p->file.n_sym_trace++;
    rc = mp_symtab_add_trace(&p->symtab, (uint32_t)ev->sym_addr,
			     ev->sym_proto, (uint32_t)ev->sym_line);
    if (rc == 0 && p->group == MP_GROUP_FUNCTION)
      rc = note_trace_function(p, ev);
    break;
  default:
    break;
  }
  return rc;
}
