//===- Elaborate.cpp - running a model program at compile time ------------===//
//
// Executes the model's body on compile-time values: numbers, lists, element
// types, and tensors that are graph nodes whose types are inferred and
// checked here. Function calls are inlined (a function's parameters are
// named by the scope its call gives with `as`), loops unrolled, `if` taken on
// compile-time conditions. Work and size are budgeted, so no program can
// make the compiler loop or allocate without bound.
//
//===----------------------------------------------------------------------===//

#include "frontend/dsl/Elaborator.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>

using namespace tcc::dsl;

namespace {
/// Statements and loop iterations one compile may execute, nodes it may
/// build, and calls it may nest: far beyond any real model, small enough that
/// a fuzzer's input finishes quickly.
constexpr int64_t kMaxWork = 2'000'000;
constexpr size_t kMaxNodes = 500'000;
constexpr size_t kMaxCallDepth = 64;
constexpr int64_t kMaxListValues = 1'000'000;
constexpr int kMaxListDepth = 100;
} // namespace

const char *Val::describe() const {
  switch (kind) {
  case Error: return "an erroneous value";
  case Int: return "an integer";
  case Float: return "a number";
  case Bool: return "a boolean";
  case Type: return "an element type";
  case List: return "a list";
  case Tensor: return "a tensor";
  }
  return "a value";
}

mlir::InFlightDiagnostic Elaborator::error(Pos pos) {
  if (!reportedAt.insert({pos.line, pos.col}).second) {
    mlir::InFlightDiagnostic d = mlir::emitError(diags.loc(pos));
    d.abandon();
    return d;
  }
  mlir::InFlightDiagnostic d = diags.error(pos);
  for (auto it = frames.rbegin(); it != frames.rend(); ++it)
    if (it->fn)
      d.attachNote(diags.loc(it->callPos)) << "in the call of '" << it->fn->name.name << "' here";
  return d;
}

bool Elaborator::charge(Pos pos) {
  if (stopped())
    return false;
  if (++work > kMaxWork) {
    outOfBudget = true;
    error(pos) << "the model takes more than " << kMaxWork
               << " steps to elaborate (a loop or a recursion too large)";
    return false;
  }
  return true;
}

int Elaborator::add(Node node) {
  if (outOfBudget)
    return -1;
  if (graph.nodes.size() >= kMaxNodes) {
    outOfBudget = true;
    error(node.pos) << "the model has more than " << kMaxNodes << " operations";
    return -1;
  }
  graph.nodes.push_back(std::move(node));
  return int(graph.nodes.size() - 1);
}

Node Elaborator::makeNode(NodeKind kind, Pos pos, TensorType type, llvm::ArrayRef<int> operands) {
  Node n;
  n.kind = kind;
  n.pos = pos;
  n.type = std::move(type);
  n.operands.assign(operands.begin(), operands.end());
  return n;
}

bool Elaborator::checkSize(llvm::ArrayRef<int64_t> shape, Pos pos) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d <= 0) {
      error(pos) << "dimension " << d << " in shape " << formatShape(shape)
                 << " is not positive";
      return false;
    }
    if (count > kMaxElements / d) {
      error(pos) << "shape " << formatShape(shape) << " has more than 2^40 elements";
      return false;
    }
    count *= d;
  }
  return true;
}

Val *Elaborator::lookup(llvm::StringRef name) {
  if (frames.empty())
    return nullptr;
  auto &scopes = frames.back().scopes;
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
    auto found = it->find(name);
    if (found != it->end())
      return &found->second;
  }
  return nullptr;
}

//===----------------------------------------------------------------------===//
// The model
//===----------------------------------------------------------------------===//

void Elaborator::bindConstants() {
  frames.emplace_back(); // constants see only builtins and earlier constants
  for (ConstDecl &c : program.consts) {
    Val v = eval(*c.value);
    auto bound = options.dims.find(c.name.name);
    if (bound != options.dims.end()) {
      if (v.kind != Val::Int && !v.isError())
        error(c.name.pos) << "--dim " << c.name.name << "=" << bound->second
                          << " overrides a constant that is " << v.describe()
                          << ", not an integer";
      v = Val::ofInt(bound->second);
    }
    globals[c.name.name] = v;
  }
  frames.pop_back();
  for (auto &fn : program.fns)
    functions.try_emplace(fn->name.name, fn.get());
}

void Elaborator::bindInputs(const ModelDecl &model) {
  llvm::StringSet<> symbols;
  for (const InputDecl &in : model.inputs) {
    InputInfo info{in.name.name, {}, in.name.pos};
    std::optional<DType> dt = parseDType(in.dtype.name);
    if (!dt) {
      std::string near = closestName(in.dtype.name, {"f32", "f64", "f16", "bf16", "i64", "i32", "bool"});
      auto d = error(in.dtype.pos) << "unknown element type '" << in.dtype.name << "'";
      if (!near.empty())
        d << "; did you mean '" << near << "'?";
    }
    info.type.dtype = dt.value_or(DType::F32);
    bool ok = bool(dt);
    for (size_t i = 0; i < in.dims.size(); ++i) {
      const InputDecl::Dim &dim = in.dims[i];
      int64_t size = dim.value;
      if (!dim.symbol.empty()) {
        symbols.insert(dim.symbol);
        auto it = options.dims.find(dim.symbol);
        Val *known = globals.count(dim.symbol) ? &globals[dim.symbol] : nullptr;
        if (it != options.dims.end() && i == 0 && options.batch && *options.batch != it->second) {
          // Both bind the batch dimension: neither may win silently.
          error(dim.pos) << "--batch=" << *options.batch << " and --dim " << dim.symbol << "="
                         << it->second << " both bind the first dimension of input '"
                         << in.name.name << "'; give one of them";
          ok = false;
          continue;
        }
        if (it != options.dims.end())
          size = it->second;
        else if (known && known->kind == Val::Int)
          size = known->i;
        else if (i == 0 && options.batch)
          size = *options.batch;
        else {
          error(dim.pos) << "dimension '" << dim.symbol << "' of input '" << in.name.name
                         << "' is symbolic; bind it with " << (i == 0 ? "--batch=N or " : "")
                         << "--dim " << dim.symbol << "=N";
          ok = false;
          continue;
        }
        auto [slot, inserted] = globals.try_emplace(dim.symbol, Val::ofInt(size));
        if (!inserted && slot->second.kind == Val::Int && slot->second.i != size) {
          error(dim.pos) << "dimension '" << dim.symbol << "' is bound to " << slot->second.i
                         << " and to " << size;
          ok = false;
        }
      } else if (size <= 0) {
        error(dim.pos) << "dimension " << size << " is not positive";
        ok = false;
      }
      info.type.shape.push_back(size);
    }
    if (ok && !checkSize(info.type.shape, in.name.pos))
      ok = false;
    Node n = makeNode(NodeKind::Input, in.name.pos, info.type);
    n.index = int(graph.inputs.size());
    graph.inputs.push_back(info);
    frames.back().scopes.back()[in.name.name] = ok ? tensorNode(std::move(n)) : Val::error();
  }
  for (const auto &bound : options.dims)
    if (!symbols.count(bound.getKey()) &&
        !llvm::any_of(program.consts, [&](const ConstDecl &c) { return c.name.name == bound.getKey(); }))
      error(model.name.pos) << "--dim " << bound.getKey()
                            << " binds nothing: the model has no such symbolic dimension or constant";
}

Graph Elaborator::run() {
  if (program.models.empty())
    return std::move(graph);
  const ModelDecl &model = *program.models[0];
  graph.modelName = model.name.name;
  bindConstants();
  frames.emplace_back();
  frames.back().scopes.emplace_back();
  bindInputs(model);
  execBlock(model.body);
  frames.pop_back();
  checkStateUses();
  // Outputs may sit in an `if`: whether there is one is known only now.
  if (graph.outputs.empty() && !diags.errorCount())
    error(model.end) << "model '" << model.name.name
                     << "' has no output (output NAME = expression)";
  return std::move(graph);
}

void Elaborator::checkStateUses() {
  // State is not trained: only batch norms read it (as running statistics,
  // which the training step updates); anything else would train it.
  for (const Node &n : graph.nodes)
    for (size_t i = 0; i < n.operands.size(); ++i) {
      const Node &def = graph.nodes[n.operands[i]];
      if (def.kind != NodeKind::Param || !graph.params[def.index].isState)
        continue;
      if (n.kind == NodeKind::BatchNorm && i >= 3)
        continue;
      error(n.pos) << "state '" << graph.params[def.index].name
                   << "' is read here; state holds batch-norm running statistics and is read "
                      "only by batch_norm (use 'param' for a tensor that is trained)";
    }
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

void Elaborator::execBlock(const Block &block) {
  frames.back().scopes.emplace_back();
  for (const StmtPtr &s : block) {
    if (!charge(s->pos))
      break;
    execStmt(*s);
  }
  frames.back().scopes.pop_back();
}

void Elaborator::execStmt(const Stmt &stmt) {
  auto &scope = frames.back().scopes.back();
  if (auto *let = llvm::dyn_cast<LetStmt>(&stmt)) {
    Val v = eval(*let->value);
    if (let->names.size() == 1) {
      scope[let->names[0].name] = v;
      return;
    }
    if (!v.isError() && (v.kind != Val::List || v.elems.size() != let->names.size()))
      error(let->value->pos) << "expected " << let->names.size() << " values to unpack, got "
                             << (v.kind == Val::List ? std::to_string(v.elems.size()) + " values"
                                                     : std::string(v.describe()));
    for (size_t i = 0; i < let->names.size(); ++i)
      scope[let->names[i].name] =
          v.kind == Val::List && i < v.elems.size() ? v.elems[i] : Val::error();
  } else if (auto *assign = llvm::dyn_cast<AssignStmt>(&stmt)) {
    Val v = eval(*assign->value);
    if (Val *slot = lookup(assign->target.name))
      *slot = v;
  } else if (auto *param = llvm::dyn_cast<ParamStmt>(&stmt)) {
    execParam(*param);
  } else if (auto *out = llvm::dyn_cast<OutputStmt>(&stmt)) {
    Val v = eval(*out->value);
    for (const OutputInfo &o : graph.outputs)
      if (o.name == out->name.name) {
        error(out->name.pos) << "output '" << o.name << "' is defined twice";
        return;
      }
    if (v.isError())
      return;
    if (!v.isTensor()) {
      error(out->value->pos) << "an output must be a tensor, not " << v.describe();
      return;
    }
    graph.outputs.push_back({out->name.name, v.node, out->name.pos});
  } else if (auto *ret = llvm::dyn_cast<ReturnStmt>(&stmt)) {
    std::vector<Val> values;
    for (const ExprPtr &e : ret->values)
      values.push_back(eval(*e));
    frames.back().result = values.size() == 1 ? values[0] : Val::ofList(std::move(values));
  } else if (auto *loop = llvm::dyn_cast<ForStmt>(&stmt)) {
    execFor(*loop);
  } else if (auto *cond = llvm::dyn_cast<IfStmt>(&stmt)) {
    Val c = eval(*cond->cond);
    if (c.isError())
      return;
    if (c.kind != Val::Bool && c.kind != Val::Int) {
      error(cond->cond->pos) << "the condition of 'if' must be known when compiling (a boolean "
                                "or an integer), not "
                             << c.describe() << "; select between tensors with where()";
      return;
    }
    execBlock((c.kind == Val::Bool ? c.b : c.i != 0) ? cond->thenBody : cond->elseBody);
  }
}

void Elaborator::execFor(const ForStmt &loop) {
  Val lo = eval(*loop.lo), hi = eval(*loop.hi);
  int64_t from, to;
  if (!intArg(lo, loop.lo->pos, "the start of the range", from) ||
      !intArg(hi, loop.hi->pos, loop.var.name.empty() ? "the repeat count" : "the end of the range",
              to))
    return;
  for (int64_t i = from; i < to; ++i) {
    if (!charge(loop.pos))
      return;
    frames.back().scopes.emplace_back();
    if (!loop.var.name.empty())
      frames.back().scopes.back()[loop.var.name] = Val::ofInt(i);
    execBlock(loop.body);
    frames.back().scopes.pop_back();
  }
}

std::optional<std::string> Elaborator::scopeName(const ScopePath &path) {
  std::string name;
  for (const ScopePath::Part &p : path.parts) {
    if (p.index) {
      int64_t i;
      if (!intArg(eval(*p.index), p.index->pos, "a scope index", i))
        return std::nullopt;
      name += "." + std::to_string(i);
    } else {
      name += (name.empty() ? "" : ".") + p.name;
    }
  }
  return name;
}

void Elaborator::execParam(const ParamStmt &stmt) {
  auto &scope = frames.back().scopes.back();
  scope[stmt.name.name] = Val::error();
  TensorType type;
  if (!stmt.dtype.name.empty()) {
    std::optional<DType> dt = parseDType(stmt.dtype.name);
    if (!dt || !isFloat(*dt)) {
      error(stmt.dtype.pos) << (dt ? "a parameter is a float tensor, not '" : "unknown element type '")
                            << stmt.dtype.name << "'";
      return;
    }
    type.dtype = *dt;
  }
  bool ok = true;
  for (const ExprPtr &d : stmt.shape) {
    int64_t size = 0;
    if (!intArg(eval(*d), d->pos, "a dimension", size)) {
      ok = false;
      continue;
    }
    if (size <= 0) {
      error(d->pos) << "dimension " << size << " of '" << stmt.name.name << "' is not positive";
      ok = false;
    }
    type.shape.push_back(size);
  }
  if (!ok || !checkSize(type.shape, stmt.name.pos))
    return;
  std::string fullName = frames.back().prefix + stmt.name.name;
  std::optional<InitSpec> init = evalInit(stmt, fullName, type);
  if (!init)
    return;
  auto [it, inserted] = paramNodes.try_emplace(fullName, -1);
  if (!inserted) {
    // The same scope used twice shares its parameters (weight tying).
    const ParamInfo &first = graph.params[graph.nodes[it->second].index];
    if (!(first.type == type) || first.isState != stmt.isState) {
      auto d = error(stmt.name.pos) << "parameter '" << fullName << "' is declared again as "
                                    << formatType(type) << "; it is " << formatType(first.type);
      d.attachNote(diags.loc(first.pos)) << "first declared here";
      return;
    }
    scope[stmt.name.name] = Val::ofTensor(it->second);
    return;
  }
  Node n = makeNode(NodeKind::Param, stmt.name.pos, type);
  n.index = int(graph.params.size());
  graph.params.push_back({fullName, type, stmt.isState, *init, stmt.name.pos});
  int id = add(std::move(n));
  if (id < 0)
    return;
  it->second = id;
  scope[stmt.name.name] = Val::ofTensor(id);
}

//===----------------------------------------------------------------------===//
// Calls of the file's functions
//===----------------------------------------------------------------------===//

/// Whether FN declares parameters itself (then its calls must name a scope).
static bool declaresParams(const Block &block) {
  for (const StmtPtr &s : block) {
    if (llvm::isa<ParamStmt>(s.get()))
      return true;
    if (auto *f = llvm::dyn_cast<ForStmt>(s.get()); f && declaresParams(f->body))
      return true;
    if (auto *i = llvm::dyn_cast<IfStmt>(s.get());
        i && (declaresParams(i->thenBody) || declaresParams(i->elseBody)))
      return true;
  }
  return false;
}

Val Elaborator::callFunction(CallExpr &call, const FnDecl &fn) {
  // Every call counts against the budget, and runaway recursion ends the
  // elaboration: a function that calls itself twice would otherwise fail
  // 2^depth times at the depth limit (found by the fuzzer).
  if (!charge(call.pos))
    return Val::error();
  if (frames.size() > kMaxCallDepth) {
    error(call.pos) << "calls nested more than " << kMaxCallDepth
                    << " deep (is '" << fn.name.name << "' recursive?)";
    outOfBudget = true;
    return Val::error();
  }
  std::string prefix = frames.back().prefix;
  if (call.scope) {
    std::optional<std::string> name = scopeName(*call.scope);
    if (!name)
      return Val::error();
    prefix += *name + ".";
  } else if (declaresParams(fn.body)) {
    error(call.pos) << "'" << fn.name.name
                    << "' declares parameters; name them with a scope: " << fn.name.name
                    << "(...) as NAME";
    return Val::error();
  }
  // Arguments are evaluated in the caller, defaults in the callee's frame
  // (they see the constants and the parameters before them).
  std::vector<Val> args;
  for (size_t i = 0; i < fn.params.size(); ++i)
    args.push_back(i < call.bound.size() && call.bound[i] ? eval(*call.bound[i]) : Val::error());
  Frame frame;
  frame.fn = &fn;
  frame.callPos = call.pos;
  frame.prefix = prefix;
  frame.scopes.emplace_back();
  frames.push_back(std::move(frame));
  for (size_t i = 0; i < fn.params.size(); ++i) {
    bool given = i < call.bound.size() && call.bound[i];
    Val v = given ? args[i] : fn.params[i].defaultValue ? eval(*fn.params[i].defaultValue)
                                                        : Val::error();
    frames.back().scopes.back()[fn.params[i].name.name] = v;
  }
  execBlock(fn.body);
  std::optional<Val> result = std::move(frames.back().result);
  frames.pop_back();
  return result.value_or(Val::error());
}

Val Elaborator::evalCall(CallExpr &call) {
  if (call.res == NameRes::Function) {
    auto it = functions.find(call.callee);
    if (it != functions.end())
      return callFunction(call, *it->second);
    return Val::error();
  }
  if (call.res == NameRes::Builtin)
    return callBuiltin(call);
  return Val::error();
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

Val Elaborator::eval(const Expr &expr) {
  if (stopped())
    return Val::error();
  switch (expr.kind) {
  case Expr::Kind::Number: {
    auto &n = llvm::cast<NumberExpr>(expr);
    return n.isInt ? Val::ofInt(n.intValue) : Val::ofFloat(n.floatValue);
  }
  case Expr::Kind::Bool:
    return Val::ofBool(llvm::cast<BoolExpr>(expr).value);
  case Expr::Kind::Name:
    return evalName(llvm::cast<NameExpr>(expr));
  case Expr::Kind::Unary:
    return evalUnary(llvm::cast<UnaryExpr>(expr));
  case Expr::Kind::Binary:
    return evalBinary(llvm::cast<BinaryExpr>(expr));
  case Expr::Kind::Call:
    return evalCall(const_cast<CallExpr &>(llvm::cast<CallExpr>(expr)));
  case Expr::Kind::Index:
    return evalIndex(llvm::cast<IndexExpr>(expr));
  case Expr::Kind::Member:
    return evalMember(llvm::cast<MemberExpr>(expr));
  case Expr::Kind::List: {
    std::vector<Val> elems;
    for (const ExprPtr &e : llvm::cast<ListExpr>(expr).elems)
      elems.push_back(eval(*e));
    Val list = Val::ofList(std::move(elems));
    // Copies of lists in lists grow without bound in a loop ([l, l] doubles
    // every time): the values and the nesting are budgeted like the work.
    if (list.leaves > kMaxListValues || list.depth > kMaxListDepth) {
      error(expr.pos) << "a list of more than "
                      << (list.leaves > kMaxListValues ? std::to_string(kMaxListValues) + " values"
                                                       : std::to_string(kMaxListDepth) +
                                                             " levels of nesting");
      return Val::error();
    }
    return list;
  }
  }
  return Val::error();
}

Val Elaborator::evalName(const NameExpr &name) {
  switch (name.res) {
  case NameRes::Local:
    if (Val *v = lookup(name.name))
      return *v;
    return Val::error();
  case NameRes::Const: {
    auto it = globals.find(name.name);
    return it == globals.end() ? Val::error() : it->second;
  }
  case NameRes::Builtin:
    if (name.name == "inf")
      return Val::ofFloat(INFINITY);
    if (name.name == "nan")
      return Val::ofFloat(NAN);
    if (name.name == "pi")
      return Val::ofFloat(M_PI);
    if (std::optional<DType> t = parseDType(name.name))
      return Val::ofType(*t);
    return Val::error();
  case NameRes::Scope:
    error(name.pos) << "'" << name.name << "' is a scope of parameters, not a value; name one "
                                          "of them, as in "
                    << name.name << ".weight";
    return Val::error();
  default:
    return Val::error();
  }
}

Val Elaborator::evalUnary(const UnaryExpr &e) {
  Val v = eval(*e.operand);
  if (v.isError())
    return v;
  if (e.op == Tok::Minus) {
    if (v.kind == Val::Int)
      return Val::ofInt(-v.i);
    if (v.kind == Val::Float)
      return Val::ofFloat(-v.f);
    if (v.isTensor() && typeOf(v).dtype != DType::I1)
      return tensorNode([&] {
        Node n = makeNode(NodeKind::Unary, e.pos, typeOf(v), {v.node});
        n.op = "neg";
        return n;
      }());
    error(e.pos) << "'-' needs a number or a numeric tensor, not " << v.describe();
    return Val::error();
  }
  if (v.kind == Val::Bool)
    return Val::ofBool(!v.b);
  if (v.isTensor() && typeOf(v).dtype == DType::I1) {
    Node n = makeNode(NodeKind::Unary, e.pos, typeOf(v), {v.node});
    n.op = "not";
    return tensorNode(std::move(n));
  }
  error(e.pos) << "'not' needs a boolean or a bool tensor, not " << v.describe();
  return Val::error();
}

Val Elaborator::evalScalarBinary(Tok op, const Val &a, const Val &b, Pos pos) {
  if (op == Tok::KwAnd || op == Tok::KwOr) {
    if (a.kind != Val::Bool || b.kind != Val::Bool) {
      error(pos) << "'" << (op == Tok::KwAnd ? "and" : "or") << "' needs booleans, not "
                 << (a.kind != Val::Bool ? a.describe() : b.describe());
      return Val::error();
    }
    return Val::ofBool(op == Tok::KwAnd ? a.b && b.b : a.b || b.b);
  }
  if (!a.isNumber() || !b.isNumber()) {
    error(pos) << tokName(op) << " needs numbers or tensors, not "
               << (!a.isNumber() ? a.describe() : b.describe());
    return Val::error();
  }
  bool ints = a.kind == Val::Int && b.kind == Val::Int;
  double x = a.f, y = b.f;
  switch (op) {
  case Tok::Eq: return Val::ofBool(ints ? a.i == b.i : x == y);
  case Tok::Ne: return Val::ofBool(ints ? a.i != b.i : x != y);
  case Tok::Lt: return Val::ofBool(ints ? a.i < b.i : x < y);
  case Tok::Le: return Val::ofBool(ints ? a.i <= b.i : x <= y);
  case Tok::Gt: return Val::ofBool(ints ? a.i > b.i : x > y);
  case Tok::Ge: return Val::ofBool(ints ? a.i >= b.i : x >= y);
  default: break;
  }
  if (ints) {
    int64_t r = 0;
    switch (op) {
    case Tok::Plus:
      if (!__builtin_add_overflow(a.i, b.i, &r))
        return Val::ofInt(r);
      break;
    case Tok::Minus:
      if (!__builtin_sub_overflow(a.i, b.i, &r))
        return Val::ofInt(r);
      break;
    case Tok::Star:
      if (!__builtin_mul_overflow(a.i, b.i, &r))
        return Val::ofInt(r);
      break;
    case Tok::Slash:
    case Tok::Percent:
      if (b.i == 0) {
        error(pos) << (op == Tok::Slash ? "division" : "remainder") << " by zero";
        return Val::error();
      }
      if (a.i == INT64_MIN && b.i == -1)
        break;
      // An integer division that is exact stays an integer (d / heads);
      // otherwise it is a number, as in Python.
      if (op == Tok::Percent)
        return Val::ofInt(((a.i % b.i) + b.i) % b.i);
      if (a.i % b.i == 0)
        return Val::ofInt(a.i / b.i);
      return Val::ofFloat(x / y);
    case Tok::StarStar:
      if (b.i >= 0 && b.i < 64) {
        int64_t p = 1;
        bool overflow = false;
        for (int64_t k = 0; k < b.i && !overflow; ++k)
          overflow = __builtin_mul_overflow(p, a.i, &p);
        if (!overflow)
          return Val::ofInt(p);
      } else if (b.i < 0) {
        return Val::ofFloat(std::pow(x, y));
      }
      break;
    default:
      break;
    }
    if (op == Tok::Plus || op == Tok::Minus || op == Tok::Star || op == Tok::StarStar ||
        op == Tok::Slash) {
      error(pos) << "integer overflow in " << tokName(op);
      return Val::error();
    }
  }
  switch (op) {
  case Tok::Plus: return Val::ofFloat(x + y);
  case Tok::Minus: return Val::ofFloat(x - y);
  case Tok::Star: return Val::ofFloat(x * y);
  case Tok::Slash: return Val::ofFloat(x / y);
  case Tok::Percent: return Val::ofFloat(std::fmod(x, y));
  case Tok::StarStar: return Val::ofFloat(std::pow(x, y));
  default: break;
  }
  error(pos) << tokName(op) << " needs tensors";
  return Val::error();
}

Val Elaborator::evalBinary(const BinaryExpr &e) {
  Val a = eval(*e.lhs), b = eval(*e.rhs);
  if (a.isError() || b.isError())
    return Val::error();
  if (e.op == Tok::At)
    return matmul(a, b, e.pos);
  if (!a.isTensor() && !b.isTensor())
    return evalScalarBinary(e.op, a, b, e.pos);
  switch (e.op) {
  case Tok::Plus: return elementwise("add", NodeKind::Binary, a, b, e.pos);
  case Tok::Minus: return elementwise("sub", NodeKind::Binary, a, b, e.pos);
  case Tok::Star: return elementwise("mul", NodeKind::Binary, a, b, e.pos);
  case Tok::Slash: return elementwise("div", NodeKind::Binary, a, b, e.pos);
  case Tok::StarStar: return elementwise("pow", NodeKind::Binary, a, b, e.pos);
  case Tok::KwAnd: return elementwise("and", NodeKind::Binary, a, b, e.pos);
  case Tok::KwOr: return elementwise("or", NodeKind::Binary, a, b, e.pos);
  case Tok::Eq: return elementwise("eq", NodeKind::Compare, a, b, e.pos);
  case Tok::Ne: return elementwise("ne", NodeKind::Compare, a, b, e.pos);
  case Tok::Lt: return elementwise("lt", NodeKind::Compare, a, b, e.pos);
  case Tok::Le: return elementwise("le", NodeKind::Compare, a, b, e.pos);
  case Tok::Gt: return elementwise("gt", NodeKind::Compare, a, b, e.pos);
  case Tok::Ge: return elementwise("ge", NodeKind::Compare, a, b, e.pos);
  default:
    error(e.pos) << tokName(e.op) << " is not defined on tensors";
    return Val::error();
  }
}

Val Elaborator::evalMember(const MemberExpr &e) {
  // A chain x.a.b is evaluated here as a whole, innermost member first, so
  // that each member is visited once rather than once per member outside it
  // (x.T.T.T... took time cubic in its length).
  llvm::SmallVector<const MemberExpr *, 4> chain; // outermost first
  const Expr *base = &e;
  while (auto *m = llvm::dyn_cast<MemberExpr>(base)) {
    chain.push_back(m);
    base = m->base.get();
  }
  if (auto *root = llvm::dyn_cast<NameExpr>(base); root && root->res == NameRes::Scope) {
    // scope.param: a parameter declared under a scope of this body. The
    // shortest prefix that names a parameter; what follows is members of it.
    std::string name = frames.back().prefix + root->name;
    for (auto m = chain.rbegin(); m != chain.rend(); ++m) {
      name += "." + (*m)->member;
      auto it = paramNodes.find(name);
      if (it != paramNodes.end() && it->second >= 0) {
        Val v = Val::ofTensor(it->second);
        for (auto t = m + 1; t != chain.rend(); ++t) {
          if ((*t)->member != "T") {
            error(e.pos) << "a tensor has no member '" << (*t)->member << "'";
            return Val::error();
          }
          int id = transpose(v.node, {}, e.pos);
          if (id < 0)
            return Val::error();
          v = Val::ofTensor(id);
        }
        return v;
      }
    }
    std::vector<std::string> known;
    for (const auto &p : paramNodes)
      known.push_back(p.first);
    std::string near = closestName(name, known);
    auto d = error(e.pos) << "no parameter '" << name << "' has been declared";
    if (!near.empty())
      d << "; did you mean '" << near << "'?";
    return Val::error();
  }
  Val v = eval(*base);
  for (auto m = chain.rbegin(); m != chain.rend() && !v.isError(); ++m)
    v = member(v, **m);
  return v;
}

Val Elaborator::member(const Val &v, const MemberExpr &e) {
  if (v.isTensor() && e.member == "T") {
    if (typeOf(v).rank() < 2) {
      error(e.pos) << ".T swaps the last two dimensions; " << formatType(typeOf(v))
                   << " has fewer than two";
      return Val::error();
    }
    int id = transpose(v.node, {}, e.pos);
    return id < 0 ? Val::error() : Val::ofTensor(id);
  }
  if (v.isTensor() && e.member == "shape") {
    std::vector<Val> dims;
    for (int64_t d : typeOf(v).shape)
      dims.push_back(Val::ofInt(d));
    return Val::ofList(std::move(dims));
  }
  if (v.isTensor() && e.member == "rank")
    return Val::ofInt(typeOf(v).rank());
  auto d = error(e.pos) << v.describe() << " has no member '" << e.member << "'";
  if (v.isTensor()) {
    std::string near = closestName(e.member, {"T", "shape", "rank"});
    if (!near.empty())
      d << "; did you mean '" << near << "'?";
  }
  return Val::error();
}

Val Elaborator::evalIndex(const IndexExpr &e) {
  Val base = eval(*e.base);
  if (base.isError())
    return base;
  if (base.isTensor())
    return indexTensor(base, e);
  if (base.kind != Val::List) {
    error(e.pos) << "cannot index " << base.describe();
    return Val::error();
  }
  if (e.subs.size() != 1 || e.subs[0].isSlice) {
    error(e.pos) << "a list takes one integer index";
    return Val::error();
  }
  int64_t i;
  if (!intArg(eval(*e.subs[0].index), e.subs[0].pos, "a list index", i))
    return Val::error();
  int64_t n = int64_t(base.elems.size());
  if (i < -n || i >= n) {
    error(e.subs[0].pos) << "index " << i << " is out of range for a list of " << n;
    return Val::error();
  }
  return base.elems[size_t(i < 0 ? i + n : i)];
}

Val Elaborator::indexTensor(const Val &base, const IndexExpr &e) {
  const TensorType type = typeOf(base);
  if (int64_t(e.subs.size()) > type.rank()) {
    error(e.pos) << "too many subscripts (" << e.subs.size() << ") for " << formatType(type);
    return Val::error();
  }
  llvm::SmallVector<int64_t, 4> start, stride, shape, kept;
  for (int64_t d = 0; d < type.rank(); ++d) {
    int64_t n = type.shape[d];
    if (d >= int64_t(e.subs.size())) {
      start.push_back(0), stride.push_back(1), shape.push_back(n), kept.push_back(n);
      continue;
    }
    const Subscript &s = e.subs[d];
    if (!s.isSlice) {
      int64_t i;
      if (!intArg(eval(*s.index), s.pos, "an index", i))
        return Val::error();
      if (i < -n || i >= n) {
        error(s.pos) << "index " << i << " is out of range for dimension " << d << " of size "
                     << n;
        return Val::error();
      }
      start.push_back(i < 0 ? i + n : i), stride.push_back(1), shape.push_back(1);
      continue;
    }
    int64_t step = 1, lo, hi;
    if (s.step && !intArg(eval(*s.step), s.step->pos, "a slice step", step))
      return Val::error();
    if (step == 0) {
      error(s.step->pos) << "a slice step cannot be zero";
      return Val::error();
    }
    // Python's rules: negative bounds count from the end, then clamp.
    auto bound = [&](const ExprPtr &b, int64_t dflt, int64_t &out) {
      if (!b) {
        out = dflt;
        return true;
      }
      if (!intArg(eval(*b), b->pos, "a slice bound", out))
        return false;
      if (out < 0)
        out += n;
      out = step > 0 ? std::clamp<int64_t>(out, 0, n) : std::clamp<int64_t>(out, -1, n - 1);
      return true;
    };
    if (!bound(s.lo, step > 0 ? 0 : n - 1, lo) || !bound(s.hi, step > 0 ? n : -1, hi))
      return Val::error();
    int64_t count = step > 0 ? (hi - lo + step - 1) / step : (lo - hi - step - 1) / -step;
    if (count <= 0) {
      error(s.pos) << "the slice selects nothing from dimension " << d << " of size " << n;
      return Val::error();
    }
    start.push_back(lo), stride.push_back(step), shape.push_back(count), kept.push_back(count);
  }
  int node = base.node;
  if (shape != type.shape || llvm::any_of(start, [](int64_t s) { return s != 0; })) {
    Node n = makeNode(NodeKind::Slice, e.pos, {type.dtype, shape}, {node});
    n.a = start;
    n.b = stride;
    node = add(std::move(n));
    if (node < 0)
      return Val::error();
  }
  if (kept.size() != shape.size())
    node = reshape(node, kept, e.pos);
  return node < 0 ? Val::error() : Val::ofTensor(node);
}

Graph tcc::dsl::analyze(Program &program, const SemaOptions &options, Diagnostics &diags) {
  resolveNames(program, diags);
  return Elaborator(program, options, diags).run();
}
