/*
** ljmprof attach: destroying LuaJIT's own allocator pool as lua_close
** would (see recorder.c), with the pool's layout taken from the source
** the recorder is built against: its allocator is compiled in, hidden,
** and only lj_alloc_destroy is ever called.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "lj_alloc.c"

/* lj_alloc_create's address randomization, never called here. */
uint64_t LJ_FASTCALL lj_prng_u64(PRNGState *rs)
{
  (void)rs;
  return 0;
}

void ljm_attach_pool_destroy(void *msp);
void ljm_attach_pool_destroy(void *msp)
{
  lj_alloc_destroy(msp);
}
