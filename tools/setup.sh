#!/usr/bin/env bash
# Installs what mpix_sparse needs on Debian 12 (as root, or with sudo), skipping what is present.
set -euo pipefail

packages=(
  g++ cmake make pkg-config
  clang libclang-rt-14-dev
  libopenmpi-dev openmpi-bin
  libmpich-dev mpich
  libucx-dev ucx-utils
  libgtest-dev
  libboost-dev libboost-program-options-dev
  libhwloc-dev
  gnuplot-nox python3 doxygen
  python3-numpy python3-mpi4py python3-venv python3-pip python3-setuptools
  iproute2 util-linux
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "setup: all packages present"
  exit 0
fi

sudo=""
if ((EUID != 0)); then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
