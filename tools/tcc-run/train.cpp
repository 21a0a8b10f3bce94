//===- train.cpp - the training loop of tcc-run ---------------------------===//
//
// Runs `train_step` over batches that a prefetch thread assembles from the
// mapped data set, sets the host-side learning rate of each step, evaluates
// on a validation set every --eval-every steps (with `eval_step` when the
// artifact has it, else `infer` for accuracy only), stops early, cuts the rate
// on a plateau, and writes checkpoints that resume bit for bit: everything a
// later step depends on (parameters, optimizer state, the data order, the
// schedule's and the early stop's state) is in them.
//
//===----------------------------------------------------------------------===//

#include "tools/tcc-run/common.h"
#include "tools/tcc-run/data.h"
#include "tools/tcc-run/schedule.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <numeric>
#include <optional>
#include <random>

namespace tcc::run {
namespace {

volatile std::sig_atomic_t interrupted = 0;
extern "C" void onInterrupt(int) { interrupted = 1; }

/// What one pass over the validation set measured.
struct Evaluation {
  bool hasLoss = false, hasAccuracy = false;
  double loss = 0, accuracy = 0; // mean loss over batches; accuracy in [0, 1]
  int64_t correct = 0, seen = 0;
};

/// Evaluates on the full batches of --val DIR: the loss with `eval_step`
/// (inputs as train_step's but lr/step; outputs `loss`, then the model's),
/// the accuracy of the first model output (f32[batch, classes]) against
/// integer labels y, from eval_step's outputs or else from `infer`'s.
class Validator {
public:
  Validator(tcc_artifact_t artifact, const Options &o, const LabelSpec &labels,
            const tcc_tensor_info *trainLabels)
      : o_(o), labelSpec_(labels) {
    hasLoss_ = hasEntry(artifact, "eval_step");
    entry_ = hasLoss_ ? "eval_step" : "infer";
    if (!hasLoss_ && !hasEntry(artifact, "infer"))
      die(o.model + " has no eval_step or infer entry point to validate with");
    bool sawLoss = false;
    for (const tcc_tensor_info &t : entryTensors(artifact, entry_.c_str())) {
      if (t.role == TCC_ROLE_INPUT) {
        set_.add(o.valDir, t, o.model);
      } else if (t.role == TCC_ROLE_OUTPUT) {
        if (hasLoss_ && !sawLoss && std::string(t.name) == "loss") {
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
      die(o.model + ": " + entry_ + " has no inputs to validate with");
    // infer does not take the labels; read them for the host only.
    if (set_.indexOf(labels.name) < 0 && trainLabels)
      set_.add(o.valDir, *trainLabels, o.model, /*feed=*/false);
    labels_ = set_.indexOf(labels.name);
    const Samples *y = labels_ < 0 ? nullptr : &set_.inputs[size_t(labels_)];
    hasScores_ = hasScores_ && scores_.dtype == TCC_DTYPE_F32 && scores_.rank == 2 &&
                 scores_.shape[0] == set_.batch && y && y->declared.dtype == TCC_DTYPE_I64 &&
                 y->declared.rank == 1;
    if (!hasLoss_ && !hasScores_)
      die(o.model + ": --val without an eval_step entry needs an infer entry whose first output "
                    "is f32[batch, classes] and int64 labels " + labels.name);
    if (set_.samples < set_.batch)
      die(set_.firstFile + ": holds " + std::to_string(set_.samples) +
          " samples, fewer than one batch of " + std::to_string(set_.batch));
    if (hasScores_)
      checkLabels(set_, labels, scores_.shape[1]);
  }

  /// Whether evaluations measure the loss (an eval_step entry).
  bool hasLoss() const { return hasLoss_; }

  Evaluation run(tcc_session_t session) const {
    Evaluation e;
    e.hasLoss = hasLoss_;
    e.hasAccuracy = hasScores_;
    int64_t batch = set_.batch, batches = set_.samples / batch;
    int64_t classes = hasScores_ ? scores_.shape[1] : 0;
    std::vector<float> out(size_t(batch * classes));
    double lossSum = 0;
    Prefetcher prefetcher(
        set_, 0, long(batches),
        [batch](long k, std::vector<int64_t> &rows) {
          std::iota(rows.begin(), rows.end(), int64_t(k) * batch);
        },
        prefetchInBackground(o_.threads));
    for (int64_t k = 0; k < batches; ++k) {
      const Batch &b = prefetcher.next();
      setBatch(session, set_, b);
      check(tcc_session_run(session, entry_.c_str()));
      if (hasLoss_) {
        float loss;
        check(tcc_session_copy_output(session, "loss", &loss, sizeof loss));
        lossSum += loss;
      }
      if (!hasScores_)
        continue;
      check(tcc_session_copy_output(session, scores_.name, out.data(), out.size() * sizeof(float)));
      const int64_t *y = reinterpret_cast<const int64_t *>(b[size_t(labels_)].data());
      for (int64_t r = 0; r < batch; ++r) {
        if (labelSpec_.ignored(y[r]))
          continue;
        const float *row = out.data() + r * classes;
        e.correct += std::max_element(row, row + classes) - row == y[r];
        ++e.seen;
      }
    }
    e.loss = lossSum / double(std::max<int64_t>(batches, 1));
    e.accuracy = double(e.correct) / double(std::max<int64_t>(e.seen, 1));
    return e;
  }

  /// "validation at step 20/60: loss 0.5, accuracy 83.33% (80 of 96 samples
  /// in full batches of DIR)".
  void print(const Evaluation &e, long step) const {
    std::printf("validation at step %ld/%ld:", step, o_.steps);
    if (e.hasLoss)
      std::printf(" loss %.6f", e.loss);
    if (e.hasAccuracy)
      std::printf("%s accuracy %.2f%% (%lld of %lld samples", e.hasLoss ? "," : "",
                  100.0 * e.accuracy, (long long)e.correct, (long long)e.seen);
    else
      std::printf(" (%lld samples", (long long)(set_.samples / set_.batch * set_.batch));
    std::printf(" in full batches of %s)\n", o_.valDir.c_str());
  }

private:
  const Options &o_;
  LabelSpec labelSpec_;
  DataSet set_;
  std::string entry_;
  bool hasLoss_ = false;
  tcc_tensor_info scores_{};
  bool hasScores_ = false;
  int labels_ = -1;
};

/// "1:02:03".
std::string clockString(double seconds) {
  long s = long(std::max(seconds, 0.0) + 0.5);
  char text[32];
  std::snprintf(text, sizeof text, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  return text;
}

/// "0.123456789": nine significant digits, as in the metrics.
std::string shortString(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

/// Reads the metadata KEY of the checkpoint PATH into OUT; false if absent.
bool getMetadata(const std::string &path, const std::string &key, std::string &out) {
  char value[128];
  tcc_status status = tcc_checkpoint_get_metadata(path.c_str(), key.c_str(), value, sizeof value);
  if (status == TCC_ERROR_NOT_FOUND)
    return false;
  check(status);
  out = value;
  return true;
}


} // namespace

void train(tcc_artifact_t artifact, const Options &o) {
  if (!hasEntry(artifact, "train_step"))
    die(o.model + " has no train_step entry point; compile it with --loss=... to train");

  // How to drive the step: the labels, and K micro-batches per optimizer
  // step (accumulate_grad with micro = 0 .. K-2, then train_step).
  LabelSpec labels;
  labels.name = artifactMetadata(artifact, "labels", "y");
  std::string ignore = artifactMetadata(artifact, "ignore_index", "");
  if (!ignore.empty()) {
    labels.hasIgnore = true;
    labels.ignoreIndex = std::strtoll(ignore.c_str(), nullptr, 10);
  }
  long accum = std::strtol(artifactMetadata(artifact, "grad_accum", "1").c_str(), nullptr, 10);
  if (accum < 1 || (accum > 1 && !hasEntry(artifact, "accumulate_grad")))
    die(o.model + ": grad_accum " + std::to_string(accum) +
        " needs an accumulate_grad entry point; recompile the model");

  // Every input but the runtime scalars comes from DIR/NAME.npy; all share
  // the sample count.
  DataSet set;
  bool hasLrInput = false, hasLoss = false, hasStepInput = false, hasGradNorm = false,
       hasRngInput = false;
  for (const tcc_tensor_info &t : entryTensors(artifact, "train_step")) {
    std::string name = t.name;
    if (t.role == TCC_ROLE_OUTPUT && name == "loss")
      hasLoss = true;
    if (t.role == TCC_ROLE_OUTPUT && name == "grad_norm")
      hasGradNorm = true;
    if (t.role != TCC_ROLE_INPUT)
      continue;
    if (name == "lr" || name == "step") {
      if (t.dtype != TCC_DTYPE_F32 || t.rank != 0)
        die(o.model + ": input '" + name + "' is " + typeString(t) + ", expected f32[]");
      (name == "lr" ? hasLrInput : hasStepInput) = true;
      continue;
    }
    if (name == "rng") { // [seed, counter] of the step's dropouts
      if (t.dtype != TCC_DTYPE_I64 || t.rank != 1 || t.shape[0] != 2)
        die(o.model + ": input 'rng' is " + typeString(t) + ", expected i64[2]");
      hasRngInput = true;
      continue;
    }
    set.add(o.dataDir, t, o.model);
  }
  if (!hasLrInput || !hasLoss)
    die(o.model + ": train_step lacks the 'lr' input or the 'loss' output");
  if (set.inputs.empty())
    die(o.model + ": train_step has no data inputs");
  // Labels must name a class of the model's output: the last dimension of
  // infer's first output.
  if (hasEntry(artifact, "infer"))
    for (const tcc_tensor_info &t : entryTensors(artifact, "infer"))
      if (t.role == TCC_ROLE_OUTPUT && t.rank >= 1) {
        checkLabels(set, labels, t.shape[t.rank - 1]);
        break;
      }
  int64_t samples = set.samples, batch = set.batch;
  if (samples < batch)
    die(set.firstFile + ": holds " + std::to_string(samples) +
        " samples, fewer than one batch of " + std::to_string(batch));
  // The validation set is checked before the first step too.
  std::optional<Validator> validator;
  if (!o.valDir.empty()) {
    const Samples *y = set.find(labels.name);
    validator.emplace(artifact, o, labels, y ? &y->declared : nullptr);
  }

  SessionHandle handle = createSession(artifact, o);
  tcc_session_t session = handle.s;

  FILE *metrics = nullptr;
  if (!o.metrics.empty() && !(metrics = std::fopen(o.metrics.c_str(), "w")))
    die(o.metrics + ": cannot open for writing: " + std::strerror(errno));
  struct FileGuard {
    FILE *f;
    ~FileGuard() {
      if (f)
        std::fclose(f);
    }
  } metricsGuard{metrics};

  // Sample order: in order, or a fresh permutation every epoch.
  int64_t perEpoch = samples / batch;
  std::vector<int64_t> order(static_cast<size_t>(samples));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(o.seed);

  // What validation judges by: the loss (lower is better) when eval_step
  // gives one, else the accuracy (higher is better).
  bool judgeLoss = validator && validator->hasLoss();
  const char *judged = judgeLoss ? "val_loss" : "val_accuracy";
  auto better = [&](double a, double b, double delta) {
    return judgeLoss ? a < b - delta : a > b + delta;
  };
  // The state that later steps depend on; all of it goes into checkpoints.
  LrSchedule schedule(o);
  double bestMetric = NAN; // of best.safetensors (NaN: none yet)
  double stopBest = NAN;   // early stopping's reference
  long stopBad = 0;        // evaluations without improvement
  double windowSum = 0;    // training losses since the last
  long windowCount = 0;    //   evaluation (plateau without val)

  // The data-order settings a checkpoint records, to resume exactly.
  std::map<std::string, std::string> run = {{"seed", std::to_string(o.seed)},
                                            {"shuffle", o.shuffle ? "1" : "0"},
                                            {"samples", std::to_string(samples)},
                                            {"batch", std::to_string(batch)}};
  if (accum > 1)
    run["grad_accum"] = std::to_string(accum);
  long first = 0;
  if (!o.resume.empty()) {
    check(tcc_session_load_checkpoint(session, o.resume.c_str()));
    std::string value;
    for (const auto &[key, expected] : run) {
      if (!getMetadata(o.resume, key, value))
        die(o.resume + ": the checkpoint has no '" + key + "'; it was not written by tcc-run");
      if (expected != value)
        die(o.resume + ": the checkpoint was made with " + key + " " + value + ", this run has " +
            expected + "; resuming would change the batches");
    }
    if (!getMetadata(o.resume, "step", value))
      die(o.resume + ": the checkpoint has no 'step'; it was not written by tcc-run");
    first = std::strtol(value.c_str(), nullptr, 10);
    if (first < 0 || first > o.steps)
      die(o.resume + ": checkpoint step " + std::to_string(first) + " is outside this run of " +
          std::to_string(o.steps) + " steps");
    auto get = [&](const std::string &key, std::string &out) {
      return getMetadata(o.resume, key, out);
    };
    schedule.restore(get);
    if (get("best_metric", value))
      bestMetric = parseExact("best_metric", value);
    if (get("stop_best", value))
      stopBest = parseExact("stop_best", value);
    if (get("stop_bad", value))
      stopBad = long(parseExact("stop_bad", value));
    if (get("window_loss_sum", value))
      windowSum = parseExact("window_loss_sum", value);
    if (get("window_loss_count", value))
      windowCount = long(parseExact("window_loss_count", value));
    // Replay the shuffles of the micro-batches already taken.
    for (long micro = 0; micro < first * accum; ++micro)
      if (micro % perEpoch == 0 && o.shuffle)
        std::shuffle(order.begin(), order.end(), rng);
    std::printf("resumed from %s at step %ld\n", o.resume.c_str(), first);
  }
  auto writeCheckpoint = [&](const std::string &file, long stepsDone,
                             const std::map<std::string, std::string> &extra) {
    makeDirectory(o.checkpointDir);
    std::map<std::string, std::string> metadata = run;
    metadata["step"] = std::to_string(stepsDone);
    schedule.save(metadata);
    metadata["best_metric"] = exactString(bestMetric);
    metadata["stop_best"] = exactString(stopBest);
    metadata["stop_bad"] = std::to_string(stopBad);
    metadata["window_loss_sum"] = exactString(windowSum);
    metadata["window_loss_count"] = std::to_string(windowCount);
    for (const auto &[k, v] : extra)
      metadata[k] = v;
    std::vector<const char *> keys, values;
    for (const auto &[k, v] : metadata) {
      keys.push_back(k.c_str());
      values.push_back(v.c_str());
    }
    std::string path = o.checkpointDir + "/" + file;
    check(tcc_session_save_checkpoint(session, path.c_str(), int32_t(keys.size()), keys.data(),
                                      values.data()));
    return path;
  };
  auto saveCheckpoint = [&](long stepsDone) {
    if (!o.checkpointDir.empty())
      writeCheckpoint("checkpoint.safetensors", stepsDone, {});
  };
  auto previous = std::signal(SIGINT, onInterrupt);
  struct SignalGuard {
    void (*previous)(int);
    ~SignalGuard() { std::signal(SIGINT, previous); }
  } signalGuard{previous};

  // Batch k = micro-batch k (step k without accumulation): the worker owns
  // the order and the generator from here.
  Prefetcher batches(set, first * accum, o.steps * accum,
                     [&o, perEpoch, batch, order = std::move(order),
                      rng = std::move(rng)](long micro, std::vector<int64_t> &rows) mutable {
                       int64_t b = micro % perEpoch;
                       if (b == 0 && o.shuffle)
                         std::shuffle(order.begin(), order.end(), rng);
                       std::copy_n(order.begin() + b * batch, batch, rows.begin());
                     },
                     prefetchInBackground(o.threads));

  // On a device a run returns once it is queued: the next micro-batch is set
  // (its upload starts on the copy stream) before this one's loss is read, so
  // that it overlaps the step, unless an evaluation comes between (it sets
  // the same inputs). On the CPU a run is synchronous: set, run, read.
  const char *device = nullptr;
  check(tcc_artifact_get_device(artifact, &device));
  bool overlapUploads = std::strcmp(device, "cpu") != 0;
  auto evaluatesAfter = [&](long stepsDone) {
    return validator && o.evalEvery > 0 && (stepsDone % o.evalEvery == 0 || stepsDone == o.steps);
  };
  bool staged = false; // the micro-batch about to run is set already

  double windowLoss = 0;
  long windowSteps = 0;
  auto runStart = std::chrono::steady_clock::now();
  auto windowStart = runStart;
  long stepsDone = first;
  for (long step = first; step < o.steps; ++step) {
    if (interrupted) {
      saveCheckpoint(step);
      die("interrupted at step " + std::to_string(step) +
          (o.checkpointDir.empty() ? std::string(" (no --checkpoint-dir: nothing saved)")
                                   : "; checkpoint written to " + o.checkpointDir +
                                         "/checkpoint.safetensors (resume with --resume)"));
    }
    float lr = float(schedule.at(step));
    // K micro-batches; the reported loss is their mean (PyTorch's loss / K).
    float loss = 0, gradNorm = std::nanf("");
    for (long micro = 0; micro < accum; ++micro) {
      if (!staged)
        setBatch(session, set, batches.next());
      staged = false;
      if (hasRngInput) {
        // Dropout masks: Philox keyed by the seed, counted by micro-batch.
        int64_t state[2] = {int64_t(o.seed), step * accum + micro};
        const int64_t shape[1] = {2};
        check(tcc_session_set_input(session, "rng", TCC_DTYPE_I64, 1, shape, state, sizeof state));
      }
      bool last = micro == accum - 1;
      if (last) {
        check(tcc_session_set_input(session, "lr", TCC_DTYPE_F32, 0, nullptr, &lr, sizeof lr));
        if (hasStepInput) {
          float count = float(step + 1); // 1-based, as PyTorch's optimizers count
          check(tcc_session_set_input(session, "step", TCC_DTYPE_F32, 0, nullptr, &count,
                                      sizeof count));
        }
      } else {
        float index = float(micro);
        check(tcc_session_set_input(session, "micro", TCC_DTYPE_F32, 0, nullptr, &index,
                                    sizeof index));
      }
      check(tcc_session_run(session, last ? "train_step" : "accumulate_grad"));
      bool more = !last || (step + 1 < o.steps && !evaluatesAfter(step + 1));
      if (overlapUploads && more) {
        setBatch(session, set, batches.next());
        staged = true;
      }
      float microLoss;
      check(tcc_session_copy_output(session, "loss", &microLoss, sizeof microLoss));
      loss += microLoss / float(accum);
    }
    if (hasGradNorm)
      check(tcc_session_copy_output(session, "grad_norm", &gradNorm, sizeof gradNorm));
    if (!std::isfinite(loss))
      die("step " + std::to_string(step + 1) + ": the loss is " + std::to_string(loss) +
          "; stopping (the parameters are not saved)");
    stepsDone = step + 1;
    windowLoss += loss;
    ++windowSteps;
    windowSum += loss;
    ++windowCount;

    // Evaluate every --eval-every steps and after the last one.
    std::optional<Evaluation> evaluation;
    std::string stopReason;
    // The extra evaluation after the last step reports (and may write
    // best.safetensors) but leaves early stopping and the plateau schedule
    // alone: no step follows it, and a longer run resumed from this one's
    // checkpoint must take the steps of a run that never stopped here.
    bool scheduled = o.evalEvery > 0 && stepsDone % o.evalEvery == 0;
    if (scheduled || (o.evalEvery > 0 && stepsDone == o.steps)) {
      bool improved = false;
      if (validator) {
        evaluation = validator->run(session);
        validator->print(*evaluation, stepsDone);
        double metric = judgeLoss ? evaluation->loss : evaluation->accuracy;
        improved = std::isnan(bestMetric) || better(metric, bestMetric, 0);
        if (improved)
          bestMetric = metric;
        if (o.patience > 0 && scheduled) {
          if (std::isnan(stopBest) || better(metric, stopBest, o.minDelta)) {
            stopBest = metric;
            stopBad = 0;
          } else if (++stopBad >= o.patience) {
            char text[256];
            std::snprintf(text, sizeof text,
                          "%s has not improved by more than %g for %ld evaluations (best %.6f)",
                          judged, o.minDelta, stopBad, stopBest);
            stopReason = text;
          }
        }
      }
      // The plateau schedule judges the validation loss, or without one the
      // mean training loss since the previous evaluation.
      std::string cut;
      if (scheduled &&
          schedule.observe(judgeLoss ? evaluation->loss : windowSum / double(windowCount), &cut))
        std::printf("plateau at step %ld: %s %s\n", stepsDone,
                    judgeLoss ? "val_loss" : "mean training loss", cut.c_str());
      if (scheduled) {
        windowSum = 0;
        windowCount = 0;
      }
      // After every update above, so that resuming from it is exact.
      if (improved && !o.checkpointDir.empty()) {
        std::map<std::string, std::string> extra;
        if (evaluation->hasLoss)
          extra["val_loss"] = shortString(evaluation->loss);
        if (evaluation->hasAccuracy)
          extra["val_accuracy"] = shortString(evaluation->accuracy);
        std::string path = writeCheckpoint("best.safetensors", stepsDone, extra);
        std::printf("best %s so far: wrote %s\n", judged, path.c_str());
      }
    }
    if (metrics) {
      std::fprintf(metrics, "{\"step\": %ld, \"loss\": %.9g, \"lr\": %.9g", stepsDone, double(loss),
                   double(lr));
      if (hasGradNorm)
        std::fprintf(metrics, ", \"grad_norm\": %.9g", double(gradNorm));
      if (evaluation && evaluation->hasLoss)
        std::fprintf(metrics, ", \"val_loss\": %.9g", evaluation->loss);
      if (evaluation && evaluation->hasAccuracy)
        std::fprintf(metrics, ", \"val_accuracy\": %.9g", evaluation->accuracy);
      std::fputs("}\n", metrics);
      std::fflush(metrics);
    }
    if (o.saveEvery > 0 && stepsDone % o.saveEvery == 0 && stepsDone < o.steps &&
        stopReason.empty())
      saveCheckpoint(stepsDone);
    if (stepsDone % o.logEvery == 0 || stepsDone == o.steps || !stopReason.empty()) {
      auto now = std::chrono::steady_clock::now();
      double seconds = std::chrono::duration<double>(now - windowStart).count();
      double perStep =
          std::chrono::duration<double>(now - runStart).count() / double(stepsDone - first);
      std::printf("step %ld/%ld loss %.6f", stepsDone, o.steps, windowLoss / double(windowSteps));
      if (windowSteps > 1)
        std::printf(" (mean of %ld)", windowSteps);
      std::printf(" lr %g epoch %.2f %.0f samples/s eta %s\n", double(lr),
                  double(stepsDone * accum * batch) / double(samples),
                  double(windowSteps * accum * batch) / std::max(seconds, 1e-9),
                  clockString(perStep * double(o.steps - stepsDone)).c_str());
      std::fflush(stdout);
      windowLoss = 0;
      windowSteps = 0;
      windowStart = now;
    }
    if (!stopReason.empty()) {
      std::printf("early stopping at step %ld of %ld: %s\n", stepsDone, o.steps,
                  stopReason.c_str());
      break;
    }
  }
  saveCheckpoint(stepsDone);
  if (!o.save.empty())
    check(tcc_session_save_params(session, o.save.c_str()));
  // Without --eval-every, --val evaluates once, after training.
  if (validator && o.evalEvery == 0)
    validator->print(validator->run(session), stepsDone);
}

} // namespace tcc::run
