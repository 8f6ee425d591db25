// SPDX-License-Identifier: MIT
/*
 * hello.c in C++17: the public headers and the C library from a C++
 * program, built as a user builds it (Documentation/install.rst):
 *
 *   c++ -std=c++17 hello.cc $(pkg-config --cflags --libs npuring) -o hello++
 *   ./hello++ open-closed-eye-0001.xml [DEVICE]
 *
 * The device closes itself (RAII); a failing call throws with the
 * library's message.  The check is hello.c's: the softmax output's
 * probabilities each in [0, 1], their sum 1.
 */
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include <npuring.h>

namespace {

int check(int ret, const char *what)
{
	if (ret < 0)
		throw std::runtime_error(std::string(what) + ": " +
					 npr_last_error());
	return ret;
}

class Device {
public:
	explicit Device(const char *name) : fd_(check(npr_open(name, 0),
						     "npr_open")) {}
	~Device() { npr_close(fd_); }
	Device(const Device &) = delete;
	Device &operator=(const Device &) = delete;

	template <typename T> T &ioctl(unsigned long cmd, T &arg,
				       const char *what)
	{
		check(npr_ioctl(fd_, cmd, &arg), what);
		return arg;
	}

private:
	int fd_;
};

/* port @index of @exec (an output if @out): its rank, dims and type */
npr_port_info port(Device &dev, __u32 exec, __u32 index, bool out)
{
	npr_port_info p;

	npr_prep_port_info(&p, exec, index, out, nullptr, 0);
	return dev.ioctl(NPR_IOCTL_PORT_INFO, p, "PORT_INFO");
}

size_t elems(const npr_port_info &p)
{
	size_t n = 1;

	for (__u32 i = 0; i < p.rank; i++)
		n *= static_cast<size_t>(p.dims[i]);
	return n;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		std::fprintf(stderr, "usage: hello++ MODEL.xml [DEVICE]\n");
		return 2;
	}
	try {
		Device dev(argc > 2 ? argv[2] : "cpu");
		npr_model_load ml;
		npr_compile co;
		npr_req_create rc;
		npr_tensor_arg t;
		npr_infer inf;

		std::printf("npuring %s (built with %d.%d.%d), C++\n",
			    npr_version(), NPURING_VERSION_MAJOR,
			    NPURING_VERSION_MINOR, NPURING_VERSION_PATCH);
		npr_prep_model_load(&ml, argv[1], nullptr);
		dev.ioctl(NPR_IOCTL_MODEL_LOAD, ml, "MODEL_LOAD");
		npr_prep_compile(&co, ml.handle);
		dev.ioctl(NPR_IOCTL_COMPILE, co, "COMPILE");
		npr_prep_req_create(&rc, co.exec);
		dev.ioctl(NPR_IOCTL_REQ_CREATE, rc, "REQ_CREATE");

		npr_port_info pin = port(dev, co.exec, 0, false);
		npr_port_info pout = port(dev, co.exec, 0, true);
		if (pin.elem_type != NPR_ELEM_F32 ||
		    pout.elem_type != NPR_ELEM_F32)
			throw std::runtime_error("the model's ports are not f32");
		std::vector<float> in(elems(pin)), out(elems(pout));
		for (size_t i = 0; i < in.size(); i++)
			in[i] = static_cast<float>(i % 251);

		npr_prep_tensor(&t, rc.req, 0, 0, in.data(),
				in.size() * sizeof(float));
		t.elem_type = pin.elem_type;
		t.rank = pin.rank;
		for (__u32 i = 0; i < pin.rank; i++)
			t.dims[i] = pin.dims[i];
		dev.ioctl(NPR_IOCTL_SET_TENSOR, t, "SET_TENSOR");
		npr_prep_infer(&inf, rc.req);
		dev.ioctl(NPR_IOCTL_INFER, inf, "INFER");
		npr_prep_tensor(&t, rc.req, 0, 1, out.data(),
				out.size() * sizeof(float));
		dev.ioctl(NPR_IOCTL_GET_TENSOR, t, "GET_TENSOR");

		float sum = 0;
		for (float p : out) {
			if (!(p >= 0 && p <= 1))
				throw std::runtime_error(
					"an output is " + std::to_string(p) +
					", not a probability");
			sum += p;
		}
		std::printf("%zu classes, sum %.4f\n", out.size(), sum);
		if (sum < 0.99f || sum > 1.01f)
			throw std::runtime_error("the probabilities sum to " +
						 std::to_string(sum));
	} catch (const std::exception &e) {
		std::fprintf(stderr, "hello++: %s\n", e.what());
		return 1;
	}
	return 0;
}
