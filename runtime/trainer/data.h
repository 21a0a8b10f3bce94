//===- data.h - training data read by rows, and a prefetch thread ---------===//
//
// A data set is a folder of DIR/NAME.npy files, one per input of an entry
// point, the first axis counting samples, or the same as arrays in the
// caller's memory (tcc_trainer_array). A file stays open and is never held in
// memory whole: a batch is assembled by reading the selected rows (pread,
// consecutive rows at once) into a host buffer, and a Prefetcher does that on
// a background thread for batch k+1 while the caller runs step k. Reads rather
// than a mapping: a file truncated or rewritten during a run is then an error
// naming it (checked before every batch), not a SIGBUS.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_TRAINER_DATA_H
#define TCC_RUNTIME_TRAINER_DATA_H

#include "runtime/data/npy.h"
#include "runtime/trainer/augment.h"
#include "runtime/trainer/common.h"
#include "runtime/trainer/trace.h"

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace tcc::train {

/// One input's samples, read from its file or copied from an array.
struct Samples {
  std::string name;
  /// The file's path, or "array 'NAME'": what messages name.
  std::string file;
  /// What the samples hold (the file's header or the array's declaration).
  tcc_dtype dtype = TCC_DTYPE_F32;
  std::vector<int64_t> shape;
  size_t bytes = 0;
  /// A file's header; its data pages are never touched.
  tcc::rt::MappedNpy data;
  /// An array's bytes (borrowed from the caller), else nullptr.
  const uint8_t *memory = nullptr;
  /// What the samples are read through, and where they start in the file.
  tcc::rt::FileReader reader;
  uint64_t dataOffset = 0;
  /// The entry's declaration (its first dimension is the batch size).
  tcc_tensor_info declared;
  size_t sampleBytes = 0;
  /// Whether batches are set on the session (false for validation labels
  /// that only the host reads).
  bool feed = true;
};

/// Where a data set's inputs come from: DIR/NAME.npy, or the ARRAYS (when
/// there are any) by name.
struct DataSource {
  std::string dir;
  const std::vector<Array> *arrays = nullptr;
  bool inMemory() const { return arrays && !arrays->empty(); }
  /// "DIR", or "the validation arrays" (KIND: "data", "validation").
  std::string describe(const char *kind) const;
};

/// The samples of several inputs that agree on the sample count and the
/// batch size.
struct DataSet {
  std::vector<Samples> inputs;
  int64_t samples = -1, batch = -1;
  std::string firstFile;
  /// The augmentation of input AUGMENTINDEX (-1: none), its random part
  /// drawn from SEED when AUGMENTRANDOM (training; validation only
  /// normalizes).
  AugmentSpec augment;
  int augmentIndex = -1;
  bool augmentRandom = true;
  uint64_t seed = 0;

  /// Opens DIR/NAME.npy (or takes the array NAME) for the tensor T of MODEL
  /// and checks it: dtype and per-sample shape as declared, the same sample
  /// count as the others, every float value finite (the error names the file
  /// and the sample).
  void add(const DataSource &source, const tcc_tensor_info &t, const std::string &model,
           bool feed = true);
  /// Declares the tensor T of MODEL as an input whose batches come from a
  /// data callback (BatchStream): no file, no sample count.
  void declare(const tcc_tensor_info &t, const std::string &model);
  /// The input NAME, or nullptr.
  const Samples *find(const std::string &name) const;
  /// Which input NAME is, or -1.
  int indexOf(const std::string &name) const;
};

/// How the step reads its labels: the input's name and, for cross_entropy,
/// the label value that does not count (from the artifact's metadata).
struct LabelSpec {
  std::string name = "y";
  bool hasIgnore = false;
  int64_t ignoreIndex = -100;
  bool ignored(int64_t label) const { return hasIgnore && label == ignoreIndex; }
};

/// The artifact's integer metadata KEY (FALLBACK when absent); dies naming
/// MODEL when it is not a decimal integer.
long long metadataInteger(tcc_artifact_t artifact, const char *key, const std::string &fallback,
                          const std::string &model);

/// The labels' name and ignored value, from the artifact's metadata.
LabelSpec readLabelSpec(tcc_artifact_t artifact, const std::string &model);

/// The augmentation of O (--random-crop, --flip, --normalize) on SET's image
/// input (--augment-input, else its one f32 input that is not the LABELS),
/// of geometry --image-shape (else its declared C x H x W): sets
/// set.augment, augmentIndex and seed; dies naming the flag on a bad value.
void configureAugmentation(const Options &o, const LabelSpec &labels, DataSet &set);

/// Integer labels must name a class, [0, CLASSES), or be the ignored label.
void checkLabels(const DataSet &set, const LabelSpec &labels, int64_t classes);

/// One batch: a host buffer per input of its DataSet, in the same order.
using Batch = std::vector<std::vector<uint8_t>>;

/// Reads the samples ROWS[0, set.batch) of every input into BATCH and
/// applies the set's augmentation as micro-batch K; dies naming the file if
/// one changed since it was opened.
void fillBatch(const DataSet &set, const int64_t *rows, Batch &batch, long k);

/// Sets every fed input of BATCH on SESSION: all SAMPLES rows (the set's
/// batch by default), or the first SAMPLES of them as a partial batch for an
/// artifact that takes one (the runtime pads it).
void setBatch(tcc_session_t session, const DataSet &set, const Batch &batch,
              int64_t samples = -1);

/// Assembles batches BEGIN, BEGIN+1, ..., END-1 ahead of the consumer on
/// WORKERS background threads (batch k into buffer k mod (WORKERS + 1)), or
/// with 0 workers in next() itself. ROWS(k, rows) gives batch k's sample
/// indices and returns its tag (which entry runs it: tag()); it runs under the lock, in order of k, so it may keep state (the
/// shuffle's generator); reading the rows and augmenting them (fillBatch)
/// run in parallel. A batch's contents depend on k only, so the batches are
/// the same for every worker count. The destructor stops and joins the
/// workers whatever they are doing; an exception of a worker is rethrown by
/// the next() that asks for its batch.
class Prefetcher {
public:
  using RowsFn = std::function<int(long k, std::vector<int64_t> &rows)>;
  /// TRACE, if given and active, gets a span per batch assembled, on a
  /// data-loading track per worker.
  Prefetcher(const DataSet &set, long begin, long end, RowsFn rows, int workers,
             TraceWriter *trace = nullptr);
  ~Prefetcher();
  Prefetcher(const Prefetcher &) = delete;
  Prefetcher &operator=(const Prefetcher &) = delete;

  /// Waits for the next batch and returns it; it stays valid until the next
  /// call (its buffer is refilled only then).
  const Batch &next();
  /// The tag ROWS returned for the batch next() returned last.
  int tag() const { return tag_; }

private:
  enum class Slot { Free, Filling, Ready };
  void work(int worker);
  /// Assembles batch K into BUFFER from ROWS (traced on WORKER's track).
  void fill(long k, const std::vector<int64_t> &rows, Batch &buffer, int worker);

  const DataSet &set_;
  long end_, next_, claim_;
  RowsFn rows_;
  std::vector<Batch> buffers_;
  std::vector<Slot> slots_;
  std::vector<int> tags_; // per buffer
  int tag_ = 0;
  bool stop_ = false;
  /// The buffer next() returned last, released at the following call.
  int held_ = -1;
  std::exception_ptr error_;
  long errorBatch_ = -1; // the batch whose assembly failed
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::thread> workers_;
  std::vector<int64_t> rows_buffer_;
  TraceWriter *trace_;
};

/// Micro-batches from the caller's data callback
/// (tcc_trainer_options.next_batch) for a DataSet of declared inputs, in the
/// order it gives them, on the calling thread.
class BatchStream {
public:
  BatchStream(const DataSet &set, tcc_trainer_batch_callback next, void *user)
      : set_(set), next_(next), user_(user) {}
  /// Asks for micro-batch K and copies it into OUT in the set's input order,
  /// augmented as micro-batch K. False when the data has ended; dies naming
  /// the micro-batch on a failure or a batch that does not fit the step.
  bool next(long k, Batch &out);

private:
  const DataSet &set_;
  tcc_trainer_batch_callback next_;
  void *user_;
};

/// Whether a prefetch thread pays: only when the step leaves a core free
/// (THREADS: the session's thread count, 0 = every core).
bool prefetchInBackground(int threads);

} // namespace tcc::train

#endif // TCC_RUNTIME_TRAINER_DATA_H
