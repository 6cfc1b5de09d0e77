/*
** gen_stream: writes memprof streams for the tests and the benchmark.
**
**   gen_stream bench EVENTS [SEED]   a realistic mix of EVENTS events with
**                                    a small live heap, to stdout
**   gen_stream bench-stacks EVENTS [SEED]  the same with call stacks (the
**                                    profile extension), as a writer with
**                                    stacks would give them
**   gen_stream scenario NAME         one of the golden test streams
**   gen_stream list                  the scenario names
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lj_memprof_format.h"
#include "mp_writer.h"

/* -- Golden scenarios ---------------------------------------------------- */

/* Overrides, internal events, an untracked free. */
static void scenario_basic(struct mpw *w)
{
  struct mpw_loc l3 = mpw_lua(0x1000, 3), l12 = mpw_lua(0x2000, 12);
  mpw_symtab_begin(w);
  mpw_symtab_lfunc(w, 0x1000, "@app.lua", 0);
  mpw_symtab_lfunc(w, 0x2000, "@app.lua", 10);
  mpw_symtab_end(w);
  mpw_alloc(w, l3, 0x10000, 100);
  mpw_alloc(w, l3, 0x10100, 50);
  mpw_alloc(w, l12, 0x10200, 64);
  mpw_alloc(w, mpw_internal(), 0x10300, 32);
  mpw_realloc(w, l12, 0x10200, 64, 0x10400, 128);
  mpw_realloc(w, mpw_internal(), 0x10000, 100, 0x10000, 200);
  mpw_free_ev(w, mpw_internal(), 0x10100, 50);
  mpw_free_ev(w, mpw_internal(), 0x10300, 32);
  mpw_free_ev(w, l12, 0x99990, 16);	/* Allocated before profiling. */
  mpw_alloc(w, l3, 0x10500, 10);
  mpw_epilogue(w);
}

/* Chunk names with newlines (code loaded from unnamed strings). */
static void scenario_aliases(struct mpw *w)
{
  mpw_symtab_begin(w);
  mpw_symtab_lfunc(w, 0x3000, "local t = {}\nreturn t", 0);
  mpw_symtab_lfunc(w, 0x3100, "@lib.lua", 0);
  mpw_symtab_end(w);
  mpw_alloc(w, mpw_lua(0x3000, 1), 0x20000, 40);
  mpw_alloc(w, mpw_lua(0x3000, 1), 0x20100, 40);
  mpw_alloc(w, mpw_lua(0x3100, 7), 0x20200, 4000);
  /* A second string chunk, defined while profiling. */
  mpw_sym_lfunc(w, 0x3200, "return function()\n  return {}\nend", 1);
  mpw_alloc(w, mpw_lua(0x3200, 2), 0x20300, 56);
  mpw_free_ev(w, mpw_lua(0x3200, 2), 0x20000, 40);
  mpw_realloc(w, mpw_lua(0x3100, 8), 0x20100, 40, 0x20400, 80);
  mpw_epilogue(w);
}

/* A prototype address reused mid-stream; traces named as of their
** definition. */
static void scenario_reuse(struct mpw *w)
{
  mpw_symtab_begin(w);
  mpw_symtab_lfunc(w, 0x1000, "@old.lua", 5);
  mpw_symtab_trace(w, 1, 0x1000, 6);
  mpw_symtab_end(w);
  mpw_alloc(w, mpw_lua(0x1000, 7), 0x30000, 24);
  mpw_alloc(w, mpw_trace(1), 0x30100, 48);
  /* @old.lua's function is collected; a new one lands at its address. */
  mpw_sym_lfunc(w, 0x1000, "@new.lua", 20);
  mpw_alloc(w, mpw_lua(0x1000, 7), 0x30200, 24);
  mpw_alloc(w, mpw_trace(1), 0x30300, 48);	/* Still @old.lua's trace. */
  mpw_free_ev(w, mpw_lua(0x1000, 22), 0x30000, 24);
  mpw_sym_trace(w, 1, 0x1000, 21);		/* Trace number reused. */
  mpw_realloc(w, mpw_trace(1), 0x30100, 48, 0x30400, 96);
  mpw_epilogue(w);
}

/* C symbols: nearest at or below, redefinition, a library loaded late. */
static void scenario_csyms(struct mpw *w)
{
  mpw_symtab_begin(w);
  mpw_symtab_cfunc(w, 0x7000, "lj_tab_new");
  mpw_symtab_cfunc(w, 0x7100, "lj_str_new");
  mpw_symtab_cfunc(w, 0x9000, "luaL_buffinit");
  mpw_symtab_end(w);
  mpw_alloc(w, mpw_c(0x7000), 0x40000, 64);
  mpw_alloc(w, mpw_c(0x7050), 0x40100, 64);
  mpw_alloc(w, mpw_c(0x7100), 0x40200, 32);
  mpw_alloc(w, mpw_c(0x6000), 0x40300, 16);	/* Below every symbol. */
  mpw_alloc(w, mpw_c(0x8800), 0x40400, 8);	/* lj_str_new, for now. */
  mpw_sym_cfunc(w, 0x7100, "my_alloc");		/* Same address, new name. */
  mpw_sym_cfunc(w, 0x8000, "ext_fn");		/* A library loaded late. */
  mpw_alloc(w, mpw_c(0x7120), 0x40500, 32);
  mpw_alloc(w, mpw_c(0x8800), 0x40600, 8);
  mpw_free_ev(w, mpw_c(0x9010), 0x40000, 64);
  mpw_free_ev(w, mpw_c(0x9010), 0x40400, 8);
  mpw_realloc(w, mpw_c(0x8000), 0x40600, 8, 0x40700, 1 << 20);
  mpw_epilogue(w);
}

/* Traces: known, unknown, started in an unknown prototype. */
static void scenario_traces(struct mpw *w)
{
  mpw_symtab_begin(w);
  mpw_symtab_lfunc(w, 0x1000, "@loop.lua", 0);
  mpw_symtab_trace(w, 1, 0x1000, 4);
  mpw_symtab_end(w);
  mpw_alloc(w, mpw_lua(0x1000, 4), 0x50000, 16);
  mpw_alloc(w, mpw_trace(1), 0x50100, 16);
  mpw_alloc(w, mpw_trace(1), 0x50200, 16);
  mpw_alloc(w, mpw_trace(2), 0x50300, 16);		/* Never defined. */
  mpw_sym_trace(w, 3, 0x5555, 9);			/* Unknown prototype. */
  mpw_alloc(w, mpw_trace(3), 0x50400, 16);
  mpw_alloc(w, mpw_lua(0x6666, 3), 0x50500, 16);	/* Unknown prototype. */
  mpw_free_ev(w, mpw_trace(1), 0x50000, 16);
  mpw_free_ev(w, mpw_internal(), 0x50100, 16);
  mpw_realloc(w, mpw_internal(), 0x50300, 16, 0x50600, 32);
  mpw_epilogue(w);
}

/* Names that would drive a terminal (ESC sequences, BEL, C1 controls),
** break a folded line (';', trailing spaces) or are not UTF-8. */
static void scenario_escapes(struct mpw *w)
{
  mpw_symtab_begin(w);
  mpw_symtab_lfunc(w, 0x1000, "@\033[2J\033[Hclear.lua", 0);
  mpw_symtab_lfunc(w, 0x1100, "@\033[2J\033[Hclear.lua", 5);
  mpw_symtab_lfunc(w, 0x1200, "@semi;colon.lua  ", 0);
  mpw_symtab_lfunc(w, 0x1300, "@c1\302\233x\377y\tz caf\303\251.lua", 0);
  mpw_symtab_cfunc(w, 0x7000, "evil\033]0;pwned\007");
  mpw_symtab_trace(w, 1, 0x1100, 6);
  mpw_symtab_end(w);
  mpw_alloc(w, mpw_lua(0x1000, 1), 0x10000, 100);
  mpw_alloc(w, mpw_lua(0x1100, 6), 0x10100, 50);
  mpw_alloc(w, mpw_lua(0x1200, 2), 0x10200, 30);
  mpw_alloc(w, mpw_lua(0x1300, 3), 0x10300, 20);
  mpw_alloc(w, mpw_c(0x7010), 0x10400, 10);
  mpw_alloc(w, mpw_trace(1), 0x10500, 8);
  /* A string chunk: aliased, and its text in ALIASES escaped too. */
  mpw_sym_lfunc(w, 0x1400, "print('\033[31mred')\nreturn\t1\n", 0);
  mpw_sym_cfunc(w, 0x8000, "\033[1mbold");
  mpw_alloc(w, mpw_lua(0x1400, 1), 0x10600, 40);
  mpw_realloc(w, mpw_c(0x8000), 0x10000, 100, 0x10700, 200);
  mpw_free_ev(w, mpw_lua(0x1100, 7), 0x10100, 50);
  mpw_epilogue(w);
}

/* Call stacks (the profile extension): built-ins charged to their
** caller's line, C and trace frames, a cut stack, a node announced twice,
** a version-3 location among stacks, information records and a trace
** site, an object kind. */
static void scenario_stacks(struct mpw *w)
{
  uint64_t main30, rep30, srep30, main31, rep31, srep31, mk30, cb, tr, cut,
	   mkcut, again;
  static const uint64_t site_protos[] = {0x2000}, site_lines[] = {11};

  mpw_symtab_begin_ext(w);
  mpw_symtab_lfunc(w, 0x1000, "@app.lua", 0);
  mpw_symtab_lfunc(w, 0x2000, "@util.lua", 10);
  mpw_symtab_lfunc(w, 0x3000, "@util.lua", 20);
  mpw_symtab_trace(w, 1, 0x2000, 11);
  mpw_symtab_end(w);
  mpw_info(w, LJM_INFO_DEPTH, 32);
  mpw_info(w, 99, 7);	/* A key this reader does not know. */
  main30 = mpw_node_lua(w, 0, 0x1000, 30, "");
  rep30 = mpw_node_lua(w, main30, 0x2000, 12, "rep_it");
  srep30 = mpw_node_fast(w, rep30, 87, "string.rep");
  mpw_alloc(w, mpw_stack(srep30), 0x10000, 300);
  mpw_alloc(w, mpw_stack(srep30), 0x10100, 100);
  main31 = mpw_node_lua(w, 0, 0x1000, 31, "");
  rep31 = mpw_node_lua(w, main31, 0x2000, 12, "rep_it");
  srep31 = mpw_node_fast(w, rep31, 87, "string.rep");
  mpw_alloc(w, mpw_stack(srep31), 0x10200, 50);
  mk30 = mpw_node_lua(w, main30, 0x3000, 22, "make_table");
  mpw_alloc(w, mpw_stack(mk30), 0x10300, 64);
  mpw_realloc(w, mpw_stack(mk30), 0x10300, 64, 0x10400, 128);
  mpw_sym_cfunc(w, 0x7100, "l_callback");
  cb = mpw_node_c(w, main30, 0x7100);
  mpw_alloc_kind(w, mpw_stack(cb), 0x10500, 40, 5);
  tr = mpw_node_trace(w, main31, 1, 1);
  mpw_site(w, 1, 1, 1, site_protos, site_lines);
  mpw_alloc(w, mpw_stack(tr), 0x10600, 24);
  cut = mpw_node_cut(w, 0);
  mkcut = mpw_node_lua(w, cut, 0x3000, 22, "make_table");
  mpw_alloc(w, mpw_stack(mkcut), 0x10700, 16);
  mpw_alloc(w, mpw_internal(), 0x10800, 8);	/* No stack: one frame. */
  /* The same stack under a second id: one node of the tree. */
  again = mpw_node_lua(w, main30, 0x2000, 12, "rep_it");
  mpw_alloc(w, mpw_stack(again), 0x10900, 10);
  mpw_free_ev(w, mpw_lua(0x2000, 13), 0x10100, 100);
  mpw_free_ev(w, mpw_internal(), 0x10800, 8);
  mpw_free_ev(w, mpw_stack(rep30), 0x10200, 50);
  mpw_info(w, LJM_INFO_CUT_EVENTS, 0);
  mpw_epilogue(w);
}

/* A full node table, as ljmprof's writer leaves it: table full at 2
** nodes, then mk's 3 tables (@util.lua:20, 192 bytes) under the full
** root that FULL_ROOT names, the frames above them cut; a's at line 12
** (100 bytes) had room. */
static void scenario_nodesfull(struct mpw *w)
{
  uint64_t main5, a12, root, mk;
  mpw_symtab_begin_ext(w);
  mpw_symtab_lfunc(w, 0x1000, "@app.lua", 0);
  mpw_symtab_lfunc(w, 0x2000, "@util.lua", 10);
  mpw_symtab_end(w);
  mpw_info(w, LJM_INFO_DEPTH, 32);
  main5 = mpw_node_lua(w, 0, 0x1000, 5, "");
  a12 = mpw_node_lua(w, main5, 0x2000, 12, "a");
  mpw_alloc(w, mpw_stack(a12), 0x10000, 100);
  mpw_info(w, LJM_INFO_NODES_FULL, 2);
  mpw_info(w, LJM_INFO_FULL_ROOT, 3);
  root = mpw_node_cut(w, 0);
  mk = mpw_node_lua(w, root, 0x2000, 20, "mk");
  mpw_alloc(w, mpw_stack(mk), 0x10100, 64);
  mpw_alloc(w, mpw_stack(mk), 0x10200, 64);
  mpw_alloc(w, mpw_stack(mk), 0x10300, 64);
  mpw_info(w, LJM_INFO_CUT_EVENTS, 3);
  mpw_epilogue(w);
}

/* Time marks, a peak in the middle, temporary allocations: the peak is
** event 5 (5500 bytes in 3 blocks, 1 s in); 1.5 s is event 6 (1500
** bytes); line 6 makes 2 temporaries of its 3 blocks (30 bytes), line 11
** 1 (by a realloc, 16 bytes); line 6's block freed after another
** allocation, line 10's reallocated, are not. */
static void scenario_moments(struct mpw *w)
{
  const uint64_t s = 1000000000u;
  mpw_symtab_begin_ext(w);
  mpw_symtab_lfunc(w, 0x1000, "@app.lua", 0);
  mpw_symtab_end(w);
  mpw_info(w, LJM_INFO_TIME, 0);
  mpw_alloc(w, mpw_lua(0x1000, 5), 0x100, 1000);		/* 1 */
  mpw_alloc(w, mpw_lua(0x1000, 6), 0x200, 10);
  mpw_free_ev(w, mpw_lua(0x1000, 6), 0x200, 10);		/* Temporary. */
  mpw_info(w, LJM_INFO_TIME, 1 * s);
  mpw_alloc(w, mpw_lua(0x1000, 7), 0x300, 4000);
  mpw_alloc(w, mpw_lua(0x1000, 8), 0x400, 500);		/* 5: peak. */
  mpw_free_ev(w, mpw_internal(), 0x300, 4000);
  mpw_info(w, LJM_INFO_TIME, 2 * s);
  mpw_alloc(w, mpw_lua(0x1000, 6), 0x500, 20);		/* 7 */
  mpw_free_ev(w, mpw_internal(), 0x500, 20);		/* Temporary. */
  mpw_realloc(w, mpw_lua(0x1000, 9), 0x400, 500, 0x600, 600);
  mpw_alloc(w, mpw_lua(0x1000, 6), 0x700, 30);		/* 10 */
  mpw_alloc(w, mpw_lua(0x1000, 5), 0x800, 40);
  mpw_free_ev(w, mpw_internal(), 0x700, 30);		/* Not: 11 between. */
  mpw_alloc(w, mpw_lua(0x1000, 10), 0x900, 8);
  mpw_realloc(w, mpw_lua(0x1000, 11), 0x900, 8, 0x900, 16);
  mpw_free_ev(w, mpw_internal(), 0x900, 16);		/* 15: temporary. */
  mpw_info(w, LJM_INFO_TIME, 3 * s);
  mpw_epilogue(w);
}

/* A later snapshot with its heap graph (report --retainers, --format=
** heapsnapshot): globals.cache holds a table whose entries are strings of
** line 7 and whose key is a name with an escape in it; a closure's
** upvalue holds a table of line 9; a weak table holds strings of line 8
** only; a cycle of line 10 is garbage. */
static void scenario_graph(struct mpw *w)
{
  int i;
  mpw_symtab_begin_ext(w);
  mpw_symtab_lfunc(w, 0x1000, "@app.lua", 0);
  mpw_symtab_lfunc(w, 0x1100, "@app.lua", 3);
  mpw_symtab_end(w);
  mpw_info(w, LJM_INFO_DEPTH, 32);
  mpw_alloc_kind(w, mpw_lua(0x1000, 1), 0x100, 64, LJM_KIND_TAB);
  mpw_alloc_kind(w, mpw_lua(0x1000, 2), 0x200, 64, LJM_KIND_TAB);
  mpw_alloc_kind(w, mpw_lua(0x1000, 2), 0x240, 256, LJM_KIND_TAB_ARRAY);
  for (i = 0; i < 4; i++)
    mpw_alloc_kind(w, mpw_lua(0x1000, 7), 0x1000 + 0x40 * i, 40,
		   LJM_KIND_STR);
  mpw_alloc_kind(w, mpw_lua(0x1000, 3), 0x300, 40, LJM_KIND_LFUNC);
  mpw_alloc_kind(w, mpw_lua(0x1000, 3), 0x340, 48, LJM_KIND_UPVAL);
  mpw_alloc_kind(w, mpw_lua(0x1000, 9), 0x400, 64, LJM_KIND_TAB);
  mpw_alloc_kind(w, mpw_lua(0x1000, 4), 0x500, 64, LJM_KIND_TAB);
  mpw_alloc_kind(w, mpw_lua(0x1000, 8), 0x2000, 30, LJM_KIND_STR);
  mpw_alloc_kind(w, mpw_lua(0x1000, 8), 0x2040, 30, LJM_KIND_STR);
  mpw_alloc_kind(w, mpw_lua(0x1000, 10), 0x600, 64, LJM_KIND_TAB);
  mpw_alloc_kind(w, mpw_lua(0x1000, 10), 0x640, 64, LJM_KIND_TAB);
  mpw_alloc_kind(w, mpw_lua(0x1000, 5), 0x700, 24, LJM_KIND_STR);
  mpw_info(w, LJM_INFO_SNAPSHOT, LJM_SNAPSHOT_LATER);
  mpw_alloc_kind(w, mpw_internal(), 0x100, 64, LJM_KIND_TAB);
  mpw_graph(w, LJM_GRAPH_OBJ, 0, 0, 0, NULL);
  mpw_graph(w, LJM_GRAPH_ROOT, 0, 0x100, 0, "globals");
  mpw_graph(w, LJM_GRAPH_OBJ, 0, 0x100, 0, NULL);
  mpw_graph(w, LJM_GRAPH_FIELD, 0, 0x200, 0x700, "cache");
  mpw_graph(w, LJM_GRAPH_FIELD, 0, 0x300, 0x700, "handle");
  mpw_graph(w, LJM_GRAPH_FIELD, 0, 0x500, 0x700, "weak\033[2J");
  mpw_graph(w, LJM_GRAPH_OBJ, 0, 0x200, 0, NULL);
  mpw_graph(w, LJM_GRAPH_PART, 0, 0x240, 0, NULL);
  for (i = 0; i < 4; i++)
    mpw_graph(w, LJM_GRAPH_INDEX, (uint64_t)i + 1, 0x1000 + 0x40 * i, 0,
	      NULL);
  mpw_graph(w, LJM_GRAPH_OBJ, 0, 0x300, 0, NULL);
  mpw_graph(w, LJM_GRAPH_PROTO, 0, 0x1100, 0, NULL);
  mpw_graph(w, LJM_GRAPH_UPVAL, 0, 0x340, 0, "state");
  mpw_graph(w, LJM_GRAPH_OBJ, 0, 0x340, 0, NULL);
  mpw_graph(w, LJM_GRAPH_VALUE, 0, 0x400, 0, NULL);
  mpw_graph(w, LJM_GRAPH_OBJ, LJM_GRAPH_WEAKVALUES, 0x500, 0, NULL);
  mpw_graph(w, LJM_GRAPH_INDEX, 1, 0x2000, 0, NULL);
  mpw_graph(w, LJM_GRAPH_INDEX, 2, 0x2040, 0, NULL);
  mpw_graph(w, LJM_GRAPH_OBJ, 0, 0x600, 0, NULL);
  mpw_graph(w, LJM_GRAPH_FIELD, 0, 0x640, 0x700, "next");
  mpw_graph(w, LJM_GRAPH_OBJ, 0, 0x640, 0, NULL);
  mpw_graph(w, LJM_GRAPH_FIELD, 0, 0x600, 0x700, "next");
  mpw_info(w, LJM_INFO_SNAPSHOT, LJM_SNAPSHOT_END);
  mpw_epilogue(w);
}

struct scenario {
  const char *name;
  void (*write)(struct mpw *w);
};

static const struct scenario scenarios[] = {
  {"basic", scenario_basic},
  {"aliases", scenario_aliases},
  {"reuse", scenario_reuse},
  {"csyms", scenario_csyms},
  {"traces", scenario_traces},
  {"escapes", scenario_escapes},
  {"stacks", scenario_stacks},
  {"moments", scenario_moments},
  {"nodesfull", scenario_nodesfull},
  {"graph", scenario_graph},
};

#define NSCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

/* -- Benchmark stream ---------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
  /* xorshift64*: fast, and good enough for a mix of events. */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}

#define NPROTOS 400
#define NCSYMS 64
#define LIVE_SLOTS 32768	/* Live heap stays around this many blocks. */

struct block {
  uint64_t addr, size;
  struct mpw_loc at;	/* Where it was allocated. */
};

static uint64_t proto_addr(unsigned i)
{
  return 0x7f3a12000000ull + (uint64_t)i * 0x120;
}

static uint64_t pick_size(void)
{
  uint64_t r = rnd() % 100;
  if (r < 60)
    return 16 + (rnd() % 8) * 8;	/* Small strings, tables. */
  if (r < 90)
    return 64 + rnd() % 512;
  if (r < 99)
    return 1024 + rnd() % 16384;
  return 65536 + rnd() % (1 << 20);
}

/* An index in [0, n) skewed towards 0, as in real profiles where a few
** hot lines make most of the allocations: P(i) falls off like 1/sqrt(i). */
static unsigned skewed(unsigned n)
{
  double u = (double)(rnd() >> 11) / 9007199254740992.0;
  return (unsigned)(u * u * u * n);
}

static struct mpw_loc pick_loc(unsigned *ntraces)
{
  uint64_t r = rnd() % 100;
  if (r < 70) {
    unsigned p = skewed(NPROTOS);
    return mpw_lua(proto_addr(p), 1 + p * 3 + skewed(20));
  }
  if (r < 85)
    return mpw_internal();
  if (r < 95)
  {
    /* C functions have fixed addresses; a third are static functions
    ** inside a symbol's range (found by nearest-below lookup). */
    unsigned f = skewed(NCSYMS * 3);
    return mpw_c(0x55d0c0000000ull + (f / 3) * 0x400 + (f % 3) * 0x120);
  }
  return mpw_trace(1 + rnd() % *ntraces);
}

/*
** The line that grows or frees a block other than the one that made it:
** in real programs a table made at one line is filled at a line nearby
** (`local t = {}` then `t[i] = v`), so each site pairs with few others.
*/
static struct mpw_loc partner(struct mpw_loc at)
{
  if (at.src == LJM_SRC_LFUNC)
    at.line += 1;
  return at;
}

/*
** With stacks: allocations and reallocations carry a stack node, a leaf
** frame for their location above one of NCALLERS caller frames above a
** main chunk, announced on first use; frees keep their location, as the
** writer does.
*/
#define NCALLERS 4
#define STACK_SLOTS (1u << 20)	/* Over 4 times the stacks it makes. */

static int bench_stacks;

struct stack_slot {
  uint64_t loc, line;
  unsigned src, caller;
  uint64_t node;	/* 0: empty. */
};

static struct mpw_loc stack_of(struct mpw *w, struct mpw_loc at)
{
  static struct stack_slot slots[STACK_SLOTS];
  static uint64_t callers[NCALLERS];
  unsigned caller = (unsigned)(rnd() % NCALLERS), k;
  struct stack_slot *s;

  if (!bench_stacks || at.src == LJM_SRC_INTERNAL)
    return at;
  if (!callers[0]) {
    uint64_t main_node = mpw_node_lua(w, 0, proto_addr(0), 1, "");
    for (k = 0; k < NCALLERS; k++)
      callers[k] = mpw_node_lua(w, main_node, proto_addr(20 * k + 1),
				3 * (20 * k + 1) + 2, "handler");
  }
  k = (unsigned)((at.loc * 31 + at.line * 7 + at.src * 3 + caller) *
		 0x9e3779b97f4a7c15ull >> 40) & (STACK_SLOTS - 1);
  for (s = &slots[k]; s->node; s = &slots[k = (k + 1) & (STACK_SLOTS - 1)])
    if (s->loc == at.loc && s->line == at.line && s->src == at.src &&
	s->caller == caller)
      return mpw_stack(s->node);
  s->loc = at.loc;
  s->line = at.line;
  s->src = at.src;
  s->caller = caller;
  s->node = at.src == LJM_SRC_LFUNC ?
	    mpw_node_lua(w, callers[caller], at.loc, at.line, "f") :
	    at.src == LJM_SRC_CFUNC ? mpw_node_c(w, callers[caller], at.loc) :
	    mpw_node_trace(w, callers[caller], at.loc, 0);
  return mpw_stack(s->node);
}

static void bench(struct mpw *w, uint64_t events)
{
  static struct block live[LIVE_SLOTS];
  uint64_t next_addr = 0x5600a0000000ull;
  unsigned ntraces = 8;
  uint64_t i;
  unsigned j;
  char name[64];

  if (bench_stacks)
    mpw_symtab_begin_ext(w);
  else
    mpw_symtab_begin(w);
  for (j = 0; j < NPROTOS; j++) {
    snprintf(name, sizeof(name), "@/usr/share/app/module%u.lua", j / 20);
    mpw_symtab_lfunc(w, proto_addr(j), name, j % 20 ? j * 3 : 0);
  }
  for (j = 0; j < NCSYMS; j++) {
    snprintf(name, sizeof(name), "lib_function_%u", j);
    mpw_symtab_cfunc(w, 0x55d0c0000000ull + j * 0x400, name);
  }
  for (j = 1; j <= ntraces; j++)
    mpw_symtab_trace(w, j, proto_addr(j * 7), 1 + j * 21);
  mpw_symtab_end(w);

  for (i = 0; i < events; i++) {
    /* i counts memory events; symbol events come on top. */
    uint64_t r = rnd() % 1000;
    struct block *b = &live[rnd() % LIVE_SLOTS];
    struct mpw_loc at = pick_loc(&ntraces);

    if (r < 1) {	/* A new trace now and then, reusing numbers. */
      unsigned t = 1 + (unsigned)(rnd() % (ntraces + 1));
      if (t > ntraces && ntraces < 4000)
	ntraces = t;
      mpw_sym_trace(w, t > ntraces ? ntraces : t,
		    proto_addr((unsigned)(rnd() % NPROTOS)), 1 + rnd() % 300);
      i--;
      continue;
    }
    if (!b->addr) {
      b->addr = next_addr;
      b->size = pick_size();
      b->at = at;
      next_addr += (b->size + 31) & ~15ull;
      mpw_alloc(w, stack_of(w, at), b->addr, b->size);
    } else if (r < 550) {
      /* Most frees come from the garbage collector: internal. */
      mpw_free_ev(w, rnd() % 10 ? mpw_internal() : partner(b->at), b->addr,
		  b->size);
      b->addr = 0;
    } else if (r < 750) {
      /* Tables and buffers grow where they are filled: mostly the line
      ** that allocated them. */
      uint64_t nsize = pick_size(), naddr = next_addr;
      next_addr += (nsize + 31) & ~15ull;
      at = rnd() % 4 ? b->at : partner(b->at);
      mpw_realloc(w, stack_of(w, at), b->addr, b->size, naddr, nsize);
      b->addr = naddr;
      b->size = nsize;
      b->at = at;
    } else if (i + 1 < events) {
      /* Free and allocate again: keeps the mix close to 45/40/15. */
      mpw_free_ev(w, mpw_internal(), b->addr, b->size);
      b->size = pick_size();
      b->addr = next_addr;
      b->at = pick_loc(&ntraces);
      next_addr += (b->size + 31) & ~15ull;
      mpw_alloc(w, stack_of(w, b->at), b->addr, b->size);
      i++;
    } else {
      mpw_free_ev(w, mpw_internal(), b->addr, b->size);
      b->addr = 0;
    }
    if (next_addr > 0x5700a0000000ull)
      next_addr = 0x5600a0000000ull;	/* Addresses get reused. */
  }
  mpw_epilogue(w);
}

int main(int argc, char **argv)
{
  static char outbuf[1 << 20];
  struct mpw w;
  size_t i;

  setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
  mpw_init_file(&w, stdout);
  if (argc >= 3 && (!strcmp(argv[1], "bench") ||
		    !strcmp(argv[1], "bench-stacks"))) {
    bench_stacks = !strcmp(argv[1], "bench-stacks");
    rng_state = argc >= 4 ? strtoull(argv[3], NULL, 0) | 1 : 88172645463325252ull;
    bench(&w, strtoull(argv[2], NULL, 0));
    return fflush(stdout) ? 1 : 0;
  }
  if (argc == 3 && !strcmp(argv[1], "scenario")) {
    for (i = 0; i < NSCENARIOS; i++)
      if (!strcmp(argv[2], scenarios[i].name)) {
	scenarios[i].write(&w);
	return fflush(stdout) ? 1 : 0;
      }
    fprintf(stderr, "gen_stream: unknown scenario '%s'\n", argv[2]);
    return 2;
  }
  if (argc == 2 && !strcmp(argv[1], "list")) {
    for (i = 0; i < NSCENARIOS; i++)
      puts(scenarios[i].name);
    return 0;
  }
  fputs("usage: gen_stream bench|bench-stacks EVENTS [SEED] | scenario NAME | "
	"list\n", stderr);
  return 2;
}
