/* SPDX-License-Identifier: MIT */
/*
 * Fast convolution for the CPU backend: plans built once at compile time
 * (weights packed for the GEMM micro-kernel, epilogue chosen), run per
 * request.
 *
 * Shapes: 1x1 stride 1 without padding is a GEMM straight on the input
 * (W[K, C] x X[C, HW]); any other k x k, stride, dilation and padding
 * packs the im2col view of the input directly into the GEMM's B panels
 * (no im2col buffer); depthwise (one input and one output channel per
 * group) runs a direct kernel that keeps one output row in L1.  The
 * bias, the residual Add and ReLU/Clamp are applied while the output is
 * in registers.
 */
#ifndef NPR_REF_CONV_H
#define NPR_REF_CONV_H

#include "graph/graph.h"
#include "passes/fuse.h"
#include "ref/gemm.h"

/**
 * struct npr_conv_desc - geometry of a 2-D convolution (1-D: H = kh = 1)
 * Weights are [K, C / G, kh, kw] (GroupConvolution's [G, K/G, C/G, ...]
 * is the same memory).
 */
struct npr_conv_desc {
	int64_t N, C, H, W, K, OH, OW, kh, kw;
	int64_t sh, sw, dh, dw, ph, pw, G;
};

/*
 * Plans: conv.c makes them, run.c runs them.  The kernel-doc of each
 * function is at its definition, as for the kernels built from the
 * templates below (conv_pack.h, conv_dw.h, wino.h, ref/kernels/vec.h).
 */
struct npr_conv_plan;

int npr_conv_plan_new(const struct npr_conv_desc *d, const float *w,
		      const struct npr_gemm_kern *kern,
		      struct npr_conv_plan **out);

void npr_conv_plan_free(struct npr_conv_plan *p);

/**
 * struct npr_pool_desc - a MaxPool over a convolution's output
 * @kh, @kw, @sh, @sw: window and stride (no dilation).
 * @ph, @pw: padding before; windows are clipped to the input.
 * @OH, @OW: the pooled plane.
 */
struct npr_pool_desc {
	int64_t kh, kw, sh, sw, ph, pw, OH, OW;
};

int npr_conv_plan_new_pool(const struct npr_conv_desc *d,
			   const struct npr_pool_desc *pd, const float *w,
			   const struct npr_gemm_kern *kern,
			   struct npr_conv_plan **out);

bool npr_conv_plan_pooled(const struct npr_conv_plan *p);

int npr_conv_plan_set_mean(struct npr_conv_plan *p);
const char *npr_conv_plan_kernel(const struct npr_conv_plan *p);

int npr_conv_plan_epi(struct npr_conv_plan *p, const float *bias,
		      bool residual, int act, float lo, float hi);

/*
 * After the epilogue, activations the kernels do not compute in their
 * write-out: the plan's run applies them to its output planes in a
 * parallel pass (the fusion pass, lib/passes/fuse.c, finds them in the
 * graph).
 */
enum { NPR_POST_NONE, NPR_POST_PRELU, NPR_POST_UNARY };

struct npr_eltwise_params;
int npr_conv_plan_post(struct npr_conv_plan *p, int kind, const float *slope,
		       int64_t nslope, const struct npr_eltwise_params *op,
		       float beta);

int npr_conv_plan_run(const struct npr_conv_plan *p, const float *x,
		      float *y, const float *res);

int npr_conv_plan_run_n(const struct npr_conv_plan *p, const float *x,
			float *y, const float *res, int64_t n);

bool npr_conv_plan_sweeps(const struct npr_conv_plan *p);

double npr_conv_plan_desc(const struct npr_conv_plan *p, char *buf,
			  size_t len);

int npr_conv_plan_build(const struct npr_graph *g, const struct npr_fusion *f,
			bool pack, struct npr_conv_plan **out);

/*
 * Prepared weights in a compiled-model blob: a plan's buffers
 * (npr_conv_plan_prepared()) are stored as opaque bytes under a layout
 * name made of this number and the GEMM kernel's name and tile; bump it
 * whenever what npr_gemm_a_pack(), the depthwise or the pixel-major path
 * store changes (the pixel-major path also names its own version and
 * limits, npr_conv_t_layout(), and the Winograd path whether it is
 * taken, npr_conv_wino_layout()), so that blobs written before are refused
 * (and the cache compiles again).
 */
#define NPR_CONV_PREP_LAYOUT	3

int npr_conv_t_layout(void);
int npr_conv_wino_layout(void);

int npr_conv_plan_prepared(const struct npr_conv_plan *p, const void **buf,
			   size_t *bytes, int max);
void npr_conv_plan_weights(const struct npr_conv_plan *p, float *w);
int npr_conv_plan_use_prepared(struct npr_conv_plan *p, const void *const *buf,
			       const size_t *bytes, int n);

/* the im2col view of one image and group, for the GEMM's B packing */
struct npr_im2col_src {
	const struct npr_conv_desc *d;
	const float *x;		/* image + first channel of the group */
};
void npr_pack_im2col_generic(const void *src, int64_t k0, int64_t kc,
			     int64_t j0, int64_t nc, int nr, float *dst);
void npr_pack_im2col_avx512(const void *src, int64_t k0, int64_t kc,
			    int64_t j0, int64_t nc, int nr, float *dst);

void npr_unpad_rows_generic(const struct npr_conv_desc *d, const float *t,
			    int64_t wp, float *y, const float *bias,
			    const float *res, int act, float lo, float hi,
			    int64_t k0, int64_t k1);
void npr_unpad_rows_avx512(const struct npr_conv_desc *d, const float *t,
			   int64_t wp, float *y, const float *bias,
			   const float *res, int act, float lo, float hi,
			   int64_t k0, int64_t k1);

void npr_dw_plane_generic(const struct npr_conv_desc *d, const float *x,
			  const float *wc, float *y, const float *res, float b,
			  int act, float lo, float hi);
void npr_dw_plane_avx512(const struct npr_conv_desc *d, const float *x,
			 const float *wc, float *y, const float *res, float b,
			 int act, float lo, float hi);

int npr_dw_flat_generic(const struct npr_conv_desc *d, const float *x,
			const float *wc, float *y, const float *res, float b,
			int act, float lo, float hi);
int npr_dw_flat_avx512(const struct npr_conv_desc *d, const float *x,
		       const float *wc, float *y, const float *res, float b,
		       int act, float lo, float hi);
/* stride 1 or 2, accumulators in registers, no padded copy; -1: not done */
int npr_dw_vec_avx512(const struct npr_conv_desc *d, const float *x,
		      const float *wc, float *y, const float *res, float b,
		      int act, float lo, float hi);

/*
 * Depthwise over a run of planes (conv_dw.h), with what the geometry
 * implies made once per plan by dw_tab_new() (conv.c).  At stride 1 with
 * OW == W a plane is a row of 16-pixel vectors: input pixel t + off[tap]
 * feeds output pixel t, m[v][tap] are the lanes of output vector v whose
 * tap is inside the input; for 3x3 with padding 1 and OH == H, cm[v]
 * (the lanes with a left and a right neighbour) replaces them.  s2: 3x3,
 * padding 1, stride 2, by rows.
 */
#define NPR_DW_TAPS	25
struct npr_dw_tab {
	int64_t npix, ipix, nv, taps, C;	/* out, in pixels per plane */
	int32_t off[NPR_DW_TAPS];
	uint16_t *m;		/* [nv][taps] load masks */
	int64_t H, W, OH, OW;
	bool s2;
	uint16_t *cm;		/* [nv][2]: lanes not in column 0, W - 1 */
};
void npr_dw_run_avx512(const struct npr_dw_tab *t, const float *x,
		       const float *w, const float *bias, float *y,
		       const float *res, int64_t p0, int64_t p1, int act,
		       float lo, float hi);

/* vec.h: the fully connected MatMul, portable and AVX-512 builds */
void npr_matmul_nt_generic(int64_t M, int64_t N, int64_t K, const float *A,
			   const float *B, float *C, int64_t ldc);
void npr_matmul_nn_generic(int64_t M, int64_t N, int64_t K, const float *A,
			   const float *B, float *C);
void npr_matmul_nt_avx512(int64_t M, int64_t N, int64_t K, const float *A,
			  const float *B, float *C, int64_t ldc);
void npr_matmul_nn_avx512(int64_t M, int64_t N, int64_t K, const float *A,
			  const float *B, float *C);
void npr_sum_rows_generic(const float *x, int64_t outer, int64_t inner,
			  float *y, bool mean);
void npr_prelu_row_generic(float *y, int64_t n, float s);
void npr_gelu_erf_generic(const float *x, float *y, int64_t n);
void npr_dot_rows_generic(const float *q, const float *k, int64_t E,
			  int64_t n, float *out);
void npr_dot_rows_avx512(const float *q, const float *k, int64_t E,
			 int64_t n, float *out);
void npr_axpy_rows_generic(const float *w, const float *v, int64_t n,
			   int64_t Ev, float *acc);
void npr_axpy_rows_avx512(const float *w, const float *v, int64_t n,
			  int64_t Ev, float *acc);
void npr_gelu_erf_avx512(const float *x, float *y, int64_t n);
void npr_prelu_row_avx512(float *y, int64_t n, float s);
void npr_sum_rows_avx512(const float *x, int64_t outer, int64_t inner,
			 float *y, bool mean);
void npr_div_row_generic(const float *acc, float d, float *y, int64_t n);
void npr_div_row_avx512(const float *acc, float d, float *y, int64_t n);
void npr_mvn_rows_generic(const float *x, float *y, int64_t outer,
			  int64_t inner, bool nv, bool inside, double eps);
void npr_mvn_rows_avx512(const float *x, float *y, int64_t outer,
			 int64_t inner, bool nv, bool inside, double eps);
void npr_pool_row_generic(bool maxp, const float *const *rows, int64_t nr,
			  int64_t W, int64_t kw, int64_t sw, int64_t dw,
			  int64_t pw,
			  const int64_t *o0, const int64_t *o1, int64_t OW,
			  float *acc);
void npr_pool_row_avx512(bool maxp, const float *const *rows, int64_t nr,
			 int64_t W, int64_t kw, int64_t sw, int64_t dw,
			 int64_t pw,
			 const int64_t *o0, const int64_t *o1, int64_t OW,
			 float *acc);
bool npr_pool2s2_plane_generic(bool maxp, const float *x, int64_t H,
			       int64_t W, float *y, int64_t OH, int64_t OW);
bool npr_pool2s2_plane_avx512(bool maxp, const float *x, int64_t H,
			      int64_t W, float *y, int64_t OH, int64_t OW);
bool npr_maxpool3s2_plane_generic(const float *x, int64_t H, int64_t W,
				  float *y, int64_t OH, int64_t OW);
bool npr_maxpool3s2_plane_avx512(const float *x, int64_t H, int64_t W,
				 float *y, int64_t OH, int64_t OW);
/* The scalar MatMul that npr_ref_matmul() falls back to (ref/kernels/nn.c). */
int npr_matmul_scalar(const struct npr_node *n, const struct npr_tensor *in,
		      struct npr_tensor *out);

/* The scalar pooling kernel that npr_ref_pool() falls back to (ref/kernels/nn.c). */
int npr_pool_scalar(const struct npr_node *n, const struct npr_tensor *in,
		    struct npr_tensor *out);

/*
 * Winograd F(2x2, 3x3) (wino.h, wino.c): U[xi][K][C] = G g G^T of the
 * weights [K, C, 3, 3]; for tiles [t0, t1) of one image (tw per row),
 * V[xi][C][t - t0] (row pitch @ldv, matrix xi at v + xi * vs) = B^T d B
 * of the 4x4 input tiles (@pad: 8 (tw + 1) floats of scratch); the
 * output transform of @n tiles' sums laid out as the pixel-major tile
 * leaves them (matrix xi at m + xi * ms) into two pixel-major output
 * rows (see wino.h).
 */
void npr_wino_weights(const float *w, int64_t K, int64_t C, float *u);
void npr_wino_in_generic(const struct npr_conv_desc *d, const float *x,
			 int64_t tw, int64_t t0, int64_t t1, float *pad,
			 float *v, int64_t ldv, int64_t vs);
void npr_wino_in_avx512(const struct npr_conv_desc *d, const float *x,
			int64_t tw, int64_t t0, int64_t t1, float *pad,
			float *v, int64_t ldv, int64_t vs);
void npr_wino_out_generic(const float *m, int64_t ms, int n, int nv,
			  float *r0, float *r1);
void npr_wino_out_avx512(const float *m, int64_t ms, int n, int nv,
			 float *r0, float *r1);

#endif /* NPR_REF_CONV_H */
