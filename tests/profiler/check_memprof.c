/*
** Tests of the in-VM memory profiler, driving the patched VM directly
** (linked from its PIC objects) and reading the stream back with a
** minimal reader. Every test asserts exact counts at exact locations.
**
** Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
*/

#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lua.h"
#include "lauxlib.h"
#include "lualib.h"
#include "luajit.h"
#include "ljmprof.h"
#include "lj_memprof_format.h"

#include "mpread.h"
#include "mp_reader.h"

/* -- Helpers -------------------------------------------------------------- */

/* An in-memory writer that can be told to fail. */
typedef struct membuf {
  unsigned char *data;
  size_t len, cap;
  int calls;			/* Writer calls so far. */
  int failat;			/* Fail from this call on (0: never). */
} membuf;

static int mem_write(void *ctx, const void *data, size_t len)
{
  membuf *m = ctx;
  m->calls++;
  if (m->failat && m->calls >= m->failat)
    return EIO;
  if (m->len + len > m->cap) {
    m->cap = (m->len + len) * 2;
    m->data = realloc(m->data, m->cap);
  }
  memcpy(m->data + m->len, data, len);
  m->len += len;
  return 0;
}

/*
** The VM seeds its string hashes from getrandom: a fixed seed makes the
** collector's pace repeatable from one VM to the next (link with
** --wrap=syscall; LuaJIT calls syscall() for getrandom). Every other
** call goes through with all six arguments: the 32-bit writer probes
** memory with a futex wait, whose timeout is the fourth.
*/
static int fixed_seed;
long __real_syscall(long no, ...);
long __wrap_syscall(long no, ...);
long __wrap_syscall(long no, ...)
{
  va_list ap;
  long a[6];
  int i;
  va_start(ap, no);
  for (i = 0; i < 6; i++)
    a[i] = va_arg(ap, long);
  va_end(ap);
  if (no == SYS_getrandom && fixed_seed) {
    memset((void *)a[0], 0x5a, (size_t)a[1]);
    return a[1];
  }
  return __real_syscall(no, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/*
** A new VM whose string table is already big, so that the counts below
** do not depend on when the table grows (its growth is charged to the
** line that interns the string that makes it grow).
*/
static lua_State *newvm(void)
{
  lua_State *L = luaL_newstate();
  ck_assert_ptr_nonnull(L);
  luaL_openlibs(L);
  if (luaL_dostring(L, "WARM = {} for i = 1, 40000 do WARM[i] = 'w' .. i end"
		       " string.rep('x', 16384)"))
    ck_abort_msg("warm-up: %s", lua_tostring(L, -1));
  return L;
}

/*
** The stack depth of the profilers the tests start: 0 in the "core"
** case, the default in "stacks", which runs the same tests on stack
** streams read by their leaves (mpr_leafnames): a stack's leaf must be
** charged where the version-3 location is.
*/
static int stack_depth;

static void stacks_on(void)
{
  stack_depth = LJMPROF_STACK_DEPTH_DEFAULT;
  mpr_leafnames = 1;
}

static void start(lua_State *L, membuf *m, size_t bufsize)
{
  ljmprof_opt opt;
  memset(&opt, 0, sizeof(opt));
  opt.stack_depth = stack_depth;
  opt.writer = mem_write;
  opt.ctx = m;
  opt.bufsize = bufsize;
  ck_assert_int_eq(ljmprof_start(L, &opt), LJMPROF_OK);
}

/* Run a chunk under a name; the chunk must not fail. */
static void run(lua_State *L, const char *name, const char *code)
{
  if (luaL_loadbuffer(L, code, strlen(code), name) || lua_pcall(L, 0, 0, 0))
    ck_abort_msg("%s: %s", name, lua_tostring(L, -1));
}

/* Stop, parse, and check that the stream is complete and resolvable. */
static void finish(lua_State *L, membuf *m, mpr_stats *st)
{
  char err[256];
  ck_assert_int_eq(ljmprof_stop(L), LJMPROF_OK);
  ck_assert_int_eq(mpr_parse(m->data, m->len, st, err, sizeof(err)), 0);
  ck_assert_int_eq(st->complete, 1);
  if (st->unresolved) mpr_dump(st);
  ck_assert_int_eq(st->unresolved, 0);
  free(m->data);
  memset(m, 0, sizeof(*m));
}

#define ck_count(st, ev, loc, n) do { \
  unsigned long c_ = mpr_count((st), (ev), (loc)); \
  if (c_ != (unsigned long)(n)) mpr_dump(st); \
  ck_assert_msg(c_ == (unsigned long)(n), "%s at %s: %lu, expected %lu", \
		#ev, (loc), c_, (unsigned long)(n)); \
} while (0)

/* -- Attribution ------------------------------------------------------------ */

static const char t20_code[] =
  "local function f(n)\n"				/* 1 */
  "  local t = {0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0}\n" /* 2 */
  "  for i = 1, 20 do\n"				/* 3 */
  "    t[i] = 's' .. (i + n)\n"				/* 4 */
  "  end\n"						/* 5 */
  "  return t\n"					/* 6 */
  "end\n"						/* 7 */
  "f(1000)\n"		/* 8: warm up the VM's temporary buffer. */
  "T = f(2000)\n"					/* 9 */
  "T = nil\n"						/* 10 */
  "collectgarbage()\n";					/* 11 */

START_TEST(table_of_strings)
{
  lua_State *L = newvm();
  membuf m = {0};
  mpr_stats st;
  luaL_loadbuffer(L, t20_code, sizeof(t20_code) - 1, "@t20.lua");
  start(L, &m, 0);
  ck_assert_int_eq(lua_pcall(L, 0, 0, 0), 0);
  ljmprof_running(L);
  finish(L, &m, &st);
  /* Two calls of f: 20 new strings each, at line 4. */
  ck_count(&st, MPR_ALLOC, "@t20.lua:4", 40);
  ck_count(&st, MPR_REALLOC, "@t20.lua:4", 0);
  /* Each table: the GCtab and its array part (too big to colocate). */
  ck_count(&st, MPR_ALLOC, "@t20.lua:2", 4);
  /* The frees of the collector are internal. */
  ck_assert_uint_eq(mpr_count_prefix(&st, MPR_FREE, "@t20.lua"), 0);
  ck_assert_uint_ge(mpr_count(&st, MPR_FREE, "INTERNAL"), 44);
  mpr_free(&st);
  lua_close(L);
}
END_TEST

/* FORMAT.md section 5, loaded from a string while profiling. */
static const char strchunk[] =
  "local M = {\n"
  "  tmp = string.rep(\"tmpstr\", 100) -- line 2\n"
  "}\n"
  "function M.payload()\n"
  "  local _ = string.rep(\"payloadstr\", 100) -- line 6\n"
  "end\n"
  "return M\n";

static void check_strchunk(const char *how, const char *prefix, int nline2)
{
  lua_State *L = newvm();
  membuf m = {0};
  mpr_stats st;
  char loc[600], name[512];
  lua_pushstring(L, strchunk);
  lua_setglobal(L, "CODE");
  run(L, "=setup",
      "local dir = os.getenv('TMPDIR') or '/tmp'\n"
      "DIR = dir .. '/ljmprof-check-' .. tostring(os.time()) .. '-' .. "
      "  tostring({}):sub(8)\n"
      "assert(os.execute('mkdir -p ' .. DIR) == 0)\n"
      "local f = assert(io.open(DIR .. '/strchunk.lua', 'w'))\n"
      "f:write(CODE) f:close()\n"
      "package.path = DIR .. '/?.lua'\n"
      "BC = string.dump(assert(load(CODE, 'strchunk')))\n"
      "string.rep('x', 4096)\n");  /* Warm up the temporary buffer. */
  lua_getglobal(L, "DIR");
  snprintf(name, sizeof(name), "%s%s", strncmp(prefix, "@DIR", 4) ? "" : "@",
	   strncmp(prefix, "@DIR", 4) ? prefix : lua_tostring(L, -1));
  if (!strncmp(prefix, "@DIR", 4))
    strncat(name, prefix + 4, sizeof(name) - strlen(name) - 1);
  lua_pop(L, 1);
  start(L, &m, 0);
  run(L, "=main", how);
  finish(L, &m, &st);
  run(L, "=cleanup", "os.remove(DIR .. '/strchunk.lua') os.remove(DIR)");
  snprintf(loc, sizeof(loc), "%s:2", name);
  ck_count(&st, MPR_ALLOC, loc, nline2);
  snprintf(loc, sizeof(loc), "%s:6", name);
  ck_count(&st, MPR_ALLOC, loc, 1);
  mpr_free(&st);
  lua_close(L);
}

START_TEST(worked_example_load)
{
  check_strchunk("local M = load(CODE, 'strchunk')() M.payload()", "strchunk", 1);
}
END_TEST

START_TEST(worked_example_loadfile)
{
  check_strchunk("local M = loadfile(DIR .. '/strchunk.lua')() M.payload()",
		 "@DIR/strchunk.lua", 1);
}
END_TEST

START_TEST(worked_example_require)
{
  check_strchunk("local M = require('strchunk') M.payload()",
		 "@DIR/strchunk.lua", 1);
}
END_TEST

START_TEST(worked_example_dump)
{
  /*
  ** A dump drops the constructor template's key "tmp" (its value is not a
  ** constant), so line 2 also allocates the table's hash part.
  */
  check_strchunk("local M = load(BC, 'ignored')() M.payload()", "strchunk", 2);
}
END_TEST

/* A lua_CFunction that allocates: a table and a string. */
static int cf_alloc(lua_State *L)
{
  lua_createtable(L, 0, 0);
  lua_pushliteral(L, "a string made by cf_alloc, unique in this test");
  lua_setfield(L, -2, "s");
  return 1;
}

START_TEST(builtin_and_cfunction)
{
  lua_State *L = newvm();
  membuf m = {0};
  mpr_stats st;
  lua_pushcfunction(L, cf_alloc);
  lua_setglobal(L, "cf_alloc");
  run(L, "=warm", "string.rep('x', 8192)");
  start(L, &m, 0);
  run(L, "@b.lua",
      "local s = string.rep('ab', 1000)\n"	/* 1: built-in: this line. */
      "local t = cf_alloc()\n"			/* 2: the C function. */
      "local u = string.format('%s-%d', s, 7)\n" /* 3 */
      "local ok, v = pcall(string.rep, 'cd', 999)\n"); /* 4: via pcall. */
  /* A built-in called from C: charged to the built-in itself. */
  lua_getglobal(L, "string");
  lua_getfield(L, -1, "rep");
  lua_pushliteral(L, "ef");
  lua_pushinteger(L, 998);
  lua_call(L, 2, 1);
  lua_pop(L, 2);
  finish(L, &m, &st);
  ck_count(&st, MPR_ALLOC, "@b.lua:1", 1);
  /* Table, its hash part for "s", and the string. */
  ck_count(&st, MPR_ALLOC, "cf_alloc", 3);
  ck_count(&st, MPR_ALLOC, "@b.lua:2", 0);
  ck_count(&st, MPR_ALLOC, "@b.lua:3", 1);
  ck_count(&st, MPR_ALLOC, "@b.lua:4", 1);
  ck_count(&st, MPR_ALLOC, "lj_cf_string_rep", 1);
  mpr_free(&st);
  lua_close(L);
}
END_TEST

START_TEST(cmodule_required_midrun)
{
  lua_State *L = newvm();
  membuf m = {0};
  mpr_stats st;
  const char *bd = getenv("top_builddir");
  char code[1024];
  snprintf(code, sizeof(code),
	   "package.cpath = '%s/tests/profiler/?.so'\n"
	   "local cmod = require('cmod')\n"
	   "T = cmod.alloc()\n", bd ? bd : ".");
  start(L, &m, 0);
  run(L, "@c.lua", code);
  finish(L, &m, &st);
  /* A table with 40 array slots: the GCtab and the array part. */
  ck_count(&st, MPR_ALLOC, "cmod_alloc", 2);
  /* cmod.so is stripped: its .dynsym names it, in a symbol event. */
  ck_assert_uint_eq(mpr_csym_count(&st, "cmod_alloc"), 1);
  ck_assert_uint_ge(st.symevents, 1);
  /* Only the C functions that events name: none in the start table,
  ** nothing of libc's. */
  ck_assert_uint_eq(st.startsyms[1], 0);
  ck_assert_uint_eq(mpr_csym_count(&st, "malloc"), 0);
  mpr_free(&st);
  lua_close(L);
}
END_TEST

/* A C function is named once, in a symbol event before its first event;
** the start table has no C symbols and the stream names nothing else. */
START_TEST(cfunction_named_when_used)
{
  lua_State *L = newvm();
  membuf m = {0};
  mpr_stats st;
  lua_pushcfunction(L, cf_alloc);
  lua_setglobal(L, "cf_alloc");
  start(L, &m, 0);
  run(L, "@n.lua", "T = {}\nfor i = 1, 100 do T[i] = cf_alloc() end\n");
  finish(L, &m, &st);
  /* A table and its hash part per call, the value and key strings once. */
  ck_count(&st, MPR_ALLOC, "cf_alloc", 202);
  ck_assert_uint_eq(st.startsyms[1], 0);
  ck_assert_uint_eq(mpr_csym_count(&st, "cf_alloc"), 1);
  /* With stacks, the start snapshot names the C functions it has. */
  if (st.snaps)
    ck_assert_uint_le(st.ncsyms, 1 + st.snapkinds[LJM_KIND_CFUNC]);
  else
    ck_assert_uint_eq(st.ncsyms, 1);
  mpr_free(&st);
  lua_close(L);
}
END_TEST

/* -- Coroutines, stacks, errors ---------------------------------------------- */

START_TEST(coroutine)
{
  lua_State *L = newvm();
  membuf m = {0};
  mpr_stats st;
  start(L, &m, 0);
  run(L, "@co.lua",
      "local co = coroutine.wrap(function()\n"	/* 1 */
      "  local a = {}\n"				/* 2 */
      "  coroutine.yield()\n"			/* 3 */
      "  local b = {}\n"				/* 4 */
      "end)\n"					/* 5 */
      "co()\n"					/* 6 */
      "local c = {}\n"				/* 7 */
      "co()\n"					/* 8 */
      "local d = {}\n");				/* 9 */
  finish(L, &m, &st);
  ck_count(&st, MPR_ALLOC, "@co.lua:2", 1);
  ck_count(&st, MPR_ALLOC, "@co.lua:4", 1);
  ck_count(&st, MPR_ALLOC, "@co.lua:7", 1);
  ck_count(&st, MPR_ALLOC, "@co.lua:9", 1);
  mpr_free(&st);
  lua_close(L);
}
END_TEST

/* Resume a coroutine from C, then allocate: charged to this C function. */
static int cf_resume(lua_State *L)
{
  lua_State *co = lua_tothread(L, 1);
  lua_resume(co, 0);
  lua_createtable(L, 0, 0);
  return 1;
}

START_TEST(coroutine_resumed_from_c)
{
  lua_State *L = newvm();
  membuf m = {0};
  mpr_stats st;
  lua_pushcfunction(L, cf_resume);
  lua_setglobal(L, "cf_resume");
  start(L, &m, 0);
  run(L, "@cr.lua",
      "local co = coroutine.create(function()\n"	/* 1 */
      "  local a = {}\n"				/* 2 */
      "  coroutine.yield()\n"			/* 3 */
      "end)\n"					/* 4 */
      "local t = cf_resume(co)\n");		/* 5 */
  finish(L, &m, &st);
  ck_count(&st, MPR_ALLOC, "@cr.lua:2", 1);
  ck_count(&st, MPR_ALLOC, "cf_resume", 1);
  ck_count(&st, MPR_ALLOC, "@cr.lua:3", 0);
  mpr_free(&st);
  lua_close(L);
}
END_TEST

/* Run a full GC with finalizers on the main thread from a coroutine. */
static lua_State *gc_mainL;
static int cf_gc(lua_State *L)
{
  lua_gc(gc_mainL, LUA_GCCOLLECT, 0);
  lua_createtable(L, 0, 0);
  return 1;
}

START_TEST(finalizer_on_another_thread)
{
  lua_State *L = newvm();
  membuf m = {0};
  mpr_stats st;
  gc_mainL = L;
  lua_pushcfunction(L, cf_gc);
  lua_setglobal(L, "cf_gc");
  start(L, &m, 0);
  run(L, "@fin.lua",
      "local p = newproxy(true)\n"				/* 1 */
      "getmetatable(p).__gc = function() local x = {} end\n"	/* 2 */
      "p = nil\n"						/* 3 */
      "local co = coroutine.wrap(function() return cf_gc() end)\n" /* 4 */
      "local t = co()\n");					/* 5 */
  finish(L, &m, &st);
  /* The closure, the metatable's hash part, the table in the finalizer. */
  ck_count(&st, MPR_ALLOC, "@fin.lua:2", 3);
  ck_count(&st, MPR_ALLOC, "cf_gc", 1);	      /* After it, in the coroutine. */
  ck_count(&st, MPR_ALLOC, "@fin.lua:5", 0);
  mpr_free(&st);
  lua_close(L);
}
END_TEST

START_TEST(stack_resize_is_internal)
{
  lua_State *L = newvm();
  membuf m = {0};
  mpr_stats st;
  start(L, &m, 0);
  run(L, "@stk.lua",
      "local function rec(n) if n == 0 then return 0 end return 1 + rec(n - 1) end\n"
      "assert(rec(20000) == 20000)\n");
  finish(L, &m, &st);
  ck_assert_uint_eq(mpr_count_prefix(&st, MPR_REALLOC, "@stk.lua"), 0);
  ck_assert_uint_ge(mpr_count(&st, MPR_REALLOC, "INTERNAL"), 5);
  mpr_free(&st);
  lua_close(L);
}
END_TEST

START_TEST(error_caught_by_pcall)
{
  lua_State *L = newvm();
  membuf m = {0};
  mpr_stats st;
  start(L, &m, 0);
  run(L, "@err.lua",
      "local function heavy()\n"		/* 1 */
      "  for i = 1, 10 do local x = {} end\n"	/* 2 */
      "  error({})\n"				/* 3 */
      "end\n"					/* 4 */
      "local ok, e = pcall(heavy)\n"		/* 5 */
      "assert(not ok)\n"				/* 6 */
      "local after = {}\n");			/* 7 */
  finish(L, &m, &st);
  ck_count(&st, MPR_ALLOC, "@err.lua:2", 10);
  ck_count(&st, MPR_ALLOC, "@err.lua:3", 1);
  ck_count(&st, MPR_ALLOC, "@err.lua:7", 1);
  mpr_free(&st);
  lua_close(L);
}
END_TEST

/*
** coroutine.resume of a dead or running coroutine writes false over its own
** function slot before it makes the error message (issue 11, defect 1):
** the profiler must not follow that slot. The message is charged to the
** line that called resume. JIT on and off. (No literal of the messages
** in the chunk: it would intern them before the profiler starts.)
*/
static void check_resume_errors(int jit)
{
  lua_State *L = newvm();
  membuf m = {0};
  mpr_stats st;
  luaJIT_setmode(L, 0, LUAJIT_MODE_ENGINE | (jit ? LUAJIT_MODE_ON :
							LUAJIT_MODE_OFF));
  start(L, &m, 0);
  run(L, "@res.lua",
      "local co = coroutine.create(function() end)\n"		/* 1 */
      "coroutine.resume(co)\n"					/* 2 */
      "local ok, e = coroutine.resume(co)\n"			/* 3 */
      "assert(not ok and e:find('dead'))\n"			/* 4 */
      "local co2\n"						/* 5 */
      "co2 = coroutine.create(function()\n"			/* 6 */
      "  local ok, e = coroutine.resume(co2) return ok, e\n"	/* 7 */
      "end)\n"							/* 8 */
      "local ok2, ok3, e2 = coroutine.resume(co2)\n"		/* 9 */
      "assert(ok2 and not ok3 and e2:find('running'))\n");
  finish(L, &m, &st);
  ck_count(&st, MPR_ALLOC, "@res.lua:3", 1);	/* The message. */
  ck_count(&st, MPR_ALLOC, "@res.lua:7", 1);	/* The message, in co2. */
  mpr_free(&st);
  lua_close(L);
}

START_TEST(resume_dead_or_running_jit_on)
{
  check_resume_errors(1);
}
END_TEST

START_TEST(resume_dead_or_running_jit_off)
{
  check_resume_errors(0);
}
END_TEST

/*
** An error raised in another thread that a C function ran with lua_call
** unwinds across that C function to a pcall (issue 11, defect 3): what
** runs next is charged to what runs, not to the thread the error left.
*/
static int cf_callerr(lua_State *L)
{
  lua_State *co = lua_newthread(L);
  lua_getglobal(co, "luaerr");
  lua_call(co, 0, 0);
  return 0;
}

static int cf_tables(lua_State *L)
{
  int i;
  for (i = 0; i < 10; i++) {
    lua_createtable(L, 0, 0);
    lua_pop(L, 1);
  }
  return 0;
}

START_TEST(error_across_lua_call_on_thread)
{
  lua_State *L = newvm();
  membuf m = {0};
  mpr_stats st;
  lua_pushcfunction(L, cf_callerr);
  lua_setglobal(L, "cf_callerr");
  lua_pushcfunction(L, cf_tables);
  lua_setglobal(L, "cf_tables");
  start(L, &m, 0);
  run(L, "@uw.lua",
      "function luaerr() error('raised in another thread') end\n" /* 1 */
      "for i = 1, 2 do\n"					/* 2 */
      "  assert(not pcall(cf_callerr))\n"			/* 3 */
      "  cf_tables()\n"						/* 4 */
      "end\n");							/* 5 */
  finish(L, &m, &st);
  ck_count(&st, MPR_ALLOC, "cf_tables", 20);
  mpr_free(&st);
  lua_close(L);
}
END_TEST

/*
** A C module that keeps the allocator lua_getallocf gave it while
** profiling, and calls it after the profiler stopped (issue 11, defect 2).
** Without a profiler the pair stays valid for the life of the VM; with
** one it must too. Freed memory is filled (M_PERTURB), so that a use of
** freed profiler state does not go unnoticed.
*/
static lua_Alloc kept_f;
static void *kept_ud, *kept_blk;

static int cf_grab(lua_State *L)
{
  kept_f = lua_getallocf(L, &kept_ud);
  kept_blk = kept_f(kept_ud, NULL, 0, 64);
  ck_assert_ptr_nonnull(kept_blk);
  return 0;
}

static int cf_release(lua_State *L)
{
  (void)L;
  kept_f(kept_ud, kept_blk, 64, 0);
  kept_blk = NULL;
  return 0;
}

START_TEST(allocator_kept_by_module)
{
  lua_State *L;
  membuf m = {0};
  mpr_stats st;
  int round;
  mallopt(M_PERTURB, 0xa5);
  L = newvm();
  lua_pushcfunction(L, cf_grab);
  lua_setglobal(L, "cf_grab");
  lua_pushcfunction(L, cf_release);
  lua_setglobal(L, "cf_release");
  for (round = 0; round < 2; round++) {
    start(L, &m, 0);
    run(L, "@kept.lua", "cf_grab()\n");
    finish(L, &m, &st);
    ck_count(&st, MPR_ALLOC, "cf_grab", 1);
    mpr_free(&st);
    /* After stop, while the VM runs on: and again with a new profiler. */
    run(L, "=churn", "for i = 1, 1000 do local t = {i} end");
    run(L, "=after", "cf_release()\n");
  }
  /* A profiler running while the kept pair of an older one is used. */
  run(L, "=grab", "cf_grab()");
  start(L, &m, 0);
  run(L, "@late.lua", "cf_release()\nlocal t = {}\n");
  finish(L, &m, &st);
  ck_count(&st, MPR_ALLOC, "@late.lua:2", 1);
  mpr_free(&st);
  lua_close(L);
  mallopt(M_PERTURB, 0);
}
END_TEST

/* -- JIT ------------------------------------------------------------------- */

START_TEST(jit_trace)
{
  lua_State *L = newvm();
  membuf m = {0};
  mpr_stats st;
  unsigned long interp, traced;
  size_t i;
  int found = 0;
  run(L, "=setup", "jit.on() jit.flush() jit.opt.start('hotloop=5')\n"
		   "T = require('table.new')(200, 0)");
  start(L, &m, 0);
  run(L, "@jit.lua",
      "local t = T\n"				/* 1 */
      "for i = 1, 200 do\n"			/* 2 */
      "  t[i] = {}\n"				/* 3 */
      "end\n");					/* 4 */
  finish(L, &m, &st);
  interp = mpr_count(&st, MPR_ALLOC, "@jit.lua:3");
  traced = mpr_count_prefix(&st, MPR_ALLOC, "TRACE [");
  if (interp + traced != 200 || traced != 0)
    mpr_dump(&st);
  ck_assert_uint_eq(interp + traced, 200);
  ck_assert_uint_gt(interp, 0);
  ck_assert_uint_eq(traced, 0);  /* The trace's events have its line. */
  for (i = 0; i < st.ntraces; i++)
    if (!strcmp(st.traces[i], "TRACE [1] started at @jit.lua:2")) found = 1;
  ck_assert_msg(found, "no symbol for the loop's trace");
  ck_count(&st, MPR_ALLOC, "TRACE [1] started at @jit.lua:2", traced);
  ck_assert_uint_eq(st.sites > 0, !!stack_depth);
  mpr_free(&st);
  lua_close(L);
}
END_TEST

/*
** A lua_CFunction called from a loop that runs compiled (the trace ends
** at the call and the next one starts after it: trace stitching): its
** allocations are its own, never the trace's (issue 11, defect 8).
*/
START_TEST(cfunction_called_from_trace)
{
  lua_State *L = newvm();
  membuf m = {0};
  mpr_stats st;
  lua_pushcfunction(L, cf_tables);
  lua_setglobal(L, "cf_tables");
  run(L, "=setup", "jit.on() jit.flush() jit.opt.start('hotloop=5')");
  start(L, &m, 0);
  run(L, "@stitch.lua",
      "local f, n = cf_tables, 0\n"		/* 1 */
      "for i = 1, 300 do\n"			/* 2 */
      "  f()\n"					/* 3 */
      "  n = n + i\n"				/* 4 */
      "end\n");					/* 5 */
  finish(L, &m, &st);
  ck_count(&st, MPR_ALLOC, "cf_tables", 3000);
  ck_assert_uint_eq(mpr_count_prefix(&st, MPR_ALLOC, "TRACE ["), 0);
  ck_assert_uint_gt(st.ntraces, 0);  /* The loop did run compiled. */
  mpr_free(&st);
  lua_close(L);
}
END_TEST

START_TEST(trace_alive_at_start)
{
  lua_State *L = newvm();
  membuf m = {0};
  mpr_stats st;
  run(L, "=setup", "jit.on() jit.flush() jit.opt.start('hotloop=5')\n"
		   "T = require('table.new')(200, 0)\n"
		   "F = load('local t = T\\n"
		   "for i = 1, 100 do t[i] = {} end', '@pre.lua')\n"
		   "F()");
  start(L, &m, 0);
  run(L, "=again", "F()");
  finish(L, &m, &st);
  ck_assert_uint_ge(st.startsyms[2], 1);
  ck_assert_uint_eq(st.ntraces, 1);
  ck_assert_str_eq(st.traces[0], "TRACE [1] started at @pre.lua:2");
  /* The trace runs all 100 iterations, but it may exit once at the end;
  ** they have their line, with stacks or without. */
  ck_count(&st, MPR_ALLOC, "@pre.lua:2", 100);
  mpr_free(&st);
  lua_close(L);
}
END_TEST

/* -- Bytecode without line information ------------------------------------ */

/*
** string.dump(f, true) and luajit -b strip the line information: every
** instruction is at line 0. The prototype still runs, has its chunk name,
** and is charged at line 0, as the reference writer does (issue 23, item
** 4), for its own allocations and for a built-in it calls; a trace started
** in it is named at line 0.
*/
static void check_stripped(int jit)
{
  lua_State *L = newvm();
  membuf m = {0};
  mpr_stats st;
  unsigned long interp, traced;
  size_t i;
  int found = 0;
  run(L, "=setup",
      "T = require('table.new')(5000, 0)\n"
      "TABLES = string.dump(assert(load('local t, n = ...\\n"
      "  for i = 1, n do t[i] = {} end', '@tables.lua')), true)\n"
      "REP = string.dump(assert(load('local n = ...\\n"
      "  local s = string.rep(\"ab\", n) return s', '@rep.lua')), true)\n"
      "string.rep('x', 8192)");  /* Warm up the temporary buffer. */
  run(L, "=jit", jit ? "jit.on() jit.flush() jit.opt.start('hotloop=5')"
		     : "jit.off() jit.flush()");
  start(L, &m, 0);
  /* Loaded while profiling: their symbol events come first. */
  run(L, "=main", "load(TABLES, '@stripped.lua')(T, 5000)\n"
		  "S = load(REP, '@rep.lua')(1234)");
  finish(L, &m, &st);
  interp = mpr_count(&st, MPR_ALLOC, "@stripped.lua:0");
  traced = mpr_count(&st, MPR_ALLOC, "TRACE [1] started at @stripped.lua:0");
  if (interp + traced != 5000) mpr_dump(&st);
  ck_assert_uint_eq(interp + traced, 5000);
  if (jit) {
    ck_assert_uint_eq(traced, 0);  /* Its line, 0, the interpreter's. */
    for (i = 0; i < st.ntraces; i++)
      if (!strcmp(st.traces[i], "TRACE [1] started at @stripped.lua:0"))
	found = 1;
    ck_assert_msg(found, "no symbol for the loop's trace");
  } else {
    ck_assert_uint_eq(st.ntraces, 0);
  }
  /* The built-in's string, charged to the stripped line that called it. */
  ck_count(&st, MPR_ALLOC, "@rep.lua:0", 1);
  mpr_free(&st);
  lua_close(L);
}

START_TEST(stripped_bytecode_jit_off)
{
  check_stripped(0);
}
END_TEST

START_TEST(stripped_bytecode_jit_on)
{
  check_stripped(1);
}
END_TEST

/*
** A stripped prototype alive when profiling starts: in the start table,
** with its chunk name and first line 0.
*/
START_TEST(stripped_bytecode_loaded_before)
{
  lua_State *L = newvm();
  membuf m = {0};
  mpr_stats st;
  run(L, "=setup", "jit.off()\n"
		   "F = load(string.dump(assert(load('local t = {}\\n"
		   "  for i = 1, 100 do t[i] = {} end return t', '@src.lua')),"
		   " true), '@before.lua')");
  start(L, &m, 0);
  run(L, "=main", "F()");
  finish(L, &m, &st);
  /* 100 tables, t itself, and the first array part of t (then grown). */
  ck_count(&st, MPR_ALLOC, "@before.lua:0", 102);
  ck_assert_uint_ge(mpr_count(&st, MPR_REALLOC, "@before.lua:0"), 1);
  mpr_free(&st);
  lua_close(L);
}
END_TEST

/* -- Symbols that change while profiling ---------------------------------- */

/*
** Chunks loaded one after another, each collected before the next: the
** allocator gives a freed prototype's address to a new one, and each
** chunk's allocation is charged to its own name. sample: the mean, 0 for
** every event; fmt: the location of chunk i as mpr names it.
*/
static void proto_reuse(size_t sample, const char *fmt)
{
  lua_State *L = newvm();
  membuf m = {0};
  mpr_stats st;
  ljmprof_opt opt;
  char loc[64];
  int i;
  run(L, "=setup", "jit.off()");
  memset(&opt, 0, sizeof(opt));
  opt.stack_depth = stack_depth;
  opt.writer = mem_write;
  opt.ctx = &m;
  opt.sample = sample;
  opt.seed = 5;
  ck_assert_int_eq(ljmprof_start(L, &opt), LJMPROF_OK);
  run(L, "=reuse",
      "for i = 1, 50 do\n"
      "  local f = load('local t = {}\\nreturn t', 'chunk' .. i)\n"
      "  f()\n"
      "  f = nil\n"
      "  collectgarbage()\n"
      "end\n");
  finish(L, &m, &st);
  for (i = 1; i <= 50; i++) {
    snprintf(loc, sizeof(loc), fmt, i);
    ck_count(&st, MPR_ALLOC, loc, 1);
  }
  /* The allocator did give a freed prototype's address to a new one. */
  ck_assert_uint_ge(st.redefined, 1);
  mpr_free(&st);
  lua_close(L);
}

START_TEST(proto_address_reuse)
{
  proto_reuse(0, "chunk%d:1");
}
END_TEST

/*
** The same, sampled: each chunk is announced when its allocation is
** sampled (every one, at a mean of 1 byte), and a new prototype at an
** announced one's address is announced again (mp_ptmark lets a new
** prototype at an address never announced skip that bookkeeping).
** Sampling writes call stacks.
*/
START_TEST(sampled_proto_address_reuse)
{
  proto_reuse(1, "f(chunk%d:1) < (=reuse:3)");
}
END_TEST

/* -- Several VMs ---------------------------------------------------------- */

typedef struct vmjob {
  const char *name;		/* Chunk name. */
  membuf m;
  mpr_stats st;
  int ok;
} vmjob;

/*
** ljmprof_seal from another thread while the VM's thread allocates (the
** end of a process whose server threads still run): the stream ends at
** an event boundary, the VM runs on unrecorded, nothing is freed under
** its feet, and stopping it afterwards only restores the allocator.
*/
static void *busy_vm(void *arg)
{
  lua_State *L = arg;
  run(L, "@busy.lua", "for i = 1, 3000000 do local t = {i} end\n");
  return NULL;
}

START_TEST(seal_from_another_thread)
{
  static const unsigned char epilogue = 0x80;
  lua_State *L = newvm();
  membuf m = {0};
  mpr_stats st;
  pthread_t t;
  char err[256];
  int r = LJMPROF_ERRBUSY, i;
  start(L, &m, 4096);
  ck_assert_int_eq(pthread_create(&t, NULL, busy_vm, L), 0);
  usleep(20000);
  for (i = 0; i < 1000 && (r = ljmprof_seal(L)) == LJMPROF_ERRBUSY; i++)
    usleep(100);
  ck_assert_int_eq(r, LJMPROF_OK);
  mem_write(&m, &epilogue, 1);  /* The caller ends the stream. */
  ck_assert_int_eq(mpr_parse(m.data, m.len, &st, err, sizeof(err)), 0);
  ck_assert_int_eq(st.complete, 1);
  ck_assert_uint_gt(mpr_count(&st, MPR_ALLOC, "@busy.lua:1"), 0);
  ck_assert_int_eq(pthread_join(t, NULL), 0);
  ck_assert_int_eq(ljmprof_running(L), 1);
  ck_assert_int_eq(ljmprof_stop(L), LJMPROF_OK);
  ck_assert_int_eq(ljmprof_running(L), 0);
  mpr_free(&st);
  free(m.data);
  lua_close(L);
}
END_TEST

static void *vm_thread(void *arg)
{
  vmjob *j = arg;
  lua_State *L = luaL_newstate();
  ljmprof_opt opt;
  char err[256];
  const char code[] =
    "local t = T\n"
    "for i = 1, 5000 do t[i] = 'q_' .. i end\n"
    "return #t\n";
  luaL_openlibs(L);
  if (luaL_dostring(L, "jit.off() T = require('table.new')(5000, 0)"
		       " WARM = {} for i = 1, 40000 do WARM[i] = 'w' .. i end"))
    return NULL;
  memset(&opt, 0, sizeof(opt));
  opt.stack_depth = stack_depth;
  opt.writer = mem_write;
  opt.ctx = &j->m;
  opt.bufsize = 4096;
  if (ljmprof_start(L, &opt) != LJMPROF_OK) return NULL;
  if (luaL_loadbuffer(L, code, sizeof(code) - 1, j->name) ||
      lua_pcall(L, 0, 1, 0) || lua_tointeger(L, -1) != 5000)
    return NULL;
  if (ljmprof_stop(L) != LJMPROF_OK) return NULL;
  lua_close(L);
  if (mpr_parse(j->m.data, j->m.len, &j->st, err, sizeof(err)) == 0 &&
      j->st.complete && !j->st.unresolved)
    j->ok = 1;
  return NULL;
}

START_TEST(two_vms_two_threads)
{
  vmjob a = { "@vm_a.lua", {0}, {0}, 0 }, b = { "@vm_b.lua", {0}, {0}, 0 };
  pthread_t ta, tb;
  ck_assert_int_eq(pthread_create(&ta, NULL, vm_thread, &a), 0);
  ck_assert_int_eq(pthread_create(&tb, NULL, vm_thread, &b), 0);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  ck_assert(a.ok && b.ok);
  ck_count(&a.st, MPR_ALLOC, "@vm_a.lua:2", 5000);
  ck_count(&b.st, MPR_ALLOC, "@vm_b.lua:2", 5000);
  ck_assert_uint_eq(mpr_count_prefix(&a.st, MPR_ALLOC, "@vm_b"), 0);
  ck_assert_uint_eq(mpr_count_prefix(&b.st, MPR_ALLOC, "@vm_a"), 0);
  mpr_free(&a.st); mpr_free(&b.st);
  free(a.m.data); free(b.m.data);
}
END_TEST

/* -- Errors and lifecycle ------------------------------------------------- */

START_TEST(failing_writer)
{
  lua_State *L = newvm();
  membuf m = {0};
  mpr_stats st;
  char err[256];
  start(L, &m, 4096);
  m.failat = m.calls + 3;  /* Two more flushes work. */
  run(L, "@w.lua",
      "local t = {}\n"
      "for i = 1, 20000 do t[i] = 'v' .. i end\n"
      "RESULT = #t\n");
  lua_getglobal(L, "RESULT");
  ck_assert_int_eq(lua_tointeger(L, -1), 20000);
  ck_assert_int_eq(ljmprof_running(L), 1);  /* Halted, not gone. */
  errno = 0;
  ck_assert_int_eq(ljmprof_stop(L), LJMPROF_ERRIO);
  ck_assert_int_eq(errno, EIO);
  ck_assert_int_eq(ljmprof_running(L), 0);
  ck_assert_int_eq(m.calls, m.failat);
  /* What was written is a valid, truncated stream. */
  ck_assert_int_eq(mpr_parse(m.data, m.len, &st, err, sizeof(err)), 0);
  ck_assert_int_eq(st.complete, 0);
  ck_assert_uint_gt(mpr_count(&st, MPR_ALLOC, "@w.lua:2"), 0);
  mpr_free(&st);
  free(m.data);
  run(L, "=after", "local t = {} for i = 1, 100 do t[i] = {} end");
  lua_close(L);
}
END_TEST

START_TEST(start_stop_twice)
{
  lua_State *L = newvm();
  membuf m = {0};
  mpr_stats st;
  ljmprof_opt opt;
  memset(&opt, 0, sizeof(opt));
  ck_assert_int_eq(ljmprof_running(L), 0);
  ck_assert_int_eq(ljmprof_stop(L), LJMPROF_ERRUSE);
  ck_assert_int_eq(ljmprof_abandon(L), LJMPROF_ERRUSE);
  ck_assert_int_eq(ljmprof_start(L, &opt), LJMPROF_ERRUSE);  /* No writer. */
  start(L, &m, 0);
  ck_assert_int_eq(ljmprof_running(L), 1);
  opt.stack_depth = stack_depth;
  opt.writer = mem_write;
  opt.ctx = &m;
  ck_assert_int_eq(ljmprof_start(L, &opt), LJMPROF_ERRUSE);
  run(L, "=x", "local t = {}");
  finish(L, &m, &st);
  ck_assert_int_eq(ljmprof_stop(L), LJMPROF_ERRUSE);
  mpr_free(&st);
  /* Again on the same VM, then abandon: nothing more is written. */
  start(L, &m, 0);
  ck_assert_int_eq(ljmprof_abandon(L), LJMPROF_OK);
  ck_assert_int_eq(m.calls, 0);
  ck_assert_int_eq(ljmprof_running(L), 0);
  lua_close(L);
  free(m.data);
}
END_TEST

/*
** A profiler the host started: misc.memprof neither stops it nor starts
** another, and says so, from start() as from stop() (issue 23).
*/
START_TEST(misc_memprof_under_host)
{
  lua_State *L = newvm();
  membuf m = {0};
  mpr_stats st;
  start(L, &m, 0);
  run(L, "=misc",
      "local msg = 'the VM is profiled by its host (ljmprof), not by "
      "misc.memprof'\n"
      "for _, f in ipairs({misc.memprof.stop, misc.memprof.start}) do\n"
      "  local ok, err, errno = f('/nonexistent/x.bin')\n"
      "  assert(ok == nil and err == msg and errno == 22, tostring(err))\n"
      "end\n"
      "T = {}\n");
  ck_assert_int_eq(ljmprof_running(L), 1);
  finish(L, &m, &st);
  ck_count(&st, MPR_ALLOC, "=misc:6", 1);  /* Still recording. */
  mpr_free(&st);
  lua_close(L);
}
END_TEST

START_TEST(close_while_profiling)
{
  lua_State *L = newvm();
  membuf m = {0};
  mpr_stats st;
  char err[256];
  run(L, "=setup", "jit.off()");
  start(L, &m, 0);
  run(L, "@cl.lua", "T = {} for i = 1, 100 do T[i] = {} end");
  lua_close(L);
  ck_assert_int_eq(mpr_parse(m.data, m.len, &st, err, sizeof(err)), 0);
  ck_assert_int_eq(st.complete, 1);
  /* 100 tables, T, and T's first array part (then reallocated). */
  ck_count(&st, MPR_ALLOC, "@cl.lua:1", 100 + 1 + 1);
  mpr_free(&st);
  free(m.data);
}
END_TEST

/*
** A host that sets an allocator of its own over the profiler's while
** profiling (as memory-limiting embedders do): stopping still completes
** the stream, the host's allocator stays and keeps working (the buried
** wrapper passes calls through), and a new profiler starts over it.
*/
static lua_Alloc host_inner;
static void *host_ud;
static unsigned long host_calls;
static void *host_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
  ck_assert_ptr_eq(ud, &host_calls);
  host_calls++;
  return host_inner(host_ud, ptr, osize, nsize);
}

START_TEST(host_allocator_over_profiler)
{
  lua_State *L = newvm();
  membuf m = {0};
  mpr_stats st;
  void *ud;
  run(L, "=setup", "jit.off()");
  start(L, &m, 0);
  host_inner = lua_getallocf(L, &host_ud);
  host_calls = 0;
  lua_setallocf(L, host_alloc, &host_calls);
  run(L, "@host.lua", "T = {} for i = 1, 100 do T[i] = {} end");
  ck_assert_uint_ge(host_calls, 102);
  ck_assert_int_eq(ljmprof_running(L), 1);
  finish(L, &m, &st);  /* Stops: OK, with the epilogue. */
  ck_count(&st, MPR_ALLOC, "@host.lua:1", 100 + 1 + 1);
  mpr_free(&st);
  ck_assert_int_eq(ljmprof_running(L), 0);
  ck_assert_int_eq(ljmprof_stop(L), LJMPROF_ERRUSE);
  ck_assert_ptr_eq(lua_getallocf(L, &ud), host_alloc);  /* Still the host's. */
  ck_assert_ptr_eq(ud, &host_calls);
  /* The buried wrapper passes through: nothing more is written. */
  host_calls = 0;
  run(L, "=after", "T = nil collectgarbage() T = {} for i = 1, 100 do T[i] = {} end");
  ck_assert_uint_ge(host_calls, 102);
  ck_assert_int_eq(m.calls, 0);
  ck_assert_uint_eq(m.len, 0);
  /* A new profiler over the host's allocator, then lua_close finishes it. */
  start(L, &m, 0);
  run(L, "@again.lua", "T = {} for i = 1, 50 do T[i] = {} end");
  ck_assert_int_eq(ljmprof_abandon(L), LJMPROF_OK);
  ck_assert_ptr_eq(lua_getallocf(L, &ud), host_alloc);
  ck_assert_uint_eq(m.len, 0);
  start(L, &m, 0);
  run(L, "@again.lua", "T = {} for i = 1, 50 do T[i] = {} end");
  lua_close(L);
  {
    char err[256];
    ck_assert_int_eq(mpr_parse(m.data, m.len, &st, err, sizeof(err)), 0);
    ck_assert_int_eq(st.complete, 1);
    ck_count(&st, MPR_ALLOC, "@again.lua:1", 50 + 1 + 1);
    mpr_free(&st);
  }
  free(m.data);
}
END_TEST

/* The hooks run on lua_newstate and first thing in lua_close. */
static int hook_calls;
static membuf hook_m;
static void hook_new(lua_State *L)
{
  hook_calls++;
  start(L, &hook_m, 0);
}
static void *hook_close(lua_State *L)
{
  hook_calls += 10;
  ck_assert_int_eq(ljmprof_stop(L), LJMPROF_OK);
  return NULL;	/* Nothing for ljmprof_hook_closed. */
}

START_TEST(lifecycle_hooks)
{
  lua_State *L;
  mpr_stats st;
  char err[256];
  ljmprof_hook_newstate = hook_new;
  ljmprof_hook_close = hook_close;
  L = newvm();
  ck_assert_int_eq(hook_calls, 1);
  ck_assert_int_eq(ljmprof_running(L), 1);
  run(L, "@h.lua", "local t = {}");
  lua_close(L);
  ck_assert_int_eq(hook_calls, 11);
  ljmprof_hook_newstate = NULL;
  ljmprof_hook_close = NULL;
  ck_assert_int_eq(mpr_parse(hook_m.data, hook_m.len, &st, err, sizeof(err)), 0);
  ck_assert_int_eq(st.complete, 1);
  ck_count(&st, MPR_ALLOC, "@h.lua:1", 1);
  mpr_free(&st);
}
END_TEST

/* The safe-point poll: stop and restart from inside the allocator. */
static volatile sig_atomic_t poll_flag;
static membuf poll_m2;
static int poll_calls;
static void poll_cb(lua_State *L, void *ctx)
{
  ljmprof_opt opt;
  (void)ctx;
  poll_calls++;
  ck_assert_int_eq(ljmprof_stop(L), LJMPROF_OK);
  memset(&opt, 0, sizeof(opt));
  opt.stack_depth = stack_depth;
  opt.writer = mem_write;
  opt.ctx = &poll_m2;
  ck_assert_int_eq(ljmprof_start(L, &opt), LJMPROF_OK);
}

static int cf_setflag(lua_State *L)
{
  (void)L;
  poll_flag++;
  return 0;
}

START_TEST(poll_restart)
{
  lua_State *L = newvm();
  membuf m = {0};
  mpr_stats st;
  ljmprof_opt opt;
  char err[256];
  run(L, "=setup", "jit.off()");
  lua_pushcfunction(L, cf_setflag);
  lua_setglobal(L, "setflag");
  memset(&opt, 0, sizeof(opt));
  opt.stack_depth = stack_depth;
  opt.writer = mem_write;
  opt.ctx = &m;
  opt.poll_flag = &poll_flag;
  opt.poll = poll_cb;
  ck_assert_int_eq(ljmprof_start(L, &opt), LJMPROF_OK);
  run(L, "@p.lua",
      "local t = {}\n"				/* 1 */
      "for i = 1, 1000 do t[i] = {} end\n"	/* 2 */
      "setflag()\n"				/* 3 */
      "for i = 1, 1000 do t[i] = {} end\n");	/* 4 */
  ck_assert_int_eq(poll_calls, 1);
  ck_assert_int_eq(mpr_parse(m.data, m.len, &st, err, sizeof(err)), 0);
  ck_assert_int_eq(st.complete, 1);
  /* 1000 tables and t's first array part (then reallocated). */
  ck_count(&st, MPR_ALLOC, "@p.lua:2", 1000 + 1);
  ck_count(&st, MPR_ALLOC, "@p.lua:4", 0);
  mpr_free(&st);
  finish(L, &poll_m2, &st);
  /* The allocation that triggered the poll went to the new profiler. */
  ck_count(&st, MPR_ALLOC, "@p.lua:4", 1000);
  mpr_free(&st);
  free(m.data);
  lua_close(L);
}
END_TEST

/*
** Restart from the poll at random points: in the middle of GC steps,
** sweeps, the parser, trace recording. Every stream must be complete.
*/
#define NSTREAMS 400
static membuf stress_m[NSTREAMS];
static int stress_n;
static volatile sig_atomic_t stress_flag;
static volatile int stress_done;

static void stress_poll(lua_State *L, void *ctx)
{
  ljmprof_opt opt;
  (void)ctx;
  ck_assert_int_eq(ljmprof_stop(L), LJMPROF_OK);
  if (stress_n + 1 >= NSTREAMS) return;
  memset(&opt, 0, sizeof(opt));
  opt.stack_depth = stack_depth;
  opt.writer = mem_write;
  opt.ctx = &stress_m[++stress_n];
  opt.bufsize = 8192;
  opt.poll_flag = &stress_flag;
  opt.poll = stress_poll;
  ck_assert_int_eq(ljmprof_start(L, &opt), LJMPROF_OK);
}

static void *stress_ticker(void *arg)
{
  (void)arg;
  while (!stress_done) {
    stress_flag++;
    usleep(300);
  }
  return NULL;
}

START_TEST(poll_stress)
{
  lua_State *L = newvm();
  ljmprof_opt opt;
  pthread_t t;
  mpr_stats st;
  char err[256];
  int i;
  memset(&opt, 0, sizeof(opt));
  opt.stack_depth = stack_depth;
  opt.writer = mem_write;
  opt.ctx = &stress_m[0];
  opt.bufsize = 8192;
  opt.poll_flag = &stress_flag;
  opt.poll = stress_poll;
  ck_assert_int_eq(ljmprof_start(L, &opt), LJMPROF_OK);
  ck_assert_int_eq(pthread_create(&t, NULL, stress_ticker, NULL), 0);
  run(L, "=stress",
      "jit.opt.start('hotloop=3')\n"
      "local keep = {}\n"
      "for round = 1, 30 do\n"
      "  for i = 1, 3000 do\n"
      "    local f = load('return {' .. i .. ', \"' .. round .. '\"}', 'c' .. i % 50)\n"
      "    keep[i % 500 + 1] = { f(), tostring(i) .. round }\n"
      "  end\n"
      "  collectgarbage('step', 100)\n"
      "end\n"
      "RESULT = #keep\n");
  stress_done = 1;
  pthread_join(t, NULL);
  lua_getglobal(L, "RESULT");
  ck_assert_int_eq(lua_tointeger(L, -1), 500);
  if (ljmprof_running(L)) ck_assert_int_eq(ljmprof_stop(L), LJMPROF_OK);
  ck_assert_int_ge(stress_n, 5);
  for (i = 0; i <= stress_n; i++) {
    ck_assert_int_eq(mpr_parse(stress_m[i].data, stress_m[i].len, &st, err,
			       sizeof(err)), 0);
    ck_assert_int_eq(st.complete, 1);
    ck_assert_uint_eq(st.unresolved, 0);
    mpr_free(&st);
    free(stress_m[i].data);
  }
  lua_close(L);
}
END_TEST

/* -- The collector and the VM are unchanged by profiling ------------------- */

static const char gc_code[] =
  "jit.off()\n"
  "local cycles = 0\n"
  "local function arm()\n"
  "  local p = newproxy(true)\n"
  "  getmetatable(p).__gc = function() cycles = cycles + 1 arm() end\n"
  "end\n"
  "arm()\n"
  "local out = {}\n"
  "local keep = {}\n"
  "for phase = 1, 4 do\n"
  "  for i = 1, 20000 do\n"
  "    local s = string.rep('p' .. phase, i % 50) .. i\n"
  "    if i % 7 == 0 then keep[#keep + 1] = { s, i } end\n"
  "  end\n"
  "  if phase == 2 then keep = {} end\n"
  "  out[#out + 1] = string.format('%d %.3f %d', phase, collectgarbage('count'), cycles)\n"
  "end\n"
  "RESULT = table.concat(out, ';')\n";

static char *gc_run(int profile)
{
  lua_State *L = luaL_newstate();
  membuf m = {0};
  char *r;
  luaL_openlibs(L);
  if (profile) start(L, &m, 0);
  run(L, "=gc", gc_code);
  lua_getglobal(L, "RESULT");
  r = strdup(lua_tostring(L, -1));
  if (profile) ck_assert_int_eq(ljmprof_stop(L), LJMPROF_OK);
  lua_close(L);
  free(m.data);
  return r;
}

START_TEST(collector_unchanged)
{
  char *off, *off2, *on;
  fixed_seed = 1;
  off = gc_run(0);
  off2 = gc_run(0);
  on = gc_run(1);
  fixed_seed = 0;
  ck_assert_str_eq(off2, off);  /* The test itself is repeatable. */
  ck_assert_str_eq(on, off);
  ck_assert_ptr_nonnull(strstr(off, "4 "));
  free(off);
  free(off2);
  free(on);
}
END_TEST

/* -- Encoding ----------------------------------------------------------------- */

/*
** Every event carries exactly the blocks of the allocator call it stands
** for, each value in its shortest ULEB128, whatever the magnitude of the
** addresses: the VM's allocator hands out blocks from arenas placed at
** addresses of 3 to 7 ULEB128 bytes (two of 5 bytes that differ only in
** bits 21 and up), switching arena at every call, and logs each call. The
** writer keeps the bytes of the last address from bit 21 up.
*/
#define ARENAS 7
static struct arena { uintptr_t want, base, size, used; } arenas[ARENAS] = {
  { 0x100000, 0, 0x100000, 0 },			/* Below 2^21: 3 bytes. */
  { 0x600000, 0, 0x200000, 0 },			/* 4 bytes. */
  { 0x10000000, 0, 0x2000000, 0 },		/* 5 bytes. */
  { 0x12200000, 0, 0x2000000, 0 },		/* 5, other bits 21 up. */
  { 0x800000000, 0, 0x4000000, 0 },		/* 6 bytes. */
  { 0x40000000000, 0, 0x4000000, 0 },		/* 7 bytes. */
  { 0x400000000000, 0, 0x4000000, 0 },		/* 7 bytes, near the top. */
};
typedef struct alloc_call { uint64_t optr, osize, nptr, nsize; } alloc_call;
static alloc_call *calls;
static size_t ncalls, szcalls;
static int logging;
static unsigned next_arena;

static void arenas_map(void)
{
  int i;
  for (i = 0; i < ARENAS; i++) {
    void *p = mmap((void *)arenas[i].want, arenas[i].size,
		   PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
		   MAP_FIXED_NOREPLACE, -1, 0);
    if (p == MAP_FAILED)  /* Taken: anywhere, for the blocks still. */
      p = mmap(NULL, arenas[i].size, PROT_READ | PROT_WRITE,
	       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ck_assert_ptr_ne(p, MAP_FAILED);
    arenas[i].base = (uintptr_t)p;
    arenas[i].used = 0;
  }
}

static void arenas_unmap(void)
{
  int i;
  for (i = 0; i < ARENAS; i++)
    munmap((void *)arenas[i].base, arenas[i].size);
}

static void *arena_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
  void *nptr = NULL;
  unsigned i;
  (void)ud;
  if (nsize) {  /* Never reused: the next arena with room. */
    size_t sz = (nsize + 15) & ~(size_t)15;
    for (i = 0; i < ARENAS && nptr == NULL; i++) {
      struct arena *a = &arenas[(next_arena + i) % ARENAS];
      if (a->size - a->used >= sz) {
	nptr = (void *)(a->base + a->used);
	a->used += sz;
      }
    }
    next_arena++;
    if (nptr == NULL) return NULL;
    if (ptr) memcpy(nptr, ptr, osize < nsize ? osize : nsize);
  }
  if (logging && (ptr != NULL || nsize != 0)) {
    if (ncalls == szcalls) {
      szcalls = szcalls ? 2 * szcalls : 4096;
      calls = realloc(calls, szcalls * sizeof(*calls));
      ck_assert_ptr_nonnull(calls);
    }
    calls[ncalls].optr = (uintptr_t)ptr;
    calls[ncalls].osize = ptr ? osize : 0;
    calls[ncalls].nptr = (uintptr_t)nptr;
    calls[ncalls].nsize = nsize;
    ncalls++;
  }
  return nptr;
}

static size_t uleb_len(uint64_t v)
{
  size_t n = 1;
  while (v >= 0x80) { v >>= 7; n++; }
  return n;
}

/* The length of an event whose every value is in its shortest form. */
static size_t event_len(const struct mp_event *ev)
{
  size_t n = 1;
  if (ev->src == LJM_SRC_LFUNC) n += uleb_len(ev->loc) + uleb_len(ev->loc_line);
  else if (ev->src != LJM_SRC_INTERNAL) n += uleb_len(ev->loc);
  if (ev->type != MP_EV_ALLOC) n += uleb_len(ev->old_addr) + uleb_len(ev->old_size);
  if (ev->type != MP_EV_FREE) n += uleb_len(ev->new_addr) + uleb_len(ev->new_size);
  return n;
}

static const char encode_code[] =
  "local keep = {}\n"
  "local function work(n)\n"
  "  for i = 1, n do\n"
  "    local t = { i, i + 1, s = ('x'):rep(i % 300) }\n"
  "    keep[i % 64] = t\n"
  "    if i % 97 == 0 then keep[i % 64] = ('y'):rep(i * 37) end\n"
  "  end\n"
  "  local big = {}\n"
  "  for i = 1, 5000 do big[i] = i end\n"		/* Reallocations. */
  "  keep.s = ('z'):rep(3 * 1024 * 1024)\n"		/* A 4-byte size. */
  "  for i = 1, 50 do keep[i % 64] = cf_alloc() end\n"	/* C code. */
  "end\n"
  "jit.off() work(3000)\n"				/* Lua code. */
  "jit.on() work(3000)\n"				/* Traces. */
  "if PRE then PRE(3000) end\n"			/* A trace's own. */
  "keep = nil collectgarbage()\n";			/* The collector. */

/* Compiled before profiling, two constructors on two lines with nothing
** stored between them: the writer cannot be sure which line allocates,
** and charges the trace (the source of compiled code). */
static const char encode_pre[] =
  "local keep = {}\n"
  "function PRE(n)\n"
  "  for i = 1, n do local a = {}\n"
  "    keep[i % 8] = {a} end\n"
  "end\n"
  "jit.on() PRE(1000)\n";

START_TEST(every_event_as_called)
{
  lua_State *L;
  membuf m = {0};
  struct mp_reader *mr;
  struct mp_event ev;
  enum mp_status s;
  uint64_t prev_off = 0;
  size_t prev_len = 0, i = 0, n, lens[8] = {0}, srcs[8] = {0}, reallocs = 0;
  /* The arena whose addresses have n bytes, for n = 3 to 7. */
  static const int arena_of_len[8] = { -1, -1, -1, 0, 1, 2, 4, 5 };
  int have_prev = 0;
  arenas_map();
  ncalls = 0;
  next_arena = 0;
  L = lua_newstate(arena_alloc, NULL);
  ck_assert_ptr_nonnull(L);
  luaL_openlibs(L);
  lua_register(L, "cf_alloc", cf_alloc);
  run(L, "@pre.lua", encode_pre);
  start(L, &m, 4096);  /* Small: many flushes, events at the buffer's end. */
  next_arena = 0;  /* The first block written is below 2^21. */
  logging = 1;
  run(L, "@encode.lua", encode_code);
  ck_assert_int_eq(ljmprof_stop(L), LJMPROF_OK);
  logging = 0;
  ck_assert_uint_gt(ncalls, 10000);
  ck_assert_uint_gt(m.len, 0);
  ck_assert_uint_eq(m.data[m.len - 1], LJM_EV_EPILOGUE);
  mr = mp_reader_new_mem(m.data, m.len);
  ck_assert_ptr_nonnull(mr);
  while ((s = mp_reader_next(mr, &ev)) == MP_OK) {
    if (ev.in_symtab) continue;
    if (have_prev)  /* Each event ends where the next begins. */
      ck_assert_msg(ev.offset - prev_off == prev_len,
		    "event at byte %llu: %llu bytes, %zu in shortest form",
		    (unsigned long long)prev_off,
		    (unsigned long long)(ev.offset - prev_off), prev_len);
    have_prev = 0;
    if (mp_event_is_symbol(ev.type)) continue;
    ck_assert_uint_lt(i, ncalls);
    ck_assert_msg(ev.old_addr == calls[i].optr && ev.old_size == calls[i].osize &&
		  ev.new_addr == calls[i].nptr && ev.new_size == calls[i].nsize,
		  "event %zu: (0x%llx %llu) -> (0x%llx %llu), called with "
		  "(0x%llx %llu) -> (0x%llx %llu)", i,
		  (unsigned long long)ev.old_addr, (unsigned long long)ev.old_size,
		  (unsigned long long)ev.new_addr, (unsigned long long)ev.new_size,
		  (unsigned long long)calls[i].optr, (unsigned long long)calls[i].osize,
		  (unsigned long long)calls[i].nptr, (unsigned long long)calls[i].nsize);
    ck_assert_int_eq(ev.type, calls[i].optr == 0 ? MP_EV_ALLOC :
			      calls[i].nsize == 0 ? MP_EV_FREE : MP_EV_REALLOC);
    n = uleb_len(ev.type == MP_EV_FREE ? ev.old_addr : ev.new_addr);
    lens[n < 8 ? n : 0]++;
    srcs[(ev.src >> 2) & 7]++;
    reallocs += ev.type == MP_EV_REALLOC;
    prev_off = ev.offset;
    prev_len = event_len(&ev);
    have_prev = 1;
    i++;
  }
  ck_assert_int_eq(s, MP_END);
  if (have_prev)  /* The last one ends at the epilogue. */
    ck_assert_uint_eq(m.len - 1 - prev_off, prev_len);
  ck_assert_uint_eq(i, ncalls);
  /* Every writer's path was taken: each source, reallocations. */
  ck_assert_uint_gt(srcs[LJM_SRC_INTERNAL >> 2], 0);
  ck_assert_uint_gt(srcs[LJM_SRC_LFUNC >> 2], 0);
  ck_assert_uint_gt(srcs[LJM_SRC_CFUNC >> 2], 0);
  ck_assert_uint_gt(srcs[LJM_SRC_TRACE >> 2], 0);
  ck_assert_uint_gt(reallocs, 0);
  /* Addresses of every length were written (unless arenas were taken). */
  for (n = 3; n <= 7; n++)
    if (arenas[arena_of_len[n]].base == arenas[arena_of_len[n]].want)
      ck_assert_msg(lens[n] > 0, "no address of %zu bytes", n);
  mp_reader_free(mr);
  free(m.data);
  lua_close(L);
  arenas_unmap();
  free(calls);
  calls = NULL;
  szcalls = 0;
}
END_TEST

/*
** Sampling: replay every allocator call (arena_alloc's log, addresses
** never reused) against the stream. An allocation is in it only when
** sampled; the free or reallocation of a sampled block always is (a
** reallocation as the free of the old block), and of no other block; a
** reallocation that the counter samples is an allocation of the new
** block. Returns the number of
** samples, and in *est their estimated bytes (s / (1 - exp(-s/m))) and
** in *exp_n the expected number of samples, for the bytes counted.
*/
static size_t sample_replay(const membuf *m, uint64_t mean, double *est,
			    double *exp_n, double *counted)
{
  struct mp_reader *mr = mp_reader_new_mem(m->data, m->len);
  struct mp_event ev;
  enum mp_status s;
  uintptr_t *set = NULL;
  size_t nset = 0, i = 0, j, samples = 0, infos = 0;
  int have = 0;
  ck_assert_ptr_nonnull(mr);
  *est = *exp_n = *counted = 0;
#define NEXT() do { \
    while ((s = mp_reader_next(mr, &ev)) == MP_OK && \
	   mp_event_is_symbol(ev.type)) \
      if (ev.type == MP_EV_SYM_INFO && ev.info_key == LJM_INFO_SAMPLE) { \
	ck_assert_uint_eq(ev.info_value, mean); \
	infos++; \
      } \
    have = s == MP_OK; \
  } while (0)
  NEXT();
  for (i = 0; i < ncalls; i++) {
    uintptr_t o = calls[i].optr, n = calls[i].nptr;
    size_t k = nset;
    for (j = 0; o && j < nset; j++)
      if (set[j] == o) { k = j; break; }
    if (o && k < nset) {  /* A sampled block: always in the stream. */
      ck_assert_msg(have, "call %zu: no event for a sampled block", i);
      ck_assert_int_eq(ev.type, MP_EV_FREE);
      ck_assert_uint_eq(ev.old_addr, o);
      ck_assert_uint_eq(ev.old_size, calls[i].osize);
      set[k] = set[--nset];
      NEXT();
      /* A reallocation: its new block, as an allocation, below. */
    }
    if (!calls[i].nsize || !n) continue;  /* Unsampled free: no event. */
    *counted += (double)calls[i].nsize;
    *exp_n += -expm1(-(double)calls[i].nsize / (double)mean);
    if (have && ev.type == MP_EV_ALLOC && ev.new_addr == n) {
      ck_assert_uint_eq(ev.new_size, calls[i].nsize);
      /* With its stack, or the VM's own (as in a stack stream). */
      ck_assert(ev.src == LJM_SRC_STACK || ev.src == LJM_SRC_INTERNAL ||
		ev.src == LJM_SRC_TRACE);
      *est += (double)ev.new_size / -expm1(-(double)ev.new_size / (double)mean);
      if ((nset & (nset + 1)) == 0 || nset == 0)
	set = realloc(set, (2 * nset + 2) * sizeof(*set));
      set[nset++] = n;
      samples++;
      NEXT();
    }
  }
#undef NEXT
  ck_assert_msg(!have, "an event no call explains: type %d, 0x%llx", ev.type,
		(unsigned long long)(ev.type == MP_EV_FREE ? ev.old_addr
							    : ev.new_addr));
  ck_assert_int_eq(s, MP_END);
  ck_assert_uint_eq(infos, 1);
  mp_reader_free(mr);
  free(set);
  return samples;
}

static size_t sample_run(uint64_t mean, uint64_t seed, double *est,
			 double *exp_n, double *counted)
{
  lua_State *L;
  membuf m = {0};
  ljmprof_opt opt;
  size_t n;
  fixed_seed = 1;  /* The collector's pace, as the samples, repeats. */
  arenas_map();
  ncalls = 0;
  next_arena = 0;
  L = lua_newstate(arena_alloc, NULL);
  ck_assert_ptr_nonnull(L);
  luaL_openlibs(L);
  lua_register(L, "cf_alloc", cf_alloc);
  memset(&opt, 0, sizeof(opt));
  opt.writer = mem_write;
  opt.ctx = &m;
  opt.sample = mean;
  opt.seed = seed;
  ck_assert_int_eq(ljmprof_start(L, &opt), LJMPROF_OK);
  logging = 1;
  run(L, "@encode.lua", encode_code);
  ck_assert_int_eq(ljmprof_stop(L), LJMPROF_OK);
  logging = 0;
  n = sample_replay(&m, mean, est, exp_n, counted);
  lua_close(L);
  fixed_seed = 0;
  arenas_unmap();
  free(m.data);
  return n;
}

START_TEST(sampled_events)
{
  double est, exp_n, counted, est2, e2, c2;
  size_t n = sample_run(8192, 42, &est, &exp_n, &counted);
  size_t n2 = sample_run(8192, 42, &est2, &e2, &c2);
  /* The same seed, the same samples. */
  ck_assert_uint_eq(n, n2);
  ck_assert_msg(est == est2, "%.0f, then %.0f", est, est2);
  /* As many as the distribution says (4 standard deviations), and the
  ** estimate of the bytes within 10% of the bytes. */
  ck_assert_msg(fabs((double)n - exp_n) < 4 * sqrt(exp_n) + 4,
		"%zu samples, %.0f expected", n, exp_n);
  ck_assert_uint_gt(n, 200);
  ck_assert_msg(fabs(est - counted) < 0.1 * counted,
		"estimated %.0f bytes of %.0f", est, counted);
  /* Another seed, other samples. */
  ck_assert_uint_ne(sample_run(8192, 43, &est2, &e2, &c2), 0);
  ck_assert(est2 != est);
}
END_TEST

/* Bad means: none; sampling implies stacks (the profile extension). */
START_TEST(sampled_stream_is_extended)
{
  lua_State *L = newvm();
  membuf m = {0};
  ljmprof_opt opt;
  memset(&opt, 0, sizeof(opt));
  opt.writer = mem_write;
  opt.ctx = &m;
  opt.sample = 1;  /* Every byte: every allocation. */
  ck_assert_int_eq(ljmprof_start(L, &opt), LJMPROF_OK);
  run(L, "@s.lua", "local t = {} for i = 1, 100 do t[i] = {} end");
  ck_assert_int_eq(ljmprof_stop(L), LJMPROF_OK);
  ck_assert_uint_gt(m.len, 8);
  ck_assert_uint_eq(m.data[3], LJM_FMT_VERSION_EXT);
  ck_assert_uint_eq(m.data[4], LJM_EXT_PROFILE);
  {
    mpr_stats st;
    char err[256];
    memset(&st, 0, sizeof(st));
    ck_assert_int_eq(mpr_parse(m.data, m.len, &st, err, sizeof(err)), 0);
    ck_assert_int_eq(st.complete, 1);
    ck_assert_uint_eq(st.info[LJM_INFO_SAMPLE], 1);
    ck_assert_uint_eq(st.info[LJM_INFO_DEPTH], LJMPROF_STACK_DEPTH_DEFAULT);
    /* Each of the 100 tables, with its stack, and every name known. */
    ck_assert_uint_ge(st.stackevents, 100);
    ck_assert_uint_eq(st.unresolved, 0);
    mpr_free(&st);
  }
  free(m.data);
  lua_close(L);
}
END_TEST

/*
** INFO RSS (#38): with opt.rss, the word's value after the start's time
** mark, again after a mark once it changed, and the last at the end;
** without it, or with the word 0 (not known), none.
*/
static unsigned long rss_run(const volatile unsigned long long *rss,
			     volatile unsigned long long *set, uint64_t *last)
{
  lua_State *L = newvm();
  membuf m = {0};
  ljmprof_opt opt;
  mpr_stats st;
  char err[256];
  unsigned long n;
  memset(&opt, 0, sizeof(opt));
  opt.writer = mem_write;
  opt.ctx = &m;
  opt.stack_depth = 4;
  opt.rss = rss;
  ck_assert_int_eq(ljmprof_start(L, &opt), LJMPROF_OK);
  run(L, "@r.lua", "local t = {} for i = 1, 1000 do t[i] = {} end");
  if (set)
    *set = 2 * 1048576;  /* Read by the end's mark. */
  ck_assert_int_eq(ljmprof_stop(L), LJMPROF_OK);
  memset(&st, 0, sizeof(st));
  ck_assert_int_eq(mpr_parse(m.data, m.len, &st, err, sizeof(err)), 0);
  ck_assert_int_eq(st.complete, 1);
  n = st.ninfo[LJM_INFO_RSS];
  *last = st.info[LJM_INFO_RSS];
  mpr_free(&st);
  free(m.data);
  lua_close(L);
  return n;
}

START_TEST(rss_after_time_marks)
{
  volatile unsigned long long w = 1048576;
  uint64_t last;
  ck_assert_uint_eq(rss_run(&w, &w, &last), 2);  /* Start, end. */
  ck_assert_uint_eq(last, 2 * 1048576);
  w = 1048576;
  ck_assert_uint_eq(rss_run(&w, NULL, &last), 1);  /* Unchanged: once. */
  ck_assert_uint_eq(last, 1048576);
  w = 0;
  ck_assert_uint_eq(rss_run(&w, NULL, &last), 0);  /* Not known. */
  ck_assert_uint_eq(rss_run(NULL, NULL, &last), 0);
}
END_TEST

/*
** INFO MAPPED (#38): a VM on LuaJIT's own allocator has, after its time
** marks, the bytes that allocator has mapped: at least the live heap,
** grown with a kept 8 MiB string (a chunk mapped of its own) and 2 MiB of
** small tables; at every byte sampled too (the profiler's pair over the
** allocator). A VM on a host's allocator has none.
*/
static void *plain_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
  (void)ud; (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  return realloc(ptr, nsize);
}

static unsigned long mapped_run(int host, size_t sample, uint64_t *first,
				uint64_t *last, uint64_t *heap)
{
  lua_State *L;
  membuf m = {0};
  ljmprof_opt opt;
  mpr_stats st;
  char err[256];
  unsigned long n;
  if (host) {
    L = lua_newstate(plain_alloc, NULL);
    ck_assert_ptr_nonnull(L);
    luaL_openlibs(L);
  } else {
    L = newvm();
  }
  memset(&opt, 0, sizeof(opt));
  opt.writer = mem_write;
  opt.ctx = &m;
  opt.stack_depth = 4;
  opt.sample = sample;
  opt.seed = 1;
  ck_assert_int_eq(ljmprof_start(L, &opt), LJMPROF_OK);
  run(L, "@m.lua", "BIG = string.rep('m', 8 * 1048576)\n"
		   "KEEP = {} for i = 1, 20000 do KEEP[i] = {i, i} end");
  *heap = (uint64_t)lua_gc(L, LUA_GCCOUNT, 0) * 1024 +
	  (uint64_t)lua_gc(L, LUA_GCCOUNTB, 0);
  ck_assert_int_eq(ljmprof_stop(L), LJMPROF_OK);
  memset(&st, 0, sizeof(st));
  ck_assert_int_eq(mpr_parse(m.data, m.len, &st, err, sizeof(err)), 0);
  ck_assert_int_eq(st.complete, 1);
  n = st.ninfo[LJM_INFO_MAPPED];
  *last = st.info[LJM_INFO_MAPPED];
  *first = st.info_first[LJM_INFO_MAPPED];
  mpr_free(&st);
  free(m.data);
  lua_close(L);
  return n;
}

START_TEST(mapped_after_time_marks)
{
  uint64_t first, last, heap;
  unsigned long n = mapped_run(0, 0, &first, &last, &heap);
#ifdef __SANITIZE_ADDRESS__
  /* The sanitizer build's VM allocates with the system's malloc
  ** (LUAJIT_USE_SYSMALLOC): LuaJIT's allocator, whose mapped bytes
  ** MAPPED counts, is not there. */
  ck_assert_uint_eq(n, 0);
  ck_assert_uint_eq(mapped_run(0, 1, &first, &last, &heap), 0);
  return;
#endif
  ck_assert_uint_ge(n, 2);  /* At the start, and grown since. */
  ck_assert_uint_ge(last, heap);
  ck_assert_uint_ge(last, first + 8 * 1048576);
  /* Sampled: mp_sfree's pair over the allocator (GC64), or the wrapper.
  ** A sampled block is the profiler's (its range, under GC64), not the
  ** allocator's: at every byte, MAPPED is below the heap; at a mean of
  ** 1 GiB (seed 1), nothing here is sampled. */
  n = mapped_run(0, 1, &first, &last, &heap);
  ck_assert_uint_ge(n, 1);
  ck_assert_uint_gt(last, 0);
  n = mapped_run(0, (size_t)1 << 30, &first, &last, &heap);
  ck_assert_uint_ge(n, 1);
  ck_assert_uint_ge(last, heap);
  ck_assert_uint_eq(mapped_run(1, 0, &first, &last, &heap), 0);
  ck_assert_uint_eq(mapped_run(1, 1, &first, &last, &heap), 0);
}
END_TEST

/*
** Sampling names a prototype or trace when a sample first needs it: 2000
** chunks loaded and run, JIT on, at a mean no allocation reaches, leave
** almost nothing in the stream; at every byte, every name is there.
*/
static void sampled_chunks(size_t mean, mpr_stats *st)
{
  lua_State *L = newvm();
  membuf m = {0};
  ljmprof_opt opt;
  char err[256];
  memset(&opt, 0, sizeof(opt));
  opt.writer = mem_write;
  opt.ctx = &m;
  opt.sample = mean;
  opt.seed = 3;
  ck_assert_int_eq(ljmprof_start(L, &opt), LJMPROF_OK);
  run(L, "@chunks.lua",
      "local keep = {}\n"
      "for i = 1, 2000 do\n"
      "  local f = load('local t = {} for j = 1, 60 do t[j] = {j} end "
      "return t', '=chunk' .. i)\n"
      "  keep[i % 10] = f()\n"
      "end\n");
  ck_assert_int_eq(ljmprof_stop(L), LJMPROF_OK);
  memset(st, 0, sizeof(*st));
  ck_assert_int_eq(mpr_parse(m.data, m.len, st, err, sizeof(err)), 0);
  ck_assert_int_eq(st->complete, 1);
  ck_assert_uint_eq(st->unresolved, 0);
  free(m.data);
  lua_close(L);
}

START_TEST(sampled_names_lazily)
{
  mpr_stats st;
  sampled_chunks((size_t)1 << 30, &st);
  ck_assert_uint_lt(st.symevents, 20);
  mpr_free(&st);
  sampled_chunks(1, &st);
  ck_assert_uint_ge(st.symevents, 2000);	/* Each chunk, as it allocates. */
  mpr_free(&st);
}
END_TEST

/*
** Sampling a VM with its own allocator (luaL_newstate): the counter is
** the VM's and the sampled blocks come from a range of their own, so
** that the VM tells their frees by the address alone (lj_memprof.c,
** "Sampled blocks in a range of their own"). Every sampled block of the
** stream is in that range, each free or reallocation of one is written
** once, of no other block, and the estimate from a fixed seed is within
** 10% of the bytes an exact profile of the same run counts. The blocks
** outlive the profiler: the VM frees and resizes them after it stopped,
** under a profiler of every event, and sampled again.
*/
#define ARENA_LO ((uint64_t)1 << 40)
#define ARENA_HI ((uint64_t)1 << 41)
#if defined(__SANITIZE_ADDRESS__) || UINTPTR_MAX <= 0xffffffffu
/* ASan's shadow gap holds those addresses: the range cannot be reserved,
** and sampling falls back to wrapping the allocator (the sanitizer build
** checks that fallback with the same rules, but for the addresses). A
** 32-bit address space (i386, armhf: tests/build/cross.sh) has no
** such addresses at all: the writer builds no range there. */
#define ARENA_EXPECTED 0
#else
#define ARENA_EXPECTED 1
#endif

static const char range_code[] =
  "local keep, parts = {}, {}\n"
  "for i = 1, 4000 do\n"
  "  local t = {}\n"
  "  for j = 1, i % 40 do t[j] = j end\n"   /* Arrays that grow. */
  "  parts[#parts + 1] = ('x'):rep(i % 300)\n"
  "  if #parts > 50 then keep[i % 97] = table.concat(parts); parts = {} end\n"
  "  keep[i % 89 + 100] = t\n"
  "end\n"
  "collectgarbage()\n";

/* Check a sampled stream against the rules above; its estimated bytes
** and number of samples. live: the sampled blocks left, in and out. */
static size_t range_check(const membuf *m, uint64_t mean, double *est,
			  uint64_t **live, size_t *nlive)
{
  struct mp_reader *mr = mp_reader_new_mem(m->data, m->len);
  struct mp_event ev;
  enum mp_status s;
  size_t samples = 0, i;
  ck_assert_ptr_nonnull(mr);
  *est = 0;
  while ((s = mp_reader_next(mr, &ev)) == MP_OK) {
    if (mp_event_is_symbol(ev.type)) continue;
    ck_assert_int_ne(ev.type, MP_EV_REALLOC);  /* A free and an alloc. */
    if (ev.type == MP_EV_FREE) {
      for (i = 0; i < *nlive && (*live)[i] != ev.old_addr; i++) ;
      ck_assert_msg(i < *nlive, "free of 0x%llx, not a sampled block",
		    (unsigned long long)ev.old_addr);
      (*live)[i] = (*live)[--*nlive];
    } else if (ev.type == MP_EV_ALLOC) {
      ck_assert_msg(!ARENA_EXPECTED ||
		    (ev.new_addr >= ARENA_LO && ev.new_addr < ARENA_HI),
		    "sampled block at 0x%llx, not in the range",
		    (unsigned long long)ev.new_addr);
      /* A block of the range follows its 16-byte header (16-aligned);
      ** without the range (32-bit, ASan) the sampled block is the VM's
      ** allocator's own: lj_alloc.c aligns to 8 (MALLOC_ALIGNMENT) on
      ** every target, so i386's come 8-aligned, not 16. */
      ck_assert_uint_eq(ev.new_addr % (ARENA_EXPECTED ? 16 : 8), 0);
      *live = realloc(*live, (*nlive + 1) * sizeof(**live));
      (*live)[(*nlive)++] = ev.new_addr;
      *est += (double)ev.new_size / -expm1(-(double)ev.new_size /
					   (double)mean);
      samples++;
    }
  }
  ck_assert_int_eq(s, MP_END);
  mp_reader_free(mr);
  return samples;
}

/* Bytes of allocations and reallocations in an exact stream. */
static double range_exact(const membuf *m)
{
  struct mp_reader *mr = mp_reader_new_mem(m->data, m->len);
  struct mp_event ev;
  double bytes = 0;
  ck_assert_ptr_nonnull(mr);
  while (mp_reader_next(mr, &ev) == MP_OK)
    if (ev.type == MP_EV_ALLOC || ev.type == MP_EV_REALLOC)
      bytes += (double)ev.new_size;
  mp_reader_free(mr);
  return bytes;
}

START_TEST(sampled_blocks_in_range)
{
  lua_State *L;
  membuf m = {0}, m2 = {0}, full = {0};
  ljmprof_opt opt;
  uint64_t *live = NULL;
  size_t nlive = 0, n, n2;
  double est, est2, exact;
  /* The exact bytes of the run, then the same run sampled. */
  fixed_seed = 1;
  L = newvm();
  start(L, &full, 0);
  run(L, "@range.lua", range_code);
  ck_assert_int_eq(ljmprof_stop(L), LJMPROF_OK);
  exact = range_exact(&full);
  lua_close(L);
  L = newvm();
  memset(&opt, 0, sizeof(opt));
  opt.writer = mem_write;
  opt.ctx = &m;
  opt.sample = 4096;
  opt.seed = 7;
  ck_assert_int_eq(ljmprof_start(L, &opt), LJMPROF_OK);
  run(L, "@range.lua", range_code);
  ck_assert_int_eq(ljmprof_stop(L), LJMPROF_OK);
  fixed_seed = 0;
  n = range_check(&m, 4096, &est, &live, &nlive);
  ck_assert_uint_gt(n, 200);
  ck_assert_uint_gt(nlive, 0);  /* Kept blocks: the VM still holds them. */
  ck_assert_msg(fabs(est - exact) < 0.1 * exact,
		"estimated %.0f bytes of %.0f", est, exact);
  /* No profiler: the kept blocks are resized and freed all the same. */
  run(L, "=after", "keep = nil; collectgarbage(); collectgarbage()");
  /* A profiler of every event sees their frees as untracked. */
  start(L, &full, 0);
  run(L, "@range.lua", range_code);
  ck_assert_int_eq(ljmprof_stop(L), LJMPROF_OK);
  /* Sampled again, every allocation: the range is the VM's still. */
  memset(&opt, 0, sizeof(opt));
  opt.writer = mem_write;
  opt.ctx = &m2;
  opt.sample = 1;
  opt.seed = 9;
  ck_assert_int_eq(ljmprof_start(L, &opt), LJMPROF_OK);
  run(L, "@range.lua", range_code);
  ck_assert_int_eq(ljmprof_stop(L), LJMPROF_OK);
  nlive = 0;
  n2 = range_check(&m2, 1, &est2, &live, &nlive);
  ck_assert_uint_gt(n2, 8000);
  run(L, "=after", "collectgarbage()");
  lua_close(L);
  free(live);
  free(m.data);
  free(m2.data);
  free(full.data);
}
END_TEST

/*
** A host that caps its VM's memory puts a wrapper over the pair that
** lua_getallocf gives. Sampled or not, it sees the calls it sees without
** a profiler: every block made after it goes through it, none of the
** sampled blocks' range, whether it was there before the sampled profiler
** started or came after (the profiler samples through it from the next
** sample on; the blocks sampled before it are freed through it, as the
** VM allocator's blocks from before it are without a profiler). Its count
** of bytes at the end is the same as without a profiler, to the byte: the
** seed is fixed, so the collector's pace repeats.
*/
static lua_Alloc cap_inner;
static void *cap_ud;
static unsigned long cap_calls, cap_ranged;
static int64_t cap_held;
static void *cap_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
  void *nptr;
  ck_assert_ptr_eq(ud, &cap_calls);
  cap_calls++;
  nptr = cap_inner(cap_ud, ptr, osize, nsize);
  if (nptr == NULL && nsize != 0) return NULL;
  if ((uint64_t)(uintptr_t)nptr >= ARENA_LO &&
      (uint64_t)(uintptr_t)nptr < ARENA_HI)
    cap_ranged++;
  cap_held += (int64_t)nsize - (ptr != NULL ? (int64_t)osize : 0);
  return nptr;
}

static void cap_install(lua_State *L)
{
  cap_inner = lua_getallocf(L, &cap_ud);
  lua_setallocf(L, cap_alloc, &cap_calls);
}

/* Read a sampled stream: each free of a block it sampled; its samples in
** the range and out of it. */
static void cap_check(const membuf *m, size_t *in, size_t *out)
{
  struct mp_reader *mr = mp_reader_new_mem(m->data, m->len);
  struct mp_event ev;
  enum mp_status st;
  uint64_t *live = NULL;
  size_t nlive = 0, i;
  ck_assert_ptr_nonnull(mr);
  *in = *out = 0;
  while ((st = mp_reader_next(mr, &ev)) == MP_OK) {
    if (ev.type == MP_EV_FREE) {
      for (i = 0; i < nlive && live[i] != ev.old_addr; i++) ;
      ck_assert_msg(i < nlive, "free of 0x%llx, not a sampled block",
		    (unsigned long long)ev.old_addr);
      live[i] = live[--nlive];
    } else if (ev.type == MP_EV_ALLOC) {
      if (ev.new_addr >= ARENA_LO && ev.new_addr < ARENA_HI) (*in)++;
      else (*out)++;
      live = realloc(live, (nlive + 1) * sizeof(*live));
      live[nlive++] = ev.new_addr;
    }
  }
  ck_assert_int_eq(st, MP_END);
  mp_reader_free(mr);
  free(live);
}

/*
** One run: the host's wrapper before range_code (first) or after it, a
** profiler sampling at a mean of 4 bytes (m not NULL) from before
** range_code; the host's count once the VM is closed.
*/
static int64_t cap_run(int first, membuf *m)
{
  lua_State *L;
  void *ud;
  fixed_seed = 1;
  L = newvm();
  cap_calls = cap_ranged = 0;
  cap_held = 0;
  if (first) cap_install(L);
  if (m != NULL) {
    ljmprof_opt opt;
    memset(&opt, 0, sizeof(opt));
    opt.writer = mem_write;
    opt.ctx = m;
    opt.sample = 4;
    opt.seed = 5;
    ck_assert_int_eq(ljmprof_start(L, &opt), LJMPROF_OK);
  }
  run(L, "@cap.lua", range_code);
  if (!first) cap_install(L);
  run(L, "@cap2.lua", "local t = {} for i = 1, 3000 do t[i] = {i} end"
		      " collectgarbage()");
  if (m != NULL) {
    ck_assert_int_eq(ljmprof_running(L), 1);
    ck_assert_int_eq(ljmprof_stop(L), LJMPROF_OK);
  }
  ck_assert_ptr_eq(lua_getallocf(L, &ud), cap_alloc);  /* The host's. */
  run(L, "=after", "collectgarbage()");
  lua_close(L);
  fixed_seed = 0;
  ck_assert_uint_gt(cap_calls, 3000);
  ck_assert_uint_eq(cap_ranged, 0);
  return cap_held;
}

START_TEST(sampled_under_host_allocator)
{
  membuf m = {0};
  size_t in, out;
  int64_t plain, held;
  /* The host's wrapper first, then the profiler: it wraps the host's. */
  plain = cap_run(1, NULL);
  held = cap_run(1, &m);
  ck_assert_int_eq(held, plain);
  cap_check(&m, &in, &out);
  ck_assert_uint_eq(in, 0);
  ck_assert_uint_gt(out, 8000);
  free(m.data);
  memset(&m, 0, sizeof(m));
  /* The profiler first, blocks sampled in the range and kept, then the
  ** host's wrapper: the samples after it go through it. */
  plain = cap_run(0, NULL);
  held = cap_run(0, &m);
  ck_assert_int_eq(held, plain);
  cap_check(&m, &in, &out);
  if (ARENA_EXPECTED) ck_assert_uint_gt(in, 8000);
  ck_assert_uint_gt(out, 3000);
  free(m.data);
}
END_TEST

/* range_code's exact bytes: a VM profiled with every event. */
static double range_exact_run(void)
{
  double exact;
  membuf full = {0};
  lua_State *L = newvm();
  start(L, &full, 0);
  run(L, "@range.lua", range_code);
  ck_assert_int_eq(ljmprof_stop(L), LJMPROF_OK);
  exact = range_exact(&full);
  free(full.data);
  lua_close(L);
  return exact;
}

/* VM v of a series: a new VM sampling range_code at a mean of 4096
** bytes; its samples in the range and out of it, and its estimate
** within 15% of exact. */
static void range_sampled_vm(int v, double exact, size_t *in, size_t *out)
{
  membuf m = {0};
  ljmprof_opt opt;
  double est = 0;
  struct mp_reader *mr;
  struct mp_event ev;
  lua_State *L = newvm();
  memset(&opt, 0, sizeof(opt));
  opt.writer = mem_write;
  opt.ctx = &m;
  opt.sample = 4096;
  opt.seed = (unsigned long long)v + 11;
  ck_assert_int_eq(ljmprof_start(L, &opt), LJMPROF_OK);
  run(L, "@range.lua", range_code);
  ck_assert_int_eq(ljmprof_stop(L), LJMPROF_OK);
  lua_close(L);
  cap_check(&m, in, out);
  mr = mp_reader_new_mem(m.data, m.len);
  ck_assert_ptr_nonnull(mr);
  while (mp_reader_next(mr, &ev) == MP_OK)
    if (ev.type == MP_EV_ALLOC)
      est += (double)ev.new_size / -expm1(-(double)ev.new_size / 4096.0);
  mp_reader_free(mr);
  ck_assert_msg(fabs(est - exact) < 0.15 * exact,
		"VM %d: estimated %.0f bytes of %.0f", v, est, exact);
  free(m.data);
}

/*
** VMs that sample one after another each keep at least 1 MiB of the
** range for good: a million of them use up its 1 TiB. Past that, each
** goes on sampling through the wrapper, as documented, the same
** estimates from blocks of the VM's allocator. The range is made small
** here, so that a few VMs use it up.
*/
#if ARENA_EXPECTED
extern size_t lj_memprof_range_max;
#endif
START_TEST(sampled_range_used_up)
{
  int v, wrapped = 0;
  double exact = range_exact_run();
#if ARENA_EXPECTED
  lj_memprof_range_max = (size_t)3 << 20;
#endif
  for (v = 0; v < 8; v++) {  /* The estimate holds either way. */
    size_t in, out;
    range_sampled_vm(v, exact, &in, &out);
    ck_assert_msg(in + out > 200, "VM %d: %zu samples", v, in + out);
    if (in == 0) wrapped++;
  }
#if ARENA_EXPECTED
  lj_memprof_range_max = (size_t)1 << 40;
#endif
  ck_assert_int_ge(wrapped, 4);  /* Past the range (ASan: all of them). */
}
END_TEST

/*
** The range is reserved as it is used, 4 GiB first (under qemu-user a
** whole 1 TiB at once cost 7 s and 6 GB a process). Here the first part
** is 1 MiB: VMs that sample one after another, each keeping 1 MiB chunks
** of it, make it grow, next to itself, and every sample is in it (none
** through the wrapper), with its estimates. /proc/self/maps shows the
** range reserved past its first MiB, in one piece from its base.
*/
#if ARENA_EXPECTED
extern size_t lj_memprof_range_first;

/* The end of the mappings that follow one another from ARENA_LO. */
static uint64_t range_reserved_end(void)
{
  FILE *f = fopen("/proc/self/maps", "r");
  char line[512];
  uint64_t end = ARENA_LO;
  int moved = 1;
  ck_assert_ptr_nonnull(f);
  while (moved) {  /* The kernel merges some parts, not all: follow them. */
    moved = 0;
    rewind(f);
    while (fgets(line, sizeof(line), f)) {
      unsigned long long lo, hi;
      if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && lo == end) {
	end = hi;
	moved = 1;
      }
    }
  }
  fclose(f);
  return end;
}
#endif

START_TEST(sampled_range_grows)
{
#if ARENA_EXPECTED
  int v;
  double exact;
  lj_memprof_range_first = (size_t)1 << 20;
  exact = range_exact_run();
  for (v = 0; v < 6; v++) {
    size_t in, out;
    range_sampled_vm(v, exact, &in, &out);
    ck_assert_msg(in > 200 && out == 0, "VM %d: %zu samples in the range, "
		  "%zu out of it", v, in, out);
  }
  /* Six VMs, a chunk of 1 MiB each at least: grown from 1 MiB to 8. */
  ck_assert_msg(range_reserved_end() >= ARENA_LO + ((uint64_t)6 << 20),
		"the range is reserved up to 0x%llx",
		(unsigned long long)range_reserved_end());
  lj_memprof_range_first = (size_t)1 << 32;
#endif
}
END_TEST

/* -- Call stacks ------------------------------------------------------------ */

/* The node bound (lj_memprof.c); hidden, but linked in here. */
extern uint32_t lj_memprof_nodes_max;

/* C_RESUME(co): lua_resume from C, which must yield. */
static int cf_resume_yield(lua_State *L)
{
  lua_State *co = lua_tothread(L, 1);
  ck_assert_int_eq(lua_resume(co, 0), LUA_YIELD);
  return 0;
}

/* Run code under name with stacks of depth (leaf-first names), parse. */
static void stack_run(const char *setup, const char *name, const char *code,
		      int depth, mpr_stats *st)
{
  lua_State *L = newvm();
  membuf m = {0};
  lua_pushcfunction(L, cf_resume_yield);
  lua_setglobal(L, "C_RESUME");
  if (setup) run(L, "=setup", setup);
  stack_depth = depth;
  mpr_leafnames = 0;  /* Whole stacks. */
  start(L, &m, 0);
  run(L, name, code);
  finish(L, &m, st);
  ck_assert_int_eq(st->ext, 1);
  ck_assert_int_eq(st->first_info, 1);  /* DEPTH comes first, */
  ck_assert_uint_eq(st->info[1], (uint64_t)depth);  /* and says it. */
  lua_close(L);
}

START_TEST(stack_frames_named)
{
  mpr_stats st;
  stack_run(NULL, "@st.lua",
	    "local function leaf(n)\n"			/* 1 */
	    "  local s = string.rep('x', n)\n"		/* 2 */
	    "  return s\n"				/* 3 */
	    "end\n"					/* 4 */
	    "local function mid(n)\n"			/* 5 */
	    "  local t = {}\n"				/* 6 */
	    "  t.s = leaf(n)\n"				/* 7 */
	    "  return t\n"				/* 8 */
	    "end\n"					/* 9 */
	    "for i = 1, 3 do KEEP = mid(100 + i) end\n",	/* 10 */
	    LJMPROF_STACK_DEPTH_DEFAULT, &st);
  ck_count(&st, MPR_ALLOC,
	   "string.rep < leaf(@st.lua:2) < mid(@st.lua:7) < (@st.lua:10)", 3);
  ck_count(&st, MPR_ALLOC, "mid(@st.lua:6) < (@st.lua:10)", 3);
  /* Every node announced once: the three rounds share them. */
  ck_assert_uint_le(st.nodes, 12);
  ck_assert_uint_gt(st.stackevents, 0);
  mpr_free(&st);
}
END_TEST

/*
** A frame entered by a tail call is named by the call its caller made, as
** LuaJIT's traceback names it (A, tail-called by C, is "C"); a direct call
** of A from the same line is its own frame, named A, whichever comes
** first.
*/
START_TEST(stack_tailcall_named)
{
  mpr_stats st;
  stack_run("jit.off()", "@tc.lua",
	    "local function A(i) return {i} end\n"		/* 1 */
	    "local function C(i) return A(i) end\n"		/* 2 */
	    "for i = 1, 200 do\n"				/* 3 */
	    "  local x = i % 2 == 0 and C(i) or A(i)\n"	/* 4 */
	    "end\n",						/* 5 */
	    LJMPROF_STACK_DEPTH_DEFAULT, &st);
  ck_count(&st, MPR_ALLOC, "C(@tc.lua:1) < (@tc.lua:4)", 100);
  ck_count(&st, MPR_ALLOC, "A(@tc.lua:1) < (@tc.lua:4)", 100);
  mpr_free(&st);
}
END_TEST

/* The same function at the same depth under two callers: the frames
** below the top are told apart, not taken from the last stack. */
START_TEST(stack_same_depth_callers)
{
  mpr_stats st;
  stack_run(NULL, "@sd.lua",
	    "local function leaf() local t = {} return t end\n"	/* 1 */
	    "local function mid() local r = leaf() return r end\n"	/* 2 */
	    "local function a() local r = mid() return r end\n"	/* 3 */
	    "local function c() local r = mid() return r end\n"	/* 4 */
	    "for i = 1, 3 do KEEP = a() KEEP2 = c() end\n",	/* 5 */
	    LJMPROF_STACK_DEPTH_DEFAULT, &st);
  ck_count(&st, MPR_ALLOC,
	   "leaf(@sd.lua:1) < mid(@sd.lua:2) < a(@sd.lua:3) < (@sd.lua:5)", 3);
  ck_count(&st, MPR_ALLOC,
	   "leaf(@sd.lua:1) < mid(@sd.lua:2) < c(@sd.lua:4) < (@sd.lua:5)", 3);
  mpr_free(&st);
}
END_TEST

/* Deeper than the limit: exactly DEPTH frames under a CUT root. */
START_TEST(stack_recursion_cut)
{
  mpr_stats st;
  stack_run(NULL, "@r.lua",
	    "local function rec(k)\n"			/* 1 */
	    "  if k == 0 then\n"			/* 2 */
	    "    local t = {}\n"			/* 3 */
	    "    return t\n"				/* 4 */
	    "  end\n"					/* 5 */
	    "  local r = rec(k - 1)\n"			/* 6 */
	    "  return r\n"				/* 7 */
	    "end\n"					/* 8 */
	    "KEEP = rec(10)\n"				/* 9 */
	    "KEEP2 = rec(2)\n",				/* 10 */
	    4, &st);
  ck_count(&st, MPR_ALLOC, "rec(@r.lua:3) < rec(@r.lua:6) < rec(@r.lua:6) < "
	   "rec(@r.lua:6) < CUT", 1);
  ck_count(&st, MPR_ALLOC, "rec(@r.lua:3) < rec(@r.lua:6) < rec(@r.lua:6) < "
	   "(@r.lua:10)", 1);
  mpr_free(&st);
}
END_TEST

/* A tail call replaces its caller's frame; the name is the caller's. */
START_TEST(stack_tail_call)
{
  mpr_stats st;
  stack_run(NULL, "@tc.lua",
	    "local function mk() local t = {} return t end\n"	/* 1 */
	    "local function via() return mk() end\n"		/* 2 */
	    "local function top() local r = via() return r end\n" /* 3 */
	    "KEEP = top()\n",					/* 4 */
	    LJMPROF_STACK_DEPTH_DEFAULT, &st);
  ck_count(&st, MPR_ALLOC, "via(@tc.lua:1) < top(@tc.lua:3) < (@tc.lua:4)", 1);
  mpr_free(&st);
}
END_TEST

START_TEST(stack_pcall_xpcall)
{
  mpr_stats st;
  stack_run(NULL, "@p.lua",
	    "local function mk(n)\n"			/* 1 */
	    "  local t = {}\n"				/* 2 */
	    "  return t\n"				/* 3 */
	    "end\n"					/* 4 */
	    "local ok, a = pcall(mk, 1)\n"		/* 5 */
	    "local ok2, b = xpcall(mk, print, 2)\n"	/* 6 */
	    "KEEP = {a, b}\n",				/* 7 */
	    LJMPROF_STACK_DEPTH_DEFAULT, &st);
  ck_count(&st, MPR_ALLOC, "(@p.lua:2) < pcall < (@p.lua:5)", 1);
  ck_count(&st, MPR_ALLOC, "(@p.lua:2) < xpcall < (@p.lua:6)", 1);
  mpr_free(&st);
}
END_TEST

/* An error unwinds through frames; the next stack shares none of them. */
START_TEST(stack_after_error)
{
  mpr_stats st;
  stack_run(NULL, "@e.lua",
	    "local function bad() local t = {} error('boom') end\n" /* 1 */
	    "local function f() bad() end\n"			/* 2 */
	    "local ok = pcall(f)\n"				/* 3 */
	    "local function g() local t = {} return t end\n"	/* 4 */
	    "local function h() local r = g() return r end\n"	/* 5 */
	    "KEEP = h()\n",					/* 6 */
	    LJMPROF_STACK_DEPTH_DEFAULT, &st);
  ck_count(&st, MPR_ALLOC,
	   "bad(@e.lua:1) < (@e.lua:2) < pcall < (@e.lua:3)", 1);
  ck_assert_uint_gt(mpr_count(&st, MPR_ALLOC,
		    "error < bad(@e.lua:1) < (@e.lua:2) < pcall < (@e.lua:3)"),
		    0);
  ck_count(&st, MPR_ALLOC, "g(@e.lua:4) < h(@e.lua:5) < (@e.lua:6)", 1);
  mpr_free(&st);
}
END_TEST

/* A coroutine's stack goes on into the frame that resumed it. */
START_TEST(stack_coroutines)
{
  mpr_stats st;
  stack_run(NULL, "@c.lua",
	    "local function mk() local t = {} return t end\n"	/* 1 */
	    "local inner = coroutine.create(function()\n"	/* 2 */
	    "  local t = mk()\n"				/* 3 */
	    "  coroutine.yield(t)\n"				/* 4 */
	    "end)\n"						/* 5 */
	    "local outer = coroutine.create(function()\n"	/* 6 */
	    "  local ok, t = coroutine.resume(inner)\n"		/* 7 */
	    "  coroutine.yield(t)\n"				/* 8 */
	    "end)\n"						/* 9 */
	    "local ok, t = coroutine.resume(outer)\n"		/* 10 */
	    "local w = coroutine.wrap(function()\n"		/* 11 */
	    "  local u = mk()\n"				/* 12 */
	    "  return u\n"					/* 13 */
	    "end)\n"						/* 14 */
	    "KEEP = {t, w()}\n",				/* 15 */
	    LJMPROF_STACK_DEPTH_DEFAULT, &st);
  ck_count(&st, MPR_ALLOC, "mk(@c.lua:1) < (@c.lua:3) < coroutine.resume < "
	   "(@c.lua:7) < coroutine.resume < (@c.lua:10)", 1);
  ck_count(&st, MPR_ALLOC, "mk(@c.lua:1) < (@c.lua:12) < coroutine.wrap_aux < "
	   "(@c.lua:15)", 1);
  mpr_free(&st);
}
END_TEST

/* A scheduler coroutine resumes a handler coroutine that resumes a
** third: the handler is seen under the scheduler that runs it. */
START_TEST(stack_coroutine_scheduler)
{
  mpr_stats st;
  stack_run(NULL, "@k.lua",
	    "local function mk() local t = {} return t end\n"	/* 1 */
	    "local third = coroutine.create(function()\n"	/* 2 */
	    "  local t = mk()\n"				/* 3 */
	    "  coroutine.yield(t)\n"				/* 4 */
	    "end)\n"						/* 5 */
	    "local function handler()\n"			/* 6 */
	    "  local ok, t = coroutine.resume(third)\n"		/* 7 */
	    "  local u = {}\n"					/* 8 */
	    "  coroutine.yield({t, u})\n"			/* 9 */
	    "end\n"						/* 10 */
	    "local function scheduler(co)\n"			/* 11 */
	    "  local ok, t = coroutine.resume(co)\n"		/* 12 */
	    "  return t\n"					/* 13 */
	    "end\n"						/* 14 */
	    "local sched = coroutine.create(function()\n"	/* 15 */
	    "  local h = coroutine.create(handler)\n"		/* 16 */
	    "  local t = scheduler(h)\n"			/* 17 */
	    "  coroutine.yield(t)\n"				/* 18 */
	    "end)\n"						/* 19 */
	    "local ok, t = coroutine.resume(sched)\n"		/* 20 */
	    "KEEP = t\n",					/* 21 */
	    LJMPROF_STACK_DEPTH_DEFAULT, &st);
  ck_count(&st, MPR_ALLOC, "mk(@k.lua:1) < (@k.lua:3) < coroutine.resume < "
	   "(@k.lua:7) < coroutine.resume < scheduler(@k.lua:12) < (@k.lua:17) < "
	   "coroutine.resume < (@k.lua:20)", 1);
  ck_count(&st, MPR_ALLOC, "(@k.lua:8) < coroutine.resume < "
	   "scheduler(@k.lua:12) < (@k.lua:17) < coroutine.resume < (@k.lua:20)",
	   1);
  /* Cut within the chain: the depth counts the resumers' frames. */
  stack_run(NULL, "@k.lua",
	    "local function mk() local t = {} return t end\n"	/* 1 */
	    "local co = coroutine.create(function()\n"		/* 2 */
	    "  local t = mk()\n"				/* 3 */
	    "  coroutine.yield(t)\n"				/* 4 */
	    "end)\n"						/* 5 */
	    "local function drive() local ok, t = coroutine.resume(co) "
	    "return t end\n"					/* 6 */
	    "KEEP = drive()\n",					/* 7 */
	    4, &st);
  ck_count(&st, MPR_ALLOC, "mk(@k.lua:1) < (@k.lua:3) < coroutine.resume < "
	   "drive(@k.lua:6) < CUT", 1);
  mpr_free(&st);
}
END_TEST

/*
** One coroutine resumed in turn by the same call in the main thread,
** directly and through another coroutine: its own frames and those of
** the main thread are the same each time, the chain of resumers is not.
*/
START_TEST(stack_coroutine_two_resumers)
{
  mpr_stats st;
  stack_run(NULL, "@tr.lua",
	    "local function mk() local t = {} return t end\n"	/* 1 */
	    "local co = coroutine.create(function()\n"		/* 2 */
	    "  while true do coroutine.yield(mk()) end\n"	/* 3 */
	    "end)\n"						/* 4 */
	    "local function step(c) local ok, t = coroutine.resume(c) "
	    "return t end\n"					/* 5 */
	    "local r = coroutine.create(function()\n"		/* 6 */
	    "  while true do coroutine.yield(step(co)) end\n"	/* 7 */
	    "end)\n"						/* 8 */
	    "KEEP = {false, false, false, false, false, false}\n" /* 9 */
	    "for i = 1, 6 do\n"					/* 10 */
	    "  local c = i % 2 == 1 and co or r\n"		/* 11 */
	    "  KEEP[i] = step(c)\n"				/* 12 */
	    "end\n",						/* 13 */
	    LJMPROF_STACK_DEPTH_DEFAULT, &st);
  ck_count(&st, MPR_ALLOC, "mk(@tr.lua:1) < (@tr.lua:3) < coroutine.resume < "
	   "step(@tr.lua:5) < (@tr.lua:12)", 3);
  ck_count(&st, MPR_ALLOC, "mk(@tr.lua:1) < (@tr.lua:3) < coroutine.resume < "
	   "step(@tr.lua:5) < (@tr.lua:7) < coroutine.resume < step(@tr.lua:5) < "
	   "(@tr.lua:12)", 3);
  mpr_free(&st);
}
END_TEST

/* coroutine.wrap as a generator: each value is made under the
** generator's caller, through the wrap function. */
START_TEST(stack_coroutine_generator)
{
  mpr_stats st;
  stack_run(NULL, "@g.lua",
	    "local gen = coroutine.wrap(function()\n"		/* 1 */
	    "  for i = 1, 3 do\n"				/* 2 */
	    "    local t = {}\n"				/* 3 */
	    "    coroutine.yield(t)\n"				/* 4 */
	    "  end\n"						/* 5 */
	    "end)\n"						/* 6 */
	    "local function consume()\n"			/* 7 */
	    "  local a = gen()\n"				/* 8 */
	    "  return a\n"					/* 9 */
	    "end\n"						/* 10 */
	    "KEEP = {}\n"					/* 11 */
	    "for i = 1, 3 do KEEP[i] = consume() end\n",	/* 12 */
	    LJMPROF_STACK_DEPTH_DEFAULT, &st);
  ck_count(&st, MPR_ALLOC, "(@g.lua:3) < coroutine.wrap_aux < "
	   "consume(@g.lua:8) < (@g.lua:12)", 3);
  mpr_free(&st);
}
END_TEST

/* Resume a coroutine from C, allocate in it: no resumer is linked
** across C (lua_resume), in the main thread or in a coroutine. */
START_TEST(stack_coroutine_resumed_from_c)
{
  mpr_stats st;
  stack_run(NULL, "@rc.lua",
	    "local function mk() local t = {} return t end\n"	/* 1 */
	    "KEEP = {}\n"					/* 2 */
	    "local co = coroutine.create(function()\n"		/* 3 */
	    "  KEEP[#KEEP + 1] = mk()\n"			/* 4 */
	    "  coroutine.yield()\n"				/* 5 */
	    "end)\n"						/* 6 */
	    "local co2 = coroutine.create(function()\n"	/* 7 */
	    "  KEEP[#KEEP + 1] = mk()\n"			/* 8 */
	    "  coroutine.yield()\n"				/* 9 */
	    "end)\n"						/* 10 */
	    "C_RESUME(co)\n"					/* 11 */
	    "local outer = coroutine.wrap(function() C_RESUME(co2) end)\n" /* 12 */
	    "outer()\n",					/* 13 */
	    LJMPROF_STACK_DEPTH_DEFAULT, &st);
  ck_count(&st, MPR_ALLOC, "mk(@rc.lua:1) < (@rc.lua:4)", 1);
  ck_count(&st, MPR_ALLOC, "mk(@rc.lua:1) < (@rc.lua:8)", 1);
  mpr_free(&st);
}
END_TEST

/* A coroutine that errors while resumed: its frames and its resumer's
** while the error is raised; the next stack shares none of them. */
static void stack_coroutine_error(const char *setup)
{
  mpr_stats st;
  stack_run(setup, "@ce.lua",
	    "local function bad() local t = {} error('boom') end\n" /* 1 */
	    "local co = coroutine.create(function() bad() end)\n"	/* 2 */
	    "local function run()\n"				/* 3 */
	    "  local ok, e = coroutine.resume(co)\n"		/* 4 */
	    "  return e\n"					/* 5 */
	    "end\n"						/* 6 */
	    "E = run()\n"					/* 7 */
	    "local function g() local t = {} return t end\n"	/* 8 */
	    "KEEP = g()\n"					/* 9 */
	    "KEEP2 = {coroutine.resume(co)}\n",			/* 10 */
	    LJMPROF_STACK_DEPTH_DEFAULT, &st);
  ck_count(&st, MPR_ALLOC, "bad(@ce.lua:1) < (@ce.lua:2) < coroutine.resume < "
	   "run(@ce.lua:4) < (@ce.lua:7)", 1);
  ck_assert_uint_gt(mpr_count(&st, MPR_ALLOC, "error < bad(@ce.lua:1) < "
			      "(@ce.lua:2) < coroutine.resume < run(@ce.lua:4) "
			      "< (@ce.lua:7)"), 0);
  ck_count(&st, MPR_ALLOC, "g(@ce.lua:8) < (@ce.lua:9)", 1);
  mpr_free(&st);
}

START_TEST(stack_coroutine_error_jit_on)
{
  stack_coroutine_error("jit.on()");
}
END_TEST

START_TEST(stack_coroutine_error_jit_off)
{
  stack_coroutine_error("jit.off()");
}
END_TEST

/* A trace in a coroutine: its stack goes on into the resumer too. */
START_TEST(stack_coroutine_trace)
{
  mpr_stats st;
  unsigned long interp, traced;
  stack_run("jit.on() jit.flush() jit.opt.start('hotloop=5')", "@ct.lua",
	    "local co = coroutine.create(function()\n"		/* 1 */
	    "  local t = require('table.new')(200, 0)\n"	/* 2 */
	    "  for i = 1, 200 do t[i] = {} end\n"		/* 3 */
	    "  return t\n"					/* 4 */
	    "end)\n"						/* 5 */
	    "local function drive()\n"				/* 6 */
	    "  local ok, t = coroutine.resume(co)\n"		/* 7 */
	    "  return t\n"					/* 8 */
	    "end\n"						/* 9 */
	    "KEEP = drive()\n",					/* 10 */
	    LJMPROF_STACK_DEPTH_DEFAULT, &st);
  interp = mpr_count(&st, MPR_ALLOC, "(@ct.lua:3) < coroutine.resume < "
		     "drive(@ct.lua:7) < (@ct.lua:10)");
  /* The trace at its site, the line 3 of its start frame. */
  traced = mpr_count(&st, MPR_ALLOC, "TRACE [1] at @ct.lua:3 < (@ct.lua:3) < "
		     "coroutine.resume < drive(@ct.lua:7) < (@ct.lua:10)");
  if (interp + traced != 200 || interp == 0 || traced == 0) mpr_dump(&st);
  ck_assert_uint_eq(interp + traced, 200);
  ck_assert_uint_gt(interp, 0);
  ck_assert_uint_gt(traced, 0);
  mpr_free(&st);
}
END_TEST

/*
** Many coroutines created and collected between events, some of them
** the last stack's: nothing of a collected thread is read again (the
** sanitizer build checks it), and every stack still links.
*/
START_TEST(stack_coroutines_collected)
{
  mpr_stats st;
  stack_run("jit.off()", "@cc.lua",
	    "KEEP = {}\n"						/* 1 */
	    "local function one(i)\n"					/* 2 */
	    "  local co = coroutine.create(function(x)\n"		/* 3 */
	    "    local t = {x}\n"					/* 4 */
	    "    coroutine.yield(t)\n"				/* 5 */
	    "  end)\n"						/* 6 */
	    "  local ok, t = coroutine.resume(co, i)\n"		/* 7 */
	    "  return t\n"						/* 8 */
	    "end\n"							/* 9 */
	    "for i = 1, 2000 do\n"					/* 10 */
	    "  KEEP[i % 10 + 1] = one(i)\n"				/* 11 */
	    "  if i % 50 == 0 then collectgarbage() end\n"		/* 12 */
	    "end\n",							/* 13 */
	    LJMPROF_STACK_DEPTH_DEFAULT, &st);
  ck_count(&st, MPR_ALLOC, "(@cc.lua:4) < coroutine.resume < one(@cc.lua:7) "
	   "< (@cc.lua:11)", 2000);
  mpr_free(&st);
}
END_TEST

/*
** Chunks loaded, run once and collected, thousands of them: the writer
** forgets the nodes of collected code (their prototypes' addresses are
** new prototypes'), never those of the code that stays, and every stack
** is still right.
*/
START_TEST(stack_loaded_chunks_collected)
{
  mpr_stats st;
  stack_run("jit.off()", "@lc.lua",
	    "KEEP = {}\n"						/* 1 */
	    "local function call(f) local r = f() return r end\n"	/* 2 */
	    "for i = 1, 3000 do\n"					/* 3 */
	    "  local f = load('local t = {} return t', '=chunk')\n"	/* 4 */
	    "  KEEP[i % 8 + 1] = call(f)\n"				/* 5 */
	    "  if i % 100 == 0 then collectgarbage() end\n"		/* 6 */
	    "end\n"							/* 7 */
	    "local function mk() local t = {} return t end\n"	/* 8 */
	    "for i = 1, 3 do KEEP[i] = mk() end\n",			/* 9 */
	    LJMPROF_STACK_DEPTH_DEFAULT, &st);
  ck_count(&st, MPR_ALLOC, "f(=chunk:1) < call(@lc.lua:2) < (@lc.lua:5)",
	   3000);
  ck_count(&st, MPR_ALLOC, "mk(@lc.lua:8) < (@lc.lua:9)", 3);
  /* One node a chunk, and the few of the loop, each announced once. */
  if (st.nodes < 3000 || st.nodes > 3000 + 12) mpr_dump(&st);
  ck_assert_uint_ge(st.nodes, 3000);
  ck_assert_uint_le(st.nodes, 3000 + 12);
  mpr_free(&st);
}
END_TEST

/* An FFI callback: its frames end at the callback (the C frames below
** are not Lua's). */
START_TEST(stack_ffi_callback)
{
  mpr_stats st;
  stack_run("ffi = require('ffi') ffi.cdef[[void qsort(void *, size_t, "
	    "size_t, int (*)(const void *, const void *));]]", "@f.lua",
	    "CB = {}\n"						/* 1 */
	    "local function mk() local t = {} return t end\n"	/* 2 */
	    "local cb = ffi.cast('int (*)(const void *, const void *)',\n" /* 3 */
	    "  function(a, b) CB[#CB + 1] = mk() return 0 end)\n" /* 4 */
	    "local arr = ffi.new('int[4]', 4, 3, 2, 1)\n"	/* 5 */
	    "ffi.C.qsort(arr, 4, 4, cb)\n"			/* 6 */
	    "cb:free()\n",					/* 7 */
	    LJMPROF_STACK_DEPTH_DEFAULT, &st);
  ck_assert_uint_gt(mpr_count(&st, MPR_ALLOC, "mk(@f.lua:2) < (@f.lua:4)"), 0);
  ck_assert_uint_eq(mpr_count_prefix(&st, MPR_ALLOC,
				     "mk(@f.lua:2) < (@f.lua:4) <"), 0);
  mpr_free(&st);
}
END_TEST

/* A hook that allocates: its frames go on into the function it
** interrupted (whose line the C call below hides: 0). */
START_TEST(stack_hook)
{
  mpr_stats st;
  stack_run(NULL, "@h.lua",
	    "HK = {}\n"						/* 1 */
	    "local function hook() local t = {} HK[#HK + 1] = t end\n" /* 2 */
	    "local function work()\n"				/* 3 */
	    "  local x = 0\n"					/* 4 */
	    "  return x\n"					/* 5 */
	    "end\n"						/* 6 */
	    "debug.sethook(hook, 'l')\n"			/* 7 */
	    "work()\n"						/* 8 */
	    "debug.sethook()\n",				/* 9 */
	    LJMPROF_STACK_DEPTH_DEFAULT, &st);
  ck_count(&st, MPR_ALLOC, "(@h.lua:2) < work(@h.lua:0) < (@h.lua:8)", 2);
  mpr_free(&st);
}
END_TEST

/* Metamethods: named by the instruction that called them. */
START_TEST(stack_metamethods)
{
  mpr_stats st;
  stack_run(NULL, "@m.lua",
	    "local mt = {}\n"					/* 1 */
	    "mt.__index = function(t, k) local v = {} return v end\n" /* 2 */
	    "mt.__concat = function(a, b) local v = {} return v end\n" /* 3 */
	    "local obj = setmetatable({}, mt)\n"		/* 4 */
	    "local function use()\n"				/* 5 */
	    "  local a = obj.missing\n"				/* 6 */
	    "  local c = obj .. 'x'\n"				/* 7 */
	    "  return a, c\n"					/* 8 */
	    "end\n"						/* 9 */
	    "A, C = use()\n"					/* 10 */
	    "local u = newproxy(true)\n"			/* 11 */
	    "getmetatable(u).__gc = function() GCK = {} end\n"	/* 12 */
	    "u = nil\n"						/* 13 */
	    "collectgarbage()\n",				/* 14 */
	    LJMPROF_STACK_DEPTH_DEFAULT, &st);
  ck_count(&st, MPR_ALLOC, "__index(@m.lua:2) < use(@m.lua:6) < (@m.lua:10)", 1);
  ck_count(&st, MPR_ALLOC, "__concat(@m.lua:3) < use(@m.lua:7) < (@m.lua:10)",
	   1);
  ck_count(&st, MPR_ALLOC, "(@m.lua:12) < collectgarbage < (@m.lua:14)", 1);
  mpr_free(&st);
}
END_TEST

/* One line, interpreted and then compiled: the trace's stack goes on
** into the frame the trace runs in, and its site names the line of the
** function it inlined (the frames recorded with it, patch 0012). */
START_TEST(stack_interpreted_then_compiled)
{
  mpr_stats st;
  unsigned long interp, traced;
  stack_run("jit.on() jit.flush() jit.opt.start('hotloop=5')\n"
	    "T = require('table.new')(200, 0)", "@jit.lua",
	    "local t = T\n"				/* 1 */
	    "local function mk() local x = {} return x end\n" /* 2 */
	    "for i = 1, 200 do\n"			/* 3 */
	    "  t[i] = mk()\n"				/* 4 */
	    "end\n",					/* 5 */
	    LJMPROF_STACK_DEPTH_DEFAULT, &st);
  interp = mpr_count(&st, MPR_ALLOC, "mk(@jit.lua:2) < (@jit.lua:4)");
  traced = mpr_count(&st, MPR_ALLOC, "TRACE [1] at @jit.lua:2 < (@jit.lua:3)");
  if (interp + traced != 200 || interp == 0 || traced == 0) mpr_dump(&st);
  ck_assert_uint_eq(interp + traced, 200);
  ck_assert_uint_gt(interp, 0);
  ck_assert_uint_gt(traced, 0);
  mpr_free(&st);
}
END_TEST

/* A side trace that returned below the function it started in (work's
** loop: it ends, work returns to the chunk) and inlined mk there: mk's
** tables are named by mk's line, called from line 8, never by the trace
** over the chunk's frame at no line. */
START_TEST(stack_trace_returned_below)
{
  mpr_stats st;
  unsigned long named, total = 0;
  size_t i;
  stack_run("jit.on() jit.flush() jit.opt.start('hotloop=5')\n"
	    "K = require('table.new')(400, 0)", "@rb.lua",
	    "local K = K\n"					/* 1 */
	    "local function mk(i) K[i] = {i} end\n"		/* 2 */
	    "local function work(i)\n"				/* 3 */
	    "  local s = 0 for j = 1, 20 do s = s + j end return s\n" /* 4 */
	    "end\n"						/* 5 */
	    "for i = 1, 400 do\n"				/* 6 */
	    "  work(i)\n"					/* 7 */
	    "  mk(i)\n"						/* 8 */
	    "end\n",						/* 9 */
	    LJMPROF_STACK_DEPTH_DEFAULT, &st);
  named = mpr_count(&st, MPR_ALLOC, "mk(@rb.lua:2) < (@rb.lua:8)");
  for (i = 0; i < st.nrows; i++)
    if (st.rows[i].ev == MPR_ALLOC && strstr(st.rows[i].loc, "@rb.lua:0"))
      total += st.rows[i].count;
  if (named != 400 || total != 0) mpr_dump(&st);
  ck_assert_uint_eq(total, 0);
  ck_assert_uint_eq(named, 400);
  mpr_free(&st);
}
END_TEST

/* A full node table: said once, later stacks keep their leaf under the
** full root (named by FULL_ROOT), the count comes at the end, and every
** event still parses. */
START_TEST(stack_node_bound)
{
  mpr_stats st;
  lj_memprof_nodes_max = 3;
  stack_run(NULL, "@b.lua",
	    "local function mk() local t = {} return t end "
	    "local function a() local r = mk() return r end\n"	/* 1 */
	    "KEEP = {} for i = 1, 5 do KEEP[i] = a() end\n",	/* 2 */
	    LJMPROF_STACK_DEPTH_DEFAULT, &st);
  lj_memprof_nodes_max = LJM_STACK_NODES_MAX;
  ck_assert_uint_eq(st.ninfo[4], 1);		/* NODES_FULL, once, */
  ck_assert_uint_eq(st.info[4], 3);		/* at 3 nodes. */
  ck_assert_uint_eq(st.ninfo[5], 1);		/* CUT_EVENTS at the end. */
  ck_assert_uint_eq(st.ninfo[7], 1);		/* One full root, */
  ck_assert_uint_eq(st.info[7], 4);		/* the next node. */
  /* Nodes: line 1, line 2, a under it, then the full root and mk under
  ** it: mk's tables keep their line, never charged to a's. */
  ck_assert_uint_eq(st.nodes, 5);
  ck_count(&st, MPR_ALLOC, "mk(@b.lua:1) < CUT(full)", 5);
  ck_count(&st, MPR_ALLOC, "a(@b.lua:1) < (@b.lua:2)", 0);
  ck_assert_uint_eq(st.info[5], 5);
  mpr_free(&st);
}
END_TEST

/* Allocations by the line of @r.lua they are charged to (the leaf, or
** a built-in's caller): into byline[line], the others into byline[0]. */
static void stack_bylines(const mpr_stats *st, unsigned long *byline,
			  int nlines)
{
  size_t i;
  memset(byline, 0, nlines * sizeof(*byline));
  for (i = 0; i < st->nrows; i++) {
    const mpr_row *w = &st->rows[i];
    const char *f = w->loc, *c;
    int line = 0;
    if (w->ev != MPR_ALLOC) continue;
    if (!strncmp(f, "string.rep" MPR_SEP, 10 + strlen(MPR_SEP)))
      f += 10 + strlen(MPR_SEP);
    c = strstr(f, "(@r.lua:");
    if (c && (strstr(f, MPR_SEP) == NULL || c < strstr(f, MPR_SEP)))
      line = atoi(c + 8);
    byline[line > 0 && line < nlines ? line : 0] += w->count;
  }
}

/*
** Many more call paths than nodes (recursion down one of two branches
** at each level, 2^10 paths): every allocation keeps its own line,
** whether its stack got nodes or was cut, so each line counts what it
** counts with room for every path; lines that only call count nothing.
*/
START_TEST(stack_full_leaf_exact)
{
  static const char code[] =
    "local leaf, f\n"						/* 1 */
    "function leaf() local t = {} KEEP[#KEEP+1] = t "
    "KEEP[#KEEP+1] = string.rep('y', 40 + #KEEP) end\n"		/* 2 */
    "local function g(d, n) if d == 0 then leaf() return 0 end\n"	/* 3 */
    "  if n % 2 == 0 then f(d - 1, n / 2) else g(d - 1, (n - 1) / 2) end\n"
    "  return 0 end\n"						/* 5 */
    "function f(d, n) g(d, n) return 0 end\n"			/* 6 */
    "KEEP = {} for i = 0, 1023 do f(10, i) end\n";		/* 7 */
  mpr_stats st, big;
  unsigned long want[9], got[9];
  int l;
  stack_run("jit.off()", "@r.lua", code, LJMPROF_STACK_DEPTH_DEFAULT, &big);
  ck_assert_uint_eq(big.ninfo[4], 0);		/* Room for every path. */
  stack_bylines(&big, want, 9);
  lj_memprof_nodes_max = 64;
  stack_run("jit.off()", "@r.lua", code, LJMPROF_STACK_DEPTH_DEFAULT, &st);
  lj_memprof_nodes_max = LJM_STACK_NODES_MAX;
  stack_bylines(&st, got, 9);
  ck_assert_uint_eq(st.ninfo[4], 1);		/* The table filled, */
  ck_assert_uint_gt(st.info[5], 512);		/* most stacks were cut. */
  ck_assert_uint_ge(want[2], 2048);		/* 1024 tables, strings. */
  for (l = 0; l < 9; l++) {
    if (got[l] != want[l]) mpr_dump(&st);
    ck_assert_msg(got[l] == want[l], "line %d: %lu allocations, %lu with "
		  "room for every path", l, got[l], want[l]);
  }
  mpr_free(&big);
  mpr_free(&st);
}
END_TEST

static uint64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
** Time marks: 0 after DEPTH, then one when 4 ms and 16 KiB of output have
** passed (never more often), never backwards, and the last at the end,
** after every event, within the time the run took.
*/
START_TEST(stack_time_marks)
{
  mpr_stats st;
  uint64_t t0 = now_ns(), dt;
  stack_run(NULL, "@t.lua",
	    "local t0, n = os.clock(), 0\n"
	    "while os.clock() - t0 < 0.05 do KEEP = {n} n = n + 1 end\n",
	    LJMPROF_STACK_DEPTH_DEFAULT, &st);
  dt = now_ns() - t0;
  ck_assert_uint_ge(st.ninfo[2], 3);
  ck_assert_uint_le(st.ninfo[2], dt / 4000000u + 2);
  ck_assert_uint_eq(st.time_backwards, 0);
  ck_assert_uint_ge(st.info[2], 50000000u);	/* CPU time <= wall time. */
  ck_assert_uint_le(st.info[2], dt);
  ck_assert_uint_eq(st.events_timed, st.events);
  mpr_free(&st);
}
END_TEST

/* No extension, no marks: the version-3 stream has no clock. */
START_TEST(leaf_stream_has_no_time)
{
  lua_State *L = newvm();
  membuf m = {0};
  mpr_stats st;
  stack_depth = 0;
  start(L, &m, 0);
  run(L, "@t.lua", "for i = 1, 100000 do KEEP = {i} end\n");
  finish(L, &m, &st);
  ck_assert_int_eq(st.ext, 0);
  ck_assert_uint_eq(st.ninfo[2], 0);
  mpr_free(&st);
  lua_close(L);
}
END_TEST

/*
** Trace call sites (issue 25): an allocation from compiled code is charged
** to its line, as the interpreter charges it. site_run runs code with the
** JIT on (hotloop 5) or off, stacks on, and names each event by its leaf.
*/
static void site_run(const char *setup, const char *name, const char *code,
		     int jit, mpr_stats *st)
{
  lua_State *L = newvm();
  membuf m = {0};
  lua_pushcfunction(L, cf_tables);
  lua_setglobal(L, "cf_tables");
  run(L, "=jit", jit ? "jit.on() jit.flush() jit.opt.start('hotloop=5')"
		     : "jit.off() jit.flush()");
  if (setup) run(L, "=setup", setup);
  stack_depth = LJMPROF_STACK_DEPTH_DEFAULT;
  mpr_leafnames = 1;
  start(L, &m, 0);
  run(L, name, code);
  finish(L, &m, st);
  ck_assert_int_eq(st->ext, 1);
  lua_close(L);
}

/* Each line's count with the JIT on is the count with it off, and n. */
static void site_same(const mpr_stats *on, const mpr_stats *off,
		      const char *loc, unsigned long n)
{
  unsigned long a = mpr_count(on, MPR_ALLOC, loc);
  unsigned long b = mpr_count(off, MPR_ALLOC, loc);
  if (a != b || a < n - n / 10) mpr_dump(on);
  ck_assert_msg(a == b && a >= n - n / 10, "%s: %lu events with the JIT, %lu"
		" without, about %lu expected", loc, a, b, n);
}

/* Three lines of one trace allocate (a table, a string, and a table in a
** small function the trace inlines, after a store there): each line
** gets its own count, the -joff one. */
static const char site_lines_code[] =
  "local sink = {}\n"				/* 1 */
  "local function mk(i)\n"			/* 2 */
  "  sink.n = i\n"				/* 3 */
  "  return {i, i}\n"				/* 4 */
  "end\n"					/* 5 */
  "for i = 1, 2000 do\n"			/* 6 */
  "  sink[1] = {i}\n"				/* 7 */
  "  sink[2] = 'x' .. i\n"			/* 8 */
  "  sink[3] = mk(i)\n"				/* 9 */
  "end\n";					/* 10 */

START_TEST(stack_site_lines)
{
  mpr_stats on, off;
  site_run(NULL, "@s.lua", site_lines_code, 1, &on);
  site_run(NULL, "@s.lua", site_lines_code, 0, &off);
  site_same(&on, &off, "@s.lua:7", 2000);
  site_same(&on, &off, "@s.lua:8", 2000);
  site_same(&on, &off, "@s.lua:4", 2000);
  ck_assert_uint_gt(on.ntraces, 0);
  ck_assert_uint_gt(on.sites, 0);
  ck_assert_uint_gt(on.sitenodes, 0);
  ck_assert_uint_eq(off.sites, 0);
  ck_assert_uint_eq(on.unresolved, 0);
  mpr_free(&on);
  mpr_free(&off);
}
END_TEST

/* The inlined function's line is the trace frame's site: with whole
** stacks, the TRACE frame names it (the reports make it a frame). */
START_TEST(stack_site_inlined)
{
  lua_State *L = newvm();
  membuf m = {0};
  mpr_stats st;
  unsigned long inl = 0, top = 0;
  size_t i;
  run(L, "=jit", "jit.on() jit.flush() jit.opt.start('hotloop=5')");
  stack_depth = LJMPROF_STACK_DEPTH_DEFAULT;
  mpr_leafnames = 0;
  start(L, &m, 0);
  run(L, "@s.lua", site_lines_code);
  finish(L, &m, &st);
  for (i = 0; i < st.nrows; i++) {
    const mpr_row *r = &st.rows[i];
    if (r->ev == MPR_ALLOC && !strncmp(r->loc, "TRACE [", 7)) {
      if (strstr(r->loc, "] at @s.lua:4" MPR_SEP "(@s.lua:6)")) inl += r->count;
      if (strstr(r->loc, "] at @s.lua:7" MPR_SEP "(@s.lua:6)")) top += r->count;
    }
  }
  if (inl < 1000 || top < 1000) mpr_dump(&st);
  ck_assert_uint_ge(inl, 1000);
  ck_assert_uint_ge(top, 1000);
  mpr_free(&st);
  lua_close(L);
}
END_TEST

/* A side trace (the branch taken once the loop runs compiled) and a
** lua_CFunction called from the loop (trace stitching): their lines are
** charged too, the C function's allocations stay its own. */
static const char site_side_code[] =
  "local sink, f = {}, cf_tables\n"		/* 1 */
  "for i = 1, 2000 do\n"			/* 2 */
  "  sink[1] = {i}\n"				/* 3 */
  "  if i > 500 then\n"				/* 4 */
  "    sink[2] = {i, i}\n"			/* 5 */
  "  end\n"					/* 6 */
  "  if i % 10 == 0 then f() end\n"		/* 7 */
  "  sink[3] = 'y' .. i\n"			/* 8 */
  "end\n";					/* 9 */

START_TEST(stack_site_side_stitch)
{
  mpr_stats on, off;
  site_run(NULL, "@side.lua", site_side_code, 1, &on);
  site_run(NULL, "@side.lua", site_side_code, 0, &off);
  site_same(&on, &off, "@side.lua:3", 2000);
  site_same(&on, &off, "@side.lua:5", 1500);
  site_same(&on, &off, "@side.lua:8", 2000);
  site_same(&on, &off, "cf_tables", 2000);
  ck_assert_uint_gt(on.ntraces, 1);
  mpr_free(&on);
  mpr_free(&off);
}
END_TEST

/* Traces compiled before profiling started: their sites are found the
** same way, announced at their first use. */
START_TEST(stack_site_compiled_before)
{
  mpr_stats on, off;
  const char *setup = "F = load([[" "local sink, k = {}, ...\n"
		      "for i = 1, 1000 do\n"
		      "  sink[1] = {i}\n"
		      "  sink[2] = 'z' .. (i + k)\n"
		      "end]], '@pre.lua') F(0)";
  site_run(setup, "=again", "F(5000)", 1, &on);
  site_run(setup, "=again", "F(5000)", 0, &off);
  ck_assert_uint_ge(on.startsyms[2], 1);
  site_same(&on, &off, "@pre.lua:3", 1000);
  site_same(&on, &off, "@pre.lua:4", 1000);
  mpr_free(&on);
  mpr_free(&off);
}
END_TEST

/* jit.flush() while profiling: the next trace under the same number, in
** other code, names its own lines, not the flushed trace's sites. */
START_TEST(stack_site_flush)
{
  mpr_stats on, off;
  const char *code =
    "local sink = {}\n"				/* 1 */
    "for i = 1, 1000 do\n"			/* 2 */
    "  sink[1] = {i}\n"				/* 3 */
    "  sink[2] = 'a' .. i\n"			/* 4 */
    "end\n"					/* 5 */
    "jit.flush()\n"				/* 6 */
    "local s = 0\n"				/* 7 */
    "for i = 1, 1000 do\n"			/* 8 */
    "  s = s + i\n"				/* 9 */
    "  sink[3] = 'b' .. i\n"			/* 10 */
    "  sink[4] = {i, s}\n"			/* 11 */
    "end\n";					/* 12 */
  site_run(NULL, "@fl.lua", code, 1, &on);
  site_run(NULL, "@fl.lua", code, 0, &off);
  site_same(&on, &off, "@fl.lua:3", 1000);
  site_same(&on, &off, "@fl.lua:4", 1000);
  site_same(&on, &off, "@fl.lua:10", 1000);
  site_same(&on, &off, "@fl.lua:11", 1000);
  ck_assert_uint_eq(on.unresolved, 0);
  mpr_free(&on);
  mpr_free(&off);
}
END_TEST

/* Bad depths are refused; misc.memprof.start takes the option. */
START_TEST(stack_options)
{
  lua_State *L = newvm();
  membuf m = {0};
  ljmprof_opt opt;
  mpr_stats st;
  char err[256];
  memset(&opt, 0, sizeof(opt));
  opt.writer = mem_write;
  opt.ctx = &m;
  opt.stack_depth = -1;
  ck_assert_int_eq(ljmprof_start(L, &opt), LJMPROF_ERRUSE);
  opt.stack_depth = LJMPROF_STACK_DEPTH_MAX + 1;
  ck_assert_int_eq(ljmprof_start(L, &opt), LJMPROF_ERRUSE);
  ck_assert_int_eq(ljmprof_running(L), 0);
  run(L, "=misc",
      "local path = os.tmpname()\n"
      "assert(misc.memprof.start(path, {stacks = true}))\n"
      "KEEP = {}\n"
      "assert(misc.memprof.stop())\n"
      "assert(misc.memprof.start{path, stacks = 7})\n"
      "assert(misc.memprof.stop())\n"
      "assert(not pcall(misc.memprof.start, path, {stacks = 'many'}))\n"
      "assert(not pcall(misc.memprof.start, path, {stacks = 2000}))\n"
      "PATH = path\n");
  lua_getglobal(L, "PATH");
  ck_assert_int_eq(mpr_parse_file(lua_tostring(L, -1), &st, err,
				  sizeof(err)), 0);
  ck_assert_int_eq(st.ext, 1);
  ck_assert_uint_eq(st.info[1], 7);
  ck_assert_int_eq(st.complete, 1);
  unlink(lua_tostring(L, -1));
  mpr_free(&st);
  lua_close(L);
  free(m.data);
}
END_TEST

/* -- Object kinds ------------------------------------------------------------ */

/*
** N objects of each kind, made by a loop that the JIT compiles (tables,
** strings, cdata: ffi.new in a trace is IR CNEW) and by one it cannot
** (closures, upvalues, coroutines, userdata). K is made before the
** profiler starts, big enough that it never grows.
*/
#define KINDS_N 300
static const char kinds_code[] =
  "local K, N, ffi = K, N, ffi\n"
  "local n = 0\n"
  "for i = 1, N do\n"
  "  K[n+1] = {}\n"
  "  K[n+2] = 'k' .. i\n"
  "  K[n+3] = ffi.new('int[4]')\n"
  "  n = n + 3\n"
  "end\n"
  "for i = 1, N do\n"
  "  local u = i\n"
  "  K[n+1] = function() return u end\n"
  "  K[n+2] = coroutine.create(K[n+1])\n"
  "  K[n+3] = newproxy(false)\n"
  "  n = n + 3\n"
  "end\n";

static void check_kinds(int jit)
{
  lua_State *L = newvm();
  membuf m = {0};
  mpr_stats st;
  char setup[256];
  snprintf(setup, sizeof(setup),
	   "N = %d ffi = require('ffi') K = require('table.new')(6*N, 0)"
	   " local _ = ffi.new('int[4]'), newproxy(false), 'k' .. 0"
	   " jit.%s() jit.flush() jit.opt.start('hotloop=5')",
	   KINDS_N, jit ? "on" : "off");
  run(L, "=setup", setup);
  luaL_loadbuffer(L, kinds_code, sizeof(kinds_code) - 1, "@kinds.lua");
  start(L, &m, 0);
  ck_assert_int_eq(lua_pcall(L, 0, 0, 0), 0);
  finish(L, &m, &st);
  /* Every allocation and reallocation carries its kind. */
  ck_assert_uint_eq(st.nokind, 0);
  ck_assert_uint_eq(st.kinds[LJM_KIND_TAB], KINDS_N);
  ck_assert_uint_eq(st.kinds[LJM_KIND_STR], KINDS_N);
  ck_assert_uint_eq(st.kinds[LJM_KIND_CDATA], KINDS_N);
  ck_assert_uint_eq(st.kinds[LJM_KIND_LFUNC], KINDS_N);
  ck_assert_uint_eq(st.kinds[LJM_KIND_UPVAL], KINDS_N);
  ck_assert_uint_eq(st.kinds[LJM_KIND_THREAD], KINDS_N);
  ck_assert_uint_eq(st.kinds[LJM_KIND_STACK], KINDS_N);
  ck_assert_uint_eq(st.kinds[LJM_KIND_UDATA], KINDS_N);
  ck_assert_uint_eq(st.kinds[LJM_KIND_TAB_ARRAY], 0);
  ck_assert_uint_eq(st.kinds[LJM_KIND_PROTO], 0);
  if (jit) {
    /* The first loop ran as a trace: its objects came from there (the
    ** cdata through lj_cdata_newgco), the compiler's own memory too. */
    ck_assert_uint_gt(st.kinds_trace[LJM_KIND_TAB], KINDS_N / 2);
    ck_assert_uint_gt(st.kinds_trace[LJM_KIND_STR], KINDS_N / 2);
    ck_assert_uint_gt(st.kinds_trace[LJM_KIND_CDATA], KINDS_N / 2);
    ck_assert_uint_gt(st.kinds[LJM_KIND_TRACE], 0);
    ck_assert_uint_gt(st.kinds[LJM_KIND_JIT], 0);
  } else {
    ck_assert_uint_eq(st.kinds[LJM_KIND_TRACE], 0);
    ck_assert_uint_eq(st.kinds[LJM_KIND_JIT], 0);
  }
  mpr_free(&st);
  lua_close(L);
}

START_TEST(kinds_jit_off)
{
  check_kinds(0);
}
END_TEST

START_TEST(kinds_jit_on)
{
  check_kinds(1);
}
END_TEST

/* -- Start snapshot ------------------------------------------------------------ */

/*
** An allocator that knows every live block of its VM, to hold the start
** snapshot against: each block the snapshot names must be live, once,
** with the size the VM will free it with.
*/
#define SNAP_SLOTS (1u << 18)
/* A flag in a recorded size (the top but one bit of a size_t: no block
** is that big, on 32 bits either). */
#define SNAP_SEEN ((size_t)1 << (sizeof(size_t) * 8 - 2))
typedef struct snaptrack {
  uintptr_t addr[SNAP_SLOTS];	/* 0: empty, 1: deleted. */
  size_t size[SNAP_SLOTS];
  size_t live, bytes;
  lua_State *L;			/* Start a profiler inside the allocator, */
  unsigned long calls, startat;	/* at this call, */
  unsigned long started, frees;	/* how many times, in a free; */
  unsigned long deferred;	/* calls of the string sweep passed. */
} snaptrack;

static size_t snap_slot(snaptrack *t, uintptr_t a, int add)
{
  size_t i = (size_t)((a >> 4) * 0x9e3779b97f4a7c15ull >> 46) & (SNAP_SLOTS-1);
  size_t del = SNAP_SLOTS;
  for (;; i = (i + 1) & (SNAP_SLOTS-1)) {
    if (t->addr[i] == a) return i;
    if (t->addr[i] == 1 && del == SNAP_SLOTS) del = i;
    if (t->addr[i] == 0) return add && del != SNAP_SLOTS ? del : i;
  }
}

static void snap_check(lua_State *L, snaptrack *t, mpr_stats *st, int exact);

static void *snap_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
  snaptrack *t = (snaptrack *)ud;
  void *n;
  if (++t->calls == t->startat) {  /* As the shim starts one: */
    if (ljmprof_insweep(t->L)) {  /* not in the string sweep. */
      t->startat++;
      t->deferred++;
    } else {
      mpr_stats st;
      t->startat = 0;
      if (nsize == 0) {  /* Told the block it frees, as by the shim. */
	ljmprof_freeing = ptr;
	ljmprof_freesize = osize;
      }
      snap_check(t->L, t, &st, nsize != 0);
      ljmprof_freeing = NULL;
      mpr_free(&st);
      t->started++;
      t->frees += nsize == 0;
    }
  }
  if (ptr != NULL) {
    size_t i = snap_slot(t, (uintptr_t)ptr, 0);
    ck_assert_uint_eq(t->addr[i], (uintptr_t)ptr);
    ck_assert_uint_eq(t->size[i], osize);
    t->addr[i] = 1;
    t->live--;
    t->bytes -= osize;
  }
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  n = realloc(ptr, nsize);
  ck_assert_ptr_nonnull(n);
  {
    size_t i = snap_slot(t, (uintptr_t)n, 1);
    t->addr[i] = (uintptr_t)n;
    t->size[i] = nsize;
    t->live++;
    t->bytes += nsize;
  }
  return n;
}

#define SNAP_N 200
static const char snap_code[] =
  "local N = ...\n"
  "S = {}\n"
  "for i = 1, N do S[#S+1] = {i, i, i} end\n"	/* Colocated array. */
  "for i = 1, N do S[#S+1] = 'snapshot string ' .. i end\n"
  "for i = 1, N do\n"
  "  local u = i\n"
  "  S[#S+1] = function() return u end\n"
  "end\n"
  "for i = 1, N do local g = {} for j = 1, 20 do g[j] = j end end\n"
  "function F(n) local s = 0 for i = 1, n do s = s + #tostring(i) end end\n"
  "F(N)\n";  /* Its trace lives as long as F. */

/* Start a stack profiler, take its snapshot, stop; check it against t:
** every live block in it (exact), or all but those of a free's string
** sweep. */
static void snap_check(lua_State *L, snaptrack *t, mpr_stats *st, int exact)
{
  membuf m = {0};
  ljmprof_opt opt;
  char err[256];
  size_t i, live = t->live, bytes = t->bytes;
  memset(&opt, 0, sizeof(opt));
  opt.stack_depth = 8;
  opt.writer = mem_write;
  opt.ctx = &m;
  ck_assert_int_eq(ljmprof_start(L, &opt), LJMPROF_OK);
  ck_assert_int_eq(ljmprof_stop(L), LJMPROF_OK);
  ck_assert_int_eq(mpr_parse(m.data, m.len, st, err, sizeof(err)), 0);
  free(m.data);
  ck_assert_int_eq(st->complete, 1);
  ck_assert_int_eq(st->unresolved, 0);
  ck_assert_uint_eq(st->snaps, 1);
  ck_assert_int_eq(st->insnap, 0);
  ck_assert_uint_eq(st->snapother, 0);
  for (i = 0; i < st->nsnap; i++) {
    size_t k = snap_slot(t, (uintptr_t)st->snap[i].addr, 0);
    if (t->addr[k] != st->snap[i].addr)
      ck_abort_msg("snapshot block %#llx (kind %d, %llu bytes) is not live",
		   (unsigned long long)st->snap[i].addr, st->snap[i].kind,
		   (unsigned long long)st->snap[i].size);
    ck_assert_uint_eq(t->size[k], st->snap[i].size);
    t->size[k] |= SNAP_SEEN;  /* Seen: a second time fails above. */
  }
  for (i = 0; i < SNAP_SLOTS; i++) t->size[i] &= ~SNAP_SEEN;
  /* Nothing was allocated while it was taken; what it may leave out is
  ** the chain a string sweep is at, inside one of its frees. */
  ck_assert_uint_eq(t->live, live);
  ck_assert_uint_eq(t->bytes, bytes);
  if (exact) {
    ck_assert_uint_eq(st->snapblocks, live);
    ck_assert_uint_eq(st->snapbytes, bytes);
  }
  ck_assert_uint_le(st->snapblocks, live);
  ck_assert_uint_le(st->snapbytes, bytes);
  ck_assert_uint_ge(st->snapbytes, bytes - bytes / 8);
}

static lua_State *snap_vm(snaptrack *t, int jit)
{
  lua_State *L = lua_newstate(snap_alloc, t);
  ck_assert_ptr_nonnull(L);
  luaL_openlibs(L);
  luaJIT_setmode(L, 0, (jit ? LUAJIT_MODE_ON : LUAJIT_MODE_OFF) |
		 LUAJIT_MODE_ENGINE);
  luaL_loadbuffer(L, snap_code, sizeof(snap_code) - 1, "@snap.lua");
  lua_pushinteger(L, SNAP_N);
  ck_assert_int_eq(lua_pcall(L, 1, 0, 0), 0);
  return L;
}

/* The objects made before the start, with their kinds and sizes. */
static void check_snapshot(int jit)
{
  snaptrack *t = calloc(1, sizeof(snaptrack));
  lua_State *L = snap_vm(t, jit);
  mpr_stats st;
  ck_assert_ptr_nonnull(t);
  lua_gc(L, LUA_GCCOLLECT, 0);
  snap_check(L, t, &st, 1);
  ck_assert_uint_ge(st.snapkinds[LJM_KIND_TAB], SNAP_N);
  ck_assert_uint_ge(st.snapkinds[LJM_KIND_STR], SNAP_N);
  ck_assert_uint_ge(st.snapkinds[LJM_KIND_UPVAL], SNAP_N);
  ck_assert_uint_eq(st.snapkinds[LJM_KIND_THREAD], 0);  /* In GG_State. */
  ck_assert_uint_eq(st.snapkinds[LJM_KIND_STACK], 1);
  ck_assert_uint_eq(st.snapkinds[LJM_KIND_VM], 1);
  ck_assert_uint_eq(st.snapkinds[LJM_KIND_STRTAB], 1);
  /* The closures where they were defined, their prototype too. */
  ck_assert_uint_eq(mpr_count(&st, MPR_SNAP, "@snap.lua:7"), SNAP_N + 1);
  /* The main chunk was collected: neither its closure nor prototype. */
  ck_assert_uint_eq(mpr_count(&st, MPR_SNAP, "@snap.lua:0"), 0);
  /* None of it is an allocation of the run. */
  ck_assert_uint_eq(mpr_count(&st, MPR_ALLOC, "@snap.lua:7"), 0);
  if (jit) ck_assert_uint_gt(st.snapkinds[LJM_KIND_TRACE], 0);
  mpr_free(&st);
  lua_close(L);
  ck_assert_uint_eq(t->live, 0);
  free(t);
}

START_TEST(snapshot_jit_off)
{
  check_snapshot(0);
}
END_TEST

/*
** Snapshots on demand (misc.memprof.snapshot) in a profiler with stacks:
** each is a census of the heap then, which with the JIT off is exactly
** collectgarbage("count") read just before it; the 1000 tables made
** between the two are 1000 table blocks more in the second, and neither
** census is an event (the tables' allocations are).
*/
static void check_later_snapshot(int jit)
{
  lua_State *L = luaL_newstate();
  membuf m = {0};
  mpr_stats st;
  ljmprof_opt opt;
  double c1, c2;
  ck_assert_ptr_nonnull(L);
  luaL_openlibs(L);
  /* Off before any code: a JIT that compiled once keeps its buffers. */
  luaJIT_setmode(L, 0, (jit ? LUAJIT_MODE_ON : LUAJIT_MODE_OFF) |
		 LUAJIT_MODE_ENGINE);
  memset(&opt, 0, sizeof(opt));
  opt.stack_depth = 8;
  opt.writer = mem_write;
  opt.ctx = &m;
  ck_assert_int_eq(ljmprof_start(L, &opt), LJMPROF_OK);
  run(L, "@later.lua",
      "local keep = {}\n"
      "for i = 1, 1000 do keep[i] = false end\n"
      "collectgarbage() collectgarbage('stop')\n"
      "local c1 = collectgarbage('count')\n"
      "assert(misc.memprof.snapshot())\n"
      "for i = 1, 1000 do keep[i] = {} end\n"
      "local c2 = collectgarbage('count')\n"
      "assert(misc.memprof.snapshot())\n"
      "collectgarbage('restart')\n"
      "C1, C2, KEEP = c1, c2, keep\n");
  lua_getglobal(L, "C1");
  c1 = lua_tonumber(L, -1);
  lua_getglobal(L, "C2");
  c2 = lua_tonumber(L, -1);
  lua_pop(L, 2);
  finish(L, &m, &st);
  ck_assert_uint_eq(st.snaps, 1);
  ck_assert_uint_eq(st.laters, 2);
  ck_assert_uint_eq(st.snapother, 0);
  if (jit) {  /* Less the JIT's work buffers, never more. */
    ck_assert_uint_le(st.laterbytes[0], (uint64_t)(c1 * 1024));
    ck_assert_uint_ge(st.laterbytes[0] + 16384, (uint64_t)(c1 * 1024));
    ck_assert_uint_le(st.laterbytes[1], (uint64_t)(c2 * 1024));
    ck_assert_uint_ge(st.laterbytes[1] + 16384, (uint64_t)(c2 * 1024));
  } else {
    ck_assert_uint_eq(st.laterbytes[0], (uint64_t)(c1 * 1024));
    ck_assert_uint_eq(st.laterbytes[1], (uint64_t)(c2 * 1024));
  }
  ck_assert_uint_eq(st.laterkinds[1][LJM_KIND_TAB] -
		    st.laterkinds[0][LJM_KIND_TAB], 1000);
  /* The tables are events of the run, allocated between the two. */
  ck_assert_uint_ge(st.laterevents[1] - st.laterevents[0], 1000);
  ck_assert_uint_ge(st.kinds[LJM_KIND_TAB], 1000);
  mpr_free(&st);
  lua_close(L);
}

START_TEST(later_snapshot_jit_off)
{
  check_later_snapshot(0);
}
END_TEST

START_TEST(later_snapshot_jit_on)
{
  check_later_snapshot(1);
}
END_TEST

/* Without stacks, sampled, or without a profiler: no snapshot, said. */
START_TEST(later_snapshot_refused)
{
  lua_State *L = newvm();
  membuf m = {0};
  mpr_stats st;
  ljmprof_opt opt;
  run(L, "=none",
      "local ok, err, e = misc.memprof.snapshot()\n"
      "assert(ok == nil and err == 'profiler is not running' and e == 22)\n");
  memset(&opt, 0, sizeof(opt));
  opt.writer = mem_write;
  opt.ctx = &m;
  ck_assert_int_eq(ljmprof_start(L, &opt), LJMPROF_OK);
  ck_assert_int_eq(ljmprof_snapshot(L), LJMPROF_ERRUSE);
  run(L, "=leaf",
      "local ok, err, e = misc.memprof.snapshot()\n"
      "assert(ok == nil and err:find('no snapshots') and e == 22, err)\n");
  finish(L, &m, &st);
  ck_assert_uint_eq(st.laters, 0);
  mpr_free(&st);
  opt.sample = 4096;
  opt.stack_depth = 8;
  ck_assert_int_eq(ljmprof_start(L, &opt), LJMPROF_OK);
  ck_assert_int_eq(ljmprof_snapshot(L), LJMPROF_ERRUSE);
  finish(L, &m, &st);
  ck_assert_uint_eq(st.laters, 0);
  mpr_free(&st);
  lua_close(L);
}
END_TEST

START_TEST(snapshot_jit_on)
{
  check_snapshot(1);
}
END_TEST

/*
** A snapshot at every step of a GC cycle with garbage (atomic, the string
** sweep, the sweep, finalizers): each block it names is live (the sweep
** has not freed it yet) and is named once.
*/
START_TEST(snapshot_in_every_gc_phase)
{
  snaptrack *t = calloc(1, sizeof(snaptrack));
  lua_State *L;
  mpr_stats st;
  int cycles = 0, steps = 0;
  ck_assert_ptr_nonnull(t);
  L = snap_vm(t, 0);
  run(L, "=fin", "for i = 1, 50 do setmetatable({}, {__gc = function() end})"
		 " local p = newproxy(true) getmetatable(p).__gc = type end");
  lua_gc(L, LUA_GCCOLLECT, 0);
  while (cycles < 2 && steps < 20000) {
    if (steps % 7 == 0)  /* Garbage for the sweep: strings and tables. */
      run(L, "=garbage", "for i = 1, 30 do local s = {tostring(i) .. 'g'}"
			  " end S[#S+1] = 'x' .. #S");
    snap_check(L, t, &st, 1);
    mpr_free(&st);
    cycles += lua_gc(L, LUA_GCSTEP, 0);
    steps++;
  }
  ck_assert_int_eq(cycles, 2);
  ck_assert_int_gt(steps, 20);
  lua_close(L);
  free(t);
}
END_TEST

/*
** The profiler started from inside the VM's allocator, as the shim does
** (LJMPROF_DELAY, LJMPROF_SIGNAL): at calls spread over a run that makes
** garbage and steps the collector, many of them frees, none in its sweep
** of a string chain (a start there waits for the next call,
** ljmprof_insweep). The
** code is loaded once, before: the parser's buffers are held by its
** locals alone, and a snapshot taken while it runs leaves them out.
*/
START_TEST(snapshot_inside_allocator)
{
  snaptrack *t = calloc(1, sizeof(snaptrack));
  static const char code[] = "for i = 1, 40 do local s = {tostring(i) .."
    " 'g'} end S[#S+1] = 'x' .. #S local h = {} for j = 1, 9 do"
    " h['k' .. j] = j end collectgarbage('step')";
  unsigned long k;
  ck_assert_ptr_nonnull(t);
  t->L = snap_vm(t, 0);
  ck_assert_int_eq(luaL_loadbuffer(t->L, code, sizeof(code) - 1, "=garbage"),
		   0);
  for (k = 0; k < 300; k++) {
    t->startat = t->calls + 1 + (k * 37) % 101;
    lua_pushvalue(t->L, -1);
    if (lua_pcall(t->L, 0, 0, 0))
      ck_abort_msg("garbage: %s", lua_tostring(t->L, -1));
  }
  lua_pop(t->L, 1);
  ck_assert_uint_ge(t->started, 100);
  ck_assert_uint_ge(t->frees, 3);
  ck_assert_uint_ge(t->deferred, 1);  /* Some fell in the string sweep. */
  lua_close(t->L);
  free(t);
}
END_TEST

START_TEST(snapshot_not_in_version3)
{
  lua_State *L = newvm();
  membuf m = {0};
  mpr_stats st;
  ljmprof_opt opt;
  char err[256];
  memset(&opt, 0, sizeof(opt));
  opt.writer = mem_write;
  opt.ctx = &m;
  ck_assert_int_eq(ljmprof_start(L, &opt), LJMPROF_OK);
  ck_assert_int_eq(ljmprof_stop(L), LJMPROF_OK);
  ck_assert_int_eq(mpr_parse(m.data, m.len, &st, err, sizeof(err)), 0);
  ck_assert_uint_eq(st.events, 0);
  ck_assert_uint_eq(st.snaps, 0);
  free(m.data);
  mpr_free(&st);
  lua_close(L);
}
END_TEST

static void s_stacks(Suite *s)
{
  TCase *tc = tcase_create("stacks");
  tcase_set_timeout(tc, 60);
  tcase_add_checked_fixture(tc, stacks_on, NULL);
  /* The core tests again, on stack streams read by their leaves. */
  tcase_add_test(tc, table_of_strings);
  tcase_add_test(tc, worked_example_load);
  tcase_add_test(tc, worked_example_loadfile);
  tcase_add_test(tc, worked_example_require);
  tcase_add_test(tc, worked_example_dump);
  /* builtin_and_cfunction: a built-in called from C is a FAST frame. */
  tcase_add_test(tc, cmodule_required_midrun);
  tcase_add_test(tc, cfunction_named_when_used);
  tcase_add_test(tc, coroutine);
  tcase_add_test(tc, coroutine_resumed_from_c);
  tcase_add_test(tc, finalizer_on_another_thread);
  tcase_add_test(tc, stack_resize_is_internal);
  tcase_add_test(tc, error_caught_by_pcall);
  tcase_add_test(tc, resume_dead_or_running_jit_on);
  tcase_add_test(tc, resume_dead_or_running_jit_off);
  tcase_add_test(tc, error_across_lua_call_on_thread);
  tcase_add_test(tc, allocator_kept_by_module);
  tcase_add_test(tc, jit_trace);
  tcase_add_test(tc, cfunction_called_from_trace);
  tcase_add_test(tc, trace_alive_at_start);
  tcase_add_test(tc, stripped_bytecode_jit_off);
  tcase_add_test(tc, stripped_bytecode_jit_on);
  tcase_add_test(tc, stripped_bytecode_loaded_before);
  tcase_add_test(tc, proto_address_reuse);
  tcase_add_test(tc, two_vms_two_threads);
  tcase_add_test(tc, seal_from_another_thread);
  tcase_add_test(tc, failing_writer);
  tcase_add_test(tc, start_stop_twice);
  tcase_add_test(tc, close_while_profiling);
  tcase_add_test(tc, host_allocator_over_profiler);
  tcase_add_test(tc, poll_restart);
  tcase_add_test(tc, poll_stress);
  /* Stacks themselves. */
  tcase_add_test(tc, stack_frames_named);
  tcase_add_test(tc, stack_tailcall_named);
  tcase_add_test(tc, stack_same_depth_callers);
  tcase_add_test(tc, stack_recursion_cut);
  tcase_add_test(tc, stack_tail_call);
  tcase_add_test(tc, stack_pcall_xpcall);
  tcase_add_test(tc, stack_after_error);
  tcase_add_test(tc, stack_coroutines);
  tcase_add_test(tc, stack_coroutine_scheduler);
  tcase_add_test(tc, stack_coroutine_two_resumers);
  tcase_add_test(tc, stack_coroutine_generator);
  tcase_add_test(tc, stack_coroutine_resumed_from_c);
  tcase_add_test(tc, stack_coroutine_error_jit_on);
  tcase_add_test(tc, stack_coroutine_error_jit_off);
  tcase_add_test(tc, stack_coroutine_trace);
  tcase_add_test(tc, stack_coroutines_collected);
  tcase_add_test(tc, stack_loaded_chunks_collected);
  tcase_add_test(tc, stack_ffi_callback);
  tcase_add_test(tc, kinds_jit_off);
  tcase_add_test(tc, kinds_jit_on);
  tcase_add_test(tc, stack_hook);
  tcase_add_test(tc, stack_metamethods);
  tcase_add_test(tc, stack_interpreted_then_compiled);
  tcase_add_test(tc, stack_trace_returned_below);
  tcase_add_test(tc, stack_node_bound);
  tcase_add_test(tc, stack_full_leaf_exact);
  tcase_add_test(tc, stack_options);
  tcase_add_test(tc, stack_time_marks);
  tcase_add_test(tc, stack_site_lines);
  tcase_add_test(tc, stack_site_inlined);
  tcase_add_test(tc, stack_site_side_stitch);
  tcase_add_test(tc, stack_site_compiled_before);
  tcase_add_test(tc, stack_site_flush);
  tcase_add_test(tc, leaf_stream_has_no_time);
  suite_add_tcase(s, tc);
}

static void s_snapshot(Suite *s)
{
  TCase *tc = tcase_create("snapshot");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, snapshot_jit_off);
  tcase_add_test(tc, snapshot_jit_on);
  tcase_add_test(tc, later_snapshot_jit_off);
  tcase_add_test(tc, later_snapshot_jit_on);
  tcase_add_test(tc, later_snapshot_refused);
  tcase_add_test(tc, snapshot_in_every_gc_phase);
  tcase_add_test(tc, snapshot_inside_allocator);
  tcase_add_test(tc, snapshot_not_in_version3);
  suite_add_tcase(s, tc);
}

/* -- Suite ------------------------------------------------------------------- */

static Suite *memprof_suite(void)
{
  Suite *s = suite_create("memprof");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, table_of_strings);
  tcase_add_test(tc, worked_example_load);
  tcase_add_test(tc, worked_example_loadfile);
  tcase_add_test(tc, worked_example_require);
  tcase_add_test(tc, worked_example_dump);
  tcase_add_test(tc, builtin_and_cfunction);
  tcase_add_test(tc, cmodule_required_midrun);
  tcase_add_test(tc, cfunction_named_when_used);
  tcase_add_test(tc, coroutine);
  tcase_add_test(tc, coroutine_resumed_from_c);
  tcase_add_test(tc, finalizer_on_another_thread);
  tcase_add_test(tc, stack_resize_is_internal);
  tcase_add_test(tc, error_caught_by_pcall);
  tcase_add_test(tc, resume_dead_or_running_jit_on);
  tcase_add_test(tc, resume_dead_or_running_jit_off);
  tcase_add_test(tc, error_across_lua_call_on_thread);
  tcase_add_test(tc, allocator_kept_by_module);
  tcase_add_test(tc, jit_trace);
  tcase_add_test(tc, cfunction_called_from_trace);
  tcase_add_test(tc, trace_alive_at_start);
  tcase_add_test(tc, stripped_bytecode_jit_off);
  tcase_add_test(tc, stripped_bytecode_jit_on);
  tcase_add_test(tc, stripped_bytecode_loaded_before);
  tcase_add_test(tc, proto_address_reuse);
  tcase_add_test(tc, sampled_proto_address_reuse);
  tcase_add_test(tc, two_vms_two_threads);
  tcase_add_test(tc, seal_from_another_thread);
  tcase_add_test(tc, failing_writer);
  tcase_add_test(tc, start_stop_twice);
  tcase_add_test(tc, misc_memprof_under_host);
  tcase_add_test(tc, close_while_profiling);
  tcase_add_test(tc, host_allocator_over_profiler);
  tcase_add_test(tc, lifecycle_hooks);
  tcase_add_test(tc, poll_restart);
  tcase_add_test(tc, poll_stress);
  tcase_add_test(tc, collector_unchanged);
  tcase_add_test(tc, every_event_as_called);
  tcase_add_test(tc, sampled_events);
  tcase_add_test(tc, sampled_stream_is_extended);
  tcase_add_test(tc, rss_after_time_marks);
  tcase_add_test(tc, mapped_after_time_marks);
  tcase_add_test(tc, sampled_names_lazily);
  tcase_add_test(tc, sampled_blocks_in_range);
  tcase_add_test(tc, sampled_under_host_allocator);
  tcase_add_test(tc, sampled_range_used_up);
  tcase_add_test(tc, sampled_range_grows);
  suite_add_tcase(s, tc);
  s_stacks(s);
  s_snapshot(s);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(memprof_suite());
  int failed;
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
