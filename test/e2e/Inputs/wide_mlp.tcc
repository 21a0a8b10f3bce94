# A two-layer MLP 256 -> 256 -> 10 (test/e2e/blas.test): at --batch=1024 the
# first layer's weight gradient is a 256 x 256 A^T B over 1024 rows, a call
# that the runtime sends to BLAS.

model wide_mlp(x: f32[B, 256]) {
  param w1: [256, 256] = kaiming_uniform(a = sqrt(5))
  param b1: [256] = zeros
  let h = relu(x @ w1.T + b1)
  param w2: [10, 256] = kaiming_uniform(a = sqrt(5))
  param b2: [10] = zeros
  output logits = h @ w2.T + b2
}
