#!/usr/bin/env bash
# Builds Tessera with sanitizers in its own build directory and runs the test suite under them.
#
#   ./scripts/sanitize.sh           # AddressSanitizer + UndefinedBehaviorSanitizer + leak detection
#   ./scripts/sanitize.sh thread    # ThreadSanitizer over the multi-threaded tests ([threads])
#
# Extra arguments go to ctest (e.g. -R reliability). Findings fail the run. The suppressions in
# scripts/sanitizers/ cover only code that is not Tessera's (libomp, LLVM); each says why.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
kind="${1:-address}"
[ $# -gt 0 ] && shift
supp="$PWD/scripts/sanitizers"
case "$kind" in
  address)
    build="${TESSERA_BUILD_DIR:-build-asan}"
    sanitize="address,undefined"
    export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=0"
    # use_tls=0: LeakSanitizer's tracer crashes reading the dynamic TLS of libomp's threads
    # (libomp is dlopen'ed); objects only TLS points to would then look leaked, none do.
    export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0:use_tls=0"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
    # The outside-project check links the installed static libraries without the sanitizer
    # runtime; it is covered by the ordinary test run.
    filter=(-E "install_find_package_outside_project")
    # ASan's redzones make stack frames several times larger: the test that compiles an
    # expression at the nesting limit (detail::kMaxExprDepth, sized for an 8 MiB stack
    # uninstrumented) needs about 20 MiB.
    ulimit -s 65536
    ;;
  thread)
    build="${TESSERA_BUILD_DIR:-build-tsan}"
    sanitize="thread"
    export TSAN_OPTIONS="suppressions=$supp/tsan.supp:halt_on_error=1:second_deadlock_stack=1"
    filter=(-R "threads|concurren")
    ;;
  *) echo "usage: $0 [address|thread] [ctest arguments...]" >&2; exit 2 ;;
esac
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSERA_SANITIZE="$sanitize" \
  -DTESSERA_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" --parallel "$(nproc)"
cd "$build"
ctest --output-on-failure --parallel "$(nproc)" "${filter[@]}" "$@"
