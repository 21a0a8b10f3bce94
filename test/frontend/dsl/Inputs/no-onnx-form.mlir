// A tcc dialect function with an op that has no ONNX form (tcc.resize is
// not written by tcc export), located as the DSL locates its ops.
module @upsample {
  func.func @forward(%arg0: tensor<1x1x2x2xf32> {tcc.input = "x"} loc("model.tcc":1:12),
                     %arg1: tensor<2xf32> {tcc.param = "b"} loc("model.tcc":2:3))
      -> (tensor<1x1x4x4xf32> {tcc.output = "y"}) {
    %0 = tcc.resize %arg0 {scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : tensor<1x1x2x2xf32> -> tensor<1x1x4x4xf32> loc("model.tcc":4:7)
    return %0 : tensor<1x1x4x4xf32>
  }
}
