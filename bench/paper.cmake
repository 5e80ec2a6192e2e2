# bench_paper: the paper's §4 comparison (baseline, the paper's method,
# wstune) at the paper's sizes and 4x/16x the work on two devices
# (scripts/bench-paper.sh runs it). Included by bench/CMakeLists.txt's glob.
add_executable(bench_paper ${CMAKE_CURRENT_LIST_DIR}/paper_bench.cpp ${CMAKE_CURRENT_LIST_DIR}/paper_db.cpp)
target_link_libraries(bench_paper PRIVATE wstune_internal fmt::fmt nlohmann_json::nlohmann_json
                      Boost::program_options SQLiteCpp SQLite::SQLite3)
