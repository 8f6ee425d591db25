#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The Debian packages npuring builds and tests with.
#
#   scripts/deps.sh [--all] [--fuzz] [--deb]
#
# The required ones (the build fails without them): when one is missing,
# root installs it with apt-get; anyone else gets the command to run and
# exit status 1.  The optional ones only widen what make check runs: a
# missing one is named with what then gets skipped, and (exit status 0)
# the build and the tests go on without it; with --all, root installs them
# too (what .ci/run does).  --fuzz adds what `make fuzz` needs, clang and
# its libFuzzer runtime (libclang-rt-N-dev for clang N), as required;
# --deb what scripts/deb.sh builds and checks the Debian packages with.
# Under fakeroot (a package build) nothing is installed.
set -e

REQUIRED="build-essential pkg-config libxml2-dev libpng-dev libjpeg-dev
	  protobuf-c-compiler libprotobuf-c-dev liburing-dev
	  libonnx-dev libprotobuf-dev"
# package:what is skipped without it
OPTIONAL="valgrind:the valgrind runs of make check (the suites run without valgrind)
libze-dev:the software NPU (npu/vnpu) and every test on the npu device
libonnx-testdata:conformance_test's ONNX backend cases
clang:header_test's C and C++ compiles with clang and clang++
python3:layering_test (the layering rules of Documentation/design.rst)
libdrm2:the name of an NPU's kernel driver in npu error messages
groff-base:man_test's render checks of the man pages
man-db:man_test's render checks of the man pages
python3-numpy:python_test (the Python binding's tests)"

all=0
for arg; do
	case $arg in
	--all) all=1 ;;
	--fuzz)
		ver=$(clang --version 2>/dev/null |
		      sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
		REQUIRED="$REQUIRED clang libclang-rt-${ver:-14}-dev"
		;;
	--deb)
		REQUIRED="$REQUIRED git dpkg-dev debhelper dh-python lintian
			  fakeroot python3-numpy libze-dev libonnx-testdata"
		;;
	*) echo "usage: scripts/deps.sh [--all] [--fuzz] [--deb]" >&2; exit 2 ;;
	esac
done

installed()
{
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"
}

missing=""
for p in $REQUIRED; do
	installed "$p" || missing="$missing $p"
done
optional=""
skipped=""
while IFS=: read -r p why; do
	installed "$p" && continue
	optional="$optional $p"
	skipped="$skipped
  $p: $why"
done <<EOF_OPTIONAL
$OPTIONAL
EOF_OPTIONAL

can_install=0
[ "$(id -u)" = 0 ] && [ -z "$FAKEROOTKEY" ] && can_install=1
install=$missing
[ $all = 1 ] && install="$install$optional"

if [ -n "$install" ] && [ $can_install = 1 ]; then
	echo "  DEPS    installing:$install"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null || apt-get update
	apt-get install -y -qq --no-install-recommends $install >/dev/null ||
		apt-get install -y --no-install-recommends $install
	[ $all = 1 ] && exit 0
	missing=""
fi
if [ -n "$optional" ]; then
	echo "  DEPS    optional, not installed (apt-get install$optional):$skipped" |
		sed 's/^  \([a-z]\)/          \1/'
fi
if [ -n "$missing" ]; then
	echo "npuring needs these Debian packages:$missing" >&2
	echo "run: sudo apt-get install$missing" >&2
	exit 1
fi
exit 0
