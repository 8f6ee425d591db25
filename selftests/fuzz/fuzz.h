/* SPDX-License-Identifier: MIT */
/*
 * What the fuzz targets of selftests/fuzz/ share: a reader that takes
 * numbers and byte ranges off the front of the input, a cpu device with
 * one thread, the load -> compile -> request -> infer -> destroy chain, and
 * two tiny IR models (ReLU; Add of a constant, with weights) for the
 * targets that need a real model to reach the compile and infer paths.
 *
 * Every target is deterministic per input and frees what it made: the
 * replay driver (replay.c) runs a corpus many times and measures the
 * process, so that a leak shows as growth.
 */
#ifndef FUZZ_H
#define FUZZ_H

#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <npuring.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The front of the input, consumed as the target reads it. */
struct fz {
	const uint8_t *p;
	size_t n;
};

static inline unsigned int fz_u8(struct fz *f)
{
	if (!f->n)
		return 0;
	f->n--;
	return *f->p++;
}

static inline uint32_t fz_u16(struct fz *f)
{
	return fz_u8(f) | fz_u8(f) << 8;
}

static inline uint32_t fz_u32(struct fz *f)
{
	return fz_u16(f) | (uint32_t)fz_u16(f) << 16;
}

static inline uint64_t fz_u64(struct fz *f)
{
	return fz_u32(f) | (uint64_t)fz_u32(f) << 32;
}

/* Up to @len bytes off the front; *@got says how many there were. */
static inline const uint8_t *fz_bytes(struct fz *f, size_t len, size_t *got)
{
	const uint8_t *p = f->p;

	if (len > f->n)
		len = f->n;
	f->p += len;
	f->n -= len;
	*got = len;
	return p;
}

/*
 * Split an input into a model file and its weights: a little-endian u32
 * length of the first part, then the two parts (a length past the end
 * takes everything).  fuzz_ir.c and the seed script agree on this.
 */
static inline void fz_split(const uint8_t *data, size_t size,
			    const uint8_t **xml, size_t *xml_len,
			    const uint8_t **bin, size_t *bin_len)
{
	struct fz f = { data, size };
	uint32_t n = fz_u32(&f);

	*xml = fz_bytes(&f, n, xml_len);
	*bin = f.p;
	*bin_len = f.n;
}

/* Remove the files of @dir (a target's private directory, flat). */
static inline void fz_clear_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[512];

	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
}

static inline void fz_destroy(int fd, uint32_t h)
{
	struct npr_handle_destroy d;

	npr_prep_destroy(&d, h);
	npr_ioctl(fd, NPR_IOCTL_HANDLE_DESTROY, &d);
}

/*
 * A device with one inference thread (the same work for the same input)
 * and a memory budget of 512 MiB per compiled model, so that a model
 * asking for more, at COMPILE or from its input values at INFER, is
 * refused with -EFBIG as a service would set it, below the fuzzer's own
 * memory limit.
 */
static inline int fz_open(const char *name)
{
	struct npr_param p = {
		.size = sizeof(p), .param = NPR_PARAM_INFERENCE_NUM_THREADS,
		.value = 1,
	};
	struct npr_param m = {
		.size = sizeof(m), .param = NPR_PARAM_NPR_MAX_MODEL_MEMORY_MB,
		.value = 512,
	};
	int fd = npr_open(name, 0);

	if (fd >= 0) {
		npr_ioctl(fd, NPR_IOCTL_SET_PARAM, &p);
		npr_ioctl(fd, NPR_IOCTL_SET_PARAM, &m);
	}
	return fd;
}

/*
 * Largest input or output a target runs: a fuzzer's time goes to reading
 * models, not to the minutes a valid but huge one takes to infer.
 */
#define FZ_MAX_ELEMS	(1 << 16)

/* Are all of @exec's inputs and outputs small enough to run? */
static inline int fz_small(int fd, uint32_t exec)
{
	struct npr_model_info mi = { .size = sizeof(mi), .handle = exec };
	struct npr_port_info pi;
	unsigned int i, k;

	if (npr_ioctl(fd, NPR_IOCTL_MODEL_INFO, &mi))
		return 0;
	for (i = 0; i < mi.num_inputs + mi.num_outputs; i++) {
		uint64_t n = 1;

		npr_prep_port_info(&pi, exec, i < mi.num_inputs ? i :
				   i - mi.num_inputs, i >= mi.num_inputs,
				   NULL, 0);
		if (npr_ioctl(fd, NPR_IOCTL_PORT_INFO, &pi))
			return 0;
		for (k = 0; k < pi.rank && k < NPR_MAX_RANK; k++) {
			if (pi.dims[k] < 0)
				continue;
			if (pi.dims[k] > FZ_MAX_ELEMS)
				return 0;
			n *= pi.dims[k];
			if (n > FZ_MAX_ELEMS)
				return 0;
		}
	}
	return 1;
}

/*
 * Create @exec's request and run it once with the inputs as created
 * (zeros) when its tensors are small (fz_small()), then destroy the
 * request.  Return: INFER's result.
 */
static inline int fz_infer_exec(int fd, uint32_t exec)
{
	struct npr_req_create rc;
	struct npr_infer in;
	int err;

	if (!fz_small(fd, exec))
		return -EFBIG;
	npr_prep_req_create(&rc, exec);
	err = npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc);
	if (err)
		return err;
	npr_prep_infer(&in, rc.req);
	err = npr_ioctl(fd, NPR_IOCTL_INFER, &in);
	fz_destroy(fd, rc.req);
	return err;
}

/*
 * MODEL_LOAD from memory, COMPILE with the model's own shapes, one
 * inference, and everything destroyed again.
 */
static inline int fz_load_run(int fd, const void *xml, size_t xml_len,
			      const void *bin, size_t bin_len)
{
	struct npr_model_load ml;
	struct npr_compile co;
	int err;

	npr_prep_model_load_mem(&ml, xml, xml_len, bin, bin_len);
	err = npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml);
	if (err)
		return err;
	npr_prep_compile(&co, ml.handle);
	err = npr_ioctl(fd, NPR_IOCTL_COMPILE, &co);
	if (!err) {
		err = fz_infer_exec(fd, co.exec);
		fz_destroy(fd, co.exec);
	}
	fz_destroy(fd, ml.handle);
	return err;
}

#define FZ_PORT(id, dims)						\
	"<port id=\"" id "\" precision=\"FP32\">" dims "</port>"
#define FZ_DIMS14	"<dim>1</dim><dim>4</dim>"

/* y = ReLU(x), x and y f32 [1,4]: no weights. */
static const char fz_relu_xml[] =
	"<?xml version=\"1.0\"?><net name=\"relu\" version=\"11\"><layers>"
	"<layer id=\"0\" name=\"x\" type=\"Parameter\" version=\"opset1\">"
	"<data shape=\"1,4\" element_type=\"f32\"/>"
	"<output>" FZ_PORT("0", FZ_DIMS14) "</output></layer>"
	"<layer id=\"1\" name=\"y\" type=\"ReLU\" version=\"opset1\">"
	"<input>" FZ_PORT("0", FZ_DIMS14) "</input>"
	"<output>" FZ_PORT("1", FZ_DIMS14) "</output></layer>"
	"<layer id=\"2\" name=\"y/sink\" type=\"Result\" version=\"opset1\">"
	"<input>" FZ_PORT("0", FZ_DIMS14) "</input></layer>"
	"</layers><edges>"
	"<edge from-layer=\"0\" from-port=\"0\" to-layer=\"1\" to-port=\"0\"/>"
	"<edge from-layer=\"1\" from-port=\"1\" to-layer=\"2\" to-port=\"0\"/>"
	"</edges></net>";

/* y = x + c, c an f32 [1,4] constant of the weights: fz_add_bin. */
static const char fz_add_xml[] =
	"<?xml version=\"1.0\"?><net name=\"add\" version=\"11\"><layers>"
	"<layer id=\"0\" name=\"x\" type=\"Parameter\" version=\"opset1\">"
	"<data shape=\"1,4\" element_type=\"f32\"/>"
	"<output>" FZ_PORT("0", FZ_DIMS14) "</output></layer>"
	"<layer id=\"1\" name=\"c\" type=\"Const\" version=\"opset1\">"
	"<data element_type=\"f32\" shape=\"1,4\" offset=\"0\" size=\"16\"/>"
	"<output>" FZ_PORT("0", FZ_DIMS14) "</output></layer>"
	"<layer id=\"2\" name=\"y\" type=\"Add\" version=\"opset1\">"
	"<input>" FZ_PORT("0", FZ_DIMS14) FZ_PORT("1", FZ_DIMS14) "</input>"
	"<output>" FZ_PORT("2", FZ_DIMS14) "</output></layer>"
	"<layer id=\"3\" name=\"y/sink\" type=\"Result\" version=\"opset1\">"
	"<input>" FZ_PORT("0", FZ_DIMS14) "</input></layer>"
	"</layers><edges>"
	"<edge from-layer=\"0\" from-port=\"0\" to-layer=\"2\" to-port=\"0\"/>"
	"<edge from-layer=\"1\" from-port=\"0\" to-layer=\"2\" to-port=\"1\"/>"
	"<edge from-layer=\"2\" from-port=\"2\" to-layer=\"3\" to-port=\"0\"/>"
	"</edges></net>";

static const float fz_add_bin[4] = { 1.0f, -2.0f, 0.5f, 4.0f };

#endif /* FUZZ_H */
