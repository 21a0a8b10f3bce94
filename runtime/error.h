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

} // namespace tcc::rt

#endif // TCC_RUNTIME_ERROR_H
