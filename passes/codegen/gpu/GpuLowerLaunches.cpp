//===- GpuLowerLaunches.cpp - kernel launches via the runtime ------------===//
//
// Upstream's host lowering of gpu.launch_func calls `mgpu*` wrappers from an
// MLIR runtime library; a tcc artifact must depend on nothing but the tcc
// runtime, so launches become calls through the runtime structure of abi.h,
// exactly like library calls, and the PTX travels in the descriptor.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/codegen/RuntimeCalls.h"

#include "dialects/TccNames.h"
#include "runtime/include/tcc/abi.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Matchers.h"

#include <cstddef>

namespace tcc {
#define GEN_PASS_DEF_GPULOWERLAUNCHESPASS
#include "passes/Passes.h.inc"
} // namespace tcc

using namespace mlir;

namespace {

int64_t constantOf(Value v) {
  APInt value;
  if (v && matchPattern(v, m_ConstantInt(&value)))
    return value.getSExtValue();
  return -1;
}

struct GpuLowerLaunchesPass : tcc::impl::GpuLowerLaunchesPassBase<GpuLowerLaunchesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    SmallVector<Attribute> table;

    for (auto func : module.getOps<func::FuncOp>()) {
      SmallVector<gpu::LaunchFuncOp> launches;
      func.walk([&](gpu::LaunchFuncOp l) { launches.push_back(l); });
      if (launches.empty())
        continue;
      if (func.getNumArguments() == 0 ||
          !isa<LLVM::LLVMPointerType>(func.getArgumentTypes().back())) {
        func.emitError("kernel launches in a function without the runtime argument "
                       "(run tcc-lower-library-calls first)");
        return signalPassFailure();
      }
      Value runtime = func.getArguments().back();
      size_t maxParams = 1;
      for (gpu::LaunchFuncOp l : launches)
        maxParams = std::max<size_t>(maxParams, l.getKernelOperands().size());
      Location loc = func.getLoc();
      OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
      Value count = LLVM::ConstantOp::create(b, loc, i64, int64_t(maxParams));
      // values[i] holds parameter i; params[i] points at values[i].
      Value values = LLVM::AllocaOp::create(b, loc, ptrType, ptrType, count, 8);
      Value params = LLVM::AllocaOp::create(b, loc, ptrType, ptrType, count, 8);
      for (size_t i = 0; i < maxParams; ++i) {
        Value slot = LLVM::GEPOp::create(b, loc, ptrType, ptrType, values,
                                         ArrayRef<LLVM::GEPArg>{int32_t(i)});
        Value at = LLVM::GEPOp::create(b, loc, ptrType, ptrType, params,
                                       ArrayRef<LLVM::GEPArg>{int32_t(i)});
        LLVM::StoreOp::create(b, loc, slot, at);
      }

      for (gpu::LaunchFuncOp launch : launches) {
        Location l = launch.getLoc();
        b.setInsertionPoint(launch);
        gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
        gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
        SmallVector<int64_t> dims = {constantOf(grid.x),  constantOf(grid.y),
                                     constantOf(grid.z),  constantOf(block.x),
                                     constantOf(block.y), constantOf(block.z)};
        int64_t shared = launch.getDynamicSharedMemorySize()
                             ? constantOf(launch.getDynamicSharedMemorySize())
                             : 0;
        if (llvm::any_of(dims, [](int64_t d) { return d < 1 || d > INT32_MAX; }) ||
            shared < 0) {
          launch.emitError("a kernel launch needs a static geometry");
          return signalPassFailure();
        }
        for (auto [i, v] : llvm::enumerate(launch.getKernelOperands())) {
          if (!isa<MemRefType>(v.getType())) {
            launch.emitError("kernel operand ") << i << " is not a buffer: " << v.getType();
            return signalPassFailure();
          }
          tcc::storeBufferAddress(b, l, v, values, int32_t(i));
        }
        tcc::callRuntime(b, l, runtime, offsetof(tcc_abi_runtime, launch_kernel),
                         offsetof(tcc_abi_runtime, device_context), int32_t(table.size()), params);
        auto i32s = [&](ArrayRef<int64_t> v) {
          SmallVector<int32_t> r(v.begin(), v.end());
          return b.getDenseI32ArrayAttr(r);
        };
        table.push_back(b.getDictionaryAttr({
            b.getNamedAttr("name", launch.getKernelName()),
            b.getNamedAttr("grid", i32s(ArrayRef<int64_t>(dims).take_front(3))),
            b.getNamedAttr("block", i32s(ArrayRef<int64_t>(dims).drop_front(3))),
            b.getNamedAttr("shared", b.getI32IntegerAttr(int32_t(shared))),
            b.getNamedAttr("params",
                           b.getI32IntegerAttr(int32_t(launch.getKernelOperands().size()))),
        }));
        launch->erase();
      }
    }

    // The one binary: its PTX and target go to the descriptor.
    auto binaries = llvm::to_vector(module.getOps<gpu::BinaryOp>());
    if (binaries.size() > 1) {
      binaries[1].emitError("more than one GPU binary (run tcc-gpu-merge-modules)");
      return signalPassFailure();
    }
    if (!binaries.empty()) {
      gpu::BinaryOp binary = binaries.front();
      auto objects = binary.getObjects();
      auto object = objects.size() == 1 ? dyn_cast<gpu::ObjectAttr>(objects[0]) : nullptr;
      auto target = object ? dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget()) : nullptr;
      if (!object || !target || object.getFormat() != gpu::CompilationTarget::Assembly) {
        binary.emitError("expected one NVVM object holding PTX");
        return signalPassFailure();
      }
      module->setAttr(tcc::attr::devicePtx, object.getObject());
      module->setAttr(tcc::attr::device,
                      StringAttr::get(ctx, "cuda:" + target.getChip().str()));
      binary->erase();
    }
    // Library calls alone still run on the device.
    if (!module->hasAttr(tcc::attr::device))
      module->setAttr(tcc::attr::device, StringAttr::get(ctx, device));
    module->setAttr(tcc::attr::kernels, ArrayAttr::get(ctx, table));
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }
};

} // namespace
