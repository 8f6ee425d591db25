#!/bin/sh
# SPDX-License-Identifier: MIT
# Install the Debian packages npuring builds and tests with, if missing.
# As root this runs apt-get; otherwise it prints the command to run.
# With --fuzz, also what `make fuzz` needs (optional, not for make check):
# clang and its libFuzzer runtime (libclang-rt-N-dev for clang N).
set -e

PKGS="build-essential pkg-config libxml2-dev libpng-dev libjpeg-dev valgrind
      protobuf-c-compiler libprotobuf-c-dev libonnx-dev libonnx-testdata
      liburing-dev libze-dev libdrm-dev python3"
# the ONNX op schemas' generator (lib/onnx/gen-schemas.cc, built with g++
# from build-essential) needs libonnx-dev's C++ headers, which need these
PKGS="$PKGS libprotobuf-dev"
if [ "$1" = --fuzz ]; then
	ver=$(clang --version 2>/dev/null |
	      sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -1)
	PKGS="$PKGS clang libclang-rt-${ver:-14}-dev"
fi

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" = 0 ]; then
	echo "  DEPS    installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null || apt-get update
	apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
		apt-get install -y --no-install-recommends $missing
else
	echo "npuring needs these Debian packages:$missing" >&2
	echo "run: sudo apt-get install$missing" >&2
	exit 1
fi
