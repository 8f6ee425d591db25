// SPDX-License-Identifier: MIT
/*
 * examples/uring-server against hostile clients, over a Unix socket, on a
 * four-element ReLU: refused headers get their error reply and a close,
 * a stalled client gets -ETIMEDOUT, one that stops reading its replies is
 * cut off, a client gone mid-request is counted and freed, the 65th
 * connection is turned away, and well-formed requests in between are still
 * answered.  The frames are built here from the
 * protocol's description (examples/wire.h), not with its code.  The
 * throughput and the long run are scripts/soak.sh.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "harness.h"

#define HDR	16
#define IN	16	/* four f32 */

static const char relu_xml[] =
	"<?xml version=\"1.0\"?>\n"
	"<net name=\"relu\" version=\"11\"><layers>"
	"<layer id=\"0\" name=\"in\" type=\"Parameter\" version=\"opset1\">"
	"<data shape=\"1,4\" element_type=\"f32\"/><output>"
	"<port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>4</dim></port>"
	"</output></layer>"
	"<layer id=\"1\" name=\"relu\" type=\"ReLU\" version=\"opset1\"><input>"
	"<port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>4</dim></port>"
	"</input><output>"
	"<port id=\"1\" precision=\"FP32\"><dim>1</dim><dim>4</dim></port>"
	"</output></layer>"
	"<layer id=\"2\" name=\"out\" type=\"Result\" version=\"opset1\"><input>"
	"<port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>4</dim></port>"
	"</input></layer></layers><edges>"
	"<edge from-layer=\"0\" from-port=\"0\" to-layer=\"1\" to-port=\"0\"/>"
	"<edge from-layer=\"1\" from-port=\"1\" to-layer=\"2\" to-port=\"0\"/>"
	"</edges></net>\n";

static void put32(uint8_t *b, uint32_t v)
{
	b[0] = v;
	b[1] = v >> 8;
	b[2] = v >> 16;
	b[3] = v >> 24;
}

static uint32_t get32(const uint8_t *b)
{
	return b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	       (uint32_t)b[3] << 24;
}

/* A request: "NPRQ", version 1, flags 0, id, length; then [-1 2 -3 4]. */
static void request(uint8_t *b, uint32_t id, uint32_t length)
{
	static const float x[4] = { -1, 2, -3, 4 };

	memcpy(b, "NPRQ", 4);
	b[4] = 1;
	b[5] = b[6] = b[7] = 0;
	put32(b + 8, id);
	put32(b + 12, length);
	memcpy(b + HDR, x, sizeof(x));
}

FIXTURE(server) {
	char dir[64], sock[80], out[80];
	pid_t pid;
};

FIXTURE_SETUP(server)
{
	char self_path[PATH_MAX], bin[PATH_MAX + 32], xml[80];
	ssize_t n = readlink("/proc/self/exe", self_path,
			     sizeof(self_path) - 1);
	int fd, i;

	self->pid = 0;
	self->dir[0] = 0;
	ASSERT_GT(n, 0);
	self_path[n] = 0;
	snprintf(bin, sizeof(bin), "%s/../examples/uring-server",
		 dirname(self_path));
	if (access(bin, X_OK))
		SKIP(return, "examples/uring-server not built next to the selftests");
	strcpy(self->dir, "/tmp/npr-server-test-XXXXXX");
	ASSERT_NE(mkdtemp(self->dir), NULL);
	snprintf(xml, sizeof(xml), "%s/relu.xml", self->dir);
	snprintf(self->sock, sizeof(self->sock), "%s/sock", self->dir);
	snprintf(self->out, sizeof(self->out), "%s/out", self->dir);
	fd = open(xml, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, relu_xml, sizeof(relu_xml) - 1),
		  (ssize_t)sizeof(relu_xml) - 1);
	close(fd);
	self->pid = fork();
	ASSERT_GE(self->pid, 0);
	if (!self->pid) {
		fd = open(self->out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0)
			dup2(fd, 1);
		execl(bin, bin, "-d", "cpu", "-m", xml, "-s", self->sock,
		      "-t", "1", (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 1000 && access(self->sock, F_OK); i++)
		usleep(10000);
	ASSERT_EQ(access(self->sock, F_OK), 0);
}

FIXTURE_TEARDOWN(server)
{
	char path[96];

	if (self->pid > 0) {
		kill(self->pid, SIGKILL);
		waitpid(self->pid, NULL, 0);
	}
	if (!self->dir[0])
		return;
	snprintf(path, sizeof(path), "%s/relu.xml", self->dir);
	unlink(path);
	unlink(self->sock);
	unlink(self->out);
	rmdir(self->dir);
}

static int full_io(int fd, void *buf, size_t len, bool wr)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = wr ? send(fd, (char *)buf + done, len - done,
				      MSG_NOSIGNAL) :
				 recv(fd, (char *)buf + done, len - done, 0);

		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		done += n;
	}
	return 0;
}

/* A connection; @hello set to its first 16 bytes. */
static int dial(const char *path, uint8_t *hello)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 20 };
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), i, err = 0;

	if (s < 0)
		return -errno;
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	strcpy(sa.sun_path, path);
	/*
	 * The socket file exists from the server's bind(); until its
	 * listen(), connect() is refused: a loaded machine sees that gap.
	 */
	for (i = 0; i < 1000; i++) {
		err = connect(s, (void *)&sa, sizeof(sa)) ? errno : 0;
		if (err != ECONNREFUSED)
			break;
		usleep(10000);
	}
	if (err || full_io(s, hello, HDR, false)) {
		close(s);
		return -EPROTO;
	}
	return s;
}

/* The reply's status, after checking its magic, id and length. */
static int reply(struct npr_test *_metadata, int s, uint32_t id,
		 float *out)
{
	uint8_t b[HDR];
	int32_t status;

	EXPECT_EQ(full_io(s, b, HDR, false), 0);
	EXPECT_EQ(memcmp(b, "NPRA", 4), 0);
	EXPECT_EQ(get32(b + 8), id);
	status = (int32_t)get32(b + 4);
	EXPECT_EQ(get32(b + 12), status ? 0u : 16u);
	if (!status)
		EXPECT_EQ(full_io(s, out, 16, false), 0);
	return status;
}

/* Nothing more comes: the server closed the connection. */
static bool closed(int s)
{
	char c;
	ssize_t n = recv(s, &c, 1, 0);

	return !n || (n < 0 && errno == ECONNRESET);
}

static void good_request(struct npr_test *_metadata, const char *path,
			 uint32_t id)
{
	uint8_t hello[HDR], b[HDR + IN];
	float y[4];
	int s = dial(path, hello);

	ASSERT_GE(s, 0);
	request(b, id, IN);
	ASSERT_EQ(full_io(s, b, sizeof(b), true), 0);
	ASSERT_EQ(reply(_metadata, s, id, y), 0);
	EXPECT_EQ(y[0], 0);
	EXPECT_EQ(y[1], 2);
	EXPECT_EQ(y[2], 0);
	EXPECT_EQ(y[3], 4);
	close(s);
}

/* SIGTERM: the server exits 0 and its last line holds @want. */
static void stop_and_expect(struct npr_test *_metadata, pid_t *pid,
			    const char *out, const char *want)
{
	char text[1024] = "";
	int st, fd;
	ssize_t n;

	ASSERT_EQ(kill(*pid, SIGTERM), 0);
	ASSERT_EQ(waitpid(*pid, &st, 0), *pid);
	*pid = 0;
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st));
	fd = open(out, O_RDONLY);
	ASSERT_GE(fd, 0);
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	ASSERT_GT(n, 0);
	text[n] = 0;
	if (!strstr(text, want))
		TH_LOG("server said: %s", text);
	EXPECT_NE(strstr(text, want), NULL);
}

TEST_F(server, hello_and_answer)
{
	uint8_t hello[HDR];
	int s = dial(self->sock, hello);

	ASSERT_GE(s, 0);
	EXPECT_EQ(memcmp(hello, "NPRH\1\0\0\0", 8), 0);
	EXPECT_EQ(get32(hello + 8), 16u);
	EXPECT_EQ(get32(hello + 12), 16u);
	close(s);
	good_request(_metadata, self->sock, 42);
	stop_and_expect(_metadata, &self->pid, self->out,
			"served 1 requests on 2 connections: 0 failed");
}

TEST_F(server, pipelined_requests_answered_in_order)
{
	uint8_t hello[HDR], b[2 * (HDR + IN)];
	float y[4];
	int s = dial(self->sock, hello);

	ASSERT_GE(s, 0);
	request(b, 7, IN);
	request(b + HDR + IN, 8, IN);
	ASSERT_EQ(full_io(s, b, sizeof(b), true), 0);
	EXPECT_EQ(reply(_metadata, s, 7, y), 0);
	EXPECT_EQ(reply(_metadata, s, 8, y), 0);
	EXPECT_EQ(y[3], 4);
	shutdown(s, SHUT_WR);
	EXPECT_TRUE(closed(s));
	close(s);
}

TEST_F(server, refused_headers_then_served)
{
	static const struct {
		int at;		/* byte changed, -1 for none */
		uint8_t to;
		uint32_t length;
		int status;
	} bad[] = {
		{ 0, 'X', IN, -EPROTO },
		{ 3, 'A', IN, -EPROTO },
		{ 4, 2, IN, -EPROTONOSUPPORT },
		{ 5, 1, IN, -EPROTONOSUPPORT },
		{ 6, 1, IN, -EINVAL },
		{ -1, 0, IN + 1, -EMSGSIZE },
		{ -1, 0, 0xffffffffu, -EMSGSIZE },
		{ -1, 0, IN - 1, -EINVAL },
		{ -1, 0, 0, -EINVAL },
	};
	uint8_t hello[HDR], b[HDR + IN];
	float y[4];
	unsigned int k;
	char want[128];

	for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		int s = dial(self->sock, hello);

		ASSERT_GE(s, 0);
		request(b, 100 + k, bad[k].length);
		if (bad[k].at >= 0)
			b[bad[k].at] = bad[k].to;
		ASSERT_EQ(full_io(s, b, HDR, true), 0);
		EXPECT_EQ(reply(_metadata, s, 100 + k, y), bad[k].status);
		EXPECT_TRUE(closed(s));
		close(s);
	}
	good_request(_metadata, self->sock, 1);
	snprintf(want, sizeof(want), "served 1 requests on %u connections: 0 failed, %u headers refused",
		 k + 1, k);
	stop_and_expect(_metadata, &self->pid, self->out, want);
}

TEST_F(server, staller_times_out)
{
	uint8_t hello[HDR], b[HDR + IN];
	float y[4];
	int s = dial(self->sock, hello);

	ASSERT_GE(s, 0);
	request(b, 9, IN);
	ASSERT_EQ(full_io(s, b, HDR + 3, true), 0);
	/* the server's -t 1: the rest never comes */
	EXPECT_EQ(reply(_metadata, s, 9, y), -ETIMEDOUT);
	EXPECT_TRUE(closed(s));
	close(s);
	good_request(_metadata, self->sock, 2);
	stop_and_expect(_metadata, &self->pid, self->out, "1 timed out");
}

TEST_F(server, reader_that_stops_is_cut_off)
{
	uint8_t hello[HDR], b[HDR + IN];
	struct timeval tv = { .tv_sec = 20 };
	int s = dial(self->sock, hello), small = 1024, err = 0, k;

	ASSERT_GE(s, 0);
	setsockopt(s, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	/* requests, never a reply read: the replies back up, then ours */
	for (k = 0; k < 1000000 && !err; k++) {
		request(b, k, IN);
		err = full_io(s, b, sizeof(b), true);
	}
	/* cut off at the server's deadline (-t 1), not by our timeout */
	EXPECT_TRUE(err == -EPIPE || err == -ECONNRESET);
	close(s);
	good_request(_metadata, self->sock, 6);
	stop_and_expect(_metadata, &self->pid, self->out,
			"1 gone before the reply");
}

TEST_F(server, dropped_mid_request)
{
	uint8_t hello[HDR], b[HDR + IN];
	int s = dial(self->sock, hello);

	ASSERT_GE(s, 0);
	request(b, 3, IN);
	ASSERT_EQ(full_io(s, b, HDR + 5, true), 0);
	close(s);
	good_request(_metadata, self->sock, 4);
	stop_and_expect(_metadata, &self->pid, self->out,
			"1 dropped mid-request");
}

TEST_F(server, connections_past_the_limit_turned_away)
{
	uint8_t hello[HDR], b[HDR + IN];
	int s[64], extra, k;
	float y[4];

	for (k = 0; k < 64; k++) {
		s[k] = dial(self->sock, hello);
		ASSERT_GE(s[k], 0);
		ASSERT_EQ(memcmp(hello, "NPRH", 4), 0);
	}
	extra = dial(self->sock, b);
	ASSERT_GE(extra, 0);
	EXPECT_EQ(memcmp(b, "NPRA", 4), 0);
	EXPECT_EQ((int32_t)get32(b + 4), -EBUSY);
	EXPECT_TRUE(closed(extra));
	close(extra);
	close(s[0]);
	/* a freed slot serves again */
	for (k = 0; k < 100; k++) {
		extra = dial(self->sock, b);
		ASSERT_GE(extra, 0);
		if (!memcmp(b, "NPRH", 4))
			break;
		close(extra);
		usleep(10000);
	}
	ASSERT_EQ(memcmp(b, "NPRH", 4), 0);
	request(b, 5, IN);
	ASSERT_EQ(full_io(extra, b, sizeof(b), true), 0);
	EXPECT_EQ(reply(_metadata, extra, 5, y), 0);
	close(extra);
	for (k = 1; k < 64; k++)
		close(s[k]);
}

TEST_HARNESS_MAIN
