//===- EmulatedDeviceTest.cpp - the emulated CUDA device, without a GPU ---===//
//
// The emulator's driver table (TCC_CUDA_DEVICE=emulated) against what a GPU
// does: shfl.sync as MLIR lowers gpu.shuffle, checked lane by lane against
// PTX's pseudo-code; a block reduction (shuffles, barriers, workgroup memory)
// over 3-D grids and blocks against a plain loop; a kernel that skips a
// barrier fails instead of hanging; captured graphs replay what eager runs
// compute (in the driver and through Device::execute, library calls
// included); copies, memsets and events; and sessions on the fixture
// artifacts. The kernels here are hand-written C++ functions with the host
// twin's signature (abi.h), stand-ins for the compiler's twins in this test
// only.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/parallel.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/emulator.h"
#include "runtime/error.h"
#include "runtime/include/tcc/tcc.h"
#include "runtime/testing/matmul_reference.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <gtest/gtest.h>
#include <random>
#include <string>
#include <vector>

using namespace tcc::rt::cuda;

namespace {

bool contains(const std::string &haystack, const std::string &needle) {
  return haystack.find(needle) != std::string::npos;
}

/// TCC_CUDA_DEVICE=emulated for the scope's lifetime.
class EmulatedScope {
public:
  EmulatedScope() {
    const char *old = std::getenv("TCC_CUDA_DEVICE");
    if (old)
      saved_ = old;
    hadValue_ = old != nullptr;
    setenv("TCC_CUDA_DEVICE", "emulated", 1);
  }
  ~EmulatedScope() {
    if (hadValue_)
      setenv("TCC_CUDA_DEVICE", saved_.c_str(), 1);
    else
      unsetenv("TCC_CUDA_DEVICE");
  }

private:
  std::string saved_;
  bool hadValue_ = false;
};

const Driver &emu() { return emulatedDriver(); }

/// "CUDA_ERROR_LAUNCH_FAILED (why)" for R.
std::string describe(CUresult r) {
  const char *name = nullptr, *text = nullptr;
  emu().cuGetErrorName(r, &name);
  emu().cuGetErrorString(r, &text);
  return std::string(name ? name : "?") + " (" + (text ? text : "?") + ")";
}

/// Launches KERNEL on STREAM with its twin's geometry.
CUresult launch(EmulatedKernel &kernel, const unsigned grid[3], const unsigned block[3],
                CUstream stream, void **params, unsigned sharedBytes = 0) {
  return emu().cuLaunchKernel(kernel.function(), grid[0], grid[1], grid[2], block[0], block[1],
                              block[2], sharedBytes, stream, params, nullptr);
}

EmulatedKernel makeKernel(void (*fn)(const tcc_abi_emulated_thread *, void **), int32_t shared,
                          int32_t synchronizes, int32_t numParams, const char *name) {
  EmulatedKernel k;
  k.twin = {fn, shared, synchronizes};
  k.name = name;
  k.numParams = numParams;
  return k;
}

template <typename T> T param(void **params, int i) {
  T value;
  std::memcpy(&value, params[i], sizeof value);
  return value;
}

int32_t linearThread(const tcc_abi_emulated_thread *t) {
  return t->thread[0] + t->block_dim[0] * (t->thread[1] + t->block_dim[1] * t->thread[2]);
}

int32_t blockThreads(const tcc_abi_emulated_thread *t) {
  return t->block_dim[0] * t->block_dim[1] * t->block_dim[2];
}

//===--- Shuffles --------------------------------------------------------===//

constexpr int32_t kModes = 4, kOffsets = 34;
constexpr int32_t kWidths[] = {32, 16, 8, 1};
constexpr int32_t kCombos = kModes * 4 * kOffsets;

/// Lane L of warp W holds this value (64 bits, the high ones set).
int64_t laneValue(int32_t warp, int32_t lane) {
  return int64_t(0x5a5a000000000000ull) + int64_t(warp) * 1000 + lane * 7 + 1;
}

/// PTX's shfl.sync (the ISA's pseudo-code) with the operands MLIR's
/// GPUToNVVM lowering of gpu.shuffle passes for WIDTH and MODE: member mask
/// (-1) >> (32 - width), b the offset, c = 32 - width for up and width - 1
/// otherwise. VALUES holds the warp's lanes, MEMBERS of them present.
int64_t ptxShuffle(const std::vector<int64_t> &values, int32_t members, int32_t lane,
                   int32_t offset, int32_t width, int32_t mode, bool *pval) {
  uint32_t b = uint32_t(offset), c = mode == 1 ? uint32_t(32 - width) : uint32_t(width - 1);
  int32_t bval = int32_t(b & 0x1f), cval = int32_t(c & 0x1f), segmask = int32_t((c >> 8) & 0x1f);
  int32_t maxLane = (lane & segmask) | (cval & ~segmask);
  int32_t minLane = lane & segmask;
  int32_t j = 0;
  switch (mode) {
  case 1: // up
    j = lane - bval;
    *pval = j >= maxLane;
    break;
  case 2: // down
    j = lane + bval;
    *pval = j <= maxLane;
    break;
  case 0: // bfly
    j = lane ^ bval;
    *pval = j <= maxLane;
    break;
  default: // idx
    j = minLane | (bval & ~segmask);
    *pval = j <= maxLane;
    break;
  }
  if (!*pval)
    j = lane;
  // A lane past the block's end has no value: the emulator keeps the
  // caller's own (unpredictable on a GPU).
  return j < members ? values[size_t(j)] : values[size_t(lane)];
}

/// Every thread shuffles its value once per (mode, width, offset), in one
/// launch: OUT[combo][thread] and VALID[combo][thread].
void shuffleEveryWay(const tcc_abi_emulated_thread *t, void **params) {
  auto *out = param<int64_t *>(params, 0);
  auto *valid = param<int32_t *>(params, 1);
  int32_t threads = blockThreads(t), me = linearThread(t);
  int64_t value = laneValue(me / 32, me % 32);
  int32_t combo = 0;
  for (int32_t mode = 0; mode < kModes; ++mode)
    for (int32_t width : kWidths)
      for (int32_t offset = 0; offset < kOffsets; ++offset, ++combo) {
        int32_t ok = -1;
        out[combo * threads + me] = t->shuffle(t->context, value, offset, width, mode, &ok);
        valid[combo * threads + me] = ok;
      }
}

// Tests shfl.sync in all four modes, widths 32, 16, 8 and 1 and offsets 0
// to 33 (out-of-range lanes, offsets past 31 wrapping as b[4:0]), on two
// full warps and on a block whose second warp has 16 lanes, against the
// PTX pseudo-code with MLIR's operands. Oracle: ptxShuffle above; exact.
TEST(EmulatedDevice, ShuffleSemantics) {
  EmulatedKernel kernel = makeKernel(shuffleEveryWay, 0, 1, 2, "shuffle_every_way");
  for (unsigned threads : {64u, 48u}) {
    std::vector<int64_t> out(size_t(kCombos) * threads, 0);
    std::vector<int32_t> valid(out.size(), -1);
    int64_t *outPtr = out.data();
    int32_t *validPtr = valid.data();
    void *params[] = {&outPtr, &validPtr};
    unsigned grid[3] = {1, 1, 1}, block[3] = {threads, 1, 1};
    ASSERT_EQ(launch(kernel, grid, block, nullptr, params), CUDA_SUCCESS);
    int32_t combo = 0;
    for (int32_t mode = 0; mode < kModes; ++mode)
      for (int32_t width : kWidths)
        for (int32_t offset = 0; offset < kOffsets; ++offset, ++combo)
          for (unsigned me = 0; me < threads; ++me) {
            int32_t warp = int32_t(me / 32), members = std::min(32, int32_t(threads) - warp * 32);
            std::vector<int64_t> values(32);
            for (int32_t l = 0; l < 32; ++l)
              values[size_t(l)] = laneValue(warp, l);
            bool pval = false;
            int64_t want =
                ptxShuffle(values, members, int32_t(me % 32), offset, width, mode, &pval);
            size_t at = size_t(combo) * threads + me;
            ASSERT_EQ(out[at], want) << "mode " << mode << " width " << width << " offset "
                                     << offset << " thread " << me << " of " << threads;
            ASSERT_EQ(valid[at], int32_t(pval)) << "mode " << mode << " width " << width
                                                << " offset " << offset << " thread " << me;
          }
  }
  // The source-lane function itself, where the lowering's clamp for up
  // differs: width 8 keeps lanes below 24 to themselves.
  bool ok = true;
  EXPECT_EQ(shuffleSourceLane(10, 1, 8, 1, &ok), 10);
  EXPECT_FALSE(ok);
  EXPECT_EQ(shuffleSourceLane(30, 3, 8, 1, &ok), 27);
  EXPECT_TRUE(ok);
  EXPECT_EQ(shuffleSourceLane(5, 33, 32, 0, &ok), 4); // b[4:0] = 1
  EXPECT_TRUE(ok);
}

//===--- A block reduction -----------------------------------------------===//

/// OUT[row] = sum of IN[row * length ...], one block per row (the block's
/// linear index in its 3-D grid): a strided partial sum per thread, a
/// butterfly over each warp's lanes (width: the warp's lanes, adding only
/// valid sources, as MLIR's all-reduce does for a partial warp), one value
/// per warp in workgroup memory, a barrier, and warp 0 sums those.
void rowSum(const tcc_abi_emulated_thread *t, void **params) {
  const float *in = param<const float *>(params, 0);
  float *out = param<float *>(params, 1);
  int64_t length = param<int64_t>(params, 2);
  int64_t row =
      t->block[0] + int64_t(t->grid_dim[0]) * (t->block[1] + int64_t(t->grid_dim[1]) * t->block[2]);
  int32_t threads = blockThreads(t), me = linearThread(t);
  int32_t lane = me % 32, warp = me / 32, warps = (threads + 31) / 32;
  auto warpSum = [&](float v, int32_t width) {
    for (int32_t offset = 1; offset < 32; offset *= 2) {
      int32_t valid = 0;
      int64_t bits = 0;
      std::memcpy(&bits, &v, sizeof v);
      int64_t got = t->shuffle(t->context, bits, offset, width, 0, &valid);
      float other;
      int32_t low = int32_t(got);
      std::memcpy(&other, &low, sizeof other);
      if (valid)
        v += other;
    }
    return v;
  };
  float sum = 0;
  for (int64_t i = me; i < length; i += threads)
    sum += in[row * length + i];
  sum = warpSum(sum, std::min(32, threads - warp * 32));
  auto *partial = static_cast<float *>(t->shared);
  if (lane == 0)
    partial[warp] = sum;
  t->barrier(t->context);
  if (warp == 0) {
    float v = lane < warps ? partial[lane] : 0.0f;
    v = warpSum(v, std::min(32, threads));
    if (lane == 0)
      out[row] = v;
  }
  // Workgroup memory is reused by the next round of a real kernel: a
  // second barrier keeps this one honest about it.
  t->barrier(t->context);
}

/// Runs rowSum over ROWS rows of LENGTH on a GRID of 3-D blocks BLOCK and
/// checks each row against a plain double loop (relative 1e-5).
void checkRowSums(int64_t length, const unsigned grid[3], const unsigned block[3]) {
  int64_t rows = int64_t(grid[0]) * grid[1] * grid[2];
  std::mt19937_64 rng(uint64_t(length) * 31 + rows);
  std::vector<float> in = tcc::testing::randomVector(size_t(rows * length), rng);
  std::vector<float> out(size_t(rows), -12345.0f);
  const float *inPtr = in.data();
  float *outPtr = out.data();
  void *params[] = {&inPtr, &outPtr, &length};
  EmulatedKernel kernel = makeKernel(rowSum, 32 * 4, 1, 3, "row_sum");
  CUresult r = launch(kernel, grid, block, nullptr, params);
  ASSERT_EQ(r, CUDA_SUCCESS) << describe(r);
  for (int64_t row = 0; row < rows; ++row) {
    double want = 0, scale = 0;
    for (int64_t i = 0; i < length; ++i) {
      want += in[size_t(row * length + i)];
      scale += std::fabs(in[size_t(row * length + i)]);
    }
    ASSERT_NEAR(out[size_t(row)], want, 1e-5 * scale + 1e-7)
        << "row " << row << " of length " << length << ", block " << block[0] << "x" << block[1]
        << "x" << block[2];
  }
}

// Tests a block reduction with shuffles, barriers and workgroup memory on
// rows of 1, 31, 33 and 1,025 elements, over 3-D grids of more than 1,024
// blocks (run in parallel) and 3-D blocks with full and partial warps, 1 to
// 1,024 threads. Oracle: a plain double loop; tolerance 1e-5 of the sum of
// magnitudes (fp32 sums in another order).
TEST(EmulatedDevice, BlockReduction) {
  tcc::rt::ParallelThreadsScope threads(4);
  const unsigned grid[3] = {11, 10, 10}; // 1,100 blocks
  const unsigned blocks[][3] = {{8, 4, 2}, {5, 3, 3}, {1, 1, 1}, {32, 8, 4}, {33, 1, 1}};
  for (int64_t length : {1, 31, 33, 1025})
    for (const auto &block : blocks)
      checkRowSums(length, grid, block);
  const unsigned small[3] = {2, 1, 3};
  const unsigned one[3] = {1, 1, 1};
  checkRowSums(1025, small, one);
}

/// Y[i] = 2 X[i] + 1 over a 3-D grid of 3-D blocks, no synchronization.
void axpb(const tcc_abi_emulated_thread *t, void **params) {
  const float *x = param<const float *>(params, 0);
  float *y = param<float *>(params, 1);
  int64_t block =
      t->block[0] + int64_t(t->grid_dim[0]) * (t->block[1] + int64_t(t->grid_dim[1]) * t->block[2]);
  int64_t i = block * blockThreads(t) + linearThread(t);
  y[i] = 2 * x[i] + 1;
}

// Tests a kernel whose threads need no fibers (synchronizes = 0), on a 3-D
// grid of 3-D blocks: every element written once. Oracle: the formula; exact.
TEST(EmulatedDevice, ThreadsWithoutFibers) {
  const unsigned grid[3] = {3, 2, 5}, block[3] = {4, 3, 2};
  size_t n = 3 * 2 * 5 * 4 * 3 * 2;
  std::vector<float> x(n), y(n, -1.0f);
  for (size_t i = 0; i < n; ++i)
    x[i] = float(i) * 0.25f - 3.0f;
  const float *xp = x.data();
  float *yp = y.data();
  void *params[] = {&xp, &yp};
  EmulatedKernel kernel = makeKernel(axpb, 0, 0, 2, "axpb");
  ASSERT_EQ(launch(kernel, grid, block, nullptr, params), CUDA_SUCCESS);
  for (size_t i = 0; i < n; ++i)
    ASSERT_EQ(y[i], 2 * x[i] + 1) << i;
}

//===--- Deadlocks -------------------------------------------------------===//

/// Odd threads return before the barrier the others wait at.
void skipsBarrier(const tcc_abi_emulated_thread *t, void **) {
  if (linearThread(t) % 2 == 1)
    return;
  t->barrier(t->context);
}

/// Thread 0 returns; the rest of its warp waits at a shuffle.
void skipsShuffle(const tcc_abi_emulated_thread *t, void **) {
  if (linearThread(t) == 0)
    return;
  int32_t valid = 0;
  t->shuffle(t->context, 1, 1, 32, 2, &valid);
}

/// Calls barrier although its twin says it does not synchronize.
void undeclaredBarrier(const tcc_abi_emulated_thread *t, void **) { t->barrier(t->context); }

// Tests that kernels that cannot finish on a GPU fail instead of hanging:
// threads that skip a barrier, a lane that skips a shuffle, and a barrier in
// a kernel declared not to synchronize; and that the next launch on the
// same workers (their stacks reused) runs normally.
TEST(EmulatedDevice, DeadlocksAreErrors) {
  tcc::rt::ParallelThreadsScope threads(2);
  const unsigned grid[3] = {3, 1, 1}, block[3] = {8, 2, 1};
  EmulatedKernel barrierKernel = makeKernel(skipsBarrier, 0, 1, 0, "skips_barrier");
  CUresult r = launch(barrierKernel, grid, block, nullptr, nullptr);
  ASSERT_EQ(r, CUDA_ERROR_LAUNCH_FAILED);
  std::string why = describe(r);
  EXPECT_TRUE(contains(why, "kernel 'skips_barrier' deadlocks in block (")) << why;
  EXPECT_TRUE(contains(why, "8 of its 16 threads returned while 8 wait at a barrier")) << why;

  EmulatedKernel shuffleKernel = makeKernel(skipsShuffle, 0, 1, 0, "skips_shuffle");
  r = launch(shuffleKernel, grid, block, nullptr, nullptr);
  ASSERT_EQ(r, CUDA_ERROR_LAUNCH_FAILED);
  why = describe(r);
  EXPECT_TRUE(contains(why, "1 of its 16 threads returned while 0 wait at a barrier and 15 at a "
                            "shuffle"))
      << why;

  EmulatedKernel undeclared = makeKernel(undeclaredBarrier, 0, 0, 0, "undeclared");
  r = launch(undeclared, grid, block, nullptr, nullptr);
  ASSERT_EQ(r, CUDA_ERROR_LAUNCH_FAILED);
  why = describe(r);
  EXPECT_TRUE(contains(why, "kernel 'undeclared' calls barrier but its emulated twin says it does "
                            "not synchronize"))
      << why;

  const unsigned rows[3] = {4, 3, 2}, threads3d[3] = {8, 4, 2};
  checkRowSums(33, rows, threads3d);
}

//===--- Streams, copies, events, graphs ---------------------------------===//

// Tests the emulated memory functions and events: allocations are aligned
// host memory, memset / copies in every direction (synchronous and on a
// stream) move the bytes, events complete at once and time host intervals,
// and the device describes itself.
TEST(EmulatedDevice, MemoryAndEvents) {
  const Driver &d = emu();
  char name[128] = {};
  ASSERT_EQ(d.cuDeviceGetName(name, sizeof name, 0), CUDA_SUCCESS);
  EXPECT_STREQ(name, kEmulatedDeviceName);
  int count = 0;
  ASSERT_EQ(d.cuDeviceGetCount(&count), CUDA_SUCCESS);
  EXPECT_EQ(count, 1);
  CUdevice device;
  EXPECT_EQ(d.cuDeviceGet(&device, 1), CUDA_ERROR_INVALID_DEVICE);

  CUstream stream = nullptr;
  ASSERT_EQ(d.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  CUdeviceptr a = 0, b = 0;
  ASSERT_EQ(d.cuMemAlloc(&a, 1000), CUDA_SUCCESS);
  ASSERT_EQ(d.cuMemAlloc(&b, 1000), CUDA_SUCCESS);
  EXPECT_EQ(a % 256, 0u);
  EXPECT_EQ(d.cuMemsetD8(a, 0xAB, 1000), CUDA_SUCCESS);
  std::vector<uint8_t> host(1000), back(1000, 0);
  ASSERT_EQ(d.cuMemcpyDtoH(back.data(), a, 1000), CUDA_SUCCESS);
  EXPECT_EQ(back, std::vector<uint8_t>(1000, 0xAB));
  for (size_t i = 0; i < host.size(); ++i)
    host[i] = uint8_t(i * 7 + 3);
  ASSERT_EQ(d.cuMemcpyHtoDAsync(a, host.data(), 1000, stream), CUDA_SUCCESS);
  ASSERT_EQ(d.cuMemcpyDtoDAsync(b + 10, a, 990, stream), CUDA_SUCCESS);
  ASSERT_EQ(d.cuMemsetD8(b, 0x11, 10), CUDA_SUCCESS);
  ASSERT_EQ(d.cuMemcpyDtoHAsync(back.data(), b, 1000, stream), CUDA_SUCCESS);
  ASSERT_EQ(d.cuStreamSynchronize(stream), CUDA_SUCCESS);
  for (size_t i = 0; i < 1000; ++i)
    ASSERT_EQ(back[i], i < 10 ? 0x11 : host[i - 10]) << i;
  ASSERT_EQ(d.cuMemcpyHtoD(b, host.data(), 1000), CUDA_SUCCESS);
  ASSERT_EQ(d.cuMemcpyDtoH(back.data(), b, 1000), CUDA_SUCCESS);
  EXPECT_EQ(back, host);

  CUevent start, end, untimed;
  ASSERT_EQ(d.cuEventCreate(&start, CU_EVENT_DEFAULT), CUDA_SUCCESS);
  ASSERT_EQ(d.cuEventCreate(&end, CU_EVENT_DEFAULT), CUDA_SUCCESS);
  ASSERT_EQ(d.cuEventCreate(&untimed, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
  EXPECT_EQ(d.cuEventQuery(end), CUDA_SUCCESS); // never recorded: complete
  float ms = -1;
  EXPECT_NE(d.cuEventElapsedTime(&ms, start, end), CUDA_SUCCESS);
  ASSERT_EQ(d.cuEventRecord(start, stream), CUDA_SUCCESS);
  ASSERT_EQ(d.cuMemcpyDtoDAsync(a, b, 1000, stream), CUDA_SUCCESS);
  ASSERT_EQ(d.cuEventRecord(end, stream), CUDA_SUCCESS);
  ASSERT_EQ(d.cuEventRecord(untimed, stream), CUDA_SUCCESS);
  EXPECT_EQ(d.cuStreamWaitEvent(stream, end, 0), CUDA_SUCCESS);
  EXPECT_EQ(d.cuEventSynchronize(end), CUDA_SUCCESS);
  EXPECT_EQ(d.cuEventQuery(end), CUDA_SUCCESS);
  ASSERT_EQ(d.cuEventElapsedTime(&ms, start, end), CUDA_SUCCESS);
  EXPECT_GE(ms, 0.0f);
  EXPECT_EQ(d.cuEventElapsedTime(&ms, start, untimed), CUDA_ERROR_INVALID_HANDLE);
  for (CUevent e : {start, end, untimed})
    d.cuEventDestroy(e);
  d.cuMemFree(a);
  d.cuMemFree(b);
  d.cuStreamDestroy(stream);
}

// Tests stream capture: captured copies and launches do not run, the
// graph replays them in order with the launch parameters' values at
// capture time, and gives what the same work computes eagerly; a
// synchronization during the capture invalidates it and synchronous copies
// are refused meanwhile, as on a GPU.
TEST(EmulatedDevice, GraphReplaysEagerWork) {
  const Driver &d = emu();
  CUstream stream = nullptr;
  ASSERT_EQ(d.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  const unsigned grid[3] = {2, 3, 1}, block[3] = {5, 3, 3};
  int64_t length = 33, rows = 6;
  std::mt19937_64 rng(5);
  std::vector<float> staged = tcc::testing::randomVector(size_t(rows * length), rng);
  std::vector<float> in(staged.size(), 0.0f), eager(static_cast<size_t>(rows)),
      replayed(static_cast<size_t>(rows), -1.0f);
  EmulatedKernel kernel = makeKernel(rowSum, 32 * 4, 1, 3, "row_sum");

  // Eagerly: upload, reduce, download.
  auto enqueue = [&](float *out) {
    const float *inPtr = in.data();
    float *outPtr = out;
    int64_t n = length;
    void *params[] = {&inPtr, &outPtr, &n};
    EXPECT_EQ(d.cuMemcpyHtoDAsync(CUdeviceptr(in.data()), staged.data(),
                                  staged.size() * sizeof(float), stream),
              CUDA_SUCCESS);
    EXPECT_EQ(launch(kernel, grid, block, stream, params), CUDA_SUCCESS);
    // The parameters' values change once enqueued: the capture kept them.
    n = 0;
    outPtr = nullptr;
  };
  enqueue(eager.data());

  std::fill(in.begin(), in.end(), 0.0f);
  ASSERT_EQ(d.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
  enqueue(replayed.data());
  std::vector<uint8_t> scratch(16);
  EXPECT_EQ(d.cuMemcpyHtoD(CUdeviceptr(scratch.data()), scratch.data(), 16),
            CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
  CUgraph graph = nullptr;
  ASSERT_EQ(d.cuStreamEndCapture(stream, &graph), CUDA_SUCCESS);
  EXPECT_EQ(replayed, std::vector<float>(size_t(rows), -1.0f)); // nothing ran
  EXPECT_EQ(in, std::vector<float>(in.size(), 0.0f));
  CUgraphExec exec = nullptr;
  ASSERT_EQ(d.cuGraphInstantiateWithFlags(&exec, graph, 0), CUDA_SUCCESS);
  ASSERT_EQ(d.cuGraphDestroy(graph), CUDA_SUCCESS); // the executable is its own
  for (int replay = 0; replay < 2; ++replay) {
    std::fill(replayed.begin(), replayed.end(), -1.0f);
    ASSERT_EQ(d.cuGraphLaunch(exec, stream), CUDA_SUCCESS);
    EXPECT_EQ(replayed, eager) << "replay " << replay;
  }
  d.cuGraphExecDestroy(exec);

  // A synchronization invalidates the capture.
  ASSERT_EQ(d.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), CUDA_SUCCESS);
  EXPECT_EQ(d.cuStreamSynchronize(stream), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT_EQ(d.cuStreamEndCapture(stream, &graph), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  EXPECT_EQ(graph, nullptr);
  EXPECT_EQ(d.cuMemcpyHtoD(CUdeviceptr(scratch.data()), scratch.data(), 16), CUDA_SUCCESS);
  d.cuStreamDestroy(stream);
}

/// OUT[i] = sum of row I of the M x N matrix C (one block, one thread per
/// row, no synchronization).
void sumRows(const tcc_abi_emulated_thread *t, void **params) {
  const float *c = param<const float *>(params, 0);
  float *out = param<float *>(params, 1);
  int64_t m = param<int64_t>(params, 2), n = param<int64_t>(params, 3);
  int64_t i = linearThread(t);
  if (i >= m)
    return;
  float s = 0;
  for (int64_t j = 0; j < n; ++j)
    s += c[i * n + j];
  out[i] = s;
}

// Tests Device::execute on the emulated device: an entry with a library
// call (a MATMUL on the CPU's oneDNN / BLAS) and a kernel runs eagerly,
// then is captured into a graph and replayed, each run on new inputs
// uploaded between runs, and every run gives what the first (eager) one
// computes from its inputs. Oracle: float64 products and row sums;
// tolerance 1e-5 relative.
TEST(EmulatedDevice, DeviceCapturesLibraryCallsAndKernels) {
  EmulatedScope scope;
  constexpr int64_t M = 37, N = 19, K = 53;
  const int64_t matmul[] = {1, M, N, K, 0, 0, 0, 0};
  const tcc_abi_library_call calls[] = {{TCC_LIBRARY_CALL_MATMUL, TCC_DTYPE_F32, 8, 3, matmul}};
  const tcc_abi_kernel kernels[] = {{"sum_rows", {1, 1, 1}, {64, 1, 1}, 0, 4}};
  const tcc_abi_emulated_kernel twins[] = {{sumRows, 0, 0}};
  tcc_abi_descriptor d{};
  d.abi_version = TCC_ABI_VERSION;
  d.struct_size = sizeof d;
  d.device = "cuda:sm_90";
  d.num_kernels = 1;
  d.kernels = kernels;
  d.ptx = "";
  d.num_library_calls = 1;
  d.library_calls = calls;
  d.emulated_kernels = twins;
  std::unique_ptr<Device> device;
  try {
    device = std::make_unique<Device>(d, "test.so");
  } catch (const tcc::rt::Error &e) {
    if (contains(e.what(), "cannot load oneDNN"))
      GTEST_SKIP() << e.what();
    throw;
  }
  EXPECT_TRUE(device->emulated());
  EXPECT_EQ(device->context().name(), kEmulatedDeviceName);
  EXPECT_EQ(device->context().computeCapability(), 90);
  EXPECT_EQ(device->workspaceSize(), 0u); // the CPU calls have their own scratchpad
  const Driver &drv = device->driver();
  EXPECT_EQ(&drv, &driver()); // the emulated table, chosen at creation
  Context &context = device->context();
  DeviceBuffer a(context, M * K * 4, "A"), b(context, K * N * 4, "B"), c(context, M * N * 4, "C"),
      out(context, M * 4, "out");
  std::mt19937_64 rng(9);
  for (int run = 0; run < 4; ++run) {
    std::vector<float> ha = tcc::testing::randomVector(size_t(M * K), rng),
                       hb = tcc::testing::randomVector(size_t(K * N), rng);
    ASSERT_EQ(drv.cuMemcpyHtoD(a.ptr(), ha.data(), ha.size() * 4), CUDA_SUCCESS);
    ASSERT_EQ(drv.cuMemcpyHtoD(b.ptr(), hb.data(), hb.size() * 4), CUDA_SUCCESS);
    ASSERT_EQ(drv.cuMemsetD8(out.ptr(), 0, M * 4), CUDA_SUCCESS);
    int32_t code = device->execute(0, [&] {
      void *operands[] = {a.data(), b.data(), c.data()};
      Device::libraryCall(device.get(), 0, operands);
      uint64_t cp = uint64_t(c.ptr()), op = uint64_t(out.ptr());
      int64_t m = M, n = N;
      void *params[] = {&cp, &op, &m, &n};
      Device::launchKernel(device.get(), 0, params);
      return 0;
    });
    ASSERT_EQ(code, 0);
    ASSERT_EQ(device->takeError(), "");
    EXPECT_EQ(device->hasGraph(0), run >= 1) << "run " << run;
    EXPECT_EQ(device->graphFailure(0), "");
    std::vector<float> got(M);
    ASSERT_EQ(drv.cuMemcpyDtoH(got.data(), out.ptr(), M * 4), CUDA_SUCCESS);
    std::vector<float> none;
    std::vector<double> product = tcc::testing::matmulReference(
        std::vector<int64_t>(matmul, matmul + 8), ha, hb, none, none, none);
    std::vector<double> want(M, 0.0);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j)
        want[size_t(i)] += product[size_t(i * N + j)];
    EXPECT_LE(tcc::testing::relativeError(got, want), 1e-5) << "run " << run;
  }
}

//===--- Sessions on fixture artifacts -----------------------------------===//

std::string fixture(const char *name) { return std::string(TCC_FIXTURE_DIR) + "/" + name; }

// Tests selection: with TCC_CUDA_DEVICE=emulated, an artifact compiled
// without --cuda-emulation is refused naming the artifact and the flag,
// and one with host twins runs infer eagerly, captured and replayed, each
// time on new inputs. Oracle: y = x + b; exact.
TEST(EmulatedDevice, SessionsOnFixtures) {
  EmulatedScope scope;
  tcc_session_options options;
  tcc_session_options_init(&options);
  options.skip_default_params = 1;

  std::string plain = fixture("add_artifact_cuda.so");
  tcc_artifact_t artifact = nullptr;
  ASSERT_EQ(tcc_artifact_load(plain.c_str(), &artifact), TCC_OK) << tcc_last_error();
  tcc_session_t session = nullptr;
  EXPECT_EQ(tcc_session_create(artifact, &options, &session), TCC_ERROR_UNSUPPORTED);
  std::string error = tcc_last_error();
  EXPECT_TRUE(contains(error, plain + ": TCC_CUDA_DEVICE=emulated, but it was compiled without "
                                      "--cuda-emulation"))
      << error;
  tcc_artifact_destroy(artifact);

  std::string twins = fixture("add_artifact_cuda_emulated.so");
  ASSERT_EQ(tcc_artifact_load(twins.c_str(), &artifact), TCC_OK) << tcc_last_error();
  ASSERT_EQ(tcc_session_create(artifact, &options, &session), TCC_OK) << tcc_last_error();
  const float bias[3] = {0.5f, -1.0f, 2.0f};
  const int64_t three[] = {3}, twoByThree[] = {2, 3};
  ASSERT_EQ(tcc_session_set_param(session, "b", TCC_DTYPE_F32, 1, three, bias, sizeof bias), TCC_OK)
      << tcc_last_error();
  for (int run = 0; run < 4; ++run) {
    float x[6];
    for (int i = 0; i < 6; ++i)
      x[i] = float(run * 10 + i) - 2.5f;
    ASSERT_EQ(tcc_session_set_input(session, "x", TCC_DTYPE_F32, 2, twoByThree, x, sizeof x),
              TCC_OK)
        << tcc_last_error();
    ASSERT_EQ(tcc_session_run(session, "infer"), TCC_OK) << tcc_last_error();
    const void *y = nullptr;
    size_t size = 0;
    ASSERT_EQ(tcc_session_get_output(session, "y", &y, &size), TCC_OK) << tcc_last_error();
    ASSERT_EQ(size, sizeof x);
    for (int i = 0; i < 6; ++i)
      EXPECT_EQ(static_cast<const float *>(y)[i], x[i] + bias[i % 3]) << "run " << run;
  }
  tcc_session_destroy(session);
  tcc_artifact_destroy(artifact);
}

// Tests that without TCC_CUDA_DEVICE=emulated a machine without a GPU still
// refuses a device artifact with "no CUDA device" (the emulation is never
// chosen silently), and that the message of an artifact with host twins
// says how to run it emulated.
TEST(EmulatedDevice, NeverChosenSilently) {
  if (emulationSelected())
    GTEST_SKIP() << "TCC_CUDA_DEVICE=emulated is set for the whole test";
  std::string twins = fixture("add_artifact_cuda_emulated.so");
  tcc_artifact_t artifact = nullptr;
  ASSERT_EQ(tcc_artifact_load(twins.c_str(), &artifact), TCC_OK) << tcc_last_error();
  tcc_session_options options;
  tcc_session_options_init(&options);
  options.skip_default_params = 1;
  tcc_session_t session = nullptr;
  tcc_status status = tcc_session_create(artifact, &options, &session);
  if (status == TCC_OK) { // a machine with a GPU
    tcc_session_destroy(session);
    tcc_artifact_destroy(artifact);
    GTEST_SKIP() << "this machine has a CUDA device";
  }
  std::string error = tcc_last_error();
  EXPECT_EQ(status, TCC_ERROR_UNSUPPORTED);
  EXPECT_TRUE(contains(error, "no CUDA device")) << error;
  EXPECT_TRUE(contains(error, "TCC_CUDA_DEVICE=emulated runs it on the CPU")) << error;
  EXPECT_FALSE(contains(error, kEmulatedDeviceName)) << error;
  tcc_artifact_destroy(artifact);
}

} // namespace
