//===- tcc-run.cpp - run a compiled tcc artifact ----------------------------===//
//
// `tcc-run MODEL.so --infer --input NAME=FILE ... --output-dir DIR` loads the
// artifact through the public C API, reads each input from a .npy or ONNX
// TensorProto .pb file, runs the entry point and writes every output it
// computes as DIR/NAME.npy. `tcc-run MODEL.so --list` prints the descriptor.
// Every failure is one line, `tcc-run: error: ...` naming the file or
// tensor, and exit status 1. Plain argv parsing: this tool links no LLVM.
//
//===----------------------------------------------------------------------===//

#include "runtime/include/tcc/tcc.h"

#include "runtime/data/host_tensor.h"
#include "runtime/data/npy.h"
#include "runtime/dtype.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <sys/stat.h>
#include <vector>

#ifndef TCC_VERSION
#define TCC_VERSION "0.1.0"
#endif

namespace {

using tcc::rt::HostTensor;

const char kUsage[] =
    "tcc-run: runs a model compiled by tcc\n"
    "\n"
    "usage: tcc-run MODEL.so --list\n"
    "       tcc-run MODEL.so --infer --input NAME=FILE ... --output-dir DIR [options]\n"
    "       tcc-run MODEL.so --data DIR --steps N --lr X [options]   (a training artifact)\n"
    "\n"
    "  --list               Print the artifact's entry points, tensors (role, name, dtype,\n"
    "                       shape) and its arena and state sizes\n"
    "  --infer              Run the entry point 'infer'\n"
    "  --entry NAME         Run entry point NAME instead of 'infer'\n"
    "  --input NAME=FILE    Input NAME from FILE, a .npy or an ONNX TensorProto .pb; a .pb\n"
    "                       given without NAME= names the input it holds\n"
    "  --output-dir DIR     Write each output the entry computes as DIR/NAME.npy\n"
    "                       ('/' in names becomes '_'); DIR is created if missing\n"
    "  --params FILE        Load the parameters from this safetensors file instead of\n"
    "                       the one beside MODEL.so\n"
    "  --threads N          Threads per parallel loop (default: every available CPU)\n"
    "  --poison             Fill the arena with NaN bytes first (also TCC_POISON_ARENA=1)\n"
    "\n"
    "training (an artifact compiled with --loss; runs its 'train_step' entry point):\n"
    "  --data DIR           DIR/NAME.npy for each input of the step but lr (the labels\n"
    "                       too, e.g. y.npy); the first axis counts samples\n"
    "  --steps N            Optimizer steps to run\n"
    "  --lr X               Learning rate (a runtime input of every step)\n"
    "  --no-shuffle         Batch i holds samples [i*B, (i+1)*B); the final partial batch\n"
    "                       is dropped; after the last full batch it starts at the top\n"
    "  --seed S             Seed of the per-epoch shuffle (default 0)\n"
    "  --metrics FILE       One JSON object per step: {\"step\", \"loss\", \"lr\",\n"
    "                       \"grad_norm\"}\n"
    "  --save FILE          Write the trained parameters (safetensors) at the end\n"
    "  --log-every K        Print a progress line every K steps (default 1)\n"
    "  --lr-schedule KIND   constant (default), warmup (linear from 0 over --warmup\n"
    "                       steps), cosine (after --warmup, down to --min-lr at the\n"
    "                       last step), step (times --gamma every --step-size steps)\n"
    "  --warmup N, --min-lr X, --step-size N, --gamma G   the schedules' settings\n"
    "  --checkpoint-dir DIR Write DIR/checkpoint.safetensors (parameters, optimizer\n"
    "                       state, step, data order) every --save-every steps, at\n"
    "                       the end, and on Ctrl-C; atomically\n"
    "  --save-every K       Steps between checkpoints (default: only at the end)\n"
    "  --resume FILE        Continue from a checkpoint of this model: the same\n"
    "                       parameters, optimizer state, step and batch order\n"
    "  --val DIR            After training, run 'infer' on the full batches of\n"
    "                       DIR/NAME.npy and report the classification accuracy of\n"
    "                       the first output against DIR/y.npy (integer labels)\n"
    "  --help               Print this help\n"
    "  --version            Print the version\n";

/// Thrown for any user-facing failure; main prints it and exits with 1.
struct UsageError {
  std::string message;
};

[[noreturn]] void die(const std::string &message) { throw UsageError{message}; }

/// Dies with the runtime's message when a C API call failed.
void check(tcc_status status) {
  if (status != TCC_OK)
    die(tcc_last_error());
}

struct Options {
  std::string model;
  bool list = false;
  bool run = false;
  std::string entry = "infer";
  std::vector<std::string> inputs; // NAME=FILE or FILE.pb
  std::string outputDir;
  std::string params;
  int threads = 0;
  bool poison = false;
  // Training.
  bool train = false;
  std::string dataDir;
  long steps = 0;
  double lr = 0;
  bool hasLr = false;
  bool shuffle = true;
  uint64_t seed = 0;
  std::string metrics;
  std::string save;
  long logEvery = 1;
  std::string valDir;
  std::string schedule = "constant";
  long warmup = 0, stepSize = 0;
  double minLr = 0, gamma = 0.1;
  std::string checkpointDir;
  long saveEvery = 0;
  std::string resume;
};

/// A non-negative number option value, or death naming the option.
double parseNumber(const std::string &option, const std::string &text) {
  char *end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end || errno || !(v >= 0))
    die(option + " needs a non-negative number, got '" + text + "'");
  return v;
}

/// A non-negative integer option value, or death naming the option.
long parseCount(const std::string &option, const std::string &text) {
  char *end = nullptr;
  errno = 0;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end || errno || v < 0)
    die(option + " needs a non-negative integer, got '" + text + "'");
  return v;
}

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Options parseArgs(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool hasInlineValue = false;
    if (arg.rfind("--", 0) == 0) {
      size_t eq = arg.find('=');
      if (eq != std::string::npos) {
        value = arg.substr(eq + 1);
        arg = arg.substr(0, eq);
        hasInlineValue = true;
      }
    }
    auto takeValue = [&]() -> std::string {
      if (hasInlineValue)
        return value;
      if (i + 1 >= argc)
        die("option " + arg + " needs a value");
      return argv[++i];
    };
    auto noValue = [&] {
      if (hasInlineValue)
        die("option " + arg + " takes no value");
    };
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (arg == "--version") {
      std::printf("tcc-run %s (runtime %s, artifact ABI %u)\n", TCC_VERSION, tcc_runtime_version(),
                  TCC_ABI_VERSION);
      std::exit(0);
    } else if (arg == "--list") {
      noValue();
      o.list = true;
    } else if (arg == "--infer") {
      noValue();
      o.run = true;
    } else if (arg == "--entry") {
      o.entry = takeValue();
      o.run = true;
    } else if (arg == "--input") {
      o.inputs.push_back(takeValue());
    } else if (arg == "--output-dir") {
      o.outputDir = takeValue();
    } else if (arg == "--params") {
      o.params = takeValue();
    } else if (arg == "--threads") {
      std::string n = takeValue();
      char *end = nullptr;
      errno = 0;
      long v = std::strtol(n.c_str(), &end, 10);
      if (n.empty() || *end || errno || v < 1 || v > 65536)
        die("--threads needs a positive integer, got '" + n + "'");
      o.threads = int(v);
    } else if (arg == "--poison") {
      noValue();
      o.poison = true;
    } else if (arg == "--data") {
      o.dataDir = takeValue();
      o.train = true;
    } else if (arg == "--steps") {
      o.steps = parseCount(arg, takeValue());
    } else if (arg == "--lr") {
      std::string v = takeValue();
      char *end = nullptr;
      errno = 0;
      o.lr = std::strtod(v.c_str(), &end);
      if (v.empty() || *end || errno || !(o.lr >= 0) || o.lr > 1e6)
        die("--lr needs a non-negative number, got '" + v + "'");
      o.hasLr = true;
    } else if (arg == "--no-shuffle") {
      noValue();
      o.shuffle = false;
    } else if (arg == "--seed") {
      o.seed = uint64_t(parseCount(arg, takeValue()));
    } else if (arg == "--metrics") {
      o.metrics = takeValue();
    } else if (arg == "--save") {
      o.save = takeValue();
    } else if (arg == "--log-every") {
      o.logEvery = parseCount(arg, takeValue());
      if (o.logEvery < 1)
        die("--log-every needs a positive number of steps");
    } else if (arg == "--val") {
      o.valDir = takeValue();
    } else if (arg == "--lr-schedule") {
      o.schedule = takeValue();
      if (o.schedule != "constant" && o.schedule != "warmup" && o.schedule != "cosine" &&
          o.schedule != "step")
        die("--lr-schedule must be constant, warmup, cosine or step, not '" + o.schedule + "'");
    } else if (arg == "--warmup") {
      o.warmup = parseCount(arg, takeValue());
    } else if (arg == "--min-lr") {
      o.minLr = parseNumber(arg, takeValue());
    } else if (arg == "--step-size") {
      o.stepSize = parseCount(arg, takeValue());
    } else if (arg == "--gamma") {
      o.gamma = parseNumber(arg, takeValue());
    } else if (arg == "--checkpoint-dir") {
      o.checkpointDir = takeValue();
    } else if (arg == "--save-every") {
      o.saveEvery = parseCount(arg, takeValue());
    } else if (arg == "--resume") {
      o.resume = takeValue();
    } else if (arg.size() > 1 && arg[0] == '-') {
      die("unknown option " + arg + " (see --help)");
    } else if (o.model.empty()) {
      o.model = arg;
    } else {
      die("unexpected argument '" + arg + "'; the model is " + o.model);
    }
  }
  if (o.model.empty())
    die("no model given (usage: tcc-run MODEL.so --list | --infer ...)");
  if (o.train) {
    if (o.list || o.run)
      die("--data (training) cannot be combined with --list, --infer or --entry");
    if (o.steps <= 0)
      die("training needs --steps N (a positive number of steps)");
    if (!o.hasLr)
      die("training needs --lr X");
    if ((o.schedule == "warmup" || o.schedule == "cosine") && o.warmup >= o.steps)
      die("--warmup " + std::to_string(o.warmup) + " is not shorter than the run (--steps " +
          std::to_string(o.steps) + ")");
    if (o.schedule == "warmup" && o.warmup == 0)
      die("--lr-schedule=warmup needs --warmup N");
    if (o.schedule == "step" && o.stepSize == 0)
      die("--lr-schedule=step needs --step-size N");
    if (o.schedule == "cosine" && o.minLr > o.lr)
      die("--min-lr is larger than --lr");
    if (o.saveEvery > 0 && o.checkpointDir.empty())
      die("--save-every needs --checkpoint-dir DIR");
    return o;
  }
  if (o.list == o.run)
    die(o.list ? "--list cannot be combined with --infer or --entry"
               : "nothing to do: pass --list, --infer or --data");
  if (o.list && (!o.inputs.empty() || !o.outputDir.empty()))
    die("--list takes no --input or --output-dir");
  if (o.run && o.outputDir.empty())
    die("--output-dir is required to write the outputs");
  return o;
}

/// "f32[2,3]".
std::string typeString(const tcc_tensor_info &t) {
  return std::string(tcc::rt::dtypeName(t.dtype)) + tcc::rt::shapeString(t.shape, size_t(t.rank));
}

const char *roleString(tcc_role role) {
  switch (role) {
  case TCC_ROLE_INPUT:
    return "input";
  case TCC_ROLE_OUTPUT:
    return "output";
  case TCC_ROLE_STATE:
    return "state";
  case TCC_ROLE_PARAM:
    return "param";
  }
  return "?";
}

void list(tcc_artifact_t artifact) {
  tcc_artifact_info info;
  check(tcc_artifact_get_info(artifact, &info));
  std::printf("artifact: %s\n", info.path);
  std::printf("abi version: %u\n", info.abi_version);
  std::printf("producer: %s\n", info.producer);
  std::printf("fingerprint: %s\n", info.fingerprint);
  std::printf("target: %s\n", info.target);
  std::printf("cpu features: %s\n", info.cpu_features);
  std::printf("arena: %lld bytes\n", (long long)info.arena_size);
  std::printf("state: %lld bytes\n", (long long)info.state_size);
  std::printf("entries:");
  for (int32_t i = 0; i < info.num_entries; ++i) {
    tcc_entry_info entry;
    check(tcc_artifact_entry_info(artifact, i, &entry));
    std::printf(" %s", entry.name);
  }
  std::printf("\ntensors:\n");
  for (int32_t i = 0; i < info.num_tensors; ++i) {
    tcc_tensor_info t;
    check(tcc_artifact_tensor_info(artifact, i, &t));
    std::printf("  %-6s %s %s\n", roleString(t.role), t.name, typeString(t).c_str());
  }
}

/// The file name an output is written to: the tensor name with path
/// separators replaced, so every ONNX name stays inside DIR.
std::string outputFileName(const std::string &name) {
  std::string out = name;
  for (char &c : out)
    if (c == '/')
      c = '_';
  if (out.empty() || out == "." || out == "..")
    out = "_" + out;
  return out + ".npy";
}

void makeDirectory(const std::string &dir) {
  // Create each missing component, like mkdir -p.
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/')
      continue;
    std::string prefix = dir.substr(0, pos);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
      die(prefix + ": cannot create the output directory: " + std::strerror(errno));
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    die(dir + ": not a directory");
}

/// Owns a session; destroys it when it goes out of scope.
struct SessionHandle {
  tcc_session_t s = nullptr;
  SessionHandle() = default;
  SessionHandle(SessionHandle &&other) noexcept : s(other.s) { other.s = nullptr; }
  SessionHandle(const SessionHandle &) = delete;
  ~SessionHandle() { tcc_session_destroy(s); }
};

/// A session with o's thread count and poisoning, its parameters from
/// --params or from the file beside the artifact.
SessionHandle createSession(tcc_artifact_t artifact, const Options &o) {
  tcc_session_options options;
  tcc_session_options_init(&options);
  options.num_threads = o.threads;
  options.poison_arena = o.poison;
  options.skip_default_params = !o.params.empty();
  SessionHandle handle;
  tcc_status created = tcc_session_create(artifact, &options, &handle.s);
  if (created == TCC_ERROR_NOT_FOUND && o.params.empty())
    die(std::string(tcc_last_error()) + "; or pass --params FILE");
  check(created);
  if (!o.params.empty())
    check(tcc_session_load_params(handle.s, o.params.c_str()));
  return handle;
}

void infer(tcc_artifact_t artifact, const Options &o) {
  tcc_artifact_info info;
  check(tcc_artifact_get_info(artifact, &info));
  int32_t entryIndex;
  check(tcc_artifact_find_entry(artifact, o.entry.c_str(), &entryIndex));
  tcc_entry_info entry;
  check(tcc_artifact_entry_info(artifact, entryIndex, &entry));

  // Read every input file first: a bad file or name fails before any work.
  std::map<std::string, HostTensor> inputs;
  std::map<std::string, std::string> inputFiles;
  for (const std::string &spec : o.inputs) {
    size_t eq = spec.find('=');
    std::string name = eq == std::string::npos ? "" : spec.substr(0, eq);
    std::string file = eq == std::string::npos ? spec : spec.substr(eq + 1);
    if (eq == std::string::npos && !endsWith(file, ".pb"))
      die("--input " + spec + ": expected NAME=FILE (only a .pb file names its own input)");
    if (file.empty())
      die("--input " + spec + ": no file");
    HostTensor tensor;
    std::string error;
    if (!tcc::rt::readTensorFile(file, tensor, &error))
      die(error);
    if (name.empty())
      name = tensor.name;
    if (name.empty())
      die(file + ": the TensorProto has no name; pass --input NAME=" + file);
    int32_t index;
    if (tcc_artifact_find_tensor(artifact, name.c_str(), TCC_ROLE_INPUT, &index) != TCC_OK)
      die(file + ": " + tcc_last_error());
    if (inputs.count(name))
      die(file + ": input '" + name + "' is already given by " + inputFiles[name]);
    tcc_tensor_info declared;
    check(tcc_artifact_tensor_info(artifact, index, &declared));
    // NumPy has no bfloat16: accept its bit patterns as uint16.
    if (declared.dtype == TCC_DTYPE_BF16 && tensor.dtype == TCC_DTYPE_U16)
      tensor.dtype = TCC_DTYPE_BF16;
    inputFiles[name] = file;
    inputs[name] = std::move(tensor);
  }
  std::string missing;
  for (int32_t k = 0; k < entry.num_tensors; ++k) {
    tcc_tensor_info t;
    check(tcc_artifact_tensor_info(artifact, entry.tensor_indices[k], &t));
    if (t.role == TCC_ROLE_INPUT && !inputs.count(t.name))
      missing +=
          (missing.empty() ? "'" : ", '") + std::string(t.name) + "' (" + typeString(t) + ")";
  }
  if (!missing.empty())
    die(o.model + ": entry '" + o.entry + "' needs input(s) " + missing +
        "; pass --input NAME=FILE for each");

  SessionHandle handle = createSession(artifact, o);
  tcc_session_t session = handle.s;

  for (const auto &[name, tensor] : inputs) {
    if (tcc_session_set_input(session, name.c_str(), tensor.dtype, int32_t(tensor.shape.size()),
                              tensor.shape.data(), tensor.bytes.data(),
                              tensor.bytes.size()) != TCC_OK)
      die(inputFiles[name] + ": " + tcc_last_error());
  }
  check(tcc_session_run(session, o.entry.c_str()));

  makeDirectory(o.outputDir);
  for (int32_t k = 0; k < entry.num_tensors; ++k) {
    tcc_tensor_info t;
    check(tcc_artifact_tensor_info(artifact, entry.tensor_indices[k], &t));
    if (t.role != TCC_ROLE_OUTPUT)
      continue;
    const void *data;
    size_t size;
    check(tcc_session_get_output(session, t.name, &data, &size));
    std::string path = o.outputDir + "/" + outputFileName(t.name);
    std::string error;
    if (!tcc::rt::writeNpy(path, t.dtype, std::vector<int64_t>(t.shape, t.shape + t.rank), data,
                           size, &error))
      die(error);
  }
}

/// One training input: all samples, and the bytes of one sample.
struct Samples {
  std::string name;
  HostTensor data;
  tcc_tensor_info declared;
  size_t sampleBytes = 0;
  std::vector<uint8_t> batch;
};

/// The samples of every input of ENTRY but lr, from DIR/NAME.npy (extra
/// names are read too: EXTRA, e.g. the labels for validation).
struct DataSet {
  std::vector<Samples> inputs;
  int64_t samples = -1, batch = -1;
  std::string firstFile;
};

void readSamples(DataSet &set, const std::string &dir, const tcc_tensor_info &t,
                 const std::string &model) {
  Samples s;
  s.name = t.name;
  s.declared = t;
  std::string file = dir + "/" + outputFileName(t.name);
  std::string error;
  if (!tcc::rt::readNpy(file, s.data, &error))
    die(error);
  if (t.rank < 1)
    die(model + ": input '" + s.name + "' has no batch dimension");
  if (s.data.dtype != t.dtype || s.data.shape.size() != size_t(t.rank) ||
      !std::equal(s.data.shape.begin() + 1, s.data.shape.end(), t.shape + 1))
    die(file + ": holds " + std::string(tcc::rt::dtypeName(s.data.dtype)) +
        tcc::rt::shapeString(s.data.shape.data(), s.data.shape.size()) + ", but '" + s.name +
        "' takes samples of " + typeString(t) + " (any first dimension)");
  if (set.samples >= 0 && s.data.shape[0] != set.samples)
    die(file + ": holds " + std::to_string(s.data.shape[0]) + " samples, but " + set.firstFile +
        " holds " + std::to_string(set.samples));
  if (set.batch >= 0 && t.shape[0] != set.batch)
    die(model + ": the inputs disagree on the batch size");
  // Bad data stops here, not as a NaN loss (or silently wrong weights) later.
  size_t elements = s.data.bytes.size() / tcc::rt::dtypeSize(s.data.dtype);
  auto badFloat = [&](auto *values) {
    for (size_t i = 0; i < elements; ++i)
      if (!std::isfinite(double(values[i])))
        die(file + ": value " + std::to_string(double(values[i])) + " at sample " +
            std::to_string(i / (elements / size_t(std::max<int64_t>(s.data.shape[0], 1)))) +
            " is not finite");
  };
  if (s.data.dtype == TCC_DTYPE_F32)
    badFloat(reinterpret_cast<const float *>(s.data.bytes.data()));
  else if (s.data.dtype == TCC_DTYPE_F64)
    badFloat(reinterpret_cast<const double *>(s.data.bytes.data()));
  set.samples = s.data.shape[0];
  set.batch = t.shape[0];
  set.firstFile = file;
  s.sampleBytes = s.data.bytes.size() / size_t(std::max<int64_t>(set.samples, 1));
  s.batch.resize(s.sampleBytes * size_t(set.batch));
  set.inputs.push_back(std::move(s));
}

/// Copies samples ORDER[first, first + batch) of every input into its batch
/// buffer and sets it on SESSION.
void setBatch(tcc_session_t session, DataSet &set, const std::vector<int64_t> &order,
              int64_t first) {
  for (Samples &s : set.inputs) {
    for (int64_t r = 0; r < set.batch; ++r)
      std::memcpy(s.batch.data() + size_t(r) * s.sampleBytes,
                  s.data.bytes.data() + size_t(order[size_t(first + r)]) * s.sampleBytes,
                  s.sampleBytes);
    check(tcc_session_set_input(session, s.name.c_str(), s.declared.dtype, s.declared.rank,
                                s.declared.shape, s.batch.data(), s.batch.size()));
  }
}

/// Accuracy of `infer`'s first output (class scores on the last axis) on the
/// full batches of DIR, against the integer labels in DIR/LABELS.npy.
void validate(tcc_artifact_t artifact, tcc_session_t session, const Options &o) {
  int32_t entryIndex;
  if (tcc_artifact_find_entry(artifact, "infer", &entryIndex) != TCC_OK)
    die(o.model + " has no infer entry point to validate with");
  tcc_entry_info entry;
  check(tcc_artifact_entry_info(artifact, entryIndex, &entry));
  DataSet set;
  tcc_tensor_info scores{};
  bool hasScores = false;
  for (int32_t k = 0; k < entry.num_tensors; ++k) {
    tcc_tensor_info t;
    check(tcc_artifact_tensor_info(artifact, entry.tensor_indices[k], &t));
    if (t.role == TCC_ROLE_INPUT)
      readSamples(set, o.valDir, t, o.model);
    else if (t.role == TCC_ROLE_OUTPUT && !hasScores) {
      scores = t;
      hasScores = true;
    }
  }
  if (!hasScores || scores.dtype != TCC_DTYPE_F32 || scores.rank != 2 || scores.shape[0] != set.batch)
    die(o.model + ": --val needs an infer entry whose first output is f32[batch, classes]");
  std::string labelsFile = o.valDir + "/y.npy";
  HostTensor labels;
  std::string error;
  if (!tcc::rt::readNpy(labelsFile, labels, &error))
    die(error);
  if (labels.dtype != TCC_DTYPE_I64 || labels.shape.size() != 1 || labels.shape[0] != set.samples)
    die(labelsFile + ": expected " + std::to_string(set.samples) + " int64 labels");
  const int64_t *y = reinterpret_cast<const int64_t *>(labels.bytes.data());
  std::vector<int64_t> order(static_cast<size_t>(set.samples));
  std::iota(order.begin(), order.end(), 0);
  int64_t classes = scores.shape[1], correct = 0, seen = 0;
  std::vector<float> out(size_t(set.batch * classes));
  for (int64_t first = 0; first + set.batch <= set.samples; first += set.batch) {
    setBatch(session, set, order, first);
    check(tcc_session_run(session, "infer"));
    check(tcc_session_copy_output(session, scores.name, out.data(), out.size() * sizeof(float)));
    for (int64_t r = 0; r < set.batch; ++r) {
      const float *row = out.data() + r * classes;
      int64_t best = std::max_element(row, row + classes) - row;
      correct += best == y[first + r];
      ++seen;
    }
  }
  std::printf("validation: accuracy %.2f%% (%lld of %lld samples in full batches of %s)\n",
              100.0 * double(correct) / double(std::max<int64_t>(seen, 1)), (long long)correct,
              (long long)seen, o.valDir.c_str());
}

/// The learning rate of STEP (0-based) under o's schedule.
double learningRate(const Options &o, long step) {
  double lr = o.lr;
  if ((o.schedule == "warmup" || o.schedule == "cosine") && step < o.warmup)
    return lr * double(step + 1) / double(o.warmup);
  if (o.schedule == "cosine") {
    double progress = double(step - o.warmup) / double(std::max(o.steps - o.warmup - 1, 1L));
    return o.minLr + 0.5 * (lr - o.minLr) * (1 + std::cos(M_PI * std::min(progress, 1.0)));
  }
  if (o.schedule == "step")
    return lr * std::pow(o.gamma, double(step / o.stepSize));
  return lr;
}

volatile std::sig_atomic_t interrupted = 0;
extern "C" void onInterrupt(int) { interrupted = 1; }

/// Integer labels (the input y) must name a class of the model's output:
/// [0, classes), classes being the last dimension of infer's first output.
void checkLabels(tcc_artifact_t artifact, const DataSet &set, const Options &o) {
  int32_t entryIndex;
  if (tcc_artifact_find_entry(artifact, "infer", &entryIndex) != TCC_OK)
    return;
  tcc_entry_info entry;
  check(tcc_artifact_entry_info(artifact, entryIndex, &entry));
  int64_t classes = -1;
  for (int32_t k = 0; k < entry.num_tensors && classes < 0; ++k) {
    tcc_tensor_info t;
    check(tcc_artifact_tensor_info(artifact, entry.tensor_indices[k], &t));
    if (t.role == TCC_ROLE_OUTPUT && t.rank >= 1)
      classes = t.shape[t.rank - 1];
  }
  for (const Samples &s : set.inputs) {
    if (s.name != "y" || s.data.dtype != TCC_DTYPE_I64 || classes <= 0)
      continue;
    const int64_t *y = reinterpret_cast<const int64_t *>(s.data.bytes.data());
    size_t n = s.data.bytes.size() / sizeof(int64_t);
    for (size_t i = 0; i < n; ++i)
      if (y[i] < 0 || y[i] >= classes)
        die(o.dataDir + "/y.npy: label " + std::to_string(y[i]) + " at position " +
            std::to_string(i) + " is not a class of the model's " + std::to_string(classes) +
            " outputs [0, " + std::to_string(classes) + ")");
  }
}

/// Runs `train_step` for o.steps steps over the samples in o.dataDir.
void train(tcc_artifact_t artifact, const Options &o) {
  int32_t entryIndex;
  if (tcc_artifact_find_entry(artifact, "train_step", &entryIndex) != TCC_OK)
    die(o.model + " has no train_step entry point; compile it with --loss=... to train");
  tcc_entry_info entry;
  check(tcc_artifact_entry_info(artifact, entryIndex, &entry));

  // Every input but lr comes from DIR/NAME.npy; all share the sample count.
  DataSet set;
  bool hasLrInput = false, hasLoss = false, hasStepInput = false, hasGradNorm = false;
  for (int32_t k = 0; k < entry.num_tensors; ++k) {
    tcc_tensor_info t;
    check(tcc_artifact_tensor_info(artifact, entry.tensor_indices[k], &t));
    if (t.role == TCC_ROLE_OUTPUT && std::string(t.name) == "loss")
      hasLoss = true;
    if (t.role == TCC_ROLE_OUTPUT && std::string(t.name) == "grad_norm")
      hasGradNorm = true;
    if (t.role != TCC_ROLE_INPUT)
      continue;
    if (std::string(t.name) == "lr") {
      if (t.dtype != TCC_DTYPE_F32 || t.rank != 0)
        die(o.model + ": input 'lr' is " + typeString(t) + ", expected f32[]");
      hasLrInput = true;
      continue;
    }
    if (std::string(t.name) == "step") {
      if (t.dtype != TCC_DTYPE_F32 || t.rank != 0)
        die(o.model + ": input 'step' is " + typeString(t) + ", expected f32[]");
      hasStepInput = true;
      continue;
    }
    readSamples(set, o.dataDir, t, o.model);
  }
  if (!hasLrInput || !hasLoss)
    die(o.model + ": train_step lacks the 'lr' input or the 'loss' output");
  if (set.inputs.empty())
    die(o.model + ": train_step has no data inputs");
  checkLabels(artifact, set, o);
  int64_t samples = set.samples, batch = set.batch;
  if (samples < batch)
    die(set.firstFile + ": holds " + std::to_string(samples) + " samples, fewer than one batch of " +
        std::to_string(batch));

  SessionHandle handle = createSession(artifact, o);
  tcc_session_t session = handle.s;

  FILE *metrics = nullptr;
  if (!o.metrics.empty() && !(metrics = std::fopen(o.metrics.c_str(), "w")))
    die(o.metrics + ": cannot open for writing: " + std::strerror(errno));
  struct FileGuard {
    FILE *f;
    ~FileGuard() {
      if (f)
        std::fclose(f);
    }
  } metricsGuard{metrics};

  // Sample order: in order, or a fresh permutation every epoch.
  int64_t perEpoch = samples / batch;
  std::vector<int64_t> order(static_cast<size_t>(samples));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(o.seed);

  // The data-order settings a checkpoint records, to resume exactly.
  std::map<std::string, std::string> run = {
      {"seed", std::to_string(o.seed)},       {"shuffle", o.shuffle ? "1" : "0"},
      {"samples", std::to_string(samples)},   {"batch", std::to_string(batch)}};
  long first = 0;
  if (!o.resume.empty()) {
    check(tcc_session_load_checkpoint(session, o.resume.c_str()));
    char value[64];
    for (const auto &[key, expected] : run) {
      check(tcc_checkpoint_get_metadata(o.resume.c_str(), key.c_str(), value, sizeof value));
      if (expected != value)
        die(o.resume + ": the checkpoint was made with " + key + " " + value + ", this run has " +
            expected + "; resuming would change the batches");
    }
    check(tcc_checkpoint_get_metadata(o.resume.c_str(), "step", value, sizeof value));
    first = std::strtol(value, nullptr, 10);
    if (first < 0 || first > o.steps)
      die(o.resume + ": checkpoint step " + std::to_string(first) + " is outside this run of " +
          std::to_string(o.steps) + " steps");
    // Replay the shuffles of the steps already taken.
    for (long step = 0; step < first; ++step)
      if (step % perEpoch == 0 && o.shuffle)
        std::shuffle(order.begin(), order.end(), rng);
    std::printf("resumed from %s at step %ld\n", o.resume.c_str(), first);
  }
  auto saveCheckpoint = [&](long stepsDone) {
    if (o.checkpointDir.empty())
      return;
    makeDirectory(o.checkpointDir);
    std::map<std::string, std::string> metadata = run;
    metadata["step"] = std::to_string(stepsDone);
    std::vector<const char *> keys, values;
    for (const auto &[k, v] : metadata) {
      keys.push_back(k.c_str());
      values.push_back(v.c_str());
    }
    std::string path = o.checkpointDir + "/checkpoint.safetensors";
    check(tcc_session_save_checkpoint(session, path.c_str(), int32_t(keys.size()), keys.data(),
                                      values.data()));
  };
  auto previous = std::signal(SIGINT, onInterrupt);
  struct SignalGuard {
    void (*previous)(int);
    ~SignalGuard() { std::signal(SIGINT, previous); }
  } signalGuard{previous};

  double windowLoss = 0;
  long windowSteps = 0;
  auto windowStart = std::chrono::steady_clock::now();
  for (long step = first; step < o.steps; ++step) {
    if (interrupted) {
      saveCheckpoint(step);
      die("interrupted at step " + std::to_string(step) +
          (o.checkpointDir.empty() ? std::string(" (no --checkpoint-dir: nothing saved)")
                                   : "; checkpoint written to " + o.checkpointDir +
                                         "/checkpoint.safetensors (resume with --resume)"));
    }
    float lr = float(learningRate(o, step));
    int64_t b = step % perEpoch;
    if (b == 0 && o.shuffle)
      std::shuffle(order.begin(), order.end(), rng);
    setBatch(session, set, order, b * batch);
    check(tcc_session_set_input(session, "lr", TCC_DTYPE_F32, 0, nullptr, &lr, sizeof lr));
    if (hasStepInput) {
      float count = float(step + 1); // 1-based, as PyTorch's optimizers count
      check(tcc_session_set_input(session, "step", TCC_DTYPE_F32, 0, nullptr, &count,
                                  sizeof count));
    }
    check(tcc_session_run(session, "train_step"));
    float loss, gradNorm = std::nanf("");
    check(tcc_session_copy_output(session, "loss", &loss, sizeof loss));
    if (hasGradNorm)
      check(tcc_session_copy_output(session, "grad_norm", &gradNorm, sizeof gradNorm));
    if (!std::isfinite(loss))
      die("step " + std::to_string(step + 1) + ": the loss is " + std::to_string(loss) +
          "; stopping (the parameters are not saved)");
    if (metrics) {
      std::fprintf(metrics, "{\"step\": %ld, \"loss\": %.9g, \"lr\": %.9g", step + 1,
                   double(loss), double(lr));
      if (hasGradNorm)
        std::fprintf(metrics, ", \"grad_norm\": %.9g", double(gradNorm));
      std::fputs("}\n", metrics);
    }
    windowLoss += loss;
    ++windowSteps;
    if (o.saveEvery > 0 && (step + 1) % o.saveEvery == 0 && step + 1 < o.steps)
      saveCheckpoint(step + 1);
    if ((step + 1) % o.logEvery == 0 || step + 1 == o.steps) {
      auto now = std::chrono::steady_clock::now();
      double seconds = std::chrono::duration<double>(now - windowStart).count();
      if (o.logEvery == 1)
        std::printf("step %ld loss %.6f lr %g\n", step + 1, double(loss), double(lr));
      else
        std::printf("step %ld loss %.6f (mean of %ld) lr %g epoch %.2f %.0f samples/s\n", step + 1,
                    windowLoss / double(windowSteps), windowSteps, double(lr),
                    double((step + 1) * batch) / double(samples),
                    double(windowSteps * batch) / std::max(seconds, 1e-9));
      std::fflush(stdout);
      windowLoss = 0;
      windowSteps = 0;
      windowStart = now;
    }
  }
  saveCheckpoint(o.steps);
  if (!o.save.empty())
    check(tcc_session_save_params(session, o.save.c_str()));
  if (!o.valDir.empty())
    validate(artifact, session, o);
}

int runMain(int argc, char **argv) {
  Options o = parseArgs(argc, argv);
  tcc_artifact_t artifact;
  check(tcc_artifact_load(o.model.c_str(), &artifact));
  struct ArtifactGuard {
    tcc_artifact_t a;
    ~ArtifactGuard() { tcc_artifact_destroy(a); }
  } guard{artifact};
  if (o.list)
    list(artifact);
  else if (o.train)
    train(artifact, o);
  else
    infer(artifact, o);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return runMain(argc, argv);
  } catch (const UsageError &e) {
    std::fprintf(stderr, "tcc-run: error: %s\n", e.message.c_str());
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "tcc-run: error: out of memory\n");
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tcc-run: error: %s\n", e.what());
  }
  return 1;
}
