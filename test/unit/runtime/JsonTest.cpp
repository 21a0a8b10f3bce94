//===- JsonTest.cpp - the strict JSON parser behind safetensors headers ----===//

#include "runtime/checkpoint/json.h"

#include <gtest/gtest.h>

using namespace tcc::rt;

namespace {

bool parses(const std::string &text, json::Value *out = nullptr, std::string *error = nullptr) {
  json::Value value;
  std::string message;
  bool ok = json::parse(text.data(), text.size(), value, &message);
  if (out)
    *out = value;
  if (error)
    *error = message;
  return ok;
}

// Tests that objects, arrays, literals and numbers parse, keys keep file
// order, and numbers keep their text.
TEST(JsonTest, ParsesNestedDocument) {
  json::Value v;
  ASSERT_TRUE(parses(R"( {"b": [1, -2.5e3, true, false, null], "a": {"s": "x"}} )", &v));
  ASSERT_EQ(v.kind, json::Value::Kind::Object);
  ASSERT_EQ(v.keys, (std::vector<std::string>{"b", "a"}));
  const json::Value *b = v.find("b");
  ASSERT_TRUE(b);
  ASSERT_EQ(b->items.size(), 5u);
  EXPECT_EQ(b->items[1].text, "-2.5e3");
  EXPECT_TRUE(b->items[2].boolean);
  EXPECT_EQ(b->items[4].kind, json::Value::Kind::Null);
  EXPECT_EQ(v.find("a")->find("s")->text, "x");
  EXPECT_EQ(v.find("missing"), nullptr);
}

// Tests that only plain non-negative integers convert to uint64_t.
TEST(JsonTest, Uint64Conversion) {
  json::Value v;
  uint64_t out = 0;
  ASSERT_TRUE(parses("[0, 18446744073709551615, 18446744073709551616, -1, 1.0, 1e3]", &v));
  EXPECT_TRUE(v.items[0].asUint64(&out));
  EXPECT_EQ(out, 0u);
  EXPECT_TRUE(v.items[1].asUint64(&out));
  EXPECT_EQ(out, UINT64_MAX);
  for (size_t i = 2; i < v.items.size(); ++i)
    EXPECT_FALSE(v.items[i].asUint64(&out)) << v.items[i].text;
}

// Tests escapes, including a surrogate pair, decode to UTF-8.
TEST(JsonTest, DecodesEscapes) {
  json::Value v;
  ASSERT_TRUE(parses(R"("a\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00")", &v));
  EXPECT_EQ(v.text, "a\"\\/\b\f\n\r\t\xc3\xa9\xf0\x9f\x98\x80");
}

// Tests that appendQuoted output parses back to the same string.
TEST(JsonTest, QuoteRoundTrip) {
  std::string original =
      std::string("quote\" back\\ nl\n ctl\x01 tab\t \xc3\xa9 nul") + '\0' + "end";
  std::string quoted;
  json::appendQuoted(quoted, original);
  json::Value v;
  ASSERT_TRUE(parses(quoted, &v));
  EXPECT_EQ(v.text, original);
}

// Tests that everything RFC 8259 forbids is rejected, with the position.
TEST(JsonTest, RejectsMalformedInput) {
  const char *bad[] = {
      "",                  // nothing
      "{",                 // unterminated
      "{\"a\":1,}",        // trailing comma
      "[1,]",              // trailing comma
      "{'a':1}",           // single quotes
      "{\"a\":1} x",       // trailing data
      "// c\n{}",          // comment
      "{\"a\":1,\"a\":2}", // duplicate key
      "01",                // leading zero
      "1.",                // no fraction digits
      "-",                 // no digits
      "1e",                // no exponent digits
      "NaN",               // not JSON
      "tru",               // bad literal
      "\"a\x01\"",         // control character
      "\"\\x\"",           // invalid escape
      "\"\\ud800\"",       // lone high surrogate
      "\"\\udc00\"",       // lone low surrogate
      "\"\\u12\"",         // short \u
      "\"\xff\"",          // invalid UTF-8
      "\"\xc0\xaf\"",      // overlong UTF-8
      "\"\xed\xa0\x80\"",  // encoded surrogate
      "{1:2}",             // non-string key
  };
  for (const char *text : bad) {
    std::string error;
    EXPECT_FALSE(parses(text, nullptr, &error)) << text;
    EXPECT_NE(error.find("at byte"), std::string::npos) << error;
  }
}

// Tests that deep nesting is refused instead of exhausting the stack.
TEST(JsonTest, RejectsDeepNesting) {
  std::string deep(100000, '[');
  std::string error;
  EXPECT_FALSE(parses(deep, nullptr, &error));
  EXPECT_NE(error.find("nesting"), std::string::npos) << error;
  std::string ok = std::string(60, '[') + std::string(60, ']');
  EXPECT_TRUE(parses(ok));
}

// Tests that the memory budget refuses a document of many tiny values (each
// takes sizeof(Value), ~50 times its two bytes of text) and admits the same
// document under a budget that fits it.
TEST(JsonTest, RefusesDocumentsPastTheMemoryBudget) {
  std::string zeros = "[0";
  for (int i = 0; i < 10000; ++i)
    zeros += ",0";
  zeros += "]";
  json::Value v;
  std::string error;
  EXPECT_FALSE(json::parse(zeros.data(), zeros.size(), v, &error, 100000));
  EXPECT_NE(error.find("needs more than 100000 bytes of memory"), std::string::npos) << error;
  EXPECT_TRUE(json::parse(zeros.data(), zeros.size(), v, &error, 10001 * (sizeof(json::Value) + 1)))
      << error;
  EXPECT_EQ(v.items.size(), 10001u);
  std::string strings = R"({"key": "a long string value", "other": "x"})";
  EXPECT_FALSE(json::parse(strings.data(), strings.size(), v, &error, 200));
}

// Tests that duplicate keys are found in an object of many keys, and fast:
// the check once compared every key with every earlier one.
TEST(JsonTest, DuplicateKeyAmongManyKeys) {
  std::string text = "{";
  for (int i = 0; i < 200000; ++i)
    text += "\"k" + std::to_string(i) + "\":0,";
  std::string unique = text.substr(0, text.size() - 1) + "}";
  json::Value v;
  ASSERT_TRUE(parses(unique, &v));
  EXPECT_EQ(v.keys.size(), 200000u);
  std::string error;
  EXPECT_FALSE(parses(text + "\"k123456\":1}", nullptr, &error));
  EXPECT_NE(error.find("duplicate key \"k123456\""), std::string::npos) << error;
}

// Tests the UTF-8 validator used on names before they are written.
TEST(JsonTest, Utf8Validation) {
  EXPECT_TRUE(json::isValidUtf8("plain \xc3\xa9 \xf0\x9f\x98\x80"));
  EXPECT_FALSE(json::isValidUtf8("\xc3"));
  EXPECT_FALSE(json::isValidUtf8("\xf4\x90\x80\x80")); // above U+10FFFF
}

} // namespace
