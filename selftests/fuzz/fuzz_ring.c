// SPDX-License-Identifier: MIT
/*
 * Fuzz target: job streams on the ring (lib/ring/, uapi NPR_IOCTL_SUBMIT
 * and REAP).  The first byte picks the device (cpu or null), the
 * completion path and the queue size; then, step by step, the input
 * submits batches of SQEs (any opcode, flags, handles, links, drains,
 * cancels of earlier jobs, deadlines past or far away, non-zero reserved
 * fields), reaps, destroys handles the jobs use, or closes the fd with
 * jobs in flight.  Every argument a job points at lives until the fd is
 * closed, and a REAP never waits for more jobs than are in flight, so
 * nothing depends on timing but the order of completions.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "fuzz.h"

#define MAX_JOBS	128
#define MAX_STEPS	48
#define EXPORT_BYTES	4096

/* A job's argument struct and the buffer EXPORT writes. */
union job_arg {
	struct npr_import im;
	struct npr_export ex;
	struct npr_state_arg st;
};

static char dir[64], relu_path[128], add_path[128];
static unsigned char *relu_blob;
static size_t relu_blob_len;

static void cleanup(void)
{
	char bin[160];

	snprintf(bin, sizeof(bin), "%.*s.bin", (int)strlen(add_path) - 4,
		 add_path);
	unlink(relu_path);
	unlink(add_path);
	unlink(bin);
	rmdir(dir);
	free(relu_blob);
}

static void put_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(p, 1, n, f) != n || fclose(f))
		abort();
}

/* Model files for LOAD jobs, and a blob for IMPORT jobs. */
static void setup(void)
{
	const char *t = getenv("TMPDIR");
	struct npr_model_load ml;
	struct npr_compile co;
	struct npr_export ex = { .size = sizeof(ex) };
	char bin[160];
	int fd;

	snprintf(dir, sizeof(dir), "%s/npr-fuzz-ring.XXXXXX",
		 t && strlen(t) < 32 ? t : "/tmp");
	if (!mkdtemp(dir))
		abort();
	atexit(cleanup);
	snprintf(relu_path, sizeof(relu_path), "%s/relu.xml", dir);
	snprintf(add_path, sizeof(add_path), "%s/add.xml", dir);
	snprintf(bin, sizeof(bin), "%s/add.bin", dir);
	put_file(relu_path, fz_relu_xml, sizeof(fz_relu_xml) - 1);
	put_file(add_path, fz_add_xml, sizeof(fz_add_xml) - 1);
	put_file(bin, fz_add_bin, sizeof(fz_add_bin));

	fd = fz_open("cpu");
	npr_prep_model_load(&ml, relu_path, NULL);
	if (fd < 0 || npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml))
		abort();
	npr_prep_compile(&co, ml.handle);
	if (npr_ioctl(fd, NPR_IOCTL_COMPILE, &co))
		abort();
	ex.exec = co.exec;
	if (npr_ioctl(fd, NPR_IOCTL_EXPORT, &ex) != -EMSGSIZE)
		abort();
	relu_blob = malloc(ex.bytes);
	ex.data = (uintptr_t)relu_blob;
	if (!relu_blob || npr_ioctl(fd, NPR_IOCTL_EXPORT, &ex))
		abort();
	relu_blob_len = ex.bytes;
	npr_close(fd);
}

/* What one input works with: its fd, handles, jobs' arguments. */
struct run {
	int fd;
	uint32_t handles[8];
	unsigned int nhandles;
	unsigned int inflight;
	uint64_t next_ud;
	union job_arg *args;
	unsigned char *bufs;
	unsigned int nargs;
	const char *paths[4];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint32_t pick_handle(struct run *r, struct fz *f)
{
	unsigned int c = fz_u8(f);

	if (c < 200 && r->nhandles)
		return r->handles[c % r->nhandles];
	if (c < 240)
		return 0;
	return fz_u32(f);
}

static void keep_handle(struct run *r, uint32_t h)
{
	if (r->nhandles < sizeof(r->handles) / sizeof(r->handles[0]))
		r->handles[r->nhandles++] = h;
}

/* One SQE from the input. */
static void make_sqe(struct run *r, struct fz *f, struct npr_sqe *s)
{
	unsigned int op = fz_u8(f), fl = fz_u8(f), extra = fz_u8(f);
	union job_arg *a = NULL;

	memset(s, 0, sizeof(*s));
	s->opcode = op % (NPR_OP_MAX + 1);
	s->flags = fl & 0x07;
	s->user_data = r->next_ud++;
	s->handle = pick_handle(r, f);
	if (r->nargs < MAX_JOBS)
		a = &r->args[r->nargs];
	switch (s->opcode) {
	case NPR_OP_NOP:
		s->len = fz_u8(f) * 4;		/* at most ~1 ms */
		break;
	case NPR_OP_LOAD:
		s->addr = (uintptr_t)r->paths[fz_u8(f) % 4];
		break;
	case NPR_OP_CANCEL:
		s->addr = r->next_ud > 1 ? fz_u8(f) % (r->next_ud - 1) : 0;
		break;
	case NPR_OP_IMPORT:
	case NPR_OP_EXPORT:
	case NPR_OP_STATE_GET:
	case NPR_OP_STATE_SET:
	case NPR_OP_STATE_RESET:
		if (!a)
			break;
		memset(a, 0, sizeof(*a));
		if (s->opcode == NPR_OP_IMPORT) {
			size_t n = relu_blob_len;

			a->im.size = sizeof(a->im);
			if (fz_u8(f) & 1)
				n = fz_u16(f) % (n + 1);
			a->im.data = (uintptr_t)relu_blob;
			a->im.bytes = n;
		} else if (s->opcode == NPR_OP_EXPORT) {
			a->ex.size = sizeof(a->ex);
			a->ex.exec = pick_handle(r, f);
			a->ex.data = (uintptr_t)(r->bufs +
						 r->nargs * EXPORT_BYTES);
			a->ex.bytes = fz_u8(f) & 1 ? EXPORT_BYTES :
				      fz_u16(f) % EXPORT_BYTES;
		} else {
			a->st.size = sizeof(a->st);
			a->st.req = pick_handle(r, f);
			a->st.index = fz_u8(f) % 3;
			a->st.flags = fz_u8(f) & 3;
			a->st.data = (uintptr_t)(r->bufs +
						 r->nargs * EXPORT_BYTES);
			a->st.bytes = fz_u16(f) % EXPORT_BYTES;
		}
		if (extra & 0x40)
			a->im.size = fz_u8(f);	/* any struct's size */
		s->addr = (uintptr_t)a;
		r->nargs++;
		break;
	default:
		break;
	}
	if (extra & 0x01)
		s->deadline_ns = 1;			/* long past */
	else if (extra & 0x02)
		s->deadline_ns = now_ns() + 60000000000ull;
	if (extra & 0x04)
		s->reserved0 = 1;
	if (extra & 0x08)
		s->reserved2[extra >> 6 & 1] = 1;
	if ((extra & 0x30) == 0x30)	/* NOP: over its limit */
		s->len = s->opcode == NPR_OP_NOP ? 10000001u : fz_u32(f);
}

static void do_submit(struct run *r, struct fz *f)
{
	struct npr_sqe sqes[8];
	struct npr_submit sa = { .size = sizeof(sa) };
	unsigned int i, n = 1 + fz_u8(f) % 8;

	for (i = 0; i < n; i++)
		make_sqe(r, f, &sqes[i]);
	sa.sqes = (uintptr_t)sqes;
	sa.count = n;
	if (fz_u8(f) == 0xff)
		sa.flags = 1;
	/* on a failure @submitted is the index of the bad SQE: none went */
	if (npr_ioctl(r->fd, NPR_IOCTL_SUBMIT, &sa))
		return;
	if (sa.submitted > n)
		abort();			/* more than asked for */
	r->inflight += sa.submitted;
}

static void do_reap(struct run *r, unsigned int max, unsigned int min,
		    unsigned int flags)
{
	struct npr_cqe c[16];
	struct npr_reap ra = { .size = sizeof(ra) };
	unsigned int i;

	if (max > 16)
		max = 16;
	if (!max)
		max = 1;
	if (min > max || min > r->inflight)
		min = r->inflight < max ? r->inflight : max;
	ra.cqes = (uintptr_t)c;
	ra.max = max;
	ra.min = min;
	ra.flags = flags;
	ra.timeout_ns = 20000000000ull;	/* only if a job hangs */
	npr_ioctl(r->fd, NPR_IOCTL_REAP, &ra);
	if (ra.count > max || ra.count > r->inflight)
		abort();
	r->inflight -= ra.count;
	for (i = 0; i < ra.count; i++) {
		uint32_t h = (uint32_t)c[i].res;

		if (c[i].status > NPR_JOB_LINK_BROKEN)
			abort();
		if (c[i].res > 0 && h >> 28)	/* a new handle */
			keep_handle(r, h);
	}
}

static void ring_setup(struct run *r, unsigned int conf)
{
	struct npr_ring_setup rs = { .size = sizeof(rs) };

	if (conf & 0x80)
		return;		/* the first SUBMIT sets the ring up */
	rs.cq_entries = 1u << (conf >> 2 & 7);
	rs.flags = conf & 2 ? NPR_RING_SETUP_FALLBACK : 0;
	npr_ioctl(r->fd, NPR_IOCTL_RING_SETUP, &rs);
}

static void prepare(struct run *r)
{
	struct npr_model_load ml;
	struct npr_compile co;
	struct npr_req_create rc;

	npr_prep_model_load_mem(&ml, fz_relu_xml, sizeof(fz_relu_xml) - 1,
				NULL, 0);
	if (npr_ioctl(r->fd, NPR_IOCTL_MODEL_LOAD, &ml))
		abort();
	keep_handle(r, ml.handle);
	npr_prep_compile(&co, ml.handle);
	if (npr_ioctl(r->fd, NPR_IOCTL_COMPILE, &co))
		abort();
	keep_handle(r, co.exec);
	npr_prep_req_create(&rc, co.exec);
	if (npr_ioctl(r->fd, NPR_IOCTL_REQ_CREATE, &rc))
		abort();
	keep_handle(r, rc.req);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = { data, size };
	struct run r = { 0 };
	unsigned int conf, step;
	int closed = 0;

	if (!dir[0])
		setup();
	conf = fz_u8(&f);
	r.fd = fz_open(conf & 1 ? "null" : "cpu");
	if (r.fd < 0)
		abort();
	r.args = calloc(MAX_JOBS, sizeof(*r.args));
	r.bufs = calloc(MAX_JOBS, EXPORT_BYTES);
	if (!r.args || !r.bufs)
		abort();
	r.paths[0] = relu_path;
	r.paths[1] = add_path;
	r.paths[2] = "";
	r.paths[3] = "/nonexistent/model.xml";
	r.next_ud = 1;
	prepare(&r);
	ring_setup(&r, conf);
	for (step = 0; step < MAX_STEPS && f.n && !closed; step++) {
		unsigned int c = fz_u8(&f);

		switch (c % 8) {
		case 0: case 1: case 2: case 3:
			do_submit(&r, &f);
			break;
		case 4: case 5:
			do_reap(&r, fz_u8(&f), fz_u8(&f), fz_u8(&f) & 1);
			break;
		case 6:
			if (r.nhandles)
				fz_destroy(r.fd, r.handles[fz_u8(&f) %
							  r.nhandles]);
			break;
		case 7:
			closed = c >= 0xf0;	/* with jobs in flight */
			if (!closed)
				ring_setup(&r, fz_u8(&f));
			break;
		}
	}
	while (!closed && r.inflight) {
		unsigned int before = r.inflight;

		do_reap(&r, 16, 16, 0);
		if (r.inflight == before)
			abort();	/* a job never completed */
	}
	npr_close(r.fd);
	free(r.args);
	free(r.bufs);
	return 0;
}
