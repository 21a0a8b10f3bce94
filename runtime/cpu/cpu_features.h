//===- cpu_features.h - which x86 features this CPU and OS support --------===//
//
// An artifact records the CPU features its code was compiled for (LLVM's
// feature names: "avx2", "fma", "avx512f", ...); the runtime refuses to load
// it on a CPU that lacks one, instead of dying of SIGILL in the first kernel.
// Detection reads cpuid and, for the AVX families, checks with xgetbv that
// the OS saves the registers.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_CPU_CPU_FEATURES_H
#define TCC_RUNTIME_CPU_CPU_FEATURES_H

#include <set>
#include <string>
#include <vector>

namespace tcc::rt {

/// The feature names this runtime can check (LLVM spellings).
const std::vector<std::string> &knownCpuFeatures();

/// The known features the host supports.
const std::set<std::string> &hostCpuFeatures();

/// The host CPU's vendor string from cpuid leaf 0 ("GenuineIntel",
/// "AuthenticAMD", ...), "" where there is none.
const std::string &hostCpuVendor();

/// Checks a comma-separated feature list as stored in a descriptor against
/// HOST. Entries may carry LLVM's '+' prefix; '-' entries (disabled
/// features) and empty entries are ignored. Returns "" when all are
/// supported, else a message naming the missing or unknown features.
std::string checkCpuFeatures(const std::string &list, const std::set<std::string> &host);

} // namespace tcc::rt

#endif // TCC_RUNTIME_CPU_CPU_FEATURES_H
