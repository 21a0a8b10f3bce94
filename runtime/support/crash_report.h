//===- crash_report.h - one line on standard error for a fatal fault ------===//
//
// A SIGBUS or SIGSEGV kills a process with nothing but the shell's "Bus
// error". The tools install a handler that says first where the fault was:
// the signal, its si_code, the faulting address and the line of
// /proc/self/maps that covers it (a mapped file by name, a thread's stack,
// an anonymous region, or nothing), and then dies of the same signal.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_SUPPORT_CRASH_REPORT_H
#define TCC_RUNTIME_SUPPORT_CRASH_REPORT_H

namespace tcc::rt {

/// Installs the report for SIGBUS and SIGSEGV, where their action is still
/// the default one (a sanitizer's handler stays); PROGRAM names the program
/// in the line (its first 63 characters).
void installCrashReport(const char *program);

} // namespace tcc::rt

#endif // TCC_RUNTIME_SUPPORT_CRASH_REPORT_H
