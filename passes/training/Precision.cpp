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

/// A 16-bit copy's source: a parameter, whole (null SLICE) or through a
/// slice of it (its result type, start and stride).
struct CopySource {
  unsigned param;
  RankedTensorType slice;
  DenseI64ArrayAttr start, stride;

  static CopySource whole(unsigned param) { return {param, nullptr, nullptr, nullptr}; }
  static CopySource of(unsigned param, SliceOp op) {
    return {param, cast<RankedTensorType>(op.getType()), op.getStartAttr(), op.getStrideAttr()};
  }
};

/// The 16-bit values of the parameters of FN that can be copies, in program
/// order: the cast of each parameter, and the cast of each slice of one that
/// has a positive stride in every dimension. The slice is a filter trimmed
/// to the taps that meet its input (DropPaddingOnlyTaps: a 3x3 filter on a
/// 1x1 map is its centre tap); its copy holds the taps the forward reads,
/// and the update writes them from the rows of the parameter it has just
/// written (tcc-fuse-rows), where the forward would gather them across the
/// whole filter each step.
SmallVector<std::pair<CopySource, Value>> copyCandidates(func::FuncOp fn,
                                                         const FunctionPrecision &state) {
  SmallVector<std::pair<CopySource, Value>> found;
  auto paramIndex = [&](Value v) -> std::optional<unsigned> {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner()->getParentOp() != fn ||
        !fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(), attr::param))
      return std::nullopt;
    return arg.getArgNumber();
  };
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    if (paramIndex(fn.getArgument(i)))
      if (Value cast = state.casts.lookup({fn.getArgument(i), state.low}))
        found.push_back({CopySource::whole(i), cast});
  fn.walk([&](SliceOp slice) {
    std::optional<unsigned> param = paramIndex(slice.getInput());
    if (!param || llvm::any_of(slice.getStride(), [](int64_t s) { return s <= 0; }))
      return;
    if (Value cast = state.casts.lookup({slice.getResult(), state.low}))
      found.push_back({CopySource::of(*param, slice), cast});
  });
  return found;
}

/// The name of a copy: the parameter's, then for a slice its window as
/// Python writes it (`layer4.0.conv2.weight[:,:,1:2,1:2]`), then SUFFIX
/// (".bf16").
std::string copyName(func::FuncOp fn, const CopySource &source, StringRef suffix) {
  std::string name = fn.getArgAttrOfType<StringAttr>(source.param, attr::param).getValue().str();
  if (source.slice) {
    auto in = cast<RankedTensorType>(fn.getArgument(source.param).getType());
    SmallVector<std::string> dims;
    for (int64_t d = 0; d < in.getRank(); ++d) {
      int64_t start = source.start[d], stride = source.stride[d], n = source.slice.getDimSize(d);
      if (start == 0 && stride == 1 && n == in.getDimSize(d))
        dims.push_back(":");
      else if (stride == 1)
        dims.push_back(llvm::formatv("{0}:{1}", start, start + n).str());
      else
        dims.push_back(llvm::formatv("{0}:{1}:{2}", start, start + (n - 1) * stride + 1, stride).str());
    }
    name += "[" + llvm::join(dims, ",") + "]";
  }
  return name + "." + suffix.str();
}

/// VALUE (the parameter or a value of its type) through SOURCE's slice, a
/// new one at B's point, or VALUE itself.
Value throughSlice(OpBuilder &b, const CopySource &source, Value value) {
  if (!source.slice)
    return value;
  Type elem = getElementTypeOrSelf(value.getType());
  return SliceOp::create(b, value.getLoc(), RankedTensorType::get(source.slice.getShape(), elem),
                         value, source.start, source.stride);
}

/// The 16-bit copies of train_step's parameters as state: each parameter
/// (or slice of one: copyCandidates) that the pass cast to 16 bits gets a
/// state argument (copyName) that the forward reads instead of the cast,
/// and (when the optimizer updates the parameter) a result that writes the
/// updated parameter's rounding into it, which fusion joins to the update's
/// kernel. Returns the copies' sources with their names.
SmallVector<std::pair<CopySource, std::string>>
keepWeightCopies(func::FuncOp step, FunctionPrecision &state, StringRef suffix) {
  SmallVector<std::pair<CopySource, std::string>> copies;
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
  llvm::StringMap<unsigned> made; // copy name -> its argument
  for (auto [source, cast] : copyCandidates(step, state)) {
    StringRef paramName = step.getArgAttrOfType<StringAttr>(source.param, attr::param).getValue();
    Type copyType = cast.getType();
    std::string name = copyName(step, source, suffix);
    // Two slices of one window (not merged by CSE) read one copy.
    auto [known, fresh] = made.try_emplace(name, step.getNumArguments());
    unsigned index = known->second;
    if (fresh &&
        failed(step.insertArgument(
            index, copyType,
            b.getDictionaryAttr(b.getNamedAttr(attr::state, b.getStringAttr(name))),
            step.getArgument(source.param).getLoc()))) {
      made.erase(name);
      continue;
    }
    cast.replaceAllUsesWith(step.getArgument(index));
    Value from = cast.getDefiningOp()->getOperand(0);
    state.casts.erase({from, state.low});
    cast.getDefiningOp()->erase();
    if (Operation *slice = from.getDefiningOp(); slice && slice->use_empty())
      slice->erase();
    --state.castsMade;
    if (!fresh)
      continue;
    if (Value next = updated.lookup(paramName)) {
      // Right after the update (where fusion joins it to the update's
      // kernel), not at the return: the kernel must not move past the
      // in-place updates of the moments it reads.
      OpBuilder at(ret);
      if (Operation *def = next.getDefiningOp())
        at.setInsertionPointAfter(def);
      results.push_back(CastOp::create(at, next.getLoc(), copyType, throughSlice(at, source, next)));
      resultAttrs.push_back(
          b.getDictionaryAttr(b.getNamedAttr(attr::update, b.getStringAttr(name))));
    }
    copies.push_back({source, name});
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
  // The casts to replace: a parameter of FN (or a slice of one) whose copy
  // train_step holds, by the copy's name.
  llvm::StringMap<unsigned> copyArg; // copy name -> train_step's copy argument
  for (unsigned i : stepState)
    copyArg[stateName(step, i)] = i;
  SmallVector<std::pair<Value, unsigned>> replaced; // cast -> train_step's copy argument
  for (auto [source, cast] : copyCandidates(fn, state)) {
    auto copy = copyArg.find(copyName(fn, source, suffix));
    if (copy != copyArg.end() && cast.getType() == step.getArgument(copy->second).getType())
      replaced.push_back({cast, copy->second});
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
    Value from = cast.getDefiningOp()->getOperand(0);
    state.casts.erase({from, state.low});
    cast.getDefiningOp()->erase();
    if (Operation *slice = from.getDefiningOp(); slice && slice->use_empty())
      slice->erase();
    --state.castsMade;
  }
  return unsigned(replaced.size());
}

/// @init_state: the parameters and state of STEP in its order (so every
/// tensor has the offsets it has there), returning each of COPIES computed
/// from its parameter (rounded to LOW). The runtime runs it before a step that follows a
/// change of the parameters (session creation, loading, set_param).
void buildInitState(func::FuncOp step, ArrayRef<std::pair<CopySource, std::string>> copies,
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
  for (const auto &[source, name] : copies) {
    Value param = throughSlice(b, source, body->getArgument(argOf.lookup(source.param)));
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
      SmallVector<std::pair<CopySource, std::string>> copies;
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
