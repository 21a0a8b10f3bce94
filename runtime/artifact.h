//===- artifact.h - a loaded, validated tcc artifact ------------------------===//
//
// Artifact owns the dlopen handle of a model.so and the descriptor it
// exported, after checking every field the runtime will later rely on: once
// load() returns, offsets are in range, names are unique, and entry points
// exist, so sessions index the regions without further checks.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_ARTIFACT_H
#define TCC_RUNTIME_ARTIFACT_H

#include "runtime/include/tcc/abi.h"

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace tcc::rt {

class Artifact {
public:
  /// Loads and validates PATH. Throws Error (TCC_ERROR_IO, TCC_ERROR_ABI,
  /// TCC_ERROR_UNSUPPORTED) with a message that starts with PATH.
  static std::shared_ptr<Artifact> load(const std::string &path);
  /// An artifact whose descriptor D is in this process already (no library
  /// to load; D must outlive it), validated like load()'s; WHAT stands for
  /// the path in messages. For tcc-cuda-selftest, which builds its own.
  static std::shared_ptr<Artifact> fromDescriptor(const tcc_abi_descriptor &d,
                                                  const std::string &what);
  ~Artifact();
  Artifact(const Artifact &) = delete;
  Artifact &operator=(const Artifact &) = delete;

  const tcc_abi_descriptor &descriptor() const { return *descriptor_; }
  const tcc_abi_tensor &tensor(int32_t index) const { return descriptor_->tensors[index]; }
  int32_t numTensors() const { return descriptor_->num_tensors; }
  /// As given to load().
  const std::string &path() const { return path_; }
  /// The parameters file beside the library: ".so" replaced by ".safetensors".
  std::string defaultParamsPath() const;
  /// The regions' alignment: the descriptor's, and at least 64.
  int64_t alignment() const;
  /// Never-null views of the descriptor's optional strings.
  const char *fingerprint() const { return orEmpty(descriptor_->fingerprint); }
  const char *producer() const { return orEmpty(descriptor_->producer); }
  const char *target() const { return orEmpty(descriptor_->target); }
  const char *cpuFeatures() const { return orEmpty(descriptor_->cpu_features); }
  /// The code variant load() chose for this CPU (the first whose features
  /// it has, or TCC_CPU_VARIANT's), or nullptr for the entries' own code.
  const tcc_abi_cpu_variant *cpuVariant() const { return variant_; }
  /// The function that runs ENTRY (one of the descriptor's) on this CPU.
  tcc_abi_entry_fn entryFn(const tcc_abi_entry &entry) const;

  /// The index of the tensor with this name and role, or -1.
  int32_t findTensor(const std::string &name, int32_t role) const;
  /// The entry point with this name, or nullptr.
  const tcc_abi_entry *findEntry(const std::string &name) const;
  /// "'a', 'b'" — the names of the tensors of ROLE (or of the entries), for
  /// messages that say what would have been accepted.
  std::string listTensors(int32_t role) const;
  std::string listEntries() const;
  int32_t countTensors(int32_t role) const;
  /// The value of metadata entry KEY, or nullptr when the artifact has none.
  const char *metadata(const char *key) const;
  /// The compiled batch when infer and eval_step take partial batches
  /// (metadata TCC_METADATA_BATCH), else 0.
  int64_t batch() const { return batch_; }
  /// Rows of the leading dimension per sample for a tensor that follows the
  /// batch (TCC_METADATA_BATCH_ROWS_PREFIX), else 0.
  int64_t batchRows(int32_t index) const {
    return batchRows_.empty() ? 0 : batchRows_[size_t(index)];
  }

  /// The labels of a cross_entropy step: the input that holds them, the
  /// classes a label must name (the last dimension of infer's first
  /// output) and the label that does not count; index -1 for other
  /// artifacts.
  struct Labels {
    int32_t index = -1;
    int64_t classes = 0;
    bool hasIgnore = false;
    int64_t ignoreIndex = 0;
    bool accepts(int64_t label) const {
      return (label >= 0 && label < classes) || (hasIgnore && label == ignoreIndex);
    }
  };
  const Labels &labels() const { return labels_; }

private:
  Artifact() = default;
  static const char *orEmpty(const char *s) { return s ? s : ""; }
  /// Reads and checks the batch metadata (throws Error(TCC_ERROR_ABI)).
  void readBatchMetadata();
  /// Reads the labels' rule from the metadata (loss, labels, ignore_index).
  void readLabels();

  std::string path_;
  void *handle_ = nullptr;
  const tcc_abi_descriptor *descriptor_ = nullptr;
  const tcc_abi_cpu_variant *variant_ = nullptr;
  int64_t batch_ = 0;
  std::vector<int64_t> batchRows_;
  Labels labels_;
};

/// Checks a descriptor as load() does (everything but the CPU features);
/// throws Error(TCC_ERROR_ABI) with a message starting with WHAT.
void validateDescriptor(const tcc_abi_descriptor &descriptor, const std::string &what);

/// The descriptor's library calls (0 for descriptors from before the table).
int32_t numLibraryCalls(const tcc_abi_descriptor &descriptor);
/// The descriptor's collectives (0 before ABI version 2).
int32_t numCollectives(const tcc_abi_descriptor &descriptor);
/// The descriptor's metadata entries (0 for descriptors from before them).
int32_t numMetadata(const tcc_abi_descriptor &descriptor);

/// The descriptor's CPU variants (0 for descriptors from before them).
int32_t numCpuVariants(const tcc_abi_descriptor &descriptor);
/// Which CPU variant of D runs on a CPU with HOST's features: REQUEST
/// (TCC_CPU_VARIANT) null or empty: the first whose features HOST has;
/// "base": none; a variant's name: that one. -1 for the entries' own code.
/// Throws Error (TCC_ERROR_INVALID_ARGUMENT: no such variant;
/// TCC_ERROR_UNSUPPORTED: HOST lacks its features), the message starting
/// with WHAT.
int32_t selectCpuVariant(const tcc_abi_descriptor &d, const std::set<std::string> &host,
                         const char *request, const std::string &what);

/// Whether the arena and state live on a device (descriptor.device, a
/// "cuda:sm_NN" string, is present and set).
bool isDeviceArtifact(const tcc_abi_descriptor &descriptor);

/// A device artifact's host twins of its kernels (compiled with
/// --cuda-emulation), or nullptr.
const tcc_abi_emulated_kernel *emulatedKernels(const tcc_abi_descriptor &descriptor);

/// "input", "output", "parameter".
const char *roleName(int32_t role);

} // namespace tcc::rt

#endif // TCC_RUNTIME_ARTIFACT_H
