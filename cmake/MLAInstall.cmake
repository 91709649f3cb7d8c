# `cmake --install <build> [--component C] [--prefix P]`, four components
# (docs/deployment.md):
#   runtime   lib/libmla.so (the Decoder, devices, code objects; no LLVM or MLIR),
#             the C++ headers (include/mla/Runtime, mla/Emu/Timing.h,
#             mla/Kernel/{DecodeConfig,KernelContract,LaunchGeometry}.h), the kernel
#             bundle (share/mla/kernels), lib/cmake/mla (find_package(mla): mla::mla)
#             and, with component `python`, the Python package
#   emulator  lib/libmla_emu.so (the gfx950 emulator plugin, loaded when an emu device is
#             opened; needs libLLVM, never libMLIR) and bin/mla-run (which links it)
#   compiler  lib/libmla_compiler.so (loaded by the runtime on a kernel miss),
#             bin/mla-opt, bin/mla-compile, include/mla/Compiler/Compiler.h
#   python    the Python package (needs `runtime`)
# Installed binaries find Debian's libLLVM (and the compiler's libMLIR) through an RPATH to
# LLVM's library directory (INSTALL_RPATH_USE_LINK_PATH) and libmla.so through
# $ORIGIN/../lib.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set_target_properties(mla mla_compiler mla-opt mla-compile mla-run PROPERTIES
  INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}"
  INSTALL_RPATH_USE_LINK_PATH TRUE)
# The emulator plugin finds libmla.so beside it (lib/, or the wheel's package directory).
set_target_properties(mla_emu PROPERTIES INSTALL_RPATH "$ORIGIN" INSTALL_RPATH_USE_LINK_PATH TRUE)

# runtime
install(TARGETS mla EXPORT mlaTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS mla-run RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT emulator)
# The emulator plugin, beside libmla.so (loaded only when an emu device is opened).
install(TARGETS mla_emu LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT emulator)
# Every runtime header (they include each other; a new one is installed with them).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/include/mla/Runtime
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mla COMPONENT runtime
  FILES_MATCHING PATTERN "*.h")
# The emulator's public header (the timing types mla/Runtime/Timing.h re-exports).
install(FILES ${PROJECT_SOURCE_DIR}/emulator/include/mla/Emu/Timing.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mla/Emu COMPONENT runtime)
# The kernel-level headers the runtime's include: the configuration, the contract and
# the launch geometry.
install(FILES ${PROJECT_SOURCE_DIR}/include/mla/Kernel/DecodeConfig.h
  ${PROJECT_SOURCE_DIR}/include/mla/Kernel/LaunchGeometry.h
  ${PROJECT_SOURCE_DIR}/include/mla/Kernel/KernelContract.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mla/Kernel COMPONENT runtime)

# compiler
install(TARGETS mla_compiler LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT compiler)
install(TARGETS mla-opt mla-compile
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT compiler)
install(FILES ${PROJECT_SOURCE_DIR}/include/mla/Compiler/Compiler.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mla/Compiler COMPONENT compiler)

install(EXPORT mlaTargets NAMESPACE mla::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mla COMPONENT runtime)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/mlaConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/mlaConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mla
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/mlaConfigVersion.cmake
  VERSION ${MLA_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/mlaConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/mlaConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mla COMPONENT runtime)

# CTest: install the `runtime` and `compiler` components into a prefix inside the build tree, then
# configure, build and run examples/serving out of tree against it (find_package).
# Not in a sanitizer build: an installed sanitized libmla.so would need its consumer
# built with the same sanitizer runtime; the normal build's run covers the install.
if(NOT MLA_SANITIZERS)
add_test(NAME install.out-of-tree-consumer
  COMMAND ${CMAKE_COMMAND}
    -DBUILD_DIR=${PROJECT_BINARY_DIR}
    -DWORK_DIR=${PROJECT_BINARY_DIR}/install-test
    -DCONSUMER_SOURCE=${PROJECT_SOURCE_DIR}/examples/serving
    -DGENERATOR=${CMAKE_GENERATOR}
    -DCXX_COMPILER=${CMAKE_CXX_COMPILER}
    -P ${PROJECT_SOURCE_DIR}/cmake/InstallTest.cmake)
set_tests_properties(install.out-of-tree-consumer PROPERTIES
  ENVIRONMENT "MLA_CACHE_DIR=${PROJECT_BINARY_DIR}/install-test/kernel-cache"
  PASS_REGULAR_EXPRESSION "serving example: every layer matches the host path"
  # Each `cmake --install` of a component rewrites the build tree's manifest of it.
  RESOURCE_LOCK mla-python-install
  TIMEOUT 600)
endif()

# CTest: the Python package's install rule (component `python`, into site-packages under
# the install prefix) staged under DESTDIR inside the build tree, then imported from there
# by Debian's python3 and run on the emulator; and installed with --prefix into the build
# tree (the rule must honour it: it once wrote into the system's dist-packages) and
# imported from that prefix.
if(MLA_ENABLE_PYTHON)
  add_test(NAME install.python-package
    COMMAND ${CMAKE_COMMAND} -E env DESTDIR=${PROJECT_BINARY_DIR}/install-test/destdir
            sh -c "for c in runtime emulator compiler python; do ${CMAKE_COMMAND} --install ${PROJECT_BINARY_DIR} --component $c || exit 1; done")
  set(staged ${PROJECT_BINARY_DIR}/install-test/destdir${MLA_PYTHON_INSTALL_FULL_DIR})
  add_test(NAME install.python-import
    COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${staged}
            ${MLA_PYTHON_EXECUTABLE} -c
            "import mla, numpy as np; assert mla.__file__.startswith('${staged}'), mla.__file__; p = mla.reference.make_problem(12, 1, [200, 3], seed=1); out, lse = mla.Decoder(12, 1, 'emu')(p['q'], p['kv'], p['pages'], p['indptr'], p['scale'], p['vscale']); assert np.isfinite(lse).all(); print('installed package ok:', mla.__file__)")
  # Each `cmake --install` of a component rewrites the build tree's manifest of it.
  set_tests_properties(install.python-package PROPERTIES RESOURCE_LOCK mla-python-install)
  set_tests_properties(install.python-import PROPERTIES
    DEPENDS install.python-package
    ENVIRONMENT "MLA_CACHE_DIR=${PROJECT_BINARY_DIR}/install-test/kernel-cache"
    PASS_REGULAR_EXPRESSION "installed package ok")
  if(NOT IS_ABSOLUTE "${MLA_PYTHON_INSTALL_DIR}")
    set(python_prefix ${PROJECT_BINARY_DIR}/install-test/python-prefix)
    add_test(NAME install.python-prefix
      COMMAND ${CMAKE_COMMAND}
              -DBUILD_DIR=${PROJECT_BINARY_DIR} -DPREFIX=${python_prefix}
              -DSITE_PACKAGES=${python_prefix}/${MLA_PYTHON_INSTALL_DIR}
              -DPYTHON=${MLA_PYTHON_EXECUTABLE}
              -P ${PROJECT_SOURCE_DIR}/cmake/InstallPythonPrefixTest.cmake)
    set_tests_properties(install.python-prefix PROPERTIES
      ENVIRONMENT "MLA_CACHE_DIR=${PROJECT_BINARY_DIR}/install-test/kernel-cache"
      PASS_REGULAR_EXPRESSION "prefix install ok"
      RESOURCE_LOCK mla-python-install)
  endif()
endif()

# CTest: the runtime without the compiler. Stages the `runtime`, `emulator` and `python`
# components (not `compiler`) under a DESTDIR and decodes Kimi-K3 TP8 from the installed bundle with
# that package (test/Install/runtime_only_decode.py): no libMLIR in ldd or in the process.
if(MLA_ENABLE_PYTHON AND TARGET mla-kernel-bundle)
  set(_mla_runtime_only ${PROJECT_BINARY_DIR}/install-test/runtime-only)
  add_test(NAME install.runtime-only-stage
    COMMAND sh -c "rm -rf '${_mla_runtime_only}' && for c in runtime emulator python; do DESTDIR='${_mla_runtime_only}' '${CMAKE_COMMAND}' --install '${PROJECT_BINARY_DIR}' --component $c || exit 1; done")
  add_test(NAME install.runtime-only
    COMMAND ${MLA_PYTHON_EXECUTABLE} ${PROJECT_SOURCE_DIR}/test/Install/runtime_only_decode.py
            ${_mla_runtime_only}${MLA_PYTHON_INSTALL_FULL_DIR}
            ${_mla_runtime_only}${CMAKE_INSTALL_FULL_LIBDIR})
  set_tests_properties(install.runtime-only-stage PROPERTIES FIXTURES_SETUP mla_runtime_only
    RESOURCE_LOCK mla-python-install)
  set_tests_properties(install.runtime-only PROPERTIES
    FIXTURES_REQUIRED mla_runtime_only
    PASS_REGULAR_EXPRESSION "runtime-only decode ok"
    TIMEOUT 600)
endif()

