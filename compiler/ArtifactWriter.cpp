//===- ArtifactWriter.cpp - LLVM dialect to model.so -----------------------===//
//
// Builds, in LLVM IR, what runtime/include/tcc/abi.h describes: one wrapper
// per entry point with the ABI's signature, and the descriptor (tensors,
// sizes, entry points) returned by the only exported symbol. Then optimizes
// (kernels at O3, or O2 in large programs; the host code at O1), emits an object file with LLVM's target machine in-process, and links
// a shared library with the system C compiler driver.
//
//===----------------------------------------------------------------------===//

#include "compiler/ArtifactWriter.h"

#include "compiler/LLVMCodegen.h"

#include "compiler/cuda/CudaPipeline.h"

#include "dialects/TccNames.h"
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
#include "llvm/Linker/Linker.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/ToolOutputFile.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Target/TargetMachine.h"

#include <cstddef>
#include <map>

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

/// The tcc_role of a role a plan records.
static int32_t abiRole(BufferRole role) {
  switch (role) {
  case BufferRole::Input: return TCC_ROLE_INPUT;
  case BufferRole::Output: return TCC_ROLE_OUTPUT;
  case BufferRole::Param: return TCC_ROLE_PARAM;
  case BufferRole::State: return TCC_ROLE_STATE;
  case BufferRole::Update:
  case BufferRole::Temp: break;
  }
  return 0;
}

FailureOr<std::vector<PlannedEntry>> tcc::readPlans(ModuleOp module) {
  std::vector<PlannedEntry> entries;
  for (auto func : module.getOps<func::FuncOp>()) {
    auto plan = func->getAttrOfType<ArrayAttr>(attr::plan);
    if (!plan)
      continue;
    PlannedEntry e;
    e.function = func.getSymName().str();
    e.name = e.function == "forward" ? TCC_ENTRY_INFER : e.function;
    e.arenaSize = func->getAttrOfType<IntegerAttr>(attr::arenaSize).getInt();
    e.stateSize = func->getAttrOfType<IntegerAttr>(attr::stateSize).getInt();
    for (Attribute a : plan) {
      auto d = cast<DictionaryAttr>(a);
      PlannedTensor t;
      t.name = d.getAs<StringAttr>("name").str();
      StringRef role = d.getAs<StringAttr>("role").getValue();
      std::optional<BufferRole> parsed = parsePlanRole(role);
      if (!parsed)
        return func.emitError("tensor '") << t.name << "' has the unknown role '" << role
                                          << "' in its plan",
               failure();
      t.role = abiRole(*parsed);
      t.region = isPersistent(*parsed) ? TCC_REGION_STATE : TCC_REGION_ARENA;
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
    auto names = func->getAttrOfType<ArrayAttr>(attr::planTempNames);
    if (auto temps = func->getAttrOfType<ArrayAttr>(attr::planTemps))
      for (auto [index, a] : llvm::enumerate(temps)) {
        auto v = dyn_cast<DenseI64ArrayAttr>(a);
        if (!v || v.size() != 4)
          return func.emitError("malformed ") << attr::planTemps << " entry " << a, failure();
        auto node = names && index < names.size() ? dyn_cast<StringAttr>(names[index]) : nullptr;
        e.temps.push_back({v[0], v[1], v[2], v[3], node ? node.str() : std::string()});
      }
    // The runtime runs init_state between a caller's set_input and its run
    // (tcc/abi.h): it must leave the arena alone.
    if (e.name == TCC_ENTRY_INIT_STATE && e.arenaSize != 0)
      return func.emitError("init_state needs ")
                 << e.arenaSize << " arena bytes; it may read and write the state only",
             failure();
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
llvm::Function *buildWrapper(llvm::Module &m, const PlannedEntry &e, llvm::Function *lowered,
                             StringRef suffix = "") {
  llvm::LLVMContext &ctx = m.getContext();
  auto *ptr = llvm::PointerType::getUnqual(ctx);
  auto *i32 = llvm::Type::getInt32Ty(ctx);
  auto *i64 = llvm::Type::getInt64Ty(ctx);
  auto *fnTy = llvm::FunctionType::get(i32, {ptr, ptr, ptr}, false);
  auto *fn = llvm::Function::Create(fnTy, llvm::GlobalValue::InternalLinkage,
                                    "tcc_entry_" + e.name + suffix, m);
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

/// One row of the descriptor's library-call table (tcc-mark-library-calls).
struct LibraryCallRow {
  int32_t kind = 0, dtype = TCC_DTYPE_F32, operands = 0;
  SmallVector<int64_t> params;
};

/// The module's `tcc.library_calls` table, or (TABLE = tcc.collectives)
/// its collectives, which have the same layout.
FailureOr<SmallVector<LibraryCallRow>> readLibraryCalls(ModuleOp module,
                                                        StringRef tableName = attr::libraryCalls) {
  SmallVector<LibraryCallRow> rows;
  auto table = module->getAttrOfType<ArrayAttr>(tableName);
  if (!table)
    return rows;
  for (Attribute a : table) {
    auto d = dyn_cast<DictionaryAttr>(a);
    auto kind = d ? d.getAs<IntegerAttr>("kind") : nullptr;
    auto operands = d ? d.getAs<IntegerAttr>("operands") : nullptr;
    auto params = d ? d.getAs<DenseI64ArrayAttr>("params") : nullptr;
    if (!kind || !operands || !params)
      return module.emitError("malformed ") << tableName << " entry " << a, failure();
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
  /// --cuda-emulation: the host twin's symbol, its workgroup memory bytes and
  /// whether it synchronizes (tcc_abi_emulated_kernel); "" without.
  std::string twin;
  int32_t twinShared = 0, twinSynchronizes = 0;
};

/// What a device artifact adds to the descriptor.
struct DeviceCode {
  std::string device; ///< "" for CPU artifacts
  std::string ptx;
  std::vector<char> cubin;
  SmallVector<KernelRow> kernels;
};

/// ROW's host twin from `tcc.emulated_kernels`, when the module has twins.
LogicalResult readEmulatedKernel(ModuleOp module, KernelRow &row) {
  auto twins = module->getAttrOfType<DictionaryAttr>(attr::emulatedKernels);
  if (!twins)
    return success();
  auto entry = twins.getAs<ArrayAttr>(row.name);
  auto twin = entry && entry.size() == 3 ? dyn_cast<StringAttr>(entry[0]) : nullptr;
  auto shared = twin ? dyn_cast<IntegerAttr>(entry[1]) : nullptr;
  auto synchronizes = twin ? dyn_cast<IntegerAttr>(entry[2]) : nullptr;
  if (!shared || !synchronizes)
    return module.emitError("kernel '") << row.name << "' has no host twin in "
                                        << attr::emulatedKernels;
  row.twin = twin.str();
  row.twinShared = int32_t(shared.getInt());
  row.twinSynchronizes = int32_t(synchronizes.getInt());
  return success();
}

/// The module's device attributes (`tcc.device`, `tcc.device_ptx`,
/// `tcc.kernels`); an empty DeviceCode for CPU artifacts.
FailureOr<DeviceCode> readDeviceCode(ModuleOp module) {
  DeviceCode code;
  auto device = module->getAttrOfType<StringAttr>(attr::device);
  auto table = module->getAttrOfType<ArrayAttr>(attr::kernels);
  if (!table)
    return code;
  if (!table.empty() && !device)
    return module.emitError("kernel launches but no device code"), failure();
  if (device) {
    code.device = device.str();
    if (auto ptx = module->getAttrOfType<StringAttr>(attr::devicePtx))
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
    if (failed(readEmulatedKernel(module, row)))
      return failure();
    code.kernels.push_back(std::move(row));
  }
  return code;
}

/// ptxas --split-compile's thread count (its output depends on it).
constexpr const char *kPtxasThreads = "8";

/// Assembles PTX for CHIP ("sm_90") with the toolkit's ptxas, so that loading
/// needs no JIT; the cubin's bytes, or failure with ptxas' messages.
FailureOr<std::vector<char>> assemblePtx(Location loc, StringRef ptx, StringRef chip,
                                         StringRef toolkit) {
  const PtxasInfo &found = findPtxas(toolkit);
  if (found.path.empty()) {
    SmallString<256> expected(toolkit);
    llvm::sys::path::append(expected, "bin", "ptxas");
    return emitError(loc, "no ptxas at '")
               << expected << "' or on PATH (set TCC_CUDA_PATH to the CUDA toolkit)",
           failure();
  }
  StringRef ptxas = found.path;
  SmallString<128> in, out, log;
  for (auto [path, ext] : {std::pair{&in, "ptx"}, {&out, "cubin"}, {&log, "log"}})
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile("tcc-kernels", ext, *path))
      return emitError(loc, "cannot create a temporary file: ") << ec.message(), failure();
  llvm::scope_exit cleanup([&] {
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
  // Its optimizations on several threads: the cubin depends on the count, so
  // the count is fixed, not -j (the same bytes for any -j, on any machine).
  if (found.splitCompile)
    argv.append({"--split-compile", kPtxasThreads});
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
  auto dict = module->getAttrOfType<DictionaryAttr>(attr::metadata);
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

/// One field of an abi.h struct: the LLVM type the writer emits for it and
/// where the C compiler put it.
struct AbiField {
  llvm::Type *type;
  uint64_t offset;
  const char *name;
};
#define TCC_ABI_FIELD(Struct, field, type) AbiField{type, offsetof(Struct, field), #field}

/// The LLVM struct of FIELDS, which must lay out like the C struct of
/// C_SIZE bytes: an abi.h change that the writer does not follow is an error
/// here, not a descriptor the runtime misreads.
FailureOr<llvm::StructType *> abiStruct(Location loc, const llvm::DataLayout &dl, StringRef name,
                                        ArrayRef<AbiField> fields, uint64_t cSize) {
  SmallVector<llvm::Type *> types;
  for (const AbiField &f : fields)
    types.push_back(f.type);
  auto *type = llvm::StructType::create(types.front()->getContext(), types, name);
  const llvm::StructLayout *layout = dl.getStructLayout(type);
  for (auto [i, f] : llvm::enumerate(fields))
    if (layout->getElementOffset(i) != f.offset)
      return emitError(loc, "internal error: ")
                 << name << "." << f.name << " is at byte " << layout->getElementOffset(i)
                 << " of the emitted descriptor but at byte " << f.offset << " in abi.h",
             failure();
  if (layout->getSizeInBytes() != cSize)
    return emitError(loc, "internal error: ")
               << name << " has " << layout->getSizeInBytes() << " bytes in the emitted descriptor, "
               << cSize << " in abi.h (a field is missing)",
           failure();
  return type;
}

/// The LLVM types of abi.h's structs, each checked against the C layout.
struct AbiTypes {
  llvm::StructType *tensor, *entry, *call, *metadata, *kernel, *emulatedKernel, *cpuVariant,
      *descriptor;
  llvm::ArrayType *dim3;
};

FailureOr<AbiTypes> abiTypes(Location loc, llvm::Module &m) {
  llvm::LLVMContext &ctx = m.getContext();
  const llvm::DataLayout &dl = m.getDataLayout();
  auto *ptr = llvm::PointerType::getUnqual(ctx);
  auto *i32 = llvm::Type::getInt32Ty(ctx);
  auto *i64 = llvm::Type::getInt64Ty(ctx);
  AbiTypes t;
  t.dim3 = llvm::ArrayType::get(i32, 3);
  auto build = [&](llvm::StructType *&out, StringRef name, ArrayRef<AbiField> fields,
                   uint64_t size) {
    FailureOr<llvm::StructType *> type = abiStruct(loc, dl, name, fields, size);
    out = succeeded(type) ? *type : nullptr;
    return succeeded(type);
  };
#define F(field, type) TCC_ABI_FIELD(tcc_abi_tensor, field, type)
  if (!build(t.tensor, "tcc_abi_tensor",
             {F(name, ptr), F(role, i32), F(dtype, i32), F(region, i32), F(rank, i32),
              F(shape, ptr), F(offset, i64), F(size_bytes, i64)},
             sizeof(tcc_abi_tensor)))
    return failure();
#undef F
#define F(field, type) TCC_ABI_FIELD(tcc_abi_entry, field, type)
  if (!build(t.entry, "tcc_abi_entry",
             {F(name, ptr), F(fn, ptr), F(num_tensors, i32), F(tensor_indices, ptr)},
             sizeof(tcc_abi_entry)))
    return failure();
#undef F
#define F(field, type) TCC_ABI_FIELD(tcc_abi_library_call, field, type)
  if (!build(t.call, "tcc_abi_library_call",
             {F(kind, i32), F(dtype, i32), F(num_params, i32), F(num_operands, i32),
              F(params, ptr)},
             sizeof(tcc_abi_library_call)))
    return failure();
#undef F
#define F(field, type) TCC_ABI_FIELD(tcc_abi_metadata, field, type)
  if (!build(t.metadata, "tcc_abi_metadata", {F(key, ptr), F(value, ptr)},
             sizeof(tcc_abi_metadata)))
    return failure();
#undef F
#define F(field, type) TCC_ABI_FIELD(tcc_abi_kernel, field, type)
  if (!build(t.kernel, "tcc_abi_kernel",
             {F(name, ptr), F(grid, t.dim3), F(block, t.dim3), F(shared_bytes, i32),
              F(num_params, i32)},
             sizeof(tcc_abi_kernel)))
    return failure();
#undef F
#define F(field, type) TCC_ABI_FIELD(tcc_abi_emulated_kernel, field, type)
  if (!build(t.emulatedKernel, "tcc_abi_emulated_kernel",
             {F(fn, ptr), F(shared_bytes, i32), F(synchronizes, i32)},
             sizeof(tcc_abi_emulated_kernel)))
    return failure();
#undef F
#define F(field, type) TCC_ABI_FIELD(tcc_abi_cpu_variant, field, type)
  if (!build(t.cpuVariant, "tcc_abi_cpu_variant",
             {F(name, ptr), F(cpu_features, ptr), F(fns, ptr)}, sizeof(tcc_abi_cpu_variant)))
    return failure();
#undef F
#define F(field, type) TCC_ABI_FIELD(tcc_abi_descriptor, field, type)
  if (!build(t.descriptor, "tcc_abi_descriptor",
             {F(abi_version, i32), F(struct_size, i32), F(fingerprint, ptr), F(producer, ptr),
              F(target, ptr), F(cpu_features, ptr), F(arena_size, i64), F(state_size, i64),
              F(alignment, i64), F(num_tensors, i32), F(num_entries, i32), F(tensors, ptr),
              F(entries, ptr), F(num_library_calls, i32), F(library_calls, ptr),
              F(num_metadata, i32), F(metadata, ptr), F(device, ptr), F(num_kernels, i32),
              F(kernels, ptr), F(ptx, ptr), F(cubin, ptr), F(cubin_size, i64),
              F(device_scratch_size, i64), F(num_collectives, i32), F(collectives, ptr),
              F(emulated_kernels, ptr), F(num_cpu_variants, i32), F(cpu_variants, ptr)},
             sizeof(tcc_abi_descriptor)))
    return failure();
#undef F
  return t;
}

/// A private constant array global of ELT rows.
llvm::GlobalVariable *constantTable(llvm::Module &m, llvm::Type *elt,
                                    ArrayRef<llvm::Constant *> rows, StringRef name) {
  auto *type = llvm::ArrayType::get(elt, rows.size());
  return new llvm::GlobalVariable(m, type, true, llvm::GlobalValue::PrivateLinkage,
                                  llvm::ConstantArray::get(type, rows), name);
}

/// The tensor table (one row per name and role, shared by the entry points
/// that use it) and the entry table.
struct TensorTables {
  llvm::GlobalVariable *tensors, *entries;
  int32_t numTensors, numEntries;
  int64_t arenaSize = 0, stateSize = 0;
};

FailureOr<TensorTables> tensorTables(Location loc, llvm::Module &m, DescriptorBuilder &d,
                                     const AbiTypes &types, ArrayRef<PlannedEntry> entries,
                                     ArrayRef<llvm::Function *> wrappers) {
  llvm::LLVMContext &ctx = m.getContext();
  auto *i32 = llvm::Type::getInt32Ty(ctx);
  auto *i64 = llvm::Type::getInt64Ty(ctx);
  SmallVector<llvm::Constant *> tensorRows, entryRows;
  std::map<std::pair<std::string, int32_t>, int32_t> tensorIndex;
  std::map<int32_t, const PlannedTensor *> tensorPlans;
  TensorTables tables;
  for (auto [e, wrapper] : llvm::zip(entries, wrappers)) {
    tables.arenaSize = std::max(tables.arenaSize, e.arenaSize);
    tables.stateSize = std::max(tables.stateSize, e.stateSize);
    SmallVector<int32_t> indices;
    for (const PlannedTensor &t : e.tensors) {
      auto key = std::make_pair(t.name, t.role);
      auto it = tensorIndex.find(key);
      if (it == tensorIndex.end()) {
        llvm::Constant *shape = d.array<int64_t>(i64, t.shape, ".tcc.shape");
        tensorRows.push_back(llvm::ConstantStruct::get(
            types.tensor,
            {d.string(t.name), llvm::ConstantInt::get(i32, t.role),
             llvm::ConstantInt::get(i32, t.dtype), llvm::ConstantInt::get(i32, t.region),
             llvm::ConstantInt::get(i32, int32_t(t.shape.size())), shape,
             llvm::ConstantInt::get(i64, t.offset), llvm::ConstantInt::get(i64, t.size)}));
        it = tensorIndex.insert({key, int32_t(tensorRows.size() - 1)}).first;
        tensorPlans[it->second] = &t;
      } else {
        // Entry points share the row: they must agree on where it lives.
        const PlannedTensor &first = *tensorPlans[it->second];
        if (first.offset != t.offset || first.shape != t.shape || first.dtype != t.dtype)
          return emitError(loc, "entry '")
                     << e.name << "': tensor '" << t.name
                     << "' has another slot, shape or dtype than in an earlier entry point",
                 failure();
      }
      indices.push_back(it->second);
    }
    entryRows.push_back(llvm::ConstantStruct::get(
        types.entry, {d.string(e.name), wrapper,
                      llvm::ConstantInt::get(i32, int32_t(indices.size())),
                      d.array<int32_t>(i32, indices, ".tcc.indices")}));
  }
  tables.tensors = constantTable(m, types.tensor, tensorRows, ".tcc.tensors");
  tables.entries = constantTable(m, types.entry, entryRows, ".tcc.entries");
  tables.numTensors = int32_t(tensorRows.size());
  tables.numEntries = int32_t(entryRows.size());
  return tables;
}

llvm::GlobalVariable *libraryCallTable(llvm::Module &m, DescriptorBuilder &d,
                                       const AbiTypes &types, ArrayRef<LibraryCallRow> calls,
                                       StringRef name = ".tcc.library_calls") {
  auto *i32 = llvm::Type::getInt32Ty(m.getContext());
  auto *i64 = llvm::Type::getInt64Ty(m.getContext());
  SmallVector<llvm::Constant *> rows;
  for (const LibraryCallRow &c : calls)
    rows.push_back(llvm::ConstantStruct::get(
        types.call, {llvm::ConstantInt::get(i32, c.kind), llvm::ConstantInt::get(i32, c.dtype),
                     llvm::ConstantInt::get(i32, int32_t(c.params.size())),
                     llvm::ConstantInt::get(i32, c.operands),
                     d.array<int64_t>(i64, c.params, ".tcc.call_params")}));
  return constantTable(m, types.call, rows, name);
}

llvm::GlobalVariable *metadataTable(llvm::Module &m, DescriptorBuilder &d, const AbiTypes &types,
                                    ArrayRef<std::pair<std::string, std::string>> metadata) {
  SmallVector<llvm::Constant *> rows;
  for (const auto &[key, value] : metadata)
    rows.push_back(llvm::ConstantStruct::get(types.metadata, {d.string(key), d.string(value)}));
  return constantTable(m, types.metadata, rows, ".tcc.metadata");
}

llvm::GlobalVariable *kernelTable(llvm::Module &m, DescriptorBuilder &d, const AbiTypes &types,
                                  ArrayRef<KernelRow> kernels) {
  auto *i32 = llvm::Type::getInt32Ty(m.getContext());
  auto dim3 = [&](ArrayRef<int32_t> v) {
    return llvm::ConstantArray::get(
        types.dim3, {llvm::ConstantInt::get(i32, v[0]), llvm::ConstantInt::get(i32, v[1]),
                     llvm::ConstantInt::get(i32, v[2])});
  };
  SmallVector<llvm::Constant *> rows;
  for (const KernelRow &k : kernels)
    rows.push_back(llvm::ConstantStruct::get(
        types.kernel, {d.string(k.name), dim3(k.grid), dim3(k.block),
                       llvm::ConstantInt::get(i32, k.shared), llvm::ConstantInt::get(i32, k.params)}));
  return constantTable(m, types.kernel, rows, ".tcc.kernels");
}

/// The host twins of KERNELS (--cuda-emulation), in table order, or null
/// when they have none; failure when a twin did not reach the module.
FailureOr<llvm::Constant *> emulatedKernelTable(Location loc, llvm::Module &m,
                                                const AbiTypes &types,
                                                ArrayRef<KernelRow> kernels) {
  auto *ptr = llvm::PointerType::getUnqual(m.getContext());
  if (kernels.empty() || kernels.front().twin.empty())
    return llvm::ConstantPointerNull::get(ptr);
  auto *i32 = llvm::Type::getInt32Ty(m.getContext());
  SmallVector<llvm::Constant *> rows;
  for (const KernelRow &k : kernels) {
    llvm::Function *fn = k.twin.empty() ? nullptr : m.getFunction(k.twin);
    if (!fn || fn->isDeclaration())
      return emitError(loc, "kernel '") << k.name << "': its host twin is missing", failure();
    rows.push_back(llvm::ConstantStruct::get(
        types.emulatedKernel, {fn, llvm::ConstantInt::get(i32, k.twinShared),
                               llvm::ConstantInt::get(i32, k.twinSynchronizes)}));
  }
  return constantTable(m, types.emulatedKernel, rows, ".tcc.emulated_kernels");
}

/// The cubin's bytes as a 16-byte aligned global, or null.
llvm::Constant *cubinGlobal(llvm::Module &m, ArrayRef<char> cubin) {
  if (cubin.empty())
    return llvm::ConstantPointerNull::get(llvm::PointerType::getUnqual(m.getContext()));
  auto *bytes = llvm::ConstantDataArray::get(
      m.getContext(),
      llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(cubin.data()), cubin.size()));
  auto *g = new llvm::GlobalVariable(m, bytes->getType(), true, llvm::GlobalValue::PrivateLinkage,
                                     bytes, ".tcc.cubin");
  g->setAlignment(llvm::Align(16));
  return g;
}

LogicalResult buildDescriptor(Location loc, llvm::Module &m, ArrayRef<PlannedEntry> entries,
                              ArrayRef<LibraryCallRow> calls,
                              ArrayRef<LibraryCallRow> collectives,
                              ArrayRef<std::pair<std::string, std::string>> metadata,
                              const DeviceCode &deviceCode, const ArtifactOptions &options,
                              ArrayRef<llvm::Function *> wrappers,
                              ArrayRef<SmallVector<llvm::Function *>> variantWrappers) {
  llvm::LLVMContext &ctx = m.getContext();
  FailureOr<AbiTypes> types = abiTypes(loc, m);
  if (failed(types))
    return failure();
  DescriptorBuilder d(m);
  auto *ptr = llvm::PointerType::getUnqual(ctx);
  auto *i32 = llvm::Type::getInt32Ty(ctx);
  auto *i64 = llvm::Type::getInt64Ty(ctx);
  FailureOr<TensorTables> tables = tensorTables(loc, m, d, *types, entries, wrappers);
  if (failed(tables))
    return failure();
  llvm::GlobalVariable *callTable = libraryCallTable(m, d, *types, calls);
  llvm::GlobalVariable *collectiveTable =
      libraryCallTable(m, d, *types, collectives, ".tcc.collectives");
  // The lowest ABI version that has every runtime service the code calls:
  // version 2 added `collective` and made `profile_kernel` a versioned
  // service (a version-1 runtime may not have it).
  bool profiled = llvm::any_of(metadata, [](const auto &kv) {
    return kv.first == TCC_METADATA_PROFILE_KERNELS;
  });
  uint32_t abiVersion = collectives.empty() && !profiled ? 1u : 2u;
  // Version 3: a ZeRO-1 train_step updates nothing itself; a runtime that
  // does not run the sharded update (runtime/dist/zero.h) must refuse it.
  if (llvm::any_of(metadata, [](const auto &kv) { return kv.first == TCC_METADATA_ZERO; }))
    abiVersion = 3u;
  llvm::GlobalVariable *metadataRows = metadataTable(m, d, *types, metadata);
  // Device code: the kernel table, the PTX (NUL-terminated) and the cubin.
  llvm::GlobalVariable *kernels = kernelTable(m, d, *types, deviceCode.kernels);
  bool device = !deviceCode.device.empty();
  llvm::Constant *null = llvm::ConstantPointerNull::get(ptr);
  llvm::Constant *cubin = cubinGlobal(m, deviceCode.cubin);
  FailureOr<llvm::Constant *> emulated = emulatedKernelTable(loc, m, *types, deviceCode.kernels);
  if (failed(emulated))
    return failure();
  // The library calls' workspace, at the device arena's tail: they run in
  // order on one stream, so the largest call's bound.
  int64_t deviceScratch = 0;
  if (device)
    for (const LibraryCallRow &c : calls)
      deviceScratch = std::max(
          deviceScratch,
          libraryWorkspaceBytes(c.kind, c.params, StringRef(deviceCode.device).rsplit(':').second));

  // The code variants: per variant its name, features and entry functions.
  SmallVector<llvm::Constant *> variantRows;
  for (auto [variant, fns] : llvm::zip(options.variants, variantWrappers)) {
    SmallVector<llvm::Constant *> fnRows(fns.begin(), fns.end());
    variantRows.push_back(llvm::ConstantStruct::get(
        types->cpuVariant, {d.string(variant.cpu.variant()), d.string(variant.cpu.recorded),
                            constantTable(m, ptr, fnRows, ".tcc.variant_entries")}));
  }
  llvm::Constant *variants = variantRows.empty()
                                 ? null
                                 : constantTable(m, types->cpuVariant, variantRows,
                                                 ".tcc.cpu_variants");

  const llvm::DataLayout &dl = m.getDataLayout();
  std::string producer = "tcc " TCC_VERSION " (LLVM " LLVM_VERSION_STRING ")";
  auto count = [&](size_t n) { return llvm::ConstantInt::get(i32, int32_t(n)); };
  llvm::Constant *desc = llvm::ConstantStruct::get(
      types->descriptor,
      {llvm::ConstantInt::get(i32, abiVersion),
       llvm::ConstantInt::get(i32, dl.getTypeAllocSize(types->descriptor)),
       d.string(options.fingerprint), d.string(producer), d.string("x86_64"),
       d.string(options.cpu.recorded),
       llvm::ConstantInt::get(i64, tables->arenaSize), llvm::ConstantInt::get(i64, tables->stateSize),
       llvm::ConstantInt::get(i64, 64), count(tables->numTensors), count(tables->numEntries),
       tables->tensors, tables->entries, count(calls.size()), callTable, count(metadata.size()),
       metadataRows, device ? d.string(deviceCode.device) : null,
       count(deviceCode.kernels.size()), kernels, device ? d.string(deviceCode.ptx) : null, cubin,
       llvm::ConstantInt::get(i64, int64_t(deviceCode.cubin.size())),
       llvm::ConstantInt::get(i64, deviceScratch), count(collectives.size()), collectiveTable,
       *emulated, count(variantRows.size()), variants});
  auto *descGlobal = new llvm::GlobalVariable(m, types->descriptor, true,
                                              llvm::GlobalValue::PrivateLinkage, desc,
                                              ".tcc.descriptor");

  // const tcc_abi_descriptor *tcc_artifact_descriptor(void)
  auto *fnTy = llvm::FunctionType::get(ptr, {}, false);
  auto *fn = llvm::Function::Create(fnTy, llvm::GlobalValue::ExternalLinkage,
                                    TCC_ABI_DESCRIPTOR_SYMBOL, m);
  fn->setVisibility(llvm::GlobalValue::DefaultVisibility);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  b.CreateRet(descGlobal);
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

namespace {

/// A timer for one stage, nested in the caller's (none without one).
mlir::TimingScope timedStage(const ArtifactOptions &options, StringRef name) {
  return options.timing ? options.timing->nest(name) : mlir::TimingScope();
}

/// What the module's attributes hold besides its code: the library calls,
/// the collectives, the metadata and the device code.
struct ModuleTables {
  SmallVector<LibraryCallRow> calls, collectives;
  SmallVector<std::pair<std::string, std::string>> metadata;
  DeviceCode deviceCode;
};

/// MODULE's tables, with the device code's PTX assembled to a cubin.
FailureOr<ModuleTables> readModuleTables(ModuleOp module, const ArtifactOptions &options) {
  ModuleTables tables;
  FailureOr<SmallVector<LibraryCallRow>> calls = readLibraryCalls(module);
  if (failed(calls))
    return failure();
  tables.calls = std::move(*calls);
  FailureOr<SmallVector<LibraryCallRow>> collectives =
      readLibraryCalls(module, attr::collectives);
  if (failed(collectives))
    return failure();
  tables.collectives = std::move(*collectives);
  auto metadata = readMetadata(module);
  if (failed(metadata))
    return failure();
  tables.metadata = std::move(*metadata);
  FailureOr<DeviceCode> deviceCode = readDeviceCode(module);
  if (failed(deviceCode))
    return failure();
  tables.deviceCode = std::move(*deviceCode);
  if (!tables.deviceCode.kernels.empty()) {
    mlir::TimingScope t = timedStage(options, "ptxas");
    StringRef chip = StringRef(tables.deviceCode.device).rsplit(':').second;
    auto cubin = assemblePtx(module.getLoc(), tables.deviceCode.ptx, chip, options.cudaToolkit);
    if (failed(cubin))
      return failure();
    tables.deviceCode.cubin = std::move(*cubin);
  }
  return tables;
}

/// MODULE (LLVM dialect) as an LLVM module in LLCTX; null when it does not
/// translate.
std::unique_ptr<llvm::Module> translateToLLVMIR(ModuleOp module, llvm::LLVMContext &llctx,
                                                const ArtifactOptions &options) {
  registerBuiltinDialectTranslation(*module.getContext());
  registerLLVMDialectTranslation(*module.getContext());
  registerOpenMPDialectTranslation(*module.getContext());
  mlir::TimingScope translation = timedStage(options, "translate to LLVM IR");
  return translateModuleToLLVMIR(module, llctx, "tcc-artifact");
}

/// Makes every function tcc generated internal: only the descriptor is
/// exported, so that two artifacts in one process never clash.
void internalizeFunctions(llvm::Module &m, const TargetCpu &cpu) {
  for (llvm::Function &f : m) {
    if (f.isDeclaration())
      continue;
    f.setLinkage(llvm::GlobalValue::InternalLinkage);
    // Kernels stay functions: they are the unit the code generation groups
    // and caches (LLVMCodegen.h), and --profile attributes time by symbol.
    if (f.getName().starts_with("kernel_")) {
      f.addFnAttr(llvm::Attribute::NoInline);
      // The width the MLIR pipeline vectorized at, for the loops LLVM
      // vectorizes itself (reductions, row loops) too.
      if (cpu.vectorBits != 256)
        f.addFnAttr("prefer-vector-width", std::to_string(cpu.vectorBits));
    }
  }
}

/// What a variant's functions are renamed with: ".x86-64-v4-bf16".
std::string variantSuffix(const TargetCpu &cpu) { return "." + cpu.variant(); }

/// Whether two modules' tables (library calls, collectives, metadata) are
/// the same: a variant's code calls the runtime by the rows of the
/// descriptor, which holds the base's.
bool sameTables(const ModuleTables &a, const ModuleTables &b) {
  auto sameCalls = [](ArrayRef<LibraryCallRow> x, ArrayRef<LibraryCallRow> y) {
    return llvm::equal(x, y, [](const LibraryCallRow &l, const LibraryCallRow &r) {
      return l.kind == r.kind && l.dtype == r.dtype && l.operands == r.operands &&
             l.params == r.params;
    });
  };
  return sameCalls(a.calls, b.calls) && sameCalls(a.collectives, b.collectives) &&
         a.metadata == b.metadata;
}

/// Translates each variant's module and links it into M: every function it
/// defines renamed with variantSuffix and compiled for the variant's CPU
/// (LLVM's per-function target-cpu and target-features), marked
/// kVariantAttr so the code generation counts the base's kernels alone.
LogicalResult linkVariants(Location loc, llvm::Module &m, const ModuleTables &tables,
                           const ArtifactOptions &options) {
  for (const CpuVariantCode &variant : options.variants) {
    FailureOr<ModuleTables> own = readModuleTables(variant.module, options);
    if (failed(own))
      return failure();
    if (!sameTables(tables, *own))
      return emitError(loc, "internal error: the ")
             << variant.cpu.variant()
             << " variant has other library calls, collectives or metadata than the artifact";
    std::unique_ptr<llvm::Module> vm = translateToLLVMIR(variant.module, m.getContext(), options);
    if (!vm)
      return emitError(loc, "cannot translate the ")
             << variant.cpu.variant() << " variant to LLVM IR";
    vm->setTargetTriple(m.getTargetTriple());
    vm->setDataLayout(m.getDataLayout());
    // Renamed while still external, so that the linker takes them all,
    // then internal like the base's.
    internalizeFunctions(*vm, variant.cpu);
    std::string suffix = variantSuffix(variant.cpu);
    SmallVector<std::string> names;
    for (llvm::Function &f : *vm) {
      if (f.isDeclaration())
        continue;
      f.setName(f.getName() + suffix);
      f.setLinkage(llvm::GlobalValue::ExternalLinkage);
      f.addFnAttr("target-cpu", variant.cpu.name);
      if (!variant.cpu.features.empty())
        f.addFnAttr("target-features", variant.cpu.features);
      f.addFnAttr(kVariantAttr);
      names.push_back(f.getName().str());
    }
    if (llvm::Linker::linkModules(m, std::move(vm)))
      return emitError(loc, "internal error: cannot link the ")
             << variant.cpu.variant() << " variant into the artifact";
    for (const std::string &name : names)
      if (llvm::Function *f = m.getFunction(name))
        f->setLinkage(llvm::GlobalValue::InternalLinkage);
  }
  return success();
}

/// Adds the entry points' wrappers and the descriptor to M, then verifies
/// the whole module.
LogicalResult addDescriptor(Location loc, llvm::Module &m, ArrayRef<PlannedEntry> entries,
                            const ModuleTables &tables, const ArtifactOptions &options) {
  mlir::TimingScope descriptor = timedStage(options, "descriptor and verifier");
  SmallVector<llvm::Function *> wrappers;
  for (const PlannedEntry &e : entries) {
    llvm::Function *lowered = m.getFunction(e.function);
    if (!lowered || lowered->arg_size() != 11)
      return emitError(loc, "entry '")
             << e.name << "': lowered function '" << e.function
             << "' is missing or does not take (arena, state, runtime)";
    wrappers.push_back(buildWrapper(m, e, lowered));
  }
  SmallVector<SmallVector<llvm::Function *>> variantWrappers;
  for (const CpuVariantCode &variant : options.variants) {
    std::string suffix = variantSuffix(variant.cpu);
    SmallVector<llvm::Function *> &fns = variantWrappers.emplace_back();
    for (const PlannedEntry &e : entries) {
      llvm::Function *lowered = m.getFunction(e.function + suffix);
      if (!lowered || lowered->arg_size() != 11)
        return emitError(loc, "entry '") << e.name << "': its " << variant.cpu.variant()
                                         << " variant is missing";
      fns.push_back(buildWrapper(m, e, lowered, suffix));
    }
  }
  if (failed(buildDescriptor(loc, m, entries, tables.calls, tables.collectives, tables.metadata,
                             tables.deviceCode, options, wrappers, variantWrappers)))
    return failure();
  std::string verifyErrors;
  llvm::raw_string_ostream vs(verifyErrors);
  if (llvm::verifyModule(m, &vs))
    return emitError(loc, "internal error: invalid LLVM IR: ") << verifyErrors;
  return success();
}

/// Writes OUTPUTPATH whole with WRITE.
LogicalResult writeOutputFile(Location loc, StringRef outputPath,
                              llvm::function_ref<void(llvm::raw_ostream &)> write) {
  std::string error;
  auto out = mlir::openOutputFile(outputPath, &error);
  if (!out)
    return emitError(loc, error);
  write(out->os());
  out->keep();
  return success();
}

/// Object code, in-process: one object file for --emit=obj (STAGE Object),
/// else one per group of kernels, compiled in parallel.
FailureOr<std::vector<std::string>> emitObjectCode(Location loc, llvm::Module &m,
                                                   llvm::TargetMachine &tm,
                                                   const ArtifactOptions &options,
                                                   ArtifactStage stage) {
  if (stage == ArtifactStage::Object) {
    quietOptimizationDiagnostics(m.getContext());
    if (options.optimize)
      optimizeModule(m, tm);
    prepareForInstructionSelection(m, tm);
    llvm::SmallString<0> object;
    llvm::raw_svector_ostream os(object);
    llvm::legacy::PassManager pm;
    if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile))
      return emitError(loc, "the target cannot emit object files");
    pm.run(m);
    return std::vector<std::string>{std::string(object.str())};
  }
  CodegenOptions codegen;
  codegen.cpu = options.cpu.name;
  codegen.features = options.cpu.features;
  codegen.optimize = options.optimize;
  codegen.threads = options.threads;
  codegen.cache = options.cache;
  mlir::TimingScope none;
  CodegenStats unused;
  std::string error;
  FailureOr<std::vector<std::string>> emitted =
      emitObjects(m, codegen, options.timing ? *options.timing : none,
                  options.stats ? *options.stats : unused, error);
  if (failed(emitted))
    return emitError(loc, "LLVM code generation failed: ") << error;
  return emitted;
}

/// Writes OBJECTS as temporary files for the linker, appending their paths
/// to OBJPATHS (the caller removes them).
LogicalResult writeTemporaryObjects(Location loc, ArrayRef<std::string> objects,
                                    SmallVectorImpl<SmallString<128>> &objPaths) {
  for (const std::string &object : objects) {
    int fd;
    SmallString<128> objPath;
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("tcc-artifact", "o", fd, objPath))
      return emitError(loc, "cannot create a temporary file: ") << ec.message();
    objPaths.push_back(objPath);
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << object;
    os.close();
    if (os.has_error()) {
      os.clear_error();
      return emitError(loc, "cannot write '") << objPath << "'";
    }
  }
  return success();
}

/// Links OBJECTS into the shared library OUTPUTPATH with the system C
/// driver; written beside the output and renamed, so a failure leaves
/// nothing half written.
LogicalResult linkSharedLibrary(Location loc, ArrayRef<std::string> objects, StringRef outputPath,
                                bool usesOpenMP, const ArtifactOptions &options) {
  // The objects as temporary files for the linker, removed whatever happens.
  mlir::TimingScope writing = timedStage(options, "write objects");
  SmallVector<SmallString<128>> objPaths;
  llvm::scope_exit removeObjects([&] {
    for (const SmallString<128> &p : objPaths)
      llvm::sys::fs::remove(p);
  });
  if (failed(writeTemporaryObjects(loc, objects, objPaths)))
    return failure();
  writing.stop();
  auto cc = llvm::sys::findProgramByName("cc");
  if (!cc) {
    return emitError(loc, "no C compiler driver 'cc' on PATH to link with");
  }
  // A name of its own: concurrent compiles may write one output (the last
  // rename wins, whole).
  SmallString<256> tmpOut;
  llvm::sys::fs::createUniquePath(outputPath + ".tmp-%%%%%%%%", tmpOut, /*MakeAbsolute=*/false);
  std::string ccPath = *cc;
  SmallVector<StringRef> argv = {ccPath, "-shared", "-o", tmpOut};
  for (const SmallString<128> &p : objPaths)
    argv.push_back(p);
  argv.push_back("-lm");
  // Parallel loops call LLVM's OpenMP runtime: name the very library the
  // runtime links, so that both resolve to one copy (one thread pool).
  std::string openmpRpath =
      ("-Wl,-rpath," + llvm::sys::path::parent_path(TCC_OPENMP_LIBRARY)).str();
  if (usesOpenMP) {
    argv.push_back(TCC_OPENMP_LIBRARY);
    argv.push_back(openmpRpath);
  }
  std::string linkError;
  mlir::TimingScope link = timedStage(options, "link");
  int rc = llvm::sys::ExecuteAndWait(ccPath, argv, std::nullopt, {}, 0, 0,
                                     &linkError);
  link.stop();
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

} // namespace

LogicalResult tcc::writeArtifact(ModuleOp module,
                                 ArrayRef<PlannedEntry> entries,
                                 const ArtifactOptions &options,
                                 ArtifactStage stage, StringRef outputPath) {
  Location loc = module.getLoc();
  FailureOr<ModuleTables> tables = readModuleTables(module, options);
  if (failed(tables))
    return failure();
  llvm::LLVMContext llctx;
  std::unique_ptr<llvm::Module> m = translateToLLVMIR(module, llctx, options);
  if (!m)
    return emitError(loc, "cannot translate the module to LLVM IR");

  std::string error;
  std::unique_ptr<llvm::TargetMachine> tm =
      createTargetMachine(options.cpu.name, options.cpu.features, error);
  if (!tm)
    return emitError(loc, "no x86-64 target in this LLVM: ") << error;
  m->setTargetTriple(tm->getTargetTriple());
  m->setDataLayout(tm->createDataLayout());

  internalizeFunctions(*m, options.cpu);
  if (failed(linkVariants(loc, *m, *tables, options)))
    return failure();
  bool usesOpenMP = llvm::any_of(*m, [](const llvm::Function &f) {
    return f.isDeclaration() && f.getName().starts_with("__kmpc_");
  });
  if (failed(addDescriptor(loc, *m, entries, *tables, options)))
    return failure();
  if (stage == ArtifactStage::LLVMIR) {
    if (options.optimize)
      optimizeModule(*m, *tm);
    return writeOutputFile(loc, outputPath, [&](llvm::raw_ostream &os) { m->print(os, nullptr); });
  }
  FailureOr<std::vector<std::string>> objects = emitObjectCode(loc, *m, *tm, options, stage);
  if (failed(objects))
    return failure();
  if (stage == ArtifactStage::Object)
    return writeOutputFile(loc, outputPath,
                           [&](llvm::raw_ostream &os) { os << objects->front(); });
  return linkSharedLibrary(loc, *objects, outputPath, usesOpenMP, options);
}
