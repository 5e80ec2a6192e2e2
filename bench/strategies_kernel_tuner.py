#!/usr/bin/env python3
"""Replays recorded tables through Kernel Tuner's own strategies.

Reads DIR/tables.json written by `bench_strategies --export-kt DIR` (each
table as a Kernel Tuner cache file, its checkpoints and seeds), runs
kernel_tuner.tune_kernel(..., simulation_mode=True, cache=FILE,
strategy=S, strategy_options={"max_fevals": BUDGET}) once per strategy and
seed, and writes the best time found after each unique evaluation as a
fraction of the table's optimum (optimum / best) at the checkpoints, in the
CSV columns of bench_strategies (median, quartiles, min, max over seeds).

Kernel Tuner needs a kernel source and a problem size even in simulation
mode (its own tests pass a stand-in source): the kernel is never compiled
or run, and the problem size is the cache's. The restrictions admit exactly
the configurations in the cache, so Kernel Tuner's search space is the
table's. Benchmarks only: Kernel Tuner is no test or build dependency.

Every run is fixed by its seed: Python's and NumPy's global generators are
seeded, and so is SciPy's Latin-hypercube sampler, which Kernel Tuner 1.5.0
builds without a seed (diff_evo's first population through
Searchspace.get_LHS_sample_indices, bayes_opt's initial sample): left
unseeded it draws from fresh entropy, and the same command gave diff_evo a
median of 1.000 in one run and 0.639 in the next on one table.

usage: strategies_kernel_tuner.py DIR OUT.csv [--strategies a,b,...] [--seeds N]
"""
import argparse
import inspect
import json
import math
import random
import signal
import sys
import time
import warnings

import numpy as np

import scipy.stats.qmc

import kernel_tuner
import kernel_tuner.strategies.bayes_opt

# Kernel Tuner's strategies compared by Schoonhoven et al. (IEEE TEVC 2022)
# and Willemsen et al. (PMBS 2021) that run without extra packages.
DEFAULT_STRATEGIES = ["random_sample", "genetic_algorithm", "dual_annealing", "simulated_annealing",
                      "basinhopping", "greedy_ils", "mls", "pso", "diff_evo", "firefly_algorithm", "bayes_opt"]


def py_str(v):
    """Python's str(), as Kernel Tuner builds cache keys."""
    return str(v)


def quantile(sorted_values, q):
    """Hyndman & Fan type 7, as wstune's Samples::quantile and NumPy."""
    return float(np.quantile(np.array(sorted_values), q))


class RunTimeout(BaseException):
    """A Kernel Tuner run past --run-timeout (its greedy_ils looped without end on a table here)."""


def on_alarm(signum, frame):
    raise RunTimeout()


_LATIN_HYPERCUBE = scipy.stats.qmc.LatinHypercube
# The sampler's generator argument: SciPy >= 1.15 names it rng, older ones seed.
_LHS_RNG_ARG = "rng" if "rng" in inspect.signature(_LATIN_HYPERCUBE.__init__).parameters else "seed"


def seed_latin_hypercube(seed):
    """Makes Kernel Tuner's Latin-hypercube samplers draw from a generator seeded by
    the run's seed."""
    rng = np.random.default_rng([seed, 0x4C4853])

    def seeded(*args, **kwargs):
        kwargs.setdefault(_LHS_RNG_ARG, rng)
        return _LATIN_HYPERCUBE(*args, **kwargs)

    scipy.stats.qmc.LatinHypercube = seeded  # searchspace.py imports it at each call
    kernel_tuner.strategies.bayes_opt.LatinHypercube = seeded  # bayes_opt.py at import


def run_once(table, cache, strategy, seed, budget):
    """The best time after each unique evaluation of one Kernel Tuner run."""
    keys = cache["tune_params_keys"]
    tune_params = {k: cache["tune_params"][k] for k in keys}
    valid = set(cache["cache"].keys())
    # Plain functions, not lambdas: Kernel Tuner rewrites a lambda's source
    # into a string constraint, which a closure does not survive.
    def in_table(p):
        return ",".join(py_str(p[k]) for k in keys) in valid

    def value_in_table(v):
        return py_str(v) in valid

    restrictions = in_table if len(keys) > 1 else [value_in_table]
    random.seed(seed)
    np.random.seed(seed)
    seed_latin_hypercube(seed)
    problem = cache["problem_size"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results, _ = kernel_tuner.tune_kernel(
            cache["kernel_name"], "__kernel void stand_in() {}", problem if len(problem) > 1 else problem[0], [],
            tune_params, restrictions=restrictions, strategy=strategy,
            strategy_options={"max_fevals": budget}, cache=table["cache"], simulation_mode=True,
            verbose=False, quiet=True, lang="OpenCL")
    seen, best, best_after = set(), math.inf, []
    for r in results:
        if r is None:
            continue
        key = ",".join(py_str(r[k]) for k in keys)
        if key in seen:
            continue
        seen.add(key)
        t = r.get("time")
        if isinstance(t, (int, float)) and "__error__" not in r and math.isfinite(t):
            best = min(best, float(t))
        best_after.append(best)
    return best_after


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("out")
    ap.add_argument("--strategies", default=",".join(DEFAULT_STRATEGIES))
    ap.add_argument("--seeds", type=int, default=0, help="default: the seeds in tables.json")
    ap.add_argument("--tables", default="", help="comma-separated table names (default: all)")
    ap.add_argument("--caps", default="bayes_opt=120",
                    help="NAME=LIMIT,...: run NAME (* for every other) only up to LIMIT evaluations (a fraction of "
                         "the configurations when at most 1; its later checkpoints are nan): Kernel Tuner's bayes_opt refits a Gaussian "
                         "process over the whole space at every step (25 s per run of 231 evaluations of a "
                         "2,304-configuration table here) and takes hours at 10 %% of a 10,000-configuration table")
    ap.add_argument("--seed-caps", default="",
                    help="NAME=SEEDS,...: run NAME with at most this many seeds")
    ap.add_argument("--run-timeout", type=int, default=120,
                    help="seconds one run may take; a run past it is left out (the seeds column counts the runs kept)")
    args = ap.parse_args()
    with open(f"{args.dir}/tables.json") as f:
        tables = json.load(f)
    only = set(filter(None, args.tables.split(",")))
    with open(args.out, "w") as f:
        f.write("table,configurations,strategy,evaluations,space_fraction,median,q1,q3,min,max,seeds\n")
    signal.signal(signal.SIGALRM, on_alarm)
    for table in tables:
        if only and table["name"] not in only:
            continue
        with open(table["cache"]) as f:
            cache = json.load(f)
        points = table["checkpoints"]
        budget = points[-1]
        seeds = args.seeds or table["seeds"]
        caps = dict(kv.split("=") for kv in filter(None, args.caps.split(",")))
        seed_caps = dict(kv.split("=") for kv in filter(None, args.seed_caps.split(",")))
        for strategy in filter(None, args.strategies.split(",")):
            t0 = time.time()
            at = [[] for _ in points]
            cap = budget
            if strategy in caps or "*" in caps:
                limit = float(caps.get(strategy, caps.get("*")))
                cap = min(budget, math.ceil(limit * table["configurations"]) if limit <= 1 else int(limit))
            n_seeds = min(seeds, int(seed_caps.get(strategy, seeds)))
            kept = 0
            for seed in range(1, n_seeds + 1):
                signal.alarm(args.run_timeout)
                try:
                    best_after = run_once(table, cache, strategy, seed, cap)
                except RunTimeout:
                    print(f"{table['name']} kt:{strategy} seed {seed}: past {args.run_timeout} s, left out", file=sys.stderr)
                    continue
                except Exception as e:  # a strategy that fails is reported, not fatal
                    print(f"{table['name']} kt:{strategy} seed {seed}: {type(e).__name__}: {e}", file=sys.stderr)
                    best_after = []
                finally:
                    signal.alarm(0)
                kept += 1
                best_after += [best_after[-1] if best_after else math.inf] * (cap - len(best_after))
                for k, e in enumerate(points):
                    if e <= cap:
                        at[k].append(table["optimum_ms"] / best_after[e - 1] if best_after[e - 1] > 0 else 0.0)
            rows = []
            for k, e in enumerate(points):
                v = sorted(at[k]) or [math.nan]
                rows.append(f"{table['name']},{table['configurations']},kt:{strategy},{e},{e / table['configurations']:.5f},"
                            f"{quantile(v, 0.5):.5f},{quantile(v, 0.25):.5f},{quantile(v, 0.75):.5f},{v[0]:.5f},{v[-1]:.5f},{kept}")
            with open(args.out, "a") as f:  # each strategy's rows as soon as they are done
                f.write("\n".join(rows) + "\n")
            print(f"{table['name']} kt:{strategy}: {kept} seeds up to {cap} evaluations in {time.time() - t0:.0f} s",
                  file=sys.stderr)
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
