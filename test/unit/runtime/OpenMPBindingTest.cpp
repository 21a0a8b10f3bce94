//===- OpenMPBindingTest.cpp - libraries bound to the runtime's libomp ----===//
//
// The libraries the runtime loads (oneDNN, OpenBLAS, MKL's GNU OpenMP layer)
// must call the runtime's libomp whatever the process loaded before: libgomp
// in the global scope (as torch loads it), or the library itself, bound to
// libgomp (torch's oneDNN, numpy's OpenBLAS). Each case runs in a fresh
// process (a death test, re-executed), since what it loads stays loaded.
// The oracle is the dynamic linker's own work: the relocation slots of each
// OpenMP symbol the library references. Skipped where a library is absent.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/blas.h"
#include "runtime/cpu/openmp_binding.h"
#include "runtime/cpu/parallel.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <functional>
#include <gtest/gtest.h>
#include <string>
#include <unistd.h>
#include <vector>

using namespace tcc::rt;

namespace {

/// GNU's libgomp: by its soname this program would find LLVM's alias of
/// libomp in its RUNPATH.
const char *const kLibgomp = "/usr/lib/x86_64-linux-gnu/libgomp.so.1";
const char *const kOneDnn = "/usr/lib/x86_64-linux-gnu/libdnnl.so.2";
const char *const kMklRt = "/opt/tcc/mkl/lib/libmkl_rt.so.3";
const char *const kMklGnuThread = "/opt/tcc/mkl/lib/libmkl_gnu_thread.so.3";

bool installed(const char *file) { return access(file, R_OK) == 0; }

std::string libomp() {
  Dl_info info;
  return dladdr(openMPRuntimeAddress(), &info) && info.dli_fname ? info.dli_fname : "";
}

/// Runs BODY in a fresh process (this test program executed again), with
/// libgomp first in the global scope when LIBGOMP_FIRST: preloaded, so that
/// it precedes the libomp this program links, as torch's precedes tcc's in
/// Python. BODY returns "" on success, else what failed.
void inFreshProcess(bool libgompFirst, const std::function<std::string()> &body) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  if (libgompFirst)
    setenv("LD_PRELOAD", kLibgomp, 1);
  EXPECT_EXIT(
      {
        std::string failure = body();
        if (failure.empty() && libgompFirst &&
            foreignGnuOpenMP().find("libgomp") == std::string::npos)
          failure = "GOMP_parallel resolves to '" + foreignGnuOpenMP() + "', not libgomp";
        if (!failure.empty())
          std::fprintf(stderr, "%s\n", failure.c_str());
        std::fflush(stderr);
        _exit(failure.empty() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  if (libgompFirst)
    unsetenv("LD_PRELOAD");
}

/// "" when HANDLE's GOMP_parallel and omp_* calls reach libomp.
std::string onLibomp(void *handle, const char *what) {
  std::string bound = boundLibrary(handle, "GOMP_parallel");
  if (bound != libomp())
    return std::string(what) + ": GOMP_parallel bound to '" + bound + "', not " + libomp();
  std::string mismatch = openMPMismatch(handle);
  return mismatch.empty() ? "" : std::string(what) + ": " + mismatch;
}

// Tests that without another runtime oneDNN binds to libomp, libomp being
// global. (This program links libomp, so a library loaded before the
// runtime binds to it too; a numpy-like OpenBLAS bound to libgomp without
// libgomp global needs a process without libomp: python/tests.)
TEST(OpenMPBindingTest, OneDnnAlone) {
  if (!installed(kOneDnn))
    GTEST_SKIP() << "no oneDNN";
  inFreshProcess(false, [] {
    std::string why;
    std::vector<void *> handles = loadOnOpenMP({kOneDnn}, OpenMPLoad{}, why);
    if (handles.empty())
      return why;
    if (!foreignGnuOpenMP().empty())
      return "GOMP_parallel resolves to " + foreignGnuOpenMP();
    return onLibomp(handles[0], "oneDNN");
  });
}

// Tests that with libgomp global first (torch imported before tcc), oneDNN
// still binds to libomp, and that libgomp keeps the global GOMP_* symbols
// for the code that loaded it.
TEST(OpenMPBindingTest, OneDnnAfterLibgomp) {
  if (!installed(kOneDnn))
    GTEST_SKIP() << "no oneDNN";
  inFreshProcess(true, [] {
    std::string why;
    std::vector<void *> handles = loadOnOpenMP({kOneDnn}, OpenMPLoad{}, why);
    if (handles.empty())
      return why;
    return onLibomp(handles[0], "oneDNN");
  });
}

// Tests that a oneDNN already loaded and bound to libgomp (Debian's torch
// links it) is not used: a private copy is loaded and bound to libomp, and
// the first copy stays bound to libgomp.
TEST(OpenMPBindingTest, OneDnnLoadedBeforeIsCopied) {
  if (!installed(kOneDnn))
    GTEST_SKIP() << "no oneDNN";
  inFreshProcess(true, [] {
    void *theirs = dlopen(kOneDnn, RTLD_NOW | RTLD_LOCAL);
    if (!theirs)
      return std::string("cannot load oneDNN");
    if (boundLibrary(theirs, "GOMP_parallel").find("libgomp") == std::string::npos)
      return "the first oneDNN is bound to " + boundLibrary(theirs, "GOMP_parallel");
    std::string why;
    std::vector<void *> handles = loadOnOpenMP({kOneDnn}, OpenMPLoad{}, why);
    if (handles.empty())
      return why;
    if (handles[0] == theirs)
      return std::string("the first oneDNN was reused");
    if (dlsym(handles[0], "dnnl_engine_create") == dlsym(theirs, "dnnl_engine_create"))
      return std::string("the copy's functions are the first oneDNN's");
    if (boundLibrary(theirs, "GOMP_parallel").find("libgomp") == std::string::npos)
      return std::string("the first oneDNN was rebound");
    return onLibomp(handles[0], "the copy of oneDNN");
  });
}

// Tests that MKL's GNU OpenMP layer, which libmkl_rt opens itself, binds to
// libomp with libgomp global first, and that a product large enough to be
// threaded (2 threads) is right: a layer whose omp_get_thread_num asked
// libgomp inside libomp's team would compute one block twice.
TEST(OpenMPBindingTest, MklAfterLibgomp) {
  if (!installed(kMklRt))
    GTEST_SKIP() << "no MKL";
  inFreshProcess(true, [] {
    setenv("TCC_BLAS_LIBRARY", kMklRt, 1);
    const Blas *library = blas();
    if (!library || !library->mkl)
      return std::string("MKL is not used");
    void *layer = dlopen(kMklGnuThread, RTLD_LAZY | RTLD_NOLOAD);
    if (!layer)
      return std::string("MKL's GNU OpenMP layer is not loaded");
    if (std::string mismatch = openMPMismatch(layer); !mismatch.empty())
      return mismatch;
    setParallelThreads(2);
    const int n = 256;
    std::vector<float> a(n * n), b(n * n), c(n * n, -1.0f);
    for (int i = 0; i < n * n; ++i) {
      a[i] = float((i * 7) % 13) - 6.0f;
      b[i] = float((i * 5) % 11) - 5.0f;
    }
    library->sgemm(101, 111, 111, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        double sum = 0;
        for (int k = 0; k < n; ++k)
          sum += double(a[i * n + k]) * double(b[k * n + j]);
        if (c[i * n + j] != float(sum)) // small integers: exact in float
          return "C[" + std::to_string(i) + "][" + std::to_string(j) + "] = " +
                 std::to_string(c[i * n + j]) + ", expected " + std::to_string(sum);
      }
    return std::string();
  });
}

} // namespace
