//===- BuiltinNN.cpp - neural-network builtins and parameter initializers -===//
//
// Convolution, pooling, normalization, softmax, dropout, and the
// initializers of `param` statements. Conventions are PyTorch's where the
// user writes them (batch_norm's momentum, kaiming's `a`, fan-in from
// [out, in, k...]) and ONNX's where the tcc ops take them.
//
//===----------------------------------------------------------------------===//

#include "frontend/dsl/Elaborator.h"

#include <cmath>

using namespace tcc::dsl;

namespace tcc::dsl {
std::optional<Val> nnFamily(Elaborator &E, llvm::StringRef name, const std::vector<Val> &v,
                            const std::vector<Pos> &pos, const std::vector<bool> &given, Pos call);
} // namespace tcc::dsl

namespace {

struct NN {
  Elaborator &E;
  const std::vector<Val> &v;
  const std::vector<Pos> &pos;
  const std::vector<bool> &given;
  Pos call;

  bool has(size_t i) const { return i < given.size() && given[i]; }
  bool tensor(size_t i, llvm::StringRef what, int &node, size_t rank = 0) {
    if (!E.tensorArg(v[i], pos[i], what, node))
      return false;
    const TensorType &t = E.typeOf(node);
    if (!isFloat(t.dtype) || (rank && t.rank() != int64_t(rank))) {
      E.error(pos[i]) << what << " must be a float tensor"
                      << (rank ? " of rank " + std::to_string(rank) : std::string())
                      << ", not " << formatType(t);
      return false;
    }
    return true;
  }
  /// A parameter vector of length N (scale, bias, statistics).
  bool vector(size_t i, llvm::StringRef what, int64_t n, DType dtype, int &node) {
    if (!tensor(i, what, node))
      return false;
    const TensorType &t = E.typeOf(node);
    if (t.rank() != 1 || t.shape[0] != n || t.dtype != dtype) {
      E.error(pos[i]) << what << " must be " << dtypeName(dtype) << "[" << n << "], not "
                      << formatType(t);
      return false;
    }
    return true;
  }
  /// eps and momentum are values of the tensor's type (as PyTorch's export
  /// records them): an f32 model gets the f32 nearest to 1e-5.
  static double ofType(double x, DType t) { return t == DType::F32 ? double(float(x)) : x; }

  std::optional<Val> softmax(llvm::StringRef name);
  std::optional<Val> layerNorm();
  std::optional<Val> batchNorm();
  std::optional<Val> conv();
  std::optional<Val> pool(bool max);
  std::optional<Val> dropout();
};

std::optional<Val> NN::softmax(llvm::StringRef name) {
  int x;
  if (!tensor(0, "the argument of " + name.str(), x))
    return Val::error();
  const TensorType t = E.typeOf(x);
  int64_t axis = t.rank() - 1;
  if (has(1) && !E.axisArg(v[1], pos[1], t.rank(), axis))
    return Val::error();
  Node n = E.makeNode(NodeKind::Softmax, call, t, {x});
  n.op = name.str();
  n.i = axis;
  return E.tensorNode(std::move(n));
}

std::optional<Val> NN::layerNorm() {
  int x, w, b = -1;
  if (!tensor(0, "the input of layer_norm", x))
    return Val::error();
  const TensorType t = E.typeOf(x);
  int64_t axis = t.rank() - 1;
  if (has(3) && !E.axisArg(v[3], pos[3], t.rank(), axis))
    return Val::error();
  double eps = 1e-5;
  if (has(4) && !E.numberArg(v[4], pos[4], "eps", eps))
    return Val::error();
  llvm::ArrayRef<int64_t> normalized = llvm::ArrayRef<int64_t>(t.shape).drop_front(axis);
  for (size_t i : {size_t(1), size_t(2)}) {
    if (i == 2 && !has(2))
      break;
    int &node = i == 1 ? w : b;
    if (!tensor(i, i == 1 ? "the weight of layer_norm" : "the bias of layer_norm", node))
      return Val::error();
    if (llvm::ArrayRef<int64_t>(E.typeOf(node).shape) != normalized ||
        E.typeOf(node).dtype != t.dtype) {
      E.error(pos[i]) << "layer_norm over " << formatType(t) << " from axis " << axis
                      << " needs a " << (i == 1 ? "weight" : "bias") << " of shape "
                      << formatShape(normalized) << ", not " << formatType(E.typeOf(node));
      return Val::error();
    }
  }
  Node n = E.makeNode(NodeKind::LayerNorm, call, t, {x, w});
  if (b >= 0)
    n.operands.push_back(b);
  n.i = axis;
  n.f = ofType(eps, t.dtype);
  return E.tensorNode(std::move(n));
}

std::optional<Val> NN::batchNorm() {
  int x;
  if (!tensor(0, "the input of batch_norm", x))
    return Val::error();
  const TensorType t = E.typeOf(x);
  if (t.rank() < 2) {
    E.error(pos[0]) << "batch_norm normalizes [N, C, ...], not " << formatType(t);
    return Val::error();
  }
  int64_t c = t.shape[1];
  int ops[4];
  static const char *what[] = {"the weight", "the bias", "running_mean", "running_var"};
  for (size_t i = 0; i < 4; ++i)
    if (!vector(i + 1, what[i], c, t.dtype, ops[i]))
      return Val::error();
  // The statistics are state that the training step updates in place: they
  // must be `state` declarations, not computed values or trained parameters.
  for (size_t i = 2; i < 4; ++i) {
    const Node &n = E.graph.nodes[ops[i]];
    if (n.kind != NodeKind::Param || !E.graph.params[n.index].isState) {
      E.error(pos[i + 1]) << what[i]
                          << " must be declared with 'state' (running statistics are "
                             "updated by the training step, not trained)";
      return Val::error();
    }
  }
  double momentum = 0.1, eps = 1e-5;
  if ((has(5) && !E.numberArg(v[5], pos[5], "momentum", momentum)) ||
      (has(6) && !E.numberArg(v[6], pos[6], "eps", eps)))
    return Val::error();
  if (!(momentum >= 0 && momentum <= 1)) {
    E.error(pos[5]) << "momentum must be in [0, 1], got " << momentum;
    return Val::error();
  }
  Node n = E.makeNode(NodeKind::BatchNorm, call, t, {x, ops[0], ops[1], ops[2], ops[3]});
  n.f = ofType(eps, t.dtype);
  // PyTorch's momentum weighs the batch; the tcc op takes ONNX's, which
  // weighs the running value.
  n.g = ofType(1.0 - momentum, t.dtype);
  return E.tensorNode(std::move(n));
}

std::optional<Val> NN::conv() {
  int x, w, b = -1;
  if (!tensor(0, "the input of conv", x) || !tensor(1, "the weight of conv", w))
    return Val::error();
  const TensorType t = E.typeOf(x), wt = E.typeOf(w);
  size_t k = size_t(std::max<int64_t>(t.rank() - 2, 0));
  if (t.rank() < 3 || wt.rank() != t.rank() || wt.dtype != t.dtype) {
    E.error(call) << "conv needs an input [N, C, spatial...] and a weight [M, C/groups, "
                     "kernel...] of one rank and type; got "
                  << formatType(t) << " and " << formatType(wt);
    return Val::error();
  }
  llvm::SmallVector<int64_t, 4> stride(k, 1), padding(k, 0), dilation(k, 1);
  int64_t groups = 1;
  if ((has(3) && !E.intsArg(v[3], pos[3], "stride", k, stride)) ||
      (has(4) && !E.intsArg(v[4], pos[4], "padding", k, padding)) ||
      (has(5) && !E.intsArg(v[5], pos[5], "dilation", k, dilation)) ||
      (has(6) && !E.intArg(v[6], pos[6], "groups", groups)))
    return Val::error();
  if (groups <= 0 || t.shape[1] % groups || wt.shape[0] % groups ||
      wt.shape[1] * groups != t.shape[1]) {
    E.error(pos[1]) << "a weight " << formatType(wt) << " does not fit an input of "
                    << t.shape[1] << " channels in " << groups << " group(s)";
    return Val::error();
  }
  TensorType out{t.dtype, {t.shape[0], wt.shape[0]}};
  for (size_t i = 0; i < k; ++i) {
    if (stride[i] <= 0 || dilation[i] <= 0 || padding[i] < 0) {
      E.error(call) << "conv: strides and dilations must be positive, padding not negative";
      return Val::error();
    }
    int64_t span = dilation[i] * (wt.shape[2 + i] - 1) + 1;
    int64_t size = t.shape[2 + i] + 2 * padding[i] - span;
    if (size < 0) {
      E.error(call) << "conv: the kernel " << formatShape(llvm::ArrayRef(wt.shape).drop_front(2))
                    << " is larger than the padded input " << formatType(t);
      return Val::error();
    }
    out.shape.push_back(size / stride[i] + 1);
  }
  if (has(2)) {
    if (!vector(2, "the bias of conv", wt.shape[0], t.dtype, b))
      return Val::error();
  }
  Node n = E.makeNode(NodeKind::Conv, call, out, {x, w});
  n.a = stride;
  n.b = dilation;
  n.c = padding;
  n.d = padding;
  n.i = groups;
  int id = E.add(std::move(n));
  if (id < 0 || b < 0)
    return id < 0 ? Val::error() : Val::ofTensor(id);
  // The bias is a broadcast add along the channels (fused back later).
  Node bc = E.makeNode(NodeKind::Broadcast, call, out, {b});
  bc.a = {1};
  int bias = E.add(std::move(bc));
  if (bias < 0)
    return Val::error();
  Node add = E.makeNode(NodeKind::Binary, call, out, {id, bias});
  add.op = "add";
  return E.tensorNode(std::move(add));
}

std::optional<Val> NN::pool(bool max) {
  int x;
  if (!E.tensorArg(v[0], pos[0], "the input of pooling", x))
    return Val::error();
  const TensorType t = E.typeOf(x);
  if (t.rank() < 3 || t.dtype == DType::I1) {
    E.error(pos[0]) << "pooling needs a numeric [N, C, spatial...] tensor, not " << formatType(t);
    return Val::error();
  }
  size_t k = size_t(t.rank() - 2);
  llvm::SmallVector<int64_t, 4> kernel, stride, padding(k, 0);
  if (!E.intsArg(v[1], pos[1], "the kernel", k, kernel))
    return Val::error();
  stride = kernel;
  if ((has(2) && !E.intsArg(v[2], pos[2], "stride", k, stride)) ||
      (has(3) && !E.intsArg(v[3], pos[3], "padding", k, padding)))
    return Val::error();
  TensorType out{t.dtype, {t.shape[0], t.shape[1]}};
  for (size_t i = 0; i < k; ++i) {
    if (kernel[i] <= 0 || stride[i] <= 0 || padding[i] < 0 || 2 * padding[i] > kernel[i]) {
      E.error(call) << "pooling: kernel and stride must be positive, padding at most half the "
                       "kernel";
      return Val::error();
    }
    int64_t size = t.shape[2 + i] + 2 * padding[i] - kernel[i];
    if (size < 0) {
      E.error(pos[1]) << "the pooling window " << formatShape(kernel)
                      << " is larger than the input " << formatType(t);
      return Val::error();
    }
    out.shape.push_back(size / stride[i] + 1);
  }
  Node n = E.makeNode(NodeKind::Pool, call, out, {x});
  n.op = max ? "max" : "avg";
  n.a = kernel;
  n.b = stride;
  n.c = padding;
  n.d = padding;
  n.flag = !max && has(4) && v[4].kind == Val::Bool && v[4].b;
  return E.tensorNode(std::move(n));
}

std::optional<Val> NN::dropout() {
  int x;
  if (!tensor(0, "the input of dropout", x))
    return Val::error();
  double p = 0.1;
  if (has(1) && !E.numberArg(v[1], pos[1], "the dropout probability", p))
    return Val::error();
  if (!(p >= 0 && p < 1)) {
    E.error(pos[1]) << "the dropout probability must be in [0, 1), got " << p;
    return Val::error();
  }
  Node n = E.makeNode(NodeKind::Dropout, call, E.typeOf(x), {x});
  n.f = p;
  n.i = E.dropoutStreams++;
  return E.tensorNode(std::move(n));
}

} // namespace

std::optional<Val> tcc::dsl::nnFamily(Elaborator &E, llvm::StringRef name,
                                      const std::vector<Val> &v, const std::vector<Pos> &pos,
                                      const std::vector<bool> &given, Pos call) {
  for (size_t i = 0; i < v.size(); ++i)
    if (given[i] && v[i].isError())
      return Val::error();
  NN nn{E, v, pos, given, call};
  if (name == "softmax" || name == "log_softmax")
    return nn.softmax(name);
  if (name == "layer_norm")
    return nn.layerNorm();
  if (name == "batch_norm")
    return nn.batchNorm();
  if (name == "conv")
    return nn.conv();
  if (name == "max_pool" || name == "avg_pool")
    return nn.pool(name == "max_pool");
  if (name == "dropout")
    return nn.dropout();
  if (name == "matmul")
    return E.matmul(v[0], v[1], call);
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Initializers
//===----------------------------------------------------------------------===//

/// FNV-1a of the parameter's name: the default seed, so that adding a
/// parameter does not change the others' values.
static uint64_t nameSeed(llvm::StringRef name) {
  uint64_t h = 14695981039346656037ull;
  for (char c : name)
    h = (h ^ uint8_t(c)) * 1099511628211ull;
  return h;
}

std::optional<InitSpec> Elaborator::evalInit(const ParamStmt &stmt, const std::string &fullName,
                                             const TensorType &type) {
  const CallExpr &init = *stmt.init;
  const BuiltinSig *sig = findInitializer(init.callee);
  if (!sig)
    return std::nullopt;
  std::vector<double> args(sig->params.size(), NAN);
  InitSpec spec;
  spec.seed = nameSeed(fullName);
  for (size_t i = 0; i < sig->params.size(); ++i) {
    Expr *e = i < init.bound.size() ? init.bound[i] : nullptr;
    if (!e)
      continue;
    Val v = eval(*e);
    if (sig->params[i] == "seed") {
      int64_t seed;
      if (!intArg(v, e->pos, "the seed", seed))
        return std::nullopt;
      spec.seed = uint64_t(seed);
      continue;
    }
    if (!numberArg(v, e->pos, sig->params[i], args[i]))
      return std::nullopt;
  }
  llvm::StringRef kind = init.callee;
  // PyTorch's fan-in / fan-out of a weight [out, in, kernel...].
  int64_t receptive = 1;
  for (int64_t d = 2; d < type.rank(); ++d)
    receptive *= type.shape[d];
  // A vector's fan is its length; a scalar's is 1 (it has no dimension).
  double vectorFan = type.rank() == 1 ? double(type.shape[0]) : 1.0;
  double fanIn = type.rank() >= 2 ? double(type.shape[1] * receptive) : vectorFan;
  double fanOut = type.rank() >= 2 ? double(type.shape[0] * receptive) : vectorFan;
  auto arg = [&](size_t i, double dflt) { return std::isnan(args[i]) ? dflt : args[i]; };
  if (kind == "zeros" || kind == "ones" || kind == "constant") {
    spec.kind = InitSpec::Constant;
    spec.a = kind == "ones" ? 1 : kind == "zeros" ? 0 : args[0];
  } else if (kind == "uniform" || kind == "normal") {
    spec.kind = kind == "uniform" ? InitSpec::Uniform : InitSpec::Normal;
    spec.a = args[0];
    spec.b = args[1];
    if (kind == "uniform" ? !(spec.a < spec.b) : !(spec.b > 0)) {
      error(init.pos) << (kind == "uniform" ? "uniform(low, high) needs low < high"
                                            : "normal(mean, std) needs std > 0");
      return std::nullopt;
    }
  } else if (kind.starts_with("kaiming")) {
    double a = arg(0, 0.0);
    double gain = std::sqrt(2.0 / (1.0 + a * a));
    double std = gain / std::sqrt(fanIn);
    spec.kind = kind.ends_with("uniform") ? InitSpec::Uniform : InitSpec::Normal;
    spec.a = spec.kind == InitSpec::Uniform ? -std::sqrt(3.0) * std : 0;
    spec.b = spec.kind == InitSpec::Uniform ? std::sqrt(3.0) * std : std;
  } else {
    double gain = arg(0, 1.0);
    double std = gain * std::sqrt(2.0 / (fanIn + fanOut));
    spec.kind = kind.ends_with("uniform") ? InitSpec::Uniform : InitSpec::Normal;
    spec.a = spec.kind == InitSpec::Uniform ? -std::sqrt(3.0) * std : 0;
    spec.b = spec.kind == InitSpec::Uniform ? std::sqrt(3.0) * std : std;
  }
  return spec;
}
