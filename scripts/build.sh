#!/usr/bin/env bash
# Configures and builds with Ninja into $BUILD_DIR (default build/). The architectures default to
# the default preset's (sm_80/86/89/90/100/120); CUDA_ARCHS=90 or CUDA_ARCHS=native narrows them.
# Dependencies in .deps/ (Debian packages unpacked there, for machines without network access)
# are found before the system's.
#
#   [BUILD_DIR=DIR] [CUDA_ARCHS="90;120"] scripts/build.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
args=(-S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release)
[[ -n "${CUDA_ARCHS:-}" ]] && args+=("-DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCHS}")
[[ -d .deps/usr ]] && args+=("-DCMAKE_PREFIX_PATH=$PWD/.deps/usr")
cmake "${args[@]}" >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)"
