//===- common.cpp - what every part of the trainer shares -----------------===//

#include "runtime/trainer/common.h"
#include "runtime/trainer/schedule.h"

#include "runtime/dtype.h"

#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>

namespace tcc::train {

const Hyperparameter kHyperparameters[6] = {
    {TCC_INPUT_WEIGHT_DECAY, "--weight-decay", &Options::weightDecay},
    {TCC_INPUT_MOMENTUM, "--momentum", &Options::momentum},
    {TCC_INPUT_BETA1, "--beta1", &Options::beta1},
    {TCC_INPUT_BETA2, "--beta2", &Options::beta2},
    {TCC_INPUT_EPS, "--eps", &Options::eps},
    {TCC_INPUT_GRAD_CLIP, "--grad-clip", &Options::gradClip},
};

void checkHyperparameter(const char *flag, double v) {
  std::string f = flag;
  // Written so that infinities fail every check; NaN means "not set".
  bool ok = f == "--beta1" || f == "--beta2" ? v >= 0 && v < 1
            : f == "--eps" || f == "--grad-clip" ? v > 0 && std::isfinite(v)
                                                 : v >= 0 && std::isfinite(v);
  if (!ok)
    die(f + " must be " +
        (f == "--beta1" || f == "--beta2" ? "in [0, 1)"
         : f == "--eps" || f == "--grad-clip" ? "a finite number > 0"
                                              : "a finite number >= 0") +
        ", got " + std::to_string(v));
}

namespace {

/// Range checks of the values that tcc-run's option parsers already make
/// (so tcc-run never reaches them) for callers of the C API.
void checkRanges(const Options &o) {
  auto rate = [](const char *flag, double v, bool zero) {
    if (!(zero ? v >= 0 : v > 0) || v > 1e6)
      die(std::string(flag) + " needs a " + (zero ? "non-negative" : "positive") +
          " number up to 1e6, got " + std::to_string(v));
    if (v > 0 && !std::isnormal(float(v)))
      die(std::string(flag) + " " + std::to_string(v) +
          " is below the smallest normal f32 (1.2e-38), the precision the step computes the "
          "update in");
  };
  auto count = [](const char *flag, long v, long least) {
    if (v < least)
      die(std::string(flag) + " needs " + (least ? "a positive" : "a non-negative") +
          " integer, got " + std::to_string(v));
  };
  rate("--lr", o.lr, /*zero=*/false);
  rate("--min-lr", o.minLr, /*zero=*/true);
  if (!(o.gamma >= 0) || !std::isfinite(o.gamma))
    die("--gamma needs a finite non-negative number, got " + std::to_string(o.gamma));
  if (!(o.lossScaleInit > 0) || !std::isfinite(o.lossScaleInit) ||
      !std::isfinite(float(o.lossScaleInit)) || float(o.lossScaleInit) == 0)
    die("--loss-scale-init must be a positive finite f32, got " + std::to_string(o.lossScaleInit));
  if (!(o.minDelta >= 0) || !std::isfinite(o.minDelta))
    die("--min-delta needs a finite non-negative number, got " + std::to_string(o.minDelta));
  count("--log-every", o.logEvery, 1);
  count("--epochs", o.epochs, 0);
  count("--warmup", o.warmup, 0);
  count("--step-size", o.stepSize, 0);
  count("--cycle-steps", o.cycleSteps, 0);
  count("--plateau-patience", o.plateauPatience, 0);
  count("--save-every", o.saveEvery, 0);
  count("--eval-every", o.evalEvery, 0);
  count("--patience", o.patience, 0);
  count("--workers", o.workers, 0);
  count("--random-crop", o.randomCrop, 0);
  if (o.workers > 256)
    die("--workers needs at most 256 threads, got " + std::to_string(o.workers));
  const std::string &kind = o.schedule;
  if (kind != "constant" && kind != "warmup" && kind != "cosine" && kind != "step" &&
      kind != "cyclic" && kind != "plateau")
    die("--lr-schedule must be constant, warmup, cosine, step, cyclic or plateau, not '" + kind +
        "'");
  for (const Hyperparameter &h : kHyperparameters)
    if (!std::isnan(o.*h.value))
      checkHyperparameter(h.flag, o.*h.value);
  if (o.onNonfinite != "stop" && o.onNonfinite != "skip" && o.onNonfinite != "continue")
    die("--on-nonfinite must be stop, skip or continue, not '" + o.onNonfinite + "'");
  if (int(!o.dataDir.empty()) + int(!o.data.empty()) + int(o.nextBatch != nullptr) > 1)
    die("training takes one of --data DIR, data arrays and a data source (next_batch)");
  // A callback's batches come in its own order, from the run's thread.
  if (o.nextBatch && o.shuffle)
    die("a data source (next_batch) gives its batches in its own order: it takes no shuffle "
        "(--no-shuffle)");
  if (o.nextBatch && o.workers > 0)
    die("--workers read a data set; a data source (next_batch) gives its batches itself");
  if (!o.valDir.empty() && !o.val.empty())
    die("validation takes --val DIR or validation arrays, not both");
}

} // namespace

void checkOptions(const Options &o) {
  if (!o.hasData())
    die("training needs --data DIR (or data arrays, or a data source)");
  if (o.steps > 0 && o.epochs > 0)
    die("--steps and --epochs both say how long to train; give one");
  if (o.steps <= 0 && o.epochs <= 0)
    die("training needs --steps N or --epochs E (a positive number)");
  if (o.epochs > 0 && o.nextBatch)
    die("--epochs needs a data set whose size is known; a data source takes --steps");
  if (o.lr == 0)
    die("training needs --lr X");
  checkRanges(o);
  // With --epochs the schedule is checked once the steps are known.
  if (o.steps > 0)
    checkSchedule(o);
  if (o.saveEvery > 0 && o.checkpointDir.empty())
    die("--save-every needs --checkpoint-dir DIR");
  if (o.evalEvery > 0 && !o.hasVal() && o.schedule != "plateau")
    die("--eval-every needs --val DIR (or --lr-schedule=plateau, which then judges the "
        "training loss)");
  if (o.patience > 0 && (!o.hasVal() || o.evalEvery == 0))
    die("--patience needs --val DIR and --eval-every K");
  if (o.overwrite && o.checkpointDir.empty())
    die("--overwrite applies to a training run's --checkpoint-dir");
}

void say(const Options &o, const char *format, ...) {
  // One voice for the job: rank 0's.
  if (o.rank != 0)
    return;
  va_list args;
  va_start(args, format);
  if (!o.log) {
    std::vprintf(format, args);
    va_end(args);
    return;
  }
  // The callback gets whole lines: pieces are kept until their newline.
  static thread_local std::string pending;
  char text[1024];
  std::vsnprintf(text, sizeof text, format, args);
  va_end(args);
  pending += text;
  for (size_t eol; (eol = pending.find('\n')) != std::string::npos;) {
    std::string line = pending.substr(0, eol);
    pending.erase(0, eol + 1);
    o.log(o.logUser, line.c_str());
  }
}

void flush(const Options &o) {
  if (!o.log)
    std::fflush(stdout);
}

} // namespace tcc::train
