# Helpers for the shell tests. Automake's exit codes: 77 skip, 99 hard error.

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }

# A fresh scratch folder, removed at exit.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/ljmprof-test.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# In the sanitizer build, UBSan's reports go to the stderr of the process
# (GCC's runtime ignores log_path when ASan is linked too), which the tests
# keep in $scratch: any report there fails the test, whatever it checked.
if [ -n "${LJMPROF_SAN_PRELOAD:-}" ]; then
	san_reports() {
		found=$(grep -rlE 'runtime error:|ERROR: (Address|Leak|UndefinedBehavior)Sanitizer' "$scratch" 2>/dev/null || :)
		if [ -n "$found" ]; then
			for f in $found; do
				echo "=== sanitizer report in ${f#"$scratch"/}:" >&2
				grep -E -A12 'runtime error:|ERROR: [A-Za-z]*Sanitizer' "$f" | head -n 80 >&2
			done
			rm -rf "$scratch"
			echo "FAIL: sanitizer reports" >&2
			exit 1
		fi
		rm -rf "$scratch"
	}
	trap san_reports EXIT
fi

for v in LJMPROF_SHIM LJMPROF_LUAJIT top_srcdir; do
	eval "[ -n \"\${$v:-}\" ]" || { echo "$v is not set: run through make check" >&2; exit 99; }
done

# What to preload for the shim. In the sanitizer build (configure
# --enable-sanitizers) the ASan runtime must be loaded before anything
# else into a program that was not built with ASan, so it goes first.
shim_preload=${LJMPROF_SAN_PRELOAD:+$LJMPROF_SAN_PRELOAD }$LJMPROF_SHIM

# run_logged OUT ERR CMD...: run CMD, keep stdout/stderr, print the status.
run_logged() {
	o=$1 e=$2; shift 2
	set +e
	"$@" >"$o" 2>"$e"
	echo $?
	set -e
}

# The flavour of a libluajit-5.1.so.2: OpenResty's exports lua_setexdata.
lib_flavour() {
	if nm -D --defined-only "$1" | grep -q ' lua_setexdata$'; then
		echo luajit2
	else
		echo luajit
	fi
}
