/*
** Memory profiler: the names of the VM's built-in functions as Lua users
** know them (string.rep, file:write), for the FAST frames of call stacks.
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
**
** The writer (lj_memprof_node.c) and the attach recorder
** (attach/recorder.c) name them alike from the tree's own lj_ffdef.h.
*/

#ifndef _LJ_MEMPROF_FFNAME_H
#define _LJ_MEMPROF_FFNAME_H

#include <string.h>

#include "lj_obj.h"
#include "lj_ff.h"

/* The VM's library functions, by ffid, as lj_ffdef.h lists them. */
static const char *const mp_ffnames[] = {
#define FFDEF(name)	#name,
#include "lj_ffdef.h"
#undef FFDEF
};

/* How the libraries' C prefixes read in Lua: string_rep is string.rep. */
static const char *const mp_fflibs[][2] = {
  { "io_method_", "file:" }, { "buffer_method_", "buffer:" },
  { "ffi_meta_", "cdata:" }, { "ffi_clib_", "clib:" },
  { "ffi_callback_", "callback:" }, { "jit_util_", "jit.util." },
  { "jit_opt_", "jit.opt." }, { "jit_profile_", "jit.profile." },
  { "misc_memprof_", "misc.memprof." }, { "buffer_", "string.buffer." },
  { "thread_", "thread." }, { "coroutine_", "coroutine." },
  { "string_", "string." }, { "table_", "table." }, { "math_", "math." },
  { "bit_", "bit." }, { "io_", "io." }, { "os_", "os." },
  { "debug_", "debug." }, { "jit_", "jit." }, { "ffi_", "ffi." },
};

/* The name of built-in ffid as Lua users know it, into buf. */
static LJ_AINLINE size_t mp_ffname(unsigned ffid, char *buf, size_t sz)
{
  const char *c;
  size_t i, n = 0;
  if (ffid <= FF_C || ffid - (FF_C+1) >= sizeof(mp_ffnames)/sizeof(char *))
    return 0;
  c = mp_ffnames[ffid - (FF_C+1)];
  for (i = 0; i < sizeof(mp_fflibs)/sizeof(mp_fflibs[0]); i++) {
    size_t len = strlen(mp_fflibs[i][0]);
    if (strncmp(c, mp_fflibs[i][0], len) == 0) {
      n = strlen(mp_fflibs[i][1]);
      memcpy(buf, mp_fflibs[i][1], n);
      c += len;
      break;
    }
  }
  for (; *c && n < sz; c++) buf[n++] = *c;
  return n;
}

#endif
