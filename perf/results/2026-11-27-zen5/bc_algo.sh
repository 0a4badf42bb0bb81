#!/usr/bin/env bash
# Broadcast of 8 B-2 KiB at 4 and 8 ranks: the tuner's choice against CHORUS_ALGO=tree and ring, alternated, 2 rounds.
set -uo pipefail
bin=/work/main/build/bin
for np in 4 8; do
  for r in 1 2; do
    for algo in default tree ring; do
      env=(); [ $algo != default ] && env=(-x CHORUS_ALGO=$algo)
      echo "== np$np round $r $algo"
      mpirun --allow-run-as-root --oversubscribe --mca btl self,vader --bind-to none "${env[@]}" -np $np \
        $bin/broadcast_perf -b 8 -e 2K -f 16 -w 100 -n 1000 -c 1 --compare mpi | grep -E '^ +[0-9]' |
        awk '{printf "  %6s B chorus %s / %s us, mpi %s / %s\n", $1, $6, $10, $14, $17}'
    done
  done
done
