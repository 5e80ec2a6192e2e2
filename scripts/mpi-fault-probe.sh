#!/usr/bin/env bash
# Measures what the MPI launcher does when one rank of a job dies by SIGKILL
# (issue 17; the results are in docs/daemon.md "A whole rank killed").
# A 3-rank probe: rank 2 SIGKILLs itself 1 s after MPI_Init; rank 1 sends
# rank 0 a message every 50 ms; rank 0 (MPI_ERRORS_RETURN on
# MPI_COMM_WORLD) receives for 5 s, sends rank 1 a stop, and finalizes,
# logging each step to a file (its stdout may die with the launcher).
# Modes: default; -disable-auto-cleanup (hydra then notifies the survivors
# with SIGUSR1); the same with SIGUSR1 handled in every rank; the same with
# MPIR_CVAR_ENABLE_FT=1.
# Usage: scripts/mpi-fault-probe.sh [RUNS per mode, default 10]
set -uo pipefail
RUNS=${1:-10}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mpi-fault-probe.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
cat >"$TMP/probe.cpp" <<'CPP'
#include <mpi.h>
#include <fcntl.h>
#include <unistd.h>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
static const char* g_log = nullptr;
static void say(const char* m) {
  int fd = open(g_log, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd >= 0) { (void)!write(fd, m, strlen(m)); close(fd); }
}
static volatile std::sig_atomic_t g_usr1 = 0;
static void on_usr1(int) { g_usr1 = 1; }
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  g_log = argv[1];
  if (argc > 2 && std::strcmp(argv[2], "usr1") == 0) std::signal(SIGUSR1, on_usr1);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  using clk = std::chrono::steady_clock;
  if (rank == 2) { sleep(1); raise(SIGKILL); }
  if (rank == 1) {
    for (int i = 0;; ++i) {
      int v = i, flag = 0;
      if (MPI_Send(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD) != MPI_SUCCESS) break;
      MPI_Status st;
      MPI_Iprobe(0, 99, MPI_COMM_WORLD, &flag, &st);
      if (flag) { MPI_Recv(&v, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE); break; }
      usleep(50000);
    }
  } else {
    say("start\n");
    int after = 0, errors = 0;
    const auto t0 = clk::now();
    while (clk::now() - t0 < std::chrono::seconds(5)) {
      int flag = 0;
      MPI_Status st;
      if (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS) { ++errors; usleep(1000); continue; }
      if (!flag) { usleep(1000); continue; }
      int v;
      MPI_Recv(&v, 1, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (clk::now() - t0 > std::chrono::seconds(2)) ++after;
    }
    char line[128];
    std::snprintf(line, sizeof line, "alive 5 s: %d messages from rank 1 after the kill, %d MPI errors, usr1 %d\n",
                  after, errors, static_cast<int>(g_usr1));
    say(line);
    int v = 0;
    MPI_Send(&v, 1, MPI_INT, 1, 99, MPI_COMM_WORLD);
    say("finalize\n");
    MPI_Finalize();
    say("finalized\n");
    return 0;
  }
  MPI_Finalize();
  return 0;
}
CPP
mpicxx -O1 -o "$TMP/probe" "$TMP/probe.cpp" || exit 1
descendants() {
  local c
  for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do echo "$c"; descendants "$c"; done
}
echo "| mode | runs | launcher exit statuses | master alive 5 s after the kill | master got rank 1's messages after it | master finalized |"
echo "|---|---|---|---|---|---|"
for mode in default no-cleanup no-cleanup+usr1 no-cleanup+usr1+ft; do
  statuses=() alive=0 talked=0 finalized=0
  for i in $(seq 1 "$RUNS"); do
    log=$TMP/$mode.$i.log
    flags=() arg=none envs=()
    [[ $mode == no-cleanup* ]] && flags=(-disable-auto-cleanup)
    [[ $mode == *usr1* ]] && arg=usr1
    [[ $mode == *ft ]] && envs=(MPIR_CVAR_ENABLE_FT=1)
    env "${envs[@]}" mpiexec "${flags[@]}" -n 3 "$TMP/probe" "$log" "$arg" >"$TMP/out" 2>&1 &
    launcher=$!
    seen=()
    for _ in $(seq 1 300); do  # 30 s at most; remember every process of the run
      mapfile -t -O "${#seen[@]}" seen < <(descendants "$launcher")
      kill -0 "$launcher" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$launcher" 2>/dev/null && echo "run $i of $mode: the launcher hung; killed" >&2
    wait "$launcher"
    statuses+=($?)
    for p in $(printf '%s\n' "${seen[@]}" | sort -u); do kill -KILL "$p" 2>/dev/null; done  # a hung rank of this run
    grep -q "^alive" "$log" 2>/dev/null && alive=$((alive + 1))
    grep -qE "^alive 5 s: [1-9]" "$log" 2>/dev/null && talked=$((talked + 1))
    grep -q "^finalized" "$log" 2>/dev/null && finalized=$((finalized + 1))
  done
  counts=$(printf '%s\n' "${statuses[@]}" | sort -n | uniq -c | awk '{printf "%s%s x%s", (NR>1?", ":""), $2, $1}')
  echo "| $mode | $RUNS | $counts | $alive | $talked | $finalized |"
done
