//===- BuildTrainStep.cpp - forward + loss + backward + update ------------===//
//
// The training step is built on the tcc dialect from three pieces: the
// forward function, a loss written in tcc ops, and the gradient function that
// tcc-autodiff derives from both. Everything after (fusion, the memory plan,
// code generation) treats the step like any other function.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/support/TccBuilders.h"
#include "passes/training/autodiff/GradientRules.h"
#include "passes/training/autodiff/ReverseMode.h"

#include "dialects/TccNames.h"
#include "runtime/include/tcc/abi.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/GlobPattern.h"

#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

namespace tcc {
#define GEN_PASS_DEF_BUILDTRAINSTEPPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;
using namespace tcc;

namespace {

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

/// Sum of X over all axes, as a 0-d tensor.
Value sumAll(OpBuilder &b, Location loc, Value x) {
  auto axes = llvm::to_vector(llvm::seq<int64_t>(0, tensorType(x).getRank()));
  return ReduceSumOp::create(b, loc, x, b.getDenseI64ArrayAttr(axes), b.getBoolAttr(false));
}

/// The real samples of a padded batch (eval_step): a mask shaped like LIKE,
/// true on the leading-axis rows r < valid * ROWS, VALID being the 0-d i64
/// count of samples the runtime wrote.
Value realRows(OpBuilder &b, Location loc, RankedTensorType like, Value valid, int64_t rows) {
  auto i64 = b.getI64Type();
  int64_t n = like.getDimSize(0);
  auto positionsType = RankedTensorType::get({n}, i64);
  SmallVector<APInt> positionValues;
  for (int64_t r = 0; r < n; ++r)
    positionValues.push_back(APInt(64, uint64_t(r)));
  Value positions =
      ConstantOp::create(b, loc, positionsType, DenseElementsAttr::get(positionsType, positionValues));
  auto scalar = RankedTensorType::get({}, i64);
  Value rowsPerSample =
      ConstantOp::create(b, loc, scalar, DenseElementsAttr::get(scalar, APInt(64, uint64_t(rows))));
  Value limit = MulOp::create(b, loc, valid, rowsPerSample);
  auto wide = RankedTensorType::get(like.getShape(), i64);
  Value position = BroadcastInDimOp::create(b, loc, wide, positions, b.getDenseI64ArrayAttr({0}));
  Value bound = BroadcastInDimOp::create(b, loc, wide, limit, b.getDenseI64ArrayAttr({}));
  return CompareOp::create(b, loc, CmpPredicate::lt, position, bound);
}

/// What a padded batch's loss must leave out: the rows past the real
/// samples (the mask of realRows, shaped like the prediction) and their
/// count (a 0-d f32, real rows times the elements of one row).
struct RowMask {
  Value mask, count;
};

/// mean((pred - labels)^2) over every element, or over the real rows of a
/// padded batch.
FailureOr<Value> mseLoss(OpBuilder &b, Location loc, Value pred, Value labels,
                         std::optional<RowMask> real) {
  if (tensorType(labels) != tensorType(pred))
    return emitError(loc, "--loss=mse: the labels must have the prediction's type ")
               << pred.getType() << ", not " << labels.getType(),
           failure();
  Value d = SubOp::create(b, loc, pred, labels);
  Value sq = MulOp::create(b, loc, d, d);
  if (real) {
    // A select, not a product: a padded row's NaN must not reach the sum.
    Value zeros = splat(b, loc, tensorType(sq), 0.0);
    Value s = sumAll(b, loc, SelectOp::create(b, loc, real->mask, sq, zeros));
    return Value(DivOp::create(b, loc, s, real->count));
  }
  int64_t n = tensorType(pred).getNumElements();
  Value s = sumAll(b, loc, sq);
  return Value(MulOp::create(b, loc, s, splat(b, loc, tensorType(s), 1.0 / double(n))));
}

/// PyTorch's cross_entropy with class indices: for each label position not
/// equal to IGNORE, (1 - eps) (-log_softmax[label]) + eps / C sum_c
/// (-log_softmax[c]), averaged over those positions (divided by max(count, 1):
/// a batch of only ignored labels gives loss 0, where PyTorch gives NaN).
/// The selections are compare + select: no gradient flows into the labels.
FailureOr<Value> crossEntropyLoss(OpBuilder &b, Location loc, Value logits, Value labels,
                                  int64_t ignore, double smoothing) {
  RankedTensorType lt = tensorType(logits), yt = tensorType(labels);
  int64_t rank = lt.getRank();
  if (rank < 1 || yt.getRank() != rank - 1 || !isa<IntegerType>(yt.getElementType()) ||
      yt.getShape() != lt.getShape().drop_back())
    return emitError(loc, "--loss=cross_entropy: the labels must be integers shaped like the "
                          "logits ")
               << logits.getType() << " without the class axis, not " << labels.getType(),
           failure();
  Value logp = LogSoftmaxOp::create(b, loc, lt, logits, b.getI64IntegerAttr(rank - 1));
  Value zeros = splat(b, loc, lt, 0.0);
  Value hit = buildLabelMatch(b, loc, labels, lt, rank - 1);
  Value total = sumAll(b, loc, SelectOp::create(b, loc, hit, logp, zeros));
  auto scalar = tensorType(total);
  // Positions that count: label != ignore.
  Value ignoreValue = ConstantOp::create(
      b, loc, yt, DenseElementsAttr::get(yt, IntegerAttr::get(yt.getElementType(), ignore)));
  Value counted = CompareOp::create(b, loc, CmpPredicate::ne, labels, ignoreValue);
  if (smoothing > 0) {
    SmallVector<int64_t> dims = llvm::to_vector(llvm::seq<int64_t>(0, rank - 1));
    auto fullMask = RankedTensorType::get(lt.getShape(), b.getI1Type());
    Value countedFull = BroadcastInDimOp::create(b, loc, fullMask, counted, b.getDenseI64ArrayAttr(dims));
    Value uniform = sumAll(b, loc, SelectOp::create(b, loc, countedFull, logp, zeros));
    double classes = double(lt.getShape().back());
    Value kept = MulOp::create(b, loc, total, splat(b, loc, scalar, 1 - smoothing));
    Value spread = MulOp::create(b, loc, uniform, splat(b, loc, scalar, smoothing / classes));
    total = AddOp::create(b, loc, kept, spread);
  }
  auto countType = RankedTensorType::get(yt.getShape(), lt.getElementType());
  Value count = sumAll(b, loc, CastOp::create(b, loc, countType, counted));
  count = MaxOp::create(b, loc, count, splat(b, loc, scalar, 1.0));
  return Value(NegOp::create(b, loc, DivOp::create(b, loc, total, count)));
}

/// A function under construction: new arguments at the end, results
/// collected with their attributes, the return rebuilt by finish().
struct FunctionEditor {
  func::FuncOp fn;
  OpBuilder b;
  Location loc;
  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs;

  explicit FunctionEditor(func::FuncOp fn)
      : fn(fn), b(fn.getBody().front().getTerminator()), loc(fn.getLoc()) {}

  func::ReturnOp terminator() { return cast<func::ReturnOp>(fn.getBody().front().getTerminator()); }

  /// A new last argument: a runtime input (KIND attr::input) or a state
  /// buffer (attr::state), named NAME.
  Value addArgument(Type type, StringRef kind, const Twine &name) {
    unsigned index = fn.getNumArguments();
    if (failed(fn.insertArgument(
            index, type, b.getDictionaryAttr(b.getNamedAttr(kind, b.getStringAttr(name))), loc)))
      return Value();
    return fn.getArgument(index);
  }
  void output(Value v, StringRef name) {
    results.push_back(v);
    resultAttrs.push_back(b.getDictionaryAttr(b.getNamedAttr(attr::output, b.getStringAttr(name))));
  }
  /// A new value of parameter / state NAME, written over it in place.
  void update(Value v, const Twine &name) {
    results.push_back(v);
    resultAttrs.push_back(
        b.getDictionaryAttr(b.getNamedAttr(attr::update, b.getStringAttr(name.str()))));
  }
  /// With loss scaling or the non-finite guard: true (i1, 0-d) when the
  /// step skips its update.
  Value skip;
  /// Whether a skipped step keeps the running statistics too (the guard:
  /// a NaN batch would poison them; loss scaling keeps PyTorch's behaviour,
  /// whose forward updates them whatever the step does).
  bool skipStatistics = false;
  /// A new value of optimizer-updated NAME (old value OLD) that keeps OLD
  /// when the step skips its update.
  void updateUnlessSkipped(Value v, Value old, const Twine &name) {
    if (skip) {
      auto type = cast<RankedTensorType>(v.getType());
      Value mask = BroadcastInDimOp::create(b, loc, type.clone(b.getI1Type()), skip,
                                            b.getDenseI64ArrayAttr({}));
      v = SelectOp::create(b, loc, mask, old, v);
    }
    update(v, name);
  }
  void finish() {
    func::ReturnOp ret = terminator();
    func::ReturnOp::create(b, ret.getLoc(), results);
    ret.erase();
    SmallVector<Type> types;
    for (Value v : results)
      types.push_back(v.getType());
    fn.setFunctionType(FunctionType::get(fn.getContext(), fn.getArgumentTypes(), types));
    fn.setAllResultAttrs(resultAttrs);
  }
};

/// Running statistics, as PyTorch updates them: r = m r + (1 - m) batch,
/// with the unbiased batch variance (ONNX's momentum m = 1 - PyTorch's).
void updateRunningStatistics(FunctionEditor &e) {
  SmallVector<BatchNormTrainingOp> norms;
  e.fn.walk([&](BatchNormTrainingOp bn) {
    if (bn->hasAttr(attr::runningStats))
      norms.push_back(bn);
  });
  Block &body = e.fn.getBody().front();
  for (BatchNormTrainingOp bn : norms) {
    ArrayRef<int64_t> stats = bn->getAttrOfType<DenseI64ArrayAttr>(attr::runningStats).asArrayRef();
    double m = bn->getAttrOfType<FloatAttr>(attr::momentum).getValueAsDouble();
    RankedTensorType xt = tensorType(bn.getInput());
    int64_t n = xt.getNumElements() / xt.getDimSize(1);
    Value batchStats[2] = {bn.getBatchMean(), bn.getBatchVariance()};
    for (int k = 0; k < 2; ++k) {
      Value running = body.getArgument(unsigned(stats[k]));
      auto rt = tensorType(running);
      Value stat = batchStats[k];
      OpBuilder &b = e.b;
      if (k == 1 && n > 1)
        stat = MulOp::create(b, e.loc, stat, splat(b, e.loc, rt, double(n) / double(n - 1)));
      Value kept = MulOp::create(b, e.loc, running, splat(b, e.loc, rt, m));
      Value added = MulOp::create(b, e.loc, stat, splat(b, e.loc, rt, 1 - m));
      Value next = AddOp::create(b, e.loc, kept, added);
      StringRef name = e.fn.getArgAttrOfType<StringAttr>(unsigned(stats[k]), attr::param).getValue();
      if (e.skipStatistics)
        e.updateUnlessSkipped(next, running, name);
      else
        e.update(next, name);
    }
  }
}

/// PyTorch's eval mode for FN: batch norms with running statistics
/// normalize with those instead of the batch's.
void useRunningStatistics(func::FuncOp fn) {
  SmallVector<BatchNormTrainingOp> norms;
  fn.walk([&](BatchNormTrainingOp bn) {
    if (bn->hasAttr(attr::runningStats) && bn.getBatchMean().use_empty() &&
        bn.getBatchVariance().use_empty())
      norms.push_back(bn);
  });
  for (BatchNormTrainingOp bn : norms) {
    ArrayRef<int64_t> stats = bn->getAttrOfType<DenseI64ArrayAttr>(attr::runningStats).asArrayRef();
    OpBuilder b(bn);
    Value y = BatchNormInferenceOp::create(
        b, bn.getLoc(), bn.getResult().getType(), bn.getInput(), bn.getScale(), bn.getBias(),
        fn.getArgument(unsigned(stats[0])), fn.getArgument(unsigned(stats[1])),
        bn.getEpsilonAttr());
    bn.getResult().replaceAllUsesWith(y);
    bn.erase();
  }
}

/// A model exported in eval mode trains differently from PyTorch without a
/// word: its batch norms normalize with the stored running statistics (and
/// never update them) or were folded into convolutions by PyTorch (the
/// importer records the first such node as tcc.folded_batch_norm), and its
/// dropouts are gone; or current PyTorch's dynamo exporter changed it (its
/// optimizer's rewrites, parameters of its graph signature missing from the
/// file: attr::exportRewrites, attr::exportMissing). Each case gets one
/// warning that says how to export for training.
void warnIfExportedForInference(func::FuncOp forward) {
  int64_t count = 0;
  Operation *first = nullptr;
  forward.walk([&](BatchNormInferenceOp bn) {
    auto arg = dyn_cast<BlockArgument>(bn.getMean());
    if (!arg || !forward.getArgAttr(arg.getArgNumber(), attr::param))
      return;
    if (!first)
      first = bn;
    ++count;
  });
  ModuleOp module = forward->getParentOfType<ModuleOp>();
  // What fixes it depends on the exporter: current PyTorch's dynamo exporter
  // writes inference-mode batch norms in any mode (onnxscript's translation)
  // and rewrites the graph unless told not to.
  auto exporter = module->getAttrOfType<StringAttr>(attr::exporter);
  bool dynamo = exporter && exporter.getValue() == attr::exporterTorchExport;
  const char *dynamoFix =
      "export with torch.onnx.export(..., dynamo=True, optimize=False) and a training-mode "
      "translation of aten._native_batch_norm_legit_functional (docs/training.md, \"Exporting "
      "from PyTorch\"), or let tcc.compile(module, ...) export it";
  if (auto rewrites = module->getAttrOfType<DictionaryAttr>(attr::exportRewrites)) {
    auto node = rewrites.getAs<StringAttr>("node");
    auto rule = rewrites.getAs<StringAttr>("rule");
    auto count = rewrites.getAs<IntegerAttr>("count");
    if (node && rule && count)
      emitWarning(forward.getLoc())
          << "the exporter's optimizer rewrote " << count.getInt() << " node(s) (node '"
          << node.getValue() << "': rule " << rule.getValue() << "); its rewrites change "
          << "what trains (batch norms folded into convolutions, initializers of equal values "
          << "merged, zero biases dropped, weights pre-transposed), so the step cannot train "
          << "as PyTorch does; " << dynamoFix;
  }
  if (auto missing = module->getAttrOfType<ArrayAttr>(attr::exportMissing)) {
    SmallVector<StringRef> names;
    for (Attribute a : missing.getValue().take_front(4))
      names.push_back(cast<StringAttr>(a).getValue());
    emitWarning(forward.getLoc())
        << missing.size() << " parameter(s) of the PyTorch model are no "
        << "initializer of the file ('" << llvm::join(names, "', '") << "'"
        << (missing.size() > 4 ? ", ..." : "") << "): the exporter merged, folded or "
        << "dropped them, so the step trains other tensors than PyTorch's; " << dynamoFix;
  }
  if (auto folded = module->getAttrOfType<StringAttr>(attr::foldedBatchNorm))
    emitWarning(forward.getLoc())
        << "the model was exported in eval mode: PyTorch folded batch norms into "
        << "convolutions (node '" << folded.getValue() << "' reads the folded weight), so "
        << "the step cannot train as PyTorch's model.train() does; export with "
        << "torch.onnx.export(..., training=torch.onnx.TrainingMode.TRAINING, "
        << "do_constant_folding=False)";
  if (first && dynamo)
    emitWarning(first->getLoc())
        << count << " BatchNormalization node(s) run in inference mode: PyTorch's dynamo "
        << "exporter writes batch norms in inference mode even from model.train(), so "
        << "training would normalize with the stored running statistics and never update "
        << "them (PyTorch's model.train() uses batch statistics); " << dynamoFix;
  else if (first)
    emitWarning(first->getLoc())
        << count << " BatchNormalization node(s) run in inference mode: the model was "
        << "exported in eval mode, so training would normalize with the stored running "
        << "statistics and never update them (PyTorch's model.train() uses batch statistics); "
        << "export with torch.onnx.export(..., training=torch.onnx.TrainingMode.TRAINING, "
        << "do_constant_folding=False) to train it as PyTorch does";
}

/// In eval mode (eval_step, infer) a Bernoulli draw -- the indicator of a
/// uniform draw below a threshold p (`a + (b - a) u < p`, or `p > ...`), as
/// stochastic depth and hand-written dropout export (RandomUniformLike, Less,
/// Cast) -- becomes its expectation, the probability clamp((p - a) / (b - a),
/// 0, 1). A mask scaled by 1/p, as torchvision's stochastic depth and
/// inverted dropout scale it, then multiplies by p / p = 1: the identity
/// that PyTorch's eval mode gives; an unscaled mask multiplies by p, the
/// classic dropout's eval scaling.
void useExpectedBernoulliDraws(func::FuncOp fn) {
  SmallVector<CastOp> casts;
  fn.walk([&](CastOp c) { casts.push_back(c); });
  for (CastOp c : casts) {
    auto resultType = cast<RankedTensorType>(c.getType());
    auto cmp = c.getInput().getDefiningOp<CompareOp>();
    if (!cmp || !isa<FloatType>(resultType.getElementType()))
      continue;
    RandomOp draw;
    Value p;
    switch (cmp.getPredicate()) {
    case CmpPredicate::lt:
    case CmpPredicate::le:
      draw = cmp.getLhs().getDefiningOp<RandomOp>(), p = cmp.getRhs();
      break;
    case CmpPredicate::gt:
    case CmpPredicate::ge:
      draw = cmp.getRhs().getDefiningOp<RandomOp>(), p = cmp.getLhs();
      break;
    default:
      break;
    }
    if (!draw || draw.getDistribution() != RandomDistribution::uniform)
      continue;
    auto pType = cast<RankedTensorType>(p.getType());
    if (!isa<FloatType>(pType.getElementType()))
      continue;
    double a = draw.getA().convertToDouble(), b = draw.getB().convertToDouble();
    OpBuilder builder(c);
    Location loc = c.getLoc();
    Value q = p;
    if (a != 0.0)
      q = tcc::sub(builder, loc, q, tcc::splat(builder, loc, pType, a));
    if (b - a != 1.0)
      q = tcc::div(builder, loc, q, tcc::splat(builder, loc, pType, b - a));
    q = MaxOp::create(builder, loc, q, tcc::splat(builder, loc, pType, 0.0));
    q = MinOp::create(builder, loc, q, tcc::splat(builder, loc, pType, 1.0));
    if (pType != resultType)
      q = CastOp::create(builder, loc, resultType, q);
    c.replaceAllUsesWith(q);
    c.erase();
    if (cmp->use_empty())
      cmp.erase();
    if (draw->use_empty())
      draw.erase();
  }
}

/// Random numbers outside dropout that eval mode still draws (noise, a
/// Bernoulli draw used otherwise than as a mask) have no inference form in
/// the file: the training step draws them from its generator, eval_step and
/// infer draw one fixed sample. One warning, at the first such node, says
/// so; FN is the forward function after useExpectedBernoulliDraws.
void warnAboutRandomOps(func::FuncOp fn) {
  int64_t count = 0;
  Operation *first = nullptr;
  fn.walk([&](RandomOp op) {
    if (!first)
      first = op;
    ++count;
  });
  if (first)
    emitWarning(first->getLoc())
        << count << " random op(s) that eval mode still draws (noise, not a dropout or "
        << "stochastic-depth mask): train_step draws them from its generator (--seed and the "
        << "step), eval_step and infer draw one fixed sample (seed 0, step 0); for inference as "
        << "model.eval() runs it, compile an eval-mode export";
}

using tcc::Loss;
using tcc::Optimizer;
using tcc::Precision;

/// The name of FN's parameter argument ARG_INDEX.
std::string paramName(func::FuncOp fn, unsigned argIndex) {
  return fn.getArgAttrOfType<StringAttr>(argIndex, attr::param).str();
}

/// Elementwise arithmetic on tensors of one type (a parameter's), for the
/// optimizer formulas.
struct TensorMath {
  OpBuilder &b;
  Location loc;
  RankedTensorType type;

  Value constant(double v) { return tcc::splat(b, loc, type, v); }
  /// A 0-d f32 runtime scalar (lr, step, a bias correction) broadcast to
  /// TYPE's shape and element type.
  Value full(Value scalar) {
    if (type.getElementType() != tensorType(scalar).getElementType())
      scalar = CastOp::create(b, loc, RankedTensorType::get({}, type.getElementType()), scalar);
    return BroadcastInDimOp::create(b, loc, type, scalar, b.getDenseI64ArrayAttr({}));
  }
  Value mul(Value x, Value y) { return tcc::mul(b, loc, x, y); }
  Value add(Value x, Value y) { return tcc::add(b, loc, x, y); }
  Value sub(Value x, Value y) { return tcc::sub(b, loc, x, y); }
  Value div(Value x, Value y) { return tcc::div(b, loc, x, y); }
};

struct BuildTrainStepPass : tcc::impl::BuildTrainStepPassBase<BuildTrainStepPass> {
  using Base::Base;

  /// The parsed --loss and --optimizer (set by checkOptions).
  /// --data-parallel: the gradient buckets train_step reduces.
  int64_t buckets = 0;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward = module.lookupSymbol<func::FuncOp>("forward");
    if (!forward || forward.isExternal()) {
      module.emitError("tcc-build-train-step: no @forward function");
      return signalPassFailure();
    }
    if (failed(checkOptions(module)) || failed(checkForward(forward)))
      return signalPassFailure();
    warnIfExportedForInference(forward);
    Location loc = forward.getLoc();

    // The loss function: forward's arguments + labels -> loss, dropouts
    // reading the step's RNG state.
    FailureOr<func::FuncOp> lossFn = cloneWithLoss(forward, "__tcc_loss", false);
    if (failed(lossFn))
      return signalPassFailure();
    llvm::scope_exit eraseLoss([&] { lossFn->erase(); });
    if (failed(connectDropouts(*lossFn)))
      return signalPassFailure();
    if (precision == Precision::FP16 && failed(scaleLoss(*lossFn)))
      return signalPassFailure();
    FailureOr<SmallVector<unsigned>> params = trainedParameters(*lossFn);
    if (failed(params))
      return signalPassFailure();
    FailureOr<func::FuncOp> grad =
        buildGradientFunction(*lossFn, *params, TCC_ENTRY_TRAIN_STEP);
    if (failed(grad))
      return signalPassFailure();
    if (gradAccum > 1 && failed(buildAccumulateGrad(*grad, *params, loc)))
      return signalPassFailure();
    if (failed(buildOptimizerStep(*grad, *params, loc)))
      return signalPassFailure();
    if (failed(buildEvalStep(forward)))
      return signalPassFailure();
    recordMetadata(module);
  }

  // Validation.

  /// Checks every option's range. Errors
  /// at the module's location, without the module itself attached (a bad
  /// flag is not about the IR).
  LogicalResult checkOptions(ModuleOp module) {
    Location loc = module.getLoc();
    // Written so that NaN fails every check (each comparison with NaN is
    // false), and an infinity those that need a finite value.
    struct Range {
      const char *flag;
      double value;
      bool ok;
      const char *range;
    };
    double decay = effectiveWeightDecay();
    const Range ranges[] = {
        {"--momentum", momentum, momentum >= 0 && std::isfinite(momentum), "a finite number >= 0"},
        {"--dampening", dampening, dampening >= 0 && std::isfinite(dampening),
         "a finite number >= 0"},
        {"--weight-decay", decay, decay >= 0 && std::isfinite(decay), "a finite number >= 0"},
        {"--beta1", beta1, beta1 >= 0 && beta1 < 1, "in [0, 1)"},
        {"--beta2", beta2, beta2 >= 0 && beta2 < 1, "in [0, 1)"},
        {"--eps", eps, eps > 0 && std::isfinite(eps), "a finite number > 0"},
        {"--grad-clip", gradClip, gradClip >= 0 && std::isfinite(gradClip),
         "a finite norm > 0 (0: no clipping)"},
        {"--label-smoothing", labelSmoothing, labelSmoothing >= 0 && labelSmoothing < 1,
         "in [0, 1)"},
    };
    for (const Range &r : ranges)
      if (!r.ok)
        return emitError(loc) << r.flag << " must be " << r.range << ", got " << r.value;
    if (nesterov && (momentum <= 0 || dampening != 0))
      return emitError(loc, "Nesterov momentum requires a momentum and zero dampening");
    if (labelSmoothing > 0 && loss != Loss::CrossEntropy)
      return emitError(loc, "--label-smoothing needs --loss=cross_entropy");
    if (gradAccum < 1)
      return emitError(loc, "--grad-accum must be at least 1, got ")
             << static_cast<int64_t>(gradAccum);
    if (!(bucketMb > 0) || !std::isfinite(bucketMb))
      return emitError(loc, "--bucket-mb must be a finite size > 0, got ") << bucketMb;
    if (zero != 0 && zero != 1)
      return emitError(loc, "--zero must be 0 or 1 (ZeRO stage 1: the optimizer state "
                            "sharded), got ")
             << static_cast<int64_t>(zero);
    if (zero != 0) {
      // What the sharded update does not do yet: refused, not computed wrong.
      const char *unsupported = !dataParallel        ? "without --data-parallel"
                                : skipNonFinite      ? "with --skip-nonfinite"
                                : precision == Precision::FP16 ? "with --precision=fp16"
                                                      : nullptr;
      if (unsupported)
        return emitError(loc, "--zero=1 is not supported ") << unsupported;
    }
    return success();
  }

  /// Under a 16-bit precision, marks the ops of FN after AFTER (from its
  /// start when null) up to the return tcc.keep_fp32: what was just built
  /// there (the optimizer, the gradient norm, accumulation, loss scaling)
  /// computes in f32 whatever the precision of the gradients it reads.
  /// Constants are left alone: they carry their own type.
  void keepFp32After(func::FuncOp fn, Operation *after) {
    if (!tcc::isSixteenBit(precision))
      return;
    Block &body = fn.getBody().front();
    auto it = after ? std::next(after->getIterator()) : body.begin();
    for (Operation &op : llvm::make_range(it, body.getTerminator()->getIterator()))
      if (!op.hasTrait<mlir::OpTrait::ConstantLike>())
        op.setAttr(attr::keepFp32, UnitAttr::get(op.getContext()));
  }

  /// --weight-decay, or the optimizer's default (0; AdamW 0.01) when it was
  /// left at -1. Any other value is the user's (NaN and negatives are then
  /// refused, not replaced by the default).
  double effectiveWeightDecay() const {
    if (weightDecay != -1.0)
      return weightDecay;
    return optimizer == Optimizer::AdamW ? 0.01 : 0.0;
  }

  /// Whether NAME is one of the runtime inputs the step adds.
  static bool isStepInputName(StringRef name) {
    for (const char *own : {TCC_INPUT_LR, TCC_INPUT_STEP, TCC_INPUT_RNG, TCC_INPUT_MICRO,
                            TCC_INPUT_WEIGHT_DECAY, TCC_INPUT_MOMENTUM, TCC_INPUT_BETA1,
                            TCC_INPUT_BETA2, TCC_INPUT_EPS, TCC_INPUT_GRAD_CLIP,
                            TCC_INPUT_ONE_MINUS_BETA1, TCC_INPUT_ONE_MINUS_BETA2})
      if (name == own)
        return true;
    return false;
  }

  /// FORWARD can be trained: its first output is a float tensor, and no
  /// input takes a name that the step gives its own inputs.
  LogicalResult checkForward(func::FuncOp forward) {
    // Located at the model, without the op: a user's error needs no IR dump.
    Location loc = forward.getLoc();
    if (forward.getNumResults() == 0)
      return emitError(loc, "the model has no output to train");
    auto pred = cast<RankedTensorType>(forward.getResultTypes()[0]);
    if (!isa<FloatType>(pred.getElementType()))
      return emitError(loc, "the model's first output is not a float tensor: ") << pred;
    // --loss=none takes no labels, so no input name is the labels'.
    bool takesLabels = loss != Loss::None;
    for (unsigned i = 0; i < forward.getNumArguments(); ++i)
      if (auto n = forward.getArgAttrOfType<StringAttr>(i, attr::input))
        if ((takesLabels && n.getValue() == labels) || isStepInputName(n.getValue()))
          return emitError(loc, "the model has an input named '")
                 << n.getValue() << "', a name the training step uses"
                 << (takesLabels && n.getValue() == labels ? "; choose another --labels name"
                                                           : "");
    return success();
  }

  // The loss and the gradient function's inputs.

  /// The loss of PREDICTION against LABELS (null for --loss=none).
  /// The loss of PREDICTION against LABELVALUE; with VALID (eval_step of an
  /// artifact that takes partial batches), over the first VALID samples of
  /// ROWS leading-axis rows each.
  FailureOr<Value> buildLoss(OpBuilder &b, Location loc, Value prediction, Value labelValue,
                             Value valid = {}, int64_t rows = 0) {
    switch (loss) {
    case Loss::Mse: {
      std::optional<RowMask> real;
      if (valid) {
        RankedTensorType pt = tensorType(prediction);
        Value mask = realRows(b, loc, pt, valid, rows);
        auto f32 = RankedTensorType::get({}, pt.getElementType());
        Value samples = CastOp::create(b, loc, f32, valid);
        double perSample = double(pt.getNumElements() / pt.getDimSize(0) * rows);
        real = RowMask{mask, MulOp::create(b, loc, samples, splat(b, loc, f32, perSample))};
      }
      return mseLoss(b, loc, prediction, labelValue, real);
    }
    case Loss::CrossEntropy:
      if (valid) {
        // Padded positions become ignored ones: the mean is over the rest.
        RankedTensorType yt = tensorType(labelValue);
        Value mask = realRows(b, loc, yt, valid, rows);
        Value ignored = ConstantOp::create(
            b, loc, yt,
            DenseElementsAttr::get(yt, IntegerAttr::get(yt.getElementType(), ignoreIndex)));
        labelValue = SelectOp::create(b, loc, mask, labelValue, ignored);
      }
      return crossEntropyLoss(b, loc, prediction, labelValue, ignoreIndex, labelSmoothing);
    case Loss::None:
      break;
    }
    return prediction;
  }

  /// A copy of FORWARD named NAME that also takes the labels and returns the
  /// loss first, then (KEEP_OUTPUTS) the model's outputs (all but the first
  /// with --loss=none, whose first output is the loss).
  FailureOr<func::FuncOp> cloneWithLoss(func::FuncOp forward, StringRef name, bool keepOutputs) {
    MLIRContext *ctx = &getContext();
    OpBuilder mb(ctx);
    mb.setInsertionPointAfter(forward);
    auto fn = cast<func::FuncOp>(mb.clone(*forward));
    fn.setSymName(name);
    Location loc = forward.getLoc();
    auto pred = cast<RankedTensorType>(forward.getResultTypes()[0]);
    Type labelType;
    switch (loss) {
    case Loss::Mse:
      labelType = pred;
      break;
    case Loss::CrossEntropy:
      labelType = RankedTensorType::get(pred.getShape().drop_back(), IntegerType::get(ctx, 64));
      break;
    case Loss::None:
      break;
    }
    Value labelValue;
    // Labels follow the batch as the prediction does (a partial batch pads
    // them too); eval_step then counts only the real samples.
    auto rows = forward.getResultAttrOfType<IntegerAttr>(0, attr::batchRows);
    if (!labelType || cast<RankedTensorType>(labelType).getRank() == 0)
      rows = nullptr;
    if (labelType) {
      unsigned index = fn.getNumArguments();
      SmallVector<NamedAttribute> labelAttrs = {
          mb.getNamedAttr(attr::input, mb.getStringAttr(labels))};
      if (rows)
        labelAttrs.push_back(mb.getNamedAttr(attr::batchRows, rows));
      if (failed(fn.insertArgument(index, labelType, mb.getDictionaryAttr(labelAttrs), loc)))
        return fn.erase(), failure();
      labelValue = fn.getArgument(index);
    }
    FunctionEditor e(fn);
    Value valid;
    if (keepOutputs && rows) {
      valid = e.addArgument(RankedTensorType::get({}, mb.getI64Type()), attr::input,
                            TCC_INPUT_VALID);
      if (!valid)
        return fn.erase(), failure();
    }
    func::ReturnOp ret = e.terminator();
    // Named, as the optimizer's ops are: kernels and reports say "loss".
    Location lossLoc =
        NameLoc::get(e.b.getStringAttr(std::string("loss.") + tcc::lossName(loss)), loc);
    FailureOr<Value> lossValue =
        buildLoss(e.b, lossLoc, ret.getOperand(0), labelValue, valid, rows ? rows.getInt() : 0);
    if (failed(lossValue))
      return fn.erase(), failure();
    if (tensorType(*lossValue).getNumElements() != 1) {
      forward.emitError("--loss=none: the model's first output must be the scalar loss, not ")
          << lossValue->getType();
      return fn.erase(), failure();
    }
    e.output(*lossValue, TCC_OUTPUT_LOSS);
    if (keepOutputs)
      for (unsigned i = loss == Loss::None ? 1 : 0; i < ret.getNumOperands(); ++i) {
        e.results.push_back(ret.getOperand(i));
        e.resultAttrs.push_back(forward.getResultAttrDict(i) ? forward.getResultAttrDict(i)
                                                             : mb.getDictionaryAttr({}));
      }
    e.finish();
    return fn;
  }

  /// The parameters that are not trained and why ("frozen", "running
  /// statistics", "buffer"), by name: the metadata
  /// TCC_METADATA_NOT_TRAINED_PREFIX.
  SmallVector<std::pair<std::string, std::string>> notTrained;

  /// The indices of the trained parameters of FN: float parameters, not
  /// batch-norm running statistics, not the model's buffers (tcc.buffer),
  /// not matched by a --freeze pattern. A pattern may match a buffer (not
  /// training it is what freezing asks): that counts as a match, and the
  /// buffer stays a buffer.
  FailureOr<SmallVector<unsigned>> trainedParameters(func::FuncOp fn) {
    DenseSet<unsigned> runningStats;
    fn.walk([&](BatchNormTrainingOp bn) {
      if (auto stats = bn->getAttrOfType<DenseI64ArrayAttr>(attr::runningStats))
        for (int64_t a : stats.asArrayRef())
          runningStats.insert(unsigned(a));
    });
    SmallVector<llvm::GlobPattern> patterns;
    for (const std::string &f : freeze) {
      llvm::Expected<llvm::GlobPattern> pattern = llvm::GlobPattern::create(f);
      if (!pattern) {
        fn.emitError("--freeze: bad pattern '") << f << "': " << llvm::toString(pattern.takeError());
        return failure();
      }
      patterns.push_back(std::move(*pattern));
    }
    SmallVector<bool> used(patterns.size(), false);
    SmallVector<unsigned> params;
    SmallVector<StringRef> guessed;
    for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
      auto name = fn.getArgAttrOfType<StringAttr>(i, attr::param);
      if (!name || runningStats.contains(i) ||
          !isa<FloatType>(cast<RankedTensorType>(fn.getArgument(i).getType()).getElementType()))
        continue;
      bool frozen = false;
      for (auto [k, pattern] : llvm::enumerate(patterns))
        if (pattern.match(name.getValue()))
          frozen = used[k] = true;
      if (auto buffer = fn.getArgAttrOfType<StringAttr>(i, attr::buffer)) {
        notTrained.push_back({name.str(), "buffer"});
        if (buffer.getValue() == attr::bufferByValues)
          guessed.push_back(name.getValue());
      } else if (!frozen) {
        params.push_back(i);
      } else {
        notTrained.push_back({name.str(), "frozen"});
      }
    }
    // Buffers found by their values only: the export did not say which
    // initializers are buffers, so others may be trained by mistake.
    bool one = guessed.size() == 1;
    if (!guessed.empty())
      emitWarning(fn.getLoc())
          << (one ? "initializer '" : "initializers '") << llvm::join(guessed, "', '")
          << (one ? "' holds" : "' hold")
          << " an infinity or NaN, which no trained parameter does: kept as "
          << (one ? "a buffer" : "buffers")
          << ", not trained. The model does not say which initializers are buffers "
          << "(PyTorch's TorchScript exporter writes registered buffers like parameters; "
          << "its dynamo exporter records them): name them all with --buffers=NAME,... "
          << "(which also silences this warning)";
    for (unsigned i : runningStats)
      if (auto name = fn.getArgAttrOfType<StringAttr>(i, attr::param))
        notTrained.push_back({name.str(), "running statistics"});
    llvm::sort(notTrained);
    for (auto [k, f] : llvm::enumerate(freeze))
      if (!used[k]) {
        fn.emitError("--freeze pattern '") << f << "' matches no trainable parameter";
        return failure();
      }
    if (params.empty()) {
      fn.emitError(freeze.empty() ? "the model has no float parameters to train"
                                  : "--freeze leaves no parameter to train");
      return failure();
    }
    return params;
  }

  /// Gives every dropout of FN that drops something, and every tcc.random,
  /// the step's RNG state, the runtime input `rng` = [seed, counter].
  LogicalResult connectDropouts(func::FuncOp fn) {
    SmallVector<MutableOperandRange> uses;
    fn.walk([&](Operation *op) {
      if (auto d = dyn_cast<DropoutOp>(op)) {
        if (d.getRatio().convertToDouble() > 0 && !d.getRng())
          uses.push_back(d.getRngMutable());
      } else if (auto r = dyn_cast<RandomOp>(op)) {
        if (!r.getRng())
          uses.push_back(r.getRngMutable());
      }
    });
    if (uses.empty())
      return success();
    FunctionEditor e(fn);
    Value rng = e.addArgument(RankedTensorType::get({2}, IntegerType::get(&getContext(), 64)),
                              attr::input, TCC_INPUT_RNG);
    if (!rng)
      return failure();
    for (MutableOperandRange &use : uses)
      use.assign(rng);
    return success();
  }

  RankedTensorType scalarType() {
    return RankedTensorType::get({}, Float32Type::get(&getContext()));
  }

  // Accumulation.

  /// Gradient accumulation: @accumulate_grad, a copy of GRAD, adds a
  /// micro-batch's gradient into NAME.grad_accum (micro-batch 0 overwrites).
  /// With fp16 loss scaling the gradients are those of the scaled loss, as
  /// PyTorch's GradScaler accumulates them: train_step adds its own, divides
  /// the sum by the step's scale and skips the step when any element of it
  /// is not finite (an overflow in any micro-batch carries into the sum);
  /// the loss output is unscaled.
  LogicalResult buildAccumulateGrad(func::FuncOp grad, ArrayRef<unsigned> params, Location loc) {
    RankedTensorType scalar = scalarType();
    OpBuilder mb(&getContext());
    mb.setInsertionPointAfter(grad);
    auto acc = cast<func::FuncOp>(mb.clone(*grad));
    acc.setSymName(TCC_ENTRY_ACCUMULATE_GRAD);
    FunctionEditor e(acc);
    func::ReturnOp ret = e.terminator();
    Operation *built = ret->getPrevNode();
    Value micro = e.addArgument(scalar, attr::input, TCC_INPUT_MICRO);
    if (!micro)
      return failure();
    Value loss = ret.getOperand(0);
    for (auto [k, argIndex] : llvm::enumerate(params)) {
      Value g = ret.getOperand(k + 1);
      auto gt = tensorType(g);
      std::string name = paramName(acc, argIndex) + ".grad_accum";
      Value buf = e.addArgument(gt, attr::state, name);
      if (!buf)
        return failure();
      Value m = micro;
      if (gt.getElementType() != scalar.getElementType())
        m = CastOp::create(e.b, loc, RankedTensorType::get({}, gt.getElementType()), m);
      m = BroadcastInDimOp::create(e.b, loc, gt, m, e.b.getDenseI64ArrayAttr({}));
      Value first = CompareOp::create(e.b, loc, CmpPredicate::eq, m, splat(e.b, loc, gt, 0.0));
      e.update(SelectOp::create(e.b, loc, first, g, AddOp::create(e.b, loc, buf, g)), name);
    }
    // After the accumulators, as in train_step: state sits in argument
    // order, and the scale must have train_step's slot.
    if (precision == Precision::FP16) {
      FailureOr<Value> scale = stepScale(e, loc);
      if (failed(scale))
        return failure();
      loss = unscaledLoss(e.b, loc, loss, *scale);
    }
    e.output(loss, TCC_OUTPUT_LOSS);
    updateRunningStatistics(e);
    e.finish();
    keepFp32After(acc, built);
    return success();
  }

  /// The step's gradients of PARAMS, the results after the loss; with
  /// --grad-accum K, (accumulated + own) / K.
  FailureOr<SmallVector<Value>> stepGradients(FunctionEditor &e, ArrayRef<unsigned> params,
                                              Location loc) {
    OpBuilder &sb = e.b;
    func::ReturnOp ret = e.terminator();
    SmallVector<Value> grads;
    for (auto [k, argIndex] : llvm::enumerate(params)) {
      Value g = ret.getOperand(k + 1);
      if (gradAccum > 1) {
        Value buf =
            e.addArgument(g.getType(), attr::state, paramName(e.fn, argIndex) + ".grad_accum");
        if (!buf)
          return failure();
        // Data parallel: right after the gradient, so that its bucket's
        // reduction can start where the backward completes it.
        OpBuilder::InsertionGuard guard(sb);
        if (Operation *def = g.getDefiningOp(); dataParallel && def)
          sb.setInsertionPointAfter(def);
        Value sum = AddOp::create(sb, loc, buf, g);
        g = MulOp::create(sb, loc, sum, splat(sb, loc, tensorType(g), 1.0 / double(gradAccum)));
      }
      grads.push_back(g);
    }
    return grads;
  }

  /// The optimizer's hyperparameters as 0-d f32 runtime inputs of
  /// train_step (null: not an input of this optimizer, or structurally off:
  /// no momentum buffer, no clipping). Their compile-time values become the
  /// metadata defaults (recordMetadata).
  struct Hyper {
    Value weightDecay, momentum, beta1, beta2, eps, gradClip;
    Value oneMinusBeta1, oneMinusBeta2; // written by the runtime from beta1, beta2
  };

  FailureOr<Hyper> addHyperparameters(FunctionEditor &e) {
    RankedTensorType scalar = scalarType();
    Hyper h;
    h.weightDecay = e.addArgument(scalar, attr::input, TCC_INPUT_WEIGHT_DECAY);
    if (optimizer == Optimizer::Sgd) {
      if (momentum > 0)
        h.momentum = e.addArgument(scalar, attr::input, TCC_INPUT_MOMENTUM);
    } else {
      h.beta1 = e.addArgument(scalar, attr::input, TCC_INPUT_BETA1);
      h.beta2 = e.addArgument(scalar, attr::input, TCC_INPUT_BETA2);
      h.eps = e.addArgument(scalar, attr::input, TCC_INPUT_EPS);
      h.oneMinusBeta1 = e.addArgument(scalar, attr::input, TCC_INPUT_ONE_MINUS_BETA1);
      h.oneMinusBeta2 = e.addArgument(scalar, attr::input, TCC_INPUT_ONE_MINUS_BETA2);
    }
    if (gradClip > 0)
      h.gradClip = e.addArgument(scalar, attr::input, TCC_INPUT_GRAD_CLIP);
    if (!h.weightDecay || (optimizer == Optimizer::Sgd && momentum > 0 && !h.momentum) ||
        (optimizer != Optimizer::Sgd &&
         (!h.beta1 || !h.beta2 || !h.eps || !h.oneMinusBeta1 || !h.oneMinusBeta2)) ||
        (gradClip > 0 && !h.gradClip))
      return failure();
    return h;
  }

  /// The compile-time value of every hyperparameter input, as metadata.
  void hyperparameterDefaults(SmallVectorImpl<std::pair<std::string, double>> &out) const {
    out.push_back({TCC_INPUT_WEIGHT_DECAY, effectiveWeightDecay()});
    if (optimizer == Optimizer::Sgd && momentum > 0)
      out.push_back({TCC_INPUT_MOMENTUM, momentum});
    if (optimizer != Optimizer::Sgd) {
      out.push_back({TCC_INPUT_BETA1, beta1});
      out.push_back({TCC_INPUT_BETA2, beta2});
      out.push_back({TCC_INPUT_EPS, eps});
    }
    if (gradClip > 0)
      out.push_back({TCC_INPUT_GRAD_CLIP, gradClip});
  }

  // Loss scaling (fp16), PyTorch's GradScaler in the step.

  /// The scale of the loss function under construction, until
  /// buildOptimizerStep computes it: a placeholder argument, last.
  static constexpr StringLiteral scalePlaceholder = "__tcc_loss_scale";

  /// FN's loss times a scale, the placeholder argument: the backward pass
  /// then computes the gradients of the scaled loss (fp16 gradients that
  /// would underflow to zero do not).
  LogicalResult scaleLoss(func::FuncOp fn) {
    FunctionEditor e(fn);
    Value scale = e.addArgument(scalarType(), attr::input, scalePlaceholder);
    if (!scale)
      return failure();
    func::ReturnOp ret = e.terminator();
    Value loss = ret.getOperand(0);
    Value s = scale;
    if (tensorType(loss) != tensorType(s))
      s = CastOp::create(e.b, e.loc, tensorType(loss), s);
    ret.setOperand(0, MulOp::create(e.b, e.loc, loss, s));
    return success();
  }

  struct LossScaler {
    Value scale;        ///< this step's scale (f32, 0-d)
    Value growth;       ///< finite steps since the last change
    Value loss;         ///< the unscaled loss
  };

  /// The scale of this step in place of the placeholder of E's function:
  /// the state (0 in a fresh session: the runtime input loss_scale_init
  /// then). train_step and accumulate_grad read the same state, which only
  /// train_step updates, so every micro-batch of a step has one scale.
  FailureOr<Value> stepScale(FunctionEditor &e, Location loc) {
    RankedTensorType scalar = scalarType();
    Block &body = e.fn.getBody().front();
    unsigned placeholder = 0;
    auto isPlaceholder = [&](unsigned i) {
      auto name = e.fn.getArgAttrOfType<StringAttr>(i, attr::input);
      return name && name.getValue() == scalePlaceholder;
    };
    while (placeholder < body.getNumArguments() && !isPlaceholder(placeholder))
      ++placeholder;
    Value init = e.addArgument(scalar, attr::input, TCC_INPUT_LOSS_SCALE_INIT);
    Value state = e.addArgument(scalar, attr::state, TCC_STATE_LOSS_SCALE);
    if (!init || !state)
      return failure();
    if (placeholder == body.getNumArguments())
      return e.fn.emitError("tcc-build-train-step: internal error: the loss scale placeholder "
                            "is not an argument of the gradient function");
    OpBuilder start = OpBuilder::atBlockBegin(&body);
    Value zero = splat(start, loc, scalar, 0.0);
    Value fresh = CompareOp::create(start, loc, CmpPredicate::eq, state, zero);
    Value scale = SelectOp::create(start, loc, fresh, init, state);
    body.getArgument(placeholder).replaceAllUsesWith(scale);
    if (failed(e.fn.eraseArgument(placeholder)))
      return failure();
    return scale;
  }

  /// SCALED (the loss times SCALE) as the f32 loss.
  Value unscaledLoss(OpBuilder &b, Location loc, Value scaled, Value scale) {
    if (tensorType(scaled) != scalarType())
      scaled = CastOp::create(b, loc, scalarType(), scaled);
    return DivOp::create(b, loc, scaled, scale);
  }

  /// The scale of this step (stepScale); the loss and GRADS divided by it.
  /// Exact for the powers of two that the scale takes from a power-of-two
  /// start.
  FailureOr<LossScaler> unscale(FunctionEditor &e, Value scaledLoss, MutableArrayRef<Value> grads,
                                Location loc) {
    RankedTensorType scalar = scalarType();
    FailureOr<Value> scale = stepScale(e, loc);
    Value growth = e.addArgument(scalar, attr::state, TCC_STATE_GROWTH_TRACKER);
    if (failed(scale) || !growth)
      return failure();
    OpBuilder &b = e.b;
    Value one = splat(b, loc, scalar, 1.0);
    Value inverse = DivOp::create(b, loc, one, *scale);
    Value loss = unscaledLoss(b, loc, scaledLoss, *scale);
    for (Value &g : grads) {
      TensorMath t{b, loc, tensorType(g)};
      g = t.mul(g, t.full(inverse));
    }
    return LossScaler{*scale, growth, loss};
  }

  /// Whether the step must skip its update: true (i1, 0-d) when the loss
  /// or any element of GRADS is infinite or NaN (|x| <= max is false for
  /// both). Nothing is read back to the host: the updates select the old
  /// values (FunctionEditor::updateUnlessSkipped).
  Value skipOnNonFinite(OpBuilder &b, Location loc, Value loss, ArrayRef<Value> grads) {
    RankedTensorType scalar = scalarType();
    auto nonFinite = [&](Value x) {
      auto t = tensorType(x);
      Value limit = splat(b, loc, t, double(std::numeric_limits<float>::max()));
      Value magnitude = AbsOp::create(b, loc, x);
      Value finite = CompareOp::create(b, loc, CmpPredicate::le, magnitude, limit);
      Value zero = splat(b, loc, t, 0.0);
      Value one = splat(b, loc, t, 1.0);
      Value count = SelectOp::create(b, loc, finite, zero, one);
      Value sum = sumAll(b, loc, count);
      if (tensorType(sum) != scalar)
        sum = CastOp::create(b, loc, scalar, sum);
      return sum;
    };
    Value total = nonFinite(loss);
    for (Value g : grads)
      total = AddOp::create(b, loc, total, nonFinite(g));
    Value zero = splat(b, loc, scalar, 0.0);
    return CompareOp::create(b, loc, CmpPredicate::gt, total, zero);
  }

  /// The non-finite guard (skip-nonfinite): the step skips when the runtime
  /// input skip_nonfinite is > 0 and the loss or the gradient norm is not
  /// finite (a gradient element's inf or NaN reaches the norm). With data
  /// parallelism only the norm decides: it is the same on every rank, the
  /// loss is the rank's own. Outputs skipped (1 or 0).
  void guardNonFinite(FunctionEditor &e, Value loss, Value gradNorm, Location loc) {
    OpBuilder &b = e.b;
    RankedTensorType scalar = scalarType();
    Value enabled = e.addArgument(scalar, attr::input, TCC_INPUT_SKIP_NONFINITE);
    Value watched = gradNorm;
    if (!dataParallel) {
      if (tensorType(loss) != scalar)
        loss = CastOp::create(b, loc, scalar, loss);
      // |loss| + norm: NaN and inf carry through the sum.
      watched = AddOp::create(b, loc, AbsOp::create(b, loc, loss), gradNorm);
    }
    Value limit = splat(b, loc, scalar, double(std::numeric_limits<float>::max()));
    Value zero = splat(b, loc, scalar, 0.0), one = splat(b, loc, scalar, 1.0);
    Value finite = CompareOp::create(b, loc, CmpPredicate::le, watched, limit);
    Value asked = SelectOp::create(b, loc, finite, zero, enabled);
    e.skip = CompareOp::create(b, loc, CmpPredicate::gt, asked, zero);
    e.skipStatistics = true;
    e.output(SelectOp::create(b, loc, e.skip, one, zero), TCC_OUTPUT_SKIPPED);
  }

  /// GradScaler.update with its defaults: a skipped step halves the scale,
  /// 2000 finite steps in a row double it; both reset the count. Outputs
  /// the scale this step used and whether it skipped (1 or 0).
  void updateLossScale(FunctionEditor &e, const LossScaler &s, Location loc) {
    OpBuilder &b = e.b;
    RankedTensorType scalar = scalarType();
    auto c = [&](double v) { return splat(b, loc, scalar, v); };
    Value one = c(1.0), interval = c(2000.0), growthFactor = c(2.0), backoff = c(0.5);
    Value zero = c(0.0);
    Value counted = AddOp::create(b, loc, s.growth, one);
    Value grow = CompareOp::create(b, loc, CmpPredicate::ge, counted, interval);
    Value grown = MulOp::create(b, loc, s.scale, growthFactor);
    Value kept = SelectOp::create(b, loc, grow, grown, s.scale);
    Value halved = MulOp::create(b, loc, s.scale, backoff);
    Value scale = SelectOp::create(b, loc, e.skip, halved, kept);
    Value growth = SelectOp::create(b, loc, grow, zero, counted);
    growth = SelectOp::create(b, loc, e.skip, zero, growth);
    e.update(scale, TCC_STATE_LOSS_SCALE);
    e.update(growth, TCC_STATE_GROWTH_TRACKER);
    e.output(s.scale, TCC_OUTPUT_LOSS_SCALE);
    e.output(SelectOp::create(b, loc, e.skip, one, zero), TCC_OUTPUT_SKIPPED);
  }

  // Data parallelism.

  /// --data-parallel: replaces each of GRADS by its mean over the ranks,
  /// through one tcc.all_reduce per bucket of --bucket-mb MB. The buckets
  /// follow the order in which the backward completes the gradients (their
  /// definitions in FN's body: the last layer's first), and each reduction
  /// sits right after its bucket's last gradient, so that the rest of the
  /// backward computes while it runs (tcc-schedule-collectives). A bucket
  /// holds one element type.
  void averageOverRanks(func::FuncOp fn, MutableArrayRef<Value> grads, Location loc) {
    Block &body = fn.getBody().front();
    DenseMap<Operation *, int64_t> position;
    int64_t n = 0;
    for (Operation &op : body)
      position[&op] = n++;
    auto where = [&](Value v) -> int64_t {
      Operation *def = v.getDefiningOp();
      return def && def->getBlock() == &body ? position.lookup(def) : -1;
    };
    SmallVector<unsigned> order(grads.size());
    std::iota(order.begin(), order.end(), 0u);
    llvm::stable_sort(order, [&](unsigned a, unsigned b) { return where(grads[a]) < where(grads[b]); });

    const double capacity = bucketMb * 1e6;
    auto flush = [&](SmallVectorImpl<unsigned> &members) {
      if (members.empty())
        return;
      Value last = grads[members.back()];
      OpBuilder b(&getContext());
      if (Operation *def = last.getDefiningOp(); def && def->getBlock() == &body)
        b.setInsertionPointAfter(def);
      else
        b.setInsertionPointToStart(&body);
      SmallVector<Value> operands;
      for (unsigned k : members)
        operands.push_back(grads[k]);
      auto reduce = AllReduceOp::create(b, loc, ValueRange(operands).getTypes(), operands,
                                        b.getI64IntegerAttr(buckets++));
      // The average is f32 whatever the gradients' precision.
      if (tcc::isSixteenBit(precision))
        reduce->setAttr(attr::keepFp32, b.getUnitAttr());
      for (auto [k, r] : llvm::zip(members, reduce.getResults()))
        grads[k] = r;
      members.clear();
    };
    SmallVector<unsigned> members;
    double bytes = 0;
    Type element;
    for (unsigned k : order) {
      auto t = tensorType(grads[k]);
      double size = double(t.getNumElements()) * double(t.getElementTypeBitWidth() / 8);
      if (!members.empty() && (bytes + size > capacity || t.getElementType() != element)) {
        flush(members);
        bytes = 0;
      }
      members.push_back(k);
      bytes += size;
      element = t.getElementType();
    }
    flush(members);
  }

  // Clipping.

  /// The global gradient norm (an output, for the metrics) and, with
  /// --grad-clip, PyTorch's clip_grad_norm_: every gradient times
  /// min(1, max_norm / (norm + 1e-6)). Computed in the step: nothing is
  /// read back to the host before the update. Returns the norm.
  Value clipGradients(OpBuilder &sb, Location loc, MutableArrayRef<Value> grads, Value clip) {
    RankedTensorType scalar = scalarType();
    Value sumSq;
    for (Value g : grads) {
      Value sq = sumAll(sb, loc, MulOp::create(sb, loc, g, g));
      if (tensorType(sq).getElementType() != scalar.getElementType())
        sq = CastOp::create(sb, loc, scalar, sq);
      sumSq = sumSq ? Value(AddOp::create(sb, loc, sumSq, sq)) : sq;
    }
    Value gradNorm = SqrtOp::create(sb, loc, sumSq);
    if (clip) {
      Value coef = DivOp::create(sb, loc, clip,
                                 AddOp::create(sb, loc, gradNorm, splat(sb, loc, scalar, 1e-6)));
      coef = MinOp::create(sb, loc, coef, splat(sb, loc, scalar, 1.0));
      for (Value &g : grads) {
        auto gt = tensorType(g);
        Value cf = coef;
        if (gt.getElementType() != scalar.getElementType())
          cf = CastOp::create(sb, loc, RankedTensorType::get({}, gt.getElementType()), cf);
        g = MulOp::create(sb, loc, g, BroadcastInDimOp::create(sb, loc, gt, cf, sb.getDenseI64ArrayAttr({})));
      }
    }
    return gradNorm;
  }

  // The optimizers: each new value is written over its parameter / buffer.

  /// @train_step from the gradient function STEP: the runtime inputs lr
  /// (and step), the loss, every new parameter / buffer value (marked
  /// tcc.update = NAME, in no particular order), the gradient norm.
  LogicalResult buildOptimizerStep(func::FuncOp step, ArrayRef<unsigned> params, Location loc) {
    if (zero != 0)
      return buildZeroStep(step, params, loc);
    RankedTensorType scalar = scalarType();
    FunctionEditor e(step);
    OpBuilder &sb = e.b;
    func::ReturnOp stepRet = e.terminator();
    Operation *built = stepRet->getPrevNode();
    Value lr = e.addArgument(scalar, attr::input, TCC_INPUT_LR);
    bool adam = optimizer != Optimizer::Sgd;
    bool needsStep = adam || (momentum > 0 && dampening != 0);
    Value stepCount = needsStep ? e.addArgument(scalar, attr::input, TCC_INPUT_STEP) : Value();
    if (!lr || (needsStep && !stepCount))
      return failure();
    FailureOr<Hyper> hyper = addHyperparameters(e);
    if (failed(hyper))
      return failure();
    FailureOr<SmallVector<Value>> grads = stepGradients(e, params, loc);
    if (failed(grads))
      return failure();
    if (dataParallel)
      averageOverRanks(step, *grads, loc);
    Value lossValue = stepRet.getOperand(0);
    LossScaler scaler;
    if (precision == Precision::FP16) {
      FailureOr<LossScaler> s = unscale(e, lossValue, *grads, loc);
      if (failed(s))
        return failure();
      scaler = *s;
      lossValue = scaler.loss;
      e.skip = skipOnNonFinite(sb, loc, lossValue, *grads);
    }
    e.output(lossValue, TCC_OUTPUT_LOSS);
    Value gradNorm =
        clipGradients(sb, NameLoc::get(sb.getStringAttr("grad_norm"), loc), *grads, hyper->gradClip);
    if (skipNonFinite && !e.skip)
      guardNonFinite(e, lossValue, gradNorm, loc);
    // Adam's bias corrections 1 - beta^t: once per step, as 0-d values (a
    // pow per parameter element would cost millions of libm calls).
    Value biasCorrection1, biasCorrection2;
    if (adam) {
      Value one = splat(sb, loc, scalar, 1.0);
      biasCorrection1 =
          SubOp::create(sb, loc, one, PowOp::create(sb, loc, hyper->beta1, stepCount));
      biasCorrection2 =
          SubOp::create(sb, loc, one, PowOp::create(sb, loc, hyper->beta2, stepCount));
    }
    Block &stepBody = step.getBody().front();
    for (auto [k, argIndex] : llvm::enumerate(params)) {
      Value p = stepBody.getArgument(argIndex);
      std::string name = paramName(step, argIndex);
      // The update's ops carry the parameter's name, so that its kernels,
      // memory reports and messages say whose update they are.
      Location named = NameLoc::get(
          sb.getStringAttr(std::string(tcc::optimizerName(optimizer)) + "." + name), loc);
      TensorMath t{sb, named, tensorType(p)};
      LogicalResult updated =
          adam ? adamUpdate(e, t, p, (*grads)[k], name, lr, *hyper, biasCorrection1,
                            biasCorrection2)
               : sgdUpdate(e, t, p, (*grads)[k], name, lr, *hyper, stepCount);
      if (failed(updated))
        return failure();
    }
    updateRunningStatistics(e);
    e.output(gradNorm, TCC_OUTPUT_GRAD_NORM);
    if (scaler.scale)
      updateLossScale(e, scaler, loc);
    e.finish();
    keepFp32After(step, built);
    return success();
  }

  /// While building @zero_update: the optimizer reads and writes one flat
  /// chunk, its state as inputs and outputs named "zero" + suffix, the
  /// parameter as TCC_ZERO_PARAM; otherwise state tensors NAME + suffix
  /// and updates in place.
  bool zeroChunk = false;

  /// The optimizer state tensor NAME + SUFFIX (".exp_avg") of TYPE.
  Value optimizerState(FunctionEditor &e, RankedTensorType type, StringRef name,
                       StringRef suffix) {
    if (zeroChunk)
      return e.addArgument(type, attr::input, "zero" + suffix);
    return e.addArgument(type, attr::state, name + suffix);
  }
  /// V, the new value of NAME + SUFFIX (the parameter itself when SUFFIX is
  /// empty), whose old value is OLD.
  void writeState(FunctionEditor &e, Value v, Value old, StringRef name, StringRef suffix) {
    if (zeroChunk)
      return e.output(v, suffix.empty() ? std::string(TCC_ZERO_PARAM) : ("zero" + suffix).str());
    e.updateUnlessSkipped(v, old, name + suffix);
  }

  /// PyTorch SGD: g += wd p; buf = mu buf + (1 - damp) g (buf = g at the
  /// first step); g = nesterov ? g + mu buf : buf; p -= lr g.
  /// The hyperparameters are runtime scalars (Hyper); the weight decay term
  /// is always there (0 adds 0).
  LogicalResult sgdUpdate(FunctionEditor &e, TensorMath &t, Value p, Value g, StringRef name,
                          Value lr, const Hyper &h, Value stepCount) {
    Value lrFull = t.full(lr);
    g = t.add(g, t.mul(t.full(h.weightDecay), p));
    if (h.momentum) {
      Value buf = optimizerState(e, t.type, name, ".momentum_buffer");
      if (!buf)
        return failure();
      Value kept = t.mul(t.full(h.momentum), buf);
      Value next = t.add(kept, t.mul(t.constant(1 - dampening), g));
      if (dampening != 0) {
        Value steps = t.full(stepCount);
        Value first = CompareOp::create(t.b, t.loc, CmpPredicate::eq, steps, t.constant(1.0));
        next = SelectOp::create(t.b, t.loc, first, g, next);
      }
      writeState(e, next, buf, name, ".momentum_buffer");
      g = nesterov ? t.add(g, t.mul(t.full(h.momentum), next)) : next;
    }
    writeState(e, t.sub(p, t.mul(lrFull, g)), p, name, "");
    return success();
  }

  /// PyTorch Adam / AdamW: (Adam) g += wd p; (AdamW) p *= 1 - lr wd;
  /// m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
  /// p -= lr / (1 - b1^t) * m / (sqrt(v / (1 - b2^t)) + eps).
  /// beta1, beta2, 1 - beta1, 1 - beta2, eps and the decay are runtime
  /// scalars (Hyper).
  LogicalResult adamUpdate(FunctionEditor &e, TensorMath &t, Value p, Value g, StringRef name,
                           Value lr, const Hyper &h, Value biasCorrection1,
                           Value biasCorrection2) {
    Value lrFull = t.full(lr);
    Value decay = t.full(h.weightDecay);
    Value m = optimizerState(e, t.type, name, ".exp_avg");
    Value v = optimizerState(e, t.type, name, ".exp_avg_sq");
    if (!m || !v)
      return failure();
    Value param = p;
    if (optimizer == Optimizer::Adam)
      g = t.add(g, t.mul(decay, p));
    if (optimizer == Optimizer::AdamW) {
      Value one = t.constant(1.0);
      param = t.mul(p, t.sub(one, t.mul(lrFull, decay)));
    }
    Value b1 = t.full(h.beta1), b2 = t.full(h.beta2);
    Value mKept = t.mul(b1, m);
    Value m1 = t.add(mKept, t.mul(t.full(h.oneMinusBeta1), g));
    Value vKept = t.mul(b2, v);
    Value gSquared = t.mul(g, g);
    Value v1 = t.add(vKept, t.mul(t.full(h.oneMinusBeta2), gSquared));
    Value bc1 = t.full(biasCorrection1);
    Value bc2 = t.full(biasCorrection2);
    Value root = SqrtOp::create(t.b, t.loc, t.div(v1, bc2));
    Value denom = t.add(root, t.full(h.eps));
    Value stepSize = t.div(lrFull, bc1);
    Value newP = t.sub(param, t.mul(stepSize, t.div(m1, denom)));
    writeState(e, newP, p, name, "");
    writeState(e, m1, m, name, ".exp_avg");
    writeState(e, v1, v, name, ".exp_avg_sq");
    return success();
  }

  // ZeRO stage 1 (--zero=1).

  /// The flat view of the trained parameters: C chunks of S elements (S a
  /// multiple of 16: 64-byte aligned chunks), at least N in all.
  static constexpr int64_t kZeroChunks = 64;
  int64_t zeroChunkSize = 0;
  SmallVector<std::string> zeroParams;

  /// @train_step for --zero=1: the loss, the running statistics, and the
  /// flat local gradient (the mean over the micro-batches, as the
  /// all-reduce path averages before reducing) written to the state tensor
  /// zero.grads, zero-padded; no reduction and no update, which the runtime
  /// does per chunk (@zero_update). grad_norm is a placeholder the runtime
  /// overwrites with the norm of the averaged gradient. The optimizer's
  /// inputs stay train_step's, as the trainer sets them for it.
  LogicalResult buildZeroStep(func::FuncOp step, ArrayRef<unsigned> params, Location loc) {
    RankedTensorType scalar = scalarType();
    FunctionEditor e(step);
    OpBuilder &sb = e.b;
    func::ReturnOp stepRet = e.terminator();
    Operation *built = stepRet->getPrevNode();
    Value lr = e.addArgument(scalar, attr::input, TCC_INPUT_LR);
    bool adam = optimizer != Optimizer::Sgd;
    bool needsStep = adam || (momentum > 0 && dampening != 0);
    Value stepCount = needsStep ? e.addArgument(scalar, attr::input, TCC_INPUT_STEP) : Value();
    if (!lr || (needsStep && !stepCount) || failed(addHyperparameters(e)))
      return failure();
    FailureOr<SmallVector<Value>> grads = stepGradients(e, params, loc);
    if (failed(grads))
      return failure();
    e.output(stepRet.getOperand(0), TCC_OUTPUT_LOSS);
    Block &body = step.getBody().front();
    SmallVector<Value> pieces;
    int64_t n = 0;
    for (auto [k, argIndex] : llvm::enumerate(params)) {
      auto pt = tensorType(body.getArgument(argIndex));
      if (!pt.getElementType().isF32())
        return step.emitError("--zero=1: parameter '")
               << paramName(step, argIndex) << "' is " << pt.getElementType()
               << "; the flat parameter vector is f32";
      zeroParams.push_back(paramName(step, argIndex));
      auto flat = RankedTensorType::get({pt.getNumElements()}, pt.getElementType());
      pieces.push_back(ReshapeOp::create(sb, loc, flat, (*grads)[k]));
      n += pt.getNumElements();
    }
    int64_t perChunk = (n + kZeroChunks - 1) / kZeroChunks;
    zeroChunkSize = (perChunk + 15) / 16 * 16;
    int64_t total = kZeroChunks * zeroChunkSize;
    auto f32 = Float32Type::get(&getContext());
    if (total > n)
      pieces.push_back(splat(sb, loc, RankedTensorType::get({total - n}, f32), 0.0));
    auto flatType = RankedTensorType::get({total}, f32);
    Value flat = pieces.size() == 1 ? pieces.front()
                                    : Value(ConcatOp::create(sb, loc, flatType, pieces,
                                                             sb.getI64IntegerAttr(0)));
    if (!e.addArgument(flatType, attr::state, TCC_STATE_ZERO_GRADS))
      return failure();
    e.update(flat, TCC_STATE_ZERO_GRADS);
    updateRunningStatistics(e);
    e.output(splat(sb, loc, scalar, 0.0), TCC_OUTPUT_GRAD_NORM);
    e.finish();
    // The flat gradient is f32 whatever the precision of the backward.
    keepFp32After(step, built);
    return buildZeroUpdate(step, loc);
  }

  /// @zero_update: the optimizer of train_step on one chunk of the flat
  /// parameters (the same formulas, elementwise, so that a chunk's values
  /// are those the unsharded update computes), and the chunk's sum of
  /// squared gradients for the norm.
  LogicalResult buildZeroUpdate(func::FuncOp step, Location loc) {
    OpBuilder mb(&getContext());
    mb.setInsertionPointAfter(step);
    RankedTensorType scalar = scalarType();
    auto chunk = RankedTensorType::get({zeroChunkSize}, Float32Type::get(&getContext()));
    auto fn = func::FuncOp::create(mb, loc, TCC_ENTRY_ZERO_UPDATE,
                                   FunctionType::get(&getContext(), {}, {}));
    {
      OpBuilder bb = OpBuilder::atBlockEnd(fn.addEntryBlock());
      func::ReturnOp::create(bb, loc);
    }
    FunctionEditor e(fn);
    Value p = e.addArgument(chunk, attr::input, TCC_ZERO_PARAM);
    Value g = e.addArgument(chunk, attr::input, TCC_ZERO_GRAD);
    Value lr = e.addArgument(scalar, attr::input, TCC_INPUT_LR);
    bool adam = optimizer != Optimizer::Sgd;
    bool needsStep = adam || (momentum > 0 && dampening != 0);
    Value stepCount = needsStep ? e.addArgument(scalar, attr::input, TCC_INPUT_STEP) : Value();
    if (!p || !g || !lr || (needsStep && !stepCount))
      return failure();
    FailureOr<Hyper> hyper = addHyperparameters(e);
    if (failed(hyper))
      return failure();
    OpBuilder &b = e.b;
    Value biasCorrection1, biasCorrection2;
    if (adam) {
      Value one = splat(b, loc, scalar, 1.0);
      biasCorrection1 = SubOp::create(b, loc, one, PowOp::create(b, loc, hyper->beta1, stepCount));
      biasCorrection2 = SubOp::create(b, loc, one, PowOp::create(b, loc, hyper->beta2, stepCount));
    }
    TensorMath t{b, loc, chunk};
    zeroChunk = true;
    llvm::scope_exit restore([&] { zeroChunk = false; });
    LogicalResult updated =
        adam ? adamUpdate(e, t, p, g, "zero", lr, *hyper, biasCorrection1, biasCorrection2)
             : sgdUpdate(e, t, p, g, "zero", lr, *hyper, stepCount);
    if (failed(updated))
      return failure();
    e.output(sumAll(b, loc, MulOp::create(b, loc, g, g)), TCC_ZERO_GRAD_SQ);
    e.finish();
    keepFp32After(fn, nullptr);
    return success();
  }

  // The eval step and the metadata.

  /// @eval_step and @forward (the infer entry) run in eval mode: batch
  /// norms on their running statistics, Bernoulli masks at their
  /// expectation.
  LogicalResult buildEvalStep(func::FuncOp forward) {
    useExpectedBernoulliDraws(forward);
    warnAboutRandomOps(forward);
    FailureOr<func::FuncOp> eval = cloneWithLoss(forward, TCC_ENTRY_EVAL_STEP, true);
    if (failed(eval))
      return failure();
    useRunningStatistics(*eval);
    useRunningStatistics(forward);
    return success();
  }

  /// What the runtime needs to drive the step.
  void recordMetadata(ModuleOp module) {
    MLIRContext *ctx = &getContext();
    auto entry = [&](StringRef key, StringRef value) {
      return NamedAttribute(StringAttr::get(ctx, key), StringAttr::get(ctx, value));
    };
    SmallVector<NamedAttribute> metadata = {
        entry(TCC_METADATA_LOSS, tcc::lossName(loss)),
        entry(TCC_METADATA_OPTIMIZER, tcc::optimizerName(optimizer)),
        entry(TCC_METADATA_GRAD_ACCUM, std::to_string(gradAccum))};
    for (const auto &[name, why] : notTrained)
      metadata.push_back(entry(std::string(TCC_METADATA_NOT_TRAINED_PREFIX) + name, why));
    if (loss != Loss::None)
      metadata.push_back(entry(TCC_METADATA_LABELS, labels));
    if (loss == Loss::CrossEntropy)
      metadata.push_back(entry(TCC_METADATA_IGNORE_INDEX, std::to_string(ignoreIndex)));
    if (dataParallel)
      metadata.push_back(entry(TCC_METADATA_DATA_PARALLEL, std::to_string(buckets)));
    if (zero != 0) {
      metadata.push_back(entry(TCC_METADATA_ZERO, std::to_string(kZeroChunks) + "," +
                                                      std::to_string(zeroChunkSize)));
      metadata.push_back(entry(TCC_METADATA_ZERO_PARAMS, llvm::join(zeroParams, ";")));
      StringRef state = optimizer != Optimizer::Sgd ? ".exp_avg;.exp_avg_sq"
                        : momentum > 0                  ? ".momentum_buffer"
                                                        : "";
      metadata.push_back(entry(TCC_METADATA_ZERO_STATE, state));
    }
    SmallVector<std::pair<std::string, double>> defaults;
    hyperparameterDefaults(defaults);
    if (skipNonFinite && precision != Precision::FP16)
      defaults.push_back({TCC_INPUT_SKIP_NONFINITE, 0.0});
    for (const auto &[name, value] : defaults) {
      char text[32];
      std::snprintf(text, sizeof text, "%.17g", value);
      metadata.push_back(entry(std::string(TCC_METADATA_DEFAULT_PREFIX) + name, text));
    }
    NamedAttrList merged;
    if (auto existing = module->getAttrOfType<DictionaryAttr>(attr::metadata))
      merged.append(existing.getValue());
    for (NamedAttribute a : metadata)
      merged.set(a.getName(), a.getValue());
    module->setAttr(attr::metadata, merged.getDictionary(ctx));
  }
};

} // namespace
