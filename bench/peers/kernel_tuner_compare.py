#!/usr/bin/env python3
"""Tune wstune's four OpenCL kernels with Kernel Tuner (peer comparison, issue 7).

For each kernel this script tunes the local work size over the SAME search
space wstune uses (lib/include/wstune/search_space.hpp): every (x) or (x, y)
with x | global_x, y | global_y, x <= max work-item size[0], y <= max
work-item size[1] and x*y <= min(CL_DEVICE_MAX_WORK_GROUP_SIZE,
CL_KERNEL_WORK_GROUP_SIZE). It runs the real kernels/*.cl sources with the
argument conventions of the host descriptors in kernels/*.cpp (whole problem,
one block: x0 = y0 = 0, a_row0 = 0, in_row0 = 0, i0 = 0) and verifies every
configuration against a NumPy reference.

sort: wstune times the whole bitonic sort (log2(P)(log2(P)+1)/2 launches of
bitonic_step with the same NDRange P/2 and the same local size). Kernel
Tuner tunes one kernel launch, so here it tunes ONE representative step,
j = 1, k = P (the last step; j = 1 is the most frequent stride in the
network). Its time is one launch, not the sort; the driver
(scripts/bench-peers.sh) re-times both tools' answers with `wstune run` over
the whole sort so the configurations are compared on one yardstick.

Each strategy (brute_force and a smarter one, greedy_ils by default) records
the best configuration, its median time (ms, of Kernel Tuner's `times`), the
number of configurations evaluated and the wall time of the tune_kernel()
call. Output: <out>/kernel_tuner.csv and <out>/kernel_tuner.json.

Usage:
  python3 bench/peers/kernel_tuner_compare.py --platform 0 --device 0 \
      --size matmul=128 --size bilinear=128 --size sort=4096 --size trapezoid=4096 \
      --out docs/results/peers_raw
"""

import argparse
import csv
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import pyopencl as cl
from kernel_tuner import tune_kernel

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KERNEL_NAMES = ["matmul", "bilinear", "sort", "trapezoid"]
# Sizes of a quick run on PoCL (each tune takes seconds).
DEFAULT_SIZES = {"matmul": "128", "bilinear": "128", "sort": "4096", "trapezoid": "4096"}
TRAPEZOID_DEFAULT_STEPS = 128  # lib/src/kernel/builtin/trapezoid.cpp default_steps


def divisors(n):
    """All divisors of n, ascending (search_space.hpp divisors())."""
    small, large = [], []
    d = 1
    while d * d <= n:
        if n % d == 0:
            small.append(d)
            if d != n // d:
                large.append(n // d)
        d += 1
    return small + large[::-1]


def read_source(kernel):
    path = os.path.join(ROOT, "kernels", ("sort" if kernel == "sort" else kernel) + ".cl")
    with open(path, encoding="utf-8") as f:
        return f.read()


def parse_size(kernel, text):
    """Same parsing as kernels/*.cpp parse_size() for the forms used here."""
    if kernel == "matmul":
        v = [int(x) for x in text.split("x")]
        if len(v) == 1:
            v = v * 3
        return v  # M, N, K
    if kernel == "bilinear":
        if ":" in text:
            a, b = text.split(":")
            v = [int(x) for x in a.split("x")] + [int(x) for x in b.split("x")]
        else:
            out = int(text)
            inp = max(1, (out + 1) // 2)
            v = [inp, inp, out, out]
        return v  # in_w, in_h, out_w, out_h
    if kernel == "sort":
        return [int(text)]
    if kernel == "trapezoid":
        v = [int(x) for x in text.split(":")]
        if len(v) == 1:
            v.append(TRAPEZOID_DEFAULT_STEPS)
        return v  # intervals (work-items), steps per work-item
    raise ValueError(kernel)


def padded(m):
    return max(2, 1 << (m - 1).bit_length())


def problem(kernel, n, rng):
    """Returns (entry point, global size, arguments, answer, atol, note)."""
    u32 = np.uint32
    if kernel == "matmul":
        M, N, K = n
        A = rng.uniform(-1, 1, size=(M, K)).astype(np.float32)
        B = rng.uniform(-1, 1, size=(K, N)).astype(np.float32)
        C = np.zeros(M * N, dtype=np.float32)
        ref = (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float32).ravel()
        args = [A.ravel(), B.ravel(), C, u32(N), u32(K), u32(0), u32(0), u32(0)]
        # lib/src/kernel/builtin/matmul.cpp verify(): K * 2^-20
        return "matmul", (N, M), args, [None, None, ref] + [None] * 5, K * 2.0 ** -20, "C = A*B"
    if kernel == "bilinear":
        iw, ih, ow, oh = n
        img = rng.uniform(0, 1, size=(ih, iw)).astype(np.float32)
        out = np.zeros(ow * oh, dtype=np.float32)
        ox = np.arange(ow, dtype=np.float32)
        oy = np.arange(oh, dtype=np.float32)
        sx = np.clip((ox + np.float32(0.5)) * np.float32(iw / ow) - np.float32(0.5), 0, iw - 1)
        sy = np.clip((oy + np.float32(0.5)) * np.float32(ih / oh) - np.float32(0.5), 0, ih - 1)
        ix = sx.astype(np.int64)
        iy = sy.astype(np.int64)
        ix1 = np.minimum(ix + 1, iw - 1)
        iy1 = np.minimum(iy + 1, ih - 1)
        fx = (sx - ix)[None, :]
        fy = (sy - iy)[:, None]
        top = img[iy][:, ix] + (img[iy][:, ix1] - img[iy][:, ix]) * fx
        bot = img[iy1][:, ix] + (img[iy1][:, ix1] - img[iy1][:, ix]) * fx
        ref = (top + (bot - top) * fy).astype(np.float32).ravel()
        args = [img.ravel(), out, u32(iw), u32(ih), u32(ow), u32(oh), u32(0), u32(0), u32(0), u32(ih)]
        return "bilinear", (ow, oh), args, [None, ref] + [None] * 8, 1e-4, "bilinear scale"
    if kernel == "sort":
        (m,) = n
        P = padded(m)
        a = np.full(P, np.inf, dtype=np.float32)
        a[:m] = rng.uniform(-1, 1, size=m).astype(np.float32)
        j, k = 1, P
        # One compare-exchange step, as in kernels/sort.cl; applying it again
        # changes nothing, so repeated timing runs keep the answer.
        i = np.arange(P // 2)
        lo = ((i & ~(j - 1)) << 1) | (i & (j - 1))
        hi = lo + j
        x, y = a[lo], a[hi]
        asc = (lo & k) == 0
        swap = (x > y) == asc
        ref = a.copy()
        ref[lo[swap]] = y[swap]
        ref[hi[swap]] = x[swap]
        args = [a, u32(j), u32(k)]
        L = int(math.log2(P))
        note = f"one bitonic step (j=1, k={P}) of the sort's {L * (L + 1) // 2} launches"
        return "bitonic_step", (P // 2,), args, [ref, None, None], 0.0, note
    if kernel == "trapezoid":
        N, S = n
        part = np.zeros(N, dtype=np.float32)
        h = 1.0 / (N * S)
        g = np.arange(N, dtype=np.float64)
        f = lambda x: 4.0 / (1.0 + x * x)  # noqa: E731
        a0 = g * S * h
        acc = 0.5 * (f(a0) + f(a0 + S * h))
        for s in range(1, S):
            acc += f(a0 + s * h)
        ref = (acc * h).astype(np.float32)
        args = [part, u32(N), u32(S), u32(0)]
        # float32 accumulation of S terms of ~4h each: relative 1e-4 of a partial
        return "trapezoid", (N,), args, [ref, None, None, None], 1e-4 * float(ref.max()), "partials"
    raise ValueError(kernel)


def device_limits(platform, device, entry, source):
    plat = cl.get_platforms()[platform]
    dev = plat.get_devices()[device]
    ctx = cl.Context([dev])
    prg = cl.Program(ctx, source).build()
    kern = getattr(prg, entry)
    kwg = kern.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, dev)
    return {
        "device": dev.name.strip(),
        "platform": plat.name.strip(),
        "max_work_group_size": dev.max_work_group_size,
        "kernel_work_group_size": kwg,
        "max_work_item_sizes": list(dev.max_work_item_sizes),
        "max_items": min(dev.max_work_group_size, kwg),
    }


def search_space(global_size, lim):
    """The space of search_space.hpp enumerate_local_sizes()."""
    mis = lim["max_work_item_sizes"]
    xs = [d for d in divisors(global_size[0]) if d <= mis[0]]
    ys = [d for d in divisors(global_size[1]) if d <= mis[1]] if len(global_size) > 1 else [1]
    return xs, ys, [(x, y) for y in ys for x in xs if x * y <= lim["max_items"]]


def ok_time(r):
    t = r.get("time")
    return isinstance(t, (int, float)) and math.isfinite(t)


def run_one(kernel, size_text, strategy, args_ns, rng_seed):
    source = read_source(kernel)
    n = parse_size(kernel, size_text)
    rng = np.random.default_rng(rng_seed)
    entry, gsize, args, answer, atol, note = problem(kernel, n, rng)
    lim = device_limits(args_ns.platform, args_ns.device, entry, source)
    xs, ys, space = search_space(gsize, lim)
    tune_params = {"block_size_x": xs}
    if len(gsize) > 1:
        tune_params["block_size_y"] = ys
    restrictions = [f"block_size_x*block_size_y<={lim['max_items']}"] if len(gsize) > 1 else \
        [f"block_size_x<={lim['max_items']}"]
    strategy_options = None
    if strategy != "brute_force":
        fevals = max(args_ns.min_fevals, math.ceil(args_ns.fevals_fraction * len(space)))
        strategy_options = {"max_fevals": min(fevals, len(space))}
        if strategy == "random_sample":
            strategy_options["fraction"] = min(1.0, fevals / len(space))
    problem_size = gsize if len(gsize) > 1 else gsize[0]
    t0 = time.perf_counter()
    results, env = tune_kernel(
        entry, source, problem_size, args, tune_params,
        grid_div_x=["block_size_x"], grid_div_y=["block_size_y"] if len(gsize) > 1 else None,
        restrictions=restrictions, answer=answer, atol=max(atol, 1e-7),
        lang="OpenCL", platform=args_ns.platform, device=args_ns.device,
        iterations=args_ns.iterations, strategy=strategy, strategy_options=strategy_options,
        quiet=True, verbose=False, seed=args_ns.seed)
    wall_s = time.perf_counter() - t0
    valid = [r for r in results if ok_time(r)]
    evaluated = {(r["block_size_x"], r.get("block_size_y", 1)) for r in results}
    best = None
    for r in valid:
        med = float(np.median(r["times"])) if r.get("times") else float(r["time"])
        if best is None or med < best[1]:
            best = (r, med)
    row = {
        "tool": "kernel_tuner",
        "strategy": strategy,
        "kernel": kernel,
        "size": size_text,
        "entry_point": entry,
        "global": "x".join(str(g) for g in gsize),
        "device": lim["device"],
        "space_size": len(space),
        "evaluations": len(evaluated),
        "failed": len(results) - len(valid),
        "best_local": (f"{best[0]['block_size_x']},{best[0].get('block_size_y', 1)}" if len(gsize) > 1
                       else f"{best[0]['block_size_x']}") if best else "",
        "best_ms": round(best[1], 6) if best else "",
        "tune_wall_s": round(wall_s, 3),
        "compile_s": round(env.get("total_compile_time", 0.0) / 1000.0, 3),  # Kernel Tuner keeps ms
        "iterations": args_ns.iterations,
        "note": note,
    }
    return row, {"limits": lim, "results": [
        {k: (v if not isinstance(v, (np.floating, np.integer)) else v.item())
         for k, v in r.items() if k in ("block_size_x", "block_size_y", "time", "times")}
        if ok_time(r) else {"block_size_x": r.get("block_size_x"), "block_size_y": r.get("block_size_y", 1),
                            "error": str(r.get("time"))}
        for r in results]}


def run_isolated(kernel, size_text, strategy, a):
    """Runs one tune in a child process with empty compiler caches, so that no
    tune reuses another's compiled kernels (PoCL keeps them in POCL_CACHE_DIR,
    PyOpenCL in its own cache, the NVIDIA driver in ~/.nv/ComputeCache)."""
    with tempfile.TemporaryDirectory(prefix="wstune-kt-") as tmp:
        env = dict(os.environ, POCL_CACHE_DIR=os.path.join(tmp, "pocl"), PYOPENCL_NO_CACHE="1",
                   CUDA_CACHE_DISABLE="1")
        out = os.path.join(tmp, "one.json")
        cmd = [sys.executable, os.path.abspath(__file__), "--platform", str(a.platform), "--device", str(a.device),
               "--kernels", kernel, "--size", f"{kernel}={size_text}", "--strategies", strategy,
               "--fevals-fraction", str(a.fevals_fraction), "--min-fevals", str(a.min_fevals),
               "--iterations", str(a.iterations), "--seed", str(a.seed), "--one-json", out]
        t0 = time.perf_counter()
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        process_wall_s = time.perf_counter() - t0
        if p.returncode != 0:
            raise RuntimeError(f"exit {p.returncode}: {p.stderr.strip().splitlines()[-1:] or ''}")
        with open(out, encoding="utf-8") as f:
            got = json.load(f)
        got["row"]["process_wall_s"] = round(process_wall_s, 3)  # with Python start-up and imports
        return got["row"], got["detail"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--platform", type=int, default=0, help="OpenCL platform index")
    ap.add_argument("--device", type=int, default=0, help="OpenCL device index within the platform")
    ap.add_argument("--kernels", default=",".join(KERNEL_NAMES), help="comma-separated kernels")
    ap.add_argument("--size", action="append", default=[], metavar="KERNEL=SIZE",
                    help="problem size per kernel, wstune syntax (default: %s)" % DEFAULT_SIZES)
    ap.add_argument("--strategies", default="brute_force,greedy_ils",
                    help="Kernel Tuner strategies (comma-separated)")
    ap.add_argument("--fevals-fraction", type=float, default=0.2,
                    help="budget of the non-brute-force strategies as a fraction of the space")
    ap.add_argument("--min-fevals", type=int, default=8, help="lower bound of that budget")
    ap.add_argument("--iterations", type=int, default=7, help="timed runs per configuration (Kernel Tuner)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--shared-cache", action="store_true",
                    help="run every tune in this process, sharing the OpenCL compiler caches (faster, "
                         "but later tunes reuse earlier compilations; default: each tune in a fresh "
                         "process with empty PoCL/PyOpenCL/NVIDIA caches)")
    ap.add_argument("--one-json", help=argparse.SUPPRESS)  # internal: run one tune, write its JSON here
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "results", "peers_raw"),
                    help="output directory for kernel_tuner.csv / .json")
    a = ap.parse_args()
    sizes = dict(DEFAULT_SIZES)
    for s in a.size:
        k, _, v = s.partition("=")
        if k not in KERNEL_NAMES or not v:
            ap.error(f"--size {s}: write KERNEL=SIZE with KERNEL one of {', '.join(KERNEL_NAMES)}")
        sizes[k] = v
    kernels = [k for k in a.kernels.split(",") if k]
    for k in kernels:
        if k not in KERNEL_NAMES:
            ap.error(f"--kernels: unknown kernel '{k}' (one of {', '.join(KERNEL_NAMES)})")
    strategies = [x for x in a.strategies.split(",") if x]
    if a.one_json:  # child of an isolated run: one kernel, one strategy
        row, det = run_one(kernels[0], sizes[kernels[0]], strategies[0], a, a.seed)
        with open(a.one_json, "w", encoding="utf-8") as f:
            json.dump({"row": row, "detail": det}, f, default=str)
        return 0
    os.makedirs(a.out, exist_ok=True)
    rows, detail = [], []
    for k in kernels:
        for s in strategies:
            print(f"kernel_tuner: {k} {sizes[k]} {s} ...", file=sys.stderr, flush=True)
            try:
                row, det = run_one(k, sizes[k], s, a, a.seed) if a.shared_cache else run_isolated(k, sizes[k], s, a)
            except Exception as e:  # record the failure as data, keep going
                row = {"tool": "kernel_tuner", "strategy": s, "kernel": k, "size": sizes[k],
                       "note": f"failed: {type(e).__name__}: {e}"}
                det = {}
            print(f"  -> {row.get('best_local')} {row.get('best_ms')} ms, {row.get('evaluations')} evals, "
                  f"{row.get('tune_wall_s')} s {row.get('note', '')}", file=sys.stderr, flush=True)
            rows.append(row)
            detail.append({**row, **det})
    fields = ["tool", "strategy", "kernel", "size", "entry_point", "global", "device", "space_size",
              "evaluations", "failed", "best_local", "best_ms", "tune_wall_s", "process_wall_s", "compile_s", "iterations", "note"]
    with open(os.path.join(a.out, "kernel_tuner.csv"), "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)
    import kernel_tuner
    with open(os.path.join(a.out, "kernel_tuner.json"), "w", encoding="utf-8") as f:
        json.dump({"kernel_tuner_version": getattr(kernel_tuner, "__version__", "?"),
                   "platform": a.platform, "device": a.device, "runs": detail}, f, indent=1, default=str)
    return 0 if all(r.get("best_local") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
