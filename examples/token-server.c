// SPDX-License-Identifier: MIT
/*
 * token-server - a streaming token server: a decoder-only language model
 * (input_ids and a KV cache past_key_values.N.* / present.N.*) decoded
 * greedily for several clients at once, each with its own request and so
 * its own cache (NPR_MAKE_STATEFUL_PATTERN), every token written back as
 * its INFER completion arrives.  One io_uring carries everything: the
 * accepts, the receives and sends of the Unix socket, and the INFER
 * completions (npuring's ring attached to it; with the eventfd fallback,
 * a poll of the ring's descriptor and REAP).
 *
 *   token-server -m MODEL -s SOCKET [-d DEV] [-t THREADS]
 *
 * Protocol, little-endian: the client sends u32 magic "NPRG", u32 steps
 * (1 .. 4096), u32 prompt tokens n (1 .. 4096), then n int64 token ids;
 * the server answers with one int64 per generated token as each is
 * decoded, then INT64_MIN, and closes.  A refused request or a failed
 * inference gets -errno (one int64) instead, and the connection closes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <liburing.h>

#include "npuring.h"

#define MAGIC		0x4752504eu	/* "NPRG" */
#define MAX_CONNS	64
#define MAX_TOKENS	4096

enum { T_ACCEPT = 1, T_RECV, T_SEND, T_INFER, T_NPR };
#define UD(tag, i)	(((uint64_t)(tag) << 32) | (uint32_t)(i))

struct conn {
	int sock;
	__u32 req;
	uint8_t in[12 + 8 * MAX_TOKENS];
	size_t have, want;
	uint32_t steps, done;
	int64_t tok, out;	/* the token fed next; the value being sent */
	bool closing;
};

static struct io_uring ring;
static int dev, lsock, npr_ring_fd = -1, vocab;
static __u32 exec_h;
static struct conn conns[MAX_CONNS];
static float *logits;
static size_t logits_cap;

static void __attribute__((noreturn)) die(const char *what, int err)
{
	fprintf(stderr, "token-server: %s: %s (%s)\n", what, strerror(-err),
		npr_last_error());
	exit(1);
}

static struct io_uring_sqe *sqe_get(void)
{
	struct io_uring_sqe *s = io_uring_get_sqe(&ring);

	if (!s) {
		io_uring_submit(&ring);
		s = io_uring_get_sqe(&ring);
	}
	if (!s)
		die("io_uring_get_sqe", -EBUSY);
	return s;
}

static void arm_accept(void)
{
	struct io_uring_sqe *s = sqe_get();

	io_uring_prep_accept(s, lsock, NULL, NULL, 0);
	io_uring_sqe_set_data64(s, UD(T_ACCEPT, 0));
}

static void arm_recv(int i)
{
	struct conn *c = &conns[i];
	struct io_uring_sqe *s = sqe_get();

	io_uring_prep_recv(s, c->sock, c->in + c->have, c->want - c->have, 0);
	io_uring_sqe_set_data64(s, UD(T_RECV, i));
}

/* One int64 to the client: a token, the end, or -errno. */
static void send_value(int i, int64_t v, bool last)
{
	struct conn *c = &conns[i];
	struct io_uring_sqe *s = sqe_get();

	c->out = v;
	c->closing = last;
	io_uring_prep_send(s, c->sock, &c->out, sizeof(c->out), MSG_NOSIGNAL);
	io_uring_sqe_set_data64(s, UD(T_SEND, i));
}

static void conn_close(int i)
{
	struct npr_handle_destroy hd = { .size = sizeof(hd) };

	hd.handle = conns[i].req;
	npr_ioctl(dev, NPR_IOCTL_HANDLE_DESTROY, &hd);
	close(conns[i].sock);
	conns[i].sock = -1;
}

/* Feed @n tokens to connection @i's request as one INFER job. */
static int submit(int i, const int64_t *ids, uint32_t n)
{
	struct npr_tensor_arg ta;
	struct npr_sqe sqe = { .opcode = NPR_OP_INFER };
	struct npr_submit su = { .size = sizeof(su) };
	int err;

	npr_prep_tensor(&ta, conns[i].req, 0, 0, (void *)ids, 8 * n);
	ta.elem_type = NPR_ELEM_I64;
	ta.rank = 2;
	ta.dims[0] = 1;
	ta.dims[1] = n;
	err = npr_ioctl(dev, NPR_IOCTL_SET_TENSOR, &ta);
	if (err)
		return err;
	sqe.handle = conns[i].req;
	sqe.user_data = UD(T_INFER, i);
	su.sqes = (uintptr_t)&sqe;
	su.count = 1;
	return npr_ioctl(dev, NPR_IOCTL_SUBMIT, &su);
}

static void recv_done(int i, int res)
{
	struct conn *c = &conns[i];
	uint32_t magic, n;
	int err;

	if (res <= 0) {
		conn_close(i);
		return;
	}
	c->have += res;
	if (c->have == 12 && c->want == 12) {
		memcpy(&magic, c->in, 4);
		memcpy(&c->steps, c->in + 4, 4);
		memcpy(&n, c->in + 8, 4);
		if (magic != MAGIC || !c->steps || c->steps > MAX_TOKENS ||
		    !n || n > MAX_TOKENS) {
			send_value(i, -EINVAL, true);
			return;
		}
		c->want = 12 + 8 * (size_t)n;
	}
	if (c->have < c->want) {
		arm_recv(i);
		return;
	}
	n = (uint32_t)((c->want - 12) / 8);
	err = submit(i, (const int64_t *)(c->in + 12), n);
	if (err)
		send_value(i, err, true);
}

/* An INFER completed: the next token goes out. */
static void infer_done(int i, int res)
{
	struct conn *c = &conns[i];
	struct npr_tensor_arg ta = { .size = sizeof(ta) };
	size_t bytes;
	int err, k, best = 0;
	int64_t rows;

	if (res < 0) {
		send_value(i, res, true);
		return;
	}
	npr_prep_tensor(&ta, c->req, 0, NPR_PORT_OUTPUT, NULL, 0);
	ta.flags = NPR_PORT_OUTPUT | NPR_TENSOR_MAP;
	err = npr_ioctl(dev, NPR_IOCTL_GET_TENSOR, &ta);
	if (err) {
		send_value(i, err, true);
		return;
	}
	rows = ta.dims[1];
	bytes = ta.bytes;
	if (bytes > logits_cap) {
		free(logits);
		logits = malloc(bytes);
		logits_cap = logits ? bytes : 0;
		if (!logits)
			die("logits", -ENOMEM);
	}
	/* the mapping is the request's own buffer: read it now */
	memcpy(logits, (const void *)(uintptr_t)ta.data, bytes);
	for (k = 1; k < vocab; k++)
		if (logits[(rows - 1) * vocab + k] >
		    logits[(rows - 1) * vocab + best])
			best = k;
	c->tok = best;
	c->done++;
	send_value(i, best, false);
}

static void send_done(int i, int res)
{
	struct conn *c = &conns[i];
	int err;

	if (res != (int)sizeof(c->out) || c->closing) {
		conn_close(i);
		return;
	}
	if (c->done == c->steps) {
		send_value(i, INT64_MIN, true);
		return;
	}
	err = submit(i, &c->tok, 1);
	if (err)
		send_value(i, err, true);
}

static void conn_open(int sock)
{
	struct npr_req_create rc;
	int i;

	for (i = 0; i < MAX_CONNS && conns[i].sock >= 0; i++)
		;
	npr_prep_req_create(&rc, exec_h);
	if (i == MAX_CONNS || npr_ioctl(dev, NPR_IOCTL_REQ_CREATE, &rc)) {
		close(sock);
		return;
	}
	memset(&conns[i], 0, sizeof(conns[i]));
	conns[i].sock = sock;
	conns[i].req = rc.req;
	conns[i].want = 12;
	arm_recv(i);
}

/* The eventfd fallback: its completions by REAP. */
static void arm_npr_poll(void)
{
	struct io_uring_sqe *s = sqe_get();

	io_uring_prep_poll_add(s, npr_ring_fd, POLLIN);
	io_uring_sqe_set_data64(s, UD(T_NPR, 0));
}

static void reap_all(void)
{
	struct npr_cqe c[MAX_CONNS];
	struct npr_reap re = { .size = sizeof(re) };
	unsigned int k;
	int err;

	re.cqes = (uintptr_t)c;
	re.max = MAX_CONNS;
	err = npr_ioctl(dev, NPR_IOCTL_REAP, &re);
	if (err)
		die("REAP", err);
	for (k = 0; k < re.count; k++)
		infer_done((uint32_t)c[k].user_data, c[k].res);
	arm_npr_poll();
}

static void setup(const char *devname, const char *model, int threads)
{
	struct npr_state_pair kv = {
		(uintptr_t)"past_key_values.*", (uintptr_t)"present.*",
	};
	struct npr_make_stateful ms = { .size = sizeof(ms) };
	struct npr_prop_arg prop = {
		.param = NPR_PARAM_INFERENCE_NUM_THREADS, .value = threads,
	};
	struct npr_ring_setup rs = { .size = sizeof(rs) };
	struct npr_model_load ld;
	struct npr_port_info pi;
	struct npr_compile c;
	int err;

	err = io_uring_queue_init(256, &ring, 0);
	if (err)
		die("io_uring_queue_init", err);
	dev = npr_open(devname, 0);
	if (dev < 0)
		die(devname, dev);
	rs.flags = NPR_RING_SETUP_ATTACH;
	rs.attach_fd = ring.ring_fd;
	err = npr_ioctl(dev, NPR_IOCTL_RING_SETUP, &rs);
	if (err == -EOPNOTSUPP) {
		memset(&rs, 0, sizeof(rs));
		rs.size = sizeof(rs);
		err = npr_ioctl(dev, NPR_IOCTL_RING_SETUP, &rs);
		npr_ring_fd = rs.ring_fd;
	}
	if (err)
		die("RING_SETUP", err);
	npr_prep_model_load(&ld, model, NULL);
	err = npr_ioctl(dev, NPR_IOCTL_MODEL_LOAD, &ld);
	if (err)
		die(model, err);
	ms.flags = NPR_MAKE_STATEFUL_PATTERN;
	ms.model = ld.handle;
	ms.count = 1;
	ms.pairs = (uintptr_t)&kv;
	err = npr_ioctl(dev, NPR_IOCTL_MAKE_STATEFUL, &ms);
	if (err)
		die("MAKE_STATEFUL", err);
	npr_prep_port_info(&pi, ld.handle, 0, 1, NULL, 0);
	err = npr_ioctl(dev, NPR_IOCTL_PORT_INFO, &pi);
	if (err || pi.rank != 3 || pi.dims[2] <= 0)
		die("logits [batch, seq, vocab]", err ? err : -EINVAL);
	vocab = (int)pi.dims[2];
	npr_prep_compile(&c, ld.handle);
	if (threads) {
		c.props = (uintptr_t)&prop;
		c.num_props = 1;
	}
	err = npr_ioctl(dev, NPR_IOCTL_COMPILE, &c);
	if (err)
		die("COMPILE", err);
	exec_h = c.exec;
}

int main(int argc, char **argv)
{
	const char *devname = "cpu", *model = NULL, *path = NULL;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct io_uring_cqe *cqe;
	int c, i, threads = 0;

	while ((c = getopt(argc, argv, "d:m:s:t:")) != -1) {
		switch (c) {
		case 'd': devname = optarg; break;
		case 'm': model = optarg; break;
		case 's': path = optarg; break;
		case 't': threads = atoi(optarg); break;
		default: goto usage;
		}
	}
	if (!model || !path || strlen(path) >= sizeof(sa.sun_path) ||
	    threads < 0)
		goto usage;
	for (i = 0; i < MAX_CONNS; i++)
		conns[i].sock = -1;
	setup(devname, model, threads);
	lsock = socket(AF_UNIX, SOCK_STREAM, 0);
	strcpy(sa.sun_path, path);
	unlink(path);
	if (lsock < 0 || bind(lsock, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(lsock, MAX_CONNS))
		die(path, -errno);
	arm_accept();
	if (npr_ring_fd >= 0)
		arm_npr_poll();
	for (;;) {
		io_uring_submit_and_wait(&ring, 1);
		while (!io_uring_peek_cqe(&ring, &cqe)) {
			uint64_t ud = cqe->user_data;
			int res = cqe->res;

			io_uring_cqe_seen(&ring, cqe);
			i = (uint32_t)ud;
			switch (ud >> 32) {
			case T_ACCEPT:
				arm_accept();
				if (res >= 0)
					conn_open(res);
				break;
			case T_RECV: recv_done(i, res); break;
			case T_SEND: send_done(i, res); break;
			case T_INFER: infer_done(i, res); break;
			case T_NPR: reap_all(); break;
			}
		}
	}
usage:
	fprintf(stderr, "usage: token-server -m MODEL -s SOCKET [-d DEV] [-t THREADS]\n");
	return 2;
}
