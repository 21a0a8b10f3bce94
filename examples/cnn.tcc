# A CNN for Fashion-MNIST: conv 3x3 (8 channels) -> batch norm -> ReLU ->
# 2x2 max pool -> conv 3x3 (16) -> ReLU -> 2x2 max pool -> linear 10.
#
#   tcc examples/cnn.tcc --batch=64 -o cnn.so
#   tcc-run cnn.so --data fashion/train --steps 937 --lr 0.05

fn conv2d(x, c_in, c_out, k) {
  param weight: [c_out, c_in, k, k] = kaiming_uniform(a = sqrt(5))
  param bias: [c_out] = uniform(-1 / sqrt(c_in * k * k), 1 / sqrt(c_in * k * k))
  return conv(x, weight, bias, padding = (k - 1) / 2)
}

# Batch norm with PyTorch's defaults; the running statistics are state,
# updated by the training step and used by inference.
fn batchnorm(x, c) {
  param weight: [c] = ones
  param bias: [c] = zeros
  state running_mean: [c] = zeros
  state running_var: [c] = ones
  return batch_norm(x, weight, bias, running_mean, running_var, momentum = 0.1)
}

fn linear(x, n_in, n_out) {
  param weight: [n_out, n_in] = kaiming_uniform(a = sqrt(5))
  param bias: [n_out] = uniform(-1 / sqrt(n_in), 1 / sqrt(n_in))
  return x @ weight.T + bias
}

model cnn(x: f32[B, 784]) {
  let img = reshape(x, [B, 1, 28, 28])
  let h = relu(batchnorm(conv2d(img, 1, 8, 3) as conv1, 8) as bn1)
  h = max_pool(h, 2)
  h = max_pool(relu(conv2d(h, 8, 16, 3) as conv2), 2)
  output logits = linear(flatten(h), 16 * 7 * 7, 10) as fc
}

train {
  loss = cross_entropy
  optimizer = sgd
  momentum = 0.9
}
