//===- sweep.cpp - tcc-run sweep: hyperparameter trials from one artifact -===//
//
// `tcc-run sweep MODEL.so --data DIR --steps N --lr 1e-4,3e-4 --weight-decay
// 0,0.1 [--seeds K] [--random N] [--jobs J] [--halving] --out results.jsonl`
// runs every combination (or N random draws) as a trial of the runtime's
// trainer on its own session of the one loaded artifact: the learning rate
// and the optimizer's hyperparameters are runtime inputs of the step, so no
// trial recompiles. J trials run at a time on J threads, the cores split
// between them. --halving is successive halving: all trials run to the first
// rung, the better half continue to the next (resumed from their checkpoint,
// so a survivor's curve is exactly an uninterrupted run's), and so on to N.
// Every other option is tcc-run's training option and applies to all trials.
// The results file is rewritten (atomically) whenever a trial ends, so a
// sweep stopped by SIGINT, SIGTERM or SIGHUP keeps what it measured.
//
//===----------------------------------------------------------------------===//

#include "tools/tcc-run/common.h"

#include "runtime/support/file_io.h"
#include "runtime/support/file_roles.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <map>
#include <mutex>
#include <random>
#include <sched.h>
#include <thread>
#include <unistd.h>

namespace tcc::run {
namespace {

/// A swept option: its flag, the name of its value in the results (the
/// trainer's option name), and where it goes in Options.
struct Axis {
  const char *flag;
  const char *key;
  double Options::*value;
};

const Axis kAxes[] = {
    {"--lr", "lr", &Options::lr},
    {"--weight-decay", "weight_decay", &Options::weight_decay},
    {"--momentum", "momentum", &Options::momentum},
    {"--beta1", "beta1", &Options::beta1},
    {"--beta2", "beta2", &Options::beta2},
    {"--eps", "eps", &Options::eps},
    {"--grad-clip", "grad_clip", &Options::grad_clip},
};

const Axis *findAxis(const std::string &flag) {
  for (const Axis &a : kAxes)
    if (flag == a.flag)
      return &a;
  return nullptr;
}

/// What the command line gave one axis: a list of values, or (with
/// --random) a range LO:HI, uniform or, with a third field "log",
/// log-uniform.
struct AxisSpec {
  const Axis *axis;
  std::vector<double> values;
  bool range = false, log = false;
  double lo = 0, hi = 0;
};

double parseValue(const std::string &flag, const std::string &text) {
  char *end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end || !std::isfinite(v))
    die(flag + ": '" + text + "' is not a finite number");
  return v;
}

std::vector<std::string> split(const std::string &text, char sep) {
  std::vector<std::string> parts;
  size_t begin = 0;
  for (size_t at; (at = text.find(sep, begin)) != std::string::npos; begin = at + 1)
    parts.push_back(text.substr(begin, at - begin));
  parts.push_back(text.substr(begin));
  return parts;
}

AxisSpec parseAxis(const Axis &axis, const std::string &text) {
  AxisSpec spec{&axis, {}};
  if (text.find(':') != std::string::npos) {
    std::vector<std::string> parts = split(text, ':');
    if (parts.size() < 2 || parts.size() > 3 || (parts.size() == 3 && parts[2] != "log"))
      die(std::string(axis.flag) + ": a range is LO:HI or LO:HI:log, not '" + text + "'");
    spec.range = true;
    spec.lo = parseValue(axis.flag, parts[0]);
    spec.hi = parseValue(axis.flag, parts[1]);
    spec.log = parts.size() == 3;
    if (!(spec.lo < spec.hi) || (spec.log && spec.lo <= 0))
      die(std::string(axis.flag) + ": the range " + text + " needs LO < HI" +
          (spec.log ? " and LO > 0 (log-uniform)" : ""));
    return spec;
  }
  for (const std::string &part : split(text, ','))
    spec.values.push_back(parseValue(axis.flag, part));
  return spec;
}

/// The sweep's own options; the rest are the trials' training options.
struct SweepOptions {
  std::vector<AxisSpec> axes;
  long seeds = 1;
  long random = 0; // > 0: that many random draws instead of the grid
  long jobs = 1;
  bool halving = false;
  std::string out;
  std::string trialDir; // per-trial metrics (and halving's checkpoints)
  std::string save;     // the best trial's final parameters
};

/// Where trial INDEX keeps its final parameters: DIR/trial-N.safetensors
/// with --trial-dir, else a temporary beside --save.
std::string trialWeights(const SweepOptions &s, int index) {
  if (!s.trialDir.empty())
    return s.trialDir + "/trial-" + std::to_string(index) + ".safetensors";
  return s.save + ".trial-" + std::to_string(index) + ".tmp";
}

/// One trial: its settings and what it measured.
struct Trial {
  int index = 0;
  std::vector<std::pair<const Axis *, double>> settings;
  uint64_t seed = 0;
  // Results.
  long steps = 0;
  double finalLoss = NAN;
  double bestVal = NAN; // the best val_loss (or val_accuracy without a loss)
  long bestValStep = 0;
  bool valIsLoss = true;
  std::vector<double> losses; // every step's loss, for the halving metric
  double rungVal = NAN;       // the validation metric at the current rung
  std::string error;
  long stoppedAt = 0; // > 0: halving stopped it at this rung
  bool ran = false;   // it has run (its results go into --out)
  bool interrupted = false; // a signal stopped it before its rung
};

/// SIGINT, SIGTERM and SIGHUP stop the sweep (train::StopSignals): every
/// running trial at its next step boundary (its step callback asks to stop),
/// no further trial starts, the results of those that ran are written and
/// the sweep exits with status 1.
using SweepSignals = train::StopSignals;

/// "lr 0.001, weight_decay 0.1, seed 0".
std::string describe(const Trial &t) {
  std::string text;
  char value[64];
  for (const auto &[axis, v] : t.settings) {
    std::snprintf(value, sizeof value, "%.6g", v);
    text += std::string(text.empty() ? "" : ", ") + axis->key + " " + value;
  }
  return text + (text.empty() ? "" : ", ") + "seed " + std::to_string(t.seed);
}

/// The grid (every combination, the first axis outermost) or the random
/// draws, each for every seed.
std::vector<Trial> makeTrials(const SweepOptions &s, uint64_t seed) {
  std::vector<std::vector<std::pair<const Axis *, double>>> configs(1);
  if (s.random > 0) {
    std::mt19937_64 rng(seed);
    configs.assign(size_t(s.random), {});
    for (auto &config : configs)
      for (const AxisSpec &a : s.axes) {
        double u = double(rng() >> 11) * 0x1.0p-53;
        double v = !a.range ? a.values[size_t(rng() % a.values.size())]
                   : a.log  ? std::exp(std::log(a.lo) + u * (std::log(a.hi) - std::log(a.lo)))
                            : a.lo + u * (a.hi - a.lo);
        config.push_back({a.axis, v});
      }
  } else {
    for (const AxisSpec &a : s.axes) {
      if (a.range)
        die(std::string(a.axis->flag) + ": a range needs --random N (the grid takes lists)");
      std::vector<std::vector<std::pair<const Axis *, double>>> next;
      for (const auto &config : configs)
        for (double v : a.values) {
          next.push_back(config);
          next.back().push_back({a.axis, v});
        }
      configs = std::move(next);
    }
  }
  std::vector<Trial> trials;
  for (const auto &config : configs)
    for (long k = 0; k < s.seeds; ++k) {
      Trial t;
      t.index = int(trials.size());
      t.settings = config;
      t.seed = seed + uint64_t(k);
      trials.push_back(std::move(t));
    }
  return trials;
}

/// Every core the process may use.
int availableCores() {
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof cpus, &cpus) == 0)
    return std::max(CPU_COUNT(&cpus), 1);
  return std::max(int(std::thread::hardware_concurrency()), 1);
}

std::string resultLine(const Trial &t);

/// --out: one line per trial that has run, in trial order, rewritten
/// atomically (a temporary beside it, then rename) whenever a trial ends, so
/// that the file always holds whole lines of what was measured.
class ResultsFile {
public:
  ResultsFile(std::string path, size_t trials) : path_(std::move(path)), lines_(trials) {}
  /// Takes T's line as it stands (no thread is running T). Thread-safe.
  void update(const Trial &t) {
    std::lock_guard<std::mutex> lock(mutex_);
    lines_[size_t(t.index)] = resultLine(t);
  }
  /// Rewrites the file; false with *ERROR when that fails. Thread-safe.
  bool write(std::string *error) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string text;
    for (const std::string &line : lines_)
      if (!line.empty())
        text += line + "\n";
    std::string temporary = path_ + ".tmp." + std::to_string(::getpid());
    FILE *f = std::fopen(temporary.c_str(), "w");
    if (!f) {
      *error =
          "--out " + path_ + ": cannot open " + temporary + " for writing: " + std::strerror(errno);
      return false;
    }
    bool written = std::fputs(text.c_str(), f) >= 0;
    written = std::fclose(f) == 0 && written;
    if (!written || std::rename(temporary.c_str(), path_.c_str()) != 0) {
      *error = "--out " + path_ + ": cannot write: " + std::strerror(errno);
      std::remove(temporary.c_str());
      return false;
    }
    return true;
  }

private:
  std::string path_;
  std::mutex mutex_;
  std::vector<std::string> lines_; // "" for a trial that has not run
};

/// Runs the trials of one sweep on the shared artifact.
class Sweep {
public:
  Sweep(tcc_artifact_t artifact, const Options &base, const SweepOptions &s, ResultsFile &results)
      : artifact_(artifact), base_(base), s_(s), results_(results) {}

  /// Runs trial T up to step UNTIL (stopping there unless it is the last)
  /// in a fresh session; RESUME: from its checkpoint.
  void runTrial(Trial &t, long until, bool resume, int threads);
  /// Runs TRIALS (indices into trials) to UNTIL, J at a time.
  void runAll(std::vector<Trial> &trials, const std::vector<int> &which, long until, bool resume);

private:
  tcc_artifact_t artifact_;
  const Options &base_;
  const SweepOptions &s_;
  ResultsFile &results_;
};

struct TrialContext {
  Trial *trial;
  long until;
};

/// The trainer's step callback: records the loss and the validation metric,
/// and stops the trial at its rung.
extern "C" int onTrialStep(void *user, const tcc_trainer_step_info *info) {
  auto *c = static_cast<TrialContext *>(user);
  Trial &t = *c->trial;
  t.steps = long(info->step);
  t.finalLoss = info->loss;
  t.losses.resize(size_t(info->step), NAN);
  t.losses[size_t(info->step - 1)] = info->loss;
  bool hasLoss = !std::isnan(info->val_loss), hasAccuracy = !std::isnan(info->val_accuracy);
  if (hasLoss || hasAccuracy) {
    t.valIsLoss = hasLoss;
    double metric = hasLoss ? info->val_loss : info->val_accuracy;
    bool better = std::isnan(t.bestVal) || (hasLoss ? metric < t.bestVal : metric > t.bestVal);
    if (better) {
      t.bestVal = metric;
      t.bestValStep = long(info->step);
    }
    if (info->step == c->until)
      t.rungVal = hasLoss ? metric : -metric; // lower is better
  }
  if (SweepSignals::pending() && info->step < c->until)
    return 1; // the sweep was asked to stop
  return info->step == c->until && info->step < info->steps;
}

extern "C" void onTrialLog(void *, const char *) {} // a trial's lines stay quiet

void Sweep::runTrial(Trial &t, long until, bool resume, int threads) {
  Options o = base_;
  for (const auto &[axis, v] : t.settings)
    o.*axis->value = v;
  o.seed = t.seed;
  o.threads = threads;
  std::string stem = s_.trialDir.empty() ? "" : s_.trialDir + "/trial-" + std::to_string(t.index);
  // Every trial keeps its final parameters: in --trial-dir, else beside
  // --save until the best is known.
  if (!stem.empty())
    o.save = stem + ".safetensors";
  else if (!s_.save.empty())
    o.save = trialWeights(s_, t.index);
  if (!stem.empty()) {
    o.metrics = stem + ".jsonl";
    if (s_.halving)
      o.checkpoint_dir = stem;
    if (resume)
      o.resume = stem + "/checkpoint.safetensors";
    else
      o.overwrite = s_.halving;
  }
  tcc_trainer_options options = trainerOptions(o);
  options.handle_signals = 0; // the sweep's threads share the process
  TrialContext context{&t, until};
  options.on_step = &onTrialStep;
  options.on_step_user = &context;
  options.log = &onTrialLog;
  try {
    TrainerHandle trainer(artifact_, options);
    SessionHandle session = createSession(artifact_, o);
    check(tcc_trainer_run(trainer.t, session.s));
  } catch (const UsageError &e) {
    t.error = e.message;
  }
  t.ran = true;
  if (const char *signal = SweepSignals::pending(); signal && t.error.empty() && t.steps < until) {
    t.interrupted = true;
    t.error = std::string("interrupted (") + signal + ") at step " + std::to_string(t.steps);
  }
}

void Sweep::runAll(std::vector<Trial> &trials, const std::vector<int> &which, long until,
                   bool resume) {
  long jobs = std::min<long>(s_.jobs, long(which.size()));
  int threads = base_.threads > 0 ? base_.threads : std::max(availableCores() / int(jobs), 1);
  std::atomic<size_t> next{0};
  std::mutex printing;
  auto worker = [&] {
    // After a stop signal no further trial starts.
    for (size_t k; !SweepSignals::pending() && (k = next++) < which.size();) {
      Trial &t = trials[size_t(which[k])];
      runTrial(t, until, resume, threads);
      std::string error;
      results_.update(t);
      bool recorded = results_.write(&error);
      std::lock_guard<std::mutex> lock(printing);
      if (!t.error.empty())
        std::printf("trial %d (%s): failed: %s\n", t.index, describe(t).c_str(), t.error.c_str());
      else
        std::printf("trial %d (%s): step %ld loss %.6f\n", t.index, describe(t).c_str(), t.steps,
                    t.finalLoss);
      if (!recorded)
        std::fprintf(stderr, "tcc-run: warning: %s\n", error.c_str());
      std::fflush(stdout);
    }
  };
  std::vector<std::thread> pool;
  for (long j = 0; j < jobs; ++j)
    pool.emplace_back(worker);
  for (std::thread &th : pool)
    th.join();
}

/// Halving's judgement at a rung (lower is better): the validation metric
/// at the rung step, else the mean training loss of its last quarter.
double rungMetric(const Trial &t, long rung) {
  if (!t.error.empty())
    return INFINITY;
  if (!std::isnan(t.rungVal))
    return t.rungVal;
  long from = rung - std::max(rung / 4, 1L);
  double sum = 0;
  for (long k = from; k < rung; ++k)
    sum += t.losses[size_t(k)];
  double mean = sum / double(rung - from);
  return std::isfinite(mean) ? mean : INFINITY;
}

/// The rungs of successive halving (factor 2) for TRIALS trials of STEPS
/// steps: STEPS / 2^L, ..., STEPS / 2, STEPS with 2^L <= TRIALS, each at
/// least one step.
std::vector<long> rungs(size_t trials, long steps) {
  int levels = 0;
  while ((size_t(2) << levels) <= trials && (steps >> (levels + 1)) >= 1)
    ++levels;
  std::vector<long> out;
  for (int k = levels; k >= 0; --k)
    out.push_back(steps >> k);
  out.back() = steps;
  return out;
}

std::string jsonNumber(double v) {
  if (!std::isfinite(v))
    return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

std::string jsonString(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20)
      out += c;
  }
  return out + "\"";
}

/// One line of results.jsonl.
std::string resultLine(const Trial &t) {
  std::string line = "{\"trial\": " + std::to_string(t.index);
  for (const auto &[axis, v] : t.settings)
    line += std::string(", \"") + axis->key + "\": " + jsonNumber(v);
  line += ", \"seed\": " + std::to_string(t.seed) + ", \"steps\": " + std::to_string(t.steps) +
          ", \"final_loss\": " + jsonNumber(t.finalLoss);
  if (!std::isnan(t.bestVal))
    line += std::string(", \"best_") + (t.valIsLoss ? "val_loss" : "val_accuracy") +
            "\": " + jsonNumber(t.bestVal) + ", \"best_step\": " + std::to_string(t.bestValStep);
  if (t.stoppedAt > 0)
    line += ", \"stopped_at_rung\": " + std::to_string(t.stoppedAt);
  if (!t.error.empty())
    line += ", \"error\": " + jsonString(t.error);
  return line + "}";
}

/// The table and the best trial (the best validation metric, else the
/// lowest final loss, among the trials that ran every step); null if none.
const Trial *report(const std::vector<Trial> &trials, long steps) {
  std::printf("\n%5s  %-40s %6s %12s %14s\n", "trial", "settings", "steps", "final_loss",
              "best_val (step)");
  const Trial *best = nullptr;
  auto key = [](const Trial &t) -> double {
    if (!t.error.empty() || !std::isfinite(t.finalLoss))
      return INFINITY;
    if (!std::isnan(t.bestVal))
      return t.valIsLoss ? t.bestVal : -t.bestVal;
    return t.finalLoss;
  };
  for (const Trial &t : trials) {
    char val[48] = "-";
    if (!std::isnan(t.bestVal))
      std::snprintf(val, sizeof val, "%.6g (%ld)", t.bestVal, t.bestValStep);
    std::printf("%5d  %-40s %6ld %12.6g %14s%s\n", t.index, describe(t).c_str(), t.steps,
                t.finalLoss, val, t.error.empty() ? "" : "  failed");
    if (t.steps == steps && std::isfinite(key(t)) && (!best || key(t) < key(*best)))
      best = &t;
  }
  if (!best) {
    std::printf("no trial finished\n");
    return nullptr;
  }
  std::printf("best: trial %d (%s): ", best->index, describe(*best).c_str());
  if (!std::isnan(best->bestVal))
    std::printf("%s %.6g at step %ld\n", best->valIsLoss ? "val_loss" : "val_accuracy",
                best->bestVal, best->bestValStep);
  else
    std::printf("final loss %.6g\n", best->finalLoss);
  return best;
}

/// --save: the best trial's final parameters into s.save (atomically), and
/// the other trials' temporaries removed (in --trial-dir they stay).
void keepBest(const SweepOptions &s, const std::vector<Trial> &trials, const Trial *best) {
  if (s.save.empty())
    return;
  if (best) {
    std::vector<uint8_t> bytes;
    std::string error;
    if (!tcc::rt::readFile(trialWeights(s, best->index), bytes, &error) ||
        !tcc::rt::writeFileAtomic(s.save, {{bytes.data(), bytes.size()}}, /*durable=*/true, &error))
      die("--save: " + error);
    std::printf("saved: the parameters of trial %d to %s\n", best->index, s.save.c_str());
  }
  if (s.trialDir.empty())
    for (const Trial &t : trials)
      ::unlink(trialWeights(s, t.index).c_str());
}

/// Dies if DIR holds a trial's files (trial-N.jsonl, trial-N/) of an
/// earlier sweep, which this one would replace.
void refuseEarlierTrials(const std::string &dir) {
  DIR *d = ::opendir(dir.c_str());
  if (!d)
    die("--trial-dir " + dir + ": cannot read the folder: " + std::strerror(errno));
  std::string found;
  while (const dirent *e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.rfind("trial-", 0) != 0)
      continue;
    size_t end = std::min(name.find_first_not_of("0123456789", 6), name.size());
    std::string rest = name.substr(end);
    if (end > 6 && (rest.empty() || rest == ".jsonl") && (found.empty() || name < found))
      found = name;
  }
  ::closedir(d);
  if (!found.empty())
    die("--trial-dir " + dir + " holds " + found + " of an earlier sweep, which this sweep " +
        "would replace; give another --trial-dir or remove " + dir);
}

/// Splits the sweep's own options (and the swept values) off ARGS; the rest
/// are returned for tcc-run's parser.
std::vector<std::string> takeSweepOptions(std::vector<std::string> args, SweepOptions &s) {
  std::vector<std::string> rest;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i], value;
    bool inline_ = false;
    if (size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      inline_ = true;
    }
    const Axis *axis = findAxis(arg);
    bool ours = axis || arg == "--seeds" || arg == "--random" || arg == "--jobs" ||
                arg == "--out" || arg == "--trial-dir";
    if (arg == "--halving") {
      s.halving = true;
      continue;
    }
    if (!ours) {
      rest.push_back(args[i]);
      continue;
    }
    if (!inline_) {
      if (i + 1 >= args.size())
        die("option " + arg + " needs a value");
      value = args[++i];
    }
    auto count = [&](long least) {
      char *end = nullptr;
      long v = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end || v < least)
        die(arg + " needs an integer >= " + std::to_string(least) + ", got '" + value + "'");
      return v;
    };
    if (axis) {
      for (const AxisSpec &a : s.axes)
        if (a.axis == axis)
          die(arg + " is given twice; list its values once, comma-separated");
      s.axes.push_back(parseAxis(*axis, value));
    } else if (arg == "--seeds") {
      s.seeds = count(1);
    } else if (arg == "--random") {
      s.random = count(1);
    } else if (arg == "--jobs") {
      s.jobs = count(1);
    } else if (arg == "--out") {
      s.out = value;
    } else {
      s.trialDir = value;
    }
  }
  return rest;
}

} // namespace

int sweepMain(const std::vector<std::string> &args) {
  SweepOptions s;
  std::vector<std::string> rest = takeSweepOptions(args, s);
  if (s.out.empty())
    die("sweep needs --out FILE.jsonl (one line per trial)");
  if (std::none_of(s.axes.begin(), s.axes.end(),
                   [](const AxisSpec &a) { return std::string(a.axis->flag) == "--lr"; }))
    die("sweep needs --lr (one value, a comma-separated list, or with --random a range LO:HI)");
  // The training options, checked with a stand-in for each swept value
  // (every trial's own values are checked when it starts).
  std::vector<std::string> argv = {"tcc-run"};
  argv.insert(argv.end(), rest.begin(), rest.end());
  for (const AxisSpec &a : s.axes) {
    char value[32];
    std::snprintf(value, sizeof value, "%.17g", a.range ? a.lo : a.values[0]);
    argv.insert(argv.end(), {a.axis->flag, value});
  }
  Options base = parseArgs(argv);
  if (!base.train())
    die("sweep needs --data DIR");
  // --save is the sweep's: the best trial's parameters.
  s.save = base.save;
  base.save.clear();
  if (!base.metrics.empty() || !base.checkpoint_dir.empty() || !base.resume.empty() ||
      !base.tensorboard.empty() || !base.trace.empty())
    die("sweep writes no --metrics, --checkpoint-dir, --resume, --tensorboard or --trace of "
        "its own; --trial-dir DIR keeps each trial's metrics and parameters");
  if (!s.save.empty()) {
    checkWritableFolder(s.save.find('/') == std::string::npos ? "."
                                                              : s.save.substr(0, s.save.rfind('/')),
                        "--save " + s.save);
    std::string error;
    if (!tcc::rt::checkOutputsApart({{"the artifact", base.model},
                                     {"--params", base.params}},
                                    {{"--save", s.save}, {"--out", s.out}}, &error))
      die(error);
  }
  if (s.halving && s.trialDir.empty())
    die("--halving needs --trial-dir DIR (the trials' checkpoints between rungs)");
  if (!s.trialDir.empty()) {
    makeDirectory(s.trialDir);
    refuseEarlierTrials(s.trialDir);
  }
  checkWritableFolder(s.out.find('/') == std::string::npos ? "." : s.out.substr(0, s.out.rfind('/')),
                      "--out " + s.out);

  std::vector<Trial> trials = makeTrials(s, base.seed);
  SweepSignals signals;
  ArtifactHandle artifact(base.model);
  ResultsFile results(s.out, trials.size());
  Sweep sweep(artifact.a, base, s, results);
  std::vector<int> alive(trials.size());
  for (size_t k = 0; k < trials.size(); ++k)
    alive[k] = int(k);
  std::vector<long> plan = s.halving ? rungs(trials.size(), base.steps) : std::vector<long>{base.steps};
  std::printf("sweep: %zu trials of %ld steps from %s, %ld at a time%s\n", trials.size(),
              base.steps, base.model.c_str(), std::min<long>(s.jobs, long(trials.size())),
              s.halving ? ", successive halving" : "");
  for (size_t r = 0; r < plan.size(); ++r) {
    if (plan.size() > 1)
      std::printf("rung %zu: %zu trials to step %ld\n", r + 1, alive.size(), plan[r]);
    for (int k : alive)
      trials[size_t(k)].rungVal = NAN;
    sweep.runAll(trials, alive, plan[r], /*resume=*/r > 0);
    if (r + 1 == plan.size() || SweepSignals::pending())
      break;
    // The better half continue.
    // Ties keep the trial order.
    std::sort(alive.begin(), alive.end(), [&](int a, int b) {
      double ma = rungMetric(trials[size_t(a)], plan[r]), mb = rungMetric(trials[size_t(b)], plan[r]);
      return ma < mb || (ma == mb && a < b);
    });
    size_t keep = (alive.size() + 1) / 2;
    for (size_t k = keep; k < alive.size(); ++k)
      trials[size_t(alive[k])].stoppedAt = plan[r];
    alive.resize(keep);
    std::sort(alive.begin(), alive.end());
  }

  // The final lines: halving's verdicts (stopped_at_rung) too.
  for (const Trial &t : trials)
    if (t.ran)
      results.update(t);
  if (std::string error; !results.write(&error))
    die(error);
  if (const char *signal = SweepSignals::pending()) {
    long ran = 0, interrupted = 0;
    for (const Trial &t : trials) {
      ran += t.ran;
      interrupted += t.interrupted;
    }
    die(std::string("sweep interrupted (") + signal + "): the results of the " +
            std::to_string(ran) + " of " + std::to_string(trials.size()) + " trials that ran (" +
            std::to_string(interrupted) + " of them stopped early) are in " + s.out,
        TCC_ERROR_INTERRUPTED);
  }
  keepBest(s, trials, report(trials, base.steps));
  std::printf("results: %s\n", s.out.c_str());
  return 0;
}

} // namespace tcc::run
