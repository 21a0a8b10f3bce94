//===- LLVMCodegen.cpp - object code on every core, through the cache ------===//
//
// Split, then compile each group in isolation. A group's bitcode is both the
// work item (an LLVMContext is single-threaded, so each worker parses its
// own copy) and the cache key: the same kernels under the same options are
// the same bytes.
//
//===----------------------------------------------------------------------===//

#include "compiler/LLVMCodegen.h"

#include "compiler/CompileCache.h"
#include "runtime/cpu/cpu_features.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Analysis/AssumptionCache.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/Analysis/TargetTransformInfo.h"
#include "llvm/IR/Operator.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/CodeGen/TargetSubtargetInfo.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/LoopUtils.h"

#include <mutex>

using namespace llvm;

namespace {

/// Kernels go to at most this many groups: enough to keep 32 cores busy,
/// few enough that a small model does not pay a module's fixed cost (a
/// target machine, the pass pipelines) many times. Not the thread count:
/// the groups, and so the object files, must not depend on it.
constexpr unsigned kMaxKernelGroups = 32;

/// Kernels are optimized at O3 in a program of at most this many distinct
/// kernels, else at O2. O3's larger unrolling threshold is most of its cost
/// over O2: 15-20% of a large CNN's compile (googlenet's 699 kernels, 7.8 ->
/// 6.3 s of CPU), for no step time measured there (googlenet, mobilenet_v2,
/// lstm and a 4-layer d=256 GPT at O2 within noise); a small program's
/// short loops gain from it (the parity CNN's 0.2 ms step is 2-5% faster at
/// O3), and its compile takes well under a second either way.
constexpr unsigned kMaxO3Kernels = 128;

bool isKernel(const GlobalValue &gv) {
  return isa<Function>(gv) && !gv.isDeclaration() && gv.getName().starts_with("kernel_");
}

/// Which group each definition goes to: a kernel by its name; anything else
/// with the one group that uses it, or the host group (0) when several do
/// or none does.
class Grouping {
public:
  Grouping(Module &m) {
    for (Function &f : m) {
      if (!isKernel(f))
        continue;
      ++numKernels;
      numBaseKernels += !f.hasFnAttribute(tcc::kVariantAttr);
      numCalls += f.getNumUses();
    }
    kernelGroups = std::min(numKernels, kMaxKernelGroups);
  }

  unsigned groups() const { return 1 + kernelGroups; }
  unsigned kernels() const { return numKernels; }
  /// The kernels of the artifact's own code, without its CPU variants'.
  unsigned baseKernels() const { return numBaseKernels; }
  unsigned calls() const { return numCalls; }

  unsigned of(const GlobalValue *gv) {
    auto it = memo.find(gv);
    if (it != memo.end())
      return it->second;
    unsigned g = 0;
    if (isKernel(*gv))
      g = 1 + unsigned(xxh3_64bits(gv->getName()) % kernelGroups);
    else if (gv->hasLocalLinkage() && !gv->isDeclaration()) {
      memo[gv] = 0; // a cycle of users stays in the host group
      std::optional<unsigned> users = usersGroup(gv);
      g = users && *users != kSeveral ? *users : 0;
    }
    memo[gv] = g;
    return g;
  }

  static constexpr unsigned kSeveral = ~0u;

  /// The one group all users of V are in; kSeveral when they are in
  /// several; nullopt when V has none.
  std::optional<unsigned> usersGroup(const Value *v) {
    std::optional<unsigned> group;
    for (const User *u : v->users()) {
      std::optional<unsigned> g;
      if (auto *inst = dyn_cast<Instruction>(u))
        g = of(inst->getFunction());
      else if (auto *gv = dyn_cast<GlobalValue>(u))
        g = of(gv);
      else
        g = usersGroup(u);
      if (!g)
        continue;
      if (*g == kSeveral || (group && *group != *g))
        return kSeveral;
      group = g;
    }
    return group;
  }

private:
  unsigned kernelGroups = 0, numKernels = 0, numBaseKernels = 0, numCalls = 0;
  DenseMap<const GlobalValue *, unsigned> memo;
};

/// Gives every definition used from another group than its own a hidden
/// external symbol, so the groups link; hidden keeps it out of the
/// artifact's dynamic symbols (two artifacts in a process never clash).
void externalizeShared(Module &m, Grouping &grouping) {
  unsigned anonymous = 0;
  auto share = [&](GlobalValue &gv) {
    if (gv.isDeclaration() || !gv.hasLocalLinkage())
      return;
    unsigned own = grouping.of(&gv);
    std::optional<unsigned> users = grouping.usersGroup(&gv);
    if (!users || *users == own)
      return;
    if (!gv.hasName())
      gv.setName("tcc.shared." + Twine(anonymous++));
    gv.setLinkage(GlobalValue::ExternalLinkage);
    gv.setVisibility(GlobalValue::HiddenVisibility);
    gv.setDSOLocal(true);
  };
  for (Function &f : m)
    share(f);
  for (GlobalVariable &g : m.globals())
    share(g);
}

/// Group G of M as bitcode: its definitions, and declarations of only what
/// they use (a declaration of another group's kernel would make every group
/// change whenever any kernel does).
std::string groupBitcode(const Module &m, Grouping &grouping, unsigned g) {
  ValueToValueMapTy map;
  std::unique_ptr<Module> part = CloneModule(
      m, map, [&](const GlobalValue *gv) { return grouping.of(gv) == g; });
  part->setModuleIdentifier("tcc-group");
  part->setSourceFileName("tcc");
  for (Function &f : make_early_inc_range(*part))
    if (f.isDeclaration() && f.use_empty())
      f.eraseFromParent();
  for (GlobalVariable &v : make_early_inc_range(part->globals()))
    if (v.isDeclaration() && v.use_empty())
      v.eraseFromParent();
  std::string bitcode;
  raw_string_ostream os(bitcode);
  WriteBitcodeToFile(*part, os);
  return bitcode;
}

/// Selects of bf16 values (the NaN pick of MLIR's bf16 truncation, which
/// InstCombine turns back into a bf16 select whatever MLIR emits) as selects
/// of their i16 bits. x86 without AVX512-BF16 promotes a bf16 vector select
/// to f32 and rounds back with a call of libgcc's __truncsfbf2 per element,
/// which an artifact may not import; the bits are the values, so this is
/// exact. Runs after the optimizer, which would fold it back.
void selectBf16Bits(Module &m) {
  SmallVector<SelectInst *> selects;
  for (Function &f : m)
    for (Instruction &i : instructions(f))
      if (auto *s = dyn_cast<SelectInst>(&i); s && s->getType()->getScalarType()->isBFloatTy())
        selects.push_back(s);
  // A bf16 value in a register is an f32 to the x86 backend: going back to
  // its bits costs the same call. So the operands' bits are taken from the
  // integers they were cast from, and the result's integer readers read
  // the select's bits directly.
  for (SelectInst *s : selects) {
    Type *type = s->getType();
    Type *bits = type->getWithNewType(Type::getInt16Ty(m.getContext()));
    IRBuilder<> b(s);
    auto bitsOf = [&](Value *v) -> Value * {
      if (auto *cast = dyn_cast<BitCastInst>(v); cast && cast->getSrcTy() == bits)
        return cast->getOperand(0);
      return b.CreateBitCast(v, bits);
    };
    Value *onTrue = bitsOf(s->getTrueValue());
    Value *onFalse = bitsOf(s->getFalseValue());
    Value *picked = b.CreateSelect(s->getCondition(), onTrue, onFalse);
    for (User *u : llvm::make_early_inc_range(s->users()))
      if (auto *cast = dyn_cast<BitCastInst>(u); cast && !cast->getDestTy()->isFPOrFPVectorTy()) {
        IRBuilder<> at(cast);
        cast->replaceAllUsesWith(at.CreateBitCast(picked, cast->getDestTy()));
        cast->eraseFromParent();
      }
    s->replaceAllUsesWith(b.CreateBitCast(picked, type));
    s->eraseFromParent();
  }
}

/// Scalar IEEE maximum / minimum (llvm.maximum, llvm.minimum: arith.maximumf
/// and minimumf, as in a max pool's window or a ReLU that stayed scalar) as
/// compares and selects (tcc::createMinMax), in the functions compiled for
/// AVX-512. There LLVM orders the operands by the sign of one of them
/// through a general register and a mask register (vmovd, test, sets,
/// kmovd, masked moves), which in a loop-carried chain made a scalar max
/// pool 9x slower than the AVX2 lowering's blends (zoo resnet18's 3x3 pool,
/// 0.28 -> 2.62 ms, Zen 4). Runs after the optimizer, which would fold it
/// back.
void expandScalarMinMax(Module &m, TargetMachine &tm) {
  SmallVector<IntrinsicInst *> calls;
  for (Function &f : m) {
    if (f.isDeclaration() || !tm.getSubtargetImpl(f)->checkFeatures("+avx512f"))
      continue;
    for (Instruction &i : instructions(f))
      if (auto *call = dyn_cast<IntrinsicInst>(&i);
          call && !call->getType()->isVectorTy() &&
          (call->getIntrinsicID() == Intrinsic::maximum ||
           call->getIntrinsicID() == Intrinsic::minimum))
        calls.push_back(call);
  }
  for (IntrinsicInst *call : calls) {
    IRBuilder<> builder(call);
    call->replaceAllUsesWith(tcc::createMinMax(builder, call->getIntrinsicID() == Intrinsic::maximum,
                                               call->getArgOperand(0), call->getArgOperand(1)));
    call->eraseFromParent();
  }
}

/// An outer loop whose every iteration runs at least this many iterations
/// of the loops inside it is not unrolled: its own overhead (an increment,
/// a compare, a branch) is under a sixteenth of the work, so unrolling it
/// gains nothing measurable, while it copies the whole nest, every copy
/// then vectorized with its runtime checks and remainder loops.
constexpr uint64_t kMinInnerIterations = 16;

/// Iterations of L's innermost bodies per entry into L, saturating; a loop
/// without a constant trip count counts as large.
uint64_t nestIterations(Loop &l, ScalarEvolution &se) {
  constexpr uint64_t kLarge = uint64_t(1) << 40;
  uint64_t trips = se.getSmallConstantTripCount(&l);
  if (trips == 0)
    trips = kLarge;
  uint64_t inner = l.getSubLoops().empty() ? 1 : 0;
  for (Loop *sub : l.getSubLoops())
    inner = std::min(kLarge, inner + nestIterations(*sub, se));
  return std::min(kLarge, trips * inner);
}

/// Marks the outer loops of F that do not pay for unrolling (above) with
/// llvm.loop.unroll.disable. LLVM's own unroller decides per loop by the
/// size of its body, and at O3 fully unrolls a 16-iteration loop around a
/// 1280-iteration one: mobilenet_v2's kernels grew 8x that way, for nothing
/// at run time. Innermost loops, and outer loops around small ones (a
/// convolution's 3x3 window), are left to LLVM.
void limitUnrolling(LoopInfo &loops, ScalarEvolution &se) {
  for (Loop *l : loops.getLoopsInPreorder()) {
    if (l->getSubLoops().empty() || !l->getLoopLatch())
      continue;
    uint64_t inner = 0;
    for (Loop *sub : l->getSubLoops())
      inner += nestIterations(*sub, se);
    if (inner >= kMinInnerIterations)
      addStringMetadataToLoop(l, "llvm.loop.unroll.disable", /*V=*/1);
  }
}

/// The most partial sums of one vector each that a reduction loop keeps.
constexpr uint64_t kReductionInterleave = 4;

/// Fixes how LLVM vectorizes the reduction loops of F (innermost loops with
/// a reassociable combiner: tcc-linalg-to-cpu-loops marks the accumulators
/// of reductions it lowers so), so that the order of their additions is a
/// function of the trip count and the target alone: VF lanes (the widest
/// f32 vector), IC = min(4, trips / VF) partial vectors, no unrolling
/// before vectorization. Left to its cost model, the vectorizer chooses the
/// interleave count (and the unroller whether to unroll fully, then SLP how
/// to pair the sums) by the size of the whole body, so one reduction fused
/// with different producers summed in different orders: a recomputed value
/// (tcc-rematerialize) fused into a backward reduction changed its bits.
void fixReductionOrder(Function &f, LoopInfo &loops, ScalarEvolution &se,
                       const TargetTransformInfo &tti) {
  uint64_t lanes =
      tti.getRegisterBitWidth(TargetTransformInfo::RGK_FixedWidthVector).getFixedValue() / 32;
  if (lanes < 2)
    return;
  LLVMContext &ctx = f.getContext();
  for (Loop *l : loops.getLoopsInPreorder()) {
    if (!l->getSubLoops().empty() || !l->getLoopLatch())
      continue;
    SmallVector<Instruction *> reassociating;
    for (BasicBlock *bb : l->blocks())
      for (Instruction &i : *bb)
        if (isa<FPMathOperator>(i) && i.hasAllowReassoc())
          reassociating.push_back(&i);
    if (reassociating.empty())
      continue;
    // A header that runs TRIPS times: TRIPS - 1 iterations (the loops come
    // with the exit test at the top).
    uint64_t trips = se.getSmallConstantTripCount(l);
    if (trips && trips <= lanes) {
      // Too short to vectorize: in order, however LLVM unrolls it.
      for (Instruction *i : reassociating)
        i->setHasAllowReassoc(false);
      continue;
    }
    uint64_t interleave =
        trips ? std::clamp<uint64_t>(trips / lanes, 1, kReductionInterleave) : kReductionInterleave;
    auto hint = [&](StringRef name, Metadata *value) {
      return MDNode::get(ctx, {MDString::get(ctx, name), value});
    };
    auto i32 = [&](uint64_t v) {
      return ConstantAsMetadata::get(ConstantInt::get(Type::getInt32Ty(ctx), v));
    };
    SmallVector<MDNode *> hints = {
        hint("llvm.loop.vectorize.enable",
             ConstantAsMetadata::get(ConstantInt::getTrue(ctx))),
        hint("llvm.loop.vectorize.width", i32(lanes)),
        hint("llvm.loop.interleave.count", i32(interleave)),
        MDNode::get(ctx, {MDString::get(ctx, "llvm.loop.unroll.disable")})};
    // The vectorized loop keeps unroll.disable (no followup says otherwise):
    // the interleaved partial sums are its unrolling.
    MDNode *id = makePostTransformationMetadata(ctx, l->getLoopID(), {}, hints);
    l->setLoopID(id);
  }
}

/// LLVM's diagnostics while a group compiles, less its optimization remarks
/// and failures: a loop that fixReductionOrder asks to vectorize and LLVM
/// cannot (a reduction whose value also leaves the loop) stays a scalar loop
/// in program order, which is the compiler's business, not the user's.
/// Everything else (errors included) is printed as LLVM prints it.
struct QuietOptimizationDiagnostics : DiagnosticHandler {
  bool handleDiagnostics(const DiagnosticInfo &di) override {
    return isa<DiagnosticInfoOptimizationBase>(di);
  }
};

/// One group from bitcode to an object file, in a context of its own. The
/// host group is straight-line code that calls each kernel once per step:
/// O1 folds its constants, and the fast instruction selector and register
/// allocator take it linearly (mobilenet_v2's train_step, 1720 calls in one
/// block: 3 s in the selection DAG, 0.3 s fast; 40% more code, ~50 us a
/// step). Kernels get O3, or O2 in a program of more than
/// kMaxO3Kernels distinct kernels (below).
Expected<std::string> compileGroup(StringRef bitcode, const tcc::CodegenOptions &options,
                                   bool host, OptimizationLevel kernelLevel) {
  LLVMContext context;
  tcc::quietOptimizationDiagnostics(context);
  Expected<std::unique_ptr<Module>> m =
      parseBitcodeFile(MemoryBufferRef(bitcode, "tcc-group"), context);
  if (!m)
    return m.takeError();
  std::string error;
  std::unique_ptr<TargetMachine> tm = tcc::createTargetMachine(
      options.cpu, options.features, error,
      host ? CodeGenOptLevel::None : CodeGenOptLevel::Aggressive);
  if (!tm)
    return createStringError(error);
  if (options.optimize)
    tcc::optimizeModule(**m, *tm, host ? OptimizationLevel::O1 : kernelLevel);
  tcc::prepareForInstructionSelection(**m, *tm);
  SmallString<0> object;
  raw_svector_ostream os(object);
  legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr, CodeGenFileType::ObjectFile))
    return createStringError("the target cannot emit object files");
  pm.run(**m);
  return std::string(object.str());
}

} // namespace

std::unique_ptr<TargetMachine> tcc::createTargetMachine(StringRef cpu, StringRef features,
                                                       std::string &error,
                                                       CodeGenOptLevel level) {
  InitializeNativeTarget();
  InitializeNativeTargetAsmPrinter();
  Triple triple("x86_64-unknown-linux-gnu");
  const Target *target = TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  TargetOptions to;
  return std::unique_ptr<TargetMachine>(target->createTargetMachine(
      triple, cpu, features, to, Reloc::PIC_, CodeModel::Small, level));
}

bool tcc::TargetCpu::roundsBF16() const {
  return llvm::is_contained(llvm::split(llvm::StringRef(recorded), ','), "avx512bf16");
}

std::vector<tcc::TargetCpu> tcc::cpuVariantsOf(const TargetCpu &base) {
  if (base.name != TargetCpu().name || !base.features.empty())
    return {};
  std::vector<TargetCpu> variants;
  // 512-bit vectors, which LLVM's generic AVX-512 tuning does not prefer:
  // measured on Zen 4, where they make a 16-bit step's generated code
  // faster (docs/precision.md). With AVX512-BF16 first (Zen 4, Sapphire
  // Rapids, Cooper Lake): its rounding instruction replaces the integer
  // rounding of every bf16 store (gpt4's bf16 step 3% faster on the Xeon).
  for (StringRef extra : {"+avx512bf16", ""}) {
    std::string error;
    std::optional<TargetCpu> v4 = resolveTargetCpu("x86-64-v4", error, extra);
    if (!v4)
      return {};
    v4->vectorBits = 512;
    v4->features += ",-prefer-256-bit";
    if (!extra.empty())
      v4->variantName = "x86-64-v4-bf16";
    variants.push_back(std::move(*v4));
  }
  return variants;
}

std::optional<tcc::TargetCpu> tcc::resolveTargetCpu(StringRef name, std::string &error,
                                                    StringRef features) {
  TargetCpu cpu;
  if (name == cpu.name && features.empty())
    return cpu; // the default, without a target machine per compile
  cpu.name = name.str();
  std::vector<std::string> flags;
  if (name == "native") {
    // The host's name and, on top, its features as the OS reports them (a
    // VM may hide some that the name implies).
    cpu.name = sys::getHostCPUName().str();
    for (const StringMapEntry<bool> &f : sys::getHostCPUFeatures())
      flags.push_back((f.getValue() ? "+" : "-") + f.getKey().str());
    llvm::sort(flags);
  }
  if (!features.empty())
    flags.push_back(features.str());
  cpu.features = llvm::join(flags, ",");
  // Checked on the generic CPU first: LLVM warns of an unknown name on
  // stderr when it makes a target machine for it.
  std::unique_ptr<TargetMachine> generic = createTargetMachine("x86-64", "", error);
  if (!generic)
    return std::nullopt;
  if (!generic->getMCSubtargetInfo()->isCPUStringValid(cpu.name)) {
    error = "LLVM's x86 target knows no CPU '" + cpu.name +
            "' (x86-64-v3, x86-64-v4, native, or a name like skylake-avx512 or znver4)";
    return std::nullopt;
  }
  std::unique_ptr<TargetMachine> tm = createTargetMachine(cpu.name, cpu.features, error);
  if (!tm)
    return std::nullopt;
  const MCSubtargetInfo *sti = tm->getMCSubtargetInfo();
  std::vector<std::string> has;
  for (const std::string &f : tcc::rt::knownCpuFeatures())
    if (sti->checkFeatures("+" + f))
      has.push_back(f);
  cpu.recorded = llvm::join(has, ",");
  // 512-bit vectors only where LLVM's tuning for the CPU does not prefer
  // 256-bit ones.
  bool avx512 = sti->checkFeatures("+avx512f");
  cpu.vectorBits = avx512 && !sti->checkFeatures("+prefer-256-bit") ? 512 : 256;
  // No gathers: AVX-512 makes them legal to LLVM whatever the CPU's tuning
  // says, and it vectorized strided loads with them, slower than the loads
  // one by one (zoo resnet18's layer4 convolutions on generated loops, 5.9 ->
  // 3.3 ms, Zen 4). AVX2 code never gathers (x86-64-v3 is not fast-gather).
  if (avx512 && !sti->checkFeatures("+prefer-no-gather"))
    cpu.features += cpu.features.empty() ? "+prefer-no-gather" : ",+prefer-no-gather";
  return cpu;
}

void tcc::quietOptimizationDiagnostics(LLVMContext &context) {
  context.setDiagnosticHandler(std::make_unique<QuietOptimizationDiagnostics>());
}

Value *tcc::createMinMax(IRBuilderBase &b, bool max, Value *x, Value *y) {
  Type *type = x->getType();
  Type *bits = IntegerType::get(type->getContext(), type->getPrimitiveSizeInBits());
  IRBuilderBase::FastMathFlagGuard guard(b);
  b.setFastMathFlags(FastMathFlags());
  Value *picked = b.CreateSelect(max ? b.CreateFCmpOGT(x, y) : b.CreateFCmpOLT(x, y), x, y);
  Value *xBits = b.CreateBitCast(x, bits), *yBits = b.CreateBitCast(y, bits);
  Value *equal =
      b.CreateBitCast(max ? b.CreateAnd(xBits, yBits) : b.CreateOr(xBits, yBits), type);
  picked = b.CreateSelect(b.CreateFCmpOEQ(x, y), equal, picked);
  return b.CreateSelect(b.CreateFCmpUNO(x, y), b.CreateFAdd(x, y), picked);
}

void tcc::prepareForInstructionSelection(Module &m, TargetMachine &tm) {
  selectBf16Bits(m);
  expandScalarMinMax(m, tm);
}

void tcc::optimizeModule(Module &m, TargetMachine &tm, OptimizationLevel level) {
  LoopAnalysisManager lam;
  FunctionAnalysisManager fam;
  CGSCCAnalysisManager cgam;
  ModuleAnalysisManager mam;
  PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  for (Function &f : m) {
    if (f.isDeclaration())
      continue;
    DominatorTree dt(f);
    LoopInfo loops(dt);
    if (loops.empty())
      continue;
    TargetLibraryInfoImpl tlii(Triple(m.getTargetTriple()));
    TargetLibraryInfo tli(tlii, &f);
    AssumptionCache ac(f);
    ScalarEvolution se(f, tli, ac, dt, loops);
    limitUnrolling(loops, se);
    fixReductionOrder(f, loops, se, tm.getTargetTransformInfo(f));
  }
  ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(level);
  mpm.run(m, mam);
}

mlir::FailureOr<std::vector<std::string>> tcc::emitObjects(Module &m,
                                                           const CodegenOptions &options,
                                                           mlir::TimingScope &timing,
                                                           CodegenStats &stats,
                                                           std::string &error) {
  Grouping grouping(m);
  std::vector<std::string> bitcode(grouping.groups());
  {
    mlir::TimingScope split = timing.nest("split into groups");
    externalizeShared(m, grouping);
    for (unsigned g = 0; g < grouping.groups(); ++g)
      bitcode[g] = groupBitcode(m, grouping, g);
  }
  stats.kernels = grouping.kernels();
  stats.kernelCalls = grouping.calls();
  stats.groups = grouping.groups();

  OptimizationLevel kernelLevel =
      grouping.baseKernels() <= kMaxO3Kernels ? OptimizationLevel::O3 : OptimizationLevel::O2;
  std::vector<std::string> objects(bitcode.size());
  std::vector<std::string> keys(bitcode.size());
  std::vector<unsigned> todo;
  for (unsigned g = 0; g < bitcode.size(); ++g) {
    if (!options.cache)
      continue;
    keys[g] = hashKey({"llvm-group", compilerIdentity(), options.cpu, options.features,
                       !options.optimize                        ? "O0"
                       : kernelLevel == OptimizationLevel::O3 ? "optimized"
                                                               : "optimized at O2",
                       g == 0 ? "host" : "kernels",
                       bitcode[g]});
  }
  {
    mlir::TimingScope lookup = timing.nest("cache lookup");
    for (unsigned g = 0; g < bitcode.size(); ++g) {
      std::optional<std::string> hit;
      if (options.cache)
        hit = options.cache->lookup(keys[g], "o");
      if (hit) {
        objects[g] = std::move(*hit);
        ++stats.cached;
      } else {
        todo.push_back(g);
      }
    }
  }
  // Largest first, so that the last group to finish is a small one.
  llvm::stable_sort(todo, [&](unsigned a, unsigned b) {
    return bitcode[a].size() > bitcode[b].size();
  });
  std::mutex errorMutex;
  mlir::TimingScope compile = timing.nest("optimize + codegen");
  auto work = [&](unsigned g) {
    mlir::TimingScope t = compile.nest(g == 0 ? std::string("host group")
                                              : "kernel group " + std::to_string(g));
    Expected<std::string> object = compileGroup(bitcode[g], options, /*host=*/g == 0, kernelLevel);
    if (!object) {
      std::lock_guard<std::mutex> lock(errorMutex);
      error = toString(object.takeError());
      return;
    }
    objects[g] = std::move(*object);
    if (options.cache)
      options.cache->store(keys[g], "o", objects[g]);
  };
  unsigned threads = hardware_concurrency(options.threads).compute_thread_count();
  if (threads <= 1 || todo.size() <= 1) {
    for (unsigned g : todo)
      work(g);
  } else {
    StdThreadPool pool(hardware_concurrency(std::min<unsigned>(threads, todo.size())));
    for (unsigned g : todo)
      pool.async([&, g] { work(g); });
    pool.wait();
  }
  compile.stop();
  if (!error.empty())
    return mlir::failure();
  return objects;
}
