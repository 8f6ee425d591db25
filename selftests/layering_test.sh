#!/bin/sh
# SPDX-License-Identifier: MIT
# The layering rules of Documentation/design.rst, checked on the sources
# and the objects of this build (scripts/layering.py), and the checker
# itself on a planted bad include and a planted bad call.
here=$(cd "$(dirname "$0")" && pwd)
src=${NPR_SRCTREE:-$here/..}
obj=${NPR_TESTDIR:-$here}/..
if ! command -v python3 >/dev/null 2>&1; then
	echo "TAP version 13"
	echo "1..1"
	echo "ok 1 layering # SKIP python3 is not installed (scripts/deps.sh installs it)"
	exit 0
fi
exec python3 "$src/scripts/layering.py" --src "$src" --obj "$obj" --ktap
