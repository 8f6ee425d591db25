/* SPDX-License-Identifier: MIT */
/*
 * server.h - uring-server's event loop (examples/server.c), apart from its
 * command line so that the fuzz target can drive it over a socketpair.
 * One server per process.
 */
#ifndef NPR_EXAMPLES_SERVER_H
#define NPR_EXAMPLES_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* connections at once; the next one is turned away with -EBUSY */
#define SERVER_MAX_CONNS	64

/**
 * struct server_stats - what the server has done so far
 * @served: replies with an output sent in full
 * @conns: connections accepted (or adopted)
 * @failed: well-formed requests whose job failed (answered with its errno)
 * @refused: request headers refused (answered, then closed)
 * @timeouts: requests not complete by their deadline (answered -ETIMEDOUT)
 * @dropped: clients that closed mid-request
 * @gone: clients that closed before taking their reply
 * @busy: connections turned away (no free slot, no memory)
 */
struct server_stats {
	long served, conns, failed, refused, timeouts, dropped, gone, busy;
};

int server_start(const char *devname, const char *model, const void *xml,
		 size_t xml_size, uint64_t timeout);
int server_listen(const char *path);
void server_adopt(int sock);
void server_step(void);
unsigned int server_open_conns(void);
const struct server_stats *server_stats(void);
uint32_t server_in_bytes(void);
uint32_t server_out_bytes(void);
void server_stop(void);

#endif /* NPR_EXAMPLES_SERVER_H */
