# CLI exit codes and messages, end to end on PoCL.
add_test(NAME cli.wstune COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli_test.sh $<TARGET_FILE:wstune_cli>)
set_tests_properties(cli.wstune PROPERTIES ENVIRONMENT "${WSTUNE_TEST_ENV}" TIMEOUT 300)
