// SPDX-License-Identifier: MIT
/*
 * The library's version at run time, which a program compares with the
 * NPURING_VERSION_* macros of the header it was built with.  The number
 * is the Makefile's VERSION (NPR_LIB_VERSION); uapi_abi_test checks that
 * it is the header's.
 */
#include "npuring.h"

/**
 * npr_version() - the version of the library running the program
 *
 * Return: "MAJOR.MINOR.PATCH", a static string.
 */
const char *npr_version(void)
{
	return NPR_LIB_VERSION;
}
