# bench_tuner_ab: issue 16's check that the speed-up over NULL stored by
# online tuning matches a steady-state interleaved A/B of the same two
# configurations (a timing figure, so a benchmark, not a unit test).
# Run with POCL_MAX_PTHREAD_COUNT=1 on a quiet machine; exit 1 beyond 5 %.
add_executable(bench_tuner_ab ${CMAKE_CURRENT_LIST_DIR}/tuner_ab_bench.cpp)
target_include_directories(bench_tuner_ab PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
target_link_libraries(bench_tuner_ab PRIVATE wstune_internal fmt::fmt)
