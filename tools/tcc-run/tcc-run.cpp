//===- tcc-run.cpp - run a compiled tcc artifact ----------------------------===//
//
// `tcc-run MODEL.so --infer --input NAME=FILE ... --output-dir DIR` loads the
// artifact through the public C API, reads each input from a .npy or ONNX
// TensorProto .pb file, runs the entry point and writes every output it
// computes as DIR/NAME.npy. `tcc-run MODEL.so --list` prints the descriptor.
// The subcommands evaluate, predict and sweep have files of their own.
// Every failure is one line, `tcc-run: error: ...` naming the file or
// tensor, and exit status 1. Plain argv parsing: this tool links no LLVM.
// Training (--data) is the runtime's trainer (tcc_trainer_* in tcc.h): this
// file turns the flags into its options.
//
//===----------------------------------------------------------------------===//

#include "tools/tcc-run/common.h"

#include "runtime/data/host_tensor.h"
#include "runtime/data/npy.h"
#include "runtime/dtype.h"
#include "runtime/support/crash_report.h"
#include "runtime/support/file_roles.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <exception>
#include <map>
#include <string>
#include <vector>

#ifndef TCC_VERSION
#define TCC_VERSION "0.1.0"
#endif

namespace tcc::run {
namespace {

using tcc::rt::HostTensor;

/// The help up to the trainer's options, which trainerUsage prints from
/// trainer_options.def.
const char kUsage[] =
    "tcc-run: runs a model compiled by tcc\n"
    "\n"
    "usage: tcc-run MODEL.so --list\n"
    "       tcc-run MODEL.so --infer --input NAME=FILE ... --output-dir DIR [options]\n"
    "       tcc-run MODEL.so --data DIR --steps N --lr X [options]   (a training artifact)\n"
    "       tcc-run evaluate MODEL.so --data DIR [--metrics FILE.json] [options]\n"
    "       tcc-run predict MODEL.so --input NAME=FILE ... --output-dir DIR [options]\n"
    "       tcc-run sweep MODEL.so --data DIR --steps N --lr X,Y,... [--weight-decay A,B,...]\n"
    "               [--momentum|--beta1|--beta2|--eps|--grad-clip LIST] [--seeds K]\n"
    "               [--random N] [--jobs J] [--halving] [--trial-dir DIR] [--save FILE]\n"
    "               --out FILE.jsonl\n"
    "               [training options]\n"
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
    "  --init SEED          Generate the parameters instead of loading a file (not with\n"
    "                       --params or --resume); every parameter must be f32. In\n"
    "                       descriptor order, one std::mt19937_64(SEED) for the model.\n"
    "                       Each parameter from the distribution tcc recorded from the\n"
    "                       model's initial values (--list shows it): constant V;\n"
    "                       uniform LO HI: LO + (HI - LO) (a >> 11) / 2^53; normal M S:\n"
    "                       M + S z, z = sqrt(-2 ln u1) cos(2 pi u2) with u1 = ((a >> 11)\n"
    "                       + 1) / 2^53, u2 = (b >> 11) / 2^53 (a, b raw outputs; double,\n"
    "                       rounded to f32). Without a record: rank >= 2: 0.02 z;\n"
    "                       rank 1: ones if the lowercased name contains 'norm', 'ln'\n"
    "                       or 'gamma', else zeros; rank 0: zero. The model's buffers\n"
    "                       (record 'exact') keep the values of the file beside MODEL.so.\n"
    "                       Prints 'initialized N parameters (M values) from seed S' to\n"
    "                       stderr\n"
    "  --threads N          Threads per parallel loop (default: every available CPU)\n"
    "  --poison             Fill the arena with NaN bytes first (also TCC_POISON_ARENA=1)\n"
    "\n"
    "training (an artifact compiled with --loss; runs its 'train_step' entry point):\n"
    // The trainer's options follow (trainerUsage), then kUsageTail.
    ;

const char kUsageTail[] =
    "  --collective-timeout S  Under mpirun / srun (an artifact compiled with tcc\n"
    "                       --data-parallel): how long a rank waits for the others\n"
    "                       in any collective before the job ends with an error\n"
    "                       naming it (default 60 s)\n"
    "\n"
    "evaluate (the loss and accuracy over a whole data set; --params, --init, --threads,\n"
    "          --poison, --normalize, --augment-input and --image-shape apply):\n"
    "  --data DIR           DIR/NAME.npy for each input of 'eval_step' (else 'infer')\n"
    "                       and the labels; every sample is evaluated, B at a time,\n"
    "                       the last batch partial when the artifact takes partial\n"
    "                       batches (--list says); otherwise the samples after the\n"
    "                       last full batch are left out, and a note says so. Prints\n"
    "                       the mean loss over the samples (eval_step) and the\n"
    "                       accuracy (a classifier's first output against int64\n"
    "                       labels), as --val does during training\n"
    "  --metrics FILE.json  Also write {\"samples\", \"skipped\", \"loss\", \"accuracy\",\n"
    "                       \"correct\", \"counted\"}\n"
    "\n"
    "predict (infer over every sample of the inputs; --params, --init, --threads and\n"
    "         --poison apply):\n"
    "  --input NAME=FILE    As for --infer, but with any number of samples: infer runs\n"
    "                       on B at a time (a partial last batch when the artifact\n"
    "                       takes one; otherwise whole batches only)\n"
    "  --output-dir DIR     Each output with rows per sample as DIR/NAME.npy, all\n"
    "                       samples in order (the others, a value per run, are not\n"
    "                       written)\n"
    "\n"
    "sweep (trials of one artifact; every other training option applies to all):\n"
    "  --lr, --weight-decay, ... LIST   Comma-separated values: the grid of every\n"
    "                       combination; with --random N, N draws where a value may\n"
    "                       be a range LO:HI (uniform) or LO:HI:log (log-uniform)\n"
    "  --seeds K            Each setting with seeds S .. S+K-1 (S = --seed)\n"
    "  --jobs J             Trials at a time, the cores split between them\n"
    "  --halving            Successive halving: every trial to the first rung, the\n"
    "                       better half (validation loss at the rung, else the mean\n"
    "                       training loss of its last quarter) on to the next\n"
    "  --trial-dir DIR      DIR/trial-N.jsonl and .safetensors: each trial's metrics\n"
    "                       and final parameters (and, with --halving, checkpoints)\n"
    "  --save FILE          The best trial's final parameters (the best validation\n"
    "                       metric, else the lowest final loss)\n"
    "  --out FILE.jsonl     One line per trial: its settings, steps, final_loss,\n"
    "                       best_val_loss (or best_val_accuracy) and best_step\n"
    "  --help               Print this help\n"
    "  --version            Print the version\n";

/// A finite non-negative number option value, or death naming the option.
double parseNumber(const std::string &option, const std::string &text) {
  char *end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end || errno || !(v >= 0) || !std::isfinite(v))
    die(option + " needs a finite non-negative number, got '" + text + "'");
  return v;
}

/// A learning rate (OPTION's TEXT) as the step takes it, an f32: positive
/// (or 0 when ZERO is allowed), at most 1e6, and not lost to f32 rounding.
double parseRate(const std::string &option, const std::string &text, bool zero) {
  char *end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end || errno || !(zero ? v >= 0 : v > 0) || v > 1e6)
    die(option + " needs a " + (zero ? "non-negative" : "positive") +
        " number up to 1e6, got '" + text + "'");
  if (v > 0 && !std::isnormal(float(v)))
    die(option + " " + text + " is below the smallest normal f32 (1.2e-38), the precision the "
                              "step computes the update in");
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

/// A positive integer option value (a count of WHAT), or death naming the
/// option.
long parsePositive(const std::string &option, const std::string &text, const char *what) {
  long v = parseCount(option, text);
  if (v < 1)
    die(option + " needs a positive number of " + what);
  return v;
}

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// The value V of the trainer's option OPTION (ROW's flag), read as ROW's
/// kind says; dies naming the option.
void parseValue(const train::OptionRow &row, std::string &out, const std::string &option,
                const std::string &v) {
  train::OptionRange range = train::optionRange(row);
  if (range.isWords() && ("|" + range.words + "|").find("|" + v + "|") == std::string::npos)
    die(option + " must be " + range.wordList() + ", not '" + v + "'");
  out = v;
}
void parseValue(const train::OptionRow &row, long &out, const std::string &option,
                const std::string &v) {
  train::OptionRange range = train::optionRange(row);
  out = range.lo >= 1 ? parsePositive(option, v, range.unit.c_str()) : parseCount(option, v);
}
void parseValue(const train::OptionRow &, uint64_t &out, const std::string &option,
                const std::string &v) {
  out = uint64_t(parseCount(option, v));
}
void parseValue(const train::OptionRow &row, double &out, const std::string &option,
                const std::string &v) {
  if (row.kind == train::OptionKind::Rate) {
    out = parseRate(option, v, /*zero=*/!train::optionRange(row).loOpen);
    return;
  }
  out = parseNumber(option, v);
  // 0 is the C API's "default": refused here, as any scale that is not a
  // positive f32.
  if (row.kind == train::OptionKind::Scale &&
      (!(out > 0) || !std::isfinite(float(out)) || float(out) == 0))
    die(option + " must be a positive finite f32, got '" + v + "'");
}
void parseValue(const train::OptionRow &row, bool &out, const std::string &, const std::string &) {
  out = row.kind == train::OptionKind::Switch;
}

/// The help of the trainer's options, a row of trainer_options.def each: the
/// flag and its value, then the meaning and the default, wrapped.
std::string trainerUsage() {
  const size_t indent = 23, width = 88;
  std::string out;
  for (const train::OptionRow &row : train::kOptionRows) {
    std::string line = "  " + std::string(row.flag) + (*row.arg ? " " + std::string(row.arg) : "");
    line += line.size() < indent ? std::string(indent - line.size(), ' ') : " ";
    std::string text = row.help, shown = row.shownDefault();
    if (!shown.empty())
      text += " (default " + shown + ")";
    bool fresh = true; // nothing yet in the text column of LINE
    for (size_t begin = 0, end; begin < text.size(); begin = end + 1) {
      end = std::min(text.find(' ', begin), text.size());
      std::string word = text.substr(begin, end - begin);
      if (!fresh && line.size() + 1 + word.size() > width) {
        out += line + "\n";
        line.assign(indent, ' ');
        fresh = true;
      }
      line += (fresh ? "" : " ") + word;
      fresh = false;
    }
    out += line + "\n";
  }
  return out;
}

/// One command-line option of tcc-run: its spelling, whether it takes a
/// value (--name VALUE or --name=VALUE), and what it sets (OPTION is its
/// spelling, for the messages of the parsers above).
struct OptionSpec {
  const char *name;
  bool takesValue;
  void (*apply)(Options &o, const std::string &option, const std::string &value);
};

using Arg = const std::string &;

/// Every option but --help and --version, grouped as kUsage lists them.
const OptionSpec kOptions[] = {
    // Inspection and inference.
    {"--list", false, [](Options &o, Arg, Arg) { o.list = true; }},
    {"--infer", false, [](Options &o, Arg, Arg) { o.run = true; }},
    {"--entry", true,
     [](Options &o, Arg, Arg v) {
       o.entry = v;
       o.run = true;
     }},
    {"--input", true, [](Options &o, Arg, Arg v) { o.inputs.push_back(v); }},
    {"--output-dir", true, [](Options &o, Arg, Arg v) { o.outputDir = v; }},
    // Parameters and the session.
    {"--params", true, [](Options &o, Arg, Arg v) { o.params = v; }},
    {"--init", true,
     [](Options &o, Arg option, Arg v) {
       o.initSeed = uint64_t(parseCount(option, v));
       o.init = true;
     }},
    {"--threads", true,
     [](Options &o, Arg, Arg n) {
       char *end = nullptr;
       errno = 0;
       long v = std::strtol(n.c_str(), &end, 10);
       if (n.empty() || *end || errno || v < 1 || v > 65536)
         die("--threads needs a positive integer, got '" + n + "'");
       o.threads = int(v);
     }},
    {"--poison", false, [](Options &o, Arg, Arg) { o.poison = true; }},
    // The trainer's options: a row of trainer_options.def each.
#define TCC_TRAINER_OPTION(NAME, TYPE, KIND, FLAG, ARG, DEFAULT, RANGE, HELP)                    \
  {FLAG, train::OptionKind::KIND != train::OptionKind::Switch &&                                 \
             train::OptionKind::KIND != train::OptionKind::NoSwitch,                             \
   [](Options &o, Arg option, Arg v) { parseValue(TCC_OPTION_ROW(NAME), o.NAME, option, v); }},
#include "runtime/include/tcc/trainer_options.def"
    // Data-parallel runs.
    {"--collective-timeout", true,
     [](Options &o, Arg option, Arg v) {
       o.collectiveTimeout = parseNumber(option, v);
       if (!(o.collectiveTimeout > 0) || !std::isfinite(o.collectiveTimeout))
         die(option + " must be a positive number of seconds, got '" + v + "'");
     }},
};

const OptionSpec *findOption(const std::string &name) {
  for (const OptionSpec &spec : kOptions)
    if (name == spec.name)
      return &spec;
  return nullptr;
}

/// Levenshtein distance of A and B.
size_t editDistance(const std::string &a, const std::string &b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

/// "unknown option --lrr; did you mean --lr?": the nearest option within a
/// third of its length, as compilers suggest.
[[noreturn]] void unknownOption(const std::string &arg) {
  std::string name = arg.substr(0, arg.find('='));
  const OptionSpec *best = nullptr;
  size_t bestDistance = 0;
  for (const OptionSpec &spec : kOptions) {
    size_t d = editDistance(name, spec.name);
    if (!best || d < bestDistance)
      best = &spec, bestDistance = d;
  }
  std::string suggestion;
  if (best && bestDistance > 0 && bestDistance <= std::max<size_t>(2, name.size() / 3))
    suggestion = "; did you mean " + std::string(best->name) + "?";
  die("unknown option " + arg + suggestion + " (see --help)");
}

/// The checks of a training run's options against each other.
void checkTrainingOptions(const Options &o) {
  if (o.list || o.run)
    die("--data (training) cannot be combined with --list, --infer or --entry");
  // The trainer's own checks (steps, lr, the schedule, the options that need
  // each other), before the artifact is loaded.
  tcc_trainer_options options = trainerOptions(o);
  check(tcc_trainer_check_options(&options));
  if (o.has("--min-delta") && o.patience == 0)
    die("--min-delta needs --patience P");
}

/// The options each subcommand takes (the others are refused by name).
void checkCommandOptions(const Options &o) {
  std::vector<std::string> allowed = {"--params", "--init", "--threads", "--poison"};
  if (o.command == "evaluate")
    allowed.insert(allowed.end(),
                   {"--data", "--metrics", "--normalize", "--augment-input", "--image-shape"});
  else
    allowed.insert(allowed.end(), {"--input", "--output-dir"});
  for (const std::string &flag : o.given)
    if (std::find(allowed.begin(), allowed.end(), flag) == allowed.end()) {
      std::string list;
      for (const std::string &a : allowed)
        list += (list.empty() ? "" : ", ") + a;
      die("tcc-run " + o.command + " takes no " + flag + " (its options: " + list + ")");
    }
  if (o.command == "evaluate" && o.data_dir.empty())
    die("tcc-run evaluate needs --data DIR (DIR/NAME.npy for each input and the labels)");
  if (o.command == "predict" && o.inputs.empty())
    die("tcc-run predict needs --input NAME=FILE for each input of infer");
  if (o.command == "predict" && o.outputDir.empty())
    die("tcc-run predict needs --output-dir DIR to write the outputs");
}

/// The checks of the options against each other, once all are read.
void checkOptions(const Options &o) {
  if (o.model.empty())
    die(o.command.empty() ? "no model given (usage: tcc-run MODEL.so --list | --infer ...)"
                          : "no model given (usage: tcc-run " + o.command + " MODEL.so ...)");
  if (o.init && !o.params.empty())
    die("--init and --params cannot be combined: --init generates the parameters that --params "
        "would load");
  if (o.init && !o.resume.empty())
    die("--init and --resume cannot be combined: the checkpoint holds the parameters");
  if (!o.params.empty() && !o.resume.empty())
    die("--params and --resume cannot be combined: the checkpoint holds the parameters");
  if (!o.command.empty())
    return checkCommandOptions(o);
  if (o.overwrite && (!o.train() || o.checkpoint_dir.empty()))
    die("--overwrite applies to a training run's --checkpoint-dir");
  if (o.init && o.list)
    die("--list takes no --init");
  if (o.train())
    return checkTrainingOptions(o);
  if (o.list == o.run)
    die(o.list ? "--list cannot be combined with --infer or --entry"
               : "nothing to do: pass --list, --infer or --data");
  if (o.list && (!o.inputs.empty() || !o.outputDir.empty()))
    die("--list takes no --input or --output-dir");
  if (o.run && o.outputDir.empty())
    die("--output-dir is required to write the outputs");
}

} // namespace

Options parseArgs(const std::vector<std::string> &argv, const std::string &command) {
  int argc = int(argv.size());
  Options o;
  o.command = command;
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
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::fputs(trainerUsage().c_str(), stdout);
      std::fputs(kUsageTail, stdout);
      std::exit(0);
    }
    if (arg == "--version") {
      std::printf("tcc-run %s (runtime %s, artifact ABI %u to %u)\n", TCC_VERSION,
                  tcc_runtime_version(), TCC_ABI_MIN_VERSION, TCC_ABI_VERSION);
      std::exit(0);
    }
    if (const OptionSpec *spec = findOption(arg)) {
      if (!spec->takesValue && hasInlineValue)
        die("option " + arg + " takes no value");
      if (spec->takesValue && !hasInlineValue) {
        if (i + 1 >= argc)
          die("option " + arg + " needs a value");
        value = argv[++i];
      }
      spec->apply(o, arg, value);
      o.given.push_back(arg);
    } else if (arg.size() > 1 && arg[0] == '-') {
      unknownOption(arg);
    } else if (o.model.empty()) {
      o.model = arg;
    } else {
      die("unexpected argument '" + arg + "'; the model is " + o.model);
    }
  }
  checkOptions(o);
  return o;
}

namespace {

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

/// Whether the device artifact at PATH, which the runtime has loaded, has
/// host twins of its kernels (tcc --cuda-emulation): read from the
/// descriptor it exports (abi.h), as the runtime reads it.
bool hasEmulatedKernels(const char *path) {
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!handle)
    return false;
  bool twins = false;
  if (auto get = reinterpret_cast<tcc_abi_descriptor_fn>(dlsym(handle, TCC_ABI_DESCRIPTOR_SYMBOL)))
    if (const tcc_abi_descriptor *d = get())
      twins = d->struct_size >= offsetof(tcc_abi_descriptor, emulated_kernels) +
                                    sizeof d->emulated_kernels &&
              d->emulated_kernels;
  dlclose(handle);
  return twins;
}

/// The device line of --list: the device compiled for and, for CUDA, what
/// TCC_CUDA_DEVICE=emulated does with it.
std::string deviceLine(const char *device, const char *path) {
  std::string line = device;
  if (std::strncmp(device, "cuda:", 5) != 0)
    return line;
  const char *env = std::getenv("TCC_CUDA_DEVICE");
  bool emulated = env && std::strcmp(env, "emulated") == 0;
  bool twins = hasEmulatedKernels(path);
  if (emulated && twins)
    return line + ", run on the emulated CUDA device (host CPU; TCC_CUDA_DEVICE=emulated)";
  if (emulated)
    return line + " (compiled without --cuda-emulation: the emulated CUDA device cannot run it)";
  if (twins)
    return line + " (with host twins of its kernels: TCC_CUDA_DEVICE=emulated runs it on the "
                  "emulated CUDA device)";
  return line;
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
  const char *variant = nullptr;
  check(tcc_artifact_get_cpu_variant(artifact, &variant));
  if (*variant)
    std::printf("cpu variant: %s\n", variant);
  const char *device = nullptr;
  check(tcc_artifact_get_device(artifact, &device));
  std::printf("device: %s\n", deviceLine(device, info.path).c_str());
  std::printf("arena: %lld bytes\n", (long long)info.arena_size);
  std::printf("state: %lld bytes\n", (long long)info.state_size);
  std::string batch = artifactMetadata(artifact, TCC_METADATA_BATCH, "");
  if (batch.empty())
    std::printf("partial batches: no (every run takes the compiled batch)\n");
  else
    std::printf("partial batches: infer and eval_step take 1 to %s samples\n", batch.c_str());
  std::string buckets = artifactMetadata(artifact, TCC_METADATA_DATA_PARALLEL, "");
  std::string zero = artifactMetadata(artifact, TCC_METADATA_ZERO, "");
  if (!zero.empty())
    std::printf("data parallel: ZeRO-1, the optimizer state sharded over the ranks (flat "
                "parameters in chunks x elements = %s; any number of ranks, under mpirun)\n",
                zero.c_str());
  else if (!buckets.empty())
    std::printf("data parallel: train_step averages %s gradient bucket(s) over the ranks "
                "(any number, under mpirun)\n", buckets.c_str());
  std::string lengths = artifactMetadata(artifact, TCC_METADATA_LENGTH_BUCKETS, "");
  if (!lengths.empty())
    std::printf("length buckets: %s = %s (train_step at the largest, train_step.%s_N at each "
                "other; a batch runs the smallest that holds it)\n",
                artifactMetadata(artifact, TCC_METADATA_LENGTH_DIM, "?").c_str(), lengths.c_str(),
                artifactMetadata(artifact, TCC_METADATA_LENGTH_DIM, "?").c_str());
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
    // A parameter's recorded initializer (what --init generates).
    std::string key = TCC_METADATA_INIT_PREFIX + std::string(t.name);
    std::string init = t.role == TCC_ROLE_PARAM ? artifactMetadata(artifact, key.c_str(), "") : "";
    std::string rowsKey = TCC_METADATA_BATCH_ROWS_PREFIX + std::string(t.name);
    std::string rows = t.role == TCC_ROLE_INPUT || t.role == TCC_ROLE_OUTPUT
                           ? artifactMetadata(artifact, rowsKey.c_str(), "")
                           : "";
    // A parameter train_step leaves as it is (running statistics, frozen).
    std::string notTrainedKey = TCC_METADATA_NOT_TRAINED_PREFIX + std::string(t.name);
    std::string notTrained =
        t.role == TCC_ROLE_PARAM ? artifactMetadata(artifact, notTrainedKey.c_str(), "") : "";
    std::printf("  %-6s %s %s%s%s%s%s%s%s%s\n", roleString(t.role), t.name, typeString(t).c_str(),
                init.empty() ? "" : "  init ", init.c_str(),
                rows.empty() ? "" : "  batch rows/sample ", rows.c_str(),
                notTrained.empty() ? "" : "  (", notTrained.c_str(),
                notTrained.empty() ? "" : ", not trained)");
  }
}

} // namespace

/// The file in --output-dir of each output of ENTRY, in entry order:
/// npyFileName's, except that outputs whose names map to one file (a/b and
/// a_b) are written with '%' and '/' percent-encoded (a%2Fb.npy), so that no
/// output is lost.
std::vector<std::pair<std::string, std::string>> outputFileNames(tcc_artifact_t artifact,
                                                                 const tcc_entry_info &entry) {
  std::vector<std::pair<std::string, std::string>> files;
  std::map<std::string, int> uses;
  for (int32_t k = 0; k < entry.num_tensors; ++k) {
    tcc_tensor_info t;
    check(tcc_artifact_tensor_info(artifact, entry.tensor_indices[k], &t));
    if (t.role != TCC_ROLE_OUTPUT)
      continue;
    files.push_back({t.name, npyFileName(t.name)});
    ++uses[files.back().second];
  }
  for (auto &[name, file] : files) {
    if (uses[file] < 2 || name.find_first_of("/%") == std::string::npos)
      continue;
    std::string encoded;
    for (char c : name)
      encoded += c == '/' ? "%2F" : c == '%' ? "%25" : std::string(1, c);
    file = encoded + ".npy";
  }
  std::map<std::string, std::string> seen;
  for (const auto &[name, file] : files)
    if (!seen.emplace(file, name).second)
      die("outputs '" + seen[file] + "' and '" + name + "' would both be written to " + file +
          " in --output-dir; read them with the C API or Python instead");
  return files;
}

void readInputs(tcc_artifact_t artifact, const Options &o,
                std::map<std::string, tcc::rt::HostTensor> &inputs,
                std::map<std::string, std::string> &inputFiles) {
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
}

namespace {

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
  readInputs(artifact, o, inputs, inputFiles);
  std::string missing;
  for (int32_t k = 0; k < entry.num_tensors; ++k) {
    tcc_tensor_info t;
    check(tcc_artifact_tensor_info(artifact, entry.tensor_indices[k], &t));
    // The optimizer's hyperparameters default to their compile-time values;
    // eval_step's "valid" is written by the runtime.
    std::string name = t.name;
    bool defaulted =
        !artifactMetadata(artifact, (TCC_METADATA_DEFAULT_PREFIX + name).c_str(), "").empty() ||
        name == TCC_INPUT_ONE_MINUS_BETA1 || name == TCC_INPUT_ONE_MINUS_BETA2 ||
        name == TCC_INPUT_VALID;
    if (t.role == TCC_ROLE_INPUT && !inputs.count(t.name) && !defaulted)
      missing +=
          (missing.empty() ? "'" : ", '") + std::string(t.name) + "' (" + typeString(t) + ")";
  }
  if (!missing.empty())
    die(o.model + ": entry '" + o.entry + "' needs input(s) " + missing +
        "; pass --input NAME=FILE for each");

  // Where the outputs go is checked before the run too: the folder, and
  // that no output file is an input (tcc::rt::checkOutputsApart).
  std::vector<std::pair<std::string, std::string>> outputFiles = outputFileNames(artifact, entry);
  std::vector<std::string> paths;
  for (const auto &[name, file] : outputFiles)
    paths.push_back(o.outputDir + "/" + file);
  checkOutputDir(o, inputFiles, paths);

  SessionHandle handle = createSession(artifact, o);
  tcc_session_t session = handle.s;

  for (const auto &[name, tensor] : inputs) {
    tcc_status status =
        tcc_session_set_input(session, name.c_str(), tensor.dtype, int32_t(tensor.shape.size()),
                              tensor.shape.data(), tensor.bytes.data(), tensor.bytes.size());
    if (status == TCC_ERROR_SHAPE && o.entry == TCC_ENTRY_INFER)
      die(inputFiles[name] + ": " + tcc_last_error() +
          "; tcc-run predict runs infer over any number of samples, a batch at a time");
    if (status != TCC_OK)
      die(inputFiles[name] + ": " + tcc_last_error());
  }
  check(tcc_session_run(session, o.entry.c_str()));

  for (int32_t k = 0; k < entry.num_tensors; ++k) {
    tcc_tensor_info t;
    check(tcc_artifact_tensor_info(artifact, entry.tensor_indices[k], &t));
    if (t.role != TCC_ROLE_OUTPUT)
      continue;
    const void *data;
    size_t size;
    check(tcc_session_get_output(session, t.name, &data, &size));
    // A partial batch's outputs hold its samples only.
    std::vector<int64_t> shape(size_t(t.rank));
    int32_t rank;
    check(tcc_session_get_output_shape(session, t.name, t.rank, shape.data(), &rank));
    auto file = std::find_if(outputFiles.begin(), outputFiles.end(),
                             [&](const auto &named) { return named.first == t.name; });
    std::string path = o.outputDir + "/" + file->second, error;
    if (!tcc::rt::writeNpy(path, t.dtype, shape, data, size, &error))
      die(error);
  }
}

/// Trains with the runtime's trainer: it checks the data and the outputs and
/// locks the checkpoint folder before the session is made.
/// Under mpirun or srun each process is one rank of the job; a rank that
/// fails ends the whole job (the others would wait for it in their next
/// collective until --collective-timeout), except when every rank failed
/// alike (ranks started with other artifacts or options): then rank 0 says
/// why and every rank exits with status 1. Returns the exit status.
int train(tcc_artifact_t artifact, const Options &o) {
  CommunicatorHandle communicator(o.collectiveTimeout);
  int32_t rank = 0, size = 1;
  check(tcc_communicator_get_info(communicator.c, &rank, &size, nullptr));
  try {
    // The parameters file is tcc-run's to check (the trainer checks the
    // files it knows). --save may replace it: it is read whole first, and
    // training on and saving back is a way to continue.
    std::vector<tcc::rt::FileRole> written = {{"--metrics", o.metrics}, {"--trace", o.trace}};
    if (!o.checkpoint_dir.empty())
      for (const char *file : train::kCheckpointFiles)
        written.push_back({"--checkpoint-dir", o.checkpoint_dir + "/" + file});
    std::string params = o.init ? "" : o.params.empty() ? tcc::rt::paramsBeside(o.model) : o.params;
    std::string error;
    if (!tcc::rt::checkOutputsApart({{"--params", params}}, written, &error))
      die(error);
    tcc_trainer_options options = trainerOptions(o);
    options.communicator = communicator.c;
    TrainerHandle trainer(artifact, options);
    SessionHandle session = createSession(artifact, o);
    check(tcc_trainer_run(trainer.t, session.s));
  } catch (const UsageError &e) {
    if (size == 1)
      throw;
    if (e.status == TCC_ERROR_RANKS_DIFFER) {
      if (rank == 0)
        std::fprintf(stderr, "tcc-run: error: %s\n", e.message.c_str());
      return 1;
    }
    // The communicator's messages (a collective's timeout) name the rank
    // already.
    std::string who = "rank " + std::to_string(rank) + " of " + std::to_string(size) + ": ";
    std::fprintf(stderr, "tcc-run: error: %s%s\n",
                 e.message.find(who) == std::string::npos ? who.c_str() : "", e.message.c_str());
    std::fflush(stderr);
    tcc_communicator_abort(communicator.c, 1);
  }
  return 0;
}

int runMain(int argc, char **argv) {
  if (argc > 1 && std::string(argv[1]) == "sweep")
    return sweepMain(std::vector<std::string>(argv + 2, argv + argc));
  if (argc > 1 && (std::string(argv[1]) == "evaluate" || std::string(argv[1]) == "predict")) {
    std::vector<std::string> args = {argv[0]};
    args.insert(args.end(), argv + 2, argv + argc);
    Options o = parseArgs(args, argv[1]);
    return o.command == "evaluate" ? evaluateMain(o) : predictMain(o);
  }
  Options o = parseArgs(std::vector<std::string>(argv, argv + argc));
  ArtifactHandle loaded(o.model);
  tcc_artifact_t artifact = loaded.a;
  if (o.list)
    list(artifact);
  else if (o.train())
    return train(artifact, o);
  else
    infer(artifact, o);
  return 0;
}

} // namespace
} // namespace tcc::run

int main(int argc, char **argv) {
  tcc::rt::installCrashReport("tcc-run");
  try {
    return tcc::run::runMain(argc, argv);
  } catch (const tcc::run::UsageError &e) {
    std::fprintf(stderr, "tcc-run: error: %s\n", e.message.c_str());
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "tcc-run: error: out of memory\n");
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tcc-run: error: %s\n", e.what());
  }
  return 1;
}
