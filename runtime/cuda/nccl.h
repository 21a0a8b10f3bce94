//===- nccl.h - a device artifact's collectives on NCCL ---------------------===//
//
// On CUDA the collectives of a data-parallel step (abi.h) run on NCCL, loaded
// with dlopen like the other NVIDIA libraries: rank 0's unique id travels
// over the job's MPI communicator, each rank joins with ncclCommInitRank on
// its session's device. An ALL_REDUCE_START orders a communication stream
// after the work queued so far on the session's stream (an event) and
// enqueues the bucket's ncclAllReduce calls (ncclAvg, in place, one group);
// its WAIT makes the session's stream wait for them (another event), so the
// rest of the backward overlaps the reduction and a captured CUDA graph
// holds both streams. Nothing blocks the host; a run's completion is waited
// for with the communicator's deadline (waitForRun), after which the NCCL
// communicator is aborted and the run fails naming the rank.
//
// Written without a GPU to run it on: built and checked for loading only
// (docs/distributed.md says so).
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_CUDA_NCCL_H
#define TCC_RUNTIME_CUDA_NCCL_H

#include "runtime/cuda/driver.h"
#include "runtime/dist/communicator.h"
#include "runtime/include/tcc/abi.h"

#include <memory>
#include <string>
#include <vector>

namespace tcc::rt::cuda {

class NcclCollectives {
public:
  /// TABLE (COUNT validated rows) of an artifact on CONTEXT's device, over
  /// COMMUNICATOR (more than one rank; borrowed). Collective: every rank
  /// constructs it at the same point. Throws Error(TCC_ERROR_UNSUPPORTED)
  /// when NCCL cannot be loaded, naming WHAT.
  NcclCollectives(const tcc_abi_collective *table, int32_t count, Communicator &communicator,
                  Context &context, const std::string &what);
  ~NcclCollectives();
  NcclCollectives(const NcclCollectives &) = delete;
  NcclCollectives &operator=(const NcclCollectives &) = delete;

  /// The ABI's collective (SELF is this); errors are recorded.
  static void run(void *self, int32_t index, void *const *operands);
  /// The failure recorded during the last run, or "" (and clears it).
  std::string takeError();
  /// Waits for DONE (an event recorded after a run) for the communicator's
  /// timeout, watching NCCL's asynchronous errors; on a timeout or an error
  /// aborts the NCCL communicator and throws Error(TCC_ERROR_RUNTIME).
  void waitForRun(CUevent done, const std::string &what);

  struct Api;

private:
  const tcc_abi_collective *table_;
  int32_t count_;
  Communicator &communicator_;
  Context &context_;
  std::string what_;
  const Api *api_ = nullptr;
  void *comm_ = nullptr; ///< ncclComm_t
  CUstream stream_ = nullptr;
  /// Per row: the event a START waits for (ready) and records (done).
  std::vector<CUevent> ready_, done_;
  std::string error_;
};

} // namespace tcc::rt::cuda

#endif // TCC_RUNTIME_CUDA_NCCL_H
