//===- buckets.h - length-bucketed batches (tcc --length-buckets) ---------===//
//
// An artifact compiled with --length-buckets=DIM=V1,...,Vn has train_step
// at DIM = Vn and again at each smaller V (train_step.DIM_V; abi.h's
// TCC_METADATA_LENGTH_*). The data holds every sample padded to Vn, its
// labels padded with the ignored label. A sample's length is one past its
// last counted label; its bucket the smallest V that holds it. Each epoch's
// sample order (the shuffle, as without buckets) is grouped by bucket, in
// order of appearance, into global batches of one bucket each (the samples
// left over in a bucket go on to the next larger one; those of the largest
// wait for the next epoch, like the remainder without buckets), and the
// batches are shuffled. A batch runs the variant of its bucket with its
// inputs cut to the first V positions: the loss and gradients equal those
// of the padded step (causal models, padding that the loss ignores).
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_TRAINER_BUCKETS_H
#define TCC_RUNTIME_TRAINER_BUCKETS_H

#include "runtime/trainer/data.h"

#include <map>
#include <random>
#include <string>
#include <vector>

namespace tcc::train {

struct LengthBuckets {
  std::string dim;
  std::vector<int64_t> values; // ascending; the last is train_step's
  /// The inputs that follow DIM, and on which axis (the batch axis is 0).
  std::map<std::string, int64_t> axes;

  bool active() const { return !values.empty(); }
  /// The buckets of ARTIFACT's metadata (inactive without); dies naming
  /// MODEL when the metadata or the variant entries are inconsistent.
  static LengthBuckets read(tcc_artifact_t artifact, const std::string &model);
  /// The index of the smallest bucket that holds LENGTH.
  int bucketOf(int64_t length) const;
  /// The name of the entry point or input NAME in bucket B's variant
  /// (NAME.DIM_V): NAME itself for the largest.
  std::string entry(const std::string &name, int b) const;
};

/// Each sample's length: one past the last position of the labels input
/// (along its length axis) whose label counts; 0 when none does.
std::vector<int64_t> sampleLengths(const DataSet &set, const LabelSpec &labels,
                                   const LengthBuckets &buckets);

/// One epoch's global batches of GLOBALBATCH samples from ORDER grouped by
/// BUCKETOF (a bucket index per sample), as the file comment says; RNG
/// shuffles the batches (null: in bucket order).
struct BucketedEpoch {
  std::vector<int64_t> rows; // batch j: rows [j * global, (j + 1) * global)
  std::vector<int> bucket;   // batch j's bucket
};
BucketedEpoch bucketEpoch(const std::vector<int64_t> &order, const std::vector<int> &bucketOf,
                          int buckets, int64_t globalBatch, std::mt19937_64 *rng);

/// Sets BATCH's fed inputs on SESSION for bucket B: those that follow the
/// dimension cut to its first V positions under their variant names
/// (SCRATCH holds the cut copies), the others as they are.
void setBucketBatch(tcc_session_t session, const DataSet &set, const Batch &batch,
                    const LengthBuckets &buckets, int b,
                    std::vector<std::vector<uint8_t>> &scratch);

} // namespace tcc::train

#endif // TCC_RUNTIME_TRAINER_BUCKETS_H
