//===- RuntimeCalls.cpp - generated code calling the runtime's services ---===//

#include "passes/codegen/RuntimeCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

void tcc::storeBufferAddress(OpBuilder &b, Location loc, Value buffer, Value array,
                             int32_t index) {
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
  Value address = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  Value asInt = arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
  Value pointer = LLVM::IntToPtrOp::create(b, loc, ptrType, asInt);
  Value slot = LLVM::GEPOp::create(b, loc, ptrType, ptrType, array,
                                   ArrayRef<LLVM::GEPArg>{index});
  LLVM::StoreOp::create(b, loc, pointer, slot);
}

void tcc::callRuntime(OpBuilder &b, Location loc, Value runtime, size_t fnOffset,
                      size_t contextOffset, int32_t index, Value array) {
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
  auto field = [&](size_t offset) -> Value {
    Value p = LLVM::GEPOp::create(b, loc, ptrType, b.getI8Type(), runtime,
                                  ArrayRef<LLVM::GEPArg>{int32_t(offset)});
    return LLVM::LoadOp::create(b, loc, ptrType, p);
  };
  auto fnType = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(b.getContext()),
                                            {ptrType, b.getI32Type(), ptrType});
  Value fn = field(fnOffset), context = field(contextOffset);
  Value i = LLVM::ConstantOp::create(b, loc, b.getI32Type(), int64_t(index));
  LLVM::CallOp::create(b, loc, fnType, ValueRange{fn, context, i, array});
}
