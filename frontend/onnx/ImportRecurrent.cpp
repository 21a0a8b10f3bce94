//===- ImportRecurrent.cpp - ONNX LSTM / GRU / RNN -> tcc ops -------------===//
//
// The recurrent ops are imported as their equations, unrolled over the
// (static) sequence: one matmul of the whole input sequence by the input
// weights, then per time step a matmul of the previous hidden state by the
// recurrent weights, the gates' activations and the state update, all in
// ordinary tcc ops. Autodiff, fusion, the oneDNN / cuBLASLt matmuls and the
// memory plan then treat the recurrence like any other graph: every op on it
// already has a gradient rule, so backpropagation through time needs no rule
// of its own. Sequences are short in the models tcc compiles (a full unroll of
// T steps costs T copies of a handful of ops); a loop op would be the next
// step for long sequences.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/ImportContext.h"

using namespace mlir;
using namespace tcc;
using namespace tcc::onnx_frontend;

namespace {

using NC = NodeContext;

/// Which recurrent op: the number of gates and the default activations.
enum class Cell { Lstm, Gru, Rnn };

int64_t gateCount(Cell cell) {
  switch (cell) {
  case Cell::Lstm:
    return 4;
  case Cell::Gru:
    return 3;
  case Cell::Rnn:
    return 1;
  }
  return 0;
}

/// One activation of the `activations` attribute with its alpha / beta.
struct Activation {
  std::string name;
  double alpha = 0, beta = 0;
};

Value add(NC &ctx, Value a, Value b) { return ctx.create<AddOp>(a, b); }
Value mul(NC &ctx, Value a, Value b) { return ctx.create<MulOp>(a, b); }

/// f(x) for one of ONNX's recurrent activation functions (the list in the
/// LSTM operator's description).
Value activate(NC &ctx, const Activation &f, Value x) {
  auto scalar = [&](double v) { return ctx.splatLike(x, v); };
  const std::string &n = f.name;
  if (n == "Sigmoid")
    return ctx.create<SigmoidOp>(x);
  if (n == "Tanh")
    return ctx.create<TanhOp>(x);
  if (n == "Relu")
    return ctx.create<ReluOp>(x);
  // alpha x + beta, the scaled value built first (argument order is the
  // host compiler's, and the IR must not depend on it).
  auto affine = [&] {
    Value scaled = mul(ctx, x, scalar(f.alpha));
    return add(ctx, scaled, scalar(f.beta));
  };
  if (n == "Affine")
    return affine();
  if (n == "LeakyRelu")
    return ctx.create<LeakyReluOp>(x, ctx.b.getF64FloatAttr(f.alpha));
  if (n == "ThresholdedRelu") {
    Value above = ctx.create<CompareOp>(CmpPredicate::gt, x, scalar(f.alpha));
    return ctx.create<SelectOp>(above, x, scalar(0.0));
  }
  if (n == "ScaledTanh") {
    Value alpha = scalar(f.alpha);
    return mul(ctx, alpha, ctx.create<TanhOp>(mul(ctx, x, scalar(f.beta))));
  }
  if (n == "HardSigmoid")
    return ctx.create<ClampOp>(affine(), ctx.b.getF64FloatAttr(0.0), ctx.b.getF64FloatAttr(1.0));
  if (n == "Elu")
    return ctx.create<EluOp>(x, ctx.b.getF64FloatAttr(f.alpha));
  if (n == "Softsign")
    return ctx.create<DivOp>(
        x, add(ctx, scalar(1.0), ctx.create<AbsOp>(x)));
  if (n == "Softplus")
    return ctx.create<SoftplusOp>(x);
  return {};
}

/// The default alpha of the activations that have one (ONNX's table).
double defaultAlpha(StringRef name) {
  if (name == "LeakyRelu")
    return 0.01;
  if (name == "ThresholdedRelu" || name == "Elu" || name == "Affine" ||
      name == "ScaledTanh")
    return 1.0;
  if (name == "HardSigmoid")
    return 0.2;
  return 0.0;
}
double defaultBeta(StringRef name) {
  if (name == "HardSigmoid")
    return 0.5;
  if (name == "ScaledTanh")
    return 1.0;
  return 0.0;
}

/// Reads `activations` / `activation_alpha` / `activation_beta`: `perDir`
/// functions per direction, defaults when the attribute is absent.
FailureOr<SmallVector<Activation>> readActivations(NC &ctx, Cell cell,
                                                   int64_t dirs) {
  SmallVector<std::string> defaults;
  if (cell == Cell::Lstm)
    defaults = {"Sigmoid", "Tanh", "Tanh"};
  else if (cell == Cell::Gru)
    defaults = {"Sigmoid", "Tanh"};
  else
    defaults = {"Tanh"};
  size_t perDir = defaults.size();
  SmallVector<std::string> names;
  if (const onnx::AttributeProto *a = ctx.attr("activations")) {
    for (const std::string &s : a->strings())
      names.push_back(s);
  } else {
    for (int64_t d = 0; d < dirs; ++d)
      llvm::append_range(names, defaults);
  }
  if (names.size() != perDir * size_t(dirs))
    return ctx.error() << "activations lists " << names.size()
                       << " functions; this node needs " << perDir * dirs
                       << " (" << perDir << " per direction)",
           failure();
  SmallVector<double> alphas = ctx.getFloats("activation_alpha");
  SmallVector<double> betas = ctx.getFloats("activation_beta");
  SmallVector<Activation> out;
  for (auto [i, raw] : llvm::enumerate(names)) {
    Activation f;
    // The names are case-sensitive in the spec, but exporters differ in case.
    static const char *const known[] = {
        "Sigmoid",    "Tanh",      "Relu", "Affine",  "LeakyRelu",
        "ThresholdedRelu", "ScaledTanh", "HardSigmoid", "Elu", "Softsign",
        "Softplus"};
    for (const char *k : known)
      if (StringRef(raw).equals_insensitive(k))
        f.name = k;
    if (f.name.empty())
      return ctx.error() << "activation '" << raw << "' is not supported",
             failure();
    f.alpha = i < alphas.size() ? alphas[i] : defaultAlpha(f.name);
    f.beta = i < betas.size() ? betas[i] : defaultBeta(f.name);
    out.push_back(f);
  }
  return out;
}

/// A recurrent node's inputs and attributes, checked; X in [seq, batch,
/// in] order whatever the layout, the optional inputs null when absent.
struct RecurrentNode {
  Cell cell;
  Value x, w, r, bias, h0, c0, peep;
  std::string direction;
  int64_t layout = 0, dirs = 1, gates = 0, hidden = 0, seq = 0, batch = 0, inSize = 0;
  Type et;
  SmallVector<Activation> acts;
  bool hasClip = false, inputForget = false, linearBeforeReset = false;
  double clip = 0.0;
};

/// Reads and checks the node's inputs and attributes (any opset from 7:
/// layout from 14).
FailureOr<RecurrentNode> readRecurrent(NC &ctx, Cell cell) {
  RecurrentNode n;
  n.cell = cell;
  Value x = ctx.input(0), w = ctx.input(1), r = ctx.input(2);
  if (!x || !w || !r)
    return failure();
  if (!NC::isFloat(x))
    return ctx.error() << "X must be a float tensor", failure();
  for (auto [name, v] : {std::pair<StringRef, Value>{"X", x},
                         std::pair<StringRef, Value>{"W", w},
                         std::pair<StringRef, Value>{"R", r}})
    if (NC::rank(v) != 3)
      return ctx.error() << name << " must have rank 3, got shape "
                         << NC::type(v),
             failure();
  int64_t layout = ctx.getInt("layout", 0);
  if (layout != 0 && layout != 1)
    return ctx.error() << "layout must be 0 or 1, got " << layout, failure();
  std::string direction = ctx.getString("direction", "forward");
  int64_t dirs = direction == "bidirectional" ? 2 : 1;
  if (direction != "forward" && direction != "reverse" &&
      direction != "bidirectional")
    return ctx.error() << "direction must be forward, reverse or "
                          "bidirectional, got '"
                       << direction << "'",
           failure();
  int64_t gates = gateCount(cell);
  ArrayRef<int64_t> ws = NC::shape(w);
  int64_t hidden = ctx.getInt("hidden_size", ws[1] / gates);
  if (layout == 1)
    x = ctx.transpose(x, {1, 0, 2}); // [batch, seq, in] -> [seq, batch, in]
  int64_t seq = NC::shape(x)[0], batch = NC::shape(x)[1],
          inSize = NC::shape(x)[2];
  if (seq < 1 || batch < 1 || inSize < 1 || hidden < 1)
    return ctx.error() << "the sequence (" << seq << "), batch (" << batch << "), input ("
                       << inSize << ") and hidden (" << hidden << ") sizes must be positive",
           failure();
  Type et = NC::elementType(x);
  auto expect = [&](StringRef name, Value v,
                    ArrayRef<int64_t> shape) -> LogicalResult {
    if (NC::elementType(v) != et)
      return ctx.error() << name << " has element type " << NC::elementType(v)
                         << ", X has " << et,
             failure();
    if (NC::shape(v) == shape)
      return success();
    auto err = ctx.error() << name << " has shape "
                           << NC::type(v) << "; expected [";
    llvm::interleaveComma(shape, err);
    return err << "] (hidden_size " << hidden << ", " << dirs
               << " direction(s))",
           failure();
  };
  if (failed(expect("W", w, {dirs, gates * hidden, inSize})) ||
      failed(expect("R", r, {dirs, gates * hidden, hidden})))
    return failure();
  Value bias;
  if (ctx.hasInput(3)) {
    bias = ctx.input(3);
    if (!bias || failed(expect("B", bias, {dirs, 2 * gates * hidden})))
      return failure();
  }
  if (ctx.hasInput(4)) {
    // Variable lengths would need per-sample masks (and a per-sample start
    // for the reverse direction); accept only lengths that change nothing.
    auto lens = ctx.intsInput(4, "sequence_lens");
    if (failed(lens))
      return failure();
    bool full = int64_t(lens->size()) == batch &&
                llvm::all_of(*lens, [&](int64_t l) { return l == seq; });
    if (!full)
      return ctx.error()
                 << "sequence_lens other than the full length " << seq
                 << " for every sample is not supported (pad the sequences "
                    "and drop the input)",
             failure();
  }
  auto stateInput = [&](unsigned i, StringRef name) -> FailureOr<Value> {
    if (!ctx.hasInput(i))
      return Value();
    Value v = ctx.input(i);
    if (!v)
      return failure();
    if (layout == 1 && NC::rank(v) == 3)
      v = ctx.transpose(v, {1, 0, 2}); // [batch, dirs, H] -> [dirs, batch, H]
    if (failed(expect(name, v, {dirs, batch, hidden})))
      return failure();
    return v;
  };
  FailureOr<Value> h0 = stateInput(5, "initial_h");
  FailureOr<Value> c0 =
      cell == Cell::Lstm ? stateInput(6, "initial_c") : FailureOr<Value>(Value());
  if (failed(h0) || failed(c0))
    return failure();
  Value peep;
  if (cell == Cell::Lstm && ctx.hasInput(7)) {
    peep = ctx.input(7);
    if (!peep || failed(expect("P", peep, {dirs, 3 * hidden})))
      return failure();
  }
  auto acts = readActivations(ctx, cell, dirs);
  if (failed(acts))
    return failure();
  double clip = ctx.getFloat("clip", 0.0);
  bool hasClip = ctx.hasAttr("clip");
  if (hasClip && clip <= 0)
    return ctx.error() << "clip must be positive, got " << clip, failure();
  n.x = x, n.w = w, n.r = r, n.bias = bias, n.h0 = *h0, n.c0 = *c0, n.peep = peep;
  n.direction = direction;
  n.layout = layout, n.dirs = dirs, n.gates = gates, n.hidden = hidden;
  n.seq = seq, n.batch = batch, n.inSize = inSize, n.et = et;
  n.acts = std::move(*acts);
  n.hasClip = hasClip, n.clip = clip;
  n.inputForget = ctx.getInt("input_forget", 0) != 0;
  n.linearBeforeReset = ctx.getInt("linear_before_reset", 0) != 0;
  return n;
}

/// What one direction's steps read besides the state: its activations, R^T
/// (for GRU also its z/r columns and its candidate columns, multiplied
/// apart: the candidate reads r * H or is reset after the product), the
/// recurrent bias Rb and the LSTM peepholes broadcast over the batch.
struct DirectionWeights {
  ArrayRef<Activation> f;
  Value rT, rzrT, rhT, rb, pi, po, pf;
};

/// One step of the cell: H (and C for LSTM) from the step's input
/// projection XT [batch, G*H]. Returns false when a value could not be
/// built.
bool cellStep(NC &ctx, const RecurrentNode &n, const DirectionWeights &k, Value xt, Value &h,
              Value &c) {
  int64_t hidden = n.hidden, batch = n.batch;
  auto inGate = [&](int64_t g) { return ctx.sliceAxis(xt, 1, g * hidden, hidden); };
  auto clipped = [&](Value v) {
    if (!n.hasClip)
      return v;
    return ctx.create<ClampOp>(v, ctx.b.getF64FloatAttr(-n.clip), ctx.b.getF64FloatAttr(n.clip));
  };
  ArrayRef<Activation> f = k.f;
  if (n.cell == Cell::Lstm) {
    // Gate order i, o, f, c.
    Value hr = ctx.create<MatmulOp>(h, k.rT);
    auto pre = [&](int64_t g) {
      Value in = inGate(g);
      return add(ctx, in, ctx.sliceAxis(hr, 1, g * hidden, hidden));
    };
    Value preI = pre(0), preF = pre(2);
    if (n.peep) {
      preI = add(ctx, preI, mul(ctx, k.pi, c));
      preF = add(ctx, preF, mul(ctx, k.pf, c));
    }
    Value it = activate(ctx, f[0], clipped(preI));
    Value ft = n.inputForget ? ctx.create<SubOp>(ctx.splatLike(it, 1.0), it)
                             : activate(ctx, f[0], clipped(preF));
    Value ct = activate(ctx, f[1], clipped(pre(3)));
    Value kept = mul(ctx, ft, c);
    c = add(ctx, kept, mul(ctx, it, ct));
    Value preO = pre(1);
    if (n.peep)
      preO = add(ctx, preO, mul(ctx, k.po, c));
    Value ot = activate(ctx, f[0], clipped(preO));
    h = mul(ctx, ot, activate(ctx, f[2], c));
  } else if (n.cell == Cell::Gru) {
    // Gate order z, r, h.
    Value hzr = ctx.create<MatmulOp>(h, k.rzrT); // [batch, 2H]
    auto gate = [&](int64_t g) {
      Value in = inGate(g);
      return add(ctx, in, ctx.sliceAxis(hzr, 1, g * hidden, hidden));
    };
    Value zt = activate(ctx, f[0], clipped(gate(0)));
    Value rt = activate(ctx, f[0], clipped(gate(1)));
    Value cand;
    if (n.linearBeforeReset) {
      Value hh = ctx.create<MatmulOp>(h, k.rhT);
      if (k.rb)
        hh = add(ctx, hh, ctx.broadcastTo(ctx.sliceAxis(k.rb, 0, 2 * hidden, hidden),
                                          {batch, hidden}));
      Value in = inGate(2);
      cand = add(ctx, in, mul(ctx, rt, hh));
    } else {
      Value in = inGate(2);
      cand = add(ctx, in, ctx.create<MatmulOp>(mul(ctx, rt, h), k.rhT));
    }
    Value ht = activate(ctx, f[1], clipped(cand));
    // H = (1 - z) h~ + z H_prev = h~ + z (H_prev - h~).
    h = add(ctx, ht, mul(ctx, zt, ctx.create<SubOp>(h, ht)));
  } else {
    Value in = inGate(0);
    h = activate(ctx, f[0], clipped(add(ctx, in, ctx.create<MatmulOp>(h, k.rT))));
  }
  return bool(h);
}

/// One direction's outputs: Y [seq, 1, batch, H], the last H and C
/// [1, batch, H] (C null but for LSTM).
struct DirectionOutputs {
  Value y, h, c;
};

/// Unrolls direction D of node N over the sequence.
FailureOr<DirectionOutputs> unrollDirection(NC &ctx, const RecurrentNode &n, int64_t d) {
  int64_t seq = n.seq, batch = n.batch, hidden = n.hidden, gates = n.gates;
  bool reverse = n.direction == "reverse" || d == 1;
  auto dirSlice = [&](Value v) {
    Value s = ctx.sliceAxis(v, 0, d, 1);
    SmallVector<int64_t> shape(NC::shape(v).drop_front());
    return ctx.reshape(s, shape);
  };
  DirectionWeights k;
  // The weights transposed once for all steps: W^T [in, G*H], R^T [H, G*H].
  Value wT = ctx.transpose(dirSlice(n.w), {1, 0});
  k.rT = ctx.transpose(dirSlice(n.r), {1, 0});
  // The input projection of every step at once: [seq*batch, G*H].
  Value xw = ctx.create<MatmulOp>(ctx.reshape(n.x, {seq * batch, n.inSize}), wT);
  if (n.bias) {
    Value bd = dirSlice(n.bias); // [2*G*H]
    Value wb = ctx.sliceAxis(bd, 0, 0, gates * hidden);
    k.rb = ctx.sliceAxis(bd, 0, gates * hidden, gates * hidden);
    Value inputBias = add(ctx, wb, k.rb);
    if (n.cell == Cell::Gru && n.linearBeforeReset) {
      // Rb_h stays inside r * (H R_h^T + Rb_h); z and r add both biases.
      inputBias = ctx.create<ConcatOp>(
          ValueRange{ctx.sliceAxis(inputBias, 0, 0, 2 * hidden),
                     ctx.sliceAxis(wb, 0, 2 * hidden, hidden)},
          0);
    }
    xw = add(ctx, xw, ctx.broadcastTo(inputBias, {seq * batch, gates * hidden}));
  }
  xw = ctx.reshape(xw, {seq, batch, gates * hidden});
  int64_t perDir = int64_t(n.acts.size()) / n.dirs;
  k.f = ArrayRef<Activation>(n.acts).slice(d * perDir, perDir);
  auto stateOf = [&](Value init) {
    if (!init)
      return ctx.splat(n.et, {batch, hidden}, 0.0);
    return dirSlice(init);
  };
  Value h = stateOf(n.h0), c = n.cell == Cell::Lstm ? stateOf(n.c0) : Value();
  // Peepholes [3H]: i, o, f, each broadcast over the batch.
  if (n.peep) {
    Value pd = dirSlice(n.peep);
    auto row = [&](int64_t g) {
      return ctx.broadcastTo(ctx.sliceAxis(pd, 0, g * hidden, hidden), {batch, hidden});
    };
    k.pi = row(0), k.po = row(1), k.pf = row(2);
  }
  if (n.cell == Cell::Gru) {
    k.rzrT = ctx.sliceAxis(k.rT, 1, 0, 2 * hidden);
    k.rhT = ctx.sliceAxis(k.rT, 1, 2 * hidden, hidden);
  }
  SmallVector<Value> steps(seq);
  for (int64_t i = 0; i < seq; ++i) {
    int64_t t = reverse ? seq - 1 - i : i;
    Value xt = ctx.reshape(ctx.sliceAxis(xw, 0, t, 1), {batch, gates * hidden});
    if (!cellStep(ctx, n, k, xt, h, c))
      return failure();
    steps[t] = ctx.reshape(h, {1, 1, batch, hidden});
  }
  DirectionOutputs out;
  out.y = seq == 1 ? steps[0] : ctx.create<ConcatOp>(steps, 0);
  out.h = ctx.reshape(h, {1, batch, hidden});
  if (c)
    out.c = ctx.reshape(c, {1, batch, hidden});
  return out;
}

/// Imports LSTM, GRU or RNN, unrolled over the sequence.
LogicalResult importRecurrent(NC &ctx, Cell cell) {
  FailureOr<RecurrentNode> n = readRecurrent(ctx, cell);
  if (failed(n))
    return failure();
  SmallVector<Value> ys, hs, cs;
  for (int64_t d = 0; d < n->dirs; ++d) {
    FailureOr<DirectionOutputs> out = unrollDirection(ctx, *n, d);
    if (failed(out))
      return failure();
    ys.push_back(out->y);
    hs.push_back(out->h);
    if (out->c)
      cs.push_back(out->c);
  }
  auto joined = [&](ArrayRef<Value> parts, int64_t axis) {
    return parts.size() == 1 ? parts[0] : ctx.create<ConcatOp>(parts, axis);
  };
  Value y = joined(ys, 1);   // [seq, dirs, batch, H]
  Value yh = joined(hs, 0);  // [dirs, batch, H]
  Value yc = cs.empty() ? Value() : joined(cs, 0);
  if (n->layout == 1) {
    y = ctx.transpose(y, {2, 0, 1, 3}); // [batch, seq, dirs, H]
    yh = ctx.transpose(yh, {1, 0, 2});  // [batch, dirs, H]
    if (yc)
      yc = ctx.transpose(yc, {1, 0, 2});
  }
  ctx.setOutput(0, y);
  ctx.setOutput(1, yh);
  if (yc)
    ctx.setOutput(2, yc);
  return success();
}

LogicalResult importLstm(NC &ctx) { return importRecurrent(ctx, Cell::Lstm); }
LogicalResult importGru(NC &ctx) { return importRecurrent(ctx, Cell::Gru); }
LogicalResult importRnn(NC &ctx) { return importRecurrent(ctx, Cell::Rnn); }

} // namespace

void tcc::onnx_frontend::registerRecurrentHandlers(HandlerTable &table) {
  table["LSTM"] = importLstm;
  table["GRU"] = importGru;
  table["RNN"] = importRnn;
}
