//===- augment.h - image augmentation of training batches -----------------===//
//
// What torchvision's RandomCrop(padding=P), RandomHorizontalFlip() and
// Normalize(mean, std) do, on the host, as a batch is assembled (by the
// data workers, off the step's critical path), in that order: crop and flip
// the raw values (padding is 0), then normalize. The random choices come
// from Philox4x32-10, the counter-based generator of the dropout masks,
// keyed by the run's seed and counted by (micro-batch, sample): an
// augmented run is reproducible whatever the worker count and resumes
// exactly, with no generator state to save.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_TRAINER_AUGMENT_H
#define TCC_RUNTIME_TRAINER_AUGMENT_H

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tcc::train {

/// Philox4x32-10 (Salmon et al., Random123): four 32-bit words of
/// COUNTER under KEY.
std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);

/// The augmentation of one input, set by the options.
struct AugmentSpec {
  int64_t channels = 0, height = 0, width = 0; // each sample's image
  int64_t pad = 0;                             // random crop with this padding (0: none)
  bool flip = false;                           // horizontal flip, probability 1/2
  std::vector<float> mean, std;                // per channel (or one for all); empty: none
  bool active() const { return pad > 0 || flip || !mean.empty(); }
  bool random() const { return pad > 0 || flip; }
  /// "crop 4, flip, normalize 0.5/0.25": what checkpoints record, so that a
  /// resume with other settings is refused.
  std::string describe() const;
};

/// Applies SPEC to the BATCH samples at DATA (f32, C x H x W each) of
/// micro-batch K; RANDOM: crop and flip too (training), else only the
/// normalization (validation).
void augmentBatch(const AugmentSpec &spec, uint64_t seed, long k, bool random, float *data,
                  int64_t batch);

} // namespace tcc::train

#endif // TCC_RUNTIME_TRAINER_AUGMENT_H
