#!/usr/bin/env python3
"""Do two recordings of one search space agree? (recorded exhaustive tables)

    python3 bench/table_agreement.py A.json[.gz] B.json[.gz] [C ...]

Each file is a wstune export (`wstune export`, bench/tables/*.json.gz) holding
one exhaustive session of the same kernel, problem and device. For every pair
(the first file against each other one, then consecutive ones) it prints, over
the configurations correct in both:
  - each table's median relative IQR of a configuration's samples (noise within
    a trial) and its five fastest configurations (median of samples, ms);
  - where each table's optimum ranks in the other (0 = the other's optimum too)
    and how much slower than the other's optimum it is there;
  - Spearman's rank correlation of the two tables' medians (1: same order).
A space whose optimum moves and whose ranks barely correlate between two
recordings has no reproducible optimum: a strategy's "fraction of the optimum"
on one such table measures luck of that recording (bench/strategies_bench.cpp).
A configuration's key is its tuning parameters and its local size; samples of
a configuration measured more than once in a session (tie-break trials) are
pooled.
"""
import gzip
import json
import statistics
import sys


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    sessions = doc.get("sessions") or []
    if len(sessions) != 1:
        sys.exit(f"{path}: expected one session, found {len(sessions)} (export one exhaustive session)")
    samples, iqr = {}, []
    for t in sessions[0]["trials"]:
        if t.get("status") != "correct" or not t.get("samples_ms"):
            continue
        local = t.get("local") or {}
        key = (tuple(sorted((t.get("params") or {}).items())), tuple(local.get(d) for d in "xyz"[: local.get("dims", 0)]))
        samples.setdefault(key, []).extend(t["samples_ms"])
    for s in samples.values():
        if len(s) > 1:
            q = statistics.quantiles(s, n=4)
            iqr.append((q[2] - q[0]) / statistics.median(s))
    medians = {k: statistics.median(s) for k, s in samples.items()}
    return medians, (statistics.median(iqr) if iqr else float("nan"))


def name(key):
    params = ",".join(f"{k}={v}" for k, v in key[0])
    local = "x".join(str(v) for v in key[1]) or "NULL"
    return f"{params} {local}".strip() if params else local


def ranks(medians, keys):
    order = sorted(keys, key=lambda k: (medians[k], k))
    return {k: i for i, k in enumerate(order)}, order


def compare(pa, a, pb, b):
    (ma, iqr_a), (mb, iqr_b) = a, b
    common = [k for k in ma if k in mb]
    if len(common) < 2:
        sys.exit(f"{pa} and {pb}: fewer than two configurations correct in both (not the same space?)")
    ra, oa = ranks(ma, common)
    rb, ob = ranks(mb, common)
    n = len(common)
    rho = 1 - 6 * sum((ra[k] - rb[k]) ** 2 for k in common) / (n * (n * n - 1))
    print(f"== {pa}  against  {pb}: {n} configurations correct in both")
    for p, m, iqr, order in ((pa, ma, iqr_a, oa), (pb, mb, iqr_b, ob)):
        top = ", ".join(f"{name(k)} {m[k]:.4g}" for k in order[:5])
        print(f"  {p}: median relative IQR {iqr:.3f}; fastest: {top}")
    print(f"  A's optimum {name(oa[0])} in B: rank {rb[oa[0]]}, {mb[oa[0]] / mb[ob[0]]:.3f}x B's optimum")
    print(f"  B's optimum {name(ob[0])} in A: rank {ra[ob[0]]}, {ma[ob[0]] / ma[oa[0]]:.3f}x A's optimum")
    print(f"  Spearman rank correlation {rho:.3f}")


def main(paths):
    if len(paths) < 2:
        sys.exit(__doc__)
    tables = [load(p) for p in paths]
    pairs = [(0, i) for i in range(1, len(paths))] + [(i, i + 1) for i in range(1, len(paths) - 1)]
    for i, j in pairs:
        compare(paths[i], tables[i], paths[j], tables[j])


if __name__ == "__main__":
    main(sys.argv[1:])
