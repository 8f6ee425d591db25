// SPDX-License-Identifier: MIT
/*
 * The CPU backend's compile-time plans (ref/backend.c makes the step
 * list between them):
 *
 * npr_cpu_plan_kernels(): before the step list, which steps a fast
 *   kernel does: every convolution with constant weights gets a plan
 *   (ref/conv) that also does the nodes after it the fusion pass
 *   matched (lib/passes/fuse.c); weights packed in a blob are used in
 *   place; MaxPools whose indices no one reads.
 * npr_cpu_plan_arena(): after it, the memory: Concats done in place,
 *   batch groups (the leading steps a few images at a time), and the
 *   arena layout (values whose lifetimes do not overlap share bytes).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "object.h"
#include "ops/shape.h"
#include "passes/fuse.h"
#include "cpu.h"
#include "error.h"
#include "plan.h"
#include "sys.h"

struct ref_fast npr_cpu_absorbed_mark;
struct ref_fast npr_cpu_noop_mark;

/**
 * npr_cpu_prep_layout() - the layout of the prepared buffers this build
 * and CPU make
 * @buf: Out. The layout's name, for a blob's prepared constants.
 * @len: size of @buf.
 */
void npr_cpu_prep_layout(char *buf, size_t len)
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
 * Fast kernels: every convolution with constant weights gets a plan, and
 * absorbs the nodes after it the fusion pass (lib/passes/fuse.c) matched
 * and the plan can do.  The fused step runs where the last absorbed node
 * was (the residual is ready there); absorbed nodes are marked in
 * re->fast with a sentinel.
 */
static int plan_fast(struct npr_graph *g, struct ref_exec *re,
		     const struct npr_prepared *prep)
{
	struct npr_fuse fu;
	int i, j, err = 0, cur = 0;

	if (npr_env(NPR_ENV_CPU_REF))
		return 0;
	err = npr_fuse_init(&fu, g);
	if (err)
		return err;
	for (i = 0; i < g->nnodes; i++) {
		struct npr_node *n = &g->nodes[i];
		struct npr_conv_plan *plan;
		struct npr_fusion fusion;
		struct ref_fast *f;
		int abs[NPR_FUSION_MAX], nabs, last;

		if (n->dead || re->fast[i] || ref_node_dyn(re, g, i))
			continue;
		/* weights without data: only from the prepared buffers */
		if (n->nin > 1 && !npr_in(g, n, 1)->data &&
		    !prep_for(prep, cur, i))
			continue;
		if (npr_fuse_match(&fu, i, &fusion))
			continue;
		/* from a blob: the packed weights are there already */
		err = npr_conv_plan_build(g, &fusion, !prep, &plan);
		if (err == -EOPNOTSUPP) {
			err = 0;
			continue;
		}
		if (err < 0)
			break;
		nabs = fusion.nabsorbed;
		memcpy(abs, fusion.absorbed, sizeof(int) * nabs);
		if (err)	/* the plan does the tail too */
			abs[nabs++] = fusion.tail_node;
		err = 0;
		if (prep) {
			err = plan_prepared(prep, &cur, g, i, plan);
			if (err) {
				npr_conv_plan_free(plan);
				break;
			}
		}
		for (j = 0; j < nabs; j++)
			if (ref_node_dyn(re, g, abs[j]))
				break;
		if (j < nabs) {
			npr_conv_plan_free(plan);
			err = 0;
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
		hold_weights(g, n, fu.uses, f);
		f->x = n->in[0];
		f->res = fusion.residual;
		last = nabs ? abs[nabs - 1] : i;
		f->y = g->nodes[last].out[0];
		npr_fuse_take(&fu, &fusion, nabs > fusion.nabsorbed);
		for (j = 0; j < nabs; j++)
			re->fast[abs[j]] = &npr_cpu_absorbed_mark;
		if (nabs)
			re->fast[i] = &npr_cpu_absorbed_mark;
		re->fast[last] = f;
	}
	npr_fuse_fini(&fu);
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
	struct npr_graph *g = re->g;
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
	if (npr_env(NPR_ENV_CPU_REF)) {
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
		re->fast[s] = &npr_cpu_noop_mark;
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

	if (re->dyn[s] || f == &npr_cpu_noop_mark)
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
	const char *env = npr_env(NPR_ENV_CPU_GROUP_TAIL_MB);
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
	struct npr_graph *g = re->g;
	const char *env = npr_env(NPR_ENV_CPU_GROUP);
	int64_t batch, per = 0, group;
	int i, s;

	re->gsteps = 0;
	if (!ex->nin || npr_env(NPR_ENV_CPU_REF))
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
	struct npr_graph *g = re->g;
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

		if (f == &npr_cpu_noop_mark)
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
	npr_log(NPR_LOG_DEBUG,
		"cpu: %d steps, %d buffers, activation arena %zu bytes (%zu without reuse)",
		re->nsteps, n, peak, naive);
	if (re->gsteps)
		npr_log(NPR_LOG_DEBUG,
			"cpu: steps 0-%d run %lld of %lld images at a time",
			re->gsteps - 1, (long long)re->group,
			(long long)re->batch);
	free(idx);
	free(lt);
	return 0;
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

		if (ref_fast_real(f) || f == &npr_cpu_noop_mark)
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

		if (!ref_fast_real(f))
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
	struct npr_fuse fu;
	int i, err = 0, cur = 0;

	err = npr_fuse_init(&fu, g);
	if (err)
		return err;
	for (i = 0; i < g->nnodes && !err; i++) {
		struct npr_conv_plan *plan = NULL;
		struct npr_fusion fusion;
		struct npr_value *w;

		if (!prep_for(prep, cur, i))
			continue;
		err = npr_fuse_match(&fu, i, &fusion);
		if (!err)
			err = npr_conv_plan_build(g, &fusion, false, &plan);
		if (err < 0) {
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
	npr_fuse_fini(&fu);
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

/**
 * npr_cpu_plan_kernels() - the fast kernels of an exec's steps
 * @ex: the exec being compiled; ex->prep, when set, holds packed weights
 *      from a blob that the plans use in place.
 * @re: its plan, of the graph re->g (ex->g, or the graph of one input
 *      shape signature: ref/signature.c); re->fast (per node, zeroed) gets a struct ref_fast at
 *      the node where each fused step runs and npr_cpu_absorbed_mark at
 *      the nodes whose work it does; re->no_idx is allocated and set
 *      (not with NPR_CPU_REF).
 *
 * With NPR_CPU_REF set nothing is planned (and weights a blob holds
 * packed are unpacked into the graph).
 *
 * Return: 0; -EPROTONOSUPPORT for a blob of another layout
 * (npr_cpu_prep_layout()); -EINVAL for prepared weights that do not fit
 * the graph; -ENOMEM.
 */
int npr_cpu_plan_kernels(struct npr_exec *ex, struct ref_exec *re)
{
	struct npr_graph *g = re->g;
	int err;

	if (ex->prep) {
		char want[64];

		npr_cpu_prep_layout(want, sizeof(want));
		if (strcmp(ex->prep->layout, want))
			return npr_err(-EPROTONOSUPPORT,
				       "blob: weights prepared in layout '%s', this CPU backend uses '%s'",
				       ex->prep->layout, want);
	}
	if (ex->prep && npr_env(NPR_ENV_CPU_REF))
		err = unpack_held(g, ex->prep);
	else
		err = plan_fast(g, re, ex->prep);
	if (err)
		return err;
	if (!npr_env(NPR_ENV_CPU_REF))
		return plan_no_idx(g, re);
	return 0;
}

/**
 * npr_cpu_plan_arena() - the memory of an exec's steps
 * @ex: the exec being compiled (its ports).
 * @re: its plan of re->g, with the step list made; re->off holds the layout
 *      without reuse and re->arena_bytes its size.
 *
 * Replaces re->off and re->arena_bytes with the planned arena, marks
 * Concats done in place (npr_cpu_noop_mark) and sets the batch groups.
 *
 * Return: 0; -EINVAL when a step reads a constant without bytes (a blob
 * that says a plan holds weights it does not hold); -ENOMEM.
 */
int npr_cpu_plan_arena(struct npr_exec *ex, struct ref_exec *re)
{
	int err = check_held(re->g, re);

	if (err)
		return err;
	plan_groups(ex, re);
	return plan_memory(ex, re);
}
