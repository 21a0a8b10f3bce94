//===- JsonFuzzer.cpp - libFuzzer target for the strict JSON parser -------===//
//
// Feeds arbitrary bytes to json::parse, the parser of every safetensors
// header (parameters, checkpoints and their metadata). Besides never
// crashing, hanging or recursing without bound, an accepted document must
// print back (keys in order, numbers as written, strings through
// appendQuoted) to a text that parses to the same value, and any byte string
// quoted with appendQuoted must parse back to itself exactly when it is
// valid UTF-8.
//
//===----------------------------------------------------------------------===//

#include "fuzz/FuzzUtil.h"
#include "runtime/checkpoint/json.h"

#include <set>

using namespace tcc::rt;
using tcc::fuzz::check;

namespace {

void print(const json::Value &v, std::string &out) {
  switch (v.kind) {
  case json::Value::Kind::Null:
    out += "null";
    return;
  case json::Value::Kind::Bool:
    out += v.boolean ? "true" : "false";
    return;
  case json::Value::Kind::Number:
    out += v.text;
    return;
  case json::Value::Kind::String:
    json::appendQuoted(out, v.text);
    return;
  case json::Value::Kind::Array:
    out += '[';
    for (size_t i = 0; i < v.items.size(); ++i) {
      out += i ? "," : "";
      print(v.items[i], out);
    }
    out += ']';
    return;
  case json::Value::Kind::Object:
    out += '{';
    for (size_t i = 0; i < v.items.size(); ++i) {
      out += i ? "," : "";
      json::appendQuoted(out, v.keys[i]);
      out += ':';
      print(v.items[i], out);
    }
    out += '}';
    return;
  }
}

bool equal(const json::Value &a, const json::Value &b) {
  if (a.kind != b.kind || a.boolean != b.boolean || a.text != b.text || a.keys != b.keys ||
      a.items.size() != b.items.size())
    return false;
  for (size_t i = 0; i < a.items.size(); ++i)
    if (!equal(a.items[i], b.items[i]))
      return false;
  return true;
}

/// The parser's promises about an accepted value.
void checkValue(const json::Value &v) {
  if (v.kind == json::Value::Kind::String)
    check(json::isValidUtf8(v.text), "a parsed string is not valid UTF-8");
  if (v.kind == json::Value::Kind::Number) {
    uint64_t n;
    if (v.asUint64(&n))
      check(std::to_string(n) == v.text, "asUint64 accepted a number not written canonically");
  }
  if (v.kind == json::Value::Kind::Object) {
    check(v.keys.size() == v.items.size(), "object keys and values differ in count");
    std::set<std::string> unique(v.keys.begin(), v.keys.end());
    check(unique.size() == v.keys.size(), "an object has a duplicate key");
    for (const std::string &key : v.keys) {
      check(json::isValidUtf8(key), "a parsed key is not valid UTF-8");
      check(v.find(key) != nullptr, "find misses a key");
    }
  } else {
    check(v.keys.empty(), "a non-object has keys");
  }
  for (const json::Value &item : v.items)
    checkValue(item);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = reinterpret_cast<const char *>(data);
  json::Value value;
  std::string error;
  if (json::parse(text, size, value, &error)) {
    checkValue(value);
    std::string printed;
    print(value, printed);
    json::Value again;
    check(json::parse(printed.data(), printed.size(), again, &error),
          "the printed document does not parse");
    check(equal(value, again), "print + parse changed the value");
  } else {
    check(error.rfind("at byte ", 0) == 0, "a rejection does not say where");
    check(std::strtoull(error.c_str() + 8, nullptr, 10) <= size,
          "a rejection points past the input");
  }

  // Quoting: any bytes, valid UTF-8 or not.
  std::string bytes(text, size), quoted;
  json::appendQuoted(quoted, bytes);
  json::Value string;
  bool ok = json::parse(quoted.data(), quoted.size(), string, &error);
  check(ok == json::isValidUtf8(bytes), "a quoted string parses iff it is valid UTF-8 broke");
  if (ok)
    check(string.kind == json::Value::Kind::String && string.text == bytes,
          "appendQuoted + parse changed the string");
  return 0;
}
