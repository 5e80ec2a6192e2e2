#!/usr/bin/env python3
"""wstune's strategy against Kernel Tuner's best at equal budgets, per table.

Reads curves in the CSV columns of bench_strategies and
bench/strategies_kernel_tuner.py (table, configurations, strategy,
evaluations, ..., median, ...) and prints a Markdown table: for each table
and each budget (1 % and 5 % of the configurations, and the run's last
checkpoint, the largest evaluation count in the CSV), wstune's median (optimum / best found) next to the
best median among Kernel Tuner's strategies at that budget, bold where
wstune's is at least Kernel Tuner's best. Give pairs of files as LABEL=OURS.csv,KT.csv
(e.g. "as listed" and "reversed") to put orders side by side.

usage: strategies_compare.py [--strategy auto] LABEL=OURS.csv,KT.csv [LABEL=OURS.csv,KT.csv ...]
"""
import argparse
import collections
import csv
import math


def load(path):
    """(table, evaluations) -> {strategy: median}, and table -> (configurations, last checkpoint)."""
    curves, sizes = collections.defaultdict(dict), {}
    with open(path) as f:
        for row in csv.DictReader(f):
            e = int(row["evaluations"])
            curves[(row["table"], e)][row["strategy"]] = float(row["median"])
            last = sizes.get(row["table"], (0, 0))[1]
            sizes[row["table"]] = (int(row["configurations"]), max(last, e))
    return curves, sizes


def kt_best(curves, key):
    """Kernel Tuner's best strategy at `key` (name without "kt:", median), or None."""
    ran = {s[3:]: m for s, m in curves.get(key, {}).items() if s.startswith("kt:") and not math.isnan(m)}
    if not ran:
        return None
    name = max(ran, key=ran.get)
    return name, ran[name]


def budgets(configurations, last):
    """The budgets of bench_strategies' Markdown tables: 1 % and 5 % of the configurations and the run's
    last checkpoint `last`, in evaluations."""
    return sorted({math.ceil(0.01 * configurations), math.ceil(0.05 * configurations), last})


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pairs", nargs="+", help="LABEL=OURS.csv,KT.csv")
    ap.add_argument("--strategy", default="auto", help="wstune's strategy (default auto)")
    args = ap.parse_args()
    runs = []
    for pair in args.pairs:
        label, _, files = pair.partition("=")
        ours_path, _, kt_path = files.partition(",")
        if not label or not kt_path:
            ap.error(f"{pair}: give LABEL=OURS.csv,KT.csv")
        runs.append((label, load(ours_path), load(kt_path)[0]))
    header = "| table | evaluations |" + "".join(f" wstune {args.strategy}, {l} | Kernel Tuner best, {l} |" for l, _, _ in runs)
    print(header)
    print("|---|---|" + "---|---|" * len(runs))
    behind = collections.Counter()
    tables = sorted(runs[0][1][1])
    for table in tables:
        for e in budgets(*runs[0][1][1][table]):
            line = f"| {table} | {e} |"
            for label, (ours, _), kt in runs:
                mine = ours.get((table, e), {}).get(args.strategy)
                best = kt_best(kt, (table, e))
                if mine is None or best is None:
                    line += " – | – |"
                    continue
                ahead = mine >= best[1] - 1e-9
                behind[label] += not ahead
                line += (f" **{mine:.3f}** |" if ahead else f" {mine:.3f} |") + f" {best[1]:.3f} ({best[0]}) |"
            print(line)
    print()
    print("; ".join(f"{label}: behind in {behind[label]} cells" for label, _, _ in runs))


if __name__ == "__main__":
    main()
