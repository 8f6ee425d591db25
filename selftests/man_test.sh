#!/bin/bash
# SPDX-License-Identifier: MIT
# The man pages of Documentation/man: each renders without a warning of
# groff or man-db (man --warnings=w -l, from a tree laid out as
# $(MANDIR) is, so that .so links resolve as they will when installed);
# every exported symbol of lib/npuring.map, every npr_prep_*() helper of
# lib/include/npuring.h and every NPR_IOCTL_* command of uapi/npuring.h
# has a page that names it; each page has the sections its kind needs and
# the title of its file name; the structs a page shows are the uapi's,
# and the npuring pages it refers to exist.  Then the render check on a
# planted bad page, to show that it sees warnings at all.
here=$(cd "$(dirname "$0")" && pwd)
src=${NPR_SRCTREE:-$here/..}
mandir=$src/Documentation/man
map=$src/lib/npuring.map
header=$src/lib/include/npuring.h
uapi=$src/uapi/npuring.h

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export LC_ALL=C.UTF-8 MANWIDTH=80 MAN_DISABLE_SECCOMP=1

echo "TAP version 13"
echo "1..8"
n=0

# result NAME FAILURES...: ok when no failure was given, each printed
result()
{
	local name=$1 f
	shift
	n=$((n + 1))
	for f in "$@"; do
		echo "# $name: $f"
	done
	if [ $# = 0 ]; then
		echo "ok $n $name"
	else
		echo "not ok $n $name # $# problem(s)"
	fi
}

pages=()
for f in "$mandir"/*.[1-9]*; do
	[ -f "$f" ] && pages+=("$f")
done

# the tree man and dh_installman see: manN/NAME.N
for f in "${pages[@]}"; do
	b=${f##*/}
	s=${b##*.}
	mkdir -p "$tmp/tree/man${s:0:1}"
	ln -s "$f" "$tmp/tree/man${s:0:1}/$b"
done

# the page a name resolves to: the file itself, or the target of its .so
target()
{
	local f=$mandir/$1 l
	[ -f "$f" ] || return 1
	read -r l < "$f"
	case "$l" in
	.so\ *)
		l=${l#.so }
		f=$mandir/${l##*/}
		[ -f "$f" ] || return 1
		;;
	esac
	echo "$f"
}

# the text of the NAME section of page $1, escapes removed
name_section()
{
	sed -n '/^\.SH NAME/,/^\.SH/{/^\.SH/d;p}' "$1" |
		sed 's/\\%//g; s/\\-/-/g'
}

# 1. rendering
render()
{
	local out
	out=$(cd "$tmp/tree" && man --warnings=w -l -Tutf8 "$1" 2>&1 >"$tmp/page")
	[ -n "$out" ] && { echo "$out" | head -3; return 1; }
	[ -s "$tmp/page" ] || { echo "renders empty"; return 1; }
	return 0
}

if ! command -v man >/dev/null 2>&1 || ! command -v groff >/dev/null 2>&1; then
	n=$((n + 1))
	echo "ok $n render # SKIP man-db or groff is not installed (scripts/deps.sh installs them)"
	render_ok=0
else
	fails=()
	for f in "${pages[@]}"; do
		b=${f##*/}
		s=${b##*.}
		if ! why=$(render "man${s:0:1}/$b"); then
			fails+=("$b: ${why//$'\n'/; }")
		fi
	done
	result render "${fails[@]}"
	render_ok=1
fi

# 2. a page for every exported function, prep helper and ioctl command
fails=()
# the names under "global:" of every version node
names=$(sed 's/#.*//; s/[{};:]/ & /g' "$map" | awk '
	{ for (i = 1; i <= NF; i++) {
		if ($i == "global" || $i == "local") { g = $i == "global"; i++; continue }
		if ($i == "}") g = 0
		else if (g && $i ~ /^[A-Za-z_][A-Za-z_0-9]*$/) print $i
	} }')
[ -n "$names" ] || fails+=("no symbols found in $map")
prep=$(sed -n 's/^static inline [^(]*[ *]\(npr_prep_[a-z_0-9]*\)(.*/\1/p' "$header")
[ -n "$prep" ] || fails+=("no npr_prep_* helpers found in $header")
cmds=$(sed -n 's/^#define \(NPR_IOCTL_[A-Z_0-9]*\)[[:space:]]*_IO.*/\1/p' "$uapi")
[ -n "$cmds" ] || fails+=("no NPR_IOCTL_* commands found in $uapi")
for s in $names $prep $cmds; do
	if ! p=$(target "$s.3"); then
		fails+=("$s has no page $s.3 (nor a .so link)")
	elif ! name_section "$p" | grep -qw -- "$s"; then
		fails+=("$s.3 resolves to ${p##*/}, whose NAME does not list $s")
	fi
done
result coverage "${fails[@]}"

# 3. sections
fails=()
for f in "${pages[@]}"; do
	read -r l < "$f"
	case "$l" in .so\ *) continue ;; esac
	b=${f##*/}
	s=${b##*.}
	need=(NAME DESCRIPTION)
	case "$s" in
	1*) need+=(SYNOPSIS) ;;
	2* | 3*) need+=(SYNOPSIS "RETURN VALUE" ERRORS) ;;
	esac
	for sec in "${need[@]}"; do
		grep -qE "^\.SH \"?$sec\"?\$" "$f" ||
			fails+=("$b has no section $sec")
	done
done
result sections "${fails[@]}"

# 4. the title is the file's name
fails=()
for f in "${pages[@]}"; do
	read -r l < "$f"
	case "$l" in .so\ *) continue ;; esac
	b=${f##*/}
	want="${b%.*} ${b##*.}"
	got=$(sed -n 's/^\.TH \([^ ]*\) \([^ ]*\).*/\1 \2/p' "$f" | head -1)
	[ "${got^^}" = "${want^^}" ] ||
		fails+=("$b: .TH \"$got\", not \"${want^^}\"")
done
result titles "${fails[@]}"

# 5. .so links point at a page and say nothing else that renders
fails=()
for f in "${pages[@]}"; do
	read -r l < "$f"
	case "$l" in .so\ *) ;; *) continue ;; esac
	b=${f##*/}
	t=${l#.so }
	[[ "$t" =~ ^man[1-9]/[^/]+$ ]] ||
		fails+=("$b: .so $t is not manN/PAGE")
	[ -f "$mandir/${t##*/}" ] || fails+=("$b: .so $t does not exist")
	[ "${t:3:1}" = "${t##*.}" ] && [ "${t:3:1}" = "${b##*.}" ] ||
		fails+=("$b: .so $t is not in its own section")
	grep -v '^\.so \|^\.\\"' "$f" | grep -q . &&
		fails+=("$b: a .so link with more than the link and comments")
done
result so_links "${fails[@]}"

# 6. the structs shown are the uapi's
struct_of()
{
	sed -n "/^struct $2 {\$/,/^};\$/p" "$1"
}
fails=()
for f in "${pages[@]}"; do
	for st in $(sed -n 's/^struct \(npr_[a-z_0-9]*\) {$/\1/p' "$f" | sort -u); do
		want=$(struct_of "$uapi" "$st")
		got=$(struct_of "$f" "$st" | sed 's/\\e/\\/g')
		if [ -z "$want" ]; then
			fails+=("${f##*/}: struct $st is not in uapi/npuring.h")
		elif [ "$want" != "$got" ]; then
			fails+=("${f##*/}: struct $st differs from uapi/npuring.h")
		fi
	done
done
result structs "${fails[@]}"

# 7. references to npuring pages name pages that exist
fails=()
for f in "${pages[@]}"; do
	for r in $(grep -oE '(npr|NPR)[A-Za-z0-9_\\-]* "?\([1-9]\)' "$f" |
		   sed 's/\\-/-/g; s/ "\{0,1\}(\(.\))/.\1/' | sort -u); do
		[ -f "$mandir/$r" ] || fails+=("${f##*/} refers to ${r%.*}(${r##*.}), which has no page")
	done
done
result references "${fails[@]}"

# 8. the render check on a planted page with an unknown macro
if [ "$render_ok" = 1 ]; then
	mkdir -p "$tmp/tree/man3"
	printf '.TH PLANTED 3\n.SH NAME\nplanted \\- x\n.SH DESCRIPTION\n.nosuchmacro\n' \
		> "$tmp/tree/man3/planted.3"
	if render man3/planted.3 >/dev/null; then
		result render_sees_warnings "a page with an unknown macro rendered without a warning"
	else
		result render_sees_warnings
	fi
else
	n=$((n + 1))
	echo "ok $n render_sees_warnings # SKIP man-db or groff is not installed"
fi
