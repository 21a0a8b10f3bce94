//===- DialectExport.cpp - a tcc dialect function as an ONNX model --------===//
//
// One walk over the function body, one or more ONNX nodes per tcc op. The
// mappings invert the importer's (frontend/onnx/Import*.cpp): tcc's
// broadcasting is explicit (broadcast_in_dim becomes Reshape + Expand), its
// pads are split low/high (ONNX: all begins, then all ends), a slice is
// start + stride with the count in the result type (ONNX: starts, ends,
// steps), and ops opset 17 lacks (gelu, rsqrt, ne) are composed. Every value
// that is not a parameter (constants, shapes, axes) is a Constant node, so
// that importing the model again treats exactly the parameters as trainable.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/DialectExport.h"

#include "dialects/TccNames.h"
#include "dialects/TccOps.h"
#include "runtime/checkpoint/safetensors.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FileSystem.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <onnx/onnx_pb.h>
#include <set>

using namespace mlir;

namespace {

constexpr int64_t kOpset = 17;
// IR version 8 goes with opset 17 and is what onnx 1.12's checker (Debian)
// and every onnxruntime since 1.12 accept.
constexpr int64_t kIrVersion = 8;

/// The ONNX element type of an MLIR one, or UNDEFINED.
int32_t onnxType(Type t) {
  if (t.isF32())
    return onnx::TensorProto::FLOAT;
  if (t.isF64())
    return onnx::TensorProto::DOUBLE;
  if (t.isF16())
    return onnx::TensorProto::FLOAT16;
  if (t.isBF16())
    return onnx::TensorProto::BFLOAT16;
  if (auto i = dyn_cast<IntegerType>(t)) {
    bool u = i.isUnsigned();
    switch (i.getWidth()) {
    case 1: return onnx::TensorProto::BOOL;
    case 8: return u ? onnx::TensorProto::UINT8 : onnx::TensorProto::INT8;
    case 16: return u ? onnx::TensorProto::UINT16 : onnx::TensorProto::INT16;
    case 32: return u ? onnx::TensorProto::UINT32 : onnx::TensorProto::INT32;
    case 64: return u ? onnx::TensorProto::UINT64 : onnx::TensorProto::INT64;
    }
  }
  return onnx::TensorProto::UNDEFINED;
}

/// The safetensors dtype of an MLIR element type, or -1.
int32_t safetensorsType(Type t) {
  switch (onnxType(t)) {
  case onnx::TensorProto::FLOAT: return TCC_DTYPE_F32;
  case onnx::TensorProto::DOUBLE: return TCC_DTYPE_F64;
  case onnx::TensorProto::FLOAT16: return TCC_DTYPE_F16;
  case onnx::TensorProto::BFLOAT16: return TCC_DTYPE_BF16;
  case onnx::TensorProto::INT8: return TCC_DTYPE_I8;
  case onnx::TensorProto::INT16: return TCC_DTYPE_I16;
  case onnx::TensorProto::INT32: return TCC_DTYPE_I32;
  case onnx::TensorProto::INT64: return TCC_DTYPE_I64;
  case onnx::TensorProto::UINT8: return TCC_DTYPE_U8;
  case onnx::TensorProto::BOOL: return TCC_DTYPE_BOOL;
  default: return -1;
  }
}

RankedTensorType tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

/// The raw little-endian bytes of ATTR's elements, one byte per i1 (ONNX's
/// and safetensors' layout; MLIR packs i1 into bits).
std::string rawBytes(DenseElementsAttr attr) {
  Type et = attr.getElementType();
  std::string bytes;
  auto append = [&](uint64_t bits, unsigned width) {
    for (unsigned b = 0; b < width / 8; ++b)
      bytes.push_back(char((bits >> (8 * b)) & 0xff));
  };
  if (auto ft = dyn_cast<FloatType>(et)) {
    for (const APFloat &v : attr.getValues<APFloat>())
      append(v.bitcastToAPInt().getZExtValue(), ft.getWidth());
  } else {
    unsigned width = cast<IntegerType>(et).getWidth();
    for (const APInt &v : attr.getValues<APInt>())
      append(v.getZExtValue(), width == 1 ? 8 : width);
  }
  return bytes;
}

/// The ONNX graph under construction and the names of the values in it.
class Writer {
public:
  Writer(func::FuncOp fn, onnx::GraphProto &graph, tcc::DialectExportSummary &summary)
      : fn(fn), graph(graph), summary(summary) {}

  LogicalResult arguments(const tcc::rt::SafetensorsReader &weights, const std::string &path);
  void nameResults();
  LogicalResult body();
  void outputs();

private:
  LogicalResult op(Operation *op);
  // Each writes OP when it is one of its kind, else returns nothing.
  std::optional<LogicalResult> elementwise(Operation *op);
  std::optional<LogicalResult> structural(Operation *op);
  std::optional<LogicalResult> nn(Operation *op);
  std::optional<LogicalResult> norm(Operation *op);
  LogicalResult broadcast(tcc::BroadcastInDimOp op);
  LogicalResult constant(tcc::ConstantOp op);

  /// A new value name based on HINT that no value of the graph has.
  std::string fresh(StringRef hint = "t");
  /// The name of V: its graph name once defined (or pre-assigned output name).
  std::string name(Value v);
  onnx::NodeProto &node(StringRef type, ArrayRef<std::string> inputs,
                        ArrayRef<std::string> outputs);
  /// A one-output node; the output is V's name, or a fresh one without V.
  std::string node1(StringRef type, ArrayRef<std::string> inputs, Value v = {});
  std::string int64s(ArrayRef<int64_t> values, bool scalar = false);
  /// A scalar of element type ET (for Mul, Clip, Pad's value).
  std::string scalar(double value, Type et);
  std::string tensorConstant(const onnx::TensorProto &t, Value v = {});

  func::FuncOp fn;
  onnx::GraphProto &graph;
  tcc::DialectExportSummary &summary;
  llvm::DenseMap<Value, std::string> names;
  std::set<std::string> used;
  int counter = 0;
  int nodeCounter = 0;
};

void setInts(onnx::NodeProto &n, const char *name, ArrayRef<int64_t> values) {
  onnx::AttributeProto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values)
    a->add_ints(v);
}

void setInt(onnx::NodeProto &n, const char *name, int64_t value) {
  onnx::AttributeProto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

void setFloat(onnx::NodeProto &n, const char *name, double value) {
  onnx::AttributeProto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(float(value));
}

void setTensor(onnx::NodeProto &n, const char *name, const onnx::TensorProto &t) {
  onnx::AttributeProto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = t;
}

/// ONNX pads: every dimension's begin, then every dimension's end.
SmallVector<int64_t> onnxPads(ArrayRef<int64_t> low, ArrayRef<int64_t> high) {
  SmallVector<int64_t> pads(low);
  pads.append(high.begin(), high.end());
  return pads;
}

void setValueInfo(onnx::ValueInfoProto &info, const std::string &name, RankedTensorType t) {
  info.set_name(name);
  onnx::TypeProto_Tensor *tt = info.mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnxType(t.getElementType()));
  onnx::TensorShapeProto *shape = tt->mutable_shape();
  for (int64_t d : t.getShape())
    shape->add_dim()->set_dim_value(d);
}

std::string Writer::fresh(StringRef hint) {
  std::string n;
  do
    n = hint.str() + std::to_string(counter++);
  while (used.count(n));
  used.insert(n);
  return n;
}

std::string Writer::name(Value v) {
  auto it = names.find(v);
  if (it != names.end())
    return it->second;
  return names[v] = fresh();
}

onnx::NodeProto &Writer::node(StringRef type, ArrayRef<std::string> inputs,
                              ArrayRef<std::string> outputs) {
  onnx::NodeProto &n = *graph.add_node();
  n.set_op_type(type.str());
  n.set_name(type.str() + "_" + std::to_string(nodeCounter++));
  for (const std::string &i : inputs)
    n.add_input(i);
  for (const std::string &o : outputs)
    n.add_output(o);
  ++summary.nodes;
  return n;
}

std::string Writer::node1(StringRef type, ArrayRef<std::string> inputs, Value v) {
  std::string out = v ? name(v) : fresh();
  node(type, inputs, {out});
  return out;
}

std::string Writer::tensorConstant(const onnx::TensorProto &t, Value v) {
  std::string out = v ? name(v) : fresh("c");
  setTensor(node("Constant", {}, {out}), "value", t);
  return out;
}

std::string Writer::int64s(ArrayRef<int64_t> values, bool scalar) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::INT64);
  if (!scalar)
    t.add_dims(int64_t(values.size()));
  for (int64_t v : values)
    t.add_int64_data(v);
  return tensorConstant(t);
}

std::string Writer::scalar(double value, Type et) {
  auto t = RankedTensorType::get({}, et);
  DenseElementsAttr attr =
      isa<FloatType>(et)
          ? DenseElementsAttr::get(t, FloatAttr::get(et, value))
          : DenseElementsAttr::get(t, IntegerAttr::get(et, APInt(et.getIntOrFloatBitWidth(),
                                                                 uint64_t(int64_t(value)), true)));
  onnx::TensorProto p;
  p.set_data_type(onnxType(et));
  p.set_raw_data(rawBytes(attr));
  return tensorConstant(p);
}

LogicalResult Writer::arguments(const tcc::rt::SafetensorsReader &weights,
                                const std::string &path) {
  bool checkpoint = false;
  if (auto it = weights.metadata().find("tcc.kind"); it != weights.metadata().end())
    checkpoint = it->second == "checkpoint";
  llvm::StringMap<bool> params;
  for (BlockArgument arg : fn.getArguments()) {
    unsigned i = arg.getArgNumber();
    RankedTensorType t = tensorType(arg);
    Location loc = arg.getLoc();
    if (onnxType(t.getElementType()) == onnx::TensorProto::UNDEFINED)
      return emitError(loc) << "argument " << i << " has element type " << t.getElementType()
                            << ", which ONNX has not";
    if (auto input = fn.getArgAttrOfType<StringAttr>(i, tcc::attr::input)) {
      names[arg] = input.str();
      used.insert(input.str());
      setValueInfo(*graph.add_input(), input.str(), t);
      continue;
    }
    auto param = fn.getArgAttrOfType<StringAttr>(i, tcc::attr::param);
    if (!param)
      return emitError(loc) << "argument " << i << " is neither an input nor a parameter";
    std::string pname = param.str();
    const tcc::rt::SafetensorsTensor *w = weights.find(pname);
    if (!w)
      return emitError(loc) << "parameter '" << pname << "' is not in " << path;
    if (w->dtype != safetensorsType(t.getElementType()))
      return emitError(loc) << "parameter '" << pname << "' is " << t.getElementType()
                            << ", but " << path << " holds it as "
                            << tcc::rt::safetensorsDtypeName(w->dtype);
    if (ArrayRef<int64_t>(w->shape) != t.getShape())
      return emitError(loc) << "parameter '" << pname << "' has another shape in " << path;
    onnx::TensorProto &init = *graph.add_initializer();
    init.set_name(pname);
    init.set_data_type(onnxType(t.getElementType()));
    for (int64_t d : t.getShape())
      init.add_dims(d);
    init.set_raw_data(w->data, w->size);
    names[arg] = pname;
    used.insert(pname);
    params[pname] = true;
    ++summary.initializers;
  }
  for (const tcc::rt::SafetensorsTensor &w : weights.tensors()) {
    size_t dot = w.name.rfind('.');
    // A checkpoint also holds optimizer state ("NAME.exp_avg", ...).
    if (params.count(w.name) ||
        (checkpoint && dot != std::string::npos && params.count(w.name.substr(0, dot))))
      continue;
    return emitError(fn.getLoc()) << path << ": tensor '" << w.name
                                  << "' is not a parameter of the model";
  }
  return success();
}

/// The results of the ops that the function returns take the output names,
/// so that the graph ends without Identity nodes where it can.
void Writer::nameResults() {
  auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    auto out = fn.getResultAttrOfType<StringAttr>(unsigned(i), tcc::attr::output);
    std::string n = out ? out.str() : "output" + std::to_string(i);
    if (used.count(n) || isa<BlockArgument>(v) || names.count(v))
      continue;
    names[v] = n;
    used.insert(n);
  }
}

void Writer::outputs() {
  auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  std::set<std::string> outs;
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    auto out = fn.getResultAttrOfType<StringAttr>(unsigned(i), tcc::attr::output);
    std::string want = out ? out.str() : "output" + std::to_string(i);
    std::string have = name(v);
    // A result that is an argument, or returned twice, needs a node of its own.
    if (have != want || outs.count(have) || isa<BlockArgument>(v)) {
      if (used.count(want) && want != have)
        want = fresh(want + "_");
      used.insert(want);
      node("Identity", {have}, {want});
      have = want;
    }
    outs.insert(have);
    setValueInfo(*graph.add_output(), have, tensorType(v));
  }
}

LogicalResult Writer::body() {
  for (Operation &o : fn.getBody().front().without_terminator())
    if (failed(op(&o)))
      return failure();
  return success();
}

LogicalResult Writer::op(Operation *op) {
  if (std::optional<LogicalResult> r = elementwise(op))
    return *r;
  if (std::optional<LogicalResult> r = structural(op))
    return *r;
  if (std::optional<LogicalResult> r = nn(op))
    return *r;
  if (std::optional<LogicalResult> r = norm(op))
    return *r;
  return op->emitError() << "'" << op->getName() << "' has no ONNX form in tcc export";
}


/// The ONNX op of a tcc op that maps 1:1 without attributes, or "".
StringRef plainOnnxOp(StringRef tccName) {
  static const llvm::StringMap<StringRef> table = {
      {"tcc.neg", "Neg"},         {"tcc.abs", "Abs"},         {"tcc.sign", "Sign"},
      {"tcc.exp", "Exp"},         {"tcc.log", "Log"},         {"tcc.sqrt", "Sqrt"},
      {"tcc.reciprocal", "Reciprocal"}, {"tcc.tanh", "Tanh"}, {"tcc.sigmoid", "Sigmoid"},
      {"tcc.relu", "Relu"},       {"tcc.erf", "Erf"},         {"tcc.softplus", "Softplus"},
      {"tcc.sin", "Sin"},         {"tcc.cos", "Cos"},         {"tcc.floor", "Floor"},
      {"tcc.tan", "Tan"},         {"tcc.asin", "Asin"},       {"tcc.acos", "Acos"},
      {"tcc.atan", "Atan"},       {"tcc.sinh", "Sinh"},       {"tcc.cosh", "Cosh"},
      {"tcc.asinh", "Asinh"},     {"tcc.acosh", "Acosh"},     {"tcc.atanh", "Atanh"},
      {"tcc.ceil", "Ceil"},       {"tcc.round", "Round"},     {"tcc.not", "Not"},
      {"tcc.add", "Add"},         {"tcc.sub", "Sub"},         {"tcc.mul", "Mul"},
      {"tcc.div", "Div"},         {"tcc.pow", "Pow"},         {"tcc.max", "Max"},
      {"tcc.min", "Min"},         {"tcc.and", "And"},         {"tcc.or", "Or"},
      {"tcc.xor", "Xor"},         {"tcc.select", "Where"},    {"tcc.matmul", "MatMul"},
  };
  auto it = table.find(tccName);
  return it == table.end() ? StringRef() : it->second;
}

std::optional<LogicalResult> Writer::elementwise(Operation *op) {
  SmallVector<std::string> ins;
  for (Value v : op->getOperands())
    ins.push_back(name(v));
  if (StringRef type = plainOnnxOp(op->getName().getStringRef()); !type.empty()) {
    node1(type, ins, op->getResult(0));
    return success();
  }
  return llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(op)
      .Case([&](tcc::RsqrtOp o) {
        node1("Reciprocal", {node1("Sqrt", ins)}, o);
        return success();
      })
      .Case([&](tcc::GeluOp o) {
        // Gelu is opset 20: x/2 (1 + erf(x/sqrt 2)), or PyTorch's tanh form.
        Type et = tensorType(o).getElementType();
        std::string x = ins[0], inner;
        if (!o.getApproximate()) {
          inner = node1("Erf", {node1("Mul", {x, scalar(M_SQRT1_2, et)})});
        } else {
          std::string cube = node1("Mul", {node1("Mul", {x, x}), x});
          std::string sum = node1("Add", {x, node1("Mul", {cube, scalar(0.044715, et)})});
          inner = node1("Tanh", {node1("Mul", {sum, scalar(std::sqrt(2 / M_PI), et)})});
        }
        std::string half = node1("Mul", {x, scalar(0.5, et)});
        node1("Mul", {half, node1("Add", {inner, scalar(1, et)})}, o);
        return success();
      })
      .Case([&](tcc::LeakyReluOp o) {
        setFloat(node("LeakyRelu", ins, {name(o)}), "alpha", o.getAlpha().convertToDouble());
        return success();
      })
      .Case([&](tcc::EluOp o) {
        setFloat(node("Elu", ins, {name(o)}), "alpha", o.getAlpha().convertToDouble());
        return success();
      })
      .Case([&](tcc::ClampOp o) {
        Type et = tensorType(o).getElementType();
        std::string lo = o.getMin() ? scalar(o.getMin()->convertToDouble(), et) : "";
        std::string hi = o.getMax() ? scalar(o.getMax()->convertToDouble(), et) : "";
        node1("Clip", {ins[0], lo, hi}, o);
        return success();
      })
      .Case([&](tcc::CastOp o) {
        setInt(node("Cast", ins, {name(o)}), "to", onnxType(tensorType(o).getElementType()));
        return success();
      })
      .Case([&](tcc::CompareOp o) {
        using P = tcc::CmpPredicate;
        P p = o.getPredicate();
        StringRef type = p == P::eq || p == P::ne ? "Equal"
                         : p == P::lt             ? "Less"
                         : p == P::le             ? "LessOrEqual"
                         : p == P::gt             ? "Greater"
                                                  : "GreaterOrEqual";
        if (p == P::ne)
          node1("Not", {node1(type, ins)}, o);
        else
          node1(type, ins, o);
        return success();
      })
      .Case([&](tcc::SoftmaxOp o) {
        setInt(node("Softmax", ins, {name(o)}), "axis", o.getAxis());
        return success();
      })
      .Case([&](tcc::LogSoftmaxOp o) {
        setInt(node("LogSoftmax", ins, {name(o)}), "axis", o.getAxis());
        return success();
      })
      .Default([](Operation *) { return std::nullopt; });
}

LogicalResult Writer::constant(tcc::ConstantOp op) {
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!dense)
    return op.emitError() << "a constant that is not a dense attribute has no ONNX form";
  RankedTensorType t = tensorType(op);
  onnx::TensorProto p;
  p.set_data_type(onnxType(t.getElementType()));
  if (p.data_type() == onnx::TensorProto::UNDEFINED)
    return op.emitError() << "element type " << t.getElementType() << " has no ONNX form";
  // A splat (zeros, a -inf mask fill) is one element and a shape, not N.
  if (dense.isSplat() && t.getNumElements() > 1) {
    p.add_dims(1);
    p.set_raw_data(rawBytes(DenseElementsAttr::get(
        RankedTensorType::get({1}, t.getElementType()), dense.getSplatValue<Attribute>())));
    setTensor(node("ConstantOfShape", {int64s(t.getShape())}, {name(op)}), "value", p);
    return success();
  }
  for (int64_t d : t.getShape())
    p.add_dims(d);
  p.set_raw_data(rawBytes(dense));
  tensorConstant(p, op);
  return success();
}

/// Operand dimension i is result dimension dims[i] (ascending, as the
/// verifier demands): reshape the operand to the result's rank (1 where no
/// operand dimension maps), then Expand, which repeats the size-1 dimensions.
LogicalResult Writer::broadcast(tcc::BroadcastInDimOp op) {
  RankedTensorType in = tensorType(op.getInput()), out = tensorType(op);
  ArrayRef<int64_t> dims = op.getDims();
  SmallVector<int64_t> shape(out.getRank(), 1);
  for (size_t i = 0; i < dims.size(); ++i)
    shape[dims[i]] = in.getDimSize(int64_t(i));
  bool reshape = int64_t(dims.size()) != out.getRank();
  bool expand = ArrayRef<int64_t>(shape) != out.getShape();
  std::string x = name(op.getInput());
  if (reshape)
    x = node1("Reshape", {x, int64s(shape)}, expand ? Value() : op.getResult());
  if (expand)
    node1("Expand", {x, int64s(out.getShape())}, op);
  else if (!reshape)
    node1("Identity", {x}, op);
  return success();
}

std::optional<LogicalResult> Writer::structural(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(op)
      .Case([&](tcc::ConstantOp o) { return constant(o); })
      .Case([&](tcc::BroadcastInDimOp o) { return broadcast(o); })
      .Case([&](tcc::ReshapeOp o) {
        node1("Reshape", {name(o.getInput()), int64s(tensorType(o).getShape())}, o);
        return success();
      })
      .Case([&](tcc::TransposeOp o) {
        setInts(node("Transpose", {name(o.getInput())}, {name(o)}), "perm", o.getPerm());
        return success();
      })
      .Case([&](tcc::ConcatOp o) {
        SmallVector<std::string> ins;
        for (Value v : o.getInputs())
          ins.push_back(name(v));
        setInt(node("Concat", ins, {name(o)}), "axis", int64_t(o.getAxis()));
        return success();
      })
      .Case([&](tcc::SliceOp o) {
        // ONNX counts elements by an exclusive end; one step past the last
        // taken element. A negative step that ends before element 0 needs
        // an end below -dim (ONNX adds dim to negative ends, then clamps).
        ArrayRef<int64_t> start = o.getStart(), stride = o.getStride();
        RankedTensorType in = tensorType(o.getInput()), out = tensorType(o);
        SmallVector<int64_t> ends, axes;
        for (int64_t d = 0; d < out.getRank(); ++d) {
          int64_t last = start[d] + (out.getDimSize(d) - 1) * stride[d];
          int64_t end = stride[d] > 0 ? last + 1 : last - 1;
          ends.push_back(end < 0 ? -in.getDimSize(d) - 1 : end);
          axes.push_back(d);
        }
        node1("Slice", {name(o.getInput()), int64s(start), int64s(ends), int64s(axes),
                        int64s(stride)},
              o);
        return success();
      })
      .Case([&](tcc::PadOp o) -> LogicalResult {
        StringRef mode = o.getMode() == tcc::PadMode::constant  ? "constant"
                         : o.getMode() == tcc::PadMode::reflect ? "reflect"
                         : o.getMode() == tcc::PadMode::edge    ? "edge"
                                                                : "";
        if (mode.empty())
          return o.emitError() << "'tcc.pad' in wrap mode has no ONNX form before opset 19";
        Type et = tensorType(o).getElementType();
        std::string value = o.getMode() == tcc::PadMode::constant
                                ? scalar(o.getValue().convertToDouble(), et)
                                : "";
        onnx::NodeProto &n = node(
            "Pad", {name(o.getInput()), int64s(onnxPads(o.getLow(), o.getHigh())), value},
            {name(o)});
        n.add_attribute()->set_name("mode");
        n.mutable_attribute(0)->set_type(onnx::AttributeProto::STRING);
        n.mutable_attribute(0)->set_s(mode.str());
        return success();
      })
      .Case([&](tcc::GatherOp o) {
        setInt(node("Gather", {name(o.getInput()), name(o.getIndices())}, {name(o)}), "axis",
               int64_t(o.getAxis()));
        return success();
      })
      .Case([&](tcc::GatherElementsOp o) {
        setInt(node("GatherElements", {name(o.getInput()), name(o.getIndices())}, {name(o)}),
               "axis", int64_t(o.getAxis()));
        return success();
      })
      .Case([&](tcc::CumSumOp o) {
        onnx::NodeProto &n = node(
            "CumSum", {name(o.getInput()), int64s({int64_t(o.getAxis())}, true)}, {name(o)});
        setInt(n, "exclusive", o.getExclusive());
        setInt(n, "reverse", o.getReverse());
        return success();
      })
      .Default([](Operation *) { return std::nullopt; });
}

/// Reductions (opset 17: ReduceSum takes its axes as an input, the others
/// as an attribute; an empty axes list reduces everything, where tcc's is
/// the identity), arg-reductions, convolutions and pooling.
std::optional<LogicalResult> Writer::nn(Operation *op) {
  auto reduce = [&](auto o, StringRef type) {
    std::string x = name(o.getInput());
    if (o.getAxes().empty())
      return node1("Identity", {x}, o), success();
    bool sum = type == "ReduceSum";
    onnx::NodeProto &n = node(type, sum ? std::vector<std::string>{x, int64s(o.getAxes())}
                                        : std::vector<std::string>{x},
                              {name(o)});
    if (!sum)
      setInts(n, "axes", o.getAxes());
    setInt(n, "keepdims", o.getKeepdims());
    return success();
  };
  auto argReduce = [&](auto o, StringRef type) {
    onnx::NodeProto &n = node(type, {name(o.getInput())}, {name(o)});
    setInt(n, "axis", int64_t(o.getAxis()));
    setInt(n, "keepdims", o.getKeepdims());
    setInt(n, "select_last_index", o.getSelectLastIndex());
    return success();
  };
  auto window = [&](onnx::NodeProto &n, auto o) {
    setInts(n, "strides", o.getStrides());
    setInts(n, "pads", onnxPads(o.getPadLow(), o.getPadHigh()));
  };
  return llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(op)
      .Case([&](tcc::ReduceSumOp o) { return reduce(o, "ReduceSum"); })
      .Case([&](tcc::ReduceMeanOp o) { return reduce(o, "ReduceMean"); })
      .Case([&](tcc::ReduceMaxOp o) { return reduce(o, "ReduceMax"); })
      .Case([&](tcc::ReduceMinOp o) { return reduce(o, "ReduceMin"); })
      .Case([&](tcc::ReduceProdOp o) { return reduce(o, "ReduceProd"); })
      .Case([&](tcc::ArgMaxOp o) { return argReduce(o, "ArgMax"); })
      .Case([&](tcc::ArgMinOp o) { return argReduce(o, "ArgMin"); })
      .Case([&](tcc::ConvOp o) {
        onnx::NodeProto &n = node("Conv", {name(o.getInput()), name(o.getFilter())}, {name(o)});
        window(n, o);
        setInts(n, "dilations", o.getDilations());
        setInt(n, "group", int64_t(o.getGroup()));
        return success();
      })
      .Case([&](tcc::ConvTransposeOp o) {
        onnx::NodeProto &n =
            node("ConvTranspose", {name(o.getInput()), name(o.getFilter())}, {name(o)});
        window(n, o);
        setInts(n, "dilations", o.getDilations());
        setInts(n, "output_padding", o.getOutputPadding());
        setInt(n, "group", int64_t(o.getGroup()));
        return success();
      })
      .Case([&](tcc::MaxPoolOp o) {
        onnx::NodeProto &n = node("MaxPool", {name(o.getInput())}, {name(o)});
        setInts(n, "kernel_shape", o.getKernel());
        window(n, o);
        setInts(n, "dilations", o.getDilations());
        setInt(n, "ceil_mode", o.getCeilMode());
        return success();
      })
      .Case([&](tcc::AvgPoolOp o) -> LogicalResult {
        if (llvm::any_of(o.getDilations(), [](int64_t d) { return d != 1; }))
          return o.emitError() << "'tcc.avg_pool' with dilations has no ONNX form before opset 19";
        onnx::NodeProto &n = node("AveragePool", {name(o.getInput())}, {name(o)});
        setInts(n, "kernel_shape", o.getKernel());
        window(n, o);
        setInt(n, "ceil_mode", o.getCeilMode());
        setInt(n, "count_include_pad", o.getCountIncludePad());
        return success();
      })
      .Default([](Operation *) { return std::nullopt; });
}

/// Normalizations and dropout, in inference form.
std::optional<LogicalResult> Writer::norm(Operation *op) {
  auto batchNorm = [&](Operation *o, Value x, Value scale, Value bias, Value mean, Value var,
                       double eps) {
    onnx::NodeProto &n = node("BatchNormalization",
                              {name(x), name(scale), name(bias), name(mean), name(var)},
                              {name(o->getResult(0))});
    setFloat(n, "epsilon", eps);
    return success();
  };
  return llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(op)
      .Case([&](tcc::BatchNormInferenceOp o) {
        return batchNorm(o, o.getInput(), o.getScale(), o.getBias(), o.getMean(),
                         o.getVariance(), o.getEpsilon().convertToDouble());
      })
      .Case([&](tcc::BatchNormTrainingOp o) -> LogicalResult {
        // PyTorch's eval(): normalize with the running statistics, as the
        // compiled inference entry does (tcc-build-train-step).
        auto stats = o->getAttrOfType<DenseI64ArrayAttr>(tcc::attr::runningStats);
        if (!stats || !o.getBatchMean().use_empty() || !o.getBatchVariance().use_empty())
          return o.emitError() << "a batch norm without running statistics (or whose batch "
                                  "statistics are read) has no inference form";
        ++summary.batchNorms;
        return batchNorm(o, o.getInput(), o.getScale(), o.getBias(), fn.getArgument(stats[0]),
                         fn.getArgument(stats[1]), o.getEpsilon().convertToDouble());
      })
      .Case([&](tcc::LayerNormOp o) {
        // Mean and 1/std are optional outputs; written only when read.
        SmallVector<std::string> outs = {name(o.getResult())};
        if (!o.getMean().use_empty() || !o.getInvStdDev().use_empty())
          outs.push_back(name(o.getMean()));
        if (!o.getInvStdDev().use_empty())
          outs.push_back(name(o.getInvStdDev()));
        SmallVector<std::string> ins = {name(o.getInput()), name(o.getScale())};
        if (o.getBias())
          ins.push_back(name(o.getBias()));
        onnx::NodeProto &n = node("LayerNormalization", ins, outs);
        setInt(n, "axis", int64_t(o.getAxis()));
        setFloat(n, "epsilon", o.getEpsilon().convertToDouble());
        return success();
      })
      .Case([&](tcc::DropoutOp o) -> LogicalResult {
        if (o.getRng())
          return o.emitError() << "a dropout of a training step has no inference form";
        node1("Identity", {name(o.getInput())}, o.getResult());
        // Outside training the mask keeps everything.
        if (!o.getMask().use_empty()) {
          onnx::TensorProto one;
          one.set_data_type(onnx::TensorProto::BOOL);
          one.add_dims(1);
          one.set_raw_data(std::string(1, '\1'));
          setTensor(node("ConstantOfShape", {int64s(tensorType(o.getMask()).getShape())},
                         {name(o.getMask())}),
                    "value", one);
        }
        ++summary.dropouts;
        return success();
      })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace

LogicalResult tcc::exportDialectFunction(func::FuncOp fn, const std::string &weightsPath,
                                         const std::string &outPath,
                                         DialectExportSummary &summary) {
  Location loc = UnknownLoc::get(fn.getContext());
  try {
    tcc::rt::SafetensorsReader weights;
    std::string error;
    if (!weights.open(weightsPath, &error))
      return emitError(loc) << error;
    onnx::ModelProto model;
    model.set_ir_version(kIrVersion);
    model.set_producer_name("tcc");
    onnx::OperatorSetIdProto *opset = model.add_opset_import();
    opset->set_domain("");
    opset->set_version(kOpset);
    onnx::GraphProto &graph = *model.mutable_graph();
    auto module = fn->getParentOfType<ModuleOp>();
    graph.set_name(module && module.getSymName() ? module.getSymName()->str() : "tcc");
    Writer writer(fn, graph, summary);
    if (failed(writer.arguments(weights, weightsPath)))
      return failure();
    writer.nameResults();
    if (failed(writer.body()))
      return failure();
    writer.outputs();

    // A name of its own: concurrent exports may write one output.
    llvm::SmallString<256> unique;
    llvm::sys::fs::createUniquePath(outPath + ".tmp-%%%%%%%%", unique, /*MakeAbsolute=*/false);
    std::string tmp(unique);
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (!out || !model.SerializeToOstream(&out) || !out.flush())
        return std::remove(tmp.c_str()), emitError(loc) << outPath << ": cannot write";
    }
    if (std::rename(tmp.c_str(), outPath.c_str()) != 0)
      return std::remove(tmp.c_str()), emitError(loc) << outPath << ": cannot write";
    return success();
  } catch (const std::exception &e) {
    return emitError(loc) << outPath << ": cannot export: " << e.what();
  }
}
