// SPDX-License-Identifier: MIT
/*
 * examples/token-server, the streaming token server: three clients
 * connected at once on a Unix socket, each asking the shared tiny_gpt
 * ($NPR_SHARED/models/llm) for its golden prompt's continuation at its
 * own length, are decoded side by side (each with its own request and
 * cache) and each gets the golden tokens, one at a time, then the end
 * mark; a bad request gets -EINVAL.
 *
 * Skipped without the model or the example built next to the tests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "harness.h"
#include "lm_util.h"

#define VOCAB	512
#define NCLI	3

static int connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (s >= 0 && connect(s, (struct sockaddr *)&sa, sizeof(sa))) {
		close(s);
		return -1;
	}
	return s;
}

static bool send_req(int s, uint32_t magic, uint32_t steps,
		     const int64_t *ids, uint32_t n)
{
	uint32_t h[3] = { magic, steps, n };

	return write(s, h, sizeof(h)) == sizeof(h) &&
	       write(s, ids, 8 * n) == (ssize_t)(8 * n);
}

TEST_TIMEOUT_F(three_clients_get_their_golden_tokens, 300)
{
	char self_path[PATH_MAX], bin[PATH_MAX + 32], model[4096];
	char dir[] = "/tmp/npr-tokens-test-XXXXXX", sock[96];
	static const uint32_t steps[NCLI] = { 32, 20, 9 };
	int64_t got[NCLI][40];
	int fd[NCLI], n[NCLI], i, k, open_n;
	bool ended[NCLI] = { false };
	struct lm_gold g;
	ssize_t len;
	pid_t pid;

	len = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);
	ASSERT_GT(len, 0);
	self_path[len] = 0;
	snprintf(bin, sizeof(bin), "%s/../examples/token-server",
		 dirname(self_path));
	if (access(bin, X_OK))
		SKIP(return, "examples/token-server not built next to the selftests");
	k = snprintf(model, sizeof(model), "%s/models/llm/tiny_gpt.onnx",
		     npr_test_shared());
	if (k < 0 || (size_t)k >= sizeof(model) || access(model, R_OK))
		SKIP(return, "tiny_gpt not found under $NPR_SHARED/models/llm");
	ASSERT_EQ(lm_gold_load(&g, model, VOCAB), 0);
	ASSERT_NE(mkdtemp(dir), NULL);
	snprintf(sock, sizeof(sock), "%s/sock", dir);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		execl(bin, bin, "-d", "cpu", "-m", model, "-s", sock, "-t",
		      "1", (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 1000 && access(sock, F_OK); i++)
		usleep(10000);
	ASSERT_EQ(access(sock, F_OK), 0);

	/* all three ask before any reads: they decode side by side */
	for (i = 0; i < NCLI; i++) {
		fd[i] = connect_to(sock);
		ASSERT_GE(fd[i], 0);
		ASSERT_TRUE(send_req(fd[i], 0x4752504eu, steps[i], g.tokens,
				     g.nprompt));
		n[i] = 0;
	}
	for (open_n = NCLI; open_n;) {
		struct pollfd p[NCLI];

		for (i = 0; i < NCLI; i++) {
			p[i].fd = ended[i] ? -1 : fd[i];
			p[i].events = POLLIN;
		}
		ASSERT_GT(poll(p, NCLI, 60000), 0);
		for (i = 0; i < NCLI; i++) {
			int64_t v;

			if (ended[i] || !(p[i].revents & (POLLIN | POLLHUP)))
				continue;
			ASSERT_EQ(read(fd[i], &v, 8), 8);
			if (v == INT64_MIN) {
				ended[i] = true;
				open_n--;
				continue;
			}
			ASSERT_GE(v, 0);
			ASSERT_LT(n[i], 40);
			got[i][n[i]++] = v;
		}
	}
	for (i = 0; i < NCLI; i++) {
		ASSERT_EQ(n[i], (int)steps[i]);
		for (k = 0; k < n[i]; k++)
			EXPECT_EQ(got[i][k], g.tokens[g.nprompt + k]);
		close(fd[i]);
	}

	/* a bad magic: -EINVAL, then the end of the connection */
	fd[0] = connect_to(sock);
	ASSERT_GE(fd[0], 0);
	ASSERT_TRUE(send_req(fd[0], 0x12345678u, 4, g.tokens, g.nprompt));
	{
		int64_t v = 0;

		ASSERT_EQ(read(fd[0], &v, 8), 8);
		EXPECT_EQ(v, -EINVAL);
		/* closed (reset: the prompt was left unread) */
		EXPECT_LE(read(fd[0], &v, 8), 0);
	}
	close(fd[0]);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	unlink(sock);
	rmdir(dir);
	lm_gold_free(&g);
}

TEST_HARNESS_MAIN
