# Issue 17 through the CLI: one ctest case per item of the issue's list
# (tests/reliability_cli_test.sh says what each checks).
foreach(_case IN ITEMS trapezoid_small db_paths read_only import_refusals deep_json concurrent_tune no_resume)
  add_test(NAME rel.${_case} COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/reliability_cli_test.sh $<TARGET_FILE:wstune_cli> ${_case})
  set_tests_properties(rel.${_case} PROPERTIES ENVIRONMENT "${WSTUNE_TEST_ENV}" TIMEOUT 300)
endforeach()
# Five tuning processes at once: alone, so the timing of the others cannot
# starve them.
set_tests_properties(rel.concurrent_tune rel.no_resume PROPERTIES RUN_SERIAL TRUE)
