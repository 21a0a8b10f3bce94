# An MLP for Fashion-MNIST (28x28 images flattened to 784 features, 10
# classes): 784 -> 128 -> ReLU -> 10, initialized as PyTorch's nn.Linear.
#
#   tcc examples/mlp.tcc --batch=64 -o mlp.so
#   tcc-run mlp.so --data fashion/train --steps 2811 --lr 0.1

const HIDDEN = 128

# y = x W^T + b, W and b uniform in +-1/sqrt(fan_in) (PyTorch's default).
fn linear(x, n_in, n_out) {
  param weight: [n_out, n_in] = kaiming_uniform(a = sqrt(5))
  param bias: [n_out] = uniform(-1 / sqrt(n_in), 1 / sqrt(n_in))
  return x @ weight.T + bias
}

model mlp(x: f32[B, 784]) {
  let h = relu(linear(x, 784, HIDDEN) as fc1)
  output logits = linear(h, HIDDEN, 10) as fc2
}

train {
  loss = cross_entropy
  optimizer = sgd
}
