//===- file_roles.h - outputs never overwrite inputs ---------------------===//
//
// Every tool that writes files (tcc, tcc export, tcc-run, the trainer) names
// what it reads and what it writes, and checks them here before any work:
// an output that is one of the inputs (the same path, a symbolic or a hard
// link to it) or another output is refused by name, as compilers refuse
// `cc a.c -o a.c`. A file that does not exist yet is compared by the path
// it will have (its folder resolved through links).
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_SUPPORT_FILE_ROLES_H
#define TCC_RUNTIME_SUPPORT_FILE_ROLES_H

#include <string>
#include <vector>

namespace tcc::rt {

/// A file a run reads or writes, and what names it in messages: an option
/// ("--metrics") or a description ("the artifact").
struct FileRole {
  std::string role;
  std::string path;
};

/// The parameters file that goes with the artifact at ARTIFACT (the
/// compiler writes it beside the library): model.so -> model.safetensors.
std::string paramsBeside(const std::string &artifact);

/// Whether A and B name one file: the same device and inode when both
/// exist, else the same resolved path.
bool sameFile(const std::string &a, const std::string &b);

/// Checks that no output is one of INPUTS or another of OUTPUTS (empty
/// paths and character devices such as /dev/null are skipped). On a clash returns false and sets *ERROR to a message
/// naming both roles and paths.
bool checkOutputsApart(const std::vector<FileRole> &inputs, const std::vector<FileRole> &outputs,
                       std::string *error);

} // namespace tcc::rt

#endif // TCC_RUNTIME_SUPPORT_FILE_ROLES_H
