# libljmprof.so: the patched VM plus the shim, under the system library's
# soname, exporting exactly the C API that LuaJIT itself exports.

# The shim's own logic that needs no VM: the lifecycle decisions, a pure
# function. An archive of its own, position-independent and hidden like
# the core (common/), so that the unit tests link it without the VM.
noinst_LIBRARIES += preload/libshimcore.a
preload_libshimcore_a_SOURCES = preload/lifecycle.c preload/lifecycle.h
preload_libshimcore_a_CFLAGS = $(AM_CFLAGS) -fPIC -fvisibility=hidden

# The entry points (shim.c) and the rest of the shim, one job a file
# (preload/vm.h lists them), linked into the VM.
noinst_LIBRARIES += preload/libshim.a
preload_libshim_a_SOURCES = preload/shim.c preload/registry.c \
	preload/registry.h preload/vm.h preload/process.c \
	preload/actions.c preload/idle.c preload/ticker.c preload/toggle.c \
	preload/stopsig.c preload/ending.c preload/fork.c
preload_libshim_a_CPPFLAGS = $(AM_CPPFLAGS) $(LJM_DEFS) \
	$(LJM_CORE_CPPFLAGS) -I$(top_builddir)/$(LJ_TREE)/src
preload_libshim_a_CFLAGS = $(AM_CFLAGS) -fPIC -fvisibility=hidden
$(preload_libshim_a_OBJECTS): $(LJ_TREE)/.prepared

# The export list: every default-visibility global of the VM's objects,
# which is what the system library exports, minus our own API, plus the
# deliberate extras of the shim (preload/shim.c), _exit, _Exit and the
# exec family, so that a program that ends or replaces its image with
# them still finishes its streams (tests/build/exports.test allows
# exactly these).
LJM_EXTRA_EXPORTS = _Exit _exit execl execle execlp execv execve execveat \
	execvp execvpe fexecve
preload/exports.ver: $(LJ_TREE)/.built $(srcdir)/preload/local.mk
	$(AM_V_GEN){ echo '{ global:'; \
	  { $(READELF) -sW $(LJ_DYNOBJS) | $(AWK) '$$5 == "GLOBAL" && \
	    $$6 == "DEFAULT" && $$7 != "UND" && $$8 !~ /^ljmprof_/ \
	    { print $$8 }'; \
	    for s in $(LJM_EXTRA_EXPORTS); do echo $$s; done; } | \
	    LC_ALL=C sort -u | sed 's/.*/  &;/'; \
	  echo 'local: *; };'; } >$@.tmp && mv $@.tmp $@

preload/libljmprof.so: preload/libshim.a preload/libshimcore.a \
	  common/libljmcore.a preload/exports.ver $(LJ_TREE)/.built
	$(AM_V_CCLD)$(CC) $(CFLAGS) $(LDFLAGS) -shared -fPIC -o $@ \
	  -Wl,-soname,libluajit-5.1.so.2 -Wl,-Bsymbolic \
	  -Wl,--version-script=preload/exports.ver -Wl,-z,defs \
	  -Wl,--whole-archive preload/libshim.a -Wl,--no-whole-archive \
	  preload/libshimcore.a common/libljmcore.a \
	  $(LJ_DYNOBJS) $(LJ_LIBS) $(LIBS)

all-local: preload/libljmprof.so
CLEANFILES += preload/libljmprof.so preload/exports.ver
