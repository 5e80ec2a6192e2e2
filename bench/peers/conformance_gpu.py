#!/usr/bin/env python3
"""Kernel Tuner's side of scripts/bench-conformance-gpu.sh (issue 36).

  kt      tunes one T1 file with Kernel Tuner's own reader, tune_kernel_T1,
          on pyopencl platform --platform, device --device (tune_kernel_T1
          has no platform argument and pyopencl lists PoCL's CPU first on the
          GPU machine: the platform is passed to the tune_kernel it calls).
          Kernel Tuner 1.5.0's reader passes an empty cmem_args, which its
          PyOpenCL backend refuses for every OpenCL file ("does not support
          constant memory"): the empty argument is left out, nothing else is
          changed. Writes the best configuration, its time, the space size,
          the valid count and the wall time of the call as JSON.
  diag    what bounds a local size on the device: CL_KERNEL_WORK_GROUP_SIZE
          of Kernel Tuner's vector_add kernel built as Kernel Tuner builds it
          (#define lines, no options) and as wstune builds it (-cl-std=CL1.2,
          the values as #define lines or, before issue 36, as -D options), at
          block_size_x 128 and 320, and whether a 320-item group launches.
  report  one table from the raw outputs: space sizes, both bests, their own
          times and their re-timing with `wstune run` (one yardstick), the
          tuning wall times.
"""

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path


def kt(a):
    import kernel_tuner.interface as ki
    tune_kernel = ki.tune_kernel
    seen = {}

    def on_platform(*args, **kw):
        if not kw.get("cmem_args"):
            kw.pop("cmem_args", None)
        kw["platform"] = a.platform
        seen.update(tune_params=args[4], restrictions=kw.get("restrictions") or [])
        return tune_kernel(*args, **kw)

    ki.tune_kernel = on_platform
    path = Path(a.file).resolve()
    a.out = str(Path(a.out).resolve())
    if a.reduction_n:  # dry run only: the reduction's 800,000,000 floats are too many for a CPU
        d = json.loads(path.read_text())
        for arg in d["KernelSpecification"]["Arguments"]:
            if arg["Name"] == "array":
                arg["Size"] = a.reduction_n
            if arg["Name"] == "n":
                arg["FillValue"] = a.reduction_n
        path = Path(a.out).with_suffix(".t1.json")
        path.write_text(json.dumps(d))
        (path.parent / "reduction.cl").write_text((Path(a.file).parent / "reduction.cl").read_text())
    options = {"max_fevals": a.max_fevals} if a.max_fevals else {}
    os.chdir(path.parent)
    t0 = time.time()
    results, env = ki.tune_kernel_T1(path, device=a.device, strategy=a.strategy, strategy_options=options,
                                     output_T4=False)
    wall = time.time() - t0
    params = [p["Name"] for p in json.loads(path.read_text())["ConfigurationSpace"]["TuningParameters"]]
    valid = [r for r in results if isinstance(r.get("time"), (int, float))]
    # Kernel Tuner's space: its searchspace with the device's max work-group size as the thread limit.
    space = None
    try:
        import pyopencl as cl
        from kernel_tuner.searchspace import Searchspace
        dev = cl.get_platforms()[a.platform].get_devices()[a.device]
        space = Searchspace(seen["tune_params"], seen["restrictions"], dev.max_work_group_size).size
    except Exception as e:  # noqa: BLE001
        space = f"unknown ({e})"
    best = min(valid, key=lambda r: r["time"]) if valid else None
    out = {
        "tool": "kernel_tuner",
        "device": env.get("device_name"),
        "space": space,
        "evaluations": len(results),
        "valid": len(valid),
        "best": {p: best[p] for p in params} if best else None,
        "best_ms": best["time"] if best else None,
        "wall_s": round(wall, 3),
        "strategy": a.strategy,
    }
    Path(a.out).write_text(json.dumps(out, indent=1, default=str))
    print(json.dumps(out, default=str))


def diag(a):
    import numpy as np
    import pyopencl as cl
    src = open(a.kernel).read()
    dev = cl.get_platforms()[a.platform].get_devices()[a.device]
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    n = 10_000_000
    bufs = [cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * n) for _ in range(3)]
    rows = []
    for bs in (128, 320):
        for how, text, opts in (
                ("Kernel Tuner (#define, no options)", f"#define block_size_x {bs}\n" + src, ""),
                ("wstune (#define, -cl-std=CL1.2)", f"#define block_size_x {bs}\n#line 1\n" + src, "-cl-std=CL1.2"),
                ("wstune before issue 36 (-D, -cl-std=CL1.2)", src, f"-cl-std=CL1.2 -D block_size_x={bs}"),
                ("-D without -cl-std", src, f"-D block_size_x={bs}")):
            row = {"block_size_x": bs, "build": how, "options": opts}
            try:
                k = cl.Program(ctx, text).build(options=opts).vector_add
                row["CL_KERNEL_WORK_GROUP_SIZE"] = k.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, dev)
                k.set_args(*bufs, np.int32(n))
                try:
                    cl.enqueue_nd_range_kernel(q, k, ((n + 319) // 320 * 320,), (320,)).wait()
                    row["launch_320"] = "ok"
                except cl.Error as e:
                    row["launch_320"] = str(e).split("\n")[0][:80]
            except Exception as e:  # noqa: BLE001
                row["error"] = str(e)[:120]
            rows.append(row)
    print(json.dumps({"device": dev.name, "max_work_group_size": dev.max_work_group_size, "rows": rows}, indent=1))


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(v, digits=4):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def config_text(c):
    return ",".join(f"{k}={v}" for k, v in c.items()) if c else "-"


def report(a):
    raw = Path(a.raw)
    yard = {}
    if (raw / "yardstick.jsonl").exists():
        for line in (raw / "yardstick.jsonl").read_text().splitlines():
            y = json.loads(line)
            yard.setdefault((y["kernel"], y["tool"]), []).append(y)
    rows = []
    for k in a.kernels.split(","):
        w = json.loads((raw / f"wstune_{k}.json").read_text()) if (raw / f"wstune_{k}.json").exists() else {}
        t = json.loads((raw / f"kt_{k}.json").read_text()) if (raw / f"kt_{k}.json").exists() else {}
        ww = json.loads((raw / f"wstune_{k}.wall.json").read_text()) if (raw / f"wstune_{k}.wall.json").exists() else {}
        constraints = sum(1 for tr in w.get("trials", []) if tr["status"] == "constraints")
        wy, ty = yard.get((k, "wstune"), []), yard.get((k, "kernel_tuner"), [])
        rows.append({
            "kernel": k,
            "size": w.get("size", "-"),
            "wstune_space": w.get("configurations"),
            "kt_space": t.get("space"),
            "wstune_best": config_text((w.get("best") or {}).get("params")),
            "kt_best": config_text(t.get("best")),
            "wstune_own_ms": (w.get("best") or {}).get("median_ms"),
            "kt_own_ms": t.get("best_ms"),
            "yardstick_wstune_ms": median([y["median_ms"] for y in wy]),
            "yardstick_kt_ms": median([y["median_ms"] for y in ty]),
            "kt_best_verified_by_wstune": ",".join(sorted({str(y.get("status")) for y in ty})) or "-",
            "wstune_evaluations": w.get("evaluations"),
            "kt_evaluations": t.get("evaluations"),
            "wstune_constraints": constraints,
            "wstune_wall_s": ww.get("process_wall_s"),
            "wstune_tune_s": (w.get("wall_ms") or 0) / 1000 if w else None,
            "kt_wall_s": t.get("wall_s"),
        })
    cols = list(rows[0].keys()) if rows else []
    md = [f"Device: {a.device}. {a.note}".strip(), "",
          "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        md.append("| " + " | ".join(fmt(r[c]) for c in cols) + " |")
    text = "\n".join(md) + "\n"
    if a.md:
        Path(a.md).write_text(text)
    if a.csv:
        import csv
        with open(a.csv, "w", newline="") as fh:
            wr = csv.DictWriter(fh, fieldnames=cols)
            wr.writeheader()
            wr.writerows(rows)
    print(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    k = sub.add_parser("kt")
    k.add_argument("file")
    k.add_argument("--platform", type=int, required=True)
    k.add_argument("--device", type=int, required=True)
    k.add_argument("--strategy", default="brute_force")
    k.add_argument("--max-fevals", type=int, default=0)
    k.add_argument("--reduction-n", type=int, default=0)
    k.add_argument("--out", required=True)
    d = sub.add_parser("diag")
    d.add_argument("--kernel", required=True)
    d.add_argument("--platform", type=int, required=True)
    d.add_argument("--device", type=int, required=True)
    r = sub.add_parser("report")
    r.add_argument("--raw", required=True)
    r.add_argument("--kernels", required=True)
    r.add_argument("--device", default="")
    r.add_argument("--note", default="")
    r.add_argument("--md")
    r.add_argument("--csv")
    a = ap.parse_args()
    {"kt": kt, "diag": diag, "report": report}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
