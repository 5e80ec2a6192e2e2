#!/bin/bash
# wstuned over plain mpiexec with a host file (MPICH hydra or Open MPI):
# the master on the first host, one worker per GPU on every host, each
# worker given its GPU by index with --worker-device RANK=PLATFORM:DEVICE
# (docs/cluster.md). Usage: wstuned-hostfile.sh HOSTFILE GPUS_PER_HOST KERNEL_FILE DB
# HOSTFILE: one host per line (MPICH: "host:slots"; Open MPI: "host slots=N").
set -euo pipefail
hostfile=$1 gpus=$2 kernel_file=$3 db=$4
platform=${PLATFORM:-0}            # the GPUs' OpenCL platform index on the workers
hosts=$(grep -cv '^\s*\(#\|$\)' "$hostfile")
flags=()
rank=1
for ((h = 0; h < hosts; h++)); do
  for ((g = 0; g < gpus; g++)); do flags+=(--worker-device "$rank=$platform:$g"); rank=$((rank + 1)); done
done
# Ranks are placed host by host in host-file order: rank 0 (the master) and
# the first host's workers on host 1, so its slots must be GPUS+1. Over TCP
# only (no InfiniBand): MPICH/UCX UCX_TLS=tcp,self; Open MPI --mca btl tcp,self.
exec mpiexec -f "$hostfile" -n "$rank" wstuned tune --kernel-file "$kernel_file" --db "$db" --json --resume "${flags[@]}"
