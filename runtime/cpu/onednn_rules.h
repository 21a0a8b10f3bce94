//===- onednn_rules.h - where the runtime departs from oneDNN's ranking ----===//
//
// Rules by which the runtime departs from oneDNN 2.6's own ranking of its
// kernels, shared with the compiler's --report=precision so that the report
// says what the runtime will run.
//
//===----------------------------------------------------------------------===//
#ifndef TCC_RUNTIME_CPU_ONEDNN_RULES_H
#define TCC_RUNTIME_CPU_ONEDNN_RULES_H

#include <cstdint>

namespace tcc::rt {

/// Whether oneDNN 2.6's AMX kernel suits a 16-bit convolution weight
/// gradient summing over POINTS output points (N OH OW) with
/// CHANNELS_PER_GROUP input channels. Its tiles pair input channels in
/// blocks of 32 and sum over the output points: with few of those points (a
/// CNN's last stages on small images) or few input channels (a stem on 3
/// colors) it was slower than the AVX512-BF16 kernel that oneDNN ranks next
/// (zoo resnet18's shapes, 1 thread, Xeon with AMX, 2026-12-06: 16 points
/// 0.68 -> 0.38 ms, 64 points 0.86 -> 0.69 and 0.19 -> 0.06 ms, the
/// 3-channel stem 1.29 -> 0.86 ms; from 256 points with 64 channels it was
/// 1.2-4x faster). Such a gradient takes the next native 16-bit kernel
/// instead (the same products and f32 sums, in another order).
constexpr int64_t kAmxMinGradientPoints = 256, kAmxMinGradientChannels = 16;
inline bool amxSuitsWeightGradient(int64_t points, int64_t channelsPerGroup) {
  return points >= kAmxMinGradientPoints && channelsPerGroup >= kAmxMinGradientChannels;
}

} // namespace tcc::rt

#endif // TCC_RUNTIME_CPU_ONEDNN_RULES_H
