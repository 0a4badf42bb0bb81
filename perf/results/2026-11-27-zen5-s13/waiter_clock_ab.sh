#!/bin/bash
# A/B of the library alone (LD_LIBRARY_PATH to the old, A, or new, B, libchorus.so.0), alternated: 2 ranks, 8 B,
# blocking (-y 1), send/recv and all-reduce, 1000 launches per loop, 3 cycles (-N 3): out-of-place / in-place us per
# launch of each cycle. Usage: waiter_clock_ab.sh LIBDIR_A LIBDIR_B ROUNDS
A=$1 B=$2 ROUNDS=${3:-3}
for r in $(seq "$ROUNDS"); do
  for coll in sendrecv all_reduce; do
    for L in "$A" "$B"; do
      printf 'round %s %-10s lib %s: ' "$r" "$coll" "$L"
      LD_LIBRARY_PATH=$L mpirun --allow-run-as-root --bind-to none -np 2 -x LD_LIBRARY_PATH build/bin/${coll}_perf \
        -b 8 -e 8 -w 100 -n 1000 -N 3 -y 1 -c 1 2>&1 | grep -E '^ +[0-9]' | awk '{printf "%s/%s  ", $6, $10}'
      echo
    done
  done
done
