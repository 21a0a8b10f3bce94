//===- Builtins.cpp - the predefined functions and their shape rules ------===//
//
// Every builtin of the language: its signature (for the resolver), the
// checks of its arguments, the type of its result, and the graph nodes it
// becomes. The rules follow the tcc ops they lower to (docs/dialect.md), so
// a program that passes here builds ops whose verifiers hold.
//
//===----------------------------------------------------------------------===//

#include "frontend/dsl/Elaborator.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>

using namespace tcc::dsl;

//===----------------------------------------------------------------------===//
// Names and types
//===----------------------------------------------------------------------===//

llvm::StringRef tcc::dsl::dtypeName(DType t) {
  switch (t) {
  case DType::F32: return "f32";
  case DType::F64: return "f64";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::I64: return "i64";
  case DType::I32: return "i32";
  case DType::I1: return "bool";
  }
  return "?";
}

std::optional<DType> tcc::dsl::parseDType(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<DType>>(name)
      .Case("f32", DType::F32)
      .Case("f64", DType::F64)
      .Case("f16", DType::F16)
      .Case("bf16", DType::BF16)
      .Case("i64", DType::I64)
      .Case("i32", DType::I32)
      .Case("bool", DType::I1)
      .Default(std::nullopt);
}

std::string tcc::dsl::formatShape(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string tcc::dsl::formatType(const TensorType &t) {
  return dtypeName(t.dtype).str() + formatShape(t.shape);
}

static std::string fmt(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", x);
  return buffer;
}

std::string InitSpec::describe() const {
  switch (kind) {
  case Constant: return "constant " + fmt(a);
  case Uniform: return "uniform " + fmt(a) + " " + fmt(b);
  case Normal: return "normal " + fmt(a) + " " + fmt(b);
  }
  return "";
}

static const std::vector<BuiltinSig> &builtins() {
  static const std::vector<BuiltinSig> table = [] {
    std::vector<BuiltinSig> t;
    for (llvm::StringRef u : {"relu", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "abs",
                              "erf", "sin", "cos", "softplus", "floor", "ceil", "round", "sign",
                              "reciprocal"})
      t.push_back({u, {"x"}, 1});
    t.push_back({"gelu", {"x", "approximate"}, 1});
    t.push_back({"leaky_relu", {"x", "alpha"}, 1});
    t.push_back({"elu", {"x", "alpha"}, 1});
    t.push_back({"clamp", {"x", "min", "max"}, 1});
    t.push_back({"where", {"cond", "a", "b"}, 3});
    t.push_back({"maximum", {"a", "b"}, 2});
    t.push_back({"minimum", {"a", "b"}, 2});
    t.push_back({"matmul", {"a", "b"}, 2});
    t.push_back({"transpose", {"x", "perm"}, 1});
    t.push_back({"reshape", {"x", "shape"}, 2});
    t.push_back({"flatten", {"x", "start"}, 1});
    t.push_back({"concat", {"tensors", "axis"}, 1});
    t.push_back({"split", {"x", "sections", "axis"}, 2});
    for (llvm::StringRef r : {"sum", "mean", "max", "min", "prod"})
      t.push_back({r, {"x", "axes", "keepdims"}, 1});
    t.push_back({"argmax", {"x", "axis", "keepdims"}, 1});
    t.push_back({"argmin", {"x", "axis", "keepdims"}, 1});
    t.push_back({"softmax", {"x", "axis"}, 1});
    t.push_back({"log_softmax", {"x", "axis"}, 1});
    t.push_back({"layer_norm", {"x", "weight", "bias", "axis", "eps"}, 2});
    t.push_back({"batch_norm",
                 {"x", "weight", "bias", "running_mean", "running_var", "momentum", "eps"}, 5});
    t.push_back({"conv", {"x", "weight", "bias", "stride", "padding", "dilation", "groups"}, 2});
    t.push_back({"max_pool", {"x", "kernel", "stride", "padding"}, 2});
    t.push_back({"avg_pool", {"x", "kernel", "stride", "padding", "count_include_pad"}, 2});
    t.push_back({"dropout", {"x", "p"}, 1});
    t.push_back({"embedding", {"table", "ids"}, 2});
    t.push_back({"gather", {"x", "indices", "axis"}, 2});
    t.push_back({"cast", {"x", "dtype"}, 2});
    t.push_back({"arange", {"n"}, 1});
    t.push_back({"zeros", {"shape", "dtype"}, 1});
    t.push_back({"ones", {"shape", "dtype"}, 1});
    t.push_back({"full", {"shape", "value", "dtype"}, 2});
    t.push_back({"len", {"list"}, 1});
    return t;
  }();
  return table;
}

static const std::vector<BuiltinSig> &initializers() {
  static const std::vector<BuiltinSig> table = {
      {"zeros", {}, 0},
      {"ones", {}, 0},
      {"constant", {"value"}, 1},
      {"uniform", {"low", "high", "seed"}, 2},
      {"normal", {"mean", "std", "seed"}, 2},
      {"kaiming_uniform", {"a", "seed"}, 0},
      {"kaiming_normal", {"a", "seed"}, 0},
      {"xavier_uniform", {"gain", "seed"}, 0},
      {"xavier_normal", {"gain", "seed"}, 0},
  };
  return table;
}

const BuiltinSig *tcc::dsl::findBuiltin(llvm::StringRef name) {
  for (const BuiltinSig &s : builtins())
    if (s.name == name)
      return &s;
  return nullptr;
}

const BuiltinSig *tcc::dsl::findInitializer(llvm::StringRef name) {
  for (const BuiltinSig &s : initializers())
    if (s.name == name)
      return &s;
  return nullptr;
}

std::vector<std::string> tcc::dsl::initializerNames() {
  std::vector<std::string> names;
  for (const BuiltinSig &s : initializers())
    names.push_back(s.name.str());
  return names;
}

bool tcc::dsl::isBuiltinConstant(llvm::StringRef name) {
  return name == "inf" || name == "nan" || name == "pi" || parseDType(name).has_value();
}

llvm::ArrayRef<std::string> tcc::dsl::builtinNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const BuiltinSig &s : builtins())
      n.push_back(s.name.str());
    return n;
  }();
  return names;
}

//===----------------------------------------------------------------------===//
// Argument conversions
//===----------------------------------------------------------------------===//

bool Elaborator::tensorArg(const Val &v, Pos pos, llvm::StringRef what, int &node) {
  if (v.isError())
    return false;
  if (!v.isTensor()) {
    error(pos) << what << " must be a tensor, not " << v.describe();
    return false;
  }
  node = v.node;
  return true;
}

bool Elaborator::intArg(const Val &v, Pos pos, llvm::StringRef what, int64_t &out) {
  if (v.isError())
    return false;
  if (v.kind != Val::Int) {
    error(pos) << what << " must be an integer known when compiling, not " << v.describe();
    return false;
  }
  out = v.i;
  return true;
}

bool Elaborator::numberArg(const Val &v, Pos pos, llvm::StringRef what, double &out) {
  if (v.isError())
    return false;
  if (!v.isNumber()) {
    error(pos) << what << " must be a number, not " << v.describe();
    return false;
  }
  out = v.f;
  return true;
}

bool Elaborator::intsArg(const Val &v, Pos pos, llvm::StringRef what, size_t count,
                         llvm::SmallVectorImpl<int64_t> &out) {
  out.clear();
  if (v.kind == Val::Int) {
    out.assign(count, v.i);
    return true;
  }
  if (v.kind != Val::List) {
    if (!v.isError())
      error(pos) << what << " must be an integer or a list of integers, not " << v.describe();
    return false;
  }
  for (const Val &e : v.elems) {
    int64_t i;
    if (!intArg(e, pos, what, i))
      return false;
    out.push_back(i);
  }
  if (count && out.size() != count) {
    error(pos) << what << " needs " << count << " values, got " << out.size();
    return false;
  }
  return true;
}

bool Elaborator::axisArg(const Val &v, Pos pos, int64_t rank, int64_t &axis) {
  if (!intArg(v, pos, "an axis", axis))
    return false;
  if (axis < -rank || axis >= rank) {
    error(pos) << "axis " << axis << " is out of range for rank " << rank;
    return false;
  }
  if (axis < 0)
    axis += rank;
  return true;
}

//===----------------------------------------------------------------------===//
// Node helpers
//===----------------------------------------------------------------------===//

int Elaborator::splat(double value, const TensorType &type, Pos pos) {
  Node n = makeNode(NodeKind::Constant, pos, type);
  n.values = {value};
  return add(std::move(n));
}

int Elaborator::broadcastTo(int node, llvm::ArrayRef<int64_t> shape, Pos pos) {
  if (node < 0)
    return node;
  const TensorType &t = typeOf(node);
  if (llvm::ArrayRef<int64_t>(t.shape) == shape)
    return node;
  Node n = makeNode(NodeKind::Broadcast, pos, {t.dtype, {shape.begin(), shape.end()}}, {node});
  int64_t offset = int64_t(shape.size()) - t.rank();
  for (int64_t i = 0; i < t.rank(); ++i)
    n.a.push_back(offset + i);
  return add(std::move(n));
}

int Elaborator::reshape(int node, llvm::ArrayRef<int64_t> shape, Pos pos) {
  if (node < 0)
    return node;
  if (llvm::ArrayRef<int64_t>(typeOf(node).shape) == shape)
    return node;
  return add(makeNode(NodeKind::Reshape, pos, {typeOf(node).dtype, {shape.begin(), shape.end()}},
                      {node}));
}

int Elaborator::transpose(int node, llvm::ArrayRef<int64_t> perm, Pos pos) {
  if (node < 0)
    return node;
  const TensorType t = typeOf(node);
  llvm::SmallVector<int64_t, 4> p(perm.begin(), perm.end());
  if (p.empty()) { // .T: the last two dimensions
    for (int64_t i = 0; i < t.rank(); ++i)
      p.push_back(i);
    std::swap(p[t.rank() - 2], p[t.rank() - 1]);
  }
  TensorType out{t.dtype, {}};
  for (int64_t d : p)
    out.shape.push_back(t.shape[d]);
  Node n = makeNode(NodeKind::Transpose, pos, out, {node});
  n.a = p;
  return add(std::move(n));
}

std::optional<llvm::SmallVector<int64_t, 4>>
Elaborator::broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b, Pos pos,
                            llvm::StringRef what) {
  size_t rank = std::max(a.size(), b.size());
  llvm::SmallVector<int64_t, 4> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x != y && x != 1 && y != 1) {
      error(pos) << "shapes " << formatShape(a) << " and " << formatShape(b)
                 << " do not broadcast in " << what << " (dimension " << i << ": " << x
                 << " vs " << y << ")";
      return std::nullopt;
    }
    out[i] = std::max(x, y);
  }
  return out;
}

static llvm::StringRef opSpelling(llvm::StringRef op) {
  return llvm::StringSwitch<llvm::StringRef>(op)
      .Case("add", "'+'")
      .Case("sub", "'-'")
      .Case("mul", "'*'")
      .Case("div", "'/'")
      .Case("pow", "'**'")
      .Case("and", "'and'")
      .Case("or", "'or'")
      .Case("eq", "'=='")
      .Case("ne", "'!='")
      .Case("lt", "'<'")
      .Case("le", "'<='")
      .Case("gt", "'>'")
      .Case("ge", "'>='")
      .Case("max", "maximum")
      .Case("min", "minimum")
      .Default(op);
}

Val Elaborator::elementwise(llvm::StringRef op, NodeKind kind, Val lhs, Val rhs, Pos pos) {
  if (lhs.isError() || rhs.isError())
    return Val::error();
  llvm::StringRef what = opSpelling(op);
  for (const Val *v : {&lhs, &rhs})
    if (!v->isTensor() && !v->isNumber() && v->kind != Val::Bool) {
      error(pos) << what << " needs tensors or numbers, not " << v->describe();
      return Val::error();
    }
  const Val &t = lhs.isTensor() ? lhs : rhs;
  DType dtype = typeOf(t).dtype;
  if (lhs.isTensor() && rhs.isTensor() && typeOf(lhs).dtype != typeOf(rhs).dtype) {
    error(pos) << "the operands of " << what << " have element types "
               << dtypeName(typeOf(lhs).dtype) << " and " << dtypeName(typeOf(rhs).dtype)
               << "; convert one with cast(x, " << dtypeName(typeOf(lhs).dtype) << ")";
    return Val::error();
  }
  bool logical = op == "and" || op == "or";
  if (logical != (dtype == DType::I1)) {
    error(pos) << what << (logical ? " needs bool tensors, not " : " is not defined on ")
               << dtypeName(dtype) << " tensors";
    return Val::error();
  }
  for (const Val *v : {&lhs, &rhs})
    if (v->kind == Val::Float && !isFloat(dtype) && v->f != std::floor(v->f)) {
      error(pos) << "the number " << v->f << " is not a value of the " << dtypeName(dtype)
                 << " tensor it combines with";
      return Val::error();
    }
  llvm::SmallVector<int64_t, 4> shape = typeOf(t).shape;
  if (lhs.isTensor() && rhs.isTensor()) {
    auto s = broadcastShapes(typeOf(lhs).shape, typeOf(rhs).shape, pos, what);
    if (!s)
      return Val::error();
    shape = *s;
  }
  if (!checkSize(shape, pos))
    return Val::error();
  // A number becomes a constant of the result's shape (folded and fused
  // later), a tensor is broadcast explicitly: tcc ops take equal shapes.
  auto operand = [&](const Val &v) {
    if (v.isTensor())
      return broadcastTo(v.node, shape, pos);
    return splat(v.kind == Val::Bool ? double(v.b) : v.f, {dtype, shape}, pos);
  };
  int a = operand(lhs), b = operand(rhs);
  if (a < 0 || b < 0)
    return Val::error();
  Node n = makeNode(kind, pos, {kind == NodeKind::Compare ? DType::I1 : dtype, shape}, {a, b});
  n.op = op.str();
  return tensorNode(std::move(n));
}

Val Elaborator::matmul(Val lhs, Val rhs, Pos pos) {
  int a, b;
  if (!tensorArg(lhs, pos, "the left operand of '@'", a) ||
      !tensorArg(rhs, pos, "the right operand of '@'", b))
    return Val::error();
  const TensorType ta = typeOf(a), tb = typeOf(b);
  if (ta.rank() < 2 || tb.rank() < 2) {
    error(pos) << "'@' multiplies matrices (rank 2 or more); got " << formatType(ta) << " @ "
               << formatType(tb) << " (reshape a vector to [1, n] or [n, 1])";
    return Val::error();
  }
  if (ta.dtype != tb.dtype || ta.dtype == DType::I1) {
    error(pos) << "'@' needs two numeric tensors of one element type; got " << formatType(ta)
               << " @ " << formatType(tb);
    return Val::error();
  }
  int64_t k1 = ta.shape.back(), k2 = tb.shape[tb.rank() - 2];
  if (k1 != k2) {
    error(pos) << "'@' contracts dimension " << k1 << " of " << formatType(ta)
               << " with dimension " << k2 << " of " << formatType(tb);
    return Val::error();
  }
  llvm::ArrayRef<int64_t> batchA = llvm::ArrayRef<int64_t>(ta.shape).drop_back(2);
  llvm::ArrayRef<int64_t> batchB = llvm::ArrayRef<int64_t>(tb.shape).drop_back(2);
  auto batch = broadcastShapes(batchA, batchB, pos, "the batch dimensions of '@'");
  if (!batch)
    return Val::error();
  llvm::SmallVector<int64_t, 4> sa = *batch, sb = *batch, out = *batch;
  sa.append({ta.shape[ta.rank() - 2], k1});
  sb.append({k2, tb.shape.back()});
  out.append({ta.shape[ta.rank() - 2], tb.shape.back()});
  if (!checkSize(out, pos))
    return Val::error();
  a = broadcastTo(a, sa, pos);
  b = broadcastTo(b, sb, pos);
  if (a < 0 || b < 0)
    return Val::error();
  return tensorNode(makeNode(NodeKind::Matmul, pos, {ta.dtype, out}, {a, b}));
}
