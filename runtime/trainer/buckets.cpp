//===- buckets.cpp - length-bucketed batches (tcc --length-buckets) -------===//

#include "runtime/trainer/buckets.h"

#include "runtime/dtype.h"
#include "runtime/trainer/support.h"

#include <algorithm>
#include <cstring>

namespace tcc::train {

namespace {

int64_t parseCount(const std::string &text, const std::string &what) {
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end || errno == ERANGE || v < 0)
    die(what + " '" + text + "' is not a count");
  return v;
}

} // namespace

LengthBuckets LengthBuckets::read(tcc_artifact_t artifact, const std::string &model) {
  LengthBuckets b;
  std::string list = artifactMetadata(artifact, TCC_METADATA_LENGTH_BUCKETS, "");
  if (list.empty())
    return b;
  std::string what = model + ": the artifact's metadata " TCC_METADATA_LENGTH_BUCKETS;
  b.dim = artifactMetadata(artifact, TCC_METADATA_LENGTH_DIM, "");
  for (size_t begin = 0;;) {
    size_t end = list.find(',', begin);
    b.values.push_back(parseCount(list.substr(begin, end - begin), what));
    if (end == std::string::npos)
      break;
    begin = end + 1;
  }
  if (b.dim.empty() || b.values.size() < 2 || !std::is_sorted(b.values.begin(), b.values.end()))
    die(what + " '" + list + "' (dimension '" + b.dim + "') is not an ascending list");
  for (int k = 0; k + 1 < int(b.values.size()); ++k)
    if (!hasEntry(artifact, b.entry(TCC_ENTRY_TRAIN_STEP, k).c_str()))
      die(model + ": the length bucket " + b.dim + "=" + std::to_string(b.values[size_t(k)]) +
          " has no " + b.entry(TCC_ENTRY_TRAIN_STEP, k) + " entry point");
  for (const tcc_tensor_info &t : entryTensors(artifact, TCC_ENTRY_TRAIN_STEP)) {
    if (t.role != TCC_ROLE_INPUT)
      continue;
    std::string axis =
        artifactMetadata(artifact, (TCC_METADATA_LENGTH_AXIS_PREFIX + std::string(t.name)).c_str(), "");
    if (axis.empty())
      continue;
    int64_t a = parseCount(axis, model + ": the length axis of '" + std::string(t.name) + "'");
    if (a < 1 || a >= t.rank || t.shape[a] != b.values.back())
      die(model + ": input '" + t.name + "' " + typeString(t) + " cannot follow " + b.dim + "=" +
          std::to_string(b.values.back()) + " on axis " + axis);
    b.axes[t.name] = a;
  }
  if (b.axes.empty())
    die(model + ": no input of train_step follows the length dimension " + b.dim);
  return b;
}

int LengthBuckets::bucketOf(int64_t length) const {
  auto it = std::lower_bound(values.begin(), values.end(), length);
  return it == values.end() ? int(values.size()) - 1 : int(it - values.begin());
}

std::string LengthBuckets::entry(const std::string &name, int b) const {
  if (b + 1 >= int(values.size()))
    return name;
  return name + "." + dim + "_" + std::to_string(values[size_t(b)]);
}

std::vector<int64_t> sampleLengths(const DataSet &set, const LabelSpec &labels,
                                   const LengthBuckets &buckets) {
  const Samples *y = set.find(labels.name);
  auto axisIt = buckets.axes.find(labels.name);
  if (!y || axisIt == buckets.axes.end() || y->dtype != TCC_DTYPE_I64 || !labels.hasIgnore)
    die("length buckets: a sample's length comes from its labels padded with the ignored label "
        "(cross_entropy labels '" + labels.name + "' that follow " + buckets.dim +
        "); this artifact's labels do not");
  // Sample shape [outer..., L, inner...] with the length axis L.
  const int64_t axis = axisIt->second;
  int64_t outer = 1, inner = 1;
  const int64_t length = y->declared.shape[axis];
  for (int64_t d = 1; d < axis; ++d)
    outer *= y->declared.shape[d];
  for (int64_t d = axis + 1; d < y->declared.rank; ++d)
    inner *= y->declared.shape[d];
  std::vector<int64_t> lengths(size_t(set.samples), 0);
  // Read in chunks of samples: one pass over the labels.
  const int64_t chunk = std::max<int64_t>(1, (int64_t(1) << 20) / int64_t(y->sampleBytes));
  std::vector<int64_t> buffer;
  for (int64_t first = 0; first < set.samples; first += chunk) {
    const int64_t n = std::min(chunk, set.samples - first);
    buffer.resize(size_t(n) * y->sampleBytes / sizeof(int64_t));
    std::string error;
    if (y->memory)
      std::memcpy(buffer.data(), y->memory + size_t(first) * y->sampleBytes, size_t(n) * y->sampleBytes);
    else if (!y->reader.readAt(y->dataOffset + uint64_t(first) * y->sampleBytes, buffer.data(),
                               size_t(n) * y->sampleBytes, &error))
      die(error);
    for (int64_t s = 0; s < n; ++s) {
      const int64_t *row = buffer.data() + size_t(s) * (y->sampleBytes / sizeof(int64_t));
      int64_t last = 0;
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t p = length - 1; p >= last; --p) {
          const int64_t *at = row + (o * length + p) * inner;
          if (std::any_of(at, at + inner, [&](int64_t v) { return !labels.ignored(v); })) {
            last = p + 1;
            break;
          }
        }
      lengths[size_t(first + s)] = last;
    }
  }
  return lengths;
}

BucketedEpoch bucketEpoch(const std::vector<int64_t> &order, const std::vector<int> &bucketOf,
                          int buckets, int64_t globalBatch, std::mt19937_64 *rng) {
  std::vector<std::vector<int64_t>> groups(static_cast<size_t>(buckets));
  for (int64_t s : order)
    groups[size_t(bucketOf[size_t(s)])].push_back(s);
  BucketedEpoch e;
  std::vector<int64_t> carried;
  for (int b = 0; b < buckets; ++b) {
    // What the smaller buckets left over runs at this length, first.
    std::vector<int64_t> items = std::move(carried);
    items.insert(items.end(), groups[size_t(b)].begin(), groups[size_t(b)].end());
    size_t full = items.size() / size_t(globalBatch) * size_t(globalBatch);
    e.rows.insert(e.rows.end(), items.begin(), items.begin() + long(full));
    e.bucket.insert(e.bucket.end(), full / size_t(globalBatch), b);
    carried.assign(items.begin() + long(full), items.end());
  }
  if (rng) {
    // The batches in a random order, each batch's rows kept together.
    std::vector<size_t> perm(e.bucket.size());
    for (size_t j = 0; j < perm.size(); ++j)
      perm[j] = j;
    std::shuffle(perm.begin(), perm.end(), *rng);
    BucketedEpoch shuffled;
    for (size_t j : perm) {
      shuffled.bucket.push_back(e.bucket[j]);
      shuffled.rows.insert(shuffled.rows.end(), e.rows.begin() + long(j * size_t(globalBatch)),
                           e.rows.begin() + long((j + 1) * size_t(globalBatch)));
    }
    e = std::move(shuffled);
  }
  return e;
}

void setBucketBatch(tcc_session_t session, const DataSet &set, const Batch &batch,
                    const LengthBuckets &buckets, int b,
                    std::vector<std::vector<uint8_t>> &scratch) {
  const bool largest = b + 1 == int(buckets.values.size());
  const int64_t value = buckets.values[size_t(b)];
  scratch.resize(set.inputs.size());
  for (size_t i = 0; i < set.inputs.size(); ++i) {
    const Samples &s = set.inputs[i];
    if (!s.feed)
      continue;
    std::vector<int64_t> shape(s.declared.shape, s.declared.shape + s.declared.rank);
    auto axisIt = buckets.axes.find(s.name);
    if (largest || axisIt == buckets.axes.end()) {
      check(tcc_session_set_input(session, s.name.c_str(), s.declared.dtype, s.declared.rank,
                                  shape.data(), batch[i].data(), s.sampleBytes * size_t(set.batch)));
      continue;
    }
    // [batch, outer..., L, inner...] -> [batch, outer..., value, inner...].
    const int64_t axis = axisIt->second, length = shape[size_t(axis)];
    size_t outer = 1, inner = rt::dtypeSize(s.declared.dtype);
    for (int64_t d = 0; d < axis; ++d)
      outer *= size_t(shape[size_t(d)]);
    for (int64_t d = axis + 1; d < int64_t(shape.size()); ++d)
      inner *= size_t(shape[size_t(d)]);
    std::vector<uint8_t> &cut = scratch[i];
    cut.resize(outer * size_t(value) * inner);
    for (size_t o = 0; o < outer; ++o)
      std::memcpy(cut.data() + o * size_t(value) * inner,
                  batch[i].data() + o * size_t(length) * inner, size_t(value) * inner);
    shape[size_t(axis)] = value;
    check(tcc_session_set_input(session, buckets.entry(s.name, b).c_str(), s.declared.dtype, s.declared.rank,
                                shape.data(), cut.data(), cut.size()));
  }
}

} // namespace tcc::train
