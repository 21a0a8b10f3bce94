// RUN: tcc-opt --split-input-file --tcc-lower-to-linalg %s | FileCheck %s
// RUN: tcc-opt --split-input-file --tcc-lower-to-linalg %s | FileCheck %s --check-prefix=NOTCC
// The pass also runs function by function:
// RUN: tcc-opt --split-input-file --pass-pipeline='builtin.module(func.func(tcc-lower-to-linalg))' %s | FileCheck %s

// Unsigned integer types become signless everywhere: in function signatures,
// calls, returns and the regions of other ops, not only in the lowered tcc
// ops. No tcc op survives anywhere (attributes named tcc.* are not ops):
// NOTCC-NOT: = tcc.

// Tests that signatures, calls and argument attributes follow the conversion,
// and that an entry point records the unsigned element types its inputs and
// outputs declared (for the artifact's descriptor, via tcc-plan-memory).
// CHECK-LABEL: func.func private @callee
//  CHECK-SAME:   (tensor<4xi8>) -> tensor<4xi8>
// CHECK-LABEL: func.func @caller
//  CHECK-SAME:   (%[[X:.+]]: tensor<4xi8> {tcc.input = "x"}) -> (tensor<4xi8> {tcc.output = "y"})
//  CHECK-SAME:   attributes {tcc.declared_types = {arg0 = ui8, result0 = ui8}}
//       CHECK:   %[[R:.+]] = call @callee(%[[X]]) : (tensor<4xi8>) -> tensor<4xi8>
//       CHECK:   %[[S:.+]] = linalg.generic {{.+}}ins(%[[R]], %[[X]] : tensor<4xi8>, tensor<4xi8>)
//       CHECK:     arith.maxui
//       CHECK:   return %[[S]] : tensor<4xi8>
func.func private @callee(tensor<4xui8>) -> tensor<4xui8>
func.func @caller(%x: tensor<4xui8> {tcc.input = "x"}) -> (tensor<4xui8> {tcc.output = "y"}) {
  %0 = call @callee(%x) : (tensor<4xui8>) -> tensor<4xui8>
  %1 = tcc.max %0, %x : tensor<4xui8>
  return %1 : tensor<4xui8>
}

// -----

// Tests that scf regions carrying unsigned tensors are converted as well,
// and that a function without named inputs records no declared types.
// CHECK-LABEL: func.func @scf_if
//   CHECK-NOT:   tcc.declared_types
//       CHECK:   %[[R:.+]] = scf.if %{{.+}} -> (tensor<4xi16>)
//       CHECK:     scf.yield %{{.+}} : tensor<4xi16>
//       CHECK:   } else {
//       CHECK:     arith.divui
//       CHECK:     scf.yield %{{.+}} : tensor<4xi16>
//       CHECK:   return %[[R]] : tensor<4xi16>
func.func @scf_if(%c: i1, %x: tensor<4xui16>) -> tensor<4xui16> {
  %0 = scf.if %c -> tensor<4xui16> {
    scf.yield %x : tensor<4xui16>
  } else {
    %1 = tcc.div %x, %x : tensor<4xui16>
    scf.yield %1 : tensor<4xui16>
  }
  return %0 : tensor<4xui16>
}

// -----

// Tests that signless types and unrelated ops pass through untouched.
// CHECK-LABEL: func.func @untouched
//  CHECK-SAME:   (%[[X:.+]]: tensor<4xf32>, %[[I:.+]]: index) -> f32
//       CHECK:   %[[V:.+]] = tensor.extract %[[X]][%[[I]]] : tensor<4xf32>
//       CHECK:   return %[[V]]
func.func @untouched(%x: tensor<4xf32>, %i: index) -> f32 {
  %0 = tensor.extract %x[%i] : tensor<4xf32>
  return %0 : f32
}
