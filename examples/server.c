// SPDX-License-Identifier: MIT
/*
 * server.c - uring-server's event loop: one io_uring for the socket
 * operations, the INFER completions (npuring's ring attached to it, or its
 * eventfd fallback polled in it) and a once-a-second deadline sweep.
 *
 * Each connection is a small state machine with one operation in flight
 * (a send, a receive or an INFER job), so it is freed only when that
 * operation completes; a deadline shuts its socket, which ends the
 * pending operation.  examples/wire.h has the protocol, Documentation/
 * tools.rst the limits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <liburing.h>

#include "npuring.h"
#include "server.h"
#include "wire.h"

enum { T_ACCEPT = 1, T_RECV, T_SEND, T_INFER, T_NPR, T_TICK };

/*
 * A connection has one operation in flight at a time (a send, a receive or
 * an INFER job), so it is freed only when that operation completes.
 */
enum conn_state {
	C_FREE,
	C_HELLO,	/* sending the hello */
	C_RECV,		/* receiving a request */
	C_INFER,	/* its INFER job runs */
	C_SEND,		/* sending a reply with the output */
	C_ERROR,	/* sending an error reply to a good request */
	C_REFUSE,	/* sending an error reply, then closing */
};

#define UD(tag, idx)	(((uint64_t)(tag) << 32) | (uint32_t)(idx))

struct conn {
	int sock;
	enum conn_state state;
	uint32_t req;
	bool expired;		/* the deadline passed: the socket is shut */
	uint64_t deadline;	/* CLOCK_MONOTONIC ns, 0 for none */
	struct wire_rx rx;
	uint8_t *in, *out;	/* request and reply frames */
	size_t out_len, sent;
};

static struct io_uring ring;
static int dev;
static uint32_t in_bytes, out_bytes;
static uint32_t exec_h;
static uint64_t limit_ns;	/* a request's, a reply's deadline */
static int lsock = -1;
static char *lpath;
static struct conn conns[SERVER_MAX_CONNS];
/* polled when the ring cannot be attached */
static int npr_ring_fd = -1;
static unsigned int open_conns;
static struct server_stats st;

static int fail(const char *what, int err)
{
	fprintf(stderr, "uring-server: %s: %s (%s)\n", what, strerror(-err),
		npr_last_error());
	return err;
}

/* Only for what cannot happen to a working ring and device. */
static void __attribute__((noreturn)) die(const char *what, int err)
{
	fail(what, err);
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
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

/* The sweep over the connections' deadlines, once a second. */
static void arm_tick(void)
{
	static struct __kernel_timespec ts = { .tv_sec = 1 };
	struct io_uring_sqe *s = sqe_get();

	io_uring_prep_timeout(s, &ts, 0, 0);
	io_uring_sqe_set_data64(s, UD(T_TICK, 0));
}

static void set_deadline(struct conn *c)
{
	c->deadline = limit_ns ? now_ns() + limit_ns : 0;
	c->expired = false;
}

static void start_recv(int i)
{
	struct conn *c = &conns[i];
	struct io_uring_sqe *s;
	uint8_t *where;
	size_t len;

	if (c->state != C_RECV) {
		c->state = C_RECV;
		wire_rx_reset(&c->rx);
		set_deadline(c);
	}
	len = wire_rx_space(&c->rx, &where);
	s = sqe_get();
	io_uring_prep_recv(s, c->sock, where, len, 0);
	io_uring_sqe_set_data64(s, UD(T_RECV, i));
}

static void arm_send(int i)
{
	struct conn *c = &conns[i];
	struct io_uring_sqe *s = sqe_get();

	io_uring_prep_send(s, c->sock, c->out + c->sent, c->out_len - c->sent,
			   MSG_NOSIGNAL);
	io_uring_sqe_set_data64(s, UD(T_SEND, i));
}

static void start_send(int i, enum conn_state state, size_t len)
{
	struct conn *c = &conns[i];

	c->state = state;
	c->out_len = len;
	c->sent = 0;
	set_deadline(c);
	arm_send(i);
}

/* An error reply (no payload) to the current request. */
static void send_error(int i, enum conn_state state, int err)
{
	wire_put_reply(conns[i].out, err, conns[i].rx.req.id, 0);
	start_send(i, state, WIRE_HDR_BYTES);
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
	struct npr_cqe c[SERVER_MAX_CONNS];
	struct npr_reap re = { .size = sizeof(re) };
	unsigned int k;
	int err;

	re.cqes = (uintptr_t)c;
	re.max = SERVER_MAX_CONNS;
	err = npr_ioctl(dev, NPR_IOCTL_REAP, &re);
	if (err)
		die("REAP", err);
	for (k = 0; k < re.count; k++)
		infer_done((uint32_t)c[k].user_data, c[k].res);
	arm_npr_poll();
}

static int port_bytes(bool output, uint32_t *bytes)
{
	struct npr_port_info pi = { .size = sizeof(pi) };
	uint64_t n;
	unsigned int k;
	int err;

	pi.handle = exec_h;
	pi.flags = output ? NPR_PORT_OUTPUT : 0;
	err = npr_ioctl(dev, NPR_IOCTL_PORT_INFO, &pi);
	if (err)
		return fail("PORT_INFO", err);
	n = npr_elem_size(pi.elem_type);
	for (k = 0; k < pi.rank && n <= WIRE_MAX_TENSOR; k++) {
		if (pi.dims[k] > WIRE_MAX_TENSOR)
			n = 0;
		n *= pi.dims[k];
	}
	if (!n || n > WIRE_MAX_TENSOR)
		return fail("PORT_INFO: a tensor size not servable",
			    -EMSGSIZE);
	*bytes = n;
	return 0;
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
	open_conns--;
}

static void conn_open(int sock)
{
	struct npr_req_create rc = { .size = sizeof(rc) };
	uint8_t no[WIRE_HDR_BYTES];
	struct conn *c;
	int k, err;

	for (k = 0; k < SERVER_MAX_CONNS && conns[k].sock >= 0; k++)
		;
	err = -EBUSY;
	if (k < SERVER_MAX_CONNS) {
		c = &conns[k];
		c->in = malloc(WIRE_HDR_BYTES + (size_t)in_bytes);
		c->out = malloc(WIRE_HDR_BYTES + (size_t)out_bytes);
		rc.exec = exec_h;
		err = -ENOMEM;
		if (c->in && c->out)
			err = npr_ioctl(dev, NPR_IOCTL_REQ_CREATE, &rc);
		if (err) {
			free(c->in);
			free(c->out);
			c->in = c->out = NULL;
		}
	}
	if (err) {
		/* turned away: a refusal in place of the hello, if it fits */
		wire_put_reply(no, err, 0, 0);
		send(sock, no, sizeof(no), MSG_DONTWAIT | MSG_NOSIGNAL);
		close(sock);
		st.busy++;
		return;
	}
	st.conns++;
	open_conns++;
	c->sock = sock;
	c->req = rc.req;
	wire_rx_init(&c->rx, c->in, in_bytes);
	wire_put_hello(c->out, in_bytes, out_bytes);
	start_send(k, C_HELLO, WIRE_HDR_BYTES);
}

static void submit_infer(int i)
{
	struct npr_tensor_arg ta = { .size = sizeof(ta) };
	struct npr_port_info pi = { .size = sizeof(pi) };
	struct npr_submit su = { .size = sizeof(su) };
	struct npr_sqe sqe = { .opcode = NPR_OP_INFER };
	int err;

	conns[i].state = C_INFER;
	conns[i].deadline = 0;
	pi.handle = exec_h;
	err = npr_ioctl(dev, NPR_IOCTL_PORT_INFO, &pi);
	if (!err) {
		ta.req = conns[i].req;
		ta.elem_type = pi.elem_type;
		ta.rank = pi.rank;
		memcpy(ta.dims, pi.dims, sizeof(ta.dims));
		ta.data = (uintptr_t)(conns[i].in + WIRE_HDR_BYTES);
		ta.bytes = in_bytes;
		err = npr_ioctl(dev, NPR_IOCTL_SET_TENSOR, &ta);
	}
	if (!err) {
		sqe.handle = conns[i].req;
		sqe.user_data = UD(T_INFER, i);
		su.sqes = (uintptr_t)&sqe;
		su.count = 1;
		err = npr_ioctl(dev, NPR_IOCTL_SUBMIT, &su);
	}
	if (err) {
		st.failed++;
		send_error(i, C_ERROR, err);
	}
}

static void infer_done(int i, int res)
{
	struct npr_tensor_arg ta = { .size = sizeof(ta) };
	struct conn *c = &conns[i];
	int err = res;

	if (i < 0 || i >= SERVER_MAX_CONNS || c->state != C_INFER)
		die("INFER completion for no job", -EPROTO);
	if (!err) {
		ta.flags = NPR_PORT_OUTPUT;
		ta.req = c->req;
		ta.data = (uintptr_t)(c->out + WIRE_HDR_BYTES);
		ta.bytes = out_bytes;
		err = npr_ioctl(dev, NPR_IOCTL_GET_TENSOR, &ta);
	}
	if (err) {
		st.failed++;
		send_error(i, C_ERROR, err);
		return;
	}
	wire_put_reply(c->out, 0, c->rx.req.id, out_bytes);
	start_send(i, C_SEND, WIRE_HDR_BYTES + (size_t)out_bytes);
}

static void recv_done(int i, int res)
{
	struct conn *c = &conns[i];
	int err;

	if (c->expired) {
		st.timeouts++;
		send_error(i, C_REFUSE, -ETIMEDOUT);
		return;
	}
	if (res <= 0) {
		if (c->rx.have)
			st.dropped++;
		conn_close(i);
		return;
	}
	err = wire_rx_advance(&c->rx, res);
	if (err < 0) {
		st.refused++;
		send_error(i, C_REFUSE, err);
	} else if (!err) {
		start_recv(i);
	} else {
		submit_infer(i);
	}
}

static void send_done(int i, int res)
{
	struct conn *c = &conns[i];

	if (res <= 0) {
		if (c->state == C_SEND || c->state == C_ERROR)
			st.gone++;
		conn_close(i);
		return;
	}
	c->sent += res;
	if (c->sent < c->out_len) {
		arm_send(i);
		return;
	}
	if (c->state == C_REFUSE) {
		conn_close(i);
		return;
	}
	if (c->state == C_SEND)
		st.served++;
	start_recv(i);
}

/*
 * A client past its deadline: a pending receive ends when its socket is
 * shut for reading (then the client gets -ETIMEDOUT), a pending send when
 * it is shut both ways.
 */
static void sweep(void)
{
	uint64_t now = now_ns();
	int i;

	for (i = 0; i < SERVER_MAX_CONNS; i++) {
		struct conn *c = &conns[i];

		if (c->sock < 0 || !c->deadline || c->expired ||
		    now < c->deadline)
			continue;
		c->expired = true;
		shutdown(c->sock, c->state == C_RECV ? SHUT_RD : SHUT_RDWR);
	}
}

/**
 * server_start() - open the device, load and compile the model
 * @devname: the device to open ("cpu", "npu")
 * @model: the model's .xml path, or NULL with @xml
 * @xml: the IR's xml bytes (a model without weights) when @model is NULL
 * @xml_size: their size
 * @timeout: each request's and each reply's deadline, 0 for none
 *
 * Return: 0, or the -errno of the step that failed (with a message on
 * stderr).
 */
int server_start(const char *devname, const char *model, const void *xml,
		 size_t xml_size, uint64_t timeout)
{
	struct npr_model_load ml = { .size = sizeof(ml) };
	struct npr_compile co = { .size = sizeof(co) };
	struct npr_ring_setup rs = { .size = sizeof(rs) };
	int err, i;

	limit_ns = timeout;
	for (i = 0; i < SERVER_MAX_CONNS; i++)
		conns[i].sock = -1;
	err = io_uring_queue_init(256, &ring, 0);
	if (err)
		return fail("io_uring_queue_init", err);
	dev = npr_open(devname, 0);
	if (dev < 0)
		return fail(devname, dev);
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
		return fail("RING_SETUP", err);
	if (model) {
		ml.xml = (uintptr_t)model;
	} else {
		ml.flags = NPR_MODEL_LOAD_MEMORY;
		ml.xml = (uintptr_t)xml;
		ml.xml_size = xml_size;
	}
	err = npr_ioctl(dev, NPR_IOCTL_MODEL_LOAD, &ml);
	if (err)
		return fail(model ? model : "the model", err);
	co.model = ml.handle;
	err = npr_ioctl(dev, NPR_IOCTL_COMPILE, &co);
	if (err)
		return fail("COMPILE", err);
	exec_h = co.exec;
	err = port_bytes(false, &in_bytes);
	if (!err)
		err = port_bytes(true, &out_bytes);
	if (err)
		return err;
	arm_tick();
	if (npr_ring_fd >= 0)
		arm_npr_poll();
	return 0;
}

/**
 * server_listen() - accept connections on a Unix socket
 * @path: the socket's path (replaced if it exists, removed by
 *	  server_stop())
 *
 * Return: 0, or -errno (with a message on stderr).
 */
int server_listen(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (strlen(path) >= sizeof(sa.sun_path))
		return fail(path, -ENAMETOOLONG);
	lpath = strdup(path);
	lsock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (!lpath || lsock < 0)
		return fail(path, lpath ? -errno : -ENOMEM);
	strcpy(sa.sun_path, path);
	unlink(path);
	if (bind(lsock, (void *)&sa, sizeof(sa)) || listen(lsock, 64))
		return fail(path, -errno);
	arm_accept();
	return 0;
}

/**
 * server_adopt() - serve a connected stream socket as if it were accepted
 * @sock: the socket, owned by the server from now on
 */
void server_adopt(int sock)
{
	conn_open(sock);
}

/**
 * server_step() - wait for at least one completion and handle all there
 *
 * Returns early, with nothing done, when a signal interrupts the wait.
 */
void server_step(void)
{
	struct io_uring_cqe *cqe;
	uint64_t ud;
	int res, tag, i;

	io_uring_submit_and_wait(&ring, 1);
	while (!io_uring_peek_cqe(&ring, &cqe)) {
		ud = cqe->user_data;
		res = cqe->res;
		io_uring_cqe_seen(&ring, cqe);
		tag = ud >> 32;
		i = (uint32_t)ud;
		switch (tag) {
		case T_ACCEPT:
			arm_accept();
			if (res >= 0)
				conn_open(res);
			break;
		case T_RECV:
			recv_done(i, res);
			break;
		case T_SEND:
			send_done(i, res);
			break;
		case T_INFER:
			infer_done(i, res);
			break;
		case T_NPR:
			reap_all();
			break;
		case T_TICK:
			sweep();
			arm_tick();
			break;
		}
	}
}

/**
 * server_open_conns() - connections open now
 *
 * Return: their number.
 */
unsigned int server_open_conns(void)
{
	return open_conns;
}

/**
 * server_stats() - the counts so far
 *
 * Return: the server's counters.
 */
const struct server_stats *server_stats(void)
{
	return &st;
}

/**
 * server_in_bytes() - a request's payload
 *
 * Return: the bytes of the model's first input.
 */
uint32_t server_in_bytes(void)
{
	return in_bytes;
}

/**
 * server_out_bytes() - a successful reply's payload
 *
 * Return: the bytes of the model's first output.
 */
uint32_t server_out_bytes(void)
{
	return out_bytes;
}

/**
 * server_stop() - close every connection, the device and the socket
 *
 * npr_close() ends the jobs still in flight.
 */
void server_stop(void)
{
	int i;

	for (i = 0; i < SERVER_MAX_CONNS; i++)
		if (conns[i].sock >= 0)
			conn_close(i);
	npr_close(dev);
	if (lsock >= 0) {
		close(lsock);
		unlink(lpath);
	}
	free(lpath);
	io_uring_queue_exit(&ring);
}
