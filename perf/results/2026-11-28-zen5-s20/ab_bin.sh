#!/bin/bash
# usage: ab_bin.sh OUT "colls" "perf args" [np]  — alternates /tmp/wt_base (warm=0) and /tmp/wt_new (warm=1)
out=$1; colls=$2; args=$3; np=${4:-2}; rounds=${ROUNDS:-3}
M="mpirun --allow-run-as-root ${BINDOPT:---bind-to none} --mca btl self,vader -np $np ${MPIX:-}"
: > $out
for round in $(seq $rounds); do
 for w in 0 1; do
  if [ $w = 1 ]; then B=/tmp/wt_new/build/bin; else B=/tmp/wt_base/build/bin; fi
  for c in $colls; do
    echo "== round $round warm=$w $c" >> $out
    $M $B/${c}_perf $args --compare mpi 2>&1 | grep -E '^ +[0-9]' | awk '{print $1, $6, $10, $14, $17}' >> $out
  done
 done
done
