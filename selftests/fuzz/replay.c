// SPDX-License-Identifier: MIT
/*
 * Replay driver: runs files through a fuzz target's
 * LLVMFuzzerTestOneInput() without libFuzzer, in the normal build, so
 * that `make check` replays the regression corpus (selftests/fuzz_test.sh)
 * and a crash found once stays fixed.
 *
 *   fuzz_replay_TARGET [--repeat K] [--warmup W] [--max-growth KB]
 *                      [--max-rss-growth KB] [--leak-per-input BYTES] [-v]
 *                      PATH...
 *
 * PATH is a file or a directory (its regular files, in name order).  With
 * --repeat the whole set runs K times; the process's heap in use
 * (mallinfo2(): uordblks + hblkhd) and its resident size (/proc/self/statm)
 * are measured after the first W rounds (1 unless --warmup says) and after
 * the last, and growth of either beyond --max-growth KB fails: what the
 * first rounds allocate once (thread pools, the C library's cache of
 * thread stacks) is not counted, what every round leaks is.
 * --leak-per-input plants a leak of that many bytes (written, so that they
 * are resident) after every input: the check's own test.
 * Exit status 0, or 1 naming the growth, 2 for a usage or file error.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

struct input {
	char *path;
	uint8_t *data;
	size_t size;
};

static struct input *inputs;
static size_t ninputs, cap;

static int add_file(const char *path)
{
	struct input *in;
	FILE *f = fopen(path, "rb");
	long n;

	if (!f)
		return -errno;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return -EIO;
	}
	if (ninputs == cap) {
		cap = cap ? 2 * cap : 64;
		inputs = realloc(inputs, cap * sizeof(*inputs));
		if (!inputs)
			abort();
	}
	in = &inputs[ninputs];
	/* its own allocation of exactly its size: ASan sees an overread */
	in->data = malloc(n ? n : 1);
	in->path = strdup(path);
	if (!in->data || !in->path)
		abort();
	in->size = fread(in->data, 1, n, f);
	fclose(f);
	if (in->size != (size_t)n)
		return -EIO;
	ninputs++;
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int add_path(const char *path)
{
	struct dirent *e;
	struct stat st;
	char **names = NULL;
	size_t n = 0, i;
	int err = 0;
	DIR *d;

	if (stat(path, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return add_file(path);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char *p;

		if (e->d_name[0] == '.')
			continue;
		if (asprintf(&p, "%s/%s", path, e->d_name) < 0)
			abort();
		if (stat(p, &st) || !S_ISREG(st.st_mode)) {
			free(p);
			continue;
		}
		names = realloc(names, (n + 1) * sizeof(*names));
		if (!names)
			abort();
		names[n++] = p;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_name);
	for (i = 0; i < n; i++) {
		if (!err)
			err = add_file(names[i]);
		free(names[i]);
	}
	free(names);
	return err;
}

/* Heap in use and resident size, in KB. */
static void measure(long *heap_kb, long *rss_kb)
{
	struct mallinfo2 mi = mallinfo2();
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	*heap_kb = (long)((mi.uordblks + mi.hblkhd) / 1024);
	*rss_kb = resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* The last of the bytes plant() lost: stored, so that they are not dropped. */
static void *volatile lost;

/* Lose @n bytes, written. */
static void plant(long n)
{
	void *p = malloc(n);

	if (!p)
		abort();
	memset(p, 1, n);
	lost = p;
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [--repeat K] [--warmup W] [--max-growth KB]\n"
		"       [--max-rss-growth KB] [--leak-per-input BYTES] [-v] PATH...\n",
		prog);
	exit(2);
}

int main(int argc, char **argv)
{
	long repeat = 1, warmup = 1, max_kb = -1, max_rss_kb = -1;
	long heap0 = 0, rss0 = 0, heap1, rss1, leak = 0;
	int verbose = 0, i, err;
	size_t j;
	long k;

	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = atol(argv[++i]);
		else if (!strcmp(argv[i], "--warmup") && i + 1 < argc)
			warmup = atol(argv[++i]);
		else if (!strcmp(argv[i], "--max-growth") && i + 1 < argc)
			max_kb = atol(argv[++i]);
		else if (!strcmp(argv[i], "--max-rss-growth") && i + 1 < argc)
			max_rss_kb = atol(argv[++i]);
		else if (!strcmp(argv[i], "--leak-per-input") && i + 1 < argc)
			leak = atol(argv[++i]);
		else if (!strcmp(argv[i], "-v"))
			verbose = 1;
		else
			usage(argv[0]);
	}
	if (max_rss_kb < 0)
		max_rss_kb = max_kb;
	if (i == argc || repeat < 1 || warmup < 1 || warmup > repeat)
		usage(argv[0]);
	for (; i < argc; i++) {
		err = add_path(argv[i]);
		if (err) {
			fprintf(stderr, "%s: %s: %s\n", argv[0], argv[i],
				strerror(-err));
			return 2;
		}
	}
	for (k = 0; k < repeat; k++) {
		for (j = 0; j < ninputs; j++) {
			if (verbose && !k)
				fprintf(stderr, "%s (%zu bytes)\n",
					inputs[j].path, inputs[j].size);
			LLVMFuzzerTestOneInput(inputs[j].data, inputs[j].size);
			if (leak > 0)
				plant(leak);
		}
		if (k + 1 == warmup)
			measure(&heap0, &rss0);
	}
	measure(&heap1, &rss1);
	printf("%zu inputs, %ld rounds; after round %ld: heap %ld KB, rss %ld KB; after the last: heap %ld KB (%+ld), rss %ld KB (%+ld)\n",
	       ninputs, repeat, warmup, heap0, rss0, heap1, heap1 - heap0,
	       rss1, rss1 - rss0);
	for (j = 0; j < ninputs; j++) {
		free(inputs[j].data);
		free(inputs[j].path);
	}
	free(inputs);
	if (max_kb >= 0 && repeat > warmup &&
	    (heap1 - heap0 > max_kb || rss1 - rss0 > max_rss_kb)) {
		printf("memory grew by %+ld KB of heap and %+ld KB resident over %ld rounds: more than %ld KB / %ld KB\n",
		       heap1 - heap0, rss1 - rss0, repeat - warmup, max_kb,
		       max_rss_kb);
		return 1;
	}
	return 0;
}
