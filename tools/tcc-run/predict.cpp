//===- predict.cpp - tcc-run predict: infer over every row of the inputs --===//
//
// `tcc-run predict MODEL.so --input NAME=FILE ... --output-dir DIR` runs the
// entry point infer over inputs of any number of samples, a compiled batch
// at a time, and writes each output that holds one value per sample as one
// DIR/NAME.npy with the rows of every sample, in order. An artifact that
// takes partial batches (tcc.h, "Partial batches") runs the remainder as one;
// which inputs and outputs follow the batch, and with how many rows per
// sample, is its metadata. Another runs whole batches only: every input
// must hold whole batches, the batch being the first dimension of infer's
// first input, and a tensor whose first dimension is K times the batch
// follows it with K rows per sample.
//
//===----------------------------------------------------------------------===//

#include "tools/tcc-run/common.h"

#include "runtime/data/npy.h"
#include "runtime/dtype.h"
#include "runtime/support/file_roles.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace tcc::run {
namespace {

/// How a tensor of infer meets the batch: ROWS rows of it per sample (0:
/// it does not follow the batch: the same value in every run).
int64_t rowsPerSample(tcc_artifact_t artifact, const tcc_tensor_info &t, int64_t batch,
                      bool partial) {
  if (t.rank < 1)
    return 0;
  if (!partial) // whole batches: a first dimension of K batches follows it
    return t.shape[0] % batch == 0 ? t.shape[0] / batch : 0;
  std::string key = TCC_METADATA_BATCH_ROWS_PREFIX + std::string(t.name);
  std::string rows = artifactMetadata(artifact, key.c_str(), "");
  return rows.empty() ? 0 : std::strtoll(rows.c_str(), nullptr, 10);
}

/// One output of infer gathered over the runs.
struct Gathered {
  tcc_tensor_info info;
  std::string file;
  int64_t rows = 0; // per sample
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  size_t rowBytes = 0;
};

/// The batch: the artifact's (PARTIAL: it takes partial batches), else the
/// first dimension of infer's first input, as the trainer reads data.
int64_t inferBatch(tcc_artifact_t artifact, const std::vector<tcc_tensor_info> &tensors,
                   const Options &o, bool *partial) {
  std::string batchText = artifactMetadata(artifact, TCC_METADATA_BATCH, "");
  *partial = !batchText.empty();
  int64_t batch = *partial ? std::strtoll(batchText.c_str(), nullptr, 10) : 0;
  for (const tcc_tensor_info &t : tensors)
    if (!*partial && t.role == TCC_ROLE_INPUT && t.rank >= 1 && batch == 0)
      batch = t.shape[0];
  if (batch < 1)
    die(o.model + ": infer has no input with a batch dimension");
  return batch;
}

/// The samples the inputs hold, and how the inputs that follow the batch
/// hold them.
struct Samples {
  int64_t count = -1;
  std::string first;                   // the file that set the count
  std::map<std::string, int64_t> rows; // per sample, for the inputs that follow
};

/// Checks that every input of infer is given and that those that follow the
/// batch hold the same number of samples, which sets the runs.
Samples countSamples(tcc_artifact_t artifact, const std::vector<tcc_tensor_info> &tensors,
                     const Options &o, const std::map<std::string, tcc::rt::HostTensor> &inputs,
                     std::map<std::string, std::string> &inputFiles, int64_t batch,
                     bool partial) {
  Samples s;
  std::string missing;
  for (const tcc_tensor_info &t : tensors) {
    if (t.role != TCC_ROLE_INPUT)
      continue;
    auto given = inputs.find(t.name);
    if (given == inputs.end()) {
      missing += (missing.empty() ? "'" : ", '") + std::string(t.name) + "' (" + typeString(t) + ")";
      continue;
    }
    int64_t rows = rowsPerSample(artifact, t, batch, partial);
    if (rows == 0)
      continue; // set whole for every run
    const tcc::rt::HostTensor &h = given->second;
    const std::string &file = inputFiles[t.name];
    if (h.shape.empty())
      die(file + ": holds a scalar, but input '" + std::string(t.name) + "' takes samples of " +
          typeString(t));
    if (h.shape[0] % rows != 0)
      die(file + ": holds " + std::to_string(h.shape[0]) + " rows, not a whole number of samples of " +
          std::to_string(rows) + " row(s) each (input '" + t.name + "' is " + typeString(t) + ")");
    int64_t n = h.shape[0] / rows;
    if (s.count >= 0 && n != s.count)
      die(file + ": holds " + std::to_string(n) + " samples, but " + s.first + " holds " +
          std::to_string(s.count) + "; the inputs hold the same samples");
    s.count = n;
    s.first = file;
    s.rows[t.name] = rows;
  }
  if (!missing.empty())
    die(o.model + ": infer needs input(s) " + missing + "; pass --input NAME=FILE for each");
  if (s.count < 0)
    die(o.model + ": no input of infer follows the batch; run it with --infer instead");
  if (s.count == 0)
    die(s.first + ": holds no samples");
  if (!partial && s.count % batch != 0)
    die(s.first + ": holds " + std::to_string(s.count) +
        " samples, not a whole number of batches of " + std::to_string(batch) + ", and " +
        o.model + " takes full batches only (tcc --batch=" + std::to_string(batch) +
        " makes an artifact that runs the last " + std::to_string(s.count % batch) +
        " as a partial batch, for a model whose samples are independent at inference)");
  return s;
}

/// The outputs that hold rows per sample, to be gathered over SAMPLES; the
/// others (a value per run, not per sample) are not written.
std::vector<Gathered> gatheredOutputs(tcc_artifact_t artifact,
                                      const std::vector<tcc_tensor_info> &tensors,
                                      const tcc_entry_info &entry, const Options &o, int64_t batch,
                                      bool partial, int64_t samples) {
  std::vector<std::pair<std::string, std::string>> files = outputFileNames(artifact, entry);
  std::vector<Gathered> outputs;
  for (const tcc_tensor_info &t : tensors) {
    if (t.role != TCC_ROLE_OUTPUT)
      continue;
    int64_t rows = rowsPerSample(artifact, t, batch, partial);
    if (rows == 0) {
      std::fprintf(stderr, "note: output '%s' (%s) holds no rows per sample; not written\n", t.name,
                   typeString(t).c_str());
      continue;
    }
    Gathered g;
    g.info = t;
    g.rows = rows;
    g.file = o.outputDir + "/" +
             std::find_if(files.begin(), files.end(), [&](const auto &f) {
               return f.first == t.name;
             })->second;
    g.shape.assign(t.shape, t.shape + t.rank);
    g.shape[0] = samples * rows;
    g.rowBytes = t.size_bytes / size_t(t.shape[0]);
    outputs.push_back(std::move(g));
  }
  return outputs;
}

/// Sets the inputs of the run over samples START .. START+N: the rows of
/// those that follow the batch (ROWS), the others whole.
void setRunInputs(tcc_session_t session, const std::map<std::string, tcc::rt::HostTensor> &inputs,
                  const std::map<std::string, int64_t> &rows,
                  std::map<std::string, std::string> &inputFiles, int64_t start, int64_t n) {
  for (const auto &[name, h] : inputs) {
    auto follows = rows.find(name);
    tcc_status status;
    if (follows == rows.end()) {
      status = tcc_session_set_input(session, name.c_str(), h.dtype, int32_t(h.shape.size()),
                                     h.shape.data(), h.bytes.data(), h.bytes.size());
    } else {
      std::vector<int64_t> shape = h.shape;
      shape[0] = n * follows->second;
      size_t rowBytes = h.bytes.size() / size_t(h.shape[0]);
      status = tcc_session_set_input(
          session, name.c_str(), h.dtype, int32_t(shape.size()), shape.data(),
          h.bytes.data() + size_t(start * follows->second) * rowBytes, size_t(shape[0]) * rowBytes);
    }
    if (status != TCC_OK)
      die(inputFiles[name] + ": " + tcc_last_error());
  }
}

/// Copies the outputs of the run over samples START .. START+N into their
/// rows of OUTPUTS.
void gatherRunOutputs(tcc_session_t session, std::vector<Gathered> &outputs, int64_t start,
                      int64_t n) {
  for (Gathered &g : outputs) {
    const void *data;
    size_t size;
    check(tcc_session_get_output(session, g.info.name, &data, &size));
    size_t want = size_t(n * g.rows) * g.rowBytes;
    if (size != want)
      die("internal error: output '" + std::string(g.info.name) + "' of a run of " +
          std::to_string(n) + " samples holds " + std::to_string(size) + " bytes, expected " +
          std::to_string(want));
    std::memcpy(g.bytes.data() + size_t(start * g.rows) * g.rowBytes, data, size);
  }
}

} // namespace

int predictMain(const Options &o) {
  ArtifactHandle loaded(o.model);
  tcc_artifact_t artifact = loaded.a;
  if (!hasEntry(artifact, TCC_ENTRY_INFER))
    die(o.model + " has no infer entry point");
  int32_t entryIndex;
  check(tcc_artifact_find_entry(artifact, TCC_ENTRY_INFER, &entryIndex));
  tcc_entry_info entry;
  check(tcc_artifact_entry_info(artifact, entryIndex, &entry));
  std::vector<tcc_tensor_info> tensors = entryTensors(artifact, TCC_ENTRY_INFER);

  std::map<std::string, tcc::rt::HostTensor> inputs;
  std::map<std::string, std::string> inputFiles;
  readInputs(artifact, o, inputs, inputFiles);
  bool partial;
  const int64_t batch = inferBatch(artifact, tensors, o, &partial);
  const Samples samples = countSamples(artifact, tensors, o, inputs, inputFiles, batch, partial);
  std::vector<Gathered> outputs =
      gatheredOutputs(artifact, tensors, entry, o, batch, partial, samples.count);

  // Where the outputs go is checked before any work, as for --infer.
  std::vector<std::string> paths;
  for (const Gathered &g : outputs)
    paths.push_back(g.file);
  checkOutputDir(o, inputFiles, paths);
  // Every output in memory before the run, so that a lack of memory shows
  // before the work.
  for (Gathered &g : outputs)
    g.bytes.resize(size_t(samples.count) * size_t(g.rows) * g.rowBytes);

  SessionHandle handle = createSession(artifact, o);
  tcc_session_t session = handle.s;
  int64_t runs = 0;
  for (int64_t start = 0; start < samples.count; start += batch, ++runs) {
    const int64_t n = std::min(batch, samples.count - start);
    setRunInputs(session, inputs, samples.rows, inputFiles, start, n);
    check(tcc_session_run(session, TCC_ENTRY_INFER));
    gatherRunOutputs(session, outputs, start, n);
  }
  for (const Gathered &g : outputs) {
    std::string error;
    if (!tcc::rt::writeNpy(g.file, g.info.dtype, g.shape, g.bytes.data(), g.bytes.size(), &error))
      die(error);
  }
  std::printf("predicted %" PRId64 " samples in %" PRId64 " run(s) of infer at batch %" PRId64
              "%s; wrote",
              samples.count, runs, batch,
              partial && samples.count % batch ? " (the last one partial)" : "");
  for (const Gathered &g : outputs)
    std::printf(" %s", g.file.c_str());
  std::printf("\n");
  return 0;
}

} // namespace tcc::run
