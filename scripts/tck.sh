#!/usr/bin/env bash
# Runs NebulaGraph's own TCK (the feature files in ../shared/nebula-tck, read in place, never copied here) through
# ../shared/tck-runner and the real nebula3-python client: against a fresh `quiver serve`, then against a fresh
# `quiver playground` (a cluster of processes) for the folders listed in tests/tck-playground-folders.txt. Prints
# the runner's per-folder tables and one line per target, `tck <target>: <passed> passed, <failed> failed, ...`,
# and fails when fewer scenarios pass than tests/tck-floor.txt says for that target (the floor only goes up: raise
# it in the commit that makes more pass). QUIVER_BIN picks the binary (target/debug/quiver), QUIVER_SHARED the
# shared folder (../shared), QUIVER_TCK_TARGETS the targets (`embedded playground`).
set -uo pipefail
cd "$(dirname "$0")/.."
bin="${QUIVER_BIN:-$PWD/target/debug/quiver}"
shared="${QUIVER_SHARED:-$PWD/../shared}"
targets="${QUIVER_TCK_TARGETS:-embedded playground}"
runner="$shared/tck-runner/run_tck.py"
[ -x "$bin" ] || { echo "tck: $bin is not built (cargo build -p quiver)" >&2; exit 1; }
[ -f "$runner" ] || { echo "tck: the runner is not at $runner" >&2; exit 1; }
[ -d "$shared/nebula-tck/features" ] || { echo "tck: the feature files are not in $shared/nebula-tck" >&2; exit 1; }

venv=target/client-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" || { echo "tck: cannot create a Python venv" >&2; exit 1; }
fi
"$venv/bin/pip" install -q --disable-pip-version-check -r "$shared/tck-runner/requirements.txt" \
  || { echo "tck: pip install failed" >&2; exit 1; }

floor_of() { awk -v t="$1" '$1 == t { print $2 }' tests/tck-floor.txt; }
free_port() { "$venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

work=$(mktemp -d)
pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# Starts the target's server in the background; sets `pid` and `port` (the graph protocol's).
start() {
  case "$1" in
    embedded)
      port=$(free_port); local http; http=$(free_port)
      # As NebulaGraph's test harness (`tests/common/nebula_service.py`) runs graphd: one partition per space by
      # default, authorization on, five wrong passwords lock a user for ten seconds.
      "$bin" serve --data-dir "$work/embedded" --graph-addr "127.0.0.1:$port" --http-addr "127.0.0.1:$http" \
        --default-parts-num 1 --enable-authorize --failed-login-attempts 5 --password-lock-time-in-secs 10 \
        >"$work/embedded.log" 2>&1 &
      pid=$!
      for _ in $(seq 1 300); do
        "$venv/bin/python" -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$http/api/v1/health', timeout=1)" \
          >/dev/null 2>&1 && return 0
        sleep 0.1
      done
      ;;
    playground)
      local offset=$((3000 + $$ % 20000))
      "$bin" playground --dir "$work/playground" --port-offset "$offset" >"$work/playground.log" 2>&1 &
      pid=$!
      for _ in $(seq 1 1200); do
        if grep -q '^playground ready' "$work/playground.log"; then
          port=$(awk '$1 == "graphd" { n = split($2, a, ":"); print a[n] }' "$work/playground.log" | head -1)
          return 0
        fi
        sleep 0.1
      done
      ;;
  esac
  echo "tck: the $1 server did not become ready:" >&2
  tail -20 "$work/$1.log" >&2
  return 1
}

status=0
for target in $targets; do
  floor=$(floor_of "$target")
  [ -n "$floor" ] || { echo "tck: tests/tck-floor.txt has no floor for $target" >&2; status=1; continue; }
  start "$target" || { status=1; continue; }
  features=()
  if [ "$target" = playground ]; then
    mapfile -t features < <(grep -v '^\s*\(#\|$\)' tests/tck-playground-folders.txt)
  fi
  "$venv/bin/python" "$runner" --host 127.0.0.1 --port "$port" --wait-cap 0 --timeout 30 \
    --json-out "$work/$target.json" ${features[@]+--features "${features[@]}"}
  code=$?
  # The TTL scenarios wait for rows to expire: run them again with their waits (about 100 s), and count that run.
  if [ "$target" = embedded ] && [ "$code" -ne 2 ]; then
    "$venv/bin/python" "$runner" --host 127.0.0.1 --port "$port" --wait-cap 12 --timeout 30 -q \
      --json-out "$work/$target-timed.json" --features features/ttl
  fi
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; pid=""
  if [ "$code" -eq 2 ] || [ ! -f "$work/$target.json" ]; then
    echo "tck: the $target run was aborted (runner exit $code)" >&2
    tail -20 "$work/$target.log" >&2
    status=1
    continue
  fi
  read -r passed failed skipped < <("$venv/bin/python" - "$work/$target.json" "$work/$target-timed.json" <<'EOF'
import json, os, sys
# A scenario of the timed run counts as that run says, in place of its run without waits.
status = {s["id"]: s["status"] for s in json.load(open(sys.argv[1]))["scenarios"]}
if os.path.exists(sys.argv[2]):
    status.update({s["id"]: s["status"] for s in json.load(open(sys.argv[2]))["scenarios"]})
print(*(sum(1 for v in status.values() if v == k) for k in ("passed", "failed", "skipped")))
EOF
)
  echo "tck $target: $passed passed, $failed failed, $skipped skipped (floor $floor)"
  if [ "$passed" -lt "$floor" ]; then
    echo "tck: $target passes $passed scenarios, below the floor of $floor in tests/tck-floor.txt" >&2
    status=1
  fi
done
exit "$status"
