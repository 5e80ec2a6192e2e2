# Script-mode helpers of the example tests (tests/example_*.cmake).
# run(COMMAND...): runs it, fails the test with its output unless it exits 0,
# and leaves its stdout in `last_output`.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "FAILED (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

# add_example_test(NAME SCRIPT): the test NAME runs SCRIPT in script mode with
# the build (BUILD), the sources (SRC), a work folder (WORK) and the C++
# compiler (CXX), alone (it installs and builds), in the tests' environment.
function(add_example_test name script)
  add_test(NAME ${name}
           COMMAND ${CMAKE_COMMAND} -DBUILD=${CMAKE_BINARY_DIR} -DSRC=${PROJECT_SOURCE_DIR}
                   -DWORK=${CMAKE_BINARY_DIR}/test-work -DCXX=${CMAKE_CXX_COMPILER} -P ${script})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${WSTUNE_TEST_ENV}" TIMEOUT 600 RUN_SERIAL TRUE)
endfunction()
