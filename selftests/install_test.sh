#!/bin/bash
# SPDX-License-Identifier: MIT
#
# make install as a distribution runs it, and the result used as a user
# uses it: install into a temporary DESTDIR with PREFIX=/usr and a
# multiarch LIBDIR, check the tree (files, links, soname, the static
# library's symbols: the map's only), build examples/install/hello.c and
# hello.cc with `pkg-config --cflags --libs npuring` and run them on a real
# model, link hello.c against the installed libnpuring.a, then make
# uninstall, which must leave no file behind.
#
# make check runs it with NPR_SRCTREE, NPR_TESTDIR (the build's
# selftests/), NPR_CC and NPR_CXX (the build's compilers) and NPR_SHARED.
here=$(cd "$(dirname "$0")" && pwd)
src=${NPR_SRCTREE:-$here/..}
obj=$(cd "${NPR_TESTDIR:-$here}/.." && pwd)
cc=${NPR_CC:-cc}
cxx=${NPR_CXX:-c++}
model=${NPR_SHARED:-$src/../shared}/models/ir/open-closed-eye-0001/FP32/open-closed-eye-0001.xml
version=$(sed -n 's/^VERSION := //p' "$src/Makefile")

echo "TAP version 13"
echo "1..8"
if [ -n "$NPR_SANITIZE" ]; then
	for t in install tree pkgconfig hello_c hello_cxx static_link \
		 static_symbols uninstall; do
		echo "ok $((++n)) $t # SKIP under $NPR_SANITIZE: the sanitizer build is not what make install installs"
	done
	exit 0
fi

exec 3>&1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
dest=$tmp/dest
ma=$($cc -print-multiarch 2>/dev/null)
[ -n "$ma" ] || ma=$(uname -m)-linux-gnu
libdir=/usr/lib/$ma
vars=(-C "$src" O="$obj" DESTDIR="$dest" PREFIX=/usr LIBDIR="$libdir"
      PYTHONDIR=/usr/lib/python3/dist-packages)
n=0 status=0

# result NAME MESSAGE: ok when MESSAGE is empty, else not ok with it
result()
{
	n=$((n + 1))
	if [ -z "$2" ]; then
		echo "ok $n $1"
	else
		printf '%s\n' "$2" | head -30 | sed 's/^/# /'
		echo "not ok $n $1"
		status=1
	fi
}

skip()
{
	n=$((n + 1))
	echo "ok $n $1 # SKIP $2"
}

# 1: make install
if out=$(${MAKE:-make} -s "${vars[@]}" install 2>&1); then
	result install ""
else
	result install "make install failed: $out"
	exit 1
fi

# 2: the tree
err=""
need()
{
	[ -e "$dest$1" ] || err="$err${err:+$'\n'}missing $1"
}
link()
{
	local to
	to=$(readlink "$dest$1")
	[ "$to" = "$2" ] || err="$err${err:+$'\n'}$1 -> '$to', not $2"
}
[ -f "$dest$libdir/libnpuring.so.$version" ] &&
	[ ! -L "$dest$libdir/libnpuring.so.$version" ] ||
	err="libnpuring.so.$version is not a regular file"
link "$libdir/libnpuring.so.0" "libnpuring.so.$version"
link "$libdir/libnpuring.so" libnpuring.so.0
soname=$(readelf -d "$dest$libdir/libnpuring.so.$version" 2>&1 |
	 sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = libnpuring.so.0 ] || err="$err${err:+$'\n'}soname '$soname'"
for f in /usr/include/npuring.h /usr/include/npuring/uapi.h \
	 "$libdir/libnpuring.a" "$libdir/pkgconfig/npuring.pc"; do
	need "$f"
done
for t in "$obj"/tools/npr-*; do
	[ -x "$t" ] && [[ "$t" != *.[od] ]] && need "/usr/bin/${t##*/}"
done
for m in "$src"/Documentation/man/*.[137]; do
	need "/usr/share/man/man${m##*.}/${m##*/}"
done
for p in "$src"/python/npuring/*.py; do
	[ -e "$p" ] && need "/usr/lib/python3/dist-packages/npuring/${p##*/}"
done
[ -e "$obj/npu/vnpu/libze_intel_vpu.so.1" ] &&
	need "$libdir/npuring/vnpu/libze_intel_vpu.so.1"
[ -e "$dest/usr/lib/libnpuring.so.0" ] &&
	err="$err${err:+$'\n'}the library is in /usr/lib, not $libdir"
result tree "$err"

# 3: pkg-config on the installed npuring.pc only, paths under DESTDIR
export PKG_CONFIG_LIBDIR=$dest$libdir/pkgconfig
export PKG_CONFIG_PATH=
export PKG_CONFIG_SYSROOT_DIR=$dest
err=""
if ! command -v pkg-config >/dev/null 2>&1; then
	skip pkgconfig "pkg-config is not installed"
	skip hello_c "pkg-config is not installed"
	skip hello_cxx "pkg-config is not installed"
	pc_ok=0
else
	pc_ok=1
	v=$(pkg-config --modversion npuring 2>&1)
	[ "$v" = "$version" ] || err="--modversion: $v"
	flags=$(echo $(pkg-config --cflags --libs npuring 2>&1))
	[ "$flags" = "-I$dest/usr/include -L$dest$libdir -lnpuring" ] ||
		err="$err${err:+$'\n'}--cflags --libs: $flags"
	result pkgconfig "$err"
fi

# run PROGRAM: its output, and a message unless it printed a sum of 1
run_hello()
{
	local out
	if [ ! -r "$model" ]; then
		return 2
	fi
	if ! out=$(LD_LIBRARY_PATH=$dest$libdir "$@" "$model" 2>&1); then
		echo "$* failed: $out"
		return 1
	fi
	printf '%s\n' "$out" | sed 's/^/# /' >&3
	[[ "$out" == *"npuring $version "* ]] ||
		echo "the library's version is not $version: $out"
}

# 4, 5: the examples built as a user builds them, run on a real model
if [ $pc_ok = 1 ]; then
	for lang in c:$cc:hello.c:-std=c11 cxx:$cxx:hello.cc:-std=c++17; do
		IFS=: read -r name comp file std <<< "$lang"
		if ! command -v "$comp" >/dev/null 2>&1; then
			skip "hello_$name" "$comp is not installed"
			continue
		fi
		# shellcheck disable=SC2046
		if ! out=$($comp $std -Wall -Wextra -Werror \
			   "$src/examples/install/$file" \
			   $(pkg-config --cflags --libs npuring) \
			   -o "$tmp/hello_$name" 2>&1); then
			result "hello_$name" "build: $out"
			continue
		fi
		if ! readelf -d "$tmp/hello_$name" |
		     grep -q 'NEEDED.*\[libnpuring.so.0\]'; then
			result "hello_$name" "not linked against libnpuring.so.0"
			continue
		fi
		msg=$(run_hello "$tmp/hello_$name")
		if [ $? = 2 ]; then
			skip "hello_$name" "no model at $model (set NPR_SHARED)"
		else
			result "hello_$name" "$msg"
		fi
	done
fi

# 6: hello.c against the installed static library, no libnpuring.so
if [ $pc_ok = 1 ]; then
	# shellcheck disable=SC2046
	if ! out=$($cc -std=c11 -Wall -Werror "$src/examples/install/hello.c" \
		   $(pkg-config --cflags npuring) "$dest$libdir/libnpuring.a" \
		   $(pkg-config --static --libs npuring | sed 's/-lnpuring//') \
		   -o "$tmp/hello_static" 2>&1); then
		result static_link "build: $out"
	elif readelf -d "$tmp/hello_static" | grep -q 'NEEDED.*libnpuring'; then
		result static_link "linked against the shared library"
	else
		msg=$(run_hello "$tmp/hello_static")
		if [ $? = 2 ]; then
			skip static_link "no model at $model (set NPR_SHARED)"
		else
			result static_link "$msg"
		fi
	fi
else
	skip static_link "pkg-config is not installed"
fi

# 7: the installed archive's global symbols are the map's, nothing else
want=$(sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\);.*/\1/p' \
	"$src/lib/npuring.map" | sort)
got=$(nm -g --defined-only "$dest$libdir/libnpuring.a" 2>&1 |
      awk 'NF == 3 { print $3 }' | sort)
if [ "$got" = "$want" ]; then
	result static_symbols ""
else
	result static_symbols "$(diff <(echo "$want") <(echo "$got") | head -20)
$(echo "$got" | wc -l) global symbols, the map has $(echo "$want" | wc -l)"
fi

# 8: make uninstall leaves no file or link
if ! out=$(${MAKE:-make} -s "${vars[@]}" uninstall 2>&1); then
	result uninstall "make uninstall failed: $out"
else
	left=$(find "$dest" ! -type d)
	result uninstall "${left:+left behind: $left}"
fi
exit $status
