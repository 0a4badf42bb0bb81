#!/bin/bash
# Like ab.sh over several collectives and sizes; one line per run and size: variant coll size rt0 rt1 oop ip mpi-oop mpi-ip (us, best of cycles).
cd /work/main
bind=${BIND:-core}
for r in $(seq 1 ${ROUNDS:-3}); do
  for coll in ${COLLS:-all_reduce broadcast alltoall sendrecv reduce_scatter all_gather}; do
  for v in new low; do
    env=()
    case $v in low) env=(-x CHORUS_SLOT_STREAM_MIN_BYTES=1048576);; esac
    rt0=$(/tmp/mode/pingpong | awk '{print $3}')
    res=$(timeout 300 mpirun --allow-run-as-root --bind-to $bind --mca btl self,vader "${env[@]}" -np ${NP:-2} build/bin/${coll}_perf -b ${B:-16M} -e ${E:-128M} -f ${F:-8} -w 1 -n ${ITERS:-3} -c 1 --compare mpi 2>&1 | grep -E "^ +[0-9]" | awk '{printf "%s %.3f %.3f %.3f %.3f%s;", $1, $6/1000, $10/1000, $14/1000, $17/1000, ($9+$13>0?" WRONG":"")}')
    rt1=$(/tmp/mode/pingpong | awk '{print $3}')
    echo "$res" | tr ';' '\n' | grep . | sed "s/^/$v $coll $rt0 $rt1 /"
  done
  done
done
