# bench_tune: guided vs exhaustive local-work-size search, NULL and the
# paper's rule as ratios to the optimum (scripts/bench-tune.sh runs it).
# Included by bench/CMakeLists.txt's glob over bench/*.cmake.
add_executable(bench_tune ${CMAKE_CURRENT_LIST_DIR}/tune_bench.cpp)
target_link_libraries(bench_tune PRIVATE wstune_internal fmt::fmt Boost::program_options)
