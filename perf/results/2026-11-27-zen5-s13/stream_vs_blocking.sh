#!/bin/bash
# A host stream against the NULL stream (blocking, -y 1) on the final library, alternated: 2 ranks unbound, 8 B
# all-reduce and broadcast, 1000 and 10 launches per loop, several cycles in one process (-N), Open MPI in the same
# runs. Each cycle: Chorus out-of-place/in-place us per launch | Open MPI's. Usage: stream_vs_blocking.sh ROUNDS
ROUNDS=${1:-2}
for r in $(seq "$ROUNDS"); do
  for coll in all_reduce broadcast; do
    for n in 1000 10; do
      for y in 0 1; do
        printf 'round %s %-10s -n %-4s %s: ' "$r" "$coll" "$n" "$([ $y = 1 ] && echo 'blocking   ' || echo 'host stream')"
        mpirun --allow-run-as-root --bind-to none -np 2 build/bin/${coll}_perf -b 8 -e 8 -w 100 -n $n -N 4 -y $y -c 1 \
          --compare mpi 2>&1 | grep -E '^ +[0-9]' | awk '{printf "%s/%s|%s/%s  ", $6, $10, $14, $17}'
        echo
      done
    done
  done
done
