#!/usr/bin/env bash
# Installs what the build, the tests and the charts need, where it is missing:
# Debian/Ubuntu packages with apt-get (as root, or through sudo) and the Python packages of
# requirements.txt with pip.
# The CUDA Toolkit itself (nvcc 12.x or 13.x) must already be installed: see README.md.
#
#   scripts/setup.sh      (run_tests.sh and run_benchmarks.sh run it first)
set -euo pipefail
cd "$(dirname "$0")/.."

have_header() {  # a header in the system include path or in .deps/ (see scripts/build.sh)
  [[ -f "/usr/include/$1" || -f "/usr/local/include/$1" || -f ".deps/usr/include/$1" ]]
}

missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v ninja >/dev/null || missing+=(ninja-build)
command -v g++ >/dev/null || missing+=(g++)
command -v python3 >/dev/null || missing+=(python3 python3-pip)
have_header benchmark/benchmark.h || missing+=(libbenchmark-dev)
have_header doctest/doctest.h || missing+=(doctest-dev)
have_header CLI/CLI.hpp || missing+=(libcli11-dev)
have_header nlohmann/json.hpp || missing+=(nlohmann-json3-dev)

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  echo "setup: nvcc is not on PATH; add /usr/local/cuda/bin to PATH" >&2
fi
command -v nvcc >/dev/null || [[ -x /usr/local/cuda/bin/nvcc ]] || {
  echo "setup: the CUDA Toolkit (nvcc) is required and not installed: https://developer.nvidia.com/cuda-downloads" >&2
  exit 1
}

# Every package of requirements.txt that does not import (its lines name them as they are imported).
python_missing=()
while read -r requirement || [[ -n $requirement ]]; do
  name=${requirement%%[<>=!~;# ]*}
  [[ -n $name ]] || continue
  python3 -c "import $name" 2>/dev/null || python_missing+=("$name")
done <requirements.txt
if ((${#python_missing[@]})); then
  echo "setup: installing the Python packages of requirements.txt (${python_missing[*]} missing)"
  python3 -m pip install -q -r requirements.txt || python3 -m pip install -q --break-system-packages -r requirements.txt
fi

# cuobjdump and nvdisasm (the CUDA Toolkit's SASS readers) for the test sass_loads; a toolkit
# installed without them gets NVIDIA's wheels of them. Without them, that test is skipped.
for tool in cuobjdump nvdisasm; do
  if ! command -v "$tool" >/dev/null && [[ ! -x /usr/local/cuda/bin/$tool ]] &&
    ! python3 -c "import glob, sysconfig, sys; sys.exit(not glob.glob(sysconfig.get_paths()['purelib'] + '/nvidia/cu*/bin/$tool'))" 2>/dev/null; then
    echo "setup: installing $tool (pip: nvidia-cuda-$tool)"
    python3 -m pip install -q "nvidia-cuda-$tool" || python3 -m pip install -q --break-system-packages "nvidia-cuda-$tool" ||
      echo "setup: $tool not installed; the test sass_loads will be skipped" >&2
  fi
done
