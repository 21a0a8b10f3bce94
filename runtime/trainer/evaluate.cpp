//===- evaluate.cpp - one pass over a data set with eval_step or infer ----===//

#include "runtime/trainer/evaluate.h"

#include <algorithm>
#include <unistd.h>

namespace tcc::train {

Validator::Validator(tcc_artifact_t artifact, const Options &o, const DataSource &source,
                     const LabelSpec &labels, const tcc_tensor_info *trainLabels,
                     const char *flag)
    : o_(o), source_(source), labelSpec_(labels) {
  hasLoss_ = hasEntry(artifact, TCC_ENTRY_EVAL_STEP);
  entry_ = hasLoss_ ? TCC_ENTRY_EVAL_STEP : TCC_ENTRY_INFER;
  if (!hasLoss_ && !hasEntry(artifact, TCC_ENTRY_INFER))
    die(o.model + " has no eval_step or infer entry point to evaluate with");
  bool sawLoss = false;
  // A partial last batch is evaluated when the artifact takes one.
  partial_ = !artifactMetadata(artifact, TCC_METADATA_BATCH, "").empty();
  for (const tcc_tensor_info &t : entryTensors(artifact, entry_.c_str())) {
    if (t.role == TCC_ROLE_INPUT && std::string(t.name) == TCC_INPUT_VALID)
      continue; // written by the runtime
    if (t.role == TCC_ROLE_INPUT) {
      set_.add(source_, t, o.model);
    } else if (t.role == TCC_ROLE_OUTPUT) {
      if (hasLoss_ && !sawLoss && std::string(t.name) == TCC_OUTPUT_LOSS) {
        if (t.dtype != TCC_DTYPE_F32 || t.rank != 0)
          die(o.model + ": eval_step's output 'loss' is " + typeString(t) + ", expected f32[]");
        sawLoss = true;
      } else if (!hasScores_) {
        scores_ = t;
        hasScores_ = true;
      }
    }
  }
  if (hasLoss_ && !sawLoss)
    die(o.model + ": eval_step has no 'loss' output");
  if (set_.inputs.empty())
    die(o.model + ": " + entry_ + " has no inputs to evaluate with");
  // infer does not take the labels; read them for the host only: as the
  // training step declares them, or, for an artifact without one, as
  // int64 class ids when the data has them.
  tcc_tensor_info madeUp{};
  if (set_.indexOf(labels.name) < 0 && !trainLabels) {
    bool present =
        source_.inMemory()
            ? std::any_of(source_.arrays->begin(), source_.arrays->end(),
                          [&](const Array &a) { return a.name == labels.name; })
            : ::access((source_.dir + "/" + npyFileName(labels.name)).c_str(), F_OK) == 0;
    if (present) {
      labelsShape_[0] = set_.batch;
      madeUp.name = labelSpec_.name.c_str();
      madeUp.role = TCC_ROLE_INPUT;
      madeUp.dtype = TCC_DTYPE_I64;
      madeUp.rank = 1;
      madeUp.shape = labelsShape_;
      madeUp.size_bytes = size_t(set_.batch) * sizeof(int64_t);
      trainLabels = &madeUp;
    }
  }
  if (set_.indexOf(labels.name) < 0 && trainLabels)
    set_.add(source_, *trainLabels, o.model, /*feed=*/false);
  labels_ = set_.indexOf(labels.name);
  const Samples *y = labels_ < 0 ? nullptr : &set_.inputs[size_t(labels_)];
  hasScores_ = hasScores_ && scores_.dtype == TCC_DTYPE_F32 && scores_.rank == 2 &&
               scores_.shape[0] == set_.batch && y && y->declared.dtype == TCC_DTYPE_I64 &&
               y->declared.rank == 1;
  if (!hasLoss_ && !hasScores_)
    die(std::string(flag) + ": " + o.model +
        " has no eval_step entry, so evaluating needs an infer entry whose first output is "
        "f32[batch, classes] and int64 labels " + labels.name);
  if (!partial_ && set_.samples < set_.batch)
    die(set_.firstFile + ": holds " + std::to_string(set_.samples) +
        " samples, fewer than one batch of " + std::to_string(set_.batch) +
        " (this artifact evaluates full batches only)");
  if (hasScores_)
    checkLabels(set_, labels, scores_.shape[1]);
}

void Validator::setAugment(const AugmentSpec &spec, const std::string &input) {
  set_.augment = spec;
  set_.augmentIndex = set_.indexOf(input);
  set_.augmentRandom = false;
}

Evaluation Validator::run(tcc_session_t session) const {
  Evaluation e;
  e.hasLoss = hasLoss_;
  e.hasAccuracy = hasScores_;
  const int64_t batch = set_.batch, samples = set_.samples, full = samples / batch;
  const int64_t batches = full + (partial_ && samples % batch != 0);
  e.samples = partial_ ? samples : full * batch;
  e.skipped = samples - e.samples;
  // Under mpirun rank r evaluates batches r, r + W, ...; the sums meet
  // in one reduction.
  const int64_t world = o_.worldSize, rank = o_.rank;
  const int64_t mine = batches > rank ? (batches - rank + world - 1) / world : 0;
  int64_t classes = hasScores_ ? scores_.shape[1] : 0;
  std::vector<float> out(size_t(batch * classes));
  double lossSum = 0;
  int64_t lossSamples = 0;
  // The partial batch's rows past the data repeat its last sample; only
  // the real ones are set.
  Prefetcher prefetcher(
      set_, 0, long(mine),
      [batch, samples, world, rank](long j, std::vector<int64_t> &rows) {
        const int64_t k = rank + int64_t(j) * world;
        for (int64_t r = 0; r < batch; ++r)
          rows[size_t(r)] = std::min(k * batch + r, samples - 1);
        return 0;
      },
      prefetchInBackground(o_.threads) ? 1 : 0);
  for (int64_t j = 0; j < mine; ++j) {
    const int64_t k = rank + j * world;
    const Batch &b = prefetcher.next();
    const int64_t n = std::min(batch, samples - k * batch);
    setBatch(session, set_, b, n);
    check(tcc_session_run(session, entry_.c_str()));
    if (hasLoss_) {
      // The mean over samples: a partial batch weighs what it holds.
      float loss;
      check(tcc_session_copy_output(session, TCC_OUTPUT_LOSS, &loss, sizeof loss));
      lossSum += double(loss) * double(n);
      lossSamples += n;
    }
    if (!hasScores_)
      continue;
    check(tcc_session_copy_output(session, scores_.name, out.data(),
                                  size_t(n * classes) * sizeof(float)));
    const int64_t *y = reinterpret_cast<const int64_t *>(b[size_t(labels_)].data());
    for (int64_t r = 0; r < n; ++r) {
      if (labelSpec_.ignored(y[r]))
        continue;
      const float *row = out.data() + r * classes;
      e.correct += std::max_element(row, row + classes) - row == y[r];
      ++e.seen;
    }
  }
  if (world > 1) {
    double sums[4] = {lossSum, double(lossSamples), double(e.correct), double(e.seen)};
    check(tcc_communicator_sum(o_.communicator, sums, 4));
    lossSum = sums[0];
    lossSamples = int64_t(sums[1]);
    e.correct = int64_t(sums[2]);
    e.seen = int64_t(sums[3]);
  }
  e.loss = lossSum / double(std::max<int64_t>(lossSamples, 1));
  e.accuracy = double(e.correct) / double(std::max<int64_t>(e.seen, 1));
  return e;
}

void Validator::print(const Evaluation &e, long step) const {
  say(o_, "validation at step %ld/%ld:", step, o_.steps);
  if (e.hasLoss)
    say(o_, " loss %.6f", e.loss);
  if (e.hasAccuracy)
    say(o_, "%s accuracy %.2f%% (%lld of %lld samples", e.hasLoss ? "," : "",
        100.0 * e.accuracy, (long long)e.correct, (long long)e.seen);
  else
    say(o_, " (%lld samples", (long long)e.samples);
  say(o_, " %s %s)\n", partial_ ? "of" : "in full batches of",
      source_.describe("validation").c_str());
}

void Validator::addFiles(std::vector<tcc::rt::FileRole> &into) const {
  for (const Samples &s : set_.inputs)
    into.push_back({"--val", s.file});
}

} // namespace tcc::train
