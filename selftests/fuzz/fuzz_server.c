// SPDX-License-Identifier: MIT
/*
 * fuzz_server - libFuzzer target for examples/uring-server's wire format.
 *
 * The input is a connection's byte stream, fed through the server's own
 * receive state (wire_rx_*) in pieces the way recv() would return them:
 *   byte 0     the model's input size, 1..64 bytes
 *   byte 1     the seed of the piece sizes
 *   the rest   what the client sent
 * Complete requests are checked and the next one started, a refused
 * header ends the stream as the server closes the connection there.  The
 * frame is allocated to its exact size, so a byte received past it is a
 * sanitizer report.  The first 16 bytes also go through the clients'
 * hello and reply decoders.
 *
 * The parser is compiled into the target (wire.c included below), so the
 * fuzz build and the corpus replay need no objects from examples/.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../examples/wire.c"

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

/**
 * LLVMFuzzerTestOneInput() - one connection's bytes through the parser
 * @data: the input (see the file comment)
 * @size: its length
 *
 * Return: 0 (libFuzzer's convention); a broken invariant aborts.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t in_bytes, seed;
	struct wire_rx rx;
	struct wire_req q;
	uint8_t *frame, *where;
	size_t space, n;
	int ret;

	if (size < 2)
		return 0;
	in_bytes = 1 + data[0] % 64;
	seed = data[1] | 0x100;
	data += 2;
	size -= 2;
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
	return 0;
}
