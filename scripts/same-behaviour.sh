#!/usr/bin/env bash
# Refactoring guard: builds llmsim at REV (default: HEAD) in a scratch worktree and compares what it
# prints with the working tree's build (BUILD, default build/) on the validation sets, every example
# scenario and a few layout searches. Fields that measure wall time are dropped and numbers are
# rounded to 12 significant digits before comparing.
# Exit 0 when every output is identical, 1 otherwise (the differing command is named).
# OLD=path/to/llmsim compares with that binary instead of building REV (a refactor's series of commits
# against one baseline build).
#   scripts/same-behaviour.sh [REV]
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-HEAD}
new=${BUILD:-build}/llmsim
[ -x "$new" ] || { echo "same-behaviour: build $new first" >&2; exit 2; }
if [ -n "${OLD:-}" ]; then
  old=$OLD
  [ -x "$old" ] || { echo "same-behaviour: OLD=$old is not an executable" >&2; exit 2; }
else
  scratch=$(mktemp -d)
  trap 'git worktree remove --force "$scratch/src" >/dev/null 2>&1 || true; rm -rf "$scratch"' EXIT
  git worktree add -q --detach "$scratch/src" "$rev"
  launcher=""
  command -v ccache >/dev/null && launcher="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
  cmake -S "$scratch/src" -B "$scratch/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLLMSIM_BUILD_TESTS=OFF \
        -DLLMSIM_BUILD_BENCH=OFF -DLLMSIM_PROBE=OFF $launcher >/dev/null
  cmake --build "$scratch/build" -j "$(nproc)" --target llmsim >/dev/null
  old=$scratch/build/llmsim
fi

strip_wall() {   # drop wall-clock fields, round to 12 significant digits (refactors reassociate sums)
  python3 -c 'import json,sys
def s(x):
    if isinstance(x, dict): return {k: s(v) for k, v in x.items() if "wall" not in k and k != "threads"}
    if isinstance(x, list): return [s(v) for v in x]
    if isinstance(x, float): return 0.0 if abs(x) < 1e-12 else float(f"{x:.12g}")
    return x
print(json.dumps(s(json.load(sys.stdin)), indent=1, sort_keys=True))'
}

fail=0
check() {   # check ARGS...: run both binaries with ARGS, compare stdout (JSON) and exit code
  local a b ra rb
  a=$("$old" "$@" 2>/dev/null) && ra=0 || ra=$?
  b=$("$new" "$@" 2>/dev/null) && rb=0 || rb=$?
  if [ "$ra" != "$rb" ] || [ "$(echo "$a" | strip_wall)" != "$(echo "$b" | strip_wall)" ]; then
    echo "DIFFERS: llmsim $*"
    diff <(echo "$a" | strip_wall) <(echo "$b" | strip_wall) | head -20 || true
    fail=1
  else
    echo "same:    llmsim $*"
  fi
}

check validate validation/training.json --json
check validate validation/inference.json --json
check validate validation/serving.json --json
for f in scenarios/*.json; do
  check estimate --scenario "$f" --json
  check estimate --scenario "$f" --json --fast
  check memory --scenario "$f" --json
done
check search --model megatron-1t --system dgx-a100-80gb --gpus 4096 --seq-len 2048 --global-batch 2048 --json
check search --model llama-3-70b --system dgx-h100 --gpus 64 --seq-len 8192 --global-batch 128 --json
check search --model mixtral-8x7b --system dgx-h100 --gpus 64 --seq-len 4096 --global-batch 256 --json
check search --model gpt3-175b --system dgx-a100-80gb --gpus 512 --seq-len 2048 --global-batch 1536 --json
exit $fail
