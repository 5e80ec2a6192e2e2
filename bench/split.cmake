# bench_split: split models against the sweep oracle on two devices
# (scripts/bench-split.sh runs it). Included by bench/CMakeLists.txt's glob
# over bench/*.cmake.
add_executable(bench_split ${CMAKE_CURRENT_LIST_DIR}/split_bench.cpp)
target_link_libraries(bench_split PRIVATE wstune_internal fmt::fmt Boost::program_options
                      SQLiteCpp SQLite::SQLite3)
