//===- communicator.h - the ranks of a data-parallel job, over MPI --------===//
//
// A Communicator is one process's membership in the job a launcher started
// (mpirun, or srun through PMIx): its rank, the world size, and the
// operations the training step and the trainer need, each with a deadline.
// MPI is Open MPI, loaded with dlopen on first use (libmpi.so.40, or
// TCC_MPI_LIBRARY), so a single-process run needs no MPI installed; outside
// a launcher the communicator is a world of one and touches no library.
//
// Every operation is non-blocking underneath (MPI_I*) and waited for with
// MPI_Test until the communicator's timeout: a rank that died or hangs ends
// the wait with an Error naming the operation, never a silent hang. Open MPI
// progresses non-blocking collectives inside MPI calls; waiting for one also
// tests the others still in flight.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_DIST_COMMUNICATOR_H
#define TCC_RUNTIME_DIST_COMMUNICATOR_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tcc::rt {

/// This process's rank among those of its job on this host, from the
/// launcher's environment (OMPI_COMM_WORLD_LOCAL_RANK, else SLURM_LOCALID),
/// or -1 outside a launcher: which GPU a rank takes.
int localRankFromEnvironment();

class Communicator {
public:
  /// Joins the launcher's job: OMPI_COMM_WORLD_SIZE (mpirun), PMIX_RANK or
  /// SLURM_NTASKS (srun) say there is one; a world of one otherwise. Throws
  /// Error(TCC_ERROR_UNSUPPORTED) when MPI cannot be loaded or initialized.
  /// TIMEOUT (seconds, > 0) bounds every wait.
  static std::unique_ptr<Communicator> fromEnvironment(double timeout);
  /// A world of one, whatever the environment says.
  static std::unique_ptr<Communicator> single(double timeout);
  ~Communicator();
  Communicator(const Communicator &) = delete;
  Communicator &operator=(const Communicator &) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  /// The rank among those on this host (localRankFromEnvironment), 0 when
  /// unknown.
  int localRank() const { return localRank_; }
  double timeout() const { return timeout_; }
  bool usesMpi() const { return api_ != nullptr; }

  /// An operation in flight; wait() finishes it.
  using Request = void *;
  /// Starts the in-place sum over the ranks of COUNT elements at DATA, f32
  /// (DOUBLE false) or f64.
  Request startSum(void *data, int64_t count, bool isDouble);
  /// Waits for REQUEST until the timeout; WHAT names it in the error
  /// ("all-reduce of gradient bucket 2"). Throws Error(TCC_ERROR_RUNTIME).
  void wait(Request request, const std::string &what);
  /// Blocking in-place sum of f64 values (the trainer's losses, metrics).
  void sum(double *values, int64_t count, const std::string &what);
  /// Starts the sum over the ranks of the f32 vector SEND, split by COUNTS
  /// (one per rank, in rank order): this rank's part of the sum lands in
  /// RECV (COUNTS[rank] elements). MPI_Ireduce_scatter.
  Request startReduceScatter(const float *send, float *recv, const std::vector<int> &counts);
  /// Starts the in-place all-gather of the f32 vector DATA: rank r's part is
  /// COUNTS[r] elements at DISPLS[r], and every rank gets all of them.
  /// MPI_Iallgatherv.
  Request startAllGather(float *data, const std::vector<int> &counts,
                         const std::vector<int> &displs);
  /// Blocking gather onto ROOT of every rank's COUNTS[rank] f32 values at
  /// SEND, rank r's at RECV + DISPLS[r] (RECV is read on ROOT only).
  void gather(const float *send, float *recv, const std::vector<int> &counts,
              const std::vector<int> &displs, int root, const std::string &what);
  /// Blocking broadcast of BYTES bytes at DATA from ROOT.
  void broadcast(void *data, size_t bytes, int root, const std::string &what);
  /// Whether every rank passed the same TEXT (collective): empty when they
  /// did, else every rank's TEXT in rank order. One all-gather of a digest
  /// and the length of each rank's text; the texts themselves travel only
  /// when those differ. For what a job must agree on before it starts (the
  /// trainer's artifact fingerprint and options).
  std::vector<std::string> differing(const std::string &text, const std::string &what);
  /// Ends every rank of the job with exit status CODE (MPI_Abort); a world
  /// of one exits.
  [[noreturn]] void abort(int code);

  /// "rank R of W": how this rank's messages begin.
  std::string who() const;

  /// The loaded MPI functions and handles (communicator.cpp).
  struct Api;

private:
  Communicator() = default;
  const Api *api_ = nullptr;
  int rank_ = 0, size_ = 1, localRank_ = 0;
  double timeout_ = 60;
  bool finalize_ = false; // this communicator initialized MPI
  /// Requests started and not yet waited for (tested while waiting).
  std::vector<Request> pending_;
};

} // namespace tcc::rt

#endif // TCC_RUNTIME_DIST_COMMUNICATOR_H
