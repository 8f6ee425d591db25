#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The public headers as a program includes them: <npuring.h> and
# <npuring/uapi.h>, each alone and both, compiled as C11 with gcc and
# clang and as C++17 with g++ and clang++, -Wall -Wextra -pedantic -Werror.
# NPR_INCLUDEDIR names the directory holding them (default: lib/include of
# the source tree, which mirrors the installed layout); a compiler that is
# not installed is a skip.
here=$(cd "$(dirname "$0")" && pwd)
src=${NPR_SRCTREE:-$here/..}
inc=${NPR_INCLUDEDIR:-$src/lib/include}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# the program: the version macros, an ioctl number, an inline helper
cat > "$tmp/t.c" <<'PROG'
#include HEADER_A
#include HEADER_B
#include <stdio.h>

int main(void)
{
	struct npr_infer a;

	npr_prep_infer(&a, 1);
	printf("%d.%d.%d %lx %u\n", NPURING_VERSION_MAJOR,
	       NPURING_VERSION_MINOR, NPURING_VERSION_PATCH,
	       (unsigned long)NPR_IOCTL_INFER, a.size);
	return a.size == sizeof(a) ? 0 : 1;
}
PROG
# the uapi alone: the structs and numbers, without the library's API
cat > "$tmp/u.c" <<'PROG'
#include <npuring/uapi.h>

int main(void)
{
	return sizeof(struct npr_sqe) + NPR_UAPI_VERSION == 65 ? 0 : 1;
}
PROG
cp "$tmp/t.c" "$tmp/t.cc"
cp "$tmp/u.c" "$tmp/u.cc"

echo "TAP version 13"
echo "1..4"
n=0
status=0
for lang in c11:gcc c11:clang c++17:g++ c++17:clang++; do
	n=$((n + 1))
	std=${lang%%:*}
	cc=${lang#*:}
	ext=c
	[ "$std" = c++17 ] && ext=cc
	name="headers_${std}_$cc"
	if [ ! -r "$inc/npuring.h" ] || [ ! -r "$inc/npuring/uapi.h" ]; then
		echo "ok $n $name # SKIP no npuring.h and npuring/uapi.h in $inc"
		continue
	fi
	if ! command -v "$cc" >/dev/null 2>&1; then
		echo "ok $n $name # SKIP $cc is not installed"
		continue
	fi
	flags=(-std="$std" -Wall -Wextra -pedantic -Werror -I"$inc")
	err=""
	for order in '<npuring.h> <npuring/uapi.h>' \
		     '<npuring/uapi.h> <npuring.h>'; do
		set -- $order
		if ! out=$("$cc" "${flags[@]}" -DHEADER_A="$1" \
			   -DHEADER_B="$2" "$tmp/t.$ext" -o "$tmp/t" 2>&1) ||
		   ! "$tmp/t" >/dev/null; then
			err="$1 then $2: $out"
			break
		fi
	done
	if [ -z "$err" ] &&
	   ! out=$("$cc" "${flags[@]}" "$tmp/u.$ext" -o "$tmp/u" 2>&1); then
		err="<npuring/uapi.h> alone: $out"
	fi
	if [ -z "$err" ] && ! "$tmp/u"; then
		err="<npuring/uapi.h> alone: struct npr_sqe is not 64 bytes"
	fi
	if [ -n "$err" ]; then
		printf '%s\n' "$err" | head -20 | sed 's/^/# /'
		echo "not ok $n $name"
		status=1
	else
		echo "ok $n $name"
	fi
done
exit $status
