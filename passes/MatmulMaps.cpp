//===- MatmulMaps.cpp - 2-D matmuls that read an operand transposed -------===//

#include "passes/MatmulMaps.h"

using namespace mlir;

namespace tcc {

std::optional<std::pair<bool, bool>> matmulTransposes(linalg::MatmulOp op) {
  if (!op.hasUserDefinedMaps())
    return std::make_pair(false, false);
  MLIRContext *ctx = op.getContext();
  AffineExpr m, n, k;
  bindDims(ctx, m, n, k);
  auto map = [&](ArrayRef<AffineExpr> r) { return AffineMap::get(3, 0, r, ctx); };
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps.size() != 3 || maps[2] != map({m, n}))
    return std::nullopt;
  bool ta = maps[0] == map({k, m}), tb = maps[1] == map({n, k});
  if ((!ta && maps[0] != map({m, k})) || (!tb && maps[1] != map({k, n})))
    return std::nullopt;
  return std::make_pair(ta, tb);
}

ArrayAttr matmulMaps(Builder &b, bool ta, bool tb) {
  MLIRContext *ctx = b.getContext();
  AffineExpr m, n, k;
  bindDims(ctx, m, n, k);
  auto map = [&](ArrayRef<AffineExpr> results) {
    return AffineMapAttr::get(AffineMap::get(3, 0, results, ctx));
  };
  return b.getArrayAttr({ta ? map({k, m}) : map({m, k}),
                         tb ? map({n, k}) : map({k, n}), map({m, n})});
}

} // namespace tcc
