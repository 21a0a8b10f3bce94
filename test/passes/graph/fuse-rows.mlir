// RUN: tcc-opt --split-input-file --tcc-fuse-rows %s | FileCheck %s
// RUN: tcc-opt --split-input-file --tcc-fuse-rows=min-parallel-work=1 %s | FileCheck %s --check-prefix=PAR
// The run as loops: the fill is absorbed, nothing forks inside the rows.
// RUN: tcc-opt --split-input-file --tcc-fuse-rows=min-parallel-work=1 --tcc-linalg-to-cpu-loops=min-parallel-work=1 %s | FileCheck %s --check-prefix=LOOPS

#x = affine_map<(d0, d1) -> (d0, d1)>
#r = affine_map<(d0, d1) -> (d0)>
#c = affine_map<(d0, d1) -> (d1)>

// A softmax (max, exp-sum, normalize: two reductions with their fills and
// an epilogue) over 64 rows of 128 becomes one loop over the rows; each op
// works on its row's subview (a fill and the reduction it starts share
// one); the allocations stay before the loop.
// CHECK-LABEL: func.func @softmax
// CHECK-COUNT-3: memref.alloc
// CHECK: scf.for %[[I:.*]] =
// CHECK: %[[M:.*]] = memref.subview %{{.*}}[%[[I]]] [1] [1] : memref<64xf32> to memref<f32, strided<[], offset: ?>>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[M]] :
// CHECK: %[[X:.*]] = memref.subview %{{.*}}[%[[I]], 0] [1, 128] [1, 1] : memref<64x128xf32> to memref<128xf32, strided<[1], offset: ?>>
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[X]] : {{.*}}) outs(%[[M]] :
// CHECK: linalg.fill
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]}
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel"]}
// CHECK-NOT: linalg.generic
// CHECK: memref.copy
// CHECK-NEXT: return
// PAR-LABEL: func.func @softmax
// PAR: scf.parallel
// LOOPS-LABEL: func.func @softmax
// LOOPS: scf.parallel
// LOOPS-NOT: linalg.fill
// LOOPS-NOT: scf.parallel
// LOOPS: return
func.func @softmax(%a: memref<64x128xf32>, %out: memref<64x128xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %max = memref.alloc() : memref<64xf32>
  linalg.fill ins(%ninf : f32) outs(%max : memref<64xf32>)
  linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<64x128xf32>) outs(%max : memref<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %m = arith.maximumf %acc, %v : f32
    linalg.yield %m : f32
  }
  %sum = memref.alloc() : memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<64xf32>)
  linalg.generic {indexing_maps = [#x, #r, #r], iterator_types = ["parallel", "reduction"]}
      ins(%a, %max : memref<64x128xf32>, memref<64xf32>) outs(%sum : memref<64xf32>) {
  ^bb0(%v: f32, %m: f32, %acc: f32):
    %d = arith.subf %v, %m : f32
    %e = math.exp %d : f32
    %s = arith.addf %acc, %e : f32
    linalg.yield %s : f32
  }
  %tmp = memref.alloc() : memref<64x128xf32>
  linalg.generic {indexing_maps = [#x, #r, #r, #x], iterator_types = ["parallel", "parallel"]}
      ins(%a, %max, %sum : memref<64x128xf32>, memref<64xf32>, memref<64xf32>) outs(%tmp : memref<64x128xf32>) {
  ^bb0(%v: f32, %m: f32, %s: f32, %o: f32):
    %d = arith.subf %v, %m : f32
    %e = math.exp %d : f32
    %q = arith.divf %e, %s : f32
    linalg.yield %q : f32
  }
  memref.copy %tmp, %out : memref<64x128xf32> to memref<64x128xf32>
  return
}

// -----

#x = affine_map<(d0, d1) -> (d0, d1)>
#r = affine_map<(d0, d1) -> (d0)>
#c = affine_map<(d0, d1) -> (d1)>

// Must not fuse:
//  - an epilogue that writes a function argument (a parameter update or an
//    output keeps its kernel): the run is the fill and the reduction only,
//    one op besides the fill, so nothing changes;
//  - an op reading a buffer the run writes across rows (the sums by
//    column): the run ends before it;
//  - a column reduction (its parallel loop is not leading).
// CHECK-LABEL: func.func @writes_argument
// CHECK-NOT: scf.for
// CHECK: return
// CHECK-LABEL: func.func @cross_row_reader
// CHECK: scf.for
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel"]}
// CHECK: linalg.fill
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]}
// CHECK: }
// CHECK-NEXT: }
// CHECK-NEXT: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]}
// CHECK: return
// CHECK-LABEL: func.func @column_sum
// CHECK-NOT: scf.for
// CHECK: return
func.func @writes_argument(%a: memref<64x128xf32>, %out: memref<64x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %sum = memref.alloc() : memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<64xf32>)
  linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<64x128xf32>) outs(%sum : memref<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#x, #r, #x], iterator_types = ["parallel", "parallel"]}
      ins(%a, %sum : memref<64x128xf32>, memref<64xf32>) outs(%out : memref<64x128xf32>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %q = arith.divf %v, %s : f32
    linalg.yield %q : f32
  }
  return
}
func.func @cross_row_reader(%a: memref<64x64xf32>, %out: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %sq = memref.alloc() : memref<64x64xf32>
  %sum = memref.alloc() : memref<64xf32>
  %t = memref.alloc() : memref<64x64xf32>
  linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<64x64xf32>) outs(%sq : memref<64x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.mulf %v, %v : f32
    linalg.yield %m : f32
  }
  linalg.fill ins(%zero : f32) outs(%sum : memref<64xf32>)
  linalg.generic {indexing_maps = [#x, #r], iterator_types = ["parallel", "reduction"]}
      ins(%sq : memref<64x64xf32>) outs(%sum : memref<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#x, #c, #x], iterator_types = ["parallel", "parallel"]}
      ins(%a, %sum : memref<64x64xf32>, memref<64xf32>) outs(%t : memref<64x64xf32>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %q = arith.divf %v, %s : f32
    linalg.yield %q : f32
  }
  memref.copy %t, %out : memref<64x64xf32> to memref<64x64xf32>
  return
}
func.func @column_sum(%a: memref<64x128xf32>, %out: memref<128xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = memref.alloc() : memref<64x128xf32>
  linalg.generic {indexing_maps = [#x, #x], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<64x128xf32>) outs(%e : memref<64x128xf32>) {
  ^bb0(%v: f32, %o: f32):
    %x = math.exp %v : f32
    linalg.yield %x : f32
  }
  %sum = memref.alloc() : memref<128xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<128xf32>)
  linalg.generic {indexing_maps = [#x, #c], iterator_types = ["reduction", "parallel"]}
      ins(%e : memref<64x128xf32>) outs(%sum : memref<128xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  memref.copy %sum, %out : memref<128xf32> to memref<128xf32>
  return
}

// -----

#u = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#s = affine_map<(d0, d1, d2, d3) -> ()>

// An update run: a parameter's update (an elementwise op writing a function
// argument) with the op after it that reads the new value through a window
// keeping the rows whole (a trimmed filter's 16-bit copy, its centre tap)
// is one loop over the update's leading dimension. The run ends at the
// last op reading such a window: the copy of the whole filter after it
// keeps its kernel.
// CHECK-LABEL: func.func @update_window
// CHECK: %[[TAP:.*]] = memref.subview %{{.*}}[0, 0, 1, 1] [64, 8, 1, 1] [1, 1, 1, 1]
// CHECK: scf.for %[[I:.*]] = %c0 to %c64
// CHECK: %[[ROW:.*]] = memref.subview %arg0[%[[I]], 0, 0, 0] [1, 8, 3, 3] [1, 1, 1, 1] : memref<64x8x3x3xf32> to memref<8x3x3xf32, strided<[9, 3, 1], offset: ?>>
// CHECK: linalg.generic {{.*}} outs(%[[ROW]] :
// CHECK: %[[TAPROW:.*]] = memref.subview %[[TAP]][%[[I]], 0, 0, 0] [1, 8, 1, 1] [1, 1, 1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[TAPROW]] :
// CHECK: }
// CHECK-NEXT: }
// CHECK-NEXT: linalg.generic {{.*}} ins(%{{.*}} : memref<64x8x3x3xf32>)
// CHECK: return
// The row of the update is one vector loop over its 72 elements.
// LOOPS-LABEL: func.func @update_window
// LOOPS: scf.parallel
// LOOPS: memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}], sizes: [72], strides: [1]
// LOOPS: vector.transfer_read
// Not an update run:
//  - an update whose readers read the parameter as it was written (no
//    window: elementwise fusion's business);
//  - a window that does not keep the rows whole (from row 1).
// CHECK-LABEL: func.func @update_no_window
// CHECK-NOT: scf.for
// CHECK: return
// CHECK-LABEL: func.func @update_row_window
// CHECK-NOT: scf.for
// CHECK: return
func.func @update_window(%w: memref<64x8x3x3xf32>, %g: memref<64x8x3x3xf32>, %lr: memref<f32>,
                         %copy: memref<64x8x1x1xbf16>, %whole: memref<64x8x3x3xbf16>) {
  linalg.generic {indexing_maps = [#s, #u, #u], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%lr, %g : memref<f32>, memref<64x8x3x3xf32>) outs(%w : memref<64x8x3x3xf32>) {
  ^bb0(%l: f32, %d: f32, %v: f32):
    %p = arith.mulf %l, %d : f32
    %n = arith.subf %v, %p : f32
    linalg.yield %n : f32
  }
  %tap = memref.subview %w[0, 0, 1, 1] [64, 8, 1, 1] [1, 1, 1, 1] : memref<64x8x3x3xf32> to memref<64x8x1x1xf32, strided<[72, 9, 3, 1], offset: 4>>
  linalg.generic {indexing_maps = [#u, #u], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%tap : memref<64x8x1x1xf32, strided<[72, 9, 3, 1], offset: 4>>) outs(%copy : memref<64x8x1x1xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  }
  linalg.generic {indexing_maps = [#u, #u], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%w : memref<64x8x3x3xf32>) outs(%whole : memref<64x8x3x3xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}
func.func @update_no_window(%w: memref<64x8x3x3xf32>, %g: memref<64x8x3x3xf32>, %lr: memref<f32>,
                            %whole: memref<64x8x3x3xbf16>) {
  linalg.generic {indexing_maps = [#s, #u, #u], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%lr, %g : memref<f32>, memref<64x8x3x3xf32>) outs(%w : memref<64x8x3x3xf32>) {
  ^bb0(%l: f32, %d: f32, %v: f32):
    %p = arith.mulf %l, %d : f32
    %n = arith.subf %v, %p : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#u, #u], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%w : memref<64x8x3x3xf32>) outs(%whole : memref<64x8x3x3xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}
func.func @update_row_window(%w: memref<64x8x3x3xf32>, %g: memref<64x8x3x3xf32>, %lr: memref<f32>,
                             %copy: memref<63x8x1x1xbf16>) {
  linalg.generic {indexing_maps = [#s, #u, #u], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%lr, %g : memref<f32>, memref<64x8x3x3xf32>) outs(%w : memref<64x8x3x3xf32>) {
  ^bb0(%l: f32, %d: f32, %v: f32):
    %p = arith.mulf %l, %d : f32
    %n = arith.subf %v, %p : f32
    linalg.yield %n : f32
  }
  %tap = memref.subview %w[1, 0, 1, 1] [63, 8, 1, 1] [1, 1, 1, 1] : memref<64x8x3x3xf32> to memref<63x8x1x1xf32, strided<[72, 9, 3, 1], offset: 76>>
  linalg.generic {indexing_maps = [#u, #u], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%tap : memref<63x8x1x1xf32, strided<[72, 9, 3, 1], offset: 76>>) outs(%copy : memref<63x8x1x1xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}

// -----

#u = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#s = affine_map<(d0, d1, d2, d3) -> ()>

// An update run takes, before the update, the ops that write what it reads:
// the zero pad of its 16-bit gradient (a fill of the whole filter and a
// copy into the taps' window, moved to the update by the lowering) runs row
// by row with it, as generics.
// CHECK-LABEL: func.func @update_padded_gradient
// CHECK: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: scf.for %[[I:.*]] = %c0 to %c64
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : memref<8x3x3xbf16, strided<[9, 3, 1], offset: ?>>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<8x1x1xbf16, strided<[1, 1, 1], offset: ?>>) outs(%{{.*}} : memref<8x1x1xbf16, strided<[9, 3, 1], offset: ?>>)
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : memref<8x3x3xf32, strided<[9, 3, 1], offset: ?>>)
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : memref<8x1x1xbf16, strided<[1, 1, 1], offset: ?>>)
// CHECK: }
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @update_padded_gradient(%w: memref<64x8x3x3xf32>, %g: memref<64x8x1x1xbf16>, %lr: memref<f32>,
                                  %copy: memref<64x8x1x1xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %pad = memref.alloc() : memref<64x8x3x3xbf16>
  linalg.map outs(%pad : memref<64x8x3x3xbf16>)
    (%init: bf16) {
      linalg.yield %zero : bf16
    }
  %window = memref.subview %pad[0, 0, 1, 1] [64, 8, 1, 1] [1, 1, 1, 1] : memref<64x8x3x3xbf16> to memref<64x8x1x1xbf16, strided<[72, 9, 3, 1], offset: 4>>
  memref.copy %g, %window : memref<64x8x1x1xbf16> to memref<64x8x1x1xbf16, strided<[72, 9, 3, 1], offset: 4>>
  linalg.generic {indexing_maps = [#s, #u, #u], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%lr, %pad : memref<f32>, memref<64x8x3x3xbf16>) outs(%w : memref<64x8x3x3xf32>) {
  ^bb0(%l: f32, %d: bf16, %v: f32):
    %e = arith.extf %d : bf16 to f32
    %p = arith.mulf %l, %e : f32
    %n = arith.subf %v, %p : f32
    linalg.yield %n : f32
  }
  %tap = memref.subview %w[0, 0, 1, 1] [64, 8, 1, 1] [1, 1, 1, 1] : memref<64x8x3x3xf32> to memref<64x8x1x1xf32, strided<[72, 9, 3, 1], offset: 4>>
  linalg.generic {indexing_maps = [#u, #u], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%tap : memref<64x8x1x1xf32, strided<[72, 9, 3, 1], offset: 4>>) outs(%copy : memref<64x8x1x1xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  }
  return
}
