//===- LengthBuckets.cpp - training entries at several sequence lengths ---===//

#include "compiler/LengthBuckets.h"

#include "dialects/TccNames.h"
#include "runtime/include/tcc/abi.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace {

/// The tensor names of FN's arguments (input / param / state) or results
/// (output / update), by kind, to their types.
struct Signature {
  std::map<std::pair<std::string, std::string>, Type> args, results;
};

const llvm::StringLiteral kArgKinds[] = {tcc::attr::input, tcc::attr::param, tcc::attr::state};
const llvm::StringLiteral kResultKinds[] = {tcc::attr::output, tcc::attr::update};

std::optional<std::pair<std::string, std::string>> argName(func::FuncOp fn, unsigned i) {
  for (StringRef kind : kArgKinds)
    if (auto name = fn.getArgAttrOfType<StringAttr>(i, kind))
      return std::make_pair(kind.str(), name.str());
  return std::nullopt;
}

std::optional<std::pair<std::string, std::string>> resultName(func::FuncOp fn, unsigned i) {
  for (StringRef kind : kResultKinds)
    if (auto name = fn.getResultAttrOfType<StringAttr>(i, kind))
      return std::make_pair(kind.str(), name.str());
  return std::nullopt;
}

Signature signatureOf(func::FuncOp fn) {
  Signature s;
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    if (auto key = argName(fn, i))
      s.args[*key] = fn.getArgument(i).getType();
  for (unsigned i = 0; i < fn.getNumResults(); ++i)
    if (auto key = resultName(fn, i))
      s.results[*key] = fn.getResultTypes()[i];
  return s;
}

/// The one axis where VARIANT (at VALUE) differs from MAIN, or -1.
int64_t lengthAxis(Type main, Type variant, int64_t value) {
  auto m = dyn_cast<RankedTensorType>(main), v = dyn_cast<RankedTensorType>(variant);
  if (!m || !v || m.getRank() != v.getRank() || m.getElementType() != v.getElementType())
    return -1;
  int64_t axis = -1;
  for (int64_t d = 0; d < m.getRank(); ++d) {
    if (m.getDimSize(d) == v.getDimSize(d))
      continue;
    if (axis >= 0 || v.getDimSize(d) != value || m.getDimSize(d) < value)
      return -1;
    axis = d;
  }
  return axis;
}

} // namespace

std::string tcc::lengthVariantName(StringRef name, StringRef dim, int64_t value) {
  return (name + "." + dim + "_" + std::to_string(value)).str();
}

LogicalResult tcc::mergeLengthVariant(ModuleOp main, ModuleOp variant, StringRef dim,
                                      int64_t value, std::map<std::string, int64_t> &axes) {
  SmallVector<func::FuncOp> entries;
  for (auto fn : variant.getOps<func::FuncOp>())
    if (fn.getSymName() == TCC_ENTRY_TRAIN_STEP || fn.getSymName() == TCC_ENTRY_ACCUMULATE_GRAD)
      entries.push_back(fn);
  if (entries.empty())
    return variant.emitError("--length-buckets: the model at ")
           << dim << "=" << value << " has no training step";
  for (func::FuncOp fn : entries) {
    auto original = main.lookupSymbol<func::FuncOp>(fn.getSymName());
    if (!original)
      return fn.emitError("--length-buckets: @") << fn.getSymName() << " exists only at " << dim
                                                << "=" << value;
    if (!fn.getOps<func::CallOp>().empty())
      return fn.emitError("--length-buckets: @") << fn.getSymName() << " calls other functions";
    Signature base = signatureOf(original);
    Builder b(fn.getContext());
    // A differing tensor: an input or output gets the variant's own name;
    // a parameter, state or update would be a different model.
    auto rename = [&](const std::pair<std::string, std::string> &key, Type type,
                      const std::map<std::pair<std::string, std::string>, Type> &in,
                      bool arg) -> FailureOr<std::string> {
      auto it = in.find(key);
      StringRef kind = StringRef(key.first).drop_front(StringRef("tcc.").size());
      if (it == in.end())
        return fn.emitError("--length-buckets: ")
                   << kind << " '" << key.second << "' of @" << fn.getSymName()
                   << " exists only at " << dim << "=" << value,
               failure();
      if (it->second == type)
        return key.second;
      bool io = key.first == attr::input.str() || key.first == attr::output.str();
      int64_t axis = lengthAxis(it->second, type, value);
      if (!io || axis < 0)
        return fn.emitError("--length-buckets: ")
                   << kind << " '" << key.second << "' of @" << fn.getSymName() << " is "
                   << it->second << " at the largest " << dim << " but " << type << " at " << dim
                   << "=" << value
                   << (io ? ": only one axis may follow it"
                          : ": parameters and state must not depend on the bucketed dimension "
                            "(give such a tensor a size of its own, e.g. a dimension bound "
                            "with --dim)"),
               failure();
      if (arg) {
        auto [at, inserted] = axes.insert({key.second, axis});
        if (!inserted && at->second != axis)
          return fn.emitError("--length-buckets: input '")
                     << key.second << "' follows " << dim << " on different axes",
                 failure();
      }
      return lengthVariantName(key.second, dim, value);
    };
    for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
      auto key = argName(fn, i);
      if (!key)
        continue;
      FailureOr<std::string> name = rename(*key, fn.getArgument(i).getType(), base.args, true);
      if (failed(name))
        return failure();
      fn.setArgAttr(i, key->first, b.getStringAttr(*name));
      fn.removeArgAttr(i, attr::batchRows);
    }
    for (unsigned i = 0; i < fn.getNumResults(); ++i) {
      auto key = resultName(fn, i);
      if (!key)
        continue;
      FailureOr<std::string> name = rename(*key, fn.getResultTypes()[i], base.results, false);
      if (failed(name))
        return failure();
      fn.setResultAttr(i, key->first, b.getStringAttr(*name));
      fn.removeResultAttr(i, b.getStringAttr(attr::batchRows));
    }
    // Training entries take full batches only: no partial-batch facts.
    fn->removeAttr(attr::batch);
    fn.setSymName(lengthVariantName(fn.getSymName(), dim, value));
    fn->moveBefore(main.getBody(), main.getBody()->end());
  }
  return success();
}

void tcc::recordLengthMetadata(ModuleOp main, StringRef dim, ArrayRef<int64_t> values,
                               const std::map<std::string, int64_t> &axes) {
  MLIRContext *ctx = main.getContext();
  NamedAttrList metadata;
  if (auto existing = main->getAttrOfType<DictionaryAttr>(attr::metadata))
    metadata.append(existing.getValue());
  std::string list;
  for (int64_t v : values)
    list += (list.empty() ? "" : ",") + std::to_string(v);
  metadata.set(StringAttr::get(ctx, TCC_METADATA_LENGTH_DIM), StringAttr::get(ctx, dim));
  metadata.set(StringAttr::get(ctx, TCC_METADATA_LENGTH_BUCKETS), StringAttr::get(ctx, list));
  for (const auto &[name, axis] : axes)
    metadata.set(StringAttr::get(ctx, TCC_METADATA_LENGTH_AXIS_PREFIX + name),
                 StringAttr::get(ctx, std::to_string(axis)));
  main->setAttr(attr::metadata, metadata.getDictionary(ctx));
}
