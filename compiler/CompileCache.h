//===- CompileCache.h - the persistent compile cache -----------------------===//
//
// A folder of entries keyed by a hash of everything that determines their
// contents (the IR, the target, the options, the compiler itself): the
// object code of each group of kernels, and whole artifacts. Several
// compiles may share one cache at the same time; nothing a crash, a full
// disk or a concurrent writer leaves behind is ever read as an entry.
//
// An entry is one file, `<key>.<kind>`: a magic line, the payload's BLAKE3
// hash and length, then the payload. It is written to a temporary file in
// the cache folder and renamed into place (atomic on POSIX), so a reader
// sees a whole entry or none; a reader that finds a bad one (truncated,
// altered) removes it and compiles. The folder is kept under a size bound
// by removing the entries used least recently (a hit refreshes the file's
// modification time).
//
// Large payloads (an artifact's weights) are file entries instead: the
// payload as a plain file, `<key>.<kind>`, read-only, with its size and
// BLAKE3 hash in an ordinary entry `<key>.<kind>.check`. A hit puts the file
// at its destination as a reflink, else a copy (never a hard link: an output
// is the user's to write into), and checks the hash of what it put there
// before renaming it into place: a damaged entry is never used.
//
// The folder may hold other files (a user's TCC_CACHE_DIR pointed at a
// folder of theirs): the cache only ever removes what it writes itself,
// entries named `<64 hex digits>.<one of kKinds>` and temporaries `tmp-<12
// hex digits>` (ccache's rule).
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_COMPILECACHE_H
#define TCC_COMPILER_COMPILECACHE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

namespace tcc {

/// $TCC_CACHE_DIR, else $XDG_CACHE_HOME/tcc, else $HOME/.cache/tcc; empty
/// when none of them is set.
std::string defaultCacheDir();

/// $TCC_CACHE_SIZE in bytes (a number with an optional K, M or G suffix,
/// powers of 1024), else 5 GiB; nullopt when the variable does not parse.
std::optional<uint64_t> defaultCacheSize();

/// A hash of the compiler's own code (the file holding this function: the
/// tcc executable, or a library that links the compiler) and the LLVM it
/// was built with: entries of another build never match.
llvm::StringRef compilerIdentity();

/// A hex BLAKE3 digest of PARTS, each length-prefixed (so that the split
/// between parts counts).
std::string hashKey(llvm::ArrayRef<llvm::StringRef> parts);

class CompileCache {
public:
  /// The kinds of entries the compiler stores: object code of a kernel
  /// group, an artifact's library, weights (a file entry, and its check),
  /// its warnings, and a source key's fingerprint.
  static constexpr llvm::StringLiteral kKinds[] = {"o",       "so",       "weights",
                                                   "weights.check", "warnings", "fingerprint"};

  struct Stats {
    std::atomic<unsigned> hits{0}, misses{0}, stores{0}, corrupt{0}, failedStores{0};
  };

  /// A cache in DIR (created if missing) bounded to MAXBYTES. An unusable
  /// folder leaves the cache disabled: every lookup misses, and `problem`
  /// says why (a compile goes on without it).
  CompileCache(std::string dir, uint64_t maxBytes);

  bool enabled() const { return problem_.empty(); }
  const std::string &problem() const { return problem_; }
  const std::string &dir() const { return dir_; }

  /// The payload stored under KEY and KIND, or nullopt. A bad entry is
  /// removed and counted in `stats().corrupt`. Thread-safe.
  std::optional<std::string> lookup(llvm::StringRef key, llvm::StringRef kind);

  /// Stores PAYLOAD under KEY and KIND (best effort: a full disk or a
  /// read-only folder fails the store, never the compile). Thread-safe.
  void store(llvm::StringRef key, llvm::StringRef kind, llvm::StringRef payload);

  /// Makes DEST a file holding the payload stored under KEY and KIND by
  /// storeFile: a reflink of the entry, else a copy; checked, then renamed
  /// into place. False on a miss
  /// (a bad entry is removed and counted); ERROR is set when the file could
  /// be read but DEST not written. Thread-safe.
  enum class Placement { Reflink, Copy };
  bool lookupFile(llvm::StringRef key, llvm::StringRef kind, llvm::StringRef dest,
                  std::string &error, Placement *placement = nullptr);

  /// Stores the file at SOURCE under KEY and KIND as a file entry (best
  /// effort, as `store`). Thread-safe.
  void storeFile(llvm::StringRef key, llvm::StringRef kind, llvm::StringRef source);

  /// Removes the least recently used entries until the folder holds at most
  /// the bound, and temporary files older than an hour (a writer that died);
  /// only files the cache wrote (see the file comment), never others.
  void trim();

  Stats &stats() { return stats_; }

private:
  std::string path(llvm::StringRef key, llvm::StringRef kind) const;
  /// The model for createUniquePath of a temporary in the folder.
  std::string temporaryModel() const;
  /// The payload of the entry FILE; a bad one is removed and counted.
  std::optional<std::string> read(llvm::StringRef file);

  std::string dir_;
  uint64_t maxBytes_;
  std::string problem_;
  Stats stats_;
};

} // namespace tcc

#endif // TCC_COMPILER_COMPILECACHE_H
