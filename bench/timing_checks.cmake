# bench_timing_checks: the timing figures that were unit-test assertions
# (issue 35: tests assert no times): a run waiting for WSTUNE_TIMING_LOCK
# counts the wait, split runs' wall and makespan against their kernels.
# Exit 1 when a check misses; run it on a quiet machine.
add_executable(bench_timing_checks ${CMAKE_CURRENT_LIST_DIR}/timing_checks_bench.cpp)
target_include_directories(bench_timing_checks PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
target_link_libraries(bench_timing_checks PRIVATE wstune_internal fmt::fmt Boost::program_options)
