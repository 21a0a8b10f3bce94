// RUN: tcc-opt --split-input-file --verify-diagnostics %s

// Every verifier and type-inference error of the tcc dialect, one case each.
// An op whose result type is inferred also reports that inference failed.

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

// Tests that a binary op rejects operands of different element types.
func.func @add_operand_types(%a: tensor<4xf32>, %b: tensor<4xi32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "tcc.add"(%a, %b) : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  return
}

// -----

// Tests that a binary op rejects operands of different shapes (broadcasting is
// explicit).
func.func @mul_operand_shapes(%a: tensor<4xf32>, %b: tensor<2x2xf32>) {
  // expected-error @+1 {{all non-scalar operands/results must have the same shape and base type}}
  %0 = "tcc.mul"(%a, %b) : (tensor<4xf32>, tensor<2x2xf32>) -> tensor<4xf32>
  return
}

// -----

// Tests that a unary op rejects a result type other than its operand's.
func.func @exp_result_type(%a: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "tcc.exp"(%a) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

// Tests that a float-only op rejects integers.
func.func @exp_integer(%a: tensor<4xi32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of floating-point values}}
  %0 = tcc.exp %a : tensor<4xi32>
  return
}

// -----

// Tests that logical ops reject non-boolean operands.
func.func @and_not_bool(%a: tensor<4xi32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 1-bit signless integer values}}
  %0 = tcc.and %a, %a : tensor<4xi32>
  return
}

// -----

// Tests that compare rejects operands of different types.
func.func @compare_operand_types(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{requires all operands to have the same type}}
  %0 = "tcc.compare"(%a, %b) <{predicate = 2 : i32}> : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xi1>
  return
}

// -----

// Tests that compare rejects a result shape other than its operands'.
func.func @compare_result_shape(%a: tensor<4xf32>) {
  // expected-error @+1 {{all non-scalar operands/results must have the same shape and base type}}
  %0 = "tcc.compare"(%a, %a) <{predicate = 2 : i32}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<2xi1>
  return
}

// -----

// Tests that select rejects branches of different types.
func.func @select_branch_types(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xi32>) {
  // expected-error @+1 {{failed to verify that all of {on_true, on_false, result} have same type}}
  %0 = "tcc.select"(%c, %a, %b) : (tensor<4xi1>, tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  return
}

// -----

// Tests that select rejects a condition shaped unlike its branches.
func.func @select_cond_shape(%c: tensor<2xi1>, %a: tensor<4xf32>) {
  // expected-error @+1 {{failed to verify that all of {cond, result} have same shape}}
  %0 = tcc.select %c, %a, %a : tensor<2xi1>, tensor<4xf32>
  return
}

// -----

// Tests that cast rejects a change of shape.
func.func @cast_shape(%a: tensor<4xf32>) {
  // expected-error @+1 {{all non-scalar operands/results must have the same shape and base type}}
  %0 = tcc.cast %a : tensor<4xf32> to tensor<2xi32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// broadcast_in_dim, reshape, transpose, concat
//===----------------------------------------------------------------------===//

// Tests that broadcast_in_dim needs one entry in dims per operand dimension.
func.func @broadcast_dims_count(%a: tensor<3xf32>) {
  // expected-error @+1 {{needs one entry in dims per operand dimension, got 2 for rank 1}}
  %0 = tcc.broadcast_in_dim %a, dims = [0, 1] : tensor<3xf32> -> tensor<2x3xf32>
  return
}

// -----

// Tests that broadcast_in_dim rejects a dims entry outside the result's rank.
func.func @broadcast_dims_range(%a: tensor<3xf32>) {
  // expected-error @+1 {{dims[0] = 2 is not a result dimension}}
  %0 = tcc.broadcast_in_dim %a, dims = [2] : tensor<3xf32> -> tensor<2x3xf32>
  return
}

// -----

// Tests that broadcast_in_dim rejects dims out of order (a transpose).
func.func @broadcast_dims_order(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{dims must be strictly increasing}}
  %0 = tcc.broadcast_in_dim %a, dims = [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  return
}

// -----

// Tests that broadcast_in_dim rejects an operand dimension that is neither 1
// nor the result's size.
func.func @broadcast_dims_size(%a: tensor<2xf32>) {
  // expected-error @+1 {{operand dimension 0 of size 2 cannot broadcast to size 3}}
  %0 = tcc.broadcast_in_dim %a, dims = [1] : tensor<2xf32> -> tensor<4x3xf32>
  return
}

// -----

// Tests that reshape keeps the element count.
func.func @reshape_count(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{cannot reshape [2,3] to [4,2]: element counts differ}}
  %0 = tcc.reshape %a : tensor<2x3xf32> -> tensor<4x2xf32>
  return
}

// -----

// Tests that transpose needs one perm entry per dimension.
func.func @transpose_perm_size(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{perm has 1 entries for a tensor of rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.transpose %a, perm = [0] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

// Tests that transpose rejects a perm that repeats a dimension.
func.func @transpose_perm_repeat(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{perm is not a permutation of 0..1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.transpose %a, perm = [1, 1] : tensor<2x3xf32> -> tensor<3x3xf32>
  return
}

// -----

// Tests that transpose rejects a perm entry out of range.
func.func @transpose_perm_range(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{perm is not a permutation of 0..1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.transpose %a, perm = [0, -1] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

// Tests that transpose checks its result type against the permuted shape.
func.func @transpose_result(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<3x2xf32>' are incompatible with return type(s) of operation 'tensor<2x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.transpose %a, perm = [1, 0] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

// Tests that concat needs at least one input.
func.func @concat_empty() {
  // expected-error @+2 {{needs at least one input}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = "tcc.concat"() <{axis = 0 : i64}> : () -> tensor<0xf32>
  return
}

// -----

// Tests that concat rejects an axis out of range.
func.func @concat_axis(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{axis 2 is out of range for a tensor of rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.concat %a, %a {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return
}

// -----

// Tests that concat rejects inputs of different element types.
func.func @concat_element_type(%a: tensor<2x3xf32>, %b: tensor<2x3xi32>) {
  // expected-error @+2 {{inputs differ in rank or element type}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xi32>) -> tensor<4x3xf32>
  return
}

// -----

// Tests that concat rejects inputs of different ranks.
func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{inputs differ in rank or element type}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<5x3xf32>
  return
}

// -----

// Tests that concat rejects inputs that differ off the axis.
func.func @concat_mismatch(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+2 {{inputs differ in dimension 1: [2,3] vs [2,4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// slice, pad
//===----------------------------------------------------------------------===//

// Tests that slice needs start and stride of the operand's rank.
func.func @slice_rank(%a: tensor<8xf32>) {
  // expected-error @+1 {{start, stride and result need the operand's rank 1}}
  %0 = tcc.slice %a, start = [0, 0], stride = [1] : tensor<8xf32> -> tensor<4xf32>
  return
}

// -----

// Tests that slice rejects a zero stride.
func.func @slice_zero_stride(%a: tensor<8xf32>) {
  // expected-error @+1 {{stride of dimension 0 is zero}}
  %0 = tcc.slice %a, start = [0], stride = [0] : tensor<8xf32> -> tensor<4xf32>
  return
}

// -----

// Tests that slice rejects a last element beyond the operand.
func.func @slice_past_end(%a: tensor<8xf32>) {
  // expected-error @+1 {{dimension 0: elements 1..9 are outside the operand's size 8}}
  %0 = tcc.slice %a, start = [1], stride = [2] : tensor<8xf32> -> tensor<5xf32>
  return
}

// -----

// Tests that slice rejects a start beyond the operand.
func.func @slice_start(%a: tensor<8xf32>) {
  // expected-error @+1 {{dimension 0: elements 8..8 are outside the operand's size 8}}
  %0 = tcc.slice %a, start = [8], stride = [1] : tensor<8xf32> -> tensor<1xf32>
  return
}

// -----

// Tests that a negative stride may not walk below element 0.
func.func @slice_negative_stride(%a: tensor<8xf32>) {
  // expected-error @+1 {{dimension 0: elements 3..-1 are outside the operand's size 8}}
  %0 = tcc.slice %a, start = [3], stride = [-2] : tensor<8xf32> -> tensor<3xf32>
  return
}

// -----

// Tests that a stride so large that the last index overflows is rejected, not
// wrapped back into range.
func.func @slice_stride_overflow(%a: tensor<8xf32>) {
  // expected-error @+1 {{dimension 0: stride -9223372036854775807 overflows the index range}}
  %0 = tcc.slice %a, start = [0], stride = [-9223372036854775807] : tensor<8xf32> -> tensor<3xf32>
  return
}

// -----

// Tests that pad needs one low and one high entry per dimension.
func.func @pad_count(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{low and high need one entry per dimension}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.pad %a, low = [1], high = [1, 1] : tensor<2x3xf32> -> tensor<4x4xf32>
  return
}

// -----

// Tests that pad rejects negative padding (a slice in disguise).
func.func @pad_negative(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{padding must be non-negative}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.pad %a, low = [0, -1], high = [0, 0] : tensor<2x3xf32> -> tensor<2x2xf32>
  return
}

// -----

// Tests that pad rejects reflect padding of an empty dimension.
func.func @pad_reflect_empty(%a: tensor<0x3xf32>) {
  // expected-error @+2 {{cannot reflect, edge- or wrap-pad an empty dimension}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.pad %a, low = [1, 0], high = [0, 0] {mode = 1 : i32} : tensor<0x3xf32> -> tensor<1x3xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Gathers, scatters, cumsum
//===----------------------------------------------------------------------===//

// Tests that gather rejects an axis out of range.
func.func @gather_axis(%a: tensor<10x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+2 {{axis 2 is out of range for a tensor of rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.gather %a, %i {axis = 2 : i64} : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  return
}

// -----

// Tests that gather rejects float indices.
func.func @gather_float_indices(%a: tensor<10x4xf32>, %i: tensor<3xf32>) {
  // expected-error @+1 {{operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = tcc.gather %a, %i {axis = 0 : i64} : (tensor<10x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  return
}

// -----

// Tests that gather_elements needs indices of the input's rank.
func.func @gather_elements_rank(%a: tensor<2x3xf32>, %i: tensor<2xi64>) {
  // expected-error @+2 {{indices need the input's rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.gather_elements %a, %i {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2xf32>
  return
}

// -----

// Tests that gather_elements rejects an axis out of range.
func.func @gather_elements_axis(%a: tensor<2x3xf32>, %i: tensor<2x1xi64>) {
  // expected-error @+2 {{axis -1 is out of range for a tensor of rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.gather_elements %a, %i {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x1xi64>) -> tensor<2x1xf32>
  return
}

// -----

// Tests that scatter_elements needs indices shaped like the updates.
func.func @scatter_elements_shapes(%a: tensor<3x3xf32>, %i: tensor<2x2xi64>, %u: tensor<2x3xf32>) {
  // expected-error @+1 {{indices and updates need one shape}}
  %0 = tcc.scatter_elements %a, %i, %u {axis = 0 : i64} : tensor<3x3xf32>, tensor<2x2xi64>, tensor<2x3xf32>
  return
}

// -----

// Tests that scatter_elements needs indices of the input's rank.
func.func @scatter_elements_rank(%a: tensor<3x3xf32>, %i: tensor<2xi64>, %u: tensor<2xf32>) {
  // expected-error @+1 {{indices need the input's rank 2}}
  %0 = tcc.scatter_elements %a, %i, %u {axis = 0 : i64} : tensor<3x3xf32>, tensor<2xi64>, tensor<2xf32>
  return
}

// -----

// Tests that scatter_elements rejects an axis out of range.
func.func @scatter_elements_axis(%a: tensor<2x3xf32>, %i: tensor<2x3xi64>) {
  // expected-error @+1 {{axis 2 is out of range}}
  %0 = tcc.scatter_elements %a, %i, %a {axis = 2 : i64} : tensor<2x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>
  return
}

// -----

// Tests that scatter_elements needs updates of the input's element type.
func.func @scatter_elements_update_type(%a: tensor<3xf32>, %i: tensor<2xi64>, %u: tensor<2xf16>) {
  // expected-error @+1 {{failed to verify that all of {input, updates} have same element type}}
  %0 = tcc.scatter_elements %a, %i, %u {axis = 0 : i64} : tensor<3xf32>, tensor<2xi64>, tensor<2xf16>
  return
}

// -----

// Tests that scatter_nd needs indices of rank >= 1.
func.func @scatter_nd_rank0_indices(%a: tensor<4xf32>, %i: tensor<i64>, %u: tensor<f32>) {
  // expected-error @+1 {{indices need rank >= 1}}
  %0 = tcc.scatter_nd %a, %i, %u : tensor<4xf32>, tensor<i64>, tensor<f32>
  return
}

// -----

// Tests that scatter_nd rejects index tuples longer than the input's rank.
func.func @scatter_nd_tuple_length(%a: tensor<4x3xf32>, %i: tensor<2x3xi64>, %u: tensor<2xf32>) {
  // expected-error @+1 {{index tuples of length 3 exceed the input's rank 2}}
  %0 = tcc.scatter_nd %a, %i, %u : tensor<4x3xf32>, tensor<2x3xi64>, tensor<2xf32>
  return
}

// -----

// Tests that scatter_nd needs updates shaped as indices[:-1] + input[k:].
func.func @scatter_nd_updates(%a: tensor<4x3xf32>, %i: tensor<2x1xi64>, %u: tensor<2x4xf32>) {
  // expected-error @+1 {{updates must have shape [2,3]}}
  %0 = tcc.scatter_nd %a, %i, %u : tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x4xf32>
  return
}

// -----

// Tests that cumsum rejects an axis out of range.
func.func @cumsum_axis(%a: tensor<4xf32>) {
  // expected-error @+1 {{axis 1 is out of range}}
  %0 = tcc.cumsum %a {axis = 1 : i64} : tensor<4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

// Tests that reductions need sorted axes.
func.func @reduce_axes_unsorted(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{axes must be sorted and unique}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.reduce_sum %a {axes = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<1x1xf32>
  return
}

// -----

// Tests that reductions need unique axes.
func.func @reduce_axes_repeated(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{axes must be sorted and unique}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.reduce_max %a {axes = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<2x1xf32>
  return
}

// -----

// Tests that reductions reject an axis out of range (negative axes are
// normalized at import).
func.func @reduce_axes_range(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{axis -1 is out of range for a tensor of rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.reduce_mean %a {axes = array<i64: -1>} : tensor<2x3xf32> -> tensor<2x1xf32>
  return
}

// -----

// Tests that a reduction's result type follows keepdims.
func.func @reduce_keepdims_result(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<2xf32>' are incompatible with return type(s) of operation 'tensor<2x1xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.reduce_prod %a {axes = array<i64: 1>, keepdims = false} : tensor<2x3xf32> -> tensor<2x1xf32>
  return
}

// -----

// Tests that argmax rejects an axis out of range.
func.func @argmax_axis(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{axis 2 is out of range for a tensor of rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.argmax %a {axis = 2 : i64} : tensor<2x3xf32> -> tensor<2x3x1xi64>
  return
}

// -----

// Tests that argmin rejects an empty dimension, which has no extremum.
func.func @argmin_empty(%a: tensor<2x0xf32>) {
  // expected-error @+2 {{cannot take an arg-extremum over an empty dimension}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.argmin %a {axis = 1 : i64} : tensor<2x0xf32> -> tensor<2x1xi64>
  return
}

// -----

//===----------------------------------------------------------------------===//
// matmul, conv, conv_transpose, pools
//===----------------------------------------------------------------------===//

// Tests that matmul needs operands of rank >= 2.
func.func @matmul_rank1(%a: tensor<3xf32>, %b: tensor<3x4xf32>) {
  // expected-error @+2 {{operands need one rank >= 2, got [3] and [3,4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.matmul %a, %b : (tensor<3xf32>, tensor<3x4xf32>) -> tensor<4xf32>
  return
}

// -----

// Tests that matmul needs operands of one rank (batch dims are broadcast at
// import).
func.func @matmul_rank_mismatch(%a: tensor<5x2x3xf32>, %b: tensor<3x4xf32>) {
  // expected-error @+2 {{operands need one rank >= 2, got [5,2,3] and [3,4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.matmul %a, %b : (tensor<5x2x3xf32>, tensor<3x4xf32>) -> tensor<5x2x4xf32>
  return
}

// -----

// Tests that matmul needs identical batch dimensions.
func.func @matmul_batch(%a: tensor<5x2x3xf32>, %b: tensor<6x3x4xf32>) {
  // expected-error @+2 {{batch dimensions differ: [5,2,3] and [6,3,4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.matmul %a, %b : (tensor<5x2x3xf32>, tensor<6x3x4xf32>) -> tensor<5x2x4xf32>
  return
}

// -----

// Tests that matmul needs matching contracting dimensions.
func.func @matmul_contract(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+2 {{contracting dimensions differ: [2,3] x [4,5]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return
}

// -----

// Tests that matmul needs one element type.
func.func @matmul_element_types(%a: tensor<2x3xf32>, %b: tensor<3x4xf16>) {
  // expected-error @+1 {{failed to verify that all of {lhs, rhs, result} have same element type}}
  %0 = tcc.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xf16>) -> tensor<2x4xf32>
  return
}

// -----

// Tests that conv needs input and filter of one rank >= 3.
func.func @conv_rank(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3xf32>) {
  // expected-error @+2 {{input [1,4,8,8] and filter [6,4,3] need one rank >= 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.conv %x, %w {dilations = array<i64: 1, 1>, pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

// Tests that conv_backward_filter refuses windows that reach past the padded
// input: (3 - 1) * 2 + (3 - 1) + 1 = 7 rows of an input of 5 + 1.
func.func @conv_backward_filter_windows(%x: tensor<1x4x5x5xf32>, %g: tensor<1x6x3x3xf32>) {
  // expected-error @+2 {{the windows of kernel 3 do not fit spatial dimension 0 of input [1,4,5,5] for gradient [1,6,3,3]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.conv_backward_filter %x, %g {kernel = array<i64: 3, 3>, dilations = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x5x5xf32>, tensor<1x6x3x3xf32>) -> tensor<6x4x3x3xf32>
  return
}

// -----

// Tests that conv needs one window attribute entry per spatial dimension.
func.func @conv_window_attrs(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+2 {{window attributes need 2 entries, one per spatial dimension}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.conv %x, %w {dilations = array<i64: 1>, pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

// Tests that conv needs filter channels equal to input channels / group.
func.func @conv_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<6x3x3x3xf32>) {
  // expected-error @+2 {{input channels 4 and filter [6,3,3,3] do not match with group 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.conv %x, %w {dilations = array<i64: 1, 1>, pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

// Tests that conv needs a group that divides the output channels.
func.func @conv_group(%x: tensor<1x4x8x8xf32>, %w: tensor<6x1x3x3xf32>) {
  // expected-error @+2 {{input channels 4 and filter [6,1,3,3] do not match with group 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.conv %x, %w {dilations = array<i64: 1, 1>, group = 4 : i64, pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

// Tests that conv rejects a group of zero.
func.func @conv_group_zero(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+2 {{do not match with group 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.conv %x, %w {dilations = array<i64: 1, 1>, group = 0 : i64, pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

// Tests that conv rejects a dilated filter larger than the padded input.
func.func @conv_window_fit(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+2 {{the filter does not fit spatial dimension 1 of input [1,4,8,8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.conv %x, %w {dilations = array<i64: 1, 4>, pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x1xf32>
  return
}

// -----

// Tests that conv rejects a zero stride.
func.func @conv_zero_stride(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+2 {{the filter does not fit spatial dimension 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.conv %x, %w {dilations = array<i64: 1, 1>, pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 0, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

// Tests that conv checks its result against the output size formula.
func.func @conv_result(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<1x6x3x3xf32>' are incompatible with return type(s) of operation 'tensor<1x6x6x6xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.conv %x, %w {dilations = array<i64: 1, 1>, pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

// Tests that conv_transpose needs input and filter of one rank >= 3.
func.func @conv_transpose_rank(%x: tensor<1x2xf32>, %w: tensor<2x4xf32>) {
  // expected-error @+2 {{input and filter need one rank >= 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.conv_transpose %x, %w {dilations = array<i64>, output_padding = array<i64>, pad_high = array<i64>, pad_low = array<i64>, strides = array<i64>} : (tensor<1x2xf32>, tensor<2x4xf32>) -> tensor<1x4xf32>
  return
}

// -----

// Tests that conv_transpose needs one output_padding entry per spatial
// dimension.
func.func @conv_transpose_window_attrs(%x: tensor<1x2x3xf32>, %w: tensor<2x4x3xf32>) {
  // expected-error @+2 {{window attributes need 1 entries, one per spatial dimension}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.conv_transpose %x, %w {dilations = array<i64: 1>, output_padding = array<i64>, pad_high = array<i64: 0>, pad_low = array<i64: 0>, strides = array<i64: 2>} : (tensor<1x2x3xf32>, tensor<2x4x3xf32>) -> tensor<1x4x7xf32>
  return
}

// -----

// Tests that conv_transpose needs filter dimension 0 equal to input channels.
func.func @conv_transpose_channels(%x: tensor<1x2x3xf32>, %w: tensor<3x4x3xf32>) {
  // expected-error @+2 {{input channels 2 do not match filter [3,4,3] with group 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.conv_transpose %x, %w {dilations = array<i64: 1>, output_padding = array<i64: 0>, pad_high = array<i64: 0>, pad_low = array<i64: 0>, strides = array<i64: 2>} : (tensor<1x2x3xf32>, tensor<3x4x3xf32>) -> tensor<1x4x7xf32>
  return
}

// -----

// Tests that conv_transpose needs a group that divides the input channels.
func.func @conv_transpose_group(%x: tensor<1x2x3xf32>, %w: tensor<2x4x3xf32>) {
  // expected-error @+2 {{input channels 2 do not match filter [2,4,3] with group 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.conv_transpose %x, %w {dilations = array<i64: 1>, group = 3 : i64, output_padding = array<i64: 0>, pad_high = array<i64: 0>, pad_low = array<i64: 0>, strides = array<i64: 2>} : (tensor<1x2x3xf32>, tensor<2x4x3xf32>) -> tensor<1x12x7xf32>
  return
}

// -----

// Tests that conv_transpose rejects padding that empties the output.
func.func @conv_transpose_empty(%x: tensor<1x2x1xf32>, %w: tensor<2x4x1xf32>) {
  // expected-error @+2 {{empty output in spatial dimension 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.conv_transpose %x, %w {dilations = array<i64: 1>, output_padding = array<i64: 0>, pad_high = array<i64: 1>, pad_low = array<i64: 0>, strides = array<i64: 1>} : (tensor<1x2x1xf32>, tensor<2x4x1xf32>) -> tensor<1x4x1xf32>
  return
}

// -----

// Tests that pools need an input of rank >= 3.
func.func @pool_rank(%x: tensor<4x4xf32>) {
  // expected-error @+2 {{pooling needs an input of rank >= 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.max_pool %x {dilations = array<i64>, kernel = array<i64>, pad_high = array<i64>, pad_low = array<i64>, strides = array<i64>} : tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

// Tests that pools need one kernel entry per spatial dimension.
func.func @pool_window_attrs(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+2 {{window attributes need 2 entries, one per spatial dimension}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.max_pool %x {dilations = array<i64: 1, 1>, kernel = array<i64: 2>, pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 2, 2>} : tensor<1x1x4x4xf32> -> tensor<1x1x2x2xf32>
  return
}

// -----

// Tests that max_pool rejects low padding as wide as the window.
func.func @max_pool_padding(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+2 {{padding of spatial dimension 1 is not smaller than the window}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.max_pool %x {dilations = array<i64: 1, 1>, kernel = array<i64: 2, 2>, pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 2>, strides = array<i64: 2, 2>} : tensor<1x1x4x4xf32> -> tensor<1x1x2x3xf32>
  return
}

// -----

// Tests that avg_pool rejects high padding as wide as the window.
func.func @avg_pool_padding(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+2 {{padding of spatial dimension 0 is not smaller than the window}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.avg_pool %x {dilations = array<i64: 1, 1>, kernel = array<i64: 3, 3>, pad_high = array<i64: 3, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 1, 1>} : tensor<1x1x4x4xf32> -> tensor<1x1x5x2xf32>
  return
}

// -----

// Tests that a dilated window counts its span, not its kernel size times the
// dilation: with kernel 2 and dilation 2 the window spans 3 elements, so a low
// padding of 3 makes the first window all padding.
func.func @max_pool_dilated_padding(%x: tensor<1x1x8xf32>) {
  // expected-error @+2 {{padding of spatial dimension 0 is not smaller than the window}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.max_pool %x {dilations = array<i64: 2>, kernel = array<i64: 2>, pad_high = array<i64: 0>, pad_low = array<i64: 3>, strides = array<i64: 2>} : tensor<1x1x8xf32> -> tensor<1x1x5xf32>
  return
}

// -----

// Tests that pools reject a window larger than the padded input.
func.func @pool_window_fit(%x: tensor<1x1x2x2xf32>) {
  // expected-error @+2 {{the window does not fit spatial dimension 0 of input [1,1,2,2]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.avg_pool %x {dilations = array<i64: 1, 1>, kernel = array<i64: 3, 1>, pad_high = array<i64: 0, 0>, pad_low = array<i64: 0, 0>, strides = array<i64: 1, 1>} : tensor<1x1x2x2xf32> -> tensor<1x1x1x2xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Normalization, softmax, dropout, resize, loss
//===----------------------------------------------------------------------===//

// Tests that batch_norm_inference needs per-channel parameters of shape [C].
func.func @batch_norm_inference_channels(%x: tensor<2x3x4xf32>, %p: tensor<4xf32>) {
  // expected-error @+1 {{per-channel parameters must have shape [3], got [4]}}
  %0 = tcc.batch_norm_inference %x, %p, %p, %p, %p {epsilon = 1.0e-05 : f64} : tensor<2x3x4xf32>, tensor<4xf32>
  return
}

// -----

// Tests that batch_norm_inference needs an input of rank >= 2.
func.func @batch_norm_inference_rank(%x: tensor<3xf32>, %p: tensor<3xf32>) {
  // expected-error @+1 {{batch norm needs an input of rank >= 2}}
  %0 = tcc.batch_norm_inference %x, %p, %p, %p, %p {epsilon = 1.0e-05 : f64} : tensor<3xf32>, tensor<3xf32>
  return
}

// -----

// Tests that batch_norm_inference needs all four parameters of one type.
func.func @batch_norm_inference_param_types(%x: tensor<2x3xf32>, %p: tensor<3xf32>, %q: tensor<1x3xf32>) {
  // expected-error @+1 {{failed to verify that all of {scale, bias, mean, variance} have same type}}
  %0 = "tcc.batch_norm_inference"(%x, %p, %p, %q, %p) <{epsilon = 1.0e-05 : f64}> : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return
}

// -----

// Tests that batch_norm_training needs per-channel parameters of shape [C].
func.func @batch_norm_training_channels(%x: tensor<2x3x4xf32>, %p: tensor<1x3xf32>) {
  // expected-error @+1 {{per-channel parameters must have shape [3], got [1,3]}}
  %0:3 = tcc.batch_norm_training %x, %p, %p {epsilon = 1.0e-05 : f64} : tensor<2x3x4xf32>, tensor<1x3xf32>
  return
}

// -----

// Tests that layer_norm rejects an axis out of range.
func.func @layer_norm_axis(%x: tensor<2x4xf32>, %g: tensor<4xf32>) {
  // expected-error @+2 {{axis 2 is out of range for a tensor of rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:3 = tcc.layer_norm %x, %g {axis = 2 : i64, epsilon = 1.0e-05 : f64} : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x1xf32>
  return
}

// -----

// Tests that layer_norm needs a scale shaped like the normalized dimensions.
func.func @layer_norm_scale(%x: tensor<2x3x4xf32>, %g: tensor<4xf32>) {
  // expected-error @+2 {{scale and bias must have shape [3,4], got [4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:3 = tcc.layer_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-05 : f64} : tensor<2x3x4xf32>, tensor<4xf32> -> tensor<2x3x4xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>
  return
}

// -----

// Tests that layer_norm needs a bias shaped like the normalized dimensions.
func.func @layer_norm_bias(%x: tensor<2x4xf32>, %g: tensor<4xf32>, %b: tensor<1x4xf32>) {
  // expected-error @+2 {{scale and bias must have shape [4], got [1,4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:3 = tcc.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 1.0e-05 : f64} : tensor<2x4xf32>, tensor<4xf32>, tensor<1x4xf32> -> tensor<2x4xf32>, tensor<2x1xf32>, tensor<2x1xf32>
  return
}

// -----

// Tests that layer_norm checks its statistics' shape.
func.func @layer_norm_stats(%x: tensor<2x4xf32>, %g: tensor<4xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<2x4xf32>', 'tensor<2x1xf32>', 'tensor<2x1xf32>' are incompatible with return type(s) of operation 'tensor<2x4xf32>', 'tensor<2xf32>', 'tensor<2xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:3 = tcc.layer_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-05 : f64} : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>, tensor<2xf32>, tensor<2xf32>
  return
}

// -----

// Tests that softmax rejects an axis out of range.
func.func @softmax_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 2 is out of range}}
  %0 = tcc.softmax %x {axis = 2 : i64} : tensor<2x3xf32>
  return
}

// -----

// Tests that log_softmax rejects a negative axis.
func.func @log_softmax_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axis -1 is out of range}}
  %0 = tcc.log_softmax %x {axis = -1 : i64} : tensor<2x3xf32>
  return
}

// -----

// Tests that a uniform tcc.random needs a <= b.
func.func @random_uniform_reversed() {
  // expected-error @+1 {{uniform needs a <= b, got [1.000000e+00, 0.000000e+00)}}
  %0 = tcc.random {a = 1.0 : f64, b = 0.0 : f64, distribution = 0 : i32, stream = 0 : i64} : tensor<4xf32>
  return
}

// -----

// Tests that a normal tcc.random needs a standard deviation b >= 0.
func.func @random_normal_negative() {
  // expected-error @+1 {{normal needs a standard deviation b >= 0, got -2.000000e+00}}
  %0 = tcc.random {a = 0.0 : f64, b = -2.0 : f64, distribution = 1 : i32, stream = 0 : i64} : tensor<4xf32>
  return
}

// -----

// Tests that tcc.random's rng is [seed, counter].
func.func @random_rng_shape(%rng: tensor<3xi64>) {
  // expected-error @+1 {{rng must be [seed, counter], a tensor<2xi64>, not 'tensor<3xi64>'}}
  %0 = tcc.random rng(%rng : tensor<3xi64>) {a = 0.0 : f64, b = 1.0 : f64, distribution = 0 : i32, stream = 0 : i64} : tensor<4xf32>
  return
}

// -----

// Tests that dropout rejects a ratio of 1 (nothing kept, infinite scale).
func.func @dropout_ratio_one(%x: tensor<4xf32>) {
  // expected-error @+1 {{ratio must be in [0, 1), got 1.000000e+00}}
  %0:2 = tcc.dropout %x {ratio = 1.0 : f64, stream = 0 : i64} : tensor<4xf32>
  return
}

// -----

// Tests that dropout rejects a negative ratio.
func.func @dropout_ratio_negative(%x: tensor<4xf32>) {
  // expected-error @+1 {{ratio must be in [0, 1), got -5.000000e-01}}
  %0:2 = tcc.dropout %x {ratio = -0.5 : f64, stream = 0 : i64} : tensor<4xf32>
  return
}

// -----

// Tests that resize needs one scale per dimension.
func.func @resize_scales_count(%x: tensor<1x1x2x2xf32>) {
  // expected-error @+1 {{scales and result need the input's rank 4}}
  %0 = tcc.resize %x {scales = array<f64: 2.0, 2.0>} : tensor<1x1x2x2xf32> -> tensor<1x1x4x4xf32>
  return
}

// -----

// Tests that resize needs a result of the input's rank.
func.func @resize_result_rank(%x: tensor<1x1x2x2xf32>) {
  // expected-error @+1 {{scales and result need the input's rank 4}}
  %0 = tcc.resize %x {scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : tensor<1x1x2x2xf32> -> tensor<1x4x4xf32>
  return
}

// -----

// Tests that resize rejects a non-positive scale.
func.func @resize_scale_zero(%x: tensor<1x1x2x2xf32>) {
  // expected-error @+1 {{scale 2 must be positive, got 0}}
  %0 = tcc.resize %x {scales = array<f64: 1.0, 1.0, 0.0, 2.0>} : tensor<1x1x2x2xf32> -> tensor<1x1x0x4xf32>
  return
}

// -----

// Tests that nll_loss needs an input of rank >= 2.
func.func @nll_loss_rank(%x: tensor<10xf32>, %t: tensor<i64>) {
  // expected-error @+2 {{input needs rank >= 2 ([N, C, ...])}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.nll_loss %x, %t : (tensor<10xf32>, tensor<i64>) -> tensor<f32>
  return
}

// -----

// Tests that nll_loss needs a target of shape [N, d1..].
func.func @nll_loss_target(%x: tensor<4x10x5xf32>, %t: tensor<4xi64>) {
  // expected-error @+2 {{target must have shape [4,5], got [4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.nll_loss %x, %t : (tensor<4x10x5xf32>, tensor<4xi64>) -> tensor<f32>
  return
}

// -----

// Tests that nll_loss needs a weight of shape [C].
func.func @nll_loss_weight(%x: tensor<4x10xf32>, %t: tensor<4xi64>, %w: tensor<4xf32>) {
  // expected-error @+2 {{weight must have shape [10]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.nll_loss %x, %t, %w : (tensor<4x10xf32>, tensor<4xi64>, tensor<4xf32>) -> tensor<f32>
  return
}

// -----

// Tests that nll_loss without reduction returns one loss per position.
func.func @nll_loss_unreduced_result(%x: tensor<4x10xf32>, %t: tensor<4xi64>) {
  // expected-error @+2 {{inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<f32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = tcc.nll_loss %x, %t {reduction = 0 : i32} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  return
}

// -----

// Tests that tcc ops take statically shaped tensors only.
func.func @dynamic_shape(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor}}
  %y = tcc.exp %x : tensor<?xf32>
  return %y : tensor<?xf32>
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

// -----

// Tests that an all-reduce averages floats only.
func.func @all_reduce_integer(%a: tensor<4xi32>) {
  // expected-error @+1 {{operand #0 must be variadic of}}
  %0 = tcc.all_reduce %a {bucket = 0 : i64} : tensor<4xi32> -> tensor<4xi32>
  return
}

// -----

// Tests that an all-reduce of f64 values is refused (the runtimes sum f32,
// f16 and bf16).
func.func @all_reduce_f64(%a: tensor<4xf64>) {
  // expected-error @+1 {{averages f32, f16 or bf16 values, not 'f64'}}
  %0 = tcc.all_reduce %a {bucket = 0 : i64} : tensor<4xf64> -> tensor<4xf64>
  return
}

// -----

// Tests that the tensor form has one result per operand, of its type.
func.func @all_reduce_result_type(%a: tensor<4xf32>) {
  // expected-error @+1 {{result 0 has type 'tensor<2x2xf32>', its operand 'tensor<4xf32>'}}
  %0 = tcc.all_reduce %a {bucket = 0 : i64} : tensor<4xf32> -> tensor<2x2xf32>
  return
}

// -----

// Tests that tensor and buffer operands do not mix.
func.func @all_reduce_mixed(%a: tensor<4xf32>, %m: memref<4xf32>) {
  // expected-error @+1 {{mixes tensor and buffer operands}}
  "tcc.all_reduce"(%a, %m) {bucket = 0 : i64} : (tensor<4xf32>, memref<4xf32>) -> tensor<4xf32>
  return
}

// -----

// Tests that the form on buffers has no results.
func.func @all_reduce_buffer_results(%m: memref<4xf32>) {
  // expected-error @+1 {{result #0 must be variadic of}}
  %0 = "tcc.all_reduce"(%m) {bucket = 0 : i64} : (memref<4xf32>) -> memref<4xf32>
  return
}
