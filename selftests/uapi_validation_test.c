// SPDX-License-Identifier: MIT
/*
 * The validation rules of the uapi header, through the public API only: for
 * every command each rule (size, flags, must-be-zero fields, fds, handles
 * that are unknown, stale, of another fd or of the wrong type) with every
 * other field valid, in the documented order, and the same rules on the
 * ring ioctls.  The relu model and the ioctl wrappers: uapi_util.h.
 */
#define _GNU_SOURCE
#include "uapi_util.h"

/* ---- the validation rules, command by command --------------------------- */

/**
 * struct cmd_desc - how to drive one command in the generic rule tests
 * @cmd: NPR_IOCTL_*.
 * @size: sizeof its struct.
 * @known_flags: flag bits the command accepts.
 * @fill: write a valid argument (the buffer is zeroed, @size bytes).
 * @reserved_off: offset of a must-be-zero field, -1 if none.
 * @handle_off: offset of the handle field, -1 if none.
 * @handle_type: the type it takes; 0 for any (HANDLE_DESTROY).
 * @wrong_type: a type it must refuse with -EBADF, 0 if none.
 */
struct cmd_desc {
	unsigned long cmd;
	size_t size;
	__u32 known_flags;
	void (*fill)(struct npr_test *_metadata, struct objs *o, void *arg);
	int reserved_off;
	int handle_off;
	int handle_type;
	int wrong_type;
	size_t v0;	/* version-0 size when the struct grew, else 0 */
};

/* The smallest size the library accepts. */
static size_t v0_size(const struct cmd_desc *d)
{
	return d->v0 ? d->v0 : d->size;
}

static void fill_device_info(struct npr_test *_metadata __maybe_unused,
			     struct objs *o __maybe_unused,
			     void *arg __maybe_unused)
{
}

static void fill_get_param(struct npr_test *_metadata __maybe_unused,
			   struct objs *o __maybe_unused, void *arg)
{
	struct npr_param *a = arg;

	a->handle = o->exec;
	a->param = NPR_PARAM_INFERENCE_NUM_THREADS;
}

static void fill_set_param(struct npr_test *_metadata __maybe_unused,
			   struct objs *o __maybe_unused, void *arg)
{
	struct npr_param *a = arg;

	a->handle = 0;		/* the device */
	a->param = NPR_PARAM_LOG_LEVEL;
	a->value = 0;
}

static void fill_model_load(struct npr_test *_metadata __maybe_unused,
			    struct objs *o __maybe_unused, void *arg)
{
	struct npr_model_load *a = arg;

	a->flags = NPR_MODEL_LOAD_MEMORY;
	a->xml = (uintptr_t)relu_xml;
	a->xml_size = strlen(relu_xml);
}

static void fill_model_info(struct npr_test *_metadata __maybe_unused,
			    struct objs *o __maybe_unused, void *arg)
{
	struct npr_model_info *a = arg;

	a->handle = o->model;
}

static void fill_port_info(struct npr_test *_metadata __maybe_unused,
			   struct objs *o __maybe_unused, void *arg)
{
	struct npr_port_info *a = arg;

	a->handle = o->model;
	a->index = 0;
	a->name = (uintptr_t)o->name;
	a->name_len = sizeof(o->name);
}

static void fill_compile(struct npr_test *_metadata __maybe_unused,
			 struct objs *o __maybe_unused, void *arg)
{
	struct npr_compile *a = arg;

	a->model = o->model;
}

static void fill_req_create(struct npr_test *_metadata __maybe_unused,
			    struct objs *o __maybe_unused, void *arg)
{
	struct npr_req_create *a = arg;

	a->exec = o->exec;
}

static void fill_set_tensor(struct npr_test *_metadata __maybe_unused,
			    struct objs *o __maybe_unused, void *arg)
{
	struct npr_tensor_arg *a = arg;

	a->req = o->req;
	a->index = 0;
	a->elem_type = NPR_ELEM_F32;
	a->rank = 2;
	a->dims[0] = 1;
	a->dims[1] = 4;
	a->data = (uintptr_t)o->in;
	a->bytes = sizeof(o->in);
}

static void fill_get_tensor(struct npr_test *_metadata __maybe_unused,
			    struct objs *o __maybe_unused, void *arg)
{
	struct npr_tensor_arg *a = arg;

	a->flags = NPR_PORT_OUTPUT;
	a->req = o->req;
	a->index = 0;
	a->data = (uintptr_t)o->out;
	a->bytes = sizeof(o->out);
}

static void fill_infer(struct npr_test *_metadata __maybe_unused,
		       struct objs *o __maybe_unused, void *arg)
{
	struct npr_infer *a = arg;

	a->req = o->req;
}

/* Destroys something made for the purpose, so it can run many times. */
static void fill_destroy(struct npr_test *_metadata __maybe_unused,
			 struct objs *o __maybe_unused, void *arg)
{
	struct npr_handle_destroy *a = arg;

	load_relu(_metadata, o->fd, &a->handle);
}

static void fill_get_error(struct npr_test *_metadata __maybe_unused,
			   struct objs *o __maybe_unused, void *arg)
{
	struct npr_get_error *a = arg;

	a->buf = (uintptr_t)o->msg;
	a->len = sizeof(o->msg);
}

#define OFF(type, field)	((int)offsetof(struct type, field))

static const struct cmd_desc desc_device_info = {
	NPR_IOCTL_DEVICE_INFO, sizeof(struct npr_device_info), 0,
	fill_device_info, OFF(npr_device_info, reserved), -1, 0, 0,
};
static const struct cmd_desc desc_get_param = {
	NPR_IOCTL_GET_PARAM, sizeof(struct npr_param), 0,
	fill_get_param, -1, OFF(npr_param, handle),
	NPR_HANDLE_EXEC, NPR_HANDLE_MODEL,
};
static const struct cmd_desc desc_set_param = {
	NPR_IOCTL_SET_PARAM, sizeof(struct npr_param), 0,
	fill_set_param, -1, OFF(npr_param, handle),
	NPR_HANDLE_EXEC, NPR_HANDLE_REQUEST,
};
static const struct cmd_desc desc_model_load = {
	NPR_IOCTL_MODEL_LOAD, sizeof(struct npr_model_load),
	NPR_MODEL_LOAD_MEMORY | NPR_MODEL_LOAD_DEFER,
	fill_model_load, OFF(npr_model_load, reserved), -1, 0, 0,
};
static const struct cmd_desc desc_model_info = {
	NPR_IOCTL_MODEL_INFO, sizeof(struct npr_model_info), 0,
	fill_model_info, OFF(npr_model_info, reserved),
	OFF(npr_model_info, handle), NPR_HANDLE_MODEL, NPR_HANDLE_REQUEST,
	offsetof(struct npr_model_info, exec_bytes),
};
static const struct cmd_desc desc_port_info = {
	NPR_IOCTL_PORT_INFO, sizeof(struct npr_port_info), NPR_PORT_OUTPUT,
	fill_port_info, OFF(npr_port_info, reserved),
	OFF(npr_port_info, handle), NPR_HANDLE_MODEL, NPR_HANDLE_REQUEST,
};
static const struct cmd_desc desc_compile = {
	NPR_IOCTL_COMPILE, sizeof(struct npr_compile), NPR_COMPILE_SHAPE_RANGES,
	fill_compile, -1, OFF(npr_compile, model),
	NPR_HANDLE_MODEL, NPR_HANDLE_EXEC,
};
static const struct cmd_desc desc_req_create = {
	NPR_IOCTL_REQ_CREATE, sizeof(struct npr_req_create), 0,
	fill_req_create, -1, OFF(npr_req_create, exec),
	NPR_HANDLE_EXEC, NPR_HANDLE_MODEL,
};
static const struct cmd_desc desc_set_tensor = {
	NPR_IOCTL_SET_TENSOR, sizeof(struct npr_tensor_arg),
	NPR_PORT_OUTPUT | NPR_TENSOR_BIND,
	fill_set_tensor, -1, OFF(npr_tensor_arg, req),
	NPR_HANDLE_REQUEST, NPR_HANDLE_MODEL,
};
static const struct cmd_desc desc_get_tensor = {
	NPR_IOCTL_GET_TENSOR, sizeof(struct npr_tensor_arg),
	NPR_PORT_OUTPUT | NPR_TENSOR_MAP,
	fill_get_tensor, -1, OFF(npr_tensor_arg, req),
	NPR_HANDLE_REQUEST, NPR_HANDLE_EXEC,
};
static const struct cmd_desc desc_infer = {
	NPR_IOCTL_INFER, sizeof(struct npr_infer), 0,
	fill_infer, OFF(npr_infer, reserved), OFF(npr_infer, req),
	NPR_HANDLE_REQUEST, NPR_HANDLE_MODEL,
};
static const struct cmd_desc desc_destroy = {
	NPR_IOCTL_HANDLE_DESTROY, sizeof(struct npr_handle_destroy), 0,
	fill_destroy, OFF(npr_handle_destroy, reserved),
	OFF(npr_handle_destroy, handle), 0, 0,
};
static void fill_prop_info(struct npr_test *_metadata __maybe_unused,
			   struct objs *o, void *arg)
{
	struct npr_prop_info *a = arg;

	a->handle = o->exec;
	a->index = 0;
}

static const struct cmd_desc desc_prop_info = {
	NPR_IOCTL_PROP_INFO, sizeof(struct npr_prop_info),
	NPR_PROP_INFO_BY_ID | NPR_PROP_INFO_BY_NAME,
	fill_prop_info, OFF(npr_prop_info, reserved),
	OFF(npr_prop_info, handle), NPR_HANDLE_EXEC, NPR_HANDLE_MODEL,
};
static void fill_state(struct npr_test *_metadata __maybe_unused,
		       struct objs *o, void *arg)
{
	struct npr_state_arg *a = arg;

	a->req = o->req;
	a->flags = NPR_STATE_RESET_ALL;
}

static void fill_export(struct npr_test *_metadata __maybe_unused,
			struct objs *o, void *arg)
{
	static unsigned char buf[1 << 16];	/* the relu model's blob fits */
	struct npr_export *a = arg;

	a->exec = o->exec;
	a->data = (uintptr_t)buf;
	a->bytes = sizeof(buf);
}

static const struct cmd_desc desc_export = {
	NPR_IOCTL_EXPORT, sizeof(struct npr_export), 0, fill_export,
	OFF(npr_export, reserved), OFF(npr_export, exec), NPR_HANDLE_EXEC,
	NPR_HANDLE_REQUEST,
};

/* RESET_ALL succeeds on a request of a model without variables */
static const struct cmd_desc desc_state_reset = {
	NPR_IOCTL_STATE_RESET, sizeof(struct npr_state_arg),
	NPR_STATE_RESET_ALL, fill_state, -1, OFF(npr_state_arg, req),
	NPR_HANDLE_REQUEST, NPR_HANDLE_EXEC,
};
static const struct cmd_desc desc_get_error = {
	NPR_IOCTL_GET_ERROR, sizeof(struct npr_get_error), NPR_GET_ERROR_JOB,
	fill_get_error, -1, -1, 0, 0,
	offsetof(struct npr_get_error, user_data),
};

/* Room for a struct and a tail past it, aligned like the structs. */
union argbuf {
	__u64 align;
	unsigned char b[512];
};

static void *make_arg(struct npr_test *_metadata, struct objs *o,
		      const struct cmd_desc *d, union argbuf *buf)
{
	memset(buf, 0, sizeof(*buf));
	memcpy(buf->b, &(__u32){ (__u32)d->size }, 4);
	d->fill(_metadata, o, buf->b);
	return buf->b;
}

static void put_u32(void *arg, int off, __u32 v)
{
	memcpy((char *)arg + off, &v, 4);
}

static __u32 get_u32(const void *arg, int off)
{
	__u32 v;

	memcpy(&v, (const char *)arg + off, 4);
	return v;
}

/* A live object of @type on o->fd, destroyed by the test if it must. */
static __u32 make_object(struct npr_test *_metadata, struct objs *o,
			 int type)
{
	__u32 h = 0;

	switch (type) {
	case NPR_HANDLE_EXEC:
		compile_model(_metadata, o->fd, o->model, &h);
		break;
	case NPR_HANDLE_REQUEST:
		create_req(_metadata, o->fd, o->exec, &h);
		break;
	default:
		load_relu(_metadata, o->fd, &h);
		break;
	}
	return h;
}

static __u32 object_of_type(struct objs *o, int type)
{
	switch (type) {
	case NPR_HANDLE_EXEC:
		return o->exec;
	case NPR_HANDLE_REQUEST:
		return o->req;
	default:
		return o->model;
	}
}

/* Every command, for the rules every command follows. */
FIXTURE(cmd) {
	struct objs o;
};

FIXTURE_VARIANT(cmd) {
	const struct cmd_desc *d;
};

FIXTURE_VARIANT_ADD(cmd, device_info) { .d = &desc_device_info };
FIXTURE_VARIANT_ADD(cmd, get_param) { .d = &desc_get_param };
FIXTURE_VARIANT_ADD(cmd, set_param) { .d = &desc_set_param };
FIXTURE_VARIANT_ADD(cmd, model_load) { .d = &desc_model_load };
FIXTURE_VARIANT_ADD(cmd, model_info) { .d = &desc_model_info };
FIXTURE_VARIANT_ADD(cmd, port_info) { .d = &desc_port_info };
FIXTURE_VARIANT_ADD(cmd, compile) { .d = &desc_compile };
FIXTURE_VARIANT_ADD(cmd, req_create) { .d = &desc_req_create };
FIXTURE_VARIANT_ADD(cmd, set_tensor) { .d = &desc_set_tensor };
FIXTURE_VARIANT_ADD(cmd, get_tensor) { .d = &desc_get_tensor };
FIXTURE_VARIANT_ADD(cmd, infer) { .d = &desc_infer };
FIXTURE_VARIANT_ADD(cmd, handle_destroy) { .d = &desc_destroy };
FIXTURE_VARIANT_ADD(cmd, get_error) { .d = &desc_get_error };
FIXTURE_VARIANT_ADD(cmd, prop_info) { .d = &desc_prop_info };
FIXTURE_VARIANT_ADD(cmd, state_reset) { .d = &desc_state_reset };
FIXTURE_VARIANT_ADD(cmd, export) { .d = &desc_export };

FIXTURE_SETUP(cmd)
{
	self->o.fd = -1;
	objs_open(_metadata, &self->o);
}

FIXTURE_TEARDOWN(cmd)
{
	objs_close(_metadata, &self->o);
}

TEST_F(cmd, accepts_a_valid_argument)
{
	union argbuf buf;
	void *arg = make_arg(_metadata, &self->o, variant->d, &buf);

	ASSERT_EQ(IOC(self->o.fd, variant->d->cmd, arg), 0);
	/* the size field is the caller's and is never rewritten */
	EXPECT_EQ(get_u32(arg, 0), variant->d->size);
}

/* errno is never touched, on success or on failure */
TEST_F(cmd, leaves_errno_alone)
{
	union argbuf buf;
	int ret, err;
	void *arg;

	arg = make_arg(_metadata, &self->o, variant->d, &buf);
	ret = poisoned_ioctl(self->o.fd, variant->d->cmd, arg, &err);
	EXPECT_EQ(ret, 0);
	EXPECT_EQ(err, ERRNO_POISON);

	ret = poisoned_ioctl(self->o.fd, variant->d->cmd, NULL, &err);
	EXPECT_EQ(ret, -EINVAL);
	EXPECT_EQ(err, ERRNO_POISON);

	arg = make_arg(_metadata, &self->o, variant->d, &buf);
	put_u32(arg, 4, get_u32(arg, 4) | (1u << 31));
	ret = poisoned_ioctl(self->o.fd, variant->d->cmd, arg, &err);
	EXPECT_EQ(ret, -EOPNOTSUPP);
	EXPECT_EQ(err, ERRNO_POISON);

	ret = poisoned_ioctl(-1, variant->d->cmd, arg, &err);
	EXPECT_EQ(ret, -EBADF);
	EXPECT_EQ(err, ERRNO_POISON);
}

TEST_F(cmd, rejects_null_arg)
{
	EXPECT_EQ(IOC(self->o.fd, variant->d->cmd, NULL), -EINVAL);
}

TEST_F(cmd, rejects_size_below_version_0)
{
	const __u32 sizes[] = { 0, 4, 8, (__u32)v0_size(variant->d) - 1 };
	union argbuf buf;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		void *arg = make_arg(_metadata, &self->o, variant->d, &buf);

		put_u32(arg, 0, sizes[i]);
		ret = IOC(self->o.fd, variant->d->cmd, arg);
		if (ret != -EINVAL)
			TH_LOG("with size %u", sizes[i]);
		EXPECT_EQ(ret, -EINVAL);
	}
}

TEST_F(cmd, rejects_nonzero_bytes_past_known_size)
{
	const size_t extra[] = { 0, 7, 63 };	/* which tail byte is set */
	union argbuf buf;
	size_t i;

	for (i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
		void *arg = make_arg(_metadata, &self->o, variant->d, &buf);

		put_u32(arg, 0, variant->d->size + 64);
		buf.b[variant->d->size + extra[i]] = 0x01;
		EXPECT_EQ(IOC(self->o.fd, variant->d->cmd, arg), -E2BIG);
	}
}

TEST_F(cmd, accepts_zero_bytes_past_known_size)
{
	union argbuf buf;
	void *arg = make_arg(_metadata, &self->o, variant->d, &buf);
	size_t i;

	put_u32(arg, 0, variant->d->size + 64);
	ASSERT_EQ(IOC(self->o.fd, variant->d->cmd, arg), 0);
	EXPECT_EQ(get_u32(arg, 0), variant->d->size + 64);
	/* nothing is written past what the library knows */
	for (i = variant->d->size; i < variant->d->size + 64; i++)
		ASSERT_EQ(buf.b[i], 0);
}

TEST_F(cmd, rejects_unknown_flags)
{
	union argbuf buf;
	int bit, ret;

	for (bit = 0; bit < 32; bit++) {
		void *arg;
		__u32 flag = 1u << bit;

		if (variant->d->known_flags & flag)
			continue;
		arg = make_arg(_metadata, &self->o, variant->d, &buf);
		put_u32(arg, 4, get_u32(arg, 4) | flag);
		ret = IOC(self->o.fd, variant->d->cmd, arg);
		if (ret != -EOPNOTSUPP)
			TH_LOG("with flag 0x%x", flag);
		EXPECT_EQ(ret, -EOPNOTSUPP);
	}
}

TEST_F(cmd, rejects_bad_fd)
{
	union argbuf buf;
	void *arg = make_arg(_metadata, &self->o, variant->d, &buf);
	int pfd[2];

	EXPECT_EQ(IOC(-1, variant->d->cmd, arg), -EBADF);
	EXPECT_EQ(IOC(1 << 20, variant->d->cmd, arg), -EBADF);
	/* an open descriptor that is not a device */
	ASSERT_EQ(pipe(pfd), 0);
	EXPECT_EQ(IOC(pfd[0], variant->d->cmd, arg), -EBADF);
	EXPECT_EQ(IOC(pfd[1], variant->d->cmd, arg), -EBADF);
	close(pfd[0]);
	close(pfd[1]);
}

TEST_F(cmd, rejects_closed_fd)
{
	union argbuf buf;
	void *arg = make_arg(_metadata, &self->o, variant->d, &buf);
	int fd = self->o.fd;

	objs_close(_metadata, &self->o);
	EXPECT_EQ(IOC(fd, variant->d->cmd, arg), -EBADF);
}

/*
 * Break everything at once, then repair one thing at a time: each step
 * must report the next rule of the documented order.
 */
TEST_F(cmd, checks_in_documented_order)
{
	const struct cmd_desc *d = variant->d;
	union argbuf buf;
	void *arg = make_arg(_metadata, &self->o, d, &buf);
	__u32 flags = get_u32(arg, 4), bad_flag = 1u << 30;
	__u32 handle = d->handle_off >= 0 ? get_u32(arg, d->handle_off) : 0;
	int fd = self->o.fd;

	put_u32(arg, 4, flags | bad_flag);
	if (d->reserved_off >= 0)
		put_u32(arg, d->reserved_off, 1);
	if (d->handle_off >= 0)
		put_u32(arg, d->handle_off,
			unknown_handle(d->handle_type ? d->handle_type :
					NPR_HANDLE_MODEL));
	buf.b[d->size + 3] = 0xff;

	put_u32(arg, 0, v0_size(d) - 1);
	EXPECT_EQ(IOC(fd, d->cmd, arg), -EINVAL);
	put_u32(arg, 0, d->size + 8);
	EXPECT_EQ(IOC(fd, d->cmd, arg), -E2BIG);
	buf.b[d->size + 3] = 0;
	EXPECT_EQ(IOC(fd, d->cmd, arg), -EOPNOTSUPP);
	put_u32(arg, 4, flags);
	if (d->reserved_off >= 0) {
		EXPECT_EQ(IOC(fd, d->cmd, arg), -EINVAL);
		put_u32(arg, d->reserved_off, 0);
	}
	if (d->handle_off >= 0) {
		EXPECT_EQ(IOC(fd, d->cmd, arg), -ENOENT);
		if (d->wrong_type) {
			put_u32(arg, d->handle_off,
				object_of_type(&self->o, d->wrong_type));
			EXPECT_EQ(IOC(fd, d->cmd, arg), -EBADF);
		}
		put_u32(arg, d->handle_off, handle);
	}
	EXPECT_EQ(IOC(fd, d->cmd, arg), 0);
}

/* Commands with a must-be-zero field. */
FIXTURE(reserved) {
	struct objs o;
};

FIXTURE_VARIANT(reserved) {
	const struct cmd_desc *d;
};

FIXTURE_VARIANT_ADD(reserved, device_info) { .d = &desc_device_info };
FIXTURE_VARIANT_ADD(reserved, prop_info) { .d = &desc_prop_info };
FIXTURE_VARIANT_ADD(reserved, model_load) { .d = &desc_model_load };
FIXTURE_VARIANT_ADD(reserved, model_info) { .d = &desc_model_info };
FIXTURE_VARIANT_ADD(reserved, port_info) { .d = &desc_port_info };
FIXTURE_VARIANT_ADD(reserved, infer) { .d = &desc_infer };
FIXTURE_VARIANT_ADD(reserved, handle_destroy) { .d = &desc_destroy };

FIXTURE_SETUP(reserved)
{
	self->o.fd = -1;
	objs_open(_metadata, &self->o);
}

FIXTURE_TEARDOWN(reserved)
{
	objs_close(_metadata, &self->o);
}

TEST_F(reserved, rejects_nonzero_reserved)
{
	const __u32 vals[] = { 1, 0x80000000u, 0xffffffffu };
	union argbuf buf;
	size_t i;

	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		void *arg = make_arg(_metadata, &self->o, variant->d, &buf);

		put_u32(arg, variant->d->reserved_off, vals[i]);
		EXPECT_EQ(IOC(self->o.fd, variant->d->cmd, arg), -EINVAL);
	}
}

TEST(compile_rejects_nonzero_reserved_in_props)
{
	struct npr_prop_arg pa = {
		.param = NPR_PARAM_INFERENCE_NUM_THREADS,
		.reserved = 1,
		.value = 1,
	};
	struct npr_compile co;
	struct objs o = { .fd = -1 };

	objs_open(_metadata, &o);
	npr_prep_compile(&co, o.model);
	co.props = (uintptr_t)&pa;
	co.num_props = 1;
	EXPECT_EQ(IOC(o.fd, NPR_IOCTL_COMPILE, &co), -EINVAL);
	pa.reserved = 0;
	EXPECT_EQ(IOC(o.fd, NPR_IOCTL_COMPILE, &co), 0);
	objs_close(_metadata, &o);
}

/*
 * MAKE_STATEFUL grew shapes, num_shapes and reserved: the 24-byte version
 * 0 still reaches the name lookup (-ENOENT), a smaller size does not,
 * reserved and the shapes are checked before the model is touched.
 */
TEST(make_stateful_version_0_reserved_and_shapes)
{
	struct npr_state_pair pair = {
		(uintptr_t)"no such input", (uintptr_t)"no such output",
	};
	struct npr_shape_arg sa = { .index = 0, .rank = 1, .dims = { 4 } };
	struct npr_make_stateful ms = {
		.size = sizeof(ms), .count = 1, .pairs = (uintptr_t)&pair,
	};
	struct objs o = { .fd = -1 };

	objs_open(_metadata, &o);
	ms.model = o.model;
	EXPECT_EQ(IOC(o.fd, NPR_IOCTL_MAKE_STATEFUL, &ms), -ENOENT);
	ms.size = 24;
	EXPECT_EQ(IOC(o.fd, NPR_IOCTL_MAKE_STATEFUL, &ms), -ENOENT);
	ms.size = 23;
	EXPECT_EQ(IOC(o.fd, NPR_IOCTL_MAKE_STATEFUL, &ms), -EINVAL);
	ms.size = sizeof(ms);
	ms.reserved = 1;
	EXPECT_EQ(IOC(o.fd, NPR_IOCTL_MAKE_STATEFUL, &ms), -EINVAL);
	ms.reserved = 0;
	ms.num_shapes = 1;
	EXPECT_EQ(IOC(o.fd, NPR_IOCTL_MAKE_STATEFUL, &ms), -EINVAL);
	ms.shapes = (uintptr_t)&sa;
	ms.num_shapes = 2;	/* the model has one input */
	EXPECT_EQ(IOC(o.fd, NPR_IOCTL_MAKE_STATEFUL, &ms), -EINVAL);
	ms.num_shapes = 1;
	sa.index = 1;
	EXPECT_EQ(IOC(o.fd, NPR_IOCTL_MAKE_STATEFUL, &ms), -EINVAL);
	sa.index = 0;
	sa.dims[0] = -1;
	EXPECT_EQ(IOC(o.fd, NPR_IOCTL_MAKE_STATEFUL, &ms), -EINVAL);
	sa.dims[0] = 4;
	sa.dims[1] = 4;		/* past the rank */
	EXPECT_EQ(IOC(o.fd, NPR_IOCTL_MAKE_STATEFUL, &ms), -EINVAL);
	objs_close(_metadata, &o);
}

/* Commands that take a handle. */
FIXTURE(handle) {
	struct objs o;
};

FIXTURE_VARIANT(handle) {
	const struct cmd_desc *d;
};

FIXTURE_VARIANT_ADD(handle, get_param) { .d = &desc_get_param };
FIXTURE_VARIANT_ADD(handle, set_param) { .d = &desc_set_param };
FIXTURE_VARIANT_ADD(handle, model_info) { .d = &desc_model_info };
FIXTURE_VARIANT_ADD(handle, port_info) { .d = &desc_port_info };
FIXTURE_VARIANT_ADD(handle, compile) { .d = &desc_compile };
FIXTURE_VARIANT_ADD(handle, req_create) { .d = &desc_req_create };
FIXTURE_VARIANT_ADD(handle, set_tensor) { .d = &desc_set_tensor };
FIXTURE_VARIANT_ADD(handle, get_tensor) { .d = &desc_get_tensor };
FIXTURE_VARIANT_ADD(handle, infer) { .d = &desc_infer };
FIXTURE_VARIANT_ADD(handle, handle_destroy) { .d = &desc_destroy };

FIXTURE_SETUP(handle)
{
	self->o.fd = -1;
	objs_open(_metadata, &self->o);
}

FIXTURE_TEARDOWN(handle)
{
	objs_close(_metadata, &self->o);
}

TEST_F(handle, rejects_unknown_handle)
{
	const struct cmd_desc *d = variant->d;
	int type = d->handle_type ? d->handle_type : NPR_HANDLE_MODEL;
	__u32 live = object_of_type(&self->o, type);
	const __u32 vals[] = {
		unknown_handle(type),
		0xffffffffu,
		/* the right slot and type, another generation */
		live ^ (1u << 16),
		live ^ (0x800u << 16),
	};
	union argbuf buf;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		void *arg = make_arg(_metadata, &self->o, d, &buf);

		put_u32(arg, d->handle_off, vals[i]);
		ret = IOC(self->o.fd, d->cmd, arg);
		if (ret != -ENOENT)
			TH_LOG("with handle 0x%08x", vals[i]);
		EXPECT_EQ(ret, -ENOENT);
	}
	/* 0 names nothing either, except for properties (the device) */
	if (d->cmd != NPR_IOCTL_GET_PARAM && d->cmd != NPR_IOCTL_SET_PARAM) {
		void *arg = make_arg(_metadata, &self->o, d, &buf);

		put_u32(arg, d->handle_off, 0);
		EXPECT_EQ(IOC(self->o.fd, d->cmd, arg), -ENOENT);
	}
}

TEST_F(handle, rejects_stale_handle)
{
	const struct cmd_desc *d = variant->d;
	int type = d->handle_type ? d->handle_type : NPR_HANDLE_MODEL;
	union argbuf buf;
	void *arg;
	__u32 h, h2;

	h = make_object(_metadata, &self->o, type);
	destroy(_metadata, self->o.fd, h);
	arg = make_arg(_metadata, &self->o, d, &buf);
	put_u32(arg, d->handle_off, h);
	EXPECT_EQ(IOC(self->o.fd, d->cmd, arg), -ENOENT);

	/* a new object may reuse the slot; the old handle stays dead */
	h2 = make_object(_metadata, &self->o, type);
	EXPECT_NE(h2, h);
	arg = make_arg(_metadata, &self->o, d, &buf);
	put_u32(arg, d->handle_off, h);
	EXPECT_EQ(IOC(self->o.fd, d->cmd, arg), -ENOENT);
}

TEST_F(handle, rejects_handle_from_another_fd)
{
	const struct cmd_desc *d = variant->d;
	int type = d->handle_type ? d->handle_type : NPR_HANDLE_MODEL;
	union argbuf buf;
	void *arg;
	int other;

	/* every object lives on fd A; B has none */
	other = npr_open("cpu", 0);
	ASSERT_GE(other, 0);
	arg = make_arg(_metadata, &self->o, d, &buf);
	put_u32(arg, d->handle_off, object_of_type(&self->o, type));
	EXPECT_EQ(IOC(other, d->cmd, arg), -ENOENT);
	/* and nothing happened to the object on A */
	arg = make_arg(_metadata, &self->o, d, &buf);
	EXPECT_EQ(IOC(self->o.fd, d->cmd, arg), 0);
	EXPECT_EQ(npr_close(other), 0);
}

/* Commands that take a handle of one type (HANDLE_DESTROY takes any). */
FIXTURE(typed) {
	struct objs o;
};

FIXTURE_VARIANT(typed) {
	const struct cmd_desc *d;
};

FIXTURE_VARIANT_ADD(typed, get_param) { .d = &desc_get_param };
FIXTURE_VARIANT_ADD(typed, set_param) { .d = &desc_set_param };
FIXTURE_VARIANT_ADD(typed, model_info) { .d = &desc_model_info };
FIXTURE_VARIANT_ADD(typed, port_info) { .d = &desc_port_info };
FIXTURE_VARIANT_ADD(typed, compile) { .d = &desc_compile };
FIXTURE_VARIANT_ADD(typed, req_create) { .d = &desc_req_create };
FIXTURE_VARIANT_ADD(typed, set_tensor) { .d = &desc_set_tensor };
FIXTURE_VARIANT_ADD(typed, get_tensor) { .d = &desc_get_tensor };
FIXTURE_VARIANT_ADD(typed, infer) { .d = &desc_infer };

FIXTURE_SETUP(typed)
{
	self->o.fd = -1;
	objs_open(_metadata, &self->o);
}

FIXTURE_TEARDOWN(typed)
{
	objs_close(_metadata, &self->o);
}

TEST_F(typed, rejects_handle_of_wrong_type)
{
	const struct cmd_desc *d = variant->d;
	union argbuf buf;
	void *arg;
	int type, ret;

	for (type = NPR_HANDLE_MODEL; type <= NPR_HANDLE_REQUEST; type++) {
		if (type == d->handle_type)
			continue;
		/* MODEL_INFO and PORT_INFO also take a compiled model */
		if (type == NPR_HANDLE_EXEC &&
		    (d->cmd == NPR_IOCTL_MODEL_INFO ||
		     d->cmd == NPR_IOCTL_PORT_INFO))
			continue;
		arg = make_arg(_metadata, &self->o, d, &buf);
		put_u32(arg, d->handle_off, object_of_type(&self->o, type));
		ret = IOC(self->o.fd, d->cmd, arg);
		if (ret != -EBADF)
			TH_LOG("with a %s handle",
			       type == NPR_HANDLE_MODEL ? "model" :
			       type == NPR_HANDLE_EXEC ? "exec" : "request");
		EXPECT_EQ(ret, -EBADF);
	}
}

/* ---- the ring ioctls: the common validation rules ------------------------ */

TEST(ring_ioctls_follow_the_validation_order)
{
	static const struct {
		unsigned long cmd;
		size_t size;
		size_t reserved_off;	/* a must-be-zero field */
	} t[] = {
		{ NPR_IOCTL_RING_SETUP, sizeof(struct npr_ring_setup),
		  offsetof(struct npr_ring_setup, reserved) },
		{ NPR_IOCTL_SUBMIT, sizeof(struct npr_submit), 0 },
		{ NPR_IOCTL_REAP, sizeof(struct npr_reap),
		  offsetof(struct npr_reap, reserved) },
	};
	unsigned char buf[128];
	size_t i;
	int fd = npr_open("null", 0);

	ASSERT_GE(fd, 0);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		__u32 size;

		TH_LOG("cmd 0x%lx", t[i].cmd);
		/* 1. NULL, or size below version 0 */
		EXPECT_EQ(npr_ioctl(fd, t[i].cmd, NULL), -EINVAL);
		memset(buf, 0, sizeof(buf));
		size = t[i].size - 1;
		memcpy(buf, &size, 4);
		EXPECT_EQ(npr_ioctl(fd, t[i].cmd, buf), -EINVAL);
		/* 2. a non-zero byte past the known size */
		size = t[i].size + 8;
		memcpy(buf, &size, 4);
		buf[t[i].size + 3] = 1;
		EXPECT_EQ(npr_ioctl(fd, t[i].cmd, buf), -E2BIG);
		/* 3. unknown flag bits */
		memset(buf, 0, sizeof(buf));
		size = t[i].size;
		memcpy(buf, &size, 4);
		buf[7] = 0x80;
		EXPECT_EQ(npr_ioctl(fd, t[i].cmd, buf), -EOPNOTSUPP);
		buf[7] = 0;
		/* 4. a reserved field */
		if (t[i].reserved_off) {
			buf[t[i].reserved_off] = 1;
			EXPECT_EQ(npr_ioctl(fd, t[i].cmd, buf), -EINVAL);
		}
	}
	EXPECT_EQ(npr_close(fd), 0);
}

TEST(submit_rejects_bad_sqes_before_queueing_any)
{
	struct npr_submit su = { .size = sizeof(su) };
	struct npr_sqe s[3];
	int fd = npr_open("null", 0);

	ASSERT_GE(fd, 0);
	memset(s, 0, sizeof(s));
	su.sqes = (uintptr_t)s;
	su.count = 3;
	s[1].reserved2[2] = 1;		/* reserved: -EINVAL */
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -EINVAL);
	EXPECT_EQ(su.submitted, 1);
	s[1].reserved2[2] = 0;
	s[2].opcode = 200;		/* unknown opcode: -EINVAL */
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -EINVAL);
	EXPECT_EQ(su.submitted, 2);
	s[2].opcode = NPR_OP_NOP;
	s[0].flags = 0x40;		/* unknown flag: -EOPNOTSUPP */
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -EOPNOTSUPP);
	EXPECT_EQ(su.submitted, 0);
	s[0].flags = 0;
	s[0].opcode = NPR_OP_INFER;	/* no such request: -ENOENT */
	s[0].handle = (NPR_HANDLE_REQUEST << 28) | 1;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -ENOENT);
	s[0].opcode = NPR_OP_IMPORT;	/* IMPORT needs its struct */
	s[0].handle = 0;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -EINVAL);
	EXPECT_EQ(su.submitted, 0);
	s[0].opcode = NPR_OP_CANCEL;	/* CANCEL takes only addr */
	s[0].handle = 0;
	s[0].flags = NPR_SQE_LINK;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -EINVAL);
	s[0].flags = 0;
	s[0].opcode = NPR_OP_NOP;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), 0);
	EXPECT_EQ(su.submitted, 3);
	EXPECT_EQ(npr_close(fd), 0);
}

/*
 * A job's argument struct goes through the ioctl's validation order at
 * SUBMIT: size, unknown tail, flags, reserved, the request handle of a
 * STATE job.  Each failure names no job: nothing is submitted.
 */
TEST(submit_checks_job_structs_in_documented_order)
{
	struct npr_submit su = { .size = sizeof(su) };
	struct {
		struct npr_import im;
		unsigned char tail[16];
	} big;
	struct npr_state_arg st;
	struct npr_sqe s;
	__u32 model, exec;
	int fd = npr_open("null", 0);

	ASSERT_GE(fd, 0);
	load_relu(_metadata, fd, &model);
	compile_model(_metadata, fd, model, &exec);
	memset(&big, 0, sizeof(big));
	memset(&s, 0, sizeof(s));
	su.sqes = (uintptr_t)&s;
	su.count = 1;
	s.opcode = NPR_OP_IMPORT;
	s.addr = (uintptr_t)&big;
	big.im.size = sizeof(big.im) - 1;		/* 1 */
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -EINVAL);
	big.im.size = sizeof(big);			/* 2 */
	big.tail[3] = 1;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -E2BIG);
	big.tail[3] = 0;
	big.im.flags = 1u << 9;				/* 3 */
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -EOPNOTSUPP);
	big.im.flags = 0;
	big.im.reserved = 1;				/* 4 */
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -EINVAL);
	EXPECT_EQ(su.submitted, 0);

	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	s.opcode = NPR_OP_STATE_RESET;
	s.addr = (uintptr_t)&st;
	st.req = unknown_handle(NPR_HANDLE_REQUEST);	/* 5 */
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -ENOENT);
	st.req = exec;					/* 6 */
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -EBADF);
	s.opcode = NPR_OP_STATE_GET;			/* RESET's flag */
	st.flags = NPR_STATE_RESET_ALL;
	EXPECT_EQ(npr_ioctl(fd, NPR_IOCTL_SUBMIT, &su), -EOPNOTSUPP);
	EXPECT_EQ(su.submitted, 0);
	EXPECT_EQ(npr_close(fd), 0);
}

TEST(unknown_ioctl_is_enotty)
{
	const unsigned long cmds[] = {
		_IOWR('N', 0x7f, struct npr_infer),
		_IOWR('N', 0xff, struct npr_infer),
		_IOWR('M', 0x0a, struct npr_infer),
		_IOR('N', 0x0a, struct npr_infer),
		_IOW('N', 0x0a, struct npr_infer),
		_IO('N', 0x0a),
		0,
		~0ul,
	};
	struct objs o = { .fd = -1 };
	struct npr_infer in;
	size_t i;
	int ret;

	objs_open(_metadata, &o);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		npr_prep_infer(&in, o.req);
		ret = IOC(o.fd, cmds[i], &in);
		if (ret != -ENOTTY)
			TH_LOG("with cmd 0x%lx", cmds[i]);
		EXPECT_EQ(ret, -ENOTTY);
	}
	objs_close(_metadata, &o);
}

TEST_HARNESS_MAIN
