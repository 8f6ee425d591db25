#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Build npuring's Debian packages and check them with lintian.
#
#   scripts/deb.sh [-r REF] OUTDIR
#
# The source is the git commit REF (default HEAD: what is committed, no
# build products or local changes), unpacked into a temporary directory
# and built there with `dpkg-buildpackage -us -uc -b`, as on a clean tree.
# OUTDIR receives the .deb files, the .buildinfo and .changes, lintian.txt
# (lintian's report) and one NAME.contents per package (`dpkg -c`).
# The exit status is 0 if the packages built and lintian found no error.
# DEB_BUILD_OPTIONS passes through (nocheck skips the selftests, parallel=N
# builds with N jobs; the default is parallel=<number of CPUs>).
# Needs: dpkg-dev, debhelper, dh-python, lintian, fakeroot, git and the
# Build-Depends of debian/control (dpkg-checkbuilddeps names what is
# missing).
set -e

usage()
{
	echo "usage: scripts/deb.sh [-r REF] OUTDIR" >&2
	exit 2
}

ref=HEAD
while getopts r: opt; do
	case $opt in
	r) ref=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# = 1 ] || usage
out=$1

src=$(cd "$(dirname "$0")/.." && pwd)
for cmd in git dpkg-buildpackage dh lintian fakeroot; do
	if ! command -v $cmd >/dev/null 2>&1; then
		echo "scripts/deb.sh: $cmd not found (apt-get install git dpkg-dev debhelper dh-python lintian fakeroot)" >&2
		exit 1
	fi
done
git -C "$src" rev-parse --verify -q "$ref^{commit}" >/dev/null || {
	echo "scripts/deb.sh: $ref is not a commit of $src" >&2
	exit 2
}
mkdir -p "$out"
out=$(cd "$out" && pwd)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/npuring-deb.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
tree=$tmp/npuring-$version
mkdir "$tree"
git -C "$src" archive --format=tar "$ref" | tar -x -C "$tree"

: "${DEB_BUILD_OPTIONS:=parallel=$(nproc)}"
export DEB_BUILD_OPTIONS
echo "  DEB     npuring $version from $ref (DEB_BUILD_OPTIONS=$DEB_BUILD_OPTIONS)"
(cd "$tree" && dpkg-buildpackage -us -uc -b) >"$out/build.log" 2>&1 || {
	tail -n 40 "$out/build.log" >&2
	echo "scripts/deb.sh: dpkg-buildpackage failed (all of it: $out/build.log)" >&2
	exit 1
}

changes=$(ls "$tmp"/npuring_"$version"_*.changes)
for f in "$tmp"/*.deb "$tmp"/*.buildinfo "$changes"; do
	cp "$f" "$out/"
done
changes=$out/$(basename "$changes")
for deb in "$tmp"/*.deb; do
	name=$(dpkg-deb -f "$deb" Package)
	dpkg -c "$deb" >"$out/$name.contents"
	echo "  DEB     $(basename "$deb")"
done

# errors fail; warnings, info and pedantic tags are shown, each with why
rc=0
lintian --info --display-info --pedantic --fail-on error "$changes" \
	>"$out/lintian.txt" 2>&1 || rc=$?
echo "  LINTIAN $(grep -c '^[EWIP]:' "$out/lintian.txt") tags ($out/lintian.txt)"
grep '^E:' "$out/lintian.txt" >&2 || true
exit $rc
