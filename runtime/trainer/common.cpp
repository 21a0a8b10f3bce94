//===- common.cpp - what every part of the trainer shares -----------------===//

#include "runtime/trainer/common.h"
#include "runtime/trainer/schedule.h"

#include "runtime/dtype.h"

#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <sys/stat.h>

namespace tcc::train {

namespace {

template <OptionKind K, typename T>
void addHyperparameter(std::vector<Hyperparameter> &out, const char *name, const char *flag,
                       T OptionValues::*value) {
  if constexpr (K == OptionKind::Hyper)
    out.push_back({name, flag, value});
}

} // namespace

const std::vector<Hyperparameter> &hyperparameters() {
  static const std::vector<Hyperparameter> list = [] {
    std::vector<Hyperparameter> out;
#define TCC_TRAINER_OPTION(NAME, TYPE, KIND, FLAG, ARG, DEFAULT, RANGE, HELP)                    \
  addHyperparameter<OptionKind::KIND>(out, #NAME, FLAG, &OptionValues::NAME);
#include "runtime/include/tcc/trainer_options.def"
    return out;
  }();
  return list;
}

namespace {

/// Dies unless V, the value of ROW's option, is its default or in its range.
void checkValue(const OptionRow &row, const std::string &v) {
  OptionRange range = optionRange(row);
  if (!range.isWords())
    return;
  std::string words = "|" + range.words + "|";
  if (words.find("|" + v + "|") == std::string::npos)
    die(std::string(row.flag) + " must be " + range.wordList() + ", not '" + v + "'");
}
void checkValue(const OptionRow &row, long v) {
  OptionRange range = optionRange(row);
  if (v == std::strtol(row.defaultText, nullptr, 10))
    return;
  if (v < range.lo)
    die(std::string(row.flag) + " needs " + (range.lo >= 1 ? "a positive" : "a non-negative") +
        " integer, got " + std::to_string(v));
  if (v > range.hi)
    die(std::string(row.flag) + " needs at most " + range.hiText +
        (range.unit.empty() ? "" : " " + range.unit) + ", got " + std::to_string(v));
}
void checkValue(const OptionRow &, uint64_t) {}
void checkValue(const OptionRow &, bool) {}
void checkValue(const OptionRow &row, double v) {
  OptionRange range = optionRange(row);
  std::string flag = row.flag;
  switch (row.kind) {
  case OptionKind::Rate: {
    bool zero = !range.loOpen;
    if (!range.contains(v))
      die(flag + " needs a " + (zero ? "non-negative" : "positive") + " number up to " +
          range.hiText + ", got " + std::to_string(v));
    if (v > 0 && !std::isnormal(float(v)))
      die(flag + " " + std::to_string(v) +
          " is below the smallest normal f32 (1.2e-38), the precision the step computes the "
          "update in");
    return;
  }
  case OptionKind::Real:
    if (!range.contains(v) || !std::isfinite(v))
      die(flag + " needs a finite non-negative number, got " + std::to_string(v));
    return;
  case OptionKind::Hyper:
    // Written so that infinities fail every check; NaN means "not set".
    if (std::isnan(v) || (range.contains(v) && std::isfinite(v)))
      return;
    die(flag + " must be " +
        (std::isinf(range.hi)
             ? std::string("a finite number ") + (range.loOpen ? "> " : ">= ") + range.loText
             : "in " + std::string(row.range)) +
        ", got " + std::to_string(v));
  case OptionKind::Scale:
    if (!(v > 0) || !std::isfinite(v) || !std::isfinite(float(v)) || float(v) == 0)
      die(flag + " must be a positive finite f32, got " + std::to_string(v));
    return;
  default:
    return;
  }
}

/// Range checks of the values that tcc-run's option parsers already make
/// (so tcc-run never reaches them) for callers of the C API.
void checkRanges(const Options &o) {
  // In the table's order but --lr first, the option every run gives.
  checkValue(TCC_OPTION_ROW(lr), o.lr);
#define TCC_TRAINER_OPTION(NAME, TYPE, KIND, FLAG, ARG, DEFAULT, RANGE, HELP)                    \
  checkValue(TCC_OPTION_ROW(NAME), o.NAME);
#include "runtime/include/tcc/trainer_options.def"
  if (int(!o.data_dir.empty()) + int(!o.data.empty()) + int(o.nextBatch != nullptr) > 1)
    die("training takes one of --data DIR, data arrays and a data source (next_batch)");
  // A callback's batches come in its own order, from the run's thread.
  if (o.nextBatch && o.shuffle)
    die("a data source (next_batch) gives its batches in its own order: it takes no shuffle "
        "(--no-shuffle)");
  if (o.nextBatch && o.workers > 0)
    die("--workers read a data set; a data source (next_batch) gives its batches itself");
  if (!o.val_dir.empty() && !o.val.empty())
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
  if (o.save_every > 0 && o.checkpoint_dir.empty())
    die("--save-every needs --checkpoint-dir DIR");
  if (o.eval_every > 0 && !o.hasVal() && o.lr_schedule != "plateau")
    die("--eval-every needs --val DIR (or --lr-schedule=plateau, which then judges the "
        "training loss)");
  if (o.patience > 0 && (!o.hasVal() || o.eval_every == 0))
    die("--patience needs --val DIR and --eval-every K");
  if (o.overwrite && o.checkpoint_dir.empty())
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
