#!/usr/bin/env bash
# Installs the benchmark's peers into bench/.venv: the Python ones and matplotlib for the plots (pinned, PyPI), and
# the Neo4j peer (bench/neo4j: Neo4j 5.26.30 embedded from Maven Central, compiled against the resolved class path
# into bench/.venv/neo4j/). Needs python3, java 17 and mvn.
set -euo pipefail
cd "$(dirname "$0")"
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check ladybug==0.22.0 kuzu==0.11.3 duckdb==2.0.0 matplotlib==3.11.2
mkdir -p .venv/neo4j/classes
mvn -q -B -f neo4j/pom.xml dependency:build-classpath -Dmdep.outputFile="$PWD/.venv/neo4j/classpath.txt"
javac -nowarn -d .venv/neo4j/classes -cp "$(cat .venv/neo4j/classpath.txt)" neo4j/NeoPeer.java
