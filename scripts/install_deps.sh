#!/usr/bin/env bash
# Installs every Debian 12 package Chorus builds, tests and benchmarks with. Skips apt when all are present.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config python3
  libssl-dev libtinyxml2-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libopenmpi-dev openmpi-bin libhwloc-dev libibverbs-dev libopenblas-dev zlib1g-dev jargon-text
  gnuplot-nox graphviz iproute2 clang libclang-rt-14-dev
  python3-torch libtorch-dev pybind11-dev python3-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install_deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
