#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The ring programs (ring_test, ring_jobs_test, ring_deadline_test) again
# over the eventfd fallback: what a machine without io_uring
# (kernel.io_uring_disabled, seccomp, an old kernel) runs.  Their results
# come out as one KTAP stream, one plan and the tests numbered through, so
# that run.sh counts them as one program; arguments (-t NAME, -f FIXTURE)
# go to each program.
#
# Exit status: 1 (or the status of a program that crashed) if one failed,
# 4 if every test was skipped, else 0.

dir=${NPR_TESTDIR:-$(dirname "$0")}
progs="ring_test ring_jobs_test ring_deadline_test"
export NPR_RING_FALLBACK=1

plan=0
for p in $progs; do
	if ! list=$("$dir/$p" -l "$@"); then
		echo "# $p: cannot list its tests"
		exit 1
	fi
	plan=$((plan + $(printf '%s' "$list" | grep -c .)))
done

echo "TAP version 13"
echo "1..$plan"
n=0 pass=0 fail=0 skip=0 status=4
for p in $progs; do
	echo "# $p"
	while IFS= read -r line; do
		case "$line" in
		"TAP version "* | "1.."* | "# Totals: "*)
			continue
			;;
		"not ok "*)
			n=$((n + 1))
			fail=$((fail + 1))
			rest=${line#not ok }
			line="not ok $n ${rest#* }"
			;;
		"ok "*)
			n=$((n + 1))
			if [[ "$line" =~ \#[[:space:]]*[Ss][Kk][Ii][Pp] ]]; then
				skip=$((skip + 1))
			else
				pass=$((pass + 1))
			fi
			rest=${line#ok }
			line="ok $n ${rest#* }"
			;;
		esac
		printf '%s\n' "$line"
	done < <("$dir/$p" "$@")
	wait $! 2>/dev/null
	rc=$?
	case $rc in
	0) [ "$status" = 4 ] && status=0 ;;
	4) ;;
	*) [ "$status" = 0 ] || [ "$status" = 4 ] && status=$rc ;;
	esac
done
echo "# Totals: pass:$pass fail:$fail skip:$skip"
exit "$status"
