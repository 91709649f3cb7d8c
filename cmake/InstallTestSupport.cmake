# Shared by the install tests' -P scripts (InstallTest.cmake, InstallPythonPrefixTest.cmake).

# Fails the script unless every named variable was given (-DNAME=...).
function(require_variables script)
  foreach(var ${ARGN})
    if(NOT DEFINED ${var})
      message(FATAL_ERROR "${script}: ${var} is not set")
    endif()
  endforeach()
endfunction()

# Runs a command; a non-zero exit fails the script, naming the command.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " line "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${line}")
  endif()
endfunction()
