//===- GpuEmulatedKernels.cpp - GPU kernels as host functions --------------===//
//
// The emulated CUDA device (docs/cuda-codegen.md, "Emulation") runs a CUDA
// artifact on the CPU: the same host schedule, memory plan and library-call
// table, with each kernel's threads run by the runtime as fibers. What it
// runs is this pass's host twin of each kernel, cloned from the gpu.module
// the PTX is made from, before any NVVM lowering: the mapping (geometry,
// index arithmetic, shuffles, barriers, workgroup memory, vector accesses)
// is what executes, only the target differs.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/TccNames.h"
#include "runtime/include/tcc/abi.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"

#include <cstddef>

#define DEBUG_TYPE "tcc-gpu-emulated-kernels"

namespace tcc {
#define GEN_PASS_DEF_GPUEMULATEDKERNELSPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;

namespace {

constexpr StringLiteral kTwinPrefix = "kernel_emulated_";
constexpr StringLiteral kGlobalPrefix = "tcc_emulated_";
/// Workgroup attributions start at multiples of this in the block's memory.
constexpr int64_t kSharedAlignment = 16;

/// Reads the fields of a tcc_abi_emulated_thread at THREAD.
class ThreadFields {
public:
  ThreadFields(OpBuilder &b, Location loc, Value thread) : b(b), loc(loc), thread(thread) {}

  /// threadIdx / blockIdx / blockDim / gridDim along DIM, as an index.
  Value dim(size_t fieldOffset, gpu::Dimension d) {
    Value v = LLVM::LoadOp::create(b, loc, b.getI32Type(),
                                   address(fieldOffset + 4 * size_t(d)));
    return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), v);
  }
  Value pointer(size_t fieldOffset) {
    return LLVM::LoadOp::create(b, loc, ptrType(), address(fieldOffset));
  }
  Type ptrType() { return LLVM::LLVMPointerType::get(b.getContext()); }

private:
  Value address(size_t offset) {
    return LLVM::GEPOp::create(b, loc, ptrType(), b.getI8Type(), thread,
                               ArrayRef<LLVM::GEPArg>{int32_t(offset)});
  }
  OpBuilder &b;
  Location loc;
  Value thread;
};

/// A memref of TYPE (static, identity layout, no memory space) over the
/// bytes at POINTER, as the bare-pointer convention would pass it.
Value memrefAt(OpBuilder &b, Location loc, const LLVMTypeConverter &converter, MemRefType type,
               Value pointer) {
  MemRefDescriptor desc = MemRefDescriptor::fromStaticShape(b, loc, converter, type, pointer);
  return UnrealizedConversionCastOp::create(b, loc, type, Value(desc)).getResult(0);
}

/// abi.h's spelling of MODE.
int32_t abiMode(gpu::ShuffleMode mode) {
  switch (mode) {
  case gpu::ShuffleMode::XOR:
    return TCC_SHUFFLE_XOR;
  case gpu::ShuffleMode::UP:
    return TCC_SHUFFLE_UP;
  case gpu::ShuffleMode::DOWN:
    return TCC_SHUFFLE_DOWN;
  case gpu::ShuffleMode::IDX:
    return TCC_SHUFFLE_IDX;
  }
  llvm_unreachable("unknown gpu.shuffle mode");
}

/// TYPE without its memory space (the host has one).
MemRefType hostType(MemRefType type) {
  return MemRefType::get(type.getShape(), type.getElementType(), type.getLayout());
}

struct GpuEmulatedKernelsPass
    : tcc::impl::GpuEmulatedKernelsPassBase<GpuEmulatedKernelsPass> {
  void runOnOperation() override;

private:
  /// The twin of KERNEL, or failure (with an error on the kernel).
  FailureOr<func::FuncOp> buildTwin(gpu::GPUFuncOp kernel, OpBuilder &top,
                                    const LLVMTypeConverter &converter, int64_t &sharedBytes,
                                    bool &synchronizes);
  /// Replaces the gpu ops of TWIN's body by reads of THREAD and runtime
  /// calls.
  LogicalResult lowerGpuOps(func::FuncOp twin, Value thread, bool &synchronizes);
  /// Copies the globals TWIN reads from MODULE (the gpu.module) beside it.
  LogicalResult copyGlobals(func::FuncOp twin, gpu::GPUModuleOp module, OpBuilder &top);

  llvm::StringMap<StringAttr> copiedGlobals;
};

void GpuEmulatedKernelsPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  copiedGlobals.clear();
  LLVMTypeConverter converter(ctx);
  OpBuilder top = OpBuilder::atBlockEnd(module.getBody());
  SmallVector<NamedAttribute> table;
  SmallVector<func::FuncOp> twins;
  for (auto gpuModule : module.getOps<gpu::GPUModuleOp>()) {
    for (auto kernel : gpuModule.getOps<gpu::GPUFuncOp>()) {
      if (!kernel.isKernel())
        continue;
      int64_t sharedBytes = 0;
      bool synchronizes = false;
      FailureOr<func::FuncOp> twin = buildTwin(kernel, top, converter, sharedBytes, synchronizes);
      if (failed(twin) || failed(copyGlobals(*twin, gpuModule, top)))
        return signalPassFailure();
      twins.push_back(*twin);
      // {twin, shared memory bytes, synchronizes} per kernel name.
      Builder b(ctx);
      table.push_back(b.getNamedAttr(
          kernel.getName(),
          b.getArrayAttr({b.getStringAttr(twin->getSymName()), b.getI64IntegerAttr(sharedBytes),
                          b.getI64IntegerAttr(synchronizes ? 1 : 0)})));
    }
  }
  if (twins.empty())
    return;
  module->setAttr(tcc::attr::emulatedKernels, DictionaryAttr::get(ctx, table));
  // One-thread kernels (the loops of a scatter) still hold linalg ops: plain
  // loops here, never the host's parallel ones (the twin runs per thread).
  OpPassManager loops(func::FuncOp::getOperationName());
  loops.addPass(createConvertLinalgToLoopsPass());
  for (func::FuncOp twin : twins)
    if (failed(runPipeline(loops, twin)))
      return signalPassFailure();
}

FailureOr<func::FuncOp> GpuEmulatedKernelsPass::buildTwin(gpu::GPUFuncOp kernel, OpBuilder &top,
                                                          const LLVMTypeConverter &converter,
                                                          int64_t &sharedBytes,
                                                          bool &synchronizes) {
  MLIRContext *ctx = kernel.getContext();
  Location loc = kernel.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  if (kernel.getNumPrivateAttributions() != 0)
    return kernel.emitError("emulation: private attributions are not emulated"), failure();
  auto type = FunctionType::get(ctx, {ptr, ptr}, {});
  auto twin = func::FuncOp::create(top, loc, (kTwinPrefix + kernel.getName()).str(), type);
  Block *body = twin.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockEnd(body);
  Value thread = body->getArgument(0), params = body->getArgument(1);
  ThreadFields fields(b, loc, thread);

  IRMapping map;
  // Parameter i: params[i] points at the kernel argument's value, a bare
  // pointer (cuLaunchKernel's kernelParams).
  unsigned numParams = kernel.getFunctionType().getNumInputs();
  for (auto [i, arg] : llvm::enumerate(kernel.getArguments().take_front(numParams))) {
    auto memref = dyn_cast<MemRefType>(arg.getType());
    if (!memref || !memref.hasStaticShape() || !memref.getLayout().isIdentity() ||
        memref.getMemorySpace())
      return kernel.emitError("emulation: parameter ")
                 << i << " is not a static, contiguous global buffer: " << arg.getType(),
             failure();
    Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, params,
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
    Value valuePtr = LLVM::LoadOp::create(b, loc, ptr, slot);
    Value pointer = LLVM::LoadOp::create(b, loc, ptr, valuePtr);
    map.map(arg, memrefAt(b, loc, converter, memref, pointer));
  }
  // Workgroup attributions: views of the block's shared memory, in order.
  sharedBytes = 0;
  Value shared = fields.pointer(offsetof(tcc_abi_emulated_thread, shared));
  for (BlockArgument attribution : kernel.getWorkgroupAttributions()) {
    auto memref = dyn_cast<MemRefType>(attribution.getType());
    if (!memref || !memref.hasStaticShape() || !memref.getLayout().isIdentity())
      return kernel.emitError("emulation: workgroup attribution of type ")
                 << attribution.getType() << " is not emulated",
             failure();
    int64_t bytes = memref.getNumElements() * int64_t(memref.getElementTypeBitWidth() / 8);
    Value at = LLVM::GEPOp::create(b, loc, ptr, b.getI8Type(), shared,
                                   ArrayRef<LLVM::GEPArg>{int32_t(sharedBytes)});
    map.map(attribution, memrefAt(b, loc, converter, hostType(memref), at));
    sharedBytes += (bytes + kSharedAlignment - 1) / kSharedAlignment * kSharedAlignment;
  }
  Region &region = kernel.getBody();
  if (!region.hasOneBlock())
    return kernel.emitError("emulation: a kernel of more than one block"), failure();
  for (Operation &op : region.front())
    b.clone(op, map);
  if (failed(lowerGpuOps(twin, thread, synchronizes)))
    return failure();
  // Nothing may still name the GPU's address spaces.
  WalkResult spaces = twin.walk([&](Operation *op) {
    for (Type t : llvm::concat<const Type>(op->getOperandTypes(), op->getResultTypes()))
      if (auto m = dyn_cast<MemRefType>(t); m && m.getMemorySpace()) {
        op->emitError("emulation: an op on GPU memory of type ") << t << " is not emulated";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  if (spaces.wasInterrupted())
    return failure();
  return twin;
}

LogicalResult GpuEmulatedKernelsPass::lowerGpuOps(func::FuncOp twin, Value thread,
                                                  bool &synchronizes) {
  MLIRContext *ctx = twin.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i32 = IntegerType::get(ctx, 32), i64 = IntegerType::get(ctx, 64);
  // The shuffle's predicate comes back through a slot in the twin's frame.
  OpBuilder entry = OpBuilder::atBlockBegin(&twin.getBody().front());
  entry.setInsertionPointAfterValue(thread);
  Value one = LLVM::ConstantOp::create(entry, twin.getLoc(), i32, entry.getI32IntegerAttr(1));
  Value validSlot = LLVM::AllocaOp::create(entry, twin.getLoc(), ptr, i32, one);

  SmallVector<Operation *> gpuOps;
  twin.walk([&](Operation *op) {
    if (isa<gpu::GPUDialect>(op->getDialect()))
      gpuOps.push_back(op);
  });
  for (Operation *op : gpuOps) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    ThreadFields fields(b, loc, thread);
    if (auto id = dyn_cast<gpu::ThreadIdOp>(op)) {
      op->replaceAllUsesWith(ValueRange{
          fields.dim(offsetof(tcc_abi_emulated_thread, thread), id.getDimension())});
    } else if (auto id = dyn_cast<gpu::BlockIdOp>(op)) {
      op->replaceAllUsesWith(ValueRange{
          fields.dim(offsetof(tcc_abi_emulated_thread, block), id.getDimension())});
    } else if (auto dim = dyn_cast<gpu::BlockDimOp>(op)) {
      op->replaceAllUsesWith(ValueRange{
          fields.dim(offsetof(tcc_abi_emulated_thread, block_dim), dim.getDimension())});
    } else if (auto dim = dyn_cast<gpu::GridDimOp>(op)) {
      op->replaceAllUsesWith(ValueRange{
          fields.dim(offsetof(tcc_abi_emulated_thread, grid_dim), dim.getDimension())});
    } else if (isa<gpu::BarrierOp>(op)) {
      Value fn = fields.pointer(offsetof(tcc_abi_emulated_thread, barrier));
      Value context = fields.pointer(offsetof(tcc_abi_emulated_thread, context));
      auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptr});
      LLVM::CallOp::create(b, loc, type, ValueRange{fn, context});
      synchronizes = true;
    } else if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op)) {
      // The value's bits, zero-extended to 64.
      Value value = shuffle.getValue();
      Type valueType = value.getType();
      unsigned width = valueType.getIntOrFloatBitWidth();
      if (!valueType.isIntOrFloat() || width > 64)
        return op->emitError("emulation: a shuffle of ") << valueType << " is not emulated";
      auto bitsType = IntegerType::get(ctx, width);
      Value bits = isa<FloatType>(valueType)
                       ? arith::BitcastOp::create(b, loc, bitsType, value).getResult()
                       : value;
      if (width < 64)
        bits = arith::ExtUIOp::create(b, loc, i64, bits);
      Value fn = fields.pointer(offsetof(tcc_abi_emulated_thread, shuffle));
      Value context = fields.pointer(offsetof(tcc_abi_emulated_thread, context));
      Value mode = LLVM::ConstantOp::create(b, loc, i32,
                                            b.getI32IntegerAttr(abiMode(shuffle.getMode())));
      auto type = LLVM::LLVMFunctionType::get(i64, {ptr, i64, i32, i32, i32, ptr});
      Value result = LLVM::CallOp::create(b, loc, type,
                                          ValueRange{fn, context, bits, shuffle.getOffset(),
                                                     shuffle.getWidth(), mode, validSlot})
                         .getResult();
      if (width < 64)
        result = arith::TruncIOp::create(b, loc, bitsType, result);
      if (isa<FloatType>(valueType))
        result = arith::BitcastOp::create(b, loc, valueType, result);
      Value valid = LLVM::LoadOp::create(b, loc, i32, validSlot);
      Value zero = arith::ConstantIntOp::create(b, loc, 0, 32);
      Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, valid, zero);
      shuffle.getShuffleResult().replaceAllUsesWith(result);
      shuffle.getValid().replaceAllUsesWith(inRange);
      synchronizes = true;
    } else if (isa<gpu::ReturnOp>(op)) {
      func::ReturnOp::create(b, loc);
    } else {
      return op->emitError("emulation: ") << op->getName() << " is not emulated";
    }
    op->erase();
  }
  return success();
}

LogicalResult GpuEmulatedKernelsPass::copyGlobals(func::FuncOp twin, gpu::GPUModuleOp module,
                                                  OpBuilder &top) {
  SymbolTable symbols(module);
  WalkResult walk = twin.walk([&](memref::GetGlobalOp get) {
    StringRef name = get.getName();
    auto &copied = copiedGlobals[name];
    if (!copied) {
      auto global = symbols.lookup<memref::GlobalOp>(name);
      if (!global || global.getType().getMemorySpace()) {
        get.emitError("emulation: global @") << name << " is not a plain kernel global";
        return WalkResult::interrupt();
      }
      OpBuilder::InsertionGuard guard(top);
      top.setInsertionPoint(twin);
      auto clone = cast<memref::GlobalOp>(top.clone(*global));
      clone.setSymName((kGlobalPrefix + name).str());
      copied = clone.getSymNameAttr();
    }
    get.setNameAttr(FlatSymbolRefAttr::get(copied));
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

} // namespace
