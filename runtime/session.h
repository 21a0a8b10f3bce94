//===- session.h - the memory and parameters for running one artifact -----===//
//
// A Session owns an arena and a state region, both allocated once, and the
// books on them: which inputs were set since the last run, and which outputs
// a successful run produced and no input has overwritten since. Methods throw
// Error; the C API turns that into a status.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_SESSION_H
#define TCC_RUNTIME_SESSION_H

#include "runtime/artifact.h"
#include "runtime/cpu/onednn.h"
#include "runtime/cpu/parallel.h"
#include "runtime/dist/collectives.h"
#include "runtime/dist/zero.h"
#include "runtime/include/tcc/tcc.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tcc::rt {

/// A 64-byte (or more) aligned, zero-filled allocation, freed on destruction.
class AlignedBuffer {
public:
  AlignedBuffer() = default;
  /// Throws Error(TCC_ERROR_OUT_OF_MEMORY) naming WHAT on failure.
  AlignedBuffer(size_t size, size_t alignment, const std::string &what);
  ~AlignedBuffer();
  AlignedBuffer(AlignedBuffer &&other) noexcept;
  AlignedBuffer &operator=(AlignedBuffer &&other) noexcept;
  AlignedBuffer(const AlignedBuffer &) = delete;
  AlignedBuffer &operator=(const AlignedBuffer &) = delete;
  uint8_t *data() const { return data_; }
  size_t size() const { return size_; }

private:
  uint8_t *data_ = nullptr;
  size_t size_ = 0;
};

class Session {
public:
  /// Allocates the regions and fixes the thread count; does not load
  /// parameters (see loadDefaultParams).
  Session(std::shared_ptr<Artifact> artifact, const tcc_session_options &options);
  ~Session();

  /// What tcc_session_create does after construction unless told to skip.
  void loadDefaultParams();
  void loadParams(const std::string &path);
  void saveParams(const std::string &path);
  /// Parameters and state tensors (optimizer buffers), with METADATA; a
  /// checkpoint loads only into an artifact with the same fingerprint.
  void saveCheckpoint(const std::string &path, const std::map<std::string, std::string> &metadata);
  void loadCheckpoint(const std::string &path);
  /// Checks and sets input NAME. On a device the bytes are staged and start
  /// uploading at once (cuda::InputStaging), while a pending run computes.
  void setInput(const char *name, int32_t dtype, int32_t rank, const int64_t *shape,
                const void *data, size_t size);
  /// Replaces parameter NAME (checked like setInput); on a device the bytes
  /// are uploaded before this returns, so the next run sees them.
  void setParam(const char *name, int32_t dtype, int32_t rank, const int64_t *shape,
                const void *data, size_t size);
  /// Copies parameter NAME's current value (on a device: downloaded first
  /// when a run changed the state) into DST, which has exactly its byte size.
  void getParam(const char *name, void *dst, size_t size);
  /// Runs ENTRY_NAME. On a device it returns once the run is queued; what
  /// reads its results (outputs, parameters) waits for it (finishRun).
  void run(const char *entryName);
  /// tcc_session_set_kernel_observer: FN(USER, kernel, end) around every
  /// kernel of --profile CPU artifacts; FN NULL removes it.
  void setKernelObserver(tcc_kernel_observer fn, void *user) {
    kernelObserver_ = fn;
    kernelObserverUser_ = user;
  }
  /// The bytes of a readable output: for one that follows the batch, those of
  /// the samples the run had (a partial batch's leading rows).
  const uint8_t *output(const char *name, size_t *outSize);
  /// The shape of readable output NAME as the last run computed it: its
  /// declared shape, with a partial batch's rows in front. Returns the rank.
  int32_t outputShape(const char *name, int64_t *shape, int32_t capacity);

  /// tcc_session_set_communicator: the ranks the artifact's collectives
  /// run over (borrowed), or nullptr for none: MPI on the host, NCCL on a
  /// device (then before the first run). Throws INVALID_ARGUMENT for an
  /// artifact without collectives given several ranks.
  void setCommunicator(Communicator *communicator);
  Communicator *communicator() const { return communicator_; }
  /// tcc_session_broadcast_state: every rank's parameters and optimizer
  /// state become ROOT's (a no-op without a communicator).
  void broadcastState(int root);
  /// tcc_session_gather_state: a ZeRO-1 session's sharded optimizer state
  /// onto ROOT, for its next checkpoint (a no-op for other sessions).
  void gatherState(int root);
  /// tcc_session_get_optimizer_state_bytes.
  void optimizerStateBytes(int64_t *local, int64_t *total) const;

  const Artifact &artifact() const { return *artifact_; }
  /// The arena and state on the host (for a device artifact: the host
  /// mirrors, where outputs arrive; inputs are staged apart; the state
  /// mirror is current only after a load or save).
  uint8_t *arena() const { return arena_.data(); }
  uint8_t *state() const { return state_.data(); }
  /// Whether the regions live on a CUDA device.
  bool onDevice() const { return device_ != nullptr; }
  int numThreads() const { return numThreads_; }
  bool poisoned() const { return poisoned_; }

  /// Marks the session busy for the duration of one API call; a second,
  /// overlapping call fails with TCC_ERROR_INVALID_STATE.
  class Use {
  public:
    explicit Use(Session &session);
    ~Use();
    Use(const Use &) = delete;
    Use &operator=(const Use &) = delete;

  private:
    Session &session_;
  };

private:
  void loadTensors(const std::string &path, bool checkpoint);
  /// Writes checked input bytes into their slot (on a device: staging).
  /// Fails naming the first label in DATA that is no class of the model
  /// when input INDEX holds a cross_entropy step's labels.
  void checkLabels(int32_t index, const void *data, size_t size, const std::string &where) const;
  void writeInput(int32_t index, const void *data, size_t size, const std::string &where);
  /// The samples the inputs of ENTRY hold (the compiled batch when none
  /// follows it); throws Error(TCC_ERROR_SHAPE) when they disagree.
  int64_t samplesOf(const tcc_abi_entry &entry, const char *entryName) const;
  /// The index of readable output NAME (throws what output() documents).
  int32_t readableOutput(const char *name);
  /// The descriptor index of parameter NAME, or NOT_FOUND listing them.
  int32_t findParam(const char *name) const;
  void saveTensors(const std::string &path, bool checkpoint,
                   const std::map<std::string, std::string> &extra);
  /// The ABI's profile_kernel; `context` is the session.
  static void profileKernel(void *context, int32_t index, void *const *unused);
  tcc_kernel_observer kernelObserver_ = nullptr;
  void *kernelObserverUser_ = nullptr;
  /// The ABI's parallel_for; `pool` points to numThreads_.
  static void parallelFor(void *pool, int64_t begin, int64_t end,
                          void (*body)(void *context, int64_t i), void *context);

  /// Runs the artifact's init_state (when it has one) if the parameters
  /// changed since it last ran: the state derived from them (16-bit weight
  /// copies) is current before any other entry point runs.
  void refreshDerivedState();
  /// Device artifacts: waits for a pending run; throws Error(RUNTIME) naming
  /// it when its device work failed (its outputs are then unreadable).
  void finishRun();
  /// Device artifacts: brings the host state mirror up to date.
  void downloadState();
  void runOnDevice(const tcc_abi_entry &entry, const char *entryName);
  /// A CPU artifact's run: the entry on the host regions.
  void runOnHost(const tcc_abi_entry &entry, const char *entryName);
  /// The CPU regions (arena with the oneDNN scratchpad at its tail, state)
  /// and the runtime's library_call.
  void allocateHostRegions(size_t alignment);
  /// The artifact's tcc-filter-layouts sets (abi.h), unless its step
  /// exchanges state between ranks: each set's call rows and, in
  /// FILTER_TENSORS, its state tensors.
  std::vector<std::vector<int32_t>> readFilterSets(
      std::vector<std::vector<int32_t>> *filterTensors) const;
  /// State tensor INDEX from plain bytes at FROM (its size) into the state
  /// region, in the layout the session keeps it in.
  void writeState(int32_t index, const void *from);
  /// State tensor INDEX in plain layout into TO (its size).
  void readState(int32_t index, void *to);
  /// Copies bytes [OFFSET, OFFSET + SIZE) of the host state mirror to the
  /// device (WHAT names it in errors).
  void uploadState(size_t offset, size_t size, const std::string &what);

  std::shared_ptr<Artifact> artifact_;
  /// The artifact's library calls (null without any); their scratchpad is
  /// the arena's tail, past the planned buffers.
  std::unique_ptr<LibraryCalls> libraryCalls_;
  /// Each tensor's filter set that the library calls keep in their
  /// layout (tcc-filter-layouts), or -1: plain.
  std::vector<int32_t> filterSetOf_;
  /// The artifact's collectives (null without any) and the communicator.
  std::unique_ptr<Collectives> collectives_;
  Communicator *communicator_ = nullptr;
  /// --zero=1 artifacts: the sharded optimizer (null otherwise).
  std::unique_ptr<ZeroOptimizer> zero_;
  /// Runs the ZeRO-1 part of train_step after its entry (SCALARS: its
  /// optimizer inputs as set for it).
  void runZeroUpdate(const std::vector<ZeroOptimizer::ScalarInput> &scalars);
  /// Whether T is written to (and read from) a parameters file, or with
  /// CHECKPOINT a checkpoint.
  bool inFiles(const tcc_abi_tensor &t, bool checkpoint) const;
  /// The fingerprint checkpoints carry (the artifact's, or its metadata's
  /// TCC_METADATA_STATE_FINGERPRINT).
  std::string stateFingerprint() const;
  /// Threads of every parallel region of a run, the caller included.
  int numThreads_ = 1;
  AlignedBuffer arena_;
  AlignedBuffer state_;
  bool poisoned_ = false;
  tcc_abi_runtime runtime_{};
  /// Device artifacts: the device, the device arena and state, the
  /// page-locked host mirrors (arena_ and state_). Destroyed before them.
  struct DeviceRegions;
  std::unique_ptr<DeviceRegions> device_;
  /// The parameters changed since init_state last ran (true from creation:
  /// the parameters are loaded or set after it).
  bool derivedStale_ = true;
  /// The device state changed since the host mirror was last downloaded.
  bool hostStateStale_ = false;
  /// Device artifacts: a run is queued and not yet waited for; what it is.
  bool runPending_ = false;
  std::string pendingRun_;
  /// Per descriptor tensor: an input set since the last run.
  std::vector<bool> inputSet_;
  /// Per descriptor tensor: the samples an input that follows the batch was
  /// set with (a partial batch: fewer than the compiled batch).
  std::vector<int64_t> inputSamples_;
  /// The samples of the run whose outputs are readable.
  int64_t outputSamples_ = 0;
  /// The compile-time value of each hyperparameter input (NaN: none), which
  /// run() writes when the caller did not set the input.
  std::vector<float> inputDefault_;
  void findInputDefaults();
  /// Per descriptor tensor: an output that may be read; and, once an input
  /// overwrote it, that input's index.
  std::vector<bool> outputReadable_;
  std::vector<int32_t> outputClobberedBy_;
  /// The entry that produced the readable outputs ("" before any run).
  std::string lastEntry_;
  std::atomic<bool> busy_{false};
};

} // namespace tcc::rt

#endif // TCC_RUNTIME_SESSION_H
