#!/usr/bin/env bash
# Measures one GPU for llmsim end to end: builds llmsim-probe with nvcc, runs its full sweep, and, when
# python3 has PyTorch with CUDA, times Llama layers and decode steps as ground truth (layer_truth.py).
#   bash calibrate/probe/measure-gpu.sh OUTDIR [--quick]
# OUTDIR gets: probe-raw.json (for `llmsim calibrate fit`), torch-truth.json, gpu.csv (nvidia-smi before
# and after: clocks, power limit, temperature), clocks.csv (every 0.5 s during layer_truth), probe.log,
# torch.log, env.txt. SUSTAINED_S (default 40) seconds of back-to-back layer fwd+bwd end the run.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:?usage: measure-gpu.sh OUTDIR [--quick]}"
quick="${2:-}"
mkdir -p "$out"
q="name,driver_version,pci.bus_id,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.draw,power.limit,temperature.gpu,persistence_mode,clocks_event_reasons.active"
{ echo "when,$q"; nvidia-smi --query-gpu="$q" --format=csv,noheader | sed 's/^/before,/'; } >"$out/gpu.csv" 2>&1
{ date -u +%FT%TZ; uname -a; nvidia-smi 2>&1 | head -20; "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" --version | tail -2
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1; } >"$out/env.txt"
bin="$(mktemp -d)/llmsim-probe"
ARCHS="${ARCHS:-90}" OUT="$bin" JOBS=8 bash "$here/build.sh" >"$out/probe.log" 2>&1 || { cat "$out/probe.log"; exit 1; }
echo "probe built ($(date -u +%T))"
"$bin" $quick --out "$out/probe-raw.json" >>"$out/probe.log" 2>&1
echo "probe exit $? ($(date -u +%T))"
nvidia-smi --query-gpu="$q" --format=csv,noheader | sed 's/^/after-probe,/' >>"$out/gpu.csv"
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
    --format=csv -lms 500 >"$out/clocks.csv" 2>&1 &
  smi=$!
  PYTHONUNBUFFERED=1 python3 "$here/layer_truth.py" --out "$out/torch-truth.json" --sustained "${SUSTAINED_S:-40}" \
    $quick >"$out/torch.log" 2>&1
  echo "layer_truth exit $? ($(date -u +%T))"
  kill "$smi" 2>/dev/null
  nvidia-smi --query-gpu="$q" --format=csv,noheader | sed 's/^/after-torch,/' >>"$out/gpu.csv"
else
  echo "no PyTorch with CUDA: layer_truth.py skipped" | tee -a "$out/env.txt"
fi
