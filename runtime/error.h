//===- error.h - the runtime's internal error type -------------------------===//
//
// Inside the runtime a failure throws Error(status, message); the C API
// functions in api.cpp catch it (and everything else) and turn it into a
// tcc_status plus the thread's last-error message. Nothing throws across the
// C boundary.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_ERROR_H
#define TCC_RUNTIME_ERROR_H

#include "runtime/include/tcc/tcc.h"

#include <new>
#include <stdexcept>
#include <string>

namespace tcc::rt {

class Error : public std::runtime_error {
public:
  Error(tcc_status status, const std::string &message)
      : std::runtime_error(message), status_(status) {}
  tcc_status status() const { return status_; }

private:
  tcc_status status_;
};

[[noreturn]] inline void fail(tcc_status status, const std::string &message) {
  throw Error(status, message);
}

/// Sets or clears the calling thread's last-error message (tcc_last_error).
void setLastError(const char *message) noexcept;
void clearLastError() noexcept;

/// Runs BODY, mapping its outcome to a status and the last-error message:
/// what every C API function does around its C++ body.
template <typename Body> tcc_status guarded(Body &&body) noexcept {
  try {
    body();
    clearLastError();
    return TCC_OK;
  } catch (const Error &e) {
    setLastError(e.what());
    return e.status();
  } catch (const std::bad_alloc &) {
    setLastError("out of memory");
    return TCC_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception &e) {
    try {
      setLastError((std::string("internal error: ") + e.what()).c_str());
    } catch (...) {
      setLastError("internal error");
    }
    return TCC_ERROR_INTERNAL;
  } catch (...) {
    setLastError("internal error: unknown exception");
    return TCC_ERROR_INTERNAL;
  }
}

} // namespace tcc::rt

#endif // TCC_RUNTIME_ERROR_H
