//===- Parser.cpp - recursive descent over the tcc model language ---------===//
//
// One function per grammar rule (docs/dsl.md). Each returns null after
// reporting an error; statement and declaration loops then resynchronize at
// a newline or a closing brace, which keeps one mistake from producing a
// cascade of follow-on errors.
//
//===----------------------------------------------------------------------===//

#include "frontend/dsl/Parser.h"

#include "llvm/ADT/StringExtras.h"

using namespace tcc::dsl;

std::string tcc::dsl::closestName(llvm::StringRef name,
                                  llvm::ArrayRef<std::string> candidates) {
  std::string best;
  unsigned bestDistance = ~0u;
  unsigned limit = std::max<unsigned>(1, unsigned(name.size()) / 3);
  for (const std::string &c : candidates) {
    if (c == name)
      continue;
    unsigned d = name.edit_distance(c, /*AllowReplacements=*/true, limit + 1);
    if (d <= limit && d < bestDistance) {
      bestDistance = d;
      best = c;
    }
  }
  return best;
}

namespace {

/// Deeper nesting than this is an error, not a stack overflow.
constexpr int kMaxDepth = 200;

class Parser {
public:
  Parser(llvm::StringRef buffer, Diagnostics &diags) : lexer(buffer), diags(diags) {
    advance();
  }
  Program run();

private:
  //===--- Tokens -------------------------------------------------------===//
  void advance() {
    tok = lexer.next();
    // Lexical errors are reported where they occur; the parser then sees
    // them as an unexpected token and recovers as from any syntax error.
    if (tok.kind == Tok::Error)
      diags.error(tok.pos) << tok.error;
  }
  bool at(Tok k) const { return tok.kind == k; }
  bool accept(Tok k) {
    if (!at(k))
      return false;
    advance();
    return true;
  }
  bool expect(Tok k, llvm::StringRef context) {
    if (accept(k))
      return true;
    errorHere() << "expected " << tokName(k) << " " << context << ", found " << describe();
    return false;
  }
  std::string describe() const {
    if (tok.kind == Tok::Ident || tok.kind == Tok::Int || tok.kind == Tok::Float)
      return (tokName(tok.kind) + " '" + tok.text + "'").str();
    return tokName(tok.kind).str();
  }
  mlir::InFlightDiagnostic errorHere() {
    // A lexical error was already reported at this token: say nothing more.
    if (tok.kind == Tok::Error) {
      mlir::InFlightDiagnostic d = mlir::emitError(diags.loc(tok.pos));
      d.abandon();
      return d;
    }
    return diags.error(tok.pos);
  }
  void skipNewlines() {
    while (at(Tok::Newline) || at(Tok::Semi))
      advance();
  }
  /// After an error inside a statement: to its end, over nested blocks.
  void skipStatement();
  /// After an error at the top level: to the next declaration keyword.
  void skipDeclaration();
  bool endStatement();

  //===--- Declarations -------------------------------------------------===//
  void parseConst(Program &program);
  void parseFn(Program &program);
  void parseModel(Program &program);
  void parseTrain(Program &program);
  bool parseInput(InputDecl &input);
  bool parseTypeName(TypeRef &type);
  bool parseBlock(Block &block);

  //===--- Statements ---------------------------------------------------===//
  StmtPtr parseStatement();
  StmtPtr parseLet();
  StmtPtr parseParam();
  StmtPtr parseFor();
  StmtPtr parseIf();

  //===--- Expressions --------------------------------------------------===//
  ExprPtr parseExpr();
  ExprPtr parseBinary(int level);
  ExprPtr parseUnary();
  ExprPtr parsePostfix();
  ExprPtr parsePrimary();
  bool parseCallArgs(CallExpr &call);
  bool parseSubscript(Subscript &sub);
  std::unique_ptr<ScopePath> parseScopePath();

  /// The error of an expression deeper than kMaxDepth, at the current token.
  void errorTooDeep() {
    errorHere() << "expression nested too deeply (more than " << kMaxDepth
                << " levels; enclosing blocks and each operator of a chain such as a + b + c or "
                   "x.T.T count as levels)";
  }

  Lexer lexer;
  Diagnostics &diags;
  Token tok;
  int depth = 0;
  /// The closing brace of the last block parsed.
  Pos blockEnd;
};

/// Counts nesting in expressions and blocks; refuses beyond kMaxDepth.
/// The resolver, the elaborator and the tree's destructor recurse as deeply
/// as the tree, so the bound is on the tree, not only on the parser's own
/// recursion: a chain such as `a + b + c` or `x.T.T` is parsed by a loop but
/// builds `(a + b) + c`, so each of its links counts as a level (deeper()).
struct DepthGuard {
  explicit DepthGuard(int &depth, int levels = 1) : depth(depth), levels(levels) {
    depth += levels;
  }
  ~DepthGuard() { depth -= levels; }
  /// One more level until this guard ends: a link of a chain.
  void deeper() {
    ++depth;
    ++levels;
  }
  bool tooDeep() const { return depth > kMaxDepth; }
  int &depth;
  int levels;
};

void Parser::skipStatement() {
  int braces = 0;
  while (!at(Tok::Eof)) {
    if (at(Tok::LBrace))
      ++braces;
    if (at(Tok::RBrace)) {
      if (braces == 0)
        return; // the enclosing block's end
      --braces;
    }
    if (braces == 0 && (at(Tok::Newline) || at(Tok::Semi))) {
      advance();
      return;
    }
    advance();
  }
}

void Parser::skipDeclaration() {
  int braces = 0;
  while (!at(Tok::Eof)) {
    if (at(Tok::LBrace))
      ++braces;
    else if (at(Tok::RBrace) && braces > 0 && --braces == 0) {
      advance();
      return;
    }
    if (braces == 0 && (at(Tok::KwFn) || at(Tok::KwModel) || at(Tok::KwConst) ||
                        at(Tok::KwTrain)))
      return;
    advance();
  }
}

bool Parser::endStatement() {
  if (at(Tok::Newline) || at(Tok::Semi)) {
    advance();
    return true;
  }
  if (at(Tok::RBrace) || at(Tok::Eof))
    return true;
  errorHere() << "expected end of line after the statement, found " << describe();
  skipStatement();
  return false;
}

Program Parser::run() {
  Program program;
  while (true) {
    skipNewlines();
    if (at(Tok::Eof) || diags.stopped())
      break;
    switch (tok.kind) {
    case Tok::KwConst: parseConst(program); break;
    case Tok::KwFn: parseFn(program); break;
    case Tok::KwModel: parseModel(program); break;
    case Tok::KwTrain: parseTrain(program); break;
    default:
      errorHere() << "expected a declaration ('const', 'fn', 'model' or 'train'), found "
                  << describe();
      advance();
      skipDeclaration();
    }
  }
  return program;
}

void Parser::parseConst(Program &program) {
  advance();
  ConstDecl decl;
  decl.name = {tok.text.str(), tok.pos};
  if (!expect(Tok::Ident, "after 'const'") || !expect(Tok::Assign, "after the constant's name"))
    return skipDeclaration();
  decl.value = parseExpr();
  if (!decl.value)
    return skipDeclaration();
  endStatement();
  program.consts.push_back(std::move(decl));
}

void Parser::parseFn(Program &program) {
  advance();
  auto fn = std::make_unique<FnDecl>();
  fn->name = {tok.text.str(), tok.pos};
  if (!expect(Tok::Ident, "after 'fn'") || !expect(Tok::LParen, "after the function's name"))
    return skipDeclaration();
  while (!at(Tok::RParen)) {
    FnParam param;
    param.name = {tok.text.str(), tok.pos};
    if (!expect(Tok::Ident, "(a parameter name)"))
      return skipDeclaration();
    if (accept(Tok::Assign) && !(param.defaultValue = parseExpr()))
      return skipDeclaration();
    fn->params.push_back(std::move(param));
    if (!accept(Tok::Comma))
      break;
  }
  if (!expect(Tok::RParen, "after the parameters") || !parseBlock(fn->body))
    return skipDeclaration();
  fn->end = blockEnd;
  program.fns.push_back(std::move(fn));
}

bool Parser::parseTypeName(TypeRef &type) {
  type.pos = tok.pos;
  if (at(Tok::Ident) && !at(Tok::LBracket)) {
    type.name = tok.text.str();
    advance();
  }
  return true;
}

bool Parser::parseInput(InputDecl &input) {
  input.name = {tok.text.str(), tok.pos};
  if (!expect(Tok::Ident, "(an input name)") || !expect(Tok::Colon, "after the input's name"))
    return false;
  input.dtype.pos = tok.pos;
  input.dtype.name = tok.text.str();
  if (!expect(Tok::Ident, "(an element type such as f32 or i64)") ||
      !expect(Tok::LBracket, "before the input's shape"))
    return false;
  while (!at(Tok::RBracket)) {
    InputDecl::Dim dim;
    dim.pos = tok.pos;
    if (at(Tok::Int)) {
      dim.value = tok.intValue;
    } else if (at(Tok::Ident)) {
      dim.symbol = tok.text.str();
    } else {
      errorHere() << "expected a dimension (an integer or a symbolic name), found "
                  << describe();
      return false;
    }
    advance();
    input.dims.push_back(dim);
    if (!accept(Tok::Comma))
      break;
  }
  return expect(Tok::RBracket, "after the input's shape");
}

void Parser::parseModel(Program &program) {
  advance();
  auto model = std::make_unique<ModelDecl>();
  model->name = {tok.text.str(), tok.pos};
  if (!expect(Tok::Ident, "after 'model'") || !expect(Tok::LParen, "after the model's name"))
    return skipDeclaration();
  while (!at(Tok::RParen)) {
    InputDecl input;
    if (!parseInput(input))
      return skipDeclaration();
    model->inputs.push_back(std::move(input));
    if (!accept(Tok::Comma))
      break;
  }
  if (!expect(Tok::RParen, "after the inputs") || !parseBlock(model->body))
    return skipDeclaration();
  model->end = blockEnd;
  program.models.push_back(std::move(model));
}

void Parser::parseTrain(Program &program) {
  TrainDecl decl;
  decl.pos = tok.pos;
  advance();
  if (!expect(Tok::LBrace, "after 'train'"))
    return skipDeclaration();
  while (true) {
    skipNewlines();
    if (at(Tok::RBrace) || at(Tok::Eof))
      break;
    TrainEntry entry;
    entry.key = {tok.text.str(), tok.pos};
    if (!expect(Tok::Ident, "(a training setting such as loss or optimizer)") ||
        !expect(Tok::Assign, "after the setting's name")) {
      skipStatement();
      continue;
    }
    if (!(entry.value = parseExpr())) {
      skipStatement();
      continue;
    }
    if (endStatement())
      decl.entries.push_back(std::move(entry));
  }
  expect(Tok::RBrace, "at the end of the train block");
  program.trains.push_back(std::move(decl));
}

bool Parser::parseBlock(Block &block) {
  DepthGuard guard(depth);
  if (guard.tooDeep()) {
    errorHere() << "blocks nested too deeply (more than " << kMaxDepth << ")";
    return false;
  }
  if (!expect(Tok::LBrace, "to open a block"))
    return false;
  while (true) {
    skipNewlines();
    if (at(Tok::RBrace) || at(Tok::Eof) || diags.stopped())
      break;
    if (StmtPtr stmt = parseStatement()) {
      block.push_back(std::move(stmt));
      endStatement();
    } else {
      skipStatement();
    }
  }
  blockEnd = tok.pos;
  return expect(Tok::RBrace, "to close the block");
}

StmtPtr Parser::parseStatement() {
  Pos pos = tok.pos;
  switch (tok.kind) {
  case Tok::KwLet: return parseLet();
  case Tok::KwParam:
  case Tok::KwState: return parseParam();
  case Tok::KwFor:
  case Tok::KwRepeat: return parseFor();
  case Tok::KwIf: return parseIf();
  case Tok::KwOutput: {
    advance();
    auto out = std::make_unique<OutputStmt>(pos);
    out->name = {tok.text.str(), tok.pos};
    if (!expect(Tok::Ident, "(the output's name)") || !expect(Tok::Assign, "after the output's name"))
      return nullptr;
    if (!(out->value = parseExpr()))
      return nullptr;
    return out;
  }
  case Tok::KwReturn: {
    advance();
    auto ret = std::make_unique<ReturnStmt>(pos);
    do {
      ExprPtr value = parseExpr();
      if (!value)
        return nullptr;
      ret->values.push_back(std::move(value));
    } while (accept(Tok::Comma));
    return ret;
  }
  case Tok::Ident: {
    auto assign = std::make_unique<AssignStmt>(pos);
    assign->target = {tok.text.str(), tok.pos};
    advance();
    if (!at(Tok::Assign)) {
      errorHere() << "expected '=' after '" << assign->target.name
                  << "' (a statement is let, param, state, output, return, for, repeat, if, "
                     "or an assignment), found "
                  << describe();
      return nullptr;
    }
    advance();
    if (!(assign->value = parseExpr()))
      return nullptr;
    return assign;
  }
  default:
    errorHere() << "expected a statement, found " << describe();
    return nullptr;
  }
}

StmtPtr Parser::parseLet() {
  auto let = std::make_unique<LetStmt>(tok.pos);
  advance();
  do {
    let->names.push_back({tok.text.str(), tok.pos});
    if (!expect(Tok::Ident, "(a variable name)"))
      return nullptr;
  } while (accept(Tok::Comma));
  if (!expect(Tok::Assign, "after the variable name"))
    return nullptr;
  if (!(let->value = parseExpr()))
    return nullptr;
  return let;
}

StmtPtr Parser::parseParam() {
  auto param = std::make_unique<ParamStmt>(tok.pos);
  param->isState = at(Tok::KwState);
  advance();
  param->name = {tok.text.str(), tok.pos};
  if (!expect(Tok::Ident, "(the parameter's name)") ||
      !expect(Tok::Colon, "after the parameter's name"))
    return nullptr;
  parseTypeName(param->dtype);
  if (!expect(Tok::LBracket, "before the parameter's shape"))
    return nullptr;
  while (!at(Tok::RBracket)) {
    ExprPtr dim = parseExpr();
    if (!dim)
      return nullptr;
    param->shape.push_back(std::move(dim));
    if (!accept(Tok::Comma))
      break;
  }
  if (!expect(Tok::RBracket, "after the parameter's shape") ||
      !expect(Tok::Assign, "before the initializer (zeros, ones, normal(0, 0.02), ...)"))
    return nullptr;
  Pos initPos = tok.pos;
  std::string name = tok.text.str();
  if (!expect(Tok::Ident, "(an initializer such as zeros, uniform(-0.1, 0.1) or kaiming_uniform())"))
    return nullptr;
  param->init = std::make_unique<CallExpr>(initPos, name);
  if (at(Tok::LParen) && !parseCallArgs(*param->init))
    return nullptr;
  return param;
}

StmtPtr Parser::parseFor() {
  auto loop = std::make_unique<ForStmt>(tok.pos);
  bool repeat = at(Tok::KwRepeat);
  advance();
  if (repeat) {
    loop->lo = std::make_unique<NumberExpr>(loop->pos, true, 0, 0);
    if (!(loop->hi = parseExpr()))
      return nullptr;
  } else {
    loop->var = {tok.text.str(), tok.pos};
    if (!expect(Tok::Ident, "(the loop variable)") || !expect(Tok::KwIn, "after the loop variable"))
      return nullptr;
    if (!(loop->lo = parseBinary(1)) || !expect(Tok::DotDot, "in the range lo..hi") ||
        !(loop->hi = parseBinary(1)))
      return nullptr;
  }
  if (!parseBlock(loop->body))
    return nullptr;
  return loop;
}

StmtPtr Parser::parseIf() {
  auto stmt = std::make_unique<IfStmt>(tok.pos);
  advance();
  if (!(stmt->cond = parseExpr()) || !parseBlock(stmt->thenBody))
    return nullptr;
  if (accept(Tok::KwElse)) {
    if (at(Tok::KwIf)) {
      // `else if` is an `if` nested in the else block: a chain of them
      // nests as deeply as the blocks would (its condition, parsed first,
      // refuses a chain too long).
      DepthGuard guard(depth);
      StmtPtr nested = parseIf();
      if (!nested)
        return nullptr;
      stmt->elseBody.push_back(std::move(nested));
    } else if (!parseBlock(stmt->elseBody)) {
      return nullptr;
    }
  }
  return stmt;
}

//===----------------------------------------------------------------------===//
// Expressions: precedence climbing over the binary levels.
//===----------------------------------------------------------------------===//

/// The binary operators of each level, loosest first; level 0 is `or`.
static int binaryLevel(Tok k) {
  switch (k) {
  case Tok::KwOr: return 0;
  case Tok::KwAnd: return 1;
  case Tok::Eq: case Tok::Ne: case Tok::Lt: case Tok::Le: case Tok::Gt: case Tok::Ge:
    return 2;
  case Tok::Plus: case Tok::Minus: return 3;
  case Tok::Star: case Tok::Slash: case Tok::Percent: case Tok::At: return 4;
  default: return -1;
  }
}

ExprPtr Parser::parseExpr() { return parseBinary(0); }

ExprPtr Parser::parseBinary(int level) {
  DepthGuard guard(depth);
  if (guard.tooDeep()) {
    errorTooDeep();
    return nullptr;
  }
  if (level > 4)
    return parseUnary();
  ExprPtr lhs = parseBinary(level + 1);
  while (lhs && binaryLevel(tok.kind) == level) {
    // The chain so far becomes the left operand: one level deeper.
    guard.deeper();
    if (guard.tooDeep()) {
      errorTooDeep();
      return nullptr;
    }
    Tok op = tok.kind;
    Pos pos = tok.pos;
    advance();
    ExprPtr rhs = parseBinary(level + 1);
    if (!rhs)
      return nullptr;
    // Comparisons do not chain: `a < b < c` is a mistake, not a conjunction.
    if (level == 2 && binaryLevel(tok.kind) == 2) {
      errorHere() << "comparisons do not chain; combine them with 'and'";
      return nullptr;
    }
    lhs = std::make_unique<BinaryExpr>(pos, op, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parseUnary() {
  DepthGuard guard(depth);
  if (guard.tooDeep()) {
    errorTooDeep();
    return nullptr;
  }
  Pos pos = tok.pos;
  if (at(Tok::Minus) || at(Tok::KwNot)) {
    Tok op = tok.kind;
    advance();
    ExprPtr operand = parseUnary();
    if (!operand)
      return nullptr;
    return std::make_unique<UnaryExpr>(pos, op, std::move(operand));
  }
  ExprPtr base = parsePostfix();
  if (base && at(Tok::StarStar)) {
    Pos opPos = tok.pos;
    advance();
    ExprPtr exponent = parseUnary(); // right-associative, binds tighter than unary minus
    if (!exponent)
      return nullptr;
    return std::make_unique<BinaryExpr>(opPos, Tok::StarStar, std::move(base), std::move(exponent));
  }
  return base;
}

bool Parser::parseCallArgs(CallExpr &call) {
  advance(); // (
  while (!at(Tok::RParen)) {
    // `name = value` is a keyword argument; a bare expression is positional.
    if (at(Tok::Ident)) {
      Token name = tok;
      Lexer save = lexer;
      advance();
      if (at(Tok::Assign)) {
        advance();
        KeywordArg kw{name.pos, name.text.str(), parseExpr()};
        if (!kw.value)
          return false;
        call.kwargs.push_back(std::move(kw));
        if (!accept(Tok::Comma))
          break;
        continue;
      }
      lexer = save;
      tok = name;
    }
    if (!call.kwargs.empty()) {
      errorHere() << "positional argument after a keyword argument";
      return false;
    }
    ExprPtr arg = parseExpr();
    if (!arg)
      return false;
    call.args.push_back(std::move(arg));
    if (!accept(Tok::Comma))
      break;
  }
  return expect(Tok::RParen, "after the arguments");
}

bool Parser::parseSubscript(Subscript &sub) {
  sub.pos = tok.pos;
  if (!at(Tok::Colon)) {
    if (!(sub.index = parseExpr()))
      return false;
    if (!at(Tok::Colon))
      return true;
  }
  // A slice lo:hi:step; `index` held lo.
  sub.isSlice = true;
  sub.lo = std::move(sub.index);
  advance();
  if (!at(Tok::Colon) && !at(Tok::Comma) && !at(Tok::RBracket) && !(sub.hi = parseExpr()))
    return false;
  if (accept(Tok::Colon) && !at(Tok::Comma) && !at(Tok::RBracket) && !(sub.step = parseExpr()))
    return false;
  return true;
}

std::unique_ptr<ScopePath> Parser::parseScopePath() {
  auto path = std::make_unique<ScopePath>();
  path->pos = tok.pos;
  do {
    ScopePath::Part part{tok.text.str(), nullptr};
    if (!expect(Tok::Ident, "(a scope name after 'as')"))
      return nullptr;
    path->parts.push_back(std::move(part));
    while (at(Tok::LBracket)) {
      advance();
      ScopePath::Part index{"", parseExpr()};
      if (!index.index || !expect(Tok::RBracket, "after the scope index"))
        return nullptr;
      path->parts.push_back(std::move(index));
    }
  } while (accept(Tok::Dot));
  return path;
}

ExprPtr Parser::parsePostfix() {
  ExprPtr e = parsePrimary();
  // Each call, subscript or member nests what precedes it one level deeper.
  DepthGuard chain(depth, /*levels=*/0);
  while (e) {
    Pos pos = tok.pos;
    if (at(Tok::LParen) || at(Tok::LBracket) || at(Tok::Dot)) {
      chain.deeper();
      if (chain.tooDeep()) {
        errorTooDeep();
        return nullptr;
      }
    }
    if (at(Tok::LParen)) {
      auto *name = llvm::dyn_cast<NameExpr>(e.get());
      if (!name) {
        errorHere() << "only a function name can be called";
        return nullptr;
      }
      auto call = std::make_unique<CallExpr>(name->pos, name->name);
      if (!parseCallArgs(*call))
        return nullptr;
      if (accept(Tok::KwAs) && !(call->scope = parseScopePath()))
        return nullptr;
      e = std::move(call);
    } else if (at(Tok::LBracket)) {
      advance();
      auto index = std::make_unique<IndexExpr>(pos, std::move(e));
      while (!at(Tok::RBracket)) {
        Subscript sub;
        if (!parseSubscript(sub))
          return nullptr;
        index->subs.push_back(std::move(sub));
        if (!accept(Tok::Comma))
          break;
      }
      if (!expect(Tok::RBracket, "after the subscripts"))
        return nullptr;
      e = std::move(index);
    } else if (at(Tok::Dot)) {
      advance();
      std::string member = tok.text.str();
      Pos memberPos = tok.pos;
      if (!expect(Tok::Ident, "after '.'"))
        return nullptr;
      e = std::make_unique<MemberExpr>(memberPos, std::move(e), member);
    } else {
      break;
    }
  }
  return e;
}

ExprPtr Parser::parsePrimary() {
  Pos pos = tok.pos;
  switch (tok.kind) {
  case Tok::Int: {
    auto e = std::make_unique<NumberExpr>(pos, true, tok.intValue, tok.floatValue);
    advance();
    return e;
  }
  case Tok::Float: {
    auto e = std::make_unique<NumberExpr>(pos, false, 0, tok.floatValue);
    advance();
    return e;
  }
  case Tok::KwTrue:
  case Tok::KwFalse: {
    auto e = std::make_unique<BoolExpr>(pos, at(Tok::KwTrue));
    advance();
    return e;
  }
  case Tok::Ident: {
    auto e = std::make_unique<NameExpr>(pos, tok.text.str());
    advance();
    return e;
  }
  case Tok::LParen: {
    advance();
    ExprPtr e = parseExpr();
    if (!e || !expect(Tok::RParen, "to close the parenthesis"))
      return nullptr;
    return e;
  }
  case Tok::LBracket: {
    advance();
    auto list = std::make_unique<ListExpr>(pos);
    while (!at(Tok::RBracket)) {
      ExprPtr elem = parseExpr();
      if (!elem)
        return nullptr;
      list->elems.push_back(std::move(elem));
      if (!accept(Tok::Comma))
        break;
    }
    if (!expect(Tok::RBracket, "to close the list"))
      return nullptr;
    return list;
  }
  default:
    errorHere() << "expected an expression, found " << describe();
    return nullptr;
  }
}

} // namespace

Program tcc::dsl::parseProgram(llvm::StringRef buffer, Diagnostics &diags) {
  return Parser(buffer, diags).run();
}
