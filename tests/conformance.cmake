# The conformance corpus (tests/conformance, issue 36) tuned on PoCL with
# every built configuration verified (tests/conformance_test.sh); its reading,
# space sizes and reference builds are test_conformance.cpp.
add_test(NAME conformance.corpus
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/conformance_test.sh $<TARGET_FILE:wstune_cli> ${PROJECT_SOURCE_DIR}
          ${CMAKE_CURRENT_BINARY_DIR}/conformance)
set_tests_properties(conformance.corpus PROPERTIES ENVIRONMENT "${WSTUNE_TEST_ENV}" TIMEOUT 900)
