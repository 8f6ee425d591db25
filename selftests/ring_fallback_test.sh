#!/bin/sh
# SPDX-License-Identifier: MIT
# ring_test again over the eventfd fallback: what a machine without
# io_uring (kernel.io_uring_disabled, seccomp, an old kernel) runs.
exec env NPR_RING_FALLBACK=1 "${NPR_TESTDIR:-$(dirname "$0")}/ring_test" "$@"
