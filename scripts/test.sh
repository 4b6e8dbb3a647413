#!/usr/bin/env bash
# Runs every test: unit tests, the engine conformance suite on every engine, the query files, the process tests,
# the real NebulaGraph clients (scripts/client-tests.sh) and NebulaGraph's TCK (scripts/tck.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
log=$(mktemp)
set +e
cargo test --workspace --no-fail-fast 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
# The real NebulaGraph clients (nebula3-python, nebula-go) against the binary the tests above built.
scripts/client-tests.sh 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
# NebulaGraph's own TCK against `quiver serve` and a playground, held to the floors in tests/tck-floor.txt.
scripts/tck.sh 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
set -e
passed=$(awk '/^test result:/ { for (i = 1; i <= NF; i++) if ($i ~ /^passed/) p += $(i-1) } /^client-tests / { p += $3 } END { print p + 0 }' "$log")
failed=$(awk '/^test result:/ { for (i = 1; i <= NF; i++) if ($i ~ /^failed/) f += $(i-1) } /^client-tests / { f += $5 } END { print f + 0 }' "$log")
rm -f "$log"
echo "tests: ${passed:-0} passed, ${failed:-0} failed"
exit "$status"
