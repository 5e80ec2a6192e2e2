# Shared by the CLI test scripts: expect CODE PATTERN -- command...
# runs the command, checks its exit status and that its output (stdout and
# stderr) matches the extended regular expression PATTERN ("" for any), and
# counts failures in $fails.
fails=${fails:-0}
expect() {
  local code=$1 pattern=$2; shift 3
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" != "$code" ]; then
    echo "FAIL: '$*' exited $rc, expected $code"; echo "$out" | tail -8; fails=$((fails+1)); return
  fi
  if [ -n "$pattern" ] && ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL: '$*' output lacks /$pattern/"; echo "$out" | tail -8; fails=$((fails+1)); return
  fi
  echo "ok: $*"
}
