#!/usr/bin/env bash
# The checks that need a real NVIDIA GPU, in one go, on a machine that has one (docs/gpu.md):
#   1. the device tests (tests/gpu/test_cuda_device.cpp): every app on Target::cuda(sm) against
#      its plain loops and the emulator;
#   2. the main job's GPU mode: blur_x_blur_y --gpu (the emulator, then the GPU, both checked);
#   3. random pipelines on the GPU against the interpreter (tessera-fuzz --device);
#   4. the GPU benchmark (bench/run_gpu_benchmark.py: blur against a device-to-device copy and
#      torch, when torch with CUDA is there);
#   5. a sweep of blur's rows per thread step, tiles, aligned warps, staged inputs and column
#      windows
#      (bench_gpu_blur sweep);
#   6. the hand-written CUDA blur variants, the ceiling for Tessera's kernel
#      (bench/gpu_blur_reference.cu), when nvcc is there.
# Each step has a time limit; the script goes on after a failure and exits non-zero if any failed.
# Without a usable GPU it prints "no GPU" and exits 0. For a GPU machine without this project's
# dependencies, scripts/gpu_bundle.sh packs all of it with its libraries.
#
#   scripts/gpu_check.sh [BUILD_DIR] [FUZZ_SEEDS]      (defaults: build, 100)
set -u
build=${1:-build}
seeds=${2:-100}
root=$(cd "$(dirname "$0")/.." && pwd)
failed=0

step() {  # step NAME SECONDS COMMAND...
    local name=$1 limit=$2
    shift 2
    echo "==== $name"
    local start=$SECONDS
    timeout "$limit" "$@"
    local rc=$?
    echo "==== $name: exit $rc after $((SECONDS - start)) s"
    [ $rc -eq 0 ] || failed=1
    return $rc
}

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
step "device tests" 130 "$build/tests/tessera_cuda_device_tests" --durations yes
if [ $? -eq 77 ]; then  # no usable GPU here: nothing else to run (the program said why)
    echo "no GPU"
    exit 0
fi
# The main job's GPU mode runs the emulator first (seconds per megapixel): modest sizes.
step "blur_x_blur_y --gpu" 60 "$build/apps/blur_x_blur_y" --gpu --size 1024 768 --runs 20
step "harris --gpu" 60 "$build/apps/harris" --gpu --size 768 512 --runs 20
# --slow-ms: a compile's CPU time counts every thread's, and a GPU machine's cores may be slower.
step "random pipelines on the GPU" 130 "$build/tests/tessera-fuzz" --device --isolate --progress --slow-ms 10000 \
    --count "$seeds" --seed 1
step "GPU benchmark" 70 python3 "$root/bench/run_gpu_benchmark.py" --build "$build" --size 4096 4096 --runs 50
# Rows per thread step, tile shapes, aligned warps and staged inputs for blur, interleaved in one
# process, a line per result (bench/gpu_blur.cpp; 0x0:0 is the default).
sm=$(python3 -c "import sys; sys.path.insert(0, '$root/bench'); import run_gpu_benchmark as b; print(b.gpu_compute_capability() or 0)")
step "blur sweep (rows per thread step, tiles, alignment, staging, column windows)" 120 "$build/bench/bench_gpu_blur" "$sm" 4096 4096 30 sweep 2 \
    0x0:0 0x0:1 0x0:2 0x0:8 512x64:0 512x16:0 256x32:0 \
    0x0:0:shared 0x0:2:shared 0x0:8:shared 256x32:0:shared 512x16:0:shared 0x0:0:shared:rows 0x0:0:shared:jammed 0x0:8:staged
if command -v nvcc >/dev/null; then
    reference=$(mktemp -d)/gpu_blur_reference
    arch=$([ "$sm" != 0 ] && echo "sm_$sm" || echo native)
    step "hand-written CUDA blur (the ceiling)" 90 sh -c "nvcc -O3 -arch=$arch -std=c++17 '$root/bench/gpu_blur_reference.cu' -o '$reference' && '$reference'"
else
    echo "==== hand-written CUDA blur: skipped (no nvcc)"
fi
exit $failed
