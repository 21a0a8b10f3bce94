//===- BuildTrainStep.cpp - forward + loss + backward + update ------------===//
//
// The training step is built on the tcc dialect from three pieces: the
// forward function, a loss written in tcc ops, and the gradient function that
// tcc-autodiff derives from both. Everything after (fusion, the memory plan,
// code generation) treats the step like any other function.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/autodiff/Autodiff.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace tcc {
#define GEN_PASS_DEF_BUILDTRAINSTEPPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;
using namespace tcc;

namespace {

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

Value splat(OpBuilder &b, Location loc, RankedTensorType type, double v) {
  return ConstantOp::create(b, loc, type,
                            DenseElementsAttr::get(type, FloatAttr::get(type.getElementType(), v)));
}

/// Sum of X over all axes, as a 0-d tensor.
Value sumAll(OpBuilder &b, Location loc, Value x) {
  auto axes = llvm::to_vector(llvm::seq<int64_t>(0, tensorType(x).getRank()));
  return ReduceSumOp::create(b, loc, x, b.getDenseI64ArrayAttr(axes), b.getBoolAttr(false));
}

/// mean((pred - labels)^2) over every element.
FailureOr<Value> mseLoss(OpBuilder &b, Location loc, Value pred, Value labels) {
  if (tensorType(labels) != tensorType(pred))
    return emitError(loc, "--loss=mse: the labels must have the prediction's type ")
               << pred.getType() << ", not " << labels.getType(),
           failure();
  Value d = SubOp::create(b, loc, pred, labels);
  Value sq = MulOp::create(b, loc, d, d);
  int64_t n = tensorType(pred).getNumElements();
  Value s = sumAll(b, loc, sq);
  return Value(MulOp::create(b, loc, s, splat(b, loc, tensorType(s), 1.0 / double(n))));
}

/// -mean over label positions of log_softmax(logits)[label], with the
/// one-hot selection written as compare + select (no gradient flows into the
/// labels).
FailureOr<Value> crossEntropyLoss(OpBuilder &b, Location loc, Value logits, Value labels) {
  RankedTensorType lt = tensorType(logits), yt = tensorType(labels);
  int64_t rank = lt.getRank();
  if (rank < 1 || yt.getRank() != rank - 1 || !isa<IntegerType>(yt.getElementType()) ||
      yt.getShape() != lt.getShape().drop_back())
    return emitError(loc, "--loss=cross_entropy: the labels must be integers shaped like the "
                          "logits ")
               << logits.getType() << " without the class axis, not " << labels.getType(),
           failure();
  Value logp = LogSoftmaxOp::create(b, loc, lt, logits, b.getI64IntegerAttr(rank - 1));
  Value hit = buildLabelMatch(b, loc, labels, lt, rank - 1);
  Value picked = SelectOp::create(b, loc, hit, logp, splat(b, loc, lt, 0.0));
  Value total = sumAll(b, loc, picked);
  int64_t positions = yt.getNumElements();
  return Value(MulOp::create(b, loc, total, splat(b, loc, tensorType(total), -1.0 / double(positions))));
}

struct BuildTrainStepPass : tcc::impl::BuildTrainStepPassBase<BuildTrainStepPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto forward = module.lookupSymbol<func::FuncOp>("forward");
    if (!forward || forward.isExternal()) {
      module.emitError("tcc-build-train-step: no @forward function");
      return signalPassFailure();
    }
    if (loss != "mse" && loss != "cross_entropy" && loss != "none") {
      module.emitError("unknown loss '") << loss << "' (mse, cross_entropy or none)";
      return signalPassFailure();
    }
    if (optimizer != "sgd" && optimizer != "adam" && optimizer != "adamw") {
      module.emitError("unknown optimizer '") << optimizer << "' (sgd, adam or adamw)";
      return signalPassFailure();
    }
    double decay = weightDecay >= 0 ? weightDecay : optimizer == "adamw" ? 0.01 : 0.0;
    if (momentum < 0 || dampening < 0 || decay < 0 || beta1 < 0 || beta1 >= 1 || beta2 < 0 ||
        beta2 >= 1 || eps <= 0) {
      module.emitError("optimizer hyperparameters out of range (momentum, dampening, weight "
                       "decay >= 0; 0 <= beta < 1; eps > 0)");
      return signalPassFailure();
    }
    if (nesterov && (momentum <= 0 || dampening != 0)) {
      module.emitError("Nesterov momentum requires a momentum and zero dampening");
      return signalPassFailure();
    }
    if (forward.getNumResults() == 0) {
      forward.emitError("the model has no output to train");
      return signalPassFailure();
    }
    Location loc = forward.getLoc();
    auto pred = cast<RankedTensorType>(forward.getResultTypes()[0]);
    if (!isa<FloatType>(pred.getElementType())) {
      forward.emitError("the model's first output is not a float tensor: ") << pred;
      return signalPassFailure();
    }
    for (unsigned i = 0; i < forward.getNumArguments(); ++i)
      if (auto n = forward.getArgAttrOfType<StringAttr>(i, "tcc.input"))
        if (n.getValue() == labels || n.getValue() == "lr") {
          forward.emitError("the model already has an input named '") << n.getValue()
              << "'; choose another --labels name";
          return signalPassFailure();
        }

    // The loss function: forward's arguments + labels -> loss.
    OpBuilder mb(ctx);
    mb.setInsertionPointAfter(forward);
    auto lossFn = cast<func::FuncOp>(mb.clone(*forward));
    lossFn.setSymName("__tcc_loss");
    Block &body = lossFn.getBody().front();
    Type labelType;
    if (loss == "mse")
      labelType = pred;
    else if (loss == "cross_entropy")
      labelType = RankedTensorType::get(pred.getShape().drop_back(), IntegerType::get(ctx, 64));
    unsigned labelIndex = lossFn.getNumArguments();
    if (labelType) {
      if (failed(lossFn.insertArgument(labelIndex, labelType,
                                       mb.getDictionaryAttr(mb.getNamedAttr(
                                           "tcc.input", mb.getStringAttr(labels))),
                                       loc)))
        return signalPassFailure();
    }
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    OpBuilder b(ret);
    Value prediction = ret.getOperand(0);
    FailureOr<Value> lossValue =
        loss == "mse"             ? mseLoss(b, loc, prediction, body.getArgument(labelIndex))
        : loss == "cross_entropy" ? crossEntropyLoss(b, loc, prediction, body.getArgument(labelIndex))
                                  : FailureOr<Value>(prediction);
    if (failed(lossValue)) {
      lossFn.erase();
      return signalPassFailure();
    }
    if (tensorType(*lossValue).getNumElements() != 1) {
      forward.emitError("--loss=none: the model's first output must be the scalar loss, not ")
          << lossValue->getType();
      lossFn.erase();
      return signalPassFailure();
    }
    func::ReturnOp::create(b, ret.getLoc(), ValueRange{*lossValue});
    ret.erase();
    lossFn.setFunctionType(FunctionType::get(ctx, lossFn.getArgumentTypes(), {lossValue->getType()}));
    DictionaryAttr lossAttrs =
        mb.getDictionaryAttr(mb.getNamedAttr("tcc.output", mb.getStringAttr("loss")));
    lossFn.setAllResultAttrs(ArrayRef<DictionaryAttr>{lossAttrs});

    // Batch norms in training mode with running statistics among the
    // parameters: those are not trained but updated by the step.
    DenseSet<unsigned> runningStats;
    lossFn.walk([&](BatchNormTrainingOp bn) {
      if (auto stats = bn->getAttrOfType<DenseI64ArrayAttr>("tcc.running_stats"))
        for (int64_t a : stats.asArrayRef())
          runningStats.insert(unsigned(a));
    });
    SmallVector<unsigned> params;
    for (unsigned i = 0; i < lossFn.getNumArguments(); ++i)
      if (lossFn.getArgAttr(i, "tcc.param") && !runningStats.contains(i) &&
          isa<FloatType>(cast<RankedTensorType>(lossFn.getArgument(i).getType()).getElementType()))
        params.push_back(i);
    if (params.empty()) {
      forward.emitError("the model has no float parameters to train");
      lossFn.erase();
      return signalPassFailure();
    }
    FailureOr<func::FuncOp> grad = buildGradientFunction(lossFn, params, "train_step");
    lossFn.erase();
    if (failed(grad))
      return signalPassFailure();

    // The optimizer: each new value is written over its parameter / buffer.
    func::FuncOp step = *grad;
    auto scalarType = RankedTensorType::get({}, Float32Type::get(ctx));
    // A new last argument: a runtime input (tcc.input) or a state buffer
    // (tcc.state), named NAME.
    auto addArgument = [&](Type type, StringRef kind, const Twine &name) -> Value {
      unsigned index = step.getNumArguments();
      if (failed(step.insertArgument(
              index, type, mb.getDictionaryAttr(mb.getNamedAttr(kind, mb.getStringAttr(name))),
              loc)))
        return Value();
      return step.getArgument(index);
    };
    Value lr = addArgument(scalarType, "tcc.input", "lr");
    bool adam = optimizer != "sgd";
    bool needsStep = adam || (momentum > 0 && dampening != 0);
    Value stepCount = needsStep ? addArgument(scalarType, "tcc.input", "step") : Value();
    if (!lr || (needsStep && !stepCount))
      return signalPassFailure();
    Block &stepBody = step.getBody().front();
    auto stepRet = cast<func::ReturnOp>(stepBody.getTerminator());
    OpBuilder sb(stepRet);
    SmallVector<Value> results = {stepRet.getOperand(0)};
    SmallVector<DictionaryAttr> resultAttrs = {
        mb.getDictionaryAttr(mb.getNamedAttr("tcc.output", mb.getStringAttr("loss")))};
    // Results: the loss, every new parameter / buffer value (marked
    // tcc.update = NAME, in no particular order), the gradient norm.
    auto update = [&](Value v, const Twine &name) {
      results.push_back(v);
      resultAttrs.push_back(
          mb.getDictionaryAttr(mb.getNamedAttr("tcc.update", mb.getStringAttr(name.str()))));
    };
    // The global gradient norm (an output, for the metrics) and, with
    // --grad-clip, PyTorch's clip_grad_norm_: every gradient times
    // min(1, max_norm / (norm + 1e-6)). Computed in the step: nothing is
    // read back to the host before the update.
    SmallVector<Value> grads;
    Value sumSq;
    for (unsigned k = 0; k < params.size(); ++k) {
      Value g = stepRet.getOperand(k + 1);
      grads.push_back(g);
      Value sq = sumAll(sb, loc, MulOp::create(sb, loc, g, g));
      if (cast<RankedTensorType>(sq.getType()).getElementType() != scalarType.getElementType())
        sq = CastOp::create(sb, loc, scalarType, sq);
      sumSq = sumSq ? Value(AddOp::create(sb, loc, sumSq, sq)) : sq;
    }
    Value gradNorm = SqrtOp::create(sb, loc, sumSq);
    if (gradClip > 0) {
      Value coef = DivOp::create(sb, loc, splat(sb, loc, scalarType, gradClip),
                                 AddOp::create(sb, loc, gradNorm, splat(sb, loc, scalarType, 1e-6)));
      coef = MinOp::create(sb, loc, coef, splat(sb, loc, scalarType, 1.0));
      for (Value &g : grads) {
        auto gt = tensorType(g);
        Value c = coef;
        if (gt.getElementType() != scalarType.getElementType())
          c = CastOp::create(sb, loc, RankedTensorType::get({}, gt.getElementType()), c);
        g = MulOp::create(sb, loc, g, BroadcastInDimOp::create(sb, loc, gt, c, sb.getDenseI64ArrayAttr({})));
      }
    }
    for (auto [k, argIndex] : llvm::enumerate(params)) {
      Value p = stepBody.getArgument(argIndex);
      Value g = grads[k];
      auto pt = tensorType(p);
      std::string name = step.getArgAttrOfType<StringAttr>(argIndex, "tcc.param").str();
      // A runtime scalar (lr, step) broadcast to P's shape and type.
      auto full = [&](Value scalar) -> Value {
        if (pt.getElementType() != scalarType.getElementType())
          scalar = CastOp::create(sb, loc, RankedTensorType::get({}, pt.getElementType()), scalar);
        return BroadcastInDimOp::create(sb, loc, pt, scalar, sb.getDenseI64ArrayAttr({}));
      };
      auto c = [&](double v) { return splat(sb, loc, pt, v); };
      auto mul = [&](Value a, Value b) -> Value { return MulOp::create(sb, loc, a, b); };
      auto add = [&](Value a, Value b) -> Value { return AddOp::create(sb, loc, a, b); };
      auto sub = [&](Value a, Value b) -> Value { return SubOp::create(sb, loc, a, b); };
      Value lrFull = full(lr);
      if (!adam) {
        // PyTorch SGD: g += wd p; buf = mu buf + (1 - damp) g (buf = g at
        // the first step); g = nesterov ? g + mu buf : buf; p -= lr g.
        if (decay > 0)
          g = add(g, mul(c(decay), p));
        if (momentum > 0) {
          Value buf = addArgument(pt, "tcc.state", name + ".momentum_buffer");
          if (!buf)
            return signalPassFailure();
          Value next = add(mul(c(momentum), buf), mul(c(1 - dampening), g));
          if (dampening != 0) {
            Value first = CompareOp::create(sb, loc, CmpPredicate::eq, full(stepCount), c(1.0));
            next = SelectOp::create(sb, loc, first, g, next);
          }
          update(next, name + ".momentum_buffer");
          g = nesterov ? add(g, mul(c(momentum), next)) : next;
        }
        update(sub(p, mul(lrFull, g)), name);
        continue;
      }
      // PyTorch Adam / AdamW: (Adam) g += wd p; (AdamW) p *= 1 - lr wd;
      // m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
      // p -= lr / (1 - b1^t) * m / (sqrt(v / (1 - b2^t)) + eps).
      Value m = addArgument(pt, "tcc.state", name + ".exp_avg");
      Value v = addArgument(pt, "tcc.state", name + ".exp_avg_sq");
      if (!m || !v)
        return signalPassFailure();
      Value param = p;
      if (decay > 0 && optimizer == "adam")
        g = add(g, mul(c(decay), p));
      if (decay > 0 && optimizer == "adamw")
        param = mul(p, sub(c(1.0), mul(lrFull, c(decay))));
      Value m1 = add(mul(c(beta1), m), mul(c(1 - beta1), g));
      Value v1 = add(mul(c(beta2), v), mul(c(1 - beta2), mul(g, g)));
      Value t = full(stepCount);
      Value bc1 = sub(c(1.0), PowOp::create(sb, loc, c(beta1), t));
      Value bc2 = sub(c(1.0), PowOp::create(sb, loc, c(beta2), t));
      Value denom = add(SqrtOp::create(sb, loc, DivOp::create(sb, loc, v1, bc2)), c(eps));
      Value stepSize = DivOp::create(sb, loc, lrFull, bc1);
      Value newP = sub(param, mul(stepSize, DivOp::create(sb, loc, m1, denom)));
      update(newP, name);
      update(m1, name + ".exp_avg");
      update(v1, name + ".exp_avg_sq");
    }
    // Running statistics, as PyTorch updates them: r = m r + (1 - m) batch,
    // with the unbiased batch variance (ONNX's momentum m = 1 - PyTorch's).
    SmallVector<BatchNormTrainingOp> norms;
    step.walk([&](BatchNormTrainingOp bn) {
      if (bn->hasAttr("tcc.running_stats"))
        norms.push_back(bn);
    });
    for (BatchNormTrainingOp bn : norms) {
      ArrayRef<int64_t> stats = bn->getAttrOfType<DenseI64ArrayAttr>("tcc.running_stats").asArrayRef();
      double m = bn->getAttrOfType<FloatAttr>("tcc.momentum").getValueAsDouble();
      RankedTensorType xt = tensorType(bn.getInput());
      int64_t n = xt.getNumElements() / xt.getDimSize(1);
      Value batchStats[2] = {bn.getBatchMean(), bn.getBatchVariance()};
      for (int k = 0; k < 2; ++k) {
        Value running = stepBody.getArgument(unsigned(stats[k]));
        auto rt = tensorType(running);
        Value stat = batchStats[k];
        if (k == 1 && n > 1)
          stat = MulOp::create(sb, loc, stat, splat(sb, loc, rt, double(n) / double(n - 1)));
        Value next = AddOp::create(sb, loc, MulOp::create(sb, loc, running, splat(sb, loc, rt, m)),
                                   MulOp::create(sb, loc, stat, splat(sb, loc, rt, 1 - m)));
        update(next, step.getArgAttrOfType<StringAttr>(unsigned(stats[k]), "tcc.param").getValue());
      }
    }
    results.push_back(gradNorm);
    resultAttrs.push_back(
        mb.getDictionaryAttr(mb.getNamedAttr("tcc.output", mb.getStringAttr("grad_norm"))));
    func::ReturnOp::create(sb, stepRet.getLoc(), results);
    stepRet.erase();
    SmallVector<Type> types;
    for (Value v : results)
      types.push_back(v.getType());
    step.setFunctionType(FunctionType::get(ctx, step.getArgumentTypes(), types));
    step.setAllResultAttrs(resultAttrs);

    // The inference entry normalizes with the running statistics (PyTorch's
    // eval mode) instead of the batch's.
    SmallVector<BatchNormTrainingOp> forwardNorms;
    forward.walk([&](BatchNormTrainingOp bn) {
      if (bn->hasAttr("tcc.running_stats") && bn.getBatchMean().use_empty() &&
          bn.getBatchVariance().use_empty())
        forwardNorms.push_back(bn);
    });
    for (BatchNormTrainingOp bn : forwardNorms) {
      ArrayRef<int64_t> stats = bn->getAttrOfType<DenseI64ArrayAttr>("tcc.running_stats").asArrayRef();
      OpBuilder fb(bn);
      Value y = BatchNormInferenceOp::create(
          fb, bn.getLoc(), bn.getResult().getType(), bn.getInput(), bn.getScale(), bn.getBias(),
          forward.getArgument(unsigned(stats[0])), forward.getArgument(unsigned(stats[1])),
          bn.getEpsilonAttr());
      bn.getResult().replaceAllUsesWith(y);
      bn.erase();
    }
  }
};

} // namespace
