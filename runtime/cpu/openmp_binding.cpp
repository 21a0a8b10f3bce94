//===- openmp_binding.cpp - libraries loaded onto the process's libomp ----===//

#include "runtime/cpu/openmp_binding.h"

#include "runtime/cpu/parallel.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <map>
#include <mutex>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tcc::rt {

namespace {

#if defined(__x86_64__)
constexpr uint16_t kMachine = EM_X86_64;
constexpr uint32_t kJumpSlot = R_X86_64_JUMP_SLOT, kGlobDat = R_X86_64_GLOB_DAT,
                   kAbs64 = R_X86_64_64;
#elif defined(__aarch64__)
constexpr uint16_t kMachine = EM_AARCH64;
constexpr uint32_t kJumpSlot = R_AARCH64_JUMP_SLOT, kGlobDat = R_AARCH64_GLOB_DAT,
                   kAbs64 = R_AARCH64_ABS64;
#else
#error "openmp_binding.cpp reads RELA relocations of x86-64 or AArch64 only"
#endif

/// The object that contains ADDRESS, or null.
const link_map *objectAt(const void *address) {
  Dl_info info;
  void *extra = nullptr;
  if (!address || !dladdr1(address, &info, &extra, RTLD_DL_LINKMAP))
    return nullptr;
  return static_cast<const link_map *>(extra);
}

const link_map *objectOf(void *handle) {
  link_map *map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0)
    return nullptr;
  return map;
}

std::string nameOf(const link_map *map) {
  return map && map->l_name && *map->l_name ? map->l_name : "the main program";
}

const link_map *openMPRuntime() { return objectAt(openMPRuntimeAddress()); }

bool isOpenMPSymbol(const char *name) {
  for (const char *prefix : {"GOMP_", "omp_", "kmp_", "__kmpc_"})
    if (std::strncmp(name, prefix, std::strlen(prefix)) == 0)
      return true;
  return false;
}

/// Calls visit(name, slot) for each relocation of MAP that binds an
/// undefined symbol (GOT and PLT slots, absolute addresses), SLOT being the
/// address the slot holds now: objectAt(slot) is MAP itself while a lazily
/// bound function is not bound yet, null for an unresolved weak reference.
/// (Callers look up only the names they care about: dladdr scans a symbol
/// table, and MKL's core has tens of thousands of relocations.)
template <typename Visit> void forEachReference(const link_map *map, Visit visit) {
  const ElfW(Sym) *symtab = nullptr;
  const char *strtab = nullptr;
  const ElfW(Rela) *tables[2] = {nullptr, nullptr};
  size_t sizes[2] = {0, 0};
  // glibc relocates the d_ptr entries of a writable .dynamic in place; a
  // read-only one keeps offsets from the load address.
  auto at = [&](ElfW(Addr) p) { return p < map->l_addr ? map->l_addr + p : p; };
  for (const ElfW(Dyn) *d = map->l_ld; d && d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
    case DT_SYMTAB:
      symtab = reinterpret_cast<const ElfW(Sym) *>(at(d->d_un.d_ptr));
      break;
    case DT_STRTAB:
      strtab = reinterpret_cast<const char *>(at(d->d_un.d_ptr));
      break;
    case DT_RELA:
      tables[0] = reinterpret_cast<const ElfW(Rela) *>(at(d->d_un.d_ptr));
      break;
    case DT_RELASZ:
      sizes[0] = d->d_un.d_val;
      break;
    case DT_JMPREL:
      tables[1] = reinterpret_cast<const ElfW(Rela) *>(at(d->d_un.d_ptr));
      break;
    case DT_PLTRELSZ:
      sizes[1] = d->d_un.d_val;
      break;
    default:
      break;
    }
  }
  if (!symtab || !strtab)
    return;
  for (int t = 0; t < 2; ++t) {
    if (!tables[t])
      continue;
    for (size_t i = 0; i < sizes[t] / sizeof(ElfW(Rela)); ++i) {
      const ElfW(Rela) &r = tables[t][i];
      uint32_t type = ELF64_R_TYPE(r.r_info), index = ELF64_R_SYM(r.r_info);
      if (index == 0 || (type != kJumpSlot && type != kGlobDat && type != kAbs64) ||
          symtab[index].st_shndx != SHN_UNDEF)
        continue;
      void *slot = *reinterpret_cast<void *const *>(map->l_addr + r.r_offset);
      if (type == kAbs64)
        slot = static_cast<char *>(slot) - r.r_addend;
      visit(strtab + symtab[index].st_name, slot);
    }
  }
}

/// Serializes loadOnOpenMP.
std::mutex loadMutex;

/// The shim handle in whose scope each object that a shim loaded resolves
/// its symbols, guarded by scopesMutex.
std::mutex scopesMutex;
std::map<const link_map *, void *> shimScopes;

/// Makes libomp visible to libraries loaded later (dlopen RTLD_GLOBAL),
/// even when the runtime itself was loaded with RTLD_LOCAL.
void exposeOpenMPGlobally(const link_map *omp) {
  dlopen(omp->l_name, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL); // a reference kept for good
}

/// An ELF shared object with nothing of its own but DT_NEEDED entries,
/// NEEDED in order: opened with RTLD_DEEPBIND, the objects that its opening
/// loads search its scope (itself, then NEEDED and their dependencies,
/// breadth first) before the global one.
std::string shimImage(const std::vector<std::string> &needed) {
  std::string strings(1, '\0');
  std::vector<ElfW(Dyn)> dynamic;
  for (const std::string &name : needed) {
    dynamic.push_back({DT_NEEDED, {strings.size()}});
    strings += name;
    strings += '\0';
  }
  constexpr size_t kPhnum = 3;
  const size_t hashAt = sizeof(ElfW(Ehdr)) + kPhnum * sizeof(ElfW(Phdr));
  const size_t symAt = hashAt + 4 * sizeof(Elf32_Word); // 1 bucket, 1 chain
  const size_t strAt = symAt + sizeof(ElfW(Sym));       // the null symbol
  const size_t dynAt = (strAt + strings.size() + 7) / 8 * 8;
  for (auto [tag, value] : {std::pair<ElfW(Sxword), size_t>{DT_HASH, hashAt},
                            {DT_STRTAB, strAt},
                            {DT_STRSZ, strings.size()},
                            {DT_SYMTAB, symAt},
                            {DT_SYMENT, sizeof(ElfW(Sym))},
                            {DT_NULL, 0}})
    dynamic.push_back({tag, {value}});
  const size_t size = dynAt + dynamic.size() * sizeof(ElfW(Dyn));
  std::string image(size, '\0');

  ElfW(Ehdr) header{};
  std::memcpy(header.e_ident, ELFMAG, SELFMAG);
  header.e_ident[EI_CLASS] = ELFCLASS64;
  header.e_ident[EI_DATA] = ELFDATA2LSB;
  header.e_ident[EI_VERSION] = EV_CURRENT;
  header.e_type = ET_DYN;
  header.e_machine = kMachine;
  header.e_version = EV_CURRENT;
  header.e_phoff = sizeof(ElfW(Ehdr));
  header.e_ehsize = sizeof(ElfW(Ehdr));
  header.e_phentsize = sizeof(ElfW(Phdr));
  header.e_phnum = kPhnum;
  std::memcpy(image.data(), &header, sizeof header);

  // One writable segment (glibc relocates a writable .dynamic in place),
  // the dynamic section in it, and a non-executable stack: without
  // PT_GNU_STACK glibc would make every thread's stack executable.
  ElfW(Phdr) segments[kPhnum]{};
  segments[0].p_type = PT_LOAD;
  segments[0].p_flags = PF_R | PF_W;
  segments[0].p_filesz = segments[0].p_memsz = size;
  segments[0].p_align = 0x10000; // a multiple of any page size
  segments[1].p_type = PT_DYNAMIC;
  segments[1].p_flags = PF_R | PF_W;
  segments[1].p_offset = segments[1].p_vaddr = segments[1].p_paddr = dynAt;
  segments[1].p_filesz = segments[1].p_memsz = size - dynAt;
  segments[1].p_align = 8;
  segments[2].p_type = PT_GNU_STACK;
  segments[2].p_flags = PF_R | PF_W;
  segments[2].p_align = 16;
  std::memcpy(image.data() + header.e_phoff, segments, sizeof segments);

  const Elf32_Word hash[4] = {1, 1, 0, 0}; // every lookup ends at the null symbol
  std::memcpy(image.data() + hashAt, hash, sizeof hash);
  std::memcpy(image.data() + strAt, strings.data(), strings.size());
  std::memcpy(image.data() + dynAt, dynamic.data(), dynamic.size() * sizeof(ElfW(Dyn)));
  return image;
}

/// A path that opens FD ("/proc/self/fd/N"). The descriptors stay open for
/// the life of the process: dlopen knows an object by this name, so the
/// number must never name another file.
std::string fdPath(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

/// A memfd named NAME holding IMAGE; -1 with WHY set on failure.
int memfdWith(const char *name, const std::string &image, std::string &why) {
  int fd = memfd_create(name, MFD_CLOEXEC);
  if (fd < 0) {
    why = std::string("memfd_create: ") + std::strerror(errno);
    return -1;
  }
  for (size_t done = 0; done < image.size();) {
    ssize_t n = write(fd, image.data() + done, image.size() - done);
    if (n <= 0) {
      why = std::string("writing a memfd: ") + std::strerror(errno);
      close(fd);
      return -1;
    }
    done += size_t(n);
  }
  return fd;
}

/// A memfd holding a copy of the file PATH; -1 with WHY set on failure.
int privateCopy(const std::string &path, std::string &why) {
  int in = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (in < 0 || fstat(in, &st) != 0) {
    why = "cannot read " + path + " for a private copy: " + std::strerror(errno);
    if (in >= 0)
      close(in);
    return -1;
  }
  const char *base = std::strrchr(path.c_str(), '/');
  int out = memfd_create(base ? base + 1 : path.c_str(), MFD_CLOEXEC);
  off_t offset = 0;
  while (out >= 0 && offset < st.st_size)
    if (sendfile(out, in, &offset, size_t(st.st_size - offset)) <= 0)
      break;
  if (out < 0 || offset != st.st_size) {
    why = "cannot copy " + path + " into memory: " + std::strerror(errno);
    if (out >= 0)
      close(out);
    out = -1;
  }
  close(in);
  return out;
}

/// What loadOnOpenMP says once when another runtime owns GOMP_*.
void warnForeignOnce(const std::string &foreign, const link_map *omp) {
  static std::once_flag once;
  std::call_once(once, [&] {
    std::fprintf(stderr,
                 "tcc: GOMP_parallel resolves to %s, an OpenMP runtime loaded before tcc's (by "
                 "torch, or a library that links it); tcc binds the libraries it loads (oneDNN, "
                 "BLAS) to its own %s, so tcc runs on one thread pool and the other runtime's "
                 "pool serves the code that loaded it\n",
                 foreign.c_str(), nameOf(omp).c_str());
  });
}

} // namespace

std::string foreignGnuOpenMP() {
  const link_map *owner = objectAt(dlsym(RTLD_DEFAULT, "GOMP_parallel"));
  if (!owner || owner == openMPRuntime())
    return "";
  return nameOf(owner);
}

std::string boundLibrary(void *handle, const char *symbol) {
  const link_map *map = objectOf(handle);
  std::string found;
  if (map)
    forEachReference(map, [&](const char *name, const void *slot) {
      if (found.empty() && std::strcmp(name, symbol) == 0) {
        const link_map *target = objectAt(slot);
        found = target ? nameOf(target) : "(unresolved)";
      }
    });
  return found;
}

std::string openMPMismatch(void *handle) {
  const link_map *map = objectOf(handle);
  const link_map *omp = openMPRuntime();
  if (!map || !omp)
    return "";
  void *scope = RTLD_DEFAULT;
  {
    std::lock_guard<std::mutex> lock(scopesMutex);
    auto it = shimScopes.find(map);
    if (it != shimScopes.end())
      scope = it->second;
  }
  std::string mismatch;
  forEachReference(map, [&](const char *name, const void *slot) {
    if (!mismatch.empty() || !isOpenMPSymbol(name))
      return;
    const link_map *target = objectAt(slot);
    if (target == map) // a function not bound yet: where binding will look
      target = objectAt(dlsym(scope, name));
    if (target && target != omp)
      mismatch = std::string(name) + " of " + nameOf(map) + " resolves to " + nameOf(target) +
                 ", not tcc's OpenMP runtime " + nameOf(omp);
  });
  return mismatch;
}

std::vector<void *> loadOnOpenMP(const std::vector<std::string> &files, const OpenMPLoad &how,
                                 std::string &why) {
  std::lock_guard<std::mutex> lock(loadMutex);
  const link_map *omp = openMPRuntime();
  if (!omp) {
    why = "the runtime's own libomp is not found";
    return {};
  }
  std::string foreign = foreignGnuOpenMP();
  if (foreign.empty())
    exposeOpenMPGlobally(omp);

  // What to open: each file, or a private copy of one already loaded and
  // bound to another runtime (opening it again would return that object).
  // A file loaded before and already bound to libomp is used as it is.
  std::vector<std::string> targets;
  std::vector<bool> fresh;
  for (const std::string &file : files) {
    void *loaded = dlopen(file.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    std::string mismatch = loaded ? openMPMismatch(loaded) : "";
    if (mismatch.empty()) {
      targets.push_back(file);
      fresh.push_back(!loaded);
      if (loaded)
        dlclose(loaded);
      continue;
    }
    std::string path = nameOf(objectOf(loaded));
    dlclose(loaded); // its loader keeps it
    if (!how.copyIfBound) {
      why = "it was loaded before tcc's runtime, and " + mismatch;
      return {};
    }
    int fd = privateCopy(path, why);
    if (fd < 0)
      return {};
    targets.push_back(fdPath(fd));
    fresh.push_back(true);
  }

  int mode = (how.lazy ? RTLD_LAZY : RTLD_NOW) | RTLD_LOCAL;
  std::vector<void *> handles;
  dlerror();
  if (foreign.empty()) {
    // libomp is global: the global scope, searched first, binds GOMP_*.
    for (const std::string &target : targets) {
      void *handle = dlopen(target.c_str(), mode);
      if (!handle) {
        const char *error = dlerror();
        why = error ? error : "dlopen " + target + " failed";
        return {};
      }
      handles.push_back(handle);
    }
  } else {
    // Another runtime's GOMP_* come first in the global scope: open the
    // files through a shim that puts libomp first in their own scope.
    std::vector<std::string> needed = {nameOf(omp)};
    needed.insert(needed.end(), targets.begin(), targets.end());
    int fd = memfdWith("tcc-openmp-scope", shimImage(needed), why);
    if (fd < 0)
      return {};
    void *shim = dlopen(fdPath(fd).c_str(), mode | RTLD_DEEPBIND);
    if (!shim) {
      const char *error = dlerror();
      why = error ? error : "dlopen of the OpenMP shim failed";
      return {};
    }
    for (size_t i = 0; i < targets.size(); ++i) {
      void *handle = dlopen(targets[i].c_str(), RTLD_LAZY | RTLD_NOLOAD);
      if (!handle) {
        why = targets[i] + " is not among the objects its shim loaded";
        return {};
      }
      if (fresh[i]) {
        std::lock_guard<std::mutex> scopesLock(scopesMutex);
        shimScopes[objectOf(handle)] = shim;
      }
      handles.push_back(handle);
    }
    warnForeignOnce(foreign, omp);
  }
  // Not closed on failure: a library's initialization may have started
  // threads.
  for (void *handle : handles) {
    std::string mismatch = openMPMismatch(handle);
    if (!mismatch.empty()) {
      why = mismatch;
      return {};
    }
  }
  return handles;
}

} // namespace tcc::rt
