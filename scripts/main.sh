#!/usr/bin/env bash
# The main job: set up, build, and run the blur_x_blur_y app, which checks itself against a
# plain C++ implementation and prints the result; then the same pipeline compiled for a GPU
# (Target::cuda(80)), its kernels run by the GPU emulator (docs/gpu.md), checked the same way,
# and on the machine's CUDA GPU when it has one.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh
"${TESSERA_BUILD_DIR:-build}/apps/blur_x_blur_y" "$@"
echo
"${TESSERA_BUILD_DIR:-build}/apps/blur_x_blur_y" --gpu
