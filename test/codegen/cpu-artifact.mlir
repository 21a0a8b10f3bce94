// Tests the CPU artifact: the library exports only the descriptor, its
// undefined symbols are libc/libm only (exp is a polynomial, not expf), and
// the LLVM IR holds an entry wrapper with the ABI's signature and a
// descriptor carrying the memory plan.
// RUN: tcc %s -o %t.so
// RUN: nm -D --defined-only %t.so | FileCheck %s --check-prefix=EXPORTS
// EXPORTS: T tcc_artifact_descriptor
// EXPORTS-NOT: T
// RUN: nm -D --undefined-only %t.so | FileCheck %s --check-prefix=IMPORTS
// IMPORTS-NOT: mlir
// IMPORTS-NOT: malloc
// IMPORTS-NOT: expf
// RUN: tcc %s --emit=llvm -o - | FileCheck %s --check-prefix=IR
// IR-DAG: define internal{{.*}} i32 @tcc_entry_infer(ptr
// IR-DAG: @.tcc.descriptor = private{{.*}} { i32 1, i32 216,
// IR-DAG: define{{.*}} ptr @tcc_artifact_descriptor()
// IR-DAG: c"infer\00"
// RUN: tcc %s --emit=bufferized | FileCheck %s --check-prefix=PLAN
// PLAN: tcc.arena_size = 128 : i64
// PLAN-SAME: name = "y", offset = 64 : i64, region = "arena", role = "output"
// PLAN-NOT: memref.alloc
func.func @forward(%x: tensor<2x3xf32> {tcc.input = "x"}, %w: tensor<3xf32> {tcc.param = "b"}) -> (tensor<2x3xf32> {tcc.output = "y"}) {
  %e = tensor.empty() : tensor<2x3xf32>
  %b = linalg.broadcast ins(%w : tensor<3xf32>) outs(%e : tensor<2x3xf32>) dimensions = [0]
  %e2 = tensor.empty() : tensor<2x3xf32>
  %t = linalg.exp ins(%b : tensor<2x3xf32>) outs(%e2 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %e3 = tensor.empty() : tensor<2x3xf32>
  %y = linalg.add ins(%x, %t : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e3 : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
