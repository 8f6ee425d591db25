#!/bin/sh
# SPDX-License-Identifier: MIT
# The Python binding (python/npuring) against this build's library:
# selftests/python/test_npuring.py, in KTAP.  Uses $PYTHON, else
# /usr/bin/python3 or python3, the first that has numpy; skips when none
# has (scripts/deps.sh installs python3-numpy).  Arguments select tests
# by name.
here=$(cd "$(dirname "$0")" && pwd)
src=${NPR_SRCTREE:-$here/..}
obj=${NPR_TESTDIR:-$here}/..

skip()
{
	echo "TAP version 13"
	echo "1..1"
	echo "ok 1 python # SKIP $1"
	exit 4
}

[ -z "$NPR_SANITIZE" ] ||
	skip "the library is built with -fsanitize=$NPR_SANITIZE, whose runtime python3 would have to load first"

py=""
for p in ${PYTHON:-} /usr/bin/python3 python3; do
	if command -v "$p" >/dev/null 2>&1 &&
	   "$p" -c "import numpy" >/dev/null 2>&1; then
		py=$p
		break
	fi
done
[ -n "$py" ] || skip "no python3 with numpy (scripts/deps.sh installs python3-numpy)"

export NPURING_LIBRARY="${NPURING_LIBRARY:-$obj/lib/libnpuring.so.0}"
[ -e "$NPURING_LIBRARY" ] || skip "$NPURING_LIBRARY is not built"
export PYTHONPATH="$src/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
exec "$py" "$src/selftests/python/test_npuring.py" "$@"
