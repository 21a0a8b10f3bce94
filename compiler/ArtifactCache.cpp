//===- ArtifactCache.cpp - the fingerprint, and artifacts cached ----------===//
//
// An artifact is named by a hash of what determines it (the imported
// program, the weights, the options) and, before the import, by the source
// key; the compile cache holds the artifact, its weights and its warnings
// under those names (docs/compile.md).
//
//===---------------------------------------------------------------------===//

#include "compiler/Compilation.h"

#include "dialects/TccNames.h"
#include "passes/Passes.h"
#include "runtime/include/tcc/abi.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace mlir;

namespace {

/// BLAKE3 over whatever is printed to it: the IR is hashed as it prints,
/// never held as one string.
class HashStream : public llvm::raw_ostream {
public:
  HashStream() { SetUnbuffered(); }
  std::string digest() {
    flush();
    return llvm::toHex(hash.final<32>(), /*LowerCase=*/true);
  }

private:
  void write_impl(const char *ptr, size_t size) override {
    hash.update(ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(ptr), size));
    written += size;
  }
  uint64_t current_pos() const override { return written; }
  llvm::BLAKE3 hash;
  uint64_t written = 0;
};

/// Prints every option of OPTIONS that shapes the artifact beyond the
/// imported program (whose shapes the import options fix), with CPU the
/// resolved --cpu, and TRAINING, the step's options, when given.
void printArtifactOptions(llvm::raw_ostream &os, const tcc::CompileOptions &options,
                          const tcc::TargetCpu &cpu, bool train,
                          const tcc::TrainingOptions *training) {
  os << "target=" << options.target << " cpu=" << cpu.name << "+" << cpu.features
     << " library-calls=" << options.libraryCalls << " fusion=" << int(options.fusion)
     << " profile=" << options.profile << " optimize=" << options.optimize << " train=" << train
     << " memory-budget=" << options.memoryBudget << " remat=" << int(options.remat)
     << " auto-batch=" << options.autoBatch << " cpu-variants=" << options.cpuVariants;
  if (options.globalBatch != 0)
    os << " global-batch=" << options.globalBatch;
  if (!options.lengthBuckets.empty()) {
    os << " length-buckets=" << options.lengthDim;
    for (int64_t v : options.lengthBuckets)
      os << "," << v;
  }
  // The cubin is ptxas' (the PTX is this compiler's, in its identity).
  if (options.target != "cpu")
    os << " ptxas="
       << tcc::hashKey({tcc::findPtxas(tcc::defaultCudaToolkitPath()).version});
  if (options.cudaEmulation)
    os << " cuda-emulation=1";
  if (training)
    tcc::createBuildTrainStepPass(*training)->printAsTextualPipeline(os);
}

std::string weightsPath(StringRef artifact) {
  llvm::SmallString<256> path(artifact);
  llvm::sys::path::replace_extension(path, ".safetensors");
  return std::string(path);
}

/// Writes BYTES to PATH through a temporary file of its own beside it
/// (concurrent compiles may write one output).
std::error_code writeAtomically(StringRef path, StringRef bytes) {
  llvm::SmallString<256> tmp;
  llvm::sys::fs::createUniquePath(path + ".tmp-%%%%%%%%", tmp, /*MakeAbsolute=*/false);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(tmp, ec, llvm::sys::fs::OF_None);
    if (ec)
      return ec;
    os << bytes;
    os.close();
    if (os.has_error()) {
      ec = os.error();
      os.clear_error();
      llvm::sys::fs::remove(tmp);
      return ec;
    }
  }
  return llvm::sys::fs::rename(tmp, path);
}

} // namespace

std::string tcc::Compilation::canonicalOptions() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  printArtifactOptions(os, options, targetCpu, train, train ? &training : nullptr);
  return text;
}

std::string tcc::Compilation::fingerprint() const {
  HashStream program;
  module.get()->print(program, OpPrintingFlags().enableDebugInfo(false));
  HashStream parameters;
  for (const tcc::Weight &w : weights) {
    parameters << w.name << '\0' << w.dtype << '\0' << w.init << '\0';
    for (int64_t d : w.shape)
      parameters << d << ',';
    parameters.write(w.bytes.data(), w.bytes.size());
  }
  return tcc::hashKey({"fingerprint", canonicalOptions(), program.digest(), parameters.digest()});
}

void tcc::Compilation::recordStateFingerprint() {
  // ZeRO-1 only moves where the optimizer state lives: its checkpoints are
  // those of the same compile without --zero (the fingerprint that compile
  // computes), so that either artifact resumes the other's.
  int64_t zero = training.zero;
  training.zero = 0;
  std::string state = fingerprint();
  training.zero = zero;
  MLIRContext *ctx = &context;
  NamedAttrList merged;
  if (auto existing = (*module)->getAttrOfType<DictionaryAttr>(tcc::attr::metadata))
    merged.append(existing.getValue());
  merged.set(StringAttr::get(ctx, TCC_METADATA_STATE_FINGERPRINT), StringAttr::get(ctx, state));
  (*module)->setAttr(tcc::attr::metadata, merged.getDictionary(ctx));
}

FailureOr<bool> tcc::Compilation::reuseArtifact(StringRef earlier) {
  std::string key = tcc::hashKey({"artifact", tcc::compilerIdentity(), artifactFingerprint});
  TimingScope scope = root.nest("artifact cache lookup");
  std::optional<std::string> library = cache->lookup(key, "so");
  if (!library)
    return false;
  std::optional<std::string> recorded = cache->lookup(key, "warnings");
  if (!recorded)
    return false;
  // The weights first (linked from the cache, not copied): an artifact is
  // never there without its weights.
  std::string message;
  if (!cache->lookupFile(key, "weights", weightsPath(options.output), message))
    return message.empty() ? FailureOr<bool>(false) : FailureOr<bool>(error() << message);
  if (std::error_code ec = writeAtomically(options.output, *library))
    return error() << "cannot write '" << options.output << "': " << ec.message();
  replayWarnings(context, earlier);
  replayWarnings(context, *recorded);
  artifactFromCache = true;
  return true;
}

void tcc::Compilation::storeArtifact() {
  if (!cache || !cache->enabled() || options.report != tcc::Report::None ||
      !options.memoryPlot.empty())
    return;
  auto library = llvm::MemoryBuffer::getFile(options.output, /*IsText=*/false,
                                             /*RequiresNullTerminator=*/false);
  if (!library)
    return;
  std::string key = tcc::hashKey({"artifact", tcc::compilerIdentity(), artifactFingerprint});
  cache->store(key, "warnings", warnings);
  cache->storeFile(key, "weights", weightsPath(options.output));
  cache->store(key, "so", (*library)->getBuffer());
  storeSource();
}

FailureOr<bool> tcc::Compilation::reuseBySource() {
  TimingScope scope = root.nest("source key");
  source = tcc::SourceKey::compute(options.input, tcc::artifactOptionsKey(options));
  if (!source)
    return false;
  std::optional<std::string> entry = cache->lookup(source->key(), "fingerprint");
  if (!entry)
    return false;
  auto [fingerprint, recorded] = StringRef(*entry).split('\n');
  artifactFingerprint = fingerprint.str();
  scope.stop();
  FailureOr<bool> reused = reuseArtifact(recorded);
  foundBySource = succeeded(reused) && *reused;
  return reused;
}

void tcc::Compilation::storeSource() {
  if (source && source->storable())
    cache->store(source->key(), "fingerprint", artifactFingerprint + "\n" + importWarnings);
}

std::string tcc::artifactOptionsKey(const CompileOptions &options) {
  std::string text;
  llvm::raw_string_ostream os(text);
  std::string cpuError;
  std::optional<TargetCpu> cpu = resolveTargetCpu(options.cpu, cpuError);
  if (!cpu) {
    // A --cpu that does not resolve fails the compile; its text keys it here.
    cpu.emplace();
    cpu->name = options.cpu;
  }
  printArtifactOptions(os, options, *cpu, options.train, &options.training);
  // A .tcc recipe applies after the import, by these.
  os << " infer-only=" << options.inferOnly << " given=";
  for (StringRef key : options.trainingGiven.keys())
    os << key << ',';
  const OnnxImportOptions &import = options.import;
  os << " batch=" << (import.batch ? std::to_string(*import.batch) : "none")
     << " function=" << import.functionName << " dims=";
  std::vector<std::pair<std::string, int64_t>> dims;
  for (const auto &d : import.dims)
    dims.push_back({d.getKey().str(), d.getValue()});
  llvm::sort(dims);
  for (const auto &[name, size] : dims)
    os << name << '=' << size << ',';
  std::vector<std::string> constants;
  for (const auto &c : import.constantInputs)
    constants.push_back(c.getKey().str());
  llvm::sort(constants);
  for (const std::string &name : constants) {
    const ConstantInput &c = import.constantInputs.find(name)->second;
    os << " const " << name << ' ' << c.dtype << ' ';
    for (int64_t d : c.shape)
      os << d << ',';
    os << ' ' << hashKey({StringRef(c.bytes.data(), c.bytes.size())});
  }
  os << " buffers=";
  for (const std::string &pattern : import.buffers)
    os << pattern << ',';
  return text;
}
