/* SPDX-License-Identifier: MIT */
/*
 * wire.h - the uring-server wire format, shared by the server, its clients
 * and the fuzz target (selftests/fuzz/fuzz_server.c).
 *
 * Every header is 16 bytes, every field little-endian:
 *
 *   hello   (server, once on connect)
 *           u32 magic "NPRH", u16 version, u16 flags (0),
 *           u32 input bytes, u32 output bytes
 *   request (client)
 *           u32 magic "NPRQ", u16 version, u16 flags (0),
 *           u32 id, u32 length (exactly the input bytes);
 *           then length bytes: the raw first input tensor
 *   reply   (server, one per request, in order)
 *           u32 magic "NPRA", s32 status (0 or -errno), u32 id (the
 *           request's), u32 length (the output bytes when status is 0,
 *           else 0); then length bytes: the raw first output tensor
 *
 * A request whose header is refused (bad magic, version, flags or length)
 * gets a reply with a negative status and then the server closes the
 * connection: a byte stream cannot be resynchronised after a bad header.
 */
#ifndef NPR_EXAMPLES_WIRE_H
#define NPR_EXAMPLES_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WIRE_VERSION		1
#define WIRE_HDR_BYTES		16
/* the four ASCII letters, read as a little-endian u32 */
#define WIRE_MAGIC_HELLO	0x4852504eu	/* "NPRH" */
#define WIRE_MAGIC_REQ		0x5152504eu	/* "NPRQ" */
#define WIRE_MAGIC_REPLY	0x4152504eu	/* "NPRA" */
/* the largest tensor either side accepts (1 GiB) */
#define WIRE_MAX_TENSOR		(1u << 30)

/**
 * struct wire_req - a decoded request header
 * @magic: WIRE_MAGIC_REQ in a good header
 * @version: WIRE_VERSION in a good header
 * @flags: 0 in a good header
 * @id: the client's request id, echoed in the reply
 * @length: the payload bytes that follow
 */
struct wire_req {
	uint32_t magic;
	uint16_t version;
	uint16_t flags;
	uint32_t id;
	uint32_t length;
};

/**
 * struct wire_reply - a decoded reply header
 * @status: 0, or the -errno the server answered with
 * @id: the request's id
 * @length: the payload bytes that follow
 */
struct wire_reply {
	int32_t status;
	uint32_t id;
	uint32_t length;
};

/**
 * struct wire_rx - the server's receive state for one connection
 * @frame: WIRE_HDR_BYTES + @in_bytes bytes: a request header and payload
 * @in_bytes: the payload every request must carry
 * @have: bytes of the current request received so far
 * @hdr_ok: the current request's header has arrived and is good
 * @req: the current request's header, decoded once it has arrived
 */
struct wire_rx {
	uint8_t *frame;
	uint32_t in_bytes;
	size_t have;
	bool hdr_ok;
	struct wire_req req;
};

void wire_put_hello(uint8_t *b, uint32_t in_bytes, uint32_t out_bytes);
int wire_get_hello(const uint8_t *b, uint32_t *in_bytes,
		   uint32_t *out_bytes);
void wire_put_req(uint8_t *b, uint32_t id, uint32_t length);
int wire_get_req(const uint8_t *b, uint32_t in_bytes, struct wire_req *r);
void wire_put_reply(uint8_t *b, int32_t status, uint32_t id,
		    uint32_t length);
int wire_get_reply(const uint8_t *b, uint32_t out_bytes,
		   struct wire_reply *r);

void wire_rx_init(struct wire_rx *rx, uint8_t *frame, uint32_t in_bytes);
size_t wire_rx_space(const struct wire_rx *rx, uint8_t **where);
int wire_rx_advance(struct wire_rx *rx, size_t n);
void wire_rx_reset(struct wire_rx *rx);

int wire_full_io(int fd, void *buf, size_t len, bool wr);

#endif /* NPR_EXAMPLES_WIRE_H */
