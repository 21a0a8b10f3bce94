//===- CudaRuntimeTest.cpp - the CUDA half of the runtime, without a GPU ---===//
//
// What can be checked on a machine without a GPU: a device artifact loads
// (its descriptor is valid) and a session on it is refused with one clear
// "no CUDA device" error; the library search order. The GPU side is checked
// by tcc-cuda-selftest on a machine with a GPU.
//
//===----------------------------------------------------------------------===//

#include "runtime/include/tcc/tcc.h"

#include "runtime/cuda/libraries.h"

#include <cstdlib>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <string>

namespace {

bool contains(const std::string &haystack, const std::string &needle) {
  return haystack.find(needle) != std::string::npos;
}

/// Whether this machine has a CUDA driver at all (then the refusal below
/// may not happen: the test is for machines without a GPU).
bool hasCudaDriver() {
  void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!handle)
    handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle)
    dlclose(handle);
  return handle != nullptr;
}

// Tests that a cuda:sm_90 artifact loads and describes itself, and that a
// session on it fails with TCC_ERROR_UNSUPPORTED naming the artifact, its
// device and the reason, when the machine has no GPU.
TEST(CudaRuntime, RefusesSessionWithoutDevice) {
  if (hasCudaDriver())
    GTEST_SKIP() << "this machine has a CUDA driver; tcc-cuda-selftest covers it";
  std::string path = std::string(TCC_FIXTURE_DIR) + "/add_artifact_cuda.so";
  tcc_artifact_t artifact = nullptr;
  ASSERT_EQ(tcc_artifact_load(path.c_str(), &artifact), TCC_OK) << tcc_last_error();
  tcc_session_options options;
  tcc_session_options_init(&options);
  options.skip_default_params = 1;
  tcc_session_t session = nullptr;
  EXPECT_EQ(tcc_session_create(artifact, &options, &session), TCC_ERROR_UNSUPPORTED);
  EXPECT_EQ(session, nullptr);
  std::string error = tcc_last_error();
  EXPECT_TRUE(contains(error, "no CUDA device")) << error;
  EXPECT_TRUE(contains(error, path + ": compiled for cuda:sm_90 but there is no CUDA device: "))
      << error;
  EXPECT_TRUE(contains(error, "libcuda.so.1")) << error;
  tcc_artifact_destroy(artifact);
}

// Tests the library search order: TCC_CUDA_LIB_PATH's folders (empty parts
// skipped), then the system's search by soname, then the wheels' folders.
TEST(CudaRuntime, LibrarySearchOrder) {
  using tcc::rt::cuda::librarySearchOrder;
  std::vector<std::string> sonames = {"libcublasLt.so.13", "libcublasLt.so.12"};
  EXPECT_EQ(librarySearchOrder(sonames, nullptr, {}), sonames);
  EXPECT_EQ(librarySearchOrder(sonames, "", {}), sonames);
  std::vector<std::string> expected = {
      "/a/libcublasLt.so.13",   "/a/libcublasLt.so.12",   "/b/c/libcublasLt.so.13",
      "/b/c/libcublasLt.so.12", "libcublasLt.so.13",      "libcublasLt.so.12",
      "/w/nvidia/cublas/lib/libcublasLt.so.13", "/w/nvidia/cublas/lib/libcublasLt.so.12"};
  EXPECT_EQ(librarySearchOrder(sonames, ":/a::/b/c/:", {"/w/nvidia/cublas/lib"}), expected);
  EXPECT_EQ(librarySearchOrder({"libcudnn.so.9"}, "/x", {"/y", "/z"}),
            (std::vector<std::string>{"/x/libcudnn.so.9", "libcudnn.so.9", "/y/libcudnn.so.9",
                                      "/z/libcudnn.so.9"}));
}

} // namespace
