# bench_space: search-space construction (compile the conditions, solve,
# hold) on the spaces of bench/spaces/spaces.json, beside Kernel Tuner's
# (bench/space_kernel_tuner.py); scripts/bench-space.sh writes
# docs/results/space_construction.md.
add_executable(bench_space ${CMAKE_CURRENT_LIST_DIR}/space_bench.cpp)
target_link_libraries(bench_space PRIVATE wstune_internal fmt::fmt Boost::program_options)
