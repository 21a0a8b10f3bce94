//===- ZeroTest.cpp - ZeRO-1's runtime half on a hand-written artifact ----===//
//
// A descriptor built here stands in for a --zero=1 artifact (no compiler
// involved): parameters a f32[3,4] and b f32[7], 19 flat elements in 2
// chunks of 16; train_step writes the gradient of 0.5 |p - 1|^2 (p - 1)
// into zero.grads, zero_update is SGD with momentum on one chunk. In a
// world of one the session owns both chunks; the tests check the update
// against a float64 reference of the same formulas, the gradient norm, the
// kept outputs, checkpoints in the unsharded layout, and the metadata
// checks.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "runtime/artifact.h"
#include "runtime/checkpoint/safetensors.h"
#include "runtime/error.h"
#include "runtime/session.h"

#include <cmath>
#include <cstring>
#include <gtest/gtest.h>

namespace {

using tcc::rt::Artifact;
using tcc::rt::Session;

constexpr int kChunks = 2, kChunk = 16, kA = 12, kB = 7, kFlat = kA + kB;

// Arena: lr, momentum, loss, grad_norm, then zero_update's chunk tensors.
enum : int64_t {
  kLr = 0, kMomentum = 64, kLoss = 128, kGradNorm = 192, kInParam = 256, kInGrad = 320,
  kInBuf = 384, kOutParam = 448, kOutBuf = 512, kOutSq = 576, kArena = 640
};
// State: a, b, zero.grads.
enum : int64_t { kStateA = 0, kStateB = 64, kStateGrads = 128, kState = 256 };

float *f32(uint8_t *base, int64_t offset) { return reinterpret_cast<float *>(base + offset); }

/// train_step: loss = 0.5 sum (p - 1)^2 over a and b; zero.grads = p - 1,
/// flat, zero-padded; grad_norm 0 (the runtime's to write).
int32_t trainStep(uint8_t *arena, uint8_t *state, const tcc_abi_runtime *) {
  const float *a = f32(state, kStateA), *b = f32(state, kStateB);
  float *g = f32(state, kStateGrads);
  float loss = 0;
  for (int i = 0; i < kChunks * kChunk; ++i) {
    float p = i < kA ? a[i] : i < kFlat ? b[i - kA] : 1.0f;
    g[i] = i < kFlat ? p - 1.0f : 0.0f;
    loss += 0.5f * g[i] * g[i];
  }
  *f32(arena, kLoss) = loss;
  *f32(arena, kGradNorm) = 0;
  // Scribbles over the optimizer inputs' slots, as a planned arena may once
  // it has read them: the runtime must write them again for zero_update.
  *f32(arena, kLr) = NAN;
  *f32(arena, kMomentum) = NAN;
  return 0;
}

/// zero_update: buf = mu buf + g; p -= lr buf; grad_sq = sum g^2.
int32_t zeroUpdate(uint8_t *arena, uint8_t *, const tcc_abi_runtime *) {
  float lr = *f32(arena, kLr), mu = *f32(arena, kMomentum), sq = 0;
  for (int i = 0; i < kChunk; ++i) {
    float g = f32(arena, kInGrad)[i];
    float buf = mu * f32(arena, kInBuf)[i] + g;
    f32(arena, kOutBuf)[i] = buf;
    f32(arena, kOutParam)[i] = f32(arena, kInParam)[i] - lr * buf;
    sq += g * g;
  }
  *f32(arena, kOutSq) = sq;
  // The loss slot is this entry's scratch: train_step's output must survive.
  *f32(arena, kLoss) = -1;
  return 0;
}

struct ZeroDescriptor {
  int64_t shapeA[2] = {3, 4}, shapeB[1] = {kB}, shapeGrads[1] = {kChunks * kChunk},
          shapeChunk[1] = {kChunk};
  tcc_abi_tensor tensors[13] = {
      {"lr", TCC_ROLE_INPUT, TCC_DTYPE_F32, TCC_REGION_ARENA, 0, nullptr, kLr, 4},
      {"momentum", TCC_ROLE_INPUT, TCC_DTYPE_F32, TCC_REGION_ARENA, 0, nullptr, kMomentum, 4},
      {"loss", TCC_ROLE_OUTPUT, TCC_DTYPE_F32, TCC_REGION_ARENA, 0, nullptr, kLoss, 4},
      {"grad_norm", TCC_ROLE_OUTPUT, TCC_DTYPE_F32, TCC_REGION_ARENA, 0, nullptr, kGradNorm, 4},
      {"a", TCC_ROLE_PARAM, TCC_DTYPE_F32, TCC_REGION_STATE, 2, shapeA, kStateA, kA * 4},
      {"b", TCC_ROLE_PARAM, TCC_DTYPE_F32, TCC_REGION_STATE, 1, shapeB, kStateB, kB * 4},
      {"zero.grads", TCC_ROLE_STATE, TCC_DTYPE_F32, TCC_REGION_STATE, 1, shapeGrads, kStateGrads,
       kChunks * kChunk * 4},
      {"zero.param", TCC_ROLE_INPUT, TCC_DTYPE_F32, TCC_REGION_ARENA, 1, shapeChunk, kInParam, 64},
      {"zero.grad", TCC_ROLE_INPUT, TCC_DTYPE_F32, TCC_REGION_ARENA, 1, shapeChunk, kInGrad, 64},
      {"zero.momentum_buffer", TCC_ROLE_INPUT, TCC_DTYPE_F32, TCC_REGION_ARENA, 1, shapeChunk,
       kInBuf, 64},
      {"zero.param", TCC_ROLE_OUTPUT, TCC_DTYPE_F32, TCC_REGION_ARENA, 1, shapeChunk, kOutParam,
       64},
      {"zero.momentum_buffer", TCC_ROLE_OUTPUT, TCC_DTYPE_F32, TCC_REGION_ARENA, 1, shapeChunk,
       kOutBuf, 64},
      {"zero.grad_sq", TCC_ROLE_OUTPUT, TCC_DTYPE_F32, TCC_REGION_ARENA, 0, nullptr, kOutSq, 4},
  };
  int32_t stepTensors[7] = {0, 1, 2, 3, 4, 5, 6};
  int32_t updateTensors[8] = {0, 1, 7, 8, 9, 10, 11, 12};
  tcc_abi_entry entries[2] = {{"train_step", &trainStep, 7, stepTensors},
                              {"zero_update", &zeroUpdate, 8, updateTensors}};
  tcc_abi_metadata metadata[4] = {{"zero", "2,16"},
                                  {"zero.params", "a;b"},
                                  {"zero.state", ".momentum_buffer"},
                                  {"state_fingerprint", "feedface"}};
  tcc_abi_descriptor d = {3, sizeof(tcc_abi_descriptor), "0123", "ZeroTest.cpp", "x86_64", "",
                          kArena, kState, 64, 13, 2, tensors, entries, 0, nullptr, 4, metadata,
                          nullptr, 0, nullptr, nullptr, nullptr, 0, 0, 0, nullptr};

  std::unique_ptr<Session> session() {
    auto artifact = Artifact::fromDescriptor(d, "zero.so");
    tcc_session_options options;
    tcc_session_options_init(&options);
    options.num_threads = 1;
    options.poison_arena = 1;
    return std::make_unique<Session>(artifact, options);
  }
};

void setScalar(Session &s, const char *name, float v) { s.setInput(name, TCC_DTYPE_F32, 0, nullptr, &v, 4); }

void step(Session &s, float lr, float mu) {
  setScalar(s, "lr", lr);
  setScalar(s, "momentum", mu);
  s.run("train_step");
}

std::vector<float> params(Session &s) {
  std::vector<float> p(kFlat);
  s.getParam("a", p.data(), kA * 4);
  s.getParam("b", p.data() + kA, kB * 4);
  return p;
}

void setParams(Session &s, const std::vector<float> &p) {
  int64_t shapeA[2] = {3, 4}, shapeB[1] = {kB};
  s.setParam("a", TCC_DTYPE_F32, 2, shapeA, p.data(), kA * 4);
  s.setParam("b", TCC_DTYPE_F32, 1, shapeB, p.data() + kA, kB * 4);
}

float output(Session &s, const char *name) {
  size_t size = 0;
  const uint8_t *data = s.output(name, &size);
  float v;
  std::memcpy(&v, data, sizeof v);
  return v;
}

std::vector<float> start() {
  std::vector<float> p(kFlat);
  for (int i = 0; i < kFlat; ++i)
    p[size_t(i)] = 0.25f * float(i % 7) - 0.6f + 0.01f * float(i);
  return p;
}

// Tests three steps of SGD with momentum through the chunks against a
// float64 reference (within f32 rounding), the gradient norm the runtime
// writes, train_step's loss kept over zero_update's scratch, and the
// optimizer state's bytes (both chunks, padding included, alone).
TEST(ZeroOptimizerTest, UpdatesEveryChunkAlone) {
  ZeroDescriptor z;
  auto s = z.session();
  std::vector<float> p0 = start();
  setParams(*s, p0);
  std::vector<double> p(p0.begin(), p0.end()), buf(kFlat, 0.0);
  for (int k = 0; k < 3; ++k) {
    double loss = 0, sq = 0;
    for (int i = 0; i < kFlat; ++i) {
      double g = p[size_t(i)] - 1;
      loss += 0.5 * g * g;
      sq += g * g;
      buf[size_t(i)] = 0.9 * buf[size_t(i)] + g;
      p[size_t(i)] -= 0.1 * buf[size_t(i)];
    }
    step(*s, 0.1f, 0.9f);
    EXPECT_NEAR(output(*s, "loss"), loss, 1e-5 * loss) << "step " << k;
    EXPECT_NEAR(output(*s, "grad_norm"), std::sqrt(sq), 1e-5 * std::sqrt(sq)) << "step " << k;
  }
  std::vector<float> got = params(*s);
  for (int i = 0; i < kFlat; ++i)
    EXPECT_NEAR(got[size_t(i)], p[size_t(i)], 1e-5) << "element " << i;
  int64_t local = 0, total = 0;
  s->optimizerStateBytes(&local, &total);
  EXPECT_EQ(local, kChunks * kChunk * 4);
  EXPECT_EQ(total, kFlat * 4);
}

// Tests that a checkpoint holds the momentum buffers under the unsharded
// names, shaped like their parameters, without zero.grads, with the state
// fingerprint; and that a fresh session resumes from it bit for bit.
TEST(ZeroOptimizerTest, CheckpointsInTheUnshardedLayout) {
  tcc::test::TempDir dir;
  std::string path = dir.path() + "/ck.safetensors";
  ZeroDescriptor z;
  auto s = z.session();
  setParams(*s, start());
  step(*s, 0.1f, 0.9f);
  step(*s, 0.1f, 0.9f);
  s->saveCheckpoint(path, {});

  tcc::rt::SafetensorsReader reader;
  std::string error;
  ASSERT_TRUE(reader.open(path, &error)) << error;
  ASSERT_NE(reader.find("a.momentum_buffer"), nullptr);
  ASSERT_NE(reader.find("b.momentum_buffer"), nullptr);
  EXPECT_EQ(reader.find("a.momentum_buffer")->shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(reader.find("b.momentum_buffer")->shape, (std::vector<int64_t>{kB}));
  EXPECT_EQ(reader.find("zero.grads"), nullptr);
  EXPECT_EQ(reader.metadata().at("tcc.fingerprint"), "feedface");
  // After two steps buf = (1 + 0.9) g0 - 0.1 g0 ... : nonzero everywhere.
  const float *buf = static_cast<const float *>(reader.find("b.momentum_buffer")->data);
  for (int i = 0; i < kB; ++i)
    EXPECT_NE(buf[i], 0.0f) << i;

  auto resumed = z.session();
  resumed->loadCheckpoint(path);
  step(*s, 0.1f, 0.9f);
  step(*resumed, 0.1f, 0.9f);
  EXPECT_EQ(params(*s), params(*resumed));
  EXPECT_EQ(output(*s, "grad_norm"), output(*resumed, "grad_norm"));
}

// Tests the metadata checks: each broken field fails the session with
// TCC_ERROR_ABI naming it.
TEST(ZeroOptimizerTest, RejectsInconsistentMetadata) {
  struct Case {
    const char *what;
    void (*breakIt)(ZeroDescriptor &);
    const char *expected;
  } cases[] = {
      {"layout", [](ZeroDescriptor &z) { z.metadata[0].value = "2,x"; }, "expected C,S"},
      {"too small", [](ZeroDescriptor &z) { z.metadata[0].value = "2,8"; },
       "19 parameter elements do not fit 2 chunks of 8"},
      {"unknown parameter", [](ZeroDescriptor &z) { z.metadata[1].value = "a;c"; },
       "'c' is not an f32 parameter"},
      {"no update", [](ZeroDescriptor &z) { z.d.num_entries = 1; },
       "has no entry point 'zero_update'"},
      {"state input", [](ZeroDescriptor &z) { z.metadata[2].value = ".exp_avg"; },
       "no f32 input 'zero.exp_avg' of 16 elements"},
      {"metadata apart", [](ZeroDescriptor &z) { z.metadata[1].key = "zero.other"; },
       "go together"},
  };
  for (const Case &c : cases) {
    ZeroDescriptor z;
    c.breakIt(z);
    try {
      z.session();
      ADD_FAILURE() << c.what << ": no error";
    } catch (const tcc::rt::Error &e) {
      EXPECT_EQ(e.status(), TCC_ERROR_ABI) << c.what;
      EXPECT_NE(std::string(e.what()).find(c.expected), std::string::npos)
          << c.what << ": " << e.what();
    }
  }
}

} // namespace
