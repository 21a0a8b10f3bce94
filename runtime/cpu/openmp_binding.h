//===- openmp_binding.h - libraries loaded onto the process's libomp ------===//
//
// The libraries the runtime calls (oneDNN, an OpenMP OpenBLAS, MKL's GNU
// OpenMP layer) are built for GNU OpenMP: they call GOMP_* and omp_*, and
// name libgomp.so.1. The runtime loads them so that those calls bind to the
// libomp that generated code runs on (parallel.h), whatever the process
// loaded before:
//
//  - Normally libomp is made global (dlopen RTLD_GLOBAL) and the library is
//    opened RTLD_LOCAL: the global scope is searched first, so its GOMP_*
//    references find libomp's GNU compatibility layer.
//  - When another OpenMP runtime already defines GOMP_* in the global scope
//    (torch, or anything linking libgomp, loaded RTLD_GLOBAL before tcc),
//    the library is opened through a generated shim: an empty shared object
//    whose DT_NEEDED entries are libomp, then the library, opened with
//    RTLD_DEEPBIND, so that the objects it loads search the shim's scope
//    (libomp before the libgomp the library names) ahead of the global one.
//  - A library already loaded with its OpenMP calls bound elsewhere (torch's
//    oneDNN, numpy's OpenBLAS) is loaded again from a private copy (a memfd),
//    bound as above; the other library keeps its own.
//
// Every library is checked after loading: each OpenMP symbol it references
// must resolve to libomp. The other runtime stays where it was, for the code
// that brought it: two pools in the process, but tcc's work only on one.
//
//===----------------------------------------------------------------------===//

#ifndef TCC_RUNTIME_CPU_OPENMP_BINDING_H
#define TCC_RUNTIME_CPU_OPENMP_BINDING_H

#include <string>
#include <vector>

namespace tcc::rt {

/// The file of the library that defines GOMP_parallel in the global scope
/// when it is not the runtime's libomp (libgomp, loaded before tcc by torch
/// or another library); "" when it is libomp or nobody.
std::string foreignGnuOpenMP();

/// How loadOnOpenMP treats a file.
struct OpenMPLoad {
  /// Resolve functions on first call (RTLD_LAZY) rather than at load:
  /// MKL's layers call symbols that only libmkl_rt's later loads provide.
  bool lazy = false;
  /// A file already loaded with OpenMP calls bound to another runtime is
  /// loaded again from a private copy; otherwise it is refused.
  bool copyIfBound = true;
};

/// Loads FILES (paths or sonames, as dlopen takes them) in one scope, each
/// with its dependencies, so that their GNU OpenMP calls bind to the
/// runtime's libomp (see the file comment), and returns a dlopen handle per
/// file, never closed. On failure returns {} and sets WHY. Prints one line
/// on stderr, once per process, the first time another OpenMP runtime owns
/// the global GOMP_* symbols. Thread-safe.
std::vector<void *> loadOnOpenMP(const std::vector<std::string> &files, const OpenMPLoad &how,
                                 std::string &why);

/// "" when every OpenMP symbol (GOMP_*, omp_*, kmp_*, __kmpc_*) that the
/// object of HANDLE references resolves to the runtime's libomp; otherwise
/// a message naming the first that does not and where it goes. A function
/// not bound yet (lazy binding) is looked up where the dynamic linker will
/// look: in the scope loadOnOpenMP gave the object, else the global one.
std::string openMPMismatch(void *handle);

/// The file of the object that the relocation of SYMBOL in the object of
/// HANDLE points into: "" when the object does not reference SYMBOL, its
/// own file while a lazily bound function is not bound yet, "(unresolved)"
/// for a weak reference that nothing defines.
std::string boundLibrary(void *handle, const char *symbol);

} // namespace tcc::rt

#endif // TCC_RUNTIME_CPU_OPENMP_BINDING_H
