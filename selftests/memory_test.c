// SPDX-License-Identifier: MIT
/*
 * No memory that stays behind, and the memory budget.
 *
 * replay_is_flat: a mix of models (the ONNX backend test data's smallest,
 * small ones of $NPR_SHARED, and models built here: the Tile of a
 * constant by itself that folds 158 MB at COMPILE, one whose COMPILE
 * fails over the budget, bytes that are no model) goes through
 * MODEL_LOAD (memory) -> MODEL_INFO, PORT_INFO, QUERY_MODEL -> COMPILE
 * (every other round with a CACHE_DIR) -> EXPORT, IMPORT -> REQ_CREATE ->
 * INFER (every third round through the ring) -> destroy, 1,000 cycles in
 * all.  The bytes in use (mallinfo2():
 * the heaps' plus the mapped blocks; the program runs with glibc's
 * per-thread cache off so that freed blocks count as free) at the end
 * must be those after the warm-up, within REPLAY_SLACK.  Leaking one
 * 16-byte block per cycle fails it.
 *
 * The budget: a model whose activation is larger than
 * NPR_MAX_MODEL_MEMORY_MB fails COMPILE with -EFBIG naming the tensor, and
 * compiles under a higher limit; a shape whose size does not fit in
 * size_t fails the same way; MODEL_INFO's bytes for real models are
 * plausible, and REQ_CREATE allocates no more than request_bytes.
 */
#define HARNESS_TIMEOUT		300

#include <dirent.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "npuring.h"
#include "onnx.pb-c.h"
#include "onnx_util.h"

#define TESTDATA_DEFAULT	"/usr/include/onnx/backend/test/data"
#define ROUNDS			20
#define CYCLES			1000
/*
 * What the end may exceed the base by.  A pool worker that ran no loop
 * since the last compiled model went still holds its scratch buffers
 * (ref/gemm.c frees them when it next wakes), up to a MB, so each is the
 * smallest of four rounds; what is left varies by up to 6 KiB (the
 * threads' own small buffers).  A 16-byte leak per request is 16 KiB
 * over the 700 cycles between base and end, 28 KiB with malloc's headers.
 */
#define REPLAY_SLACK		(12 << 10)

/* ---- models built here -------------------------------------------------- */

/* An ONNX tensor type of @elem with @rank dims. */
struct vi {
	Onnx__ValueInfoProto v;
	Onnx__TypeProto tp;
	Onnx__TypeProto__Tensor tt;
	Onnx__TensorShapeProto sh;
	Onnx__TensorShapeProto__Dimension d[4];
	Onnx__TensorShapeProto__Dimension *dp[4];
};

static void vi_init(struct vi *v, char *name, int elem, const int64_t *dims,
		    int rank)
{
	int i;

	onnx__value_info_proto__init(&v->v);
	onnx__type_proto__init(&v->tp);
	onnx__type_proto__tensor__init(&v->tt);
	onnx__tensor_shape_proto__init(&v->sh);
	for (i = 0; i < rank; i++) {
		onnx__tensor_shape_proto__dimension__init(&v->d[i]);
		v->d[i].value_case =
			ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
		v->d[i].dim_value = dims[i];
		v->dp[i] = &v->d[i];
	}
	v->sh.n_dim = rank;
	v->sh.dim = v->dp;
	v->tt.has_elem_type = 1;
	v->tt.elem_type = elem;
	v->tt.shape = &v->sh;
	v->tp.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	v->tp.tensor_type = &v->tt;
	v->v.name = name;
	v->v.type = &v->tp;
}

static void *pack(Onnx__ModelProto *m, size_t *len)
{
	void *buf;

	*len = onnx__model_proto__get_packed_size(m);
	buf = malloc(*len);
	if (buf)
		onnx__model_proto__pack(m, buf);
	return buf;
}

static void head(Onnx__ModelProto *m, Onnx__GraphProto *g,
		 Onnx__OperatorSetIdProto *os, Onnx__OperatorSetIdProto **osp)
{
	osp[0] = os;
	model_head(m, osp, 13);
	m->graph = g;
	g->name = "g";
}

/*
 * The model: c = Constant int64 {@a, 67, 3, 4}; y = Tile(c, c),
 * declared f32 [1, 4, 9, 16].  COMPILE folds y: [a, 67, 3, 16] int64 (158
 * MB for a = 6145).
 */
static void *tile_model(int64_t a, size_t *len)
{
	Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT;
	Onnx__OperatorSetIdProto *osp[1];
	Onnx__NodeProto n[2] = { ONNX__NODE_PROTO__INIT,
				 ONNX__NODE_PROTO__INIT };
	Onnx__NodeProto *np[2] = { &n[0], &n[1] };
	Onnx__AttributeProto at = ONNX__ATTRIBUTE_PROTO__INIT;
	Onnx__AttributeProto *atp[1] = { &at };
	Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
	Onnx__ValueInfoProto *vop[1];
	static const int64_t od[4] = { 1, 4, 9, 16 };
	static char *c_out[1] = { "c" }, *t_in[2] = { "c", "c" };
	static char *t_out[1] = { "y" };
	int64_t tdims[1] = { 4 }, vals[4] = { a, 67, 3, 4 };
	struct vi y;

	head(&m, &g, &os, osp);
	t.has_data_type = 1;
	t.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
	t.n_dims = 1;
	t.dims = tdims;
	t.n_int64_data = 4;
	t.int64_data = vals;
	at.name = "value";
	at.has_type = 1;
	at.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
	at.t = &t;
	n[0].op_type = "Constant";
	n[0].n_output = 1;
	n[0].output = c_out;
	n[0].n_attribute = 1;
	n[0].attribute = atp;
	n[1].op_type = "Tile";
	n[1].n_input = 2;
	n[1].input = t_in;
	n[1].n_output = 1;
	n[1].output = t_out;
	g.n_node = 2;
	g.node = np;
	vi_init(&y, "y", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, od, 4);
	vop[0] = &y.v;
	g.n_output = 1;
	g.output = vop;
	return pack(&m, len);
}

/*
 * y = Tile(c, r): c a constant f32 [2, 2], r an int64 [2] input, so y's
 * shape comes from the input's values at INFER; y declared without a
 * shape.
 */
static void *dyn_tile_model(size_t *len)
{
	Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT;
	Onnx__OperatorSetIdProto *osp[1];
	Onnx__NodeProto n = ONNX__NODE_PROTO__INIT;
	Onnx__NodeProto *np[1] = { &n };
	Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
	Onnx__TensorProto *tp[1] = { &t };
	Onnx__ValueInfoProto *vip[1], *vop[1];
	Onnx__ValueInfoProto y = ONNX__VALUE_INFO_PROTO__INIT;
	Onnx__TypeProto ytp = ONNX__TYPE_PROTO__INIT;
	Onnx__TypeProto__Tensor ytt = ONNX__TYPE_PROTO__TENSOR__INIT;
	static const int64_t rd[1] = { 2 };
	static char *in[2] = { "c", "r" }, *out[1] = { "y" };
	int64_t cdims[2] = { 2, 2 };
	float cv[4] = { 1, 2, 3, 4 };
	struct vi r;

	head(&m, &g, &os, osp);
	t.name = "c";
	t.has_data_type = 1;
	t.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	t.n_dims = 2;
	t.dims = cdims;
	t.n_float_data = 4;
	t.float_data = cv;
	g.n_initializer = 1;
	g.initializer = tp;
	n.op_type = "Tile";
	n.n_input = 2;
	n.input = in;
	n.n_output = 1;
	n.output = out;
	g.n_node = 1;
	g.node = np;
	vi_init(&r, "r", ONNX__TENSOR_PROTO__DATA_TYPE__INT64, rd, 1);
	vip[0] = &r.v;
	g.n_input = 1;
	g.input = vip;
	ytt.has_elem_type = 1;
	ytt.elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
	ytp.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	ytp.tensor_type = &ytt;
	y.name = "y";
	y.type = &ytp;
	vop[0] = &y;
	g.n_output = 1;
	g.output = vop;
	return pack(&m, len);
}

/* y = Relu(x), x and y of @elem and shape @dims (rank @rank). */
static void *relu_model(int elem, const int64_t *dims, int rank, size_t *len)
{
	Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
	Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
	Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT;
	Onnx__OperatorSetIdProto *osp[1];
	Onnx__NodeProto n = ONNX__NODE_PROTO__INIT;
	Onnx__NodeProto *np[1] = { &n };
	Onnx__ValueInfoProto *vip[1], *vop[1];
	static char *r_in[1] = { "x" }, *r_out[1] = { "act_big" };
	struct vi x, y;

	head(&m, &g, &os, osp);
	n.op_type = "Relu";
	n.name = "relu";
	n.n_input = 1;
	n.input = r_in;
	n.n_output = 1;
	n.output = r_out;
	g.n_node = 1;
	g.node = np;
	vi_init(&x, "x", elem, dims, rank);
	vi_init(&y, "act_big", elem, dims, rank);
	vip[0] = &x.v;
	vop[0] = &y.v;
	g.n_input = 1;
	g.input = vip;
	g.n_output = 1;
	g.output = vop;
	return pack(&m, len);
}

/* ---- the device ----------------------------------------------------------- */

static void destroy(int fd, __u32 h)
{
	struct npr_handle_destroy d;

	npr_prep_destroy(&d, h);
	npr_ioctl(fd, NPR_IOCTL_HANDLE_DESTROY, &d);
}

static void last_error(int fd, char *msg, size_t len)
{
	struct npr_get_error ge;

	memset(&ge, 0, sizeof(ge));
	ge.size = sizeof(ge);
	ge.buf = (uintptr_t)msg;
	ge.len = len;
	msg[0] = 0;
	npr_ioctl(fd, NPR_IOCTL_GET_ERROR, &ge);
}


/* COMPILE with every dynamic dimension 1 and up to two properties. */
static int compile_props(int fd, __u32 model, const struct npr_prop_arg *props,
		   int nprops, __u32 *exec)
{
	struct npr_shape_arg sa[8];
	struct npr_model_info mi;
	struct npr_compile co;
	__u32 i, k;
	int err;

	memset(&mi, 0, sizeof(mi));
	mi.size = sizeof(mi);
	mi.handle = model;
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_INFO, &mi);
	if (err)
		return err;
	memset(sa, 0, sizeof(sa));
	for (i = 0; i < mi.num_inputs && i < 8; i++) {
		struct npr_port_info pi;

		npr_prep_port_info(&pi, model, i, 0, NULL, 0);
		err = npr_ioctl(fd, NPR_IOCTL_PORT_INFO, &pi);
		if (err)
			return err;
		sa[i].index = i;
		sa[i].rank = pi.rank;
		for (k = 0; k < pi.rank; k++)
			sa[i].dims[k] = pi.dims[k] < 0 ? 1 : pi.dims[k];
	}
	npr_prep_compile(&co, model);
	co.shapes = (uintptr_t)sa;
	co.num_shapes = i;
	co.props = (uintptr_t)props;
	co.num_props = nprops;
	err = npr_ioctl(fd, NPR_IOCTL_COMPILE, &co);
	*exec = co.exec;
	return err;
}

static void exec_info(int fd, __u32 exec, struct npr_model_info *mi)
{
	memset(mi, 0, sizeof(*mi));
	mi->size = sizeof(*mi);
	mi->handle = exec;
	npr_ioctl(fd, NPR_IOCTL_MODEL_INFO, mi);
}

/* ---- the replay ------------------------------------------------------------ */

struct item {
	void *buf;
	size_t len;
	char name[64];
};

struct mix {
	struct item *it;
	int n, cap;
};

static void mix_add(struct mix *m, void *buf, size_t len, const char *name)
{
	if (!buf)
		return;
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 64;
		m->it = realloc(m->it, sizeof(*m->it) * m->cap);
		if (!m->it)
			abort();	/* test program: out of memory */
	}
	m->it[m->n].buf = buf;
	m->it[m->n].len = len;
	snprintf(m->it[m->n].name, sizeof(m->it[m->n].name), "%s", name);
	m->n++;
}

static void *slurp(const char *path, size_t max, size_t *len)
{
	FILE *f = fopen(path, "rb");
	void *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 &&
	    (size_t)n <= max && !fseek(f, 0, SEEK_SET)) {
		buf = malloc(n);
		if (buf && fread(buf, 1, n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = n;
	}
	fclose(f);
	return buf;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The first @want test-data models (by name) of at most 1 KiB. */
static void add_testdata(struct mix *m, int want)
{
	const char *env = getenv("NPR_ONNX_TESTDATA");
	char dir[PATH_MAX], path[PATH_MAX + 300];
	char **names = NULL;
	struct dirent *e;
	int n = 0, i, got = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/node",
		 env && *env ? env : TESTDATA_DEFAULT);
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "test_", 5))
			continue;
		names = realloc(names, sizeof(*names) * (n + 1));
		if (!names)
			abort();	/* test program: out of memory */
		names[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_name);
	for (i = 0; i < n; i++) {
		size_t len;
		void *buf;

		snprintf(path, sizeof(path), "%s/%s/model.onnx", dir, names[i]);
		if (got < want && (buf = slurp(path, 1024, &len))) {
			mix_add(m, buf, len, names[i]);
			got++;
		}
		free(names[i]);
	}
	free(names);
}

static void add_shared(struct mix *m, const char *rel)
{
	char path[PATH_MAX + 64];
	size_t len = 0;
	void *buf;

	snprintf(path, sizeof(path), "%s/models/%s", npr_test_shared(), rel);
	buf = slurp(path, 16 << 20, &len);
	mix_add(m, buf, len, rel);
}

/* The heaps' bytes in use and the mapped blocks'. */
static size_t in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/* Inferences that completed through the ring with success. */
static int ring_ok;

/* INFER of @req through the fd's ring, reaped. */
static void ring_infer(int fd, __u32 req)
{
	struct npr_sqe sqe;
	struct npr_cqe cqe;
	struct npr_submit sb;
	struct npr_reap rp;

	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = NPR_OP_INFER;
	sqe.handle = req;
	memset(&sb, 0, sizeof(sb));
	sb.size = sizeof(sb);
	sb.sqes = (uintptr_t)&sqe;
	sb.count = 1;
	if (npr_ioctl(fd, NPR_IOCTL_SUBMIT, &sb) || sb.submitted != 1)
		return;
	memset(&rp, 0, sizeof(rp));
	rp.size = sizeof(rp);
	rp.cqes = (uintptr_t)&cqe;
	rp.max = 1;
	rp.min = 1;
	rp.timeout_ns = 60ull * 1000000000;
	if (!npr_ioctl(fd, NPR_IOCTL_REAP, &rp) && rp.count == 1 && !cqe.res)
		ring_ok++;
}

/* One cycle of item @it on @fd; @round picks the paths taken. */
static void cycle(int fd, const struct item *it, int round,
		  const char *cache)
{
	struct npr_prop_arg props[1];
	struct npr_query_model q;
	struct npr_req_create rc;
	struct npr_export ex;
	struct npr_import im;
	struct npr_infer inf;
	__u32 model, exec, exec2 = 0;
	char names[4096];
	void *blob = NULL;
	int np = 0;

	if (load_mem(fd, it->buf, it->len, &model))
		return;
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.model = model;
	q.names = (uintptr_t)names;
	q.len = sizeof(names);
	npr_ioctl(fd, NPR_IOCTL_QUERY_MODEL, &q);
	memset(props, 0, sizeof(props));
	if (round % 2) {
		props[0].param = NPR_PARAM_CACHE_DIR;
		props[0].value = (uintptr_t)cache;
		np = 1;
	}
	if (compile_props(fd, model, props, np, &exec)) {
		destroy(fd, model);
		return;
	}
	destroy(fd, model);
	if (round % 4 == 2) {
		memset(&ex, 0, sizeof(ex));
		ex.size = sizeof(ex);
		ex.exec = exec;
		npr_ioctl(fd, NPR_IOCTL_EXPORT, &ex);
		blob = ex.bytes ? malloc(ex.bytes) : NULL;
		ex.data = (uintptr_t)blob;
		if (blob && !npr_ioctl(fd, NPR_IOCTL_EXPORT, &ex)) {
			memset(&im, 0, sizeof(im));
			im.size = sizeof(im);
			im.data = (uintptr_t)blob;
			im.bytes = ex.bytes;
			if (!npr_ioctl(fd, NPR_IOCTL_IMPORT, &im))
				exec2 = im.exec;
		}
		free(blob);
	}
	npr_prep_req_create(&rc, exec2 ? exec2 : exec);
	if (!npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc)) {
		if (round % 3 == 1) {
			ring_infer(fd, rc.req);
		} else {
			npr_prep_infer(&inf, rc.req);
			npr_ioctl(fd, NPR_IOCTL_INFER, &inf);
		}
		destroy(fd, rc.req);
	}
	if (exec2)
		destroy(fd, exec2);
	destroy(fd, exec);
}

TEST(replay_is_flat)
{
	char cache[] = "/tmp/npr-memory-test-XXXXXX";
	size_t base = 0, end = 0, now, len = 0;
	struct mix m = { 0 };
	void *buf;
	int fd, r, i, rounds, done = 0;
	/* bytes that are no model: MODEL_LOAD fails */
	static const char junk[] = "\x08\x07\x12\x04junk";
	static const int64_t big[4] = { 1, 256, 512, 512 };	/* 256 MiB */

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	SKIP(return, "the sanitizer's allocator does not answer mallinfo2()");
#endif
	add_testdata(&m, 40);
	if (npr_test_shared_ok()) {
		add_shared(&m, "onnx/squeezenet1_1.onnx");
		add_shared(&m, "onnx-int8/squeezenet1_1.qdq.onnx");
	}
	buf = tile_model(6145, &len);
	mix_add(&m, buf, len, "tile (folds 158 MB)");
	buf = tile_model(61, &len);
	mix_add(&m, buf, len, "tile (folds 1.5 MB)");
	/* over the 256 MiB budget: COMPILE fails with -EFBIG */
	buf = relu_model(ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, big, 4, &len);
	mix_add(&m, buf, len, "relu 256 MiB");
	mix_add(&m, malloc(sizeof(junk)), sizeof(junk), "junk");
	memcpy(m.it[m.n - 1].buf, junk, sizeof(junk));
	ASSERT_GE(m.n, 10);
	rounds = (CYCLES + m.n - 1) / m.n;
	TH_LOG("%d models, %d rounds", m.n, rounds);
	ASSERT_NONNULL(mkdtemp(cache));
	fd = npr_open("cpu", 0);
	ASSERT_GE(fd, 0);
	{
		struct npr_param p;

		memset(&p, 0, sizeof(p));
		p.size = sizeof(p);
		p.param = NPR_PARAM_NPR_MAX_MODEL_MEMORY_MB;
		p.value = 256;
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_SET_PARAM, &p), 0);
	}
	{
		struct npr_ring_setup rs;

		memset(&rs, 0, sizeof(rs));
		rs.size = sizeof(rs);
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_RING_SETUP, &rs), 0);
	}
	for (r = 0; r < rounds; r++) {
		struct mallinfo2 mi;

		for (i = 0; i < m.n; i++, done++)
			cycle(fd, &m.it[i], r, cache);
		now = in_use();
		mi = mallinfo2();
		TH_LOG("round %d: %zu bytes in use (%zu mapped)", r, now,
		       mi.hblkhd);
		/* rounds 2-5 are the base, the last four the end */
		if (r >= 2 && r < 6 && (!base || now < base))
			base = now;
		if (r >= rounds - 4 && (!end || now < end))
			end = now;
	}
	TH_LOG("%d cycles; in use after the warm-up: %zu, at the end: %zu",
	       done, base, end);
	TH_LOG("%d inferences through the ring", ring_ok);
	EXPECT_GE(done, CYCLES);
	EXPECT_GT(ring_ok, 100);
	EXPECT_LE(end, base + REPLAY_SLACK);
	npr_close(fd);
	for (i = 0; i < m.n; i++)
		free(m.it[i].buf);
	free(m.it);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", cache);
		EXPECT_EQ(system(cmd), 0);
	}
}

/* ---- the budget -------------------------------------------------------------- */

TEST(activation_over_the_limit_is_efbig)
{
	static const int64_t big[4] = { 1, 64, 512, 512 };	/* 64 MiB */
	struct npr_prop_arg p = { .param = NPR_PARAM_NPR_MAX_MODEL_MEMORY_MB };
	struct npr_model_info mi;
	__u32 model, exec;
	char msg[1024];
	size_t len;
	void *buf;
	int fd, err;

	buf = relu_model(ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, big, 4, &len);
	ASSERT_NONNULL(buf);
	fd = npr_open("cpu", 0);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(load_mem(fd, buf, len, &model), 0);
	p.value = 100;	/* one tensor fits, a request not */
	err = compile_props(fd, model, &p, 1, &exec);
	last_error(fd, msg, sizeof(msg));
	TH_LOG("%s", msg);
	ASSERT_EQ(err, -EFBIG);
	EXPECT_NONNULL(strstr(msg, "NPR_MAX_MODEL_MEMORY_MB (100 MiB)"));
	EXPECT_NONNULL(strstr(msg, "[1,64,512,512]"));
	EXPECT_NONNULL(strstr(msg, "67108864 bytes"));
	p.value = 32;	/* one tensor alone is over it */
	err = compile_props(fd, model, &p, 1, &exec);
	last_error(fd, msg, sizeof(msg));
	TH_LOG("%s", msg);
	ASSERT_EQ(err, -EFBIG);
	EXPECT_TRUE(strstr(msg, "tensor act_big") || strstr(msg, "tensor x"));
	EXPECT_NONNULL(strstr(msg, "NPR_MAX_MODEL_MEMORY_MB (32 MiB)"));
	/* a higher limit compiles it, and says what a request needs */
	p.value = 400;
	err = compile_props(fd, model, &p, 1, &exec);
	last_error(fd, msg, sizeof(msg));
	TH_LOG("%s", msg);
	ASSERT_EQ(err, 0);
	exec_info(fd, exec, &mi);
	TH_LOG("exec %llu bytes, request %llu bytes",
	       (unsigned long long)mi.exec_bytes,
	       (unsigned long long)mi.request_bytes);
	/* the ports, and the input and output in the arena */
	EXPECT_GE(mi.request_bytes, 4ull << 26);
	EXPECT_LE(mi.request_bytes, (4ull << 26) + (16 << 20));
	npr_close(fd);
	free(buf);
}

TEST(device_limit_applies_and_zero_is_none)
{
	static const int64_t big[4] = { 1, 64, 512, 512 };
	struct npr_param p;
	__u32 model, exec;
	size_t len;
	void *buf;
	int fd;

	buf = relu_model(ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, big, 4, &len);
	ASSERT_NONNULL(buf);
	fd = npr_open("cpu", 0);
	ASSERT_GE(fd, 0);
	/* the default: half of the machine's memory, at least 1 MiB */
	memset(&p, 0, sizeof(p));
	p.size = sizeof(p);
	p.param = NPR_PARAM_NPR_MAX_MODEL_MEMORY_MB;
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_GET_PARAM, &p), 0);
	TH_LOG("default limit %llu MiB", (unsigned long long)p.value);
	EXPECT_GE(p.value, 1);
	EXPECT_LE(p.value, (__u64)sysconf(_SC_PHYS_PAGES) *
			   sysconf(_SC_PAGESIZE) / 2 >> 20);
	ASSERT_EQ(load_mem(fd, buf, len, &model), 0);
	p.value = 8;
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_SET_PARAM, &p), 0);
	EXPECT_EQ(compile_props(fd, model, NULL, 0, &exec), -EFBIG);
	p.value = 0;
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_SET_PARAM, &p), 0);
	EXPECT_EQ(compile_props(fd, model, NULL, 0, &exec), 0);
	npr_close(fd);
	free(buf);
}

/*
 * A shape read from an input's values at INFER is held to the same
 * budget: a Tile count that asks for 256 MiB under a 64 MiB limit fails
 * INFER with -EFBIG naming the node, the request keeps working, and the
 * same model runs under a limit that allows it.
 */
static int tile_infer(int fd, __u32 req, int64_t a, int64_t b, float *y,
		      size_t ybytes)
{
	struct npr_tensor_arg ta;
	struct npr_infer inf;
	int64_t r[2] = { a, b };
	int err;

	npr_prep_tensor(&ta, req, 0, 0, r, sizeof(r));
	ta.elem_type = NPR_ELEM_I64;
	ta.rank = 1;
	ta.dims[0] = 2;
	err = npr_ioctl(fd, NPR_IOCTL_SET_TENSOR, &ta);
	if (err)
		return err;
	npr_prep_infer(&inf, req);
	err = npr_ioctl(fd, NPR_IOCTL_INFER, &inf);
	if (err || !y)
		return err;
	npr_prep_tensor(&ta, req, 0, 1, y, ybytes);
	return npr_ioctl(fd, NPR_IOCTL_GET_TENSOR, &ta);
}

TEST(shape_from_input_values_is_held_to_the_budget)
{
	struct npr_prop_arg p = { .param = NPR_PARAM_NPR_MAX_MODEL_MEMORY_MB };
	struct npr_req_create rc;
	__u32 model, exec;
	char msg[1024];
	float y[2 * 2 * 1 * 8];
	size_t len;
	void *buf;
	int fd, err, i;

	buf = dyn_tile_model(&len);
	ASSERT_NONNULL(buf);
	fd = npr_open("cpu", 0);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(load_mem(fd, buf, len, &model), 0);
	p.value = 64;
	ASSERT_EQ(compile_props(fd, model, &p, 1, &exec), 0);
	npr_prep_req_create(&rc, exec);
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
	/* [2, 2] tiled [1, 4]: [2, 8], 64 bytes */
	ASSERT_EQ(tile_infer(fd, rc.req, 1, 4, y, 16 * sizeof(float)), 0);
	for (i = 0; i < 16; i++)
		EXPECT_EQ(y[i], (float)((i / 8) * 2 + i % 2 + 1));
	/* [8192, 8192] f32: 256 MiB */
	err = tile_infer(fd, rc.req, 4096, 4096, NULL, 0);
	last_error(fd, msg, sizeof(msg));
	TH_LOG("%s", msg);
	ASSERT_EQ(err, -EFBIG);
	EXPECT_NONNULL(strstr(msg, "Tile"));
	EXPECT_NONNULL(strstr(msg, "268435456 bytes"));
	EXPECT_NONNULL(strstr(msg, "NPR_MAX_MODEL_MEMORY_MB (64 MiB)"));
	/* the request still works */
	ASSERT_EQ(tile_infer(fd, rc.req, 1, 4, y, 16 * sizeof(float)), 0);
	EXPECT_EQ(y[15], 4.0f);
	destroy(fd, rc.req);
	destroy(fd, exec);
	/*
	 * under 1 GiB the same count runs: 256 MiB for the step's value and
	 * 256 MiB for the output the caller reads, both counted
	 */
	p.value = 1024;
	ASSERT_EQ(compile_props(fd, model, &p, 1, &exec), 0);
	npr_prep_req_create(&rc, exec);
	ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
	err = tile_infer(fd, rc.req, 4096, 4096, NULL, 0);
	last_error(fd, msg, sizeof(msg));
	TH_LOG("%s", msg);
	EXPECT_EQ(err, 0);
	destroy(fd, rc.req);
	destroy(fd, exec);
	destroy(fd, model);
	npr_close(fd);
	free(buf);
}

TEST(size_past_size_t_is_efbig)
{
	/* 2^61 f64 elements: 2^64 bytes */
	static const int64_t huge[3] = { 1 << 20, 1 << 20, 1 << 21 };
	__u32 model, exec;
	char msg[1024];
	size_t len;
	void *buf;
	int fd, err;

	buf = relu_model(ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, huge, 3, &len);
	ASSERT_NONNULL(buf);
	fd = npr_open("cpu", 0);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(load_mem(fd, buf, len, &model), 0);
	err = compile_props(fd, model, NULL, 0, &exec);
	last_error(fd, msg, sizeof(msg));
	TH_LOG("%s", msg);
	ASSERT_EQ(err, -EFBIG);
	EXPECT_NONNULL(strstr(msg, "does not fit"));
	npr_close(fd);
	free(buf);
}

/*
 * A real model's bytes are plausible, and REQ_CREATE allocates no more
 * than request_bytes (nor much less: the count is not padded).
 */
TEST(request_bytes_hold_for_real_models)
{
	static const char *const rel[] = {
		"ir/squeezenet1.1/FP16/squeezenet1.1.xml",
		"ir/face-detection-retail-0004/FP32-v10/face-detection-retail-0004.xml",
		"ir-small/add_abc.xml",
		"ir-stateful/summator_v10.xml",
	};
	char path[PATH_MAX + 64];
	unsigned int i;
	int fd;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	SKIP(return, "the sanitizer's allocator does not answer mallinfo2()");
#endif
	if (!npr_test_shared_ok())
		SKIP(return, "no shared data at %s (set NPR_SHARED)",
		     npr_test_shared());
	fd = npr_open("cpu", 0);
	ASSERT_GE(fd, 0);
	for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		struct npr_model_load a;
		struct npr_model_info mi;
		struct npr_req_create rc;
		size_t before, after;
		__u32 exec;

		snprintf(path, sizeof(path), "%s/models/%s",
			 npr_test_shared(), rel[i]);
		npr_prep_model_load(&a, path, NULL);
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &a), 0);
		ASSERT_EQ(compile_props(fd, a.handle, NULL, 0, &exec), 0);
		destroy(fd, a.handle);
		exec_info(fd, exec, &mi);
		before = in_use();
		npr_prep_req_create(&rc, exec);
		ASSERT_EQ(npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc), 0);
		after = in_use();
		TH_LOG("%s: exec %llu bytes, request %llu, REQ_CREATE took %zu",
		       rel[i], (unsigned long long)mi.exec_bytes,
		       (unsigned long long)mi.request_bytes, after - before);
		EXPECT_LE(after - before, mi.request_bytes);
		EXPECT_LE(mi.request_bytes, after - before + (16 << 10) +
					    (after - before) / 50);
		if (!i) {
			/* squeezenet 1.1: 1.2 M weights, packed as f32 */
			EXPECT_GE(mi.exec_bytes, 4 << 20);
			EXPECT_LE(mi.exec_bytes, 32 << 20);
			EXPECT_GE(mi.request_bytes, 1 << 20);
			EXPECT_LE(mi.request_bytes, 32 << 20);
		}
		destroy(fd, rc.req);
		destroy(fd, exec);
	}
	npr_close(fd);
}

/*
 * glibc's per-thread cache keeps freed blocks counted as in use: run
 * without it so that mallinfo2() is exact.
 */
int main(int argc, char **argv)
{
	const char *t = getenv("GLIBC_TUNABLES");
	char buf[1024];

	if (!t || !strstr(t, "glibc.malloc.tcache_count=0")) {
		snprintf(buf, sizeof(buf), "%s%sglibc.malloc.tcache_count=0",
			 t ? t : "", t && *t ? ":" : "");
		if (!setenv("GLIBC_TUNABLES", buf, 1))
			execv("/proc/self/exe", argv);
	}
	return npr_th_main(argc, argv);
}
