# bench_strategies: the search strategies compared in simulation mode on
# recorded tables and synthetic landscapes, with Kernel Tuner's strategies
# merged in (scripts/bench-strategies.sh runs it).
# Included by bench/CMakeLists.txt's glob over bench/*.cmake.
add_executable(bench_strategies ${CMAKE_CURRENT_LIST_DIR}/strategies_bench.cpp)
target_link_libraries(bench_strategies PRIVATE wstune_internal fmt::fmt Boost::program_options)
