#!/usr/bin/env python3
"""Merges the raw outputs of scripts/bench-peers.sh into one comparison.

  merge_peers.py locals --raw DIR --kernels k1,k2
      prints "KERNEL LOCAL" lines: every distinct answer of both tools (and
      NULL), to be re-timed with `wstune run` (the common yardstick).
  merge_peers.py report --raw DIR --kernels ... --csv F --md F --device D --sizes "k=s ..."
      writes the per-kernel comparison (CSV + Markdown).

Pairings: Kernel Tuner brute_force vs wstune exhaustive (both measure the
whole space), and Kernel Tuner's smarter strategy (greedy_ils by default) vs
wstune guided. "Agree within 3 %" compares the yardstick medians of the two
answers (median over rounds of `wstune run` medians): |a - b| / min(a, b) <= 0.03.
"""

import argparse
import csv
import json
import os
import statistics
import sys

PAIRS = [("exhaustive", "brute_force", "exhaustive"), ("smart", None, "guided")]


def kt_rows(raw):
    path = os.path.join(raw, "kernel_tuner.json")
    if not os.path.exists(path):
        return {}, "?"
    with open(path, encoding="utf-8") as f:
        j = json.load(f)
    out = {}
    for r in j.get("runs", []):
        out[(r["kernel"], r["strategy"])] = r
    return out, j.get("kernel_tuner_version", "?")


def local_text(loc):
    """wstune JSON local ({"x","y","dims"} or null) -> `wstune run --local` text."""
    if loc is None:
        return "null"
    return f"{loc['x']},{loc['y']}" if loc.get("dims", 1) == 2 else f"{loc['x']}"


def wstune_run(raw, kernel, strategy):
    path = os.path.join(raw, f"wstune_{kernel}_{strategy}.json")
    try:
        with open(path, encoding="utf-8") as f:
            j = json.load(f)
    except (OSError, ValueError):
        return None
    wall = {}
    try:
        with open(os.path.join(raw, f"wstune_{kernel}_{strategy}.wall.json"), encoding="utf-8") as f:
            wall = json.load(f)
    except (OSError, ValueError):
        pass
    best = j.get("best") or {}
    return {
        "best_local": local_text(best.get("local")),
        "best_ms": best.get("median_ms"),
        "null_ms": (j.get("baseline") or {}).get("median_ms"),
        "evaluations": j.get("evaluations"),
        "tiebreak_trials": j.get("tiebreak_trials"),
        "space_size": j.get("space_size"),
        "tune_wall_s": (j.get("wall_ms") or 0) / 1000.0,
        "process_wall_s": wall.get("process_wall_s"),
        "from_store": sum(1 for t in j.get("trials", []) if t.get("from_store")),
        "device": (j.get("device") or {}).get("name"),
    }


def smart_strategy(kt, kernel):
    for (k, s) in kt:
        if k == kernel and s != "brute_force":
            return s
    return None


def cmd_locals(a):
    kt, _ = kt_rows(a.raw)
    for k in a.kernels.split(","):
        seen = ["null"]
        for (kk, _s), r in kt.items():
            if kk == k and r.get("best_local"):
                seen.append(str(r["best_local"]))
        for s in ("exhaustive", "guided"):
            w = wstune_run(a.raw, k, s)
            if w:
                seen.append(w["best_local"])
        for loc in dict.fromkeys(seen):
            print(k, loc)


def yardstick(raw):
    meds = {}
    path = os.path.join(raw, "yardstick.jsonl")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                r = json.loads(line)
                if r.get("median_ms") is not None:
                    meds.setdefault((r["kernel"], r["local"]), []).append(float(r["median_ms"]))
    return {k: statistics.median(v) for k, v in meds.items()}


def fmt(x, nd=4):
    if x is None or x == "":
        return ""
    if isinstance(x, float):
        return f"{x:.{nd}f}"
    return str(x)


def cmd_report(a):
    kt, kt_version = kt_rows(a.raw)
    yard = yardstick(a.raw)
    rows = []
    for k in a.kernels.split(","):
        for pairing, kt_strat, ws_strat in PAIRS:
            kt_strat = kt_strat or smart_strategy(kt, k)
            r = kt.get((k, kt_strat), {}) if kt_strat else {}
            w = wstune_run(a.raw, k, ws_strat) or {}
            kt_local = str(r.get("best_local", "")) or None
            ws_local = w.get("best_local")
            y_kt = yard.get((k, kt_local)) if kt_local else None
            y_ws = yard.get((k, ws_local)) if ws_local else None
            y_null = yard.get((k, "null"))
            agree = ""
            if y_kt and y_ws:
                agree = "yes" if abs(y_kt - y_ws) / min(y_kt, y_ws) <= 0.03 else "no"
            kt_wall = r.get("tune_wall_s")
            ws_wall = w.get("tune_wall_s")
            rows.append({
                "kernel": k,
                "size": r.get("size", ""),
                "global": r.get("global", ""),
                "space_size": r.get("space_size", w.get("space_size", "")),
                "wstune_space_size": w.get("space_size", ""),
                "pairing": pairing,
                "kt_strategy": kt_strat or "",
                "kt_best_local": kt_local or "",
                "kt_best_ms": r.get("best_ms", ""),
                "kt_evaluations": r.get("evaluations", ""),
                "kt_tune_wall_s": kt_wall if kt_wall is not None else "",
                "kt_process_wall_s": r.get("process_wall_s", ""),
                "wstune_strategy": ws_strat,
                "wstune_best_local": ws_local or "",
                "wstune_best_ms": w.get("best_ms", ""),
                "wstune_null_ms": w.get("null_ms", ""),
                "wstune_evaluations": w.get("evaluations", ""),
                "wstune_tiebreak_trials": w.get("tiebreak_trials", ""),
                "wstune_tune_wall_s": round(ws_wall, 3) if ws_wall is not None else "",
                "wstune_process_wall_s": w.get("process_wall_s", ""),
                "yard_kt_ms": round(y_kt, 5) if y_kt else "",
                "yard_wstune_ms": round(y_ws, 5) if y_ws else "",
                "yard_null_ms": round(y_null, 5) if y_null else "",
                "same_local": ("yes" if kt_local == ws_local else "no") if kt_local and ws_local else "",
                "agree_3pct": agree,
                "wall_ratio_kt_over_wstune": round(kt_wall / ws_wall, 2) if kt_wall and ws_wall else "",
                "kt_note": r.get("note", ""),
            })
    with open(a.csv, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    device = next((wstune_run(a.raw, k, "exhaustive") or {}).get("device") for k in a.kernels.split(","))
    with open(a.md, "w", encoding="utf-8") as f:
        f.write("# Kernel Tuner vs wstune: local work size tuning\n\n")
        f.write(f"Device `{a.device}` ({device or '?'}), sizes: {a.sizes.strip()}. Kernel Tuner {kt_version}. "
                "Generated by `scripts/bench-peers.sh` (see docs/peers.md for what is compared and the caveats).\n\n")
        f.write("Own = the tool's own measurement of its answer (Kernel Tuner: median of its `times`; wstune: "
                "the trial median). Yardstick = the answer re-timed with `wstune run` (median over rounds of "
                "5-run medians, whole kernel; for sort the whole bitonic sort). Agree = yardstick medians within "
                "3 %. Wall = seconds inside the tuning call (Kernel Tuner `tune_kernel`, wstune `tune()`), each "
                "tune with empty compiler caches; ratio = Kernel Tuner / wstune.\n\n")
        f.write("| kernel | pairing | space | KT strategy | KT best | KT own ms | KT evals | KT wall s | "
                "wstune strategy | wstune best | wstune own ms | wstune evals | wstune wall s | "
                "yardstick KT ms | yardstick wstune ms | NULL ms | same | agree 3 % | wall ratio |\n")
        f.write("|" + "---|" * 19 + "\n")
        for r in rows:
            f.write("| " + " | ".join(fmt(r[c]) for c in [
                "kernel", "pairing", "space_size", "kt_strategy", "kt_best_local", "kt_best_ms", "kt_evaluations",
                "kt_tune_wall_s", "wstune_strategy", "wstune_best_local", "wstune_best_ms", "wstune_evaluations",
                "wstune_tune_wall_s", "yard_kt_ms", "yard_wstune_ms", "yard_null_ms", "same_local", "agree_3pct",
                "wall_ratio_kt_over_wstune"]) + " |\n")
        notes = sorted({r["kt_note"] for r in rows if r["kernel"] == "sort" and r["kt_note"]})
        if notes:
            f.write(f"\nsort: Kernel Tuner tunes {notes[0]}; its own ms is one launch, wstune's the whole sort.\n")
        stored = sum((wstune_run(a.raw, k, s) or {}).get("from_store", 0) or 0
                     for k in a.kernels.split(",") for s in ("exhaustive", "guided"))
        if stored:
            f.write(f"\nWarning: {stored} wstune trials came from a store, not measured.\n")
        mism = [r["kernel"] for r in rows if r["wstune_space_size"] != "" and r["space_size"] != ""
                and int(r["wstune_space_size"]) != int(r["space_size"])]
        if mism:
            f.write(f"\nWarning: search spaces differ in size for {', '.join(sorted(set(mism)))}.\n")
    print(f"wrote {a.csv} and {a.md}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p1 = sub.add_parser("locals")
    p1.add_argument("--raw", required=True)
    p1.add_argument("--kernels", required=True)
    p2 = sub.add_parser("report")
    p2.add_argument("--raw", required=True)
    p2.add_argument("--kernels", required=True)
    p2.add_argument("--csv", required=True)
    p2.add_argument("--md", required=True)
    p2.add_argument("--device", default="")
    p2.add_argument("--sizes", default="")
    a = ap.parse_args()
    return cmd_locals(a) if a.cmd == "locals" else cmd_report(a)


if __name__ == "__main__":
    sys.exit(main() or 0)
