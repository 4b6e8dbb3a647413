#!/usr/bin/env bash
# Runs the real NebulaGraph clients against Quiver: nebula3-python (pytest) and nebula-go (go test). Each suite
# starts its own `quiver serve` from target/debug (QUIVER_BIN overrides), then again its own `quiver playground`. Prints one line per suite:
# `client-tests <suite>: <passed> passed, <failed> failed`.
set -uo pipefail
cd "$(dirname "$0")/.."
export QUIVER_BIN="${QUIVER_BIN:-$PWD/target/debug/quiver}"
status=0
command -v go >/dev/null || { echo "client-tests: go is not installed (needed by the nebula-go tests)" >&2; exit 1; }
python3 -m venv --help >/dev/null 2>&1 || { echo "client-tests: python3 with venv is not installed (needed by the nebula3-python tests)" >&2; exit 1; }

venv=target/client-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" || { echo "client-tests: cannot create a Python venv" >&2; exit 1; }
fi
"$venv/bin/pip" install -q --disable-pip-version-check -r tests/clients/python/requirements.txt || { echo "client-tests: pip install failed" >&2; exit 1; }
log=$(mktemp)
"$venv/bin/python" -m pytest -q -p no:cacheprovider tests/clients/python 2>&1 | tee "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
p=$(grep -Eo '[0-9]+ passed' "$log" | tail -1 | grep -Eo '[0-9]+'); f=$(grep -Eo '[0-9]+ (failed|error)' "$log" | awk '{s += $1} END {print s + 0}')
echo "client-tests python: ${p:-0} passed, ${f:-0} failed"

(cd tests/clients/go && go test -count=1 -v ./...) 2>&1 | tee "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
p=$(grep -c -- '^--- PASS' "$log"); f=$(grep -c -- '^--- FAIL' "$log")
echo "client-tests go: ${p:-0} passed, ${f:-0} failed"
# The same clients against a cluster of processes (`quiver playground --demo`).
QUIVER_PLAYGROUND=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider tests/clients/python/test_nebula3.py 2>&1 | tee "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
p=$(grep -Eo '[0-9]+ passed' "$log" | tail -1 | grep -Eo '[0-9]+'); f=$(grep -Eo '[0-9]+ (failed|error)' "$log" | awk '{s += $1} END {print s + 0}')
echo "client-tests python-cluster: ${p:-0} passed, ${f:-0} failed"

(cd tests/clients/go && QUIVER_PLAYGROUND=1 go test -count=1 -v ./...) 2>&1 | tee "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
p=$(grep -c -- '^--- PASS' "$log"); f=$(grep -c -- '^--- FAIL' "$log")
echo "client-tests go-cluster: ${p:-0} passed, ${f:-0} failed"
rm -f "$log"
exit "$status"
