//===- personalize.cpp - an application that trains the model it ships ---===//
//
// A classifier personalized on the user's own samples, built against the
// installed tcc SDK (find_package(tcc), tcc::runtime, <tcc/tcc.hpp>): it reads
// the user's labelled samples (CSV: four features, a class), fine-tunes the
// compiled model on them in memory with the tcc trainer, checkpointing into
// its state folder, and then classifies the feature rows it reads on stdin.
// A run that is cut short (Ctrl-C, a kill, or --stop-after for the test)
// leaves a checkpoint; the next run resumes from it and ends with exactly
// the weights of a run that never stopped.
//
//   personalize MODEL.so SAMPLES.csv STATE_DIR [--steps N] [--stop-after K]
//
//===----------------------------------------------------------------------===//

#include <tcc/tcc.hpp>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <sys/stat.h>

namespace {

constexpr int kFeatures = 4;

struct Samples {
  std::vector<float> x; // [n, kFeatures]
  std::vector<int64_t> y;
};

/// Rows "f1,f2,f3,f4[,label]" ('#' starts a comment line); dies naming the
/// line that is not.
bool parseRow(const std::string &line, bool labelled, float *features, int64_t *label) {
  std::stringstream in(line);
  std::string cell;
  for (int i = 0; i < kFeatures; ++i) {
    if (!std::getline(in, cell, ','))
      return false;
    features[i] = std::strtof(cell.c_str(), nullptr);
  }
  if (labelled) {
    if (!std::getline(in, cell, ','))
      return false;
    *label = std::strtoll(cell.c_str(), nullptr, 10);
  }
  return true;
}

Samples readSamples(const std::string &path) {
  std::ifstream file(path);
  if (!file)
    throw std::runtime_error(path + ": cannot open");
  Samples s;
  std::string line;
  for (int number = 1; std::getline(file, line); ++number) {
    if (line.empty() || line[0] == '#')
      continue;
    float f[kFeatures];
    int64_t label = 0;
    if (!parseRow(line, true, f, &label))
      throw std::runtime_error(path + ":" + std::to_string(number) + ": expected 4 numbers and a class");
    s.x.insert(s.x.end(), f, f + kFeatures);
    s.y.push_back(label);
  }
  return s;
}

/// The trainer, for the signal handler: Ctrl-C checkpoints and stops.
tcc_trainer_t activeTrainer = nullptr;
extern "C" void onSignal(int) { tcc_trainer_request_stop(activeTrainer); }

/// Fine-tunes SESSION on SAMPLES for STEPS steps, resuming from STATE's
/// checkpoint when one is there. Returns false when the run was stopped.
bool train(const tcc::Artifact &artifact, tcc::Session &session, const Samples &samples,
           const std::string &state, long steps, long stopAfter) {
  int64_t n = int64_t(samples.y.size());
  std::vector<int64_t> xShape = {n, kFeatures}, yShape = {n};
  tcc_trainer_array data[] = {tcc::trainerArray("features", samples.x, xShape),
                              tcc::trainerArray("y", samples.y, yShape)};
  std::string checkpoint = state + "/checkpoint.safetensors";
  std::string metrics = state + "/metrics.jsonl";
  ::mkdir(state.c_str(), 0755); // the trainer checks it: an error is reported there
  struct stat st;
  bool resume = ::stat(checkpoint.c_str(), &st) == 0;

  tcc_trainer_options o = tcc::trainerOptions();
  o.data = data;
  o.num_data = 2;
  o.steps = steps;
  o.lr = 0.05;
  o.seed = 1;
  o.checkpoint_dir = state.c_str();
  o.save_every = 5;
  o.resume = resume ? checkpoint.c_str() : nullptr;
  o.metrics = metrics.c_str();
  o.log_every = 10;
  // Progress to stderr: stdout carries the predictions.
  o.log = [](void *, const char *line) { std::fprintf(stderr, "[train] %s\n", line); };
  // --stop-after K: stop at step K as an interruption would.
  struct Stop {
    long after;
    tcc_trainer_t trainer;
  } stop{stopAfter, nullptr};
  o.on_step = [](void *user, const tcc_trainer_step_info *info) {
    auto *s = static_cast<Stop *>(user);
    if (s->after > 0 && info->step == s->after)
      tcc_trainer_request_stop(s->trainer);
    return 0;
  };
  o.on_step_user = &stop;

  tcc::Trainer trainer(artifact, o);
  stop.trainer = trainer.get();
  activeTrainer = trainer.get();
  std::signal(SIGINT, onSignal);
  std::signal(SIGTERM, onSignal);
  try {
    trainer.run(session);
  } catch (const tcc::Error &e) {
    activeTrainer = nullptr;
    if (e.status() != TCC_ERROR_INTERRUPTED)
      throw;
    std::fprintf(stderr, "[train] %s\n", e.what());
    return false;
  }
  activeTrainer = nullptr;
  std::fprintf(stderr, "[train] %s %lld steps on %lld samples\n", resume ? "resumed to" : "trained",
               (long long)trainer.stepsDone(), (long long)n);
  return true;
}

/// Classifies the rows of stdin with the model's "infer", a compiled batch
/// at a time (the last one padded with zeros).
void classify(const tcc::Artifact &artifact, tcc::Session &session) {
  std::vector<int64_t> shape;
  int64_t classes = 0;
  for (const tcc::TensorInfo &t : artifact.entryTensors("infer")) {
    if (t.role == TCC_ROLE_INPUT)
      shape = t.shape;
    else if (t.role == TCC_ROLE_OUTPUT)
      classes = t.shape.back();
  }
  int64_t batch = shape[0];
  std::vector<float> x(size_t(batch * kFeatures), 0.0f);
  int64_t rows = 0;
  auto flush = [&] {
    session.setInput("features", x, shape);
    session.run("infer");
    std::vector<float> logits = session.output<float>("logits");
    for (int64_t r = 0; r < rows; ++r) {
      const float *row = logits.data() + r * classes;
      std::printf("class %ld\n", long(std::max_element(row, row + classes) - row));
    }
    std::fill(x.begin(), x.end(), 0.0f);
    rows = 0;
  };
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    int64_t unused;
    if (!parseRow(line, false, x.data() + rows * kFeatures, &unused))
      throw std::runtime_error("stdin: expected 4 numbers, got '" + line + "'");
    if (++rows == batch)
      flush();
  }
  if (rows)
    flush();
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: personalize MODEL.so SAMPLES.csv STATE_DIR [--steps N] "
                         "[--stop-after K]\n");
    return 2;
  }
  long steps = 60, stopAfter = 0;
  for (int i = 4; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    (flag == "--steps" ? steps : stopAfter) = std::strtol(argv[i + 1], nullptr, 10);
  }
  try {
    tcc::Artifact artifact(argv[1]);
    tcc_session_options options = tcc::sessionOptions();
    options.num_threads = 1;
    tcc::Session session(artifact, options); // the shipped weights
    if (!train(artifact, session, readSamples(argv[2]), argv[3], steps, stopAfter))
      return 3; // stopped: the next run resumes
    classify(artifact, session);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "personalize: %s\n", e.what());
    return 1;
  }
  return 0;
}
