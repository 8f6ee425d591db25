// SPDX-License-Identifier: MIT
/*
 * ONNX backend conformance: the test cases of Debian's libonnx-testdata
 * (node/, simple/, pytorch-converted/, pytorch-operator/), each a
 * model.onnx with test_data_set_N/input_K.pb and output_K.pb, run through
 * the public API on the CPU device and compared with the golden outputs at
 * the tolerances of ONNX's own backend test runner (rtol 1e-3, atol 1e-7,
 * NaN equal to NaN; integers and booleans exactly).
 *
 * Every case prints one diagnostic line, "# ok NAME", "# FAIL NAME: why"
 * or "# expected-fail NAME: why".  A case that does not pass must be
 * listed in selftests/conformance.expect with a one-line reason; the test
 * of a directory fails when an unlisted case fails (a regression) or a
 * listed one passes (take it off the list).  The last test prints the
 * totals, over the cases onnxruntime 1.30 passes
 * ($NPR_SHARED/models/onnx-conformance/ort-1.30-pass.txt) and over all.
 *
 * Environment: NPR_ONNX_TESTDATA replaces the test data directory,
 * NPR_CONFORMANCE_EXPECT the expectations file (default: beside the
 * binary's source, see expect_path()), NPR_CONFORMANCE_FILTER runs only
 * the cases whose name contains it (and then nothing fails on the list).
 */
#define HARNESS_TIMEOUT		1200

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "harness.h"
#include "npuring.h"
#include "onnx.pb-c.h"
#include "onnx_util.h"
#include "files.h"

#define TESTDATA_DEFAULT	"/usr/include/onnx/backend/test/data"
#define CASE_TIMEOUT		60	/* seconds per case */
#define MAX_PORTS		16
#define RTOL			1e-3
#define ATOL			1e-7

/* ---- files ------------------------------------------------------------- */

/* snprintf() into a path buffer; a path that does not fit is cut short. */
static void __attribute__((format(printf, 3, 4)))
pathf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

static const char *testdata_dir(void)
{
	const char *env = getenv("NPR_ONNX_TESTDATA");

	return env && *env ? env : TESTDATA_DEFAULT;
}

/* The expectations file: $NPR_CONFORMANCE_EXPECT, else beside the binary. */
static const char *expect_path(void)
{
	static char path[PATH_MAX];
	const char *env = getenv("NPR_CONFORMANCE_EXPECT");
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && *env)
		return env;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return "selftests/conformance.expect";
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	pathf(path, sizeof(path), "%s/conformance.expect", exe);
	return path;
}

/* ---- name lists ---------------------------------------------------------- */

struct name_list {
	char **name;
	char **why;
	size_t n, cap;
};

static void list_add(struct name_list *l, const char *name, const char *why)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 256;
		l->name = realloc(l->name, l->cap * sizeof(char *));
		l->why = realloc(l->why, l->cap * sizeof(char *));
		if (!l->name || !l->why)
			abort();
	}
	l->name[l->n] = strdup(name);
	l->why[l->n] = strdup(why ? why : "");
	l->n++;
}

static const char *list_find(const struct name_list *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->name[i], name))
			return l->why[i];
	return NULL;
}

static void list_free(struct name_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->name[i]);
		free(l->why[i]);
	}
	free(l->name);
	free(l->why);
	memset(l, 0, sizeof(*l));
}

/*
 * Lines "dir/case" or "dir/case: reason"; '#' starts a comment line.
 * Return: false if the file cannot be read.
 */
static bool list_read(struct name_list *l, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[1024];

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + strcspn(line, "\r\n"), *colon;

		*p = 0;
		if (!line[0] || line[0] == '#')
			continue;
		colon = strstr(line, ": ");
		if (colon) {
			*colon = 0;
			list_add(l, line, colon + 2);
		} else {
			list_add(l, line, NULL);
		}
	}
	fclose(f);
	return true;
}

/* ---- TensorProto ------------------------------------------------------- */

struct tensor {
	unsigned int type;	/* enum npr_elem_type */
	int rank;
	int64_t dims[NPR_MAX_RANK];
	size_t count;
	void *data;
	size_t bytes;
};

static int elem_size(unsigned int t)
{
	switch (t) {
	case NPR_ELEM_F64: case NPR_ELEM_I64: case NPR_ELEM_U64:
		return 8;
	case NPR_ELEM_F32: case NPR_ELEM_I32: case NPR_ELEM_U32:
		return 4;
	case NPR_ELEM_F16: case NPR_ELEM_BF16: case NPR_ELEM_I16:
	case NPR_ELEM_U16:
		return 2;
	case NPR_ELEM_I8: case NPR_ELEM_U8: case NPR_ELEM_BOOLEAN:
		return 1;
	}
	return 0;
}

static unsigned int onnx_type(int32_t dt)
{
	switch (dt) {
	case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: return NPR_ELEM_F32;
	case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8: return NPR_ELEM_U8;
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: return NPR_ELEM_I8;
	case ONNX__TENSOR_PROTO__DATA_TYPE__UINT16: return NPR_ELEM_U16;
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT16: return NPR_ELEM_I16;
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: return NPR_ELEM_I32;
	case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: return NPR_ELEM_I64;
	case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: return NPR_ELEM_BOOLEAN;
	case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: return NPR_ELEM_F16;
	case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: return NPR_ELEM_F64;
	case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32: return NPR_ELEM_U32;
	case ONNX__TENSOR_PROTO__DATA_TYPE__UINT64: return NPR_ELEM_U64;
	case ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16: return NPR_ELEM_BF16;
	}
	return NPR_ELEM_UNDEFINED;
}

/* Store integer @v as element @i of @t (typed-field decoding). */
static void put_int(struct tensor *t, size_t i, int64_t v)
{
	char *p = (char *)t->data + i * elem_size(t->type);

	switch (elem_size(t->type)) {
	case 1: { int8_t x = (int8_t)v; memcpy(p, &x, 1); break; }
	case 2: { int16_t x = (int16_t)v; memcpy(p, &x, 2); break; }
	case 4: { int32_t x = (int32_t)v; memcpy(p, &x, 4); break; }
	default: memcpy(p, &v, 8); break;
	}
}

/* Decode a TensorProto file; on failure a reason in @why. */
static bool tensor_read(const char *path, struct tensor *t, char *why,
			size_t wlen)
{
	Onnx__TensorProto *tp;
	size_t len, i, n;
	void *buf;
	int es;

	memset(t, 0, sizeof(*t));
	buf = npr_test_slurp(path, &len);
	if (!buf) {
		snprintf(why, wlen, "cannot read %s", strrchr(path, '/') + 1);
		return false;
	}
	tp = onnx__tensor_proto__unpack(NULL, len, buf);
	free(buf);
	if (!tp) {
		snprintf(why, wlen, "cannot decode a TensorProto");
		return false;
	}
	t->type = onnx_type(tp->data_type);
	es = elem_size(t->type);
	if (!es || tp->n_dims > NPR_MAX_RANK) {
		snprintf(why, wlen, "test data of ONNX type %d, rank %zu",
			 (int)tp->data_type, tp->n_dims);
		goto bad;
	}
	t->rank = (int)tp->n_dims;
	t->count = 1;
	for (i = 0; i < tp->n_dims; i++) {
		t->dims[i] = tp->dims[i];
		t->count *= (size_t)tp->dims[i];
	}
	t->bytes = t->count * es;
	t->data = calloc(1, t->bytes ? t->bytes : 1);
	if (!t->data)
		goto bad;
	n = t->count;
	if (tp->has_raw_data) {
		if (tp->raw_data.len != t->bytes) {
			snprintf(why, wlen, "raw_data of %zu bytes for %zu",
				 tp->raw_data.len, t->bytes);
			goto bad;
		}
		if (t->bytes)	/* an empty tensor's raw_data may be NULL */
			memcpy(t->data, tp->raw_data.data, t->bytes);
	} else if (t->type == NPR_ELEM_F32 && tp->n_float_data == n) {
		memcpy(t->data, tp->float_data, t->bytes);
	} else if (t->type == NPR_ELEM_F64 && tp->n_double_data == n) {
		memcpy(t->data, tp->double_data, t->bytes);
	} else if (t->type == NPR_ELEM_I64 && tp->n_int64_data == n) {
		memcpy(t->data, tp->int64_data, t->bytes);
	} else if ((t->type == NPR_ELEM_U32 || t->type == NPR_ELEM_U64) &&
		   tp->n_uint64_data == n) {
		for (i = 0; i < n; i++)
			put_int(t, i, (int64_t)tp->uint64_data[i]);
	} else if (tp->n_int32_data == n && es <= 4) {
		for (i = 0; i < n; i++)
			put_int(t, i, tp->int32_data[i]);
	} else if (n) {
		snprintf(why, wlen, "TensorProto without data for %zu values",
			 n);
		goto bad;
	}
	onnx__tensor_proto__free_unpacked(tp, NULL);
	return true;
bad:
	onnx__tensor_proto__free_unpacked(tp, NULL);
	free(t->data);
	t->data = NULL;
	if (!why[0])
		snprintf(why, wlen, "out of memory");
	return false;
}

/* ---- comparing --------------------------------------------------------- */

static float half_to_float(uint16_t h)
{
	uint32_t s = (h >> 15) & 1, e = (h >> 10) & 31, m = h & 1023;
	float v;

	if (e == 0)
		v = ldexpf((float)m, -24);
	else if (e == 31)
		v = m ? NAN : INFINITY;
	else
		v = ldexpf((float)(m | 1024), (int)e - 25);
	return s ? -v : v;
}

static double get_double(unsigned int type, const void *data, size_t i)
{
	const char *p = data;

	switch (type) {
	case NPR_ELEM_F32: { float v; memcpy(&v, p + 4 * i, 4); return v; }
	case NPR_ELEM_F64: { double v; memcpy(&v, p + 8 * i, 8); return v; }
	case NPR_ELEM_F16: {
		uint16_t v;

		memcpy(&v, p + 2 * i, 2);
		return half_to_float(v);
	}
	case NPR_ELEM_BF16: {
		uint32_t v = 0;
		float f;

		memcpy((char *)&v + 2, p + 2 * i, 2);
		memcpy(&f, &v, 4);
		return f;
	}
	}
	return 0;
}

static bool is_float(unsigned int t)
{
	return t == NPR_ELEM_F32 || t == NPR_ELEM_F64 || t == NPR_ELEM_F16 ||
	       t == NPR_ELEM_BF16;
}

/* Output @k (@got, @type, @rank, @dims) against @ref; false with @why. */
static bool compare(int k, const struct tensor *ref, unsigned int type,
		    int rank, const __s64 *dims, const void *got,
		    char *why, size_t wlen)
{
	size_t i, bad = 0, first = 0;
	double worst = 0;
	int d;

	if (type != ref->type) {
		snprintf(why, wlen, "output %d is %s, expected %s", k,
			 npr_elem_name(type), npr_elem_name(ref->type));
		return false;
	}
	for (d = 0; d < rank && rank == ref->rank; d++)
		if (dims[d] != ref->dims[d])
			break;
	if (rank != ref->rank || d < rank) {
		char a[128] = "", b[128] = "";
		int la = 0, lb = 0;

		for (d = 0; d < rank && la < 100; d++)
			la += snprintf(a + la, sizeof(a) - la, "%s%lld",
				       d ? "," : "", (long long)dims[d]);
		for (d = 0; d < ref->rank && lb < 100; d++)
			lb += snprintf(b + lb, sizeof(b) - lb, "%s%lld",
				       d ? "," : "", (long long)ref->dims[d]);
		snprintf(why, wlen, "output %d has shape [%s], expected [%s]",
			 k, a, b);
		return false;
	}
	if (!is_float(type)) {
		int es = elem_size(type);

		for (i = 0; i < ref->count; i++)
			if (memcmp((const char *)got + i * es,
				   (const char *)ref->data + i * es, es))
				break;
		if (i < ref->count) {
			snprintf(why, wlen, "output %d differs at %zu", k, i);
			return false;
		}
		return true;
	}
	for (i = 0; i < ref->count; i++) {
		double g = get_double(type, got, i);
		double r = get_double(type, ref->data, i);
		double diff;

		if (isnan(g) && isnan(r))
			continue;
		if (g == r)
			continue;
		diff = fabs(g - r);
		if (!(diff <= ATOL + RTOL * fabs(r))) {
			if (!bad++)
				first = i;
			if (isnan(diff) || diff > worst)
				worst = diff;
		}
	}
	if (bad) {
		snprintf(why, wlen,
			 "output %d: %zu of %zu values off (first at %zu: %g, expected %g; max diff %g)",
			 k, bad, ref->count, first,
			 get_double(type, got, first),
			 get_double(type, ref->data, first), worst);
		return false;
	}
	return true;
}

/* ---- one case ---------------------------------------------------------- */

/* Set in the child of a case whose inputs 1.. were frozen. */
static bool frozen_inputs;

static void last_error(char *why, size_t wlen, const char *what)
{
	const char *m = npr_last_error();

	snprintf(why, wlen, "%s: %s", what, m && *m ? m : strerror(errno));
}

/* Run test_data_set_@set of the model in @dir; false with @why. */
static bool run_set(int fd, __u32 model, const char *dir, int set,
		    char *why, size_t wlen)
{
	struct tensor in[MAX_PORTS], ref[MAX_PORTS];
	struct npr_shape_arg sa[MAX_PORTS];
	struct npr_model_info mi;
	struct npr_req_create rc;
	struct npr_compile co;
	struct npr_infer inf;
	int nin = 0, nout = 0, nsa = 0, i, d;
	char path[PATH_MAX];
	bool ok = false;

	memset(in, 0, sizeof(in));
	memset(ref, 0, sizeof(ref));
	for (;;) {
		struct stat st;

		pathf(path, sizeof(path), "%s/test_data_set_%d/input_%d.pb",
			 dir, set, nin);
		if (stat(path, &st) || nin == MAX_PORTS)
			break;
		if (!tensor_read(path, &in[nin], why, wlen))
			goto out;
		nin++;
	}
	for (;;) {
		struct stat st;

		pathf(path, sizeof(path),
			 "%s/test_data_set_%d/output_%d.pb", dir, set, nout);
		if (stat(path, &st) || nout == MAX_PORTS)
			break;
		if (!tensor_read(path, &ref[nout], why, wlen))
			goto out;
		nout++;
	}

	if (frozen_inputs)
		nin = 1;
	memset(&mi, 0, sizeof(mi));
	mi.size = sizeof(mi);
	mi.handle = model;
	if (npr_ioctl(fd, NPR_IOCTL_MODEL_INFO, &mi)) {
		last_error(why, wlen, "MODEL_INFO");
		goto out;
	}
	if (mi.num_inputs != (__u32)nin || mi.num_outputs != (__u32)nout) {
		snprintf(why, wlen,
			 "model has %u inputs, %u outputs; test data %d, %d",
			 mi.num_inputs, mi.num_outputs, nin, nout);
		goto out;
	}

	for (i = 0; i < nin; i++) {
		if (!in[i].rank)
			continue;
		memset(&sa[nsa], 0, sizeof(sa[nsa]));
		sa[nsa].index = i;
		sa[nsa].rank = in[i].rank;
		for (d = 0; d < in[i].rank; d++)
			sa[nsa].dims[d] = in[i].dims[d];
		nsa++;
	}
	npr_prep_compile(&co, model);
	co.shapes = (uintptr_t)sa;
	co.num_shapes = nsa;
	if (npr_ioctl(fd, NPR_IOCTL_COMPILE, &co)) {
		last_error(why, wlen, "COMPILE");
		goto out;
	}
	npr_prep_req_create(&rc, co.exec);
	if (npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc)) {
		last_error(why, wlen, "REQ_CREATE");
		goto out;
	}
	for (i = 0; i < nin; i++) {
		struct npr_tensor_arg ta;

		npr_prep_tensor(&ta, rc.req, i, 0, in[i].data, in[i].bytes);
		ta.elem_type = in[i].type;
		ta.rank = in[i].rank;
		for (d = 0; d < in[i].rank; d++)
			ta.dims[d] = in[i].dims[d];
		if (npr_ioctl(fd, NPR_IOCTL_SET_TENSOR, &ta)) {
			last_error(why, wlen, "SET_TENSOR");
			goto out;
		}
	}
	npr_prep_infer(&inf, rc.req);
	if (npr_ioctl(fd, NPR_IOCTL_INFER, &inf)) {
		last_error(why, wlen, "INFER");
		goto out;
	}
	for (i = 0; i < nout; i++) {
		struct npr_tensor_arg ta;

		npr_prep_tensor(&ta, rc.req, i, 1, NULL, 0);
		ta.flags |= NPR_TENSOR_MAP;
		if (npr_ioctl(fd, NPR_IOCTL_GET_TENSOR, &ta)) {
			last_error(why, wlen, "GET_TENSOR");
			goto out;
		}
		if (!compare(i, &ref[i], ta.elem_type, ta.rank, ta.dims,
			     (const void *)(uintptr_t)ta.data, why, wlen))
			goto out;
	}
	ok = true;
out:
	for (i = 0; i < MAX_PORTS; i++) {
		free(in[i].data);
		free(ref[i].data);
	}
	return ok;
}

/*
 * With NPR_CONFORMANCE_FREEZE set (a diagnostic, not counted by the
 * expectations): the model of @dir with graph inputs 1.. turned into
 * initializers holding test_data_set_0's values, so that translators whose
 * ops need constant shape inputs can be checked.  NULL if not applicable.
 */
static void *freeze_model(const char *dir, size_t *len)
{
	Onnx__ModelProto *m;
	Onnx__GraphProto *g;
	char path[PATH_MAX];
	void *buf, *out = NULL;
	size_t n, i, k = 0, nfree = 0;
	Onnx__TensorProto *fr[MAX_PORTS];

	pathf(path, sizeof(path), "%s/model.onnx", dir);
	buf = npr_test_slurp(path, &n);
	if (!buf)
		return NULL;
	m = onnx__model_proto__unpack(NULL, n, buf);
	free(buf);
	if (!m || !m->graph)
		goto out;
	g = m->graph;
	for (i = 0; i < g->n_input; i++) {
		size_t j;
		bool is_init = false;

		for (j = 0; j < g->n_initializer; j++)
			if (!strcmp(g->initializer[j]->name,
				    g->input[i]->name))
				is_init = true;
		if (is_init)
			continue;
		if (k++ == 0)
			continue;	/* input 0 stays an input */
		pathf(path, sizeof(path), "%s/test_data_set_0/input_%zu.pb",
		      dir, k - 1);
		buf = npr_test_slurp(path, &n);
		if (!buf || nfree == MAX_PORTS)
			goto out;
		fr[nfree] = onnx__tensor_proto__unpack(NULL, n, buf);
		free(buf);
		if (!fr[nfree])
			goto out;
		free(fr[nfree]->name);
		fr[nfree]->name = strdup(g->input[i]->name);
		nfree++;
	}
	if (nfree)
		out = pack_with_inits(m, fr, nfree, len);
out:
	while (nfree)
		onnx__tensor_proto__free_unpacked(fr[--nfree], NULL);
	if (m)
		onnx__model_proto__free_unpacked(m, NULL);
	return out;
}

/* Run every data set of the case in @dir (in a child process). */
static bool run_case(const char *dir, char *why, size_t wlen)
{
	struct npr_model_load ml;
	char path[PATH_MAX];
	struct stat st;
	int fd, set;
	bool ok = true;
	void *frozen = NULL;
	size_t flen = 0;
	int ret;

	fd = npr_open("cpu", 0);
	if (fd < 0) {
		last_error(why, wlen, "npr_open");
		return false;
	}
	pathf(path, sizeof(path), "%s/model.onnx", dir);
	npr_prep_model_load(&ml, path, NULL);
	if (getenv("NPR_CONFORMANCE_FREEZE"))
		frozen = freeze_model(dir, &flen);
	if (frozen) {
		npr_prep_model_load_mem(&ml, frozen, flen, NULL, 0);
		frozen_inputs = true;
	}
	ret = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml);
	free(frozen);
	if (ret) {
		last_error(why, wlen, "MODEL_LOAD");
		npr_close(fd);
		return false;
	}
	for (set = 0; ok; set++) {
		pathf(path, sizeof(path), "%s/test_data_set_%d", dir, set);
		if (stat(path, &st))
			break;
		ok = run_set(fd, ml.handle, dir, set, why, wlen);
	}
	if (ok && !set) {
		snprintf(why, wlen, "no test data set");
		ok = false;
	}
	npr_close(fd);
	return ok;
}

/*
 * Run a case in a child (a crash or a hang is that case's failure).
 * Return: true if it passed; else the reason in @why.
 */
static bool run_isolated(const char *dir, char *why, size_t wlen)
{
	int pfd[2], status;
	ssize_t n, got = 0;
	pid_t pid;

	why[0] = 0;
	if (pipe(pfd)) {
		snprintf(why, wlen, "pipe: %s", strerror(errno));
		return false;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		snprintf(why, wlen, "fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return false;
	}
	if (!pid) {
		char msg[512] = "";
		bool ok;

		close(pfd[0]);
		signal(SIGALRM, SIG_DFL);
		alarm(CASE_TIMEOUT);
		ok = run_case(dir, msg, sizeof(msg));
		if (!ok && write(pfd[1], msg, strlen(msg)) < 0)
			_exit(2);
		_exit(ok ? 0 : 1);
	}
	close(pfd[1]);
	while (got < (ssize_t)wlen - 1 &&
	       (n = read(pfd[0], why + got, wlen - 1 - got)) > 0)
		got += n;
	why[got] = 0;
	close(pfd[0]);
	if (waitpid(pid, &status, 0) < 0) {
		snprintf(why, wlen, "waitpid: %s", strerror(errno));
		return false;
	}
	if (WIFSIGNALED(status)) {
		if (WTERMSIG(status) == SIGALRM)
			snprintf(why, wlen, "timed out after %d s",
				 CASE_TIMEOUT);
		else
			snprintf(why, wlen, "crashed: %s",
				 strsignal(WTERMSIG(status)));
		return false;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return true;
	if (!why[0])
		snprintf(why, wlen, "failed without a reason");
	/* one line */
	why[strcspn(why, "\r\n")] = 0;
	return false;
}

/* ---- the tests ------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Totals of one directory, handed to the summary test through a file. */
struct totals {
	int listed, listed_pass, all, all_pass;
};

static void totals_path(char *buf, size_t len, pid_t harness)
{
	snprintf(buf, len, "/tmp/npr_conformance.%d", (int)harness);
}

FIXTURE(conformance) {
	struct name_list expect, ort;
	const char *filter;
};

FIXTURE_VARIANT(conformance) {
	const char *dir;
};

FIXTURE_VARIANT_ADD(conformance, node) { .dir = "node" };
FIXTURE_VARIANT_ADD(conformance, simple) { .dir = "simple" };
FIXTURE_VARIANT_ADD(conformance, pytorch_converted) {
	.dir = "pytorch-converted"
};
FIXTURE_VARIANT_ADD(conformance, pytorch_operator) {
	.dir = "pytorch-operator"
};

FIXTURE_SETUP(conformance)
{
	char path[PATH_MAX];

	memset(self, 0, sizeof(*self));
	if (!npr_th_isdir(testdata_dir()))
		SKIP(return,
		     "ONNX backend test data not found at %s (set NPR_ONNX_TESTDATA, or: apt-get install libonnx-testdata)",
		     testdata_dir());
	if (!list_read(&self->expect, expect_path())) {
		TH_LOG("cannot read the expectations file %s (set NPR_CONFORMANCE_EXPECT)",
		       expect_path());
		ASSERT_TRUE(false);
	}
	pathf(path, sizeof(path),
		 "%s/models/onnx-conformance/ort-1.30-pass.txt",
		 npr_test_shared());
	if (!list_read(&self->ort, path))
		TH_LOG("no list of the cases onnxruntime passes (%s)", path);
	self->filter = getenv("NPR_CONFORMANCE_FILTER");
	if (self->filter && !*self->filter)
		self->filter = NULL;
}

FIXTURE_TEARDOWN(conformance)
{
	list_free(&self->expect);
	list_free(&self->ort);
}

TEST_F(conformance, run)
{
	struct totals tot = { 0 };
	char **names = NULL, dir[PATH_MAX], path[PATH_MAX], why[512];
	size_t n = 0, cap = 0, i;
	int unexpected = 0, newly = 0;
	struct dirent *de;
	DIR *d;
	FILE *f;

	pathf(dir, sizeof(dir), "%s/%s", testdata_dir(), variant->dir);
	d = opendir(dir);
	if (!d)
		SKIP(return, "no directory %s", dir);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			names = realloc(names, cap * sizeof(char *));
			ASSERT_NONNULL(names);
		}
		names[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(char *), cmp_str);

	for (i = 0; i < n; i++) {
		const char *expected, *on_ort;
		char name[512];
		bool ok;

		pathf(name, sizeof(name), "%s/%s", variant->dir, names[i]);
		if (self->filter && !strstr(name, self->filter))
			continue;
		pathf(path, sizeof(path), "%s/%s", dir, names[i]);
		ok = run_isolated(path, why, sizeof(why));
		expected = list_find(&self->expect, name);
		on_ort = list_find(&self->ort, name);
		tot.all++;
		tot.all_pass += ok;
		if (on_ort) {
			tot.listed++;
			tot.listed_pass += ok;
		}
		if (ok && expected) {
			printf("# ok %s (listed in conformance.expect: take it off)\n",
			       name);
			newly++;
		} else if (ok) {
			printf("# ok %s\n", name);
		} else if (expected) {
			printf("# expected-fail %s: %s\n", name, why);
		} else {
			printf("# FAIL %s: %s\n", name, why);
			unexpected++;
		}
		fflush(stdout);
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);

	printf("# %s: %d of %d onnxruntime-passed cases pass, %d of %d cases in all\n",
	       variant->dir, tot.listed_pass, tot.listed, tot.all_pass,
	       tot.all);
	totals_path(path, sizeof(path), getppid());
	f = fopen(path, "a");
	if (f) {
		fprintf(f, "%d %d %d %d\n", tot.listed, tot.listed_pass,
			tot.all, tot.all_pass);
		fclose(f);
	}
	if (self->filter)
		return;
	if (newly)
		TH_LOG("%d cases pass but are listed in conformance.expect",
		       newly);
	if (unexpected)
		TH_LOG("%d cases fail but are not listed in conformance.expect",
		       unexpected);
	EXPECT_EQ(newly, 0);
	EXPECT_EQ(unexpected, 0);
}

/* After the four directories: the totals. */
TEST(totals)
{
	struct totals sum = { 0 }, t;
	char path[PATH_MAX];
	FILE *f;
	int dirs = 0;

	totals_path(path, sizeof(path), getppid());
	f = fopen(path, "r");
	if (!f)
		SKIP(return, "no directory ran");
	while (fscanf(f, "%d %d %d %d", &t.listed, &t.listed_pass, &t.all,
		      &t.all_pass) == 4) {
		sum.listed += t.listed;
		sum.listed_pass += t.listed_pass;
		sum.all += t.all;
		sum.all_pass += t.all_pass;
		dirs++;
	}
	fclose(f);
	unlink(path);
	printf("# total: %d of %d onnxruntime-passed cases pass, %d of %d cases in all (%d directories)\n",
	       sum.listed_pass, sum.listed, sum.all_pass, sum.all, dirs);
}

TEST_HARNESS_MAIN
