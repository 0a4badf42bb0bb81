#!/bin/bash
# A/B of the library alone (LD_LIBRARY_PATH to the old, A, or new, B, libchorus.so.0), alternated: the first timed
# loops of a fresh process on a host stream against the next ones. 2 ranks, 8-byte all-reduce, 1000 launches per
# loop, 3 cycles (-N 3), each cycle's out-of-place / in-place us per launch; -C 1: the enqueue loop alone (no
# synchronize). Usage: stream_first_loop_ab.sh LIBDIR_A LIBDIR_B ROUNDS
A=$1 B=$2 ROUNDS=${3:-3}
for r in $(seq "$ROUNDS"); do
  for L in "$A" "$B"; do
    for cpu in 1 0; do
      printf 'round %s lib %s %s: ' "$r" "$L" "$([ $cpu = 1 ] && echo 'enqueue only' || echo 'wall        ')"
      LD_LIBRARY_PATH=$L mpirun --allow-run-as-root --bind-to none -np 2 -x LD_LIBRARY_PATH build/bin/all_reduce_perf \
        -b 8 -e 8 -w 100 -n 1000 -N 3 -y 0 -c 1 -C $cpu 2>&1 | grep -E '^ +[0-9]' | awk '{printf "%s/%s  ", $6, $10}'
      echo
    done
  done
done
