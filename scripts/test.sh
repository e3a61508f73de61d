#!/usr/bin/env bash
# Runs every test: set up, build, then CTest (unit, error, differential and app tests, and the
# outside-project find_package check).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
cd "${TESSERA_BUILD_DIR:-build}"
ctest --output-on-failure --parallel "$(nproc)" "$@"
