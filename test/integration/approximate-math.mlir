// The f32 polynomial approximations of --tcc-approximate-math against f64
// libm on 100,000 points per function: the largest error (relative where
// |f(x)| >= 1e-3, absolute below) must stay under 5e-7, about 4 ulp.
// Measured when written: exp 8.0e-8, expm1 1.7e-7, log 7.6e-8, log1p 1.6e-7,
// log2 1.1e-7, tanh 2.6e-7, erf 2.4e-7 (upstream's; tcc's rational erf:
// 3.1e-7).
//
// RUN: tcc-opt %s --tcc-approximate-math | FileCheck %s --check-prefix=IR
// RUN: tcc-opt %s --tcc-approximate-math %tcc_lower_to_llvm \
// RUN: | mlir-runner -e main -entry-point-result=void %mlir_runner_libs \
// RUN: | FileCheck %s

// The f32 ops become arithmetic (no libm call left to block vectorization);
// f64 keeps libm's correctly rounded function; f16 is computed in f32.
// IR-LABEL: func.func @shapes
// IR-NOT: math.exp {{.*}} : f32
// IR: math.exp {{.*}} : f64
// IR: arith.extf {{.*}} : f16 to f32
// IR-NOT: math.tanh {{.*}} : vector<8xf32>
// IR: return
func.func @shapes(%a: f32, %b: f64, %c: f16, %d: vector<8xf32>) -> (f32, f64, f16, vector<8xf32>) {
  %0 = math.exp %a : f32
  %1 = math.exp %b : f64
  %2 = math.erf %c : f16
  %3 = math.tanh %d : vector<8xf32>
  return %0, %1, %2, %3 : f32, f64, f16, vector<8xf32>
}

// CHECK: exp 1
// CHECK-NEXT: expm1 1
// CHECK-NEXT: exp2 1
// CHECK-NEXT: log 1
// CHECK-NEXT: log1p 1
// CHECK-NEXT: log2 1
// CHECK-NEXT: tanh 1
// CHECK-NEXT: erf 1

// Largest error of f32 exp over [-87.0, 88.0] (uniform grid)
// against f64 libm, relative where |f(x)| >= 1e-3 and absolute below.
func.func @err_exp() -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 100000 : index
  %nf = arith.constant 100000.0 : f64
  %lo = arith.constant -8.70000000000000000e+01 : f64
  %span = arith.constant 1.75000000000000000e+02 : f64
  %floor = arith.constant 1.0e-3 : f64
  %zero = arith.constant 0.0 : f64
  %max = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f64 {
      %ii = arith.index_cast %i : index to i64
      %fi = arith.sitofp %ii : i64 to f64
      %r = arith.divf %fi, %nf : f64
      %l = arith.mulf %r, %span : f64
      %x64 = arith.addf %lo, %l : f64
      %x = arith.truncf %x64 : f64 to f32
      %xe = arith.extf %x : f32 to f64
      %a = math.exp %x : f32
      %a64 = arith.extf %a : f32 to f64
      %ref = math.exp %xe : f64
      %d = arith.subf %a64, %ref : f64
      %ad = math.absf %d : f64
      %ar = math.absf %ref : f64
      %den = arith.maximumf %ar, %floor : f64
      %err = arith.divf %ad, %den : f64
      %m = arith.maximumf %acc, %err : f64
      scf.yield %m : f64
  }
  return %max : f64
}

// Largest error of f32 expm1 over [-10.0, 10.0] (uniform grid)
// against f64 libm, relative where |f(x)| >= 1e-3 and absolute below.
func.func @err_expm1() -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 100000 : index
  %nf = arith.constant 100000.0 : f64
  %lo = arith.constant -1.00000000000000000e+01 : f64
  %span = arith.constant 2.00000000000000000e+01 : f64
  %floor = arith.constant 1.0e-3 : f64
  %zero = arith.constant 0.0 : f64
  %max = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f64 {
      %ii = arith.index_cast %i : index to i64
      %fi = arith.sitofp %ii : i64 to f64
      %r = arith.divf %fi, %nf : f64
      %l = arith.mulf %r, %span : f64
      %x64 = arith.addf %lo, %l : f64
      %x = arith.truncf %x64 : f64 to f32
      %xe = arith.extf %x : f32 to f64
      %a = math.expm1 %x : f32
      %a64 = arith.extf %a : f32 to f64
      %ref = math.expm1 %xe : f64
      %d = arith.subf %a64, %ref : f64
      %ad = math.absf %d : f64
      %ar = math.absf %ref : f64
      %den = arith.maximumf %ar, %floor : f64
      %err = arith.divf %ad, %den : f64
      %m = arith.maximumf %acc, %err : f64
      scf.yield %m : f64
  }
  return %max : f64
}

// Largest error of f32 exp2 over [-125.0, 127.0] (uniform grid)
// against f64 libm, relative where |f(x)| >= 1e-3 and absolute below.
func.func @err_exp2() -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 100000 : index
  %nf = arith.constant 100000.0 : f64
  %lo = arith.constant -1.25000000000000000e+02 : f64
  %span = arith.constant 2.52000000000000000e+02 : f64
  %floor = arith.constant 1.0e-3 : f64
  %zero = arith.constant 0.0 : f64
  %max = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f64 {
      %ii = arith.index_cast %i : index to i64
      %fi = arith.sitofp %ii : i64 to f64
      %r = arith.divf %fi, %nf : f64
      %l = arith.mulf %r, %span : f64
      %x64 = arith.addf %lo, %l : f64
      %x = arith.truncf %x64 : f64 to f32
      %xe = arith.extf %x : f32 to f64
      %a = math.exp2 %x : f32
      %a64 = arith.extf %a : f32 to f64
      %ref = math.exp2 %xe : f64
      %d = arith.subf %a64, %ref : f64
      %ad = math.absf %d : f64
      %ar = math.absf %ref : f64
      %den = arith.maximumf %ar, %floor : f64
      %err = arith.divf %ad, %den : f64
      %m = arith.maximumf %acc, %err : f64
      scf.yield %m : f64
  }
  return %max : f64
}

// Largest error of f32 log over [1e-30, 1e+30] (geometric grid)
// against f64 libm, relative where |f(x)| >= 1e-3 and absolute below.
func.func @err_log() -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 100000 : index
  %nf = arith.constant 100000.0 : f64
  %lo = arith.constant 1.00000000000000008e-30 : f64
  %span = arith.constant 1.38155105579642736e+02 : f64
  %floor = arith.constant 1.0e-3 : f64
  %zero = arith.constant 0.0 : f64
  %max = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f64 {
      %ii = arith.index_cast %i : index to i64
      %fi = arith.sitofp %ii : i64 to f64
      %r = arith.divf %fi, %nf : f64
      %l = arith.mulf %r, %span : f64
      %e = math.exp %l : f64
      %x64 = arith.mulf %lo, %e : f64
      %x = arith.truncf %x64 : f64 to f32
      %xe = arith.extf %x : f32 to f64
      %a = math.log %x : f32
      %a64 = arith.extf %a : f32 to f64
      %ref = math.log %xe : f64
      %d = arith.subf %a64, %ref : f64
      %ad = math.absf %d : f64
      %ar = math.absf %ref : f64
      %den = arith.maximumf %ar, %floor : f64
      %err = arith.divf %ad, %den : f64
      %m = arith.maximumf %acc, %err : f64
      scf.yield %m : f64
  }
  return %max : f64
}

// Largest error of f32 log1p over [-0.99, 1000000.0] (uniform grid)
// against f64 libm, relative where |f(x)| >= 1e-3 and absolute below.
func.func @err_log1p() -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 100000 : index
  %nf = arith.constant 100000.0 : f64
  %lo = arith.constant -9.89999999999999991e-01 : f64
  %span = arith.constant 1.00000098999999999e+06 : f64
  %floor = arith.constant 1.0e-3 : f64
  %zero = arith.constant 0.0 : f64
  %max = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f64 {
      %ii = arith.index_cast %i : index to i64
      %fi = arith.sitofp %ii : i64 to f64
      %r = arith.divf %fi, %nf : f64
      %l = arith.mulf %r, %span : f64
      %x64 = arith.addf %lo, %l : f64
      %x = arith.truncf %x64 : f64 to f32
      %xe = arith.extf %x : f32 to f64
      %a = math.log1p %x : f32
      %a64 = arith.extf %a : f32 to f64
      %ref = math.log1p %xe : f64
      %d = arith.subf %a64, %ref : f64
      %ad = math.absf %d : f64
      %ar = math.absf %ref : f64
      %den = arith.maximumf %ar, %floor : f64
      %err = arith.divf %ad, %den : f64
      %m = arith.maximumf %acc, %err : f64
      scf.yield %m : f64
  }
  return %max : f64
}

// Largest error of f32 log2 over [1e-30, 1e+30] (geometric grid)
// against f64 libm, relative where |f(x)| >= 1e-3 and absolute below.
func.func @err_log2() -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 100000 : index
  %nf = arith.constant 100000.0 : f64
  %lo = arith.constant 1.00000000000000008e-30 : f64
  %span = arith.constant 1.38155105579642736e+02 : f64
  %floor = arith.constant 1.0e-3 : f64
  %zero = arith.constant 0.0 : f64
  %max = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f64 {
      %ii = arith.index_cast %i : index to i64
      %fi = arith.sitofp %ii : i64 to f64
      %r = arith.divf %fi, %nf : f64
      %l = arith.mulf %r, %span : f64
      %e = math.exp %l : f64
      %x64 = arith.mulf %lo, %e : f64
      %x = arith.truncf %x64 : f64 to f32
      %xe = arith.extf %x : f32 to f64
      %a = math.log2 %x : f32
      %a64 = arith.extf %a : f32 to f64
      %ref = math.log2 %xe : f64
      %d = arith.subf %a64, %ref : f64
      %ad = math.absf %d : f64
      %ar = math.absf %ref : f64
      %den = arith.maximumf %ar, %floor : f64
      %err = arith.divf %ad, %den : f64
      %m = arith.maximumf %acc, %err : f64
      scf.yield %m : f64
  }
  return %max : f64
}

// Largest error of f32 tanh over [-12.0, 12.0] (uniform grid)
// against f64 libm, relative where |f(x)| >= 1e-3 and absolute below.
func.func @err_tanh() -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 100000 : index
  %nf = arith.constant 100000.0 : f64
  %lo = arith.constant -1.20000000000000000e+01 : f64
  %span = arith.constant 2.40000000000000000e+01 : f64
  %floor = arith.constant 1.0e-3 : f64
  %zero = arith.constant 0.0 : f64
  %max = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f64 {
      %ii = arith.index_cast %i : index to i64
      %fi = arith.sitofp %ii : i64 to f64
      %r = arith.divf %fi, %nf : f64
      %l = arith.mulf %r, %span : f64
      %x64 = arith.addf %lo, %l : f64
      %x = arith.truncf %x64 : f64 to f32
      %xe = arith.extf %x : f32 to f64
      %a = math.tanh %x : f32
      %a64 = arith.extf %a : f32 to f64
      %ref = math.tanh %xe : f64
      %d = arith.subf %a64, %ref : f64
      %ad = math.absf %d : f64
      %ar = math.absf %ref : f64
      %den = arith.maximumf %ar, %floor : f64
      %err = arith.divf %ad, %den : f64
      %m = arith.maximumf %acc, %err : f64
      scf.yield %m : f64
  }
  return %max : f64
}

// Largest error of f32 erf over [-6.0, 6.0] (uniform grid)
// against f64 libm, relative where |f(x)| >= 1e-3 and absolute below.
func.func @err_erf() -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 100000 : index
  %nf = arith.constant 100000.0 : f64
  %lo = arith.constant -6.00000000000000000e+00 : f64
  %span = arith.constant 1.20000000000000000e+01 : f64
  %floor = arith.constant 1.0e-3 : f64
  %zero = arith.constant 0.0 : f64
  %max = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f64 {
      %ii = arith.index_cast %i : index to i64
      %fi = arith.sitofp %ii : i64 to f64
      %r = arith.divf %fi, %nf : f64
      %l = arith.mulf %r, %span : f64
      %x64 = arith.addf %lo, %l : f64
      %x = arith.truncf %x64 : f64 to f32
      %xe = arith.extf %x : f32 to f64
      %a = math.erf %x : f32
      %a64 = arith.extf %a : f32 to f64
      %ref = math.erf %xe : f64
      %d = arith.subf %a64, %ref : f64
      %ad = math.absf %d : f64
      %ar = math.absf %ref : f64
      %den = arith.maximumf %ar, %floor : f64
      %err = arith.divf %ad, %den : f64
      %m = arith.maximumf %acc, %err : f64
      scf.yield %m : f64
  }
  return %max : f64
}

func.func @main() {
  // about 4 ulp of f32
  %tol = arith.constant 5.0e-7 : f64
  %exp = call @err_exp() : () -> f64
  %ok_exp = arith.cmpf olt, %exp, %tol : f64
  vector.print str "exp "
  vector.print %ok_exp : i1
  %expm1 = call @err_expm1() : () -> f64
  %ok_expm1 = arith.cmpf olt, %expm1, %tol : f64
  vector.print str "expm1 "
  vector.print %ok_expm1 : i1
  %exp2 = call @err_exp2() : () -> f64
  %ok_exp2 = arith.cmpf olt, %exp2, %tol : f64
  vector.print str "exp2 "
  vector.print %ok_exp2 : i1
  %log = call @err_log() : () -> f64
  %ok_log = arith.cmpf olt, %log, %tol : f64
  vector.print str "log "
  vector.print %ok_log : i1
  %log1p = call @err_log1p() : () -> f64
  %ok_log1p = arith.cmpf olt, %log1p, %tol : f64
  vector.print str "log1p "
  vector.print %ok_log1p : i1
  %log2 = call @err_log2() : () -> f64
  %ok_log2 = arith.cmpf olt, %log2, %tol : f64
  vector.print str "log2 "
  vector.print %ok_log2 : i1
  %tanh = call @err_tanh() : () -> f64
  %ok_tanh = arith.cmpf olt, %tanh, %tol : f64
  vector.print str "tanh "
  vector.print %ok_tanh : i1
  %erf = call @err_erf() : () -> f64
  %ok_erf = arith.cmpf olt, %erf, %tol : f64
  vector.print str "erf "
  vector.print %ok_erf : i1
  return
}
