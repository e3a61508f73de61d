#!/usr/bin/env bash
# Packs what scripts/gpu_check.sh runs into one self-contained archive, for a GPU machine that
# has the NVIDIA driver but not this project's dependencies (LLVM 19, isl, libomp): the
# binaries, the shared libraries they load (but the C and C++ runtimes, which the GPU machine
# has, newer), CUDA's libdevice, gpu_check.sh and the GPU benchmark script. Each binary is
# reached through a small wrapper that points the loader at the bundled libraries, so nothing
# else on that machine (its Python and torch) sees them. The hand-written CUDA blur
# (bench/gpu_blur_reference.cu) travels as source: gpu_check.sh builds it with that machine's nvcc.
#
#   scripts/gpu_bundle.sh [BUILD_DIR] [OUT.tar.xz]          (defaults: build, tessera-gpu.tar.xz)
#   # on the GPU machine:
#   tar xJf tessera-gpu.tar.xz -C /tmp && /tmp/tessera-gpu/scripts/gpu_check.sh /tmp/tessera-gpu/build
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
out=$(realpath -m "${2:-tessera-gpu.tar.xz}")
root=$(cd "$(dirname "$0")/.." && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
b="$stage/tessera-gpu"
mkdir -p "$b/lib" "$b/scripts" "$b/bench" "$b/cuda/nvvm/libdevice"

binaries=(tests/tessera_cuda_device_tests tests/tessera-fuzz apps/blur_x_blur_y apps/harris bench/bench_gpu_blur)
for rel in "${binaries[@]}"; do
    [ -x "$build/$rel" ] || { echo "gpu_bundle: $build/$rel is not built (cmake --build $build)" >&2; exit 1; }
    dir=$(dirname "$rel") name=$(basename "$rel")
    mkdir -p "$b/build/$dir/.bin"
    cp "$build/$rel" "$b/build/$dir/.bin/"
    # The wrapper: bundled libraries first, and the bundled libdevice when the toolkit has none.
    cat > "$b/build/$dir/$name" <<'WRAPPER'
#!/bin/sh
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$here/../../lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ -f "${CUDA_HOME:-/usr/local/cuda}/nvvm/libdevice/libdevice.10.bc" ] || export CUDA_HOME="$here/../../cuda"
exec "$here/.bin/$(basename "$0")" "$@"
WRAPPER
    chmod +x "$b/build/$dir/$name"
done

# Every library the binaries load, but the C and C++ runtimes and the dynamic loader.
for rel in "${binaries[@]}"; do ldd "$build/$rel"; done | awk '/=> \//{print $3}' | sort -u |
    grep -Ev '/(libc|libm|libstdc\+\+|libgcc_s|libdl|libpthread|librt|ld-linux[^/]*)\.so' |
    while read -r lib; do cp -L "$lib" "$b/lib/"; done
strip --strip-unneeded "$b"/lib/*.so* 2>/dev/null || true

libdevice=""
for home in "${CUDA_HOME:-}" /usr/local/cuda /usr/lib/cuda; do
    [ -n "$home" ] && [ -f "$home/nvvm/libdevice/libdevice.10.bc" ] && { libdevice="$home/nvvm/libdevice/libdevice.10.bc"; break; }
done
if [ -n "$libdevice" ]; then cp "$libdevice" "$b/cuda/nvvm/libdevice/"
else echo "gpu_bundle: no CUDA libdevice found; kernels with exp, log, pow, sin or cos need the GPU machine's toolkit" >&2; fi

cp "$root/scripts/gpu_check.sh" "$b/scripts/"
cp "$root/bench/run_gpu_benchmark.py" "$root/bench/gpu_blur_reference.cu" "$b/bench/"
tar cJf "$out" -C "$stage" tessera-gpu
echo "gpu_bundle: $out ($(du -h "$out" | cut -f1))"
