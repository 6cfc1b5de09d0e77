# Tests of `ljmprof attach` (attach/ and tools/cli/inject.c): a C host of
# our own with several VMs on the system's LuaJIT, started without the
# shim, attached and detached.
if HAVE_SYSLUAJIT
check_PROGRAMS += tests/hosts/attachhost
tests_hosts_attachhost_SOURCES = tests/hosts/attachhost.c
tests_hosts_attachhost_CFLAGS = $(AM_CFLAGS) $(SYSLUAJIT_CFLAGS) -pthread
tests_hosts_attachhost_LDADD = $(SYSLUAJIT_LIBS) -lpthread
# The same with LuaJIT linked in (Debian's static library): no library
# to know it by, the program's own build-id instead.
check_PROGRAMS += tests/hosts/attachhost-static
tests_hosts_attachhost_static_SOURCES = tests/hosts/attachhost.c
tests_hosts_attachhost_static_CFLAGS = $(AM_CFLAGS) $(SYSLUAJIT_CFLAGS) -pthread
tests_hosts_attachhost_static_LDADD = -l:libluajit-5.1.a -lm -ldl -lpthread
endif
ATTACH_TESTS = tests/attach/attach.test tests/attach/nginx-attach.test
TESTS += $(ATTACH_TESTS)
EXTRA_DIST += $(ATTACH_TESTS) tests/attach/work.lua tests/attach/nginx-hits.lua \
	tests/attach/stacks.lua tests/attach/traced.lua
if ATTACH_RECORDER
check_SCRIPTS += $(LJM_RECORDERS)
endif
AM_TESTS_ENVIRONMENT += \
	LJMPROF_ATTACH_LIB='$(abs_top_builddir)/attach/libljmprof-attach.so'; \
	export LJMPROF_ATTACH_LIB; \
	LJMPROF_ATTACH_LIB_LUAJIT2='$(abs_top_builddir)/luajit2/attach/libljmprof-attach.so'; \
	export LJMPROF_ATTACH_LIB_LUAJIT2;
