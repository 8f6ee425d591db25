// SPDX-License-Identifier: MIT
/*
 * Profiles of the CPU backend.
 *
 * NPR_CPU_PROFILE=1 sums each step's time over the exec's runs and
 * logs the time per op type when the exec goes away (NPR_LOG_INFO, to
 * the caller's npr_set_log() callback); =2 adds each step (its
 * convolution plan described, GFLOP/s, the fastest run); =3 what the
 * thread pool did in each step.  Apart from that, a request
 * with profiling on (rq->prof, ENABLE_PROFILING) gets each node's time
 * and kernel, and which nodes a fused step did.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "object.h"
#include "cpu.h"
#include "error.h"
#include "profile.h"
#include "sys.h"

/* A line put together piece by piece, then logged. */
struct line {
	char buf[512];
	size_t len;
};

static void __attribute__((format(printf, 2, 3)))
add(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->len >= sizeof(l->buf))
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->len, sizeof(l->buf) - l->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->len += (size_t)n;
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
	struct line l = { .len = 0 };
	int t;

	add(&l, "      pool: loops %.0f (%.0f alone) items",
	    st->loops / r, st->serial / r);
	for (t = 0; t < NPR_PAR_STATS_MAX && (t < 2 || st->items[t]); t++)
		add(&l, "%s%.0f", t ? "/" : " ", st->items[t] / r);
	add(&l, " work");
	for (t = 0; t < NPR_PAR_STATS_MAX && (t < 2 || st->items[t]); t++)
		add(&l, "%s%.3f", t ? "/" : " ", st->work_ns[t] / 1e6 / r);
	add(&l, " ms late %.3f wait %.3f outside loops %.3f ms",
	    st->late_ns[1] / 1e6 / r, st->wait_ns / 1e6 / r,
	    (re->prof_ns[i] > st->span_ns ?
	     re->prof_ns[i] - st->span_ns : 0) / 1e6 / r);
	npr_log(NPR_LOG_INFO, "%s", l.buf);
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
	npr_log(NPR_LOG_INFO,
		"  pool: %.3f ms per inference, steps %.3f, outside steps %.3f; in steps: outside loops %.3f, caller waiting %.3f",
		re->prof_infer_ns / 1e6 / r, steps / 1e6 / r,
		(re->prof_infer_ns > steps ? re->prof_infer_ns - steps : 0) /
		1e6 / r, (steps > span ? steps - span : 0) / 1e6 / r,
		wait / 1e6 / r);
	for (t = 0; t < NPR_PAR_STATS_MAX && (t < 2 || work[t]); t++)
		npr_log(NPR_LOG_INFO,
			"  pool: thread %d worked %.3f ms, idle %.3f ms of the inference",
			t, work[t] / 1e6 / r,
			(re->prof_infer_ns > work[t] ?
			 re->prof_infer_ns - work[t] : 0) / 1e6 / r);
}

/* NPR_CPU_PROFILE=1: time per op type, logged when the exec goes away */
static void profile_print(const struct npr_exec *ex, const struct ref_exec *re)
{
	struct npr_graph *g = re->g;
	uint64_t total = 0;
	int i, j;

	for (i = 0; i < re->nsteps; i++)
		total += re->prof_ns[i];
	npr_log(NPR_LOG_INFO,
		"cpu profile: %.3f ms per inference over %llu runs",
		total / 1e6 / re->prof_runs,
		(unsigned long long)re->prof_runs);
	if (re->prof_level >= 2)
		for (i = 0; i < re->nsteps; i++) {
			const struct ref_fast *f = re->fast[i];
			char desc[128] = "";
			double fl = 0;

			if (f && f != &npr_cpu_noop_mark)
				fl = npr_conv_plan_desc(f->conv, desc,
							sizeof(desc));
			npr_log(NPR_LOG_INFO,
				"  step %3d %-14s %-40s %8.3f ms %6.1f GFLOP/s min %8.3f ms",
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
		const char *ty = re->fast[i] && re->fast[i] != &npr_cpu_noop_mark ?
				 "conv (fused)" : g->nodes[re->steps[i]].type;
		uint64_t sum = 0;
		int cnt = 0;

		for (j = 0; j < i; j++) {
			const char *t2 = re->fast[j] && re->fast[j] != &npr_cpu_noop_mark ?
					 "conv (fused)" : g->nodes[re->steps[j]].type;

			if (!strcmp(ty, t2))
				break;
		}
		if (j < i)
			continue;
		for (j = i; j < re->nsteps; j++) {
			const char *t2 = re->fast[j] && re->fast[j] != &npr_cpu_noop_mark ?
					 "conv (fused)" : g->nodes[re->steps[j]].type;

			if (!strcmp(ty, t2)) {
				sum += re->prof_ns[j];
				cnt++;
			}
		}
		npr_log(NPR_LOG_INFO, "  %-16s %3d steps %8.3f ms %5.1f%%", ty,
			cnt, sum / 1e6 / re->prof_runs, 100.0 * sum / total);
	}
}

/**
 * npr_cpu_prof_init() - NPR_CPU_PROFILE's records for an exec
 * @re: the exec's plan; gets re->prof_ns (and re->pstats with
 *      NPR_CPU_PROFILE=3) when the variable is set.
 * @nnodes: the graph's node count (at least the steps).
 *
 * Return: 0 or -ENOMEM (what was allocated is freed by
 * npr_cpu_prof_fini()).
 */
int npr_cpu_prof_init(struct ref_exec *re, int nnodes)
{
	const char *env = npr_env(NPR_ENV_CPU_PROFILE);
	int n = nnodes ? nnodes : 1;

	if (!env)
		return 0;
	re->prof_level = atoi(env);
	/* the sums, this run's times, the fastest run's */
	re->prof_ns = calloc(3 * (size_t)n, sizeof(*re->prof_ns));
	if (!re->prof_ns)
		return -ENOMEM;
	re->prof_cur = re->prof_ns + n;
	re->prof_min = re->prof_ns + 2 * n;
	if (re->prof_level >= 3) {
		re->pstats = calloc(n, sizeof(*re->pstats));
		if (!re->pstats)
			return -ENOMEM;
	}
	return 0;
}

/**
 * npr_cpu_prof_fini() - log NPR_CPU_PROFILE's records and free them
 * @ex: the exec, for its graph's node types.
 * @re: its plan.
 *
 * Context: when the exec goes away; no request runs.
 */
void npr_cpu_prof_fini(const struct npr_exec *ex, struct ref_exec *re)
{
	if (re->prof_ns && re->prof_runs)
		profile_print(ex, re);
	free(re->prof_ns);
	free(re->pstats);
	re->prof_ns = NULL;
	re->pstats = NULL;
}

/**
 * npr_cpu_prof_add() - a request's profile record of a node
 * @rq: the request; nothing is done without rq->prof.
 * @node: the node the time is the work of.
 * @ns: the time.
 * @kernel: the kernel's name, a static string.
 * @first: the first part of the step (a grouped step adds its groups'
 *         times up).
 */
void npr_cpu_prof_add(struct npr_request *rq, int node, uint64_t ns,
		      const char *kernel, bool first)
{
	if (!rq->prof)
		return;
	/* it ran: no longer fused, if an earlier inference skipped it */
	if (first) {
		rq->prof[node].ns = 0;
		rq->prof[node].fused = false;
	}
	rq->prof[node].ns += ns;
	rq->prof[node].kernel = kernel;
}

/**
 * npr_cpu_prof_step() - NPR_CPU_PROFILE: step @i took @ns
 * @re: the exec's plan, with re->prof_ns.
 * @i: the step.
 * @ns: its time (of a group, when grouped).
 *
 * Context: the request's thread; requests of one exec profiled at once
 * add up unsynchronised (as they always did).
 */
void npr_cpu_prof_step(struct ref_exec *re, int i, uint64_t ns)
{
	re->prof_ns[i] += ns;
	re->prof_cur[i] += ns;
}

/**
 * npr_cpu_prof_run_end() - NPR_CPU_PROFILE: a run is over
 * @re: the exec's plan, with re->prof_ns.
 * @ns: the run's time, inputs to outputs; each step's fastest is kept.
 */
void npr_cpu_prof_run_end(struct ref_exec *re, uint64_t ns)
{
	int i;

	re->prof_infer_ns += ns;
	for (i = 0; i < re->nsteps; i++) {
		if (re->prof_runs == 1 || re->prof_cur[i] < re->prof_min[i])
			re->prof_min[i] = re->prof_cur[i];
		re->prof_cur[i] = 0;
	}
}
