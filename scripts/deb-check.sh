#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Install the Debian packages scripts/deb.sh built and use them as a user
# of each would, then remove them again.
#
#   scripts/deb-check.sh [--keep] DEBDIR
#
# As root on a Debian 12 machine, with the shared models and photos in
# $NPR_SHARED (default ../shared beside the source tree):
#   - apt-get installs every package of DEBDIR (their dependencies too);
#   - the packaged selftests run from their installed place
#     (<libdir>/npuring/selftests/run_tests, no source tree), without
#     valgrind, and none may fail;
#   - /usr/bin/npr-run classifies a photo;
#   - the C and the C++ example of libnpuring-dev are built with
#     `pkg-config --cflags --libs npuring` and run on a model;
#   - python3-npuring's example classifies the same photo;
#   - the packages are purged (--keep leaves them installed).
# The selftests' output is kept in DEBDIR/deb-check-selftests.log.
# The exit status is 0 when every step passed.
set -eu

keep=0
if [ "${1:-}" = --keep ]; then
	keep=1
	shift
fi
if [ $# != 1 ] || [ ! -d "$1" ]; then
	echo "usage: scripts/deb-check.sh [--keep] DEBDIR" >&2
	exit 2
fi
if [ "$(id -u)" != 0 ]; then
	echo "scripts/deb-check.sh: installs packages: run it as root" >&2
	exit 1
fi
debs=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
shared=$(cd "${NPR_SHARED:-$src/../shared}" && pwd)
pkgs="libnpuring0 libnpuring-dev npuring-tools npuring-tests python3-npuring"
photo=$shared/images/coffee.png
classifier=$shared/models/ir/squeezenet1.1/FP16/squeezenet1.1.xml
eye=$shared/models/ir/open-closed-eye-0001/FP32/open-closed-eye-0001.xml
for f in "$photo" "$classifier" "$eye"; do
	[ -f "$f" ] || { echo "scripts/deb-check.sh: $f is missing" >&2; exit 1; }
done

files=""
for p in $pkgs; do
	f=$(ls "$debs/${p}_"*.deb 2>/dev/null | head -1)
	[ -n "$f" ] || { echo "scripts/deb-check.sh: no $p in $debs" >&2; exit 1; }
	files="$files $f"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/npuring-deb-check.XXXXXX")
cleanup()
{
	rm -rf "$work"
	if [ $keep = 0 ]; then
		DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq $pkgs \
			>/dev/null 2>&1 || true
	fi
}
trap cleanup EXIT
fail=0
step()
{
	if [ "$1" = 0 ]; then
		echo "  PASS    $2"
	else
		echo "  FAIL    $2" >&2
		fail=1
	fi
}

echo "  INSTALL$(for f in $files; do printf ' %s' "$(basename "$f")"; done)"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $files >"$work/apt.log" 2>&1 || {
	cat "$work/apt.log" >&2
	exit 1
}

# each step below reports and the script goes on
set +e
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null ||
	    gcc -print-multiarch)
cd "$work"

# the packaged selftests, as a target machine runs them
NPR_SHARED=$shared NPR_VALGRIND= \
	/usr/lib/"$multiarch"/npuring/selftests/run_tests >selftests.log 2>&1 || true
cp selftests.log "$debs/deb-check-selftests.log"
tail -1 selftests.log
tail -1 selftests.log | grep -Eq '^[0-9]+ passed, 0 failed'
step $? "the packaged selftests (run_tests)"

# the tools
out=$(npr-run -m "$classifier" -i "$photo" 2>&1) && echo "$out" |
	grep -Eq '^  class  967 '
step $? "npr-run classifies $(basename "$photo") as 967 (espresso)"
npr-batch --version | grep -q "(npuring) "
step $? "npr-batch --version"

# a C and a C++ program built against the installed library
ex=/usr/share/doc/libnpuring-dev/examples
gcc -Wall -Werror -o hello "$ex"/hello.c $(pkg-config --cflags --libs npuring) &&
	./hello "$eye" >hello.log 2>&1
step $? "C with pkg-config: $(head -1 hello.log 2>/dev/null)"
g++ -std=c++17 -Wall -Werror -o hello-cc "$ex"/hello.cc \
	$(pkg-config --cflags --libs npuring) && ./hello-cc "$eye" >hello-cc.log 2>&1
step $? "C++ with pkg-config: $(head -1 hello-cc.log 2>/dev/null)"
ldd ./hello | grep -q "libnpuring.so.0 => /"
step $? "the C program links the installed libnpuring.so.0"

# Python, from the installed module
out=$(/usr/bin/python3 /usr/share/doc/python3-npuring/examples/classify.py \
	-m "$classifier" "$photo" 2>&1) && echo "$out" | grep -Eq '^1\. class  967 '
step $? "python3 classify.py: $(echo "$out" | sed -n 2p)"
/usr/bin/python3 -c 'import npuring; print(npuring.__file__)' |
	grep -q '^/usr/lib/python3/dist-packages/npuring/'
step $? "python3 imports npuring from dist-packages"

if [ $fail != 0 ]; then
	grep -h '^not ok\|^# not ok' selftests.log >&2 || true
	tail -n 5 hello.log hello-cc.log >&2 2>/dev/null || true
	echo "scripts/deb-check.sh: a step failed" >&2
	exit 1
fi
exit 0
