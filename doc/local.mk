# Man pages: both ENVIRONMENT sections are printed by buildtools/envdoc
# from the table the shim parses (common/config.c), so the documentation
# cannot disagree with it.

man_MANS = doc/ljmprof.1 doc/libljmprof.7
doc/ljmprof.1: $(srcdir)/doc/ljmprof.1.in buildtools/envdoc$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) doc && \
	  buildtools/envdoc $(srcdir)/doc/ljmprof.1.in >$@.tmp && mv $@.tmp $@
doc/libljmprof.7: $(srcdir)/doc/libljmprof.7.in buildtools/envdoc$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) doc && \
	  buildtools/envdoc $(srcdir)/doc/libljmprof.7.in >$@.tmp && mv $@.tmp $@
CLEANFILES += $(man_MANS)
EXTRA_DIST += doc/ljmprof.1.in doc/libljmprof.7.in doc/json-schema.md \
	doc/format.md doc/hacking.md doc/demo-flamegraph.svg doc/demo-report.png
