/*===- eval_artifact.c - TEST FIXTURE: a training artifact with eval_step -===*
 *
 * THIS IS A TEST FIXTURE, NOT COMPILER OUTPUT. It stands in for what tcc
 * will emit for `--loss=cross_entropy` once the compiler writes the entry
 * point eval_step, so tcc-run's validation loss, early stopping, best
 * checkpoints and plateau schedule can be tested on it today.
 *
 * The model: logits = x W (x f32[4,2], W f32[2,3] the one parameter),
 * mean cross-entropy against integer labels y (i64[4]), plain SGD.
 *   infer(x) -> logits
 *   train_step(x, y, lr) -> loss; W -= lr * dloss/dW
 *   eval_step(x, y) -> loss, logits (the contract: loss first, then the
 *                                    model's outputs; no lr)
 * Built by the lit test with clang -shared; x86_64 only, like tcc.
 *
 *===----------------------------------------------------------------------===*/

#include "runtime/include/tcc/abi.h"

#include <math.h>
#include <stddef.h>

enum { B = 4, F = 2, C = 3 };

static const int64_t kX[] = {B, F};
static const int64_t kY[] = {B};
static const int64_t kLogits[] = {B, C};
static const int64_t kW[] = {F, C};

/* One arena slot per name, shared by every entry (as tcc plans them). */
static const tcc_abi_tensor kTensors[] = {
    {"x", TCC_ROLE_INPUT, TCC_DTYPE_F32, TCC_REGION_ARENA, 2, kX, 0, B * F * 4},
    {"y", TCC_ROLE_INPUT, TCC_DTYPE_I64, TCC_REGION_ARENA, 1, kY, 64, B * 8},
    {"lr", TCC_ROLE_INPUT, TCC_DTYPE_F32, TCC_REGION_ARENA, 0, 0, 128, 4},
    {"loss", TCC_ROLE_OUTPUT, TCC_DTYPE_F32, TCC_REGION_ARENA, 0, 0, 192, 4},
    {"logits", TCC_ROLE_OUTPUT, TCC_DTYPE_F32, TCC_REGION_ARENA, 2, kLogits, 256, B * C * 4},
    {"W", TCC_ROLE_PARAM, TCC_DTYPE_F32, TCC_REGION_STATE, 2, kW, 0, F * C * 4},
};

/* logits = x W; returns the mean cross-entropy and, when GRAD is not NULL,
 * dloss/dW. */
static float forward(const uint8_t *arena, const float *w, float *logits, float *grad) {
  const float *x = (const float *)(arena + 0);
  const int64_t *y = (const int64_t *)(arena + 64);
  double loss = 0;
  if (grad)
    for (int i = 0; i < F * C; ++i)
      grad[i] = 0;
  for (int r = 0; r < B; ++r) {
    float *z = logits + r * C;
    float max = -INFINITY, sum = 0;
    for (int c = 0; c < C; ++c) {
      z[c] = 0;
      for (int j = 0; j < F; ++j)
        z[c] += x[r * F + j] * w[j * C + c];
      max = z[c] > max ? z[c] : max;
    }
    for (int c = 0; c < C; ++c)
      sum += expf(z[c] - max);
    loss += logf(sum) + max - z[y[r]];
    if (grad)
      for (int c = 0; c < C; ++c) {
        float d = (expf(z[c] - max) / sum - (c == y[r])) / B;
        for (int j = 0; j < F; ++j)
          grad[j * C + c] += x[r * F + j] * d;
      }
  }
  return (float)(loss / B);
}

static int32_t infer(uint8_t *arena, uint8_t *state, const tcc_abi_runtime *runtime) {
  (void)runtime;
  const float *x = (const float *)(arena + 0);
  const float *w = (const float *)state;
  float *logits = (float *)(arena + 256);
  for (int r = 0; r < B; ++r)
    for (int c = 0; c < C; ++c) {
      logits[r * C + c] = 0;
      for (int j = 0; j < F; ++j)
        logits[r * C + c] += x[r * F + j] * w[j * C + c];
    }
  return 0;
}

static int32_t trainStep(uint8_t *arena, uint8_t *state, const tcc_abi_runtime *runtime) {
  (void)runtime;
  float *w = (float *)state, logits[B * C], grad[F * C];
  float lr = *(const float *)(arena + 128);
  *(float *)(arena + 192) = forward(arena, w, logits, grad);
  for (int i = 0; i < F * C; ++i)
    w[i] -= lr * grad[i];
  return 0;
}

static int32_t evalStep(uint8_t *arena, uint8_t *state, const tcc_abi_runtime *runtime) {
  (void)runtime;
  *(float *)(arena + 192) = forward(arena, (const float *)state, (float *)(arena + 256), NULL);
  return 0;
}

static const int32_t kInferTensors[] = {0, 4, 5};
static const int32_t kTrainTensors[] = {0, 1, 2, 3, 5};
static const int32_t kEvalTensors[] = {0, 1, 3, 4, 5};

static const tcc_abi_entry kEntries[] = {
    {"infer", infer, 3, kInferTensors},
    {"train_step", trainStep, 5, kTrainTensors},
    {"eval_step", evalStep, 5, kEvalTensors},
};

static const tcc_abi_descriptor kDescriptor = {
    TCC_ABI_VERSION,
    sizeof(tcc_abi_descriptor),
    "e2e0eva1a7f1x7re",
    "eval_artifact.c (test fixture)",
    "x86_64",
    "",
    320, /* arena_size */
    64,  /* state_size */
    64,  /* alignment */
    6,
    3,
    kTensors,
    kEntries,
    0,
    0,
};

__attribute__((visibility("default"))) const tcc_abi_descriptor *tcc_artifact_descriptor(void) {
  return &kDescriptor;
}
