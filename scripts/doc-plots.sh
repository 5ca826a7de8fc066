#!/usr/bin/env bash
# Regenerates the example charts in docs/plots/ (docs/user-guide.md links them) from the built binary.
#   scripts/doc-plots.sh [LLMSIM_BINARY]
set -eu -o pipefail
bin=$(realpath "${1:-build/llmsim}")
cd "$(dirname "$0")/.."
out=docs/plots
mkdir -p "$out"
"$bin" memory --scenario scenarios/llama3-70b-h100-64.json --plot "$out/memory.svg" >/dev/null
"$bin" estimate --scenario scenarios/llama3-70b-h100-64.json --plot "$out/estimate-step.svg" >/dev/null
"$bin" estimate --scenario scenarios/gpt3-175b-a100-1024.json --global-batch 64 \
    --plot-timeline "$out/estimate-timeline.svg" >/dev/null
"$bin" scaling --model gpt3-175b --system dgx-a100-80gb --seq-len 2048 --global-batch 1536 \
    --gpus 256,512,1024,2048 --plot "$out/scaling.svg" >/dev/null
"$bin" search --model llama-3-70b --system dgx-h100 --gpus 64 --seq-len 8192 --global-batch 128 --top-k 20 \
    --plot "$out/search-pareto.svg" >/dev/null
"$bin" run scenarios/sweeps/llama3-70b-tp-pp.json --fast --plot "$out/run-sweep.svg" >/dev/null
"$bin" estimate --model llama-3-8b --system dgx-h100 --input-len 1000 --output-len 250 --requests 2000 \
    --weight-precision fp8 --kv-precision fp8 --chunk 2048 --slo-ttft-p99 0.5 --slo-tpot-p99 0.03 \
    --qps-sweep 1,2,4,8,16,32,64 --plot "$out/serving-qps-sweep.svg" >/dev/null
echo "wrote $(ls "$out"/*.svg | wc -l) charts in $out"
