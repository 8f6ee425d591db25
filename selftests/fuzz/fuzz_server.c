// SPDX-License-Identifier: MIT
/*
 * fuzz_server - libFuzzer target for examples/uring-server's wire format.
 *
 * The input is a connection's byte stream:
 *   byte 0     the model's input size for the parser, 1..64 bytes
 *   byte 1     the seed of the piece sizes
 *   the rest   what the client sent
 *
 * First it goes through the server's receive state (wire_rx_*) in pieces
 * the way recv() would return them.  Complete requests are checked and the
 * next one started, a refused header ends the stream as the server closes
 * the connection there.  The frame is allocated to its exact size, so a
 * byte received past it is a sanitizer report.  The first 16 bytes also go
 * through the clients' hello and reply decoders.
 *
 * Then the same client bytes go to a real server (examples/server.c, on
 * the cpu device, a four-element ReLU, no deadlines) over a socketpair,
 * the write side shut after the last byte.  What comes back must be the
 * hello and exactly the replies the parser predicts: each good request's
 * ReLU, in order with its id, then the refusal of a bad header if there
 * is one, and nothing more; the connection must be closed and freed.
 * Without io_uring (the server cannot start) this half is left out.
 *
 * The parser and the server are compiled into the target (wire.c and
 * server.c included below): the fuzz build and the corpus replay need the
 * library and liburing, no objects from examples/.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../examples/wire.c"
#include "../../examples/server.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int cond)
{
	if (!cond)
		abort();
}

static void client_side(const uint8_t *b)
{
	uint8_t again[WIRE_HDR_BYTES];
	struct wire_reply r;
	uint32_t in, out;
	int err;

	err = wire_get_hello(b, &in, &out);
	check(err <= 0);
	if (!err) {
		check(in && out && in <= WIRE_MAX_TENSOR &&
		      out <= WIRE_MAX_TENSOR);
		wire_put_hello(again, in, out);
		check(!memcmp(again, b, WIRE_HDR_BYTES));
	}
	err = wire_get_reply(b, 4, &r);
	check(err == 0 || err == -EPROTO);
	if (!err) {
		check(r.status <= 0 && r.length == (r.status ? 0u : 4u));
		wire_put_reply(again, r.status, r.id, r.length);
		check(!memcmp(again, b, WIRE_HDR_BYTES));
	}
}

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

#define RELU_BYTES	16

/* Checks one reply at @got against the request the parser completed. */
static size_t check_answer(const uint8_t *got, size_t left,
			   const struct wire_rx *rx)
{
	struct wire_reply r;
	float x[4], y[4];
	int k;

	check(left >= WIRE_HDR_BYTES + RELU_BYTES);
	check(!wire_get_reply(got, RELU_BYTES, &r));
	check(!r.status && r.id == rx->req.id);
	memcpy(x, rx->frame + WIRE_HDR_BYTES, sizeof(x));
	memcpy(y, got + WIRE_HDR_BYTES, sizeof(y));
	for (k = 0; k < 4; k++)
		check(isnan(x[k]) || y[k] == (x[k] > 0 ? x[k] : 0));
	return WIRE_HDR_BYTES + RELU_BYTES;
}

/* What the server must have sent for @data: checked against @got. */
static void check_replies(const uint8_t *data, size_t size,
			  const uint8_t *got, size_t have)
{
	uint8_t frame[WIRE_HDR_BYTES + RELU_BYTES], *where;
	struct wire_reply r;
	struct wire_rx rx;
	uint32_t in, out;
	size_t at = WIRE_HDR_BYTES, n;
	int ret;

	check(have >= WIRE_HDR_BYTES && !wire_get_hello(got, &in, &out) &&
	      in == RELU_BYTES && out == RELU_BYTES);
	wire_rx_init(&rx, frame, RELU_BYTES);
	while (size) {
		n = wire_rx_space(&rx, &where);
		n = n < size ? n : size;
		memcpy(where, data, n);
		data += n;
		size -= n;
		ret = wire_rx_advance(&rx, n);
		if (ret < 0) {
			check(have - at == WIRE_HDR_BYTES);
			check(!wire_get_reply(got + at, RELU_BYTES, &r));
			check(r.status == ret && r.id == rx.req.id);
			at += WIRE_HDR_BYTES;
			break;
		}
		if (ret == 1) {
			at += check_answer(got + at, have - at, &rx);
			wire_rx_reset(&rx);
		}
	}
	check(at == have);
}

/* Sends what it can of @data, reads what has come back. */
static void pump(int s, const uint8_t *data, size_t size, size_t *sent,
		 uint8_t *got, size_t cap, size_t *have)
{
	ssize_t n;

	if (*sent < size) {
		n = send(s, data + *sent, size - *sent,
			 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0)
			*sent += n;
		else if (n < 0 && errno != EAGAIN)
			*sent = size;	/* the server has closed */
		if (*sent == size)
			shutdown(s, SHUT_WR);
	}
	do {
		check(*have < cap);	/* never more than the replies */
		n = recv(s, got + *have, cap - *have, MSG_DONTWAIT);
		if (n > 0)
			*have += n;
	} while (n > 0);
}

static void serve(const uint8_t *data, size_t size)
{
	static int up;
	size_t cap, sent = 0, have = 0;
	long steps = 0;
	uint8_t *got;
	int sv[2];

	if (!up)
		up = server_start("cpu", NULL, relu_xml, sizeof(relu_xml) - 1,
				  0) ? -1 : 1;
	if (up < 0)
		return;
	/* the hello, a reply per request, one more for a refusal */
	cap = 2 * WIRE_HDR_BYTES +
	      (size / (WIRE_HDR_BYTES + RELU_BYTES)) *
	      (WIRE_HDR_BYTES + RELU_BYTES) + 1;
	got = malloc(cap);
	if (!got || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		free(got);
		return;
	}
	server_adopt(sv[0]);
	if (!size)
		shutdown(sv[1], SHUT_WR);
	while (server_open_conns()) {
		pump(sv[1], data, size, &sent, got, cap, &have);
		server_step();
		check(++steps < 1000000);
	}
	pump(sv[1], data, size, &sent, got, cap, &have);
	close(sv[1]);
	check_replies(data, size, got, have);
	free(got);
}

/**
 * LLVMFuzzerTestOneInput() - one connection's bytes through the parser
 * @data: the input (see the file comment)
 * @size: its length
 *
 * Return: 0 (libFuzzer's convention); a broken invariant aborts.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *stream;
	uint32_t in_bytes, seed;
	struct wire_rx rx;
	struct wire_req q;
	uint8_t *frame, *where;
	size_t space, n, len;
	int ret;

	if (size < 2)
		return 0;
	in_bytes = 1 + data[0] % 64;
	seed = data[1] | 0x100;
	data += 2;
	size -= 2;
	stream = data;
	len = size;
	if (size >= WIRE_HDR_BYTES)
		client_side(data);
	frame = malloc(WIRE_HDR_BYTES + in_bytes);
	if (!frame)
		return 0;
	wire_rx_init(&rx, frame, in_bytes);
	while (size) {
		space = wire_rx_space(&rx, &where);
		check(space && where == frame + rx.have &&
		      rx.have + space == WIRE_HDR_BYTES + in_bytes);
		/* a receive never takes more than the space */
		check(wire_rx_advance(&rx, space + 1) == -EINVAL);
		seed = seed * 1103515245u + 12345u;
		n = 1 + (seed >> 16) % space;
		n = n < size ? n : size;
		memcpy(where, data, n);
		data += n;
		size -= n;
		ret = wire_rx_advance(&rx, n);
		if (ret < 0) {
			/* refused: as the decoder says, and the stream ends */
			check(rx.have >= WIRE_HDR_BYTES && !rx.hdr_ok);
			check(wire_get_req(frame, in_bytes, &q) == ret);
			check(ret == -EPROTO || ret == -EPROTONOSUPPORT ||
			      ret == -EINVAL || ret == -EMSGSIZE);
			break;
		}
		check(rx.hdr_ok == (rx.have >= WIRE_HDR_BYTES));
		if (ret == 1) {
			check(rx.req.magic == WIRE_MAGIC_REQ &&
			      rx.req.version == WIRE_VERSION &&
			      !rx.req.flags && rx.req.length == in_bytes);
			wire_rx_reset(&rx);
		}
	}
	free(frame);
	serve(stream, len);
	return 0;
}
