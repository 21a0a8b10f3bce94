// RUN: tcc-opt --split-input-file --tcc-lower-to-linalg %s | FileCheck %s
// RUN: tcc-opt --split-input-file --tcc-lower-to-linalg %s | FileCheck %s --check-prefix=NOTCC

// Every elementwise tcc op becomes one linalg.generic with identity maps whose
// body is the op's scalar semantics; unsigned types become signless and keep
// their semantics in the arith ops chosen. No tcc op survives anywhere:
// NOTCC-NOT: tcc.

// Tests that a binary op is one parallel generic over both operands.
// CHECK-LABEL: func.func @add_f32
//  CHECK-SAME:   (%[[X:.+]]: tensor<4x3xf32>, %[[Y:.+]]: tensor<4x3xf32>) -> tensor<4x3xf32>
//       CHECK:   %[[E:.+]] = tensor.empty() : tensor<4x3xf32>
//       CHECK:   %[[R:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
//  CHECK-SAME:     ins(%[[X]], %[[Y]] : tensor<4x3xf32>, tensor<4x3xf32>) outs(%[[E]] : tensor<4x3xf32>)
//       CHECK:   ^bb0(%[[A:.+]]: f32, %[[B:.+]]: f32, %{{.+}}: f32):
//       CHECK:     %[[S:.+]] = arith.addf %[[A]], %[[B]] : f32
//       CHECK:     linalg.yield %[[S]] : f32
//       CHECK:   return %[[R]]
func.func @add_f32(%x: tensor<4x3xf32>, %y: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = tcc.add %x, %y : tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Tests that ui8 becomes i8 in the signature and that division stays unsigned,
// with a zero divisor replaced (no trap) and x / 0 defined as 0.
// CHECK-LABEL: func.func @div_ui8
//  CHECK-SAME:   (%{{.+}}: tensor<4xi8>, %{{.+}}: tensor<4xi8>) -> tensor<4xi8>
//       CHECK:   ^bb0(%[[A:.+]]: i8, %[[B:.+]]: i8, %{{.+}}: i8):
//   CHECK-DAG:     %[[ZERO:.+]] = arith.constant 0 : i8
//   CHECK-DAG:     %[[ONE:.+]] = arith.constant 1 : i8
//       CHECK:     %[[ISZ:.+]] = arith.cmpi eq, %[[B]], %[[ZERO]] : i8
//       CHECK:     %[[SAFE:.+]] = arith.select %[[ISZ]], %[[ONE]], %[[B]] : i8
//       CHECK:     %[[Q:.+]] = arith.divui %[[A]], %[[SAFE]] : i8
//       CHECK:     %[[R:.+]] = arith.select %[[ISZ]], %[[ZERO]], %[[Q]] : i8
//       CHECK:     linalg.yield %[[R]] : i8
func.func @div_ui8(%x: tensor<4xui8>, %y: tensor<4xui8>) -> tensor<4xui8> {
  %0 = tcc.div %x, %y : tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// Tests that signed division truncates (divsi) and also guards INT_MIN / -1.
// CHECK-LABEL: func.func @div_i32
//       CHECK:     %[[ISZ:.+]] = arith.cmpi eq
//       CHECK:     %[[MIN:.+]] = arith.cmpi eq, %{{.+}}, %c-2147483648_i32
//       CHECK:     %[[M1:.+]] = arith.cmpi eq, %{{.+}}, %c-1_i32
//       CHECK:     %[[OVF:.+]] = arith.andi %[[MIN]], %[[M1]] : i1
//       CHECK:     arith.ori %[[ISZ]], %[[OVF]] : i1
//       CHECK:     arith.divsi
func.func @div_i32(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %0 = tcc.div %x, %y : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Tests that integer pow is square-and-multiply over the exponent's 32 bits,
// with negative exponents handled after the loop.
// CHECK-LABEL: func.func @pow_i32
//       CHECK:     %[[C32:.+]] = arith.constant 32 : index
//       CHECK:     %[[LOOP:.+]]:3 = scf.for %{{.+}} = %{{.+}} to %[[C32]]
//       CHECK:       arith.trunci %{{.+}} : i32 to i1
//       CHECK:       arith.muli
//       CHECK:       arith.shrui
//       CHECK:     arith.cmpi slt
//       CHECK:     arith.select %{{.+}}, %{{.+}}, %[[LOOP]]#0 : i32
func.func @pow_i32(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %0 = tcc.pow %x, %y : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Tests the float predicates: ordered except ne, which is unordered (NaN != x).
// CHECK-LABEL: func.func @compare_f32
//       CHECK:   arith.cmpf oeq
//       CHECK:   arith.cmpf une
//       CHECK:   arith.cmpf olt
//       CHECK:   arith.cmpf ole
//       CHECK:   arith.cmpf ogt
//       CHECK:   arith.cmpf oge
func.func @compare_f32(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %0 = tcc.compare eq, %x, %y : tensor<4xf32>
  %1 = tcc.compare ne, %x, %y : tensor<4xf32>
  %2 = tcc.compare lt, %x, %y : tensor<4xf32>
  %3 = tcc.compare le, %x, %y : tensor<4xf32>
  %4 = tcc.compare gt, %x, %y : tensor<4xf32>
  %5 = tcc.compare ge, %x, %y : tensor<4xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// -----

// Tests that unsigned compares use the unsigned predicates, signed the signed.
// CHECK-LABEL: func.func @compare_int
//       CHECK:   arith.cmpi ugt, %{{.+}}, %{{.+}} : i8
//       CHECK:   arith.cmpi sle, %{{.+}}, %{{.+}} : i32
func.func @compare_int(%x: tensor<4xui8>, %y: tensor<4xui8>, %a: tensor<4xi32>, %b: tensor<4xi32>) -> (tensor<4xi1>, tensor<4xi1>) {
  %0 = tcc.compare gt, %x, %y : tensor<4xui8>
  %1 = tcc.compare le, %a, %b : tensor<4xi32>
  return %0, %1 : tensor<4xi1>, tensor<4xi1>
}

// -----

// Tests that tcc.select reads the condition and both values elementwise.
// CHECK-LABEL: func.func @select
//  CHECK-SAME:   (%[[C:.+]]: tensor<4xi1>, %[[X:.+]]: tensor<4xf32>, %[[Y:.+]]: tensor<4xf32>)
//       CHECK:   linalg.generic
//  CHECK-SAME:     ins(%[[C]], %[[X]], %[[Y]] : tensor<4xi1>, tensor<4xf32>, tensor<4xf32>)
//       CHECK:   ^bb0(%[[CC:.+]]: i1, %[[A:.+]]: f32, %[[B:.+]]: f32, %{{.+}}: f32):
//       CHECK:     arith.select %[[CC]], %[[A]], %[[B]] : f32
func.func @select(%c: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.select %c, %x, %y : tensor<4xi1>, tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that an unsigned constant is reinterpreted bit for bit as signless.
// CHECK-LABEL: func.func @constant_ui8
//  CHECK-SAME:   () -> tensor<3xi8>
//       CHECK:   %[[C:.+]] = arith.constant dense<[1, -56, -1]> : tensor<3xi8>
//       CHECK:   return %[[C]]
func.func @constant_ui8() -> tensor<3xui8> {
  %0 = tcc.constant dense<[1, 200, 255]> : tensor<3xui8>
  return %0 : tensor<3xui8>
}

// -----

// Tests that integer tcc.sub becomes arith.subi.
// CHECK-LABEL: func.func @sub_i32
//       CHECK:   linalg.generic
//       CHECK:     arith.subi
func.func @sub_i32(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %0 = tcc.sub %x, %y : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Tests that tcc.mul stays in the element type (f16).
// CHECK-LABEL: func.func @mul_f16
//       CHECK:   linalg.generic
//       CHECK:     arith.mulf {{.*}} : f16
func.func @mul_f16(%x: tensor<4xf16>, %y: tensor<4xf16>) -> tensor<4xf16> {
  %0 = tcc.mul %x, %y : tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// Tests that float tcc.div becomes arith.divf.
// CHECK-LABEL: func.func @div_f32
//       CHECK:   linalg.generic
//       CHECK:     arith.divf
func.func @div_f32(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.div %x, %y : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that float tcc.pow becomes math.powf.
// CHECK-LABEL: func.func @pow_f32
//       CHECK:   linalg.generic
//       CHECK:     math.powf
func.func @pow_f32(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.pow %x, %y : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that float tcc.max propagates NaN (arith.maximumf).
// CHECK-LABEL: func.func @max_f32
//       CHECK:   linalg.generic
//       CHECK:     arith.maximumf
func.func @max_f32(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.max %x, %y : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that float tcc.min propagates NaN (arith.minimumf).
// CHECK-LABEL: func.func @min_f32
//       CHECK:   linalg.generic
//       CHECK:     arith.minimumf
func.func @min_f32(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.min %x, %y : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that signed tcc.max becomes arith.maxsi.
// CHECK-LABEL: func.func @max_i32
//       CHECK:   linalg.generic
//       CHECK:     arith.maxsi
func.func @max_i32(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %0 = tcc.max %x, %y : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Tests that unsigned tcc.min becomes arith.minui on i8.
// CHECK-LABEL: func.func @min_ui8
//       CHECK:   linalg.generic
//       CHECK:     arith.minui {{.*}} : i8
func.func @min_ui8(%x: tensor<4xui8>, %y: tensor<4xui8>) -> tensor<4xui8> {
  %0 = tcc.min %x, %y : tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// Tests that unsigned tcc.max becomes arith.maxui on i16.
// CHECK-LABEL: func.func @max_ui16
//       CHECK:   linalg.generic
//       CHECK:     arith.maxui {{.*}} : i16
func.func @max_ui16(%x: tensor<4xui16>, %y: tensor<4xui16>) -> tensor<4xui16> {
  %0 = tcc.max %x, %y : tensor<4xui16>
  return %0 : tensor<4xui16>
}

// -----

// Tests that tcc.and becomes arith.andi.
// CHECK-LABEL: func.func @and_i1
//       CHECK:   linalg.generic
//       CHECK:     arith.andi
func.func @and_i1(%x: tensor<4xi1>, %y: tensor<4xi1>) -> tensor<4xi1> {
  %0 = tcc.and %x, %y : tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// Tests that tcc.or becomes arith.ori.
// CHECK-LABEL: func.func @or_i1
//       CHECK:   linalg.generic
//       CHECK:     arith.ori
func.func @or_i1(%x: tensor<4xi1>, %y: tensor<4xi1>) -> tensor<4xi1> {
  %0 = tcc.or %x, %y : tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// Tests that tcc.xor becomes arith.xori.
// CHECK-LABEL: func.func @xor_i1
//       CHECK:   linalg.generic
//       CHECK:     arith.xori
func.func @xor_i1(%x: tensor<4xi1>, %y: tensor<4xi1>) -> tensor<4xi1> {
  %0 = tcc.xor %x, %y : tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// Tests that tcc.not is xor with true.
// CHECK-LABEL: func.func @not_i1
//       CHECK:   linalg.generic
//       CHECK:     %[[T:.+]] = arith.constant true
//       CHECK:     arith.xori {{.*}}%[[T]]
func.func @not_i1(%x: tensor<4xi1>) -> tensor<4xi1> {
  %0 = tcc.not %x : tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// Tests that float tcc.neg becomes arith.negf.
// CHECK-LABEL: func.func @neg_f32
//       CHECK:   linalg.generic
//       CHECK:     arith.negf
func.func @neg_f32(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.neg %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that integer tcc.neg is 0 - x.
// CHECK-LABEL: func.func @neg_i32
//       CHECK:   linalg.generic
//       CHECK:     %[[Z:.+]] = arith.constant 0 : i32
//       CHECK:     arith.subi %[[Z]]
func.func @neg_i32(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = tcc.neg %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Tests that float tcc.abs becomes math.absf.
// CHECK-LABEL: func.func @abs_f32
//       CHECK:   linalg.generic
//       CHECK:     math.absf
func.func @abs_f32(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.abs %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that signed tcc.abs is max(x, 0 - x) (INT_MIN wraps).
// CHECK-LABEL: func.func @abs_i32
//       CHECK:   linalg.generic
//       CHECK:     %[[N:.+]] = arith.subi
//       CHECK:     arith.maxsi %{{.*}}, %[[N]]
func.func @abs_i32(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = tcc.abs %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Tests that unsigned tcc.abs is the identity.
// CHECK-LABEL: func.func @abs_ui8
//       CHECK:   linalg.generic
//       CHECK:     ^bb0(%[[IN:.+]]: i8, %{{.+}}: i8):
//       CHECK:     linalg.yield %[[IN]] : i8
func.func @abs_ui8(%x: tensor<4xui8>) -> tensor<4xui8> {
  %0 = tcc.abs %x : tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// Tests that float tcc.sign selects 1, -1, NaN or +0.
// CHECK-LABEL: func.func @sign_f32
//       CHECK:   linalg.generic
//       CHECK:     arith.cmpf ogt
//       CHECK:     arith.cmpf olt
//       CHECK:     arith.cmpf uno
//       CHECK:     arith.select
func.func @sign_f32(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.sign %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that signed tcc.sign compares with 0.
// CHECK-LABEL: func.func @sign_i32
//       CHECK:   linalg.generic
//       CHECK:     arith.cmpi sgt
//       CHECK:     arith.cmpi slt
//       CHECK:     arith.select
func.func @sign_i32(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = tcc.sign %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Tests that tcc.exp becomes math.exp.
// CHECK-LABEL: func.func @exp_f32
//       CHECK:   linalg.generic
//       CHECK:     math.exp
func.func @exp_f32(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.exp %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that tcc.log becomes math.log.
// CHECK-LABEL: func.func @log_f32
//       CHECK:   linalg.generic
//       CHECK:     math.log
func.func @log_f32(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.log %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that tcc.sqrt becomes math.sqrt.
// CHECK-LABEL: func.func @sqrt_f32
//       CHECK:   linalg.generic
//       CHECK:     math.sqrt
func.func @sqrt_f32(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.sqrt %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that tcc.tanh becomes math.tanh.
// CHECK-LABEL: func.func @tanh_f32
//       CHECK:   linalg.generic
//       CHECK:     math.tanh
func.func @tanh_f32(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.tanh %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that tcc.erf becomes math.erf.
// CHECK-LABEL: func.func @erf_f32
//       CHECK:   linalg.generic
//       CHECK:     math.erf
func.func @erf_f32(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.erf %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that tcc.sin becomes math.sin.
// CHECK-LABEL: func.func @sin_f32
//       CHECK:   linalg.generic
//       CHECK:     math.sin
func.func @sin_f32(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.sin %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that tcc.cos becomes math.cos.
// CHECK-LABEL: func.func @cos_f32
//       CHECK:   linalg.generic
//       CHECK:     math.cos
func.func @cos_f32(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.cos %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that tan, asin, acos, atan, sinh, cosh, asinh, acosh and atanh become
// the math op of the same name, one linalg.generic each.
// CHECK-LABEL: func.func @trig_f32
//       CHECK:   linalg.generic
//       CHECK:     math.tan
//       CHECK:   linalg.generic
//       CHECK:     math.asin
//       CHECK:   linalg.generic
//       CHECK:     math.acos
//       CHECK:   linalg.generic
//       CHECK:     math.atan
//       CHECK:   linalg.generic
//       CHECK:     math.sinh
//       CHECK:   linalg.generic
//       CHECK:     math.cosh
//       CHECK:   linalg.generic
//       CHECK:     math.asinh
//       CHECK:   linalg.generic
//       CHECK:     math.acosh
//       CHECK:   linalg.generic
//       CHECK:     math.atanh
func.func @trig_f32(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = tcc.tan %x : tensor<4xf32>
  %1 = tcc.asin %x : tensor<4xf32>
  %2 = tcc.acos %x : tensor<4xf32>
  %3 = tcc.atan %x : tensor<4xf32>
  %4 = tcc.sinh %x : tensor<4xf32>
  %5 = tcc.cosh %x : tensor<4xf32>
  %6 = tcc.asinh %x : tensor<4xf32>
  %7 = tcc.acosh %x : tensor<4xf32>
  %8 = tcc.atanh %x : tensor<4xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that tcc.floor becomes math.floor.
// CHECK-LABEL: func.func @floor_f32
//       CHECK:   linalg.generic
//       CHECK:     math.floor
func.func @floor_f32(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.floor %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that tcc.ceil becomes math.ceil.
// CHECK-LABEL: func.func @ceil_f32
//       CHECK:   linalg.generic
//       CHECK:     math.ceil
func.func @ceil_f32(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.ceil %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that tcc.round rounds half to even (math.roundeven).
// CHECK-LABEL: func.func @round_f32
//       CHECK:   linalg.generic
//       CHECK:     math.roundeven
func.func @round_f32(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.round %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that tcc.rsqrt is 1 / sqrt(x).
// CHECK-LABEL: func.func @rsqrt_f32
//       CHECK:   linalg.generic
//       CHECK:     %[[S:.+]] = math.sqrt
//       CHECK:     arith.divf %{{.*}}, %[[S]]
func.func @rsqrt_f32(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.rsqrt %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that tcc.reciprocal is 1 / x.
// CHECK-LABEL: func.func @reciprocal_f32
//       CHECK:   linalg.generic
//       CHECK:     %[[ONE:.+]] = arith.constant 1.0
//       CHECK:     arith.divf %[[ONE]]
func.func @reciprocal_f32(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.reciprocal %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that tcc.sigmoid feeds exp only -|x| and picks 1/(1+e) or e/(1+e).
// CHECK-LABEL: func.func @sigmoid_f32
//       CHECK:   linalg.generic
//       CHECK:     %[[A:.+]] = math.absf
//       CHECK:     %[[N:.+]] = arith.negf %[[A]]
//       CHECK:     math.exp %[[N]]
//       CHECK:     arith.cmpf oge
//       CHECK:     arith.select
func.func @sigmoid_f32(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.sigmoid %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that float tcc.relu is maximumf(x, 0), so relu(NaN) = NaN.
// CHECK-LABEL: func.func @relu_f32
//       CHECK:   linalg.generic
//       CHECK:     arith.maximumf
func.func @relu_f32(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.relu %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that signed tcc.relu is maxsi(x, 0).
// CHECK-LABEL: func.func @relu_i8
//       CHECK:   linalg.generic
//       CHECK:     arith.maxsi
func.func @relu_i8(%x: tensor<4xi8>) -> tensor<4xi8> {
  %0 = tcc.relu %x : tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

// Tests that tcc.softplus is max(x, 0) + log1p(exp(-|x|)).
// CHECK-LABEL: func.func @softplus_f32
//       CHECK:   linalg.generic
//       CHECK:     arith.maximumf
//       CHECK:     math.absf
//       CHECK:     math.exp
//       CHECK:     math.log1p
//       CHECK:     arith.addf
func.func @softplus_f32(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.softplus %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that exact tcc.gelu uses math.erf.
// CHECK-LABEL: func.func @gelu_exact
//       CHECK:   linalg.generic
//       CHECK:     math.erf
func.func @gelu_exact(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.gelu %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that approximate tcc.gelu uses math.tanh.
// CHECK-LABEL: func.func @gelu_tanh
//       CHECK:   linalg.generic
//       CHECK:     math.tanh
func.func @gelu_tanh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.gelu %x {approximate = true} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests tcc.leaky_relu: x >= 0 ? x : alpha * x.
// CHECK-LABEL: func.func @leaky_relu
//       CHECK:   linalg.generic
//       CHECK:     %[[ALPHA:.+]] = arith.constant 1.000000e-01
//       CHECK:     arith.mulf %{{.*}}, %[[ALPHA]]
//       CHECK:     arith.cmpf oge
//       CHECK:     arith.select
func.func @leaky_relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.leaky_relu %x {alpha = 0.1 : f64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that tcc.elu uses expm1 of min(x, 0).
// CHECK-LABEL: func.func @elu
//       CHECK:   linalg.generic
//       CHECK:     arith.minimumf
//       CHECK:     math.expm1
//       CHECK:     arith.cmpf ogt
//       CHECK:     arith.select
func.func @elu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.elu %x {alpha = 1.0 : f64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that float tcc.clamp keeps NaN (maximumf / minimumf).
// CHECK-LABEL: func.func @clamp_f32
//       CHECK:   linalg.generic
//       CHECK:     arith.maximumf
//       CHECK:     arith.minimumf
func.func @clamp_f32(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tcc.clamp %x {min = -1.0 : f64, max = 6.0 : f64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that integer tcc.clamp rounds the bounds inward (-6.5 -> -6) and drops a
// bound outside the type's range (300 for i8).
// CHECK-LABEL: func.func @clamp_i8
//       CHECK:   linalg.generic
//       CHECK:     %[[LO:.+]] = arith.constant -6 : i8
//       CHECK:     arith.maxsi %{{.*}}, %[[LO]]
//   CHECK-NOT:   arith.minsi
func.func @clamp_i8(%x: tensor<4xi8>) -> tensor<4xi8> {
  %0 = tcc.clamp %x {min = -6.5 : f64, max = 300.0 : f64} : tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

// Tests that a float to signed cast truncates (arith.fptosi).
// CHECK-LABEL: func.func @cast_f32_i32
//       CHECK:   linalg.generic
//       CHECK:     arith.fptosi
func.func @cast_f32_i32(%x: tensor<4xf32>) -> tensor<4xi32> {
  %0 = tcc.cast %x : tensor<4xf32> to tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Tests that a float to unsigned cast uses arith.fptoui.
// CHECK-LABEL: func.func @cast_f32_ui8
//       CHECK:   linalg.generic
//       CHECK:     arith.fptoui {{.*}} : f32 to i8
func.func @cast_f32_ui8(%x: tensor<4xf32>) -> tensor<4xui8> {
  %0 = tcc.cast %x : tensor<4xf32> to tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// Tests that an unsigned to float cast uses arith.uitofp.
// CHECK-LABEL: func.func @cast_ui8_f32
//       CHECK:   linalg.generic
//       CHECK:     arith.uitofp {{.*}} : i8 to f32
func.func @cast_ui8_f32(%x: tensor<4xui8>) -> tensor<4xf32> {
  %0 = tcc.cast %x : tensor<4xui8> to tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that a signed to float cast uses arith.sitofp.
// CHECK-LABEL: func.func @cast_i32_f32
//       CHECK:   linalg.generic
//       CHECK:     arith.sitofp
func.func @cast_i32_f32(%x: tensor<4xi32>) -> tensor<4xf32> {
  %0 = tcc.cast %x : tensor<4xi32> to tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that true becomes 1.0, not -1.0 (arith.uitofp).
// CHECK-LABEL: func.func @cast_i1_f32
//       CHECK:   linalg.generic
//       CHECK:     arith.uitofp {{.*}} : i1 to f32
func.func @cast_i1_f32(%x: tensor<4xi1>) -> tensor<4xf32> {
  %0 = tcc.cast %x : tensor<4xi1> to tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that a signed widening cast sign-extends.
// CHECK-LABEL: func.func @cast_i8_i32
//       CHECK:   linalg.generic
//       CHECK:     arith.extsi
func.func @cast_i8_i32(%x: tensor<4xi8>) -> tensor<4xi32> {
  %0 = tcc.cast %x : tensor<4xi8> to tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Tests that an unsigned widening cast zero-extends.
// CHECK-LABEL: func.func @cast_ui8_i32
//       CHECK:   linalg.generic
//       CHECK:     arith.extui
func.func @cast_ui8_i32(%x: tensor<4xui8>) -> tensor<4xi32> {
  %0 = tcc.cast %x : tensor<4xui8> to tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Tests that a narrowing cast truncates.
// CHECK-LABEL: func.func @cast_i32_i8
//       CHECK:   linalg.generic
//       CHECK:     arith.trunci
func.func @cast_i32_i8(%x: tensor<4xi32>) -> tensor<4xi8> {
  %0 = tcc.cast %x : tensor<4xi32> to tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

// Tests that a float to bool cast is x != 0 (NaN is true).
// CHECK-LABEL: func.func @cast_f32_i1
//       CHECK:   linalg.generic
//       CHECK:     arith.cmpf une
func.func @cast_f32_i1(%x: tensor<4xf32>) -> tensor<4xi1> {
  %0 = tcc.cast %x : tensor<4xf32> to tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// Tests that an integer to bool cast is x != 0.
// CHECK-LABEL: func.func @cast_i32_i1
//       CHECK:   linalg.generic
//       CHECK:     arith.cmpi ne
func.func @cast_i32_i1(%x: tensor<4xi32>) -> tensor<4xi1> {
  %0 = tcc.cast %x : tensor<4xi32> to tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// Tests that f32 to f16 is arith.truncf.
// CHECK-LABEL: func.func @cast_f32_f16
//       CHECK:   linalg.generic
//       CHECK:     arith.truncf
func.func @cast_f32_f16(%x: tensor<4xf32>) -> tensor<4xf16> {
  %0 = tcc.cast %x : tensor<4xf32> to tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// Tests that f16 to bf16 goes through f32.
// CHECK-LABEL: func.func @cast_f16_bf16
//       CHECK:   linalg.generic
//       CHECK:     arith.extf {{.*}} : f16 to f32
//       CHECK:     arith.truncf {{.*}} : f32 to bf16
func.func @cast_f16_bf16(%x: tensor<4xf16>) -> tensor<4xbf16> {
  %0 = tcc.cast %x : tensor<4xf16> to tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

