// SPDX-License-Identifier: MIT
/*
 * uring-server - a small inference service with one io_uring event loop.
 *
 * It accepts connections on a Unix socket, reads one input tensor per
 * request (raw bytes of the model's first input), submits an INFER job and
 * writes the first output back when the job's completion arrives, in the
 * same ring as the socket completions: the npuring fd is attached to the
 * server's ring, so completions come in through IORING_OP_MSG_RING.  When
 * the ring cannot be attached (npuring on its eventfd fallback), the
 * server polls npuring's ring_fd in its loop and reaps on readiness.
 *
 * Protocol: on connect the server sends two little-endian u32, the input
 * and output sizes in bytes; then each request is exactly the input bytes
 * and each reply exactly the output bytes.
 *
 *   uring-server -d DEV -m MODEL.xml -s SOCKET [-n REQUESTS]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <liburing.h>

#include "npuring.h"

#define MAX_CONNS	64

enum { T_ACCEPT = 1, T_HELLO, T_RECV, T_SEND, T_INFER, T_NPR };

#define UD(tag, idx)	(((uint64_t)(tag) << 32) | (uint32_t)(idx))

struct conn {
	int sock;
	uint32_t req;
	uint32_t hello[2];
	char *in, *out;
	size_t done;
};

static struct io_uring ring;
static int dev;
static size_t in_bytes, out_bytes;
static uint32_t exec_h;
static struct conn conns[MAX_CONNS];
/* polled when the ring cannot be attached */
static int npr_ring_fd = -1;

static void __attribute__((noreturn)) die(const char *what, int err)
{
	fprintf(stderr, "uring-server: %s: %s (%s)\n", what, strerror(-err),
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
	return s;
}

static void arm_accept(int lsock)
{
	struct io_uring_sqe *s = sqe_get();

	io_uring_prep_accept(s, lsock, NULL, NULL, 0);
	io_uring_sqe_set_data64(s, UD(T_ACCEPT, 0));
}

static void arm_recv(int i)
{
	struct conn *c = &conns[i];
	struct io_uring_sqe *s = sqe_get();

	io_uring_prep_recv(s, c->sock, c->in + c->done, in_bytes - c->done, 0);
	io_uring_sqe_set_data64(s, UD(T_RECV, i));
}

static void arm_send(int i, int tag, const void *buf, size_t len)
{
	struct io_uring_sqe *s = sqe_get();

	io_uring_prep_send(s, conns[i].sock, buf, len, MSG_NOSIGNAL);
	io_uring_sqe_set_data64(s, UD(tag, i));
}

static void infer_done(int i, int res);

/* Without an attachable ring: poll the npuring ring_fd, then REAP. */
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

static size_t port_bytes(bool output)
{
	struct npr_port_info pi = { .size = sizeof(pi) };
	size_t n = 1;
	unsigned int k;
	int err;

	pi.handle = exec_h;
	pi.flags = output ? NPR_PORT_OUTPUT : 0;
	err = npr_ioctl(dev, NPR_IOCTL_PORT_INFO, &pi);
	if (err)
		die("PORT_INFO", err);
	for (k = 0; k < pi.rank; k++)
		n *= pi.dims[k];
	return n * npr_elem_size(pi.elem_type);
}

static void conn_close(int i)
{
	struct npr_handle_destroy hd = { .size = sizeof(hd) };

	hd.handle = conns[i].req;
	npr_ioctl(dev, NPR_IOCTL_HANDLE_DESTROY, &hd);
	close(conns[i].sock);
	free(conns[i].in);
	free(conns[i].out);
	memset(&conns[i], 0, sizeof(conns[i]));
	conns[i].sock = -1;
}

static void submit_infer(int i)
{
	struct npr_tensor_arg ta = { .size = sizeof(ta) };
	struct npr_port_info pi = { .size = sizeof(pi) };
	struct npr_submit su = { .size = sizeof(su) };
	struct npr_sqe sqe = { .opcode = NPR_OP_INFER };
	int err;

	pi.handle = exec_h;
	npr_ioctl(dev, NPR_IOCTL_PORT_INFO, &pi);
	ta.req = conns[i].req;
	ta.elem_type = pi.elem_type;
	ta.rank = pi.rank;
	memcpy(ta.dims, pi.dims, sizeof(ta.dims));
	ta.data = (uintptr_t)conns[i].in;
	ta.bytes = in_bytes;
	err = npr_ioctl(dev, NPR_IOCTL_SET_TENSOR, &ta);
	if (err)
		die("SET_TENSOR", err);
	sqe.handle = conns[i].req;
	sqe.user_data = UD(T_INFER, i);
	su.sqes = (uintptr_t)&sqe;
	su.count = 1;
	err = npr_ioctl(dev, NPR_IOCTL_SUBMIT, &su);
	if (err)
		die("SUBMIT", err);
}

static void infer_done(int i, int res)
{
	struct npr_tensor_arg ta = { .size = sizeof(ta) };
	int err;

	if (res < 0)
		die("INFER job", res);
	ta.flags = NPR_PORT_OUTPUT;
	ta.req = conns[i].req;
	ta.data = (uintptr_t)conns[i].out;
	ta.bytes = out_bytes;
	err = npr_ioctl(dev, NPR_IOCTL_GET_TENSOR, &ta);
	if (err)
		die("GET_TENSOR", err);
	conns[i].done = 0;
	arm_send(i, T_SEND, conns[i].out, out_bytes);
}

int main(int argc, char **argv)
{
	const char *devname = "cpu", *model = NULL, *path = NULL;
	struct npr_model_load ml = { .size = sizeof(ml) };
	struct npr_compile co = { .size = sizeof(co) };
	struct npr_ring_setup rs = { .size = sizeof(rs) };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	long limit = 0, served = 0;
	int c, err, lsock, i;

	while ((c = getopt(argc, argv, "d:m:s:n:")) != -1) {
		switch (c) {
		case 'd': devname = optarg; break;
		case 'm': model = optarg; break;
		case 's': path = optarg; break;
		case 'n': limit = atol(optarg); break;
		default:
			fprintf(stderr, "usage: uring-server -d DEV -m MODEL.xml -s SOCKET [-n REQUESTS]\n");
			return 2;
		}
	}
	if (!model || !path || strlen(path) >= sizeof(sa.sun_path) ||
	    limit < 0) {
		fprintf(stderr, "usage: uring-server -d DEV -m MODEL.xml -s SOCKET [-n REQUESTS]\n");
		return 2;
	}
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
		/* the eventfd fallback: poll its descriptor in this ring */
		memset(&rs, 0, sizeof(rs));
		rs.size = sizeof(rs);
		err = npr_ioctl(dev, NPR_IOCTL_RING_SETUP, &rs);
		npr_ring_fd = rs.ring_fd;
	}
	if (err)
		die("RING_SETUP", err);
	ml.xml = (uintptr_t)model;
	err = npr_ioctl(dev, NPR_IOCTL_MODEL_LOAD, &ml);
	if (err)
		die(model, err);
	co.model = ml.handle;
	err = npr_ioctl(dev, NPR_IOCTL_COMPILE, &co);
	if (err)
		die("COMPILE", err);
	exec_h = co.exec;
	in_bytes = port_bytes(false);
	out_bytes = port_bytes(true);
	for (i = 0; i < MAX_CONNS; i++)
		conns[i].sock = -1;

	lsock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	strcpy(sa.sun_path, path);
	unlink(path);
	if (lsock < 0 || bind(lsock, (void *)&sa, sizeof(sa)) ||
	    listen(lsock, 64))
		die(path, -errno);
	printf("listening on %s: %zu bytes in, %zu bytes out\n", path,
	       in_bytes, out_bytes);
	fflush(stdout);
	arm_accept(lsock);
	if (npr_ring_fd >= 0)
		arm_npr_poll();
	while (!limit || served < limit) {
		struct io_uring_cqe *cqe;
		uint64_t ud;
		int res, tag;

		io_uring_submit_and_wait(&ring, 1);
		while (!io_uring_peek_cqe(&ring, &cqe)) {
			ud = cqe->user_data;
			res = cqe->res;
			io_uring_cqe_seen(&ring, cqe);
			tag = ud >> 32;
			i = (uint32_t)ud;
			switch (tag) {
			case T_ACCEPT: {
				struct npr_req_create rc = {
					.size = sizeof(rc),
				};
				int k;

				arm_accept(lsock);
				if (res < 0)
					break;
				k = 0;
				while (k < MAX_CONNS && conns[k].sock >= 0)
					k++;
				rc.exec = exec_h;
				if (k == MAX_CONNS ||
				    npr_ioctl(dev, NPR_IOCTL_REQ_CREATE, &rc)) {
					close(res);
					break;
				}
				conns[k].sock = res;
				conns[k].req = rc.req;
				conns[k].in = malloc(in_bytes);
				conns[k].out = malloc(out_bytes);
				conns[k].hello[0] = in_bytes;
				conns[k].hello[1] = out_bytes;
				arm_send(k, T_HELLO, conns[k].hello,
					 sizeof(conns[k].hello));
				break;
			}
			case T_HELLO:
				if (res != sizeof(conns[i].hello)) {
					conn_close(i);
					break;
				}
				conns[i].done = 0;
				arm_recv(i);
				break;
			case T_RECV:
				if (res <= 0) {
					conn_close(i);
					break;
				}
				conns[i].done += res;
				if (conns[i].done < in_bytes)
					arm_recv(i);
				else
					submit_infer(i);
				break;
			case T_INFER:
				infer_done(i, res);
				break;
			case T_NPR:
				reap_all();
				break;
			case T_SEND:
				if (res <= 0) {
					conn_close(i);
					break;
				}
				conns[i].done += res;
				if (conns[i].done < out_bytes) {
					arm_send(i, T_SEND,
						 conns[i].out + conns[i].done,
						 out_bytes - conns[i].done);
					break;
				}
				served++;
				conns[i].done = 0;
				arm_recv(i);
				break;
			}
		}
	}
	printf("served %ld requests\n", served);
	for (i = 0; i < MAX_CONNS; i++)
		if (conns[i].sock >= 0)
			conn_close(i);
	npr_close(dev);
	close(lsock);
	unlink(path);
	io_uring_queue_exit(&ring);
	return 0;
}
