//===- schedule.h - host-side learning-rate schedules ---------------------===//
//
// The learning rate is a runtime input of the compiled step, so every
// schedule is computed here, per step, in double precision (PyTorch's
// schedulers compute in Python floats too) and rounded to f32 when set.
// Only `plateau` has state; it goes into checkpoints as metadata so that a
// resumed run takes exactly the rates of an uninterrupted one.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_TRAINER_SCHEDULE_H
#define TCC_RUNTIME_TRAINER_SCHEDULE_H

#include "runtime/trainer/common.h"

#include <functional>
#include <limits>
#include <map>

namespace tcc::train {

/// Dies with a clear message when o's schedule settings make no sense.
void checkSchedule(const Options &o);

/// Checkpoint metadata: a double as a hexadecimal float (exact round trip),
/// and back (dies naming KEY unless TEXT is a number as a whole).
std::string exactString(double v);
double parseExact(const std::string &key, const std::string &text);

/// Checkpoint metadata KEY as a count: decimal digits only ("5x", "1e30",
/// "-1" and "abc" die naming KEY), below 2^62.
long metadataCount(const std::string &key, const std::string &text);

class LrSchedule {
public:
  explicit LrSchedule(const Options &o) : o_(o), current_(o.lr) {}

  /// The learning rate of STEP (0-based).
  double at(long step) const;

  /// plateau: takes the monitored loss of an evaluation (mode min); returns
  /// true when it cut the rate (then the message says from what to what).
  bool observe(double metric, std::string *message);

  /// The plateau state as checkpoint metadata, and back. GET returns false
  /// for a key the checkpoint lacks (one written without this schedule).
  void save(std::map<std::string, std::string> &metadata) const;
  void restore(const std::function<bool(const std::string &, std::string &)> &get);

private:
  const Options &o_;
  // ReduceLROnPlateau's state.
  double current_;
  double best_ = std::numeric_limits<double>::infinity();
  long bad_ = 0;
};

} // namespace tcc::train

#endif // TCC_RUNTIME_TRAINER_SCHEDULE_H
