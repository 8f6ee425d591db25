// SPDX-License-Identifier: MIT
/*
 * The cpu device's graph fusions (lib/passes/lmfuse.c): attention,
 * LayerNorm, RMSNorm, GELU and SiLU written as primitive ONNX ops become
 * FusedAttention, FusedNorm, Gelu and Swish.  Each small graph here runs
 * twice, fused and with NPR_CPU_NO_FUSE=1 (the primitive ops' kernels are
 * the reference), and the profile's executed op types say whether the
 * fusion fired; the negative cases must not fuse.  The language models of
 * $NPR_SHARED/models/llm fuse every layer.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "onnx_util.h"
#include "lm_util.h"

#define F32	ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define I64	ONNX__TENSOR_PROTO__DATA_TYPE__INT64
#define BOOL	ONNX__TENSOR_PROTO__DATA_TYPE__BOOL

#define TB_NODES	32
#define TB_VALS		12
#define TB_ATTRS	4

/* An ONNX graph under construction; every array outlives the packing. */
struct tb {
	Onnx__ModelProto m;
	Onnx__GraphProto g;
	Onnx__OperatorSetIdProto os, *osp[1];
	Onnx__NodeProto node[TB_NODES], *np[TB_NODES];
	Onnx__AttributeProto attr[TB_NODES][TB_ATTRS];
	Onnx__AttributeProto *ap[TB_NODES][TB_ATTRS];
	char *io[TB_NODES][5];
	char names[TB_NODES][5][32];
	Onnx__TensorProto init[TB_VALS], *ip[TB_VALS];
	Onnx__ValueInfoProto vi[TB_VALS], *vin[TB_VALS], *vout[TB_VALS];
	Onnx__TypeProto tp[TB_VALS];
	Onnx__TypeProto__Tensor tt[TB_VALS];
	Onnx__TensorShapeProto sh[TB_VALS];
	Onnx__TensorShapeProto__Dimension d[TB_VALS][6], *dp[TB_VALS][6];
	int64_t idims[TB_VALS][6];
	int64_t ints[TB_NODES][TB_ATTRS][6];
};

static void tb_init(struct tb *b, int opset)
{
	memset(b, 0, sizeof(*b));
	onnx__model_proto__init(&b->m);
	onnx__graph_proto__init(&b->g);
	onnx__operator_set_id_proto__init(&b->os);
	b->osp[0] = &b->os;
	model_head(&b->m, b->osp, opset);
	b->m.graph = &b->g;
	b->g.name = "fuse";
	b->g.node = b->np;
	b->g.initializer = b->ip;
	b->g.input = b->vin;
	b->g.output = b->vout;
}

/* Node @op: inputs "a,b,c" (an empty name leaves one out), output @out. */
static void tb_node(struct tb *b, const char *op, const char *in,
		    const char *out)
{
	int k = (int)b->g.n_node, n = 0;
	Onnx__NodeProto *nd = &b->node[k];

	onnx__node_proto__init(nd);
	nd->op_type = (char *)op;
	while (*in && n < 4) {
		size_t len = strcspn(in, ",");

		snprintf(b->names[k][n], 32, "%.*s", (int)len, in);
		b->io[k][n] = b->names[k][n];
		n++;
		in += len + (in[len] == ',');
	}
	nd->n_input = n;
	nd->input = b->io[k];
	snprintf(b->names[k][4], 32, "%s", out);
	b->io[k][4] = b->names[k][4];
	nd->n_output = 1;
	nd->output = &b->io[k][4];
	nd->attribute = b->ap[k];
	b->np[k] = nd;
	b->g.n_node++;
}

static Onnx__AttributeProto *tb_attr(struct tb *b, const char *name)
{
	Onnx__NodeProto *nd = &b->node[b->g.n_node - 1];
	int k = (int)b->g.n_node - 1, i = (int)nd->n_attribute++;
	Onnx__AttributeProto *a = &b->attr[k][i];

	onnx__attribute_proto__init(a);
	a->name = (char *)name;
	a->has_type = 1;
	b->ap[k][i] = a;
	return a;
}

static void tb_int(struct tb *b, const char *name, int64_t v)
{
	Onnx__AttributeProto *a = tb_attr(b, name);

	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
	a->has_i = 1;
	a->i = v;
}

static void tb_float(struct tb *b, const char *name, float v)
{
	Onnx__AttributeProto *a = tb_attr(b, name);

	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
	a->has_f = 1;
	a->f = v;
}

static void tb_ints(struct tb *b, const char *name, const int64_t *v, int n)
{
	int k = (int)b->g.n_node - 1;
	Onnx__AttributeProto *a = tb_attr(b, name);
	int64_t *dst = b->ints[k][b->node[k].n_attribute - 1];

	memcpy(dst, v, sizeof(*v) * n);
	a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
	a->n_ints = n;
	a->ints = dst;
}

/* An initializer of @type: @v floats or int64s (int32s for bool). */
static void tb_const(struct tb *b, const char *name, int type,
		     const int64_t *dims, int rank, const void *v)
{
	Onnx__TensorProto *t = &b->init[b->g.n_initializer];
	int64_t cnt = 1;
	int i;

	onnx__tensor_proto__init(t);
	t->name = (char *)name;
	t->has_data_type = 1;
	t->data_type = type;
	t->n_dims = rank;
	t->dims = (int64_t *)dims;
	for (i = 0; i < rank; i++)
		cnt *= dims[i];
	if (type == F32) {
		t->n_float_data = cnt;
		t->float_data = (float *)v;
	} else if (type == I64) {
		t->n_int64_data = cnt;
		t->int64_data = (int64_t *)v;
	} else {
		t->n_int32_data = cnt;
		t->int32_data = (int32_t *)v;
	}
	b->ip[b->g.n_initializer++] = t;
}

static Onnx__ValueInfoProto *tb_vi(struct tb *b, const char *name, int type,
				   const int64_t *dims, int rank)
{
	int k = (int)(b->g.n_input + b->g.n_output), i;

	onnx__value_info_proto__init(&b->vi[k]);
	b->vi[k].name = (char *)name;
	if (rank < 0)
		return &b->vi[k];
	onnx__type_proto__init(&b->tp[k]);
	onnx__type_proto__tensor__init(&b->tt[k]);
	onnx__tensor_shape_proto__init(&b->sh[k]);
	for (i = 0; i < rank; i++) {
		onnx__tensor_shape_proto__dimension__init(&b->d[k][i]);
		b->d[k][i].value_case =
			ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
		b->d[k][i].dim_value = dims[i];
		b->dp[k][i] = &b->d[k][i];
	}
	b->sh[k].n_dim = rank;
	b->sh[k].dim = b->dp[k];
	b->tt[k].has_elem_type = 1;
	b->tt[k].elem_type = type;
	b->tt[k].shape = &b->sh[k];
	b->tp[k].value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	b->tp[k].tensor_type = &b->tt[k];
	b->vi[k].type = &b->tp[k];
	return &b->vi[k];
}

static void tb_input(struct tb *b, const char *name, int type,
		     const int64_t *dims, int rank)
{
	b->vin[b->g.n_input] = tb_vi(b, name, type, dims, rank);
	b->g.n_input++;
}

static void tb_output(struct tb *b, const char *name)
{
	b->vout[b->g.n_output] = tb_vi(b, name, F32, NULL, -1);
	b->g.n_output++;
}

static void *tb_pack(struct tb *b, size_t *len)
{
	void *buf;

	*len = onnx__model_proto__get_packed_size(&b->m);
	buf = malloc(*len);
	if (buf)
		onnx__model_proto__pack(&b->m, buf);
	return buf;
}

/* ---- running a graph fused and unfused -------------------------------- */

#define MAX_OUT	8192

/* What one run gives: output 0, and how many nodes of @type executed. */
struct run {
	float out[MAX_OUT];
	size_t nout;
	int executed;		/* nodes of the type asked for */
	int prim;		/* SoftMax, ReduceMean, Erf, Sigmoid nodes */
};

static float fill_of(int input, size_t i)
{
	/* a fixed pattern in [-2, 2], different per input */
	unsigned int h = (unsigned int)(i * 2654435761u + input * 40503u);

	return ((h >> 8) % 4001) / 1000.0f - 2.0f;
}

static int profile_count(int fd, __u32 req, const char *type,
			 struct run *r)
{
	struct npr_profile p = { .size = sizeof(p), .req = req };
	struct npr_profile_rec *recs;
	__u32 i;
	int err = npr_ioctl(fd, NPR_IOCTL_PROFILE, &p);

	if (err != -EMSGSIZE)
		return err ? err : -EPROTO;
	recs = calloc(p.count, sizeof(*recs));
	if (!recs)
		return -ENOMEM;
	p.recs = (uintptr_t)recs;
	err = npr_ioctl(fd, NPR_IOCTL_PROFILE, &p);
	for (i = 0; !err && i < p.count; i++) {
		if (recs[i].status != NPR_PROF_EXECUTED)
			continue;
		if (!strcmp(recs[i].type, type))
			r->executed++;
		if (!strcmp(recs[i].type, "SoftMax") ||
		    !strcmp(recs[i].type, "ReduceMean") ||
		    !strcmp(recs[i].type, "Erf") ||
		    !strcmp(recs[i].type, "Tanh") ||
		    !strcmp(recs[i].type, "Sigmoid"))
			r->prim++;
	}
	free(recs);
	return err;
}

/*
 * Load @buf, compile it (fused unless @nofuse; through a blob, exported
 * and imported, when @blob) with profiling, fill every
 * input with the pattern (booleans: @mask_of(i) or 1), infer, read output
 * 0 and count the executed nodes of @type.
 */
static int run_graph(const void *buf, size_t len, bool nofuse, bool blob,
		     const char *type, bool (*mask_of)(size_t), struct run *r)
{
	struct npr_prop_arg pa = { .param = NPR_PARAM_ENABLE_PROFILING,
				   .value = 1 };
	struct npr_model_info mi;
	struct npr_compile co;
	struct npr_req_create rc;
	struct npr_infer inf;
	struct npr_tensor_arg ta;
	__u32 model, i;
	int fd, err;

	memset(r, 0, sizeof(*r));
	fd = npr_open("cpu", 0);
	if (fd < 0)
		return fd;
	if (nofuse)
		setenv("NPR_CPU_NO_FUSE", "1", 1);
	err = load_mem(fd, buf, len, &model);
	if (!err) {
		npr_prep_compile(&co, model);
		co.props = (uintptr_t)&pa;
		co.num_props = 1;
		err = npr_ioctl(fd, NPR_IOCTL_COMPILE, &co);
	}
	unsetenv("NPR_CPU_NO_FUSE");
	if (!err && blob)
		err = reimport(fd, &co.exec);
	if (!err) {
		npr_prep_req_create(&rc, co.exec);
		err = npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc);
	}
	if (!err) {
		memset(&mi, 0, sizeof(mi));
		mi.size = sizeof(mi);
		mi.handle = co.exec;
		err = npr_ioctl(fd, NPR_IOCTL_MODEL_INFO, &mi);
	}
	for (i = 0; !err && i < mi.num_inputs; i++) {
		struct npr_port_info pi;
		size_t cnt = 1, k, es;
		void *data;
		int j;

		npr_prep_port_info(&pi, co.exec, i, 0, NULL, 0);
		err = npr_ioctl(fd, NPR_IOCTL_PORT_INFO, &pi);
		if (err)
			break;
		for (j = 0; j < (int)pi.rank; j++)
			cnt *= pi.dims[j];
		es = pi.elem_type == NPR_ELEM_BOOLEAN ? 1 : 4;
		data = calloc(cnt ? cnt : 1, es);
		if (!data) {
			err = -ENOMEM;
			break;
		}
		for (k = 0; k < cnt; k++) {
			if (es == 1)
				((uint8_t *)data)[k] = mask_of ? mask_of(k) : 1;
			else
				((float *)data)[k] = fill_of(i, k);
		}
		npr_prep_tensor(&ta, rc.req, i, 0, data, cnt * es);
		ta.elem_type = pi.elem_type;
		ta.rank = pi.rank;
		for (j = 0; j < (int)pi.rank; j++)
			ta.dims[j] = pi.dims[j];
		err = npr_ioctl(fd, NPR_IOCTL_SET_TENSOR, &ta);
		free(data);
	}
	if (!err) {
		npr_prep_infer(&inf, rc.req);
		err = npr_ioctl(fd, NPR_IOCTL_INFER, &inf);
	}
	if (!err) {
		npr_prep_tensor(&ta, rc.req, 0, 1, r->out, sizeof(r->out));
		err = npr_ioctl(fd, NPR_IOCTL_GET_TENSOR, &ta);
		r->nout = ta.bytes / sizeof(float);
	}
	if (!err && !blob)
		err = profile_count(fd, rc.req, type, r);
	npr_close(fd);
	return err;
}

/*
 * Build nothing more: run @b fused and unfused; the fused run must have
 * @want nodes of @type (and, when it fused, none of the primitive ops
 * that pattern has), the unfused none, and the outputs agree within 1e-5
 * of the largest magnitude (NaN where the other has NaN).
 */
static void check_fusion(struct npr_test *_metadata, struct tb *b,
			 const char *type, int want, bool (*mask_of)(size_t))
{
	static struct run fused, plain;
	double big = 0, worst = 0;
	size_t len, i;
	void *buf = tb_pack(b, &len);

	ASSERT_NONNULL(buf);
	if (getenv("LMFUSE_DUMP")) {
		FILE *f = fopen(getenv("LMFUSE_DUMP"), "wb");

		fwrite(buf, 1, len, f);
		fclose(f);
	}
	if (run_graph(buf, len, false, false, type, mask_of, &fused) ||
	    run_graph(buf, len, true, false, type, mask_of, &plain)) {
		TH_LOG("%s", npr_last_error());
		free(buf);
		ASSERT_TRUE(false);
	}
	free(buf);
	TH_LOG("%s: %d fused (want %d), %d primitive left", type,
	       fused.executed, want, fused.prim);
	ASSERT_EQ(fused.executed, want);
	ASSERT_EQ(plain.executed, 0);
	if (want)
		ASSERT_EQ(fused.prim, 0);
	ASSERT_EQ(fused.nout, plain.nout);
	ASSERT_GT(fused.nout, 0);
	for (i = 0; i < plain.nout; i++)
		if (fabs(plain.out[i]) > big)
			big = fabs(plain.out[i]);
	for (i = 0; i < plain.nout; i++) {
		double e = fabs((double)fused.out[i] - plain.out[i]);

		ASSERT_EQ(isnan(fused.out[i]), isnan(plain.out[i]));
		if (!isnan(e) && e > worst)
			worst = e;
	}
	TH_LOG("max difference %.3g of %.3g", worst, big);
	ASSERT_LE(worst, 1e-5 * (big > 1 ? big : 1));
}

/* ---- attention -------------------------------------------------------- */

/* causal, aligned bottom-right: key j hidden from query l when j > l + S - L */
static int64_t mask_L = 4, mask_S = 6;

static bool causal_hide(size_t i)
{
	int64_t l = (int64_t)i / mask_S % mask_L, j = (int64_t)i % mask_S;

	return j > l + mask_S - mask_L;
}

static bool causal_keep(size_t i)
{
	return !causal_hide(i);
}

enum { SCALE_SCORES, SCALE_Q, SCALE_QK };
enum { MASK_NONE, MASK_WHERE, MASK_WHERE_KEEP, MASK_ADD, MASK_ADD_WIDE };

struct attn_case {
	int64_t H, Hk, L, S, E;
	int scale;		/* where the scale is */
	int mask;
	bool key_t;		/* K given as [.., E, S] */
	int64_t softmax_axis;
	bool probs_out;		/* the softmax also a graph output */
};

static const float sqrt_e8 = 2.8284271f, c_inf = -INFINITY, c_big = -1e9f;
static const float inv_sqrt_e8 = 0.35355339f, fourth_e8 = 0.59460356f;

static void attn_graph(struct tb *b, const struct attn_case *c)
{
	static const int64_t perm[] = { 0, 1, 3, 2 }, ax2[] = { 2 };
	static int64_t one[] = { 1 }, tgt[5], shp[4], mdims[4];
	static const int64_t five[] = { 5 }, four[] = { 4 };
	int64_t qd[4] = { 1, c->H, c->L, c->E };
	int64_t kd[4] = { 1, c->Hk, c->S, c->E };
	const char *k = "K", *v = "V", *q = "Q";

	tb_init(b, 17);
	tb_input(b, "Q", F32, qd, 4);
	if (c->key_t) {
		kd[2] = c->E;
		kd[3] = c->S;
	}
	tb_input(b, "K", F32, kd, 4);
	kd[2] = c->S;
	kd[3] = c->E;
	tb_input(b, "V", F32, kd, 4);
	mask_L = c->L;
	mask_S = c->S;
	if (c->Hk != c->H) {
		/* grouped heads: Unsqueeze, Expand, Reshape of K and V */
		tgt[0] = 1;
		tgt[1] = c->Hk;
		tgt[2] = c->H / c->Hk;
		tgt[3] = c->S;
		tgt[4] = c->E;
		shp[0] = 1;
		shp[1] = c->H;
		shp[2] = c->S;
		shp[3] = c->E;
		tb_const(b, "ax2", I64, one, 1, ax2);
		tb_const(b, "tgt", I64, five, 1, tgt);
		tb_const(b, "shp", I64, four, 1, shp);
		tb_node(b, "Unsqueeze", "K,ax2", "Ku");
		tb_node(b, "Expand", "Ku,tgt", "Ke");
		tb_node(b, "Reshape", "Ke,shp", "Kx");
		tb_node(b, "Unsqueeze", "V,ax2", "Vu");
		tb_node(b, "Expand", "Vu,tgt", "Ve");
		tb_node(b, "Reshape", "Ve,shp", "Vx");
		k = "Kx";
		v = "Vx";
	}
	tb_const(b, "c", F32, NULL, 0, c->scale == SCALE_QK ? &fourth_e8 :
		 c->scale == SCALE_Q ? &inv_sqrt_e8 : &sqrt_e8);
	if (c->scale == SCALE_Q || c->scale == SCALE_QK) {
		tb_node(b, "Mul", "Q,c", "Qs");
		q = "Qs";
	}
	if (c->key_t) {
		tb_node(b, "MatMul", c->scale == SCALE_Q ? "Qs,K" : "Q,K",
			"S0");
	} else {
		char in[16];

		tb_node(b, "Transpose", k, "Kt");
		tb_ints(b, "perm", perm, 4);
		if (c->scale == SCALE_QK) {
			tb_node(b, "Mul", "Kt,c", "Kts");
			snprintf(in, sizeof(in), "%s,Kts", q);
		} else {
			snprintf(in, sizeof(in), "%s,Kt", q);
		}
		tb_node(b, "MatMul", in, "S0");
	}
	if (c->scale == SCALE_SCORES)
		tb_node(b, "Div", "S0,c", "S1");
	else
		tb_node(b, "Identity", "S0", "S1");
	mdims[0] = c->L;
	mdims[1] = c->S;
	switch (c->mask) {
	case MASK_WHERE:
		tb_input(b, "M", BOOL, mdims, 2);
		tb_const(b, "fill", F32, NULL, 0, &c_inf);
		tb_node(b, "Where", "M,fill,S1", "S2");
		break;
	case MASK_WHERE_KEEP:
		tb_input(b, "M", BOOL, mdims, 2);
		tb_const(b, "fill", F32, NULL, 0, &c_big);
		tb_node(b, "Where", "M,S1,fill", "S2");
		break;
	case MASK_ADD:
	case MASK_ADD_WIDE: {
		int64_t md[4] = { c->mask == MASK_ADD ? 1 : 2, 1, c->L, c->S };

		tb_input(b, "A", F32, md, 4);
		tb_node(b, "Add", "S1,A", "S2");
		break;
	}
	default:
		tb_node(b, "Identity", "S1", "S2");
	}
	tb_node(b, "Softmax", "S2", "P");
	tb_int(b, "axis", c->softmax_axis);
	{
		char in[16];

		snprintf(in, sizeof(in), "P,%s", v);
		tb_node(b, "MatMul", in, "O");
	}
	tb_output(b, "O");
	if (c->probs_out)
		tb_output(b, "P");
}

static void attn_check(struct npr_test *_metadata, const struct attn_case *c,
		       int want)
{
	static struct tb b;

	attn_graph(&b, c);
	check_fusion(_metadata, &b, "FusedAttention", want,
		     c->mask == MASK_WHERE_KEEP ? causal_keep : causal_hide);
}

/* MatMul, Div, Where(causal bottom-right, -inf), Softmax, MatMul */
TEST(attention_scaled_scores_where_mask)
{
	struct attn_case c = { 2, 2, 4, 6, 8, SCALE_SCORES, MASK_WHERE,
			       false, -1, false };

	attn_check(_metadata, &c, 1);
}

TEST(attention_scale_on_q_additive_mask)
{
	struct attn_case c = { 2, 2, 4, 6, 8, SCALE_Q, MASK_ADD, false, 3,
			       false };

	attn_check(_metadata, &c, 1);
}

/* fill where the mask is false, a finite fill; scale on Q and K^T */
TEST(attention_where_keeps_and_scale_split)
{
	struct attn_case c = { 2, 2, 3, 5, 8, SCALE_QK, MASK_WHERE_KEEP,
			       false, -1, false };

	attn_check(_metadata, &c, 1);
}

TEST(attention_key_pretransposed_no_mask)
{
	struct attn_case c = { 3, 3, 2, 7, 8, SCALE_SCORES, MASK_NONE, true,
			       -1, false };

	attn_check(_metadata, &c, 1);
}

/* 4 query heads over 2 key/value heads, expanded in the graph */
TEST(attention_grouped_query_heads)
{
	struct attn_case c = { 4, 2, 3, 9, 20, SCALE_SCORES, MASK_WHERE,
			       false, -1, false };

	attn_check(_metadata, &c, 1);
}

/*
 * More keys than a block of the online softmax, more query rows than a
 * task takes, a head size past the vector loops' width.
 */
TEST(attention_long_sequence)
{
	struct attn_case c = { 2, 1, 20, 300, 40, SCALE_SCORES, MASK_ADD,
			       false, -1, false };

	attn_check(_metadata, &c, 1);
}

/* no cached keys and no new ones: zeros, as the MatMuls give */
TEST(attention_over_no_keys)
{
	struct attn_case c = { 2, 2, 4, 0, 8, SCALE_SCORES, MASK_NONE, false,
			       -1, false };

	attn_check(_metadata, &c, 1);
}

TEST(attention_softmax_on_another_axis_does_not_fuse)
{
	struct attn_case c = { 2, 2, 4, 4, 8, SCALE_SCORES, MASK_NONE, false,
			       2, false };

	attn_check(_metadata, &c, 0);
}

/* a mask that widens the scores (batch 2 over batch 1) */
TEST(attention_mask_of_the_wrong_shape_does_not_fuse)
{
	struct attn_case c = { 2, 2, 4, 6, 8, SCALE_SCORES, MASK_ADD_WIDE,
			       false, -1, false };

	attn_check(_metadata, &c, 0);
}

TEST(attention_probabilities_read_elsewhere_do_not_fuse)
{
	struct attn_case c = { 2, 2, 4, 6, 8, SCALE_SCORES, MASK_WHERE, false,
			       -1, true };

	attn_check(_metadata, &c, 0);
}

/* ---- norms ------------------------------------------------------------ */

static float gamma16[16], beta16[16];

static void params16(void)
{
	int i;

	for (i = 0; i < 16; i++) {
		gamma16[i] = 0.5f + i / 16.0f;
		beta16[i] = i / 8.0f - 1.0f;
	}
}

static const int64_t xdims[3] = { 2, 3, 16 }, d16[1] = { 16 };
static const int64_t last[1] = { -1 }, mid[1] = { 1 };
static const float two = 2, one_f = 1, eps5 = 1e-5f;

/* the decomposed LayerNorm as exporters write it */
static void layer_norm_graph(struct tb *b, bool eps_input, bool var_axis1)
{
	params16();
	tb_init(b, 17);
	tb_input(b, "X", F32, xdims, 3);
	tb_const(b, "g", F32, d16, 1, gamma16);
	tb_const(b, "b", F32, d16, 1, beta16);
	tb_const(b, "two", F32, NULL, 0, &two);
	if (eps_input)
		tb_input(b, "eps", F32, NULL, 0);
	else
		tb_const(b, "eps", F32, NULL, 0, &eps5);
	tb_node(b, "ReduceMean", "X", "m");
	tb_ints(b, "axes", last, 1);
	tb_node(b, "Sub", "X,m", "d");
	tb_node(b, "Pow", "d,two", "sq");
	tb_node(b, "ReduceMean", "sq", "var");
	tb_ints(b, "axes", var_axis1 ? mid : last, 1);
	tb_node(b, "Add", "var,eps", "ve");
	tb_node(b, "Sqrt", "ve", "sd");
	tb_node(b, "Div", "d,sd", "y");
	tb_node(b, "Mul", "y,g", "yg");
	tb_node(b, "Add", "yg,b", "O");
	tb_output(b, "O");
}

TEST(layernorm_decomposed)
{
	static struct tb b;

	layer_norm_graph(&b, false, false);
	check_fusion(_metadata, &b, "FusedNorm", 1, NULL);
}

TEST(layernorm_non_constant_epsilon_does_not_fuse)
{
	static struct tb b;

	layer_norm_graph(&b, true, false);
	check_fusion(_metadata, &b, "FusedNorm", 0, NULL);
}

TEST(layernorm_variance_over_another_axis_does_not_fuse)
{
	static struct tb b;

	layer_norm_graph(&b, false, true);
	check_fusion(_metadata, &b, "FusedNorm", 0, NULL);
}

/* the ONNX op, which the frontend writes as the primitive ops */
TEST(layernorm_onnx_op)
{
	static struct tb b;

	params16();
	tb_init(&b, 17);
	tb_input(&b, "X", F32, xdims, 3);
	tb_const(&b, "g", F32, d16, 1, gamma16);
	tb_const(&b, "b", F32, d16, 1, beta16);
	tb_node(&b, "LayerNormalization", "X,g,b", "O");
	tb_float(&b, "epsilon", 1e-5f);
	tb_output(&b, "O");
	check_fusion(_metadata, &b, "FusedNorm", 1, NULL);
}

/* x * (1 / sqrt(mean(x^2) + eps)) * w, as torch exports rsqrt */
TEST(rmsnorm_decomposed)
{
	static struct tb b;

	params16();
	tb_init(&b, 17);
	tb_input(&b, "X", F32, xdims, 3);
	tb_const(&b, "g", F32, d16, 1, gamma16);
	tb_const(&b, "two", F32, NULL, 0, &two);
	tb_const(&b, "one", F32, NULL, 0, &one_f);
	tb_const(&b, "eps", F32, NULL, 0, &eps5);
	tb_node(&b, "Pow", "X,two", "sq");
	tb_node(&b, "ReduceMean", "sq", "ms");
	tb_ints(&b, "axes", last, 1);
	tb_node(&b, "Add", "ms,eps", "ve");
	tb_node(&b, "Sqrt", "ve", "sd");
	tb_node(&b, "Div", "one,sd", "r");
	tb_node(&b, "Mul", "X,r", "y");
	tb_node(&b, "Mul", "y,g", "O");
	tb_output(&b, "O");
	check_fusion(_metadata, &b, "FusedNorm", 1, NULL);
}

/* ---- activations ------------------------------------------------------ */

static const float c_sqrt2 = 1.4142135f, c_half = 0.5f, c_six = 0.6f;
static const float c_k0 = 0.7978845608f, c_k1 = 0.044715f, c_three = 3;

static void gelu_erf_graph(struct tb *b, const float *half)
{
	tb_init(b, 17);
	tb_input(b, "X", F32, xdims, 3);
	tb_const(b, "s2", F32, NULL, 0, &c_sqrt2);
	tb_const(b, "one", F32, NULL, 0, &one_f);
	tb_const(b, "half", F32, NULL, 0, half);
	tb_node(b, "Div", "X,s2", "z");
	tb_node(b, "Erf", "z", "e");
	tb_node(b, "Add", "e,one", "e1");
	tb_node(b, "Mul", "X,e1", "xe");
	tb_node(b, "Mul", "xe,half", "O");
	tb_output(b, "O");
}

TEST(gelu_erf_form)
{
	static struct tb b;

	gelu_erf_graph(&b, &c_half);
	check_fusion(_metadata, &b, "Gelu", 1, NULL);
}

TEST(gelu_with_another_constant_does_not_fuse)
{
	static struct tb b;

	gelu_erf_graph(&b, &c_six);
	check_fusion(_metadata, &b, "Gelu", 0, NULL);
}

/* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
TEST(gelu_tanh_form)
{
	static struct tb b;

	tb_init(&b, 17);
	tb_input(&b, "X", F32, xdims, 3);
	tb_const(&b, "three", F32, NULL, 0, &c_three);
	tb_const(&b, "k1", F32, NULL, 0, &c_k1);
	tb_const(&b, "k0", F32, NULL, 0, &c_k0);
	tb_const(&b, "one", F32, NULL, 0, &one_f);
	tb_const(&b, "half", F32, NULL, 0, &c_half);
	tb_node(&b, "Pow", "X,three", "x3");
	tb_node(&b, "Mul", "k1,x3", "t");
	tb_node(&b, "Add", "X,t", "u");
	tb_node(&b, "Mul", "u,k0", "w");
	tb_node(&b, "Tanh", "w", "th");
	tb_node(&b, "Add", "one,th", "t1");
	tb_node(&b, "Mul", "half,X", "hx");
	tb_node(&b, "Mul", "hx,t1", "O");
	tb_output(&b, "O");
	check_fusion(_metadata, &b, "Gelu", 1, NULL);
}

static const float c_beta = 1.702f;
static const int64_t d111[3] = { 1, 1, 1 };

/* x * Sigmoid(x), of another value, or of x * beta (scalar or [1,1,1]) */
static void silu_graph(struct tb *b, bool other, int beta_rank)
{
	tb_init(b, 17);
	tb_input(b, "X", F32, xdims, 3);
	if (other)
		tb_input(b, "Y", F32, xdims, 3);
	if (beta_rank >= 0) {
		tb_const(b, "beta", F32, d111, beta_rank, &c_beta);
		tb_node(b, "Mul", "beta,X", "bx");
	}
	tb_node(b, "Sigmoid", other ? "Y" : beta_rank >= 0 ? "bx" : "X", "s");
	tb_node(b, "Mul", "X,s", "O");
	tb_output(b, "O");
}

TEST(silu)
{
	static struct tb b;

	silu_graph(&b, false, -1);
	check_fusion(_metadata, &b, "Swish", 1, NULL);
}

/* x * Sigmoid(1.702 x), the sigmoid approximation of GELU */
TEST(swish_with_beta)
{
	static struct tb b;

	silu_graph(&b, false, 0);
	check_fusion(_metadata, &b, "Swish", 1, NULL);
}

/* Swish takes no beta of rank 3: left as it is */
TEST(swish_with_a_beta_of_rank_3_does_not_fuse)
{
	static struct tb b;

	silu_graph(&b, false, 3);
	check_fusion(_metadata, &b, "Swish", 0, NULL);
}

TEST(silu_of_another_value_does_not_fuse)
{
	static struct tb b;

	silu_graph(&b, true, -1);
	check_fusion(_metadata, &b, "Swish", 0, NULL);
}

/* ---- a fused graph through a blob ------------------------------------ */

static float w16x24[16 * 24];

/*
 * LayerNorm, a MatMul by a [16, 24] weight (stored transposed) and GELU,
 * compiled fused, exported and imported: the same output as compiled.
 */
TEST(fused_graph_through_a_blob)
{
	static const int64_t wd[2] = { 16, 24 };
	static struct tb b;
	static struct run direct, blob;
	size_t len, i;
	void *buf;
	int k;

	for (k = 0; k < 16 * 24; k++)
		w16x24[k] = fill_of(7, k) / 8;
	layer_norm_graph(&b, false, false);
	b.node[b.g.n_node - 1].output[0] = "ln";
	tb_const(&b, "w", F32, wd, 2, w16x24);
	tb_const(&b, "s2", F32, NULL, 0, &c_sqrt2);
	tb_const(&b, "one", F32, NULL, 0, &one_f);
	tb_const(&b, "half", F32, NULL, 0, &c_half);
	tb_node(&b, "MatMul", "ln,w", "X2");
	tb_node(&b, "Div", "X2,s2", "z");
	tb_node(&b, "Erf", "z", "e");
	tb_node(&b, "Add", "e,one", "e1");
	tb_node(&b, "Mul", "X2,e1", "xe");
	tb_node(&b, "Mul", "xe,half", "O");
	buf = tb_pack(&b, &len);
	ASSERT_NONNULL(buf);
	ASSERT_EQ(run_graph(buf, len, false, false, "Gelu", NULL, &direct), 0);
	ASSERT_EQ(run_graph(buf, len, false, true, "Gelu", NULL, &blob), 0);
	free(buf);
	ASSERT_EQ(direct.executed, 1);
	ASSERT_EQ(direct.nout, 2 * 3 * 24);
	ASSERT_EQ(blob.nout, direct.nout);
	for (i = 0; i < direct.nout; i++)
		ASSERT_EQ(blob.out[i], direct.out[i]);
}

/* ---- the language models ---------------------------------------------- */

/*
 * One token over 8 cached positions of $NPR_SHARED/models/llm/NAME.onnx:
 * every layer's attention, norms and GELU ran fused, none of the
 * primitive ops they replace.
 */
static void model_counts(struct npr_test *_metadata, const char *name,
			 int layers)
{
	static const char *const types[] = {
		"FusedAttention", "FusedNorm", "Gelu",
		"SoftMax", "ReduceMean", "Erf", "MatMul",
	};
	int want[] = { layers, 2 * layers + 1, layers, 0, 0, 0,
		       6 * layers + 1 };
	int got[7], i;
	char path[4096];

	if (snprintf(path, sizeof(path), "%s/models/llm/%s.onnx",
		     npr_test_shared(), name) >= (int)sizeof(path) ||
	    access(path, R_OK))
		SKIP(return, "no %s", path);
	ASSERT_EQ(lm_count_types(path, 8, types, 7, got), 0);
	for (i = 0; i < 7; i++) {
		TH_LOG("%s: %d %s", name, got[i], types[i]);
		EXPECT_EQ(got[i], want[i]);
	}
}

TEST(tiny_gpt_fuses_every_layer)
{
	model_counts(_metadata, "tiny_gpt", 4);
}

TEST(small_gpt_fuses_every_layer)
{
	model_counts(_metadata, "small_gpt", 6);
}

TEST_HARNESS_MAIN
