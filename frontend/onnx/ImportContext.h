//===- ImportContext.h - what an ONNX op handler sees ---------------------===//
//
// The ONNX importer walks the graph in topological order and hands each node
// to a handler (one function per ONNX op type, registered by family in
// ImportElementwise.cpp, ImportTensor.cpp and ImportNN.cpp). A handler reads
// its inputs and attributes through NodeContext, builds tcc ops with
// createOrFold (so shape computations fold to constants as they are built),
// and sets its outputs. Errors go through NodeContext::error(), which locates
// them at the node.
//
// This header is included only by files compiled with exceptions (the ONNX
// protobuf classes may throw); it exposes no MLIR subclasses, so those files
// need no RTTI from libMLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_FRONTEND_ONNX_IMPORTCONTEXT_H
#define TCC_FRONTEND_ONNX_IMPORTCONTEXT_H

#include "dialects/TccOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"

#include <onnx/onnx_pb.h>

#include <vector>

namespace tcc::onnx_frontend {

/// Everything that is graph-wide: the value table, the initializers, the
/// entry block whose arguments grow as parameters are first used.
class GraphState;

/// The node being imported and the helpers handlers share.
class NodeContext {
public:
  NodeContext(GraphState &graph, const onnx::NodeProto &node, int nodeIndex,
              int64_t opset, mlir::OpBuilder &builder, mlir::Location loc)
      : graph(graph), node(node), nodeIndex(nodeIndex), opset(opset),
        b(builder), loc(loc) {}

  GraphState &graph;
  const onnx::NodeProto &node;
  /// Position of the node in the model's node list (stable across imports).
  const int nodeIndex;
  /// Version of the default ONNX domain the model imports.
  const int64_t opset;
  mlir::OpBuilder &b;
  const mlir::Location loc;

  //===--- Diagnostics ----------------------------------------------------===//

  /// Starts an error at this node; the message is prefixed with the op type.
  mlir::InFlightDiagnostic error();

  //===--- Inputs ---------------------------------------------------------===//

  unsigned numInputs() const { return node.input_size(); }
  /// Whether input `i` is given (optional inputs may be absent or "").
  bool hasInput(unsigned i) const;
  /// The tensor value of input `i`; emits an error and returns null when it is
  /// absent. Float initializers become function arguments (parameters) here.
  mlir::Value input(unsigned i);
  /// The compile-time value of input `i` when it has one (a folded constant or
  /// an initializer), else null. Reading it does not make it a parameter.
  mlir::DenseElementsAttr constantInput(unsigned i);
  /// Input `i` as a list of integers; it must be a compile-time constant.
  /// `what` names it in the error ("shape", "axes", ...).
  mlir::FailureOr<llvm::SmallVector<int64_t>> intsInput(unsigned i,
                                                        llvm::StringRef what);
  /// Input `i` as a list of doubles; it must be a compile-time constant.
  mlir::FailureOr<llvm::SmallVector<double>> floatsInput(unsigned i,
                                                         llvm::StringRef what);

  //===--- Attributes -----------------------------------------------------===//

  const onnx::AttributeProto *attr(llvm::StringRef name) const;
  bool hasAttr(llvm::StringRef name) const { return attr(name) != nullptr; }
  int64_t getInt(llvm::StringRef name, int64_t dflt) const;
  double getFloat(llvm::StringRef name, double dflt) const;
  std::string getString(llvm::StringRef name, llvm::StringRef dflt) const;
  llvm::SmallVector<int64_t> getInts(llvm::StringRef name) const;
  llvm::SmallVector<double> getFloats(llvm::StringRef name) const;
  /// A TENSOR attribute (Constant's `value`, ConstantOfShape's `value`).
  mlir::FailureOr<mlir::DenseElementsAttr> getTensor(llvm::StringRef name);

  //===--- Outputs --------------------------------------------------------===//

  unsigned numOutputs() const { return node.output_size(); }
  /// Whether output `i` is requested (present and not "").
  bool hasOutput(unsigned i) const;
  void setOutput(unsigned i, mlir::Value value);

  //===--- Building -------------------------------------------------------===//

  /// Builds an op and folds it if it can (constants stay constants).
  template <typename OpTy, typename... Args> mlir::Value create(Args &&...args) {
    return b.createOrFold<OpTy>(loc, std::forward<Args>(args)...);
  }
  /// Builds an op without folding (for multi-result ops).
  template <typename OpTy, typename... Args> OpTy createOp(Args &&...args) {
    return OpTy::create(b, loc, std::forward<Args>(args)...);
  }

  static mlir::RankedTensorType type(mlir::Value v) {
    return mlir::cast<mlir::RankedTensorType>(v.getType());
  }
  static llvm::ArrayRef<int64_t> shape(mlir::Value v) {
    return type(v).getShape();
  }
  static int64_t rank(mlir::Value v) { return type(v).getRank(); }
  static mlir::Type elementType(mlir::Value v) {
    return type(v).getElementType();
  }
  static bool isFloat(mlir::Value v) {
    return mlir::isa<mlir::FloatType>(elementType(v));
  }

  /// Maps a possibly negative axis into [0, rank); errors name `what`.
  mlir::FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank,
                                         llvm::StringRef what = "axis");
  /// Normalizes, sorts and deduplicates a list of axes.
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  normalizeAxes(llvm::ArrayRef<int64_t> axes, int64_t rank);

  /// The numpy broadcast of the given shapes, or an error naming them.
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  broadcastShape(llvm::ArrayRef<llvm::ArrayRef<int64_t>> shapes);
  /// Broadcasts `v` to `shape` (numpy: trailing dimensions align).
  mlir::Value broadcastTo(mlir::Value v, llvm::ArrayRef<int64_t> shape);
  /// Broadcasts all values to their common numpy shape.
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  broadcastAll(llvm::ArrayRef<mlir::Value> values);
  /// Like broadcastAll for two operands, honouring the legacy `broadcast` and
  /// `axis` attributes of opsets before 7.
  mlir::FailureOr<std::pair<mlir::Value, mlir::Value>>
  broadcastBinary(mlir::Value a, mlir::Value b);

  mlir::Value reshape(mlir::Value v, llvm::ArrayRef<int64_t> shape);
  /// The slice [start, start + size) of `v` along `axis`, stride 1.
  mlir::Value sliceAxis(mlir::Value v, int64_t axis, int64_t start, int64_t size);
  mlir::Value transpose(mlir::Value v, llvm::ArrayRef<int64_t> perm);
  mlir::Value cast(mlir::Value v, mlir::Type elementType);
  /// A splat constant of the given element type and shape.
  mlir::Value splat(mlir::Type elementType, llvm::ArrayRef<int64_t> shape,
                    double value);
  mlir::Value splatLike(mlir::Value like, double value) {
    return splat(elementType(like), shape(like), value);
  }
  /// A 1-D i64 constant.
  mlir::Value constI64(llvm::ArrayRef<int64_t> values);
  /// A constant of `type` holding `values` (any element type).
  mlir::Value constant(mlir::DenseElementsAttr value);
  /// Sum of `v` over `axes` (sorted), keeping dims as requested.
  mlir::Value reduceSum(mlir::Value v, llvm::ArrayRef<int64_t> axes,
                        bool keepDims);

private:
  mlir::FailureOr<mlir::DenseElementsAttr> requireConstant(unsigned i,
                                                           llvm::StringRef what);
};

using NodeHandler = mlir::LogicalResult (*)(NodeContext &);
using HandlerTable = llvm::StringMap<NodeHandler>;

void registerElementwiseHandlers(HandlerTable &table);
void registerTensorHandlers(HandlerTable &table);
void registerNNHandlers(HandlerTable &table);
void registerRecurrentHandlers(HandlerTable &table);

/// The handlers for the default ONNX domain, keyed by op type.
const HandlerTable &defaultDomainHandlers();

/// The MLIR element type of an ONNX TensorProto data type, or null.
mlir::Type convertElementType(mlir::MLIRContext *ctx, int32_t onnxType);
/// The ONNX name of a data type ("FLOAT", "INT64", ...).
llvm::StringRef onnxTypeName(int32_t onnxType);
/// Row-major element count with overflow checking; errors name `what`.
mlir::FailureOr<int64_t> checkedCount(llvm::ArrayRef<int64_t> dims,
                                      llvm::function_ref<mlir::InFlightDiagnostic()> err,
                                      llvm::StringRef what);

/// The little-endian bytes of a TensorProto's data (raw, typed or external;
/// bool as one byte per element), checked against its shape.
mlir::FailureOr<std::vector<char>>
tensorBytes(const onnx::TensorProto &tensor, mlir::MLIRContext *ctx,
            llvm::StringRef baseDir,
            llvm::function_ref<mlir::InFlightDiagnostic()> err);

/// Converts a TensorProto into an attribute. `baseDir` is the model's folder
/// (external data is read from there; empty refuses external data).
mlir::FailureOr<mlir::DenseElementsAttr>
convertTensor(const onnx::TensorProto &tensor, mlir::MLIRContext *ctx,
              llvm::StringRef baseDir,
              llvm::function_ref<mlir::InFlightDiagnostic()> err);

/// Checks that an external-data tensor names a file inside `baseDir` and that
/// its `neededBytes` of data (at its offset; its length, if given, must agree)
/// lie inside the file. Returns the file's path.
mlir::FailureOr<std::string>
checkExternalData(const onnx::TensorProto &tensor, llvm::StringRef baseDir,
                  int64_t neededBytes,
                  llvm::function_ref<mlir::InFlightDiagnostic()> err);

/// The graph-wide state (defined in OnnxImporter.cpp).
class GraphState {
public:
  /// The value named `name`: a computed value, a graph input, or an
  /// initializer (materialized on first use). Null if it is undefined.
  virtual mlir::Value lookup(llvm::StringRef name) = 0;
  /// The compile-time value of `name`, if it has one.
  virtual mlir::DenseElementsAttr lookupConstant(llvm::StringRef name) = 0;
  virtual void define(llvm::StringRef name, mlir::Value value) = 0;
  virtual llvm::StringRef modelDir() const = 0;

  /// ONNX sequences (what PyTorch's exporters make of torch.split and
  /// lists of tensors) live at import time only: a sequence is the list of
  /// its tensors, known when the graph is imported; the ops on it pick,
  /// count and join those tensors. Null when NAME is no sequence.
  const std::vector<mlir::Value> *lookupSequence(llvm::StringRef name) const {
    auto it = sequences.find(name);
    return it == sequences.end() ? nullptr : &it->second;
  }
  void defineSequence(llvm::StringRef name, std::vector<mlir::Value> values) {
    sequences[name] = std::move(values);
  }

protected:
  ~GraphState() = default;

private:
  llvm::StringMap<std::vector<mlir::Value>> sequences;
};

} // namespace tcc::onnx_frontend

#endif // TCC_FRONTEND_ONNX_IMPORTCONTEXT_H
