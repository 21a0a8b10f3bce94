//===- libraries.h - cuBLASLt and cuDNN library calls of a device artifact -===//
//
// A device artifact's MATMUL calls run on cuBLASLt and its CONV2D calls
// (and their gradients, CONV2D_BACKWARD_DATA / _WEIGHTS) on cuDNN 9's
// convolution API, both loaded with dlopen only when the artifact
// has such a call. Descriptors and algorithms are chosen once per session;
// a call only enqueues work on the session's stream.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_CUDA_LIBRARIES_H
#define TCC_RUNTIME_CUDA_LIBRARIES_H

#include "runtime/include/tcc/abi.h"

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace tcc::rt::cuda {

/// Where a library is looked for, in order: each folder of LIB_PATH (the
/// value of TCC_CUDA_LIB_PATH, colon-separated; empty parts skipped) joined
/// with each of SONAMES, then each bare soname (the system's search), then
/// each of WHEEL_DIRS joined with each soname. Pure: no file is touched.
std::vector<std::string> librarySearchOrder(const std::vector<std::string> &sonames,
                                            const char *libPath,
                                            const std::vector<std::string> &wheelDirs);

/// The lib folders of NVIDIA's pip wheels (PyTorch installs them):
/// .../site-packages/nvidia/*/lib and .../dist-packages/nvidia/*/lib under
/// /opt/*/.venv, /usr/local and /usr, that exist, in sorted order.
std::vector<std::string> wheelLibraryDirs();

/// Opens the first loadable candidate for SONAMES (librarySearchOrder with
/// TCC_CUDA_LIB_PATH and the wheels) with dlopen FLAGS and sets *OPENED_PATH.
/// Throws Error(TCC_ERROR_UNSUPPORTED) naming LIBRARY and what was tried.
void *openLibrary(const std::vector<std::string> &sonames, const std::string &library, int flags,
                  std::string *openedPath);

/// True when TCC_CUDA_TF32=1: fp32 matmuls and convolutions may use TF32
/// tensor cores (faster, about 1e-3 relative error).
bool tf32Enabled();

/// The cuBLASLt and cuDNN calls of one session.
class LibraryCalls {
public:
  /// Validated CALLS. Loads the libraries the calls need and plans every
  /// call for a workspace of WORKSPACE_LIMIT bytes. Throws
  /// Error(TCC_ERROR_UNSUPPORTED) when a library is missing or refuses a
  /// call, naming WHAT (the artifact), the call's index and kind.
  LibraryCalls(const tcc_abi_library_call *calls, int32_t count, size_t workspaceLimit,
               CUstream stream, const std::string &what);
  ~LibraryCalls();
  LibraryCalls(const LibraryCalls &) = delete;
  LibraryCalls &operator=(const LibraryCalls &) = delete;

  /// The shared workspace (set once, before any run; WORKSPACE_LIMIT bytes).
  void setWorkspace(CUdeviceptr workspace) { workspace_ = workspace; }
  /// Enqueues call INDEX on OPERANDS (device pointers); returns "" or what
  /// failed (the call, its index and kind, the library's status).
  std::string run(int32_t index, void *const *operands);
  /// "cublasLt: algo 6" / "cudnn: IMPLICIT_PRECOMP_GEMM" per call, for tests.
  std::vector<std::string> implementations() const;
  /// "library call #3 (MATMUL 1x37x19x53)".
  const std::string &name(int32_t index) const;

  struct Call;

private:
  std::vector<std::unique_ptr<Call>> calls_;
  void *cublasLt_ = nullptr; ///< cublasLtHandle_t
  void *cudnn_ = nullptr;    ///< cudnnHandle_t
  CUstream stream_ = nullptr;
  CUdeviceptr workspace_ = 0;
  std::string what_;
};

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_LIBRARIES_H
