//===- MatmulMaps.h - 2-D matmuls that read an operand transposed ---------===//
//
// A linalg.matmul reads A or B transposed through its indexing maps (the
// library call takes transpose flags); the CPU preparation folds transposes
// into them and the library-call pass reads them back.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_PASSES_LOWERING_MATMULMAPS_H
#define TCC_PASSES_LOWERING_MATMULMAPS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>
#include <utility>

namespace tcc {

/// Which operands (A, B) a 2-D matmul's indexing maps read transposed, or
/// nullopt for maps other than the four plain / transposed combinations.
std::optional<std::pair<bool, bool>> matmulTransposes(mlir::linalg::MatmulOp op);

/// The indexing maps of a 2-D matmul reading A (B) transposed when TA (TB):
/// loops (m, n, k), A[m, k] or A[k, m], B[k, n] or B[n, k], C[m, n].
mlir::ArrayAttr matmulMaps(mlir::Builder &b, bool ta, bool tb);

/// The same for a batch_matmul: loops (b, m, n, k), A[b, m, k] or
/// A[b, k, m], B[b, k, n] or B[b, n, k], C[b, m, n].
std::optional<std::pair<bool, bool>>
batchMatmulTransposes(mlir::linalg::BatchMatmulOp op);
mlir::ArrayAttr batchMatmulMaps(mlir::Builder &b, bool ta, bool tb);

} // namespace tcc

#endif // TCC_PASSES_LOWERING_MATMULMAPS_H
