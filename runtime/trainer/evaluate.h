//===- evaluate.h - one pass over a data set with eval_step or infer ------===//
//
// The Validator measures a session on a whole data set: the mean loss with
// eval_step and the accuracy of a classifier, batched at the compiled batch,
// the partial last batch included when the artifact takes one. The trainer
// runs it on --val; tcc_evaluator_* (tcc-run evaluate, tcc.evaluate) runs it
// on its own, so an evaluation during training and one afterwards are the
// same code.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_TRAINER_EVALUATE_H
#define TCC_RUNTIME_TRAINER_EVALUATE_H

#include "runtime/support/file_roles.h"
#include "runtime/trainer/data.h"

namespace tcc::train {

/// What one pass over the data set measured.
struct Evaluation {
  bool hasLoss = false, hasAccuracy = false;
  /// The mean of the batches' losses weighted by their samples (a partial
  /// batch weighs what it holds); the accuracy in [0, 1].
  double loss = 0, accuracy = 0;
  /// The accuracy's counts: right predictions, labels that count (not the
  /// ignored label).
  int64_t correct = 0, seen = 0;
  /// The samples evaluated, and those past the last full batch that an
  /// artifact without partial batches leaves out.
  int64_t samples = 0, skipped = 0;
};

/// Evaluates on a data set (its full batches, and the partial last one when
/// the artifact takes partial batches): the loss with `eval_step` (inputs as
/// train_step's but lr/step; outputs `loss`, then the model's), the
/// accuracy of the first model output (f32[batch, classes]) against integer
/// labels, from eval_step's outputs or else from `infer`'s. Messages name
/// the data by FLAG ("--val", "--data").
class Validator {
public:
  /// Opens and checks the data set of SOURCE for ARTIFACT. TRAINLABELS
  /// describes the labels input when infer does not take it (the training
  /// step's, or nullptr: then the labels are read if the data has them).
  /// O stays referenced (its threads, ranks and communicator).
  Validator(tcc_artifact_t artifact, const Options &o, const DataSource &source,
            const LabelSpec &labels, const tcc_tensor_info *trainLabels, const char *flag);
  Validator(const Validator &) = delete;
  Validator &operator=(const Validator &) = delete;

  /// Batches get the training's normalization (no crop or flip).
  void setAugment(const AugmentSpec &spec, const std::string &input);

  /// Whether evaluations measure the loss (an eval_step entry).
  bool hasLoss() const { return hasLoss_; }
  /// The data set's sample count.
  int64_t samples() const { return set_.samples; }
  /// The data set, for its augmentation (configureAugmentation).
  DataSet &set() { return set_; }

  /// One pass over the data set on SESSION.
  Evaluation run(tcc_session_t session) const;

  /// "validation at step 20/60: loss 0.5, accuracy 83.33% (80 of 96 samples
  /// in full batches of DIR)".
  void print(const Evaluation &e, long step) const;

  /// The files the data is read from.
  void addFiles(std::vector<tcc::rt::FileRole> &into) const;

private:
  const Options &o_;
  DataSource source_;
  LabelSpec labelSpec_;
  DataSet set_;
  std::string entry_;
  bool hasLoss_ = false;
  bool partial_ = false;
  tcc_tensor_info scores_{};
  bool hasScores_ = false;
  int labels_ = -1;
  /// A labels declaration made up for an artifact without a training step.
  int64_t labelsShape_[1] = {0};
};

} // namespace tcc::train

#endif // TCC_RUNTIME_TRAINER_EVALUATE_H
