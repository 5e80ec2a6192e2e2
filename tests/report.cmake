# wstune report end to end: a store filled by `wstune import` (two devices,
# split runs of three methods, a 2-D tuning session), rendered; python3's
# xml.etree checks the page and every SVG and that the drawn numbers are the
# stored ones (tests/report_check.py). Bad input: a missing database is a
# clear error (exit 1), --out is required (exit 2), an empty database gives
# a page that says there is nothing yet.
# Included by tests/CMakeLists.txt; the same file runs the test in script mode.
if(CMAKE_SCRIPT_MODE_FILE)
  function(expect code regex)
    execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT "${rc}" STREQUAL "${code}" OR NOT "${out}${err}" MATCHES "${regex}")
      message(SEND_ERROR "FAIL: ${ARGN}\n  exit ${rc} (want ${code}), output: ${out}${err}\n  (want /${regex}/)")
    else()
      message(STATUS "ok: ${ARGN}")
    endif()
  endfunction()
  string(RANDOM LENGTH 8 tag)
  set(t "${WORK}/report-cli-${tag}")
  file(REMOVE_RECURSE "${t}")
  file(MAKE_DIRECTORY "${t}")
  set(dev1 "{\"name\":\"Fake GPU\",\"vendor\":\"V\",\"type\":\"gpu\",\"driver_version\":\"1.0\",\"architecture\":\"sm_90\",\"compute_units\":8,\"pe_per_cu\":64,\"max_work_group_size\":1024,\"max_work_item_sizes\":[1024,1024,64],\"fingerprint\":\"265a57a279cb09cb\"}")
  set(dev2 "{\"name\":\"Fake CPU\",\"vendor\":\"V\",\"type\":\"cpu\",\"driver_version\":\"1.0\",\"architecture\":\"x86\",\"compute_units\":4,\"pe_per_cu\":8,\"max_work_group_size\":4096,\"max_work_item_sizes\":[4096,4096,4096],\"fingerprint\":\"9e1381d78972d30b\"}")
  set(kern "{\"name\":\"bilinear\",\"source_hash\":\"\",\"build_options\":\"\"}")
  set(prob "{\"global\":{\"x\":1024,\"y\":1024,\"dims\":2},\"size_text\":\"512x512:1024x1024\"}")
  set(ts "\"created_at\":\"2025-01-01T00:00:00.000Z\",\"host\":\"h\"")
  set(runs "")
  foreach(m_ms_sh IN ITEMS "baseline;6.5;0.33;1" "paper;12.5;0.25;2" "wstune;4.5;0.6;3")
    list(GET m_ms_sh 0 m)
    list(GET m_ms_sh 1 ms)
    list(GET m_ms_sh 2 sh)
    list(GET m_ms_sh 3 n)
    string(APPEND runs "{\"uuid\":\"0000000000000000000000000000000${n}\",\"kernel\":${kern},\"problem\":${prob},\"model\":\"x\",\"makespan_ms\":${ms},\"devices\":[{\"device\":\"265a57a279cb09cb\",\"share\":${sh},\"time_ms\":${ms}},{\"device\":\"9e1381d78972d30b\",\"share\":0.5,\"time_ms\":1.0}],\"detail\":{\"method\":\"${m}\"},${ts}},")
  endforeach()
  string(REGEX REPLACE ",$" "" runs "${runs}")
  set(t1 "{\"local\":{\"x\":32,\"y\":8,\"dims\":2},\"status\":\"correct\",\"error\":\"\",\"samples_ms\":[0.75,0.75,0.75],\"created_at\":\"2025-01-01T00:00:00.000Z\"}")
  set(t2 "{\"local\":{\"x\":1,\"y\":512,\"dims\":2},\"status\":\"correct\",\"error\":\"\",\"samples_ms\":[3.5],\"created_at\":\"2025-01-01T00:00:00.000Z\"}")
  set(sess "{\"uuid\":\"5e551000000000000000000000000001\",\"device\":\"265a57a279cb09cb\",\"kernel\":${kern},\"problem\":${prob},\"strategy\":\"guided\",\"started_at\":\"2025-01-01T00:00:00.000Z\",\"ended_at\":null,\"wstune_version\":\"0.1.0\",\"host\":\"h\",\"trials\":[${t1},${t2}]}")
  file(WRITE "${t}/in.json" "{\"format\":\"wstune-store-export\",\"format_version\":1,\"devices\":[${dev1},${dev2}],\"sessions\":[${sess}],\"best_configs\":[],\"split_runs\":[${runs}],\"calibrations\":[]}")
  expect(0 "" ${WSTUNE} import "${t}/in.json" --db "${t}/w.db")
  expect(0 "3 split runs, 1 heatmaps" ${WSTUNE} report --db "${t}/w.db" --out "${t}/out")
  expect(0 "0 problems" ${PYTHON} ${CHECK} "${t}/out"
         --expect "bars_bilinear.svg=512x512:1024x1024 / baseline: 6.5"
         --expect "bars_bilinear.svg=512x512:1024x1024 / paper: 12.5"
         --expect "bars_bilinear.svg=512x512:1024x1024 / wstune: 4.5"
         --expect "share_bilinear_1.svg=wstune: 60.0 -> 4.5"
         --expect "heat_1_bilinear.svg=32 x 8: 0.75 ms"
         --expect "heat_1_bilinear.svg=1 x 512: 3.5 ms"
         --contains "Fake GPU")
  # bad input
  expect(1 "does not exist" ${WSTUNE} report --db "${t}/missing.db" --out "${t}/x")
  expect(2 "--out" ${WSTUNE} report --db "${t}/w.db")
  file(WRITE "${t}/empty.json" "{\"format\":\"wstune-store-export\",\"format_version\":1,\"devices\":[],\"sessions\":[],\"best_configs\":[],\"split_runs\":[],\"calibrations\":[]}")
  expect(0 "" ${WSTUNE} import "${t}/empty.json" --db "${t}/empty.db")
  expect(0 "nothing to draw yet" ${WSTUNE} report --db "${t}/empty.db" --out "${t}/empty")
  expect(0 "0 problems" ${PYTHON} ${CHECK} "${t}/empty" --contains "Nothing stored yet")
  file(REMOVE_RECURSE "${t}")
  return()
endif()

find_package(Python3 COMPONENTS Interpreter REQUIRED)
add_test(NAME report.cli
         COMMAND ${CMAKE_COMMAND} -DWSTUNE=$<TARGET_FILE:wstune_cli> -DPYTHON=${Python3_EXECUTABLE}
                 -DCHECK=${CMAKE_CURRENT_SOURCE_DIR}/report_check.py -DWORK=${CMAKE_CURRENT_BINARY_DIR}
                 -P ${CMAKE_CURRENT_LIST_FILE})
set_tests_properties(report.cli PROPERTIES ENVIRONMENT "${WSTUNE_TEST_ENV}" TIMEOUT 120)
