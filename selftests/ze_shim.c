// SPDX-License-Identifier: MIT
/*
 * libze_shim.so.1: the system's Level Zero loader as a newer one (1.18
 * and later) looks to a caller: it adds zeInitDrivers, which the Debian
 * loader 1.8.12 lacks, and every other entry point is the loader's own
 * (this library links it, so dlsym() on its handle finds them there).
 * npu_driver_test points NPR_ZE_LOADER at it to see npuring take the
 * zeInitDrivers path; each call is appended to the file ZE_SHIM_TRACE
 * names ("zeInitDrivers stype=0x... flags=0x...").
 */
#include <stdio.h>
#include <stdlib.h>

#include <level_zero/ze_api.h>

#include "npu/ze_graph.h"

ze_result_t zeInitDrivers(uint32_t *count, ze_driver_handle_t *drv,
			  const struct npr_ze_init_driver_type_desc *desc);

/**
 * zeInitDrivers() - the drivers of the types @desc asks for
 * @count: in: room in @drv (0: count only); out: the drivers
 * @drv: out: the driver handles, or NULL
 * @desc: stype NPR_ZE_STYPE_INIT_DRIVER_TYPE_DESC, flags: driver types
 *
 * The NPU type is zeInit(ZE_INIT_FLAG_VPU_ONLY) and zeDriverGet(); no
 * other type finds a driver here.
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_ARGUMENT for a
 * missing count or descriptor or another stype; what zeInit or
 * zeDriverGet return.
 */
ze_result_t zeInitDrivers(uint32_t *count, ze_driver_handle_t *drv,
			  const struct npr_ze_init_driver_type_desc *desc)
{
	const char *trace = getenv("ZE_SHIM_TRACE");
	ze_result_t r;
	FILE *f;

	if (trace && (f = fopen(trace, "a"))) {
		fprintf(f, "zeInitDrivers stype=0x%x flags=0x%x\n",
			desc ? desc->stype : 0, desc ? desc->flags : 0);
		fclose(f);
	}
	if (!count || !desc ||
	    desc->stype != NPR_ZE_STYPE_INIT_DRIVER_TYPE_DESC)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	if (!(desc->flags & NPR_ZE_INIT_DRIVER_TYPE_NPU)) {
		*count = 0;
		return ZE_RESULT_SUCCESS;
	}
	r = zeInit(ZE_INIT_FLAG_VPU_ONLY);
	return r ? r : zeDriverGet(count, drv);
}
