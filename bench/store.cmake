# bench_store: store insert rate and look-up latency over a 1,000,000-trial
# database (scripts/bench-store.sh writes docs/results/store_bench.{csv,md}).
add_executable(bench_store ${CMAKE_CURRENT_LIST_DIR}/store_bench.cpp)
target_link_libraries(bench_store PRIVATE wstune_internal fmt::fmt)
