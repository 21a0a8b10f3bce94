//===- crash_report.cpp - one line on standard error for a fatal fault ----===//
//
// Everything in the handler is async-signal-safe: static buffers, write(),
// open(), read() and close(), no allocation and no stdio.
//
//===----------------------------------------------------------------------===//

#include "runtime/support/crash_report.h"

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <fcntl.h>
#include <unistd.h>

namespace tcc::rt {

namespace {

char gProgram[64] = "tcc";

/// The report under construction (a fixed buffer: no allocation).
struct Line {
  char text[768];
  size_t size = 0;
  void add(const char *s, size_t n) {
    for (size_t i = 0; i < n && size + 1 < sizeof text; ++i)
      text[size++] = s[i];
  }
  void add(const char *s) { add(s, std::strlen(s)); }
  void addDecimal(long v) {
    char digits[24];
    size_t n = 0;
    bool negative = v < 0;
    unsigned long u = negative ? 0ul - static_cast<unsigned long>(v) : static_cast<unsigned long>(v);
    do {
      digits[n++] = char('0' + u % 10);
      u /= 10;
    } while (u);
    if (negative)
      add("-");
    while (n)
      add(&digits[--n], 1);
  }
  void addHex(uintptr_t v) {
    char digits[20];
    size_t n = 0;
    do {
      digits[n++] = "0123456789abcdef"[v & 15];
      v >>= 4;
    } while (v);
    add("0x");
    while (n)
      add(&digits[--n], 1);
  }
};

/// Parses the hex number at *P (advancing it); false when there is none.
bool parseHex(const char *&p, const char *end, uintptr_t *out) {
  uintptr_t v = 0;
  const char *start = p;
  for (; p < end; ++p) {
    char c = *p;
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0)
      break;
    v = v * 16 + uintptr_t(d);
  }
  *out = v;
  return p != start;
}

/// Appends the line of /proc/self/maps whose range holds ADDRESS, or
/// "nothing mapped there".
void addMapping(Line &line, uintptr_t address) {
  int fd = ::open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    line.add("(cannot read /proc/self/maps)");
    return;
  }
  static char chunk[4096];
  static char current[512];
  size_t currentSize = 0;
  bool found = false;
  auto check = [&]() {
    const char *p = current, *end = current + currentSize;
    uintptr_t lo = 0, hi = 0;
    if (parseHex(p, end, &lo) && p < end && *p == '-' && parseHex(++p, end, &hi) && lo <= address &&
        address < hi) {
      line.add(current, currentSize);
      found = true;
    }
  };
  ssize_t n;
  while (!found && (n = ::read(fd, chunk, sizeof chunk)) != 0) {
    if (n < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    for (ssize_t i = 0; i < n && !found; ++i) {
      if (chunk[i] == '\n') {
        check();
        currentSize = 0;
      } else if (currentSize < sizeof current) {
        current[currentSize++] = chunk[i];
      }
    }
  }
  if (!found && currentSize)
    check();
  ::close(fd);
  if (!found)
    line.add("nothing mapped there");
}

void report(int sig, siginfo_t *info, void *) {
  int saved = errno;
  static Line line;
  line.size = 0;
  line.add(gProgram);
  line.add(": fatal ");
  line.add(sig == SIGBUS ? "SIGBUS" : "SIGSEGV");
  line.add(" (si_code ");
  line.addDecimal(info ? info->si_code : 0);
  line.add(") at address ");
  uintptr_t address = info ? reinterpret_cast<uintptr_t>(info->si_addr) : 0;
  line.addHex(address);
  line.add(", mapped as: ");
  addMapping(line, address);
  line.add("\n");
  for (size_t done = 0; done < line.size;) {
    ssize_t w = ::write(STDERR_FILENO, line.text + done, line.size - done);
    if (w <= 0 && errno != EINTR)
      break;
    if (w > 0)
      done += size_t(w);
  }
  errno = saved;
  // SA_RESETHAND restored the default action: a fault re-executes and dies
  // of it; a signal sent by kill() is raised again (blocked until return).
  if (!info || info->si_code <= 0)
    ::raise(sig);
}

} // namespace

void installCrashReport(const char *program) {
  std::strncpy(gProgram, program, sizeof gProgram - 1);
  gProgram[sizeof gProgram - 1] = '\0';
  // The calling thread's own stack for the handler, so that a stack
  // overflow is reported too (unless one is set already).
  static char altStack[1 << 16];
  stack_t current = {};
  if (sigaltstack(nullptr, &current) == 0 && (current.ss_flags & SS_DISABLE)) {
    stack_t ss = {};
    ss.ss_sp = altStack;
    ss.ss_size = sizeof altStack;
    sigaltstack(&ss, nullptr);
  }
  for (int sig : {SIGBUS, SIGSEGV}) {
    struct sigaction old = {};
    if (sigaction(sig, nullptr, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
        old.sa_handler != SIG_DFL)
      continue;
    struct sigaction action = {};
    action.sa_sigaction = report;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_ONSTACK;
    sigaction(sig, &action, nullptr);
  }
}

} // namespace tcc::rt
