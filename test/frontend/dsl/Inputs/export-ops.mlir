// Ops of tcc export whose attribute conventions differ most from ONNX's,
// beyond those of the examples: a broadcast that both adds and repeats dimensions, slices with
// negative strides (one ending at element 0), pads, an empty-axes reduce
// (identity in tcc, everything in ONNX), reductions with axes as an input
// (ReduceSum) and as an attribute, tanh GELU, rsqrt, ne, clamp, cast,
// concat, cumsum, argmax, average pooling with padding.
module @ops {
  func.func @forward(%x: tensor<2x3x4xf32> {tcc.input = "x"}, %v: tensor<3x1xf32> {tcc.param = "v"})
      -> (tensor<2x3x4xf32> {tcc.output = "bcast"}, tensor<2x2x2xf32> {tcc.output = "sliced"},
          tensor<2x4x6xf32> {tcc.output = "padded"}, tensor<2x4xf32> {tcc.output = "sum"},
          tensor<2x1x1xf32> {tcc.output = "mean"}, tensor<2x3x4xf32> {tcc.output = "math"},
          tensor<2x6x4xf32> {tcc.output = "cat"}, tensor<2x1x4xi64> {tcc.output = "amax"},
          tensor<2x3x2xf32> {tcc.output = "pool"}, tensor<2x3x4xf32> {tcc.output = "same"}) {
    %b = tcc.broadcast_in_dim %v, dims = [1, 2] : tensor<3x1xf32> -> tensor<2x3x4xf32>
    %s = tcc.slice %x, start = [1, 2, 3], stride = [-1, -2, -2] : tensor<2x3x4xf32> -> tensor<2x2x2xf32>
    %t = tcc.transpose %x, perm = [0, 2, 1] : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
    %p = tcc.pad %t, low = [0, 0, 1], high = [0, 0, 2] {mode = 1 : i32} : tensor<2x4x3xf32> -> tensor<2x4x6xf32>
    %r = tcc.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : tensor<2x3x4xf32> -> tensor<2x4xf32>
    %m = tcc.reduce_mean %x {axes = array<i64: 1, 2>, keepdims = true} : tensor<2x3x4xf32> -> tensor<2x1x1xf32>
    %id = tcc.reduce_max %x {axes = array<i64>, keepdims = true} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
    %g = tcc.gelu %x {approximate = true} : tensor<2x3x4xf32>
    %a = tcc.abs %x : tensor<2x3x4xf32>
    %q = tcc.rsqrt %a : tensor<2x3x4xf32>
    %c = tcc.clamp %q {min = 0.0 : f64, max = 2.0 : f64} : tensor<2x3x4xf32>
    %ne = tcc.compare ne, %x, %g : tensor<2x3x4xf32>
    %f = tcc.cast %ne : tensor<2x3x4xi1> to tensor<2x3x4xf32>
    %sum1 = tcc.add %c, %f : tensor<2x3x4xf32>
    %math = tcc.add %sum1, %g : tensor<2x3x4xf32>
    %cs = tcc.cumsum %x {axis = 1 : i64, exclusive = true, reverse = true} : tensor<2x3x4xf32>
    %cat = tcc.concat %cs, %b {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x6x4xf32>
    %am = tcc.argmax %x {axis = 1 : i64, keepdims = true} : tensor<2x3x4xf32> -> tensor<2x1x4xi64>
    %pool = tcc.avg_pool %x {kernel = array<i64: 2>, strides = array<i64: 2>, dilations = array<i64: 1>, pad_low = array<i64: 1>, pad_high = array<i64: 0>, count_include_pad = false} : tensor<2x3x4xf32> -> tensor<2x3x2xf32>
    return %b, %s, %p, %r, %m, %math, %cat, %am, %pool, %id : tensor<2x3x4xf32>, tensor<2x2x2xf32>, tensor<2x4x6xf32>, tensor<2x4xf32>, tensor<2x1x1xf32>, tensor<2x3x4xf32>, tensor<2x6x4xf32>, tensor<2x1x4xi64>, tensor<2x3x2xf32>, tensor<2x3x4xf32>
  }
}
