#!/usr/bin/env bash
# Installs missing dependencies (idempotent), then configures and builds Tessera in build/, and
# installs the Python package into build/python-venv (scripts/python_env.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
BUILD_DIR="${TESSERA_BUILD_DIR:-build}"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD_DIR" --parallel "$(nproc)"
./scripts/python_env.sh
