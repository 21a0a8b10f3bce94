//===- CpuPipeline.cpp - tcc dialect to LLVM dialect for CPUs -------------===//
//
// Upstream passes wherever they do the job; tcc's own where upstream lacks
// one (lowering tcc ops, the memory plan). One line of "why here" per pass.
//
//===----------------------------------------------------------------------===//

#include "compiler/cpu/CpuPipeline.h"

#include "passes/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void tcc::buildCpuLinalgPipeline(OpPassManager &pm, const CpuPipelineOptions &options) {
  // Every tcc op becomes linalg / tensor / arith / math / scf on tensors;
  // unsigned types become signless, signatures included.
  // 16-bit matmuls keep their 16-bit operands, into f32 sums: cuBLASLt and
  // oneDNN take them (the runtime widens them on a CPU without 16-bit dot
  // products). So do 16-bit convolutions on the CPU (oneDNN); cuDNN calls
  // of a device artifact stay f32, on widened operands.
  tcc::LowerToLinalgPassOptions lower;
  lower.sixteenBitMatmuls = true;
  lower.sixteenBitConvs = !options.device;
  // Convolutions over few output points (a CNN's deep layers on small
  // images) and their data gradients as GEMMs on the CPU; device artifacts
  // keep their cuDNN calls.
  lower.fewPointGemms = !options.device;
  pm.addPass(tcc::createLowerToLinalgPass(lower));
  // Per function: the entry points (train_step, eval_step, infer) in
  // parallel.
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  // Named elementwise ops (linalg.add, linalg.exp, ...) as generics, so that
  // the elementwise fusion below sees them; matmuls and convolutions keep
  // their names for the library calls, transposed operands folded in.
  pm.addNestedPass<func::FuncOp>(tcc::createPrepareLinalgPass());
  // Producer-consumer fusion of elementwise linalg ops: one loop nest, no
  // intermediate buffer, for chains such as bias + activation.
  if (options.fuse) {
    tcc::FuseElementwisePassOptions fuse;
    fuse.report = options.reportFusion;
    fuse.siblingReductions = !options.device;
    pm.addNestedPass<func::FuncOp>(tcc::createFuseElementwisePass(fuse));
  }
  // 16-bit arithmetic in f32 within each fused kernel, rounded once where
  // the kernel writes (docs/precision.md "Excess precision").
  pm.addNestedPass<func::FuncOp>(tcc::createExcessPrecisionPass());
  // Recomputed ops (tcc-rematerialize) that did not fuse stay apart from
  // the values they recompute: CSE compares attributes, not locations.
  pm.addPass(tcc::createKeepRecomputedPass());
  pm.addPass(createCSEPass());
  // CSE shared the zero accumulators of equal shape; each writer gets its
  // own again (else a copy per writer after bufferization).
  pm.addNestedPass<func::FuncOp>(tcc::createSplitSharedFillsPass());
  // Training: each parameter's update is written over the parameter.
  pm.addNestedPass<func::FuncOp>(tcc::createUpdateParamsInPlacePass());
}

void tcc::buildCpuBufferizePipeline(OpPassManager &pm,
                                     const CpuPipelineOptions &options) {
  // CSE merged the empty destinations of one shape: every writer gets its
  // own again, right before it. One-shot's analysis is cubic in the in-place
  // writers of one empty; and a forward op and a backward op writing one
  // empty in place become one buffer live from the forward to the backward
  // (which the memory plan cannot split, and which undid recomputation).
  tcc::SplitSharedEmptiesPassOptions split;
  split.maxWriters = 1;
  split.runLength = 1;
  pm.addNestedPass<func::FuncOp>(tcc::createSplitSharedEmptiesPass(split));
  // Tensors to buffers across the whole function, including its signature;
  // identity layouts so that every argument is a plain contiguous buffer.
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  bufferize.unknownTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  // Its constants come out in an order that varies from run to run: the
  // order and names of their first use instead.
  pm.addPass(tcc::createOrderGlobalsPass());
  // The memory plan needs every allocation at the top level of the body.
  pm.addNestedPass<func::FuncOp>(bufferization::createBufferHoistingPass());
  pm.addNestedPass<func::FuncOp>(bufferization::createBufferLoopHoistingPass());
  // Matmuls (f32, and 16-bit with f32 sums) and f32 convolutions: oneDNN
  // through the runtime. Before the
  // plan, so that a convolution reading an unpadded input keeps it live.
  if (options.libraryCalls) {
    tcc::MarkLibraryCallsPassOptions calls;
    calls.sixteenBit = true;
    calls.tf32 = options.tf32;
    calls.interleavedHeads = !options.device;
    pm.addPass(tcc::createMarkLibraryCallsPass(calls));
  }
  // A reduction with the fills and elementwise ops around it over the same
  // rows (softmax, layer norm): one loop over the rows (CPU; the GPU maps
  // one kernel per op). Before the plan, which then keeps the run's
  // buffers apart.
  if (options.fuse && options.fuseRows && !options.device) {
    tcc::FuseRowsPassOptions rows;
    rows.report = options.reportFusion;
    pm.addNestedPass<func::FuncOp>(tcc::createFuseRowsPass(rows));
  }
  // Data-parallel steps: each bucket's all-reduce starts where the bucket
  // is complete and is waited for before its first reader. Right before
  // the plan, which keeps the buckets' buffers live across the reduction.
  pm.addPass(tcc::createScheduleCollectivesPass());
  // Every buffer becomes an offset in the arena or the state region.
  pm.addPass(tcc::createPlanMemoryPass());
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createCSEPass());
}

void tcc::buildCpuLowerToLLVMPipeline(OpPassManager &pm,
                                      const CpuPipelineOptions &options) {
  // linalg on buffers to loops: one OpenMP work-sharing loop over the
  // parallel dimensions of each op large enough to pay for a fork; the
  // thread count is the runtime's (omp_set_num_threads per session).
  // The runtime argument, and the library calls as calls of the runtime.
  // Convolution filters the runtime may keep in its library's layout
  // (their optimizer state and 16-bit copies with them).
  if (!options.device) {
    pm.addPass(tcc::createFilterLayoutsPass());
    pm.addPass(tcc::createLowerLibraryCallsPass());
  }
  tcc::LinalgToCpuLoopsPassOptions toLoops;
  toLoops.vectorBits = options.vectorBits;
  pm.addNestedPass<func::FuncOp>(tcc::createLinalgToCpuLoopsPass(toLoops));
  // Every kernel as a function: LLVM's loop passes and register allocator
  // are superlinear over one function of thousands of loop nests, and
  // functions are what the artifact writer spreads over threads and caches.
  // For --profile each keeps its node's name (a symbol per kernel);
  // otherwise equal kernels become one, named after its body.
  if (options.outlineKernels || !options.device) {
    // --profile on the CPU: the runtime hears of every kernel's start and end.
    tcc::OutlineKernelsPassOptions outline;
    outline.profileMarks = options.outlineKernels && !options.device;
    pm.addPass(tcc::createOutlineKernelsPass(outline));
    if (!options.outlineKernels) {
      tcc::DedupKernelsPassOptions dedup;
      dedup.report = options.reportFusion;
      pm.addPass(tcc::createDedupKernelsPass(dedup));
    }
  }
  pm.addPass(createConvertSCFToOpenMPPass());
  // From here on every pass that can is nested on func.func: the kernels are
  // independent functions, so MLIR's thread pool lowers them in parallel
  // (the same IR for any thread count), and each function's IR stays hot in
  // the cache through a run of passes instead of one walk of the whole
  // module per pass. The module passes between the runs are the ones that
  // declare symbols (malloc, libm) or convert signatures and calls.
  OpPassManager &loops = pm.nest<func::FuncOp>();
  // Vector transfers left n-D become loops of 1-D ones.
  loops.addPass(createConvertVectorToSCFPass());
  loops.addPass(createLowerAffinePass());
  loops.addPass(createCanonicalizerPass());
  // memref.view / subview arithmetic must be explicit before memref-to-llvm.
  loops.addPass(memref::createExpandStridedMetadataPass());
  loops.addPass(createLowerAffinePass());
  // Before scf-to-cf: the memref.alloca_scope that scf-to-openmp puts around
  // each loop body must still hold a single block when it is lowered.
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  OpPassManager &mathOps = pm.nest<func::FuncOp>();
  mathOps.addPass(createSCFToControlFlowPass());
  // exp, log, tanh, erf as polynomials (vectorizable, no libm call); the
  // remaining math ops: LLVM intrinsics where they exist, libm for the rest.
  mathOps.addPass(tcc::createApproximateMathPass());
  // The other math ops on 16-bit floats compute in f32 (LLVM would promote
  // them anyway, with a libcall to round bf16).
  mathOps.addPass(math::createMathExtendToSupportedTypes());
  mathOps.addPass(createConvertMathToLLVMPass());
  // Before the vector and arith conversions: it scalarizes vector math ops
  // into vector and arith ops that they then lower.
  pm.addPass(createConvertMathToLibmPass());
  OpPassManager &arithOps = pm.nest<func::FuncOp>();
  // bf16 conversions as integer arithmetic: LLVM would call libgcc's
  // __truncsfbf2, which Debian 12's libgcc lacks, and an artifact imports
  // only libc/libm; but on a CPU with AVX512-BF16 (nativeBF16Rounding) f32
  // -> bf16 is LLVM's fptrunc, its vcvtneps2bf16.
  // 16-bit arithmetic (the precision policy's) as f32 arithmetic between
  // exact conversions: one rounding per op, as the 16-bit op would round.
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = {"bf16", "f16"};
  arithOps.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
  // Ceil / floor division and bf16 conversions expanded; maximumf and
  // minimumf kept for LLVM's llvm.maximum / llvm.minimum, which its loop
  // vectorizer reduces (a softmax's row maximum).
  arithOps.addPass(tcc::createExpandArithPass({options.nativeBF16Rounding}));
  arithOps.addPass(createConvertVectorToLLVMPass());
  arithOps.addPass(createArithToLLVMConversionPass());
  // Padding values of vector transfers (ub.poison) that outlining moved
  // out of the kernel they were folded into.
  arithOps.addPass(createUBToLLVMConversionPass());
  arithOps.addPass(createConvertIndexToLLVMPass());
  // Branches, signatures and calls, and the OpenMP regions: module passes.
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  // Per function again (one walk of the whole module was an eighth of the
  // MLIR time); module-level ops here are globals with constant values.
  pm.addNestedPass<LLVM::LLVMFuncOp>(createCanonicalizerPass());
}

void tcc::buildCpuCodegenPipeline(OpPassManager &pm) {
  buildCpuLinalgPipeline(pm);
  CpuPipelineOptions options;
  buildCpuBufferizePipeline(pm, options);
  buildCpuLowerToLLVMPipeline(pm, options);
}

void tcc::registerCpuPipelines() {
  PassPipelineRegistration<>(
      "tcc-cpu-pipeline",
      "tcc dialect to LLVM dialect for CPUs (lowering, bufferization, "
      "memory plan, loops)",
      [](OpPassManager &pm) { buildCpuCodegenPipeline(pm); });
  PassPipelineRegistration<>(
      "tcc-cpu-bufferize", "linalg on tensors to the planned arena",
      [](OpPassManager &pm) { buildCpuBufferizePipeline(pm); });
  PassPipelineRegistration<>(
      "tcc-cpu-to-llvm", "planned memrefs to the LLVM dialect",
      [](OpPassManager &pm) { buildCpuLowerToLLVMPipeline(pm); });
}
