//===- Elaborator.h - running a model program at compile time (private) ---===//
//
// Shared by Elaborate.cpp (statements, expressions, calls) and Builtins.cpp
// (the predefined functions and their shape rules). Not installed: the
// frontend's interface is Sema.h.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_FRONTEND_DSL_ELABORATOR_H
#define TCC_FRONTEND_DSL_ELABORATOR_H

#include "frontend/dsl/Sema.h"

#include <algorithm>
#include <map>
#include <set>

namespace tcc::dsl {

/// A value during elaboration: a compile-time number, bool, element type or
/// list, or a tensor (a graph node). Error poisons silently: whatever
/// produced it has been reported.
struct Val {
  enum Kind { Error, Int, Float, Bool, Type, List, Tensor } kind = Error;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  DType dtype = DType::F32;
  int node = -1;
  std::vector<Val> elems;

  static Val error() { return {}; }
  static Val ofInt(int64_t v) { Val r; r.kind = Int; r.i = v; r.f = double(v); return r; }
  static Val ofFloat(double v) { Val r; r.kind = Float; r.f = v; return r; }
  static Val ofBool(bool v) { Val r; r.kind = Bool; r.b = v; return r; }
  static Val ofType(DType t) { Val r; r.kind = Type; r.dtype = t; return r; }
  static Val ofTensor(int n) { Val r; r.kind = Tensor; r.node = n; return r; }
  static Val ofList(std::vector<Val> e) {
    Val r;
    r.kind = List;
    for (const Val &v : e) {
      r.leaves += v.kind == List ? v.leaves : 1;
      r.depth = std::max(r.depth, v.kind == List ? v.depth + 1 : 1);
    }
    r.elems = std::move(e);
    return r;
  }
  /// A list's values at any depth, and its nesting depth: both bounded by
  /// the elaborator (a list that doubles in a loop grows exponentially).
  int64_t leaves = 0;
  int depth = 0;
  bool isError() const { return kind == Error; }
  bool isNumber() const { return kind == Int || kind == Float; }
  bool isTensor() const { return kind == Tensor; }
  /// "an integer", "a tensor", ... for messages.
  const char *describe() const;
};

/// The signature of a builtin: parameter names in order; the first
/// `required` must be given.
struct BuiltinSig {
  llvm::StringRef name;
  std::vector<llvm::StringRef> params;
  unsigned required;
};
/// The builtin function named NAME, or null.
const BuiltinSig *findBuiltin(llvm::StringRef name);
/// Initializers usable after `param ... =`.
const BuiltinSig *findInitializer(llvm::StringRef name);
/// Names that denote values without a call: inf, nan, pi, element types.
bool isBuiltinConstant(llvm::StringRef name);
std::vector<std::string> initializerNames();

/// The resolver (Resolve.cpp): binds names and call arguments in PROGRAM.
void resolveNames(Program &program, Diagnostics &diags);

class Elaborator {
public:
  Elaborator(Program &program, const SemaOptions &options, Diagnostics &diags)
      : program(program), options(options), diags(diags) {}
  Graph run();

  //===--- Used by the builtins ---------------------------------------===//
  /// An error at POS, with a note per enclosing call; repeated errors at one
  /// position (a function called in a loop) are reported once.
  mlir::InFlightDiagnostic error(Pos pos);
  const TensorType &typeOf(const Val &v) const { return graph.nodes[v.node].type; }
  const TensorType &typeOf(int node) const { return graph.nodes[node].type; }
  /// Adds NODE (refusing past the size budget); returns its id or -1.
  int add(Node node);
  Node makeNode(NodeKind kind, Pos pos, TensorType type, llvm::ArrayRef<int> operands = {});
  Val tensorNode(Node node) {
    int id = add(std::move(node));
    return id < 0 ? Val::error() : Val::ofTensor(id);
  }
  int splat(double value, const TensorType &type, Pos pos);
  int broadcastTo(int node, llvm::ArrayRef<int64_t> shape, Pos pos);
  int reshape(int node, llvm::ArrayRef<int64_t> shape, Pos pos);
  int transpose(int node, llvm::ArrayRef<int64_t> perm, Pos pos);
  /// numpy broadcasting of two shapes; reports at POS when they do not.
  std::optional<llvm::SmallVector<int64_t, 4>> broadcastShapes(llvm::ArrayRef<int64_t> a,
                                                               llvm::ArrayRef<int64_t> b,
                                                               Pos pos, llvm::StringRef what);
  /// A tensor or a number made a tensor of LIKE's element type.
  Val elementwise(llvm::StringRef op, NodeKind kind, Val lhs, Val rhs, Pos pos);
  Val matmul(Val lhs, Val rhs, Pos pos);
  Val callBuiltin(CallExpr &call);
  Val evalScalarBuiltin(llvm::StringRef name, llvm::ArrayRef<Val> args, Pos pos, bool &handled);

  /// Argument conversions for builtins; each reports at the argument.
  bool tensorArg(const Val &v, Pos pos, llvm::StringRef what, int &node);
  bool intArg(const Val &v, Pos pos, llvm::StringRef what, int64_t &out);
  bool numberArg(const Val &v, Pos pos, llvm::StringRef what, double &out);
  /// An int or a list of ints (an int repeats COUNT times).
  bool intsArg(const Val &v, Pos pos, llvm::StringRef what, size_t count,
               llvm::SmallVectorImpl<int64_t> &out);
  bool axisArg(const Val &v, Pos pos, int64_t rank, int64_t &axis);
  /// Largest element count of a tensor (2^40) and of a materialized constant.
  static constexpr int64_t kMaxElements = int64_t(1) << 40;
  static constexpr int64_t kMaxConstant = int64_t(1) << 24;
  bool checkSize(llvm::ArrayRef<int64_t> shape, Pos pos);

  Graph graph;
  int dropoutStreams = 0;

private:
  struct Frame {
    const FnDecl *fn = nullptr; ///< null for the model
    Pos callPos;
    std::string prefix; ///< parameter names start with it ("blocks.0.")
    std::vector<llvm::StringMap<Val>> scopes;
    std::optional<Val> result;
  };

  void bindConstants();
  void bindInputs(const ModelDecl &model);
  void execBlock(const Block &block);
  void execStmt(const Stmt &stmt);
  void execParam(const ParamStmt &stmt);
  void execFor(const ForStmt &stmt);
  Val eval(const Expr &expr);
  Val evalName(const NameExpr &name);
  Val evalUnary(const UnaryExpr &e);
  Val evalBinary(const BinaryExpr &e);
  Val evalScalarBinary(Tok op, const Val &a, const Val &b, Pos pos);
  Val evalMember(const MemberExpr &e);
  /// V.member for one link E of a chain of members (V is not an error).
  Val member(const Val &v, const MemberExpr &e);
  Val evalIndex(const IndexExpr &e);
  Val indexTensor(const Val &base, const IndexExpr &e);
  Val evalCall(CallExpr &call);
  Val callFunction(CallExpr &call, const FnDecl &fn);
  std::optional<std::string> scopeName(const ScopePath &path);
  std::optional<InitSpec> evalInit(const ParamStmt &stmt, const std::string &fullName,
                                   const TensorType &type);
  Val *lookup(llvm::StringRef name);
  void checkStateUses();
  bool charge(Pos pos);
  /// Whether elaboration has ended: out of budget, or past the error limit.
  bool stopped() {
    outOfBudget = outOfBudget || diags.stopped();
    return outOfBudget;
  }

  Program &program;
  const SemaOptions &options;
  Diagnostics &diags;
  llvm::StringMap<Val> globals;  ///< consts and bound symbolic dimensions
  llvm::StringMap<const FnDecl *> functions;
  std::vector<Frame> frames;
  std::map<std::string, int> paramNodes;
  std::set<std::pair<unsigned, unsigned>> reportedAt;
  int64_t work = 0;
  bool outOfBudget = false;
};

} // namespace tcc::dsl

#endif // TCC_FRONTEND_DSL_ELABORATOR_H
