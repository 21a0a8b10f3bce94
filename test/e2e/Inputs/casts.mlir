// f32 -> bf16 -> f32 and f32 -> f16 -> f32 round trips, for
// test/e2e/precision-casts.test: what the compiled step's class-boundary
// casts compute, through the whole CPU pipeline.
func.func @forward(%x: tensor<4096xf32> {tcc.input = "x"})
    -> (tensor<4096xf32> {tcc.output = "bf16"}, tensor<4096xf32> {tcc.output = "f16"}) {
  %b = tcc.cast %x : tensor<4096xf32> to tensor<4096xbf16>
  %bx = tcc.cast %b : tensor<4096xbf16> to tensor<4096xf32>
  %h = tcc.cast %x : tensor<4096xf32> to tensor<4096xf16>
  %hx = tcc.cast %h : tensor<4096xf16> to tensor<4096xf32>
  return %bx, %hx : tensor<4096xf32>, tensor<4096xf32>
}
