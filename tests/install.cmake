# cmake --install into a temporary prefix, then a consumer project built with
# find_package(wstune) against it.
add_test(NAME install.consumer COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/install_test.sh ${CMAKE_BINARY_DIR} ${PROJECT_SOURCE_DIR})
set_tests_properties(install.consumer PROPERTIES ENVIRONMENT "${WSTUNE_TEST_ENV}" TIMEOUT 600 RUN_SERIAL TRUE)
