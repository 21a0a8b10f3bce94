// RUN: tcc-opt --mlir-disable-threading --pass-pipeline='builtin.module(func.func(tcc-fuse-elementwise{report=true}))' %s -o /dev/null 2>&1 | FileCheck %s
// RUN: tcc-opt --pass-pipeline='builtin.module(func.func(tcc-fuse-elementwise))' %s | FileCheck %s --check-prefix=IR

// The cost interface (KernelCostOpInterface, attached to linalg's ops) in
// the fusion report: per function the kernels and the bytes they move
// before and after fusion; per kernel its weighted cost per point and the
// bytes it moves against the minimum (its operands' bytes).

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
#row = affine_map<(d0, d1) -> (d1)>

// A cheap producer (an add of a broadcast bias: cost 1 per point) with
// three consumers is recomputed in each: by bytes, 3 x (4 KiB + 128 B)
// read < 4 KiB + 128 B + (1 + 3) x 4 KiB written and read back. The exp,
// tanh and division (cost 16 + 1, 16 + 1, 8 + 1) then merge as siblings.
// CHECK: fusion @bias_three_users: 4 kernels -> 1, bytes moved 32.1 KiB -> 16.1 KiB
// CHECK-NEXT: kernel 0 (linalg.generic, 2 loops, 3 results, cost 43.00 per point, moves 16.1 KiB of minimum 16.1 KiB)
// IR-LABEL: func.func @bias_three_users
// IR: linalg.generic
// IR-NOT: linalg.generic
// IR-LABEL: func.func @transposed_read
func.func @bias_three_users(%a: tensor<32x32xf32>, %b: tensor<32xf32>)
    -> (tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) {
  %e = tensor.empty() : tensor<32x32xf32>
  %x = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<32x32xf32>, tensor<32xf32>) outs(%e : tensor<32x32xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %t = arith.addf %v, %w : f32
    linalg.yield %t : f32
  } -> tensor<32x32xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<32x32xf32>) outs(%e : tensor<32x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.exp %v : f32
    linalg.yield %t : f32
  } -> tensor<32x32xf32>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<32x32xf32>) outs(%e : tensor<32x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.tanh %v : f32
    linalg.yield %t : f32
  } -> tensor<32x32xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<32x32xf32>) outs(%e : tensor<32x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = arith.divf %v, %v : f32
    linalg.yield %t : f32
  } -> tensor<32x32xf32>
  return %p, %q, %r : tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>
}

// A kernel that walks a 2 MiB operand across its innermost dimension (a
// transposed read) moves a cache line per element: 16x its bytes. It is
// reported even though nothing fused into it.
// CHECK: fusion @transposed_read: 1 kernels -> 1, bytes moved 34.00 MiB -> 34.00 MiB
// CHECK-NEXT: kernel 0 (linalg.generic, 2 loops, 1 results, cost 1.00 per point, moves 34.00 MiB of minimum 4.00 MiB)
func.func @transposed_read(%a: tensor<1024x512xf32>) -> tensor<512x1024xf32> {
  %e = tensor.empty() : tensor<512x1024xf32>
  %t = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<1024x512xf32>) outs(%e : tensor<512x1024xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<512x1024xf32>
  return %t : tensor<512x1024xf32>
}
