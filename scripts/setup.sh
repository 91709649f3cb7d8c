#!/usr/bin/env bash
# Installs what mla needs on a Debian 12 machine (only when something is missing),
# then configures and builds the project into ./build with -j2.
#
#   scripts/setup.sh            # packages + configure + build
#   MLA_BUILD_DIR=out scripts/setup.sh
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${MLA_BUILD_DIR:-$root/build}

# Debian 12 packages only. LLVM/MLIR 22.1 (llvm-22*, libmlir-22-dev, mlir-22-tools, lld-22),
# GoogleTest, Debian's Python stack (numpy, pytest, pybind11; torch 1.13 CPU for the
# tests of tensor inputs; build, setuptools, wheel and pip to build and install the runtime
# wheel) for /usr/bin/python3, and clang-22 with its sanitizer and
# libFuzzer runtimes for scripts/run-sanitizers.sh.
packages=(
  cmake ninja-build g++ make
  llvm-22 llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools lld-22
  libgtest-dev libgmock-dev
  python3 python3-dev python3-numpy python3-pytest pybind11-dev python3-torch
  python3-build python3-setuptools python3-wheel python3-pip
  clang-22 libclang-rt-22-dev libfuzzer-22-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DPython3_EXECUTABLE=/usr/bin/python3
fi
cmake --build "$build" -j2
