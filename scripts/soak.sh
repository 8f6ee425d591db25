#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The soak: examples/uring-server on a real model for a while (ten minutes
# by default) under examples/uring-soak's eight clients, four well-behaved
# and four hostile (dropping mid-request, malformed and oversized headers,
# trickling bytes, stalling).  Over a Unix socket in a private temporary
# directory; nothing listens on the network.  Not part of make check.
#
# Passes when the server lives to the end, answers every well-formed
# request exactly once with the reference answer (computed once at the
# start), refuses every malformed header with the matching error, times
# out every staller, keeps its VmRSS within 5% of its post-warm-up value,
# and exits 0 on SIGTERM with counts that agree with the clients'.
# Prints p50/p99 latency of the well-formed requests, requests served,
# bad clients handled and the RSS.
#
#   scripts/soak.sh [--duration SECONDS] [--model MODEL.xml] [--device DEV]
#                   [--timeout SECONDS] [--no-rss-check]
#
# Environment: SOAK_DURATION (600), NPR_SHARED (../shared, where the
# default model open-closed-eye-0001 lives), O (the build directory, as
# for make; default the source tree).  --timeout is the server's -t, how
# long a client has for a whole request (5).  --no-rss-check reports the
# RSS without checking it: for a build with SANITIZE=address, whose
# quarantine grows for minutes.

set -u
here=$(cd "$(dirname "$0")/.." && pwd)
shared=${NPR_SHARED:-$here/../shared}
build=${O:-$here}
duration=${SOAK_DURATION:-600}
model=$shared/models/ir/open-closed-eye-0001/FP32/open-closed-eye-0001.xml
device=cpu
timeout=5
rss=

usage() {
	echo "usage: scripts/soak.sh [--duration SECONDS] [--model MODEL.xml] [--device DEV] [--timeout SECONDS] [--no-rss-check]" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--duration) [ $# -ge 2 ] || usage; duration=$2; shift 2 ;;
	--model) [ $# -ge 2 ] || usage; model=$2; shift 2 ;;
	--device) [ $# -ge 2 ] || usage; device=$2; shift 2 ;;
	--timeout) [ $# -ge 2 ] || usage; timeout=$2; shift 2 ;;
	--no-rss-check) rss=-R; shift ;;
	*) usage ;;
	esac
done
case $duration$timeout in
*[!0-9]*|'') usage ;;
esac
[ "$duration" -ge 5 ] && [ "$timeout" -ge 1 ] || usage

server=$build/examples/uring-server
soak=$build/examples/uring-soak
for p in "$server" "$soak"; do
	[ -x "$p" ] || { echo "soak.sh: $p not built (make)" >&2; exit 1; }
done
[ -r "$model" ] || { echo "soak.sh: no model $model" >&2; exit 1; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/npr-soak.XXXXXX") || exit 1
sock=$dir/server.sock
spid=
cleanup() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "soak.sh: $(basename "$model") on $device for $duration s, server timeout $timeout s"
"$server" -d "$device" -m "$model" -s "$sock" -t "$timeout" \
	>"$dir/server.out" 2>"$dir/server.err" &
spid=$!
for _ in $(seq 300); do
	[ -S "$sock" ] && break
	kill -0 "$spid" 2>/dev/null || break
	sleep 0.1
done
if [ ! -S "$sock" ]; then
	echo "soak.sh: the server did not start:" >&2
	cat "$dir/server.err" >&2
	exit 1
fi

"$soak" -s "$sock" -p "$spid" -d "$duration" -t "$timeout" $rss | tee "$dir/soak.out"
rc=${PIPESTATUS[0]}

kill -TERM "$spid" 2>/dev/null
wait "$spid"
src=$?
spid=
stats=$(grep '^served ' "$dir/server.out")
echo "soak.sh: server exit status $src: $stats"
[ -s "$dir/server.err" ] && sed 's/^/soak.sh: server: /' "$dir/server.err"
[ "$src" -eq 0 ] || rc=1

# the server's counts against the clients'
num() { sed -n "s/.* \([0-9][0-9]*\) $1.*/\1/p"; }
refused=$(echo "$stats" | num 'headers refused')
timedout=$(echo "$stats" | num 'timed out')
failed=$(echo "$stats" | sed -n 's/.*connections: \([0-9]*\) failed.*/\1/p')
malformed=$(num 'malformed refused' <"$dir/soak.out")
stalled=$(num 'stalled timed out' <"$dir/soak.out")
if [ "${refused:-x}" != "${malformed:-y}" ] ||
   [ "${timedout:-x}" != "${stalled:-y}" ] || [ "${failed:-x}" != 0 ]; then
	echo "soak.sh: server and clients disagree: refused $refused/$malformed, timed out $timedout/$stalled, failed ${failed:-?}"
	rc=1
fi
if [ "$rc" -eq 0 ]; then
	echo "soak.sh: PASS"
else
	echo "soak.sh: FAIL"
fi
exit "$rc"
