//===- Passes.td - tcc's own passes ---------------------------*- tablegen -*-===//
//
// Every tcc pass is declared here (def FooPass, flag --tcc-foo, file
// STAGE/Foo.cpp, test test/passes/STAGE/foo.mlir; the stages' folders are
// listed in passes/CMakeLists.txt). Upstream passes are used wherever they do the
// job; the passes here are what upstream lacks.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_PASSES_TD
#define TCC_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Import and training: tcc ops in, tcc ops out (the shared pipeline)
//===----------------------------------------------------------------------===//

def ExpandCompositesPass : Pass<"tcc-expand-composites", "mlir::func::FuncOp"> {
  let summary = "Expand composite ops into simpler tcc ops";
  let description = [{
    Rewrites ops that are compositions of simpler ones into those ops, for
    backends and passes that only handle the primitives: `tcc.gelu` into erf
    (or tanh) arithmetic, `tcc.softplus`, `tcc.leaky_relu` and `tcc.elu` into
    compares and selects, `tcc.rsqrt` and `tcc.reciprocal` into divisions.
    The result computes the same values up to floating-point rounding.
  }];
  let dependentDialects = ["tcc::TccDialect"];
}

def BuildTrainStepPass : Pass<"tcc-build-train-step", "mlir::ModuleOp"> {
  let summary = "Build the training step from the forward function";
  let description = [{
    From `@forward` (inputs and `tcc.param` parameters, first result the
    model's prediction) builds `@train_step`: the same arguments plus the
    labels (input `labels`) and the learning rate (input `lr`, a 0-d f32
    runtime scalar written before each step), returning the loss (output
    `loss`) and each parameter's new value, marked `tcc.update = NAME` so
    that the memory plan writes it over the parameter in place. The loss is
    `mse` (mean over all elements of (prediction - labels)^2, labels shaped
    like the prediction), `cross_entropy` (classes on the last axis of the
    logits, integer labels shaped like the logits without it, mean over all
    label positions) or `none` (the prediction is already the scalar loss).
    The gradient comes from `tcc-autodiff`'s rules; the optimizer update
    follows PyTorch's formulas and defaults exactly: SGD (momentum,
    dampening, Nesterov, weight decay), Adam (L2 weight decay) and AdamW
    (decoupled weight decay, default 0.01). Optimizer buffers (momentum,
    Adam's two moments) are `tcc.state` arguments, zero at the start and
    updated in place like the parameters; Adam's bias correction and SGD's
    first momentum step read the 1-based step counter, a 0-d f32 input
    `step` written by the runtime before each step, like `lr`. `@forward`
    stays, as the `infer` entry point. The step also outputs `grad_norm`, the
    global L2 norm of the gradients (before clipping), and with `grad-clip`
    scales the gradients as PyTorch's clip_grad_norm_ does. The
    hyperparameters are 0-d f32 inputs too (`weight_decay`; `momentum` when
    SGD has a momentum buffer; Adam's `beta1`, `beta2`, `eps`,
    `one_minus_beta1`, `one_minus_beta2`; `grad_clip` with clipping), their
    option values recorded as the metadata `default.NAME`: sweeps need no
    recompilation. Momentum 0 versus > 0 and clipping on or off stay
    compile-time choices (they decide the step's state and ops).

    Also built: `@eval_step` (the labels and the model's inputs -> the loss
    and the model's outputs, batch norms with their running statistics, no
    dropout); with `grad-accum` K > 1, `@accumulate_grad` (one micro-batch:
    loss, gradient added into the state buffers NAME.grad_accum, first
    micro-batch `micro` = 0 overwriting them), and `@train_step` then uses
    (accumulated + own gradient) / K. Dropouts of the step read the runtime
    input `rng` = [seed, counter]. `freeze` patterns (`*`, `?`, `[...]`)
    exclude matching parameters from training. The module attribute
    `tcc.metadata` records what the runtime needs (loss, labels,
    ignore_index, grad_accum, ...). With `data-parallel`, train_step
    averages its gradients over the ranks of the job that runs it: the
    gradients, in the order the backward completes them, go into buckets
    of `bucket-mb` MB, and a `tcc.all_reduce` per bucket follows the
    bucket's last gradient; clipping, loss scaling and the optimizer read
    the averages (accumulate_grad accumulates locally: the reduction runs
    once per optimizer step). With `skip-nonfinite`, train_step takes the
    0-d f32 input `skip_nonfinite` and outputs `skipped` (1 or 0): with the
    input 1 and a loss or gradient norm that is infinite or NaN, every
    update (parameters, optimizer state, running statistics) selects the
    old value. The decision needs every gradient before the first update,
    so it is a compile-time choice (it lengthens gradients' lifetimes
    where nothing else waits for the norm).
  }];
  let options = [
    Option<"loss", "loss", "tcc::Loss", /*default=*/"tcc::Loss::Mse",
           "mse, cross_entropy or none", [{tcc::lossValues()}]>,
    Option<"labels", "labels", "std::string", /*default=*/"\"y\"",
           "Name of the labels input">,
    Option<"optimizer", "optimizer", "tcc::Optimizer", /*default=*/"tcc::Optimizer::Sgd",
           "sgd, adam or adamw", [{tcc::optimizerValues()}]>,
    Option<"momentum", "momentum", "double", /*default=*/"0.0", "SGD momentum">,
    Option<"dampening", "dampening", "double", /*default=*/"0.0", "SGD dampening">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false", "SGD Nesterov momentum">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"-1.0",
           "Weight decay (default: 0, and 0.01 for adamw)">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "Adam beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "Adam beta2">,
    Option<"eps", "eps", "double", /*default=*/"1e-8", "Adam epsilon">,
    Option<"gradClip", "grad-clip", "double", /*default=*/"0.0",
           "Clip the global gradient norm to this value (0: no clipping)">,
    Option<"ignoreIndex", "ignore-index", "int64_t", /*default=*/"-100",
           "cross_entropy: label positions with this label do not count">,
    Option<"labelSmoothing", "label-smoothing", "double", /*default=*/"0.0",
           "cross_entropy: PyTorch's label smoothing in [0, 1)">,
    Option<"gradAccum", "grad-accum", "int64_t", /*default=*/"1",
           "Micro-batches per optimizer step (adds @accumulate_grad)">,
    ListOption<"freeze", "freeze", "std::string",
               "Glob patterns of parameters that are not trained">,
    Option<"precision", "precision", "tcc::Precision", /*default=*/"tcc::Precision::FP32",
           "fp32, tf32, bf16 or fp16; a 16-bit precision marks the optimizer "
           "tcc.keep_fp32 (tcc-precision runs next); fp16 adds dynamic loss scaling; "
           "tf32 builds what fp32 does (the library calls take it)", [{tcc::precisionValues()}]>,
    Option<"dataParallel", "data-parallel", "bool", /*default=*/"false",
           "Average the gradients over the ranks of a data-parallel job "
           "(tcc.all_reduce per bucket; the world size is the runtime's)">,
    Option<"bucketMb", "bucket-mb", "double", /*default=*/"25.0",
           "data-parallel: gradient bucket size in MB (10^6 bytes)">,
    Option<"zero", "zero", "int64_t", /*default=*/"0",
           "data-parallel: 1 shards the optimizer state over the ranks (ZeRO stage 1): "
           "train_step writes the flat local gradient to the state buffer zero.grads and "
           "updates nothing; @zero_update updates one chunk of the flat parameters, "
           "which the runtime reduce-scatters, updates and all-gathers">,
    Option<"skipNonFinite", "skip-nonfinite", "bool", /*default=*/"false",
           "Add the runtime input skip_nonfinite: when it is 1, a step whose loss or "
           "gradient norm is not finite keeps the parameters, the optimizer state and "
           "the running statistics (output skipped = 1); fp16 steps always skip">
  ];
  let dependentDialects = ["tcc::TccDialect"];
}

def PrecisionPass : Pass<"tcc-precision", "mlir::ModuleOp"> {
  let summary = "Mixed precision: 16-bit compute, f32 where the ops need it";
  let description = [{
    On the joint training graph (after autodiff, canonicalize and CSE), gives
    every f32 value the precision its producer's class asks for
    (`PrecisionOpInterface`, stated in each op's ODS): `low` ops (matmul,
    convolutions) compute in `precision` (bf16 or fp16) and cast their f32
    operands down; `follow` ops (elementwise arithmetic, data movement,
    max / min) compute in 16 bits when any float operand is 16 bits;
    `widened` ops (softmax, transcendental functions) too, but compute in
    f32 inside and round their result once (the lowering widens them);
    `fp32` ops (log-softmax, the loss, normalization statistics, sums and
    scatter-adds) and ops marked `tcc.keep_fp32`
    by tcc-build-train-step (the optimizer, the gradient norm, loss scaling)
    cast 16-bit operands up and stay f32. Casts sit at class boundaries only,
    one per value and type; the canonicalizer folds those of constants and
    round trips. Function signatures do not change: parameters, inputs and
    outputs stay f32, and a result computed in 16 bits is cast back at the
    return. Values the backward pass reads from the forward are 16-bit
    wherever the forward computed them in 16 bits, which is what halves the
    saved activations.

    ```mlir
    %y = tcc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
    // becomes
    %xb = tcc.cast %x : tensor<4x8xf32> to tensor<4x8xbf16>
    %wb = tcc.cast %w : tensor<8x2xf32> to tensor<8x2xbf16>
    %y = tcc.matmul %xb, %wb : (tensor<4x8xbf16>, tensor<8x2xbf16>) -> tensor<4x2xbf16>
    ```
  }];
  let options = [
    Option<"precision", "precision", "tcc::Precision", /*default=*/"tcc::Precision::BF16",
           "The 16-bit type: bf16 or fp16", [{tcc::precisionValues()}]>,
    Option<"report", "report", "bool", /*default=*/"false",
           "Print what runs in which precision and why (--report=precision)">
  ];
  let dependentDialects = ["tcc::TccDialect"];
}

def AutodiffPass : Pass<"tcc-autodiff", "mlir::ModuleOp"> {
  let summary = "Build the gradient function of every function with parameters";
  let description = [{
    For each function with `tcc.param` arguments (with `wrt=all`: with float
    tensor arguments), adds `NAME_grad`: the same arguments, returning the
    loss (the function's first result, a float tensor of one element) and
    the gradient of the loss with respect to each parameter (or argument),
    built by reverse-mode autodiff from the ops' gradient rules
    (DifferentiableOpInterface). Missing rules are reported all at once,
    naming the ops (the ONNX nodes).
  }];
  let options = [
    Option<"wrt", "wrt", "std::string", /*default=*/"\"params\"",
           "Differentiate with respect to 'params' (tcc.param arguments) or "
           "'all' float tensor arguments">
  ];
  let dependentDialects = ["tcc::TccDialect"];
}

//===----------------------------------------------------------------------===//
// Linalg lowering and fusion, on tensors
//===----------------------------------------------------------------------===//

def RematerializePass : Pass<"tcc-rematerialize", "mlir::func::FuncOp"> {
  let summary = "Recompute forward values in the backward pass to fit a memory budget";
  let description = [{
    On the joint training graph (tcc dialect, after CSE): functions that
    update parameters (a result marked `tcc.update`), with the body as
    the schedule: a value's tensor-level live interval runs from its op to
    its last use, and the live bytes at each op are the function's inputs
    plus every interval over it (parameters, optimizer state and in-place
    updates live in the state region). While the peak exceeds
    `arena-budget`, the pass looks at the values live across the peak and
    not read there, whose op is pure and deterministic (not dropout, not
    training-mode batch norm, not a constant; an op with several results,
    a layer norm, is cloned whole): recomputing one clones its op right
    before its first use after the peak (the uses after the peak read the
    clone), which frees its bytes at the peak but makes the op's operands
    live until the clone. It takes the value with the most bytes freed per
    unit of recompute arithmetic (matmul and convolution 2 per
    multiply-add, 16 per transcendental, 8 per division, 1 per element
    otherwise), and undoes a step that would raise the peak. Operands dead
    at the peak are recomputed too (a chain); each chain is also weighed
    cut at each value it recomputes (that value kept instead), and the
    candidates that each make one same value live are weighed together as
    a group, which pays for that value once (the three products of a GELU
    from the kept fc1 output). A chain reads an earlier clone of what it
    needs, moved up before its reader when the clone comes later; when
    that run misses the target (always under `mode=max`) the pass runs
    again without moving clones and keeps the lower peak. `mode=max`
    recomputes until no step lowers the peak (the least memory this pass
    reaches); `off`, or `auto` without a budget, changes nothing.

    A clone is the same op on the same operands, so it computes the same
    bits: elementwise kernels are lowered without FMA contraction,
    reductions sum in an order fixed by their trip count
    (compiler/LLVMCodegen.cpp, fixReductionOrder), and matmuls and
    convolutions are the same library calls on the same shapes. Its
    location is `fused<{tcc.recomputed = N}>[original]`: lowering keeps it,
    and `tcc-keep-recomputed` turns it into an attribute before the CSE
    after fusion, which would otherwise merge an unfused clone back into
    the value it recomputes.

    Records on the function `tcc.remat`: the recomputed values (node name,
    op, bytes freed, flops), the model's peak before and after, and the
    recompute and step arithmetic, for `tcc --report=memory`.

    ```mlir
    %h = tcc.exp %x : tensor<1024xf32>     // forward; %h was kept for the backward
    ...                                     // the peak
    %h2 = tcc.exp %x {loc: recomputed}      // backward: recomputed from %x
    %g = tcc.mul %dy, %h2 : tensor<1024xf32>
    ```
  }];
  let options = [
    Option<"arenaBudget", "arena-budget", "int64_t", /*default=*/"-1",
           "The tensor-level arena peak to reach, in bytes (-1: none)">,
    Option<"mode", "mode", "tcc::RematMode", /*default=*/"tcc::RematMode::Auto",
           "auto (recompute until the budget holds), max (the least memory), off",
           [{tcc::rematModeValues()}]>
  ];
}

def LowerToLinalgPass : Pass<"tcc-lower-to-linalg"> {
  let summary = "Lower every tcc op to linalg, tensor, arith, math and scf";
  let description = [{
    Rewrites each tcc op into upstream dialects on tensors: named linalg ops
    where one fits exactly (matmul, batch_matmul, transpose, broadcast,
    reduce, NCHW convolutions and poolings), linalg.generic otherwise, tensor
    ops for data movement, and scf loops for scatters and cumsum. Unsigned
    integer types become signless everywhere, function signatures included;
    their semantics survive in the choice of arith ops (divui, cmpi ult,
    uitofp, ...). Out-of-range gather / scatter indices are clamped, so no
    access is ever out of bounds. Run on a module, signatures and calls stay
    consistent; the pass fails, naming the op, if any tcc op remains.
    A bf16 / f16 product (matmul, convolution) is computed on its operands
    widened to f32 and rounded once (f32 sums); with `sixteen-bit-matmuls` a
    matmul instead reads its 16-bit operands as they are, into an f32
    linalg matmul (linalg converts operands to the output's type), then one
    rounding: the same numbers, for libraries that take 16-bit operands with
    f32 sums (cuBLASLt, oneDNN; the CPU and CUDA pipelines set it). With
    `sixteen-bit-convs` a convolution, a conv_transpose (a data gradient)
    and a conv_backward_filter do the same: their linalg ops read the 16-bit
    operands into f32 sums (oneDNN's bf16 convolutions; the CPU pipeline
    sets it, CUDA artifacts keep cuDNN f32 calls on widened operands). With
    `few-point-gemms` (the CPU pipeline) a convolution over few output points
    (a CNN's deep layers on small images) is one matmul of its input's
    windows, and its data gradient one matmul and a gather, instead of
    convolution calls.
  }];
  let options = [
    Option<"sixteenBitMatmuls", "sixteen-bit-matmuls", "bool", /*default=*/"false",
           "bf16 / f16 matmuls read their 16-bit operands into f32 sums (no widened copies)">,
    Option<"sixteenBitConvs", "sixteen-bit-convs", "bool", /*default=*/"false",
           "bf16 / f16 convolutions and their gradients read their 16-bit operands into "
           "f32 sums (no widened copies)">,
    Option<"fewPointGemms", "few-point-gemms", "bool", /*default=*/"false",
           "a one-group float convolution over few output points as a matmul of its "
           "input's windows, its data gradient as a matmul and a gather">,
    Option<"gemmConvolutions", "gemm-convolutions", "bool", /*default=*/"false",
           "every one-group float convolution and data gradient as a matmul (and a "
           "gather), whatever its size (tests)">
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect", "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect"
  ];
}

def PrepareLinalgPass : Pass<"tcc-prepare-linalg"> {
  let summary = "Shape linalg on tensors for fusion and library calls";
  let description = [{
    Folds a 2-D transpose feeding a `linalg.matmul` into the matmul's indexing
    maps (the operand is read transposed instead of copied; oneDNN and the
    generated loops both handle it), then generalizes every named op except
    contractions (matmul, batch_matmul), convolutions and fills into
    `linalg.generic`, so that elementwise fusion sees them while the heavy ops
    stay recognizable for `tcc-mark-library-calls`. Last, a result read only
    through extract_slices that do not overlap is computed slice by slice
    (an all-parallel generic, a fill, a 2-D matmul on its parallel
    dimensions; an expand_shape whose expanded groups the slices keep
    whole), until nothing is left to split: attention's projection read as
    Q, K and V becomes three products, and no op writes the whole result.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def FuseElementwisePass : Pass<"tcc-fuse-elementwise"> {
  let summary = "Producer-consumer fusion of elementwise linalg.generic ops";
  let description = [{
    Upstream's elementwise fusion and reshape propagation, with tcc's
    control: an op fuses into its consumer when it has a single use, or when
    it is cheap to recompute in each of its consumers (an all-parallel generic
    of at most four arith ops, no division) and doing so moves fewer bytes
    (every use an input of a generic, users x inputs < inputs + 1 + users);
    an expensive producer is never computed twice. An expensive producer
    with several uses fuses into an elementwise consumer as a multi-output
    op (its value is still written for the other users, which must all come
    after the consumer; identity maps only), and siblings (generics over the
    same iteration space reading a common input with the same map, arith /
    math bodies, the same innermost-loop access) merge into one multi-result
    generic that reads the common input once. Only `linalg.generic` ops
    take part,
    so that named matmuls and convolutions are never rewritten into generics
    (reshape propagation by expansion would otherwise turn a matmul next to a
    broadcast into a 4-loop generic that no library call matches).

    No fused kernel exceeds `max-kernel-size` body ops or operands: a chain
    of thousands of elementwise ops becomes a sequence of kernels of that
    size, which keeps fusion and LLVM's code generation linear in the
    chain's length (the largest kernel of the zoo's models has 158 ops).

    With `report`, prints per function the number of kernels (linalg ops)
    before and after, and the source ops (ONNX node names) of every kernel
    that fused several.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Print the kernels before and after fusion on standard error">,
    Option<"siblingReductions", "sibling-reductions", "bool", /*default=*/"true",
           "Merge sibling reductions too (false for CUDA, whose block "
           "reduction carries one output)">,
    Option<"maxKernelSize", "max-kernel-size", "unsigned", /*default=*/"256",
           "The most body ops, and the most operands, of a fused kernel">
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect",
                           "mlir::affine::AffineDialect"];
}

def KeepRecomputedPass : Pass<"tcc-keep-recomputed"> {
  let summary = "Keep recomputed values apart from the originals through CSE";
  let description = [{
    Every op whose location carries `tcc.recomputed = N` (a clone made by
    `tcc-rematerialize`, as lowered and fused) gets the discardable
    attribute `tcc.recomputed = N`. CSE compares attributes but not
    locations: without it, a recomputed op that did not fuse into its
    consumer (a library matmul, a shared reduction) would be merged back
    into the original, which keeps the original's value live across the
    peak again. Runs right before the CSE after fusion; the attribute is
    ignored by everything after it.
  }];
}

def ExcessPrecisionPass : Pass<"tcc-excess-precision", "mlir::func::FuncOp"> {
  let summary = "16-bit arithmetic in f32 inside a kernel, rounded where it is stored";
  let description = [{
    After fusion, on linalg on tensors, for both targets: every 16-bit
    (bf16, f16) arith and math op computes in f32 between conversions
    (upstream `math-extend-to-supported-types` and
    `arith-emulate-unsupported-floats`), and a value that such an op
    rounds to 16 bits only for the next op of the same kernel to widen it
    again is read unrounded: a fused chain (a GELU of five ONNX ops, a
    softmax's scale and mask) rounds once, where the kernel writes its
    result, instead of after every op. XLA calls this excess precision;
    torch.compile's generated kernels do the same. Roundings the IR asks
    for with `tcc.cast` (the model's casts, the precision policy's class
    boundaries) are kept: only the roundings that the emulation of an op
    adds are skipped. Values crossing kernels go through memory in 16 bits
    as before. f32 and f64 code is untouched.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::math::MathDialect"];
}

//===----------------------------------------------------------------------===//
// Bufferization and memory: right before one-shot bufferization, then the
// memory plan on buffers
//===----------------------------------------------------------------------===//

def SplitSharedFillsPass : Pass<"tcc-split-shared-fills", "mlir::func::FuncOp"> {
  let summary = "One linalg.fill per op that writes into it";
  let description = [{
    CSE merges identical `linalg.fill`s of `tensor.empty` (the zero
    accumulators of matmuls and reductions of one shape), and then every op
    but one that writes into the shared value needs a copy of it after
    bufferization (plus, for a library call, an accumulating product instead
    of an overwriting one). This pass gives each destination use its own
    fill of its own empty tensor, after the last CSE and before
    bufferization. Fills read by ops as inputs are left alone.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect"];
}

def UpdateParamsInPlacePass : Pass<"tcc-update-params-in-place", "mlir::func::FuncOp"> {
  let summary = "Make each parameter update write over the parameter";
  let description = [{
    On linalg on tensors, for every result marked `tcc.update = NAME`: when
    it is computed by an elementwise `linalg.generic` that reads parameter
    (or optimizer state) NAME at the same indices it writes, never reads its
    own output and is the last reader of NAME's old value, NAME becomes that
    op's destination (`outs`). One-shot bufferization
    then writes the new value over the parameter's buffer (the last read of
    the parameter is this very op), and `tcc-plan-memory` finds the update
    already in place; an update that cannot be placed so makes the plan fail
    instead of copying.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def SplitSharedEmptiesPass : Pass<"tcc-split-shared-empties", "mlir::func::FuncOp"> {
  let summary = "Bounded runs of writers per tensor.empty, for bufferization";
  let description = [{
    CSE merges the `tensor.empty` destinations of one shape, and one-shot
    bufferization's analysis costs, per decision, the reads times the writes
    of an alias set: an in-place chain of n ops on one empty is one alias set
    and costs n^3 in all. Right before bufferization, an empty with more than
    `max-writers` ops writing into it gives every run of `run-length`
    consecutive writers (in program order) after the first its own copy, so
    that alias sets stay bounded. Only then does the result differ: the first
    writer of each run writes a new buffer instead of perhaps reusing the
    previous run's. The threshold is above every model of the repository
    (the LSTM of the zoo has 385 writers of one empty).
  }];
  let options = [
    Option<"maxWriters", "max-writers", "unsigned", /*default=*/"512",
           "Split the writers of an empty only when there are more than this">,
    Option<"runLength", "run-length", "unsigned", /*default=*/"64",
           "The writers of each copy of a split empty">
  ];
  let dependentDialects = ["mlir::tensor::TensorDialect"];
}

def OrderGlobalsPass : Pass<"tcc-order-globals", "mlir::ModuleOp"> {
  let summary = "Constant globals in the order of their first use, named by it";
  let description = [{
    One-shot bufferization turns tensor constants into `memref.global`s in
    the order in which it visits the functions, and that order follows the
    functions' addresses in memory, which differ from run to run when the
    context is multithreaded: the same model gave artifacts of other bytes.
    Right after bufferization, the private constant globals are moved to the
    top of the module in the order of their first `memref.get_global` (a
    walk of the module, functions in their order) and renamed
    `__constant_<index>_<shape>` by that order, so that the module, and the
    artifact, depend on the model alone. Unused private constants are
    erased.

    ```mlir
    memref.global "private" constant @__constant_4xf32_0 : memref<4xf32> = dense<2.0>
    memref.global "private" constant @__constant_4xf32 : memref<4xf32> = dense<1.0>
    func.func @f() { %0 = memref.get_global @__constant_4xf32 ... }
    // becomes
    memref.global "private" constant @__constant_0_4xf32 : memref<4xf32> = dense<1.0>
    memref.global "private" constant @__constant_1_4xf32 : memref<4xf32> = dense<2.0>
    ```
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def PlanMemoryPass : Pass<"tcc-plan-memory", "mlir::ModuleOp"> {
  let summary = "Place every buffer of a bufferized function in one arena";
  let description = [{
    Runs after bufferization on functions whose arguments carry `tcc.input`,
    `tcc.param` and whose results carry `tcc.output` names. Rewrites each such
    function to take two byte buffers, `(%arena: memref<?xi8>, %state:
    memref<?xi8>)`, and nothing else:
      - every `memref.alloc` becomes a `memref.view` at a fixed arena offset,
        chosen by liveness over the function body (best fit, largest first),
        so buffers whose lifetimes do not overlap share memory;
      - inputs and outputs get arena slots too (the runtime copies inputs in
        and outputs out); a returned buffer that was allocated in the body is
        placed in its output slot directly, anything else is copied there;
      - parameters are laid out one after another in the state region.
    The plan is recorded on the function as `tcc.plan` (one dictionary per
    tensor: name, role, region, offset, size, shape, element type) with
    `tcc.arena_size` and `tcc.state_size`, for the artifact writer. The pass
    fails if an allocation has a dynamic size, lives inside a loop or
    branch, or if any `memref.dealloc` of something else remains: an entry
    point allocates nothing.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"64",
           "Byte alignment of every buffer and of both regions">
  ];
  let dependentDialects = ["mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect"];
}

//===----------------------------------------------------------------------===//
// Loops and library calls: tcc-mark-library-calls (both targets) and
// tcc-fuse-rows (CPU) run on buffers before the memory plan, the others after
// it; tcc-lower-library-calls serves both targets
//===----------------------------------------------------------------------===//

def MarkLibraryCallsPass : Pass<"tcc-mark-library-calls", "mlir::ModuleOp"> {
  let summary = "Mark matmuls and convolutions as runtime library calls (both targets)";
  let description = [{
    Runs after bufferization and before `tcc-plan-memory`. Each f32
    `linalg.matmul` (plain or with transposed operands), `linalg.batch_matmul`
    and `linalg.conv_2d_nchw_fchw` on dense row-major buffers becomes a
    `func.call` of a private declaration `@tcc_library_call_N` carrying its
    kind and sizes in a `tcc.library_call` attribute (abi.h documents the
    kinds and parameters); `tcc-lower-library-calls` turns those into
    calls of the runtime after memory planning. Two rewrites make the call
    cheaper than the loops it replaces:
      - a zero fill of the output right before the op is dropped, and the
        call overwrites its output instead of accumulating;
      - such a matmul takes the elementwise op after it as its epilogue
        when that op is exactly `[max(] [D +] (C + bias) [, 0.0)]` on its
        result C (read directly or through a reshape; bias along N, the
        residual D and the output Y with identity maps): the call writes Y
        (abi.h's epilogue bits and extra operands), and the op, C's fill
        and, unless Y is C itself, C go. Only when nothing else reads C
        (a backward op re-reading the pre-activation keeps it) and A and B
        are not written in between (the call takes the op's place);
      - a convolution whose input is a zero-padded copy (fill + copy into a
        subview) reads the unpadded tensor directly, with the padding as
        call parameters: no padded copy is made. Done before memory
        planning, so the unpadded buffer stays live until the call.
    A linalg op that the lowering marked as a convolution's gradient
    (`tcc.conv_backward`, passes/lowering/ConvBackward.h) becomes a
    CONV2D_BACKWARD_DATA or CONV2D_BACKWARD_WEIGHTS call on the buffers the
    call reads: a data gradient's dY behind the strided copy into zeros and
    W behind the flipped copy, a filter gradient's X behind its padding;
    the copies go. When they cannot be found, the op stays what it is.
    Grouped and depthwise gradients become gradient calls (with their
    groups) either way. With `grouped`, the forward
    `linalg.depthwise_conv_2d_nchw_chw` and `linalg.conv_2d_ngchw_gfchw`
    become CONV2D calls too. Off by default: correct on every shape checked
    against float64 (OneDnnTest), but zoo mobilenet_v2's first Adam update
    then misses the zoo's 1e-3 bound on 8 tensors (6.8e-3 at worst) where
    the generated loops stay under it; the gradients of both, and PyTorch's
    fp32 ones, are 1.0-1.4e-3 from float64 (docs/cpu-codegen.md).
    With `sixteen-bit` (the CUDA pipeline), a `linalg.matmul` /
    `linalg.batch_matmul` of dense bf16 or f16 A and B into f32 sums C (what
    `tcc-lower-to-linalg sixteen-bit-matmuls` makes of a 16-bit matmul)
    becomes a call of that dtype whose C is f32 (abi.h's C_DTYPE); when the
    next op to touch C only rounds all of it to the 16-bit type into another
    buffer Y, and nothing else reads C, the call writes Y in 16 bits instead
    (C and the rounding go). 16-bit calls take no epilogue. With
    `interleaved-heads`, a batched matmul whose input is a copy of a
    [B, T, H, D] buffer into [B, H, T, D] (attention heads) reads the
    buffer itself, and one whose result only such a copy reads writes the
    copy's buffer, with abi.h's HEADS and INTERLEAVED parameters; the copies
    go. The same holds
    for the 2-D convolutions and their marked gradients of dense 16-bit
    operands (`sixteen-bit-convs`): a call of that dtype whose output is f32
    (abi.h's OUT_DTYPE) or, with the rounding taken in, 16-bit. With `tf32`, every
    f32 call carries abi.h's TF32 math mode (`--precision=tf32`).
    Other element types and layouts stay on the generated path.
  }];
  let options = [
    Option<"grouped", "grouped", "bool", /*default=*/"false",
           "Forward grouped and depthwise 2-D convolutions become calls too">,
    Option<"sixteenBit", "sixteen-bit", "bool", /*default=*/"false",
           "bf16 / f16 matmuls and convolutions with f32 sums become 16-bit calls">,
    Option<"tf32", "tf32", "bool", /*default=*/"false",
           "f32 calls may round operands to TF32 on tensor cores (device artifacts)">,
    Option<"interleavedHeads", "interleaved-heads", "bool", /*default=*/"false",
           "Batched matmuls read and write attention heads in place of their "
           "transposing copies (abi.h's HEADS; CPU artifacts)">
  ];
  let dependentDialects = ["mlir::func::FuncDialect",
                           "mlir::memref::MemRefDialect"];
}

def FuseRowsPass : Pass<"tcc-fuse-rows", "mlir::func::FuncOp"> {
  let summary = "A reduction with its prologue and epilogue as one loop over rows";
  let description = [{
    On buffers, before the memory plan: a run of consecutive fills and
    generics over the same rows (the leading parallel loops of a reduction
    whose parallel loops all lead: softmax, layer norm and its backward,
    log-softmax with the loss) becomes one loop over the rows whose body runs
    every op of the run on its row, so the run is one kernel and each row's
    data stays in cache from op to op. An op joins when every shaped operand
    is indexed by the rows in its leading dimensions (or, for inputs, not
    at all: a broadcast), it writes only allocations the function does not
    return (parameter updates and outputs keep their kernels), and every
    buffer the run writes is reached through one value indexed by the rows
    in all of the run's ops (through the buffer itself or windows that keep
    the rows whole). Pure ops and allocations between the run's ops stay
    before the loop. A run needs a reduction and two ops other than fills,
    or is an update run: an elementwise op writing a function argument (a
    parameter's update, in place) with the ops after it up to the last one
    that reads what the run wrote through a window (a trimmed filter's
    16-bit copy, its centre tap) and the ops right before it that write
    what it reads (its gradient's zero pad: a map, a copy), over the
    update's leading dimension. The loop is
    an `scf.parallel` when the run's iterations reach `min-parallel-work`,
    else sequential loops; the ops inside never fork again. CPU only: the
    CUDA mapping gives one kernel per op.
  }];
  let options = [
    Option<"minParallelWork", "min-parallel-work", "int64_t",
           /*default=*/"262144",
           "Loop iterations of the run below which the rows stay sequential">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Print each function's runs and their source ops on standard error">
  ];
  let dependentDialects = ["mlir::scf::SCFDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def ScheduleCollectivesPass : Pass<"tcc-schedule-collectives", "mlir::ModuleOp"> {
  let summary = "Split each tcc.all_reduce on buffers into a start and a wait";
  let description = [{
    Runs after bufferization and right before `tcc-plan-memory`. Each
    `tcc.all_reduce` on buffers becomes a call of a private declaration
    `@tcc_collective_N` (an ALL_REDUCE_START, abi.h) at its place and a call
    of another (its WAIT) right before the first later op of the block that
    reads or writes one of its buffers or a view of one (else before the
    terminator); both take the buffers, so the memory plan keeps them live
    and unshared across the reduction, which runs while the ops between
    compute. `tcc-lower-library-calls` turns the calls into calls of
    the runtime's `collective`. A buffer with a non-identity layout is
    reduced through a contiguous copy.

    ```mlir
    tcc.all_reduce %g {bucket = 0 : i64} : memref<64xf32>
    linalg.generic ... ins(%x ...)     // does not touch %g
    linalg.generic ... ins(%g ...)     // the first reader
    // becomes
    call @tcc_collective_0(%g) {tcc.collective = {kind = 1 : i32, ...}}
    linalg.generic ... ins(%x ...)
    call @tcc_collective_1(%g) {tcc.collective = {kind = 2 : i32, ...}}
    linalg.generic ... ins(%g ...)
    ```
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::memref::MemRefDialect"];
}

def FilterLayoutsPass : Pass<"tcc-filter-layouts", "mlir::ModuleOp"> {
  let summary = "Mark the convolution filters the runtime may keep in its library's layout";
  let description = [{
    Runs after `tcc-plan-memory` and before `tcc-lower-library-calls`, on
    the CPU. Finds the sets of buffers, across every planned entry point
    (a state tensor is one buffer in all of them), whose elements are only
    exchanged elementwise: filter operands of one-group convolution calls
    (CONV2D, CONV2D_BACKWARD_DATA; the output of CONV2D_BACKWARD_WEIGHTS),
    identity-mapped operands of elementwise `linalg.generic`s, inputs of
    reductions of every loop into scalars, fills, copies and reshapes, and
    at least one parameter or state tensor. The runtime may keep such a set
    in the filter layout its convolution primitives read (the optimizer's
    update, the 16-bit copy and a gradient norm do not depend on the
    order), converting only where tensors enter or leave the session. Each
    of a set's calls gets `filter_layout = K` in its `tcc.library_call`;
    the module's `tcc.filter_layouts` lists the sets' state tensors by
    name. A step with collectives is left alone (ranks may choose other
    layouts).
  }];
}

def LowerLibraryCallsPass : Pass<"tcc-lower-library-calls", "mlir::ModuleOp"> {
  let summary = "Library calls to calls of the runtime's library_call";
  let description = [{
    Runs after `tcc-plan-memory`. Every planned entry function gains a last
    argument, the runtime's `tcc_abi_runtime *` (abi.h). Each call of a
    `@tcc_library_call_N` declaration becomes an indirect call of the
    runtime's `library_call` with the operands' addresses and the call's
    index in the module's `tcc.library_calls` table, which the artifact's
    descriptor carries so that the runtime creates each oneDNN primitive once
    per session. Calls of `@tcc_collective_N` (tcc-schedule-collectives)
    become calls of the runtime's `collective` with their row of the
    module's `tcc.collectives` table; a WAIT's row names its START's.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def LinalgToCpuLoopsPass : Pass<"tcc-linalg-to-cpu-loops", "mlir::func::FuncOp"> {
  let summary = "Lower linalg ops on buffers to loops, parallel where it pays";
  let description = [{
    Each linalg op on buffers becomes a loop nest. An op with at least
    `min-parallel-work` units of work (the iterations of all its loops,
    reductions included, times the operations of its body: a proxy) runs
    its outermost loops as one `scf.parallel`:
    the shortest prefix of its leading parallel dimensions that has 64
    iterations or more, which `convert-scf-to-openmp` turns into a single
    OpenMP work-sharing loop (static schedule, one fork per op). Inner
    dimensions stay sequential `scf.for` loops, so indices are not recovered
    by division in every iteration; reductions stay sequential, so a result
    never depends on the thread count. A generic reduction whose innermost
    loop is a reduction first has its parallel loops moved outermost, each
    group in its order (batch norm's statistics over NCHW run in parallel
    over the channels); one whose first loop is still a reduction stays
    sequential (it would fork once per reduction step). Smaller ops stay
    sequential: a fork and a join cost microseconds, tens of them on shared
    cores (measured on 2 vCPUs: 262144 beat 32768 by 15% on a small GPT's
    training step and tied on a 4-layer d=256 one).

    Elementwise generics whose innermost loop is unit-stride in every operand
    and a multiple of the AVX2 vector width long are tiled to one vector along
    that loop and vectorized (`linalg::vectorize`), so their bodies, the
    polynomial exp / tanh / erf included, run on 256-bit vectors (512-bit
    with vector-bits=512, for a target CPU with AVX-512).
  }];
  let options = [
    Option<"minParallelWork", "min-parallel-work", "int64_t",
           /*default=*/"262144",
           "Work (iterations times body operations) below which an op stays sequential">,
    Option<"vectorize", "vectorize", "bool", /*default=*/"true",
           "Vectorize elementwise ops along their innermost loop">,
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"256",
           "Width of the vectors: 256 (AVX2) or 512 (AVX-512, tcc --cpu)">
  ];
  let dependentDialects = ["mlir::scf::SCFDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::vector::VectorDialect",
                           "mlir::affine::AffineDialect"];
}

def OutlineKernelsPass : Pass<"tcc-outline-kernels", "mlir::ModuleOp"> {
  let summary = "Outline every kernel into its own function";
  let description = [{
    After `tcc-linalg-to-cpu-loops`: every loop nest at the top level of a
    planned function becomes a call of a new function named
    `kernel_N_NODE` (N counts the kernels of the module, NODE is the ONNX
    node the loop came from; the artifact writer keeps functions of that
    name out of line). The CPU pipeline always runs it: kernels are what
    `tcc-dedup-kernels` deduplicates and the artifact writer compiles in
    groups on a thread pool and caches; LLVM's loop passes and register
    allocator take superlinear time over one function of many loops (an
    unfused 2000-op graph: 15 s as one function, 9 s outlined); with
    `--profile` each kernel keeps its node's name, so that `perf` attributes
    time to kernels by symbol. The calls cost a few nanoseconds each.

    With `profile-marks` (CPU `--profile`), every kernel call is bracketed by
    calls of the runtime's `profile_kernel` (abi.h) with 2 k and 2 k + 1,
    through the runtime argument that `tcc-lower-library-calls` added,
    and the metadata `profile.kernels` lists the names: the runtime can
    time each kernel of a run (tcc-run --trace).
  }];
  let options = [
    Option<"profileMarks", "profile-marks", "bool", /*default=*/"false",
           "Call the runtime's profile_kernel around every kernel">,
  ];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::scf::SCFDialect",
                           "mlir::LLVM::LLVMDialect"];
}

def DedupKernelsPass : Pass<"tcc-dedup-kernels", "mlir::ModuleOp"> {
  let summary = "Keep one function per distinct kernel, named after its contents";
  let description = [{
    After `tcc-outline-kernels`: kernel functions whose bodies are the same
    op for op (the entry points share the forward's kernels; a transformer's
    layers repeat theirs with the same shapes) become one function, which
    every call site calls. Each remaining kernel is named
    `kernel_<hash>` after a hash of its body, so that the name (and the
    object code LLVM makes of it, which the compile cache keeps) does not
    change when other kernels of the model do.

    ```mlir
    func.func private @kernel_0_Relu_1(%a: memref<4xf32>, %b: memref<4xf32>) {...}
    func.func private @kernel_1_Relu_7(%a: memref<4xf32>, %b: memref<4xf32>) {...}  // same body
    // becomes
    func.func private @kernel_3f9a0c2e5b7d1e44(%a: memref<4xf32>, %b: memref<4xf32>) {...}
    ```

    With `report`, prints the number of kernels before and after.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Print the kernel counts to stderr">
  ];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

//===----------------------------------------------------------------------===//
// CUDA: after the memory plan and tcc-lower-library-calls
//===----------------------------------------------------------------------===//

def GpuMapKernelsPass : Pass<"tcc-gpu-map-kernels", "mlir::func::FuncOp"> {
  let summary = "Every buffer op of a planned entry point as one gpu.launch";
  let description = [{
    After the memory plan (and the library calls), on functions with a
    `tcc.plan`: each linalg op (and memref.copy) becomes one `gpu.launch`
    with a static geometry. Thread per output point (256 threads per block,
    reduction loops in registers; an elementwise op whose buffers along the
    innermost loop are contiguous and 16-byte aligned gives each thread 4
    innermost points, read and written with one vector access per buffer), or, for single-output f32 / i32
    reductions with a one-op combiner whose points are few or whose
    reduction is innermost, one block per output point combining through
    warp shuffles and shared memory (no atomics). Other ops with memory
    effects (the loops of a scatter) run in a one-thread launch, in order.
    Every value a kernel uses is recomputed inside it; the arena and state
    arguments are captured as static-size byte buffers, so outlined kernels
    take bare pointers only.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect",
                           "mlir::affine::AffineDialect", "mlir::linalg::LinalgDialect",
                           "mlir::vector::VectorDialect"];
}

def GpuMergeModulesPass : Pass<"tcc-gpu-merge-modules", "mlir::ModuleOp"> {
  let summary = "All outlined kernels in one gpu.module";
  let description = [{
    After `gpu-kernel-outlining` (one gpu.module per launch): moves every
    kernel and the globals they use into one `gpu.module @tcc_kernels`, so
    that an artifact carries one PTX module, loaded once.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def GpuEmulatedKernelsPass : Pass<"tcc-gpu-emulated-kernels", "mlir::ModuleOp"> {
  let summary = "Every GPU kernel also as a host function, for the emulated device";
  let description = [{
    After `tcc-gpu-merge-modules` (tcc --cuda-emulation): each kernel of
    the one gpu.module gets a host twin, a func.func
    `kernel_emulated_NAME(thread, params)` with abi.h's
    tcc_abi_emulated_kernel signature, whose body is the kernel's: its
    memref parameters are the bare pointers PARAMS points at (as
    cuLaunchKernel passes them), its workgroup attributions views of the
    block's shared memory, `gpu.thread_id` / `block_id` / `block_dim` /
    `grid_dim` the fields of THREAD, and `gpu.barrier` and `gpu.shuffle`
    calls of the runtime's barrier and shuffle through THREAD. Globals the
    kernels read are copied beside them. The module attribute
    `tcc.emulated_kernels` maps each kernel to its twin, its shared memory
    bytes and whether it synchronizes; the host pipeline then lowers the
    twins with the host code. The gpu.module is unchanged: the PTX is the
    same with and without twins.
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect", "mlir::arith::ArithDialect",
                           "mlir::scf::SCFDialect"];
}

def GpuLowerLaunchesPass : Pass<"tcc-gpu-lower-launches", "mlir::ModuleOp"> {
  let summary = "gpu.launch_func as calls of the runtime's launch_kernel";
  let description = [{
    After `gpu-module-to-binary` and `tcc-lower-library-calls` (which
    gives planned functions their runtime argument): each `gpu.launch_func`
    becomes an indirect call of `launch_kernel(device_context, index,
    params)` from the runtime structure of abi.h, with the kernel's bare
    pointer arguments as cuLaunchKernel parameters; the kernel table
    (name, grid, block, shared memory, parameter count) goes to the module
    attribute `tcc.kernels`, the PTX of the one gpu.binary to
    `tcc.device_ptx` and its target to `tcc.device` ("cuda:sm_90"). No
    upstream GPU runtime wrapper (`mgpu*`) is referenced. A module without
    kernels (only library calls) still gets `tcc.device` from `device`.
  }];
  let options = [
    Option<"device", "device", "std::string", /*default=*/"\"cuda:sm_90\"",
           "The device when the module has no GPU binary (only library calls)">,
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

//===----------------------------------------------------------------------===//
// LLVM: on the way to the LLVM dialect
//===----------------------------------------------------------------------===//

def ApproximateMathPass : Pass<"tcc-approximate-math"> {
  let summary = "Replace f32 exp, log, tanh, erf by vectorizable polynomials";
  let description = [{
    Rewrites the transcendental math ops that CPU code uses most (exp, expm1,
    log, log1p, log2, tanh, erf) into polynomial approximations, upstream's
    for all but erf, which is tcc's own rational function of x^2 (one
    division, no selects; GELU's): plain arith / math.fma sequences without
    a libm call, so that LLVM's loop
    vectorizer turns an elementwise loop into SIMD code. exp2 is on the list,
    but upstream has no f32 polynomial for it: an f32 exp2 stays a libm call
    (the importer and the gradient rules produce none).
    f16 and bf16 operands are computed in f32 first; f64 keeps libm's
    correctly rounded functions. The approximations are accurate to a few
    ulp in f32 and keep the special values (exp overflow to inf, log of 0
    and of negatives, tanh saturation).
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::math::MathDialect",
    "mlir::vector::VectorDialect"
  ];
}

def ExpandArithPass : Pass<"tcc-expand-arith"> {
  let summary = "Expand the arith ops that LLVM lacks; keep maximumf / minimumf";
  let description = [{
    Upstream's arith-expand does what the CPU pipeline needs (bf16
    conversions as integer arithmetic, ceil / floor division) but also
    rewrites maximumf / minimumf (and maxnumf / minnumf) into compares and
    selects, which LLVM's loop vectorizer does not recognize as a reduction:
    a softmax's row maximum stayed a scalar loop. Kept, they lower to
    llvm.maximum / llvm.minimum (the same IEEE 754-2019 semantics: NaN
    propagates, -0 < +0; exactly associative, so the vectorized reduction's
    result is bit for bit the sequential one), which LLVM vectorizes.
  }];
  let options = [
    Option<"nativeBF16Rounding", "native-bf16-rounding", "bool", "false",
           "f32 -> bf16 truncations as llvm.fptrunc (the CPU's own rounding "
           "instruction, AVX512-BF16's vcvtneps2bf16) instead of integer arithmetic">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::LLVM::LLVMDialect"];
}

#endif // TCC_PASSES_TD
