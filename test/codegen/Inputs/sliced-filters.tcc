# Convolutions 3x3 on 1x1 maps for the determinism test: each reads only the
# center tap of its filter (a strided view that the CPU library calls copy
# into a dense buffer), and with --remat=max the backward pass recomputes the
# forward convolutions, so each data gradient has two dense copies to read.

const C = 32
const N = 8

fn conv3(x, c) {
  param weight: [c, c, 3, 3] = kaiming_uniform(a = sqrt(5))
  return conv(x, weight, padding = 1)
}

model sliced_filters(x: f32[B, C]) {
  let h = reshape(x, [B, C, 1, 1])
  for i in 0..N {
    h = relu(conv3(h, C) as convs[i])
  }
  param weight: [10, C] = kaiming_uniform(a = sqrt(5))
  output logits = flatten(h) @ weight.T
}

train {
  loss = cross_entropy
  optimizer = sgd
  momentum = 0.9
}
