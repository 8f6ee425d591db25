// SPDX-License-Identifier: MIT
/*
 * Profiling: with ENABLE_PROFILING a request keeps one record per node of
 * the compiled model (original name, op type, executed or optimized out,
 * the kernel, its time), read with NPR_IOCTL_PROFILE.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "npuring.h"

#define MODEL "models/ir/face-detection-retail-0004/FP16-INT8/face-detection-retail-0004.xml"

FIXTURE(prof) {
	int fd;
	__u32 req;
};

static int setup(int fd, int profiling, __u32 *req)
{
	struct npr_prop_arg pa = { .param = NPR_PARAM_ENABLE_PROFILING,
				   .value = (__u64)profiling };
	struct npr_model_load ml;
	struct npr_compile co;
	struct npr_req_create rc;
	char path[4096];
	int err;

	if (snprintf(path, sizeof(path), "%s/%s", npr_test_shared(),
		     MODEL) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	npr_prep_model_load(&ml, path, NULL);
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml);
	if (err)
		return err;
	npr_prep_compile(&co, ml.handle);
	co.props = (uintptr_t)&pa;
	co.num_props = 1;
	err = npr_ioctl(fd, NPR_IOCTL_COMPILE, &co);
	if (err)
		return err;
	npr_prep_req_create(&rc, co.exec);
	err = npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc);
	*req = rc.req;
	return err;
}

FIXTURE_SETUP(prof)
{
	self->fd = -1;
	if (!npr_test_shared_ok())
		SKIP(return, "no shared data at %s", npr_test_shared());
	self->fd = npr_open("cpu", 0);
	ASSERT_GE(self->fd, 0);
	ASSERT_EQ(setup(self->fd, 1, &self->req), 0);
}

FIXTURE_TEARDOWN(prof)
{
	if (self->fd >= 0)
		npr_close(self->fd);
}

static int profile(int fd, __u32 req, struct npr_profile_rec **recs,
		   __u32 *count)
{
	struct npr_profile p = { .size = sizeof(p), .req = req };
	int err = npr_ioctl(fd, NPR_IOCTL_PROFILE, &p);

	if (err != -EMSGSIZE)
		return err ? err : -EPROTO;
	*recs = calloc(p.count, sizeof(**recs));
	if (!*recs)
		return -ENOMEM;
	p.recs = (uintptr_t)*recs;
	err = npr_ioctl(fd, NPR_IOCTL_PROFILE, &p);
	*count = p.count;
	return err;
}

TEST_F(prof, records_after_an_inference)
{
	struct npr_profile_rec *r = NULL;
	struct npr_infer inf;
	__u32 n = 0, i, executed = 0, out = 0, convs = 0, notrun = 0;
	unsigned long long total = 0;

	ASSERT_EQ(profile(self->fd, self->req, &r, &n), 0);
	for (i = 0; i < n; i++)
		notrun += r[i].status == NPR_PROF_NOT_RUN;
	free(r);
	EXPECT_GT(notrun, 0);

	npr_prep_infer(&inf, self->req);
	ASSERT_EQ(npr_ioctl(self->fd, NPR_IOCTL_INFER, &inf), 0);
	ASSERT_EQ(profile(self->fd, self->req, &r, &n), 0);
	for (i = 0; i < n; i++) {
		ASSERT_NE(r[i].name[0], 0);
		ASSERT_NE(r[i].type[0], 0);
		EXPECT_NE(r[i].status, NPR_PROF_NOT_RUN);
		if (r[i].status == NPR_PROF_EXECUTED) {
			executed++;
			EXPECT_NE(r[i].kernel[0], 0);
			total += r[i].real_ns;
			convs += !strcmp(r[i].type, "Convolution");
		} else {
			out++;
			EXPECT_EQ(r[i].real_ns, 0);
		}
	}
	/* face-detection-retail-0004 INT8: 33 convolutions run; the
	 * FakeQuantize of constant weights and the prior boxes fold */
	EXPECT_GE(executed, 33);
	EXPECT_GT(out, 0);
	EXPECT_GT(total, 0);
	TH_LOG("%u records: %u executed (%u convolutions), %u optimized out, %.2f ms",
	       n, executed, convs, out, total / 1e6);
	EXPECT_GE(convs + out, 33);
	free(r);
}

TEST_F(prof, errors)
{
	struct npr_profile p = { .size = sizeof(p), .req = self->req };
	struct npr_profile_rec one;
	char msg[64];
	__u32 req;

	p.recs = (uintptr_t)&one;
	p.count = 1;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_PROFILE, &p), -EMSGSIZE);
	EXPECT_GT(p.count, 1);
	/* the message gives the records needed and the room there was */
	snprintf(msg, sizeof(msg), "%u profile records, room for 1", p.count);
	EXPECT_NE(strstr(npr_last_error(), msg), NULL);
	/* no buffer: no room, whatever count says */
	p.recs = 0;
	p.count = 7;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_PROFILE, &p), -EMSGSIZE);
	EXPECT_NE(strstr(npr_last_error(), "room for 0"), NULL);
	p.recs = (uintptr_t)&one;
	p.count = 1;
	/* profiling off */
	ASSERT_EQ(setup(self->fd, 0, &req), 0);
	p.req = req;
	EXPECT_EQ(npr_ioctl(self->fd, NPR_IOCTL_PROFILE, &p), -ENODATA);
	EXPECT_NE(strstr(npr_last_error(), "ENABLE_PROFILING"), NULL);
}

TEST_HARNESS_MAIN
