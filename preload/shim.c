/*
** libljmprof.so: the LD_PRELOAD shim.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include "config.h"

#include "lua.h"

/* The shim's entry points arrive with the profiler; until then the
** library is the patched VM alone. */
