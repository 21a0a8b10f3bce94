//===- onednn.cpp - library calls of an artifact, on oneDNN ---------------===//
//
// Only oneDNN's C API, resolved with dlsym: the runtime has no link-time
// dependency on it. Memory descriptors are plain row-major (strides), exactly
// the generated code's buffers; primitives are created with a user-managed
// scratchpad, which the session places at the end of its arena.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/onednn.h"

#include "runtime/cpu/parallel.h"
#include "runtime/error.h"

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
  X(dnnl_memory_desc_get_size)                                                 \
  X(dnnl_matmul_desc_init)                                                     \
  X(dnnl_dilated_convolution_forward_desc_init)                                \
  X(dnnl_primitive_attr_create)                                                \
  X(dnnl_primitive_attr_destroy)                                               \
  X(dnnl_primitive_attr_set_scratchpad_mode)                                   \
  X(dnnl_primitive_attr_set_post_ops)                                          \
  X(dnnl_post_ops_create)                                                      \
  X(dnnl_post_ops_destroy)                                                     \
  X(dnnl_post_ops_append_sum)                                                  \
  X(dnnl_primitive_desc_create)                                                \
  X(dnnl_primitive_desc_destroy)                                               \
  X(dnnl_primitive_desc_query)                                                 \
  X(dnnl_primitive_desc_query_md)                                              \
  X(dnnl_primitive_create)                                                     \
  X(dnnl_primitive_destroy)                                                    \
  X(dnnl_primitive_execute)                                                    \
  X(dnnl_memory_create)                                                        \
  X(dnnl_memory_set_data_handle)                                               \
  X(dnnl_memory_destroy)                                                       \
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
  // oneDNN is built for GNU OpenMP; its GOMP_* references must bind to our
  // libomp, so make libomp visible to it first.
  exposeOpenMPGlobally();
  const char *env = std::getenv("TCC_ONEDNN_LIBRARY");
  std::string file = env && *env ? env : "libdnnl.so.2";
  dlerror();
  void *handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    fail(TCC_ERROR_UNSUPPORTED, "cannot load oneDNN (" + file + "): " +
                                    (why ? why : "dlopen failed") +
                                    " (Debian: apt-get install libdnnl2)");
  }
  auto result = std::make_unique<Api>();
#define TCC_DNNL_RESOLVE(name)                                                 \
  result->name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name));    \
  if (!result->name)                                                           \
    fail(TCC_ERROR_UNSUPPORTED, file + " has no " #name "; tcc needs oneDNN 2.x");
  TCC_DNNL_FUNCTIONS(TCC_DNNL_RESOLVE)
#undef TCC_DNNL_RESOLVE
  std::string openmp = checkSingleOpenMP();
  if (!openmp.empty())
    fail(TCC_ERROR_UNSUPPORTED, "oneDNN would use a second OpenMP runtime: " + openmp);
  dnnl_status_t status = result->dnnl_engine_create(&result->engine, dnnl_cpu, 0);
  if (status != dnnl_success)
    fail(TCC_ERROR_UNSUPPORTED, std::string("oneDNN cannot create a CPU engine: ") +
                                    result->dnnl_status2str(status));
  loaded = result.release(); // lives as long as the process, like its engine
  return *loaded;
}

constexpr int32_t kMatmulParams = 7, kConvParams = 18;

/// Dense row-major strides of DIMS.
std::vector<dnnl_dim_t> denseStrides(const std::vector<dnnl_dim_t> &dims) {
  std::vector<dnnl_dim_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;)
    strides[i - 1] = strides[i] * dims[i];
  return strides;
}

} // namespace

std::string checkLibraryCall(const tcc_abi_library_call &call) {
  if (call.dtype != TCC_DTYPE_F32)
    return "dtype " + std::to_string(call.dtype) + " is not F32";
  if (call.num_operands != 3)
    return std::to_string(call.num_operands) + " operands, expected 3";
  int32_t expected = call.kind == TCC_LIBRARY_CALL_MATMUL   ? kMatmulParams
                     : call.kind == TCC_LIBRARY_CALL_CONV2D ? kConvParams
                                                            : -1;
  if (expected < 0)
    return "unknown kind " + std::to_string(call.kind) + " (a newer tcc made this artifact)";
  if (call.num_params != expected || !call.params)
    return std::to_string(call.num_params) + " parameters, expected " + std::to_string(expected);
  const int64_t *p = call.params;
  auto flag = [](int64_t v) { return v == 0 || v == 1; };
  if (call.kind == TCC_LIBRARY_CALL_MATMUL) {
    for (int i = 0; i < 4; ++i)
      if (p[i] <= 0)
        return "matmul size " + std::to_string(p[i]) + " is not positive";
    if (!flag(p[4]) || !flag(p[5]) || !flag(p[6]))
      return "matmul flags must be 0 or 1";
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

struct LibraryCalls::Call {
  dnnl_primitive_t primitive = nullptr;
  dnnl_memory_t memory[4] = {}; // src, weights, dst, scratchpad
  std::string implementation;
  ~Call() {
    const Api &a = api();
    for (dnnl_memory_t m : memory)
      if (m)
        a.dnnl_memory_destroy(m);
    if (primitive)
      a.dnnl_primitive_destroy(primitive);
  }
};

LibraryCalls::LibraryCalls(const tcc_abi_library_call *calls, int32_t count,
                           const std::string &what)
    : what_(what) {
  const Api &a = api();
  auto check = [&](dnnl_status_t status, int32_t index, const char *step) {
    if (status != dnnl_success)
      fail(TCC_ERROR_UNSUPPORTED, what + ": library call #" + std::to_string(index) + ": oneDNN " +
                                      step + " failed: " + a.dnnl_status2str(status));
  };
  dnnl_stream_t stream = nullptr;
  check(a.dnnl_stream_create(&stream, a.engine, dnnl_stream_default_flags), -1, "stream creation");
  stream_ = stream;

  for (int32_t i = 0; i < count; ++i) {
    const tcc_abi_library_call &c = calls[i];
    const int64_t *p = c.params;
    // Operand descriptors: src, weights, dst.
    dnnl_memory_desc_t md[3];
    auto describe = [&](int k, std::vector<dnnl_dim_t> dims, std::vector<dnnl_dim_t> strides) {
      check(a.dnnl_memory_desc_init_by_strides(&md[k], int(dims.size()), dims.data(), dnnl_f32,
                                               strides.data()),
            i, "memory descriptor");
    };
    bool accumulate;
    dnnl_matmul_desc_t matmul;
    dnnl_convolution_desc_t conv;
    const_dnnl_op_desc_t op;
    if (c.kind == TCC_LIBRARY_CALL_MATMUL) {
      dnnl_dim_t b = p[0], m = p[1], n = p[2], k = p[3];
      bool ta = p[4], tb = p[5];
      accumulate = p[6];
      if (b == 1) {
        describe(0, {m, k}, ta ? std::vector<dnnl_dim_t>{1, m} : std::vector<dnnl_dim_t>{k, 1});
        describe(1, {k, n}, tb ? std::vector<dnnl_dim_t>{1, k} : std::vector<dnnl_dim_t>{n, 1});
        describe(2, {m, n}, {n, 1});
      } else {
        describe(0, {b, m, k},
                 ta ? std::vector<dnnl_dim_t>{m * k, 1, m} : std::vector<dnnl_dim_t>{m * k, k, 1});
        describe(1, {b, k, n},
                 tb ? std::vector<dnnl_dim_t>{k * n, 1, k} : std::vector<dnnl_dim_t>{k * n, n, 1});
        describe(2, {b, m, n}, {m * n, n, 1});
      }
      check(a.dnnl_matmul_desc_init(&matmul, &md[0], &md[1], nullptr, &md[2]), i, "matmul");
      op = &matmul;
    } else {
      std::vector<dnnl_dim_t> x = {p[0], p[1], p[2], p[3]}, w = {p[4], p[1], p[5], p[6]},
                              y = {p[0], p[4], p[7], p[8]};
      describe(0, x, denseStrides(x));
      describe(1, w, denseStrides(w));
      describe(2, y, denseStrides(y));
      dnnl_dims_t strides = {p[9], p[10]}, dilations = {p[11] - 1, p[12] - 1},
                  padLow = {p[13], p[14]}, padHigh = {p[15], p[16]};
      accumulate = p[17];
      check(a.dnnl_dilated_convolution_forward_desc_init(
                &conv, dnnl_forward_inference, dnnl_convolution_direct, &md[0], &md[1], nullptr,
                &md[2], strides, dilations, padLow, padHigh),
            i, "convolution");
      op = &conv;
    }

    dnnl_primitive_attr_t attr = nullptr;
    check(a.dnnl_primitive_attr_create(&attr), i, "attribute creation");
    dnnl_post_ops_t postOps = nullptr;
    dnnl_status_t status = a.dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
    if (status == dnnl_success && accumulate) {
      status = a.dnnl_post_ops_create(&postOps);
      if (status == dnnl_success)
        status = a.dnnl_post_ops_append_sum(postOps, 1.0f);
      if (status == dnnl_success)
        status = a.dnnl_primitive_attr_set_post_ops(attr, postOps);
    }
    dnnl_primitive_desc_t pd = nullptr;
    if (status == dnnl_success)
      status = a.dnnl_primitive_desc_create(&pd, op, attr, a.engine, nullptr);
    if (postOps)
      a.dnnl_post_ops_destroy(postOps);
    a.dnnl_primitive_attr_destroy(attr);
    check(status, i, "primitive descriptor");

    auto call = std::make_unique<Call>();
    const char *impl = nullptr;
    if (a.dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl)
      call->implementation = impl;
    const dnnl_memory_desc_t *scratch = a.dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    size_t scratchBytes = scratch ? a.dnnl_memory_desc_get_size(scratch) : 0;
    scratchpadSize_ = std::max(scratchpadSize_, scratchBytes);
    status = a.dnnl_primitive_create(&call->primitive, pd);
    a.dnnl_primitive_desc_destroy(pd);
    check(status, i, "primitive creation");
    for (int k = 0; k < 3; ++k)
      check(a.dnnl_memory_create(&call->memory[k], &md[k], a.engine, DNNL_MEMORY_NONE), i,
            "memory creation");
    if (scratchBytes > 0)
      check(a.dnnl_memory_create(&call->memory[3], scratch, a.engine, DNNL_MEMORY_NONE), i,
            "scratchpad memory creation");
    calls_.push_back(std::move(call));
  }
}

LibraryCalls::~LibraryCalls() {
  calls_.clear();
  if (stream_)
    api().dnnl_stream_destroy(static_cast<dnnl_stream_t>(stream_));
}

void LibraryCalls::run(void *self, int32_t index, void *const *operands) {
  auto *calls = static_cast<LibraryCalls *>(self);
  const Api &a = api();
  if (index < 0 || size_t(index) >= calls->calls_.size()) {
    if (calls->error_.empty())
      calls->error_ = calls->what_ + ": generated code asked for library call #" +
                      std::to_string(index) + " of " + std::to_string(calls->calls_.size());
    return;
  }
  Call &c = *calls->calls_[size_t(index)];
  static constexpr int kArgs[4] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST,
                                   DNNL_ARG_SCRATCHPAD};
  dnnl_exec_arg_t args[4];
  int nargs = 0;
  dnnl_status_t status = dnnl_success;
  for (int k = 0; k < 4 && status == dnnl_success; ++k) {
    if (!c.memory[k])
      continue;
    void *data = k < 3 ? operands[k] : calls->scratchpad_;
    status = a.dnnl_memory_set_data_handle(c.memory[k], data);
    args[nargs++] = {kArgs[k], c.memory[k]};
  }
  auto stream = static_cast<dnnl_stream_t>(calls->stream_);
  if (status == dnnl_success)
    status = a.dnnl_primitive_execute(c.primitive, stream, nargs, args);
  if (status == dnnl_success)
    status = a.dnnl_stream_wait(stream);
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
