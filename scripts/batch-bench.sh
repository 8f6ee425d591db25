#!/bin/bash
# SPDX-License-Identifier: MIT
#
# npr-batch's throughput on many small files, against the other ways of
# running a model on each of them:
#
#   scripts/batch-bench.sh [BUILD_DIR]
#
# Makes FILES inputs (symbolic links to the shared photos, in turn) in a
# temporary directory and times, RUNS times each, with the medians printed
# as a table:
#   - npr-batch at --nireq 1, 2 and 4 (one process, files read through
#     io_uring, N requests in flight; --nireq 1 is also the "one process
#     running them one by one" case: one inference at a time, with the next
#     file read and decoded while it runs);
#   - a shell loop of npr-run calls, one process per file (load, compile,
#     one inference), timed on the first LOOP files and scaled to FILES.
# Wall times are of whole processes, model load and compile included.
#
# Environment: NPR_SHARED (default ../shared from the source tree), FILES
# (2000), RUNS (3), LOOP (200), MODEL (squeezenet1.1 FP16 from the shared
# models), DEVICE (cpu).

set -eu -o pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src}" && pwd)
shared=${NPR_SHARED:-$src/../shared}
files=${FILES:-2000}
runs=${RUNS:-3}
loop=${LOOP:-200}
model=${MODEL:-$shared/models/ir/squeezenet1.1/FP16/squeezenet1.1.xml}
device=${DEVICE:-cpu}
batch=$build/tools/npr-batch
run=$build/tools/npr-run

for p in "$batch" "$run" "$model"; do
	if [ ! -e "$p" ]; then
		echo "batch-bench: $p is missing (build first: make)" >&2
		exit 1
	fi
done
photos=("$shared"/images/*.png)
if [ ! -e "${photos[0]}" ]; then
	echo "batch-bench: no photos in $shared/images" >&2
	exit 1
fi
if [ "$loop" -gt "$files" ]; then
	loop=$files
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/npr-batch-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/in"
for ((i = 0; i < files; i++)); do
	ln -s "${photos[i % ${#photos[@]}]}" "$(printf '%s/in/%05d.png' "$dir" "$i")"
done

now() { date +%s.%N; }

# median of the numbers on standard input
median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR % 2) print v[(NR + 1) / 2];
		else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# the wall time of "$@" in seconds; its output kept in $dir/out
timed() {
	local t0 t1
	t0=$(now)
	"$@" >"$dir/out" 2>"$dir/err"
	t1=$(now)
	echo "$t1 - $t0" | bc -l
}

loop_npr_run() {
	local f n=0
	for f in "$dir"/in/*.png; do
		[ "$n" -lt "$loop" ] || break
		"$run" -d "$device" -m "$model" -i "$f" --top 1 --json >/dev/null
		n=$((n + 1))
	done
}

echo "model    $model"
echo "device   $device, $files files ($(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'))"
echo "load     $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) before the runs"
echo "runs     $runs each, medians shown"
echo

printf '%-44s %10s %10s\n' "how" "wall s" "inputs/s"
for n in 1 2 4; do
	for ((r = 0; r < runs; r++)); do
		timed "$batch" -d "$device" -m "$model" --nireq "$n" --top 1 "$dir/in"
		if [ "$(wc -l <"$dir/out")" -ne "$files" ] || grep -q '"error"' "$dir/out"; then
			echo "batch-bench: npr-batch --nireq $n did not give $files results" >&2
			cat "$dir/err" >&2
			exit 1
		fi
	done | median >"$dir/median"
	t=$(cat "$dir/median")
	printf '%-44s %10.2f %10.1f\n' "npr-batch --nireq $n" "$t" \
		"$(echo "$files / $t" | bc -l)"
done
for ((r = 0; r < runs; r++)); do
	timed loop_npr_run
done | median >"$dir/median"
t=$(cat "$dir/median")
printf '%-44s %10.2f %10.1f\n' "shell loop of npr-run ($loop files, x $((files / loop)))" \
	"$(echo "$t * $files / $loop" | bc -l)" "$(echo "$loop / $t" | bc -l)"
echo
echo "load     $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) after the runs"
