// RUN: tcc-opt --split-input-file --tcc-lower-to-linalg %s | FileCheck %s
// RUN: tcc-opt --split-input-file --tcc-lower-to-linalg %s | FileCheck %s --check-prefix=NOTCC

// Softmax, the norms and nll_loss become reductions followed by elementwise
// generics that read the statistics through projected maps; dropout outside
// training is the identity. No tcc op survives anywhere:
// NOTCC-NOT: tcc.

// Tests that softmax on the middle axis subtracts the maximum over that axis
// before exp, then divides by the sum of the exponentials.
// CHECK-DAG:   #[[ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG:   #[[ROW:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @softmax_mid
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x3x4xf32>)
//       CHECK:   %[[NINF:.+]] = arith.constant 0xFF800000 : f32
//       CHECK:   %[[MAX:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]]], iterator_types = ["parallel", "reduction", "parallel"]}
//  CHECK-SAME:     ins(%[[X]] : tensor<2x3x4xf32>)
//       CHECK:     arith.maximumf
//       CHECK:   %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ROW]]], iterator_types = ["parallel", "reduction", "parallel"]}
//  CHECK-SAME:     ins(%[[X]], %[[MAX]] : tensor<2x3x4xf32>, tensor<2x4xf32>)
//       CHECK:     %[[D:.+]] = arith.subf
//       CHECK:     %[[E:.+]] = math.exp %[[D]]
//       CHECK:     arith.addf %{{.+}}, %[[E]]
//       CHECK:   linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
//  CHECK-SAME:     ins(%[[X]], %[[MAX]], %[[SUM]] : tensor<2x3x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
//       CHECK:     math.exp
//       CHECK:     arith.divf
func.func @softmax_mid(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = tcc.softmax %x {axis = 1 : i64} : tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// Tests that log_softmax is (x - max) - log(sum).
// CHECK-LABEL: func.func @log_softmax
//       CHECK:   linalg.generic
//       CHECK:     arith.maximumf
//       CHECK:   linalg.generic
//       CHECK:     math.exp
//       CHECK:   linalg.generic
//       CHECK:     %[[SH:.+]] = arith.subf
//       CHECK:     %[[L:.+]] = math.log
//       CHECK:     arith.subf %[[SH]], %[[L]]
func.func @log_softmax(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = tcc.log_softmax %x {axis = 1 : i64} : tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// Tests that layer_norm computes the mean, then the variance of (x - mean)
// in a second pass, then 1 / sqrt(var + eps), and returns both statistics
// with the normalized dimension kept as 1.
// CHECK-DAG:   #[[ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG:   #[[STAT:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG:   #[[PARAM:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @layer_norm
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x3x4xf32>, %[[G:.+]]: tensor<4xf32>, %[[B:.+]]: tensor<4xf32>)
//       CHECK:   %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[STAT]]], iterator_types = ["parallel", "parallel", "reduction"]}
//       CHECK:   %[[MEAN:.+]] = linalg.generic
//  CHECK-SAME:     ins(%[[SUM]] : tensor<2x3xf32>)
//       CHECK:     arith.divf %{{.+}}, %cst
//       CHECK:   %[[SQ:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[STAT]], #[[STAT]]], iterator_types = ["parallel", "parallel", "reduction"]}
//  CHECK-SAME:     ins(%[[X]], %[[MEAN]] : tensor<2x3x4xf32>, tensor<2x3xf32>)
//       CHECK:     %[[C:.+]] = arith.subf
//       CHECK:     arith.mulf %[[C]], %[[C]]
//       CHECK:   %[[VAR:.+]] = linalg.generic
//  CHECK-SAME:     ins(%[[SQ]] : tensor<2x3xf32>)
//       CHECK:   %[[RSTD:.+]] = linalg.generic
//  CHECK-SAME:     ins(%[[VAR]] : tensor<2x3xf32>)
//       CHECK:     %[[EPS:.+]] = arith.constant 9.99999974E-6 : f32
//       CHECK:     arith.addf %{{.+}}, %[[EPS]]
//       CHECK:     math.sqrt
//       CHECK:     arith.divf
//       CHECK:   %[[Y:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[STAT]], #[[STAT]], #[[PARAM]], #[[PARAM]], #[[ID]]]
//  CHECK-SAME:     ins(%[[X]], %[[MEAN]], %[[RSTD]], %[[G]], %[[B]] :
//       CHECK:   %[[M:.+]] = tensor.expand_shape %[[MEAN]] {{\[\[}}0], [1, 2]] output_shape [2, 3, 1]
//       CHECK:   %[[R:.+]] = tensor.expand_shape %[[RSTD]] {{\[\[}}0], [1, 2]] output_shape [2, 3, 1]
//       CHECK:   return %[[Y]], %[[M]], %[[R]]
func.func @layer_norm(%x: tensor<2x3x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>) {
  %0, %1, %2 = tcc.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 1.0e-05 : f64} : tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x3x4xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>
  return %0, %1, %2 : tensor<2x3x4xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>
}

// -----

// Tests that layer_norm without a bias only scales.
// CHECK-LABEL: func.func @layer_norm_no_bias
//       CHECK:   ^bb0(%{{.+}}: f32, %{{.+}}: f32, %{{.+}}: f32, %{{.+}}: f32, %{{.+}}: f32):
//       CHECK:     arith.subf
//       CHECK:     arith.mulf
//       CHECK:     %[[S:.+]] = arith.mulf
//   CHECK-NEXT:    linalg.yield %[[S]]
func.func @layer_norm_no_bias(%x: tensor<2x4xf32>, %g: tensor<4xf32>) -> tensor<2x4xf32> {
  %0, %1, %2 = tcc.layer_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-05 : f64} : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x1xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Tests that batch_norm_inference reads the per-channel parameters with the
// map (n, c, h) -> (c).
// CHECK-DAG:   #[[CH:.+]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @batch_norm_inference
//       CHECK:   linalg.generic {indexing_maps = [#{{.+}}, #[[CH]], #[[CH]], #[[CH]], #[[CH]], #{{.+}}]
//       CHECK:     arith.subf
//       CHECK:     math.sqrt
//       CHECK:     arith.divf
func.func @batch_norm_inference(%x: tensor<2x3x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<2x3x4xf32> {
  %0 = tcc.batch_norm_inference %x, %s, %b, %m, %v {epsilon = 1.0e-05 : f64} : tensor<2x3x4xf32>, tensor<3xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// Tests that batch_norm_training reduces every dimension but the channel
// (two passes, accumulating the f32 input in f64 as PyTorch's CPU kernels)
// and returns the batch mean and biased variance in f32.
// CHECK-LABEL: func.func @batch_norm_training
//       CHECK:   %[[SUM:.+]] = linalg.generic {{.+}}iterator_types = ["reduction", "parallel", "reduction", "reduction"]
//  CHECK-SAME:     outs(%{{.+}} : tensor<3xf64>)
//       CHECK:     arith.extf %{{.+}} : f32 to f64
//       CHECK:   %[[MEAN64:.+]] = linalg.generic {{.+}}ins(%[[SUM]] : tensor<3xf64>)
//       CHECK:     %[[N:.+]] = arith.constant 1.600000e+01 : f64
//       CHECK:     arith.divf %{{.+}}, %[[N]]
//       CHECK:   %[[SQ:.+]] = linalg.generic {{.+}}iterator_types = ["reduction", "parallel", "reduction", "reduction"]
//  CHECK-SAME:     ins(%{{.+}}, %[[MEAN64]] : tensor<2x3x2x4xf32>, tensor<3xf64>)
//       CHECK:   %[[VAR64:.+]] = linalg.generic {{.+}}ins(%[[SQ]] : tensor<3xf64>)
//       CHECK:   %[[MEAN:.+]] = linalg.generic {{.+}}ins(%[[MEAN64]] : tensor<3xf64>) outs(%{{.+}} : tensor<3xf32>)
//       CHECK:     arith.truncf
//       CHECK:   %[[VAR:.+]] = linalg.generic {{.+}}ins(%[[VAR64]] : tensor<3xf64>) outs(%{{.+}} : tensor<3xf32>)
//       CHECK:   %[[RSTD:.+]] = linalg.generic {{.+}}ins(%[[VAR]] : tensor<3xf32>)
//       CHECK:   %[[Y:.+]] = linalg.generic
//  CHECK-SAME:     ins(%{{.+}}, %[[MEAN]], %[[RSTD]], %{{.+}}, %{{.+}} :
//       CHECK:   return %[[Y]], %[[MEAN]], %[[VAR]]
func.func @batch_norm_training(%x: tensor<2x3x2x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<2x3x2x4xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0, %1, %2 = tcc.batch_norm_training %x, %s, %b {epsilon = 1.0e-05 : f64} : tensor<2x3x2x4xf32>, tensor<3xf32>
  return %0, %1, %2 : tensor<2x3x2x4xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Tests that a mean nll_loss reduces (loss, weight) pairs over the targets
// into two scalars, zeroing ignored positions with a select (never -x * 0),
// and divides the loss sum by the weight sum.
// CHECK-LABEL: func.func @nll_loss_mean
//  CHECK-SAME:   (%[[X:.+]]: tensor<3x4xf32>, %[[T:.+]]: tensor<3xi64>, %[[W:.+]]: tensor<4xf32>)
//       CHECK:   %[[S:.+]]:2 = linalg.generic {{.+}}iterator_types = ["reduction"]}
//  CHECK-SAME:     ins(%[[T]] : tensor<3xi64>) outs(%{{.+}}, %{{.+}} : tensor<f32>, tensor<f32>)
//       CHECK:   ^bb0(%[[TV:.+]]: i64, %[[LS:.+]]: f32, %[[WS:.+]]: f32):
//       CHECK:     %[[CLS:.+]] = arith.minsi
//       CHECK:     %[[N:.+]] = linalg.index 0 : index
//       CHECK:     %[[LOGP:.+]] = tensor.extract %[[X]][%[[N]], %[[CLS]]] : tensor<3x4xf32>
//       CHECK:     %[[WT:.+]] = tensor.extract %[[W]][%[[CLS]]] : tensor<4xf32>
//       CHECK:     %[[PROD:.+]] = arith.mulf %[[LOGP]], %[[WT]]
//       CHECK:     %[[LOSS:.+]] = arith.negf %[[PROD]]
//       CHECK:     %[[IGN:.+]] = arith.cmpi eq, %[[TV]], %c-100_i64 : i64
//       CHECK:     %[[L:.+]] = arith.select %[[IGN]], %{{.+}}, %[[LOSS]]
//       CHECK:     %[[WW:.+]] = arith.select %[[IGN]], %{{.+}}, %[[WT]]
//       CHECK:     %[[L2:.+]] = arith.addf %[[LS]], %[[L]]
//       CHECK:     %[[W2:.+]] = arith.addf %[[WS]], %[[WW]]
//       CHECK:     linalg.yield %[[L2]], %[[W2]]
//       CHECK:   linalg.generic {{.+}}iterator_types = []}
//  CHECK-SAME:     ins(%[[S]]#0, %[[S]]#1 : tensor<f32>, tensor<f32>)
//       CHECK:     arith.divf
func.func @nll_loss_mean(%x: tensor<3x4xf32>, %t: tensor<3xi64>, %w: tensor<4xf32>) -> tensor<f32> {
  %0 = tcc.nll_loss %x, %t, %w {reduction = 2 : i32, ignore_index = -100 : i64} : (tensor<3x4xf32>, tensor<3xi64>, tensor<4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Tests that an unreduced nll_loss with a spatial dimension is a parallel
// generic over the target shape, weight 1 without a weight operand.
// CHECK-LABEL: func.func @nll_loss_none
//       CHECK:   linalg.generic {{.+}}iterator_types = ["parallel", "parallel"]}
//  CHECK-SAME:     ins(%{{.+}} : tensor<3x2xi32>) outs(%{{.+}} : tensor<3x2xf32>)
//       CHECK:     %[[N:.+]] = linalg.index 0 : index
//       CHECK:     %[[D:.+]] = linalg.index 1 : index
//       CHECK:     tensor.extract %{{.+}}[%[[N]], %{{.+}}, %[[D]]] : tensor<3x4x2xf32>
//       CHECK:     arith.constant 1.000000e+00 : f32
//       CHECK:     arith.negf
func.func @nll_loss_none(%x: tensor<3x4x2xf32>, %t: tensor<3x2xi32>) -> tensor<3x2xf32> {
  %0 = tcc.nll_loss %x, %t {reduction = 0 : i32} : (tensor<3x4x2xf32>, tensor<3x2xi32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// Tests that dropout outside training returns its input and an all-true mask.
// CHECK-LABEL: func.func @dropout
//  CHECK-SAME:   (%[[X:.+]]: tensor<2x3xf32>)
//       CHECK:   %[[M:.+]] = arith.constant dense<true> : tensor<2x3xi1>
//       CHECK:   return %[[X]], %[[M]]
func.func @dropout(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi1>) {
  %0, %1 = tcc.dropout %x {ratio = 0.5 : f64, stream = 3 : i64} : tensor<2x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xi1>
}

// -----

// Tests that tcc.random becomes one generic with no inputs that draws Philox
// words per element: a uniform scales the top 24 bits of the first word;
// without rng the key and the step counter are zero.
// CHECK-LABEL: func.func @random_uniform
//   CHECK-NOT:   tensor.extract
//       CHECK:   linalg.generic {{.*}} outs(%{{.+}} : tensor<2x3xf32>)
//       CHECK:     arith.mului_extended
//       CHECK:     arith.shrui
//       CHECK:     arith.uitofp
//   CHECK-NOT:     math.log
//       CHECK:     linalg.yield
func.func @random_uniform() -> tensor<2x3xf32> {
  %0 = tcc.random {a = -1.0 : f64, b = 1.0 : f64, distribution = 0 : i32, stream = 2 : i64} : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that a normal tcc.random reads its key and counter from rng as two
// 0-d inputs of its generic (broadcast to every point: no scalar extracted
// above it, which a GPU kernel could not take) and applies Box-Muller in f32
// (log, sqrt, cos), then widens to the result type.
// CHECK-LABEL: func.func @random_normal
//  CHECK-SAME:   (%[[RNG:.+]]: tensor<2xi64>)
//   CHECK-NOT:   tensor.extract %
//       CHECK:   %[[SEED:.+]] = tensor.extract_slice %[[RNG]][0] [1] [1] : tensor<2xi64> to tensor<i64>
//       CHECK:   %[[COUNTER:.+]] = tensor.extract_slice %[[RNG]][1] [1] [1] : tensor<2xi64> to tensor<i64>
//       CHECK:   linalg.generic {indexing_maps = [#[[SCALAR:.+]], #[[SCALAR]], #{{.+}}], {{.*}} ins(%[[SEED]], %[[COUNTER]] : tensor<i64>, tensor<i64>)
//   CHECK-NOT:     tensor.extract
//       CHECK:     math.log
//       CHECK:     math.sqrt
//       CHECK:     math.cos
//       CHECK:     arith.extf {{.*}} : f32 to f64
func.func @random_normal(%rng: tensor<2xi64>) -> tensor<4xf64> {
  %0 = tcc.random rng(%rng : tensor<2xi64>) {a = 0.0 : f64, b = 2.0 : f64, distribution = 1 : i32, stream = 1 : i64} : tensor<4xf64>
  return %0 : tensor<4xf64>
}
