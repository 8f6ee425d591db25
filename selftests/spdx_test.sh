#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Every tracked file of the source tree carries an SPDX-License-Identifier
# tag in its first five lines, then the check itself on a planted file
# without one.  Exempt: symbolic links, binary files, LICENSE (the text
# itself) and the files whose format has no comments: the fuzz corpus's
# inputs, JSON, debian/changelog and debian/source/.  Needs git and a git
# checkout (a source package has no list of tracked files: skipped).
here=$(cd "$(dirname "$0")" && pwd)
src=${NPR_SRCTREE:-$here/..}

echo "TAP version 13"
echo "1..2"
if ! command -v git >/dev/null 2>&1 ||
   ! git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	echo "ok 1 spdx_tags # SKIP $src is not a git checkout"
	echo "ok 2 spdx_check_catches_an_untagged_file # SKIP $src is not a git checkout"
	exit 0
fi

# the files of $1 (a directory) that should and do not carry a tag
untagged()
{
	local f
	while IFS= read -r -d '' f; do
		case $f in
		LICENSE | selftests/fuzz/corpus/* | *.json | \
		debian/changelog | debian/source/*)
			continue ;;
		esac
		[ -L "$1/$f" ] || [ ! -f "$1/$f" ] && continue
		# binary: no line to put a tag on
		grep -Iq . "$1/$f" || continue
		head -5 "$1/$f" | grep -q 'SPDX-License-Identifier: ' ||
			printf '%s\n' "$f"
	done < <(git -C "$1" ls-files -z)
}

bad=$(untagged "$src")
if [ -z "$bad" ]; then
	echo "ok 1 spdx_tags"
else
	printf '%s\n' "$bad" | sed 's/^/# no SPDX tag: /'
	echo "not ok 1 spdx_tags"
	status=1
fi

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
git -C "$tmp" init -q &&
	printf '// SPDX-License-Identifier: MIT\n' > "$tmp/good.c" &&
	printf 'int x;\n' > "$tmp/bad.c" &&
	git -C "$tmp" add good.c bad.c
if [ "$(untagged "$tmp")" = bad.c ]; then
	echo "ok 2 spdx_check_catches_an_untagged_file"
else
	echo "not ok 2 spdx_check_catches_an_untagged_file"
	status=1
fi
exit ${status:-0}
