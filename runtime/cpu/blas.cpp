//===- blas.cpp - matmul library calls on a CBLAS -------------------------===//
//
// Only cblas_sgemm (and OpenBLAS's thread-count calls), resolved with dlsym:
// the runtime has no link-time dependency on a BLAS. A batched call is a
// loop of sgemm calls, across the threads (OpenBLAS 0.3.21 has no
// cblas_sgemm_batch, and the matrices that come here are small).
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/blas.h"

#include "runtime/cpu/cpu_features.h"
#include "runtime/cpu/half.h"
#include "runtime/cpu/openmp_binding.h"
#include "runtime/cpu/parallel.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <iterator>
#include <memory>
#include <mutex>
#include <vector>

namespace tcc::rt {

namespace {

/// A batched product whose matrices have at most this many multiply-adds
/// (M N K; 16 x 16 x 16) goes to BLAS: oneDNN 2.6's batched matmul pays a
/// cost per matrix that dwarfs such products (2-4x slower than a loop of
/// sgemm calls with its AVX2 kernels; 0.8-1.35x with its AVX-512 ones). Larger matrices, and 2-D products of any size, are as fast or
/// faster on oneDNN (docs/cpu-gemm.md).
constexpr int64_t kBlasBatchedVolume = 16 * 16 * 16;

/// A weight gradient A^T B of batch 1 with at least kBlasTransposedRows
/// rows (K: the tokens of a dense layer) and a result of at least
/// kBlasTransposedOutput elements (M N: the weight) goes to BLAS: oneDNN
/// 2.6 runs a transposed left operand slowly, even after the runtime's copy
/// into plain layout (1.0-3.1x slower on gpt4's and GPT-2-small's weight
/// gradients); on smaller weights it is the faster one (docs/cpu-gemm.md).
constexpr int64_t kBlasTransposedRows = 512;
constexpr int64_t kBlasTransposedOutput = 256 * 256;

/// MKL where scripts/setup.sh installs it (its GNU OpenMP layer, bound to
/// the process's libomp: see load()); else Debian's OpenMP build of OpenBLAS
/// (libopenblas0-openmp), which runs on the process's one OpenMP pool. The
/// generic soname comes last; it may be a pthreads build, whose pool is
/// then sized per call.
const char *const kDefaultLibraries[] = {
    "/opt/tcc/mkl/lib/libmkl_rt.so.3",
    "/usr/lib/x86_64-linux-gnu/openblas-openmp/libopenblas.so.0",
    "libopenblas.so.0",
};

/// Whether MKL runs a product faster than oneDNN 2.6 (docs/cpu-gemm.md).
/// On Intel CPUs: every 2-D product without an epilogue, whatever its
/// transposes (1.0-1.4x on the GPTs' products, the weight gradients A^T B
/// the most); oneDNN keeps the products with an epilogue (its post-ops run
/// inside the product, ours in a pass after it on one thread). On other
/// CPUs MKL runs its AVX2 kernels while oneDNN runs AVX-512 ones where the
/// CPU has them: on an AMD Zen 4 MKL took 0.93-1.47x oneDNN's time on gpt4's
/// 2-D products (more on all but one; 1.23x per step), so none goes to it. Batched products stay on
/// oneDNN everywhere except batches of tiny matrices on a CPU without
/// AVX-512, where oneDNN's batched kernel pays 2-2.5x (with AVX-512 MKL's
/// is the slower one: 0.4-0.7x on Intel, 0.68x on the Zen 4).
bool mklPrefers(int64_t batch, int64_t m, int64_t n, int64_t k, int64_t epilogue) {
  if (epilogue)
    return false;
  if (batch > 1)
    return !hostCpuFeatures().count("avx512f") &&
           double(m) * double(n) * double(k) <= double(kBlasBatchedVolume);
  return hostCpuVendor() == "GenuineIntel";
}

/// MKL's service constants (mkl_service.h).
constexpr int kMklThreadingGnu = 3, kMklInterfaceLp64 = 0;

/// MKL's packed-matrix constants (mkl_cblas.h: CblasBMatrix, CblasPacked).
constexpr int kMklBMatrix = 162, kMklPacked = 151;

/// CBLAS's enums (cblas.h), fixed by the standard.
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;

/// OpenBLAS's openblas_get_parallel(): 1 for a pthreads build.
constexpr int kOpenBlasPthreads = 1;

/// MKL's core and GNU OpenMP layer, beside the libmkl_rt of HANDLE (the
/// same soname version), or {} when HANDLE's file is not named libmkl_rt*.
std::vector<std::string> mklGnuLayer(void *handle) {
  Dl_info info;
  void *rt = dlsym(handle, "MKL_Set_Threading_Layer");
  if (!rt || !dladdr(rt, &info) || !info.dli_fname)
    return {};
  std::string path = info.dli_fname;
  size_t slash = path.rfind('/'), name = slash == std::string::npos ? 0 : slash + 1;
  const std::string prefix = "libmkl_rt";
  if (path.compare(name, prefix.size(), prefix) != 0)
    return {};
  std::string dir = path.substr(0, name), suffix = path.substr(name + prefix.size());
  return {dir + "libmkl_core" + suffix, dir + "libmkl_gnu_thread" + suffix};
}

/// Loads FILE; null (and WHY set) when it cannot be used.
Blas *load(const std::string &file, std::string &why) {
  // An OpenMP BLAS built for GNU OpenMP: its GOMP_* references must bind to
  // our libomp, as oneDNN's do; one that numpy loaded before (bound to
  // libgomp then) is loaded again from a private copy. MKL's dispatcher
  // calls no OpenMP itself; its layer is checked below.
  std::vector<void *> handles = loadOnOpenMP({file}, OpenMPLoad{}, why);
  if (handles.empty())
    return nullptr;
  void *handle = handles[0];
  auto blas = std::make_unique<Blas>();
  blas->file = file;
  blas->sgemm = reinterpret_cast<decltype(blas->sgemm)>(dlsym(handle, "cblas_sgemm"));
  if (!blas->sgemm) {
    why = "it has no cblas_sgemm";
    return nullptr;
  }
  if (auto threading = reinterpret_cast<int (*)(int)>(dlsym(handle, "MKL_Set_Threading_Layer"))) {
    // MKL: 32-bit integers, and its GNU OpenMP layer, whose GOMP_* and
    // omp_* references bind to the process's libomp, unless the user chose
    // a layer. libmkl_rt opens the layer at the first product, after
    // making the global scope's libgomp its own: where that libgomp owns
    // GOMP_* (torch loaded it), the layer and the core it calls are loaded
    // here first, bound to libomp, and libmkl_rt finds them loaded. One
    // tiny product loads the layer now, so that the check below sees it.
    blas->mkl = true;
    if (auto interface =
            reinterpret_cast<int (*)(int)>(dlsym(handle, "MKL_Set_Interface_Layer")))
      interface(kMklInterfaceLp64);
    std::vector<std::string> gnu;
    if (!std::getenv("MKL_THREADING_LAYER")) {
      threading(kMklThreadingGnu);
      gnu = mklGnuLayer(handle);
      if (!gnu.empty() && !foreignGnuOpenMP().empty()) {
        OpenMPLoad lazy;
        lazy.lazy = true; // the layer calls what libmkl_rt loads later
        lazy.copyIfBound = false;
        if (loadOnOpenMP(gnu, lazy, why).empty()) {
          why = "its GNU OpenMP layer cannot be bound to tcc's libomp: " + why;
          return nullptr;
        }
      }
    }
    float one = 1.0f, out = 0.0f;
    blas->sgemm(kRowMajor, kNoTrans, kNoTrans, 1, 1, 1, 1.0f, &one, 1, &one, 1, 0.0f, &out, 1);
    if (out != 1.0f) {
      why = "its sgemm computed 1 x 1 as " + std::to_string(out);
      return nullptr;
    }
    // The GNU layer, whoever opened it, must call libomp; a layer the user
    // chose (MKL_THREADING_LAYER) binds through the global scope.
    std::string mismatch;
    void *layer = gnu.empty() ? nullptr : dlopen(gnu[1].c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (layer)
      mismatch = openMPMismatch(layer);
    else if (std::string foreign = foreignGnuOpenMP(); !foreign.empty())
      mismatch = "GOMP_parallel resolves to " + foreign;
    if (!mismatch.empty()) {
      why = "its OpenMP layer would run on another OpenMP runtime: " + mismatch;
      return nullptr; // not closed: its initialization may have started threads
    }
  }
  if (blas->mkl) {
    blas->sgemmPackGetSize = reinterpret_cast<decltype(blas->sgemmPackGetSize)>(
        dlsym(handle, "cblas_sgemm_pack_get_size"));
    blas->sgemmPack = reinterpret_cast<decltype(blas->sgemmPack)>(dlsym(handle, "cblas_sgemm_pack"));
    blas->sgemmCompute =
        reinterpret_cast<decltype(blas->sgemmCompute)>(dlsym(handle, "cblas_sgemm_compute"));
    if (!blas->sgemmPackGetSize || !blas->sgemmPack || !blas->sgemmCompute)
      blas->sgemmPackGetSize = nullptr, blas->sgemmPack = nullptr, blas->sgemmCompute = nullptr;
  }
  auto parallel = reinterpret_cast<int (*)()>(dlsym(handle, "openblas_get_parallel"));
  if (parallel && parallel() == kOpenBlasPthreads)
    blas->setThreads = reinterpret_cast<void (*)(int)>(dlsym(handle, "openblas_set_num_threads"));
  return blas.release(); // lives as long as the process, like the library
}

const Blas *loadOnce() {
  const char *env = std::getenv("TCC_BLAS_LIBRARY");
  std::string named = env ? env : "";
  if (named == "none")
    return nullptr;
  std::string why;
  if (!named.empty()) {
    // Asked for by name: say why it is not used rather than stay silent.
    if (Blas *blas = load(named, why))
      return blas;
    std::fprintf(stderr, "tcc: TCC_BLAS_LIBRARY=%s is not used (%s); matmuls run on oneDNN\n",
                 named.c_str(), why.c_str());
    return nullptr;
  }
  for (const char *file : kDefaultLibraries)
    if (Blas *blas = load(file, why))
      return blas;
  // No BLAS installed: every call on oneDNN, silently unless asked.
  if (blasVerbose())
    std::fprintf(stderr, "tcc: no BLAS (%s: %s); matmuls run on oneDNN\n",
                 kDefaultLibraries[std::size(kDefaultLibraries) - 1], why.c_str());
  return nullptr;
}

/// C = relu((C + bias) + D) over ROWS rows of N columns, as the epilogue
/// bits say (null BIAS / D: none). A NaN stays NaN through the relu, as in
/// oneDNN's and the generated code's, so non-finite checks still see it.
void applyEpilogue(float *c, const float *bias, const float *d, bool relu, int64_t rows,
                   int64_t n) {
  for (int64_t i = 0; i < rows; ++i) {
    float *row = c + i * n;
    const float *residual = d ? d + i * n : nullptr;
    for (int64_t j = 0; j < n; ++j) {
      float x = row[j];
      if (bias)
        x += bias[j];
      if (residual)
        x += residual[j];
      row[j] = relu && x < 0.0f ? 0.0f : x;
    }
  }
}

} // namespace

bool blasVerbose() {
  const char *env = std::getenv("TCC_BLAS_VERBOSE");
  return env && *env && std::strcmp(env, "0") != 0;
}

const Blas *blas() {
  static std::once_flag once;
  static const Blas *loaded = nullptr;
  std::call_once(once, [] { loaded = loadOnce(); });
  return loaded;
}

bool blasPrefers(const tcc_abi_library_call &call) {
  const int64_t *p = call.params;
  int64_t batch = p[0], m = p[1], n = p[2], k = p[3];
  bool transA = p[4];
  // CBLAS takes int sizes and leading dimensions.
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
    return false;
  const Blas *library = blas();
  if (!library)
    return false;
  if (library->mkl)
    return mklPrefers(batch, m, n, k, call.num_params > 7 ? p[7] : 0); // abi.h: p[7] epilogue
  if (batch > 1)
    return double(m) * double(n) * double(k) <= double(kBlasBatchedVolume);
  return transA && k >= kBlasTransposedRows && m * n >= kBlasTransposedOutput;
}

void blasMatmul(const Blas &blas, const int64_t *p, int64_t epilogue, void *const *operands) {
  const int64_t batch = p[0], m = p[1], n = p[2], k = p[3];
  const bool transA = p[4], transB = p[5], accumulate = p[6];
  const int64_t heads = p[7], interleaved = p[8];
  auto *a = static_cast<const float *>(operands[0]);
  auto *b = static_cast<const float *>(operands[1]);
  auto *c = static_cast<float *>(operands[2]);
  int next = 3;
  const float *bias =
      epilogue & TCC_MATMUL_EPILOGUE_BIAS ? static_cast<const float *>(operands[next++]) : nullptr;
  const float *d = epilogue & TCC_MATMUL_EPILOGUE_RESIDUAL
                       ? static_cast<const float *>(operands[next++])
                       : nullptr;
  const int threads = parallelThreads();
  if (blas.setThreads) {
    // A pthreads OpenBLAS has its own pool: size it like ours, once per
    // change (the setter is not free).
    static std::atomic<int> current{0};
    if (current.exchange(threads) != threads)
      blas.setThreads(threads);
  }
  // Row-major: A is M x K (K x M stored when transposed), B K x N (N x K).
  struct Product {
    const Blas *blas;
    const float *a, *b;
    float *c;
    int64_t m, n, k;
    bool transA, transB, accumulate;
    StoredMatrix opA, opB, opC;
    void operator()(int64_t s) const {
      blas->sgemm(kRowMajor, transA ? kTrans : kNoTrans, transB ? kTrans : kNoTrans, int(m),
                  int(n), int(k), 1.0f, a + opA.start(s), int(opA.ld()), b + opB.start(s),
                  int(opB.ld()), accumulate ? 1.0f : 0.0f, c + opC.start(s), int(opC.ld()));
    }
  };
  const bool interleavesA = interleaved & TCC_MATMUL_INTERLEAVED_A,
             interleavesB = interleaved & TCC_MATMUL_INTERLEAVED_B,
             interleavesC = interleaved & TCC_MATMUL_INTERLEAVED_C;
  Product product = {&blas, a, b, c, m, n, k, transA, transB, accumulate,
                     {transA ? k : m, transA ? m : k, interleavesA, heads},
                     {transB ? n : k, transB ? k : n, interleavesB, heads},
                     {m, n, interleavesC, heads}};
  if (batch > 1 && threads > 1 && !blas.setThreads) {
    // The matrices of a batch across the threads, one sgemm each (an OpenMP
    // OpenBLAS runs one thread inside a parallel region; a pthreads one
    // warns there, so it loops): each matrix is computed alone, so the
    // result does not depend on the thread count.
    parallelFor(
        0, batch, threads,
        [](void *context, int64_t s) { (*static_cast<const Product *>(context))(s); }, &product);
  } else {
    for (int64_t s = 0; s < batch; ++s)
      product(s);
  }
  if (!epilogue)
    return;
  // On the calling thread: epilogues come with forward dense layers
  // (trans_a = 0), which come here only when they are small.
  applyEpilogue(c, bias, d, epilogue & TCC_MATMUL_EPILOGUE_RELU, batch * m, n);
}

void widenRows(int32_t dtype, const uint16_t *from, int64_t ld, int64_t count, int64_t cols,
               float *to) {
  if (ld == cols)
    return widenOnThread(dtype, from, to, count * cols);
  for (int64_t i = 0; i < count; ++i)
    widenOnThread(dtype, from + i * ld, to + i * cols, cols);
}

void roundRows(int32_t dtype, const float *from, int64_t count, int64_t cols, uint16_t *to,
               int64_t ld) {
  if (ld == cols)
    return roundOnThread(dtype, from, to, count * cols);
  for (int64_t i = 0; i < count; ++i)
    roundOnThread(dtype, from + i * cols, to + i * ld, cols);
}

void epilogueRows(int32_t dtype, const float *from, int64_t ldf, int64_t count, int64_t n,
                  const void *bias, const void *d, int64_t ldd, bool relu, void *c,
                  int64_t ldc) {
  const bool wide = dtype == TCC_DTYPE_F32;
  // A row in chunks of CHUNK columns: the sums, then the bias and D widened.
  constexpr int64_t kChunk = 256;
  float x[kChunk], addend[kChunk];
  auto add = [&](const void *values, int64_t at, int64_t width) {
    const float *f = static_cast<const float *>(values) + at;
    if (!wide) {
      widenOnThread(dtype, static_cast<const uint16_t *>(values) + at, addend, width);
      f = addend;
    }
    for (int64_t j = 0; j < width; ++j)
      x[j] += f[j];
  };
  for (int64_t i = 0; i < count; ++i)
    for (int64_t j0 = 0; j0 < n; j0 += kChunk) {
      const int64_t width = std::min(kChunk, n - j0);
      std::memcpy(x, from + i * ldf + j0, size_t(width) * sizeof(float));
      if (bias)
        add(bias, j0, width);
      if (d)
        add(d, i * ldd + j0, width);
      if (relu)
        for (int64_t j = 0; j < width; ++j)
          x[j] = x[j] < 0.0f ? 0.0f : x[j]; // a NaN stays NaN (applyEpilogue)
      if (wide)
        std::memcpy(static_cast<float *>(c) + i * ldc + j0, x, size_t(width) * sizeof(float));
      else
        roundOnThread(dtype, x, static_cast<uint16_t *>(c) + i * ldc + j0, width);
    }
}

void widenPanelOfA(int32_t dtype, const uint16_t *a, int64_t ld, bool transA, int64_t first,
                   int64_t count, int64_t k, float *to, bool plain) {
  if (!transA)
    return widenRows(dtype, a + first * ld, ld, count, k, to);
  if (!plain) {
    for (int64_t i = 0; i < k; ++i)
      widenOnThread(dtype, a + i * ld + first, to + i * count, count);
    return;
  }
  // Blocks of 8 stored rows: widened into a tile, then written as 8
  // adjacent columns of each of the COUNT rows.
  constexpr int64_t kBlock = 8;
  float tile[kBlock * PanelLimits::kMaxRows];
  for (int64_t i0 = 0; i0 < k; i0 += kBlock) {
    const int64_t height = std::min(kBlock, k - i0);
    for (int64_t r = 0; r < height; ++r)
      widenOnThread(dtype, a + (i0 + r) * ld + first, tile + r * count, count);
    for (int64_t j = 0; j < count; ++j)
      for (int64_t r = 0; r < height; ++r)
        to[j * k + i0 + r] = tile[r * count + j];
  }
}

namespace {
/// A thread's f32 bytes per panel row: A's, and C's where C is 16-bit (an
/// f32 C takes the product).
size_t panelRowBytes(int64_t n, int64_t k, int32_t cDtype) {
  return size_t(k + (cDtype == TCC_DTYPE_F32 ? 0 : n)) * sizeof(float);
}
} // namespace

int64_t widenedPanelRows(int64_t batch, int64_t m, int64_t n, int64_t k, int32_t cDtype,
                         int threads, const PanelLimits &limits) {
  size_t perRow = panelRowBytes(n, k, cDtype);
  int64_t rows = std::min<int64_t>({limits.maxRows, m, int64_t(limits.bytes / perRow)});
  if (rows < std::min(limits.minRows, m))
    return 0;
  if (rows < m)
    rows = rows / 8 * 8; // whole cache lines of rows
  int64_t panels = (m + rows - 1) / rows;
  // A 2-D product's panels in whole rounds over the threads, of equal
  // rows: 768 rows as 512 + 256 left one thread waiting a third of the
  // time.
  const int64_t rounds = (panels + threads - 1) / threads * threads;
  const int64_t evenRows = std::min(m, ((m + rounds - 1) / rounds + 7) / 8 * 8);
  if (!limits.shareRows) {
    if (batch == 1)
      panels = rounds, rows = evenRows;
    auto noCopy = [&](int64_t r) {
      return 1.0 / double(r) + 1.0 / double(n) >= PanelLimits::kNoCopyBound;
    };
    if (limits.packedLikeWhole && noCopy(rows) && !noCopy(m))
      return 0;
    return batch * panels < threads || rows < std::min(limits.minRows, m) ? 0 : rows;
  }
  if (limits.balanced && batch == 1 && panels >= threads && panels % threads != 0 &&
      evenRows >= std::min(limits.minRows, m))
    return evenRows; // whole rounds, as above, where that keeps minRows
  // A panel for every thread: a few-point convolution's GEMM (M = 64,
  // K = 4608) in one panel ran on one thread.
  int64_t perMatrix = (threads + batch - 1) / batch;
  if (panels < perMatrix)
    rows = std::min(rows, std::max<int64_t>(8, ((m + perMatrix - 1) / perMatrix + 7) / 8 * 8));
  return std::min(rows, m);
}

WidenedPanels planWidenedPanels(const Blas &blas, int64_t m, int64_t n, int64_t k,
                                int32_t cDtype, int threads) {
  WidenedPanels plan;
  if (!blas.sgemmPack || m > INT_MAX || n > INT_MAX || k > INT_MAX)
    return plan;
  int64_t rows = widenedPanelRows(1, m, n, k, cDtype, threads);
  if (rows == 0)
    return plan;
  plan.rows = rows;
  plan.threads = std::max(1, threads);
  plan.packedBytes = (blas.sgemmPackGetSize(kMklBMatrix, int(m), int(n), int(k)) + 63) / 64 * 64;
  plan.perThread = (size_t(rows) * panelRowBytes(n, k, cDtype) + 63) / 64 * 64;
  return plan;
}

void widenedPanelMatmul(const Blas &blas, const WidenedPanels &plan, const int64_t *p,
                        int32_t dtype, int32_t cDtype, const void *a, const float *bF32, void *c,
                        void *scratch) {
  const int64_t m = p[1], n = p[2], k = p[3];
  const bool transA = p[4], transB = p[5], accumulate = p[6];
  auto *packed = static_cast<float *>(scratch);
  // Packed once, on the calling thread's threads (MKL's own region).
  blas.sgemmPack(kRowMajor, kMklBMatrix, transB ? kTrans : kNoTrans, int(m), int(n), int(k), 1.0f,
                 bF32, int(transB ? k : n), packed);
  struct Context {
    const Blas *blas;
    const WidenedPanels *plan;
    int32_t dtype, cDtype;
    int64_t m, n, k;
    bool transA, accumulate;
    const uint16_t *a;
    const float *packed;
    void *c;
    uint8_t *buffers;
    int64_t panels;
    int threads;
  } context = {&blas,
               &plan,
               dtype,
               cDtype,
               m,
               n,
               k,
               transA,
               accumulate,
               static_cast<const uint16_t *>(a),
               packed,
               c,
               static_cast<uint8_t *>(scratch) + plan.packedBytes,
               (m + plan.rows - 1) / plan.rows,
               0};
  context.threads = int(std::min<int64_t>({parallelThreads(), plan.threads, context.panels}));
  // Thread t takes panels t, t + threads, ...: its buffers are its own.
  parallelFor(
      0, context.threads, context.threads,
      [](void *raw, int64_t t) {
        const Context &x = *static_cast<const Context *>(raw);
        auto *aPanel = reinterpret_cast<float *>(x.buffers + size_t(t) * x.plan->perThread);
        float *cPanel = aPanel + x.plan->rows * x.k;
        for (int64_t panel = t; panel < x.panels; panel += x.threads) {
          int64_t first = panel * x.plan->rows, rows = std::min(x.plan->rows, x.m - first);
          widenPanelOfA(x.dtype, x.a, x.transA ? x.m : x.k, x.transA, first, rows, x.k, aPanel);
          auto product = [&](float *out) {
            x.blas->sgemmCompute(kRowMajor, x.transA ? kTrans : kNoTrans, kMklPacked, int(rows),
                                 int(x.n), int(x.k), aPanel, int(x.transA ? rows : x.k), x.packed,
                                 int(x.n), x.accumulate ? 1.0f : 0.0f, out, int(x.n));
          };
          if (x.cDtype == TCC_DTYPE_F32) {
            product(static_cast<float *>(x.c) + first * x.n);
            continue;
          }
          uint16_t *cRows = static_cast<uint16_t *>(x.c) + first * x.n;
          if (x.accumulate)
            widenRows(x.cDtype, cRows, x.n, rows, x.n, cPanel);
          product(cPanel);
          roundRows(x.cDtype, cPanel, rows, x.n, cRows, x.n);
        }
      },
      &context);
}

} // namespace tcc::rt
