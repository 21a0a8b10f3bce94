//===- Lexer.h - tokens of the tcc model language -------------------------===//
//
// A hand-written lexer over one source buffer. Newlines end statements, as in
// Python, except inside parentheses and brackets, where an expression may
// span lines; `#` starts a comment. Errors (a stray character, a malformed
// number) become Error tokens that the parser reports and skips, so a bad
// character never hides the rest of the file's errors.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_FRONTEND_DSL_LEXER_H
#define TCC_FRONTEND_DSL_LEXER_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace tcc::dsl {

enum class Tok {
  Eof, Newline, Error,
  Ident, Int, Float,
  // Keywords.
  KwFn, KwModel, KwLet, KwParam, KwState, KwOutput, KwReturn, KwFor, KwIn,
  KwRepeat, KwIf, KwElse, KwConst, KwTrain, KwAs, KwAnd, KwOr, KwNot,
  KwTrue, KwFalse,
  // Punctuation.
  LParen, RParen, LBracket, RBracket, LBrace, RBrace, Comma, Colon, Semi,
  Dot, DotDot, Assign, Arrow,
  Eq, Ne, Lt, Le, Gt, Ge,
  Plus, Minus, Star, Slash, Percent, StarStar, At,
};

/// A spelling for messages: "identifier", "'('", "end of line".
llvm::StringRef tokName(Tok kind);

/// A position in the source: 1-based line and column.
struct Pos {
  unsigned line = 0, col = 0;
};

struct Token {
  Tok kind = Tok::Eof;
  llvm::StringRef text; ///< the spelling in the buffer
  Pos pos;
  int64_t intValue = 0;
  double floatValue = 0;
  std::string error; ///< for Tok::Error: what is wrong
};

class Lexer {
public:
  explicit Lexer(llvm::StringRef buffer) : buf(buffer) {}
  /// The next token; after the end, Eof forever.
  Token next();

private:
  Token make(Tok kind, size_t begin);
  Token lexNumber(size_t begin);
  Token lexIdentifier(size_t begin);
  void skipSpaceAndComments();

  llvm::StringRef buf;
  size_t cur = 0;
  unsigned line = 1;
  size_t lineStart = 0;
  /// Open ( and [ : newlines inside them are spaces.
  int depth = 0;
  Pos startPos;
};

} // namespace tcc::dsl

#endif // TCC_FRONTEND_DSL_LEXER_H
