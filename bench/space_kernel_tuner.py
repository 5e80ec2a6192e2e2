#!/usr/bin/env python3
"""Kernel Tuner's search-space construction on one space of bench/spaces/spaces.json.

Builds kernel_tuner.searchspace.Searchspace(tune_params, restrictions,
max_threads) with the space's parameters (in order) and its conditions as
restriction strings, Kernel Tuner's defaults otherwise (framework
PythonConstraint, solver PC_OptimizedBacktrackingSolver: python-constraint2
parses each string into its own constraints). block_size_names=[] keeps
Kernel Tuner from adding its thread-count constraint on parameters named
block_size_x/y/z, so both tools solve the same problem. Prints one JSON
line: the valid configurations, the construction's wall time (the best of
--repeat, and each), its CPU time (time.process_time(), the best), the
process's peak resident memory (VmHWM) and its
resident memory before construction (VmRSS after the imports), and an
FNV-1a digest of the configurations in odometer order (bench_space's: each
row's value indices, then a separator) so that the two tools' spaces are
compared configuration for configuration.

usage: space_kernel_tuner.py SPACES.json NAME [--repeat N] [--max-seconds S] [--no-digest]
(--max-seconds: no further repeat once the builds so far took S seconds.)
Benchmarks only: Kernel Tuner is no test or build dependency.
"""
import argparse
import json
import time

import kernel_tuner
from kernel_tuner.searchspace import Searchspace


def status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def fnv1a(rows):
    """FNV-1a 64 over each row's value indices, then 0xffffffff (bench_space's digest)."""
    prime, mask = 1099511628211, (1 << 64) - 1
    h = 1469598103934665603
    for r in rows:
        for v in r:
            h = ((h ^ v) * prime) & mask
        h = ((h ^ 0xFFFFFFFF) * prime) & mask
    return h


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("spaces")
    ap.add_argument("name")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--max-seconds", type=float, default=float("inf"))
    ap.add_argument("--no-digest", action="store_true")
    a = ap.parse_args()
    doc = json.load(open(a.spaces))
    space = next(s for s in doc["spaces"] if s["name"] == a.name)
    tune_params = {name: values for name, values in space["parameters"]}
    restrictions = list(space["conditions"])
    rss_before = status_kib("VmRSS")
    times, cpus = [], []
    ss = None
    for _ in range(a.repeat):
        ss = None
        t0, c0 = time.perf_counter(), time.process_time()
        ss = Searchspace(tune_params, restrictions, 1024, block_size_names=[])
        times.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        if sum(times) > a.max_seconds:
            break
    out = {
        "tool": "kernel_tuner " + kernel_tuner.__version__ if hasattr(kernel_tuner, "__version__") else "kernel_tuner",
        "space": a.name,
        "valid": ss.size,
        "seconds": min(times),
        "all_seconds": times,
        "cpu_seconds": min(cpus),
        "all_cpu_seconds": cpus,
        "peak_rss_kib": status_kib("VmHWM"),
        "rss_before_kib": rss_before,
    }
    if not a.no_digest and ss.size <= 2_000_000:
        names = list(tune_params)
        index = [{v: i for i, v in enumerate(tune_params[n])} for n in names]
        rows = sorted(tuple(index[k][c[k]] for k in range(len(names))) for c in ss.list)
        out["digest"] = "%016x" % fnv1a(rows)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
