# examples/app built against an installed wstune and run twice: the first run
# tunes online and stores the result, the second finds it ("exact").
# Included by tests/CMakeLists.txt; the same file runs the test in script mode.
include(${CMAKE_CURRENT_LIST_DIR}/support/run_checked.cmake)
if(CMAKE_SCRIPT_MODE_FILE)
  string(RANDOM LENGTH 8 tag)
  set(tmp "${WORK}/example-app-${tag}")  # our own directory: no clash with install.consumer
  file(REMOVE_RECURSE "${tmp}")
  run(${CMAKE_COMMAND} --install "${BUILD}" --prefix "${tmp}/prefix")
  foreach(h store.hpp lookup.hpp tuner.hpp)
    if(NOT EXISTS "${tmp}/prefix/include/wstune/${h}")
      message(FATAL_ERROR "include/wstune/${h} not installed")
    endif()
  endforeach()
  if(NOT EXISTS "${tmp}/prefix/share/wstune/schema.sql")
    message(FATAL_ERROR "share/wstune/schema.sql not installed")
  endif()
  # The library's own compiler: an instrumented build's package carries
  # clang-only link flags (-fsanitize=fuzzer-no-link).
  run(${CMAKE_COMMAND} -S "${SRC}/examples/app" -B "${tmp}/build" "-DCMAKE_PREFIX_PATH=${tmp}/prefix"
      "-DCMAKE_CXX_COMPILER=${CXX}")
  run(${CMAKE_COMMAND} --build "${tmp}/build" -j2)
  file(GLOB libdirs "${tmp}/prefix/lib*")
  set(ENV{LD_LIBRARY_PATH} "${libdirs}")
  set(ENV{WSTUNE_DB} "${tmp}/data/app.db")  # a missing directory: created
  run("${tmp}/build/wstune_example_app" 128 64)
  if(NOT last_output MATCHES "result verified")
    message(FATAL_ERROR "unexpected output: ${last_output}")
  endif()
  run("${tmp}/build/wstune_example_app" 128 64)
  if(NOT last_output MATCHES "\\(exact\\), result verified")
    message(FATAL_ERROR "second run did not use the stored result: ${last_output}")
  endif()
  run("${tmp}/prefix/bin/wstune" query --kernel saxpy2d --format csv)
  if(NOT last_output MATCHES "saxpy2d,128x64")
    message(FATAL_ERROR "wstune query does not list the app's result: ${last_output}")
  endif()
  message(STATUS "example app: ${last_output}")
  file(REMOVE_RECURSE "${tmp}")
  return()
endif()
add_example_test(example.app ${CMAKE_CURRENT_LIST_FILE})
