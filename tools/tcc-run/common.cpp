//===- common.cpp - what every part of tcc-run shares ---------------------===//

#include "tools/tcc-run/common.h"

#include "runtime/support/file_roles.h"

#include "runtime/dtype.h"

#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <cstdlib>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace tcc::run {

tcc_trainer_options trainerOptions(const Options &o) {
  tcc_trainer_options t;
  tcc_trainer_options_init(&t);
  train::toC(o, t);
  // Ctrl-C, a closed terminal or a scheduler's SIGTERM checkpoint and exit 1.
  t.handle_signals = 1;
  return t;
}

SessionHandle createSession(tcc_artifact_t artifact, const Options &o) {
  tcc_session_options options;
  tcc_session_options_init(&options);
  options.num_threads = o.threads;
  options.poison_arena = o.poison;
  // A resumed run takes its parameters from the checkpoint; --init
  // generates them, but for the model's buffers, which it takes from the
  // file beside the artifact.
  std::vector<std::string> exact = o.init ? exactParams(artifact) : std::vector<std::string>();
  options.skip_default_params =
      !o.params.empty() || (o.init && exact.empty()) || !o.resume.empty();
  SessionHandle handle;
  tcc_status created = tcc_session_create(artifact, &options, &handle.s);
  if (created == TCC_ERROR_NOT_FOUND && o.init) {
    std::string names;
    for (const std::string &name : exact)
      names += (names.empty() ? "'" : ", '") + name + "'";
    die(std::string(tcc_last_error()) + "; --init takes the model's buffer(s) " + names +
        " from it, as exported");
  }
  if (created == TCC_ERROR_NOT_FOUND && o.params.empty())
    die(std::string(tcc_last_error()) + "; or pass --params FILE or --init SEED");
  check(created);
  if (!o.params.empty())
    check(tcc_session_load_params(handle.s, o.params.c_str()));
  if (o.init) {
    int64_t params = 0, values = 0;
    initParams(artifact, handle.s, o.initSeed, &params, &values);
    std::fprintf(stderr, "initialized %" PRId64 " parameters (%" PRId64 " values) from seed %" PRIu64
                         "%s\n",
                 params, values, o.initSeed,
                 exact.empty() ? ""
                               : (", kept " + std::to_string(exact.size()) +
                                  " buffer(s) as exported").c_str());
  }
  return handle;
}

namespace {

/// Whether a rank-1 parameter is a scale (ones) rather than a bias (zeros):
/// its lowercased name contains "norm", "ln" or "gamma".
bool isScaleName(const std::string &name) {
  std::string lower = name;
  for (char &c : lower)
    c = char(std::tolower(static_cast<unsigned char>(c)));
  return lower.find("norm") != std::string::npos || lower.find("ln") != std::string::npos ||
         lower.find("gamma") != std::string::npos;
}

/// One N(0, 1) sample from two raw outputs of the generator (Box-Muller,
/// cosine branch only): u1 = (a >> 11 + 1) / 2^53 in (0, 1], u2 = (b >> 11)
/// / 2^53 in [0, 1), z = sqrt(-2 ln u1) cos(2 pi u2), in double precision.
/// std::mt19937_64's outputs are fixed by the C++ standard; the transform is
/// ours, so the values do not depend on the standard library (unlike
/// std::normal_distribution).
double standardNormal(std::mt19937_64 &rng) {
  uint64_t a = rng(), b = rng();
  double u1 = double((a >> 11) + 1) * 0x1.0p-53;
  double u2 = double(b >> 11) * 0x1.0p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

} // namespace

/// A parameter's initializer record (metadata init.NAME), empty if none.
static std::string initRecord(tcc_artifact_t artifact, const char *name) {
  return artifactMetadata(artifact, (TCC_METADATA_INIT_PREFIX + std::string(name)).c_str(), "");
}

std::vector<std::string> exactParams(tcc_artifact_t artifact) {
  int32_t count;
  check(tcc_artifact_num_tensors(artifact, &count));
  std::vector<std::string> names;
  for (int32_t i = 0; i < count; ++i) {
    tcc_tensor_info t;
    check(tcc_artifact_tensor_info(artifact, i, &t));
    if (t.role == TCC_ROLE_PARAM && initRecord(artifact, t.name) == TCC_METADATA_INIT_EXACT)
      names.push_back(t.name);
  }
  return names;
}

void initParams(tcc_artifact_t artifact, tcc_session_t session, uint64_t seed, int64_t *outParams,
                int64_t *outValues) {
  int32_t count;
  check(tcc_artifact_num_tensors(artifact, &count));
  std::vector<tcc_tensor_info> params;
  for (int32_t i = 0; i < count; ++i) {
    tcc_tensor_info t;
    check(tcc_artifact_tensor_info(artifact, i, &t));
    // The model's buffers keep the values the session loaded.
    if (t.role != TCC_ROLE_PARAM || initRecord(artifact, t.name) == TCC_METADATA_INIT_EXACT)
      continue;
    // Every parameter is checked before the first is set.
    if (t.dtype != TCC_DTYPE_F32) {
      tcc_artifact_info info;
      check(tcc_artifact_get_info(artifact, &info));
      die(std::string(info.path) + ": --init supports f32 parameters only; parameter '" + t.name +
          "' is " + typeString(t));
    }
    params.push_back(t);
  }
  // One generator for the whole model, in descriptor order: the values
  // depend only on SEED and the artifact's parameters.
  std::mt19937_64 rng(seed);
  int64_t values = 0;
  std::vector<float> data;
  for (const tcc_tensor_info &t : params) {
    size_t n = t.size_bytes / sizeof(float);
    data.assign(n, 0.0f);
    // The distribution the compiler recorded from the model's own initial
    // values ("init.NAME": constant V, uniform LO HI, normal MEAN STD);
    // artifacts without it: the GPT-style rule by rank and name.
    std::istringstream kind(initRecord(artifact, t.name));
    std::string shape;
    double a = 0, b = 0;
    kind >> shape >> a >> b;
    if (shape == "constant") {
      std::fill(data.begin(), data.end(), float(a));
    } else if (shape == "uniform") {
      for (float &v : data)
        v = float(a + (b - a) * double(rng() >> 11) * 0x1.0p-53);
    } else if (shape == "normal") {
      for (float &v : data)
        v = float(a + b * standardNormal(rng));
    } else if (t.rank >= 2) {
      for (float &v : data)
        v = float(0.02 * standardNormal(rng));
    } else if (t.rank == 1 && isScaleName(t.name)) {
      std::fill(data.begin(), data.end(), 1.0f);
    }
    check(tcc_session_set_param(session, t.name, t.dtype, t.rank, t.shape, data.data(),
                                t.size_bytes));
    values += int64_t(n);
  }
  *outParams = int64_t(params.size());
  *outValues = values;
}

void checkOutputDir(const Options &o, const std::map<std::string, std::string> &inputFiles,
                    const std::vector<std::string> &outputs) {
  makeDirectory(o.outputDir);
  checkWritableFolder(o.outputDir, "--output-dir");
  std::vector<tcc::rt::FileRole> read = {
      {"the artifact", o.model},
      {"--params", o.init ? "" : o.params.empty() ? tcc::rt::paramsBeside(o.model) : o.params}};
  for (const auto &[name, file] : inputFiles)
    read.push_back({"--input", file});
  std::vector<tcc::rt::FileRole> written;
  for (const std::string &path : outputs)
    written.push_back({"--output-dir", path});
  std::string error;
  if (!tcc::rt::checkOutputsApart(read, written, &error))
    die(error);
}

} // namespace tcc::run
