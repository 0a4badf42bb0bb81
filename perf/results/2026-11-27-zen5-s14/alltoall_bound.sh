#!/bin/bash
# The 2-rank all-to-all against this machine's memory, in the same minutes: membw_bench (copy and streaming copy,
# 1 and 2 threads) then alltoall_perf 8-128 MiB with Open MPI in the same run, unbound, ROUNDS times.
ROUNDS=${1:-2}
for r in $(seq "$ROUNDS"); do
  echo "== round $r membw"
  build/bin/membw_bench --benchmark_min_time=0.5 --benchmark_filter='Copy' 2>&1 | grep BM_ | awk '{print $1, $NF}'
  echo "== round $r alltoall --bind-to none"
  mpirun --allow-run-as-root --bind-to none -np 2 build/bin/alltoall_perf -b 8M -e 128M -f 4 -w 2 -n 10 -c 1 \
    --compare mpi 2>&1 | grep -E '^ +[0-9]'
done
