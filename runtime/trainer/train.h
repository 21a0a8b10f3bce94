//===- train.h - one training run, behind tcc_trainer_t -------------------===//
//
// A Trainer checks its options and prepares everything that needs no
// session when it is made (the step's signature, the data, the output paths,
// the checkpoint folder's lock), so a bad run fails before any work; run()
// then trains a session once. Failures throw UsageError (common.h).
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_TRAINER_TRAIN_H
#define TCC_RUNTIME_TRAINER_TRAIN_H

#include "runtime/trainer/common.h"

#include <memory>

namespace tcc::train {

class TrainingRun;

class Trainer {
public:
  Trainer(tcc_artifact_t artifact, Options options);
  ~Trainer();
  Trainer(const Trainer &) = delete;
  Trainer &operator=(const Trainer &) = delete;

  /// Trains SESSION (whose parallel loops take THREADS threads); once.
  void run(tcc_session_t session, int threads);
  /// The steps done so far (the checkpoint's step after a resume).
  long stepsDone() const;

private:
  Options o_; // TrainingRun holds a reference: o_ never moves
  std::unique_ptr<TrainingRun> run_;
  bool ran_ = false;
};

} // namespace tcc::train

#endif // TCC_RUNTIME_TRAINER_TRAIN_H
