//===- Sema.h - names, values and shapes of a tcc model program -----------===//
//
// The semantic pass, in two steps. The resolver binds every name to what it
// denotes (a variable, constant, function, builtin or parameter scope),
// checks calls against their signatures, and suggests the nearest name for a
// typo. The elaborator then runs the model at compile time: it inlines each
// function call (a function's parameters are named by the call's `as`
// scope), unrolls loops, computes compile-time integers, and infers and
// checks the type of every tensor expression, reporting a shape error at the
// expression that causes it. Both steps recover from errors — an erroneous
// value poisons what uses it without more messages — so one run reports
// every error of a file.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_FRONTEND_DSL_SEMA_H
#define TCC_FRONTEND_DSL_SEMA_H

#include "frontend/dsl/AST.h"
#include "frontend/dsl/Diagnostics.h"
#include "frontend/dsl/Graph.h"

#include "llvm/ADT/StringMap.h"

#include <optional>

namespace tcc::dsl {

struct SemaOptions {
  /// Binds the first dimension of every input whose first dimension is
  /// symbolic (`--batch`).
  std::optional<int64_t> batch;
  /// Binds symbolic dimensions and overrides integer constants by name
  /// (`--dim NAME=N`); wins over `batch`.
  llvm::StringMap<int64_t> dims;
};

/// Checks PROGRAM and elaborates its model into a graph; errors go to
/// DIAGS, and the graph is meaningful only when none were reported.
Graph analyze(Program &program, const SemaOptions &options, Diagnostics &diags);

/// Just the recipe of PROGRAM's train blocks (for the driver, which applies
/// it before its own flags); errors go to DIAGS.
Recipe readRecipe(const Program &program, Diagnostics &diags);

/// The names the language predefines as functions, for suggestions.
llvm::ArrayRef<std::string> builtinNames();

} // namespace tcc::dsl

#endif // TCC_FRONTEND_DSL_SEMA_H
