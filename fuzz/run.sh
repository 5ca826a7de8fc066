#!/bin/sh
# Runs every libFuzzer harness of a LLMSIM_FUZZ=ON build (ASan + UBSan) for FUZZ_SECONDS seconds each
# (default 60), seeded from the harness's corpus folders (BUILD/fuzz-seeds.txt), and prints one line
# per harness: executions, executions per second, corpus size. New inputs go to BUILD/fuzz-work/NAME;
# a crash, leak, timeout or out-of-memory leaves its input in BUILD/fuzz-artifacts/NAME and fails the
# run (add the input to fuzz/corpus/NAME/ as a regression and fix the defect).
# Inputs are at most 4 KiB (longer seeds are cut), each may take 10 s and 2 GB.
# Usage: fuzz/run.sh [BUILD] [NAME...]   (FUZZ_JOBS=N: N harnesses at a time)
set -eu
BUILD="${1:-build-asan}"
[ $# -gt 0 ] && shift
SECS="${FUZZ_SECONDS:-60}"
RUNS="${FUZZ_RUNS:-}"    # or a number of executions per harness (FUZZ_RUNS=1000000)
FLAGS="${FUZZ_FLAGS:-}"  # more libFuzzer flags (FUZZ_FLAGS=-entropic=0)
cd "$(dirname "$0")/.."
[ -f "$BUILD/fuzz-seeds.txt" ] || { echo "fuzz/run.sh: $BUILD is not a LLMSIM_FUZZ=ON build (make fuzz)"; exit 2; }
# Harnesses run FUZZ_JOBS at a time (default: the cores; each is one process on one core), and their lines
# print in the order of fuzz-seeds.txt once every harness has ended.
JOBS="${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}"
mkdir -p "$BUILD/fuzz-logs"
one() {   # NAME DIRS...: one harness; its line goes to BUILD/fuzz-logs/NAME.result
    name=$1
    shift
    work="$BUILD/fuzz-work/$name"
    art="$BUILD/fuzz-artifacts/$name"
    log="$BUILD/fuzz-logs/$name.log"
    mkdir -p "$work" "$art"
    limit="-max_total_time=$SECS"
    [ -n "$RUNS" ] && limit="-runs=$RUNS"
    dict=""
    [ "$name" != nccl_tests ] && dict="-dict=fuzz/json.dict"
    # shellcheck disable=SC2086
    if ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
       UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
       "$BUILD/fuzz/fuzz_$name" "$work" "$@" $limit $dict -timeout=10 -rss_limit_mb=2048 \
           -max_len=4096 -print_final_stats=1 -artifact_prefix="$art/" $FLAGS >"$log" 2>&1; then
        result=ok
    else
        result="FAILED (see $log and $art)"
    fi
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    corpus=$(find "$work" -type f | wc -l)
    echo "fuzz_$name: ${execs:-?} executions, ${rate:-?} exec/s, corpus $corpus new + seeds: $result" \
        >"$BUILD/fuzz-logs/$name.result"
}
names=""
running=0
while read -r name dirs; do
    if [ $# -gt 0 ]; then
        case " $* " in *" $name "*) ;; *) continue ;; esac
    fi
    names="$names $name"
    rm -f "$BUILD/fuzz-logs/$name.result"
    # shellcheck disable=SC2086
    one "$name" $dirs &
    running=$((running + 1))
    if [ "$running" -ge "$JOBS" ]; then
        wait
        running=0
    fi
done <"$BUILD/fuzz-seeds.txt"
wait
status=0
for name in $names; do
    if [ -f "$BUILD/fuzz-logs/$name.result" ]; then
        cat "$BUILD/fuzz-logs/$name.result"
        grep -q ': ok$' "$BUILD/fuzz-logs/$name.result" || status=1
    else
        echo "fuzz_$name: no result (the harness did not run)"
        status=1
    fi
done
exit $status
