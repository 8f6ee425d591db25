/* SPDX-License-Identifier: MIT */
/*
 * Images decoded from memory for npr-batch, which reads its files through
 * io_uring: PNG (libpng) and JPEG (libjpeg-turbo) into the 8-bit RGB
 * struct npr_image of image.h; tensor elements to and from f32.
 */
#ifndef NPR_TOOLS_BATCH_DECODE_H
#define NPR_TOOLS_BATCH_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "image.h"

/* What a buffer holds, from its first bytes. */
enum batch_format {
	BATCH_FMT_OTHER = 0,
	BATCH_FMT_PNG,
	BATCH_FMT_JPEG,
};

enum batch_format batch_sniff(const void *buf, size_t len);
int batch_decode(const void *buf, size_t len, struct npr_image *img,
		 char *msg, size_t msglen);


#endif /* NPR_TOOLS_BATCH_DECODE_H */
