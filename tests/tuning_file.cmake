# T1 tuning files end to end through the CLI on PoCL (tests/tuning_file_test.sh).
add_test(NAME cli.tuning_files
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tuning_file_test.sh $<TARGET_FILE:wstune_cli> ${PROJECT_SOURCE_DIR}
          ${CMAKE_CURRENT_BINARY_DIR}/tuning-files)
set_tests_properties(cli.tuning_files PROPERTIES ENVIRONMENT "${WSTUNE_TEST_ENV}" TIMEOUT 900)
