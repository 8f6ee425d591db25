// SPDX-License-Identifier: MIT
/*
 * wire.c - encode and decode the uring-server wire format (wire.h), and the
 * server's per-connection receive state: where the next bytes of a request
 * go, and whether its header is good once it has arrived.  Pure functions
 * on caller buffers, so the fuzz target drives exactly the server's code.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "wire.h"

static void put16(uint8_t *b, uint16_t v)
{
	b[0] = v;
	b[1] = v >> 8;
}

static void put32(uint8_t *b, uint32_t v)
{
	b[0] = v;
	b[1] = v >> 8;
	b[2] = v >> 16;
	b[3] = v >> 24;
}

static uint16_t get16(const uint8_t *b)
{
	return b[0] | (uint16_t)b[1] << 8;
}

static uint32_t get32(const uint8_t *b)
{
	return b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	       (uint32_t)b[3] << 24;
}

/**
 * wire_put_hello() - encode the server's hello
 * @b: WIRE_HDR_BYTES bytes
 * @in_bytes: the payload of every request
 * @out_bytes: the payload of every successful reply
 */
void wire_put_hello(uint8_t *b, uint32_t in_bytes, uint32_t out_bytes)
{
	put32(b, WIRE_MAGIC_HELLO);
	put16(b + 4, WIRE_VERSION);
	put16(b + 6, 0);
	put32(b + 8, in_bytes);
	put32(b + 12, out_bytes);
}

/**
 * wire_get_hello() - decode the server's hello
 * @b: WIRE_HDR_BYTES bytes
 * @in_bytes: set to the payload of every request
 * @out_bytes: set to the payload of every successful reply
 *
 * A server with no free connection sends an error reply instead of a
 * hello; its status is returned.
 *
 * Return: 0; the refusal's -errno; -EPROTO for anything but a hello or a
 * refusal, -EPROTONOSUPPORT for another version, -EMSGSIZE for a tensor
 * size of 0 or over WIRE_MAX_TENSOR.
 */
int wire_get_hello(const uint8_t *b, uint32_t *in_bytes, uint32_t *out_bytes)
{
	int32_t status;

	if (get32(b) == WIRE_MAGIC_REPLY) {
		status = (int32_t)get32(b + 4);
		return status < 0 && status > -4096 ? status : -EPROTO;
	}
	if (get32(b) != WIRE_MAGIC_HELLO || get16(b + 6))
		return -EPROTO;
	if (get16(b + 4) != WIRE_VERSION)
		return -EPROTONOSUPPORT;
	*in_bytes = get32(b + 8);
	*out_bytes = get32(b + 12);
	if (!*in_bytes || !*out_bytes || *in_bytes > WIRE_MAX_TENSOR ||
	    *out_bytes > WIRE_MAX_TENSOR)
		return -EMSGSIZE;
	return 0;
}

/**
 * wire_put_req() - encode a request header
 * @b: WIRE_HDR_BYTES bytes
 * @id: the request id the reply echoes
 * @length: the payload bytes that follow
 */
void wire_put_req(uint8_t *b, uint32_t id, uint32_t length)
{
	put32(b, WIRE_MAGIC_REQ);
	put16(b + 4, WIRE_VERSION);
	put16(b + 6, 0);
	put32(b + 8, id);
	put32(b + 12, length);
}

/**
 * wire_get_req() - decode and check a request header
 * @b: WIRE_HDR_BYTES bytes
 * @in_bytes: the payload every request must carry
 * @r: set to the decoded fields, whether or not they are good
 *
 * Return: 0 for a good header; -EPROTO for a bad magic,
 * -EPROTONOSUPPORT for another version, -EINVAL for nonzero flags or a
 * length short of @in_bytes, -EMSGSIZE for a length over it.
 */
int wire_get_req(const uint8_t *b, uint32_t in_bytes, struct wire_req *r)
{
	r->magic = get32(b);
	r->version = get16(b + 4);
	r->flags = get16(b + 6);
	r->id = get32(b + 8);
	r->length = get32(b + 12);
	if (r->magic != WIRE_MAGIC_REQ)
		return -EPROTO;
	if (r->version != WIRE_VERSION)
		return -EPROTONOSUPPORT;
	if (r->flags)
		return -EINVAL;
	if (r->length > in_bytes)
		return -EMSGSIZE;
	if (r->length < in_bytes)
		return -EINVAL;
	return 0;
}

/**
 * wire_put_reply() - encode a reply header
 * @b: WIRE_HDR_BYTES bytes
 * @status: 0, or the -errno the request failed with
 * @id: the request's id
 * @length: the payload bytes that follow (0 unless @status is 0)
 */
void wire_put_reply(uint8_t *b, int32_t status, uint32_t id, uint32_t length)
{
	put32(b, WIRE_MAGIC_REPLY);
	put32(b + 4, (uint32_t)status);
	put32(b + 8, id);
	put32(b + 12, length);
}

/**
 * wire_get_reply() - decode and check a reply header
 * @b: WIRE_HDR_BYTES bytes
 * @out_bytes: the payload of a successful reply (from the hello)
 * @r: set to the decoded fields
 *
 * Return: 0 for a well-formed reply (whatever its status); -EPROTO for a
 * bad magic, a positive status or a length that does not go with the
 * status.
 */
int wire_get_reply(const uint8_t *b, uint32_t out_bytes,
		   struct wire_reply *r)
{
	r->status = (int32_t)get32(b + 4);
	r->id = get32(b + 8);
	r->length = get32(b + 12);
	if (get32(b) != WIRE_MAGIC_REPLY || r->status > 0 ||
	    r->length != (r->status ? 0 : out_bytes))
		return -EPROTO;
	return 0;
}

/**
 * wire_rx_init() - start receiving requests on a connection
 * @rx: the receive state
 * @frame: WIRE_HDR_BYTES + @in_bytes bytes, owned by the caller
 * @in_bytes: the payload every request must carry
 */
void wire_rx_init(struct wire_rx *rx, uint8_t *frame, uint32_t in_bytes)
{
	memset(rx, 0, sizeof(*rx));
	rx->frame = frame;
	rx->in_bytes = in_bytes;
}

/**
 * wire_rx_space() - where the next received bytes go
 * @rx: the receive state
 * @where: set to the first free byte of the frame
 *
 * The space ends with the current request, so a client's next request is
 * never read into this one.
 *
 * Return: the most bytes to receive now (0 once the request is complete).
 */
size_t wire_rx_space(const struct wire_rx *rx, uint8_t **where)
{
	*where = rx->frame + rx->have;
	return WIRE_HDR_BYTES + (size_t)rx->in_bytes - rx->have;
}

/**
 * wire_rx_advance() - account for bytes received into wire_rx_space()
 * @rx: the receive state
 * @n: bytes received, at most what wire_rx_space() returned
 *
 * The header is checked as soon as all of it has arrived; @rx->req holds
 * it (also when it is refused, so the error reply can echo its id).
 *
 * Return: 1 when the request is complete (payload at @rx->frame +
 * WIRE_HDR_BYTES), 0 when more bytes are needed, the -errno of
 * wire_get_req() when the header is refused, -EINVAL for an @n past the
 * space.
 */
int wire_rx_advance(struct wire_rx *rx, size_t n)
{
	int err;

	if (n > WIRE_HDR_BYTES + (size_t)rx->in_bytes - rx->have)
		return -EINVAL;
	rx->have += n;
	if (!rx->hdr_ok && rx->have >= WIRE_HDR_BYTES) {
		err = wire_get_req(rx->frame, rx->in_bytes, &rx->req);
		if (err)
			return err;
		rx->hdr_ok = true;
	}
	return rx->have == WIRE_HDR_BYTES + (size_t)rx->in_bytes;
}

/**
 * wire_rx_reset() - get ready for the next request on the connection
 * @rx: the receive state
 */
void wire_rx_reset(struct wire_rx *rx)
{
	rx->have = 0;
	rx->hdr_ok = false;
	memset(&rx->req, 0, sizeof(rx->req));
}

/**
 * wire_full_io() - send or receive exactly @len bytes on a blocking socket
 * @fd: the socket.
 * @buf: the bytes.
 * @len: how many.
 * @wr: send (true) or receive.
 *
 * Return: 0; -errno of the call that failed; -EPIPE when the peer closed
 * first.
 */
int wire_full_io(int fd, void *buf, size_t len, bool wr)
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
