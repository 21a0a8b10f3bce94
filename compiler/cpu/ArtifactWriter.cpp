//===- ArtifactWriter.cpp - LLVM dialect to model.so -----------------------===//
//
// Builds, in LLVM IR, what runtime/include/tcc/abi.h describes: one wrapper
// per entry point with the ABI's signature, and the descriptor (tensors,
// sizes, entry points) returned by the only exported symbol. Then optimizes
// at O3, emits an object file with LLVM's target machine in-process, and links
// a shared library with the system C compiler driver.
//
//===----------------------------------------------------------------------===//

#include "compiler/cpu/ArtifactWriter.h"

#include "compiler/cuda/CudaPipeline.h"

#include "runtime/include/tcc/abi.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"

using namespace mlir;
using namespace tcc;

//===----------------------------------------------------------------------===//
// Plans
//===----------------------------------------------------------------------===//

int32_t tcc::abiDtypeOf(Type t) {
  if (t.isF32()) return TCC_DTYPE_F32;
  if (t.isF64()) return TCC_DTYPE_F64;
  if (t.isF16()) return TCC_DTYPE_F16;
  if (t.isBF16()) return TCC_DTYPE_BF16;
  if (t.isInteger(1)) return TCC_DTYPE_BOOL;
  if (auto i = dyn_cast<IntegerType>(t)) {
    bool u = i.isUnsigned();
    switch (i.getWidth()) {
    case 8: return u ? TCC_DTYPE_U8 : TCC_DTYPE_I8;
    case 16: return u ? TCC_DTYPE_U16 : TCC_DTYPE_I16;
    case 32: return u ? TCC_DTYPE_U32 : TCC_DTYPE_I32;
    case 64: return u ? TCC_DTYPE_U64 : TCC_DTYPE_I64;
    }
  }
  return 0;
}

FailureOr<std::vector<PlannedEntry>> tcc::readPlans(ModuleOp module) {
  std::vector<PlannedEntry> entries;
  for (auto func : module.getOps<func::FuncOp>()) {
    auto plan = func->getAttrOfType<ArrayAttr>("tcc.plan");
    if (!plan)
      continue;
    PlannedEntry e;
    e.function = func.getSymName().str();
    e.name = e.function == "forward" ? "infer" : e.function;
    e.arenaSize = func->getAttrOfType<IntegerAttr>("tcc.arena_size").getInt();
    e.stateSize = func->getAttrOfType<IntegerAttr>("tcc.state_size").getInt();
    for (Attribute a : plan) {
      auto d = cast<DictionaryAttr>(a);
      PlannedTensor t;
      t.name = d.getAs<StringAttr>("name").str();
      StringRef role = d.getAs<StringAttr>("role").getValue();
      t.role = role == "input"    ? TCC_ROLE_INPUT
               : role == "output" ? TCC_ROLE_OUTPUT
               : role == "state"  ? TCC_ROLE_STATE
                                  : TCC_ROLE_PARAM;
      t.region = d.getAs<StringAttr>("region").getValue() == "state"
                     ? TCC_REGION_STATE
                     : TCC_REGION_ARENA;
      t.offset = d.getAs<IntegerAttr>("offset").getInt();
      t.size = d.getAs<IntegerAttr>("size").getInt();
      auto shape = d.getAs<DenseI64ArrayAttr>("shape").asArrayRef();
      t.shape.assign(shape.begin(), shape.end());
      Type et = d.getAs<TypeAttr>("element_type").getValue();
      t.dtype = abiDtypeOf(et);
      if (!t.dtype)
        return func.emitError("tensor '")
               << t.name << "' has element type " << et
               << ", which the artifact format cannot describe",
               failure();
      // The descriptor states what the runtime will index: every tensor
      // inside its region, in int64 (the plan checks as it places; this
      // holds any later stage to it too).
      int64_t regionSize = t.region == TCC_REGION_STATE ? e.stateSize : e.arenaSize;
      std::optional<int64_t> end = llvm::checkedAdd(t.offset, t.size);
      if (t.offset < 0 || t.size < 0 || !end || *end > regionSize)
        return func.emitError("tensor '")
               << t.name << "' (" << t.size << " bytes at offset " << t.offset
               << ") lies outside its region of " << regionSize << " bytes",
               failure();
      e.tensors.push_back(std::move(t));
    }
    entries.push_back(std::move(e));
  }
  if (entries.empty())
    return module.emitError("no planned entry point (run tcc-plan-memory)"),
           failure();
  return entries;
}

//===----------------------------------------------------------------------===//
// Wrappers and the descriptor
//===----------------------------------------------------------------------===//

namespace {

/// Emits constant data for the descriptor.
class DescriptorBuilder {
public:
  DescriptorBuilder(llvm::Module &m) : m(m), ctx(m.getContext()) {}

  llvm::Constant *string(StringRef s) {
    auto it = strings.find(s);
    if (it != strings.end())
      return it->second;
    llvm::Constant *init = llvm::ConstantDataArray::getString(ctx, s);
    auto *g = new llvm::GlobalVariable(m, init->getType(), true,
                                       llvm::GlobalValue::PrivateLinkage, init,
                                       ".tcc.str");
    g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    return strings[s] = g;
  }

  template <typename T>
  llvm::Constant *array(llvm::Type *elt, ArrayRef<T> values, StringRef name) {
    auto *ty = llvm::ArrayType::get(elt, values.size());
    SmallVector<llvm::Constant *> cs;
    for (const T &v : values)
      cs.push_back(llvm::ConstantInt::get(elt, v));
    auto *g = new llvm::GlobalVariable(m, ty, true,
                                       llvm::GlobalValue::PrivateLinkage,
                                       llvm::ConstantArray::get(ty, cs), name);
    return g;
  }

  llvm::Module &m;
  llvm::LLVMContext &ctx;
  llvm::StringMap<llvm::Constant *> strings;
};

/// `int32_t tcc_entry_NAME(uint8_t *arena, uint8_t *state, const
/// tcc_abi_runtime *rt)`: calls the lowered function with the memref
/// descriptors of the two regions expanded into scalars (allocated pointer,
/// aligned pointer, offset, size, stride).
llvm::Function *buildWrapper(llvm::Module &m, const PlannedEntry &e,
                             llvm::Function *lowered) {
  llvm::LLVMContext &ctx = m.getContext();
  auto *ptr = llvm::PointerType::getUnqual(ctx);
  auto *i32 = llvm::Type::getInt32Ty(ctx);
  auto *i64 = llvm::Type::getInt64Ty(ctx);
  auto *fnTy = llvm::FunctionType::get(i32, {ptr, ptr, ptr}, false);
  auto *fn = llvm::Function::Create(fnTy, llvm::GlobalValue::InternalLinkage,
                                    "tcc_entry_" + e.name, m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  llvm::Value *arena = fn->getArg(0), *state = fn->getArg(1);
  SmallVector<llvm::Value *> args = {
      arena, arena, b.getInt64(0), llvm::ConstantInt::get(i64, e.arenaSize),
      b.getInt64(1), state, state, b.getInt64(0),
      llvm::ConstantInt::get(i64, e.stateSize), b.getInt64(1), fn->getArg(2)};
  b.CreateCall(lowered, args);
  b.CreateRet(b.getInt32(0));
  return fn;
}

/// One row of the descriptor's library-call table (tcc-cpu-library-calls).
struct LibraryCallRow {
  int32_t kind = 0, dtype = TCC_DTYPE_F32, operands = 0;
  SmallVector<int64_t> params;
};

/// The module's `tcc.library_calls` table.
FailureOr<SmallVector<LibraryCallRow>> readLibraryCalls(ModuleOp module) {
  SmallVector<LibraryCallRow> rows;
  auto table = module->getAttrOfType<ArrayAttr>("tcc.library_calls");
  if (!table)
    return rows;
  for (Attribute a : table) {
    auto d = dyn_cast<DictionaryAttr>(a);
    auto kind = d ? d.getAs<IntegerAttr>("kind") : nullptr;
    auto operands = d ? d.getAs<IntegerAttr>("operands") : nullptr;
    auto params = d ? d.getAs<DenseI64ArrayAttr>("params") : nullptr;
    if (!kind || !operands || !params)
      return module.emitError("malformed tcc.library_calls entry ") << a, failure();
    LibraryCallRow row;
    row.kind = int32_t(kind.getInt());
    row.operands = int32_t(operands.getInt());
    // Optional: a call of another dtype says so (abi.h's kinds list them).
    if (auto dtype = d.getAs<IntegerAttr>("dtype"))
      row.dtype = int32_t(dtype.getInt());
    llvm::append_range(row.params, params.asArrayRef());
    rows.push_back(std::move(row));
  }
  return rows;
}

/// One row of the descriptor's kernel table (tcc-gpu-lower-launches).
struct KernelRow {
  std::string name;
  SmallVector<int32_t> grid, block;
  int32_t shared = 0, params = 0;
};

/// What a device artifact adds to the descriptor.
struct DeviceCode {
  std::string device; ///< "" for CPU artifacts
  std::string ptx;
  std::vector<char> cubin;
  SmallVector<KernelRow> kernels;
};

/// The module's device attributes (`tcc.device`, `tcc.device_ptx`,
/// `tcc.kernels`); an empty DeviceCode for CPU artifacts.
FailureOr<DeviceCode> readDeviceCode(ModuleOp module) {
  DeviceCode code;
  auto device = module->getAttrOfType<StringAttr>("tcc.device");
  auto table = module->getAttrOfType<ArrayAttr>("tcc.kernels");
  if (!table)
    return code;
  if (!table.empty() && !device)
    return module.emitError("kernel launches but no device code"), failure();
  if (device) {
    code.device = device.str();
    if (auto ptx = module->getAttrOfType<StringAttr>("tcc.device_ptx"))
      code.ptx = ptx.str();
  }
  for (Attribute a : table) {
    auto d = dyn_cast<DictionaryAttr>(a);
    auto name = d ? d.getAs<StringAttr>("name") : nullptr;
    auto grid = d ? d.getAs<DenseI32ArrayAttr>("grid") : nullptr;
    auto block = d ? d.getAs<DenseI32ArrayAttr>("block") : nullptr;
    auto shared = d ? d.getAs<IntegerAttr>("shared") : nullptr;
    auto params = d ? d.getAs<IntegerAttr>("params") : nullptr;
    if (!name || !grid || !block || !shared || !params || grid.size() != 3 || block.size() != 3)
      return module.emitError("malformed tcc.kernels entry ") << a, failure();
    KernelRow row;
    row.name = name.str();
    llvm::append_range(row.grid, grid.asArrayRef());
    llvm::append_range(row.block, block.asArrayRef());
    row.shared = int32_t(shared.getInt());
    row.params = int32_t(params.getInt());
    code.kernels.push_back(std::move(row));
  }
  return code;
}

/// Assembles PTX for CHIP ("sm_90") with the toolkit's ptxas, so that loading
/// needs no JIT; the cubin's bytes, or failure with ptxas' messages.
FailureOr<std::vector<char>> assemblePtx(Location loc, StringRef ptx, StringRef chip,
                                         StringRef toolkit) {
  SmallString<256> ptxas(toolkit);
  llvm::sys::path::append(ptxas, "bin", "ptxas");
  if (!llvm::sys::fs::can_execute(ptxas)) {
    auto found = llvm::sys::findProgramByName("ptxas");
    if (!found)
      return emitError(loc, "no ptxas at '")
                 << ptxas << "' or on PATH (set TCC_CUDA_PATH to the CUDA toolkit)",
             failure();
    ptxas = *found;
  }
  SmallString<128> in, out, log;
  for (auto [path, ext] : {std::pair{&in, "ptx"}, {&out, "cubin"}, {&log, "log"}})
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile("tcc-kernels", ext, *path))
      return emitError(loc, "cannot create a temporary file: ") << ec.message(), failure();
  auto cleanup = llvm::make_scope_exit([&] {
    for (const SmallString<128> *p : {&in, &out, &log})
      llvm::sys::fs::remove(*p);
  });
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(in, ec);
    if (ec)
      return emitError(loc, "cannot write '") << in << "': " << ec.message(), failure();
    os << ptx;
  }
  std::string arch = ("-arch=" + chip).str();
  SmallVector<StringRef> argv = {ptxas, arch, "-O3", in, "-o", out};
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log), StringRef(log)};
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(ptxas, argv, std::nullopt, redirects, 0, 0, &error);
  if (rc != 0) {
    auto messages = llvm::MemoryBuffer::getFile(log);
    return emitError(loc, "ptxas (")
               << ptxas << ") rejected the kernels for " << chip << " (exit status " << rc
               << "): " << (messages ? (*messages)->getBuffer().str() : error),
           failure();
  }
  auto cubin = llvm::MemoryBuffer::getFile(out, /*IsText=*/false);
  if (!cubin)
    return emitError(loc, "cannot read ptxas' output '") << out << "'", failure();
  return std::vector<char>((*cubin)->getBufferStart(), (*cubin)->getBufferEnd());
}

/// The module's `tcc.metadata` dictionary (string values) as key / value
/// pairs, sorted by key.
FailureOr<SmallVector<std::pair<std::string, std::string>>> readMetadata(ModuleOp module) {
  SmallVector<std::pair<std::string, std::string>> rows;
  auto dict = module->getAttrOfType<DictionaryAttr>("tcc.metadata");
  if (!dict)
    return rows;
  for (NamedAttribute a : dict) {
    auto value = dyn_cast<StringAttr>(a.getValue());
    if (!value)
      return module.emitError("tcc.metadata '") << a.getName() << "' is not a string", failure();
    rows.emplace_back(a.getName().str(), value.str());
  }
  return rows;
}

LogicalResult buildDescriptor(Location loc, llvm::Module &m, ArrayRef<PlannedEntry> entries,
                              ArrayRef<LibraryCallRow> calls,
                              ArrayRef<std::pair<std::string, std::string>> metadata,
                              const DeviceCode &deviceCode, const ArtifactOptions &options,
                              ArrayRef<llvm::Function *> wrappers) {
  llvm::LLVMContext &ctx = m.getContext();
  DescriptorBuilder d(m);
  auto *ptr = llvm::PointerType::getUnqual(ctx);
  auto *i32 = llvm::Type::getInt32Ty(ctx);
  auto *i64 = llvm::Type::getInt64Ty(ctx);
  // Mirrors tcc_abi_tensor, tcc_abi_entry and tcc_abi_descriptor field by
  // field; natural alignment gives the C layout on the targets tcc supports.
  auto *tensorTy = llvm::StructType::create(
      ctx, {ptr, i32, i32, i32, i32, ptr, i64, i64}, "tcc_abi_tensor");
  auto *entryTy =
      llvm::StructType::create(ctx, {ptr, ptr, i32, ptr}, "tcc_abi_entry");
  auto *callTy =
      llvm::StructType::create(ctx, {i32, i32, i32, i32, ptr}, "tcc_abi_library_call");
  auto *metadataTy = llvm::StructType::create(ctx, {ptr, ptr}, "tcc_abi_metadata");
  auto *dim3Ty = llvm::ArrayType::get(i32, 3);
  auto *kernelTy =
      llvm::StructType::create(ctx, {ptr, dim3Ty, dim3Ty, i32, i32}, "tcc_abi_kernel");
  auto *descTy = llvm::StructType::create(
      ctx, {i32, i32, ptr, ptr, ptr, ptr, i64, i64, i64, i32, i32, ptr, ptr, i32, ptr, i32, ptr,
            ptr, i32, ptr, ptr, ptr, i64, i64},
      "tcc_abi_descriptor");

  // Tensors are shared by entries: one row per (name, role).
  SmallVector<llvm::Constant *> tensorRows;
  std::map<std::pair<std::string, int32_t>, int32_t> tensorIndex;
  std::map<int32_t, const PlannedTensor *> tensorPlans;
  SmallVector<llvm::Constant *> entryRows;
  int64_t arena = 0, state = 0;
  for (auto [e, wrapper] : llvm::zip(entries, wrappers)) {
    arena = std::max(arena, e.arenaSize);
    state = std::max(state, e.stateSize);
    SmallVector<int32_t> indices;
    for (const PlannedTensor &t : e.tensors) {
      auto key = std::make_pair(t.name, t.role);
      auto it = tensorIndex.find(key);
      if (it == tensorIndex.end()) {
        llvm::Constant *shape =
            d.array<int64_t>(i64, t.shape, ".tcc.shape");
        tensorRows.push_back(llvm::ConstantStruct::get(
            tensorTy,
            {d.string(t.name), llvm::ConstantInt::get(i32, t.role),
             llvm::ConstantInt::get(i32, t.dtype),
             llvm::ConstantInt::get(i32, t.region),
             llvm::ConstantInt::get(i32, int32_t(t.shape.size())), shape,
             llvm::ConstantInt::get(i64, t.offset),
             llvm::ConstantInt::get(i64, t.size)}));
        it = tensorIndex.insert({key, int32_t(tensorRows.size() - 1)}).first;
        tensorPlans[it->second] = &t;
      } else {
        // Entry points share the row: they must agree on where it lives.
        const PlannedTensor &first = *tensorPlans[it->second];
        if (first.offset != t.offset || first.shape != t.shape || first.dtype != t.dtype)
          return emitError(loc, "entry '")
                 << e.name << "': tensor '" << t.name
                 << "' has another slot, shape or dtype than in an earlier entry point";
      }
      indices.push_back(it->second);
    }
    entryRows.push_back(llvm::ConstantStruct::get(
        entryTy, {d.string(e.name), wrapper,
                  llvm::ConstantInt::get(i32, int32_t(indices.size())),
                  d.array<int32_t>(i32, indices, ".tcc.indices")}));
  }
  auto *tensorsTy = llvm::ArrayType::get(tensorTy, tensorRows.size());
  auto *tensors = new llvm::GlobalVariable(
      m, tensorsTy, true, llvm::GlobalValue::PrivateLinkage,
      llvm::ConstantArray::get(tensorsTy, tensorRows), ".tcc.tensors");
  auto *entriesTy = llvm::ArrayType::get(entryTy, entryRows.size());
  auto *entryTable = new llvm::GlobalVariable(
      m, entriesTy, true, llvm::GlobalValue::PrivateLinkage,
      llvm::ConstantArray::get(entriesTy, entryRows), ".tcc.entries");

  SmallVector<llvm::Constant *> callRows;
  for (const LibraryCallRow &c : calls)
    callRows.push_back(llvm::ConstantStruct::get(
        callTy, {llvm::ConstantInt::get(i32, c.kind),
                 llvm::ConstantInt::get(i32, c.dtype),
                 llvm::ConstantInt::get(i32, int32_t(c.params.size())),
                 llvm::ConstantInt::get(i32, c.operands),
                 d.array<int64_t>(i64, c.params, ".tcc.call_params")}));
  auto *callsTy = llvm::ArrayType::get(callTy, callRows.size());
  auto *callTable = new llvm::GlobalVariable(
      m, callsTy, true, llvm::GlobalValue::PrivateLinkage,
      llvm::ConstantArray::get(callsTy, callRows), ".tcc.library_calls");

  SmallVector<llvm::Constant *> metadataRows;
  for (const auto &[key, value] : metadata)
    metadataRows.push_back(
        llvm::ConstantStruct::get(metadataTy, {d.string(key), d.string(value)}));
  auto *metadataArrayTy = llvm::ArrayType::get(metadataTy, metadataRows.size());
  auto *metadataTable = new llvm::GlobalVariable(
      m, metadataArrayTy, true, llvm::GlobalValue::PrivateLinkage,
      llvm::ConstantArray::get(metadataArrayTy, metadataRows), ".tcc.metadata");

  // Device code: the kernel table, the PTX (NUL-terminated) and the cubin.
  SmallVector<llvm::Constant *> kernelRows;
  auto dim3 = [&](ArrayRef<int32_t> v) {
    return llvm::ConstantArray::get(
        dim3Ty, {llvm::ConstantInt::get(i32, v[0]), llvm::ConstantInt::get(i32, v[1]),
                 llvm::ConstantInt::get(i32, v[2])});
  };
  for (const KernelRow &k : deviceCode.kernels)
    kernelRows.push_back(llvm::ConstantStruct::get(
        kernelTy, {d.string(k.name), dim3(k.grid), dim3(k.block),
                   llvm::ConstantInt::get(i32, k.shared), llvm::ConstantInt::get(i32, k.params)}));
  auto *kernelsTy = llvm::ArrayType::get(kernelTy, kernelRows.size());
  auto *kernelTable = new llvm::GlobalVariable(
      m, kernelsTy, true, llvm::GlobalValue::PrivateLinkage,
      llvm::ConstantArray::get(kernelsTy, kernelRows), ".tcc.kernels");
  bool device = !deviceCode.device.empty();
  llvm::Constant *null = llvm::ConstantPointerNull::get(ptr);
  llvm::Constant *cubin = null;
  if (!deviceCode.cubin.empty()) {
    auto *bytes = llvm::ConstantDataArray::get(
        ctx, llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(deviceCode.cubin.data()),
                                     deviceCode.cubin.size()));
    auto *g = new llvm::GlobalVariable(m, bytes->getType(), true,
                                       llvm::GlobalValue::PrivateLinkage, bytes, ".tcc.cubin");
    g->setAlignment(llvm::Align(16));
    cubin = g;
  }
  // The library calls' workspace, at the device arena's tail: they run in
  // order on one stream, so the largest call's bound.
  int64_t deviceScratch = 0;
  if (device)
    for (const LibraryCallRow &c : calls)
      deviceScratch = std::max(
          deviceScratch,
          libraryWorkspaceBytes(c.kind, c.params, StringRef(deviceCode.device).rsplit(':').second));

  const llvm::DataLayout &dl = m.getDataLayout();
  std::string producer = "tcc " TCC_VERSION " (LLVM " LLVM_VERSION_STRING ")";
  // The x86-64-v3 level: what the code may use, checked at load.
  std::string features = "avx,avx2,bmi,bmi2,f16c,fma,lzcnt,movbe";
  llvm::Constant *desc = llvm::ConstantStruct::get(
      descTy,
      {llvm::ConstantInt::get(i32, TCC_ABI_VERSION),
       llvm::ConstantInt::get(i32, dl.getTypeAllocSize(descTy)),
       d.string(options.fingerprint), d.string(producer), d.string("x86_64"),
       d.string(options.cpu == "x86-64-v3" ? features : ""),
       llvm::ConstantInt::get(i64, arena), llvm::ConstantInt::get(i64, state),
       llvm::ConstantInt::get(i64, 64),
       llvm::ConstantInt::get(i32, int32_t(tensorRows.size())),
       llvm::ConstantInt::get(i32, int32_t(entryRows.size())), tensors,
       entryTable, llvm::ConstantInt::get(i32, int32_t(callRows.size())),
       callTable, llvm::ConstantInt::get(i32, int32_t(metadataRows.size())), metadataTable,
       device ? d.string(deviceCode.device) : null,
       llvm::ConstantInt::get(i32, int32_t(kernelRows.size())), kernelTable,
       device ? d.string(deviceCode.ptx) : null, cubin,
       llvm::ConstantInt::get(i64, int64_t(deviceCode.cubin.size())),
       llvm::ConstantInt::get(i64, deviceScratch)});
  auto *descGlobal =
      new llvm::GlobalVariable(m, descTy, true, llvm::GlobalValue::PrivateLinkage,
                               desc, ".tcc.descriptor");

  // const tcc_abi_descriptor *tcc_artifact_descriptor(void)
  auto *fnTy = llvm::FunctionType::get(ptr, {}, false);
  auto *fn = llvm::Function::Create(fnTy, llvm::GlobalValue::ExternalLinkage,
                                    TCC_ABI_DESCRIPTOR_SYMBOL, m);
  fn->setVisibility(llvm::GlobalValue::DefaultVisibility);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  b.CreateRet(descGlobal);
  return success();
}

llvm::TargetMachine *createTargetMachine(const ArtifactOptions &options,
                                         std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple("x86_64-unknown-linux-gnu");
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  llvm::TargetOptions to;
  return target->createTargetMachine(triple, options.cpu, "", to,
                                     llvm::Reloc::PIC_, llvm::CodeModel::Small,
                                     llvm::CodeGenOptLevel::Aggressive);
}

void optimize(llvm::Module &m, llvm::TargetMachine *tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm =
      pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(m, mam);
}

} // namespace

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

LogicalResult tcc::writeArtifact(ModuleOp module,
                                 ArrayRef<PlannedEntry> entries,
                                 const ArtifactOptions &options,
                                 ArtifactStage stage, StringRef outputPath) {
  Location loc = module.getLoc();
  FailureOr<SmallVector<LibraryCallRow>> calls = readLibraryCalls(module);
  if (failed(calls))
    return failure();
  auto metadata = readMetadata(module);
  if (failed(metadata))
    return failure();
  FailureOr<DeviceCode> deviceCode = readDeviceCode(module);
  if (failed(deviceCode))
    return failure();
  if (!deviceCode->kernels.empty()) {
    StringRef chip = StringRef(deviceCode->device).rsplit(':').second;
    auto cubin = assemblePtx(loc, deviceCode->ptx, chip, options.cudaToolkit);
    if (failed(cubin))
      return failure();
    deviceCode->cubin = std::move(*cubin);
  }
  registerBuiltinDialectTranslation(*module.getContext());
  registerLLVMDialectTranslation(*module.getContext());
  registerOpenMPDialectTranslation(*module.getContext());
  llvm::LLVMContext llctx;
  std::unique_ptr<llvm::Module> m =
      translateModuleToLLVMIR(module, llctx, "tcc-artifact");
  if (!m)
    return emitError(loc, "cannot translate the module to LLVM IR");

  std::string error;
  std::unique_ptr<llvm::TargetMachine> tm(createTargetMachine(options, error));
  if (!tm)
    return emitError(loc, "no x86-64 target in this LLVM: ") << error;
  m->setTargetTriple(tm->getTargetTriple());
  m->setDataLayout(tm->createDataLayout());

  bool usesOpenMP = llvm::any_of(*m, [](const llvm::Function &f) {
    return f.isDeclaration() && f.getName().starts_with("__kmpc_");
  });

  // Only the descriptor is exported; everything tcc generated is internal so
  // that two artifacts in one process never clash.
  for (llvm::Function &f : *m) {
    if (f.isDeclaration())
      continue;
    f.setLinkage(llvm::GlobalValue::InternalLinkage);
    // Kernels that tcc-outline-kernels (--profile) gave their own function
    // stay functions: the profile attributes time by symbol.
    if (f.getName().starts_with("kernel_"))
      f.addFnAttr(llvm::Attribute::NoInline);
  }
  SmallVector<llvm::Function *> wrappers;
  for (const PlannedEntry &e : entries) {
    llvm::Function *lowered = m->getFunction(e.function);
    if (!lowered || lowered->arg_size() != 11)
      return emitError(loc, "entry '")
             << e.name << "': lowered function '" << e.function
             << "' is missing or does not take (arena, state, runtime)";
    wrappers.push_back(buildWrapper(*m, e, lowered));
  }
  if (failed(buildDescriptor(loc, *m, entries, *calls, *metadata, *deviceCode, options, wrappers)))
    return failure();
  std::string verifyErrors;
  llvm::raw_string_ostream vs(verifyErrors);
  if (llvm::verifyModule(*m, &vs))
    return emitError(loc, "internal error: invalid LLVM IR: ") << verifyErrors;
  if (options.optimize)
    optimize(*m, tm.get());

  if (stage == ArtifactStage::LLVMIR) {
    auto out = mlir::openOutputFile(outputPath, &error);
    if (!out)
      return emitError(loc, error);
    m->print(out->os(), nullptr);
    out->keep();
    return success();
  }

  // Object code, in-process.
  SmallString<128> objPath;
  if (stage == ArtifactStage::Object) {
    objPath = outputPath;
  } else if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
                 "tcc-artifact", "o", objPath)) {
    return emitError(loc, "cannot create a temporary file: ") << ec.message();
  }
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(objPath, ec, llvm::sys::fs::OF_None);
    if (ec)
      return emitError(loc, "cannot write '") << objPath << "': " << ec.message();
    llvm::legacy::PassManager pm;
    if (tm->addPassesToEmitFile(pm, os, nullptr,
                                llvm::CodeGenFileType::ObjectFile))
      return emitError(loc, "the target cannot emit object files");
    pm.run(*m);
  }
  if (stage == ArtifactStage::Object)
    return success();

  // Link: the system C driver makes a shared library of the one object;
  // written beside the output and renamed, so a failure leaves nothing half
  // written.
  auto cc = llvm::sys::findProgramByName("cc");
  if (!cc) {
    llvm::sys::fs::remove(objPath);
    return emitError(loc, "no C compiler driver 'cc' on PATH to link with");
  }
  SmallString<256> tmpOut(outputPath);
  tmpOut += ".tmp";
  std::string ccPath = *cc;
  SmallVector<StringRef> argv = {ccPath, "-shared", "-o", tmpOut, objPath,
                                 "-lm"};
  // Parallel loops call LLVM's OpenMP runtime: name the very library the
  // runtime links, so that both resolve to one copy (one thread pool).
  std::string openmpRpath =
      ("-Wl,-rpath," + llvm::sys::path::parent_path(TCC_OPENMP_LIBRARY)).str();
  if (usesOpenMP) {
    argv.push_back(TCC_OPENMP_LIBRARY);
    argv.push_back(openmpRpath);
  }
  std::string linkError;
  int rc = llvm::sys::ExecuteAndWait(ccPath, argv, std::nullopt, {}, 0, 0,
                                     &linkError);
  llvm::sys::fs::remove(objPath);
  if (rc != 0) {
    llvm::sys::fs::remove(tmpOut);
    return emitError(loc, "linking '")
           << outputPath << "' failed (cc exit status " << rc << ") "
           << linkError;
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmpOut, outputPath))
    return emitError(loc, "cannot write '") << outputPath << "': " << ec.message();
  return success();
}
