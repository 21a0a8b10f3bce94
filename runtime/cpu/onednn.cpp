//===- onednn.cpp - library calls of an artifact, on oneDNN ---------------===//
//
// Only oneDNN's C API, resolved with dlsym: the runtime has no link-time
// dependency on it. Memory descriptors are plain row-major (strides), exactly
// the generated code's buffers; primitives are created with a user-managed
// scratchpad, which the session places at the end of its arena.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/onednn.h"

#include "runtime/cpu/blas.h"
#include "runtime/cpu/half.h"
#include "runtime/cpu/onednn_rules.h"
#include "runtime/cpu/openmp_binding.h"
#include "runtime/cpu/parallel.h"
#include "runtime/dtype.h"
#include "runtime/error.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

namespace tcc::rt {

namespace {

#define TCC_DNNL_FUNCTIONS(X)                                                  \
  X(dnnl_engine_create)                                                        \
  X(dnnl_stream_create)                                                        \
  X(dnnl_stream_destroy)                                                       \
  X(dnnl_stream_wait)                                                          \
  X(dnnl_memory_desc_init_by_strides)                                          \
  X(dnnl_memory_desc_init_by_tag)                                              \
  X(dnnl_memory_desc_equal)                                                    \
  X(dnnl_reorder_primitive_desc_create)                                        \
  X(dnnl_memory_desc_get_size)                                                 \
  X(dnnl_matmul_desc_init)                                                     \
  X(dnnl_dilated_convolution_forward_desc_init)                                \
  X(dnnl_dilated_convolution_backward_data_desc_init)                          \
  X(dnnl_dilated_convolution_backward_weights_desc_init)                       \
  X(dnnl_primitive_attr_create)                                                \
  X(dnnl_primitive_attr_destroy)                                               \
  X(dnnl_primitive_attr_set_scratchpad_mode)                                   \
  X(dnnl_primitive_attr_set_post_ops)                                          \
  X(dnnl_post_ops_create)                                                      \
  X(dnnl_post_ops_destroy)                                                     \
  X(dnnl_post_ops_append_sum)                                                  \
  X(dnnl_post_ops_append_binary)                                               \
  X(dnnl_post_ops_append_eltwise)                                              \
  X(dnnl_primitive_desc_create)                                                \
  X(dnnl_primitive_desc_iterator_create)                                       \
  X(dnnl_primitive_desc_iterator_next)                                         \
  X(dnnl_primitive_desc_iterator_fetch)                                        \
  X(dnnl_primitive_desc_iterator_destroy)                                      \
  X(dnnl_primitive_desc_destroy)                                               \
  X(dnnl_primitive_desc_query)                                                 \
  X(dnnl_primitive_desc_query_md)                                              \
  X(dnnl_primitive_create)                                                     \
  X(dnnl_primitive_destroy)                                                    \
  X(dnnl_primitive_execute)                                                    \
  X(dnnl_memory_create)                                                        \
  X(dnnl_memory_set_data_handle)                                               \
  X(dnnl_memory_destroy)                                                       \
  X(dnnl_get_effective_cpu_isa)                                                \
  X(dnnl_status2str)

/// oneDNN's entry points and the one CPU engine of the process.
struct Api {
#define TCC_DNNL_POINTER(name) decltype(&::name) name = nullptr;
  TCC_DNNL_FUNCTIONS(TCC_DNNL_POINTER)
#undef TCC_DNNL_POINTER
  dnnl_engine_t engine = nullptr;
};

/// Loads oneDNN once per process (TCC_ONEDNN_LIBRARY names another file).
/// Throws Error(TCC_ERROR_UNSUPPORTED) with the reason; a later call retries.
const Api &api() {
  static std::mutex mutex;
  static Api *loaded = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (loaded)
    return *loaded;
  // oneDNN is built for GNU OpenMP: its GOMP_* and omp_* references must
  // bind to our libomp, even where another library loaded libgomp first.
  const char *env = std::getenv("TCC_ONEDNN_LIBRARY");
  std::string file = env && *env ? env : "libdnnl.so.2";
  std::string why;
  std::vector<void *> handles = loadOnOpenMP({file}, OpenMPLoad{}, why);
  if (handles.empty())
    fail(TCC_ERROR_UNSUPPORTED,
         "cannot load oneDNN (" + file + "): " + why + " (Debian: apt-get install libdnnl2)");
  void *handle = handles[0];
  auto result = std::make_unique<Api>();
#define TCC_DNNL_RESOLVE(name)                                                 \
  result->name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name));    \
  if (!result->name)                                                           \
    fail(TCC_ERROR_UNSUPPORTED, file + " has no " #name "; tcc needs oneDNN 2.x");
  TCC_DNNL_FUNCTIONS(TCC_DNNL_RESOLVE)
#undef TCC_DNNL_RESOLVE
  dnnl_status_t status = result->dnnl_engine_create(&result->engine, dnnl_cpu, 0);
  if (status != dnnl_success)
    fail(TCC_ERROR_UNSUPPORTED, std::string("oneDNN cannot create a CPU engine: ") +
                                    result->dnnl_status2str(status));
  loaded = result.release(); // lives as long as the process, like its engine
  return *loaded;
}

/// MATMUL has 8 parameters since the epilogue was appended, 7 in older
/// artifacts (epilogue 0), 10 with C's dtype and the math mode; a
/// convolution 18, 19 with its groups, 20 with the math mode, 21 with the
/// output's dtype.
constexpr int32_t kMatmulParams = 8, kOldMatmulParams = 7, kMathMatmulParams = 10,
                  kHeadsMatmulParams = 12,
                  kConvParams = 18, kGroupedConvParams = 19, kMathConvParams = 20,
                  kOutDtypeConvParams = 21;

/// A CONV2D's (or a backward convolution's) groups: its 19th parameter, 1
/// when it has 18.
int64_t convGroups(const tcc_abi_library_call &call) {
  return call.num_params >= kGroupedConvParams ? call.params[18] : 1;
}

/// CONV2D and its two gradients share the parameters and their checks.
bool isConvolution(int32_t kind) {
  return kind == TCC_LIBRARY_CALL_CONV2D || kind == TCC_LIBRARY_CALL_CONV2D_BACKWARD_DATA ||
         kind == TCC_LIBRARY_CALL_CONV2D_BACKWARD_WEIGHTS;
}
constexpr int64_t kEpilogueBits =
    TCC_MATMUL_EPILOGUE_BIAS | TCC_MATMUL_EPILOGUE_RESIDUAL | TCC_MATMUL_EPILOGUE_RELU;

/// Dense row-major strides of DIMS.
std::vector<dnnl_dim_t> denseStrides(const std::vector<dnnl_dim_t> &dims) {
  std::vector<dnnl_dim_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;)
    strides[i - 1] = strides[i] * dims[i];
  return strides;
}

} // namespace

int64_t matmulEpilogue(const tcc_abi_library_call &call) {
  return call.num_params > kOldMatmulParams ? call.params[kOldMatmulParams] : 0;
}

int64_t matmulHeads(const tcc_abi_library_call &call) {
  return call.num_params == kHeadsMatmulParams ? call.params[10] : 1;
}

int64_t matmulInterleaved(const tcc_abi_library_call &call) {
  return call.num_params == kHeadsMatmulParams ? call.params[11] : 0;
}

int32_t libraryCallOutputDtype(const tcc_abi_library_call &call) {
  bool matmul = call.kind == TCC_LIBRARY_CALL_MATMUL;
  int32_t n = matmul ? kMathMatmulParams : kOutDtypeConvParams;
  int64_t out = call.num_params >= n ? call.params[matmul ? 8 : 20] : 0;
  return out != 0 ? int32_t(out) : call.dtype;
}

int64_t libraryCallMath(const tcc_abi_library_call &call) {
  if (call.kind == TCC_LIBRARY_CALL_MATMUL)
    return call.num_params >= kMathMatmulParams ? call.params[9] : TCC_LIBRARY_MATH_EXACT;
  return call.num_params >= kMathConvParams ? call.params[19] : TCC_LIBRARY_MATH_EXACT;
}

std::string checkLibraryCall(const tcc_abi_library_call &call) {
  bool matmul = call.kind == TCC_LIBRARY_CALL_MATMUL;
  if (!matmul && !isConvolution(call.kind))
    return "unknown kind " + std::to_string(call.kind) + " (a newer tcc made this artifact)";
  // Which dtypes a runtime can run is its own business (at session
  // creation); the ABI allows these.
  bool half = call.dtype == TCC_DTYPE_BF16 || call.dtype == TCC_DTYPE_F16;
  if (call.dtype != TCC_DTYPE_F32 && !half)
    return std::string("dtype ") +
           (isValidDtype(call.dtype) ? dtypeName(call.dtype) : std::to_string(call.dtype).c_str()) +
           " is not f32, bf16 or f16";
  int32_t n = call.num_params;
  bool paramsOk = matmul ? n == kMatmulParams || n == kOldMatmulParams || n == kMathMatmulParams ||
                               n == kHeadsMatmulParams
                         : n == kConvParams || n == kGroupedConvParams || n == kMathConvParams ||
                               n == kOutDtypeConvParams;
  if (!paramsOk || !call.params)
    return std::to_string(call.num_params) + " parameters, expected " +
           (matmul ? std::to_string(kMatmulParams) + " (or " + std::to_string(kOldMatmulParams) +
                         ", " + std::to_string(kMathMatmulParams) + " or " +
                         std::to_string(kHeadsMatmulParams) + ")"
                   : std::to_string(kConvParams) + " (or " + std::to_string(kGroupedConvParams) +
                         ", " + std::to_string(kMathConvParams) + " or " +
                         std::to_string(kOutDtypeConvParams) + ")");
  const int64_t *p = call.params;
  int64_t math = libraryCallMath(call);
  if (math != TCC_LIBRARY_MATH_EXACT && math != TCC_LIBRARY_MATH_TF32)
    return "unknown math mode " + std::to_string(math);
  if (math == TCC_LIBRARY_MATH_TF32 && call.dtype != TCC_DTYPE_F32)
    return "TF32 math needs f32 operands";
  // 16-bit operands may write an f32 output (f32 sums, no rounding to 16
  // bits).
  int32_t out = libraryCallOutputDtype(call);
  if (out != call.dtype && !(half && out == TCC_DTYPE_F32))
    return std::string(matmul ? "matmul" : "convolution") + " output dtype " +
           std::to_string(out) + " with " + dtypeName(call.dtype) +
           " operands (expected the operands' dtype, or f32 for 16-bit ones)";
  auto flag = [](int64_t v) { return v == 0 || v == 1; };
  int64_t epilogue = matmul ? matmulEpilogue(call) : 0;
  if (epilogue & ~kEpilogueBits)
    return "matmul epilogue " + std::to_string(epilogue) + " has unknown bits";
  int32_t operands = 3 + !!(epilogue & TCC_MATMUL_EPILOGUE_BIAS) +
                     !!(epilogue & TCC_MATMUL_EPILOGUE_RESIDUAL);
  if (call.num_operands != operands)
    return std::to_string(call.num_operands) + " operands, expected " + std::to_string(operands);
  if (matmul) {
    for (int i = 0; i < 4; ++i)
      if (p[i] <= 0)
        return "matmul size " + std::to_string(p[i]) + " is not positive";
    if (!flag(p[4]) || !flag(p[5]) || !flag(p[6]))
      return "matmul flags must be 0 or 1";
    if (epilogue && p[6])
      return "a matmul epilogue needs accumulate = 0";
    int64_t heads = matmulHeads(call), interleaved = matmulInterleaved(call);
    if (heads <= 0 || p[0] % heads != 0)
      return "matmul heads " + std::to_string(heads) + " do not divide its batch " +
             std::to_string(p[0]);
    constexpr int64_t kInterleavedBits =
        TCC_MATMUL_INTERLEAVED_A | TCC_MATMUL_INTERLEAVED_B | TCC_MATMUL_INTERLEAVED_C;
    if (interleaved & ~kInterleavedBits)
      return "matmul interleaved operands " + std::to_string(interleaved) + " has unknown bits";
    if (interleaved && epilogue)
      return "a matmul with interleaved operands takes no epilogue";
    return "";
  }
  for (int i = 0; i < 13; ++i)
    if (p[i] <= 0)
      return "convolution parameter #" + std::to_string(i) + " is not positive";
  for (int i = 13; i < 17; ++i)
    if (p[i] < 0)
      return "convolution padding " + std::to_string(p[i]) + " is negative";
  if (!flag(p[17]))
    return "convolution accumulate flag must be 0 or 1";
  int64_t groups = convGroups(call);
  if (groups < 1 || p[1] % groups != 0 || p[4] % groups != 0)
    return "convolution groups " + std::to_string(groups) + " do not divide " +
           std::to_string(p[1]) + " input and " + std::to_string(p[4]) + " output channels";
  for (int axis = 0; axis < 2; ++axis) {
    int64_t in = p[2 + axis] + p[13 + axis] + p[15 + axis], k = p[5 + axis], out = p[7 + axis],
            stride = p[9 + axis], dilation = p[11 + axis];
    int64_t window = dilation * (k - 1) + 1;
    if (window > in || (in - window) / stride + 1 != out)
      return "convolution output size " + std::to_string(out) + " does not follow from padded " +
             "input " + std::to_string(in) + ", kernel " + std::to_string(k) + ", stride " +
             std::to_string(stride) + ", dilation " + std::to_string(dilation);
  }
  return "";
}

/// Where a primitive argument's data lives: one of the call's operands, or
/// a slice of the scratch region at the arena's tail.
struct Binding {
  int arg;              // DNNL_ARG_*
  int operand;          // index into the call's operands, or -1 for scratch
  size_t scratchOffset; // when operand < 0
  dnnl_memory_t memory;
};

/// One primitive execution of a call (a reorder or the computation), or a
/// 16-bit conversion the runtime does itself (half.h): no primitive,
/// bindings {from, to} without memory objects, COUNT elements of DTYPE.
struct Step {
  enum class Conversion { None, Widen, Round };
  dnnl_primitive_t primitive = nullptr;
  std::vector<Binding> bindings;
  Conversion conversion = Conversion::None;
  int32_t dtype = TCC_DTYPE_F16;
  int64_t count = 0;
  bool sum = false; ///< Round: round(from + to)
};

/// Library calls below this many flops run on the calling thread alone: a
/// parallel region (fork, barrier, join: microseconds, more when the cores
/// are shared) costs more than it saves on them. They are created that way
/// too, since oneDNN fixes a primitive's thread count when it plans it.
constexpr double kSerialFlops = 4.0e6;

/// A transposed left matmul operand with at least this many elements is
/// copied into plain layout first (see the MATMUL case).
constexpr int64_t kTransposeCopyElements = 1 << 16;

/// The layout (its data type replaced per tensor) and the filter's
/// dimensions of a kept filter set.
struct LibraryCalls::FilterLayout {
  dnnl_memory_desc_t md;
  std::vector<dnnl_dim_t> dims;
};

/// A widened 16-bit MATMUL in row panels on oneDNN (addPanelMatmul; what
/// blas.h's widenedPanelMatmul does on MKL): each thread widens a panel of
/// at most ROWS rows of op(A) (in a batch, first its matrix's B) into f32
/// buffers of its own (a transposed A's panel transposed into plain rows
/// with PLAIN_A, else as stored), multiplies them with a single-threaded
/// f32 matmul primitive into its own f32 panel of C (into C itself when C
/// is f32), and rounds that into C, applying the epilogue on the way
/// (epilogueRows). The f32 copies stay near the thread, where full-size
/// widened copies were passes over memory (docs/precision.md). A 2-D
/// product's B is widened once, as stored, at the scratch's start by the
/// call's steps. Thread t's buffers start at buffersAt + t * perThread:
/// A's panel, C's panel, B's matrix, the primitive's scratchpad.
/// COLUMNS: a 2-D product whose row panels would not fit (few rows of C,
/// a wide B: a vocabulary head) runs in panels of ROWS columns of B and C
/// instead: A is widened once by the call's steps (as stored), each thread
/// widens its block of B's columns (rows of a stored B^T) into its A-panel
/// buffer and computes C's M rows of those columns.
struct PanelMatmul {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool transA = false, transB = false, accumulate = false, plainA = true, columns = false;
  int64_t epilogue = 0; ///< bits; bias and D (laid out as C) of C's type
  int32_t dtype = TCC_DTYPE_BF16, cDtype = TCC_DTYPE_BF16;
  StoredMatrix a{}, b{}, c{};
  int64_t rows = 0;
  int threads = 0;
  size_t buffersAt = 0, perThread = 0, cOffset = 0, bOffset = 0, padOffset = 0;
  /// The product of a whole panel and of the last, shorter one: its
  /// primitive and each thread's memory objects {A, B, C, scratchpad}.
  struct Product {
    dnnl_primitive_t primitive = nullptr;
    std::vector<std::array<dnnl_memory_t, 4>> memories;
  } full, tail;
  std::vector<dnnl_stream_t> streams; ///< one per thread
  mutable std::vector<dnnl_status_t> statuses; ///< each thread's last run
  ~PanelMatmul() {
    const Api &api_ = api();
    for (Product *product : {&full, &tail}) {
      for (auto &memories : product->memories)
        for (dnnl_memory_t memory : memories)
          if (memory)
            api_.dnnl_memory_destroy(memory);
      if (product->primitive)
        api_.dnnl_primitive_destroy(product->primitive);
    }
    for (dnnl_stream_t stream : streams)
      api_.dnnl_stream_destroy(stream);
  }

  /// Thread T's share of the panels (of THREADS).
  dnnl_status_t run(int t, int threads, const uint16_t *aData, const uint16_t *bData,
                    void *cData, const void *bias, const void *dData, uint8_t *scratch) const {
    const Api &api_ = api();
    uint8_t *mine = scratch + buffersAt + size_t(t) * perThread;
    auto *aPanel = reinterpret_cast<float *>(mine);
    auto *cPanel = reinterpret_cast<float *>(mine + cOffset);
    auto *bMatrix = reinterpret_cast<float *>(mine + bOffset);
    const int64_t panels = ((columns ? n : m) + rows - 1) / rows;
    auto panel = [&](int64_t s, int64_t index, const float *bF32) -> dnnl_status_t {
      const int64_t first = index * rows, count = std::min(rows, (columns ? n : m) - first);
      // A panel of op(A)'s rows, or of B's columns (K x COUNT, or COUNT x
      // K from a stored B^T: the product reads it transposed).
      if (columns)
        widenPanelOfA(dtype, bData, b.ld(), !transB, first, count, k, aPanel);
      else
        widenPanelOfA(dtype, aData + a.start(s), a.ld(), transA, first, count, k, aPanel, plainA);
      // The panel's part of C: COUNT rows of N, or M rows of COUNT columns
      // from column FIRST.
      const int64_t cAt = c.start(s) + (columns ? first : first * c.ld());
      const int64_t cRows = columns ? m : count, cCols = columns ? count : n;
      void *out = cPanel;
      if (cDtype == TCC_DTYPE_F32)
        out = static_cast<float *>(cData) + cAt;
      else if (accumulate)
        widenRows(cDtype, static_cast<uint16_t *>(cData) + cAt, c.ld(), cRows, cCols, cPanel);
      const Product &product = count == rows ? full : tail;
      const auto &memories = product.memories[size_t(t)];
      // Columns: bF32 is the widened A.
      void *data[4] = {columns ? const_cast<float *>(bF32) : aPanel,
                       columns ? aPanel : const_cast<float *>(bF32), out, mine + padOffset};
      dnnl_exec_arg_t args[4];
      int nargs = 0;
      const int kinds[4] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST, DNNL_ARG_SCRATCHPAD};
      for (int i = 0; i < 4; ++i) {
        if (!memories[size_t(i)])
          continue;
        dnnl_status_t status = api_.dnnl_memory_set_data_handle(memories[size_t(i)], data[i]);
        if (status != dnnl_success)
          return status;
        args[nargs++] = {kinds[i], memories[size_t(i)]};
      }
      dnnl_status_t status =
          api_.dnnl_primitive_execute(product.primitive, streams[size_t(t)], nargs, args);
      if (status == dnnl_success)
        status = api_.dnnl_stream_wait(streams[size_t(t)]);
      if (status != dnnl_success || (cDtype == TCC_DTYPE_F32 && !epilogue))
        return status;
      const size_t size = cDtype == TCC_DTYPE_F32 ? sizeof(float) : sizeof(uint16_t);
      void *cPart = static_cast<uint8_t *>(cData) + size_t(cAt) * size;
      if (!epilogue) {
        roundRows(cDtype, cPanel, cRows, cCols, static_cast<uint16_t *>(cPart), c.ld());
        return dnnl_success;
      }
      // relu((sum + bias) + D), D laid out as C; from C itself when f32.
      const float *sums = cDtype == TCC_DTYPE_F32 ? static_cast<const float *>(cPart) : cPanel;
      const void *dPart =
          dData ? static_cast<const uint8_t *>(dData) + size_t(cAt) * size : nullptr;
      const void *biasPart =
          bias && columns ? static_cast<const uint8_t *>(bias) + size_t(first) * size : bias;
      epilogueRows(cDtype, sums, cDtype == TCC_DTYPE_F32 ? c.ld() : cCols, cRows, cCols,
                   biasPart, dPart, c.ld(), epilogue & TCC_MATMUL_EPILOGUE_RELU, cPart, c.ld());
      return dnnl_success;
    };
    // Thread t takes the panels [t W / T, (t + 1) W / T) of W = batch x
    // panels, matrix by matrix, widening a matrix's B as it comes to it.
    const int64_t work = batch * panels, end = (t + 1) * work / threads;
    // A 2-D product's B, or with columns its A.
    const float *bF32 = reinterpret_cast<const float *>(scratch);
    dnnl_status_t status = dnnl_success;
    for (int64_t item = t * work / threads, widened = -1; item < end && status == dnnl_success;
         ++item) {
      const int64_t s = item / panels;
      if (batch > 1 && s != widened) {
        // Matrix s of B as stored (transposed or not), dense.
        widenRows(dtype, bData + b.start(s), b.ld(), b.rows, b.cols, bMatrix);
        bF32 = bMatrix;
        widened = s;
      }
      status = panel(s, item % panels, bF32);
    }
    return status;
  }
};

struct LibraryCalls::Call {
  std::vector<Step> steps;
  std::string implementation;
  size_t scratchBytes = 0;
  bool serial = false; ///< see kSerialFlops
  /// A MATMUL on BLAS: its parameters and epilogue bits. A widened 16-bit
  /// one (addWidenedBlasMatmul) runs steps [0, blasSplit) first (oneDNN
  /// reorders widening its operands into scratch), then the f32 product on
  /// blasOperands (an operand index, or -1 and a scratch offset, for A, B
  /// and C), then the remaining steps (C rounded out).
  const Blas *blas = nullptr;
  std::vector<int64_t> params;
  int64_t epilogue = 0;
  size_t blasSplit = 0;
  std::vector<std::pair<int, size_t>> blasOperands;
  /// A widened product in row panels (blas.h widenedPanelMatmul): steps
  /// [0, blasSplit) widen B into scratch at blasOperands[1]; the panels'
  /// scratch starts at panelsAt.
  WidenedPanels panels;
  size_t panelsAt = 0;
  int32_t dtype = TCC_DTYPE_F32, outputDtype = TCC_DTYPE_F32; ///< A's and B's, C's
  /// A widened product in row panels on oneDNN: its steps (a 2-D product's
  /// B widened) run first.
  std::unique_ptr<PanelMatmul> panelMatmul;
  ~Call() {
    if (steps.empty())
      return; // a BLAS call: oneDNN may not even be loaded
    const Api &a = api();
    for (Step &step : steps) {
      for (Binding &b : step.bindings)
        if (b.memory)
          a.dnnl_memory_destroy(b.memory);
      if (step.primitive)
        a.dnnl_primitive_destroy(step.primitive);
    }
  }
};

namespace {

constexpr size_t kScratchAlignment = 64;

size_t alignUp(size_t n) { return (n + kScratchAlignment - 1) / kScratchAlignment * kScratchAlignment; }

/// Builds the steps of one call; every failure throws naming the call.
class CallBuilder {
public:
  CallBuilder(const Api &a, int32_t index, const std::string &what)
      : a(a), index(index), what(what) {}

  void check(dnnl_status_t status, const char *step) const {
    if (status != dnnl_success)
      fail(TCC_ERROR_UNSUPPORTED, what + ": library call #" + std::to_string(index) + ": oneDNN " +
                                      step + " failed: " + a.dnnl_status2str(status));
  }

  dnnl_memory_desc_t plain(const std::vector<dnnl_dim_t> &dims,
                           const std::vector<dnnl_dim_t> &strides,
                           dnnl_data_type_t type = dnnl_f32) const {
    dnnl_memory_desc_t md;
    check(a.dnnl_memory_desc_init_by_strides(&md, int(dims.size()), dims.data(), type,
                                             strides.data()),
          "memory descriptor");
    return md;
  }

  /// The post-ops of a primitive, applied in this order: a sum (accumulate
  /// onto the output), a binary add of a second source shaped like the
  /// output (its argument is DNNL_ARG_ATTR_MULTIPLE_POST_OP(addIndex()) |
  /// DNNL_ARG_SRC_1), a relu.
  struct PostOps {
    bool sum = false;
    const dnnl_memory_desc_t *add = nullptr;
    bool relu = false;
    int addIndex() const { return sum ? 1 : 0; }
    bool empty() const { return !sum && !add && !relu; }
  };

  /// A primitive descriptor for OP with a user scratchpad and POST_OPS
  /// (HINT: the forward primitive descriptor of a backward OP).
  dnnl_primitive_desc_t describe(const_dnnl_op_desc_t op, const PostOps &post,
                                 const_dnnl_primitive_desc_t hint = nullptr) const {
    dnnl_primitive_attr_t attr = nullptr;
    check(a.dnnl_primitive_attr_create(&attr), "attribute creation");
    dnnl_post_ops_t postOps = nullptr;
    dnnl_status_t status = a.dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
    if (status == dnnl_success && !post.empty()) {
      status = a.dnnl_post_ops_create(&postOps);
      if (status == dnnl_success && post.sum)
        status = a.dnnl_post_ops_append_sum(postOps, 1.0f);
      if (status == dnnl_success && post.add)
        status = a.dnnl_post_ops_append_binary(postOps, dnnl_binary_add, post.add);
      if (status == dnnl_success && post.relu)
        status = a.dnnl_post_ops_append_eltwise(postOps, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f);
      if (status == dnnl_success)
        status = a.dnnl_primitive_attr_set_post_ops(attr, postOps);
    }
    dnnl_primitive_desc_t pd = nullptr;
    if (status == dnnl_success)
      status = a.dnnl_primitive_desc_create(&pd, op, attr, a.engine, hint);
    if (postOps)
      a.dnnl_post_ops_destroy(postOps);
    a.dnnl_primitive_attr_destroy(attr);
    check(status, "primitive descriptor");
    return pd;
  }

  /// As describe (no post-ops), but from the first of oneDNN's
  /// implementations of OP, in its order of preference, whose name ACCEPT
  /// takes; oneDNN's first when it takes none.
  template <typename Accept>
  dnnl_primitive_desc_t describeFirst(const_dnnl_op_desc_t op, const_dnnl_primitive_desc_t hint,
                                      Accept accept) const {
    dnnl_primitive_attr_t attr = nullptr;
    check(a.dnnl_primitive_attr_create(&attr), "attribute creation");
    dnnl_primitive_desc_iterator_t it = nullptr;
    dnnl_status_t status = a.dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
    if (status == dnnl_success)
      status = a.dnnl_primitive_desc_iterator_create(&it, op, attr, a.engine, hint);
    a.dnnl_primitive_attr_destroy(attr);
    check(status, "primitive descriptor");
    dnnl_primitive_desc_t first = nullptr, chosen = nullptr;
    for (; status == dnnl_success && !chosen; status = a.dnnl_primitive_desc_iterator_next(it)) {
      dnnl_primitive_desc_t pd = a.dnnl_primitive_desc_iterator_fetch(it);
      if (!pd)
        continue;
      if (accept(implementationOf(pd)))
        chosen = pd;
      else if (!first)
        first = pd;
      else
        a.dnnl_primitive_desc_destroy(pd);
    }
    a.dnnl_primitive_desc_iterator_destroy(it);
    if (!chosen && !first)
      check(dnnl_unimplemented, "primitive descriptor");
    if (!chosen)
      return first;
    if (first)
      a.dnnl_primitive_desc_destroy(first);
    return chosen;
  }

  /// Appends a step running PD; BINDINGS name its arguments (memory objects
  /// are created here). The primitive's scratchpad goes at SCRATCHPAD.
  void addStep(dnnl_primitive_desc_t pd, std::vector<std::pair<Binding, dnnl_memory_desc_t>> args,
               size_t scratchpad) {
    Step step;
    const dnnl_memory_desc_t *scratch = a.dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    size_t bytes = scratch ? a.dnnl_memory_desc_get_size(scratch) : 0;
    if (bytes > 0) {
      args.push_back({{DNNL_ARG_SCRATCHPAD, -1, scratchpad, nullptr}, *scratch});
      call->scratchBytes = std::max(call->scratchBytes, scratchpad + bytes);
    }
    dnnl_status_t status = a.dnnl_primitive_create(&step.primitive, pd);
    a.dnnl_primitive_desc_destroy(pd);
    check(status, "primitive creation");
    call->steps.push_back(std::move(step));
    Step &added = call->steps.back();
    for (auto &[binding, md] : args) {
      check(a.dnnl_memory_create(&binding.memory, &md, a.engine, DNNL_MEMORY_NONE), "memory creation");
      added.bindings.push_back(binding);
    }
  }

  /// A reorder step from FROM to TO; with SUM it adds onto what TO holds.
  /// A conversion between f32 and f16, or bf16 where oneDNN has only its
  /// reference reorder for it (below AVX-512), is the runtime's own
  /// (addConversion).
  void addReorder(const dnnl_memory_desc_t &from, Binding fromAt, const dnnl_memory_desc_t &to,
                  Binding toAt, size_t scratchpad, bool sum = false) {
    bool f16 = from.data_type == dnnl_f16 || to.data_type == dnnl_f16;
    if (f16 && addConversion(from, fromAt, to, toAt, scratchpad, sum))
      return;
    dnnl_primitive_desc_t pd = reorderDesc(from, to, sum);
    bool bf16 = from.data_type == dnnl_bf16 || to.data_type == dnnl_bf16;
    if (bf16 && implementationOf(pd).rfind("jit", 0) != 0 &&
        addConversion(from, fromAt, to, toAt, scratchpad, sum)) {
      a.dnnl_primitive_desc_destroy(pd);
      return;
    }
    fromAt.arg = DNNL_ARG_FROM;
    toAt.arg = DNNL_ARG_TO;
    addStep(pd, {{fromAt, from}, {toAt, to}}, scratchpad);
  }

  /// oneDNN's reorder from FROM to TO (with SUM: onto what TO holds).
  dnnl_primitive_desc_t reorderDesc(const dnnl_memory_desc_t &from, const dnnl_memory_desc_t &to,
                                    bool sum) const {
    dnnl_primitive_attr_t attr = nullptr;
    check(a.dnnl_primitive_attr_create(&attr), "attribute creation");
    dnnl_status_t status = a.dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
    dnnl_post_ops_t postOps = nullptr;
    if (status == dnnl_success && sum) {
      status = a.dnnl_post_ops_create(&postOps);
      if (status == dnnl_success)
        status = a.dnnl_post_ops_append_sum(postOps, 1.0f);
      if (status == dnnl_success)
        status = a.dnnl_primitive_attr_set_post_ops(attr, postOps);
    }
    dnnl_primitive_desc_t pd = nullptr;
    if (status == dnnl_success)
      status = a.dnnl_reorder_primitive_desc_create(&pd, &from, a.engine, &to, a.engine, attr);
    if (postOps)
      a.dnnl_post_ops_destroy(postOps);
    a.dnnl_primitive_attr_destroy(attr);
    check(status, "reorder");
    return pd;
  }

  /// A 16-bit <-> f32 reorder from FROM to TO (half.h) as the runtime's
  /// conversion of one dense buffer into another of the same layout, with
  /// oneDNN's f32 reorder between the layouts where they differ: widening
  /// converts into an f32 copy of FROM's layout first, rounding rounds from
  /// an f32 copy in TO's layout (the copy at SCRATCHPAD, the reorder's
  /// scratchpad after it). The same numbers as oneDNN's reorder: widening
  /// is exact, rounding goes once to nearest even, after the sum with SUM.
  /// False (nothing added) for another reorder, or a layout with gaps.
  bool addConversion(const dnnl_memory_desc_t &from, Binding fromAt,
                     const dnnl_memory_desc_t &to, Binding toAt, size_t scratchpad, bool sum) {
    auto sixteenBit = [](dnnl_data_type_t t) { return t == dnnl_f16 || t == dnnl_bf16; };
    bool widen = sixteenBit(from.data_type) && to.data_type == dnnl_f32 && !sum;
    bool round = from.data_type == dnnl_f32 && sixteenBit(to.data_type);
    if ((!widen && !round) || !dense(from) || !dense(to))
      return false;
    // The f32 side of the conversion, in the 16-bit side's layout.
    dnnl_memory_desc_t f32Like = widen ? from : to;
    f32Like.data_type = dnnl_f32;
    const dnnl_memory_desc_t &other = widen ? to : from;
    Step step;
    step.conversion = widen ? Step::Conversion::Widen : Step::Conversion::Round;
    step.dtype = (widen ? from : to).data_type == dnnl_bf16 ? TCC_DTYPE_BF16 : TCC_DTYPE_F16;
    step.count = dnnl_dim_t(a.dnnl_memory_desc_get_size(&f32Like) / sizeof(float));
    step.sum = sum;
    if (a.dnnl_memory_desc_equal(&f32Like, &other)) {
      step.bindings = {fromAt, toAt};
      call->steps.push_back(std::move(step));
      return true;
    }
    Binding copyAt = {0, -1, scratchpad, nullptr};
    size_t after = scratchpad + alignUp(a.dnnl_memory_desc_get_size(&f32Like));
    call->scratchBytes = std::max(call->scratchBytes, after);
    if (widen) {
      step.bindings = {fromAt, copyAt};
      call->steps.push_back(std::move(step));
      addReorder(f32Like, copyAt, to, toAt, after);
    } else {
      addReorder(from, fromAt, f32Like, copyAt, after);
      step.bindings = {copyAt, toAt};
      call->steps.push_back(std::move(step));
    }
    return true;
  }

  /// Whether MD (f32 or 16-bit) has a buffer that holds nothing but its
  /// (padded) elements: a conversion of the whole buffer touches no other
  /// tensor's bytes.
  bool dense(const dnnl_memory_desc_t &md) const {
    if (md.format_kind != dnnl_blocked || md.offset0 != 0 || md.extra.flags != 0)
      return false;
    size_t elements = 1;
    for (int i = 0; i < md.ndims; ++i)
      elements *= size_t(md.padded_dims[i]);
    size_t size = md.data_type == dnnl_f32 ? sizeof(float) : sizeof(uint16_t); // f32 or 16-bit
    return a.dnnl_memory_desc_get_size(&md) == elements * size;
  }

  /// A reorder of a convolution's filter W between the call's plain OIHW
  /// buffer and the primitive's layout: through the layout
  /// filterReorderRoute picks where there is one (its copy goes at
  /// SCRATCHPAD, the reorders' scratchpads after it), else direct. Returns
  /// whether it took the route.
  bool addFilterReorder(const std::vector<dnnl_dim_t> &w, const dnnl_memory_desc_t &from,
                        Binding fromAt, const dnnl_memory_desc_t &to, Binding toAt,
                        size_t scratchpad, bool sum = false) {
    dnnl_memory_desc_t via;
    if (!filterReorderRoute(w, from, to, &via)) {
      addReorder(from, fromAt, to, toAt, scratchpad, sum);
      return false;
    }
    size_t after = scratchpad + alignUp(a.dnnl_memory_desc_get_size(&via));
    call->scratchBytes = std::max(call->scratchBytes, after);
    Binding viaAt = {0, -1, scratchpad, nullptr};
    addReorder(from, fromAt, via, viaAt, after);
    addReorder(via, viaAt, to, toAt, after, sum);
    return true;
  }

  /// The layout between FROM and TO (one of them W's plain OIHW buffer, the
  /// other a blocked layout of a primitive) that a reorder of a filter W
  /// larger than 1x1 goes through, where oneDNN 2.6's direct reorder reads
  /// or writes OIHW in runs of KW elements and a route is several times
  /// faster (docs/cpu-codegen.md "Filters kept in the library's layout across steps"):
  /// - into a 16-bit layout whose innermost block pairs input channels (the
  ///   16-bit kernels' "2b" blocks): through OHWI;
  /// - out of an f32 layout whose innermost block is 16 output channels:
  ///   through Abcd16a.
  /// The copy in between has FROM's type, so the route rounds or widens
  /// where the direct reorder does: the same bytes.
  bool filterReorderRoute(const std::vector<dnnl_dim_t> &w, const dnnl_memory_desc_t &from,
                          const dnnl_memory_desc_t &to, dnnl_memory_desc_t *via) const {
    if (w.size() != 4 || w[2] * w[3] == 1)
      return false;
    auto innermost = [](const dnnl_memory_desc_t &md, int *dim, dnnl_dim_t *block) {
      const auto &blocking = md.format_desc.blocking;
      if (md.format_kind != dnnl_blocked || blocking.inner_nblks == 0)
        return false;
      *dim = int(blocking.inner_idxs[blocking.inner_nblks - 1]);
      *block = blocking.inner_blks[blocking.inner_nblks - 1];
      return true;
    };
    int dim = -1;
    dnnl_dim_t block = 0;
    if (to.data_type != dnnl_f32 && innermost(to, &dim, &block) && dim == 1) {
      const dnnl_dim_t i = w[1], kh = w[2], kw = w[3];
      *via = plain(w, {kh * kw * i, 1, kw * i, i}, from.data_type);
      return true;
    }
    if (from.data_type == dnnl_f32 && to.data_type == dnnl_f32 && innermost(from, &dim, &block) &&
        dim == 0 && block == 16) {
      check(a.dnnl_memory_desc_init_by_tag(via, 4, w.data(), dnnl_f32, dnnl_Abcd16a),
            "memory descriptor");
      return true;
    }
    return false;
  }

  std::string implementationOf(dnnl_primitive_desc_t pd) const {
    const char *impl = nullptr;
    if (a.dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl)
      return impl;
    return "";
  }

  const Api &a;
  int32_t index;
  const std::string &what;
  std::unique_ptr<LibraryCalls::Call> call = std::make_unique<LibraryCalls::Call>();
};


/// oneDNN's type for an ABI dtype of a call's operands.
dnnl_data_type_t dnnlType(int32_t dtype) {
  switch (dtype) {
  case TCC_DTYPE_BF16:
    return dnnl_bf16;
  case TCC_DTYPE_F16:
    return dnnl_f16;
  default:
    return dnnl_f32;
  }
}

/// The steps of a CONV2D, CONV2D_BACKWARD_DATA or CONV2D_BACKWARD_WEIGHTS
/// call. The primitive picks its own layouts (blocked, for its JIT
/// kernels); reorders convert the plain operands in and the result out,
/// through scratch memory. The two gradients are created with a forward
/// (training) primitive descriptor as oneDNN's hint, as oneDNN requires,
/// and have no post-ops: one that accumulates computes into scratch and
/// adds its result onto the output in the reorder out (a sum post-op).
/// A 16-bit call (bf16 / f16 inputs, f32 sums, output in f32 or the
/// inputs' type) is oneDNN's 16-bit primitive when NATIVE; else WIDENED: the
/// f32 primitive, whose reorders in convert the inputs to f32 (exact) and
/// whose reorder out rounds a 16-bit output once (to nearest even).
/// FILTER_LAYOUT, when given, is the layout the filter operand (the output
/// of a CONV2D_BACKWARD_WEIGHTS) is kept in instead of plain OIHW (its
/// blocking; the data type is the operand's): tcc-filter-layouts' set of
/// the call. FILTER_CHOSEN, when given, receives the layout the primitive
/// reads or writes the filter in.
void addConvolution(CallBuilder &b, const tcc_abi_library_call &c, bool native,
                    const dnnl_memory_desc_t *filterLayout = nullptr,
                    dnnl_memory_desc_t *filterChosen = nullptr) {
  const Api &a = b.a;
  const int64_t *p = c.params;
  const dnnl_data_type_t in = dnnlType(c.dtype), out = dnnlType(libraryCallOutputDtype(c));
  const bool widened = in != dnnl_f32 && !native;
  // Each operand's type: in the call's buffers (plain), and for the
  // primitive.
  const dnnl_data_type_t plainType[3] = {in, in, out};
  const dnnl_data_type_t computeType[3] = {widened ? dnnl_f32 : in, widened ? dnnl_f32 : in,
                                           widened ? dnnl_f32 : out};
  // Grouped: the filter [F, C/G, KH, KW] is oneDNN's [G, F/G, C/G, KH, KW]
  // (the same bytes).
  const int64_t groups = convGroups(c);
  std::vector<dnnl_dim_t> x = {p[0], p[1], p[2], p[3]}, w = {p[4], p[1] / groups, p[5], p[6]},
                          y = {p[0], p[4], p[7], p[8]};
  if (groups > 1)
    w = {groups, p[4] / groups, p[1] / groups, p[5], p[6]};
  // Which tensor each operand is, and its role for the primitive: the
  // operands are {inputs..., output} of the kind.
  enum Tensor { kX, kW, kY };
  Tensor order[3];
  int args[3];
  dnnl_query_t queries[3];
  switch (c.kind) {
  case TCC_LIBRARY_CALL_CONV2D_BACKWARD_DATA:
    order[0] = kY, order[1] = kW, order[2] = kX;
    args[0] = DNNL_ARG_DIFF_DST, args[1] = DNNL_ARG_WEIGHTS, args[2] = DNNL_ARG_DIFF_SRC;
    queries[0] = dnnl_query_diff_dst_md, queries[1] = dnnl_query_weights_md,
    queries[2] = dnnl_query_diff_src_md;
    break;
  case TCC_LIBRARY_CALL_CONV2D_BACKWARD_WEIGHTS:
    order[0] = kX, order[1] = kY, order[2] = kW;
    args[0] = DNNL_ARG_SRC, args[1] = DNNL_ARG_DIFF_DST, args[2] = DNNL_ARG_DIFF_WEIGHTS;
    queries[0] = dnnl_query_src_md, queries[1] = dnnl_query_diff_dst_md,
    queries[2] = dnnl_query_diff_weights_md;
    break;
  default:
    order[0] = kX, order[1] = kW, order[2] = kY;
    args[0] = DNNL_ARG_SRC, args[1] = DNNL_ARG_WEIGHTS, args[2] = DNNL_ARG_DST;
    queries[0] = dnnl_query_src_md, queries[1] = dnnl_query_weights_md,
    queries[2] = dnnl_query_dst_md;
    break;
  }
  const std::vector<dnnl_dim_t> *dims[3] = {&x, &w, &y};
  dnnl_memory_desc_t anyMd[3]; // by tensor
  for (int k = 0; k < 3; ++k) {
    // The operand that is tensor k (the output, or an input).
    int operand = order[0] == k ? 0 : order[1] == k ? 1 : 2;
    b.check(a.dnnl_memory_desc_init_by_tag(&anyMd[k], int(dims[k]->size()), dims[k]->data(),
                                           computeType[operand], dnnl_format_tag_any),
            "memory descriptor");
  }
  // A gradient's forward hint reads and writes the gradient's input type
  // (oneDNN matches the hint's layouts, not its output type).
  dnnl_memory_desc_t hintMd[3];
  std::copy(anyMd, anyMd + 3, hintMd);
  if (c.kind != TCC_LIBRARY_CALL_CONV2D)
    for (int k = 0; k < 3; ++k)
      hintMd[k].data_type = computeType[0];
  dnnl_dims_t strides = {p[9], p[10]}, dilations = {p[11] - 1, p[12] - 1}, padLow = {p[13], p[14]},
              padHigh = {p[15], p[16]};
  bool accumulate = p[17];
  bool forward = c.kind == TCC_LIBRARY_CALL_CONV2D;
  dnnl_convolution_desc_t fwd;
  b.check(a.dnnl_dilated_convolution_forward_desc_init(
              &fwd, forward ? dnnl_forward_inference : dnnl_forward_training,
              dnnl_convolution_direct, &hintMd[kX], &hintMd[kW], nullptr, &hintMd[kY], strides,
              dilations, padLow, padHigh),
          "convolution");
  CallBuilder::PostOps post;
  post.sum = forward && accumulate;
  dnnl_primitive_desc_t pd = b.describe(&fwd, post);
  if (!forward) {
    dnnl_convolution_desc_t bwd;
    if (c.kind == TCC_LIBRARY_CALL_CONV2D_BACKWARD_DATA)
      b.check(a.dnnl_dilated_convolution_backward_data_desc_init(
                  &bwd, dnnl_convolution_direct, &anyMd[kX], &anyMd[kW], &anyMd[kY], strides,
                  dilations, padLow, padHigh),
              "convolution backward data");
    else
      b.check(a.dnnl_dilated_convolution_backward_weights_desc_init(
                  &bwd, dnnl_convolution_direct, &anyMd[kX], &anyMd[kW], nullptr, &anyMd[kY],
                  strides, dilations, padLow, padHigh),
              "convolution backward weights");
    dnnl_primitive_desc_t hint = pd;
    if (c.kind == TCC_LIBRARY_CALL_CONV2D_BACKWARD_WEIGHTS && in != dnnl_f32 && !widened &&
        !amxSuitsWeightGradient(y[0] * y[2] * y[3], x[1] / groups))
      pd = b.describeFirst(&bwd, hint, [](const std::string &impl) {
        return impl.find("amx") == std::string::npos && impl.find("ref") == std::string::npos &&
               impl.find("gemm") == std::string::npos;
      });
    else
      pd = b.describe(&bwd, {}, hint);
    a.dnnl_primitive_desc_destroy(hint);
  }
  b.call->implementation = (widened ? "widened to f32: " : "") + b.implementationOf(pd);
  // Scratch layout: the primitive's scratchpad, then a buffer for each
  // operand whose chosen layout is not the plain one (and for an
  // accumulating gradient's result), then the reorders' scratchpads (they
  // run one at a time).
  const dnnl_memory_desc_t *scratchMd = a.dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  size_t offset = alignUp(scratchMd ? a.dnnl_memory_desc_get_size(scratchMd) : 0);
  dnnl_memory_desc_t plainMd[3], chosen[3];
  Binding at[3];
  for (int k = 0; k < 3; ++k) {
    const std::vector<dnnl_dim_t> &d = *dims[order[k]];
    if (order[k] == kW && filterLayout) {
      plainMd[k] = *filterLayout;
      plainMd[k].data_type = plainType[k];
    } else {
      plainMd[k] = b.plain(d, denseStrides(d), plainType[k]);
    }
    chosen[k] = *a.dnnl_primitive_desc_query_md(pd, queries[k], 0);
    if (order[k] == kW && filterChosen)
      *filterChosen = chosen[k];
    bool viaScratch = !a.dnnl_memory_desc_equal(&chosen[k], &plainMd[k]) ||
                      (k == 2 && accumulate && !forward);
    if (!viaScratch) {
      at[k] = {args[k], k, 0, nullptr};
    } else {
      at[k] = {args[k], -1, offset, nullptr};
      offset += alignUp(a.dnnl_memory_desc_get_size(&chosen[k]));
    }
  }
  size_t reorderScratch = offset;
  b.call->scratchBytes = std::max(b.call->scratchBytes, offset);
  Binding plainAt[3] = {{0, 0, 0, nullptr}, {0, 1, 0, nullptr}, {0, 2, 0, nullptr}};
  std::vector<std::pair<Binding, dnnl_memory_desc_t>> bindings;
  for (int k = 0; k < 3; ++k)
    bindings.push_back({at[k], chosen[k]});
  // Inputs in (the output too when the forward convolution adds onto it).
  std::vector<int> copiedIn = {0, 1};
  if (forward && accumulate)
    copiedIn.push_back(2);
  // Operand K's reorder; a plain filter's may take a route (a grouped
  // filter, 5-D, never does).
  bool routed = false;
  auto reorder = [&](int k, const dnnl_memory_desc_t &from, Binding fromAt,
                     const dnnl_memory_desc_t &to, Binding toAt, bool sum) {
    if (order[k] == kW && !filterLayout)
      routed |= b.addFilterReorder(w, from, fromAt, to, toAt, reorderScratch, sum);
    else
      b.addReorder(from, fromAt, to, toAt, reorderScratch, sum);
  };
  for (int k : copiedIn)
    if (at[k].operand < 0)
      reorder(k, plainMd[k], plainAt[k], chosen[k], at[k], false);
  b.addStep(pd, bindings, 0);
  if (at[2].operand < 0)
    reorder(2, chosen[2], at[2], plainMd[2], plainAt[2], accumulate && !forward);
  if (routed)
    b.call->implementation += " (filter reordered in two steps)";
  if (filterLayout) {
    int k = order[0] == kW ? 0 : order[1] == kW ? 1 : 2;
    b.call->implementation += a.dnnl_memory_desc_equal(&chosen[k], &plainMd[k])
                                  ? " (filter in its layout)"
                                  : " (filter reordered from its set's layout)";
  }
}

/// Whether MD, a primitive's filter layout, can hold a set of
/// tcc-filter-layouts: blocked without padding (every buffer of the set
/// is the filter's size) and not the plain one.
bool keepableFilterLayout(const Api &a, const dnnl_memory_desc_t &md,
                          const dnnl_memory_desc_t &plain) {
  dnnl_memory_desc_t asPlainType = md;
  asPlainType.data_type = plain.data_type;
  if (md.format_kind != dnnl_blocked || md.offset0 != 0 || md.extra.flags != 0 ||
      a.dnnl_memory_desc_equal(&asPlainType, &plain))
    return false;
  for (int i = 0; i < md.ndims; ++i)
    if (md.padded_dims[i] != md.dims[i] || md.padded_offsets[i] != 0)
      return false;
  return true;
}


/// A widened 16-bit MATMUL as PanelMatmul (above): false where neither
/// its row nor its column panels would fit (widenedPanelRows).
bool addPanelMatmul(CallBuilder &b, const tcc_abi_library_call &c) {
  const Api &a = b.a;
  const int64_t *p = c.params;
  auto panels = std::make_unique<PanelMatmul>();
  PanelMatmul &x = *panels;
  x.batch = p[0], x.m = p[1], x.n = p[2], x.k = p[3];
  x.transA = p[4], x.accumulate = p[6];
  x.epilogue = matmulEpilogue(c);
  const bool transB = x.transB = p[5];
  x.dtype = c.dtype, x.cDtype = libraryCallOutputDtype(c);
  // Buffers for every CPU the session may run on; panels for the threads
  // it is created with.
  x.threads = std::max({1, availableCpus(), parallelThreads()});
  // oneDNN's AVX-512 kernels (brgemm) read a transposed A with strides;
  // below AVX-512 its sgemm wants a 2-D product's transposed A widened into
  // plain rows (1.5x faster on gpt4's weight gradients than read with
  // strides; a batch's small matrices are faster read with strides: 1.14x
  // f32's time against 1.30x). The panels' sizes: PanelLimits.
  const bool brgemm = oneDnnHasAvx512();
  x.plainA = !brgemm && x.batch == 1;
  const PanelLimits limits = brgemm ? PanelLimits::brgemm() : PanelLimits::large();
  x.rows = widenedPanelRows(x.batch, x.m, x.n, x.k, x.cDtype, parallelThreads(), limits);
  const int64_t heads = matmulHeads(c), interleaved = matmulInterleaved(c);
  x.a = {x.transA ? x.k : x.m, x.transA ? x.m : x.k,
         bool(interleaved & TCC_MATMUL_INTERLEAVED_A), heads};
  x.b = {transB ? x.n : x.k, transB ? x.k : x.n, bool(interleaved & TCC_MATMUL_INTERLEAVED_B),
         heads};
  x.c = {x.m, x.n, bool(interleaved & TCC_MATMUL_INTERLEAVED_C), heads};
  // Where row panels do not fit, or had to shrink to give every thread
  // one (few rows of C), panels of columns (a column's bytes: B's K and C's
  // M) in whole rounds over the threads: with brgemm, which copies B for
  // each product, GPT-2-small's 256-row products took 1.46-1.57x their f32
  // time at 2 threads in one 128-row panel per thread.
  const int64_t unshared = widenedPanelRows(x.batch, x.m, x.n, x.k, x.cDtype, 1, limits);
  if ((x.rows == 0 || x.rows < unshared) && x.batch == 1 && heads == 1 && interleaved == 0) {
    PanelLimits balanced = limits;
    balanced.shareRows = false;
    const int64_t columns =
        widenedPanelRows(1, x.n, x.m, x.k, x.cDtype, parallelThreads(), balanced);
    if (columns > 0)
      x.rows = columns, x.columns = true;
  }
  if (x.rows == 0)
    return false;
  // B widened as it is stored (a B^T read transposed): a 2-D product's by
  // a step, a batch's matrix by the thread that takes it. Transposed into
  // plain K x N, GPT-2-small's 256 x 3072 x 768 B^T product took 2.08x its
  // f32 time below AVX-512 (1.05x as stored) and 1.31x with brgemm (1.05x).
  dnnl_memory_desc_t weights =
      transB ? b.plain({x.k, x.n}, {1, x.k}) : b.plain({x.k, x.n}, {x.n, 1});
  size_t shared = 0;
  if (x.columns) {
    // A widened as stored by a step.
    shared = alignUp(size_t(x.m * x.k) * sizeof(float));
    dnnl_memory_desc_t widened =
        x.transA ? b.plain({x.m, x.k}, {1, x.m}) : b.plain({x.m, x.k}, {x.k, 1});
    dnnl_memory_desc_t stored =
        b.plain({x.m, x.k}, x.transA ? std::vector<dnnl_dim_t>{1, x.a.ld()}
                                     : std::vector<dnnl_dim_t>{x.a.ld(), 1},
                dnnlType(x.dtype));
    b.addReorder(stored, {0, 0, 0, nullptr}, widened, {0, -1, 0, nullptr}, shared);
  } else if (x.batch == 1) {
    shared = alignUp(size_t(x.k * x.n) * sizeof(float));
    dnnl_memory_desc_t stored =
        b.plain({x.k, x.n}, transB ? std::vector<dnnl_dim_t>{1, x.b.ld()}
                                   : std::vector<dnnl_dim_t>{x.b.ld(), 1},
                dnnlType(x.dtype));
    b.addReorder(stored, {0, 1, 0, nullptr}, weights, {0, -1, 0, nullptr}, shared);
  }
  // The products, planned for one thread (each runs on one).
  ParallelThreadsScope one(1);
  size_t pad = 0;
  auto product = [&](int64_t count, PanelMatmul::Product &into) {
    // Rows: COUNT rows of op(A) against B, into COUNT rows of C. Columns:
    // the widened A against COUNT columns of B, into C's M rows of COUNT
    // columns.
    dnnl_memory_desc_t src, wei, dst;
    const dnnl_dim_t ld = x.cDtype == TCC_DTYPE_F32 ? x.c.ld() : x.columns ? count : x.n;
    if (x.columns) {
      src = x.transA ? b.plain({x.m, x.k}, {1, x.m}) : b.plain({x.m, x.k}, {x.k, 1});
      wei = transB ? b.plain({x.k, count}, {1, x.k}) : b.plain({x.k, count}, {count, 1});
      dst = b.plain({x.m, count}, {ld, 1});
    } else {
      src = x.transA && !x.plainA ? b.plain({count, x.k}, {1, count})
                                  : b.plain({count, x.k}, {x.k, 1});
      wei = weights;
      dst = b.plain({count, x.n}, {ld, 1});
    }
    dnnl_matmul_desc_t desc;
    b.check(a.dnnl_matmul_desc_init(&desc, &src, &wei, nullptr, &dst), "matmul");
    CallBuilder::PostOps post;
    post.sum = x.accumulate;
    dnnl_primitive_desc_t pd = b.describe(&desc, post);
    if (&into == &x.full)
      b.call->implementation = "widened to f32: " + b.implementationOf(pd) + " (panels of " +
                               std::to_string(x.rows) + (x.columns ? " columns)" : " rows)");
    // The scratchpad's descriptor, copied: the primitive descriptor owns it.
    const dnnl_memory_desc_t *queried =
        a.dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    size_t bytes = queried ? a.dnnl_memory_desc_get_size(queried) : 0;
    dnnl_memory_desc_t scratchpad = bytes ? *queried : dnnl_memory_desc_t{};
    pad = std::max(pad, bytes);
    dnnl_status_t status = a.dnnl_primitive_create(&into.primitive, pd);
    a.dnnl_primitive_desc_destroy(pd);
    b.check(status, "primitive creation");
    const dnnl_memory_desc_t *mds[4] = {&src, &wei, &dst, bytes ? &scratchpad : nullptr};
    into.memories.assign(size_t(x.threads), {});
    for (auto &memories : into.memories)
      for (int i = 0; i < 4; ++i)
        if (mds[i])
          b.check(a.dnnl_memory_create(&memories[size_t(i)], mds[i], a.engine, DNNL_MEMORY_NONE),
                  "memory creation");
  };
  const int64_t extent = x.columns ? x.n : x.m;
  product(x.rows, x.full);
  if (extent % x.rows)
    product(extent % x.rows, x.tail);
  x.streams.assign(size_t(x.threads), nullptr);
  x.statuses.assign(size_t(x.threads), dnnl_success);
  for (dnnl_stream_t &stream : x.streams)
    b.check(a.dnnl_stream_create(&stream, a.engine, dnnl_stream_default_flags), "stream creation");
  // A panel of A's rows or B's columns (ROWS x K), C's part (ROWS x N,
  // or M x ROWS), a batch's B.
  x.cOffset = alignUp(size_t(x.rows * x.k) * sizeof(float));
  x.bOffset = x.cOffset + (x.cDtype == TCC_DTYPE_F32
                               ? 0
                               : alignUp(size_t(x.rows * (x.columns ? x.m : x.n)) * sizeof(float)));
  x.padOffset = x.bOffset + (x.batch > 1 ? alignUp(size_t(x.k * x.n) * sizeof(float)) : 0);
  x.perThread = x.padOffset + alignUp(pad);
  x.buffersAt = shared;
  b.call->scratchBytes =
      std::max(b.call->scratchBytes, x.buffersAt + size_t(x.threads) * x.perThread);
  b.call->panelMatmul = std::move(panels);
  return true;
}

/// The steps of a MATMUL call: plain row-major operands, transposes as
/// strides (matmul's JIT kernels read them directly). A 16-bit call (bf16 /
/// f16 A and B, f32 sums, C in f32 or in the operands' type) is oneDNN's
/// 16-bit matmul when NATIVE, else it is WIDENED: in panels (PanelMatmul)
/// where they fit, else A and B reordered into f32 copies in scratch memory
/// (exact), the f32 matmul, and a 16-bit C rounded once from an f32 result
/// in scratch (the reorder out rounds to nearest even), the numbers of the
/// native call up to the order of the f32 sums. A 16-bit call with an
/// epilogue is always widened: its bias and residual (of C's type) are
/// read widened too, and the sum is rounded once.
void addMatmul(CallBuilder &b, const tcc_abi_library_call &c, bool native) {
  const Api &a = b.a;
  const int64_t *p = c.params;
  const dnnl_dim_t n = p[0], rows = p[1], cols = p[2], k = p[3];
  const bool ta = p[4], tb = p[5], accumulate = p[6];
  const dnnl_data_type_t in = dnnlType(c.dtype), out = dnnlType(libraryCallOutputDtype(c));
  const int64_t epilogue = matmulEpilogue(c);
  const bool widened = in != dnnl_f32 && (!native || epilogue);
  if (widened && addPanelMatmul(b, c))
    return;
  // With heads every operand is 4-D: [batch / H, H, R, C].
  const dnnl_dim_t heads = matmulHeads(c);
  const int64_t interleaved = matmulInterleaved(c);
  // An R x C matrix of the call (one per batch element), stored transposed
  // (column-major) when TRANSPOSED, its stored rows interleaved across the
  // heads when INTERLEAVES (abi.h): a stored row then spans H matrices.
  auto matrix = [&](dnnl_dim_t r, dnnl_dim_t cc, bool transposed, dnnl_data_type_t type,
                    bool interleaves = false) {
    const dnnl_dim_t storedCols = transposed ? r : cc;
    const dnnl_dim_t rowStride = interleaves ? heads * storedCols : storedCols;
    std::vector<dnnl_dim_t> inner = transposed ? std::vector<dnnl_dim_t>{1, rowStride}
                                               : std::vector<dnnl_dim_t>{rowStride, 1};
    if (n == 1)
      return b.plain({r, cc}, inner, type);
    if (heads == 1)
      return b.plain({n, r, cc}, {r * cc, inner[0], inner[1]}, type);
    const dnnl_dim_t head = interleaves ? storedCols : r * cc;
    return b.plain({n / heads, heads, r, cc}, {heads * r * cc, head, inner[0], inner[1]}, type);
  };
  auto bytesOf = [&](const dnnl_memory_desc_t &md) {
    return alignUp(a.dnnl_memory_desc_get_size(&md));
  };
  // Scratch memory: the copies first, then the scratchpads of the steps
  // (which run one at a time).
  size_t copies = 0;
  auto copyTo = [&](const dnnl_memory_desc_t &md) {
    Binding at = {0, -1, copies, nullptr};
    copies += bytesOf(md);
    return at;
  };
  dnnl_memory_desc_t md[3] = {
      matrix(rows, k, ta, in, interleaved & TCC_MATMUL_INTERLEAVED_A),
      matrix(k, cols, tb, in, interleaved & TCC_MATMUL_INTERLEAVED_B),
      matrix(rows, cols, false, out, interleaved & TCC_MATMUL_INTERLEAVED_C)};
  Binding src = {DNNL_ARG_SRC, 0, 0, nullptr}, weights = {DNNL_ARG_WEIGHTS, 1, 0, nullptr},
          dst = {DNNL_ARG_DST, 2, 0, nullptr};
  // Reorders in: an operand (or C, to accumulate onto) into a plain copy in
  // scratch memory, run before the product.
  struct CopyIn {
    dnnl_memory_desc_t from, to;
    Binding fromAt, toAt;
  };
  std::vector<CopyIn> copiesIn;
  auto copyIn = [&](int operand, dnnl_dim_t r, dnnl_dim_t cc, dnnl_data_type_t type,
                    Binding &binding, bool transposed = false) {
    dnnl_memory_desc_t to = matrix(r, cc, transposed, type);
    Binding at = copyTo(to);
    copiesIn.push_back({md[operand], to, {0, operand, 0, nullptr}, at});
    md[operand] = to;
    binding.operand = -1;
    binding.scratchOffset = at.scratchOffset;
  };
  if (widened) {
    copyIn(0, rows, k, dnnl_f32, src);
    copyIn(1, k, cols, dnnl_f32, weights, tb); // B^T stays transposed (PanelMatmul)
  } else if (ta && n == 1 && in == dnnl_f32 && rows * k >= kTransposeCopyElements) {
    // A transposed left operand (A^T B: the weight gradient X^T G) halves
    // the speed of oneDNN's f32 matmul; a large one is first copied into
    // plain layout (the reorder costs a pass over A). Its native 16-bit
    // kernels read A transposed nearly as fast as plain: gpt4's bf16
    // weight gradients on AVX512-BF16 took 5.4 ms transposed against 4.9 ms
    // plain plus a 0.8 ms copy, so 16-bit calls take A as it is.
    copyIn(0, rows, k, in, src);
  }
  // A widened call with a 16-bit C computes into an f32 copy of C (holding
  // C's values first when it accumulates) and rounds it out.
  dnnl_memory_desc_t result = md[2];
  bool roundOut = widened && out != dnnl_f32;
  if (roundOut) {
    md[2] = matrix(rows, cols, false, dnnl_f32);
    Binding at = copyTo(md[2]);
    dst.operand = -1;
    dst.scratchOffset = at.scratchOffset;
    if (accumulate)
      copiesIn.push_back({result, md[2], {0, 2, 0, nullptr}, at});
  }
  // The epilogue: bias as the matmul's own bias (a [1, N] row, the same for
  // every batch), then the residual as a binary-add post-op and relu as an
  // eltwise post-op: dst = relu(A B + bias + D). Operands {A, B, C, bias, D},
  // without the ones the epilogue lacks.
  bool hasBias = epilogue & TCC_MATMUL_EPILOGUE_BIAS;
  bool hasResidual = epilogue & TCC_MATMUL_EPILOGUE_RESIDUAL;
  auto biasOf = [&](dnnl_data_type_t type) {
    if (n == 1)
      return b.plain({1, cols}, {cols, 1}, type);
    return heads == 1 ? b.plain({1, 1, cols}, {cols, cols, 1}, type)
                      : b.plain({1, 1, 1, cols}, {cols, cols, cols, 1}, type);
  };
  dnnl_memory_desc_t biasMd, residualMd = md[2];
  Binding bias = {DNNL_ARG_BIAS, 3, 0, nullptr},
          residual = {DNNL_ARG_ATTR_MULTIPLE_POST_OP(accumulate ? 1 : 0) | DNNL_ARG_SRC_1,
                      hasBias ? 4 : 3, 0, nullptr};
  if (hasBias) {
    biasMd = biasOf(roundOut ? dnnl_f32 : out);
    if (roundOut) {
      Binding at = copyTo(biasMd);
      copiesIn.push_back({biasOf(out), biasMd, {0, 3, 0, nullptr}, at});
      bias.operand = -1;
      bias.scratchOffset = at.scratchOffset;
    }
  }
  if (hasResidual && roundOut) {
    Binding at = copyTo(md[2]);
    copiesIn.push_back({result, md[2], {0, residual.operand, 0, nullptr}, at});
    residual.operand = -1;
    residual.scratchOffset = at.scratchOffset;
  }
  for (const CopyIn &copy : copiesIn)
    b.addReorder(copy.from, copy.fromAt, copy.to, copy.toAt, copies);
  CallBuilder::PostOps post;
  post.sum = accumulate;
  post.add = hasResidual ? &md[2] : nullptr;
  post.relu = epilogue & TCC_MATMUL_EPILOGUE_RELU;
  dnnl_matmul_desc_t desc;
  b.check(a.dnnl_matmul_desc_init(&desc, &md[0], &md[1], hasBias ? &biasMd : nullptr, &md[2]),
          "matmul");
  dnnl_primitive_desc_t pd = b.describe(&desc, post);
  b.call->implementation = (widened ? "widened to f32: " : "") + b.implementationOf(pd);
  b.call->scratchBytes = std::max(b.call->scratchBytes, copies);
  std::vector<std::pair<Binding, dnnl_memory_desc_t>> args = {
      {src, md[0]}, {weights, md[1]}, {dst, md[2]}};
  if (hasBias)
    args.push_back({bias, biasMd});
  if (hasResidual)
    args.push_back({residual, residualMd});
  b.addStep(pd, std::move(args), copies);
  if (roundOut)
    b.addReorder(md[2], {0, -1, dst.scratchOffset, nullptr}, result, {0, 2, 0, nullptr}, copies);
}

/// A blocked layout's name as oneDNN spells its format tags: the
/// dimensions (a, b, ... ) from the outermost, capitals for the blocked
/// ones, then the inner blocks ("ABcd16b16a").
std::string layoutName(const dnnl_memory_desc_t &md) {
  const auto &blocking = md.format_desc.blocking;
  std::vector<int> order(size_t(md.ndims));
  for (int i = 0; i < md.ndims; ++i)
    order[size_t(i)] = i;
  std::sort(order.begin(), order.end(), [&](int x, int y) {
    return blocking.strides[x] != blocking.strides[y] ? blocking.strides[x] > blocking.strides[y]
                                                      : x < y;
  });
  std::string name;
  for (int i : order) {
    bool blocked = false;
    for (int k = 0; k < blocking.inner_nblks; ++k)
      blocked |= blocking.inner_idxs[k] == i;
    name += char((blocked ? 'A' : 'a') + i);
  }
  for (int k = 0; k < blocking.inner_nblks; ++k)
    name += std::to_string(blocking.inner_blks[k]) + char('a' + blocking.inner_idxs[k]);
  return name;
}

} // namespace

namespace {
/// A 16-bit MATMUL computed in f32 (no 16-bit arithmetic on this CPU:
/// nativeSixteenBitCalls) on BLAS, where fp32's products go there
/// (blasPrefers: MKL on Intel): oneDNN reorders widen A and B (and C, to
/// accumulate onto) into f32 copies in scratch, sgemm computes the product,
/// and a reorder rounds it into a 16-bit C (an f32 C takes the product
/// directly). Without this, fp32 steps ran their products on MKL and 16-bit
/// steps on oneDNN's f32 kernels, 1.0-1.4x slower on Intel
/// (docs/precision.md). 2-D products without an epilogue only (batch 1,
/// no heads: what mklPrefers sends to MKL).
void addWidenedBlasMatmul(CallBuilder &b, const tcc_abi_library_call &c, const Blas *blas) {
  const int64_t *p = c.params;
  const dnnl_dim_t rows = p[1], cols = p[2], k = p[3];
  const bool ta = p[4], tb = p[5], accumulate = p[6];
  const dnnl_data_type_t in = dnnlType(c.dtype), out = dnnlType(libraryCallOutputDtype(c));
  // Each operand as the row-major matrix it is stored as.
  auto stored = [&](dnnl_dim_t r, dnnl_dim_t cc, bool transposed, dnnl_data_type_t type) {
    dnnl_dim_t sr = transposed ? cc : r, sc = transposed ? r : cc;
    return b.plain({sr, sc}, {sc, 1}, type);
  };
  size_t copies = 0;
  auto copyTo = [&](const dnnl_memory_desc_t &md) {
    size_t at = copies;
    copies += alignUp(b.a.dnnl_memory_desc_get_size(&md));
    return at;
  };
  const dnnl_memory_desc_t a16 = stored(rows, k, ta, in), a32 = stored(rows, k, ta, dnnl_f32);
  const dnnl_memory_desc_t b16 = stored(k, cols, tb, in), b32 = stored(k, cols, tb, dnnl_f32);
  const dnnl_memory_desc_t cOut = stored(rows, cols, false, out),
                           c32 = stored(rows, cols, false, dnnl_f32);
  size_t bAt = copyTo(b32);
  WidenedPanels panels =
      planWidenedPanels(*blas, rows, cols, k, libraryCallOutputDtype(c), availableCpus());
  if (panels.rows > 0) {
    // B widened into scratch by oneDNN, then the panels (which widen A and
    // round C themselves).
    b.call->panelsAt = copies;
    copies += alignUp(panels.scratchBytes());
    b.addReorder(b16, {0, 1, 0, nullptr}, b32, {0, -1, bAt, nullptr}, copies);
    b.call->blasSplit = b.call->steps.size();
    b.call->scratchBytes = std::max(b.call->scratchBytes, copies);
    b.call->blas = blas;
    b.call->params.assign(p, p + 7);
    b.call->blasOperands = {{0, 0}, {-1, bAt}, {2, 0}};
    b.call->panels = panels;
    b.call->dtype = c.dtype;
    b.call->outputDtype = libraryCallOutputDtype(c);
    b.call->implementation = "widened to f32: blas:" + blas->file + " (panels of " +
                             std::to_string(panels.rows) + " rows)";
    return;
  }
  size_t aAt = copyTo(a32);
  bool roundOut = out != dnnl_f32;
  size_t cAt = roundOut ? copyTo(c32) : 0;
  b.addReorder(a16, {0, 0, 0, nullptr}, a32, {0, -1, aAt, nullptr}, copies);
  b.addReorder(b16, {0, 1, 0, nullptr}, b32, {0, -1, bAt, nullptr}, copies);
  if (roundOut && accumulate)
    b.addReorder(cOut, {0, 2, 0, nullptr}, c32, {0, -1, cAt, nullptr}, copies);
  b.call->blasSplit = b.call->steps.size();
  if (roundOut)
    b.addReorder(c32, {0, -1, cAt, nullptr}, cOut, {0, 2, 0, nullptr}, copies);
  b.call->scratchBytes = std::max(b.call->scratchBytes, copies);
  b.call->blas = blas;
  b.call->params.assign(p, p + 7);
  b.call->params.insert(b.call->params.end(), {1, 0}); // no heads, nothing interleaved
  b.call->blasOperands = {{-1, aAt}, {-1, bAt}, roundOut ? std::make_pair(-1, cAt)
                                                         : std::make_pair(2, size_t(0))};
  b.call->implementation = "widened to f32: blas:" + blas->file;
}
} // namespace

bool nativeSixteenBitCalls(int32_t dtype, SixteenBitCalls mode) {
  if (dtype != TCC_DTYPE_BF16 && dtype != TCC_DTYPE_F16)
    return false;
  if (mode == SixteenBitCalls::Auto) {
    const char *env = std::getenv("TCC_SIXTEEN_BIT_CALLS");
    std::string choice = env ? env : "";
    if (choice == "native")
      mode = SixteenBitCalls::Native;
    else if (choice == "widened")
      mode = SixteenBitCalls::Widened;
    else if (!choice.empty())
      fail(TCC_ERROR_INVALID_ARGUMENT,
           "TCC_SIXTEEN_BIT_CALLS is '" + choice + "'; expected native or widened");
  }
  if (mode != SixteenBitCalls::Auto)
    return mode == SixteenBitCalls::Native;
  // oneDNN 2.6 has no f16 CPU kernels; its bf16 ones compute with the CPU's
  // bf16 dot products (AVX512-BF16, AMX), and on a CPU without them emulate
  // these, slower than the f32 call on widened copies. oneDNN's own ISA
  // (DNNL_MAX_CPU_ISA lowers it) decides.
  if (dtype == TCC_DTYPE_F16)
    return false;
  int isa = int(api().dnnl_get_effective_cpu_isa());
  return (isa & dnnl_cpu_isa_avx512_core_bf16) == dnnl_cpu_isa_avx512_core_bf16;
}

bool serialCall(const tcc_abi_library_call &c) {
  const int64_t *p = c.params;
  double flops = c.kind == TCC_LIBRARY_CALL_MATMUL
                     ? 2.0 * double(p[0]) * double(p[1]) * double(p[2]) * double(p[3])
                     : 2.0 * double(p[0]) * double(p[4]) * double(p[7]) * double(p[8]) *
                           double(p[1]) * double(p[5]) * double(p[6]) / double(convGroups(c));
  return flops < kSerialFlops;
}

bool oneDnnHasAvx512() {
  int isa = int(api().dnnl_get_effective_cpu_isa());
  return (isa & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core;
}

std::string sixteenBitCallsIsa() {
  int isa = int(api().dnnl_get_effective_cpu_isa());
  if ((isa & dnnl_cpu_isa_avx512_core_amx) == dnnl_cpu_isa_avx512_core_amx)
    return "AMX";
  if ((isa & dnnl_cpu_isa_avx512_core_bf16) == dnnl_cpu_isa_avx512_core_bf16)
    return "AVX512-BF16";
  return "";
}

LibraryCalls::LibraryCalls(const tcc_abi_library_call *calls, int32_t count,
                           const std::string &what, MatmulLibrary matmuls,
                           SixteenBitCalls sixteenBit, LibraryMath math,
                           const std::vector<std::vector<int32_t>> &filterSets)
    : what_(what) {
  // BLAS is loaded only when a session has an f32 matmul call (blasPrefers
  // asks which library it is).
  auto blasChosen = [matmuls](const tcc_abi_library_call &c) {
    return matmuls == MatmulLibrary::Blas || (matmuls == MatmulLibrary::Auto && blasPrefers(c));
  };
  auto onBlas = [&](const tcc_abi_library_call &c) {
    return c.kind == TCC_LIBRARY_CALL_MATMUL && c.dtype == TCC_DTYPE_F32 &&
           libraryCallOutputDtype(c) == TCC_DTYPE_F32 && blasChosen(c);
  };
  // A 16-bit product computed in f32 goes where fp32's would
  // (addWidenedBlasMatmul): 2-D, no epilogue.
  auto widenedOnBlas = [&](const tcc_abi_library_call &c) {
    return c.kind == TCC_LIBRARY_CALL_MATMUL &&
           (c.dtype == TCC_DTYPE_BF16 || c.dtype == TCC_DTYPE_F16) && c.params[0] == 1 &&
           matmulEpilogue(c) == 0 && matmulHeads(c) == 1 && matmulInterleaved(c) == 0 &&
           !nativeSixteenBitCalls(c.dtype, sixteenBit) && blasChosen(c);
  };
  bool anyMatmul = std::any_of(calls, calls + count, [](const tcc_abi_library_call &c) {
    return c.kind == TCC_LIBRARY_CALL_MATMUL;
  });
  bool wantBlas = std::any_of(calls, calls + count, onBlas) ||
                  std::any_of(calls, calls + count, widenedOnBlas);
  const Blas *blasLibrary = wantBlas ? blas() : nullptr;
  if (matmuls == MatmulLibrary::Blas && wantBlas && !blasLibrary)
    fail(TCC_ERROR_UNSUPPORTED, what + ": no BLAS could be loaded (Debian: apt-get install "
                                       "libopenblas0-openmp; TCC_BLAS_LIBRARY names another)");
  std::vector<int> setOfCall = chooseFilterLayouts(calls, count, filterSets, sixteenBit);
  for (int32_t i = 0; i < count; ++i) {
    const tcc_abi_library_call &c = calls[i];
    const int64_t *p = c.params;
    if (libraryCallMath(c) != TCC_LIBRARY_MATH_EXACT && math == LibraryMath::RefuseTf32)
      fail(TCC_ERROR_UNSUPPORTED, what + ": library call #" + std::to_string(i) +
                                      ": TF32 math is a GPU mode (tensor cores); the CPU runs "
                                      "fp32 only");
    bool serial = serialCall(c);
    if (blasLibrary && onBlas(c)) {
      auto call = std::make_unique<Call>();
      call->serial = serial;
      call->blas = blasLibrary;
      call->params.assign(p, p + 7);
      call->params.insert(call->params.end(), {matmulHeads(c), matmulInterleaved(c)});
      call->epilogue = matmulEpilogue(c);
      call->implementation = "blas:" + blasLibrary->file;
      calls_.push_back(std::move(call));
      continue;
    }
    // oneDNN, loaded and given a stream by the first call that needs it.
    const Api &a = api();
    createStream();
    CallBuilder b(a, i, what);
    b.call->serial = serial;
    ParallelThreadsScope scope(b.call->serial ? 1 : 0);
    if (blasLibrary && widenedOnBlas(c))
      addWidenedBlasMatmul(b, c, blasLibrary);
    else if (c.kind == TCC_LIBRARY_CALL_MATMUL)
      addMatmul(b, c, nativeSixteenBitCalls(c.dtype, sixteenBit));
    else
      addConvolution(b, c, nativeSixteenBitCalls(c.dtype, sixteenBit),
                     setOfCall[size_t(i)] >= 0 ? &filterLayouts_[size_t(setOfCall[size_t(i)])]->md
                                               : nullptr);
    scratchpadSize_ = std::max(scratchpadSize_, b.call->scratchBytes);
    calls_.push_back(std::move(b.call));
  }
  if (blasVerbose() && anyMatmul) {
    int onBlas = 0, matmulCalls = 0;
    for (int32_t i = 0; i < count; ++i) {
      matmulCalls += calls[i].kind == TCC_LIBRARY_CALL_MATMUL;
      onBlas += calls_[size_t(i)]->blas != nullptr;
    }
    // In Auto mode blasPrefers asked for the library: none means none loaded.
    bool noneLoaded = wantBlas || (matmuls == MatmulLibrary::Auto && !blas());
    std::fprintf(stderr, "tcc: %s: %d of %d matmul calls on BLAS (%s)\n", what.c_str(), onBlas,
                 matmulCalls,
                 blasLibrary ? blasLibrary->file.c_str() : noneLoaded ? "none loaded" : "none needed");
  }
}

void LibraryCalls::createStream() {
  if (stream_)
    return;
  const Api &a = api();
  dnnl_stream_t stream = nullptr;
  CallBuilder(a, -1, what_).check(
      a.dnnl_stream_create(&stream, a.engine, dnnl_stream_default_flags), "stream creation");
  stream_ = stream;
}

std::vector<int> LibraryCalls::chooseFilterLayouts(const tcc_abi_library_call *calls,
                                                   int32_t count,
                                                   const std::vector<std::vector<int32_t>> &sets,
                                                   SixteenBitCalls sixteenBit) {
  std::vector<int> setOfCall(size_t(count), -1);
  filterLayouts_.clear();
  filterLayouts_.resize(sets.size());
  const char *env = std::getenv("TCC_FILTER_LAYOUTS");
  std::string choice = env ? env : "";
  if (!choice.empty() && choice != "plain" && choice != "kept" && choice != "report")
    fail(TCC_ERROR_INVALID_ARGUMENT,
         "TCC_FILTER_LAYOUTS is '" + choice + "'; expected kept, plain or report");
  if (choice == "plain")
    return setOfCall;
  for (size_t s = 0; s < sets.size(); ++s) {
    // Checked first: every call a one-group convolution of one filter
    // shape, in no other set.
    std::string where = what_ + ": filter layout set " + std::to_string(s);
    const tcc_abi_library_call *forward = nullptr;
    std::vector<dnnl_dim_t> dims;
    for (int32_t row : sets[s]) {
      if (row < 0 || row >= count || !isConvolution(calls[row].kind) ||
          convGroups(calls[row]) != 1 || setOfCall[size_t(row)] >= 0)
        fail(TCC_ERROR_FORMAT, where + ": library call #" + std::to_string(row) +
                                   " is not a one-group convolution of this set alone");
      const int64_t *p = calls[row].params;
      std::vector<dnnl_dim_t> w = {p[4], p[1], p[5], p[6]};
      if (!dims.empty() && w != dims)
        fail(TCC_ERROR_FORMAT, where + ": its calls' filters differ in shape");
      dims = w;
      setOfCall[size_t(row)] = int(s);
      if (!forward && calls[row].kind == TCC_LIBRARY_CALL_CONV2D)
        forward = &calls[row];
    }
    if (!forward)
      continue;
    // The layout the set's first forward call reads the filter in: every
    // step's forward then reads it as it is. (Timing the candidates per
    // session picked other layouts by the machine's noise from run to run,
    // and a gradient norm sums in the layout's order: reruns must give the
    // same bits.)
    const Api &a = api();
    createStream();
    CallBuilder b(a, int32_t(forward - calls), what_);
    dnnl_memory_desc_t chosen;
    {
      ParallelThreadsScope scope(serialCall(*forward) ? 1 : 0);
      addConvolution(b, *forward, nativeSixteenBitCalls(forward->dtype, sixteenBit), nullptr,
                     &chosen);
    }
    if (keepableFilterLayout(a, chosen, b.plain(dims, denseStrides(dims), chosen.data_type)))
      filterLayouts_[s] = std::make_unique<FilterLayout>(FilterLayout{chosen, dims});
  }
  for (int &set : setOfCall)
    if (set >= 0 && !filterLayouts_[size_t(set)])
      set = -1;
  if (choice == "report")
    for (size_t s = 0; s < sets.size(); ++s) {
      const int64_t *p = calls[sets[s].front()].params; // every call has the set's filter
      std::string dims = std::to_string(p[4]) + "x" + std::to_string(p[1]) + "x" +
                         std::to_string(p[5]) + "x" + std::to_string(p[6]);
      std::fprintf(stderr, "tcc: %s: filter set %zu (%s, %zu calls): %s\n", what_.c_str(), s,
                   dims.c_str(), sets[s].size(),
                   filterLayouts_[s] ? ("kept in " + layoutName(filterLayouts_[s]->md)).c_str()
                                     : "plain");
    }
  return setOfCall;
}

bool LibraryCalls::keepsFilterLayout(size_t set) const {
  return set < filterLayouts_.size() && filterLayouts_[set] != nullptr;
}

int64_t LibraryCalls::filterElements(size_t set) const {
  const FilterLayout &f = *filterLayouts_.at(set);
  return f.dims[0] * f.dims[1] * f.dims[2] * f.dims[3];
}

void LibraryCalls::convertFilter(size_t set, int32_t dtype, const void *from, void *to,
                                 bool toLayout) {
  const FilterLayout &f = *filterLayouts_.at(set);
  const Api &a = api();
  CallBuilder b(a, -1, what_);
  dnnl_memory_desc_t layout = f.md;
  layout.data_type = dnnlType(dtype);
  dnnl_memory_desc_t plain = b.plain(f.dims, denseStrides(f.dims), layout.data_type);
  const dnnl_memory_desc_t &src = toLayout ? plain : layout, &dst = toLayout ? layout : plain;
  dnnl_primitive_desc_t pd = nullptr;
  b.check(a.dnnl_reorder_primitive_desc_create(&pd, &src, a.engine, &dst, a.engine, nullptr),
          "filter layout reorder");
  dnnl_primitive_t reorder = nullptr;
  dnnl_status_t status = a.dnnl_primitive_create(&reorder, pd);
  a.dnnl_primitive_desc_destroy(pd);
  b.check(status, "filter layout reorder");
  dnnl_memory_t in = nullptr, out = nullptr;
  status = a.dnnl_memory_create(&in, &src, a.engine, const_cast<void *>(from));
  if (status == dnnl_success)
    status = a.dnnl_memory_create(&out, &dst, a.engine, to);
  if (status == dnnl_success) {
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, in}, {DNNL_ARG_TO, out}};
    status = a.dnnl_primitive_execute(reorder, static_cast<dnnl_stream_t>(stream_), 2, args);
    if (status == dnnl_success)
      status = a.dnnl_stream_wait(static_cast<dnnl_stream_t>(stream_));
  }
  if (in)
    a.dnnl_memory_destroy(in);
  if (out)
    a.dnnl_memory_destroy(out);
  a.dnnl_primitive_destroy(reorder);
  b.check(status, "filter layout reorder");
}

LibraryCalls::~LibraryCalls() {
  calls_.clear();
  if (stream_)
    api().dnnl_stream_destroy(static_cast<dnnl_stream_t>(stream_));
}

void LibraryCalls::run(void *self, int32_t index, void *const *operands) {
  auto *calls = static_cast<LibraryCalls *>(self);
  if (index < 0 || size_t(index) >= calls->calls_.size()) {
    if (calls->error_.empty())
      calls->error_ = calls->what_ + ": generated code asked for library call #" +
                      std::to_string(index) + " of " + std::to_string(calls->calls_.size());
    return;
  }
  Call &c = *calls->calls_[size_t(index)];
  ParallelThreadsScope scope(c.serial ? 1 : 0);
  if (c.blas && c.blasOperands.empty()) {
    blasMatmul(*c.blas, c.params.data(), c.epilogue, operands);
    return;
  }
  const Api &a = api();
  auto stream = static_cast<dnnl_stream_t>(calls->stream_);
  auto *scratch = static_cast<uint8_t *>(calls->scratchpad_);
  dnnl_status_t status = dnnl_success;
  auto runSteps = [&](size_t begin, size_t end) {
    for (size_t s = begin; s < end && status == dnnl_success; ++s) {
      Step &step = c.steps[s];
      if (step.conversion != Step::Conversion::None) {
        // The primitives before it have finished (an in-order stream).
        status = a.dnnl_stream_wait(stream);
        auto at = [&](const Binding &b) {
          return b.operand >= 0 ? operands[b.operand] : scratch + b.scratchOffset;
        };
        void *from = at(step.bindings[0]), *to = at(step.bindings[1]);
        if (status != dnnl_success)
          break;
        if (step.conversion == Step::Conversion::Widen)
          widenBuffer(step.dtype, static_cast<const uint16_t *>(from), static_cast<float *>(to),
                      step.count);
        else
          roundBuffer(step.dtype, static_cast<const float *>(from), static_cast<uint16_t *>(to),
                      step.count, step.sum);
        continue;
      }
      dnnl_exec_arg_t args[8];
      int nargs = 0;
      for (Binding &b : step.bindings) {
        void *data = b.operand >= 0 ? operands[b.operand] : scratch + b.scratchOffset;
        if (status == dnnl_success)
          status = a.dnnl_memory_set_data_handle(b.memory, data);
        args[nargs++] = {b.arg, b.memory};
      }
      if (status == dnnl_success)
        status = a.dnnl_primitive_execute(step.primitive, stream, nargs, args);
    }
    if (status == dnnl_success)
      status = a.dnnl_stream_wait(stream);
  };
  if (c.panelMatmul) {
    // A widened product in row panels on oneDNN: B widened, then the panels.
    runSteps(0, c.steps.size());
    const PanelMatmul &x = *c.panelMatmul;
    struct Context {
      const PanelMatmul *x;
      const uint16_t *a, *b;
      void *c;
      const void *bias, *d;
      uint8_t *scratch;
      int threads;
    } context = {&x,
                 static_cast<const uint16_t *>(operands[0]),
                 static_cast<const uint16_t *>(operands[1]),
                 operands[2],
                 nullptr,
                 nullptr,
                 scratch,
                 0};
    // Operands {A, B, C, bias, D}, without the ones the epilogue lacks.
    int next = 3;
    if (x.epilogue & TCC_MATMUL_EPILOGUE_BIAS)
      context.bias = operands[next++];
    if (x.epilogue & TCC_MATMUL_EPILOGUE_RESIDUAL)
      context.d = operands[next];
    int64_t work = x.batch * (((x.columns ? x.n : x.m) + x.rows - 1) / x.rows);
    context.threads = int(std::min<int64_t>({parallelThreads(), x.threads, work}));
    if (status == dnnl_success)
      parallelFor(
          0, context.threads, context.threads,
          [](void *raw, int64_t t) {
            auto &y = *static_cast<Context *>(raw);
            y.x->statuses[size_t(t)] =
                y.x->run(int(t), y.threads, y.a, y.b, y.c, y.bias, y.d, y.scratch);
          },
          &context);
    for (int t = 0; t < context.threads && status == dnnl_success; ++t)
      status = x.statuses[size_t(t)];
  } else if (c.blas && c.panels.rows > 0) {
    // A widened product in row panels: B widened, then the panels.
    runSteps(0, c.blasSplit);
    if (status == dnnl_success)
      widenedPanelMatmul(*c.blas, c.panels, c.params.data(), c.dtype, c.outputDtype,
                         operands[0], reinterpret_cast<const float *>(scratch + c.blasOperands[1].second),
                         operands[2], scratch + c.panelsAt);
  } else if (c.blas) {
    // A widened product on BLAS: widen, multiply, round out.
    runSteps(0, c.blasSplit);
    if (status == dnnl_success) {
      void *on[3];
      for (size_t i = 0; i < 3; ++i) {
        auto [operand, offset] = c.blasOperands[i];
        on[i] = operand >= 0 ? operands[operand] : scratch + offset;
      }
      blasMatmul(*c.blas, c.params.data(), 0, on);
      runSteps(c.blasSplit, c.steps.size());
    }
  } else {
    runSteps(0, c.steps.size());
  }
  if (status != dnnl_success && calls->error_.empty())
    calls->error_ = calls->what_ + ": library call #" + std::to_string(index) + " (" +
                    c.implementation + ") failed: " + a.dnnl_status2str(status);
}

std::string LibraryCalls::takeError() {
  std::string e;
  e.swap(error_);
  return e;
}

std::vector<std::string> LibraryCalls::implementations() const {
  std::vector<std::string> names;
  for (const auto &c : calls_)
    names.push_back(c->implementation);
  return names;
}

} // namespace tcc::rt
