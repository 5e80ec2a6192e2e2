#!/usr/bin/env python3
"""How fast did a showcase run get there? (scripts/bench-showcase.sh's raw JSON)

    python3 bench/showcase_progress.py RUN.json[:TARGET_MS] [...]

Each RUN.json is one `wstune tune --json` of docs/results/showcase_TAG_raw/.
Walking its trials in measurement order, the time of a trial is its wall time
plus its program build time (compile_ms), summed; a trial counts when it is
correct. Prints a Markdown row per run: the first trial at most TARGET_MS
(e.g. clblast_tuner_xgemm's best), the best trial, the best within 1 % of the
space's configurations, and the median program build.
"""
import json
import math
import statistics
import sys


def progress(path, target_ms):
    run = json.load(open(path))
    one_percent = math.ceil(run["space_size"] * 0.01)
    elapsed_s, first, best, best_1pc, builds = 0.0, None, None, None, []
    for i, trial in enumerate(run["trials"], 1):
        elapsed_s += ((trial.get("wall_ms") or 0) + (trial.get("compile_ms") or 0)) / 1000
        if trial.get("compile_ms"):
            builds.append(trial["compile_ms"])
        if trial.get("status") != "correct":
            continue
        ms = trial["median_ms"]
        if first is None and target_ms is not None and ms <= target_ms:
            first = (i, elapsed_s)
        if best is None or ms < best[0]:
            best = (ms, i, elapsed_s)
            if i <= one_percent:
                best_1pc = ms
    return run["size"].split("x")[0], one_percent, first, best, best_1pc, builds


def split_target(arg):
    """RUN.json:TARGET_MS into the path and the target (None without one)."""
    path, colon, target = arg.rpartition(":")
    try:
        return (path, float(target)) if colon else (arg, None)
    except ValueError:
        return arg, None


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    print("| N | first at most the target | best | best within 1 % of the space | median program build |")
    print("|---|---|---|---|---|")
    for arg in sys.argv[1:]:
        path, target_ms = split_target(arg)
        n, one_percent, first, best, best_1pc, builds = progress(path, target_ms)
        first_text = "-" if first is None else f"{target_ms:g} ms: evaluation {first[0]}, {first[1]:.1f} s"
        best_text = "-" if best is None else f"{best[0]:.4f} ms at evaluation {best[1]}, {best[2]:.1f} s"
        best_1pc_text = "-" if best_1pc is None else f"{best_1pc:.4f} ms ({one_percent} evaluations)"
        build_text = "-" if not builds else f"{statistics.median(builds):.0f} ms"
        print(f"| {n} | {first_text} | {best_text} | {best_1pc_text} | {build_text} |")


if __name__ == "__main__":
    main()
