//===- Graph.h - the checked, unrolled model that Sema hands to lowering --===//
//
// Sema elaborates the AST (functions inlined, loops unrolled, compile-time
// values computed) into this graph: one node per tcc op, every operand's
// type known and checked, every node at its source position. Lowering turns
// each node into one tcc op by its builder and decides nothing; everything
// that can be wrong with a program is found before it.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_FRONTEND_DSL_GRAPH_H
#define TCC_FRONTEND_DSL_GRAPH_H

#include "frontend/dsl/Lexer.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>
#include <vector>

namespace tcc::dsl {

enum class DType { F32, F64, F16, BF16, I64, I32, I1 };

/// "f32", "i64", "bool", ...; parseDType is its inverse.
llvm::StringRef dtypeName(DType t);
std::optional<DType> parseDType(llvm::StringRef name);
inline bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16;
}

struct TensorType {
  DType dtype = DType::F32;
  llvm::SmallVector<int64_t, 4> shape;
  int64_t rank() const { return int64_t(shape.size()); }
  bool operator==(const TensorType &o) const { return dtype == o.dtype && shape == o.shape; }
};

/// "f32[16, 8]".
std::string formatType(const TensorType &t);
std::string formatShape(llvm::ArrayRef<int64_t> shape);

enum class NodeKind {
  Input,       ///< param: the input's index
  Param,       ///< param: the parameter's index
  Constant,    ///< values: one (a splat) or one per element
  Unary,       ///< op: relu, exp, ..., neg, not
  Binary,      ///< op: add sub mul div pow max min and or
  Compare,     ///< op: eq ne lt le gt ge
  Select,      ///< cond, on_true, on_false
  Broadcast,   ///< a: dims
  Reshape,
  Transpose,   ///< a: perm
  Concat,      ///< i: axis
  Slice,       ///< a: start, b: stride
  Reduce,      ///< op: sum mean max min prod; a: axes; flag: keepdims
  ArgReduce,   ///< op: argmax argmin; i: axis; flag: keepdims
  Matmul,
  Conv,        ///< a: strides, b: dilations, c: pad_low, d: pad_high; i: groups
  Pool,        ///< op: max avg; a: kernel, b: strides, c: pad_low, d: pad_high; flag: count_include_pad
  LayerNorm,   ///< input, scale[, bias]; i: axis; f: epsilon
  BatchNorm,   ///< input, scale, bias, running mean, running var (params); f: epsilon, g: momentum (ONNX's)
  Softmax,     ///< op: softmax log_softmax; i: axis
  Gelu,        ///< flag: approximate
  ParamUnary,  ///< op: leaky_relu elu; f: alpha
  Clamp,       ///< f: min, g: max; a: which are given (a[0] min, a[1] max)
  Cast,
  Dropout,     ///< f: ratio; i: stream
  Gather,      ///< i: axis
};

struct Node {
  NodeKind kind;
  std::string op;
  llvm::SmallVector<int, 3> operands;
  TensorType type;
  Pos pos;
  llvm::SmallVector<int64_t, 4> a, b, c, d;
  int64_t i = 0;
  double f = 0, g = 0;
  bool flag = false;
  std::vector<double> values;
  int index = -1;
};

/// How a parameter's initial values are drawn, resolved to one of the
/// descriptor's three kinds (tcc-run --init draws the same distribution).
struct InitSpec {
  enum Kind { Constant, Uniform, Normal } kind = Constant;
  double a = 0, b = 0; ///< value; lo, hi; mean, std
  uint64_t seed = 0;
  /// The descriptor's spelling: "constant V", "uniform LO HI", "normal M S".
  std::string describe() const;
};

struct ParamInfo {
  std::string name;
  TensorType type;
  bool isState = false;
  InitSpec init;
  Pos pos;
};

struct InputInfo {
  std::string name;
  TensorType type;
  Pos pos;
};

struct OutputInfo {
  std::string name;
  int node;
  Pos pos;
};

/// The training recipe of a `train { }` block; unset fields keep the
/// compiler's defaults, and command-line flags override set ones.
struct Recipe {
  std::optional<std::string> loss, optimizer, labels;
  std::optional<double> momentum, dampening, weightDecay, beta1, beta2, eps, gradClip,
      labelSmoothing;
  std::optional<int64_t> gradAccum, ignoreIndex;
  std::optional<bool> nesterov;
  std::vector<std::string> freeze;
};

struct Graph {
  std::string modelName;
  std::vector<Node> nodes;
  std::vector<InputInfo> inputs;
  std::vector<ParamInfo> params;
  std::vector<OutputInfo> outputs;
  Recipe recipe;
};

} // namespace tcc::dsl

#endif // TCC_FRONTEND_DSL_GRAPH_H
