//===- TccNames.cpp - buffer roles by name --------------------------------===//

#include "dialects/TccNames.h"

#include "llvm/ADT/StringSwitch.h"

llvm::StringRef tcc::roleName(BufferRole role) {
  switch (role) {
  case BufferRole::Input: return "input";
  case BufferRole::Output: return "output";
  case BufferRole::Param: return "param";
  case BufferRole::State: return "state";
  case BufferRole::Update: return "update";
  case BufferRole::Temp: return "temp";
  }
  return "";
}

std::optional<tcc::BufferRole> tcc::parsePlanRole(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<BufferRole>>(name)
      .Case("input", BufferRole::Input)
      .Case("output", BufferRole::Output)
      .Case("param", BufferRole::Param)
      .Case("state", BufferRole::State)
      .Default(std::nullopt);
}
