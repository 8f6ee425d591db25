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
 * server polls npuring's ring_fd in its loop and reaps on readiness.  The
 * loop is examples/server.c.
 *
 * Protocol (examples/wire.h): on connect the server sends a hello with the
 * input and output sizes in bytes; each request is a 16-byte header and
 * exactly the input bytes, each reply a 16-byte header (status, the
 * request's id) and the output bytes.
 *
 * Hostile clients: a refused header gets an error reply and the connection
 * is closed; a client must send each whole request, and take each whole
 * reply, within the timeout (-t, default 30 s, 0 for none) or it gets
 * -ETIMEDOUT and is closed; at most SERVER_MAX_CONNS connections, each
 * holding two buffers (the request and reply frames) and one npuring
 * request, freed when it closes.  No socket operation blocks the loop.
 *
 *   uring-server -d DEV -m MODEL.xml -s SOCKET [-n REQUESTS] [-t SECONDS]
 *
 * It exits after REQUESTS replies, or on SIGTERM or SIGINT, printing its
 * counts.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "server.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(void)
{
	fprintf(stderr, "usage: uring-server -d DEV -m MODEL.xml -s SOCKET [-n REQUESTS] [-t SECONDS]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *devname = "cpu", *model = NULL, *path = NULL;
	struct sigaction sig = { .sa_handler = on_signal };
	const struct server_stats *st = server_stats();
	long limit = 0, secs = 30;
	char *end;
	int c;

	while ((c = getopt(argc, argv, "d:m:s:n:t:")) != -1) {
		switch (c) {
		case 'd': devname = optarg; break;
		case 'm': model = optarg; break;
		case 's': path = optarg; break;
		case 'n': limit = atol(optarg); break;
		case 't':
			secs = strtol(optarg, &end, 10);
			if (*end || secs < 0 || secs > 86400)
				usage();
			break;
		default:
			usage();
		}
	}
	if (!model || !path || limit < 0)
		usage();
	/* no SA_RESTART: a signal ends the wait for completions */
	sigaction(SIGINT, &sig, NULL);
	sigaction(SIGTERM, &sig, NULL);
	if (server_start(devname, model, NULL, 0, secs * 1000000000ull) ||
	    server_listen(path))
		return 1;
	printf("listening on %s: %u bytes in, %u bytes out\n", path,
	       server_in_bytes(), server_out_bytes());
	fflush(stdout);
	while (!stop && (!limit || st->served < limit))
		server_step();
	printf("served %ld requests on %ld connections: %ld failed, %ld headers refused, %ld timed out, %ld dropped mid-request, %ld gone before the reply, %ld turned away\n",
	       st->served, st->conns, st->failed, st->refused, st->timeouts,
	       st->dropped, st->gone, st->busy);
	server_stop();
	return 0;
}
