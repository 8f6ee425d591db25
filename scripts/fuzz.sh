#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Run one fuzz target of selftests/fuzz/ for a bounded time.
#
#   scripts/fuzz.sh TARGET [SECONDS]   seeds (first time), then fuzz
#                                      (default 60 s); TARGET is ir, onnx,
#                                      blob, cache, ioctl, ring, server...
#   scripts/fuzz.sh seeds [TARGET...]  only make the seed corpora
#
# The targets are built by `make fuzz` into $FUZZ_O (build-fuzz).  Seeds
# go to $FUZZ_O/seeds/TARGET, never into the tree: the IR models of
# $NPR_SHARED/models (.xml and .bin carved into one input), the ONNX
# node models of libonnx-testdata, small QDQ ONNX models that
# selftests/fuzz_qdq_models writes (int8 nodes: blocked and rows weights,
# NHWC and NCHW), compiled-model blobs that npr-compile makes of them,
# cache entries a compile with CACHE_DIR writes, and short command
# streams for ioctl and ring.  What the fuzzer finds new goes to
# $FUZZ_O/corpus/TARGET, crashes to $FUZZ_O/artifacts/TARGET/; the
# committed regression corpus selftests/fuzz/corpus/TARGET is read too
# (a crasher fixed: add it there, `make check` replays it).
#
# Environment: FUZZ_O, NPR_SHARED (../shared), NPR_BUILD (the normal
# build, for tools/npr-compile: the source tree), ONNX_TESTDATA
# (/usr/share/libonnx-testdata/data), MAX_LEN, RSS_MB (2048), TIMEOUT
# (60 s for one input: the instrumented library on a loaded machine is
# slow, a hang is not), FUZZ_ARGS (more libFuzzer options).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
fuzz_o=${FUZZ_O:-$here/build-fuzz}
shared=${NPR_SHARED:-$here/../shared}
build=${NPR_BUILD:-$here}
testdata=${ONNX_TESTDATA:-/usr/share/libonnx-testdata/data}

die()
{
	echo "fuzz.sh: $*" >&2
	exit 1
}

# The longest input worth trying, per target.
max_len()
{
	case $1 in
	ir|onnx|blob|cache) echo "${MAX_LEN:-65536}" ;;
	*) echo "${MAX_LEN:-4096}" ;;
	esac
}

# A program of the normal build ($build), built when missing.
program()
{
	local p=$build/$1

	if [ ! -x "$p" ]; then
		make -C "$here" --no-print-directory O="$build" -j2 "$p" >&2 ||
			die "cannot build $1"
	fi
	echo "$p"
}

compiler()
{
	program tools/npr-compile
}

# Small quantized (QDQ) ONNX models (selftests/fuzz/qdq_models.c), made
# once into $fuzz_o/qdq; their paths.
qdq_models()
{
	local g dir=$fuzz_o/qdq

	if [ ! -d "$dir" ]; then
		g=$(program selftests/fuzz_qdq_models)
		{ mkdir -p "$dir.tmp" && "$g" "$dir.tmp" &&
		  mv "$dir.tmp" "$dir"; } || die "cannot write the QDQ models"
	fi
	ls "$dir"/*.onnx
}

# IR models: a little-endian u32 length of the .xml, the .xml, its .bin.
seeds_ir()
{
	local out=$1 limit xml bin
	limit=$(max_len ir)
	for xml in "$shared"/models/ir-small/*.xml \
		   "$shared"/models/ir-stateful/*.xml; do
		[ -f "$xml" ] || continue
		bin=${xml%.xml}.bin
		[ -f "$bin" ] || bin=/dev/null
		python3 - "$xml" "$bin" "$out/$(basename "$xml" .xml)" \
			"$limit" <<'EOF'
import struct, sys
x = open(sys.argv[1], "rb").read()
b = open(sys.argv[2], "rb").read()
if len(x) + len(b) + 4 <= int(sys.argv[4]):
    open(sys.argv[3], "wb").write(struct.pack("<I", len(x)) + x + b)
EOF
	done
}

seeds_onnx()
{
	local out=$1 limit m name
	limit=$(max_len onnx)
	[ -d "$testdata" ] || echo "fuzz.sh: no $testdata (libonnx-testdata)" >&2
	while IFS= read -r m; do
		name=${m#"$testdata"/}
		name=${name%/model.onnx}
		[ "$(stat -c %s "$m")" -le "$limit" ] &&
			cp "$m" "$out/${name//\//_}"
	done < <(find "$testdata" -name model.onnx 2>/dev/null | sort)
	qdq_models | while IFS= read -r m; do cp "$m" "$out/"; done
}

# The models the blob and cache seeds are compiled from: the QDQ ones
# (int8 nodes), small IR ones and a spread of ONNX node models.
blob_models()
{
	qdq_models
	ls "$shared"/models/ir-small/*.xml "$shared"/models/ir-stateful/*.xml \
		2>/dev/null
	find "$testdata/node" -name model.onnx 2>/dev/null | sort | awk 'NR % 12 == 1'
}

seeds_blob()
{
	local out=$1 c m name limit
	c=$(compiler)
	limit=$(max_len blob)
	while IFS= read -r m; do
		name=$(basename "$(dirname "$m")")_$(basename "$m")
		"$c" -m "$m" -o "$out/$name.blob" >/dev/null 2>&1 || continue
		[ "$(stat -c %s "$out/$name.blob")" -le "$limit" ] ||
			rm -f "$out/$name.blob"
		# int8 nodes: also NCHW with rows weights (no layout pass)
		if [ "${m#"$fuzz_o"/qdq/}" != "$m" ] &&
		   ! { NPR_QLAYOUT_OFF=1 "$c" -m "$m" -o "$out/$name.rows.blob" \
			>/dev/null 2>&1 &&
		       [ "$(stat -c %s "$out/$name.rows.blob")" -le "$limit" ]; }
		then
			rm -f "$out/$name.rows.blob"
		fi
		# weightless (format 4), its weights file after it (fuzz_blob.c)
		case $m in *.xml) [ -f "${m%.xml}.bin" ] || continue ;;
		*) continue ;; esac
		"$c" -m "$m" -o "$out/$name.wl" \
			--prop CACHE_MODE=OPTIMIZE_SIZE >/dev/null 2>&1 || continue
		cat "$out/$name.wl" "${m%.xml}.bin" > "$out/$name.wl.blob"
		rm -f "$out/$name.wl"
		{ [ "$(od -An -tu4 -j8 -N4 "$out/$name.wl.blob")" -eq 4 ] &&
		  [ "$(stat -c %s "$out/$name.wl.blob")" -le "$limit" ]; } ||
			rm -f "$out/$name.wl.blob"
	done < <(blob_models)
}

# Cache entries as a compile with a CACHE_DIR writes them.
seeds_cache()
{
	local out=$1 c m dir e limit
	c=$(compiler)
	limit=$(max_len cache)
	dir=$(mktemp -d "${TMPDIR:-/tmp}/npr-fuzz-seeds.XXXXXX") || return
	while IFS= read -r m; do
		"$c" -m "$m" -o "$dir/out" --prop "CACHE_DIR=$dir/cache" \
			>/dev/null 2>&1 || true
	done < <(blob_models | head -40)
	# the QDQ models' entries again without the layout pass
	while IFS= read -r m; do
		NPR_QLAYOUT_OFF=1 "$c" -m "$m" -o "$dir/out" \
			--prop "CACHE_DIR=$dir/rows" >/dev/null 2>&1 || true
	done < <(qdq_models)
	for e in "$dir"/cache/*.blob "$dir"/rows/*.blob; do
		[ -f "$e" ] && [ "$(stat -c %s "$e")" -le "$limit" ] &&
			cp "$e" "$out/entry-$(basename "$(dirname "$e")")-${e##*/}"
	done
	rm -rf "$dir"
}

# Command streams: each command (or job opcode) once, on both devices.
seeds_ioctl()
{
	python3 - "$1" <<'EOF'
import os, sys
for dev in (0, 1):
    for c in range(29):
        # the command, then a mix of zeros and small numbers for its fields
        body = bytes([c]) + bytes(range(c % 7, c % 7 + 24))
        with open(os.path.join(sys.argv[1], "cmd%02d-%s" % (c, "cpu null".split()[dev])), "wb") as f:
            f.write(bytes([dev]) + body * 3)
EOF
}

seeds_ring()
{
	python3 - "$1" <<'EOF'
import os, sys
for conf in (0x00, 0x01, 0x02, 0x03, 0x80):
    for op in range(11):
        # submit a batch of op, reap, destroy, close
        step = bytes([0, 3, op, 1, 0, 0, op + 1, 0, 0, 0]) + bytes([4, 8, 8, 0])
        with open(os.path.join(sys.argv[1], "conf%02x-op%d" % (conf, op)), "wb") as f:
            f.write(bytes([conf]) + step * 2 + bytes([6, 1, 0xf7]))
EOF
}

seeds()
{
	local t=$1 out=$fuzz_o/seeds/$1
	rm -rf "$out"
	mkdir -p "$out"
	case $t in
	ir) seeds_ir "$out" ;;
	onnx) seeds_onnx "$out" ;;
	blob) seeds_blob "$out" ;;
	cache) seeds_cache "$out" ;;
	ioctl) seeds_ioctl "$out" ;;
	ring) seeds_ring "$out" ;;
	*) ;;	# the regression corpus only
	esac
	echo "  SEEDS   $t: $(find "$out" -type f | wc -l) files in $out"
}

targets()
{
	local f
	for f in "$here"/selftests/fuzz/fuzz_*.c; do
		f=${f##*/fuzz_}
		echo "${f%.c}"
	done
}

[ $# -ge 1 ] || die "usage: scripts/fuzz.sh TARGET [SECONDS] | seeds [TARGET...]"
command -v python3 >/dev/null 2>&1 || die "python3 is needed for the seeds"
if [ "$1" = seeds ]; then
	shift
	[ $# -gt 0 ] || set -- $(targets)
	for t in "$@"; do
		seeds "$t"
	done
	exit 0
fi

t=$1
secs=${2:-60}
bin=$fuzz_o/fuzz/fuzz_$t
[ -f "$here/selftests/fuzz/fuzz_$t.c" ] ||
	die "no target $t (selftests/fuzz/fuzz_$t.c); there are: $(targets | tr '\n' ' ')"
[ -x "$bin" ] || die "$bin is not built: make fuzz"
[ -d "$fuzz_o/seeds/$t" ] || seeds "$t"
mkdir -p "$fuzz_o/corpus/$t" "$fuzz_o/artifacts/$t"
dirs=("$fuzz_o/corpus/$t" "$fuzz_o/seeds/$t")
[ -d "$here/selftests/fuzz/corpus/$t" ] &&
	dirs+=("$here/selftests/fuzz/corpus/$t")
log=$fuzz_o/fuzz-$t.log

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
echo "  FUZZ    $t for ${secs}s (log: $log)"
start=$(date +%s)
# shellcheck disable=SC2086
"$bin" -max_total_time="$secs" -max_len="$(max_len "$t")" \
	-timeout="${TIMEOUT:-60}" \
	-rss_limit_mb="${RSS_MB:-2048}" -print_final_stats=1 \
	-artifact_prefix="$fuzz_o/artifacts/$t/" ${FUZZ_ARGS:-} \
	"${dirs[@]}" >"$log" 2>&1
rc=$?
ran=$(( $(date +%s) - start ))

runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
last=$(grep -E '^#[0-9]+' "$log" | tail -1)
cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
ft=$(echo "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
corp=$(echo "$last" | sed -n 's/.*corp: \([0-9]*\/[0-9a-zA-Z]*\).*/\1/p')
echo "  $t: ${runs:-?} executions in ${ran}s, coverage ${cov:-?} edges" \
	"(${ft:-?} features), corpus ${corp:-?}"
if [ $rc != 0 ]; then
	grep -E '^==[0-9]+==ERROR|^SUMMARY|runtime error|Test unit written' \
		"$log" | head -5
	echo "  $t: the fuzzer stopped with status $rc: see $log" >&2
	exit $rc
fi
