#!/usr/bin/env bash
# Builds Quiver, starts the embedded server with the nba demo graph, and opens the console.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build --release
addr=127.0.0.1:19669
target/release/quiver serve --demo --http-addr "$addr" > quiver-serve.log 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null' EXIT
for _ in $(seq 1 300); do
  curl -fs "http://$addr/api/v1/health" >/dev/null 2>&1 && break
  kill -0 $pid 2>/dev/null || { cat quiver-serve.log; exit 1; }
  sleep 0.1
done
echo "Quiver is serving on $addr (log: quiver-serve.log). Try: USE nba; FETCH PROP ON player \"Tim Duncan\" YIELD properties(vertex);"
target/release/quiver console --addr "$addr"
