//===- collectives.cpp - a session's collectives ---------------------------===//

#include "runtime/dist/collectives.h"

#include "runtime/dtype.h"
#include "runtime/error.h"

#include <cstdio>

namespace tcc::rt {

std::string checkCollective(const tcc_abi_collective *table, int32_t index) {
  const tcc_abi_collective &c = table[index];
  if (c.num_params < 0 || (c.num_params > 0 && !c.params))
    return "no parameter list for " + std::to_string(c.num_params) + " parameters";
  if (c.num_operands <= 0)
    return std::to_string(c.num_operands) + " operands";
  switch (c.kind) {
  case TCC_COLLECTIVE_ALL_REDUCE_START:
    if (c.dtype != TCC_DTYPE_F32 && c.dtype != TCC_DTYPE_F16 && c.dtype != TCC_DTYPE_BF16)
      return std::string("ALL_REDUCE_START of dtype ") + dtypeName(c.dtype) +
             " (f32, f16 or bf16)";
    if (c.num_params != 1 + c.num_operands)
      return "ALL_REDUCE_START with " + std::to_string(c.num_params) + " parameters for " +
             std::to_string(c.num_operands) + " operands (the bucket, then a count per operand)";
    for (int32_t k = 1; k < c.num_params; ++k)
      if (c.params[k] <= 0)
        return "ALL_REDUCE_START operand " + std::to_string(k - 1) + " has " +
               std::to_string(c.params[k]) + " elements";
    return "";
  case TCC_COLLECTIVE_WAIT: {
    if (c.num_params != 1)
      return "WAIT with " + std::to_string(c.num_params) + " parameters (1: its START)";
    int64_t s = c.params[0];
    if (s < 0 || s >= index)
      return "WAIT for collective #" + std::to_string(s) + ", which is not an earlier row";
    const tcc_abi_collective &start = table[s];
    if (start.kind != TCC_COLLECTIVE_ALL_REDUCE_START || start.num_operands != c.num_operands)
      return "WAIT for collective #" + std::to_string(s) +
             ", which is not an ALL_REDUCE_START of as many operands";
    return "";
  }
  default:
    return "unknown kind " + std::to_string(c.kind);
  }
}

Collectives::Collectives(const tcc_abi_collective *table, int32_t count, const std::string &what)
    : table_(table), count_(count), what_(what), inFlight_(size_t(count)) {}

void Collectives::run(void *self, int32_t index, void *const *operands) {
  auto *c = static_cast<Collectives *>(self);
  if (!c->error_.empty() || !c->communicator_ || c->communicator_->size() == 1)
    return;
  if (index < 0 || index >= c->count_) {
    c->error_ = "collective #" + std::to_string(index) + " is outside the table of " +
                std::to_string(c->count_);
    return;
  }
  try {
    if (c->table_[index].kind == TCC_COLLECTIVE_ALL_REDUCE_START)
      c->start(index, operands);
    else
      c->wait(index, operands);
  } catch (const Error &e) {
    c->error_ = e.what();
  } catch (const std::exception &e) {
    c->error_ = std::string("collective #") + std::to_string(index) + ": " + e.what();
  }
}

std::string Collectives::describe(int32_t start) const {
  const tcc_abi_collective &c = table_[start];
  int64_t elements = 0;
  for (int32_t k = 1; k < c.num_params; ++k)
    elements += c.params[k];
  char size[32];
  std::snprintf(size, sizeof size, "%.1f MB", double(elements) * double(dtypeSize(c.dtype)) / 1e6);
  return "all-reduce of gradient bucket " + std::to_string(c.params[0]) + " (" +
         std::to_string(c.num_operands) + " tensors, " + size + ")";
}

void Collectives::start(int32_t index, void *const *operands) {
  const tcc_abi_collective &c = table_[index];
  if (c.dtype != TCC_DTYPE_F32)
    fail(TCC_ERROR_UNSUPPORTED, what_ + ": collective #" + std::to_string(index) + ": " +
                                    dtypeName(c.dtype) +
                                    " all-reduce on the CPU (MPI sums f32 only here)");
  std::vector<Communicator::Request> &requests = inFlight_[size_t(index)];
  requests.clear();
  for (int32_t k = 0; k < c.num_operands; ++k)
    requests.push_back(communicator_->startSum(operands[k], c.params[k + 1], false));
}

void Collectives::wait(int32_t index, void *const *operands) {
  int32_t s = int32_t(table_[index].params[0]);
  const tcc_abi_collective &c = table_[s];
  std::vector<Communicator::Request> &requests = inFlight_[size_t(s)];
  std::string what = describe(s);
  for (Communicator::Request r : requests)
    communicator_->wait(r, what);
  requests.clear();
  // The sum becomes the mean. Exact for a world size that is a power of
  // two; otherwise one rounding, the same on every rank.
  float inverse = 1.0f / float(communicator_->size());
  for (int32_t k = 0; k < c.num_operands; ++k) {
    float *x = static_cast<float *>(operands[k]);
    for (int64_t i = 0, n = c.params[k + 1]; i < n; ++i)
      x[i] *= inverse;
  }
}

std::string Collectives::takeError() {
  std::string e = std::move(error_);
  error_.clear();
  return e;
}

} // namespace tcc::rt
