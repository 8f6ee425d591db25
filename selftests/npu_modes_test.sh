#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The npu programs (npu_models_test, npu_driver_test, vnpu_test) again in
# every other mode vnpu can present (Documentation/npu.rst, "Version
# matrix"): graph extension 1.5, 1.6 and 1.7, whose graphs ask for the
# COMMAND_LIST_INITIALIZE stage, and 1.8 with COMMAND_LIST_INITIALIZE.
# The newest mode (1.8, INITIALIZE) is vnpu's default, in which make check
# runs the programs themselves.  Each program runs whole in each mode,
# its loader-layer reruns included.
#
# The results come out as one KTAP stream, one plan and the tests numbered
# through, each test name after its mode ("1.5: npu_model..."), so that
# run.sh counts them as one program; arguments (-t NAME, -f FIXTURE) go
# to each program.
#
# Exit status: 1 (or the status of a program that crashed) if one failed,
# 4 if every test was skipped, else 0.

dir=${NPR_TESTDIR:-$(dirname "$0")}
progs="npu_models_test npu_driver_test vnpu_test npu_async_test npu_llm_test
	weightless_test"
modes="5:INITIALIZE 6:INITIALIZE 7:INITIALIZE 8:COMMAND_LIST_INITIALIZE"

plan=0
for p in $progs; do
	if ! list=$("$dir/$p" -l "$@"); then
		echo "# $p: cannot list its tests"
		exit 1
	fi
	n=$(printf '%s' "$list" | grep -c .)
	for m in $modes; do
		plan=$((plan + n))
	done
done

echo "TAP version 13"
echo "1..$plan"
n=0 pass=0 fail=0 skip=0 status=4
for m in $modes; do
	export VNPU_GRAPH_VERSION=${m%%:*} VNPU_INIT_STAGE=${m#*:}
	tag="1.$VNPU_GRAPH_VERSION"
	[ "$VNPU_GRAPH_VERSION" -ge 8 ] && tag="$tag $VNPU_INIT_STAGE"
	for p in $progs; do
		echo "# $p, graph extension $tag"
		while IFS= read -r line; do
			case "$line" in
			"TAP version "* | "1.."* | "# Totals: "*)
				continue
				;;
			"not ok "*)
				n=$((n + 1))
				fail=$((fail + 1))
				rest=${line#not ok }
				line="not ok $n $tag: ${rest#* }"
				;;
			"ok "*)
				n=$((n + 1))
				if [[ "$line" =~ \#[[:space:]]*[Ss][Kk][Ii][Pp] ]]; then
					skip=$((skip + 1))
				else
					pass=$((pass + 1))
				fi
				rest=${line#ok }
				line="ok $n $tag: ${rest#* }"
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
done
echo "# Totals: pass:$pass fail:$fail skip:$skip"
exit "$status"
