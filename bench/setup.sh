#!/usr/bin/env bash
# Installs the benchmark's Python side into bench/.venv: the peers (pinned) and matplotlib for the plots.
set -euo pipefail
cd "$(dirname "$0")"
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check ladybug==0.22.0 kuzu==0.11.3 duckdb==2.0.0 matplotlib==3.11.2
