//===- Parser.h - recursive descent over the tcc model language -----------===//
//
// Builds a Program from tokens; the grammar is in docs/dsl.md. A syntax error
// is reported and the parser skips to the end of the statement (or to the
// next declaration at the top level), so one run reports every syntax error
// of a file. Nesting is bounded, so no input can exhaust the stack.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_FRONTEND_DSL_PARSER_H
#define TCC_FRONTEND_DSL_PARSER_H

#include "frontend/dsl/AST.h"
#include "frontend/dsl/Diagnostics.h"

namespace tcc::dsl {

/// Parses BUFFER; errors go to DIAGS (check its count).
Program parseProgram(llvm::StringRef buffer, Diagnostics &diags);

} // namespace tcc::dsl

#endif // TCC_FRONTEND_DSL_PARSER_H
