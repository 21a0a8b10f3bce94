//===- artifact.cpp - a loaded, validated tcc artifact ----------------------===//
//
// Loading is dlopen + dlsym + a full check of the descriptor. The checks run
// in an order that never reads a field the ABI version does not promise: the
// version first, then the structure size, then everything else.
//
//===----------------------------------------------------------------------===//

#include "runtime/artifact.h"
#include "runtime/dist/collectives.h"

#include "runtime/cpu/cpu_features.h"
#include "runtime/cpu/onednn.h"
#include "runtime/cuda/driver.h"
#include "runtime/dtype.h"
#include "runtime/error.h"
#include "runtime/support/file_io.h"
#include "runtime/support/file_roles.h"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <set>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace tcc::rt {

const char *roleName(int32_t role) {
  switch (role) {
  case TCC_ROLE_INPUT:
    return "input";
  case TCC_ROLE_OUTPUT:
    return "output";
  case TCC_ROLE_STATE:
    return "state tensor";
  case TCC_ROLE_PARAM:
    return "parameter";
  default:
    return "tensor";
  }
}

namespace {

/// The most dimensions a tensor may have; more is corruption.
constexpr int32_t kMaxRank = 64;
/// The largest region alignment we honour (a huge page).
constexpr int64_t kMaxAlignment = int64_t(1) << 21;

[[noreturn]] void invalid(const std::string &what, const std::string &message) {
  fail(TCC_ERROR_ABI, what + ": invalid descriptor: " + message);
}

/// Tensors of one role in one region must not share bytes: each holds its
/// own value when an entry starts (inputs, parameters) or ends (outputs).
void checkDisjoint(const tcc_abi_descriptor &d, int32_t role, const std::string &what) {
  std::vector<std::pair<int64_t, int32_t>> starts;
  for (int32_t i = 0; i < d.num_tensors; ++i)
    if (d.tensors[i].role == role && d.tensors[i].size_bytes > 0)
      starts.emplace_back(d.tensors[i].offset, i);
  std::sort(starts.begin(), starts.end());
  for (size_t k = 1; k < starts.size(); ++k) {
    const tcc_abi_tensor &a = d.tensors[starts[k - 1].second];
    const tcc_abi_tensor &b = d.tensors[starts[k].second];
    if (a.offset + a.size_bytes > b.offset)
      invalid(what,
              std::string(roleName(role)) + "s '" + a.name + "' and '" + b.name + "' overlap");
  }
}

#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
#else
#error "tcc's runtime knows x86-64 and AArch64 hosts"
#endif

/// Checks what the dynamic loader will trust in PATH's ELF headers: a 64-bit
/// little-endian shared object for this machine whose program headers and
/// loaded segments lie inside the file. dlopen maps segments without
/// comparing them with the file size, so a truncated library would die of
/// SIGBUS inside dlopen instead of failing. Returns "" or the reason.
std::string checkElf(int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0)
    return "cannot stat: " + errnoString(errno);
  if (!S_ISREG(st.st_mode))
    return "not a regular file";
  uint64_t size = uint64_t(st.st_size);
  auto readAt = [fd](void *out, size_t n, uint64_t offset) {
    return ::pread(fd, out, n, off_t(offset)) == ssize_t(n);
  };
  Elf64_Ehdr header;
  if (size < sizeof header || !readAt(&header, sizeof header, 0) ||
      std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0)
    return "not an ELF file";
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB)
    return "not a 64-bit little-endian ELF file";
  if (header.e_type != ET_DYN)
    return "an ELF file, but not a shared library";
  if (header.e_machine != kHostMachine)
    return "a shared library for another machine (ELF e_machine " +
           std::to_string(header.e_machine) + ")";
  if (header.e_phentsize != sizeof(Elf64_Phdr) || header.e_phnum == 0 || header.e_phoff > size ||
      uint64_t(header.e_phnum) * sizeof(Elf64_Phdr) > size - header.e_phoff)
    return "truncated or corrupt ELF program headers";
  for (uint16_t i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr ph;
    if (!readAt(&ph, sizeof ph, header.e_phoff + uint64_t(i) * sizeof ph))
      return "cannot read the ELF program headers";
    if ((ph.p_type == PT_LOAD || ph.p_type == PT_DYNAMIC) &&
        (ph.p_offset > size || ph.p_filesz > size - ph.p_offset))
      return "truncated: a segment ends at byte " + std::to_string(ph.p_offset + ph.p_filesz) +
             " of a " + std::to_string(size) + "-byte file";
  }
  return "";
}

} // namespace

// An appended field is present when struct_size covers it.
#define TCC_HAS_FIELD(d, field) \
  ((d).struct_size >= offsetof(tcc_abi_descriptor, field) + sizeof((d).field))

int32_t numLibraryCalls(const tcc_abi_descriptor &d) {
  return TCC_HAS_FIELD(d, library_calls) ? d.num_library_calls : 0;
}

int32_t numCollectives(const tcc_abi_descriptor &d) {
  return TCC_HAS_FIELD(d, collectives) ? d.num_collectives : 0;
}

int32_t numMetadata(const tcc_abi_descriptor &d) {
  return TCC_HAS_FIELD(d, metadata) ? d.num_metadata : 0;
}

int32_t numCpuVariants(const tcc_abi_descriptor &d) {
  return TCC_HAS_FIELD(d, cpu_variants) ? d.num_cpu_variants : 0;
}

int32_t selectCpuVariant(const tcc_abi_descriptor &d, const std::set<std::string> &host,
                         const char *request, const std::string &what) {
  std::string wanted = request ? request : "";
  int32_t n = numCpuVariants(d);
  if (wanted == "base")
    return -1;
  std::string names = "base";
  for (int32_t i = 0; i < n; ++i) {
    const tcc_abi_cpu_variant &v = d.cpu_variants[i];
    names += std::string(", ") + v.name;
    std::string missing = checkCpuFeatures(v.cpu_features ? v.cpu_features : "", host);
    if (wanted.empty() && missing.empty())
      return i;
    if (wanted == v.name) {
      if (!missing.empty())
        fail(TCC_ERROR_UNSUPPORTED,
             what + ": TCC_CPU_VARIANT is '" + wanted + "', but " + missing);
      return i;
    }
  }
  if (!wanted.empty())
    fail(TCC_ERROR_INVALID_ARGUMENT, what + ": TCC_CPU_VARIANT is '" + wanted +
                                         "'; this artifact's code variants are " + names);
  return -1;
}

bool isDeviceArtifact(const tcc_abi_descriptor &d) {
  return TCC_HAS_FIELD(d, device) && d.device != nullptr;
}

const tcc_abi_emulated_kernel *emulatedKernels(const tcc_abi_descriptor &d) {
  return isDeviceArtifact(d) && TCC_HAS_FIELD(d, emulated_kernels) ? d.emulated_kernels : nullptr;
}

void validateDescriptor(const tcc_abi_descriptor &d, const std::string &what) {
  if (d.abi_version < TCC_ABI_MIN_VERSION || d.abi_version > TCC_ABI_VERSION)
    fail(TCC_ERROR_ABI, what + ": artifact ABI version " + std::to_string(d.abi_version) +
                            ", but this runtime supports versions " +
                            std::to_string(TCC_ABI_MIN_VERSION) + " to " +
                            std::to_string(TCC_ABI_VERSION) +
                            "; recompile the model with a matching tcc");
  // Descriptors from before the library-call table end at num_library_calls.
  constexpr size_t kMinSize = offsetof(tcc_abi_descriptor, num_library_calls);
  if (d.struct_size < kMinSize)
    invalid(what, "struct_size " + std::to_string(d.struct_size) + " is smaller than the " +
                      std::to_string(kMinSize) + " bytes of ABI version " +
                      std::to_string(TCC_ABI_VERSION));
  if (d.arena_size < 0 || d.state_size < 0)
    invalid(what, "negative arena or state size");
  if (d.alignment <= 0 || (d.alignment & (d.alignment - 1)) != 0 || d.alignment > kMaxAlignment)
    invalid(what,
            "alignment " + std::to_string(d.alignment) + " is not a power of two up to 2 MiB");
  if (d.num_tensors < 0 || (d.num_tensors > 0 && !d.tensors))
    invalid(what, "no tensor table for " + std::to_string(d.num_tensors) + " tensors");
  if (d.num_entries <= 0 || !d.entries)
    invalid(what, "no entry points");

  std::set<std::pair<int32_t, std::string>> names;
  for (int32_t i = 0; i < d.num_tensors; ++i) {
    const tcc_abi_tensor &t = d.tensors[i];
    std::string which = "tensor #" + std::to_string(i);
    if (!t.name || !*t.name)
      invalid(what, which + " has no name");
    which = "tensor '" + std::string(t.name) + "'";
    if (t.role != TCC_ROLE_INPUT && t.role != TCC_ROLE_OUTPUT && t.role != TCC_ROLE_PARAM &&
        t.role != TCC_ROLE_STATE)
      invalid(what, which + " has unknown role " + std::to_string(t.role));
    if (!names.emplace(t.role, t.name).second)
      invalid(what, "two " + std::string(roleName(t.role)) + "s are named '" + t.name + "'");
    if (!isValidDtype(t.dtype))
      invalid(what, which + " has unknown dtype " + std::to_string(t.dtype));
    int32_t expectedRegion = t.role == TCC_ROLE_PARAM || t.role == TCC_ROLE_STATE
                                 ? TCC_REGION_STATE
                                 : TCC_REGION_ARENA;
    if (t.region != expectedRegion)
      invalid(what, which + ": a " + roleName(t.role) + " must live in the " +
                        (expectedRegion == TCC_REGION_STATE ? "state" : "arena") + ", not region " +
                        std::to_string(t.region));
    if (t.rank < 0 || t.rank > kMaxRank || (t.rank > 0 && !t.shape))
      invalid(what, which + " has invalid rank " + std::to_string(t.rank));
    for (int32_t k = 0; k < t.rank; ++k)
      if (t.shape[k] < 0)
        invalid(what, which + " has negative dimension " + std::to_string(t.shape[k]));
    int64_t bytes;
    if (!tensorByteSize(t.dtype, t.shape, size_t(t.rank), &bytes))
      invalid(what, which + " is too large");
    if (t.size_bytes != bytes)
      invalid(what, which + " has size_bytes " + std::to_string(t.size_bytes) + ", but " +
                        dtypeName(t.dtype) + shapeString(t.shape, size_t(t.rank)) + " needs " +
                        std::to_string(bytes));
    int64_t regionSize = t.region == TCC_REGION_STATE ? d.state_size : d.arena_size;
    const char *regionName = t.region == TCC_REGION_STATE ? "state" : "arena";
    if (t.offset < 0 || t.offset % 64 != 0)
      invalid(what, which + " has offset " + std::to_string(t.offset) +
                        ", which is not a non-negative multiple of 64");
    if (t.offset > regionSize || t.size_bytes > regionSize - t.offset)
      invalid(what, which + " at offset " + std::to_string(t.offset) + " with " +
                        std::to_string(t.size_bytes) + " bytes lies outside the " +
                        std::to_string(regionSize) + "-byte " + regionName);
  }
  checkDisjoint(d, TCC_ROLE_INPUT, what);
  checkDisjoint(d, TCC_ROLE_OUTPUT, what);
  checkDisjoint(d, TCC_ROLE_PARAM, what);
  checkDisjoint(d, TCC_ROLE_STATE, what);

  int32_t calls = numLibraryCalls(d);
  if (calls < 0 || (calls > 0 && !d.library_calls))
    invalid(what, "no table for " + std::to_string(calls) + " library calls");
  for (int32_t i = 0; i < calls; ++i) {
    std::string problem = checkLibraryCall(d.library_calls[i]);
    if (!problem.empty())
      invalid(what, "library call #" + std::to_string(i) + ": " + problem);
  }

  int32_t collectives = numCollectives(d);
  if (collectives < 0 || (collectives > 0 && !d.collectives))
    invalid(what, "no table for " + std::to_string(collectives) + " collectives");
  for (int32_t i = 0; i < collectives; ++i) {
    std::string problem = checkCollective(d.collectives, i);
    if (!problem.empty())
      invalid(what, "collective #" + std::to_string(i) + ": " + problem);
  }

  int32_t metadata = numMetadata(d);
  if (metadata < 0 || (metadata > 0 && !d.metadata))
    invalid(what, "no table for " + std::to_string(metadata) + " metadata entries");
  for (int32_t i = 0; i < metadata; ++i)
    if (!d.metadata[i].key || !*d.metadata[i].key || !d.metadata[i].value)
      invalid(what, "metadata entry #" + std::to_string(i) + " has no key or no value");

  if (isDeviceArtifact(d)) {
    // A device descriptor carries the whole kernel table.
    if (!TCC_HAS_FIELD(d, device_scratch_size))
      invalid(what, "struct_size " + std::to_string(d.struct_size) +
                        " ends inside the device fields");
    if (cuda::parseCudaArch(d.device) < 0)
      invalid(what, "device '" + std::string(d.device) + "' is not of the form cuda:sm_NN");
    if (d.num_kernels < 0 || (d.num_kernels > 0 && !d.kernels))
      invalid(what, "no table for " + std::to_string(d.num_kernels) + " kernels");
    if (d.num_kernels > 0 && !d.ptx)
      invalid(what, "kernels without PTX");
    if (d.cubin_size < 0 || (d.cubin_size > 0 && !d.cubin))
      invalid(what, "cubin_size " + std::to_string(d.cubin_size) + " without a cubin");
    if (d.device_scratch_size < 0)
      invalid(what, "negative device_scratch_size");
    for (int32_t i = 0; i < d.num_kernels; ++i) {
      const tcc_abi_kernel &k = d.kernels[i];
      std::string which = "kernel #" + std::to_string(i);
      if (!k.name || !*k.name)
        invalid(what, which + " has no name");
      for (int a = 0; a < 3; ++a)
        if (k.grid[a] <= 0 || k.block[a] <= 0)
          invalid(what, which + " '" + k.name + "' has an empty grid or block");
      if (k.shared_bytes < 0 || k.num_params < 0)
        invalid(what, which + " '" + k.name + "' has negative shared_bytes or num_params");
      if (const tcc_abi_emulated_kernel *twins = emulatedKernels(d)) {
        const tcc_abi_emulated_kernel &twin = twins[i];
        if (!twin.fn || twin.shared_bytes < 0 || (twin.synchronizes != 0 && twin.synchronizes != 1))
          invalid(what, which + " '" + k.name +
                            "' has an emulated twin without a function, with negative "
                            "shared_bytes or with synchronizes not 0 or 1");
      }
    }
  } else if (TCC_HAS_FIELD(d, num_kernels) && d.num_kernels != 0) {
    invalid(what, std::to_string(d.num_kernels) + " kernels but no device");
  }

  int32_t variants = numCpuVariants(d);
  if (variants < 0 || (variants > 0 && !d.cpu_variants))
    invalid(what, "no table for " + std::to_string(variants) + " CPU variants");
  for (int32_t i = 0; i < variants; ++i) {
    const tcc_abi_cpu_variant &v = d.cpu_variants[i];
    std::string which = "CPU variant #" + std::to_string(i);
    if (!v.name || !*v.name || !v.fns)
      invalid(what, which + " has no name or no entry functions");
    for (int32_t k = 0; k < d.num_entries; ++k)
      if (!v.fns[k])
        invalid(what, which + " '" + v.name + "' has no function for entry point #" +
                          std::to_string(k));
  }

  std::set<std::string> entryNames;
  for (int32_t i = 0; i < d.num_entries; ++i) {
    const tcc_abi_entry &e = d.entries[i];
    if (!e.name || !*e.name)
      invalid(what, "entry point #" + std::to_string(i) + " has no name");
    std::string which = "entry point '" + std::string(e.name) + "'";
    if (!entryNames.insert(e.name).second)
      invalid(what, "two entry points are named '" + std::string(e.name) + "'");
    if (!e.fn)
      invalid(what, which + " has no function");
    if (e.num_tensors < 0 || (e.num_tensors > 0 && !e.tensor_indices))
      invalid(what, which + " has no tensor list");
    for (int32_t k = 0; k < e.num_tensors; ++k)
      if (e.tensor_indices[k] < 0 || e.tensor_indices[k] >= d.num_tensors)
        invalid(what, which + " refers to tensor #" + std::to_string(e.tensor_indices[k]) + " of " +
                          std::to_string(d.num_tensors));
  }
}

std::shared_ptr<Artifact> Artifact::load(const std::string &path) {
  if (path.empty())
    fail(TCC_ERROR_INVALID_ARGUMENT, "empty artifact path");
  // Distinguish "cannot read" from "not a library" before dlopen blurs them.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    fail(TCC_ERROR_IO, path + ": cannot open: " + errnoString(errno));
  std::string elfProblem = checkElf(fd);
  ::close(fd);
  if (!elfProblem.empty())
    fail(TCC_ERROR_ABI, path + ": not a loadable shared library: " + elfProblem);

  std::shared_ptr<Artifact> artifact(new Artifact());
  artifact->path_ = path;
  // A name without a slash would make dlopen search the library path.
  std::string openPath = path.find('/') == std::string::npos ? "./" + path : path;
  dlerror();
  artifact->handle_ = ::dlopen(openPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!artifact->handle_) {
    const char *why = dlerror();
    fail(TCC_ERROR_ABI, path + ": not a loadable shared library: " + (why ? why : "dlopen failed"));
  }
  dlerror();
  void *symbol = ::dlsym(artifact->handle_, TCC_ABI_DESCRIPTOR_SYMBOL);
  if (!symbol)
    fail(TCC_ERROR_ABI, path + ": not a tcc artifact: no symbol " TCC_ABI_DESCRIPTOR_SYMBOL);
  auto descriptorFn = reinterpret_cast<tcc_abi_descriptor_fn>(symbol);
  artifact->descriptor_ = descriptorFn();
  if (!artifact->descriptor_)
    fail(TCC_ERROR_ABI, path + ": " TCC_ABI_DESCRIPTOR_SYMBOL " returned no descriptor");
  validateDescriptor(*artifact->descriptor_, path);
  artifact->readBatchMetadata();
  artifact->readLabels();
  std::string cpuProblem = checkCpuFeatures(artifact->cpuFeatures(), hostCpuFeatures());
  if (!cpuProblem.empty())
    fail(TCC_ERROR_UNSUPPORTED, path + ": " + cpuProblem);
  int32_t variant = selectCpuVariant(*artifact->descriptor_, hostCpuFeatures(),
                                     std::getenv("TCC_CPU_VARIANT"), path);
  if (variant >= 0)
    artifact->variant_ = &artifact->descriptor_->cpu_variants[variant];
  return artifact;
}

std::shared_ptr<Artifact> Artifact::fromDescriptor(const tcc_abi_descriptor &d,
                                                   const std::string &what) {
  validateDescriptor(d, what);
  std::shared_ptr<Artifact> artifact(new Artifact());
  artifact->path_ = what;
  artifact->descriptor_ = &d;
  artifact->readBatchMetadata();
  artifact->readLabels();
  return artifact;
}

tcc_abi_entry_fn Artifact::entryFn(const tcc_abi_entry &entry) const {
  return variant_ ? variant_->fns[&entry - descriptor_->entries] : entry.fn;
}

void Artifact::readLabels() {
  const char *loss = metadata(TCC_METADATA_LOSS);
  if (!loss || std::strcmp(loss, "cross_entropy") != 0)
    return;
  const char *name = metadata(TCC_METADATA_LABELS);
  int32_t index = findTensor(name ? name : "y", TCC_ROLE_INPUT);
  const tcc_abi_entry *infer = findEntry(TCC_ENTRY_INFER);
  if (index < 0 || tensor(index).dtype != TCC_DTYPE_I64 || !infer)
    return;
  for (int32_t k = 0; k < infer->num_tensors; ++k) {
    const tcc_abi_tensor &t = tensor(infer->tensor_indices[k]);
    if (t.role != TCC_ROLE_OUTPUT || t.rank < 1)
      continue;
    labels_.index = index;
    labels_.classes = t.shape[t.rank - 1];
    break;
  }
  if (const char *ignore = metadata(TCC_METADATA_IGNORE_INDEX)) {
    char *end = nullptr;
    long long v = std::strtoll(ignore, &end, 10);
    labels_.hasIgnore = *ignore && !*end;
    labels_.ignoreIndex = v;
  }
}

void Artifact::readBatchMetadata() {
  const tcc_abi_descriptor &d = *descriptor_;
  auto number = [&](const char *key, const char *text) {
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < 1)
      invalid(path_, std::string("metadata '") + key + "' = '" + text +
                         "' is not a positive integer");
    return int64_t(v);
  };
  const std::string prefix = TCC_METADATA_BATCH_ROWS_PREFIX;
  int32_t n = numMetadata(d);
  for (int32_t i = 0; i < n; ++i)
    if (std::strcmp(d.metadata[i].key, TCC_METADATA_BATCH) == 0)
      batch_ = number(d.metadata[i].key, d.metadata[i].value);
  if (batch_ == 0)
    return;
  batchRows_.assign(size_t(d.num_tensors), 0);
  for (int32_t i = 0; i < n; ++i) {
    std::string key = d.metadata[i].key;
    if (key.compare(0, prefix.size(), prefix) != 0)
      continue;
    int64_t rows = number(d.metadata[i].key, d.metadata[i].value);
    std::string name = key.substr(prefix.size());
    bool found = false;
    for (int32_t role : {TCC_ROLE_INPUT, TCC_ROLE_OUTPUT}) {
      int32_t t = findTensor(name, role);
      if (t < 0)
        continue;
      const tcc_abi_tensor &tensor = d.tensors[t];
      if (tensor.rank < 1 || tensor.shape[0] != rows * batch_)
        invalid(path_, "metadata '" + key + "': tensor '" + name + "' does not have " +
                           std::to_string(rows * batch_) + " leading rows");
      batchRows_[size_t(t)] = rows;
      found = true;
    }
    if (!found)
      invalid(path_, "metadata '" + key + "' names no input or output");
  }
}

Artifact::~Artifact() {
  if (handle_)
    ::dlclose(handle_);
}

std::string Artifact::defaultParamsPath() const { return paramsBeside(path_); }

int64_t Artifact::alignment() const { return std::max<int64_t>(64, descriptor_->alignment); }

int32_t Artifact::findTensor(const std::string &name, int32_t role) const {
  for (int32_t i = 0; i < descriptor_->num_tensors; ++i)
    if (descriptor_->tensors[i].role == role && name == descriptor_->tensors[i].name)
      return i;
  return -1;
}

const tcc_abi_entry *Artifact::findEntry(const std::string &name) const {
  for (int32_t i = 0; i < descriptor_->num_entries; ++i)
    if (name == descriptor_->entries[i].name)
      return &descriptor_->entries[i];
  return nullptr;
}

const char *Artifact::metadata(const char *key) const {
  // validateDescriptor checked that every entry has a key and a value.
  for (int32_t i = 0; i < numMetadata(*descriptor_); ++i)
    if (std::strcmp(descriptor_->metadata[i].key, key) == 0)
      return descriptor_->metadata[i].value;
  return nullptr;
}

int32_t Artifact::countTensors(int32_t role) const {
  int32_t n = 0;
  for (int32_t i = 0; i < descriptor_->num_tensors; ++i)
    n += descriptor_->tensors[i].role == role;
  return n;
}

std::string Artifact::listTensors(int32_t role) const {
  std::string out;
  for (int32_t i = 0; i < descriptor_->num_tensors; ++i)
    if (descriptor_->tensors[i].role == role)
      out += (out.empty() ? "'" : ", '") + std::string(descriptor_->tensors[i].name) + "'";
  return out.empty() ? "none" : out;
}

std::string Artifact::listEntries() const {
  std::string out;
  for (int32_t i = 0; i < descriptor_->num_entries; ++i)
    out += (i ? ", '" : "'") + std::string(descriptor_->entries[i].name) + "'";
  return out;
}

} // namespace tcc::rt
