# attach/: the recorder that `ljmprof attach` loads into a running process
# (libljmprof-attach.so), and the table of the LuaJIT builds it knows.
# Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
#
# The recorder reads a VM the system's LuaJIT made, so it is compiled
# against the headers of the unpatched source tree ($(LUAJIT_SRC)), never
# the patched one (whose global_State has the profiler's fields). It
# needs no LuaJIT symbol, only the C library and the core's file writer.

noinst_LIBRARIES += attach/librecorder.a
attach_librecorder_a_SOURCES = attach/recorder.c attach/recorder.h \
	attach/pool.c
attach_librecorder_a_CPPFLAGS = $(AM_CPPFLAGS) $(LJM_CORE_CPPFLAGS) \
	-I$(top_srcdir)/src -I$(LUAJIT_SRC)/src
attach_librecorder_a_CFLAGS = $(AM_CFLAGS) -O2 -fPIC -fvisibility=hidden

attach/libljmprof-attach.so: attach/librecorder.a common/libljmcore.a
	$(AM_V_CCLD)$(CC) $(CFLAGS) $(LDFLAGS) -shared -fPIC -o $@ \
	  -Wl,-z,defs -Wl,--whole-archive attach/librecorder.a \
	  -Wl,--no-whole-archive common/libljmcore.a
noinst_DATA = attach/libljmprof-attach.so
CLEANFILES += attach/libljmprof-attach.so

# The builds the recorder's layouts are those of: the system library,
# when its package is the version of the source tree the recorder was
# compiled against (its build-id then names exactly that build). Another
# build gets no entry: attach refuses it rather than guess.
BUILT_SOURCES += attach/attach_builds.h
CLEANFILES += attach/attach_builds.h
attach/attach_builds.h: Makefile
	@$(MKDIR_P) attach
	$(AM_V_GEN)lib=/usr/lib/$(MULTIARCH)/libluajit-5.1.so.2; id=; \
	pkg=`dpkg-query -S "$$lib" 2>/dev/null | sed -n '1s/: .*//p'`; \
	ver=`dpkg-query -W -f='$${Version}' "$$pkg" 2>/dev/null`; \
	if test "$(cross_compiling)" != yes && test -n "$$pkg" && \
	   test "$$ver" = "$(LUAJIT_VERSION)"; then \
	  id=`readelf -n "$$lib" | sed -n 's/.*Build ID: *//p'`; fi; \
	{ echo '/* Made by attach/local.mk: the LuaJIT builds attach knows. */'; \
	  echo 'struct ljm_attach_build {'; \
	  echo '  const char *build_id, *flavour, *version;'; echo '};'; \
	  echo 'static const struct ljm_attach_build ljm_attach_builds[] = {'; \
	  if test -n "$$id"; then \
	    echo "  {\"$$id\", \"$(LUAJIT_FLAVOUR)\", \"$$ver\"},"; fi; \
	  echo '  {NULL, NULL, NULL}'; echo '};'; \
	  echo "static const size_t ljm_attach_nbuilds = `test -n "$$id" && echo 1 || echo 0`;"; \
	} >$@.tmp && mv $@.tmp $@
