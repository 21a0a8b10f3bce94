# A small CNN whose filters oneDNN reads in blocked layouts without padding
# (channels in multiples of 64, as its 16-bit kernels block them): a 3x3
# stem, a 3x3 convolution, batch norm, a 1x1 convolution and a linear head,
# on 3 x 8 x 8 images given as rows. test/e2e/filter-layouts.test keeps the
# filters in those layouts across steps.

fn conv2d(x, c_in, c_out, k) {
  param weight: [c_out, c_in, k, k] = kaiming_uniform(a = sqrt(5))
  return conv(x, weight, padding = (k - 1) / 2)
}

fn bn(x, c) {
  param weight: [c] = ones
  param bias: [c] = zeros
  state running_mean: [c] = zeros
  state running_var: [c] = ones
  return batch_norm(x, weight, bias, running_mean, running_var, momentum = 0.1)
}

model cnn(x: f32[B, 192]) {
  let img = reshape(x, [B, 3, 8, 8])
  let h = relu(conv2d(img, 3, 64, 3) as stem)
  h = relu(bn(conv2d(h, 64, 64, 3) as conv1, 64) as bn1)
  h = relu(conv2d(h, 64, 128, 1) as conv2)
  h = avg_pool(h, 8)
  param weight: [10, 128] = kaiming_uniform(a = sqrt(5))
  param bias: [10] = zeros
  output logits = flatten(h) @ weight.T + bias
}

train {
  loss = cross_entropy
  optimizer = adamw
}
