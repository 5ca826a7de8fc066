#!/usr/bin/env bash
# Static checks CI runs: clang-format (the tree matches .clang-format), function lengths, and clang-tidy
# (.clang-tidy) on every C++ source of the rooms and the CLI. Needs clang-format and clang-tidy (scripts/deps.sh --dev).
#   scripts/lint.sh            clang-format and clang-tidy on every room and the CLI
#   scripts/lint.sh rooms      clang-tidy on the library rooms only (CI: cli/'s translation units each
#                              parse CLI11, ~20 s apiece on 2 cores)
#   scripts/lint.sh format     clang-format only (fast)
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
mapfile -t sources < <(git ls-files '*.cpp' '*.hpp' | grep -v '^calibrate/probe/')
echo "lint: clang-format on ${#sources[@]} files"
clang-format --dry-run -Werror "${sources[@]}"
# No function over 150 lines in the library rooms that simulate (issue 31's bound; the list: scripts/function-lengths.py).
echo "lint: function lengths (cost_models, sim, app, calibrate: at most 150 lines)"
python3 scripts/function-lengths.py --over 150 --fail 150
[ "$what" = format ] && exit 0
# A configure-only build folder without precompiled headers or unity batches gives clang-tidy each file's
# plain compile command.
cmake -S . -B build-lint -G Ninja -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON -DLLMSIM_UNITY_BUILD=OFF -DLLMSIM_BUILD_TESTS=OFF \
      -DLLMSIM_BUILD_BENCH=OFF -DLLMSIM_PROBE=OFF >/dev/null
rooms='schedules|hardware_db|cost_models|sim|app|calibrate|batch|report|python'
[ "$what" = rooms ] || rooms="$rooms|cli"
mapfile -t units < <(git ls-files '*.cpp' | grep -E "^($rooms)/" | grep -v '^calibrate/probe/')
echo "lint: clang-tidy on ${#units[@]} translation units"
printf '%s\n' "${units[@]}" | xargs -P "$(nproc)" -n 1 clang-tidy -p build-lint --quiet 2>/dev/null
echo "lint: clean"
