/*===- abi.h - the contract between a compiled artifact and the runtime ---===*
 *
 * A tcc artifact (model.so) exports exactly one symbol, tcc_artifact_descriptor,
 * which returns a tcc_abi_descriptor: what the artifact computes, the memory
 * it needs, and its entry points. This header is shared by the compiler (which
 * emits these structures as LLVM constants) and the runtime (which reads
 * them). Applications use tcc.h, not this header.
 *
 * Memory model. The runtime owns two regions per session, both allocated once:
 *   - the arena: every intermediate buffer, and the buffers of the graph
 *     inputs and outputs, each at a fixed byte offset chosen by the compiler's
 *     memory plan (liveness, best fit, in-place reuse);
 *   - the state: parameters (and, for training, gradients and optimizer
 *     state), each kind contiguous, at fixed offsets; it persists across runs
 *     and is what checkpoints save.
 * Before a run the runtime copies inputs into their arena slots; after it,
 * outputs are read from theirs. An entry point allocates nothing.
 *
 * Compatibility. The runtime refuses a descriptor whose abi_version it does not
 * know. Fields are only ever appended; struct_size tells how many a producer
 * filled in. Version 2 appended tcc_abi_runtime.collective: generated code
 * calls runtime services without checking the runtime's struct_size, so an
 * artifact that may call one a runtime does not have must carry a version
 * that runtime refuses. Version 3 (metadata only) marks ZeRO-1 artifacts
 * (TCC_METADATA_ZERO), whose train_step leaves the update to the runtime.
 * A runtime accepts every version from 1 to its own.
 *
 *===----------------------------------------------------------------------===*/

#ifndef TCC_ABI_H
#define TCC_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Version of the structures below; bump on any incompatible change. */
#define TCC_ABI_VERSION 3u
/** The oldest version this header's runtime still runs. */
#define TCC_ABI_MIN_VERSION 1u

/** Name of the one symbol an artifact exports. */
#define TCC_ABI_DESCRIPTOR_SYMBOL "tcc_artifact_descriptor"

/** Element types (values are stable: they are stored in artifacts). */
typedef enum tcc_dtype {
  TCC_DTYPE_F32 = 1,
  TCC_DTYPE_F64 = 2,
  TCC_DTYPE_F16 = 3,
  TCC_DTYPE_BF16 = 4,
  TCC_DTYPE_I8 = 5,
  TCC_DTYPE_I16 = 6,
  TCC_DTYPE_I32 = 7,
  TCC_DTYPE_I64 = 8,
  TCC_DTYPE_U8 = 9,
  TCC_DTYPE_U16 = 10,
  TCC_DTYPE_U32 = 11,
  TCC_DTYPE_U64 = 12,
  TCC_DTYPE_BOOL = 13 /* one byte per element, 0 or 1 */
} tcc_dtype;

/** What a tensor is to the model (stable values). */
typedef enum tcc_role {
  TCC_ROLE_INPUT = 1,  /* graph input: arena slot, written by the runtime */
  TCC_ROLE_OUTPUT = 2, /* graph output: arena slot, read by the runtime */
  TCC_ROLE_PARAM = 3,  /* parameter: state slot, persists across runs */
  TCC_ROLE_STATE = 4   /* other persistent state: optimizer buffers (momentum,
                          Adam moments), zero at session creation, updated by
                          the training step; state slot, after the parameters */
} tcc_role;

/** Which region a tensor's offset refers to. */
typedef enum tcc_region {
  TCC_REGION_ARENA = 1,
  TCC_REGION_STATE = 2
} tcc_region;

typedef struct tcc_abi_tensor {
  const char *name;      /* ONNX name; unique per role */
  int32_t role;          /* tcc_role */
  int32_t dtype;         /* tcc_dtype */
  int32_t region;        /* tcc_region */
  int32_t rank;
  const int64_t *shape;  /* rank entries, all static */
  int64_t offset;        /* byte offset in its region, aligned to 64 */
  int64_t size_bytes;    /* product of shape times the element size */
} tcc_abi_tensor;

/** Services the runtime offers to generated code (function pointers, so an
 *  artifact has no undefined symbols of the runtime's). May grow by
 *  appending; struct_size says how much the runtime filled in. */
typedef struct tcc_abi_runtime {
  uint32_t struct_size;
  uint32_t reserved;
  /** Runs body(context, i) for i in [begin, end) on the session's thread pool
   *  and returns when all have finished. */
  void (*parallel_for)(void *pool, int64_t begin, int64_t end,
                       void (*body)(void *context, int64_t i), void *context);
  void *pool;
  /** Runs library call INDEX of the descriptor (a oneDNN primitive the
   *  runtime created once per session) on OPERANDS, the call's buffers in the
   *  order its kind defines. Errors are recorded in the context: the run
   *  fails once the entry returns. */
  void (*library_call)(void *library_context, int32_t index,
                       void *const *operands);
  void *library_context;
  /* Appended for device artifacts (descriptor.device != NULL). */
  /** Launches kernel INDEX of the descriptor's kernel table on the session's
   *  stream with the kernel's recorded geometry; PARAMS is cuLaunchKernel's
   *  kernelParams (one pointer per kernel parameter, pointing at its value).
   *  Asynchronous; errors are recorded in the context like library_call's.
   *  On CUDA, the arena and state pointers an entry receives are device
   *  addresses: generated host code only forms addresses from them. */
  void (*launch_kernel)(void *device_context, int32_t index, void **params);
  void *device_context;
  /* Appended for CPU artifacts compiled with --profile. */
  /** Called by the host schedule right before (INDEX = 2 k) and right after
   *  (INDEX = 2 k + 1) kernel k, k counting the names of the metadata
   *  TCC_METADATA_PROFILE_KERNELS; UNUSED is NULL. For timing only: it must
   *  not touch the arena. */
  void (*profile_kernel)(void *profile_context, int32_t index, void *const *unused);
  void *profile_context;
  /* Appended with ABI version 2, for data-parallel artifacts. */
  /** Runs collective INDEX of the descriptor's collective table on
   *  OPERANDS, the buffers the table's row lists (tcc_collective_kind). A
   *  runtime without a communicator, or with one of a single rank, makes
   *  every collective a no-op. Errors are recorded like library_call's. */
  void (*collective)(void *collective_context, int32_t index, void *const *operands);
  void *collective_context;
} tcc_abi_runtime;

/** Kinds of library calls (stable values). Every operand is a dense,
 *  row-major buffer of the call's dtype. PARAMS per kind:
 *
 *  MATMUL: {batch, M, N, K, trans_a, trans_b, accumulate, epilogue};
 *    operands {A, B, C} then, per epilogue bit, the bias and the residual:
 *      C[b] (+)= op(A[b]) op(B[b])                          (epilogue 0)
 *      C[b] = act(op(A[b]) op(B[b]) + bias + D[b])          (epilogue != 0)
 *    where A[b] is M x K (K x M stored when trans_a), B[b] is K x N (N x K
 *    when trans_b) and C[b] is M x N; batch 1 means plain 2-D operands.
 *    EPILOGUE is a set of tcc_matmul_epilogue bits: BIAS adds a vector of
 *    N elements to every row (bias[j] to C[b][i][j]; the same vector for
 *    every b), RESIDUAL adds D, a buffer shaped like C, and RELU then
 *    replaces each value x by max(x, 0). Each sum is rounded to the dtype's
 *    precision in unspecified association (oneDNN adds (AB + bias) + D,
 *    cuBLASLt AB + D + bias). The extra operands follow C in that order:
 *    {A, B, C, bias} for BIAS, {A, B, C, D} for RESIDUAL, {A, B, C, bias, D}
 *    for both. An epilogue requires accumulate = 0; D and bias may not
 *    overlap C. The epilogue parameter was appended: a MATMUL with 7
 *    parameters (older artifacts) has epilogue 0.
 *    dtype F32, or BF16 / F16 (every operand of that type, products summed
 *    in fp32). Two parameters may follow (10 in
 *    all): C_DTYPE, the tcc_dtype of C, D and the bias when not 0 (F32 with BF16 /
 *    F16 operands: the fp32 sums are stored unrounded), and MATH, a
 *    tcc_library_math. Two more may follow those (12 in all): HEADS, a
 *    divisor H of batch, and INTERLEAVED, a set of tcc_matmul_interleaved
 *    bits: the stored matrices (M x K or K x M for A, and so on) of each
 *    operand named there interleave their rows across H consecutive batch
 *    elements, as attention heads sit in a [batch/H, rows, H, columns]
 *    buffer: with b = g H + h, row r of matrix b starts at element
 *    ((g rows + r) H + h) columns. Other operands stay dense, and HEADS 1
 *    with INTERLEAVED 0 means the same as 10 parameters. No epilogue.
 *  CONV2D: {N, C, H, W, F, KH, KW, OH, OW, stride_h, stride_w, dilation_h,
 *    dilation_w, pad_top, pad_left, pad_bottom, pad_right, accumulate};
 *    operands {X [N,C,H,W], W [F,C,KH,KW], Y [N,F,OH,OW]}:
 *    Y (+)= convolution of X, zero-padded as given, with W; no bias. F32.
 *    A 19th parameter, groups G (appended; 18 parameters mean G = 1), makes
 *    it a grouped convolution: W is [F, C/G, KH, KW] and output channel f
 *    reads the input channels of its group f / (F/G) (depthwise: G = C = F).
 *    A 20th parameter (after G, which is then present even when 1) is the
 *    MATH mode, a tcc_library_math; the gradients take it too.
 *    dtype F32, or BF16 / F16: X, W and dY (the inputs of each kind) of that
 *    type, products summed in fp32. A 21st parameter (after G and MATH) is
 *    OUT_DTYPE, the tcc_dtype of the output (Y, dX or dW) when not 0: F32
 *    with BF16 / F16 inputs stores the fp32 sums unrounded; without it (or
 *    0) the output has the call's dtype, rounded once. The gradients take it
 *    too.
 *  CONV2D_BACKWARD_DATA: the parameters of the CONV2D whose input gradient
 *    it is (18, or 19 with groups); operands {dY [N,F,OH,OW], W [F,C/G,KH,KW],
 *    dX [N,C,H,W]}: dX (+)= the gradient of sum(CONV2D(X, W) * dY) with
 *    respect to X, i.e. dX[n,c,ih,iw] = sum over f of c's group, kh, kw of
 *    dY[n,f,oh,ow] W[f,c',kh,kw] where ih = oh*stride_h - pad_top +
 *    kh*dilation_h (likewise for w) and c' = c mod C/G. No multiplication by
 *    the zeros a strided transposed convolution would insert.
 *  CONV2D_BACKWARD_WEIGHTS: the same parameters; operands {X [N,C,H,W],
 *    dY [N,F,OH,OW], dW [F,C/G,KH,KW]}: dW (+)= the gradient of
 *    sum(CONV2D(X, W) * dY) with respect to W (a sum over N, OH, OW).
 *    For both, pad_bottom / pad_right are the ones that make OH / OW follow
 *    exactly (rows the forward windows never read are not padding).
 *  With accumulate = 0 the result overwrites the output; with 1 it is added
 *  to what the output holds (in the output's dtype: a 16-bit output is
 *  rounded once, after the addition). A runtime refuses, when a session is
 *  created, a call whose dtype its library cannot run (the CUDA runtime:
 *  16-bit convolutions). */
typedef enum tcc_library_call_kind {
  TCC_LIBRARY_CALL_MATMUL = 1,
  TCC_LIBRARY_CALL_CONV2D = 2,
  /* 3 and 4 were never assigned (collectives have a table of their own). */
  TCC_LIBRARY_CALL_CONV2D_BACKWARD_DATA = 5,
  TCC_LIBRARY_CALL_CONV2D_BACKWARD_WEIGHTS = 6
} tcc_library_call_kind;

/** How a library call may sum its products (stable values; the MATH
 *  parameter of MATMUL and the convolutions). */
typedef enum tcc_library_math {
  TCC_LIBRARY_MATH_EXACT = 0, /* fp32 arithmetic (the default) */
  TCC_LIBRARY_MATH_TF32 = 1   /* F32 operands rounded to TF32 (10-bit mantissa) on
                                 tensor cores, fp32 sums (tcc --precision=tf32); devices
                                 only: a CPU runtime refuses it */
} tcc_library_math;

/** Kinds of collectives (stable values): the communication of a
 *  data-parallel training step between the ranks that run it, each on its
 *  own batch. A row of the descriptor's collective table has the layout of
 *  a library call (tcc_abi_collective); every operand is a dense buffer of
 *  the row's dtype, and PARAMS per kind are:
 *
 *  ALL_REDUCE_START: {bucket, elements of operand 0, ..., of operand n-1};
 *    starts replacing every operand, in place, by its mean over the ranks
 *    (the sum divided by the world size). Non-blocking: the operands must
 *    not be read or written until the WAIT of this collective returns.
 *    BUCKET numbers the step's gradient buckets in the order the backward
 *    completes them (for messages). dtype F32 on the CPU; F32, F16 or BF16 on
 *    a device.
 *  WAIT: {index of an ALL_REDUCE_START in this table}; the same operands.
 *    Returns once that collective's results are in its operands (on a
 *    device: once work queued after it is ordered after it). Fails (records
 *    an error) when it does not complete within the communicator's timeout.
 *
 *  The world size is the runtime's: one artifact runs on any number of
 *  ranks, a single process included. */
typedef enum tcc_collective_kind {
  TCC_COLLECTIVE_ALL_REDUCE_START = 1,
  TCC_COLLECTIVE_WAIT = 2
} tcc_collective_kind;

/** Bits of a MATMUL's epilogue parameter (stable values): what is applied to
 *  the product before it is stored, in the order bias, residual, relu. */
typedef enum tcc_matmul_epilogue {
  TCC_MATMUL_EPILOGUE_BIAS = 1,     /* + bias[N], broadcast over the rows */
  TCC_MATMUL_EPILOGUE_RESIDUAL = 2, /* + D, shaped like C */
  TCC_MATMUL_EPILOGUE_RELU = 4      /* max(x, 0) of the sum, last */
} tcc_matmul_epilogue;

/** Bits of a MATMUL's INTERLEAVED parameter (stable values): the operands
 *  whose matrices interleave their rows across HEADS batch elements. */
typedef enum tcc_matmul_interleaved {
  TCC_MATMUL_INTERLEAVED_A = 1,
  TCC_MATMUL_INTERLEAVED_B = 2,
  TCC_MATMUL_INTERLEAVED_C = 4
} tcc_matmul_interleaved;

/** One kernel launch site of a device artifact (every shape is static, so
 *  each launch has one fixed geometry). */
typedef struct tcc_abi_kernel {
  const char *name;      /* symbol in the device module (PTX .entry / cubin) */
  int32_t grid[3];       /* blocks in x, y, z */
  int32_t block[3];      /* threads per block in x, y, z */
  int32_t shared_bytes;  /* dynamic shared memory */
  int32_t num_params;    /* entries of launch_kernel's PARAMS */
} tcc_abi_kernel;

/** The shuffle modes of tcc_abi_emulated_thread.shuffle (PTX's shfl modes:
 *  bfly, up, down, idx). */
typedef enum tcc_emulated_shuffle_mode {
  TCC_SHUFFLE_XOR = 0,
  TCC_SHUFFLE_UP = 1,
  TCC_SHUFFLE_DOWN = 2,
  TCC_SHUFFLE_IDX = 3
} tcc_emulated_shuffle_mode;

/** The emulated CUDA device (tcc --cuda-emulation, TCC_CUDA_DEVICE=emulated;
 *  docs/cuda-codegen.md): what one GPU thread of a launch sees, as the host
 *  twin of a kernel reads it. The runtime runs the threads of a block as
 *  fibers on one host thread; BARRIER and SHUFFLE switch between them. */
typedef struct tcc_abi_emulated_thread {
  int32_t thread[3];     /* threadIdx.x, .y, .z */
  int32_t block[3];      /* blockIdx */
  int32_t block_dim[3];  /* blockDim */
  int32_t grid_dim[3];   /* gridDim */
  /** The block's workgroup memory: the kernel's workgroup attributions in
   *  order, each at an offset aligned to 16 bytes
   *  (tcc_abi_emulated_kernel.shared_bytes in all); its contents are
   *  undefined at the block's start. */
  void *shared;
  void *context;         /* the runtime's, passed to the calls below */
  /** bar.sync 0: returns once every thread of the block has called it. */
  void (*barrier)(void *context);
  /** shfl.sync with a full member mask, as gpu.shuffle lowers to NVVM:
   *  MODE a tcc_emulated_shuffle_mode (0 xor, 1 up, 2 down, 3 idx), WIDTH the
   *  lanes of a segment (1 to 32), VALUE the bit pattern of a value of up
   *  to 64 bits (zero-extended). Returns the source lane's VALUE, or the
   *  caller's own when the source lane is outside the segment, and stores
   *  PTX's predicate (1: the source lane was in range) in *VALID. Every
   *  lane of the warp calls it. */
  int64_t (*shuffle)(void *context, int64_t value, int32_t offset, int32_t width, int32_t mode,
                     int32_t *valid);
} tcc_abi_emulated_thread;

/** Kernel k of the kernel table compiled for the host. */
typedef struct tcc_abi_emulated_kernel {
  /** Runs THREAD's part of one launch; PARAMS as launch_kernel's. */
  void (*fn)(const tcc_abi_emulated_thread *thread, void **params);
  int32_t shared_bytes;  /* of the block's workgroup memory (static) */
  int32_t synchronizes;  /* 1: it calls barrier or shuffle (its threads need
                            fibers); 0: they may run one after another */
} tcc_abi_emulated_kernel;

typedef struct tcc_abi_library_call {
  int32_t kind;          /* tcc_library_call_kind */
  int32_t dtype;         /* tcc_dtype of every operand (see the kinds) */
  int32_t num_params;
  int32_t num_operands;
  const int64_t *params;
} tcc_abi_library_call;

/** A row of the collective table: kind is a tcc_collective_kind. */
typedef tcc_abi_library_call tcc_abi_collective;

/** Names of the entry points a compiler emits. */
#define TCC_ENTRY_INFER "infer"
#define TCC_ENTRY_TRAIN_STEP "train_step"
#define TCC_ENTRY_EVAL_STEP "eval_step"
#define TCC_ENTRY_ACCUMULATE_GRAD "accumulate_grad"
/** With --precision=bf16|fp16: computes the state that train_step keeps
 *  derived from the parameters (each parameter's 16-bit copy, which the
 *  forward reads and the optimizer's update rewrites) from the parameters.
 *  Its tensors are parameters and state only, and it needs no arena; the
 *  runtime runs it before the first entry point run after the parameters
 *  changed (session creation, loading parameters or a checkpoint,
 *  set_param, a state broadcast). */
#define TCC_ENTRY_INIT_STATE "init_state"

/** Scalar inputs of the training entry points, which the runtime (not the
 *  data) writes before each call: the learning rate (f32), the optimizer
 *  step counting from 1 (f32; Adam's bias correction), the dropout
 *  generator's counter (i64) and, in accumulate_grad, the micro-batch index
 *  (f32). VALID (i64) is eval_step's count of real samples in a partial
 *  batch: the runtime pads the batch to the compiled one and writes it
 *  itself; the loss counts only the first VALID samples. */
#define TCC_INPUT_LR "lr"
#define TCC_INPUT_STEP "step"
#define TCC_INPUT_RNG "rng"
#define TCC_INPUT_MICRO "micro"
#define TCC_INPUT_VALID "valid"

/** The optimizer's hyperparameters, 0-d f32 inputs of train_step beside the
 *  learning rate, so that sweeps and schedules never recompile: the weight
 *  decay (always), SGD's momentum (when compiled with a momentum buffer),
 *  Adam's beta1, beta2 and eps, and the clipping norm (when compiled with
 *  --grad-clip). Each one's compile-time value is the metadata
 *  TCC_METADATA_DEFAULT_PREFIX + its name, which a caller that does not
 *  choose writes. */
#define TCC_INPUT_WEIGHT_DECAY "weight_decay"
#define TCC_INPUT_MOMENTUM "momentum"
#define TCC_INPUT_BETA1 "beta1"
#define TCC_INPUT_BETA2 "beta2"
#define TCC_INPUT_EPS "eps"
#define TCC_INPUT_GRAD_CLIP "grad_clip"
/** Adam's 1 - beta1 and 1 - beta2, which the runtime writes as the f32 of
 *  the difference computed in double (PyTorch's coefficients; 1 - f32(beta)
 *  in f32 differs in the last bit); no default of their own. */
#define TCC_INPUT_ONE_MINUS_BETA1 "one_minus_beta1"
#define TCC_INPUT_ONE_MINUS_BETA2 "one_minus_beta2"
/** With fp16 dynamic loss scaling (tcc --precision=fp16): the initial loss
 *  scale (f32), written before each train_step; the step uses it while its
 *  scale state is still 0 (a fresh session). */
#define TCC_INPUT_LOSS_SCALE_INIT "loss_scale_init"
/** With tcc --skip-nonfinite: 1 (f32) makes a train_step whose loss or
 *  gradient norm is infinite or NaN keep every parameter, optimizer buffer
 *  and running statistic as it was and output SKIPPED = 1; 0 (the default,
 *  metadata default.skip_nonfinite) applies every update. */
#define TCC_INPUT_SKIP_NONFINITE "skip_nonfinite"

/** Scalar outputs: the (mean) loss of the step, and in train_step the global
 *  gradient norm before clipping. */
#define TCC_OUTPUT_LOSS "loss"
#define TCC_OUTPUT_GRAD_NORM "grad_norm"
/** With fp16 dynamic loss scaling: the loss scale this step used (f32) and
 *  whether it skipped its update because a gradient or the loss was not
 *  finite (f32, 1 or 0). SKIPPED is also an output of steps compiled with
 *  --skip-nonfinite. */
#define TCC_OUTPUT_LOSS_SCALE "loss_scale"
#define TCC_OUTPUT_SKIPPED "skipped"
/** The loss scaler's state buffers (role state, in checkpoints): the scale
 *  (0 until the first step) and the count of finite steps since the last
 *  change, as PyTorch's GradScaler keeps them. */
#define TCC_STATE_LOSS_SCALE "grad_scaler.scale"
#define TCC_STATE_GROWTH_TRACKER "grad_scaler.growth_tracker"

/** Keys of the descriptor's metadata:
 *  LOSS the loss ("mse", "cross_entropy", "none"); OPTIMIZER the update
 *  compiled into train_step ("sgd", "adam", "adamw"); LABELS the name of the
 *  labels input; IGNORE_INDEX (cross_entropy) the label that does not count;
 *  GRAD_ACCUM K: call accumulate_grad with micro = 0 .. K-2, then train_step;
 *  INIT_PREFIX + parameter name: how its initial values are distributed
 *  ("constant V", "uniform LO HI" or "normal MEAN STD"), for generating
 *  weights on the machine instead of shipping them; INIT_EXACT for a
 *  buffer of the model whose values are not all equal: generating it would
 *  change the model, so its values are those of the parameters file
 *  written beside the artifact.
 *  NOT_TRAINED_PREFIX + parameter name: why train_step leaves that parameter
 *  as it is ("running statistics", updated by the step's batch norms but
 *  not by the optimizer; "buffer", one of the model's buffers (PyTorch's
 *  register_buffer), which no entry changes; "frozen", by --freeze).
 *  BATCH the compiled batch B, present when infer and eval_step take partial
 *  batches; then BATCH_ROWS_PREFIX + tensor name = K for every input and
 *  output whose leading dimension is K * B (K rows per sample): a run of
 *  n <= B samples gets n * K rows of it, the rest padded by the runtime.
 *  MEMORY_BUDGET the
 *  budget the plan was compiled to fit (bytes), AUTO_BATCH the batch that
 *  `tcc --batch=auto` chose for it. */
#define TCC_METADATA_LOSS "loss"
#define TCC_METADATA_OPTIMIZER "optimizer"
#define TCC_METADATA_LABELS "labels"
#define TCC_METADATA_IGNORE_INDEX "ignore_index"
#define TCC_METADATA_GRAD_ACCUM "grad_accum"
#define TCC_METADATA_INIT_PREFIX "init."
#define TCC_METADATA_INIT_EXACT "exact"
#define TCC_METADATA_NOT_TRAINED_PREFIX "not_trained."
#define TCC_METADATA_BATCH "batch"
#define TCC_METADATA_BATCH_ROWS_PREFIX "batch_rows."
/** tcc --length-buckets=DIM=V1,...,Vn: LENGTH_DIM the dimension's name,
 *  LENGTH_BUCKETS the values, ascending, comma-separated ("32,64,128"); the
 *  ordinary entries are compiled at Vn, and train_step (and accumulate_grad)
 *  again at each smaller V as the entries NAME.DIM_V (tcc_length_entry_name
 *  in the trainer: "train_step.T_32"). LENGTH_AXIS_PREFIX + input name = the
 *  axis of that input (counting the batch axis) that is V in the variant
 *  and Vn in train_step; such an input is named NAME.DIM_V in the variant,
 *  with that axis V, and holds the first V positions of each sample. Inputs
 *  without the key are the same tensor in every variant. */
#define TCC_METADATA_LENGTH_DIM "length_dim"
#define TCC_METADATA_LENGTH_BUCKETS "length_buckets"
#define TCC_METADATA_LENGTH_AXIS_PREFIX "length_axis."
/** DEFAULT_PREFIX + a hyperparameter input's name: its compile-time value
 *  (decimal, "%.17g"), e.g. "default.weight_decay" = "0.01". */
#define TCC_METADATA_DEFAULT_PREFIX "default."
/** --profile CPU artifacts: the names of the kernels the host schedule marks
 *  (tcc_abi_runtime.profile_kernel), in index order, separated by ';'. */
#define TCC_METADATA_PROFILE_KERNELS "profile.kernels"
#define TCC_METADATA_MEMORY_BUDGET "memory_budget"
/** tcc --data-parallel: the number of gradient buckets train_step averages
 *  over the ranks (its collectives, tcc_abi_descriptor.collectives). */
#define TCC_METADATA_DATA_PARALLEL "data_parallel"
#define TCC_METADATA_AUTO_BATCH "auto_batch"
/** tcc --data-parallel --zero=1 (ZeRO stage 1, the optimizer state sharded
 *  over the ranks): ZERO = "C,S", the trained f32 parameters viewed as one
 *  flat vector of N elements, zero-padded to C chunks of S elements;
 *  ZERO_PARAMS their names in the flat order, separated by ';';
 *  ZERO_STATE the suffixes of the optimizer state tensors a checkpoint
 *  holds per parameter (".momentum_buffer", ".exp_avg;.exp_avg_sq"; empty
 *  for plain SGD). Such an artifact's train_step writes the flat local
 *  gradient (mean over its micro-batches) into the state tensor
 *  TCC_STATE_ZERO_GRADS (C x S) and updates no parameter; the runtime
 *  reduce-scatters it, runs TCC_ENTRY_ZERO_UPDATE once per chunk the rank
 *  owns with runtime-held optimizer state, and all-gathers the parameters
 *  (runtime/dist/zero.h). STATE_FINGERPRINT is the fingerprint of the
 *  checkpoints the artifact reads and writes when it is not its own (a
 *  --zero=1 artifact's: that of the same compile without --zero). */
#define TCC_METADATA_ZERO "zero"
#define TCC_METADATA_ZERO_PARAMS "zero.params"
#define TCC_METADATA_ZERO_STATE "zero.state"
#define TCC_METADATA_STATE_FINGERPRINT "state_fingerprint"
/** Convolution filters the runtime may keep in its library's layout
 *  (tcc-filter-layouts, docs/cpu-codegen.md): for each set K = 0, 1, ...,
 *  FILTER_LAYOUT_PREFIX + K + ".calls" = the rows of the library-call
 *  table (comma-separated) whose filter operand (the output of a
 *  CONV2D_BACKWARD_WEIGHTS) is one of the set's buffers, and
 *  FILTER_LAYOUT_PREFIX + K + ".tensors" = the set's state-region tensors
 *  (parameters, gradient accumulators, optimizer state, 16-bit copies),
 *  separated by ';'. Every other access of those buffers in the entries
 *  is elementwise, or a sum over all elements, so a runtime may store all
 *  of them permuted into one layout of the calls' filter shape without
 *  padding (converting where tensors enter and leave the session: files,
 *  get / set), or ignore the keys: plain is always correct. */
#define TCC_METADATA_FILTER_LAYOUT_PREFIX "filter_layout."
/** The ZeRO-1 entry point: the optimizer update of one chunk of S flat
 *  elements. Inputs ZERO_PARAM (the chunk's parameters), ZERO_GRAD (its
 *  gradient, averaged over the ranks), "zero" + each ZERO_STATE suffix (its
 *  optimizer state, e.g. "zero.exp_avg"), all f32[S], and train_step's lr,
 *  step and hyperparameter inputs; outputs ZERO_PARAM and each state
 *  tensor's new value under the input's name, and ZERO_GRAD_SQ (f32[], the
 *  sum of the squared gradient: the runtime's grad_norm of the step). */
#define TCC_ENTRY_ZERO_UPDATE "zero_update"
#define TCC_ZERO_PARAM "zero.param"
#define TCC_ZERO_GRAD "zero.grad"
#define TCC_ZERO_GRAD_SQ "zero.grad_sq"
#define TCC_STATE_ZERO_GRADS "zero.grads"

/** A key / value pair of the descriptor's metadata: how a runtime drives
 *  the entry points (the TCC_METADATA_ keys above), e.g. "loss" =
 *  "cross_entropy", "labels" = "y", "ignore_index" = "-100", "grad_accum" =
 *  "4". */
typedef struct tcc_abi_metadata {
  const char *key;
  const char *value;
} tcc_abi_metadata;

/** An entry point: computes on the arena and state of one session.
 *  Returns 0 on success. */
typedef int32_t (*tcc_abi_entry_fn)(uint8_t *arena, uint8_t *state,
                                    const tcc_abi_runtime *runtime);

typedef struct tcc_abi_entry {
  const char *name;      /* "infer", later "train_step", "eval_step" */
  tcc_abi_entry_fn fn;
  int32_t num_tensors;   /* the tensors this entry reads or writes */
  const int32_t *tensor_indices; /* indices into tcc_abi_descriptor.tensors */
} tcc_abi_entry;

/** The entry points compiled again for another CPU (tcc's code variants,
 *  docs/precision.md): the same plan, tensors, library calls and metadata,
 *  other instructions. A runtime runs the first variant whose features the
 *  CPU has, else the entries' own functions (descriptor.cpu_features). */
typedef struct tcc_abi_cpu_variant {
  const char *name;         /* "x86-64-v4" */
  const char *cpu_features; /* what its code needs, as descriptor.cpu_features */
  const tcc_abi_entry_fn *fns; /* num_entries functions: fns[i] computes what
                                  entries[i].fn does */
} tcc_abi_cpu_variant;

typedef struct tcc_abi_descriptor {
  uint32_t abi_version;  /* TCC_ABI_VERSION */
  uint32_t struct_size;  /* sizeof(tcc_abi_descriptor) as compiled */
  const char *fingerprint; /* hex digest of the model and compile options */
  const char *producer;  /* "tcc 0.1.0 (LLVM 22.1.8)" */
  const char *target;    /* "x86_64" */
  const char *cpu_features; /* comma-separated features the code needs,
                               e.g. "avx2,fma,bmi2" (checked at load) */
  int64_t arena_size;    /* bytes */
  int64_t state_size;    /* bytes */
  int64_t alignment;     /* of both regions, in bytes (64) */
  int32_t num_tensors;
  int32_t num_entries;
  const tcc_abi_tensor *tensors;
  const tcc_abi_entry *entries;
  /* Appended fields: present when struct_size covers them. */
  int32_t num_library_calls;
  const tcc_abi_library_call *library_calls;
  int32_t num_metadata;
  const tcc_abi_metadata *metadata;
  /* Device artifacts (struct_size covers these; device NULL = CPU only). */
  const char *device;     /* "cuda:sm_90": the arena and state live on this
                             device; inputs, outputs and parameters are copied */
  int32_t num_kernels;
  const tcc_abi_kernel *kernels;
  const char *ptx;        /* NUL-terminated PTX of every kernel (one module) */
  const uint8_t *cubin;   /* the same module assembled by ptxas for the
                             device's architecture, or NULL (the driver then
                             compiles the PTX) */
  int64_t cubin_size;
  int64_t device_scratch_size; /* bytes of workspace for the library calls
                                  (cuBLASLt, cuDNN), at the arena's tail:
                                  the largest of the calls' planned bounds;
                                  0 = the runtime's default (32 MiB) */
  /* Appended with ABI version 2: the collectives of a data-parallel step
     (tcc --data-parallel), which entries run through
     tcc_abi_runtime.collective by index. */
  int32_t num_collectives;
  const tcc_abi_collective *collectives;
  /* Appended: device artifacts compiled with --cuda-emulation, else NULL.
     num_kernels entries, entry k the host twin of kernels[k], compiled from
     the same gpu.module before NVVM: the runtime's emulated CUDA device runs
     these instead of the PTX (TCC_CUDA_DEVICE=emulated). */
  const tcc_abi_emulated_kernel *emulated_kernels;
  /* Appended: CPU artifacts of 16-bit training steps, the entry points
     compiled for CPUs that can run faster code than cpu_features allows,
     best first; 0 and NULL for none. A runtime that does not know the
     field runs the entries' own functions. */
  int32_t num_cpu_variants;
  const tcc_abi_cpu_variant *cpu_variants;
} tcc_abi_descriptor;

/** The signature of the exported symbol. */
typedef const tcc_abi_descriptor *(*tcc_abi_descriptor_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* TCC_ABI_H */
