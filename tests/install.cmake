# cmake --install into a temporary prefix, then a consumer project built with
# find_package(wstune) against it.
add_test(NAME install.consumer COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/install_test.sh ${CMAKE_BINARY_DIR} ${PROJECT_SOURCE_DIR})
set(_install_env ${WSTUNE_TEST_ENV})
if(WSTUNE_SANITIZE AND CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  # The consumers of an instrumented build link its sanitizer runtimes: the
  # same compilers (the package and wstune.pc carry the -fsanitize flags).
  string(REPLACE "clang++" "clang" _cc "${CMAKE_CXX_COMPILER}")
  list(APPEND _install_env "CXX=${CMAKE_CXX_COMPILER}" "CC=${_cc}")
endif()
set_tests_properties(install.consumer PROPERTIES ENVIRONMENT "${_install_env}" TIMEOUT 600 RUN_SERIAL TRUE)
