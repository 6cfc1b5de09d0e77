#!/bin/sh
# setup.sh: from a fresh clone to a profiled demo, in one command.
#
# Installs the build dependencies (Debian; as root, or through sudo),
# fetches the distribution's LuaJIT source, configures and builds in
# ./build, then profiles the bundled demo and prints its report.
# Run it again at any time: each step does nothing when already done.
#
# Copyright (C) 2026 the ljmprof authors. MIT licence, see COPYING.

set -eu
cd "$(dirname "$0")"
top=$(pwd)

deps="build-essential autoconf automake pkg-config check dpkg-dev patch
binutils libluajit-5.1-dev luajit lua-cjson pdns-recursor dnsdist bind9-dnsutils"

missing=
if command -v dpkg-query >/dev/null; then
	for p in $deps; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing="$missing $p"
	done
fi
if [ -n "$missing" ]; then
	echo "setup: installing$missing"
	if [ "$(id -u)" = 0 ]; then
		sudo=
	elif command -v sudo >/dev/null; then
		sudo=sudo
	else
		echo "setup: please install as root:$missing" >&2
		exit 1
	fi
	$sudo apt-get update -q
	# The LuaJIT flavour already installed stays: libluajit-5.1-dev is only
	# asked for when no LuaJIT development files are there.
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q $missing
fi

tools/get-luajit-source
[ -x configure ] || autoreconf -fi
mkdir -p build
cd build
[ -f Makefile ] || ../configure
make -j2
make demo
cd "$top"
echo
echo "setup: done. Run the tests with: make -C build -j2 check"
