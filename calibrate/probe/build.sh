#!/usr/bin/env bash
# Builds llmsim-probe with nvcc alone (no CMake, no other dependency): CUDA runtime, cuBLASLt, NCCL.
#   bash calibrate/probe/build.sh                 # -> ./llmsim-probe
#   OUT=/tmp/llmsim-probe ARCHS="80 90" bash calibrate/probe/build.sh
#   MPI=1 bash calibrate/probe/build.sh           # rank/world/unique id from MPI (uses mpicxx for the host side)
# Environment: CUDA_HOME (default /usr/local/cuda), NCCL_HOME (where include/nccl.h and lib/libnccl.so live,
# default: CUDA_HOME, then /usr), ARCHS (default: 80 90, plus 100 when nvcc knows sm_100), JOBS (default 4).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
NVCC="${NVCC:-$CUDA_HOME/bin/nvcc}"
OUT="${OUT:-./llmsim-probe}"
JOBS="${JOBS:-4}"
if [ ! -x "$NVCC" ]; then
  NVCC="$(command -v nvcc || true)"
  [ -n "$NVCC" ] || { echo "build.sh: nvcc not found (set CUDA_HOME or NVCC)" >&2; exit 1; }
fi
nccl_inc=""; nccl_lib=""; nccl_so=""
# NCCL from NCCL_HOME, the CUDA toolkit, the system, or PyTorch's pip wheel (nvidia-nccl-cu*), which
# ships include/nccl.h and lib/libnccl.so.2 only.
pip_nccl="$(python3 -c 'import nvidia.nccl, os; print(list(nvidia.nccl.__path__)[0])' 2>/dev/null || true)"
for d in "${NCCL_HOME:-}" "$CUDA_HOME" /usr /usr/local "$pip_nccl"; do
  [ -n "$d" ] || continue
  if [ -z "$nccl_inc" ] && [ -f "$d/include/nccl.h" ]; then nccl_inc="$d/include"; fi
  for l in "$d/lib64" "$d/lib" "$d/lib/x86_64-linux-gnu" "$d/lib/aarch64-linux-gnu"; do
    for f in "$l/libnccl.so" "$l/libnccl.so.2"; do
      if [ -z "$nccl_lib" ] && [ -e "$f" ]; then nccl_lib="$l"; nccl_so="$f"; fi
    done
  done
done
[ -n "$nccl_inc" ] && [ -n "$nccl_lib" ] || { echo "build.sh: NCCL not found (set NCCL_HOME)" >&2; exit 1; }
if [ -z "${ARCHS:-}" ]; then
  ARCHS="80 90"
  if "$NVCC" --list-gpu-arch 2>/dev/null | grep -q 'compute_100'; then ARCHS="$ARCHS 100"; fi
fi
gencode=()
for a in $ARCHS; do gencode+=("-gencode=arch=compute_$a,code=sm_$a"); done
last="${ARCHS##* }"
gencode+=("-gencode=arch=compute_$last,code=compute_$last")   # PTX for newer GPUs
flags=(-O2 -std=c++17 -Xcompiler=-Wall,-Wextra -I"$nccl_inc")
libs=("$nccl_so" -lcublasLt -lcudart -Xlinker "-rpath,$nccl_lib")
if [ "${MPI:-0}" = "1" ]; then
  flags+=(-DLLMSIM_PROBE_MPI -ccbin "${MPICXX:-mpicxx}")
fi
objdir="$(mktemp -d)"
trap 'rm -rf "$objdir"' EXIT
pids=()
for src in "$here"/*.cu; do
  obj="$objdir/$(basename "${src%.cu}").o"
  "$NVCC" "${flags[@]}" "${gencode[@]}" -c "$src" -o "$obj" &
  pids+=($!)
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do sleep 0.2; done
done
for p in "${pids[@]}"; do wait "$p"; done
"$NVCC" "${flags[@]}" "${gencode[@]}" "$objdir"/*.o -o "$OUT" "${libs[@]}"
echo "built $OUT (archs: $ARCHS; NCCL from $nccl_lib)"
