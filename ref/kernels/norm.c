// SPDX-License-Identifier: MIT
/*
 * Reference kernels: MVN, NormalizeL2, BatchNormInference.
 *
 * MVN and NormalizeL2 reduce over an arbitrary set of axes.  Every element
 * is mapped to a "group" (its index with the reduced axes dropped); the
 * kernels walk the tensor in memory order, keeping the group index up to
 * date incrementally, and accumulate per group in double precision.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "norm.h"
#include "registry.h"
#include "ref/conv/conv.h"
#include "ref/threads.h"

/* Walks a tensor in memory order, tracking the group of each element. */
struct walk {
	int rank;
	int64_t dim[NPR_MAX_RANK];
	int64_t gstride[NPR_MAX_RANK];	/* 0 on reduced axes */
	int64_t idx[NPR_MAX_RANK];
	int64_t group;
};

/* Returns the number of groups. */
static int64_t walk_init(struct walk *w, const struct npr_shape *s,
			 const bool *reduced)
{
	int64_t ng = 1;
	int i;

	memset(w, 0, sizeof(*w));
	w->rank = s->rank;
	for (i = s->rank - 1; i >= 0; i--) {
		w->dim[i] = s->d[i];
		if (!reduced[i]) {
			w->gstride[i] = ng;
			ng *= s->d[i];
		}
	}
	return ng;
}

static void walk_next(struct walk *w)
{
	int i;

	for (i = w->rank - 1; i >= 0; i--) {
		w->group += w->gstride[i];
		if (++w->idx[i] < w->dim[i])
			return;
		w->group -= w->gstride[i] * w->dim[i];
		w->idx[i] = 0;
	}
}

/* Per-group sums of x (@mean != NULL) and of squares of (x - mean). */
static int group_stats(const struct npr_node *n, const struct npr_tensor *x,
		       const bool *reduced, double **mean, double **sq)
{
	int64_t numel = npr_shape_numel(&x->shape), ng, e;
	const float *xp = x->data;
	double *m = NULL, *q, cnt;
	struct walk w;

	if (numel < 0)
		return npr_node_err(n, -EINVAL, "dynamic data shape");
	ng = walk_init(&w, &x->shape, reduced);
	if (ng < 1)
		ng = 1;
	q = calloc((size_t)ng, sizeof(*q));
	if (mean)
		m = calloc((size_t)ng, sizeof(*m));
	if (!q || (mean && !m)) {
		free(q);
		free(m);
		return -ENOMEM;
	}
	cnt = ng && numel ? (double)numel / (double)ng : 1;
	if (m) {
		for (e = 0; e < numel; e++, walk_next(&w))
			m[w.group] += xp[e];
		for (e = 0; e < ng; e++)
			m[e] /= cnt;
		walk_init(&w, &x->shape, reduced);
	}
	for (e = 0; e < numel; e++, walk_next(&w)) {
		double d = xp[e] - (m ? m[w.group] : 0.0);

		q[w.group] += d * d;
	}
	if (m)
		for (e = 0; e < ng; e++)
			q[e] /= cnt;
	if (mean)
		*mean = m;
	*sq = q;
	return 0;
}

/*
 * MVN over trailing axes (per channel over the plane, per image over the
 * rest): each group is a run of @inner consecutive elements, done by the
 * vector loops of npr_mvn_rows_generic() / _avx512() (vec.h: the same
 * bits in both, within rounding of group_stats() and the walk below,
 * which add one element after the other); the groups go to the threads.
 */
struct mvn_job {
	const struct npr_norm_params *p;
	const float *x;
	float *y;
	int64_t inner, ng, parts;
};

static void mvn_part(void *arg, int i, int tid)
{
	const struct mvn_job *j = arg;
	const struct npr_norm_params *p = j->p;
	int64_t g = j->ng * i / j->parts, g1 = j->ng * (i + 1) / j->parts;
	void (*rows)(const float *, float *, int64_t, int64_t, bool, bool,
		     double) = npr_mvn_rows_generic;

#if defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f"))
		rows = npr_mvn_rows_avx512;
#endif
	rows(j->x + g * j->inner, j->y + g * j->inner, g1 - g, j->inner,
	     p->normalize_variance, p->inside_sqrt, p->eps);
}

/* The trailing-axes case of npr_ref_mvn(), or false. */
static bool mvn_trailing(const struct npr_norm_params *p,
			 const struct npr_tensor *in, float *y)
{
	const struct npr_shape *s = &in->shape;
	struct mvn_job j = {
		.p = p, .x = in->data, .y = y, .inner = 1, .ng = 1,
	};
	int k = s->rank;

	/* reduced axes [k, rank), none before */
	for (; k > 0 && p->reduced[k - 1]; k--)
		j.inner *= s->d[k - 1];
	if (k == s->rank)
		return false;
	for (; k > 0; k--) {
		if (p->reduced[k - 1])
			return false;
		j.ng *= s->d[k - 1];
	}
	if (j.ng < 1 || j.inner < 1)
		return false;
	j.parts = j.ng * j.inner < 16384 ? 1 : 4 * npr_par_threads();
	if (j.parts > j.ng)
		j.parts = j.ng;
	npr_parallel_for((int)j.parts, mvn_part, &j);
	return true;
}

/**
 * npr_ref_mvn() - mean-variance normalization (MVN-1, MVN-6)
 * @n: the node; params are struct npr_norm_params with @reduced set.
 * @in: data (and the axes for MVN-6, already read by infer).
 * @out: the normalized data, same shape.
 *
 * y = (x - mean) / sqrt(var + eps) or (x - mean) / (sqrt(var) + eps), or
 * only x - mean without normalize_variance; mean and var over the
 * reduced axes.
 *
 * Return: 0 or -errno.
 */
int npr_ref_mvn(const struct npr_node *n, const struct npr_tensor *in,
		struct npr_tensor *out)
{
	const struct npr_norm_params *p = n->params;
	const float *x = in[0].data;
	float *y = out->data;
	int64_t numel = npr_shape_numel(&in[0].shape), e, ng;
	double *mean, *var;
	struct walk w;
	int err;

	if (numel > 0 && mvn_trailing(p, &in[0], y))
		return 0;
	err = group_stats(n, &in[0], p->reduced, &mean, &var);
	if (err)
		return err;
	ng = walk_init(&w, &in[0].shape, p->reduced);
	/* turn var into the factor to multiply by */
	for (e = 0; e < ng; e++) {
		if (!p->normalize_variance)
			var[e] = 1.0;
		else if (p->inside_sqrt)
			var[e] = 1.0 / sqrt(var[e] + p->eps);
		else
			var[e] = 1.0 / (sqrt(var[e]) + p->eps);
	}
	for (e = 0; e < numel; e++, walk_next(&w))
		y[e] = (float)((x[e] - mean[w.group]) * var[w.group]);
	free(mean);
	free(var);
	return 0;
}

/**
 * npr_ref_normalize_l2() - L2 normalization over some axes (NormalizeL2-1)
 * @n: the node; params are struct npr_norm_params with @reduced set.
 * @in: data and axes.
 * @out: x / sqrt(max(sum(x^2), eps)) or x / sqrt(sum(x^2) + eps).
 *
 * With no axes every element is its own group.
 *
 * Return: 0 or -errno.
 */
int npr_ref_normalize_l2(const struct npr_node *n, const struct npr_tensor *in,
			 struct npr_tensor *out)
{
	const struct npr_norm_params *p = n->params;
	const float *x = in[0].data;
	float *y = out->data;
	int64_t numel = npr_shape_numel(&in[0].shape), e, ng;
	double *sq;
	struct walk w;
	int err;

	err = group_stats(n, &in[0], p->reduced, NULL, &sq);
	if (err)
		return err;
	ng = walk_init(&w, &in[0].shape, p->reduced);
	for (e = 0; e < ng; e++) {
		double s = p->eps_max ? fmax(sq[e], p->eps) : sq[e] + p->eps;

		sq[e] = s > 0 ? 1.0 / sqrt(s) : INFINITY;
	}
	for (e = 0; e < numel; e++, walk_next(&w))
		y[e] = (float)(x[e] * sq[w.group]);
	free(sq);
	return 0;
}

/**
 * npr_ref_batch_norm() - BatchNormInference-1/-5
 * @n: the node; params are struct npr_norm_params.
 * @in: the five inputs in the order of the op version.
 * @out: gamma * (x - mean) / sqrt(var + eps) + beta, per channel (axis 1).
 *
 * Return: 0 or -errno.
 */
int npr_ref_batch_norm(const struct npr_node *n, const struct npr_tensor *in,
		       struct npr_tensor *out)
{
	const struct npr_norm_params *p = n->params;
	const struct npr_tensor *xt = &in[p->data];
	const float *x = xt->data, *gamma, *beta, *mean, *var;
	float *y = out->data;
	int64_t N, C, inner = 1, b, c, i;
	int k;

	if (p->data == 0) {
		gamma = in[1].data;
		beta = in[2].data;
	} else {
		gamma = in[0].data;
		beta = in[1].data;
	}
	mean = in[3].data;
	var = in[4].data;
	if (xt->shape.rank < 2)
		return npr_node_err(n, -EINVAL, "data rank %d < 2",
				    xt->shape.rank);
	N = xt->shape.d[0];
	C = xt->shape.d[1];
	for (k = 2; k < xt->shape.rank; k++)
		inner *= xt->shape.d[k];
	for (c = 0; c < C; c++) {
		float s = gamma[c] / sqrtf(var[c] + p->eps);
		float t = beta[c] - mean[c] * s;

		for (b = 0; b < N; b++) {
			const float *xp = x + (b * C + c) * inner;
			float *yp = y + (b * C + c) * inner;

			for (i = 0; i < inner; i++)
				yp[i] = xp[i] * s + t;
		}
	}
	return 0;
}

/* The op definitions of lib/ops/norm.c these kernels evaluate. */
const struct npr_kernel npr_kernels_norm[] = {
	{ "MVN", 0, 5, npr_ref_mvn },
	{ "MVN", 6, 99, npr_ref_mvn },
	{ "NormalizeL2", 0, 99, npr_ref_normalize_l2 },
	{ "BatchNormInference", 0, 4, npr_ref_batch_norm },
	{ "BatchNormInference", 5, 99, npr_ref_batch_norm },
	{ NULL },
};
