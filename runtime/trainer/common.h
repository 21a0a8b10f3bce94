//===- common.h - what every part of the trainer shares -------------------===//
//
// The trainer's options (tcc_trainer_options in C++ form), its one way to
// fail (a UsageError that the C API in trainer/api.cpp turns into a
// tcc_status and the last-error message), where it writes its progress
// lines, and small helpers around the runtime's C API.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_TRAINER_COMMON_H
#define TCC_RUNTIME_TRAINER_COMMON_H

#include "runtime/include/tcc/tcc.h"
#include "runtime/trainer/support.h"

#include <atomic>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tcc::train {

/// One in-memory input of a data set (tcc_trainer_array, borrowed).
struct Array {
  std::string name;
  tcc_dtype dtype;
  std::vector<int64_t> shape;
  const uint8_t *data = nullptr;
  size_t sizeBytes = 0;
};

/// The options of a run (tcc_trainer_options), named as tcc-run's flags; the
/// messages name the flags too (--steps), which the C API documents.
struct Options {
  std::string model; // the artifact's path, for messages
  int threads = 0;   // the session's thread count (set by run)
  std::string dataDir;
  std::vector<Array> data; // instead of dataDir
  // Or micro-batches from the caller (tcc_trainer_options.next_batch).
  tcc_trainer_batch_callback nextBatch = nullptr;
  void *nextBatchUser = nullptr;
  long steps = 0;
  // --epochs: the run's steps are that many passes over the data (steps 0).
  long epochs = 0;
  double lr = 0;
  bool shuffle = true;
  uint64_t seed = 0;
  std::string metrics;
  std::string save;
  long logEvery = 1;
  std::string schedule = "constant";
  long warmup = 0, stepSize = 0, cycleSteps = 0, plateauPatience = 10;
  double minLr = 0, gamma = 0.1;
  std::string checkpointDir;
  long saveEvery = 0;
  /// Whether the job writes checkpoints, and how often (rank 0's settings,
  /// which every rank keeps: a ZeRO-1 checkpoint gathers from all ranks).
  bool jobCheckpoints = false;
  long jobSaveEvery = 0;
  std::string resume;
  bool overwrite = false; // a fresh run may replace the checkpoints in --checkpoint-dir
  // Validation.
  std::string valDir;
  std::vector<Array> val; // instead of valDir
  long evalEvery = 0;
  long patience = 0;
  double minDelta = 0;
  // Monitoring: TensorBoard event files into this folder; a Chrome trace.
  std::string tensorboard;
  std::string trace;
  // The optimizer's hyperparameters, overriding the artifact's compile-time
  // values (its metadata defaults); NaN: not set.
  double weightDecay = NAN, momentum = NAN, beta1 = NAN, beta2 = NAN, eps = NAN, gradClip = NAN;
  // Data workers and augmentation.
  long workers = 0;        // 0: one prefetch thread when a core is free
  std::string augmentInput; // default: the data's one f32 input
  std::string imageShape;   // "CxHxW", default: the input's own
  long randomCrop = 0;      // padding of the random crop (0: none)
  bool flip = false;        // random horizontal flip
  std::string normalize;    // "MEAN/STD" (per channel: "M1:M2/S1:S2")
  // What a non-finite loss or gradient norm does: stop, skip or continue.
  std::string onNonfinite = "stop";
  // fp16 loss scaling: the scale a fresh run starts from (GradScaler's).
  double lossScaleInit = 65536;
  // Data parallelism: the job's communicator (borrowed, or null), this
  // process's rank and the world size. Ranks other than 0 print nothing and
  // write no files.
  tcc_communicator_t communicator = nullptr;
  int rank = 0, worldSize = 1;
  // Embedding.
  bool handleSignals = false;
  tcc_trainer_log_callback log = nullptr;
  void *logUser = nullptr;
  tcc_trainer_step_callback onStep = nullptr;
  void *onStepUser = nullptr;
  /// Set by tcc_trainer_request_stop (from any thread or a signal handler).
  std::atomic<bool> *stopRequest = nullptr;

  bool hasData() const { return !dataDir.empty() || !data.empty() || nextBatch; }
  bool hasVal() const { return !valDir.empty() || !val.empty(); }
};

/// The hyperparameter inputs of train_step and the options that set them:
/// the input's name, the flag, the Options member.
struct Hyperparameter {
  const char *input;
  const char *flag;
  double Options::*value;
};
extern const Hyperparameter kHyperparameters[6];

/// Dies unless V is in FLAG's range (the compiler's: --beta1/2 in [0, 1),
/// --eps and --grad-clip > 0, the others >= 0; all finite).
void checkHyperparameter(const char *flag, double v);

/// Checks the options against each other and their ranges (what tcc-run's
/// flags cannot express is checked too); dies naming the flag.
void checkOptions(const Options &o);

/// Writes a progress line (printf-style) to o.log, line by line, or to
/// stdout when there is none (tcc-run).
void say(const Options &o, const char *format, ...) __attribute__((format(printf, 2, 3)));
/// Flushes stdout (where there is no log callback).
void flush(const Options &o);

} // namespace tcc::train

#endif // TCC_RUNTIME_TRAINER_COMMON_H
