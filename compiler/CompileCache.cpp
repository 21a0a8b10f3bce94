//===- CompileCache.cpp - the persistent compile cache ---------------------===//
//
// Entries are whole files renamed into place; every read checks the
// payload's hash, so a bad entry is a miss, never wrong code.
//
//===----------------------------------------------------------------------===//

#include "compiler/CompileCache.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <vector>

using namespace llvm;

namespace {

constexpr StringLiteral kMagic = "tcc-cache-entry-1\n";
constexpr size_t kHashBytes = 32;
constexpr size_t kHeaderBytes = kMagic.size() + kHashBytes + 8;

std::array<uint8_t, kHashBytes> digest(StringRef bytes) {
  return BLAKE3::hash<kHashBytes>(
      ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()));
}

std::optional<std::string> env(const char *name) {
  std::optional<std::string> value = sys::Process::GetEnv(name);
  if (value && value->empty())
    return std::nullopt;
  return value;
}

/// A file entry's check: the payload's length, then its hash.
std::string checkOf(StringRef bytes) {
  std::string check(8, '\0');
  support::endian::write64le(check.data(), bytes.size());
  std::array<uint8_t, kHashBytes> hash = digest(bytes);
  check.append(reinterpret_cast<const char *>(hash.data()), kHashBytes);
  return check;
}

std::error_code lastError() { return std::error_code(errno, std::generic_category()); }

/// Makes TO (which must not exist) a reflink of FROM: a copy that shares
/// FROM's blocks until either is written (btrfs, XFS); fails elsewhere.
std::error_code cloneFile(StringRef from, StringRef to) {
  int in = ::open(from.str().c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0)
    return lastError();
  int out = ::open(to.str().c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  std::error_code ec;
  if (out < 0 || ::ioctl(out, FICLONE, in) != 0)
    ec = lastError();
  if (out >= 0)
    ::close(out);
  ::close(in);
  if (ec && out >= 0)
    ::unlink(to.str().c_str());
  return ec;
}

/// Puts a file with FROM's bytes at TO (which must not exist): a reflink,
/// else a copy. Never a hard link: the file at TO is the user's (an output,
/// or the cache's own entry), and writing into one must not change the
/// other.
std::error_code placeFile(StringRef from, StringRef to, tcc::CompileCache::Placement &how) {
  how = tcc::CompileCache::Placement::Reflink;
  if (!cloneFile(from, to))
    return std::error_code();
  how = tcc::CompileCache::Placement::Copy;
  return sys::fs::copy_file(from, to);
}

constexpr StringLiteral kTemporaryPrefix = "tmp-";
constexpr size_t kTemporaryRandom = 12;

bool isLowerHex(StringRef text) {
  return llvm::all_of(text, [](char c) { return isDigit(c) || (c >= 'a' && c <= 'f'); });
}

/// Whether NAME is a file this cache writes: an entry, `<64 hex digits>.
/// <kind>` with a kind the compiler stores, or a temporary, `tmp-` and 12
/// hex digits. Anything else in the folder is somebody else's, and the cache
/// never removes it.
bool isOwnEntry(StringRef name) {
  auto [key, kind] = name.split('.');
  return key.size() == 2 * kHashBytes && isLowerHex(key) &&
         llvm::is_contained(tcc::CompileCache::kKinds, kind);
}
bool isOwnTemporary(StringRef name) {
  return name.consume_front(kTemporaryPrefix) && name.size() == kTemporaryRandom &&
         isLowerHex(name);
}

} // namespace

std::string tcc::defaultCacheDir() {
  if (auto dir = env("TCC_CACHE_DIR"))
    return *dir;
  SmallString<256> path;
  if (auto xdg = env("XDG_CACHE_HOME")) {
    path = *xdg;
  } else if (auto home = env("HOME")) {
    path = *home;
    sys::path::append(path, ".cache");
  } else {
    return "";
  }
  sys::path::append(path, "tcc");
  return std::string(path);
}

std::optional<uint64_t> tcc::defaultCacheSize() {
  std::optional<std::string> text = env("TCC_CACHE_SIZE");
  if (!text)
    return uint64_t(5) << 30;
  StringRef s = *text;
  unsigned shift = 0;
  if (s.consume_back_insensitive("k") || s.consume_back_insensitive("kib"))
    shift = 10;
  else if (s.consume_back_insensitive("m") || s.consume_back_insensitive("mib"))
    shift = 20;
  else if (s.consume_back_insensitive("g") || s.consume_back_insensitive("gib"))
    shift = 30;
  uint64_t n;
  if (s.getAsInteger(10, n) || n > (UINT64_MAX >> shift))
    return std::nullopt;
  return n << shift;
}

StringRef tcc::compilerIdentity() {
  static const std::string identity = [] {
    std::string code;
    Dl_info info;
    void *self = reinterpret_cast<void *>(&tcc::compilerIdentity);
    if (dladdr(self, &info) && info.dli_fname)
      if (auto file = MemoryBuffer::getFile(info.dli_fname))
        code = toHex(digest((*file)->getBuffer()), /*LowerCase=*/true);
    // In the main program dladdr names it as it was started ("tcc" when
    // found on PATH), which is no path to read: the loader's own path is.
    if (code.empty())
      if (auto file = MemoryBuffer::getFile(llvm::sys::fs::getMainExecutable(nullptr, self)))
        code = toHex(digest((*file)->getBuffer()), /*LowerCase=*/true);
    // Unreadable (it always is readable in practice): the process's start
    // time makes the identity unique, so the cache is never wrongly shared.
    if (code.empty())
      code = std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
    return hashKey({code, LLVM_VERSION_STRING});
  }();
  return identity;
}

std::string tcc::hashKey(ArrayRef<StringRef> parts) {
  BLAKE3 hash;
  for (StringRef part : parts) {
    uint8_t length[8];
    support::endian::write64le(length, part.size());
    hash.update(ArrayRef<uint8_t>(length, 8));
    hash.update(ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(part.data()), part.size()));
  }
  return toHex(hash.final<kHashBytes>(), /*LowerCase=*/true);
}

tcc::CompileCache::CompileCache(std::string dir, uint64_t maxBytes)
    : dir_(std::move(dir)), maxBytes_(maxBytes) {
  if (dir_.empty()) {
    problem_ = "no cache folder (set TCC_CACHE_DIR, XDG_CACHE_HOME or HOME)";
    return;
  }
  if (std::error_code ec = sys::fs::create_directories(dir_)) {
    problem_ = dir_ + ": " + ec.message();
    return;
  }
  if (sys::fs::access(dir_, sys::fs::AccessMode::Write))
    problem_ = dir_ + ": not writable";
}

std::string tcc::CompileCache::temporaryModel() const {
  SmallString<256> model(dir_);
  sys::path::append(model, kTemporaryPrefix + std::string(kTemporaryRandom, '%'));
  return std::string(model);
}

std::string tcc::CompileCache::path(StringRef key, StringRef kind) const {
  assert(llvm::is_contained(kKinds, kind) && "a kind the cache knows as its own");
  SmallString<256> p(dir_);
  sys::path::append(p, key + "." + kind);
  return std::string(p);
}

std::optional<std::string> tcc::CompileCache::read(StringRef file) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFile(file, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return std::nullopt;
  StringRef bytes = (*buffer)->getBuffer();
  bool good = bytes.size() >= kHeaderBytes && bytes.starts_with(kMagic);
  StringRef payload;
  if (good) {
    StringRef hash = bytes.substr(kMagic.size(), kHashBytes);
    uint64_t length = support::endian::read64le(bytes.data() + kMagic.size() + kHashBytes);
    payload = bytes.substr(kHeaderBytes);
    std::array<uint8_t, kHashBytes> actual = digest(payload);
    good = length == payload.size() &&
           hash == StringRef(reinterpret_cast<const char *>(actual.data()), kHashBytes);
  }
  if (!good) {
    // Whoever finds a bad entry removes it; the compile then rebuilds it.
    sys::fs::remove(file);
    ++stats_.corrupt;
    return std::nullopt;
  }
  // Least recently used goes first when the folder is trimmed.
  ::utimes(file.str().c_str(), nullptr);
  return payload.str();
}

std::optional<std::string> tcc::CompileCache::lookup(StringRef key, StringRef kind) {
  if (!enabled())
    return std::nullopt;
  std::optional<std::string> payload = read(path(key, kind));
  ++(payload ? stats_.hits : stats_.misses);
  return payload;
}

bool tcc::CompileCache::lookupFile(StringRef key, StringRef kind, StringRef dest,
                                   std::string &error, Placement *placement) {
  if (!enabled())
    return false;
  std::string checkFile = path(key, (kind + ".check").str());
  std::string file = path(key, kind);
  std::optional<std::string> check = read(checkFile);
  if (!check) {
    ++stats_.misses;
    return false;
  }
  // Placed beside DEST under a name of its own (concurrent compiles to one
  // output), checked there, then renamed over DEST: the bytes checked are
  // the bytes DEST gets, whatever happens to the entry meanwhile.
  SmallString<256> tmp;
  sys::fs::createUniquePath(dest + ".tmp-%%%%%%%%", tmp, /*MakeAbsolute=*/false);
  Placement how;
  if (std::error_code ec = placeFile(file, tmp, how)) {
    ++stats_.misses;
    // No data beside the check (trimmed): a miss. Else DEST's folder is
    // the problem.
    if (sys::fs::exists(file))
      error = "cannot write '" + tmp.str().str() + "': " + ec.message();
    return false;
  }
  ErrorOr<std::unique_ptr<MemoryBuffer>> placed =
      MemoryBuffer::getFile(tmp, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!placed || checkOf((*placed)->getBuffer()) != *check) {
    sys::fs::remove(tmp);
    sys::fs::remove(file);
    sys::fs::remove(checkFile);
    ++stats_.corrupt;
    ++stats_.misses;
    return false;
  }
  ::utimes(file.c_str(), nullptr);
  if (std::error_code ec = sys::fs::rename(tmp, dest)) {
    sys::fs::remove(tmp);
    ++stats_.misses;
    error = "cannot write '" + dest.str() + "': " + ec.message();
    return false;
  }
  if (placement)
    *placement = how;
  ++stats_.hits;
  return true;
}

void tcc::CompileCache::storeFile(StringRef key, StringRef kind, StringRef source) {
  if (!enabled())
    return;
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFile(source, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer) {
    ++stats_.failedStores;
    return;
  }
  StringRef bytes = (*buffer)->getBuffer();
  SmallString<256> tmp;
  sys::fs::createUniquePath(temporaryModel(), tmp, /*MakeAbsolute=*/false);
  // A reflink of SOURCE; else the bytes just hashed are the bytes written
  // (never SOURCE itself through a hard link: it is the user's output).
  bool written = !cloneFile(source, tmp);
  if (!written) {
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      raw_fd_ostream os(fd, /*shouldClose=*/true);
      os << bytes;
      os.close();
      written = !os.has_error();
      os.clear_error();
    }
  }
  // Read-only: the cache's own copy, which nothing should write into.
  bool stored = written && ::chmod(tmp.c_str(), 0444) == 0 && !sys::fs::rename(tmp, path(key, kind));
  if (!stored)
    sys::fs::remove(tmp);
  if (!stored) {
    ++stats_.failedStores;
    return;
  }
  store(key, (kind + ".check").str(), checkOf(bytes));
}

void tcc::CompileCache::store(StringRef key, StringRef kind, StringRef payload) {
  if (!enabled())
    return;
  int fd;
  SmallString<256> tmp;
  if (sys::fs::createUniqueFile(temporaryModel(), fd, tmp)) {
    ++stats_.failedStores;
    return;
  }
  bool written;
  {
    raw_fd_ostream os(fd, /*shouldClose=*/true);
    std::array<uint8_t, kHashBytes> hash = digest(payload);
    uint8_t length[8];
    support::endian::write64le(length, payload.size());
    os << kMagic;
    os.write(reinterpret_cast<const char *>(hash.data()), kHashBytes);
    os.write(reinterpret_cast<const char *>(length), 8);
    os << payload;
    os.close();
    written = !os.has_error();
    os.clear_error();
  }
  if (!written || sys::fs::rename(tmp, path(key, kind))) {
    sys::fs::remove(tmp);
    ++stats_.failedStores;
    return;
  }
  ++stats_.stores;
}

void tcc::CompileCache::trim() {
  if (!enabled())
    return;
  struct Entry {
    std::string path;
    uint64_t size;
    sys::TimePoint<> used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  auto now = std::chrono::system_clock::now();
  std::error_code ec;
  for (sys::fs::directory_iterator it(dir_, ec), end; it != end && !ec; it.increment(ec)) {
    sys::fs::file_status status;
    if (sys::fs::status(it->path(), status) || status.type() != sys::fs::file_type::regular_file)
      continue;
    StringRef name = sys::path::filename(it->path());
    if (isOwnTemporary(name)) {
      if (now - status.getLastModificationTime() > std::chrono::hours(1))
        sys::fs::remove(it->path());
      continue;
    }
    if (!isOwnEntry(name))
      continue;
    entries.push_back({it->path(), status.getSize(), status.getLastModificationTime()});
    total += status.getSize();
  }
  if (total <= maxBytes_)
    return;
  std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) {
    return a.used != b.used ? a.used < b.used : a.path < b.path;
  });
  for (const Entry &e : entries) {
    if (total <= maxBytes_)
      break;
    if (!sys::fs::remove(e.path))
      total -= e.size;
  }
}
