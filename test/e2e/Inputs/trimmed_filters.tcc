# A small CNN whose last two convolutions have filter taps that only ever
# meet padding: a stride-2 3x3 convolution from a 2x2 map to a 1x1 one (its
# taps [1:3, 1:3] meet the input) and a 3x3 convolution on the 1x1 map (its
# centre tap). The compiler trims both filters (DropPaddingOnlyTaps);
# test/e2e/precision-trimmed-copies.test checks their 16-bit copies. On
# 3 x 4 x 4 images given as rows.

fn conv2d(x, c_in, c_out, s) {
  param weight: [c_out, c_in, 3, 3] = kaiming_uniform(a = sqrt(5))
  return conv(x, weight, stride = s, padding = 1)
}

model cnn(x: f32[B, 48]) {
  let img = reshape(x, [B, 3, 4, 4])
  let h = relu(conv2d(img, 3, 32, 1) as stem)
  h = avg_pool(h, 2)
  h = relu(conv2d(h, 32, 64, 2) as down)
  h = relu(conv2d(h, 64, 64, 1) as mid)
  param weight: [10, 64] = kaiming_uniform(a = sqrt(5))
  param bias: [10] = zeros
  output logits = flatten(h) @ weight.T + bias
}

train {
  loss = cross_entropy
  optimizer = sgd
}
