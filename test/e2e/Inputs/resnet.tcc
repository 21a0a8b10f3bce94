# A small ResNet for the rematerialization checks: a 3x3 stem, N basic blocks
# (conv-bn-relu-conv-bn plus the identity, then relu) at width C, a 2x2 average
# pool and a linear head over 10 classes, on 3 x S x S images given as rows.

const C = 16
const S = 16
const N = 3
const F = 768 # 3 * S * S

fn conv3(x, c_in, c_out) {
  param weight: [c_out, c_in, 3, 3] = kaiming_uniform(a = sqrt(5))
  return conv(x, weight, padding = 1)
}

fn bn(x, c) {
  param weight: [c] = ones
  param bias: [c] = zeros
  state running_mean: [c] = zeros
  state running_var: [c] = ones
  return batch_norm(x, weight, bias, running_mean, running_var, momentum = 0.1)
}

fn block(x, c) {
  let h = relu(bn(conv3(x, c, c) as conv1, c) as bn1)
  h = bn(conv3(h, c, c) as conv2, c) as bn2
  return relu(h + x)
}

model resnet(x: f32[B, F]) {
  let img = reshape(x, [B, 3, S, S])
  let h = relu(bn(conv3(img, 3, C) as stem, C) as stem_bn)
  for i in 0..N {
    h = block(h, C) as blocks[i]
  }
  h = avg_pool(h, 2)
  param weight: [10, C * S * S / 4] = kaiming_uniform(a = sqrt(5))
  param bias: [10] = zeros
  output logits = flatten(h) @ weight.T + bias
}

train {
  loss = cross_entropy
  optimizer = sgd
  momentum = 0.9
}
