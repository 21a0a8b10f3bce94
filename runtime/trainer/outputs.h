//===- outputs.h - where tcc-run writes, checked before any work ----------===//
//
// A long run must not end in "cannot write" and lose its result, nor destroy
// an earlier one. So every output path is checked when the run starts (a
// probe file is created and removed in its folder); the checkpoint folder is
// locked for the run (a second tcc-run into it is refused), cleared of the
// temporary files an interrupted write left, and never silently overwritten
// by a fresh run; the metrics file continues on --resume instead of starting
// over.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_TRAINER_OUTPUTS_H
#define TCC_RUNTIME_TRAINER_OUTPUTS_H

#include "runtime/trainer/common.h"

#include <cstdio>
#include <string>

namespace tcc::train {

/// Dies unless FILE can be written: its folder exists and is writable, and
/// FILE is not a folder.
void checkWritableFile(const std::string &file, const std::string &option);

/// The checkpoint folder of a training run, held for the run's duration.
class CheckpointFolder {
public:
  CheckpointFolder() = default;
  CheckpointFolder(const CheckpointFolder &) = delete;
  CheckpointFolder &operator=(const CheckpointFolder &) = delete;
  ~CheckpointFolder();

  /// Creates DIR if missing, checks that it is writable, locks it (flock on
  /// the folder itself; dies if another process holds it), removes the
  /// temporaries of interrupted checkpoint writes, and dies if it holds a
  /// checkpoint that this run would replace without being its continuation:
  /// no RESUME, or RESUME from another folder, and no OVERWRITE.
  void open(const std::string &dir, const std::string &resume, bool overwrite);

  bool active() const { return fd_ >= 0; }
  const std::string &dir() const { return dir_; }

private:
  std::string dir_;
  int fd_ = -1;
};

/// The metrics JSONL of a run: one object per step, each starting with
/// {"step": N. A fresh run starts it empty; a run resumed at step FIRST keeps
/// the lines of steps up to FIRST (rewritten atomically: the ones after it
/// are taken again), and FIRST's from UNWRITTEN when the file lacks it (the
/// checkpoint's copy of a line whose write failed), and appends. A file on
/// --resume with a line that is not tcc-run's is refused, never rewritten.
/// Every write is checked.
class MetricsFile {
public:
  MetricsFile() = default;
  MetricsFile(const MetricsFile &) = delete;
  MetricsFile &operator=(const MetricsFile &) = delete;
  ~MetricsFile();

  void open(const std::string &path, bool resumed, long first, const std::string &unwritten = "");
  bool active() const { return file_ != nullptr; }
  /// Writes LINE (a JSON object without the newline) and flushes it; dies
  /// naming the file if that fails (a full disk).
  void write(const std::string &line);

private:
  std::string path_;
  FILE *file_ = nullptr;
};

} // namespace tcc::train

#endif // TCC_RUNTIME_TRAINER_OUTPUTS_H
