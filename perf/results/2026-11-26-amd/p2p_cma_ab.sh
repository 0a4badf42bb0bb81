#!/bin/bash
# A/B: measured default (new) against the old fixed 64 KiB threshold, alternated.
cd /work/main
M="mpirun --allow-run-as-root --oversubscribe --mca btl self,vader --bind-to none"
for round in 1 2; do
for coll in sendrecv alltoall; do
for np in 2 4 8; do
for mode in new old; do
  env=""; [ $mode = old ] && env="-x CHORUS_P2P_CMA_MIN_BYTES=65536"
  echo "== $round $coll np$np $mode"
  $M $env -np $np build/bin/${coll}_perf -b 64K -e 256M -f 8 -w 2 -n 10 -c 1 --compare mpi 2>&1 | grep -E '^ *[0-9]' | awk '{printf "%s oop %s ip %s mpi %s ratio %s\n", $1, $6, $10, $14, $16}'
done; done; done; done
