#!/usr/bin/env bash
# Installs einexpr's Debian packages that are missing (idempotent; a no-op when all are there).
set -euo pipefail
packages=(cmake ninja-build g++ tao-pegtl-dev libeigen3-dev catch2 libcli11-dev
          nlohmann-json3-dev libfmt-dev libbenchmark-dev libopenblas-dev libsleef-dev)
packages+=("$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "scripts/deps.sh: installing ${missing[*]}" >&2
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq || true
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
