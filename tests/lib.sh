# Helpers for the shell tests. Automake's exit codes: 77 skip, 99 hard error.

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }

# A fresh scratch folder, removed at exit.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/ljmprof-test.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

for v in LJMPROF_SHIM LJMPROF_LUAJIT top_srcdir; do
	eval "[ -n \"\${$v:-}\" ]" || { echo "$v is not set: run through make check" >&2; exit 99; }
done

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
