//===- BuiltinCalls.cpp - calls of the builtins, by family ----------------===//
//
// callBuiltin evaluates a call's bound arguments once and hands them to the
// family that owns the name: elementwise, shape, reduction, neural-network,
// constants. Each checks its arguments and reports at the argument that is
// wrong; shapes that do not fit name both shapes.
//
//===----------------------------------------------------------------------===//

#include "frontend/dsl/Elaborator.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <numeric>

using namespace tcc::dsl;

namespace {

/// A builtin call's arguments, by parameter.
struct Args {
  std::vector<Val> v;
  std::vector<Pos> pos;
  std::vector<bool> given;
  Pos call;
  bool has(size_t i) const { return i < given.size() && given[i]; }
  const Val &operator[](size_t i) const { return v[i]; }
  /// Whether any given argument is erroneous (already reported).
  bool poisoned() const {
    for (size_t i = 0; i < v.size(); ++i)
      if (given[i] && v[i].isError())
        return true;
    return false;
  }
};

using Family = std::optional<Val> (*)(Elaborator &, llvm::StringRef, const Args &);

std::optional<Val> elementwiseFamily(Elaborator &E, llvm::StringRef name, const Args &args) {
  static const llvm::StringRef unary[] = {"relu", "sigmoid", "tanh", "exp", "log", "sqrt",
                                          "rsqrt", "abs", "erf", "sin", "cos", "softplus",
                                          "floor", "ceil", "round", "sign", "reciprocal"};
  bool isUnary = llvm::is_contained(unary, name);
  if (!isUnary && name != "gelu" && name != "leaky_relu" && name != "elu" && name != "clamp" &&
      name != "where" && name != "maximum" && name != "minimum")
    return std::nullopt;
  if (name == "maximum" || name == "minimum")
    return E.elementwise(name == "maximum" ? "max" : "min", NodeKind::Binary, args[0], args[1],
                         args.call);
  if (name == "where") {
    const Val &c = args[0];
    if (c.kind == Val::Bool)
      return c.b ? args[1] : args[2];
    int cond;
    if (!E.tensorArg(c, args.pos[0], "the condition of where", cond) || args.poisoned())
      return Val::error();
    if (E.typeOf(cond).dtype != DType::I1) {
      E.error(args.pos[0]) << "the condition of where must be a bool tensor, not "
                           << formatType(E.typeOf(cond));
      return Val::error();
    }
    // Choose the values' type, broadcast all three, then select.
    const Val &a = args[1], &b = args[2];
    if (!a.isTensor() && !b.isTensor()) {
      E.error(args.call) << "where needs at least one tensor among its values";
      return Val::error();
    }
    TensorType t = E.typeOf(a.isTensor() ? a : b);
    if (a.isTensor() && b.isTensor()) {
      if (E.typeOf(a).dtype != E.typeOf(b).dtype) {
        E.error(args.call) << "the values of where have element types "
                           << dtypeName(E.typeOf(a).dtype) << " and "
                           << dtypeName(E.typeOf(b).dtype);
        return Val::error();
      }
      auto s = E.broadcastShapes(E.typeOf(a).shape, E.typeOf(b).shape, args.call, "where");
      if (!s)
        return Val::error();
      t.shape = *s;
    }
    for (const Val *v : {&a, &b})
      if (!v->isTensor() && !v->isNumber()) {
        E.error(args.call) << "the values of where must be tensors or numbers, not "
                           << v->describe();
        return Val::error();
      }
    auto shape = E.broadcastShapes(E.typeOf(cond).shape, t.shape, args.call, "where");
    if (!shape || !E.checkSize(*shape, args.call))
      return Val::error();
    auto operand = [&](const Val &v) {
      return v.isTensor() ? E.broadcastTo(v.node, *shape, args.call)
                          : E.splat(v.f, {t.dtype, *shape}, args.call);
    };
    int x = operand(a), y = operand(b), m = E.broadcastTo(cond, *shape, args.call);
    if (x < 0 || y < 0 || m < 0)
      return Val::error();
    return E.tensorNode(E.makeNode(NodeKind::Select, args.call, {t.dtype, *shape}, {m, x, y}));
  }
  int x;
  if (!E.tensorArg(args[0], args.pos[0], "the argument of " + name.str(), x) || args.poisoned())
    return Val::error();
  TensorType t = E.typeOf(x);
  bool floatOnly = name != "relu" && name != "abs" && name != "sign" && name != "clamp";
  if ((floatOnly && !isFloat(t.dtype)) || t.dtype == DType::I1) {
    E.error(args.pos[0]) << name << " needs a " << (floatOnly ? "float" : "numeric")
                         << " tensor, not " << formatType(t);
    return Val::error();
  }
  Node n = E.makeNode(isUnary ? NodeKind::Unary : NodeKind::ParamUnary, args.call, t, {x});
  n.op = name.str();
  if (name == "gelu") {
    n.kind = NodeKind::Gelu;
    n.flag = args.has(1) && args[1].kind == Val::Bool && args[1].b;
  } else if (name == "leaky_relu" || name == "elu") {
    n.f = name == "elu" ? 1.0 : 0.01;
    if (args.has(1) && !E.numberArg(args[1], args.pos[1], "alpha", n.f))
      return Val::error();
  } else if (name == "clamp") {
    n.kind = NodeKind::Clamp;
    n.a = {args.has(1), args.has(2)};
    if ((args.has(1) && !E.numberArg(args[1], args.pos[1], "min", n.f)) ||
        (args.has(2) && !E.numberArg(args[2], args.pos[2], "max", n.g)))
      return Val::error();
  }
  return E.tensorNode(std::move(n));
}

std::optional<Val> reshapeFamily(Elaborator &E, llvm::StringRef name, const Args &args) {
  if (name != "reshape" && name != "flatten" && name != "transpose")
    return std::nullopt;
  int x;
  if (!E.tensorArg(args[0], args.pos[0], "the argument of " + name.str(), x) || args.poisoned())
    return Val::error();
  TensorType t = E.typeOf(x);
  int64_t count = 1;
  for (int64_t d : t.shape)
    count *= d;
  if (name == "transpose") {
    llvm::SmallVector<int64_t, 4> perm;
    if (!args.has(1)) {
      for (int64_t i = t.rank() - 1; i >= 0; --i)
        perm.push_back(i);
    } else if (!E.intsArg(args[1], args.pos[1], "the permutation", 0, perm)) {
      return Val::error();
    }
    llvm::SmallVector<int64_t, 4> sorted(perm);
    llvm::sort(sorted);
    for (int64_t i = 0; i < int64_t(sorted.size()); ++i)
      if (int64_t(sorted.size()) != t.rank() || sorted[i] != i) {
        E.error(args.has(1) ? args.pos[1] : args.call)
            << "the permutation " << formatShape(perm) << " is not one of the " << t.rank()
            << " dimensions of " << formatType(t);
        return Val::error();
      }
    int id = E.transpose(x, perm, args.call);
    return id < 0 ? Val::error() : Val::ofTensor(id);
  }
  llvm::SmallVector<int64_t, 4> shape;
  if (name == "flatten") {
    int64_t start = 1;
    if (args.has(1) && !E.axisArg(args[1], args.pos[1], t.rank(), start))
      return Val::error();
    int64_t inner = 1;
    for (int64_t d = start; d < t.rank(); ++d)
      inner *= t.shape[d];
    shape.assign(t.shape.begin(), t.shape.begin() + start);
    shape.push_back(inner);
  } else {
    if (!E.intsArg(args[1], args.pos[1], "the shape", 0, shape))
      return Val::error();
    int64_t known = 1, inferred = -1;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] == -1 && inferred < 0) {
        inferred = int64_t(i);
        continue;
      }
      if (shape[i] <= 0 || known > Elaborator::kMaxElements / shape[i]) {
        E.error(args.pos[1]) << "the shape " << formatShape(shape)
                             << " needs positive dimensions (one may be -1)";
        return Val::error();
      }
      known *= shape[i];
    }
    if (inferred >= 0 && count % known == 0)
      shape[inferred] = count / known;
    if ((inferred >= 0 && count % known != 0) || (inferred < 0 && known != count)) {
      E.error(args.pos[1]) << "cannot reshape " << formatType(t) << " (" << count
                           << " elements) to " << formatShape(shape);
      return Val::error();
    }
  }
  int id = E.reshape(x, shape, args.call);
  return id < 0 ? Val::error() : Val::ofTensor(id);
}

std::optional<Val> joinFamily(Elaborator &E, llvm::StringRef name, const Args &args) {
  if (name != "concat" && name != "split")
    return std::nullopt;
  if (args.poisoned())
    return Val::error();
  if (name == "concat") {
    if (args[0].kind != Val::List || args[0].elems.empty()) {
      E.error(args.pos[0]) << "concat takes a list of tensors, [a, b, ...]";
      return Val::error();
    }
    Node n = E.makeNode(NodeKind::Concat, args.call, {});
    for (const Val &v : args[0].elems) {
      int x;
      if (!E.tensorArg(v, args.pos[0], "each element of concat's list", x))
        return Val::error();
      n.operands.push_back(x);
    }
    TensorType t = E.typeOf(n.operands[0]);
    int64_t axis = 0;
    if (args.has(1) && !E.axisArg(args[1], args.pos[1], t.rank(), axis))
      return Val::error();
    for (size_t i = 1; i < n.operands.size(); ++i) {
      TensorType u = E.typeOf(n.operands[i]);
      bool fits = u.dtype == t.dtype && u.rank() == t.rank();
      for (int64_t d = 0; fits && d < t.rank(); ++d)
        fits = d == axis || u.shape[d] == t.shape[d];
      if (!fits) {
        E.error(args.pos[0]) << "concat along axis " << axis << ": " << formatType(u)
                             << " does not fit " << formatType(E.typeOf(n.operands[0]));
        return Val::error();
      }
      t.shape[axis] += u.shape[axis];
    }
    n.i = axis;
    n.type = t;
    return E.tensorNode(std::move(n));
  }
  int x;
  if (!E.tensorArg(args[0], args.pos[0], "the argument of split", x))
    return Val::error();
  TensorType t = E.typeOf(x);
  int64_t axis = t.rank() - 1;
  if (args.has(2) && !E.axisArg(args[2], args.pos[2], t.rank(), axis))
    return Val::error();
  llvm::SmallVector<int64_t, 4> sizes;
  if (args[1].kind == Val::Int) {
    int64_t parts = args[1].i;
    if (parts <= 0 || t.shape[axis] % parts != 0) {
      E.error(args.pos[1]) << "cannot split dimension " << axis << " of " << formatType(t)
                           << " into " << parts << " equal parts";
      return Val::error();
    }
    sizes.assign(size_t(parts), t.shape[axis] / parts);
  } else if (!E.intsArg(args[1], args.pos[1], "the sizes of split", 0, sizes)) {
    return Val::error();
  }
  int64_t total = 0;
  for (int64_t s : sizes)
    total += s > 0 ? s : t.shape[axis] + 1;
  if (total != t.shape[axis]) {
    E.error(args.pos[1]) << "the sizes " << formatShape(sizes) << " do not add up to dimension "
                         << axis << " of " << formatType(t);
    return Val::error();
  }
  std::vector<Val> parts;
  int64_t offset = 0;
  for (int64_t s : sizes) {
    TensorType part = t;
    part.shape[axis] = s;
    Node n = E.makeNode(NodeKind::Slice, args.call, part, {x});
    n.a.assign(size_t(t.rank()), 0);
    n.a[axis] = offset;
    n.b.assign(size_t(t.rank()), 1);
    offset += s;
    parts.push_back(E.tensorNode(std::move(n)));
  }
  return Val::ofList(std::move(parts));
}

std::optional<Val> reduceFamily(Elaborator &E, llvm::StringRef name, const Args &args) {
  bool arg = name == "argmax" || name == "argmin";
  if (!arg && name != "sum" && name != "mean" && name != "max" && name != "min" && name != "prod")
    return std::nullopt;
  // max(a, b) and min(a, b) of numbers are compile-time arithmetic.
  if ((name == "max" || name == "min") && args[0].isNumber() && args.has(1) && args[1].isNumber()) {
    bool ints = args[0].kind == Val::Int && args[1].kind == Val::Int;
    bool first = name == "max" ? args[0].f >= args[1].f : args[0].f <= args[1].f;
    if (ints)
      return first ? args[0] : args[1];
    return Val::ofFloat(first ? args[0].f : args[1].f);
  }
  int x;
  if (!E.tensorArg(args[0], args.pos[0], "the argument of " + name.str(), x) || args.poisoned())
    return Val::error();
  TensorType t = E.typeOf(x);
  if (t.dtype == DType::I1) {
    E.error(args.pos[0]) << name << " needs a numeric tensor, not " << formatType(t);
    return Val::error();
  }
  bool keep = args.has(2) && args[2].kind == Val::Bool && args[2].b;
  llvm::SmallVector<int64_t, 4> axes;
  if (arg) {
    int64_t axis = t.rank() - 1;
    if (args.has(1) && !E.axisArg(args[1], args.pos[1], t.rank(), axis))
      return Val::error();
    axes = {axis};
  } else if (args.has(1)) {
    llvm::SmallVector<int64_t, 4> given;
    if (!E.intsArg(args[1], args.pos[1], "the axes", 0, given))
      return Val::error();
    for (int64_t a : given) {
      int64_t axis;
      if (!E.axisArg(Val::ofInt(a), args.pos[1], t.rank(), axis))
        return Val::error();
      if (llvm::is_contained(axes, axis)) {
        E.error(args.pos[1]) << "axis " << a << " is listed twice";
        return Val::error();
      }
      axes.push_back(axis);
    }
    llvm::sort(axes);
  } else {
    for (int64_t i = 0; i < t.rank(); ++i)
      axes.push_back(i);
  }
  TensorType out{arg ? DType::I64 : t.dtype, {}};
  for (int64_t d = 0; d < t.rank(); ++d) {
    if (!llvm::is_contained(axes, d))
      out.shape.push_back(t.shape[d]);
    else if (keep)
      out.shape.push_back(1);
  }
  Node n = E.makeNode(arg ? NodeKind::ArgReduce : NodeKind::Reduce, args.call, out, {x});
  n.op = name.str();
  n.a = axes;
  n.i = axes.empty() ? 0 : axes[0];
  n.flag = keep;
  return E.tensorNode(std::move(n));
}

std::optional<Val> constantFamily(Elaborator &E, llvm::StringRef name, const Args &args) {
  if (name != "arange" && name != "zeros" && name != "ones" && name != "full" && name != "len")
    return std::nullopt;
  if (args.poisoned())
    return Val::error();
  if (name == "len") {
    if (args[0].kind != Val::List) {
      E.error(args.pos[0]) << "len takes a list, not " << args[0].describe();
      return Val::error();
    }
    return Val::ofInt(int64_t(args[0].elems.size()));
  }
  if (name == "arange") {
    int64_t n;
    if (!E.intArg(args[0], args.pos[0], "the length of arange", n))
      return Val::error();
    if (n <= 0 || n > Elaborator::kMaxConstant) {
      E.error(args.pos[0]) << "arange(" << n << "): the length must be in 1.." << Elaborator::kMaxConstant;
      return Val::error();
    }
    Node c = E.makeNode(NodeKind::Constant, args.call, {DType::I64, {n}});
    c.values.resize(size_t(n));
    std::iota(c.values.begin(), c.values.end(), 0.0);
    return E.tensorNode(std::move(c));
  }
  TensorType t;
  if (!E.intsArg(args[0], args.pos[0], "the shape", 0, t.shape) || !E.checkSize(t.shape, args.pos[0]))
    return Val::error();
  size_t typeArg = name == "full" ? 2 : 1;
  if (args.has(typeArg)) {
    if (args[typeArg].kind != Val::Type) {
      E.error(args.pos[typeArg]) << "the element type must be f32, i64, bool, ..., not "
                                 << args[typeArg].describe();
      return Val::error();
    }
    t.dtype = args[typeArg].dtype;
  }
  double value = name == "ones" ? 1 : 0;
  if (name == "full" && !E.numberArg(args[1].kind == Val::Bool ? Val::ofInt(args[1].b) : args[1],
                                     args.pos[1], "the value", value))
    return Val::error();
  int id = E.splat(value, t, args.call);
  return id < 0 ? Val::error() : Val::ofTensor(id);
}

std::optional<Val> castFamily(Elaborator &E, llvm::StringRef name, const Args &args) {
  if (name != "cast" && name != "embedding" && name != "gather")
    return std::nullopt;
  int x;
  if (!E.tensorArg(args[0], args.pos[0], "the first argument of " + name.str(), x) ||
      args.poisoned())
    return Val::error();
  TensorType t = E.typeOf(x);
  if (name == "cast") {
    if (args[1].kind != Val::Type) {
      E.error(args.pos[1]) << "cast needs an element type (f32, i64, bool, ...), not "
                           << args[1].describe();
      return Val::error();
    }
    if (args[1].dtype == t.dtype)
      return Val::ofTensor(x);
    return E.tensorNode(E.makeNode(NodeKind::Cast, args.call, {args[1].dtype, t.shape}, {x}));
  }
  int ids;
  if (!E.tensorArg(args[1], args.pos[1], "the indices", ids))
    return Val::error();
  TensorType it = E.typeOf(ids);
  if (it.dtype != DType::I64 && it.dtype != DType::I32) {
    E.error(args.pos[1]) << "indices must be an i64 or i32 tensor, not " << formatType(it);
    return Val::error();
  }
  int64_t axis = 0;
  if (name == "embedding" && t.rank() != 2) {
    E.error(args.pos[0]) << "an embedding table is [vocabulary, dimension], not " << formatType(t);
    return Val::error();
  }
  if (args.has(2) && !E.axisArg(args[2], args.pos[2], t.rank(), axis))
    return Val::error();
  TensorType out{t.dtype, {}};
  out.shape.append(t.shape.begin(), t.shape.begin() + axis);
  out.shape.append(it.shape.begin(), it.shape.end());
  out.shape.append(t.shape.begin() + axis + 1, t.shape.end());
  if (!E.checkSize(out.shape, args.call))
    return Val::error();
  Node n = E.makeNode(NodeKind::Gather, args.call, out, {x, ids});
  n.i = axis;
  return E.tensorNode(std::move(n));
}

} // namespace

// The neural-network family lives in BuiltinNN.cpp.
namespace tcc::dsl {
std::optional<Val> nnFamily(Elaborator &E, llvm::StringRef name, const std::vector<Val> &v,
                            const std::vector<Pos> &pos, const std::vector<bool> &given, Pos call);
} // namespace tcc::dsl

Val Elaborator::evalScalarBuiltin(llvm::StringRef name, llvm::ArrayRef<Val> args, Pos pos,
                                  bool &handled) {
  handled = false;
  if (args.empty() || !args[0].isNumber())
    return Val::error();
  double x = args[0].f;
  std::optional<double> r = llvm::StringSwitch<std::optional<double>>(name)
                                .Case("sqrt", std::sqrt(x))
                                .Case("exp", std::exp(x))
                                .Case("log", std::log(x))
                                .Case("abs", std::fabs(x))
                                .Case("floor", std::floor(x))
                                .Case("ceil", std::ceil(x))
                                .Case("round", std::round(x))
                                .Case("tanh", std::tanh(x))
                                .Case("sin", std::sin(x))
                                .Case("cos", std::cos(x))
                                .Case("erf", std::erf(x))
                                .Default(std::nullopt);
  if (!r)
    return Val::error();
  handled = true;
  if (args[0].kind == Val::Int && (name == "abs" || name == "floor" || name == "ceil" || name == "round"))
    return Val::ofInt(name == "abs" ? std::llabs(args[0].i) : args[0].i);
  return Val::ofFloat(*r);
}

Val Elaborator::callBuiltin(CallExpr &call) {
  const BuiltinSig *sig = findBuiltin(call.callee);
  if (!sig)
    return Val::error();
  Args args;
  args.call = call.pos;
  for (size_t i = 0; i < sig->params.size(); ++i) {
    Expr *e = i < call.bound.size() ? call.bound[i] : nullptr;
    args.given.push_back(e != nullptr);
    args.pos.push_back(e ? e->pos : call.pos);
    args.v.push_back(e ? eval(*e) : Val::error());
  }
  for (unsigned i = 0; i < sig->required; ++i)
    if (!args.given[i])
      return Val::error(); // reported by the resolver
  bool handled;
  Val scalar = evalScalarBuiltin(call.callee, args.v, call.pos, handled);
  if (handled)
    return scalar;
  static const Family families[] = {elementwiseFamily, reshapeFamily, joinFamily,
                                    reduceFamily,      constantFamily, castFamily};
  for (Family f : families)
    if (std::optional<Val> v = f(*this, call.callee, args))
      return *v;
  if (std::optional<Val> v = nnFamily(*this, call.callee, args.v, args.pos, args.given, call.pos))
    return *v;
  error(call.pos) << "builtin '" << call.callee << "' is not implemented";
  return Val::error();
}
