// SPDX-License-Identifier: MIT
/*
 * Element types: sizes, names, f16 and bf16, and npr_convert() between
 * any two numeric types (F16C loops where CPUID reports them).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

/**
 * npr_elem_size() - bytes per element of a byte-addressable element type
 * @t: enum npr_elem_type
 *
 * Return: 1, 2, 4 or 8; 0 for sub-byte (u1, i4, u4), undefined and unknown
 * types.
 */
size_t npr_elem_size(unsigned int t)
{
	switch (t) {
	case NPR_ELEM_F64: case NPR_ELEM_I64: case NPR_ELEM_U64:
		return 8;
	case NPR_ELEM_F32: case NPR_ELEM_I32: case NPR_ELEM_U32:
		return 4;
	case NPR_ELEM_F16: case NPR_ELEM_BF16: case NPR_ELEM_I16:
	case NPR_ELEM_U16:
		return 2;
	case NPR_ELEM_I8: case NPR_ELEM_U8: case NPR_ELEM_BOOLEAN:
		return 1;
	default:
		return 0;
	}
}

static const char *const elem_names[NPR_ELEM_MAX] = {
	[NPR_ELEM_UNDEFINED] = "undefined",
	[NPR_ELEM_F32] = "f32", [NPR_ELEM_F16] = "f16",
	[NPR_ELEM_BF16] = "bf16", [NPR_ELEM_F64] = "f64",
	[NPR_ELEM_I8] = "i8", [NPR_ELEM_U8] = "u8",
	[NPR_ELEM_I16] = "i16", [NPR_ELEM_U16] = "u16",
	[NPR_ELEM_I32] = "i32", [NPR_ELEM_U32] = "u32",
	[NPR_ELEM_I64] = "i64", [NPR_ELEM_U64] = "u64",
	[NPR_ELEM_BOOLEAN] = "boolean", [NPR_ELEM_U1] = "u1",
	[NPR_ELEM_I4] = "i4", [NPR_ELEM_U4] = "u4",
};

/**
 * npr_elem_name() - the short name of an element type
 * @t: enum npr_elem_type
 *
 * Return: a static string ("f32", "i64", "boolean", ...), "?" for an
 * unknown type.
 */
const char *npr_elem_name(unsigned int t)
{
	return t < NPR_ELEM_MAX && elem_names[t] ? elem_names[t] : "?";
}

/**
 * npr_elem_parse() - an element type from its name
 * @s: "f32", "i64", ... as npr_elem_name() gives them, or "bool"; may be
 *     NULL
 *
 * Return: the NPR_ELEM_* value, 0 (NPR_ELEM_UNDEFINED) if @s names none.
 */
unsigned int npr_elem_parse(const char *s)
{
	unsigned int t;

	if (!s)
		return 0;
	for (t = 1; t < NPR_ELEM_MAX; t++)
		if (!strcmp(s, elem_names[t]))
			return t;
	if (!strcmp(s, "bool"))
		return NPR_ELEM_BOOLEAN;
	return 0;
}

/**
 * npr_tensor_bytes() - the size of @numel elements of @type
 * @type: enum npr_elem_type
 * @numel: the element count
 *
 * Sub-byte types are packed: u1 eight to a byte, i4 and u4 two, the last
 * byte rounded up.
 *
 * Return: the size in bytes; 0 for a negative @numel or an unknown type;
 * SIZE_MAX when the size does not fit in size_t (no allocation of it can
 * succeed, and the memory budget refuses it: npr_exec_budget()).
 */
size_t npr_tensor_bytes(unsigned int type, int64_t numel)
{
	size_t es;

	if (numel < 0)
		return 0;
	switch (type) {
	case NPR_ELEM_U1:
		return (size_t)(((uint64_t)numel + 7) / 8);
	case NPR_ELEM_I4: case NPR_ELEM_U4:
		return (size_t)(((uint64_t)numel + 1) / 2);
	default:
		es = npr_elem_size(type);
		if (es && (uint64_t)numel > SIZE_MAX / es)
			return SIZE_MAX;
		return (size_t)numel * es;
	}
}


/**
 * npr_f16_to_f32() - an IEEE half-precision value as a float
 * @h: the f16 bits
 *
 * Exact for every input, subnormals, infinities and NaNs included.
 *
 * Return: the value.
 */
float npr_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f;
	uint32_t man = h & 0x3ff;
	uint32_t bits;
	float f;

	if (exp == 0x1f) {
		bits = sign | 0x7f800000 | (man << 13);
	} else if (exp) {
		bits = sign | ((exp + 112) << 23) | (man << 13);
	} else if (man) {
		/* subnormal: value = man * 2^-24 */
		f = (float)man * 5.9604644775390625e-8f;
		return sign ? -f : f;
	} else {
		bits = sign;
	}
	memcpy(&f, &bits, 4);
	return f;
}

/**
 * npr_f32_to_f16() - a float rounded to IEEE half precision
 * @f: the value
 *
 * Rounds to nearest, ties to even; too large gives infinity, too small a
 * subnormal or a signed zero; a NaN stays a (quiet) NaN.
 *
 * Return: the f16 bits.
 */
uint16_t npr_f32_to_f16(float f)
{
	uint32_t x, sign, man;
	int exp;

	memcpy(&x, &f, 4);
	sign = (x >> 16) & 0x8000;
	exp = (int)((x >> 23) & 0xff) - 127 + 15;
	man = x & 0x7fffff;
	if (((x >> 23) & 0xff) == 0xff)	/* inf, nan */
		return sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0);
	if (exp >= 0x1f)
		return sign | 0x7c00;
	if (exp <= 0) {
		uint32_t m, r, half;
		int shift;

		if (exp < -10)
			return sign;
		m = man | 0x800000;
		shift = 14 - exp;
		r = m >> shift;
		half = 1u << (shift - 1);
		if ((m & ((half << 1) - 1)) > half ||
		    ((m & ((half << 1) - 1)) == half && (r & 1)))
			r++;
		return sign | r;
	}
	{
		uint32_t r = ((uint32_t)exp << 10) | (man >> 13);
		uint32_t rem = man & 0x1fff;

		if (rem > 0x1000 || (rem == 0x1000 && (r & 1)))
			r++;	/* may carry into the exponent: still right */
		return sign | r;
	}
}

/**
 * npr_bf16_to_f32() - a bfloat16 value as a float
 * @h: the bf16 bits, the high half of a float's
 *
 * Return: the value (exact).
 */
float npr_bf16_to_f32(uint16_t h)
{
	uint32_t bits = (uint32_t)h << 16;
	float f;

	memcpy(&f, &bits, 4);
	return f;
}

static uint16_t f32_to_bf16(float f)
{
	uint32_t x;

	memcpy(&x, &f, 4);
	if ((x & 0x7fffffff) > 0x7f800000)
		return (x >> 16) | 0x40;
	return (x + 0x7fff + ((x >> 16) & 1)) >> 16;
}

/* Load element i of a numeric array as double / int64. */
/*
 * Element @i of @p read through memcpy: a loaded model's floating-point
 * weights may be unaligned (struct npr_value), so nothing here assumes
 * more than byte alignment.
 */
#define LOAD(type, p, i) ({ type v_; memcpy(&v_, (const char *)(p) + \
				     (i) * sizeof(type), sizeof(type)); v_; })

static double load_f(const void *p, unsigned int t, size_t i)
{
	switch (t) {
	case NPR_ELEM_F32: return LOAD(float, p, i);
	case NPR_ELEM_F64: return LOAD(double, p, i);
	case NPR_ELEM_F16: return npr_f16_to_f32(LOAD(uint16_t, p, i));
	case NPR_ELEM_BF16: return npr_bf16_to_f32(LOAD(uint16_t, p, i));
	case NPR_ELEM_I8: return ((const int8_t *)p)[i];
	case NPR_ELEM_U8: return ((const uint8_t *)p)[i];
	case NPR_ELEM_BOOLEAN: return ((const uint8_t *)p)[i] != 0;
	case NPR_ELEM_I16: return LOAD(int16_t, p, i);
	case NPR_ELEM_U16: return LOAD(uint16_t, p, i);
	case NPR_ELEM_I32: return LOAD(int32_t, p, i);
	case NPR_ELEM_U32: return LOAD(uint32_t, p, i);
	case NPR_ELEM_I64: return (double)LOAD(int64_t, p, i);
	case NPR_ELEM_U64: return (double)LOAD(uint64_t, p, i);
	}
	return 0;
}

static int64_t load_i(const void *p, unsigned int t, size_t i)
{
	switch (t) {
	case NPR_ELEM_I64: return LOAD(int64_t, p, i);
	case NPR_ELEM_U64: return (int64_t)LOAD(uint64_t, p, i);
	case NPR_ELEM_I32: return LOAD(int32_t, p, i);
	case NPR_ELEM_U32: return LOAD(uint32_t, p, i);
	default: {
		double d = load_f(p, t, i);

		if (d != d)
			return 0;
		if (d >= 9.2233720368547758e18)
			return INT64_MAX;
		if (d <= -9.2233720368547758e18)
			return INT64_MIN;
		return (int64_t)d;
	}
	}
}

static bool is_float(unsigned int t)
{
	return t == NPR_ELEM_F32 || t == NPR_ELEM_F64 || t == NPR_ELEM_F16 ||
	       t == NPR_ELEM_BF16;
}

/*
 * The common conversions of model inputs, outputs and f16 weights, each
 * as one typed loop: the generic walk below goes through a double and a
 * switch per element (0.3 ms for squeezenet1.1 FP16's 227x227 f16 input,
 * a tenth of the inference).  Same bits: f16 -> f32 is exact, and the
 * F16C build of f32 -> f16 rounds to nearest even like npr_f32_to_f16()
 * (selftests check every f16 and the f32 around each).
 */
static void f16_to_f32_run(float *d, const uint16_t *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		d[i] = npr_f16_to_f32(s[i]);
}

static void f32_to_f16_run(uint16_t *d, const float *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		d[i] = npr_f32_to_f16(s[i]);
}

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

__attribute__((target("avx,f16c")))
static void f16_to_f32_f16c(float *d, const uint16_t *s, size_t n)
{
	size_t i;

	for (i = 0; i + 8 <= n; i += 8)
		_mm256_storeu_ps(d + i, _mm256_cvtph_ps(
			_mm_loadu_si128((const __m128i *)(s + i))));
	f16_to_f32_run(d + i, s + i, n - i);
}

__attribute__((target("avx,f16c")))
static void f32_to_f16_f16c(uint16_t *d, const float *s, size_t n)
{
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		__m256 v = _mm256_loadu_ps(s + i);
		__m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);

		/* NaN: the scalar conversion's quiet NaN, payload kept */
		if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q))) {
			f32_to_f16_run(d + i, s + i, 8);
			continue;
		}
		_mm_storeu_si128((__m128i *)(d + i), h);
	}
	f32_to_f16_run(d + i, s + i, n - i);
}

/* AVX with its state enabled by the OS, and F16C (CPUID 1, ECX bit 29;
 * not every compiler's __builtin_cpu_supports() knows "f16c") */
static bool has_f16c(void)
{
	static _Atomic int known = -1;	/* CPUID traps in a VM: once */
	unsigned int a, b, c, d;
	int v = known;

	if (v < 0) {
		__builtin_cpu_init();
		v = __builtin_cpu_supports("avx") &&
		    __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29));
		known = v;
	}
	return v;
}
#endif

/* @dst = @src for the pairs with a typed loop; false for the others. */
static bool convert_fast(void *dst, unsigned int dst_type, const void *src,
			 unsigned int src_type, size_t numel)
{
	size_t i;

#if defined(__x86_64__)
	bool f16c = has_f16c();
#define F16C_OR(fn)	(f16c ? fn##_f16c : fn##_run)
#else
#define F16C_OR(fn)	fn##_run
#endif
	if (src_type == NPR_ELEM_F16 && dst_type == NPR_ELEM_F32) {
		F16C_OR(f16_to_f32)(dst, src, numel);
		return true;
	}
	if (src_type == NPR_ELEM_F32 && dst_type == NPR_ELEM_F16) {
		F16C_OR(f32_to_f16)(dst, src, numel);
		return true;
	}
#undef F16C_OR
	if (src_type == NPR_ELEM_U8 && dst_type == NPR_ELEM_F32) {
		for (i = 0; i < numel; i++)
			((float *)dst)[i] = ((const uint8_t *)src)[i];
		return true;
	}
	return false;
}

/**
 * npr_convert() - convert numeric arrays between element types
 * @dst: destination, numel elements of @dst_type.
 * @dst_type: destination element type.
 * @src: source array.
 * @src_type: source element type.
 * @numel: number of elements.
 *
 * Float to integer truncates toward zero and saturates to the destination
 * range (NaN becomes 0); integer to integer wraps like C; boolean is != 0.
 *
 * Return: 0, or -EINVAL if either type is not a byte-addressable number.
 */
int npr_convert(void *dst, unsigned int dst_type, const void *src,
		unsigned int src_type, size_t numel)
{
	size_t i;

	if (!npr_elem_size(dst_type) || !npr_elem_size(src_type))
		return -EINVAL;
	if (!numel)		/* an empty tensor's data may be NULL */
		return 0;
	if (dst_type == src_type) {
		memmove(dst, src, numel * npr_elem_size(src_type));
		return 0;
	}
	if (convert_fast(dst, dst_type, src, src_type, numel))
		return 0;
	for (i = 0; i < numel; i++) {
		if (is_float(dst_type)) {
			double d = load_f(src, src_type, i);

			switch (dst_type) {
			case NPR_ELEM_F32: ((float *)dst)[i] = (float)d; break;
			case NPR_ELEM_F64: ((double *)dst)[i] = d; break;
			case NPR_ELEM_F16:
				((uint16_t *)dst)[i] = npr_f32_to_f16((float)d);
				break;
			case NPR_ELEM_BF16:
				((uint16_t *)dst)[i] = f32_to_bf16((float)d);
				break;
			}
			continue;
		}
		if (dst_type == NPR_ELEM_BOOLEAN) {
			((uint8_t *)dst)[i] = load_f(src, src_type, i) != 0;
			continue;
		}
		{
			int64_t v;

			if (is_float(src_type)) {
				double d = load_f(src, src_type, i);
				double lo, hi;

				switch (dst_type) {
				case NPR_ELEM_I8: lo = INT8_MIN; hi = INT8_MAX; break;
				case NPR_ELEM_U8: lo = 0; hi = UINT8_MAX; break;
				case NPR_ELEM_I16: lo = INT16_MIN; hi = INT16_MAX; break;
				case NPR_ELEM_U16: lo = 0; hi = UINT16_MAX; break;
				case NPR_ELEM_I32: lo = INT32_MIN; hi = INT32_MAX; break;
				case NPR_ELEM_U32: lo = 0; hi = UINT32_MAX; break;
				case NPR_ELEM_U64: lo = 0; hi = 9.2233720368547758e18; break;
				default: lo = -9.2233720368547758e18; hi = 9.2233720368547758e18;
				}
				if (d != d)
					d = 0;
				d = trunc(d);
				if (d < lo)
					d = lo;
				if (d > hi)
					d = hi;
				v = d >= 9.2233720368547758e18 ? INT64_MAX :
				    (int64_t)d;
			} else {
				v = load_i(src, src_type, i);
			}
			switch (dst_type) {
			case NPR_ELEM_I8: ((int8_t *)dst)[i] = (int8_t)v; break;
			case NPR_ELEM_U8: ((uint8_t *)dst)[i] = (uint8_t)v; break;
			case NPR_ELEM_I16: ((int16_t *)dst)[i] = (int16_t)v; break;
			case NPR_ELEM_U16: ((uint16_t *)dst)[i] = (uint16_t)v; break;
			case NPR_ELEM_I32: ((int32_t *)dst)[i] = (int32_t)v; break;
			case NPR_ELEM_U32: ((uint32_t *)dst)[i] = (uint32_t)v; break;
			case NPR_ELEM_I64: ((int64_t *)dst)[i] = v; break;
			case NPR_ELEM_U64: ((uint64_t *)dst)[i] = (uint64_t)v; break;
			}
		}
	}
	return 0;
}
