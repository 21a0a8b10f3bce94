//===- Resolve.cpp - name resolution for the tcc model language -----------===//
//
// Binds each name to what it denotes, lexically: block scopes for let,
// param and loop variables, the model's symbolic dimensions, top-level
// constants and functions, and the builtins. A name that resolves to
// nothing is reported with the nearest visible name; calls are bound to
// their callee's parameters (positional, then by keyword) once, here, so
// that the elaborator reads arguments by parameter.
//
//===----------------------------------------------------------------------===//

#include "frontend/dsl/Elaborator.h"

#include "llvm/ADT/StringSet.h"

#include <functional>

using namespace tcc::dsl;

namespace {

class Resolver {
public:
  Resolver(Program &program, Diagnostics &diags) : program(program), diags(diags) {}
  void run();

private:
  void declareTopLevel();
  void resolveBody(Block &body, const FnDecl *fn, const ModelDecl *model);
  void resolveBlock(Block &block, bool topOfFn, const FnDecl *fn);
  void resolveStmt(Stmt &stmt, bool last, bool topOfFn, const FnDecl *fn);
  void resolveExpr(Expr &expr);
  void resolveCall(CallExpr &call);
  void bindArgs(CallExpr &call, llvm::ArrayRef<llvm::StringRef> params, unsigned required);
  void collectScopeRoots(const Block &block);
  void declare(const NamePos &name, llvm::StringRef what);
  bool isLocal(llvm::StringRef name) const;
  std::vector<std::string> visibleNames() const;
  void reportUnknown(const NamePos &name, llvm::StringRef what, bool callable);

  Program &program;
  Diagnostics &diags;
  llvm::StringMap<const FnDecl *> fns;
  llvm::StringMap<Pos> consts;
  std::vector<llvm::StringMap<Pos>> scopes;
  llvm::StringSet<> dims;
  llvm::StringSet<> scopeRoots;
  bool inModel = false;
};

void Resolver::declareTopLevel() {
  for (ConstDecl &c : program.consts) {
    // A constant sees the builtins and the constants above it.
    resolveExpr(*c.value);
    auto [it, inserted] = consts.try_emplace(c.name.name, c.name.pos);
    if (!inserted)
      diags.error(c.name.pos) << "constant '" << c.name.name << "' is defined twice";
  }
  for (auto &fn : program.fns) {
    if (findBuiltin(fn->name.name) || isBuiltinConstant(fn->name.name)) {
      diags.error(fn->name.pos) << "function '" << fn->name.name
                                << "' has the name of a builtin; choose another name";
      continue;
    }
    auto [it, inserted] = fns.try_emplace(fn->name.name, fn.get());
    if (!inserted) {
      auto d = diags.error(fn->name.pos) << "function '" << fn->name.name << "' is defined twice";
      d.attachNote(diags.loc(it->second->name.pos)) << "the first definition is here";
    }
    if (consts.count(fn->name.name))
      diags.error(fn->name.pos) << "'" << fn->name.name << "' is both a constant and a function";
  }
}

void Resolver::run() {
  declareTopLevel();
  for (auto &fn : program.fns) {
    llvm::StringSet<> seen;
    scopes.assign(1, {});
    for (FnParam &p : fn->params) {
      if (p.defaultValue)
        resolveExpr(*p.defaultValue);
      if (!seen.insert(p.name.name).second)
        diags.error(p.name.pos) << "parameter '" << p.name.name << "' is listed twice";
      scopes.back()[p.name.name] = p.name.pos;
    }
    resolveBody(fn->body, fn.get(), nullptr);
  }
  if (program.models.empty()) {
    diags.error(Pos{1, 1}) << "the file declares no model (model NAME(inputs) { ... })";
    return;
  }
  for (size_t i = 1; i < program.models.size(); ++i) {
    auto d = diags.error(program.models[i]->name.pos) << "a file declares one model; '"
                                                      << program.models[i]->name.name
                                                      << "' is a second";
    d.attachNote(diags.loc(program.models[0]->name.pos)) << "the first model is here";
  }
  ModelDecl &model = *program.models[0];
  scopes.assign(1, {});
  llvm::StringSet<> inputNames;
  for (InputDecl &in : model.inputs) {
    if (!inputNames.insert(in.name.name).second)
      diags.error(in.name.pos) << "input '" << in.name.name << "' is declared twice";
    scopes.back()[in.name.name] = in.name.pos;
    for (InputDecl::Dim &d : in.dims)
      if (!d.symbol.empty())
        dims.insert(d.symbol);
  }
  inModel = true;
  resolveBody(model.body, nullptr, &model);
}

void Resolver::collectScopeRoots(const Block &block) {
  // `as` scopes anywhere in a body may be referred to (tok.weight) after the
  // call that creates them; collect them first. Expressions are walked
  // shallowly: scoped calls sit at statement level in practice, and a
  // missed one only makes the reference an unknown name.
  std::function<void(const Expr &)> walk = [&](const Expr &e) {
    if (auto *c = llvm::dyn_cast<CallExpr>(&e)) {
      if (c->scope && !c->scope->parts.empty())
        scopeRoots.insert(c->scope->parts[0].name);
      for (const ExprPtr &a : c->args)
        walk(*a);
      for (const KeywordArg &k : c->kwargs)
        walk(*k.value);
    } else if (auto *b = llvm::dyn_cast<BinaryExpr>(&e)) {
      walk(*b->lhs);
      walk(*b->rhs);
    } else if (auto *u = llvm::dyn_cast<UnaryExpr>(&e)) {
      walk(*u->operand);
    }
  };
  for (const StmtPtr &s : block) {
    if (auto *l = llvm::dyn_cast<LetStmt>(s.get()))
      walk(*l->value);
    else if (auto *a = llvm::dyn_cast<AssignStmt>(s.get()))
      walk(*a->value);
    else if (auto *o = llvm::dyn_cast<OutputStmt>(s.get()))
      walk(*o->value);
    else if (auto *f = llvm::dyn_cast<ForStmt>(s.get()))
      collectScopeRoots(f->body);
    else if (auto *i = llvm::dyn_cast<IfStmt>(s.get())) {
      collectScopeRoots(i->thenBody);
      collectScopeRoots(i->elseBody);
    } else if (auto *r = llvm::dyn_cast<ReturnStmt>(s.get()))
      for (const ExprPtr &v : r->values)
        walk(*v);
  }
}

void Resolver::resolveBody(Block &body, const FnDecl *fn, const ModelDecl *model) {
  scopeRoots.clear();
  collectScopeRoots(body);
  inModel = model != nullptr;
  resolveBlock(body, /*topOfFn=*/fn != nullptr, fn);
  if (fn && (body.empty() || !llvm::isa<ReturnStmt>(body.back().get())))
    diags.error(fn->end) << "function '" << fn->name.name
                         << "' must end with 'return' and the value it computes";
}

void Resolver::resolveBlock(Block &block, bool topOfFn, const FnDecl *fn) {
  scopes.emplace_back();
  for (size_t i = 0; i < block.size(); ++i)
    resolveStmt(*block[i], i + 1 == block.size(), topOfFn, fn);
  scopes.pop_back();
}

void Resolver::declare(const NamePos &name, llvm::StringRef what) {
  auto [it, inserted] = scopes.back().try_emplace(name.name, name.pos);
  if (!inserted) {
    auto d = diags.error(name.pos) << what << " '" << name.name
                                   << "' is already defined in this block; assign it with '"
                                   << name.name << " = ...'";
    d.attachNote(diags.loc(it->second)) << "defined here";
  }
}

bool Resolver::isLocal(llvm::StringRef name) const {
  for (const auto &scope : scopes)
    if (scope.count(name))
      return true;
  return false;
}

void Resolver::resolveStmt(Stmt &stmt, bool last, bool topOfFn, const FnDecl *fn) {
  if (diags.stopped())
    return;
  if (auto *let = llvm::dyn_cast<LetStmt>(&stmt)) {
    resolveExpr(*let->value);
    for (const NamePos &n : let->names)
      declare(n, "variable");
  } else if (auto *assign = llvm::dyn_cast<AssignStmt>(&stmt)) {
    resolveExpr(*assign->value);
    if (!isLocal(assign->target.name))
      reportUnknown(assign->target, "variable", /*callable=*/false);
  } else if (auto *param = llvm::dyn_cast<ParamStmt>(&stmt)) {
    for (ExprPtr &d : param->shape)
      resolveExpr(*d);
    CallExpr &init = *param->init;
    for (ExprPtr &a : init.args)
      resolveExpr(*a);
    for (KeywordArg &k : init.kwargs)
      resolveExpr(*k.value);
    if (const BuiltinSig *sig = findInitializer(init.callee)) {
      init.res = NameRes::Builtin;
      bindArgs(init, sig->params, sig->required);
    } else {
      std::string near = closestName(init.callee, initializerNames());
      auto d = diags.error(init.pos) << "unknown initializer '" << init.callee << "'";
      if (!near.empty())
        d << "; did you mean '" << near << "'?";
    }
    declare(param->name, param->isState ? "state" : "parameter");
  } else if (auto *out = llvm::dyn_cast<OutputStmt>(&stmt)) {
    resolveExpr(*out->value);
    if (!inModel)
      diags.error(out->pos) << "'output' belongs in the model; a function returns its value";
  } else if (auto *ret = llvm::dyn_cast<ReturnStmt>(&stmt)) {
    for (ExprPtr &v : ret->values)
      resolveExpr(*v);
    if (inModel)
      diags.error(ret->pos) << "a model names its results with 'output NAME = ...', not 'return'";
    else if (!last || !topOfFn)
      diags.error(ret->pos) << "'return' must be the last statement of the function";
  } else if (auto *loop = llvm::dyn_cast<ForStmt>(&stmt)) {
    resolveExpr(*loop->lo);
    resolveExpr(*loop->hi);
    scopes.emplace_back();
    if (!loop->var.name.empty())
      scopes.back()[loop->var.name] = loop->var.pos;
    resolveBlock(loop->body, false, fn);
    scopes.pop_back();
  } else if (auto *cond = llvm::dyn_cast<IfStmt>(&stmt)) {
    resolveExpr(*cond->cond);
    resolveBlock(cond->thenBody, false, fn);
    resolveBlock(cond->elseBody, false, fn);
  }
}

std::vector<std::string> Resolver::visibleNames() const {
  std::vector<std::string> names;
  for (const auto &scope : scopes)
    for (const auto &e : scope)
      names.push_back(e.getKey().str());
  for (const auto &e : consts)
    names.push_back(e.getKey().str());
  for (const auto &e : dims)
    names.push_back(e.getKey().str());
  for (const auto &e : scopeRoots)
    names.push_back(e.getKey().str());
  for (const char *c : {"inf", "nan", "pi", "f32", "f64", "f16", "bf16", "i64", "i32", "bool"})
    names.push_back(c);
  return names;
}

void Resolver::reportUnknown(const NamePos &name, llvm::StringRef what, bool callable) {
  std::vector<std::string> candidates;
  if (callable) {
    for (const auto &e : fns)
      candidates.push_back(e.getKey().str());
    for (const std::string &b : builtinNames())
      candidates.push_back(b);
  } else {
    candidates = visibleNames();
    // A function named without its call: suggest it too (the message
    // then says to call it).
    for (const auto &e : fns)
      candidates.push_back(e.getKey().str());
    for (const std::string &b : builtinNames())
      candidates.push_back(b);
  }
  std::string near = closestName(name.name, candidates);
  auto d = diags.error(name.pos) << "unknown " << what << " '" << name.name << "'";
  if (!near.empty())
    d << "; did you mean '" << near << "'?";
}

void Resolver::resolveExpr(Expr &expr) {
  // Past the error limit every unknown name would still look at every
  // visible name for a suggestion, only to drop the message.
  if (diags.stopped())
    return;
  if (auto *name = llvm::dyn_cast<NameExpr>(&expr)) {
    if (isLocal(name->name))
      name->res = NameRes::Local;
    else if (consts.count(name->name) || (inModel && dims.count(name->name)))
      name->res = NameRes::Const;
    else if (isBuiltinConstant(name->name))
      name->res = NameRes::Builtin;
    else if (scopeRoots.count(name->name))
      name->res = NameRes::Scope;
    else if (fns.count(name->name) || findBuiltin(name->name))
      diags.error(name->pos) << "'" << name->name << "' is a function; call it: "
                             << name->name << "(...)";
    else
      reportUnknown({name->name, name->pos}, "name", /*callable=*/false);
  } else if (auto *u = llvm::dyn_cast<UnaryExpr>(&expr)) {
    resolveExpr(*u->operand);
  } else if (auto *b = llvm::dyn_cast<BinaryExpr>(&expr)) {
    resolveExpr(*b->lhs);
    resolveExpr(*b->rhs);
  } else if (auto *c = llvm::dyn_cast<CallExpr>(&expr)) {
    resolveCall(*c);
  } else if (auto *i = llvm::dyn_cast<IndexExpr>(&expr)) {
    resolveExpr(*i->base);
    for (Subscript &s : i->subs)
      for (ExprPtr *part : {&s.index, &s.lo, &s.hi, &s.step})
        if (*part)
          resolveExpr(**part);
  } else if (auto *m = llvm::dyn_cast<MemberExpr>(&expr)) {
    resolveExpr(*m->base);
  } else if (auto *l = llvm::dyn_cast<ListExpr>(&expr)) {
    for (ExprPtr &e : l->elems)
      resolveExpr(*e);
  }
}

void Resolver::resolveCall(CallExpr &call) {
  for (ExprPtr &a : call.args)
    resolveExpr(*a);
  for (KeywordArg &k : call.kwargs)
    resolveExpr(*k.value);
  if (call.scope)
    for (ScopePath::Part &p : call.scope->parts)
      if (p.index)
        resolveExpr(*p.index);
  auto fn = fns.find(call.callee);
  if (fn != fns.end()) {
    call.res = NameRes::Function;
    std::vector<llvm::StringRef> params;
    unsigned required = 0;
    for (const FnParam &p : fn->second->params) {
      params.push_back(p.name.name);
      if (!p.defaultValue)
        required = unsigned(params.size());
    }
    bindArgs(call, params, required);
  } else if (const BuiltinSig *sig = findBuiltin(call.callee)) {
    call.res = NameRes::Builtin;
    if (call.scope)
      diags.error(call.scope->pos) << "'" << call.callee
                                   << "' is a builtin and declares no parameters; 'as' names "
                                      "the parameters of a function of this file";
    bindArgs(call, sig->params, sig->required);
  } else {
    reportUnknown({call.callee, call.pos}, "function", /*callable=*/true);
  }
}

void Resolver::bindArgs(CallExpr &call, llvm::ArrayRef<llvm::StringRef> params,
                        unsigned required) {
  call.bound.assign(params.size(), nullptr);
  for (size_t i = 0; i < call.args.size(); ++i) {
    if (i >= params.size()) {
      diags.error(call.args[i]->pos) << "'" << call.callee << "' takes " << params.size()
                                     << " argument" << (params.size() == 1 ? "" : "s")
                                     << ", got " << call.args.size();
      break;
    }
    call.bound[i] = call.args[i].get();
  }
  for (KeywordArg &k : call.kwargs) {
    auto it = llvm::find(params, k.name);
    if (it == params.end()) {
      std::vector<std::string> names(params.begin(), params.end());
      std::string near = closestName(k.name, names);
      auto d = diags.error(k.pos) << "'" << call.callee << "' has no parameter '" << k.name << "'";
      if (!near.empty())
        d << "; did you mean '" << near << "'?";
      continue;
    }
    size_t index = it - params.begin();
    if (call.bound[index])
      diags.error(k.pos) << "argument '" << k.name << "' of '" << call.callee
                         << "' is given twice";
    call.bound[index] = k.value.get();
  }
  for (unsigned i = 0; i < required; ++i)
    if (!call.bound[i])
      diags.error(call.pos) << "'" << call.callee << "' needs its argument '" << params[i] << "'";
}

} // namespace

namespace tcc::dsl {
void resolveNames(Program &program, Diagnostics &diags) { Resolver(program, diags).run(); }
} // namespace tcc::dsl
