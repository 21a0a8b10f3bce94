// RUN: tcc-opt --tcc-expand-arith %s | FileCheck %s

// maximumf / minimumf stay (LLVM lowers them to llvm.maximum / llvm.minimum,
// which its loop vectorizer reduces); ceil division and bf16 conversions
// are expanded as upstream's arith-expand does.
// CHECK-LABEL: func.func @kept
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK-LABEL: func.func @expanded
// CHECK-NOT: arith.ceildivsi
// CHECK-NOT: arith.extf
// CHECK: arith.bitcast
func.func @kept(%a: f32, %b: f32) -> (f32, f32) {
  %m = arith.maximumf %a, %b : f32
  %n = arith.minimumf %a, %b : f32
  return %m, %n : f32, f32
}
func.func @expanded(%a: i32, %b: i32, %h: bf16) -> (i32, f32) {
  %c = arith.ceildivsi %a, %b : i32
  %f = arith.extf %h : bf16 to f32
  return %c, %f : i32, f32
}
