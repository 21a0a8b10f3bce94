# TccInstall.cmake - what `cmake --install` puts under the prefix: the SDK.
#
#   bin/tcc, bin/tcc-run                 the compiler and the runner
#   lib/libtcc_runtime.so*               the runtime (and trainer) C API
#   lib/libtcc_tensorboard.so*           the trainer's --tensorboard plugin (protobuf-lite)
#   include/tcc/{tcc.h,abi.h,tcc.hpp,trainer_options.def}
#                                        its headers; tcc.hpp is the C++ wrapper,
#                                        trainer_options.def the trainer's options
#   lib/cmake/tcc/tccConfig*.cmake       find_package(tcc): tcc::runtime, ...
#   lib/pkgconfig/tcc.pc                 pkg-config --cflags --libs tcc
#
# The tree is relocatable: nothing in it names the build tree, and every
# RUNPATH but the compiler's is relative to $ORIGIN (docs/sdk.md says why the
# compiler keeps the one system path of Debian's libMLIR).
include(CMakePackageConfigHelpers)

set(TCC_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tcc)
set(TCC_COMPONENTS tcc_runtime tcc_tensorboard tcc-run)
if(TARGET tcc)
  list(APPEND TCC_COMPONENTS tcc)
endif()

install(TARGETS ${TCC_COMPONENTS} EXPORT tccTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES runtime/include/tcc/tcc.h runtime/include/tcc/abi.h runtime/include/tcc/tcc.hpp
  runtime/include/tcc/trainer_options.def DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tcc)

# Machines without Debian's libomp5 (a GPU box with only the driver) get
# LLVM's libomp.so.5 beside the runtime, found through its $ORIGIN RUNPATH.
option(TCC_INSTALL_OPENMP "Install a copy of libomp.so.5 beside libtcc_runtime" OFF)
if(TCC_INSTALL_OPENMP)
  get_filename_component(TCC_OPENMP_REAL ${TCC_OPENMP_LIBRARY} REALPATH)
  install(FILES ${TCC_OPENMP_REAL} DESTINATION ${CMAKE_INSTALL_LIBDIR} RENAME libomp.so.5)
endif()

# find_package(tcc): the imported targets of the install tree...
install(EXPORT tccTargets NAMESPACE tcc:: DESTINATION ${TCC_CMAKE_INSTALL_DIR})
file(STRINGS runtime/include/tcc/abi.h TCC_ABI_LINE REGEX "^#define TCC_ABI_VERSION ")
# A new ABI version reconfigures, so that the installed config says it.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${CMAKE_CURRENT_SOURCE_DIR}/runtime/include/tcc/abi.h)
string(REGEX MATCH "[0-9]+" TCC_ABI_VERSION "${TCC_ABI_LINE}")
configure_package_config_file(cmake/tccConfig.cmake.in
  ${CMAKE_BINARY_DIR}/cmake/tccConfig.cmake INSTALL_DESTINATION ${TCC_CMAKE_INSTALL_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/tccConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cmake/tccConfig.cmake
  ${CMAKE_BINARY_DIR}/cmake/tccConfigVersion.cmake DESTINATION ${TCC_CMAKE_INSTALL_DIR})
# ...and of the build tree, so that the Python module (python/) and other
# projects can build against a tree that was never installed.
export(EXPORT tccTargets NAMESPACE tcc:: FILE ${CMAKE_BINARY_DIR}/tccTargets.cmake)
file(WRITE ${CMAKE_BINARY_DIR}/tccConfig.cmake
  "# find_package(tcc) of the build tree ${CMAKE_BINARY_DIR} (not relocatable).\n"
  "include(\"\${CMAKE_CURRENT_LIST_DIR}/tccTargets.cmake\")\n"
  "set(TCC_ABI_VERSION ${TCC_ABI_VERSION})\n")
file(COPY ${CMAKE_BINARY_DIR}/cmake/tccConfigVersion.cmake DESTINATION ${CMAKE_BINARY_DIR})

# pkg-config: prefix found from the .pc file's own folder.
file(RELATIVE_PATH TCC_PC_PREFIX_FROM_PCDIR
  /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" TCC_PC_PREFIX_FROM_PCDIR "${TCC_PC_PREFIX_FROM_PCDIR}")
configure_file(cmake/tcc.pc.in ${CMAKE_BINARY_DIR}/cmake/tcc.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/cmake/tcc.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
