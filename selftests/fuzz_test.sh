#!/bin/bash
# SPDX-License-Identifier: MIT
# The regression corpus of every fuzz target (selftests/fuzz/corpus/TARGET)
# through the target's LLVMFuzzerTestOneInput (selftests/fuzz_replay_TARGET),
# 20 rounds, failing on a crash, a sanitizer report or memory that grows
# from round to round; then the growth check itself, on a planted leak.
# Under a sanitizer (NPR_SANITIZE, set by make check SANITIZE=...) the
# process's memory is the sanitizer's: mallinfo2() sees none of it and
# ASan's quarantine grows the resident set by design, so the corpus runs
# 3 rounds without a bound, and a leak is LeakSanitizer's to report at
# exit (the planted one must be; under TSan alone there is no leak check).
# Installed (make install-tests), where there are no sources, the targets
# are the fuzz_replay_* programs and NPR_FUZZ_CORPUS names the corpus.
here=$(cd "$(dirname "$0")" && pwd)
src=${NPR_SRCTREE:-$here/..}
bin=${NPR_TESTDIR:-$here}
corpora=${NPR_FUZZ_CORPUS:-$src/selftests/fuzz/corpus}
rounds=20
# heap: what a round allocates once more (the CPU backend's thread pool)
# stays far below; resident: thread stacks the C library keeps come and go
grow=(--repeat $rounds --warmup 2 --max-growth 256 --max-rss-growth 4096)
san=${NPR_SANITIZE:-}
[ -n "$san" ] && grow=(--repeat 3)

targets=()
for f in "$src"/selftests/fuzz/fuzz_*.c; do
	[ -f "$f" ] || continue
	f=${f##*/fuzz_}
	targets+=("${f%.c}")
done
if [ ${#targets[@]} = 0 ]; then
	for f in "$bin"/fuzz_replay_*; do
		[ -x "$f" ] && targets+=("${f##*/fuzz_replay_}")
	done
fi
echo "TAP version 13"
echo "1..$((${#targets[@]} + 1))"
n=0
for t in "${targets[@]}"; do
	n=$((n + 1))
	prog=$bin/fuzz_replay_$t
	corpus=$corpora/$t
	if [ ! -x "$prog" ]; then
		echo "not ok $n replay_$t # $prog is not built"
		continue
	fi
	if [ ! -d "$corpus" ]; then
		echo "ok $n replay_$t # SKIP no regression corpus $corpus"
		continue
	fi
	out=$("$prog" "${grow[@]}" "$corpus" 2>&1)
	rc=$?
	printf '%s\n' "$out" | tail -20 | sed 's/^/# /'
	if [ $rc = 0 ]; then
		echo "ok $n replay_$t"
	else
		echo "not ok $n replay_$t # exit status $rc"
	fi
done

# 256 KB lost after every input of the ir corpus must be caught
n=$((n + 1))
prog=$bin/fuzz_replay_ir
if [ ! -x "$prog" ]; then
	echo "ok $n growth_check_catches_a_leak # SKIP no $prog"
	exit 0
fi
if [ -n "$san" ] && [[ "$san" != *address* ]]; then
	echo "ok $n growth_check_catches_a_leak # SKIP under $san: no leak check"
	exit 0
fi
out=$("$prog" "${grow[@]}" --leak-per-input 262144 "$corpora/ir" 2>&1)
rc=$?
printf '%s\n' "$out" | tail -20 | sed 's/^/# /'
if [ -n "$san" ] && [ $rc != 0 ] &&
   [[ "$out" == *"LeakSanitizer: detected memory leaks"* ]]; then
	echo "ok $n growth_check_catches_a_leak # by LeakSanitizer"
elif [ $rc = 1 ] && [[ "$out" == *"memory grew by"* ]]; then
	echo "ok $n growth_check_catches_a_leak"
else
	echo "not ok $n growth_check_catches_a_leak # exit status $rc"
fi
