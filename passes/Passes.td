//===- Passes.td - tcc's own passes ---------------------------*- tablegen -*-===//
//
// Every tcc pass is declared here (def FooPass, flag --tcc-foo, file Foo.cpp,
// test test/passes/foo.mlir). Upstream passes are used wherever they do the
// job; the passes here are what upstream lacks.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_PASSES_TD
#define TCC_PASSES_TD

include "mlir/Pass/PassBase.td"

def ExpandCompositesPass : Pass<"tcc-expand-composites", "mlir::func::FuncOp"> {
  let summary = "Expand composite ops into simpler tcc ops";
  let description = [{
    Rewrites ops that are compositions of simpler ones into those ops, for
    backends and passes that only handle the primitives: `tcc.gelu` into erf
    (or tanh) arithmetic, `tcc.softplus`, `tcc.leaky_relu` and `tcc.elu` into
    compares and selects, `tcc.rsqrt` and `tcc.reciprocal` into divisions.
    The result computes the same values up to floating-point rounding.
  }];
  let dependentDialects = ["tcc::TccDialect"];
}

#endif // TCC_PASSES_TD
