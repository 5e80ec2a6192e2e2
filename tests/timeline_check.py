#!/usr/bin/env python3
"""Checks a wstuned --timeline file (docs/daemon.md "Timeline") is well formed
and consistent with its JSON report: every span starts before it ends; per
worker and chunk the upload ends before that chunk's first kernel starts and
its last kernel ends before its download starts (on one device clock, placed
on the host's: a slack of SLACK_MS for the anchor); every worker's answer
lies within the job's makespan; the critical path names the worker whose
result arrived last. Usage: timeline_check.py TIMELINE REPORT [EXPECT...]
where EXPECT is resident (no upload after each worker's first job of a
problem), uploads (every job uploads) or chunks=N (every part ran as N chunks).
Prints one line per job; exits 1 on the first failure."""
import json
import sys

SLACK_MS = 2.0


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def check_worker(job, w, chunks_expected):
    spans = w["spans"]
    for s in spans:
        if not s["start_ms"] <= s["end_ms"]:
            fail(f"job {job['job']} rank {w['rank']}: span {s} ends before it starts")
    if not w["answer_ms"] <= job["makespan_ms"] + 0.01:
        fail(f"job {job['job']} rank {w['rank']}: answer {w['answer_ms']} after the makespan {job['makespan_ms']}")
    chunks = sorted({s["chunk"] for s in spans if s["what"] == "kernel"})
    if chunks_expected is not None and len(chunks) != chunks_expected:
        fail(f"job {job['job']} rank {w['rank']}: {len(chunks)} chunks ran, expected {chunks_expected}")
    shared_up = [s for s in spans if s["what"] == "upload" and s["chunk"] == -1]
    for c in chunks:
        k = [s for s in spans if s["what"] == "kernel" and s["chunk"] == c]
        up = [s for s in spans if s["what"] == "upload" and s["chunk"] == c] + shared_up
        down = [s for s in spans if s["what"] == "download" and s["chunk"] == c]
        first_k = min(s["start_ms"] for s in k)
        last_k = max(s["end_ms"] for s in k)
        for u in up:
            if u["end_ms"] > first_k + SLACK_MS:
                fail(f"job {job['job']} rank {w['rank']} chunk {c}: upload ends {u['end_ms']:.3f} after its "
                     f"first kernel starts {first_k:.3f}")
        for d in down:
            if d["start_ms"] + SLACK_MS < last_k:
                fail(f"job {job['job']} rank {w['rank']} chunk {c}: download starts {d['start_ms']:.3f} before "
                     f"its last kernel ends {last_k:.3f}")
        if not down:
            fail(f"job {job['job']} rank {w['rank']} chunk {c}: no download")
    return any(s["what"] == "upload" for s in spans)


def main():
    timeline = json.load(open(sys.argv[1]))
    text = open(sys.argv[2]).read()
    report = json.loads(text[text.index("{"):])
    expect = sys.argv[3:]
    chunks = next((int(e.split("=")[1]) for e in expect if e.startswith("chunks=")), None)
    if not timeline["jobs"]:
        fail("no job in the timeline")
    by_id = {j["id"]: j for j in report["jobs"]}
    seen = set()
    for job in timeline["jobs"]:
        rep = by_id[job["job"]]
        if rep.get("critical_path") != job["critical_path"]:
            fail(f"job {job['job']}: the report's critical path differs from the timeline's")
        last = max(job["workers"], key=lambda w: w["answer_ms"])
        if job["critical_path"]["rank"] != last["rank"]:
            fail(f"job {job['job']}: critical path rank {job['critical_path']['rank']}, last answer rank {last['rank']}")
        for w in job["workers"]:
            uploaded = check_worker(job, w, chunks)
            key = (w["rank"], job["kernel"], job["size"])
            if "resident" in expect and key in seen and uploaded:
                fail(f"job {job['job']} rank {w['rank']}: uploaded again with resident inputs")
            if "uploads" in expect and not uploaded:
                fail(f"job {job['job']} rank {w['rank']}: no upload")
            seen.add(key)
        cp = job["critical_path"]
        print(f"ok: job {job['job']} {job['kernel']} {job['size']} inputs {job['inputs']} overlap {job['overlap']}: "
              f"{len(job['workers'])} workers, makespan {job['makespan_ms']:.2f} ms, last rank {cp['rank']} "
              f"(before kernel {cp['before_kernel_ms']:.2f}, kernels {cp['kernel_span_ms']:.2f}, after "
              f"{cp['after_kernel_ms']:.2f})")


main()
