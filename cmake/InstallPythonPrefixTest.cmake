# Driven by CTest (cmake/MLAInstall.cmake): `cmake --install BUILD_DIR --component C
# --prefix PREFIX` for the components the package needs (runtime: libmla.so; compiler:
# kernels on a cache miss; python) must put the package into SITE_PACKAGES (under PREFIX)
# and nothing outside PREFIX; PYTHON then imports it from there and runs it on the
# emulator.
include(${CMAKE_CURRENT_LIST_DIR}/InstallTestSupport.cmake)
require_variables(InstallPythonPrefixTest.cmake BUILD_DIR PREFIX SITE_PACKAGES PYTHON)

# First staged under a DESTDIR, so that a rule that ignores --prefix is caught before it
# writes outside the build tree: every file must land under DESTDIR/PREFIX.
set(scratch ${PREFIX}-destdir)
file(REMOVE_RECURSE ${PREFIX} ${scratch})
set(components runtime emulator compiler python)
foreach(c ${components})
  run(${CMAKE_COMMAND} -E env DESTDIR=${scratch}
      ${CMAKE_COMMAND} --install ${BUILD_DIR} --component ${c} --prefix ${PREFIX})
endforeach()
file(GLOB_RECURSE staged LIST_DIRECTORIES false ${scratch}/*)
if(NOT staged)
  message(FATAL_ERROR "the components installed nothing")
endif()
foreach(f ${staged})
  string(FIND "${f}" "${scratch}${PREFIX}/" at)
  if(NOT at EQUAL 0)
    message(FATAL_ERROR "--prefix ${PREFIX} was not honoured: ${f} lies outside it")
  endif()
endforeach()
file(REMOVE_RECURSE ${scratch})

foreach(c ${components})
  run(${CMAKE_COMMAND} --install ${BUILD_DIR} --component ${c} --prefix ${PREFIX})
endforeach()
if(NOT EXISTS ${SITE_PACKAGES}/mla/__init__.py)
  message(FATAL_ERROR "the package is not in ${SITE_PACKAGES}")
endif()
# Statements on separate lines: a ';' would split the CMake argument.
run(${CMAKE_COMMAND} -E env PYTHONPATH=${SITE_PACKAGES} ${PYTHON} -c "import mla, numpy as np
assert mla.__file__.startswith('${SITE_PACKAGES}/'), mla.__file__
p = mla.reference.make_problem(12, 1, [200, 3], seed=1)
out, lse = mla.Decoder(12, 1, 'emu')(p['q'], p['kv'], p['pages'], p['indptr'], p['scale'], p['vscale'])
assert np.isfinite(lse).all()
print('prefix install ok:', mla.__file__)")
