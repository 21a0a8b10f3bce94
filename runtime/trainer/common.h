//===- common.h - what every part of the trainer shares -------------------===//
//
// The trainer's options (trainer_options.def's values and the C API's
// arrays, callbacks and communicator), its one way to
// fail (a UsageError that the C API in trainer/api.cpp turns into a
// tcc_status and the last-error message), where it writes its progress
// lines, and small helpers around the runtime's C API.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_TRAINER_COMMON_H
#define TCC_RUNTIME_TRAINER_COMMON_H

#include "runtime/include/tcc/tcc.h"
#include "runtime/trainer/options.h"
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

/// The options of a run: the values of trainer_options.def's rows
/// (OptionValues, named as the C fields) and what the C API gives beside
/// them. The messages name the options by their flags (--steps), which the C
/// API documents.
struct Options : OptionValues {
  std::string model; // the artifact's path, for messages
  int threads = 0;   // the session's thread count (set by run)
  std::vector<Array> data; // instead of data_dir
  // Or micro-batches from the caller (tcc_trainer_options.next_batch).
  tcc_trainer_batch_callback nextBatch = nullptr;
  void *nextBatchUser = nullptr;
  /// Whether the job writes checkpoints, and how often (rank 0's settings,
  /// which every rank keeps: a ZeRO-1 checkpoint gathers from all ranks).
  bool jobCheckpoints = false;
  long jobSaveEvery = 0;
  std::vector<Array> val; // instead of val_dir
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

  bool hasData() const { return !data_dir.empty() || !data.empty() || nextBatch; }
  bool hasVal() const { return !val_dir.empty() || !val.empty(); }
};

/// An optimizer hyperparameter (a Hyper row of trainer_options.def): the
/// train_step input it sets (named as the option), its flag, its value.
struct Hyperparameter {
  const char *input;
  const char *flag;
  double Options::*value;
};
/// Every Hyper row, in the table's order.
const std::vector<Hyperparameter> &hyperparameters();

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
