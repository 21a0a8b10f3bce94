//===- MatmulMaps.cpp - 2-D matmuls that read an operand transposed -------===//

#include "passes/lowering/MatmulMaps.h"

using namespace mlir;

namespace tcc {

namespace {

/// Loops (batch..., m, n, k) with BATCH leading batch loops.
AffineMap contraction(MLIRContext *ctx, unsigned batch, bool lhs, bool rhs, bool transposed) {
  unsigned m = batch, n = batch + 1, k = batch + 2;
  SmallVector<AffineExpr> results;
  for (unsigned d = 0; d < batch; ++d)
    results.push_back(getAffineDimExpr(d, ctx));
  unsigned first = lhs ? (transposed ? k : m) : rhs ? (transposed ? n : k) : m;
  unsigned second = lhs ? (transposed ? m : k) : rhs ? (transposed ? k : n) : n;
  results.push_back(getAffineDimExpr(first, ctx));
  results.push_back(getAffineDimExpr(second, ctx));
  return AffineMap::get(batch + 3, 0, results, ctx);
}

std::optional<std::pair<bool, bool>> transposes(MLIRContext *ctx, ArrayRef<AffineMap> maps,
                                                unsigned batch) {
  if (maps.size() != 3 || maps[2] != contraction(ctx, batch, false, false, false))
    return std::nullopt;
  bool ta = maps[0] == contraction(ctx, batch, true, false, true);
  bool tb = maps[1] == contraction(ctx, batch, false, true, true);
  if ((!ta && maps[0] != contraction(ctx, batch, true, false, false)) ||
      (!tb && maps[1] != contraction(ctx, batch, false, true, false)))
    return std::nullopt;
  return std::make_pair(ta, tb);
}

ArrayAttr mapsAttr(Builder &b, unsigned batch, bool ta, bool tb) {
  MLIRContext *ctx = b.getContext();
  return b.getArrayAttr({AffineMapAttr::get(contraction(ctx, batch, true, false, ta)),
                         AffineMapAttr::get(contraction(ctx, batch, false, true, tb)),
                         AffineMapAttr::get(contraction(ctx, batch, false, false, false))});
}

} // namespace

std::optional<std::pair<bool, bool>> matmulTransposes(linalg::MatmulOp op) {
  if (!op.hasUserDefinedMaps())
    return std::make_pair(false, false);
  return transposes(op.getContext(), op.getIndexingMapsArray(), 0);
}

ArrayAttr matmulMaps(Builder &b, bool ta, bool tb) { return mapsAttr(b, 0, ta, tb); }

std::optional<std::pair<bool, bool>> batchMatmulTransposes(linalg::BatchMatmulOp op) {
  if (!op.hasUserDefinedMaps())
    return std::make_pair(false, false);
  return transposes(op.getContext(), op.getIndexingMapsArray(), 1);
}

ArrayAttr batchMatmulMaps(Builder &b, bool ta, bool tb) { return mapsAttr(b, 1, ta, tb); }

} // namespace tcc
