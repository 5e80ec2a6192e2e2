# Sourced by scripts/demo-daemon.sh and scripts/bench-daemon.sh: finds the
# MPI launcher and builds MPMD command lines for wstuned, whichever MPI is
# installed (MPICH's hydra `mpiexec`, or Open MPI's `mpirun`/`mpiexec`).
#   wstuned_launcher          -> sets MPI_LAUNCHER, MPI_FLAVOR (mpich|openmpi|other), MPI_FLAGS
#   wstuned_env NAME VALUE    -> prints the per-rank environment option
wstuned_launcher() {
  MPI_LAUNCHER=${MPIEXEC:-}
  if [ -z "$MPI_LAUNCHER" ]; then
    for c in mpiexec mpirun; do
      if command -v "$c" >/dev/null 2>&1; then MPI_LAUNCHER=$(command -v "$c"); break; fi
    done
  fi
  if [ -z "$MPI_LAUNCHER" ]; then
    echo "no MPI launcher found: install MPICH (apt-get install mpich) or set MPIEXEC" >&2
    return 1
  fi
  local v
  v=$("$MPI_LAUNCHER" --version 2>&1 || true)
  MPI_FLAGS=()
  case "$v" in
    *HYDRA*|*hydra*|*MPICH*) MPI_FLAVOR=mpich ;;
    *"Open MPI"*|*OpenRTE*|*"Open RTE"*|*PRRTE*)
      MPI_FLAVOR=openmpi
      # Open MPI binds each rank to one core when it starts at most two
      # (to a package beyond): a worker's OpenCL runtime, its isolated child
      # and the master's reference and verification would then share one
      # core (the master's matmul 4096 reference took 69 s instead of 4 s).
      MPI_FLAGS=(--oversubscribe --bind-to none)
      [ "$(id -u)" = 0 ] && MPI_FLAGS+=(--allow-run-as-root)
      ;;
    *) MPI_FLAVOR=other ;;
  esac
}

wstuned_env() {
  if [ "$MPI_FLAVOR" = openmpi ]; then printf '%s\n' -x "$1=$2"; else printf '%s\n' -env "$1" "$2"; fi
}
