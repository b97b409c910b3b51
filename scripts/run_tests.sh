#!/usr/bin/env bash
# Sets up what is missing, builds (one architecture, sm_90, to keep it quick; CUDA_ARCHS
# overrides) and runs every test with ctest: the host tests and the results tooling always, the
# GPU tests where there is a GPU (elsewhere ctest lists them as "Skipped").
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/cuda/bin"
scripts/setup.sh
export BUILD_DIR=${BUILD_DIR:-build-ci} CUDA_ARCHS=${CUDA_ARCHS:-90}
echo "== build ($BUILD_DIR, sm_$CUDA_ARCHS)"
scripts/build.sh >"${TMPDIR:-/tmp}/reduction_build.log" 2>&1 || { tail -40 "${TMPDIR:-/tmp}/reduction_build.log"; exit 1; }
echo "== tests"
ctest --test-dir "$BUILD_DIR" --output-on-failure
