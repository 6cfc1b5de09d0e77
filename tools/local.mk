# tools/: the ljmprof CLI and the libraries under it.
# Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
#
# The libraries are what the CLI, the unit tests, the benchmark and the
# fuzz target link. tools/ never links LuaJIT: the only thing shared with
# the profiler is src/lj_memprof_format.h.

# Four layers, each a static library that uses only the ones below it,
# in the order of the pipeline: stream (bytes <-> events) < profile (the
# aggregator) < report (names, order, output formats) < cli (the
# commands). Each layer sees only its own headers and those below, and
# tests/tools/layers.test checks the archives the same way.
MP_STREAM_CPPFLAGS = -I$(top_srcdir)/src -I$(top_srcdir)/tools/stream
MP_PROFILE_CPPFLAGS = $(MP_STREAM_CPPFLAGS) -I$(top_srcdir)/tools/profile
MP_REPORT_CPPFLAGS = $(MP_PROFILE_CPPFLAGS) -I$(top_srcdir)/tools/report
MP_CLI_CPPFLAGS = $(MP_REPORT_CPPFLAGS) -I$(top_srcdir)/tools/cli
# Everything but the CLI: what the tests and the fuzz target see.
MP_CPPFLAGS = $(MP_REPORT_CPPFLAGS)
# The parser is the hot path of `report`: always optimised, without the
# vectorising of counter pairs (configure.ac).
MP_CFLAGS = $(AM_CFLAGS) -O2 $(NO_SLP_CFLAGS)

# stream/: the reader, ULEB128 decoding, and the writer the tests and the
# golden streams are made with.
noinst_LIBRARIES += tools/libmpstream.a
tools_libmpstream_a_CPPFLAGS = $(AM_CPPFLAGS) $(MP_STREAM_CPPFLAGS)
tools_libmpstream_a_CFLAGS = $(MP_CFLAGS)
tools_libmpstream_a_SOURCES = \
	tools/stream/mp_uleb.h tools/stream/mp_fast.h \
	tools/stream/mp_reader.c tools/stream/mp_reader.h \
	tools/stream/mp_writer.c tools/stream/mp_writer.h

# profile/: the aggregator and its containers.
noinst_LIBRARIES += tools/libmpprofile.a
tools_libmpprofile_a_CPPFLAGS = $(AM_CPPFLAGS) $(MP_PROFILE_CPPFLAGS)
tools_libmpprofile_a_CFLAGS = $(MP_CFLAGS)
tools_libmpprofile_a_SOURCES = \
	tools/profile/mp_strings.c tools/profile/mp_strings.h \
	tools/profile/mp_map.c tools/profile/mp_map.h \
	tools/profile/mp_heap.c tools/profile/mp_heap.h \
	tools/profile/mp_symtab.c tools/profile/mp_symtab.h \
	tools/profile/mp_sort.c tools/profile/mp_sort.h \
	tools/profile/mp_profile.c tools/profile/mp_profile.h \
	tools/profile/mp_profile_int.h \
	tools/profile/mp_locs.c tools/profile/mp_resolve.c \
	tools/profile/mp_symbols.c tools/profile/mp_overrides.c \
	tools/profile/mp_sample.c tools/profile/mp_sample.h \
	tools/profile/mp_stacks.c \
	tools/profile/mp_timeline.c tools/profile/mp_kinds.c \
	tools/profile/mp_life.c \
	tools/profile/mp_snapshot.c \
	tools/profile/mp_graph.c \
	tools/profile/mp_peak.c \
	tools/profile/mp_live.h tools/profile/mp_read.c \
	tools/profile/mp_pipeline.c

# report/: naming, ordering and the output formats. A new format is its
# file here and its row in tools/report/mp_formats.c.
noinst_LIBRARIES += tools/libmpreport.a
tools_libmpreport_a_CPPFLAGS = $(AM_CPPFLAGS) $(MP_REPORT_CPPFLAGS)
tools_libmpreport_a_CFLAGS = $(MP_CFLAGS)
tools_libmpreport_a_SOURCES = \
	tools/report/mp_names.c tools/report/mp_names.h \
	tools/report/mp_estimate.c \
	tools/report/mp_order.c tools/report/mp_order.h \
	tools/report/mp_report.h tools/report/mp_formats.c \
	tools/report/mp_report_text.c \
	tools/report/mp_retainers.c \
	tools/report/mp_report_heapsnapshot.c \
	tools/report/mp_report_json.c \
	tools/report/mp_report_folded.c \
	tools/report/mp_report_stat.c \
	tools/report/mp_report_pprof.c \
	tools/report/mp_report_svg.c tools/report/mp_kind_names.c \
	tools/report/mp_ftree.c tools/report/mp_ftree.h \
	tools/report/mp_moments.c tools/report/mp_moments.h \
	tools/report/mp_report_html.c \
	tools/report/mp_report_dhat.c \
	tools/report/mp_pprof.c tools/report/mp_pprof.h \
	tools/report/mp_diff.c tools/report/mp_diff.h \
	tools/report/mp_diff_report.c tools/report/mp_diff_html.c
# pprof's messages: encoder and decoder generated from pprof.proto, into
# the build tree.
MP_PPROF_GEN = tools/report/pprof.pb-c.c tools/report/pprof.pb-c.h
nodist_tools_libmpreport_a_SOURCES = $(MP_PPROF_GEN)
tools_libmpreport_a_CPPFLAGS += $(PROTOBUF_C_CFLAGS) $(ZLIB_CFLAGS)
BUILT_SOURCES = $(MP_PPROF_GEN)
CLEANFILES += $(MP_PPROF_GEN)
EXTRA_DIST += tools/report/pprof.proto
# One run of protoc-c writes both.
tools/report/pprof.pb-c.c: $(srcdir)/tools/report/pprof.proto
	@$(MKDIR_P) tools/report
	$(AM_V_GEN)$(PROTOC_C) --proto_path=$(srcdir)/tools/report \
	  --c_out=tools/report $(srcdir)/tools/report/pprof.proto
tools/report/pprof.pb-c.h: tools/report/pprof.pb-c.c
	@:
# For builds of one target, which BUILT_SOURCES does not cover.
tools/report/libmpreport_a-mp_pprof.$(OBJEXT): tools/report/pprof.pb-c.h

# The HTML page's style and script: written as CSS and JavaScript files
# (where editors and linters know them), made into two C strings here, so
# the page needs nothing at run time and the build no tool but sed.
MP_HTML_PAGE = $(srcdir)/tools/report/mp_report_html.css \
	$(srcdir)/tools/report/mp_report_html.js
EXTRA_DIST += $(MP_HTML_PAGE)
nodist_tools_libmpreport_a_SOURCES += tools/report/mp_html_page.h
BUILT_SOURCES += tools/report/mp_html_page.h
CLEANFILES += tools/report/mp_html_page.h
MP_HTML_C_STRING = sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' \
	-e 's/^/  "/' -e 's/$$/\\n"/'
tools/report/mp_html_page.h: $(MP_HTML_PAGE)
	@$(MKDIR_P) tools/report
	$(AM_V_GEN){ echo '/* Made by tools/local.mk from mp_report_html.css and .js. */'; \
	  echo 'static const char html_css[] ='; \
	  $(MP_HTML_C_STRING) $(srcdir)/tools/report/mp_report_html.css; \
	  echo '  "";'; echo 'static const char html_js[] ='; \
	  $(MP_HTML_C_STRING) $(srcdir)/tools/report/mp_report_html.js; \
	  echo '  "";'; } >$@.tmp && mv $@.tmp $@
tools/report/libmpreport_a-mp_report_html.$(OBJEXT): tools/report/mp_html_page.h

# The layers, highest first, as a linker wants them.
MP_LIBS = tools/libmpreport.a tools/libmpprofile.a tools/libmpstream.a \
	$(PROTOBUF_C_LIBS) $(ZLIB_LIBS)
MP_LIB_FILES = $(tools_libmpstream_a_SOURCES) $(tools_libmpprofile_a_SOURCES) \
	$(tools_libmpreport_a_SOURCES)

# cli/: the ljmprof command, one file per subcommand (report and stat
# share reports.c). To add a subcommand: tools/cli/cmd_<name>.c here and
# a line in ljmprof.c's table.
bin_PROGRAMS += tools/ljmprof
tools_ljmprof_CPPFLAGS = $(AM_CPPFLAGS) $(MP_CLI_CPPFLAGS) $(NCURSES_CFLAGS)
tools_ljmprof_CFLAGS = $(MP_CFLAGS)
tools_ljmprof_SOURCES = \
	tools/cli/ljmprof.c tools/cli/commands.h \
	tools/cli/cmd_report.c tools/cli/cmd_stat.c tools/cli/cmd_diff.c \
	tools/cli/reports.c tools/cli/reports.h \
	tools/cli/mp_load.c tools/cli/mp_load.h \
	tools/cli/cmd_top.c tools/cli/top.h tools/cli/top_model.c \
	tools/cli/top_text.c tools/cli/top_screen.c
tools_ljmprof_LDADD = $(MP_LIBS) $(NCURSES_LIBS)
# ljmprof record: checks its options with the table and parser that the
# shim uses, from the shared core (common/). Its files are along its jobs
# (tools/cli/rec.h says which is which).
tools_ljmprof_SOURCES += tools/cli/cmd_record.c tools/cli/rec.h \
	tools/cli/rec_program.c tools/cli/rec_last_run.c \
	tools/cli/rec_manifest.c tools/cli/rec_run.c
tools_ljmprof_CPPFLAGS += $(LJM_CORE_CPPFLAGS) $(LJM_DEFS)
tools_ljmprof_LDADD += common/libljmcore.a
# ljmprof attach: the injector and the table of the builds it knows
# (attach/local.mk makes it); the recorder is a library of its own.
tools_ljmprof_SOURCES += tools/cli/cmd_attach.c tools/cli/inject.c \
	tools/cli/attach_names.c tools/cli/attach_names.h \
	tools/cli/inject.h
nodist_tools_ljmprof_SOURCES = attach/attach_builds.h
tools_ljmprof_CPPFLAGS += -Iattach


# -- Tests of the parser and the CLI ------------------------------------------

check_PROGRAMS += tests/tools/gen_stream tests/tools/test_parse
tests_tools_gen_stream_CPPFLAGS = $(AM_CPPFLAGS) $(MP_CPPFLAGS)
tests_tools_gen_stream_CFLAGS = $(MP_CFLAGS)
tests_tools_gen_stream_SOURCES = tests/tools/gen_stream.c
tests_tools_gen_stream_LDADD = tools/libmpstream.a

tests_tools_test_parse_CPPFLAGS = $(AM_CPPFLAGS) $(MP_CPPFLAGS)
tests_tools_test_parse_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_tools_test_parse_SOURCES = tests/tools/test_parse.c
tests_tools_test_parse_LDADD = $(MP_LIBS) $(CHECK_LIBS)

# The pprof builder and report, decoded with protobuf-c's unpack.
check_PROGRAMS += tests/tools/test_pprof
tests_tools_test_pprof_CPPFLAGS = $(AM_CPPFLAGS) $(MP_CPPFLAGS) \
	$(PROTOBUF_C_CFLAGS) $(ZLIB_CFLAGS)
tests_tools_test_pprof_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_tools_test_pprof_SOURCES = tests/tools/test_pprof.c
tests_tools_test_pprof_LDADD = $(MP_LIBS) $(CHECK_LIBS)
tests/tools/test_pprof-test_pprof.$(OBJEXT): tools/report/pprof.pb-c.h

# ljmprof diff's matching, arithmetic and outputs, on crafted streams.
check_PROGRAMS += tests/tools/test_diff
tests_tools_test_diff_CPPFLAGS = $(AM_CPPFLAGS) $(MP_CPPFLAGS)
tests_tools_test_diff_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_tools_test_diff_SOURCES = tests/tools/test_diff.c
tests_tools_test_diff_LDADD = $(MP_LIBS) $(CHECK_LIBS)

TESTS += tests/tools/test_diff tests/tools/diff.test tests/tools/diffpath.test

# The peak, the heap over time and temporary allocations, on crafted
# streams read both ways.
check_PROGRAMS += tests/tools/test_analyses
tests_tools_test_analyses_CPPFLAGS = $(AM_CPPFLAGS) $(MP_CPPFLAGS)
tests_tools_test_analyses_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_tools_test_analyses_SOURCES = tests/tools/test_analyses.c
tests_tools_test_analyses_LDADD = $(MP_LIBS) $(CHECK_LIBS)
TESTS += tests/tools/test_analyses tests/tools/analyses.test
EXTRA_DIST += tests/tools/analyses.test tests/tools/analyses.lua
EXTRA_DIST += tests/tools/diff.test tests/tools/diff.lua \
	tests/tools/diffpath.test tests/tools/diffpath.lua
# The HTML page: its structure, escaping, and in headless Chromium.
TESTS += tests/tools/html.test
EXTRA_DIST += tests/tools/html.test tests/tools/html.lua tests/tools/page.sh

TESTS += tests/tools/test_parse tests/tools/test_pprof tests/tools/golden.test \
	tests/tools/layers.test tests/tools/errors.test tests/tools/merge.test tests/tools/bench.test \
	tests/tools/roundtrip.test tests/tools/reference.test \
	tests/tools/pprof.test tests/tools/flamegraph.test tests/tools/svg.test \
	tests/tools/nodesfull.test
EXTRA_DIST += tests/tools/golden.test tests/tools/errors.test \
	tests/tools/nodesfull.test \
	tests/tools/pprof.test tests/tools/flamegraph.test tests/tools/svg.test \
	tests/tools/layers.test \
	tests/tools/merge.test \
	tests/tools/bench.test tests/tools/regen-golden \
	tests/tools/roundtrip.test tests/tools/roundtrip.lua \
	tests/tools/golden \
	tests/tools/reference.test tests/tools/reference.known
# svg.test leaves the demo's flame graph, made anew, beside the build.
CLEANFILES += demo-flamegraph.svg
# reference.test keeps its copy of the shared fixtures when it fails.
mostlyclean-local:
	-rm -rf tests/tools/reference-vm

# Object kinds end to end.
TESTS += tests/tools/kinds.test
EXTRA_DIST += tests/tools/kinds.test tests/tools/kinds.lua
# Two snapshots on demand of one run: diff --by=kind, their censuses.
TESTS += tests/tools/snapdiff.test
EXTRA_DIST += tests/tools/snapdiff.test tests/tools/snapdiff.lua
# A later snapshot's blocks are not events: stat, diff and --at=peak.
TESTS += tests/tools/snapcount.test tests/tools/snappeak.test
EXTRA_DIST += tests/tools/snapcount.test tests/tools/snappeak.test \
	tests/tools/snapcount.lua

# DHAT's JSON, against the JSON report and in valgrind's viewer.
TESTS += tests/tools/dhat.test
EXTRA_DIST += tests/tools/dhat.test tests/tools/dhat.lua

# -- Fuzzing: libFuzzer with ASan and UBSan, when clang has it ---------------

EXTRA_DIST += tests/fuzz/run-fuzz tests/fuzz/fuzz_parse.c \
	tests/fuzz/corpus
TESTS += tests/fuzz/run-fuzz

FUZZ_PARSE_FILES = tests/fuzz/fuzz_parse.c $(MP_LIB_FILES)
if HAVE_LIBFUZZER
# A script for automake's sake: built by the rule below with $(FUZZ_CC)
# and the sanitizers, not with $(CC) and our flags.
check_SCRIPTS += tests/fuzz/fuzz_parse
CLEANFILES += tests/fuzz/fuzz_parse
tests/fuzz/fuzz_parse: $(addprefix $(srcdir)/,$(FUZZ_PARSE_FILES)) $(MP_PPROF_GEN) \
		tools/report/mp_html_page.h
	@$(MKDIR_P) tests/fuzz
	$(AM_V_CCLD)$(FUZZ_CC) -g -O1 -fsanitize=fuzzer,address,undefined \
	  -fno-sanitize-recover=undefined -DMP_LOC_CACHE_BITS=4 \
	  -I$(top_builddir) $(MP_CPPFLAGS) $(PROTOBUF_C_CFLAGS) $(ZLIB_CFLAGS) \
	  -o $@ $(filter %.c,$(addprefix $(srcdir)/,$(FUZZ_PARSE_FILES))) \
	  tools/report/pprof.pb-c.c $(PROTOBUF_C_LIBS) $(ZLIB_LIBS)
endif
