//===- trace.h - a Chrome / Perfetto trace of a training run --------------===//
//
// `--trace FILE.json` records what the run spent its time on as Chrome's
// trace-event JSON (chrome://tracing and ui.perfetto.dev open it): complete
// ("X") events of one process on a few named tracks (steps, data loading,
// evaluation, checkpoint writes), in microseconds since the run started.
// Spans are kept in memory (a few hundred bytes each) and the file is
// written once, atomically, when the run ends, however it ends.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_TRAINER_TRACE_H
#define TCC_RUNTIME_TRAINER_TRACE_H

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

namespace tcc::train {

/// The tracks of a trace (its "threads"); data worker w loads on track
/// Data + 10 w (the first on Data itself). Kernels: the kernels of --profile
/// CPU artifacts.
enum class Track { Steps = 1, Data = 2, Evaluation = 3, Checkpoints = 4, Kernels = 5 };

/// The data-loading track of worker WORKER.
inline Track dataTrack(int worker) { return Track(int(Track::Data) + 10 * worker); }

class TraceWriter {
public:
  /// Starts recording for PATH (checked to be writable now, written by
  /// finish()).
  void open(const std::string &path);
  bool active() const { return !path_.empty(); }

  /// Microseconds since open(): the clock of every span.
  double now() const {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_)
        .count();
  }
  /// A span NAME on TRACK from START to END (now()'s clock); ARGS is the
  /// body of a JSON object ("\"loss\": 0.5") or empty. Thread-safe.
  void span(Track track, const std::string &name, double start, double end,
            const std::string &args = "");
  /// Writes the file (atomically); dies naming --trace if that fails.
  void finish();

private:
  std::string path_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::vector<std::string> events_;
  int workers_ = 0; // the highest data worker seen
};

} // namespace tcc::train

#endif // TCC_RUNTIME_TRAINER_TRACE_H
