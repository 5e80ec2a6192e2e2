#!/usr/bin/env bash
# Makes several "hosts" on one machine for wstuned's cluster tests (issue 40):
# each host is a network namespace with its own UTS host name, IPC namespace
# and /dev/shm, joined to the others by a veth pair into a bridge that lives
# in a namespace of its own (the "switch"). Nothing is created in the
# machine's own namespace: no interface, address or route of the machine is
# touched. Needs root (ip netns, unshare).
#   netns-hosts.sh up NAME N          hosts NAME-h0..NAME-h<N-1>, switch NAME-sw;
#                                     host i has 10.231.0.<i+1>/24 on eth0
#   netns-hosts.sh down NAME          removes every namespace NAME-* (and with
#                                     them their veths); idempotent
#   netns-hosts.sh exec HOST CMD...   runs CMD on HOST (its namespaces, its host name)
#   netns-hosts.sh -x HOST CMDLINE    hydra's launcher (mpiexec -launcher ssh
#                                     -launcher-exec netns-hosts.sh): like
#                                     `ssh -x HOST CMDLINE`, the command line one
#                                     shell string
#   netns-hosts.sh link NAME I down|up   takes host I's link to the switch down or up
#   netns-hosts.sh addr I             host I's address
#   netns-hosts.sh kill HOST          SIGKILLs every process on HOST
set -euo pipefail
self=$(readlink -f "$0")
addr() { echo "10.231.0.$(($1 + 1))"; }

up() {
  local name=$1 n=$2 sw=$1-sw i h
  ip netns add "$sw"
  ip -n "$sw" link add br0 type bridge
  ip -n "$sw" link set br0 up
  ip -n "$sw" link set lo up
  for ((i = 0; i < n; i++)); do
    h=$name-h$i
    ip netns add "$h"
    # Both ends are made in the switch's namespace; one moves to the host.
    ip -n "$sw" link add "p$i" type veth peer name eth0 netns "$h"
    ip -n "$sw" link set "p$i" master br0 up
    ip -n "$h" addr add "$(addr "$i")/24" dev eth0
    ip -n "$h" link set eth0 up
    ip -n "$h" link set lo up
  done
}

down() {
  local ns
  for ns in $(ip netns list | awk '{print $1}'); do
    case $ns in "$1"-*) kill_host "$ns"; ip netns delete "$ns" 2>/dev/null || true ;; esac
  done
}

kill_host() {
  local p
  for p in $(ip netns pids "$1" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
}

# CMD on HOST: its network namespace (ip netns exec, which also gives it a
# mount namespace), a UTS namespace named after it, and an IPC namespace
# with a /dev/shm of its own, so no shared memory crosses hosts.
on_host() {
  local host=$1
  shift
  exec ip netns exec "$host" unshare --uts --ipc --mount --propagation private \
    sh -c 'hostname "$0" && mount -t tmpfs -o mode=1777 tmpfs /dev/shm && exec "$@"' "$host" "$@"
}

case ${1:-} in
  up) up "$2" "$3" ;;
  down) down "$2" ;;
  exec) shift; on_host "$@" ;;
  -*)
    while [ "${1:-}" != "${1#-}" ]; do shift; done  # ssh's options (-x)
    host=$1
    shift
    on_host "$host" sh -c "$*"
    ;;
  link) ip -n "$2-sw" link set "p$3" "$4" ;;
  addr) addr "$2" ;;
  kill) kill_host "$2" ;;
  *) echo "usage: $self up|down|exec|-x|link|addr|kill ..." >&2; exit 2 ;;
esac
