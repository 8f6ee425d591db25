// SPDX-License-Identifier: MIT
/*
 * The npu backend: drives an Intel NPU (or vnpu, the software NPU) through
 * the Level Zero loader and the NPU graph extension.
 *
 * This file compiles models, exports and imports the driver's native
 * binary, creates requests and runs them; written.c builds the graph the
 * driver's compiler receives; device.c binds the loader, finds and probes
 * the device and answers its properties; npu.h is what they share.
 *
 * compile:        the model as written (ex->src: its own element types and
 *                 constants) is serialized as IR (NGRAPH_LITE, classic
 *                 layout) with the build-flag string; the driver compiles
 *                 it.  One command queue per compiled model.
 * request_create: one host buffer per argument (zeMemAllocHost), one
 *                 command list recorded once (SetArgumentValue, then
 *                 AppendGraphExecute), one fence.
 * infer:          run.c: copy inputs into the buffers, execute the list;
 *                 one waiter thread per command queue waits on the fences
 *                 in order and copies the outputs out (infer waits for it
 *                 until its deadline, infer_async returns at once).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "object.h"
#include "store/blob.h"

#if __has_include(<level_zero/ze_api.h>) && !defined(NPR_NO_LEVEL_ZERO)
#include "ir/ir.h"
#include "npu.h"
#include "sys.h"

static unsigned int elem_of_prec(uint32_t prec)
{
	switch (prec) {
	case NPR_ZE_PREC_FP32: return NPR_ELEM_F32;
	case NPR_ZE_PREC_FP16: return NPR_ELEM_F16;
	case NPR_ZE_PREC_BF16: return NPR_ELEM_BF16;
	case NPR_ZE_PREC_FP64: return NPR_ELEM_F64;
	case NPR_ZE_PREC_INT8: return NPR_ELEM_I8;
	case NPR_ZE_PREC_UINT8: return NPR_ELEM_U8;
	case NPR_ZE_PREC_INT16: return NPR_ELEM_I16;
	case NPR_ZE_PREC_UINT16: return NPR_ELEM_U16;
	case NPR_ZE_PREC_INT32: return NPR_ELEM_I32;
	case NPR_ZE_PREC_UINT32: return NPR_ELEM_U32;
	case NPR_ZE_PREC_INT64: return NPR_ELEM_I64;
	case NPR_ZE_PREC_UINT64: return NPR_ELEM_U64;
	case NPR_ZE_PREC_BOOLEAN: return NPR_ELEM_BOOLEAN;
	}
	return NPR_ELEM_UNDEFINED;
}

static const char *prec_word(unsigned int t)
{
	switch (t) {
	case NPR_ELEM_F32: return "FP32";
	case NPR_ELEM_F16: return "FP16";
	case NPR_ELEM_BF16: return "BF16";
	case NPR_ELEM_F64: return "FP64";
	case NPR_ELEM_I8: return "I8";
	case NPR_ELEM_U8: return "U8";
	case NPR_ELEM_I16: return "I16";
	case NPR_ELEM_U16: return "U16";
	case NPR_ELEM_I32: return "I32";
	case NPR_ELEM_U32: return "U32";
	case NPR_ELEM_I64: return "I64";
	case NPR_ELEM_U64: return "U64";
	case NPR_ELEM_BOOLEAN: return "BOOL";
	}
	return "DYNAMIC";
}

static const char *layout_word(int rank)
{
	static const char *const w[] = {
		"**SCALAR**", "C", "NC", "CHW", "NCHW", "NCDHW",
	};

	return rank >= 0 && rank <= 5 ? w[rank] : "BLOCKED";
}

/* --inputs_precisions="0:FP32" ... --config KEY="VALUE" ... */
static char *build_flags(const struct npr_exec *ex)
{
	const struct npu_device *nd = ex->dev->priv;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int s, i;

	if (!f)
		return NULL;
	for (s = 0; s < 4; s++) {
		bool out = s >= 2, layout = s & 1;
		int n = out ? ex->nout : ex->nin;

		fprintf(f, "%s--%s_%s=\"", s ? " " : "",
			out ? "outputs" : "inputs",
			layout ? "layouts" : "precisions");
		for (i = 0; i < n; i++) {
			const struct npr_port *p = out ? &ex->out[i] :
							 &ex->in[i];

			fprintf(f, "%s%d:%s", i ? " " : "", i,
				layout ? layout_word(p->shape.rank) :
					 prec_word(p->type));
		}
		fputc('"', f);
	}
	fprintf(f, " --config NPU_PLATFORM=\"%s\" PERFORMANCE_HINT=\"%s\"",
		ex->dev->info.arch,
		ex->props.perf_hint == NPR_PERF_HINT_THROUGHPUT ?
		"THROUGHPUT" : "LATENCY");
	/* the compute precision, for compilers that take it (5.4 on) */
	if (nd->gprops.compilerMajor > 5 ||
	    (nd->gprops.compilerMajor == 5 && nd->gprops.compilerMinor >= 4))
		fprintf(f, " INFERENCE_PRECISION_HINT=\"%s\"",
			npr_elem_name(ex->props.precision_hint));
	/* the compile-time NPU properties the user set */
	if (ex->props.npu_tiles > 0)
		fprintf(f, " NPU_TILES=\"%d\"", ex->props.npu_tiles);
	if (ex->props.npu_turbo)
		fprintf(f, " NPU_TURBO=\"YES\"");
	if (ex->props.npu_compilation_mode[0])
		fprintf(f, " NPU_COMPILATION_MODE_PARAMS=\"%s\"",
			ex->props.npu_compilation_mode);
	if (ex->props.npu_dynamic_quantization)
		fprintf(f, " NPU_COMPILER_DYNAMIC_QUANTIZATION=\"YES\"");
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static char *build_flags(const struct npr_exec *ex);

static char *flags_for_dump(const struct npr_exec *ex)
{
	return npr_env(NPR_ENV_NPU_DUMP) ? build_flags(ex) : NULL;
}

/*
 * NPR_NPU_DUMP=DIR: write what the driver is given (DIR/<model>.xml and
 * DIR/<model>.flags), for diagnosing a compiler that refuses it.
 */
static void dump_ir(const struct npr_exec *ex, const char *xml, size_t len,
		    char *flags)
{
	const char *dir = npr_env(NPR_ENV_NPU_DUMP);
	const char *name = ex->g->name && *ex->g->name ? ex->g->name : "model";
	char path[PATH_MAX];
	FILE *f;

	if (!dir || !*dir || strchr(name, '/'))
		goto out;
	snprintf(path, sizeof(path), "%s/%.64s.xml", dir, name);
	f = fopen(path, "w");
	if (f) {
		fwrite(xml, 1, len, f);
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/%.64s.flags", dir, name);
	f = fopen(path, "w");
	if (f && flags)
		fprintf(f, "%s\n", flags);
	if (f)
		fclose(f);
out:
	free(flags);
}

static void npu_exec_destroy(struct npr_exec *ex)
{
	struct npu_exec *ne = ex->priv;

	if (ne->llm) {
		npr_npu_llm_destroy(ex);
		return;
	}
	npr_npu_waiter_stop(ne);
	if (ne->queue)
		npr_ze.CommandQueueDestroy(ne->queue);
	if (ne->graph)
		npr_npu.graph->pfnDestroy(ne->graph);
	pthread_mutex_destroy(&ne->lock);
	free(ne->arg);
	free(ne);
	ex->priv = NULL;
}

static int compile_error(ze_result_t r)
{
	char log[2048] = "";
	uint32_t size = sizeof(log);

	if (npr_npu.graph_version >= NPR_ZE_GRAPH_VERSION(4) &&
	    !npr_npu.graph->pfnBuildLogGetString(NULL, &size, log) && log[0])
		return npr_err(r == ZE_RESULT_ERROR_UNKNOWN ? -EINVAL :
			       npr_ze_errno(r),
			       "npu: the NPU compiler failed (0x%x): %s",
			       (unsigned int)r, log);
	return ZE_FAIL(r, "graph create");
}

/*
 * Which model port an argument carries: the one at the same position if
 * its name matches, else the first free port of that name, else the one
 * at the same position (a compiler may rename arguments).
 */
static int arg_port(const struct npr_exec *ex, const char *name, bool out,
		    int pos, const bool *taken)
{
	const struct npr_port *p = out ? ex->out : ex->in;
	int n = out ? ex->nout : ex->nin, k;

	if (pos < n && !taken[pos] && !strcmp(p[pos].name, name))
		return pos;
	for (k = 0; k < n; k++)
		if (!taken[k] && !strcmp(p[k].name, name))
			return k;
	return pos;
}

static int var_of(const struct npr_graph *g, const char *id)
{
	int k;

	for (k = 0; k < g->nvars; k++)
		if (!strcmp(g->vars[k].id, id))
			return k;
	return -1;
}

/*
 * Check the driver's arguments against the compiled model's ports: the
 * model's own inputs and outputs by name (else position), and per
 * variable the compiler's vpux_ie_read_value_<id> input (the variable's
 * hidden state input) and vpux_ie_assign_<id> output (its hidden state
 * output).  The variables' validity inputs have no argument.
 */
static int map_args(struct npr_exec *ex, struct npu_exec *ne)
{
	struct npr_ze_graph_properties gp = {
		.stype = NPR_ZE_STYPE_GRAPH_PROPERTIES,
	};
	const struct npr_graph *g = ex->g;
	int vis[2] = { ex->nin - g->nstate_in, ex->nout - g->nstate_out };
	int pos[2] = { 0, 0 };
	bool *seen[2];
	ze_result_t r;
	uint32_t i;
	int err = 0, k, j;

	r = npr_npu.graph->pfnGetProperties(ne->graph, &gp);
	if (r)
		return ZE_FAIL(r, "graph GetProperties");
	if (gp.numGraphArgs > 4096)
		return npr_err(-EPROTO, "npu: the compiled graph has %u arguments",
			       gp.numGraphArgs);
	ne->nargs = gp.numGraphArgs;
	ne->arg = calloc(ne->nargs + 1, sizeof(*ne->arg));
	seen[0] = calloc(ex->nin + 1, sizeof(bool));
	seen[1] = calloc(ex->nout + 1, sizeof(bool));
	if (!ne->arg || !seen[0] || !seen[1]) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < ne->nargs && !err; i++) {
		struct npr_ze_graph_argument_properties ap = {
			.stype = NPR_ZE_STYPE_GRAPH_ARGUMENT_PROPERTIES,
		};
		struct npu_arg *a = &ne->arg[i];
		const char *pre;
		size_t numel = 1;
		bool out;

		r = npr_npu.graph->pfnGetArgumentProperties(ne->graph, i, &ap);
		if (r) {
			err = ZE_FAIL(r, "graph GetArgumentProperties");
			break;
		}
		ap.name[sizeof(ap.name) - 1] = 0;
		if (ap.type != NPR_ZE_GRAPH_ARG_INPUT &&
		    ap.type != NPR_ZE_GRAPH_ARG_OUTPUT) {
			err = npr_err(-EPROTO, "npu: graph argument %u (%s) has direction %d",
				      i, ap.name, ap.type);
			break;
		}
		out = a->out = ap.type == NPR_ZE_GRAPH_ARG_OUTPUT;
		for (k = 0; k < NPR_ZE_ARG_DIMS; k++)
			numel *= ap.dims[k];
		a->type = elem_of_prec(ap.devicePrecision);
		a->numel = numel;
		a->bytes = numel * npr_elem_size(a->type);
		a->var = -1;
		a->peer = -1;
		pre = out ? NPU_ASSIGN_PREFIX : NPU_READ_PREFIX;
		if (!strncmp(ap.name, pre, strlen(pre))) {
			a->var = var_of(g, ap.name + strlen(pre));
			if (a->var < 0) {
				err = npr_err(-EPROTO, "npu: graph argument %s names no variable of the model",
					      ap.name);
				break;
			}
			a->port = out ? g->vars[a->var].state_out :
					g->vars[a->var].state_in;
		} else {
			bool hidden;

			a->port = arg_port(ex, ap.name, out, pos[out],
					   seen[out]);
			/* a hidden port (an unassigned variable's) by name */
			hidden = a->port >= vis[out] &&
				 a->port < (out ? ex->nout : ex->nin) &&
				 !strcmp(ap.name, out ? ex->out[a->port].name :
							ex->in[a->port].name);
			if (a->port >= vis[out] && !hidden) {
				err = npr_err(-EPROTO, "npu: graph argument %u (%s): the model has no such %s",
					      i, ap.name, out ? "output" : "input");
				break;
			}
			if (!hidden)
				pos[out]++;
		}
		if (a->port < 0)
			continue;	/* an assign nothing reads back */
		{
			const struct npr_port *p = out ? &ex->out[a->port] :
							 &ex->in[a->port];

			if (numel != (size_t)npr_shape_numel(&p->shape) ||
			    !a->bytes || seen[out][a->port])
				err = npr_err(-EPROTO,
					      "npu: graph argument %u (%s) does not match %s %s",
					      i, ap.name, out ? "output" : "input",
					      p->name);
		}
		seen[out][a->port] = true;
	}
	/* every port the model computes with has its argument */
	for (k = 0; k < ex->nin && !err; k++) {
		bool valid = false;

		for (j = 0; j < g->nvars; j++)
			valid |= g->vars[j].valid_in == k;
		if (!seen[0][k] && !valid)
			err = npr_err(-EPROTO, "npu: the compiled graph has no argument for input %s",
				      ex->in[k].name);
	}
	for (k = 0; k < vis[1] && !err; k++)
		if (!seen[1][k])
			err = npr_err(-EPROTO, "npu: the compiled graph has no argument for output %s",
				      ex->out[k].name);
	/* pair each read_value with its assign: they share one buffer */
	for (i = 0; i < ne->nargs && !err; i++) {
		struct npu_arg *a = &ne->arg[i];

		if (a->var < 0 || a->out)
			continue;
		for (j = 0; j < (int)ne->nargs; j++)
			if (ne->arg[j].out && ne->arg[j].var == a->var &&
			    ne->arg[j].bytes == a->bytes)
				a->peer = j;
	}
out:
	free(seen[0]);
	free(seen[1]);
	return err;
}

/*
 * A model the compiler cannot read: an op of a later opset than the
 * driver's compiler supports (maxOVOpsetVersionSupported).  The NPU
 * plugin downgrades Interpolate-11 to Interpolate-4 there; npuring says
 * so instead.
 */
static int npu_check_opset(const struct npu_device *nd,
			   const struct npr_graph *w)
{
	uint32_t max = nd->gprops.maxOVOpsetVersionSupported;
	int i;

	for (i = 0; i < w->nnodes; i++) {
		const struct npr_node *n = &w->nodes[i];

		if (!n->dead && !strcmp(n->type, "Interpolate") &&
		    n->version >= 11 && max && max < 11)
			return npr_node_err(n, -EOPNOTSUPP,
					    "npu: Interpolate-%u, but the NPU compiler reads opsets up to %u",
					    n->version, max);
	}
	return 0;
}

/*
 * @w as NGRAPH_LITE input, classic layout: the driver's compiler version
 * (2 + 2 bytes), the part count 2, then the xml and the weights, each
 * after its u64 size.  @dump: also write the xml (NPR_NPU_DUMP).
 */
static int pack_ir(const struct npu_device *nd, const struct npr_graph *w,
		   uint8_t **out, size_t *out_size,
		   const struct npr_exec *dump)
{
	char *xml = NULL;
	void *bin = NULL;
	size_t xml_len, bin_len, size;
	uint32_t two = 2;
	uint8_t *p;
	uint64_t v;
	int err;

	err = npu_check_opset(nd, w);
	if (!err)
		err = npr_ir_write_mem(w, &xml, &xml_len, &bin, &bin_len);
	if (err)
		return err;
	if (dump)
		dump_ir(dump, xml, xml_len, flags_for_dump(dump));
	size = 4 + 4 + 8 + xml_len + 8 + bin_len;
	p = malloc(size);
	if (!p) {
		err = -ENOMEM;
		goto out;
	}
	memcpy(p, &nd->gprops.compilerMajor, 2);
	memcpy(p + 2, &nd->gprops.compilerMinor, 2);
	memcpy(p + 4, &two, 4);
	v = xml_len;
	memcpy(p + 8, &v, 8);
	memcpy(p + 16, xml, xml_len);
	v = bin_len;
	memcpy(p + 16 + xml_len, &v, 8);
	if (bin_len)
		memcpy(p + 24 + xml_len, bin, bin_len);
	*out = p;
	*out_size = size;
out:
	free(xml);
	free(bin);
	return err;
}

/*
 * What the compiler gets for ex: the model as written, or for an import
 * without a native binary the compiled graph; ports in the caller's types.
 */
static int compile_input(const struct npu_device *nd,
			 const struct npr_exec *ex, uint8_t **out,
			 size_t *size)
{
	struct npr_graph *w = NULL;
	const struct npr_graph *g = ex->g;
	unsigned int *types;
	int err, i;

	if (ex->src) {
		err = npr_npu_written_graph(ex, &w);
	} else {
		types = calloc(ex->nin + ex->nout + 1, sizeof(*types));
		if (!types)
			return -ENOMEM;
		for (i = 0; i < ex->nin && i < g->ninputs; i++)
			types[i] = ex->in[i].type;
		for (i = 0; i < ex->nout && i < g->noutputs; i++)
			types[g->ninputs + i] = ex->out[i].type;
		err = npr_npu_ir_graph(g, types, &w);
		free(types);
	}
	if (err)
		return err;
	err = pack_ir(nd, w, out, size, ex);
	npr_graph_free(w);
	return err;
}

/*
 * query: the layers the driver's compiler supports (QueryNetwork), by
 * name; ex->g's own node names survive into the IR.
 */
static int npu_query(struct npr_device *dev, const struct npr_graph *g,
		     bool *supported)
{
	struct npu_device *nd = dev->priv;
	struct npr_ze_graph_desc_2 desc = {
		.stype = NPR_ZE_STYPE_GRAPH_DESC,
		.format = NPR_ZE_GRAPH_FORMAT_NGRAPH_LITE,
	};
	npr_ze_graph_query_handle_t q;
	char flags[64], *names = NULL;
	uint8_t *buf = NULL;
	size_t size, len = 0;
	ze_result_t r;
	int err, i;

	{
		struct npr_graph *w = NULL;
		unsigned int *types;

		types = calloc(g->ninputs + g->noutputs + 1, sizeof(*types));
		if (!types)
			return -ENOMEM;
		for (i = 0; i < g->ninputs; i++)
			types[i] = g->vals[g->nodes[g->inputs[i]].out[0]].type;
		for (i = 0; i < g->noutputs; i++)
			types[g->ninputs + i] =
				g->vals[g->nodes[g->outputs[i]].in[0]].type;
		err = npr_npu_ir_graph(g, types, &w);
		free(types);
		if (!err)
			err = pack_ir(nd, w, &buf, &size, NULL);
		npr_graph_free(w);
		if (err)
			return err;
	}
	snprintf(flags, sizeof(flags), "--config NPU_PLATFORM=\"%s\"",
		 dev->info.arch);
	desc.inputSize = size;
	desc.pInput = buf;
	desc.pBuildFlags = flags;
	r = npr_npu.graph->pfnQueryNetworkCreate2(nd->ctx, nd->dev, &desc, &q);
	free(buf);
	if (r)
		return compile_error(r);
	r = npr_npu.graph->pfnQueryNetworkGetSupportedLayers(q, &len, NULL);
	if (!r && len) {
		names = malloc(len + 1);
		if (!names) {
			npr_npu.graph->pfnQueryNetworkDestroy(q);
			return -ENOMEM;
		}
		r = npr_npu.graph->pfnQueryNetworkGetSupportedLayers(q, &len,
								 names);
		names[len] = 0;
	}
	npr_npu.graph->pfnQueryNetworkDestroy(q);
	if (r) {
		free(names);
		return ZE_FAIL(r, "QueryNetworkGetSupportedLayers");
	}
	/* "<name0><name1>..." */
	for (i = 0; i < g->nnodes; i++) {
		const char *n = g->nodes[i].name, *s;
		size_t nl = n ? strlen(n) : 0;

		supported[i] = false;
		for (s = names; n && s && (s = strchr(s, '<')); s++)
			if (!strncmp(s + 1, n, nl) && s[1 + nl] == '>') {
				supported[i] = true;
				break;
			}
	}
	free(names);
	return 0;
}

/*
 * The COMMAND_LIST_INITIALIZE stage: AppendGraphInitialize on a command
 * list of its own, executed on a queue of its own with a fence, waited
 * for, and all three destroyed again.
 */
static int init_on_list(const struct npu_device *nd, struct npu_exec *ne)
{
	ze_command_queue_desc_t qd = {
		.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
		.mode = ZE_COMMAND_QUEUE_MODE_DEFAULT,
		.priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL,
	};
	ze_command_list_desc_t ld = {
		.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC,
	};
	ze_fence_desc_t fd = { .stype = ZE_STRUCTURE_TYPE_FENCE_DESC };
	ze_command_queue_handle_t q = NULL;
	ze_command_list_handle_t l = NULL;
	ze_fence_handle_t f = NULL;
	const char *what = "zeCommandListCreate";
	ze_result_t r;

	r = npr_ze.CommandListCreate(nd->ctx, nd->dev, &ld, &l);
	if (!r) {
		what = "zeCommandQueueCreate";
		r = npr_ze.CommandQueueCreate(nd->ctx, nd->dev, &qd, &q);
	}
	if (!r) {
		what = "zeFenceCreate";
		r = npr_ze.FenceCreate(q, &fd, &f);
	}
	if (!r) {
		what = "AppendGraphInitialize";
		r = npr_npu.graph->pfnAppendGraphInitialize(l, ne->graph, NULL,
							    0, NULL);
	}
	if (!r) {
		what = "zeCommandListClose";
		r = npr_ze.CommandListClose(l);
	}
	if (!r) {
		what = "executing the graph initialization";
		r = npr_ze.CommandQueueExecuteCommandLists(q, 1, &l, f);
	}
	if (!r)
		r = npr_ze.FenceHostSynchronize(f, UINT64_MAX);
	if (f)
		npr_ze.FenceDestroy(f);
	if (q)
		npr_ze.CommandQueueDestroy(q);
	if (l)
		npr_ze.CommandListDestroy(l);
	return r ? ZE_FAIL(r, what) : 0;
}

/*
 * The graph's initialisation (weights upload), at compile or, with
 * NPU_DEFER_WEIGHTS_LOAD, when the first request is created, as the NPU
 * plugin does it: from extension 1.8 the graph's properties say the
 * stage; INITIALIZE is the host-side GraphInitialize, COMMAND_LIST_
 * INITIALIZE (and every graph before 1.8) an AppendGraphInitialize
 * executed on a command list and waited for.  The caller holds ne->lock
 * or owns @ne alone.
 */
static int graph_init(const struct npu_device *nd, struct npu_exec *ne)
{
	struct npr_ze_graph_properties_2 gp2 = {
		.stype = NPR_ZE_STYPE_GRAPH_PROPERTIES,
	};
	uint32_t stage = NPR_ZE_GRAPH_STAGE_COMMAND_LIST_INITIALIZE;
	ze_result_t r;
	int err;

	if (!ne->init_pending)
		return 0;
	if (npr_npu.graph_version >= NPR_ZE_GRAPH_VERSION_1_8) {
		r = npr_npu.graph->pfnGetProperties2(ne->graph, &gp2);
		if (r)
			return ZE_FAIL(r, "graph GetProperties2");
		stage = gp2.initStageRequired;
	}
	if (stage & NPR_ZE_GRAPH_STAGE_INITIALIZE) {
		r = npr_npu.graph->pfnGraphInitialize(ne->graph);
		if (r)
			return ZE_FAIL(r, "GraphInitialize");
	}
	if (stage & NPR_ZE_GRAPH_STAGE_COMMAND_LIST_INITIALIZE) {
		err = init_on_list(nd, ne);
		if (err)
			return err;
	}
	ne->init_pending = false;
	return 0;
}

/*
 * Exported blobs carry the driver's native binary (GetNativeBinary), the
 * compile-time NPU properties it was compiled with, and this trailer,
 * all little-endian:
 *
 *    0  magic "NPRNPUN\0"
 *    8  u32 trailer version (NPU_NATIVE_VERSION)
 *   12  u32 PCI device id the binary was compiled for
 *   16  u16 compiler major, u16 compiler minor
 *   20  u32 graph extension version of the driver
 *   24  u64 size of the binary
 *   32  u64 npr_blob_hash() of the binary and the properties
 *   40  u32 size of the properties
 *   44  u32 0
 *
 * The properties: s32 NPU_TILES, u32 NPU_TURBO, u32 NPU_BYPASS_UMD_CACHING,
 * u32 NPU_DEFER_WEIGHTS_LOAD, u32 NPU_COMPILER_DYNAMIC_QUANTIZATION, u32
 * length and bytes of NPU_COMPILATION_MODE_PARAMS (no NUL).
 */
#define NPU_NATIVE_MAGIC	"NPRNPUN"
#define NPU_NATIVE_VERSION	1
#define NPU_NATIVE_TRAILER	48
#define NPU_NATIVE_PROPS	24	/* without the string */

static int npu_native_export(const struct npr_exec *ex, void **out,
			     size_t *len)
{
	const struct npu_device *nd = ex->dev->priv;
	const struct npu_exec *ne = ex->priv;
	const struct npr_props *pr = &ex->props;
	const uint8_t *view = NULL;
	uint32_t u, w[5], mode = (uint32_t)strlen(pr->npu_compilation_mode);
	size_t size = 0, psize = NPU_NATIVE_PROPS + mode;
	uint8_t *p, *t;
	uint64_t v;
	ze_result_t r;

	if (ne->llm)
		return npr_err(-EOPNOTSUPP, "npu: a decoder compiled as prefill and generate graphs has no single native binary to export");
	if (npr_npu.graph_version >= NPR_ZE_GRAPH_VERSION(7))
		r = npr_npu.graph->pfnGetNativeBinary2(ne->graph, &size, &view);
	else
		r = npr_npu.graph->pfnGetNativeBinary(ne->graph, &size, NULL);
	if (r)
		return ZE_FAIL(r, "GetNativeBinary");
	if (!size || size > ((size_t)1 << 40))
		return npr_err(-EPROTO, "npu: the driver's native binary has %zu bytes",
			       size);
	p = malloc(size + psize + NPU_NATIVE_TRAILER);
	if (!p)
		return -ENOMEM;
	if (view) {
		memcpy(p, view, size);
	} else {
		size_t got = size;

		r = npr_npu.graph->pfnGetNativeBinary(ne->graph, &got, p);
		if (r || got != size) {
			free(p);
			return r ? ZE_FAIL(r, "GetNativeBinary") :
			       npr_err(-EPROTO, "npu: GetNativeBinary returned %zu bytes, announced %zu",
				       got, size);
		}
	}
	w[0] = (uint32_t)pr->npu_tiles;
	w[1] = pr->npu_turbo;
	w[2] = pr->npu_bypass_umd_caching;
	w[3] = pr->npu_defer_weights_load;
	w[4] = pr->npu_dynamic_quantization;
	memcpy(p + size, w, sizeof(w));
	memcpy(p + size + 20, &mode, 4);
	memcpy(p + size + NPU_NATIVE_PROPS, pr->npu_compilation_mode, mode);
	t = p + size + psize;
	memcpy(t, NPU_NATIVE_MAGIC, 8);
	u = NPU_NATIVE_VERSION;
	memcpy(t + 8, &u, 4);
	memcpy(t + 12, &nd->pci_id, 4);
	memcpy(t + 16, &nd->gprops.compilerMajor, 2);
	memcpy(t + 18, &nd->gprops.compilerMinor, 2);
	memcpy(t + 20, &npr_npu.graph_version, 4);
	v = size;
	memcpy(t + 24, &v, 8);
	v = npr_blob_hash(p, size + psize);
	memcpy(t + 32, &v, 8);
	u = (uint32_t)psize;
	memcpy(t + 40, &u, 4);
	u = 0;
	memcpy(t + 44, &u, 4);
	*out = p;
	*len = size + psize + NPU_NATIVE_TRAILER;
	return 0;
}

/*
 * The native binary of an imported blob, its trailer checked, and the
 * compile-time properties it was compiled with put back into ex->props.
 */
static int native_of(struct npr_exec *ex, const uint8_t **bin, size_t *size)
{
	const struct npu_device *nd = ex->dev->priv;
	const uint8_t *t, *pp;
	uint32_t ver, pci, psize, zero, w[5], mode;
	uint64_t n, hash;

	if (ex->native_len < NPU_NATIVE_TRAILER)
		return npr_err(-EBADMSG, "npu: the blob's native section is truncated (%zu bytes)",
			       ex->native_len);
	t = (const uint8_t *)ex->native + ex->native_len - NPU_NATIVE_TRAILER;
	if (memcmp(t, NPU_NATIVE_MAGIC, 8))
		return npr_err(-ENOEXEC, "npu: the blob's native section is not an npu one");
	memcpy(&ver, t + 8, 4);
	memcpy(&pci, t + 12, 4);
	memcpy(&n, t + 24, 8);
	memcpy(&hash, t + 32, 8);
	memcpy(&psize, t + 40, 4);
	memcpy(&zero, t + 44, 4);
	if (ver != NPU_NATIVE_VERSION)
		return npr_err(-EPROTONOSUPPORT, "npu: native section version %u, this library reads %d",
			       ver, NPU_NATIVE_VERSION);
	if (zero || psize < NPU_NATIVE_PROPS ||
	    psize >= NPU_NATIVE_PROPS + NPR_PROP_STR_MAX ||
	    n > ex->native_len - NPU_NATIVE_TRAILER ||
	    n + psize != ex->native_len - NPU_NATIVE_TRAILER ||
	    npr_blob_hash(ex->native, (size_t)(n + psize)) != hash)
		return npr_err(-EBADMSG, "npu: the blob's native binary is truncated or corrupt");
	if (pci != nd->pci_id)
		return npr_err(-ENODEV, "npu: the blob was compiled for NPU 0x%04x (%s), this is 0x%04x (%s)",
			       pci, npr_platform_of(pci), nd->pci_id,
			       npr_platform_of(nd->pci_id));
	pp = (const uint8_t *)ex->native + n;
	memcpy(w, pp, sizeof(w));
	memcpy(&mode, pp + 20, 4);
	if (mode != psize - NPU_NATIVE_PROPS || w[1] > 1 || w[2] > 1 ||
	    w[3] > 1 || w[4] > 1 ||
	    ((int32_t)w[0] != -1 && (w[0] < 1 || w[0] > nd->tiles)) ||
	    memchr(pp + NPU_NATIVE_PROPS, 0, mode))
		return npr_err(-EBADMSG, "npu: the blob's NPU properties are corrupt");
	ex->props.npu_tiles = (int32_t)w[0];
	ex->props.npu_turbo = w[1];
	ex->props.npu_bypass_umd_caching = w[2];
	ex->props.npu_defer_weights_load = w[3];
	ex->props.npu_dynamic_quantization = w[4];
	memcpy(ex->props.npu_compilation_mode, pp + NPU_NATIVE_PROPS, mode);
	ex->props.npu_compilation_mode[mode] = 0;
	*bin = ex->native;
	*size = (size_t)n;
	return 0;
}

/*
 * After the driver has the graph: arguments against ports, the weights
 * (now or on the first request), the command queue.
 */
/*
 * The request's share of the memory budget (npr_exec_budget()): what
 * npu_request_create() allocates, its arrays and one page-aligned host
 * buffer per argument that is not a variable's shared one.  The driver's
 * command list and fence are not counted.
 */
static void budget(struct npr_exec *ex, const struct npu_exec *ne)
{
	uint64_t req;
	uint32_t i, j;

	req = npr_alloc_cost(sizeof(struct npu_request)) +
	      npr_alloc_cost((uint64_t)(ne->nargs + 1) * sizeof(void *)) +
	      npr_alloc_cost((uint64_t)(ne->nargs + 1) * sizeof(bool));
	for (i = 0; i < ne->nargs; i++) {
		bool shared = false;

		for (j = 0; j < ne->nargs; j++)
			if (ne->arg[j].peer == (int)i)
				shared = true;
		if (!shared)
			req += (ne->arg[i].bytes + 4095) / 4096 * 4096 + 4096;
	}
	ex->be_req_bytes = req;
}

static int finish_graph(struct npr_exec *ex, struct npu_exec *ne)
{
	struct npu_device *nd = ex->dev->priv;
	ze_command_queue_desc_t qd = {
		.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
		.mode = ZE_COMMAND_QUEUE_MODE_DEFAULT,
		.priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL,
	};
	struct npr_ze_command_queue_desc_npu turbo = {
		.stype = NPR_ZE_STYPE_COMMAND_QUEUE_DESC_NPU,
		.turbo = 1,
	};
	ze_result_t r;
	int err;

	/* NPU_TURBO: the queue's turbo flag, where the driver has it */
	if (ex->props.npu_turbo && npr_npu.cq_npu)
		qd.pNext = &turbo;
	/* MODEL_PRIORITY: the queue's priority, as the NPU plugin sets it */
	if (ex->props.priority == NPR_PRIORITY_LOW)
		qd.priority = ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_LOW;
	else if (ex->props.priority == NPR_PRIORITY_HIGH)
		qd.priority = ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_HIGH;
	err = map_args(ex, ne);
	if (err)
		return err;
	ne->init_pending = true;
	if (!ex->props.npu_defer_weights_load) {
		err = graph_init(nd, ne);
		if (err)
			return err;
	}
	r = npr_ze.CommandQueueCreate(nd->ctx, nd->dev, &qd, &ne->queue);
	if (r) {
		ne->queue = NULL;
		return ZE_FAIL(r, "zeCommandQueueCreate");
	}
	/* WORKLOAD_TYPE: EFFICIENT is the driver's BACKGROUND workload */
	if (ex->props.workload_type == NPR_WORKLOAD_EFFICIENT) {
		if (!npr_npu.cq_npu_ddi)
			return npr_err(-EOPNOTSUPP, "npu: WORKLOAD_TYPE EFFICIENT: the NPU driver has no %s extension",
				       NPR_ZE_CQ_NPU_EXT_NAME);
		r = npr_npu.cq_npu_ddi->pfnSetWorkloadType(ne->queue,
						NPR_ZE_WORKLOAD_BACKGROUND);
		if (r)
			return ZE_FAIL(r, "SetWorkloadType");
	}
	budget(ex, ne);
	return 0;
}

/* Import: the driver's native binary, no compiler involved. */
static int compile_native(struct npr_exec *ex)
{
	struct npu_device *nd = ex->dev->priv;
	struct npr_ze_graph_desc_2 desc = {
		.stype = NPR_ZE_STYPE_GRAPH_DESC,
		.format = NPR_ZE_GRAPH_FORMAT_NATIVE,
	};
	struct npu_exec *ne;
	const uint8_t *bin = NULL;
	size_t size = 0;
	ze_result_t r;
	int err;

	err = native_of(ex, &bin, &size);
	if (err)
		return err;
	ne = calloc(1, sizeof(*ne));
	if (!ne)
		return -ENOMEM;
	pthread_mutex_init(&ne->lock, NULL);
	npr_npu_waiter_init(ne, nd);
	ex->priv = ne;
	desc.inputSize = size;
	desc.pInput = bin;
	ne->profiling = ex->props.profiling && npr_npu.prof;
	if (ne->profiling)
		desc.flags |= NPR_ZE_GRAPH_FLAG_ENABLE_PROFILING;
	r = npr_npu.graph->pfnCreate2(nd->ctx, nd->dev, &desc, &ne->graph);
	if (r) {
		ne->graph = NULL;
		return r == ZE_RESULT_ERROR_INVALID_NATIVE_BINARY ?
		       compile_error(r) : ZE_FAIL(r, "graph import");
	}
	err = finish_graph(ex, ne);
	if (!err) {
		free(ex->native);
		ex->native = NULL;
		ex->native_len = 0;
	}
	return err;
}

static int npu_compile(struct npr_exec *ex)
{
	struct npu_device *nd = ex->dev->priv;
	struct npr_ze_graph_desc_2 desc = {
		.stype = NPR_ZE_STYPE_GRAPH_DESC,
		.format = NPR_ZE_GRAPH_FORMAT_NGRAPH_LITE,
	};
	struct npu_exec *ne;
	char *flags = NULL;
	uint8_t *buf = NULL;
	size_t size;
	ze_result_t r;
	int err;

	if (npr_npu_llm_wanted(ex))
		return npr_npu_llm_compile(ex);
	if (ex->native)
		return compile_native(ex);
	if (!(nd->gprops.graphFormatsSupported &
	      NPR_ZE_GRAPH_FORMAT_NGRAPH_LITE))
		return npr_err(-EOPNOTSUPP,
			       "npu: the NPU driver has no compiler (it accepts native blobs only; is libnpu_driver_compiler installed?)");
	ne = calloc(1, sizeof(*ne));
	if (!ne)
		return -ENOMEM;
	pthread_mutex_init(&ne->lock, NULL);
	npr_npu_waiter_init(ne, nd);
	ex->priv = ne;
	err = compile_input(nd, ex, &buf, &size);
	if (err)
		return err;
	flags = build_flags(ex);
	err = -ENOMEM;
	if (!flags)
		goto out;
	desc.inputSize = size;
	desc.pInput = buf;
	desc.pBuildFlags = flags;
	if (ex->props.npu_bypass_umd_caching)
		desc.flags |= NPR_ZE_GRAPH_FLAG_DISABLE_CACHING;
	/* ENABLE_PROFILING: a graph of profiling queries (profile.c) */
	ne->profiling = ex->props.profiling && npr_npu.prof;
	if (ne->profiling)
		desc.flags |= NPR_ZE_GRAPH_FLAG_ENABLE_PROFILING;
	r = npr_npu.graph->pfnCreate2(nd->ctx, nd->dev, &desc, &ne->graph);
	if (r) {
		ne->graph = NULL;
		err = compile_error(r);
		goto out;
	}
	err = finish_graph(ex, ne);
out:
	free(buf);
	free(flags);
	return err;
}

/**
 * npr_npu_request_free() - free a request's driver objects and buffers
 * @nd: its device.
 * @ne: its compiled model.
 * @nr: the request's state, idle.
 */
void npr_npu_request_free(struct npu_device *nd, struct npu_exec *ne,
			  struct npu_request *nr)
{
	uint32_t i;

	if (nr->fence)
		npr_ze.FenceDestroy(nr->fence);
	if (nr->list)
		npr_ze.CommandListDestroy(nr->list);
	npr_npu_prof_detach(nr);
	for (i = 0; nr->buf && i < ne->nargs; i++)
		if (nr->buf[i] && !nr->shared[i])
			npr_ze.MemFree(nd->ctx, nr->buf[i]);
	free(nr->shared);
	free(nr->bound);
	free(nr->buf);
	free(nr);
}

static void npu_request_destroy(struct npr_request *rq)
{
	struct npu_exec *ne = rq->ex->priv;
	struct npu_request *nr = rq->priv;

	if (ne->llm) {
		npr_npu_llm_request_destroy(rq);
		return;
	}
	rq->priv = NULL;
	/*
	 * An execution an INFER gave up on: the device writes its memory,
	 * which the queue's waiter frees when it is done.
	 */
	if (nr && !npr_npu_request_orphan(rq, nr))
		npr_npu_request_free(rq->ex->dev->priv, rq->ex->priv, nr);
}

static int npu_request_create(struct npr_request *rq)
{
	struct npu_device *nd = rq->ex->dev->priv;
	struct npu_exec *ne = rq->ex->priv;
	ze_host_mem_alloc_desc_t hd = {
		.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC,
	};
	ze_command_list_desc_t ld = {
		.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC,
	};
	ze_fence_desc_t fd = { .stype = ZE_STRUCTURE_TYPE_FENCE_DESC };
	struct npu_request *nr;
	ze_result_t r;
	uint32_t i;

	if (ne->llm)
		return npr_npu_llm_request(rq);
	nr = calloc(1, sizeof(*nr));
	if (!nr)
		return -ENOMEM;
	rq->priv = nr;
	nr->buf = calloc(ne->nargs + 1, sizeof(*nr->buf));
	nr->bound = calloc(ne->nargs + 1, sizeof(*nr->bound));
	nr->shared = calloc(ne->nargs + 1, sizeof(*nr->shared));
	if (!nr->buf || !nr->bound || !nr->shared)
		return -ENOMEM;
	/* a variable's read_value and assign: one buffer, updated in place */
	for (i = 0; i < ne->nargs; i++)
		if (ne->arg[i].peer >= 0)
			nr->shared[ne->arg[i].peer] = true;
	for (i = 0; i < ne->nargs; i++) {
		if (nr->shared[i])
			continue;
		r = npr_ze.MemAllocHost(nd->ctx, &hd, ne->arg[i].bytes, 4096,
				    &nr->buf[i]);
		if (r) {
			nr->buf[i] = NULL;
			return ZE_FAIL(r, "zeMemAllocHost");
		}
		memset(nr->buf[i], 0, ne->arg[i].bytes);
	}
	for (i = 0; i < ne->nargs; i++)
		if (ne->arg[i].peer >= 0)
			nr->buf[ne->arg[i].peer] = nr->buf[i];
	r = npr_ze.CommandListCreate(nd->ctx, nd->dev, &ld, &nr->list);
	if (r) {
		nr->list = NULL;
		return ZE_FAIL(r, "zeCommandListCreate");
	}
	{
		int err = npr_npu_prof_attach(rq);

		if (err)
			return err;
	}
	/* the driver snapshots the arguments when the execute is appended */
	pthread_mutex_lock(&ne->lock);
	if (ne->init_pending) {
		int err = graph_init(nd, ne);

		if (err) {
			pthread_mutex_unlock(&ne->lock);
			return err;
		}
	}
	for (i = 0; i < ne->nargs && !r; i++) {
		r = npr_npu.graph->pfnSetArgumentValue(ne->graph, i, nr->buf[i]);
		nr->bound[i] = nr->buf[i];
	}
	if (!r)
		r = npr_npu.graph->pfnAppendGraphExecute(nr->list, ne->graph,
						nr->query, NULL, 0, NULL);
	pthread_mutex_unlock(&ne->lock);
	if (r)
		return ZE_FAIL(r, "recording the graph execute");
	r = npr_ze.CommandListClose(nr->list);
	if (r)
		return ZE_FAIL(r, "zeCommandListClose");
	r = npr_ze.FenceCreate(ne->queue, &fd, &nr->fence);
	if (r) {
		nr->fence = NULL;
		return ZE_FAIL(r, "zeFenceCreate");
	}
	return 0;
}

/**
 * npr_npu_part_compile() - compile one static graph of llm.c's
 * @ex: an exec llm.c made, with its graph, ports and model as written.
 *
 * Return: 0 or -errno with npr_err() set.
 */
int npr_npu_part_compile(struct npr_exec *ex)
{
	return npu_compile(ex);
}

/**
 * npr_npu_part_destroy() - free what npr_npu_part_compile() made
 * @ex: the exec.
 */
void npr_npu_part_destroy(struct npr_exec *ex)
{
	if (ex->priv)
		npu_exec_destroy(ex);
}

/**
 * npr_npu_part_request() - a request of one of llm.c's graphs
 * @rq: a request llm.c made: its ports' tensors allocated.
 *
 * Return: 0 or -errno with npr_err() set.
 */
int npr_npu_part_request(struct npr_request *rq)
{
	return npu_request_create(rq);
}

/**
 * npr_npu_part_request_destroy() - free what npr_npu_part_request() made
 * @rq: the request.
 */
void npr_npu_part_request_destroy(struct npr_request *rq)
{
	if (rq->priv)
		npu_request_destroy(rq);
}

/**
 * npr_npu_part_infer() - run one of llm.c's graphs
 * @rq: its request.
 *
 * Return: 0 or -errno with npr_err() set.
 */
int npr_npu_part_infer(struct npr_request *rq)
{
	return npr_npu_infer(rq);
}

const struct npr_backend_ops npr_npu_backend_ops = {
	.api_version = NPR_BACKEND_API_VERSION,
	.name = "npu",
	.caps = NPR_BACKEND_CAP_NPU_PARAMS | NPR_BACKEND_CAP_ONE_STREAM |
		NPR_BACKEND_CAP_AS_WRITTEN | NPR_BACKEND_CAP_F16 |
		NPR_BACKEND_CAP_STATIC_LM,
	.probe = npr_npu_probe,
	.compile = npu_compile,
	.exec_destroy = npu_exec_destroy,
	.request_create = npu_request_create,
	.request_destroy = npu_request_destroy,
	.infer = npr_npu_infer,
	.infer_async = npr_npu_infer_async,
	.query = npu_query,
	.release = npr_npu_release,
	.param = npr_npu_param,
	.param_bytes = npr_npu_param_bytes,
	.native_export = npu_native_export,
	.count = npr_npu_count,
	.bo_alloc = npr_npu_bo_alloc,
	.bo_free = npr_npu_bo_free,
};

#else /* no Level Zero headers at build time */

static int npr_npu_probe(struct npr_device *dev, int index)
{
	return npr_err(-ENODEV,
		       "npu: npuring was built without the Level Zero headers (apt-get install libze-dev, then rebuild)");
}

static int npu_compile(struct npr_exec *ex)
{
	return -ENODEV;
}

static int npu_infer(struct npr_request *rq)
{
	return -ENODEV;
}

const struct npr_backend_ops npr_npu_backend_ops = {
	.api_version = NPR_BACKEND_API_VERSION,
	.name = "npu",
	.caps = NPR_BACKEND_CAP_NPU_PARAMS | NPR_BACKEND_CAP_ONE_STREAM |
		NPR_BACKEND_CAP_AS_WRITTEN | NPR_BACKEND_CAP_F16 |
		NPR_BACKEND_CAP_STATIC_LM,
	.probe = npr_npu_probe,
	.compile = npu_compile,
	.infer = npu_infer,
};

#endif
