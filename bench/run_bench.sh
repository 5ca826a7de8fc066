#!/usr/bin/env bash
# Closed-form scenarios per minute per core of `llmsim run --fast` (docs/runs.md, "Benchmark"): a sweep of
# three training scenarios (GPT-3 175B on 1,024 A100, Llama 3 70B on 64 H100, Mixtral 8x7B on 64 H100 with
# expert parallelism) over the global batch, every point valid, rows written as JSON lines.
#   bench/run_bench.sh [LLMSIM_BINARY] [POINTS_PER_SCENARIO]
set -eu -o pipefail
bin=$(realpath "${1:-build/llmsim}")
k=${2:-4000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
batches() { seq -s, "$1" "$1" "$(($1 * k))"; }
cat >"$dir/sweep.json" <<JSON
{"scenarios": [
 {"model": "gpt3-175b", "system": "dgx-a100-80gb", "gpus": 1024,
  "parallel": {"tp": 8, "pp": 8, "sequence_parallel": true, "zero": 1},
  "training": {"seq_len": 2048, "micro_batch": 1, "precision": "bf16", "recompute": "selective"},
  "sweep": {"training.global_batch": [$(batches 16)]}},
 {"model": "llama-3-70b", "system": "dgx-h100", "gpus": 64,
  "parallel": {"tp": 4, "pp": 4, "vp": 5, "cp": 2, "sequence_parallel": true, "zero": 1},
  "training": {"seq_len": 8192, "micro_batch": 1, "precision": "fp8", "recompute": "none"},
  "sweep": {"training.global_batch": [$(batches 8)]}},
 {"model": "mixtral-8x7b", "system": "dgx-h100", "gpus": 64,
  "parallel": {"tp": 2, "pp": 4, "ep": 8, "sequence_parallel": true, "zero": 1},
  "training": {"seq_len": 4096, "micro_batch": 1, "precision": "bf16", "recompute": "selective"},
  "sweep": {"training.global_batch": [$(batches 8)]}}
]}
JSON
n=$((3 * k))
# Wall time and CPU time (user + sys): on a shared machine the CPU time says what one core does.
for threads in 1 "$(nproc)"; do
    TIMEFORMAT="%R %U %S"
    t=$( { time "$bin" run "$dir/sweep.json" --fast -j "$threads" -o "$dir/rows.jsonl" >/dev/null; } 2>&1)
    read -r wall user sys <<<"$t"
    awk -v n="$n" -v t="$threads" -v w="$wall" -v c="$(awk -v u="$user" -v s="$sys" 'BEGIN{print u+s}')" 'BEGIN {
        printf "%d scenarios, %d thread(s): %.2f s wall, %.2f s CPU; %.0f scenarios/min wall, %.0f per CPU-minute\n",
        n, t, w, c, n / w * 60, n / c * 60 }'
done
echo "rows: $(wc -l <"$dir/rows.jsonl"), failed: $(grep -c '"ok":false' "$dir/rows.jsonl" || true)"
