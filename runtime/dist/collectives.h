//===- collectives.h - a session's collectives (tcc_abi_runtime.collective) -===//
//
// A data-parallel artifact's step calls the runtime's collective(INDEX,
// OPERANDS) for each row of its collective table (abi.h): ALL_REDUCE_START
// starts the mean over the ranks of a gradient bucket, in place, and the
// WAIT that the compiler placed before the bucket's first reader finishes
// it. Collectives runs them on a session's Communicator; without one, or
// with a world of one, every collective is a no-op, so one artifact runs
// alone and under mpirun.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_DIST_COLLECTIVES_H
#define TCC_RUNTIME_DIST_COLLECTIVES_H

#include "runtime/dist/communicator.h"
#include "runtime/include/tcc/abi.h"

#include <string>
#include <vector>

namespace tcc::rt {

/// "" when row INDEX of TABLE is well formed: a known kind,
/// its parameters (a START's element counts, positive, one per operand; a
/// WAIT's START, an earlier row with as many operands), a dtype the ABI
/// allows; otherwise what is wrong.
std::string checkCollective(const tcc_abi_collective *table, int32_t index);

/// The collectives of one session (the table validated by the artifact).
class Collectives {
public:
  Collectives(const tcc_abi_collective *table, int32_t count, const std::string &what);
  Collectives(const Collectives &) = delete;
  Collectives &operator=(const Collectives &) = delete;

  /// The communicator the collectives run on (borrowed; it outlives the
  /// session), or nullptr for a world of one. Only between runs.
  void setCommunicator(Communicator *communicator) { communicator_ = communicator; }
  Communicator *communicator() const { return communicator_; }

  /// The ABI's collective. Records the first failure (it is called from
  /// generated code); later collectives of the run are skipped.
  static void run(void *self, int32_t index, void *const *operands);
  /// The failure recorded during the last run, or "" (and clears it).
  std::string takeError();

private:
  void start(int32_t index, void *const *operands);
  void wait(int32_t index, void *const *operands);
  /// "gradient bucket 3 (4 tensors, 1.2 MB)".
  std::string describe(int32_t start) const;

  const tcc_abi_collective *table_;
  int32_t count_;
  std::string what_;
  Communicator *communicator_ = nullptr;
  /// Per row (a START's): the requests in flight.
  std::vector<std::vector<Communicator::Request>> inFlight_;
  std::string error_;
};

} // namespace tcc::rt

#endif // TCC_RUNTIME_DIST_COLLECTIVES_H
