//===- gemm_bench.cpp - matmul library calls: oneDNN against BLAS ---------===//
//
// Times MATMUL library calls through the runtime's own LibraryCalls, once
// with every call on oneDNN and once with every call on BLAS, so the
// numbers include exactly the per-call work a session does (oneDNN's
// primitive execution with its handles set, BLAS's sgemm plus the epilogue
// pass). The calls come from compiled artifacts (their descriptors'
// library-call tables: the real shapes, transposes and epilogues of a
// training step) or from the command line. For each distinct call it prints
// the median time per call on each library, their ratio and the library the
// runtime's rule (blasPrefers) picks; for an artifact, the sums over its
// step: all on oneDNN, all on BLAS, as routed, and the best of the two per
// call. docs/cpu-gemm.md holds the results and the decision. With --dtype
// bf16 or f16 it times each call in f32 as routed against the same call
// with 16-bit operands as a session runs it (native, or widened in f32).
//
// Usage:
//   tcc-gemm-bench [--threads N] [--ms MS] [--rounds R] [--dtype f32|bf16|f16] ITEM...
//   ITEM: an artifact (model.so), or a call "batch,M,N,K,ta,tb[,acc[,epilogue]]"
//
//===----------------------------------------------------------------------===//

#include "runtime/artifact.h"
#include "runtime/cpu/blas.h"
#include "runtime/cpu/half.h"
#include "runtime/cpu/onednn.h"
#include "runtime/cpu/parallel.h"
#include "runtime/error.h"
#include "runtime/session.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace tcc::rt;

namespace {

struct Options {
  int threads = 1;
  double blockMs = 2.0; ///< wall time of one timed block of calls
  int rounds = 11;      ///< blocks per library, interleaved
  /// F32: oneDNN against BLAS. BF16 / F16: each call in f32 as routed
  /// against the same call with 16-bit operands and C as the session runs
  /// it (native or widened, oneDNN's ISA decides).
  int32_t dtype = TCC_DTYPE_F32;
};

/// One distinct MATMUL call and how often a step makes it.
struct Case {
  Case(std::vector<int64_t> params, int count) : params(std::move(params)), count(count) {}
  /// 8: batch M N K ta tb acc epilogue; a 16-bit artifact's call 9 with
  /// its C's dtype (f32 sums, or the operands' type).
  std::vector<int64_t> params;
  int count;
  /// Median microseconds per call of the two compared ways (Options).
  double us[2] = {0, 0};
  bool routedToBlas = false;
  std::string impl; ///< oneDNN's kernel (F32), or the 16-bit call's
};

int32_t operandCount(const std::vector<int64_t> &p) {
  return 3 + !!(p[7] & TCC_MATMUL_EPILOGUE_BIAS) + !!(p[7] & TCC_MATMUL_EPILOGUE_RESIDUAL);
}

tcc_abi_library_call callOf(const std::vector<int64_t> &p, int32_t dtype = TCC_DTYPE_F32) {
  return {TCC_LIBRARY_CALL_MATMUL, dtype, int32_t(p.size()), operandCount(p), p.data()};
}

double flops(const std::vector<int64_t> &p) {
  return 2.0 * double(p[0]) * double(p[1]) * double(p[2]) * double(p[3]);
}

using Clock = std::chrono::steady_clock;

/// The median time per call, in microseconds, of call 0 of each of the two
/// LIBRARIES on its OPERANDS, blocks of the two interleaved so that a noisy
/// phase hits both.
void timePair(LibraryCalls *const libraries[2], std::vector<void *> *const operands[2],
              const Options &o, double us[2]) {
  // Calls per block: about blockMs of the slower library, from a warm-up.
  double slowest = 0;
  for (int l = 0; l < 2; ++l) {
    for (int w = 0; w < 3; ++w)
      LibraryCalls::run(libraries[l], 0, operands[l]->data());
    auto t0 = Clock::now();
    for (int w = 0; w < 5; ++w)
      LibraryCalls::run(libraries[l], 0, operands[l]->data());
    slowest = std::max(slowest, std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / 5);
  }
  int reps = std::max(1, int(o.blockMs * 1000 / std::max(slowest, 1e-3)));
  std::vector<double> times[2];
  for (int r = 0; r < o.rounds; ++r)
    for (int l = 0; l < 2; ++l) {
      LibraryCalls::run(libraries[l], 0, operands[l]->data()); // absorbs the switch
      auto t0 = Clock::now();
      for (int i = 0; i < reps; ++i)
        LibraryCalls::run(libraries[l], 0, operands[l]->data());
      times[l].push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / reps);
    }
  for (int l = 0; l < 2; ++l) {
    std::string error = libraries[l]->takeError();
    if (!error.empty())
      fail(TCC_ERROR_INTERNAL, error);
    std::sort(times[l].begin(), times[l].end());
    us[l] = times[l][times[l].size() / 2];
  }
}

/// Times C's call the two ways Options compares.
void timeCase(Case &c, const Options &o) {
  const std::vector<int64_t> &p = c.params;
  // f32: the call's first 8 parameters; 16-bit: C of the artifact's
  // dtype where it gave one, else of the operands'.
  std::vector<int64_t> wideParams(p.begin(), p.begin() + 8), narrowParams = wideParams;
  const bool sixteen = o.dtype != TCC_DTYPE_F32;
  const int32_t cDtype = p.size() > 8 ? int32_t(p[8]) : o.dtype;
  narrowParams.insert(narrowParams.end(), {cDtype, TCC_LIBRARY_MATH_EXACT});
  tcc_abi_library_call call = callOf(wideParams);
  c.routedToBlas = blasPrefers(call);
  tcc_abi_library_call narrow = callOf(narrowParams, o.dtype);
  LibraryCalls first(&call, 1, "bench", sixteen ? MatmulLibrary::Auto : MatmulLibrary::OneDnn);
  LibraryCalls second(sixteen ? &narrow : &call, 1, "bench",
                      sixteen ? MatmulLibrary::Auto : MatmulLibrary::Blas);
  c.impl = (sixteen ? second : first).implementations()[0];
  size_t batch = size_t(p[0]), m = size_t(p[1]), n = size_t(p[2]), k = size_t(p[3]);
  std::vector<size_t> sizes = {batch * m * k, batch * k * n, batch * m * n};
  if (p[7] & TCC_MATMUL_EPILOGUE_BIAS)
    sizes.push_back(n);
  if (p[7] & TCC_MATMUL_EPILOGUE_RESIDUAL)
    sizes.push_back(batch * m * n);
  // One region for the operands (f32, and the same rounded to the 16-bit
  // type) and the scratch, as a session's arena is: 64-byte aligned
  // buffers, huge pages (AlignedBuffer).
  auto align = [](size_t bytes) { return (bytes + 63) / 64 * 64; };
  // The 16-bit call's A and B are of the 16-bit type, its C, bias and D
  // of C's.
  auto narrowBytes = [&](size_t operand) {
    return operand < 2 || cDtype != TCC_DTYPE_F32 ? sizeof(uint16_t) : sizeof(float);
  };
  size_t total = align(std::max(first.scratchpadSize(), second.scratchpadSize()));
  for (size_t i = 0; i < sizes.size(); ++i)
    total += align(sizes[i] * sizeof(float)) + (sixteen ? align(sizes[i] * narrowBytes(i)) : 0);
  AlignedBuffer region(total, 64, "tcc-gemm-bench operands");
  uint8_t *at = region.data();
  first.setScratchpad(at);
  second.setScratchpad(at);
  at += align(std::max(first.scratchpadSize(), second.scratchpadSize()));
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<void *> wide, narrowOperands;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const size_t size = sizes[i];
    auto *f = reinterpret_cast<float *>(at);
    at += align(size * sizeof(float));
    for (size_t j = 0; j < size; ++j)
      f[j] = u(rng);
    wide.push_back(f);
    if (!sixteen)
      continue;
    narrowOperands.push_back(at);
    if (narrowBytes(i) == sizeof(float))
      std::memcpy(at, f, size * sizeof(float));
    else
      roundBuffer(i < 2 ? o.dtype : cDtype, f, reinterpret_cast<uint16_t *>(at), int64_t(size),
                  false);
    at += align(size * narrowBytes(i));
  }
  LibraryCalls *libraries[2] = {&first, &second};
  std::vector<void *> *operands[2] = {&wide, sixteen ? &narrowOperands : &wide};
  timePair(libraries, operands, o, c.us);
}

std::string shapeOf(const std::vector<int64_t> &p) {
  std::ostringstream s;
  if (p[0] > 1)
    s << p[0] << "x ";
  s << p[1] << "x" << p[2] << "x" << p[3];
  if (p[4] || p[5])
    s << (p[4] ? " A^T" : "") << (p[5] ? " B^T" : "");
  if (p[6])
    s << " +=";
  if (p[7])
    s << " e" << p[7];
  if (p.size() > 8 && p[8] == TCC_DTYPE_F32)
    s << " -> f32";
  return s.str();
}

/// The MATMUL calls of an artifact, distinct ones once with their counts.
std::vector<Case> casesOf(const std::string &path) {
  std::shared_ptr<Artifact> artifact = Artifact::load(path);
  const tcc_abi_descriptor &d = artifact->descriptor();
  std::map<std::vector<int64_t>, int> counts;
  std::vector<std::vector<int64_t>> order;
  for (int32_t i = 0; i < numLibraryCalls(d); ++i) {
    const tcc_abi_library_call &c = d.library_calls[i];
    if (c.kind != TCC_LIBRARY_CALL_MATMUL)
      continue;
    std::vector<int64_t> p(c.params, c.params + 7);
    p.push_back(matmulEpilogue(c));
    if (c.dtype != TCC_DTYPE_F32)
      p.push_back(libraryCallOutputDtype(c));
    if (counts[p]++ == 0)
      order.push_back(p);
  }
  std::vector<Case> cases;
  for (auto &p : order)
    cases.emplace_back(p, counts[p]);
  return cases;
}

void report(const std::string &title, std::vector<Case> &cases, const Options &o, bool sums) {
  const bool sixteen = o.dtype != TCC_DTYPE_F32;
  const char *type = o.dtype == TCC_DTYPE_BF16 ? "bf16" : "f16";
  std::printf("\n### %s, %d thread%s\n\n", title.c_str(), o.threads, o.threads > 1 ? "s" : "");
  if (sixteen)
    std::printf("| call (batch x M x N x K) | count | MFLOP | f32 us | %s us | %s/f32 | "
                "f32 on | %s call |\n|---|---|---|---|---|---|---|---|\n",
                type, type, type);
  else
    std::printf("| call (batch x M x N x K) | count | MFLOP | oneDNN us | BLAS us | oneDNN/BLAS | "
                "routed to | oneDNN impl |\n|---|---|---|---|---|---|---|---|\n");
  double all[4] = {0, 0, 0, 0}; // the two ways, routed (f32), best
  for (Case &c : cases) {
    timeCase(c, o);
    std::printf("| %s | %d | %.3g | %.1f | %.1f | %.2f | %s | %s |\n", shapeOf(c.params).c_str(),
                c.count, flops(c.params) / 1e6, c.us[0], c.us[1], sixteen ? c.us[1] / c.us[0] : c.us[0] / c.us[1],
                c.routedToBlas ? "BLAS" : "oneDNN", c.impl.c_str());
    std::fflush(stdout);
    all[0] += c.count * c.us[0];
    all[1] += c.count * c.us[1];
    all[2] += c.count * (c.routedToBlas ? c.us[1] : c.us[0]);
    all[3] += c.count * std::min(c.us[0], c.us[1]);
  }
  if (sums && sixteen)
    std::printf("\nmatmul time per step: f32 as routed %.3f ms, %s %.3f ms (%.3fx)\n",
                all[0] / 1e3, type, all[1] / 1e3, all[1] / all[0]);
  else if (sums)
    std::printf("\nmatmul time per step: all oneDNN %.3f ms, all BLAS %.3f ms, routed %.3f ms "
                "(%.2fx of all oneDNN), best per call %.3f ms\n",
                all[0] / 1e3, all[1] / 1e3, all[2] / 1e3, all[0] / all[2], all[3] / 1e3);
}

bool parseCall(const std::string &text, std::vector<int64_t> &p) {
  p.clear();
  std::stringstream s(text);
  std::string field;
  while (std::getline(s, field, ',')) {
    char *end = nullptr;
    p.push_back(std::strtoll(field.c_str(), &end, 10));
    if (field.empty() || *end)
      return false;
  }
  if (p.size() < 6 || p.size() > 8)
    return false;
  p.resize(8, 0);
  return checkLibraryCall(callOf(p)).empty();
}

int usage() {
  std::fprintf(stderr, "usage: tcc-gemm-bench [--threads N] [--ms MS] [--rounds R] "
                       "[--dtype f32|bf16|f16] ITEM...\n"
                       "  ITEM: an artifact (model.so), or a MATMUL call "
                       "\"batch,M,N,K,ta,tb[,acc[,epilogue]]\"\n");
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  std::vector<std::string> items;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--dtype" && i + 1 < argc) {
      std::string t = argv[++i];
      if (t != "f32" && t != "bf16" && t != "f16")
        return usage();
      o.dtype = t == "bf16" ? TCC_DTYPE_BF16 : t == "f16" ? TCC_DTYPE_F16 : TCC_DTYPE_F32;
    } else if ((arg == "--threads" || arg == "--ms" || arg == "--rounds") && i + 1 < argc) {
      double v = std::atof(argv[++i]);
      if (v <= 0)
        return usage();
      if (arg == "--threads")
        o.threads = int(v);
      else if (arg == "--ms")
        o.blockMs = v;
      else
        o.rounds = int(v);
    } else if (arg.rfind("--", 0) == 0) {
      return usage();
    } else {
      items.push_back(arg);
    }
  }
  if (items.empty())
    return usage();
  try {
    setParallelThreads(o.threads);
    if (o.dtype == TCC_DTYPE_F32 && !blas()) {
      std::fprintf(stderr, "tcc-gemm-bench: no BLAS (TCC_BLAS_LIBRARY, libopenblas0-openmp)\n");
      return 1;
    }
    std::printf("BLAS: %s\n", blas() ? blas()->file.c_str() : "none");
    std::vector<Case> calls;
    for (const std::string &item : items) {
      std::vector<int64_t> p;
      if (parseCall(item, p)) {
        calls.emplace_back(p, 1);
        continue;
      }
      std::vector<Case> cases = casesOf(item);
      std::string name = item.substr(item.find_last_of('/') + 1);
      report(name, cases, o, true);
    }
    if (!calls.empty())
      report("calls", calls, o, false);
  } catch (const Error &e) {
    std::fprintf(stderr, "tcc-gemm-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
