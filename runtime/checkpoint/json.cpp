//===- json.cpp - a small strict JSON parser for file headers -------------===//
//
// A recursive-descent parser over a byte range. Every rejection says where
// and why; nesting is capped so a hostile header cannot exhaust the stack.
//
//===----------------------------------------------------------------------===//

#include "runtime/checkpoint/json.h"

#include <unordered_set>

namespace tcc::rt::json {

const Value *Value::find(const std::string &key) const {
  if (kind != Kind::Object)
    return nullptr;
  for (size_t i = 0; i < keys.size(); ++i)
    if (keys[i] == key)
      return &items[i];
  return nullptr;
}

bool Value::asUint64(uint64_t *out) const {
  if (kind != Kind::Number || text.empty())
    return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return false; // a sign, fraction or exponent
    if (__builtin_mul_overflow(v, 10u, &v) || __builtin_add_overflow(v, uint64_t(c - '0'), &v))
      return false;
  }
  *out = v;
  return true;
}

namespace {

/// Decodes one UTF-8 sequence at S[*pos]; advances *pos. False if malformed.
bool decodeUtf8(const unsigned char *s, size_t size, size_t *pos) {
  unsigned char c = s[*pos];
  if (c < 0x80) {
    ++*pos;
    return true;
  }
  size_t length;
  uint32_t cp;
  if ((c & 0xE0) == 0xC0) {
    length = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    length = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    length = 4;
    cp = c & 0x07;
  } else {
    return false;
  }
  if (size - *pos < length)
    return false;
  for (size_t i = 1; i < length; ++i) {
    unsigned char cc = s[*pos + i];
    if ((cc & 0xC0) != 0x80)
      return false;
    cp = (cp << 6) | (cc & 0x3F);
  }
  static const uint32_t minimum[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < minimum[length] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return false;
  *pos += length;
  return true;
}

void appendUtf8(std::string &out, uint32_t cp) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xC0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += char(0xE0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  } else {
    out += char(0xF0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3F));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  }
}

class Parser {
public:
  Parser(const char *data, size_t size, size_t maxMemory)
      : s_(reinterpret_cast<const unsigned char *>(data)), size_(size), budget_(maxMemory) {}

  bool parseDocument(Value &out, std::string *error) {
    skipSpace();
    bool ok = parseValue(out, 0);
    if (ok) {
      skipSpace();
      if (pos_ != size_)
        ok = fail("unexpected data after the value");
    }
    if (!ok) {
      if (error)
        *error = "at byte " + std::to_string(errorPos_) + ": " + message_;
      return false;
    }
    return true;
  }

private:
  static constexpr int kMaxDepth = 64;

  bool fail(const std::string &message) {
    if (message_.empty()) {
      message_ = message;
      errorPos_ = pos_;
    }
    return false;
  }

  /// Counts BYTES against the memory budget; false (and the error) past it.
  bool charge(size_t bytes) {
    if (bytes > budget_ - used_)
      return fail("the document needs more than " + std::to_string(budget_) +
                  " bytes of memory once parsed");
    used_ += bytes;
    return true;
  }

  void skipSpace() {
    while (pos_ < size_ &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }

  bool literal(const char *word) {
    size_t n = 0;
    while (word[n])
      ++n;
    if (size_ - pos_ < n || std::string(reinterpret_cast<const char *>(s_ + pos_), n) != word)
      return fail("invalid literal");
    pos_ += n;
    return true;
  }

  bool parseValue(Value &out, int depth) {
    if (depth > kMaxDepth)
      return fail("nesting deeper than " + std::to_string(kMaxDepth));
    if (pos_ >= size_)
      return fail("unexpected end of input");
    switch (s_[pos_]) {
    case '{':
      return parseObject(out, depth);
    case '[':
      return parseArray(out, depth);
    case '"':
      out.kind = Value::Kind::String;
      return parseString(out.text) && charge(out.text.size());
    case 't':
      out.kind = Value::Kind::Bool;
      out.boolean = true;
      return literal("true");
    case 'f':
      out.kind = Value::Kind::Bool;
      out.boolean = false;
      return literal("false");
    case 'n':
      out.kind = Value::Kind::Null;
      return literal("null");
    default:
      if (s_[pos_] == '-' || (s_[pos_] >= '0' && s_[pos_] <= '9'))
        return parseNumber(out) && charge(out.text.size());
      return fail("unexpected character");
    }
  }

  bool digits() {
    size_t start = pos_;
    while (pos_ < size_ && s_[pos_] >= '0' && s_[pos_] <= '9')
      ++pos_;
    return pos_ > start;
  }

  bool parseNumber(Value &out) {
    size_t start = pos_;
    if (s_[pos_] == '-')
      ++pos_;
    if (pos_ < size_ && s_[pos_] == '0') {
      ++pos_; // no leading zeros
    } else if (!digits()) {
      return fail("invalid number");
    }
    if (pos_ < size_ && s_[pos_] == '.') {
      ++pos_;
      if (!digits())
        return fail("invalid number: no digits after '.'");
    }
    if (pos_ < size_ && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < size_ && (s_[pos_] == '+' || s_[pos_] == '-'))
        ++pos_;
      if (!digits())
        return fail("invalid number: no digits in the exponent");
    }
    out.kind = Value::Kind::Number;
    out.text.assign(reinterpret_cast<const char *>(s_ + start), pos_ - start);
    return true;
  }

  bool hex4(uint32_t *out) {
    if (size_ - pos_ < 4)
      return fail("truncated \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      unsigned char c = s_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= c - '0';
      else if (c >= 'a' && c <= 'f')
        v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        v |= c - 'A' + 10;
      else
        return fail("invalid hex digit in \\u escape");
    }
    *out = v;
    return true;
  }

  bool parseString(std::string &out) {
    ++pos_; // opening quote
    out.clear();
    while (true) {
      if (pos_ >= size_)
        return fail("unterminated string");
      unsigned char c = s_[pos_];
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20)
        return fail("control character in string");
      if (c != '\\') {
        size_t start = pos_;
        if (!decodeUtf8(s_, size_, &pos_))
          return fail("invalid UTF-8 in string");
        out.append(reinterpret_cast<const char *>(s_ + start), pos_ - start);
        continue;
      }
      if (++pos_ >= size_)
        return fail("unterminated escape");
      char e = char(s_[pos_++]);
      switch (e) {
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      case '/':
        out += '/';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        uint32_t cp;
        if (!hex4(&cp))
          return false;
        if (cp >= 0xDC00 && cp <= 0xDFFF)
          return fail("unpaired low surrogate in \\u escape");
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          uint32_t low;
          if (size_ - pos_ < 2 || s_[pos_] != '\\' || s_[pos_ + 1] != 'u')
            return fail("unpaired high surrogate in \\u escape");
          pos_ += 2;
          if (!hex4(&low))
            return false;
          if (low < 0xDC00 || low > 0xDFFF)
            return fail("unpaired high surrogate in \\u escape");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        appendUtf8(out, cp);
        break;
      }
      default:
        --pos_;
        return fail("invalid escape");
      }
    }
  }

  bool parseArray(Value &out, int depth) {
    ++pos_;
    out.kind = Value::Kind::Array;
    skipSpace();
    if (pos_ < size_ && s_[pos_] == ']') {
      ++pos_;
      return true;
    }
    while (true) {
      skipSpace();
      if (!charge(sizeof(Value)))
        return false;
      out.items.emplace_back();
      if (!parseValue(out.items.back(), depth + 1))
        return false;
      skipSpace();
      if (pos_ >= size_)
        return fail("unterminated array");
      if (s_[pos_] == ']') {
        ++pos_;
        return true;
      }
      if (s_[pos_] != ',')
        return fail("expected ',' or ']' in array");
      ++pos_;
    }
  }

  bool parseObject(Value &out, int depth) {
    ++pos_;
    out.kind = Value::Kind::Object;
    skipSpace();
    if (pos_ < size_ && s_[pos_] == '}') {
      ++pos_;
      return true;
    }
    std::unordered_set<std::string> seen;
    while (true) {
      skipSpace();
      if (pos_ >= size_ || s_[pos_] != '"')
        return fail("expected a string key in object");
      size_t keyPos = pos_;
      std::string key;
      if (!parseString(key))
        return false;
      // A hash set, not Value::find: a linear search per key made an object
      // of n keys take n^2 / 2 comparisons (39 s for 100,000 keys).
      if (!seen.insert(key).second) {
        pos_ = keyPos;
        return fail("duplicate key \"" + key + "\"");
      }
      skipSpace();
      if (pos_ >= size_ || s_[pos_] != ':')
        return fail("expected ':' after object key");
      ++pos_;
      skipSpace();
      if (!charge(sizeof(Value) + 2 * (sizeof(std::string) + key.size())))
        return false;
      out.keys.push_back(std::move(key));
      out.items.emplace_back();
      if (!parseValue(out.items.back(), depth + 1))
        return false;
      skipSpace();
      if (pos_ >= size_)
        return fail("unterminated object");
      if (s_[pos_] == '}') {
        ++pos_;
        return true;
      }
      if (s_[pos_] != ',')
        return fail("expected ',' or '}' in object");
      ++pos_;
    }
  }

  const unsigned char *s_;
  size_t size_;
  size_t pos_ = 0;
  size_t errorPos_ = 0;
  std::string message_;
  size_t budget_;
  size_t used_ = 0;
};

} // namespace

bool parse(const char *data, size_t size, Value &out, std::string *error, size_t maxMemory) {
  out = Value();
  Parser parser(data, size, maxMemory);
  return parser.parseDocument(out, error);
}

bool isValidUtf8(const std::string &s) {
  const auto *p = reinterpret_cast<const unsigned char *>(s.data());
  size_t pos = 0;
  while (pos < s.size())
    if (!decodeUtf8(p, s.size(), &pos))
      return false;
  return true;
}

void appendQuoted(std::string &out, const std::string &s) {
  static const char hex[] = "0123456789abcdef";
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
    default:
      if (c < 0x20) {
        out += "\\u00";
        out += hex[c >> 4];
        out += hex[c & 15];
      } else {
        out += char(c);
      }
    }
  }
  out += '"';
}

} // namespace tcc::rt::json
