#!/bin/bash
# Alternates settings of the library for several collectives and sizes, each run bracketed by the CPU 0 <-> 1 round
# trip (pingpong). VARIANTS (default "old new"): old sets CHORUS_SLOT_STREAM_MIN_BYTES=0, low 1048576, new leaves it
# unset; NAME=DIR runs the libchorus.so.0 in DIR (LD_LIBRARY_PATH) under NAME. One line per run and size: variant coll
# rt0 rt1 size oop ip mpi-oop mpi-ip (ms, DIGITS decimals, default 2).
cd /work/main || exit 1
bind=${BIND:-core}
for _ in $(seq 1 "${ROUNDS:-3}"); do
  for coll in ${COLLS:-all_reduce broadcast alltoall sendrecv reduce_scatter all_gather}; do
  for variant in ${VARIANTS:-old new}; do
    v=${variant%%=*}
    env=()
    case $variant in
      old) env=(-x CHORUS_SLOT_STREAM_MIN_BYTES=0);;
      low) env=(-x CHORUS_SLOT_STREAM_MIN_BYTES=1048576);;
      *=*) env=(-x "LD_LIBRARY_PATH=${variant#*=}");;
    esac
    rt0=$(/tmp/mode/pingpong | awk '{print $3}')
    res=$(timeout 300 mpirun --allow-run-as-root --bind-to "$bind" --mca btl self,vader "${env[@]}" -np "${NP:-2}" \
      "build/bin/${coll}_perf" -b "${B:-16M}" -e "${E:-128M}" -f "${F:-8}" -w "${WARMUP:-1}" -n "${ITERS:-3}" -c 1 --compare mpi 2>&1 |
      grep -E "^ +[0-9]" | awk -v d="${DIGITS:-2}" '{f = "%." d "f"; printf "%s " f " " f " " f " " f "%s;", $1, $6/1000,
        $10/1000, $14/1000, $17/1000, ($9+$13>0?" WRONG":"")}')
    rt1=$(/tmp/mode/pingpong | awk '{print $3}')
    echo "$res" | tr ';' '\n' | grep . | sed "s/^/$v $coll $rt0 $rt1 /"
  done
  done
done
