//===- json.h - a small strict JSON parser for file headers ---------------===//
//
// Parses RFC 8259 JSON exactly: no comments, no trailing commas, no duplicate
// keys, valid UTF-8 only, bounded nesting. It exists for the safetensors
// header, which must be validated byte for byte before anything is trusted;
// numbers keep their text so integers convert without passing through double.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_CHECKPOINT_JSON_H
#define TCC_RUNTIME_CHECKPOINT_JSON_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tcc::rt::json {

struct Value {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  /// A string's decoded UTF-8 contents, or a number's literal text.
  std::string text;
  /// An array's elements, or an object's member values (parallel to keys).
  std::vector<Value> items;
  /// An object's keys in file order; unique.
  std::vector<std::string> keys;

  /// The member named KEY of an object, or nullptr.
  const Value *find(const std::string &key) const;
  /// True (and *out set) when this is a number that is a non-negative
  /// integer written without fraction or exponent and fits in uint64_t.
  bool asUint64(uint64_t *out) const;
};

/// Parses DATA[0, SIZE) as one JSON value surrounded by optional whitespace.
/// On failure returns false and sets *error to "at byte N: what". MAX_MEMORY
/// bounds the parsed value's size, counted as sizeof(Value) per value plus
/// the bytes of every string, key and number: a document past it is refused,
/// since a parsed value takes up to ~50 times its text ("0," is one Value).
bool parse(const char *data, size_t size, Value &out, std::string *error,
           size_t maxMemory = SIZE_MAX);

/// Appends S as a JSON string literal (quotes and escapes included).
void appendQuoted(std::string &out, const std::string &s);

/// True when S is well-formed UTF-8 (no overlong forms, no surrogates).
bool isValidUtf8(const std::string &s);

} // namespace tcc::rt::json

#endif // TCC_RUNTIME_CHECKPOINT_JSON_H
