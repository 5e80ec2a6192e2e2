# The fuzz entry points for tests/test_fuzz_regressions.cpp (fuzz/targets.cmake).
if(TARGET test_fuzz_regressions)
  target_link_libraries(test_fuzz_regressions PRIVATE wstune_fuzz_entries)
  target_compile_definitions(test_fuzz_regressions PRIVATE WSTUNE_FUZZ_DIR="${PROJECT_SOURCE_DIR}/fuzz")
endif()
