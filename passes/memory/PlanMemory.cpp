//===- PlanMemory.cpp - one arena for every buffer of a function ----------===//
//
// The memory plan of DESIGN.md: after bufferization, every buffer of an entry
// point is an offset in one arena (intermediates, inputs, outputs) or in the
// state region (parameters). Offsets come from liveness over the top-level
// block: a buffer lives from its allocation to the last use of any view of it;
// buffers are placed largest first, each in the smallest gap that no live
// buffer occupies (best fit). The function then allocates nothing. Byte counts
// and offsets are checked int64 arithmetic: a plan that does not fit is an
// error naming the buffer, never a wrapped offset.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/support/SourceNames.h"
#include "dialects/ByteSizes.h"

#include "dialects/TccNames.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/MathExtras.h"

#include <map>

#define DEBUG_TYPE "tcc-plan-memory"

namespace tcc {
#define GEN_PASS_DEF_PLANMEMORYPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;
using namespace tcc;

namespace {

/// One buffer to place.
struct Buffer {
  std::string name; // for inputs, outputs and parameters; empty otherwise
  Type declaredType; // element type the model declared (ui8 before lowering)
  BufferRole role = BufferRole::Temp;
  MemRefType type;
  int64_t size = 0;
  int64_t slot = 0; // size rounded up to the alignment (at least one unit)
  int64_t start = 0, end = 0; // live range over top-level op indices
  int64_t offset = -1;
  Value value; // the argument or the alloc result
  std::string node; // an intermediate's: the ONNX node it is allocated for
};

/// SIZE rounded up to ALIGNMENT, at least one unit (every buffer gets its
/// own address), or nullopt when that does not fit int64.
std::optional<int64_t> slotSize(int64_t size, int64_t alignment) {
  size = std::max<int64_t>(size, 1);
  if (size > std::numeric_limits<int64_t>::max() - (alignment - 1))
    return std::nullopt;
  return int64_t(llvm::alignTo(size, alignment));
}

/// The arena or state byte a buffer of SLOT bytes at OFFSET ends at, or
/// nullopt past int64.
std::optional<int64_t> slotEnd(int64_t offset, int64_t slot) {
  return llvm::checkedAdd(offset, slot);
}

/// Index in `block` of the top-level op that contains `op`.
int64_t topLevelIndex(Operation *op, Block &block,
                      const DenseMap<Operation *, int64_t> &index) {
  while (op && op->getBlock() != &block)
    op = op->getParentOp();
  return op ? index.lookup(op) : -1;
}

/// The first and last top-level positions at which `root` or any view of it
/// is used ({INT64_MAX, -1} when unused).
std::pair<int64_t, int64_t> useRange(Value root, Block &block,
                                     const DenseMap<Operation *, int64_t> &index) {
  int64_t first = INT64_MAX, last = -1;
  SmallVector<Value> worklist = {root};
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      int64_t at = topLevelIndex(user, block, index);
      if (at >= 0)
        first = std::min(first, at);
      last = std::max(last, at);
      // Any memref result of an op that takes this buffer may alias it
      // (subview, cast, reshape, view): follow it. Conservative and cheap.
      for (Value r : user->getResults())
        if (isa<BaseMemRefType>(r.getType()))
          worklist.push_back(r);
    }
  }
  return {first, last};
}

int64_t lastUse(Value root, Block &block, const DenseMap<Operation *, int64_t> &index) {
  return useRange(root, block, index).second;
}

int64_t firstUse(Value root, Block &block, const DenseMap<Operation *, int64_t> &index) {
  return useRange(root, block, index).first;
}

/// The error for a buffer that does not fit int64 arithmetic, at AT's
/// location (the function's, or an intermediate's allocation's; the op is not
/// printed, it may have thousands of arguments): what it is, its type (its
/// shape), and either that its bytes overflow or where the plan stood.
LogicalResult overflowError(Operation *at, BufferRole role, StringRef name, MemRefType type,
                            std::optional<int64_t> bytes, int64_t placedBefore,
                            StringRef region = "arena") {
  InFlightDiagnostic d = emitError(at->getLoc(), "tcc-plan-memory: ");
  if (role == BufferRole::Temp)
    d << "an intermediate buffer";
  else
    d << roleName(role) << " '" << name << "'";
  d << " of type " << type;
  if (!bytes)
    d << " has more than 2^63 bytes";
  else
    d << " (" << *bytes << " bytes) does not fit in the " << region
      << ": the memory plan would pass 2^63 bytes (" << placedBefore
      << " bytes placed before it)";
  return failure();
}

/// Places buffers in one region: best fit among the gaps that buffers with
/// overlapping lifetimes leave, largest buffer first. Returns the region
/// size, or nullopt with OVERFLOWED set to the buffer that would end past
/// int64. Every slot (fixed ones too) is known to end within int64.
std::optional<int64_t> placeBestFit(MutableArrayRef<Buffer *> buffers,
                                    ArrayRef<Buffer *> fixed, Buffer *&overflowed) {
  llvm::stable_sort(buffers, [](Buffer *a, Buffer *b) {
    return a->size != b->size ? a->size > b->size : a->start < b->start;
  });
  // Buffers whose offsets are fixed already occupy their slots.
  SmallVector<Buffer *> placed(fixed.begin(), fixed.end());
  int64_t total = 0;
  for (Buffer *f : fixed)
    total = std::max(total, f->offset + f->slot);
  for (Buffer *buf : buffers) {
    SmallVector<std::pair<int64_t, int64_t>> busy; // [offset, end)
    for (Buffer *p : placed)
      if (p->start <= buf->end && buf->start <= p->end)
        busy.push_back({p->offset, p->offset + p->slot});
    llvm::sort(busy);
    int64_t bestOffset = -1, bestGap = INT64_MAX, cursor = 0;
    for (auto [b, e] : busy) {
      if (b - cursor >= buf->slot && b - cursor < bestGap) {
        bestGap = b - cursor;
        bestOffset = cursor;
      }
      cursor = std::max(cursor, e);
    }
    buf->offset = bestOffset >= 0 ? bestOffset : cursor;
    if (!slotEnd(buf->offset, buf->slot)) {
      overflowed = buf;
      return std::nullopt;
    }
    total = std::max(total, buf->offset + buf->slot);
    placed.push_back(buf);
  }
  return total;
}

/// True when OP reads IN and writes OUT element by element at the same
/// indices (so writing OUT over IN's memory is safe).
bool isElementwiseInPlace(Operation *op, Value in, Value out) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumReductionLoops() != 0)
    return false;
  AffineMap outMap, inMap;
  for (OpOperand &operand : generic->getOpOperands()) {
    if (operand.get() == out && generic.isDpsInit(&operand))
      outMap = generic.getMatchingIndexingMap(&operand);
    else if (operand.get() == in)
      inMap = generic.getMatchingIndexingMap(&operand);
    else if (operand.get() == out || operand.get() == in)
      return false;
  }
  return outMap && (!inMap || inMap == outMap) && outMap.isIdentity();
}

/// One function's plan as it is built: its buffers (arguments, allocations,
/// then the output slots that need a copy), their live ranges over the
/// top-level block, and, once placed, their offsets and the region sizes.
struct FunctionPlan {
  explicit FunctionPlan(func::FuncOp func) : func(func), block(func.getBody().front()) {
    for (auto [i, op] : llvm::enumerate(block))
      index[&op] = int64_t(i) + 1; // 0 is "before the first op"
    endIndex = int64_t(block.getOperations().size()) + 1;
  }

  /// The parameter or state buffer named NAME (the last, were two so
  /// named), or null.
  Buffer *persistent(StringRef name) {
    Buffer *found = nullptr;
    for (Buffer &b : buffers)
      if (isPersistent(b.role) && b.name == name)
        found = &b;
    return found;
  }

  func::FuncOp func;
  Block &block;
  /// The position of each top-level op, from 1; endIndex is past the last.
  DenseMap<Operation *, int64_t> index;
  int64_t endIndex;
  std::vector<Buffer> buffers;
  /// The buffer of each allocation's result.
  DenseMap<Value, size_t> allocBuffer;
  /// Output slots that a copy fills before the return: (output buffer, source).
  SmallVector<std::pair<size_t, Value>> copies;
  /// Allocations that became an output's or an update's buffer.
  llvm::SmallPtrSet<Operation *, 8> claimed;
  int64_t arenaSize = 0, stateSize = 0;
};

/// The element type the model declared for KEY ("argN", "resultN") where
/// lowering made it signless, or null.
Type declaredType(func::FuncOp func, const std::string &key) {
  auto declaredTypes = func->getAttrOfType<DictionaryAttr>(attr::declaredTypes);
  if (!declaredTypes)
    return {};
  if (auto t = declaredTypes.getAs<TypeAttr>(key))
    return t.getValue();
  return {};
}

/// A copy between non-contiguous views would become a call to MLIR's
/// runtime (memrefCopy), which an artifact must not import: make it a
/// linalg.copy, which becomes loops.
void lowerStridedCopies(func::FuncOp func) {
  SmallVector<memref::CopyOp> stridedCopies;
  func.walk([&](memref::CopyOp copy) {
    auto src = cast<MemRefType>(copy.getSource().getType());
    auto dst = cast<MemRefType>(copy.getTarget().getType());
    if (!src.getLayout().isIdentity() || !dst.getLayout().isIdentity())
      stridedCopies.push_back(copy);
  });
  for (memref::CopyOp copy : stridedCopies) {
    OpBuilder cb(copy);
    linalg::CopyOp::create(cb, copy.getLoc(), copy.getSource(),
                           copy.getTarget());
    copy.erase();
  }
}

struct PlanMemoryPass : tcc::impl::PlanMemoryPassBase<PlanMemoryPass> {
  using PlanMemoryPassBase::PlanMemoryPassBase;

  void runOnOperation() override {
    // Entry points share the runtime's tensor table: with several, every
    // input and output name gets one arena slot that all of them use.
    SmallVector<func::FuncOp> funcs;
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal())
        funcs.push_back(func);
    pinned.clear();
    if (funcs.size() > 1) {
      int64_t next = 0;
      auto pin = [&](func::FuncOp f, BufferRole role, StringRef name, Type type) {
        auto m = dyn_cast<MemRefType>(type);
        PinKey key{role, name.str()};
        if (!m || !m.hasStaticShape() || pinned.count(key))
          return success();
        std::optional<int64_t> size = tcc::byteSize(m);
        std::optional<int64_t> slot = size ? slotSize(*size, alignment) : std::nullopt;
        std::optional<int64_t> end = slot ? slotEnd(next, *slot) : std::nullopt;
        if (!end)
          return overflowError(f, role, name, m, size, next);
        pinned[key] = {next, *size};
        next = *end;
        return success();
      };
      for (func::FuncOp f : funcs) {
        for (unsigned i = 0; i < f.getNumArguments(); ++i)
          if (auto n = f.getArgAttrOfType<StringAttr>(i, attr::input))
            if (failed(pin(f, BufferRole::Input, n.getValue(), f.getArgument(i).getType())))
              return signalPassFailure();
        for (unsigned i = 0; i < f.getNumResults(); ++i)
          if (auto n = f.getResultAttrOfType<StringAttr>(i, attr::output))
            if (failed(pin(f, BufferRole::Output, n.getValue(), f.getResultTypes()[i])))
              return signalPassFailure();
      }
    }
    for (auto func : llvm::make_early_inc_range(
             getOperation().getOps<func::FuncOp>())) {
      if (func.isExternal())
        continue;
      if (failed(plan(func)))
        return signalPassFailure();
    }
  }

  /// Plans FUNC: collects its buffers, places them, rewrites it to views of
  /// the arena and the state, and records the plan on it.
  LogicalResult plan(func::FuncOp func);

  // Collect: every buffer with its role and live range.
  /// Inputs (arena), parameters and state (the state region).
  LogicalResult collectArguments(FunctionPlan &p);
  /// The body's allocations (intermediates); its deallocations disappear.
  LogicalResult collectAllocations(FunctionPlan &p);
  /// Outputs, each in its own slot, and the updates of parameters and state.
  LogicalResult collectResults(FunctionPlan &p);
  LogicalResult planUpdate(FunctionPlan &p, StringRef param, Value value);
  /// Sizes BUF (its bytes and its slot), or fails naming it.
  LogicalResult size(func::FuncOp func, Buffer &buf);

  // Place: offsets in the state region and the arena.
  LogicalResult place(FunctionPlan &p);

  // Rewrite: two byte-buffer arguments, views for everything.
  LogicalResult rewrite(FunctionPlan &p);

  // Record: the plan as attributes, for the artifact writer and the report.
  void record(FunctionPlan &p);

  /// Shared arena slots of inputs and outputs by role and name: offset, size.
  using PinKey = std::pair<BufferRole, std::string>;
  std::map<PinKey, std::pair<int64_t, int64_t>> pinned;
};

LogicalResult PlanMemoryPass::plan(func::FuncOp func) {
  if (!func.getBody().hasOneBlock())
    return func.emitError("tcc-plan-memory needs a single-block function");
  FunctionPlan p(func);
  if (failed(collectArguments(p)) || failed(collectAllocations(p)) ||
      failed(collectResults(p)) || failed(place(p)) || failed(rewrite(p)))
    return failure();
  record(p);
  return success();
}

LogicalResult PlanMemoryPass::collectArguments(FunctionPlan &p) {
  func::FuncOp func = p.func;
  auto ret = cast<func::ReturnOp>(p.block.getTerminator());
  p.buffers.reserve(func.getNumArguments() + ret.getNumOperands() + 16);
  for (BlockArgument arg : func.getArguments()) {
    auto type = dyn_cast<MemRefType>(arg.getType());
    if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity())
      return func.emitError("argument ")
             << arg.getArgNumber()
             << " is not a static memref with the identity layout";
    Buffer b;
    b.type = type;
    b.value = arg;
    if (auto n = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), attr::input)) {
      b.role = BufferRole::Input;
      b.name = n.str();
    } else if (auto n = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), attr::param)) {
      b.role = BufferRole::Param;
      b.name = n.str();
    } else if (auto n = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), attr::state)) {
      b.role = BufferRole::State;
      b.name = n.str();
    } else {
      return func.emitError("argument ") << arg.getArgNumber() << " has no " << attr::input
                                         << ", " << attr::param << " or " << attr::state
                                         << " name";
    }
    // Inputs are all written before the run, so they are all live at its
    // start, even one the body never reads (CastLike's `like`).
    if (auto t = declaredType(func, "arg" + std::to_string(arg.getArgNumber())))
      b.declaredType = t;
    b.start = 0;
    b.end = std::max<int64_t>(lastUse(arg, p.block, p.index), 0);
    if (failed(size(func, b)))
      return failure();
    p.buffers.push_back(b);
  }
  return success();
}

LogicalResult PlanMemoryPass::collectAllocations(FunctionPlan &p) {
  func::FuncOp func = p.func;
  SmallVector<memref::AllocOp> allocs;
  WalkResult walk = func.walk([&](Operation *op) {
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      if (alloc->getBlock() != &p.block) {
        alloc.emitError("tcc-plan-memory: allocation inside a region; hoist "
                        "it first");
        return WalkResult::interrupt();
      }
      if (!alloc.getType().hasStaticShape() ||
          !alloc.getType().getLayout().isIdentity()) {
        alloc.emitError("tcc-plan-memory: allocation of a dynamic or "
                        "non-identity memref");
        return WalkResult::interrupt();
      }
      allocs.push_back(alloc);
    } else if (isa<memref::AllocaOp>(op) || isa<memref::ReallocOp>(op)) {
      op->emitError("tcc-plan-memory: unsupported allocation");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  // Deallocations disappear: the arena outlives the call.
  SmallVector<Operation *> deallocs;
  func.walk([&](memref::DeallocOp d) { deallocs.push_back(d); });
  for (Operation *d : deallocs)
    d->erase();

  // Ops by their index, to name each intermediate after its first writer:
  // the allocation's own location may be another layer's (CSE merged the
  // destinations of one shape, and their copies keep the first's).
  std::vector<Operation *> byIndex(p.block.getOperations().size() + 1, nullptr);
  for (Operation &op : p.block)
    if (int64_t i = p.index.lookup(&op); i > 0 && size_t(i) < byIndex.size())
      byIndex[size_t(i)] = &op;
  for (memref::AllocOp alloc : allocs) {
    Buffer b;
    b.role = BufferRole::Temp;
    b.type = alloc.getType();
    b.value = alloc.getResult();
    int64_t writer = firstUse(alloc.getResult(), p.block, p.index);
    b.node = tcc::sourceName(writer > 0 && size_t(writer) < byIndex.size() && byIndex[size_t(writer)]
                                 ? byIndex[size_t(writer)]
                                 : alloc.getOperation());
    if (failed(size(func, b)))
      return failure();
    b.start = p.index.lookup(alloc);
    b.end = lastUse(alloc.getResult(), p.block, p.index);
    p.allocBuffer[alloc.getResult()] = p.buffers.size();
    p.buffers.push_back(b);
  }
  return success();
}

/// Outputs: a returned allocation lives in its output slot; anything else
/// (an argument, a view, the same buffer returned twice) gets its own slot
/// and a copy before the return.
LogicalResult PlanMemoryPass::collectResults(FunctionPlan &p) {
  func::FuncOp func = p.func;
  auto ret = cast<func::ReturnOp>(p.block.getTerminator());
  for (auto [i, operand] : llvm::enumerate(ret.getOperands())) {
    if (auto update = func.getResultAttrOfType<StringAttr>(i, attr::update)) {
      if (failed(planUpdate(p, update.getValue(), operand)))
        return failure();
      continue;
    }
    auto name = func.getResultAttrOfType<StringAttr>(i, attr::output);
    if (!name)
      return func.emitError("result ") << i << " has no " << attr::output << " or "
                                       << attr::update << " name";
    auto type = dyn_cast<MemRefType>(operand.getType());
    if (!type || !type.hasStaticShape())
      return func.emitError("result ") << i << " is not a static memref";
    Type declared = declaredType(func, "result" + std::to_string(i));
    auto alloc = operand.getDefiningOp<memref::AllocOp>();
    if (alloc && p.claimed.insert(alloc).second) {
      Buffer &b = p.buffers[p.allocBuffer[operand]];
      b.role = BufferRole::Output;
      b.name = name.str();
      b.declaredType = declared;
      b.end = p.endIndex;
      continue;
    }
    Buffer b;
    b.role = BufferRole::Output;
    b.name = name.str();
    b.declaredType = declared;
    b.type = MemRefType::get(type.getShape(), type.getElementType());
    if (failed(size(func, b)))
      return failure();
    b.start = p.endIndex - 1;
    b.end = p.endIndex;
    p.copies.push_back({p.buffers.size(), operand});
    p.buffers.push_back(b);
  }
  return success();
}

/// A result marked `tcc.update = PARAM` is PARAM's new value: its buffer is
/// PARAM's state slot, so the update needs no copy. That is only legal when
/// no read of PARAM comes after the first write of the new value (or the
/// write is the elementwise op making the last read); otherwise the pass
/// fails rather than copy.
LogicalResult PlanMemoryPass::planUpdate(FunctionPlan &p, StringRef param, Value value) {
  func::FuncOp func = p.func;
  Buffer *target = p.persistent(param);
  if (!target)
    return func.emitError("update of unknown parameter '") << param << "'";
  // Bufferization wrote the new value into the parameter's own buffer.
  if (value == target->value)
    return success();
  auto alloc = value.getDefiningOp<memref::AllocOp>();
  if (!alloc || !p.claimed.insert(alloc).second || alloc.getType() != target->type)
    return func.emitError("parameter '")
           << param << "': its update is not a fresh buffer of its type, so it would need a copy";
  int64_t written = firstUse(alloc.getResult(), p.block, p.index);
  if (target->end > written) {
    Operation *writer = nullptr;
    for (Operation &op : p.block)
      if (p.index.lookup(&op) == written)
        writer = &op;
    if (target->end != written || !writer ||
        !isElementwiseInPlace(writer, target->value, alloc.getResult()))
      return func.emitError("parameter '")
             << param << "' is read after its update is written (at op #" << written
             << "); an in-place update would need a copy";
  }
  Buffer &b = p.buffers[p.allocBuffer[alloc.getResult()]];
  b.role = BufferRole::Update;
  b.name = param.str();
  return success();
}

LogicalResult PlanMemoryPass::size(func::FuncOp func, Buffer &buf) {
  std::optional<int64_t> bytes = tcc::byteSize(buf.type);
  std::optional<int64_t> slot = bytes ? slotSize(*bytes, alignment) : std::nullopt;
  if (!slot) {
    Operation *at = buf.value ? buf.value.getDefiningOp() : nullptr;
    return overflowError(at ? at : func.getOperation(), buf.role, buf.name, buf.type, bytes, 0);
  }
  buf.size = *bytes;
  buf.slot = *slot;
  return success();
}

/// Parameters and state in the state region in argument order; everything
/// else in the arena by best fit, inputs and outputs shared between entry
/// points at their pinned offsets; updates over their parameters.
LogicalResult PlanMemoryPass::place(FunctionPlan &p) {
  func::FuncOp func = p.func;
  // The state region: parameters in argument order, then the other state
  // (optimizer buffers), so that parameters sit at the same offsets in every
  // entry point, with or without optimizer state.
  for (BufferRole kind : {BufferRole::Param, BufferRole::State})
    for (Buffer &b : p.buffers)
      if (b.role == kind) {
        b.offset = p.stateSize;
        std::optional<int64_t> end = slotEnd(p.stateSize, b.slot);
        if (!end)
          return overflowError(func, b.role, b.name, b.type, b.size, p.stateSize, "state");
        p.stateSize = *end;
      }
  SmallVector<Buffer *> arenaBuffers, pinnedBuffers;
  for (Buffer &b : p.buffers) {
    if (isPersistent(b.role) || b.role == BufferRole::Update)
      continue;
    auto it = pinned.find({b.role, b.name});
    if ((b.role == BufferRole::Input || b.role == BufferRole::Output) && it != pinned.end()) {
      if (it->second.second != b.size)
        return func.emitError("")
               << roleName(b.role) << " '" << b.name << "' has " << b.size
               << " bytes here but another entry point's has " << it->second.second;
      b.offset = it->second.first;
      pinnedBuffers.push_back(&b);
    } else {
      arenaBuffers.push_back(&b);
    }
  }
  Buffer *overflowed = nullptr;
  std::optional<int64_t> arenaSize = placeBestFit(arenaBuffers, pinnedBuffers, overflowed);
  if (!arenaSize) {
    Operation *at =
        overflowed->role == BufferRole::Temp ? overflowed->value.getDefiningOp() : func;
    return overflowError(at, overflowed->role, overflowed->name, overflowed->type,
                         overflowed->size, overflowed->offset);
  }
  p.arenaSize = *arenaSize;
  LLVM_DEBUG({
    llvm::dbgs() << "tcc-plan-memory: @" << func.getSymName() << ": arena " << p.arenaSize
                 << " bytes, state " << p.stateSize << " bytes\n";
    for (const Buffer &b : p.buffers)
      if (!isPersistent(b.role) && b.role != BufferRole::Update)
        llvm::dbgs() << "  " << roleName(b.role) << " " << b.name << ": " << b.size
                     << " bytes at " << b.offset << ", live " << b.start << ".." << b.end << "\n";
  });
  // Updates are written over their parameters (or state tensors).
  for (Buffer &b : p.buffers)
    if (b.role == BufferRole::Update)
      if (Buffer *target = p.persistent(b.name))
        b.offset = target->offset;
  return success();
}

LogicalResult PlanMemoryPass::rewrite(FunctionPlan &p) {
  func::FuncOp func = p.func;
  Block &block = p.block;
  auto ret = cast<func::ReturnOp>(block.getTerminator());
  OpBuilder b(&getContext());
  Location loc = func.getLoc();
  auto bytes = MemRefType::get({ShapedType::kDynamic}, b.getI8Type());
  unsigned numOld = func.getNumArguments();
  if (failed(func.insertArguments({0, 0}, {bytes, bytes}, {}, {loc, loc})))
    return failure();
  Value arena = func.getArgument(0), state = func.getArgument(1);
  auto viewOf = [&](const Buffer &buf) -> Value {
    Value region = isPersistent(buf.role) || buf.role == BufferRole::Update ? state : arena;
    Value off = arith::ConstantIndexOp::create(b, loc, buf.offset);
    return memref::ViewOp::create(b, loc, buf.type, region, off, ValueRange{});
  };
  // Copies into output slots first, so that replacing an argument or an
  // allocation below also rewrites the copies' sources.
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ret);
    for (auto [bufIndex, source] : p.copies) {
      Value dest = viewOf(p.buffers[bufIndex]);
      memref::CopyOp::create(b, loc, source, dest);
    }
  }
  ret->setOperands({});
  // All views first, at the top of the body (an insertion point is an
  // iterator: it must not sit on an allocation that is erased below).
  Block::iterator top = block.begin();
  SmallVector<std::pair<Value, Value>> replacements;
  for (Buffer &buf : p.buffers) {
    if (!buf.value)
      continue;
    b.setInsertionPoint(&block, top);
    replacements.push_back({buf.value, viewOf(buf)});
  }
  for (auto [old, view] : replacements) {
    old.replaceAllUsesWith(view);
    if (auto alloc = old.getDefiningOp<memref::AllocOp>())
      alloc.erase();
  }
  BitVector eraseArgs(func.getNumArguments());
  for (unsigned i = 0; i < numOld; ++i)
    eraseArgs.set(i + 2);
  if (failed(func.eraseArguments(eraseArgs)))
    return failure();
  BitVector eraseResults(func.getNumResults(), true);
  if (failed(func.eraseResults(eraseResults)))
    return failure();
  lowerStridedCopies(func);
  return success();
}

void PlanMemoryPass::record(FunctionPlan &p) {
  func::FuncOp func = p.func;
  Builder b(&getContext());
  // For the artifact writer: every input, output, parameter and state.
  SmallVector<Attribute> entries;
  for (const Buffer &buf : p.buffers) {
    if (buf.role == BufferRole::Temp || buf.role == BufferRole::Update)
      continue;
    NamedAttrList e;
    e.append("name", b.getStringAttr(buf.name));
    e.append("role", b.getStringAttr(roleName(buf.role)));
    e.append("region", b.getStringAttr(isPersistent(buf.role) ? "state" : "arena"));
    e.append("offset", b.getI64IntegerAttr(buf.offset));
    e.append("size", b.getI64IntegerAttr(buf.size));
    e.append("shape", b.getDenseI64ArrayAttr(buf.type.getShape()));
    e.append("element_type",
             TypeAttr::get(buf.declaredType ? buf.declaredType
                                            : buf.type.getElementType()));
    entries.push_back(e.getDictionary(b.getContext()));
  }
  // Intermediates, for `tcc --report=memory`: [offset, size, first, last]
  // (first and last are positions in the body), largest first.
  SmallVector<Attribute> temps, tempNames;
  SmallVector<const Buffer *> tempBuffers;
  for (const Buffer &buf : p.buffers)
    if (buf.role == BufferRole::Temp)
      tempBuffers.push_back(&buf);
  llvm::stable_sort(tempBuffers, [](const Buffer *x, const Buffer *y) {
    return x->size > y->size;
  });
  for (const Buffer *buf : tempBuffers) {
    temps.push_back(b.getDenseI64ArrayAttr(
        {buf->offset, buf->size, buf->start, buf->end}));
    tempNames.push_back(b.getStringAttr(buf->node));
  }
  func->setAttr(attr::plan, b.getArrayAttr(entries));
  func->setAttr(attr::planTemps, b.getArrayAttr(temps));
  func->setAttr(attr::planTempNames, b.getArrayAttr(tempNames));
  func->setAttr(attr::arenaSize, b.getI64IntegerAttr(p.arenaSize));
  func->setAttr(attr::stateSize, b.getI64IntegerAttr(p.stateSize));
}

} // namespace
