//===- LibraryCalls.h - the marked calls between the two library-call passes ===//
//
// tcc-mark-library-calls, before the memory plan, turns each heavy op into a
// call of a private declaration @tcc_library_call_N that carries the call's
// kind and parameters in a tcc.library_call attribute (so that liveness sees
// the operands the call really reads); tcc-lower-library-calls, after
// the plan, turns those calls into calls of the runtime's library_call.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_PASSES_CODEGEN_LIBRARYCALLS_H
#define TCC_PASSES_CODEGEN_LIBRARYCALLS_H

#include "llvm/ADT/StringRef.h"

namespace tcc {

/// The names of the declarations, followed by N (counting the module's calls).
inline constexpr llvm::StringLiteral libraryCallPrefix = "tcc_library_call_";

} // namespace tcc

#endif // TCC_PASSES_CODEGEN_LIBRARYCALLS_H
