//===- AST.h - the syntax tree of the tcc model language ------------------===//
//
// What the parser builds and the semantic pass reads: declarations (const,
// fn, model, train), statements and expressions, each with its source
// position. Nodes are owned by their parents (unique_ptr); kinds are
// LLVM-style (classof) so passes use isa / dyn_cast. The tree holds syntax
// only: names are resolved and shapes inferred by Sema, which never changes
// the tree except for each Name's resolution.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_FRONTEND_DSL_AST_H
#define TCC_FRONTEND_DSL_AST_H

#include "frontend/dsl/Lexer.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Casting.h"

#include <memory>
#include <string>
#include <vector>

namespace tcc::dsl {

//===--- Expressions ------------------------------------------------------===//

class Expr {
public:
  enum class Kind { Number, Bool, Name, Unary, Binary, Call, Index, Member, List };
  Expr(Kind kind, Pos pos) : kind(kind), pos(pos) {}
  virtual ~Expr() = default;
  const Kind kind;
  const Pos pos;
};
using ExprPtr = std::unique_ptr<Expr>;

struct NumberExpr : Expr {
  NumberExpr(Pos pos, bool isInt, int64_t i, double f)
      : Expr(Kind::Number, pos), isInt(isInt), intValue(i), floatValue(f) {}
  bool isInt;
  int64_t intValue;
  double floatValue;
  static bool classof(const Expr *e) { return e->kind == Kind::Number; }
};

struct BoolExpr : Expr {
  BoolExpr(Pos pos, bool value) : Expr(Kind::Bool, pos), value(value) {}
  bool value;
  static bool classof(const Expr *e) { return e->kind == Kind::Bool; }
};

/// What a name refers to; set by Sema's resolver.
enum class NameRes { Unresolved, Local, Const, Function, Builtin, Scope };

struct NameExpr : Expr {
  NameExpr(Pos pos, std::string name) : Expr(Kind::Name, pos), name(std::move(name)) {}
  std::string name;
  NameRes res = NameRes::Unresolved;
  static bool classof(const Expr *e) { return e->kind == Kind::Name; }
};

struct UnaryExpr : Expr {
  UnaryExpr(Pos pos, Tok op, ExprPtr operand)
      : Expr(Kind::Unary, pos), op(op), operand(std::move(operand)) {}
  Tok op; ///< Minus or KwNot
  ExprPtr operand;
  static bool classof(const Expr *e) { return e->kind == Kind::Unary; }
};

struct BinaryExpr : Expr {
  BinaryExpr(Pos pos, Tok op, ExprPtr lhs, ExprPtr rhs)
      : Expr(Kind::Binary, pos), op(op), lhs(std::move(lhs)), rhs(std::move(rhs)) {}
  Tok op; ///< its position is the operator's
  ExprPtr lhs, rhs;
  static bool classof(const Expr *e) { return e->kind == Kind::Binary; }
};

/// A dotted scope path after `as`: `blocks[i].attn` (indices are
/// compile-time integers).
struct ScopePath {
  Pos pos;
  struct Part {
    std::string name; ///< empty for an index
    ExprPtr index;
  };
  std::vector<Part> parts;
};

struct KeywordArg {
  Pos pos;
  std::string name;
  ExprPtr value;
};

struct CallExpr : Expr {
  CallExpr(Pos pos, std::string callee) : Expr(Kind::Call, pos), callee(std::move(callee)) {}
  std::string callee;
  NameRes res = NameRes::Unresolved;
  std::vector<ExprPtr> args;
  std::vector<KeywordArg> kwargs;
  /// `f(x) as fc1`: the scope that names f's parameters.
  std::unique_ptr<ScopePath> scope;
  /// Set by the resolver: the argument of each of the callee's parameters
  /// in its order, null where the default applies.
  std::vector<Expr *> bound;
  static bool classof(const Expr *e) { return e->kind == Kind::Call; }
};

/// One subscript: `i`, or a slice `lo:hi:step` (each part optional).
struct Subscript {
  Pos pos;
  bool isSlice = false;
  ExprPtr index, lo, hi, step;
};

struct IndexExpr : Expr {
  IndexExpr(Pos pos, ExprPtr base) : Expr(Kind::Index, pos), base(std::move(base)) {}
  ExprPtr base;
  std::vector<Subscript> subs;
  static bool classof(const Expr *e) { return e->kind == Kind::Index; }
};

/// `x.T` (transpose of the last two dimensions) or `scope.param`.
struct MemberExpr : Expr {
  MemberExpr(Pos pos, ExprPtr base, std::string member)
      : Expr(Kind::Member, pos), base(std::move(base)), member(std::move(member)) {}
  ExprPtr base;
  std::string member;
  static bool classof(const Expr *e) { return e->kind == Kind::Member; }
};

struct ListExpr : Expr {
  explicit ListExpr(Pos pos) : Expr(Kind::List, pos) {}
  std::vector<ExprPtr> elems;
  static bool classof(const Expr *e) { return e->kind == Kind::List; }
};

//===--- Statements -------------------------------------------------------===//

class Stmt {
public:
  enum class Kind { Let, Assign, Param, Output, Return, For, If };
  Stmt(Kind kind, Pos pos) : kind(kind), pos(pos) {}
  virtual ~Stmt() = default;
  const Kind kind;
  const Pos pos;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Block = std::vector<StmtPtr>;

struct NamePos {
  std::string name;
  Pos pos;
};

/// `let a = e` or `let a, b = e` (a call with several results).
struct LetStmt : Stmt {
  LetStmt(Pos pos) : Stmt(Kind::Let, pos) {}
  std::vector<NamePos> names;
  ExprPtr value;
  static bool classof(const Stmt *s) { return s->kind == Kind::Let; }
};

/// `a = e`: rebinds a variable declared with let (loops carry values so).
struct AssignStmt : Stmt {
  AssignStmt(Pos pos) : Stmt(Kind::Assign, pos) {}
  NamePos target;
  ExprPtr value;
  static bool classof(const Stmt *s) { return s->kind == Kind::Assign; }
};

/// An element type written in the source: `f32`, `i64`, ... (empty: f32).
struct TypeRef {
  Pos pos;
  std::string name;
};

/// `param w: f32[out, in] = kaiming_uniform()` or `state` (not trained).
struct ParamStmt : Stmt {
  ParamStmt(Pos pos) : Stmt(Kind::Param, pos) {}
  bool isState = false;
  NamePos name;
  TypeRef dtype;
  std::vector<ExprPtr> shape;
  std::unique_ptr<CallExpr> init; ///< or a bare name such as `zeros`
  static bool classof(const Stmt *s) { return s->kind == Kind::Param; }
};

struct OutputStmt : Stmt {
  OutputStmt(Pos pos) : Stmt(Kind::Output, pos) {}
  NamePos name;
  ExprPtr value;
  static bool classof(const Stmt *s) { return s->kind == Kind::Output; }
};

struct ReturnStmt : Stmt {
  ReturnStmt(Pos pos) : Stmt(Kind::Return, pos) {}
  std::vector<ExprPtr> values;
  static bool classof(const Stmt *s) { return s->kind == Kind::Return; }
};

/// `for i in lo..hi { }`, or `repeat n { }` (no variable, lo = 0).
struct ForStmt : Stmt {
  ForStmt(Pos pos) : Stmt(Kind::For, pos) {}
  NamePos var; ///< empty name for repeat
  ExprPtr lo, hi;
  Block body;
  static bool classof(const Stmt *s) { return s->kind == Kind::For; }
};

/// `if cond { } else { }` on a compile-time condition.
struct IfStmt : Stmt {
  IfStmt(Pos pos) : Stmt(Kind::If, pos) {}
  ExprPtr cond;
  Block thenBody, elseBody;
  static bool classof(const Stmt *s) { return s->kind == Kind::If; }
};

//===--- Declarations -----------------------------------------------------===//

struct ConstDecl {
  NamePos name;
  ExprPtr value;
};

struct FnParam {
  NamePos name;
  ExprPtr defaultValue; ///< null: required
};

struct FnDecl {
  NamePos name;
  std::vector<FnParam> params;
  Block body;
  Pos end; ///< the closing brace
};

/// `x: f32[B, 784]`: each dimension an integer or a symbolic name.
struct InputDecl {
  NamePos name;
  TypeRef dtype;
  struct Dim {
    Pos pos;
    int64_t value = 0;
    std::string symbol; ///< non-empty for a symbolic dimension
  };
  std::vector<Dim> dims;
};

struct ModelDecl {
  NamePos name;
  std::vector<InputDecl> inputs;
  Block body;
  Pos end;
};

/// `train { loss = cross_entropy  optimizer = adamw  weight_decay = 0.1 }`.
struct TrainEntry {
  NamePos key;
  ExprPtr value;
};

struct TrainDecl {
  Pos pos;
  std::vector<TrainEntry> entries;
};

/// A whole source file.
struct Program {
  std::vector<ConstDecl> consts;
  std::vector<std::unique_ptr<FnDecl>> fns;
  std::vector<std::unique_ptr<ModelDecl>> models;
  std::vector<TrainDecl> trains;
};

} // namespace tcc::dsl

#endif // TCC_FRONTEND_DSL_AST_H
