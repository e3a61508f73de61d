#!/usr/bin/env bash
# Installs what a fresh Debian 12 (bookworm) machine lacks to build and test Tessera.
# Idempotent: packages already present are skipped, so running it twice is cheap.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git python3
  python3-dev python3-venv  # the Python package (scripts/python_env.sh builds it in a venv)
  libisl-dev
  llvm-19-dev clang-19 lld-19 liblld-19-dev libomp-19-dev
  zlib1g-dev libzstd-dev libedit-dev libxml2-dev libffi-dev libcurl4-openssl-dev
  nlohmann-json3-dev catch2
  chromium  # the HTML report's browser test (tests/report): headless, no display needed
  libopenblas-dev  # bench/ only: the sgemm baseline of bench/run_matmul_benchmark.py and run_dnn_benchmark.py
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "setup: all packages present"
fi

# The CUDA toolkit is optional: it enables the PTX assembly checks (ptxas) and libdevice.
for d in "${CUDA_HOME:-}" /usr/local/cuda; do
  if [ -n "$d" ] && [ -x "$d/bin/ptxas" ]; then
    echo "setup: CUDA toolkit found at $d"
    exit 0
  fi
done
echo "setup: no CUDA toolkit found (GPU assembly checks will be skipped)"
