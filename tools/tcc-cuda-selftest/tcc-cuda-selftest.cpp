//===- tcc-cuda-selftest.cpp - checks the runtime's CUDA half on a GPU -----===//
//
// Runs the runtime's own CUDA code paths (module load and launch_kernel,
// cuBLASLt matmuls with their epilogues and in f32, bf16 and f16, cuDNN
// convolutions (grouped too) and their data and filter gradients, CUDA graph capture and replay, a session's input staging on
// the copy stream) on random data against CPU references, and prints a
// PASS/FAIL table. With TCC_CUDA_DEVICE=emulated it runs on the emulated
// CUDA device (host twins of its kernels, the library calls on oneDNN under
// the CUDA contract; test/emulation/cuda-selftest.test).
// Exit 0 only when everything passes; 1 (with "no CUDA device: ...") on a
// machine without a GPU.
//
//===----------------------------------------------------------------------===//

#include "runtime/artifact.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/driver.h"
#include "runtime/error.h"
#include "runtime/session.h"
#include "runtime/testing/conv_reference.h"
#include "runtime/testing/matmul_reference.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace tcc::rt;

namespace {

/// y[i] = a * x[i] + y[i] for i < n, written by hand for sm_80 (the driver
/// JIT-compiles it for newer devices).
const char kPtx[] = R"(.version 7.0
.target sm_80
.address_size 64
.visible .entry tcc_saxpy(.param .u64 px, .param .u64 py, .param .f32 pa, .param .u32 pn)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [px];
  ld.param.u64 %rd2, [py];
  ld.param.f32 %f1, [pa];
  ld.param.u32 %r1, [pn];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r5, %r1;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd3, %rd1;
  cvta.to.global.u64 %rd4, %rd2;
  mul.wide.u32 %rd5, %r5, 4;
  add.s64 %rd6, %rd3, %rd5;
  add.s64 %rd7, %rd4, %rd5;
  ld.global.f32 %f2, [%rd6];
  ld.global.f32 %f3, [%rd7];
  fma.rn.f32 %f3, %f1, %f2, %f3;
  st.global.f32 [%rd7], %f3;
DONE:
  ret;
}
.visible .entry tcc_scale(.param .u64 pd, .param .u64 ps, .param .f32 pa, .param .u32 pn)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [pd];
  ld.param.u64 %rd2, [ps];
  ld.param.f32 %f1, [pa];
  ld.param.u32 %r1, [pn];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r5, %r1;
  @%p1 bra SCALE_DONE;
  cvta.to.global.u64 %rd3, %rd1;
  cvta.to.global.u64 %rd4, %rd2;
  mul.wide.u32 %rd5, %r5, 4;
  add.s64 %rd6, %rd3, %rd5;
  add.s64 %rd7, %rd4, %rd5;
  ld.global.f32 %f2, [%rd7];
  mul.rn.f32 %f3, %f1, %f2;
  st.global.f32 [%rd6], %f3;
SCALE_DONE:
  ret;
}
)";

/// The index PTX's `mad.lo.s32 %ctaid.x, %ntid.x, %tid.x` computes, or -1
/// past N (the kernels' bounds check).
int64_t globalIndex(const tcc_abi_emulated_thread *t, uint32_t n) {
  uint32_t i = uint32_t(t->block[0]) * uint32_t(t->block_dim[0]) + uint32_t(t->thread[0]);
  return i >= n ? -1 : int64_t(i);
}

/// Host twins of the two PTX kernels, instruction for instruction (the
/// emulated CUDA device runs these: TCC_CUDA_DEVICE=emulated). PARAMS point
/// at the kernel's parameters, as cuLaunchKernel's do.
void saxpyTwin(const tcc_abi_emulated_thread *t, void **params) {
  float *x = *static_cast<float **>(params[0]), *y = *static_cast<float **>(params[1]);
  float a = *static_cast<float *>(params[2]);
  int64_t i = globalIndex(t, *static_cast<uint32_t *>(params[3]));
  if (i >= 0)
    y[i] = std::fma(a, x[i], y[i]); // fma.rn.f32
}

void scaleTwin(const tcc_abi_emulated_thread *t, void **params) {
  float *d = *static_cast<float **>(params[0]), *src = *static_cast<float **>(params[1]);
  float a = *static_cast<float *>(params[2]);
  int64_t i = globalIndex(t, *static_cast<uint32_t *>(params[3]));
  if (i >= 0)
    d[i] = a * src[i]; // mul.rn.f32
}

/// The twins in the order of the kernel tables below (tcc_saxpy, tcc_scale):
/// no shared memory, no barriers or shuffles.
const tcc_abi_emulated_kernel kTwins[] = {{&saxpyTwin, 0, 0}, {&scaleTwin, 0, 0}};

constexpr uint32_t kSaxpyN = 1000;
/// fp32 against float64; TF32 (TCC_CUDA_TF32=1) keeps 10 mantissa bits.
const double kTolerance = cuda::tf32Enabled() ? 5e-3 : 1e-4;
/// bf16 / f16 operands (the reference reads the same rounded inputs) with
/// fp32 sums: the error is the output's rounding, half an ulp of 8 / 11
/// significant bits (2e-3 / 2.4e-4 of the value), with margin.
constexpr double kBf16Tolerance = 1e-2, kF16Tolerance = 2e-3, kTf32Tolerance = 5e-3;
constexpr int64_t kBias = TCC_MATMUL_EPILOGUE_BIAS, kResidual = TCC_MATMUL_EPILOGUE_RESIDUAL,
                  kRelu = TCC_MATMUL_EPILOGUE_RELU;
const std::string kWhat = "tcc-cuda-selftest";

int failures = 0;

void report(bool pass, const std::string &name, const std::string &detail) {
  std::printf("%s  %-58s %s\n", pass ? "PASS" : "FAIL", name.c_str(), detail.c_str());
  failures += !pass;
}


using tcc::testing::decode;
using tcc::testing::elementSize;
using tcc::testing::encode;

/// A device buffer of DEVICE's holding HOST's values as DTYPE; HOST is
/// rounded to DTYPE in place, so that a reference computes with the values
/// the device reads.
cuda::DeviceBuffer upload(cuda::Device &device, std::vector<float> &host, const std::string &what,
                          int32_t dtype = TCC_DTYPE_F32) {
  size_t size = elementSize(dtype);
  std::vector<uint8_t> bytes(host.size() * size);
  for (size_t i = 0; i < host.size(); ++i) {
    encode(host[i], dtype, &bytes[i * size]);
    host[i] = decode(&bytes[i * size], dtype);
  }
  cuda::DeviceBuffer b(device.context(), bytes.size(), what);
  cuda::check(b.driver().cuMemcpyHtoD(b.ptr(), bytes.data(), bytes.size()), "cuMemcpyHtoD",
              kWhat + ": uploading " + what);
  return b;
}

std::vector<float> download(const cuda::DeviceBuffer &b, size_t n, const std::string &what,
                            int32_t dtype = TCC_DTYPE_F32) {
  size_t size = elementSize(dtype);
  std::vector<uint8_t> bytes(n * size);
  cuda::check(b.driver().cuMemcpyDtoH(bytes.data(), b.ptr(), bytes.size()), "cuMemcpyDtoH",
              kWhat + ": downloading " + what);
  std::vector<float> host(n);
  for (size_t i = 0; i < n; ++i)
    host[i] = decode(&bytes[i * size], dtype);
  return host;
}

std::string errorText(double e) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "max rel err %.2e", e);
  return buffer;
}

using tcc::testing::matmulReference;
using tcc::testing::randomVector;
using tcc::testing::relativeError;

int32_t dummyEntry(uint8_t *, uint8_t *, const tcc_abi_runtime *) { return 0; }

/// The session check's entry: sum += x (state), out = sum, then x's arena
/// slot is overwritten (as the memory plan may reuse an input's slot), so
/// every run depends on its own input's upload.
constexpr uint32_t kStepN = 4096;
int32_t stepEntry(uint8_t *arena, uint8_t *state, const tcc_abi_runtime *rt) {
  CUdeviceptr x = CUdeviceptr(arena), out = x + kStepN * sizeof(float), sum = CUdeviceptr(state);
  float one = 1.0f, clobber = -7.0f;
  uint32_t n = kStepN;
  void *add[] = {&x, &sum, &one, &n};
  rt->launch_kernel(rt->device_context, 0, add);
  void *copy[] = {&out, &sum, &one, &n};
  rt->launch_kernel(rt->device_context, 1, copy);
  void *scratch[] = {&x, &x, &clobber, &n};
  rt->launch_kernel(rt->device_context, 1, scratch);
  return 0;
}

/// A session's input staging (e): STEPS runs of stepEntry, the input of run
/// k + 1 set while run k computes when OVERLAP (as tcc-run's training loop
/// does), else after reading run k's output. Returns every run's output.
std::vector<std::vector<float>> runSteps(const std::shared_ptr<Artifact> &artifact,
                                         const std::vector<std::vector<float>> &xs, bool overlap) {
  tcc_session_options options{};
  options.struct_size = sizeof options;
  Session session(artifact, options);
  const int64_t shape[] = {kStepN};
  size_t bytes = kStepN * sizeof(float);
  std::vector<std::vector<float>> outs;
  session.setInput("x", TCC_DTYPE_F32, 1, shape, xs[0].data(), bytes);
  for (size_t k = 0; k < xs.size(); ++k) {
    if (!overlap && k > 0)
      session.setInput("x", TCC_DTYPE_F32, 1, shape, xs[k].data(), bytes);
    session.run("step");
    if (overlap && k + 1 < xs.size())
      session.setInput("x", TCC_DTYPE_F32, 1, shape, xs[k + 1].data(), bytes);
    size_t size = 0;
    const auto *out = reinterpret_cast<const float *>(session.output("out", &size));
    outs.emplace_back(out, out + size / sizeof(float));
  }
  return outs;
}

/// A library call of the self-test's descriptor: its dtype and parameters
/// (see abi.h; a matmul has 7, 8 or 10, a convolution 18, 19 or 20) and its
/// kind where the count does not tell (a convolution's gradient, a matmul
/// of 10).
struct CallCase {
  int32_t dtype;
  std::vector<int64_t> params;
  int32_t kind = 0; ///< 0: MATMUL or CONV2D, by the parameter count
  int32_t callKind() const {
    return kind ? kind : params.size() < 9 ? TCC_LIBRARY_CALL_MATMUL : TCC_LIBRARY_CALL_CONV2D;
  }
};

/// The library calls: every matmul variant, matmuls with epilogues, in
/// bf16 and f16, one with the 7 parameters of older artifacts, then
/// NUM_CONVS convolutions, and last one accumulating matmul for the graph
/// test.
struct CallCases {
  std::vector<CallCase> cases;
  size_t numMatmuls = 0, numConvs = 0;
};

CallCases callCases() {
  CallCases all;
  std::vector<CallCase> &cases = all.cases;
  for (int64_t batch : {1, 3})
    for (int64_t ta : {0, 1})
      for (int64_t tb : {0, 1})
        for (int64_t acc : {0, 1})
          cases.push_back({TCC_DTYPE_F32, {batch, 37, 19, 53, ta, tb, acc, 0}});
  // batch, trans_a, trans_b, epilogue
  const int64_t epilogues[][4] = {{1, 0, 0, kBias},
                                  {1, 0, 1, kBias | kRelu},
                                  {1, 1, 0, kResidual},
                                  {1, 0, 0, kRelu},
                                  {1, 0, 1, kBias | kResidual},
                                  {3, 0, 1, kBias | kResidual | kRelu},
                                  {3, 1, 0, kBias}};
  for (const auto &e : epilogues)
    cases.push_back({TCC_DTYPE_F32, {e[0], 37, 19, 53, e[1], e[2], 0, e[3]}});
  for (int32_t dtype : {TCC_DTYPE_BF16, TCC_DTYPE_F16}) {
    cases.push_back({dtype, {1, 64, 48, 96, 0, 0, 0, 0}});
    cases.push_back({dtype, {1, 37, 19, 53, 0, 1, 1, 0}});
    cases.push_back({dtype, {3, 37, 19, 53, 1, 0, 0, 0}});
    cases.push_back({dtype, {1, 64, 48, 96, 0, 1, 0, kBias | kRelu}});
    cases.push_back({dtype, {1, 64, 48, 96, 0, 1, 0, kBias | kResidual}});
    // 16-bit A and B into f32 sums (C_DTYPE f32: what tcc emits for a
    // 16-bit matmul whose sums feed more than their rounding).
    cases.push_back({dtype, {1, 64, 48, 96, 0, 1, 0, 0, TCC_DTYPE_F32, 0}, TCC_LIBRARY_CALL_MATMUL});
    cases.push_back({dtype, {3, 37, 19, 53, 1, 0, 1, 0, TCC_DTYPE_F32, 0}, TCC_LIBRARY_CALL_MATMUL});
  }
  // TF32 math (tcc --precision=tf32), with and without an epilogue.
  cases.push_back({TCC_DTYPE_F32, {1, 64, 48, 96, 0, 1, 0, 0, 0, 1}, TCC_LIBRARY_CALL_MATMUL});
  cases.push_back({TCC_DTYPE_F32, {1, 64, 48, 96, 0, 0, 0, kBias | kRelu, 0, 1},
                   TCC_LIBRARY_CALL_MATMUL});
  cases.push_back({TCC_DTYPE_F32, {1, 37, 19, 53, 1, 1, 0}}); // 7 parameters
  all.numMatmuls = cases.size();
  // N C H W F KH KW OH OW sh sw dh dw pt pl pb pr acc
  cases.push_back({TCC_DTYPE_F32, {2, 3, 11, 9, 4, 3, 3, 6, 5, 2, 2, 1, 1, 1, 1, 1, 1, 0}});
  cases.push_back({TCC_DTYPE_F32, {2, 3, 11, 9, 4, 3, 3, 6, 5, 2, 2, 1, 1, 1, 1, 1, 1, 1}});
  cases.push_back({TCC_DTYPE_F32, {1, 5, 10, 12, 3, 3, 2, 10, 12, 1, 1, 2, 2, 2, 1, 2, 1, 0}});
  cases.push_back({TCC_DTYPE_F32, {3, 8, 16, 16, 16, 3, 3, 16, 16, 1, 1, 1, 1, 1, 1, 1, 1, 0}});
  // TF32 math (20 parameters: groups 1, then the math mode).
  cases.push_back(
      {TCC_DTYPE_F32, {3, 8, 16, 16, 16, 3, 3, 16, 16, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1}});
  // Grouped and depthwise, then both gradients of strided, dilated, padded,
  // grouped and depthwise convolutions (and accumulating ones).
  const std::vector<int64_t> gradients[] = {
      {2, 4, 6, 6, 6, 3, 3, 6, 6, 1, 1, 1, 1, 1, 1, 1, 1, 0, 2},
      {2, 8, 9, 9, 8, 3, 3, 5, 5, 2, 2, 1, 1, 1, 1, 1, 1, 0, 8},
      {2, 3, 11, 9, 4, 3, 3, 6, 5, 2, 2, 1, 1, 1, 1, 1, 1, 0},
      {1, 5, 10, 12, 3, 3, 2, 10, 12, 1, 1, 2, 2, 2, 1, 2, 1, 1},
      {3, 8, 16, 16, 16, 1, 1, 8, 8, 2, 2, 1, 1, 0, 0, 0, 0, 0},
  };
  for (size_t g = 0; g < 2; ++g)
    cases.push_back({TCC_DTYPE_F32, gradients[g]});
  for (const auto &p : gradients)
    for (int32_t kind : {TCC_LIBRARY_CALL_CONV2D_BACKWARD_DATA,
                         TCC_LIBRARY_CALL_CONV2D_BACKWARD_WEIGHTS})
      cases.push_back({TCC_DTYPE_F32, p, kind});
  all.numConvs = cases.size() - all.numMatmuls;
  cases.push_back({TCC_DTYPE_F32, {1, 64, 48, 96, 0, 0, 1, 0}});
  return all;
}

/// The error DEVICE recorded since the last call (empty if none), after
/// waiting for its work on WHAT.
std::string finish(cuda::Device &device, const std::string &what) {
  std::string error = device.takeError();
  device.context().synchronize(kWhat + ": " + what);
  return error;
}

/// (a) The kernel, through launch_kernel.
void checkKernel(cuda::Device &device, std::mt19937_64 &rng) {
  std::vector<float> x = randomVector(kSaxpyN, rng), y = randomVector(kSaxpyN, rng);
  float a = 0.75f;
  cuda::DeviceBuffer dx = upload(device, x, "x"), dy = upload(device, y, "y");
  CUdeviceptr px = dx.ptr(), py = dy.ptr();
  uint32_t n = kSaxpyN;
  void *args[] = {&px, &py, &a, &n};
  cuda::Device::launchKernel(&device, 0, args);
  std::string error = finish(device, "saxpy kernel");
  std::vector<double> ref(kSaxpyN);
  for (size_t i = 0; i < kSaxpyN; ++i)
    ref[i] = double(a) * x[i] + y[i];
  double e = error.empty() ? relativeError(download(dy, kSaxpyN, "y"), ref) : INFINITY;
  report(error.empty() && e <= 1e-6, "kernel tcc_saxpy (n=1000)",
         error.empty() ? errorText(e) : error);
}

/// (b), (c) Library call INDEX (CALL: a matmul when MATMUL, else a
/// convolution or a convolution gradient) on random operands; the
/// gradients against float64 finite differences (conv_reference.h).
void checkLibraryCall(cuda::Device &device, const CallCase &call, int32_t index, bool matmul,
                      std::mt19937_64 &rng) {
  const std::vector<int64_t> &params = call.params;
  const int64_t *p = params.data();
  int32_t dtype = call.dtype;
  int64_t epilogue = matmul && params.size() > 7 ? p[7] : 0;
  // C's (and the bias's and D's) dtype, and TF32 math (abi.h's appended
  // parameters).
  int32_t cDtype = matmul && params.size() == 10 && p[8] ? int32_t(p[8]) : dtype;
  bool tf32 = params.size() == (matmul ? 10u : 20u) && params.back() == TCC_LIBRARY_MATH_TF32;
  size_t na, nb, nc;
  std::string name;
  if (matmul) {
    na = size_t(p[0] * p[1] * p[3]);
    nb = size_t(p[0] * p[3] * p[2]);
    nc = size_t(p[0] * p[1] * p[2]);
    name = std::string(dtype == TCC_DTYPE_F32 ? "" : dtype == TCC_DTYPE_BF16 ? "bf16 " : "f16 ") +
           "matmul batch=" + std::to_string(p[0]) + " " + std::to_string(p[1]) + "x" +
           std::to_string(p[2]) + "x" + std::to_string(p[3]) + " ta=" + std::to_string(p[4]) +
           " tb=" + std::to_string(p[5]) + " acc=" + std::to_string(p[6]) +
           (params.size() == 7 ? " (7 params)" : "") + (epilogue & kBias ? " +bias" : "") +
           (epilogue & kResidual ? " +residual" : "") + (epilogue & kRelu ? " relu" : "") +
           (cDtype != dtype ? " -> f32" : "") + (tf32 ? " tf32" : "");
  } else {
    int32_t kind = call.callKind();
    std::vector<size_t> sizes = tcc::testing::convOperandSizes(kind, params);
    na = sizes[0], nb = sizes[1], nc = sizes[2];
    name = std::string(kind == TCC_LIBRARY_CALL_CONV2D_BACKWARD_DATA      ? "conv dX"
                       : kind == TCC_LIBRARY_CALL_CONV2D_BACKWARD_WEIGHTS ? "conv dW"
                                                                          : "conv") +
           " N" + std::to_string(p[0]) + " C" + std::to_string(p[1]) + " " +
           std::to_string(p[2]) + "x" + std::to_string(p[3]) + " F" + std::to_string(p[4]) +
           " k" + std::to_string(p[5]) + "x" + std::to_string(p[6]) + " s" +
           std::to_string(p[9]) + " d" + std::to_string(p[11]) + " pad" + std::to_string(p[13]) +
           "," + std::to_string(p[14]) + " acc=" + std::to_string(p[17]) +
           (params.size() > 18 ? " g" + std::to_string(p[18]) : "") + (tf32 ? " tf32" : "");
  }
  std::vector<float> a = randomVector(na, rng), b = randomVector(nb, rng),
                     c = randomVector(nc, rng);
  cuda::DeviceBuffer da = upload(device, a, "A", dtype), db = upload(device, b, "B", dtype),
                     dc = upload(device, c, "C", cDtype);
  std::vector<void *> operands = {da.data(), db.data(), dc.data()};
  // The epilogue's operands, when the call has them (1-element buffers
  // otherwise, never read).
  std::vector<float> bias = randomVector(epilogue & kBias ? size_t(p[2]) : 1, rng);
  std::vector<float> d = randomVector(epilogue & kResidual ? nc : 1, rng);
  cuda::DeviceBuffer dbias = upload(device, bias, "bias", cDtype),
                     dd = upload(device, d, "D", cDtype);
  if (epilogue & kBias)
    operands.push_back(dbias.data());
  if (epilogue & kResidual)
    operands.push_back(dd.data());
  cuda::Device::libraryCall(&device, index, operands.data());
  std::string error = finish(device, name);
  std::vector<double> ref =
      matmul ? matmulReference(params, a, b, c, bias, d)
             : tcc::testing::convCallReference(call.callKind(), params, a, b, c);
  double e = error.empty() ? relativeError(download(dc, nc, "C", cDtype), ref) : INFINITY;
  // 16-bit operands are rounded on upload, so the reference sees what the
  // library reads; the tolerance is the output's rounding (f32 sums: f32's),
  // or TF32's rounding of the f32 operands (10-bit mantissas, 2^-11 each).
  double tolerance = tf32                      ? kTf32Tolerance
                     : cDtype == TCC_DTYPE_BF16 ? kBf16Tolerance
                     : cDtype == TCC_DTYPE_F16  ? kF16Tolerance
                                                : kTolerance;
  report(error.empty() && e <= tolerance, name, error.empty() ? errorText(e) : error);
}

/// (d) A CUDA graph of the kernel and the accumulating matmul ACCUMULATING
/// (library call CALL): run 1 is eager, run 2 captures and launches, run 3 replays.
void checkGraph(cuda::Device &device, const CallCase &accumulating, int32_t call,
                std::mt19937_64 &rng) {
  const std::vector<int64_t> &params = accumulating.params;
  const int64_t *p = params.data();
  std::vector<float> x = randomVector(kSaxpyN, rng), y = randomVector(kSaxpyN, rng);
  std::vector<float> a = randomVector(size_t(p[1] * p[3]), rng),
                     b = randomVector(size_t(p[3] * p[2]), rng),
                     c = randomVector(size_t(p[1] * p[2]), rng);
  cuda::DeviceBuffer dx = upload(device, x, "x"), dy = upload(device, y, "y"),
                     da = upload(device, a, "A"), db = upload(device, b, "B"),
                     dc = upload(device, c, "C");
  CUdeviceptr px = dx.ptr(), py = dy.ptr();
  float alpha = 0.5f;
  uint32_t n = kSaxpyN;
  void *args[] = {&px, &py, &alpha, &n};
  void *operands[] = {da.data(), db.data(), dc.data()};
  std::string error;
  const int runs = 3;
  for (int r = 0; r < runs && error.empty(); ++r) {
    int32_t code = device.execute(0, [&] {
      cuda::Device::launchKernel(&device, 0, args);
      cuda::Device::libraryCall(&device, call, operands);
      return 0;
    });
    error = finish(device, "graph run " + std::to_string(r + 1));
    if (code != 0)
      error = "code " + std::to_string(code);
  }
  // TCC_CUDA_GRAPH=0: the three runs are eager and there is no graph.
  const char *env = std::getenv("TCC_CUDA_GRAPH");
  bool graphsWanted = !(env && std::string(env) == "0");
  bool graph = device.hasGraph(0) == graphsWanted;
  std::vector<double> refY(kSaxpyN);
  for (size_t i = 0; i < kSaxpyN; ++i)
    refY[i] = y[i] + runs * double(alpha) * x[i];
  std::vector<double> product = matmulReference(params, a, b, c, {}, {});
  std::vector<double> refC(c.size());
  for (size_t i = 0; i < c.size(); ++i)
    refC[i] = c[i] + runs * (product[i] - c[i]);
  double e = error.empty() ? std::max(relativeError(download(dy, kSaxpyN, "y"), refY),
                                      relativeError(download(dc, c.size(), "C"), refC))
                           : INFINITY;
  std::string detail = !error.empty() ? error
                       : !graph ? (graphsWanted ? "no graph: " + device.graphFailure(0)
                                                : "a graph despite TCC_CUDA_GRAPH=0")
                                : errorText(e);
  report(error.empty() && graph && e <= kTolerance,
         "CUDA graph: saxpy + matmul (eager, capture, replay)", detail);
}

/// (e) A session's runs with the next input uploading on the copy stream
/// while the previous run computes (eager, capture, replays): the outputs
/// equal those of synchronous uploads and the float32 running sums exactly
/// (the kernel's fma by 1.0 rounds like an addition).
void checkSessionStaging(std::mt19937_64 &rng) {
  const int64_t shape[] = {kStepN};
  const int64_t bytes = kStepN * sizeof(float);
  tcc_abi_tensor tensors[] = {
      {"x", TCC_ROLE_INPUT, TCC_DTYPE_F32, TCC_REGION_ARENA, 1, shape, 0, bytes},
      {"out", TCC_ROLE_OUTPUT, TCC_DTYPE_F32, TCC_REGION_ARENA, 1, shape, bytes, bytes},
      {"sum", TCC_ROLE_STATE, TCC_DTYPE_F32, TCC_REGION_STATE, 1, shape, 0, bytes}};
  int32_t indices[] = {0, 1};
  tcc_abi_entry steps[] = {{"step", &stepEntry, 2, indices}};
  int32_t grid = int32_t((kStepN + 127) / 128);
  tcc_abi_kernel stepKernels[] = {{"tcc_saxpy", {grid, 1, 1}, {128, 1, 1}, 0, 4},
                                  {"tcc_scale", {grid, 1, 1}, {128, 1, 1}, 0, 4}};
  tcc_abi_descriptor sd{};
  sd.abi_version = TCC_ABI_VERSION;
  sd.struct_size = sizeof sd;
  sd.arena_size = 2 * bytes;
  sd.state_size = bytes;
  sd.alignment = 64;
  sd.num_tensors = 3;
  sd.tensors = tensors;
  sd.num_entries = 1;
  sd.entries = steps;
  sd.device = "cuda:sm_80";
  sd.num_kernels = 2;
  sd.kernels = stepKernels;
  sd.ptx = kPtx;
  sd.emulated_kernels = kTwins;
  const int runs = 6;
  std::vector<std::vector<float>> xs;
  for (int k = 0; k < runs; ++k)
    xs.push_back(randomVector(kStepN, rng));
  std::string detail;
  bool pass = false;
  try {
    auto artifact = Artifact::fromDescriptor(sd, kWhat + " (session check)");
    std::vector<std::vector<float>> overlapped = runSteps(artifact, xs, true),
                                    synchronous = runSteps(artifact, xs, false);
    std::vector<float> sum(kStepN, 0.0f);
    int wrong = 0, differ = 0;
    for (int k = 0; k < runs; ++k) {
      for (size_t i = 0; i < kStepN; ++i)
        sum[i] += xs[size_t(k)][i];
      wrong += overlapped[size_t(k)] != sum;
      differ += overlapped[size_t(k)] != synchronous[size_t(k)];
    }
    pass = wrong == 0 && differ == 0;
    detail = pass ? "exact"
                  : std::to_string(wrong) + " run(s) off the sums, " + std::to_string(differ) +
                        " unlike synchronous uploads";
  } catch (const Error &e) {
    detail = e.what();
  }
  report(pass, "session: next input uploads while a run computes (6 runs)", detail);
}

int run() {
  auto start = std::chrono::steady_clock::now();
  cuda::driver(); // without a device (or the emulation): "no CUDA device: <why>"
  std::mt19937_64 rng(42);

  CallCases all = callCases();
  const std::vector<CallCase> &cases = all.cases;
  std::vector<tcc_abi_library_call> calls;
  for (const CallCase &c : cases) {
    bool matmul = c.callKind() == TCC_LIBRARY_CALL_MATMUL;
    int64_t epilogue = matmul && c.params.size() >= 8 ? c.params[7] : 0;
    calls.push_back({c.callKind(), c.dtype, int32_t(c.params.size()),
                     3 + !!(epilogue & kBias) + !!(epilogue & kResidual), c.params.data()});
  }
  tcc_abi_kernel kernels[] = {
      {"tcc_saxpy", {int32_t((kSaxpyN + 127) / 128), 1, 1}, {128, 1, 1}, 0, 4}};
  tcc_abi_entry entries[] = {{"selftest", &dummyEntry, 0, nullptr}};
  tcc_abi_descriptor d{};
  d.abi_version = TCC_ABI_VERSION;
  d.struct_size = sizeof d;
  d.alignment = 64;
  d.num_entries = 1;
  d.entries = entries;
  d.num_library_calls = int32_t(calls.size());
  d.library_calls = calls.data();
  d.device = "cuda:sm_80";
  d.num_kernels = 1;
  d.kernels = kernels;
  d.ptx = kPtx;
  d.emulated_kernels = kTwins;
  validateDescriptor(d, kWhat);

  cuda::Device device(d, kWhat);
  cuda::Context &context = device.context();
  std::printf("device %d: %s (sm_%d), driver %d, module: %s\n", context.ordinal(),
              context.name().c_str(), context.computeCapability(), device.driver().version,
              device.moduleKind().c_str());
  cuda::DeviceBuffer workspace(context, device.workspaceSize(), "library workspace");
  device.setWorkspace(workspace.ptr());

  checkKernel(device, rng);
  for (size_t i = 0; i < all.numMatmuls + all.numConvs; ++i)
    checkLibraryCall(device, cases[i], int32_t(i), i < all.numMatmuls, rng);
  checkGraph(device, cases.back(), int32_t(cases.size() - 1), rng);
  checkSessionStaging(rng);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s: %d failure(s), %.2f s\n", failures ? "FAIL" : "PASS", failures, seconds);
  return failures ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc > 1) {
    std::printf("usage: %s\n  Checks the tcc runtime's CUDA support on this machine's GPU "
                "(TCC_CUDA_DEVICE, TCC_CUDA_LIB_PATH, TCC_CUDA_TF32 apply).\n",
                argv[0]);
    return argc == 2 && std::string(argv[1]) == "--help" ? 0 : 2;
  }
  try {
    return run();
  } catch (const Error &e) {
    std::string message = e.what();
    std::fprintf(stderr, "%s%s\n", message.rfind(kWhat, 0) == 0 ? "" : "tcc-cuda-selftest: ",
                 message.c_str());
    return 1;
  }
}
