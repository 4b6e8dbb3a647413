#!/usr/bin/env python3
"""Writes every statement of tests/queries/**/*.test into fuzz/corpus/statement/, one file each: the starting
corpus of the `statement` target."""
import pathlib

root = pathlib.Path(__file__).resolve().parent.parent
out = root / "fuzz" / "corpus" / "statement"
out.mkdir(parents=True, exist_ok=True)
n = 0
for f in sorted((root / "tests" / "queries").rglob("*.test")):
    lines = f.read_text().splitlines()
    i = 0
    while i < len(lines):
        header = lines[i].strip()
        i += 1
        if not (header.startswith("statement") or header.startswith("query") or header == "plan"):
            continue
        stmt = []
        while i < len(lines) and lines[i].strip() and lines[i].rstrip() != "----":
            stmt.append(lines[i])
            i += 1
        (out / f"{n:05}").write_text("\n".join(stmt))
        n += 1
print(f"{n} statements in {out}")
