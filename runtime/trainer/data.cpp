//===- data.cpp - training data read by rows, and a prefetch thread -------===//

#include "runtime/trainer/data.h"

#include <sched.h>

#include "runtime/dtype.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace tcc::train {
namespace {

/// Calls VISIT(values, count, first) over the elements of S in chunks of
/// about 1 MiB (FIRST: the index of values[0] in the file's array): a whole
/// pass over a file through reads, without holding it in memory.
template <typename T, typename Fn>
void forEachChunk(const Samples &s, Fn visit) {
  size_t count = s.bytes / sizeof(T);
  if (s.memory) {
    std::vector<T> all(count); // the caller's bytes may be unaligned
    if (count)
      std::memcpy(all.data(), s.memory, count * sizeof(T));
    visit(all.data(), count, size_t(0));
    return;
  }
  constexpr size_t kChunk = (size_t(1) << 20) / sizeof(T);
  std::vector<T> buffer(kChunk);
  for (size_t first = 0; first < count; first += kChunk) {
    size_t n = std::min(kChunk, count - first);
    std::string error;
    if (!s.reader.readAt(s.dataOffset + first * sizeof(T), buffer.data(), n * sizeof(T), &error))
      die(error);
    visit(buffer.data(), n, first);
  }
}

} // namespace

std::string DataSource::describe(const char *kind) const {
  return inMemory() ? std::string("the ") + kind + " arrays" : dir;
}

namespace {

/// Points S at the array of ARRAYS named like it, checking its byte size.
void takeArray(Samples &s, const std::vector<Array> &arrays, const tcc_tensor_info &t,
               const std::string &model) {
  const Array *found = nullptr;
  std::string names;
  for (const Array &a : arrays) {
    names += (names.empty() ? "" : ", ") + a.name;
    if (a.name == s.name)
      found = &a;
  }
  if (!found)
    die(model + ": no array for input '" + s.name + "' (" + typeString(t) + ") among " + names);
  s.file = "array '" + s.name + "'";
  s.dtype = found->dtype;
  s.shape = found->shape;
  s.memory = found->data;
  s.bytes = found->sizeBytes;
  size_t expected = tcc::rt::dtypeSize(s.dtype);
  for (int64_t d : s.shape)
    expected *= size_t(std::max<int64_t>(d, 0));
  if (s.bytes != expected || (!s.memory && s.bytes))
    die(s.file + ": " + std::to_string(s.bytes) + " bytes given, but " +
        tcc::rt::dtypeName(s.dtype) + tcc::rt::shapeString(s.shape.data(), s.shape.size()) +
        " holds " + std::to_string(expected));
}

} // namespace

void DataSet::add(const DataSource &source, const tcc_tensor_info &t, const std::string &model,
                  bool feed) {
  Samples s;
  s.name = t.name;
  s.declared = t;
  s.feed = feed;
  if (source.inMemory()) {
    takeArray(s, *source.arrays, t, model);
  } else {
    s.file = source.dir + "/" + npyFileName(t.name);
    std::string error;
    if (!s.data.open(s.file, &error) || !s.reader.open(s.file, &error))
      die(error);
    if (s.reader.size() < s.data.bytes())
      die(s.file + ": the file changed while it was opened");
    s.dataOffset = s.reader.size() - s.data.bytes();
    s.dtype = s.data.dtype();
    s.shape = s.data.shape();
    s.bytes = s.data.bytes();
  }
  const std::vector<int64_t> &shape = s.shape;
  const std::string &file = s.file;
  if (t.rank < 1)
    die(model + ": input '" + s.name + "' has no batch dimension");
  if (s.dtype != t.dtype || shape.size() != size_t(t.rank) ||
      !std::equal(shape.begin() + 1, shape.end(), t.shape + 1))
    die(file + ": holds " + std::string(tcc::rt::dtypeName(s.dtype)) +
        tcc::rt::shapeString(shape.data(), shape.size()) + ", but '" + s.name +
        "' takes samples of " + typeString(t) + " (any first dimension)");
  if (samples >= 0 && shape[0] != samples)
    die(file + ": holds " + std::to_string(shape[0]) + " samples, but " + firstFile + " holds " +
        std::to_string(samples));
  if (batch >= 0 && t.shape[0] != batch)
    die(model + ": the inputs disagree on the batch size");
  // Bad data stops here, not as a NaN loss (or silently wrong weights) later.
  // One pass over the file; its pages stay cached for the first epoch.
  size_t elements = s.bytes / tcc::rt::dtypeSize(s.dtype);
  size_t perSample = elements / size_t(std::max<int64_t>(shape[0], 1));
  auto badFloat = [&](auto *values, size_t n, size_t first) {
    for (size_t i = 0; i < n; ++i)
      if (!std::isfinite(double(values[i])))
        die(file + ": value " + std::to_string(double(values[i])) + " at sample " +
            std::to_string((first + i) / perSample) + " is not finite");
  };
  if (s.dtype == TCC_DTYPE_F32)
    forEachChunk<float>(s, badFloat);
  else if (s.dtype == TCC_DTYPE_F64)
    forEachChunk<double>(s, badFloat);
  samples = shape[0];
  batch = t.shape[0];
  if (firstFile.empty())
    firstFile = file;
  s.sampleBytes = s.bytes / size_t(std::max<int64_t>(samples, 1));
  inputs.push_back(std::move(s));
}

void DataSet::declare(const tcc_tensor_info &t, const std::string &model) {
  if (t.rank < 1)
    die(model + ": input '" + std::string(t.name) + "' has no batch dimension");
  if (batch >= 0 && t.shape[0] != batch)
    die(model + ": the inputs disagree on the batch size");
  Samples s;
  s.name = t.name;
  s.declared = t;
  s.file = "the data source's input '" + s.name + "'";
  s.dtype = t.dtype;
  s.shape.assign(t.shape, t.shape + t.rank);
  batch = t.shape[0];
  s.sampleBytes = t.size_bytes / size_t(std::max<int64_t>(batch, 1));
  if (firstFile.empty())
    firstFile = "the data source";
  inputs.push_back(std::move(s));
}

const Samples *DataSet::find(const std::string &name) const {
  int i = indexOf(name);
  return i < 0 ? nullptr : &inputs[size_t(i)];
}

int DataSet::indexOf(const std::string &name) const {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].name == name)
      return int(i);
  return -1;
}

long long metadataInteger(tcc_artifact_t artifact, const char *key, const std::string &fallback,
                          const std::string &model) {
  // The compiler writes these as decimal integers; anything else is a
  // damaged or foreign artifact, not a value to guess at.
  std::string text = artifactMetadata(artifact, key, fallback);
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end || errno == ERANGE)
    die(model + ": the artifact's metadata " + key + " '" + text + "' is not an integer");
  return v;
}

LabelSpec readLabelSpec(tcc_artifact_t artifact, const std::string &model) {
  LabelSpec labels;
  labels.name = artifactMetadata(artifact, TCC_METADATA_LABELS, "y");
  if (!artifactMetadata(artifact, TCC_METADATA_IGNORE_INDEX, "").empty()) {
    labels.hasIgnore = true;
    labels.ignoreIndex = metadataInteger(artifact, TCC_METADATA_IGNORE_INDEX, "", model);
  }
  return labels;
}

void checkLabels(const DataSet &set, const LabelSpec &labels, int64_t classes) {
  const Samples *s = set.find(labels.name);
  if (!s || s->dtype != TCC_DTYPE_I64 || classes <= 0)
    return;
  forEachChunk<int64_t>(*s, [&](const int64_t *y, size_t n, size_t first) {
    for (size_t i = 0; i < n; ++i)
      if ((y[i] < 0 || y[i] >= classes) && !labels.ignored(y[i]))
        die(s->file + ": label " + std::to_string(y[i]) + " at position " +
            std::to_string(first + i) + " is not a class of the model's " +
            std::to_string(classes) + " outputs [0, " + std::to_string(classes) + ")" +
            (labels.hasIgnore ? " nor the ignored label " + std::to_string(labels.ignoreIndex)
                              : std::string()));
  });
}

void configureAugmentation(const Options &o, const LabelSpec &labels, DataSet &set) {
  AugmentSpec &a = set.augment;
  a.pad = o.random_crop;
  a.flip = o.flip;
  auto numbers = [&](const std::string &text, const char *what) {
    std::vector<float> out;
    size_t begin = 0;
    for (;;) {
      size_t end = text.find(':', begin);
      std::string part = text.substr(begin, end == std::string::npos ? end : end - begin);
      char *stop = nullptr;
      double v = std::strtod(part.c_str(), &stop);
      if (part.empty() || *stop || !std::isfinite(v))
        die("--normalize " + o.normalize + ": the " + what + " '" + part + "' is not a number");
      out.push_back(float(v));
      if (end == std::string::npos)
        return out;
      begin = end + 1;
    }
  };
  if (!o.normalize.empty()) {
    size_t slash = o.normalize.find('/');
    if (slash == std::string::npos)
      die("--normalize needs MEAN/STD (per channel: M1:M2:M3/S1:S2:S3), got '" + o.normalize + "'");
    a.mean = numbers(o.normalize.substr(0, slash), "mean");
    a.std = numbers(o.normalize.substr(slash + 1), "standard deviation");
    if (a.mean.size() != a.std.size())
      die("--normalize " + o.normalize + ": as many means as standard deviations");
    for (float sd : a.std)
      if (!(sd > 0))
        die("--normalize " + o.normalize + ": a standard deviation must be > 0");
  }
  if (!a.active())
    return;
  // The image input: --augment-input, else the one f32 input of the data.
  int index = -1;
  for (size_t i = 0; i < set.inputs.size(); ++i) {
    const Samples &s = set.inputs[i];
    bool named = o.augment_input.empty() ? s.name != labels.name && s.dtype == TCC_DTYPE_F32
                                         : s.name == o.augment_input;
    if (!named)
      continue;
    if (index >= 0)
      die("augmentation: the data has several f32 inputs; name the image with --augment-input");
    index = int(i);
  }
  if (index < 0)
    die("augmentation: " + (o.augment_input.empty() ? std::string("the data has no f32 input")
                                                    : "no data input '" + o.augment_input + "'"));
  const Samples &image = set.inputs[size_t(index)];
  if (image.dtype != TCC_DTYPE_F32)
    die("augmentation: input '" + image.name + "' is not f32");
  // The image geometry: --image-shape CxHxW, else the input's own C x H x W.
  std::vector<int64_t> dims(image.declared.shape + 1, image.declared.shape + image.declared.rank);
  if (!o.image_shape.empty()) {
    dims.clear();
    std::string text = o.image_shape;
    for (size_t begin = 0;;) {
      size_t end = text.find('x', begin);
      std::string part = text.substr(begin, end == std::string::npos ? end : end - begin);
      char *stop = nullptr;
      long v = std::strtol(part.c_str(), &stop, 10);
      if (part.empty() || *stop || v < 1)
        die("--image-shape needs CxHxW (positive integers), got '" + text + "'");
      dims.push_back(v);
      if (end == std::string::npos)
        break;
      begin = end + 1;
    }
  }
  if (dims.size() != 3 || dims[0] * dims[1] * dims[2] * 4 != int64_t(image.sampleBytes))
    die("augmentation: input '" + image.name + "' is " + typeString(image.declared) +
        "; pass --image-shape CxHxW with C*H*W its values per sample");
  a.channels = dims[0];
  a.height = dims[1];
  a.width = dims[2];
  if (a.mean.size() > 1 && int64_t(a.mean.size()) != a.channels)
    die("--normalize " + o.normalize + ": " + std::to_string(a.mean.size()) +
        " values for " + std::to_string(a.channels) + " channels");
  if (a.pad >= a.height || a.pad >= a.width)
    die("--random-crop " + std::to_string(a.pad) + " is not below the image's height and width");
  set.augmentIndex = index;
  set.seed = o.seed;
}

void fillBatch(const DataSet &set, const int64_t *rows, Batch &batch, long k) {
  batch.resize(set.inputs.size());
  for (size_t i = 0; i < set.inputs.size(); ++i) {
    const Samples &s = set.inputs[i];
    std::vector<uint8_t> &out = batch[i];
    out.resize(s.sampleBytes * size_t(set.batch));
    if (s.memory) {
      for (int64_t r = 0; r < set.batch; ++r)
        std::memcpy(out.data() + size_t(r) * s.sampleBytes,
                    s.memory + size_t(rows[r]) * s.sampleBytes, s.sampleBytes);
      continue;
    }
    std::string error;
    if (!s.reader.unchanged(&error))
      die(error + "; the data must not change during a run");
    // One read per run of consecutive rows (a whole batch without shuffling).
    for (int64_t r = 0; r < set.batch;) {
      int64_t n = 1;
      while (r + n < set.batch && rows[r + n] == rows[r] + n)
        ++n;
      if (!s.reader.readAt(s.dataOffset + uint64_t(rows[r]) * s.sampleBytes,
                           out.data() + size_t(r) * s.sampleBytes, size_t(n) * s.sampleBytes,
                           &error))
        die(error + "; the data must not change during a run");
      r += n;
    }
  }
  if (set.augmentIndex >= 0)
    augmentBatch(set.augment, set.seed, k, set.augmentRandom,
                 reinterpret_cast<float *>(batch[size_t(set.augmentIndex)].data()), set.batch);
}

void setBatch(tcc_session_t session, const DataSet &set, const Batch &batch, int64_t samples) {
  if (samples < 0)
    samples = set.batch;
  for (size_t i = 0; i < set.inputs.size(); ++i) {
    const Samples &s = set.inputs[i];
    if (!s.feed)
      continue;
    std::vector<int64_t> shape(s.declared.shape, s.declared.shape + s.declared.rank);
    if (!shape.empty())
      shape[0] = samples;
    check(tcc_session_set_input(session, s.name.c_str(), s.declared.dtype, s.declared.rank,
                                shape.data(), batch[i].data(), s.sampleBytes * size_t(samples)));
  }
}

Prefetcher::Prefetcher(const DataSet &set, long begin, long end, RowsFn rows, int workers,
                       TraceWriter *trace)
    : set_(set), end_(end), next_(begin), claim_(begin), rows_(std::move(rows)),
      trace_(trace && trace->active() ? trace : nullptr) {
  // One buffer per worker and the one the consumer holds.
  buffers_.resize(size_t(std::max(workers, 0) + 1));
  slots_.assign(buffers_.size(), Slot::Free);
  tags_.assign(buffers_.size(), 0);
  rows_buffer_.resize(size_t(set_.batch));
  for (int w = 0; w < workers; ++w)
    workers_.emplace_back([this, w] { work(w); });
}

bool BatchStream::next(long k, Batch &out) {
  const tcc_trainer_array *arrays = nullptr;
  int32_t count = 0;
  int given = next_(user_, int64_t(k), &arrays, &count);
  const std::string where = "the data source's micro-batch " + std::to_string(k);
  if (given == 0)
    return false;
  if (given < 0)
    die(where + ": the callback failed");
  if (count < 0 || (count > 0 && !arrays))
    die(where + ": a negative count or NULL arrays");
  out.resize(set_.inputs.size());
  std::vector<bool> seen(set_.inputs.size(), false);
  for (int32_t i = 0; i < count; ++i) {
    const tcc_trainer_array &a = arrays[i];
    if (!a.name)
      die(where + ": array " + std::to_string(i) + " has no name");
    int index = set_.indexOf(a.name);
    if (index < 0) {
      std::string names;
      for (const Samples &s : set_.inputs)
        names += (names.empty() ? "" : ", ") + s.name;
      die(where + ": train_step has no data input '" + a.name + "' (its data inputs: " + names +
          ")");
    }
    if (seen[size_t(index)])
      die(where + ": input '" + std::string(a.name) + "' is given twice");
    seen[size_t(index)] = true;
    const Samples &s = set_.inputs[size_t(index)];
    const tcc_tensor_info &t = s.declared;
    bool fits = a.dtype == t.dtype && a.rank == t.rank && (a.rank == 0 || a.shape) &&
                std::equal(t.shape, t.shape + t.rank, a.shape);
    if (!fits)
      die(where + ": input '" + s.name + "' is " + tcc::rt::dtypeName(a.dtype) +
          (a.shape || a.rank == 0 ? tcc::rt::shapeString(a.shape, size_t(std::max(a.rank, 0)))
                                  : std::string("[?]")) +
          ", but train_step takes exactly one batch of it: " + typeString(t));
    if (a.size_bytes != t.size_bytes || (t.size_bytes && !a.data))
      die(where + ": input '" + s.name + "' has " + std::to_string(a.size_bytes) +
          " bytes, but " + typeString(t) + " holds " + std::to_string(t.size_bytes));
    std::vector<uint8_t> &bytes = out[size_t(index)];
    bytes.resize(t.size_bytes);
    if (t.size_bytes)
      std::memcpy(bytes.data(), a.data, t.size_bytes);
    // As a data set's values are checked before the first step.
    auto finite = [&](auto *values) {
      size_t n = t.size_bytes / sizeof *values, perSample = n / size_t(set_.batch);
      for (size_t v = 0; v < n; ++v)
        if (!std::isfinite(double(values[v])))
          die(where + ": input '" + s.name + "': value " + std::to_string(double(values[v])) +
              " at sample " + std::to_string(v / perSample) + " is not finite");
    };
    if (t.dtype == TCC_DTYPE_F32)
      finite(reinterpret_cast<const float *>(bytes.data()));
    else if (t.dtype == TCC_DTYPE_F64)
      finite(reinterpret_cast<const double *>(bytes.data()));
  }
  for (size_t i = 0; i < set_.inputs.size(); ++i)
    if (!seen[i])
      die(where + ": no array for input '" + set_.inputs[i].name + "' (" +
          typeString(set_.inputs[i].declared) + ")");
  if (set_.augmentIndex >= 0)
    augmentBatch(set_.augment, set_.seed, k, set_.augmentRandom,
                 reinterpret_cast<float *>(out[size_t(set_.augmentIndex)].data()), set_.batch);
  return true;
}

bool prefetchInBackground(int threads) {
  cpu_set_t cpus;
  int available = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus)
                                                                 : int(std::thread::hardware_concurrency());
  return threads > 0 && threads < available;
}

Prefetcher::~Prefetcher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  for (std::thread &w : workers_)
    w.join();
}

void Prefetcher::work(int worker) {
  std::vector<int64_t> rows(size_t(set_.batch));
  const long slots = long(buffers_.size());
  for (;;) {
    long k;
    {
      // Claim the next batch once its buffer is free (the consumer has
      // released batch k - slots); its rows are drawn here, in order of k.
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] {
        return stop_ || error_ || claim_ >= end_ || slots_[size_t(claim_ % slots)] == Slot::Free;
      });
      if (stop_ || error_ || claim_ >= end_)
        return;
      k = claim_++;
      slots_[size_t(k % slots)] = Slot::Filling;
      try {
        tags_[size_t(k % slots)] = rows_(k, rows);
      } catch (...) {
        error_ = std::current_exception();
        errorBatch_ = k;
        changed_.notify_all();
        return;
      }
    }
    try {
      fill(k, rows, buffers_[size_t(k % slots)], worker);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_ || k < errorBatch_) {
        error_ = std::current_exception();
        errorBatch_ = k;
      }
      changed_.notify_all();
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      slots_[size_t(k % slots)] = Slot::Ready;
    }
    changed_.notify_all();
  }
}

void Prefetcher::fill(long k, const std::vector<int64_t> &rows, Batch &buffer, int worker) {
  double start = trace_ ? trace_->now() : 0;
  fillBatch(set_, rows.data(), buffer, k);
  if (trace_)
    trace_->span(dataTrack(worker), "batch " + std::to_string(k), start, trace_->now());
}

const Batch &Prefetcher::next() {
  if (next_ >= end_)
    die("internal error: the prefetcher ran past its last batch");
  if (workers_.empty()) {
    tag_ = rows_(next_, rows_buffer_);
    fill(next_, rows_buffer_, buffers_[0], 0);
    ++next_;
    return buffers_[0];
  }
  const long slots = long(buffers_.size());
  int slot = int(next_ % slots);
  std::unique_lock<std::mutex> lock(mutex_);
  if (held_ >= 0) {
    slots_[size_t(held_)] = Slot::Free;
    held_ = -1;
    changed_.notify_all();
  }
  changed_.wait(lock, [&] { return slots_[size_t(slot)] == Slot::Ready || (error_ && errorBatch_ <= next_); });
  if (slots_[size_t(slot)] != Slot::Ready)
    std::rethrow_exception(error_);
  held_ = slot;
  tag_ = tags_[size_t(slot)];
  ++next_;
  return buffers_[size_t(slot)];
}

} // namespace tcc::train
