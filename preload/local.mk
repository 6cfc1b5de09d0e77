# libljmprof.so: the patched VM plus the shim, under the system library's
# soname, exporting exactly the C API that LuaJIT itself exports.

# The shim's logic that needs no VM: the environment table and its
# parsing, file names, the file writer, messages, ELF questions. Built
# once, position-independent and hidden, so that the shim, the unit tests
# and `ljmprof record` all link the same archive.
LJM_CORE_SOURCES = preload/config.c preload/ljm_config.h \
	preload/outpath.c preload/outpath.h preload/writer.c preload/writer.h \
	preload/msg.c preload/msg.h preload/elfinfo.c preload/elfinfo.h \
	preload/lifecycle.c preload/lifecycle.h
LJM_DEFS = -DLJM_FLAVOUR='"$(LUAJIT_FLAVOUR)"' \
	-DLJM_MULTIARCH='"$(MULTIARCH)"' -DLJM_LIBDIR='"$(libdir)/ljmprof"'

noinst_LIBRARIES += preload/libljmcore.a
preload_libljmcore_a_SOURCES = $(LJM_CORE_SOURCES)
preload_libljmcore_a_CPPFLAGS = $(AM_CPPFLAGS) $(LJM_DEFS)
preload_libljmcore_a_CFLAGS = $(AM_CFLAGS) -fPIC -fvisibility=hidden

# The entry points (shim.c) and the VM registry, linked into the VM.
noinst_LIBRARIES += preload/libshim.a
preload_libshim_a_SOURCES = preload/shim.c preload/registry.c \
	preload/registry.h
preload_libshim_a_CPPFLAGS = $(AM_CPPFLAGS) $(LJM_DEFS) \
	-I$(top_builddir)/$(LJ_TREE)/src
preload_libshim_a_CFLAGS = $(AM_CFLAGS) -fPIC -fvisibility=hidden
$(preload_libshim_a_OBJECTS): $(LJ_TREE)/.prepared

# The export list: every default-visibility global of the VM's objects,
# which is what the system library exports, minus our own API, plus the
# two deliberate extras of the shim (preload/shim.c), _exit and _Exit, so
# that a program ending with them still finishes its streams
# (tests/build/exports.test allows exactly these).
LJM_EXTRA_EXPORTS = _Exit _exit
preload/exports.ver: $(LJ_TREE)/.built $(srcdir)/preload/local.mk
	$(AM_V_GEN){ echo '{ global:'; \
	  { $(READELF) -sW $(LJ_DYNOBJS) | $(AWK) '$$5 == "GLOBAL" && \
	    $$6 == "DEFAULT" && $$7 != "UND" && $$8 !~ /^ljmprof_/ \
	    { print $$8 }'; \
	    for s in $(LJM_EXTRA_EXPORTS); do echo $$s; done; } | \
	    LC_ALL=C sort -u | sed 's/.*/  &;/'; \
	  echo 'local: *; };'; } >$@.tmp && mv $@.tmp $@

preload/libljmprof.so: preload/libshim.a preload/libljmcore.a preload/exports.ver $(LJ_TREE)/.built
	$(AM_V_CCLD)$(CC) $(CFLAGS) $(LDFLAGS) -shared -fPIC -o $@ \
	  -Wl,-soname,libluajit-5.1.so.2 -Wl,-Bsymbolic \
	  -Wl,--version-script=preload/exports.ver -Wl,-z,defs \
	  -Wl,--whole-archive preload/libshim.a -Wl,--no-whole-archive \
	  preload/libljmcore.a $(LJ_DYNOBJS) $(LJ_LIBS) $(LIBS)

all-local: preload/libljmprof.so
CLEANFILES += preload/libljmprof.so preload/exports.ver

# envdoc prints the environment table as roff for the man pages (doc/).
noinst_PROGRAMS = preload/envdoc
preload_envdoc_SOURCES = preload/envdoc.c
preload_envdoc_LDADD = preload/libljmcore.a
