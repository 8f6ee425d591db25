// SPDX-License-Identifier: MIT
/*
 * The smallest whole program on an installed npuring, built as a user
 * builds it (Documentation/install.rst):
 *
 *   cc hello.c $(pkg-config --cflags --libs npuring) -o hello
 *   ./hello open-closed-eye-0001.xml [DEVICE]
 *
 * Loads a classifier with f32 ports whose output is a softmax (e.g.
 * open-closed-eye-0001 FP32), compiles it, runs it once on a synthetic
 * image and checks that the probabilities are probabilities: each in
 * [0, 1], their sum 1.
 */
#include <stdio.h>
#include <stdlib.h>

#include <npuring.h>

/* the call's result, or the library's message and exit status 1 */
static int check(int ret, const char *what)
{
	if (ret < 0) {
		fprintf(stderr, "hello: %s: %s (%d)\n", what, npr_last_error(),
			ret);
		exit(1);
	}
	return ret;
}

/* port @index's elements (one of @out); its rank and dims in @p */
static size_t port_elems(int fd, __u32 exec, __u32 index, int out,
			 struct npr_port_info *p)
{
	size_t n = 1;
	__u32 i;

	npr_prep_port_info(p, exec, index, out, NULL, 0);
	check(npr_ioctl(fd, NPR_IOCTL_PORT_INFO, p), "PORT_INFO");
	for (i = 0; i < p->rank; i++)
		n *= (size_t)p->dims[i];
	return n;
}

int main(int argc, char **argv)
{
	struct npr_port_info pin, pout;
	struct npr_model_load ml;
	struct npr_compile co;
	struct npr_req_create rc;
	struct npr_tensor_arg t;
	struct npr_infer inf;
	float *in, *out, sum = 0, best = -1;
	size_t nin, nout, i, top = 0;
	int fd;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: hello MODEL.xml [DEVICE]\n");
		return 2;
	}
	printf("npuring %s (built with %d.%d.%d)\n", npr_version(),
	       NPURING_VERSION_MAJOR, NPURING_VERSION_MINOR,
	       NPURING_VERSION_PATCH);
	fd = check(npr_open(argc > 2 ? argv[2] : "cpu", 0), "npr_open");
	npr_prep_model_load(&ml, argv[1], NULL);
	check(npr_ioctl(fd, NPR_IOCTL_MODEL_LOAD, &ml), "MODEL_LOAD");
	npr_prep_compile(&co, ml.handle);
	check(npr_ioctl(fd, NPR_IOCTL_COMPILE, &co), "COMPILE");
	npr_prep_req_create(&rc, co.exec);
	check(npr_ioctl(fd, NPR_IOCTL_REQ_CREATE, &rc), "REQ_CREATE");

	nin = port_elems(fd, co.exec, 0, 0, &pin);
	nout = port_elems(fd, co.exec, 0, 1, &pout);
	if (pin.elem_type != NPR_ELEM_F32 || pout.elem_type != NPR_ELEM_F32) {
		fprintf(stderr, "hello: the model's ports are not f32\n");
		return 1;
	}
	in = malloc(nin * sizeof(*in));
	out = malloc(nout * sizeof(*out));
	if (!in || !out)
		return 1;
	/* a smooth synthetic image in the model's own value range */
	for (i = 0; i < nin; i++)
		in[i] = (float)(i % 251);

	npr_prep_tensor(&t, rc.req, 0, 0, in, nin * sizeof(*in));
	t.elem_type = pin.elem_type;
	t.rank = pin.rank;
	for (i = 0; i < pin.rank; i++)
		t.dims[i] = pin.dims[i];
	check(npr_ioctl(fd, NPR_IOCTL_SET_TENSOR, &t), "SET_TENSOR");
	npr_prep_infer(&inf, rc.req);
	check(npr_ioctl(fd, NPR_IOCTL_INFER, &inf), "INFER");
	npr_prep_tensor(&t, rc.req, 0, 1, out, nout * sizeof(*out));
	check(npr_ioctl(fd, NPR_IOCTL_GET_TENSOR, &t), "GET_TENSOR");

	for (i = 0; i < nout; i++) {
		if (!(out[i] >= 0 && out[i] <= 1)) {
			fprintf(stderr, "hello: output %zu is %g, not a probability\n",
				i, out[i]);
			return 1;
		}
		sum += out[i];
		if (out[i] > best) {
			best = out[i];
			top = i;
		}
	}
	printf("%zu classes, top %zu (p %.3f), sum %.4f, %.2f ms\n", nout, top,
	       best, sum, (inf.finished_ns - inf.started_ns) / 1e6);
	free(in);
	free(out);
	npr_close(fd);
	if (sum < 0.99f || sum > 1.01f) {
		fprintf(stderr, "hello: the probabilities sum to %g\n", sum);
		return 1;
	}
	return 0;
}
