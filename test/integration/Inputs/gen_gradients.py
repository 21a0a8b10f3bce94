#!/usr/bin/env python3
"""gen_gradients.py - writes test/integration/gradients.mlir, the float64
finite-difference checks of tcc's gradient rules (passes/training/autodiff/).

Each case is a tcc function of float64 parameters whose loss is
sum(op(params...) * W) for a fixed random W (so every output element
matters, with a different weight). `tcc-autodiff` builds its gradient
function; `main` evaluates that gradient and, for every element of every
parameter, the central difference (f(p + h) - f(p - h)) / 2h with h = 1e-6,
and prints per case whether the largest error |fd - grad| / max(1, |grad|)
stays below 1e-6 (measured errors are ~1e-9: truncation ~h^2, rounding
~eps/h). The oracle is the function itself in float64, not the rules: a
wrong rule cannot agree with it.

Inputs are seeded random values inside each op's smooth domain (positive
for log, sqrt and pow; away from the kinks of relu, abs, max and min by at
least 0.05, far more than h; max pooling inputs distinct and 0.04 apart).
Where the gradient is defined by convention only (max pooling ties: the
first maximum of a window wins), a case gives fixed inputs and weights and
the hand-computed expected gradient instead of the finite differences.

Regenerate (deterministic; standard library only):
    python3 test/integration/Inputs/gen_gradients.py
"""

import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, '..', 'gradients.mlir')
H = 1e-6
TOL = 1e-6


def ttype(shape):
    return 'tensor<%sxf64>' % 'x'.join(str(d) for d in shape) if shape else 'tensor<f64>'


def count(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def dense(values, shape):
    return 'dense<[%s]> : %s' % (', '.join('%.17e' % v for v in values), ttype([count(shape)]))


def away_from_zero(rng, lo, hi, gap=0.05):
    while True:
        v = rng.uniform(lo, hi)
        if abs(v) >= gap:
            return v


def distinct(n, gap=0.04):
    """A sampler of N distinct values at least GAP apart, in random order."""
    state = {}

    def sample(r):
        if not state.get('values'):
            grid = [2.0 * gap * (i - n / 2.0) for i in range(n)]
            r.shuffle(grid)
            state['values'] = [v + r.uniform(0.0, gap) for v in grid]
        return state['values'].pop()
    return sample


def fixed(values):
    """A sampler returning VALUES in order."""
    it = iter(values)
    return lambda r: next(it)


# name, [(arg shape, sampler)], body template producing %y, result shape.
# Body lines use %a0, %a1, ... for the parameters.
def cases():
    pos = lambda r: r.uniform(0.5, 2.0)
    sym = lambda r: r.uniform(-2.0, 2.0)
    nz = lambda r: away_from_zero(r, -2.0, 2.0)
    s23 = [2, 3]
    t23 = ttype(s23)
    unary = [
        ('neg', sym), ('abs', nz), ('exp', sym), ('log', pos), ('sqrt', pos), ('rsqrt', pos),
        ('reciprocal', pos), ('tanh', sym), ('sigmoid', sym), ('relu', nz), ('erf', sym),
        ('sin', sym), ('cos', sym),
    ]
    for op, sampler in unary:
        yield op, [(s23, sampler)], ['%%y = tcc.%s %%a0 : %s' % (op, t23)], s23
    binary = [('add', sym, sym), ('sub', sym, sym), ('mul', sym, sym), ('div', sym, pos),
              ('pow', pos, sym)]
    for op, sa, sb in binary:
        yield op, [(s23, sa), (s23, sb)], ['%%y = tcc.%s %%a0, %%a1 : %s' % (op, t23)], s23

    # max / min with operands at least 0.1 apart (no ties).
    def apart(r):
        return r.uniform(-2.0, 2.0)
    yield 'max', [(s23, apart), (s23, apart)], ['%%y = tcc.max %%a0, %%a1 : %s' % t23], s23
    yield 'min', [(s23, apart), (s23, apart)], ['%%y = tcc.min %%a0, %%a1 : %s' % t23], s23
    yield 'select', [(s23, sym), (s23, sym)], [
        '%c = tcc.constant dense<[[true, false, true], [false, false, true]]> : tensor<2x3xi1>',
        '%%y = tcc.select %%c, %%a0, %%a1 : tensor<2x3xi1>, %s' % t23], s23
    yield 'broadcast_in_dim', [([3], sym)], [
        '%%y = tcc.broadcast_in_dim %%a0, dims = [1] : tensor<3xf64> -> %s' % t23], s23
    yield 'broadcast_size1', [([2, 1], sym)], [
        '%y = tcc.broadcast_in_dim %a0, dims = [0, 1] : tensor<2x1xf64> -> tensor<2x3xf64>'], s23
    yield 'reshape', [(s23, sym)], [
        '%%y = tcc.reshape %%a0 : %s -> tensor<3x2xf64>' % t23], [3, 2]
    yield 'transpose', [([2, 3, 4], sym)], [
        '%y = tcc.transpose %a0, perm = [2, 0, 1] : tensor<2x3x4xf64> -> tensor<4x2x3xf64>'], [4, 2, 3]
    yield 'reduce_sum', [(s23, sym)], [
        '%%y = tcc.reduce_sum %%a0 {axes = array<i64: 1>, keepdims = false} : %s -> tensor<2xf64>' % t23], [2]
    yield 'reduce_mean', [([2, 3, 4], sym)], [
        '%y = tcc.reduce_mean %a0 {axes = array<i64: 0, 2>, keepdims = true} : tensor<2x3x4xf64> -> tensor<1x3x1xf64>'], [1, 3, 1]
    yield 'matmul', [([2, 3], sym), ([3, 4], sym)], [
        '%y = tcc.matmul %a0, %a1 : (tensor<2x3xf64>, tensor<3x4xf64>) -> tensor<2x4xf64>'], [2, 4]
    yield 'batch_matmul', [([2, 2, 3], sym), ([2, 3, 4], sym)], [
        '%y = tcc.matmul %a0, %a1 : (tensor<2x2x3xf64>, tensor<2x3x4xf64>) -> tensor<2x2x4xf64>'], [2, 2, 4]
    yield 'softmax', [([2, 4], sym)], [
        '%y = tcc.softmax %a0 {axis = 1 : i64} : tensor<2x4xf64>'], [2, 4]
    yield 'log_softmax', [([3, 2], sym)], [
        '%y = tcc.log_softmax %a0 {axis = 0 : i64} : tensor<3x2xf64>'], [3, 2]
    # clamp: inputs kept 0.05 away from the bounds (the kinks).
    def off_bounds(r):
        while True:
            v = r.uniform(-2.0, 2.0)
            if abs(v - 0.5) >= 0.05 and abs(v + 1.0) >= 0.05:
                return v
    yield 'clamp', [(s23, off_bounds)], [
        '%%y = tcc.clamp %%a0 {max = 5.0e-01 : f64, min = -1.0 : f64} : %s' % t23], s23
    yield 'slice', [([3, 5], sym)], [
        '%y = tcc.slice %a0, start = [1, 2], stride = [1, 1] : tensor<3x5xf64> -> tensor<2x2xf64>'], [2, 2]
    yield 'pad', [(s23, sym)], [
        '%%y = tcc.pad %%a0, low = [1, 0], high = [0, 2] : %s -> tensor<3x5xf64>' % t23], [3, 5]
    yield 'concat', [(s23, sym), ([2, 1], sym)], [
        '%%y = tcc.concat %%a0, %%a1 {axis = 1 : i64} : (%s, tensor<2x1xf64>) -> tensor<2x4xf64>' % t23], [2, 4]
    # An embedding lookup with a repeated row (its gradient rows add up).
    yield 'gather', [([5, 3], sym)], [
        '%i = tcc.constant dense<[[4, 1], [1, 0]]> : tensor<2x2xi64>',
        '%y = tcc.gather %a0, %i {axis = 0 : i64} : (tensor<5x3xf64>, tensor<2x2xi64>) -> tensor<2x2x3xf64>'], [2, 2, 3]
    # Convolutions: plain, strided with padding and rows the windows never
    # reach, dilated, 1-D.
    conv = '%%y = tcc.conv %%a0, %%a1 {strides = array<i64: %s>, dilations = array<i64: %s>, pad_low = array<i64: %s>, pad_high = array<i64: %s>, group = 1 : i64} : (%s, %s) -> %s'
    yield 'conv', [([2, 3, 5, 5], sym), ([4, 3, 3, 3], sym)], [
        conv % ('1, 1', '1, 1', '0, 0', '0, 0', 'tensor<2x3x5x5xf64>', 'tensor<4x3x3x3xf64>', 'tensor<2x4x3x3xf64>')], [2, 4, 3, 3]
    yield 'conv_strided_padded', [([1, 2, 6, 7], sym), ([3, 2, 3, 2], sym)], [
        conv % ('2, 3', '1, 1', '1, 0', '0, 2', 'tensor<1x2x6x7xf64>', 'tensor<3x2x3x2xf64>', 'tensor<1x3x3x3xf64>')], [1, 3, 3, 3]
    yield 'conv_dilated', [([1, 2, 7, 7], sym), ([2, 2, 3, 3], sym)], [
        conv % ('1, 2', '2, 1', '1, 1', '1, 1', 'tensor<1x2x7x7xf64>', 'tensor<2x2x3x3xf64>', 'tensor<1x2x5x4xf64>')], [1, 2, 5, 4]
    yield 'conv1d', [([2, 3, 8], sym), ([2, 3, 3], sym)], [
        conv % ('2', '1', '1', '1', 'tensor<2x3x8xf64>', 'tensor<2x3x3xf64>', 'tensor<2x2x4xf64>')], [2, 2, 4]
    # 2x2 max pooling, and 3x2 windows on a 7x5 input (rows left over).
    yield 'max_pool', [([1, 2, 4, 6], sym)], [
        '%y = tcc.max_pool %a0 {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : tensor<1x2x4x6xf64> -> tensor<1x2x2x3xf64>'], [1, 2, 2, 3]
    yield 'max_pool_partial', [([2, 1, 7, 5], sym)], [
        '%y = tcc.max_pool %a0 {kernel = array<i64: 3, 2>, strides = array<i64: 3, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : tensor<2x1x7x5xf64> -> tensor<2x1x2x2xf64>'], [2, 1, 2, 2]
    # layer norm over the last axis, and over the last two, with scale and bias.
    yield 'layer_norm', [([3, 4], sym), ([4], sym), ([4], sym)], [
        '%y, %m, %r = tcc.layer_norm %a0, %a1, %a2 {axis = 1 : i64, epsilon = 1.0e-05 : f64} : tensor<3x4xf64>, tensor<4xf64>, tensor<4xf64> -> tensor<3x4xf64>, tensor<3x1xf64>, tensor<3x1xf64>'], [3, 4]
    yield 'layer_norm_2d', [([2, 3, 4], sym), ([3, 4], sym), ([3, 4], sym)], [
        '%y, %m, %r = tcc.layer_norm %a0, %a1, %a2 {axis = 1 : i64, epsilon = 1.0e-05 : f64} : tensor<2x3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64> -> tensor<2x3x4xf64>, tensor<2x1x1xf64>, tensor<2x1x1xf64>'], [2, 3, 4]
    # batch norm with batch statistics (training mode), channels on axis 1.
    yield 'batch_norm_training', [([3, 2, 2, 3], sym), ([2], sym), ([2], sym)], [
        '%y, %m, %v = tcc.batch_norm_training %a0, %a1, %a2 {epsilon = 1.0e-05 : f64} : tensor<3x2x2x3xf64>, tensor<2xf64>'], [3, 2, 2, 3]
    yield 'cumsum', [([3, 4], sym)], [
        '%y = tcc.cumsum %a0 {axis = 1 : i64} : tensor<3x4xf64>'], [3, 4]
    yield 'cumsum_reverse_exclusive', [([4, 3], sym)], [
        '%y = tcc.cumsum %a0 {axis = 0 : i64, exclusive = true, reverse = true} : tensor<4x3xf64>'], [4, 3]
    yield 'gather_elements', [([3, 4], sym)], [
        '%i = tcc.constant dense<[[2, 0, 1, 2], [0, 0, 1, 1]]> : tensor<2x4xi64>',
        '%y = tcc.gather_elements %a0, %i {axis = 0 : i64} : (tensor<3x4xf64>, tensor<2x4xi64>) -> tensor<2x4xf64>'], [2, 4]
    yield 'reduce_max', [([3, 4], sym)], [
        '%y = tcc.reduce_max %a0 {axes = array<i64: 1>, keepdims = false} : tensor<3x4xf64> -> tensor<3xf64>'], [3]
    yield 'reduce_min', [([2, 3, 2], sym)], [
        '%y = tcc.reduce_min %a0 {axes = array<i64: 0, 2>, keepdims = true} : tensor<2x3x2xf64> -> tensor<1x3x1xf64>'], [1, 3, 1]
    # batch norm with given statistics: every operand differentiated
    # (variance kept positive).
    yield 'batch_norm_inference', [([2, 3, 2], sym), ([3], sym), ([3], sym), ([3], sym), ([3], pos)], [
        '%y = tcc.batch_norm_inference %a0, %a1, %a2, %a3, %a4 {epsilon = 1.0e-05 : f64} : tensor<2x3x2xf64>, tensor<3xf64>'], [2, 3, 2]
    yield 'avg_pool', [([2, 1, 5, 4], sym)], [
        '%y = tcc.avg_pool %a0 {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : tensor<2x1x5x4xf64> -> tensor<2x1x2x2xf64>'], [2, 1, 2, 2]
    yield 'scatter_elements', [([3, 4], sym), ([2, 4], sym)], [
        '%i = tcc.constant dense<[[2, 0, 1, 2], [0, 1, 2, 1]]> : tensor<2x4xi64>',
        '%y = tcc.scatter_elements %a0, %i, %a1 {axis = 0 : i64} : tensor<3x4xf64>, tensor<2x4xi64>, tensor<2x4xf64>'], [3, 4]
    yield 'scatter_elements_add', [([3, 4], sym), ([2, 4], sym)], [
        '%i = tcc.constant dense<[[2, 0, 1, 2], [2, 0, 2, 1]]> : tensor<2x4xi64>',
        '%y = tcc.scatter_elements %a0, %i, %a1 {axis = 0 : i64, reduction = 1 : i32} : tensor<3x4xf64>, tensor<2x4xi64>, tensor<2x4xf64>'], [3, 4]
    # NLL on log-probabilities (classes on axis 1), mean with an ignored
    # position, sum, none; the function's own weighted sum makes the loss.
    for red, rshape, extra in (('2', [], ', ignore_index = 1 : i64'), ('1', [], ''), ('0', [4], '')):
        yield 'nll_loss_%s' % {'2': 'mean', '1': 'sum', '0': 'none'}[red], [([4, 3], sym)], [
            '%t = tcc.constant dense<[0, 2, 1, 2]> : tensor<4xi64>',
            '%%y = tcc.nll_loss %%a0, %%t {reduction = %s : i32%s} : (tensor<4x3xf64>, tensor<4xi64>) -> %s'
            % (red, extra, ttype(rshape))], rshape
    # reduce_prod, also with one exact zero in a group (its gradient is the
    # product of the others there, 0 elsewhere in the group).
    yield 'reduce_prod', [([3, 4], sym)], [
        '%y = tcc.reduce_prod %a0 {axes = array<i64: 1>, keepdims = false} : tensor<3x4xf64> -> tensor<3xf64>'], [3]
    calls = [0]

    def zero_first(r):  # the parameter's first element is exactly 0
        calls[0] += 1
        return 0.0 if calls[0] == 1 else sym(r)
    yield 'reduce_prod_zero', [([2, 3], zero_first)], [
        '%y = tcc.reduce_prod %a0 {axes = array<i64: 1>, keepdims = false} : tensor<2x3xf64> -> tensor<2xf64>'], [2]
    # Transposed convolutions: strided with padding and output_padding,
    # dilated 1-D, output_padding >= stride (rows no input row reaches).
    def conv_t(x, w, y, strides, dilations, low, high, out_pad):
        return ('%%y = tcc.conv_transpose %%a0, %%a1 {strides = array<i64: %s>, dilations = array<i64: %s>, pad_low = array<i64: %s>, pad_high = array<i64: %s>, output_padding = array<i64: %s>, group = 1 : i64} : (%s, %s) -> %s'
                % (strides, dilations, low, high, out_pad, ttype(x), ttype(w), ttype(y)))
    for name, x, w, y, attrs in (
            ('conv_transpose_strided', [1, 2, 3, 4], [2, 3, 3, 2], [1, 3, 7, 7], ('2, 2', '1, 1', '1, 0', '0, 1', '1, 0')),
            ('conv_transpose_dilated', [2, 3, 3, 3], [3, 2, 2, 3], [2, 2, 10, 7], ('3, 2', '2, 1', '0, 1', '1, 0', '2, 1')),
            ('conv_transpose1d', [2, 2, 4], [2, 3, 3], [2, 3, 6], ('1', '2', '1', '1', '0')),
            ('conv_transpose_wide_output_padding', [1, 2, 3], [2, 1, 2], [1, 1, 6], ('1', '2', '0', '0', '1'))):
        yield name, [(x, sym), (w, sym)], [conv_t(x, w, y, *attrs)], y
    # scatter_nd on a rank-3 input, index tuples of length 1 and 2; the add
    # cases repeat a tuple, the overwrite cases do not (and wrap a negative
    # index).
    scatter_nd = '%%y = tcc.scatter_nd %%a0, %%i, %%a1%s : tensor<4x3x2xf64>, %s, %s'
    for name, idx, ishape, ushape, red in (
            ('scatter_nd', '[[2], [0]]', [2, 1], [2, 3, 2], ''),
            ('scatter_nd_depth2', '[[3, 1], [0, -1], [1, 0]]', [3, 2], [3, 2], ''),
            ('scatter_nd_add', '[[[1], [3]], [[1], [0]]]', [2, 2, 1], [2, 2, 3, 2], ' {reduction = 1 : i32}'),
            ('scatter_nd_add_depth2', '[[1, 2], [3, 0], [1, 2]]', [3, 2], [3, 2], ' {reduction = 1 : i32}')):
        itype = ttype(ishape).replace('f64', 'i64')
        yield name, [([4, 3, 2], sym), (ushape, sym)], [
            '%%i = tcc.constant dense<%s> : %s' % (idx, itype),
            scatter_nd % (red, itype, ttype(ushape))], [4, 3, 2]
    # resize, up- and downsampling: nearest with two rounding modes (ties at
    # 0.5 in the upsampling), linear
    # with align_corners and half_pixel, cubic (also exclude_outside), and
    # tf_crop_and_resize with a roi reaching outside (extrapolated outputs).
    resize = ('%%y = tcc.resize %%a0 {scales = array<f64: %s>, mode = %d : i32, coordinate_mode = %d : i32, nearest_mode = %d : i32, cubic_coeff_a = %s : f64, exclude_outside = %s%s} : %s -> %s')
    for name, x, y, scales, mode, coord, nearest, a, excl, extra in (
            ('resize_nearest_up', [1, 2, 3, 4], [1, 2, 6, 7], '1.0, 1.0, 2.0, 1.75', 0, 2, 1, '-0.75', 'false', ''),
            ('resize_nearest_down', [2, 1, 5, 4], [2, 1, 3, 2], '1.0, 1.0, 0.6, 0.5', 0, 0, 2, '-0.75', 'false', ''),
            ('resize_linear_align_corners', [1, 1, 3, 4], [1, 1, 5, 7], '1.0, 1.0, 1.6666666666666667, 1.75', 1, 1, 0, '-0.75', 'false', ''),
            ('resize_linear_down', [1, 2, 6, 5], [1, 2, 4, 2], '1.0, 1.0, 0.66666666666666663, 0.4', 1, 0, 0, '-0.75', 'false', ''),
            ('resize_cubic_up', [1, 1, 4, 3], [1, 1, 8, 5], '1.0, 1.0, 2.0, 1.6666666666666667', 2, 0, 0, '-0.75', 'false', ''),
            ('resize_cubic_down', [1, 1, 7, 6], [1, 1, 3, 4], '1.0, 1.0, 0.5, 0.66666666666666663', 2, 3, 0, '-0.5', 'true', ''),
            ('resize_tf_crop', [1, 1, 3, 4], [1, 1, 5, 6], '1.0, 1.0, 1.6666666666666667, 1.5', 1, 4, 0, '-0.75', 'false',
             ', extrapolation_value = 5.0e-01 : f64, roi = array<f64: 0.0, 0.0, 0.2, -0.3, 1.0, 1.0, 0.9, 1.2>')):
        yield name, [(x, sym)], [resize % (scales, mode, coord, nearest, a, excl, extra, ttype(x), ttype(y))], y
    # Grouped convolutions: 2 groups strided and padded, depthwise with a
    # channel multiplier and dilation, 1-D depthwise; a grouped transposed
    # convolution.
    def conv_g(x, w, y, strides, dilations, low, high, group):
        return ('%%y = tcc.conv %%a0, %%a1 {strides = array<i64: %s>, dilations = array<i64: %s>, pad_low = array<i64: %s>, pad_high = array<i64: %s>, group = %d : i64} : (%s, %s) -> %s'
                % (strides, dilations, low, high, group, ttype(x), ttype(w), ttype(y)))
    for name, x, w, y, attrs in (
            ('conv_grouped', [2, 4, 5, 5], [6, 2, 3, 3], [2, 6, 2, 4], ('2, 1', '1, 1', '1, 0', '0, 1', 2)),
            ('conv_depthwise', [1, 3, 6, 6], [6, 1, 3, 3], [1, 6, 4, 6], ('1, 1', '2, 1', '1, 1', '1, 1', 3)),
            ('conv1d_depthwise', [2, 4, 7], [4, 1, 3], [2, 4, 4], ('2', '1', '1', '1', 4))):
        yield name, [(x, sym), (w, sym)], [conv_g(x, w, y, *attrs)], y
    # The filter gradient as an op of its own (its gradient is the double
    # backward): strided with asymmetric padding, grouped, depthwise, and
    # stride 3 > kernel 2 with input rows no window reads.
    def conv_bf(x, g, w, kernel, strides, dilations, low, high, group):
        return ('%%y = tcc.conv_backward_filter %%a0, %%a1 {kernel = array<i64: %s>, strides = array<i64: %s>, dilations = array<i64: %s>, pad_low = array<i64: %s>, pad_high = array<i64: %s>, group = %d : i64} : (%s, %s) -> %s'
                % (kernel, strides, dilations, low, high, group, ttype(x), ttype(g), ttype(w)))
    for name, x, g, w, attrs in (
            ('conv_backward_filter', [1, 2, 6, 7], [1, 3, 3, 3], [3, 2, 3, 2], ('3, 2', '2, 3', '1, 1', '1, 0', '0, 2', 1)),
            ('conv_backward_filter_grouped', [2, 4, 5, 5], [2, 6, 2, 4], [6, 2, 3, 3], ('3, 3', '2, 1', '1, 1', '1, 0', '0, 1', 2)),
            ('conv_backward_filter_depthwise', [1, 3, 6, 6], [1, 6, 4, 6], [6, 1, 3, 3], ('3, 3', '1, 1', '2, 1', '1, 1', '1, 1', 3)),
            ('conv_backward_filter_unread_rows', [1, 2, 7, 6], [1, 2, 2, 2], [2, 2, 2, 2], ('2, 2', '3, 3', '1, 1', '0, 1', '0, 0', 1))):
        yield name, [(x, sym), (g, sym)], [conv_bf(x, g, w, *attrs)], w
    yield 'conv_transpose_grouped', [([1, 4, 3, 3], sym), ([4, 3, 2, 2], sym)], [
        '%y = tcc.conv_transpose %a0, %a1 {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 0>, pad_high = array<i64: 0, 0>, output_padding = array<i64: 1, 0>, group = 2 : i64} : (tensor<1x4x3x3xf64>, tensor<4x3x2x2xf64>) -> tensor<1x6x6x6xf64>'], [1, 6, 6, 6]
    # Pooling with overlapping, padded, dilated and ceil_mode windows. Max
    # pooling inputs are distinct values at least 0.04 apart (no ties, where
    # the gradient jumps); the tie case below checks the first-max rule.
    pool = '%%y = tcc.%s %%a0 {kernel = array<i64: %s>, strides = array<i64: %s>, dilations = array<i64: %s>, pad_low = array<i64: %s>, pad_high = array<i64: %s>%s} : %s -> %s'
    for name, op, x, y, attrs in (
            ('max_pool_overlapping_padded', 'max_pool', [2, 2, 5, 6], [2, 2, 3, 3], ('3, 3', '2, 2', '1, 1', '1, 1', '1, 1', '')),
            ('max_pool_dilated_ceil', 'max_pool', [1, 2, 7, 7], [1, 2, 3, 3], ('2, 3', '2, 3', '2, 1', '0, 0', '0, 0', ', ceil_mode = true')),
            ('max_pool1d_padded', 'max_pool', [2, 3, 8], [2, 3, 8], ('3', '1', '1', '1', '1', '')),
            ('avg_pool_include_pad_ceil', 'avg_pool', [2, 1, 5, 6], [2, 1, 3, 4], ('3, 3', '2, 2', '1, 1', '1, 1', '1, 1', ', ceil_mode = true, count_include_pad = true')),
            ('avg_pool_exclude_pad_dilated', 'avg_pool', [1, 2, 6, 5], [1, 2, 6, 3], ('2, 2', '1, 2', '2, 1', '1, 0', '1, 1', '')),
            ('avg_pool3d', 'avg_pool', [1, 1, 3, 4, 4], [1, 1, 2, 2, 3], ('2, 2, 2', '1, 2, 1', '1, 1, 1', '0, 1, 0', '0, 0, 0', ', count_include_pad = true'))):
        sampler = distinct(count(x)) if op == 'max_pool' else sym
        yield name, [(x, sampler)], [pool % ((op,) + attrs[:5] + (attrs[5], ttype(x), ttype(y)))], y
    # Ties: the gradient of each window goes to its first maximum (row-major),
    # padding never wins. 2x2 windows, stride 1, one row and column of low
    # padding, on
    #   3 3 1
    #   3 2 3
    #   1 3 3
    # The 9 windows' winners: (0,0) wins 4 (the corner alone, with padding, and
    # both windows holding it with another 3 after it, and the first full
    # window), (0,1) 2, (1,0) 2, (1,2) 1; with W = 1 the gradient counts them.
    tie_x = [3.0, 3.0, 1.0, 3.0, 2.0, 3.0, 1.0, 3.0, 3.0]
    yield 'max_pool_ties', [([1, 1, 3, 3], fixed(tie_x))], [
        pool % ('max_pool', '2, 2', '1, 1', '1, 1', '1, 1', '0, 0', '', 'tensor<1x1x3x3xf64>', 'tensor<1x1x3x3xf64>')], [1, 1, 3, 3], {
            'w': [1.0] * 9, 'expected': [[4.0, 2.0, 0.0, 2.0, 0.0, 1.0, 0.0, 0.0, 0.0]]}
    # gather along an inner axis (a repeated and a negative index) and along
    # the last axis with a scalar index.
    yield 'gather_axis1', [([3, 5, 2], sym)], [
        '%i = tcc.constant dense<[[4, 1, 1], [0, -1, 2]]> : tensor<2x3xi64>',
        '%y = tcc.gather %a0, %i {axis = 1 : i64} : (tensor<3x5x2xf64>, tensor<2x3xi64>) -> tensor<3x2x3x2xf64>'], [3, 2, 3, 2]
    yield 'gather_last_scalar', [([2, 3, 4], sym)], [
        '%i = tcc.constant dense<2> : tensor<i64>',
        '%y = tcc.gather %a0, %i {axis = 2 : i64} : (tensor<2x3x4xf64>, tensor<i64>) -> tensor<2x3xf64>'], [2, 3]
    # Strided slices, positive and negative strides.
    yield 'slice_strided', [([7, 6], sym)], [
        '%y = tcc.slice %a0, start = [1, 5], stride = [2, -2] : tensor<7x6xf64> -> tensor<3x3xf64>'], [3, 3]
    yield 'slice_strided_3d', [([2, 9, 4], sym)], [
        '%y = tcc.slice %a0, start = [1, 8, 0], stride = [-1, -3, 3] : tensor<2x9x4xf64> -> tensor<2x3x2xf64>'], [2, 3, 2]
    # Scatters with max / min / mul reduction, repeated positions. max / min:
    # inputs and updates distinct (no ties, where the gradient is shared);
    # mul: updates with exact zeros, two at one position and one alone
    # (the product is a polynomial: finite differences hold there).
    def with_zeros(n, zeros):
        values = []

        def sample(r):
            if not values:
                values.extend(0.0 if i in zeros else sym(r) for i in range(n))
                values.reverse()
            return values.pop()
        return sample
    for name, red, u in (('scatter_elements_max', 3, distinct(8)), ('scatter_elements_min', 4, distinct(8)),
                         ('scatter_elements_mul', 2, with_zeros(8, {0, 4, 3}))):
        yield name, [([3, 4], distinct(12) if red != 2 else sym), ([2, 4], u)], [
            '%i = tcc.constant dense<[[2, 0, 1, 2], [2, 1, 1, 1]]> : tensor<2x4xi64>',
            '%%y = tcc.scatter_elements %%a0, %%i, %%a1 {axis = 0 : i64, reduction = %d : i32} : tensor<3x4xf64>, tensor<2x4xi64>, tensor<2x4xf64>' % red], [3, 4]
    for name, red, u in (('scatter_nd_max', 3, distinct(9)), ('scatter_nd_mul', 2, with_zeros(9, {1, 4}))):
        yield name, [([4, 3], distinct(12) if red != 2 else sym), ([3, 3], u)], [
            '%i = tcc.constant dense<[[1], [3], [1]]> : tensor<3x1xi64>',
            '%%y = tcc.scatter_nd %%a0, %%i, %%a1 {reduction = %d : i32} : tensor<4x3xf64>, tensor<3x1xi64>, tensor<3x3xf64>' % red], [4, 3]
    # Awkward shapes (the maps of small images deep in a CNN): 3x3 windows
    # with padding 1 on 2x2 and 1x1 maps, a stride-2 convolution on an even
    # size, kernels larger than the input, stride larger than the kernel,
    # asymmetric padding, depthwise on a 2x2 map to 1x1; batch 1.
    for name, x, w, y, attrs in (
            ('conv_2x2_map', [1, 2, 2, 2], [3, 2, 3, 3], [1, 3, 2, 2], ('1, 1', '1, 1', '1, 1', '1, 1', 1)),
            ('conv_1x1_map', [2, 3, 1, 1], [4, 3, 3, 3], [2, 4, 1, 1], ('1, 1', '1, 1', '1, 1', '1, 1', 1)),
            ('conv_stride2_even', [2, 2, 4, 4], [3, 2, 3, 3], [2, 3, 2, 2], ('2, 2', '1, 1', '1, 1', '1, 1', 1)),
            ('conv_kernel_larger', [1, 2, 2, 2], [2, 2, 5, 5], [1, 2, 2, 2], ('1, 1', '1, 1', '2, 2', '2, 2', 1)),
            ('conv_kernel_larger_unpadded', [1, 1, 2, 3], [2, 1, 3, 4], [1, 2, 2, 2], ('1, 1', '1, 1', '1, 1', '1, 1', 1)),
            ('conv_stride_gt_kernel', [1, 2, 7, 6], [2, 2, 2, 2], [1, 2, 2, 2], ('3, 3', '1, 1', '0, 1', '0, 0', 1)),
            ('conv_asymmetric_pad', [1, 2, 5, 4], [2, 2, 3, 3], [1, 2, 3, 2], ('2, 2', '1, 1', '2, 0', '0, 1', 1)),
            ('conv_depthwise_2x2_to_1x1', [1, 4, 2, 2], [4, 1, 3, 3], [1, 4, 1, 1], ('2, 2', '1, 1', '1, 1', '1, 1', 4)),
            ('conv_grouped_1x1_map', [2, 4, 1, 1], [6, 2, 1, 1], [2, 6, 1, 1], ('1, 1', '1, 1', '0, 0', '0, 0', 2))):
        yield name, [(x, sym), (w, sym)], [conv_g(x, w, y, *attrs)], y
    # Pooling windows mostly over padding: 3x3 / stride 2 on a 2x2 map (one
    # window), on a 1x1 map (the input is the only real element), average
    # pooling with a window larger than the input excluding the padding.
    for name, op, x, y, attrs in (
            ('max_pool_2x2_map_padded', 'max_pool', [1, 2, 2, 2], [1, 2, 1, 1], ('3, 3', '2, 2', '1, 1', '1, 1', '1, 1', '')),
            ('max_pool_1x1_map_padded', 'max_pool', [2, 1, 1, 1], [2, 1, 1, 1], ('3, 3', '1, 1', '1, 1', '1, 1', '1, 1', '')),
            ('avg_pool_window_larger', 'avg_pool', [1, 1, 2, 2], [1, 1, 2, 2], ('3, 3', '1, 1', '1, 1', '1, 1', '1, 1', ''))):
        sampler = distinct(count(x)) if op == 'max_pool' else sym
        yield name, [(x, sampler)], [pool % ((op,) + attrs[:5] + (attrs[5], ttype(x), ttype(y)))], y
    # Batch norm on small maps: batch 1 on a 2x2 map, batch 2 on a 1x1 map
    # (two values per channel), batch 3 on a 1x1 map.
    for name, x in (('batch_norm_training_b1_2x2', [1, 3, 2, 2]), ('batch_norm_training_1x1', [2, 2, 1, 1]),
                    ('batch_norm_training_b3_1x1', [3, 2, 1, 1])):
        c = x[1]
        yield name, [(x, sym), ([c], sym), ([c], sym)], [
            '%%y, %%m, %%v = tcc.batch_norm_training %%a0, %%a1, %%a2 {epsilon = 1.0e-05 : f64} : %s, tensor<%dxf64>' % (ttype(x), c)], x
    # Clamp on its bounds (ReLU6 is clip(x, 0, 6)): the gradient passes on
    # a bound (torch.clamp's convention), is zero outside.
    yield 'clamp_on_bounds', [([1, 6], fixed([0.0, 6.0, -1.0, 7.0, 3.0, 6.0]))], [
        '%y = tcc.clamp %a0 {max = 6.0 : f64, min = 0.0 : f64} : tensor<1x6xf64>'], [1, 6], {
            'w': [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 'expected': [[1.0, 2.0, 0.0, 0.0, 5.0, 6.0]]}
    # A small network: x (input-like parameter) -> Linear -> tanh -> Linear
    # -> log_softmax; every parameter differentiated, values used twice.
    yield 'mlp', [([4, 3], sym), ([3, 5], sym), ([5], sym), ([5, 2], sym)], [
        '%m = tcc.matmul %a0, %a1 : (tensor<4x3xf64>, tensor<3x5xf64>) -> tensor<4x5xf64>',
        '%b = tcc.broadcast_in_dim %a2, dims = [1] : tensor<5xf64> -> tensor<4x5xf64>',
        '%s = tcc.add %m, %b : tensor<4x5xf64>',
        '%h = tcc.tanh %s : tensor<4x5xf64>',
        '%hh = tcc.mul %h, %s : tensor<4x5xf64>',
        '%o = tcc.matmul %hh, %a3 : (tensor<4x5xf64>, tensor<5x2xf64>) -> tensor<4x2xf64>',
        '%y = tcc.log_softmax %o {axis = 1 : i64} : tensor<4x2xf64>'], [4, 2]
    # The trigonometric and hyperbolic functions after sin and cos (appended
    # last, so the cases above keep their random inputs): asin, acos and
    # atanh inside (-1, 1) and acosh above 1, away from the ends of their
    # domains, where the slopes grow without bound.
    inner = lambda r: r.uniform(-0.9, 0.9)
    above1 = lambda r: r.uniform(1.1, 3.0)
    unary_trig = [('tan', sym), ('asin', inner), ('acos', inner), ('atan', sym), ('sinh', sym),
                  ('cosh', sym), ('asinh', sym), ('acosh', above1), ('atanh', inner)]
    for op, sampler in unary_trig:
        yield op, [(s23, sampler)], ['%%y = tcc.%s %%a0 : %s' % (op, t23)], s23


def reassociation(shape):
    return '[[%s]]' % ', '.join(str(i) for i in range(len(shape)))


def emit_case(out, rng, name, args, body, yshape, exact=None):
    """EXACT, if given, fixes the loss weights ('w') and replaces the finite
    differences by the expected gradient of each argument ('expected')."""
    params = ', '.join('%%a%d: %s {tcc.param = "p%d"}' % (i, ttype(s), i) for i, (s, _) in enumerate(args))
    w = [rng.uniform(-1.0, 1.0) for _ in range(count(yshape))]
    if exact:
        w = exact['w']
    # "f_" keeps the names apart from libm's (math-to-libm calls @tanh).
    out.append('func.func @f_%s(%s) -> tensor<f64> {' % (name, params))
    out.extend('  ' + line for line in body)
    wtext = dense(w, yshape)
    out.append('  %%wf = tcc.constant %s' % wtext)
    out.append('  %%w = tcc.reshape %%wf : %s -> %s' % (ttype([count(yshape)]), ttype(yshape)))
    out.append('  %%p = tcc.mul %%y, %%w : %s' % ttype(yshape))
    axes = ', '.join(str(i) for i in range(len(yshape)))
    out.append('  %%l = tcc.reduce_sum %%p {axes = array<i64%s>, keepdims = false} : %s -> tensor<f64>'
               % (': ' + axes if axes else '', ttype(yshape)))
    out.append('  return %l : tensor<f64>')
    out.append('}')
    out.append('')

    # The gradient function, declared here and defined by tcc-autodiff.
    grad_results = ', '.join(['tensor<f64>'] + [ttype(s) for s, _ in args])
    out.append('func.func private @f_%s_grad(%s) -> (%s)'
               % (name, ', '.join(ttype(s) for s, _ in args), grad_results))
    out.append('')

    # The check: gradient against central differences, per argument.
    out.append('func.func @check_%s() -> i1 {' % name)
    out.append('  %c0 = arith.constant 0 : index')
    out.append('  %c1 = arith.constant 1 : index')
    out.append('  %%h = arith.constant %.17g : f64' % H)
    out.append('  %two_h = arith.addf %h, %h : f64')
    out.append('  %one = arith.constant 1.0 : f64')
    out.append('  %zero = arith.constant 0.0 : f64')
    out.append('  %%tol = arith.constant %.17g : f64' % TOL)
    names = []
    for i, (shape, sampler) in enumerate(args):
        values = [sampler(rng) for _ in range(count(shape))]
        if name in ('max', 'min') and i == 1:
            # keep every pair at least 0.1 apart
            first = prev_values
            values = [v if abs(v - f) >= 0.1 else f + 0.5 for v, f in zip(values, first)]
        prev_values = values
        out.append('  %%x%df = arith.constant %s' % (i, dense(values, shape)))
        if shape:
            out.append('  %%x%d = tensor.expand_shape %%x%df %s output_shape [%s] : %s into %s'
                       % (i, i, reassociation(shape), ', '.join(map(str, shape)),
                          ttype([count(shape)]), ttype(shape)))
        names.append('%%x%d' % i)
    arg_types = ', '.join(ttype(s) for s, _ in args)
    grad_types = ', '.join(['tensor<f64>'] + [ttype(s) for s, _ in args])
    gvals = ', '.join(['%loss'] + ['%%g%d' % i for i in range(len(args))])
    out.append('  %s = call @f_%s_grad(%s) : (%s) -> (%s)'
               % (gvals, name, ', '.join(names), arg_types, grad_types))
    acc = '%zero'
    for i, (shape, _) in enumerate(args):
        n = count(shape)
        flat = ttype([n])
        out.append('  %%gf%d = tensor.collapse_shape %%g%d %s : %s into %s'
                   % (i, i, reassociation(shape), ttype(shape), flat))
        out.append('  %%n%d = arith.constant %d : index' % (i, n))
        if exact:
            out.append('  %%e%d = arith.constant %s' % (i, dense(exact['expected'][i], shape)))
        out.append('  %%err%d = scf.for %%i = %%c0 to %%n%d step %%c1 iter_args(%%m = %s) -> f64 {' % (i, i, acc))
        if exact:
            out.append('    %%fd = tensor.extract %%e%d[%%i] : %s' % (i, flat))
        for sign, op in ([] if exact else [('p', 'addf'), ('m', 'subf')]):
            if sign == 'p':
                out.append('    %%v = tensor.extract %%x%df[%%i] : %s' % (i, flat))
            out.append('    %%v%s = arith.%s %%v, %%h : f64' % (sign, op))
            out.append('    %%x%s_flat = tensor.insert %%v%s into %%x%df[%%i] : %s' % (sign, sign, i, flat))
            out.append('    %%x%s = tensor.expand_shape %%x%s_flat %s output_shape [%s] : %s into %s'
                       % (sign, sign, reassociation(shape), ', '.join(map(str, shape)), flat, ttype(shape)))
            call_args = ', '.join('%%x%s' % sign if j == i else names[j] for j in range(len(args)))
            out.append('    %%l%s_t = func.call @f_%s(%s) : (%s) -> tensor<f64>' % (sign, name, call_args, arg_types))
            out.append('    %%l%s = tensor.extract %%l%s_t[] : tensor<f64>' % (sign, sign))
        if not exact:
            out.append('    %d = arith.subf %lp, %lm : f64')
            out.append('    %fd = arith.divf %d, %two_h : f64')
        out.append('    %%g = tensor.extract %%gf%d[%%i] : %s' % (i, flat))
        out.append('    %diff = arith.subf %fd, %g : f64')
        out.append('    %adiff = math.absf %diff : f64')
        out.append('    %ag = math.absf %g : f64')
        out.append('    %scale = arith.maximumf %ag, %one : f64')
        out.append('    %e = arith.divf %adiff, %scale : f64')
        out.append('    %nm = arith.maximumf %m, %e : f64')
        out.append('    scf.yield %nm : f64')
        out.append('  }')
        acc = '%%err%d' % i
    out.append('  %%ok = arith.cmpf olt, %s, %%tol : f64' % acc)
    out.append('  return %ok : i1')
    out.append('}')
    out.append('')


def main():
    rng = random.Random(20261129)
    out = [
        '// Float64 finite-difference checks of the gradient rules (passes/training/autodiff/).',
        '//',
        '// Generated by Inputs/gen_gradients.py (the method is described there);',
        '// edit the script, not this file.',
        '//',
        '// RUN: tcc-opt %s --tcc-autodiff %tcc_lower_to_llvm \\',
        '// RUN: | mlir-runner -e main -entry-point-result=void %mlir_runner_libs \\',
        '// RUN: | FileCheck %s',
        '//',
        '// Once more with every convolution and data gradient (conv_transpose) as a',
        '// matmul (LinalgNN.cpp\'s convolutionAsGemm, dataGradientAsGemm), whatever',
        '// its type and size:',
        '// RUN: tcc-opt %s --tcc-autodiff %tcc_lower_to_llvm_gemm_convolutions \\',
        '// RUN: | mlir-runner -e main -entry-point-result=void %mlir_runner_libs \\',
        '// RUN: | FileCheck %s',
        '',
    ]
    names = []
    for name, args, body, yshape, *exact in cases():
        emit_case(out, rng, name, args, body, yshape, *exact)
        names.append(name)
    out.append('func.func @main() {')
    for name in names:
        out.append('  %%ok_%s = call @check_%s() : () -> i1' % (name, name))
        out.append('  vector.print str "%s "' % name)
        out.append('  vector.print %%ok_%s : i1' % name)
    out.append('  return')
    out.append('}')
    out.append('')
    for i, name in enumerate(names):
        out.append('// CHECK%s: %s 1' % ('' if i == 0 else '-NEXT', name))
    with open(OUT, 'w') as f:
        f.write('\n'.join(out) + '\n')


if __name__ == '__main__':
    main()
