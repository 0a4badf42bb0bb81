#!/bin/bash
# Alternates several libchorus builds (each a folder holding libchorus.so.0, put first on LD_LIBRARY_PATH) under one
# set of benchmark programs, Open MPI in the same runs. Used for wake_yield_np4.txt / np8: ab_libs.sh NP ROUNDS
# "colls" "perf args" DIR...; ab_libs_summary.py FILE prints per size the medians per library and the runs slower
# than Open MPI.
np=$1; rounds=$2; colls=$3; args=$4; shift 4
M="mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader -np $np"
for r in $(seq $rounds); do for c in $colls; do for L in "$@"; do
  echo "== round $r lib=$L $c"
  $M -x LD_LIBRARY_PATH=$L /work/main/build/bin/${c}_perf $args --compare mpi 2>&1 | grep -E '^ +[0-9]' | awk '{print $1, $6, $10, $14, $17}'
done; done; done
