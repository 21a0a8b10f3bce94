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
// call. docs/cpu-gemm.md holds the results and the decision.
//
// Usage:
//   tcc-gemm-bench [--threads N] [--ms MS] [--rounds R] ITEM...
//   ITEM: an artifact (model.so), or a call "batch,M,N,K,ta,tb[,acc[,epilogue]]"
//
//===----------------------------------------------------------------------===//

#include "runtime/artifact.h"
#include "runtime/cpu/blas.h"
#include "runtime/cpu/onednn.h"
#include "runtime/cpu/parallel.h"
#include "runtime/error.h"

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
};

/// One distinct MATMUL call and how often a step makes it.
struct Case {
  Case(std::vector<int64_t> params, int count) : params(std::move(params)), count(count) {}
  std::vector<int64_t> params; // 8: batch M N K ta tb acc epilogue
  int count;
  double onednnUs = 0, blasUs = 0;
  bool routedToBlas = false;
  std::string onednnImpl;
};

int32_t operandCount(const std::vector<int64_t> &p) {
  return 3 + !!(p[7] & TCC_MATMUL_EPILOGUE_BIAS) + !!(p[7] & TCC_MATMUL_EPILOGUE_RESIDUAL);
}

tcc_abi_library_call callOf(const std::vector<int64_t> &p) {
  return {TCC_LIBRARY_CALL_MATMUL, TCC_DTYPE_F32, int32_t(p.size()), operandCount(p), p.data()};
}

double flops(const std::vector<int64_t> &p) {
  return 2.0 * double(p[0]) * double(p[1]) * double(p[2]) * double(p[3]);
}

using Clock = std::chrono::steady_clock;

/// The median time per call, in microseconds, of call 0 of each library,
/// blocks of the two interleaved so that a noisy phase hits both.
void timeCase(Case &c, const Options &o) {
  const std::vector<int64_t> &p = c.params;
  tcc_abi_library_call call = callOf(p);
  LibraryCalls onednn(&call, 1, "bench", MatmulLibrary::OneDnn);
  LibraryCalls blasCalls(&call, 1, "bench", MatmulLibrary::Blas);
  c.onednnImpl = onednn.implementations()[0];
  tcc_abi_library_call routed = call;
  c.routedToBlas = blasPrefers(routed);
  std::vector<uint8_t> scratch(onednn.scratchpadSize() + 64);
  onednn.setScratchpad(scratch.data());
  size_t batch = size_t(p[0]), m = size_t(p[1]), n = size_t(p[2]), k = size_t(p[3]);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  auto random = [&](size_t size) {
    std::vector<float> v(size);
    for (float &x : v)
      x = u(rng);
    return v;
  };
  std::vector<float> a = random(batch * m * k), b = random(batch * k * n), out = random(batch * m * n),
                     bias = random(n), d = random(batch * m * n);
  std::vector<void *> operands = {a.data(), b.data(), out.data()};
  if (p[7] & TCC_MATMUL_EPILOGUE_BIAS)
    operands.push_back(bias.data());
  if (p[7] & TCC_MATMUL_EPILOGUE_RESIDUAL)
    operands.push_back(d.data());
  LibraryCalls *libraries[2] = {&onednn, &blasCalls};
  // Calls per block: about blockMs of the slower library, from a warm-up.
  int reps = 1;
  double slowest = 0;
  for (LibraryCalls *l : libraries) {
    for (int w = 0; w < 3; ++w)
      LibraryCalls::run(l, 0, operands.data());
    auto t0 = Clock::now();
    for (int w = 0; w < 5; ++w)
      LibraryCalls::run(l, 0, operands.data());
    slowest = std::max(slowest, std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / 5);
  }
  reps = std::max(1, int(o.blockMs * 1000 / std::max(slowest, 1e-3)));
  std::vector<double> times[2];
  for (int r = 0; r < o.rounds; ++r)
    for (int l = 0; l < 2; ++l) {
      LibraryCalls::run(libraries[l], 0, operands.data()); // absorbs the switch
      auto t0 = Clock::now();
      for (int i = 0; i < reps; ++i)
        LibraryCalls::run(libraries[l], 0, operands.data());
      times[l].push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / reps);
    }
  for (LibraryCalls *l : libraries) {
    std::string error = l->takeError();
    if (!error.empty())
      fail(TCC_ERROR_INTERNAL, error);
  }
  for (auto &t : times)
    std::sort(t.begin(), t.end());
  c.onednnUs = times[0][times[0].size() / 2];
  c.blasUs = times[1][times[1].size() / 2];
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
    if (counts[p]++ == 0)
      order.push_back(p);
  }
  std::vector<Case> cases;
  for (auto &p : order)
    cases.emplace_back(p, counts[p]);
  return cases;
}

void report(const std::string &title, std::vector<Case> &cases, const Options &o, bool sums) {
  std::printf("\n### %s, %d thread%s\n\n", title.c_str(), o.threads, o.threads > 1 ? "s" : "");
  std::printf("| call (batch x M x N x K) | count | MFLOP | oneDNN us | BLAS us | oneDNN/BLAS | "
              "routed to | oneDNN impl |\n|---|---|---|---|---|---|---|---|\n");
  double all[4] = {0, 0, 0, 0}; // oneDNN, BLAS, routed, best
  for (Case &c : cases) {
    timeCase(c, o);
    std::printf("| %s | %d | %.3g | %.1f | %.1f | %.2f | %s | %s |\n", shapeOf(c.params).c_str(),
                c.count, flops(c.params) / 1e6, c.onednnUs, c.blasUs, c.onednnUs / c.blasUs,
                c.routedToBlas ? "BLAS" : "oneDNN", c.onednnImpl.c_str());
    std::fflush(stdout);
    all[0] += c.count * c.onednnUs;
    all[1] += c.count * c.blasUs;
    all[2] += c.count * (c.routedToBlas ? c.blasUs : c.onednnUs);
    all[3] += c.count * std::min(c.onednnUs, c.blasUs);
  }
  if (sums)
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
  std::fprintf(stderr, "usage: tcc-gemm-bench [--threads N] [--ms MS] [--rounds R] ITEM...\n"
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
    if ((arg == "--threads" || arg == "--ms" || arg == "--rounds") && i + 1 < argc) {
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
    if (!blas()) {
      std::fprintf(stderr, "tcc-gemm-bench: no BLAS (TCC_BLAS_LIBRARY, libopenblas0-openmp)\n");
      return 1;
    }
    std::printf("BLAS: %s\n", blas()->file.c_str());
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
