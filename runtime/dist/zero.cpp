//===- zero.cpp - ZeRO stage 1: the optimizer state sharded over the ranks ===//

#include "runtime/dist/zero.h"

#include "runtime/error.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace tcc::rt {

namespace {

std::vector<std::string> split(const std::string &text, char separator) {
  std::vector<std::string> parts;
  if (text.empty())
    return parts;
  size_t begin = 0;
  while (true) {
    size_t end = text.find(separator, begin);
    parts.push_back(text.substr(begin, end == std::string::npos ? end : end - begin));
    if (end == std::string::npos)
      return parts;
    begin = end + 1;
  }
}

int64_t elementsOf(const tcc_abi_tensor &t) {
  int64_t n = 1;
  for (int32_t k = 0; k < t.rank; ++k)
    n *= t.shape[k];
  return n;
}

} // namespace

bool isZeroArtifact(const Artifact &artifact) {
  return artifact.metadata(TCC_METADATA_ZERO) != nullptr;
}

ZeroOptimizer::ZeroOptimizer(const Artifact &artifact) : artifact_(artifact) {
  const std::string where = artifact.path() + ": ZeRO-1 metadata: ";
  const char *layout = artifact.metadata(TCC_METADATA_ZERO);
  const char *names = artifact.metadata(TCC_METADATA_ZERO_PARAMS);
  const char *state = artifact.metadata(TCC_METADATA_ZERO_STATE);
  if (!layout || !names || !state)
    fail(TCC_ERROR_ABI, where + "'" TCC_METADATA_ZERO "', '" TCC_METADATA_ZERO_PARAMS "' and '"
                                TCC_METADATA_ZERO_STATE "' go together");
  long long c = 0, s = 0;
  char extra = 0;
  if (std::sscanf(layout, "%lld,%lld%c", &c, &s, &extra) != 2 || c < 1 || s < 1 ||
      c > (1ll << 20) || s > (1ll << 40) / c)
    fail(TCC_ERROR_ABI, where + "'" TCC_METADATA_ZERO "' is '" + layout + "', expected C,S");
  chunks_ = c;
  chunkSize_ = s;
  for (const std::string &name : split(names, ';')) {
    int32_t index = artifact.findTensor(name, TCC_ROLE_PARAM);
    if (index < 0 || artifact.tensor(index).dtype != TCC_DTYPE_F32)
      fail(TCC_ERROR_ABI, where + "'" + name + "' is not an f32 parameter");
    int64_t n = elementsOf(artifact.tensor(index));
    params_.push_back({index, elements_, n});
    elements_ += n;
  }
  if (elements_ == 0 || elements_ > chunks_ * chunkSize_)
    fail(TCC_ERROR_ABI, where + std::to_string(elements_) + " parameter elements do not fit " +
                            std::to_string(chunks_) + " chunks of " + std::to_string(chunkSize_));
  suffixes_ = split(state, ';');

  update_ = artifact.findEntry(TCC_ENTRY_ZERO_UPDATE);
  if (!update_)
    fail(TCC_ERROR_ABI, where + "the artifact has no entry point '" TCC_ENTRY_ZERO_UPDATE "'");
  gradsTensor_ = artifact.findTensor(TCC_STATE_ZERO_GRADS, TCC_ROLE_STATE);
  auto chunkTensor = [&](const std::string &name, int32_t role, int64_t elements) {
    int32_t index = artifact.findTensor(name, role);
    if (index < 0 || artifact.tensor(index).dtype != TCC_DTYPE_F32 ||
        elementsOf(artifact.tensor(index)) != elements)
      fail(TCC_ERROR_ABI, where + "no f32 " + roleName(role) + " '" + name + "' of " +
                              std::to_string(elements) + " elements");
    return index;
  };
  chunkTensor(TCC_STATE_ZERO_GRADS, TCC_ROLE_STATE, chunks_ * chunkSize_);
  inParam_ = chunkTensor(TCC_ZERO_PARAM, TCC_ROLE_INPUT, chunkSize_);
  inGrad_ = chunkTensor(TCC_ZERO_GRAD, TCC_ROLE_INPUT, chunkSize_);
  outParam_ = chunkTensor(TCC_ZERO_PARAM, TCC_ROLE_OUTPUT, chunkSize_);
  outGradSq_ = chunkTensor(TCC_ZERO_GRAD_SQ, TCC_ROLE_OUTPUT, 1);
  for (std::string &suffix : suffixes_) {
    inState_.push_back(chunkTensor("zero" + suffix, TCC_ROLE_INPUT, chunkSize_));
    outState_.push_back(chunkTensor("zero" + suffix, TCC_ROLE_OUTPUT, chunkSize_));
  }
  flat_.assign(size_t(chunks_ * chunkSize_), 0.0f);
  setCommunicator(nullptr);
}

void ZeroOptimizer::chunksOf(int r, int64_t &first, int64_t &count) const {
  int64_t perRank = (chunks_ + world_ - 1) / world_;
  first = std::min<int64_t>(int64_t(r) * perRank, chunks_);
  count = std::min<int64_t>(first + perRank, chunks_) - first;
}

void ZeroOptimizer::layout(std::vector<int> &counts, std::vector<int> &displs) const {
  counts.assign(size_t(world_), 0);
  displs.assign(size_t(world_), 0);
  for (int r = 0; r < world_; ++r) {
    int64_t first, count;
    chunksOf(r, first, count);
    counts[size_t(r)] = int(count * chunkSize_);
    displs[size_t(r)] = int(first * chunkSize_);
  }
}

void ZeroOptimizer::setCommunicator(Communicator *communicator) {
  int64_t oldFirst = first_, oldOwned = owned_;
  std::vector<std::vector<float>> old = std::move(shards_);
  communicator_ = communicator && communicator->size() > 1 ? communicator : nullptr;
  rank_ = communicator_ ? communicator_->rank() : 0;
  world_ = communicator_ ? communicator_->size() : 1;
  if (chunks_ * chunkSize_ > INT32_MAX)
    fail(TCC_ERROR_UNSUPPORTED, artifact_.path() + ": ZeRO-1 over more than 2^31 - 1 elements");
  chunksOf(rank_, first_, owned_);
  shards_.assign(suffixes_.size(), std::vector<float>(size_t(owned_ * chunkSize_), 0.0f));
  // Keep the chunks this rank held before and still owns.
  int64_t from = std::max(first_, oldFirst), to = std::min(first_ + owned_, oldFirst + oldOwned);
  for (size_t k = 0; k < old.size() && from < to; ++k)
    std::memcpy(shards_[k].data() + (from - first_) * chunkSize_,
                old[k].data() + (from - oldFirst) * chunkSize_,
                size_t((to - from) * chunkSize_) * sizeof(float));
  grads_.assign(size_t(owned_ * chunkSize_), 0.0f);
  gathered_.clear();
}

std::string ZeroOptimizer::describe(const std::string &what) const {
  return what + " (ZeRO-1, " + std::to_string(chunks_) + " chunks of " +
         std::to_string(chunkSize_) + " elements)";
}

float ZeroOptimizer::step(uint8_t *arena, uint8_t *state, const std::vector<ScalarInput> &scalars,
                          const std::function<void()> &runUpdate) {
  gathered_.clear(); // a gathered state is stale once the step updates it
  const size_t chunkBytes = size_t(chunkSize_) * sizeof(float);
  const auto *grads =
      reinterpret_cast<const float *>(state + artifact_.tensor(gradsTensor_).offset);
  std::vector<int> counts, displs;
  layout(counts, displs);
  if (communicator_) {
    // The sum of every rank's gradient, this rank's chunks only, then the
    // mean: the all-reduce path's arithmetic (collectives.cpp), so both
    // give the same bits.
    communicator_->wait(communicator_->startReduceScatter(grads, grads_.data(), counts),
                        describe("reduce-scatter of the gradient"));
    float inverse = 1.0f / float(world_);
    for (float &g : grads_)
      g *= inverse;
  } else {
    std::memcpy(grads_.data(), grads, grads_.size() * sizeof(float));
  }
  for (const Piece &p : params_)
    std::memcpy(flat_.data() + p.flatOffset, state + artifact_.tensor(p.tensor).offset,
                size_t(p.count) * sizeof(float));

  // --grad-clip (zero_update has the input): PyTorch's clip_grad_norm_ of
  // the averaged gradient, whose norm needs every rank's chunks before any
  // chunk updates; the same formula as the unsharded step's.
  const ScalarInput *clip = nullptr;
  for (const ScalarInput &s : scalars)
    if (std::strcmp(artifact_.tensor(s.tensor).name, TCC_INPUT_GRAD_CLIP) == 0 &&
        s.bytes.size() == sizeof(float))
      clip = &s;
  double gradSquares = 0;
  if (clip) {
    for (float g : grads_)
      gradSquares += double(g) * double(g);
    if (communicator_)
      communicator_->sum(&gradSquares, 1, describe("sum of the gradient norm"));
    float maxNorm;
    std::memcpy(&maxNorm, clip->bytes.data(), sizeof maxNorm);
    float norm = float(std::sqrt(gradSquares));
    if (maxNorm > 0) {
      float coef = std::min(maxNorm / (norm + 1e-6f), 1.0f);
      for (float &g : grads_)
        g *= coef;
    }
  }
  for (int64_t c = 0; c < owned_; ++c) {
    // The run may reuse any input's slot once it has read it: every input
    // is written again for every chunk.
    for (const ScalarInput &s : scalars)
      std::memcpy(arena + artifact_.tensor(s.tensor).offset, s.bytes.data(), s.bytes.size());
    int64_t at = (first_ + c) * chunkSize_;
    std::memcpy(arena + artifact_.tensor(inParam_).offset, flat_.data() + at, chunkBytes);
    std::memcpy(arena + artifact_.tensor(inGrad_).offset, grads_.data() + c * chunkSize_,
                chunkBytes);
    for (size_t k = 0; k < suffixes_.size(); ++k)
      std::memcpy(arena + artifact_.tensor(inState_[k]).offset,
                  shards_[k].data() + c * chunkSize_, chunkBytes);
    runUpdate();
    std::memcpy(flat_.data() + at, arena + artifact_.tensor(outParam_).offset, chunkBytes);
    for (size_t k = 0; k < suffixes_.size(); ++k)
      std::memcpy(shards_[k].data() + c * chunkSize_, arena + artifact_.tensor(outState_[k]).offset,
                  chunkBytes);
    if (!clip) {
      float sq;
      std::memcpy(&sq, arena + artifact_.tensor(outGradSq_).offset, sizeof sq);
      gradSquares += double(sq);
    }
  }
  if (communicator_) {
    Communicator::Request gathered = communicator_->startAllGather(flat_.data(), counts, displs);
    // The norm's sum travels while the parameters do.
    if (!clip)
      communicator_->sum(&gradSquares, 1, describe("sum of the gradient norm"));
    communicator_->wait(gathered, describe("all-gather of the parameters"));
  }
  for (const Piece &p : params_)
    std::memcpy(state + artifact_.tensor(p.tensor).offset, flat_.data() + p.flatOffset,
                size_t(p.count) * sizeof(float));
  return float(std::sqrt(gradSquares));
}

void ZeroOptimizer::gather(int root) {
  gathered_.clear();
  if (!communicator_ || suffixes_.empty())
    return;
  if (root < 0 || root >= world_)
    fail(TCC_ERROR_INVALID_ARGUMENT,
         "gather onto rank " + std::to_string(root) + " of " + std::to_string(world_));
  std::vector<int> counts, displs;
  layout(counts, displs);
  std::vector<std::vector<float>> full(suffixes_.size());
  for (size_t k = 0; k < suffixes_.size(); ++k) {
    if (rank_ == root)
      full[k].assign(size_t(chunks_ * chunkSize_), 0.0f);
    communicator_->gather(shards_[k].data(), full[k].data(), counts, displs, root,
                          describe("gather of the optimizer state '" + suffixes_[k] + "'"));
  }
  if (rank_ == root)
    gathered_ = std::move(full);
}

std::vector<std::string> ZeroOptimizer::stateNames() const {
  std::vector<std::string> names;
  for (const Piece &p : params_)
    for (const std::string &suffix : suffixes_)
      names.push_back(std::string(artifact_.tensor(p.tensor).name) + suffix);
  return names;
}

std::vector<SafetensorsTensor> ZeroOptimizer::checkpointTensors() const {
  if (suffixes_.empty())
    return {};
  if (communicator_ && gathered_.empty())
    fail(TCC_ERROR_INVALID_STATE,
         artifact_.path() + ": the optimizer state is sharded over " + std::to_string(world_) +
             " ranks (ZeRO-1); gather it first (tcc_session_gather_state on every rank)");
  std::vector<SafetensorsTensor> tensors;
  for (const Piece &p : params_) {
    const tcc_abi_tensor &t = artifact_.tensor(p.tensor);
    for (size_t k = 0; k < suffixes_.size(); ++k) {
      const float *full = communicator_ ? gathered_[k].data() : shards_[k].data();
      tensors.push_back({std::string(t.name) + suffixes_[k], TCC_DTYPE_F32,
                         std::vector<int64_t>(t.shape, t.shape + t.rank), full + p.flatOffset,
                         size_t(p.count) * sizeof(float)});
    }
  }
  return tensors;
}

void ZeroOptimizer::loadState(const std::string &name, const void *data) {
  for (const Piece &p : params_)
    for (size_t k = 0; k < suffixes_.size(); ++k) {
      if (name != std::string(artifact_.tensor(p.tensor).name) + suffixes_[k])
        continue;
      // The part of [flatOffset, flatOffset + count) in this rank's chunks.
      int64_t begin = first_ * chunkSize_, end = (first_ + owned_) * chunkSize_;
      int64_t from = std::max(begin, p.flatOffset), to = std::min(end, p.flatOffset + p.count);
      if (from < to)
        std::memcpy(shards_[k].data() + (from - begin),
                    static_cast<const float *>(data) + (from - p.flatOffset),
                    size_t(to - from) * sizeof(float));
      gathered_.clear();
      return;
    }
}

int64_t ZeroOptimizer::localBytes() const {
  return int64_t(suffixes_.size()) * owned_ * chunkSize_ * int64_t(sizeof(float));
}

int64_t ZeroOptimizer::totalBytes() const {
  return int64_t(suffixes_.size()) * elements_ * int64_t(sizeof(float));
}

} // namespace tcc::rt
