// SPDX-License-Identifier: MIT
/*
 * uring-soak - eight clients against a running uring-server for a while,
 * four of them well-behaved and four hostile; checks that the server
 * answers every well-formed request exactly once and correctly, refuses
 * or times out the hostile ones cleanly, and keeps its memory flat.
 *
 *   uring-soak -s SOCKET -p SERVER_PID [-d SECONDS] [-t SERVER_TIMEOUT] [-R]
 *
 * The clients, each a thread reconnecting in a loop until the end:
 *   0-3  good: 1..50 requests per connection, one or two in flight, each
 *        of four inputs whose answers were computed once at the start;
 *        the reply must carry the request's id, status 0 and that answer,
 *        and nothing may follow the last reply
 *   4    dropper: disconnects before the hello, mid-header, mid-payload
 *        or with its request in flight
 *   5    malformed: bad magic, version or flags, oversized or short
 *        lengths, random headers, headerless tensors; each must get the
 *        matching error reply and then the connection closed
 *   6    trickler: well-formed requests one byte at a time (the header)
 *        and in small pieces (the payload); must be answered correctly
 *   7    staller: stops mid-request; must get -ETIMEDOUT after the
 *        server's timeout (-t, the server's -t) and then a close
 * The server's VmRSS (/proc/PID/status) is sampled every second: after the
 * warm-up (a fifth of the run, at most 60 s) it must stay within 5% of its
 * value then (-R: reported, not checked; a sanitizer's quarantine grows).
 * Exit status 0 when every check held.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include "wire.h"

#define NCLIENTS	8
#define NVARIANTS	4
#define NGOOD		4
/* latency histogram: 1 us buckets up to 100 ms, then 1 ms up to 100 s */
#define LAT_FINE	100000
#define LAT_BUCKETS	(LAT_FINE + 100000)

static struct sockaddr_un sa = { .sun_family = AF_UNIX };
static uint32_t in_bytes, out_bytes;
static uint8_t *variant[NVARIANTS];	/* request frames */
static uint8_t *answer[NVARIANTS];	/* reply payloads */
static int server_timeout = 30;
static atomic_bool over;
static atomic_int complaints;

static struct {
	atomic_long sent, answered, exact, wrong, unanswered, extra;
	atomic_long dropped, malformed, trickled, stalled, bad_unhandled;
	atomic_long conns;
} st;
static atomic_uint lat[LAT_BUCKETS];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint32_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s >> 16;
}

static void complain(atomic_long *counter, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void complain(atomic_long *counter, const char *fmt, ...)
{
	va_list ap;

	atomic_fetch_add(counter, 1);
	if (atomic_fetch_add(&complaints, 1) >= 20)
		return;
	va_start(ap, fmt);
	fputs("uring-soak: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* A connection with its hello read; -errno on failure. */
static int dial(bool hello)
{
	struct timeval tv = { .tv_sec = server_timeout + 10 };
	uint8_t h[WIRE_HDR_BYTES];
	uint32_t in, out;
	int s, err;

	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(s, (void *)&sa, sizeof(sa))) {
		err = -errno;
		close(s);
		return err;
	}
	atomic_fetch_add(&st.conns, 1);
	if (!hello)
		return s;
	err = wire_full_io(s, h, sizeof(h), false);
	if (!err)
		err = wire_get_hello(h, &in, &out);
	if (!err && (in != in_bytes || out != out_bytes))
		err = -EPROTO;
	if (err) {
		close(s);
		return err;
	}
	return s;
}

/*
 * After the last reply: nothing more may come, then the close (a reset
 * too, when @reset: the server closed with bytes of ours unread).
 */
static bool nothing_follows(int s, bool reset)
{
	ssize_t n;
	char c;

	shutdown(s, SHUT_WR);
	n = recv(s, &c, 1, 0);
	return !n || (n < 0 && reset && errno == ECONNRESET);
}

/* Reads one reply; 0 and the payload in @out, or -errno. */
static int read_reply(int s, uint8_t *out, struct wire_reply *r, bool trickle)
{
	size_t k;
	int err = 0;

	if (trickle) {
		for (k = 0; k < WIRE_HDR_BYTES && !err; k++)
			err = wire_full_io(s, out + k, 1, false);
	} else {
		err = wire_full_io(s, out, WIRE_HDR_BYTES, false);
	}
	if (!err)
		err = wire_get_reply(out, out_bytes, r);
	if (!err && r->length)
		err = wire_full_io(s, out + WIRE_HDR_BYTES, r->length, false);
	return err;
}

static bool same_answer(const uint8_t *got, const uint8_t *want, bool *exact)
{
	const float *g = (const float *)got, *w = (const float *)want;
	size_t k;

	*exact = !memcmp(got, want, out_bytes);
	if (*exact)
		return true;
	if (out_bytes % 4)
		return false;
	for (k = 0; k < out_bytes / 4; k++) {
		float d = g[k] - w[k];

		if (!(d <= 1e-5f + 1e-4f * (w[k] < 0 ? -w[k] : w[k]) &&
		      -d <= 1e-5f + 1e-4f * (w[k] < 0 ? -w[k] : w[k])))
			return false;
	}
	return true;
}

/* Checks a reply to a well-formed request of variant @v and id @id. */
static void check_answer(int err, const struct wire_reply *r,
			 const uint8_t *out, uint32_t id, int v)
{
	bool exact;

	if (err) {
		complain(&st.unanswered, "request %u: no answer (%s)", id,
			 strerror(-err));
		return;
	}
	if (r->id != id || r->status) {
		complain(&st.wrong, "request %u: reply for %u, status %d", id,
			 r->id, r->status);
		return;
	}
	if (!same_answer(out + WIRE_HDR_BYTES, answer[v], &exact)) {
		complain(&st.wrong, "request %u: a wrong answer", id);
		return;
	}
	atomic_fetch_add(&st.answered, 1);
	if (exact)
		atomic_fetch_add(&st.exact, 1);
}

static void good_client(uint64_t *seed, uint8_t *frame, uint8_t *out)
{
	int s = dial(true), n, depth, sent = 0, got = 0, v[2], k, err;
	uint64_t at[2];
	uint32_t id0 = rnd(seed);
	struct wire_reply r;

	if (s < 0) {
		complain(&st.unanswered, "good client: connect: %s",
			 strerror(-s));
		return;
	}
	n = 1 + rnd(seed) % 50;
	depth = out_bytes <= 65536 && rnd(seed) % 2 ? 2 : 1;
	while (got < n) {
		while (sent < n && sent - got < depth) {
			k = sent % 2;
			v[k] = rnd(seed) % NVARIANTS;
			memcpy(frame, variant[v[k]],
			       WIRE_HDR_BYTES + (size_t)in_bytes);
			wire_put_req(frame, id0 + sent, in_bytes);
			at[k] = now_ns();
			atomic_fetch_add(&st.sent, 1);
			err = wire_full_io(s, frame, WIRE_HDR_BYTES + in_bytes,
				      true);
			if (err) {
				complain(&st.unanswered,
					 "request %u: send: %s", id0 + sent,
					 strerror(-err));
				close(s);
				return;
			}
			sent++;
		}
		k = got % 2;
		err = read_reply(s, out, &r, false);
		if (!err) {
			uint64_t us = (now_ns() - at[k]) / 1000;

			us = us < LAT_FINE ? us : LAT_FINE + us / 1000;
			atomic_fetch_add(&lat[us < LAT_BUCKETS ? us :
					     LAT_BUCKETS - 1], 1);
		}
		check_answer(err, &r, out, id0 + got, v[k]);
		got++;
		if (err) {
			st.unanswered += sent - got;
			close(s);
			return;
		}
	}
	if (!nothing_follows(s, false))
		complain(&st.extra, "good client: bytes after the last reply");
	close(s);
}

static void dropper(uint64_t *seed, uint8_t *frame)
{
	int kind = rnd(seed) % 5, s = dial(kind != 0);
	size_t len;

	if (s < 0)
		return;
	memcpy(frame, variant[0], WIRE_HDR_BYTES + (size_t)in_bytes);
	wire_put_req(frame, rnd(seed), in_bytes);
	switch (kind) {
	case 0:		/* before the hello */
	case 1:		/* after it */
		len = 0;
		break;
	case 2:		/* mid-header */
		len = 1 + rnd(seed) % (WIRE_HDR_BYTES - 1);
		break;
	case 3:		/* mid-payload */
		len = WIRE_HDR_BYTES + rnd(seed) % in_bytes;
		break;
	default:	/* with the request in flight */
		len = WIRE_HDR_BYTES + in_bytes;
		break;
	}
	wire_full_io(s, frame, len, true);
	close(s);
	atomic_fetch_add(&st.dropped, 1);
}

static void malformed(uint64_t *seed, uint8_t *frame, uint8_t *out)
{
	int kind = rnd(seed) % 7, s, want, err;
	struct wire_req q;
	struct wire_reply r;
	size_t k, len;
	uint32_t id = rnd(seed);

	memcpy(frame, variant[rnd(seed) % NVARIANTS],
	       WIRE_HDR_BYTES + (size_t)in_bytes);
	wire_put_req(frame, id, in_bytes);
	switch (kind) {
	case 0:		/* bad magic */
		frame[rnd(seed) % 4] ^= 1 + rnd(seed) % 255;
		break;
	case 1:		/* another version */
		frame[4] = rnd(seed) % 2 ? 0 : 2 + rnd(seed) % 250;
		break;
	case 2:		/* flags */
		frame[6 + rnd(seed) % 2] = 1 + rnd(seed) % 255;
		break;
	case 3:		/* oversized */
		wire_put_req(frame, id, rnd(seed) % 2 ? 0xffffffffu :
			     in_bytes + 1 + rnd(seed) % 100000);
		break;
	case 4:		/* short */
		wire_put_req(frame, id, rnd(seed) % in_bytes);
		break;
	case 5:		/* random */
		for (k = 0; k < WIRE_HDR_BYTES; k++)
			frame[k] = rnd(seed);
		break;
	default:	/* a tensor without a header */
		memcpy(frame, variant[0] + WIRE_HDR_BYTES,
		       in_bytes < WIRE_HDR_BYTES ? in_bytes : WIRE_HDR_BYTES);
		break;
	}
	want = wire_get_req(frame, in_bytes, &q);
	if (!want)
		return;		/* a random header that happens to be good */
	s = dial(true);
	if (s < 0) {
		complain(&st.bad_unhandled, "malformed: connect: %s",
			 strerror(-s));
		return;
	}
	/* the header (a tenth of the time byte by byte), then some payload */
	if (rnd(seed) % 10) {
		err = wire_full_io(s, frame, WIRE_HDR_BYTES, true);
	} else {
		for (err = 0, k = 0; k < WIRE_HDR_BYTES && !err; k++)
			err = wire_full_io(s, frame + k, 1, true);
	}
	len = rnd(seed) % (in_bytes + 1);
	if (!err && len)
		send(s, frame + WIRE_HDR_BYTES, len,
		     MSG_NOSIGNAL | MSG_DONTWAIT);
	err = err ? err : read_reply(s, out, &r, false);
	if (err || r.status != want || r.id != q.id)
		complain(&st.bad_unhandled,
			 "malformed header (kind %d): %s, status %d for %d",
			 kind, strerror(-err), err ? 0 : r.status, want);
	else if (!nothing_follows(s, true))
		complain(&st.bad_unhandled,
			 "malformed header (kind %d): not closed", kind);
	else
		atomic_fetch_add(&st.malformed, 1);
	close(s);
}

static void trickler(uint64_t *seed, uint8_t *frame, uint8_t *out)
{
	int s = dial(true), v = rnd(seed) % NVARIANTS, err = 0;
	size_t k = 0, len, total = WIRE_HDR_BYTES + (size_t)in_bytes;
	uint32_t id = rnd(seed);
	struct wire_reply r;

	if (s < 0) {
		complain(&st.unanswered, "trickler: connect: %s",
			 strerror(-s));
		return;
	}
	memcpy(frame, variant[v], total);
	wire_put_req(frame, id, in_bytes);
	atomic_fetch_add(&st.sent, 1);
	while (k < total && !err) {
		len = k < WIRE_HDR_BYTES ? 1 : 1 + rnd(seed) % 64;
		len = len < total - k ? len : total - k;
		err = wire_full_io(s, frame + k, len, true);
		k += len;
		usleep(k <= WIRE_HDR_BYTES ? 2000 : 100);
	}
	if (!err)
		err = read_reply(s, out, &r, true);
	check_answer(err, &r, out, id, v);
	if (!err && !nothing_follows(s, false))
		complain(&st.extra, "trickler: bytes after the reply");
	if (!err)
		atomic_fetch_add(&st.trickled, 1);
	close(s);
}

static void staller(uint64_t *seed, uint8_t *frame, uint8_t *out)
{
	int s = dial(true), err;
	size_t len = 0;
	struct wire_reply r;

	if (s < 0) {
		complain(&st.bad_unhandled, "staller: connect: %s",
			 strerror(-s));
		return;
	}
	memcpy(frame, variant[0], WIRE_HDR_BYTES + (size_t)in_bytes);
	wire_put_req(frame, rnd(seed), in_bytes);
	switch (rnd(seed) % 3) {
	case 1:
		len = 1 + rnd(seed) % (WIRE_HDR_BYTES - 1);
		break;
	case 2:
		len = WIRE_HDR_BYTES + rnd(seed) % in_bytes;
		break;
	}
	err = wire_full_io(s, frame, len, true);
	if (!err)
		err = read_reply(s, out, &r, false);
	if (err || r.status != -ETIMEDOUT)
		complain(&st.bad_unhandled, "staller: %s, status %d",
			 strerror(-err), err ? 0 : r.status);
	else if (!nothing_follows(s, true))
		complain(&st.bad_unhandled, "staller: not closed");
	else
		atomic_fetch_add(&st.stalled, 1);
	close(s);
}

static void *client(void *arg)
{
	int role = (int)(intptr_t)arg;
	uint64_t seed = 0x9e3779b97f4a7c15ull * (role + 1);
	uint8_t *frame = malloc(WIRE_HDR_BYTES + (size_t)in_bytes);
	uint8_t *out = malloc(WIRE_HDR_BYTES + (size_t)out_bytes);

	if (!frame || !out)
		abort();
	while (!atomic_load(&over)) {
		switch (role) {
		case 4:
			dropper(&seed, frame);
			usleep(2000);
			break;
		case 5:
			malformed(&seed, frame, out);
			usleep(2000);
			break;
		case 6:
			trickler(&seed, frame, out);
			break;
		case 7:
			staller(&seed, frame, out);
			break;
		default:
			good_client(&seed, frame, out);
			break;
		}
	}
	free(frame);
	free(out);
	return NULL;
}

/* The four inputs and their answers, over one well-behaved connection. */
static int references(void)
{
	struct wire_reply r;
	int s = dial(false), v, err;
	uint8_t h[WIRE_HDR_BYTES];
	size_t k;

	if (s < 0)
		return s;
	err = wire_full_io(s, h, sizeof(h), false);
	if (!err)
		err = wire_get_hello(h, &in_bytes, &out_bytes);
	for (v = 0; v < NVARIANTS && !err; v++) {
		variant[v] = malloc(WIRE_HDR_BYTES + (size_t)in_bytes);
		answer[v] = malloc(WIRE_HDR_BYTES + (size_t)out_bytes);
		if (!variant[v] || !answer[v])
			return -ENOMEM;
		wire_put_req(variant[v], v, in_bytes);
		for (k = 0; k < in_bytes / 4; k++)
			((float *)(variant[v] + WIRE_HDR_BYTES))[k] =
				(float)((int)((k * (v + 3)) % 17) - 8) / 8;
		for (k = in_bytes / 4 * 4; k < in_bytes; k++)
			variant[v][WIRE_HDR_BYTES + k] = k * (v + 1);
		err = wire_full_io(s, variant[v], WIRE_HDR_BYTES + in_bytes, true);
		if (!err)
			err = read_reply(s, answer[v], &r, false);
		if (!err && (r.status || r.id != (uint32_t)v))
			err = r.status ? r.status : -EPROTO;
		/* the payload first, where the comparisons want it */
		if (!err)
			memmove(answer[v], answer[v] + WIRE_HDR_BYTES,
				out_bytes);
	}
	close(s);
	return err;
}

static long vmrss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static double percentile(double p)
{
	unsigned long total = 0, want, seen = 0;
	size_t k;

	for (k = 0; k < LAT_BUCKETS; k++)
		total += lat[k];
	if (!total)
		return 0;
	want = (unsigned long)(total * p);
	for (k = 0; k < LAT_BUCKETS; k++) {
		seen += lat[k];
		if (seen > want)
			break;
	}
	return k < LAT_FINE ? k / 1000.0 : (double)(k - LAT_FINE);
}

static void usage(void)
{
	fprintf(stderr, "usage: uring-soak -s SOCKET -p SERVER_PID [-d SECONDS] [-t SERVER_TIMEOUT] [-R]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	long duration = 600, warmup, t, rss, rss_warm = 0, rss_max = 0,
	     rss_end = 0;
	pthread_t th[NCLIENTS];
	pid_t pid = 0;
	bool alive = true, rss_check = true, ok;
	int c, err;

	while ((c = getopt(argc, argv, "s:p:d:t:R")) != -1) {
		switch (c) {
		case 's':
			if (strlen(optarg) >= sizeof(sa.sun_path))
				usage();
			strcpy(sa.sun_path, optarg);
			break;
		case 'p': pid = atoi(optarg); break;
		case 'd': duration = atol(optarg); break;
		case 't': server_timeout = atoi(optarg); break;
		case 'R': rss_check = false; break;
		default: usage();
		}
	}
	if (!sa.sun_path[0] || pid <= 0 || duration < 5 ||
	    server_timeout < 1 || server_timeout > 3600)
		usage();
	signal(SIGPIPE, SIG_IGN);
	err = references();
	if (err) {
		fprintf(stderr, "uring-soak: the reference answers: %s\n",
			strerror(-err));
		return 1;
	}
	printf("uring-soak: %u bytes in, %u out, %ld s, 8 clients\n",
	       in_bytes, out_bytes, duration);
	fflush(stdout);
	for (c = 0; c < NCLIENTS; c++)
		if (pthread_create(&th[c], NULL, client, (void *)(intptr_t)c))
			return 1;
	warmup = duration / 5 < 60 ? duration / 5 : 60;
	for (t = 1; t <= duration; t++) {
		sleep(1);
		rss = vmrss_kb(pid);
		if (rss < 0) {
			alive = false;
			fprintf(stderr, "uring-soak: the server is gone after %ld s\n",
				t);
			break;
		}
		if (t == warmup)
			rss_warm = rss;
		if (t > warmup && rss > rss_max)
			rss_max = rss;
		rss_end = rss;
		if (t % 60 == 0) {
			printf("uring-soak: %ld s: %ld answered, RSS %ld kB\n",
			       t, atomic_load(&st.answered), rss);
			fflush(stdout);
		}
	}
	atomic_store(&over, true);
	for (c = 0; c < NCLIENTS; c++)
		pthread_join(th[c], NULL);
	if (alive && vmrss_kb(pid) < 0)
		alive = false;
	ok = alive && !st.wrong && !st.unanswered && !st.extra &&
	     !st.bad_unhandled &&
	     (!rss_check || rss_max <= rss_warm + rss_warm / 20) &&
	     st.answered && st.malformed && st.stalled && st.trickled;
	printf("uring-soak: server %s\n", alive ? "alive to the end" : "DIED");
	printf("uring-soak: well-formed requests: %ld sent, %ld answered correctly (%ld bit-exact), %ld unanswered, %ld wrong, %ld with bytes after\n",
	       st.sent, st.answered, st.exact, st.unanswered, st.wrong,
	       st.extra);
	printf("uring-soak: latency (good clients): p50 %.3f ms, p99 %.3f ms\n",
	       percentile(0.5), percentile(0.99));
	printf("uring-soak: bad clients handled: %ld dropped, %ld malformed refused, %ld trickled, %ld stalled timed out; %ld mishandled\n",
	       st.dropped, st.malformed, st.trickled, st.stalled,
	       st.bad_unhandled);
	printf("uring-soak: %ld connections\n", st.conns);
	printf("uring-soak: server RSS: %ld kB after the %ld s warm-up, %ld kB at the end, %ld kB at most (limit %ld kB%s)\n",
	       rss_warm, warmup, rss_end, rss_max, rss_warm + rss_warm / 20,
	       rss_check ? "" : ", not checked");
	printf("uring-soak: %s\n", ok ? "PASS" : "FAIL");
	return ok ? 0 : 1;
}
