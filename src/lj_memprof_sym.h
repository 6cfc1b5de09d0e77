/*
** Memory profiler: names of C functions, from the ELF object they lie in.
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#ifndef _LJ_MEMPROF_SYM_H
#define _LJ_MEMPROF_SYM_H

#include "lj_obj.h"
#include "lj_memprof.h"

#if LJ_HASMEMPROF

/*
** The name under which a stream announces the C function at addr
** (doc/format.md, "How ljmprof names a location"): the function symbol of the object addr lies in
** that covers addr ("name", or "name+0x<off>" past its start), else the
** object and the offset from its load base ("cjson.so+0x3a10"), else
** "CFUNC 0x<addr>" when no loaded object holds addr.
**
** Returns a malloc'd NUL-terminated string (*len gets its length) for
** the caller to free, or NULL when out of memory. *gen gets the
** generation of the loaded objects the name was found in: it changes
** whenever an object is loaded or unloaded, so names announced under an
** older generation may be stale. Thread-safe; never allocates from any
** Lua heap nor calls into a VM. Per-object symbol tables are read once
** per process, when an address in the object is first named.
*/
LJ_FUNC char *lj_memprof_sym_name(uintptr_t addr, size_t *len, uint64_t *gen);

#endif

#endif
