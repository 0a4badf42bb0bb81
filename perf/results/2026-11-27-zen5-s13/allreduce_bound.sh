#!/bin/bash
# The 2-rank all-reduce against this machine's memory bound, measured alternately in the same minutes:
# membw_bench (streaming copy, 2 threads) then all_reduce_perf 32-256 MiB with Open MPI in the same run,
# ROUNDS times, unbound then bound. Bound (session 9's rule, docs/performance.md): busbw <= 4S of DRAM traffic at
# the 2-thread streaming copy's rate = rate(GiB/s) * 1.074 / 4 GB/s.
ROUNDS=${1:-3}
for r in $(seq "$ROUNDS"); do
  echo "== round $r membw"
  build/bin/membw_bench --benchmark_min_time=0.5 --benchmark_filter='CopyStreaming' 2>&1 | grep BM_ | awk '{print $1, $NF}'
  for bind in none core; do
    echo "== round $r all_reduce --bind-to $bind"
    mpirun --allow-run-as-root --bind-to $bind -np 2 build/bin/all_reduce_perf -b 32M -e 256M -f 2 -w 2 -n 10 -c 1 \
      --compare mpi 2>&1 | grep -E '^ +[0-9]'
  done
done
