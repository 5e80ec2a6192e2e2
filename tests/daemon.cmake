# wstuned: protocol and daemon tests link the daemon's internal library;
# end-to-end runs go through the real MPI launcher with 2-4 ranks.
# The daemon's test doubles (daemon/tests/support/: the in-memory
# Communicator) are a library of their own, linked by the tests only.
add_library(wstuned_test_support STATIC ${PROJECT_SOURCE_DIR}/daemon/tests/support/in_memory_communicator.cpp)
target_link_libraries(wstuned_test_support PUBLIC wstuned_core)
foreach(t IN ITEMS test_protocol test_daemon test_isolation test_tcp)
  if(TARGET ${t})
    target_link_libraries(${t} PRIVATE wstuned_core wstuned_test_support)
  endif()
endforeach()

set(_wstuned_env ${WSTUNE_TEST_ENV} "WSTUNE_REGISTER_TIMEOUT=60")
set(_mpi ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG})
set(_jobs ${PROJECT_SOURCE_DIR}/daemon/testdata/small-jobs.json)
set(_check ${PROJECT_SOURCE_DIR}/daemon/testdata/check.cmake)

# 3 ranks, two unlike workers (PoCL basic: 1 CU; pthread: 2 CUs) through an
# MPMD launch, all four kernels, stored into a fresh database, checked by the
# JSON report and by the row counts of `wstune db check` (daemon/testdata/check.cmake).
add_test(NAME daemon_mpi_run_unlike_workers
  COMMAND ${CMAKE_COMMAND} -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DNP=${MPIEXEC_NUMPROC_FLAG}
          -DWSTUNED=$<TARGET_FILE:wstuned> -DWSTUNE=$<TARGET_FILE:wstune_cli> -DJOBS=${_jobs} -DWORK=${CMAKE_CURRENT_BINARY_DIR}/daemon-run
          -DCASE=run -P ${_check})
add_test(NAME daemon_mpi_fault_build
  COMMAND ${CMAKE_COMMAND} -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DNP=${MPIEXEC_NUMPROC_FLAG}
          -DWSTUNED=$<TARGET_FILE:wstuned> -DWSTUNE=$<TARGET_FILE:wstune_cli> -DJOBS=${_jobs} -DWORK=${CMAKE_CURRENT_BINARY_DIR}/daemon-fault
          -DCASE=fault -P ${_check})
add_test(NAME daemon_mpi_fault_hang
  COMMAND ${CMAKE_COMMAND} -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DNP=${MPIEXEC_NUMPROC_FLAG}
          -DWSTUNED=$<TARGET_FILE:wstuned> -DWSTUNE=$<TARGET_FILE:wstune_cli> -DJOBS=${_jobs} -DWORK=${CMAKE_CURRENT_BINARY_DIR}/daemon-hang
          -DCASE=hang -P ${_check})
add_test(NAME daemon_mpi_tune_4_ranks
  COMMAND ${CMAKE_COMMAND} -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DNP=${MPIEXEC_NUMPROC_FLAG}
          -DWSTUNED=$<TARGET_FILE:wstuned> -DWSTUNE=$<TARGET_FILE:wstune_cli> -DJOBS=${_jobs} -DWORK=${CMAKE_CURRENT_BINARY_DIR}/daemon-tune
          -DCASE=tune -P ${_check})
add_test(NAME daemon_mpi_usage_error
  COMMAND ${CMAKE_COMMAND} -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DNP=${MPIEXEC_NUMPROC_FLAG}
          -DWSTUNED=$<TARGET_FILE:wstuned> -DWSTUNE=$<TARGET_FILE:wstune_cli> -DJOBS=${_jobs} -DWORK=${CMAKE_CURRENT_BINARY_DIR}/daemon-usage
          -DCASE=usage -P ${_check})
# Issue 17 (docs/daemon.md "Faults"): a kernel that segfaults or hangs its
# (isolated) process, a refused worker, a fault for a rank that does not
# exist, a job the master cannot hold in memory, an odd-length sort, a
# deeply nested job file.
set(_issue17_cases crash stall refused bad_rank sort_odd deep_job overlap)  # overlap: issue 18
if(NOT WSTUNE_SANITIZE)
  # Under ASan, operator new ends the process instead of throwing
  # std::bad_alloc, and ASan's shadow memory cannot live under ulimit -v.
  list(APPEND _issue17_cases oom)
endif()
foreach(_case IN LISTS _issue17_cases)
  add_test(NAME daemon_mpi_${_case}
    COMMAND ${CMAKE_COMMAND} -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DNP=${MPIEXEC_NUMPROC_FLAG}
            -DWSTUNED=$<TARGET_FILE:wstuned> -DWSTUNE=$<TARGET_FILE:wstune_cli> -DJOBS=${_jobs}
            -DWORK=${CMAKE_CURRENT_BINARY_DIR}/daemon-${_case} -DCASE=${_case} -P ${_check})
  list(APPEND _issue17_tests daemon_mpi_${_case})
endforeach()
set_tests_properties(daemon_mpi_run_unlike_workers daemon_mpi_fault_build daemon_mpi_fault_hang
                     daemon_mpi_tune_4_ranks daemon_mpi_usage_error ${_issue17_tests}
                     PROPERTIES ENVIRONMENT "${_wstuned_env}" TIMEOUT 300 RUN_SERIAL TRUE)

# SIGINT at the launcher (Ctrl-C: MPICH's hydra forwards it to every rank) and
# SIGTERM at the master alone (its pid from --pid-file), each once the first
# of nine jobs is in the database: every process gone within 60 s, status
# 130, the report interrupted, the finished jobs' rows kept (tests/daemon_signal_test.sh).
foreach(_case IN ITEMS "sigint;INT;launcher" "sigterm_master;TERM;master")
  list(GET _case 0 _name)
  list(GET _case 1 _sig)
  list(GET _case 2 _target)
  add_test(NAME daemon_mpi_${_name}
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/daemon_signal_test.sh ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG}
            $<TARGET_FILE:wstuned> $<TARGET_FILE:wstune_cli> ${_sig} ${_target})
  set_tests_properties(daemon_mpi_${_name} PROPERTIES ENVIRONMENT "${_wstuned_env}" TIMEOUT 300 RUN_SERIAL TRUE)
endforeach()

# A worker rank killed with SIGKILL mid-run (issue 17): MPICH ends the job;
# the --pid-file is removed, everything received is stored, and a rerun with
# --resume runs only the jobs not stored (tests/daemon_kill_test.sh).
add_test(NAME daemon_mpi_kill_worker
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/daemon_kill_test.sh ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG}
          $<TARGET_FILE:wstuned> $<TARGET_FILE:wstune_cli>)
set_tests_properties(daemon_mpi_kill_worker PROPERTIES ENVIRONMENT "${_wstuned_env}" TIMEOUT 300 RUN_SERIAL TRUE)

# Issue 14: T1 kernel files through wstuned (tests/daemon_kernel_file_test.sh):
# two unlike workers tune into one database; the 2-D stencil with halo rows
# split over 2 and 3 workers and verified; two workers with one fingerprint
# share one search. And the master SIGKILLed mid-tune, resumed with --resume
# (tests/daemon_tune_resume_test.sh).
# wstuned_script_tests(SCRIPT PREFIX TIMEOUT CASE...): one test PREFIX_CASE per
# case of a launcher test script taking MPIEXEC NPFLAG WSTUNED WSTUNE SHARE CASE.
function(wstuned_script_tests script prefix timeout)
  foreach(_case IN LISTS ARGN)
    add_test(NAME ${prefix}_${_case}
      COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/${script} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG}
              $<TARGET_FILE:wstuned> $<TARGET_FILE:wstune_cli> ${PROJECT_SOURCE_DIR}/share ${_case})
    set_tests_properties(${prefix}_${_case} PROPERTIES ENVIRONMENT "${_wstuned_env}" TIMEOUT ${timeout} RUN_SERIAL TRUE)
  endforeach()
endfunction()
wstuned_script_tests(daemon_kernel_file_test.sh daemon_mpi_kernel_file 300 unlike split shared)
add_test(NAME daemon_mpi_tune_kill_master
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/daemon_tune_resume_test.sh ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG}
          $<TARGET_FILE:wstuned> $<TARGET_FILE:wstune_cli> ${PROJECT_SOURCE_DIR}/share)
set_tests_properties(daemon_mpi_tune_kill_master PROPERTIES ENVIRONMENT "${_wstuned_env}" TIMEOUT 300 RUN_SERIAL TRUE)

# Issue 35: one tuning request, two paths. Every example tuning file and a T1
# file with fixed sizes (tests/data/fixed_scale.json) tuned by `wstune tune`
# and by `wstuned tune` resolve the same problem size, strategy, space and
# budget, and both store a session (tests/tune_paths_test.sh).
add_test(NAME daemon_mpi_tune_paths_agree
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tune_paths_test.sh ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG}
          $<TARGET_FILE:wstuned> $<TARGET_FILE:wstune_cli> ${PROJECT_SOURCE_DIR}/share ${CMAKE_CURRENT_SOURCE_DIR}/data)
set_tests_properties(daemon_mpi_tune_paths_agree PROPERTIES ENVIRONMENT "${_wstuned_env}" TIMEOUT 300 RUN_SERIAL TRUE)

# Issue 35: one split, two paths. `wstune split` and `wstuned run` plan the
# same blocks (the library's model_blocks()) for matmul 64 under each fixed
# model, an odd-length sort and a T1 file without wstune.Split, and wstuned
# reports the blocks' shares (tests/split_paths_test.sh).
add_test(NAME daemon_mpi_split_paths_agree
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/split_paths_test.sh ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG}
          $<TARGET_FILE:wstuned> $<TARGET_FILE:wstune_cli> ${PROJECT_SOURCE_DIR}/share)
set_tests_properties(daemon_mpi_split_paths_agree PROPERTIES ENVIRONMENT "${_wstuned_env}" TIMEOUT 300 RUN_SERIAL TRUE)

# Issue 40: wstuned across three hosts made of network namespaces (veth
# pairs, own host names and /dev/shm), MPICH over TCP only, launched by
# hydra through tests/cluster/netns-hosts.sh: a shared tune, and the same
# with one host's link down for 5 s mid-search, and one host killed mid-search
# (the launch ends; a --resume rerun on the other two measures the rest)
# (tests/cluster/cluster_test.sh).
# Needs root; skipped (77) without it.
foreach(_case IN ITEMS tune link kill)
  add_test(NAME daemon_cluster_${_case}
    COMMAND ${PROJECT_SOURCE_DIR}/tests/cluster/cluster_test.sh ${MPIEXEC_EXECUTABLE}
            $<TARGET_FILE:wstuned> $<TARGET_FILE:wstune_cli> ${PROJECT_SOURCE_DIR}/share ${_case})
  set_tests_properties(daemon_cluster_${_case} PROPERTIES ENVIRONMENT "${_wstuned_env}" TIMEOUT 600 RUN_SERIAL TRUE
                       SKIP_RETURN_CODE 77 LABELS cluster)
endforeach()

# Issue 40: workers that connect to a master's --listen over TCP, on one
# host: one SIGKILLed mid-search (the master goes on, exit 0, each
# configuration once, the lost worker named), one joining mid-search (it
# takes work), one drained by SIGTERM (tests/tcp_workers_test.sh).
foreach(_case IN ITEMS kill join drain)
  add_test(NAME daemon_tcp_${_case}
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/tcp_workers_test.sh ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:wstuned>
            ${PROJECT_SOURCE_DIR}/share ${_case})
  set_tests_properties(daemon_tcp_${_case} PROPERTIES ENVIRONMENT "${_wstuned_env}" TIMEOUT 600 RUN_SERIAL TRUE)
endforeach()

# Issue 40: the same three namespaced hosts with workers over TCP (the
# master's --listen, `wstuned worker --connect` on each host): host 2
# killed mid-search (the same launch exits 0, each configuration once),
# host 2's worker joining mid-search (it takes work), host 2's link down
# 5 s (no trial lost, no fault) (tests/cluster/tcp_cluster_test.sh). Needs
# root (CI runs as root); skipped (77) without it.
foreach(_case IN ITEMS kill join link)
  add_test(NAME daemon_cluster_tcp_${_case}
    COMMAND ${PROJECT_SOURCE_DIR}/tests/cluster/tcp_cluster_test.sh ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:wstuned>
            ${PROJECT_SOURCE_DIR}/share ${_case})
  set_tests_properties(daemon_cluster_tcp_${_case} PROPERTIES ENVIRONMENT "${_wstuned_env}" TIMEOUT 600
                       RUN_SERIAL TRUE SKIP_RETURN_CODE 77 LABELS cluster)
endforeach()

# Issue 41 (tests/daemon_gpus_test.sh): per-worker timelines, inputs kept on
# the device or sent from the master, chunked overlap, steady shares on
# identical devices, T1 kernel files over three devices.
wstuned_script_tests(daemon_gpus_test.sh daemon_mpi_gpus 600 timeline steady t1)
