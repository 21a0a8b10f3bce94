//===- BatchMetadata.cpp - the batch facts a runtime pads partial batches by -===//

#include "compiler/BatchMetadata.h"

#include "dialects/TccNames.h"
#include "dialects/TccOps.h"
#include "runtime/include/tcc/abi.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>

using namespace mlir;

void tcc::recordBatchMetadata(ModuleOp module) {
  std::optional<int64_t> batch;
  std::map<std::string, int64_t> rows;
  bool consistent = true;
  auto note = [&](StringAttr name, IntegerAttr k) {
    if (!name || !k)
      return;
    auto [it, inserted] = rows.insert({name.str(), k.getInt()});
    consistent &= inserted || it->second == k.getInt();
  };
  for (auto fn : module.getOps<func::FuncOp>()) {
    auto b = fn->getAttrOfType<IntegerAttr>(attr::batch);
    if (!b)
      continue;
    consistent &= !batch || *batch == b.getInt();
    batch = b.getInt();
    // The training entries compute batch statistics on purpose and take
    // full batches only; the others must treat samples independently.
    StringRef name = fn.getSymName();
    bool fullOnly = name == TCC_ENTRY_TRAIN_STEP || name == TCC_ENTRY_ACCUMULATE_GRAD;
    if (!fullOnly && !fn.getOps<BatchNormTrainingOp>().empty())
      return;
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      note(fn.getArgAttrOfType<StringAttr>(i, attr::input),
           fn.getArgAttrOfType<IntegerAttr>(i, attr::batchRows));
    for (unsigned i = 0; i < fn.getNumResults(); ++i)
      note(fn.getResultAttrOfType<StringAttr>(i, attr::output),
           fn.getResultAttrOfType<IntegerAttr>(i, attr::batchRows));
  }
  if (!batch || rows.empty() || !consistent)
    return;
  MLIRContext *ctx = module.getContext();
  NamedAttrList metadata;
  if (auto existing = module->getAttrOfType<DictionaryAttr>(attr::metadata))
    metadata.append(existing.getValue());
  metadata.set(StringAttr::get(ctx, TCC_METADATA_BATCH), StringAttr::get(ctx, std::to_string(*batch)));
  for (const auto &[name, k] : rows)
    metadata.set(StringAttr::get(ctx, TCC_METADATA_BATCH_ROWS_PREFIX + name),
                 StringAttr::get(ctx, std::to_string(k)));
  module->setAttr(attr::metadata, metadata.getDictionary(ctx));
}
