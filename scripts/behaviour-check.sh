#!/usr/bin/env bash
# behaviour-check.sh: proves that a change such as a refactor leaves the
# observable behaviour of `wstune` and `wstuned` alone.
#
# It runs a fixed set of about 190 commands (every CLI command, its --help and
# usage errors with their exit statuses, devices, run, tune, simulate, split,
# the store commands, report, and wstuned under mpiexec) against one build,
# and writes one text file (about 200 KB, 2 minutes on 2 cores). Each command there is a heading line
# `### <command as written below>`, then its stdout, `--- stderr`, its
# stderr, and `--- exit N`. Files a command writes (exports, T4, CSV,
# reports) follow it the same way. Everything that depends on the machine's
# timing or the moment is masked by one filter (the Python program `mask`
# below): measured times (numbers next to ms/s/µs/GB/s/..., *_ms and other
# time fields of JSON, table columns of times, decimals with 3 or more
# fractional digits in text, ratios of times), timestamps and dates
# (created_at, exported_at, ...), uuids, pids, the scratch directory's path,
# the build and repository paths, the host name, PoCL's free global memory
# and clock, and what a measured search chooses (the best configuration of
# `tune`, the tie-break counts, which worker measured what). Whatever does
# not depend on timing is kept: the configurations a search tries and their
# statuses, verification errors, split plans, simulate's results, the store's
# contents and row counts, messages and exit statuses.
#
# Usage (from anywhere; commands run from the repository root):
#   scripts/behaviour-check.sh record BUILD_DIR OUT_FILE
#       run the commands with BUILD_DIR/cli/wstune and BUILD_DIR/daemon/wstuned
#       (LD_LIBRARY_PATH=BUILD_DIR/lib) and write the masked record to OUT_FILE
#   scripts/behaviour-check.sh compare A B
#       diff two records: exit 0 when identical, 1 with the diff when not
#   scripts/behaviour-check.sh check BUILD_DIR EXPECTED
#       record into a temporary file and compare EXPECTED with it (the new
#       record is kept and named when they differ)
#
# The baseline is tests/behaviour/baseline.txt, recorded from the tree after
# issue 35's redesign. The record of 44f89b7 (before it) was identical after
# the moves and the formatting; the changes made on purpose since (the one
# JSON form of a trial, wstuned's tune defaults, wstuned's split plan from
# the library's planner and one split-dimension rule, then the leftovers' bug
# fixes: messages, db check, export --session, simulate's count, --sweep,
# wstuned's last lines, the protocol version) are the diff in
# tests/behaviour/changes-issue35.diff, each part with a line saying why;
# issue 36's (tune's text counts the configurations with the baseline, its
# JSON adds "configurations") are tests/behaviour/changes-issue36.diff and
# issue 37's (the protocol version: workers build no search space) are
# tests/behaviour/changes-issue37.diff, every search space and search the
# record holds unchanged. The merge of issues 37-40 is
# tests/behaviour/changes-merge-2026-11-28.diff (each branch's own file says why). Check a change with:
#   scripts/behaviour-check.sh check build tests/behaviour/baseline.txt
# It holds this machine's PoCL device names, CU counts and fingerprints (kept
# on purpose: a refactor must not change them), so record a new baseline
# with the old build when you move to another machine.
#
# Environment: hermetic. Every command runs under `env -i` with HOME, XDG_*,
# TMPDIR, POCL_CACHE_DIR and all databases inside a scratch directory
# (mktemp -d, removed at the end), TZ=UTC, LC_ALL=C, POCL_DEVICES="basic
# pthread" (two unlike CPU devices, as tests/daemon.cmake and
# tests/split_store_test.sh use; the default device 0:0 is `basic`, one
# thread), POCL_MAX_PTHREAD_COUNT=2 and WSTUNE_REGISTER_TIMEOUT=60 (as
# tests/daemon.cmake). Inputs (tuning files, the jobs file, the recorded
# tables of bench/tables) are taken from git at BEHAVIOUR_INPUT_REV (default
# the baseline's commit, so a refactor that moves them does not change the
# record; without that commit, from the working tree). Set
# BEHAVIOUR_POCL_CACHE_DIR to reuse a PoCL kernel cache between records
# (faster; the record does not depend on it); BEHAVIOUR_VERBOSE=1 prints
# each command with the seconds since the start on stderr.
#
# When a check fails: read the diff; a difference in a masked-only place
# (e.g. a new number format next to a time) may need the filter adjusted,
# anything else is a change in behaviour. Run `record` twice on one build
# and `compare` the two to see that the set stays deterministic.
#
# Left out, because their output depends on timing even after masking:
#   - `wstune split --model measured`: the calibration, the refinement and
#     the shares it picks are measured; kept: exit status, "status:" lines,
#     and that the second run reuses the stored calibration;
#   - `wstuned ... --split measured`: reduced to status, model and verified;
#   - `wstune split --sweep`: the sweep adds 1 % steps around the measured
#     best share, so only the STEP % rows (0, 50, 100) of its CSV are kept,
#     the best line is masked and of the SVG only the kinds of elements;
#   - the guided, genetic, annealing, differential, portfolio and bayes
#     strategies on real devices (which configurations they try depends on
#     the times measured): they are recorded through `wstune simulate` on
#     recorded tables instead; real tunes use exhaustive, random and rule;
#   - wstuned's hang and stall faults, signals and kills (tests/daemon.cmake
#     and tests/daemon_*_test.sh: they wait on timeouts and races);
#   - `wstuned tune` with two workers of one fingerprint: which rank measures
#     which configuration, the order the sessions are stored in and the
#     best are timing: masked or sorted; wstuned calibrate: reduced to its
#     status lines (the calibration's points are capped by measured times);
#   - wstuned's run_key of a --kernel-file job hashes the file's path (the
#     scratch directory): masked for those jobs only;
#   - stderr lines of different ranks (registrations, refusals) arrive in
#     any order: sorted;
#   - `wstune query` of a store filled by real tunes lists timing-chosen
#     best configurations: recorded as JSON with those masked; the look-up
#     chain is recorded on a synthetic store (fixed numbers) instead.
set -euo pipefail

SELF=$(readlink -f "${BASH_SOURCE[0]}")
ROOT=$(cd "$(dirname "$SELF")/.." && pwd)
BASELINE_REV=44f89b78f39b532557e32d06421bca77fadc87b7

usage() {
  sed -n '/^# Usage/,/^#       record is kept/p' "$SELF" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# ---------------------------------------------------------------- record ----
# The outer half: checks the build, makes the scratch directory and runs the
# inner half (__record) under a clean environment.
record() {
  local build out
  [ $# -eq 2 ] || usage
  build=$(cd "$1" && pwd) || { echo "behaviour-check: no build directory $1" >&2; exit 2; }
  out=$2
  case $out in /*) ;; *) out=$PWD/$out ;; esac
  local wstune=$build/cli/wstune wstuned=$build/daemon/wstuned lib=$build/lib
  # A build that moved its outputs: find them.
  [ -x "$wstune" ] || wstune=$(find "$build" -maxdepth 4 -type f -name wstune -perm -u+x | head -1)
  [ -x "$wstuned" ] || wstuned=$(find "$build" -maxdepth 4 -type f -name wstuned -perm -u+x | head -1)
  [ -e "$lib/libwstune.so" ] || lib=$(dirname "$(find "$build" -maxdepth 4 -name 'libwstune.so*' | head -1)")
  [ -x "$wstune" ] && [ -x "$wstuned" ] || { echo "behaviour-check: no wstune or wstuned under $build" >&2; exit 2; }
  local py
  py=$(python3 -c 'import sys; print(sys.executable)')
  local s
  s=$(mktemp -d "${TMPDIR:-/tmp}/behaviour-check.XXXXXX")
  s=$(cd "$s" && pwd -P)
  # shellcheck disable=SC2064
  trap "rm -rf '$s'" EXIT
  mkdir -p "$s/bin" "$s/home" "$s/xdg/config" "$s/xdg/data" "$s/xdg/cache" "$s/xdg/state" "$s/tmp" "$s/in" "$s/out"
  ln -s "$wstune" "$s/bin/wstune"
  ln -s "$wstuned" "$s/bin/wstuned"
  ln -s "$py" "$s/bin/python3"
  local cache=${BEHAVIOUR_POCL_CACHE_DIR:-$s/pocl-cache}
  mkdir -p "$cache"
  local start=$SECONDS rc=0
  # Energy sensors are the machine's: RAPL is pointed at a powercap tree that
  # is absent everywhere, so every energy note reads the same (PoCL devices
  # are CPUs: no NVML).
  env -i PATH="$s/bin:/usr/local/bin:/usr/bin:/bin" HOME="$s/home" TMPDIR="$s/tmp" TZ=UTC LC_ALL=C LANG=C \
    XDG_CONFIG_HOME="$s/xdg/config" XDG_DATA_HOME="$s/xdg/data" XDG_CACHE_HOME="$s/xdg/cache" \
    XDG_STATE_HOME="$s/xdg/state" LD_LIBRARY_PATH="$lib" POCL_CACHE_DIR="$cache" \
    POCL_DEVICES="basic pthread" POCL_MAX_PTHREAD_COUNT=2 WSTUNE_REGISTER_TIMEOUT=60 \
    WSTUNE_POWERCAP_ROOT=/nonexistent/powercap \
    BC_S="$s" BC_BUILD="$build" BC_ROOT="$ROOT" BC_OUT="$out" \
    BC_INPUT_REV="${BEHAVIOUR_INPUT_REV:-$BASELINE_REV}" BC_VERBOSE="${BEHAVIOUR_VERBOSE:-0}" \
    bash "$SELF" __record || rc=$?
  local n
  n=$(grep -c '^### ' "$out" 2>/dev/null) || true
  echo "behaviour-check: recorded ${n:-0} commands in $((SECONDS - start)) s to $out" >&2
  return $rc
}

# --------------------------------------------------------------- compare ----
compare() {
  [ $# -eq 2 ] || usage
  if diff -u "$1" "$2"; then
    echo "behaviour-check: $1 and $2 are identical" >&2
    return 0
  fi
  echo "behaviour-check: $1 and $2 differ" >&2
  return 1
}

check() {
  [ $# -eq 2 ] || usage
  local expected got
  expected=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
  got=$(mktemp "${TMPDIR:-/tmp}/behaviour-check-record.XXXXXX")
  record "$1" "$got"
  if compare "$expected" "$got"; then
    rm -f "$got"
    return 0
  fi
  echo "behaviour-check: the new record is $got" >&2
  return 1
}

# ------------------------------------------------------------ the filter ----
# mask MODE [OPTION...] < text > masked text
#   MODE exact: only paths, the host name, pids and timestamps;
#        text:  also uuids, times with units, decimals with >= 3 fractional
#               digits, time columns of tables (and whitespace in tables);
#        json:  stdout is JSON: time fields masked by key, then as exact
#               (plus uuids); falls back to text when it does not parse;
#        facts: an HTML or SVG file: element counts and headings only.
#   OPTION col:RE    also mask table columns whose header matches RE
#          line:RE   replace lines matching RE by "<masked line>"
#          keep:RE   keep only lines matching RE
#          sort:RE   sort each run of consecutive lines matching RE
#          best      JSON: mask what a measured search chose (best's
#                    configuration, best_configs' and query rows' local,
#                    params, global)
#          trials    JSON: lists of trials (and T4 results) as the sorted
#                    configurations with status and error, times dropped
write_mask() {
  cat >"$BC_S/mask.py" <<'PY'
import json, os, re, socket, sys

mode, opts = sys.argv[1], sys.argv[2:]
S, BUILD, ROOT = os.environ["BC_S"], os.environ["BC_BUILD"], os.environ["BC_ROOT"]

def opt_list(prefix):
    return [o[len(prefix):] for o in opts if o.startswith(prefix)]

PATHS = []
for p, tok in ((S, "<S>"), (BUILD, "<BUILD>"), (ROOT, "<ROOT>")):
    for q in {p, os.path.realpath(p)}:
        PATHS.append((q, tok))
PATHS.sort(key=lambda x: -len(x[0]))
HOSTS = set()
for h in (socket.gethostname(), socket.getfqdn()):
    if h and h != "localhost":
        HOSTS.add(h)
        HOSTS.add(h.split(".")[0])
HOST_RE = [re.compile(r"(?<![\w.-])" + re.escape(h) + r"(?![\w-])") for h in sorted(HOSTS, key=len, reverse=True)]
TIME_RE = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?")
DATE_RE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
UUID_RE = re.compile(r"\b(?:[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b")
KEY_RE = re.compile(r"(?<![\w.])[0-9a-f]{12,}-\d+\b")  # split calibration keys: hex clock - pid
UNIT_RE = re.compile(r"(?<![\w.<])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(\s?)(ms|s|sec|µs|us|ns|GB/s|MB/s|GiB/s|MiB/s|TFLOP/s|GFLOP/s)(?![\w/])")
DEC_RE = re.compile(r"(?<![\w.<])-?\d+\.\d{3,}(?:[eE][+-]?\d+)?(?![\w.])")
TIEBREAK_RE = re.compile(r"\(\+\d+ tie-break\)")
BREAKDOWN_RE = re.compile(r"\b(build|run beyond the kernels|verification|other) \d+(?:\.\d+)?\b")
DEFAULT_COLS = r"(\bms\b|GB/s|\bMHz\b|global MiB|best/this|^x |\bx NULL\b|\bx rule\b|x baseline|^recorded$|\bwall\b|% pinned)"

def generic(t):
    for p, tok in PATHS:
        if p and p != "/":
            t = t.replace(p, tok)
    for r in HOST_RE:
        t = r.sub("<HOST>", t)
    t = re.sub(r"/proc/\d+/", "/proc/<PID>/", t)
    t = re.sub(r"\b(pid|PID|process id|Process ID)(:?\s+)\d+", r"\1\2<PID>", t)
    t = TIME_RE.sub("<TIME>", t)
    t = DATE_RE.sub("<DATE>", t)
    return t

def ids(t):
    t = UUID_RE.sub("<UUID>", t)
    return KEY_RE.sub("<KEY>", t)

def times(t):
    t = UNIT_RE.sub(lambda m: "<T>" + m.group(1) + m.group(2), t)
    if not t.startswith("verified: "):  # verification errors do not depend on timing
        t = DEC_RE.sub("<N>", t)
    t = BREAKDOWN_RE.sub(r"\1 <T>", t)
    return TIEBREAK_RE.sub("(+<N> tie-break)", t)

def tables(lines):
    """Tables of cli/table.hpp: a header, a line of dashes, rows. Cells of
    time columns masked, then every row re-joined with two spaces (masking
    changes the widths)."""
    cols_re = re.compile("|".join([DEFAULT_COLS] + opt_list("col:")))
    out, i = [], 0
    while i < len(lines):
        h = lines[i]
        if i + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[i + 1]) and len(lines[i + 1]) >= len(h.rstrip()) \
                and re.search(r"\S {2,}\S", h):
            starts = [0] + [m.end() for m in re.finditer(r" {2,}(?=\S)", h)]
            names = [h[a:b].strip() for a, b in zip(starts, starts[1:] + [None])]
            masked = [bool(cols_re.search(n)) for n in names]
            def cells(line):
                return [line[a:b].strip() if b is not None else line[a:].strip() for a, b in zip(starts, starts[1:] + [None])]
            out.append("  ".join(names))
            out.append("---")
            i += 2
            while i < len(lines) and lines[i].strip() and all(
                    len(lines[i]) <= s - 2 or lines[i][s - 2:s] == "  " for s in starts[1:]):
                c = cells(lines[i])
                c = ["<T>" if m and v not in ("", "-") else v for v, m in zip(c, masked)]
                out.append("  ".join(c).rstrip())
                i += 1
            continue
        out.append(h)
        i += 1
    return out

def line_options(lines):
    for r in opt_list("sub:"):
        pat, repl = r.split("=>", 1)
        rr = re.compile(pat)
        lines = [rr.sub(repl, l) for l in lines]
    for r in opt_list("keep:"):
        rr = re.compile(r)
        lines = [l for l in lines if rr.search(l)]
    for r in opt_list("line:"):
        rr = re.compile(r)
        lines = ["<masked line>" if rr.search(l) else l for l in lines]
    for r in opt_list("sort:"):
        rr = re.compile(r)
        res, run = [], []
        for l in lines + [None]:
            if l is not None and rr.search(l):
                run.append(l)
                continue
            res.extend(sorted(run))
            run = []
            if l is not None:
                res.append(l)
        lines = res
    return lines

def text_mode(t, exact):
    t = generic(t)
    lines = t.split("\n")
    if not exact:
        lines = tables(lines)
        lines = [times(ids(l)) for l in lines]
        lines = [re.sub(r"(?<=\S) {2,}", "  ", l).rstrip() for l in lines]
    lines = line_options(lines)
    return "\n".join(lines)

TIME_KEY = re.compile(r"(^|_)(ms|s|sec|seconds|gbps|gbs|ns|us)$|_ms_|^(times|runtimes|samples)$|^ratio|^overhead|^metrics$")
HIDE_KEY = {"host", "hostname", "pid", "global_mem_bytes", "max_clock_mhz", "tiebreak_trials", "measured_by_rank",
            "measured_ahead_unused", "measured", "best_id", "key"}
BEST_KEY = {"local", "params", "global", "configuration", "build_options", "config"}

def mask_numbers(o):
    if isinstance(o, bool) or o is None:
        return o
    if isinstance(o, (int, float)):
        return "<T>"
    if isinstance(o, list):
        return [mask_numbers(x) for x in o]
    if isinstance(o, dict):
        return {k: mask_numbers(v) for k, v in o.items()}
    return o

def extent(e):
    if isinstance(e, dict) and "x" in e:
        return "x".join(str(e[k]) for k in ("x", "y", "z")[:e.get("dims", 3)] if k in e)
    return e if isinstance(e, str) else json.dumps(e)

def kv(d):
    return ",".join(f"{k}={v}" for k, v in sorted(d.items())) if isinstance(d, dict) else json.dumps(d)

def trial_summary(t):
    """One line for a trial (or a T4 result): its configuration, status and error."""
    if not isinstance(t, dict):
        return json.dumps(t)
    parts = []
    if isinstance(t.get("wstune"), dict):  # T4: which session's problem
        parts.append(f"{t['wstune'].get('kernel')} {t['wstune'].get('size')}")
    for k in ("params", "configuration"):
        if k in t:
            parts.append("{" + kv(t[k]) + "}")
    for k in ("local", "global"):
        if k in t:
            parts.append(f"{k}={extent(t[k])}")
    for k in ("status", "invalidity"):
        if k in t:
            parts.append(str(t[k]))
    err = t["wstune"].get("error") if isinstance(t.get("wstune"), dict) else t.get("error")
    if err:
        parts.append(f"error={err}")
    return " ".join(parts)

def mask_json(o, key=None, best=False):
    if isinstance(o, dict):
        res = {}
        unit = o.get("unit") in ("ms", "s", "us", "ns")
        for k, v in o.items():
            if (k in HIDE_KEY or (k == "session" and isinstance(v, int))) and v is not None:
                res[k] = "<X>"
            elif best and k in BEST_KEY:
                res[k] = "<BEST>"
            elif "trials" in opts and k == "samples_ms":  # tie-breaks add samples
                res[k] = "<samples>"
            elif TIME_KEY.search(k) or (unit and k == "value"):
                res[k] = mask_numbers(v)
            elif "trials" in opts and k in ("trials", "results") and isinstance(v, list) and all(isinstance(x, dict) for x in v):
                res[k] = sorted(trial_summary(x) for x in v)
            elif "trials" in opts and k in ("sessions", "best_configs", "wstune") and isinstance(v, list):
                # concurrent searches (wstuned) store their sessions in any order
                res[k] = sorted(mask_json(v, k, "best" in opts and k == "best_configs"),
                                key=lambda x: json.dumps(x, sort_keys=True))
            elif k == "run_key" and isinstance(o.get("job"), dict) and o["job"].get("kernel_file"):
                res[k] = "<X>"  # a hash of the job, with the kernel file's (scratch) path
            else:
                res[k] = mask_json(v, k, "best" in opts and k in ("best", "best_configs", "from"))
        return res
    if isinstance(o, list):
        return [mask_json(x, key, best) for x in o]
    return o

def dump(o, ind=0):
    """JSON, one member per line; scalar lists and small flat objects on one line."""
    flat = json.dumps(o, ensure_ascii=False)
    scalar = lambda x: not isinstance(x, (dict, list))
    if scalar(o) or not o or (len(flat) <= 100 and all(scalar(x) for x in (o.values() if isinstance(o, dict) else o))
                              and not (isinstance(o, list) and any(isinstance(x, str) and len(x) > 12 for x in o))):
        return flat
    pad = " " * (ind + 1)
    if isinstance(o, dict):
        items = [f"{pad}{json.dumps(k, ensure_ascii=False)}: {dump(v, ind + 1)}" for k, v in o.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * ind + "}"
    return "[\n" + ",\n".join(pad + dump(x, ind + 1) for x in o) + "\n" + " " * ind + "]"

def json_mode(t):
    start = min([i for i in (t.find("{"), t.find("[")) if i >= 0], default=-1)
    try:
        if start < 0:
            raise ValueError
        doc = json.loads(t[start:])
    except ValueError:
        return text_mode(t, False)
    if "best" in opts and isinstance(doc, list):  # query rows: every row is a stored best
        doc = [mask_json(x, None, True) for x in doc]
    elif "best" in opts and isinstance(doc, dict) and "local" in doc and "params" in doc:  # query --kernel-file
        doc = mask_json(doc, None, True)
    else:
        doc = mask_json(doc)
    body = dump(doc)
    head = text_mode(t[:start], False) if start > 0 else ""
    lines = (head + ids(generic(body))).split("\n")
    return "\n".join(line_options(lines))

def facts(t):
    tags = {}
    for m in re.finditer(r"<([a-zA-Z][\w:-]*)", t):
        tags[m.group(1)] = tags.get(m.group(1), 0) + 1
    if "tagsonly" in opts:  # the number of points depends on timing
        return "elements: " + " ".join(sorted(tags))
    out = ["elements: " + " ".join(f"{k}={tags[k]}" for k in sorted(tags))]
    for m in re.finditer(r"<(h[1-4]|title)>(.*?)</\1>", t, re.S):
        if m.group(1) != "title" or "titles" in opts or t.lstrip().startswith("<!"):
            out.append(f"{m.group(1)}: " + times(ids(generic(re.sub(r"<[^>]+>", "", m.group(2)).strip()))))
    return "\n".join(out)

data = sys.stdin.read()
if mode == "exact":
    res = text_mode(data, True)
elif mode == "text":
    res = text_mode(data, False)
elif mode == "json":
    res = json_mode(data)
elif mode == "facts":
    res = facts(data)
else:
    sys.exit(f"mask: unknown mode {mode}")
sys.stdout.write(res if res.endswith("\n") or res == "" else res + "\n")
PY
}

mask() { python3 "$BC_S/mask.py" "$@"; }

# ------------------------------------------------------- the inner record ----
# c [-o OPTION]... MODE 'COMMAND': runs COMMAND with bash from the repository
# root (timeout 300 s) and appends its heading, masked stdout (MODE), masked
# stderr (text, or exact when MODE is exact), and exit status.
c() {
  local o=()
  while [ "$1" = -o ]; do o+=("$2"); shift 2; done
  local mode=$1 cmd=$2 rc=0 emode=text
  [ "$mode" = exact ] && emode=exact
  N=$((N + 1))
  [ "$BC_VERBOSE" = 1 ] && echo "[$N $((SECONDS - T0)) s] $cmd" >&2
  printf '### %s\n' "$cmd" >>"$BC_OUT"
  (cd "$BC_ROOT" && timeout -k 10 300 bash -c "$cmd") </dev/null >"$BC_S/stdout" 2>"$BC_S/stderr" || rc=$?
  mask "$mode" "${o[@]}" <"$BC_S/stdout" >>"$BC_OUT"
  echo "--- stderr" >>"$BC_OUT"
  mask "$emode" "${o[@]}" <"$BC_S/stderr" >>"$BC_OUT"
  echo "--- exit $rc" >>"$BC_OUT"
}

# f [-o OPTION]... MODE PATH...: appends the files (a directory: every file in
# it, sorted) after the last command: JSON in MODE, HTML and SVG as facts,
# the rest as text.
f() {
  local o=()
  while [ "$1" = -o ]; do o+=("$2"); shift 2; done
  local mode=$1 p file rel
  shift
  for p in "$@"; do
    if [ -d "$p" ]; then
      echo "--- files in ${p#"$BC_S"/}: $(cd "$p" && find . -type f | sort | sed 's|^\./||' | tr '\n' ' ')" >>"$BC_OUT"
      local args=() x
      for x in "${o[@]}"; do args+=(-o "$x"); done
      while IFS= read -r file; do f "${args[@]}" "$mode" "$file"; done < <(find "$p" -type f | sort)
      continue
    fi
    rel=${p#"$BC_S"/}
    if [ ! -e "$p" ]; then
      echo "--- file $rel: missing" >>"$BC_OUT"
      continue
    fi
    echo "--- file $rel" >>"$BC_OUT"
    case $p in
      *.svg | *.html) if [ "$mode" = exact ]; then mask facts titles "${o[@]}" <"$p"; else mask facts "${o[@]}" <"$p"; fi >>"$BC_OUT" ;;
      *.json) mask "$mode" "${o[@]}" <"$p" >>"$BC_OUT" ;;
      *) mask text "${o[@]}" <"$p" >>"$BC_OUT" ;;
    esac
  done
}

# The inputs: tuning files, the jobs file and recorded tables from git at
# $BC_INPUT_REV (the working tree when that commit is missing), and the
# synthetic files below.
inputs() {
  local paths=(share/examples/kernels kernels/matmul.json kernels/matmul.cl kernels/bilinear.json kernels/bilinear.cl
    daemon/testdata/small-jobs.json)
  local tables=(trapezoid-65536-pocl matmul-256-pocl bilinear-1024-pocl stencil5-pocl stencil5-4096-h100
    stencil7-3d-256-h100 stencil7-3d-pocl reduction-16m-h100 matmul_tiled-1024-h100)
  local t
  for t in "${tables[@]}"; do paths+=("bench/tables/$t.json.gz"); done
  if git -C "$BC_ROOT" cat-file -e "$BC_INPUT_REV^{commit}" 2>/dev/null; then
    git -C "$BC_ROOT" archive "$BC_INPUT_REV" "${paths[@]}" | tar -x -C "$IN"
  else
    echo "behaviour-check: commit $BC_INPUT_REV not found; inputs from the working tree" >&2
    (cd "$BC_ROOT" && tar -c "${paths[@]}") | tar -x -C "$IN"
  fi
  mkdir -p "$TAB"
  for t in "${tables[@]}"; do gunzip -c "$IN/bench/tables/$t.json.gz" >"$TAB/$t.json"; done
  python3 - "$IN" <<'PY'
import json, sys
d = sys.argv[1]
def w(name, obj):
    with open(f"{d}/{name}", "w") as f:
        f.write(obj if isinstance(obj, str) else json.dumps(obj, indent=1))
# A T4 table (tests/cli_test.sh) and one with a bad runtime.
results = [{"configuration": {"A": a, "B": b}, "times": {"runtimes": [1.0 + abs(a - 3) + abs(b - 2)]},
            "invalidity": "correct", "correctness": 1} for a in range(6) for b in range(5)]
w("t4.json", {"schema_version": "1.0.0", "results": results})
results[4]["times"]["runtimes"] = ["x"]
w("bad-t4.json", {"schema_version": "1.0.0", "results": results})
# A store export with fixed numbers (as tests/report.cmake): two devices, a
# 2-D tuning session, best configurations, split runs of three methods, a
# calibration.
gpu = {"name": "Fake GPU", "vendor": "V", "type": "gpu", "driver_version": "1.0", "architecture": "sm_90",
       "compute_units": 8, "pe_per_cu": 64, "max_work_group_size": 1024, "max_work_item_sizes": [1024, 1024, 64],
       "fingerprint": "265a57a279cb09cb"}
cpu = {"name": "Fake CPU", "vendor": "V", "type": "cpu", "driver_version": "1.0", "architecture": "x86",
       "compute_units": 4, "pe_per_cu": 8, "max_work_group_size": 4096, "max_work_item_sizes": [4096, 4096, 4096],
       "fingerprint": "9e1381d78972d30b"}
bil = {"name": "bilinear", "source_hash": "", "build_options": ""}
mm = {"name": "matmul", "source_hash": "", "build_options": ""}
pbil = {"global": {"x": 1024, "y": 1024, "dims": 2}, "size_text": "512x512:1024x1024"}
pmm = {"global": {"x": 1024, "y": 1024, "dims": 2}, "size_text": "1024"}
ts = "2025-01-01T00:00:00.000Z"
def trial(x, y, ms, status="correct", error=""):
    return {"params": {}, "local": None if x is None else {"x": x, "y": y, "dims": 2}, "global": None,
            "status": status, "error": error, "samples_ms": ms, "compile_ms": 1.5, "run_ms": 2.0,
            "verify_ms": 0.25, "created_at": ts}
sessions = [
    {"uuid": "5e551000000000000000000000000001", "device": gpu["fingerprint"], "kernel": bil, "problem": pbil,
     "strategy": "exhaustive", "budget_trials": None, "budget_seconds": None, "started_at": ts, "ended_at": ts,
     "wstune_version": "0.1.0", "host": "h",
     "trials": [trial(None, None, [1.25, 1.5]), trial(32, 8, [0.75, 0.75, 0.75]), trial(1, 512, [3.5]),
                trial(16, 16, [0.5, 0.625]), trial(64, 32, [], "runtime", "CL_OUT_OF_RESOURCES")]},
    {"uuid": "5e551000000000000000000000000002", "device": cpu["fingerprint"], "kernel": mm, "problem": pmm,
     "strategy": "guided", "budget_trials": 10, "budget_seconds": None, "started_at": ts, "ended_at": None,
     "wstune_version": "0.1.0", "host": "h",
     "trials": [trial(None, None, [40.0]), trial(8, 8, [20.0, 22.0])]},
]
def best(uuid, dev, kern, prob, x, y, ms, null_ms, rule_ms, session):
    return {"uuid": uuid, "device": dev, "kernel": kern, "problem": prob, "params": {},
            "local": {"x": x, "y": y, "dims": 2}, "global": None, "median_ms": ms, "null_ms": null_ms,
            "rule_ms": rule_ms, "session": session, "recorded_at": ts}
bests = [best("be570000000000000000000000000001", gpu["fingerprint"], bil, pbil, 16, 16, 0.5625, 1.375, 0.75,
              "5e551000000000000000000000000001"),
         best("be570000000000000000000000000002", cpu["fingerprint"], mm, pmm, 8, 8, 21.0, 40.0, None,
              "5e551000000000000000000000000002"),
         best("be570000000000000000000000000003", gpu["fingerprint"], mm, pmm, 32, 4, 0.25, 0.5, 0.375, None)]
runs = []
for n, (m, ms, sh) in enumerate([("baseline", 6.5, 0.33), ("paper", 12.5, 0.25), ("wstune", 4.5, 0.6)], 1):
    runs.append({"uuid": f"0000000000000000000000000000000{n}", "kernel": bil, "problem": pbil, "model": "x",
                 "makespan_ms": ms, "devices": [{"device": gpu["fingerprint"], "share": sh, "time_ms": ms},
                                                {"device": cpu["fingerprint"], "share": round(1 - sh, 2), "time_ms": 1.0}],
                 "detail": {"method": m}, "created_at": ts, "host": "h"})
cals = [{"uuid": "ca100000000000000000000000000001", "device": gpu["fingerprint"], "kernel": mm, "model": "measured",
         "params": {"points": [[256, 0.5], [1024, 1.5]]}, "created_at": ts}]
store = {"format": "wstune-store-export", "format_version": 2, "schema_version": 2, "wstune_version": "0.1.0",
         "exported_at": ts, "host": "h", "devices": [gpu, cpu], "sessions": sessions, "best_configs": bests,
         "split_runs": runs, "calibrations": cals}
w("store.json", store)
w("empty-store.json", {"format": "wstune-store-export", "format_version": 1, "devices": [], "sessions": [],
                       "best_configs": [], "split_runs": [], "calibrations": []})
bad = json.loads(json.dumps(store))
del bad["sessions"][0]["trials"][1]["samples_ms"]
w("bad-store.json", bad)
w("not-json.json", '{"format": "wstune-store-export", ')
w("cuda.json", {"ConfigurationSpace": {"TuningParameters": []}, "KernelSpecification": {"Language": "CUDA"}})
w("jobs-results-shm.json", {"jobs": [{"kernel": "sort", "results": "shm"}]})
w("jobs-deep.json", '{"jobs": [{"kernel": "sort", "seed": ' + "[" * 100000 + "]" * 100000 + "}]}")
PY
}

inner() {
  export S=$BC_S IN=$BC_S/in OUTD=$BC_S/out
  export TAB=$IN/tables EX=$IN/share/examples/kernels JOBS=$IN/daemon/testdata/small-jobs.json
  # tune: short, fixed repetitions (no adaptive sampling), generous timeout
  export T="--repeat 2 --min-time 0 --median-error 0 --trial-timeout 120"
  N=0 T0=$SECONDS
  : >"$BC_OUT"
  write_mask
  inputs

  # ---- wstune: help, version, the command list --------------------------
  c exact 'wstune --help'
  c exact 'wstune --version'
  c exact 'wstune -V'
  c exact 'wstune'
  c exact 'wstune frobnicate'
  local cmd
  for cmd in db devices export import query report run simulate split tune; do
    c exact "wstune $cmd --help"
  done
  c exact 'wstune run --version'

  # ---- devices -----------------------------------------------------------
  c text 'wstune devices'
  c json 'wstune devices --json'
  c text 'WSTUNE_PE_PER_CU="pthread=8" wstune devices'
  c -o 'col:^(pageable|pinned) ' text 'wstune devices --bandwidth --bytes 1048576 --repetitions 2 --device 0:1'
  c json 'wstune devices --bandwidth --bytes 1048576 --repetitions 2 --device 0:0,0:1 --json | tee $OUTD/bw.json'
  c text 'wstune devices --bandwidth --bytes 0 --device 0:0'
  c text 'wstune devices --bandwidth --bytes 1048576 --device 7:7'
  c text 'wstune devices --frobnicate'
  c text 'WSTUNE_PE_PER_CU="bad" wstune devices'

  # ---- run: built-in kernels, tuning files, usage errors ----------------
  c text 'wstune run --kernel matmul --size 64 --local 8,8 --repeat 2'
  c text 'wstune run --kernel matmul --size 64 --local 7,7 --repeat 1'
  c text 'wstune run --kernel bilinear --size 64x48:32x24 --local null --repeat 1'
  c json 'wstune run --kernel bilinear --size 32x32:64x64 --local 8,8 --repeat 2 --json'
  c text 'wstune run --kernel sort --size 1000 --repeat 2'
  c json 'wstune run --kernel sort --size 4096 --local 64 --repeat 2 --device 0:1 --json'
  c json 'wstune run --kernel trapezoid --size 1000 --repeat 1 --json'
  c text 'wstune run --kernel trapezoid --size 65536 --local 64 --repeat 2 --seed 7'
  c text 'wstune run --kernel-file $EX/matmul_tiled.json --size 64x64x64 --config TSM=32,TSN=32,TSK=16,WPTM=2,WPTN=4,VW=4 --repeat 2'
  c json 'wstune run --kernel-file $EX/matmul_tiled.json --size 64x64x64 --repeat 1 --json'
  c text 'wstune run --kernel-file $EX/stencil5.json --size 61x47 --config WPTX=2,WPTY=4 --local 16,2 --repeat 2'
  c text 'wstune run --kernel-file $EX/reduction.json --size 10007 --config IPT=4 --local 64 --repeat 2'
  c json 'wstune run --kernel-file $EX/stencil7_3d.json --size 17x13x11 --config WPTZ=2 --local 8,4,2 --repeat 2 --json'
  c text 'wstune run --kernel-file $IN/kernels/matmul.json --size 37x41x29 --repeat 1'
  c text 'wstune run --kernel-file $IN/kernels/bilinear.json --size IW=33,IH=20,OW=70,OH=41 --repeat 1'
  c text 'wstune run --kernel fft'
  c text 'wstune run --kernel matmul --size 12q'
  c text 'wstune run --kernel sort --size 1000 --local 7'
  c text 'wstune run --kernel matmul --size 64 --local 0'
  c text 'wstune run --kernel matmul --size 64 --local 8,8,8,8'
  c text 'wstune run --kernel matmul --size 64 --device no-such-gpu'
  c text 'WSTUNE_DEVICE=no-such-gpu wstune run --kernel matmul --size 32'
  c text 'wstune run --kernel matmul --size 64 --repeat 0'
  c text 'wstune run --kernel matmul --size 64 --repeat -1'
  c text 'wstune run --kernel trapezoid --size 8589934592:2147483648'
  c text 'wstune run --size 64'
  c text 'wstune run --kernel matmul --bogus'
  c text 'wstune run --kernel-file $S/none.json'
  c text 'wstune run --kernel-file $EX/matmul_tiled.json --config TSM=48'
  c text 'wstune run --kernel-file $EX/matmul_tiled.json --config TSM=16,TSN=16,WPTM=8,WPTN=8'
  c text 'wstune run --kernel-file $EX/matmul_tiled.json --size 64x64x64 --local 8,8'
  c text 'wstune run --kernel matmul --config TSM=16'

  # ---- tune: exhaustive, random and rule searches (their trial sets do not
  # depend on timing); the best row is chosen by timing and masked --------
  local best=(-o 'line:^best  ' -o 'col:^samples$')
  c "${best[@]}" text 'wstune tune --kernel trapezoid --size 1024 --strategy exhaustive --db $S/tune.db $T'
  c "${best[@]}" text 'wstune tune --kernel matmul --size 16 --strategy exhaustive --db $S/tune.db $T --heatmap $OUTD/heat.svg'
  f text "$OUTD/heat.svg"
  c -o best -o trials json 'wstune tune --kernel sort --size 256 --strategy exhaustive --db $S/tune.db $T --json'
  c "${best[@]}" text 'wstune tune --kernel bilinear --size 32x32:64x64 --strategy rule --no-store $T'
  c "${best[@]}" text 'wstune tune --kernel matmul --size 32 --strategy random --max-evals 6 --seed 5 --cold --db $S/tune.db $T'
  c "${best[@]}" text 'wstune tune --kernel-file $EX/stencil5.json --size 61x47 --strategy random --max-evals 10 --db $S/tune.db $T'
  c "${best[@]}" text 'wstune tune --kernel-file $EX/reduction.json --size 10007 --strategy random --max-evals 8 --db $S/tune.db $T'
  c "${best[@]}" text 'wstune tune --kernel-file $EX/matmul_tiled.json --size 64x64x64 --max-evals 8 --db $S/tune.db $T'
  c -o best -o trials json 'wstune tune --kernel-file $EX/stencil7_3d.json --size 17x13x11 --strategy random --max-evals 6 --no-store $T --json'
  c "${best[@]}" text 'wstune tune --kernel-file $IN/kernels/matmul.json --size 37x41x29 --strategy random --max-evals 6 --db $S/tune.db $T'
  # the same search again on the same database
  c "${best[@]}" text 'wstune tune --kernel trapezoid --size 1024 --strategy exhaustive --db $S/tune.db $T'
  c text 'wstune tune --kernel matmul --size 64 --max-evals=-3 --no-store'
  c text 'wstune tune --kernel matmul --size 64 --trial-timeout nan --no-store'
  c text 'wstune tune --kernel matmul --strategy hill --no-store'
  c text 'wstune tune --kernel matmul --repeat 0 --no-store'
  c text 'wstune tune --kernel matmul --min-time 1e9 --no-store'
  c text 'wstune tune --kernel matmul --median-error 1.5 --no-store'
  c text 'wstune tune --kernel-file $IN/cuda.json --db $S/tune.db'
  c text 'wstune tune --kernel-file $S/none.json --db $S/tune.db'
  c text 'wstune tune --kernel matmul --kernel-file $EX/stencil5.json'
  c text 'wstune tune --kernel-file $EX/stencil5.json --size M=4 --db $S/tune.db'
  c text 'wstune tune --kernel matmul --db ""'

  # ---- the store filled by those tunes -----------------------------------
  c text 'wstune db check --db $S/tune.db'
  c text 'wstune export $OUTD/tune-export.json --db $S/tune.db'
  f -o best -o trials json "$OUTD/tune-export.json"
  c text 'wstune export --format t4 $OUTD/tune-t4.json --db $S/tune.db'
  f -o trials json "$OUTD/tune-t4.json"
  c -o best json 'wstune query --db $S/tune.db --format json'
  c -o best json 'wstune query --kernel-file $EX/reduction.json --size 10007 --db $S/tune.db --format json'
  c -o 'line:^basic' text 'wstune query --kernel-file $EX/stencil5.json --size 61x47 --db $S/tune.db'
  c -o 'line:^basic' text 'wstune query --kernel-file $EX/stencil5.json --size 99x99 --db $S/tune.db'
  c text 'wstune report --db $S/tune.db --out $OUTD/report-tune'
  f text "$OUTD/report-tune"

  # ---- a store with fixed numbers: import, query, export, report ---------
  c exact 'wstune import $IN/store.json --db $S/syn.db'
  c exact 'wstune import $IN/store.json --db $S/syn.db'
  c exact 'wstune db check --db $S/syn.db'
  c exact 'wstune query --db $S/syn.db'
  c exact 'wstune query --db $S/syn.db --format csv --history'
  c exact 'wstune query --db $S/syn.db --format json --device "Fake CPU"'
  c exact 'wstune query --db $S/syn.db --kernel matmul --size 1024x1024 --device "Fake GPU"'
  c exact 'wstune query --db $S/syn.db --kernel matmul --size 1000x1000 --device "Fake GPU" --format json'
  c exact 'wstune query --db $S/syn.db --kernel bilinear --size 2048x2048 --device "Fake CPU"'
  c exact 'wstune query --db $S/syn.db --kernel matmul --size 512x512 --device 0:0'
  c exact 'wstune export $OUTD/syn-export.json --db $S/syn.db'
  f exact "$OUTD/syn-export.json"
  c exact 'wstune export - --format t4 --db $S/syn.db'
  c exact 'wstune export $OUTD/syn-t4.json --format t4 --db $S/syn.db --session 2'
  f exact "$OUTD/syn-t4.json"
  c exact 'wstune import $OUTD/syn-export.json --db $S/syn2.db'
  c exact 'wstune export $OUTD/syn2-export.json --db $S/syn2.db && diff <(grep -v exported_at $OUTD/syn-export.json) <(grep -v exported_at $OUTD/syn2-export.json) && echo round trip identical'
  c exact 'wstune simulate $OUTD/syn-export.json --session 5e551000000000000000000000000001 --strategy exhaustive'
  c exact 'wstune report --db $S/syn.db --out $OUTD/report-syn --title "behaviour check"'
  f exact "$OUTD/report-syn"
  c exact 'wstune import $IN/empty-store.json --db $S/empty.db && wstune report --db $S/empty.db --out $OUTD/report-empty'
  f exact "$OUTD/report-empty"
  c exact 'wstune db path'
  c exact 'WSTUNE_DB=$S/env.db wstune db path'
  c exact 'wstune db path --db $S/x.db'
  c exact 'wstune db check'
  c exact 'wstune db frobnicate'
  c exact 'wstune db check --db $S/no/such/dir/x.db'
  c exact 'wstune db check --db ""'
  c exact 'wstune query --db $S/syn.db --format xml'
  c exact 'wstune query --db $S/syn.db --size 64'
  c exact 'wstune query --db $S/syn.db --kernel matmul --size null'
  c exact 'wstune query --db $S/missing.db'
  c exact 'wstune export --format xml $S/x.json --db $S/syn.db'
  c exact 'wstune export --session 1 $S/x.json --db $S/syn.db'
  c exact 'wstune export $S/nodir/x.json --db $S/syn.db'
  c exact 'wstune export $S/x.json --session 1 --db $S/syn.db'
  c exact 'wstune export --db $S/syn.db'
  c exact 'wstune import $S/missing.json --db $S/imp.db'
  c exact 'wstune import $IN/bad-store.json --db $S/imp.db'
  c exact 'wstune import $IN/not-json.json --db $S/imp.db'
  c exact 'wstune import $IN/cuda.json --db $S/imp.db'
  c exact 'wstune report --db $S/missing.db --out $OUTD/x'
  c exact 'wstune report --db $S/syn.db'

  # ---- simulate: recorded tables, fixed seeds (fully deterministic) ------
  c exact 'wstune simulate $TAB/trapezoid-65536-pocl.json --strategy exhaustive'
  c exact 'wstune simulate $TAB/matmul-256-pocl.json --strategy random --seed 3 --max-evals 10'
  c exact 'wstune simulate $TAB/matmul-256-pocl.json --strategy guided'
  c exact 'wstune simulate $TAB/bilinear-1024-pocl.json --strategy genetic --seed 7 --max-evals 20'
  c exact 'wstune simulate $TAB/stencil5-pocl.json --strategy annealing --seed 11 --max-evals 40'
  c exact 'wstune simulate $TAB/stencil5-pocl.json --strategy differential --seed 11 --max-evals 40 --json'
  c exact 'wstune simulate $TAB/stencil5-4096-h100.json --strategy portfolio --seed 2'
  c exact 'wstune simulate $TAB/stencil7-3d-256-h100.json --strategy bayes --seed 5 --max-evals 30 --json'
  c exact 'wstune simulate $TAB/stencil7-3d-pocl.json --strategy rule'
  c exact 'wstune simulate $TAB/reduction-16m-h100.json'
  c exact 'wstune simulate $TAB/matmul_tiled-1024-h100.json --strategy annealing --seed 4 --max-evals 150'
  c exact 'wstune simulate $IN/t4.json --strategy exhaustive'
  c exact 'wstune simulate $IN/t4.json --json --max-evals 5 --strategy bayes'
  c exact 'wstune simulate $IN/bad-t4.json'
  c exact 'wstune simulate $S/missing.json'
  c exact 'wstune simulate $IN/t4.json --strategy hill'
  c exact 'wstune simulate'

  # ---- split: plans (no measurement), runs (times masked), usage errors ---
  c text 'wstune split --kernel matmul --size 256 --devices 0:0,0:1'
  c json 'wstune split --kernel bilinear --size 512x512:1024x1024 --devices 0:0,0:1 --json'
  c text 'wstune split --kernel sort --size 4096 --devices 0:0,0:1 --model proportional'
  c text 'wstune split --kernel trapezoid --size 65536 --devices 0:0,0:1,0:1'
  c text 'wstune split --kernel matmul --size 256 --devices 0:1,0:0 --direction x --local rule'
  c text 'wstune split --kernel-file $EX/stencil5.json --size 64x96 --config WPTY=2 --devices 0:0,0:1 --model proportional'
  c text 'wstune split --kernel trapezoid --size 65536 --devices 0:0,0:1 --run --repeat 2'
  c json 'wstune split --kernel matmul --size 128 --devices 0:0,0:1 --run --repeat 1 --json'
  c text 'wstune split --kernel sort --size 4096 --devices 0:0,0:0 --run --repeat 1 --bandwidth $OUTD/bw.json'
  c text 'wstune split --kernel-file $EX/stencil5.json --size 64x96 --config WPTY=2 --devices 0:0,0:1 --run --repeat 1'
  # the sweep adds 1 % steps near the best share, which is measured: only
  # the STEP % points are kept, and the SVG's element kinds
  local sweep=(-o 'keep:^(percent_first|0|50|100),|^best: |^wstune' -o 'line:^best: ' -o tagsonly)
  c "${sweep[@]}" text 'wstune split --kernel trapezoid --size 4096 --devices 0:0,0:1 --sweep 50 --repeat 1 --csv $OUTD/sweep.csv --svg $OUTD/sweep.svg'
  f "${sweep[@]}" text "$OUTD/sweep.csv" "$OUTD/sweep.svg"
  # measured: calibration and refinement are timing; kept: status and reuse
  local measured='wstune split --kernel trapezoid --size 65536 --devices 0:0,0:1 --model measured --run --repeat 2 --refine 5 --refine-repeat 2 --db $S/split.db'
  c -o 'keep:^(status:|calibration: (measured|stored)|wstune split:)' -o 'sub:\([0-9]+ slices\)=>(<N> slices)' text "$measured"
  c -o 'keep:^(status:|calibration: (measured|stored)|wstune split:)' text "$measured"
  c text 'wstune split --kernel matmul --size 256 --devices 0:0,0:1 --model sideways'
  c text 'wstune split --kernel matmul --size 256'
  c text 'wstune split --kernel matmul --size 256 --devices 0:0,0:1 --sweep 0'
  c text 'wstune split --kernel matmul --size 256 --devices 0:0,0:1 --sweep 7'
  c text 'wstune split --kernel matmul --size 256 --devices 0:0,0:1,0:1 --sweep 7'
  c text 'wstune split --kernel matmul --size 256 --devices 0:0,0:1,0:1 --sweep 10 --svg $OUTD/x.svg'
  c text 'wstune split --kernel sort --size 4096 --devices 0:0,0:0 --run --bandwidth /no/such/file.json'
  c text 'wstune split --kernel matmul --size 256 --devices 0:0,0:1 --local 8,8/8,8/8,8'
  c text 'wstune split --kernel matmul --size 256 --devices 0:0,0:1 --repeat 0'
  c text 'wstune split --kernel matmul --size 256 --devices 0:0,no-such-device'
  c text 'wstune split --kernel-file $EX/reduction.json --devices 0:0,0:1'

  # ---- wstuned ------------------------------------------------------------
  local reg=(-o 'sort:worker rank [0-9]+ on .* registered')
  # the device groups search at once: which one ends first is timing (sorted)
  local dbest=(-o best -o trials -o 'sub:, best .* <T> ms$=>, best <BEST>' -o 'sort:searched [0-9]+ of [0-9]+ configurations')
  c exact 'wstuned --help'
  c exact 'wstuned --version'
  c text 'wstuned --bogus'
  c "${reg[@]}" json 'mpiexec -n 3 wstuned --job $JOBS --db $S/daemon.db --json --timeout 120'
  c text 'wstune db check --db $S/daemon.db'
  c "${reg[@]}" text 'mpiexec -n 3 wstuned run --kernel matmul sort --size 64 --split even --db $S/daemon2.db'
  c "${reg[@]}" json 'mpiexec -n 3 wstuned --job $JOBS --db $S/fault.db --json --timeout 120 --inject-fault 2=build'
  c "${reg[@]}" json 'mpiexec -n 3 wstuned --job $JOBS --db $S/crash.db --json --timeout 120 --inject-fault 2=crash'
  # the ranks' refusals reach stderr in any order: sorted
  c -o 'sort:.' json 'mpiexec -n 3 wstuned --kernel trapezoid sort --size 4096 --db $S/refused.db --json --timeout 120 --worker-device 2=no-such-device'
  c -o 'sort:.' text 'mpiexec -n 3 wstuned --kernel trapezoid --size 4096 --db $S/refused2.db --timeout 120 --device no-such-device'
  c "${reg[@]}" "${dbest[@]}" json 'mpiexec -n 4 wstuned tune --kernel trapezoid --size 4096 --strategy exhaustive -r 2 --db $S/dtune.db --json --timeout 120'
  c text 'wstune db check --db $S/dtune.db'
  c -o best -o trials json 'wstune export - --db $S/dtune.db'
  c "${reg[@]}" "${dbest[@]}" json 'mpiexec -n 4 wstuned tune --kernel trapezoid --size 4096 --strategy exhaustive -r 2 --db $S/dtune.db --json --timeout 120'
  c "${reg[@]}" "${dbest[@]}" json 'mpiexec -n 3 wstuned tune --kernel-file $EX/stencil5.json --size 16x16 --strategy random --max-trials 6 -r 1 --db $S/dtune2.db --json --timeout 120'
  c "${reg[@]}" -o 'keep:"(mode|status|model|verified|kernel|size)":|wstuned: .*(rank|stored|error)' json 'mpiexec -n 3 wstuned calibrate --kernel trapezoid --size 65536 --db $S/dcal.db --json --timeout 120'
  c "${reg[@]}" -o 'keep:"(mode|status|model|verified|kernel|size)":|wstuned: .*(rank|stored|error)' json 'mpiexec -n 3 wstuned run --kernel trapezoid --size 65536 --split measured --db $S/dcal.db --json --timeout 120'
  c "${reg[@]}" json 'mpiexec -n 3 wstuned run --kernel-file $EX/stencil5.json --size 64x96 --config "{\"WPTY\": 2}" --split even -r 1 --db $S/dfile.db --json --timeout 120'
  c "${reg[@]}" text 'mpiexec -n 3 wstuned run --kernel-file $EX/reduction.json --db $S/dfile.db --timeout 120'
  c text 'mpiexec -n 2 wstuned --kernel matmul --split sideways --db $S/usage.db --json; rc=$?; test -e $S/usage.db || echo nothing stored; exit $rc'
  c text 'mpiexec -n 3 wstuned --kernel trapezoid --size 4096 --db $S/usage.db --inject-fault 9=build'
  c text 'mpiexec -n 3 wstuned --kernel trapezoid --size 4096 --db $S/usage.db --repetitions banana'
  c text 'mpiexec -n 3 wstuned --job $IN/jobs-results-shm.json --db $S/usage.db'
  c text 'mpiexec -n 3 wstuned --job $IN/jobs-deep.json --db $S/usage.db'
  c text 'mpiexec -n 3 wstuned --job $S/missing.json --db $S/usage.db'
  c text 'mpiexec -n 2 wstuned --db $S/usage.db'
}

case ${1:-} in
  record) shift; record "$@" ;;
  compare) shift; compare "$@" ;;
  check) shift; check "$@" ;;
  __record) inner ;;
  *) usage ;;
esac
