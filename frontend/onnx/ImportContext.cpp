//===- ImportContext.cpp - helpers shared by the ONNX op handlers ---------===//
//
// Attribute access, constant inputs, numpy broadcasting, and TensorProto
// conversion (raw, typed and external data), each with a located error.
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/ImportContext.h"
#include "dialects/ByteSizes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cerrno>
#include <cstring>

using namespace mlir;
using namespace tcc;
using namespace tcc::onnx_frontend;

//===----------------------------------------------------------------------===//
// NodeContext: diagnostics, inputs, attributes, outputs
//===----------------------------------------------------------------------===//

InFlightDiagnostic NodeContext::error() {
  return mlir::emitError(loc) << node.op_type() << ": ";
}

bool NodeContext::hasInput(unsigned i) const {
  return int(i) < node.input_size() && !node.input(i).empty();
}

Value NodeContext::input(unsigned i) {
  if (!hasInput(i)) {
    error() << "input " << i << " is required but absent";
    return {};
  }
  Value v = graph.lookup(node.input(i));
  if (!v)
    error() << "input '" << node.input(i)
            << "' is not a graph input, an initializer or an earlier output";
  return v;
}

DenseElementsAttr NodeContext::constantInput(unsigned i) {
  if (!hasInput(i))
    return {};
  return graph.lookupConstant(node.input(i));
}

FailureOr<DenseElementsAttr> NodeContext::requireConstant(unsigned i,
                                                          StringRef what) {
  if (!hasInput(i))
    return error() << "the " << what << " input is required", failure();
  if (DenseElementsAttr c = constantInput(i))
    return c;
  Value v = graph.lookup(node.input(i));
  if (!v)
    return error() << "input '" << node.input(i) << "' is undefined",
           failure();
  auto diag = error() << "the " << what << " ('" << node.input(i)
                      << "') must be known when compiling: tcc compiles "
                         "static shapes, and this value is computed at run "
                         "time";
  if (isa<BlockArgument>(v))
    diag << "; a graph input's value can be fixed with --const-input "
         << node.input(i) << "=FILE";
  return failure();
}

FailureOr<SmallVector<int64_t>> NodeContext::intsInput(unsigned i,
                                                       StringRef what) {
  auto c = requireConstant(i, what);
  if (failed(c))
    return failure();
  if (!isa<IntegerType>(c->getElementType()))
    return error() << "the " << what << " must be integers", failure();
  SmallVector<int64_t> out;
  for (const APInt &v : c->getValues<APInt>())
    out.push_back(v.getSExtValue());
  return out;
}

FailureOr<SmallVector<double>> NodeContext::floatsInput(unsigned i,
                                                        StringRef what) {
  auto c = requireConstant(i, what);
  if (failed(c))
    return failure();
  SmallVector<double> out;
  if (isa<FloatType>(c->getElementType())) {
    for (const APFloat &v : c->getValues<APFloat>()) {
      APFloat d = v;
      bool lost;
      d.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
      out.push_back(d.convertToDouble());
    }
  } else {
    for (const APInt &v : c->getValues<APInt>())
      out.push_back(double(v.getSExtValue()));
  }
  return out;
}

const onnx::AttributeProto *NodeContext::attr(StringRef name) const {
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t NodeContext::getInt(StringRef name, int64_t dflt) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? a->i() : dflt;
}

double NodeContext::getFloat(StringRef name, double dflt) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? double(a->f()) : dflt;
}

std::string NodeContext::getString(StringRef name, StringRef dflt) const {
  const onnx::AttributeProto *a = attr(name);
  return a ? a->s() : dflt.str();
}

SmallVector<int64_t> NodeContext::getInts(StringRef name) const {
  SmallVector<int64_t> out;
  if (const onnx::AttributeProto *a = attr(name))
    out.append(a->ints().begin(), a->ints().end());
  return out;
}

SmallVector<double> NodeContext::getFloats(StringRef name) const {
  SmallVector<double> out;
  if (const onnx::AttributeProto *a = attr(name))
    for (float f : a->floats())
      out.push_back(f);
  return out;
}

FailureOr<DenseElementsAttr> NodeContext::getTensor(StringRef name) {
  const onnx::AttributeProto *a = attr(name);
  if (!a || !a->has_t())
    return error() << "attribute '" << name << "' must be a tensor", failure();
  return convertTensor(a->t(), b.getContext(), graph.modelDir(),
                       [&] { return error(); });
}

bool NodeContext::hasOutput(unsigned i) const {
  return int(i) < node.output_size() && !node.output(i).empty();
}

void NodeContext::setOutput(unsigned i, Value value) {
  if (hasOutput(i))
    graph.define(node.output(i), value);
}

//===----------------------------------------------------------------------===//
// NodeContext: building helpers
//===----------------------------------------------------------------------===//

FailureOr<int64_t> NodeContext::normalizeAxis(int64_t axis, int64_t rank,
                                              StringRef what) {
  // A scalar has no axis: accepting 0 there would index past its shape.
  if (axis < -rank || axis >= rank)
    return error() << what << " " << axis << " is out of range for rank "
                   << rank,
           failure();
  return axis < 0 ? axis + rank : axis;
}

FailureOr<SmallVector<int64_t>>
NodeContext::normalizeAxes(ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> out;
  for (int64_t a : axes) {
    auto n = normalizeAxis(a, rank, "axis");
    if (failed(n))
      return failure();
    out.push_back(*n);
  }
  llvm::sort(out);
  if (std::adjacent_find(out.begin(), out.end()) != out.end())
    return error() << "axes repeat a dimension", failure();
  return out;
}

FailureOr<SmallVector<int64_t>>
NodeContext::broadcastShape(ArrayRef<ArrayRef<int64_t>> shapes) {
  size_t rank = 0;
  for (ArrayRef<int64_t> s : shapes)
    rank = std::max(rank, s.size());
  SmallVector<int64_t> out(rank, 1);
  for (ArrayRef<int64_t> s : shapes) {
    size_t offset = rank - s.size();
    for (auto [i, d] : llvm::enumerate(s)) {
      int64_t &o = out[offset + i];
      if (d == o || d == 1)
        continue;
      if (o == 1) {
        o = d;
        continue;
      }
      auto diag = error() << "operand shapes ";
      for (auto [k, sk] : llvm::enumerate(shapes))
        diag << (k ? " and " : "") << formatShape(sk);
      diag << " do not broadcast";
      return failure();
    }
  }
  // A shape given as data (Expand's) may hold negative or huge sizes.
  if (failed(checkedCount(out, [&] { return error(); }, "the broadcast shape")))
    return failure();
  return out;
}

Value NodeContext::broadcastTo(Value v, ArrayRef<int64_t> target) {
  if (shape(v) == target)
    return v;
  int64_t offset = int64_t(target.size()) - rank(v);
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < rank(v); ++i)
    dims.push_back(offset + i);
  auto resultType = RankedTensorType::get(target, elementType(v));
  return create<BroadcastInDimOp>(resultType, v, dims);
}

FailureOr<SmallVector<Value>> NodeContext::broadcastAll(ArrayRef<Value> values) {
  SmallVector<ArrayRef<int64_t>> shapes;
  for (Value v : values)
    shapes.push_back(shape(v));
  auto target = broadcastShape(shapes);
  if (failed(target))
    return failure();
  SmallVector<Value> out;
  for (Value v : values)
    out.push_back(broadcastTo(v, *target));
  return out;
}

FailureOr<std::pair<Value, Value>> NodeContext::broadcastBinary(Value a,
                                                                Value bv) {
  if (opset < 7) {
    // Legacy semantics: B broadcasts onto A only with broadcast=1, its
    // dimensions aligned to A's starting at `axis` (default: the suffix).
    if (!getInt("broadcast", 0)) {
      if (shape(a) != shape(bv))
        return error() << "operand shapes " << formatShape(shape(a)) << " and "
                       << formatShape(shape(bv))
                       << " differ and the node does not set broadcast=1",
               failure();
      return std::make_pair(a, bv);
    }
    int64_t ra = rank(a), rb = rank(bv);
    int64_t axis = getInt("axis", ra - rb);
    if (axis < 0)
      axis += ra;
    if (axis < 0 || axis + rb > ra)
      return error() << "cannot broadcast " << formatShape(shape(bv)) << " onto "
                     << formatShape(shape(a)) << " at axis " << axis,
             failure();
    SmallVector<int64_t> dims;
    for (int64_t i = 0; i < rb; ++i) {
      int64_t d = shape(bv)[i];
      if (d != 1 && d != shape(a)[axis + i])
        return error() << "cannot broadcast " << formatShape(shape(bv))
                       << " onto " << formatShape(shape(a)) << " at axis "
                       << axis,
               failure();
      dims.push_back(axis + i);
    }
    if (shape(bv) == shape(a))
      return std::make_pair(a, bv);
    Value bb = create<BroadcastInDimOp>(type(a).clone(elementType(bv)), bv, dims);
    return std::make_pair(a, bb);
  }
  auto both = broadcastAll({a, bv});
  if (failed(both))
    return failure();
  return std::make_pair((*both)[0], (*both)[1]);
}

Value NodeContext::sliceAxis(Value v, int64_t axis, int64_t start, int64_t size) {
  SmallVector<int64_t> starts(rank(v), 0), strides(rank(v), 1);
  SmallVector<int64_t> dims(shape(v));
  starts[axis] = start;
  dims[axis] = size;
  return create<SliceOp>(RankedTensorType::get(dims, elementType(v)), v, starts, strides);
}

Value NodeContext::reshape(Value v, ArrayRef<int64_t> target) {
  if (shape(v) == target)
    return v;
  return create<ReshapeOp>(RankedTensorType::get(target, elementType(v)), v);
}

Value NodeContext::transpose(Value v, ArrayRef<int64_t> perm) {
  return create<TransposeOp>(v, perm);
}

Value NodeContext::cast(Value v, Type et) {
  if (elementType(v) == et)
    return v;
  return create<CastOp>(type(v).clone(et), v);
}

Value NodeContext::splat(Type et, ArrayRef<int64_t> shp, double value) {
  auto t = RankedTensorType::get(shp, et);
  Attribute element;
  if (auto ft = dyn_cast<FloatType>(et))
    element = FloatAttr::get(ft, value);
  else if (et.isInteger(1))
    element = IntegerAttr::get(et, value != 0.0);
  else
    element = IntegerAttr::get(et, int64_t(value));
  return constant(DenseElementsAttr::get(t, element));
}

Value NodeContext::constI64(ArrayRef<int64_t> values) {
  auto t = RankedTensorType::get({int64_t(values.size())}, b.getI64Type());
  return constant(DenseElementsAttr::get(t, values));
}

Value NodeContext::constant(DenseElementsAttr value) {
  return ConstantOp::create(b, loc, value);
}

Value NodeContext::reduceSum(Value v, ArrayRef<int64_t> axes, bool keepDims) {
  return create<ReduceSumOp>(v, axes, keepDims);
}

//===----------------------------------------------------------------------===//
// Element types and tensors
//===----------------------------------------------------------------------===//

Type tcc::onnx_frontend::convertElementType(MLIRContext *ctx, int32_t t) {
  Builder b(ctx);
  switch (t) {
  case onnx::TensorProto::FLOAT: return b.getF32Type();
  case onnx::TensorProto::DOUBLE: return b.getF64Type();
  case onnx::TensorProto::FLOAT16: return b.getF16Type();
  case onnx::TensorProto::BFLOAT16: return b.getBF16Type();
  case onnx::TensorProto::INT8: return b.getIntegerType(8);
  case onnx::TensorProto::INT16: return b.getIntegerType(16);
  case onnx::TensorProto::INT32: return b.getIntegerType(32);
  case onnx::TensorProto::INT64: return b.getIntegerType(64);
  case onnx::TensorProto::UINT8: return b.getIntegerType(8, false);
  case onnx::TensorProto::UINT16: return b.getIntegerType(16, false);
  case onnx::TensorProto::UINT32: return b.getIntegerType(32, false);
  case onnx::TensorProto::UINT64: return b.getIntegerType(64, false);
  case onnx::TensorProto::BOOL: return b.getI1Type();
  default: return {};
  }
}

StringRef tcc::onnx_frontend::onnxTypeName(int32_t t) {
  if (onnx::TensorProto::DataType_IsValid(t))
    return onnx::TensorProto::DataType_Name(
        static_cast<onnx::TensorProto::DataType>(t));
  return "an unknown data type";
}

FailureOr<int64_t>
tcc::onnx_frontend::checkedCount(ArrayRef<int64_t> dims,
                                 function_ref<InFlightDiagnostic()> err,
                                 StringRef what) {
  for (int64_t d : dims)
    if (d < 0)
      return err() << what << " has a negative dimension " << d, failure();
  auto n = checkedNumElements(dims);
  if (!n)
    return err() << what << " has shape " << formatShape(dims)
                 << ", whose element count overflows (more than 2^48)",
           failure();
  return *n;
}

FailureOr<std::string>
tcc::onnx_frontend::checkExternalData(const onnx::TensorProto &tensor,
                                      StringRef baseDir, int64_t neededBytes,
                                      function_ref<InFlightDiagnostic()> err) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const onnx::StringStringEntryProto &e : tensor.external_data()) {
    if (e.key() == "location")
      location = e.value();
    else if (e.key() == "offset" || e.key() == "length") {
      char *end = nullptr;
      errno = 0;
      long long v = std::strtoll(e.value().c_str(), &end, 10);
      // ERANGE: 2^64-1 would be clamped to INT64_MAX and named as that.
      if (e.value().empty() || *end || v < 0 || errno == ERANGE)
        return err() << "tensor '" << tensor.name() << "': external data "
                     << e.key() << " '" << e.value() << "' is not a size",
               failure();
      (e.key() == "offset" ? offset : length) = v;
    }
  }
  if (location.empty())
    return err() << "tensor '" << tensor.name()
                 << "' has external data without a location",
           failure();
  if (baseDir.empty())
    return err() << "tensor '" << tensor.name()
                 << "' has external data, but the model was not read from a "
                    "file",
           failure();
  // The data must lie inside the model's folder: no absolute paths, no "..".
  if (llvm::sys::path::is_absolute(location) || location.find('\\') != std::string::npos)
    return err() << "tensor '" << tensor.name() << "': external data path '"
                 << location << "' is absolute; it must be relative to the "
                 << "model's folder",
           failure();
  for (auto it = llvm::sys::path::begin(location),
            e = llvm::sys::path::end(location);
       it != e; ++it)
    if (*it == "..")
      return err() << "tensor '" << tensor.name() << "': external data path '"
                   << location << "' leaves the model's folder",
             failure();
  llvm::SmallString<256> path(baseDir);
  llvm::sys::path::append(path, location);
  // A symbolic link (the file, a folder on the way, or a chain of them) may
  // still lead out of the folder: a model archive holding `w.bin ->
  // /etc/passwd` would copy that file into the weights. Resolve every link
  // and check that the file is still inside the model's (resolved) folder,
  // and a regular file (reading a FIFO would block forever). This guards
  // against what the model's files contain, not against someone changing
  // them while tcc runs.
  llvm::SmallString<256> realBase, realPath;
  if (llvm::sys::fs::real_path(baseDir, realBase) ||
      llvm::sys::fs::real_path(path, realPath))
    return err() << "tensor '" << tensor.name() << "': cannot read external "
                 << "data file '" << path << "'",
           failure();
  llvm::StringRef inside(realPath);
  if (realPath == realBase)
    return err() << "tensor '" << tensor.name() << "': external data path '"
                 << location << "' names the model's folder, not a file",
           failure();
  if (!inside.consume_front(realBase) ||
      !(inside.starts_with("/") || realBase.str().ends_with("/")))
    return err() << "tensor '" << tensor.name() << "': external data path '"
                 << location << "' leads out of the model's folder through a "
                 << "symbolic link (to '" << realPath << "')",
           failure();
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(realPath, status) ||
      status.type() != llvm::sys::fs::file_type::regular_file)
    return err() << "tensor '" << tensor.name() << "': external data file '"
                 << path << "' is not a regular file",
           failure();
  path = realPath;
  uint64_t size = 0;
  if (llvm::sys::fs::file_size(path, size))
    return err() << "tensor '" << tensor.name() << "': cannot read external "
                 << "data file '" << path << "'",
           failure();
  if (length >= 0 && length != neededBytes)
    return err() << "tensor '" << tensor.name() << "': external data length "
                 << length << " does not match the " << neededBytes
                 << " bytes its shape needs",
           failure();
  if (uint64_t(offset) > size || uint64_t(neededBytes) > size - uint64_t(offset))
    return err() << "tensor '" << tensor.name() << "': external data of "
                 << neededBytes << " bytes at offset " << offset
                 << " exceeds the file '" << path << "' of " << size
                 << " bytes",
           failure();
  return std::string(path);
}

/// Bytes per element in ONNX raw_data for an MLIR element type (one per
/// bool, as in abi.h).
static int64_t storageBytes(Type et) { return tcc::elementBytes(et); }

FailureOr<std::vector<char>>
tcc::onnx_frontend::tensorBytes(const onnx::TensorProto &tensor,
                                MLIRContext *ctx, StringRef baseDir,
                                function_ref<InFlightDiagnostic()> err) {
  Type et = convertElementType(ctx, tensor.data_type());
  if (!et)
    return err() << "tensor '" << tensor.name() << "' has element type "
                 << onnxTypeName(tensor.data_type())
                 << ", which tcc does not support",
           failure();
  SmallVector<int64_t> dims(tensor.dims().begin(), tensor.dims().end());
  auto count = checkedCount(dims, err, "tensor '" + tensor.name() + "'");
  if (failed(count))
    return failure();
  auto type = RankedTensorType::get(dims, et);
  int64_t n = *count, width = storageBytes(et);

  // Gather the little-endian bytes, from wherever the tensor keeps them.
  std::vector<char> bytes;
  auto fromRaw = [&](const char *data, size_t size) -> LogicalResult {
    if (int64_t(size) != n * width)
      return err() << "tensor '" << tensor.name() << "' of shape "
                   << formatShape(dims) << " needs " << n * width
                   << " bytes of data, has " << size,
             failure();
    bytes.assign(data, data + size);
    return success();
  };
  auto typedCount = [&](int size) -> LogicalResult {
    if (size != n)
      return err() << "tensor '" << tensor.name() << "' of shape "
                   << formatShape(dims) << " holds " << size
                   << " values instead of " << n,
             failure();
    bytes.resize(n * width);
    return success();
  };
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    auto path = checkExternalData(tensor, baseDir, n * width, err);
    if (failed(path))
      return failure();
    int64_t offset = 0, length = n * width;
    for (const auto &e : tensor.external_data())
      if (e.key() == "offset")
        offset = std::strtoll(e.value().c_str(), nullptr, 10);
    auto buf = llvm::MemoryBuffer::getFileSlice(*path, length, offset);
    if (!buf)
      return err() << "tensor '" << tensor.name()
                   << "': cannot read external data from '" << *path << "'",
             failure();
    if (failed(fromRaw((*buf)->getBufferStart(), (*buf)->getBufferSize())))
      return failure();
  } else if (tensor.has_raw_data()) {
    if (failed(fromRaw(tensor.raw_data().data(), tensor.raw_data().size())))
      return failure();
  } else {
    switch (tensor.data_type()) {
    case onnx::TensorProto::FLOAT:
      if (failed(typedCount(tensor.float_data_size())))
        return failure();
      if (n > 0) // an empty tensor has no data pointer to copy from
        std::memcpy(bytes.data(), tensor.float_data().data(), n * 4);
      break;
    case onnx::TensorProto::DOUBLE:
      if (failed(typedCount(tensor.double_data_size())))
        return failure();
      if (n > 0)
        std::memcpy(bytes.data(), tensor.double_data().data(), n * 8);
      break;
    case onnx::TensorProto::INT64:
      if (failed(typedCount(tensor.int64_data_size())))
        return failure();
      if (n > 0)
        std::memcpy(bytes.data(), tensor.int64_data().data(), n * 8);
      break;
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64:
      if (failed(typedCount(tensor.uint64_data_size())))
        return failure();
      for (int64_t i = 0; i < n; ++i) {
        uint64_t v = tensor.uint64_data(i);
        std::memcpy(bytes.data() + i * width, &v, width);
      }
      break;
    default: // INT32, INT16, INT8, UINT16, UINT8, BOOL, FLOAT16, BFLOAT16
      if (failed(typedCount(tensor.int32_data_size())))
        return failure();
      for (int64_t i = 0; i < n; ++i) {
        uint32_t v = uint32_t(tensor.int32_data(i));
        std::memcpy(bytes.data() + i * width, &v, width);
      }
      break;
    }
  }

  (void)type;
  return bytes;
}

FailureOr<DenseElementsAttr>
tcc::onnx_frontend::convertTensor(const onnx::TensorProto &tensor,
                                  MLIRContext *ctx, StringRef baseDir,
                                  function_ref<InFlightDiagnostic()> err) {
  auto data = tensorBytes(tensor, ctx, baseDir, err);
  if (failed(data))
    return failure();
  std::vector<char> &bytes = *data;
  Type et = convertElementType(ctx, tensor.data_type());
  SmallVector<int64_t> dims(tensor.dims().begin(), tensor.dims().end());
  auto type = RankedTensorType::get(dims, et);
  if (et.isInteger(1)) {
    SmallVector<bool> values;
    for (char c : bytes)
      values.push_back(c != 0);
    return DenseElementsAttr::get(type, values);
  }
  bool splat = false;
  if (!DenseElementsAttr::isValidRawBuffer(type, ArrayRef<char>(bytes), splat))
    return err() << "tensor '" << tensor.name() << "' has malformed data",
           failure();
  return DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>(bytes));
}
