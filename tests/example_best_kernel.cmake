# examples/best_kernel (C++ and C) built against an installed wstune and run
# on PoCL: with an empty database every size gets the file's Default values
# ("default"); after a best of 64x64 is stored (a tune, then that row
# imported as a best that beat the reference twice, so the fixture does not
# hang on PoCL's timing noise) the same size is "exact", a near untuned size
# "nearest" and a far one "default" again; every result is verified.
# Programs go through a fresh binary cache folder: the second start of the
# same sizes compiles nothing ("programs compiled from source: 0"). With
# --tune-online an untuned size is tuned at the first start ("online") and
# "exact" at the next, which compiles nothing either. Leak detection
# (LeakSanitizer) is on for the examples' processes in the ASan build.
# Included by tests/CMakeLists.txt; the same file runs the test in script mode.
include(${CMAKE_CURRENT_LIST_DIR}/support/run_checked.cmake)
if(CMAKE_SCRIPT_MODE_FILE)
  function(expect text regex)
    if(NOT text MATCHES "${regex}")
      message(FATAL_ERROR "expected '${regex}' in:\n${text}")
    endif()
  endfunction()
  string(RANDOM LENGTH 8 tag)
  set(tmp "${WORK}/best-kernel-${tag}")
  file(REMOVE_RECURSE "${tmp}")
  run(${CMAKE_COMMAND} --install "${BUILD}" --prefix "${tmp}/prefix")
  # The library's own compilers: an instrumented (clang) build's package
  # carries clang-only flags (-fsanitize=fuzzer-no-link), for the C app too.
  set(c_compiler)
  if(CXX MATCHES "clang\\+\\+")
    string(REPLACE "clang++" "clang" cc "${CXX}")
    set(c_compiler "-DCMAKE_C_COMPILER=${cc}")
  endif()
  run(${CMAKE_COMMAND} -S "${SRC}/examples/best_kernel" -B "${tmp}/build" "-DCMAKE_PREFIX_PATH=${tmp}/prefix"
      "-DCMAKE_CXX_COMPILER=${CXX}" ${c_compiler})
  run(${CMAKE_COMMAND} --build "${tmp}/build" -j2)
  file(GLOB libdirs "${tmp}/prefix/lib*")
  set(ENV{LD_LIBRARY_PATH} "${libdirs}")
  # LeakSanitizer on for these processes in the ASan build (the suite's
  # ASAN_OPTIONS turn it off elsewhere), with full stacks so that the one
  # suppression, PoCL's kernel compiler state (tests/support/lsan-pocl.supp,
  # which says how it was found), matches only allocations under that frame.
  set(ENV{ASAN_OPTIONS} "$ENV{ASAN_OPTIONS}:detect_leaks=1:fast_unwind_on_malloc=0")
  set(ENV{LSAN_OPTIONS} "$ENV{LSAN_OPTIONS}:suppressions=${SRC}/tests/support/lsan-pocl.supp")
  set(ENV{WSTUNE_CACHE_DIR} "${tmp}/programs")
  set(file "${SRC}/share/examples/kernels/stencil5.json")
  set(wstune "${tmp}/prefix/bin/wstune")

  # An empty database: the Default values, for C++ and C.
  set(ENV{WSTUNE_DB} "${tmp}/empty.db")
  run("${tmp}/build/best_kernel" "${file}" 64x64 200x120)
  expect("${last_output}" "size 64x64: level default, parameters {\"WPTX\":1,\"WPTY\":1}.*result verified")
  expect("${last_output}" "size 200x120: level default.*result verified")
  expect("${last_output}" "programs compiled from source: 1, loaded from the binary cache: 0")
  run("${tmp}/build/best_kernel_c" "${file}" 64x64)
  expect("${last_output}" "size 64x64: level default.*not compiled.*result verified")
  expect("${last_output}" "programs compiled from source: 0, loaded from the binary cache: 1")
  # A second start of the C++ app: the same answers, nothing compiled.
  run("${tmp}/build/best_kernel" "${file}" 64x64 200x120)
  expect("${last_output}" "size 64x64: level default.*not compiled.*result verified")
  expect("${last_output}" "programs compiled from source: 0, loaded from the binary cache: 1")

  # A stored best of 64x64 on this device (the live device's record from a real tune).
  run("${wstune}" tune --kernel-file "${file}" --size 64x64 --max-evals 1 --cold --db "${tmp}/tune.db")
  run("${wstune}" export "${tmp}/tune.json" --db "${tmp}/tune.db")
  file(READ "${tmp}/tune.json" doc)
  string(JSON device GET "${doc}" devices 0)
  string(JSON best GET "${doc}" best_configs 0)
  string(JSON best SET "${best}" uuid "\"0123456789abcdef0123456789abcdef\"")
  string(JSON best SET "${best}" session "null")
  string(JSON best SET "${best}" params "{\"WPTX\":2,\"WPTY\":2}")
  string(JSON best SET "${best}" local "{\"x\":8,\"y\":8,\"dims\":2}")
  string(JSON best SET "${best}" global "null")
  string(JSON best SET "${best}" median_ms "1.0")
  string(JSON best SET "${best}" null_ms "2.0")
  string(JSON fixture SET "${doc}" sessions "[]")
  string(JSON fixture SET "${fixture}" best_configs "[${best}]")
  file(WRITE "${tmp}/fixture.json" "${fixture}")
  set(ENV{WSTUNE_DB} "${tmp}/app.db")
  run("${wstune}" import "${tmp}/fixture.json" --db "${tmp}/app.db")

  run("${tmp}/build/best_kernel" "${file}" 64x64 128x64 2048x2048)
  expect("${last_output}" "size 64x64: level exact, parameters {\"WPTX\":2,\"WPTY\":2}, global 32x32, local 8x8.*result verified")
  expect("${last_output}" "size 128x64: level nearest, parameters {\"WPTX\":2,\"WPTY\":2}, global 64x32, local 8x8.*result verified")
  expect("${last_output}" "size 2048x2048: level default.*result verified")
  run("${tmp}/build/best_kernel_c" "${file}" 128x64 100x50)
  expect("${last_output}" "size 128x64: level nearest, parameters {\"WPTX\":2,\"WPTY\":2}, global 64x32, local 8x8.*result verified")
  expect("${last_output}" "size 100x50: level nearest.*global 56x32, local 8x8.*result verified")
  run("${wstune}" query --kernel-file "${file}" --size 128x64 --db "${tmp}/app.db" --format json)
  expect("${last_output}" "\"level\": \"nearest\"")

  # Online tuning at the first start (C++ and C), exact at the next without compiling.
  run("${tmp}/build/best_kernel" --tune-online "${file}" 48x48)
  expect("${last_output}" "size 48x48: level online, .*tuned online: [1-8] configurations, result verified")
  run("${tmp}/build/best_kernel" --tune-online "${file}" 48x48)
  expect("${last_output}" "size 48x48: level exact, .*not compiled.*result verified")
  expect("${last_output}" "programs compiled from source: 0, loaded from the binary cache: 1")
  run("${tmp}/build/best_kernel_c" --tune-online "${file}" 40x72)
  expect("${last_output}" "size 40x72: level online, .*tuned online: [1-8] configurations, result verified")
  run("${tmp}/build/best_kernel_c" --tune-online "${file}" 40x72)
  expect("${last_output}" "size 40x72: level exact, .*not compiled.*result verified")
  expect("${last_output}" "programs compiled from source: 0, loaded from the binary cache: 1")
  message(STATUS "best kernel example: ${last_output}")
  file(REMOVE_RECURSE "${tmp}")
  return()
endif()
add_example_test(example.best_kernel ${CMAKE_CURRENT_LIST_FILE})
