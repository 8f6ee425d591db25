// SPDX-License-Identifier: MIT
/*
 * npr-cache: look after a model cache directory (CACHE_DIR): list its
 * entries, check them, prune them, and say why a model misses.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "json.h"
#include "npuring.h"
#include "tool.h"

static const char usage[] =
"usage: npr-cache [-C DIR] [--json] list\n"
"       npr-cache [-C DIR] [--json] verify\n"
"       npr-cache [-C DIR] [--json] prune --max-mb N\n"
"       npr-cache [-C DIR] [--json] why -m MODEL [-d DEVICE]\n"
"                              [--shape NAME=DIMS] [--prop NAME=VALUE ...]\n"
"       npr-cache --version\n"
"\n"
"DIR is the cache directory (CACHE_DIR), by default $NPR_CACHE_DIR.\n"
"MODEL is an IR .xml (with its .bin) or an ONNX .onnx file.  --shape\n"
"also takes NAME[D0,D1,...] and [D0,D1,...]; --json prints one JSON\n"
"object instead of text.\n"
"\n"
"  list    every entry: key, model, device, size, last use\n"
"  verify  import every entry on its device; report those that fail\n"
"  prune   remove least recently used entries until the directory holds\n"
"          at most N MiB\n"
"  why     compile MODEL as the options say, and tell whether it is in\n"
"          the cache, or else which part of the key differs from the\n"
"          entries of the same model\n"
"\n"
"Exit status: 0 on success (why: the model is in the cache; verify: no\n"
"bad entry), 1 on failure (why: not in the cache; verify: a bad entry),\n"
"2 on a usage error.\n";

#define fail npr_tool_fail

/* --json: the writer, else NULL for text */
static struct npr_json *js;

/* A --prop or --shape error: the user's (status 2) or not (1). */
static void __attribute__((noreturn)) fail_arg(int err, const char *msg)
{
	if (npr_arg_is_usage(err))
		npr_tool_usage("%s", msg);
	fail("%s", msg);
}

struct entry {
	char key[33];
	char meta[10240];	/* the .meta text */
	off_t size;
	struct timespec used;
};

/* The value of line "NAME=" in a .meta text, into @out. */
static const char *meta_get(const char *meta, const char *name, char *out,
			    size_t len)
{
	size_t n = strlen(name);
	const char *p = meta;

	while (p && *p) {
		if (!strncmp(p, name, n) && p[n] == '=') {
			size_t l = strcspn(p + n + 1, "\n");

			snprintf(out, len, "%.*s", (int)l, p + n + 1);
			return out;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	snprintf(out, len, "?");
	return out;
}

static int cmp_used(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->used.tv_sec != y->used.tv_sec)
		return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
	if (x->used.tv_nsec != y->used.tv_nsec)
		return x->used.tv_nsec < y->used.tv_nsec ? -1 : 1;
	return 0;
}

/* Every KEY.blob of @dir, least recently used first. */
static struct entry *scan(const char *dir, int *count)
{
	struct entry *e = NULL;
	int n = 0, cap = 0;
	struct dirent *d;
	DIR *dp = opendir(dir);

	if (!dp)
		fail("%s: %s", dir, strerror(errno));
	while ((d = readdir(dp))) {
		char path[4200];
		struct stat st;
		FILE *f;
		size_t got;

		if (strlen(d->d_name) != 37 || strcmp(d->d_name + 32, ".blob"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		if (stat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			e = realloc(e, cap * sizeof(*e));
			if (!e)
				fail("out of memory");
		}
		memset(&e[n], 0, sizeof(e[n]));
		memcpy(e[n].key, d->d_name, 32);
		e[n].size = st.st_size;
		e[n].used = st.st_mtim;
		snprintf(path, sizeof(path), "%s/%.32s.meta", dir, d->d_name);
		f = fopen(path, "r");
		if (f) {
			got = fread(e[n].meta, 1, sizeof(e[n].meta) - 1, f);
			e[n].meta[got] = 0;
			fclose(f);
		}
		n++;
	}
	closedir(dp);
	if (n)
		qsort(e, n, sizeof(*e), cmp_used);
	*count = n;
	return e;
}

static void cmd_list(const char *dir)
{
	int n, i;
	struct entry *e = scan(dir, &n);
	long long total = 0;

	if (js) {
		npr_json_begin_object(js);
		npr_json_key(js, "entries");
		npr_json_begin_array(js);
	} else {
		printf("%-32s  %-24s %-6s %10s  %s\n", "key", "model",
		       "device", "bytes", "last use");
	}
	for (i = n - 1; i >= 0; i--) {
		char name[256], dev[32], when[64];
		struct tm tm;

		localtime_r(&e[i].used.tv_sec, &tm);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
		meta_get(e[i].meta, "name", name, sizeof(name));
		meta_get(e[i].meta, "backend", dev, sizeof(dev));
		total += e[i].size;
		if (!js) {
			printf("%s  %-24.24s %-6.6s %10lld  %s\n", e[i].key,
			       name, dev, (long long)e[i].size, when);
			continue;
		}
		npr_json_begin_object(js);
		npr_json_kv_string(js, "key", e[i].key);
		npr_json_kv_string(js, "model", name);
		npr_json_kv_string(js, "device", dev);
		npr_json_kv_int(js, "bytes", e[i].size);
		npr_json_kv_int(js, "last_use", e[i].used.tv_sec);
		npr_json_end_object(js);
	}
	if (js) {
		npr_json_end_array(js);
		npr_json_kv_int(js, "count", n);
		npr_json_kv_int(js, "bytes", total);
		npr_json_end_object(js);
	} else {
		printf("%d entries, %lld bytes\n", n, total);
	}
	free(e);
}

/* One entry's verdict: "ok", "bad" or "skipped" (no such device). */
static void verify_line(const char *key, const char *status,
			const char *why, const char *dev)
{
	if (js) {
		npr_json_begin_object(js);
		npr_json_kv_string(js, "key", key);
		npr_json_kv_string(js, "device", dev);
		npr_json_kv_string(js, "status", status);
		if (why)
			npr_json_kv_string(js, "error", why);
		npr_json_end_object(js);
	} else if (!strcmp(status, "skipped")) {
		printf("%s  skipped: no %s device (%s)\n", key, dev, why);
	} else if (why) {
		printf("%s  BAD: %s\n", key, why);
	} else {
		printf("%s  ok\n", key);
	}
}

static int cmd_verify(const char *dir)
{
	int n, i, bad = 0;
	struct entry *e = scan(dir, &n);

	if (js) {
		npr_json_begin_object(js);
		npr_json_key(js, "entries");
		npr_json_begin_array(js);
	}
	for (i = 0; i < n; i++) {
		char path[4200], dev[32];
		struct npr_import ia = { .size = sizeof(ia) };
		struct stat st;
		void *buf;
		FILE *f;
		int fd, err;

		snprintf(path, sizeof(path), "%s/%s.blob", dir, e[i].key);
		if (stat(path, &st) || !(buf = malloc(st.st_size ? st.st_size : 1)))
			fail("%s: %s", path, strerror(errno));
		f = fopen(path, "rb");
		if (!f || fread(buf, 1, st.st_size, f) != (size_t)st.st_size)
			fail("%s: cannot read", path);
		fclose(f);
		meta_get(e[i].meta, "backend", dev, sizeof(dev));
		fd = npr_open(strcmp(dev, "?") ? dev : "cpu", 0);
		if (fd < 0) {
			verify_line(e[i].key, "skipped", npr_last_error(), dev);
			free(buf);
			continue;
		}
		ia.data = (uintptr_t)buf;
		ia.bytes = st.st_size;
		err = npr_ioctl(fd, NPR_IOCTL_IMPORT, &ia);
		verify_line(e[i].key, err ? "bad" : "ok",
			    err ? npr_last_error() : NULL, dev);
		bad += !!err;
		npr_close(fd);
		free(buf);
	}
	if (js) {
		npr_json_end_array(js);
		npr_json_kv_int(js, "count", n);
		npr_json_kv_int(js, "bad", bad);
		npr_json_end_object(js);
	} else {
		printf("%d entries, %d bad\n", n, bad);
	}
	free(e);
	return bad ? 1 : 0;
}

static void cmd_prune(const char *dir, long long max_mb)
{
	long long total = 0, max = max_mb << 20;
	int n, i, removed = 0;
	struct entry *e = scan(dir, &n);

	for (i = 0; i < n; i++)
		total += e[i].size;
	for (i = 0; i < n && total > max; i++) {
		char path[4200];

		snprintf(path, sizeof(path), "%s/%s.blob", dir, e[i].key);
		if (unlink(path))
			continue;
		snprintf(path, sizeof(path), "%s/%s.meta", dir, e[i].key);
		unlink(path);
		total -= e[i].size;
		removed++;
	}
	if (js) {
		npr_json_begin_object(js);
		npr_json_kv_int(js, "removed", removed);
		npr_json_kv_int(js, "count", n);
		npr_json_kv_int(js, "bytes_left", total);
		npr_json_end_object(js);
	} else {
		printf("removed %d of %d entries, %lld bytes left\n", removed,
		       n, total);
	}
	free(e);
}

static int rm_one(const char *p, const struct stat *st, int flag,
		  struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(p);
}

/* The lines of a key a "why" compares; "?" where an entry has none. */
static const char *const key_lines[] = {
	"model", "file", "bin", "shapes", "backend", "arch", "version",
	"caching",
};
#define NKEY_LINES	(int)(sizeof(key_lines) / sizeof(key_lines[0]))

/*
 * Compile @model into the cache @scratch, its files read at the load
 * (@defer false: the entry is keyed by the model's contents) or when
 * needed (NPR_MODEL_LOAD_DEFER: keyed by its files).
 */
static void why_compile(const char *scratch, const char *dev,
			const char *model, bool defer,
			const struct npr_arg_shape *shapes, int nshapes,
			char **props, int nprops)
{
	struct npr_model_load ml;
	struct npr_compile co;
	struct npr_prop_arg pa = { .param = NPR_PARAM_CACHE_DIR,
				   .value = (uintptr_t)scratch };
	struct npr_shape_arg *sh = calloc(nshapes + 1, sizeof(*sh));
	char msg[2048];
	int fd = npr_open(dev, 0), err, i;

	if (fd < 0)
		fail("%s: %s", dev, npr_last_error());
	if (!sh)
		fail("out of memory");
	for (i = 0; i < nprops; i++)
		if ((err = npr_arg_set_prop(fd, props[i], msg, sizeof(msg))))
			fail_arg(err, msg);
	npr_prep_model_load(&ml, model, NULL);
	if (defer)
		ml.flags = NPR_MODEL_LOAD_DEFER;
	if (npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml))
		fail("%s: %s", model, npr_last_error());
	err = npr_arg_resolve_shapes(fd, ml.handle, shapes, nshapes, sh, msg,
				     sizeof(msg));
	if (err)
		fail_arg(err, msg);
	npr_prep_compile(&co, ml.handle);
	co.props = (uintptr_t)&pa;
	co.num_props = 1;
	co.shapes = (uintptr_t)sh;
	co.num_shapes = nshapes;
	err = npr_ioctl(fd, NPR_IOCTL_COMPILE, &co);
	if (err)
		fail("compile: %s", npr_last_error());
	npr_close(fd);
	free(sh);
}

/* An entry keyed by the model's files (a file= line), not its contents. */
static bool by_file(const struct entry *e)
{
	return !strncmp(e->meta, "file=", 5) || strstr(e->meta, "\nfile=");
}

/*
 * Compile the model into a scratch cache twice, keyed by its contents
 * and by its files (as a load with NPR_MODEL_LOAD_DEFER keys it), then
 * compare the .meta files written with the entries of the same model in
 * @dir, each with the one of its kind.
 */
static int cmd_why(const char *dir, const char *dev, const char *model,
		   const struct npr_arg_shape *shapes, int nshapes,
		   char **props, int nprops)
{
	char scratch[] = "/tmp/npr-cache-why.XXXXXX";
	char name[256], line[256];
	struct entry *mine, *e, *mf = NULL, *mc = NULL;
	int n, m, i, k, best = -1, best_diff = 99, rc;

	if (!mkdtemp(scratch))
		fail("mkdtemp: %s", strerror(errno));
	why_compile(scratch, dev, model, false, shapes, nshapes, props,
		    nprops);
	why_compile(scratch, dev, model, true, shapes, nshapes, props,
		    nprops);
	mine = scan(scratch, &m);
	nftw(scratch, rm_one, 8, FTW_DEPTH | FTW_PHYS);
	for (i = 0; i < m; i++)
		if (by_file(&mine[i]))
			mf = &mine[i];
		else
			mc = &mine[i];
	if (m != 2 || !mf || !mc)
		fail("the compile left no cache entry to compare");
	e = scan(dir, &n);
	for (i = 0; i < n; i++) {
		const struct entry *my = by_file(&e[i]) ? mf : mc;
		int diff = 0;

		if (!strcmp(e[i].key, mf->key) || !strcmp(e[i].key, mc->key)) {
			const char *kind = by_file(&e[i]) ? "files" :
							    "contents";

			if (js) {
				npr_json_begin_object(js);
				npr_json_kv_bool(js, "in_cache", true);
				npr_json_kv_string(js, "key", e[i].key);
				npr_json_kv_string(js, "keyed_by", kind);
				npr_json_end_object(js);
			} else {
				printf("in the cache: %s (keyed by the model's %s)\n",
				       e[i].key, kind);
			}
			free(e);
			free(mine);
			return 0;
		}
		if (strcmp(meta_get(e[i].meta, "name", name, sizeof(name)),
			   meta_get(my->meta, "name", line, sizeof(line))))
			continue;
		for (k = 0; k < NKEY_LINES; k++) {
			char a[4200], b[4200];

			if (strcmp(meta_get(e[i].meta, key_lines[k], a, sizeof(a)),
				   meta_get(my->meta, key_lines[k], b, sizeof(b))))
				diff++;
		}
		if (diff < best_diff) {
			best_diff = diff;
			best = i;
		}
	}
	rc = 1;
	meta_get(mc->meta, "name", name, sizeof(name));
	if (js) {
		npr_json_begin_object(js);
		npr_json_kv_bool(js, "in_cache", false);
		npr_json_kv_string(js, "key_by_contents", mc->key);
		npr_json_kv_string(js, "key_by_files", mf->key);
		npr_json_kv_string(js, "model", name);
		npr_json_kv_string(js, "closest", best < 0 ? NULL :
				   e[best].key);
		npr_json_key(js, "differs");
		npr_json_begin_array(js);
	} else {
		printf("not in the cache: key %s (by contents), %s (by files)\n",
		       mc->key, mf->key);
		if (best < 0)
			printf("no entry of model \"%s\" in %s\n", name, dir);
		else
			printf("closest entry %s differs in:\n", e[best].key);
	}
	for (k = 0; best >= 0 && k < NKEY_LINES; k++) {
		const struct entry *my = by_file(&e[best]) ? mf : mc;
		char a[4200], b[4200];

		meta_get(e[best].meta, key_lines[k], a, sizeof(a));
		meta_get(my->meta, key_lines[k], b, sizeof(b));
		if (!strcmp(a, b))
			continue;
		if (!js) {
			printf("  %-8s cached %s\n  %-8s wanted %s\n",
			       key_lines[k], a, "", b);
			continue;
		}
		npr_json_begin_object(js);
		npr_json_kv_string(js, "line", key_lines[k]);
		npr_json_kv_string(js, "cached", a);
		npr_json_kv_string(js, "wanted", b);
		npr_json_end_object(js);
	}
	if (js) {
		npr_json_end_array(js);
		npr_json_end_object(js);
	}
	free(e);
	free(mine);
	return rc;
}

/* The options, before or after the command. */
struct opts {
	const char *dir, *dev, *model;
	struct npr_arg_shape *shapes;
	char *props[64];
	int nshapes, nprops;
	long long max_mb;
	bool json;
};

static void parse_opts(int argc, char **argv, const char *optstring,
		       struct opts *o)
{
	static const struct option longopts[] = {
		{ "cache-dir", required_argument, NULL, 'C' },
		{ "device", required_argument, NULL, 'd' },
		{ "model", required_argument, NULL, 'm' },
		{ "max-mb", required_argument, NULL, 'M' },
		{ "shape", required_argument, NULL, 'S' },
		{ "prop", required_argument, NULL, 'P' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	char msg[1024], *end;
	int c, err;

	while ((c = getopt_long(argc, argv, optstring, longopts,
				NULL)) != -1) {
		switch (c) {
		case 'C': o->dir = optarg; break;
		case 'd': o->dev = optarg; break;
		case 'm': o->model = optarg; break;
		case 'M':
			errno = 0;
			o->max_mb = strtoll(optarg, &end, 10);
			if (errno || end == optarg || *end || o->max_mb < 0 ||
			    o->max_mb > (1LL << 40))
				npr_tool_usage("--max-mb %s: expected a number of MiB >= 0",
					       optarg);
			break;
		case 'S':
			err = npr_arg_parse_shapes(optarg, &o->shapes,
						   &o->nshapes, msg,
						   sizeof(msg));
			if (err)
				fail_arg(err, msg);
			break;
		case 'P':
			if (o->nprops == 64)
				npr_tool_usage("at most 64 --prop");
			o->props[o->nprops++] = optarg;
			break;
		case 'j': o->json = true; break;
		case 'h':
			fputs(usage, stdout);
			exit(0);
		case 'V':
			npr_tool_version();
			exit(0);
		default:
			npr_tool_usage(NULL);
		}
	}
}

int main(int argc, char **argv)
{
	struct opts o = {
		.dir = getenv("NPR_CACHE_DIR"), .dev = "cpu", .max_mb = -1,
	};
	const char *cmd;
	int rc = 0;

	npr_tool_init("npr-cache");
	parse_opts(argc, argv, "+C:d:m:h", &o);
	if (optind >= argc)
		npr_tool_usage("no command: list, verify, prune or why");
	/* options may also follow the command */
	cmd = argv[optind++];
	parse_opts(argc, argv, "C:d:m:h", &o);
	if (optind < argc)
		npr_tool_usage("unexpected argument '%s'", argv[optind]);
	if (strcmp(cmd, "list") && strcmp(cmd, "verify") &&
	    strcmp(cmd, "prune") && strcmp(cmd, "why"))
		npr_tool_usage("unknown command %s: list, verify, prune or why",
			       cmd);
	if (!o.dir)
		npr_tool_usage("no cache directory: give -C DIR or set NPR_CACHE_DIR");
	if (!strcmp(cmd, "prune") && o.max_mb < 0)
		npr_tool_usage("prune needs --max-mb N");
	if (!strcmp(cmd, "why") && !o.model)
		npr_tool_usage("why needs -m MODEL");
	if (o.json)
		js = npr_tool_json_begin(0);
	if (!strcmp(cmd, "list"))
		cmd_list(o.dir);
	else if (!strcmp(cmd, "verify"))
		rc = cmd_verify(o.dir);
	else if (!strcmp(cmd, "prune"))
		cmd_prune(o.dir, o.max_mb);
	else
		rc = cmd_why(o.dir, o.dev, o.model, o.shapes, o.nshapes,
			     o.props, o.nprops);
	if (js)
		npr_tool_json_end(js);
	npr_arg_free_shapes(o.shapes, o.nshapes);
	return rc;
}
