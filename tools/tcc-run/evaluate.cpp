//===- evaluate.cpp - tcc-run evaluate: the loss and accuracy of a data set ===//
//
// `tcc-run evaluate MODEL.so --data DIR [--params FILE | --init SEED]
// [--metrics FILE.json]` measures a model on every sample of DIR/NAME.npy,
// batched at the compiled batch, with the runtime's evaluator
// (tcc_evaluator_*): the trainer's --val pass, so the numbers are those a
// training run reports for the same data. It prints one line and, with
// --metrics, writes them as one JSON object.
//
//===----------------------------------------------------------------------===//

#include "tools/tcc-run/common.h"

#include "runtime/support/file_io.h"
#include "runtime/support/file_roles.h"

#include <cinttypes>
#include <cstdio>

namespace tcc::run {
namespace {

/// Owns an evaluator (tcc_evaluator_create, which opens and checks the
/// data); destroyed at scope exit.
struct EvaluatorHandle {
  tcc_evaluator_t e = nullptr;
  EvaluatorHandle(tcc_artifact_t artifact, const tcc_evaluator_options &options) {
    check(tcc_evaluator_create(artifact, &options, &e));
  }
  ~EvaluatorHandle() { tcc_evaluator_destroy(e); }
  EvaluatorHandle(const EvaluatorHandle &) = delete;
  EvaluatorHandle &operator=(const EvaluatorHandle &) = delete;
};

/// The files evaluating may read from DIR: every input of the entry that
/// evaluates, and the labels.
std::vector<tcc::rt::FileRole> dataFiles(tcc_artifact_t artifact, const std::string &dir) {
  std::vector<tcc::rt::FileRole> files;
  const char *entry = hasEntry(artifact, TCC_ENTRY_EVAL_STEP) ? TCC_ENTRY_EVAL_STEP
                      : hasEntry(artifact, TCC_ENTRY_INFER)   ? TCC_ENTRY_INFER
                                                              : nullptr;
  if (entry)
    for (const tcc_tensor_info &t : entryTensors(artifact, entry))
      if (t.role == TCC_ROLE_INPUT)
        files.push_back({"--data", dir + "/" + npyFileName(t.name)});
  files.push_back(
      {"--data", dir + "/" + npyFileName(artifactMetadata(artifact, TCC_METADATA_LABELS, "y"))});
  return files;
}

/// The evaluation as a JSON object: samples, skipped, loss, accuracy,
/// correct, counted (loss and accuracy only where measured; doubles with 17
/// digits, exact).
std::string metricsJson(const tcc_evaluation &e) {
  char text[512];
  int n = std::snprintf(text, sizeof text, "{\"samples\": %" PRId64 ", \"skipped\": %" PRId64,
                        e.samples, e.skipped);
  if (e.has_loss)
    n += std::snprintf(text + n, sizeof text - size_t(n), ", \"loss\": %.17g", e.loss);
  if (e.has_accuracy)
    n += std::snprintf(text + n, sizeof text - size_t(n),
                       ", \"accuracy\": %.17g, \"correct\": %" PRId64 ", \"counted\": %" PRId64,
                       e.accuracy, e.correct, e.counted);
  std::snprintf(text + n, sizeof text - size_t(n), "}\n");
  return text;
}

} // namespace

int evaluateMain(const Options &o) {
  ArtifactHandle loaded(o.model);
  tcc_artifact_t artifact = loaded.a;
  // Where the metrics go is checked before any work: its folder, and that
  // it is none of the files read.
  if (!o.metrics.empty()) {
    size_t slash = o.metrics.rfind('/');
    checkWritableFolder(slash == std::string::npos ? "." : o.metrics.substr(0, slash),
                        "--metrics " + o.metrics);
    std::vector<tcc::rt::FileRole> read = dataFiles(artifact, o.data_dir);
    read.push_back({"the artifact", o.model});
    read.push_back(
        {"--params", o.init ? "" : o.params.empty() ? tcc::rt::paramsBeside(o.model) : o.params});
    std::string error;
    if (!tcc::rt::checkOutputsApart(read, {{"--metrics", o.metrics}}, &error))
      die(error);
  }
  tcc_evaluator_options options;
  tcc_evaluator_options_init(&options);
  auto text = [](const std::string &s) { return s.empty() ? nullptr : s.c_str(); };
  options.data_dir = o.data_dir.c_str();
  options.normalize = text(o.normalize);
  options.augment_input = text(o.augment_input);
  options.image_shape = text(o.image_shape);
  EvaluatorHandle evaluator(artifact, options); // the data is checked first
  SessionHandle session = createSession(artifact, o);
  tcc_evaluation e;
  check(tcc_evaluator_run(evaluator.e, session.s, &e));

  std::printf("evaluated %" PRId64 " samples of %s%s:", e.samples, o.data_dir.c_str(),
              e.skipped ? " in full batches" : "");
  if (e.has_loss)
    std::printf(" loss %.6f", e.loss);
  if (e.has_accuracy)
    std::printf("%s accuracy %.2f%% (%" PRId64 " of %" PRId64 ")", e.has_loss ? "," : "",
                100.0 * e.accuracy, e.correct, e.counted);
  std::printf("\n");
  if (e.skipped) {
    std::printf("note: the last %" PRId64 " samples, fewer than one batch, were not evaluated: "
                "%s takes full batches only (tcc --batch=B makes an artifact that takes partial "
                "batches, for a model whose samples are independent at inference)\n",
                e.skipped, o.model.c_str());
  }
  if (!o.metrics.empty()) {
    std::string json = metricsJson(e);
    std::string error;
    if (!tcc::rt::writeFileAtomic(o.metrics, {{json.data(), json.size()}}, /*durable=*/false,
                                  &error))
      die("--metrics: " + error);
  }
  return 0;
}

} // namespace tcc::run
