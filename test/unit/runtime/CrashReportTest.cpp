//===- CrashReportTest.cpp - the one-line report of a fatal fault ---------===//
//
// Each case dies in a child process (gtest death tests) of a real fault and
// checks the line the report wrote: a read past the end of a truncated
// memory-mapped file (SIGBUS, naming the file: how a parameters file
// truncated under a run fails) and a null pointer read (SIGSEGV, nothing
// mapped there).
//
//===----------------------------------------------------------------------===//

#include "runtime/support/crash_report.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

namespace {

/// Maps PATH (8 KiB), truncates it to nothing and reads the mapping.
[[noreturn]] void readTruncatedMapping(const std::string &path) {
  tcc::rt::installCrashReport("crash-test");
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0 || ::ftruncate(fd, 8192) != 0)
    std::abort();
  auto *p = static_cast<volatile char *>(::mmap(nullptr, 8192, PROT_READ, MAP_SHARED, fd, 0));
  if (p == MAP_FAILED || ::ftruncate(fd, 0) != 0)
    std::abort();
  std::printf("%d\n", p[4096]);
  std::abort();
}

/// Whether SIG's action is the default one, which the report replaces (a
/// sanitizer build handles SIGSEGV and SIGBUS itself, and keeps them).
bool defaultAction(int sig) {
  struct sigaction old = {};
  return sigaction(sig, nullptr, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
         old.sa_handler == SIG_DFL;
}

[[noreturn]] void readNull() {
  tcc::rt::installCrashReport("crash-test");
  volatile int *null = nullptr;
  std::printf("%d\n", *null);
  std::abort();
}

TEST(CrashReportTest, NamesTheMappedFile) {
  if (!defaultAction(SIGBUS))
    GTEST_SKIP() << "SIGBUS has a handler already (a sanitizer's)";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  std::string path = ::testing::TempDir() + "crash-report-mapped.bin";
  EXPECT_EXIT(readTruncatedMapping(path), ::testing::KilledBySignal(SIGBUS),
              "crash-test: fatal SIGBUS \\(si_code 2\\) at address 0x[0-9a-f]+, mapped as: "
              "[0-9a-f]+-[0-9a-f]+ r--s .*crash-report-mapped\\.bin");
  std::remove(path.c_str());
}

TEST(CrashReportTest, SaysWhenNothingIsMapped) {
  if (!defaultAction(SIGSEGV))
    GTEST_SKIP() << "SIGSEGV has a handler already (a sanitizer's)";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(readNull(), ::testing::KilledBySignal(SIGSEGV),
              "crash-test: fatal SIGSEGV \\(si_code 1\\) at address 0x0, mapped as: nothing "
              "mapped there");
}

} // namespace
