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

// With native-bf16-rounding (a target with AVX512-BF16), an f32 -> bf16
// truncation is llvm.fptrunc, which LLVM lowers to vcvtneps2bf16; the
// widening stays integer arithmetic (a shift), as does a truncation from
// f64 or to f16. Without the option it is integer rounding too.
// RUN: tcc-opt --tcc-expand-arith=native-bf16-rounding %s | FileCheck %s --check-prefix=NATIVE
// NATIVE-LABEL: func.func @rounded
// NATIVE: llvm.fptrunc %{{.*}} : vector<16xf32> to vector<16xbf16>
// NATIVE: llvm.fptrunc %{{.*}} : f32 to bf16
// NATIVE-NOT: arith.truncf %{{.*}} : f32 to bf16
// NATIVE: arith.truncf %{{.*}} : f32 to f16
// NATIVE: return
// CHECK-LABEL: func.func @rounded
// CHECK-NOT: llvm.fptrunc
// CHECK-NOT: arith.truncf %{{.*}} : f32 to bf16
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @rounded(%v: vector<16xf32>, %s: f32) -> (vector<16xbf16>, bf16, f16) {
  %a = arith.truncf %v : vector<16xf32> to vector<16xbf16>
  %b = arith.truncf %s : f32 to bf16
  %c = arith.truncf %s : f32 to f16
  return %a, %b, %c : vector<16xbf16>, bf16, f16
}
