//===- ConvBackward.cpp - convolution gradients as library calls ----------===//
//
// The tcc.conv_backward marker and the geometry the lowering and
// tcc-mark-library-calls agree on (ConvBackward.h).
//
//===----------------------------------------------------------------------===//

#include "passes/lowering/ConvBackward.h"

#include "dialects/TccNames.h"
#include "runtime/include/tcc/abi.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace tcc {

std::optional<ConvBackwardMarker> getConvBackwardMarker(Operation *op) {
  auto dict = op->getAttrOfType<DictionaryAttr>(attr::convBackward);
  if (!dict)
    return std::nullopt;
  auto kind = dict.getAs<IntegerAttr>("kind");
  auto params = dict.getAs<DenseI64ArrayAttr>("params");
  auto groups = dict.getAs<IntegerAttr>("groups");
  if (!kind || !params || !groups || params.size() != 17 || groups.getInt() < 1 ||
      (kind.getInt() != TCC_LIBRARY_CALL_CONV2D_BACKWARD_DATA &&
       kind.getInt() != TCC_LIBRARY_CALL_CONV2D_BACKWARD_WEIGHTS))
    return std::nullopt;
  return ConvBackwardMarker{int32_t(kind.getInt()), llvm::to_vector(params.asArrayRef()),
                            groups.getInt()};
}

bool isConvBackward(Operation *op) { return op->hasAttr(attr::convBackward); }

void setConvBackwardMarker(Operation *op, int32_t kind, ArrayRef<int64_t> params, int64_t groups) {
  Builder b(op->getContext());
  op->setAttr(attr::convBackward,
              b.getDictionaryAttr({b.getNamedAttr("kind", b.getI32IntegerAttr(kind)),
                                   b.getNamedAttr("params", b.getDenseI64ArrayAttr(params)),
                                   b.getNamedAttr("groups", b.getI64IntegerAttr(groups))}));
}

std::optional<SmallVector<int64_t>> conv2dCallParams(ArrayRef<int64_t> x, ArrayRef<int64_t> w,
                                                     ArrayRef<int64_t> y, ArrayRef<int64_t> strides,
                                                     ArrayRef<int64_t> dilations,
                                                     ArrayRef<int64_t> padLow) {
  if (x.size() != 4 || w.size() != 4 || y.size() != 4 || strides.size() != 2 ||
      dilations.size() != 2 || padLow.size() != 2)
    return std::nullopt;
  SmallVector<int64_t> params = {x[0], x[1], x[2],       x[3],       w[0],       w[2],
                                 w[3], y[2], y[3],       strides[0], strides[1], dilations[0],
                                 dilations[1], padLow[0], padLow[1]};
  for (int i = 0; i < 2; ++i) {
    // The windows reach row (O-1)*s + (K-1)*d - pad_low; OH follows from
    // pad_high p exactly when (H + pad_low + p - window) / s + 1 = O, i.e.
    // p in [reach, reach + s - 1] with reach = (O-1)*s + window - H - pad_low.
    int64_t window = dilations[i] * (w[2 + i] - 1) + 1;
    int64_t reach = (y[2 + i] - 1) * strides[i] + window - x[2 + i] - padLow[i];
    int64_t high = std::max<int64_t>(reach, 0);
    if (padLow[i] < 0 || high > reach + strides[i] - 1)
      return std::nullopt;
    params.push_back(high);
  }
  return params;
}

AffineMap flippedFilterMap(MLIRContext *ctx, int64_t group, ArrayRef<int64_t> kernel) {
  int64_t lead = group > 1 ? 1 : 0;
  int64_t loops = lead + 2 + int64_t(kernel.size());
  SmallVector<AffineExpr> in;
  if (lead)
    in.push_back(getAffineDimExpr(0, ctx));
  in.append({getAffineDimExpr(lead + 1, ctx), getAffineDimExpr(lead, ctx)});
  for (size_t i = 0; i < kernel.size(); ++i)
    in.push_back(getAffineConstantExpr(kernel[i] - 1, ctx) -
                 getAffineDimExpr(lead + 2 + int64_t(i), ctx));
  return AffineMap::get(loops, 0, in, ctx);
}

} // namespace tcc
