//===- Precision.cpp - mixed precision on the joint training graph --------===//
//
// Gives each f32 value the precision its producer's class asks for
// (PrecisionOpInterface, declared per op in ODS): products and the
// elementwise chains around them in 16 bits, sums, normalizations, softmax,
// the loss and the optimizer in f32. Casts are inserted only where a value
// crosses from one class to the other, once per value and type. In
// train_step, the 16-bit copy of each parameter is a state buffer that the
// optimizer's update writes (the forward reads it, no cast per step), and
// @init_state computes the copies from the parameters for the runtime to
// call before a step after the parameters changed.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/TccNames.h"
#include "dialects/TccOps.h"
#include "runtime/include/tcc/abi.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>

#define DEBUG_TYPE "tcc-precision"

namespace tcc {
#define GEN_PASS_DEF_PRECISIONPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;
using namespace tcc;

namespace {

/// An f32 tensor: the only values the policy retypes (f64 stays f64, and
/// values that are 16-bit in the model itself keep their type).
bool isF32Tensor(Type t) {
  auto tt = dyn_cast<RankedTensorType>(t);
  return tt && tt.getElementType().isF32();
}

/// One function's rewrite: the values the pass made 16-bit, the casts it
/// made (reused for every later reader), what it counted for the report.
struct FunctionPrecision {
  FloatType low;
  /// Values that were f32 and now hold LOW.
  DenseSet<Value> lowered;
  /// (value, element type) -> its cast.
  DenseMap<std::pair<Value, Type>, Value> casts;
  /// "op class -> computes in" per op name, for the report.
  std::map<std::string, unsigned> counts;
  unsigned castsMade = 0;

  bool isLow(Value v) const { return lowered.contains(v); }

  /// V as element type ELEM: one cast right after V's definition, shared by
  /// every reader (readers come later in the block, so it dominates them).
  Value castTo(Value v, Type elem) {
    auto type = cast<RankedTensorType>(v.getType());
    if (type.getElementType() == elem)
      return v;
    auto [it, inserted] = casts.try_emplace({v, elem}, Value());
    if (!inserted)
      return it->second;
    OpBuilder b(v.getContext());
    if (Operation *def = v.getDefiningOp())
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(cast<BlockArgument>(v).getOwner());
    ++castsMade;
    return it->second = CastOp::create(b, v.getLoc(), type.clone(elem), v);
  }

  /// Every f32 operand of OP cast to LOW, every f32 result retyped to LOW.
  void computeLow(Operation *op) {
    for (OpOperand &use : op->getOpOperands())
      if (isF32Tensor(use.get().getType()))
        use.set(castTo(use.get(), low));
    for (Value r : op->getResults())
      if (isF32Tensor(r.getType())) {
        r.setType(cast<RankedTensorType>(r.getType()).clone(low));
        lowered.insert(r);
      }
  }

  /// Every operand the pass made 16-bit back in f32.
  void computeFp32(Operation *op) {
    Type f32 = Float32Type::get(op->getContext());
    for (OpOperand &use : op->getOpOperands())
      if (isLow(use.get()))
        use.set(castTo(use.get(), f32));
  }

  void count(Operation *op, StringRef cls, StringRef reason, bool low) {
    bool floats = llvm::any_of(op->getResultTypes(), [](Type t) {
      auto tt = dyn_cast<RankedTensorType>(t);
      return tt && isa<FloatType>(tt.getElementType());
    });
    if (!floats)
      return;
    std::string key = llvm::formatv("{0,-26} {1,-8} {2,-5} {3}", op->getName().getStringRef(),
                                    cls, low ? "16bit" : "f32", reason);
    ++counts[key];
  }

  void visit(Operation *op) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      // Signatures stay as they were: results computed in 16 bits go back.
      computeFp32(op);
      return;
    }
    if (isa<CastOp>(op))
      return; // the pass's own casts and the model's keep their types
    auto iface = dyn_cast<PrecisionOpInterface>(op);
    if (op->hasAttr(attr::keepFp32)) {
      computeFp32(op);
      count(op, "fp32", "optimizer, gradient norm or loss scaling (tcc-build-train-step)", false);
      return;
    }
    if (!iface) {
      // An op without a class (another dialect): as it was, in f32.
      computeFp32(op);
      return;
    }
    PrecisionClass cls = iface.getPrecisionClass();
    bool follows = cls == PrecisionClass::Follow || cls == PrecisionClass::Widened;
    bool low = cls == PrecisionClass::Low ||
               (follows &&
                llvm::any_of(op->getOperands(), [&](Value v) { return isLow(v); }));
    if (low)
      computeLow(op);
    else if (cls != PrecisionClass::Explicit)
      computeFp32(op);
    count(op, precisionClassName(cls), iface.getPrecisionReason(), low);
  }
};

/// V as element type ELEM, cast before the data movement when V is a
/// transpose, reshape or broadcast that nothing but its cast reads:
/// `cast(transpose(x))` becomes `transpose(cast(x))` (exact in any type).
/// The cast of x is the one other readers share (the forward's `x @ w`
/// and the backward's `x.T @ dy` read one rounding of x), it runs over
/// contiguous elements instead of a strided gather, and the transpose is
/// left to the consumer (a library call's operand flag, an indexing map);
/// a broadcast is cast before it grows. A parameter's cast becomes its
/// 16-bit copy (keepWeightCopies), so `x @ w.T` reads the one copy. Null
/// when V is not such a chain.
Value movedCast(Value v, Type elem, FunctionPrecision &state) {
  Operation *def = v.getDefiningOp();
  if (!isa_and_nonnull<TransposeOp, ReshapeOp, BroadcastInDimOp>(def) || !v.hasOneUse() ||
      def->getNumOperands() != 1)
    return Value();
  Value in = def->getOperand(0);
  Value from = movedCast(in, elem, state);
  if (!from)
    from = state.castTo(in, elem);
  OpBuilder b(def);
  Operation *moved = b.clone(*def);
  moved->setOperand(0, from);
  moved->getResult(0).setType(cast<RankedTensorType>(v.getType()).clone(elem));
  return moved->getResult(0);
}

/// Every cast of a moved value (movedCast) replaced by the moved cast;
/// the chains it read go. In program order, so the rebuilt IR is the same
/// from run to run.
void castBeforeMoves(func::FuncOp fn, FunctionPrecision &state) {
  for (Operation &op : llvm::make_early_inc_range(fn.getBody().front())) {
    auto castOp = dyn_cast<CastOp>(&op);
    if (!castOp)
      continue;
    Value in = castOp.getInput();
    Type elem = castOp.getType().getElementType();
    if (!isa<FloatType>(elem) || !isa<FloatType>(getElementTypeOrSelf(in.getType())))
      continue;
    Value rebuilt = movedCast(in, elem, state);
    if (!rebuilt)
      continue;
    auto key = std::make_pair(in, elem);
    if (state.casts.lookup(key) == castOp.getResult()) {
      state.casts.erase(key);
      --state.castsMade;
    }
    castOp.getResult().replaceAllUsesWith(rebuilt);
    castOp->erase();
    // The chain it read, from its end.
    for (Operation *dead = in.getDefiningOp(); dead && dead->use_empty();) {
      Value operand = dead->getOperand(0);
      dead->erase();
      dead = operand.getDefiningOp();
    }
  }
}

/// The 16-bit copies of train_step's parameters as state: each parameter
/// that the pass cast to 16 bits gets a state argument NAME.<precision> that
/// the forward reads instead of the cast, and (when the optimizer updates
/// it) a result that writes the updated parameter's rounding into it, which
/// fusion joins to the update's kernel. Returns the copies' names with
/// their parameters' argument indices.
SmallVector<std::pair<unsigned, std::string>>
keepWeightCopies(func::FuncOp step, FunctionPrecision &state, StringRef suffix) {
  SmallVector<std::pair<unsigned, std::string>> copies;
  auto ret = cast<func::ReturnOp>(step.getBody().front().getTerminator());
  // The optimizer's new value of each parameter, by name.
  llvm::StringMap<Value> updated;
  for (unsigned i = 0; i < ret.getNumOperands(); ++i)
    if (auto name = step.getResultAttrOfType<StringAttr>(i, attr::update))
      updated[name.getValue()] = ret.getOperand(i);
  SmallVector<Value> results(ret.getOperands());
  SmallVector<DictionaryAttr> resultAttrs;
  for (unsigned i = 0; i < ret.getNumOperands(); ++i)
    resultAttrs.push_back(step.getResultAttrDict(i) ? step.getResultAttrDict(i)
                                                    : DictionaryAttr::get(step.getContext()));
  OpBuilder b(ret);
  unsigned numParams = step.getNumArguments();
  for (unsigned i = 0; i < numParams; ++i) {
    auto name = step.getArgAttrOfType<StringAttr>(i, attr::param);
    Value param = step.getArgument(i);
    auto it = state.casts.find({param, state.low});
    if (!name || it == state.casts.end())
      continue;
    Value cast = it->second;
    Type copyType = cast.getType();
    std::string copyName = (name.getValue() + "." + suffix).str();
    unsigned index = step.getNumArguments();
    if (failed(step.insertArgument(index, copyType,
                                   b.getDictionaryAttr(b.getNamedAttr(
                                       attr::state, b.getStringAttr(copyName))),
                                   param.getLoc())))
      continue;
    cast.replaceAllUsesWith(step.getArgument(index));
    cast.getDefiningOp()->erase();
    state.casts.erase(it);
    --state.castsMade;
    copies.push_back({i, copyName});
    if (Value next = updated.lookup(name.getValue())) {
      // Right after the update (where fusion joins it to the update's
      // kernel), not at the return: the kernel must not move past the
      // in-place updates of the moments it reads.
      OpBuilder at(ret);
      if (Operation *def = next.getDefiningOp())
        at.setInsertionPointAfter(def);
      results.push_back(CastOp::create(at, next.getLoc(), copyType, next));
      resultAttrs.push_back(
          b.getDictionaryAttr(b.getNamedAttr(attr::update, b.getStringAttr(copyName))));
    }
  }
  func::ReturnOp::create(b, ret.getLoc(), results);
  ret.erase();
  step.setFunctionType(FunctionType::get(step.getContext(), step.getArgumentTypes(),
                                         ValueRange(results).getTypes()));
  step.setAllResultAttrs(resultAttrs);
  return copies;
}

/// The 16-bit copies of STEP (train_step, after keepWeightCopies) read by
/// another entry FN (accumulate_grad, eval_step, infer) in place of its own
/// casts of the same parameters. The copies are current whenever an entry
/// runs: train_step's update writes them, init_state makes them after any
/// other change of the parameters. State sits in argument order, so FN
/// takes train_step's state arguments in train_step's order (those it does
/// not read too): FN's own state must be their prefix (accumulate_grad's
/// accumulators and loss scale are), else FN keeps its casts. Returns how
/// many casts the copies replaced.
unsigned readWeightCopies(func::FuncOp fn, func::FuncOp step, FunctionPrecision &state,
                          StringRef suffix) {
  auto stateName = [](func::FuncOp f, unsigned i) {
    auto name = f.getArgAttrOfType<StringAttr>(i, attr::state);
    return name ? name.getValue() : StringRef();
  };
  SmallVector<unsigned> stepState, fnState;
  for (unsigned i = 0; i < step.getNumArguments(); ++i)
    if (!stateName(step, i).empty())
      stepState.push_back(i);
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    if (!stateName(fn, i).empty())
      fnState.push_back(i);
  if (fnState.size() > stepState.size())
    return 0;
  for (auto [k, i] : llvm::enumerate(fnState))
    if (stateName(fn, i) != stateName(step, stepState[k]) ||
        fn.getArgument(i).getType() != step.getArgument(stepState[k]).getType())
      return 0;
  // The casts to replace: a parameter of FN whose copy train_step holds.
  llvm::StringMap<unsigned> copyArg; // parameter name -> train_step's copy argument
  for (unsigned i : stepState) {
    StringRef name = stateName(step, i);
    size_t dot = name.rfind('.');
    if (dot != StringRef::npos && name.substr(dot + 1) == suffix)
      copyArg[name.substr(0, dot)] = i;
  }
  SmallVector<std::pair<Value, unsigned>> replaced; // cast -> train_step's copy argument
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    auto name = fn.getArgAttrOfType<StringAttr>(i, attr::param);
    auto it = name ? state.casts.find({fn.getArgument(i), state.low}) : state.casts.end();
    auto copy = name ? copyArg.find(name.getValue()) : copyArg.end();
    if (it != state.casts.end() && copy != copyArg.end() &&
        it->second.getType() == step.getArgument(copy->second).getType())
      replaced.push_back({it->second, copy->second});
  }
  if (replaced.empty())
    return 0;
  // train_step's remaining state, appended in its order.
  DenseMap<unsigned, Value> appended; // train_step argument -> FN's
  for (unsigned i : ArrayRef<unsigned>(stepState).drop_front(fnState.size())) {
    unsigned index = fn.getNumArguments();
    if (failed(fn.insertArgument(index, step.getArgument(i).getType(), step.getArgAttrDict(i),
                                 fn.getLoc())))
      return 0;
    appended[i] = fn.getArgument(index);
  }
  for (auto [cast, copy] : replaced) {
    cast.replaceAllUsesWith(appended.lookup(copy));
    for (auto it = state.casts.begin(); it != state.casts.end(); ++it)
      if (it->second == cast) {
        state.casts.erase(it);
        break;
      }
    cast.getDefiningOp()->erase();
    --state.castsMade;
  }
  return unsigned(replaced.size());
}

/// @init_state: the parameters and state of STEP in its order (so every
/// tensor has the offsets it has there), returning each of COPIES computed
/// from its parameter (rounded to LOW). The runtime runs it before a step that follows a
/// change of the parameters (session creation, loading, set_param).
void buildInitState(func::FuncOp step, ArrayRef<std::pair<unsigned, std::string>> copies,
                    FloatType low) {
  OpBuilder b(step.getContext());
  b.setInsertionPointAfter(step);
  SmallVector<Type> argTypes;
  SmallVector<DictionaryAttr> argAttrs;
  DenseMap<unsigned, unsigned> argOf; // step argument -> init_state argument
  for (unsigned i = 0; i < step.getNumArguments(); ++i)
    if (step.getArgAttr(i, attr::param) || step.getArgAttr(i, attr::state)) {
      argOf[i] = argTypes.size();
      argTypes.push_back(step.getArgument(i).getType());
      argAttrs.push_back(step.getArgAttrDict(i));
    }
  auto init = func::FuncOp::create(b, step.getLoc(), TCC_ENTRY_INIT_STATE,
                                   FunctionType::get(step.getContext(), argTypes, {}));
  init.setAllArgAttrs(argAttrs);
  Block *body = init.addEntryBlock();
  b.setInsertionPointToStart(body);
  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs;
  for (const auto &[paramIndex, name] : copies) {
    Value param = body->getArgument(argOf.lookup(paramIndex));
    auto type = cast<RankedTensorType>(param.getType());
    results.push_back(CastOp::create(b, step.getLoc(), type.clone(low), param));
    resultAttrs.push_back(b.getDictionaryAttr(b.getNamedAttr(attr::update, b.getStringAttr(name))));
  }
  func::ReturnOp::create(b, step.getLoc(), results);
  init.setFunctionType(
      FunctionType::get(step.getContext(), argTypes, ValueRange(results).getTypes()));
  init.setAllResultAttrs(resultAttrs);
}

struct PrecisionPass : tcc::impl::PrecisionPassBase<PrecisionPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    FloatType low;
    if (precision == tcc::Precision::BF16)
      low = BFloat16Type::get(ctx);
    else if (precision == tcc::Precision::FP16)
      low = Float16Type::get(ctx);
    else {
      module.emitError() << "tcc-precision: precision must be bf16 or fp16, not '"
                         << tcc::precisionName(precision) << "'";
      return signalPassFailure();
    }
    // init_state joins the module below; it is not one to retype.
    // train_step first: the other entries read its 16-bit copies.
    SmallVector<func::FuncOp> functions;
    for (func::FuncOp f : module.getOps<func::FuncOp>())
      if (f.getSymName() == TCC_ENTRY_TRAIN_STEP)
        functions.insert(functions.begin(), f);
      else
        functions.push_back(f);
    for (func::FuncOp fn : functions) {
      if (fn.isExternal())
        continue;
      FunctionPrecision state;
      state.low = low;
      // The casts the pass inserts are skipped (they are CastOps), so the
      // walk may see them without effect.
      for (Operation &op : llvm::make_early_inc_range(fn.getBody().front()))
        state.visit(&op);
      fn.walk([](Operation *op) { op->removeAttr(attr::keepFp32); });
      castBeforeMoves(fn, state);
      SmallVector<std::pair<unsigned, std::string>> copies;
      size_t copiesRead = 0;
      if (fn.getSymName() == TCC_ENTRY_TRAIN_STEP &&
          !module.lookupSymbol(TCC_ENTRY_INIT_STATE)) {
        copies = keepWeightCopies(fn, state, tcc::precisionName(precision));
        if (!copies.empty())
          buildInitState(fn, copies, low);
      }
      auto step = module.lookupSymbol<func::FuncOp>(TCC_ENTRY_TRAIN_STEP);
      // (infer is still the importer's @forward here.)
      bool reader = fn.getSymName() == TCC_ENTRY_ACCUMULATE_GRAD ||
                    fn.getSymName() == TCC_ENTRY_EVAL_STEP || fn.getSymName() == "forward";
      if (reader && step && step != fn && module.lookupSymbol(TCC_ENTRY_INIT_STATE))
        copiesRead = readWeightCopies(fn, step, state, tcc::precisionName(precision));
      if (report)
        printReport(fn, state, copies.size(), copiesRead);
    }
  }

  /// COPIES: train_step's own copies; READ: train_step's that FN reads.
  void printReport(func::FuncOp fn, const FunctionPrecision &state, size_t copies, size_t read) {
    llvm::errs() << "precision @" << fn.getSymName() << " (" << tcc::precisionName(precision) << "): "
                 << state.castsMade << " casts at class boundaries\n";
    if (copies)
      llvm::errs() << "  " << copies << " parameters read through their "
                   << tcc::precisionName(precision)
                   << " copies (state, written by the optimizer's update; @"
                   << TCC_ENTRY_INIT_STATE << " makes them from the parameters)\n";
    if (read)
      llvm::errs() << "  " << read << " parameters read through their "
                   << tcc::precisionName(precision) << " copies (@" << TCC_ENTRY_TRAIN_STEP
                   << "'s state; no cast per run)\n";
    llvm::errs() << llvm::formatv("  {0,-26} {1,-8} {2,-5} {3}\n", "op", "class", "runs",
                                  "why");
    for (const auto &[key, n] : state.counts)
      llvm::errs() << "  " << key << "  x" << n << "\n";
  }
};

} // namespace
