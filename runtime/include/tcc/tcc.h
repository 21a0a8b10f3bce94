/*===- tcc.h - the public C API of the tcc runtime ------------------------===*
 *
 * libtcc_runtime loads a compiled tcc artifact (model.so), validates it, and
 * runs its entry points on memory it allocates once. This header is the whole
 * public interface: C at the boundary (callable from C, C++, Python ctypes),
 * C++ inside, no exception ever crosses it.
 *
 * A typical inference:
 *
 *   tcc_artifact_t artifact;
 *   if (tcc_artifact_load("model.so", &artifact) != TCC_OK) {
 *     fprintf(stderr, "%s\n", tcc_last_error());
 *     return 1;
 *   }
 *   tcc_session_t session;
 *   tcc_session_create(artifact, NULL, &session);  // loads model.safetensors
 *   int64_t shape[] = {2, 3};
 *   tcc_session_set_input(session, "x", TCC_DTYPE_F32, 2, shape, x, sizeof x);
 *   tcc_session_run(session, "infer");
 *   tcc_session_copy_output(session, "y", y, sizeof y);
 *   tcc_session_destroy(session);
 *   tcc_artifact_destroy(artifact);
 *
 * (Every call above returns a tcc_status that real code checks.)
 *
 * Conventions, which hold for every function below unless it says otherwise:
 *
 *  - Errors. A function returns TCC_OK (0) or an error code, and sets the
 *    calling thread's last-error message: a sentence naming the file, tensor
 *    or entry at fault on failure, "" on success. tcc_last_error() reads it.
 *    A failing call has no effect: its out_ parameters and the objects it was
 *    given are left as they were, unless the function says otherwise.
 *  - Arguments. Inputs come first, outputs last with an out_ prefix. Passing
 *    NULL where a handle, string or out_ pointer is required returns
 *    TCC_ERROR_INVALID_ARGUMENT. Strings are NUL-terminated UTF-8.
 *  - Ownership. Handles returned through out_ parameters are owned by the
 *    caller and released with the matching destroy function. Pointers the
 *    runtime returns (names, shapes, output data) are owned by the runtime and
 *    stay valid for the lifetime stated on the function; never free them.
 *    Pointers the caller passes in are only read during the call and never
 *    kept.
 *  - Threads. Functions without a handle are safe from any thread. An
 *    artifact is immutable once loaded: its query functions may be called
 *    from any number of threads at once. A session is used by one thread at a
 *    time (calls may come from different threads one after another); the
 *    runtime detects two overlapping calls on one session and fails the
 *    second with TCC_ERROR_INVALID_STATE, but that check is a diagnostic, not
 *    a lock. Different sessions, even of the same artifact, run concurrently.
 *
 * Threading inside a run. All parallel work of a run, generated loops and
 * library calls (oneDNN, BLAS) alike, runs on one pool: LLVM's OpenMP runtime
 * (libomp), which also serves the GNU OpenMP entry points that oneDNN uses.
 * A run uses the calling thread plus at most num_threads - 1 of the pool's
 * workers for each parallel loop; small loops run on the caller alone. The
 * thread count is OpenMP's setting of the calling thread for the duration of
 * tcc_session_create and of each tcc_session_run; the thread's own setting
 * is restored when they return.
 * Sessions run concurrently from different application threads each start
 * their own team of that size, so give each session num_threads = CPUs /
 * concurrent runs to avoid oversubscribing the cores. After a loop the
 * workers spin briefly before they sleep (OpenMP's KMP_BLOCKTIME, 200 ms by
 * default; set KMP_BLOCKTIME=0 when other work shares the cores). A process
 * that loaded GNU's libgomp into the global scope before the runtime needed
 * oneDNN (torch does) keeps that pool for the code that loaded it; the
 * runtime binds the libraries it loads to libomp all the same, so a run's
 * results and speed do not change, and says so once on stderr
 * (docs/sdk.md).
 *
 *===----------------------------------------------------------------------===*/

#ifndef TCC_TCC_H
#define TCC_TCC_H

#include <stddef.h>
#include <stdint.h>

#include "abi.h" /* tcc_dtype, tcc_role */

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TCC_API __attribute__((visibility("default")))
#else
#define TCC_API
#endif

/*===--- Status codes and errors -----------------------------------------===*/

/** What every fallible function returns. Values are stable. */
typedef enum tcc_status {
  TCC_OK = 0,
  /** A NULL or malformed argument: a NULL handle or pointer, a negative rank,
   *  a size that does not match the data, an option out of range. */
  TCC_ERROR_INVALID_ARGUMENT = 1,
  /** A file could not be opened, read or written (the message has errno's
   *  reason). */
  TCC_ERROR_IO = 2,
  /** The library is not a usable tcc artifact: not loadable, no descriptor
   *  symbol, an ABI version this runtime does not know, or a descriptor that
   *  fails validation (offsets outside their region, bad alignment, ...). */
  TCC_ERROR_ABI = 3,
  /** No tensor or entry point of that name (and role). */
  TCC_ERROR_NOT_FOUND = 4,
  /** A tensor's rank or dimensions differ from what the artifact declares. */
  TCC_ERROR_SHAPE = 5,
  /** A tensor's element type differs from what the artifact declares. */
  TCC_ERROR_DTYPE = 6,
  /** An entry point returned a nonzero code. */
  TCC_ERROR_RUNTIME = 7,
  /** The artifact needs something this machine or runtime lacks, e.g. a CPU
   *  feature (the message names it). */
  TCC_ERROR_UNSUPPORTED = 8,
  /** The call is not valid in the session's current state: a run whose
   *  inputs were not all set since the previous run, reading an output that
   *  no successful run has produced (or that a later input overwrote), or two
   *  threads using one session at once. */
  TCC_ERROR_INVALID_STATE = 9,
  /** Allocation of the arena, the state or a thread failed. */
  TCC_ERROR_OUT_OF_MEMORY = 10,
  /** A data file is malformed: a corrupt safetensors header, offsets out of
   *  range, ... (the message names the file and tensor). */
  TCC_ERROR_FORMAT = 11,
  /** A bug in the runtime; please report the message. */
  TCC_ERROR_INTERNAL = 12,
  /** A training run stopped before its last step because it was asked to:
   *  a signal (tcc_trainer_options.handle_signals) or
   *  tcc_trainer_request_stop. Its checkpoint was written when it has a
   *  checkpoint folder (the message says where). */
  TCC_ERROR_INTERRUPTED = 13,
  /** The ranks of a data-parallel job were started with different artifacts
   *  or with options that must agree (tcc_trainer_create compares them; the
   *  message names the first difference). Every rank fails alike, so none
   *  needs to end the job with tcc_communicator_abort. */
  TCC_ERROR_RANKS_DIFFER = 14
} tcc_status;

/** The calling thread's last-error message: "" after a successful call, a
 *  sentence after a failed one. Never NULL. The pointer stays valid until the
 *  calling thread's next tcc_* call; copy the text to keep it. */
TCC_API const char *tcc_last_error(void);

/** A static name for a status code ("TCC_ERROR_SHAPE"); "unknown status" for
 *  values outside the enum. Never NULL; never changes the last error. */
TCC_API const char *tcc_status_string(tcc_status status);

/** The runtime's version ("0.1.0"), a static string. The artifact ABI
 *  version it accepts is TCC_ABI_VERSION of the abi.h it was built with. */
TCC_API const char *tcc_runtime_version(void);

/*===--- Artifacts ------------------------------------------------------------===*/

/** A loaded artifact: the compiled library and its validated descriptor. */
typedef struct tcc_artifact *tcc_artifact_t;

/** Loads the artifact at PATH (dlopen with RTLD_NOW | RTLD_LOCAL, so two
 *  artifacts never see each other's symbols) and validates its descriptor:
 *  the ABI version, the structure size, every tensor (name, role, dtype,
 *  region, rank, shape, byte size, 64-byte aligned offset inside its region,
 *  unique names per role), every entry point (name, function, tensor
 *  indices), and that this CPU has every feature the code was compiled for.
 *
 *  On success *out_artifact is a new handle, released with
 *  tcc_artifact_destroy. Errors: TCC_ERROR_IO (no such file, unreadable),
 *  TCC_ERROR_ABI (not a shared library, not a tcc artifact, another ABI
 *  version, invalid descriptor), TCC_ERROR_UNSUPPORTED (a CPU feature is
 *  missing; the message names it). Loading runs the library's initializers,
 *  so load only artifacts you trust. Loading one path twice yields two
 *  handles that share the mapped library. */
TCC_API tcc_status tcc_artifact_load(const char *path, tcc_artifact_t *out_artifact);

/** Releases the handle. Sessions created from it stay valid: the library is
 *  unmapped when the last of them is destroyed. Pointers obtained from this
 *  handle (tensor infos, names) become invalid. NULL is ignored. Cannot
 *  fail; does not change the last error. */
TCC_API void tcc_artifact_destroy(tcc_artifact_t artifact);

/** What the descriptor says about the artifact as a whole. String pointers
 *  are owned by the artifact and valid until tcc_artifact_destroy; they are
 *  never NULL ("" when the descriptor had none). */
typedef struct tcc_artifact_info {
  const char *path; /* as given to tcc_artifact_load */
  uint32_t abi_version;
  const char *fingerprint;  /* hex digest of the model and compile options */
  const char *producer;     /* "tcc 0.1.0 (LLVM 22.1.8)" */
  const char *target;       /* "x86_64" */
  const char *cpu_features; /* "avx2,fma,..." as checked at load */
  int64_t arena_size;       /* bytes a session allocates for buffers */
  int64_t state_size;       /* bytes a session allocates for parameters */
  int32_t num_tensors;
  int32_t num_entries;
} tcc_artifact_info;

/** Fills *out_info. Errors: TCC_ERROR_INVALID_ARGUMENT. */
TCC_API tcc_status tcc_artifact_get_info(tcc_artifact_t artifact, tcc_artifact_info *out_info);

/** One tensor of the descriptor. Pointers are owned by the artifact and valid
 *  until tcc_artifact_destroy. */
typedef struct tcc_tensor_info {
  const char *name; /* unique per role */
  tcc_role role;    /* input, output or parameter */
  tcc_dtype dtype;
  int32_t rank;         /* 0 for a scalar */
  const int64_t *shape; /* rank entries (NULL when rank is 0), all static */
  size_t size_bytes;    /* product of the shape times the element size */
} tcc_tensor_info;

/** The number of tensors; they have indices 0 .. count-1 in descriptor
 *  order. Errors: TCC_ERROR_INVALID_ARGUMENT. */
TCC_API tcc_status tcc_artifact_num_tensors(tcc_artifact_t artifact, int32_t *out_count);

/** Fills *out_info for tensor INDEX. Errors: TCC_ERROR_INVALID_ARGUMENT
 *  (also for an index out of range). */
TCC_API tcc_status tcc_artifact_tensor_info(tcc_artifact_t artifact, int32_t index,
                                            tcc_tensor_info *out_info);

/** Finds the tensor named NAME with role ROLE and sets *out_index. Errors:
 *  TCC_ERROR_NOT_FOUND (the message lists the tensors of that role),
 *  TCC_ERROR_INVALID_ARGUMENT (also for a role outside tcc_role). */
TCC_API tcc_status tcc_artifact_find_tensor(tcc_artifact_t artifact, const char *name,
                                            tcc_role role, int32_t *out_index);

/** The number of entry points ("infer", later "train_step", ...). Errors:
 *  TCC_ERROR_INVALID_ARGUMENT. */
TCC_API tcc_status tcc_artifact_num_entries(tcc_artifact_t artifact, int32_t *out_count);

/** One entry point of the descriptor. Pointers are owned by the artifact and
 *  valid until tcc_artifact_destroy. */
typedef struct tcc_entry_info {
  const char *name;              /* "infer", later "train_step", ... */
  int32_t num_tensors;           /* the tensors it reads or writes */
  const int32_t *tensor_indices; /* num_tensors indices for
                                    tcc_artifact_tensor_info; NULL if none */
} tcc_entry_info;

/** Fills *out_info for entry point INDEX. Its input tensors are those it
 *  needs set before each run; its output tensors those a run produces.
 *  Errors: TCC_ERROR_INVALID_ARGUMENT (also for an index out of range). */
TCC_API tcc_status tcc_artifact_entry_info(tcc_artifact_t artifact, int32_t index,
                                           tcc_entry_info *out_info);

/** Finds the entry point named NAME and sets *out_index. Errors:
 *  TCC_ERROR_NOT_FOUND (the message lists the entry points),
 *  TCC_ERROR_INVALID_ARGUMENT. */
TCC_API tcc_status tcc_artifact_find_entry(tcc_artifact_t artifact, const char *name,
                                           int32_t *out_index);

/** The value of the artifact's metadata KEY (how to drive the entry points:
 *  "loss", "labels", "ignore_index", "grad_accum", "optimizer"; set by
 *  training builds), owned by the artifact and valid until
 *  tcc_artifact_destroy. Errors: TCC_ERROR_NOT_FOUND (the message lists the
 *  keys), TCC_ERROR_INVALID_ARGUMENT. */
TCC_API tcc_status tcc_artifact_get_metadata(tcc_artifact_t artifact, const char *key,
                                             const char **out_value);

/** Where the artifact's sessions keep their arena and state: "cpu", or the
 *  device it was compiled for ("cuda:sm_90"), owned by the artifact and valid
 *  until tcc_artifact_destroy. Errors: TCC_ERROR_INVALID_ARGUMENT. */
TCC_API tcc_status tcc_artifact_get_device(tcc_artifact_t artifact, const char **out_device);

/** Which code of the artifact its sessions run on this CPU: "" for the code
 *  of info.cpu_features, or the name of the CPU variant the artifact also
 *  holds and this CPU can run ("x86-64-v4": AVX-512; 16-bit training steps,
 *  docs/precision.md), chosen at load; the environment variable
 *  TCC_CPU_VARIANT (base or a variant's name) overrides the choice. Owned by
 *  the artifact and valid until tcc_artifact_destroy. Errors:
 *  TCC_ERROR_INVALID_ARGUMENT. */
TCC_API tcc_status tcc_artifact_get_cpu_variant(tcc_artifact_t artifact,
                                                const char **out_variant);

/*===--- Sessions -------------------------------------------------------------===*/

/** The memory and parameters for running one artifact: an arena (inputs,
 *  outputs, intermediates) and a state region (parameters), each allocated
 *  once at creation and 64-byte aligned. A run allocates nothing. */
typedef struct tcc_session *tcc_session_t;

/** Options for tcc_session_create. Initialize with tcc_session_options_init,
 *  then change fields: later runtime versions append fields, and struct_size
 *  tells them which ones the caller knew about. */
typedef struct tcc_session_options {
  /** sizeof(tcc_session_options) as the caller compiled it. */
  uint32_t struct_size;
  /** Threads for each parallel loop, the calling thread included. 0 (the
   *  default) means every CPU this process may run on; larger values are
   *  capped to that, so the session never oversubscribes the cores. */
  int32_t num_threads;
  /** Nonzero: fill the arena with 0xFF bytes at creation (a NaN in every
   *  float), so code that reads memory it never wrote produces NaNs instead
   *  of lucky zeros. Also enabled when the environment variable
   *  TCC_POISON_ARENA is "1". Tests turn it on; it costs one memset. */
  int32_t poison_arena;
  /** Nonzero: do not load the parameters file beside the artifact; the
   *  parameters start as zero bytes until tcc_session_load_params or
   *  tcc_session_set_param. Zero (the
   *  default): see tcc_session_create. */
  int32_t skip_default_params;
} tcc_session_options;

/** Sets *out_options to the defaults (struct_size filled in, all else 0).
 *  Cannot fail for a non-NULL pointer; NULL is ignored. Does not change the
 *  last error. */
TCC_API void tcc_session_options_init(tcc_session_options *out_options);

/** Creates a session for ARTIFACT. OPTIONS may be NULL for the defaults.
 *
 *  Allocates the arena and the state (the state zero-filled, the arena
 *  zero-filled or poisoned), and fixes its thread count. Unless
 *  options->skip_default_params is set, it then loads the parameters from the
 *  safetensors file beside the artifact (PATH with ".so" replaced by
 *  ".safetensors", or ".safetensors" appended) exactly as
 *  tcc_session_load_params does; an artifact without parameters needs no
 *  such file.
 *
 *  The session keeps the artifact's library loaded: ARTIFACT may be
 *  destroyed first. On success *out_session is a new handle, released with
 *  tcc_session_destroy. Errors: TCC_ERROR_INVALID_ARGUMENT (bad options),
 *  TCC_ERROR_OUT_OF_MEMORY, TCC_ERROR_NOT_FOUND (the artifact has parameters
 *  but no parameters file beside it), and the errors of
 *  tcc_session_load_params. */
TCC_API tcc_status tcc_session_create(tcc_artifact_t artifact, const tcc_session_options *options,
                                      tcc_session_t *out_session);

/** Frees the session's memory. Must not overlap another call on SESSION.
 *  NULL is ignored. Cannot fail; does not change the last error. */
TCC_API void tcc_session_destroy(tcc_session_t session);

/** Replaces every parameter with the values in the safetensors file PATH.
 *  The file must hold exactly the artifact's parameters: each one by name,
 *  with its dtype and shape, and nothing else; or be a checkpoint
 *  (tcc_session_save_checkpoint, of any compilation of the model), whose
 *  parameters (running statistics included) are taken and whose optimizer
 *  state is left. It is validated completely
 *  before anything is copied, so on failure the parameters are unchanged.
 *  Errors: TCC_ERROR_IO (unreadable), TCC_ERROR_FORMAT (corrupt),
 *  TCC_ERROR_NOT_FOUND (a parameter is missing, or the file holds a tensor
 *  that is not a parameter), TCC_ERROR_DTYPE, TCC_ERROR_SHAPE. */
TCC_API tcc_status tcc_session_load_params(tcc_session_t session, const char *path);

/** Writes every parameter's current value to the safetensors file PATH, in
 *  descriptor order, atomically (a temporary file in the same folder,
 *  fsync'ed, then renamed over PATH: a crash leaves the old file or the new
 *  one, never a mix). The metadata records the artifact's fingerprint.
 *  Errors: TCC_ERROR_IO (PATH is left as it was). */
TCC_API tcc_status tcc_session_save_params(tcc_session_t session, const char *path);

/** Writes a training checkpoint to PATH: every parameter and every state
 *  tensor (optimizer buffers), the artifact's fingerprint, and NUM_METADATA
 *  key/value strings of the caller's (the step, the data position, the RNG
 *  seed, ...; keys starting with "tcc." are reserved). Atomic like
 *  tcc_session_save_params. Errors: TCC_ERROR_INVALID_ARGUMENT (NULL or
 *  reserved keys), TCC_ERROR_IO. */
TCC_API tcc_status tcc_session_save_checkpoint(tcc_session_t session, const char *path,
                                               int32_t num_metadata, const char *const *keys,
                                               const char *const *values);

/** Restores parameters and state tensors from a checkpoint of the model,
 *  validating everything before copying, so on failure nothing changes. A
 *  checkpoint of this compilation (the fingerprints match) holds exactly
 *  its tensors. One of another compilation of the model (another batch,
 *  precision, --profile) is taken by tensor name: every parameter and
 *  optimizer state tensor must be there with its dtype and shape; the
 *  16-bit weight copies are recomputed from the parameters, and fp16 loss
 *  scaling state missing from it starts afresh; a tensor of the file that
 *  is none of these (another optimizer's state) is refused. Errors: those
 *  of tcc_session_load_params, and TCC_ERROR_INVALID_ARGUMENT for a file
 *  that is not a checkpoint. */
TCC_API tcc_status tcc_session_load_checkpoint(tcc_session_t session, const char *path);

/** Copies the metadata value KEY of the safetensors file PATH (NUL
 *  terminated) into OUT, which has OUT_SIZE bytes. Errors: TCC_ERROR_IO,
 *  TCC_ERROR_FORMAT, TCC_ERROR_NOT_FOUND (no such key),
 *  TCC_ERROR_INVALID_ARGUMENT (OUT too small). */
TCC_API tcc_status tcc_checkpoint_get_metadata(const char *path, const char *key, char *out,
                                               size_t out_size);

/** Copies an input into its arena slot. NAME must be an input of the
 *  artifact; DTYPE, RANK and SHAPE must equal its declared ones exactly (no
 *  conversion, no broadcasting); SIZE_BYTES must equal its byte size. DATA
 *  is read during the call only and may be unaligned. SHAPE may be NULL when
 *  RANK is 0.
 *
 *  Partial batches: when the artifact's metadata has TCC_METADATA_BATCH (B),
 *  an input that follows the batch (metadata TCC_METADATA_BATCH_ROWS_PREFIX
 *  + NAME = K rows per sample) also takes 1 <= n <= B samples: SHAPE[0] =
 *  n * K, the other dimensions as declared, SIZE_BYTES for those rows. The
 *  runtime pads the slot with copies of the last sample. Every input of one
 *  run that follows the batch must hold the same n; "infer" and "eval_step"
 *  run such a batch (eval_step's loss counts the n real samples only; the
 *  runtime writes its input "valid" itself), the training entries refuse
 *  it (TCC_ERROR_SHAPE at tcc_session_run). The outputs that follow the
 *  batch then hold n * K rows (tcc_session_get_output's size,
 *  tcc_session_get_output_shape). The padded rows are computed and thrown
 *  away: a run of n costs as much as one of B. The compiler records the
 *  metadata only for models whose samples are independent at inference (it
 *  compares the model imported at two batch sizes and refuses models with
 *  batch statistics at inference); an artifact without it takes full
 *  batches only.
 *
 *  Every input an entry point reads must be set again after each run: a run
 *  may reuse input slots for intermediate buffers. Setting an input
 *  invalidates any output whose bytes share its slot. On a CUDA session the
 *  bytes go to a page-locked staging buffer instead and start uploading at
 *  once on a second stream, even while the previous run is still computing
 *  (see tcc_session_run); outputs stay readable there.
 *  The labels of a cross_entropy step (metadata TCC_METADATA_LABELS) must
 *  each name a class of the model, [0, C) for infer's first output of C
 *  classes in its last dimension, or be TCC_METADATA_IGNORE_INDEX: else
 *  TCC_ERROR_INVALID_ARGUMENT naming the first one (as PyTorch refuses it;
 *  the step would count it in the mean and apply the update).
 *  Errors: TCC_ERROR_NOT_FOUND (the message lists the inputs),
 *  TCC_ERROR_DTYPE, TCC_ERROR_SHAPE, TCC_ERROR_INVALID_ARGUMENT (size
 *  mismatch, NULL data for a non-empty tensor, a label that names no
 *  class), TCC_ERROR_INVALID_STATE. */
TCC_API tcc_status tcc_session_set_input(tcc_session_t session, const char *name, tcc_dtype dtype,
                                         int32_t rank, const int64_t *shape, const void *data,
                                         size_t size_bytes);

/** Replaces the value of parameter NAME (role TCC_ROLE_PARAM) in the
 *  session's state with SIZE_BYTES bytes from DATA, e.g. to initialize a
 *  model without a parameters file (with skip_default_params) or to edit
 *  one tensor of a loaded model. DTYPE, RANK and SHAPE must equal the
 *  parameter's declared ones exactly (no conversion); SIZE_BYTES must equal
 *  its byte size. DATA is read during the call only and may be unaligned.
 *  SHAPE may be NULL when RANK is 0. Other parameters, the state tensors
 *  (optimizer buffers) and the arena are untouched. On a CUDA session the
 *  bytes reach the device before the call returns, so the next run uses
 *  them. Errors: TCC_ERROR_NOT_FOUND (the message lists the parameters),
 *  TCC_ERROR_DTYPE, TCC_ERROR_SHAPE, TCC_ERROR_INVALID_ARGUMENT (size
 *  mismatch, NULL data for a non-empty tensor), TCC_ERROR_INVALID_STATE;
 *  on failure the parameter is unchanged. */
TCC_API tcc_status tcc_session_set_param(tcc_session_t session, const char *name, tcc_dtype dtype,
                                         int32_t rank, const int64_t *shape, const void *data,
                                         size_t size_bytes);

/** Copies the current value of parameter NAME into DST, which has room for
 *  DST_SIZE bytes; DST_SIZE must equal the parameter's byte size (see
 *  tcc_artifact_tensor_info for its dtype and shape; C order). The value is
 *  what the last run, load or tcc_session_set_param left: on a CUDA session
 *  it is downloaded from the device when a run has changed the state since
 *  the last download. Errors: TCC_ERROR_NOT_FOUND (the message lists the
 *  parameters), TCC_ERROR_INVALID_ARGUMENT (size mismatch, NULL DST for a
 *  non-empty tensor), TCC_ERROR_INVALID_STATE. */
TCC_API tcc_status tcc_session_get_param(tcc_session_t session, const char *name, void *dst,
                                         size_t dst_size);

/** Runs the entry point ENTRY_NAME ("infer") on the session's arena and
 *  state, on the calling thread and the OpenMP pool, and returns when
 *  it has finished. Parameters updated by the entry persist in the state.
 *
 *  Before calling the entry, checks that every input the entry reads has been
 *  set since the previous run (TCC_ERROR_INVALID_STATE naming the ones that
 *  were not), except the optimizer's hyperparameter inputs (TCC_INPUT_
 *  WEIGHT_DECAY, ...), which, when not set, take the value the artifact was
 *  compiled with (its metadata TCC_METADATA_DEFAULT_PREFIX + name). After the
 *  call, successful or not, every input counts as unset.
 *  On success the outputs the entry writes become readable.
 *  Errors: TCC_ERROR_NOT_FOUND (no such entry; the message lists them),
 *  TCC_ERROR_INVALID_STATE, TCC_ERROR_RUNTIME (the entry returned a nonzero
 *  code, which the message gives; the outputs are then unreadable and the
 *  parameters may be partly updated).
 *
 *  On a CUDA session the call returns once the run is queued on the device,
 *  before it has finished, so that the caller can prepare and set the next
 *  inputs meanwhile (their upload overlaps the run). Reading an output or a
 *  parameter, saving, loading or setting parameters wait for the run first,
 *  and a failure of its device work (a kernel fault) is reported by that
 *  call as TCC_ERROR_RUNTIME, after which its outputs are unreadable. */
TCC_API tcc_status tcc_session_run(tcc_session_t session, const char *entry_name);

/** Called on the thread of tcc_session_run right before (END 0) and right
 *  after (END 1) kernel KERNEL of a CPU artifact compiled with --profile;
 *  KERNEL indexes the ';'-separated names of the artifact's metadata
 *  "profile.kernels" (TCC_METADATA_PROFILE_KERNELS). It must return quickly
 *  and must not call into the session. */
typedef void (*tcc_kernel_observer)(void *user, int32_t kernel, int32_t end);

/** Installs OBSERVER (NULL: removes it) for the session's later runs; USER
 *  is passed through. Artifacts without --profile never call it. Errors:
 *  TCC_ERROR_INVALID_ARGUMENT (SESSION NULL). */
TCC_API tcc_status tcc_session_set_kernel_observer(tcc_session_t session,
                                                   tcc_kernel_observer observer, void *user);

/** Points *out_data at output NAME inside the arena and sets *out_size to
 *  its byte size. The bytes are the output's dtype and shape (see
 *  tcc_artifact_tensor_info), C order, 64-byte aligned. The pointer is owned
 *  by the session and valid until the next tcc_session_set_input,
 *  tcc_session_run, tcc_session_load_params or tcc_session_destroy on it.
 *  Errors: TCC_ERROR_NOT_FOUND, TCC_ERROR_INVALID_STATE (no successful run
 *  has written this output since the session was created, or an input set
 *  since then overwrote it), TCC_ERROR_RUNTIME (on a CUDA session, the
 *  queued run it waits for failed; see tcc_session_run). */
TCC_API tcc_status tcc_session_get_output(tcc_session_t session, const char *name,
                                          const void **out_data, size_t *out_size);

/** Writes the shape of readable output NAME, as the last run computed it,
 *  into SHAPE (room for CAPACITY entries) and its rank into *RANK: the
 *  declared shape (tcc_artifact_tensor_info), except that an output that
 *  follows the batch has a partial batch's rows first (see "Partial
 *  batches"). SHAPE may be NULL when the rank is 0. Errors: those of
 *  tcc_session_get_output, and TCC_ERROR_INVALID_ARGUMENT when CAPACITY is
 *  below the rank. */
TCC_API tcc_status tcc_session_get_output_shape(tcc_session_t session, const char *name,
                                                int32_t capacity, int64_t *shape, int32_t *rank);

/** Copies output NAME into DST, which has room for DST_SIZE bytes; DST_SIZE
 *  must equal the output's byte size. Errors: those of
 *  tcc_session_get_output, and TCC_ERROR_INVALID_ARGUMENT for a size
 *  mismatch. */
TCC_API tcc_status tcc_session_copy_output(tcc_session_t session, const char *name, void *dst,
                                           size_t dst_size);

/*===--- Data-parallel training ------------------------------------------===*
 *
 * An artifact compiled with `tcc --data-parallel` averages its gradients over
 * the ranks of a job inside train_step (bucketed all-reduces that overlap the
 * backward). Each process of the job (started by mpirun, or srun) creates a
 * communicator, gives it to its session, feeds the session its own shard of
 * every batch and runs the entry points as usual; every rank must run the
 * same entries in the same order. Without a communicator, or alone, the
 * artifact trains as a single process. MPI (Open MPI) is loaded with dlopen
 * only when the process was launched as one of several. See
 * docs/distributed.md.
 *===----------------------------------------------------------------------===*/

typedef struct tcc_communicator *tcc_communicator_t;

typedef struct tcc_communicator_options {
  /** sizeof(tcc_communicator_options) as the caller compiled it. */
  uint32_t struct_size;
  uint32_t reserved;
  /** Seconds any collective may wait for the other ranks before it fails
   *  naming itself (a rank that died or hangs); 0 means 60. */
  double timeout_seconds;
} tcc_communicator_options;

/** Sets *out_options to the defaults (struct_size filled in, all else 0). */
TCC_API void tcc_communicator_options_init(tcc_communicator_options *out_options);

/** Joins the job this process was launched in: under mpirun (Open MPI's
 *  OMPI_COMM_WORLD_SIZE) or srun (PMIx / Slurm's variables) with more than
 *  one process, loads MPI (libmpi.so.40, or the file TCC_MPI_LIBRARY names)
 *  and initializes it unless the application did; otherwise a world of one.
 *  Errors: TCC_ERROR_UNSUPPORTED (MPI cannot be loaded or initialized),
 *  TCC_ERROR_INVALID_ARGUMENT (a negative timeout). */
TCC_API tcc_status tcc_communicator_create(const tcc_communicator_options *options,
                                           tcc_communicator_t *out_communicator);

/** This process's rank, the world size and the rank among the processes on
 *  this host (any of the pointers may be NULL). */
TCC_API tcc_status tcc_communicator_get_info(tcc_communicator_t communicator, int32_t *out_rank,
                                             int32_t *out_size, int32_t *out_local_rank);

/** Replaces VALUES[0, COUNT) on every rank by their sum over the ranks
 *  (blocking, within the timeout): for losses and metrics. Errors:
 *  TCC_ERROR_RUNTIME (a rank did not take part in time). */
TCC_API tcc_status tcc_communicator_sum(tcc_communicator_t communicator, double *values,
                                        int64_t count);

/** Copies BYTES bytes at DATA from rank ROOT to every rank (blocking). */
TCC_API tcc_status tcc_communicator_broadcast(tcc_communicator_t communicator, void *data,
                                              int64_t bytes, int32_t root);

/** Ends every process of the job with exit status CODE (MPI_Abort; alone:
 *  exit). For a rank that failed and must not leave the others waiting. */
TCC_API void tcc_communicator_abort(tcc_communicator_t communicator, int32_t code);

/** Finalizes MPI if tcc_communicator_create initialized it. Destroy the
 *  sessions that use it first. NULL is ignored. */
TCC_API void tcc_communicator_destroy(tcc_communicator_t communicator);

/** Runs SESSION's collectives over COMMUNICATOR (borrowed: it must outlive
 *  the session's runs), or alone when COMMUNICATOR is NULL: with MPI for a
 *  CPU artifact, with NCCL (loaded with dlopen, joined through the
 *  communicator) for a CUDA one, whose session must not have run yet (its
 *  CUDA graphs hold the collectives). Collective: every rank calls it.
 *  Errors: TCC_ERROR_INVALID_ARGUMENT (several ranks, but the artifact was
 *  compiled without --data-parallel), TCC_ERROR_INVALID_STATE (a device
 *  session that has run), TCC_ERROR_UNSUPPORTED (NCCL cannot be loaded or
 *  joined). */
TCC_API tcc_status tcc_session_set_communicator(tcc_session_t session,
                                                tcc_communicator_t communicator);

/** Makes every rank's parameters and optimizer state those of rank ROOT
 *  (collective: every rank calls it). A no-op without a communicator. A
 *  ZeRO-1 session's sharded optimizer state stays each owner's (a checkpoint
 *  load gives every rank its own chunks). */
TCC_API tcc_status tcc_session_broadcast_state(tcc_session_t session, int32_t root);

/** ZeRO-1 (an artifact compiled with tcc --data-parallel --zero=1): each rank
 *  holds the optimizer state (momentum, Adam moments) of its own chunks of
 *  the parameters only, and its train_step runs the reduce-scatter, the
 *  update of those chunks and the all-gather of the parameters. Before a
 *  checkpoint, every rank calls this (collective) so that ROOT holds the
 *  whole state until its next step; tcc_session_save_checkpoint on ROOT then
 *  writes it under the names a run without --zero uses (PARAM.exp_avg, ...),
 *  and either artifact resumes the other's checkpoints. A checkpoint load
 *  takes each rank's chunks from the file. A no-op for other sessions and
 *  without a communicator. Errors: TCC_ERROR_RUNTIME (a rank did not join
 *  within the communicator's timeout). */
TCC_API tcc_status tcc_session_gather_state(tcc_session_t session, int32_t root);

/** The bytes of optimizer state (momentum buffers, Adam moments) this
 *  session holds, and those of the whole job: equal without ZeRO-1; with
 *  it, OUT_LOCAL is this rank's shard (about OUT_TOTAL / world size). */
TCC_API tcc_status tcc_session_get_optimizer_state_bytes(tcc_session_t session, int64_t *out_local,
                                                         int64_t *out_total);

/*===--- The step protocol ------------------------------------------------===*
 *
 * How a training artifact (compiled with tcc --loss=...) is driven, whether by
 * the trainer below or by hand with tcc_session_run. The names are macros of
 * abi.h; the artifact's metadata (tcc_artifact_get_metadata) says the rest.
 *
 * Entry points:
 *   "train_step"       forward, backward and the optimizer update of one
 *                      step; parameters and optimizer state change in place.
 *   "accumulate_grad"  (when metadata "grad_accum" K > 1) forward and backward
 *                      of one micro-batch, adding to the gradient; run it for
 *                      micro-batches 0 .. K-2, then train_step on the last.
 *   "eval_step"        the loss without an update (inputs as train_step's
 *                      but lr, step and rng); outputs "loss", then the model's.
 *   "infer"            the model's outputs from its data inputs.
 *
 * Runtime inputs of train_step beside the data (set before every run, like
 * every input):
 *   "lr"     f32[]   the learning rate of this step (schedules live on the
 *                    host; nothing recompiles).
 *   "step"   f32[]   the optimizer step, 1-based as PyTorch counts it (Adam's
 *                    bias correction); present for optimizers that use it.
 *   "rng"    i64[2]  [seed, counter] of the step's dropout masks (Philox);
 *                    the trainer passes counter = step * K + micro.
 *   "micro"  f32[]   accumulate_grad only: the micro-batch index 0 .. K-2.
 * The data inputs are the model's inputs and the labels (metadata "labels",
 * "y" by default: int64 class indices for cross_entropy, a float tensor for
 * mse); their first dimension is the compiled batch.
 *
 * Outputs of train_step: "loss" f32[] (the batch's loss, reduced as the
 * loss's metadata says, PyTorch's mean by default; for K > 1 each
 * micro-batch's, the step's loss being their mean) and, where the artifact
 * has it (it comes with in-step gradient clipping), "grad_norm" f32[] (the
 * global L2 norm of the gradient).
 *
 *===----------------------------------------------------------------------===*/

/*===--- Trainer ----------------------------------------------------------===*
 *
 * The training loop of tcc-run as a library: data sets (folders of NAME.npy
 * files, arrays in memory, or batches from a callback), per-epoch
 * shuffling, learning-rate schedules, gradient accumulation, validation,
 * early stopping, checkpoints that resume bit for bit, a metrics file and
 * progress lines. tcc-run, the Python package
 * and applications all run this one implementation.
 *
 *   tcc_trainer_options o;
 *   tcc_trainer_options_init(&o);
 *   o.data_dir = "data/"; o.steps = 1000; o.lr = 3e-4;
 *   o.lr_schedule = "cosine"; o.checkpoint_dir = "ckpt/";
 *   tcc_trainer_t trainer;
 *   tcc_trainer_create(artifact, &o, &trainer);   // checks everything first
 *   tcc_trainer_run(trainer, session);            // trains the session
 *   tcc_trainer_destroy(trainer);
 *
 * Messages name the options by tcc-run's flags ("--save-every needs
 * --checkpoint-dir DIR"): field save_every is flag --save-every, and so on.
 *
 *===----------------------------------------------------------------------===*/

/** A training run: its options, its opened data and its checkpoint folder. */
typedef struct tcc_trainer *tcc_trainer_t;

/** An input's samples in the caller's memory, instead of DIR/NAME.npy: NAME
 *  is the step's input, DTYPE its dtype, SHAPE[0] the number of samples and
 *  SHAPE[1..] the input's own dimensions past the batch; DATA holds
 *  SIZE_BYTES bytes in C order (any alignment). The trainer copies the
 *  strings and shape at tcc_trainer_create but borrows DATA: it must stay
 *  valid and unchanged until tcc_trainer_destroy. */
typedef struct tcc_trainer_array {
  const char *name;
  tcc_dtype dtype;
  int32_t rank;
  const int64_t *shape;
  const void *data;
  size_t size_bytes;
} tcc_trainer_array;

/** A data source (tcc_trainer_options.next_batch), called for micro-batch
 *  INDEX: sets *OUT_ARRAYS to *OUT_COUNT arrays that hold it and returns 1;
 *  returns 0 when the data has ended, a negative value on failure (the run
 *  then fails with TCC_ERROR_INVALID_ARGUMENT naming the micro-batch, after
 *  writing its checkpoint when it has a folder). The arrays are the data
 *  inputs of train_step (the model's inputs and the labels), each once, by
 *  name, with exactly the input's declared dtype and shape: one compiled
 *  batch. The trainer copies them during the call (the arrays need only
 *  stay valid until it returns) and checks them as it checks a data set
 *  (float values finite; labels are checked by tcc_session_set_input).
 *
 *  It is called on the thread of tcc_trainer_run for INDEX 0, 1, 2, ... in
 *  order; with gradient accumulation (K micro-batches per step) for the K
 *  micro-batches of a step before the step runs, so that data that ends
 *  inside a step leaves that step out whole. A run resumed from a
 *  checkpoint of step S first asks for the S x K micro-batches those steps
 *  took and discards them: a source that starts over from its beginning
 *  continues where the checkpoint left off. It must not call into the
 *  trainer or its session. */
typedef int (*tcc_trainer_batch_callback)(void *user, int64_t index,
                                          const tcc_trainer_array **out_arrays,
                                          int32_t *out_count);

/** What tcc_trainer_options.on_step receives after every optimizer step. */
typedef struct tcc_trainer_step_info {
  uint32_t struct_size; /* sizeof(tcc_trainer_step_info) of the runtime */
  int64_t step;         /* steps done, 1-based */
  int64_t steps;        /* the run's tcc_trainer_options.steps */
  float loss;           /* the step's loss (the mean of its micro-batches) */
  float lr;             /* the learning rate it ran with */
  float grad_norm;      /* NaN when the artifact has no grad_norm output */
  double val_loss;      /* NaN unless this step evaluated with eval_step */
  double val_accuracy;  /* NaN unless this step evaluated the accuracy */
} tcc_trainer_step_info;

/** Called on the thread of tcc_trainer_run after every step, after the
 *  metrics line and before the step's checkpoint. INFO is valid during the
 *  call only. Returning nonzero ends the run after this step like early
 *  stopping (its checkpoint is written; tcc_trainer_run returns TCC_OK). It
 *  must not call into the trainer or its session. */
typedef int (*tcc_trainer_step_callback)(void *user, const tcc_trainer_step_info *info);

/** Receives each progress line (without its newline), on the thread of
 *  tcc_trainer_run; LINE is valid during the call only. */
typedef void (*tcc_trainer_log_callback)(void *user, const char *line);

/** Options of a training run. Initialize with tcc_trainer_options_init, then
 *  set fields: later versions append fields, and struct_size tells them which
 *  ones the caller knew about. The fields after struct_size are the rows of
 *  <tcc/trainer_options.def>, in order: each option's name, C type, tcc-run
 *  flag, default, range and meaning (docs/training.md has more), and the
 *  fields no flag sets. Strings may be NULL (= the default); all are copied
 *  by tcc_trainer_create. Besides what each row says:
 *
 *  Data-parallel training (COMMUNICATOR, the job's, borrowed; NULL: this
 *  process alone). The trainer gives it to the session and makes every rank
 *  start from rank 0's parameters; each optimizer step takes W x B samples
 *  (W ranks, B the compiled batch): global batch i is samples
 *  [i W B, (i+1) W B) of the epoch's order (one permutation from the shared
 *  seed), of which rank r trains on the r-th B. The reported losses are the
 *  means over the ranks; only rank 0 prints, writes the metrics,
 *  TensorBoard, the trace, --save and the checkpoints (every rank reads
 *  --resume, whose world size must be this run's). The artifact must be
 *  compiled with --data-parallel when W > 1. With W > 1, tcc_trainer_create
 *  is collective (every rank calls it): it compares the ranks' artifacts
 *  (their fingerprints) and the options that decide the update (lr and
 *  schedule, seed, shuffle, the data's sample counts, steps,
 *  hyperparameters, validation, checkpoint cadence, --resume's step, ...)
 *  and fails every rank with TCC_ERROR_RANKS_DIFFER on a difference. The
 *  outputs (metrics, save, tensorboard, trace), log_every, workers and the
 *  data's paths may differ.
 *
 *  A data source (NEXT_BATCH, NEXT_BATCH_USER) instead of DATA_DIR / DATA:
 *  micro-batches from NEXT_BATCH (see tcc_trainer_batch_callback), in the
 *  order it gives them, so SHUFFLE must be 0 and WORKERS 0. The run takes at
 *  most STEPS steps; when the source ends first, the run ends after its
 *  last whole step as early stopping ends it (checkpoint and --save
 *  written, --val evaluated when there is no eval_every; TCC_OK, and
 *  tcc_trainer_steps_done says how many steps were taken). Not with a
 *  communicator of several ranks, nor with length buckets.
 *
 *  EPOCHS, instead of STEPS (which must then be 0): STEPS = EPOCHS x the
 *  whole optimizer steps one epoch holds (samples / (batch x ranks x
 *  grad_accum)). Not with NEXT_BATCH (a source of unknown length) nor
 *  length buckets.
 *
 *  The hyperparameters (weight_decay, momentum, beta1, beta2, eps,
 *  grad_clip): NaN keeps the value the artifact was compiled with. Setting
 *  one the artifact has no input for (momentum on SGD compiled without
 *  momentum, beta1 on SGD, grad_clip compiled without clipping) fails
 *  tcc_trainer_create naming the option.
 *
 *  LOSS_SCALE_INIT: 0 means the default too. ON_NONFINITE "skip" with an
 *  artifact that cannot skip a step fails tcc_trainer_create naming it. */
typedef struct tcc_trainer_options {
  uint32_t struct_size;
#define TCC_TRAINER_OPTION(NAME, TYPE, KIND, FLAG, ARG, DEFAULT, RANGE, HELP) TYPE NAME;
#define TCC_TRAINER_FIELD(NAME, TYPE) TYPE NAME;
#include "trainer_options.def"
} tcc_trainer_options;

/** Sets *out_options to the defaults: struct_size filled in, every option
 *  the DEFAULT of its row in trainer_options.def, every other field 0 /
 *  NULL. NULL is ignored. Does not change the last error. */
TCC_API void tcc_trainer_options_init(tcc_trainer_options *out_options);

/** Checks OPTIONS on their own, without an artifact or any file: what is
 *  required (data, steps, lr), ranges, and the options against each other
 *  (a schedule's settings, --save-every without --checkpoint-dir, ...).
 *  tcc_trainer_create makes the same checks first. Errors:
 *  TCC_ERROR_INVALID_ARGUMENT, naming the flag. Safe from any thread. */
TCC_API tcc_status tcc_trainer_check_options(const tcc_trainer_options *options);

/** Prepares a training run of ARTIFACT: checks OPTIONS, the artifact's step
 *  signature (a train_step with "lr" and "loss"; metadata "grad_accum" and
 *  "labels"), opens and checks the data and validation sets (dtype and
 *  per-sample shape of every input, equal sample counts, finite floats,
 *  labels inside the classes), checks that every output path is writable,
 *  and locks the checkpoint folder (flock; another run into it is refused)
 *  until tcc_trainer_destroy. Nothing is trained and no session is needed,
 *  so a bad run fails here, before any work.
 *
 *  The trainer borrows ARTIFACT (its tensor descriptions) and the data
 *  arrays (see tcc_trainer_array): both must stay valid until
 *  tcc_trainer_destroy. On success
 *  *out_trainer is a new handle, released with tcc_trainer_destroy.
 *  Errors: TCC_ERROR_INVALID_ARGUMENT (options, an artifact that cannot
 *  train, data that does not fit it; the message names the file or array),
 *  TCC_ERROR_IO (a data file or output folder), TCC_ERROR_FORMAT (a corrupt
 *  .npy file), TCC_ERROR_RANKS_DIFFER (with a communicator of several
 *  ranks: another rank has another artifact or options; every rank gets
 *  the same message), TCC_ERROR_RUNTIME (a rank did not take part in that
 *  comparison within the communicator's timeout). */
TCC_API tcc_status tcc_trainer_create(tcc_artifact_t artifact, const tcc_trainer_options *options,
                                      tcc_trainer_t *out_trainer);

/** Runs the training loop on SESSION, a session of the artifact the trainer
 *  was created for, and returns when it has finished (all steps, or early
 *  stopping). With options.resume, first restores the checkpoint into the
 *  session and continues at its step; otherwise the session's current
 *  parameters are the starting point (as created, loaded or set).
 *
 *  A trainer runs once (TCC_ERROR_INVALID_STATE the second time). SESSION is
 *  borrowed for the call: no other call may use it meanwhile (the session's
 *  own rule); afterwards it holds the trained parameters. The loop allocates
 *  host buffers for two batches; with a session of fewer threads than CPUs
 *  it assembles the next batch on a background thread.
 *
 *  Errors: TCC_ERROR_INTERRUPTED (a signal or tcc_trainer_request_stop),
 *  TCC_ERROR_INVALID_ARGUMENT (a checkpoint from another run's settings, a
 *  non-finite loss or gradient norm: the parameters are then not saved),
 *  TCC_ERROR_IO (data that changed during the run, a full disk), and the
 *  errors of the session calls. When a checkpoint folder is set, a failure
 *  between steps writes the checkpoint first and the message says where;
 *  the metrics file holds the lines of the steps done. */
TCC_API tcc_status tcc_trainer_run(tcc_trainer_t trainer, tcc_session_t session);

/** Asks a running tcc_trainer_run to stop at the next step boundary
 *  (TCC_ERROR_INTERRUPTED, checkpoint written). Safe from any thread and
 *  from a signal handler (it sets an atomic flag); a request made before
 *  the run starts stops it before its first step. NULL is ignored. Does
 *  not change the last error. */
TCC_API void tcc_trainer_request_stop(tcc_trainer_t trainer);

/** Sets *out_steps to the optimizer steps done so far: the checkpoint's
 *  step after a resume, the final step after tcc_trainer_run. Not during a
 *  run from another thread. Errors: TCC_ERROR_INVALID_ARGUMENT. */
TCC_API tcc_status tcc_trainer_steps_done(tcc_trainer_t trainer, int64_t *out_steps);

/** Releases the trainer and its checkpoint folder's lock. Must not overlap
 *  tcc_trainer_run on it. NULL is ignored. Cannot fail; does not change the
 *  last error. */
TCC_API void tcc_trainer_destroy(tcc_trainer_t trainer);

/*===--- Evaluation -------------------------------------------------------===*
 *
 * The trainer's validation pass (--val) on its own: the mean loss and the
 * accuracy of a session over a whole data set, however many samples it
 * holds. tcc-run evaluate and tcc.evaluate run this one implementation, and
 * a training run's validation is the same code.
 *
 *   tcc_evaluator_options o;
 *   tcc_evaluator_options_init(&o);
 *   o.data_dir = "test/";
 *   tcc_evaluator_t evaluator;
 *   tcc_evaluator_create(artifact, &o, &evaluator);  // opens and checks
 *   tcc_evaluation e;
 *   tcc_evaluator_run(evaluator, session, &e);       // e.loss, e.accuracy
 *   tcc_evaluator_destroy(evaluator);
 *
 * Batches: the data set's samples in order, B at a time (B the compiled
 * batch); the last batch holds the remainder. An artifact that takes
 * partial batches (metadata TCC_METADATA_BATCH, see "Partial batches")
 * runs it as one, so every sample counts once; another evaluates its full
 * batches only, and the remaining samples (fewer than B) are left out:
 * tcc_evaluation.skipped says how many.
 *
 * What is measured: with an "eval_step" entry, the loss, the mean of the
 * batches' losses weighted by the samples each holds (the mean over all
 * samples for a loss that is a mean over samples; with cross_entropy's
 * ignored labels, each batch's loss is its mean over its counted labels);
 * when the first model output (of eval_step, else of infer) is f32[batch,
 * classes] and the labels are int64 class ids, the accuracy (its argmax,
 * the first maximum, against the label; ignored labels do not count).
 *
 *===----------------------------------------------------------------------===*/

/** An opened, checked data set to evaluate artifact sessions on. */
typedef struct tcc_evaluator *tcc_evaluator_t;

/** Options of an evaluator. Initialize with tcc_evaluator_options_init,
 *  then set fields (later versions append fields; struct_size tells them
 *  which ones the caller knew about). Strings may be NULL (= not given). */
typedef struct tcc_evaluator_options {
  uint32_t struct_size;
  /* The data: a folder of NAME.npy files, one per input of eval_step (else
   * infer) and the labels, or NUM_DATA arrays (borrowed like a trainer's,
   * until tcc_evaluator_destroy); exactly one of the two. */
  const char *data_dir;
  const tcc_trainer_array *data;
  int32_t num_data;
  /* The training's normalization of the image input, as
   * tcc_trainer_options has it (--normalize, --augment-input,
   * --image-shape); NULL: none. */
  const char *normalize;
  const char *augment_input;
  const char *image_shape;
} tcc_evaluator_options;

/** Sets *out_options to the defaults: struct_size filled in, all else 0 /
 *  NULL. NULL is ignored. Does not change the last error. */
TCC_API void tcc_evaluator_options_init(tcc_evaluator_options *out_options);

/** What one evaluation measured. */
typedef struct tcc_evaluation {
  /** The samples evaluated, and those left out after the last full batch
   *  (0 for an artifact that takes partial batches). */
  int64_t samples;
  int64_t skipped;
  /** Nonzero when LOSS (an eval_step entry) and ACCURACY (a classifier)
   *  were measured; the value is NaN otherwise. */
  int32_t has_loss;
  int32_t has_accuracy;
  double loss;
  double accuracy; /* CORRECT / COUNTED, in [0, 1] */
  int64_t correct; /* samples whose argmax is the label */
  int64_t counted; /* samples whose label counts (not the ignored one) */
} tcc_evaluation;

/** Prepares evaluations of ARTIFACT's sessions on OPTIONS' data: opens the
 *  files (or takes the arrays) for every input of eval_step (else infer,
 *  and then the labels, metadata "labels", "y" by default, if the data has
 *  them) and checks them as tcc_trainer_create checks --val (dtype and
 *  per-sample shape, equal sample counts, finite floats, labels inside the
 *  classes). No session is needed. The evaluator borrows ARTIFACT and the
 *  data arrays until tcc_evaluator_destroy. On success *out_evaluator is a
 *  new handle. Errors: TCC_ERROR_INVALID_ARGUMENT (options, an artifact
 *  with neither eval_step nor a classifier's infer, data that does not fit
 *  it, fewer samples than one batch for an artifact without partial
 *  batches; the message names the file or array), TCC_ERROR_IO,
 *  TCC_ERROR_FORMAT (a corrupt .npy file). */
TCC_API tcc_status tcc_evaluator_create(tcc_artifact_t artifact,
                                        const tcc_evaluator_options *options,
                                        tcc_evaluator_t *out_evaluator);

/** Evaluates SESSION, a session of the evaluator's artifact, on the whole
 *  data set with its current parameters (nothing is updated) and fills
 *  *out_evaluation. May be called any number of times, with any sessions of
 *  the artifact (one call at a time per evaluator). SESSION is borrowed for
 *  the call; its inputs and outputs are overwritten. With a session of
 *  fewer threads than CPUs the next batch is read on a background thread.
 *  Errors: TCC_ERROR_IO (a data file that changed since create), and those
 *  of the session calls. */
TCC_API tcc_status tcc_evaluator_run(tcc_evaluator_t evaluator, tcc_session_t session,
                                     tcc_evaluation *out_evaluation);

/** Releases the evaluator and closes its files. NULL is ignored. Cannot
 *  fail; does not change the last error. */
TCC_API void tcc_evaluator_destroy(tcc_evaluator_t evaluator);

#ifdef __cplusplus
}
#endif

#endif /* TCC_TCC_H */
