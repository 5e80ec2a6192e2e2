# wstune split --model measured with the store: the first run calibrates,
# refines and stores; the second reuses both without measuring again.
add_test(NAME cli.split_store COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/split_store_test.sh $<TARGET_FILE:wstune_cli>)
set_tests_properties(cli.split_store PROPERTIES ENVIRONMENT "${WSTUNE_TEST_ENV}" TIMEOUT 300)
