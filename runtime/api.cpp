//===- api.cpp - the C API of tcc.h over Artifact and Session ---------------===//
//
// Each function checks its pointers, calls into C++, and converts whatever
// was thrown into a tcc_status and the thread's last-error message. This is
// the only place exceptions stop.
//
//===----------------------------------------------------------------------===//

#include "runtime/include/tcc/tcc.h"

#include "runtime/checkpoint/safetensors.h"
#include "runtime/error.h"
#include "runtime/handles.h"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <string>

using tcc::rt::Error;
using tcc::rt::fail;

#ifndef TCC_RUNTIME_VERSION
#define TCC_RUNTIME_VERSION "0.1.0"
#endif

namespace {

thread_local std::string lastError;
/// Used instead of lastError when storing the message itself ran out of memory.
thread_local const char *lastErrorFallback = nullptr;

} // namespace

void tcc::rt::setLastError(const char *message) noexcept {
  try {
    lastError = message;
    lastErrorFallback = nullptr;
  } catch (...) {
    lastErrorFallback = "out of memory (while recording an error message)";
  }
}

void tcc::rt::clearLastError() noexcept {
  lastError.clear();
  lastErrorFallback = nullptr;
}

namespace {

using tcc::rt::guarded;

void require(const void *pointer, const char *what) {
  if (!pointer)
    fail(TCC_ERROR_INVALID_ARGUMENT, std::string(what) + " is NULL");
}

tcc::rt::Artifact &artifactOf(tcc_artifact_t artifact) {
  require(artifact, "artifact");
  return *artifact->impl;
}

tcc::rt::Session &sessionOf(tcc_session_t session) {
  require(session, "session");
  return *session->impl;
}

} // namespace

extern "C" {

const char *tcc_last_error(void) {
  return lastErrorFallback ? lastErrorFallback : lastError.c_str();
}

const char *tcc_status_string(tcc_status status) {
  switch (status) {
  case TCC_OK:
    return "TCC_OK";
  case TCC_ERROR_INVALID_ARGUMENT:
    return "TCC_ERROR_INVALID_ARGUMENT";
  case TCC_ERROR_IO:
    return "TCC_ERROR_IO";
  case TCC_ERROR_ABI:
    return "TCC_ERROR_ABI";
  case TCC_ERROR_NOT_FOUND:
    return "TCC_ERROR_NOT_FOUND";
  case TCC_ERROR_SHAPE:
    return "TCC_ERROR_SHAPE";
  case TCC_ERROR_DTYPE:
    return "TCC_ERROR_DTYPE";
  case TCC_ERROR_RUNTIME:
    return "TCC_ERROR_RUNTIME";
  case TCC_ERROR_UNSUPPORTED:
    return "TCC_ERROR_UNSUPPORTED";
  case TCC_ERROR_INVALID_STATE:
    return "TCC_ERROR_INVALID_STATE";
  case TCC_ERROR_OUT_OF_MEMORY:
    return "TCC_ERROR_OUT_OF_MEMORY";
  case TCC_ERROR_FORMAT:
    return "TCC_ERROR_FORMAT";
  case TCC_ERROR_INTERNAL:
    return "TCC_ERROR_INTERNAL";
  case TCC_ERROR_INTERRUPTED:
    return "TCC_ERROR_INTERRUPTED";
  case TCC_ERROR_RANKS_DIFFER:
    return "TCC_ERROR_RANKS_DIFFER";
  }
  return "unknown status";
}

const char *tcc_runtime_version(void) { return TCC_RUNTIME_VERSION; }

tcc_status tcc_artifact_load(const char *path, tcc_artifact_t *out_artifact) {
  return guarded([&] {
    require(path, "path");
    require(out_artifact, "out_artifact");
    auto handle = std::make_unique<tcc_artifact>();
    handle->impl = tcc::rt::Artifact::load(path);
    *out_artifact = handle.release();
  });
}

void tcc_artifact_destroy(tcc_artifact_t artifact) { delete artifact; }

tcc_status tcc_artifact_get_info(tcc_artifact_t artifact, tcc_artifact_info *out_info) {
  return guarded([&] {
    tcc::rt::Artifact &a = artifactOf(artifact);
    require(out_info, "out_info");
    const tcc_abi_descriptor &d = a.descriptor();
    tcc_artifact_info info;
    info.path = a.path().c_str();
    info.abi_version = d.abi_version;
    info.fingerprint = a.fingerprint();
    info.producer = a.producer();
    info.target = a.target();
    info.cpu_features = a.cpuFeatures();
    info.arena_size = d.arena_size;
    info.state_size = d.state_size;
    info.num_tensors = d.num_tensors;
    info.num_entries = d.num_entries;
    *out_info = info;
  });
}

tcc_status tcc_artifact_num_tensors(tcc_artifact_t artifact, int32_t *out_count) {
  return guarded([&] {
    tcc::rt::Artifact &a = artifactOf(artifact);
    require(out_count, "out_count");
    *out_count = a.numTensors();
  });
}

tcc_status tcc_artifact_tensor_info(tcc_artifact_t artifact, int32_t index,
                                    tcc_tensor_info *out_info) {
  return guarded([&] {
    tcc::rt::Artifact &a = artifactOf(artifact);
    require(out_info, "out_info");
    if (index < 0 || index >= a.numTensors())
      fail(TCC_ERROR_INVALID_ARGUMENT, a.path() + ": tensor index " + std::to_string(index) +
                                           " is out of range [0, " +
                                           std::to_string(a.numTensors()) + ")");
    const tcc_abi_tensor &t = a.tensor(index);
    tcc_tensor_info info;
    info.name = t.name;
    info.role = tcc_role(t.role);
    info.dtype = tcc_dtype(t.dtype);
    info.rank = t.rank;
    info.shape = t.rank > 0 ? t.shape : nullptr;
    info.size_bytes = size_t(t.size_bytes);
    *out_info = info;
  });
}

tcc_status tcc_artifact_find_tensor(tcc_artifact_t artifact, const char *name, tcc_role role,
                                    int32_t *out_index) {
  return guarded([&] {
    tcc::rt::Artifact &a = artifactOf(artifact);
    require(name, "name");
    require(out_index, "out_index");
    if (role != TCC_ROLE_INPUT && role != TCC_ROLE_OUTPUT && role != TCC_ROLE_PARAM &&
        role != TCC_ROLE_STATE)
      fail(TCC_ERROR_INVALID_ARGUMENT, "unknown role " + std::to_string(int(role)));
    int32_t index = a.findTensor(name, role);
    if (index < 0)
      fail(TCC_ERROR_NOT_FOUND, a.path() + " has no " + tcc::rt::roleName(role) + " '" + name +
                                    "'; its " + tcc::rt::roleName(role) + "s are " +
                                    a.listTensors(role));
    *out_index = index;
  });
}

tcc_status tcc_artifact_num_entries(tcc_artifact_t artifact, int32_t *out_count) {
  return guarded([&] {
    tcc::rt::Artifact &a = artifactOf(artifact);
    require(out_count, "out_count");
    *out_count = a.descriptor().num_entries;
  });
}

tcc_status tcc_artifact_entry_info(tcc_artifact_t artifact, int32_t index,
                                   tcc_entry_info *out_info) {
  return guarded([&] {
    tcc::rt::Artifact &a = artifactOf(artifact);
    require(out_info, "out_info");
    if (index < 0 || index >= a.descriptor().num_entries)
      fail(TCC_ERROR_INVALID_ARGUMENT, a.path() + ": entry index " + std::to_string(index) +
                                           " is out of range [0, " +
                                           std::to_string(a.descriptor().num_entries) + ")");
    const tcc_abi_entry &e = a.descriptor().entries[index];
    tcc_entry_info info;
    info.name = e.name;
    info.num_tensors = e.num_tensors;
    info.tensor_indices = e.num_tensors > 0 ? e.tensor_indices : nullptr;
    *out_info = info;
  });
}

tcc_status tcc_artifact_find_entry(tcc_artifact_t artifact, const char *name, int32_t *out_index) {
  return guarded([&] {
    tcc::rt::Artifact &a = artifactOf(artifact);
    require(name, "name");
    require(out_index, "out_index");
    const tcc_abi_entry *entry = a.findEntry(name);
    if (!entry)
      fail(TCC_ERROR_NOT_FOUND,
           a.path() + " has no entry point '" + name + "'; it has " + a.listEntries());
    *out_index = int32_t(entry - a.descriptor().entries);
  });
}

tcc_status tcc_artifact_get_metadata(tcc_artifact_t artifact, const char *key,
                                     const char **out_value) {
  return guarded([&] {
    tcc::rt::Artifact &a = artifactOf(artifact);
    require(key, "key");
    require(out_value, "out_value");
    if (const char *value = a.metadata(key)) {
      *out_value = value;
      return;
    }
    const tcc_abi_descriptor &d = a.descriptor();
    std::string keys;
    for (int32_t i = 0; i < tcc::rt::numMetadata(d); ++i)
      keys += (keys.empty() ? "'" : ", '") + std::string(d.metadata[i].key) + "'";
    fail(TCC_ERROR_NOT_FOUND, a.path() + " has no metadata '" + key + "'; it has " +
                                  (keys.empty() ? std::string("none") : keys));
  });
}

tcc_status tcc_artifact_get_device(tcc_artifact_t artifact, const char **out_device) {
  return guarded([&] {
    tcc::rt::Artifact &a = artifactOf(artifact);
    require(out_device, "out_device");
    *out_device = tcc::rt::isDeviceArtifact(a.descriptor()) ? a.descriptor().device : "cpu";
  });
}

tcc_status tcc_artifact_get_cpu_variant(tcc_artifact_t artifact, const char **out_variant) {
  return guarded([&] {
    tcc::rt::Artifact &a = artifactOf(artifact);
    require(out_variant, "out_variant");
    *out_variant = a.cpuVariant() ? a.cpuVariant()->name : "";
  });
}

void tcc_session_options_init(tcc_session_options *out_options) {
  if (!out_options)
    return;
  std::memset(out_options, 0, sizeof(*out_options));
  out_options->struct_size = sizeof(tcc_session_options);
}

tcc_status tcc_session_create(tcc_artifact_t artifact, const tcc_session_options *options,
                              tcc_session_t *out_session) {
  return guarded([&] {
    require(artifact, "artifact");
    require(out_session, "out_session");
    // Read only the fields the caller's struct has; the rest keep defaults.
    tcc_session_options effective;
    tcc_session_options_init(&effective);
    if (options) {
      if (options->struct_size < sizeof(uint32_t) || options->struct_size > (1u << 16))
        fail(TCC_ERROR_INVALID_ARGUMENT,
             "options->struct_size is " + std::to_string(options->struct_size) +
                 "; initialize the options with tcc_session_options_init");
      std::memcpy(&effective, options, std::min<size_t>(options->struct_size, sizeof(effective)));
      effective.struct_size = sizeof(effective);
    }
    auto handle = std::make_unique<tcc_session>();
    handle->impl = std::make_unique<tcc::rt::Session>(artifact->impl, effective);
    if (!effective.skip_default_params)
      handle->impl->loadDefaultParams();
    *out_session = handle.release();
  });
}

void tcc_session_destroy(tcc_session_t session) { delete session; }

tcc_status tcc_session_load_params(tcc_session_t session, const char *path) {
  return guarded([&] {
    tcc::rt::Session &s = sessionOf(session);
    require(path, "path");
    tcc::rt::Session::Use use(s);
    s.loadParams(path);
  });
}

tcc_status tcc_session_save_params(tcc_session_t session, const char *path) {
  return guarded([&] {
    tcc::rt::Session &s = sessionOf(session);
    require(path, "path");
    tcc::rt::Session::Use use(s);
    s.saveParams(path);
  });
}

tcc_status tcc_session_save_checkpoint(tcc_session_t session, const char *path,
                                       int32_t num_metadata, const char *const *keys,
                                       const char *const *values) {
  return guarded([&] {
    tcc::rt::Session &s = sessionOf(session);
    require(path, "path");
    if (num_metadata < 0 || (num_metadata > 0 && (!keys || !values)))
      tcc::rt::fail(TCC_ERROR_INVALID_ARGUMENT, "metadata: NULL keys or values");
    std::map<std::string, std::string> metadata;
    for (int32_t i = 0; i < num_metadata; ++i) {
      if (!keys[i] || !values[i])
        tcc::rt::fail(TCC_ERROR_INVALID_ARGUMENT, "metadata entry " + std::to_string(i) + " is NULL");
      if (std::string(keys[i]).rfind("tcc.", 0) == 0)
        tcc::rt::fail(TCC_ERROR_INVALID_ARGUMENT,
                      std::string("metadata key '") + keys[i] + "' is reserved (tcc.*)");
      metadata[keys[i]] = values[i];
    }
    tcc::rt::Session::Use use(s);
    s.saveCheckpoint(path, metadata);
  });
}

tcc_status tcc_session_load_checkpoint(tcc_session_t session, const char *path) {
  return guarded([&] {
    tcc::rt::Session &s = sessionOf(session);
    require(path, "path");
    tcc::rt::Session::Use use(s);
    s.loadCheckpoint(path);
  });
}

tcc_status tcc_checkpoint_get_metadata(const char *path, const char *key, char *out,
                                       size_t out_size) {
  return guarded([&] {
    require(path, "path");
    require(key, "key");
    require(out, "out");
    // Opening is I/O, the contents are the format: told apart by the step
    // that failed, never by the message's words.
    std::string message;
    tcc::rt::SafetensorsReader reader;
    if (!reader.openFile(path, &message))
      tcc::rt::fail(TCC_ERROR_IO, message);
    if (!reader.readHeader(&message))
      tcc::rt::fail(TCC_ERROR_FORMAT, message);
    auto it = reader.metadata().find(key);
    if (it == reader.metadata().end())
      tcc::rt::fail(TCC_ERROR_NOT_FOUND, std::string(path) + ": no metadata '" + key + "'");
    if (it->second.find('\0') != std::string::npos)
      tcc::rt::fail(TCC_ERROR_FORMAT, std::string(path) + ": metadata '" + key +
                                          "' holds a NUL character, which a C string cannot carry");
    if (it->second.size() + 1 > out_size)
      tcc::rt::fail(TCC_ERROR_INVALID_ARGUMENT,
                    std::string(path) + ": metadata '" + key + "' needs " +
                        std::to_string(it->second.size() + 1) + " bytes");
    std::memcpy(out, it->second.c_str(), it->second.size() + 1);
  });
}

tcc_status tcc_session_set_input(tcc_session_t session, const char *name, tcc_dtype dtype,
                                 int32_t rank, const int64_t *shape, const void *data,
                                 size_t size_bytes) {
  return guarded([&] {
    tcc::rt::Session &s = sessionOf(session);
    require(name, "name");
    tcc::rt::Session::Use use(s);
    s.setInput(name, dtype, rank, shape, data, size_bytes);
  });
}

tcc_status tcc_session_set_param(tcc_session_t session, const char *name, tcc_dtype dtype,
                                 int32_t rank, const int64_t *shape, const void *data,
                                 size_t size_bytes) {
  return guarded([&] {
    tcc::rt::Session &s = sessionOf(session);
    require(name, "name");
    tcc::rt::Session::Use use(s);
    s.setParam(name, dtype, rank, shape, data, size_bytes);
  });
}

tcc_status tcc_session_get_param(tcc_session_t session, const char *name, void *dst,
                                 size_t dst_size) {
  return guarded([&] {
    tcc::rt::Session &s = sessionOf(session);
    require(name, "name");
    tcc::rt::Session::Use use(s);
    s.getParam(name, dst, dst_size);
  });
}

tcc_status tcc_session_set_kernel_observer(tcc_session_t session, tcc_kernel_observer observer,
                                           void *user) {
  return guarded([&] { sessionOf(session).setKernelObserver(observer, user); });
}

void tcc_communicator_options_init(tcc_communicator_options *out_options) {
  if (!out_options)
    return;
  *out_options = {};
  out_options->struct_size = sizeof(tcc_communicator_options);
}

tcc_status tcc_communicator_create(const tcc_communicator_options *options,
                                   tcc_communicator_t *out_communicator) {
  return guarded([&] {
    require(out_communicator, "out_communicator");
    *out_communicator = nullptr;
    tcc_communicator_options o;
    tcc_communicator_options_init(&o);
    if (options) {
      if (options->struct_size < offsetof(tcc_communicator_options, timeout_seconds) + sizeof(double))
        fail(TCC_ERROR_INVALID_ARGUMENT, "tcc_communicator_options: struct_size " +
                                             std::to_string(options->struct_size) +
                                             " (use tcc_communicator_options_init)");
      o.timeout_seconds = options->timeout_seconds;
    }
    if (!(o.timeout_seconds >= 0))
      fail(TCC_ERROR_INVALID_ARGUMENT,
           "timeout_seconds " + std::to_string(o.timeout_seconds) + " is negative");
    auto handle = std::make_unique<tcc_communicator>();
    handle->impl = tcc::rt::Communicator::fromEnvironment(o.timeout_seconds > 0 ? o.timeout_seconds
                                                                                 : 60.0);
    *out_communicator = handle.release();
  });
}

tcc_status tcc_communicator_get_info(tcc_communicator_t communicator, int32_t *out_rank,
                                     int32_t *out_size, int32_t *out_local_rank) {
  return guarded([&] {
    require(communicator, "communicator");
    const tcc::rt::Communicator &c = *communicator->impl;
    if (out_rank)
      *out_rank = c.rank();
    if (out_size)
      *out_size = c.size();
    if (out_local_rank)
      *out_local_rank = c.localRank();
  });
}

tcc_status tcc_communicator_sum(tcc_communicator_t communicator, double *values, int64_t count) {
  return guarded([&] {
    require(communicator, "communicator");
    if (count < 0)
      fail(TCC_ERROR_INVALID_ARGUMENT, "count " + std::to_string(count) + " is negative");
    if (count > 0)
      require(values, "values");
    communicator->impl->sum(values, count, "sum of " + std::to_string(count) + " value(s)");
  });
}

tcc_status tcc_communicator_broadcast(tcc_communicator_t communicator, void *data, int64_t bytes,
                                      int32_t root) {
  return guarded([&] {
    require(communicator, "communicator");
    tcc::rt::Communicator &c = *communicator->impl;
    if (bytes < 0)
      fail(TCC_ERROR_INVALID_ARGUMENT, "bytes " + std::to_string(bytes) + " is negative");
    if (bytes > 0)
      require(data, "data");
    if (root < 0 || root >= c.size())
      fail(TCC_ERROR_INVALID_ARGUMENT,
           "root " + std::to_string(root) + " of " + std::to_string(c.size()) + " ranks");
    c.broadcast(data, size_t(bytes), root, "broadcast of " + std::to_string(bytes) + " bytes");
  });
}

void tcc_communicator_abort(tcc_communicator_t communicator, int32_t code) {
  if (communicator)
    communicator->impl->abort(code);
  std::_Exit(code);
}

void tcc_communicator_destroy(tcc_communicator_t communicator) { delete communicator; }

tcc_status tcc_session_set_communicator(tcc_session_t session, tcc_communicator_t communicator) {
  return guarded([&] {
    tcc::rt::Session &s = sessionOf(session);
    tcc::rt::Session::Use use(s);
    s.setCommunicator(communicator ? communicator->impl.get() : nullptr);
  });
}

tcc_status tcc_session_broadcast_state(tcc_session_t session, int32_t root) {
  return guarded([&] {
    tcc::rt::Session &s = sessionOf(session);
    tcc::rt::Session::Use use(s);
    s.broadcastState(root);
  });
}

tcc_status tcc_session_gather_state(tcc_session_t session, int32_t root) {
  return guarded([&] {
    tcc::rt::Session &s = sessionOf(session);
    tcc::rt::Session::Use use(s);
    s.gatherState(root);
  });
}

tcc_status tcc_session_get_optimizer_state_bytes(tcc_session_t session, int64_t *out_local,
                                                 int64_t *out_total) {
  return guarded([&] {
    tcc::rt::Session &s = sessionOf(session);
    require(out_local, "out_local");
    require(out_total, "out_total");
    s.optimizerStateBytes(out_local, out_total);
  });
}

tcc_status tcc_session_run(tcc_session_t session, const char *entry_name) {
  return guarded([&] {
    tcc::rt::Session &s = sessionOf(session);
    require(entry_name, "entry_name");
    tcc::rt::Session::Use use(s);
    s.run(entry_name);
  });
}

tcc_status tcc_session_get_output(tcc_session_t session, const char *name, const void **out_data,
                                  size_t *out_size) {
  return guarded([&] {
    tcc::rt::Session &s = sessionOf(session);
    require(name, "name");
    require(out_data, "out_data");
    require(out_size, "out_size");
    tcc::rt::Session::Use use(s);
    size_t size;
    const uint8_t *data = s.output(name, &size);
    *out_data = data;
    *out_size = size;
  });
}

tcc_status tcc_session_get_output_shape(tcc_session_t session, const char *name,
                                       int32_t capacity, int64_t *shape, int32_t *rank) {
  return guarded([&] {
    tcc::rt::Session &s = sessionOf(session);
    require(name, "name");
    require(rank, "rank");
    tcc::rt::Session::Use use(s);
    *rank = s.outputShape(name, shape, capacity);
  });
}

tcc_status tcc_session_copy_output(tcc_session_t session, const char *name, void *dst,
                                   size_t dst_size) {
  return guarded([&] {
    tcc::rt::Session &s = sessionOf(session);
    require(name, "name");
    tcc::rt::Session::Use use(s);
    size_t size;
    const uint8_t *data = s.output(name, &size);
    if (dst_size != size)
      fail(TCC_ERROR_INVALID_ARGUMENT, "output '" + std::string(name) + "' of " +
                                           s.artifact().path() + " has " + std::to_string(size) +
                                           " bytes, the destination " + std::to_string(dst_size));
    if (size > 0)
      require(dst, "dst");
    std::memcpy(dst, data, size);
  });
}

} // extern "C"
