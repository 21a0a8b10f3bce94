//===- zero.h - ZeRO stage 1: the optimizer state sharded over the ranks --===//
//
// A --zero=1 artifact (abi.h, TCC_METADATA_ZERO) views its trained f32
// parameters as one flat vector of C chunks of S elements. Its train_step
// writes the flat local gradient into the state tensor zero.grads and
// updates nothing; ZeroOptimizer does the rest of the step, as llm.c and
// DeepSpeed's stage 1 do: a reduce-scatter of the gradient (each rank gets
// the mean over the ranks of its own chunks), the artifact's zero_update
// once per owned chunk with the optimizer state of that chunk, which only
// its owner holds, and an all-gather of the parameters. Rank r of W owns
// chunks [r K, (r + 1) K), K = ceil(C / W), so an artifact runs on any world
// size; a world of one owns every chunk and moves nothing.
//
// Checkpoints keep the unsharded layout (one tensor NAME + suffix per
// parameter, as a run without --zero writes them): gather() collects the
// state on one rank before it saves, and a load copies each rank's own
// chunks out of the file.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_DIST_ZERO_H
#define TCC_RUNTIME_DIST_ZERO_H

#include "runtime/artifact.h"
#include "runtime/checkpoint/safetensors.h"
#include "runtime/dist/communicator.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tcc::rt {

/// Whether ARTIFACT was compiled with --zero=1.
bool isZeroArtifact(const Artifact &artifact);

class ZeroOptimizer {
public:
  /// Reads the artifact's ZeRO metadata and its zero_update entry; throws
  /// Error(TCC_ERROR_ABI) when they do not fit together.
  explicit ZeroOptimizer(const Artifact &artifact);

  /// The ranks the state is sharded over (nullptr: a world of one). The
  /// chunks this rank keeps from its old shards carry over; the others
  /// start at zero, so a session gets its communicator before it trains.
  void setCommunicator(Communicator *communicator);

  /// The arena bytes (offset, bytes) that zero_update's scalar inputs (lr,
  /// step, the hyperparameters) must hold before each chunk: the session
  /// captures them before train_step runs.
  struct ScalarInput {
    int32_t tensor;
    std::vector<uint8_t> bytes;
  };
  /// The rest of the step, after train_step ran on ARENA and STATE: reduce,
  /// update the owned chunks (RUN_UPDATE runs zero_update on the arena),
  /// all-gather into the parameters. Returns the norm of the averaged
  /// gradient (train_step's grad_norm).
  float step(uint8_t *arena, uint8_t *state, const std::vector<ScalarInput> &scalars,
             const std::function<void()> &runUpdate);

  /// Collective: ROOT receives every rank's optimizer state (held until the
  /// next step), so that its next checkpoint is whole.
  void gather(int root);
  /// The optimizer state as a checkpoint holds it (NAME + suffix per
  /// parameter, shaped like it); on several ranks only after gather() on
  /// this rank as the root, else throws Error(TCC_ERROR_INVALID_STATE).
  std::vector<SafetensorsTensor> checkpointTensors() const;
  /// The names of those tensors.
  std::vector<std::string> stateNames() const;
  /// Copies this rank's chunks of state tensor NAME (one of stateNames();
  /// its f32 bytes, shaped as the parameter, checked by the caller).
  void loadState(const std::string &name, const void *data);

  /// Bytes of optimizer state this rank holds, and all ranks together.
  int64_t localBytes() const;
  int64_t totalBytes() const;
  /// The name of zero_update's input ZERO_STATE suffix K ("zero.exp_avg").
  const std::vector<std::string> &suffixes() const { return suffixes_; }

private:
  /// One trained parameter in the flat vector.
  struct Piece {
    int32_t tensor;     ///< its descriptor index
    int64_t flatOffset; ///< elements before it
    int64_t count;
  };
  /// Rank R's chunks [first, first + count) for the current world size.
  void chunksOf(int r, int64_t &first, int64_t &count) const;
  /// MPI counts and displacements (elements) of every rank's chunks.
  void layout(std::vector<int> &counts, std::vector<int> &displs) const;
  std::string describe(const std::string &what) const;

  const Artifact &artifact_;
  int64_t chunks_ = 0, chunkSize_ = 0, elements_ = 0;
  std::vector<Piece> params_;
  std::vector<std::string> suffixes_;
  const tcc_abi_entry *update_ = nullptr;
  int32_t gradsTensor_ = -1, inParam_ = -1, inGrad_ = -1, outParam_ = -1, outGradSq_ = -1;
  std::vector<int32_t> inState_, outState_;
  Communicator *communicator_ = nullptr;
  int rank_ = 0, world_ = 1;
  int64_t first_ = 0, owned_ = 0;
  /// Per suffix: the state of the owned chunks (owned_ x S).
  std::vector<std::vector<float>> shards_;
  /// The flat parameters (C x S), the reduced gradient of the owned chunks.
  std::vector<float> flat_, grads_;
  /// gather()'s result on the root: per suffix, C x S (empty otherwise).
  std::vector<std::vector<float>> gathered_;
};

} // namespace tcc::rt

#endif // TCC_RUNTIME_DIST_ZERO_H
