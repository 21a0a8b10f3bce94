//===- api.cpp - the trainer's C API (tcc_trainer_*, tcc_evaluator_*) -----===//
//
// Converts tcc_trainer_options and tcc_evaluator_options into the trainer's
// Options (copying every string; the arrays' bytes stay borrowed) and each
// failure, a UsageError or a runtime Error, into a tcc_status with the
// last-error message.
//
//===----------------------------------------------------------------------===//

#include "runtime/include/tcc/tcc.h"

#include "runtime/error.h"
#include "runtime/handles.h"
#include "runtime/trainer/evaluate.h"
#include "runtime/trainer/train.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>

struct tcc_trainer {
  std::atomic<bool> stop{false};
  std::unique_ptr<tcc::train::Trainer> impl;
};

struct tcc_evaluator {
  tcc::train::Options options; // the Validator holds a reference: never moves
  std::optional<tcc::train::Validator> impl;
};

namespace {

using tcc::train::Options;
using tcc::train::UsageError;

/// BODY under the runtime's guard, with the trainer's UsageError carried as
/// its status and message.
template <typename Body> tcc_status guardedTrainer(Body &&body) noexcept {
  return tcc::rt::guarded([&] {
    try {
      body();
    } catch (const UsageError &e) {
      throw tcc::rt::Error(e.status, e.message);
    }
  });
}

void require(const void *pointer, const char *what) {
  if (!pointer)
    tcc::rt::fail(TCC_ERROR_INVALID_ARGUMENT, std::string(what) + " is NULL");
}

std::string text(const char *s) { return s ? s : ""; }

/// The arrays of a tcc_trainer_options, their names and shapes copied.
std::vector<tcc::train::Array> arrays(const tcc_trainer_array *list, int32_t count,
                                      const char *what) {
  if (count < 0 || (count > 0 && !list))
    tcc::rt::fail(TCC_ERROR_INVALID_ARGUMENT, std::string(what) + ": a negative count or NULL list");
  std::vector<tcc::train::Array> out;
  for (int32_t i = 0; i < count; ++i) {
    const tcc_trainer_array &a = list[i];
    if (!a.name || a.rank < 1 || !a.shape)
      tcc::rt::fail(TCC_ERROR_INVALID_ARGUMENT,
                    std::string(what) + " " + std::to_string(i) +
                        ": needs a name and a shape of rank >= 1 (the samples first)");
    out.push_back({a.name, a.dtype, std::vector<int64_t>(a.shape, a.shape + a.rank),
                   static_cast<const uint8_t *>(a.data), a.size_bytes});
  }
  return out;
}

/// The trainer's Options from the C struct, of which the caller knew
/// struct_size bytes (later fields keep their defaults): the option fields
/// by trainer_options.def, the arrays (copied), callbacks and communicator.
Options convert(const tcc_trainer_options *c) {
  require(c, "options");
  tcc_trainer_options full;
  tcc_trainer_options_init(&full);
  if (c->struct_size < offsetof(tcc_trainer_options, data_dir) || c->struct_size > sizeof full)
    tcc::rt::fail(TCC_ERROR_INVALID_ARGUMENT,
                  "options: struct_size " + std::to_string(c->struct_size) +
                      " is not a tcc_trainer_options; call tcc_trainer_options_init");
  std::memcpy(&full, c, c->struct_size);
  Options o;
  tcc::train::fromC(full, o);
  o.data = arrays(full.data, full.num_data, "data array");
  o.val = arrays(full.val, full.num_val, "validation array");
  o.handleSignals = full.handle_signals != 0;
  o.log = full.log;
  o.logUser = full.log_user;
  o.onStep = full.on_step;
  o.onStepUser = full.on_step_user;
  o.communicator = full.communicator;
  o.nextBatch = full.next_batch;
  o.nextBatchUser = full.next_batch_user;
  return o;
}

} // namespace

void tcc_trainer_options_init(tcc_trainer_options *out_options) {
  if (!out_options)
    return;
  std::memset(out_options, 0, sizeof *out_options);
  out_options->struct_size = sizeof *out_options;
  tcc::train::setDefaults(*out_options);
}

tcc_status tcc_trainer_check_options(const tcc_trainer_options *options) {
  return guardedTrainer([&] { tcc::train::checkOptions(convert(options)); });
}

tcc_status tcc_trainer_create(tcc_artifact_t artifact, const tcc_trainer_options *options,
                              tcc_trainer_t *out_trainer) {
  return guardedTrainer([&] {
    require(artifact, "artifact");
    require(out_trainer, "out_trainer");
    Options o = convert(options);
    tcc_artifact_info info;
    tcc::train::check(tcc_artifact_get_info(artifact, &info));
    o.model = info.path;
    if (o.communicator) {
      int32_t rank = 0, size = 1;
      tcc::train::check(tcc_communicator_get_info(o.communicator, &rank, &size, nullptr));
      o.rank = rank;
      o.worldSize = size;
    }
    auto trainer = std::make_unique<tcc_trainer>();
    o.stopRequest = &trainer->stop;
    trainer->impl = std::make_unique<tcc::train::Trainer>(artifact, std::move(o));
    *out_trainer = trainer.release();
  });
}

tcc_status tcc_trainer_run(tcc_trainer_t trainer, tcc_session_t session) {
  return guardedTrainer([&] {
    require(trainer, "trainer");
    require(session, "session");
    trainer->impl->run(session, session->impl->numThreads());
  });
}

void tcc_trainer_request_stop(tcc_trainer_t trainer) {
  if (trainer)
    trainer->stop.store(true);
}

tcc_status tcc_trainer_steps_done(tcc_trainer_t trainer, int64_t *out_steps) {
  return guardedTrainer([&] {
    require(trainer, "trainer");
    require(out_steps, "out_steps");
    *out_steps = trainer->impl->stepsDone();
  });
}

void tcc_trainer_destroy(tcc_trainer_t trainer) { delete trainer; }

void tcc_evaluator_options_init(tcc_evaluator_options *out_options) {
  if (!out_options)
    return;
  std::memset(out_options, 0, sizeof *out_options);
  out_options->struct_size = sizeof *out_options;
}

tcc_status tcc_evaluator_create(tcc_artifact_t artifact, const tcc_evaluator_options *options,
                                tcc_evaluator_t *out_evaluator) {
  return guardedTrainer([&] {
    require(artifact, "artifact");
    require(options, "options");
    require(out_evaluator, "out_evaluator");
    tcc_evaluator_options full;
    tcc_evaluator_options_init(&full);
    if (options->struct_size < offsetof(tcc_evaluator_options, data_dir) ||
        options->struct_size > sizeof full)
      tcc::rt::fail(TCC_ERROR_INVALID_ARGUMENT,
                    "options: struct_size " + std::to_string(options->struct_size) +
                        " is not a tcc_evaluator_options; call tcc_evaluator_options_init");
    std::memcpy(&full, options, options->struct_size);
    auto evaluator = std::make_unique<tcc_evaluator>();
    Options &o = evaluator->options;
    tcc_artifact_info info;
    tcc::train::check(tcc_artifact_get_info(artifact, &info));
    o.model = info.path;
    // The data set is what the trainer's --val would be.
    o.val_dir = text(full.data_dir);
    o.val = arrays(full.data, full.num_data, "data array");
    if (o.val_dir.empty() == o.val.empty())
      tcc::train::die("evaluating needs --data DIR or data arrays (one of the two)");
    o.normalize = text(full.normalize);
    o.augment_input = text(full.augment_input);
    o.image_shape = text(full.image_shape);
    tcc::train::LabelSpec labels = tcc::train::readLabelSpec(artifact, o.model);
    // The training step's labels, when infer does not take them.
    const tcc_tensor_info *trainLabels = nullptr;
    std::vector<tcc_tensor_info> step;
    if (tcc::train::hasEntry(artifact, TCC_ENTRY_TRAIN_STEP))
      step = tcc::train::entryTensors(artifact, TCC_ENTRY_TRAIN_STEP);
    for (const tcc_tensor_info &t : step)
      if (t.role == TCC_ROLE_INPUT && t.name == labels.name)
        trainLabels = &t;
    evaluator->impl.emplace(artifact, o, tcc::train::DataSource{o.val_dir, &o.val}, labels,
                            trainLabels, "--data");
    // The training's normalization, never its random crop or flip.
    tcc::train::DataSet &set = evaluator->impl->set();
    tcc::train::configureAugmentation(o, labels, set);
    set.augmentRandom = false;
    *out_evaluator = evaluator.release();
  });
}

tcc_status tcc_evaluator_run(tcc_evaluator_t evaluator, tcc_session_t session,
                             tcc_evaluation *out_evaluation) {
  return guardedTrainer([&] {
    require(evaluator, "evaluator");
    require(session, "session");
    require(out_evaluation, "out_evaluation");
    evaluator->options.threads = session->impl->numThreads();
    tcc::train::Evaluation e = evaluator->impl->run(session);
    tcc_evaluation out;
    out.samples = e.samples;
    out.skipped = e.skipped;
    out.has_loss = e.hasLoss;
    out.has_accuracy = e.hasAccuracy;
    out.loss = e.hasLoss ? e.loss : NAN;
    out.accuracy = e.hasAccuracy ? e.accuracy : NAN;
    out.correct = e.correct;
    out.counted = e.seen;
    *out_evaluation = out;
  });
}

void tcc_evaluator_destroy(tcc_evaluator_t evaluator) { delete evaluator; }
