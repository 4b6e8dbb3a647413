#!/usr/bin/env bash
# Installs what building Quiver needs on a fresh Debian machine: clang/libclang (bindgen) and Debian's RocksDB.
set -euo pipefail
need=()
# openssl: the CLI the TLS tests make their certificates with.
for pkg in clang libclang-dev librocksdb-dev openssl; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
command -v cargo >/dev/null || { echo "setup: cargo is not installed (install Rust with rustup first)" >&2; exit 1; }
