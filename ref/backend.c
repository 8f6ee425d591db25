// SPDX-License-Identifier: MIT
/*
 * The CPU backend: executes a compiled graph node by node with the
 * reference kernels.
 *
 * compile:        a step list (live, non-constant nodes in topological
 *                 order) and an arena layout: one 64-byte aligned slot per
 *                 computed value.
 * request_create: one arena per request, a tensor view per value.
 * infer:          convert inputs into the compute type, run the steps
 *                 (the leading ones a group of images at a time when the
 *                 batch is larger than a group, see plan_groups()),
 *                 convert the results into the callers' output buffers.
 *
 * Shapes that depend on input values: a node compile left with dynamic
 * outputs is a dynamic step.  Each request keeps its own copy of the
 * graph's values and of those nodes (parsed again, so the params that
 * infer fills are the request's); before a dynamic step runs, its inputs'
 * actual shapes and data go into the copy, the op's infer runs again and
 * gives the output shapes, and the outputs get buffers of the request
 * that grow as needed.  Static values keep the planned arena.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "backend.h"
#include "error.h"
#include "object.h"
#include "sys.h"
#include "tensor.h"
#include "ops/shape.h"
#include "ref/conv/conv.h"
#include "threads.h"

/*
 * A value whose size is known only at inference time may not exceed this
 * (a Tile repeat count or a Range bound from an input could otherwise ask
 * for any amount of memory).
 */
#define DYN_MAX_BYTES	((size_t)1 << 32)

/* a step done by a fast kernel instead of the node's eval */
struct ref_fast {
	struct npr_conv_plan *conv;
	int x, res, y;		/* value indexes; res -1 if none */
	int head;		/* the convolution's node */
	int wv;			/* its weights' value if it holds them, or -1 */
};

struct ref_exec {
	int nsteps;
	int *steps;		/* node indexes */
	struct ref_fast **fast;	/* per step, or NULL: the node's eval */
	int threads;		/* per request, 0: all CPUs */
	uint64_t *prof_ns;	/* per step, with NPR_CPU_PROFILE set */
	uint64_t *prof_cur;	/* per step: this run's time */
	uint64_t *prof_min;	/* per step: the fastest run's */
	uint64_t prof_infer_ns;	/* whole runs, inputs to outputs */
	struct npr_par_stats *pstats;	/* per step, NPR_CPU_PROFILE=3 */
	bool *fused;		/* per node: its work done by another step */
	uint64_t prof_runs;
	size_t *off;		/* per value: arena offset, SIZE_MAX if none */
	size_t arena_bytes;
	int max_in, max_out;
	bool *dyn;		/* per step: output shapes inferred per run */
	bool *no_idx;		/* per node: a MaxPool whose indices no one reads */
	int ndyn;
	/* batch groups: steps [0, gsteps) run @group images at a time */
	int gsteps;
	int64_t group, batch;
	bool group_set;		/* by NPR_CPU_GROUP */
	bool *gslot;		/* per value: one group's slot, every group */
	bool copy_inputs;	/* NPR_CPU_COPY_INPUTS: never read in place */
};

/* marks nodes whose work a fused step does */
static struct ref_fast absorbed_mark;
/* marks a step with nothing to do (a Concat its producers write into) */
static struct ref_fast noop_mark;

struct ref_request {
	void *arena;
	struct npr_tensor *t;	/* per value */
	struct npr_tensor *in_buf, *out_buf;
	/* with dynamic steps: the request's view of the graph */
	struct npr_graph rg;	/* g's, with @rvals */
	struct npr_value *rvals;	/* shallow copy of g->vals */
	struct npr_node *rnodes;	/* per node; params of dynamic ones */
	void **dbuf;		/* per value: buffer of a dynamic value */
	size_t *dcap;		/* its size */
};

static int cpu_probe(struct npr_device *dev, int index)
{
	struct utsname u;

	if (index != 0)
		return npr_err(-ENODEV, "cpu.%d: there is one CPU device, cpu.0",
			       index);
	dev->info.device_type = NPR_DEVICE_CPU;
	dev->info.caps = NPR_CAP_FP32 | NPR_CAP_FP16 | NPR_CAP_INT8;
	snprintf(dev->info.name, sizeof(dev->info.name), "cpu");
	if (uname(&u))
		snprintf(u.machine, sizeof(u.machine), "unknown");
	snprintf(dev->info.arch, sizeof(dev->info.arch), "%.31s", u.machine);
	{
		FILE *f = fopen("/proc/cpuinfo", "r");
		char line[256];

		snprintf(dev->info.full_name, sizeof(dev->info.full_name),
			 "CPU (%.64s)", u.machine);
		while (f && fgets(line, sizeof(line), f)) {
			char *p = strchr(line, ':');

			if (strncmp(line, "model name", 10) || !p)
				continue;
			p++;
			while (*p == ' ')
				p++;
			p[strcspn(p, "\n")] = 0;
			snprintf(dev->info.full_name,
				 sizeof(dev->info.full_name), "%s", p);
			break;
		}
		if (f)
			fclose(f);
	}
	return 0;
}

/*
 * NPR_CPU_PROFILE=3, per step and inference: parallel loops (of them
 * run on the caller alone), indexes each thread ran, each thread's time
 * in loop bodies, how late the workers joined, the caller's wait for
 * them at each loop's end, and the step's time outside its loops.
 */
static void pool_print(const struct ref_exec *re, int i)
{
	const struct npr_par_stats *st = &re->pstats[i];
	double r = (double)re->prof_runs;
	int t;

	fprintf(stderr, "      pool: loops %.0f (%.0f alone) items",
		st->loops / r, st->serial / r);
	for (t = 0; t < NPR_PAR_STATS_MAX && (t < 2 || st->items[t]); t++)
		fprintf(stderr, "%s%.0f", t ? "/" : " ", st->items[t] / r);
	fprintf(stderr, " work");
	for (t = 0; t < NPR_PAR_STATS_MAX && (t < 2 || st->items[t]); t++)
		fprintf(stderr, "%s%.3f", t ? "/" : " ", st->work_ns[t] / 1e6 / r);
	fprintf(stderr, " ms late %.3f wait %.3f outside loops %.3f ms\n",
		st->late_ns[1] / 1e6 / r, st->wait_ns / 1e6 / r,
		(re->prof_ns[i] > st->span_ns ?
		 re->prof_ns[i] - st->span_ns : 0) / 1e6 / r);
}

/* NPR_CPU_PROFILE=3: where each thread spent an inference. */
static void pool_summary(const struct ref_exec *re)
{
	uint64_t steps = 0, span = 0, wait = 0, work[NPR_PAR_STATS_MAX] = { 0 };
	double r = (double)re->prof_runs;
	int i, t;

	for (i = 0; i < re->nsteps; i++) {
		steps += re->prof_ns[i];
		span += re->pstats[i].span_ns;
		wait += re->pstats[i].wait_ns;
		for (t = 0; t < NPR_PAR_STATS_MAX; t++)
			work[t] += re->pstats[i].work_ns[t];
	}
	fprintf(stderr, "  pool: %.3f ms per inference, steps %.3f, outside steps %.3f; in steps: outside loops %.3f, caller waiting %.3f\n",
		re->prof_infer_ns / 1e6 / r, steps / 1e6 / r,
		(re->prof_infer_ns > steps ? re->prof_infer_ns - steps : 0) /
		1e6 / r, (steps > span ? steps - span : 0) / 1e6 / r,
		wait / 1e6 / r);
	for (t = 0; t < NPR_PAR_STATS_MAX && (t < 2 || work[t]); t++)
		fprintf(stderr, "  pool: thread %d worked %.3f ms, idle %.3f ms of the inference\n",
			t, work[t] / 1e6 / r,
			(re->prof_infer_ns > work[t] ?
			 re->prof_infer_ns - work[t] : 0) / 1e6 / r);
}

/* NPR_CPU_PROFILE=1: time per op type, printed when the exec goes away */
static void profile_print(struct npr_exec *ex, struct ref_exec *re)
{
	struct npr_graph *g = ex->g;
	uint64_t total = 0;
	int i, j;

	for (i = 0; i < re->nsteps; i++)
		total += re->prof_ns[i];
	fprintf(stderr, "cpu profile: %.3f ms per inference over %llu runs\n",
		total / 1e6 / re->prof_runs,
		(unsigned long long)re->prof_runs);
	if (atoi(getenv("NPR_CPU_PROFILE")) >= 2)
		for (i = 0; i < re->nsteps; i++) {
			const struct ref_fast *f = re->fast[i];
			char desc[128] = "";
			double fl = 0;

			if (f && f != &noop_mark)
				fl = npr_conv_plan_desc(f->conv, desc,
							sizeof(desc));
			fprintf(stderr, "  step %3d %-14s %-40s %8.3f ms %6.1f GFLOP/s min %8.3f ms\n",
				i, g->nodes[re->steps[i]].type, desc,
				re->prof_ns[i] / 1e6 / re->prof_runs,
				fl ? fl * re->prof_runs / re->prof_ns[i] : 0,
				re->prof_min[i] / 1e6);
			if (re->pstats)
				pool_print(re, i);
		}
	if (re->pstats)
		pool_summary(re);
	for (i = 0; i < re->nsteps; i++) {
		const char *ty = re->fast[i] && re->fast[i] != &noop_mark ?
				 "conv (fused)" : g->nodes[re->steps[i]].type;
		uint64_t sum = 0;
		int cnt = 0;

		for (j = 0; j < i; j++) {
			const char *t2 = re->fast[j] && re->fast[j] != &noop_mark ?
					 "conv (fused)" : g->nodes[re->steps[j]].type;

			if (!strcmp(ty, t2))
				break;
		}
		if (j < i)
			continue;
		for (j = i; j < re->nsteps; j++) {
			const char *t2 = re->fast[j] && re->fast[j] != &noop_mark ?
					 "conv (fused)" : g->nodes[re->steps[j]].type;

			if (!strcmp(ty, t2)) {
				sum += re->prof_ns[j];
				cnt++;
			}
		}
		fprintf(stderr, "  %-16s %3d steps %8.3f ms %5.1f%%\n", ty, cnt,
			sum / 1e6 / re->prof_runs, 100.0 * sum / total);
	}
}

static void cpu_exec_destroy(struct npr_exec *ex)
{
	struct ref_exec *re = ex->priv;
	int i;

	if (re->prof_ns && re->prof_runs)
		profile_print(ex, re);
	free(re->prof_ns);
	free(re->pstats);
	for (i = 0; re->fast && i < re->nsteps; i++) {
		if (!re->fast[i] || re->fast[i] == &absorbed_mark ||
		    re->fast[i] == &noop_mark)
			continue;
		npr_conv_plan_free(re->fast[i]->conv);
		free(re->fast[i]);
	}
	free(re->fast);
	free(re->fused);
	free(re->dyn);
	free(re->no_idx);
	free(re->gslot);
	free(re->steps);
	free(re->off);
	free(re);
	ex->priv = NULL;
}

/*
 * Fast kernels: every convolution with constant weights gets a plan, and
 * absorbs the bias Add, residual Add and Relu/Clamp that follow it.  The
 * fused step runs where the last absorbed node was (the residual is
 * ready there); absorbed nodes are marked in re->fast with a sentinel.
 */
/* The layout of the prepared buffers this build and CPU make. */
static void prep_layout(char *buf, size_t len)
{
	const struct npr_gemm_kern *k = npr_gemm_kern_best();

	snprintf(buf, len, "conv%d %s mr%d nr%d t%d w%d", NPR_CONV_PREP_LAYOUT,
		 k->name, k->mr, k->nr, npr_conv_t_layout(),
		 npr_conv_wino_layout());
}

/* Give @plan (node @ni's) the buffers a blob prepared for it. */
static int plan_prepared(const struct npr_prepared *prep, int *cur,
			 struct npr_graph *g, int ni,
			 struct npr_conv_plan *plan)
{
	const void **buf;
	size_t *bytes;
	int n = 0, err;

	if (*cur < prep->n && prep->buf[*cur].node < ni)
		return npr_node_err(&g->nodes[prep->buf[*cur].node], -EINVAL,
				    "blob: prepared weights for a node that has none");
	while (*cur + n < prep->n && prep->buf[*cur + n].node == ni)
		n++;
	buf = malloc(sizeof(*buf) * (n ? n : 1));
	bytes = malloc(sizeof(*bytes) * (n ? n : 1));
	if (!buf || !bytes) {
		free(buf);
		free(bytes);
		return -ENOMEM;
	}
	for (err = 0; err < n; err++) {
		buf[err] = prep->buf[*cur + err].data;
		bytes[err] = prep->buf[*cur + err].bytes;
	}
	*cur += n;
	err = npr_conv_plan_use_prepared(plan, buf, bytes, n);
	free(buf);
	free(bytes);
	if (err)
		return npr_node_err(&g->nodes[ni], -EINVAL,
				    "blob: %d prepared buffers that do not fit this convolution",
				    n);
	return 0;
}

/*
 * The plan holds the convolution's weights packed.  When nothing else
 * reads them, the plan is where they are kept: the blob carries them
 * packed only (cpu_held()), and the compiled graph's own heap copy is
 * freed at once, so that the weights are in memory once, also while
 * compile packs the next ones.  Weights in a mapped file (an IR .bin, an
 * .onnx) stay referenced, but their pages leave memory until something
 * reads them again (npr_graph_drop_pages()).
 */
static void hold_weights(struct npr_graph *g, const struct npr_node *n,
			 const int *uses, struct ref_fast *f)
{
	int w = n->in[1];
	struct npr_value *v = &g->vals[w];

	if (uses[w] != 1 || v->type != NPR_ELEM_F32)
		return;
	f->wv = w;
	if (v->owned && v->data == v->owned) {
		free(v->owned);
		v->owned = NULL;
		v->data = NULL;
	} else if (!v->owned) {
		npr_graph_drop_pages(g, v->data, v->nbytes);
	}
}

/* Are there prepared buffers for node @ni at the cursor? */
static bool prep_for(const struct npr_prepared *prep, int cur, int ni)
{
	return prep && cur < prep->n && prep->buf[cur].node == ni;
}

/*
 * What npr_conv_fuse() needs beside the graph: how many live nodes read
 * each value, and which nodes a fused step has taken (none yet).
 */
static int fuse_scratch(const struct npr_graph *g, int **uses, bool **taken)
{
	int i, j;

	*uses = calloc(g->nvals ? g->nvals : 1, sizeof(int));
	*taken = calloc(g->nnodes ? g->nnodes : 1, sizeof(bool));
	if (!*uses || !*taken) {
		free(*uses);
		free(*taken);
		return -ENOMEM;
	}
	for (i = 0; i < g->nnodes; i++)
		for (j = 0; !g->nodes[i].dead && j < g->nodes[i].nin; j++)
			(*uses)[g->nodes[i].in[j]]++;
	return 0;
}

static int plan_fast(struct npr_graph *g, struct ref_exec *re,
		     const struct npr_prepared *prep)
{
	int *uses, i, j, err = 0, cur = 0;
	bool *taken;

	if (getenv("NPR_CPU_REF"))
		return 0;
	err = fuse_scratch(g, &uses, &taken);
	if (err)
		return err;
	for (i = 0; i < g->nnodes; i++) {
		struct npr_node *n = &g->nodes[i];
		struct npr_conv_plan *plan;
		struct ref_fast *f;
		int abs[3], nabs, res, last;

		if (n->dead || re->fast[i] || npr_node_dynamic(g, n))
			continue;
		/* weights without data: only from the prepared buffers */
		if (n->nin > 1 && !npr_in(g, n, 1)->data &&
		    !prep_for(prep, cur, i))
			continue;
		/* from a blob: the packed weights are there already */
		err = npr_conv_fuse_ex(g, i, uses, taken, !prep, &plan, abs,
				       &nabs, &res);
		if (err == -EOPNOTSUPP) {
			err = 0;
			continue;
		}
		if (!err && prep) {
			err = plan_prepared(prep, &cur, g, i, plan);
			if (err)
				npr_conv_plan_free(plan);
		}
		if (err)
			break;
		for (j = 0; j < nabs; j++)
			if (npr_node_dynamic(g, &g->nodes[abs[j]]))
				break;
		if (j < nabs) {
			npr_conv_plan_free(plan);
			continue;
		}
		f = calloc(1, sizeof(*f));
		if (!f) {
			npr_conv_plan_free(plan);
			err = -ENOMEM;
			break;
		}
		f->conv = plan;
		f->head = i;
		f->wv = -1;
		hold_weights(g, n, uses, f);
		f->x = n->in[0];
		f->res = res;
		last = nabs ? abs[nabs - 1] : i;
		f->y = g->nodes[last].out[0];
		for (j = 0; j < nabs; j++) {
			re->fast[abs[j]] = &absorbed_mark;
			taken[abs[j]] = true;
		}
		if (nabs)
			re->fast[i] = &absorbed_mark;
		re->fast[last] = f;
	}
	free(uses);
	free(taken);
	if (!err && prep && cur < prep->n)
		err = npr_node_err(&g->nodes[prep->buf[cur].node], -EINVAL,
				   "blob: prepared weights for a node that has none");
	return err;
}

struct lifetime {
	int v;
	int def, last;		/* steps; inputs are written at step 0 */
	size_t bytes, off;
};

static int by_size(const void *a, const void *b)
{
	const struct lifetime *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return x->v - y->v;
}

/*
 * Concat in place: when a Concat's slices are contiguous in its output
 * (nothing outside the axis but 1s, e.g. channels at batch 1) and each
 * input is a computed value only the Concat reads, its producers write
 * straight into the output (alias[v] = output value, prefix[v] = byte
 * offset) and the Concat step does nothing.
 */
static int plan_concat(struct npr_exec *ex, struct ref_exec *re,
		       int **alias_out, size_t **prefix_out)
{
	struct npr_graph *g = ex->g;
	int *alias, *reads, *last, i, j, s;
	size_t *prefix;

	alias = malloc(sizeof(int) * (g->nvals ? g->nvals : 1));
	reads = calloc(g->nvals ? g->nvals : 1, sizeof(int));
	last = calloc(g->nvals ? g->nvals : 1, sizeof(int));
	prefix = calloc(g->nvals ? g->nvals : 1, sizeof(size_t));
	if (!alias || !reads || !last || !prefix) {
		free(alias);
		free(reads);
		free(last);
		free(prefix);
		return -ENOMEM;
	}
	for (i = 0; i < g->nvals; i++)
		alias[i] = -1;
	*alias_out = alias;
	*prefix_out = prefix;
	if (getenv("NPR_CPU_REF")) {
		free(reads);
		free(last);
		return 0;
	}
	for (s = 0; s < re->nsteps; s++) {
		const struct npr_node *nd = &g->nodes[re->steps[s]];
		const struct ref_fast *f = re->fast[s];

		if (f) {
			reads[f->x]++;
			last[f->x] = s;
			if (f->res >= 0) {
				reads[f->res]++;
				last[f->res] = s;
			}
			continue;
		}
		for (j = 0; j < nd->nin; j++) {
			reads[nd->in[j]]++;
			last[nd->in[j]] = s;
		}
	}
	for (i = 0; i < ex->nout; i++) {
		reads[ex->out[i].value] += 2;
		last[ex->out[i].value] = re->nsteps;
	}
	for (i = 0; i < ex->nin; i++)
		reads[ex->in[i].value] += 2;
	for (s = 0; s < re->nsteps; s++) {
		const struct npr_node *nd = &g->nodes[re->steps[s]];
		const struct npr_concat_params *cp = nd->params;
		const struct npr_value *o;
		size_t off = 0;
		bool ok = true, ingroup;
		int64_t outer = 1;

		if (re->fast[s] || re->dyn[s] || strcmp(nd->type, "Concat") ||
		    !cp || nd->nout != 1)
			continue;
		o = npr_out(g, nd, 0);
		for (j = 0; j < cp->ax; j++)
			outer *= o->shape.d[j];
		/*
		 * Inside batch groups of one image, a Concat whose output
		 * is read only there has one image in its group's slot: its
		 * slices are contiguous there too (see plan_memory()).
		 */
		ingroup = s < re->gsteps && re->group == 1 &&
			  last[nd->out[0]] < re->gsteps &&
			  outer == re->batch;
		if ((outer != 1 && !ingroup) || alias[nd->out[0]] >= 0)
			continue;
		for (j = 0; j < nd->nin && ok; j++) {
			int v = nd->in[j];

			ok = !g->vals[v].data && reads[v] == 1 &&
			     re->off[v] != SIZE_MAX && alias[v] < 0 &&
			     g->vals[v].type == o->type;
		}
		for (j = 0; j < nd->nin && ok; j++) {
			int k, v = nd->in[j];

			/* not an alias target itself (nested concats) */
			for (k = 0; k < g->nvals && ok; k++)
				ok = alias[k] != v;
		}
		if (!ok)
			continue;
		for (j = 0; j < nd->nin; j++) {
			int v = nd->in[j];

			alias[v] = nd->out[0];
			prefix[v] = off;
			off += npr_tensor_bytes(g->vals[v].type,
						npr_shape_numel(&g->vals[v].shape)) /
			       (ingroup ? re->batch : 1);
		}
		re->fast[s] = &noop_mark;
	}
	free(reads);
	free(last);
	return 0;
}

/*
 * Batch groups.  Layer by layer over a batch of several images the
 * activations of the early layers outgrow the last-level cache; running
 * the leading steps a few images at a time keeps one group's activations
 * in cache from one layer to the next.  A step can run on a slice of the
 * batch when every computed value it touches has the batch as its first
 * dimension and its kernel works image by image: a planned convolution,
 * pooling, a Concat along another axis, Relu or Clamp.  The longest
 * such run of steps from the start goes group by group, the rest over
 * the whole batch.  In the memory plan a value inside the run gets one
 * group's bytes, reused by every group; the values that cross the
 * groups (model inputs, anything read after the run, outputs) keep the
 * whole batch's and stay alive over the whole run, see plan_memory().
 */
static bool step_sliceable(const struct npr_graph *g, const struct ref_exec *re,
			   int s, int64_t batch)
{
	const struct npr_node *nd = &g->nodes[re->steps[s]];
	const struct ref_fast *f = re->fast[s];
	int j;

	if (re->dyn[s] || f == &noop_mark)
		return false;
	if (f) {
		int v[3] = { f->x, f->y, f->res };

		for (j = 0; j < 3; j++)
			if (v[j] >= 0 && (g->vals[v[j]].shape.rank < 1 ||
					  g->vals[v[j]].shape.d[0] != batch))
				return false;
		return true;
	}
	if (!strcmp(nd->type, "Concat")) {
		const struct npr_concat_params *cp = nd->params;

		if (!cp || cp->ax <= 0)
			return false;
	} else if (strcmp(nd->type, "MaxPool") && strcmp(nd->type, "AvgPool") &&
		   strcmp(nd->type, "Relu") && strcmp(nd->type, "Clamp")) {
		return false;
	}
	if (nd->nout != 1)
		return false;	/* MaxPool's indices count over the batch */
	for (j = 0; j < nd->nin + nd->nout; j++) {
		int v = j < nd->nin ? nd->in[j] : nd->out[j - nd->nin];
		const struct npr_value *val = &g->vals[v];

		if (j < nd->nin && val->data) {
			/* a constant operand: only a Concat could have one,
			 * and it would be the whole batch's */
			return false;
		}
		if (!npr_shape_static(&val->shape) || val->shape.rank < 1 ||
		    val->shape.d[0] != batch)
			return false;
	}
	return true;
}

/* Bytes of the largest computed value step @s reads or writes. */
static int64_t step_max_bytes(const struct npr_graph *g,
			      const struct ref_exec *re, int s)
{
	const struct npr_node *nd = &g->nodes[re->steps[s]];
	const struct ref_fast *f = re->fast[s];
	int v[3], nv = 0, j;
	int64_t max = 0;

	if (f) {
		v[nv++] = f->x;
		v[nv++] = f->y;
		if (f->res >= 0)
			v[nv++] = f->res;
	}
	for (j = 0; j < nv || (!f && j < nd->nin + nd->nout); j++) {
		int val = f ? v[j] : j < nd->nin ? nd->in[j] :
			  nd->out[j - nd->nin];
		int64_t b = npr_tensor_bytes(g->vals[val].type,
				npr_shape_numel(&g->vals[val].shape));

		if (!g->vals[val].data && b > max)
			max = b;
	}
	return max;
}

/*
 * The end of the grouped run.  Its tail of steps that gain from the
 * whole batch runs over the whole batch instead: convolutions whose
 * weights outweigh an image's activations (npr_conv_plan_sweeps():
 * resnet18's 3x3 512-channel layers hold 9.4 MB of weights for 200 KB
 * of activations per image), which then read their weights once for all
 * the images instead of once per group, with every value of the batch
 * within NPR_CPU_GROUP_TAIL_MB (6 MB, a fifth of the shared last-level
 * cache; 0: no tail), and between them steps whose values for the whole
 * batch stay within a third of that (about two L2s), which lose nothing
 * to the larger working set.
 */
static int group_tail(const struct npr_graph *g, const struct ref_exec *re,
		      int s)
{
	const char *env = getenv("NPR_CPU_GROUP_TAIL_MB");
	int64_t max = (int64_t)(env ? atoi(env) : 6) << 20, b;
	int t, sweeps = 0;

	for (t = s; t > 0; t--) {
		const struct ref_fast *f = re->fast[t - 1];
		bool sw = f && npr_conv_plan_sweeps(f->conv);

		b = step_max_bytes(g, re, t - 1);
		if (b > max || (!sw && b > max / 3))
			break;
		sweeps += sw;
	}
	return t >= 2 && sweeps ? t : s;
}

static void plan_groups(struct npr_exec *ex, struct ref_exec *re)
{
	struct npr_graph *g = ex->g;
	const char *env = getenv("NPR_CPU_GROUP");
	int64_t batch, per = 0, group;
	int i, s;

	re->gsteps = 0;
	if (!ex->nin || getenv("NPR_CPU_REF"))
		return;
	if (ex->in[0].value < 0 || g->vals[ex->in[0].value].shape.rank < 1)
		return;
	batch = g->vals[ex->in[0].value].shape.d[0];
	if (batch < 2)
		return;
	for (i = 0; i < ex->nin; i++) {
		const struct npr_value *v = &g->vals[ex->in[i].value];

		if (!npr_shape_static(&v->shape) || v->shape.rank < 1 ||
		    v->shape.d[0] != batch)
			return;
	}
	for (s = 0; s < re->nsteps && step_sliceable(g, re, s, batch); s++) {
		const struct npr_node *nd = &g->nodes[re->steps[s]];
		const struct ref_fast *f = re->fast[s];
		int y = f ? f->y : nd->out[0];
		int64_t b = npr_tensor_bytes(g->vals[y].type,
					     npr_shape_numel(&g->vals[y].shape));

		if (b / batch > per)
			per = b / batch;
	}
	if (s < 2 || !per)
		return;
	s = group_tail(g, re, s);
	/*
	 * Images per group: the most that divide the batch and keep the
	 * largest activation of a group within 10 MB, so that a layer's
	 * input and output stay in the last-level cache (32 MB here, shared)
	 * and two threads can still take whole images each: at batch 8 two
	 * images for the three benchmark models (mobilenet_v2's 96 x 112 x
	 * 112 layer is 4.8 MB per image).  NPR_CPU_GROUP=n sets it (0: the
	 * whole batch at once).
	 */
	for (group = batch; group > 1; group--)
		if (batch % group == 0 && group * per <= (int64_t)10 << 20)
			break;
	/*
	 * A model compiled for one thread (INFERENCE_NUM_THREADS 1 or the
	 * THROUGHPUT hint) runs image by image anyway: plan for that, so
	 * that a group's slots hold one image and a Concat of one image is
	 * done in place (plan_concat()).
	 */
	if (re->threads == 1)
		group = 1;
	if (env)
		group = atoi(env) > 0 ? atoi(env) : batch;
	re->group_set = env;
	if (group >= batch)
		return;
	re->gsteps = s;
	re->group = group;
	re->batch = batch;
}

/*
 * The memory planner: every computed value lives from the step that
 * writes it to the last step that reads it (model outputs to the end);
 * values whose lifetimes do not overlap share arena bytes.  Placement is
 * greedy, largest first, at the lowest offset clear of every placed value
 * alive at the same time.  Values only absorbed nodes would have written
 * (inside a fused step) get no memory at all.  re->off[] holds the
 * no-reuse layout on entry; it is replaced.
 */
static int plan_memory(struct npr_exec *ex, struct ref_exec *re)
{
	struct npr_graph *g = ex->g;
	struct lifetime *lt;
	int *idx, *alias, i, j, k, n = 0, err;
	size_t peak = 0, naive = re->arena_bytes, *prefix;

	idx = malloc(sizeof(int) * (g->nvals ? g->nvals : 1));
	lt = calloc(g->nvals ? g->nvals : 1, sizeof(*lt));
	if (!idx || !lt) {
		free(idx);
		free(lt);
		return -ENOMEM;
	}
	for (i = 0; i < g->nvals; i++)
		idx[i] = -1;
	err = plan_concat(ex, re, &alias, &prefix);
	if (err) {
		free(idx);
		free(lt);
		return err;
	}
#define TOUCH(val, step, wr) do {					\
		int _v = (val);						\
		if (alias[_v] >= 0)					\
			_v = alias[_v];					\
		if (re->off[_v] == SIZE_MAX)				\
			break;						\
		if (idx[_v] < 0) {					\
			idx[_v] = n;					\
			lt[n].v = _v;					\
			lt[n].def = (wr) ? (step) : 0;			\
			lt[n].last = (step);				\
			lt[n].bytes = (npr_tensor_bytes(g->vals[_v].type,	\
				npr_shape_numel(&g->vals[_v].shape)) + 63) &	\
				~(size_t)63;				\
			n++;						\
		}							\
		if (lt[idx[_v]].last < (step))				\
			lt[idx[_v]].last = (step);			\
	} while (0)
	for (i = 0; i < ex->nin; i++)
		TOUCH(ex->in[i].value, 0, false);
	for (i = 0; i < re->nsteps; i++) {
		const struct npr_node *nd = &g->nodes[re->steps[i]];
		const struct ref_fast *f = re->fast[i];

		if (f == &noop_mark)
			continue;
		if (f) {
			TOUCH(f->x, i, false);
			if (f->res >= 0)
				TOUCH(f->res, i, false);
			TOUCH(f->y, i, true);
			continue;
		}
		for (j = 0; j < nd->nin; j++)
			TOUCH(nd->in[j], i, false);
		for (j = 0; j < nd->nout; j++)
			TOUCH(nd->out[j], i, true);
	}
	for (i = 0; i < ex->nout; i++)
		TOUCH(ex->out[i].value, re->nsteps, false);
#undef TOUCH
	/*
	 * Batch groups: a value written or read outside the grouped steps
	 * (a model input, a value read after them, an output) holds all
	 * the groups' slices at once, so nothing a group computes may share
	 * its bytes; values inside the grouped steps are done with a group
	 * before the next one starts and share as usual.
	 */
	if (re->gsteps) {
		re->gslot = calloc(g->nvals ? g->nvals : 1, sizeof(*re->gslot));
		if (!re->gslot) {
			free(alias);
			free(prefix);
			free(idx);
			free(lt);
			return -ENOMEM;
		}
	}
	for (i = 0; re->gsteps && i < n; i++) {
		bool input = false;

		for (j = 0; j < ex->nin; j++) {
			int v = ex->in[j].value;

			if (alias[v] >= 0)
				v = alias[v];
			input |= v == lt[i].v;
		}
		if (!input && lt[i].def >= re->gsteps)
			continue;	/* written after the groups */
		if (input || lt[i].last >= re->gsteps) {
			lt[i].def = 0;
			if (lt[i].last < re->gsteps)
				lt[i].last = re->gsteps;
		} else {
			/* inside the groups: one group's bytes, reused by
			 * every group, so they stay in cache */
			size_t full = npr_tensor_bytes(g->vals[lt[i].v].type,
				npr_shape_numel(&g->vals[lt[i].v].shape));

			lt[i].bytes = (full / re->batch * re->group + 63) &
				      ~(size_t)63;
			re->gslot[lt[i].v] = true;
		}
	}
	qsort(lt, n, sizeof(*lt), by_size);
	for (i = 0; i < n; i++) {
		size_t off = 0;
		bool moved = true;

		/* first fit: bump past any live placed block until none hits */
		while (moved) {
			moved = false;
			for (k = 0; k < i; k++) {
				if (lt[k].last < lt[i].def || lt[i].last < lt[k].def)
					continue;
				if (off < lt[k].off + lt[k].bytes &&
				    lt[k].off < off + lt[i].bytes) {
					off = lt[k].off + lt[k].bytes;
					moved = true;
				}
			}
		}
		lt[i].off = off;
		if (off + lt[i].bytes > peak)
			peak = off + lt[i].bytes;
	}
	for (i = 0; i < g->nvals; i++)
		re->off[i] = SIZE_MAX;
	for (i = 0; i < n; i++)
		re->off[lt[i].v] = lt[i].off;
	for (i = 0; i < g->nvals; i++)
		if (alias[i] >= 0 && re->off[alias[i]] != SIZE_MAX) {
			re->off[i] = re->off[alias[i]] + prefix[i];
			if (re->gslot)
				re->gslot[i] = re->gslot[alias[i]];
		}
	free(alias);
	free(prefix);
	re->arena_bytes = peak;
	if (getenv("NPR_CPU_PLAN"))
		fprintf(stderr, "cpu: %d steps, %d buffers, activation arena %zu bytes (%zu without reuse)\n",
			re->nsteps, n, peak, naive);
	if (getenv("NPR_CPU_PLAN") && re->gsteps)
		fprintf(stderr, "cpu: steps 0-%d run %lld of %lld images at a time\n",
			re->gsteps - 1, (long long)re->group,
			(long long)re->batch);
	free(idx);
	free(lt);
	return 0;
}

static bool real_fast(const struct ref_fast *f)
{
	return f && f != &absorbed_mark && f != &noop_mark;
}

static bool cpu_held(const struct npr_exec *ex, int value)
{
	const struct ref_exec *re = ex->priv;
	int i;

	for (i = 0; re && i < re->nsteps; i++)
		if (real_fast(re->fast[i]) && re->fast[i]->wv == value)
			return true;
	return false;
}

/* Value @v is a constant (not computed by a step) without bytes. */
static bool bytes_missing(const struct npr_graph *g, int v)
{
	const struct npr_value *val = &g->vals[v];
	const struct npr_node *p = &g->nodes[val->producer];

	return !val->data && (p->dead || ((p->op->flags & NPR_OP_SOURCE) &&
					   strcmp(p->type, "Parameter")));
}

/*
 * Every constant a step reads has its bytes, or is the weights a fast
 * convolution holds: a blob can say a constant is held by a node that
 * does not hold it.
 */
static int check_held(struct npr_graph *g, const struct ref_exec *re)
{
	int i, j, s;

	for (s = 0; s < re->nsteps; s++) {
		const struct npr_node *n = &g->nodes[re->steps[s]];
		const struct ref_fast *f = re->fast[s];

		if (real_fast(f) || f == &noop_mark)
			continue;
		for (j = 0; j < n->nin; j++) {
			if (bytes_missing(g, n->in[j]))
				return npr_node_err(n, -EINVAL,
						    "blob: input %d is a constant without its bytes",
						    j);
		}
	}
	for (i = 0; i < re->nsteps; i++) {
		const struct ref_fast *f = re->fast[i];

		if (!real_fast(f))
			continue;
		if (bytes_missing(g, f->x) ||
		    (f->res >= 0 && bytes_missing(g, f->res)))
			return npr_node_err(&g->nodes[f->head], -EINVAL,
					    "blob: the input or the residual is a constant without its bytes");
	}
	return 0;
}

/*
 * NPR_CPU_REF with a blob: the reference kernels read weights from the
 * graph, so those the blob holds packed are unpacked into it.
 */
static int unpack_held(struct npr_graph *g, const struct npr_prepared *prep)
{
	int *uses, i, err = 0, cur = 0;
	bool *taken;

	err = fuse_scratch(g, &uses, &taken);
	if (err)
		return err;
	for (i = 0; i < g->nnodes && !err; i++) {
		struct npr_conv_plan *plan = NULL;
		struct npr_value *w;
		int abs[3], nabs, res;

		if (!prep_for(prep, cur, i))
			continue;
		err = npr_conv_fuse_ex(g, i, uses, taken, false, &plan, abs,
				       &nabs, &res);
		if (err) {
			plan = NULL;
			err = npr_node_err(&g->nodes[i], -EINVAL,
					   "blob: prepared weights for a node that has none");
		} else {
			err = plan_prepared(prep, &cur, g, i, plan);
		}
		w = npr_in(g, &g->nodes[i], 1);
		if (!err && !w->data) {
			w->owned = malloc(w->nbytes ? w->nbytes : 1);
			if (w->owned) {
				npr_conv_plan_weights(plan, w->owned);
				w->data = w->owned;
			} else {
				err = -ENOMEM;
			}
		}
		if (plan)
			npr_conv_plan_free(plan);
	}
	free(uses);
	free(taken);
	if (!err && cur < prep->n)
		err = npr_node_err(&g->nodes[prep->buf[cur].node], -EINVAL,
				   "blob: prepared weights for a node that has none");
	return err;
}

/*
 * MaxPool-8 has a second output, the indices of the maxima, which models
 * mostly leave unread; its kernel then gets no buffer for them and takes
 * the vectorised path (the indices need the scalar one: person-
 * reidentification-retail-0287's 32 x 128 x 64 pool 1.16 ms).
 */
static int plan_no_idx(const struct npr_graph *g, struct ref_exec *re)
{
	int *readers, i, j;

	readers = calloc(g->nvals ? g->nvals : 1, sizeof(int));
	re->no_idx = calloc(g->nnodes ? g->nnodes : 1, sizeof(bool));
	if (!readers || !re->no_idx) {
		free(readers);
		return -ENOMEM;
	}
	for (i = 0; i < g->nnodes; i++)
		for (j = 0; !g->nodes[i].dead && j < g->nodes[i].nin; j++)
			readers[g->nodes[i].in[j]]++;
	for (i = 0; i < g->nnodes; i++) {
		const struct npr_node *n = &g->nodes[i];

		re->no_idx[i] = !n->dead && n->nout == 2 &&
				!strcmp(n->type, "MaxPool") &&
				!readers[n->out[1]];
	}
	free(readers);
	return 0;
}

static int cpu_compile(struct npr_exec *ex)
{
	struct npr_graph *g = ex->g;
	struct ref_exec *re;
	int i, j, err;

	re = calloc(1, sizeof(*re));
	if (!re)
		return -ENOMEM;
	ex->priv = re;
	re->steps = malloc(sizeof(int) * (g->nnodes ? g->nnodes : 1));
	re->off = malloc(sizeof(size_t) * (g->nvals ? g->nvals : 1));
	if (!re->steps || !re->off)
		goto nomem;
	for (i = 0; i < g->nvals; i++)
		re->off[i] = SIZE_MAX;
	/*
	 * Threads per request: INFERENCE_NUM_THREADS when set; else LATENCY
	 * runs one request on every CPU and THROUGHPUT one CPU per request,
	 * so that requests on several threads run side by side.
	 */
	re->threads = ex->props.num_threads;
	re->copy_inputs = getenv("NPR_CPU_COPY_INPUTS");
	if (!re->threads && ex->props.perf_hint == NPR_PERF_HINT_THROUGHPUT)
		re->threads = 1;
	re->fast = calloc(g->nnodes ? g->nnodes : 1, sizeof(*re->fast));
	re->fused = calloc(g->nnodes ? g->nnodes : 1, sizeof(*re->fused));
	re->dyn = calloc(g->nnodes ? g->nnodes : 1, sizeof(*re->dyn));
	if (!re->fast || !re->fused || !re->dyn)
		goto nomem;
	if (ex->prep) {
		char want[64];

		prep_layout(want, sizeof(want));
		if (strcmp(ex->prep->layout, want))
			return npr_err(-EPROTONOSUPPORT,
				       "blob: weights prepared in layout '%s', this CPU backend uses '%s'",
				       ex->prep->layout, want);
	}
	if (ex->prep && getenv("NPR_CPU_REF"))
		err = unpack_held(g, ex->prep);
	else
		err = plan_fast(g, re, ex->prep);
	if (err)
		return err;
	if (!getenv("NPR_CPU_REF")) {
		err = plan_no_idx(g, re);
		if (err)
			return err;
	}
	if (getenv("NPR_CPU_PROFILE")) {
		int n = g->nnodes ? g->nnodes : 1;

		/* the sums, this run's times, the fastest run's */
		re->prof_ns = calloc(3 * (size_t)n, sizeof(*re->prof_ns));
		if (!re->prof_ns)
			goto nomem;
		re->prof_cur = re->prof_ns + n;
		re->prof_min = re->prof_ns + 2 * n;
		if (atoi(getenv("NPR_CPU_PROFILE")) >= 3) {
			re->pstats = calloc(n, sizeof(*re->pstats));
			if (!re->pstats)
				goto nomem;
		}
	}
	for (i = 0; i < g->nnodes; i++) {
		struct npr_node *n = &g->nodes[i];
		bool src = n->op->flags & NPR_OP_SOURCE;

		if (n->dead || (n->op->flags & NPR_OP_SINK))
			continue;
		if (src && strcmp(n->type, "Parameter"))
			continue;	/* constants */
		if (!src) {
			if (!n->op->eval)
				return npr_node_err(n, -EOPNOTSUPP,
						    "the cpu device has no kernel for this op");
			if (re->fast[i] != &absorbed_mark) {
				if (npr_node_dynamic(g, n)) {
					if (n->op->flags & NPR_OP_BODIES)
						return npr_node_err(n, -EOPNOTSUPP,
								    "a sub-graph op with shapes that depend on input values is not supported");
					re->dyn[re->nsteps] = true;
					re->ndyn++;
				}
				re->fast[re->nsteps] = re->fast[i];
				re->steps[re->nsteps++] = i;
			} else {
				re->fused[i] = true;
			}
			if (n->nin > re->max_in)
				re->max_in = n->nin;
			if (n->nout > re->max_out)
				re->max_out = n->nout;
		}
		for (j = 0; j < n->nout; j++) {
			struct npr_value *v = npr_out(g, n, j);
			size_t bytes = npr_tensor_bytes(v->type,
							npr_shape_numel(&v->shape));

			if (v->data || !npr_shape_static(&v->shape))
				continue;	/* constant, or sized per run */
			re->off[n->out[j]] = re->arena_bytes;
			re->arena_bytes += (bytes + 63) & ~(size_t)63;
		}
	}
	err = check_held(g, re);
	if (err)
		return err;
	plan_groups(ex, re);
	return plan_memory(ex, re);
nomem:
	return -ENOMEM;
}

static int cmp_prep(const void *a, const void *b)
{
	const struct npr_prep_buf *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return x->index - y->index;
}

/*
 * The packed weights of every fast convolution, for the blob: opaque
 * bytes, in the layout prep_layout() names.  Import hands them back and
 * compile uses them in place instead of packing again.
 */
static int cpu_prepared(const struct npr_exec *ex, struct npr_prepared **out)
{
	const struct ref_exec *re = ex->priv;
	struct npr_prepared *prep;
	int i, k, n = 0, cnt;

	*out = NULL;
	for (i = 0; i < re->nsteps; i++) {
		const struct ref_fast *f = re->fast[i];

		if (f && f != &absorbed_mark && f != &noop_mark)
			n += npr_conv_plan_prepared(f->conv, NULL, NULL, 0);
	}
	if (!n)
		return 0;
	prep = calloc(1, sizeof(*prep) + sizeof(prep->buf[0]) * n);
	if (!prep)
		return -ENOMEM;
	prep_layout(prep->layout, sizeof(prep->layout));
	for (i = 0; i < re->nsteps; i++) {
		const struct ref_fast *f = re->fast[i];
		const void **buf;
		size_t *bytes;

		if (!f || f == &absorbed_mark || f == &noop_mark)
			continue;
		cnt = npr_conv_plan_prepared(f->conv, NULL, NULL, 0);
		buf = malloc(sizeof(*buf) * cnt);
		bytes = malloc(sizeof(*bytes) * cnt);
		if (!buf || !bytes) {
			free(buf);
			free(bytes);
			free(prep);
			return -ENOMEM;
		}
		npr_conv_plan_prepared(f->conv, buf, bytes, cnt);
		for (k = 0; k < cnt; k++) {
			prep->buf[prep->n].node = f->head;
			prep->buf[prep->n].index = k;
			prep->buf[prep->n].data = buf[k];
			prep->buf[prep->n].bytes = bytes[k];
			prep->n++;
		}
		free(buf);
		free(bytes);
	}
	qsort(prep->buf, prep->n, sizeof(prep->buf[0]), cmp_prep);
	*out = prep;
	return 0;
}

static void cpu_request_destroy(struct npr_request *rq)
{
	struct ref_request *rr = rq->priv;
	struct npr_graph *g = rq->ex->g;
	int i;

	for (i = 0; rr->rnodes && i < g->nnodes; i++)
		free(rr->rnodes[i].params);
	for (i = 0; rr->dbuf && i < g->nvals; i++)
		free(rr->dbuf[i]);
	free(rr->rnodes);
	free(rr->rvals);
	free(rr->dbuf);
	free(rr->dcap);
	free(rr->arena);
	free(rr->t);
	free(rr->in_buf);
	free(rr->out_buf);
	free(rr);
	rq->priv = NULL;
}

/* A request's copy of the values and of the dynamic nodes (parsed). */
static int dyn_request_create(struct ref_exec *re, struct ref_request *rr,
			      struct npr_graph *g)
{
	int i, err;

	rr->rvals = malloc(sizeof(*rr->rvals) * (g->nvals ? g->nvals : 1));
	rr->rnodes = calloc(g->nnodes ? g->nnodes : 1, sizeof(*rr->rnodes));
	rr->dbuf = calloc(g->nvals ? g->nvals : 1, sizeof(*rr->dbuf));
	rr->dcap = calloc(g->nvals ? g->nvals : 1, sizeof(*rr->dcap));
	if (!rr->rvals || !rr->rnodes || !rr->dbuf || !rr->dcap)
		return -ENOMEM;
	memcpy(rr->rvals, g->vals, sizeof(*rr->rvals) * g->nvals);
	rr->rg = *g;
	rr->rg.vals = rr->rvals;
	for (i = 0; i < re->nsteps; i++) {
		int k = re->steps[i];
		struct npr_node *n = &rr->rnodes[k];

		if (!re->dyn[i])
			continue;
		*n = g->nodes[k];
		n->params = NULL;
		if (n->op->parse) {
			err = n->op->parse(&rr->rg, n);
			if (err)
				return err;
		}
	}
	return 0;
}

/*
 * Run dynamic step @node: infer its output shapes from the actual inputs
 * (values included) in the request's copy of the graph, give the outputs
 * buffers, run the kernel.
 */
static int run_dynamic(struct ref_request *rr, const struct npr_graph *g,
		       int node)
{
	struct npr_node *n = &rr->rnodes[node];
	char b[128];
	int j, err;

	for (j = 0; j < n->nin; j++) {
		struct npr_value *v = &rr->rvals[n->in[j]];
		const struct npr_tensor *t = &rr->t[n->in[j]];

		v->type = t->type;
		v->shape = t->shape;
		v->data = t->data;
		v->nbytes = t->nbytes;
	}
	err = n->op->infer(&rr->rg, n);
	for (j = 0; j < n->nout; j++) {
		struct npr_value *v = &rr->rvals[n->out[j]];

		/* an infer that computed the output itself (ShapeOf):
		 * the kernel computes it again below */
		if (v->owned != g->vals[n->out[j]].owned)
			free(v->owned);
		v->owned = g->vals[n->out[j]].owned;
		v->data = NULL;
	}
	if (err)
		return npr_err_default(err, 0);
	for (j = 0; j < n->nout; j++) {
		int o = n->out[j];
		struct npr_value *v = &rr->rvals[o];
		struct npr_tensor *t = &rr->t[o];
		int64_t numel = npr_shape_numel(&v->shape);
		size_t bytes = npr_tensor_bytes(v->type, numel);

		if (numel < 0 || !npr_elem_size(v->type))
			return npr_node_err(n, -EINVAL,
					    "output %d: shape %s %s at run time",
					    j, npr_shape_str(&v->shape, b, sizeof(b)),
					    numel < 0 ? "is not static" :
					    "has no element size");
		if (bytes > DYN_MAX_BYTES || (size_t)numel > DYN_MAX_BYTES)
			return npr_node_err(n, -EFBIG,
					    "output %d: shape %s from the input values needs %zu bytes, more than the %zu allowed",
					    j, npr_shape_str(&v->shape, b, sizeof(b)),
					    bytes, DYN_MAX_BYTES);
		if (bytes > rr->dcap[o] || !rr->dbuf[o]) {
			void *p = npr_alloc(bytes);

			if (!p)
				return -ENOMEM;
			free(rr->dbuf[o]);
			rr->dbuf[o] = p;
			rr->dcap[o] = bytes;
		}
		t->type = v->type;
		t->shape = v->shape;
		t->data = rr->dbuf[o];
		t->nbytes = bytes;
	}
	for (j = 0; j < n->nin; j++)
		rr->in_buf[j] = rr->t[n->in[j]];
	for (j = 0; j < n->nout; j++)
		rr->out_buf[j] = rr->t[n->out[j]];
	return n->op->eval(n, rr->in_buf, rr->out_buf);
}

static int cpu_request_create(struct npr_request *rq)
{
	struct npr_exec *ex = rq->ex;
	struct ref_exec *re = ex->priv;
	struct npr_graph *g = ex->g;
	struct ref_request *rr;
	int i;

	rr = calloc(1, sizeof(*rr));
	if (!rr)
		return -ENOMEM;
	rq->priv = rr;
	rr->arena = npr_alloc(re->arena_bytes);
	rr->t = calloc(g->nvals ? g->nvals : 1, sizeof(*rr->t));
	rr->in_buf = calloc(re->max_in + 1, sizeof(*rr->in_buf));
	rr->out_buf = calloc(re->max_out + 1, sizeof(*rr->out_buf));
	if (!rr->arena || !rr->t || !rr->in_buf || !rr->out_buf)
		return -ENOMEM;
	for (i = 0; i < g->nvals; i++) {
		struct npr_value *v = &g->vals[i];
		struct npr_tensor *t = &rr->t[i];

		t->type = v->type;
		t->shape = v->shape;
		t->nbytes = npr_tensor_bytes(v->type, npr_shape_numel(&v->shape));
		if (v->data)
			t->data = (void *)v->data;
		else if (re->off[i] != SIZE_MAX)
			t->data = (char *)rr->arena + re->off[i];
	}
	return re->ndyn ? dyn_request_create(re, rr, g) : 0;
}

/*
 * Value @v's tensor for images [@b0, @b0 + @nb) of the batch; a value
 * that lives inside the groups has one group's slot, the same for all.
 */
static struct npr_tensor slice_of(const struct ref_request *rr,
				  const struct ref_exec *re,
				  const struct npr_graph *g, int v,
				  int64_t b0, int64_t nb)
{
	struct npr_tensor t = rr->t[v];
	size_t per;

	if (!nb || g->vals[v].data)
		return t;	/* the whole batch, or a constant */
	per = t.nbytes / re->batch;
	if (!re->gslot[v])
		t.data = (char *)t.data + per * b0;
	t.nbytes = per * nb;
	t.shape.d[0] = nb;
	return t;
}

/* prof: the step's time; a grouped step adds its groups' times up */
static void prof_add(struct npr_request *rq, int node, uint64_t ns,
		     const char *kernel, bool first)
{
	if (!rq->prof)
		return;
	if (first)
		rq->prof[node].ns = 0;
	rq->prof[node].ns += ns;
	rq->prof[node].kernel = kernel;
}

/* NPR_CPU_PROFILE: step @i took @ns (of a group, when grouped) */
static void prof_step(struct ref_exec *re, int i, uint64_t ns)
{
	re->prof_ns[i] += ns;
	re->prof_cur[i] += ns;
}

/* NPR_CPU_PROFILE: a run is over; keep each step's fastest time */
static void prof_run_end(struct ref_exec *re, uint64_t ns)
{
	int i;

	re->prof_infer_ns += ns;
	for (i = 0; i < re->nsteps; i++) {
		if (re->prof_runs == 1 || re->prof_cur[i] < re->prof_min[i])
			re->prof_min[i] = re->prof_cur[i];
		re->prof_cur[i] = 0;
	}
}

/*
 * Run step @i on images [@b0, @b0 + @nb) of the batch, or (@nb 0) on the
 * whole batch.
 */
static int run_step(struct npr_request *rq, int i, int64_t b0, int64_t nb)
{
	struct npr_exec *ex = rq->ex;
	struct ref_exec *re = ex->priv;
	struct ref_request *rr = rq->priv;
	struct npr_graph *g = ex->g;
	const struct npr_node *n = &g->nodes[re->steps[i]];
	const struct ref_fast *f = re->fast[i];
	uint64_t t0 = re->prof_ns || rq->prof ? npr_now_ns() : 0;
	bool first = b0 == 0 || !nb;
	int j, err;

	if (f == &noop_mark) {
		if (rq->prof)
			rq->prof[re->steps[i]].fused = true;
		return 0;
	}
	if (re->dyn[i]) {
		err = run_dynamic(rr, g, re->steps[i]);
		if (re->prof_ns)
			prof_step(re, i, npr_now_ns() - t0);
		prof_add(rq, re->steps[i], npr_now_ns() - t0, "ref", true);
		return err;
	}
	if (f) {
		struct npr_tensor x = slice_of(rr, re, g, f->x, b0, nb);
		struct npr_tensor y = slice_of(rr, re, g, f->y, b0, nb);
		struct npr_tensor r = { 0 };

		if (f->res >= 0)
			r = slice_of(rr, re, g, f->res, b0, nb);
		if (nb)
			err = npr_conv_plan_run_n(f->conv, x.data, y.data,
						  r.data, nb);
		else
			err = npr_conv_plan_run(f->conv, x.data, y.data,
						r.data);
		if (re->prof_ns)
			prof_step(re, i, npr_now_ns() - t0);
		/* the time is the convolution's; the node the step sits at
		 * was fused into it */
		prof_add(rq, f->head, npr_now_ns() - t0,
			 npr_conv_plan_kernel(f->conv), first);
		if (rq->prof && re->steps[i] != f->head)
			rq->prof[re->steps[i]].fused = true;
		return err;
	}
	for (j = 0; j < n->nin; j++)
		rr->in_buf[j] = slice_of(rr, re, g, n->in[j], b0, nb);
	for (j = 0; j < n->nout; j++)
		rr->out_buf[j] = slice_of(rr, re, g, n->out[j], b0, nb);
	if (re->no_idx && re->no_idx[re->steps[i]])
		rr->out_buf[1].data = NULL;
	err = n->op->eval(n, rr->in_buf, rr->out_buf);
	if (re->prof_ns)
		prof_step(re, i, npr_now_ns() - t0);
	prof_add(rq, re->steps[i], npr_now_ns() - t0, "ref", first);
	return err;
}

static int cpu_infer(struct npr_request *rq)
{
	struct npr_exec *ex = rq->ex;
	struct ref_exec *re = ex->priv;
	struct ref_request *rr = rq->priv;
	struct npr_graph *g = ex->g;
	int i, err = 0, old;
	int64_t b0 = 0, group;
	uint64_t t_run = 0;

	for (i = 0; i < ex->nin; i++) {
		int v = ex->in[i].value;
		struct npr_tensor *t = &rr->t[v];
		size_t numel = npr_shape_numel(&t->shape);

		if (re->off[v] == SIZE_MAX)
			continue;	/* input no output depends on */
		/*
		 * The request's own buffer (64-byte aligned, padded like an
		 * arena slot) in the compute type is read in place: no step
		 * writes a model input, and the copy was a serial pass over
		 * the batch before the first step (4.8 MB at batch 8).
		 */
		if (rq->in[i].type == t->type && rq->in[i].data == rq->own_in[i] &&
		    !re->copy_inputs) {
			t->data = rq->in[i].data;
			continue;
		}
		t->data = (char *)rr->arena + re->off[v];
		err = npr_convert(t->data, t->type, rq->in[i].data,
				  rq->in[i].type, numel);
		if (err)
			return npr_err(err, "input %s: cannot convert %s to %s",
				       ex->in[i].name,
				       npr_elem_name(rq->in[i].type),
				       npr_elem_name(t->type));
	}
	old = npr_par_set_limit(re->threads);
	if (re->prof_ns) {
		re->prof_runs++;
		t_run = npr_now_ns();
	}
	/*
	 * Groups of as many images as threads, up to the planned size: one
	 * thread runs best image by image (the smallest working set), two
	 * take an image each.
	 */
	group = re->group;
	if (!re->group_set && npr_par_threads() < group)
		group = npr_par_threads();
	/* the grouped steps, a group of images at a time; then the rest */
	for (i = 0; i < re->nsteps; i++) {
		int64_t nb = 0;

		if (i < re->gsteps) {
			nb = re->batch - b0 < group ? re->batch - b0 : group;
		}
		/* a ring CANCEL of this running job: stop at a node boundary */
		if (__atomic_load_n(&rq->cancel, __ATOMIC_RELAXED)) {
			err = npr_err(-ECANCELED, "cancelled while running, after %d of %d steps",
				      i, re->nsteps);
			break;
		}
		if (re->pstats)
			npr_par_stats_attach(&re->pstats[i]);
		err = run_step(rq, i, b0, nb);
		if (re->pstats)
			npr_par_stats_attach(NULL);
		if (err)
			break;
		if (i == re->gsteps - 1 && b0 + nb < re->batch) {
			b0 += nb;
			i = -1;		/* the next group from step 0 */
		}
	}
	/* nodes a fused step did the work of (not the convolutions) */
	for (i = 0; rq->prof && i < g->nnodes; i++)
		if (re->fused[i] && !rq->prof[i].kernel)
			rq->prof[i].fused = true;
	npr_par_set_limit(old);
	if (re->prof_ns)
		prof_run_end(re, npr_now_ns() - t_run);
	if (err)
		return npr_err_default(err, 0);
	for (i = 0; i < ex->nout; i++) {
		struct npr_tensor *t = &rr->t[ex->out[i].value];
		size_t numel = npr_shape_numel(&t->shape);

		if (!npr_shape_static(&ex->out[i].shape)) {
			err = npr_request_out_shape(rq, i, &t->shape);
			if (err)
				return err;
		}
		err = npr_convert(rq->out[i].data, rq->out[i].type, t->data,
				  t->type, numel);
		if (err)
			return npr_err(err, "output %s: cannot convert %s to %s",
				       ex->out[i].name, npr_elem_name(t->type),
				       npr_elem_name(rq->out[i].type));
	}
	return 0;
}

const struct npr_backend_ops npr_cpu_backend_ops = {
	.api_version = NPR_BACKEND_API_VERSION,
	.name = "cpu",
	.caps = NPR_BACKEND_CAP_DYNAMIC_SHAPES,
	.probe = cpu_probe,
	.compile = cpu_compile,
	.exec_destroy = cpu_exec_destroy,
	.request_create = cpu_request_create,
	.request_destroy = cpu_request_destroy,
	.infer = cpu_infer,
	.prepared = cpu_prepared,
	.held = cpu_held,
};
