//===- blas.h - matmul library calls on a CBLAS ---------------------------===//
//
// oneDNN 2.6's matmul primitive pays a fixed cost per matrix of a batch,
// which dominates the tiny batched products of small attention layers, and
// runs a transposed left operand slowly; a CBLAS sgemm (OpenBLAS) does
// neither. LibraryCalls (onednn.h) sends the
// MATMUL calls that blasPrefers() names here and the rest to oneDNN; the
// shapes and the measurements behind the rule are in docs/cpu-gemm.md. The
// CBLAS is loaded with dlopen on first use, like oneDNN: without one every
// call stays on oneDNN.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_CPU_BLAS_H
#define TCC_RUNTIME_CPU_BLAS_H

#include "runtime/include/tcc/abi.h"

#include <string>

namespace tcc::rt {

/// The CBLAS of the process (one per process, loaded once).
struct Blas {
  /// cblas_sgemm with CBLAS's enums as ints (row-major 101, no-trans 111,
  /// trans 112).
  void (*sgemm)(int order, int transA, int transB, int m, int n, int k, float alpha,
                const float *a, int lda, const float *b, int ldb, float beta, float *c,
                int ldc) = nullptr;
  /// MKL's packed sgemm (cblas_sgemm_pack_get_size, cblas_sgemm_pack,
  /// cblas_sgemm_compute), or null elsewhere: B packed once, then the
  /// products of row panels of A against it (widenedPanelMatmul).
  size_t (*sgemmPackGetSize)(int identifier, int m, int n, int k) = nullptr;
  void (*sgemmPack)(int order, int identifier, int trans, int m, int n, int k, float alpha,
                    const float *src, int ld, float *dest) = nullptr;
  void (*sgemmCompute)(int order, int transA, int transB, int m, int n, int k, const float *a,
                       int lda, const float *b, int ldb, float beta, float *c,
                       int ldc) = nullptr;
  /// OpenBLAS's thread count setter, set only for a pthreads OpenBLAS (its
  /// own pool, sized per call to the caller's thread count); an OpenMP
  /// OpenBLAS follows the caller's OpenMP thread count by itself.
  void (*setThreads)(int) = nullptr;
  /// Intel's MKL (libmkl_rt, its GNU OpenMP layer bound to the process's
  /// libomp): faster than oneDNN 2.6 on most products, so more calls go to
  /// it (blasPrefers).
  bool mkl = false;
  std::string file; ///< what was loaded
};

/// The process's CBLAS, or null when there is none: TCC_BLAS_LIBRARY names
/// the file to load ("none": no BLAS), by default MKL's libmkl_rt where
/// scripts/setup.sh installs it (PyPI's mkl wheel in the venv /opt/tcc/mkl),
/// else Debian's OpenMP build of OpenBLAS (libopenblas0-openmp), loaded with
/// its OpenMP calls bound to the runtime's libomp (openmp_binding.h; one that
/// numpy loaded before, bound to libgomp, is loaded again from a private
/// copy). A library that cannot be loaded, lacks cblas_sgemm, or whose
/// OpenMP calls cannot be bound to libomp (an MKL whose threading layer
/// another library loaded) is not used: one line on stderr says why when
/// TCC_BLAS_LIBRARY named it or blasVerbose().
const Blas *blas();

/// Whether TCC_BLAS_VERBOSE is set (and not "0"): sessions then print how
/// many of their matmul calls run on BLAS, one line on stderr.
bool blasVerbose();

/// Whether a checked f32 MATMUL call runs faster on the process's BLAS
/// (blas(), loaded by this question) than on oneDNN (docs/cpu-gemm.md).
/// OpenBLAS: a batch of tiny matrices (attention's products at small head
/// sizes and sequences), or a weight gradient A^T B (batch 1, trans_a)
/// summing over many rows. MKL: see mklPrefers in blas.cpp.
bool blasPrefers(const tcc_abi_library_call &call);

/// Runs a checked f32 MATMUL (its first 7 parameters P, then its HEADS and
/// INTERLEAVED bits; epilogue bits EPILOGUE) on BLAS: operands
/// {A, B, C[, bias][, D]} as abi.h says, an interleaved operand's matrices
/// read through their leading dimension. The epilogue
/// follows the product in one pass over C, as oneDNN's post-ops do:
/// C = relu((A B + bias) + D). Runs on the calling thread's OpenMP thread
/// count (parallelThreads()).
void blasMatmul(const Blas &blas, const int64_t *p, int64_t epilogue, void *const *operands);

/// Matrix S of a MATMUL operand stored ROWS x COLS per matrix (abi.h):
/// where it starts, in elements, and its leading dimension; an interleaved
/// operand's rows span the heads ([batch / H, ROWS, H, COLS]).
struct StoredMatrix {
  int64_t rows, cols;
  bool interleaved;
  int64_t heads;
  int64_t start(int64_t s) const {
    return interleaved ? ((s / heads) * rows * heads + s % heads) * cols : s * rows * cols;
  }
  int64_t ld() const { return interleaved ? heads * cols : cols; }
};

/// COUNT rows of COLS 16-bit (DTYPE) values at FROM, leading dimension LD,
/// widened into dense TO; and dense FROM rounded into TO's rows (leading
/// dimension LD). On the calling thread.
void widenRows(int32_t dtype, const uint16_t *from, int64_t ld, int64_t count, int64_t cols,
               float *to);
void roundRows(int32_t dtype, const float *from, int64_t count, int64_t cols, uint16_t *to,
               int64_t ld);

/// A widened product's epilogue over COUNT rows of N f32 sums at FROM
/// (leading dimension LDF): relu((sum + BIAS) + D) as the epilogue bits say
/// (null BIAS / D: none; BIAS N values, D rows of leading dimension LDD),
/// stored into C's rows (leading dimension LDC). BIAS, D and C are of
/// DTYPE: f32, or a 16-bit type (widened; C rounded once). FROM may be C
/// itself (f32). On the calling thread.
void epilogueRows(int32_t dtype, const float *from, int64_t ldf, int64_t count, int64_t n,
                  const void *bias, const void *d, int64_t ldd, bool relu, void *c,
                  int64_t ldc);

/// Rows [FIRST, FIRST + COUNT) of op(A) for a 16-bit A (DTYPE) with K
/// columns (stored K x M when TRANS_A, leading dimension LD) widened into
/// TO: COUNT x K dense; transposed, K x COUNT (the stored columns as they
/// are: the product reads them transposed) unless PLAIN asks for COUNT x K
/// (COUNT at most PanelLimits::kMaxRows). On the calling thread.
void widenPanelOfA(int32_t dtype, const uint16_t *a, int64_t ld, bool transA, int64_t first,
                   int64_t count, int64_t k, float *to, bool plain = false);

/// The shape of a widened product's row panels (widenedPanelRows).
struct PanelLimits {
  static constexpr int64_t kMaxRows = 512;
  int64_t maxRows;  ///< rows per panel at most
  int64_t minRows;  ///< fewer (short of M) and the product is not run in panels
  size_t bytes;     ///< a thread's f32 panels of A and C at most
  bool shareRows;   ///< shrink panels (to 8 rows) so that every thread gets one,
                    ///< rather than not run in panels
  /// No panel that oneDNN 2.6's AVX2 sgemm would run without packing
  /// (1/rows + 1/N >= kNoCopyBound, its gemm_driver's first test) where it
  /// packs the whole product: gpt4's 2048 x 512 x 256 product ran 1.5x
  /// slower in 512-row panels than in full copies.
  bool packedLikeWhole = false;
  /// With shareRows: a 2-D product's panels in whole rounds of equal rows
  /// over the threads where that keeps minRows (without shareRows always).
  bool balanced = false;
  static constexpr double kNoCopyBound = 0.0038;

  /// Panels that stay in a thread's L2 cache: 128 rows, 2 MiB; for MKL's
  /// sgemm against B packed once.
  static PanelLimits cached() { return {128, 16, size_t(2) << 20, true, false}; }
  /// oneDNN's AVX-512 f32 kernels (brgemm) copy B per product: panels of
  /// 128 to 256 rows, 16 MiB (gpt4's products 1.025x their f32 time in
  /// 128-row panels of 2 MiB, 1.003x in 256-row ones; GPT-2-small's
  /// 256-row products 1.10-1.31x in two panels, 0.99-1.06x in one);
  /// fewer rows, and a product is widened through full-size copies.
  static PanelLimits brgemm() { return {256, 128, size_t(16) << 20, true, false, true}; }
  /// Panels of up to 512 rows, at least 256 (or a whole matrix), 8 MiB, a
  /// 2-D product's in whole rounds over the threads: below AVX-512
  /// oneDNN's f32 matmul is its gemm:jit sgemm, which takes products of
  /// few rows without packing them and ran gpt4's products 1.1-2.2x slower
  /// in panels of 128 or 256 rows than in panels of 512 (docs/cpu-gemm.md).
  static PanelLimits large() { return {kMaxRows, 256, size_t(8) << 20, false, true}; }
};

/// The rows of a widened product's panel (BATCH products of M x K by
/// K x N, C of C_DTYPE) within LIMITS: at most maxRows, and a thread's f32
/// panels of A and C (C's where C is 16-bit: an f32 C takes the product) at
/// most LIMITS.bytes; a multiple of 8 below M. Where the batch's panels
/// would not give each of THREADS threads one, fewer rows (at least 8) with
/// shareRows, else 0. Without shareRows a 2-D product's panels come in
/// whole rounds over the threads, of equal rows. 0 where minRows (or M)
/// rows would not fit.
int64_t widenedPanelRows(int64_t batch, int64_t m, int64_t n, int64_t k, int32_t cDtype,
                         int threads, const PanelLimits &limits = PanelLimits::cached());

/// How a widened 16-bit product C = op(A) B runs in row panels (2-D, on a
/// BLAS with packed sgemm): B, widened by the caller, is packed once; then
/// each thread widens a panel of ROWS rows of op(A) (columns of a
/// transposed A) into its own f32 buffer, multiplies it against packed B into its own f32 panel of
/// C (or into C itself when C is f32), and rounds that into C's rows. The
/// f32 copies of A and C never leave the thread's cache, where the
/// full-size copies went through memory (docs/precision.md). Scratch:
/// PACKED_BYTES for packed B, then THREADS buffers of PER_THREAD bytes.
struct WidenedPanels {
  int64_t rows = 0;
  int threads = 0;
  size_t packedBytes = 0, perThread = 0;
  size_t scratchBytes() const { return packedBytes + size_t(threads) * perThread; }
};

/// The panels of a widened product of M x K by K x N with C of C_DTYPE on
/// BLAS, for up to THREADS threads; rows = 0 where the product does not run
/// in panels (no packed sgemm, or a thread's buffers larger than 2 MiB at
/// 16 rows).
WidenedPanels planWidenedPanels(const Blas &blas, int64_t m, int64_t n, int64_t k,
                                int32_t cDtype, int threads);

/// Runs a widened 16-bit product as PLAN says: A (DTYPE, M x K stored as
/// TRANS_A says) and BF32 (B widened, K x N stored as TRANS_B says) into C (C_DTYPE, M x
/// N; with ACCUMULATE, onto what C holds: the sum rounded once), on the
/// calling thread's thread count (at most PLAN.threads).
void widenedPanelMatmul(const Blas &blas, const WidenedPanels &plan, const int64_t *p,
                        int32_t dtype, int32_t cDtype, const void *a, const float *bF32, void *c,
                        void *scratch);

} // namespace tcc::rt

#endif // TCC_RUNTIME_CPU_BLAS_H
