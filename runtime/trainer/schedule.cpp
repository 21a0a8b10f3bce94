//===- schedule.cpp - host-side learning-rate schedules -------------------===//

#include "runtime/trainer/schedule.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tcc::train {

void checkSchedule(const Options &o) {
  const std::string &kind = o.lr_schedule;
  if (o.min_lr > o.lr && (kind == "cosine" || kind == "cyclic" || kind == "plateau"))
    die("--min-lr is larger than --lr");
  if ((kind == "warmup" || kind == "cosine") && o.warmup >= o.steps)
    die("--warmup " + std::to_string(o.warmup) + " is not shorter than the run (--steps " +
        std::to_string(o.steps) + ")");
  if (kind == "warmup" && o.warmup == 0)
    die("--lr-schedule=warmup needs --warmup N");
  if (kind == "step" && o.step_size == 0)
    die("--lr-schedule=step needs --step-size N");
  if (kind == "step" && !(o.gamma > 0))
    die("--gamma must be positive for --lr-schedule=step");
  if (kind == "cyclic" && o.cycle_steps < 1)
    die("--lr-schedule=cyclic needs --cycle-steps N (N >= 1 steps from --min-lr up to --lr)");
  if (kind == "cyclic" && o.min_lr == o.lr)
    die("--lr-schedule=cyclic needs --min-lr below --lr");
  if (kind == "plateau") {
    if (!(o.gamma > 0 && o.gamma < 1))
      die("--gamma must lie in (0, 1) for --lr-schedule=plateau");
    if (o.eval_every == 0)
      die("--lr-schedule=plateau needs --eval-every K (how often the loss is judged)");
  }
  if (o.warmup && kind != "warmup" && kind != "cosine")
    die("--warmup applies to --lr-schedule=warmup or cosine, not " + kind);
  if (o.cycle_steps && kind != "cyclic")
    die("--cycle-steps applies to --lr-schedule=cyclic, not " + kind);
}

std::string exactString(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%a", v);
  return text;
}

double parseExact(const std::string &key, const std::string &text) {
  char *end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end)
    die("the checkpoint's " + key + " '" + text + "' is not a number");
  return v;
}

long metadataCount(const std::string &key, const std::string &text) {
  bool digits = !text.empty() && text.size() <= 18 &&
                std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits)
    die("the checkpoint's " + key + " '" + text + "' is not a count");
  return std::strtol(text.c_str(), nullptr, 10);
}

double LrSchedule::at(long step) const {
  const Options &o = o_;
  double lr = o.lr;
  const std::string &kind = o.lr_schedule;
  if ((kind == "warmup" || kind == "cosine") && step < o.warmup)
    return lr * double(step + 1) / double(o.warmup);
  if (kind == "cosine") {
    double progress = double(step - o.warmup) / double(std::max(o.steps - o.warmup - 1, 1L));
    return o.min_lr + 0.5 * (lr - o.min_lr) * (1 + std::cos(M_PI * std::min(progress, 1.0)));
  }
  if (kind == "step")
    return lr * std::pow(o.gamma, double(step / o.step_size));
  if (kind == "cyclic") {
    // torch.optim.lr_scheduler.CyclicLR(mode='triangular', base_lr=min_lr,
    // max_lr=lr, step_size_up=cycle_steps): its formula, at iteration STEP.
    double cycle = std::floor(1 + double(step) / double(2 * o.cycle_steps));
    double x = std::fabs(double(step) / double(o.cycle_steps) - 2 * cycle + 1);
    return o.min_lr + (lr - o.min_lr) * std::max(0.0, 1 - x);
  }
  if (kind == "plateau")
    return current_;
  return lr;
}

bool LrSchedule::observe(double metric, std::string *message) {
  if (o_.lr_schedule != "plateau")
    return false;
  // ReduceLROnPlateau(mode='min', threshold=1e-4, threshold_mode='rel',
  // cooldown=0, eps=1e-8): better means below best * (1 - 1e-4).
  if (metric < best_ * (1 - 1e-4)) {
    best_ = metric;
    bad_ = 0;
  } else {
    ++bad_;
  }
  if (bad_ <= o_.plateau_patience)
    return false;
  bad_ = 0;
  double reduced = std::max(current_ * o_.gamma, o_.min_lr);
  if (current_ - reduced <= 1e-8)
    return false;
  char text[128];
  std::snprintf(text, sizeof text, "has not improved for %ld evaluations; lr %g -> %g",
                o_.plateau_patience + 1, current_, reduced);
  *message = text;
  current_ = reduced;
  return true;
}

void LrSchedule::save(std::map<std::string, std::string> &metadata) const {
  if (o_.lr_schedule != "plateau")
    return;
  metadata["plateau_lr"] = exactString(current_);
  metadata["plateau_best"] = exactString(best_);
  metadata["plateau_bad"] = std::to_string(bad_);
}

void LrSchedule::restore(const std::function<bool(const std::string &, std::string &)> &get) {
  if (o_.lr_schedule != "plateau")
    return;
  std::string value;
  if (get("plateau_lr", value) &&
      !((current_ = parseExact("plateau_lr", value)) > 0 && std::isnormal(float(current_))))
    die("the checkpoint's plateau_lr '" + value + "' is not a positive learning rate");
  // +inf until the first evaluation.
  if (get("plateau_best", value) && std::isnan(best_ = parseExact("plateau_best", value)))
    die("the checkpoint's plateau_best is NaN");
  if (get("plateau_bad", value))
    bad_ = metadataCount("plateau_bad", value);
}

} // namespace tcc::train
