# The GPU mapping's kernel kinds on awkward sizes, for the emulated CUDA
# device's tests (test/emulation/kernels.test): rows of N elements (layer
# norm, softmax and a row sum: block reductions with warp shuffles and
# shared memory; --dim N=1, 31, 33, 1025), elementwise ops over B x N
# points (thread per point, and 4 points per thread where N is a multiple
# of 4), a matmul (a library call) and, through the MSE loss over all
# B x N x 2 outputs, a reduction of every element (split over blocks when
# it is long enough).
const N = 31

fn norm(x, d) {
  param weight: [d] = uniform(0.5, 1.5)
  param bias: [d] = uniform(-0.5, 0.5)
  return layer_norm(x, weight, bias, eps = 1e-5)
}

model rows(x: f32[B, N]) {
  param scale: [N] = uniform(0.5, 1.5)
  param mix: [N, N] = uniform(-0.3, 0.3)
  let h = norm(tanh(x * scale) @ mix, N) as ln
  let p = softmax(h * 2.0, axis = -1)
  let s = sum(h * h, axes = -1, keepdims = true)
  output y = concat([p + s / N, sigmoid(h) - p], axis = 1)
}

train {
  loss = mse
  optimizer = sgd
}
