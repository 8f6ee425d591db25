#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Run selftest programs and sum their KTAP results.
#
#   selftests/run.sh [-p] PROGRAM...
#
# Each PROGRAM (a *_test binary from the build directory) runs in turn with
# the caller's environment; its KTAP output is passed through, with -p (or
# NPR_RUN_PREFIX=1) prefixed by the program name.  Programs named in
# NPR_VALGRIND (space or comma separated basenames, e.g. "ir_test") run
# under valgrind; valgrind errors and definite leaks fail the test they
# happen in.  A program that crashes or exits non-zero without reporting a
# failure, or reports fewer results than it planned, counts as failed.
# NPR_SKIP lists programs not to run, "name=reason" entries separated by
# ";" (make check SANITIZE=thread leaves the slowest out): each of their
# tests counts as skipped, with the reason.
#
# The last line is always "N passed, N failed, N skipped"; the exit status
# is 0 if and only if nothing failed.

prefix=${NPR_RUN_PREFIX:-0}
if [ "$1" = "-p" ]; then
	prefix=1
	shift
fi

VALGRIND_OPTS="-q --error-exitcode=99 --leak-check=full"
VALGRIND_OPTS="$VALGRIND_OPTS --errors-for-leak-kinds=definite"
VALGRIND_OPTS="$VALGRIND_OPTS --show-leak-kinds=definite"

total_pass=0
total_fail=0
total_skip=0

# Is $1 listed in NPR_VALGRIND?
wants_valgrind()
{
	local name
	for name in ${NPR_VALGRIND//,/ }; do
		[ "$name" = "$1" ] && return 0
	done
	return 1
}

# The reason $1 is listed in NPR_SKIP for, or nothing.
skip_reason()
{
	local entry
	local IFS=';'

	for entry in $NPR_SKIP; do
		entry=${entry# }
		if [ "${entry%%=*}" = "$1" ]; then
			echo "${entry#*=}"
			return
		fi
	done
}

# Count program $1's tests as skipped for reason $2, without running them.
skip_one()
{
	local prog=$1 why=$2 name n

	name=$(basename "$prog")
	n=$("$prog" -l 2>/dev/null | grep -c .)
	[ "$n" -gt 0 ] || n=1
	echo "# selftests: $name"
	echo "# $name: not run, its $n tests skipped: $why"
	echo "# $name: pass:0 fail:0 skip:$n"
	total_skip=$((total_skip + n))
}

run_one()
{
	local prog=$1 name line plan=-1 pass=0 fail=0 skip=0 rc=255
	local -a cmd

	name=$(basename "$prog")
	echo "# selftests: $name"
	if [ ! -x "$prog" ]; then
		echo "# $name: not found or not executable"
		total_fail=$((total_fail + 1))
		return
	fi
	cmd=("$prog")
	if wants_valgrind "$name"; then
		if command -v valgrind >/dev/null 2>&1; then
			# valgrind is slow: give each test more time
			# shellcheck disable=SC2206
			cmd=(env "TEST_TIMEOUT=${TEST_TIMEOUT:-600}"
			     valgrind $VALGRIND_OPTS "$prog")
			echo "# $name: running under valgrind"
		else
			echo "# $name: valgrind is not installed, running without it"
		fi
	fi

	while IFS= read -r line; do
		if [[ "$line" == *__NPR_RC__\ * ]]; then
			# the exit status, appended after the program's output
			rc=${line##*__NPR_RC__ }
			line=${line%__NPR_RC__ *}
			[ -z "$line" ] && continue
		fi
		case "$line" in
		"1.."*)
			plan=${line#1..}
			plan=${plan%% *}
			;;
		"not ok "*)
			fail=$((fail + 1))
			;;
		"ok "*)
			# "ok N name # SKIP reason" (case-insensitive directive)
			if [[ "$line" =~ \#[[:space:]]*[Ss][Kk][Ii][Pp] ]]; then
				skip=$((skip + 1))
			else
				pass=$((pass + 1))
			fi
			;;
		esac
		if [ "$prefix" = 1 ]; then
			printf '%s: %s\n' "$name" "$line"
		else
			printf '%s\n' "$line"
		fi
	done < <("${cmd[@]}"; echo "__NPR_RC__ $?")

	if [[ "$plan" =~ ^[0-9]+$ ]] && [ $((pass + fail + skip)) -lt "$plan" ]; then
		echo "# $name: $((plan - pass - fail - skip)) of $plan tests reported no result"
		fail=$((fail + plan - pass - fail - skip))
	fi
	if [ "$rc" != 0 ] && [ "$fail" = 0 ]; then
		if [ "$rc" = 4 ] && [ "$pass" = 0 ]; then
			# kselftest: the whole program skipped
			[ "$skip" = 0 ] && skip=1
		else
			echo "# $name: exited with status $rc without reporting a failure"
			fail=1
		fi
	fi
	echo "# $name: pass:$pass fail:$fail skip:$skip"
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
	total_skip=$((total_skip + skip))
}

for prog in "$@"; do
	why=$(skip_reason "$(basename "$prog")")
	if [ -n "$why" ]; then
		skip_one "$prog" "$why"
	else
		run_one "$prog"
	fi
done

echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" = 0 ]
