# Driven by CTest (cmake/MLAInstall.cmake): installs the build's `runtime` and `compiler`
# components into WORK_DIR/prefix, builds CONSUMER_SOURCE against it with
# find_package(mla), runs it.
include(${CMAKE_CURRENT_LIST_DIR}/InstallTestSupport.cmake)
require_variables(InstallTest.cmake BUILD_DIR WORK_DIR CONSUMER_SOURCE GENERATOR CXX_COMPILER)

file(REMOVE_RECURSE ${WORK_DIR}/prefix ${WORK_DIR}/consumer)
foreach(component runtime emulator compiler)
  run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix --component ${component})
endforeach()
foreach(f include/mla/Runtime/Decoder.h include/mla/Runtime/Device.h
          include/mla/Runtime/CodeObject.h include/mla/Kernel/DecodeConfig.h
          include/mla/Compiler/Compiler.h lib/libmla.so lib/libmla_compiler.so
          bin/mla-opt bin/mla-compile bin/mla-run lib/cmake/mla/mlaConfig.cmake)
  if(NOT EXISTS ${WORK_DIR}/prefix/${f})
    message(FATAL_ERROR "the installed tree lacks ${f}")
  endif()
endforeach()
# The installed tools run from the prefix (their RPATH finds LLVM/MLIR).
run(${WORK_DIR}/prefix/bin/mla-compile --help)
run(${CMAKE_COMMAND} -G ${GENERATOR} -S ${CONSUMER_SOURCE} -B ${WORK_DIR}/consumer
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer)
run(${WORK_DIR}/consumer/mla-serving-example --device emu --layers 2)
