// SPDX-License-Identifier: MIT
/*
 * vnpu graph extension, slots 0-22 (version 1.8): graphs from serialized IR
 * (NGRAPH_LITE, classic layout) or vnpu's own native blob, compiled and run
 * by npuring's cpu device; argument properties and metadata; argument
 * binding with snapshot-at-append semantics; network queries, build logs,
 * memory queries.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vnpu.h"

/* ---- graphs ------------------------------------------------------------ */

static int get_u64(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	if ((size_t)(end - *p) < 8)
		return -1;
	memcpy(v, *p, 8);
	*p += 8;
	return 0;
}

/* Check the build-flag grammar: --key="..." sections, then --config K="V". */
static int check_flags(const char *s)
{
	static const char *const keys[] = {
		"--inputs_precisions=\"", "--inputs_layouts=\"",
		"--outputs_precisions=\"", "--outputs_layouts=\"",
	};
	size_t i;

	if (!s)
		return 0;
	while (*s) {
		const char *q;

		while (*s == ' ')
			s++;
		if (!*s)
			break;
		if (!strncmp(s, "--config", 8) && (s[8] == ' ' || !s[8])) {
			s += 8;
			while (*s == ' ')
				s++;
			while (*s) {
				q = strchr(s, '=');
				if (!q || q == s || q[1] != '"') {
					vnpu_set_log("vnpu: bad --config entry near \"%.40s\"", s);
					return -1;
				}
				q = strchr(q + 2, '"');
				if (!q) {
					vnpu_set_log("vnpu: unterminated --config value");
					return -1;
				}
				s = q + 1;
				while (*s == ' ')
					s++;
			}
			break;
		}
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (!strncmp(s, keys[i], strlen(keys[i])))
				break;
		if (i == sizeof(keys) / sizeof(keys[0])) {
			vnpu_set_log("vnpu: unknown build flag near \"%.40s\"", s);
			return -1;
		}
		q = strchr(s + strlen(keys[i]), '"');
		if (!q) {
			vnpu_set_log("vnpu: unterminated build flag %.24s", keys[i]);
			return -1;
		}
		s = q + 1;
	}
	return 0;
}

static void graph_free(struct vnpu_graph *g)
{
	if (g->fd >= 0)
		npr_close(g->fd);
	free(g->args);
	free(g->value);
	free(g->blob);
	pthread_mutex_destroy(&g->lock);
	g->magic = 0;
	free(g);
}

/* Variable @k as a state argument, named as the NPU compiler names it. */
static ze_result_t state_arg(struct vnpu_graph *g, struct vnpu_arg *a,
			     uint32_t k)
{
	struct npr_req_create rc;
	struct npr_handle_destroy hd = { .size = sizeof(hd) };
	char id[2 * NPR_ZE_ARG_NAME_MAX];
	struct npr_state_arg sa = {
		.size = sizeof(sa), .index = k, .name = (uintptr_t)id,
		.name_len = sizeof(id),
	};
	const char *pre = a->out ? VNPU_ASSIGN_PREFIX : VNPU_READ_PREFIX;
	size_t numel = 1;
	uint32_t d;
	int err;

	npr_prep_req_create(&rc, g->exec);
	if (npr_ioctl(g->fd, NPR_IOCTL_REQ_CREATE, &rc))
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	sa.req = rc.req;
	err = npr_ioctl(g->fd, NPR_IOCTL_STATE_INFO, &sa);
	hd.handle = rc.req;
	npr_ioctl(g->fd, NPR_IOCTL_HANDLE_DESTROY, &hd);
	if (err) {
		vnpu_set_log("vnpu: variable %u: %s", k, npr_last_error());
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	}
	/* the compiler's name whole, or no graph: a cut name pairs with
	 * nothing (and may pair with another variable's) */
	if (sa.name_len > sizeof(id) ||
	    strlen(pre) + strlen(id) >= sizeof(a->name)) {
		vnpu_set_log("vnpu: variable \"%.64s...\": its argument name %s<id> is longer than the %d bytes of an argument's name",
			     id, pre, NPR_ZE_ARG_NAME_MAX - 1);
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	}
	memcpy(a->name, pre, strlen(pre));
	memcpy(a->name + strlen(pre), id, strlen(id) + 1);
	a->var = (int)k;
	a->index = k;
	a->elem = sa.elem_type;
	a->rank = sa.rank;
	for (d = 0; d < sa.rank && d < NPR_MAX_RANK; d++) {
		a->dims[d] = sa.dims[d];
		numel *= (size_t)sa.dims[d];
	}
	a->bytes = numel * npr_elem_size(a->elem);
	if (!a->bytes || sa.rank > NPR_ZE_ARG_DIMS) {
		vnpu_set_log("vnpu: variable %s: type %s rank %u unsupported",
			     id, npr_elem_name(a->elem), sa.rank);
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	}
	return ZE_RESULT_SUCCESS;
}

/* Load IR into the CPU device, compile it, describe its arguments. */
static ze_result_t graph_build(struct vnpu_graph *g, const void *xml,
			       size_t xml_size, const void *bin,
			       size_t bin_size)
{
	struct npr_model_load ml;
	struct npr_model_info mi = { .size = sizeof(mi) };
	struct npr_compile cp;
	ze_result_t r;
	uint32_t i;

	g->fd = npr_open("cpu", 0);
	if (g->fd < 0) {
		vnpu_set_log("vnpu: %s", npr_last_error());
		return ZE_RESULT_ERROR_UNKNOWN;
	}
	npr_prep_model_load_mem(&ml, xml, xml_size, bin_size ? bin : NULL,
				bin_size);
	if (npr_ioctl(g->fd, NPR_IOCTL_MODEL_LOAD, &ml)) {
		vnpu_set_log("vnpu: cannot read the IR: %s", npr_last_error());
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	}
	npr_prep_compile(&cp, ml.handle);
	if (g->profiling) {
		/* the layer records of profile.c */
		static const struct npr_prop_arg prof = {
			.param = NPR_PARAM_ENABLE_PROFILING, .value = 1,
		};

		cp.props = (uintptr_t)&prof;
		cp.num_props = 1;
	}
	if (npr_ioctl(g->fd, NPR_IOCTL_COMPILE, &cp)) {
		vnpu_set_log("vnpu: compilation failed: %s", npr_last_error());
		return ZE_RESULT_ERROR_UNKNOWN;
	}
	g->exec = cp.exec;
	mi.handle = g->exec;
	if (npr_ioctl(g->fd, NPR_IOCTL_MODEL_INFO, &mi))
		return ZE_RESULT_ERROR_UNKNOWN;
	/* the variables: a request knows them */
	{
		struct npr_req_create rc;
		struct npr_state_arg sa = { .size = sizeof(sa) };
		struct npr_handle_destroy hd = { .size = sizeof(hd) };

		npr_prep_req_create(&rc, g->exec);
		if (npr_ioctl(g->fd, NPR_IOCTL_REQ_CREATE, &rc))
			return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
		sa.req = rc.req;
		if (!npr_ioctl(g->fd, NPR_IOCTL_STATE_INFO, &sa) ||
		    sa.count)
			g->nvars = sa.count;
		hd.handle = rc.req;
		npr_ioctl(g->fd, NPR_IOCTL_HANDLE_DESTROY, &hd);
	}
	g->nin = mi.num_inputs + g->nvars;
	g->nargs = g->nin + mi.num_outputs + g->nvars;
	if (g->nargs > VNPU_MAX_ARGS) {
		vnpu_set_log("vnpu: %u arguments, at most %d supported", g->nargs,
			VNPU_MAX_ARGS);
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	}
	g->args = calloc(g->nargs + 1, sizeof(*g->args));
	g->value = calloc(g->nargs + 1, sizeof(*g->value));
	if (!g->args || !g->value)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	for (i = 0; i < g->nargs; i++) {
		struct vnpu_arg *a = &g->args[i];
		struct npr_port_info pi;
		size_t numel = 1;
		uint32_t k;

		a->out = i >= g->nin;
		a->index = a->out ? i - g->nin : i;
		a->var = -1;
		if (a->index >= (a->out ? mi.num_outputs : mi.num_inputs)) {
			r = state_arg(g, a, a->index - (a->out ? mi.num_outputs :
							  mi.num_inputs));
			if (r)
				return r;
			continue;
		}
		npr_prep_port_info(&pi, g->exec, a->index, a->out, a->name,
				   sizeof(a->name));
		if (npr_ioctl(g->fd, NPR_IOCTL_PORT_INFO, &pi)) {
			vnpu_set_log("vnpu: argument %u: %s", i, npr_last_error());
			return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
		}
		a->elem = pi.elem_type;
		a->rank = pi.rank;
		for (k = 0; k < pi.rank; k++) {
			a->dims[k] = pi.dims[k];
			numel *= (size_t)pi.dims[k];
		}
		a->bytes = numel * npr_elem_size(a->elem);
		if (!npr_elem_size(a->elem) || pi.rank > NPR_ZE_ARG_DIMS) {
			vnpu_set_log("vnpu: argument %s: type %s rank %u unsupported",
				a->name, npr_elem_name(a->elem), pi.rank);
			return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
		}
	}
	r = vnpu_check_arg_names(g);
	if (r)
		return r;
	/* the native blob: our header, then the IR it was built from */
	g->blob_size = 8 + 4 + 4 + 8 + xml_size + 8 + bin_size;
	g->blob = malloc(g->blob_size);
	if (!g->blob)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	{
		uint8_t *p = g->blob;
		uint32_t ver = VNPU_BLOB_VERSION, plat = vnpu_dev.pci_id;
		uint64_t xs = xml_size, bs = bin_size;

		memcpy(p, VNPU_BLOB_MAGIC, 8);
		memcpy(p + 8, &ver, 4);
		memcpy(p + 12, &plat, 4);
		memcpy(p + 16, &xs, 8);
		memcpy(p + 24, xml, xml_size);
		memcpy(p + 24 + xml_size, &bs, 8);
		if (bin_size)
			memcpy(p + 32 + xml_size, bin, bin_size);
	}
	return ZE_RESULT_SUCCESS;
}

/*
 * The xml and weights inside a graph input (NGRAPH_LITE or vnpu's native
 * blob), every size checked against the buffer.  @query: a network query
 * (no compile faults apply).
 */
static ze_result_t split_input(uint32_t format, const uint8_t *in,
			       size_t size, const char *flags, bool query,
			       const uint8_t **xml, uint64_t *xs,
			       const uint8_t **bin, uint64_t *bs)
{
	const uint8_t *p = in, *end;

	if (!in)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (!size || size > VNPU_MAX_INPUT)
		return ZE_RESULT_ERROR_INVALID_SIZE;
	end = in + size;
	if (format == NPR_ZE_GRAPH_FORMAT_NGRAPH_LITE) {
		uint32_t n;

		if (size < 8) {
			vnpu_set_log("vnpu: IR buffer of %zu bytes is too short", size);
			return ZE_RESULT_ERROR_INVALID_SIZE;
		}
		memcpy(&n, in + 4, 4);
		if (n != 2) {
			vnpu_set_log("vnpu: IR buffer holds %u parts, expected 2", n);
			return ZE_RESULT_ERROR_INVALID_ARGUMENT;
		}
		p = in + 8;
		if (check_flags(flags))
			return ZE_RESULT_ERROR_INVALID_ARGUMENT;
		if (!query && vnpu_env_long("VNPU_FAULT_COMPILE")) {
			vnpu_set_log("vnpu: compilation failed: fault injected by VNPU_FAULT_COMPILE");
			return ZE_RESULT_ERROR_UNKNOWN;
		}
	} else if (format == NPR_ZE_GRAPH_FORMAT_NATIVE && !query) {
		uint32_t ver, plat;

		if (size < 16 || memcmp(in, VNPU_BLOB_MAGIC, 8)) {
			vnpu_set_log("vnpu: not a vnpu native blob");
			return ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
		}
		memcpy(&ver, in + 8, 4);
		memcpy(&plat, in + 12, 4);
		if (ver != VNPU_BLOB_VERSION || plat != vnpu_dev.pci_id) {
			vnpu_set_log("vnpu: blob version %u for device 0x%x, this is version %u on 0x%x",
				ver, plat, VNPU_BLOB_VERSION, vnpu_dev.pci_id);
			return ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
		}
		p = in + 16;
	} else {
		return ZE_RESULT_ERROR_INVALID_ENUMERATION;
	}
	if (get_u64(&p, end, xs) || *xs > (uint64_t)(end - p)) {
		vnpu_set_log("vnpu: truncated input (xml size)");
		return ZE_RESULT_ERROR_INVALID_SIZE;
	}
	*xml = p;
	p += *xs;
	if (get_u64(&p, end, bs) || *bs != (uint64_t)(end - p)) {
		vnpu_set_log("vnpu: truncated input or trailing bytes (weights size)");
		return ZE_RESULT_ERROR_INVALID_SIZE;
	}
	*bin = p;
	return ZE_RESULT_SUCCESS;
}

/**
 * vnpu_trace() - append one line to the VNPU_TRACE file
 * @fmt: printf format of the line (no newline), then its arguments
 *
 * With VNPU_TRACE=FILE, vnpu writes one line per queue creation and per
 * graph creation and initialisation, so tests can see what a caller asked
 * for (descriptor flags, build flags).  The file is opened and closed per
 * line, under a lock; nothing is written when VNPU_TRACE is unset or empty.
 */
void vnpu_trace(const char *fmt, ...)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	const char *path = getenv("VNPU_TRACE");
	va_list ap;
	FILE *f;

	if (!path || !*path)
		return;
	pthread_mutex_lock(&lock);
	f = fopen(path, "a");
	if (f) {
		va_start(ap, fmt);
		vfprintf(f, fmt, ap);
		va_end(ap);
		fputc('\n', f);
		fclose(f);
	}
	pthread_mutex_unlock(&lock);
}

/* The compiler refuses more tiles than the device has. */
static int check_tiles(const char *flags)
{
	const char *t = flags ? strstr(flags, " NPU_TILES=\"") : NULL;
	long n;

	if (!t)
		return 0;
	n = strtol(t + 12, NULL, 10);
	if (n < 1 || n > (long)vnpu_dev.tiles) {
		vnpu_set_log("vnpu: NPU_TILES=%ld: the device has %u tiles", n,
			     vnpu_dev.tiles);
		return -1;
	}
	return 0;
}

static ze_result_t graph_create(ze_context_handle_t hc, ze_device_handle_t hd,
				uint32_t format, const uint8_t *in, size_t size,
				const char *flags, uint32_t dflags,
				npr_ze_graph_handle_t *out)
{
	struct vnpu_context *c = vnpu_ctx_of(hc, true);
	const uint8_t *xml, *bin;
	uint64_t xs, bs;
	struct vnpu_graph *g;
	ze_result_t r;

	vnpu_build_log[0] = 0;
	if (!c || !vnpu_dev_ok(hd, true))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!out)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	r = split_input(format, in, size, flags, false, &xml, &xs, &bin, &bs);
	if (r)
		return r;
	if (format == NPR_ZE_GRAPH_FORMAT_NGRAPH_LITE && check_tiles(flags))
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	vnpu_trace("create format=%u flags=0x%x build=%s", format, dflags,
		   flags ? flags : "");
	if (format == NPR_ZE_GRAPH_FORMAT_NGRAPH_LITE)
		vnpu_census(xml, xs, bs);
	g = calloc(1, sizeof(*g));
	if (!g)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	g->magic = M_GRAPH;
	g->ctx = c;
	g->fd = -1;
	g->profiling = dflags & NPR_ZE_GRAPH_FLAG_ENABLE_PROFILING;
	pthread_mutex_init(&g->lock, NULL);
	r = graph_build(g, xml, xs, bin, bs);
	if (r) {
		graph_free(g);
		/* a native binary that does not load is not a valid one */
		if (format == NPR_ZE_GRAPH_FORMAT_NATIVE &&
		    r != ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY)
			r = ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
		return r;
	}
	*out = (npr_ze_graph_handle_t)g;
	return ZE_RESULT_SUCCESS;
}

/**
 * g_create() - zeGraphCreate (graph extension pfnCreate)
 * @c: the context (loader-wrapped)
 * @d: the device (loader-wrapped)
 * @desc: the format and input: serialized IR (NGRAPH_LITE, classic
 *        layout: two parts, the XML then the weights) with build flags, or
 *        a vnpu native blob of this platform
 * @out: out: the graph
 *
 * Instead of compiling for an NPU, vnpu loads and compiles the model on
 * npuring's cpu device.  The build flags are checked for their grammar and
 * for NPU_TILES within the device; a refusal's reason is in the build log.
 * VNPU_FAULT_COMPILE=1 makes every IR fail to compile.
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
 * _INVALID_NULL_POINTER, _INVALID_SIZE, _INVALID_ENUMERATION for another
 * format, _INVALID_ARGUMENT for bad build flags or an IR that does not
 * read, _INVALID_NATIVE_BINARY for a blob that does not load,
 * _UNSUPPORTED_FEATURE for arguments it cannot present,
 * _OUT_OF_HOST_MEMORY, _UNKNOWN for an IR that does not compile.
 */
static ze_result_t g_create(ze_context_handle_t c, ze_device_handle_t d,
			    const struct npr_ze_graph_desc *desc,
			    npr_ze_graph_handle_t *out)
{
	if (!desc)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	return graph_create(c, d, desc->format, desc->pInput, desc->inputSize,
			    desc->pBuildFlags, 0, out);
}

/**
 * g_create2() - zeGraphCreate2 (pfnCreate2)
 * @c: the context (loader-wrapped)
 * @d: the device (loader-wrapped)
 * @desc: as g_create()'s, with flags: DISABLE_CACHING and
 *        INPUT_PERSISTENT are accepted (and only traced), ENABLE_PROFILING
 *        makes a graph of profiling pools (profile.c), others refused
 * @out: out: the graph
 *
 * Return: as g_create(); ZE_RESULT_ERROR_UNSUPPORTED_FEATURE for an
 * unknown flag.
 */
static ze_result_t g_create2(ze_context_handle_t c, ze_device_handle_t d,
			     const struct npr_ze_graph_desc_2 *desc,
			     npr_ze_graph_handle_t *out)
{
	if (!desc)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (desc->flags & ~(NPR_ZE_GRAPH_FLAG_DISABLE_CACHING |
			    NPR_ZE_GRAPH_FLAG_ENABLE_PROFILING |
			    NPR_ZE_GRAPH_FLAG_INPUT_PERSISTENT))
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	return graph_create(c, d, desc->format, desc->pInput, desc->inputSize,
			    desc->pBuildFlags, desc->flags, out);
}

#define GRAPH(h)	((struct vnpu_graph *)(h))
#define GRAPH_OK(h)	CHECK(GRAPH(h), M_GRAPH)

/**
 * g_destroy() - zeGraphDestroy (pfnDestroy)
 * @h: the graph
 *
 * A graph that a command list's recorded execute still uses is not
 * destroyed.
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
 * ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE (reason in the build log).
 */
static ze_result_t g_destroy(npr_ze_graph_handle_t h)
{
	int users;

	if (!GRAPH_OK(h))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	pthread_mutex_lock(&GRAPH(h)->lock);
	users = GRAPH(h)->users;
	pthread_mutex_unlock(&GRAPH(h)->lock);
	if (users) {
		vnpu_warn("vnpu: graph destroyed while %d recorded executes use it",
			  users);
		return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
	}
	graph_free(GRAPH(h));
	return ZE_RESULT_SUCCESS;
}

/**
 * g_props() - zeGraphGetProperties (pfnGetProperties)
 * @h: the graph
 * @p: out: the number of arguments
 *
 * Return: ZE_RESULT_SUCCESS, ZE_RESULT_ERROR_INVALID_NULL_HANDLE or
 * _INVALID_NULL_POINTER.
 */
static ze_result_t g_props(npr_ze_graph_handle_t h,
			   struct npr_ze_graph_properties *p)
{
	if (!GRAPH_OK(h))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	p->numGraphArgs = GRAPH(h)->nargs;
	return ZE_RESULT_SUCCESS;
}

/**
 * g_props2() - zeGraphGetProperties2 (pfnGetProperties2)
 * @h: the graph
 * @p: out: the number of arguments; the initialisation stage required,
 *     INITIALIZE or, with VNPU_INIT_STAGE=COMMAND_LIST_INITIALIZE,
 *     COMMAND_LIST_INITIALIZE
 *
 * Return: ZE_RESULT_SUCCESS, ZE_RESULT_ERROR_INVALID_NULL_HANDLE or
 * _INVALID_NULL_POINTER.
 */
static ze_result_t g_props2(npr_ze_graph_handle_t h,
			    struct npr_ze_graph_properties_2 *p)
{
	if (!GRAPH_OK(h))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	p->numGraphArgs = GRAPH(h)->nargs;
	p->initStageRequired = vnpu_dev.init_stage;
	return ZE_RESULT_SUCCESS;
}

static uint32_t prec_of(uint32_t elem)
{
	switch (elem) {
	case NPR_ELEM_F32: return NPR_ZE_PREC_FP32;
	case NPR_ELEM_F16: return NPR_ZE_PREC_FP16;
	case NPR_ELEM_BF16: return NPR_ZE_PREC_BF16;
	case NPR_ELEM_F64: return NPR_ZE_PREC_FP64;
	case NPR_ELEM_I8: return NPR_ZE_PREC_INT8;
	case NPR_ELEM_U8: return NPR_ZE_PREC_UINT8;
	case NPR_ELEM_I16: return NPR_ZE_PREC_INT16;
	case NPR_ELEM_U16: return NPR_ZE_PREC_UINT16;
	case NPR_ELEM_I32: return NPR_ZE_PREC_INT32;
	case NPR_ELEM_U32: return NPR_ZE_PREC_UINT32;
	case NPR_ELEM_I64: return NPR_ZE_PREC_INT64;
	case NPR_ELEM_U64: return NPR_ZE_PREC_UINT64;
	case NPR_ELEM_BOOLEAN: return NPR_ZE_PREC_BOOLEAN;
	}
	return NPR_ZE_PREC_UNKNOWN;
}

static uint32_t meta_of(uint32_t elem)
{
	switch (elem) {
	case NPR_ELEM_F32: return NPR_ZE_META_F32;
	case NPR_ELEM_F16: return NPR_ZE_META_F16;
	case NPR_ELEM_BF16: return NPR_ZE_META_BF16;
	case NPR_ELEM_F64: return NPR_ZE_META_F64;
	case NPR_ELEM_I8: return NPR_ZE_META_I8;
	case NPR_ELEM_U8: return NPR_ZE_META_U8;
	case NPR_ELEM_I16: return NPR_ZE_META_I16;
	case NPR_ELEM_U16: return NPR_ZE_META_U16;
	case NPR_ELEM_I32: return NPR_ZE_META_I32;
	case NPR_ELEM_U32: return NPR_ZE_META_U32;
	case NPR_ELEM_I64: return NPR_ZE_META_I64;
	case NPR_ELEM_U64: return NPR_ZE_META_U64;
	case NPR_ELEM_BOOLEAN: return NPR_ZE_META_BOOLEAN;
	}
	return NPR_ZE_META_UNDEFINED;
}

static uint32_t layout_of(uint32_t rank)
{
	switch (rank) {
	case 1: return NPR_ZE_LAYOUT_C;
	case 2: return NPR_ZE_LAYOUT_NC;
	case 3: return NPR_ZE_LAYOUT_CHW;
	case 4: return NPR_ZE_LAYOUT_NCHW;
	case 5: return NPR_ZE_LAYOUT_NCDHW;
	}
	return NPR_ZE_LAYOUT_ANY;
}

static ze_result_t fill_arg(npr_ze_graph_handle_t h, uint32_t i,
			    struct npr_ze_graph_argument_properties *p)
{
	struct vnpu_arg *a;
	uint32_t k;

	if (!GRAPH_OK(h))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (i >= GRAPH(h)->nargs)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	a = &GRAPH(h)->args[i];
	snprintf(p->name, sizeof(p->name), "%s", a->name);
	p->type = a->out ? NPR_ZE_GRAPH_ARG_OUTPUT : NPR_ZE_GRAPH_ARG_INPUT;
	for (k = 0; k < NPR_ZE_ARG_DIMS; k++)
		p->dims[k] = k < a->rank ? (uint32_t)a->dims[k] : 1;
	p->networkPrecision = p->devicePrecision = prec_of(a->elem);
	p->networkLayout = p->deviceLayout = layout_of(a->rank);
	return ZE_RESULT_SUCCESS;
}

/**
 * g_arg_props() - zeGraphGetArgumentProperties (pfnGetArgumentProperties)
 * @h: the graph
 * @i: the argument's index: the inputs, then the outputs, each followed
 *     by the state arguments (read_value, assign)
 * @p: out: name, direction, dimensions (padded with 1), precision and a
 *     layout from the rank; network and device precision and layout are
 *     the same (no conversion on the device)
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
 * _INVALID_NULL_POINTER, _INVALID_ARGUMENT for an index out of range.
 */
static ze_result_t g_arg_props(npr_ze_graph_handle_t h, uint32_t i,
			       struct npr_ze_graph_argument_properties *p)
{
	return fill_arg(h, i, p);
}

/**
 * g_arg_props2() - zeGraphGetArgumentProperties2
 * (pfnGetArgumentProperties2)
 * @h: the graph
 * @i: the argument's index
 * @p: out: as g_arg_props(), with quantReverseScale 1 for inputs and 0
 *     for outputs, quantZeroPoint 0 (nothing is quantized)
 *
 * Return: as g_arg_props().
 */
static ze_result_t g_arg_props2(npr_ze_graph_handle_t h, uint32_t i,
				struct npr_ze_graph_argument_properties_2 *p)
{
	ze_result_t r = fill_arg(h, i, p ? &p->v1 : NULL);

	if (r)
		return r;
	p->quantReverseScale = GRAPH(h)->args[i].out ? 0.0f : 1.0f;
	p->quantZeroPoint = 0;
	return ZE_RESULT_SUCCESS;
}

/**
 * g_arg_props3() - zeGraphGetArgumentProperties3
 * (pfnGetArgumentProperties3)
 * @h: the graph
 * @i: the argument's index
 * @p: out: as g_arg_props2(), with the rank, and the argument's name as
 *     its debug name and its one tensor name
 *
 * Return: as g_arg_props().
 */
static ze_result_t g_arg_props3(npr_ze_graph_handle_t h, uint32_t i,
				struct npr_ze_graph_argument_properties_3 *p)
{
	ze_result_t r = g_arg_props2(h, i, p ? &p->v2 : NULL);

	if (r)
		return r;
	p->dims_count = GRAPH(h)->args[i].rank;
	snprintf(p->debug_friendly_name, sizeof(p->debug_friendly_name), "%s",
		 GRAPH(h)->args[i].name);
	snprintf(p->associated_tensor_names[0],
		 sizeof(p->associated_tensor_names[0]), "%s",
		 GRAPH(h)->args[i].name);
	p->associated_tensor_names_count = 1;
	return ZE_RESULT_SUCCESS;
}

/**
 * g_arg_meta() - zeGraphGetArgumentMetadata (pfnGraphGetArgumentMetadata)
 * @h: the graph
 * @i: the argument's index
 * @p: out: direction, the argument's name (as friendly, tensor and input
 *     name), element type and shape
 *
 * Return: as g_arg_props().
 */
static ze_result_t g_arg_meta(npr_ze_graph_handle_t h, uint32_t i,
			      struct npr_ze_graph_argument_metadata *p)
{
	struct vnpu_arg *a;
	uint32_t k;

	if (!GRAPH_OK(h))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (i >= GRAPH(h)->nargs)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	a = &GRAPH(h)->args[i];
	p->type = a->out ? NPR_ZE_GRAPH_ARG_OUTPUT : NPR_ZE_GRAPH_ARG_INPUT;
	snprintf(p->friendly_name, sizeof(p->friendly_name), "%s", a->name);
	p->data_type = meta_of(a->elem);
	for (k = 0; k < a->rank && k < NPR_ZE_META_DIMS; k++)
		p->shape[k] = (uint64_t)a->dims[k];
	p->shape_size = a->rank;
	snprintf(p->tensor_names[0], sizeof(p->tensor_names[0]), "%s",
		 a->name);
	p->tensor_names_count = 1;
	snprintf(p->input_name, sizeof(p->input_name), "%s", a->name);
	return ZE_RESULT_SUCCESS;
}

/**
 * g_set_arg() - zeGraphSetArgumentValue (pfnSetArgumentValue)
 * @h: the graph
 * @i: the argument's index
 * @value: the argument's buffer; checked when an execute is appended
 *
 * An execute appended later takes the values as they are then; setting a
 * value again does not change executes already recorded.
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
 * _INVALID_NULL_POINTER, _INVALID_ARGUMENT for an index out of range.
 */
static ze_result_t g_set_arg(npr_ze_graph_handle_t h, uint32_t i,
			     const void *value)
{
	struct vnpu_graph *g = GRAPH(h);

	if (!GRAPH_OK(h))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!value)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (i >= g->nargs)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	pthread_mutex_lock(&g->lock);
	g->value[i] = (void *)value;
	pthread_mutex_unlock(&g->lock);
	return ZE_RESULT_SUCCESS;
}

/* The list's next command, room made for it. */
static struct vnpu_cmd *list_add(struct vnpu_list *l)
{
	if (l->ncmds == l->cap) {
		int cap = l->cap ? 2 * l->cap : 4;
		struct vnpu_cmd *c = realloc(l->cmds, cap * sizeof(*c));

		if (!c)
			return NULL;
		l->cmds = c;
		l->cap = cap;
	}
	memset(&l->cmds[l->ncmds], 0, sizeof(l->cmds[0]));
	return &l->cmds[l->ncmds];
}

/**
 * g_append_init() - zeAppendGraphInitialize (pfnAppendGraphInitialize)
 * @hl: the command list (loader-wrapped), open, of the graph's context
 * @h: the graph
 * @sig: the event to signal; vnpu has no events: must be NULL
 * @nwait: the number of events to wait for; must be 0
 * @wait: the events to wait for; ignored
 *
 * Records the graph's initialisation: the graph counts as initialized
 * once a queue has run it.  This is the initialisation of the
 * COMMAND_LIST_INITIALIZE stage (every graph before extension 1.8, and
 * with VNPU_INIT_STAGE=COMMAND_LIST_INITIALIZE); a graph that asks for
 * the INITIALIZE stage is refused, so a caller that takes the wrong path
 * is caught.
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
 * _UNSUPPORTED_FEATURE for events or the INITIALIZE stage (reason in the
 * build log), _INVALID_ARGUMENT for a closed list or another context,
 * _OUT_OF_HOST_MEMORY.
 */
static ze_result_t g_append_init(ze_command_list_handle_t hl,
				 npr_ze_graph_handle_t h, ze_event_handle_t sig,
				 uint32_t nwait, ze_event_handle_t *wait)
{
	struct vnpu_list *l = vnpu_translate(ZEL_HANDLE_COMMAND_LIST, hl);
	struct vnpu_cmd *cmd;

	if (!CHECK(l, M_LIST) || !GRAPH_OK(h))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (sig || nwait)
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	if (vnpu_dev.init_stage != NPR_ZE_GRAPH_STAGE_COMMAND_LIST_INITIALIZE) {
		vnpu_warn("vnpu: AppendGraphInitialize: the graph asks for the INITIALIZE stage (GraphInitialize)");
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	}
	if (l->closed || l->ctx != GRAPH(h)->ctx)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	cmd = list_add(l);
	if (!cmd)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	cmd->graph = GRAPH(h);
	cmd->init = true;
	pthread_mutex_lock(&GRAPH(h)->lock);
	GRAPH(h)->users++;
	pthread_mutex_unlock(&GRAPH(h)->lock);
	l->ncmds++;
	return ZE_RESULT_SUCCESS;
}

/**
 * vnpu_run_init() - run a recorded AppendGraphInitialize
 * @cmd: the command
 *
 * Context: the queue's device thread.
 *
 * Return: ZE_RESULT_SUCCESS: the graph is initialized.
 */
ze_result_t vnpu_run_init(struct vnpu_cmd *cmd)
{
	pthread_mutex_lock(&cmd->graph->lock);
	cmd->graph->initialized = true;
	pthread_mutex_unlock(&cmd->graph->lock);
	vnpu_trace("initialize stage=command-list");
	return ZE_RESULT_SUCCESS;
}

/**
 * vnpu_initialized() - whether a graph has been initialized
 * @g: the graph
 *
 * Return: true once GraphInitialize returned or a queue ran its
 * AppendGraphInitialize.
 */
bool vnpu_initialized(struct vnpu_graph *g)
{
	bool done;

	pthread_mutex_lock(&g->lock);
	done = g->initialized;
	pthread_mutex_unlock(&g->lock);
	return done;
}

/*
 * VNPU_TRACE: the memory an execute was recorded with, one address per
 * argument ("execute args=0x...,0x..."), so that a test sees which
 * buffers the device reads and writes.
 */
static void trace_args(struct vnpu_graph *g)
{
	char line[1024];
	size_t n = 0;
	uint32_t i;

	if (!getenv("VNPU_TRACE"))
		return;
	line[0] = 0;
	pthread_mutex_lock(&g->lock);
	for (i = 0; i < g->nargs && n + 24 < sizeof(line); i++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%p",
				      i ? "," : "", g->value[i]);
	pthread_mutex_unlock(&g->lock);
	vnpu_trace("execute args=%s", line);
}

/**
 * g_append_exec() - zeAppendGraphExecute (pfnAppendGraphExecute)
 * @hl: the command list (loader-wrapped), open, of the graph's context
 * @h: the graph; every argument set to a zeMemAllocHost() buffer of the
 *     graph's context large enough for it; a graph of the INITIALIZE
 *     stage initialized (GraphInitialize) already
 * @prof: a profiling query of a pool of @h (profile.c), which gets the
 *        execution's layer records; required for a graph created with
 *        ENABLE_PROFILING, as the Intel driver requires it, else NULL
 * @sig: the event to signal; must be NULL
 * @nwait: the number of events to wait for; must be 0
 * @wait: the events to wait for; ignored
 *
 * Binds the arguments' current values to a new request of the cpu
 * device: later zeGraphSetArgumentValue() calls do not change what was
 * recorded.  State arguments (read_value, assign) are copied in and out
 * around each execution.
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
 * _UNSUPPORTED_FEATURE for events, _INVALID_ARGUMENT for a closed list,
 * another context, a bad argument value or profiling query (reason in
 * the build log), _INVALID_NULL_HANDLE for a profiling graph without a
 * query, _UNINITIALIZED for a graph of the INITIALIZE stage not
 * initialized yet, _OUT_OF_HOST_MEMORY.
 */
static ze_result_t g_append_exec(ze_command_list_handle_t hl,
				 npr_ze_graph_handle_t h, void *prof,
				 ze_event_handle_t sig, uint32_t nwait,
				 ze_event_handle_t *wait)
{
	struct vnpu_list *l = vnpu_translate(ZEL_HANDLE_COMMAND_LIST, hl);
	struct vnpu_graph *g = GRAPH(h);
	struct npr_req_create rc;
	struct vnpu_cmd *cmd;
	ze_result_t r = ZE_RESULT_SUCCESS;
	void **state;
	uint32_t i;

	if (!CHECK(l, M_LIST) || !GRAPH_OK(h))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (sig || nwait)
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	if (l->closed || l->ctx != g->ctx)
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	if (g->profiling && !prof) {
		vnpu_warn("vnpu: AppendGraphExecute of a profiling graph without a profiling query");
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	}
	if (prof && !vnpu_prof_query_of(prof, g)) {
		vnpu_warn("vnpu: AppendGraphExecute: the profiling query is not one of a pool of this graph");
		return ZE_RESULT_ERROR_INVALID_ARGUMENT;
	}
	if (vnpu_dev.init_stage == NPR_ZE_GRAPH_STAGE_INITIALIZE &&
	    !vnpu_initialized(g)) {
		vnpu_warn("vnpu: AppendGraphExecute before GraphInitialize (the graph asks for the INITIALIZE stage)");
		return ZE_RESULT_ERROR_UNINITIALIZED;
	}
	if (!list_add(l))
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	npr_prep_req_create(&rc, g->exec);
	if (npr_ioctl(g->fd, NPR_IOCTL_REQ_CREATE, &rc))
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	state = g->nvars ? calloc(2 * g->nvars, sizeof(*state)) : NULL;
	if (g->nvars && !state) {
		struct npr_handle_destroy hd = {
			.size = sizeof(hd), .handle = rc.req,
		};

		npr_ioctl(g->fd, NPR_IOCTL_HANDLE_DESTROY, &hd);
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	}
	pthread_mutex_lock(&g->lock);
	pthread_mutex_lock(&vnpu_mem_lock);
	for (i = 0; i < g->nargs && !r; i++) {
		struct vnpu_arg *a = &g->args[i];
		struct vnpu_alloc *m;
		struct npr_tensor_arg t;
		uint32_t k;

		if (!g->value[i]) {
			vnpu_warn("vnpu: argument %u (%s) was not set before the execute was appended",
				i, a->name);
			r = ZE_RESULT_ERROR_INVALID_ARGUMENT;
			break;
		}
		m = vnpu_alloc_find(g->value[i], a->bytes);
		if (!m) {
			vnpu_warn("vnpu: argument %u (%s) is not a %zu-byte allocation of this driver",
				i, a->name, a->bytes);
			r = ZE_RESULT_ERROR_INVALID_ARGUMENT;
			break;
		}
		if (m->ctx != g->ctx) {
			vnpu_warn("vnpu: argument %u (%s) is memory of another context, which the graph's cannot see",
				i, a->name);
			r = ZE_RESULT_ERROR_INVALID_ARGUMENT;
			break;
		}
		if (a->var >= 0) {
			/* copied in and out around each execution */
			state[2 * a->var + a->out] = g->value[i];
			continue;
		}
		npr_prep_tensor(&t, rc.req, a->index, a->out, g->value[i],
				a->bytes);
		t.flags |= NPR_TENSOR_BIND;
		t.elem_type = a->elem;
		t.rank = a->rank;
		for (k = 0; k < a->rank; k++)
			t.dims[k] = a->dims[k];
		if (npr_ioctl(g->fd, NPR_IOCTL_SET_TENSOR, &t)) {
			vnpu_warn("vnpu: argument %u: %s", i,
				npr_last_error());
			r = ZE_RESULT_ERROR_INVALID_ARGUMENT;
		}
	}
	pthread_mutex_unlock(&vnpu_mem_lock);
	pthread_mutex_unlock(&g->lock);
	if (r) {
		struct npr_handle_destroy hd = {
			.size = sizeof(hd), .handle = rc.req,
		};

		npr_ioctl(g->fd, NPR_IOCTL_HANDLE_DESTROY, &hd);
		free(state);
		return r;
	}
	trace_args(g);
	pthread_mutex_lock(&g->lock);
	g->users++;
	pthread_mutex_unlock(&g->lock);
	cmd = &l->cmds[l->ncmds++];
	cmd->graph = g;
	cmd->init = false;
	cmd->req = rc.req;
	cmd->state = state;
	cmd->query = prof;
	return ZE_RESULT_SUCCESS;
}

/**
 * g_native() - zeGraphGetNativeBinary (pfnGetNativeBinary)
 * @h: the graph
 * @size: in: the room in @buf; out: the blob's size
 * @buf: out: a copy of the blob, or NULL to ask for the size
 *
 * The blob is vnpu's own format (VNPU_BLOB_MAGIC, for this platform),
 * which only vnpu's zeGraphCreate() loads.
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
 * _INVALID_NULL_POINTER, _INVALID_SIZE if @buf is too small.
 */
static ze_result_t g_native(npr_ze_graph_handle_t h, size_t *size,
			    uint8_t *buf)
{
	struct vnpu_graph *g = GRAPH(h);

	if (!GRAPH_OK(h))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!size)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (!buf) {
		*size = g->blob_size;
		return ZE_RESULT_SUCCESS;
	}
	if (*size < g->blob_size)
		return ZE_RESULT_ERROR_INVALID_SIZE;
	memcpy(buf, g->blob, g->blob_size);
	*size = g->blob_size;
	return ZE_RESULT_SUCCESS;
}

/**
 * g_native2() - zeGraphGetNativeBinary2 (pfnGetNativeBinary2)
 * @h: the graph
 * @size: out: the blob's size
 * @buf: out: the blob itself, owned by the graph and valid while it lives
 *
 * Return: ZE_RESULT_SUCCESS, ZE_RESULT_ERROR_INVALID_NULL_HANDLE or
 * _INVALID_NULL_POINTER.
 */
static ze_result_t g_native2(npr_ze_graph_handle_t h, size_t *size,
			     const uint8_t **buf)
{
	if (!GRAPH_OK(h))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!size || !buf)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	*size = GRAPH(h)->blob_size;
	*buf = GRAPH(h)->blob;
	return ZE_RESULT_SUCCESS;
}

/**
 * g_dev_props() - zeDeviceGetGraphProperties (pfnDeviceGetGraphProperties)
 * @d: the device (loader-wrapped)
 * @p: out: the extension version presented (VNPU_GRAPH_VERSION, default
 *     1.8), compiler version 7.4 (below 7.5, so callers send the classic
 *     IR), NGRAPH_LITE, opsets up to 13
 *
 * Return: ZE_RESULT_SUCCESS, ZE_RESULT_ERROR_INVALID_NULL_HANDLE or
 * _INVALID_NULL_POINTER.
 */
static ze_result_t g_dev_props(ze_device_handle_t d,
			       struct npr_ze_device_graph_properties *p)
{
	if (!vnpu_dev_ok(d, true))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!p)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	p->graphExtensionVersion = NPR_ZE_GRAPH_VERSION(vnpu_dev.graph_minor);
	p->compilerMajor = VNPU_COMPILER_MAJOR;
	p->compilerMinor = VNPU_COMPILER_MINOR;
	p->graphFormatsSupported = NPR_ZE_GRAPH_FORMAT_NGRAPH_LITE;
	p->maxOVOpsetVersionSupported = VNPU_MAX_OPSET;
	return ZE_RESULT_SUCCESS;
}

/**
 * g_dev_props2() - zeDeviceGetGraphProperties2
 * (pfnDeviceGetGraphProperties2)
 * @d: the device (loader-wrapped)
 * @p: out: as g_dev_props(), with ELF and runtime version 1.0.0
 *
 * Return: as g_dev_props().
 */
static ze_result_t g_dev_props2(ze_device_handle_t d,
				struct npr_ze_device_graph_properties_2 *p)
{
	ze_result_t r = g_dev_props(d, (void *)p);

	if (r)
		return r;
	p->elfVersion[0] = 1;
	p->elfVersion[1] = p->elfVersion[2] = 0;
	p->runtimeVersion[0] = 1;
	p->runtimeVersion[1] = p->runtimeVersion[2] = 0;
	return ZE_RESULT_SUCCESS;
}

/**
 * q_create2() - zeGraphQueryNetworkCreate2 (pfnQueryNetworkCreate2)
 * @hc: the context (loader-wrapped)
 * @hd: the device (loader-wrapped)
 * @desc: serialized IR (NGRAPH_LITE only) and build flags
 * @out: out: the query
 *
 * The supported layers are what npuring's cpu device supports of the
 * model (NPR_IOCTL_QUERY_MODEL), as "<name><name>...".
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
 * _INVALID_NULL_POINTER, _INVALID_SIZE, _INVALID_ENUMERATION for another
 * format, _INVALID_ARGUMENT for bad build flags or an IR that does not
 * read, _OUT_OF_HOST_MEMORY, _UNKNOWN.
 */
static ze_result_t q_create2(ze_context_handle_t hc, ze_device_handle_t hd,
			     const struct npr_ze_graph_desc_2 *desc,
			     npr_ze_graph_query_handle_t *out)
{
	struct npr_query_model qm = { .size = sizeof(qm) };
	struct npr_model_load ml;
	const uint8_t *xml, *bin;
	struct vnpu_query *q;
	char *names = NULL, *s, *d;
	uint64_t xs, bs;
	ze_result_t r;
	int fd, err;

	vnpu_build_log[0] = 0;
	if (!vnpu_ctx_of(hc, true) || !vnpu_dev_ok(hd, true))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!desc || !out)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	r = split_input(desc->format, desc->pInput, desc->inputSize,
			desc->pBuildFlags, true, &xml, &xs, &bin, &bs);
	if (r)
		return r;
	fd = npr_open("cpu", 0);
	if (fd < 0)
		return ZE_RESULT_ERROR_UNKNOWN;
	npr_prep_model_load_mem(&ml, xml, xs, bs ? bin : NULL, bs);
	r = ZE_RESULT_ERROR_INVALID_ARGUMENT;
	if (npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml)) {
		vnpu_set_log("vnpu: cannot read the IR: %s", npr_last_error());
		goto out;
	}
	qm.model = ml.handle;
	r = ZE_RESULT_ERROR_UNKNOWN;
	err = npr_ioctl(fd, NPR_IOCTL_QUERY_MODEL, &qm);
	if (err && err != -EMSGSIZE) {
		vnpu_set_log("vnpu: query: %s", npr_last_error());
		goto out;
	}
	r = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	names = malloc(qm.len + 1);
	q = calloc(1, sizeof(*q));
	if (!names || !q || !(q->layers = malloc(qm.len + qm.num_supported + 2))) {
		free(q);
		goto out;
	}
	qm.names = (uintptr_t)names;
	r = ZE_RESULT_ERROR_UNKNOWN;
	if (npr_ioctl(fd, NPR_IOCTL_QUERY_MODEL, &qm)) {
		free(q->layers);
		free(q);
		goto out;
	}
	names[qm.len] = 0;
	d = q->layers;
	for (s = names; *s; s += strlen(s) + 1)
		d += sprintf(d, "<%s>", s);
	*d = 0;
	q->magic = M_QUERY;
	*out = (npr_ze_graph_query_handle_t)q;
	r = ZE_RESULT_SUCCESS;
out:
	free(names);
	npr_close(fd);
	return r;
}

/**
 * q_create() - zeGraphQueryNetworkCreate (pfnQueryNetworkCreate)
 * @hc: the context (loader-wrapped)
 * @hd: the device (loader-wrapped)
 * @desc: as q_create2()'s, without flags
 * @out: out: the query
 *
 * Return: as q_create2().
 */
static ze_result_t q_create(ze_context_handle_t hc, ze_device_handle_t hd,
			    const struct npr_ze_graph_desc *desc,
			    npr_ze_graph_query_handle_t *out)
{
	struct npr_ze_graph_desc_2 d;

	if (!desc)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	memset(&d, 0, sizeof(d));
	memcpy(&d, desc, sizeof(*desc));
	return q_create2(hc, hd, &d, out);
}

/**
 * q_destroy() - zeGraphQueryNetworkDestroy (pfnQueryNetworkDestroy)
 * @h: the query
 *
 * Return: ZE_RESULT_SUCCESS, or ZE_RESULT_ERROR_INVALID_NULL_HANDLE.
 */
static ze_result_t q_destroy(npr_ze_graph_query_handle_t h)
{
	struct vnpu_query *q = (void *)h;

	if (!CHECK(q, M_QUERY))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	free(q->layers);
	q->magic = 0;
	free(q);
	return ZE_RESULT_SUCCESS;
}

/**
 * q_layers() - zeGraphQueryNetworkGetSupportedLayers
 * (pfnQueryNetworkGetSupportedLayers)
 * @h: the query
 * @size: in: the room in @buf; out: the string's size with its NUL
 * @buf: out: "<name><name>...", or NULL to ask for the size
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
 * _INVALID_NULL_POINTER, _INVALID_SIZE if @buf is too small.
 */
static ze_result_t q_layers(npr_ze_graph_query_handle_t h, size_t *size,
			    char *buf)
{
	struct vnpu_query *q = (void *)h;
	size_t need;

	if (!CHECK(q, M_QUERY))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!size)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	need = strlen(q->layers) + 1;
	if (buf) {
		if (*size < need)
			return ZE_RESULT_ERROR_INVALID_SIZE;
		memcpy(buf, q->layers, need);
	}
	*size = need;
	return ZE_RESULT_SUCCESS;
}

/**
 * g_build_log() - zeGraphBuildLogGetString (pfnBuildLogGetString)
 * @h: the graph; ignored: the log is the calling thread's, not a graph's
 * @size: in: the room in @buf; out: the log's size with its NUL
 * @buf: out: the log, or NULL to ask for the size
 *
 * The log holds why the thread's last graph creation, query or refused
 * call failed (vnpu_set_log(), vnpu_warn()).
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_POINTER;
 * _INVALID_SIZE if @buf is too small.
 */
static ze_result_t g_build_log(npr_ze_graph_handle_t h, uint32_t *size,
			       char *buf)
{
	uint32_t need = (uint32_t)strlen(vnpu_build_log) + 1;

	if (!size)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (buf) {
		if (*size < need)
			return ZE_RESULT_ERROR_INVALID_SIZE;
		memcpy(buf, vnpu_build_log, need);
	}
	*size = need;
	return ZE_RESULT_SUCCESS;
}

/**
 * g_ctx_mem() - zeGraphQueryContextMemory (pfnQueryContextMemory)
 * @hc: the context (loader-wrapped)
 * @type: must be the DDR memory type
 * @m: out: total 4 GiB; allocated: the bytes of all host allocations
 *     of vnpu, in any context
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
 * _INVALID_NULL_POINTER, _UNSUPPORTED_ENUMERATION for another type.
 */
static ze_result_t g_ctx_mem(ze_context_handle_t hc, uint32_t type,
			     struct npr_ze_graph_memory_query *m)
{
	struct vnpu_alloc *a;

	if (!vnpu_ctx_of(hc, true))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (!m)
		return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
	if (type != NPR_ZE_GRAPH_MEM_DDR)
		return ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
	m->total = 1ULL << 32;
	m->allocated = 0;
	pthread_mutex_lock(&vnpu_mem_lock);
	for (a = vnpu_allocs; a; a = a->next)
		m->allocated += a->size;
	pthread_mutex_unlock(&vnpu_mem_lock);
	return ZE_RESULT_SUCCESS;
}

/**
 * g_init() - zeGraphInitialize (pfnGraphInitialize)
 * @h: the graph
 *
 * Nothing to upload: marks the graph initialized.  Only for a graph of
 * the INITIALIZE stage: one that asks for COMMAND_LIST_INITIALIZE
 * (VNPU_INIT_STAGE) is refused, as is the call itself before extension
 * 1.8 (vnpu_graph_version()).
 *
 * Return: ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
 * _UNSUPPORTED_FEATURE for the COMMAND_LIST_INITIALIZE stage (reason in
 * the build log).
 */
static ze_result_t g_init(npr_ze_graph_handle_t h)
{
	if (!GRAPH_OK(h))
		return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
	if (vnpu_dev.init_stage != NPR_ZE_GRAPH_STAGE_INITIALIZE) {
		vnpu_warn("vnpu: GraphInitialize: the graph asks for the COMMAND_LIST_INITIALIZE stage (AppendGraphInitialize)");
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	}
	pthread_mutex_lock(&GRAPH(h)->lock);
	GRAPH(h)->initialized = true;
	pthread_mutex_unlock(&GRAPH(h)->lock);
	vnpu_trace("initialize stage=host");
	return ZE_RESULT_SUCCESS;
}

/*
 * The slots of extension 1.5 to 1.8 as a driver of an older version has
 * them: not there.  A caller that calls one anyway gets
 * ZE_RESULT_ERROR_UNSUPPORTED_FEATURE and the reason in the build log.
 */
static ze_result_t absent(const char *fn, uint32_t since)
{
	vnpu_warn("vnpu: %s is graph extension 1.%u; this driver presents 1.%u",
		  fn, since, vnpu_dev.graph_minor);
	return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
}

static ze_result_t no_create2(ze_context_handle_t c, ze_device_handle_t d,
			      const struct npr_ze_graph_desc_2 *desc,
			      npr_ze_graph_handle_t *out)
{
	return absent("pfnCreate2", 5);
}

static ze_result_t no_query2(ze_context_handle_t c, ze_device_handle_t d,
			     const struct npr_ze_graph_desc_2 *desc,
			     npr_ze_graph_query_handle_t *out)
{
	return absent("pfnQueryNetworkCreate2", 5);
}

static ze_result_t no_ctx_mem(ze_context_handle_t c, uint32_t type,
			      struct npr_ze_graph_memory_query *m)
{
	return absent("pfnQueryContextMemory", 5);
}

static ze_result_t no_dev_props2(ze_device_handle_t d,
				 struct npr_ze_device_graph_properties_2 *p)
{
	return absent("pfnDeviceGetGraphProperties2", 6);
}

static ze_result_t no_native2(npr_ze_graph_handle_t h, size_t *size,
			      const uint8_t **buf)
{
	return absent("pfnGetNativeBinary2", 7);
}

static ze_result_t no_props2(npr_ze_graph_handle_t h,
			     struct npr_ze_graph_properties_2 *p)
{
	return absent("pfnGetProperties2", 8);
}

static ze_result_t no_init(npr_ze_graph_handle_t h)
{
	return absent("pfnGraphInitialize", 8);
}

/**
 * vnpu_graph_version() - make the graph table that of extension 1.@minor
 * @minor: the version presented, 0 to VNPU_GRAPH_NEWEST
 *
 * The slots a driver of that version does not have refuse every call.
 *
 * Context: once, from zeInit, before the table is handed out.
 */
void vnpu_graph_version(uint32_t minor)
{
	if (minor < 5) {
		vnpu_graph_ddi.pfnCreate2 = no_create2;
		vnpu_graph_ddi.pfnQueryNetworkCreate2 = no_query2;
		vnpu_graph_ddi.pfnQueryContextMemory = no_ctx_mem;
	}
	if (minor < 6)
		vnpu_graph_ddi.pfnDeviceGetGraphProperties2 = no_dev_props2;
	if (minor < 7)
		vnpu_graph_ddi.pfnGetNativeBinary2 = no_native2;
	if (minor < 8) {
		vnpu_graph_ddi.pfnGetProperties2 = no_props2;
		vnpu_graph_ddi.pfnGraphInitialize = no_init;
	}
}

struct npr_ze_graph_ddi vnpu_graph_ddi = {
	.pfnCreate = g_create,
	.pfnDestroy = g_destroy,
	.pfnGetProperties = g_props,
	.pfnGetArgumentProperties = g_arg_props,
	.pfnSetArgumentValue = g_set_arg,
	.pfnAppendGraphInitialize = g_append_init,
	.pfnAppendGraphExecute = g_append_exec,
	.pfnGetNativeBinary = g_native,
	.pfnDeviceGetGraphProperties = g_dev_props,
	.pfnGraphGetArgumentMetadata = g_arg_meta,
	.pfnGetArgumentProperties2 = g_arg_props2,
	.pfnGetArgumentProperties3 = g_arg_props3,
	.pfnQueryNetworkCreate = q_create,
	.pfnQueryNetworkDestroy = q_destroy,
	.pfnQueryNetworkGetSupportedLayers = q_layers,
	.pfnBuildLogGetString = g_build_log,
	.pfnCreate2 = g_create2,
	.pfnQueryNetworkCreate2 = q_create2,
	.pfnQueryContextMemory = g_ctx_mem,
	.pfnDeviceGetGraphProperties2 = g_dev_props2,
	.pfnGetNativeBinary2 = g_native2,
	.pfnGetProperties2 = g_props2,
	.pfnGraphInitialize = g_init,
};

