#!/bin/bash
# SPDX-License-Identifier: MIT
#
# make bench: npuring's CPU backend against onnxruntime on the same files.
#
#   0. the CPU model and the load average (before and after the table).
#   1. SGEMM GFLOP/s, 256..2048, 1 and 2 threads (npr-kbench gemm); its
#      percentages are of the FMA peak it measures on this machine first
#      (its "peak:" line).
#   2. resnet18, mobilenet_v2, squeezenet1_1 from $NPR_SHARED/models/onnx at
#      batch 1 and 8, 1 and 2 threads: npr-kbench model and the peers'
#      ort_bench.js (onnxruntime-node), ROUNDS separate processes each; the
#      figure is the median of the per-round medians; ratio = ours / ORT.
#   3. The same for the quantized (QDQ) versions of those models in
#      $NPR_SHARED/models/onnx-int8: npuring's int8 kernels against
#      onnxruntime's own fused int8 path, same file, same input.
#   4. Three OpenVINO IR models (ours only).
#   5. OpenVINO INT8 IR against the FP32 variant of the same network (ours
#      only, batch 1, 1 and 2 threads): the two alternate in each of ROUNDS
#      rounds; medians; speed-up = FP32 time / INT8 time.
#
# Environment: NPR_SHARED (../shared), NPR_KBENCH (selftests/npr-kbench),
# ORT_NODE_DIR (where onnxruntime-node is installed; default
# ${TMPDIR:-/tmp}/npr-ort, installed there with the peers' install.sh if
# missing: never inside the repository), ROUNDS (3), RUNS (20),
# MODELS, BATCHES, THREADS to narrow the table, NO_ORT=1 to skip the peer,
# NO_GEMM=1, NO_FP32=1, NO_QDQ=1, NO_IR=1 or NO_IR_INT8=1 to skip a part,
# BASE_KBENCH=path: an npr-kbench built from another commit, run in the
# same rounds right after ours (a "base" column and ours / base), so that a
# change is compared with what it changed in one run, on one machine state.

set -u
here=$(cd "$(dirname "$0")/.." && pwd)
shared=${NPR_SHARED:-$here/../shared}
kbench=${NPR_KBENCH:-$here/selftests/npr-kbench}
ort_dir=${ORT_NODE_DIR:-${TMPDIR:-/tmp}/npr-ort}
rounds=${ROUNDS:-3}
runs=${RUNS:-20}
models=${MODELS:-"resnet18 mobilenet_v2 squeezenet1_1"}
batches=${BATCHES:-"1 8"}
threads=${THREADS:-"1 2"}
onnx=$shared/models/onnx
qdq=$shared/models/onnx-int8
base=${BASE_KBENCH:-}

[ -x "$kbench" ] || { echo "bench.sh: $kbench not built" >&2; exit 1; }

use_ort=1
if [ -n "${NO_ORT:-}" ] || ! command -v node >/dev/null; then
	use_ort=0
elif [ ! -d "$ort_dir/node_modules/onnxruntime-node" ]; then
	echo "bench.sh: installing onnxruntime-node into $ort_dir" >&2
	bash "$shared/peers/install.sh" "$ort_dir" >&2 || use_ort=0
fi

# median of the numbers on stdin
median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (!NR) { print "nan"; exit }
		if (NR % 2) print v[(NR + 1) / 2];
		else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

field() {
	sed -n "s/.*\"$1\":\([0-9.eE+-]*\).*/\1/p"
}

# The machine and how busy it was: the figures mean little without both.
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1)
fam=$(sed -n 's/^cpu family[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1)
echo "== $(nproc) CPUs: ${cpu:-unknown} (family ${fam:-?}); load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null) =="
echo

if [ -z "${NO_GEMM:-}" ]; then
	echo "== SGEMM (npr-kbench gemm, median of 5) =="
	for t in 1 2; do
		"$kbench" gemm -t "$t" -r 5
	done
	echo
fi

# table TITLE DIR SUFFIX: the models DIR/NAME.SUFFIX, ours against ORT
table() {
	local title=$1 dir=$2 suffix=$3
	echo "== $title: median ms (median of $rounds rounds x $runs runs) =="
	printf "%-14s %5s %3s %10s %10s %7s %9s" model batch thr npuring onnxrt ratio rss_mb
	[ -n "$base" ] && printf " %10s %8s" base vs_base
	echo
	for m in $models; do
		[ -f "$dir/$m.$suffix" ] || { echo "$m.$suffix: missing"; continue; }
		for b in $batches; do
			for t in $threads; do
				cell "$dir/$m.$suffix" "$onnx/$m.input_b1.f32" \
					"$m" "$b" "$t"
			done
		done
	done
	echo
}

# cell MODEL INPUT NAME BATCH THREADS: one row, ours and ORT alternating
cell() {
	local model=$1 input=$2 m=$3 b=$4 t=$5 r=$runs i line
	local ours="" theirs="" rss="" before="" mo mt mr mb ratio
	[ "$b" -gt 1 ] && r=$(( (runs + 1) / 2 ))
	for ((i = 0; i < rounds; i++)); do
		line=$("$kbench" model -m "$model" -b "$b" -t "$t" -r "$r" -w 3)
		ours="$ours $(echo "$line" | field median_ms)"
		rss="$rss $(echo "$line" | field peak_rss_mb)"
		if [ -n "$base" ]; then
			line=$("$base" model -m "$model" -b "$b" -t "$t" \
				-r "$r" -w 3)
			before="$before $(echo "$line" | field median_ms)"
		fi
		if [ $use_ort = 1 ]; then
			line=$(node "$shared/peers/ort_bench.js" \
				--ort-dir "$ort_dir" --model "$model" \
				--input "$input" --shape "$b,3,224,224" \
				--threads "$t" --runs "$r" --warmup 3 2>/dev/null)
			theirs="$theirs $(echo "$line" | field median_ms)"
		fi
	done
	mo=$(echo $ours | tr ' ' '\n' | median)
	mt=nan
	[ $use_ort = 1 ] && mt=$(echo $theirs | tr ' ' '\n' | median)
	mr=$(echo $rss | tr ' ' '\n' | median)
	ratio=$(awk -v a="$mo" -v b="$mt" 'BEGIN {
		if (b + 0 > 0) printf "%.2fx", a / b; else print "-" }')
	printf "%-14s %5d %3d %10.2f %10.2f %7s %9s" "$m" "$b" "$t" \
		"$mo" "$mt" "$ratio" "$mr"
	if [ -n "$base" ]; then
		mb=$(echo $before | tr ' ' '\n' | median)
		printf " %10.2f %8s" "$mb" "$(awk -v a="$mo" -v b="$mb" \
			'BEGIN { printf "%.3fx", a / b }')"
	fi
	echo
}

[ -z "${NO_FP32:-}" ] && table "whole models" "$onnx" onnx
[ -z "${NO_QDQ:-}" ] && table "QDQ models (int8 kernels)" "$qdq" qdq.onnx

echo "== load after the table: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null) =="
echo

if [ -z "${NO_IR:-}" ]; then
	echo "== OpenVINO IR models (npuring only, batch 1, median ms) =="
	for x in squeezenet1.1/FP16/squeezenet1.1.xml \
		 face-detection-retail-0004/FP16-INT8/face-detection-retail-0004.xml \
		 person-detection-retail-0013/FP32/person-detection-retail-0013.xml; do
		f=$shared/models/ir/$x
		[ -f "$f" ] || { echo "$x: missing"; continue; }
		for t in $threads; do
			line=$("$kbench" model -m "$f" -b 1 -t "$t" -r "$runs" -w 3)
			printf "%-60s thr %d %8.2f ms\n" "$x" "$t" \
				"$(echo "$line" | field median_ms)"
		done
	done

fi

[ -n "${NO_IR_INT8:-}" ] && exit 0
echo
echo "== OpenVINO INT8 IR against FP32 (npuring only, batch 1, median ms) =="
printf "%-45s %3s %10s %10s %8s\n" network thr FP32 INT8 speedup
for x in face-detection-retail-0004:FP32-v10 \
	 person-attributes-recognition-crossroad-0230:FP32 \
	 vehicle-attributes-recognition-barrier-0039:FP32 \
	 person-reidentification-retail-0287:FP32; do
	n=${x%%:*}
	f32=$shared/models/ir/$n/${x#*:}/$n.xml
	i8=$shared/models/ir/$n/FP16-INT8/$n.xml
	[ -f "$f32" ] && [ -f "$i8" ] || { echo "$n: missing"; continue; }
	for t in $threads; do
		a="" b=""
		for ((i = 0; i < rounds; i++)); do
			line=$("$kbench" model -m "$f32" -b 1 -t "$t" \
				-r "$runs" -w 3)
			a="$a $(echo "$line" | field median_ms)"
			line=$("$kbench" model -m "$i8" -b 1 -t "$t" \
				-r "$runs" -w 3)
			b="$b $(echo "$line" | field median_ms)"
		done
		a=$(echo $a | tr ' ' '\n' | median)
		b=$(echo $b | tr ' ' '\n' | median)
		printf "%-45s %3d %10.2f %10.2f %7.2fx\n" "$n" "$t" "$a" "$b" \
			"$(awk -v a="$a" -v b="$b" 'BEGIN { print a / b }')"
	done
done
echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null) =="
