//===- libraries.cpp - cuBLASLt and cuDNN library calls of a device artifact ===//
//
// Row-major matmuls run on column-major cuBLASLt by the usual identity: a
// row-major M x N matrix is its column-major transpose, so C = op(A) op(B)
// is computed as C^T = op(B)^T op(A)^T with the operands swapped and every
// layout read as stored. The epilogue follows from the same view: the bias
// runs along N, which is the rows of cuBLASLt's N x M result (the length
// CUBLASLT_EPILOGUE_BIAS wants), and the residual is cuBLASLt's C input
// with beta = 1 while D is the call's output. f32, bf16 and f16 operands;
// products are summed in fp32 (CUBLAS_COMPUTE_32F, f32 scale factors).
// Convolutions and their two gradients (cudnnConvolutionBackwardData /
// BackwardFilter) use cuDNN's legacy descriptor API, which cuDNN 9 keeps in
// libcudnn_cnn; its padding is symmetric; groups are its group count.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/libraries.h"

#include "runtime/cpu/onednn.h"
#include "runtime/cuda/driver.h"
#include "runtime/dtype.h"
#include "runtime/error.h"

#include <cublasLt.h>
#include <cudnn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <glob.h>
#include <mutex>
#include <set>
#include <type_traits>
#include <sys/stat.h>

namespace tcc::rt::cuda {

std::vector<std::string> librarySearchOrder(const std::vector<std::string> &sonames,
                                            const char *libPath,
                                            const std::vector<std::string> &wheelDirs) {
  std::vector<std::string> out;
  auto inDir = [&](const std::string &dir) {
    std::string prefix = dir.back() == '/' ? dir : dir + "/";
    for (const std::string &so : sonames)
      out.push_back(prefix + so);
  };
  if (libPath) {
    std::string s = libPath;
    size_t start = 0;
    while (start <= s.size()) {
      size_t end = s.find(':', start);
      if (end == std::string::npos)
        end = s.size();
      if (end > start)
        inDir(s.substr(start, end - start));
      start = end + 1;
    }
  }
  for (const std::string &so : sonames)
    out.push_back(so);
  for (const std::string &dir : wheelDirs)
    if (!dir.empty())
      inDir(dir);
  return out;
}

std::vector<std::string> wheelLibraryDirs() {
  static const char *patterns[] = {
      "/opt/*/.venv/lib/python3*/site-packages/nvidia/*/lib",
      "/opt/*/venv/lib/python3*/site-packages/nvidia/*/lib",
      "/usr/local/lib/python3*/dist-packages/nvidia/*/lib",
      "/usr/local/lib/python3*/site-packages/nvidia/*/lib",
      "/usr/lib/python3*/dist-packages/nvidia/*/lib",
      "/usr/lib/python3*/site-packages/nvidia/*/lib",
  };
  std::vector<std::string> dirs;
  for (const char *pattern : patterns) {
    glob_t g;
    if (::glob(pattern, GLOB_ONLYDIR, nullptr, &g) == 0)
      for (size_t i = 0; i < g.gl_pathc; ++i)
        dirs.push_back(g.gl_pathv[i]);
    ::globfree(&g);
  }
  return dirs;
}

bool tf32Enabled() {
  const char *env = std::getenv("TCC_CUDA_TF32");
  return env && std::strcmp(env, "1") == 0;
}

void *openLibrary(const std::vector<std::string> &sonames, const std::string &library, int flags,
                  std::string *openedPath) {
  std::vector<std::string> candidates =
      librarySearchOrder(sonames, std::getenv("TCC_CUDA_LIB_PATH"), wheelLibraryDirs());
  std::string errors;
  for (const std::string &c : candidates) {
    bool isPath = c.find('/') != std::string::npos;
    struct stat st;
    if (isPath && ::stat(c.c_str(), &st) != 0)
      continue; // not there: nothing worth reporting
    dlerror();
    if (void *handle = dlopen(c.c_str(), flags)) {
      *openedPath = c;
      return handle;
    }
    const char *why = dlerror();
    // A bare soname the system does not have is the common case.
    if (isPath || (why && !std::strstr(why, "No such file")))
      errors += "; " + std::string(why ? why : c + ": dlopen failed");
  }
  std::string names;
  for (const std::string &so : sonames)
    names += (names.empty() ? "" : " or ") + so;
  fail(TCC_ERROR_UNSUPPORTED,
       "cannot load " + library + " (" + names +
           ") from TCC_CUDA_LIB_PATH, the system's library path or NVIDIA's pip wheels "
           "(site-packages/nvidia/*/lib)" +
           errors + "; set TCC_CUDA_LIB_PATH to the folder that holds it");
}

namespace {

#define TCC_CUBLASLT_FUNCTIONS(X)                                              \
  X(cublasLtCreate)                                                            \
  X(cublasLtDestroy)                                                           \
  X(cublasLtGetVersion)                                                        \
  X(cublasLtGetStatusName)                                                     \
  X(cublasLtGetStatusString)                                                   \
  X(cublasLtMatmulDescCreate)                                                  \
  X(cublasLtMatmulDescDestroy)                                                 \
  X(cublasLtMatmulDescSetAttribute)                                            \
  X(cublasLtMatrixLayoutCreate)                                                \
  X(cublasLtMatrixLayoutDestroy)                                               \
  X(cublasLtMatrixLayoutSetAttribute)                                          \
  X(cublasLtMatmulPreferenceCreate)                                            \
  X(cublasLtMatmulPreferenceDestroy)                                           \
  X(cublasLtMatmulPreferenceSetAttribute)                                      \
  X(cublasLtMatmulAlgoGetHeuristic)                                            \
  X(cublasLtMatmul)

#define TCC_CUDNN_FUNCTIONS(X)                                                 \
  X(cudnnGetVersion)                                                           \
  X(cudnnGetErrorString)                                                       \
  X(cudnnCreate)                                                               \
  X(cudnnDestroy)                                                              \
  X(cudnnSetStream)                                                            \
  X(cudnnCreateTensorDescriptor)                                               \
  X(cudnnDestroyTensorDescriptor)                                              \
  X(cudnnSetTensor4dDescriptor)                                                \
  X(cudnnCreateFilterDescriptor)                                               \
  X(cudnnDestroyFilterDescriptor)                                              \
  X(cudnnSetFilter4dDescriptor)                                                \
  X(cudnnCreateConvolutionDescriptor)                                          \
  X(cudnnDestroyConvolutionDescriptor)                                         \
  X(cudnnSetConvolution2dDescriptor)                                           \
  X(cudnnSetConvolutionMathType)                                               \
  X(cudnnSetConvolutionGroupCount)                                             \
  X(cudnnGetConvolution2dForwardOutputDim)                                     \
  X(cudnnGetConvolutionForwardAlgorithmMaxCount)                               \
  X(cudnnGetConvolutionForwardAlgorithm_v7)                                    \
  X(cudnnConvolutionForward)                                                   \
  X(cudnnGetConvolutionBackwardDataAlgorithmMaxCount)                          \
  X(cudnnGetConvolutionBackwardDataAlgorithm_v7)                               \
  X(cudnnConvolutionBackwardData)                                              \
  X(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount)                        \
  X(cudnnGetConvolutionBackwardFilterAlgorithm_v7)                             \
  X(cudnnConvolutionBackwardFilter)

#define TCC_LIB_POINTER(name) decltype(&::name) name = nullptr;
struct CublasLtApi {
  TCC_CUBLASLT_FUNCTIONS(TCC_LIB_POINTER)
  std::string path;
};
struct CudnnApi {
  TCC_CUDNN_FUNCTIONS(TCC_LIB_POINTER)
  std::string path;
};
#undef TCC_LIB_POINTER

#define TCC_LIB_RESOLVE(name)                                                  \
  api->name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name));       \
  if (!api->name)                                                              \
    fail(TCC_ERROR_UNSUPPORTED, api->path + " has no " #name);

const CublasLtApi &cublasLt() {
  static std::mutex mutex;
  static CublasLtApi *loaded = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (loaded)
    return *loaded;
  auto api = std::make_unique<CublasLtApi>();
  void *handle = openLibrary({"libcublasLt.so.13", "libcublasLt.so.12"}, "cuBLASLt",
                             RTLD_NOW | RTLD_LOCAL, &api->path);
  TCC_CUBLASLT_FUNCTIONS(TCC_LIB_RESOLVE)
  loaded = api.release(); // the library stays loaded for the process
  return *loaded;
}

const CudnnApi &cudnn() {
  static std::mutex mutex;
  static CudnnApi *loaded = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (loaded)
    return *loaded;
  auto api = std::make_unique<CudnnApi>();
  // cuDNN 9's libcudnn.so.9 is a shim that loads its sub-libraries
  // (libcudnn_cnn, ...) by name when first needed: load it globally and,
  // when found in a folder, its sub-libraries from that folder, so that the
  // shim finds them without LD_LIBRARY_PATH.
  void *handle = openLibrary({"libcudnn.so.9"}, "cuDNN 9", RTLD_NOW | RTLD_GLOBAL, &api->path);
  if (size_t slash = api->path.rfind('/'); slash != std::string::npos)
    for (const char *sub : {"libcudnn_graph.so.9", "libcudnn_ops.so.9", "libcudnn_cnn.so.9"})
      dlopen((api->path.substr(0, slash + 1) + sub).c_str(), RTLD_NOW | RTLD_GLOBAL);
  TCC_CUDNN_FUNCTIONS(TCC_LIB_RESOLVE)
  if (api->cudnnGetVersion() < 90000)
    fail(TCC_ERROR_UNSUPPORTED, api->path + " is cuDNN " + std::to_string(api->cudnnGetVersion()) +
                                    "; tcc needs cuDNN 9");
  loaded = api.release();
  return *loaded;
}

#undef TCC_LIB_RESOLVE

std::string ltStatus(cublasStatus_t s) {
  const CublasLtApi &lt = cublasLt();
  return std::string(lt.cublasLtGetStatusName(s)) + " (" + lt.cublasLtGetStatusString(s) + ")";
}

/// The first of PERF (cuDNN's algorithms for one convolution direction,
/// sorted by expected speed) that works, fits WORKSPACE_LIMIT, does not use
/// tensor cores unless TF32 and, with DETERMINISTIC, gives the same bits
/// every run (the gradients' atomics-based algorithms do not); null if none.
/// TOO_LARGE: the first one passed over only for its workspace.
template <typename Perf>
const Perf *chooseAlgorithm(const std::vector<Perf> &perf, int returned, size_t workspaceLimit,
                            bool tf32, bool deterministic, const Perf **tooLarge) {
  *tooLarge = nullptr;
  for (int k = 0; k < returned; ++k) {
    const Perf &a = perf[size_t(k)];
    if (a.status != CUDNN_STATUS_SUCCESS || !(tf32 || a.mathType == CUDNN_FMA_MATH) ||
        (deterministic && a.determinism != CUDNN_DETERMINISTIC))
      continue;
    if (a.memory <= workspaceLimit)
      return &a;
    if (!*tooLarge)
      *tooLarge = &a;
  }
  return nullptr;
}

/// abi.h's name of a library-call kind.
const char *kindName(int32_t kind) {
  switch (kind) {
  case TCC_LIBRARY_CALL_MATMUL:
    return "MATMUL";
  case TCC_LIBRARY_CALL_CONV2D_BACKWARD_DATA:
    return "CONV2D_BACKWARD_DATA";
  case TCC_LIBRARY_CALL_CONV2D_BACKWARD_WEIGHTS:
    return "CONV2D_BACKWARD_WEIGHTS";
  default:
    return "CONV2D";
  }
}

/// The largest power of two, up to 256, that divides BYTES (0 counts as 256).
uint32_t alignmentOf(uint64_t bytes) {
  uint32_t a = 256;
  while (a > 4 && bytes % a != 0)
    a /= 2;
  return a;
}

} // namespace

struct LibraryCalls::Call {
  int32_t kind = 0;
  std::string name; ///< "library call #3 (MATMUL 1x37x19x53)"
  std::string implementation;
  float alpha = 1.0f, beta = 0.0f;
  size_t workspaceBytes = 0;
  // MATMUL
  bool bias = false, residual = false; ///< the epilogue's extra operands
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t layoutA = nullptr, layoutB = nullptr, layoutC = nullptr;
  cublasLtMatmulAlgo_t algo{};
  // CONV2D and its gradients (the descriptors are the forward convolution's)
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t fwd = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  cudnnConvolutionBwdDataAlgo_t bwdData = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
  cudnnConvolutionBwdFilterAlgo_t bwdFilter = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1;
};

namespace {

/// The group count of a convolution (1 for a matmul).
int convGroups(const tcc_abi_library_call &call) {
  return call.kind != TCC_LIBRARY_CALL_MATMUL && call.num_params > 18 ? int(call.params[18]) : 1;
}

/// "library call #3 (MATMUL 1x37x19x53 bf16 +bias)": call INDEX, its kind,
/// dimensions, types, math and epilogue.
std::string callName(const tcc_abi_library_call &call, int32_t index) {
  const int64_t *p = call.params;
  bool matmul = call.kind == TCC_LIBRARY_CALL_MATMUL;
  int64_t epilogue = matmul ? matmulEpilogue(call) : 0;
  std::string dims;
  int np = matmul ? 4 : 9;
  for (int k = 0; k < np; ++k)
    dims += (k ? "x" : "") + std::to_string(p[k]);
  if (call.dtype != TCC_DTYPE_F32)
    dims += std::string(" ") + dtypeName(call.dtype);
  int32_t outDtype = libraryCallOutputDtype(call);
  if (outDtype != call.dtype)
    dims += std::string(" -> ") + dtypeName(outDtype);
  if (libraryCallMath(call) == TCC_LIBRARY_MATH_TF32)
    dims += " tf32";
  dims += std::string(epilogue & TCC_MATMUL_EPILOGUE_BIAS ? " +bias" : "") +
          (epilogue & TCC_MATMUL_EPILOGUE_RESIDUAL ? " +residual" : "") +
          (epilogue & TCC_MATMUL_EPILOGUE_RELU ? " relu" : "");
  int groups = convGroups(call);
  if (groups > 1)
    dims += " groups " + std::to_string(groups);
  return "library call #" + std::to_string(index) + " (" + kindName(call.kind) + " " + dims + ")";
}

/// The operands' CUDA type; refuses what the libraries do not take.
cudaDataType_t operandType(const tcc_abi_library_call &call, const std::string &where) {
  bool matmul = call.kind == TCC_LIBRARY_CALL_MATMUL;
  if (call.dtype == TCC_DTYPE_BF16 && matmul)
    return CUDA_R_16BF;
  if (call.dtype == TCC_DTYPE_F16 && matmul)
    return CUDA_R_16F;
  if (call.dtype != TCC_DTYPE_F32)
    fail(TCC_ERROR_UNSUPPORTED, where + ": dtype " + dtypeName(call.dtype) +
                                    " is not supported (cuBLASLt matmuls: f32, bf16, f16; "
                                    "cuDNN convolutions: f32)");
  return CUDA_R_32F;
}

/// Fails for WHERE unless S is success: FN failed.
void checkLt(cublasStatus_t s, const std::string &where, const char *fn) {
  if (s != CUBLAS_STATUS_SUCCESS)
    fail(TCC_ERROR_UNSUPPORTED, where + ": " + fn + " failed: " + ltStatus(s));
}

void checkDnn(cudnnStatus_t s, const std::string &where, const char *fn) {
  if (s != CUDNN_STATUS_SUCCESS)
    fail(TCC_ERROR_UNSUPPORTED, where + ": " + fn + " failed: " + cudnn().cudnnGetErrorString(s));
}

/// C's matmul descriptor: fp32 sums (TF32 with FASTTF32), the swapped
/// operands' transposes, the epilogue and, with a bias, its type OUTTYPE.
void createMatmulDesc(LibraryCalls::Call &c, bool fastTf32, bool transA, bool transB, bool relu,
                      cudaDataType_t outType, const std::string &where) {
  const CublasLtApi &lt = cublasLt();
  checkLt(lt.cublasLtMatmulDescCreate(&c.op,
                                      fastTf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
                                      CUDA_R_32F),
          where, "cublasLtMatmulDescCreate");
  // Column-major view: C^T (N x M) = op(B)^T (N x K) * op(A)^T (K x M).
  cublasOperation_t opFirst = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opSecond = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  checkLt(lt.cublasLtMatmulDescSetAttribute(c.op, CUBLASLT_MATMUL_DESC_TRANSA, &opFirst,
                                            sizeof opFirst),
          where, "cublasLtMatmulDescSetAttribute(TRANSA)");
  checkLt(lt.cublasLtMatmulDescSetAttribute(c.op, CUBLASLT_MATMUL_DESC_TRANSB, &opSecond,
                                            sizeof opSecond),
          where, "cublasLtMatmulDescSetAttribute(TRANSB)");
  cublasLtEpilogue_t mode = c.bias ? (relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS)
                                   : (relu ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT);
  checkLt(lt.cublasLtMatmulDescSetAttribute(c.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &mode, sizeof mode),
          where, "cublasLtMatmulDescSetAttribute(EPILOGUE)");
  if (c.bias) {
    // The bias is of C's type (abi.h). Its address is set per run; until
    // then a stand-in tells the heuristic the alignment to expect (state
    // and arena offsets are multiples of 64 bytes).
    int32_t biasType = outType;
    const void *standIn = reinterpret_cast<const void *>(uintptr_t(64));
    checkLt(lt.cublasLtMatmulDescSetAttribute(c.op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &biasType,
                                              sizeof biasType),
            where, "cublasLtMatmulDescSetAttribute(BIAS_DATA_TYPE)");
    checkLt(lt.cublasLtMatmulDescSetAttribute(c.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &standIn,
                                              sizeof standIn),
            where, "cublasLtMatmulDescSetAttribute(BIAS_POINTER)");
  }
}

/// C's three matrix layouts in the column-major view, batched BATCH times;
/// returns the alignment every operand keeps.
uint32_t createMatmulLayouts(LibraryCalls::Call &c, const int64_t *p, cudaDataType_t type,
                             cudaDataType_t outType, const std::string &where) {
  const CublasLtApi &lt = cublasLt();
  int64_t batch = p[0], M = p[1], N = p[2], K = p[3];
  bool transA = p[4] != 0, transB = p[5] != 0;
  uint32_t align = 64; // arena offsets are multiples of 64
  auto layout = [&](cublasLtMatrixLayout_t *l, int64_t rows, int64_t cols, int64_t ld,
                    cudaDataType_t elementType) {
    uint64_t elementBytes = elementType == CUDA_R_32F ? 4 : 2;
    checkLt(lt.cublasLtMatrixLayoutCreate(l, elementType, uint64_t(rows), uint64_t(cols), ld),
            where, "cublasLtMatrixLayoutCreate");
    if (batch > 1) {
      int32_t b = int32_t(batch);
      int64_t stride = rows * cols;
      checkLt(lt.cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &b,
                                                  sizeof b),
              where, "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)");
      checkLt(lt.cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                  &stride, sizeof stride),
              where, "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)");
      align = std::min(align, alignmentOf(uint64_t(stride) * elementBytes));
    }
  };
  // B first: cuBLASLt's "A" is op(B)^T.
  if (transB)
    layout(&c.layoutA, K, N, K, type);
  else
    layout(&c.layoutA, N, K, N, type);
  if (transA)
    layout(&c.layoutB, M, K, M, type);
  else
    layout(&c.layoutB, K, M, K, type);
  layout(&c.layoutC, N, M, N, outType);
  return align;
}

/// cuBLASLt's first choice of algorithm for C on HANDLE, within
/// WORKSPACELIMIT bytes and for operands aligned to ALIGN bytes.
cublasLtMatmulHeuristicResult_t matmulHeuristic(cublasLtHandle_t handle, LibraryCalls::Call &c,
                                                uint32_t align, size_t workspaceLimit,
                                                const std::string &where) {
  const CublasLtApi &lt = cublasLt();
  cublasLtMatmulPreference_t pref = nullptr;
  checkLt(lt.cublasLtMatmulPreferenceCreate(&pref), where, "cublasLtMatmulPreferenceCreate");
  uint64_t limit = workspaceLimit;
  cublasStatus_t s = lt.cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit, sizeof limit);
  for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    if (s == CUBLAS_STATUS_SUCCESS)
      s = lt.cublasLtMatmulPreferenceSetAttribute(pref, attr, &align, sizeof align);
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  if (s == CUBLAS_STATUS_SUCCESS)
    s = lt.cublasLtMatmulAlgoGetHeuristic(handle, c.op, c.layoutA, c.layoutB, c.layoutC,
                                          c.layoutC, pref, 1, &result, &found);
  lt.cublasLtMatmulPreferenceDestroy(pref);
  checkLt(s, where, "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0)
    fail(TCC_ERROR_UNSUPPORTED, where +
                                    ": cublasLtMatmulAlgoGetHeuristic found no algorithm "
                                    "within the library workspace (" +
                                    std::to_string(workspaceLimit) + " bytes)");
  return result;
}

/// C's forward convolution as cuDNN descriptors (X, W, the convolution, Y)
/// from the call's parameters P; refuses padding the legacy API cannot
/// express.
void createConvDescriptors(LibraryCalls::Call &c, const int64_t *p, int groups, bool tf32,
                           const std::string &where) {
  const CudnnApi &dnn = cudnn();
  int n = int(p[0]), ch = int(p[1]), h = int(p[2]), w = int(p[3]), f = int(p[4]);
  int kh = int(p[5]), kw = int(p[6]), oh = int(p[7]), ow = int(p[8]);
  int sh = int(p[9]), sw = int(p[10]), dh = int(p[11]), dw = int(p[12]);
  int pt = int(p[13]), pl = int(p[14]), pb = int(p[15]), pr = int(p[16]);
  checkDnn(dnn.cudnnCreateTensorDescriptor(&c.x), where, "cudnnCreateTensorDescriptor");
  checkDnn(dnn.cudnnSetTensor4dDescriptor(c.x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, ch, h, w),
           where, "cudnnSetTensor4dDescriptor(X)");
  checkDnn(dnn.cudnnCreateFilterDescriptor(&c.w), where, "cudnnCreateFilterDescriptor");
  checkDnn(dnn.cudnnSetFilter4dDescriptor(c.w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, f,
                                          ch / groups, kh, kw),
           where, "cudnnSetFilter4dDescriptor(W)");
  checkDnn(dnn.cudnnCreateConvolutionDescriptor(&c.conv), where,
           "cudnnCreateConvolutionDescriptor");
  checkDnn(dnn.cudnnSetConvolution2dDescriptor(c.conv, pt, pl, sh, sw, dh, dw,
                                               CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
           where, "cudnnSetConvolution2dDescriptor");
  checkDnn(dnn.cudnnSetConvolutionMathType(c.conv, tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH),
           where, "cudnnSetConvolutionMathType");
  checkDnn(dnn.cudnnSetConvolutionGroupCount(c.conv, groups), where,
           "cudnnSetConvolutionGroupCount");
  // The legacy API pads symmetrically (top and left on both sides). Other
  // bottom / right padding gives the same result exactly when it gives the
  // same output size: padding only decides how many windows there are.
  int on = 0, of = 0, ooh = 0, oow = 0;
  checkDnn(dnn.cudnnGetConvolution2dForwardOutputDim(c.conv, c.x, c.w, &on, &of, &ooh, &oow),
           where, "cudnnGetConvolution2dForwardOutputDim");
  if (ooh != oh || oow != ow)
    fail(TCC_ERROR_UNSUPPORTED,
         where + ": padding top/left/bottom/right " + std::to_string(pt) + "/" +
             std::to_string(pl) + "/" + std::to_string(pb) + "/" + std::to_string(pr) +
             ((pt != pb || pl != pr) ? " is asymmetric, which cudnnSetConvolution2dDescriptor "
                                       "cannot express (output "
                                     : " gives output ") +
             std::to_string(ooh) + "x" + std::to_string(oow) + ", the artifact expects " +
             std::to_string(oh) + "x" + std::to_string(ow) + ")");
  checkDnn(dnn.cudnnCreateTensorDescriptor(&c.y), where, "cudnnCreateTensorDescriptor");
  checkDnn(dnn.cudnnSetTensor4dDescriptor(c.y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, f, oh, ow),
           where, "cudnnSetTensor4dDescriptor(Y)");
}

/// The algorithm of a convolution's direction: its index, math type and
/// workspace, and the faster one passed over for its workspace.
struct ConvAlgorithm {
  int algo = -1;
  cudnnMathType_t math = CUDNN_FMA_MATH;
  size_t memory = 0;
  std::string refusal; ///< "; algo 7 would need 123"
};

/// chooseAlgorithm's pick of PERF, or a failure naming FN and why none fits.
template <typename Perf>
ConvAlgorithm pickConvAlgorithm(const std::vector<Perf> &perf, int returned, size_t workspaceLimit,
                                bool tf32, bool deterministic, const char *fn,
                                const std::string &where) {
  const Perf *tooLarge = nullptr;
  const Perf *chosen =
      chooseAlgorithm(perf, returned, workspaceLimit, tf32, deterministic, &tooLarge);
  if (chosen) {
    ConvAlgorithm a;
    a.algo = int(chosen->algo), a.math = chosen->mathType, a.memory = chosen->memory;
    if (tooLarge && tooLarge < chosen)
      a.refusal = "; algo " + std::to_string(int(tooLarge->algo)) + " would need " +
                  std::to_string(tooLarge->memory);
    return a;
  }
  fail(TCC_ERROR_UNSUPPORTED,
       where + ": " + fn + " offers no algorithm" +
           (tf32 ? "" : " without tensor cores (TCC_CUDA_TF32=1 allows TF32)") +
           (deterministic ? ", deterministic," : "") + " that fits the " +
           std::to_string(workspaceLimit) + "-byte library workspace the artifact reserves" +
           (tooLarge ? " (algo " + std::to_string(int(tooLarge->algo)) + " needs " +
                           std::to_string(tooLarge->memory) + " bytes)"
                     : std::string()));
}

/// The algorithm of C's direction (set in C), asked of cuDNN on HANDLE. The
/// gradients' algorithms must be deterministic (a training run gives the
/// same bits every time).
ConvAlgorithm chooseConvAlgorithm(cudnnHandle_t handle, LibraryCalls::Call &c,
                                  size_t workspaceLimit, bool tf32, const std::string &where) {
  const CudnnApi &dnn = cudnn();
  int maxCount = 0, returned = 0;
  ConvAlgorithm a;
  if (c.kind == TCC_LIBRARY_CALL_CONV2D_BACKWARD_DATA) {
    checkDnn(dnn.cudnnGetConvolutionBackwardDataAlgorithmMaxCount(handle, &maxCount), where,
             "cudnnGetConvolutionBackwardDataAlgorithmMaxCount");
    std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(size_t(std::max(maxCount, 1)));
    checkDnn(dnn.cudnnGetConvolutionBackwardDataAlgorithm_v7(
                 handle, c.w, c.y, c.conv, c.x, int(perf.size()), &returned, perf.data()),
             where, "cudnnGetConvolutionBackwardDataAlgorithm_v7");
    a = pickConvAlgorithm(perf, returned, workspaceLimit, tf32, true,
                          "cudnnGetConvolutionBackwardDataAlgorithm_v7", where);
    c.bwdData = cudnnConvolutionBwdDataAlgo_t(a.algo);
  } else if (c.kind == TCC_LIBRARY_CALL_CONV2D_BACKWARD_WEIGHTS) {
    checkDnn(dnn.cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(handle, &maxCount), where,
             "cudnnGetConvolutionBackwardFilterAlgorithmMaxCount");
    std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(size_t(std::max(maxCount, 1)));
    checkDnn(dnn.cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                 handle, c.x, c.y, c.conv, c.w, int(perf.size()), &returned, perf.data()),
             where, "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
    a = pickConvAlgorithm(perf, returned, workspaceLimit, tf32, true,
                          "cudnnGetConvolutionBackwardFilterAlgorithm_v7", where);
    c.bwdFilter = cudnnConvolutionBwdFilterAlgo_t(a.algo);
  } else {
    checkDnn(dnn.cudnnGetConvolutionForwardAlgorithmMaxCount(handle, &maxCount), where,
             "cudnnGetConvolutionForwardAlgorithmMaxCount");
    std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(size_t(std::max(maxCount, 1)));
    checkDnn(dnn.cudnnGetConvolutionForwardAlgorithm_v7(handle, c.x, c.w, c.conv, c.y,
                                                        int(perf.size()), &returned, perf.data()),
             where, "cudnnGetConvolutionForwardAlgorithm_v7");
    a = pickConvAlgorithm(perf, returned, workspaceLimit, tf32, false,
                          "cudnnGetConvolutionForwardAlgorithm_v7", where);
    c.fwd = cudnnConvolutionFwdAlgo_t(a.algo);
  }
  return a;
}

/// Plans C, a matmul, on cuBLASLt: its descriptor, layouts and algorithm
/// for operands of TYPE; creates the session's HANDLE first if need be.
void planMatmul(void *&handle, LibraryCalls::Call &c, const tcc_abi_library_call &call,
                cudaDataType_t type, bool tf32, size_t workspaceLimit, const std::string &where) {
  const CublasLtApi &lt = cublasLt();
  if (!handle) {
    cublasLtHandle_t h = nullptr;
    checkLt(lt.cublasLtCreate(&h), where, "cublasLtCreate");
    handle = h;
  }
  const int64_t *p = call.params;
  cudaDataType_t outType = libraryCallOutputDtype(call) == TCC_DTYPE_F32 ? CUDA_R_32F : type;
  // fp32 sums and scale factors for every dtype; TF32 only for f32
  // operands and only when asked for.
  bool fastTf32 = tf32 && type == CUDA_R_32F;
  bool relu = matmulEpilogue(call) & TCC_MATMUL_EPILOGUE_RELU;
  createMatmulDesc(c, fastTf32, p[4] != 0, p[5] != 0, relu, outType, where);
  uint32_t align = createMatmulLayouts(c, p, type, outType, where);
  cublasLtMatmulHeuristicResult_t result = matmulHeuristic(
      static_cast<cublasLtHandle_t>(handle), c, align, workspaceLimit, where);
  c.algo = result.algo;
  c.workspaceBytes = result.workspaceSize;
  c.implementation = "cublasLt (" +
                     std::string(fastTf32                       ? "TF32"
                                 : call.dtype == TCC_DTYPE_F32  ? "FP32"
                                 : call.dtype == TCC_DTYPE_BF16 ? "BF16, FP32 sums"
                                                                : "FP16, FP32 sums") +
                     (outType != type ? ", FP32 output" : "") + ", workspace " +
                     std::to_string(result.workspaceSize) + ")";
}

/// Plans C, a convolution or one of its gradients, on cuDNN; creates the
/// session's HANDLE on STREAM first if need be.
void planConv2d(void *&handle, CUstream stream, LibraryCalls::Call &c,
                const tcc_abi_library_call &call, bool tf32, size_t workspaceLimit,
                const std::string &where) {
  const CudnnApi &dnn = cudnn();
  if (!handle) {
    cudnnHandle_t h = nullptr;
    checkDnn(dnn.cudnnCreate(&h), where, "cudnnCreate");
    handle = h;
    checkDnn(dnn.cudnnSetStream(h, stream), where, "cudnnSetStream");
  }
  createConvDescriptors(c, call.params, convGroups(call), tf32, where);
  ConvAlgorithm a = chooseConvAlgorithm(static_cast<cudnnHandle_t>(handle), c, workspaceLimit,
                                        tf32, where);
  c.workspaceBytes = a.memory;
  checkDnn(dnn.cudnnSetConvolutionMathType(c.conv, a.math), where, "cudnnSetConvolutionMathType");
  c.implementation = "cudnn (algo " + std::to_string(a.algo) + ", workspace " +
                     std::to_string(a.memory) + ")" + a.refusal;
}

} // namespace

LibraryCalls::LibraryCalls(const tcc_abi_library_call *calls, int32_t count, size_t workspaceLimit,
                           CUstream stream, const std::string &what)
    : stream_(stream), what_(what) {
  bool tf32Env = tf32Enabled();
  for (int32_t i = 0; i < count; ++i) {
    const tcc_abi_library_call &call = calls[i];
    // TF32 when the artifact asks for it (tcc --precision=tf32) or the
    // environment does.
    bool tf32 = tf32Env || libraryCallMath(call) == TCC_LIBRARY_MATH_TF32;
    const int64_t *p = call.params;
    auto c = std::make_unique<Call>();
    bool matmul = call.kind == TCC_LIBRARY_CALL_MATMUL;
    int64_t epilogue = matmul ? matmulEpilogue(call) : 0;
    c->kind = call.kind;
    c->bias = epilogue & TCC_MATMUL_EPILOGUE_BIAS;
    c->residual = epilogue & TCC_MATMUL_EPILOGUE_RESIDUAL;
    // The residual is cuBLASLt's C, added like an accumulated output.
    c->beta = matmul ? float(p[6] || c->residual) : float(p[17]);
    c->name = callName(call, i);
    std::string where = what + ": " + c->name;
    Call &cr = *c;
    calls_.push_back(std::move(c)); // owned from here: destroyed on failure
    cudaDataType_t type = operandType(call, where);
    if (matmul && matmulInterleaved(call) != 0)
      fail(TCC_ERROR_UNSUPPORTED, where + ": operands interleaved across heads are a CPU "
                                          "artifact's layout (cuBLASLt takes one batch stride)");
    if (matmul)
      planMatmul(cublasLt_, cr, call, type, tf32, workspaceLimit, where);
    else
      planConv2d(cudnn_, stream, cr, call, tf32, workspaceLimit, where);
  }
}

LibraryCalls::~LibraryCalls() {
  for (auto &c : calls_) {
    if (c->kind == TCC_LIBRARY_CALL_MATMUL) {
      const CublasLtApi &lt = cublasLt();
      if (c->layoutA)
        lt.cublasLtMatrixLayoutDestroy(c->layoutA);
      if (c->layoutB)
        lt.cublasLtMatrixLayoutDestroy(c->layoutB);
      if (c->layoutC)
        lt.cublasLtMatrixLayoutDestroy(c->layoutC);
      if (c->op)
        lt.cublasLtMatmulDescDestroy(c->op);
    } else if (c->x || c->w || c->conv || c->y) {
      const CudnnApi &dnn = cudnn();
      if (c->x)
        dnn.cudnnDestroyTensorDescriptor(c->x);
      if (c->y)
        dnn.cudnnDestroyTensorDescriptor(c->y);
      if (c->w)
        dnn.cudnnDestroyFilterDescriptor(c->w);
      if (c->conv)
        dnn.cudnnDestroyConvolutionDescriptor(c->conv);
    }
  }
  if (cublasLt_)
    cublasLt().cublasLtDestroy(static_cast<cublasLtHandle_t>(cublasLt_));
  if (cudnn_)
    cudnn().cudnnDestroy(static_cast<cudnnHandle_t>(cudnn_));
}

std::string LibraryCalls::run(int32_t index, void *const *operands) {
  if (index < 0 || size_t(index) >= calls_.size())
    return what_ + ": generated code asked for library call #" + std::to_string(index) + " of " +
           std::to_string(calls_.size());
  Call &c = *calls_[size_t(index)];
  void *workspace = reinterpret_cast<void *>(workspace_);
  if (c.kind == TCC_LIBRARY_CALL_MATMUL) {
    const CublasLtApi &lt = cublasLt();
    // Operands {A, B, C[, bias][, D]}: the residual D is cuBLASLt's C input
    // (beta 1); without one, C is read only when accumulating.
    void *output = operands[2];
    const void *input = c.residual ? operands[c.bias ? 4 : 3] : output;
    if (c.bias) {
      const void *bias = operands[3];
      cublasStatus_t s = lt.cublasLtMatmulDescSetAttribute(c.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                           &bias, sizeof bias);
      if (s != CUBLAS_STATUS_SUCCESS)
        return what_ + ": " + c.name + ": setting the bias pointer failed: " + ltStatus(s);
    }
    // Swapped operands: cuBLASLt's A is our B (see the file comment).
    cublasStatus_t s = lt.cublasLtMatmul(
        static_cast<cublasLtHandle_t>(cublasLt_), c.op, &c.alpha, operands[1], c.layoutA,
        operands[0], c.layoutB, &c.beta, input, c.layoutC, output, c.layoutC, &c.algo, workspace,
        c.workspaceBytes, stream_);
    if (s != CUBLAS_STATUS_SUCCESS)
      return what_ + ": " + c.name + ": cublasLtMatmul failed: " + ltStatus(s);
    return "";
  }
  // Operands {X, W, Y}, {dY, W, dX} or {X, dY, dW} (abi.h).
  const CudnnApi &dnn = cudnn();
  auto handle = static_cast<cudnnHandle_t>(cudnn_);
  cudnnStatus_t s;
  const char *fn;
  if (c.kind == TCC_LIBRARY_CALL_CONV2D_BACKWARD_DATA) {
    fn = "cudnnConvolutionBackwardData";
    s = dnn.cudnnConvolutionBackwardData(handle, &c.alpha, c.w, operands[1], c.y, operands[0],
                                         c.conv, c.bwdData, workspace, c.workspaceBytes, &c.beta,
                                         c.x, operands[2]);
  } else if (c.kind == TCC_LIBRARY_CALL_CONV2D_BACKWARD_WEIGHTS) {
    fn = "cudnnConvolutionBackwardFilter";
    s = dnn.cudnnConvolutionBackwardFilter(handle, &c.alpha, c.x, operands[0], c.y, operands[1],
                                           c.conv, c.bwdFilter, workspace, c.workspaceBytes,
                                           &c.beta, c.w, operands[2]);
  } else {
    fn = "cudnnConvolutionForward";
    s = dnn.cudnnConvolutionForward(handle, &c.alpha, c.x, operands[0], c.w, operands[1], c.conv,
                                    c.fwd, workspace, c.workspaceBytes, &c.beta, c.y, operands[2]);
  }
  if (s != CUDNN_STATUS_SUCCESS)
    return what_ + ": " + c.name + ": " + fn + " failed: " + dnn.cudnnGetErrorString(s);
  return "";
}

std::vector<std::string> LibraryCalls::implementations() const {
  std::vector<std::string> out;
  for (const auto &c : calls_)
    out.push_back(c->implementation);
  return out;
}

const std::string &LibraryCalls::name(int32_t index) const { return calls_[size_t(index)]->name; }

} // namespace tcc::rt::cuda
