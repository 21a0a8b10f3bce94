# Convolutions whose gradients are oneDNN's backward-data and backward-weights
# calls (test/e2e/conv-gradients.test): a strided, padded stem; a depthwise
# 3x3 with stride 2; a grouped 1x1 (2 groups); a 2x2 kernel with stride 3,
# which leaves input rows no window reads; a linear head over 10 classes, on
# 3 x S x S images given as rows.

const S = 12
const F = 432 # 3 * S * S

model convs(x: f32[B, F]) {
  let img = reshape(x, [B, 3, S, S])
  param stem: [8, 3, 3, 3] = kaiming_uniform(a = sqrt(5))
  let h = relu(conv(img, stem, stride = 2, padding = 1))
  param depthwise: [8, 1, 3, 3] = kaiming_uniform(a = sqrt(5))
  h = relu(conv(h, depthwise, stride = 2, padding = 1, groups = 8))
  param grouped: [12, 4, 1, 1] = kaiming_uniform(a = sqrt(5))
  h = relu(conv(h, grouped, groups = 2))
  param wide: [6, 12, 2, 2] = kaiming_uniform(a = sqrt(5))
  h = conv(h, wide, stride = 3)
  param weight: [10, 6] = kaiming_uniform(a = sqrt(5))
  param bias: [10] = zeros
  output logits = flatten(h) @ weight.T + bias
}
