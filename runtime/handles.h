//===- handles.h - what the C API's opaque handles point to ----------------===//
//
// tcc_artifact_t and tcc_session_t are pointers to these structs. They live
// in a header (not only in api.cpp) so the runtime's unit tests can reach the
// Session behind a handle and check, e.g., that the arena was poisoned.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_HANDLES_H
#define TCC_RUNTIME_HANDLES_H

#include "runtime/artifact.h"
#include "runtime/session.h"

#include <memory>

struct tcc_artifact {
  /// Shared with the sessions created from it, which keep the library loaded.
  std::shared_ptr<tcc::rt::Artifact> impl;
};

struct tcc_session {
  std::unique_ptr<tcc::rt::Session> impl;
};

struct tcc_communicator {
  std::unique_ptr<tcc::rt::Communicator> impl;
};

#endif // TCC_RUNTIME_HANDLES_H
