# bench_transfers: the split's transfers against each device's measured
# pinned bandwidth (scripts/bench-transfers.sh runs it). Included by
# bench/CMakeLists.txt's glob over bench/*.cmake.
add_executable(bench_transfers ${CMAKE_CURRENT_LIST_DIR}/transfers_bench.cpp)
target_link_libraries(bench_transfers PRIVATE wstune_internal fmt::fmt Boost::program_options)
