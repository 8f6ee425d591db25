// SPDX-License-Identifier: MIT
#include "harness.h"
TEST_HARNESS_MAIN
