# The shim: unit tests of the core (common/) and of the shim's lifecycle
# (preload/libshimcore.a), linked directly, no preloading; and
# end-to-end tests that run real programs under LD_PRELOAD.

check_PROGRAMS += tests/shim/check_core
tests_shim_check_core_SOURCES = tests/shim/check_core.c
tests_shim_check_core_CPPFLAGS = $(AM_CPPFLAGS) $(LJM_CORE_CPPFLAGS) \
	-I$(top_srcdir)/preload
tests_shim_check_core_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
# writer_locked_before_seen watches the writer's flock.
tests_shim_check_core_LDFLAGS = -Wl,--wrap=flock
tests_shim_check_core_LDADD = preload/libshimcore.a common/libljmcore.a \
	$(CHECK_LIBS)
TESTS += tests/shim/check_core

# C hosts built against the system's LuaJIT, like real programs.
if HAVE_SYSLUAJIT
check_PROGRAMS += tests/hosts/mthost tests/hosts/forkhost \
	tests/hosts/errnohost tests/hosts/allochost tests/hosts/manyvms \
	tests/hosts/drophost tests/hosts/sighost tests/hosts/exithost \
	tests/hosts/togglehost tests/hosts/daemonhost tests/hosts/cachehost \
	tests/hosts/endhost tests/hosts/limithost
tests_hosts_limithost_SOURCES = tests/hosts/limithost.c
tests_hosts_limithost_CFLAGS = $(AM_CFLAGS) $(SYSLUAJIT_CFLAGS)
tests_hosts_limithost_LDADD = $(SYSLUAJIT_LIBS)
tests_hosts_endhost_SOURCES = tests/hosts/endhost.c
tests_hosts_endhost_CFLAGS = $(AM_CFLAGS) $(SYSLUAJIT_CFLAGS) -pthread
tests_hosts_endhost_LDADD = $(SYSLUAJIT_LIBS) -lpthread
tests_hosts_cachehost_SOURCES = tests/hosts/cachehost.c
tests_hosts_cachehost_CFLAGS = $(AM_CFLAGS) $(SYSLUAJIT_CFLAGS)
tests_hosts_cachehost_LDADD = $(SYSLUAJIT_LIBS)
tests_hosts_daemonhost_SOURCES = tests/hosts/daemonhost.c
tests_hosts_daemonhost_CFLAGS = $(AM_CFLAGS) $(SYSLUAJIT_CFLAGS)
tests_hosts_daemonhost_LDADD = $(SYSLUAJIT_LIBS)
tests_hosts_togglehost_SOURCES = tests/hosts/togglehost.c
tests_hosts_togglehost_CFLAGS = $(AM_CFLAGS) $(SYSLUAJIT_CFLAGS) -pthread
tests_hosts_togglehost_LDADD = $(SYSLUAJIT_LIBS) -lpthread
tests_hosts_drophost_SOURCES = tests/hosts/drophost.c
tests_hosts_drophost_CFLAGS = $(AM_CFLAGS) $(SYSLUAJIT_CFLAGS)
tests_hosts_drophost_LDADD = $(SYSLUAJIT_LIBS)
tests_hosts_manyvms_SOURCES = tests/hosts/manyvms.c
tests_hosts_manyvms_CFLAGS = $(AM_CFLAGS) $(SYSLUAJIT_CFLAGS)
tests_hosts_manyvms_LDADD = $(SYSLUAJIT_LIBS)
tests_hosts_mthost_SOURCES = tests/hosts/mthost.c
tests_hosts_mthost_CFLAGS = $(AM_CFLAGS) $(SYSLUAJIT_CFLAGS) -pthread
tests_hosts_mthost_LDADD = $(SYSLUAJIT_LIBS) -lpthread
tests_hosts_forkhost_SOURCES = tests/hosts/forkhost.c
tests_hosts_forkhost_CFLAGS = $(AM_CFLAGS) $(SYSLUAJIT_CFLAGS)
tests_hosts_forkhost_LDADD = $(SYSLUAJIT_LIBS)
tests_hosts_errnohost_SOURCES = tests/hosts/errnohost.c
tests_hosts_errnohost_CFLAGS = $(AM_CFLAGS) $(SYSLUAJIT_CFLAGS)
tests_hosts_errnohost_LDADD = $(SYSLUAJIT_LIBS)
tests_hosts_allochost_SOURCES = tests/hosts/allochost.c
tests_hosts_allochost_CFLAGS = $(AM_CFLAGS) $(SYSLUAJIT_CFLAGS)
tests_hosts_allochost_LDADD = $(SYSLUAJIT_LIBS)
tests_hosts_sighost_SOURCES = tests/hosts/sighost.c
tests_hosts_sighost_CFLAGS = $(AM_CFLAGS) $(SYSLUAJIT_CFLAGS)
tests_hosts_sighost_LDADD = $(SYSLUAJIT_LIBS)
tests_hosts_exithost_SOURCES = tests/hosts/exithost.c
tests_hosts_exithost_CFLAGS = $(AM_CFLAGS) $(SYSLUAJIT_CFLAGS)
tests_hosts_exithost_LDADD = $(SYSLUAJIT_LIBS)
endif

SHIM_TESTS = tests/shim/basic.test tests/shim/lifecycle.test \
	tests/shim/threads.test tests/shim/fork.test tests/shim/errors.test \
	tests/shim/signal.test tests/shim/options.test tests/shim/inherit.test \
	tests/shim/record.test tests/shim/flavour.test tests/shim/cnames.test \
	tests/shim/exit.test tests/shim/stopsig.test tests/shim/flush.test \
	tests/shim/straggle.test tests/shim/sigwatch.test tests/shim/allocpair.test \
	tests/shim/pthreadexit.test tests/shim/crash.test tests/shim/exec.test \
	tests/shim/children.test
# Stripped bytecode, misc.memprof under the shim.
SHIM_TESTS += tests/shim/stripped.test tests/shim/miscapi.test
# Call stacks: LJMPROF_STACKS, record --stacks; lines inside traces.
SHIM_TESTS += tests/shim/stacks.test tests/shim/tracelines.test \
	tests/shim/demo.test
# Sampling: LJMPROF_SAMPLE's estimates, a leak found, a live file.
SHIM_TESTS += tests/shim/sample.test
EXTRA_DIST += tests/shim/sample.lua tests/shim/leakserver.lua
# Sampling: a leak among churn found in a live file within a minute.
SHIM_TESTS += tests/shim/leakminute.test
# ljmprof top: the live view, in text frames and on a screen (tmux).
SHIM_TESTS += tests/shim/top.test
# Sampling a C module's allocations through lua_getallocf's pair.
SHIM_TESTS += tests/shim/modalloc.test
EXTRA_DIST += tests/shim/modalloc.lua
# Sampling under a host's own allocator (a counting, capping wrapper).
SHIM_TESTS += tests/shim/hostalloc.test
EXTRA_DIST += tests/shim/hostalloc.lua
# The start snapshot of a late stream (LJMPROF_SIGNAL, LJMPROF_DELAY).
SHIM_TESTS += tests/shim/snapshot.test
# Why objects are alive: the heap graph, report --retainers (#39).
SHIM_TESTS += tests/shim/retainers.test tests/shim/graphsig.test
EXTRA_DIST += tests/shim/retainers.lua tests/shim/memlab-paths.js \
	tests/shim/graphsig.lua
# A real server's census against its collectgarbage("count") (sysbench).
SHIM_TESTS += tests/shim/census.test
EXTRA_DIST += tests/shim/census.lua
# Snapshots on demand: LJMPROF_SNAPSHOT_SIGNAL, their censuses, diff.
SHIM_TESTS += tests/shim/snapsig.test
EXTRA_DIST += tests/shim/snapsig.lua
# Is it Lua at all? The process's RSS beside the Lua heap (INFO RSS).
SHIM_TESTS += tests/shim/rss.test
EXTRA_DIST += tests/shim/rss.lua
# The stream files: private, never through a link, never over a file.
SHIM_TESTS += tests/shim/outfile.test
# Real programs that embed LuaJIT; each skips when its package is missing.
SHIM_TESTS += tests/shim/nvim.test tests/shim/sysbench.test \
	tests/shim/wrk.test tests/shim/lupa.test tests/shim/nginx.test \
	tests/shim/pdns.test tests/shim/dnsdist.test
# Three real servers sampled for 10 s each against an exact run (issue
# 38; bench/servers --check, the short version of make bench-servers).
SHIM_TESTS += tests/shim/servers-sampled.test
# nginx with the Lua module unpacked by setup.sh, under the luajit2 shim.
SHIM_TESTS += tests/shim/nginx-stop.test tests/shim/nginx-reload.test \
	tests/shim/nginx-signal.test tests/shim/nginx-census.test \
	tests/shim/nginx-retainers.test
TESTS += $(SHIM_TESTS)
EXTRA_DIST += tests/shim/nginx.sh tests/shim/nginx-work.lua \
	tests/shim/nginx-store.lua
EXTRA_DIST += $(SHIM_TESTS) tests/shim/shim.sh tests/shim/alloc.lua \
	tests/shim/threads.lua tests/shim/fork.lua tests/shim/closefd.lua \
	tests/shim/toggle.lua tests/shim/server.lua tests/shim/spawn.lua \
	tests/shim/work.lua tests/shim/flushkill.lua tests/shim/midexit.lua \
	tests/shim/forkserver.lua tests/shim/tracelines.lua tests/shim/snapshot.lua \
	tests/shim/strchurn.lua \
	tests/shim/tracecallers.lua
check_SCRIPTS += tools/ljmprof
