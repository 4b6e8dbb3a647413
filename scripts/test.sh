#!/usr/bin/env bash
# Runs every test: unit tests, the engine conformance suite on every engine, the query files, and the process tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo test --workspace --no-fail-fast
