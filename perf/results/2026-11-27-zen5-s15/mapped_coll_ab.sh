#!/usr/bin/env bash
# HostPrims' references to chorusMemAlloc buffers (-R 1), read through mappings, on and off: the environment
# variable VAR at each of VALUES in turn (default CHORUS_MAPPED_MIN_BYTES at 0, off, and 4194304, the default), same
# library, alternated, ROUNDS rounds, NP ranks unbound, sizes B to E by 4x (default 4M-128M), COLLS (default all_reduce
# broadcast all_gather reduce_scatter). Columns: bytes, chorus oop us, ip us, mpi oop us, ip us, ratio oop, ip.
#   [VAR=... VALUES="..."] perf/results/2026-11-27-zen5-s15/mapped_coll_ab.sh [ROUNDS] [NP] [B] [E] [COLLS...]
# hostprims_refs_survey.txt (before the change: HostPrims' references turned on by CHORUS_CMA_MIN_BYTES, whose reads of
# mapped buffers took the mapped path): VAR=CHORUS_CMA_MIN_BYTES VALUES="0 1M" ... 1 2 1M 128M (-f 8 then).
set -u
cd "$(dirname "$0")/../../.."
rounds=${1:-3}; np=${2:-2}; b=${3:-4M}; e=${4:-128M}; shift 4 || shift $#
colls=("$@"); [ ${#colls[@]} -gt 0 ] || colls=(all_reduce broadcast all_gather reduce_scatter)
var=${VAR:-CHORUS_MAPPED_MIN_BYTES}; values=${VALUES:-0 4194304}
for r in $(seq "$rounds"); do
  for c in "${colls[@]}"; do
    for x in $values; do
      echo "== round $r np $np $var=$x $c"
      mpirun --allow-run-as-root --oversubscribe --mca btl self,vader --bind-to none -x "$var=$x" \
        -np "$np" build/bin/${c}_perf -b "$b" -e "$e" -f 4 -w 5 -n 20 -c 1 -R 1 --compare mpi 2>&1 |
        grep -E '^ *[0-9]' | awk '{print $1, $6, $10, $14, $17, $16, $19}'
    done
  done
done
