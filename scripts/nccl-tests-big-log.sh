#!/bin/sh
# Writes a synthetic nccl-tests all_reduce log of N result rows (default 10^6) on stdout, in the
# modern format (root column, #wrong), 8 ranks on one node, figures consistent with each other
# (algbw = size/time, busbw = algbw·2(n-1)/n). Used to measure the reader on a large log
# (docs/reliability.md):
#   scripts/nccl-tests-big-log.sh 1000000 > /tmp/big.log
#   /usr/bin/time -v build/llmsim calibrate import-nccl-tests /tmp/big.log > /dev/null
set -eu
N="${1:-1000000}"
awk -v n="$N" 'BEGIN {
  print "# nccl-tests version 2.17.8 nccl-headers=22902 nccl-library=22902"
  print "# Collective test starting: all_reduce_perf"
  print "# nThread 1 nGpus 1 minBytes 1024 maxBytes 1024000000 step: 1024(bytes) warmup iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0"
  print "#"
  print "# Using devices"
  for (r = 0; r < 8; r++)
    printf "#  Rank %2d Group  0 Pid %6d on      node1 device %2d [0000:%02x:00] NVIDIA H100 80GB HBM3\n", r, 1000 + r, r, 16 + r
  print "#"
  print "#                                                              out-of-place                       in-place          "
  print "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong "
  print "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         "
  for (i = 1; i <= n; i++) {
    size = 1024 * i
    t = 10 + size / 200000.0
    t = sprintf("%.2f", t) + 0
    alg = size / t / 1000
    printf "%12d  %12d  %8s  %6s  %6d  %7.2f  %6.2f  %6.2f  %6d  %7.2f  %6.2f  %6.2f  %6d\n", size, size / 4, "float", "sum", -1, t, alg, alg * 1.75, 0, t, alg, alg * 1.75, 0
  }
  print "# Out of bounds values : 0 OK"
  print "# Avg bus bandwidth    : 200.0"
  print "#"
  print "# Collective test concluded: all_reduce_perf"
}'
