//===- PrecisionReport.cpp - how a 16-bit step's library calls run --------===//

#include "compiler/PrecisionReport.h"

#include "dialects/TccNames.h"
#include "runtime/cpu/cpu_features.h"
#include "runtime/cpu/onednn_rules.h"
#include "runtime/dtype.h"
#include "runtime/include/tcc/abi.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>
#include <tuple>

using namespace mlir;

namespace {

const char *kindText(int64_t kind) {
  switch (kind) {
  case TCC_LIBRARY_CALL_MATMUL:
    return "matmul";
  case TCC_LIBRARY_CALL_CONV2D:
    return "conv2d";
  case TCC_LIBRARY_CALL_CONV2D_BACKWARD_DATA:
    return "conv2d data gradient";
  case TCC_LIBRARY_CALL_CONV2D_BACKWARD_WEIGHTS:
    return "conv2d filter gradient";
  default:
    return "library call";
  }
}

/// The 16-bit instructions oneDNN would compute bf16 products with on a CPU
/// with HOST's features (its avx512_core_bf16 and avx512_core_amx ISAs), or
/// "" for none.
std::string bf16Isa(const std::set<std::string> &host) {
  bool core = host.count("avx512f") && host.count("avx512bw") && host.count("avx512vl") &&
              host.count("avx512dq");
  if (core && host.count("amx-bf16") && host.count("amx-tile"))
    return "AMX";
  if (core && host.count("avx512bf16"))
    return "AVX512-BF16";
  return "";
}

/// How a CPU call of KIND with operand dtype IN runs. A widened matmul
/// goes where an f32 one would (BLAS or oneDNN: runtime/cpu/blas.h).
std::string cpuRoute(int64_t kind, int64_t in, const std::set<std::string> &host) {
  if (in == TCC_DTYPE_F32)
    return "oneDNN (or BLAS) f32";
  std::string isa = in == TCC_DTYPE_F16 ? "" : bf16Isa(host);
  if (!isa.empty())
    return "oneDNN bf16 with f32 sums, " + isa + " on this CPU";
  return std::string("widened: ") +
         (kind == TCC_LIBRARY_CALL_MATMUL ? "oneDNN or BLAS f32 (as fp32's products)"
                                          : "oneDNN f32") +
         " on f32 copies made by the runtime (" +
         (in == TCC_DTYPE_F16 ? "oneDNN 2.6 has no f16 CPU kernels"
                              : "this CPU has neither AVX512-BF16 nor AMX") +
         ")";
}

std::string deviceRoute(int64_t kind, int64_t in) {
  if (kind != TCC_LIBRARY_CALL_MATMUL)
    return "cuDNN f32";
  if (in == TCC_DTYPE_F32)
    return "cuBLASLt f32";
  return std::string("cuBLASLt ") + tcc::rt::dtypeName(int32_t(in)) +
         " with f32 sums (tensor cores)";
}

/// Whether FEATURES (LLVM names) hold the AVX-512 the generated code uses.
bool hasAvx512(const std::set<std::string> &features) {
  return features.count("avx512f") && features.count("avx512bw") && features.count("avx512vl");
}

} // namespace

void tcc::printLibraryCallPrecision(ModuleOp module, bool device,
                                    const std::set<std::string> &host,
                                    const std::set<std::string> &target,
                                    llvm::ArrayRef<TargetCpu> variants, llvm::raw_ostream &os) {
  // (kind, operand dtype, C dtype) -> calls, and how many of those are
  // weight gradients that the runtime keeps off AMX (onednn_rules.h).
  std::map<std::tuple<int64_t, int64_t, int64_t>, int> groups, offAmx;
  if (auto table = module->getAttrOfType<ArrayAttr>(attr::libraryCalls))
    for (Attribute a : table) {
      auto d = dyn_cast<DictionaryAttr>(a);
      auto kind = d ? d.getAs<IntegerAttr>("kind") : nullptr;
      auto params = d ? d.getAs<DenseI64ArrayAttr>("params") : nullptr;
      if (!kind || !params)
        continue;
      int64_t in = TCC_DTYPE_F32;
      if (auto dtype = d.getAs<IntegerAttr>("dtype"))
        in = dtype.getInt();
      int64_t out = in;
      // abi.h: a 10-parameter MATMUL's 9th parameter is C's dtype, a
      // 21-parameter convolution's 21st its output's (0: the operands').
      bool matmul = kind.getInt() == TCC_LIBRARY_CALL_MATMUL;
      int64_t at = matmul ? 8 : 20;
      if (params.size() > at && params[at] != 0)
        out = params[at];
      ++groups[{kind.getInt(), in, out}];
      // abi.h: a convolution's {N, C, H, W, F, KH, KW, OH, OW, ...}, its
      // 19th parameter the groups.
      if (kind.getInt() == TCC_LIBRARY_CALL_CONV2D_BACKWARD_WEIGHTS && params.size() >= 18) {
        int64_t groupCount = params.size() > 18 && params[18] > 0 ? params[18] : 1;
        if (!tcc::rt::amxSuitsWeightGradient(params[0] * params[7] * params[8],
                                             params[1] / groupCount))
          ++offAmx[{kind.getInt(), in, out}];
      }
    }
  os << "library calls of the artifact (" << (device ? "GPU" : "this CPU") << "):\n";
  if (groups.empty())
    os << "  none: every product is generated code\n";
  for (const auto &[key, count] : groups) {
    auto [kind, in, out] = key;
    std::string types = std::string(tcc::rt::dtypeName(int32_t(in))) + " -> " +
                        tcc::rt::dtypeName(int32_t(out));
    std::string route = device ? deviceRoute(kind, in) : cpuRoute(kind, in, host);
    if (!device && in == TCC_DTYPE_BF16 && bf16Isa(host) == "AMX" && offAmx.count(key))
      route += llvm::formatv(" ({0} of them AVX512-BF16: under {1} output points or {2} input "
                             "channels)",
                             offAmx[key], tcc::rt::kAmxMinGradientPoints,
                             tcc::rt::kAmxMinGradientChannels)
                   .str();
    os << llvm::formatv("  {0,-24} {1,-12} x{2,-4} {3}\n", kindText(kind), types, count, route);
  }
  if (!device) {
    // tcc-filter-layouts' sets (abi.h TCC_METADATA_FILTER_LAYOUT_PREFIX).
    int sets = 0;
    if (auto metadata = module->getAttrOfType<DictionaryAttr>(attr::metadata))
      while (metadata.get((TCC_METADATA_FILTER_LAYOUT_PREFIX + std::to_string(sets) + ".calls")))
        ++sets;
    if (sets > 0)
      os << "  " << sets << " convolution filter(s) may stay in oneDNN's blocked layout across "
         << "steps, with their gradients, optimizer state and 16-bit copies: the runtime keeps "
            "each whose forward call's layout has no padding (TCC_FILTER_LAYOUTS=report says "
            "which)\n";
    os << "  the runtime decides each call again on the CPU that runs the artifact "
          "(oneDNN's instruction set; TCC_SIXTEEN_BIT_CALLS=native or widened overrides)\n";
    bool avx512 = hasAvx512(target);
    // bf16 rounding by AVX512-BF16's instruction where --cpu has it, else
    // integer arithmetic (tcc-expand-arith, docs/precision.md).
    auto rounding = [](bool instruction) {
      return instruction ? "bf16 rounded by AVX512-BF16's vcvtneps2bf16"
                         : "bf16 as integer arithmetic";
    };
    os << "16-bit elementwise ops: f32 arithmetic between conversions ("
       << rounding(target.count("avx512bf16")) << ", f16 with F16C), "
       << (avx512 ? "AVX-512 vectors: a CPU with the features of --cpu"
                  : "AVX2 vectors: any x86-64-v3 CPU")
       << "\n";
    for (const TargetCpu &variant : variants)
      os << "  compiled again for " << variant.variant() << " (AVX-512, " << variant.vectorBits
         << "-bit vectors, " << rounding(variant.roundsBF16())
         << "): the code the runtime runs on a CPU that has its features, the first such "
            "variant ("
         << (tcc::rt::checkCpuFeatures(variant.recorded, host).empty() ? "this CPU does"
                                                                        : "this CPU does not")
         << "; TCC_CPU_VARIANT=NAME or base picks one)\n";
    if (variants.empty() && !avx512 && hasAvx512(host))
      os << "  this CPU has AVX-512: --cpu-variants (the default for a 16-bit step) or "
            "--cpu=native also compile the generated kernels for it (gpt4's bf16 step 4% "
            "faster, docs/precision.md)\n";
  }
}
