#!/usr/bin/env python3
"""The table of scripts/bench-space.sh from its JSON lines.

usage: space_table.py RUN.jsonl OUT.csv OUT.md
Pairs each space's wstune line (bench_space) with its Kernel Tuner line
(bench/space_kernel_tuner.py), writes OUT.csv and replaces the text between
"<!-- table -->" and "<!-- /table -->" in OUT.md (created with just the
table when missing). Both tools' valid counts (and, where both printed one,
their digests of the configurations in odometer order) must agree: a
mismatch is marked in the table and fails the script.
"""
import csv
import json
import sys


def fmt_s(x):
    if x >= 1:
        return "%.2f s" % x
    if x >= 1e-3:
        return "%.3g ms" % (x * 1e3)
    return "%.3g µs" % (x * 1e6)


def mib(kib):
    return "%.1f MiB" % (kib / 1024)


def main():
    jsonl, out_csv, out_md = sys.argv[1:4]
    rows = [json.loads(l) for l in open(jsonl) if l.strip()]
    spaces = []
    by = {}
    for r in rows:
        if r["space"] not in by:
            spaces.append(r["space"])
        by.setdefault(r["space"], {})["wstune" if r["tool"] == "wstune" else "kt"] = r
    table, records, bad = [], [], False
    for s in spaces:
        w, k = by[s].get("wstune"), by[s].get("kt")
        agree = "—"
        if k and "error" not in k:
            same = w["valid"] == k["valid"] and ("digest" not in k or k["digest"] == w["digest"])
            agree = ("yes (digest)" if "digest" in k else "yes (count)") if same else "**NO**"
            bad |= not same
            ratio = "%.0f× / %.0f×" % (k["seconds"] / w["seconds"], k["cpu_seconds"] / w["cpu_seconds"])
            kt_time = "%s / %s" % (fmt_s(k["seconds"]), fmt_s(k["cpu_seconds"]))
            kt_mem = "%s (+%s)" % (mib(k["peak_rss_kib"]), mib(k["peak_rss_kib"] - k["rss_before_kib"]))
        else:
            ratio, kt_time, kt_mem = "—", (k or {}).get("error", "not run"), "—"
        w_mem = "%s (+%s; space %s)" % (mib(w["peak_rss_kib"]), mib(w["peak_rss_kib"] - w["rss_before_kib"]),
                                         mib(w["space_bytes"] / 1024))
        table.append("| %s | %.3g | %s | %s / %s | %s | %s | %s | %s | %s | %s |" % (
            s, w["product"], "{:,}".format(w["valid"]), fmt_s(w["seconds"]), fmt_s(w["cpu_seconds"]),
            fmt_s(w["count_s"]), kt_time, ratio, w_mem, kt_mem, agree))
        records.append({"space": s, "combinations": w["product"], "valid": w["valid"],
                         "wstune_s": w["seconds"], "wstune_cpu_s": w["cpu_seconds"], "wstune_solve_s": w["solve_s"],
                         "wstune_count_s": w["count_s"],
                         "wstune_peak_kib": w["peak_rss_kib"], "wstune_before_kib": w["rss_before_kib"],
                         "wstune_space_bytes": w["space_bytes"], "wstune_nodes": w["nodes"],
                         "wstune_evaluations": w["evaluations"],
                         "kt_valid": (k or {}).get("valid", ""), "kt_s": (k or {}).get("seconds", ""),
                         "kt_cpu_s": (k or {}).get("cpu_seconds", ""),
                         "kt_peak_kib": (k or {}).get("peak_rss_kib", ""),
                         "kt_before_kib": (k or {}).get("rss_before_kib", ""),
                         "kt_error": (k or {}).get("error", ""), "agree": agree})
    with open(out_csv, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(records[0]))
        wr.writeheader()
        wr.writerows(records)
    head = ("| space | combinations | valid | wstune wall / CPU | wstune count only | Kernel Tuner wall / CPU | "
            "ratio wall / CPU | wstune peak RSS (+ construction; space held) | Kernel Tuner peak RSS (+ construction) "
            "| same space |\n"
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
    text = head + "\n".join(table) + "\n"
    try:
        md = open(out_md).read()
        a, b = md.index("<!-- table -->"), md.index("<!-- /table -->")
        md = md[:a] + "<!-- table -->\n" + text + md[b:]
    except (FileNotFoundError, ValueError):
        md = "<!-- table -->\n" + text + "<!-- /table -->\n"
    open(out_md, "w").write(md)
    print(text)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
