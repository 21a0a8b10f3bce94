//===- train.cpp - the training loop of the trainer -----------------------===//
//
// Runs `train_step` over batches that a prefetch thread assembles from the
// mapped data set (or that the caller's data source gives), sets the
// host-side learning rate of each step, evaluates on a validation set every
// --eval-every steps (evaluate.h: with `eval_step` when the artifact has it,
// else `infer` for accuracy only), stops early, cuts the rate on a plateau,
// and writes checkpoints that resume bit for bit: everything a
// later step depends on (parameters, optimizer state, the data order, the
// schedule's and the early stop's state) is in them.
//
//===----------------------------------------------------------------------===//

#include "runtime/trainer/train.h"

#include "runtime/support/file_roles.h"
#include "runtime/trainer/buckets.h"
#include "runtime/trainer/data.h"
#include "runtime/trainer/evaluate.h"
#include "runtime/trainer/outputs.h"
#include "runtime/trainer/nvml.h"
#include "runtime/trainer/schedule.h"
#include "runtime/trainer/tensorboard.h"
#include "runtime/trainer/trace.h"

#include "runtime/cuda/driver.h"
#include "runtime/error.h"
#include "runtime/handles.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>

namespace tcc::train {
namespace {

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

/// V as a JSON number: nine significant digits, null when not finite.
std::string jsonNumber(double v) { return std::isfinite(v) ? shortString(v) : "null"; }

/// The checkpoint metadata that carries the outputs of its step that a
/// failed write (a full disk) kept from --metrics and --tensorboard.
constexpr const char *kUnwrittenMetrics = "unwritten_metrics";
constexpr const char *kUnwrittenScalars = "unwritten_scalars";

/// TensorBoard scalars as "TAG=VALUE;..." (nine digits: they are floats).
std::string encodeScalars(const std::vector<std::pair<std::string, double>> &values) {
  std::string out;
  for (const auto &[tag, value] : values)
    out += (out.empty() ? "" : ";") + tag + "=" + shortString(value);
  return out;
}
std::vector<std::pair<std::string, double>> decodeScalars(const std::string &text) {
  std::vector<std::pair<std::string, double>> values;
  for (size_t begin = 0; begin < text.size();) {
    size_t end = text.find(';', begin);
    if (end == std::string::npos)
      end = text.size();
    std::string item = text.substr(begin, end - begin);
    size_t eq = item.find('=');
    if (eq != std::string::npos)
      values.push_back({item.substr(0, eq), std::strtod(item.c_str() + eq + 1, nullptr)});
    begin = end + 1;
  }
  return values;
}

/// V in the fewest significant digits that read back as V ("0.1"; a float
/// as a float): how the ranks compare and name their options.
template <typename T> std::string shortestString(T v) {
  char text[40];
  for (int digits = 1;; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, double(v));
    if (digits >= 17 || T(std::strtod(text, nullptr)) == v)
      return text;
  }
}

/// Reads the metadata KEY of the checkpoint PATH into OUT; false if absent.
bool getMetadata(const std::string &path, const std::string &key, std::string &out) {
  char value[4096];
  tcc_status status = tcc_checkpoint_get_metadata(path.c_str(), key.c_str(), value, sizeof value);
  if (status == TCC_ERROR_NOT_FOUND)
    return false;
  check(status);
  out = value;
  return true;
}

/// What later steps depend on beyond the session's tensors, the data order
/// and the schedule: saved into every checkpoint and restored from it,
/// through this one key list.
struct LoopState {
  double bestMetric = NAN; // of best.safetensors (NaN: none yet)
  double stopBest = NAN;   // early stopping's reference
  long stopBad = 0;        // evaluations without improvement
  double windowSum = 0;    // training losses since the last
  long windowCount = 0;    //   evaluation (plateau without val)
  long nonfinite = 0;      // steps with a non-finite loss (--on-nonfinite=continue)
  long skipped = 0;        // steps that skipped their update (the guard or
                           //   loss scaling): the optimizers' step counter
                           //   leaves them out, as PyTorch's

  void save(std::map<std::string, std::string> &metadata) const {
    metadata["best_metric"] = exactString(bestMetric);
    metadata["stop_best"] = exactString(stopBest);
    metadata["stop_bad"] = std::to_string(stopBad);
    metadata["window_loss_sum"] = exactString(windowSum);
    metadata["window_loss_count"] = std::to_string(windowCount);
    metadata["nonfinite_steps"] = std::to_string(nonfinite);
    metadata["skipped_steps"] = std::to_string(skipped);
  }

  /// From the checkpoint of step STEP; a count above STEP is a damaged
  /// checkpoint (a skipped-steps count above it made Adam divide by zero).
  void restore(const std::function<bool(const std::string &, std::string &)> &get, long step) {
    std::string value;
    // KEY into OUT when present; NAN_OK: NaN means "none yet".
    auto number = [&](const char *key, double &out, bool nanOk) {
      if (!get(key, value))
        return;
      out = parseExact(key, value);
      if (std::isinf(out) || (!nanOk && std::isnan(out)))
        die(std::string("the checkpoint's ") + key + " '" + value + "' is not finite");
    };
    number("best_metric", bestMetric, /*nanOk=*/true);
    number("stop_best", stopBest, /*nanOk=*/true);
    number("window_loss_sum", windowSum, /*nanOk=*/false);
    if (get("stop_bad", value))
      stopBad = metadataCount("stop_bad", value);
    if (get("window_loss_count", value))
      windowCount = metadataCount("window_loss_count", value);
    if (get("nonfinite_steps", value))
      nonfinite = metadataCount("nonfinite_steps", value);
    if (get("skipped_steps", value))
      skipped = metadataCount("skipped_steps", value);
    for (auto [key, count] : {std::pair<const char *, long>{"stop_bad", stopBad},
                              {"window_loss_count", windowCount},
                              {"nonfinite_steps", nonfinite},
                              {"skipped_steps", skipped}})
      if (count > step)
        die(std::string("the checkpoint's ") + key + " " + std::to_string(count) +
            " is above its step " + std::to_string(step));
  }
};

/// --trace on a --profile CPU artifact: a span per kernel, from the
/// session's kernel observer (called around every kernel of a run).
struct KernelTracer {
  TraceWriter *trace = nullptr;
  std::vector<std::string> names;
  double start = 0;
};

extern "C" void onKernel(void *user, int32_t kernel, int32_t end) {
  auto *k = static_cast<KernelTracer *>(user);
  if (!end) {
    k->start = k->trace->now();
    return;
  }
  const std::string &name = size_t(kernel) < k->names.size() ? k->names[size_t(kernel)]
                                                             : std::to_string(kernel);
  k->trace->span(Track::Kernels, name, k->start, k->trace->now());
}

/// Installs the tracer on a session for a scope (a run that fails too).
class KernelObserverScope {
public:
  KernelObserverScope(tcc_session_t session, KernelTracer *tracer) : session_(session) {
    check(tcc_session_set_kernel_observer(session, &onKernel, tracer));
  }
  ~KernelObserverScope() { tcc_session_set_kernel_observer(session_, nullptr, nullptr); }
  KernelObserverScope(const KernelObserverScope &) = delete;
  KernelObserverScope &operator=(const KernelObserverScope &) = delete;

private:
  tcc_session_t session_;
};

/// One hyperparameter input of train_step and the value the run writes.
struct HyperInput {
  std::string name;
  float value;
  /// Whether the run writes it: an option set it. Otherwise the session
  /// writes the artifact's compile-time value itself (tcc_session_run).
  bool overridden;
};

/// The runtime inputs and outputs of train_step beside the data.
struct StepSignature {
  bool hasLr = false, hasStep = false, hasRng = false, hasLoss = false, hasGradNorm = false;
  std::vector<HyperInput> hyper;
  /// fp16 loss scaling: the input loss_scale_init, the outputs loss_scale
  /// and skipped.
  bool hasLossScale = false;
  /// The non-finite guard (tcc --skip-nonfinite): the input skip_nonfinite;
  /// the output skipped (also with loss scaling).
  bool hasSkipInput = false, hasSkipped = false;
};

/// Whether NAME is a hyperparameter input.
const Hyperparameter *findHyperparameter(const std::string &name) {
  for (const Hyperparameter &h : hyperparameters())
    if (name == h.input)
      return &h;
  return nullptr;
}

} // namespace

using Clock = std::chrono::steady_clock;

/// The progress line's window: the steps since the previous line.
struct ProgressWindow {
  double loss = 0; // the sum of the finite losses
  long finite = 0; // their count
  long steps = 0;  // the steps
  Clock::time_point start;
};

/// One training run: the data, the step's signature, the state that goes
/// into checkpoints, and the loop.
class TrainingRun {
public:
  TrainingRun(tcc_artifact_t artifact, const Options &o) : artifact_(artifact), o_(o), schedule_(o) {}
  /// The trace is written however the run ends (an error too).
  ~TrainingRun() {
    try {
      trace_.finish();
    } catch (const UsageError &e) {
      std::fprintf(stderr, "tcc-run: %s\n", e.message.c_str());
    }
  }

  /// What needs no session: the step's signature, the data and validation
  /// sets (opened and checked), the output paths and the checkpoint lock.
  void prepare() {
    readSignature();
    checkOutputs();
  }
  /// Data parallel: fails every rank alike (TCC_ERROR_RANKS_DIFFER) unless
  /// all ranks have the same artifact and agree on jobSettings() (one
  /// collective; nothing when alone).
  void checkRanksAgree() const;
  /// Restores --resume into SESSION and runs the loop on it.
  void run(tcc_session_t session);
  long stepsDone() const { return stepsDone_; }
  /// Optimizer steps per pass over the data (--epochs).
  long stepsPerEpoch() const {
    if (buckets_.active())
      die("--epochs with length buckets: an epoch's batches depend on the lengths; give --steps");
    return long(set_.samples / (set_.batch * o_.worldSize) / accum_);
  }

private:
  void readSignature();
  /// What every rank of a job must be given alike, as (flag, value) pairs,
  /// the artifact's fingerprint first; an empty value: not given.
  std::vector<std::pair<std::string, std::string>> jobSettings() const;
  /// The value of hyperparameter H for this run: its option, else the
  /// artifact's compile-time default.
  double hyperValue(const Hyperparameter &h) const;
  void checkOutputs();
  void restore();
  /// The guard after STEP (0-based): a non-finite LOSS or GRADNORM stops
  /// the run (--on-nonfinite=stop) or is counted and warned about
  /// (continue); a finite loss more than 10x the mean of the recent ones
  /// warns. Returns whether the loss is finite.
  bool checkFinite(long step, float loss, float gradNorm);
  /// Runs the K micro-batches of STEP (0-based); returns its mean loss, or
  /// nothing when a data callback has ended before the step.
  std::optional<float> runStep(long step, float lr);
  /// Evaluates after STEPSDONE steps when due: reports, updates the best
  /// checkpoint, early stopping and the plateau schedule. Returns the
  /// evaluation and sets *STOPREASON when early stopping ends the run.
  std::optional<Evaluation> evaluateIfDue(long stepsDone, std::string *stopReason);
  /// The last step's loss scale and whether it skipped its update (fp16).
  float lossScale_ = 0;
  bool skipped_ = false;
  /// --metrics: the step's line (JSON).
  std::string metricsLine(long stepsDone, float loss, float lr, float gradNorm,
                          const std::optional<Evaluation> &evaluation) const;
  /// --tensorboard: the step's scalars (train/..., val/... when it
  /// evaluated, gpu/... on a device NVML sees). SECONDS: the step's time.
  std::vector<std::pair<std::string, double>>
  tensorBoardValues(float loss, float lr, float gradNorm, double seconds,
                    const std::optional<Evaluation> &evaluation);
  /// Writes the step's metrics line and scalars. When a write fails the
  /// run stops at this step, and its checkpoint carries what was not
  /// written (kUnwrittenMetrics, kUnwrittenScalars): a resumed run writes it
  /// first, so that its files equal those of a run that never stopped.
  void writeStepOutputs(long stepsDone, float loss, float lr, float gradNorm, double seconds,
                        const std::optional<Evaluation> &evaluation);
  /// On --resume: the step outputs the checkpoint carries, written.
  std::string unwrittenMetrics_, unwrittenScalars_;
  std::map<std::string, std::string> unwritten_;
  /// Opens --tensorboard at the run's first step: the options as text, the
  /// device monitor on a CUDA artifact.
  void openTensorBoard();
  /// The progress line after STEPSDONE steps, for the window W (then
  /// restarted).
  void printProgress(long stepsDone, float loss, float lr, ProgressWindow &w,
                     Clock::time_point runStart);
  /// Calls the step callback; true when it asks to stop.
  bool reportStep(long stepsDone, float loss, float lr, float gradNorm,
                  const std::optional<Evaluation> &evaluation);
  std::string writeCheckpoint(const std::string &file, long stepsDone,
                              const std::map<std::string, std::string> &extra);
  void saveCheckpoint(long stepsDone) {
    if (!o_.jobCheckpoints)
      return;
    // ZeRO-1: every rank sends its shard of the optimizer state to rank 0.
    check(tcc_session_gather_state(session_, 0));
    if (!checkpoints_.active())
      return;
    writeCheckpoint("checkpoint.safetensors", stepsDone, {});
    lastSaved_ = stepsDone;
  }
  /// Ends the run after STEPSDONE steps for WHY: writes the checkpoint (the
  /// state is at a step boundary) and dies saying where it went.
  [[noreturn]] void stopAt(long stepsDone, const std::string &why,
                           tcc_status status = TCC_ERROR_INVALID_ARGUMENT);
  /// The run's start on SESSION: the communicator, --resume, rank 0's state
  /// on every rank, the metrics file and the data.
  void beginRun(tcc_session_t session);
  /// On a --profile artifact with --trace: the kernels' names, and OBSERVER
  /// set to give each kernel a span in the trace.
  void traceKernels(std::optional<KernelObserverScope> &observer);
  /// Stops the run before STEP (0-based) when it was asked to: STOPALL (a
  /// rank was asked during the last step), a signal (SIGNALS: handled) or
  /// tcc_trainer_request_stop.
  void stopIfAsked(long step, bool stopAll, bool signals);
  /// Data parallel: the job's loss from this rank's LOSS (one collective),
  /// and in *STOPALL whether any rank was asked to stop.
  float jobLoss(float loss, bool signals, bool *stopAll);
  /// Reads whether STEP (0-based) skipped its update and its loss scale,
  /// then guards LOSS and GRADNORM (checkFinite unless it skipped). Returns
  /// whether the loss is finite.
  bool judgeStep(long step, float loss, float gradNorm);
  /// What follows step STEPSDONE of the loop: the evaluation when due, the
  /// step's outputs and callback, the periodic checkpoint and the progress
  /// line. Returns true when the run stops here (early stopping, the
  /// callback).
  bool endStep(long stepsDone, float loss, float lr, float gradNorm, double seconds,
               ProgressWindow &window, Clock::time_point runStart);
  /// After the loop's STEPSDONE steps: the warnings, the last checkpoint,
  /// --save, the validation without --eval-every and the trace.
  void finishRun(long stepsDone);
  /// Starts the data for the steps from first_ on: the prefetcher of a data
  /// set (the epochs' order replayed up to first_), or the data callback
  /// (the micro-batches of the steps before first_ discarded).
  void startPrefetcher();
  void startStream();
  /// The next micro-batch, or stopAt(STEP) when its data cannot be read.
  const Batch &nextBatch(long step);
  bool evaluatesAfter(long stepsDone) const {
    return validator_ && o_.eval_every > 0 &&
           (stepsDone % o_.eval_every == 0 || stepsDone == o_.steps);
  }

  tcc_artifact_t artifact_;
  const Options &o_;
  LabelSpec labels_;
  long accum_ = 1;
  DataSet set_;
  StepSignature sig_;
  std::optional<Validator> validator_;
  tcc_session_t session_ = nullptr; // borrowed for run()
  CheckpointFolder checkpoints_;
  MetricsFile metrics_;
  bool judgeLoss_ = false; // validation judges by the loss, else the accuracy
  // The state that later steps depend on; all of it goes into checkpoints.
  LrSchedule schedule_;
  LoopState state_;
  std::map<std::string, std::string> order_; // the data-order settings
  long first_ = 0;                           // the step the run starts at
  long lastSaved_ = -1; // the step of the last checkpoint.safetensors written
  std::unique_ptr<Prefetcher> batches_;
  /// With a data callback instead: its micro-batches, K for a step.
  std::unique_ptr<BatchStream> stream_;
  std::vector<Batch> streamBatches_;
  bool overlapUploads_ = false;
  bool staged_ = false; // the micro-batch about to run is set already
  // Length buckets (tcc --length-buckets): each sample's bucket, the bucket
  // of the micro-batch that is set (staged or about to run), the cut copies.
  LengthBuckets buckets_;
  std::vector<int> sampleBucket_;
  int setTag_ = 0;
  std::vector<std::vector<uint8_t>> cut_;
  /// Sets BATCH (tagged with its bucket TAG) on the session.
  void feed(tcc_session_t session, const Batch &batch, int tag) {
    if (buckets_.active())
      setBucketBatch(session, set_, batch, buckets_, tag, cut_);
    else
      setBatch(session, set_, batch);
    setTag_ = tag;
  }
  long stepsDone_ = 0;
  // Monitoring.
  TensorBoardWriter tensorboard_;
  std::unique_ptr<DeviceMonitor> device_;
  TraceWriter trace_;
  double waitSeconds_ = 0; // waiting for batches, since the last progress line
  KernelTracer kernels_;
  // The loss-spike warning's reference: the last finite losses.
  std::vector<double> recent_;
  size_t recentNext_ = 0;
};

void TrainingRun::readSignature() {
  if (!hasEntry(artifact_, TCC_ENTRY_TRAIN_STEP))
    die(o_.model + " has no train_step entry point; compile it with --loss=... to train");
  // How to drive the step: the labels, and K micro-batches per optimizer
  // step (accumulate_grad with micro = 0 .. K-2, then train_step).
  labels_ = readLabelSpec(artifact_, o_.model);
  long long accum = metadataInteger(artifact_, TCC_METADATA_GRAD_ACCUM, "1", o_.model);
  if (accum > 1000000000)
    die(o_.model + ": the artifact's metadata grad_accum '" + std::to_string(accum) +
        "' is out of range");
  accum_ = long(accum);
  if (accum_ < 1 || (accum_ > 1 && !hasEntry(artifact_, TCC_ENTRY_ACCUMULATE_GRAD)))
    die(o_.model + ": grad_accum " + std::to_string(accum_) +
        " needs an accumulate_grad entry point; recompile the model");
  buckets_ = LengthBuckets::read(artifact_, o_.model);
  for (int b = 0; accum_ > 1 && b + 1 < int(buckets_.values.size()); ++b)
    if (!hasEntry(artifact_, buckets_.entry(TCC_ENTRY_ACCUMULATE_GRAD, b).c_str()))
      die(o_.model + ": grad_accum " + std::to_string(accum_) + " needs the entry point " +
          buckets_.entry(TCC_ENTRY_ACCUMULATE_GRAD, b) + "; recompile the model");

  // Every input but the runtime scalars comes from DIR/NAME.npy; all share
  // the sample count.
  for (const tcc_tensor_info &t : entryTensors(artifact_, TCC_ENTRY_TRAIN_STEP)) {
    std::string name = t.name;
    if (t.role == TCC_ROLE_OUTPUT && name == TCC_OUTPUT_LOSS)
      sig_.hasLoss = true;
    if (t.role == TCC_ROLE_OUTPUT && name == TCC_OUTPUT_GRAD_NORM)
      sig_.hasGradNorm = true;
    if (t.role == TCC_ROLE_OUTPUT && name == TCC_OUTPUT_SKIPPED)
      sig_.hasSkipped = true;
    if (t.role != TCC_ROLE_INPUT)
      continue;
    if (name == TCC_INPUT_LR || name == TCC_INPUT_STEP) {
      if (t.dtype != TCC_DTYPE_F32 || t.rank != 0)
        die(o_.model + ": input '" + name + "' is " + typeString(t) + ", expected f32[]");
      (name == TCC_INPUT_LR ? sig_.hasLr : sig_.hasStep) = true;
      continue;
    }
    if (name == TCC_INPUT_ONE_MINUS_BETA1 || name == TCC_INPUT_ONE_MINUS_BETA2) {
      // PyTorch's coefficient: the difference in double, then f32.
      if (t.dtype != TCC_DTYPE_F32 || t.rank != 0)
        die(o_.model + ": input '" + name + "' is " + typeString(t) + ", expected f32[]");
      const Hyperparameter *beta =
          findHyperparameter(name == TCC_INPUT_ONE_MINUS_BETA1 ? TCC_INPUT_BETA1 : TCC_INPUT_BETA2);
      sig_.hyper.push_back({name, float(1.0 - hyperValue(*beta)), !std::isnan(o_.*beta->value)});
      continue;
    }
    if (const Hyperparameter *h = findHyperparameter(name)) {
      if (t.dtype != TCC_DTYPE_F32 || t.rank != 0)
        die(o_.model + ": input '" + name + "' is " + typeString(t) + ", expected f32[]");
      sig_.hyper.push_back({name, float(hyperValue(*h)), !std::isnan(o_.*h->value)});
      continue;
    }
    if (name == TCC_INPUT_SKIP_NONFINITE) {
      if (t.dtype != TCC_DTYPE_F32 || t.rank != 0)
        die(o_.model + ": input '" + name + "' is " + typeString(t) + ", expected f32[]");
      sig_.hasSkipInput = true;
      continue;
    }
    if (name == TCC_INPUT_LOSS_SCALE_INIT) {
      if (t.dtype != TCC_DTYPE_F32 || t.rank != 0)
        die(o_.model + ": input '" + name + "' is " + typeString(t) + ", expected f32[]");
      sig_.hasLossScale = true;
      continue;
    }
    if (name == TCC_INPUT_RNG) { // [seed, counter] of the step's dropouts
      if (t.dtype != TCC_DTYPE_I64 || t.rank != 1 || t.shape[0] != 2)
        die(o_.model + ": input 'rng' is " + typeString(t) + ", expected i64[2]");
      sig_.hasRng = true;
      continue;
    }
    if (o_.nextBatch)
      set_.declare(t, o_.model);
    else
      set_.add({o_.data_dir, &o_.data}, t, o_.model);
  }
  if (!sig_.hasLr || !sig_.hasLoss)
    die(o_.model + ": train_step lacks the 'lr' input or the 'loss' output");
  // A hyperparameter set for an artifact that has no such input: say why.
  for (const Hyperparameter &h : hyperparameters()) {
    bool present = std::any_of(sig_.hyper.begin(), sig_.hyper.end(),
                               [&](const HyperInput &in) { return in.name == h.input; });
    if (std::isnan(o_.*h.value) || present)
      continue;
    std::string optimizer = artifactMetadata(artifact_, TCC_METADATA_OPTIMIZER, "?");
    std::string flag = h.flag;
    die(flag + ": " + o_.model + "'s train_step has no '" + h.input + "' input (" +
        (flag == "--momentum" && optimizer == "sgd"
             ? "compiled without --momentum, so without a momentum buffer; recompile with "
               "--momentum=M"
         : flag == "--grad-clip" ? "compiled without --grad-clip; recompile with --grad-clip=N"
         : "the optimizer is " + optimizer + ", which has none") +
        ")");
  }
  // Skipping must happen inside the compiled step (the update is applied
  // in place before the host sees the loss): the guard's input, or fp16
  // loss scaling, which skips non-finite steps by itself.
  if (o_.on_nonfinite == "skip" && !sig_.hasSkipInput && !sig_.hasLossScale)
    die("--on-nonfinite=skip: " + o_.model +
        "'s train_step applies its update whatever the loss; recompile it with --skip-nonfinite "
        "(or use --on-nonfinite=stop or continue)");
  if (set_.inputs.empty())
    die(o_.model + ": train_step has no data inputs");
  // Labels must name a class of the model's output: the last dimension of
  // infer's first output.
  if (hasEntry(artifact_, TCC_ENTRY_INFER))
    for (const tcc_tensor_info &t : entryTensors(artifact_, TCC_ENTRY_INFER))
      if (t.role == TCC_ROLE_OUTPUT && t.rank >= 1) {
        checkLabels(set_, labels_, t.shape[t.rank - 1]);
        break;
      }
  if (o_.nextBatch && buckets_.active())
    die(o_.model + " has length buckets, whose batches the trainer groups from a data set; a "
                   "data source's batches cannot be grouped");
  if (o_.nextBatch && o_.worldSize > 1)
    die("a data source (next_batch) trains a single process; a data-parallel job takes "
        "--data DIR or data arrays");
  if (!o_.nextBatch && set_.samples < set_.batch)
    die(set_.firstFile + ": holds " + std::to_string(set_.samples) +
        " samples, fewer than one batch of " + std::to_string(set_.batch));
  configureAugmentation(o_, labels_, set_);
  // The validation set is checked before the first step too.
  if (o_.hasVal()) {
    const Samples *y = set_.find(labels_.name);
    validator_.emplace(artifact_, o_, DataSource{o_.val_dir, &o_.val}, labels_,
                       y ? &y->declared : nullptr, "--val");
    judgeLoss_ = validator_->hasLoss();
    if (set_.augmentIndex >= 0)
      validator_->setAugment(set_.augment, set_.inputs[size_t(set_.augmentIndex)].name);
  }
}

double TrainingRun::hyperValue(const Hyperparameter &h) const {
  if (!std::isnan(o_.*h.value))
    return o_.*h.value;
  // The compile-time value, which the compiler recorded.
  std::string key = std::string(TCC_METADATA_DEFAULT_PREFIX) + h.input;
  std::string text = artifactMetadata(artifact_, key.c_str(), "");
  char *end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end)
    die(o_.model + ": the artifact's metadata " + key + " '" + text +
        "' is not a number; recompile the model");
  return v;
}

std::vector<std::pair<std::string, std::string>> TrainingRun::jobSettings() const {
  // Everything that decides the update, the samples a step takes or the
  // sequence of collectives: a difference would diverge the ranks' weights
  // or leave one waiting for the others. What may differ: the outputs only
  // rank 0 writes (--metrics, --save, --tensorboard, --trace, the checkpoint
  // folder's path and --overwrite), --log-every, --threads, --workers, the
  // paths of the data (each host may have its own copy; their sample counts
  // are compared, not their contents) and --collective-timeout.
  tcc_artifact_info info;
  check(tcc_artifact_get_info(artifact_, &info));
  std::vector<std::pair<std::string, std::string>> out = {
      {"artifact", info.fingerprint ? info.fingerprint : ""},
      {"--data", std::to_string(set_.samples) + " samples"},
      {"--steps", std::to_string(o_.steps)},
      {"--lr", shortestString(o_.lr)},
      {"--lr-schedule", o_.lr_schedule},
      {"--warmup", std::to_string(o_.warmup)},
      {"--min-lr", shortestString(o_.min_lr)},
      {"--gamma", shortestString(o_.gamma)},
      {"--step-size", std::to_string(o_.step_size)},
      {"--cycle-steps", std::to_string(o_.cycle_steps)},
      {"--plateau-patience", std::to_string(o_.plateau_patience)},
      {"--seed", std::to_string(o_.seed)},
      {"--no-shuffle", o_.shuffle ? "" : "yes"},
  };
  // The optimizer's hyperparameters as the step gets them (given or the
  // artifact's default).
  for (const HyperInput &h : sig_.hyper)
    if (const Hyperparameter *p = findHyperparameter(h.name))
      out.push_back({p->flag, shortestString(h.value)});
  out.push_back({"--on-nonfinite", o_.on_nonfinite});
  if (sig_.hasLossScale)
    out.push_back({"--loss-scale-init", shortestString(o_.loss_scale_init)});
  // The augmentation as resolved (input, geometry, crop, flip, normalization).
  out.push_back({"augmentation (--augment-input, --image-shape, --random-crop, --flip, "
                 "--normalize)",
                 set_.augmentIndex >= 0
                     ? set_.inputs[size_t(set_.augmentIndex)].name + ": " + set_.augment.describe()
                     : ""});
  out.push_back({"--val", validator_ ? std::to_string(validator_->samples()) + " samples" : ""});
  out.push_back({"--eval-every", std::to_string(o_.eval_every)});
  out.push_back({"--patience", std::to_string(o_.patience)});
  out.push_back({"--min-delta", shortestString(o_.min_delta)});
  // Checkpoints gather a ZeRO-1 state from every rank: whether and when.
  out.push_back({"--checkpoint-dir", o_.jobCheckpoints ? "yes" : ""});
  out.push_back({"--save-every", std::to_string(o_.jobSaveEvery)});
  // The step a resume starts at (the checkpoint's path may differ).
  std::string step, resumed;
  if (!o_.resume.empty())
    resumed = getMetadata(o_.resume, "step", step) ? "a checkpoint of step " + step
                                                   : "a checkpoint without a step";
  out.push_back({"--resume", resumed});
  return out;
}

void TrainingRun::checkRanksAgree() const {
  if (o_.worldSize < 2 || !o_.communicator)
    return;
  std::vector<std::pair<std::string, std::string>> mine = jobSettings();
  // One line per setting: flag, a tab, the value (none holds either).
  std::string text;
  for (const auto &[flag, value] : mine)
    text += flag + "\t" + value + "\n";
  std::vector<std::string> texts =
      o_.communicator->impl->differing(text, "comparing the ranks' artifacts and options");
  if (texts.empty())
    return;
  auto parse = [](const std::string &t) {
    std::vector<std::pair<std::string, std::string>> lines;
    for (size_t begin = 0, end; (end = t.find('\n', begin)) != std::string::npos; begin = end + 1) {
      std::string line = t.substr(begin, end - begin);
      size_t tab = line.find('\t');
      lines.push_back({line.substr(0, tab), tab == std::string::npos ? "" : line.substr(tab + 1)});
    }
    return lines;
  };
  // Every rank has every text, so all name the same difference: the first
  // rank unlike rank 0, and its first setting unlike rank 0's.
  size_t r = 1;
  while (texts[r] == texts[0])
    ++r;
  auto first = parse(texts[0]), other = parse(texts[r]);
  std::string R = "rank " + std::to_string(r);
  std::string message;
  std::vector<std::string> also;
  for (size_t k = 0; k < std::max(first.size(), other.size()); ++k) {
    if (k >= first.size() || k >= other.size() || first[k].first != other[k].first) {
      message =
          message.empty() ? R + " runs another version of the tcc runtime than rank 0" : message;
      break;
    }
    const auto &[flag, v0] = first[k];
    const std::string &v1 = other[k].second;
    if (v0 == v1)
      continue;
    if (!message.empty()) {
      also.push_back(flag);
      continue;
    }
    // Another artifact explains whatever else differs.
    if (flag == "artifact")
      die(R + "'s artifact differs from rank 0's (fingerprint " + v1 + " on " + R + ", " + v0 +
              " on rank 0): every rank must run the same compiled model",
          TCC_ERROR_RANKS_DIFFER);
    if (v0.empty() || v1.empty())
      message = flag + " is given on " + (v0.empty() ? R : std::string("rank 0")) +
                (v0.empty() ? (v1 == "yes" ? "" : " (" + v1 + ")")
                            : (v0 == "yes" ? "" : " (" + v0 + ")")) +
                " but not on " + (v0.empty() ? std::string("rank 0") : R);
    else
      message = flag + " differs between ranks: rank 0 has " + v0 + ", " + R + " has " + v1;
  }
  if (!also.empty()) {
    message += " (also ";
    for (size_t k = 0; k < also.size(); ++k)
      message += (k ? ", " : "") + also[k];
    message += ")";
  }
  die(message + "; every rank of a data-parallel job must be started alike",
      TCC_ERROR_RANKS_DIFFER);
}

void TrainingRun::checkOutputs() {
  // No output may be an input or another output (tcc::rt::checkOutputsApart).
  // A file read whole before the first step may be replaced by its own
  // kind: --resume by the checkpoints. (The parameters the session loaded
  // are tcc-run's to check.)
  std::vector<tcc::rt::FileRole> inputs = {{"the artifact", o_.model}};
  if (!o_.nextBatch)
    for (const Samples &s : set_.inputs)
      inputs.push_back({"--data", s.file});
  if (validator_)
    validator_->addFiles(inputs);
  std::vector<tcc::rt::FileRole> outputs = {
      {"--save", o_.save}, {"--metrics", o_.metrics}, {"--trace", o_.trace}};
  std::vector<tcc::rt::FileRole> notCheckpoints = outputs;
  if (!o_.checkpoint_dir.empty())
    for (const char *file : kCheckpointFiles)
      outputs.push_back({"--checkpoint-dir", o_.checkpoint_dir + "/" + file});
  std::string error;
  if (!tcc::rt::checkOutputsApart(inputs, outputs, &error) ||
      !tcc::rt::checkOutputsApart({{"--resume", o_.resume}}, notCheckpoints, &error))
    die(error);
  if (!o_.save.empty())
    checkWritableFile(o_.save, "--save");
  if (!o_.metrics.empty())
    checkWritableFile(o_.metrics, "--metrics");
  if (!o_.checkpoint_dir.empty())
    checkpoints_.open(o_.checkpoint_dir, o_.resume, o_.overwrite);
  if (!o_.tensorboard.empty()) {
    makeDirectory(o_.tensorboard);
    checkWritableFolder(o_.tensorboard, "--tensorboard");
  }
  if (!o_.trace.empty())
    trace_.open(o_.trace);
}

void TrainingRun::restore() {
  order_ = {{"seed", std::to_string(o_.seed)},
            {"shuffle", o_.shuffle ? "1" : "0"},
            {"samples", o_.nextBatch ? "callback" : std::to_string(set_.samples)},
            {"batch", std::to_string(set_.batch)}};
  if (accum_ > 1)
    order_["grad_accum"] = std::to_string(accum_);
  // Another world size takes other samples per step: a checkpoint of one
  // resumes under the same one only (a missing key is a single process).
  if (o_.worldSize > 1)
    order_["world_size"] = std::to_string(o_.worldSize);
  if (set_.augmentIndex >= 0)
    order_["augment"] = set_.augment.describe();
  if (o_.resume.empty())
    return;
  const std::string &path = o_.resume;
  check(tcc_session_load_checkpoint(session_, path.c_str()));
  // Every key the data order depends on must agree. The optional ones are
  // written only when they differ from a plain run (a missing one is that
  // value), and are checked both ways: augmentation on in the checkpoint
  // and off in this run changes the batches as much as the reverse.
  const std::map<std::string, std::string> kPlain = {
      {"grad_accum", "1"}, {"world_size", "1"}, {"augment", "none"}};
  std::map<std::string, std::string> expected = kPlain;
  for (const auto &[key, v] : order_)
    expected[key] = v;
  std::string value;
  for (const auto &[key, want] : expected) {
    std::string got;
    if (!getMetadata(path, key, got)) {
      if (!kPlain.count(key))
        die(path + ": the checkpoint has no '" + key + "'; it was not written by tcc-run");
      got = kPlain.at(key);
    }
    if (got == want)
      continue;
    // Another batch or accumulation (a recompile at another --batch): the
    // parameters and optimizer state carry over, and the samples continue
    // as a run with this batch would take them after this many steps.
    if (key == "batch" || key == "grad_accum") {
      say(o_, "note: %s: the checkpoint was made with %s %s, this run has %s; the data order "
              "continues as this run's would at its step\n",
          path.c_str(), key.c_str(), got.c_str(), want.c_str());
      continue;
    }
    if (key == "world_size")
      die(path + ": the checkpoint was made by " +
          (got == "1" ? std::string("a single process") : got + " ranks") + ", this run has " +
          (want == "1" ? std::string("1") : want + " ranks") + "; resuming would change the batches");
    die(path + ": the checkpoint was made with " + key + " " + got + ", this run has " + want +
        "; resuming would change the batches");
  }
  if (!getMetadata(path, "step", value))
    die(path + ": the checkpoint has no 'step'; it was not written by tcc-run");
  getMetadata(path, kUnwrittenMetrics, unwrittenMetrics_);
  getMetadata(path, kUnwrittenScalars, unwrittenScalars_);
  auto get = [&](const std::string &key, std::string &out) { return getMetadata(path, key, out); };
  try {
    first_ = metadataCount("step", value);
    if (first_ > o_.steps)
      die("checkpoint step " + std::to_string(first_) + " is outside this run of " +
          std::to_string(o_.steps) + " steps");
    schedule_.restore(get);
    state_.restore(get, first_);
  } catch (const UsageError &e) {
    die(path + ": " + e.message);
  }
  say(o_, "resumed from %s at step %ld\n", path.c_str(), first_);
}

std::string TrainingRun::writeCheckpoint(const std::string &file, long stepsDone,
                                         const std::map<std::string, std::string> &extra) {
  std::map<std::string, std::string> metadata = order_;
  metadata["step"] = std::to_string(stepsDone);
  for (const auto &[k, v] : unwritten_)
    metadata[k] = v;
  schedule_.save(metadata);
  state_.save(metadata);
  for (const auto &[k, v] : extra)
    metadata[k] = v;
  std::vector<const char *> keys, values;
  for (const auto &[k, v] : metadata) {
    keys.push_back(k.c_str());
    values.push_back(v.c_str());
  }
  std::string path = checkpoints_.dir() + "/" + file;
  double start = trace_.now();
  check(tcc_session_save_checkpoint(session_, path.c_str(), int32_t(keys.size()), keys.data(),
                                    values.data()));
  if (trace_.active())
    trace_.span(Track::Checkpoints, file, start, trace_.now(),
                "\"step\": " + std::to_string(stepsDone));
  return path;
}

void TrainingRun::stopAt(long stepsDone, const std::string &why, tcc_status status) {
  std::string where = o_.rank != 0 ? std::string(" (rank 0 writes the job's checkpoints)")
                                   : std::string(" (no --checkpoint-dir: nothing saved)");
  if (checkpoints_.active()) {
    try {
      saveCheckpoint(stepsDone);
      where = "; checkpoint of step " + std::to_string(stepsDone) + " written to " +
              checkpoints_.dir() + "/checkpoint.safetensors (resume with --resume)";
    } catch (const UsageError &e) {
      where = "; the checkpoint could not be written either: " + e.message;
    }
  }
  die(why + where, status);
}

const Batch &TrainingRun::nextBatch(long step) {
  try {
    // The time the step waits for its batch: the data loading is behind.
    auto start = std::chrono::steady_clock::now();
    double traceStart = trace_.now();
    const Batch &batch = batches_->next();
    waitSeconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (trace_.active())
      trace_.span(Track::Steps, "wait for data", traceStart, trace_.now());
    return batch;
  } catch (const UsageError &e) {
    stopAt(step, e.message, e.status);
  }
}

bool TrainingRun::checkFinite(long step, float loss, float gradNorm) {
  bool badLoss = !std::isfinite(loss), badNorm = sig_.hasGradNorm && !std::isfinite(gradNorm);
  std::string where = "step " + std::to_string(step + 1) + ": ";
  if (badLoss || badNorm) {
    std::string what = badLoss ? "the loss is " + shortString(loss)
                               : "the gradient norm is " + shortString(gradNorm) + " (the loss " +
                                     shortString(loss) + ")";
    if (o_.on_nonfinite == "continue") {
      ++state_.nonfinite;
      say(o_, "warning: %s%s; continuing (--on-nonfinite=continue)\n", where.c_str(),
          what.c_str());
      return !badLoss;
    }
    // The step has applied its update, so the parameters may be ruined:
    // they are not saved, and the last checkpoint stays as it was.
    std::string last = lastSaved_ < 0 ? std::string()
                                      : "; the last checkpoint, of step " +
                                            std::to_string(lastSaved_) + ", is " +
                                            checkpoints_.dir() + "/checkpoint.safetensors";
    die(where + what + "; stopping (the parameters are not saved" + last + ")");
  }
  // A spike: more than 10x the mean of up to the last 50 finite losses
  // (at least 10 of them: the first steps' losses fall fast).
  constexpr size_t kWindow = 50, kLeast = 10;
  if (recent_.size() >= kLeast) {
    double mean = std::accumulate(recent_.begin(), recent_.end(), 0.0) / double(recent_.size());
    if (mean > 0 && loss > 10 * mean)
      say(o_, "warning: %sthe loss %s is %.1fx the mean of the last %zu steps (%s)\n",
          where.c_str(), shortString(loss).c_str(), double(loss) / mean, recent_.size(),
          shortString(mean).c_str());
  }
  if (recent_.size() < kWindow)
    recent_.push_back(loss);
  else
    recent_[recentNext_++ % kWindow] = loss;
  return true;
}

std::optional<float> TrainingRun::runStep(long step, float lr) {
  tcc_session_t session = session_;
  // A data callback gives all K micro-batches first: data that ends inside
  // a step leaves the step out whole.
  if (stream_) {
    streamBatches_.resize(size_t(accum_));
    for (long micro = 0; micro < accum_; ++micro) {
      try {
        if (!stream_->next(step * accum_ + micro, streamBatches_[size_t(micro)]))
          return std::nullopt;
      } catch (const UsageError &e) {
        stopAt(step, e.message, e.status);
      }
    }
  }
  // K micro-batches; the reported loss is their mean (PyTorch's loss / K).
  float loss = 0;
  for (long micro = 0; micro < accum_; ++micro) {
    if (stream_) {
      feed(session, streamBatches_[size_t(micro)], 0);
    } else if (!staged_) {
      const Batch &batch = nextBatch(step);
      feed(session, batch, batches_->tag());
    }
    staged_ = false;
    const int tag = setTag_;
    if (sig_.hasRng) {
      // Dropout masks: Philox keyed by the seed, counted by micro-batch.
      // Each rank its own masks: counters interleaved by rank.
      int64_t state[2] = {int64_t(o_.seed), (step * accum_ + micro) * o_.worldSize + o_.rank};
      const int64_t shape[1] = {2};
      check(tcc_session_set_input(session, TCC_INPUT_RNG, TCC_DTYPE_I64, 1, shape, state, sizeof state));
    }
    bool last = micro == accum_ - 1;
    // fp16: every micro-batch scales its loss by the step's scale.
    if (sig_.hasLossScale) {
      float init = float(o_.loss_scale_init);
      check(tcc_session_set_input(session, TCC_INPUT_LOSS_SCALE_INIT, TCC_DTYPE_F32, 0, nullptr,
                                  &init, sizeof init));
    }
    if (last) {
      check(tcc_session_set_input(session, TCC_INPUT_LR, TCC_DTYPE_F32, 0, nullptr, &lr, sizeof lr));
      for (const HyperInput &h : sig_.hyper)
        if (h.overridden)
          check(tcc_session_set_input(session, h.name.c_str(), TCC_DTYPE_F32, 0, nullptr, &h.value,
                                    sizeof h.value));
      if (sig_.hasSkipInput) {
        float skip = o_.on_nonfinite == "skip" ? 1.0f : 0.0f;
        check(tcc_session_set_input(session, TCC_INPUT_SKIP_NONFINITE, TCC_DTYPE_F32, 0, nullptr,
                                    &skip, sizeof skip));
      }
      if (sig_.hasStep) {
        // 1-based, as PyTorch's optimizers count, without the skipped steps
        // (whose optimizer.step() PyTorch never calls).
        float count = float(step + 1 - state_.skipped);
        check(tcc_session_set_input(session, TCC_INPUT_STEP, TCC_DTYPE_F32, 0, nullptr, &count,
                                    sizeof count));
      }
    } else {
      float index = float(micro);
      check(tcc_session_set_input(session, TCC_INPUT_MICRO, TCC_DTYPE_F32, 0, nullptr, &index,
                                  sizeof index));
    }
    std::string entry = buckets_.active()
                            ? buckets_.entry(last ? TCC_ENTRY_TRAIN_STEP : TCC_ENTRY_ACCUMULATE_GRAD, tag)
                            : std::string(last ? TCC_ENTRY_TRAIN_STEP : TCC_ENTRY_ACCUMULATE_GRAD);
    check(tcc_session_run(session, entry.c_str()));
    // On a device a run returns once it is queued: the next micro-batch is
    // set (its upload starts on the copy stream) before this one's loss is
    // read, so that it overlaps the step, unless an evaluation comes between
    // (it sets the same inputs). A batch that cannot be read is left for the
    // next call, which stops at its step boundary.
    bool more = !last || (step + 1 < o_.steps && !evaluatesAfter(step + 1));
    if (overlapUploads_ && more) {
      try {
        const Batch &batch = batches_->next();
        feed(session, batch, batches_->tag());
        staged_ = true;
      } catch (const UsageError &) {
      }
    }
    float microLoss;
    check(tcc_session_copy_output(session, TCC_OUTPUT_LOSS, &microLoss, sizeof microLoss));
    loss += microLoss / float(accum_);
  }
  return loss;
}

std::optional<Evaluation> TrainingRun::evaluateIfDue(long stepsDone, std::string *stopReason) {
  // The extra evaluation after the last step reports (and may write
  // best.safetensors) but leaves early stopping and the plateau schedule
  // alone: no step follows it, and a longer run resumed from this one's
  // checkpoint must take the steps of a run that never stopped here.
  bool scheduled = o_.eval_every > 0 && stepsDone % o_.eval_every == 0;
  if (!scheduled && !(o_.eval_every > 0 && stepsDone == o_.steps))
    return std::nullopt;
  const char *judged = judgeLoss_ ? "val_loss" : "val_accuracy";
  auto better = [&](double a, double b, double delta) {
    return judgeLoss_ ? a < b - delta : a > b + delta;
  };
  std::optional<Evaluation> evaluation;
  bool improved = false;
  if (validator_) {
    double start = trace_.now();
    evaluation = validator_->run(session_);
    if (trace_.active())
      trace_.span(Track::Evaluation, "validation", start, trace_.now(),
                  "\"step\": " + std::to_string(stepsDone));
    validator_->print(*evaluation, stepsDone);
    double metric = judgeLoss_ ? evaluation->loss : evaluation->accuracy;
    improved = std::isnan(state_.bestMetric) || better(metric, state_.bestMetric, 0);
    if (improved)
      state_.bestMetric = metric;
    if (o_.patience > 0 && scheduled) {
      if (std::isnan(state_.stopBest) || better(metric, state_.stopBest, o_.min_delta)) {
        state_.stopBest = metric;
        state_.stopBad = 0;
      } else if (++state_.stopBad >= o_.patience) {
        char text[256];
        std::snprintf(text, sizeof text,
                      "%s has not improved by more than %g for %ld evaluations (best %.6f)",
                      judged, o_.min_delta, state_.stopBad, state_.stopBest);
        *stopReason = text;
      }
    }
  }
  // The plateau schedule judges the validation loss, or without one the
  // mean training loss since the previous evaluation.
  std::string cut;
  if (scheduled &&
      schedule_.observe(judgeLoss_ ? evaluation->loss
                                   : state_.windowSum / double(state_.windowCount),
                        &cut))
    say(o_, "plateau at step %ld: %s %s\n", stepsDone,
                judgeLoss_ ? "val_loss" : "mean training loss", cut.c_str());
  if (scheduled) {
    state_.windowSum = 0;
    state_.windowCount = 0;
  }
  // After every update above, so that resuming from it is exact.
  if (improved && o_.jobCheckpoints)
    check(tcc_session_gather_state(session_, 0));
  if (improved && checkpoints_.active()) {
    std::map<std::string, std::string> extra;
    if (evaluation->hasLoss)
      extra["val_loss"] = shortString(evaluation->loss);
    if (evaluation->hasAccuracy)
      extra["val_accuracy"] = shortString(evaluation->accuracy);
    std::string path = writeCheckpoint("best.safetensors", stepsDone, extra);
    say(o_, "best %s so far: wrote %s\n", judged, path.c_str());
  }
  return evaluation;
}

bool TrainingRun::reportStep(long stepsDone, float loss, float lr, float gradNorm,
                             const std::optional<Evaluation> &evaluation) {
  tcc_trainer_step_info info;
  info.struct_size = sizeof info;
  info.step = stepsDone;
  info.steps = o_.steps;
  info.loss = loss;
  info.lr = lr;
  info.grad_norm = sig_.hasGradNorm ? gradNorm : std::nanf("");
  info.val_loss = evaluation && evaluation->hasLoss ? evaluation->loss : std::nan("");
  info.val_accuracy = evaluation && evaluation->hasAccuracy ? evaluation->accuracy : std::nan("");
  return o_.onStep(o_.onStepUser, &info) != 0;
}

std::string TrainingRun::metricsLine(long stepsDone, float loss, float lr, float gradNorm,
                                     const std::optional<Evaluation> &evaluation) const {
  char text[512];
  // Non-finite values (--on-nonfinite=continue, or a step that loss
  // scaling skipped) are JSON's null.
  int n = std::snprintf(text, sizeof text, "{\"step\": %ld, \"loss\": %s, \"lr\": %.9g",
                        stepsDone, jsonNumber(loss).c_str(), double(lr));
  if (sig_.hasGradNorm)
    n += std::snprintf(text + n, sizeof text - size_t(n), ", \"grad_norm\": %s",
                       jsonNumber(gradNorm).c_str());
  if (sig_.hasLossScale)
    n += std::snprintf(text + n, sizeof text - size_t(n), ", \"loss_scale\": %.9g",
                       double(lossScale_));
  if (sig_.hasSkipped)
    n += std::snprintf(text + n, sizeof text - size_t(n), ", \"skipped\": %d", skipped_ ? 1 : 0);
  // The validation numbers are doubles: 17 digits say them exactly (9
  // would round twice on the way to TensorBoard's float).
  if (evaluation && evaluation->hasLoss)
    n += std::snprintf(text + n, sizeof text - size_t(n), ", \"val_loss\": %.17g",
                       evaluation->loss);
  if (evaluation && evaluation->hasAccuracy)
    n += std::snprintf(text + n, sizeof text - size_t(n), ", \"val_accuracy\": %.17g",
                       evaluation->accuracy);
  std::snprintf(text + n, sizeof text - size_t(n), "}");
  return text;
}

void TrainingRun::writeStepOutputs(long stepsDone, float loss, float lr, float gradNorm,
                                   double seconds, const std::optional<Evaluation> &evaluation) {
  std::string line;
  std::vector<std::pair<std::string, double>> values;
  if (metrics_.active())
    line = metricsLine(stepsDone, loss, lr, gradNorm, evaluation);
  if (tensorboard_.active())
    values = tensorBoardValues(loss, lr, gradNorm, seconds, evaluation);
  try {
    if (metrics_.active())
      metrics_.write(line);
    if (tensorboard_.active())
      tensorboard_.scalars(stepsDone, values);
  } catch (const UsageError &e) {
    if (metrics_.active())
      unwritten_[kUnwrittenMetrics] = line;
    if (tensorboard_.active())
      unwritten_[kUnwrittenScalars] = encodeScalars(values);
    stopAt(stepsDone, e.message, e.status);
  }
}

void TrainingRun::printProgress(long stepsDone, float loss, float lr, ProgressWindow &w,
                                Clock::time_point runStart) {
  auto now = Clock::now();
  double seconds = std::chrono::duration<double>(now - w.start).count();
  double perStep =
      std::chrono::duration<double>(now - runStart).count() / double(stepsDone - first_);
  // The job's batch: every rank's.
  int64_t batch = set_.batch * o_.worldSize;
  say(o_, "step %ld/%ld loss %.6f", stepsDone, o_.steps,
      w.finite ? w.loss / double(w.finite) : double(loss));
  if (w.finite > 1)
    say(o_, " (mean of %ld)", w.finite);
  // A data callback's batches have no epochs.
  say(o_, " lr %g", double(lr));
  if (!o_.nextBatch)
    say(o_, " epoch %.2f", double(stepsDone * accum_ * batch) / double(set_.samples));
  say(o_, " %.0f samples/s eta %s", double(w.steps * accum_ * batch) / std::max(seconds, 1e-9),
      clockString(perStep * double(o_.steps - stepsDone)).c_str());
  // When the steps wait for their batches, the data loading is the
  // bottleneck (more --workers, or faster storage).
  double waited = waitSeconds_ / std::max(seconds, 1e-9);
  if (waited >= 0.01)
    say(o_, ", waiting for data %.0f%%", 100.0 * std::min(waited, 1.0));
  say(o_, "\n");
  flush(o_);
  waitSeconds_ = 0;
  w = ProgressWindow();
  w.start = now;
}

void TrainingRun::openTensorBoard() {
  tensorboard_.open(o_.tensorboard, first_);
  // The run's settings, as a Markdown table on the text tab.
  std::string table = "| option | value |\n|---|---|\n";
  auto row = [&](const char *flag, const std::string &value) {
    table += std::string("| ") + flag + " | " + value + " |\n";
  };
  row("model", o_.model);
  row("--data", o_.nextBatch ? "(callback)" : o_.data.empty() ? o_.data_dir : "(arrays)");
  row("--steps", std::to_string(o_.steps));
  row("--lr", shortString(o_.lr));
  row("--lr-schedule", o_.lr_schedule);
  if (o_.warmup)
    row("--warmup", std::to_string(o_.warmup));
  if (o_.min_lr > 0)
    row("--min-lr", shortString(o_.min_lr));
  if (o_.lr_schedule == "step" || o_.lr_schedule == "plateau")
    row("--gamma", shortString(o_.gamma));
  if (o_.step_size)
    row("--step-size", std::to_string(o_.step_size));
  if (o_.cycle_steps)
    row("--cycle-steps", std::to_string(o_.cycle_steps));
  for (const HyperInput &h : sig_.hyper)
    if (findHyperparameter(h.name))
      row(h.name.c_str(), shortString(h.value));
  row("--seed", std::to_string(o_.seed));
  if (set_.augmentIndex >= 0)
    row("augmentation", set_.augment.describe());
  if (o_.workers > 0)
    row("--workers", std::to_string(o_.workers));
  row("--shuffle", o_.shuffle ? "yes" : "no (--no-shuffle)");
  row("batch", std::to_string(set_.batch) + (accum_ > 1 ? " x " + std::to_string(accum_) : "") +
                   (o_.worldSize > 1 ? " on each of " + std::to_string(o_.worldSize) + " ranks"
                                     : ""));
  if (o_.hasVal())
    row("--val", o_.val.empty() ? o_.val_dir : "(arrays)");
  if (o_.eval_every)
    row("--eval-every", std::to_string(o_.eval_every));
  if (o_.patience)
    row("--patience", std::to_string(o_.patience));
  if (!o_.checkpoint_dir.empty())
    row("--checkpoint-dir", o_.checkpoint_dir);
  if (!o_.resume.empty())
    row("--resume", o_.resume);
  row("threads", o_.threads > 0 ? std::to_string(o_.threads) : "every core");
  tensorboard_.text(first_, "options", table);
  if (!overlapUploads_)
    return;
  // A CUDA artifact: the device's memory and utilization, where NVML is.
  try {
    device_ = std::make_unique<DeviceMonitor>(tcc::rt::cuda::deviceOrdinalFromEnv());
  } catch (const tcc::rt::Error &e) {
    say(o_, "tensorboard: no device scalars: %s\n", e.what());
    return;
  }
  if (!device_->active()) {
    say(o_, "tensorboard: no device scalars: %s\n", device_->why().c_str());
    device_.reset();
  }
}

std::vector<std::pair<std::string, double>>
TrainingRun::tensorBoardValues(float loss, float lr, float gradNorm, double seconds,
                               const std::optional<Evaluation> &evaluation) {
  std::vector<std::pair<std::string, double>> values = {{"train/loss", loss}, {"train/lr", lr}};
  if (sig_.hasGradNorm)
    values.push_back({"train/grad_norm", gradNorm});
  if (sig_.hasLossScale)
    values.push_back({"train/loss_scale", lossScale_});
  if (sig_.hasSkipped)
    values.push_back({"train/skipped", skipped_ ? 1.0 : 0.0});
  values.push_back(
      {"train/samples_per_s",
       double(accum_ * set_.batch * o_.worldSize) / std::max(seconds, 1e-9)});
  if (evaluation && evaluation->hasLoss)
    values.push_back({"val/loss", evaluation->loss});
  if (evaluation && evaluation->hasAccuracy)
    values.push_back({"val/accuracy", evaluation->accuracy});
  DeviceMonitor::Sample sample;
  if (device_ && device_->sample(sample)) {
    values.push_back({"gpu/memory_used_bytes", double(sample.usedBytes)});
    values.push_back({"gpu/memory_peak_bytes", double(sample.peakBytes)});
    values.push_back({"gpu/utilization_percent", double(sample.utilization)});
  }
  return values;
}

void TrainingRun::startPrefetcher() {
  const int world = o_.worldSize;
  // Sample order: in order, or a fresh permutation every epoch; a resumed
  // run replays the shuffles of the micro-batches already taken. With W
  // ranks a micro-batch of the job is W batches, of which rank r takes the
  // r-th; every rank draws the same permutations.
  int64_t samples = set_.samples, batch = set_.batch, perEpoch = samples / (batch * world);
  if (perEpoch == 0)
    die(set_.firstFile + ": " + std::to_string(samples) + " samples are fewer than one batch of " +
        std::to_string(world) + " ranks x " + std::to_string(batch));
  const int64_t shard = int64_t(o_.rank) * batch;
  std::vector<int64_t> order(static_cast<size_t>(samples));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(o_.seed);
  // With length buckets an epoch is its shuffle grouped into batches of one
  // bucket each (buckets.h), the batches shuffled too.
  BucketedEpoch epoch;
  auto startEpoch = [this, batch, world](std::vector<int64_t> &order, std::mt19937_64 &rng,
                                         BucketedEpoch &epoch) {
    if (o_.shuffle)
      std::shuffle(order.begin(), order.end(), rng);
    if (buckets_.active())
      epoch = bucketEpoch(order, sampleBucket_, int(buckets_.values.size()), batch * world,
                          o_.shuffle ? &rng : nullptr);
  };
  if (buckets_.active()) {
    std::vector<int64_t> lengths = sampleLengths(set_, labels_, buckets_);
    sampleBucket_.resize(lengths.size());
    std::vector<int64_t> count(buckets_.values.size(), 0);
    for (size_t s = 0; s < lengths.size(); ++s)
      ++count[size_t(sampleBucket_[s] = buckets_.bucketOf(lengths[s]))];
    perEpoch = int64_t(bucketEpoch(order, sampleBucket_, int(count.size()), batch * world,
                                   nullptr).bucket.size());
    std::string line;
    for (size_t b = 0; b < count.size(); ++b)
      line += (b ? ", " : "") + std::to_string(count[b]) + " at " + buckets_.dim + "<=" +
              std::to_string(buckets_.values[b]);
    say(o_, "length buckets: %s samples; %lld batches per epoch\n", line.c_str(),
        (long long)perEpoch);
    if (perEpoch == 0)
      die(set_.firstFile + ": no length bucket holds a whole batch of " +
          std::to_string(world) + " ranks x " + std::to_string(batch) + " samples");
  }
  for (long micro = 0; micro < first_ * accum_; ++micro)
    if (micro % perEpoch == 0)
      startEpoch(order, rng, epoch);
  // Batch k = micro-batch k (step k without accumulation): the worker owns
  // the order and the generator from here.
  batches_ = std::make_unique<Prefetcher>(
      set_, first_ * accum_, o_.steps * accum_,
      [this, perEpoch, batch, world, shard, startEpoch, order = std::move(order),
       rng = std::move(rng), epoch = std::move(epoch)](long micro,
                                                       std::vector<int64_t> &rows) mutable {
        int64_t b = micro % perEpoch;
        if (b == 0)
          startEpoch(order, rng, epoch);
        const std::vector<int64_t> &from = buckets_.active() ? epoch.rows : order;
        std::copy_n(from.begin() + b * batch * world + shard, batch, rows.begin());
        return buckets_.active() ? epoch.bucket[size_t(b)] : 0;
      },
      o_.workers > 0 ? int(o_.workers) : prefetchInBackground(o_.threads) ? 1 : 0, &trace_);
}

void TrainingRun::startStream() {
  stream_ = std::make_unique<BatchStream>(set_, o_.nextBatch, o_.nextBatchUser);
  // A resumed run discards the micro-batches its checkpoint's steps took:
  // a source that starts over continues where the checkpoint left off.
  Batch discarded;
  for (long micro = 0; micro < first_ * accum_; ++micro)
    if (!stream_->next(micro, discarded))
      die("the data source ended after " + std::to_string(micro) + " micro-batches, before the " +
          std::to_string(first_ * accum_) + " that the checkpoint's " + std::to_string(first_) +
          " steps took");
}

void TrainingRun::beginRun(tcc_session_t session) {
  session_ = session;
  const int world = o_.worldSize;
  if (o_.communicator)
    check(tcc_session_set_communicator(session_, o_.communicator));
  restore();
  // Every rank starts from rank 0's parameters and optimizer state (as
  // PyTorch's DistributedDataParallel does when it is constructed).
  if (world > 1)
    check(tcc_session_broadcast_state(session_, 0));
  if (hasEntry(artifact_, TCC_ENTRY_ZERO_UPDATE)) {
    int64_t local = 0, total = 0;
    check(tcc_session_get_optimizer_state_bytes(session_, &local, &total));
    say(o_, "ZeRO-1: optimizer state sharded over %d rank(s): %lld bytes on rank %d (%lld "
            "unsharded)\n",
        world, (long long)local, int(o_.rank), (long long)total);
  }
  if (!o_.metrics.empty())
    metrics_.open(o_.metrics, !o_.resume.empty(), first_, unwrittenMetrics_);

  if (o_.nextBatch)
    startStream();
  else
    startPrefetcher();
}

void TrainingRun::traceKernels(std::optional<KernelObserverScope> &observer) {
  std::string kernelNames = artifactMetadata(artifact_, TCC_METADATA_PROFILE_KERNELS, "");
  if (!trace_.active() || kernelNames.empty())
    return;
  kernels_.trace = &trace_;
  for (size_t begin = 0;;) {
    size_t end = kernelNames.find(';', begin);
    kernels_.names.push_back(kernelNames.substr(begin, end == std::string::npos ? end : end - begin));
    if (end == std::string::npos)
      break;
    begin = end + 1;
  }
  observer.emplace(session_, &kernels_);
}

void TrainingRun::stopIfAsked(long step, bool stopAll, bool signals) {
  const int world = o_.worldSize;
  if (stopAll)
    stopAt(step, "interrupted at step " + std::to_string(step) + " (a rank was asked to stop)",
           TCC_ERROR_INTERRUPTED);
  if (const char *signal = signals && world == 1 ? StopSignals::pending() : nullptr)
    stopAt(step, std::string("interrupted (") + signal + ") at step " + std::to_string(step),
           TCC_ERROR_INTERRUPTED);
  if (world == 1 && o_.stopRequest && o_.stopRequest->load())
    stopAt(step, "stopped by tcc_trainer_request_stop at step " + std::to_string(step),
           TCC_ERROR_INTERRUPTED);
}

float TrainingRun::jobLoss(float loss, bool signals, bool *stopAll) {
  // The job's loss is the mean of the ranks' (each the mean of its batch):
  // the loss of the whole W x B batch.
  bool asked = (signals && StopSignals::pending()) || (o_.stopRequest && o_.stopRequest->load());
  double sums[2] = {double(loss), asked ? 1.0 : 0.0};
  check(tcc_communicator_sum(o_.communicator, sums, 2));
  *stopAll = sums[1] > 0;
  return float(sums[0] / o_.worldSize);
}

bool TrainingRun::judgeStep(long step, float loss, float gradNorm) {
  skipped_ = false;
  if (sig_.hasLossScale)
    check(tcc_session_copy_output(session_, TCC_OUTPUT_LOSS_SCALE, &lossScale_, sizeof lossScale_));
  if (sig_.hasSkipped) {
    float skipped = 0;
    check(tcc_session_copy_output(session_, TCC_OUTPUT_SKIPPED, &skipped, sizeof skipped));
    skipped_ = skipped != 0;
  }
  // A step that skipped its update (loss scaling found an inf or NaN, or
  // the guard did) left the parameters as they were: the run goes on
  // (with a smaller scale). Otherwise --on-nonfinite decides.
  if (skipped_) {
    ++state_.skipped;
    if (!sig_.hasLossScale)
      say(o_, "warning: step %ld: the loss is %s, the gradient norm %s; update skipped "
              "(--on-nonfinite=skip)\n",
          step + 1, shortString(loss).c_str(), shortString(gradNorm).c_str());
  }
  return skipped_ ? std::isfinite(loss) : checkFinite(step, loss, gradNorm);
}

bool TrainingRun::endStep(long stepsDone, float loss, float lr, float gradNorm, double seconds,
                          ProgressWindow &window, Clock::time_point runStart) {
  // Evaluate every --eval-every steps and after the last one.
  std::string stopReason;
  std::optional<Evaluation> evaluation = evaluateIfDue(stepsDone, &stopReason);
  writeStepOutputs(stepsDone, loss, lr, gradNorm, seconds, evaluation);
  if (o_.onStep && reportStep(stepsDone, loss, lr, gradNorm, evaluation) && stopReason.empty())
    stopReason = "the step callback asked to stop";
  if (o_.jobSaveEvery > 0 && stepsDone % o_.jobSaveEvery == 0 && stepsDone < o_.steps &&
      stopReason.empty())
    saveCheckpoint(stepsDone);
  if (stepsDone % o_.log_every == 0 || stepsDone == o_.steps || !stopReason.empty())
    printProgress(stepsDone, loss, lr, window, runStart);
  if (stopReason.empty())
    return false;
  say(o_, "early stopping at step %ld of %ld: %s\n", stepsDone, o_.steps, stopReason.c_str());
  return true;
}

void TrainingRun::finishRun(long stepsDone) {
  batches_.reset();
  if (state_.nonfinite > 0)
    say(o_, "warning: %ld of the steps had a non-finite loss or gradient norm "
            "(--on-nonfinite=continue)\n", state_.nonfinite);
  if (state_.skipped > 0 && !sig_.hasLossScale)
    say(o_, "warning: %ld of the steps skipped their update: a non-finite loss or gradient norm "
            "(--on-nonfinite=skip)\n", state_.skipped);
  saveCheckpoint(stepsDone);
  if (!o_.save.empty())
    check(tcc_session_save_params(session_, o_.save.c_str()));
  // Without --eval-every, --val evaluates once, after training.
  if (validator_ && o_.eval_every == 0) {
    double start = trace_.now();
    Evaluation evaluation = validator_->run(session_);
    if (trace_.active())
      trace_.span(Track::Evaluation, "validation", start, trace_.now());
    validator_->print(evaluation, stepsDone);
    if (tensorboard_.active()) {
      std::vector<std::pair<std::string, double>> values;
      if (evaluation.hasLoss)
        values.push_back({"val/loss", evaluation.loss});
      if (evaluation.hasAccuracy)
        values.push_back({"val/accuracy", evaluation.accuracy});
      tensorboard_.scalars(stepsDone, values);
    }
  }
  trace_.finish();
}

void TrainingRun::run(tcc_session_t session) {
  beginRun(session);
  std::optional<StopSignals> signals;
  if (o_.handleSignals)
    signals.emplace();

  const char *device = nullptr;
  check(tcc_artifact_get_device(artifact_, &device));
  // A data callback's batches are taken when the step needs them.
  overlapUploads_ = std::strcmp(device, "cpu") != 0 && !stream_;
  if (!o_.tensorboard.empty()) {
    openTensorBoard();
    if (!unwrittenScalars_.empty())
      tensorboard_.scalars(first_, decodeScalars(unwrittenScalars_));
  }
  // A --profile artifact names its kernels: a span each in the trace.
  std::optional<KernelObserverScope> observer;
  traceKernels(observer);

  auto runStart = std::chrono::steady_clock::now();
  ProgressWindow window;
  window.start = runStart;
  long stepsDone = first_;
  // Data parallel: whether a rank was asked to stop (signal or
  // tcc_trainer_request_stop) during the last step; the ranks agree on it
  // through the step's sum, so that all stop at the same boundary.
  bool stopAll = false;
  for (long step = first_; step < o_.steps; ++step) {
    stopIfAsked(step, stopAll, signals.has_value());
    float lr = float(schedule_.at(step));
    auto stepStart = std::chrono::steady_clock::now();
    double traceStart = trace_.now();
    std::optional<float> stepLoss = runStep(step, lr);
    if (!stepLoss) {
      say(o_, "the data source has no more batches: %ld of %ld steps done\n", step, o_.steps);
      break;
    }
    float loss = *stepLoss;
    if (o_.worldSize > 1)
      loss = jobLoss(loss, signals.has_value(), &stopAll);
    float gradNorm = std::nanf("");
    if (sig_.hasGradNorm)
      check(tcc_session_copy_output(session_, TCC_OUTPUT_GRAD_NORM, &gradNorm, sizeof gradNorm));
    double stepSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - stepStart).count();
    if (trace_.active())
      trace_.span(Track::Steps, "step " + std::to_string(step + 1), traceStart, trace_.now(),
                  "\"loss\": " + jsonNumber(loss) + ", \"lr\": " + jsonNumber(lr));
    bool finite = judgeStep(step, loss, gradNorm);
    stepsDone = step + 1;
    stepsDone_ = stepsDone;
    ++window.steps;
    // A non-finite loss (--on-nonfinite=continue) is counted, not averaged.
    if (finite) {
      window.loss += loss;
      ++window.finite;
      state_.windowSum += loss;
      ++state_.windowCount;
    }
    if (endStep(stepsDone, loss, lr, gradNorm, stepSeconds, window, runStart))
      break;
  }
  finishRun(stepsDone);
}

Trainer::Trainer(tcc_artifact_t artifact, Options options) : o_(std::move(options)) {
  checkOptions(o_);
  o_.jobCheckpoints = !o_.checkpoint_dir.empty();
  o_.jobSaveEvery = o_.save_every;
  if (o_.rank != 0) {
    // Rank 0 writes the job's files; the others only read (--resume).
    o_.metrics.clear();
    o_.save.clear();
    o_.tensorboard.clear();
    o_.trace.clear();
    o_.checkpoint_dir.clear();
    o_.save_every = 0;
  }
  run_ = std::make_unique<TrainingRun>(artifact, o_);
  run_->prepare();
  if (o_.epochs > 0) {
    // E passes over the data: the steps of the whole micro-batches each
    // epoch holds (the last partial one is dropped, as every epoch's is).
    long perEpoch = run_->stepsPerEpoch();
    if (perEpoch == 0)
      die("--epochs: the data holds less than one step's samples");
    if (o_.epochs > LONG_MAX / perEpoch)
      die("--epochs " + std::to_string(o_.epochs) + " is too many steps");
    o_.steps = o_.epochs * perEpoch;
    checkSchedule(o_);
  }
  // Before any training, so that no rank computes a step the others do not.
  run_->checkRanksAgree();
}

Trainer::~Trainer() = default;

void Trainer::run(tcc_session_t session, int threads) {
  if (ran_)
    die("the trainer has run already; create another for the next run", TCC_ERROR_INVALID_STATE);
  ran_ = true;
  o_.threads = threads;
  run_->run(session);
}

long Trainer::stepsDone() const { return run_->stepsDone(); }

} // namespace tcc::train
