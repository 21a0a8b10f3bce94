//===- Lexer.cpp - tokens of the tcc model language -----------------------===//
//
// One pass over the bytes, no backtracking beyond one character; numbers are
// converted here so that the parser sees values, and overflow is an error at
// the number rather than a wrong value later.
//
//===----------------------------------------------------------------------===//

#include "frontend/dsl/Lexer.h"

#include "llvm/ADT/StringSwitch.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

using namespace tcc::dsl;

llvm::StringRef tcc::dsl::tokName(Tok kind) {
  switch (kind) {
  case Tok::Eof: return "end of file";
  case Tok::Newline: return "end of line";
  case Tok::Error: return "invalid token";
  case Tok::Ident: return "identifier";
  case Tok::Int: return "integer";
  case Tok::Float: return "number";
  case Tok::KwFn: return "'fn'";
  case Tok::KwModel: return "'model'";
  case Tok::KwLet: return "'let'";
  case Tok::KwParam: return "'param'";
  case Tok::KwState: return "'state'";
  case Tok::KwOutput: return "'output'";
  case Tok::KwReturn: return "'return'";
  case Tok::KwFor: return "'for'";
  case Tok::KwIn: return "'in'";
  case Tok::KwRepeat: return "'repeat'";
  case Tok::KwIf: return "'if'";
  case Tok::KwElse: return "'else'";
  case Tok::KwConst: return "'const'";
  case Tok::KwTrain: return "'train'";
  case Tok::KwAs: return "'as'";
  case Tok::KwAnd: return "'and'";
  case Tok::KwOr: return "'or'";
  case Tok::KwNot: return "'not'";
  case Tok::KwTrue: return "'true'";
  case Tok::KwFalse: return "'false'";
  case Tok::LParen: return "'('";
  case Tok::RParen: return "')'";
  case Tok::LBracket: return "'['";
  case Tok::RBracket: return "']'";
  case Tok::LBrace: return "'{'";
  case Tok::RBrace: return "'}'";
  case Tok::Comma: return "','";
  case Tok::Colon: return "':'";
  case Tok::Semi: return "';'";
  case Tok::Dot: return "'.'";
  case Tok::DotDot: return "'..'";
  case Tok::Assign: return "'='";
  case Tok::Arrow: return "'->'";
  case Tok::Eq: return "'=='";
  case Tok::Ne: return "'!='";
  case Tok::Lt: return "'<'";
  case Tok::Le: return "'<='";
  case Tok::Gt: return "'>'";
  case Tok::Ge: return "'>='";
  case Tok::Plus: return "'+'";
  case Tok::Minus: return "'-'";
  case Tok::Star: return "'*'";
  case Tok::Slash: return "'/'";
  case Tok::Percent: return "'%'";
  case Tok::StarStar: return "'**'";
  case Tok::At: return "'@'";
  }
  return "token";
}

Token Lexer::make(Tok kind, size_t begin) {
  Token t;
  t.kind = kind;
  t.text = buf.slice(begin, cur);
  t.pos = startPos;
  return t;
}

void Lexer::skipSpaceAndComments() {
  while (cur < buf.size()) {
    char c = buf[cur];
    if (c == ' ' || c == '\t' || c == '\r') {
      ++cur;
    } else if (c == '#') {
      while (cur < buf.size() && buf[cur] != '\n')
        ++cur;
    } else if (c == '\n' && depth > 0) {
      // Inside ( or [ a newline is a space: long calls may wrap.
      ++cur;
      ++line;
      lineStart = cur;
    } else {
      return;
    }
  }
}

static bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool isDigit(char c) { return c >= '0' && c <= '9'; }

Token Lexer::lexIdentifier(size_t begin) {
  while (cur < buf.size() && (isIdentStart(buf[cur]) || isDigit(buf[cur])))
    ++cur;
  Tok kind = llvm::StringSwitch<Tok>(buf.slice(begin, cur))
                 .Case("fn", Tok::KwFn)
                 .Case("model", Tok::KwModel)
                 .Case("let", Tok::KwLet)
                 .Case("param", Tok::KwParam)
                 .Case("state", Tok::KwState)
                 .Case("output", Tok::KwOutput)
                 .Case("return", Tok::KwReturn)
                 .Case("for", Tok::KwFor)
                 .Case("in", Tok::KwIn)
                 .Case("repeat", Tok::KwRepeat)
                 .Case("if", Tok::KwIf)
                 .Case("else", Tok::KwElse)
                 .Case("const", Tok::KwConst)
                 .Case("train", Tok::KwTrain)
                 .Case("as", Tok::KwAs)
                 .Case("and", Tok::KwAnd)
                 .Case("or", Tok::KwOr)
                 .Case("not", Tok::KwNot)
                 .Case("true", Tok::KwTrue)
                 .Case("false", Tok::KwFalse)
                 .Default(Tok::Ident);
  return make(kind, begin);
}

Token Lexer::lexNumber(size_t begin) {
  bool isFloat = false;
  while (cur < buf.size() && (isDigit(buf[cur]) || buf[cur] == '_'))
    ++cur;
  // `0..L` is a range, not the number `0.`: a fraction needs a digit.
  if (cur + 1 < buf.size() && buf[cur] == '.' && isDigit(buf[cur + 1])) {
    isFloat = true;
    ++cur;
    while (cur < buf.size() && isDigit(buf[cur]))
      ++cur;
  }
  if (cur < buf.size() && (buf[cur] == 'e' || buf[cur] == 'E')) {
    size_t save = cur++;
    if (cur < buf.size() && (buf[cur] == '+' || buf[cur] == '-'))
      ++cur;
    if (cur < buf.size() && isDigit(buf[cur])) {
      isFloat = true;
      while (cur < buf.size() && isDigit(buf[cur]))
        ++cur;
    } else {
      cur = save;
    }
  }
  Token t = make(isFloat ? Tok::Float : Tok::Int, begin);
  std::string digits;
  for (char c : t.text)
    if (c != '_')
      digits.push_back(c);
  errno = 0;
  if (isFloat) {
    t.floatValue = std::strtod(digits.c_str(), nullptr);
    if (errno == ERANGE && std::isinf(t.floatValue)) {
      t.kind = Tok::Error;
      t.error = "number '" + t.text.str() + "' is too large";
    }
  } else {
    char *end = nullptr;
    unsigned long long v = std::strtoull(digits.c_str(), &end, 10);
    if (errno == ERANGE || v > uint64_t(INT64_MAX)) {
      t.kind = Tok::Error;
      t.error = "integer '" + t.text.str() + "' does not fit in 64 bits";
    }
    t.intValue = int64_t(v);
    t.floatValue = double(v);
  }
  if (cur < buf.size() && isIdentStart(buf[cur])) {
    while (cur < buf.size() && (isIdentStart(buf[cur]) || isDigit(buf[cur])))
      ++cur;
    t.kind = Tok::Error;
    t.text = buf.slice(begin, cur);
    t.error = "invalid number '" + t.text.str() + "'";
  }
  return t;
}

Token Lexer::next() {
  skipSpaceAndComments();
  size_t begin = cur;
  startPos = {line, unsigned(cur - lineStart + 1)};
  if (cur >= buf.size())
    return make(Tok::Eof, begin);
  char c = buf[cur++];
  auto two = [&](char second, Tok yes, Tok no) {
    if (cur < buf.size() && buf[cur] == second) {
      ++cur;
      return make(yes, begin);
    }
    return make(no, begin);
  };
  if (c == '\n') {
    Token t = make(Tok::Newline, begin);
    ++line;
    lineStart = cur;
    return t;
  }
  if (isIdentStart(c))
    return lexIdentifier(begin);
  if (isDigit(c))
    return lexNumber(begin);
  switch (c) {
  case '(': ++depth; return make(Tok::LParen, begin);
  case '[': ++depth; return make(Tok::LBracket, begin);
  case ')': depth = depth > 0 ? depth - 1 : 0; return make(Tok::RParen, begin);
  case ']': depth = depth > 0 ? depth - 1 : 0; return make(Tok::RBracket, begin);
  // A brace opens a block of statements: newlines count again inside it,
  // even within an unclosed parenthesis (the parser reports that one).
  case '{': depth = 0; return make(Tok::LBrace, begin);
  case '}': depth = 0; return make(Tok::RBrace, begin);
  case ',': return make(Tok::Comma, begin);
  case ':': return make(Tok::Colon, begin);
  case ';': return make(Tok::Semi, begin);
  case '.': return two('.', Tok::DotDot, Tok::Dot);
  case '=': return two('=', Tok::Eq, Tok::Assign);
  case '<': return two('=', Tok::Le, Tok::Lt);
  case '>': return two('=', Tok::Ge, Tok::Gt);
  case '+': return make(Tok::Plus, begin);
  case '-': return two('>', Tok::Arrow, Tok::Minus);
  case '*': return two('*', Tok::StarStar, Tok::Star);
  case '/': return make(Tok::Slash, begin);
  case '%': return make(Tok::Percent, begin);
  case '@': return make(Tok::At, begin);
  case '!':
    if (cur < buf.size() && buf[cur] == '=') {
      ++cur;
      return make(Tok::Ne, begin);
    }
    break;
  default:
    break;
  }
  Token t = make(Tok::Error, begin);
  unsigned char u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f)
    t.error = std::string("unexpected character '") + c + "'";
  else {
    char hex[8];
    snprintf(hex, sizeof hex, "0x%02x", u);
    t.error = std::string("unexpected byte ") + hex;
  }
  return t;
}
