# `cmake --install <build>` (component `mla`, the default besides `python`):
#   include/mla/Runtime/*.h, include/mla/Emu/Timing.h, include/mla/Compiler/Compiler.h,
#   include/mla/Kernel/{LaunchGeometry,KernelContract}.h      the C++ API
#   lib/libmla.so                                              compiler + runtime + Decoder
#   bin/mla-opt, bin/mla-compile, bin/mla-run                  the tools
#   lib/cmake/mla/mlaConfig.cmake (+ Version, Targets)         find_package(mla)
# Installed binaries find Debian's libMLIR/libLLVM through an RPATH to LLVM's library
# directory (INSTALL_RPATH_USE_LINK_PATH) and libmla.so through $ORIGIN/../lib.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(MLA_VERSION 0.1.0)

set_target_properties(mla mla-opt mla-compile mla-run PROPERTIES
  INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}"
  INSTALL_RPATH_USE_LINK_PATH TRUE)

install(TARGETS mla EXPORT mlaTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT mla
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS mla-opt mla-compile mla-run
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT mla)
# Every runtime header (they include each other; a new one is installed with them).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/include/mla/Runtime
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mla COMPONENT mla
  FILES_MATCHING PATTERN "*.h")
# The emulator's public header (the timing types mla/Runtime/Timing.h re-exports).
install(FILES ${PROJECT_SOURCE_DIR}/runtime/emu/include/mla/Emu/Timing.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mla/Emu COMPONENT mla)
# The compiler headers the runtime's include: the configuration and the launch geometry.
install(FILES ${PROJECT_SOURCE_DIR}/include/mla/Compiler/Compiler.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mla/Compiler COMPONENT mla)
install(FILES ${PROJECT_SOURCE_DIR}/include/mla/Kernel/LaunchGeometry.h
  ${PROJECT_SOURCE_DIR}/include/mla/Kernel/KernelContract.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/mla/Kernel COMPONENT mla)

install(EXPORT mlaTargets NAMESPACE mla::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mla COMPONENT mla)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/mlaConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/mlaConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mla
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/mlaConfigVersion.cmake
  VERSION ${MLA_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/mlaConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/mlaConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mla COMPONENT mla)

# CTest: install the `mla` component into a prefix inside the build tree, then
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
            ${CMAKE_COMMAND} --install ${PROJECT_BINARY_DIR} --component python)
  set(staged ${PROJECT_BINARY_DIR}/install-test/destdir${MLA_PYTHON_INSTALL_FULL_DIR})
  add_test(NAME install.python-import
    COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${staged}
            ${MLA_PYTHON_EXECUTABLE} -c
            "import mla, numpy as np; assert mla.__file__.startswith('${staged}'), mla.__file__; p = mla.reference.make_problem(12, 1, [200, 3], seed=1); out, lse = mla.Decoder(12, 1, 'emu')(p['q'], p['kv'], p['pages'], p['indptr'], p['scale'], p['vscale']); assert np.isfinite(lse).all(); print('installed package ok:', mla.__file__)")
  # Each `cmake --install` of the component rewrites the build tree's install manifest.
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
