# bench_clblast: CLBlast SGEMM next to wstune's matmul kernel (issue 7, peer
# comparison; bench/peers/clblast_sgemm.cpp, docs/peers.md). Debian's
# libclblast-dev ships CLBlastConfig.cmake with the imported target `clblast`.
find_package(CLBlast QUIET)
if(CLBlast_FOUND AND TARGET clblast)
  add_executable(bench_clblast ${CMAKE_CURRENT_LIST_DIR}/peers/clblast_sgemm.cpp)
  target_link_libraries(bench_clblast PRIVATE wstune_internal clblast Boost::program_options fmt::fmt)
else()
  message(STATUS "CLBlast not found (apt install libclblast-dev): bench_clblast is not built")
endif()
