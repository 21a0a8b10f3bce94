//===- onednn.h - library calls of an artifact, on oneDNN -----------------===//
//
// An artifact's matmuls (f32, bf16 / f16 with f32 sums, each with its bias /
// residual / relu epilogue) and f32 convolutions are calls of the runtime's
// library_call (abi.h); the descriptor lists each call's kind and sizes. A
// session creates one oneDNN primitive per call when it is created and runs
// it on the operands the generated code passes; small matmuls go to a CBLAS
// instead (blas.h, docs/cpu-gemm.md). oneDNN is loaded with dlopen when the
// first call needs it, so the runtime loads (and runs artifacts without
// library calls) on machines without it.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_CPU_ONEDNN_H
#define TCC_RUNTIME_CPU_ONEDNN_H

#include "runtime/include/tcc/abi.h"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace tcc::rt {

/// "" when CALL is well formed (known kind, a dtype the ABI allows for it,
/// the kind's parameter and operand counts, positive sizes, 0/1 flags, known
/// epilogue bits); otherwise what is wrong. Shared by CPU and device
/// artifacts: whether a runtime can run the dtype is checked per session.
std::string checkLibraryCall(const tcc_abi_library_call &call);

/// A checked MATMUL's tcc_matmul_epilogue bits (0 for 7-parameter calls).
int64_t matmulEpilogue(const tcc_abi_library_call &call);

/// A checked MATMUL's HEADS (1 unless it has 12 parameters) and its
/// tcc_matmul_interleaved bits (0 unless it has 12).
int64_t matmulHeads(const tcc_abi_library_call &call);
int64_t matmulInterleaved(const tcc_abi_library_call &call);

/// A checked call's output dtype (a MATMUL's C and D): a MATMUL's 9th
/// parameter, a convolution's 21st, when it has one that is not 0, else the
/// call's dtype.
int32_t libraryCallOutputDtype(const tcc_abi_library_call &call);

/// A checked call's tcc_library_math (a MATMUL's 10th parameter, a
/// convolution's 20th, when it has one, else TCC_LIBRARY_MATH_EXACT).
int64_t libraryCallMath(const tcc_abi_library_call &call);

/// Which library runs a session's MATMUL calls.
enum class MatmulLibrary {
  Auto,   ///< BLAS where blasPrefers() says so and a BLAS is loaded, else oneDNN
  OneDnn, ///< every one on oneDNN
  Blas,   ///< every one on BLAS (tests and bench/gemm; fails without a BLAS)
};

/// How a session runs its 16-bit (bf16 / f16 operands, f32 sums) matmul
/// and convolution calls.
enum class SixteenBitCalls {
  /// TCC_SIXTEEN_BIT_CALLS ("native" or "widened") where it is set, else
  /// native where oneDNN computes in the 16-bit type with the CPU's own
  /// instructions (bf16: AVX512-BF16 or AMX), widened elsewhere.
  Auto,
  Native,  ///< oneDNN's 16-bit primitive on the 16-bit operands
  Widened, ///< oneDNN's f32 primitive on f32 copies, C rounded once
};

/// What a session does with calls whose MATH is TF32 (abi.h).
enum class LibraryMath {
  RefuseTf32, ///< refuse them: TF32 is a GPU mode (a CPU artifact's session)
  Tf32AsFp32, ///< compute them in fp32, more precise than TF32 (the emulated
              ///< CUDA device, emulator.h)
};

/// Whether a matmul or convolution call of DTYPE runs natively in a session asking for
/// MODE (false for f32). Loads oneDNN to ask for its instruction set.
bool nativeSixteenBitCalls(int32_t dtype, SixteenBitCalls mode = SixteenBitCalls::Auto);

/// The 16-bit instructions oneDNN computes bf16 products with on this CPU:
/// "AMX", "AVX512-BF16", or "" (none: bf16 calls are widened).
std::string sixteenBitCallsIsa();

/// Whether call C runs on the calling thread alone, and is planned for one
/// thread: too few flops for a parallel region to pay.
bool serialCall(const tcc_abi_library_call &c);

/// Whether oneDNN's f32 matmuls on this CPU are its AVX-512 kernels
/// (brgemm), which read strided operands well and take small row panels;
/// below AVX-512 they are its gemm:jit sgemm (PanelLimits::large()).
/// Loads oneDNN to ask for its instruction set.
bool oneDnnHasAvx512();

/// The primitives of one session.
class LibraryCalls {
public:
  /// Creates a primitive per call (CALLS validated), or plans its BLAS
  /// call (MATMULS). Throws Error(TCC_ERROR_UNSUPPORTED) when oneDNN (or,
  /// for MatmulLibrary::Blas, a BLAS) cannot be loaded or refuses a call
  /// (a TF32 one unless MATH says otherwise), naming WHAT (the artifact)
  /// and the call.
  ///
  /// FILTER_SETS are tcc-filter-layouts' sets (abi.h's
  /// TCC_METADATA_FILTER_LAYOUT_PREFIX), each the rows of its convolution
  /// calls: a set whose first forward call's primitive reads the filter in
  /// a blocked layout without padding keeps its buffers in that layout
  /// (its calls read and write them so), unless TCC_FILTER_LAYOUTS is
  /// "plain"; the session converts the set's tensors where they enter and
  /// leave (convertFilter).
  LibraryCalls(const tcc_abi_library_call *calls, int32_t count, const std::string &what,
               MatmulLibrary matmuls = MatmulLibrary::Auto,
               SixteenBitCalls sixteenBit = SixteenBitCalls::Auto,
               LibraryMath math = LibraryMath::RefuseTf32,
               const std::vector<std::vector<int32_t>> &filterSets = {});
  ~LibraryCalls();
  LibraryCalls(const LibraryCalls &) = delete;
  LibraryCalls &operator=(const LibraryCalls &) = delete;

  /// Bytes of scratch memory the largest call needs (oneDNN's scratchpad).
  size_t scratchpadSize() const { return scratchpadSize_; }
  /// Where the calls' scratchpad lives (set once, before any run).
  void setScratchpad(void *scratchpad) { scratchpad_ = scratchpad; }

  /// The ABI's library_call: runs call INDEX on OPERANDS. Records the first
  /// failure instead of throwing (it is called from generated code).
  static void run(void *self, int32_t index, void *const *operands);
  /// The failure recorded since the last call, or "" (and clears it).
  std::string takeError();

  /// oneDNN's name for each call's implementation ("brg:avx2", ...), or
  /// "blas:" and the BLAS's file.
  std::vector<std::string> implementations() const;

  /// One call's primitives (reorders and the computation); opaque.
  struct Call;

  /// Whether filter set SET keeps its buffers in a library layout.
  bool keepsFilterLayout(size_t set) const;
  /// The element count of a kept set's buffers (its filter's).
  int64_t filterElements(size_t set) const;
  /// Copies a tensor of kept set SET (DTYPE: f32, bf16 or f16; the
  /// filter's element count) from FROM to TO, from plain OIHW into the
  /// set's layout (TO_LAYOUT) or back. FROM and TO do not overlap.
  void convertFilter(size_t set, int32_t dtype, const void *from, void *to, bool toLayout);

private:
  /// A kept set's layout and its filter's dimensions; opaque.
  struct FilterLayout;
  void createStream();
  /// Decides each filter set's layout; returns each call's set, or -1.
  std::vector<int> chooseFilterLayouts(const tcc_abi_library_call *calls, int32_t count,
                                       const std::vector<std::vector<int32_t>> &sets,
                                       SixteenBitCalls sixteenBit);

  std::vector<std::unique_ptr<FilterLayout>> filterLayouts_; ///< null: plain
  std::vector<std::unique_ptr<Call>> calls_;
  void *stream_ = nullptr;
  void *scratchpad_ = nullptr;
  size_t scratchpadSize_ = 0;
  std::string error_;
  std::string what_;
};

} // namespace tcc::rt

#endif // TCC_RUNTIME_CPU_ONEDNN_H
