# tools/: the ljmprof CLI and the stream parser.
# Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.
#
# The parsing core is a small library that the CLI, the unit tests and the
# fuzz target link. tools/ never links LuaJIT: the only thing shared with
# the profiler is src/lj_memprof_format.h.

MP_CPPFLAGS = -I$(top_srcdir)/src -I$(top_srcdir)/tools
# The parser is the hot path of `report`: always optimised.
MP_CFLAGS = $(AM_CFLAGS) -O2

noinst_LIBRARIES += tools/libmpparse.a
tools_libmpparse_a_CPPFLAGS = $(AM_CPPFLAGS) $(MP_CPPFLAGS)
tools_libmpparse_a_CFLAGS = $(MP_CFLAGS)
tools_libmpparse_a_SOURCES = \
	tools/mp_uleb.h \
	tools/mp_reader.c tools/mp_reader.h \
	tools/mp_strings.c tools/mp_strings.h \
	tools/mp_map.c tools/mp_map.h \
	tools/mp_heap.c tools/mp_heap.h \
	tools/mp_symtab.c tools/mp_symtab.h \
	tools/mp_profile.c tools/mp_profile.h \
	tools/mp_pipeline.c \
	tools/mp_names.c tools/mp_names.h \
	tools/mp_sort.c tools/mp_sort.h \
	tools/mp_order.c tools/mp_order.h \
	tools/mp_report.h \
	tools/mp_report_text.c \
	tools/mp_report_json.c \
	tools/mp_report_folded.c

# To add a subcommand: its source here and a line in ljmprof.c's table.
bin_PROGRAMS += tools/ljmprof
tools_ljmprof_CPPFLAGS = $(AM_CPPFLAGS) $(MP_CPPFLAGS)
tools_ljmprof_CFLAGS = $(MP_CFLAGS)
tools_ljmprof_SOURCES = \
	tools/ljmprof.c tools/commands.h \
	tools/cmd_report.c \
	tools/mp_load.c tools/mp_load.h
tools_ljmprof_LDADD = tools/libmpparse.a
# ljmprof record: checks its options with the table and parser that the
# shim uses, from the shared core (common/).
tools_ljmprof_SOURCES += tools/record.c tools/record.h
tools_ljmprof_CPPFLAGS += $(LJM_CORE_CPPFLAGS) $(LJM_DEFS)
tools_ljmprof_LDADD += common/libljmcore.a


# -- Tests of the parser and the CLI ------------------------------------------

# A stream writer shared by the generator and the unit tests.
check_PROGRAMS += tests/tools/gen_stream tests/tools/test_parse
tests_tools_gen_stream_CPPFLAGS = $(AM_CPPFLAGS) $(MP_CPPFLAGS)
tests_tools_gen_stream_CFLAGS = $(MP_CFLAGS)
tests_tools_gen_stream_SOURCES = tests/tools/gen_stream.c \
	tests/tools/mp_writer.c tests/tools/mp_writer.h

tests_tools_test_parse_CPPFLAGS = $(AM_CPPFLAGS) $(MP_CPPFLAGS)
tests_tools_test_parse_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_tools_test_parse_SOURCES = tests/tools/test_parse.c \
	tests/tools/mp_writer.c tests/tools/mp_writer.h
tests_tools_test_parse_LDADD = tools/libmpparse.a $(CHECK_LIBS)

TESTS += tests/tools/test_parse tests/tools/golden.test \
	tests/tools/errors.test tests/tools/merge.test tests/tools/bench.test \
	tests/tools/roundtrip.test tests/tools/reference.test
EXTRA_DIST += tests/tools/golden.test tests/tools/errors.test \
	tests/tools/merge.test \
	tests/tools/bench.test tests/tools/regen-golden \
	tests/tools/roundtrip.test tests/tools/roundtrip.lua \
	tests/tools/golden \
	tests/tools/reference.test tests/tools/reference.known
# reference.test keeps its copy of the shared fixtures when it fails.
mostlyclean-local:
	-rm -rf tests/tools/reference-vm

# -- Fuzzing: libFuzzer with ASan and UBSan, when clang has it ---------------

EXTRA_DIST += tests/fuzz/run-fuzz tests/fuzz/fuzz_parse.c \
	tests/fuzz/corpus
TESTS += tests/fuzz/run-fuzz

FUZZ_PARSE_FILES = tests/fuzz/fuzz_parse.c $(tools_libmpparse_a_SOURCES)
if HAVE_LIBFUZZER
# A script for automake's sake: built by the rule below with $(FUZZ_CC)
# and the sanitizers, not with $(CC) and our flags.
check_SCRIPTS += tests/fuzz/fuzz_parse
CLEANFILES += tests/fuzz/fuzz_parse
tests/fuzz/fuzz_parse: $(addprefix $(srcdir)/,$(FUZZ_PARSE_FILES))
	@$(MKDIR_P) tests/fuzz
	$(AM_V_CCLD)$(FUZZ_CC) -g -O1 -fsanitize=fuzzer,address,undefined \
	  -fno-sanitize-recover=undefined -DMP_LOC_CACHE_BITS=4 \
	  -I$(top_builddir) $(MP_CPPFLAGS) \
	  -o $@ $(filter %.c,$(addprefix $(srcdir)/,$(FUZZ_PARSE_FILES)))
endif
