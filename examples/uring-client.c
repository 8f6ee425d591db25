// SPDX-License-Identifier: MIT
/*
 * uring-client - keep N requests in flight against uring-server and report
 * latency percentiles and throughput.
 *
 *   uring-client -s SOCKET [-c N] [-n REQUESTS]
 *
 * N connections, one request in flight on each; REQUESTS in all.  Each
 * reply is checked: its header (examples/wire.h), status 0 and the id of
 * the request it answers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "wire.h"

#define MAX_CONNS	64

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void __attribute__((noreturn)) die(const char *what, int err)
{
	fprintf(stderr, "uring-client: %s: %s\n", what, strerror(-err));
	exit(1);
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct pollfd pfd[MAX_CONNS];
	uint64_t sent_at[MAX_CONNS], *lat, t0;
	const char *path = NULL;
	int nconn = 1, c, i;
	long total = 100, sent = 0, got = 0;
	uint32_t sizes[2], ids[MAX_CONNS];
	uint8_t hello[WIRE_HDR_BYTES], *in, *out;
	struct wire_reply rep;

	while ((c = getopt(argc, argv, "s:c:n:")) != -1) {
		switch (c) {
		case 's': path = optarg; break;
		case 'c': nconn = atoi(optarg); break;
		case 'n': total = atol(optarg); break;
		default:
			fprintf(stderr, "usage: uring-client -s SOCKET [-c N] [-n REQUESTS]\n");
			return 2;
		}
	}
	if (!path || strlen(path) >= sizeof(sa.sun_path) || nconn < 1 ||
	    nconn > MAX_CONNS || total < 1 || total > 10000000) {
		fprintf(stderr, "usage: uring-client -s SOCKET [-c 1..%d] [-n 1..10000000]\n",
			MAX_CONNS);
		return 2;
	}
	strcpy(sa.sun_path, path);
	for (i = 0; i < nconn; i++) {
		int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (s < 0 || connect(s, (void *)&sa, sizeof(sa)))
			die(path, -errno);
		if (wire_full_io(s, hello, sizeof(hello), false))
			die("hello", -EPROTO);
		c = wire_get_hello(hello, &sizes[0], &sizes[1]);
		if (c)
			die("hello", c);
		pfd[i].fd = s;
		pfd[i].events = POLLIN;
	}
	/* one request frame, its header rewritten with each id */
	in = calloc(1, WIRE_HDR_BYTES + (size_t)sizes[0]);
	out = malloc(WIRE_HDR_BYTES + (size_t)sizes[1]);
	lat = malloc(sizeof(*lat) * total);
	if (!in || !out || !lat)
		die("malloc", -ENOMEM);
	for (i = 0; i < (int)(sizes[0] / 4); i++)
		((float *)(in + WIRE_HDR_BYTES))[i] = (float)(i % 7) - 3;
	t0 = now_ns();
	for (i = 0; i < nconn && sent < total; i++, sent++) {
		sent_at[i] = now_ns();
		ids[i] = sent;
		wire_put_req(in, ids[i], sizes[0]);
		if (wire_full_io(pfd[i].fd, in, WIRE_HDR_BYTES + sizes[0], true))
			die("send", -EPIPE);
	}
	while (got < total) {
		if (poll(pfd, nconn, 30000) <= 0)
			die("poll (server gone?)", -ETIMEDOUT);
		for (i = 0; i < nconn; i++) {
			if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (wire_full_io(pfd[i].fd, out, WIRE_HDR_BYTES, false))
				die("recv", -EPIPE);
			if (wire_get_reply(out, sizes[1], &rep) ||
			    rep.id != ids[i])
				die("reply", -EPROTO);
			if (rep.status)
				die("request", rep.status);
			if (wire_full_io(pfd[i].fd, out + WIRE_HDR_BYTES, sizes[1],
				    false))
				die("recv", -EPIPE);
			lat[got++] = now_ns() - sent_at[i];
			if (sent < total) {
				sent_at[i] = now_ns();
				ids[i] = sent++;
				wire_put_req(in, ids[i], sizes[0]);
				if (wire_full_io(pfd[i].fd, in,
					    WIRE_HDR_BYTES + sizes[0], true))
					die("send", -EPIPE);
			}
		}
	}
	t0 = now_ns() - t0;
	qsort(lat, got, sizeof(*lat), cmp_u64);
	printf("%ld requests, %d in flight: p50 %.3f ms  p90 %.3f ms  p99 %.3f ms  %.1f req/s\n",
	       got, nconn, lat[got / 2] / 1e6, lat[got * 9 / 10] / 1e6,
	       lat[got * 99 / 100] / 1e6, got / (t0 / 1e9));
	for (i = 0; i < nconn; i++)
		close(pfd[i].fd);
	free(in);
	free(out);
	free(lat);
	return 0;
}
