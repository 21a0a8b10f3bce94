//===- Lower.cpp - the checked graph to the tcc dialect -------------------===//
//
// One tcc op per graph node, built with the op's ODS builder and located at
// the node's source position (FileLineColLoc), so that a later pass's error
// points into the .tcc file. Sema has checked everything; the module is
// verified anyway, and a verifier failure is an internal error of the
// frontend, reported at the offending op's DSL line.
//
//===----------------------------------------------------------------------===//

#include "frontend/dsl/Lower.h"

#include "dialects/TccNames.h"
#include "dialects/TccOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace tcc::dsl;

Type tcc::dsl::elementType(MLIRContext *ctx, DType t) {
  switch (t) {
  case DType::F32: return Float32Type::get(ctx);
  case DType::F64: return Float64Type::get(ctx);
  case DType::F16: return Float16Type::get(ctx);
  case DType::BF16: return BFloat16Type::get(ctx);
  case DType::I64: return IntegerType::get(ctx, 64);
  case DType::I32: return IntegerType::get(ctx, 32);
  case DType::I1: return IntegerType::get(ctx, 1);
  }
  return {};
}

namespace {

class Lowering {
public:
  Lowering(const Graph &graph, Diagnostics &diags)
      : graph(graph), diags(diags), ctx(diags.getContext()), b(ctx) {}
  OwningOpRef<ModuleOp> run(llvm::StringRef functionName);

private:
  RankedTensorType type(const tcc::dsl::TensorType &t) {
    return RankedTensorType::get(t.shape, elementType(ctx, t.dtype));
  }
  Value operand(const Node &n, unsigned i) { return values[n.operands[i]]; }
  Value constant(const Node &n, Location loc);
  Value elementwise(const Node &n, Location loc);
  Value structural(const Node &n, Location loc);
  Value nn(const Node &n, Location loc);
  Value lower(const Node &n);

  const Graph &graph;
  Diagnostics &diags;
  MLIRContext *ctx;
  OpBuilder b;
  std::vector<Value> values;
  Block *body = nullptr;
};

Value Lowering::constant(const Node &n, Location loc) {
  RankedTensorType t = type(n.type);
  Type et = t.getElementType();
  auto attrOf = [&](double v) -> Attribute {
    if (isa<FloatType>(et))
      return b.getFloatAttr(et, v);
    return b.getIntegerAttr(et, int64_t(v));
  };
  DenseElementsAttr value;
  if (n.values.size() == 1) {
    value = DenseElementsAttr::get(t, attrOf(n.values[0]));
  } else if (et.isInteger(64)) {
    std::vector<int64_t> ints(n.values.begin(), n.values.end());
    value = DenseElementsAttr::get(t, llvm::ArrayRef<int64_t>(ints));
  } else {
    llvm::SmallVector<Attribute> attrs;
    for (double v : n.values)
      attrs.push_back(attrOf(v));
    value = DenseElementsAttr::get(t, attrs);
  }
  return tcc::ConstantOp::create(b, loc, t, value);
}

Value Lowering::elementwise(const Node &n, Location loc) {
  RankedTensorType t = type(n.type);
  Value x = operand(n, 0);
  if (n.kind == NodeKind::Unary) {
    using Make = Value (*)(OpBuilder &, Location, Type, Value);
#define TCC_UNARY(NAME, OP)                                                                        \
  .Case(NAME, +[](OpBuilder &b, Location l, Type t, Value v) -> Value {                            \
    return tcc::OP::create(b, l, t, v);                                                            \
  })
    Make make = llvm::StringSwitch<Make>(n.op)
        TCC_UNARY("relu", ReluOp) TCC_UNARY("sigmoid", SigmoidOp) TCC_UNARY("tanh", TanhOp)
        TCC_UNARY("exp", ExpOp) TCC_UNARY("log", LogOp) TCC_UNARY("sqrt", SqrtOp)
        TCC_UNARY("rsqrt", RsqrtOp) TCC_UNARY("abs", AbsOp) TCC_UNARY("erf", ErfOp)
        TCC_UNARY("sin", SinOp) TCC_UNARY("cos", CosOp) TCC_UNARY("softplus", SoftplusOp)
        TCC_UNARY("floor", FloorOp) TCC_UNARY("ceil", CeilOp) TCC_UNARY("round", RoundOp)
        TCC_UNARY("sign", SignOp) TCC_UNARY("reciprocal", ReciprocalOp)
        TCC_UNARY("neg", NegOp) TCC_UNARY("not", NotOp)
        .Default(nullptr);
#undef TCC_UNARY
    return make ? make(b, loc, t, x) : Value();
  }
  if (n.kind == NodeKind::Binary) {
    Value y = operand(n, 1);
    using Make = Value (*)(OpBuilder &, Location, Type, Value, Value);
#define TCC_BINARY(NAME, OP)                                                                       \
  .Case(NAME, +[](OpBuilder &b, Location l, Type t, Value x, Value y) -> Value {                   \
    return tcc::OP::create(b, l, t, x, y);                                                         \
  })
    Make make = llvm::StringSwitch<Make>(n.op)
        TCC_BINARY("add", AddOp) TCC_BINARY("sub", SubOp) TCC_BINARY("mul", MulOp)
        TCC_BINARY("div", DivOp) TCC_BINARY("pow", PowOp) TCC_BINARY("max", MaxOp)
        TCC_BINARY("min", MinOp) TCC_BINARY("and", AndOp) TCC_BINARY("or", OrOp)
        .Default(nullptr);
#undef TCC_BINARY
    return make ? make(b, loc, t, x, y) : Value();
  }
  if (n.kind == NodeKind::Compare) {
    auto pred = llvm::StringSwitch<tcc::CmpPredicate>(n.op)
                    .Case("eq", tcc::CmpPredicate::eq)
                    .Case("ne", tcc::CmpPredicate::ne)
                    .Case("lt", tcc::CmpPredicate::lt)
                    .Case("le", tcc::CmpPredicate::le)
                    .Case("gt", tcc::CmpPredicate::gt)
                    .Default(tcc::CmpPredicate::ge);
    return tcc::CompareOp::create(b, loc, t, pred, x, operand(n, 1));
  }
  switch (n.kind) {
  case NodeKind::Select:
    return tcc::SelectOp::create(b, loc, t, x, operand(n, 1), operand(n, 2));
  case NodeKind::Gelu:
    return tcc::GeluOp::create(b, loc, t, x, n.flag);
  case NodeKind::ParamUnary:
    if (n.op == "elu")
      return tcc::EluOp::create(b, loc, t, x, b.getF64FloatAttr(n.f));
    return tcc::LeakyReluOp::create(b, loc, t, x, b.getF64FloatAttr(n.f));
  case NodeKind::Clamp:
    return tcc::ClampOp::create(b, loc, t, x, n.a[0] ? b.getF64FloatAttr(n.f) : FloatAttr(),
                                n.a[1] ? b.getF64FloatAttr(n.g) : FloatAttr());
  case NodeKind::Cast:
    return tcc::CastOp::create(b, loc, t, x);
  default:
    return Value();
  }
}

Value Lowering::structural(const Node &n, Location loc) {
  RankedTensorType t = type(n.type);
  switch (n.kind) {
  case NodeKind::Broadcast:
    return tcc::BroadcastInDimOp::create(b, loc, t, operand(n, 0), n.a);
  case NodeKind::Reshape:
    return tcc::ReshapeOp::create(b, loc, t, operand(n, 0));
  case NodeKind::Transpose:
    return tcc::TransposeOp::create(b, loc, t, operand(n, 0), n.a);
  case NodeKind::Concat: {
    llvm::SmallVector<Value> inputs;
    for (int id : n.operands)
      inputs.push_back(values[id]);
    return tcc::ConcatOp::create(b, loc, t, inputs, uint64_t(n.i));
  }
  case NodeKind::Slice:
    return tcc::SliceOp::create(b, loc, t, operand(n, 0), n.a, n.b);
  case NodeKind::Gather:
    return tcc::GatherOp::create(b, loc, t, operand(n, 0), operand(n, 1), uint64_t(n.i));
  case NodeKind::Reduce: {
    Value x = operand(n, 0);
    if (n.op == "sum")
      return tcc::ReduceSumOp::create(b, loc, t, x, n.a, n.flag);
    if (n.op == "mean")
      return tcc::ReduceMeanOp::create(b, loc, t, x, n.a, n.flag);
    if (n.op == "max")
      return tcc::ReduceMaxOp::create(b, loc, t, x, n.a, n.flag);
    if (n.op == "min")
      return tcc::ReduceMinOp::create(b, loc, t, x, n.a, n.flag);
    return tcc::ReduceProdOp::create(b, loc, t, x, n.a, n.flag);
  }
  case NodeKind::ArgReduce:
    if (n.op == "argmax")
      return tcc::ArgMaxOp::create(b, loc, t, operand(n, 0), uint64_t(n.i), n.flag);
    return tcc::ArgMinOp::create(b, loc, t, operand(n, 0), uint64_t(n.i), n.flag);
  case NodeKind::Matmul:
    return tcc::MatmulOp::create(b, loc, t, operand(n, 0), operand(n, 1));
  default:
    return Value();
  }
}

Value Lowering::nn(const Node &n, Location loc) {
  RankedTensorType t = type(n.type);
  switch (n.kind) {
  case NodeKind::Conv:
    return tcc::ConvOp::create(b, loc, t, operand(n, 0), operand(n, 1), n.a, n.b, n.c, n.d,
                               uint64_t(n.i));
  case NodeKind::Pool: {
    llvm::SmallVector<int64_t, 4> dilations(n.a.size(), 1);
    if (n.op == "max")
      return tcc::MaxPoolOp::create(b, loc, t, operand(n, 0), n.a, n.b, dilations, n.c, n.d);
    return tcc::AvgPoolOp::create(b, loc, t, operand(n, 0), n.a, n.b, dilations, n.c, n.d,
                                  false, n.flag);
  }
  case NodeKind::Softmax:
    if (n.op == "log_softmax")
      return tcc::LogSoftmaxOp::create(b, loc, t, operand(n, 0), uint64_t(n.i));
    return tcc::SoftmaxOp::create(b, loc, t, operand(n, 0), uint64_t(n.i));
  case NodeKind::LayerNorm: {
    llvm::SmallVector<int64_t, 4> stats(n.type.shape);
    for (size_t d = size_t(n.i); d < stats.size(); ++d)
      stats[d] = 1;
    auto statsType = RankedTensorType::get(stats, t.getElementType());
    Value bias = n.operands.size() > 2 ? operand(n, 2) : Value();
    auto op = tcc::LayerNormOp::create(b, loc, t, statsType, statsType, operand(n, 0),
                                       operand(n, 1), bias, b.getI64IntegerAttr(n.i),
                                       b.getF64FloatAttr(n.f));
    return op.getResult();
  }
  case NodeKind::BatchNorm: {
    auto stats = cast<RankedTensorType>(operand(n, 1).getType());
    auto op = tcc::BatchNormTrainingOp::create(b, loc, t, stats, stats, operand(n, 0),
                                               operand(n, 1), operand(n, 2),
                                               b.getF64FloatAttr(n.f));
    // The running statistics are parameters: the training step updates them
    // and the inference entry normalizes with them (tcc-build-train-step).
    auto argNumber = [&](unsigned i) {
      return int64_t(cast<BlockArgument>(operand(n, i)).getArgNumber());
    };
    op->setAttr(tcc::attr::runningStats, b.getDenseI64ArrayAttr({argNumber(3), argNumber(4)}));
    op->setAttr(tcc::attr::momentum, b.getF64FloatAttr(n.g));
    return op.getResult();
  }
  case NodeKind::Dropout: {
    auto mask = RankedTensorType::get(n.type.shape, b.getI1Type());
    auto op = tcc::DropoutOp::create(b, loc, t, mask, operand(n, 0), Value(),
                                     b.getF64FloatAttr(n.f), b.getI64IntegerAttr(n.i));
    return op.getResult();
  }
  default:
    return Value();
  }
}

Value Lowering::lower(const Node &n) {
  Location loc = diags.loc(n.pos);
  switch (n.kind) {
  case NodeKind::Input:
    return body->getArgument(unsigned(n.index));
  case NodeKind::Param:
    return body->getArgument(unsigned(graph.inputs.size() + n.index));
  case NodeKind::Constant:
    return constant(n, loc);
  default:
    break;
  }
  if (Value v = elementwise(n, loc))
    return v;
  if (Value v = structural(n, loc))
    return v;
  return nn(n, loc);
}

OwningOpRef<ModuleOp> Lowering::run(llvm::StringRef functionName) {
  ctx->loadDialect<tcc::TccDialect, func::FuncDialect>();
  Location fileLoc = diags.loc(Pos{1, 1});
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  if (!graph.modelName.empty())
    module->setSymNameAttr(StringAttr::get(ctx, graph.modelName));
  b.setInsertionPointToEnd(module->getBody());
  llvm::SmallVector<Type> argTypes;
  for (const InputInfo &in : graph.inputs)
    argTypes.push_back(type(in.type));
  for (const ParamInfo &p : graph.params)
    argTypes.push_back(type(p.type));
  llvm::SmallVector<Type> resultTypes;
  for (const OutputInfo &o : graph.outputs)
    resultTypes.push_back(type(graph.nodes[o.node].type));
  auto func = func::FuncOp::create(b, fileLoc, functionName,
                                   FunctionType::get(ctx, argTypes, resultTypes));
  body = func.addEntryBlock();
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    body->getArgument(unsigned(i)).setLoc(diags.loc(graph.inputs[i].pos));
    func.setArgAttr(unsigned(i), tcc::attr::input, b.getStringAttr(graph.inputs[i].name));
  }
  for (size_t i = 0; i < graph.params.size(); ++i) {
    unsigned arg = unsigned(graph.inputs.size() + i);
    body->getArgument(arg).setLoc(diags.loc(graph.params[i].pos));
    func.setArgAttr(arg, tcc::attr::param, b.getStringAttr(graph.params[i].name));
  }
  b.setInsertionPointToEnd(body);
  values.reserve(graph.nodes.size());
  for (const Node &n : graph.nodes) {
    Value v = lower(n);
    if (!v) {
      diags.error(n.pos) << "internal error: no lowering for this operation";
      return nullptr;
    }
    values.push_back(v);
  }
  llvm::SmallVector<Value> results;
  for (const OutputInfo &o : graph.outputs)
    results.push_back(values[o.node]);
  func::ReturnOp::create(b, diags.loc(graph.outputs.empty() ? Pos{1, 1} : graph.outputs.back().pos),
                         results);
  for (size_t i = 0; i < graph.outputs.size(); ++i)
    func.setResultAttr(unsigned(i), tcc::attr::output, b.getStringAttr(graph.outputs[i].name));
  if (failed(mlir::verify(*module)))
    return nullptr;
  return module;
}

} // namespace

OwningOpRef<ModuleOp> tcc::dsl::lowerGraph(const Graph &graph, Diagnostics &diags,
                                           llvm::StringRef functionName) {
  return Lowering(graph, diags).run(functionName);
}
