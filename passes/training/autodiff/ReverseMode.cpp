//===- ReverseMode.cpp - reverse-mode automatic differentiation -----------===//
//
// The classic tape-free scheme for a single-block SSA function: clone the
// forward body, walk its ops backwards from the loss, and ask each op's
// gradient rule for the vector-Jacobian product of every operand; gradients
// of values with several uses are summed. Only ops between the
// differentiated arguments and the loss are visited, so a missing rule
// elsewhere (integer shape arithmetic, say) does no harm.
//
//===----------------------------------------------------------------------===//

#include "passes/training/autodiff/ReverseMode.h"
#include "passes/support/SourceNames.h"
#include "passes/support/TccBuilders.h"

#include "dialects/TccNames.h"
#include "dialects/TccOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace {

bool isFloatTensor(Type t) {
  auto r = dyn_cast<RankedTensorType>(t);
  return r && isa<FloatType>(r.getElementType());
}

/// A name for diagnostics: the ONNX node (a NameLoc) if there is one.
std::string describe(Operation *op) {
  std::string s = op->getName().getStringRef().str();
  if (isa<NameLoc>(tcc::sourceLocation(op)))
    return s + " (node '" + tcc::sourceName(op) + "')";
  return s + " at " + tcc::sourceName(op);
}

} // namespace

FailureOr<func::FuncOp> tcc::buildGradientFunction(func::FuncOp func, ArrayRef<unsigned> wrt,
                                                   StringRef name) {
  if (!func.getBody().hasOneBlock())
    return func.emitError("autodiff: the function must have a single block"), failure();
  auto forwardReturn = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  if (forwardReturn.getNumOperands() == 0 ||
      !isFloatTensor(forwardReturn.getOperand(0).getType()) ||
      cast<RankedTensorType>(forwardReturn.getOperand(0).getType()).getNumElements() != 1)
    return func.emitError("autodiff: the first result must be the loss, a float tensor of "
                          "one element"),
           failure();
  for (unsigned i : wrt)
    if (i >= func.getNumArguments() || !isFloatTensor(func.getArgument(i).getType()))
      return func.emitError("autodiff: argument #") << i << " is not a float tensor",
             failure();

  // A declaration of NAME (a caller written before the gradient existed)
  // is replaced by the definition; a definition is an error.
  if (Operation *existing = SymbolTable::lookupNearestSymbolFrom(func, StringAttr::get(func.getContext(), name))) {
    auto decl = dyn_cast<func::FuncOp>(existing);
    if (!decl || !decl.isExternal())
      return func.emitError("autodiff: '") << name << "' is already defined", failure();
    decl.erase();
  }
  OpBuilder moduleBuilder(func);
  moduleBuilder.setInsertionPointAfter(func);
  auto grad = cast<func::FuncOp>(moduleBuilder.clone(*func));
  grad.setSymName(name);
  Block &body = grad.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  Value loss = ret.getOperand(0);

  // Values that depend on a differentiated argument.
  DenseSet<Value> active;
  for (unsigned i : wrt)
    active.insert(grad.getArgument(i));
  for (Operation &op : body.without_terminator())
    if (llvm::any_of(op.getOperands(), [&](Value v) { return active.contains(v); }))
      for (Value r : op.getResults())
        active.insert(r);

  DenseMap<Value, Value> grads;
  OpBuilder b(ret);
  auto accumulate = [&](Value v, Value g) {
    auto [it, inserted] = grads.try_emplace(v, g);
    if (!inserted)
      it->second = tcc::add(b, g.getLoc(), it->second, g);
  };
  auto lossType = cast<RankedTensorType>(loss.getType());
  grads[loss] = tcc::splat(b, loss.getLoc(), lossType, 1.0);

  SmallVector<std::string> missing;
  // Values whose gradient an op without a rule would have produced: their
  // producers are still checked, so every missing rule is reported at once.
  DenseSet<Value> blocked;
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops)) {
    SmallVector<Value> resultGrads;
    bool any = false;
    for (Value r : op->getResults()) {
      resultGrads.push_back(grads.lookup(r));
      any |= bool(resultGrads.back());
    }
    bool isBlocked = llvm::any_of(op->getResults(), [&](Value r) { return blocked.contains(r); });
    bool needed = llvm::any_of(op->getOperands(), [&](Value v) {
      return active.contains(v) && isFloatTensor(v.getType());
    });
    if ((!any && !isBlocked) || !needed)
      continue;
    auto rule = dyn_cast<tcc::DifferentiableOpInterface>(op);
    if (!rule || isBlocked || !missing.empty()) {
      if (!rule)
        missing.push_back(describe(op));
      for (Value v : op->getOperands())
        if (active.contains(v))
          blocked.insert(v);
      if (!rule || isBlocked)
        continue;
    }
    // A rule sees zeros, not nulls, for results the loss ignores.
    for (auto [i, r] : llvm::enumerate(op->getResults()))
      if (!resultGrads[i] && isFloatTensor(r.getType()))
        resultGrads[i] = tcc::splat(b, op->getLoc(), r, 0.0);
    SmallVector<Value> operandGrads;
    if (failed(rule.buildGradients(b, resultGrads, operandGrads))) {
      grad.erase();
      return failure();
    }
    if (operandGrads.size() != op->getNumOperands()) {
      op->emitOpError("gradient rule returned ")
          << operandGrads.size() << " gradients for " << op->getNumOperands() << " operands";
      grad.erase();
      return failure();
    }
    for (auto [operand, g] : llvm::zip(op->getOperands(), operandGrads))
      if (g && active.contains(operand))
        accumulate(operand, g);
  }
  if (!missing.empty()) {
    InFlightDiagnostic diag = func.emitError("autodiff: no gradient rule for ")
                              << missing.size() << " op(s) between the parameters and the loss:";
    for (const std::string &m : llvm::reverse(missing)) // program order
      diag << "\n  " << m;
    grad.erase();
    return failure();
  }

  // Return the loss and the gradients.
  SmallVector<Value> results = {loss};
  SmallVector<Type> resultTypes = {loss.getType()};
  for (unsigned i : wrt) {
    Value arg = grad.getArgument(i);
    Value g = grads.lookup(arg);
    if (!g)
      g = tcc::splat(b, arg.getLoc(), arg, 0.0);
    results.push_back(g);
    resultTypes.push_back(g.getType());
  }
  func::ReturnOp::create(b, ret.getLoc(), results);
  ret.erase();
  grad.setFunctionType(FunctionType::get(func.getContext(), grad.getArgumentTypes(), resultTypes));

  // Result names: the loss keeps the forward's, gradients are "NAME.grad".
  SmallVector<DictionaryAttr> resultAttrs;
  resultAttrs.push_back(func.getResultAttrDict(0) ? func.getResultAttrDict(0)
                                                  : DictionaryAttr::get(func.getContext()));
  for (unsigned i : wrt) {
    StringAttr argName;
    for (StringRef key : {tcc::attr::param, tcc::attr::input})
      if (auto n = func.getArgAttrOfType<StringAttr>(i, key))
        argName = n;
    NamedAttrList attrs;
    if (argName)
      attrs.append(tcc::attr::output,
                   StringAttr::get(func.getContext(), argName.getValue() + ".grad"));
    resultAttrs.push_back(attrs.getDictionary(func.getContext()));
  }
  grad.setAllResultAttrs(resultAttrs);
  return grad;
}
