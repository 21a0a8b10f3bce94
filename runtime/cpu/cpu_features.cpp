//===- cpu_features.cpp - which x86 features this CPU and OS support ------===//
//
// A table from LLVM feature name to cpuid leaf, register and bit, plus the
// XCR0 state the OS must enable for the register file the feature uses.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/cpu_features.h"

#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace tcc::rt {

namespace {

enum Reg { EAX, EBX, ECX, EDX };
/// What the OS must save for the feature to be usable (XCR0 bits).
enum OsState { kNone, kAvxState, kAvx512State, kAmxState };

struct Feature {
  const char *name;
  uint32_t leaf, subleaf;
  Reg reg;
  int bit;
  OsState os;
};

constexpr uint32_t kExt = 0x80000001;

// LLVM's x86 feature names. "crc32" (LLVM 17+) is part of SSE4.2 and
// "evex512" (LLVM 18+) of AVX-512F.
constexpr Feature kFeatures[] = {
    {"x87", 1, 0, EDX, 0, kNone},
    {"cx8", 1, 0, EDX, 8, kNone},
    {"cmov", 1, 0, EDX, 15, kNone},
    {"mmx", 1, 0, EDX, 23, kNone},
    {"fxsr", 1, 0, EDX, 24, kNone},
    {"sse", 1, 0, EDX, 25, kNone},
    {"sse2", 1, 0, EDX, 26, kNone},
    {"sse3", 1, 0, ECX, 0, kNone},
    {"pclmul", 1, 0, ECX, 1, kNone},
    {"ssse3", 1, 0, ECX, 9, kNone},
    {"fma", 1, 0, ECX, 12, kAvxState},
    {"cx16", 1, 0, ECX, 13, kNone},
    {"sse4.1", 1, 0, ECX, 19, kNone},
    {"sse4.2", 1, 0, ECX, 20, kNone},
    {"crc32", 1, 0, ECX, 20, kNone},
    {"movbe", 1, 0, ECX, 22, kNone},
    {"popcnt", 1, 0, ECX, 23, kNone},
    {"aes", 1, 0, ECX, 25, kNone},
    {"xsave", 1, 0, ECX, 26, kNone},
    {"avx", 1, 0, ECX, 28, kAvxState},
    {"f16c", 1, 0, ECX, 29, kAvxState},
    {"rdrnd", 1, 0, ECX, 30, kNone},
    {"fsgsbase", 7, 0, EBX, 0, kNone},
    {"bmi", 7, 0, EBX, 3, kNone},
    {"avx2", 7, 0, EBX, 5, kAvxState},
    {"bmi2", 7, 0, EBX, 8, kNone},
    {"invpcid", 7, 0, EBX, 10, kNone},
    {"avx512f", 7, 0, EBX, 16, kAvx512State},
    {"evex512", 7, 0, EBX, 16, kAvx512State},
    {"avx512dq", 7, 0, EBX, 17, kAvx512State},
    {"rdseed", 7, 0, EBX, 18, kNone},
    {"adx", 7, 0, EBX, 19, kNone},
    {"avx512ifma", 7, 0, EBX, 21, kAvx512State},
    {"clflushopt", 7, 0, EBX, 23, kNone},
    {"clwb", 7, 0, EBX, 24, kNone},
    {"avx512cd", 7, 0, EBX, 28, kAvx512State},
    {"sha", 7, 0, EBX, 29, kNone},
    {"avx512bw", 7, 0, EBX, 30, kAvx512State},
    {"avx512vl", 7, 0, EBX, 31, kAvx512State},
    {"avx512vbmi", 7, 0, ECX, 1, kAvx512State},
    {"pku", 7, 0, ECX, 3, kNone},
    {"waitpkg", 7, 0, ECX, 5, kNone},
    {"avx512vbmi2", 7, 0, ECX, 6, kAvx512State},
    {"shstk", 7, 0, ECX, 7, kNone},
    {"gfni", 7, 0, ECX, 8, kNone},
    {"vaes", 7, 0, ECX, 9, kAvxState},
    {"vpclmulqdq", 7, 0, ECX, 10, kAvxState},
    {"avx512vnni", 7, 0, ECX, 11, kAvx512State},
    {"avx512bitalg", 7, 0, ECX, 12, kAvx512State},
    {"avx512vpopcntdq", 7, 0, ECX, 14, kAvx512State},
    {"rdpid", 7, 0, ECX, 22, kNone},
    {"movdiri", 7, 0, ECX, 27, kNone},
    {"movdir64b", 7, 0, ECX, 28, kNone},
    {"serialize", 7, 0, EDX, 14, kNone},
    {"amx-bf16", 7, 0, EDX, 22, kAmxState},
    {"avx512fp16", 7, 0, EDX, 23, kAvx512State},
    {"amx-tile", 7, 0, EDX, 24, kAmxState},
    {"amx-int8", 7, 0, EDX, 25, kAmxState},
    {"avxvnni", 7, 1, EAX, 4, kAvxState},
    {"avx512bf16", 7, 1, EAX, 5, kAvx512State},
    {"xsaveopt", 0xD, 1, EAX, 0, kNone},
    {"xsavec", 0xD, 1, EAX, 1, kNone},
    {"xsaves", 0xD, 1, EAX, 3, kNone},
    {"sahf", kExt, 0, ECX, 0, kNone},
    {"lzcnt", kExt, 0, ECX, 5, kNone},
    {"sse4a", kExt, 0, ECX, 6, kNone},
    {"prfchw", kExt, 0, ECX, 8, kNone},
    {"xop", kExt, 0, ECX, 11, kAvxState},
    {"fma4", kExt, 0, ECX, 16, kAvxState},
    {"tbm", kExt, 0, ECX, 21, kNone},
    {"64bit", kExt, 0, EDX, 29, kNone},
};

std::set<std::string> detect() {
  std::set<std::string> found;
#if defined(__x86_64__) || defined(__i386__)
  unsigned maxLeaf = __get_cpuid_max(0, nullptr);
  unsigned maxExt = __get_cpuid_max(0x80000000, nullptr);
  // XCR0 says which register files the OS saves on a context switch.
  uint64_t xcr0 = 0;
  unsigned a, b, c, d;
  if (maxLeaf >= 1 && __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 27))) {
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    xcr0 = (uint64_t(hi) << 32) | lo;
  }
  bool avxState = (xcr0 & 0x6) == 0x6;
  bool avx512State = avxState && (xcr0 & 0xE0) == 0xE0;
  bool amxState = (xcr0 & 0x60000) == 0x60000;
  for (const Feature &f : kFeatures) {
    bool ext = f.leaf >= 0x80000000;
    if (ext ? f.leaf > maxExt : f.leaf > maxLeaf)
      continue;
    unsigned regs[4];
    __cpuid_count(f.leaf, f.subleaf, regs[0], regs[1], regs[2], regs[3]);
    if (!(regs[f.reg] & (1u << f.bit)))
      continue;
    if ((f.os == kAvxState && !avxState) || (f.os == kAvx512State && !avx512State) ||
        (f.os == kAmxState && !amxState))
      continue;
    found.insert(f.name);
  }
#endif
  return found;
}

} // namespace

const std::vector<std::string> &knownCpuFeatures() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const Feature &f : kFeatures)
      out.push_back(f.name);
    return out;
  }();
  return names;
}

const std::set<std::string> &hostCpuFeatures() {
  static const std::set<std::string> features = detect();
  return features;
}

const std::string &hostCpuVendor() {
  static const std::string vendor = [] {
    std::string name;
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (__get_cpuid(0, &a, &b, &c, &d)) {
      // The twelve bytes are EBX, EDX, ECX in that order.
      for (unsigned reg : {b, d, c})
        for (int i = 0; i < 4; ++i)
          name += char((reg >> (8 * i)) & 0xff);
    }
#endif
    return name;
  }();
  return vendor;
}

std::string checkCpuFeatures(const std::string &list, const std::set<std::string> &host) {
  std::string missing, unknown;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos)
      comma = list.size();
    std::string name = list.substr(pos, comma - pos);
    pos = comma + 1;
    // Trim spaces; drop LLVM's '+' prefix; '-name' means "not used".
    while (!name.empty() && name.front() == ' ')
      name.erase(name.begin());
    while (!name.empty() && name.back() == ' ')
      name.pop_back();
    if (name.empty() || name[0] == '-')
      continue;
    if (name[0] == '+')
      name.erase(name.begin());
    bool known = false;
    for (const Feature &f : kFeatures)
      known |= name == f.name;
    std::string *into = !known ? &unknown : host.count(name) ? nullptr : &missing;
    if (into)
      *into += (into->empty() ? "" : ", ") + name;
  }
  std::string message;
  if (!missing.empty())
    message = "this CPU lacks the feature(s) the code was compiled for: " + missing;
  if (!unknown.empty())
    message += (message.empty() ? "" : "; ") +
               std::string("the runtime cannot check CPU feature(s) ") + unknown;
  return message;
}

} // namespace tcc::rt
