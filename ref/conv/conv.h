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

struct npr_conv_plan;

/**
 * npr_conv_plan_new() - plan a convolution with weights @w
 * @d: geometry.
 * @w: weights, copied (packed); need not outlive the plan.  NULL: none
 *     (a plan for npr_conv_plan_use_prepared()).
 * @kern: GEMM micro-kernel, NULL for the best one.
 * @out: the plan; free with npr_conv_plan_free().
 * Return: 0, -ENOMEM.
 */
int npr_conv_plan_new(const struct npr_conv_desc *d, const float *w,
		      const struct npr_gemm_kern *kern,
		      struct npr_conv_plan **out);

/**
 * npr_conv_plan_free() - free a plan and what it owns
 * @p: the plan, or NULL.  Buffers it borrowed from a blob
 *     (npr_conv_plan_use_prepared()) stay the blob's.
 */
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

/**
 * npr_conv_plan_new_pool() - npr_conv_plan_new(), the MaxPool @pd fused
 * when the plan's path can pool rows while they are in cache
 * @pd: a MaxPool that alone reads the output (after bias and
 *      activation, which commute with max).
 *
 * npr_conv_plan_pooled() tells whether it was fused: the plan then
 * writes the pooled output, [N, K, @pd->OH, @pd->OW], and takes no
 * residual.  Return: as npr_conv_plan_new().
 */
int npr_conv_plan_new_pool(const struct npr_conv_desc *d,
			   const struct npr_pool_desc *pd, const float *w,
			   const struct npr_gemm_kern *kern,
			   struct npr_conv_plan **out);

/**
 * npr_conv_plan_pooled() - does the plan do the MaxPool it was given?
 * @p: a plan from npr_conv_plan_new_pool().
 * Return: true when it writes the pooled output.
 */
bool npr_conv_plan_pooled(const struct npr_conv_plan *p);

/**
 * npr_conv_plan_set_mean() - fuse the mean over each output plane
 * @p: a plan whose epilogue (without residual) is set.
 *
 * The plan then writes [N, K] means (of the outputs after the epilogue)
 * instead of [N, K, OH, OW]: a ReduceMean over H and W (global average
 * pooling) that alone reads the output.
 * Return: 0, or -EOPNOTSUPP when the plan's path does not do it.
 */
int npr_conv_plan_set_mean(struct npr_conv_plan *p);
const char *npr_conv_plan_kernel(const struct npr_conv_plan *p);

/**
 * npr_conv_plan_epi() - set the epilogue
 * @bias: K values (copied), or NULL.
 * @residual: npr_conv_plan_run() gets a tensor shaped like the output.
 * @act, @lo, @hi: enum npr_act and Clamp bounds.
 * Return: 0 or -ENOMEM.
 */
int npr_conv_plan_epi(struct npr_conv_plan *p, const float *bias,
		      bool residual, int act, float lo, float hi);

/*
 * After the epilogue, activations the kernels do not compute in their
 * write-out: the plan's run applies them to its output planes in a
 * parallel pass (the fusion pass, lib/passes/fuse.c, finds them in the
 * graph).
 */
enum { NPR_POST_NONE, NPR_POST_PRELU, NPR_POST_UNARY };

/**
 * npr_conv_plan_post() - set the activation after the epilogue
 * @kind: enum above.
 * @slope: PReLU: 1 or K slopes (copied).
 * @nslope: their count.
 * @op: NPR_POST_UNARY: an f32 activation of npr_ref_unary_f32()
 *      (Sigmoid, Swish, HSwish...), copied.
 * @beta: its Swish beta.
 * Return: 0, -EINVAL for a plan with a pool or the mean fused (the
 * activation would come after them) or a bad slope count, -ENOMEM.
 */
struct npr_eltwise_params;
int npr_conv_plan_post(struct npr_conv_plan *p, int kind, const float *slope,
		       int64_t nslope, const struct npr_eltwise_params *op,
		       float beta);

/**
 * npr_conv_plan_run() - y = act(conv(x) + bias + res)
 * Return: 0 or -ENOMEM.
 * Context: any thread; a plan may run on several threads at once.
 */
int npr_conv_plan_run(const struct npr_conv_plan *p, const float *x,
		      float *y, const float *res);

/**
 * npr_conv_plan_run_n() - npr_conv_plan_run() on @n images of the batch
 * @x, @y, @res: the first of those images (whole images, NCHW).
 * Return: 0, -EINVAL when @n is not in 1..N, -ENOMEM.
 */
int npr_conv_plan_run_n(const struct npr_conv_plan *p, const float *x,
			float *y, const float *res, int64_t n);

/**
 * npr_conv_plan_sweeps() - does @p run several images in one sweep over
 * its weights?
 * @p: the plan.
 * Return: true for weights larger than an image's input and output,
 * which npr_conv_plan_run_n() then reads once for several images.
 */
bool npr_conv_plan_sweeps(const struct npr_conv_plan *p);

/**
 * npr_conv_plan_desc() - describe a plan, for profiles
 * @p: the plan.
 * @buf: Out. "3x3/2 C64 K128 G1 56x56 N1 im2col-gemm+maxpool" and the like.
 * @len: size of @buf.
 * Return: the FLOPs of one run over the batch.
 */
double npr_conv_plan_desc(const struct npr_conv_plan *p, char *buf,
			  size_t len);

/**
 * npr_conv_plan_build() - plan the fused step the fusion pass described
 * @g: the compiled graph.
 * @f: npr_fuse_match()'s description of a convolution of @g.
 * @pack: pack the weights from the graph; false: the plan gets none and
 *        npr_conv_plan_use_prepared() must give it some before it runs.
 * @out: Out. The plan, written on success; free with
 *       npr_conv_plan_free().  It copies what it needs of the graph.
 *
 * The plan does the convolution and @f's epilogue; @f's tail (a MaxPool
 * or ReduceMean) only when its path can (see npr_conv_plan_new_pool(),
 * npr_conv_plan_set_mean()).
 * Return: 1 when the plan does the tail too, 0 when it stops before it,
 * -EOPNOTSUPP when @pack is set and the weights have no data, -ENOMEM.
 */
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
/**
 * npr_pack_im2col_generic() - pack rows [@k0, @k0 + @kc) and columns
 * [@j0, @j0 + @nc) of the im2col matrix into GEMM B panels
 * @src: a struct npr_im2col_src.
 * @k0: first row (input channel c at tap (ky, kx)).
 * @kc: rows.
 * @j0: first column (output pixel).
 * @nc: columns.
 * @nr: panel width.
 * @dst: Out. The panels, @nr columns each, zero past @nc.
 *
 * Built from conv_pack.h in run.c; npr_pack_im2col_avx512() is the
 * same source built with -mavx512f.
 */
void npr_pack_im2col_generic(const void *src, int64_t k0, int64_t kc,
			     int64_t j0, int64_t nc, int nr, float *dst);
void npr_pack_im2col_avx512(const void *src, int64_t k0, int64_t kc,
			    int64_t j0, int64_t nc, int nr, float *dst);

/**
 * npr_unpad_rows_generic() - the direct path's write-out: output channels
 * [@k0, @k1) computed at pitch @wp, into @y at pitch OW, with the epilogue
 * @d: geometry.
 * @t: the sums, row pitch @wp.
 * @wp: the padded plane's pitch.
 * @y: Out. The output planes.
 * @bias: K values, or NULL.
 * @res: the residual, shaped like @y, or NULL.
 * @act: enum npr_act.
 * @lo: Clamp's lower bound.
 * @hi: Clamp's upper bound.
 * @k0: first channel.
 * @k1: end channel.
 *
 * Built from conv_pack.h in run.c; npr_unpad_rows_avx512() is the same
 * source built with -mavx512f.
 */
void npr_unpad_rows_generic(const struct npr_conv_desc *d, const float *t,
			    int64_t wp, float *y, const float *bias,
			    const float *res, int act, float lo, float hi,
			    int64_t k0, int64_t k1);
void npr_unpad_rows_avx512(const struct npr_conv_desc *d, const float *t,
			   int64_t wp, float *y, const float *bias,
			   const float *res, int act, float lo, float hi,
			   int64_t k0, int64_t k1);

/**
 * npr_dw_plane_generic() - one depthwise output plane
 * @d: geometry (one input and one output channel per group).
 * @x: the input plane.
 * @wc: its kh x kw weights.
 * @y: Out. The output plane.
 * @res: the residual plane, or NULL.
 * @b: the bias.
 * @act: enum npr_act.
 * @lo: Clamp's lower bound.
 * @hi: Clamp's upper bound.
 *
 * Depthwise planes (conv_dw.h): this portable build is made in run.c,
 * npr_dw_plane_avx512() in ref/arch/x86/conv_dw_avx512.c.
 */
void npr_dw_plane_generic(const struct npr_conv_desc *d, const float *x,
			  const float *wc, float *y, const float *res, float b,
			  int act, float lo, float hi);
void npr_dw_plane_avx512(const struct npr_conv_desc *d, const float *x,
			 const float *wc, float *y, const float *res, float b,
			 int act, float lo, float hi);

/**
 * npr_dw_flat_generic() - npr_dw_plane_generic() as flat loops over a
 * padded copy, for strides 1 and 2
 * @d: as npr_dw_plane_generic().
 * @x: as npr_dw_plane_generic().
 * @wc: as npr_dw_plane_generic().
 * @y: as npr_dw_plane_generic().
 * @res: as npr_dw_plane_generic().
 * @b: as npr_dw_plane_generic().
 * @act: as npr_dw_plane_generic().
 * @lo: as npr_dw_plane_generic().
 * @hi: as npr_dw_plane_generic().
 *
 * Return: 0, or -1 without memory for the padded copy (the caller then
 * runs npr_dw_plane_generic()).
 */
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
void npr_prelu_row_avx512(float *y, int64_t n, float s);
void npr_sum_rows_avx512(const float *x, int64_t outer, int64_t inner,
			 float *y, bool mean);
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
