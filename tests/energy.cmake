# Objectives, metrics, Pareto fronts and the energy split on PoCL, without sensors (tests/energy_test.sh).
add_test(NAME cli.energy
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/energy_test.sh $<TARGET_FILE:wstune_cli> ${PROJECT_SOURCE_DIR}
          ${CMAKE_CURRENT_BINARY_DIR}/energy)
set_tests_properties(cli.energy PROPERTIES ENVIRONMENT "${WSTUNE_TEST_ENV}" TIMEOUT 900)
