//===- FilterLayouts.cpp - filters the runtime may keep in the library's layout ===//
//
// A convolution call's primitive reads its filter in a blocked layout that
// oneDNN picks for the CPU at session creation, so a plain OIHW filter is
// reordered in before every forward and data-gradient call, and the filter
// gradient reordered out after every weight-gradient call. Yet nothing else
// in a training step needs the filter's element order: the optimizer's
// update, the 16-bit copy, weight decay and a gradient norm read and write
// each element where it is (elementwise ops, sums over the whole tensor).
// Such a filter can live in the library's layout across steps, and with it
// its gradient, optimizer state and 16-bit copy, as long as every buffer
// that exchanges elements with it does so elementwise.
//
// This pass finds those sets of buffers (a union-find over the buffers of
// every planned entry point; the state region's are one buffer per offset
// across entries) and marks them where every use is one of:
//   - the filter operand of a convolution call of one group (CONV2D,
//     CONV2D_BACKWARD_DATA) or the output of a CONV2D_BACKWARD_WEIGHTS;
//   - an operand of an elementwise linalg.generic (all loops parallel),
//     read or written at the identity map (its other operands at the
//     identity map join the set; scalars are fine, any other map is not);
//   - an input of a linalg.generic that reduces every loop into scalars;
//   - a fill, a copy, or a reshape (the same buffer);
// and which hold parameters or state (what the runtime converts at the
// edges: loading, saving, get / set). Each convolution call of a set
// gets `filter_layout = K` in its tcc.library_call, and the module's
// tcc.filter_layouts lists each set's state tensors by name;
// tcc-lower-library-calls turns both into the descriptor's metadata.
// The runtime may then keep the set in its primitive's layout (or not:
// the plain layout is always correct). Anything else (a subview, a
// transpose, a broadcast of a per-channel vector, a constant, an input
// or output of the entry, a collective) keeps the set plain.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/memory/Collectives.h"

#include "dialects/TccNames.h"
#include "runtime/include/tcc/abi.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Debug.h"

#include <set>

#define DEBUG_TYPE "tcc-filter-layouts"

namespace tcc {
#define GEN_PASS_DEF_FILTERLAYOUTSPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;

namespace {

/// A filter's dimensions {O, I, KH, KW}.
using FilterDims = std::array<int64_t, 4>;

/// The filter operand of a convolution call: the call, its operand index and
/// the filter's dimensions; nullopt for other calls or operands.
std::optional<FilterDims> filterOperand(func::CallOp call, unsigned operand) {
  auto info = call->getAttrOfType<DictionaryAttr>(tcc::attr::libraryCall);
  if (!info)
    return std::nullopt;
  auto kind = info.getAs<IntegerAttr>("kind");
  auto params = info.getAs<DenseI64ArrayAttr>("params");
  if (!kind || !params || params.size() < 18)
    return std::nullopt;
  unsigned filter;
  switch (kind.getInt()) {
  case TCC_LIBRARY_CALL_CONV2D:
  case TCC_LIBRARY_CALL_CONV2D_BACKWARD_DATA:
    filter = 1;
    break;
  case TCC_LIBRARY_CALL_CONV2D_BACKWARD_WEIGHTS:
    filter = 2;
    break;
  default:
    return std::nullopt;
  }
  ArrayRef<int64_t> p = params.asArrayRef();
  // abi.h: {N, C, H, W, F, KH, KW, ...}, the groups 19th.
  if (operand != filter || (p.size() > 18 && p[18] != 1))
    return std::nullopt;
  return FilterDims{p[4], p[1], p[5], p[6]};
}

/// Whether MAP reads a scalar: no results, or constant ones.
bool isScalarMap(AffineMap map) {
  return llvm::all_of(map.getResults(), [](AffineExpr e) { return isa<AffineConstantExpr>(e); });
}

class Analysis {
public:
  /// The set of buffer V (created on first sight).
  unsigned node(Value v) {
    auto [it, inserted] = nodes.try_emplace(v, 0);
    if (inserted)
      it->second = fresh();
    return it->second;
  }

  unsigned fresh() {
    unsigned n = unsigned(poisoned.size());
    poisoned.push_back(false);
    sets.insert(n);
    return n;
  }

  void join(unsigned a, unsigned b) { sets.unionSets(a, b); }
  void join(Value a, Value b) { join(node(a), node(b)); }
  void poison(Value v) {
    LLVM_DEBUG(llvm::dbgs() << "plain: " << v << "\n");
    poisoned[node(v)] = true;
  }

  /// Analyzes the planned entry FUNC.
  void analyze(func::FuncOp func, ArrayAttr plan) {
    // The plan's entries by region and offset (an arena input or output is
    // copied by the runtime in plain layout; other buffers may reuse its
    // bytes while it is dead).
    std::map<int64_t, std::pair<StringRef, StringRef>> stateEntries; // offset -> name, role
    std::set<std::pair<int64_t, SmallVector<int64_t>>> arenaIo;      // offset, shape
    for (Attribute a : plan) {
      auto d = dyn_cast<DictionaryAttr>(a);
      auto name = d ? d.getAs<StringAttr>("name") : nullptr;
      auto region = d ? d.getAs<StringAttr>("region") : nullptr;
      auto role = d ? d.getAs<StringAttr>("role") : nullptr;
      auto offset = d ? d.getAs<IntegerAttr>("offset") : nullptr;
      if (!name || !region || !role || !offset)
        continue;
      if (region.getValue() == "state")
        stateEntries[offset.getInt()] = {name.getValue(), role.getValue()};
      else if (role.getValue() == "input" || role.getValue() == "output")
        if (auto shape = d.getAs<DenseI64ArrayAttr>("shape"))
          arenaIo.insert({offset.getInt(), SmallVector<int64_t>(shape.asArrayRef())});
    }
    Value arena = func.getNumArguments() > 0 ? func.getArgument(0) : Value();
    Value state = func.getNumArguments() > 1 ? func.getArgument(1) : Value();

    func.walk([&](Operation *op) {
      if (auto view = dyn_cast<memref::ViewOp>(op)) {
        std::optional<int64_t> offset = getConstantIntValue(view.getByteShift());
        if (!offset || (view.getSource() != arena && view.getSource() != state) ||
            !view.getSizes().empty()) {
          poison(view);
          return;
        }
        if (view.getSource() == state) {
          auto [it, inserted] = stateNodes.try_emplace(*offset, 0);
          if (inserted)
            it->second = fresh();
          join(node(view), it->second);
          auto entry = stateEntries.find(*offset);
          if (entry == stateEntries.end() ||
              (entry->second.second != "param" && entry->second.second != "state"))
            poison(view);
          else
            stateNames[it->second] = entry->second.first.str();
        } else if (arenaIo.count({*offset, SmallVector<int64_t>(view.getType().getShape())})) {
          poison(view);
        }
        return;
      }
      if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::CastOp>(op)) {
        join(op->getOperand(0), op->getResult(0));
        return;
      }
      if (auto call = dyn_cast<func::CallOp>(op)) {
        for (auto [i, v] : llvm::enumerate(call.getOperands())) {
          if (!isa<MemRefType>(v.getType()))
            continue;
          if (std::optional<FilterDims> dims = filterOperand(call, unsigned(i)))
            anchors.push_back({call, v, *dims});
          else
            poison(v);
        }
        return;
      }
      if (auto generic = dyn_cast<linalg::GenericOp>(op)) {
        visitGeneric(generic);
        return;
      }
      if (isa<linalg::FillOp>(op))
        return; // the same value everywhere
      if (isa<memref::CopyOp, linalg::CopyOp>(op)) {
        Value from = op->getOperand(0), to = op->getOperand(1);
        if (from.getType() == to.getType() || cast<MemRefType>(from.getType()).getShape() ==
                                                  cast<MemRefType>(to.getType()).getShape())
          join(from, to);
        else
          poison(from), poison(to);
        return;
      }
      // Anything else that takes a buffer (a subview, a named linalg op, a
      // load or store, a return) sees its elements where they are in plain
      // layout; so do a value this pass does not know (a constant).
      for (Value v : op->getOperands())
        if (isa<MemRefType>(v.getType()))
          poison(v);
      for (Value v : op->getResults())
        if (isa<MemRefType>(v.getType()))
          poison(v);
    });
  }

  /// Elementwise generics join their identity-mapped operands; full
  /// reductions into scalars take any number of them as inputs.
  void visitGeneric(linalg::GenericOp generic) {
    unsigned loops = generic.getNumLoops();
    bool parallel = generic.getNumReductionLoops() == 0;
    bool fullReduction = generic.getNumParallelLoops() == 0 && loops > 0;
    SmallVector<Value> joined;
    bool ok = parallel || fullReduction;
    for (OpOperand &operand : generic->getOpOperands()) {
      Value v = operand.get();
      if (!isa<MemRefType>(v.getType()))
        continue;
      AffineMap map = generic.getMatchingIndexingMap(&operand);
      bool output = generic.isDpsInit(&operand);
      if (isScalarMap(map))
        continue;
      if (map.isIdentity() && map.getNumDims() == loops && (parallel || !output)) {
        joined.push_back(v);
        continue;
      }
      ok = false;
    }
    if (!ok) {
      for (OpOperand &operand : generic->getOpOperands())
        if (isa<MemRefType>(operand.get().getType()))
          poison(operand.get());
      return;
    }
    for (size_t i = 1; i < joined.size(); ++i)
      join(joined[0], joined[i]);
  }

  struct Anchor {
    func::CallOp call;
    Value filter;
    FilterDims dims;
  };

  /// The sets that may change layout: their state tensors' names and their
  /// convolution calls.
  struct Set {
    std::vector<std::string> tensors;
    SmallVector<func::CallOp> calls;
  };

  std::vector<Set> eligible() {
    // Root -> the set's anchors, and whether they agree.
    llvm::MapVector<unsigned, Set> byRoot;
    std::map<unsigned, FilterDims> dims;
    std::set<unsigned> bad;
    for (unsigned n = 0; n < poisoned.size(); ++n)
      if (poisoned[n])
        bad.insert(sets.getLeaderValue(n));
    for (const Anchor &a : anchors) {
      unsigned root = sets.getLeaderValue(node(a.filter));
      auto [it, inserted] = dims.try_emplace(root, a.dims);
      if (!inserted && it->second != a.dims)
        bad.insert(root);
      byRoot[root].calls.push_back(a.call);
    }
    // Every buffer of a set holds the filter's elements.
    for (auto &[v, n] : nodes) {
      unsigned root = sets.getLeaderValue(n);
      auto it = dims.find(root);
      if (it == dims.end())
        continue;
      const FilterDims &d = it->second;
      auto type = cast<MemRefType>(v.getType());
      if (!type.hasStaticShape() || type.getNumElements() != d[0] * d[1] * d[2] * d[3] ||
          !type.getLayout().isIdentity())
        bad.insert(root);
    }
    for (auto &[n, name] : stateNames)
      if (byRoot.count(sets.getLeaderValue(n)))
        byRoot[sets.getLeaderValue(n)].tensors.push_back(name);
    std::vector<Set> result;
    for (auto &[root, set] : byRoot) {
      if (bad.count(root) || set.tensors.empty())
        continue;
      llvm::sort(set.tensors);
      result.push_back(std::move(set));
    }
    return result;
  }

  DenseMap<Value, unsigned> nodes;
  std::map<int64_t, unsigned> stateNodes;
  std::map<unsigned, std::string> stateNames;
  std::vector<bool> poisoned;
  llvm::EquivalenceClasses<unsigned> sets;
  std::vector<Anchor> anchors;
};

struct FilterLayoutsPass : tcc::impl::FilterLayoutsPassBase<FilterLayoutsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Data-parallel steps exchange gradients between ranks whose CPUs may
    // choose other layouts: they stay plain.
    bool collectives = false;
    module.walk([&](func::CallOp call) {
      if (call.getCallee().starts_with(tcc::collectivePrefix))
        collectives = true;
    });
    if (collectives)
      return;
    Analysis analysis;
    for (auto func : module.getOps<func::FuncOp>())
      if (auto plan = func->getAttrOfType<ArrayAttr>(tcc::attr::plan))
        analysis.analyze(func, plan);
    std::vector<Analysis::Set> sets = analysis.eligible();
    if (sets.empty())
      return;
    Builder b(module.getContext());
    SmallVector<Attribute> table;
    for (auto [k, set] : llvm::enumerate(sets)) {
      for (func::CallOp call : set.calls) {
        NamedAttrList info(call->getAttrOfType<DictionaryAttr>(tcc::attr::libraryCall));
        info.set(tcc::attr::filterLayout, b.getI64IntegerAttr(int64_t(k)));
        call->setAttr(tcc::attr::libraryCall, info.getDictionary(module.getContext()));
      }
      SmallVector<Attribute> names;
      for (const std::string &name : set.tensors)
        names.push_back(b.getStringAttr(name));
      table.push_back(b.getArrayAttr(names));
    }
    module->setAttr(tcc::attr::filterLayouts, b.getArrayAttr(table));
  }
};

} // namespace
