#!/usr/bin/env python3
"""Kernel Tuner's own verdict on the conformance corpus (issue 36).

For each T1 file of tests/conformance this asks Kernel Tuner's reader,
kernel_tuner.tune_kernel_T1, in a subprocess of its own:

  as written  tune_kernel_T1(FILE): the file alone, as `kernel_tuner FILE`
              runs it (its Device and Search fields, no overrides). It either
              fails while reading (the exception) or starts tuning ("runs";
              stopped after --written-timeout seconds, nothing measured is
              kept);
  read        tune_kernel_T1(FILE, device=D, strategy=S) with Kernel Tuner's
              tune_kernel replaced by a recorder: every conversion the reader
              does (Values, Conditions, arguments, sizes, grid divisors,
              budget) without a kernel run, and the space Kernel Tuner builds
              from it (its searchspace size on the device);
  run         the same with the real tune_kernel on the OpenCL device
              (random_sample, --evals configurations, 1 iteration): how many
              configurations it measured and how many of those were valid.
              Skipped (--skip-run) for files whose one run takes minutes.
              Kernel Tuner 1.5.0's reader passes an empty cmem_args, which its
              PyOpenCL backend refuses ("does not support constant memory")
              for every OpenCL file: --drop-empty-cmem runs with that empty
              argument left out (the reader's only change).

Prints a Markdown table and writes --out as JSON. Usage (a venv with
kernel_tuner and pyopencl):
  python3 bench/peers/kt_t1_verdicts.py --corpus tests/conformance --device 0 \\
      --skip-run kernel_tuner/matmul.json --skip-run kernel_tuner/reduction.json \\
      --out /tmp/kt_verdicts.json
"""

import argparse
import json
import multiprocessing as mp
import os
import sys
import time
import traceback
from pathlib import Path

FILES = [
    "ktt/CoulombSum2dScript.json",
    "ktt/CoulombSum3d.json",
    "ktt/CoulombSum3dFullSearch.json",
    "ktt/NbodyScript.json",
    "ktt/ClTuneGemm.json",
    "ktt/KernelTuningScript.json",
    "kernel_tuner/test_T1_input.json",
    "kernel_tuner/test_cache_file_T1_input.json",
    "kernel_tuner/vector_add.json",
    "kernel_tuner/reduction.json",
    "kernel_tuner/stencil.json",
    "kernel_tuner/matmul.json",
    "kernel_tuner/convolution.json",
]


def short(e):
    text = f"{type(e).__name__}: {e}".replace("\n", " ")
    return text[:240]


def as_written(path, q):
    os.chdir(os.path.dirname(path))
    try:
        import kernel_tuner
        kernel_tuner.tune_kernel_T1(Path(path), iterations=1)
        q.put(("runs", "finished"))
    except BaseException as e:  # noqa: BLE001 - the verdict is the exception
        q.put(("fails", short(e)))


def read_only(path, device, strategy, max_threads, q):
    os.chdir(os.path.dirname(path))
    try:
        import kernel_tuner.interface as ki
        from kernel_tuner.searchspace import Searchspace
        from kernel_tuner.util import default_block_size_names
        seen = {}

        def recorder(kernel_name, kernel_source, problem_size, arguments, tune_params, **kw):
            seen.update(kernel_name=kernel_name, problem_size=problem_size, params=list(tune_params),
                        restrictions=kw.get("restrictions"), grid_div_x=kw.get("grid_div_x"),
                        grid_div_y=kw.get("grid_div_y"), strategy_options=kw.get("strategy_options"))
            try:  # the space Kernel Tuner would search, block sizes within max_threads
                space = Searchspace(tune_params, kw.get("restrictions") or [], max_threads,
                                    block_size_names=default_block_size_names)
                seen["space"] = space.size
            except BaseException as e:  # noqa: BLE001
                seen["space"] = short(e)
            return [], {}

        ki.tune_kernel = recorder
        ki.tune_kernel_T1(Path(path), device=device, strategy=strategy, strategy_options={"max_fevals": 1},
                          iterations=1)
        q.put(("reads", seen))
    except BaseException as e:  # noqa: BLE001
        q.put(("fails", short(e)))


def run(path, device, evals, drop_empty_cmem, q):
    os.chdir(os.path.dirname(path))
    try:
        import kernel_tuner
        import kernel_tuner.interface as ki
        if drop_empty_cmem:
            tune_kernel = ki.tune_kernel

            def without_empty_cmem(*args, **kw):
                if not kw.get("cmem_args"):
                    kw.pop("cmem_args", None)
                return tune_kernel(*args, **kw)

            ki.tune_kernel = without_empty_cmem
        t0 = time.time()
        results, _ = ki.tune_kernel_T1(Path(path), device=device, strategy="random_sample",
                                       strategy_options={"max_fevals": evals}, iterations=1, output_T4=False)
        valid = sum(1 for r in results if isinstance(r.get("time"), (int, float)))
        q.put(("runs", {"measured": len(results), "valid": valid, "seconds": round(time.time() - t0, 1)}))
    except BaseException as e:  # noqa: BLE001
        q.put(("fails", short(e) + " | " + traceback.format_exc().strip().splitlines()[-3][:160]))


def in_subprocess(target, args, timeout):
    q = mp.Queue()
    p = mp.Process(target=target, args=(*args, q))
    p.start()
    p.join(timeout)
    if p.is_alive():
        p.terminate()
        p.join()
        return ("runs", f"still tuning after {timeout} s (stopped)")
    return q.get() if not q.empty() else ("fails", f"exit status {p.exitcode}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default="tests/conformance")
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--evals", type=int, default=3)
    ap.add_argument("--max-threads", type=int, default=4096, help="the device's max work-group size (PoCL here: 4096)")
    ap.add_argument("--written-timeout", type=float, default=60)
    ap.add_argument("--run-timeout", type=float, default=900)
    ap.add_argument("--skip-run", action="append", default=[])
    ap.add_argument("--drop-empty-cmem", action="store_true")
    ap.add_argument("--out")
    a = ap.parse_args()
    rows = []
    for f in FILES:
        path = os.path.abspath(os.path.join(a.corpus, f))
        row = {"file": f, "as_written": in_subprocess(as_written, (path,), a.written_timeout)}
        row["read"] = in_subprocess(read_only, (path, a.device, "random_sample", a.max_threads), 600)
        if row["read"][0] == "reads" and f not in a.skip_run:
            row["run"] = in_subprocess(run, (path, a.device, a.evals, a.drop_empty_cmem), a.run_timeout)
        else:
            row["run"] = ("skipped", "reading failed" if row["read"][0] != "reads" else "one run takes minutes here")
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    print("| file | as written | read (device and strategy passed) | space | run |")
    print("|---|---|---|---|---|")
    for r in rows:
        read = r["read"]
        space = read[1].get("space", "") if read[0] == "reads" else ""
        run_ = r["run"][1] if isinstance(r["run"][1], str) else json.dumps(r["run"][1])
        print(f"| {r['file']} | {r['as_written'][0]}: {r['as_written'][1]} | "
              f"{read[0] if read[0] == 'reads' else 'fails: ' + read[1]} | {space} | {r['run'][0]}: {run_} |")
    if a.out:
        with open(a.out, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
