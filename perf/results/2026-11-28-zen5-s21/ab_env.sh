#!/bin/bash
# usage: ab_env.sh OUT "colls" "perf args" np — one binary (build/bin), alternating variant A (CHORUS_STREAM_MIN_BYTES
# set to $A_VAL) and variant B (unset: the automatic share); rows: size, chorus oop/ip time, mpi oop/ip time.
out=$1; colls=$2; args=$3; np=${4:-2}; rounds=${ROUNDS:-3}
M="mpirun --allow-run-as-root ${BINDOPT:---bind-to none} --oversubscribe --mca btl self,vader -np $np"
B=/work/main/build/bin
: > $out
for round in $(seq $rounds); do
 for v in A B; do
  for c in $colls; do
    echo "== round $round variant=$v $c np=$np" >> $out
    if [ $v = A ]; then X="-x CHORUS_STREAM_MIN_BYTES=$A_VAL"; else X=""; fi
    $M $X $B/${c}_perf $args --compare mpi 2>&1 | grep -E '^ +[0-9]' | awk '{print $1, $6, $10, $14, $17}' >> $out
  done
 done
done
