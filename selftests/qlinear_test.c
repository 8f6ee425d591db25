// SPDX-License-Identifier: MIT
/*
 * Integer matrix products and ONNX's integer ops on the int8 kernels of
 * the low-precision pass (lib/passes/lowp.c), counted by the profile's
 * NprQConv records:
 *
 * - onnx: the ONNX backend cases of ConvInteger, MatMulInteger,
 *   QLinearConv and QLinearMatMul (libonnx-testdata), their inputs after
 *   the first made initializers (as a model holds its weights; run as
 *   written, the weights are inputs and everything stays f32), against
 *   their golden outputs, exactly.  QLinearConv's case (a weight of 0
 *   with zero point 255: -255) and QLinearMatMul's (u8 weights up to 141
 *   past their zero point; the 3-D case's weights are batched) cannot be
 *   i8 weights, so they stay f32;
 * - gen: small models written here, QDQ MatMul and Gemm (weights per
 *   tensor and per output channel, transposed or not, bias as an f32 Add
 *   or an int32 DQ, Relu, Clip, Q or not) and QLinearMatMul,
 *   QLinearConv, MatMulInteger and ConvInteger (i8 and u8 weights),
 *   against the same model with NPR_LOWP_OFF=1, which computes the
 *   written Q/DQ arithmetic in f32: within one quantization step of the
 *   output where a Q ends the group, bit for bit where the written
 *   arithmetic is integer (no bias, exact f32 sums), within 1e-4 of the
 *   largest output where it stays f32 (the f32 sums round).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "npuring.h"
#include "onnx.pb-c.h"
#include "onnx_util.h"
#include "files.h"

#define MAXIN	4	/* inputs of a model run here */
#define MAXINIT	16	/* graph inputs an ONNX case freezes */

/* a tensor at the API: npuring element type, dims, data */
struct tens {
	__u32 type;
	int rank;
	__s64 dims[NPR_MAX_RANK];
	void *data;
	size_t bytes;
};

/* the nodes of @type that ran in request @req (compiled with profiling) */
static int count_type(int fd, __u32 req, const char *type)
{
	struct npr_profile p = { .size = sizeof(p), .req = req };
	struct npr_profile_rec *recs;
	int err = npr_ioctl(fd, NPR_IOCTL_PROFILE, &p), n = 0;
	__u32 i;

	if (err != -EMSGSIZE)
		return err ? err : 0;
	recs = calloc(p.count, sizeof(*recs));
	if (!recs)
		return -ENOMEM;
	p.recs = (uintptr_t)recs;
	err = npr_ioctl(fd, NPR_IOCTL_PROFILE, &p);
	for (i = 0; !err && i < p.count; i++)
		n += recs[i].status == NPR_PROF_EXECUTED &&
		     !strcmp(recs[i].type, type);
	free(recs);
	return err ? err : n;
}

/* how run() compiles */
enum how {
	INT8,		/* as the device does */
	LOWP_OFF,	/* with NPR_LOWP_OFF=1: the written arithmetic in f32 */
	BLOB,		/* as the device does, then exported and imported
			 * with NPR_LOWP_OFF=1 (which a blob must not heed) */
};

/*
 * Compile model @buf with inputs @in as @how says, infer, output 0 into
 * *@out (data malloc'd); the NprQConv nodes that ran in *@nq, the
 * Transpose nodes in *@nt.
 */
static int run(const void *buf, size_t len, const struct tens *in, int nin,
	       enum how how, struct tens *out, int *nq, int *nt)
{
	struct npr_shape_arg sa[MAXIN];
	struct npr_prop_arg prop;
	struct npr_req_create rc;
	struct npr_tensor_arg ta;
	struct npr_compile co;
	struct npr_infer inf;
	__u32 model = 0;
	int fd, err, i, j;

	memset(out, 0, sizeof(*out));
	fd = npr_open("cpu", 0);
	if (fd < 0)
		return fd;
	err = load_mem(fd, buf, len, &model);
	memset(sa, 0, sizeof(sa));
	for (i = 0; i < nin; i++) {
		sa[i].index = i;
		sa[i].rank = in[i].rank;
		for (j = 0; j < in[i].rank; j++)
			sa[i].dims[j] = in[i].dims[j];
	}
	memset(&prop, 0, sizeof(prop));
	prop.param = NPR_PARAM_ENABLE_PROFILING;
	prop.value = 1;
	npr_prep_compile(&co, model);
	co.shapes = (uintptr_t)sa;
	co.num_shapes = nin;
	co.props = (uintptr_t)&prop;
	co.num_props = 1;
	if (how == LOWP_OFF)
		setenv("NPR_LOWP_OFF", "1", 1);
	if (!err)
		err = npr_ioctl(fd, NPR_IOCTL_COMPILE, &co);
	unsetenv("NPR_LOWP_OFF");
	if (!err && how == BLOB) {
		setenv("NPR_LOWP_OFF", "1", 1);
		err = reimport(fd, &co.exec);
		unsetenv("NPR_LOWP_OFF");
	}
	if (!err) {
		npr_prep_req_create(&rc, co.exec);
		err = npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc);
	}
	for (i = 0; !err && i < nin; i++) {
		npr_prep_tensor(&ta, rc.req, i, 0, in[i].data, in[i].bytes);
		ta.elem_type = in[i].type;
		ta.rank = in[i].rank;
		for (j = 0; j < in[i].rank; j++)
			ta.dims[j] = in[i].dims[j];
		err = npr_ioctl(fd, NPR_IOCTL_SET_TENSOR, &ta);
	}
	if (!err) {
		npr_prep_infer(&inf, rc.req);
		err = npr_ioctl(fd, NPR_IOCTL_INFER, &inf);
	}
	if (!err) {
		npr_prep_tensor(&ta, rc.req, 0, 1, NULL, 0);
		err = npr_ioctl(fd, NPR_IOCTL_GET_TENSOR, &ta);
		err = err == -EMSGSIZE ? 0 : err ? err : -EPROTO;
	}
	if (!err) {
		out->bytes = ta.bytes;
		out->data = malloc(ta.bytes ? ta.bytes : 1);
		err = out->data ? 0 : -ENOMEM;
	}
	if (!err) {
		npr_prep_tensor(&ta, rc.req, 0, 1, out->data, out->bytes);
		err = npr_ioctl(fd, NPR_IOCTL_GET_TENSOR, &ta);
		out->type = ta.elem_type;
		out->rank = (int)ta.rank;
		memcpy(out->dims, ta.dims, sizeof(out->dims));
	}
	if (!err) {
		*nq = count_type(fd, rc.req, "NprQConv");
		*nt = count_type(fd, rc.req, "Transpose");
		err = *nq < 0 ? *nq : *nt < 0 ? *nt : 0;
	}
	if (err)
		fprintf(stderr, "# run: %s\n", npr_last_error());
	npr_close(fd);
	return err;
}

/* ---- the ONNX backend cases -------------------------------------------- */

static const char *testdata_dir(void)
{
	static const char *const dirs[] = {
		"/usr/share/libonnx-testdata/data",
		"/usr/include/onnx/backend/test/data",
	};
	const char *env = getenv("NPR_ONNX_TESTDATA");
	size_t i;

	if (env && *env)
		return env;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (npr_th_isdir(dirs[i]))
			return dirs[i];
	return dirs[0];
}

static const __u32 onnx_types[] = {
	[ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT] = NPR_ELEM_F32,
	[ONNX__TENSOR_PROTO__DATA_TYPE__UINT8] = NPR_ELEM_U8,
	[ONNX__TENSOR_PROTO__DATA_TYPE__INT8] = NPR_ELEM_I8,
	[ONNX__TENSOR_PROTO__DATA_TYPE__INT32] = NPR_ELEM_I32,
};

/* a test data file (raw data only) as a tensor; its proto in *@tp */
static int read_pb(const char *path, struct tens *t, Onnx__TensorProto **tp)
{
	size_t len, i;
	void *buf = npr_test_slurp(path, &len);
	Onnx__TensorProto *p;

	if (!buf)
		return -ENOENT;
	p = onnx__tensor_proto__unpack(NULL, len, buf);
	free(buf);
	if (!p)
		return -EINVAL;
	if (!p->has_raw_data || p->data_type < 0 ||
	    p->data_type >= (int)(sizeof(onnx_types) / sizeof(onnx_types[0])) ||
	    !onnx_types[p->data_type] || p->n_dims > NPR_MAX_RANK) {
		onnx__tensor_proto__free_unpacked(p, NULL);
		return -EOPNOTSUPP;
	}
	t->type = onnx_types[p->data_type];
	t->rank = (int)p->n_dims;
	for (i = 0; i < p->n_dims; i++)
		t->dims[i] = p->dims[i];
	t->data = p->raw_data.data;
	t->bytes = p->raw_data.len;
	*tp = p;
	return 0;
}

/*
 * The model of case @dir with its graph inputs after the first made
 * initializers holding test_data_set_0's values; NULL on failure.
 */
static void *frozen_model(const char *dir, size_t *len)
{
	Onnx__TensorProto *tp[MAXINIT];
	Onnx__ModelProto *m;
	Onnx__GraphProto *g;
	char path[PATH_MAX + 64];
	struct tens t;
	void *buf, *out = NULL;
	size_t n, i, nt = 0;

	snprintf(path, sizeof(path), "%s/model.onnx", dir);
	buf = npr_test_slurp(path, &n);
	m = buf ? onnx__model_proto__unpack(NULL, n, buf) : NULL;
	free(buf);
	if (!m || !m->graph || m->graph->n_input > MAXINIT + 1)
		goto out;
	g = m->graph;
	for (i = 1; i < g->n_input; i++) {
		snprintf(path, sizeof(path), "%s/test_data_set_0/input_%zu.pb",
			 dir, i);
		if (read_pb(path, &t, &tp[nt]))
			goto out;
		free(tp[nt]->name);
		tp[nt]->name = strdup(g->input[i]->name);
		nt++;
	}
	out = pack_with_inits(m, tp, nt, len);
out:
	while (nt)
		onnx__tensor_proto__free_unpacked(tp[--nt], NULL);
	if (m)
		onnx__model_proto__free_unpacked(m, NULL);
	return out;
}

FIXTURE(onnx_case) {
	char dir[PATH_MAX];
};

FIXTURE_VARIANT(onnx_case) {
	const char *name;
	int qconv;	/* NprQConv nodes expected */
};

FIXTURE_VARIANT_ADD(onnx_case, basic_convinteger) {
	"test_basic_convinteger", 1
};
FIXTURE_VARIANT_ADD(onnx_case, convinteger_with_padding) {
	"test_convinteger_with_padding", 1
};
FIXTURE_VARIANT_ADD(onnx_case, convinteger_without_padding) {
	"test_convinteger_without_padding", 1
};
FIXTURE_VARIANT_ADD(onnx_case, matmulinteger) { "test_matmulinteger", 1 };
FIXTURE_VARIANT_ADD(onnx_case, qlinearconv) { "test_qlinearconv", 0 };
FIXTURE_VARIANT_ADD(onnx_case, qlinearmatmul_2D) {
	"test_qlinearmatmul_2D", 0
};
FIXTURE_VARIANT_ADD(onnx_case, qlinearmatmul_3D) {
	"test_qlinearmatmul_3D", 0
};

FIXTURE_SETUP(onnx_case)
{
	snprintf(self->dir, sizeof(self->dir), "%s/node/%s", testdata_dir(),
		 variant->name);
	if (!npr_th_isdir(self->dir))
		SKIP(return, "no ONNX backend case %s (apt-get install libonnx-testdata, or set NPR_ONNX_TESTDATA)",
		     self->dir);
}

FIXTURE_TEARDOWN(onnx_case)
{
}

/* frozen weights: the golden output, bit for bit, on NprQConv or not */
TEST_F(onnx_case, matches_golden)
{
	Onnx__TensorProto *xp = NULL, *yp = NULL;
	struct tens x, y, got;
	char path[PATH_MAX + 64];
	size_t len;
	void *buf;
	int nq = -1, nt, i;

	if (!npr_th_isdir(self->dir))
		return;
	buf = frozen_model(self->dir, &len);
	ASSERT_NONNULL(buf);
	snprintf(path, sizeof(path), "%s/test_data_set_0/input_0.pb",
		 self->dir);
	ASSERT_EQ(read_pb(path, &x, &xp), 0);
	snprintf(path, sizeof(path), "%s/test_data_set_0/output_0.pb",
		 self->dir);
	ASSERT_EQ(read_pb(path, &y, &yp), 0);
	ASSERT_EQ(run(buf, len, &x, 1, INT8, &got, &nq, &nt), 0);
	TH_LOG("%s: %d NprQConv", variant->name, nq);
	EXPECT_EQ(nq, variant->qconv);
	EXPECT_EQ(got.type, y.type);
	ASSERT_EQ(got.rank, y.rank);
	for (i = 0; i < y.rank; i++)
		EXPECT_EQ(got.dims[i], y.dims[i]);
	ASSERT_EQ(got.bytes, y.bytes);
	EXPECT_EQ(memcmp(got.data, y.data, y.bytes), 0);
	free(got.data);
	onnx__tensor_proto__free_unpacked(xp, NULL);
	onnx__tensor_proto__free_unpacked(yp, NULL);
	free(buf);
}

/* ---- generated models ------------------------------------------------ */

#define MB_MAX	32

/* a model under construction: nodes, initializers, attributes, names */
struct mb {
	Onnx__NodeProto node[MB_MAX], *nodep[MB_MAX];
	Onnx__TensorProto init[MB_MAX], *initp[MB_MAX];
	Onnx__AttributeProto attr[MB_MAX], *attrp[MB_MAX];
	char *names[8 * MB_MAX];
	int64_t dims[MB_MAX][NPR_MAX_RANK];
	int nnode, ninit, nattr, nnames;
};

static void mb_free(struct mb *m)
{
	int i;

	for (i = 0; i < m->nnames; i++)
		free(m->names[i]);
	for (i = 0; i < m->ninit; i++)
		free(m->init[i].raw_data.data);
}

/* the names of comma-separated @list, kept in @m; their count */
static int mb_names(struct mb *m, const char *list, char ***out)
{
	char *s = strdup(list), *tok, *save = NULL;
	int n = 0;

	*out = &m->names[m->nnames];
	for (tok = strtok_r(s, ",", &save); tok && m->nnames < 8 * MB_MAX;
	     tok = strtok_r(NULL, ",", &save), n++)
		m->names[m->nnames++] = strdup(tok);
	free(s);
	return n;
}

/* a node @op reading @in, writing @out (comma-separated names) */
static void mb_node(struct mb *m, const char *op, const char *in,
		    const char *out)
{
	Onnx__NodeProto *n = &m->node[m->nnode];

	onnx__node_proto__init(n);
	n->op_type = (char *)op;
	n->n_input = mb_names(m, in, &n->input);
	n->n_output = mb_names(m, out, &n->output);
	m->nodep[m->nnode++] = n;
}

/* an INT attribute (INTS of @cnt when @cnt > 0) of the last node */
static void mb_attr(struct mb *m, const char *key, int64_t *v, int cnt)
{
	Onnx__AttributeProto *a = &m->attr[m->nattr];
	Onnx__NodeProto *n = &m->node[m->nnode - 1];

	onnx__attribute_proto__init(a);
	a->name = (char *)key;
	a->has_type = 1;
	if (cnt > 0) {
		a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
		a->n_ints = cnt;
		a->ints = v;
	} else {
		a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
		a->has_i = 1;
		a->i = *v;
	}
	m->attrp[m->nattr] = a;
	if (!n->n_attribute)
		n->attribute = &m->attrp[m->nattr];
	n->n_attribute++;
	m->nattr++;
}

/* an initializer @name of ONNX type @dt, @rank dims, @bytes of data */
static void mb_init(struct mb *m, const char *name, int dt, int rank,
		    const int64_t *dims, const void *data, size_t bytes)
{
	Onnx__TensorProto *t = &m->init[m->ninit];
	char **nm;

	onnx__tensor_proto__init(t);
	mb_names(m, name, &nm);
	t->name = nm[0];
	t->has_data_type = 1;
	t->data_type = dt;
	t->n_dims = rank;
	if (rank)
		memcpy(m->dims[m->ninit], dims, rank * sizeof(*dims));
	t->dims = m->dims[m->ninit];
	t->has_raw_data = 1;
	t->raw_data.len = bytes;
	t->raw_data.data = malloc(bytes ? bytes : 1);
	if (t->raw_data.data)
		memcpy(t->raw_data.data, data, bytes);
	m->initp[m->ninit++] = t;
}

static void mb_scalar(struct mb *m, const char *name, int dt, float v)
{
	uint8_t u = (uint8_t)v;
	int8_t i = (int8_t)v;
	int32_t w = (int32_t)v;

	if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
		mb_init(m, name, dt, 0, NULL, &v, sizeof(v));
	else if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__UINT8)
		mb_init(m, name, dt, 0, NULL, &u, 1);
	else if (dt == ONNX__TENSOR_PROTO__DATA_TYPE__INT8)
		mb_init(m, name, dt, 0, NULL, &i, 1);
	else
		mb_init(m, name, dt, 0, NULL, &w, sizeof(w));
}

/* the model: x f32 of @xrank dims @xd in, y out, at opset 13 */
static void *mb_pack(struct mb *m, int xrank, const int64_t *xd,
		     size_t *len)
{
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;

	g.name = "qlinear";
	g.n_node = m->nnode;
	g.node = m->nodep;
	g.n_initializer = m->ninit;
	g.initializer = m->initp;
	return pack_xy(&g, 13, xd, xrank, len);
}

enum kind { QDQ_MATMUL, QDQ_GEMM, QL_MATMUL, QL_CONV, INT_MATMUL, INT_CONV };
enum act { NONE, RELU, CLIP };
enum wtype { W_I8, W_U8 /* zero point 128 */, W_U8_WIDE /* off i8 */ };

struct gen {
	enum kind kind;
	int xrank;
	int64_t xd[4];		/* matrices: [..., K]; images: N, C, H, W */
	int64_t n;		/* output channels */
	int64_t k;		/* kernel (images) */
	int64_t pad;
	bool trans_b;		/* Gemm transB */
	bool per_channel;	/* weight scales per output channel */
	int bias;		/* 0, 1 an f32 Add (Gemm: C), 2 an int32 DQ */
	enum act act;
	bool q;			/* a Q -> DQ at the end */
	enum wtype w;
	int qconv;		/* NprQConv nodes expected */
	bool rows;		/* MatMul rows as one-pixel images */
	bool s8x;		/* x i8 (zero point -64), not u8 */
	bool exact;		/* bit for bit */
};

static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* uniform in [lo, hi] */
static float uni(uint32_t *s, float lo, float hi)
{
	return lo + (hi - lo) * (float)(rnd(s) % 100001) / 100000.0f;
}

#define XS	(4.0f / 255)	/* x in [-1, 3]: scale, zero point */
#define XZ	64		/* u8; i8: XZ - 128 */

/*
 * The model of @c; *@ystep the output's quantization step (0 without a
 * Q).  Weights: [K, N] (matrices; [N, K] transposed), [N, C, k, k].
 */
static void *gen_model(const struct gen *c, size_t *len, float *ystep)
{
	int64_t K, N = c->n, wd[4], nd[1] = { c->n }, i, nw;
	int64_t one = 1, zero = 0, axis, pads[4];
	bool conv = c->kind == QL_CONV || c->kind == INT_CONV;
	bool ql = c->kind == QL_MATMUL || c->kind == QL_CONV;
	int I8 = ONNX__TENSOR_PROTO__DATA_TYPE__INT8;
	int U8 = ONNX__TENSOR_PROTO__DATA_TYPE__UINT8;
	int F32 = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	int I32 = ONNX__TENSOR_PROTO__DATA_TYPE__INT32;
	int wdt = c->w == W_I8 ? I8 : U8;
	float ws[64], bf[64], sy;
	float wz = c->w == W_I8 ? 0 : c->w == W_U8 ? 128 : 100;
	int32_t bq[64];
	uint32_t seed = 2463534242u + (uint32_t)(c->kind * 7919 + N * 31 +
						 c->xd[c->xrank - 1]);
	uint8_t *w;
	uint8_t wzv[64];
	struct mb m;
	void *buf;
	char bname[16] = "";

	memset(&m, 0, sizeof(m));
	K = conv ? c->xd[1] * c->k * c->k : c->xd[c->xrank - 1];
	nw = K * N;
	w = N <= 64 ? malloc(nw) : NULL;
	if (!w)
		return NULL;
	for (i = 0; i < nw; i++) {
		int v = (int)(rnd(&seed) % 255) - 127;

		if (c->w == W_U8_WIDE)	/* [0, 255] - 100: up to 155 */
			v = (int)(rnd(&seed) % 256) - 100;
		w[i] = (uint8_t)(int)(v + wz);
	}
	for (i = 0; i < N; i++) {
		ws[i] = c->per_channel ? 0.002f * (float)(1 + i % 5) : 0.003f;
		bf[i] = uni(&seed, -0.5f, 0.5f);
		bq[i] = (int32_t)lrintf(bf[i] / (XS * ws[i]));
		wzv[i] = (uint8_t)wz;
	}
	/* an output scale for about four standard deviations over 127 */
	sy = 4 * sqrtf((float)K) * 1.53f * 73 * ws[0] / 127;
	*ystep = c->q || ql ? sy : 0;
	if (conv) {
		wd[0] = N;
		wd[1] = c->xd[1];
		wd[2] = wd[3] = c->k;
	} else {
		wd[0] = c->trans_b ? N : K;
		wd[1] = c->trans_b ? K : N;
	}
	mb_scalar(&m, "xs", F32, XS);
	if (c->s8x)
		mb_scalar(&m, "xz", I8, XZ - 128);
	else
		mb_scalar(&m, "xz", U8, XZ);
	mb_node(&m, "QuantizeLinear", "x,xs,xz", "xq");
	mb_init(&m, "wq", wdt, conv ? 4 : 2, wd, w, nw);
	free(w);
	mb_init(&m, "ws", F32, c->per_channel ? 1 : 0, nd, ws,
		(c->per_channel ? N : 1) * sizeof(float));
	mb_init(&m, "wz", wdt, c->per_channel ? 1 : 0, nd, wzv,
		c->per_channel ? N : 1);
	mb_scalar(&m, "ys", F32, sy);
	mb_scalar(&m, "yz", U8, 128);
	pads[0] = pads[1] = pads[2] = pads[3] = c->pad;
	switch (c->kind) {
	case QDQ_MATMUL:
	case QDQ_GEMM:
		mb_node(&m, "DequantizeLinear", "xq,xs,xz", "xd");
		mb_node(&m, "DequantizeLinear", "wq,ws,wz", "wd");
		axis = c->trans_b ? 0 : 1;
		if (c->per_channel)
			mb_attr(&m, "axis", &axis, 0);
		if (c->bias == 1) {
			mb_init(&m, "b", F32, 1, nd, bf, N * sizeof(float));
			strcpy(bname, "b");
		} else if (c->bias == 2) {
			float bs[64];

			for (i = 0; i < N; i++)
				bs[i] = XS * ws[i];
			mb_init(&m, "bq", I32, 1, nd, bq, N * sizeof(int32_t));
			mb_init(&m, "bs", F32, c->per_channel ? 1 : 0, nd, bs,
				(c->per_channel ? N : 1) * sizeof(float));
			mb_node(&m, "DequantizeLinear", "bq,bs", "bd");
			axis = 0;
			mb_attr(&m, "axis", &axis, 0);
			strcpy(bname, "bd");
		}
		if (c->kind == QDQ_GEMM) {
			char in[32];

			snprintf(in, sizeof(in), "xd,wd%s%s", *bname ? "," : "",
				 bname);
			mb_node(&m, "Gemm", in, "p");
			mb_attr(&m, "transB", c->trans_b ? &one : &zero, 0);
		} else {
			mb_node(&m, "MatMul", "xd,wd", *bname ? "p0" : "p");
			if (*bname) {
				char in[16];

				snprintf(in, sizeof(in), "p0,%s", bname);
				mb_node(&m, "Add", in, "p");
			}
		}
		break;
	case QL_MATMUL:
		mb_node(&m, "QLinearMatMul", "xq,xs,xz,wq,ws,wz,ys,yz", "yq");
		break;
	case QL_CONV:
		if (c->bias) {
			mb_init(&m, "bq", I32, 1, nd, bq, N * sizeof(int32_t));
			mb_node(&m, "QLinearConv",
				"xq,xs,xz,wq,ws,wz,ys,yz,bq", "yq");
		} else {
			mb_node(&m, "QLinearConv", "xq,xs,xz,wq,ws,wz,ys,yz",
				"yq");
		}
		mb_attr(&m, "pads", pads, 4);
		break;
	case INT_MATMUL:
	case INT_CONV:
		mb_node(&m, conv ? "ConvInteger" : "MatMulInteger",
			"xq,wq,xz,wz", "pi");
		if (conv)
			mb_attr(&m, "pads", pads, 4);
		mb_node(&m, "Cast", "pi", "y");
		axis = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
		mb_attr(&m, "to", &axis, 0);
		break;
	}
	if (c->kind == QDQ_MATMUL || c->kind == QDQ_GEMM) {
		const char *p = "p";

		if (c->act == RELU) {
			mb_node(&m, "Relu", "p", "pa");
			p = "pa";
		} else if (c->act == CLIP) {
			mb_scalar(&m, "lo", F32, 0);
			mb_scalar(&m, "hi", F32, 40 * sy);
			mb_node(&m, "Clip", "p,lo,hi", "pa");
			p = "pa";
		}
		if (c->q) {
			char in[16];

			snprintf(in, sizeof(in), "%s,ys,yz", p);
			mb_node(&m, "QuantizeLinear", in, "yq");
		} else {
			mb_node(&m, "Identity", p, "y");
		}
	}
	if (c->q || ql)
		mb_node(&m, "DequantizeLinear", "yq,ys,yz", "y");
	buf = mb_pack(&m, c->xrank, c->xd, len);
	mb_free(&m);
	return buf;
}

FIXTURE(gen) {
	void *buf;
	size_t len;
	float *x, step;
	struct tens in;
};

FIXTURE_VARIANT(gen) {
	struct gen c;
};

FIXTURE_VARIANT_ADD(gen, qdq_matmul_per_tensor_f32) { {
	.kind = QDQ_MATMUL, .xrank = 2, .xd = { 5, 37 }, .n = 19,
	.qconv = 1, .rows = true,
} };
FIXTURE_VARIANT_ADD(gen, qdq_matmul_per_channel_bias_relu_q) { {
	.kind = QDQ_MATMUL, .xrank = 2, .xd = { 6, 64 }, .n = 24,
	.per_channel = true, .bias = 1, .act = RELU, .q = true, .qconv = 1,
} };
FIXTURE_VARIANT_ADD(gen, qdq_matmul_tall_per_channel_bias_q) { {
	.kind = QDQ_MATMUL, .xrank = 2, .xd = { 300, 48 }, .n = 40,
	.per_channel = true, .bias = 1, .q = true, .qconv = 1,
} };
FIXTURE_VARIANT_ADD(gen, qdq_matmul_s8_x_bias_q) { {
	.kind = QDQ_MATMUL, .xrank = 2, .xd = { 20, 36 }, .n = 11,
	.per_channel = true, .bias = 1, .q = true, .s8x = true, .qconv = 1,
} };
FIXTURE_VARIANT_ADD(gen, qdq_gemm_s8_x_rows) { {
	.kind = QDQ_GEMM, .xrank = 2, .xd = { 1, 36 }, .n = 11,
	.trans_b = true, .q = true, .s8x = true, .qconv = 1, .rows = true,
} };
FIXTURE_VARIANT_ADD(gen, qdq_matmul_3d_per_channel_q) { {
	.kind = QDQ_MATMUL, .xrank = 3, .xd = { 2, 3, 40 }, .n = 8,
	.per_channel = true, .q = true, .qconv = 1,
} };
FIXTURE_VARIANT_ADD(gen, qdq_matmul_bias_clip_f32) { {
	.kind = QDQ_MATMUL, .xrank = 2, .xd = { 4, 16 }, .n = 12,
	.bias = 1, .act = CLIP, .qconv = 1,
} };
FIXTURE_VARIANT_ADD(gen, qdq_gemm_trans_b_per_channel_dq_bias_q) { {
	.kind = QDQ_GEMM, .xrank = 2, .xd = { 3, 50 }, .n = 10,
	.trans_b = true, .per_channel = true, .bias = 2, .q = true,
	.qconv = 1,
} };
FIXTURE_VARIANT_ADD(gen, qdq_gemm_per_tensor_bias_f32) { {
	.kind = QDQ_GEMM, .xrank = 2, .xd = { 7, 33 }, .n = 5, .bias = 1,
	.qconv = 1,
} };
FIXTURE_VARIANT_ADD(gen, qdq_gemm_trans_b_relu_q) { {
	.kind = QDQ_GEMM, .xrank = 2, .xd = { 1, 29 }, .n = 16,
	.trans_b = true, .act = RELU, .q = true, .qconv = 1, .rows = true,
} };
FIXTURE_VARIANT_ADD(gen, qlinear_matmul_i8) { {
	.kind = QL_MATMUL, .xrank = 2, .xd = { 4, 20 }, .n = 6, .qconv = 1,
	.exact = true,
} };
FIXTURE_VARIANT_ADD(gen, qlinear_matmul_u8_per_column) { {
	.kind = QL_MATMUL, .xrank = 2, .xd = { 3, 31 }, .n = 9,
	.per_channel = true, .w = W_U8, .qconv = 1, .exact = true,
} };
FIXTURE_VARIANT_ADD(gen, qlinear_matmul_u8_off_i8) { {
	.kind = QL_MATMUL, .xrank = 2, .xd = { 3, 31 }, .n = 9,
	.w = W_U8_WIDE, .qconv = 0, .exact = true,
} };
FIXTURE_VARIANT_ADD(gen, qlinear_conv_i8_per_channel) { {
	.kind = QL_CONV, .xrank = 4, .xd = { 1, 3, 7, 7 }, .n = 4, .k = 3,
	.pad = 1, .per_channel = true, .qconv = 1, .exact = true,
} };
FIXTURE_VARIANT_ADD(gen, qlinear_conv_s8_x) { {
	.kind = QL_CONV, .xrank = 4, .xd = { 1, 5, 6, 6 }, .n = 7, .k = 3,
	.pad = 1, .per_channel = true, .s8x = true, .qconv = 1,
	.exact = true,
} };
FIXTURE_VARIANT_ADD(gen, qlinear_conv_u8_bias) { {
	.kind = QL_CONV, .xrank = 4, .xd = { 2, 8, 5, 5 }, .n = 6, .k = 1,
	.per_channel = true, .w = W_U8, .bias = 1, .qconv = 1,
} };
FIXTURE_VARIANT_ADD(gen, matmulinteger_i8) { {
	.kind = INT_MATMUL, .xrank = 2, .xd = { 3, 9 }, .n = 5, .qconv = 1,
	.exact = true, .rows = true,
} };
FIXTURE_VARIANT_ADD(gen, matmulinteger_u8_per_column) { {
	.kind = INT_MATMUL, .xrank = 2, .xd = { 5, 12 }, .n = 7,
	.per_channel = true, .w = W_U8, .qconv = 1, .exact = true,
	.rows = true,
} };
/* an i8 x needs two places that a lone MatMul lacks: f32 */
FIXTURE_VARIANT_ADD(gen, matmulinteger_s8_x) { {
	.kind = INT_MATMUL, .xrank = 2, .xd = { 4, 10 }, .n = 3,
	.s8x = true, .qconv = 0, .exact = true,
} };
FIXTURE_VARIANT_ADD(gen, convinteger_u8) { {
	.kind = INT_CONV, .xrank = 4, .xd = { 1, 2, 5, 5 }, .n = 3, .k = 2,
	.w = W_U8, .qconv = 1, .exact = true,
} };

FIXTURE_SETUP(gen)
{
	uint32_t seed = 88172645u;
	size_t i, n = 1;
	int j;

	self->buf = gen_model(&variant->c, &self->len, &self->step);
	ASSERT_NONNULL(self->buf);
	for (j = 0; j < variant->c.xrank; j++) {
		n *= variant->c.xd[j];
		self->in.dims[j] = variant->c.xd[j];
	}
	self->x = malloc(n * sizeof(float));
	ASSERT_NONNULL(self->x);
	for (i = 0; i < n; i++)
		self->x[i] = uni(&seed, -1, 3);
	self->in.type = NPR_ELEM_F32;
	self->in.rank = variant->c.xrank;
	self->in.data = self->x;
	self->in.bytes = n * sizeof(float);
}

FIXTURE_TEARDOWN(gen)
{
	free(self->buf);
	free(self->x);
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return (x > y) - (x < y);
}

/* the number of distinct values of @n floats at @v */
static size_t distinct(const float *v, size_t n)
{
	float *t = malloc(n * sizeof(*t));
	size_t i, d = n > 0;

	if (!t)
		return 0;
	memcpy(t, v, n * sizeof(*t));
	qsort(t, n, sizeof(*t), cmp_float);
	for (i = 1; i < n; i++)
		d += t[i] != t[i - 1];
	free(t);
	return d;
}

/* int8 against NPR_LOWP_OFF=1 (the written arithmetic in f32) */
TEST_F(gen, matches_written_arithmetic)
{
	const struct gen *c = &variant->c;
	struct tens a, b;
	double maxd = 0, maxr = 0, tol;
	size_t i, n, nd, differ = 0;
	int nq, nq_off, nt, nt_off;

	ASSERT_EQ(run(self->buf, self->len, &self->in, 1, INT8, &a, &nq, &nt),
		  0);
	ASSERT_EQ(run(self->buf, self->len, &self->in, 1, LOWP_OFF, &b,
		      &nq_off, &nt_off), 0);
	TH_LOG("%d NprQConv, %d Transpose (%d NprQConv with NPR_LOWP_OFF)",
	       nq, nt, nq_off);
	EXPECT_EQ(nq, c->qconv);
	/* a MatMul's rows are an image's pixels, transposed to and fro */
	if (c->qconv && (c->kind == QDQ_MATMUL || c->kind == QDQ_GEMM ||
			 c->kind == QL_MATMUL || c->kind == INT_MATMUL))
		EXPECT_EQ(nt, c->rows ? 0 : 2);
	EXPECT_EQ(nq_off, 0);
	ASSERT_EQ(a.type, NPR_ELEM_F32);
	ASSERT_EQ(b.type, NPR_ELEM_F32);
	ASSERT_EQ(a.bytes, b.bytes);
	n = a.bytes / sizeof(float);
	ASSERT_GT(n, 0);
	for (i = 0; i < n; i++) {
		double d = fabs((double)((float *)a.data)[i] -
				((float *)b.data)[i]);

		if (!(d <= maxd))
			maxd = d != d ? INFINITY : d;
		if (fabs(((float *)b.data)[i]) > maxr)
			maxr = fabs(((float *)b.data)[i]);
		differ += memcmp((float *)a.data + i, (float *)b.data + i,
				 sizeof(float)) != 0;
	}
	tol = c->exact ? 0 : self->step ? self->step * 1.0001 : 1e-4 * maxr;
	nd = distinct(b.data, n);
	TH_LOG("%zu of %zu outputs (%zu distinct) differ, by %g at most (bound %g)",
	       differ, n, nd, maxd, tol);
	/* not saturated to a few values, so the comparison says something */
	EXPECT_GE(nd, n / 4 < 32 ? n / 4 : 32);
	EXPECT_LE(maxd, tol);
	if (c->exact)
		EXPECT_EQ(differ, 0);
	free(a.data);
	free(b.data);
}

/* a blob carries the int8 nodes and their weights: the same bits */
TEST_F(gen, blob_runs_the_same)
{
	struct tens a, b;
	int nq, nt, nq_blob, nt_blob;

	ASSERT_EQ(run(self->buf, self->len, &self->in, 1, INT8, &a, &nq, &nt),
		  0);
	ASSERT_EQ(run(self->buf, self->len, &self->in, 1, BLOB, &b, &nq_blob,
		      &nt_blob), 0);
	TH_LOG("%d NprQConv, %d Transpose; from the blob %d, %d", nq, nt,
	       nq_blob, nt_blob);
	EXPECT_EQ(nq_blob, variant->c.qconv);
	EXPECT_EQ(nt_blob, nt);
	ASSERT_EQ(a.bytes, b.bytes);
	EXPECT_EQ(memcmp(a.data, b.data, a.bytes), 0);
	free(a.data);
	free(b.data);
}

TEST_HARNESS_MAIN
