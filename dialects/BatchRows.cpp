//===- BatchRows.cpp - which dimensions of a model follow its batch -------===//

#include "dialects/BatchRows.h"

#include "dialects/TccNames.h"
#include "dialects/TccOps.h"

#include "llvm/ADT/DenseSet.h"

using namespace mlir;

namespace {

/// K when TYPE (at batch B) and PROBE (at batch P) differ exactly in a
/// leading dimension of K * B against K * P rows; 0 when they are equal;
/// nullopt for any other difference.
std::optional<int64_t> leadingRows(Type type, Type probe, int64_t b, int64_t p) {
  if (type == probe)
    return int64_t(0);
  auto t = dyn_cast<RankedTensorType>(type), q = dyn_cast<RankedTensorType>(probe);
  if (!t || !q || t.getRank() != q.getRank() || t.getRank() == 0 ||
      t.getElementType() != q.getElementType() ||
      t.getShape().drop_front() != q.getShape().drop_front())
    return std::nullopt;
  int64_t rows = t.getDimSize(0), probeRows = q.getDimSize(0);
  if (rows <= 0 || rows % b != 0 || rows / b * p != probeRows)
    return std::nullopt;
  return rows / b;
}

} // namespace

bool tcc::annotateBatchRows(func::FuncOp fn, func::FuncOp probe, int64_t batch,
                            int64_t probeBatch) {
  if (batch < 1 || probeBatch < 1 || batch == probeBatch ||
      fn.getNumArguments() != probe.getNumArguments() ||
      fn.getNumResults() != probe.getNumResults())
    return false;
  SmallVector<int64_t> argRows, resultRows;
  for (auto [a, b] : llvm::zip(fn.getArgumentTypes(), probe.getArgumentTypes())) {
    std::optional<int64_t> rows = leadingRows(a, b, batch, probeBatch);
    if (!rows)
      return false;
    argRows.push_back(*rows);
  }
  for (auto [a, b] : llvm::zip(fn.getResultTypes(), probe.getResultTypes())) {
    std::optional<int64_t> rows = leadingRows(a, b, batch, probeBatch);
    if (!rows)
      return false;
    resultRows.push_back(*rows);
  }
  // Only inputs may follow the batch (a parameter that does is no model
  // this can pad), and at least one must.
  bool anyInput = false;
  for (auto [i, rows] : llvm::enumerate(argRows)) {
    if (rows == 0)
      continue;
    if (!fn.getArgAttr(i, attr::input))
      return false;
    anyInput = true;
  }
  if (!anyInput)
    return false;
  // An output computed from the batch without a batch dimension of its own
  // (a mean over the samples) would change with the padding.
  llvm::DenseSet<Value> fromBatch;
  for (auto [i, rows] : llvm::enumerate(argRows))
    if (rows > 0)
      fromBatch.insert(fn.getArgument(i));
  fn.walk([&](Operation *op) {
    if (llvm::any_of(op->getOperands(), [&](Value v) { return fromBatch.contains(v); }))
      fromBatch.insert(op->result_begin(), op->result_end());
  });
  Operation *ret = fn.getBody().front().getTerminator();
  for (auto [i, rows] : llvm::enumerate(resultRows))
    if (rows == 0 && fromBatch.contains(ret->getOperand(i)))
      return false;
  Builder b(fn.getContext());
  for (auto [i, rows] : llvm::enumerate(argRows))
    if (rows > 0)
      fn.setArgAttr(i, attr::batchRows, b.getI64IntegerAttr(rows));
  for (auto [i, rows] : llvm::enumerate(resultRows))
    if (rows > 0)
      fn.setResultAttr(i, attr::batchRows, b.getI64IntegerAttr(rows));
  fn->setAttr(attr::batch, b.getI64IntegerAttr(batch));
  return true;
}
