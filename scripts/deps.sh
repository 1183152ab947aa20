#!/usr/bin/env bash
# Installs einexpr's Debian packages that are missing (idempotent; a no-op when all are there).
set -euo pipefail
packages=(cmake ninja-build g++ tao-pegtl-dev libeigen3-dev catch2 libcli11-dev
          nlohmann-json3-dev libbenchmark-dev libopenblas-dev libdlpack-dev libsleef-dev
          libopenmpi-dev openmpi-bin)
packages+=("$@")
# The Python module (EINEXPR_PYTHON=AUTO in scripts/test.sh) and its tests, which compare
# einexpr with numpy and torch: installed where possible; without them the module is skipped.
# python3-scipy: HiGHS's integer programs for bench/recompute_ilp.py (no test needs it).
optional=(python3-dev pybind11-dev python3-numpy python3-pytest python3-torch python3-scipy)

missing_of() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}
mapfile -t missing < <(missing_of "${packages[@]}")
mapfile -t missing_optional < <(missing_of "${optional[@]}")
if ((${#missing[@]} + ${#missing_optional[@]})); then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq || true
  if ((${#missing[@]})); then
    echo "scripts/deps.sh: installing ${missing[*]}" >&2
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  if ((${#missing_optional[@]})); then
    echo "scripts/deps.sh: installing ${missing_optional[*]} (for the Python module)" >&2
    $SUDO apt-get install -y -qq --no-install-recommends "${missing_optional[@]}" >/dev/null ||
      echo "scripts/deps.sh: could not install ${missing_optional[*]}: the Python module or its tests will be skipped" >&2
  fi
fi
