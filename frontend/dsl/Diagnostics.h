//===- Diagnostics.h - errors of the tcc model language at source positions ===//
//
// Every stage of the frontend reports through one Diagnostics object: an MLIR
// error at FileLineColLoc(file, line, col), so that the driver prints it as a
// compiler does (`file:line:col: error: ...`, the line, a caret) and errors of
// the DSL and of later passes look alike. The count lets a stage go on after
// an error (to report the next one) and still fail at the end; past
// kMaxErrors the stages stop, as C compilers do.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_FRONTEND_DSL_DIAGNOSTICS_H
#define TCC_FRONTEND_DSL_DIAGNOSTICS_H

#include "frontend/dsl/Lexer.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"

namespace tcc::dsl {

class Diagnostics {
public:
  Diagnostics(mlir::MLIRContext *context, llvm::StringRef filename)
      : context(context), filename(filename.str()) {}

  mlir::Location loc(Pos pos) const {
    return mlir::FileLineColLoc::get(context, filename, pos.line, pos.col);
  }
  /// Errors reported in full; the next one is reported as the reason to
  /// stop, and later ones are dropped. Each error may cost a look at every
  /// name of the file (the nearest name for a typo), so without a bound a
  /// file of N mistakes would take time N^2; real files stay far below it.
  static constexpr unsigned kMaxErrors = 100;

  mlir::InFlightDiagnostic error(Pos pos) {
    ++errors;
    if (errors == kMaxErrors + 1)
      mlir::emitError(loc(pos)) << "more than " << kMaxErrors << " errors; stopping here";
    mlir::InFlightDiagnostic d = mlir::emitError(loc(pos));
    if (errors > kMaxErrors)
      d.abandon();
    return d;
  }
  /// Whether the error limit has been passed: a stage stops its work, and
  /// spends nothing on messages that would be dropped.
  bool stopped() const { return errors > kMaxErrors; }
  mlir::InFlightDiagnostic warning(Pos pos) { return mlir::emitWarning(loc(pos)); }
  unsigned errorCount() const { return errors; }
  mlir::MLIRContext *getContext() const { return context; }
  llvm::StringRef file() const { return filename; }

private:
  mlir::MLIRContext *context;
  std::string filename;
  unsigned errors = 0;
};

/// The closest of CANDIDATES to NAME by edit distance, or "" when none is
/// close enough to be a likely typo (at most a third of the name's length).
std::string closestName(llvm::StringRef name, llvm::ArrayRef<std::string> candidates);

} // namespace tcc::dsl

#endif // TCC_FRONTEND_DSL_DIAGNOSTICS_H
