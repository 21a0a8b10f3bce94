//===- OnnxImporter.cpp - ONNX ModelProto to the tcc dialect --------------===//
//
// Reads a model (binary or textual), checks it as a whole (opsets, operator
// support, initializers, graph order), binds symbolic dimensions, and imports
// the graph into one func.func whose arguments are the graph inputs followed
// by the parameters (float initializers, in first-use order; the model's
// buffers among them marked tcc.buffer). Every error is located at a node,
// names what is wrong, and ends the import; unsupported operators are
// reported all at once.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/OnnxImporter.h"

#include "dialects/BatchRows.h"
#include "dialects/ByteSizes.h"
#include "frontend/onnx/ImportContext.h"
#include "dialects/TccNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/GlobPattern.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <google/protobuf/unknown_field_set.h>
#include <onnx/defs/parser.h>

#include <cstring>
#include <exception>
#include <queue>

using namespace mlir;
using namespace tcc;
using namespace tcc::onnx_frontend;

/// The newest default-domain opset the importer knows.
static constexpr int64_t kMaxOpset = 23;

/// The opset that introduced each operator newer than opset 1; a model that
/// imports an older opset cannot use it.
static int64_t introducedIn(StringRef op) {
  static const llvm::StringMap<int64_t> since = {
      {"Expand", 8},          {"Erf", 9},           {"Sign", 9},
      {"Where", 9},           {"ConstantOfShape", 9}, {"Scatter", 9},
      {"Upsample", 7},        {"Resize", 10},       {"ThresholdedRelu", 10},
      {"GatherElements", 11}, {"ScatterElements", 11}, {"ScatterND", 11},
      {"CumSum", 11},         {"Range", 11},        {"Round", 11},
      {"Celu", 12},           {"Einsum", 12},       {"LessOrEqual", 12},
      {"GreaterOrEqual", 12}, {"SoftmaxCrossEntropyLoss", 12},
      {"NegativeLogLikelihoodLoss", 12}, {"HardSwish", 14}, {"Trilu", 14},
      {"CastLike", 15},       {"LayerNormalization", 17},
      {"GroupNormalization", 18}, {"Mish", 18}, {"Gelu", 20}};
  auto it = since.find(op);
  return it == since.end() ? 1 : it->second;
}

/// The opset that removed an operator (it may not be used from then on).
static int64_t removedIn(StringRef op) {
  if (op == "Upsample")
    return 10;
  if (op == "Scatter")
    return 11;
  return INT64_MAX;
}

static bool isDefaultDomain(const std::string &domain) {
  return domain.empty() || domain == "ai.onnx";
}

const HandlerTable &tcc::onnx_frontend::defaultDomainHandlers() {
  static const HandlerTable table = [] {
    HandlerTable t;
    registerElementwiseHandlers(t);
    registerTensorHandlers(t);
    registerNNHandlers(t);
    registerRecurrentHandlers(t);
    return t;
  }();
  return table;
}

namespace {

class GraphImporter final : public GraphState {
public:
  /// SCAN_VALUES: read every float initializer the graph uses, to mark those
  /// holding an infinity or NaN as buffers (off for the batch probe, which
  /// reads no values).
  GraphImporter(MLIRContext *ctx, const onnx::ModelProto &model,
                StringRef displayName, StringRef dir,
                const OnnxImportOptions &options, bool scanValues = true)
      : ctx(ctx), model(model), graph(model.graph()), displayName(displayName),
        dir(dir), options(options), scanValues(scanValues), builder(ctx),
        fileLoc(FileLineColLoc::get(ctx, displayName, 0, 0)) {}

  OwningOpRef<ModuleOp> run();

  Value lookup(StringRef name) override;
  DenseElementsAttr lookupConstant(StringRef name) override;
  void define(StringRef name, Value value) override { values[name] = value; }
  StringRef modelDir() const override { return dir; }

private:
  InFlightDiagnostic modelError() { return mlir::emitError(fileLoc); }
  Location nodeLoc(const onnx::NodeProto &node, int index);

  LogicalResult checkOpsets();
  LogicalResult checkOperators();
  LogicalResult collectInitializers();
  LogicalResult collectBuffers();
  /// Records on the module what PyTorch's dynamo exporter changed on the way
  /// to the file (attr::exporter, attr::exportRewrites, attr::exportMissing),
  /// for tcc-build-train-step's warnings.
  void recordExportChanges();
  FailureOr<RankedTensorType> valueInfoType(const onnx::ValueInfoProto &info,
                                            bool bindSymbols);
  LogicalResult importInputs();
  /// Whether --batch bound the first dimension of some input, and an input
  /// whose first dimension is fixed to another size.
  bool batchBound = false;
  const onnx::ValueInfoProto *fixedBatchInput = nullptr;
  int64_t fixedBatchSize = 0;
  LogicalResult importConstantInput(const onnx::ValueInfoProto &in,
                                    const ConstantInput &value);
  FailureOr<SmallVector<int>> sortNodes();
  LogicalResult importNodes(ArrayRef<int> order);
  LogicalResult importOutputs();

  MLIRContext *ctx;
  const onnx::ModelProto &model;
  const onnx::GraphProto &graph;
  std::string displayName, dir;
  const OnnxImportOptions &options;
  bool scanValues;
  OpBuilder builder;
  Location fileLoc;
  int64_t opset = 0;

  OwningOpRef<ModuleOp> module;
  func::FuncOp func;
  Block *body = nullptr;
  /// One entry per block argument: attr::input or attr::param, the name, and
  /// for a buffer how that is known (attr::bufferBy*), else empty.
  struct ArgRole {
    StringRef role;
    std::string name;
    StringRef buffer;
  };
  SmallVector<ArgRole> argRoles;
  /// Initializers known to be buffers before their values are read (the
  /// exporter's graph signature, --buffers), with how that is known; and
  /// those the graph signature marks as trainable parameters.
  llvm::StringMap<StringRef> buffers;
  llvm::StringSet<> signatureParameters;
  llvm::StringMap<Value> values;
  llvm::MapVector<StringRef, const onnx::TensorProto *> initializers;
  llvm::StringMap<DenseElementsAttr> constantCache;
};

} // namespace

Location GraphImporter::nodeLoc(const onnx::NodeProto &node, int index) {
  std::string label = node.name().empty()
                          ? node.op_type() + "#" + std::to_string(index)
                          : node.name();
  return NameLoc::get(StringAttr::get(ctx, label), fileLoc);
}

LogicalResult GraphImporter::checkOpsets() {
  bool found = false;
  for (const onnx::OperatorSetIdProto &o : model.opset_import()) {
    if (!isDefaultDomain(o.domain()))
      continue;
    found = true;
    opset = o.version();
  }
  if (!found)
    return modelError() << "the model imports no version of the default "
                           "ONNX operator set (opset_import is missing '')",
           failure();
  if (opset < 1 || opset > kMaxOpset)
    return modelError() << "the model uses ONNX opset " << opset
                        << "; tcc supports opsets 1 to " << kMaxOpset,
           failure();
  return success();
}

LogicalResult GraphImporter::checkOperators() {
  const HandlerTable &handlers = defaultDomainHandlers();
  llvm::StringSet<> imported;
  for (const onnx::OperatorSetIdProto &o : model.opset_import())
    imported.insert(isDefaultDomain(o.domain()) ? "" : o.domain());
  // Every distinct unsupported operator, with the first node that uses it.
  std::vector<std::pair<std::string, std::string>> missing;
  llvm::StringSet<> seen;
  auto note = [&](const std::string &op, const std::string &node) {
    if (seen.insert(op).second)
      missing.push_back({op, node});
  };
  for (auto [i, node] : llvm::enumerate(graph.node())) {
    std::string label =
        node.name().empty() ? node.op_type() + "#" + std::to_string(i)
                            : node.name();
    if (isDefaultDomain(node.domain())) {
      const std::string &op = node.op_type();
      if (!handlers.count(op))
        note(op, label);
      else if (opset < introducedIn(op))
        note(op + " (introduced in opset " + std::to_string(introducedIn(op)) +
                 "; the model imports opset " + std::to_string(opset) + ")",
             label);
      else if (opset >= removedIn(op))
        note(op + " (removed in opset " + std::to_string(removedIn(op)) +
                 "; the model imports opset " + std::to_string(opset) + ")",
             label);
      continue;
    }
    std::string key = node.domain() + "." + node.op_type();
    if (!imported.count(node.domain()))
      key += " (domain '" + node.domain() + "' is not in opset_import)";
    else
      key += " (operator domain '" + node.domain() + "' is not supported)";
    note(key, label);
  }
  if (missing.empty())
    return success();
  auto diag = modelError() << missing.size()
                           << " unsupported operator type"
                           << (missing.size() == 1 ? "" : "s") << ": ";
  bool first = true;
  for (auto &[op, node] : missing) {
    diag << (first ? "" : ", ") << op << " (first used by node '" << node
         << "')";
    first = false;
  }
  return failure();
}

LogicalResult GraphImporter::collectInitializers() {
  for (const onnx::TensorProto &t : graph.initializer()) {
    if (t.name().empty())
      return modelError() << "an initializer has no name", failure();
    if (!initializers.insert({t.name(), &t}).second)
      return modelError() << "initializer '" << t.name()
                          << "' is defined twice",
             failure();
    if (!convertElementType(ctx, t.data_type()))
      return modelError() << "initializer '" << t.name()
                          << "' has element type "
                          << onnxTypeName(t.data_type())
                          << ", which tcc does not support",
             failure();
    SmallVector<int64_t> dims(t.dims().begin(), t.dims().end());
    auto count = checkedCount(dims, [&] { return modelError(); },
                              "initializer '" + t.name() + "'");
    if (failed(count))
      return failure();
    Type et = convertElementType(ctx, t.data_type());
    int64_t width = tcc::elementBytes(et);
    if (t.data_location() == onnx::TensorProto::EXTERNAL) {
      if (failed(checkExternalData(t, dir, *count * width,
                                   [&] { return modelError(); })))
        return failure();
      continue;
    }
    // Catch truncated data now, before it is needed.
    int64_t have = -1;
    if (t.has_raw_data())
      have = int64_t(t.raw_data().size()) == *count * width ? *count : -1;
    else
      have = std::max({t.float_data_size(), t.int32_data_size(),
                       t.int64_data_size(), t.double_data_size(),
                       t.uint64_data_size()});
    if (have != *count)
      return modelError() << "initializer '" << t.name() << "' of "
                          << *count << " elements has missing or extra data",
             failure();
  }
  return success();
}

/// The metadata_props of a message (ONNX IR version 10: field 4 of a
/// ValueInfoProto, 9 of a NodeProto, 16 of a GraphProto). An ONNX library
/// that knows the field holds it as a known field (read by reflection), an
/// older one as an unknown field (parsed from its bytes); either way nothing
/// else of the message is copied (a graph can hold gigabytes of weights).
static SmallVector<std::pair<std::string, std::string>>
wireMetadata(const google::protobuf::Message &message, int field) {
  SmallVector<std::pair<std::string, std::string>> props;
  const google::protobuf::Reflection *reflection = message.GetReflection();
  if (const google::protobuf::FieldDescriptor *known =
          message.GetDescriptor()->FindFieldByNumber(field)) {
    if (!known->is_repeated() ||
        known->type() != google::protobuf::FieldDescriptor::TYPE_MESSAGE)
      return props;
    for (int i = 0, e = reflection->FieldSize(message, known); i < e; ++i) {
      onnx::StringStringEntryProto prop;
      if (prop.ParseFromString(reflection->GetRepeatedMessage(message, known, i).SerializeAsString()))
        props.push_back({prop.key(), prop.value()});
    }
    return props;
  }
  const google::protobuf::UnknownFieldSet &unknown = reflection->GetUnknownFields(message);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const google::protobuf::UnknownField &f = unknown.field(i);
    onnx::StringStringEntryProto prop;
    if (f.number() == field && f.type() == google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED &&
        prop.ParseFromString(f.length_delimited()))
      props.push_back({prop.key(), prop.value()});
  }
  return props;
}

static SmallVector<std::pair<std::string, std::string>>
valueMetadata(const onnx::ValueInfoProto &info) {
  return wireMetadata(info, 4);
}

/// The key under which PyTorch's exporter (torch.export, `dynamo=True`)
/// records each initializer's kind in its value's metadata_props: PARAMETER,
/// BUFFER, CONSTANT_TENSOR (and USER_INPUT on graph inputs).
static constexpr llvm::StringLiteral kInputKindKey =
    "pkg.torch.export.graph_signature.InputSpec.kind";
/// The same exporter's whole graph signature, as text, in the graph's (or,
/// from older exporters, the model's) metadata_props: one line per input,
/// `NAME: KIND target='STATE_DICT_NAME'`.
static constexpr llvm::StringLiteral kSignatureKey =
    "pkg.torch.export.ExportedProgram.graph_signature";
/// The key with which onnxscript's optimizer (torch.onnx.export's default
/// `optimize=True`) marks each node a rewrite rule made.
static constexpr llvm::StringLiteral kRewriteRuleKey =
    "pkg.onnxscript.rewriter.rule_name";
/// The prefix of the keys with which that optimizer marks values it made
/// (`pkg.onnxscript.optimizer.folded_from`, ...).
static constexpr llvm::StringLiteral kOptimizerKeyPrefix = "pkg.onnxscript.optimizer.";

void GraphImporter::recordExportChanges() {
  Operation *op = module->getOperation();
  // The exporter, known by its graph signature.
  std::string signature;
  for (const auto &[key, value] : wireMetadata(graph, 16))
    if (key == kSignatureKey)
      signature = value;
  for (const onnx::StringStringEntryProto &prop : model.metadata_props())
    if (prop.key() == kSignatureKey && signature.empty())
      signature = prop.value();
  bool marked = !signatureParameters.empty() ||
                llvm::any_of(buffers, [](const auto &b) {
                  return b.second == tcc::attr::bufferBySignature;
                });
  if (!signature.empty() || marked)
    op->setAttr(tcc::attr::exporter, StringAttr::get(ctx, tcc::attr::exporterTorchExport));

  // Nodes that the exporter's optimizer rewrote: the first, its rule, how many.
  int64_t rewritten = 0;
  std::string firstNode, firstRule;
  for (const onnx::NodeProto &node : graph.node())
    for (const auto &[key, rule] : wireMetadata(node, 9))
      if (key == kRewriteRuleKey) {
        if (!rewritten++) {
          firstNode = node.name().empty() ? node.output(0) : node.name();
          firstRule = rule;
        }
        break;
      }
  if (rewritten)
    op->setAttr(tcc::attr::exportRewrites,
                builder.getDictionaryAttr(
                    {builder.getNamedAttr("node", builder.getStringAttr(firstNode)),
                     builder.getNamedAttr("rule", builder.getStringAttr(firstRule)),
                     builder.getNamedAttr("count", builder.getI64IntegerAttr(rewritten))}));

  // Parameters of the signature that are not initializers, where the
  // optimizer ran (rewritten nodes, or values it folded): merged into another
  // one, folded or dropped on the way to the file. Without the optimizer a
  // missing parameter is a tied one (one tensor under two names in PyTorch,
  // such as GPT-2's embedding and head), which the exporter writes once and
  // PyTorch trains as one. Buffers are not trained, and the exporter drops
  // unread ones (a batch norm's num_batches_tracked).
  bool optimized = rewritten > 0 || llvm::any_of(graph.value_info(), [](const auto &info) {
                     return llvm::any_of(valueMetadata(info), [](const auto &prop) {
                       return StringRef(prop.first).starts_with(kOptimizerKeyPrefix);
                     });
                   });
  if (!optimized)
    return;
  SmallVector<Attribute> missing;
  SmallVector<StringRef> lines;
  StringRef(signature).split(lines, '\n');
  for (StringRef line : lines) {
    auto [name, rest] = line.split(": ");
    rest = rest.trim();
    if (!rest.consume_front("PARAMETER "))
      continue;
    if (!rest.consume_front("target='"))
      continue;
    StringRef target = rest.take_until([](char c) { return c == '\''; });
    if (!target.empty() && !initializers.count(target))
      missing.push_back(builder.getStringAttr(target));
  }
  if (!missing.empty())
    op->setAttr(tcc::attr::exportMissing, builder.getArrayAttr(missing));
}

LogicalResult GraphImporter::collectBuffers() {
  // The exporter's graph signature: on the initializer's value_info entry,
  // or on its graph input where the initializer is one.
  auto readKinds = [&](const auto &infos) {
    for (const onnx::ValueInfoProto &info : infos) {
      if (!initializers.count(info.name()))
        continue;
      for (const auto &[key, kind] : valueMetadata(info)) {
        if (key != kInputKindKey)
          continue;
        if (kind == "PARAMETER")
          signatureParameters.insert(info.name());
        else if (kind == "BUFFER" || kind == "CONSTANT_TENSOR")
          buffers[info.name()] = tcc::attr::bufferBySignature;
      }
    }
  };
  readKinds(graph.input());
  readKinds(graph.value_info());
  // --buffers: the user's word wins over the signature's.
  for (const std::string &text : options.buffers) {
    llvm::Expected<llvm::GlobPattern> pattern = llvm::GlobPattern::create(text);
    if (!pattern)
      return modelError() << "--buffers: bad pattern '" << text
                          << "': " << llvm::toString(pattern.takeError()),
             failure();
    bool matched = false;
    for (const auto &[name, t] : initializers) {
      if (!isa<FloatType>(convertElementType(ctx, t->data_type())) ||
          !pattern->match(name))
        continue;
      buffers[name] = tcc::attr::bufferByOption;
      signatureParameters.erase(name);
      matched = true;
    }
    if (!matched)
      return modelError() << "--buffers pattern '" << text
                          << "' matches no float initializer of the model",
             failure();
  }
  return success();
}

/// Whether BYTES, the little-endian values of the float type ET, hold an
/// infinity or a NaN (an exponent field of all ones).
static bool holdsNonFinite(Type et, ArrayRef<char> bytes) {
  uint64_t exponent = et.isF32()    ? 0x7F800000u
                      : et.isF64()  ? 0x7FF0000000000000u
                      : et.isF16()  ? 0x7C00u
                      : et.isBF16() ? 0x7F80u
                                    : 0;
  if (!exponent)
    return false;
  size_t width = et.getIntOrFloatBitWidth() / 8;
  for (size_t i = 0; i + width <= bytes.size(); i += width) {
    uint64_t bits = 0;
    std::memcpy(&bits, bytes.data() + i, width);
    if ((bits & exponent) == exponent)
      return true;
  }
  return false;
}

FailureOr<RankedTensorType>
GraphImporter::valueInfoType(const onnx::ValueInfoProto &info,
                             bool bindSymbols) {
  if (!info.type().has_tensor_type())
    return modelError() << "graph value '" << info.name()
                        << "' is not a tensor; tcc imports tensors only",
           failure();
  const onnx::TypeProto::Tensor &tt = info.type().tensor_type();
  Type et = convertElementType(ctx, tt.elem_type());
  if (!et)
    return modelError() << "graph value '" << info.name()
                        << "' has element type " << onnxTypeName(tt.elem_type())
                        << ", which tcc does not support",
           failure();
  if (!tt.has_shape())
    return modelError() << "graph value '" << info.name()
                        << "' has no shape; tcc compiles static shapes",
           failure();
  SmallVector<int64_t> dims;
  for (auto [i, d] : llvm::enumerate(tt.shape().dim())) {
    if (d.has_dim_value()) {
      if (d.dim_value() < 0)
        return modelError() << "graph value '" << info.name()
                            << "' has negative dimension " << d.dim_value(),
               failure();
      dims.push_back(d.dim_value());
      continue;
    }
    if (!bindSymbols) {
      dims.push_back(ShapedType::kDynamic);
      continue;
    }
    std::string sym = d.has_dim_param() ? d.dim_param() : "";
    auto it = options.dims.find(sym);
    if (!sym.empty() && it != options.dims.end() && i == 0 && options.batch &&
        *options.batch != it->second)
      return modelError() << "--batch=" << *options.batch << " and --dim " << sym << "="
                          << it->second << " both bind the first dimension of input '"
                          << info.name() << "'; give one of them",
             failure();
    if (!sym.empty() && it != options.dims.end()) {
      dims.push_back(it->second);
    } else if (i == 0 && options.batch) {
      dims.push_back(*options.batch);
      batchBound = true;
    } else {
      return modelError() << "input '" << info.name() << "' dimension " << i
                          << (sym.empty() ? " is unknown" : " is symbolic ('" + sym + "')")
                          << ": bind it with "
                          << (i == 0 ? "--batch=N or " : "")
                          << "--dim " << (sym.empty() ? "NAME" : sym)
                          << "=<size>",
             failure();
    }
  }
  if (bindSymbols && failed(checkedCount(dims, [&] { return modelError(); },
                                         "input '" + info.name() + "'")))
    return failure();
  return RankedTensorType::get(dims, et);
}

/// The MLIR element type of a tcc_dtype (runtime/include/tcc/abi.h).
static Type elementTypeOfDtype(MLIRContext *ctx, int32_t dtype) {
  Builder b(ctx);
  switch (dtype) {
  case 1: return b.getF32Type();
  case 2: return b.getF64Type();
  case 3: return b.getF16Type();
  case 4: return b.getBF16Type();
  case 5: return b.getIntegerType(8);
  case 6: return b.getIntegerType(16);
  case 7: return b.getIntegerType(32);
  case 8: return b.getIntegerType(64);
  case 9: return b.getIntegerType(8, false);
  case 10: return b.getIntegerType(16, false);
  case 11: return b.getIntegerType(32, false);
  case 12: return b.getIntegerType(64, false);
  case 13: return b.getI1Type();
  default: return {};
  }
}

LogicalResult GraphImporter::importConstantInput(const onnx::ValueInfoProto &in,
                                                 const ConstantInput &value) {
  auto declared = valueInfoType(in, /*bindSymbols=*/false);
  if (failed(declared))
    return failure();
  Type et = elementTypeOfDtype(ctx, value.dtype);
  if (et != declared->getElementType())
    return modelError() << "--const-input '" << in.name() << "' holds "
                        << et << " values, but the input is declared as "
                        << declared->getElementType(),
           failure();
  bool match = declared->getRank() == int64_t(value.shape.size());
  for (int64_t d = 0; match && d < declared->getRank(); ++d)
    match = declared->isDynamicDim(d) ||
            declared->getDimSize(d) == value.shape[d];
  auto type = RankedTensorType::get(value.shape, et);
  if (!match)
    return modelError() << "--const-input '" << in.name() << "' has shape "
                        << type << ", but the input is declared as "
                        << *declared,
           failure();
  auto count = checkedCount(value.shape, [&] { return modelError(); },
                            "--const-input '" + in.name() + "'");
  if (failed(count))
    return failure();
  int64_t width = tcc::elementBytes(et);
  if (int64_t(value.bytes.size()) != *count * width)
    return modelError() << "--const-input '" << in.name()
                        << "' has the wrong number of bytes",
           failure();
  DenseElementsAttr attr;
  if (et.isInteger(1)) {
    SmallVector<bool> bits;
    for (char c : value.bytes)
      bits.push_back(c != 0);
    attr = DenseElementsAttr::get(type, bits);
  } else {
    attr = DenseElementsAttr::getFromRawBuffer(type, value.bytes);
  }
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(body);
  values[in.name()] = ConstantOp::create(
      builder, NameLoc::get(StringAttr::get(ctx, in.name()), fileLoc), attr);
  return success();
}

LogicalResult GraphImporter::importInputs() {
  for (const auto &c : options.constantInputs) {
    bool found = llvm::any_of(graph.input(), [&](const onnx::ValueInfoProto &i) {
      return i.name() == c.getKey() && !initializers.count(i.name());
    });
    if (!found)
      return modelError() << "--const-input names '" << c.getKey()
                          << "', which is not a graph input of the model",
             failure();
  }
  for (const onnx::ValueInfoProto &in : graph.input()) {
    // Before IR version 4 every initializer is also listed as an input; such
    // an input is a parameter with a default value, not a model input.
    if (initializers.count(in.name()))
      continue;
    if (values.count(in.name()))
      return modelError() << "graph input '" << in.name()
                          << "' is declared twice",
             failure();
    auto constant = options.constantInputs.find(in.name());
    if (constant != options.constantInputs.end()) {
      if (failed(importConstantInput(in, constant->second)))
        return failure();
      continue;
    }
    auto type = valueInfoType(in, /*bindSymbols=*/true);
    if (failed(type))
      return failure();
    values[in.name()] = body->addArgument(*type, fileLoc);
    argRoles.push_back({tcc::attr::input, in.name(), {}});
    if (!fixedBatchInput && type->getRank() > 0 && options.batch &&
        type->getDimSize(0) != *options.batch) {
      fixedBatchInput = &in;
      fixedBatchSize = type->getDimSize(0);
    }
  }
  // --batch that binds nothing would be ignored: say so when it differs
  // from the batch the model fixes.
  if (options.batch && !batchBound && fixedBatchInput)
    return modelError() << "--batch=" << *options.batch
                        << " binds nothing: no graph input has a symbolic first dimension, "
                           "and input '"
                        << fixedBatchInput->name() << "' has a fixed one of " << fixedBatchSize
                        << " (export the model with a dynamic batch axis, or leave --batch out)",
           failure();
  return success();
}

Value GraphImporter::lookup(StringRef name) {
  auto it = values.find(name);
  if (it != values.end())
    return it->second;
  auto init = initializers.find(name);
  if (init == initializers.end())
    return {};
  const onnx::TensorProto &t = *init->second;
  Type et = convertElementType(ctx, t.data_type());
  Value v;
  if (isa<FloatType>(et)) {
    // Float initializers are parameters: function arguments, never constants
    // in the IR, so that large models import in seconds and training can
    // update them. A buffer of the model is a parameter marked tcc.buffer,
    // which training leaves alone; without the exporter's or the user's
    // word, values that no trained parameter holds (an infinity or NaN: a
    // causal mask's -inf) mark one.
    SmallVector<int64_t> dims(t.dims().begin(), t.dims().end());
    StringRef buffer = buffers.lookup(t.name());
    bool scan = scanValues && buffer.empty() && !signatureParameters.count(t.name());
    if (options.onParameter || scan) {
      auto bytes = tensorBytes(t, ctx, dir, [&] { return modelError(); });
      if (failed(bytes))
        return {};
      if (scan && holdsNonFinite(et, *bytes))
        buffer = tcc::attr::bufferByValues;
      if (options.onParameter)
        options.onParameter(t.name(), et, dims, *bytes);
    }
    v = body->addArgument(RankedTensorType::get(dims, et), fileLoc);
    argRoles.push_back({tcc::attr::param, t.name(), buffer});
  } else {
    DenseElementsAttr c = lookupConstant(name);
    if (!c)
      return {};
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(body);
    v = ConstantOp::create(builder, NameLoc::get(StringAttr::get(ctx, name), fileLoc), c);
  }
  values[name] = v;
  return v;
}

DenseElementsAttr GraphImporter::lookupConstant(StringRef name) {
  // An initializer keeps its value even after lookup() made it a parameter
  // (a float initializer read first as a tensor, then as a bound or a shape).
  auto init = initializers.find(name);
  if (init == initializers.end()) {
    auto it = values.find(name);
    if (it == values.end())
      return {};
    if (auto c = it->second.getDefiningOp<ConstantOp>())
      return dyn_cast<DenseElementsAttr>(c.getValue());
    return {};
  }
  auto cached = constantCache.find(name);
  if (cached != constantCache.end())
    return cached->second;
  auto c = convertTensor(*init->second, ctx, dir, [&] { return modelError(); });
  if (failed(c))
    return {};
  constantCache[name] = *c;
  return *c;
}

FailureOr<SmallVector<int>> GraphImporter::sortNodes() {
  int n = graph.node_size();
  llvm::StringMap<int> producer;
  auto label = [&](int i) {
    const onnx::NodeProto &node = graph.node(i);
    return node.name().empty() ? node.op_type() + "#" + std::to_string(i)
                               : node.name();
  };
  for (int i = 0; i < n; ++i)
    for (const std::string &out : graph.node(i).output()) {
      if (out.empty())
        continue;
      if (values.count(out) || initializers.count(out))
        return modelError() << "node '" << label(i) << "' writes '" << out
                            << "', which is a graph input or initializer",
               failure();
      auto [it, inserted] = producer.insert({out, i});
      if (!inserted)
        return modelError() << "value '" << out << "' is produced by both node '"
                            << label(it->second) << "' and node '" << label(i)
                            << "'",
               failure();
    }
  // Kahn's algorithm; ties keep the file's order.
  SmallVector<SmallVector<int>> users(n);
  SmallVector<int> pending(n, 0);
  for (int i = 0; i < n; ++i)
    for (const std::string &in : graph.node(i).input()) {
      if (in.empty())
        continue;
      auto it = producer.find(in);
      if (it != producer.end()) {
        users[it->second].push_back(i);
        ++pending[i];
      } else if (!values.count(in) && !initializers.count(in)) {
        return modelError() << "node '" << label(i) << "' ("
                            << graph.node(i).op_type() << ") reads '" << in
                            << "', which is not a graph input, an initializer "
                               "or the output of any node",
               failure();
      }
    }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i)
    if (!pending[i])
      ready.push(i);
  SmallVector<int> order;
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int u : users[i])
      if (--pending[u] == 0)
        ready.push(u);
  }
  if (int(order.size()) != n) {
    for (int i = 0; i < n; ++i)
      if (pending[i])
        return modelError() << "the graph has a cycle through node '"
                            << label(i) << "' (" << graph.node(i).op_type()
                            << ")",
               failure();
  }
  return order;
}

LogicalResult GraphImporter::importNodes(ArrayRef<int> order) {
  const HandlerTable &handlers = defaultDomainHandlers();
  for (int i : order) {
    const onnx::NodeProto &node = graph.node(i);
    Location loc = nodeLoc(node, i);
    builder.setInsertionPointToEnd(body);
    NodeContext nc(*this, node, i, opset, builder, loc);
    if (failed(handlers.lookup(node.op_type())(nc)))
      return failure();
    for (int o = 0; o < node.output_size(); ++o) {
      if (node.output(o).empty() || lookupSequence(node.output(o)))
        continue;
      auto it = values.find(node.output(o));
      if (it == values.end())
        return nc.error() << "output " << o << " ('" << node.output(o)
                          << "') is not supported by tcc's importer",
               failure();
      // Shapes computed from data (Gather of a large index tensor, Concat of
      // many inputs) can outgrow what tcc can address.
      auto type = cast<RankedTensorType>(it->second.getType());
      if (failed(checkedCount(type.getShape(), [&] { return nc.error(); },
                              "output '" + node.output(o) + "'")))
        return failure();
    }
  }
  return success();
}

LogicalResult GraphImporter::importOutputs() {
  SmallVector<Value> results;
  SmallVector<std::string> names;
  for (const onnx::ValueInfoProto &out : graph.output()) {
    Value v = lookup(out.name());
    if (!v)
      return modelError() << "graph output '" << out.name()
                          << "' is never computed",
             failure();
    // Check what the model declares against what tcc inferred.
    if (out.type().has_tensor_type()) {
      auto declared = valueInfoType(out, /*bindSymbols=*/false);
      if (failed(declared))
        return failure();
      auto actual = cast<RankedTensorType>(v.getType());
      if (declared->getElementType() != actual.getElementType())
        return modelError() << "graph output '" << out.name()
                            << "' is declared as " << declared->getElementType()
                            << " but computes " << actual.getElementType(),
               failure();
      if (out.type().tensor_type().has_shape()) {
        bool match = declared->getRank() == actual.getRank();
        for (int64_t d = 0; match && d < actual.getRank(); ++d)
          match = declared->isDynamicDim(d) ||
                  declared->getDimSize(d) == actual.getDimSize(d);
        if (!match)
          return modelError() << "graph output '" << out.name()
                              << "' is declared with shape " << *declared
                              << " but computes " << actual,
                 failure();
      }
    }
    results.push_back(v);
    names.push_back(out.name());
  }
  builder.setInsertionPointToEnd(body);
  func::ReturnOp::create(builder, fileLoc, results);
  SmallVector<Type> argTypes(body->getArgumentTypes());
  func.setFunctionType(FunctionType::get(ctx, argTypes, ValueRange(results).getTypes()));
  for (auto [i, role] : llvm::enumerate(argRoles)) {
    func.setArgAttr(i, role.role, StringAttr::get(ctx, role.name));
    if (!role.buffer.empty())
      func.setArgAttr(i, tcc::attr::buffer, StringAttr::get(ctx, role.buffer));
  }
  for (auto [i, name] : llvm::enumerate(names))
    func.setResultAttr(i, tcc::attr::output, StringAttr::get(ctx, name));
  return success();
}

OwningOpRef<ModuleOp> GraphImporter::run() {
  ctx->loadDialect<TccDialect, func::FuncDialect>();
  if (!model.has_graph())
    return modelError() << "the model has no graph", nullptr;
  if (failed(checkOpsets()) || failed(checkOperators()) ||
      failed(collectInitializers()) || failed(collectBuffers()))
    return nullptr;

  module = ModuleOp::create(fileLoc);
  module->getOperation()->setAttr(tcc::attr::opset, builder.getI64IntegerAttr(opset));
  if (!graph.name().empty())
    module->setSymNameAttr(StringAttr::get(ctx, graph.name()));
  // PyTorch's eval-mode export folds each batch norm into the convolution
  // before it and names the folded weight "onnx::Conv_N": training such a
  // model cannot match PyTorch's model.train(). Recorded here (the node of
  // the first one) so that building a training step can say so.
  for (const onnx::NodeProto &node : graph.node())
    if (node.op_type() == "Conv" && node.input_size() > 1 &&
        StringRef(node.input(1)).starts_with("onnx::Conv_")) {
      module->getOperation()->setAttr(
          tcc::attr::foldedBatchNorm,
          StringAttr::get(ctx, node.name().empty() ? node.input(1) : node.name()));
      break;
    }
  recordExportChanges();
  builder.setInsertionPointToEnd(module->getBody());
  func = func::FuncOp::create(builder, fileLoc, options.functionName,
                              FunctionType::get(ctx, {}, {}));
  body = func.addEntryBlock();

  if (failed(importInputs()))
    return nullptr;
  auto order = sortNodes();
  if (failed(order) || failed(importNodes(*order)) || failed(importOutputs()))
    return nullptr;
  if (failed(mlir::verify(*module)))
    return nullptr;
  return std::move(module);
}

//===----------------------------------------------------------------------===//
// Entry points: parse, import, and catch everything protobuf or ONNX throws.
//===----------------------------------------------------------------------===//

/// Imports MODEL once more at batch B + 1, without parameter values or
/// diagnostics, and records on MODULE's function which inputs and outputs
/// follow the batch (dialects/BatchRows.h). A model that fixes its batch
/// fails that import and is left unmarked: it runs full batches only.
static void probeBatch(ModuleOp module, const onnx::ModelProto &model, StringRef displayName,
                       StringRef modelDir, const tcc::OnnxImportOptions &options) {
  MLIRContext *ctx = module.getContext();
  auto fn = module.lookupSymbol<func::FuncOp>(options.functionName);
  if (!fn)
    return;
  tcc::OnnxImportOptions probeOptions = options;
  probeOptions.batch = *options.batch + 1;
  probeOptions.onParameter = nullptr;
  OwningOpRef<ModuleOp> probe;
  {
    ScopedDiagnosticHandler silence(ctx, [](Diagnostic &) { return success(); });
    GraphImporter importer(ctx, model, displayName, modelDir, probeOptions,
                           /*scanValues=*/false);
    probe = importer.run();
  }
  if (!probe)
    return;
  if (auto probeFn = probe->lookupSymbol<func::FuncOp>(options.functionName))
    tcc::annotateBatchRows(fn, probeFn, *options.batch, *probeOptions.batch);
}

OwningOpRef<ModuleOp>
tcc::importOnnxBuffer(MLIRContext &context, StringRef bytes, bool textFormat,
                      StringRef displayName, StringRef modelDir,
                      const OnnxImportOptions &options) {
  Location fileLoc = FileLineColLoc::get(&context, displayName, 0, 0);
  try {
    onnx::ModelProto model;
    if (textFormat) {
      std::string text(bytes);
      onnx::Status status = onnx::OnnxParser::Parse(model, text.c_str());
      if (!status.IsOK())
        return mlir::emitError(fileLoc)
                   << "is not a valid ONNX text model: "
                   << status.ErrorMessage(),
               nullptr;
    } else if (bytes.empty()) {
      return mlir::emitError(fileLoc) << "is empty, not an ONNX model",
             nullptr;
    } else if (bytes.size() > size_t(INT_MAX) ||
               !model.ParseFromArray(bytes.data(), int(bytes.size()))) {
      return mlir::emitError(fileLoc)
                 << "is not a valid ONNX model (the protobuf does not parse; "
                    "is the file truncated or not an .onnx file?)",
             nullptr;
    }
    GraphImporter importer(&context, model, displayName, modelDir, options);
    OwningOpRef<ModuleOp> module = importer.run();
    if (module && options.batch)
      probeBatch(*module, model, displayName, modelDir, options);
    return module;
  } catch (const std::exception &e) {
    return mlir::emitError(fileLoc) << "cannot import the model: " << e.what(),
           nullptr;
  } catch (...) {
    return mlir::emitError(fileLoc) << "cannot import the model", nullptr;
  }
}

OwningOpRef<ModuleOp> tcc::importOnnxFile(MLIRContext &context, StringRef path,
                                          const OnnxImportOptions &options) {
  // A FIFO or device would block (or never end): only regular files.
  llvm::sys::fs::file_status status;
  if (path != "-" && !llvm::sys::fs::status(path, status) &&
      status.type() != llvm::sys::fs::file_type::regular_file &&
      status.type() != llvm::sys::fs::file_type::directory_file)
    return mlir::emitError(FileLineColLoc::get(&context, path, 0, 0))
               << "cannot read the file: not a regular file",
           nullptr;
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return mlir::emitError(FileLineColLoc::get(&context, path, 0, 0))
               << "cannot read the file: " << buffer.getError().message(),
           nullptr;
  StringRef ext = llvm::sys::path::extension(path);
  bool text = ext == ".onnxtxt" || ext == ".txt";
  SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  if (dir.empty())
    dir = ".";
  return importOnnxBuffer(context, (*buffer)->getBuffer(), text, path, dir,
                          options);
}
