#!/usr/bin/env bash
# Installs the Python package `tessera` into a virtual environment under the build directory
# ($BUILD_DIR/python-venv), for the Python tests and for use:
#   - creates the environment once, and installs the pinned build and test requirements
#     (frontends/python/requirements.txt) whenever that file changes;
#   - then runs `pip install .`: scikit-build-core builds Tessera's libraries and the nanobind
#     extension with the project's own CMake in $BUILD_DIR/python-wheel, a tree kept between runs
#     so that a rebuild is incremental (hence --no-build-isolation: the build tools come from
#     the environment).
# Called by scripts/build.sh. Activate with `source build/python-venv/bin/activate`.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${TESSERA_BUILD_DIR:-build}"
VENV="$BUILD_DIR/python-venv"
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check -q)

if [ ! -x "$VENV/bin/python" ]; then
  echo "python: creating $VENV"
  python3 -m venv "$VENV"
fi
if ! cmp -s frontends/python/requirements.txt "$VENV/.tessera-requirements"; then
  echo "python: installing frontends/python/requirements.txt"
  "${PIP[@]}" install -r frontends/python/requirements.txt
  cp frontends/python/requirements.txt "$VENV/.tessera-requirements"
fi
echo "python: pip install . (build tree $BUILD_DIR/python-wheel)"
"${PIP[@]}" install --no-build-isolation --no-deps -Cbuild-dir="$BUILD_DIR/python-wheel" .
