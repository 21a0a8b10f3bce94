//===- RuntimeApiTest.cpp - the public C API on hand-written fixtures -------===//
//
// Loads, inspects and runs the fixture artifacts (fixtures/add_artifact.c:
// y = x + b) through tcc.h only, with parameters written by TccSafetensors,
// and checks every refusal: bad files, bad descriptors, wrong inputs, calls
// in the wrong order. The oracle for the arithmetic is x + b computed here.
//
//===----------------------------------------------------------------------===//

#include "runtime/include/tcc/tcc.h"

#include "TestUtil.h"
#include "runtime/artifact.h"
#include "runtime/checkpoint/safetensors.h"
#include "runtime/cpu/parallel.h"
#include "runtime/error.h"
#include "runtime/handles.h"

#include <cstdlib>
#include <cstring>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <thread>

using tcc::test::TempDir;

namespace {

std::string fixture(const std::string &name) { return std::string(TCC_FIXTURE_DIR) + "/" + name; }

bool contains(const std::string &haystack, const std::string &needle) {
  return haystack.find(needle) != std::string::npos;
}

/// Expects STATUS and a last-error message containing each of NEEDLES.
#define EXPECT_ERROR(call, status, ...)                                                            \
  do {                                                                                             \
    tcc_status got_ = (call);                                                                      \
    EXPECT_EQ(got_, status) << tcc_status_string(got_) << ": " << tcc_last_error();                \
    for (const char *needle_ : std::initializer_list<const char *>{__VA_ARGS__})                   \
      EXPECT_TRUE(contains(tcc_last_error(), needle_))                                             \
          << tcc_last_error() << "\n  lacks: " << needle_;                                         \
  } while (0)

#define ASSERT_OK(call) ASSERT_EQ((call), TCC_OK) << tcc_last_error()

struct ArtifactHandle {
  tcc_artifact_t a = nullptr;
  ~ArtifactHandle() { tcc_artifact_destroy(a); }
};
struct SessionHandle {
  tcc_session_t s = nullptr;
  ~SessionHandle() { tcc_session_destroy(s); }
};

const int64_t kShape[] = {2, 3};
const float kX[6] = {1.5f, -2.25f, 3.0f, 0.125f, 7.0f, -0.5f};

class RuntimeApiTest : public ::testing::Test {
protected:
  void SetUp() override {
    ::unsetenv("TCC_POISON_ARENA");
    ASSERT_FALSE(dir.path().empty());
    model = dir.file("model.so");
    ASSERT_TRUE(tcc::test::copyFile(fixture("add_artifact.so"), model));
    writeParams(dir.file("model.safetensors"), {10.0f, 20.0f, 30.0f});
  }

  static void writeParams(const std::string &path, std::vector<float> b) {
    std::string error;
    ASSERT_TRUE(
        tcc::rt::writeSafetensors(path, {{"b", TCC_DTYPE_F32, {3}, b.data(), 12}}, {}, &error))
        << error;
  }

  /// Loads the model and creates a session with OPTIONS (or the defaults).
  void open(ArtifactHandle &artifact, SessionHandle &session,
            const tcc_session_options *options = nullptr) {
    ASSERT_OK(tcc_artifact_load(model.c_str(), &artifact.a));
    ASSERT_OK(tcc_session_create(artifact.a, options, &session.s));
  }

  /// Sets x, runs "infer" and checks y == x + b.
  static void runAndCheck(tcc_session_t session, const float b[3]) {
    ASSERT_OK(tcc_session_set_input(session, "x", TCC_DTYPE_F32, 2, kShape, kX, sizeof kX));
    ASSERT_OK(tcc_session_run(session, "infer"));
    float y[6];
    ASSERT_OK(tcc_session_copy_output(session, "y", y, sizeof y));
    for (int i = 0; i < 6; ++i)
      EXPECT_EQ(y[i], kX[i] + b[i % 3]) << i;
  }

  TempDir dir;
  std::string model;
};

// Tests the descriptor as the C API presents it.
TEST_F(RuntimeApiTest, InspectsArtifact) {
  ArtifactHandle artifact;
  ASSERT_OK(tcc_artifact_load(model.c_str(), &artifact.a));
  EXPECT_STREQ(tcc_last_error(), "");

  tcc_artifact_info info;
  ASSERT_OK(tcc_artifact_get_info(artifact.a, &info));
  EXPECT_EQ(info.path, model);
  EXPECT_EQ(info.abi_version, TCC_ABI_VERSION);
  EXPECT_STREQ(info.fingerprint, "0123456789abcdef");
  EXPECT_STREQ(info.target, "x86_64");
  EXPECT_STREQ(info.cpu_features, "");
  EXPECT_EQ(info.arena_size, 128);
  EXPECT_EQ(info.state_size, 64);
  EXPECT_EQ(info.num_tensors, 3);
  EXPECT_EQ(info.num_entries, 2);

  int32_t count;
  ASSERT_OK(tcc_artifact_num_tensors(artifact.a, &count));
  ASSERT_EQ(count, 3);
  const char *names[] = {"x", "y", "b"};
  const tcc_role roles[] = {TCC_ROLE_INPUT, TCC_ROLE_OUTPUT, TCC_ROLE_PARAM};
  for (int32_t i = 0; i < count; ++i) {
    tcc_tensor_info t;
    ASSERT_OK(tcc_artifact_tensor_info(artifact.a, i, &t));
    EXPECT_STREQ(t.name, names[i]);
    EXPECT_EQ(t.role, roles[i]);
    EXPECT_EQ(t.dtype, TCC_DTYPE_F32);
    EXPECT_EQ(t.rank, i == 2 ? 1 : 2);
    EXPECT_EQ(t.shape[0], i == 2 ? 3 : 2);
    EXPECT_EQ(t.size_bytes, i == 2 ? 12u : 24u);
  }
  tcc_tensor_info t;
  EXPECT_ERROR(tcc_artifact_tensor_info(artifact.a, 3, &t), TCC_ERROR_INVALID_ARGUMENT,
               "out of range");
  EXPECT_ERROR(tcc_artifact_tensor_info(artifact.a, -1, &t), TCC_ERROR_INVALID_ARGUMENT);

  int32_t index = -1;
  ASSERT_OK(tcc_artifact_find_tensor(artifact.a, "b", TCC_ROLE_PARAM, &index));
  EXPECT_EQ(index, 2);
  EXPECT_ERROR(tcc_artifact_find_tensor(artifact.a, "x", TCC_ROLE_OUTPUT, &index),
               TCC_ERROR_NOT_FOUND, "no output 'x'", "outputs are 'y'");
  EXPECT_ERROR(tcc_artifact_find_tensor(artifact.a, "x", tcc_role(0), &index),
               TCC_ERROR_INVALID_ARGUMENT, "unknown role");

  ASSERT_OK(tcc_artifact_num_entries(artifact.a, &count));
  ASSERT_EQ(count, 2);
  tcc_entry_info entry;
  ASSERT_OK(tcc_artifact_entry_info(artifact.a, 0, &entry));
  EXPECT_STREQ(entry.name, "infer");
  ASSERT_EQ(entry.num_tensors, 3);
  EXPECT_EQ(entry.tensor_indices[1], 1);
  ASSERT_OK(tcc_artifact_entry_info(artifact.a, 1, &entry));
  EXPECT_STREQ(entry.name, "fail");
  EXPECT_EQ(entry.tensor_indices, nullptr);
  ASSERT_OK(tcc_artifact_find_entry(artifact.a, "fail", &index));
  EXPECT_EQ(index, 1);
  EXPECT_ERROR(tcc_artifact_find_entry(artifact.a, "train_step", &index), TCC_ERROR_NOT_FOUND,
               "no entry point 'train_step'", "'infer', 'fail'");
  EXPECT_ERROR(tcc_artifact_entry_info(artifact.a, 2, &entry), TCC_ERROR_INVALID_ARGUMENT);
}

// Tests a run: parameters from the file beside the library, y = x + b, with
// the default thread count, one thread and more threads than CPUs.
TEST_F(RuntimeApiTest, RunsInfer) {
  const float b[3] = {10.0f, 20.0f, 30.0f};
  for (int threads : {0, 1, 4, 1000}) {
    tcc_session_options options;
    tcc_session_options_init(&options);
    options.num_threads = threads;
    ArtifactHandle artifact;
    SessionHandle session;
    open(artifact, session, &options);
    runAndCheck(session.s, b);
    // Runs again with fresh inputs: the session is reusable.
    runAndCheck(session.s, b);
    const void *data;
    size_t size;
    ASSERT_OK(tcc_session_get_output(session.s, "y", &data, &size));
    EXPECT_EQ(size, 24u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % 64, 0u);
  }
}

// Tests that a session leaves the calling thread's OpenMP thread count as it
// found it, after creation and after a run: other OpenMP code on the thread
// (torch, when it shares libomp) keeps its own.
TEST_F(RuntimeApiTest, RestoresCallersThreadCount) {
  const float b[3] = {10.0f, 20.0f, 30.0f};
  tcc::rt::setParallelThreads(3);
  tcc_session_options options;
  tcc_session_options_init(&options);
  options.num_threads = 1;
  ArtifactHandle artifact;
  SessionHandle session;
  open(artifact, session, &options);
  EXPECT_EQ(tcc::rt::parallelThreads(), 3);
  runAndCheck(session.s, b);
  EXPECT_EQ(tcc::rt::parallelThreads(), 3);
}

// Tests parameter loading and saving: another file replaces b, save writes
// what a reader sees, and every refusal leaves the parameters unchanged.
TEST_F(RuntimeApiTest, LoadsAndSavesParams) {
  ArtifactHandle artifact;
  SessionHandle session;
  open(artifact, session);
  std::string other = dir.file("other.safetensors");
  writeParams(other, {-1.0f, 0.5f, 2.0f});
  ASSERT_OK(tcc_session_load_params(session.s, other.c_str()));
  const float b[3] = {-1.0f, 0.5f, 2.0f};
  runAndCheck(session.s, b);

  std::string saved = dir.file("saved.safetensors");
  ASSERT_OK(tcc_session_save_params(session.s, saved.c_str()));
  tcc::rt::SafetensorsReader reader;
  std::string error;
  ASSERT_TRUE(reader.open(saved, &error)) << error;
  ASSERT_EQ(reader.tensors().size(), 1u);
  EXPECT_EQ(std::memcmp(reader.find("b")->data, b, 12), 0);
  EXPECT_EQ(reader.metadata().at("tcc.fingerprint"), "0123456789abcdef");

  std::string path = dir.file("bad.safetensors");
  double wide[3] = {1, 2, 3};
  float four[4] = {1, 2, 3, 4};
  ASSERT_TRUE(tcc::rt::writeSafetensors(path, {{"b", TCC_DTYPE_F64, {3}, wide, 24}}, {}, &error));
  EXPECT_ERROR(tcc_session_load_params(session.s, path.c_str()), TCC_ERROR_DTYPE, "parameter 'b'",
               "is f32, the file holds f64", "bad.safetensors");
  ASSERT_TRUE(tcc::rt::writeSafetensors(path, {{"b", TCC_DTYPE_F32, {4}, four, 16}}, {}, &error));
  EXPECT_ERROR(tcc_session_load_params(session.s, path.c_str()), TCC_ERROR_SHAPE,
               "has shape [3], the file holds [4]");
  ASSERT_TRUE(tcc::rt::writeSafetensors(path, {{"c", TCC_DTYPE_F32, {3}, four, 12}}, {}, &error));
  EXPECT_ERROR(tcc_session_load_params(session.s, path.c_str()), TCC_ERROR_NOT_FOUND,
               "missing parameter(s) 'b'");
  ASSERT_TRUE(tcc::rt::writeSafetensors(
      path, {{"b", TCC_DTYPE_F32, {3}, four, 12}, {"extra", TCC_DTYPE_F32, {1}, four, 4}}, {},
      &error));
  EXPECT_ERROR(tcc_session_load_params(session.s, path.c_str()), TCC_ERROR_NOT_FOUND,
               "tensor 'extra' is not a parameter");
  tcc::test::writeBytes(path, std::string("\x10\0\0\0\0\0\0\0{not json}      ", 24));
  EXPECT_ERROR(tcc_session_load_params(session.s, path.c_str()), TCC_ERROR_FORMAT, "invalid JSON");
  EXPECT_ERROR(tcc_session_load_params(session.s, dir.file("none.safetensors").c_str()),
               TCC_ERROR_IO, "none.safetensors: cannot open");
  EXPECT_ERROR(tcc_session_save_params(session.s, dir.file("no/dir.safetensors").c_str()),
               TCC_ERROR_IO, "no/dir.safetensors");
  // Still the parameters loaded before the failures.
  runAndCheck(session.s, b);
}

// Tests setting and reading one parameter: set, run, get and save agree;
// every refusal names the artifact and the parameter and changes nothing.
TEST_F(RuntimeApiTest, SetsAndGetsParams) {
  tcc_session_options options;
  tcc_session_options_init(&options);
  options.skip_default_params = 1;
  ArtifactHandle artifact;
  SessionHandle session;
  open(artifact, session, &options);
  float got[3] = {1, 1, 1};
  ASSERT_OK(tcc_session_get_param(session.s, "b", got, sizeof got));
  EXPECT_EQ(got[0], 0.0f); // skipped: zeros
  const float b[3] = {0.25f, -8.0f, 1e-3f};
  const int64_t shape[] = {3};
  ASSERT_OK(tcc_session_set_param(session.s, "b", TCC_DTYPE_F32, 1, shape, b, sizeof b));
  EXPECT_STREQ(tcc_last_error(), "");
  ASSERT_OK(tcc_session_get_param(session.s, "b", got, sizeof got));
  EXPECT_EQ(std::memcmp(got, b, sizeof b), 0);
  runAndCheck(session.s, b);
  std::string saved = dir.file("saved.safetensors");
  ASSERT_OK(tcc_session_save_params(session.s, saved.c_str()));
  tcc::rt::SafetensorsReader reader;
  std::string error;
  ASSERT_TRUE(reader.open(saved, &error)) << error;
  ASSERT_NE(reader.find("b"), nullptr);
  EXPECT_EQ(std::memcmp(reader.find("b")->data, b, sizeof b), 0);
  // A load replaces what was set, and get sees it.
  ASSERT_OK(tcc_session_load_params(session.s, dir.file("model.safetensors").c_str()));
  ASSERT_OK(tcc_session_get_param(session.s, "b", got, sizeof got));
  EXPECT_EQ(got[1], 20.0f);
  ASSERT_OK(tcc_session_set_param(session.s, "b", TCC_DTYPE_F32, 1, shape, b, sizeof b));

  // Refusals.
  const double wide[3] = {1, 2, 3};
  EXPECT_ERROR(tcc_session_set_param(session.s, "b", TCC_DTYPE_F64, 1, shape, wide, sizeof wide),
               TCC_ERROR_DTYPE, "parameter 'b' of", "model.so", "is f32, got f64");
  const float four[4] = {9, 9, 9, 9};
  const int64_t shape4[] = {4}, shape13[] = {1, 3};
  EXPECT_ERROR(tcc_session_set_param(session.s, "b", TCC_DTYPE_F32, 1, shape4, four, sizeof four),
               TCC_ERROR_SHAPE, "parameter 'b'", "has shape [3], got [4]");
  EXPECT_ERROR(tcc_session_set_param(session.s, "b", TCC_DTYPE_F32, 2, shape13, four, 12),
               TCC_ERROR_SHAPE, "has shape [3] (rank 1), got rank 2");
  EXPECT_ERROR(tcc_session_set_param(session.s, "b", TCC_DTYPE_F32, 1, shape, four, 16),
               TCC_ERROR_INVALID_ARGUMENT, "parameter 'b'", "has 12 bytes, got 16");
  EXPECT_ERROR(tcc_session_set_param(session.s, "b", TCC_DTYPE_F32, 1, nullptr, four, 12),
               TCC_ERROR_INVALID_ARGUMENT, "no shape");
  EXPECT_ERROR(tcc_session_set_param(session.s, "b", TCC_DTYPE_F32, 1, shape, nullptr, 12),
               TCC_ERROR_INVALID_ARGUMENT, "no data");
  EXPECT_ERROR(tcc_session_set_param(session.s, "w", TCC_DTYPE_F32, 1, shape, four, 12),
               TCC_ERROR_NOT_FOUND, "model.so has no parameter 'w'", "parameters are 'b'");
  // An input is not a parameter.
  EXPECT_ERROR(tcc_session_set_param(session.s, "x", TCC_DTYPE_F32, 2, kShape, kX, sizeof kX),
               TCC_ERROR_NOT_FOUND, "no parameter 'x'");
  EXPECT_ERROR(tcc_session_set_param(session.s, nullptr, TCC_DTYPE_F32, 1, shape, four, 12),
               TCC_ERROR_INVALID_ARGUMENT, "name is NULL");
  EXPECT_ERROR(tcc_session_set_param(nullptr, "b", TCC_DTYPE_F32, 1, shape, four, 12),
               TCC_ERROR_INVALID_ARGUMENT, "session is NULL");
  EXPECT_ERROR(tcc_session_get_param(session.s, "b", got, 16), TCC_ERROR_INVALID_ARGUMENT,
               "parameter 'b'", "has 12 bytes, the destination 16");
  EXPECT_ERROR(tcc_session_get_param(session.s, "b", nullptr, 12), TCC_ERROR_INVALID_ARGUMENT,
               "destination is NULL");
  EXPECT_ERROR(tcc_session_get_param(session.s, "y", got, 12), TCC_ERROR_NOT_FOUND,
               "has no parameter 'y'", "parameters are 'b'");
  // Unchanged by the failures.
  ASSERT_OK(tcc_session_get_param(session.s, "b", got, sizeof got));
  EXPECT_EQ(std::memcmp(got, b, sizeof b), 0);
  runAndCheck(session.s, b);
}

// Tests checkpoints: parameters plus metadata, read back by key; restored
// only into the model that wrote them; reserved keys refused.
TEST_F(RuntimeApiTest, Checkpoints) {
  ArtifactHandle artifact;
  SessionHandle session;
  open(artifact, session);
  std::string other = dir.file("other.safetensors");
  writeParams(other, {3.0f, -4.0f, 0.25f});
  ASSERT_OK(tcc_session_load_params(session.s, other.c_str()));
  std::string ckpt = dir.file("ckpt.safetensors");
  const char *keys[] = {"step", "seed"};
  const char *values[] = {"42", "7"};
  ASSERT_OK(tcc_session_save_checkpoint(session.s, ckpt.c_str(), 2, keys, values));
  char value[16];
  ASSERT_OK(tcc_checkpoint_get_metadata(ckpt.c_str(), "step", value, sizeof value));
  EXPECT_STREQ(value, "42");
  ASSERT_OK(tcc_checkpoint_get_metadata(ckpt.c_str(), "tcc.kind", value, sizeof value));
  EXPECT_STREQ(value, "checkpoint");
  EXPECT_ERROR(tcc_checkpoint_get_metadata(ckpt.c_str(), "epoch", value, sizeof value),
               TCC_ERROR_NOT_FOUND, "no metadata 'epoch'");
  EXPECT_ERROR(tcc_checkpoint_get_metadata(ckpt.c_str(), "step", value, 2),
               TCC_ERROR_INVALID_ARGUMENT, "needs 3 bytes");
  // What failed decides the status, not the words of the message: a folder
  // cannot be opened as a file (it was TCC_ERROR_FORMAT); a value with NUL
  // is refused (it read back truncated).
  EXPECT_ERROR(tcc_checkpoint_get_metadata(dir.path().c_str(), "step", value, sizeof value),
               TCC_ERROR_IO, "not a regular file");
  {
    std::string header = R"({"__metadata__":{"note":"a\u0000b"}})";
    uint64_t length = header.size();
    std::string nul = dir.file("nul.safetensors");
    FILE *f = std::fopen(nul.c_str(), "wb");
    ASSERT_TRUE(f);
    std::fwrite(&length, sizeof length, 1, f);
    std::fwrite(header.data(), 1, header.size(), f);
    std::fclose(f);
    EXPECT_ERROR(tcc_checkpoint_get_metadata(nul.c_str(), "note", value, sizeof value),
                 TCC_ERROR_FORMAT, "holds a NUL character");
  }
  const char *reserved[] = {"tcc.fingerprint"};
  EXPECT_ERROR(tcc_session_save_checkpoint(session.s, ckpt.c_str(), 1, reserved, values),
               TCC_ERROR_INVALID_ARGUMENT, "reserved");

  writeParams(other, {0.0f, 0.0f, 0.0f});
  ASSERT_OK(tcc_session_load_params(session.s, other.c_str()));
  ASSERT_OK(tcc_session_load_checkpoint(session.s, ckpt.c_str()));
  const float b[3] = {3.0f, -4.0f, 0.25f};
  runAndCheck(session.s, b);
  // A parameters file has no fingerprint check; a checkpoint needs its kind
  // and fingerprint.
  EXPECT_ERROR(tcc_session_load_checkpoint(session.s, other.c_str()), TCC_ERROR_INVALID_ARGUMENT,
               "not a checkpoint of tcc");
  // A checkpoint loads as parameters too (its parameters are taken).
  ASSERT_OK(tcc_session_load_params(session.s, ckpt.c_str()));
  runAndCheck(session.s, b);
}

// Tests that a missing parameters file is an error unless the session is
// told to leave the parameters as zeros.
TEST_F(RuntimeApiTest, MissingParamsFile) {
  ASSERT_EQ(::unlink(dir.file("model.safetensors").c_str()), 0);
  ArtifactHandle artifact;
  ASSERT_OK(tcc_artifact_load(model.c_str(), &artifact.a));
  SessionHandle session;
  EXPECT_ERROR(tcc_session_create(artifact.a, nullptr, &session.s), TCC_ERROR_NOT_FOUND,
               "model.safetensors", "1 parameter(s)");
  EXPECT_EQ(session.s, nullptr);
  tcc_session_options options;
  tcc_session_options_init(&options);
  options.skip_default_params = 1;
  ASSERT_OK(tcc_session_create(artifact.a, &options, &session.s));
  const float zeros[3] = {0, 0, 0};
  runAndCheck(session.s, zeros);
}

// Tests the refusals of set_input: name, dtype, rank, shape, size, NULLs.
TEST_F(RuntimeApiTest, RejectsWrongInputs) {
  ArtifactHandle artifact;
  SessionHandle session;
  open(artifact, session);
  const int64_t transposed[] = {3, 2};
  const int64_t flat[] = {6};
  EXPECT_ERROR(tcc_session_set_input(session.s, "z", TCC_DTYPE_F32, 2, kShape, kX, sizeof kX),
               TCC_ERROR_NOT_FOUND, "no input 'z'", "its inputs are 'x'");
  EXPECT_ERROR(tcc_session_set_input(session.s, "y", TCC_DTYPE_F32, 2, kShape, kX, sizeof kX),
               TCC_ERROR_NOT_FOUND, "no input 'y'");
  EXPECT_ERROR(tcc_session_set_input(session.s, "x", TCC_DTYPE_F64, 2, kShape, kX, sizeof kX),
               TCC_ERROR_DTYPE, "input 'x'", "is f32, got f64");
  EXPECT_ERROR(tcc_session_set_input(session.s, "x", TCC_DTYPE_F32, 2, transposed, kX, sizeof kX),
               TCC_ERROR_SHAPE, "has shape [2,3], got [3,2]");
  EXPECT_ERROR(tcc_session_set_input(session.s, "x", TCC_DTYPE_F32, 1, flat, kX, sizeof kX),
               TCC_ERROR_SHAPE, "has shape [2,3] (rank 2), got rank 1");
  // A rank larger than the shape array: the message must not read past it
  // (rank 1000000 read a million entries, a crash; rank 100, stack garbage).
  EXPECT_ERROR(tcc_session_set_input(session.s, "x", TCC_DTYPE_F32, 1000000, kShape, kX,
                                     sizeof kX),
               TCC_ERROR_SHAPE, "got rank 1000000");
  EXPECT_ERROR(tcc_session_set_input(session.s, "x", TCC_DTYPE_F32, 100, kShape, kX, sizeof kX),
               TCC_ERROR_SHAPE, "got rank 100");
  EXPECT_ERROR(tcc_session_set_input(session.s, "x", TCC_DTYPE_F32, 2, kShape, kX, 20),
               TCC_ERROR_INVALID_ARGUMENT, "has 24 bytes, got 20");
  EXPECT_ERROR(tcc_session_set_input(session.s, "x", TCC_DTYPE_F32, 2, kShape, nullptr, 24),
               TCC_ERROR_INVALID_ARGUMENT, "no data");
  EXPECT_ERROR(tcc_session_set_input(session.s, "x", TCC_DTYPE_F32, 2, nullptr, kX, 24),
               TCC_ERROR_INVALID_ARGUMENT, "no shape");
  EXPECT_ERROR(tcc_session_set_input(session.s, "x", TCC_DTYPE_F32, -1, kShape, kX, 24),
               TCC_ERROR_INVALID_ARGUMENT, "invalid rank");
  EXPECT_ERROR(tcc_session_set_input(session.s, nullptr, TCC_DTYPE_F32, 2, kShape, kX, 24),
               TCC_ERROR_INVALID_ARGUMENT, "name is NULL");
  EXPECT_ERROR(tcc_session_set_input(nullptr, "x", TCC_DTYPE_F32, 2, kShape, kX, 24),
               TCC_ERROR_INVALID_ARGUMENT, "session is NULL");
  // None of the refused calls counts as setting x.
  EXPECT_ERROR(tcc_session_run(session.s, "infer"), TCC_ERROR_INVALID_STATE, "'x'");
}

// Tests the order of calls: inputs must be set before each run, outputs
// exist only after a successful run, entries must exist.
TEST_F(RuntimeApiTest, EnforcesCallOrder) {
  ArtifactHandle artifact;
  SessionHandle session;
  open(artifact, session);
  const void *data;
  size_t size;
  EXPECT_ERROR(tcc_session_get_output(session.s, "y", &data, &size), TCC_ERROR_INVALID_STATE,
               "output 'y'", "no successful run yet");
  EXPECT_ERROR(tcc_session_run(session.s, "infer"), TCC_ERROR_INVALID_STATE,
               "entry 'infer' needs input(s) not set since the last run: 'x'");
  ASSERT_OK(tcc_session_set_input(session.s, "x", TCC_DTYPE_F32, 2, kShape, kX, sizeof kX));
  ASSERT_OK(tcc_session_run(session.s, "infer"));
  // The run consumed the inputs.
  EXPECT_ERROR(tcc_session_run(session.s, "infer"), TCC_ERROR_INVALID_STATE, "'x'");
  EXPECT_ERROR(tcc_session_get_output(session.s, "x", &data, &size), TCC_ERROR_NOT_FOUND,
               "no output 'x'", "outputs are 'y'");
  float y[6];
  EXPECT_ERROR(tcc_session_copy_output(session.s, "y", y, 12), TCC_ERROR_INVALID_ARGUMENT,
               "has 24 bytes, the destination 12");
  EXPECT_ERROR(tcc_session_run(session.s, "train_step"), TCC_ERROR_NOT_FOUND,
               "no entry point 'train_step'", "'infer', 'fail'");
  EXPECT_ERROR(tcc_session_run(session.s, nullptr), TCC_ERROR_INVALID_ARGUMENT);
  // A failing entry: a runtime error with its code, and no readable outputs.
  EXPECT_ERROR(tcc_session_run(session.s, "fail"), TCC_ERROR_RUNTIME,
               "entry 'fail' failed with code 3");
  EXPECT_ERROR(tcc_session_get_output(session.s, "y", &data, &size), TCC_ERROR_INVALID_STATE,
               "no successful run yet");
}

// Tests that an overlapping call on a busy session is refused, not raced.
TEST_F(RuntimeApiTest, DetectsConcurrentUse) {
  ArtifactHandle artifact;
  SessionHandle session;
  open(artifact, session);
  {
    tcc::rt::Session::Use busy(*session.s->impl);
    EXPECT_ERROR(tcc_session_set_input(session.s, "x", TCC_DTYPE_F32, 2, kShape, kX, sizeof kX),
                 TCC_ERROR_INVALID_STATE, "already in use");
  }
  ASSERT_OK(tcc_session_set_input(session.s, "x", TCC_DTYPE_F32, 2, kShape, kX, sizeof kX));
}

// Tests that sessions are independent: several run at once on their own
// threads, with their own parameters, sharing one artifact and thread pool.
TEST_F(RuntimeApiTest, ConcurrentSessions) {
  ArtifactHandle artifact;
  ASSERT_OK(tcc_artifact_load(model.c_str(), &artifact.a));
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      tcc_session_options options;
      tcc_session_options_init(&options);
      options.skip_default_params = 1;
      SessionHandle session;
      std::string params = dir.file("p" + std::to_string(t) + ".safetensors");
      float b[3] = {float(t), float(2 * t), float(3 * t)};
      std::string error;
      if (!tcc::rt::writeSafetensors(params, {{"b", TCC_DTYPE_F32, {3}, b, 12}}, {}, &error) ||
          tcc_session_create(artifact.a, &options, &session.s) != TCC_OK ||
          tcc_session_load_params(session.s, params.c_str()) != TCC_OK) {
        failures.fetch_add(1);
        return;
      }
      for (int round = 0; round < 200; ++round) {
        float y[6];
        if (tcc_session_set_input(session.s, "x", TCC_DTYPE_F32, 2, kShape, kX, sizeof kX) !=
                TCC_OK ||
            tcc_session_run(session.s, "infer") != TCC_OK ||
            tcc_session_copy_output(session.s, "y", y, sizeof y) != TCC_OK) {
          failures.fetch_add(1);
          return;
        }
        for (int i = 0; i < 6; ++i)
          if (y[i] != kX[i] + b[i % 3])
            failures.fetch_add(1);
      }
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(failures.load(), 0);
}

// Tests the poisoned arena: 0xFF everywhere (so NaN in every float) except
// what inputs set, by option and by environment variable; the fixture's
// results do not depend on it. The state is never poisoned.
TEST_F(RuntimeApiTest, PoisonsArena) {
  for (int byEnvironment : {0, 1}) {
    tcc_session_options options;
    tcc_session_options_init(&options);
    if (byEnvironment)
      ::setenv("TCC_POISON_ARENA", "1", 1);
    else
      options.poison_arena = 1;
    ArtifactHandle artifact;
    SessionHandle session;
    open(artifact, session, &options);
    ::unsetenv("TCC_POISON_ARENA");
    const tcc::rt::Session &impl = *session.s->impl;
    EXPECT_TRUE(impl.poisoned());
    for (size_t i = 0; i < 128; ++i)
      ASSERT_EQ(impl.arena()[i], 0xFF) << i;
    float b[3];
    std::memcpy(b, impl.state(), sizeof b);
    EXPECT_EQ(b[2], 30.0f);
    const float expected[3] = {10.0f, 20.0f, 30.0f};
    runAndCheck(session.s, expected);
  }
  ArtifactHandle artifact;
  SessionHandle session;
  open(artifact, session);
  EXPECT_FALSE(session.s->impl->poisoned());
  EXPECT_EQ(session.s->impl->arena()[100], 0);
}

// Tests lifetimes: a session outlives its artifact handle, and two handles
// of one library are independent.
TEST_F(RuntimeApiTest, Lifetimes) {
  ArtifactHandle first, second;
  ASSERT_OK(tcc_artifact_load(model.c_str(), &first.a));
  ASSERT_OK(tcc_artifact_load(model.c_str(), &second.a));
  SessionHandle session;
  ASSERT_OK(tcc_session_create(first.a, nullptr, &session.s));
  tcc_artifact_destroy(first.a);
  first.a = nullptr;
  const float b[3] = {10.0f, 20.0f, 30.0f};
  runAndCheck(session.s, b);
  tcc_session_destroy(session.s);
  session.s = nullptr;
  SessionHandle again;
  ASSERT_OK(tcc_session_create(second.a, nullptr, &again.s));
  runAndCheck(again.s, b);
  tcc_artifact_destroy(nullptr);
  tcc_session_destroy(nullptr);
}

/// True when PATH is mapped into this process.
bool isMapped(const std::string &path) {
  std::vector<uint8_t> maps = tcc::test::readBytes("/proc/self/maps");
  return contains(std::string(maps.begin(), maps.end()), path);
}

// Tests that the library stays mapped while a session uses it, even after
// the artifact handle is gone, and is unmapped with the last session.
TEST_F(RuntimeApiTest, UnloadsLibrary) {
  ArtifactHandle artifact;
  SessionHandle session;
  open(artifact, session);
  EXPECT_TRUE(isMapped(model));
  tcc_artifact_destroy(artifact.a);
  artifact.a = nullptr;
  EXPECT_TRUE(isMapped(model));
  tcc_session_destroy(session.s);
  session.s = nullptr;
  EXPECT_FALSE(isMapped(model));
}

// Tests that files which are not usable artifacts are refused with the
// right status and a message naming the file and the reason.
TEST_F(RuntimeApiTest, RejectsBadArtifacts) {
  tcc_artifact_t artifact = nullptr;
  EXPECT_ERROR(tcc_artifact_load(dir.file("missing.so").c_str(), &artifact), TCC_ERROR_IO,
               "missing.so: cannot open");
  EXPECT_ERROR(tcc_artifact_load("", &artifact), TCC_ERROR_INVALID_ARGUMENT);
  EXPECT_ERROR(tcc_artifact_load(nullptr, &artifact), TCC_ERROR_INVALID_ARGUMENT, "path is NULL");
  EXPECT_ERROR(tcc_artifact_load(model.c_str(), nullptr), TCC_ERROR_INVALID_ARGUMENT);

  // Random bytes named .so.
  std::vector<uint8_t> junk(8192);
  uint32_t state = 99;
  for (uint8_t &b : junk)
    b = uint8_t((state = state * 1664525u + 1013904223u) >> 24);
  std::string junkPath = dir.file("junk.so");
  tcc::test::writeBytes(junkPath, junk);
  EXPECT_ERROR(tcc_artifact_load(junkPath.c_str(), &artifact), TCC_ERROR_ABI,
               "junk.so: not a loadable shared library");
  // A truncated artifact: refused before dlopen, which would die of SIGBUS.
  std::vector<uint8_t> full = tcc::test::readBytes(model);
  std::vector<uint8_t> cut(full.begin(), full.begin() + full.size() / 3);
  tcc::test::writeBytes(dir.file("cut.so"), cut);
  EXPECT_ERROR(tcc_artifact_load(dir.file("cut.so").c_str(), &artifact), TCC_ERROR_ABI,
               "cut.so: not a loadable shared library: truncated");
  // Cut anywhere, the library loads (only the section table was lost) or is
  // refused; the process never crashes.
  for (size_t length = 0; length < full.size(); length += 61) {
    // A new file each time: rewriting a file the loader has mapped is unsafe.
    std::string path = dir.file("cut" + std::to_string(length) + ".so");
    tcc::test::writeBytes(path, std::vector<uint8_t>(full.begin(), full.begin() + length));
    tcc_status status = tcc_artifact_load(path.c_str(), &artifact);
    EXPECT_TRUE(status == TCC_OK || status == TCC_ERROR_ABI) << length << ": " << tcc_last_error();
    tcc_artifact_destroy(artifact);
    artifact = nullptr;
  }
  // An ELF file that is not a shared library: the test executable itself.
  EXPECT_ERROR(tcc_artifact_load("/proc/self/exe", &artifact), TCC_ERROR_ABI);

  // A real shared library that is not a tcc artifact.
  for (const char *libm : {"/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6",
                           "/lib64/libm.so.6"}) {
    struct stat st;
    if (::stat(libm, &st) != 0)
      continue;
    EXPECT_ERROR(tcc_artifact_load(libm, &artifact), TCC_ERROR_ABI,
                 "not a tcc artifact: no symbol tcc_artifact_descriptor");
    break;
  }
  EXPECT_ERROR(tcc_artifact_load(fixture("add_artifact_abi99.so").c_str(), &artifact),
               TCC_ERROR_ABI, "artifact ABI version 99, but this runtime supports versions 1 to 3");
  EXPECT_ERROR(tcc_artifact_load(fixture("add_artifact_bad_offset.so").c_str(), &artifact),
               TCC_ERROR_ABI, "invalid descriptor", "tensor 'y' at offset 1024",
               "outside the 128-byte arena");
  EXPECT_ERROR(tcc_artifact_load(fixture("add_artifact_unknown_cpu.so").c_str(), &artifact),
               TCC_ERROR_UNSUPPORTED, "tcc-imaginary-feature");
  EXPECT_ERROR(tcc_artifact_load(fixture("add_artifact_bad_library_call.so").c_str(), &artifact),
               TCC_ERROR_ABI, "library call #0", "unknown kind 99");
  EXPECT_EQ(artifact, nullptr);
}

// Tests that a descriptor written before the library-call table existed
// (a smaller struct_size) still loads and runs: appended fields are optional.
TEST_F(RuntimeApiTest, LoadsDescriptorWithoutLibraryCallTable) {
  ArtifactHandle artifact;
  ASSERT_OK(tcc_artifact_load(fixture("add_artifact_old_descriptor.so").c_str(), &artifact.a));
  tcc_session_options options;
  tcc_session_options_init(&options);
  options.skip_default_params = 1;
  SessionHandle session;
  ASSERT_OK(tcc_session_create(artifact.a, &options, &session.s));
  const int64_t shape[] = {2, 3};
  const float x[6] = {1, 2, 3, 4, 5, 6};
  ASSERT_OK(tcc_session_set_input(session.s, "x", TCC_DTYPE_F32, 2, shape, x, sizeof x));
  ASSERT_OK(tcc_session_run(session.s, "infer"));
  float y[6];
  ASSERT_OK(tcc_session_copy_output(session.s, "y", y, sizeof y));
  EXPECT_EQ(y[5], 6.0f); // parameters are zero
  // A descriptor from before the metadata table has none.
  const char *value = nullptr;
  EXPECT_EQ(tcc_artifact_get_metadata(artifact.a, "loss", &value), TCC_ERROR_NOT_FOUND);
  EXPECT_NE(std::string(tcc_last_error()).find("it has none"), std::string::npos);
}

TEST_F(RuntimeApiTest, ReadsMetadata) {
  ArtifactHandle artifact;
  ASSERT_OK(tcc_artifact_load(fixture("add_artifact.so").c_str(), &artifact.a));
  const char *value = nullptr;
  ASSERT_OK(tcc_artifact_get_metadata(artifact.a, "grad_accum", &value));
  EXPECT_STREQ(value, "1");
  ASSERT_OK(tcc_artifact_get_metadata(artifact.a, "loss", &value));
  EXPECT_STREQ(value, "mse");
  EXPECT_EQ(tcc_artifact_get_metadata(artifact.a, "labels", &value), TCC_ERROR_NOT_FOUND);
  EXPECT_NE(std::string(tcc_last_error()).find("has no metadata 'labels'; it has 'loss', 'grad_accum'"),
            std::string::npos)
      << tcc_last_error();
  EXPECT_EQ(tcc_artifact_get_metadata(artifact.a, nullptr, &value), TCC_ERROR_INVALID_ARGUMENT);
}

// Tests the null and option checks of session creation.
TEST_F(RuntimeApiTest, RejectsBadSessionOptions) {
  ArtifactHandle artifact;
  ASSERT_OK(tcc_artifact_load(model.c_str(), &artifact.a));
  SessionHandle session;
  tcc_session_options options;
  tcc_session_options_init(&options);
  options.num_threads = -2;
  EXPECT_ERROR(tcc_session_create(artifact.a, &options, &session.s), TCC_ERROR_INVALID_ARGUMENT,
               "num_threads");
  options.num_threads = 0;
  options.struct_size = 0;
  EXPECT_ERROR(tcc_session_create(artifact.a, &options, &session.s), TCC_ERROR_INVALID_ARGUMENT,
               "tcc_session_options_init");
  EXPECT_ERROR(tcc_session_create(nullptr, nullptr, &session.s), TCC_ERROR_INVALID_ARGUMENT);
  EXPECT_ERROR(tcc_session_create(artifact.a, nullptr, nullptr), TCC_ERROR_INVALID_ARGUMENT);
  // An older caller's smaller struct: the fields it lacks keep defaults.
  tcc_session_options_init(&options);
  options.struct_size = offsetof(tcc_session_options, skip_default_params);
  options.skip_default_params = 1; // beyond struct_size: ignored, so b is loaded
  ASSERT_OK(tcc_session_create(artifact.a, &options, &session.s));
  const float b[3] = {10.0f, 20.0f, 30.0f};
  runAndCheck(session.s, b);
}

// Tests status names and the version string.
TEST(RuntimeApiBasics, StatusStringsAndVersion) {
  EXPECT_STREQ(tcc_status_string(TCC_OK), "TCC_OK");
  EXPECT_STREQ(tcc_status_string(TCC_ERROR_SHAPE), "TCC_ERROR_SHAPE");
  EXPECT_STREQ(tcc_status_string(TCC_ERROR_INTERNAL), "TCC_ERROR_INTERNAL");
  EXPECT_STREQ(tcc_status_string(TCC_ERROR_INTERRUPTED), "TCC_ERROR_INTERRUPTED");
  EXPECT_STREQ(tcc_status_string(TCC_ERROR_RANKS_DIFFER), "TCC_ERROR_RANKS_DIFFER");
  EXPECT_STREQ(tcc_status_string(tcc_status(15)), "unknown status");
  EXPECT_STRNE(tcc_runtime_version(), "");
}

// Tests the last error is per thread.
TEST(RuntimeApiBasics, LastErrorIsPerThread) {
  tcc_artifact_t artifact;
  EXPECT_NE(tcc_artifact_load("/nonexistent/a.so", &artifact), TCC_OK);
  std::string other = "unset";
  std::thread([&] { other = tcc_last_error(); }).join();
  EXPECT_EQ(other, "");
  EXPECT_TRUE(contains(tcc_last_error(), "/nonexistent/a.so"));
}

/// A valid descriptor for y = x + b to break one field at a time.
struct DescriptorBuilder {
  int64_t shape23[2] = {2, 3};
  int64_t shape3[1] = {3};
  tcc_abi_tensor tensors[3] = {
      {"x", TCC_ROLE_INPUT, TCC_DTYPE_F32, TCC_REGION_ARENA, 2, shape23, 0, 24},
      {"y", TCC_ROLE_OUTPUT, TCC_DTYPE_F32, TCC_REGION_ARENA, 2, shape23, 64, 24},
      {"b", TCC_ROLE_PARAM, TCC_DTYPE_F32, TCC_REGION_STATE, 1, shape3, 0, 12},
  };
  int32_t indices[3] = {0, 1, 2};
  static int32_t entryFn(uint8_t *, uint8_t *, const tcc_abi_runtime *) { return 0; }
  tcc_abi_entry entries[1] = {{"infer", &entryFn, 3, indices}};
  tcc_abi_descriptor d = {
      TCC_ABI_VERSION, sizeof(tcc_abi_descriptor), "", "", "", "", 128, 64, 64, 3, 1, tensors,
      entries, 0, nullptr, 0, nullptr, nullptr, 0, nullptr, nullptr, nullptr, 0, 0, 0, nullptr};
  tcc_abi_kernel kernels[1] = {{"k", {1, 1, 1}, {32, 1, 1}, 0, 2}};
  /// A bucket of y's 6 and b's 3 elements, and its wait.
  int64_t startParams[3] = {0, 6, 3};
  int64_t waitParams[1] = {0};
  tcc_abi_collective collectives[2] = {
      {TCC_COLLECTIVE_ALL_REDUCE_START, TCC_DTYPE_F32, 3, 2, startParams},
      {TCC_COLLECTIVE_WAIT, TCC_DTYPE_F32, 1, 2, waitParams}};
  static int32_t variantFn(uint8_t *, uint8_t *, const tcc_abi_runtime *) { return 0; }
  tcc_abi_entry_fn variantFns[1] = {&variantFn};
  tcc_abi_cpu_variant variants[1] = {{"x86-64-v4", "avx2,avx512f", variantFns}};
  /// Gives the descriptor one CPU variant, which needs avx2 and avx512f.
  void addCpuVariant() {
    d.num_cpu_variants = 1;
    d.cpu_variants = variants;
  }
  /// Gives the descriptor the two collectives.
  void addCollectives() {
    d.num_collectives = 2;
    d.collectives = collectives;
  }
  /// Makes the descriptor a valid cuda:sm_90 artifact with one kernel.
  void makeDevice() {
    d.device = "cuda:sm_90";
    d.num_kernels = 1;
    d.kernels = kernels;
    d.ptx = ".version 8.0";
  }

  std::string error() {
    try {
      tcc::rt::validateDescriptor(d, "m.so");
    } catch (const tcc::rt::Error &e) {
      EXPECT_EQ(e.status(), TCC_ERROR_ABI);
      return e.what();
    }
    return "";
  }
};

// Tests each descriptor check on a descriptor broken in one field.
TEST(DescriptorValidation, RejectsEachDefect) {
  EXPECT_EQ(DescriptorBuilder().error(), "");
  struct Case {
    const char *what;
    void (*breakIt)(DescriptorBuilder &);
    const char *expected;
  } cases[] = {
      {"struct size", [](DescriptorBuilder &b) { b.d.struct_size = 16; }, "struct_size 16"},
      {"negative arena", [](DescriptorBuilder &b) { b.d.arena_size = -1; }, "negative arena"},
      {"alignment", [](DescriptorBuilder &b) { b.d.alignment = 48; }, "alignment 48"},
      {"no tensors table", [](DescriptorBuilder &b) { b.d.tensors = nullptr; }, "no tensor table"},
      {"no entries", [](DescriptorBuilder &b) { b.d.num_entries = 0; }, "no entry points"},
      {"no name", [](DescriptorBuilder &b) { b.tensors[0].name = nullptr; },
       "tensor #0 has no name"},
      {"role", [](DescriptorBuilder &b) { b.tensors[0].role = 9; }, "unknown role 9"},
      {"dtype", [](DescriptorBuilder &b) { b.tensors[0].dtype = 0; }, "unknown dtype 0"},
      {"region", [](DescriptorBuilder &b) { b.tensors[2].region = TCC_REGION_ARENA; },
       "must live in the state"},
      {"rank", [](DescriptorBuilder &b) { b.tensors[0].rank = -1; }, "invalid rank -1"},
      {"null shape", [](DescriptorBuilder &b) { b.tensors[0].shape = nullptr; }, "invalid rank 2"},
      {"negative dim", [](DescriptorBuilder &b) { b.shape3[0] = -3; }, "negative dimension -3"},
      {"size bytes", [](DescriptorBuilder &b) { b.tensors[1].size_bytes = 20; },
       "size_bytes 20, but f32[2,3] needs 24"},
      {"unaligned", [](DescriptorBuilder &b) { b.tensors[1].offset = 32; }, "offset 32"},
      {"negative offset", [](DescriptorBuilder &b) { b.tensors[1].offset = -64; }, "offset -64"},
      {"outside state", [](DescriptorBuilder &b) { b.tensors[2].offset = 64; },
       "outside the 64-byte state"},
      {"duplicate name",
       [](DescriptorBuilder &b) {
         b.tensors[1].role = TCC_ROLE_INPUT;
         b.tensors[1].name = "x";
       },
       "two inputs are named 'x'"},
      {"overlapping inputs",
       [](DescriptorBuilder &b) {
         b.tensors[1].role = TCC_ROLE_INPUT;
         b.tensors[1].offset = 0;
       },
       "inputs 'x' and 'y' overlap"},
      {"entry name", [](DescriptorBuilder &b) { b.entries[0].name = ""; },
       "entry point #0 has no name"},
      {"entry fn", [](DescriptorBuilder &b) { b.entries[0].fn = nullptr; }, "has no function"},
      {"entry index", [](DescriptorBuilder &b) { b.indices[2] = 3; }, "refers to tensor #3 of 3"},
      {"entry tensors", [](DescriptorBuilder &b) { b.entries[0].tensor_indices = nullptr; },
       "no tensor list"},
      {"device form", [](DescriptorBuilder &b) { b.makeDevice(); b.d.device = "cuda:90"; },
       "device 'cuda:90' is not of the form cuda:sm_NN"},
      {"kernels without PTX", [](DescriptorBuilder &b) { b.makeDevice(); b.d.ptx = nullptr; },
       "kernels without PTX"},
      {"kernel name", [](DescriptorBuilder &b) { b.makeDevice(); b.kernels[0].name = nullptr; },
       "kernel #0 has no name"},
      {"kernel grid", [](DescriptorBuilder &b) { b.makeDevice(); b.kernels[0].grid[1] = 0; },
       "kernel #0 'k' has an empty grid"},
      {"kernel table", [](DescriptorBuilder &b) { b.makeDevice(); b.d.kernels = nullptr; },
       "no table for 1 kernels"},
      {"kernels without device",
       [](DescriptorBuilder &b) {
         b.makeDevice();
         b.d.device = nullptr;
       },
       "1 kernels but no device"},
      {"collective table",
       [](DescriptorBuilder &b) {
         b.addCollectives();
         b.d.collectives = nullptr;
       },
       "no table for 2 collectives"},
      {"collective kind",
       [](DescriptorBuilder &b) {
         b.addCollectives();
         b.collectives[0].kind = 7;
       },
       "collective #0: unknown kind 7"},
      {"collective dtype",
       [](DescriptorBuilder &b) {
         b.addCollectives();
         b.collectives[0].dtype = TCC_DTYPE_I64;
       },
       "ALL_REDUCE_START of dtype i64"},
      {"collective counts",
       [](DescriptorBuilder &b) {
         b.addCollectives();
         b.collectives[0].num_params = 2;
       },
       "ALL_REDUCE_START with 2 parameters for 2 operands"},
      {"collective empty operand",
       [](DescriptorBuilder &b) {
         b.addCollectives();
         b.startParams[2] = 0;
       },
       "operand 1 has 0 elements"},
      {"wait target",
       [](DescriptorBuilder &b) {
         b.addCollectives();
         b.waitParams[0] = 1;
       },
       "collective #1: WAIT for collective #1, which is not an earlier row"},
      {"wait operands",
       [](DescriptorBuilder &b) {
         b.addCollectives();
         b.collectives[1].num_operands = 1;
       },
       "not an ALL_REDUCE_START of as many operands"},
      {"cpu variants table",
       [](DescriptorBuilder &b) {
         b.addCpuVariant();
         b.d.cpu_variants = nullptr;
       },
       "no table for 1 CPU variants"},
      {"cpu variant name",
       [](DescriptorBuilder &b) {
         b.addCpuVariant();
         b.variants[0].name = "";
       },
       "CPU variant #0 has no name or no entry functions"},
      {"cpu variant function",
       [](DescriptorBuilder &b) {
         b.addCpuVariant();
         b.variantFns[0] = nullptr;
       },
       "CPU variant #0 'x86-64-v4' has no function for entry point #0"},
  };
  for (const Case &c : cases) {
    DescriptorBuilder builder;
    c.breakIt(builder);
    std::string error = builder.error();
    EXPECT_TRUE(contains(error, c.expected)) << c.what << ": " << error;
    EXPECT_EQ(error.rfind("m.so: ", 0), 0u) << c.what << ": " << error;
  }
  DescriptorBuilder other;
  other.d.abi_version = TCC_ABI_VERSION + 1;
  EXPECT_TRUE(contains(other.error(), "artifact ABI version 4, but this runtime supports "
                                      "versions 1 to 3"));
  // Every version from the oldest on loads; collectives are well formed.
  DescriptorBuilder first;
  first.d.abi_version = TCC_ABI_MIN_VERSION;
  EXPECT_EQ(first.error(), "");
  DescriptorBuilder collective;
  collective.addCollectives();
  EXPECT_EQ(collective.error(), "");
  DescriptorBuilder device;
  device.makeDevice();
  EXPECT_EQ(device.error(), "");
  DescriptorBuilder variant;
  variant.addCpuVariant();
  EXPECT_EQ(variant.error(), "");
  // In-place outputs over inputs are legal.
  DescriptorBuilder inPlace;
  inPlace.tensors[1].offset = 0;
  EXPECT_EQ(inPlace.error(), "");
}

// Tests which code a CPU runs: the first variant whose features it has,
// else the entries' own; TCC_CPU_VARIANT's choice, refused with a message
// naming the variable when the CPU lacks it or the artifact has no such
// variant; an older descriptor (ending before the table) has none.
TEST(CpuVariantSelection, PicksByFeaturesAndRequest) {
  using tcc::rt::selectCpuVariant;
  DescriptorBuilder b;
  b.addCpuVariant();
  std::set<std::string> avx2 = {"avx", "avx2", "fma"};
  std::set<std::string> avx512 = {"avx", "avx2", "fma", "avx512f"};
  EXPECT_EQ(selectCpuVariant(b.d, avx2, nullptr, "m.so"), -1);
  EXPECT_EQ(selectCpuVariant(b.d, avx512, nullptr, "m.so"), 0);
  EXPECT_EQ(selectCpuVariant(b.d, avx512, "", "m.so"), 0);
  EXPECT_EQ(selectCpuVariant(b.d, avx512, "base", "m.so"), -1);
  EXPECT_EQ(selectCpuVariant(b.d, avx512, "x86-64-v4", "m.so"), 0);
  auto failure = [&](const std::set<std::string> &host, const char *request) {
    try {
      selectCpuVariant(b.d, host, request, "m.so");
    } catch (const tcc::rt::Error &e) {
      return std::make_pair(e.status(), std::string(e.what()));
    }
    return std::make_pair(TCC_OK, std::string());
  };
  auto [lacking, lackingWhy] = failure(avx2, "x86-64-v4");
  EXPECT_EQ(lacking, TCC_ERROR_UNSUPPORTED);
  EXPECT_TRUE(contains(lackingWhy, "m.so: TCC_CPU_VARIANT is 'x86-64-v4', but")) << lackingWhy;
  EXPECT_TRUE(contains(lackingWhy, "avx512f")) << lackingWhy;
  auto [unknown, unknownWhy] = failure(avx512, "znver4");
  EXPECT_EQ(unknown, TCC_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(unknownWhy, "TCC_CPU_VARIANT is 'znver4'; this artifact's code variants "
                                   "are base, x86-64-v4"))
      << unknownWhy;
  DescriptorBuilder older;
  older.addCpuVariant();
  older.d.struct_size = offsetof(tcc_abi_descriptor, num_cpu_variants);
  EXPECT_EQ(tcc::rt::numCpuVariants(older.d), 0);
  EXPECT_EQ(selectCpuVariant(older.d, avx512, nullptr, "m.so"), -1);
}

// Tests the books on outputs: setting an input that shares bytes with an
// output (an in-place plan: the fixture built with y over x) makes the output
// unreadable until the next run; a disjoint input leaves it readable.
TEST_F(RuntimeApiTest, InputInvalidatesAliasedOutput) {
  tcc_session_options options;
  tcc_session_options_init(&options);
  options.skip_default_params = 1;
  const float zeros[3] = {0, 0, 0};
  const void *data;
  size_t size;

  ArtifactHandle inPlace;
  SessionHandle aliased;
  ASSERT_OK(tcc_artifact_load(fixture("add_artifact_in_place.so").c_str(), &inPlace.a));
  ASSERT_OK(tcc_session_create(inPlace.a, &options, &aliased.s));
  runAndCheck(aliased.s, zeros);
  ASSERT_OK(tcc_session_set_input(aliased.s, "x", TCC_DTYPE_F32, 2, kShape, kX, sizeof kX));
  EXPECT_ERROR(tcc_session_get_output(aliased.s, "y", &data, &size), TCC_ERROR_INVALID_STATE,
               "output 'y'", "overwritten by setting input 'x'");
  runAndCheck(aliased.s, zeros);

  ArtifactHandle artifact;
  SessionHandle session;
  open(artifact, session, &options);
  runAndCheck(session.s, zeros);
  ASSERT_OK(tcc_session_set_input(session.s, "x", TCC_DTYPE_F32, 2, kShape, kX, sizeof kX));
  EXPECT_EQ(tcc_session_get_output(session.s, "y", &data, &size), TCC_OK) << tcc_last_error();
}

} // namespace
