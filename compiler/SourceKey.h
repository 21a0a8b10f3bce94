//===- SourceKey.h - the artifact's cache key, before the import ----------===//
//
// A warm compile should cost about what reading the model costs, not what
// importing it does (the GPT-2-small shape: 1.1 s to import, its weights
// collected, hashed and written again). The source key names an artifact
// by what the import would read: the model file's bytes, the identity of
// every ONNX external-data file it names (size, modification and change
// times, inode, device and real path; not their contents), and the options
// (everything else that enters the artifact's fingerprint). The cache maps
// it to the fingerprint, whose entry holds the artifact (docs/compile.md).
//
//===----------------------------------------------------------------------===//

#ifndef TCC_COMPILER_SOURCEKEY_H
#define TCC_COMPILER_SOURCEKEY_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tcc {

/// The external-data locations a binary ONNX ModelProto names (as written:
/// relative to the model's folder), in every tensor the importer can reach
/// (initializers, sparse initializers, attributes, subgraphs, functions),
/// sorted and unique; nullopt when BYTES are not a well-formed ModelProto.
/// Reads the wire format and skips the tensors' data without copying it.
std::optional<std::vector<std::string>> onnxExternalDataLocations(llvm::StringRef bytes);

/// What identifies the file at PATH without reading it: its size,
/// modification and change times (ns), inode, device and real path
/// ("missing" when there is none). SETTLED is cleared when the file changed
/// in the last two seconds: a second write that soon could leave all of
/// these as they are.
std::string fileStamp(llvm::StringRef path, bool &settled);

class SourceKey {
public:
  /// The key of compiling the model at PATH (binary ONNX, .tcc or .mlir)
  /// with OPTIONS (a canonical text of everything else the fingerprint
  /// depends on); nullopt when the model cannot be keyed before its import
  /// (unreadable, textual ONNX, not a ModelProto).
  static std::optional<SourceKey> compute(llvm::StringRef path, llvm::StringRef options);

  const std::string &key() const { return key_; }

  /// Whether the key may be stored now, after the compile: every file had
  /// settled when the key was taken and none has changed since (else the
  /// key could name an artifact built from other bytes).
  bool storable() const;

private:
  std::string key_;
  /// Each file the key covers (the model first) and its stamp.
  std::vector<std::pair<std::string, std::string>> stamps_;
  bool settled_ = true;
};

} // namespace tcc

#endif // TCC_COMPILER_SOURCEKEY_H
