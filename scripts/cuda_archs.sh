# Sourced by run_tests.sh and run_benchmarks.sh: unless CUDA_ARCHS is set already, build for the
# GPU in this machine only (its compute capability, from nvidia-smi); without a GPU, for sm_90,
# the architecture of the published H200 run. Sets CUDA_ARCHS and CUDA_ARCHS_WHY.
#
#   source scripts/cuda_archs.sh      (from the repository's root)
if [[ -n "${CUDA_ARCHS:-}" ]]; then
  CUDA_ARCHS_WHY="as CUDA_ARCHS asks"
else
  gpu_arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '. ' || true)
  if [[ "$gpu_arch" =~ ^[0-9]+$ ]]; then
    CUDA_ARCHS=$gpu_arch
    CUDA_ARCHS_WHY="the GPU in this machine; set CUDA_ARCHS=\"80;86;89;90;100;120\" to build for more"
  else
    CUDA_ARCHS=90
    CUDA_ARCHS_WHY="no GPU found: the published H200's architecture"
  fi
fi
export CUDA_ARCHS
