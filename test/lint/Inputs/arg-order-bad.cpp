// Input of test/lint/arg-order.test: two calls that build IR in their
// arguments (lines 6 and 11), then the same built in named steps, and a
// lambda argument, which the call does not evaluate (not reported).
Value twoOps(OpBuilder &b, Location loc, Value x, Value y) {
  // the order of MulOp and splat is the host compiler's
  return AddOp::create(b, loc, MulOp::create(b, loc, x, y), splat(b, loc, x, 1.0));
}

void loop(OpBuilder &b, Location loc, int64_t n) {
  // three constants in the host compiler's order
  scf::ForOp::create(b, loc, indexConst(b, loc, 0), indexConst(b, loc, n), Value());
}

Value named(OpBuilder &b, Location loc, Value x, Value y) {
  Value product = MulOp::create(b, loc, x, y);
  Value one = splat(b, loc, x, 1.0);
  return AddOp::create(b, loc, product, one);
}
void lambda(OpBuilder &b, Location loc, Value x) {
  run(MulOp::create(b, loc, x, x), [&](OpBuilder &nb) { return splat(nb, loc, x, 1.0); });
}
