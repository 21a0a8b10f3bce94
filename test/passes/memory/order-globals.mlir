// RUN: tcc-opt --split-input-file --tcc-order-globals %s | FileCheck %s

// Tests that constants move to the top in the order of their first use
// (across functions, in their order), are named by it, and that every use
// follows the new name; an unused constant is erased.
// CHECK-LABEL: module
//       CHECK:   memref.global "private" constant @__constant_0_4xf32 : memref<4xf32> = dense<1.000000e+00>
//  CHECK-NEXT:   memref.global "private" constant @__constant_1_2x3xi64 : memref<2x3xi64> = dense<7>
//  CHECK-NEXT:   memref.global "private" constant @__constant_2_4xf32 : memref<4xf32> = dense<2.000000e+00>
//   CHECK-NOT:   memref.global
//       CHECK:   func.func @first
//       CHECK:     memref.get_global @__constant_0_4xf32
//       CHECK:     memref.get_global @__constant_1_2x3xi64
//       CHECK:   func.func @second
//       CHECK:     memref.get_global @__constant_2_4xf32
//       CHECK:     memref.get_global @__constant_0_4xf32
module {
  memref.global "private" constant @__constant_4xf32_0 : memref<4xf32> = dense<2.0>
  memref.global "private" constant @unused : memref<4xf32> = dense<3.0>
  memref.global "private" constant @__constant_4xf32 : memref<4xf32> = dense<1.0>
  memref.global "private" constant @__constant_2x3xi64 : memref<2x3xi64> = dense<7>
  func.func @first() -> (memref<4xf32>, memref<2x3xi64>) {
    %0 = memref.get_global @__constant_4xf32 : memref<4xf32>
    %1 = memref.get_global @__constant_2x3xi64 : memref<2x3xi64>
    return %0, %1 : memref<4xf32>, memref<2x3xi64>
  }
  func.func @second() -> (memref<4xf32>, memref<4xf32>) {
    %0 = memref.get_global @__constant_4xf32_0 : memref<4xf32>
    %1 = memref.get_global @__constant_4xf32 : memref<4xf32>
    return %0, %1 : memref<4xf32>, memref<4xf32>
  }
}

// -----

// Tests that public and mutable globals keep their names and places.
// CHECK-LABEL: module
//       CHECK:   memref.global @state : memref<4xf32>
//       CHECK:   memref.global "private" @scratch : memref<4xf32>
//       CHECK:   func.func @f
//       CHECK:     memref.get_global @state
//       CHECK:     memref.get_global @scratch
module {
  memref.global @state : memref<4xf32> = uninitialized
  memref.global "private" @scratch : memref<4xf32> = uninitialized
  func.func @f() -> (memref<4xf32>, memref<4xf32>) {
    %0 = memref.get_global @state : memref<4xf32>
    %1 = memref.get_global @scratch : memref<4xf32>
    return %0, %1 : memref<4xf32>, memref<4xf32>
  }
}
